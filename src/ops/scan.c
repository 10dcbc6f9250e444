/*
 * scan.c - cumulative_sum cumulative_product cumulative_max cumulative_min
 * along one axis ("axis", default 0 as Nx), forward or from the end
 * ("reverse").  GPU: shaders/scan.comp: rows of contiguous lines by
 * reduce then scan (NXVK_SCAN=rts: scanlb_<dtype>, dtypes computed in 32
 * bits, three passes), in one pass by the look-back scan (lookback, the same
 * kernels) or mode 4 (one_pass; 8-byte dtypes), or with blocks a
 * three-pass block scan; one invocation per line otherwise.
 */
#include "ops.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int nxvk_axis_lines(const nxvk_op *op, int axis, const nxvk_shape *s, nxvk_lines *l) {
  if (s->rank == 0)
    return nxvk_seterr(NXVK_E_SHAPE_MISMATCH, "%s of a scalar: it needs an axis", op->d.name);
  int ax = axis < 0 ? axis + s->rank : axis;
  if (ax < 0 || ax >= s->rank)
    return nxvk_seterr(NXVK_E_BAD_ATTR, "%s: axis: axis %d is out of range for rank %d", op->d.name,
                       axis, s->rank);
  l->axis = ax;
  l->outer = l->inner = 1;
  for (int d = 0; d < ax; d++) l->outer *= s->dim[d];
  for (int d = ax + 1; d < s->rank; d++) l->inner *= s->dim[d];
  l->n = s->dim[ax];
  return NXVK_OK;
}

int nxvk_scan_infer(const nxvk_op *op, const nxvk_attrs *a, const nxvk_meta *in, int nin,
                    nxvk_meta *out) {
  (void)nin;
  nxvk_lines l;
  int rc = nxvk_axis_lines(op, a->axis, &in->shape, &l);
  if (rc) return rc;
  *out = *in;
  return NXVK_OK;
}

#define SCAN_ITEMS 8u

/* mode 4, the one-pass scan (scan.comp): one workgroup per tile of
 * NXVK_WG * items elements, at most this many workgroups (each takes tiles
 * from a ticket until none is left) */
#define SCAN_ONE_PASS_GROUPS 65535u

/* the look-back scan (scan.comp LOOKBACK): workgroup size and elements per
 * invocation by default (NXVK_SCAN_WG, NXVK_SCAN_ITEMS), a tile of 4096 */
#define SCAN_LB_WG 256u
#define SCAN_LB_ITEMS 16u

bool nxvk_scan_lookback_ok(const nxvk_ctx *c, uint32_t wg) {
  const nxvk_device_info *d = &c->info;
  return d->subgroup_shuffle && d->min_subgroup_size >= 4 && d->max_subgroup_size <= 128 &&
         wg <= d->max_workgroup_invocations && wg % d->max_subgroup_size == 0;
}

/* The one-pass kernels' error flag (binding 5), zeroed: a workgroup that
 * waited for an earlier one past its bound (the device did not run them
 * alongside) sets it, and the submission then fails with this error
 * instead of returning the wrong result. */
static int err_flag(nxvk_rec *r, nxvk_buffer **err) {
  int rc = nxvk_buffer_create(nxvk_rec_ctx(r), 4, true, err);
  if (rc) return rc;
  *(volatile uint32_t *)(*err)->mapped = 0;
  return nxvk_rec_check_word(r, *err, NXVK_E_UNSUPPORTED,
                             "scan: a workgroup waited too long for an earlier one (this device does not run "
                             "workgroups alongside each other as the one-pass scans need; NXVK_SCAN=blocks)");
}

/* levels of the look-back's S values: the bit length of nb */
static uint32_t bit_length(uint64_t nb) {
  uint32_t L = 0;
  while (nb >> L) L++;
  return L;
}

