/*
 * fused_bound.c - the judge's bound for fused chains (nxvk_compare_nodes):
 * where elementwise ops run fused, intermediates never round to memory, so
 * the GPU's output is checked against an interval per element composed
 * over the chain's ops, each op's limit (conformance/limits.json) widening
 * what its inputs' intervals allow, with the device's freedom to flush
 * denormals.  fusion.c plans and records the kernels; this file judges
 * their results.
 */
#include "fusion.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen.h"

/* A value known up to an interval per element: lo..hi in the total order
 * where -0 < +0, each end a number of the value's dtype; flags say whether
 * the GPU may hold a number, a NaN, or anything (past a value that might be
 * either, nothing is promised). */
enum { IV_NUM = 1, IV_NAN = 2, IV_ANY = 4, IV_UNBOUNDED = 8 /* with ANY: the spec bounds nothing */ };

typedef struct {
  nxvk_dtype dtype;
  nxvk_shape shape;
  int64_t n;
  double *lo, *hi;
  uint8_t *flags;
  bool point;              /* lo == hi and one class everywhere: one sample is enough */
} interval;

static void iv_free(interval *iv) {
  if (!iv) return;
  free(iv->lo);
  free(iv->hi);
  free(iv->flags);
  free(iv);
}

static interval *iv_new(nxvk_dtype d, const nxvk_shape *s) {
  interval *iv = calloc(1, sizeof *iv);
  if (!iv) return NULL;
  iv->dtype = d;
  iv->shape = *s;
  if (nxvk_shape_count(s, &iv->n)) iv->n = 0;
  size_t n = (size_t)(iv->n ? iv->n : 1);
  iv->lo = malloc(n * sizeof(double));
  iv->hi = malloc(n * sizeof(double));
  iv->flags = calloc(n, 1);
  if (!iv->lo || !iv->hi || !iv->flags) {
    iv_free(iv);
    return NULL;
  }
  for (size_t e = 0; e < n; e++) iv->lo[e] = iv->hi[e] = NAN; /* a NaN-only element samples NaN */
  return iv;
}

/* a <= b with -0 < +0 */
static bool tle(double a, double b) {
  if (a != b) return a < b;
  return !(a == 0 && signbit(b) && !signbit(a));
}

static bool is_float(nxvk_dtype d) { return nxvk_dtype_is_float(d); }

/* f16 / bf16: x to nearest in the dtype, and the dtype's neighbours (on the bits) */
static double half_of(nxvk_dtype d, double x) {
  uint16_t b = 0;
  nxvk_host one = {.dtype = d, .shape = {1, {1}}, .data = &b};
  nxvk_host_set(&one, 0, x);
  return nxvk_host_get(&one, 0);
}
static double half_step(nxvk_dtype d, double x, bool up) {
  uint16_t b = 0;
  nxvk_host one = {.dtype = d, .shape = {1, {1}}, .data = &b};
  nxvk_host_set(&one, 0, x);
  uint16_t inf = d == NXVK_F16 ? 0x7c00u : 0x7f80u;
  if ((b & 0x7fffu) == inf && (bool)(b & 0x8000u) == !up) return x; /* already the end */
  if (x == 0) b = up ? 1u : 0x8001u;
  else if ((x > 0) == up) b++;
  else b--;
  return nxvk_host_get(&one, 0);
}

/* Round outward to dtype d: lo down, hi up (f64 and integers are exact). */
static double round_down(nxvk_dtype d, double x) {
  if (isnan(x)) return x;
  if (d == NXVK_F16 || d == NXVK_BF16) {
    double r = half_of(d, x);
    return r > x ? half_step(d, r, false) : r;
  }
  if (d != NXVK_F32) return x;
  float f = (float)x;
  if ((double)f > x) f = nextafterf(f, -INFINITY);
  return f;
}
static double round_up(nxvk_dtype d, double x) {
  if (isnan(x)) return x;
  if (d == NXVK_F16 || d == NXVK_BF16) {
    double r = half_of(d, x);
    return r < x ? half_step(d, r, true) : r;
  }
  if (d != NXVK_F32) return x;
  float f = (float)x;
  if ((double)f < x) f = nextafterf(f, INFINITY);
  return f;
}

