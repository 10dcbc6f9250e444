/*
 * index.c - shape and indexing ops beyond the strided copy: broadcast (with
 * explicit axes), pad, dynamic_slice, put_slice, gather, take,
 * take_along_axis, indexed_add and indexed_put.  Nx 0.7.3's semantics
 * (nx.ex, Nx.BinaryBackend), with the index rules written down in
 * nxvk-run(1):
 *   - gather, take, take_along_axis clamp every index into [0, dim - 1], and
 *     dynamic_slice / put_slice clamp each start into [0, dim - length], as
 *     Nx clamps dynamic indices (Nx.BinaryBackend raises instead for the
 *     first three; a kernel cannot raise);
 *   - indexed_add and indexed_put drop an update whose index is out of range
 *     (XLA's scatter, what EXLA does);
 *   - indexed_put: of updates that meet, the last row wins, as in
 *     Nx.BinaryBackend (deterministic: an owner pass takes the largest row,
 *     in one of three pass structures, put_form);
 *   - indexed_add: integers add exactly (wrapping) in any order; floats add
 *     one update at a time by atomics (f32 atomicAdd where the device has
 *     VK_EXT_shader_atomic_float, else compare-and-swap; f64 by 64-bit
 *     compare-and-swap where it has shaderBufferInt64Atomics), so where
 *     indices repeat the order of the additions (and so the rounding) varies
 *     between runs (limits.json).
 * Index operands take every integer dtype.
 *
 * GPU: broadcast and pad are strided copies (copy.comp); the others are one
 * gather kernel (shaders/gather.comp) or scatter passes (scatter.comp), both
 * compiled at run time per element size / mode and index dtype.
 */
#include "ops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- shared ---- */

static int dtype_ok(const nxvk_op *op, const nxvk_meta *m, int k, const char *what) {
  if ((unsigned)m->dtype >= NXVK_NDTYPES || !(op->d.dtypes & NXVK_DT(m->dtype)))
    return nxvk_seterr(NXVK_E_UNSUPPORTED_DTYPE, "%s does not take %s (input %d, the %s)",
                       op->d.name, nxvk_dtype_name(m->dtype), k, what);
  return NXVK_OK;
}

static int index_ok(const nxvk_op *op, const nxvk_meta *m, int k) {
  if ((unsigned)m->dtype >= NXVK_NDTYPES || !nxvk_dtype_is_int(m->dtype))
    return nxvk_seterr(NXVK_E_DTYPE_MISMATCH,
                       "%s: the indices (input %d) must be an integer tensor, not %s", op->d.name,
                       k, nxvk_dtype_name(m->dtype));
  return NXVK_OK;
}

static int same_dtype(const nxvk_op *op, const nxvk_meta *a, int ka, const nxvk_meta *b, int kb) {
  if (a->dtype != b->dtype)
    return nxvk_seterr(NXVK_E_DTYPE_MISMATCH,
                       "%s: input %d is %s but input %d is %s (convert with as_type)", op->d.name,
                       ka, nxvk_dtype_name(a->dtype), kb, nxvk_dtype_name(b->dtype));
  return NXVK_OK;
}

static int norm_axis(const nxvk_op *op, const char *attr, int ax, int rank, int *out) {
  int a = ax < 0 ? ax + rank : ax;
  if (a < 0 || a >= rank)
    return nxvk_seterr(NXVK_E_BAD_ATTR, "%s: attribute \"%s\": axis %d is out of range for rank %d",
                       op->d.name, attr, ax, rank);
  *out = a;
  return NXVK_OK;
}

/* "axes" as a strictly increasing list of n axes of a rank-r tensor
 * (default 0..n-1). */
static int index_axes(const nxvk_op *op, const nxvk_attrs *a, int n, int rank, int *axes) {
  if (!(a->set & NXVK_ATTR_AXES)) {
    for (int k = 0; k < n; k++) axes[k] = k;
    return NXVK_OK;
  }
  if (a->naxes != n)
    return nxvk_seterr(NXVK_E_BAD_ATTR,
                       "%s: attribute \"axes\" has %d entries but the indices' last axis is %d",
                       op->d.name, a->naxes, n);
  for (int k = 0; k < n; k++) {
    int rc = norm_axis(op, "axes", a->axes[k], rank, &axes[k]);
    if (rc) return rc;
    if (k > 0 && axes[k] <= axes[k - 1])
      return nxvk_seterr(NXVK_E_BAD_ATTR, "%s: attribute \"axes\" must be strictly increasing",
                         op->d.name);
  }
  return NXVK_OK;
}

static bool in_list(const int *axes, int n, int d) {
  for (int k = 0; k < n; k++)
    if (axes[k] == d) return true;
  return false;
}

/* Element i of an index tensor clamped into [0, lim]; *inr: it was in range. */
static int64_t host_index(const nxvk_host *ix, int64_t i, int64_t lim, bool *inr) {
  int64_t v = nxvk_host_get_int(ix, i);
  if (ix->dtype == NXVK_U64 && v < 0) { /* beyond 2^63 */
    *inr = false;
    return lim;
  }
  *inr = v >= 0 && v <= lim;
  return v < 0 ? 0 : v > lim ? lim : v;
}

static void elem_copy(nxvk_host *dst, int64_t di, const nxvk_host *src, int64_t si) {
  size_t es = nxvk_dtype_size(src->dtype);
  memcpy((char *)dst->data + di * (int64_t)es, (const char *)src->data + si * (int64_t)es, es);
}

static char eb_char(nxvk_dtype d) { return (char)('0' + nxvk_dtype_size(d)); }

/* The gather / scatter plan: over `dims`, element c reads (or writes)
 * base + sum(c_d A_d) + sum_k clamp(ix[ibase + sum(c_d B_d) + k KS]) S_k. */
typedef struct {
  nxvk_shape dims;
  int64_t base, ibase, A[NXVK_MAX_RANK], B[NXVK_MAX_RANK];
  int K;
  int64_t KS, S[NXVK_MAX_RANK], lim[NXVK_MAX_RANK];
} plan;

/* Every plan's start: zeroed, over dims, K lookups of one index each
 * (KS 1); st gets the contiguous strides of the tensor t. */
