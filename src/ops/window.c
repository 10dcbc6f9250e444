/*
 * window.c - window_sum window_product window_max window_min with Nx's
 * options: "window_dimensions" (one per axis, required), "strides" and
 * "window_dilations" (default 1s), "padding" ("valid" (default), "same" as
 * Nx computes it from the dilated window, or [low, high] pairs, negative
 * ones cropping).  Output dim: (padded - dilated window) / stride + 1, 0
 * when the dilated window is larger than the padded axis.  GPU:
 * shaders/window.comp, one output element per invocation.
 *
 * window_scatter_max / window_scatter_min(x, source, init) as Nx 0.7.3:
 * the same options less dilations (1s only), source shaped as the windows,
 * init a scalar of source's dtype (the result's), x of any numeric dtype
 * (compared in its own).  Each window selects one element of x (the last of
 * its largest / smallest, shaders/window.comp says exactly which; padding
 * never), and the result, x-shaped, is init plus the source values of the
 * windows that selected each element, added in row-major window order.
 * Padding: Nx.BinaryBackend 0.7.3 selects padded positions (holding
 * init_value) and then writes to positions shifted by the low padding (or
 * raises); this follows XLA's select_and_scatter (EXLA), which never
 * selects padding.  GPU: one pass writes each window's selected index, a
 * second gathers per element of x (no atomics, a fixed order); windows that
 * share no element (strides >= window) with x of the result's dtype: init
 * everywhere, then each window writes init + its source (one writer each).
 */
#include "ops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int rank;
  int64_t in[NXVK_MAX_RANK], out[NXVK_MAX_RANK], win[NXVK_MAX_RANK], stride[NXVK_MAX_RANK],
      dil[NXVK_MAX_RANK], lo[NXVK_MAX_RANK];
  int64_t nout, wcount;
} win_plan;

static bool is_scatter(const nxvk_op *op) { return op->d.arity == 3; }

static int wplan(const nxvk_op *op, const nxvk_attrs *a, const nxvk_shape *s, win_plan *p) {
  const char *name = op->d.name;
  int rank = s->rank;
  if (a->nwin != rank)
    return nxvk_seterr(NXVK_E_BAD_ATTR, "%s: window_dimensions: %d entries for rank %d", name, a->nwin, rank);
  if (a->nwstrides && a->nwstrides != rank)
    return nxvk_seterr(NXVK_E_BAD_ATTR, "%s: strides: %d entries for rank %d", name, a->nwstrides, rank);
  if (a->nwdil && a->nwdil != rank)
    return nxvk_seterr(NXVK_E_BAD_ATTR, "%s: window_dilations: %d entries for rank %d", name, a->nwdil, rank);
  if (a->wpad_mode == 2 && a->npad != rank)
    return nxvk_seterr(NXVK_E_BAD_ATTR, "%s: padding: %d pairs for rank %d", name, a->npad, rank);
  for (int d = 0; d < a->nwdil && is_scatter(op); d++)
    if (a->wdil[d] != 1)
      return nxvk_seterr(NXVK_E_BAD_ATTR, "%s: window_dilations: only 1s (Nx has none here)", name);
  p->rank = rank;
  p->nout = p->wcount = 1;
  for (int d = 0; d < rank; d++) {
    p->in[d] = s->dim[d];
    p->win[d] = a->window[d];
    p->stride[d] = a->nwstrides ? a->wstrides[d] : 1;
    p->dil[d] = a->nwdil ? a->wdil[d] : 1;
    int64_t dw = (p->win[d] - 1) * p->dil[d] + 1, lo = 0, hi = 0;
    if (a->wpad_mode == 1) {
      lo = (dw - 1) / 2;
      hi = dw - 1 - lo;
    } else if (a->wpad_mode == 2) {
      lo = a->wpad_lo[d];
      hi = a->wpad_hi[d];
    }
    int64_t padded = p->in[d] + lo + hi;
    p->out[d] = padded >= dw ? (padded - dw) / p->stride[d] + 1 : 0;
    p->lo[d] = lo;
    p->nout *= p->out[d];
    p->wcount *= p->win[d];
  }
  if (p->wcount > INT32_MAX || p->nout > UINT32_MAX)
    return nxvk_seterr(NXVK_E_TOO_LARGE, "%s: the window or the result is too large", name);
  return NXVK_OK;
}

/* window_scatter_*: x any numeric dtype, source and init one (exec.c checks
 * that they agree, as select's branches), source shaped as the windows. */
