/* npy.c - .npy reader (versions 1.0 2.0 3.0) and writer (1.0, 2.0 when needed).
 *
 * The header is a Python dict literal; we parse the small subset numpy writes
 * (plus the variations older writers produced) with a bounded scanner over
 * (pointer, end), so no input can make us read past the buffer, and nothing
 * is allocated until the shape has been checked against the bytes present. */
#define _POSIX_C_SOURCE 200809L

#include "../core/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_ALIGN 64 /* current numpy aligns the data to 64 bytes */
#define NPY_SUPPORTED "(f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1, and V2 as ml_dtypes' bfloat16)"

/* Prefix the current error detail with the file name.  The detail is copied
 * first: nxvk_errmsg() points at the buffer nxvk_seterr() writes. */
static int with_name(int rc, const char *name) {
  char msg[512];
  snprintf(msg, sizeof msg, "%s", nxvk_errmsg());
  return nxvk_seterr(rc, "%s: %s", name, msg);
}

static bool host_is_le(void) {
  const uint16_t one = 1;
  uint8_t b;
  memcpy(&b, &one, 1);
  return b == 1;
}

/* ------------------------------------------------------------ header parse */

typedef struct {
  const char *p, *end;
  const char *name; /* for messages */
} scan;

typedef struct {
  nxvk_dtype dtype;
  bool swap;    /* file byte order differs from ours */
  bool is_bool; /* b1: normalise nonzero bytes to 1 */
  bool fortran;
  nxvk_shape shape;
} npy_header;

static void skip_ws(scan *s) {
  while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
    s->p++;
}

/* Copy at most 32 bytes of untrusted text into out, printable ASCII only, so
 * messages stay one short line. */
