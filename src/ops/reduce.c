/*
 * reduce.c - sum product reduce_max reduce_min argmax argmin mean over any
 * set of axes (all when "axes" is absent), keep_axes optional.
 */
#include "ops.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Which axes are reduced, after the checks every reduction shares. */
static int reduced_axes(const nxvk_op *op, const nxvk_attrs *a, int rank, bool *red) {
  for (int d = 0; d < rank; d++) red[d] = !(a->set & NXVK_ATTR_AXES);
  if (!(a->set & NXVK_ATTR_AXES)) return NXVK_OK;
  for (int i = 0; i < a->naxes; i++) {
    int ax = a->axes[i];
    if (ax < 0) ax += rank;
    if (ax < 0 || ax >= rank)
      return nxvk_seterr(NXVK_E_BAD_ATTR, "%s: axes: axis %d is out of range for rank %d",
                         op->d.name, a->axes[i], rank);
    if (red[ax])
      return nxvk_seterr(NXVK_E_BAD_ATTR, "%s: axes: axis %d given twice", op->d.name, a->axes[i]);
    red[ax] = true;
  }
  return NXVK_OK;
}

typedef struct {
  nxvk_shape kept, reduced;            /* dims */
  int64_t kept_stride[NXVK_MAX_RANK];  /* input strides */
  int64_t red_stride[NXVK_MAX_RANK];
  int64_t nout, nred;
} red_plan;

/* Merge neighbouring dims that are one run in memory (and drop size-1
 * dims), so kernels do fewer divisions per element; the row-major order of
 * the set is unchanged, so argmax indices stay the same. */
static void coalesce(nxvk_shape *s, int64_t *st) {
  int r = 0;
  for (int d = 0; d < s->rank; d++) {
    if (s->dim[d] == 1) continue;
    if (r > 0 && st[r - 1] == s->dim[d] * st[d]) {
      s->dim[r - 1] *= s->dim[d];
      st[r - 1] = st[d];
      continue;
    }
    s->dim[r] = s->dim[d];
    st[r] = st[d];
    r++;
  }
  s->rank = r;
}

static int plan(const nxvk_op *op, const nxvk_attrs *a, const nxvk_shape *in, red_plan *p) {
  bool red[NXVK_MAX_RANK];
  int rc = reduced_axes(op, a, in->rank, red);
  if (rc) return rc;
  int64_t st[NXVK_MAX_RANK];
  nxvk_contiguous_strides(in, st);
  memset(p, 0, sizeof *p);
  p->nout = p->nred = 1;
  for (int d = 0; d < in->rank; d++) {
    if (red[d]) {
      p->red_stride[p->reduced.rank] = st[d];
      p->reduced.dim[p->reduced.rank++] = in->dim[d];
      p->nred *= in->dim[d];
    } else {
      p->kept_stride[p->kept.rank] = st[d];
      p->kept.dim[p->kept.rank++] = in->dim[d];
      p->nout *= in->dim[d];
    }
  }
  coalesce(&p->kept, p->kept_stride);
  coalesce(&p->reduced, p->red_stride);
  return NXVK_OK;
}

static bool is_arg(const nxvk_op *op) {
  return op->code == NXVK_RED_ARGMAX || op->code == NXVK_RED_ARGMIN;
}

static bool is_all_any(const nxvk_op *op) {
  return op->code == NXVK_RED_ALL || op->code == NXVK_RED_ANY;
}