static void plan_start(plan *p, const nxvk_shape *dims, int K, const nxvk_shape *t, int64_t *st) {
  memset(p, 0, sizeof *p);
  p->dims = *dims;
  p->K = K;
  p->KS = 1;
  nxvk_contiguous_strides(t, st);
}

static void plan_meta(const plan *p, int64_t n, uint32_t *meta) {
  memset(meta, 0, 48 * sizeof *meta);
  meta[0] = (uint32_t)n;
  meta[1] = (uint32_t)p->dims.rank;
  meta[2] = (uint32_t)p->K;
  meta[3] = (uint32_t)p->KS;
  meta[4] = (uint32_t)p->base;
  meta[5] = (uint32_t)p->ibase;
  for (int d = 0; d < p->dims.rank; d++) {
    meta[6 + d] = (uint32_t)p->dims.dim[d];
    meta[14 + d] = (uint32_t)p->A[d];
    meta[22 + d] = (uint32_t)p->B[d];
  }
  for (int k = 0; k < p->K; k++) {
    meta[30 + k] = (uint32_t)p->S[k];
    meta[38 + k] = (uint32_t)p->lim[k];
  }
}

/* The plan's offset of element i (reference); *inr: every index in range. */
static int64_t plan_offset(const plan *p, const nxvk_host *ix, int64_t i, bool *inr) {
  int64_t off = p->base, ii = p->ibase, r = i;
  for (int d = p->dims.rank - 1; d >= 0; d--) {
    int64_t dim = p->dims.dim[d], c = r % dim;
    r /= dim;
    off += c * p->A[d];
    ii += c * p->B[d];
  }
  *inr = true;
  for (int k = 0; k < p->K; k++) {
    bool ok;
    off += host_index(ix, ii + k * p->KS, p->lim[k], &ok) * p->S[k];
    *inr = *inr && ok;
  }
  return off;
}

static int gather_run(nxvk_rec *r, const plan *p, nxvk_tensor *src, nxvk_tensor *ix,
                      nxvk_tensor *out) {
  uint32_t meta[48];
  plan_meta(p, out->count, meta);
  char name[32];
  snprintf(name, sizeof name, "gather_b%c_%s", eb_char(src->dtype), nxvk_dtype_name(ix->dtype));
  uint32_t spec[1] = {NXVK_WG};
  nxvk_buffer *bufs[3] = {src->buf, ix->buf, out->buf};
  return nxvk_dispatch_1d(r, name, spec, 1, meta, 46, bufs, 3, (uint64_t)out->count);
}

static void gather_ref(const plan *p, const nxvk_host *src, const nxvk_host *ix, nxvk_host *out) {
  int64_t n = nxvk_host_count(out);
  for (int64_t i = 0; i < n; i++) {
    bool inr;
    elem_copy(out, i, src, plan_offset(p, ix, i, &inr));
  }
}

/* ---- broadcast ---- */

/* Output axis of each input axis (default: the trailing ones). */
static int bcast_axes(const nxvk_op *op, const nxvk_attrs *a, const nxvk_shape *in,
                      const nxvk_shape *out, int *axes) {
  char b1[160], b2[160];
  if (in->rank > out->rank)
    return nxvk_seterr(NXVK_E_SHAPE_MISMATCH, "broadcast: input %s has more axes than shape %s",
                       nxvk_shape_str(in, b1, sizeof b1), nxvk_shape_str(out, b2, sizeof b2));
  if (a->set & NXVK_ATTR_AXES) {
    if (a->naxes != in->rank)
      return nxvk_seterr(NXVK_E_BAD_ATTR, "broadcast: attribute \"axes\" has %d entries for an input of rank %d",
                         a->naxes, in->rank);
    for (int i = 0; i < in->rank; i++) {
      int rc = norm_axis(op, "axes", a->axes[i], out->rank, &axes[i]);
      if (rc) return rc;
      if (i > 0 && axes[i] <= axes[i - 1])
        return nxvk_seterr(NXVK_E_BAD_ATTR, "broadcast: attribute \"axes\" must be strictly increasing");
    }
  } else {
    for (int i = 0; i < in->rank; i++) axes[i] = out->rank - in->rank + i;
  }
  for (int i = 0; i < in->rank; i++)
    if (in->dim[i] != 1 && in->dim[i] != out->dim[axes[i]])
      return nxvk_seterr(NXVK_E_SHAPE_MISMATCH,
                         "broadcast: input axis %d (size %lld) cannot go to axis %d of shape %s (size %lld)",
                         i, (long long)in->dim[i], axes[i], nxvk_shape_str(out, b2, sizeof b2),
                         (long long)out->dim[axes[i]]);
  return NXVK_OK;
}

int nxvk_broadcast_infer(const nxvk_op *op, const nxvk_attrs *a, const nxvk_meta *in, int nin,
                         nxvk_meta *out) {
  (void)nin;
  int rc = dtype_ok(op, in, 1, "tensor");
  if (rc) return rc;
  if (!(a->set & NXVK_ATTR_SHAPE))
    return nxvk_seterr(NXVK_E_BAD_ATTR, "broadcast: attribute \"shape\" is required");
  for (int d = 0; d < a->shape.rank; d++)
    if (a->shape.dim[d] < 0)
      return nxvk_seterr(NXVK_E_BAD_ATTR, "broadcast: attribute \"shape\": dimension %d is negative", d);
  int axes[NXVK_MAX_RANK];
  rc = bcast_axes(op, a, &in->shape, &a->shape, axes);
  if (rc) return rc;
  out->dtype = in->dtype;
  out->shape = a->shape;
  return NXVK_OK;
}

static void bcast_strides(const nxvk_op *op, const nxvk_attrs *a, const nxvk_shape *in,
                          const nxvk_shape *out, int64_t *sst) {
  int axes[NXVK_MAX_RANK];
  int64_t st[NXVK_MAX_RANK];
  (void)bcast_axes(op, a, in, out, axes); /* checked by infer */
  nxvk_contiguous_strides(in, st);
  for (int d = 0; d < out->rank; d++) sst[d] = 0;
  for (int i = 0; i < in->rank; i++)
    if (in->dim[i] != 1) sst[axes[i]] = st[i];
}

