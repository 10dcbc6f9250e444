/*
 * conv.c - conv, Nx.conv's whole signature (XLA's ConvGeneralDilated):
 * input [N, C, X...] and kernel [O, I, K...] after their permutations, any
 * spatial rank, strides, padding ("valid", "same" or [low, high] pairs,
 * negative ones crop), input and kernel dilation, feature groups (C = I * G,
 * output channel o reads input channels (o / (O/G)) * I ...) and batch
 * groups (output batch N / B; output channel o reads input batch
 * (o / (O/B)) * (N/B) + n).  The output is [N/B, O, Y...] put through the
 * output permutation (canonical axis j is the output's axis perm[j], as for
 * the input).  Y = floor((lo + hi + (X-1)*idil + 1 - ((K-1)*kdil + 1)) /
 * stride) + 1, 0 when that is not positive.
 *
 * Every layout is strides: the input is never transposed.  The GPU runs
 * conv_gemm (implicit GEMM: f32, 2-D, one group, no input dilation; the
 * kernel packed once into a [K][O] scratch; f16 and bf16 through f32
 * copies) on the whole output, and
 * conv_direct (one invocation per output element) elsewhere, or everywhere
 * with NXVK_CONV_DIRECT=1 (src/ops/tuning.c; timing).  NXVK_CONV_GEMM forces
 * conv_gemm's tile.  f16 takes conv_coopmat (the implicit GEMM on NV
 * cooperative matrices, f32 sums rounded once to f16) instead, where the
 * device has them; NXVK_CONV_COOPMAT=0 turns it off, five numbers force its
 * layout, NXVK_CONV_COOPMAT_EMU=1 runs its data flow without them.  Padded positions are skipped, not multiplied as zeros
 * (0 * inf would be NaN).  The reference sums in long double and rounds
 * once.
 */
#include "ops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONV_MAX_S 6

/* The conv's geometry in canonical order, with the buffers' own strides. */
typedef struct {
  int S;
  int64_t N, C, O, I, NB, G, B;
  int64_t X[CONV_MAX_S], K[CONV_MAX_S], Y[CONV_MAX_S];
  int64_t stride[CONV_MAX_S], idil[CONV_MAX_S], kdil[CONV_MAX_S], lo[CONV_MAX_S];
  int64_t in_st[NXVK_MAX_RANK], k_st[NXVK_MAX_RANK], out_st[NXVK_MAX_RANK]; /* [0] batch [1] channel [2+d] */
  nxvk_shape out;
} conv_plan;

static int perm_of(const char *what, int n, const int *p, int rank, int *out) {
  if (n == 0) {
    for (int i = 0; i < rank; i++) out[i] = i;
    return NXVK_OK;
  }
  if (n != rank)
    return nxvk_seterr(NXVK_E_BAD_ATTR, "conv: attribute \"%s\": %d entries for rank %d", what, n, rank);
  for (int i = 0; i < rank; i++) {
    if (p[i] >= rank)
      return nxvk_seterr(NXVK_E_BAD_ATTR, "conv: attribute \"%s\": axis %d is out of range for rank %d", what,
                         p[i], rank);
    out[i] = p[i];
  }
  return NXVK_OK;
}

static int per_axis(const char *what, int n, const int64_t *v, int S, int64_t *out) {
  if (n != 0 && n != S)
    return nxvk_seterr(NXVK_E_BAD_ATTR, "conv: attribute \"%s\": %d entries for %d spatial axes", what, n, S);
  for (int d = 0; d < S; d++) out[d] = n ? v[d] : 1;
  return NXVK_OK;
}

