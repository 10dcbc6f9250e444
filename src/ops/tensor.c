/* tensor.c - GPU tensors: a shared buffer plus dtype and shape. */
#include "ops.h"

#include <stdlib.h>
#include <string.h>

static int tensor_bytes(nxvk_dtype d, const nxvk_shape *s, int64_t *count, size_t *bytes) {
  if ((unsigned)d >= NXVK_NDTYPES) return nxvk_seterr(NXVK_E_UNSUPPORTED_DTYPE, "bad dtype");
  int rc = nxvk_shape_count(s, count);
  if (rc) return rc;
  *bytes = (size_t)*count * nxvk_dtype_size(d);
  return NXVK_OK;
}

int nxvk_tensor_new(nxvk_ctx *c, nxvk_dtype d, const nxvk_shape *s, nxvk_tensor **out) {
  *out = NULL;
  int64_t count;
  size_t bytes = 0;
  int rc = tensor_bytes(d, s, &count, &bytes);
  if (rc) return rc;
  if (!nxvk_ctx_supports(c, d))
    return nxvk_seterr(NXVK_E_UNSUPPORTED_DTYPE, "%s is unsupported on this device (%s has no %s)",
                       nxvk_dtype_name(d), c->info.name, nxvk_dtype_missing(&c->info, d));
  nxvk_tensor *t = calloc(1, sizeof *t);
  if (!t) return nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  /* whole 32-bit words, so u8 kernels never touch bytes past the end */
  rc = nxvk_buffer_create(c, (bytes + 3) & ~(size_t)3, false, &t->buf);
  if (rc) {
    free(t);
    return rc;
  }
  t->c = c;
  t->dtype = d;
  t->shape = *s;
  t->count = count;
  atomic_fetch_add(&c->live_tensors, 1);
  *out = t;
  return NXVK_OK;
}

void nxvk_tensor_free(nxvk_tensor *t) {
  if (!t) return;
  atomic_fetch_sub(&t->c->live_tensors, 1);
  if (!t->c->inject_leak) nxvk_buffer_unref(t->c, t->buf);
  free(t);
}

int nxvk_tensor_view(const nxvk_tensor *t, const nxvk_shape *s, nxvk_tensor **out) {
  *out = NULL;
  int64_t count;
  int rc = nxvk_shape_count(s, &count);
  if (rc) return rc;
  if (count != t->count)
    return nxvk_seterr(NXVK_E_SHAPE_MISMATCH, "view of %lld elements as %lld", (long long)t->count,
                       (long long)count);
  nxvk_tensor *v = calloc(1, sizeof *v);
  if (!v) return nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  *v = *t;
  v->shape = *s;
  nxvk_buffer_ref(v->buf);
  atomic_fetch_add(&v->c->live_tensors, 1);
  *out = v;
  return NXVK_OK;
}

int nxvk_tensor_upload(nxvk_ctx *c, nxvk_tensor *t, const void *data, size_t bytes) {
  size_t want = (size_t)t->count * nxvk_dtype_size(t->dtype);
  if (bytes != want)
    return nxvk_seterr(NXVK_E_SIZE_MISMATCH, "%zu bytes given for a %s tensor of %lld elements "
                       "(%zu bytes)", bytes, nxvk_dtype_name(t->dtype), (long long)t->count, want);
  return nxvk_buffer_write(c, t->buf, 0, data, bytes);
}

int nxvk_tensor_download(nxvk_ctx *c, const nxvk_tensor *t, void *data, size_t bytes) {
  size_t want = (size_t)t->count * nxvk_dtype_size(t->dtype);
  if (bytes != want)
    return nxvk_seterr(NXVK_E_SIZE_MISMATCH, "%zu bytes asked of a %zu-byte tensor", bytes, want);
  return nxvk_buffer_read(c, t->buf, 0, data, bytes);
}

int nxvk_tensor_from_host(nxvk_ctx *c, const nxvk_host *h, nxvk_tensor **out) {
  int rc = nxvk_tensor_new(c, h->dtype, &h->shape, out);
  if (rc) return rc;
  rc = nxvk_tensor_upload(c, *out, h->data, nxvk_host_bytes(h));
  if (rc) {
    nxvk_tensor_free(*out);
    *out = NULL;
  }
  return rc;
}

int nxvk_tensor_to_host(nxvk_ctx *c, const nxvk_tensor *t, nxvk_host *out) {
  int rc = nxvk_host_alloc(out, t->dtype, &t->shape);
  if (rc) return rc;
  rc = nxvk_tensor_download(c, t, out->data, nxvk_host_bytes(out));
  if (rc) nxvk_host_free(out);
  return rc;
}

nxvk_dtype nxvk_tensor_dtype(const nxvk_tensor *t) { return t->dtype; }
const nxvk_shape *nxvk_tensor_shape(const nxvk_tensor *t) { return &t->shape; }
int64_t nxvk_tensor_count(const nxvk_tensor *t) { return t->count; }
