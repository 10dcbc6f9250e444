/* json_tensor.c - inline JSON tensors: {"dtype":"f32","shape":[2],"data":[1,"nan"]}.
 *
 * JSON has no NaN, infinity or negative zero, so the strings "nan" "inf"
 * "-inf" "-0" stand for them, both ways. */
#include "../core/internal.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Context for error messages: where in "data" the current value sits. */
typedef struct {
  const char *name;
  nxvk_host *t;
  int64_t next;               /* next element to write */
  int depth;                  /* entries of idx in use */
  int64_t idx[NXVK_MAX_RANK]; /* index path into nested data */
  bool check_only;            /* walk and check the nesting, store nothing */
} fill_ctx;

static const char *where(const fill_ctx *c, char *buf, size_t len) {
  size_t o = (size_t)snprintf(buf, len, "data");
  for (int i = 0; i < c->depth && o < len; i++)
    o += (size_t)snprintf(buf + o, len - o, "[%lld]", (long long)c->idx[i]);
  return buf;
}

static int depth_ok(const char *text, size_t len, const char *name) {
  if (nxvk_json_depth_ok(text, len, NXVK_MAX_JSON_DEPTH)) return NXVK_OK;
  return nxvk_seterr(NXVK_E_TOO_LARGE, "%s: JSON nested deeper than %d levels", name,
                     NXVK_MAX_JSON_DEPTH);
}

static bool ieq(const char *a, const char *b) {
  for (; *a && *b; a++, b++)
    if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return false;
  return *a == *b;
}

/* "nan" "inf" "-inf" "-0" and friends, case-insensitive. */
static bool special_value(const char *s, double *out) {
  double sign = 1;
  const char *p = s;
  if (*p == '+' || *p == '-') sign = *p++ == '-' ? -1 : 1;
  if (ieq(p, "nan"))
    *out = sign < 0 ? -NAN : NAN;
  else if (ieq(p, "inf") || ieq(p, "infinity"))
    *out = sign * INFINITY;
  else if (strcmp(p, "0") == 0)
    *out = sign < 0 ? -0.0 : 0.0;
  else
    return false;
  return true;
}

/* "123" / "-9223372036854775808" for an integer dtype: 1 when the text is
 * not a decimal integer, else stored (0) or an error code (out of range). */
static int exact_int(const char *text, nxvk_dtype dt, fill_ctx *c) {
  const char *p = text;
  bool neg = *p == '-';
  if (neg || *p == '+') p++;
  if (*p < '0' || *p > '9') return 1;
  for (const char *q = p; *q; q++)
    if (*q < '0' || *q > '9') return 1;
  char wb[160], sb[40];
  snprintf(sb, sizeof sb, "%.32s", text);
  errno = 0;
  uint64_t mag = strtoull(p, NULL, 10);
  const nxvk_dtype_info *ti = nxvk_dtype_info_of(dt);
  uint64_t max = ti->cls == NXVK_CLASS_SIGNED ? (UINT64_C(1) << (ti->bits - 1)) - (neg ? 0 : 1)
                 : ti->bits == 64 ? UINT64_MAX : (UINT64_C(1) << ti->bits) - 1;
  if (errno == ERANGE || mag > max || (neg && ti->cls == NXVK_CLASS_UNSIGNED && mag != 0))
    return nxvk_seterr(NXVK_E_BAD_FILE, "%s: %s: \"%s\" is out of range for %s", c->name,
                       where(c, wb, sizeof wb), sb, nxvk_dtype_name(dt));
  if (!c->check_only) nxvk_host_set_int(c->t, c->next++, neg ? (int64_t)(0 - mag) : (int64_t)mag);
  return NXVK_OK;
}

