/*
 * dot.c - matrix products [m,k]x[k,n] and batched [b,m,k]x[b,k,n].
 * Variants: "tiled" (shared-memory tiles, the default) and "naive" (one
 * invocation per output, kept as the baseline the benchmarks compare with).
 */
#include "ops.h"

#include <stdio.h>
#include <string.h>

static const char *const dot_variants[] = {"tiled", "naive"};

int nxvk_op_variants(const nxvk_op_desc *op, const char *const **names) {
  if (op->kind == NXVK_KIND_DOT) {
    *names = dot_variants;
    return (int)NXVK_ARRAY_LEN(dot_variants);
  }
  *names = NULL;
  return 0;
}

int nxvk_dot_infer(const nxvk_op *op, const nxvk_attrs *a, const nxvk_meta *in, int nin,
                   nxvk_meta *out) {
  (void)nin;
  const nxvk_shape *x = &in[0].shape, *y = &in[1].shape;
  char b1[160], b2[160];
  if (a->set & NXVK_ATTR_VARIANT) {
    bool known = false;
    for (size_t i = 0; i < NXVK_ARRAY_LEN(dot_variants); i++)
      known |= strcmp(a->variant, dot_variants[i]) == 0;
    if (!known)
      return nxvk_seterr(NXVK_E_BAD_ATTR, "dot: variant: unknown '%s' (tiled naive)", a->variant);
  }
  if (!((x->rank == 2 && y->rank == 2) || (x->rank == 3 && y->rank == 3)))
    return nxvk_seterr(NXVK_E_SHAPE_MISMATCH,
                       "dot takes [m,k]x[k,n] or [b,m,k]x[b,k,n], not %s x %s",
                       nxvk_shape_str(x, b1, sizeof b1), nxvk_shape_str(y, b2, sizeof b2));
  int r = x->rank;
  if (x->dim[r - 1] != y->dim[r - 2])
    return nxvk_seterr(NXVK_E_SHAPE_MISMATCH, "dot: inner dimensions differ: %s x %s (%lld != %lld)",
                       nxvk_shape_str(x, b1, sizeof b1), nxvk_shape_str(y, b2, sizeof b2),
                       (long long)x->dim[r - 1], (long long)y->dim[r - 2]);
  if (r == 3 && x->dim[0] != y->dim[0])
    return nxvk_seterr(NXVK_E_SHAPE_MISMATCH, "dot: batch sizes differ: %s x %s",
                       nxvk_shape_str(x, b1, sizeof b1), nxvk_shape_str(y, b2, sizeof b2));
  out->dtype = in[0].dtype;
  out->shape.rank = r;
  if (r == 3) out->shape.dim[0] = x->dim[0];
  out->shape.dim[r - 2] = x->dim[r - 2];
  out->shape.dim[r - 1] = y->dim[r - 1];
  (void)op;
  return NXVK_OK;
}

int nxvk_dot_gpu(nxvk_rec *r, const nxvk_op *op, const nxvk_attrs *a, nxvk_tensor *const *in,
                 int nin, nxvk_tensor *out) {
  (void)op;
  (void)nin;
  const nxvk_shape *x = &in[0]->shape, *y = &in[1]->shape;
  int rk = x->rank;
  uint32_t batch = rk == 3 ? (uint32_t)x->dim[0] : 1;
  uint32_t M = (uint32_t)x->dim[rk - 2], K = (uint32_t)x->dim[rk - 1], N = (uint32_t)y->dim[rk - 1];
  uint32_t meta[4] = {M, N, K, batch};
  nxvk_buffer *bufs[3] = {in[0]->buf, in[1]->buf, out->buf};
  const char *dt = nxvk_dtype_name(in[0]->dtype);
  char name[32];
  uint32_t spec[1] = {NXVK_WG};
  bool naive = (a->set & NXVK_ATTR_VARIANT) && strcmp(a->variant, "naive") == 0;
  nxvk_ctx *c = nxvk_rec_ctx(r);
  if (!naive && (batch > c->info.max_workgroup_count[2] ||
                 (M + 63) / 64 > c->info.max_workgroup_count[1]))
    naive = true; /* grid too large for the tiled layout: the naive one strides */
  if (naive) {
    snprintf(name, sizeof name, "dot_naive_%s", dt);
    return nxvk_dispatch_1d(r, name, spec, 1, meta, 4, bufs, 3, (uint64_t)out->count);
  }
  snprintf(name, sizeof name, "dot_tiled_%s", dt);
  return nxvk_dispatch_grid(r, name, spec, 1, meta, 4, bufs, 3, (N + 63) / 64, (M + 63) / 64, batch);
}

int nxvk_dot_ref(const nxvk_op *op, const nxvk_attrs *a, const nxvk_host *in, int nin,
                 nxvk_host *out) {
  (void)op;
  (void)a;
  (void)nin;
  const nxvk_shape *x = &in[0].shape, *y = &in[1].shape;
  int rk = x->rank;
  int64_t batch = rk == 3 ? x->dim[0] : 1;
  int64_t M = x->dim[rk - 2], K = x->dim[rk - 1], N = y->dim[rk - 1];
  for (int64_t b = 0; b < batch; b++)
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++) {
        long double acc = 0;
        for (int64_t k = 0; k < K; k++)
          acc += (long double)nxvk_host_get(&in[0], b * M * K + i * K + k) *
                 (long double)nxvk_host_get(&in[1], b * K * N + k * N + j);
        int64_t o = b * M * N + i * N + j;
        if (out->dtype == NXVK_F32) ((float *)out->data)[o] = (float)acc;
        else ((double *)out->data)[o] = (double)acc;
      }
  return NXVK_OK;
}