/* Where the device may flush denormals, a value near zero may be zero. */
static void iv_flush(interval *iv, unsigned flush) {
  if (!is_float(iv->dtype) || !(flush & NXVK_DT(iv->dtype))) return;
  double min = iv->dtype == NXVK_F64 ? DBL_MIN : iv->dtype == NXVK_F16 ? ldexp(1.0, -14) : FLT_MIN;
  for (int64_t e = 0; e < iv->n; e++) {
    if (!(iv->flags[e] & IV_NUM) || !(iv->lo[e] < min && iv->hi[e] > -min)) continue;
    if (iv->lo[e] == 0 && iv->hi[e] == 0) continue; /* a zero stays itself */
    if (tle(-0.0, iv->lo[e])) iv->lo[e] = -0.0;
    if (tle(iv->hi[e], 0.0)) iv->hi[e] = 0.0;
    iv->point = false;
  }
}

static void iv_update_point(interval *iv) {
  iv->point = true;
  for (int64_t e = 0; e < iv->n && iv->point; e++) {
    uint8_t f = iv->flags[e];
    iv->point = (f == IV_NUM && iv->lo[e] == iv->hi[e] && signbit(iv->lo[e]) == signbit(iv->hi[e])) ||
                f == IV_NAN;
  }
}

static interval *iv_from_host(const nxvk_host *h, unsigned flush) {
  interval *iv = iv_new(h->dtype, &h->shape);
  if (!iv) return NULL;
  for (int64_t e = 0; e < iv->n; e++) {
    double x = nxvk_host_get(h, e);
    iv->lo[e] = iv->hi[e] = x;
    iv->flags[e] = isnan(x) ? IV_NAN : IV_NUM;
  }
  iv->point = true;
  iv_flush(iv, flush);
  return iv;
}

/* Offsets into operand shape s of each element of out (row-major), walked
 * with an odometer. */
typedef struct {
  int rank;
  int64_t idx[NXVK_MAX_RANK], st[NXVK_MAX_RANK], dim[NXVK_MAX_RANK], off;
} walker;
static void walk_init(walker *w, const nxvk_shape *s, const nxvk_shape *out) {
  memset(w, 0, sizeof *w);
  w->rank = out->rank;
  nxvk_broadcast_strides(s, out, w->st);
  for (int d = 0; d < out->rank; d++) w->dim[d] = out->dim[d];
}
static void walk_next(walker *w) {
  for (int d = w->rank - 1; d >= 0; d--) {
    w->off += w->st[d];
    if (++w->idx[d] < w->dim[d]) return;
    w->off -= w->st[d] * w->idx[d];
    w->idx[d] = 0;
  }
}

/* How far the op's own result may be from its reference at one element:
 * the rules of nxvk_compare (limits.c) applied over the operands' ranges.
 * *unbounded: the spec bounds only |result| <= 1 there. */
static double op_slack(const nxvk_limit *lim, nxvk_dtype d, double xlo, double xhi, double ylo,
                       double yhi, double lo, double hi, bool *unbounded) {
  *unbounded = false;
  if (lim->exact) return 0;
  if (lim->y_abs_hi > 0) { /* bounded only for |y| in [y_abs_lo, y_abs_hi] (divide) */
    double ymin = ylo <= 0 && yhi >= 0 ? 0 : fmin(fabs(ylo), fabs(yhi));
    double ymax = fmax(fabs(ylo), fabs(yhi));
    if (isnan(ylo) || isnan(yhi) || !(ymin >= lim->y_abs_lo && ymax <= lim->y_abs_hi)) return INFINITY;
  }
  if (lim->abs > 0 && !isfinite(lim->lo)) return lim->abs;
  double w = 0;
  bool inside = !(xhi < lim->lo || xlo > lim->hi) && !isnan(xlo);
  bool outside = isnan(xlo) || xlo < lim->lo || xhi > lim->hi;
  if (lim->abs > 0 && inside) w = lim->abs;
  if (lim->abs == 0 || outside) {
    if (lim->outside_unbounded) {
      *unbounded = true;
    } else {
      double arg;
      if (lim->arg_pow) {
        double lx = fmax(fabs(log2(fabs(xlo))), fabs(log2(fabs(xhi))));
        arg = fmax(fabs(ylo), fabs(yhi)) * lx;
      } else {
        arg = fmax(fabs(xlo), fabs(xhi));
      }
      if (!isfinite(arg)) arg = 0; /* as nxvk_compare: the special cases are exact */
      double ulps = lim->ulps + lim->ulps_per_arg * arg + lim->ulps_per_y * fmax(fabs(ylo), fabs(yhi));
      w = fmax(w, ulps * nxvk_ulp(d, fmax(fabs(lo), fabs(hi))));
    }
  }
  return w;
}