static int put_value(fill_ctx *c, const cJSON *v) {
  char wb[160];
  double d;
  nxvk_dtype dt = c->t->dtype;
  bool is_bool = false;
  int rc;
  if (cJSON_IsNumber(v)) {
    d = v->valuedouble;
  } else if (cJSON_IsString(v) && v->valuestring && nxvk_dtype_is_int(dt) &&
             (rc = exact_int(v->valuestring, dt, c)) != 1) {
    return rc; /* an integer written as a decimal string: exact past 2^53 (i64, u64) */
  } else if (cJSON_IsString(v) && v->valuestring) {
    if (!special_value(v->valuestring, &d)) {
      char sb[40];
      snprintf(sb, sizeof sb, "%.32s", v->valuestring);
      return nxvk_seterr(NXVK_E_BAD_FILE,
                         "%s: %s: string \"%s\" is not a number (nan inf -inf -0 allowed)",
                         c->name, where(c, wb, sizeof wb), sb);
    }
  } else if (cJSON_IsBool(v)) {
    d = cJSON_IsTrue(v) ? 1 : 0;
    is_bool = true;
  } else {
    return nxvk_seterr(NXVK_E_BAD_FILE, "%s: %s: expected a number", c->name,
                       where(c, wb, sizeof wb));
  }
  if (is_bool && dt != NXVK_U8 && dt != NXVK_BOOL)
    return nxvk_seterr(NXVK_E_BAD_FILE, "%s: %s: true/false only allowed for bool and u8, dtype is %s",
                       c->name, where(c, wb, sizeof wb), nxvk_dtype_name(dt));
  if (!nxvk_dtype_is_float(dt)) {
    const nxvk_dtype_info *ti = nxvk_dtype_info_of(dt);
    double lo = 0, hi = 1;
    if (ti->cls == NXVK_CLASS_SIGNED) {
      lo = -ldexp(1, ti->bits - 1);
      hi = ldexp(1, ti->bits - 1) - 1;
    } else if (ti->cls == NXVK_CLASS_UNSIGNED) {
      hi = ldexp(1, ti->bits) - 1;
    }
    /* a JSON number is a double: 64-bit integers past 2^53 only as strings */
    if (ti->bits == 64 && isfinite(d) && fabs(d) >= 9007199254740992.0)
      return nxvk_seterr(NXVK_E_BAD_FILE,
                         "%s: %s: %.17g is 2^53 or more, where a JSON number may have lost digits: "
                         "write it as a string (\"9223372036854775807\")",
                         c->name, where(c, wb, sizeof wb), d);
    if (!isfinite(d) || d != floor(d))
      return nxvk_seterr(NXVK_E_BAD_FILE, "%s: %s: %.17g is not an integer (dtype %s)", c->name,
                         where(c, wb, sizeof wb), d, nxvk_dtype_name(dt));
    if (d < lo || d > hi)
      return nxvk_seterr(NXVK_E_BAD_FILE, "%s: %s: %.17g is out of range for %s", c->name,
                         where(c, wb, sizeof wb), d, nxvk_dtype_name(dt));
  }
  /* count was checked against the data's length before any put_value */
  nxvk_host_set(c->t, c->next++, d);
  return NXVK_OK;
}

static int64_t array_len(const cJSON *a) {
  int64_t n = 0;
  for (const cJSON *e = a->child; e; e = e->next) n++;
  return n;
}

/* Data nested exactly as the shape says, from axis `axis` down. */
static int fill_nested(fill_ctx *c, const cJSON *a, int axis) {
  const nxvk_shape *s = &c->t->shape;
  char wb[160], sb[256];
  if (!cJSON_IsArray(a))
    return nxvk_seterr(NXVK_E_BAD_FILE, "%s: %s: expected a list of %lld values for shape %s",
                       c->name, where(c, wb, sizeof wb), (long long)s->dim[axis],
                       nxvk_shape_str(s, sb, sizeof sb));
  int64_t n = array_len(a);
  if (n != s->dim[axis])
    return nxvk_seterr(NXVK_E_BAD_FILE, "%s: %s has %lld entries, shape %s needs %lld on axis %d",
                       c->name, where(c, wb, sizeof wb), (long long)n,
                       nxvk_shape_str(s, sb, sizeof sb), (long long)s->dim[axis], axis);
  c->depth = axis + 1;
  c->idx[axis] = 0;
  for (const cJSON *e = a->child; e; e = e->next, c->idx[axis]++) {
    int rc;
    if (axis + 1 < s->rank) {
      rc = fill_nested(c, e, axis + 1);
      c->depth = axis + 1;
    } else if (cJSON_IsArray(e) || cJSON_IsObject(e)) {
      c->depth = axis + 1;
      rc = nxvk_seterr(NXVK_E_BAD_FILE, "%s: %s: nested deeper than shape %s", c->name,
                       where(c, wb, sizeof wb), nxvk_shape_str(s, sb, sizeof sb));
    } else {
      rc = c->check_only ? NXVK_OK : put_value(c, e);
    }
    if (rc) return rc;
  }
  return NXVK_OK;
}

