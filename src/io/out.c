/* out.c - every file nxvk writes goes through here (run -o, graph outputs,
 * conformance --json, bench --json/--csv/--plot, stress --json, the kernel
 * and pipeline caches).
 *
 * What stands at the path decides how it is written:
 *   - a regular file, or nothing yet: the bytes go to a temporary that
 *     mkstemp makes in the same directory (0600, O_EXCL, so nothing planted
 *     there is followed), which is flushed, fsync'd, given the old file's
 *     mode (0666 & ~umask for a new one) and renamed over the path only by
 *     nxvk_out_commit.  A reader sees the whole old file or the whole new
 *     one; a failure leaves the old file and no temporary.
 *   - a symbolic link is followed: its target is replaced as above (the link
 *     stays); a link to nothing is refused.  With NXVK_OUT_REPLACE (the
 *     caches) nothing is followed and whatever is at the path is replaced.
 *   - anything else (a character device, FIFO, socket, "-" for stdout, a path
 *     that is our own stdout or stderr such as /dev/stdout) is written in
 *     place, never replaced; its write errors are reported (/dev/full gives
 *     "No space left on device").
 *   - a directory is refused (NXVK_E_BAD_REQUEST).
 */
#define _POSIX_C_SOURCE 200809L

#include "../core/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

typedef enum { OUT_ATOMIC, OUT_IN_PLACE, OUT_FD } out_kind;

struct nxvk_out {
  char *path;   /* as the user named it, for messages */
  char *dest;   /* what is replaced (resolved) or opened */
  char *tmp;    /* OUT_ATOMIC: the temporary; NULL once renamed or removed */
  out_kind kind;
  int fd;       /* OUT_FD: 1 or 2 (not ours to close) */
  bool have_mode;
  mode_t mode;  /* of the file replaced */
  uid_t uid;    /* and its owner (kept where we may: root replacing a user's file) */
  gid_t gid;
  FILE *f;
  bool finished;
  int err;      /* first write error (errno), 0 if none */
};

static char *dup_str(const char *s) {
  size_t n = strlen(s) + 1;
  char *p = malloc(n);
  if (p) memcpy(p, s, n);
  return p;
}

static bool same_file(const struct stat *a, int fd) {
  struct stat b;
  return fstat(fd, &b) == 0 && a->st_dev == b.st_dev && a->st_ino == b.st_ino;
}

/* dest = realpath of the folder + "/" + the last part of path (which may not
 * exist yet). */
static int resolve_new(const char *path, char **dest) {
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
    return nxvk_seterr(NXVK_E_BAD_REQUEST, "%s: is a directory", path);
  char dir[PATH_MAX];
  size_t dl = slash ? (size_t)(slash - path) : 1;
  if (dl >= sizeof dir) return nxvk_seterr(NXVK_E_BAD_REQUEST, "%s: path too long", path);
  if (slash)
    memcpy(dir, path, dl), dir[dl] = '\0';
  else
    strcpy(dir, ".");
  if (!dir[0]) strcpy(dir, "/");
  char *real = realpath(dir, NULL);
  if (!real) return nxvk_seterr(NXVK_E_IO, "%s: cannot write: folder %s: %s", path, dir, strerror(errno));
  size_t n = strlen(real) + strlen(base) + 2;
  *dest = malloc(n);
  if (*dest) snprintf(*dest, n, "%s%s%s", real, strcmp(real, "/") ? "/" : "", base);
  free(real);
  return *dest ? NXVK_OK : nxvk_seterr(NXVK_E_NO_MEMORY, "%s: out of memory", path);
}

