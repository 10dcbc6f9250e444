/* util.c - errors, dtypes, shapes and host tensors. */
#include "internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- errors: name, message and exit status from the one X-macro ---- */

static _Thread_local char last_msg[512];

typedef struct {
  const char *name, *msg;
  int exit_status;
} err_row;

static const err_row err_rows[] = {
#define XX(name, wire, msg, exitcode) {wire, msg, exitcode},
    NXVK_ERRNO_MAP(XX)
#undef XX
};

static const err_row *err_lookup(int code) {
  int i = code - NXVK_E__BASE - 1;
  if (i < 0 || i >= (int)NXVK_ARRAY_LEN(err_rows)) return NULL;
  return &err_rows[i];
}

const char *nxvk_err_name(int code) {
  const err_row *r = err_lookup(code);
  return code == 0 ? "ok" : r ? r->name : "unknown_error";
}

const char *nxvk_strerror(int code) {
  const err_row *r = err_lookup(code);
  return code == 0 ? "success" : r ? r->msg : "unknown error";
}

int nxvk_err_exit_status(int code) {
  const err_row *r = err_lookup(code);
  return code == 0 ? 0 : r ? r->exit_status : 1;
}

bool nxvk_env_bool(const char *name, bool dflt) {
  const char *e = getenv(name);
  return e && *e ? strcmp(e, "0") != 0 : dflt;
}

bool nxvk_env_flag(const char *name) { return nxvk_env_bool(name, false); }

/* digits[.digits][K|M|G|T][iB|B] or digits[.digits]B: the one size grammar
 * of every option and variable (bench sizes, stress sizes, port frames,
 * NXVK_POOL_CAP).  A fraction is allowed where the result is whole
 * ("1.5K" = 1536, "0.3" is refused). */
int nxvk_parse_bytes(const char *text, uint64_t *out) {
  if (!text || !isdigit((unsigned char)text[0])) return -1;
  char *end;
  errno = 0;
  unsigned long long whole = strtoull(text, &end, 10);
  if (errno) return -1;
  uint64_t num = 0, den = 1; /* the fraction num / den, at most 6 digits */
  if (*end == '.') {
    end++;
    if (!isdigit((unsigned char)*end)) return -1;
    for (; isdigit((unsigned char)*end); end++) {
      if (den == 1000000) return -1;
      num = num * 10 + (uint64_t)(*end - '0');
      den *= 10;
    }
  }
  unsigned shift = 0;
  switch (toupper((unsigned char)*end)) {
  case 'K': shift = 10; break;
  case 'M': shift = 20; break;
  case 'G': shift = 30; break;
  case 'T': shift = 40; break;
  default: break;
  }
  if (shift) {
    end++;
    if (strcmp(end, "iB") == 0 || strcmp(end, "B") == 0) end += strlen(end);
  } else if (strcmp(end, "B") == 0) {
    end++;
  }
  if (*end || whole > (UINT64_MAX >> shift)) return -1;
  uint64_t frac = num << shift; /* num < 10^6 < 2^20, shift <= 40: no overflow */
  if (frac % den) return -1;
  uint64_t v = ((uint64_t)whole << shift), f = frac / den;
  if (v > UINT64_MAX - f) return -1;
  *out = v + f;
  return 0;
}

const char *nxvk_errmsg(void) { return last_msg[0] ? last_msg : "no detail"; }

int nxvk_seterr(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_msg, sizeof last_msg, fmt, ap);
  va_end(ap);
  /* one printable line, whatever bytes hostile input put in a name */
  for (char *p = last_msg; *p; p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
  return code;
}

/* ---- JSON depth ---- */

bool nxvk_json_depth_ok(const char *text, size_t len, int max_depth) {
  int depth = 0;
  bool in_str = false;
  for (size_t i = 0; i < len; i++) {
    char ch = text[i];
    if (in_str) {
      if (ch == '\\')
        i++;
      else if (ch == '"')
        in_str = false;
    } else if (ch == '"') {
      in_str = true;
    } else if (ch == '[' || ch == '{') {
      if (++depth > max_depth) return false;
    } else if ((ch == ']' || ch == '}') && depth > 0) {
      depth--; /* never below 0: stray closers must not buy extra depth */
    }
  }
  return true;
}

