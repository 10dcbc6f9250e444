/*
 * limits.c - error limits (conformance/limits.json, embedded at build time)
 * and the comparison of a GPU result with its reference under them.  `run
 * --check`, conformance and the tests all compare through here.
 */
#include <cjson/cJSON.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "ops.h"

extern const char nxvk_limits_json[];

static pthread_once_t limits_once = PTHREAD_ONCE_INIT;
static cJSON *limits_root;   /* parsed once, kept for the process */

static void limits_load(void) { limits_root = cJSON_Parse(nxvk_limits_json); }

static double num(const cJSON *o, const char *key, double dflt) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

int nxvk_op_limit(const nxvk_op_desc *op, nxvk_dtype d, nxvk_limit *out) {
  memset(out, 0, sizeof *out);
  pthread_once(&limits_once, limits_load);
  const cJSON *ops = cJSON_GetObjectItemCaseSensitive(limits_root, "ops");
  const cJSON *row = cJSON_GetObjectItemCaseSensitive(ops, op->name);
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(row, nxvk_dtype_name(d));
  if (!e) e = cJSON_GetObjectItemCaseSensitive(row, "*");
  if (!e && row && !nxvk_dtype_is_float(d)) {
    /* integer and bool results are exact wherever an op takes them */
    out->exact = true;
    snprintf(out->text, sizeof out->text, "exact");
    return NXVK_OK;
  }
  if (!e && row && (d == NXVK_F16 || d == NXVK_BF16)) {
    /* computed in f32 and rounded once: an f32 result within its limit
     * (a few f32 ulps, 2^-13 of an f16 ulp) rounds to within 1 ulp of the
     * reference's, which is the exact result rounded to f32 then to d;
     * exact f32 ops stay exact */
    int rc = nxvk_op_limit(op, NXVK_F32, out);
    if (rc || out->exact || out->sum_factor > 0) return rc;
    double scale = ldexp(1, d == NXVK_F16 ? -13 : -16);
    out->ulps = 1 + out->ulps * scale;
    out->ulps_per_arg *= scale;
    out->ulps_per_y *= scale;
    if (out->abs > 0)
      snprintf(out->text, sizeof out->text, "abs %g in [%g,%g] + 1 ulp (f32's, rounded to %s)", out->abs,
               out->lo, out->hi, nxvk_dtype_name(d));
    else
      snprintf(out->text, sizeof out->text, "1 ulp (f32's limit, rounded to %s)", nxvk_dtype_name(d));
    return NXVK_OK;
  }
  if (!e)
    return nxvk_seterr(NXVK_E_UNSUPPORTED, "no error limit recorded for %s %s", op->name,
                       nxvk_dtype_name(d));
  if (cJSON_IsString(e) && strcmp(e->valuestring, "exact") == 0) {
    out->exact = true;
    snprintf(out->text, sizeof out->text, "exact");
    return NXVK_OK;
  }
  out->ulps = num(e, "ulp", 0);
  out->ulps_per_arg = num(e, "ulp_per_arg", 0);
  out->ulps_per_y = num(e, "ulp_per_y", 0);
  out->abs = num(e, "abs", 0);
  out->lo = num(e, "lo", -INFINITY);
  out->hi = num(e, "hi", INFINITY);
  out->sum_factor = num(e, "sum_factor", 0);
  out->norm_factor = num(e, "norm_factor", 0);
  const cJSON *yr = cJSON_GetObjectItemCaseSensitive(e, "abs_y_range");
  if (cJSON_GetArraySize(yr) == 2) {
    out->y_abs_lo = cJSON_GetArrayItem(yr, 0)->valuedouble;
    out->y_abs_hi = cJSON_GetArrayItem(yr, 1)->valuedouble;
  }
  const cJSON *arg = cJSON_GetObjectItemCaseSensitive(e, "arg");
  out->arg_pow = cJSON_IsString(arg) && strcmp(arg->valuestring, "y*log2(x)") == 0;
  const cJSON *outside = cJSON_GetObjectItemCaseSensitive(e, "outside");
  out->outside_unbounded = cJSON_IsString(outside) && strcmp(outside->valuestring, "unbounded") == 0;
  if (out->sum_factor > 0)
    snprintf(out->text, sizeof out->text, "%g*n*eps*sum|x|", out->sum_factor);
  else if (out->norm_factor > 0)
    snprintf(out->text, sizeof out->text, "%g*n*eps*max|ref| per matrix", out->norm_factor);
  else if (out->abs > 0 && isfinite(out->lo))
    snprintf(out->text, sizeof out->text, "abs %g in [%g,%g], %s outside", out->abs, out->lo,
             out->hi, out->outside_unbounded ? "unbounded" : "ulp");
  else if (out->abs > 0)
    snprintf(out->text, sizeof out->text, "abs %g", out->abs);
  else if (out->arg_pow)
    snprintf(out->text, sizeof out->text, "%g+%g|y*log2 x|+%g|y| ulp", out->ulps,
             out->ulps_per_arg, out->ulps_per_y);
  else if (out->ulps_per_arg > 0)
    snprintf(out->text, sizeof out->text, "%g+%g|x| ulp", out->ulps, out->ulps_per_arg);
  else if (out->y_abs_hi > 0)
    snprintf(out->text, sizeof out->text, "%g ulp for |y| in [%g,%g]", out->ulps, out->y_abs_lo,
             out->y_abs_hi);
  else
    snprintf(out->text, sizeof out->text, "%g ulp", out->ulps);
  return NXVK_OK;
}