static int conv_plan_make(const nxvk_attrs *a, const nxvk_shape *xs, const nxvk_shape *ks, conv_plan *p) {
  const nxvk_conv_attrs *c = &a->conv;
  char b1[160], b2[160];
  memset(p, 0, sizeof *p);
  int rank = xs->rank;
  if (rank < 3 || rank > 2 + CONV_MAX_S)
    return nxvk_seterr(NXVK_E_SHAPE_MISMATCH, "conv: input %s: the rank must be 3 to %d (batch, channels, spatial axes)",
                       nxvk_shape_str(xs, b1, sizeof b1), 2 + CONV_MAX_S);
  if (ks->rank != rank)
    return nxvk_seterr(NXVK_E_SHAPE_MISMATCH, "conv: kernel %s must have the input %s's rank",
                       nxvk_shape_str(ks, b1, sizeof b1), nxvk_shape_str(xs, b2, sizeof b2));
  int S = rank - 2, pin[NXVK_MAX_RANK], pk[NXVK_MAX_RANK], pout[NXVK_MAX_RANK];
  int rc = perm_of("input_permutation", c->nperm_in, c->perm_in, rank, pin);
  if (!rc) rc = perm_of("kernel_permutation", c->nperm_kernel, c->perm_kernel, rank, pk);
  if (!rc) rc = perm_of("output_permutation", c->nperm_out, c->perm_out, rank, pout);
  if (!rc) rc = per_axis("strides", c->nstrides, c->strides, S, p->stride);
  if (!rc) rc = per_axis("input_dilation", c->nidil, c->idil, S, p->idil);
  if (!rc) rc = per_axis("kernel_dilation", c->nkdil, c->kdil, S, p->kdil);
  if (rc) return rc;
  if (c->pad_mode == NXVK_PAD_EXPLICIT && c->npad != S)
    return nxvk_seterr(NXVK_E_BAD_ATTR, "conv: attribute \"padding\": %d pairs for %d spatial axes", c->npad, S);
  int64_t xst[NXVK_MAX_RANK], kst[NXVK_MAX_RANK];
  nxvk_contiguous_strides(xs, xst);
  nxvk_contiguous_strides(ks, kst);
  for (int j = 0; j < rank; j++) {
    p->in_st[j] = xst[pin[j]];
    p->k_st[j] = kst[pk[j]];
  }
  p->S = S;
  p->N = xs->dim[pin[0]];
  p->C = xs->dim[pin[1]];
  p->O = ks->dim[pk[0]];
  p->I = ks->dim[pk[1]];
  p->G = c->feature_groups ? c->feature_groups : 1;
  p->B = c->batch_groups ? c->batch_groups : 1;
  if (p->G != 1 && p->B != 1)
    return nxvk_seterr(NXVK_E_BAD_ATTR, "conv: \"feature_group_size\" (%lld) or \"batch_group_size\" (%lld) must be 1",
                       (long long)p->G, (long long)p->B);
  if (p->C != p->I * p->G)
    return nxvk_seterr(NXVK_E_SHAPE_MISMATCH,
                       "conv: input %s has %lld channels; kernel %s takes %lld x feature_group_size %lld",
                       nxvk_shape_str(xs, b1, sizeof b1), (long long)p->C, nxvk_shape_str(ks, b2, sizeof b2),
                       (long long)p->I, (long long)p->G);
  if (p->O % p->G || p->O % p->B)
    return nxvk_seterr(NXVK_E_SHAPE_MISMATCH,
                       "conv: kernel %s: its %lld output channels are not divisible by the %s %lld",
                       nxvk_shape_str(ks, b1, sizeof b1), (long long)p->O,
                       p->O % p->G ? "feature_group_size" : "batch_group_size", (long long)(p->O % p->G ? p->G : p->B));
  if (p->N % p->B)
    return nxvk_seterr(NXVK_E_SHAPE_MISMATCH, "conv: input %s: batch %lld is not divisible by batch_group_size %lld",
                       nxvk_shape_str(xs, b1, sizeof b1), (long long)p->N, (long long)p->B);
  p->NB = p->N / p->B;
  int64_t canon[NXVK_MAX_RANK] = {p->NB, p->O};
  for (int d = 0; d < S; d++) {
    p->X[d] = xs->dim[pin[2 + d]];
    p->K[d] = ks->dim[pk[2 + d]];
    int64_t xd = p->X[d] ? (p->X[d] - 1) * p->idil[d] + 1 : 0;
    int64_t kd = p->K[d] ? (p->K[d] - 1) * p->kdil[d] + 1 : 0;
    int64_t lo, hi;
    if (c->pad_mode == NXVK_PAD_EXPLICIT) {
      lo = c->pad_lo[d];
      hi = c->pad_hi[d];
    } else if (c->pad_mode == NXVK_PAD_SAME) {
      int64_t t = kd > 1 ? kd - 1 : 0; /* Nx: {floor(t/2), ceil(t/2)}, on the dilated kernel */
      lo = t / 2;
      hi = t - lo;
    } else {
      lo = hi = 0;
    }
    p->lo[d] = lo;
    int64_t span = lo + hi + xd - kd;
    p->Y[d] = span < 0 ? 0 : span / p->stride[d] + 1;
    canon[2 + d] = p->Y[d];
  }
  /* canonical axis j is the output's axis pout[j] */
  p->out.rank = rank;
  for (int j = 0; j < rank; j++) p->out.dim[pout[j]] = canon[j];
  int64_t ost[NXVK_MAX_RANK], n;
  nxvk_contiguous_strides(&p->out, ost);
  for (int j = 0; j < rank; j++) p->out_st[j] = ost[pout[j]];
  return nxvk_shape_count(&p->out, &n);
}

