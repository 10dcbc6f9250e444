/*
 * exec.c - running ops: checks common to every op, batches of ops in one
 * command buffer, and the dispatch helpers the kinds share.
 */
#include "ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct nxvk_batch {
  nxvk_ctx *c;
  nxvk_rec *rec;
};

void nxvk_contiguous_strides(const nxvk_shape *s, int64_t *strides) {
  int64_t st = 1;
  for (int i = s->rank - 1; i >= 0; i--) {
    strides[i] = st;
    st *= s->dim[i] ? s->dim[i] : 1;
  }
}

/* Arity, dtypes and dtype agreement: the same for every op, so here once. */
static int check_operands(const nxvk_op *op, const nxvk_attrs *a, const nxvk_meta *in, int nin) {
  const nxvk_op_desc *d = &op->d;
  if (d->arity >= 0 && nin != d->arity)
    return nxvk_seterr(NXVK_E_BAD_REQUEST, "%s takes %d input%s, got %d", d->name, d->arity,
                       d->arity == 1 ? "" : "s", nin);
  if (d->arity < 0 && nin < 1)
    return nxvk_seterr(NXVK_E_BAD_REQUEST, "%s takes one or more inputs", d->name);
  if (nin > NXVK_MAX_INPUTS)
    return nxvk_seterr(NXVK_E_TOO_LARGE, "%s: %d inputs is over the limit of %d", d->name, nin,
                       NXVK_MAX_INPUTS);
  if (a && (a->set & ~d->attrs))
    return nxvk_seterr(NXVK_E_BAD_ATTR, "%s: attribute not accepted", d->name);
  int first = 0;
  if (d->kind == NXVK_KIND_SELECT) {
    if (in[0].dtype != NXVK_BOOL && in[0].dtype != NXVK_U8)
      return nxvk_seterr(NXVK_E_DTYPE_MISMATCH, "select: predicate (input 1) must be bool or u8, not %s",
                         nxvk_dtype_name(in[0].dtype));
    first = 1;
  }
  /* window_scatter_*: x compares in its own dtype (the op's rule checks
   * it); source and init are the result's */
  if (d->kind == NXVK_KIND_WINDOW && d->arity == 3) first = 1;
  /* indexing ops mix data and integer index operands: their rules check
   * each operand by name (index.c) */
  for (int i = first; i < nin && d->kind != NXVK_KIND_INDEX; i++) {
    if ((unsigned)in[i].dtype >= NXVK_NDTYPES || !(d->dtypes & NXVK_DT(in[i].dtype)))
      return nxvk_seterr(NXVK_E_UNSUPPORTED_DTYPE, "%s does not take %s (input %d)", d->name,
                         nxvk_dtype_name(in[i].dtype), i + 1);
    if (in[i].dtype != in[first].dtype)
      return nxvk_seterr(NXVK_E_DTYPE_MISMATCH,
                         "%s: input %d is %s but input %d is %s (convert with as_type)", d->name,
                         first + 1, nxvk_dtype_name(in[first].dtype), i + 1,
                         nxvk_dtype_name(in[i].dtype));
  }
  for (int i = 0; i < nin; i++) {
    int64_t n;
    int rc = nxvk_shape_count(&in[i].shape, &n);
    if (rc) return rc;
  }
  return NXVK_OK;
}

int nxvk_op_infer(const nxvk_op_desc *desc, const nxvk_attrs *a, const nxvk_meta *in, int nin,
                  nxvk_meta *out) {
  const nxvk_op *op = nxvk_op_from_desc(desc);
  nxvk_attrs none = {0};
  if (!a) a = &none;
  int rc = check_operands(op, a, in, nin);
  if (rc) return rc;
  if ((a->set & NXVK_ATTR_SHAPE) && (a->shape.rank < 0 || a->shape.rank > NXVK_MAX_RANK))
    return nxvk_seterr(NXVK_E_BAD_ATTR, "%s: shape: rank %d is outside 0..%d", desc->name,
                       a->shape.rank, NXVK_MAX_RANK);
  rc = op->infer(op, a, in, nin, out);
  if (rc) return rc;
  int64_t n;
  rc = nxvk_shape_count(&out->shape, &n);
  if (rc) {
    char msg[400];
    snprintf(msg, sizeof msg, "%s: result %s", desc->name, nxvk_errmsg());
    return nxvk_seterr(rc, "%s", msg);
  }
  return NXVK_OK;
}

