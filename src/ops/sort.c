/*
 * sort.c - sort, argsort (along "axis", default 0, "direction" asc or desc),
 * top_k and top_k_indices (the k largest along the last axis, descending).
 * Nx's order: NaN above +inf (last ascending, first descending), -0 equal to
 * +0; stable, so equal elements keep their order.  Indices are i32 unless
 * "dtype" names another integer dtype.  GPU: shaders/sort.comp, a stable
 * LSD radix sort of (key, index) pairs per line, its digit counts summed by
 * the scan kernel: 8 bits a pass (sort8_<dtype>: 4 passes for 32-bit keys,
 * the first reading the input, the last writing the values) where the
 * device has subgroup ballots, else 4 bits a pass (NXVK_SORT_BITS).
 */
#include "ops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_topk(const nxvk_op *op) { return op->d.attrs & NXVK_ATTR_K; }
static bool gives_indices(const nxvk_op *op) { return op->code == NXVK_SORT_INDICES; }

/* top_k: the last axis, descending, k of them (default 1). */
static int sort_lines(const nxvk_op *op, const nxvk_attrs *a, const nxvk_shape *s, nxvk_lines *l,
                      int64_t *kout, bool *desc) {
  int axis = is_topk(op) ? -1 : a->axis;
  if (is_topk(op) && s->rank == 0)
    return nxvk_seterr(NXVK_E_SHAPE_MISMATCH, "%s input must have at least rank 1", op->d.name);
  if (s->rank == 0) { /* a scalar sorts to itself (Nx) */
    *l = (nxvk_lines){0, 1, 1, 1};
    *kout = 1;
    *desc = a->descending;
    return NXVK_OK;
  }
  int rc = nxvk_axis_lines(op, axis, s, l);
  if (rc) return rc;
  *desc = is_topk(op) ? true : a->descending;
  *kout = l->n;
  if (is_topk(op)) {
    int64_t k = a->k ? a->k : 1;
    if (k > l->n)
      return nxvk_seterr(NXVK_E_BAD_ATTR, "%s: k: the last axis has %lld elements, k is %lld",
                         op->d.name, (long long)l->n, (long long)k);
    *kout = k;
  }
  return NXVK_OK;
}

int nxvk_sort_infer(const nxvk_op *op, const nxvk_attrs *a, const nxvk_meta *in, int nin,
                    nxvk_meta *out) {
  (void)nin;
  nxvk_lines l;
  int64_t kout;
  bool desc;
  int rc = sort_lines(op, a, &in->shape, &l, &kout, &desc);
  if (rc) return rc;
  *out = *in;
  if (in->shape.rank > 0) out->shape.dim[l.axis] = kout;
  if (gives_indices(op)) {
    out->dtype = (a->set & NXVK_ATTR_DTYPE) ? a->dtype : NXVK_I32;
    if (!(NXVK_DT_INT & NXVK_DT(out->dtype)))
      return nxvk_seterr(NXVK_E_BAD_ATTR, "%s: dtype: indices are an integer dtype, not %s", op->d.name,
                         nxvk_dtype_name(out->dtype));
  } else if (a->set & NXVK_ATTR_DTYPE) {
    return nxvk_seterr(NXVK_E_BAD_ATTR, "%s: dtype: only the index ops take one", op->d.name);
  }
  if ((uint64_t)l.outer * (uint64_t)l.n * (uint64_t)l.inner >= UINT32_MAX)
    return nxvk_seterr(NXVK_E_TOO_LARGE, "%s: 2^32 elements or more", op->d.name);
  return NXVK_OK;
}

#define SORT_ITEMS 8u
#define SORT8_ITEMS 16u
/* words of the 8-bit kernel's shared memory besides sh: sb, dpre, goff */
#define SORT8_FIXED (512u + 256u + 256u)

/* words of sh: the (subgroup, digit) counts, then a tile */
static uint32_t sort8_shw(uint32_t wg, uint32_t items, uint32_t nsg) {
  return nsg * 256u > wg * items ? nsg * 256u : wg * items;
}

uint32_t nxvk_sort8_wg(const nxvk_ctx *c, uint32_t items) {
  const nxvk_device_info *d = &c->info;
  if (!d->subgroup_ballot || d->min_subgroup_size == 0 || d->max_subgroup_size > 128) return 0;
  /* whole subgroups at any size the device may pick */
  for (uint32_t wg = 256; wg >= 64 && wg >= d->max_subgroup_size; wg /= 2) {
    if (wg > d->max_workgroup_invocations || wg % d->max_subgroup_size) continue;
    uint64_t bytes = ((uint64_t)sort8_shw(wg, items, wg / d->min_subgroup_size) + SORT8_FIXED) * 4;
    if (bytes <= d->max_shared_memory) return wg;
  }
  return 0;
}

