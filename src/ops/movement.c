/*
 * movement.c - reshape (a view), transpose, slice, reverse, concatenate, as_type,
 * bitcast.
 * On the GPU all but reshape are one strided-copy kernel; the reference is
 * the same strided copy in C.
 */
#include "ops.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- the reference's strided copy, with as_type's conversion ---- */

double nxvk_bf16_round(double x) {
  if (isnan(x) || isinf(x) || x == 0) return x;
  double ax = fabs(x);
  /* the tie above the largest finite bf16 (2 - 2^-7) * 2^127 goes to even: inf */
  if (ax >= ldexp(2.0 - ldexp(1, -8), 127)) return copysign(INFINITY, x);
  int e;
  frexp(ax, &e);
  int q = e - 8;                 /* bf16 carries 8 significant bits ... */
  if (q < -133) q = -133;        /* ... down to the subnormal quantum 2^-133 */
  return copysign(ldexp(rint(ldexp(ax, -q)), q), x);
}

/* A float value rounded to a float dtype, correctly (from f64 too). */
static double round_to(double v, nxvk_dtype to) {
  switch (to) {
  case NXVK_F16: return isnan(v) ? v : nxvk_f16_round(v);
  case NXVK_BF16: return isnan(v) ? v : nxvk_bf16_round(v);
  case NXVK_F32: return (float)v;
  default: return v;
  }
}

void nxvk_convert_elem(const nxvk_host *src, int64_t si, nxvk_host *dst, int64_t di) {
  nxvk_dtype from = src->dtype, to = dst->dtype;
  bool ffloat = nxvk_dtype_is_float(from);
  if (to == NXVK_BOOL) {
    /* numpy: nonzero is true, NaN included */
    if (ffloat) nxvk_host_set_int(dst, di, nxvk_host_get(src, si) != 0);
    else nxvk_host_set_int(dst, di, nxvk_host_get_int(src, si) != 0);
    return;
  }
  if (nxvk_dtype_is_float(to)) {
    if (ffloat) {
      nxvk_host_set(dst, di, round_to(nxvk_host_get(src, si), to));
      return;
    }
    /* integers round to nearest even: to f64 directly, to f32 directly, to
     * f16 and bf16 through f32 */
    int64_t v = nxvk_host_get_int(src, si);
    double f64 = from == NXVK_U64 ? (double)(uint64_t)v : (double)v;
    float f32 = from == NXVK_U64 ? (float)(uint64_t)v : (float)v;
    nxvk_host_set(dst, di, to == NXVK_F64 ? f64 : (double)f32);
    return;
  }
  if (!ffloat) { /* integer -> integer wraps (bool is 0 / 1) */
    nxvk_host_set_int(dst, di, nxvk_host_get_int(src, si));
    return;
  }
  /* float -> integer: NaN -> 0, toward zero, saturating at the type's range */
  double v = nxvk_host_get(src, si);
  const nxvk_dtype_info *t = nxvk_dtype_info_of(to);
  if (isnan(v)) {
    nxvk_host_set_int(dst, di, 0);
  } else if (t->cls == NXVK_CLASS_UNSIGNED) {
    double top = ldexp(1, t->bits);
    if (v <= 0) nxvk_host_set_int(dst, di, 0);
    else if (v >= top) nxvk_host_set_int(dst, di, -1); /* all ones: the maximum */
    else nxvk_host_set_int(dst, di, (int64_t)(uint64_t)trunc(v));
  } else {
    double top = ldexp(1, t->bits - 1);
    if (v >= top) nxvk_host_set_int(dst, di, t->bits == 64 ? INT64_MAX : (int64_t)top - 1);
    else if (v <= -top) nxvk_host_set_int(dst, di, t->bits == 64 ? INT64_MIN : -(int64_t)top);
    else nxvk_host_set_int(dst, di, (int64_t)trunc(v));
  }
}

