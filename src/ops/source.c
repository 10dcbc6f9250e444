/*
 * source.c - ops with no inputs: iota, eye, random_uniform, random_normal.
 * The Philox4x32-10 stream is documented in shaders/random.comp; this file
 * produces the same words, so uniform output is bit-identical to the GPU.
 */
#include "ops.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int nxvk_source_infer(const nxvk_op *op, const nxvk_attrs *a, const nxvk_meta *in, int nin,
                      nxvk_meta *out) {
  (void)in; (void)nin;
  if (!(a->set & NXVK_ATTR_SHAPE))
    return nxvk_seterr(NXVK_E_BAD_ATTR, "%s: attribute \"shape\" is required", op->d.name);
  bool random = op->gpu == nxvk_random_gpu;
  out->dtype = (a->set & NXVK_ATTR_DTYPE) ? a->dtype : (random ? NXVK_F32 : NXVK_I32);
  if (!(op->d.dtypes & NXVK_DT(out->dtype)))
    return nxvk_seterr(NXVK_E_UNSUPPORTED_DTYPE, "%s does not make %s", op->d.name,
                       nxvk_dtype_name(out->dtype));
  out->shape = a->shape;
  for (int d = 0; d < a->shape.rank; d++)
    if (a->shape.dim[d] < 0)
      return nxvk_seterr(NXVK_E_BAD_ATTR, "%s: shape: dimension %d is negative", op->d.name, d);
  if (op->gpu == nxvk_eye_gpu && a->shape.rank < 2)
    return nxvk_seterr(NXVK_E_BAD_ATTR, "eye: shape: rank %d, at least 2 needed", a->shape.rank);
  if (!random && (a->set & NXVK_ATTR_AXIS)) {
    int ax = a->axis < 0 ? a->axis + a->shape.rank : a->axis;
    if (ax < 0 || ax >= a->shape.rank)
      return nxvk_seterr(NXVK_E_BAD_ATTR, "iota: axis %d is out of range for rank %d", a->axis,
                         a->shape.rank);
  }
  return NXVK_OK;
}

/* iota: (inner, axis dim, use axis) */
static void iota_params(const nxvk_attrs *a, int64_t *inner, int64_t *dim, bool *use) {
  *use = (a->set & NXVK_ATTR_AXIS) != 0;
  *inner = 1;
  *dim = 1;
  if (!*use) return;
  int ax = a->axis < 0 ? a->axis + a->shape.rank : a->axis;
  *dim = a->shape.dim[ax];
  for (int d = ax + 1; d < a->shape.rank; d++) *inner *= a->shape.dim[d];
  if (*inner == 0) *inner = 1;
}

/* iota.comp over the whole output: inner, dim and its mode (0 the flat
 * index, 1 the index along an axis, 2 eye) */
static int iota_dispatch(nxvk_rec *r, nxvk_tensor *out, int64_t inner, int64_t dim, uint32_t mode) {
  uint32_t meta[4] = {(uint32_t)out->count, (uint32_t)inner, (uint32_t)dim, mode};
  char name[32];
  snprintf(name, sizeof name, "iota_%s", nxvk_dtype_name(out->dtype));
  uint32_t spec[1] = {NXVK_WG};
  return nxvk_dispatch_1d(r, name, spec, 1, meta, 4, &out->buf, 1, (uint64_t)out->count);
}

int nxvk_iota_gpu(nxvk_rec *r, const nxvk_op *op, const nxvk_attrs *a, nxvk_tensor *const *in,
                  int nin, nxvk_tensor *out) {
  (void)op; (void)in; (void)nin;
  int64_t inner, dim;
  bool use;
  iota_params(a, &inner, &dim, &use);
  return iota_dispatch(r, out, inner, dim, use);
}

int nxvk_iota_ref(const nxvk_op *op, const nxvk_attrs *a, const nxvk_host *in, int nin,
                  nxvk_host *out) {
  (void)op; (void)in; (void)nin;
  int64_t inner, dim;
  bool use;
  iota_params(a, &inner, &dim, &use);
  int64_t n = nxvk_host_count(out);
  for (int64_t i = 0; i < n; i++) {
    int64_t v = use ? (i / inner) % dim : i;
    /* as the GPU does: through uint32, then the dtype's conversion */
    if (nxvk_dtype_is_float(out->dtype)) nxvk_host_set(out, i, (double)(uint32_t)v);
    else nxvk_host_set_int(out, i, (int64_t)(uint32_t)v);
  }
  return NXVK_OK;
}

/* ---- Philox4x32-10 ---- */