/* significant bits and the smallest normal exponent of a float dtype */
static int mant_bits(nxvk_dtype d) {
  return d == NXVK_F16 ? 11 : d == NXVK_BF16 ? 8 : d == NXVK_F32 ? 24 : 53;
}
static int min_exp(nxvk_dtype d) { return d == NXVK_F16 ? -14 : d == NXVK_F64 ? -1022 : -126; }

double nxvk_ulp(nxvk_dtype d, double x) {
  int e;
  x = fabs(x);
  if (!isfinite(x)) x = d == NXVK_F64 ? DBL_MAX : d == NXVK_F32 ? FLT_MAX : d == NXVK_F16 ? 65504.0 : ldexp(255.0, 120);
  if (d != NXVK_F64) {
    int p = mant_bits(d), emin = min_exp(d);
    if (x < ldexp(1.0, emin)) return ldexp(1.0, emin - p + 1);
    frexp(x, &e);
    return ldexp(1.0, e - p);
  }
  if (x < DBL_MIN) return ldexp(1.0, -1074);
  frexp(x, &e);
  return ldexp(1.0, e - 53);
}

double nxvk_ulp_diff(nxvk_dtype d, double got, double ref) {
  if (isnan(got) || isnan(ref)) return isnan(got) && isnan(ref) ? 0 : INFINITY;
  if (isinf(got) || isinf(ref)) return got == ref ? 0 : INFINITY;
  if (got == 0 && ref == 0 && signbit(got) != signbit(ref)) return INFINITY;
  if (got == ref) return 0;
  if (!nxvk_dtype_is_float(d)) return INFINITY; /* integers: exact only */
  return fabs(got - ref) / nxvk_ulp(d, ref);
}

static bool is_denormal(nxvk_dtype d, double x) {
  double lim = ldexp(1.0, min_exp(d));
  return x != 0 && fabs(x) < lim;
}