/* Samples of one operand element, in increasing order.  A point: itself.
 * An interval holding at most NS_NARROW values of its dtype: every one of
 * them, so the op's image is exact whatever the op does.  Else evenly
 * spread samples with irregular jitter (NS_NARROW of them, or NS_DENSE for
 * a wide interval, an error an op amplified or a bound such as sin's outside
 * [-pi, pi]), plus the values where ops jump or spike: -0 and +0 when zero
 * is inside, the operand's reference value, and the other operands' values
 * (equal and not_equal turn only there).  Between samples the op is taken
 * to be monotone, and monotone() rejects elements where it visibly is not. */
#define NS_NARROW 10
#define NS_DENSE 52
#define NS_SHARED 8                 /* each of several uncertain operands */
#define NS_EXTRA 4                  /* -0, +0 and two others (reference, other operand) */

static bool wide(const interval *iv, int64_t e) {
  double lo = iv->lo[e], hi = iv->hi[e];
  return iv->flags[e] == IV_NUM && is_float(iv->dtype) &&
         !(hi - lo <= ldexp(fmax(fabs(lo), fabs(hi)), -12));
}

/* The next value of dtype d after x (with -0 then +0). */
static double next_value(nxvk_dtype d, double x) {
  if (x == 0 && signbit(x)) return 0.0;
  if (d == NXVK_F32) return nextafterf((float)x, INFINITY);
  if (d == NXVK_F64) return nextafter(x, INFINITY);
  return x + 1;
}

static void sort_doubles(double *x, int n) {
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && tle(x[j], x[j - 1]) && !(x[j] == x[j - 1] && signbit(x[j]) == signbit(x[j - 1])); j--) {
      double t = x[j];
      x[j] = x[j - 1];
      x[j - 1] = t;
    }
}

/* Fills x[ns] in increasing order; returns true when the samples are
 * every value of the interval (the op's image is then exact). */
static bool samples_of(const interval *iv, int64_t e, int ns, const double *extra, int nextra,
                       double *x, bool *zero) {
  double lo = iv->lo[e], hi = iv->hi[e];
  for (int s = 0; s < ns; s++) {
    x[s] = hi;
    zero[s] = false;
  }
  if (ns == 1 || iv->flags[e] != IV_NUM) { /* a point, NaN, or anything: its ends stand for it */
    for (int s = 0; s < ns / 2; s++) x[s] = lo;
    return true;
  }
  /* every value, when there are few */
  int n = 0;
  for (double v = lo; n < ns && tle(v, hi); v = next_value(iv->dtype, v)) x[n++] = v;
  if (n < ns || (x[ns - 1] == hi && signbit(x[ns - 1]) == signbit(hi))) {
    for (int s = 0; s < ns; s++) zero[s] = x[s] == 0;
    return true;
  }
  int base = ns >= NS_EXTRA + 4 ? ns - NS_EXTRA : ns; /* few samples: no room for extras */
  double big = iv->dtype == NXVK_F32 ? FLT_MAX : iv->dtype == NXVK_F64 ? DBL_MAX : INT32_MAX;
  double a = fmax(lo, -big), b = fmin(hi, big); /* finite ends */
  x[0] = lo;
  x[base - 1] = hi;
  for (int s = 1; s < base - 1; s++) {
    /* irregular steps: no sample sits on a round fraction of the interval */
    double t = ((double)s - 0.5 + 0.45 * sin((double)s * 2.399963)) / (double)(base - 1);
    x[s] = a * (1 - t) + b * t;
    if (!is_float(iv->dtype)) x[s] = nearbyint(x[s]);
  }
  int at = base;
  if (lo < 0 && hi > 0 && at + 2 <= ns) {
    x[at++] = -0.0;
    x[at++] = 0.0;
  }
  for (int k = 0; k < nextra && at < ns; k++)
    if (!isnan(extra[k]) && tle(lo, extra[k]) && tle(extra[k], hi)) x[at++] = extra[k];
  while (at < ns) x[at++] = hi;
  if (iv->dtype == NXVK_F32)
    for (int s = 0; s < ns; s++) x[s] = (float)x[s];
  sort_doubles(x, ns);
  for (int s = 0; s < ns; s++) zero[s] = x[s] == 0;
  return false;
}