int nxvk_conv_infer(const nxvk_op *op, const nxvk_attrs *a, const nxvk_meta *in, int nin, nxvk_meta *out) {
  (void)op;
  (void)nin;
  if (in[0].dtype != in[1].dtype)
    return nxvk_seterr(NXVK_E_DTYPE_MISMATCH, "conv: input is %s, kernel is %s (use as_type)",
                       nxvk_dtype_name(in[0].dtype), nxvk_dtype_name(in[1].dtype));
  conv_plan p;
  int rc = conv_plan_make(a, &in[0].shape, &in[1].shape, &p);
  if (rc) return rc;
  out->dtype = in[0].dtype;
  out->shape = p.out;
  return NXVK_OK;
}

/* ---- the reference ---- */

/* Calls fn for every output element and each (input, kernel) element pair
 * it sums, in canonical order. */
int nxvk_conv_ref(const nxvk_op *op, const nxvk_attrs *a, const nxvk_host *in, int nin, nxvk_host *out) {
  (void)op;
  (void)nin;
  conv_plan p;
  int rc = conv_plan_make(a, &in[0].shape, &in[1].shape, &p);
  if (rc) return rc;
  int S = p.S;
  int64_t total = p.NB * p.O, KS = 1;
  for (int d = 0; d < S; d++) {
    total *= p.Y[d];
    KS *= p.K[d];
  }
  const nxvk_host *X = &in[0], *W = &in[1];
  for (int64_t i = 0; i < total; i++) {
    int64_t r = i, y[CONV_MAX_S], out_off = 0;
    for (int d = S - 1; d >= 0; d--) {
      y[d] = r % p.Y[d];
      r /= p.Y[d];
      out_off += y[d] * p.out_st[2 + d];
    }
    int64_t o = r % p.O, n = r / p.O;
    out_off += n * p.out_st[0] + o * p.out_st[1];
    int64_t in_base = ((o / (p.O / p.B)) * p.NB + n) * p.in_st[0] + (o / (p.O / p.G)) * p.I * p.in_st[1];
    int64_t k_base = o * p.k_st[0];
    long double acc = 0;
    bool nan = false, pinf = false, ninf = false;
    for (int64_t kp = 0; kp < KS; kp++) {
      int64_t kr = kp, in_off = in_base, k_off = k_base;
      bool ok = true;
      for (int d = S - 1; d >= 0 && ok; d--) {
        int64_t kd = kr % p.K[d];
        kr /= p.K[d];
        int64_t q = y[d] * p.stride[d] + kd * p.kdil[d] - p.lo[d];
        if (q < 0 || q % p.idil[d] || q / p.idil[d] >= p.X[d]) ok = false;
        in_off += (q / p.idil[d]) * p.in_st[2 + d];
        k_off += kd * p.k_st[2 + d];
      }
      if (!ok) continue;
      for (int64_t ch = 0; ch < p.I; ch++) {
        long double u = nxvk_host_get(X, in_off + ch * p.in_st[1]);
        long double v = nxvk_host_get(W, k_off + ch * p.k_st[1]);
        if (isfinite(u) && isfinite(v)) {
          acc += u * v;
        } else if (isnan(u) || isnan(v) || u == 0 || v == 0) {
          nan = true; /* NaN, or an infinity times zero */
        } else if ((u < 0) != (v < 0)) {
          ninf = true;
        } else {
          pinf = true;
        }
      }
    }
    double res = nan || (pinf && ninf) ? NAN : pinf ? INFINITY : ninf ? -INFINITY : (double)acc;
    /* f32 (and f16 / bf16: f32 sums rounded once more at the store) */
    nxvk_host_set(out, out_off, out->dtype == NXVK_F64 ? res : (double)(float)res);
  }
  return NXVK_OK;
}

/* ---- the GPU ---- */

/* conv_gemm's tile: NT invocations, TX of them across, RB x CB blocks of
 * 4 x 4 each, k steps of BK; BM = (NT/TX) 4 RB pixels by BN = TX 4 CB
 * channels.  Why a tile does not fit the kernel or the device (NULL when it
 * does). */
