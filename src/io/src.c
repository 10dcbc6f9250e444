/* src.c - an input read once, whatever it is: a regular file, a pipe, a FIFO,
 * a device, or "-" for stdin.  The few bytes peeked to tell the format are
 * kept and handed on, so a pipe works as well as a file. */
#define _POSIX_C_SOURCE 200809L

#include "../core/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int nxvk_src_open(const char *path, nxvk_src *s) {
  memset(s, 0, sizeof *s);
  s->name = path;
  if (strcmp(path, "-") == 0) {
    s->f = stdin;
    s->name = "<stdin>";
  } else {
    s->f = fopen(path, "rb");
    if (!s->f) return nxvk_seterr(NXVK_E_IO, "%s: cannot open: %s", path, strerror(errno));
    s->own = true;
  }
  struct stat st;
  if (fstat(fileno(s->f), &st) != 0) {
    int e = errno;
    nxvk_src_close(s);
    return nxvk_seterr(NXVK_E_IO, "%s: cannot stat: %s", path, strerror(e));
  }
  if (S_ISDIR(st.st_mode)) {
    nxvk_src_close(s);
    return nxvk_seterr(NXVK_E_IO, "%s: is a directory", path);
  }
  s->regular = S_ISREG(st.st_mode);
  s->size = s->regular ? (int64_t)st.st_size : -1;
  if (s->regular && s->size > NXVK_MAX_FILE_BYTES) {
    int64_t sz = s->size;
    nxvk_src_close(s);
    return nxvk_seterr(NXVK_E_TOO_LARGE, "%s: file of %lld bytes is over the limit of %lld", path,
                       (long long)sz, (long long)NXVK_MAX_FILE_BYTES);
  }
  return NXVK_OK;
}

static int raw_read(nxvk_src *s, uint8_t *buf, size_t n, size_t *got) {
  *got = 0;
  while (*got < n && !s->eof_seen) {
    size_t r = fread(buf + *got, 1, n - *got, s->f);
    *got += r;
    if (r == 0) {
      if (ferror(s->f)) return nxvk_seterr(NXVK_E_IO, "%s: read error: %s", s->name, strerror(errno));
      s->eof_seen = true;
    }
  }
  return NXVK_OK;
}

int nxvk_src_peek(nxvk_src *s, size_t n, const uint8_t **p, size_t *got) {
  if (n > sizeof s->peek) n = sizeof s->peek;
  if (s->ppos == 0 && s->npeek < n) {
    size_t more;
    int rc = raw_read(s, s->peek + s->npeek, n - s->npeek, &more);
    s->npeek += more;
    if (rc) return rc;
  }
  *p = s->peek + s->ppos;
  *got = s->npeek - s->ppos < n ? s->npeek - s->ppos : n;
  return NXVK_OK;
}

int nxvk_src_read(nxvk_src *s, void *buf, size_t n, size_t *got) {
  uint8_t *b = buf;
  size_t from_peek = s->npeek - s->ppos < n ? s->npeek - s->ppos : n;
  if (from_peek) memcpy(b, s->peek + s->ppos, from_peek);
  s->ppos += from_peek;
  size_t more = 0;
  int rc = from_peek < n ? raw_read(s, b + from_peek, n - from_peek, &more) : NXVK_OK;
  *got = from_peek + more;
  return rc;
}

int nxvk_src_read_all(nxvk_src *s, int64_t max, uint8_t **out, size_t *outlen) {
  size_t cap = s->regular ? (size_t)s->size + 1 : (size_t)1 << 16, n = 0;
  uint8_t *buf = malloc(cap);
  *out = NULL;
  *outlen = 0;
  if (!buf) return nxvk_seterr(NXVK_E_NO_MEMORY, "%s: out of memory", s->name);
  for (;;) {
    if (n == cap) {
      if ((int64_t)cap > max) {
        free(buf);
        return nxvk_seterr(NXVK_E_TOO_LARGE, "%s: input is over the limit of %lld bytes", s->name,
                           (long long)max);
      }
      uint8_t *nb = realloc(buf, cap * 2);
      if (!nb) {
        free(buf);
        return nxvk_seterr(NXVK_E_NO_MEMORY, "%s: cannot allocate %zu bytes", s->name, cap * 2);
      }
      buf = nb;
      cap *= 2;
    }
    size_t got;
    int rc = nxvk_src_read(s, buf + n, cap - n, &got);
    n += got;
    if (rc) {
      free(buf);
      return rc;
    }
    if (n < cap) break; /* end of input */
  }
  if ((int64_t)n > max) {
    free(buf);
    return nxvk_seterr(NXVK_E_TOO_LARGE, "%s: input is over the limit of %lld bytes", s->name,
                       (long long)max);
  }
  *out = buf;
  *outlen = n;
  return NXVK_OK;
}

void nxvk_src_close(nxvk_src *s) {
  if (s->f && s->own) fclose(s->f);
  s->f = NULL;
}
