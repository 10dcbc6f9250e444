/*
 * attrs.c - op attributes from JSON.  Every key an op accepts is declared in
 * its table row (NXVK_ATTR_*), so unknown keys are errors naming the key.
 */
#include "attrs.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ops.h"

static const struct {
  const char *key;
  unsigned bit;
} keys[] = {
    {"axes", NXVK_ATTR_AXES},     {"keep_axes", NXVK_ATTR_KEEP_AXES}, {"perm", NXVK_ATTR_PERM},
    {"start", NXVK_ATTR_SLICE},   {"length", NXVK_ATTR_SLICE},        {"stride", NXVK_ATTR_SLICE},
    {"axis", NXVK_ATTR_AXIS},     {"shape", NXVK_ATTR_SHAPE},         {"dtype", NXVK_ATTR_DTYPE},
    {"seed", NXVK_ATTR_SEED},     {"variant", NXVK_ATTR_VARIANT},
    {"reverse", NXVK_ATTR_REVERSE}, {"direction", NXVK_ATTR_DIRECTION}, {"k", NXVK_ATTR_K},
    {"window_dimensions", NXVK_ATTR_WINDOW}, {"strides", NXVK_ATTR_WINDOW},
    {"padding", NXVK_ATTR_WINDOW}, {"window_dilations", NXVK_ATTR_WINDOW},
    {"strides", NXVK_ATTR_CONV},  {"padding", NXVK_ATTR_CONV},        {"input_dilation", NXVK_ATTR_CONV},
    {"kernel_dilation", NXVK_ATTR_CONV},    {"feature_group_size", NXVK_ATTR_CONV},
    {"batch_group_size", NXVK_ATTR_CONV},   {"input_permutation", NXVK_ATTR_CONV},
    {"kernel_permutation", NXVK_ATTR_CONV}, {"output_permutation", NXVK_ATTR_CONV},
    {"left_side", NXVK_ATTR_TRIANGULAR},    {"lower", NXVK_ATTR_TRIANGULAR},
    {"transform_a", NXVK_ATTR_TRIANGULAR},
    {"low", NXVK_ATTR_PAD},       {"high", NXVK_ATTR_PAD},            {"interior", NXVK_ATTR_PAD},
    {"tie_break", NXVK_ATTR_TIE_BREAK},
};

static int bad(const nxvk_op_desc *op, const char *key, const char *why) {
  return nxvk_seterr(NXVK_E_BAD_ATTR, "%s: attribute \"%s\": %s", op->name, key, why);
}

static int get_int(const cJSON *v, int64_t lo, int64_t hi, int64_t *out) {
  if (!cJSON_IsNumber(v)) return -1;
  double d = v->valuedouble;
  if (!isfinite(d) || d != floor(d) || d < (double)lo || d > (double)hi) return -1;
  *out = (int64_t)d;
  return 0;
}

static int int_list(const nxvk_op_desc *op, const cJSON *v, const char *key, int64_t lo,
                    int64_t hi, int64_t *vals, int *n) {
  if (!cJSON_IsArray(v)) return bad(op, key, "must be a list of integers");
  int count = cJSON_GetArraySize(v);
  if (count > NXVK_MAX_RANK) return bad(op, key, "more entries than the maximum rank (8)");
  int i = 0;
  for (const cJSON *e = v->child; e; e = e->next, i++)
    if (get_int(e, lo, hi, &vals[i])) return bad(op, key, "entries must be integers in range");
  *n = count;
  return NXVK_OK;
}