/* ---- dtypes ---- */

#define NEED16 NXVK_NEEDS_16BIT
#define NEED8 NXVK_NEEDS_8BIT
static const nxvk_dtype_info dtype_rows[NXVK_NDTYPES] = {
    [NXVK_F16] = {"f16", "float16", 2, "f2", "{:f, 16}", NXVK_CLASS_FLOAT, 16, NEED16},
    [NXVK_BF16] = {"bf16", "bfloat16", 2, "V2", "{:bf, 16}", NXVK_CLASS_FLOAT, 16, NEED16},
    [NXVK_F32] = {"f32", "float32", 4, "f4", "{:f, 32}", NXVK_CLASS_FLOAT, 32, 0},
    [NXVK_F64] = {"f64", "float64", 8, "f8", "{:f, 64}", NXVK_CLASS_FLOAT, 64, NXVK_NEEDS_F64},
    [NXVK_I8] = {"i8", "int8", 1, "i1", "{:s, 8}", NXVK_CLASS_SIGNED, 8, NEED8},
    [NXVK_I16] = {"i16", "int16", 2, "i2", "{:s, 16}", NXVK_CLASS_SIGNED, 16, NEED16},
    [NXVK_I32] = {"i32", "int32", 4, "i4", "{:s, 32}", NXVK_CLASS_SIGNED, 32, 0},
    [NXVK_I64] = {"i64", "int64", 8, "i8", "{:s, 64}", NXVK_CLASS_SIGNED, 64, NXVK_NEEDS_INT64},
    [NXVK_U8] = {"u8", "uint8", 1, "u1", "{:u, 8}", NXVK_CLASS_UNSIGNED, 8, NEED8},
    [NXVK_U16] = {"u16", "uint16", 2, "u2", "{:u, 16}", NXVK_CLASS_UNSIGNED, 16, NEED16},
    [NXVK_U32] = {"u32", "uint32", 4, "u4", "{:u, 32}", NXVK_CLASS_UNSIGNED, 32, 0},
    [NXVK_U64] = {"u64", "uint64", 8, "u8", "{:u, 64}", NXVK_CLASS_UNSIGNED, 64, NXVK_NEEDS_INT64},
    [NXVK_BOOL] = {"bool", "bool_", 1, "b1", "{:u, 8}", NXVK_CLASS_BOOL, 8, NEED8},
};

const nxvk_dtype_info *nxvk_dtype_info_of(nxvk_dtype d) {
  return (unsigned)d < NXVK_NDTYPES ? &dtype_rows[d] : NULL;
}

const char *nxvk_dtype_name(nxvk_dtype d) {
  return (unsigned)d < NXVK_NDTYPES ? dtype_rows[d].name : "?";
}

size_t nxvk_dtype_size(nxvk_dtype d) {
  return (unsigned)d < NXVK_NDTYPES ? dtype_rows[d].size : 0;
}

bool nxvk_dtype_is_float(nxvk_dtype d) {
  return (unsigned)d < NXVK_NDTYPES && dtype_rows[d].cls == NXVK_CLASS_FLOAT;
}

bool nxvk_dtype_is_int(nxvk_dtype d) {
  return (unsigned)d < NXVK_NDTYPES &&
         (dtype_rows[d].cls == NXVK_CLASS_SIGNED || dtype_rows[d].cls == NXVK_CLASS_UNSIGNED);
}

const char *nxvk_dtype_names(void) { return "f16 bf16 f32 f64 i8 i16 i32 i64 u8 u16 u32 u64 bool"; }