static void host_copy(const nxvk_host *src, int64_t sbase, const int64_t *sst, nxvk_host *dst,
                      int64_t dbase, const int64_t *dst_st, const nxvk_shape *dims) {
  int64_t n;
  if (nxvk_shape_count(dims, &n) || n == 0) return;
  int64_t idx[NXVK_MAX_RANK] = {0};
  bool same = src->dtype == dst->dtype;
  size_t es = nxvk_dtype_size(src->dtype);
  for (int64_t i = 0; i < n; i++) {
    int64_t so = sbase, dof = dbase;
    for (int d = 0; d < dims->rank; d++) {
      so += idx[d] * sst[d];
      dof += idx[d] * dst_st[d];
    }
    if (same) /* bit-exact, keeps NaN payloads and -0 */
      memcpy((char *)dst->data + dof * (int64_t)es, (const char *)src->data + so * (int64_t)es, es);
    else
      nxvk_convert_elem(src, so, dst, dof);
    for (int d = dims->rank - 1; d >= 0; d--) {
      if (++idx[d] < dims->dim[d]) break;
      idx[d] = 0;
    }
  }
}

/* The ops that are views of their input (transpose, slice, reverse): the
 * whole output, contiguous, read from the input at base + sum idx * sst. */
static int view_copy_gpu(nxvk_rec *r, const nxvk_tensor *in, int64_t base, const int64_t *sst,
                         nxvk_tensor *out) {
  int64_t dst[NXVK_MAX_RANK];
  nxvk_contiguous_strides(&out->shape, dst);
  return nxvk_strided_copy(r, in->buf, in->dtype, base, sst, out->buf, out->dtype, 0, dst, &out->shape);
}

static int view_copy_ref(const nxvk_host *in, int64_t base, const int64_t *sst, nxvk_host *out) {
  int64_t dst[NXVK_MAX_RANK];
  nxvk_contiguous_strides(&out->shape, dst);
  host_copy(in, base, sst, out, 0, dst, &out->shape);
  return NXVK_OK;
}

/* ---- reshape ---- */

int nxvk_reshape_infer(const nxvk_op *op, const nxvk_attrs *a, const nxvk_meta *in, int nin,
                       nxvk_meta *out) {
  (void)op;
  (void)nin;
  if (!(a->set & NXVK_ATTR_SHAPE))
    return nxvk_seterr(NXVK_E_BAD_ATTR, "reshape: attribute \"shape\" is required");
  int64_t have, want = 1;
  int rc = nxvk_shape_count(&in->shape, &have);
  if (rc) return rc;
  out->dtype = in->dtype;
  out->shape = a->shape;
  int infer = -1;
  for (int d = 0; d < a->shape.rank; d++) {
    if (a->shape.dim[d] == -1) {
      if (infer >= 0) return nxvk_seterr(NXVK_E_BAD_ATTR, "reshape: shape: more than one -1");
      infer = d;
    } else if (a->shape.dim[d] < 0) {
      return nxvk_seterr(NXVK_E_BAD_ATTR, "reshape: shape: dimension %d is negative", d);
    } else if (!nxvk_mul_ok(want, a->shape.dim[d], &want) || want >= NXVK_MAX_ELEMENTS) {
      return nxvk_seterr(NXVK_E_TOO_LARGE, "reshape: shape has too many elements");
    }
  }
  if (infer >= 0) {
    if (want == 0 || have % want)
      return nxvk_seterr(NXVK_E_SHAPE_MISMATCH, "reshape: cannot infer -1: %lld elements into %lld",
                         (long long)have, (long long)want);
    out->shape.dim[infer] = have / want;
    want = have;
  }
  if (want != have) {
    char b1[160], b2[160];
    return nxvk_seterr(NXVK_E_SHAPE_MISMATCH, "reshape: %s (%lld elements) into %s (%lld)",
                       nxvk_shape_str(&in->shape, b1, sizeof b1), (long long)have,
                       nxvk_shape_str(&a->shape, b2, sizeof b2), (long long)want);
  }
  return NXVK_OK;
}

