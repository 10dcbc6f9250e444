/*
 * replay.c - runs a fuzz target's LLVMFuzzerTestOneInput over saved inputs
 * without libFuzzer, so CI replays the corpus and the regression cases with
 * an ordinary sanitizer build (tests/fuzz/build.sh replay).
 *
 *   replay_TARGET [-q] PATH...     PATH: a file, or a folder of files
 *
 * Exit 0 when every input ran; a sanitizer report or a failed check aborts
 * the process, and the input it was on is named first.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Under a sanitizer, its report names the input too (death callback). */
#if defined(__SANITIZE_ADDRESS__)
#define REPLAY_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define REPLAY_SANITIZED 1
#endif
#endif
#ifdef REPLAY_SANITIZED
#include <sanitizer/common_interface_defs.h>
#define HAVE_DEATH_CALLBACK 1
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *current = "(none)";

static void on_death(void) { fprintf(stderr, "replay: died on input %s\n", current); }

/* A target's failed check calls abort(): name the input, then die of it. */
static void on_abort(int sig) {
  static const char head[] = "replay: aborted on input ";
  if (write(2, head, sizeof head - 1) < 0 || write(2, current, strlen(current)) < 0 ||
      write(2, "\n", 1) < 0) {
    /* nothing more to do in a signal handler */
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

static int run_file(const char *path, long *count) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
    return -1;
  }
  size_t cap = 4096, n = 0;
  uint8_t *buf = malloc(cap);
  for (;;) {
    if (!buf) {
      fprintf(stderr, "replay: %s: out of memory\n", path);
      fclose(f);
      return -1;
    }
    n += fread(buf + n, 1, cap - n, f);
    if (n < cap) break;
    uint8_t *nb = realloc(buf, cap * 2);
    if (!nb) free(buf);
    buf = nb;
    cap *= 2;
  }
  int err = ferror(f);
  fclose(f);
  if (err) {
    fprintf(stderr, "replay: %s: read error\n", path);
    free(buf);
    return -1;
  }
  /* exactly n bytes, so a read past the input is caught as it would be
   * under libFuzzer */
  uint8_t *data = malloc(n ? n : 1);
  if (!data) {
    free(buf);
    return -1;
  }
  memcpy(data, buf, n);
  free(buf);
  current = path;
  LLVMFuzzerTestOneInput(data, n);
  current = "(none)";
  free(data);
  (*count)++;
  return 0;
}

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_path(const char *path, long *count) {
  struct stat st;
  if (stat(path, &st) != 0) {
    fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
    return -1;
  }
  if (!S_ISDIR(st.st_mode)) return run_file(path, count);
  DIR *d = opendir(path);
  if (!d) {
    fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
    return -1;
  }
  char **names = NULL;
  size_t nn = 0, cap = 0;
  int rc = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (e->d_name[0] == '.') continue; /* ., .., and hidden files such as .gitkeep */
    if (nn == cap) {
      cap = cap ? cap * 2 : 64;
      char **nb = realloc(names, cap * sizeof *names);
      if (!nb) {
        rc = -1;
        break;
      }
      names = nb;
    }
    size_t len = strlen(path) + strlen(e->d_name) + 2;
    names[nn] = malloc(len);
    if (!names[nn]) {
      rc = -1;
      break;
    }
    snprintf(names[nn++], len, "%s/%s", path, e->d_name);
  }
  closedir(d);
  if (nn) qsort(names, nn, sizeof *names, cmp_names);
  for (size_t i = 0; i < nn; i++) {
    struct stat fst;
    if (rc == 0 && stat(names[i], &fst) == 0 && S_ISREG(fst.st_mode) && run_file(names[i], count))
      rc = -1;
    free(names[i]);
  }
  free(names);
  return rc;
}

int main(int argc, char **argv) {
  int quiet = argc > 1 && strcmp(argv[1], "-q") == 0;
  int first = 1 + quiet;
  if (argc <= first) {
    fprintf(stderr, "usage: %s [-q] FILE|DIR...\n", argv[0]);
    return 2;
  }
#ifdef HAVE_DEATH_CALLBACK
  __sanitizer_set_death_callback(on_death);
#else
  (void)on_death;
#endif
  signal(SIGABRT, on_abort);
  long count = 0;
  int rc = 0;
  for (int i = first; i < argc; i++)
    if (run_path(argv[i], &count)) rc = 1;
  if (!quiet) printf("replay: %ld inputs ran\n", count);
  return rc;
}