int nxvk_dtype_parse(const char *s, nxvk_dtype *out) {
  for (int d = 0; d < NXVK_NDTYPES; d++) {
    if (strcmp(s, dtype_rows[d].name) == 0 || strcmp(s, dtype_rows[d].alias) == 0) {
      *out = (nxvk_dtype)d;
      return NXVK_OK;
    }
  }
  /* Nx's {:s, 64} written as "s:64" / "s64"; numpy's short codes "<i8" "b1" */
  char nx[16];
  for (int d = 0; d < NXVK_NDTYPES; d++) {
    const nxvk_dtype_info *t = &dtype_rows[d];
    if (t->cls == NXVK_CLASS_BOOL) continue;
    const char *k = t->cls == NXVK_CLASS_FLOAT ? (d == NXVK_BF16 ? "bf" : "f")
                    : t->cls == NXVK_CLASS_SIGNED ? "s" : "u";
    snprintf(nx, sizeof nx, "%s:%d", k, t->bits);
    if (strcmp(s, nx) == 0) goto found;
    snprintf(nx, sizeof nx, "%s%d", k, t->bits);
    if (strcmp(s, nx) == 0) goto found;
    continue;
  found:
    *out = (nxvk_dtype)d;
    return NXVK_OK;
  }
  /* numpy descrs only with their byte-order mark: "i8" is ours (int8), "<i8" numpy's int64 */
  const char *code = s + 1;
  if (*s == '<' || *s == '>' || *s == '|' || *s == '=')
    for (int d = 0; d < NXVK_NDTYPES; d++)
      if (d != NXVK_BF16 && strcmp(code, dtype_rows[d].npy) == 0) {
        *out = (nxvk_dtype)d;
        return NXVK_OK;
      }
  return nxvk_seterr(NXVK_E_UNSUPPORTED_DTYPE, "unknown dtype '%s' (%s)", s, nxvk_dtype_names());
}

/* ---- f16 / bf16 ---- */

float nxvk_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, bits;
  if (e == 0x1f) {
    bits = sign | 0x7f800000u | (m << 13);
  } else if (e != 0) {
    bits = sign | ((e + 112u) << 23) | (m << 13);
  } else {
    float v = ldexpf((float)m, -24); /* exact */
    memcpy(&bits, &v, 4);
    bits |= sign;
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

uint16_t nxvk_f32_to_f16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) {
    uint32_t nan = 0x7c00u | ((ax >> 13) & 0x3ffu);
    return (uint16_t)(sign | (nan == 0x7c00u ? 0x7e00u : nan));
  }
  if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);
  if (ax >= 0x38800000u) {
    uint32_t r = ax - 0x38000000u, h = r >> 13, rem = r & 0x1fffu;
    h += (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ? 1u : 0u;
    return (uint16_t)(sign | h);
  }
  if (ax < 0x33000000u) return (uint16_t)sign;
  uint32_t e = ax >> 23, m = (ax & 0x7fffffu) | 0x800000u, sh = 126u - e;
  uint32_t h = m >> sh, rem = m & ((1u << sh) - 1u), half = 1u << (sh - 1u);
  h += (rem > half || (rem == half && (h & 1u))) ? 1u : 0u;
  return (uint16_t)(sign | h);
}

float nxvk_bf16_to_f32(uint16_t h) {
  uint32_t bits = (uint32_t)h << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

uint16_t nxvk_f32_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u); /* quiet, payload top */
  x += 0x7fffu + ((x >> 16) & 1u);  /* to nearest, ties to even; overflow carries into inf */
  return (uint16_t)(x >> 16);
}

/* ---- shapes ---- */

int nxvk_shape_count(const nxvk_shape *s, int64_t *count) {
  if (s->rank < 0 || s->rank > NXVK_MAX_RANK)
    return nxvk_seterr(NXVK_E_TOO_LARGE, "rank %d is over the limit of %d", s->rank,
                       NXVK_MAX_RANK);
  int64_t n = 1;
  for (int i = 0; i < s->rank; i++) {
    if (s->dim[i] < 0)
      return nxvk_seterr(NXVK_E_BAD_REQUEST, "dimension %d is negative (%lld)", i,
                         (long long)s->dim[i]);
    if (!nxvk_mul_ok(n, s->dim[i], &n) || n >= NXVK_MAX_ELEMENTS) {
      /* keep scanning for a zero dim: a zero makes the product 0, not huge */
      for (int j = i + 1; j < s->rank; j++)
        if (s->dim[j] == 0) {
          *count = 0;
          return NXVK_OK;
        }
      char buf[160];
      return nxvk_seterr(NXVK_E_TOO_LARGE, "shape %s has more than 2^31-1 elements",
                         nxvk_shape_str(s, buf, sizeof buf));
    }
  }
  *count = n;
  return NXVK_OK;
}