static int wscatter_infer(const nxvk_op *op, const nxvk_attrs *a, const nxvk_meta *in, nxvk_meta *out) {
  const char *name = op->d.name;
  if ((unsigned)in[0].dtype >= NXVK_NDTYPES || !(op->d.dtypes & NXVK_DT(in[0].dtype)))
    return nxvk_seterr(NXVK_E_UNSUPPORTED_DTYPE, "%s does not take %s (input 1)", name,
                       nxvk_dtype_name(in[0].dtype));
  win_plan p;
  int rc = wplan(op, a, &in[0].shape, &p);
  if (rc) return rc;
  char b1[160], b2[160];
  nxvk_shape ws = {p.rank, {0}};
  for (int d = 0; d < p.rank; d++) ws.dim[d] = p.out[d];
  if (!nxvk_shape_equal(&ws, &in[1].shape))
    return nxvk_seterr(NXVK_E_SHAPE_MISMATCH, "%s: the source (input 2) %s must have the windows' shape %s", name,
                       nxvk_shape_str(&in[1].shape, b1, sizeof b1), nxvk_shape_str(&ws, b2, sizeof b2));
  if (in[2].shape.rank != 0)
    return nxvk_seterr(NXVK_E_SHAPE_MISMATCH, "%s: init (input 3) must be a scalar (shape []), not %s", name,
                       nxvk_shape_str(&in[2].shape, b1, sizeof b1));
  int64_t nx = 1;
  for (int d = 0; d < p.rank; d++) nx *= p.in[d];
  if (nx >= UINT32_MAX)
    return nxvk_seterr(NXVK_E_TOO_LARGE, "%s: the input is too large (2^32 - 1 elements at most)", name);
  out->dtype = in[1].dtype;
  out->shape = in[0].shape;
  return NXVK_OK;
}

int nxvk_window_infer(const nxvk_op *op, const nxvk_attrs *a, const nxvk_meta *in, int nin,
                      nxvk_meta *out) {
  (void)nin;
  if (is_scatter(op)) return wscatter_infer(op, a, in, out);
  win_plan p;
  int rc = wplan(op, a, &in->shape, &p);
  if (rc) return rc;
  out->dtype = in->dtype;
  out->shape.rank = p.rank;
  for (int d = 0; d < p.rank; d++) out->shape.dim[d] = p.out[d];
  return NXVK_OK;
}

static void wmeta(const win_plan *p, uint32_t meta[51]) {
  memset(meta, 0, 51 * sizeof *meta);
  meta[0] = (uint32_t)p->nout;
  meta[1] = (uint32_t)p->rank;
  meta[2] = (uint32_t)p->wcount;
  for (int d = 0; d < p->rank; d++) {
    meta[3 + d] = (uint32_t)p->in[d];
    meta[11 + d] = (uint32_t)p->out[d];
    meta[19 + d] = (uint32_t)p->win[d];
    meta[27 + d] = (uint32_t)p->stride[d];
    meta[35 + d] = (uint32_t)p->dil[d];
    meta[43 + d] = (uint32_t)(int32_t)p->lo[d];
  }
}

/* pass 1 (x's dtype): each window's selected index; pass 2 (the result's):
 * per element of x, init plus the sources of the windows that chose it */
