/*
 * elementwise.c - unary, binary, comparison and select ops: numpy
 * broadcasting, the GPU dispatch of the generated shader, and the reference
 * loop around each op's scalar function.
 */
#include "ops.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "codegen.h"

int nxvk_broadcast(const nxvk_shape *const *shapes, int n, nxvk_shape *out) {
  int rank = 0;
  for (int i = 0; i < n; i++)
    if (shapes[i]->rank > rank) rank = shapes[i]->rank;
  out->rank = rank;
  for (int d = 0; d < rank; d++) {
    int64_t dim = 1;
    for (int i = 0; i < n; i++) {
      int off = rank - shapes[i]->rank;
      if (d < off) continue;
      int64_t di = shapes[i]->dim[d - off];
      if (di == 1) continue;
      if (dim != 1 && di != dim) {
        char b1[160], b2[160];
        /* name the first pair that disagrees */
        int j = 0;
        while (j < i) {
          int offj = rank - shapes[j]->rank;
          if (d >= offj && shapes[j]->dim[d - offj] != 1) break;
          j++;
        }
        return nxvk_seterr(NXVK_E_SHAPE_MISMATCH,
                           "shapes %s (input %d) and %s (input %d) do not broadcast",
                           nxvk_shape_str(shapes[j], b1, sizeof b1), j + 1,
                           nxvk_shape_str(shapes[i], b2, sizeof b2), i + 1);
      }
      dim = di;
    }
    out->dim[d] = dim;
  }
  return NXVK_OK;
}

void nxvk_broadcast_strides(const nxvk_shape *s, const nxvk_shape *out, int64_t *strides) {
  int64_t own[NXVK_MAX_RANK];
  nxvk_contiguous_strides(s, own);
  int off = out->rank - s->rank;
  for (int d = 0; d < out->rank; d++) {
    if (d < off || s->dim[d - off] == 1)
      strides[d] = 0;
    else
      strides[d] = own[d - off];
  }
}

int nxvk_ew_infer(const nxvk_op *op, const nxvk_attrs *a, const nxvk_meta *in, int nin,
                  nxvk_meta *out) {
  (void)a;
  const nxvk_shape *shapes[3];
  for (int i = 0; i < nin; i++) shapes[i] = &in[i].shape;
  int rc = nxvk_broadcast(shapes, nin, &out->shape);
  if (rc) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s: %s", op->d.name, nxvk_errmsg());
    return nxvk_seterr(rc, "%s", msg);
  }
  out->dtype = op->d.kind == NXVK_KIND_COMPARE ? NXVK_BOOL : in[nin - 1].dtype;
  return NXVK_OK;
}

int nxvk_ew_gpu(nxvk_rec *r, const nxvk_op *op, const nxvk_attrs *a, nxvk_tensor *const *in,
                int nin, nxvk_tensor *out) {
  (void)a;
  uint32_t meta[NXVK_EW_META_WORDS(3)] = {0};
  meta[0] = (uint32_t)out->count;
  meta[1] = (uint32_t)out->shape.rank;
  for (int d = 0; d < out->shape.rank; d++) meta[3 + d] = (uint32_t)out->shape.dim[d];
  for (int k = 0; k < nin; k++) {
    if (nxvk_shape_equal(&in[k]->shape, &out->shape)) meta[2] |= 1u << k;
    int64_t st[NXVK_MAX_RANK];
    nxvk_broadcast_strides(&in[k]->shape, &out->shape, st);
    for (int d = 0; d < out->shape.rank; d++) meta[11 + 8 * k + d] = (uint32_t)st[d];
  }
  char name[64];
  snprintf(name, sizeof name, "ew_%s_%s", op->d.name, nxvk_dtype_name(in[nin - 1]->dtype));
  uint32_t spec[NXVK_EW_SPEC];
  /* the generated kernel takes two 16-bit elements per word when every
   * input and the output are 16 bits wide (codegen.c, nxvk_cg_paired) */
  bool paired = nxvk_dtype_size(out->dtype) == 2;
  for (int k = 0; k < nin; k++) paired &= nxvk_dtype_size(in[k]->dtype) == 2;
  uint64_t units = paired ? ((uint64_t)out->count + 1) / 2 : (uint64_t)out->count;
  uint32_t groups = nxvk_ew_launch(nxvk_rec_ctx(r), units, paired, spec);
  nxvk_buffer *bufs[4];
  for (int k = 0; k < nin; k++) bufs[k] = in[k]->buf;
  bufs[nin] = out->buf;
  return nxvk_dispatch_grid(r, name, spec, NXVK_EW_SPEC, meta, NXVK_EW_META_WORDS(nin), bufs,
                            nin + 1, groups, 1, 1);
}

static nxvk_scalar load(const nxvk_host *h, int64_t i) {
  nxvk_scalar s;
  if (nxvk_dtype_is_float(h->dtype)) s.f = nxvk_host_get(h, i);
  else s.i = nxvk_host_get_int(h, i);
  return s;
}

/* Round once to the output dtype (f16 and bf16: the f32 result rounded to
 * nearest even, as numpy computes float16); integers wrap (two's complement). */
static void store(nxvk_host *h, int64_t i, nxvk_scalar v) {
  switch (h->dtype) {
  case NXVK_F64: ((double *)h->data)[i] = (double)v.f; break;
  case NXVK_F32: case NXVK_F16: case NXVK_BF16: nxvk_host_set(h, i, (double)(float)v.f); break;
  default: nxvk_host_set_int(h, i, v.i); break;
  }
}

int nxvk_ew_ref(const nxvk_op *op, const nxvk_attrs *a, const nxvk_host *in, int nin,
                nxvk_host *out) {
  (void)a;
  int64_t n = nxvk_host_count(out);
  int64_t st[3][NXVK_MAX_RANK];
  for (int k = 0; k < nin; k++) nxvk_broadcast_strides(&in[k].shape, &out->shape, st[k]);
  nxvk_dtype t = in[nin - 1].dtype;
  int rank = out->shape.rank;
  int64_t idx[NXVK_MAX_RANK] = {0};
  for (int64_t i = 0; i < n; i++) {
    nxvk_scalar v[3] = {{0}, {0}, {0}};
    for (int k = 0; k < nin; k++) {
      int64_t off = 0;
      for (int d = 0; d < rank; d++) off += idx[d] * st[k][d];
      v[k] = load(&in[k], off);
    }
    store(out, i, op->scalar(v[0], v[1], v[2], t));
    for (int d = rank - 1; d >= 0; d--) { /* odometer over the output index */
      if (++idx[d] < out->shape.dim[d]) break;
      idx[d] = 0;
    }
  }
  return NXVK_OK;
}
