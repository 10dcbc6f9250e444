/* csv.c - a 2-D table of numbers read with libcsv.
 *
 * libcsv does not count lines, so the file is fed to it one line at a time;
 * its callbacks then know which line they are on for error messages (for a
 * quoted field spanning lines, the line where the field ends). */
#define _POSIX_C_SOURCE 200809L

#include "../core/internal.h"

#include <csv.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
  const char *path;
  nxvk_dtype dtype;
  size_t esize;
  uint8_t *data;
  int64_t n, cap; /* elements stored / room for */
  int64_t rows;   /* complete rows */
  int64_t cols;   /* fields in the first row */
  int64_t col;    /* fields so far in the current row */
  int64_t line;   /* physical line being fed, from 1 */
  int rc;         /* first error; later callbacks do nothing */
} csv_state;

static bool grow(csv_state *st) {
  if (st->n < st->cap) return true;
  if (st->n + 1 >= NXVK_MAX_ELEMENTS) {
    st->rc = nxvk_seterr(NXVK_E_TOO_LARGE, "%s: line %lld: more than 2^31-1 values", st->path,
                         (long long)st->line);
    return false;
  }
  int64_t cap = st->cap ? st->cap * 2 : 1024;
  if (cap >= NXVK_MAX_ELEMENTS) cap = NXVK_MAX_ELEMENTS - 1;
  uint8_t *p = realloc(st->data, (size_t)cap * st->esize);
  if (!p) {
    st->rc = nxvk_seterr(NXVK_E_NO_MEMORY, "%s: cannot allocate %lld bytes", st->path,
                         (long long)cap * (long long)st->esize);
    return false;
  }
  st->data = p;
  st->cap = cap;
  return true;
}

static int field_err(csv_state *st, const char *s, size_t len, const char *why) {
  char fb[40];
  size_t o = 0;
  for (size_t i = 0; i < len && o < 32; i++)
    fb[o++] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
  fb[o] = '\0';
  return nxvk_seterr(NXVK_E_BAD_FILE, "%s: line %lld (row %lld), column %lld: '%s%s' %s", st->path,
                     (long long)st->line, (long long)st->rows + 1, (long long)st->col + 1, fb,
                     len > 32 ? "..." : "", why);
}

static void on_field(void *fs, size_t len, void *data) {
  csv_state *st = data;
  if (st->rc) return;
  const char *s = fs ? fs : "";
  /* quoted fields keep their spaces; numbers do not want them */
  while (len && isspace((unsigned char)s[0])) s++, len--;
  while (len && isspace((unsigned char)s[len - 1])) len--;
  if (len == 0) {
    st->rc = field_err(st, s, 0, "is empty, not a number");
    return;
  }
  char buf[128]; /* a copy: the field must end exactly where the number does */
  if (len >= sizeof buf) {
    st->rc = field_err(st, s, len, "is too long for a number");
    return;
  }
  memcpy(buf, s, len);
  buf[len] = '\0';
  if (!grow(st)) return;

  char *end;
  uint8_t *dst = st->data + (size_t)st->n * st->esize;
  errno = 0;
  switch (st->dtype) {
  case NXVK_F32: {
    float v = strtof(buf, &end); /* strtof, not (float)strtod: no double rounding */
    memcpy(dst, &v, sizeof v);
    break;
  }
  case NXVK_F64: {
    double v = strtod(buf, &end);
    memcpy(dst, &v, sizeof v);
    break;
  }
  default: {
    long v = strtol(buf, &end, 10);
    long lo = st->dtype == NXVK_I32 ? -2147483647L - 1 : 0;
    long hi = st->dtype == NXVK_I32 ? 2147483647L : 255;
    if (end != buf + len || end == buf) {
      st->rc = field_err(st, s, len, st->dtype == NXVK_I32 ? "is not an i32 integer" : "is not a u8 integer");
      return;
    }
    if (errno == ERANGE || v < lo || v > hi) {
      st->rc = field_err(st, s, len, st->dtype == NXVK_I32 ? "is out of range for i32" : "is out of range for u8 (0..255)");
      return;
    }
    if (st->dtype == NXVK_I32) {
      int32_t w = (int32_t)v;
      memcpy(dst, &w, sizeof w);
    } else {
      *dst = (uint8_t)v;
    }
    break;
  }
  }
  /* over/underflow of floats is fine (inf, denormal, 0): only syntax matters */
  if (end != buf + len || end == buf) {
    st->rc = field_err(st, s, len, "is not a number");
    return;
  }
  st->n++;
  st->col++;
}