int nxvk_reshape_ref(const nxvk_op *op, const nxvk_attrs *a, const nxvk_host *in, int nin,
                     nxvk_host *out) {
  (void)op; (void)a; (void)nin;
  if (nxvk_host_bytes(out)) memcpy(out->data, in[0].data, nxvk_host_bytes(out));
  return NXVK_OK;
}

/* ---- transpose ---- */

static void get_perm(const nxvk_attrs *a, int rank, int *perm) {
  for (int d = 0; d < rank; d++)
    perm[d] = (a->set & NXVK_ATTR_PERM) ? (a->perm[d] < 0 ? a->perm[d] + rank : a->perm[d])
                                        : rank - 1 - d;
}

int nxvk_transpose_infer(const nxvk_op *op, const nxvk_attrs *a, const nxvk_meta *in, int nin,
                         nxvk_meta *out) {
  (void)op; (void)nin;
  int rank = in->shape.rank;
  if ((a->set & NXVK_ATTR_PERM) && a->nperm != rank)
    return nxvk_seterr(NXVK_E_BAD_ATTR, "transpose: perm has %d entries for rank %d", a->nperm, rank);
  int perm[NXVK_MAX_RANK];
  bool seen[NXVK_MAX_RANK] = {false};
  get_perm(a, rank, perm);
  for (int d = 0; d < rank; d++) {
    if (perm[d] < 0 || perm[d] >= rank || seen[perm[d]])
      return nxvk_seterr(NXVK_E_BAD_ATTR, "transpose: perm is not a permutation of 0..%d", rank - 1);
    seen[perm[d]] = true;
  }
  out->dtype = in->dtype;
  out->shape.rank = rank;
  for (int d = 0; d < rank; d++) out->shape.dim[d] = in->shape.dim[perm[d]];
  return NXVK_OK;
}

static void transpose_strides(const nxvk_attrs *a, const nxvk_shape *in, int64_t *src_st) {
  int perm[NXVK_MAX_RANK];
  int64_t st[NXVK_MAX_RANK];
  get_perm(a, in->rank, perm);
  nxvk_contiguous_strides(in, st);
  for (int d = 0; d < in->rank; d++) src_st[d] = st[perm[d]];
}

int nxvk_transpose_gpu(nxvk_rec *r, const nxvk_op *op, const nxvk_attrs *a, nxvk_tensor *const *in,
                       int nin, nxvk_tensor *out) {
  (void)op; (void)nin;
  int64_t sst[NXVK_MAX_RANK];
  transpose_strides(a, &in[0]->shape, sst);
  return view_copy_gpu(r, in[0], 0, sst, out);
}

int nxvk_transpose_ref(const nxvk_op *op, const nxvk_attrs *a, const nxvk_host *in, int nin,
                       nxvk_host *out) {
  (void)op; (void)nin;
  int64_t sst[NXVK_MAX_RANK];
  transpose_strides(a, &in[0].shape, sst);
  return view_copy_ref(&in[0], 0, sst, out);
}

/* ---- slice ---- */

int nxvk_slice_infer(const nxvk_op *op, const nxvk_attrs *a, const nxvk_meta *in, int nin,
                     nxvk_meta *out) {
  (void)op; (void)nin;
  int rank = in->shape.rank;
  if (!(a->set & NXVK_ATTR_SLICE))
    return nxvk_seterr(NXVK_E_BAD_ATTR, "slice: attributes \"start\" and \"length\" are required");
  if (a->nslice != rank)
    return nxvk_seterr(NXVK_E_BAD_ATTR, "slice: start/length/stride have %d entries for rank %d",
                       a->nslice, rank);
  out->dtype = in->dtype;
  out->shape.rank = rank;
  for (int d = 0; d < rank; d++) {
    int64_t dim = in->shape.dim[d], s = a->start[d], len = a->length[d], st = a->stride[d];
    if (st < 1) return nxvk_seterr(NXVK_E_BAD_ATTR, "slice: stride[%d] = %lld must be >= 1", d, (long long)st);
    if (len < 0) return nxvk_seterr(NXVK_E_BAD_ATTR, "slice: length[%d] = %lld is negative", d, (long long)len);
    if (s < 0 || s > dim)
      return nxvk_seterr(NXVK_E_BAD_ATTR, "slice: start[%d] = %lld is outside 0..%lld", d,
                         (long long)s, (long long)dim);
    if (len > 0 && (len - 1 > (dim - 1 - s) / st || s >= dim))
      return nxvk_seterr(NXVK_E_BAD_ATTR,
                         "slice: axis %d: start %lld + (length %lld - 1) * stride %lld is past %lld",
                         d, (long long)s, (long long)len, (long long)st, (long long)dim);
    out->shape.dim[d] = len;
  }
  return NXVK_OK;
}