bool nxvk_shape_equal(const nxvk_shape *a, const nxvk_shape *b) {
  if (a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; i++)
    if (a->dim[i] != b->dim[i]) return false;
  return true;
}

char *nxvk_shape_str(const nxvk_shape *s, char *buf, size_t len) {
  size_t off = 0;
  if (len == 0) return buf;
  off += (size_t)snprintf(buf, len, "[");
  for (int i = 0; i < s->rank && i < NXVK_MAX_RANK && off < len; i++)
    off += (size_t)snprintf(buf + off, len - off, "%s%lld", i ? "," : "", (long long)s->dim[i]);
  if (off < len) snprintf(buf + off, len - off, "]");
  return buf;
}

/* ---- host tensors ---- */

int64_t nxvk_host_count(const nxvk_host *h) {
  int64_t n = 0;
  return nxvk_shape_count(&h->shape, &n) == NXVK_OK ? n : 0;
}

size_t nxvk_host_bytes(const nxvk_host *h) {
  return (size_t)nxvk_host_count(h) * nxvk_dtype_size(h->dtype);
}

int nxvk_host_alloc(nxvk_host *h, nxvk_dtype d, const nxvk_shape *s) {
  int64_t n;
  int rc = nxvk_shape_count(s, &n);
  memset(h, 0, sizeof *h);
  if (rc) return rc;
  if ((unsigned)d >= NXVK_NDTYPES) return nxvk_seterr(NXVK_E_UNSUPPORTED_DTYPE, "bad dtype");
  h->dtype = d;
  h->shape = *s;
  if (n > 0) {
    h->data = calloc((size_t)n, nxvk_dtype_size(d));
    if (!h->data)
      return nxvk_seterr(NXVK_E_NO_MEMORY, "cannot allocate %lld bytes of host memory",
                         (long long)(n * (int64_t)nxvk_dtype_size(d)));
  }
  return NXVK_OK;
}

void nxvk_host_free(nxvk_host *h) {
  if (!h) return;
  free(h->data);
  memset(h, 0, sizeof *h);
}

double nxvk_host_get(const nxvk_host *h, int64_t i) {
  switch (h->dtype) {
  case NXVK_F16: return nxvk_f16_to_f32(((const uint16_t *)h->data)[i]);
  case NXVK_BF16: return nxvk_bf16_to_f32(((const uint16_t *)h->data)[i]);
  case NXVK_F32: return ((const float *)h->data)[i];
  case NXVK_F64: return ((const double *)h->data)[i];
  case NXVK_U64: return (double)(uint64_t)nxvk_host_get_int(h, i);
  default: return (double)nxvk_host_get_int(h, i);
  }
}

/* double -> int64 bits the way as_type goes to a 64-bit integer, then wrapped
 * by the store: NaN -> 0, out of range saturates (u64 keeps [2^63, 2^64)). */
static int64_t double_to_bits(double v, bool unsigned64) {
  if (isnan(v)) return 0;
  if (unsigned64 && v >= 9223372036854775808.0)
    return v >= 18446744073709551616.0 ? -1 : (int64_t)(uint64_t)v;
  if (v >= 9223372036854775808.0) return INT64_MAX;
  if (v <= -9223372036854775808.0) return INT64_MIN;
  return (int64_t)v;
}

/* v rounded to f32 with round to odd: rounding that to a 16-bit float
 * gives v correctly rounded (f32 has more than two extra bits), so a double
 * reaches f16 / bf16 in one rounding, not two */
static float f32_odd(double v) {
  float f = (float)v;
  if (isnan(v) || isinf(f) || (double)f == v) return f;
  uint32_t bits;
  memcpy(&bits, &f, 4);
  if (fabs((double)f) > fabs(v)) bits--; /* toward zero (f is never 0 here when it rounded up) */
  bits |= 1u;
  memcpy(&f, &bits, 4);
  return f;
}