int nxvk_broadcast_gpu(nxvk_rec *r, const nxvk_op *op, const nxvk_attrs *a, nxvk_tensor *const *in,
                       int nin, nxvk_tensor *out) {
  (void)nin;
  int64_t sst[NXVK_MAX_RANK], dst[NXVK_MAX_RANK];
  bcast_strides(op, a, &in[0]->shape, &out->shape, sst);
  nxvk_contiguous_strides(&out->shape, dst);
  return nxvk_strided_copy(r, in[0]->buf, in[0]->dtype, 0, sst, out->buf, out->dtype, 0, dst,
                           &out->shape);
}

int nxvk_broadcast_ref(const nxvk_op *op, const nxvk_attrs *a, const nxvk_host *in, int nin,
                       nxvk_host *out) {
  (void)nin;
  plan p = {.dims = out->shape};
  bcast_strides(op, a, &in[0].shape, &out->shape, p.A);
  gather_ref(&p, &in[0], NULL, out);
  return NXVK_OK;
}

/* ---- pad ---- */

int nxvk_pad_infer(const nxvk_op *op, const nxvk_attrs *a, const nxvk_meta *in, int nin,
                   nxvk_meta *out) {
  (void)nin;
  int rank = in[0].shape.rank;
  int rc = dtype_ok(op, &in[0], 1, "tensor");
  if (rc == NXVK_OK) rc = same_dtype(op, &in[0], 1, &in[1], 2);
  if (rc) return rc;
  if (in[1].shape.rank != 0)
    return nxvk_seterr(NXVK_E_SHAPE_MISMATCH, "pad: the pad value (input 2) must be a scalar (rank 0), not rank %d",
                       in[1].shape.rank);
  if (!(a->set & NXVK_ATTR_PAD))
    return nxvk_seterr(NXVK_E_BAD_ATTR, "pad: attributes \"low\" and \"high\" are required");
  if (a->nlow != rank)
    return nxvk_seterr(NXVK_E_BAD_ATTR, "pad: low/high/interior have %d entries for rank %d", a->nlow, rank);
  out->dtype = in[0].dtype;
  out->shape.rank = rank;
  for (int d = 0; d < rank; d++) {
    int64_t dim = in[0].shape.dim[d];
    int64_t o = a->low[d] + a->high[d] + dim + (dim > 0 ? (dim - 1) * a->interior[d] : 0);
    if (o < 0)
      return nxvk_seterr(NXVK_E_BAD_ATTR, "pad: axis %d: low %lld + high %lld leave %lld elements",
                         d, (long long)a->low[d], (long long)a->high[d], (long long)o);
    if (o > INT32_MAX) return nxvk_seterr(NXVK_E_TOO_LARGE, "pad: axis %d would have %lld elements", d, (long long)o);
    out->shape.dim[d] = o;
  }
  return NXVK_OK;
}

/* The input elements that land inside the output: per axis the first and
 * the count, and where the first lands.  false: none do. */
static bool pad_window(const nxvk_attrs *a, const nxvk_shape *in, const nxvk_shape *out,
                       int64_t *first, nxvk_shape *cnt, int64_t *at) {
  cnt->rank = in->rank;
  for (int d = 0; d < in->rank; d++) {
    int64_t step = a->interior[d] + 1, lo = a->low[d], dim = in->dim[d];
    int64_t f = lo >= 0 ? 0 : (-lo + step - 1) / step;
    int64_t last_pos = out->dim[d] - 1 - lo; /* input positions i with i*step <= last_pos */
    int64_t l = last_pos < 0 ? -1 : last_pos / step;
    if (l > dim - 1) l = dim - 1;
    if (l < f) return false;
    first[d] = f;
    cnt->dim[d] = l - f + 1;
    at[d] = lo + f * step;
  }
  return true;
}

int nxvk_pad_gpu(nxvk_rec *r, const nxvk_op *op, const nxvk_attrs *a, nxvk_tensor *const *in,
                 int nin, nxvk_tensor *out) {
  (void)op; (void)nin;
  int64_t zero[NXVK_MAX_RANK] = {0}, dst[NXVK_MAX_RANK], sst[NXVK_MAX_RANK], ist[NXVK_MAX_RANK];
  nxvk_contiguous_strides(&out->shape, dst);
  int rc = nxvk_strided_copy(r, in[1]->buf, in[1]->dtype, 0, zero, out->buf, out->dtype, 0, dst,
                             &out->shape);
  int64_t first[NXVK_MAX_RANK], at[NXVK_MAX_RANK];
  nxvk_shape cnt;
  if (rc || !pad_window(a, &in[0]->shape, &out->shape, first, &cnt, at)) return rc;
  nxvk_contiguous_strides(&in[0]->shape, ist);
  int64_t sbase = 0, dbase = 0;
  for (int d = 0; d < cnt.rank; d++) {
    sbase += first[d] * ist[d];
    dbase += at[d] * dst[d];
    sst[d] = dst[d] * (a->interior[d] + 1);
  }
  return nxvk_strided_copy(r, in[0]->buf, in[0]->dtype, sbase, ist, out->buf, out->dtype, dbase,
                           sst, &cnt);
}

int nxvk_pad_ref(const nxvk_op *op, const nxvk_attrs *a, const nxvk_host *in, int nin,
                 nxvk_host *out) {
  (void)op; (void)nin;
  int64_t n = nxvk_host_count(out);
  for (int64_t i = 0; i < n; i++) elem_copy(out, i, &in[1], 0);
  int64_t first[NXVK_MAX_RANK], at[NXVK_MAX_RANK], ost[NXVK_MAX_RANK], ist[NXVK_MAX_RANK];
  nxvk_shape cnt;
  if (!pad_window(a, &in[0].shape, &out->shape, first, &cnt, at)) return NXVK_OK;
  nxvk_contiguous_strides(&out->shape, ost);
  nxvk_contiguous_strides(&in[0].shape, ist);
  int64_t m;
  if (nxvk_shape_count(&cnt, &m)) return NXVK_OK;
  for (int64_t i = 0; i < m; i++) {
    int64_t r = i, so = 0, dof = 0;
    for (int d = cnt.rank - 1; d >= 0; d--) {
      int64_t c = r % cnt.dim[d];
      r /= cnt.dim[d];
      so += (first[d] + c) * ist[d];
      dof += (at[d] + c * (a->interior[d] + 1)) * ost[d];
    }
    elem_copy(out, dof, &in[0], so);
  }
  return NXVK_OK;
}

