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
  int header;     /* 1: the first row is a header; 0: detect (a first row with no number) */
  bool in_header; /* the row being read is the header: skipped */
  int64_t header_numbers; /* fields of the first row that are numbers (detection) */
  bool had_header;
} csv_state;

/* A field longer than this is refused as it grows: libcsv would otherwise
 * grow its buffer 128 bytes at a time (quadratic for one huge field).  No
 * number needs more than 128 bytes; headers get some room. */
#define CSV_MAX_FIELD 4096
static void *capped_realloc(void *p, size_t n) { return n > CSV_MAX_FIELD + 256 ? NULL : realloc(p, n); }

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

static bool looks_numeric(const char *s, size_t len) {
  char buf[130], *end;
  if (len == 0 || len >= sizeof buf) return false;
  memcpy(buf, s, len);
  buf[len] = '\0';
  (void)strtod(buf, &end);
  return end == buf + len;
}

static void on_field(void *fs, size_t len, void *data) {
  csv_state *st = data;
  if (st->rc) return;
  const char *s = fs ? fs : "";
  if (st->rows == 0 && st->header >= 0 && (st->in_header || st->col == 0)) {
    const char *t = s;
    size_t tl = len;
    while (tl && isspace((unsigned char)t[0])) t++, tl--;
    while (tl && isspace((unsigned char)t[tl - 1])) tl--;
    if (st->col == 0) st->in_header = st->header == 1 || !looks_numeric(t, tl);
    if (st->in_header) { /* a header row: names, not data (detected: no number in it) */
      if (looks_numeric(t, tl)) st->header_numbers++;
      st->col++;
      return;
    }
  }
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
  case NXVK_F16:
  case NXVK_BF16: {
    double v = strtod(buf, &end); /* rounded once, from the decimal's double */
    nxvk_host tmp = {.dtype = st->dtype, .shape = {1, {1}}, .data = dst};
    nxvk_host_set(&tmp, 0, v);
    break;
  }
  default: {
    const nxvk_dtype_info *ti = nxvk_dtype_info_of(st->dtype);
    bool sgn = ti->cls == NXVK_CLASS_SIGNED;
    char what[48];
    snprintf(what, sizeof what, "is not a%s %s integer", st->dtype == NXVK_I8 || st->dtype == NXVK_I16 ||
             st->dtype == NXVK_I32 || st->dtype == NXVK_I64 ? "n" : "", ti->name);
    int64_t v;
    bool range;
    if (sgn) {
      long long x = strtoll(buf, &end, 10);
      v = x;
      range = ti->bits == 64 || (x >= -(1LL << (ti->bits - 1)) && x < (1LL << (ti->bits - 1)));
    } else {
      /* strtoull takes "-1" as 2^64-1: refuse a sign before it does */
      unsigned long long x = buf[0] == '-' ? (end = buf, 0) : strtoull(buf, &end, 10);
      v = (int64_t)x;
      range = ti->cls == NXVK_CLASS_BOOL ? x <= 1 : ti->bits == 64 || x < (1ULL << ti->bits);
      if (buf[0] == '-' && len > 1) { end = buf + len; range = false; }
    }
    if (end != buf + len || end == buf) {
      st->rc = field_err(st, s, len, what);
      return;
    }
    if (errno == ERANGE || !range) {
      char msg[64];
      snprintf(msg, sizeof msg, "is out of range for %s", ti->name);
      st->rc = field_err(st, s, len, msg);
      return;
    }
    nxvk_host tmp = {.dtype = st->dtype, .shape = {1, {1}}, .data = dst};
    nxvk_host_set_int(&tmp, 0, v);
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
  if (st->in_header) {
    st->in_header = false;
    if (st->header == 0 && st->header_numbers > 0) { /* a mix of names and numbers: a typo */
      st->rc = nxvk_seterr(NXVK_E_BAD_FILE,
                           "%s: line %lld (row 1): the first row mixes numbers and text (a header "
                           "row is skipped with --csv-header)", st->path, (long long)st->line);
      return;
    }
    st->header = -1; /* done: later rows are data */
    st->had_header = true;
    st->cols = st->col;
    st->col = 0;
    return;
  }
  if (st->rows == 0 && st->had_header && st->col != st->cols) {
    st->rc = nxvk_seterr(NXVK_E_BAD_FILE, "%s: line %lld (row 1) has %lld fields, the header has %lld",
                         st->path, (long long)st->line, (long long)st->col, (long long)st->cols);
    return;
  }
  if (st->rows == 0 && !st->had_header)
    st->cols = st->col;
  else if (st->col != st->cols)
    st->rc = nxvk_seterr(NXVK_E_BAD_FILE, "%s: line %lld (row %lld) has %lld fields, row 1 has %lld",
                         st->path, (long long)st->line, (long long)st->rows + 1,
                         (long long)st->col, (long long)st->cols);
  st->rows++;
  st->col = 0;
}

static int parse_err(csv_state *st, struct csv_parser *p) {
  if (csv_error(p) == CSV_ENOMEM)
    return nxvk_seterr(NXVK_E_BAD_FILE, "%s: line %lld: a field longer than %d bytes", st->path,
                       (long long)st->line, CSV_MAX_FIELD);
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

int nxvk_csv_read_src(nxvk_src *src, nxvk_dtype dtype, int header, nxvk_host *out) {
  const char *path = src->name;
  memset(out, 0, sizeof *out);
  if ((unsigned)dtype >= NXVK_NDTYPES)
    return nxvk_seterr(NXVK_E_UNSUPPORTED_DTYPE, "%s: bad dtype %d", path, (int)dtype);
  struct csv_parser p;
  if (csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0)
    return nxvk_seterr(NXVK_E_NO_MEMORY, "%s: csv_init failed", path);
  csv_set_realloc_func(&p, capped_realloc);
  csv_state st = {.path = path, .dtype = dtype, .esize = nxvk_dtype_size(dtype), .line = 1,
                  .header = header > 0 ? 1 : header < 0 ? -1 : 0};
  char chunk[1 << 16];
  int64_t total = 0;
  bool first = true;
  while (!st.rc) {
    size_t got;
    st.rc = nxvk_src_read(src, chunk, sizeof chunk, &got);
    if (st.rc || got == 0) break;
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

int nxvk_csv_read(const char *path, nxvk_dtype dtype, nxvk_host *out) {
  if (!out) return nxvk_seterr(NXVK_E_BAD_REQUEST, "csv read: no output tensor");
  memset(out, 0, sizeof *out);
  if (!path) return nxvk_seterr(NXVK_E_BAD_REQUEST, "csv read: no path");
  nxvk_src s;
  int rc = nxvk_src_open(path, &s);
  if (rc) return rc;
  rc = nxvk_csv_read_src(&s, dtype, 0, out);
  nxvk_src_close(&s);
  return rc;
}