/* Number of terms each output sums: what n*eps*sum|x| multiplies. */
static int64_t terms_per_output(const nxvk_op_desc *op, const nxvk_attrs *a, const nxvk_host *in,
                                const nxvk_host *out) {
  if (op->kind == NXVK_KIND_DOT) return in[0].shape.dim[in[0].shape.rank - 1];
  /* a scan's prefix sums up to the whole axis; a window its elements */
  nxvk_attrs none = {0};
  if (!a) a = &none;
  if (op->kind == NXVK_KIND_SCAN) {
    int ax = a->axis < 0 ? a->axis + in[0].shape.rank : a->axis;
    return ax >= 0 && ax < in[0].shape.rank ? in[0].shape.dim[ax] : 1;
  }
  if (op->kind == NXVK_KIND_WINDOW) {
    int64_t w = 1;
    for (int d = 0; d < a->nwin; d++) w *= a->window[d];
    return w;
  }
  if (op->kind == NXVK_KIND_CONV) { /* I x the kernel's spatial size: the kernel's count over O */
    const nxvk_shape *ks = &in[1].shape;
    int o_axis = a->conv.nperm_kernel ? a->conv.perm_kernel[0] : 0;
    int64_t O = o_axis < ks->rank ? ks->dim[o_axis] : 0;
    return O ? nxvk_host_count(&in[1]) / O : 0;
  }
  int64_t no = nxvk_host_count(out), ni = nxvk_host_count(&in[0]);
  return no ? ni / no : 0;
}

void nxvk_cmp_note(nxvk_cmp *c, int64_t i, double g, double r, double u, bool ok, bool fl,
                   double *worst_u) {
  if (fl && isfinite(g) && isfinite(r)) {
    if (fabs(g - r) > c->max_abs) c->max_abs = fabs(g - r);
    if (isfinite(u) && u > c->max_ulp) c->max_ulp = u;
  }
  if (!ok) {
    if (c->bad++ == 0) { /* report the first failure */
      c->worst = i;
      c->worst_got = g;
      c->worst_ref = r;
    }
  } else if (c->bad == 0 && isfinite(u) && u > *worst_u) {
    *worst_u = u;
    c->worst = i;
    c->worst_got = g;
    c->worst_ref = r;
  }
}

/* Input k's element that output element i of an elementwise op reads. */
static double operand_at(const nxvk_host *in, int k, const nxvk_shape *out, int64_t i) {
  int64_t idx[NXVK_MAX_RANK] = {0}, rest = i, st[NXVK_MAX_RANK], off = 0;
  for (int d = out->rank - 1; d >= 0; d--) {
    idx[d] = rest % out->dim[d];
    rest /= out->dim[d];
  }
  nxvk_broadcast_strides(&in[k].shape, out, st);
  for (int d = 0; d < out->rank; d++) off += idx[d] * st[d];
  return nxvk_host_get(&in[k], off);
}

/* alts: references on inputs with denormals flushed (any subset), accepted
 * where the device may flush (may_flush), with a flushed result. */