static const char *gemm_tile_unfit(const nxvk_ctx *c, const uint32_t g[5]) {
  uint32_t nt = g[0], tx = g[1], rb = g[2], cb = g[3], bk = g[4];
  if (!nt || !tx || !rb || !cb || !bk || nt % tx) return "NT, TX, RB, CB, BK nonzero, NT a multiple of TX";
  if (tx % (4 * rb)) return "TX a multiple of 4 RB (a workgroup loads whole pixel rows)";
  uint32_t bmv = nt / tx * rb, bnv = tx * cb;
  if (bk % (nt / (4 * bmv))) return "BK a multiple of NT / BM";
  if (nt > c->info.max_workgroup_invocations || nt > c->info.max_workgroup_size[0])
    return "NT at most the device's workgroup size";
  if (rb * cb > 16) return "RB CB at most 16 (registers)";
  if ((uint64_t)2 * bk * (bmv + bnv) * 16 + 4 > c->info.max_shared_memory)
    return "2 BK (BM + BN) floats within the device's shared memory";
  return NULL;
}

/* ---- f16 on cooperative matrices (conv_coopmat.comp) ---- */

/* WM x WN subgroups of 32, FR x FC accumulators of FM x FN each, k steps
 * of BK; emu: the emulation (CM_EMU), which needs no tensor cores. */
typedef struct {
  uint32_t wm, wn, fr, fc, bk, fm, fn, fk;
  bool emu;
} cm_layout;

static uint32_t cm_bm(const cm_layout *k) { return k->wm * k->fr * k->fm; }
static uint32_t cm_bn(const cm_layout *k) { return k->wn * k->fc * k->fn; }
static uint32_t cm_threads(const cm_layout *k) { return k->wm * k->wn * 32; }
static uint32_t round_to(uint64_t v, uint32_t m) { return (uint32_t)((v + m - 1) / m * m); }

/* The fragment: of the device's f16 x f16 + f32 configurations whose sides
 * are multiples of 8 with FM dividing 32 (a lane's outputs are one pixel),
 * the largest, 16x16x16 first on a tie (16x16x16 where none is listed: the
 * emulation's); dot.c's rule with that condition. */
static void cm_fragment(const nxvk_device_info *d, uint32_t f[3]) { nxvk_coopmat_fragment(d, true, f); }

/* The rule: 4 x 2 subgroups of 32 pixels x 32 channels each (128 x 64 on
 * 16x16x16: O = 64 fills the tile, as conv_gemm's narrow tile), k steps of
 * 32.  On an H100 the ResNet-50 stage took 95 us so, against 111 us as 4 x 1
 * subgroups of 32 x 64 (199 registers an invocation) and 103-113 us for the
 * other layouts measured (bench/NOTES.md).  NXVK_CONV_COOPMAT forces another. */
static cm_layout cm_pick(const nxvk_ctx *c) {
  const uint32_t *t = c->tuning->conv_coopmat;
  cm_layout k = {4, 2, 2, 2, 32, 16, 16, 16, c->tuning->conv_coopmat_emu};
  uint32_t f[3];
  cm_fragment(&c->info, f);
  k.fm = f[0], k.fn = f[1], k.fk = f[2];
  k.fr = 32 / k.fm ? 32 / k.fm : 1;
  k.fc = 32 / k.fn ? 32 / k.fn : 1;
  k.bk = round_to(32, k.fk);
  if (t[0]) k.wm = t[0], k.wn = t[1], k.fr = t[2], k.fc = t[3], k.bk = t[4];
  return k;
}

/* Why layout k cannot run on this device, or NULL: the shader's rules
 * (conv_coopmat.comp) and the device's limits, features and fragments. */