/* Along one operand's samples (others fixed), is the op monotone, except
 * for turns at zero?  A turn elsewhere means an extreme or a jump between
 * samples (fmod, a branch cut), which the samples do not bound. */
static bool monotone(const double *r, const bool *zero, int n, size_t stride) {
  int prev = 0;
  bool zero_run = zero[0];
  for (int j = 1; j < n; j++) {
    double a = r[(size_t)(j - 1) * stride], b = r[(size_t)j * stride];
    if (isnan(a) || isnan(b)) { /* a number/NaN border: the flags carry it */
      prev = 0;
      zero_run = zero[j];
      continue;
    }
    int d = a == b ? 0 : b > a ? 1 : -1;
    if (d == 0) {
      zero_run |= zero[j];
      continue;
    }
    if (prev != 0 && d != prev && !zero_run) return false;
    prev = d;
    zero_run = zero[j];
  }
  return true;
}

#define EVAL_BUDGET ((size_t)1 << 20)   /* results held at once (doubles) */

/* The interval of one node's result from its operands' intervals: the op's
 * reference at every combination of its operands' samples, element by
 * element in chunks, then widened by the op's own limit.  pts: the
 * operands' reference values. */
static int iv_node(const nxvk_op_desc *op, const nxvk_attrs *attrs, interval *const *in,
                   const nxvk_host *pts, int nin, const nxvk_meta *om, unsigned flush,
                   interval **out) {
  *out = NULL;
  int nonpoint = 0;
  for (int k = 0; k < nin; k++) nonpoint += !in[k]->point;
  interval *iv = iv_new(om->dtype, &om->shape);
  nxvk_limit lim = {.exact = true};
  int rc = iv ? NXVK_OK : nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  if (rc == NXVK_OK && is_float(om->dtype)) rc = nxvk_op_limit(op, in[nin - 1]->dtype, &lim);
  /* samples per operand: 1 for points; a wide interval is sampled densely
   * when it is the only uncertain operand, and makes the result unchecked
   * (anything) when there are others */
  int ns[3] = {1, 1, 1}, most[3] = {1, 1, 1};
  size_t combos = 1, max_combos = 1;
  for (int k = 0; k < nin; k++) {
    most[k] = in[k]->point ? 1 : !is_float(in[k]->dtype) ? 4 : nonpoint > 1 ? NS_SHARED : NS_DENSE;
    max_combos *= (size_t)most[k];
  }
  size_t chunk = EVAL_BUDGET / max_combos;
  if (chunk < 1) chunk = 1;
  if (chunk > 8192) chunk = 8192;
  nxvk_host smp[3][NS_DENSE];
  memset(smp, 0, sizeof smp);
  double *res = rc ? NULL : malloc(max_combos * chunk * sizeof(double));
  bool *zero = rc ? NULL : malloc((size_t)3 * chunk * NS_DENSE * sizeof(bool));
  bool *all = rc ? NULL : malloc((size_t)3 * chunk * sizeof(bool)); /* exhaustive samples */
  uint8_t *any = rc ? NULL : malloc(chunk);
  int64_t *off = rc ? NULL : malloc((size_t)3 * chunk * sizeof(int64_t));
  if (rc == NXVK_OK && (!res || !zero || !all || !any || !off))
    rc = nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  walker w[3];
  for (int k = 0; k < nin; k++) walk_init(&w[k], &in[k]->shape, &om->shape);
  nxvk_shape line = {1, {(int64_t)chunk}};
  for (int k = 0; k < nin && rc == NXVK_OK; k++)
    for (int s = 0; s < most[k] && rc == NXVK_OK; s++) rc = nxvk_host_alloc(&smp[k][s], in[k]->dtype, &line);
  int *order = rc ? NULL : malloc(chunk * sizeof(int));
  if (rc == NXVK_OK && !order) rc = nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  for (int64_t e0 = 0; rc == NXVK_OK && e0 < iv->n; e0 += (int64_t)chunk) {
    int m = (int)(iv->n - e0 < (int64_t)chunk ? iv->n - e0 : (int64_t)chunk);
    /* the window's operand offsets; its elements in two passes: those with
     * narrow intervals, then those that need dense samples */
    int nnarrow = 0, nall = 0;
    for (int e = 0; e < m; e++) {
      bool dense = false;
      for (int k = 0; k < nin; k++) {
        off[(size_t)k * chunk + e] = w[k].off;
        dense |= most[k] == NS_DENSE && wide(in[k], w[k].off);
        walk_next(&w[k]);
      }
      if (!dense) order[nnarrow++] = e;
    }
    nall = nnarrow;
    for (int e = 0, at = 0; e < m; e++) { /* the dense ones after the narrow ones */
      while (at < nnarrow && order[at] < e) at++;
      if (at < nnarrow && order[at] == e) continue;
      order[nall++] = e;
    }
    for (int pass = 0; pass < 2 && rc == NXVK_OK; pass++) {
      int first = pass ? nnarrow : 0, mm = pass ? nall - nnarrow : nnarrow;
      if (mm == 0) continue;
      combos = 1;
      for (int k = 0; k < nin; k++) {
        ns[k] = most[k] == NS_DENSE && !pass ? NS_NARROW : most[k];
        combos *= (size_t)ns[k];
      }
      for (int j = 0; j < mm; j++) {
        int e = order[first + j];
        any[j] = 0;
        for (int k = 0; k < nin; k++) {
          int64_t o = off[(size_t)k * chunk + e];
          uint8_t f = in[k]->flags[o];
          any[j] |= (f & IV_ANY) || f == (IV_NUM | IV_NAN);
          any[j] |= f & IV_UNBOUNDED;
          double extra[3], x[NS_DENSE];
          int nextra = 0;
          if (!in[k]->point) {
            extra[nextra++] = nxvk_host_get(&pts[k], o);
            for (int i2 = 0; i2 < nin; i2++) {
              int64_t oj = off[(size_t)i2 * chunk + e];
              if (i2 != k && in[i2]->dtype == in[k]->dtype && in[i2]->lo[oj] == in[i2]->hi[oj] && nextra < 3)
                extra[nextra++] = in[i2]->lo[oj];
            }
          }
          bool every = samples_of(in[k], o, ns[k], extra, nextra, x, &zero[((size_t)k * chunk + j) * NS_DENSE]);
          all[(size_t)k * chunk + j] = every;
          /* a wide interval among several uncertain operands: no sampling bounds it */
          any[j] |= !every && nonpoint > 1 && wide(in[k], o);
          for (int sm = 0; sm < ns[k]; sm++) nxvk_host_set(&smp[k][sm], j, x[sm]);
        }
      }
      for (size_t cb = 0; cb < combos && rc == NXVK_OK; cb++) {
        nxvk_host args[3], r;
        size_t rest = cb;
        for (int k = 0; k < nin; k++) {
          args[k] = smp[k][rest % (size_t)ns[k]];
          args[k].shape.dim[0] = mm;
          rest /= (size_t)ns[k];
        }
        rc = nxvk_op_ref(op, attrs, args, nin, &r);
        for (int j = 0; rc == NXVK_OK && j < mm; j++) res[cb * chunk + (size_t)j] = nxvk_host_get(&r, j);
        nxvk_host_free(&r);
      }
      for (int j = 0; j < mm && rc == NXVK_OK; j++) {
        int e = order[first + j];
        uint8_t f = 0;
        double lo = NAN, hi = NAN;
        for (size_t cb = 0; cb < combos; cb++) {
          double x = res[cb * chunk + (size_t)j];
          if (isnan(x)) {
            f |= IV_NAN;
          } else if (!(f & IV_NUM)) {
            f |= IV_NUM;
            lo = hi = x;
          } else {
            if (tle(x, lo)) lo = x;
            if (tle(hi, x)) hi = x;
          }
        }
        /* monotone along each sampled (not enumerated) operand, the others
         * held at each of their samples */
        size_t stride = 1;
        for (int k = 0; k < nin && !any[j]; stride *= (size_t)ns[k], k++) {
          if (ns[k] < 3 || all[(size_t)k * chunk + j]) continue;
          for (size_t cb = 0; cb < combos && !any[j]; cb++)
            if ((cb / stride) % (size_t)ns[k] == 0) /* each line once, from its first sample */
              any[j] = !monotone(&res[cb * chunk + (size_t)j], &zero[((size_t)k * chunk + j) * NS_DENSE],
                                 ns[k], stride * chunk);
        }
        if (any[j]) f = IV_ANY | (any[j] & IV_UNBOUNDED);
        if (!lim.exact && (f & IV_NUM)) {
          const interval *x0 = in[0], *x1 = nin > 1 ? in[1] : NULL;
          int64_t o0 = off[e], o1 = nin > 1 ? off[chunk + (size_t)e] : 0;
          bool unbounded;
          double slack = op_slack(&lim, om->dtype, x0->lo[o0], x0->hi[o0], x1 ? x1->lo[o1] : 0,
                                  x1 ? x1->hi[o1] : 0, lo, hi, &unbounded);
          if (isfinite(slack)) {
            lo = round_down(om->dtype, lo - slack);
            hi = round_up(om->dtype, hi + slack);
          } else { /* the spec bounds nothing here: any value, counted apart */
            f = IV_ANY | IV_UNBOUNDED;
          }
          if (unbounded) {
            lo = fmin(lo, -1.0);
            hi = fmax(hi, 1.0);
          }
        }
        iv->flags[e0 + e] = f;
        iv->lo[e0 + e] = lo;
        iv->hi[e0 + e] = hi;
      }
    }
  }
  free(order);
  for (int k = 0; k < 3; k++)
    for (int s = 0; s < NS_DENSE; s++) nxvk_host_free(&smp[k][s]);
  free(res);
  free(zero);
  free(all);
  free(any);
  free(off);
  if (rc) {
    iv_free(iv);
    return rc;
  }
  iv_update_point(iv);
  iv_flush(iv, flush);
  *out = iv;
  return NXVK_OK;
}