static int wscatter_gpu(nxvk_rec *r, const nxvk_op *op, const nxvk_attrs *a, nxvk_tensor *const *in,
                        nxvk_tensor *out) {
  win_plan p;
  int rc = wplan(op, a, &in[0]->shape, &p);
  if (rc) return rc;
  uint64_t nx = (uint64_t)in[0]->count;
  if (nx == 0) return NXVK_OK;
  nxvk_ctx *c = nxvk_rec_ctx(r);
  uint32_t meta[51];
  wmeta(&p, meta);
  char name[32];
  bool is_min = strcmp(op->d.name, "window_scatter_min") == 0, disjoint = in[0]->dtype == out->dtype;
  for (int d = 0; d < p.rank; d++) disjoint = disjoint && p.stride[d] >= p.win[d];
  if (disjoint) { /* one writer per element: init everywhere, then each window's sum in place */
    snprintf(name, sizeof name, "wscatter_%s", nxvk_dtype_name(out->dtype));
    nxvk_buffer *bufs[5] = {in[0]->buf, in[0]->buf, in[1]->buf, in[2]->buf, out->buf};
    meta[0] = (uint32_t)nx;
    uint32_t spec[2] = {NXVK_WG, 7u};
    rc = nxvk_dispatch_1d(r, name, spec, 2, meta, 51, bufs, 5, nx);
    if (rc == NXVK_OK && p.nout > 0) {
      meta[0] = (uint32_t)p.nout;
      spec[1] = is_min ? 9u : 8u;
      rc = nxvk_dispatch_1d(r, name, spec, 2, meta, 51, bufs, 5, (uint64_t)p.nout);
    }
    return rc;
  }
  nxvk_buffer *sel = NULL;
  rc = nxvk_buffer_create(c, (uint64_t)(p.nout > 0 ? p.nout : 1) * 4, false, &sel);
  if (rc) return rc;
  if (p.nout > 0) {
    snprintf(name, sizeof name, "wscatter_%s", nxvk_dtype_name(in[0]->dtype));
    uint32_t spec[2] = {NXVK_WG, is_min ? 5u : 4u};
    nxvk_buffer *bufs[5] = {in[0]->buf, sel, in[0]->buf, in[0]->buf, in[0]->buf};
    rc = nxvk_dispatch_1d(r, name, spec, 2, meta, 51, bufs, 5, (uint64_t)p.nout);
  }
  if (rc == NXVK_OK) {
    meta[0] = (uint32_t)nx;
    snprintf(name, sizeof name, "wscatter_%s", nxvk_dtype_name(out->dtype));
    uint32_t spec[2] = {NXVK_WG, 6u};
    nxvk_buffer *bufs[5] = {in[0]->buf, sel, in[1]->buf, in[2]->buf, out->buf};
    rc = nxvk_dispatch_1d(r, name, spec, 2, meta, 51, bufs, 5, nx);
  }
  nxvk_buffer_unref(c, sel);
  return rc;
}

/* The pooling path (shaders/window.comp, fast = 1): windows on the last two
 * axes only (the others window 1, stride 1, unpadded: folded into B), no
 * dilations, window width and stride along W at most 8.  VEC outputs per
 * invocation along W, so that VEC * SW is a multiple of 4 (aligned vector
 * loads when W and the low padding are); false: the general path. */
static bool pool_plan(const win_plan *p, uint32_t meta[11], uint32_t spec[6], uint64_t *n) {
  int R = p->rank;
  if (R < 1 || p->nout == 0) return false;
  for (int d = 0; d < R; d++)
    if (p->dil[d] != 1) return false;
  uint64_t B = 1;
  for (int d = 0; d < R - 2; d++) {
    if (p->win[d] != 1 || p->stride[d] != 1 || p->lo[d] != 0 || p->out[d] != p->in[d]) return false;
    B *= (uint64_t)p->in[d];
  }
  int h = R - 2, w = R - 1;
  int64_t H = h >= 0 ? p->in[h] : 1, OH = h >= 0 ? p->out[h] : 1, WH = h >= 0 ? p->win[h] : 1,
          SH = h >= 0 ? p->stride[h] : 1, LOH = h >= 0 ? p->lo[h] : 0;
  int64_t W = p->in[w], OW = p->out[w], WW = p->win[w], SW = p->stride[w], LOW = p->lo[w];
  if (WW > 8 || SW > 8 || B * (uint64_t)H * (uint64_t)W >= UINT32_MAX) return false;
  uint32_t vec = SW == 2 ? 2 : (SW == 4 || SW == 8) ? 1 : 4;
  uint64_t nv = ((uint64_t)OW + vec - 1) / vec, inv = B * (uint64_t)OH * nv;
  if (inv > UINT32_MAX) return false;
  bool vec_ok = W % 4 == 0 && LOW % 4 == 0 && (vec * (uint64_t)SW) % 4 == 0;
  uint32_t m[11] = {(uint32_t)inv, (uint32_t)nv, (uint32_t)OH, (uint32_t)OW, (uint32_t)H, (uint32_t)W,
                    (uint32_t)WH, (uint32_t)SH, (uint32_t)(int32_t)LOH, (uint32_t)(int32_t)LOW, vec_ok};
  memcpy(meta, m, sizeof m);
  spec[2] = 1;
  spec[3] = (uint32_t)WW;
  spec[4] = (uint32_t)SW;
  spec[5] = vec;
  *n = inv;
  return true;
}