/* The ordering ops' attributes (sort, scans, windows). */
static int order_attr(const nxvk_op_desc *op, const char *key, const cJSON *v, nxvk_attrs *out) {
  int64_t x;
  if (strcmp(key, "reverse") == 0) {
    if (!cJSON_IsBool(v)) return bad(op, key, "must be true or false");
    out->reverse = cJSON_IsTrue(v);
  } else if (strcmp(key, "direction") == 0) {
    if (!cJSON_IsString(v) || (strcmp(v->valuestring, "asc") && strcmp(v->valuestring, "desc")))
      return bad(op, key, "must be \"asc\" or \"desc\"");
    out->descending = strcmp(v->valuestring, "desc") == 0;
  } else if (strcmp(key, "k") == 0) {
    if (get_int(v, 1, INT32_MAX, &x)) return bad(op, key, "must be an integer 1..2^31-1");
    out->k = x;
  } else if (strcmp(key, "window_dimensions") == 0) {
    return int_list(op, v, key, 1, INT32_MAX, out->window, &out->nwin);
  } else if (strcmp(key, "strides") == 0) {
    return int_list(op, v, key, 1, INT32_MAX, out->wstrides, &out->nwstrides);
  } else if (strcmp(key, "window_dilations") == 0) {
    return int_list(op, v, key, 1, INT32_MAX, out->wdil, &out->nwdil);
  } else { /* padding: "valid", "same" or [[lo, hi], ...] (negative allowed) */
    if (cJSON_IsString(v)) {
      if (strcmp(v->valuestring, "valid") == 0) out->wpad_mode = 0;
      else if (strcmp(v->valuestring, "same") == 0) out->wpad_mode = 1;
      else return bad(op, key, "must be \"valid\", \"same\" or a list of [low, high] pairs");
      return NXVK_OK;
    }
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) > NXVK_MAX_RANK)
      return bad(op, key, "must be \"valid\", \"same\" or a list of [low, high] pairs");
    int i = 0;
    for (const cJSON *e = v->child; e; e = e->next, i++) {
      if (!cJSON_IsArray(e) || cJSON_GetArraySize(e) != 2 ||
          get_int(e->child, -INT32_MAX, INT32_MAX, &out->wpad_lo[i]) ||
          get_int(e->child->next, -INT32_MAX, INT32_MAX, &out->wpad_hi[i]))
        return bad(op, key, "each entry must be a pair [low, high] of integers");
    }
    out->npad = i;
    out->wpad_mode = 2;
  }
  return NXVK_OK;
}

/* conv's "padding": "valid", "same" or [[lo, hi], ...] (negative crops) */
static int conv_padding(const nxvk_op_desc *op, const cJSON *v, nxvk_conv_attrs *c) {
  const char *key = "padding";
  if (cJSON_IsString(v)) {
    if (strcmp(v->valuestring, "valid") == 0) c->pad_mode = NXVK_PAD_VALID;
    else if (strcmp(v->valuestring, "same") == 0) c->pad_mode = NXVK_PAD_SAME;
    else return bad(op, key, "must be \"valid\", \"same\" or a list of [low, high] pairs");
    return NXVK_OK;
  }
  if (!cJSON_IsArray(v)) return bad(op, key, "must be \"valid\", \"same\" or a list of [low, high] pairs");
  if (cJSON_GetArraySize(v) > NXVK_MAX_RANK) return bad(op, key, "more pairs than the maximum rank (8)");
  int i = 0;
  for (const cJSON *e = v->child; e; e = e->next, i++) {
    int64_t lo, hi;
    if (!cJSON_IsArray(e) || cJSON_GetArraySize(e) != 2 || get_int(e->child, -INT32_MAX, INT32_MAX, &lo) ||
        get_int(e->child->next, -INT32_MAX, INT32_MAX, &hi))
      return bad(op, key, "each entry must be a pair [low, high] of integers");
    c->pad_lo[i] = lo;
    c->pad_hi[i] = hi;
  }
  c->npad = i;
  c->pad_mode = NXVK_PAD_EXPLICIT;
  return NXVK_OK;
}