/* 8 bits a pass: per pass a histogram of each tile's digits, their running
 * sums along the line, a scatter; no key or output kernel for values. */
/* The radix sorts' scratch: keys and indices twice (passes ping-pong
 * between them), each tile's digit counts and their scan.  On failure what
 * was made is left for scratch_free, which takes NULLs. */
static int scratch_create(nxvk_ctx *c, uint64_t key_bytes, uint64_t idx_bytes, uint64_t hist_bytes,
                          nxvk_buffer **keys, nxvk_buffer **idx, nxvk_buffer **hist, nxvk_buffer **hscan) {
  int rc = NXVK_OK;
  for (int i = 0; i < 2 && rc == NXVK_OK; i++) {
    rc = nxvk_buffer_create(c, key_bytes, false, &keys[i]);
    if (rc == NXVK_OK) rc = nxvk_buffer_create(c, idx_bytes, false, &idx[i]);
  }
  if (rc == NXVK_OK) rc = nxvk_buffer_create(c, hist_bytes, false, hist);
  if (rc == NXVK_OK) rc = nxvk_buffer_create(c, hist_bytes, false, hscan);
  return rc;
}

static void scratch_free(nxvk_ctx *c, nxvk_buffer **keys, nxvk_buffer **idx, nxvk_buffer *hist,
                         nxvk_buffer *hscan) {
  for (int i = 0; i < 2; i++) {
    nxvk_buffer_unref(c, keys[i]);
    nxvk_buffer_unref(c, idx[i]);
  }
  nxvk_buffer_unref(c, hist);
  nxvk_buffer_unref(c, hscan);
}

/* One radix pass of either kernel: count each tile's digits (spec[1] = 1),
 * sum the counts across the tiles of each row (ndigits a tile), then
 * scatter (spec[1] = 2). */
static int radix_pass(nxvk_rec *r, const char *kname, uint32_t *spec, int nspec, const uint32_t *meta,
                      uint32_t nmeta, nxvk_buffer *const b[8], uint32_t groups, uint64_t rows,
                      uint64_t ndigits) {
  spec[1] = 1;
  int rc = nxvk_dispatch_grid(r, kname, spec, nspec, meta, nmeta, b, 8, groups, 1, 1);
  if (rc == NXVK_OK) rc = nxvk_scan_rows(r, NXVK_I32, NXVK_SCAN_SUM, b[6], b[7], rows, ndigits);
  spec[1] = 2;
  if (rc == NXVK_OK) rc = nxvk_dispatch_grid(r, kname, spec, nspec, meta, nmeta, b, 8, groups, 1, 1);
  return rc;
}

static int sort8_gpu(nxvk_rec *r, const nxvk_op *op, nxvk_tensor *x, nxvk_tensor *out, const nxvk_lines *l,
                     int64_t kout, bool desc, uint32_t wg, uint32_t items) {
  nxvk_ctx *c = nxvk_rec_ctx(r);
  nxvk_dtype dt = x->dtype;
  size_t ksz = nxvk_dtype_size(dt) == 8 ? 8 : 4;
  int passes = (int)nxvk_dtype_size(dt);
  bool values = !gives_indices(op);
  uint64_t rows = (uint64_t)(l->outer * l->inner), n = (uint64_t)l->n, total = rows * n;
  uint64_t tile = (uint64_t)wg * items, ntiles = (n + tile - 1) / tile;
  uint32_t nsg = wg / c->info.min_subgroup_size;
  char kname[32], oname[32];
  snprintf(kname, sizeof kname, "sort8_%s", nxvk_dtype_name(dt));
  snprintf(oname, sizeof oname, "sort_%s", nxvk_dtype_name(out->dtype));
  int rc = NXVK_OK;
  nxvk_buffer *keys[2] = {NULL, NULL}, *idx[2] = {NULL, NULL}, *hist = NULL, *hscan = NULL;
  /* the last pass writes no keys, and no indices either for values */
  rc = scratch_create(c, passes > 1 ? total * ksz : 4, passes > 1 || !values ? total * 4 : 4,
                      rows * 256 * ntiles * 4, keys, idx, &hist, &hscan);
  uint32_t meta[10] = {(uint32_t)rows, (uint32_t)n, (uint32_t)l->inner, (uint32_t)ntiles, 0,
                       (uint32_t)kout, desc, 0, 0, values};
  uint32_t groups = nxvk_groups_for(c, rows * ntiles, 1);
  int cur = 0;
  for (int p = 0; p < passes && rc == NXVK_OK; p++) {
    meta[4] = (uint32_t)(8 * p);
    meta[7] = p == 0;
    meta[8] = p < passes - 1 ? 0u : values ? 2u : 1u;
    nxvk_buffer *b[8] = {x->buf, out->buf, keys[cur], idx[cur], keys[1 - cur], idx[1 - cur], hist, hscan};
    uint32_t spec[5] = {wg, 1, items, nsg, sort8_shw(wg, items, nsg)};
    rc = radix_pass(r, kname, spec, 5, meta, 10, b, groups, rows, 256 * ntiles);
    cur = 1 - cur;
  }
  if (rc == NXVK_OK && !values) {
    uint32_t spec[3] = {NXVK_WG, 4, SORT_ITEMS};
    nxvk_buffer *b[8] = {x->buf, out->buf, keys[cur], idx[cur], keys[1 - cur], idx[1 - cur], hist, hscan};
    rc = nxvk_dispatch_1d(r, oname, spec, 3, meta, 7, b, 8, rows * (uint64_t)kout);
  }
  scratch_free(c, keys, idx, hist, hscan);
  return rc;
}