static int parse_shape(const cJSON *js, const char *name, nxvk_shape *s) {
  if (!cJSON_IsArray(js))
    return nxvk_seterr(NXVK_E_BAD_FILE, "%s: field \"shape\" must be a list of integers", name);
  s->rank = 0;
  for (const cJSON *e = js->child; e; e = e->next) {
    if (s->rank == NXVK_MAX_RANK)
      return nxvk_seterr(NXVK_E_TOO_LARGE, "%s: shape: rank is over the limit of %d", name,
                         NXVK_MAX_RANK);
    double d = cJSON_IsNumber(e) ? e->valuedouble : NAN;
    if (!(d == floor(d)) || d < 0)
      return nxvk_seterr(NXVK_E_BAD_FILE, "%s: shape[%d] must be an integer >= 0", name, s->rank);
    if (d >= (double)NXVK_MAX_ELEMENTS)
      return nxvk_seterr(NXVK_E_TOO_LARGE, "%s: shape[%d] is over the limit of 2^31-1", name,
                         s->rank);
    s->dim[s->rank++] = (int64_t)d;
  }
  return NXVK_OK;
}

static int with_name(int rc, const char *name) {
  char msg[512];
  snprintf(msg, sizeof msg, "%s", nxvk_errmsg()); /* errmsg is seterr's own buffer */
  return nxvk_seterr(rc, "%s: %s", name, msg);
}