static int conv_attr(const nxvk_op_desc *op, const cJSON *v, const char *key, nxvk_conv_attrs *c) {
  int64_t vals[NXVK_MAX_RANK], x;
  int n = 0, rc;
  if (strcmp(key, "padding") == 0) return conv_padding(op, v, c);
  if (strcmp(key, "feature_group_size") == 0 || strcmp(key, "batch_group_size") == 0) {
    if (get_int(v, 1, INT32_MAX, &x)) return bad(op, key, "must be a positive integer");
    *(key[0] == 'f' ? &c->feature_groups : &c->batch_groups) = x;
    return NXVK_OK;
  }
  bool perm = strstr(key, "permutation") != NULL;
  rc = int_list(op, v, key, perm ? 0 : 1, perm ? NXVK_MAX_RANK - 1 : INT32_MAX, vals, &n);
  if (rc) return rc;
  if (n == 0) return bad(op, key, "must not be empty");
  int *p = strcmp(key, "input_permutation") == 0    ? c->perm_in
           : strcmp(key, "kernel_permutation") == 0 ? c->perm_kernel
                                                     : c->perm_out;
  int *np = p == c->perm_in ? &c->nperm_in : p == c->perm_kernel ? &c->nperm_kernel : &c->nperm_out;
  int64_t *l = strcmp(key, "strides") == 0 ? c->strides : strcmp(key, "input_dilation") == 0 ? c->idil : c->kdil;
  int *nl = l == c->strides ? &c->nstrides : l == c->idil ? &c->nidil : &c->nkdil;
  if (perm) {
    unsigned seen = 0;
    for (int i = 0; i < n; i++) {
      if (seen >> vals[i] & 1) return bad(op, key, "must be a permutation (an axis repeats)");
      seen |= 1u << vals[i];
      p[i] = (int)vals[i];
    }
    *np = n;
  } else {
    for (int i = 0; i < n; i++) l[i] = vals[i];
    *nl = n;
  }
  return NXVK_OK;
}

