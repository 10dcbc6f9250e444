/*
 * fuzz_common.h - what every fuzz target checks besides the sanitizers.
 *
 * A target aborts (a "crash" for libFuzzer and for replay.c) when a parser
 * breaks its contract: an error without a message, a message that is not
 * one line (the CLI prints it as `nxvk: error: MSG`), or a result that does
 * not survive a round trip.
 *
 * FUZZ_LAX_MESSAGES=1 in the environment skips the one-line check, so a
 * known message bug does not stop a run that looks for memory errors.
 */
#ifndef NXVK_FUZZ_COMMON_H
#define NXVK_FUZZ_COMMON_H

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "nxvk.h"

#define FUZZ_CHECK(cond, ...)                                                 \
  do {                                                                        \
    if (!(cond)) {                                                            \
      fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                           \
      fputc('\n', stderr);                                                    \
      abort();                                                                \
    }                                                                         \
  } while (0)

static inline bool fuzz_lax_messages(void) {
  static int lax = -1;
  if (lax < 0) {
    const char *e = getenv("FUZZ_LAX_MESSAGES");
    lax = e && strcmp(e, "1") == 0;
  }
  return lax;
}

/* An engine error: a known negative code with a non-empty one-line detail. */
static inline void fuzz_check_error(int rc) {
  FUZZ_CHECK(rc < 0 && strcmp(nxvk_err_name(rc), "unknown_error") != 0, "code %d", rc);
  const char *m = nxvk_errmsg();
  FUZZ_CHECK(m && m[0], "empty message for %s", nxvk_err_name(rc));
  if (fuzz_lax_messages()) return;
  for (const char *p = m; *p; p++)
    FUZZ_CHECK((unsigned char)*p >= 0x20 && *p != 0x7f,
               "%s message holds control byte 0x%02x at %d: %s", nxvk_err_name(rc),
               (unsigned char)*p, (int)(p - m), m);
}

/* Bit-equal, except that any NaN equals any NaN (JSON has one "nan"). */
static inline bool fuzz_same_value(const nxvk_host *a, const nxvk_host *b, int64_t i) {
  if (a->dtype == NXVK_F32 || a->dtype == NXVK_F64) {
    double x = nxvk_host_get(a, i), y = nxvk_host_get(b, i);
    if (x != x && y != y) return true;
    size_t sz = nxvk_dtype_size(a->dtype);
    return memcmp((const uint8_t *)a->data + (size_t)i * sz, (const uint8_t *)b->data + (size_t)i * sz,
                  sz) == 0;
  }
  return nxvk_host_get(a, i) == nxvk_host_get(b, i);
}

static inline void fuzz_check_same(const nxvk_host *a, const nxvk_host *b, const char *what) {
  char sa[160], sb[160];
  FUZZ_CHECK(a->dtype == b->dtype, "%s: dtype %s became %s", what, nxvk_dtype_name(a->dtype),
             nxvk_dtype_name(b->dtype));
  FUZZ_CHECK(nxvk_shape_equal(&a->shape, &b->shape), "%s: shape %s became %s", what,
             nxvk_shape_str(&a->shape, sa, sizeof sa), nxvk_shape_str(&b->shape, sb, sizeof sb));
  int64_t n = nxvk_host_count(a);
  for (int64_t i = 0; i < n; i++)
    FUZZ_CHECK(fuzz_same_value(a, b, i), "%s: element %lld: %.17g became %.17g", what,
               (long long)i, nxvk_host_get(a, i), nxvk_host_get(b, i));
}

/* A successful parse gives a tensor that is consistent with itself. */
static inline void fuzz_check_host(const nxvk_host *h) {
  int64_t n;
  FUZZ_CHECK((unsigned)h->dtype < NXVK_NDTYPES, "dtype %d", (int)h->dtype);
  FUZZ_CHECK(nxvk_shape_count(&h->shape, &n) == NXVK_OK, "shape count: %s", nxvk_errmsg());
  FUZZ_CHECK((n == 0) == (h->data == NULL), "%lld elements, data %p", (long long)n, h->data);
  if (n == 0) return;
  /* touch every byte: ASan reports a buffer shorter than the shape says */
  volatile uint8_t sink = 0;
  const uint8_t *p = h->data;
  for (size_t i = 0; i < (size_t)n * nxvk_dtype_size(h->dtype); i++) sink ^= p[i];
  (void)sink;
}

/* A path whose file holds exactly data[0..size), for readers that take a
 * path: one scratch file per process (a memfd on Linux, else an unlinked
 * temp file), rewritten for each input. */
static inline const char *fuzz_scratch_file(const uint8_t *data, size_t size) {
  static int fd = -1;
  static char path[256];
  if (fd < 0) {
#if defined(__linux__) && defined(MFD_CLOEXEC)
    fd = memfd_create("nxvk_fuzz", MFD_CLOEXEC);
    if (fd >= 0) {
      snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
      if (access(path, R_OK) != 0) { /* no /proc: a file instead */
        close(fd);
        fd = -1;
      }
    }
#endif
    if (fd < 0) {
      const char *dir = getenv("TMPDIR");
      snprintf(path, sizeof path, "%s/nxvk_fuzz.XXXXXX", dir && *dir ? dir : "/tmp");
      fd = mkstemp(path);
      FUZZ_CHECK(fd >= 0, "cannot create a scratch file %s", path);
      unlink(path); /* gone when the process is; read through the descriptor */
      snprintf(path, sizeof path, "/dev/fd/%d", fd);
    }
  }
  FUZZ_CHECK(ftruncate(fd, 0) == 0, "ftruncate");
  for (size_t done = 0; done < size;) {
    ssize_t k = pwrite(fd, data + done, size - done, (off_t)done);
    FUZZ_CHECK(k > 0, "pwrite");
    done += (size_t)k;
  }
  return path;
}

#endif
