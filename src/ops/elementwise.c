/*
 * elementwise.c - unary, binary, comparison and select ops: numpy
 * broadcasting, the GPU dispatch of the generated shader, and the reference
 * loop around each op's scalar function.
 */
#include "ops.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
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

/* ---- 16-bit unary ops by table (NXVK_EW16_TABLE, shaders/lut16.comp) ----
 * An f16 or bf16 input has 65 536 values, so a unary op's whole result is a
 * table of 65 536 16-bit words: made once per (op, dtype) and device by the
 * CPU reference itself (nxvk_ew_ref over every bit pattern), kept in a
 * device buffer until the context closes (the engine's own: not counted
 * in live_bytes or against the memory cap). */
typedef struct ew16_table {
  const nxvk_op *op;
  nxvk_dtype dtype;
  nxvk_buffer *buf;
  struct ew16_table *next;
} ew16_table;

static void ew16_tables_free(nxvk_ctx *c) {
  for (ew16_table *t = c->ew16_tables, *next; t; t = next) {
    next = t->next;
    nxvk_buffer_unref(c, t->buf);
    free(t);
  }
  c->ew16_tables = NULL;
}

/* The op's table on this device (made on first use; the lock is held
 * while it is made, so each is made once). */
static int ew16_table_get(nxvk_ctx *c, const nxvk_op *op, nxvk_dtype d, nxvk_buffer **out) {
  pthread_mutex_lock(&c->ew16_lock);
  for (ew16_table *t = c->ew16_tables; t; t = t->next)
    if (t->op == op && t->dtype == d) {
      *out = t->buf;
      pthread_mutex_unlock(&c->ew16_lock);
      return NXVK_OK;
    }
  nxvk_host hin = {0}, hout = {0};
  nxvk_shape s = {1, {65536}};
  ew16_table *t = calloc(1, sizeof *t);
  int rc = t ? nxvk_host_alloc(&hin, d, &s) : nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  if (rc == NXVK_OK) rc = nxvk_host_alloc(&hout, d, &s);
  if (rc == NXVK_OK) {
    for (uint32_t i = 0; i < 65536; i++) ((uint16_t *)hin.data)[i] = (uint16_t)i;
    nxvk_attrs none;
    memset(&none, 0, sizeof none);
    rc = nxvk_ew_ref(op, &none, &hin, 1, &hout);
  }
  /* the engine's, not the caller's: outside the memory cap (port --max-bytes) */
  if (rc == NXVK_OK) rc = nxvk_buffer_create_kept(c, 65536 * 2, &t->buf);
  if (rc == NXVK_OK) rc = nxvk_buffer_write(c, t->buf, 0, hout.data, 65536 * 2);
  nxvk_host_free(&hin);
  nxvk_host_free(&hout);
  if (rc == NXVK_OK) {
    t->op = op;
    t->dtype = d;
    t->next = c->ew16_tables;
    c->ew16_tables = t;
    c->ew16_tables_free = ew16_tables_free;
    *out = t->buf;
  } else if (t) {
    if (t->buf) nxvk_buffer_unref(c, t->buf);
    free(t);
  }
  pthread_mutex_unlock(&c->ew16_lock);
  return rc;
}

/* The ops that keep their computing kernel under the rule (NXVK_EW16_TABLE
 * unset): exp alone, whose kernel was tuned to 0.93-0.98 of PyTorch on an
 * H100 (the table 0.98 with the bench's data, 0.89 with normal f16 data).
 * Even abs, floor and sqrt ran faster by table there (2 846 GB/s against
 * 2 369, 2 302 and 1 131 computed; the table's worst, every pattern alike,
 * ~2 430; bench/NOTES.md). */
static bool ew16_rule_computes(const char *name) { return strcmp(name, "exp") == 0; }

/* One f16 / bf16 unary op by its table: 1 (nothing recorded) where the op
 * is not one the table serves or the table could not be made (the kernel
 * then computes it). */
static int ew16_table_gpu(nxvk_rec *r, const nxvk_op *op, nxvk_tensor *const *in, int nin, nxvk_tensor *out) {
  nxvk_ctx *c = nxvk_rec_ctx(r);
  nxvk_dtype d = out->dtype;
  if (!c->tuning->ew16_table || op->d.kind != NXVK_KIND_UNARY || nin != 1 || (d != NXVK_F16 && d != NXVK_BF16) ||
      in[0]->dtype != d || in[0]->count != out->count || out->count > UINT32_MAX ||
      (c->tuning->ew16_table_rule && ew16_rule_computes(op->d.name)))
    return 1;
  nxvk_buffer *tab = NULL;
  if (ew16_table_get(c, op, d, &tab)) return 1;
  uint32_t wg = c->tuning->ew16_wg ? c->tuning->ew16_wg : NXVK_WG;
  /* 16-byte vectors a round per invocation: NXVK_EW16_UNROLL's words in whole vectors */
  uint32_t unroll = (c->tuning->ew16_unroll + 3) / 4;
  uint32_t spec[2] = {wg, unroll ? unroll : 1};
  uint64_t words = ((uint64_t)out->count + 1) / 2;
  uint32_t groups = nxvk_groups_for(c, words / 4, wg * spec[1]);
  uint32_t meta[1] = {(uint32_t)out->count};
  nxvk_buffer *bufs[3] = {in[0]->buf, tab, out->buf};
  return nxvk_dispatch_grid(r, "lut16", spec, 2, meta, 1, bufs, 3, groups, 1, 1);
}

int nxvk_ew_gpu(nxvk_rec *r, const nxvk_op *op, const nxvk_attrs *a, nxvk_tensor *const *in,
                int nin, nxvk_tensor *out) {
  (void)a;
  int trc = ew16_table_gpu(r, op, in, nin, out);
  if (trc <= 0) return trc;
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