int nxvk_sort_gpu(nxvk_rec *r, const nxvk_op *op, const nxvk_attrs *a, nxvk_tensor *const *in,
                  int nin, nxvk_tensor *out) {
  (void)nin;
  nxvk_lines l;
  int64_t kout;
  bool desc;
  int rc = sort_lines(op, a, &in[0]->shape, &l, &kout, &desc);
  if (rc) return rc;
  nxvk_ctx *c = nxvk_rec_ctx(r);
  uint64_t n8 = (uint64_t)l.n, rows8 = (uint64_t)(l.outer * l.inner);
  /* many short lines: one invocation each merges its line (a radix pass
   * would spend a workgroup on each) */
  bool merge = n8 <= 2048 && rows8 >= 16;
  if (c->tuning->sort_bits == 8 && n8 > 1 && !merge) {
    uint32_t items = c->tuning->sort_items ? c->tuning->sort_items : SORT8_ITEMS;
    uint32_t wg = nxvk_sort8_wg(c, items);
    if (wg) return sort8_gpu(r, op, in[0], out, &l, kout, desc, wg, items);
  }
  nxvk_dtype dt = in[0]->dtype;
  size_t ksz = nxvk_dtype_size(dt) == 8 ? 8 : 4;
  int bits = (int)nxvk_dtype_size(dt) * 8;
  uint64_t rows = (uint64_t)(l.outer * l.inner), n = (uint64_t)l.n, total = rows * n;
  uint32_t items = c->tuning->sort_items ? c->tuning->sort_items : SORT_ITEMS;
  uint64_t tile = (uint64_t)NXVK_WG * items, ntiles = (n + tile - 1) / tile;
  char kname[32], oname[32];
  snprintf(kname, sizeof kname, "sort_%s", nxvk_dtype_name(dt));
  snprintf(oname, sizeof oname, "sort_%s", nxvk_dtype_name(out->dtype));
  nxvk_buffer *keys[2] = {NULL, NULL}, *idx[2] = {NULL, NULL}, *hist = NULL, *hscan = NULL;
  rc = scratch_create(c, total * ksz, total * 4, rows * 16 * ntiles * 4, keys, idx, &hist, &hscan);
  uint32_t meta[7] = {(uint32_t)rows, (uint32_t)n, (uint32_t)l.inner, (uint32_t)ntiles, 0,
                      (uint32_t)kout, desc};
  /* keys and indices into buffer 0 */
  if (rc == NXVK_OK) {
    uint32_t spec[3] = {NXVK_WG, 0, items};
    nxvk_buffer *b[8] = {in[0]->buf, out->buf, keys[1], idx[1], keys[0], idx[0], hist, hscan};
    rc = nxvk_dispatch_1d(r, kname, spec, 3, meta, 7, b, 8, total);
  }
  int cur = 0;
  uint32_t groups = nxvk_groups_for(c, rows * ntiles, 1);
  if (merge && rc == NXVK_OK && n > 1) {
    uint32_t spec[3] = {NXVK_WG, 5, items};
    nxvk_buffer *b[8] = {in[0]->buf, out->buf, keys[0], idx[0], keys[1], idx[1], hist, hscan};
    rc = nxvk_dispatch_1d(r, kname, spec, 3, meta, 7, b, 8, rows);
    int passes = 0;
    for (uint64_t w = 1; w < n; w <<= 1) passes++;
    cur = passes & 1;
  }
  for (int shift = 0; shift < bits && rc == NXVK_OK && n > 1 && !merge; shift += 4) {
    meta[4] = (uint32_t)shift;
    nxvk_buffer *b[8] = {in[0]->buf, out->buf, keys[cur], idx[cur], keys[1 - cur], idx[1 - cur], hist, hscan};
    uint32_t spec[3] = {NXVK_WG, 1, items};
    rc = radix_pass(r, kname, spec, 3, meta, 7, b, groups, rows, 16 * ntiles);
    cur = 1 - cur;
  }
  if (rc == NXVK_OK) {
    uint32_t spec[3] = {NXVK_WG, gives_indices(op) ? 4u : 3u, items};
    nxvk_buffer *b[8] = {in[0]->buf, out->buf, keys[cur], idx[cur], keys[1 - cur], idx[1 - cur], hist, hscan};
    rc = nxvk_dispatch_1d(r, gives_indices(op) ? oname : kname, spec, 3, meta, 7, b, 8, rows * (uint64_t)kout);
  }
  scratch_free(c, keys, idx, hist, hscan);
  return rc;
}