int nxvk_reduce_infer(const nxvk_op *op, const nxvk_attrs *a, const nxvk_meta *in, int nin,
                      nxvk_meta *out) {
  (void)nin;
  bool red[NXVK_MAX_RANK];
  int rc = reduced_axes(op, a, in->shape.rank, red);
  if (rc) return rc;
  int64_t nred = 1;
  out->shape.rank = 0;
  for (int d = 0; d < in->shape.rank; d++) {
    if (red[d]) nred *= in->shape.dim[d];
    if (!red[d])
      out->shape.dim[out->shape.rank++] = in->shape.dim[d];
    else if (a->keep_axes)
      out->shape.dim[out->shape.rank++] = 1;
  }
  if (is_arg(op) && nred == 0)
    return nxvk_seterr(NXVK_E_SHAPE_MISMATCH, "%s of an empty set of elements", op->d.name);
  out->dtype = is_arg(op) ? NXVK_I32 : is_all_any(op) ? NXVK_BOOL : in->dtype;
  return NXVK_OK;
}

/* Partials per output: enough workgroups to fill a GPU when there are few
 * outputs with many elements each, at most REDUCE_PARTIALS in all; 1 means
 * a single pass.  1 024 rather than 2 048: a long sum spends less in the
 * last pass, and the largest GPUs measured (132 SMs) are still full. */
#define REDUCE_PARTIALS 1024
#define REDUCE_PARTIALS_MAX 8192 /* NXVK_REDUCE_PARTIALS's largest */
static uint32_t partials_for(const nxvk_ctx *c, int64_t nout, int64_t nred, bool vec) {
  /* runs read as 16-byte vectors: 512 (twice the elements a workgroup) */
  int64_t cap = c->tuning->reduce_partials ? c->tuning->reduce_partials : vec ? REDUCE_PARTIALS / 2 : REDUCE_PARTIALS;
  int64_t p = (nred + 4095) / 4096;
  int64_t room = nout >= cap ? 1 : cap / nout;
  if (p > room) p = room;
  return p < 2 ? 1 : (uint32_t)p;
}

/* all and any: logical_not(x) as u8 (1 where zero), its max (all) or min
 * (any) over the axes, and logical_not of that: three kernels of their own
 * (empty sets: max of none is 0 and min 255, so all gives true, any false). */
static int all_any_gpu(nxvk_rec *r, const nxvk_op *op, const nxvk_attrs *a, nxvk_tensor *in,
                       nxvk_tensor *out) {
  nxvk_ctx *c = nxvk_rec_ctx(r);
  const nxvk_op *lnot = nxvk_op_from_desc(nxvk_op_find("logical_not"));
  const nxvk_op *ext = nxvk_op_from_desc(nxvk_op_find(op->code == NXVK_RED_ALL ? "reduce_max" : "reduce_min"));
  nxvk_tensor zero = {.c = c, .dtype = NXVK_U8, .shape = in->shape, .count = in->count};
  nxvk_tensor red = {.c = c, .dtype = NXVK_U8, .shape = out->shape, .count = out->count};
  int rc = nxvk_buffer_create(c, (VkDeviceSize)(in->count > 0 ? in->count : 1), false, &zero.buf);
  if (rc == NXVK_OK) rc = nxvk_buffer_create(c, (VkDeviceSize)out->count, false, &red.buf);
  if (rc == NXVK_OK && in->count > 0) rc = nxvk_ew_gpu(r, lnot, NULL, &in, 1, &zero);
  nxvk_tensor *pz = &zero, *pr = &red;
  if (rc == NXVK_OK) rc = nxvk_reduce_gpu(r, ext, a, &pz, 1, &red);
  if (rc == NXVK_OK) rc = nxvk_ew_gpu(r, lnot, NULL, &pr, 1, out);
  /* the recording holds its own references until the work completes */
  nxvk_buffer_unref(c, zero.buf);
  nxvk_buffer_unref(c, red.buf);
  return rc;
}