int nxvk_attrs_from_cjson(const nxvk_op_desc *op, const cJSON *obj, nxvk_attrs *out) {
  memset(out, 0, sizeof *out);
  if (!obj || cJSON_IsNull(obj)) return NXVK_OK;
  if (!cJSON_IsObject(obj))
    return nxvk_seterr(NXVK_E_BAD_ATTR, "%s: attributes must be a JSON object", op->name);
  bool have_start = false, have_length = false, have_stride = false;
  int nstart = 0, nlength = 0, nstride = 0, nlow = -1, nhigh = -1, ninterior = -1;
  for (const cJSON *v = obj->child; v; v = v->next) {
    const char *key = v->string;
    unsigned bit = 0;
    /* a key two groups share (conv's and the windows' "strides") means the
     * group this op accepts */
    for (size_t i = 0; i < NXVK_ARRAY_LEN(keys); i++)
      if (strcmp(key, keys[i].key) == 0 && (!bit || (op->attrs & keys[i].bit))) bit = keys[i].bit;
    if (!bit || !(op->attrs & bit)) {
      char accepted[256] = "";
      for (size_t i = 0; i < NXVK_ARRAY_LEN(keys); i++)
        if (op->attrs & keys[i].bit) {
          strncat(accepted, " ", sizeof accepted - strlen(accepted) - 1);
          strncat(accepted, keys[i].key, sizeof accepted - strlen(accepted) - 1);
        }
      return nxvk_seterr(NXVK_E_BAD_ATTR, "%s: unknown attribute \"%s\" (accepted:%s)", op->name,
                         key, accepted[0] ? accepted : " none");
    }
    int64_t vals[NXVK_MAX_RANK], x;
    int n = 0, rc = NXVK_OK;
    out->set |= bit;
    if (bit == NXVK_ATTR_WINDOW || bit == NXVK_ATTR_REVERSE || bit == NXVK_ATTR_DIRECTION ||
        bit == NXVK_ATTR_K) {
      rc = order_attr(op, key, v, out);
    } else if (strcmp(key, "axes") == 0) {
      rc = int_list(op, v, key, -NXVK_MAX_RANK, NXVK_MAX_RANK - 1, vals, &n);
      out->naxes = n;
      for (int i = 0; i < n; i++) out->axes[i] = (int)vals[i];
    } else if (strcmp(key, "perm") == 0) {
      rc = int_list(op, v, key, -NXVK_MAX_RANK, NXVK_MAX_RANK - 1, vals, &n);
      out->nperm = n;
      for (int i = 0; i < n; i++) out->perm[i] = (int)vals[i];
    } else if (strcmp(key, "start") == 0) {
      rc = int_list(op, v, key, 0, INT32_MAX, out->start, &nstart);
      have_start = true;
    } else if (strcmp(key, "length") == 0) {
      rc = int_list(op, v, key, 0, INT32_MAX, out->length, &nlength);
      have_length = true;
    } else if (strcmp(key, "stride") == 0) {
      rc = int_list(op, v, key, 1, INT32_MAX, out->stride, &nstride);
      have_stride = true;
    } else if (strcmp(key, "low") == 0) {
      rc = int_list(op, v, key, -INT32_MAX, INT32_MAX, out->low, &nlow);
    } else if (strcmp(key, "high") == 0) {
      rc = int_list(op, v, key, -INT32_MAX, INT32_MAX, out->high, &nhigh);
    } else if (strcmp(key, "interior") == 0) {
      rc = int_list(op, v, key, 0, INT32_MAX, out->interior, &ninterior);
    } else if (strcmp(key, "shape") == 0) {
      rc = int_list(op, v, key, -1, INT32_MAX, out->shape.dim, &out->shape.rank);
    } else if (strcmp(key, "keep_axes") == 0) {
      if (!cJSON_IsBool(v)) return bad(op, key, "must be true or false");
      out->keep_axes = cJSON_IsTrue(v);
    } else if (strcmp(key, "axis") == 0) {
      if (get_int(v, -NXVK_MAX_RANK, NXVK_MAX_RANK - 1, &x)) return bad(op, key, "must be an integer axis");
      out->axis = (int)x;
    } else if (strcmp(key, "dtype") == 0) {
      if (!cJSON_IsString(v) || nxvk_dtype_parse(v->valuestring, &out->dtype))
        return bad(op, key,
                   "must be a dtype name: \"f16\" \"bf16\" \"f32\" \"f64\" \"i8\" \"i16\" \"i32\" \"i64\" "
                   "\"u8\" \"u16\" \"u32\" \"u64\" \"bool\"");
    } else if (strcmp(key, "variant") == 0) {
      if (!cJSON_IsString(v) || strlen(v->valuestring) >= sizeof out->variant)
        return bad(op, key, "must be a variant name");
      snprintf(out->variant, sizeof out->variant, "%s", v->valuestring);
    } else if (bit == NXVK_ATTR_CONV) {
      rc = conv_attr(op, v, key, &out->conv);
    } else if (strcmp(key, "left_side") == 0 || strcmp(key, "lower") == 0) {
      if (!cJSON_IsBool(v)) return bad(op, key, "must be true or false");
      *(key[1] == 'e' ? &out->right_side : &out->upper) = !cJSON_IsTrue(v);
    } else if (strcmp(key, "transform_a") == 0) {
      if (!cJSON_IsString(v) || (strcmp(v->valuestring, "none") && strcmp(v->valuestring, "transpose")))
        return bad(op, key, "must be \"none\" or \"transpose\"");
      out->transpose_a = strcmp(v->valuestring, "transpose") == 0;
    } else if (strcmp(key, "tie_break") == 0) {
      bool lo = cJSON_IsString(v) && strcmp(v->valuestring, "low") == 0;
      out->tie_high = cJSON_IsString(v) && strcmp(v->valuestring, "high") == 0;
      if (!lo && !out->tie_high) return bad(op, key, "must be \"low\" or \"high\"");
    } else if (strcmp(key, "seed") == 0) {
      /* JSON numbers are doubles: exact up to 2^53; larger seeds as strings */
      if (cJSON_IsString(v)) {
        char *end;
        errno = 0;
        /* digits only: strtoull alone would take " -1" as 2^64-1 and "+5" as 5 */
        const char *d = v->valuestring;
        bool digits = *d != '\0';
        for (const char *q = d; *q; q++) digits &= *q >= '0' && *q <= '9';
        unsigned long long s = digits ? strtoull(d, &end, 10) : 0;
        if (!digits || *end || errno)
          return bad(op, key, "must be an integer 0..2^64-1 (decimal digits only)");
        out->seed = s;
      } else {
        if (get_int(v, 0, (int64_t)1 << 53, &x)) return bad(op, key, "must be an integer 0..2^53 (larger as a string)");
        out->seed = (uint64_t)x;
      }
    }
    if (rc) return rc;
  }
  if (out->set & NXVK_ATTR_PAD) {
    /* low and high go together; interior defaults to zeros */
    if (nlow < 0 || nhigh < 0)
      return nxvk_seterr(NXVK_E_BAD_ATTR, "%s: \"low\" and \"high\" go together", op->name);
    if (nlow != nhigh || (ninterior >= 0 && ninterior != nlow))
      return nxvk_seterr(NXVK_E_BAD_ATTR, "%s: low, high and interior differ in length", op->name);
    out->nlow = nlow;
  }
  if ((out->set & NXVK_ATTR_SLICE) && op->kind == NXVK_KIND_INDEX) {
    /* dynamic_slice: the start indices are an operand */
    if (have_start)
      return nxvk_seterr(NXVK_E_BAD_ATTR, "%s: attribute \"start\": the start indices are input 2",
                         op->name);
    if (!have_length)
      return nxvk_seterr(NXVK_E_BAD_ATTR, "%s: attribute \"length\" is required", op->name);
    if (have_stride && nstride != nlength)
      return nxvk_seterr(NXVK_E_BAD_ATTR, "%s: length and stride differ in length", op->name);
    out->nslice = nlength;
    if (!have_stride)
      for (int i = 0; i < nlength; i++) out->stride[i] = 1;
  } else if (out->set & NXVK_ATTR_SLICE) {
    if (!have_start || !have_length)
      return nxvk_seterr(NXVK_E_BAD_ATTR, "%s: \"start\" and \"length\" go together", op->name);
    if (nstart != nlength || (have_stride && nstride != nstart))
      return nxvk_seterr(NXVK_E_BAD_ATTR, "%s: start, length and stride differ in length",
                         op->name);
    out->nslice = nstart;
    if (!have_stride)
      for (int i = 0; i < nstart; i++) out->stride[i] = 1;
  }
  return NXVK_OK;
}