static int scan_lookback(nxvk_rec *r, nxvk_dtype dt, int code, nxvk_buffer *src, nxvk_buffer *dst,
                         const nxvk_lines *l, bool reverse) {
  nxvk_ctx *c = nxvk_rec_ctx(r);
  const nxvk_tuning *tu = c->tuning;
  uint32_t wg = tu->scan_wg ? tu->scan_wg : SCAN_LB_WG;
  uint32_t items = tu->scan_items ? tu->scan_items : SCAN_LB_ITEMS;
  uint64_t bsize = (uint64_t)wg * items;
  uint64_t nb = ((uint64_t)l->n + bsize - 1) / bsize;
  uint64_t total = (uint64_t)l->outer * nb, nslots = 0;
  uint32_t levels = bit_length(nb);
  for (uint32_t q = 0; q < levels; q++) nslots += (uint64_t)l->outer * (nb >> q);
  if (nslots + 1 > UINT32_MAX || (uint64_t)l->outer * (uint64_t)l->n > UINT32_MAX ||
      total > (uint64_t)SCAN_ONE_PASS_GROUPS * SCAN_ONE_PASS_GROUPS)
    return nxvk_seterr(NXVK_E_TOO_LARGE, "scan: %llu rows of %lld are too many tiles",
                       (unsigned long long)l->outer, (long long)l->n);
  /* 4-vector loads and stores: every row starts at a multiple of 4
   * elements (a reversed row's end too) */
  bool vec = l->n % 4 == 0 || (l->outer == 1 && !reverse);
  uint32_t meta[7] = {(uint32_t)l->outer, (uint32_t)l->n, 1, (uint32_t)nb, reverse, levels, vec};
  char name[32];
  snprintf(name, sizeof name, "scanlb_%s", nxvk_dtype_name(dt));
  nxvk_buffer *part = NULL, *flags = NULL, *err = NULL;
  int rc = nxvk_buffer_create(c, nslots * 4, false, &part);
  /* the ticket and a flag per S value, zeroed */
  uint64_t fbytes = (1 + nslots) * 4;
  if (rc == NXVK_OK) rc = nxvk_buffer_create(c, fbytes, false, &flags);
  if (rc == NXVK_OK) rc = nxvk_rec_fill(r, flags, fbytes, 0);
  if (rc == NXVK_OK) rc = err_flag(r, &err);
  if (rc == NXVK_OK) {
    uint32_t add = code == NXVK_SCAN_SUM && nxvk_dtype_is_float(dt) ? tu->scan_add : 0;
    uint32_t spec[5] = {wg, (uint32_t)code, 5, items, add};
    nxvk_buffer *bufs[5] = {src, dst, part, flags, err};
    /* one workgroup per tile, in a grid of up to 65535 x 65535 (the ticket
     * orders them; those past the last tile return) */
    uint64_t gx = total < SCAN_ONE_PASS_GROUPS ? total : SCAN_ONE_PASS_GROUPS;
    uint64_t gy = (total + gx - 1) / gx;
    rc = nxvk_dispatch_grid(r, name, spec, 5, meta, 7, bufs, 5, (uint32_t)gx, (uint32_t)gy, 1);
  }
  nxvk_buffer_unref(c, part);
  nxvk_buffer_unref(c, flags);
  nxvk_buffer_unref(c, err);
  return rc;
}

/* the compute dtype of a dtype computed in 32 bits (the rts passes'
 * tile totals: f16 / bf16 sum in f32, narrow integers in 32 bits) */
static nxvk_dtype compute32(nxvk_dtype dt) {
  if (nxvk_dtype_is_float(dt)) return NXVK_F32;
  return dt == NXVK_I8 || dt == NXVK_I16 || dt == NXVK_I32 ? NXVK_I32 : NXVK_U32;
}

/* rts: reduce then scan (scan.comp MODE 6 and 7 of scanlb_<dtype>), no
 * waits between workgroups.  Rows of n contiguous elements in tiles of
 * wg * items: each tile's total (6), the totals' inclusive scan by the
 * same passes (recursively, forward, in the compute dtype), each tile
 * scanned from the total before it (7).  NXVK_SCAN_PASS (diagnostic)
 * runs the top level's pass 1 or 3 SCAN_PASS_REPEAT more times (the same
 * results again), which times that pass alone by difference. */