static int compare_impl(const nxvk_op_desc *op, const nxvk_attrs *a, const nxvk_host *in, int nin,
                        const nxvk_host *got, const nxvk_host *ref, const nxvk_host *alts,
                        int nalts, bool may_flush, nxvk_cmp *c) {
  memset(c, 0, sizeof *c);
  c->worst = -1;
  if (got->dtype != ref->dtype || !nxvk_shape_equal(&got->shape, &ref->shape))
    return nxvk_seterr(NXVK_E_MISMATCH, "%s: result dtype or shape differs from the reference",
                       op->name);
  nxvk_dtype d = ref->dtype;
  /* the limit is the op's for its input dtype (comparisons are exact anyway) */
  nxvk_dtype limit_dt = nin > 0 ? in[nin - 1].dtype : d;
  nxvk_limit lim;
  int rc = nxvk_op_limit(op, limit_dt, &lim);
  if (rc) return rc;
  bool fl = nxvk_dtype_is_float(d);
  if (!fl) lim.exact = true;
  bool float_in = false;
  for (int k = 0; k < nin; k++) float_in |= nxvk_dtype_is_float(in[k].dtype);

  /* reductions and dot: the reference on |inputs| scales the bound */
  nxvk_host scale = {0};
  int64_t terms = 0;
  if (lim.sum_factor > 0 && !lim.exact) {
    nxvk_host absin[NXVK_MAX_INPUTS];
    int k;
    for (k = 0; k < nin && rc == NXVK_OK; k++) {
      rc = nxvk_host_alloc(&absin[k], in[k].dtype, &in[k].shape);
      for (int64_t i = 0; rc == NXVK_OK && i < nxvk_host_count(&in[k]); i++)
        nxvk_host_set(&absin[k], i, fabs(nxvk_host_get(&in[k], i)));
    }
    if (rc == NXVK_OK) {
      /* |x| in f64 so the scale itself neither overflows f32 nor rounds */
      for (int j = 0; j < nin; j++) {
        nxvk_host w;
        if (absin[j].dtype == NXVK_F32 && nxvk_host_alloc(&w, NXVK_F64, &absin[j].shape) == 0) {
          for (int64_t i = 0; i < nxvk_host_count(&w); i++) nxvk_host_set(&w, i, nxvk_host_get(&absin[j], i));
          nxvk_host_free(&absin[j]);
          absin[j] = w;
        }
      }
      rc = nxvk_op_ref(op, a, absin, nin, &scale);
    }
    for (int j = 0; j < k; j++) nxvk_host_free(&absin[j]);
    if (rc) return rc;
    terms = terms_per_output(op, a, in, ref);
  }
  double eps = fl ? ldexp(1.0, -mant_bits(d)) : 0;
  int64_t n = nxvk_host_count(ref);
  /* linalg: n of the n x n matrices, and each batch's largest finite |ref| */
  int64_t lin_n = 0, lin_group = 0;
  double *lin_max = NULL;
  if (lim.norm_factor > 0 && !lim.exact && nin > 0 && in[0].shape.rank >= 2) {
    lin_n = in[0].shape.dim[in[0].shape.rank - 1];
    int64_t batch = lin_n ? nxvk_host_count(&in[0]) / (lin_n * lin_n) : 0;
    lin_group = batch ? n / batch : 0;
    lin_max = calloc((size_t)(batch ? batch : 1), sizeof *lin_max);
    if (!lin_max) return nxvk_seterr(NXVK_E_NO_MEMORY, "out of host memory");
    for (int64_t i = 0; lin_group && i < n; i++) {
      double v = fabs(nxvk_host_get(ref, i));
      if (isfinite(v) && v > lin_max[i / lin_group]) lin_max[i / lin_group] = v;
    }
  }
  int64_t in_n = nin > 0 ? nxvk_host_count(&in[0]) : 0;
  bool elementwise = op->kind <= NXVK_KIND_SELECT;
  /* Where a flushed denormal is forgiven: only in the kernels that
   * accumulate with the driver's arithmetic (dot's and conv's fma chains,
   * linalg's cholesky / trsm), which a driver that does not preserve
   * denormals (NVIDIA's f32) may flush.  Not here, as they are IEEE also on
   * such a driver: reductions (reduce.comp), scans (scan.comp: every
   * combine is nxmath's nxf_add / nxf_mul / nxd_*, compares on the bits; its
   * fast f32 adds redo a tile exactly where one could differ) and windows
   * (window.comp: the same functions, window_scatter_* too) add, multiply
   * and compare as the elementwise kernels do, so conformance catches a
   * flush in them.  cumulative_product and window_product of floats keep
   * a wide exponent range in the kernels (wideprod.glsl) and the reference
   * (nxvk_wide), so neither has a partial product that under- or
   * overflows: nothing to forgive either. */
  bool flush_tolerated = op->kind == NXVK_KIND_DOT || op->kind == NXVK_KIND_CONV || op->kind == NXVK_KIND_LINALG;
  c->n = n;
  double worst_u = -1;
  for (int64_t i = 0; i < n; i++) {
    double g = nxvk_host_get(got, i), r = nxvk_host_get(ref, i);
    double u = nxvk_ulp_diff(d, g, r);
    /* integers compare exactly (i64 / u64 beyond 2^53 included) */
    if (!fl) u = nxvk_host_get_int(got, i) == nxvk_host_get_int(ref, i) ? 0 : INFINITY;
    bool ok;
    if (lim.exact || u == 0) {
      ok = u == 0;
    } else if (lim.y_abs_hi > 0 && elementwise && nin >= 2 && in_n > 0 &&
               !(fabs(operand_at(in, 1, &ref->shape, i)) >= lim.y_abs_lo &&
                 fabs(operand_at(in, 1, &ref->shape, i)) <= lim.y_abs_hi)) {
      ok = true; /* the spec bounds nothing for this divisor, not even the class */
      c->unbounded++;
    } else if (isinf(u)) {
      ok = false;
    } else if (lim.sum_factor > 0) {
      double s = nxvk_host_get(&scale, i);
      double bound = lim.sum_factor * (double)(terms > 0 ? terms : 1) * eps * s;
      /* plus one ulp of the result for the final rounding */
      ok = fabs(g - r) <= bound + nxvk_ulp(d, r);
    } else if (lim.norm_factor > 0) {
      double s = lin_max && lin_group ? lin_max[i / lin_group] : 0;
      ok = fabs(g - r) <= lim.norm_factor * (double)(lin_n > 0 ? lin_n : 1) * eps * s + nxvk_ulp(d, r);
    } else {
      /* elementwise: the argument that scales the bound */
      double x = 0, y = 0;
      if (elementwise && nin >= 1 && in_n > 0) {
        x = operand_at(in, 0, &ref->shape, i);
        if (nin >= 2) y = operand_at(in, 1, &ref->shape, i);
      }
      /* f16 / bf16 take f32's absolute bound plus their own rounding (1 ulp) */
      double abs_lim = lim.abs + ((d == NXVK_F16 || d == NXVK_BF16) ? nxvk_ulp(d, r) : 0);
      if (lim.abs > 0 && x >= lim.lo && x <= lim.hi) {
        ok = fabs(g - r) <= abs_lim;
      } else if (lim.abs > 0 && !isfinite(lim.lo)) {
        ok = fabs(g - r) <= abs_lim;
      } else if (lim.outside_unbounded) {
        ok = fabs(g) <= 1.0;
      } else {
        double arg = lim.arg_pow ? fabs(y * log2(fabs(x))) : fabs(x);
        if (!isfinite(arg)) arg = 0;
        double allowed = lim.ulps + lim.ulps_per_arg * arg + lim.ulps_per_y * fabs(y);
        ok = u <= allowed;
      }
    }
    if (!ok && may_flush && flush_tolerated && (fl || float_in)) {
      /* the device may flush denormals inside a dot, convolution or
       * linalg op (its float controls allow it, those kernels accumulate
       * with the driver's arithmetic): accept what flushing gives, the
       * inputs' (any subset) or the result's, also before rounding.
       * Elementwise, reduction, scan, window, movement and source ops work
       * around a flushing driver, so nothing is forgiven. */
      double lim_norm = ldexp(1.0, min_exp(d));
      bool forgive = fl && g == 0 && (is_denormal(d, r) || fabs(r) == lim_norm);
      for (int k = 0; k < nalts && !forgive; k++) {
        double rf = nxvk_host_get(&alts[k], i);
        forgive = fl ? (nxvk_ulp_diff(d, g, rf) == 0 || (is_denormal(d, rf) && g == 0) ||
                        (g == 0 && rf == 0))
                     : g == rf;
      }
      if (forgive) {
        c->forgiven++;
        continue;
      }
    }
    nxvk_cmp_note(c, i, g, r, u, ok, fl, &worst_u);
  }
  nxvk_host_free(&scale);
  free(lin_max);
  return NXVK_OK;
}