int nxvk_op_supported(nxvk_ctx *c, const nxvk_op_desc *desc, const nxvk_attrs *a,
                      const nxvk_meta *in, int nin) {
  const nxvk_op *op = nxvk_op_from_desc(desc);
  nxvk_attrs none = {0};
  if (!a) a = &none;
  for (int i = 0; i < nin; i++)
    if (!nxvk_ctx_supports(c, in[i].dtype))
      return nxvk_seterr(NXVK_E_UNSUPPORTED_DTYPE, "%s: %s is unsupported on this device (%s has no %s)",
                         desc->name, nxvk_dtype_name(in[i].dtype), c->info.name,
                         nxvk_dtype_missing(&c->info, in[i].dtype));
  return op->supported ? op->supported(c, op, a, in, nin) : NXVK_OK;
}

int nxvk_op_ref(const nxvk_op_desc *desc, const nxvk_attrs *a, const nxvk_host *in, int nin,
                nxvk_host *out) {
  const nxvk_op *op = nxvk_op_from_desc(desc);
  nxvk_attrs none = {0};
  if (!a) a = &none;
  memset(out, 0, sizeof *out);
  nxvk_meta metas[NXVK_MAX_INPUTS], om;
  if (nin > NXVK_MAX_INPUTS)
    return nxvk_seterr(NXVK_E_TOO_LARGE, "%s: too many inputs", desc->name);
  for (int i = 0; i < nin; i++) metas[i] = (nxvk_meta){in[i].dtype, in[i].shape};
  int rc = nxvk_op_infer(desc, a, metas, nin, &om);
  if (rc) return rc;
  rc = nxvk_host_alloc(out, om.dtype, &om.shape);
  if (rc) return rc;
  rc = op->ref(op, a, in, nin, out);
  if (rc) nxvk_host_free(out);
  return rc;
}

/* ---- batches ---- */

int nxvk_batch_begin(nxvk_ctx *c, unsigned flags, nxvk_batch **out) {
  *out = NULL;
  nxvk_batch *b = calloc(1, sizeof *b);
  if (!b) return nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  b->c = c;
  int rc = nxvk_rec_begin(c, flags & NXVK_BATCH_TIMESTAMPS, &b->rec);
  if (rc) {
    free(b);
    return rc;
  }
  *out = b;
  return NXVK_OK;
}

int nxvk_batch_op(nxvk_batch *b, const nxvk_op_desc *desc, const nxvk_attrs *a,
                  nxvk_tensor *const *in, int nin, nxvk_tensor **out) {
  return nxvk_rec_op(b->rec, desc, a, in, nin, out);
}

int nxvk_rec_op(nxvk_rec *r, const nxvk_op_desc *desc, const nxvk_attrs *a,
                nxvk_tensor *const *in, int nin, nxvk_tensor **out) {
  const nxvk_op *op = nxvk_op_from_desc(desc);
  nxvk_ctx *c = nxvk_rec_ctx(r);
  nxvk_attrs none = {0};
  if (!a) a = &none;
  *out = NULL;
  if (nin > NXVK_MAX_INPUTS)
    return nxvk_seterr(NXVK_E_TOO_LARGE, "%s: too many inputs", desc->name);
  nxvk_meta metas[NXVK_MAX_INPUTS], om;
  for (int i = 0; i < nin; i++) {
    if (!in[i] || in[i]->c != c)
      return nxvk_seterr(NXVK_E_BAD_REQUEST, "%s: input %d is not a tensor of this device",
                         desc->name, i + 1);
    metas[i] = (nxvk_meta){in[i]->dtype, in[i]->shape};
  }
  int rc = nxvk_op_infer(desc, a, metas, nin, &om);
  if (rc) return rc;
  if (!nxvk_ctx_supports(c, om.dtype))
    return nxvk_seterr(NXVK_E_UNSUPPORTED_DTYPE, "%s: %s is unsupported on this device (%s has no %s)",
                       desc->name, nxvk_dtype_name(om.dtype), c->info.name,
                       nxvk_dtype_missing(&c->info, om.dtype));
  if (op->supported && (rc = op->supported(c, op, a, metas, nin)) != NXVK_OK) return rc;
  if (!op->gpu) return nxvk_tensor_view(in[0], &om.shape, out); /* reshape */
  if (c->inject_fail_op[0] && strcmp(c->inject_fail_op, desc->name) == 0) /* test-only fault */
    return nxvk_seterr(NXVK_E_VULKAN, "%s: failed on the device (NXVK_TEST_INJECT=fail_op)", desc->name);
  nxvk_tensor *t;
  rc = nxvk_tensor_new(c, om.dtype, &om.shape, &t);
  if (rc) return rc;
  if (t->count > 0) rc = op->gpu(r, op, a, in, nin, t);
  if (rc == NXVK_OK && t->count > 1 && strcmp(c->inject_break_op, desc->name) == 0) {
    /* test-only fault: the last element overwrites the first */
    int64_t one[1] = {1};
    nxvk_shape single = {1, {1}};
    rc = nxvk_strided_copy(r, t->buf, t->dtype, t->count - 1, one, t->buf, t->dtype, 0, one,
                           &single);
  }
  if (rc) {
    nxvk_tensor_free(t);
    return rc;
  }
  *out = t;
  return NXVK_OK;
}