#define SCAN_PASS_REPEAT 4
static int scan_rts(nxvk_rec *r, nxvk_dtype dt, int code, nxvk_buffer *src, nxvk_buffer *dst,
                    uint64_t rows, uint64_t n, bool reverse, bool top) {
  nxvk_ctx *c = nxvk_rec_ctx(r);
  const nxvk_tuning *tu = c->tuning;
  uint32_t wg = tu->scan_wg ? tu->scan_wg : SCAN_LB_WG;
  uint32_t items = tu->scan_items ? tu->scan_items : SCAN_LB_ITEMS;
  uint64_t bsize = (uint64_t)wg * items;
  uint64_t nb = (n + bsize - 1) / bsize, total = rows * nb;
  if (rows * n > UINT32_MAX || total > (uint64_t)SCAN_ONE_PASS_GROUPS * SCAN_ONE_PASS_GROUPS)
    return nxvk_seterr(NXVK_E_TOO_LARGE, "scan: %llu rows of %llu are too many tiles",
                       (unsigned long long)rows, (unsigned long long)n);
  bool vec = n % 4 == 0 || (rows == 1 && !reverse);
  uint32_t meta[7] = {(uint32_t)rows, (uint32_t)n, 1, (uint32_t)nb, reverse, 0, vec};
  char name[32];
  snprintf(name, sizeof name, "scanlb_%s", nxvk_dtype_name(dt));
  uint32_t add = code == NXVK_SCAN_SUM && nxvk_dtype_is_float(dt) ? tu->scan_add : 0;
  uint64_t gx = total < SCAN_ONE_PASS_GROUPS ? total : SCAN_ONE_PASS_GROUPS;
  uint32_t gy = (uint32_t)((total + gx - 1) / gx);
  int reps1 = 1 + (top && tu->scan_pass == NXVK_SCAN_PASS_REDUCE ? SCAN_PASS_REPEAT : 0);
  int reps3 = 1 + (top && tu->scan_pass == NXVK_SCAN_PASS_SCAN ? SCAN_PASS_REPEAT : 0);
  nxvk_buffer *sums = NULL, *pre = NULL;
  int rc = NXVK_OK;
  if (nb > 1) {
    rc = nxvk_buffer_create(c, total * 4, false, &sums);
    if (rc == NXVK_OK) rc = nxvk_buffer_create(c, total * 4, false, &pre);
    for (int k = 0; k < reps1 && rc == NXVK_OK; k++) {
      uint32_t spec[5] = {wg, (uint32_t)code, 6, items, add};
      nxvk_buffer *bufs[5] = {src, dst, sums, sums, sums};   /* 2, 4, 5 unused */
      rc = nxvk_dispatch_grid(r, name, spec, 5, meta, 7, bufs, 5, (uint32_t)gx, gy, 1);
    }
    if (rc == NXVK_OK) rc = scan_rts(r, compute32(dt), code, sums, pre, rows, nb, false, false);
  }
  for (int k = 0; k < reps3 && rc == NXVK_OK; k++) {
    uint32_t spec[5] = {wg, (uint32_t)code, 7, items, add};
    nxvk_buffer *p = pre ? pre : dst;   /* one tile a row: no prefix read */
    nxvk_buffer *bufs[5] = {src, dst, p, p, p};   /* 4, 5 unused */
    rc = nxvk_dispatch_grid(r, name, spec, 5, meta, 7, bufs, 5, (uint32_t)gx, gy, 1);
  }
  /* the recording holds its own references until the work completes */
  nxvk_buffer_unref(c, sums);
  nxvk_buffer_unref(c, pre);
  return rc;
}