int nxvk_reduce_gpu(nxvk_rec *r, const nxvk_op *op, const nxvk_attrs *a, nxvk_tensor *const *in,
                    int nin, nxvk_tensor *out) {
  (void)nin;
  if (is_all_any(op)) return all_any_gpu(r, op, a, in[0], out);
  red_plan p;
  int rc = plan(op, a, &in[0]->shape, &p);
  if (rc) return rc;
  uint32_t meta[39] = {(uint32_t)p.nout, (uint32_t)p.nred, (uint32_t)p.kept.rank,
                       (uint32_t)p.reduced.rank};
  for (int d = 0; d < p.kept.rank; d++) {
    meta[4 + d] = (uint32_t)p.kept.dim[d];
    meta[12 + d] = (uint32_t)p.kept_stride[d];
  }
  for (int d = 0; d < p.reduced.rank; d++) {
    meta[20 + d] = (uint32_t)p.reduced.dim[d];
    meta[28 + d] = (uint32_t)p.red_stride[d];
  }
  nxvk_ctx *c = nxvk_rec_ctx(r);
  bool arg = is_arg(op);
  /* reduce.comp's op codes 7 and 8: argmax and argmin, ties to the last */
  uint32_t code = (uint32_t)op->code + (arg && a && a->tie_high ? 3u : 0u);
  char name[32];
  snprintf(name, sizeof name, "%sreduce_%s", arg ? "arg" : "", nxvk_dtype_name(in[0]->dtype));
  /* f32, f16, bf16 sums, means, products: contiguous runs as 16-byte
   * vectors (NXVK_REDUCE_VEC) */
  nxvk_dtype dt = in[0]->dtype;
  bool arith = op->code == NXVK_RED_SUM || op->code == NXVK_RED_MEAN || op->code == NXVK_RED_PRODUCT;
  uint32_t vec = arith && (dt == NXVK_F32 || dt == NXVK_F16 || dt == NXVK_BF16) ? c->tuning->reduce_vec : 0;
  bool runs = p.reduced.rank == 1 && p.red_stride[0] == 1;
  uint32_t P = partials_for(c, p.nout, p.nred, vec && runs);
  uint32_t wg = c->tuning->reduce_wg ? c->tuning->reduce_wg : NXVK_WG;
  uint32_t groups = nxvk_groups_for(c, (uint64_t)p.nout * P, 1);
  /* f32 (f16, bf16) sums, means, products: NXVK_REDUCE_ADD's form (reduce.comp ADD) */
  uint32_t add = arith && nxvk_dtype_is_float(dt) && dt != NXVK_F64 ? c->tuning->reduce_add : 0;
  /* both builds bind four buffers; the ones a mode does not use get any */
  if (P == 1) {
    uint32_t spec[6] = {wg, code, 0, 0, add, vec};
    nxvk_buffer *bufs[4] = {in[0]->buf, out->buf, in[0]->buf, out->buf};
    return nxvk_dispatch_grid(r, name, spec, 6, meta, 38, bufs, 4, groups, 1, 1);
  }
  /* partial results in a buffer the recording holds.  With reduce_fold
   * (not for argmax/argmin) the partial pass finishes the job itself, one
   * dispatch fewer, and its counters follow the partials (4-byte aligned:
   * esz is 4 or 8, u8 pads). */
  /* f16 / bf16 partials are f32 (reduce.comp), rounded once at the end */
  size_t esz = (in[0]->dtype == NXVK_F16 || in[0]->dtype == NXVK_BF16) ? 4 : nxvk_dtype_size(in[0]->dtype);
  uint64_t np = (uint64_t)p.nout * P;
  bool fold = !arg && c->tuning->reduce_fold;
  uint64_t count_at = (np * esz + 3) / 4;
  nxvk_buffer *pval = NULL, *pidx = NULL;
  rc = nxvk_buffer_create(c, fold ? (count_at + (uint64_t)p.nout) * 4 : np * esz, false, &pval);
  if (rc == NXVK_OK && arg) rc = nxvk_buffer_create(c, np * 4, false, &pidx);
  meta[36] = P;
  meta[37] = (uint32_t)((p.nred + P - 1) / P);
  meta[38] = (uint32_t)count_at;
  if (rc == NXVK_OK && fold) {
    /* P >= 2 needs nout <= cap / 2 (partials_for) */
    static const uint32_t zeros[REDUCE_PARTIALS_MAX / 2];
    rc = nxvk_rec_update(r, pval, count_at * 4, zeros, (VkDeviceSize)p.nout * 4);
  }
  if (rc == NXVK_OK) {
    uint32_t spec[6] = {wg, code, 1, fold, add, vec};
    nxvk_buffer *bufs[4] = {in[0]->buf, arg ? pidx : pval, pval,
                             arg ? in[0]->buf : out->buf};
    rc = nxvk_dispatch_grid(r, name, spec, 6, meta, 39, bufs, 4, groups, 1, 1);
  }
  if (rc == NXVK_OK && !fold) {
    uint32_t fmeta[3] = {(uint32_t)p.nout, P, (uint32_t)p.nred};
    uint32_t spec[6] = {wg, code, 2, 0, add, 0};
    nxvk_buffer *bufs[4] = {pval, out->buf, pval, arg ? pidx : pval};
    rc = nxvk_dispatch_grid(r, name, spec, 6, fmeta, 3, bufs, 4,
                            nxvk_groups_for(c, (uint64_t)p.nout, 1), 1, 1);
  }
  /* the recording holds its own references until the work completes */
  nxvk_buffer_unref(c, pval);
  nxvk_buffer_unref(c, pidx);
  return rc;
}