/* ---- reference: a stable merge sort of indices under Nx's order ---- */

typedef struct {
  const nxvk_host *h;
  bool fl, u64, desc;
  int64_t base, stride;
} sort_ctx;

/* -1, 0, 1: a before, equal to, after b in ascending order (NaN last,
 * -0 == +0). */
static int cmp_asc(const sort_ctx *s, int64_t ia, int64_t ib) {
  int64_t pa = s->base + ia * s->stride, pb = s->base + ib * s->stride;
  if (s->fl) {
    double a = nxvk_host_get(s->h, pa), b = nxvk_host_get(s->h, pb);
    bool na = isnan(a), nb = isnan(b);
    if (na || nb) return na == nb ? 0 : na ? 1 : -1;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  int64_t a = nxvk_host_get_int(s->h, pa), b = nxvk_host_get_int(s->h, pb);
  if (s->u64) return (uint64_t)a < (uint64_t)b ? -1 : (uint64_t)a > (uint64_t)b ? 1 : 0;
  return a < b ? -1 : a > b ? 1 : 0;
}

static void merge_sort(const sort_ctx *s, int64_t *v, int64_t *tmp, int64_t n) {
  if (n < 2) return;
  int64_t h = n / 2;
  merge_sort(s, v, tmp, h);
  merge_sort(s, v + h, tmp, n - h);
  int64_t i = 0, j = h, k = 0;
  while (i < h && j < n) {
    int c = cmp_asc(s, v[j], v[i]);
    if (s->desc) c = -c;
    /* take the right one only when strictly before: stable */
    tmp[k++] = c < 0 ? v[j++] : v[i++];
  }
  while (i < h) tmp[k++] = v[i++];
  while (j < n) tmp[k++] = v[j++];
  memcpy(v, tmp, (size_t)n * sizeof *v);
}

int nxvk_sort_ref(const nxvk_op *op, const nxvk_attrs *a, const nxvk_host *in, int nin,
                  nxvk_host *out) {
  (void)nin;
  nxvk_lines l;
  int64_t kout;
  bool desc;
  int rc = sort_lines(op, a, &in[0].shape, &l, &kout, &desc);
  if (rc) return rc;
  int64_t *v = malloc((size_t)(l.n ? l.n : 1) * 2 * sizeof *v);
  if (!v) return nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  sort_ctx s = {&in[0], nxvk_dtype_is_float(in[0].dtype), in[0].dtype == NXVK_U64, desc, 0, l.inner};
  size_t esz = nxvk_dtype_size(in[0].dtype);
  for (int64_t o = 0; o < l.outer; o++)
    for (int64_t i = 0; i < l.inner; i++) {
      s.base = o * l.n * l.inner + i;
      for (int64_t k = 0; k < l.n; k++) v[k] = k;
      merge_sort(&s, v, v + l.n, l.n);
      for (int64_t k = 0; k < kout; k++) {
        int64_t at = (o * kout + k) * l.inner + i;
        if (gives_indices(op))
          nxvk_host_set_int(out, at, v[k]);
        else /* the element itself: NaN payloads and the sign of zero kept */
          memcpy((char *)out->data + at * esz, (const char *)in[0].data + (s.base + v[k] * l.inner) * esz, esz);
      }
    }
  free(v);
  return NXVK_OK;
}