int nxvk_batch_submit(nxvk_batch *b, double *gpu_ns) {
  int rc = nxvk_rec_submit(b->rec, gpu_ns);
  free(b);
  return rc;
}

void nxvk_batch_abort(nxvk_batch *b) {
  if (!b) return;
  nxvk_rec_abort(b->rec);
  free(b);
}

int nxvk_op_run(nxvk_ctx *c, const nxvk_op_desc *op, const nxvk_attrs *a, nxvk_tensor *const *in,
                int nin, nxvk_tensor **out) {
  nxvk_batch *b;
  *out = NULL;
  int rc = nxvk_batch_begin(c, 0, &b);
  if (rc) return rc;
  nxvk_tensor *t = NULL;
  rc = nxvk_batch_op(b, op, a, in, nin, &t);
  if (rc) {
    nxvk_batch_abort(b);
    return rc;
  }
  rc = nxvk_batch_submit(b, NULL);
  if (rc) {
    nxvk_tensor_free(t);
    return rc;
  }
  *out = t;
  return NXVK_OK;
}

/* Bytes from the host into b within recording r: in place where mapped,
 * inline when small, else through a pooled staging buffer the recording
 * holds until it completes. */
static int rec_upload(nxvk_rec *r, nxvk_buffer *b, const void *src, size_t n) {
  if (n == 0) return NXVK_OK;
  if (b->mapped) {
    memcpy(b->mapped, src, n);
    return NXVK_OK;
  }
  if (n <= 65536 && n % 4 == 0) return nxvk_rec_update(r, b, 0, src, n);
  /* large: now and on several threads (memory.c); b is fresh, so nothing
   * recorded before needs to run first */
  if (nxvk_xfer_direct(nxvk_rec_ctx(r), n)) return nxvk_buffer_write(nxvk_rec_ctx(r), b, 0, src, n);
  nxvk_buffer *staging;
  int rc = nxvk_buffer_create(nxvk_rec_ctx(r), n, true, &staging);
  if (rc) return rc;
  memcpy(staging->mapped, src, n);
  rc = nxvk_rec_copy(r, staging, 0, b, 0, n);
  nxvk_buffer_unref(nxvk_rec_ctx(r), staging);
  return rc;
}