int nxvk_window_gpu(nxvk_rec *r, const nxvk_op *op, const nxvk_attrs *a, nxvk_tensor *const *in,
                    int nin, nxvk_tensor *out) {
  (void)nin;
  if (is_scatter(op)) return wscatter_gpu(r, op, a, in, out);
  win_plan p;
  int rc = wplan(op, a, &in[0]->shape, &p);
  if (rc) return rc;
  char name[32];
  /* products of floats: windoww_<dtype> (window.comp -DWIDE), whose running
   * product has a wide exponent range, as the reference's */
  bool wide = op->code == NXVK_SCAN_PRODUCT && nxvk_dtype_is_float(in[0]->dtype) &&
              !nxvk_rec_ctx(r)->tuning->scan_narrow;
  snprintf(name, sizeof name, "%s_%s", wide ? "windoww" : "window", nxvk_dtype_name(in[0]->dtype));
  /* the input twice: scalar and 4-vector reads (binding 3) */
  nxvk_buffer *bufs[3] = {in[0]->buf, out->buf, in[0]->buf};
  uint32_t spec[6] = {NXVK_WG, (uint32_t)op->code, 0, 2, 2, 2};
  uint64_t n;
  uint32_t pm[11];
  if (pool_plan(&p, pm, spec, &n))
    return nxvk_dispatch_1d(r, name, spec, 6, pm, 11, bufs, 3, n);
  uint32_t meta[51];
  wmeta(&p, meta);
  return nxvk_dispatch_1d(r, name, spec, 6, meta, 51, bufs, 3, (uint64_t)p.nout);
}

/* x's element that window o selects (-1: the window is all padding). */
static int64_t wselect(const win_plan *p, const nxvk_host *x, int64_t o, bool max) {
  int64_t base[NXVK_MAX_RANK], rr = o, best = -1;
  for (int k = p->rank - 1; k >= 0; k--) {
    base[k] = (rr % p->out[k]) * p->stride[k] - p->lo[k];
    rr /= p->out[k];
  }
  bool fl = nxvk_dtype_is_float(x->dtype), u64 = x->dtype == NXVK_U64;
  double acc = 0;
  int64_t iacc = 0;
  for (int64_t w = 0; w < p->wcount; w++) {
    int64_t rw = w, off = 0, mul = 1;
    bool inside = true;
    for (int k = p->rank - 1; k >= 0; k--) {
      int64_t c = base[k] + rw % p->win[k];
      rw /= p->win[k];
      inside = inside && c >= 0 && c < p->in[k];
      off += c * mul;
      mul *= p->in[k];
    }
    if (!inside) continue;
    bool take;
    if (fl) {
      double v = nxvk_host_get(x, off); /* every float dtype is exact in double */
      take = best < 0 || (max ? v >= acc : v <= acc); /* IEEE: NaN never, -0 == +0 */
      if (take) acc = v;
    } else {
      int64_t v = nxvk_host_get_int(x, off);
      if (u64) take = best < 0 || (max ? (uint64_t)v >= (uint64_t)iacc : (uint64_t)v <= (uint64_t)iacc);
      else take = best < 0 || (max ? v >= iacc : v <= iacc);
      if (take) iacc = v;
    }
    if (take) best = off;
  }
  return best;
}

/* init, then each window's source added onto its selected element in
 * row-major window order, rounded at each step as the kernel (f32, f16
 * and bf16 in float, rounded to 16 bits once; f64 in double; integers
 * wrap) */
static int wscatter_ref(const nxvk_op *op, const nxvk_attrs *a, const nxvk_host *in, nxvk_host *out) {
  win_plan p;
  int rc = wplan(op, a, &in[0].shape, &p);
  if (rc) return rc;
  int64_t nx = nxvk_host_count(&in[0]);
  nxvk_dtype d = out->dtype;
  bool fl = nxvk_dtype_is_float(d), max = strcmp(op->d.name, "window_scatter_min") != 0;
  double *facc = fl ? malloc((size_t)(nx ? nx : 1) * sizeof *facc) : NULL;
  int64_t *iacc = fl ? NULL : malloc((size_t)(nx ? nx : 1) * sizeof *iacc);
  if (!facc && !iacc) return nxvk_seterr(NXVK_E_NO_MEMORY, "out of host memory");
  for (int64_t i = 0; i < nx; i++) {
    if (fl) facc[i] = nxvk_host_get(&in[2], 0);
    else iacc[i] = nxvk_host_get_int(&in[2], 0);
  }
  for (int64_t o = 0; o < p.nout; o++) {
    int64_t e = wselect(&p, &in[0], o, max);
    if (e < 0) continue;
    if (d == NXVK_F64) facc[e] += nxvk_host_get(&in[1], o);
    else if (fl) facc[e] = (double)((float)facc[e] + (float)nxvk_host_get(&in[1], o));
    else iacc[e] = (int64_t)((uint64_t)iacc[e] + (uint64_t)nxvk_host_get_int(&in[1], o));
  }
  for (int64_t i = 0; i < nx; i++) {
    if (fl) nxvk_host_set(out, i, facc[i]);
    else nxvk_host_set_int(out, i, iacc[i]);
  }
  free(facc);
  free(iacc);
  return NXVK_OK;
}