static int from_tree(const cJSON *root, const char *name, nxvk_host *out) {
  if (!cJSON_IsObject(root))
    return nxvk_seterr(NXVK_E_BAD_FILE, "%s: a tensor must be a JSON object", name);
  const cJSON *jd = NULL, *js = NULL, *jv = NULL;
  for (const cJSON *e = root->child; e; e = e->next) {
    const cJSON **slot = NULL;
    if (e->string && strcmp(e->string, "dtype") == 0)
      slot = &jd;
    else if (e->string && strcmp(e->string, "shape") == 0)
      slot = &js;
    else if (e->string && strcmp(e->string, "data") == 0)
      slot = &jv;
    if (!slot) {
      char kb[40];
      snprintf(kb, sizeof kb, "%.32s", e->string ? e->string : "");
      return nxvk_seterr(NXVK_E_BAD_FILE, "%s: unknown field \"%s\" (dtype shape data)", name, kb);
    }
    if (*slot)
      return nxvk_seterr(NXVK_E_BAD_FILE, "%s: field \"%s\" appears twice", name, e->string);
    *slot = e;
  }
  if (!jd) return nxvk_seterr(NXVK_E_BAD_FILE, "%s: missing field \"dtype\"", name);
  if (!jv) return nxvk_seterr(NXVK_E_BAD_FILE, "%s: missing field \"data\"", name);
  if (!cJSON_IsString(jd) || !jd->valuestring)
    return nxvk_seterr(NXVK_E_BAD_FILE, "%s: field \"dtype\" must be a string", name);
  nxvk_dtype dt;
  if (nxvk_dtype_parse(jd->valuestring, &dt) != NXVK_OK) {
    char db[40];
    snprintf(db, sizeof db, "%.32s", jd->valuestring);
    return nxvk_seterr(NXVK_E_UNSUPPORTED_DTYPE, "%s: dtype \"%s\" is not supported (%s)",
                       name, db, nxvk_dtype_names());
  }

  bool is_list = cJSON_IsArray(jv);
  bool flat = true; /* a list whose entries are all scalars */
  if (is_list)
    for (const cJSON *e = jv->child; e; e = e->next)
      if (cJSON_IsArray(e) || cJSON_IsObject(e)) flat = false;
  if (cJSON_IsObject(jv) || cJSON_IsNull(jv))
    return nxvk_seterr(NXVK_E_BAD_FILE, "%s: field \"data\" must be a list or a number", name);

  nxvk_shape shape;
  int rc;
  if (js) {
    rc = parse_shape(js, name, &shape);
    if (rc) return rc;
  } else if (!is_list) {
    shape.rank = 0;
  } else if (flat) {
    shape.rank = 1;
    shape.dim[0] = array_len(jv);
  } else {
    return nxvk_seterr(NXVK_E_BAD_FILE, "%s: field \"shape\" is required when data is nested", name);
  }
  int64_t count;
  rc = nxvk_shape_count(&shape, &count);
  if (rc) return with_name(rc, name);

  char sb[256];
  int64_t have = is_list ? array_len(jv) : 1;
  if (!is_list && count != 1)
    return nxvk_seterr(NXVK_E_BAD_FILE, "%s: data is one number, shape %s needs %lld", name,
                       nxvk_shape_str(&shape, sb, sizeof sb), (long long)count);
  if (flat && have != count)
    return nxvk_seterr(NXVK_E_BAD_FILE, "%s: data has %lld values, shape %s needs %lld", name,
                       (long long)have, nxvk_shape_str(&shape, sb, sizeof sb), (long long)count);
  if (!flat && shape.rank < 2)
    return nxvk_seterr(NXVK_E_BAD_FILE, "%s: data is nested deeper than shape %s", name,
                       nxvk_shape_str(&shape, sb, sizeof sb));

  /* nested data must match shape level by level before anything is sized
   * from shape: a 3-byte "[[1]]" must not allocate what shape claims */
  if (!flat && is_list) {
    nxvk_host shape_only = {.dtype = dt, .shape = shape};
    fill_ctx chk = {.name = name, .t = &shape_only, .check_only = true};
    rc = fill_nested(&chk, jv, 0);
    if (rc) return rc;
  }
  rc = nxvk_host_alloc(out, dt, &shape);
  if (rc) return with_name(rc, name);
  fill_ctx c = {.name = name, .t = out};
  if (!is_list) {
    rc = put_value(&c, jv);
  } else if (flat) {
    c.depth = 1;
    for (const cJSON *e = jv->child; e && !rc; e = e->next, c.idx[0]++) rc = put_value(&c, e);
  } else {
    rc = fill_nested(&c, jv, 0);
  }
  if (rc) nxvk_host_free(out);
  return rc;
}

int nxvk_json_tensor_parse(const char *text, size_t len, const char *name, nxvk_host *out) {
  if (!name) name = "inline tensor";
  if (!out) return nxvk_seterr(NXVK_E_BAD_REQUEST, "%s: no output tensor", name);
  memset(out, 0, sizeof *out);
  if (!text) return nxvk_seterr(NXVK_E_BAD_REQUEST, "%s: no text", name);
  /* JSON text cannot hold a raw NUL: stop there, so a len that counts the
   * terminator is fine */
  const char *nul = memchr(text, '\0', len);
  if (nul) len = (size_t)(nul - text);
  int rc = depth_ok(text, len, name);
  if (rc) return rc;
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
  if (!root) {
    size_t off = end && end >= text && end <= text + len ? (size_t)(end - text) : 0;
    return nxvk_seterr(NXVK_E_BAD_FILE, "%s: invalid JSON at byte %zu", name, off);
  }
  /* cJSON stops after the first value; anything but whitespace after it is
   * an error, not something to ignore */
  for (const char *p = end; p && p < text + len; p++)
    if (!isspace((unsigned char)*p)) {
      cJSON_Delete(root);
      return nxvk_seterr(NXVK_E_BAD_FILE, "%s: unexpected text after the JSON value at byte %zu",
                         name, (size_t)(p - text));
    }
  rc = from_tree(root, name, out);
  cJSON_Delete(root);
  return rc;
}

/* ------------------------------------------------------------------ format */

/* text goes into an nxvk_strbuf (util.c) */