static void philox(uint32_t block, uint32_t k0, uint32_t k1, uint32_t w[4]) {
  uint32_t c0 = block, c1 = 0, c2 = 0, c3 = 0;
  for (int round = 0; round < 10; round++) {
    uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
    uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
    uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  w[0] = c0; w[1] = c1; w[2] = c2; w[3] = c3;
}

static float unit_f32(uint32_t w) { return (float)(w >> 8) * (1.0f / 16777216.0f); }
static double unit_f64(uint32_t lo, uint32_t hi) {
  return ((double)(hi >> 11) * 4294967296.0 + (double)lo) * (1.0 / 9007199254740992.0);
}

int nxvk_random_gpu(nxvk_rec *r, const nxvk_op *op, const nxvk_attrs *a, nxvk_tensor *const *in,
                    int nin, nxvk_tensor *out) {
  (void)in; (void)nin;
  uint32_t meta[3] = {(uint32_t)out->count, (uint32_t)a->seed, (uint32_t)(a->seed >> 32)};
  char name[32];
  snprintf(name, sizeof name, "random_%s", nxvk_dtype_name(out->dtype));
  uint32_t spec[2] = {NXVK_WG, (uint32_t)op->code};
  return nxvk_dispatch_1d(r, name, spec, 2, meta, 3, &out->buf, 1, (uint64_t)out->count);
}

int nxvk_random_ref(const nxvk_op *op, const nxvk_attrs *a, const nxvk_host *in, int nin,
                    nxvk_host *out) {
  (void)in; (void)nin;
  uint32_t k0 = (uint32_t)a->seed, k1 = (uint32_t)(a->seed >> 32);
  int64_t n = nxvk_host_count(out);
  bool f32 = out->dtype != NXVK_F64;    /* f16 and bf16 come from the f32 stream */
  bool half = out->dtype == NXVK_F16 || out->dtype == NXVK_BF16;
  for (int64_t i = 0; i < n; i++) {
    uint32_t w[4];
    if (op->code == NXVK_RANDOM_UNIFORM && half) {
      /* the top 11 (f16) or 8 (bf16) bits of the f32 stream's word: k * 2^-bits,
       * exact in the dtype and below 1 (rounding an f32 could reach 1.0) */
      int bits = out->dtype == NXVK_F16 ? 11 : 8;
      philox((uint32_t)(i / 4), k0, k1, w);
      nxvk_host_set(out, i, ldexp((double)(w[i % 4] >> (32 - bits)), -bits));
      continue;
    }
    if (op->code == NXVK_RANDOM_UNIFORM) {
      philox((uint32_t)(i / (f32 ? 4 : 2)), k0, k1, w);
      if (f32)
        ((float *)out->data)[i] = unit_f32(w[i % 4]);
      else
        ((double *)out->data)[i] = i % 2 ? unit_f64(w[2], w[3]) : unit_f64(w[0], w[1]);
      continue;
    }
    philox((uint32_t)(i / 2), k0, k1, w);
    long double u1 = f32 ? unit_f32(w[0]) : unit_f64(w[0], w[1]);
    long double u2 = f32 ? unit_f32(w[1]) : unit_f64(w[2], w[3]);
    long double rr = sqrtl(-2.0L * logl(1.0L - u1));
    long double ang = 6.283185307179586476925286766559L * u2;
    long double v = i % 2 ? rr * sinl(ang) : rr * cosl(ang);
    if (f32) nxvk_host_set(out, i, (double)(float)v);
    else ((double *)out->data)[i] = (double)v;
  }
  return NXVK_OK;
}

/* eye: 1 where the last two indices are equal, else 0 (batched over the
 * leading axes, as Nx.eye); iota.comp's mode 2 with inner = the last dim
 * and dim = the one before. */
int nxvk_eye_gpu(nxvk_rec *r, const nxvk_op *op, const nxvk_attrs *a, nxvk_tensor *const *in,
                 int nin, nxvk_tensor *out) {
  (void)op; (void)in; (void)nin;
  int rank = a->shape.rank;
  return iota_dispatch(r, out, a->shape.dim[rank - 1], a->shape.dim[rank - 2], 2);
}

int nxvk_eye_ref(const nxvk_op *op, const nxvk_attrs *a, const nxvk_host *in, int nin,
                 nxvk_host *out) {
  (void)op; (void)in; (void)nin;
  int rank = a->shape.rank;
  int64_t cols = a->shape.dim[rank - 1], rows = a->shape.dim[rank - 2];
  int64_t n = nxvk_host_count(out);
  for (int64_t i = 0; i < n; i++) {
    int64_t v = (i / cols) % rows == i % cols;
    if (nxvk_dtype_is_float(out->dtype)) nxvk_host_set(out, i, (double)v);
    else nxvk_host_set_int(out, i, v);
  }
  return NXVK_OK;
}
