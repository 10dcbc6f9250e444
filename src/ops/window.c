/*
 * window.c - window_sum window_product window_max window_min with Nx's
 * options: "window_dimensions" (one per axis, required), "strides" and
 * "window_dilations" (default 1s), "padding" ("valid" (default), "same" as
 * Nx computes it from the dilated window, or [low, high] pairs, negative
 * ones cropping).  Output dim: (padded - dilated window) / stride + 1, 0
 * when the dilated window is larger than the padded axis.  GPU:
 * shaders/window.comp, one output element per invocation.
 */
#include "ops.h"

#include <math.h>
#include <stdio.h>

typedef struct {
  int rank;
  int64_t in[NXVK_MAX_RANK], out[NXVK_MAX_RANK], win[NXVK_MAX_RANK], stride[NXVK_MAX_RANK],
      dil[NXVK_MAX_RANK], lo[NXVK_MAX_RANK];
  int64_t nout, wcount;
} win_plan;

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

int nxvk_window_infer(const nxvk_op *op, const nxvk_attrs *a, const nxvk_meta *in, int nin,
                      nxvk_meta *out) {
  (void)nin;
  win_plan p;
  int rc = wplan(op, a, &in->shape, &p);
  if (rc) return rc;
  out->dtype = in->dtype;
  out->shape.rank = p.rank;
  for (int d = 0; d < p.rank; d++) out->shape.dim[d] = p.out[d];
  return NXVK_OK;
}

int nxvk_window_gpu(nxvk_rec *r, const nxvk_op *op, const nxvk_attrs *a, nxvk_tensor *const *in,
                    int nin, nxvk_tensor *out) {
  (void)nin;
  win_plan p;
  int rc = wplan(op, a, &in[0]->shape, &p);
  if (rc) return rc;
  uint32_t meta[51] = {(uint32_t)p.nout, (uint32_t)p.rank, (uint32_t)p.wcount};
  for (int d = 0; d < p.rank; d++) {
    meta[3 + d] = (uint32_t)p.in[d];
    meta[11 + d] = (uint32_t)p.out[d];
    meta[19 + d] = (uint32_t)p.win[d];
    meta[27 + d] = (uint32_t)p.stride[d];
    meta[35 + d] = (uint32_t)p.dil[d];
    meta[43 + d] = (uint32_t)(int32_t)p.lo[d];
  }
  char name[32];
  snprintf(name, sizeof name, "window_%s", nxvk_dtype_name(in[0]->dtype));
  uint32_t spec[2] = {NXVK_WG, (uint32_t)op->code};
  nxvk_buffer *bufs[2] = {in[0]->buf, out->buf};
  return nxvk_dispatch_1d(r, name, spec, 2, meta, 51, bufs, 2, (uint64_t)p.nout);
}

/* The reference: the window in row-major order from the identity (floats
 * in long double, rounded once; integers wrap). */
int nxvk_window_ref(const nxvk_op *op, const nxvk_attrs *a, const nxvk_host *in, int nin,
                    nxvk_host *out) {
  (void)nin;
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
        else if (op->code == NXVK_SCAN_PRODUCT) acc *= v;
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
    if (fl) nxvk_host_set(out, o, d == NXVK_F64 ? (double)acc : (double)(float)acc);
    else nxvk_host_set_int(out, o, iacc);
  }
  return NXVK_OK;
}