/* Offset in the input of element j of the reduced set for output o. */
static int64_t offset_of(const red_plan *p, int64_t o, int64_t j) {
  int64_t off = 0;
  for (int d = p->kept.rank - 1; d >= 0; d--) {
    off += (o % p->kept.dim[d]) * p->kept_stride[d];
    o /= p->kept.dim[d];
  }
  for (int d = p->reduced.rank - 1; d >= 0; d--) {
    off += (j % p->reduced.dim[d]) * p->red_stride[d];
    j /= p->reduced.dim[d];
  }
  return off;
}

/* The smallest and largest value of an integer dtype, as int64 bits (u64:
 * 0 and all ones, compared unsigned). */
static void int_range(nxvk_dtype d, int64_t *lo, int64_t *hi) {
  const nxvk_dtype_info *t = nxvk_dtype_info_of(d);
  if (t->cls == NXVK_CLASS_SIGNED) {
    *hi = t->bits == 64 ? INT64_MAX : (int64_t)((UINT64_C(1) << (t->bits - 1)) - 1);
    *lo = -*hi - 1;
  } else {
    *lo = 0;
    *hi = t->bits == 64 ? -1 : (int64_t)((UINT64_C(1) << t->bits) - 1);
  }
}

static bool int_less(nxvk_dtype d, int64_t a, int64_t b) {
  return d == NXVK_U64 ? (uint64_t)a < (uint64_t)b : a < b;
}

/* Integers: exact in int64, sums and products wrapping like the GPU. */
static void reduce_ref_int(const nxvk_op *op, const red_plan *p, const nxvk_host *in,
                           nxvk_host *out, bool hi_ties) {
  nxvk_dtype d = in->dtype;
  int64_t lo, hi;
  int_range(d, &lo, &hi);
  for (int64_t o = 0; o < p->nout; o++) {
    uint64_t acc = op->code == NXVK_RED_PRODUCT ? 1 : 0;
    int64_t ext = op->code == NXVK_RED_MAX ? lo : hi, best = -1;
    for (int64_t j = 0; j < p->nred; j++) {
      int64_t v = nxvk_host_get_int(in, offset_of(p, o, j));
      switch (op->code) {
      case NXVK_RED_SUM: acc += (uint64_t)v; break;
      case NXVK_RED_PRODUCT: acc *= (uint64_t)v; break;
      case NXVK_RED_MAX: if (int_less(d, ext, v)) ext = v; break;
      case NXVK_RED_MIN: if (int_less(d, v, ext)) ext = v; break;
      default: /* argmax / argmin: the first extreme */
        if (best < 0 || (op->code == NXVK_RED_ARGMAX ? int_less(d, ext, v) : int_less(d, v, ext)) ||
            (hi_ties && v == ext)) {
          ext = v;
          best = j;
        }
        break;
      }
    }
    if (is_arg(op)) ((int32_t *)out->data)[o] = (int32_t)best;
    else if (op->code == NXVK_RED_SUM || op->code == NXVK_RED_PRODUCT) nxvk_host_set_int(out, o, (int64_t)acc);
    else nxvk_host_set_int(out, o, ext);
  }
}

