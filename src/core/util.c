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

static const struct {
  const char *name, *alias;
  size_t size;
} dtype_rows[NXVK_NDTYPES] = {
    [NXVK_F32] = {"f32", "float32", 4},
    [NXVK_F64] = {"f64", "float64", 8},
    [NXVK_I32] = {"i32", "int32", 4},
    [NXVK_U8] = {"u8", "uint8", 1},
};

const char *nxvk_dtype_name(nxvk_dtype d) {
  return (unsigned)d < NXVK_NDTYPES ? dtype_rows[d].name : "?";
}

size_t nxvk_dtype_size(nxvk_dtype d) {
  return (unsigned)d < NXVK_NDTYPES ? dtype_rows[d].size : 0;
}

int nxvk_dtype_parse(const char *s, nxvk_dtype *out) {
  for (int d = 0; d < NXVK_NDTYPES; d++) {
    if (strcmp(s, dtype_rows[d].name) == 0 || strcmp(s, dtype_rows[d].alias) == 0) {
      *out = (nxvk_dtype)d;
      return NXVK_OK;
    }
  }
  return nxvk_seterr(NXVK_E_UNSUPPORTED_DTYPE, "unknown dtype '%s' (f32 f64 i32 u8)", s);
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
  case NXVK_F32: return ((const float *)h->data)[i];
  case NXVK_F64: return ((const double *)h->data)[i];
  case NXVK_I32: return ((const int32_t *)h->data)[i];
  case NXVK_U8: return ((const uint8_t *)h->data)[i];
  default: return NAN;
  }
}

void nxvk_host_set(nxvk_host *h, int64_t i, double v) {
  switch (h->dtype) {
  case NXVK_F32: ((float *)h->data)[i] = (float)v; break;
  case NXVK_F64: ((double *)h->data)[i] = v; break;
  case NXVK_I32: ((int32_t *)h->data)[i] = (int32_t)(int64_t)v; break;
  case NXVK_U8: ((uint8_t *)h->data)[i] = (uint8_t)(int64_t)v; break;
  default: break;
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