int nxvk_out_resolve(const char *path, unsigned flags, char **dest, bool *in_place) {
  *dest = NULL;
  *in_place = false;
  if (!path || !*path) return nxvk_seterr(NXVK_E_BAD_REQUEST, "empty output path");
  if (strcmp(path, "-") == 0) {
    *in_place = true;
    *dest = dup_str("-");
    return *dest ? NXVK_OK : nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  }
  struct stat st;
  if (flags & NXVK_OUT_REPLACE) { /* a cache: never follow, never write in place */
    if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
      return nxvk_seterr(NXVK_E_BAD_REQUEST, "%s: is a directory", path);
    return resolve_new(path, dest);
  }
  if (stat(path, &st) != 0) {
    if (errno != ENOENT)
      return nxvk_seterr(NXVK_E_IO, "%s: cannot write: %s", path, strerror(errno));
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
      return nxvk_seterr(NXVK_E_IO, "%s: cannot write: a symbolic link to a file that does not exist",
                         path);
    return resolve_new(path, dest);
  }
  if (S_ISDIR(st.st_mode)) return nxvk_seterr(NXVK_E_BAD_REQUEST, "%s: is a directory", path);
  if (!S_ISREG(st.st_mode) || same_file(&st, STDOUT_FILENO) || same_file(&st, STDERR_FILENO)) {
    *in_place = true;
    if (S_ISREG(st.st_mode)) { /* our own stdout/stderr: the stream, not the name */
      *dest = dup_str(same_file(&st, STDOUT_FILENO) ? "-" : "/dev/stderr");
      return *dest ? NXVK_OK : nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
    }
    /* a device or FIFO: identified by its own name (two names of one
     * device do not clash: both are written in place) */
    *dest = dup_str(path);
    return *dest ? NXVK_OK : nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  }
  char *real = realpath(path, NULL); /* follows symbolic links to the file replaced */
  if (!real) return nxvk_seterr(NXVK_E_IO, "%s: cannot write: %s", path, strerror(errno));
  *dest = real;
  return NXVK_OK;
}

static int set_err(nxvk_out *o) {
  if (!o->err) o->err = errno ? errno : EIO;
  return nxvk_seterr(NXVK_E_IO, "%s: write error: %s", o->path, strerror(o->err));
}

int nxvk_out_open(const char *path, unsigned flags, nxvk_out **out) {
  *out = NULL;
  char *dest;
  bool in_place;
  int rc = nxvk_out_resolve(path, flags, &dest, &in_place);
  if (rc) return rc;
  nxvk_out *o = calloc(1, sizeof *o);
  if (!o || !(o->path = dup_str(path))) {
    free(o);
    free(dest);
    return nxvk_seterr(NXVK_E_NO_MEMORY, "%s: out of memory", path);
  }
  o->dest = dest;
  int fd = -1;
  if (in_place && (strcmp(dest, "-") == 0 || strcmp(dest, "/dev/stderr") == 0)) {
    o->kind = OUT_FD;
    o->fd = strcmp(dest, "-") == 0 ? STDOUT_FILENO : STDERR_FILENO;
    fflush(o->fd == STDOUT_FILENO ? stdout : stderr); /* what was printed comes first */
    fd = dup(o->fd);
    if (fd < 0) rc = nxvk_seterr(NXVK_E_IO, "%s: cannot write: %s", path, strerror(errno));
  } else if (in_place) {
    o->kind = OUT_IN_PLACE;
    fd = open(dest, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) rc = nxvk_seterr(NXVK_E_IO, "%s: cannot open: %s", path, strerror(errno));
  } else {
    o->kind = OUT_ATOMIC;
    struct stat st;
    if (!(flags & NXVK_OUT_REPLACE) && stat(dest, &st) == 0 && S_ISREG(st.st_mode)) {
      o->have_mode = true;
      o->mode = st.st_mode & 07777;
      o->uid = st.st_uid;
      o->gid = st.st_gid;
    }
    const char *slash = strrchr(dest, '/');
    size_t dl = (size_t)(slash - dest); /* dest is absolute */
    size_t n = strlen(dest) + 32;
    o->tmp = malloc(n);
    if (!o->tmp) {
      rc = nxvk_seterr(NXVK_E_NO_MEMORY, "%s: out of memory", path);
    } else {
      /* ".NAME.nxvk-XXXXXX", the name cut short to stay under NAME_MAX */
      snprintf(o->tmp, n, "%.*s/.%.200s.nxvk-XXXXXX", (int)dl, dest, slash + 1);
      fd = mkstemp(o->tmp);
      if (fd < 0) {
        rc = nxvk_seterr(NXVK_E_IO, "%s: cannot create a file beside it: %s", path, strerror(errno));
        free(o->tmp);
        o->tmp = NULL;
      }
    }
  }
  if (rc == NXVK_OK) {
    o->f = fdopen(fd, "wb");
    if (!o->f) {
      rc = nxvk_seterr(NXVK_E_NO_MEMORY, "%s: cannot open a stream: %s", path, strerror(errno));
      close(fd);
    }
  }
  if (rc) {
    nxvk_out_abort(o);
    return rc;
  }
  *out = o;
  return NXVK_OK;
}