/* ---- dynamic_slice and put_slice: start indices as a tensor ---- */

static int starts_ok(const nxvk_op *op, const nxvk_meta *s, int k, int rank) {
  int rc = index_ok(op, s, k);
  if (rc) return rc;
  if (s->shape.rank != 1 || s->shape.dim[0] != rank)
    return nxvk_seterr(NXVK_E_SHAPE_MISMATCH,
                       "%s: the start indices (input %d) must have shape [%d] (one per axis)",
                       op->d.name, k, rank);
  return NXVK_OK;
}

int nxvk_dynslice_infer(const nxvk_op *op, const nxvk_attrs *a, const nxvk_meta *in, int nin,
                        nxvk_meta *out) {
  (void)nin;
  int rank = in[0].shape.rank;
  int rc = dtype_ok(op, &in[0], 1, "tensor");
  if (rc == NXVK_OK) rc = starts_ok(op, &in[1], 2, rank);
  if (rc) return rc;
  if (!(a->set & NXVK_ATTR_SLICE))
    return nxvk_seterr(NXVK_E_BAD_ATTR, "dynamic_slice: attribute \"length\" is required");
  if (a->nslice != rank)
    return nxvk_seterr(NXVK_E_BAD_ATTR, "dynamic_slice: length/stride have %d entries for rank %d",
                       a->nslice, rank);
  out->dtype = in[0].dtype;
  out->shape.rank = rank;
  for (int d = 0; d < rank; d++) {
    int64_t len = a->length[d], st = a->stride[d];
    if (len > in[0].shape.dim[d])
      return nxvk_seterr(NXVK_E_BAD_ATTR, "dynamic_slice: length[%d] = %lld is over the axis size %lld",
                         d, (long long)len, (long long)in[0].shape.dim[d]);
    out->shape.dim[d] = (len + st - 1) / st;
  }
  return NXVK_OK;
}

static void dynslice_plan(const nxvk_attrs *a, const nxvk_shape *in, const nxvk_shape *out, plan *p) {
  int64_t st[NXVK_MAX_RANK];
  plan_start(p, out, in->rank, in, st);
  for (int d = 0; d < in->rank; d++) {
    p->A[d] = st[d] * a->stride[d];
    p->S[d] = st[d];
    p->lim[d] = in->dim[d] - a->length[d];
  }
}

/* dynamic_slice runs and is checked as gather (nxvk_gather_gpu / _ref: any_plan
 * makes its plan) */

int nxvk_putslice_infer(const nxvk_op *op, const nxvk_attrs *a, const nxvk_meta *in, int nin,
                        nxvk_meta *out) {
  (void)a; (void)nin;
  int rank = in[0].shape.rank;
  int rc = dtype_ok(op, &in[0], 1, "tensor");
  if (rc == NXVK_OK) rc = same_dtype(op, &in[0], 1, &in[1], 2);
  if (rc == NXVK_OK) rc = starts_ok(op, &in[2], 3, rank);
  if (rc) return rc;
  char b1[160], b2[160];
  bool fits = in[1].shape.rank == rank;
  for (int d = 0; fits && d < rank; d++) fits = in[1].shape.dim[d] <= in[0].shape.dim[d];
  if (!fits)
    return nxvk_seterr(NXVK_E_SHAPE_MISMATCH,
                       "put_slice: the slice (input 2) %s does not fit in the tensor (input 1) %s",
                       nxvk_shape_str(&in[1].shape, b1, sizeof b1),
                       nxvk_shape_str(&in[0].shape, b2, sizeof b2));
  *out = in[0];
  return NXVK_OK;
}

static void putslice_plan(const nxvk_shape *t, const nxvk_shape *u, plan *p) {
  int64_t st[NXVK_MAX_RANK];
  plan_start(p, u, t->rank, t, st);
  for (int d = 0; d < t->rank; d++) {
    p->A[d] = st[d];
    p->S[d] = st[d];
    p->lim[d] = t->dim[d] - u->dim[d];
  }
}

/* ---- the scatter passes ---- */

enum { SC_PUT, SC_OWNER, SC_OWNED, SC_ADD32, SC_ADD64, SC_ADDF, SC_ADDFA, SC_ADDD, SC_OWNP };

/* A window of the targets [lo, lo + len) (scatter.comp's meta[48..49]):
 * the owners or the scratch a pass writes hold only it. */
typedef struct {
  int64_t lo, len;
} twin;
static const twin ALL_TARGETS = {0, UINT32_MAX};

static int scatter_run(nxvk_rec *r, int mode, const plan *p, int64_t n, int64_t row_len,
                       bool clamp, nxvk_buffer *upd, nxvk_dtype ed, nxvk_tensor *ix,
                       nxvk_buffer *dst, nxvk_buffer *owner, twin w) {
  uint32_t meta[50];
  plan_meta(p, n, meta);
  meta[46] = (uint32_t)(row_len > 0 ? row_len : 1);
  meta[47] = clamp ? 1u : 0u;
  meta[48] = (uint32_t)w.lo;
  meta[49] = (uint32_t)w.len;
  static const char *const modes[] = {"put", "owner", "owned", "add32", "add64", "addf", "addfa", "addd", "ownp"};
  char name[40];
  if (mode == SC_PUT || mode == SC_OWNED || mode == SC_OWNP)
    snprintf(name, sizeof name, "scatter_%s_b%c_%s", modes[mode], eb_char(ed), nxvk_dtype_name(ix->dtype));
  else
    snprintf(name, sizeof name, "scatter_%s_%s", modes[mode], nxvk_dtype_name(ix->dtype));
  uint32_t spec[1] = {NXVK_WG};
  nxvk_buffer *bufs[4] = {upd, ix->buf, dst, owner ? owner : dst};
  int nb = mode == SC_OWNER || mode == SC_OWNED ? 4 : 3;
  return nxvk_dispatch_1d(r, name, spec, 1, meta, 50, bufs, nb, (uint64_t)n);
}

/* indexed_put's last pass, over the n targets: out[t] = the owner's update
 * where the target has one, else x[t] (scatter.comp's OP_PICKG with 32-bit
 * owners holding an update's position + 1, OP_PICKP with 64-bit words
 * holding (row + 1) << 32 and the update's bits). */