int nxvk_op_run_host(nxvk_ctx *c, const nxvk_op_desc *op, const nxvk_attrs *a,
                     const nxvk_host *in, int nin, nxvk_host *out) {
  memset(out, 0, sizeof *out);
  if (nin < 0 || nin > NXVK_MAX_INPUTS)
    return nxvk_seterr(NXVK_E_TOO_LARGE, "%s: too many inputs", op->name);
  nxvk_tensor *t[NXVK_MAX_INPUTS] = {0}, *res = NULL;
  nxvk_buffer *staging = NULL;
  nxvk_batch *b = NULL;
  int made = 0;
  int rc = nxvk_batch_begin(c, 0, &b);
  for (; rc == NXVK_OK && made < nin; made++) {
    rc = nxvk_tensor_new(c, in[made].dtype, &in[made].shape, &t[made]);
    if (rc == NXVK_OK) rc = rec_upload(b->rec, t[made]->buf, in[made].data, nxvk_host_bytes(&in[made]));
  }
  if (rc == NXVK_OK) rc = nxvk_batch_op(b, op, a, t, nin, &res);
  size_t bytes = res ? (size_t)res->count * nxvk_dtype_size(res->dtype) : 0;
  bool large = nxvk_xfer_direct(c, bytes); /* read back after the op (threads, import) */
  if (rc == NXVK_OK && bytes && !res->buf->mapped && !large) {
    rc = nxvk_buffer_create(c, bytes, true, &staging);
    if (rc == NXVK_OK) rc = nxvk_rec_copy(b->rec, res->buf, 0, staging, 0, bytes);
  }
  if (rc == NXVK_OK) {
    rc = nxvk_batch_submit(b, NULL);
    b = NULL;
  }
  if (rc == NXVK_OK) rc = nxvk_host_alloc(out, res->dtype, &res->shape);
  if (rc == NXVK_OK && bytes && !staging && !res->buf->mapped)
    rc = nxvk_buffer_read(c, res->buf, 0, out->data, bytes);
  else if (rc == NXVK_OK && bytes)
    memcpy(out->data, staging ? staging->mapped : res->buf->mapped, bytes);
  if (rc) nxvk_host_free(out);
  if (b) nxvk_batch_abort(b);
  nxvk_buffer_unref(c, staging);
  nxvk_tensor_free(res);
  for (int i = 0; i < made; i++) nxvk_tensor_free(t[i]);
  return rc;
}

/* ---- dispatch helpers ---- */

int nxvk_dispatch_grid(nxvk_rec *r, const char *kernel, const uint32_t *spec, int nspec,
                       const uint32_t *meta, uint32_t nmeta, nxvk_buffer *const *bufs, int nbufs,
                       uint32_t gx, uint32_t gy, uint32_t gz) {
  nxvk_ctx *c = nxvk_rec_ctx(r);
  nxvk_kernel *k;
  /* built in, else generated and compiled at run time (rtkernel.c) */
  int rc = nxvk_spirv_find(kernel) ? nxvk_kernel_get(c, kernel, spec, nspec, nbufs, &k)
                                   : nxvk_rt_kernel_get(c, kernel, spec, nspec, nbufs, &k);
  if (rc) return rc;
  uint32_t off = 0;
  rc = nxvk_rec_meta(r, meta, nmeta, &off);
  if (rc) return rc;
  nxvk_binding b[NXVK_MAX_BINDINGS];
  for (int i = 0; i < nbufs; i++) b[i] = (nxvk_binding){bufs[i], 0, 0};
  return nxvk_rec_dispatch(r, k, b, nbufs, off, gx, gy, gz);
}

int nxvk_dispatch_1d(nxvk_rec *r, const char *kernel, const uint32_t *spec, int nspec,
                     const uint32_t *meta, uint32_t nmeta, nxvk_buffer *const *bufs, int nbufs,
                     uint64_t n) {
  uint32_t groups = nxvk_groups_for(nxvk_rec_ctx(r), n, spec[0]);
  return nxvk_dispatch_grid(r, kernel, spec, nspec, meta, nmeta, bufs, nbufs, groups, 1, 1);
}

uint32_t nxvk_ew_launch(nxvk_ctx *c, uint64_t n, bool paired, uint32_t spec[NXVK_EW_SPEC]) {
  uint32_t unroll = paired ? c->tuning->ew16_unroll : c->tuning->ew_unroll;
  uint32_t wg = paired && c->tuning->ew16_wg ? c->tuning->ew16_wg : NXVK_WG;
  spec[0] = wg;
  spec[1] = unroll;
  spec[2] = c->tuning->ew_blocked;
  return nxvk_groups_for(c, n, wg * unroll);
}