FILE *nxvk_out_stream(nxvk_out *o) { return o ? o->f : NULL; }
const char *nxvk_out_path(const nxvk_out *o) { return o ? o->path : NULL; }
const char *nxvk_out_dest(const nxvk_out *o) { return o ? o->dest : NULL; }

int nxvk_out_write(nxvk_out *o, const void *buf, size_t len) {
  if (o->err) return set_err(o);
  if (len && fwrite(buf, 1, len, o->f) != len) return set_err(o);
  return NXVK_OK;
}

int nxvk_out_printf(nxvk_out *o, const char *fmt, ...) {
  if (o->err) return set_err(o);
  va_list ap;
  va_start(ap, fmt);
  int n = vfprintf(o->f, fmt, ap);
  va_end(ap);
  return n < 0 ? set_err(o) : NXVK_OK;
}

int nxvk_out_finish(nxvk_out *o) {
  if (!o) return nxvk_seterr(NXVK_E_BAD_REQUEST, "no output");
  if (o->finished) return o->err ? set_err(o) : NXVK_OK;
  o->finished = true;
  int before = errno; /* a writer that stopped at a failed write left its errno */
  errno = 0;
  if (!o->err && fflush(o->f) != 0) o->err = errno ? errno : EIO;
  if (!o->err && ferror(o->f)) o->err = before ? before : EIO;
  int fd = fileno(o->f);
  if (!o->err && o->kind == OUT_ATOMIC) {
    mode_t m = o->mode;
    if (!o->have_mode) {
      mode_t um = umask(0);
      umask(um);
      m = 0666 & ~um;
    }
    if (o->have_mode && (o->uid != geteuid() || o->gid != getegid()))
      (void)!fchown(fd, o->uid, o->gid); /* best effort: only root may give a file away */
    if (fchmod(fd, m) != 0 || fsync(fd) != 0) o->err = errno;
  }
  errno = 0;
  if (fclose(o->f) != 0 && !o->err) o->err = errno ? errno : EIO;
  o->f = NULL;
  return o->err ? set_err(o) : NXVK_OK;
}

int nxvk_out_commit(nxvk_out *o) {
  if (!o) return nxvk_seterr(NXVK_E_BAD_REQUEST, "no output");
  int rc = nxvk_out_finish(o);
  if (rc == NXVK_OK && o->tmp) {
    if (rename(o->tmp, o->dest) != 0) {
      rc = nxvk_seterr(NXVK_E_IO, "%s: cannot put the file in place: %s", o->path, strerror(errno));
    } else {
      free(o->tmp);
      o->tmp = NULL;
    }
  }
  nxvk_out_abort(o); /* frees; removes the temporary if still there */
  return rc;
}

void nxvk_out_abort(nxvk_out *o) {
  if (!o) return;
  if (o->f) fclose(o->f);
  if (o->tmp) unlink(o->tmp);
  free(o->tmp);
  free(o->dest);
  free(o->path);
  free(o);
}

int nxvk_out_write_file(const char *path, unsigned flags, const void *buf, size_t len) {
  nxvk_out *o;
  int rc = nxvk_out_open(path, flags, &o);
  if (rc) return rc;
  rc = nxvk_out_write(o, buf, len);
  if (rc) {
    nxvk_out_abort(o);
    return rc;
  }
  return nxvk_out_commit(o);
}