void nxvk_host_set(nxvk_host *h, int64_t i, double v) {
  switch (h->dtype) {
  case NXVK_F16: ((uint16_t *)h->data)[i] = nxvk_f32_to_f16(f32_odd(v)); break;
  case NXVK_BF16: ((uint16_t *)h->data)[i] = nxvk_f32_to_bf16(f32_odd(v)); break;
  case NXVK_F32: ((float *)h->data)[i] = (float)v; break;
  case NXVK_F64: ((double *)h->data)[i] = v; break;
  case NXVK_BOOL: ((uint8_t *)h->data)[i] = v != 0; break;
  default: nxvk_host_set_int(h, i, double_to_bits(v, h->dtype == NXVK_U64)); break;
  }
}

int64_t nxvk_host_get_int(const nxvk_host *h, int64_t i) {
  const void *p = h->data;
  switch (h->dtype) {
  case NXVK_I8: return ((const int8_t *)p)[i];
  case NXVK_I16: return ((const int16_t *)p)[i];
  case NXVK_I32: return ((const int32_t *)p)[i];
  case NXVK_I64: return ((const int64_t *)p)[i];
  case NXVK_U8: case NXVK_BOOL: return ((const uint8_t *)p)[i];
  case NXVK_U16: return ((const uint16_t *)p)[i];
  case NXVK_U32: return ((const uint32_t *)p)[i];
  case NXVK_U64: return (int64_t)((const uint64_t *)p)[i];
  default: return double_to_bits(nxvk_host_get(h, i), false);
  }
}

void nxvk_host_set_int(nxvk_host *h, int64_t i, int64_t v) {
  void *p = h->data;
  uint64_t u = (uint64_t)v;
  switch (h->dtype) {
  case NXVK_I8: ((int8_t *)p)[i] = (int8_t)(uint8_t)u; break;
  case NXVK_I16: ((int16_t *)p)[i] = (int16_t)(uint16_t)u; break;
  case NXVK_I32: ((int32_t *)p)[i] = (int32_t)(uint32_t)u; break;
  case NXVK_I64: ((int64_t *)p)[i] = v; break;
  case NXVK_U8: ((uint8_t *)p)[i] = (uint8_t)u; break;
  case NXVK_BOOL: ((uint8_t *)p)[i] = v != 0; break;
  case NXVK_U16: ((uint16_t *)p)[i] = (uint16_t)u; break;
  case NXVK_U32: ((uint32_t *)p)[i] = (uint32_t)u; break;
  case NXVK_U64: ((uint64_t *)p)[i] = u; break;
  default: nxvk_host_set(h, i, (double)v); break;
  }
}

double nxvk_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

uint64_t nxvk_splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double nxvk_rand_unit(uint64_t *state) { return (double)(nxvk_splitmix64(state) >> 11) * 0x1p-53; }

int nxvk_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Room for n more bytes and a NUL; false (and oom) when there is none. */
static bool sb_reserve(nxvk_strbuf *b, size_t n) {
  if (b->oom) return false;
  if (n < b->cap - b->len) return true; /* cap > len always holds once allocated */
  size_t cap = b->cap ? b->cap : 256;
  while (n >= cap - b->len) {
    if (cap > SIZE_MAX / 2) {
      b->oom = true;
      return false;
    }
    cap *= 2;
  }
  char *p = realloc(b->p, cap);
  if (!p) {
    b->oom = true;
    return false;
  }
  b->p = p;
  b->cap = cap;
  return true;
}

void nxvk_sb_put(nxvk_strbuf *b, const char *s, size_t n) {
  if (!sb_reserve(b, n)) return;
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = '\0';
}

void nxvk_sb_str(nxvk_strbuf *b, const char *s) { nxvk_sb_put(b, s, strlen(s)); }

void nxvk_sb_printf(nxvk_strbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int need = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (need < 0) {
    b->oom = true;
    return;
  }
  if (!sb_reserve(b, (size_t)need)) return;
  va_start(ap, fmt);
  vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
  va_end(ap);
  b->len += (size_t)need;
}