static const char *cm_unfit(const nxvk_device_info *d, const cm_layout *k, char *buf, size_t len) {
  uint32_t nt = cm_threads(k), bm = cm_bm(k), bn = cm_bn(k);
  bool listed = false;
  for (int i = 0; i < d->coop_f16_nshapes; i++)
    listed |= d->coop_f16_shapes[i][0] == k->fm && d->coop_f16_shapes[i][1] == k->fn &&
              d->coop_f16_shapes[i][2] == k->fk;
  uint64_t stages = 2ull * 16 * ((uint64_t)k->bk * (bm / 8 + 1) + (uint64_t)k->bk * (bn / 8 + 1));
  uint64_t scratch = (uint64_t)k->wm * k->wn * k->fm * k->fn * 4;
  if (!k->emu && !d->coop_matrix_nv)
    snprintf(buf, len, "no VK_NV_cooperative_matrix");
  else if (!k->emu && !(d->f16 && d->coopmat_nv_f16))
    snprintf(buf, len, "no f16 x f16 -> f32 subgroup configuration (or no shaderFloat16 or vulkanMemoryModel)");
  else if (!k->emu && d->subgroup_size != 32)
    snprintf(buf, len, "subgroups are not 32 wide");
  else if (!(d->storage_16bit && d->int16))
    snprintf(buf, len, "no storageBuffer16BitAccess and shaderInt16");
  else if (!k->wm || !k->wn || !k->fr || !k->fc || k->fr > 8 || k->fc > 8 || k->wm * k->wn > 32)
    snprintf(buf, len, "WM x WN from 1 to 32 subgroups, FR and FC from 1 to 8");
  else if (!k->emu && !listed)
    snprintf(buf, len, "%ux%ux%u is not one of %.64s's f16 x f16 + f32 configurations", k->fm, k->fn, k->fk, d->name);
  else if (k->fm % 8 || k->fn % 8 || k->fk % 8 || 32 % k->fm)
    snprintf(buf, len, "fragment sides must be multiples of 8, FM dividing 32");
  else if (nt % (bm / 2))
    snprintf(buf, len, "the %u invocations must be a multiple of the %u pixel pairs of a block", nt, bm / 2);
  else if (!k->bk || k->bk % k->fk || k->bk % (nt / (bm / 2)) || k->bk > 256)
    snprintf(buf, len, "BK must be a multiple of FK = %u and of %u, up to 256", k->fk, nt / (bm / 2));
  else if ((k->bk * bn / 8) % nt)
    snprintf(buf, len, "the %u invocations must split the %u x %u B tile's 16-byte loads evenly", nt, k->bk, bn);
  else if (d->max_workgroup_invocations < nt || d->max_workgroup_size[0] < nt)
    snprintf(buf, len, "%u invocations a workgroup are too many", nt);
  else if (d->max_shared_memory < (stages > scratch ? stages : scratch))
    snprintf(buf, len, "%llu bytes of shared memory are too many (%u)",
             (unsigned long long)(stages > scratch ? stages : scratch), d->max_shared_memory);
  else
    return NULL;
  return buf;
}

/* conv_coopmat's kernel name (rtkernel.c parses it back into defines) */
static void cm_name(const cm_layout *k, char *name, size_t len) {
  snprintf(name, len, "convcm_%ux%u_%ux%u_k%u_%ux%ux%u%s", k->wm, k->wn, k->fr, k->fc, k->bk, k->fm, k->fn, k->fk,
           k->emu ? "_emu" : "");
}

int nxvk_conv_tuning_check(const nxvk_ctx *c, const nxvk_tuning *t) {
  if (t->conv_coopmat[0] || t->conv_coopmat_emu) {
    char buf[200];
    cm_layout k = cm_pick(c);
    const char *why = cm_unfit(&c->info, &k, buf, sizeof buf);
    if (why && t->conv_coopmat[0])
      return nxvk_seterr(NXVK_E_BAD_REQUEST, "NXVK_CONV_COOPMAT=%u,%u,%u,%u,%u: %s", t->conv_coopmat[0],
                         t->conv_coopmat[1], t->conv_coopmat[2], t->conv_coopmat[3], t->conv_coopmat[4], why);
    if (why) return nxvk_seterr(NXVK_E_BAD_REQUEST, "NXVK_CONV_COOPMAT_EMU=1: %s", why);
  }
  if (!t->conv_gemm[0]) return NXVK_OK;
  const char *why = gemm_tile_unfit(c, t->conv_gemm);
  return why ? nxvk_seterr(NXVK_E_BAD_REQUEST, "NXVK_CONV_GEMM=%u,%u,%u,%u,%u: want %s", t->conv_gemm[0],
                           t->conv_gemm[1], t->conv_gemm[2], t->conv_gemm[3], t->conv_gemm[4], why)
             : NXVK_OK;
}

/* The rule: invocations of 8 x 8 sums, as dot_vec's measured best
 * (RB = CB = 2, BK = 8); 128 pixels x 64 channels where O <= 64 (a
 * 128-wide tile would compute half zeros; on an H100 the ResNet-50 stage
 * took 262 us so against 491 us as 256 x 64), 128 x 128 above. */
static void gemm_tile(const nxvk_ctx *c, int64_t O, uint32_t g[5]) {
  static const uint32_t narrow[5] = {128, 8, 2, 2, 8}, wide[5] = {256, 16, 2, 2, 8};
  memcpy(g, c->tuning->conv_gemm[0] ? c->tuning->conv_gemm : O <= 64 ? narrow : wide, 5 * sizeof *g);
}