static void on_row(int c, void *data) {
  csv_state *st = data;
  (void)c;
  if (st->rc) return;
  if (st->rows == 0)
    st->cols = st->col;
  else if (st->col != st->cols)
    st->rc = nxvk_seterr(NXVK_E_BAD_FILE, "%s: line %lld (row %lld) has %lld fields, row 1 has %lld",
                         st->path, (long long)st->line, (long long)st->rows + 1,
                         (long long)st->col, (long long)st->cols);
  st->rows++;
  st->col = 0;
}

static int parse_err(csv_state *st, struct csv_parser *p) {
  return nxvk_seterr(NXVK_E_BAD_FILE, "%s: line %lld: malformed CSV (%s)", st->path,
                     (long long)st->line, csv_strerror(csv_error(p)));
}

/* Feed one chunk, a line at a time. */
static int feed(csv_state *st, struct csv_parser *p, const char *buf, size_t len) {
  while (len && !st->rc) {
    const char *nl = memchr(buf, '\n', len);
    size_t seg = nl ? (size_t)(nl - buf) + 1 : len;
    if (csv_parse(p, buf, seg, on_field, on_row, st) != seg && !st->rc) st->rc = parse_err(st, p);
    if (nl) st->line++;
    buf += seg;
    len -= seg;
  }
  return st->rc;
}

int nxvk_csv_read(const char *path, nxvk_dtype dtype, nxvk_host *out) {
  if (!out) return nxvk_seterr(NXVK_E_BAD_REQUEST, "csv read: no output tensor");
  memset(out, 0, sizeof *out);
  if (!path) return nxvk_seterr(NXVK_E_BAD_REQUEST, "csv read: no path");
  if ((unsigned)dtype >= NXVK_NDTYPES)
    return nxvk_seterr(NXVK_E_UNSUPPORTED_DTYPE, "%s: bad dtype %d", path, (int)dtype);

  FILE *f = fopen(path, "rb");
  if (!f) return nxvk_seterr(NXVK_E_IO, "%s: cannot open: %s", path, strerror(errno));
  struct stat sbuf;
  if (fstat(fileno(f), &sbuf) == 0 && S_ISDIR(sbuf.st_mode)) {
    fclose(f);
    return nxvk_seterr(NXVK_E_IO, "%s: is a directory", path);
  }
  if (S_ISREG(sbuf.st_mode) && (int64_t)sbuf.st_size > NXVK_MAX_FILE_BYTES) {
    fclose(f);
    return nxvk_seterr(NXVK_E_TOO_LARGE, "%s: %lld bytes is over the limit of %lld", path,
                       (long long)sbuf.st_size, (long long)NXVK_MAX_FILE_BYTES);
  }
  struct csv_parser p;
  if (csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0) {
    fclose(f);
    return nxvk_seterr(NXVK_E_NO_MEMORY, "%s: csv_init failed", path);
  }
  csv_state st = {.path = path, .dtype = dtype, .esize = nxvk_dtype_size(dtype), .line = 1};
  char chunk[1 << 16];
  int64_t total = 0;
  bool first = true;
  while (!st.rc) {
    size_t got = fread(chunk, 1, sizeof chunk, f);
    if (got == 0) {
      if (ferror(f)) st.rc = nxvk_seterr(NXVK_E_IO, "%s: read error: %s", path, strerror(errno));
      break;
    }
    total += (int64_t)got;
    if (total > NXVK_MAX_FILE_BYTES) {
      st.rc = nxvk_seterr(NXVK_E_TOO_LARGE, "%s: file is over the limit of %lld bytes", path,
                          (long long)NXVK_MAX_FILE_BYTES);
      break;
    }
    const char *b = chunk;
    /* a UTF-8 byte order mark, as spreadsheets write, is not data */
    if (first && got >= 3 && memcmp(b, "\xEF\xBB\xBF", 3) == 0) {
      b += 3;
      got -= 3;
    }
    first = false;
    feed(&st, &p, b, got);
  }
  if (!st.rc && csv_fini(&p, on_field, on_row, &st) != 0 && !st.rc) st.rc = parse_err(&st, &p);
  csv_free(&p);
  fclose(f);
  if (!st.rc && st.rows == 0) st.rc = nxvk_seterr(NXVK_E_BAD_FILE, "%s: no rows", path);
  if (st.rc) {
    free(st.data);
    return st.rc;
  }
  out->dtype = dtype;
  out->shape.rank = 2;
  out->shape.dim[0] = st.rows;
  out->shape.dim[1] = st.cols;
  out->data = st.data; /* malloc'd, as nxvk_host owns it; rows * cols == n */
  return NXVK_OK;
}