static const char *printable(const char *p, size_t n, char out[40]) {
  size_t o = 0;
  for (size_t i = 0; i < n && o < 32; i++) {
    unsigned char c = (unsigned char)p[i];
    out[o++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
  }
  if (n > 32) {
    out[o++] = '.';
    out[o++] = '.';
    out[o++] = '.';
  }
  out[o] = '\0';
  return out;
}

static int syntax_err(const scan *s, const char *what) {
  char near[40];
  if (s->p >= s->end) return nxvk_seterr(NXVK_E_BAD_FILE, "%s: header: %s at end of header", s->name, what);
  size_t left = (size_t)(s->end - s->p);
  return nxvk_seterr(NXVK_E_BAD_FILE, "%s: header: %s near '%s'", s->name, what,
                     printable(s->p, left < 16 ? left : 16, near));
}

/* A Python string literal in ' or " without escapes; str and len point into the
 * header. */
static int parse_string(scan *s, const char **str, size_t *len) {
  if (s->p >= s->end || (*s->p != '\'' && *s->p != '"')) return syntax_err(s, "expected a string");
  char q = *s->p++;
  const char *start = s->p;
  while (s->p < s->end && *s->p != q) {
    if (*s->p == '\\' || *s->p == '\n' || *s->p == '\0') return syntax_err(s, "bad character in string");
    s->p++;
  }
  if (s->p >= s->end) return syntax_err(s, "unterminated string");
  *str = start;
  *len = (size_t)(s->p - start);
  s->p++;
  return NXVK_OK;
}

static bool word_is(scan *s, const char *w) {
  size_t n = strlen(w);
  if ((size_t)(s->end - s->p) < n || memcmp(s->p, w, n) != 0) return false;
  /* the word must end here: "Truex" is not True */
  if ((size_t)(s->end - s->p) > n) {
    char c = s->p[n];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')
      return false;
  }
  s->p += n;
  return true;
}

/* What numpy calls a descr we refuse, and a way around it: "(complex64) is
 * not supported; instead: a.real and a.imag saved as two float arrays". */
static const char *unsupported_hint(const char *code, size_t n, char *out, size_t len) {
  static const struct {
    const char *code, *numpy, *fix;
  } known[] = {
      /* every other numeric descr is read (the dtype table); these are not */
      {"f16", "longdouble", "a.astype(np.float64)"}, {"f12", "longdouble", "a.astype(np.float64)"},
      {"c8", "complex64", "a.real and a.imag saved as two float arrays"},
      {"c16", "complex128", "a.real and a.imag saved as two float arrays"},
      {"O", "object", "a.astype(a number type)"},
  };
  for (size_t i = 0; i < NXVK_ARRAY_LEN(known); i++) {
    if (strlen(known[i].code) != n || memcmp(code, known[i].code, n) != 0) continue;
    snprintf(out, len, "(%s) is not supported; instead: %s " NPY_SUPPORTED, known[i].numpy,
             known[i].fix);
    return out;
  }
  if (n && (code[0] == 'U' || code[0] == 'S' || code[0] == 'a'))
    snprintf(out, len, "(strings) is not a numeric type " NPY_SUPPORTED);
  else if (n && (code[0] == 'M' || code[0] == 'm'))
    snprintf(out, len, "(datetime) is not supported; convert with a.astype(np.int64) " NPY_SUPPORTED);
  else if (n && code[0] == 'V')
    snprintf(out, len, "(void) is not supported: only V2, as np.save writes ml_dtypes' bfloat16 " NPY_SUPPORTED);
  else
    snprintf(out, len, "is not supported " NPY_SUPPORTED);
  return out;
}

static int parse_descr(scan *s, npy_header *h) {
  skip_ws(s);
  if (s->p < s->end && *s->p == '[')
    return nxvk_seterr(NXVK_E_UNSUPPORTED_DTYPE,
                       "%s: descr is a structured dtype, which is not supported " NPY_SUPPORTED
                       ": save each field as its own array",
                       s->name);
  const char *d;
  size_t n;
  int rc = parse_string(s, &d, &n);
  if (rc) return rc;

  char order = '=';
  const char *code = d;
  size_t cn = n;
  if (n > 0 && strchr("<>=|", d[0])) {
    order = d[0];
    code++;
    cn--;
  }
  /* the codes come from the dtype table (nxvk.h); bf16 is "V2", the void
   * descr numpy writes for ml_dtypes' bfloat16 (dtype.str is '<V2') */
  for (int i = 0; i < NXVK_NDTYPES; i++) {
    const nxvk_dtype_info *t = nxvk_dtype_info_of((nxvk_dtype)i);
    if (cn != 2 || memcmp(code, t->npy, 2) != 0) continue;
    size_t size = t->size;
    char buf[40];
    /* '|' means "byte order not applicable": only right for 1-byte types
     * (and void, which numpy marks either way) */
    if (order == '|' && size > 1 && i != NXVK_BF16)
      return nxvk_seterr(NXVK_E_UNSUPPORTED_DTYPE,
                         "%s: descr '%s' has no byte order ('|') for a %zu-byte type", s->name,
                         printable(d, n, buf), size);
    bool file_le = order == '<' || order == '|' || (order != '>' && host_is_le());
    h->dtype = (nxvk_dtype)i;
    h->is_bool = i == NXVK_BOOL;
    h->swap = size > 1 && file_le != host_is_le();
    return NXVK_OK;
  }
  char buf[40], hint[160];
  return nxvk_seterr(NXVK_E_UNSUPPORTED_DTYPE, "%s: descr '%s' %s", s->name, printable(d, n, buf),
                     unsupported_hint(code, cn, hint, sizeof hint));
}

static int parse_fortran(scan *s, npy_header *h) {
  skip_ws(s);
  if (word_is(s, "True"))
    h->fortran = true;
  else if (word_is(s, "False"))
    h->fortran = false;
  else
    return syntax_err(s, "fortran_order must be True or False");
  return NXVK_OK;
}

/* One dimension: decimal digits, optional Python 2 'L' suffix. */
static int parse_dim(scan *s, int64_t *out) {
  if (s->p < s->end && *s->p == '-')
    return nxvk_seterr(NXVK_E_BAD_FILE, "%s: shape: negative dimension", s->name);
  if (s->p >= s->end || *s->p < '0' || *s->p > '9') return syntax_err(s, "shape: expected a dimension");
  int64_t v = 0;
  while (s->p < s->end && *s->p >= '0' && *s->p <= '9') {
    int digit = *s->p++ - '0';
    /* a single dimension can never reach the element limit, so cap early and
     * never overflow */
    if (v > (NXVK_MAX_ELEMENTS - 1 - digit) / 10)
      return nxvk_seterr(NXVK_E_TOO_LARGE, "%s: shape: a dimension is over the limit of 2^31-1",
                         s->name);
    v = v * 10 + digit;
  }
  if (s->p < s->end && *s->p == 'L') s->p++;
  *out = v;
  return NXVK_OK;
}

/* "()", "(3,)", "(2, 3)", "(2, 3,)"; "(3)" is taken as (3,) as well. */
static int parse_shape(scan *s, npy_header *h) {
  skip_ws(s);
  if (s->p >= s->end || *s->p != '(') return syntax_err(s, "shape must be a tuple");
  s->p++;
  h->shape.rank = 0;
  for (;;) {
    skip_ws(s);
    if (s->p < s->end && *s->p == ')') break;
    if (h->shape.rank == NXVK_MAX_RANK)
      return nxvk_seterr(NXVK_E_TOO_LARGE, "%s: shape: rank is over the limit of %d", s->name,
                         NXVK_MAX_RANK);
    int rc = parse_dim(s, &h->shape.dim[h->shape.rank]);
    if (rc) return rc;
    h->shape.rank++;
    skip_ws(s);
    if (s->p < s->end && *s->p == ',') {
      s->p++;
      continue;
    }
    if (s->p < s->end && *s->p == ')') break;
    return syntax_err(s, "shape: expected ',' or ')'");
  }
  s->p++; /* ')' */
  return NXVK_OK;
}

static int parse_header(const char *text, size_t len, const char *name, npy_header *h) {
  scan s = {text, text + len, name};
  bool seen[3] = {false, false, false};
  static const char *const keys[3] = {"descr", "fortran_order", "shape"};

  memset(h, 0, sizeof *h);
  skip_ws(&s);
  if (s.p >= s.end || *s.p != '{') return syntax_err(&s, "expected '{'");
  s.p++;
  for (;;) {
    skip_ws(&s);
    if (s.p < s.end && *s.p == '}') break;
    const char *k;
    size_t kn;
    int rc = parse_string(&s, &k, &kn);
    if (rc) return rc;
    int which = -1;
    for (int i = 0; i < 3; i++)
      if (kn == strlen(keys[i]) && memcmp(k, keys[i], kn) == 0) which = i;
    char buf[40];
    if (which < 0)
      return nxvk_seterr(NXVK_E_BAD_FILE, "%s: header: unknown key '%s'", name,
                         printable(k, kn, buf));
    if (seen[which])
      return nxvk_seterr(NXVK_E_BAD_FILE, "%s: header: key '%s' appears twice", name, keys[which]);
    seen[which] = true;
    skip_ws(&s);
    if (s.p >= s.end || *s.p != ':') return syntax_err(&s, "expected ':'");
    s.p++;
    rc = which == 0 ? parse_descr(&s, h) : which == 1 ? parse_fortran(&s, h) : parse_shape(&s, h);
    if (rc) return rc;
    skip_ws(&s);
    if (s.p < s.end && *s.p == ',') {
      s.p++;
      continue;
    }
    if (s.p < s.end && *s.p == '}') break;
    return syntax_err(&s, "expected ',' or '}'");
  }
  s.p++; /* '}' */
  /* numpy pads with spaces and ends with '\n'; anything else is garbage */
  skip_ws(&s);
  if (s.p < s.end) return syntax_err(&s, "unexpected text after '}'");
  for (int i = 0; i < 3; i++)
    if (!seen[i]) return nxvk_seterr(NXVK_E_BAD_FILE, "%s: header: missing key '%s'", name, keys[i]);
  return NXVK_OK;
}

/* --------------------------------------------------------------- data */

static void swap_bytes(uint8_t *p, size_t n, size_t size) {
  for (size_t i = 0; i < n; i++, p += size)
    for (size_t a = 0, b = size - 1; a < b; a++, b--) {
      uint8_t t = p[a];
      p[a] = p[b];
      p[b] = t;
    }
}

/* Fortran order: the first index varies fastest in the file.  Walk the file in
 * its order and keep the C-order destination offset up to date. */
static void fortran_to_c(uint8_t *dst, const uint8_t *src, const nxvk_shape *sh, int64_t count,
                         size_t size) {
  int64_t cstride[NXVK_MAX_RANK], idx[NXVK_MAX_RANK] = {0};
  int r = sh->rank;
  int64_t st = 1;
  for (int k = r - 1; k >= 0; k--) {
    cstride[k] = st;
    st *= sh->dim[k];
  }
  int64_t off = 0;
  for (int64_t i = 0; i < count; i++) {
    memcpy(dst + (size_t)off * size, src + (size_t)i * size, size);
    for (int k = 0; k < r; k++) {
      off += cstride[k];
      if (++idx[k] < sh->dim[k]) break;
      off -= idx[k] * cstride[k];
      idx[k] = 0;
    }
  }
}

/* Magic, version, length and header dict of the bytes b[0..len).  On success
 * *data_off is where the data starts and *count the element count; the data
 * itself is not looked at. */
static int parse_prefix(const uint8_t *b, size_t len, const char *name, npy_header *h,
                        size_t *data_off, int64_t *count) {
  if (len == 0) return nxvk_seterr(NXVK_E_BAD_FILE, "%s: empty file, not a .npy file", name);
  if (len < NPY_MAGIC_LEN && memcmp(b, NPY_MAGIC, len) == 0)
    return nxvk_seterr(NXVK_E_BAD_FILE, "%s: truncated header", name);
  if (len < NPY_MAGIC_LEN || memcmp(b, NPY_MAGIC, NPY_MAGIC_LEN) != 0)
    return nxvk_seterr(NXVK_E_BAD_FILE, "%s: not a .npy file (bad magic)", name);
  if (len < NPY_MAGIC_LEN + 2) return nxvk_seterr(NXVK_E_BAD_FILE, "%s: truncated header", name);
  int major = b[6], minor = b[7];
  size_t lensize;
  if (major == 1 && minor == 0)
    lensize = 2;
  else if ((major == 2 || major == 3) && minor == 0)
    lensize = 4;
  else
    return nxvk_seterr(NXVK_E_BAD_FILE, "%s: .npy version %d.%d is not supported (1.0 2.0 3.0)",
                       name, major, minor);
  size_t prefix = NPY_MAGIC_LEN + 2 + lensize;
  if (len < prefix) return nxvk_seterr(NXVK_E_BAD_FILE, "%s: truncated header", name);
  uint64_t hlen = (uint64_t)b[8] | (uint64_t)b[9] << 8;
  if (lensize == 4) hlen |= (uint64_t)b[10] << 16 | (uint64_t)b[11] << 24;
  if (hlen > NXVK_MAX_NPY_HEADER)
    return nxvk_seterr(NXVK_E_TOO_LARGE, "%s: header length %llu is over the limit of %d", name,
                       (unsigned long long)hlen, NXVK_MAX_NPY_HEADER);
  if (hlen > len - prefix)
    return nxvk_seterr(NXVK_E_BAD_FILE, "%s: truncated header (%llu bytes declared, %zu present)",
                       name, (unsigned long long)hlen, len - prefix);

  int rc = parse_header((const char *)b + prefix, (size_t)hlen, name, h);
  if (rc) return rc;
  rc = nxvk_shape_count(&h->shape, count);
  if (rc) return with_name(rc, name);
  *data_off = prefix + (size_t)hlen;
  return NXVK_OK;
}

/* The data must be exactly what the shape needs: no less, no trailing bytes. */
static int check_data_len(const char *name, const npy_header *h, int64_t count, uint64_t have) {
  uint64_t need = (uint64_t)count * nxvk_dtype_size(h->dtype); /* < 2^34: no overflow */
  char sb[160];
  if (have < need)
    return nxvk_seterr(NXVK_E_BAD_FILE,
                       "%s: data is truncated: shape %s of %s needs %llu bytes, %llu present", name,
                       nxvk_shape_str(&h->shape, sb, sizeof sb), nxvk_dtype_name(h->dtype),
                       (unsigned long long)need, (unsigned long long)have);
  if (have > need)
    return nxvk_seterr(NXVK_E_BAD_FILE, "%s: %llu trailing bytes after the data of shape %s", name,
                       (unsigned long long)(have - need), nxvk_shape_str(&h->shape, sb, sizeof sb));
  return NXVK_OK;
}

/* File bytes src (all of them) into out->data: transpose, swap, normalise. */
static void store(nxvk_host *out, const uint8_t *src, const npy_header *h, int64_t count) {
  size_t size = nxvk_dtype_size(h->dtype);
  uint8_t *dst = out->data;
  if (count == 0) return;
  if (h->fortran && h->shape.rank > 1)
    fortran_to_c(dst, src, &h->shape, count, size);
  else if (src != dst)
    memcpy(dst, src, (size_t)count * size);
  if (h->swap) swap_bytes(dst, (size_t)count, size);
  if (h->is_bool)
    for (int64_t i = 0; i < count; i++) dst[i] = dst[i] != 0;
}

int nxvk_npy_read_mem(const void *buf, size_t len, const char *name, nxvk_host *out) {
  const uint8_t *b = buf;
  if (!name) name = "<memory>";
  if (!out) return nxvk_seterr(NXVK_E_BAD_REQUEST, "%s: no output tensor", name);
  memset(out, 0, sizeof *out);
  if (!b && len) return nxvk_seterr(NXVK_E_BAD_REQUEST, "%s: no buffer", name);

  npy_header h;
  size_t off;
  int64_t count;
  int rc = parse_prefix(b, len, name, &h, &off, &count);
  if (!rc) rc = check_data_len(name, &h, count, len - off);
  if (rc) return rc;
  /* Only now, with the byte count proven present, allocate. */
  rc = nxvk_host_alloc(out, h.dtype, &h.shape);
  if (rc) return with_name(rc, name);
  store(out, b + off, &h, count);
  return NXVK_OK;
}

/* Any input, read as it arrives and checked as it goes: the magic and
 * version first (so /dev/zero or a text file fails at its first bytes), then
 * the header, whose shape says how many data bytes to read -- no more are
 * read than the header promised plus one, to find trailing bytes.  A regular
 * file's size is checked against the header before anything is allocated. */
int nxvk_npy_read_src(nxvk_src *src, nxvk_host *out) {
  const char *path = src->name;
  uint8_t pre[12];
  size_t have;
  memset(out, 0, sizeof *out);
  int rc = nxvk_src_read(src, pre, 8, &have);
  if (rc) return rc;
  npy_header h;
  size_t off = 0;
  int64_t count = 0;
  if (have < 8) return parse_prefix(pre, have, path, &h, &off, &count); /* says what is wrong */
  size_t lensize = pre[6] == 1 ? 2 : 4;
  if (pre[6] >= 1 && pre[6] <= 3 && pre[7] == 0) { /* else parse_prefix names the version */
    rc = nxvk_src_read(src, pre + 8, lensize, &have);
    if (rc) return rc;
    if (have < lensize) return nxvk_seterr(NXVK_E_BAD_FILE, "%s: truncated header", path);
  } else {
    lensize = 0;
  }
  uint64_t hlen = 0;
  if (lensize) {
    hlen = (uint64_t)pre[8] | (uint64_t)pre[9] << 8;
    if (lensize == 4) hlen |= (uint64_t)pre[10] << 16 | (uint64_t)pre[11] << 24;
  }
  if (!lensize || hlen > NXVK_MAX_NPY_HEADER)
    return parse_prefix(pre, 8 + lensize, path, &h, &off, &count);
  size_t plen = 8 + lensize;
  uint8_t *head = malloc(plen + (size_t)hlen + 1);
  if (!head) return nxvk_seterr(NXVK_E_NO_MEMORY, "%s: out of memory", path);
  memcpy(head, pre, plen);
  rc = nxvk_src_read(src, head + plen, (size_t)hlen, &have);
  if (!rc) rc = parse_prefix(head, plen + have, path, &h, &off, &count);
  free(head);
  if (rc) return rc;
  size_t need = (size_t)count * nxvk_dtype_size(h.dtype);
  if (src->regular) { /* the size is known: check before allocating */
    rc = check_data_len(path, &h, count, (uint64_t)(src->size > (int64_t)off ? src->size - (int64_t)off : 0));
    if (rc) return rc;
  }
  rc = nxvk_host_alloc(out, h.dtype, &h.shape);
  if (rc) return with_name(rc, path);
  uint8_t *tmp = NULL, *dst = out->data;
  if (need && h.fortran && h.shape.rank > 1) { /* the file's order apart from the result */
    dst = tmp = malloc(need);
    if (!tmp) rc = nxvk_seterr(NXVK_E_NO_MEMORY, "%s: cannot allocate %zu bytes", path, need);
  }
  if (!rc && need) {
    rc = nxvk_src_read(src, dst, need, &have);
    if (!rc && have < need) rc = check_data_len(path, &h, count, have);
    if (!rc && src->regular && have < need) rc = nxvk_seterr(NXVK_E_IO, "%s: file shrank while reading", path);
  }
  if (!rc) {
    uint8_t extra[1];
    rc = nxvk_src_read(src, extra, 1, &have);
    if (!rc && have)
      rc = src->regular ? nxvk_seterr(NXVK_E_IO, "%s: file grew while reading", path)
                        : nxvk_seterr(NXVK_E_BAD_FILE, "%s: trailing bytes after the data of shape %s", path,
                                      nxvk_shape_str(&h.shape, (char[160]){0}, 160));
  }
  if (!rc) store(out, dst, &h, count);
  free(tmp);
  if (rc) nxvk_host_free(out);
  return rc;
}

int nxvk_npy_read(const char *path, nxvk_host *out) {
  if (!out) return nxvk_seterr(NXVK_E_BAD_REQUEST, "npy read: no output tensor");
  memset(out, 0, sizeof *out);
  if (!path) return nxvk_seterr(NXVK_E_BAD_REQUEST, "npy read: no path");
  nxvk_src s;
  int rc = nxvk_src_open(path, &s);
  if (rc) return rc;
  rc = nxvk_npy_read_src(&s, out);
  nxvk_src_close(&s);
  return rc;
}

/* ------------------------------------------------------------------ write */

static int check_host(const nxvk_host *t, int64_t *count) {
  if (!t) return nxvk_seterr(NXVK_E_BAD_REQUEST, "npy write: no tensor");
  if ((unsigned)t->dtype >= NXVK_NDTYPES)
    return nxvk_seterr(NXVK_E_UNSUPPORTED_DTYPE, "npy write: bad dtype %d", (int)t->dtype);
  int rc = nxvk_shape_count(&t->shape, count);
  if (rc) return rc;
  if (*count > 0 && !t->data) return nxvk_seterr(NXVK_E_BAD_REQUEST, "npy write: tensor has no data");
  return NXVK_OK;
}

/* The complete header (magic .. '\n'), malloc'd, laid out as numpy does:
 * spaces pad it so the data starts at a multiple of 64. */
static int build_header(const nxvk_host *t, uint8_t **out, size_t *outlen) {
  char dict[512];
  char bo = host_is_le() ? '<' : '>';
  char dbuf[8];
  /* numpy's own marks: '|' for one byte, '<' or '>' else (bf16: '<V2', as
   * np.save writes ml_dtypes' bfloat16) */
  const nxvk_dtype_info *ti = nxvk_dtype_info_of(t->dtype);
  snprintf(dbuf, sizeof dbuf, "%c%s", ti->size == 1 ? '|' : bo, ti->npy);
  int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", dbuf);
  for (int i = 0; i < t->shape.rank; i++)
    n += snprintf(dict + n, sizeof dict - (size_t)n, "%s%lld", i ? ", " : "",
                  (long long)t->shape.dim[i]);
  n += snprintf(dict + n, sizeof dict - (size_t)n, "%s), }", t->shape.rank == 1 ? "," : "");

  size_t hlen = (size_t)n + 1; /* + '\n' */
  size_t lensize = 2;
  size_t pad = NPY_ALIGN - (NPY_MAGIC_LEN + 2 + lensize + hlen) % NPY_ALIGN;
  if (hlen + pad > 65535) { /* cannot happen at rank <= 8, kept for the format's sake */
    lensize = 4;
    pad = NPY_ALIGN - (NPY_MAGIC_LEN + 2 + lensize + hlen) % NPY_ALIGN;
  }
  size_t total = NPY_MAGIC_LEN + 2 + lensize + hlen + pad;
  uint8_t *h = malloc(total);
  if (!h) return nxvk_seterr(NXVK_E_NO_MEMORY, "npy write: cannot allocate %zu bytes", total);
  memcpy(h, NPY_MAGIC, NPY_MAGIC_LEN);
  h[6] = lensize == 2 ? 1 : 2;
  h[7] = 0;
  size_t body = hlen + pad;
  for (size_t i = 0; i < lensize; i++) h[8 + i] = (uint8_t)(body >> (8 * i));
  size_t o = NPY_MAGIC_LEN + 2 + lensize;
  memcpy(h + o, dict, (size_t)n);
  memset(h + o + (size_t)n, ' ', pad);
  h[total - 1] = '\n';
  *out = h;
  *outlen = total;
  return NXVK_OK;
}

int nxvk_npy_encode(const nxvk_host *t, void **buf, size_t *len) {
  int64_t count;
  if (!buf || !len) return nxvk_seterr(NXVK_E_BAD_REQUEST, "npy encode: no output");
  *buf = NULL;
  *len = 0;
  int rc = check_host(t, &count);
  if (rc) return rc;
  uint8_t *h;
  size_t hl;
  rc = build_header(t, &h, &hl);
  if (rc) return rc;
  size_t dl = (size_t)count * nxvk_dtype_size(t->dtype);
  uint8_t *b = realloc(h, hl + dl);
  if (!b) {
    free(h);
    return nxvk_seterr(NXVK_E_NO_MEMORY, "npy encode: cannot allocate %zu bytes", hl + dl);
  }
  if (dl) memcpy(b + hl, t->data, dl);
  *buf = b;
  *len = hl + dl;
  return NXVK_OK;
}

int nxvk_npy_header(const nxvk_host *t, uint8_t **out, size_t *outlen) {
  int64_t count;
  *out = NULL;
  *outlen = 0;
  int rc = check_host(t, &count);
  return rc ? rc : build_header(t, out, outlen);
}

/* Through out.c: a regular file is replaced atomically (a mkstemp temporary
 * renamed when complete), a device or FIFO written in place. */
int nxvk_npy_write(const char *path, const nxvk_host *t) {
  int64_t count;
  if (!path) return nxvk_seterr(NXVK_E_BAD_REQUEST, "npy write: no path");
  int rc = check_host(t, &count);
  if (rc) return with_name(rc, path);
  nxvk_out *o;
  rc = nxvk_out_open(path, 0, &o);
  if (rc) return rc;
  rc = nxvk_tensor_save(o, NXVK_FMT_NPY, t);
  if (rc) {
    nxvk_out_abort(o);
    return rc;
  }
  return nxvk_out_commit(o);
}