/* The implicit GEMM (conv_gemm.comp) on the whole output: the kernel
 * packed into a [K][OP] scratch first (conv_wpack.comp). */
static int conv_gemm(nxvk_rec *r, const conv_plan *p, nxvk_buffer *xb, nxvk_buffer *wb, nxvk_buffer *yb,
                     const uint32_t tile[5]) {
  nxvk_ctx *c = nxvk_rec_ctx(r);
  uint32_t K = (uint32_t)(p->I * p->K[0] * p->K[1]), O = (uint32_t)p->O, OP = (O + 3) / 4 * 4;
  uint32_t M = (uint32_t)(p->NB * p->Y[0] * p->Y[1]);
  nxvk_buffer *packed = NULL;
  int rc = nxvk_buffer_create(c, (uint64_t)K * OP * 4, false, &packed);
  if (rc) return rc;
  uint32_t wmeta[9] = {K, O, OP, (uint32_t)p->I, (uint32_t)p->K[1], (uint32_t)p->k_st[0], (uint32_t)p->k_st[1],
                       (uint32_t)p->k_st[2], (uint32_t)p->k_st[3]};
  uint32_t wspec[1] = {NXVK_WG};
  nxvk_buffer *wbufs[2] = {wb, packed};
  rc = nxvk_dispatch_1d(r, "conv_wpack_f32", wspec, 1, wmeta, 9, wbufs, 2, (uint64_t)K * OP);
  /* vector stores: each group of 4 pixels is contiguous and 16-byte aligned */
  bool vec_out = p->out_st[3] == 1 && p->out_st[2] == p->Y[1] && (p->Y[0] * p->Y[1]) % 4 == 0 &&
                 p->out_st[0] % 4 == 0 && p->out_st[1] % 4 == 0;
  uint32_t g[27] = {M, O, K, (uint32_t)p->Y[0], (uint32_t)p->Y[1], (uint32_t)p->K[0], (uint32_t)p->K[1],
                    (uint32_t)p->X[0], (uint32_t)p->X[1], (uint32_t)p->stride[0], (uint32_t)p->stride[1],
                    (uint32_t)p->kdil[0], (uint32_t)p->kdil[1], (uint32_t)(int32_t)p->lo[0],
                    (uint32_t)(int32_t)p->lo[1], (uint32_t)p->in_st[0], (uint32_t)p->in_st[1],
                    (uint32_t)p->in_st[2], (uint32_t)p->in_st[3], (uint32_t)p->I, OP, vec_out, 0,
                    (uint32_t)p->out_st[0], (uint32_t)p->out_st[1], (uint32_t)p->out_st[2], (uint32_t)p->out_st[3]};
  uint32_t bm = tile[0] / tile[1] * 4 * tile[2], bn = tile[1] * 4 * tile[3];
  nxvk_buffer *bufs[3] = {xb, packed, yb};
  if (rc == NXVK_OK)
    rc = nxvk_dispatch_grid(r, "conv_gemm_f32", tile, 5, g, 27, bufs, 3, (M + bm - 1) / bm, (O + bn - 1) / bn, 1);
  nxvk_buffer_unref(c, packed);
  return rc;
}

/* f16 / bf16 through the same GEMM: the operands widened into f32 copies
 * of their own layout, the sums in f32, rounded once into the result (as
 * conv_direct and the reference do). */
static int conv_gemm_half(nxvk_rec *r, const conv_plan *p, nxvk_tensor *const *in, nxvk_tensor *out,
                          const uint32_t tile[5]) {
  nxvk_ctx *c = nxvk_rec_ctx(r);
  const nxvk_tensor *t[3] = {in[0], in[1], out};
  nxvk_buffer *wide[3] = {NULL, NULL, NULL};
  int64_t st[3][NXVK_MAX_RANK];
  int rc = NXVK_OK;
  for (int i = 0; i < 3 && rc == NXVK_OK; i++) {
    nxvk_contiguous_strides(&t[i]->shape, st[i]);
    rc = nxvk_buffer_create(c, (uint64_t)t[i]->count * 4, false, &wide[i]);
  }
  for (int i = 0; i < 2 && rc == NXVK_OK; i++)
    rc = nxvk_strided_copy(r, t[i]->buf, t[i]->dtype, 0, st[i], wide[i], NXVK_F32, 0, st[i], &t[i]->shape);
  if (rc == NXVK_OK) rc = conv_gemm(r, p, wide[0], wide[1], wide[2], tile);
  if (rc == NXVK_OK) rc = nxvk_strided_copy(r, wide[2], NXVK_F32, 0, st[2], out->buf, out->dtype, 0, st[2], &out->shape);
  for (int i = 0; i < 3; i++)
    if (wide[i]) nxvk_buffer_unref(c, wide[i]);
  return rc;
}