static int scan_lines(nxvk_rec *r, nxvk_dtype dt, int code, nxvk_buffer *src, nxvk_buffer *dst,
                      const nxvk_lines *l, bool reverse) {
  nxvk_ctx *c = nxvk_rec_ctx(r);
  char name[32];
  /* products of floats: scanw_<dtype> (scan.comp -DWIDE), whose values are
   * (mantissa, exponent) pairs twice the compute type's size, so a partial
   * product never under- or overflows (as the reference's); the one-pass
   * or block scan */
  bool wide = code == NXVK_SCAN_PRODUCT && nxvk_dtype_is_float(dt) && !c->tuning->scan_narrow;
  snprintf(name, sizeof name, "%s_%s", wide ? "scanw" : "scan", nxvk_dtype_name(dt));
  /* rows of contiguous lines longer than a few elements: the look-back scan
   * (NXVK_SCAN=lookback, the GPU rule; dtypes computed in 32 bits), the
   * one-pass scan (one_pass; 8-byte dtypes under lookback) or the
   * three-pass block scan (blocks) */
  bool blocked = l->inner == 1 && l->n > 64;
  size_t tsz = nxvk_dtype_size(dt) == 8 ? 8 : 4; /* the compute type: f16 / bf16 as f32, narrow integers 32 bits */
  if (wide) tsz *= 2;
  if (blocked && c->tuning->scan_kind == NXVK_SCAN_LOOKBACK && tsz == 4)
    return scan_lookback(r, dt, code, src, dst, l, reverse);
  if (blocked && c->tuning->scan_kind == NXVK_SCAN_RTS && tsz == 4)
    return scan_rts(r, dt, code, src, dst, (uint64_t)l->outer, (uint64_t)l->n, reverse, true);
  /* rts on a CPU device: 8-byte dtypes take blocks (no waits either) */
  uint32_t kind = c->tuning->scan_kind;
  bool one_pass = blocked && kind != NXVK_SCAN_BLOCKS &&
                  !(kind == NXVK_SCAN_RTS && strcmp(c->info.type, "cpu") == 0);
  /* one pass: 16 elements per invocation (8 for 8-byte compute types, 4
   * for scanw_f64's 16-byte pairs: the tile in shared memory, sized by
   * ITEMS in every mode, stays under 17 KiB) */
  uint32_t items = tsz == 16 ? 4u : one_pass ? (tsz == 8 ? 8u : 16u) : SCAN_ITEMS;
  uint64_t bsize = (uint64_t)NXVK_WG * items;
  uint64_t nb = blocked ? (uint64_t)(l->n + (int64_t)bsize - 1) / bsize : 1;
  uint64_t ng = (nb + NXVK_WG - 1) / NXVK_WG;
  uint32_t meta[6] = {(uint32_t)l->outer, (uint32_t)l->n, (uint32_t)l->inner, (uint32_t)nb, reverse,
                      (uint32_t)ng};
  if (!blocked) {
    uint32_t spec[4] = {NXVK_WG, (uint32_t)code, 3, items};
    nxvk_buffer *bufs[5] = {src, dst, dst, dst, dst};   /* 3..5 unused */
    return nxvk_dispatch_1d(r, name, spec, 4, meta, 6, bufs, 5, (uint64_t)(l->outer * l->inner));
  }
  uint64_t total = (uint64_t)l->outer * nb;
  if (total + (uint64_t)l->outer * ng + 1 > UINT32_MAX)
    return nxvk_seterr(NXVK_E_TOO_LARGE, "scan: %llu rows of %lld are too many blocks",
                       (unsigned long long)l->outer, (long long)l->n);
  nxvk_buffer *part = NULL, *flags = NULL, *err = NULL;
  uint64_t nparts = one_pass ? total + (uint64_t)l->outer * ng : total;
  int rc = nxvk_buffer_create(c, nparts * tsz, false, &part);
  if (rc) return rc;
  if (one_pass) {
    /* the ticket, a flag per tile and one per group, zeroed */
    uint64_t fbytes = (1 + nparts) * 4;
    rc = nxvk_buffer_create(c, fbytes, false, &flags);
    if (rc == NXVK_OK) rc = nxvk_rec_fill(r, flags, fbytes, 0);
    if (rc == NXVK_OK) rc = err_flag(r, &err);
    if (rc == NXVK_OK) {
      uint32_t spec[4] = {NXVK_WG, (uint32_t)code, 4, items};
      nxvk_buffer *bufs[5] = {src, dst, part, flags, err};
      uint32_t groups = nxvk_groups_for(c, total < SCAN_ONE_PASS_GROUPS ? total : SCAN_ONE_PASS_GROUPS, 1);
      rc = nxvk_dispatch_grid(r, name, spec, 4, meta, 6, bufs, 5, groups, 1, 1);
    }
  }
  nxvk_buffer *bufs[5] = {src, dst, part, part, part};   /* 4..5 unused */
  for (uint32_t mode = 0; !one_pass && mode < 3 && rc == NXVK_OK; mode++) {
    uint32_t spec[4] = {NXVK_WG, (uint32_t)code, mode, items};
    uint64_t groups = mode == 1 ? (uint64_t)l->outer : total;
    rc = nxvk_dispatch_grid(r, name, spec, 4, meta, 6, bufs, 5, nxvk_groups_for(c, groups, 1), 1, 1);
  }
  /* the recording holds its own references until the work completes */
  nxvk_buffer_unref(c, part);
  nxvk_buffer_unref(c, flags);
  nxvk_buffer_unref(c, err);
  return rc;
}

int nxvk_scan_rows(nxvk_rec *r, nxvk_dtype dt, int code, nxvk_buffer *src, nxvk_buffer *dst,
                   uint64_t rows, uint64_t n) {
  nxvk_lines l = {0, (int64_t)rows, (int64_t)n, 1};
  return scan_lines(r, dt, code, src, dst, &l, false);
}