int nxvk_reduce_ref(const nxvk_op *op, const nxvk_attrs *a, const nxvk_host *in, int nin,
                    nxvk_host *out) {
  (void)nin;
  red_plan p;
  int rc = plan(op, a, &in[0].shape, &p);
  if (rc) return rc;
  if (is_all_any(op)) { /* nonzero is true, NaN too */
    bool fl = nxvk_dtype_is_float(in[0].dtype);
    for (int64_t o = 0; o < p.nout; o++) {
      bool acc = op->code == NXVK_RED_ALL;
      for (int64_t j = 0; j < p.nred; j++) {
        int64_t off = offset_of(&p, o, j);
        bool t = fl ? nxvk_host_get(&in[0], off) != 0 || isnan(nxvk_host_get(&in[0], off))
                    : nxvk_host_get_int(&in[0], off) != 0;
        if (op->code == NXVK_RED_ALL) acc = acc && t;
        else acc = acc || t;
      }
      nxvk_host_set_int(out, o, acc);
    }
    return NXVK_OK;
  }
  bool hi_ties = a && a->tie_high;
  if (!nxvk_dtype_is_float(in[0].dtype)) {
    reduce_ref_int(op, &p, &in[0], out, hi_ties);
    return NXVK_OK;
  }
  for (int64_t o = 0; o < p.nout; o++) {
    long double acc;
    int64_t best = -1;
    switch (op->code) {
    case NXVK_RED_SUM: case NXVK_RED_MEAN: acc = 0; break;
    case NXVK_RED_PRODUCT: acc = 1; break;
    case NXVK_RED_MAX: acc = -(long double)INFINITY; break;
    default: acc = (long double)INFINITY; break;
    }
    for (int64_t j = 0; j < p.nred; j++) {
      long double v = nxvk_host_get(&in[0], offset_of(&p, o, j));
      switch (op->code) {
      case NXVK_RED_SUM:
      case NXVK_RED_MEAN:
        acc += v;
        break;
      case NXVK_RED_PRODUCT:
        acc *= v;
        break;
      case NXVK_RED_MAX:
      case NXVK_RED_MIN:
        if (isnan(acc)) break;
        if (isnan(v) || (op->code == NXVK_RED_MAX ? v > acc : v < acc)) acc = v;
        /* equal zeros: max gives +0 and min -0 whatever the order (as the kernel) */
        else if (v == acc && signbit(v) != signbit(acc)) acc = op->code == NXVK_RED_MAX ? 0.0L : -0.0L;
        break;
      default: { /* argmax / argmin: first NaN, else first extreme (tie_break high: the last) */
        bool better;
        if (best < 0) better = true;
        else if (isnan(acc)) better = hi_ties && isnan(v);
        else if (isnan(v)) better = true;
        else better = (op->code == NXVK_RED_ARGMAX ? v > acc : v < acc) || (hi_ties && v == acc);
        if (better) { acc = v; best = j; }
        break;
      }
      }
    }
    if (is_arg(op)) {
      ((int32_t *)out->data)[o] = (int32_t)best;
    } else {
      if (op->code == NXVK_RED_MEAN) acc = acc / (long double)p.nred;
      /* f16 / bf16 through f32, as their elementwise results */
      if (out->dtype != NXVK_F64) nxvk_host_set(out, o, (double)(float)acc);
      else nxvk_host_set(out, o, (double)acc);
    }
  }
  return NXVK_OK;
}