/* The layout conv_coopmat runs this conv with, or NULL where it does not
 * run: f16, 2-D, one group, no input dilation, a device with f16
 * cooperative matrices (or the emulation asked for), grids and 32-bit
 * offsets within limits, NXVK_CONV_COOPMAT not 0 nor NXVK_CONV_DIRECT set. */
static bool cm_choose(const nxvk_ctx *c, const conv_plan *p, const nxvk_tensor *x, const nxvk_tensor *out,
                      cm_layout *k) {
  char buf[200];
  if (out->dtype != NXVK_F16 || p->S != 2 || p->G != 1 || p->B != 1 || p->idil[0] != 1 || p->idil[1] != 1 ||
      c->tuning->conv_coopmat_off || c->tuning->conv_direct)
    return false;
  *k = cm_pick(c);
  if (cm_unfit(&c->info, k, buf, sizeof buf)) return false;
  uint64_t M = (uint64_t)p->NB * (uint64_t)(p->Y[0] * p->Y[1]), K = (uint64_t)(p->I * p->K[0] * p->K[1]);
  uint64_t Kp = round_to(K, k->bk), OP = round_to((uint64_t)p->O, cm_bn(k));
  return K > 0 && (M + cm_bm(k) - 1) / cm_bm(k) <= c->info.max_workgroup_count[0] &&
         OP / cm_bn(k) <= c->info.max_workgroup_count[1] && Kp * OP < (1ull << 31) &&
         (uint64_t)x->count < (1ull << 31) && (uint64_t)out->count < (1ull << 31) &&
         (!strstr(c->info.driver_name, "llvmpipe") || Kp / k->bk < 16384); /* lavapipe's loop limit */
}

/* conv_coopmat: the f16 kernel packed into [Kp][OP] f16 (conv_wpack_f16,
 * its flag word zeroed first), then the implicit GEMM on tensor cores. */
static int conv_coopmat(nxvk_rec *r, const conv_plan *p, nxvk_buffer *xb, nxvk_buffer *wb, nxvk_buffer *yb,
                        const cm_layout *k) {
  nxvk_ctx *c = nxvk_rec_ctx(r);
  uint32_t K = (uint32_t)(p->I * p->K[0] * p->K[1]), O = (uint32_t)p->O, Kp = round_to(K, k->bk),
           OP = round_to(O, cm_bn(k)), M = (uint32_t)(p->NB * p->Y[0] * p->Y[1]), flag = Kp * OP / 2;
  nxvk_buffer *packed = NULL;
  uint64_t bytes = (uint64_t)Kp * OP * 2 + 16;
  int rc = nxvk_buffer_create(c, bytes, false, &packed);
  if (rc) return rc;
  rc = nxvk_rec_fill(r, packed, bytes, 0);
  uint32_t wmeta[11] = {K, O, OP, (uint32_t)p->I, (uint32_t)p->K[1], (uint32_t)p->k_st[0], (uint32_t)p->k_st[1],
                        (uint32_t)p->k_st[2], (uint32_t)p->k_st[3], Kp, flag};
  uint32_t wspec[1] = {NXVK_WG};
  nxvk_buffer *wbufs[2] = {wb, packed};
  if (rc == NXVK_OK) rc = nxvk_dispatch_1d(r, "conv_wpack_f16", wspec, 1, wmeta, 11, wbufs, 2, (uint64_t)Kp * OP / 2);
  uint32_t g[27] = {M, O, K, (uint32_t)p->Y[0], (uint32_t)p->Y[1], (uint32_t)p->K[0], (uint32_t)p->K[1],
                    (uint32_t)p->X[0], (uint32_t)p->X[1], (uint32_t)p->stride[0], (uint32_t)p->stride[1],
                    (uint32_t)p->kdil[0], (uint32_t)p->kdil[1], (uint32_t)(int32_t)p->lo[0],
                    (uint32_t)(int32_t)p->lo[1], (uint32_t)p->in_st[0], (uint32_t)p->in_st[1],
                    (uint32_t)p->in_st[2], (uint32_t)p->in_st[3], (uint32_t)p->I, OP, Kp, flag,
                    (uint32_t)p->out_st[0], (uint32_t)p->out_st[1], (uint32_t)p->out_st[2], (uint32_t)p->out_st[3]};
  uint32_t spec[1] = {cm_threads(k)}; /* fixed in the shader; constant 0 is unused */
  nxvk_buffer *bufs[3] = {xb, packed, yb};
  char name[64];
  cm_name(k, name, sizeof name);
  if (rc == NXVK_OK)
    rc = nxvk_dispatch_grid(r, name, spec, 1, g, 27, bufs, 3, (M + cm_bm(k) - 1) / cm_bm(k), OP / cm_bn(k), 1);
  nxvk_buffer_unref(c, packed);
  return rc;
}