int nxvk_compare(const nxvk_op_desc *op, const nxvk_attrs *a, const nxvk_host *in, int nin,
                 const nxvk_host *got, const nxvk_host *ref, const nxvk_host *ref_flushed,
                 nxvk_cmp *c) {
  return compare_impl(op, a, in, nin, got, ref, ref_flushed, ref_flushed ? 1 : 0,
                      ref_flushed != NULL, c);
}

unsigned nxvk_flush_dtypes(const nxvk_device_info *dev) {
  /* bf16 shares f32's exponent range (its subnormals are f32's); f16's are
   * normal f32 values */
  return (dev->denorm_preserve_f32 ? 0u : NXVK_DT(NXVK_F32) | NXVK_DT(NXVK_BF16)) |
         (dev->denorm_preserve_f64 ? 0u : NXVK_DT(NXVK_F64));
}

int nxvk_host_flush_denormals(const nxvk_host *h, nxvk_host *out, bool *had) {
  *had = false;
  int rc = nxvk_host_alloc(out, h->dtype, &h->shape);
  if (rc) return rc;
  size_t n = nxvk_host_bytes(h);
  if (n) memcpy(out->data, h->data, n);
  if (!nxvk_dtype_is_float(h->dtype)) return NXVK_OK;
  for (int64_t i = 0; i < nxvk_host_count(h); i++) {
    double v = nxvk_host_get(h, i);
    if (is_denormal(h->dtype, v)) {
      nxvk_host_set(out, i, copysign(0.0, v));
      *had = true;
    }
  }
  return NXVK_OK;
}