int nxvk_scan_gpu(nxvk_rec *r, const nxvk_op *op, const nxvk_attrs *a, nxvk_tensor *const *in,
                  int nin, nxvk_tensor *out) {
  (void)nin;
  nxvk_lines l;
  int rc = nxvk_axis_lines(op, a->axis, &in[0]->shape, &l);
  if (rc) return rc;
  return scan_lines(r, in[0]->dtype, op->code, in[0]->buf, out->buf, &l, a->reverse);
}

void nxvk_wide_mul(nxvk_wide *p, long double v) {
  if (v == 0 || !isfinite(v)) {
    p->m *= v; /* 0, inf and NaN as IEEE's (0 * inf = NaN) */
    return;
  }
  int ev, k;
  p->m *= frexpl(v, &ev);
  p->e += ev;
  if (p->m == 0 || !isfinite(p->m)) return;
  p->m = frexpl(p->m, &k); /* exact: back into [0.5, 1) */
  p->e += k;
}

double nxvk_wide_value(const nxvk_wide *p, nxvk_dtype d) {
  long double v = p->m;
  if (v != 0 && isfinite(v))   /* past +-20000 the dtype's value is 0 or inf anyway */
    v = p->e > 20000 ? copysignl(INFINITY, v) : p->e < -20000 ? copysignl(0.0L, v) : ldexpl(v, (int)p->e);
  return d == NXVK_F64 ? (double)v : (double)(float)v;
}

/* The reference: in order along the axis, floats in long double (products
 * with an unbounded exponent: nxvk_wide) and each prefix rounded once
 * (f16 / bf16 through f32); integers wrap. */
int nxvk_scan_ref(const nxvk_op *op, const nxvk_attrs *a, const nxvk_host *in, int nin,
                  nxvk_host *out) {
  (void)nin;
  nxvk_lines l;
  int rc = nxvk_axis_lines(op, a->axis, &in[0].shape, &l);
  if (rc) return rc;
  nxvk_dtype d = in[0].dtype;
  bool fl = nxvk_dtype_is_float(d);
  for (int64_t o = 0; o < l.outer; o++)
    for (int64_t i = 0; i < l.inner; i++) {
      long double acc = 0;
      nxvk_wide prod = {1.0L, 0};
      int64_t iacc = 0;
      for (int64_t k = 0; k < l.n; k++) {
        int64_t j = a->reverse ? l.n - 1 - k : k;
        int64_t at = (o * l.n + j) * l.inner + i;
        if (fl && op->code == NXVK_SCAN_PRODUCT) {
          nxvk_wide_mul(&prod, nxvk_host_get(&in[0], at));
          nxvk_host_set(out, at, nxvk_wide_value(&prod, d));
        } else if (fl) {
          long double v = nxvk_host_get(&in[0], at);
          if (k == 0) acc = v;
          else if (op->code == NXVK_SCAN_SUM) acc += v;
          else if (isnan(acc)) ;
          else if (isnan(v)) acc = v;
          else if (v == acc && signbit(v) != signbit(acc)) acc = op->code == NXVK_SCAN_MAX ? 0.0L : -0.0L;
          else if (op->code == NXVK_SCAN_MAX ? v > acc : v < acc) acc = v;
          nxvk_host_set(out, at, d == NXVK_F64 ? (double)acc : (double)(float)acc);
        } else {
          int64_t v = nxvk_host_get_int(&in[0], at);
          bool lt = d == NXVK_U64 ? (uint64_t)v < (uint64_t)iacc : v < iacc;
          bool gt = d == NXVK_U64 ? (uint64_t)v > (uint64_t)iacc : v > iacc;
          if (k == 0) iacc = v;
          else if (op->code == NXVK_SCAN_SUM) iacc = (int64_t)((uint64_t)iacc + (uint64_t)v);
          else if (op->code == NXVK_SCAN_PRODUCT) iacc = (int64_t)((uint64_t)iacc * (uint64_t)v);
          else if (op->code == NXVK_SCAN_MAX ? gt : lt) iacc = v;
          /* the running value wraps to the dtype as the GPU's store does */
          nxvk_host_set_int(out, at, iacc);
          iacc = nxvk_host_get_int(out, at);
        }
      }
    }
  return NXVK_OK;
}