int nxvk_conv_gpu(nxvk_rec *r, const nxvk_op *op, const nxvk_attrs *a, nxvk_tensor *const *in, int nin,
                  nxvk_tensor *out) {
  (void)op;
  (void)nin;
  conv_plan p;
  int rc = conv_plan_make(a, &in[0]->shape, &in[1]->shape, &p);
  if (rc) return rc;
  int64_t total = out->count, KS = 1;
  if (total == 0) return NXVK_OK;
  for (int d = 0; d < p.S; d++) KS *= p.K[d];
  nxvk_ctx *c = nxvk_rec_ctx(r);
  cm_layout cm;
  if (cm_choose(c, &p, in[0], out, &cm)) return conv_coopmat(r, &p, in[0]->buf, in[1]->buf, out->buf, &cm);
  bool half = out->dtype == NXVK_F16 || out->dtype == NXVK_BF16;
  if ((out->dtype == NXVK_F32 || half) && p.S == 2 && p.G == 1 && p.B == 1 && p.idil[0] == 1 && p.idil[1] == 1 &&
      p.I >= 1 && KS >= 1 && !c->tuning->conv_direct) {
    uint32_t tile[5];
    gemm_tile(c, p.O, tile);
    uint64_t M = (uint64_t)p.NB * (uint64_t)(p.Y[0] * p.Y[1]), K = (uint64_t)(p.I * KS);
    uint64_t bm = tile[0] / tile[1] * 4 * tile[2], bn = tile[1] * 4 * tile[3];
    /* 32-bit offsets; lavapipe stops shader loops past 65535 iterations */
    bool fits = (M + bm - 1) / bm <= c->info.max_workgroup_count[0] &&
                (uint64_t)(p.O + bn - 1) / bn <= c->info.max_workgroup_count[1] && K * (uint64_t)(p.O + 3) < (1ull << 31) &&
                (!strstr(c->info.driver_name, "llvmpipe") || K / tile[4] < 16384);
    if (fits && !gemm_tile_unfit(c, tile))
      return half ? conv_gemm_half(r, &p, in, out, tile) : conv_gemm(r, &p, in[0]->buf, in[1]->buf, out->buf, tile);
  }
  uint32_t meta[16 + 10 * CONV_MAX_S] = {
      (uint32_t)total, (uint32_t)p.S, (uint32_t)p.NB, (uint32_t)p.O, (uint32_t)p.I,
      (uint32_t)(p.O / p.G), (uint32_t)(p.O / p.B), (uint32_t)KS, (uint32_t)p.in_st[0], (uint32_t)p.in_st[1],
      (uint32_t)p.k_st[0], (uint32_t)p.k_st[1], (uint32_t)p.out_st[0], (uint32_t)p.out_st[1]};
  for (int d = 0; d < p.S; d++) {
    uint32_t *m = &meta[16 + 10 * d];
    m[0] = (uint32_t)p.X[d];
    m[1] = (uint32_t)p.K[d];
    m[2] = (uint32_t)p.Y[d];
    m[3] = (uint32_t)p.stride[d];
    m[4] = (uint32_t)p.idil[d];
    m[5] = (uint32_t)p.kdil[d];
    m[6] = (uint32_t)(int32_t)p.lo[d];
    m[7] = (uint32_t)p.in_st[2 + d];
    m[8] = (uint32_t)p.k_st[2 + d];
    m[9] = (uint32_t)p.out_st[2 + d];
  }
  char name[32];
  nxvk_buffer *bufs[3] = {in[0]->buf, in[1]->buf, out->buf};
  snprintf(name, sizeof name, "conv_direct_%s", nxvk_dtype_name(out->dtype));
  uint32_t spec[1] = {NXVK_WG};
  return nxvk_dispatch_1d(r, name, spec, 1, meta, 16 + 10 * (uint32_t)p.S, bufs, 3, (uint64_t)total);
}