static int pick_run(nxvk_rec *r, bool packed, int64_t n, nxvk_dtype ed, nxvk_buffer *x, nxvk_buffer *upd,
                    nxvk_buffer *dst, nxvk_buffer *owner) {
  uint32_t meta[1] = {(uint32_t)n};
  char name[40];
  snprintf(name, sizeof name, "scatter_pick%c_b%c_u32", packed ? 'p' : 'g', eb_char(ed));
  uint32_t spec[1] = {NXVK_WG};
  nxvk_buffer *bufs[4] = {x, packed ? x : upd, dst, owner};
  return nxvk_dispatch_1d(r, name, spec, 1, meta, 1, bufs, 4, (uint64_t)n);
}

/* n elements from src[sbase] to dst[dbase], converting sd to dd */
static int flat_copy_at(nxvk_rec *r, nxvk_buffer *src, nxvk_dtype sd, int64_t sbase, nxvk_buffer *dst,
                        nxvk_dtype dd, int64_t dbase, int64_t n) {
  nxvk_shape flat = {1, {n}};
  int64_t one[1] = {1};
  return nxvk_strided_copy(r, src, sd, sbase, one, dst, dd, dbase, one, &flat);
}

static int flat_copy(nxvk_rec *r, nxvk_buffer *src, nxvk_dtype sd, nxvk_buffer *dst, nxvk_dtype dd,
                     int64_t n) {
  return flat_copy_at(r, src, sd, 0, dst, dd, 0, n);
}

int nxvk_putslice_gpu(nxvk_rec *r, const nxvk_op *op, const nxvk_attrs *a, nxvk_tensor *const *in,
                      int nin, nxvk_tensor *out) {
  (void)op; (void)a; (void)nin;
  int rc = flat_copy(r, in[0]->buf, in[0]->dtype, out->buf, out->dtype, out->count);
  if (rc || in[1]->count == 0) return rc;
  plan p;
  putslice_plan(&out->shape, &in[1]->shape, &p);
  return scatter_run(r, SC_PUT, &p, in[1]->count, 1, true, in[1]->buf, in[1]->dtype, in[2],
                     out->buf, NULL, ALL_TARGETS);
}

int nxvk_putslice_ref(const nxvk_op *op, const nxvk_attrs *a, const nxvk_host *in, int nin,
                      nxvk_host *out) {
  (void)op; (void)a; (void)nin;
  if (nxvk_host_bytes(out)) memcpy(out->data, in[0].data, nxvk_host_bytes(out));
  plan p;
  putslice_plan(&out->shape, &in[1].shape, &p);
  int64_t n = nxvk_host_count(&in[1]);
  for (int64_t i = 0; i < n; i++) {
    bool inr;
    elem_copy(out, plan_offset(&p, &in[2], i, &inr), &in[1], i);
  }
  return NXVK_OK;
}

/* ---- gather, take, take_along_axis ---- */

static int nonempty_axis(const nxvk_op *op, const nxvk_shape *t, int ax, const nxvk_shape *out) {
  int64_t n;
  if (t->dim[ax] == 0 && nxvk_shape_count(out, &n) == NXVK_OK && n > 0)
    return nxvk_seterr(NXVK_E_SHAPE_MISMATCH, "%s: axis %d of the tensor is empty: no index can point into it",
                       op->d.name, ax);
  return NXVK_OK;
}

int nxvk_gather_infer(const nxvk_op *op, const nxvk_attrs *a, const nxvk_meta *in, int nin,
                      nxvk_meta *out) {
  (void)nin;
  int rc = dtype_ok(op, &in[0], 1, "tensor");
  if (rc == NXVK_OK) rc = index_ok(op, &in[1], 2);
  if (rc) return rc;
  const nxvk_shape *t = &in[0].shape, *ix = &in[1].shape;
  if (ix->rank < 1)
    return nxvk_seterr(NXVK_E_SHAPE_MISMATCH, "gather: the indices (input 2) must have rank 1 or more");
  int K = (int)ix->dim[ix->rank - 1], axes[NXVK_MAX_RANK];
  if (K > t->rank)
    return nxvk_seterr(NXVK_E_SHAPE_MISMATCH,
                       "gather: the indices' last axis (%d) is over the tensor's rank (%d)", K, t->rank);
  rc = index_axes(op, a, K, t->rank, axes);
  if (rc) return rc;
  int r = ix->rank - 1 + t->rank - K;
  if (r > NXVK_MAX_RANK)
    return nxvk_seterr(NXVK_E_TOO_LARGE, "gather: the result would have rank %d (at most %d)", r, NXVK_MAX_RANK);
  out->dtype = in[0].dtype;
  out->shape.rank = 0;
  for (int d = 0; d < ix->rank - 1; d++) out->shape.dim[out->shape.rank++] = ix->dim[d];
  for (int d = 0; d < t->rank; d++)
    if (!in_list(axes, K, d)) out->shape.dim[out->shape.rank++] = t->dim[d];
  for (int k = 0; k < K; k++)
    if ((rc = nonempty_axis(op, t, axes[k], &out->shape))) return rc;
  return NXVK_OK;
}

static void gather_plan(const nxvk_attrs *a, const nxvk_shape *t, const nxvk_shape *ix,
                        const nxvk_shape *out, plan *p) {
  int K = (int)ix->dim[ix->rank - 1], axes[NXVK_MAX_RANK];
  (void)index_axes(NULL, a, K, t->rank, axes); /* checked by infer */
  int64_t st[NXVK_MAX_RANK], ist[NXVK_MAX_RANK];
  plan_start(p, out, K, t, st);
  nxvk_contiguous_strides(ix, ist);
  int o = 0;
  for (int d = 0; d < ix->rank - 1; d++) p->B[o++] = ist[d];
  for (int d = 0; d < t->rank; d++)
    if (!in_list(axes, K, d)) p->A[o++] = st[d];
  for (int k = 0; k < K; k++) {
    p->S[k] = st[axes[k]];
    p->lim[k] = t->dim[axes[k]] > 0 ? t->dim[axes[k]] - 1 : 0;
  }
}