static void put_number(nxvk_strbuf *b, const nxvk_host *t, int64_t i) {
  char nb[40];
  double v = nxvk_host_get(t, i);
  if (t->dtype == NXVK_U64)
    snprintf(nb, sizeof nb, "%llu", (unsigned long long)nxvk_host_get_int(t, i));
  else if (!nxvk_dtype_is_float(t->dtype))
    snprintf(nb, sizeof nb, "%lld", (long long)nxvk_host_get_int(t, i));
  else if (isnan(v))
    snprintf(nb, sizeof nb, "\"nan\"");
  else if (isinf(v))
    snprintf(nb, sizeof nb, v < 0 ? "\"-inf\"" : "\"inf\"");
  else if (v == 0 && signbit(v))
    snprintf(nb, sizeof nb, "\"-0\"");
  else /* enough digits to round-trip the dtype */
    snprintf(nb, sizeof nb, t->dtype == NXVK_F64 ? "%.17g" : t->dtype == NXVK_F32 ? "%.9g" : "%.5g", v);
  nxvk_sb_str(b, nb);
}

/* edge > 0: an axis longer than 2 * edge shows its first and last edge
 * entries around "..." (numpy's summary; not JSON). */
static void put_nested(nxvk_strbuf *b, const nxvk_host *t, int axis, int64_t base, int64_t edge) {
  if (axis == t->shape.rank) {
    put_number(b, t, base);
    return;
  }
  nxvk_sb_str(b, "[");
  int64_t n = t->shape.dim[axis];
  for (int64_t j = 0; j < n; j++) {
    if (edge > 0 && n > 2 * edge && j == edge) {
      nxvk_sb_str(b, ",...");
      j = n - edge - 1;
      continue;
    }
    if (j) nxvk_sb_str(b, ",");
    put_nested(b, t, axis + 1, base * t->shape.dim[axis] + j, edge);
  }
  nxvk_sb_str(b, "]");
}

static int format(const nxvk_host *t, int64_t edge, char **out);

int nxvk_json_tensor_format(const nxvk_host *t, char **out) { return format(t, 0, out); }

int nxvk_json_tensor_summary(const nxvk_host *t, int edge, char **out) {
  return format(t, edge > 0 ? edge : 3, out);
}

static int format(const nxvk_host *t, int64_t edge, char **out) {
  if (!out) return nxvk_seterr(NXVK_E_BAD_REQUEST, "json format: no output");
  *out = NULL;
  if (!t) return nxvk_seterr(NXVK_E_BAD_REQUEST, "json format: no tensor");
  if ((unsigned)t->dtype >= NXVK_NDTYPES)
    return nxvk_seterr(NXVK_E_UNSUPPORTED_DTYPE, "json format: bad dtype %d", (int)t->dtype);
  int64_t count;
  int rc = nxvk_shape_count(&t->shape, &count);
  if (rc) return rc;
  if (count > 0 && !t->data) return nxvk_seterr(NXVK_E_BAD_REQUEST, "json format: tensor has no data");

  /* An empty tensor is written nested only while the lists before its first
   * zero axis stay few; shape [huge, 0] becomes a flat []. */
  bool nested = true;
  if (count == 0) {
    int64_t lists = 1;
    for (int i = 0; i < t->shape.rank && t->shape.dim[i] != 0; i++)
      if (!nxvk_mul_ok(lists, t->shape.dim[i], &lists) || lists > (1 << 20)) nested = false;
  }

  nxvk_strbuf b = {0};
  char sh[256];
  nxvk_sb_str(&b, "{\"dtype\":\"");
  nxvk_sb_str(&b, nxvk_dtype_name(t->dtype));
  nxvk_sb_str(&b, "\",\"shape\":");
  nxvk_sb_str(&b, nxvk_shape_str(&t->shape, sh, sizeof sh));
  nxvk_sb_str(&b, ",\"data\":");
  if (nested)
    put_nested(&b, t, 0, 0, edge);
  else
    nxvk_sb_str(&b, "[]");
  nxvk_sb_str(&b, "}");
  if (b.oom) {
    free(b.p);
    return nxvk_seterr(NXVK_E_NO_MEMORY, "json format: out of memory");
  }
  *out = b.p;
  return NXVK_OK;
}