static int64_t slice_strides(const nxvk_attrs *a, const nxvk_shape *in, int64_t *sst) {
  int64_t st[NXVK_MAX_RANK], base = 0;
  nxvk_contiguous_strides(in, st);
  for (int d = 0; d < in->rank; d++) {
    sst[d] = st[d] * a->stride[d];
    base += a->start[d] * st[d];
  }
  return base;
}

int nxvk_slice_gpu(nxvk_rec *r, const nxvk_op *op, const nxvk_attrs *a, nxvk_tensor *const *in,
                   int nin, nxvk_tensor *out) {
  (void)op; (void)nin;
  int64_t sst[NXVK_MAX_RANK];
  int64_t base = slice_strides(a, &in[0]->shape, sst);
  return view_copy_gpu(r, in[0], base, sst, out);
}

int nxvk_slice_ref(const nxvk_op *op, const nxvk_attrs *a, const nxvk_host *in, int nin,
                   nxvk_host *out) {
  (void)op; (void)nin;
  int64_t sst[NXVK_MAX_RANK];
  int64_t base = slice_strides(a, &in[0].shape, sst);
  return view_copy_ref(&in[0], base, sst, out);
}

/* ---- reverse ---- */

/* Which axes reverse ("axes"; absent: all), checked as reductions check them. */
static int reverse_axes(const nxvk_attrs *a, int rank, bool *rev) {
  for (int d = 0; d < rank; d++) rev[d] = !(a->set & NXVK_ATTR_AXES);
  if (!(a->set & NXVK_ATTR_AXES)) return NXVK_OK;
  for (int i = 0; i < a->naxes; i++) {
    int ax = a->axes[i] < 0 ? a->axes[i] + rank : a->axes[i];
    if (ax < 0 || ax >= rank)
      return nxvk_seterr(NXVK_E_BAD_ATTR, "reverse: axes: axis %d is out of range for rank %d", a->axes[i], rank);
    if (rev[ax]) return nxvk_seterr(NXVK_E_BAD_ATTR, "reverse: axes: axis %d given twice", a->axes[i]);
    rev[ax] = true;
  }
  return NXVK_OK;
}

int nxvk_reverse_infer(const nxvk_op *op, const nxvk_attrs *a, const nxvk_meta *in, int nin,
                       nxvk_meta *out) {
  (void)op; (void)nin;
  bool rev[NXVK_MAX_RANK];
  int rc = reverse_axes(a, in->shape.rank, rev);
  if (rc) return rc;
  *out = *in;
  return NXVK_OK;
}

/* A reversed axis reads from its end with a negative stride (the copy
 * kernel's unsigned offsets wrap back into range). */
static int64_t reverse_strides(const nxvk_attrs *a, const nxvk_shape *in, int64_t *sst) {
  bool rev[NXVK_MAX_RANK];
  int64_t base = 0;
  (void)reverse_axes(a, in->rank, rev);
  nxvk_contiguous_strides(in, sst);
  for (int d = 0; d < in->rank; d++)
    if (rev[d] && in->dim[d] > 0) {
      base += (in->dim[d] - 1) * sst[d];
      sst[d] = -sst[d];
    }
  return base;
}