int nxvk_take_infer(const nxvk_op *op, const nxvk_attrs *a, const nxvk_meta *in, int nin,
                    nxvk_meta *out) {
  (void)nin;
  int rc = dtype_ok(op, &in[0], 1, "tensor");
  if (rc == NXVK_OK) rc = index_ok(op, &in[1], 2);
  if (rc) return rc;
  const nxvk_shape *t = &in[0].shape, *ix = &in[1].shape;
  if (t->rank == 0) return nxvk_seterr(NXVK_E_SHAPE_MISMATCH, "%s: the tensor (input 1) must have rank 1 or more", op->d.name);
  int ax;
  rc = norm_axis(op, "axis", (a->set & NXVK_ATTR_AXIS) ? a->axis : 0, t->rank, &ax);
  if (rc) return rc;
  out->dtype = in[0].dtype;
  if (op->code == 1) { /* take_along_axis */
    bool ok = ix->rank == t->rank;
    for (int d = 0; ok && d < t->rank; d++) ok = d == ax || ix->dim[d] == t->dim[d];
    if (!ok) {
      char b1[160], b2[160];
      return nxvk_seterr(NXVK_E_SHAPE_MISMATCH,
                         "take_along_axis: the indices (input 2) %s must match the tensor %s off axis %d",
                         nxvk_shape_str(ix, b1, sizeof b1), nxvk_shape_str(t, b2, sizeof b2), ax);
    }
    out->shape = *ix;
  } else {
    int r = t->rank - 1 + ix->rank;
    if (r > NXVK_MAX_RANK)
      return nxvk_seterr(NXVK_E_TOO_LARGE, "take: the result would have rank %d (at most %d)", r, NXVK_MAX_RANK);
    out->shape.rank = 0;
    for (int d = 0; d < ax; d++) out->shape.dim[out->shape.rank++] = t->dim[d];
    for (int d = 0; d < ix->rank; d++) out->shape.dim[out->shape.rank++] = ix->dim[d];
    for (int d = ax + 1; d < t->rank; d++) out->shape.dim[out->shape.rank++] = t->dim[d];
  }
  return nonempty_axis(op, t, ax, &out->shape);
}

static void take_plan(const nxvk_op *op, const nxvk_attrs *a, const nxvk_shape *t,
                      const nxvk_shape *ix, const nxvk_shape *out, plan *p) {
  int ax = (a->set & NXVK_ATTR_AXIS) ? a->axis : 0;
  if (ax < 0) ax += t->rank;
  int64_t st[NXVK_MAX_RANK], ist[NXVK_MAX_RANK];
  plan_start(p, out, 1, t, st);
  nxvk_contiguous_strides(ix, ist);
  p->S[0] = st[ax];
  p->lim[0] = t->dim[ax] > 0 ? t->dim[ax] - 1 : 0;
  if (op->code == 1) {
    for (int d = 0; d < t->rank; d++) {
      p->A[d] = d == ax ? 0 : st[d];
      p->B[d] = ist[d];
    }
    return;
  }
  int o = 0;
  for (int d = 0; d < ax; d++) p->A[o++] = st[d];
  for (int d = 0; d < ix->rank; d++) p->B[o++] = ist[d];
  for (int d = ax + 1; d < t->rank; d++) p->A[o++] = st[d];
}

static void any_plan(const nxvk_op *op, const nxvk_attrs *a, const nxvk_shape *t,
                     const nxvk_shape *ix, const nxvk_shape *out, plan *p) {
  if (strcmp(op->d.name, "gather") == 0) gather_plan(a, t, ix, out, p);
  else if (strcmp(op->d.name, "dynamic_slice") == 0) dynslice_plan(a, t, out, p);
  else take_plan(op, a, t, ix, out, p);
}

int nxvk_gather_gpu(nxvk_rec *r, const nxvk_op *op, const nxvk_attrs *a, nxvk_tensor *const *in,
                    int nin, nxvk_tensor *out) {
  (void)nin;
  plan p;
  any_plan(op, a, &in[0]->shape, &in[1]->shape, &out->shape, &p);
  return gather_run(r, &p, in[0], in[1], out);
}

int nxvk_gather_ref(const nxvk_op *op, const nxvk_attrs *a, const nxvk_host *in, int nin,
                    nxvk_host *out) {
  (void)nin;
  plan p;
  any_plan(op, a, &in[0].shape, &in[1].shape, &out->shape, &p);
  gather_ref(&p, &in[0], &in[1], out);
  return NXVK_OK;
}

/* ---- indexed_add, indexed_put ---- */

int nxvk_indexed_infer(const nxvk_op *op, const nxvk_attrs *a, const nxvk_meta *in, int nin,
                       nxvk_meta *out) {
  (void)nin;
  int rc = dtype_ok(op, &in[0], 1, "target");
  if (rc == NXVK_OK) rc = index_ok(op, &in[1], 2);
  if (rc == NXVK_OK) rc = same_dtype(op, &in[0], 1, &in[2], 3);
  if (rc) return rc;
  const nxvk_shape *t = &in[0].shape, *ix = &in[1].shape, *u = &in[2].shape;
  char b1[160], b2[160];
  if (ix->rank != 2)
    return nxvk_seterr(NXVK_E_SHAPE_MISMATCH, "%s: the indices (input 2) must have rank 2 ([n, k]), not %d",
                       op->d.name, ix->rank);
  int K = (int)ix->dim[1], axes[NXVK_MAX_RANK];
  if (K > t->rank || K < 1)
    return nxvk_seterr(NXVK_E_SHAPE_MISMATCH, "%s: the indices' last axis (%d) must be 1..the target's rank (%d)",
                       op->d.name, K, t->rank);
  if ((rc = index_axes(op, a, K, t->rank, axes))) return rc;
  if (u->rank != 1 + t->rank - K || u->dim[0] != ix->dim[0])
    return nxvk_seterr(NXVK_E_SHAPE_MISMATCH,
                       "%s: the updates (input 3) %s must have shape [%lld, the target's %d axes not indexed]",
                       op->d.name, nxvk_shape_str(u, b1, sizeof b1), (long long)ix->dim[0], t->rank - K);
  int j = 1;
  for (int d = 0; d < t->rank; d++)
    if (!in_list(axes, K, d)) {
      if (u->dim[j] > t->dim[d])
        return nxvk_seterr(NXVK_E_SHAPE_MISMATCH,
                           "%s: axis %d of the updates %s is larger than axis %d of the target %s",
                           op->d.name, j, nxvk_shape_str(u, b1, sizeof b1), d,
                           nxvk_shape_str(t, b2, sizeof b2));
      j++;
    }
  *out = in[0];
  return NXVK_OK;
}