int nxvk_attrs_parse(const nxvk_op_desc *op, const char *json, nxvk_attrs *out) {
  memset(out, 0, sizeof *out);
  if (!json || !*json) return NXVK_OK;
  /* the whole text is one JSON value: '{"axes":[0]} trailing' is refused */
  const char *end = NULL;
  if (!nxvk_json_depth_ok(json, strlen(json), NXVK_MAX_JSON_DEPTH))
    return nxvk_seterr(NXVK_E_BAD_ATTR, "%s: --attrs nests deeper than %d levels", op->name, NXVK_MAX_JSON_DEPTH);
  cJSON *obj = cJSON_ParseWithOpts(json, &end, true);
  if (!obj && end && *end) {
    const char *p = end;
    bool only_trailing = false;
    cJSON *head = cJSON_ParseWithOpts(json, &p, false); /* valid up to where? */
    if (head) only_trailing = true;
    cJSON_Delete(head);
    if (only_trailing)
      return nxvk_seterr(NXVK_E_BAD_ATTR, "%s: --attrs: text after the JSON object: '%.20s'", op->name, p);
  }
  if (!obj) return nxvk_seterr(NXVK_E_BAD_ATTR, "%s: --attrs is not valid JSON", op->name);
  int rc = nxvk_attrs_from_cjson(op, obj, out);
  cJSON_Delete(obj);
  return rc;
}