static void limits_text(const nxvk_graph *g, const int *nodes, int nnodes, const nxvk_meta *metas,
                        char *buf, size_t len) {
  if (!buf || !len) return;
  int ni = nxvk_graph_input_count(g);
  size_t at = (size_t)snprintf(buf, len, "composed over %d op%s:", nnodes, nnodes == 1 ? "" : "s");
  for (int j = 0; j < nnodes && at < len; j++) {
    const nxvk_attrs *a;
    const int *args;
    int nargs;
    const nxvk_op_desc *op = nxvk_graph_value_op(g, ni + nodes[j], &a, &args, &nargs);
    nxvk_limit lim;
    const char *t = nxvk_op_limit(op, metas[args[nargs - 1]].dtype, &lim) == NXVK_OK ? lim.text : "?";
    at += (size_t)snprintf(buf + at, len - at, "%s %s %s", j ? "," : "", op->name, t);
  }
}

int nxvk_compare_nodes(const nxvk_graph *g, const int *nodes, int nnodes, const nxvk_host *values,
                       int v, const nxvk_host *got, unsigned flush, nxvk_cmp *out,
                       char *limit_text, size_t len) {
  memset(out, 0, sizeof *out);
  out->worst = -1;
  int ni = nxvk_graph_input_count(g), nv = ni + nxvk_graph_node_count(g);
  int last = -1;
  for (int j = 0; j < nnodes; j++)
    if (ni + nodes[j] == v) last = j;
  if (last < 0) return nxvk_seterr(NXVK_E_BAD_REQUEST, "compare: value %d is not one of the nodes", v);
  interval **iv = calloc((size_t)nv, sizeof *iv);
  nxvk_host *ref = calloc((size_t)nv, sizeof *ref);
  nxvk_meta *metas = calloc((size_t)nv, sizeof *metas);
  bool *inside = calloc((size_t)nv, sizeof *inside);
  bool *needed = calloc((size_t)nv, sizeof *needed);
  int rc = iv && ref && metas && inside && needed ? NXVK_OK : nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  for (int j = 0; j < nnodes && rc == NXVK_OK; j++) inside[ni + nodes[j]] = true;
  /* only the nodes v depends on */
  if (rc == NXVK_OK) needed[v] = true;
  for (int j = last; j >= 0 && rc == NXVK_OK; j--) {
    const nxvk_attrs *a;
    const int *args;
    int nargs;
    if (!needed[ni + nodes[j]]) continue;
    nxvk_graph_value_op(g, ni + nodes[j], &a, &args, &nargs);
    for (int k = 0; k < nargs; k++) needed[args[k]] = true;
  }
  int used[NXVK_CG_MAX_NODES], nused = 0;
  int *usedp = nnodes <= NXVK_CG_MAX_NODES ? used : malloc((size_t)nnodes * sizeof *usedp);
  if (!usedp && rc == NXVK_OK) rc = nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  for (int j = 0; j <= last && rc == NXVK_OK; j++)
    if (needed[ni + nodes[j]]) usedp[nused++] = nodes[j];
  /* operands from outside: points (the GPU's own values) */
  for (int j = 0; j < nused && rc == NXVK_OK; j++) {
    const nxvk_attrs *a;
    const int *args;
    int nargs;
    nxvk_graph_value_op(g, ni + usedp[j], &a, &args, &nargs);
    for (int k = 0; k < nargs && rc == NXVK_OK; k++) {
      int x = args[k];
      if (inside[x] || iv[x]) continue;
      const nxvk_host *h = &values[x];
      int64_t n;
      if (nxvk_shape_count(&h->shape, &n) || (n > 0 && !h->data)) {
        rc = nxvk_seterr(NXVK_E_BAD_REQUEST, "compare: operand value %d is missing", x);
        break;
      }
      metas[x] = (nxvk_meta){h->dtype, h->shape};
      ref[x] = *h; /* borrowed: not freed below */
      iv[x] = iv_from_host(h, flush);
      if (!iv[x]) rc = nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
    }
  }
  for (int j = 0; j < nused && rc == NXVK_OK; j++) {
    int x = ni + usedp[j];
    const nxvk_attrs *a;
    const int *args;
    int nargs;
    const nxvk_op_desc *op = nxvk_graph_value_op(g, x, &a, &args, &nargs);
    interval *ins[3];
    nxvk_host pts[3];
    if (nargs < 1 || nargs > 3 || op->kind > NXVK_KIND_SELECT) {
      rc = nxvk_seterr(NXVK_E_BAD_REQUEST, "compare: %s is not elementwise", op->name);
      break;
    }
    for (int k = 0; k < nargs; k++) {
      ins[k] = iv[args[k]];
      pts[k] = ref[args[k]];
    }
    rc = nxvk_op_ref(op, a, pts, nargs, &ref[x]);
    if (rc == NXVK_OK) metas[x] = (nxvk_meta){ref[x].dtype, ref[x].shape};
    if (rc == NXVK_OK) rc = iv_node(op, a, ins, pts, nargs, &metas[x], flush, &iv[x]);
  }
  if (rc == NXVK_OK && (got->dtype != metas[v].dtype || !nxvk_shape_equal(&got->shape, &metas[v].shape)))
    rc = nxvk_seterr(NXVK_E_MISMATCH, "compare: result dtype or shape differs from the reference");
  if (rc == NXVK_OK) {
    const interval *r = iv[v];
    nxvk_dtype d = r->dtype;
    double worst_u = -1;
    out->n = r->n;
    for (int64_t e = 0; e < r->n; e++) {
      double gv = nxvk_host_get(got, e), rv = nxvk_host_get(&ref[v], e);
      uint8_t f = r->flags[e];
      /* counted, not hidden: where the spec bounds nothing, and where the
       * composed bound cannot judge */
      if (f & IV_UNBOUNDED) out->unbounded++;
      else if (f & IV_ANY) out->forgiven++;
      bool ok = (f & IV_ANY) || (isnan(gv) ? (f & IV_NAN) != 0
                                           : (f & IV_NUM) && tle(r->lo[e], gv) && tle(gv, r->hi[e]));
      nxvk_cmp_note(out, e, gv, rv, nxvk_ulp_diff(d, gv, rv), ok, is_float(d), &worst_u);
    }
    limits_text(g, usedp, nused, metas, limit_text, len);
  }
  for (int x = 0; iv && x < nv; x++) {
    iv_free(iv[x]);
    if (inside[x]) nxvk_host_free(&ref[x]);
  }
  free(iv);
  free(ref);
  free(metas);
  free(inside);
  free(needed);
  if (usedp != used) free(usedp);
  return rc;
}

int nxvk_check_nodes(const nxvk_device_info *dev, const nxvk_graph *g, const int *nodes, int nnodes,
                     const nxvk_host *values, int v, const nxvk_host *got, nxvk_cmp *out,
                     char *limit_text, size_t len) {
  return nxvk_compare_nodes(g, nodes, nnodes, values, v, got, nxvk_flush_dtypes(dev), out, limit_text, len);
}