static void indexed_plan(const nxvk_attrs *a, const nxvk_shape *t, const nxvk_shape *ix,
                         const nxvk_shape *u, plan *p) {
  int K = (int)ix->dim[1], axes[NXVK_MAX_RANK];
  (void)index_axes(NULL, a, K, t->rank, axes);
  int64_t st[NXVK_MAX_RANK];
  plan_start(p, u, K, t, st);
  p->B[0] = K;
  int j = 1;
  for (int d = 0; d < t->rank; d++)
    if (!in_list(axes, K, d)) p->A[j++] = st[d];
  for (int k = 0; k < K; k++) {
    p->S[k] = st[axes[k]];
    p->lim[k] = t->dim[axes[k]] - 1; /* -1 for an empty axis: nothing is in range */
  }
}

int nxvk_indexed_supported(nxvk_ctx *c, const nxvk_op *op, const nxvk_attrs *a,
                           const nxvk_meta *in, int nin) {
  (void)a; (void)nin;
  if (op->code == 0 && in[0].dtype == NXVK_F64 && !c->info.atomic_i64)
    return nxvk_seterr(NXVK_E_UNSUPPORTED_DTYPE,
                       "indexed_add: f64 needs 64-bit atomics (shaderBufferInt64Atomics), which %s lacks",
                       c->info.name);
  return NXVK_OK;
}

/* indexed_put's pass structure for nt targets and nu updates of dtype d.
 * Bytes moved, T per target and U per update, a random access counted as
 * one 32-byte sector (bench/NOTES.md):
 *   owned  copy x (8T), zero the owners (4T); owners: index (4U), a random
 *          atomicMax (32U); stores: index, owner, update, random read of
 *          the owner and write (4U + 4U + 64U): 12T + 108U, 4 passes;
 *   gather zero the owners (4T); owners by position (4U + 32U); pick: owner,
 *          x, out (12T) and a random read of the update (32U): 16T + 68U;
 *   packed zero 64-bit words (8T); one atomicMax of (row, bits) (8U + 32U);
 *          pick: word, x, out (16T): 24T + 40U; dtypes of at most 4 bytes,
 *          64-bit atomics, and 8T within a storage buffer's range.
 * Measured (H100, 16M f32, bench/NOTES.md): gather 1.07 ms, packed 1.17
 * (its 64-bit words double the random atomics' footprint, past the L2),
 * owned 2.02; at 1M all within 2% but owned.  So gather where
 * nu >= nt / 8 (a prediction, not measured), else owned; packed only by
 * NXVK_SCATTER_PUT, which forces a form (packed falls back to gather where
 * it cannot run). */
static int put_form(nxvk_ctx *c, nxvk_dtype d, int64_t nt, int64_t nu) {
  bool packed_ok = nxvk_dtype_size(d) <= 4 && c->info.atomic_i64 &&
                   (uint64_t)nt * 8 <= c->info.max_storage_buffer_range;
  int f = c->tuning->scatter_put;
  if (f == NXVK_PUT_PACKED) return packed_ok ? f : NXVK_PUT_GATHER;
  if (f) return f;
  return nu * 8 >= nt ? NXVK_PUT_GATHER : NXVK_PUT_OWNED;
}

/* Targets a 4-byte-a-target array may hold within the storage buffer
 * range: all of nt, or a window of the largest whole number of 64 (the
 * owners and indexed_add's 32-bit scratch are 4 bytes a target, 2x or 4x a
 * 16- or 8-bit tensor, which may fit where they do not). */
static int64_t target_window(nxvk_ctx *c, int64_t nt) {
  uint64_t fit = c->info.max_storage_buffer_range / 4;
  if ((uint64_t)nt <= fit) return nt;
  fit &= ~(uint64_t)63;
  return fit ? (int64_t)fit : 1;
}

static int indexed_put_gpu(nxvk_rec *r, const plan *p, nxvk_tensor *t, nxvk_tensor *ix, nxvk_tensor *u,
                           nxvk_tensor *out, int64_t row) {
  nxvk_ctx *c = nxvk_rec_ctx(r);
  nxvk_dtype d = t->dtype;
  int64_t nt = out->count;
  if (u->count == 0) return flat_copy(r, t->buf, d, out->buf, d, nt);
  int form = put_form(c, d, nt, u->count);
  /* owners past the range: owned, a window of the targets a pass (each
   * pass reads every update; at most 4 of them, as the tensor fits) */
  int64_t win = target_window(c, nt);
  if (win < nt) form = NXVK_PUT_OWNED;
  VkDeviceSize wb = (VkDeviceSize)win * (form == NXVK_PUT_PACKED ? 8 : 4);
  nxvk_buffer *own;
  int rc = nxvk_buffer_create(c, wb, false, &own);
  if (rc) return rc;
  if (form == NXVK_PUT_PACKED) {
    rc = nxvk_rec_fill(r, own, wb, 0);
    if (rc == NXVK_OK) rc = scatter_run(r, SC_OWNP, p, u->count, row, false, u->buf, d, ix, own, NULL, ALL_TARGETS);
  } else if (form == NXVK_PUT_GATHER) {
    /* owners by position (row_len 1) */
    rc = nxvk_rec_fill(r, own, wb, 0);
    if (rc == NXVK_OK)
      rc = scatter_run(r, SC_OWNER, p, u->count, 1, false, u->buf, d, ix, out->buf, own, ALL_TARGETS);
  } else {
    rc = flat_copy(r, t->buf, d, out->buf, d, nt);
    for (int64_t lo = 0; rc == NXVK_OK && lo < nt; lo += win) {
      twin w = {lo, nt - lo < win ? nt - lo : win};
      rc = nxvk_rec_fill(r, own, wb, 0);
      if (rc == NXVK_OK) rc = scatter_run(r, SC_OWNER, p, u->count, row, false, u->buf, d, ix, out->buf, own, w);
      if (rc == NXVK_OK) rc = scatter_run(r, SC_OWNED, p, u->count, row, false, u->buf, d, ix, out->buf, own, w);
    }
  }
  if (rc == NXVK_OK && form != NXVK_PUT_OWNED)
    rc = pick_run(r, form == NXVK_PUT_PACKED, nt, d, t->buf, u->buf, out->buf, own);
  nxvk_buffer_unref(c, own);
  return rc;
}