int nxvk_reverse_gpu(nxvk_rec *r, const nxvk_op *op, const nxvk_attrs *a, nxvk_tensor *const *in,
                     int nin, nxvk_tensor *out) {
  (void)op; (void)nin;
  int64_t sst[NXVK_MAX_RANK];
  int64_t base = reverse_strides(a, &in[0]->shape, sst);
  return view_copy_gpu(r, in[0], base, sst, out);
}

int nxvk_reverse_ref(const nxvk_op *op, const nxvk_attrs *a, const nxvk_host *in, int nin,
                     nxvk_host *out) {
  (void)op; (void)nin;
  int64_t sst[NXVK_MAX_RANK];
  int64_t base = reverse_strides(a, &in[0].shape, sst);
  return view_copy_ref(&in[0], base, sst, out);
}

/* ---- concatenate ---- */

static int concat_axis(const nxvk_attrs *a, int rank, int *axis) {
  int ax = (a->set & NXVK_ATTR_AXIS) ? a->axis : 0;
  if (ax < 0) ax += rank;
  if (ax < 0 || ax >= rank)
    return nxvk_seterr(NXVK_E_BAD_ATTR, "concatenate: axis %d is out of range for rank %d",
                       (a->set & NXVK_ATTR_AXIS) ? a->axis : 0, rank);
  *axis = ax;
  return NXVK_OK;
}

int nxvk_concat_infer(const nxvk_op *op, const nxvk_attrs *a, const nxvk_meta *in, int nin,
                      nxvk_meta *out) {
  (void)op;
  int rank = in[0].shape.rank, ax;
  if (rank == 0) return nxvk_seterr(NXVK_E_SHAPE_MISMATCH, "concatenate: inputs must have rank >= 1");
  int rc = concat_axis(a, rank, &ax);
  if (rc) return rc;
  out->dtype = in[0].dtype;
  out->shape = in[0].shape;
  out->shape.dim[ax] = 0;
  for (int i = 0; i < nin; i++) {
    char b1[160], b2[160];
    bool ok = in[i].shape.rank == rank;
    for (int d = 0; ok && d < rank; d++) ok = d == ax || in[i].shape.dim[d] == in[0].shape.dim[d];
    if (!ok)
      return nxvk_seterr(NXVK_E_SHAPE_MISMATCH,
                         "concatenate: input %d %s does not match input 1 %s off axis %d", i + 1,
                         nxvk_shape_str(&in[i].shape, b1, sizeof b1),
                         nxvk_shape_str(&in[0].shape, b2, sizeof b2), ax);
    out->shape.dim[ax] += in[i].shape.dim[ax];
  }
  return NXVK_OK;
}

int nxvk_concat_gpu(nxvk_rec *r, const nxvk_op *op, const nxvk_attrs *a, nxvk_tensor *const *in,
                    int nin, nxvk_tensor *out) {
  (void)op;
  int ax;
  int rc = concat_axis(a, out->shape.rank, &ax);
  int64_t dst[NXVK_MAX_RANK], off = 0;
  nxvk_contiguous_strides(&out->shape, dst);
  for (int i = 0; i < nin && rc == NXVK_OK; i++) {
    int64_t sst[NXVK_MAX_RANK];
    nxvk_contiguous_strides(&in[i]->shape, sst);
    rc = nxvk_strided_copy(r, in[i]->buf, in[i]->dtype, 0, sst, out->buf, out->dtype,
                           off * dst[ax], dst, &in[i]->shape);
    off += in[i]->shape.dim[ax];
  }
  return rc;
}

int nxvk_concat_ref(const nxvk_op *op, const nxvk_attrs *a, const nxvk_host *in, int nin,
                    nxvk_host *out) {
  (void)op;
  int ax;
  int rc = concat_axis(a, out->shape.rank, &ax);
  int64_t dst[NXVK_MAX_RANK], off = 0;
  nxvk_contiguous_strides(&out->shape, dst);
  for (int i = 0; i < nin && rc == NXVK_OK; i++) {
    int64_t sst[NXVK_MAX_RANK];
    nxvk_contiguous_strides(&in[i].shape, sst);
    host_copy(&in[i], 0, sst, out, off * dst[ax], dst, &in[i].shape);
    off += in[i].shape.dim[ax];
  }
  return rc;
}