int nxvk_strided_copy(nxvk_rec *r, nxvk_buffer *src, nxvk_dtype sd, int64_t src_base,
                      const int64_t *src_strides, nxvk_buffer *dst, nxvk_dtype dd,
                      int64_t dst_base, const int64_t *dst_strides, const nxvk_shape *dims) {
  int64_t n;
  int rc = nxvk_shape_count(dims, &n);
  if (rc || n == 0) return rc;
  uint32_t meta[28] = {(uint32_t)n, (uint32_t)dims->rank, (uint32_t)src_base, (uint32_t)dst_base};
  for (int i = 0; i < dims->rank; i++) {
    meta[4 + i] = (uint32_t)dims->dim[i];
    meta[12 + i] = (uint32_t)src_strides[i];
    meta[20 + i] = (uint32_t)dst_strides[i];
  }
  char name[32];
  snprintf(name, sizeof name, "copy_%s_%s", nxvk_dtype_name(sd), nxvk_dtype_name(dd));
  uint32_t spec[1] = {NXVK_WG};
  nxvk_buffer *bufs[2] = {src, dst};
  return nxvk_dispatch_1d(r, name, spec, 1, meta, 28, bufs, 2, (uint64_t)n);
}

/* ---- measurements (bench peak) ---- */

int nxvk_bench_kernel(nxvk_ctx *c, const char *kernel, const uint32_t *spec, int nspec,
                      const uint32_t *meta, uint32_t nmeta, nxvk_tensor *const *bufs, int nbufs,
                      uint32_t groups, double *gpu_ns) {
  if (nbufs < 0 || nbufs + 1 > NXVK_MAX_BINDINGS)
    return nxvk_seterr(NXVK_E_BAD_REQUEST, "%s: %d buffers", kernel, nbufs);
  nxvk_buffer *b[NXVK_MAX_BINDINGS];
  for (int i = 0; i < nbufs; i++) b[i] = bufs[i]->buf;
  nxvk_rec *r;
  int rc = nxvk_rec_begin(c, true, &r);
  if (rc) return rc;
  rc = nxvk_dispatch_grid(r, kernel, spec, nspec, meta, nmeta, b, nbufs, groups, 1, 1);
  if (rc) {
    nxvk_rec_abort(r);
    return rc;
  }
  return nxvk_rec_submit(r, gpu_ns);
}

int nxvk_rec_copy_bytes(nxvk_rec *r, nxvk_buffer *src, nxvk_buffer *dst, size_t n) {
  nxvk_ctx *c = nxvk_rec_ctx(r);
  int rc = NXVK_OK;
  /* On a discrete GPU, whole 16-byte words through copy_vec4.comp:
   * vkCmdCopyBuffer ran at 0.29 of the shader's rate on an H100 (846 vs
   * 2877 GB/s), while on lavapipe it is twice the shader's (bench/NOTES.md).
   * The tail (< 16 bytes) by vkCmdCopyBuffer. */
  uint64_t words = c->host_visible_fast_path ? 0 : n / 16;
  if (words > UINT32_MAX) words = 0;
  if (words) {
    uint32_t spec[1] = {NXVK_WG}, meta[1] = {(uint32_t)words};
    nxvk_buffer *bufs[2] = {src, dst};
    uint32_t groups = nxvk_groups_for(c, (words + 3) / 4, NXVK_WG);
    rc = nxvk_dispatch_grid(r, "copy_vec4", spec, 1, meta, 1, bufs, 2, groups, 1, 1);
  }
  if (rc == NXVK_OK && (n - words * 16 || n == 0))
    rc = nxvk_rec_copy(r, src, words * 16, dst, words * 16, n ? n - words * 16 : 4);
  return rc;
}

int nxvk_tensor_copy(nxvk_ctx *c, nxvk_tensor *dst, const nxvk_tensor *src, double *gpu_ns) {
  size_t n = (size_t)src->count * nxvk_dtype_size(src->dtype);
  if (n != (size_t)dst->count * nxvk_dtype_size(dst->dtype))
    return nxvk_seterr(NXVK_E_SIZE_MISMATCH, "copy of %zu bytes into a tensor of %zu", n,
                       (size_t)dst->count * nxvk_dtype_size(dst->dtype));
  nxvk_rec *r;
  int rc = nxvk_rec_begin(c, true, &r);
  if (rc) return rc;
  rc = nxvk_rec_copy_bytes(r, src->buf, dst->buf, n);
  if (rc) {
    nxvk_rec_abort(r);
    return rc;
  }
  return nxvk_rec_submit(r, gpu_ns);
}