int nxvk_indexed_gpu(nxvk_rec *r, const nxvk_op *op, const nxvk_attrs *a, nxvk_tensor *const *in,
                     int nin, nxvk_tensor *out) {
  (void)nin;
  nxvk_ctx *c = nxvk_rec_ctx(r);
  nxvk_tensor *t = in[0], *ix = in[1], *u = in[2];
  nxvk_dtype d = t->dtype;
  plan p;
  indexed_plan(a, &t->shape, &ix->shape, &u->shape, &p);
  /* an empty axis has no position: lim -1 would wrap in the kernel */
  for (int k = 0; k < p.K; k++)
    if (p.lim[k] < 0) return flat_copy(r, t->buf, d, out->buf, d, out->count);
  int64_t row = u->shape.dim[0] ? u->count / u->shape.dim[0] : 1;
  if (op->code == 1) return indexed_put_gpu(r, &p, t, ix, u, out, row);
  size_t es = nxvk_dtype_size(d);
  bool f = nxvk_dtype_is_float(d);
  if (es == 4 || es == 8) { /* in place: i32 u32 f32 i64 u64 */
    int rc = flat_copy(r, t->buf, d, out->buf, d, out->count);
    if (rc || u->count == 0) return rc;
    int mode = d == NXVK_F64 ? SC_ADDD : f ? (c->info.atomic_f32_add ? SC_ADDFA : SC_ADDF)
                                            : es == 8 ? SC_ADD64 : SC_ADD32;
    return scatter_run(r, mode, &p, u->count, row, false, u->buf, d, ix, out->buf, NULL, ALL_TARGETS);
  }
  /* 8- and 16-bit: through 32-bit scratch (integers wrap back exactly;
   * f16 / bf16 add in f32 and round once), the targets' a window at a time
   * where all of it would pass the storage buffer range */
  nxvk_dtype wd = f ? NXVK_F32 : NXVK_I32;
  int64_t nt = out->count, win = target_window(c, nt);
  if ((uint64_t)u->count * 4 > c->info.max_storage_buffer_range)
    return nxvk_seterr(NXVK_E_TOO_LARGE,
                       "indexed_add: %s updates are added in 32 bits, and %lld of them (%llu bytes) pass this "
                       "device's storage buffer range (%llu bytes)",
                       nxvk_dtype_name(d), (long long)u->count, (unsigned long long)u->count * 4,
                       (unsigned long long)c->info.max_storage_buffer_range);
  nxvk_buffer *wt = NULL, *wu = NULL;
  int rc = nxvk_buffer_create(c, (VkDeviceSize)win * 4, false, &wt);
  if (rc == NXVK_OK) rc = nxvk_buffer_create(c, (VkDeviceSize)(u->count ? u->count : 1) * 4, false, &wu);
  if (rc == NXVK_OK) rc = flat_copy(r, u->buf, d, wu, wd, u->count);
  for (int64_t lo = 0; rc == NXVK_OK && lo < nt; lo += win) {
    twin w = {lo, nt - lo < win ? nt - lo : win};
    rc = flat_copy_at(r, t->buf, d, lo, wt, wd, 0, w.len);
    if (rc == NXVK_OK && u->count)
      rc = scatter_run(r, f ? (c->info.atomic_f32_add ? SC_ADDFA : SC_ADDF) : SC_ADD32, &p, u->count, row,
                       false, wu, wd, ix, wt, NULL, w);
    if (rc == NXVK_OK) rc = flat_copy_at(r, wt, wd, 0, out->buf, d, lo, w.len);
  }
  nxvk_buffer_unref(c, wt);
  nxvk_buffer_unref(c, wu);
  return rc;
}

static float f32_of(long double x) { return (float)x; }

int nxvk_indexed_ref(const nxvk_op *op, const nxvk_attrs *a, const nxvk_host *in, int nin,
                     nxvk_host *out) {
  (void)nin;
  const nxvk_host *t = &in[0], *ix = &in[1], *u = &in[2];
  if (nxvk_host_bytes(out)) memcpy(out->data, t->data, nxvk_host_bytes(out));
  plan p;
  indexed_plan(a, &t->shape, &ix->shape, &u->shape, &p);
  for (int k = 0; k < p.K; k++)
    if (p.lim[k] < 0) return NXVK_OK;
  int64_t n = nxvk_host_count(u), no = nxvk_host_count(out);
  nxvk_dtype d = t->dtype;
  bool f = nxvk_dtype_is_float(d);
  /* floats: accumulated as the device does (f64 in f64, the others in f32,
   * rounded to the dtype once at the end), rows in order */
  double *acc = NULL;
  if (op->code == 0 && f) {
    acc = calloc((size_t)(no ? no : 1), sizeof *acc);
    if (!acc) return nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
    for (int64_t i = 0; i < no; i++) acc[i] = nxvk_host_get(t, i);
  }
  for (int64_t i = 0; i < n; i++) {
    bool inr;
    int64_t o = plan_offset(&p, ix, i, &inr);
    if (!inr) continue;
    if (op->code == 1) elem_copy(out, o, u, i);
    else if (f && d == NXVK_F64) acc[o] = acc[o] + nxvk_host_get(u, i);
    else if (f) acc[o] = f32_of((long double)(float)acc[o] + (long double)(float)nxvk_host_get(u, i));
    else nxvk_host_set_int(out, o, (int64_t)((uint64_t)nxvk_host_get_int(out, o) + (uint64_t)nxvk_host_get_int(u, i)));
  }
  if (acc) {
    nxvk_host tmp = {.dtype = NXVK_F64, .data = acc};
    tmp.shape = out->shape;
    for (int64_t i = 0; i < no; i++) nxvk_convert_elem(&tmp, i, out, i);
    free(acc);
  }
  return NXVK_OK;
}