/* ---- as_type ---- */

int nxvk_astype_infer(const nxvk_op *op, const nxvk_attrs *a, const nxvk_meta *in, int nin,
                      nxvk_meta *out) {
  (void)op; (void)nin;
  if (!(a->set & NXVK_ATTR_DTYPE))
    return nxvk_seterr(NXVK_E_BAD_ATTR, "as_type: attribute \"dtype\" is required");
  out->dtype = a->dtype;
  out->shape = in->shape;
  return NXVK_OK;
}

int nxvk_astype_gpu(nxvk_rec *r, const nxvk_op *op, const nxvk_attrs *a, nxvk_tensor *const *in,
                    int nin, nxvk_tensor *out) {
  (void)op; (void)a; (void)nin;
  /* a flat copy: one dimension of count elements */
  nxvk_shape flat = {1, {out->count}};
  int64_t one[1] = {1};
  return nxvk_strided_copy(r, in[0]->buf, in[0]->dtype, 0, one, out->buf, out->dtype, 0, one, &flat);
}

int nxvk_astype_ref(const nxvk_op *op, const nxvk_attrs *a, const nxvk_host *in, int nin,
                    nxvk_host *out) {
  (void)op; (void)a; (void)nin;
  nxvk_shape flat = {1, {nxvk_host_count(out)}};
  int64_t one[1] = {1};
  host_copy(&in[0], 0, one, out, 0, one, &flat);
  return NXVK_OK;
}

/* ---- bitcast: the same bytes read as another dtype of the same width ---- */

int nxvk_bitcast_infer(const nxvk_op *op, const nxvk_attrs *a, const nxvk_meta *in, int nin,
                       nxvk_meta *out) {
  (void)op; (void)nin;
  if (!(a->set & NXVK_ATTR_DTYPE))
    return nxvk_seterr(NXVK_E_BAD_ATTR, "bitcast: attribute \"dtype\" is required");
  size_t from = nxvk_dtype_size(in->dtype), to = nxvk_dtype_size(a->dtype);
  if (a->dtype == NXVK_BOOL || in->dtype == NXVK_BOOL || from != to)
    return nxvk_seterr(NXVK_E_BAD_ATTR,
                       "bitcast: attribute \"dtype\": %s is %zu bits, the input's %s %zu (a numeric dtype "
                       "of the same width)",
                       nxvk_dtype_name(a->dtype), 8 * to, nxvk_dtype_name(in->dtype), 8 * from);
  out->dtype = a->dtype;
  out->shape = in->shape;
  return NXVK_OK;
}

/* a byte copy (copy_vec4's uvec4 words, no float in a register), so NaN
 * payloads, signed zeros and denormals keep their bits on every driver;
 * vkCmdCopyBuffer alone ran at 840 GB/s on an H100, the words at 2 290 */
int nxvk_bitcast_gpu(nxvk_rec *r, const nxvk_op *op, const nxvk_attrs *a, nxvk_tensor *const *in,
                     int nin, nxvk_tensor *out) {
  (void)op; (void)a; (void)nin;
  return nxvk_rec_copy_bytes(r, in[0]->buf, out->buf, (size_t)out->count * nxvk_dtype_size(out->dtype));
}

int nxvk_bitcast_ref(const nxvk_op *op, const nxvk_attrs *a, const nxvk_host *in, int nin,
                     nxvk_host *out) {
  (void)op; (void)a; (void)nin;
  size_t n = nxvk_host_bytes(out);
  if (n) memcpy(out->data, in[0].data, n); /* an empty tensor may hold no buffer */
  return NXVK_OK;
}