/* The reference: the window in row-major order from the identity (floats
 * in long double, rounded once; integers wrap). */
int nxvk_window_ref(const nxvk_op *op, const nxvk_attrs *a, const nxvk_host *in, int nin,
                    nxvk_host *out) {
  (void)nin;
  if (is_scatter(op)) return wscatter_ref(op, a, in, out);
  win_plan p;
  int rc = wplan(op, a, &in[0].shape, &p);
  if (rc) return rc;
  nxvk_dtype d = in[0].dtype;
  bool fl = nxvk_dtype_is_float(d), u64 = d == NXVK_U64;
  const nxvk_dtype_info *ti = nxvk_dtype_info_of(d);
  int64_t ilo, ihi;
  if (ti->cls == NXVK_CLASS_SIGNED) {
    ihi = ti->bits == 64 ? INT64_MAX : (int64_t)((UINT64_C(1) << (ti->bits - 1)) - 1);
    ilo = -ihi - 1;
  } else {
    ilo = 0;
    ihi = ti->bits == 64 ? -1 : (int64_t)((UINT64_C(1) << ti->bits) - 1);
  }
  for (int64_t o = 0; o < p.nout; o++) {
    int64_t base[NXVK_MAX_RANK], rr = o;
    for (int k = p.rank - 1; k >= 0; k--) {
      base[k] = (rr % p.out[k]) * p.stride[k] - p.lo[k];
      rr /= p.out[k];
    }
    long double acc = op->code == NXVK_SCAN_SUM ? 0.0L : op->code == NXVK_SCAN_PRODUCT ? 1.0L
                      : op->code == NXVK_SCAN_MAX ? -(long double)INFINITY : (long double)INFINITY;
    nxvk_wide prod = {1.0L, 0}; /* products of floats: no partial one under- or overflows */
    int64_t iacc = op->code == NXVK_SCAN_SUM ? 0 : op->code == NXVK_SCAN_PRODUCT ? 1
                   : op->code == NXVK_SCAN_MAX ? ilo : ihi;
    for (int64_t w = 0; w < p.wcount; w++) {
      int64_t rw = w, off = 0, mul = 1;
      bool inside = true;
      for (int k = p.rank - 1; k >= 0; k--) {
        int64_t c = base[k] + (rw % p.win[k]) * p.dil[k];
        rw /= p.win[k];
        inside = inside && c >= 0 && c < p.in[k];
        off += c * mul;
        mul *= p.in[k];
      }
      if (!inside) continue;
      if (fl) {
        long double v = nxvk_host_get(&in[0], off);
        if (op->code == NXVK_SCAN_SUM) acc += v;
        else if (op->code == NXVK_SCAN_PRODUCT) nxvk_wide_mul(&prod, v);
        else if (isnan(acc)) ;
        else if (isnan(v)) acc = v;
        else if (v == acc && signbit(v) != signbit(acc)) acc = op->code == NXVK_SCAN_MAX ? 0.0L : -0.0L;
        else if (op->code == NXVK_SCAN_MAX ? v > acc : v < acc) acc = v;
      } else {
        int64_t v = nxvk_host_get_int(&in[0], off);
        bool lt = u64 ? (uint64_t)v < (uint64_t)iacc : v < iacc;
        bool gt = u64 ? (uint64_t)v > (uint64_t)iacc : v > iacc;
        if (op->code == NXVK_SCAN_SUM) iacc = (int64_t)((uint64_t)iacc + (uint64_t)v);
        else if (op->code == NXVK_SCAN_PRODUCT) iacc = (int64_t)((uint64_t)iacc * (uint64_t)v);
        else if (op->code == NXVK_SCAN_MAX ? gt : lt) iacc = v;
      }
    }
    if (fl && op->code == NXVK_SCAN_PRODUCT) nxvk_host_set(out, o, nxvk_wide_value(&prod, d));
    else if (fl) nxvk_host_set(out, o, d == NXVK_F64 ? (double)acc : (double)(float)acc);
    else nxvk_host_set_int(out, o, iacc);
  }
  return NXVK_OK;
}