int nxvk_check(const nxvk_device_info *dev, const nxvk_op_desc *op, const nxvk_attrs *a,
               const nxvk_host *in, int nin, const nxvk_host *got, const nxvk_host *given_ref,
               nxvk_cmp *out) {
  nxvk_host own = {0};
  int rc = given_ref ? NXVK_OK : nxvk_op_ref(op, a, in, nin, &own);
  if (rc) return rc;
  const nxvk_host *ref = given_ref ? given_ref : &own;
  unsigned flush = nxvk_flush_dtypes(dev);
  bool may_flush = (flush & NXVK_DT(got->dtype)) != 0;
  for (int k = 0; k < nin; k++) may_flush |= (flush & NXVK_DT(in[k].dtype)) != 0;
  /* every non-empty subset of the inputs that hold denormals, flushed: an
   * instruction may flush each operand on its own (at most 7 references;
   * ops with more than 3 inputs get the all-flushed one) */
  nxvk_host flushed[NXVK_MAX_INPUTS], alts[8];
  bool had[NXVK_MAX_INPUTS] = {false};
  int nflushed = 0, nalts = 0;
  for (; may_flush && rc == NXVK_OK && nflushed < nin; nflushed++)
    rc = nxvk_host_flush_denormals(&in[nflushed], &flushed[nflushed], &had[nflushed]);
  unsigned with_denormals = 0;
  for (int k = 0; k < nflushed; k++)
    if (had[k]) with_denormals |= 1u << k;
  if (rc == NXVK_OK && with_denormals) {
    unsigned nsub = nin < 4 ? 1u << nin : 2u; /* more inputs: only all flushed */
    for (unsigned sub = 1; sub < nsub; sub++) {
      unsigned mask = nin < 4 ? sub : with_denormals;
      if ((mask & ~with_denormals) || nalts >= 8) continue;
      nxvk_host args[NXVK_MAX_INPUTS];
      for (int k = 0; k < nin; k++) args[k] = (mask >> k & 1) ? flushed[k] : in[k];
      if (nxvk_op_ref(op, a, args, nin, &alts[nalts]) == NXVK_OK) nalts++;
    }
  }
  if (rc == NXVK_OK) rc = compare_impl(op, a, in, nin, got, ref, alts, nalts, may_flush, out);
  for (int k = 0; k < nalts; k++) nxvk_host_free(&alts[k]);
  for (int k = 0; k < nflushed; k++) nxvk_host_free(&flushed[k]);
  nxvk_host_free(&own);
  return rc;
}
