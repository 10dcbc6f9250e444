/*
 * dot.c - matrix products [m,k]x[k,n] and batched [b,m,k]x[b,k,n].
 * Variants: "tiled" (the default: the best kernel for the device), "vec"
 * (double-buffered, vector loads, dot_vec.comp), "vec1" (single-buffered,
 * dot_vec1.comp), "regtile" (scalar register tiles, dot_tiled.comp), "naive" (one
 * invocation per output, the baseline benchmarks compare with) and "coopmat"
 * (f32 inputs rounded to f16, f16 and bf16 inputs as they are; products and
 * sums in f32 on tensor cores where the device has them: NV cooperative
 * matrices for f16, VK_KHR_cooperative_matrix with bf16 for bf16), "skinny" (dot_skinny.comp:
 * matrix-vector and skinny products, m or n up to 16; "tiled" picks it there;
 * other shapes run "tiled"'s kernel).
 */
#include "ops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "tiled" picks the best kernel for the device; the others name one kernel
 * so each is checked and timed everywhere. */
static const char *const dot_variants[] = {"tiled", "vec", "vec1", "regtile", "naive", "coopmat", "skinny"};

static bool is_coopmat(const nxvk_attrs *a) {
  return (a->set & NXVK_ATTR_VARIANT) && strcmp(a->variant, "coopmat") == 0;
}

double nxvk_f16_round(double x) {
  if (isnan(x) || isinf(x) || x == 0) return x;
  double ax = fabs(x);
  if (ax >= 65520.0) return copysign(INFINITY, x); /* the tie above 65504 goes to even: inf */
  int e;
  frexp(ax, &e);                 /* ax = f * 2^e, f in [0.5, 1) */
  int q = e - 11;                /* f16 carries 11 significant bits ... */
  if (q < -24) q = -24;          /* ... down to the subnormal quantum 2^-24 */
  /* scaling by 2^-q is exact; rint rounds to nearest even (the default mode) */
  return copysign(ldexp(rint(ldexp(ax, -q)), q), x);
}

/* The coopmat kernel: dot_coopmat.comp with WM x WN subgroups of 32, FR x
 * FC accumulators of FM x FN each, k steps of BK, ST shared stages (2;
 * NXVK_DOT_COOPMAT_STAGES), global loads PF steps ahead (1; _PREFETCH),
 * row tiles regrouped by GM for L2 (0: none; _GROUP); FM x
 * FN x FK is one of the device's f16 x f16 + f32 -> f32 configurations
 * (nxvk info's cooperative_matrix_shapes; bf16 products: of its bf16 x bf16
 * + f32 -> f32 ones, coop_bf16_shapes): the largest it lists whose sides
 * are multiples of 8, 16x16x16 on NVIDIA.  The default block gives each
 * subgroup 64 x 64 of C (FR = 64 / FM, FC = 64 / FN) on 2 x 4 subgroups
 * with one shared stage, or 2 x 2 with two where that does not fit
 * (coopmat_defaults).  NXVK_DOT_COOPMAT="WM,WN,FR,FC,BK[,FM,FN,FK]" picks
 * another for tuning runs (checked against the device in
 * nxvk_dot_tuning_check); every layout but the default 16x16x16 one with
 * f32 results is compiled at run time (rtkernel.c: dotcm_...). */
typedef struct {
  uint32_t wm, wn, fr, fc, bk, fm, fn, fk;
  uint32_t st, pf, gm; /* shared stages (1 or 2); steps loaded ahead (1 or 2); row tiles a column walk (0: none) */
  uint32_t ord;        /* fragment order (0-3; _ORDER, the shader's OR) */
  bool emu;            /* the emulation (CM_EMU; _EMU=1): no tensor cores needed */
  uint32_t dg;         /* a diagnostic, not a product (the shader's DG; _DIAG, tuning runs only) */
  bool bf16;           /* bf16 inputs (the shader's IN_BF16): fragments from the device's bf16 list */
  bool khr;            /* run as a VK_KHR_cooperative_matrix kernel (spirv_khr.c): bf16 always, f16 where
                        * nxvk_coopmat_khr says (NVIDIA's KHR multiply-adds are faster: bench/NOTES.md) */
} coopmat_kernel;

/* The layout the shader's defaults describe (embedded as dot_coopmat_f32
 * and dot_coopmat_f16; any other, and every bf16 one, is compiled at run
 * time). */
static const coopmat_kernel coopmat_embedded = {2, 4, 4, 4, 32, 16, 16, 16, 1, 1, 0, 0, false, 0, false, false};

/* The device's f16 x f16 + f32 fragment for dot and conv: the largest listed
 * whose sides are multiples of 8 (and, for fm_divides_32, whose FM divides
 * 32: conv's lanes each own one pixel), 16x16x16 first on a tie, 16x16x16
 * where none is listed (the emulations'). */
static void fragment_of(const uint32_t (*shapes)[3], int nshapes, bool fm_divides_32, uint32_t f[3]) {
  f[0] = f[1] = f[2] = 16;
  uint64_t best = 0;
  for (int i = 0; i < nshapes; i++) {
    const uint32_t *s = shapes[i];
    uint64_t v = (uint64_t)s[0] * s[1] * s[2];
    if (s[0] % 8 || s[1] % 8 || s[2] % 8 || (fm_divides_32 && 32 % s[0]) || !v || v > 4096) continue;
    if (v > best || (v == best && s[0] == 16 && s[1] == 16)) {
      best = v;
      memcpy(f, s, 3 * sizeof *f);
    }
  }
}

void nxvk_coopmat_fragment(const nxvk_device_info *d, bool fm_divides_32, uint32_t f[3]) {
  fragment_of((const uint32_t(*)[3])d->coop_f16_shapes, d->coop_f16_nshapes, fm_divides_32, f);
}

/* dot's bf16 fragment: the same rule on the device's bf16 x bf16 + f32
 * configurations (VK_KHR_cooperative_matrix's list), 16x16x16 where none is
 * listed (the emulation's) */
void nxvk_coopmat_fragment_bf16(const nxvk_device_info *d, uint32_t f[3]) {
  int n = d->coop_bf16_nshapes < 0 ? 0 : d->coop_bf16_nshapes > 8 ? 8 : d->coop_bf16_nshapes;
  fragment_of((const uint32_t(*)[3])d->coop_bf16_shapes, n, false, f);
}

static const char *coopmat_layout_check(const nxvk_device_info *d, const coopmat_kernel *k, char *buf, size_t len);

/* The default layouts, best first (bench/NOTES.md, measured on an H100):
 * subgroups, each subgroup's tile of C (in elements: FR = TM / FM, FC =
 * TN / FN on the device's fragment), BK, stages, prefetch, regrouping; the
 * first whose shared memory, invocations and loads the device holds is
 * taken.  128 x 256 blocks on 2 x 4 subgroups with one shared stage (27
 * KiB) beat 128 x 128 on 2 x 2 with two (37 KiB) by 3-6% at 4096², 8192²
 * and 4096x14336x512 (157 / 176 / 178 against 152 / 169 / 169 TFLOPS);
 * 256 x 128 the same way did not (148 / 165 / 168).  As KHR kernels f16
 * and bf16 take 2 x 4 too (f16 270 / 305 / 258 TFLOPS against 4 x 4
 * subgroups of 32 x 64's 264 / 289 / 253, once its results are rounded by
 * the driver's conversions: bench/NOTES.md). */
static const struct {
  uint32_t wm, wn, tm, tn, bk, st, pf, gm;
} coopmat_defaults[] = {
    {2, 4, 64, 64, 32, 1, 1, 0},
    {2, 2, 64, 64, 32, 2, 1, 0},
};

static uint32_t coopmat_bm(const coopmat_kernel *k) { return k->wm * k->fr * k->fm; }
static uint32_t coopmat_bn(const coopmat_kernel *k) { return k->wn * k->fc * k->fn; }

/* The layout for an m x n product (m = n = 0: any) of f16 (or f32) or, bf16
 * true, of bf16 inputs (its fragment from the bf16 list): a forced one
 * (NXVK_DOT_COOPMAT*), else of the defaults the device holds the first,
 * unless a later one pads m x n to fewer elements (n up to 128 on 128 x 128
 * blocks rather than 128 x 256: half the blocks' work and no B copy where n
 * is a multiple of 128). */
static coopmat_kernel coopmat_pick(const nxvk_ctx *c, bool bf16, uint64_t m, uint64_t n) {
  const nxvk_tuning *tu = c->tuning;
  const uint32_t *t = tu->dot_coopmat;
  coopmat_kernel k = {0}, best = {0};
  uint64_t best_area = 0;
  bool have = false;
  uint32_t f[3];
  if (bf16) nxvk_coopmat_fragment_bf16(&c->info, f);
  else nxvk_coopmat_fragment(&c->info, false, f);
  size_t nd = sizeof coopmat_defaults / sizeof *coopmat_defaults;
  for (size_t i = 0; i < nd; i++) {
    k = (coopmat_kernel){coopmat_defaults[i].wm, coopmat_defaults[i].wn, 0, 0, coopmat_defaults[i].bk, f[0], f[1], f[2],
                         coopmat_defaults[i].st, coopmat_defaults[i].pf, coopmat_defaults[i].gm, 0, tu->dot_coopmat_emu, 0, bf16, false};
    k.fr = coopmat_defaults[i].tm / k.fm ? coopmat_defaults[i].tm / k.fm : 1;
    k.fc = coopmat_defaults[i].tn / k.fn ? coopmat_defaults[i].tn / k.fn : 1;
    if (k.bk % k.fk) k.bk = k.fk;
    k.khr = !k.emu && nxvk_coopmat_khr(c, bf16);
    /* KHR kernels load two steps ahead: on an H100 at 4096^2 / 8192^2 /
     * 4096x14336x512 214 / 272 / 257 TFLOPS against 215 / 254 / 250 one
     * step ahead (bench/NOTES.md, KHR cooperative matrices) */
    if (k.khr) k.pf = 2;
    if (t[0]) { /* NXVK_DOT_COOPMAT: that layout, two stages, one step ahead, unless told */
      k.wm = t[0], k.wn = t[1], k.fr = t[2], k.fc = t[3], k.bk = t[4];
      if (t[5]) k.fm = t[5], k.fn = t[6], k.fk = t[7];
      k.st = 2, k.pf = 1, k.gm = 0;
    }
    if (tu->dot_coopmat_stages) k.st = tu->dot_coopmat_stages;
    if (tu->dot_coopmat_prefetch) k.pf = tu->dot_coopmat_prefetch;
    if (tu->dot_coopmat_group) k.gm = tu->dot_coopmat_group;
    if (tu->dot_coopmat_order) k.ord = tu->dot_coopmat_order - 1;
    k.dg = tu->dot_coopmat_diag;
    if (t[0]) return k;
    char buf[200];
    if (coopmat_layout_check(&c->info, &k, buf, sizeof buf)) continue;
    uint64_t bm = coopmat_bm(&k), bn = coopmat_bn(&k);
    uint64_t area = (m + bm - 1) / bm * bm * ((n + bn - 1) / bn * bn);
    if (!have || area < best_area) best = k, best_area = area, have = true;
    if (!m || !n) break;
  }
  return have ? best : k;
}
static uint32_t coopmat_threads(const coopmat_kernel *k) { return k->wm * k->wn * 32; }
/* ST stages of A (BM rows of BK halves + 8) and B (BK rows of BN + 8), or
 * the f32 scratch of FM x FN per subgroup where that is more */
static uint64_t coopmat_shared(const coopmat_kernel *k) {
  uint64_t stages = 2ull * k->st * ((uint64_t)coopmat_bm(k) * (k->bk + 8) + (uint64_t)k->bk * (coopmat_bn(k) + 8));
  uint64_t scratch = (uint64_t)k->wm * k->wn * k->fm * k->fn * 4;
  return stages > scratch ? stages : scratch;
}

/* Why layout k cannot run here, or NULL: the shader's divisibility rules
 * (16-byte loads spread evenly over the invocations), the device's limits
 * and its fragment shapes. */
static const char *coopmat_layout_check(const nxvk_device_info *d, const coopmat_kernel *k, char *buf, size_t len) {
  uint32_t nt = coopmat_threads(k), bm = coopmat_bm(k), bn = coopmat_bn(k);
  bool listed = false;
  int ns = k->bf16 ? d->coop_bf16_nshapes : d->coop_f16_nshapes;
  for (int i = 0; i < ns && i < 8; i++) {
    const uint32_t *s = k->bf16 ? d->coop_bf16_shapes[i] : d->coop_f16_shapes[i];
    listed |= s[0] == k->fm && s[1] == k->fn && s[2] == k->fk;
  }
  if (!k->wm || !k->wn || !k->fr || !k->fc || k->fr > 8 || k->fc > 8 || k->wm * k->wn > 32)
    snprintf(buf, len, "WM x WN from 1 to 32 subgroups, FR and FC from 1 to 8");
  else if (!listed && !k->emu)
    snprintf(buf, len, "%ux%ux%u is not one of %.64s's %s x %s + f32 configurations", k->fm, k->fn, k->fk, d->name,
             k->bf16 ? "bf16" : "f16", k->bf16 ? "bf16" : "f16");
  else if (k->fm % 8 || k->fn % 8 || k->fk % 8)
    snprintf(buf, len, "fragment sides must be multiples of 8");
  else if (k->ord == 3 && k->bk % (2 * k->fk))
    snprintf(buf, len, "NXVK_DOT_COOPMAT_ORDER=3 needs BK a multiple of 2 FK = %u", 2 * k->fk);
  else if (k->emu && k->dg)
    snprintf(buf, len, "the diagnostics (NXVK_DOT_COOPMAT_DIAG) time tensor cores, not the emulation");
  else if (k->emu && (k->fm * k->fn) % 32)
    snprintf(buf, len, "the emulation needs FM x FN a multiple of 32");
  else if (!k->bk || k->bk % k->fk || k->bk > 256)
    snprintf(buf, len, "BK must be a multiple of FK = %u up to 256", k->fk);
  else if ((bm * k->bk / 8) % nt || (k->bk * bn / 8) % nt)
    snprintf(buf, len, "the %u invocations must split the %u x %u and %u x %u tiles' 16-byte loads evenly", nt, bm,
             k->bk, k->bk, bn);
  else if (d->max_workgroup_invocations < nt || d->max_workgroup_size[0] < nt)
    snprintf(buf, len, "%u invocations a workgroup are too many", nt);
  else if (d->max_shared_memory < coopmat_shared(k))
    snprintf(buf, len, "%llu bytes of shared memory are too many (%u)", (unsigned long long)coopmat_shared(k),
             d->max_shared_memory);
  else
    return NULL;
  return buf;
}

/* What coopmat needs of the device for these inputs and this result, or NULL. */
static const char *coopmat_unsupported(const nxvk_ctx *c, nxvk_dtype in, nxvk_dtype out, uint64_t m, uint64_t n,
                                       char *buf, size_t len) {
  const nxvk_device_info *d = &c->info;
  bool bf16 = in == NXVK_BF16;
  coopmat_kernel k = coopmat_pick(c, bf16, m, n);
  bool emu = k.emu; /* the emulation needs no tensor cores, subgroups or f16 arithmetic */
  /* bf16: VK_KHR_cooperative_matrix with bf16 (the NV kernel's SPIR-V
   * rewritten, spirv_khr.c), no NV extension needed */
  return bf16 && !emu && !d->coopmat_bf16_f32
             ? "no bf16 x bf16 -> f32 subgroup configuration (VK_KHR_cooperative_matrix and VK_KHR_shader_bfloat16 "
               "with shaderBFloat16CooperativeMatrix, and vulkanMemoryModel)"
         : !bf16 && !emu && !d->coop_matrix_nv && !d->coop_matrix_khr
             ? "no VK_NV_cooperative_matrix or VK_KHR_cooperative_matrix"
         : !bf16 && !emu && !d->f16 ? "no shaderFloat16"
         : !bf16 && !emu && !d->coopmat_f16_f32 ? "no f16 x f16 -> f32 subgroup configuration (or no vulkanMemoryModel)"
         : !emu && d->subgroup_size != 32 ? "subgroups are not 32 wide"
         : (in == NXVK_F16 || in == NXVK_BF16) && out == in && !(d->storage_16bit && d->int16)
             ? "f16 and bf16 results need storageBuffer16BitAccess and shaderInt16"
             : coopmat_layout_check(d, &k, buf, len);
}

int nxvk_dot_supported(nxvk_ctx *c, const nxvk_op *op, const nxvk_attrs *a, const nxvk_meta *in,
                       int nin) {
  (void)op;
  /* f16 bf16 i32 i64 have one kernel (naive: f32 sums / exact integer sums);
   * the tuned variants are f32 and f64 kernels */
  bool tuned_dtype = in[0].dtype == NXVK_F32 || in[0].dtype == NXVK_F64;
  bool half = in[0].dtype == NXVK_F16 || in[0].dtype == NXVK_BF16;
  bool skinny = (a->set & NXVK_ATTR_VARIANT) && strcmp(a->variant, "skinny") == 0;
  if (!tuned_dtype && !(half && (is_coopmat(a) || skinny)) && (a->set & NXVK_ATTR_VARIANT) &&
      strcmp(a->variant, "naive") != 0 && strcmp(a->variant, "tiled") != 0)
    return nxvk_seterr(NXVK_E_UNSUPPORTED_DTYPE,
                       "dot: variant %s computes f32 and f64; %s takes the default (tiled, here naive) kernel",
                       a->variant, nxvk_dtype_name(in[0].dtype));
  if (!is_coopmat(a)) return NXVK_OK;
  /* f32 (rounded to f16 by f16_pack), f16 and bf16 (read as they are); bf16
   * runs on VK_KHR_cooperative_matrix (the NV kernel's SPIR-V rewritten:
   * Debian 12's glslang 12 knows neither GL_KHR_cooperative_matrix nor
   * bfloat16), or on the emulation */
  for (int i = 0; i < nin; i++)
    if (in[i].dtype != NXVK_F32 && in[i].dtype != NXVK_F16 && in[i].dtype != NXVK_BF16)
      return nxvk_seterr(NXVK_E_UNSUPPORTED_DTYPE,
                         "dot: variant coopmat takes f32 (rounded to f16, summed in f32), f16 and bf16, not %s",
                         nxvk_dtype_name(in[i].dtype));
  nxvk_dtype out = in[0].dtype;
  if (a->set & NXVK_ATTR_DTYPE) out = a->dtype;
  char buf[200];
  int ra = in[0].shape.rank, rb = nin > 1 ? in[1].shape.rank : 0; /* m x n for the layout rule (0: unknown) */
  uint64_t m = ra >= 2 ? (uint64_t)in[0].shape.dim[ra - 2] : 0, n = rb >= 2 ? (uint64_t)in[1].shape.dim[rb - 1] : 0;
  const char *why = coopmat_unsupported(c, in[0].dtype, out, m, n, buf, sizeof buf);
  if (why)
    return nxvk_seterr(NXVK_E_UNSUPPORTED, "dot: variant coopmat is not supported on %s: %s", c->info.name, why);
  return NXVK_OK;
}

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
      return nxvk_seterr(NXVK_E_BAD_ATTR, "dot: variant: unknown '%s' (tiled vec vec1 regtile naive coopmat skinny)",
                         a->variant);
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
  if (a->set & NXVK_ATTR_DTYPE) { /* f16 / bf16 sums in f32, kept in f32 on request */
    bool half = in[0].dtype == NXVK_F16 || in[0].dtype == NXVK_BF16;
    if (a->dtype != in[0].dtype && !(half && a->dtype == NXVK_F32))
      return nxvk_seterr(NXVK_E_BAD_ATTR,
                         "dot: attribute \"dtype\": %s inputs give %s%s, not %s (as_type the result instead)",
                         nxvk_dtype_name(in[0].dtype), nxvk_dtype_name(in[0].dtype), half ? " or f32" : "",
                         nxvk_dtype_name(a->dtype));
    out->dtype = a->dtype;
  }
  out->shape.rank = r;
  if (r == 3) out->shape.dim[0] = x->dim[0];
  out->shape.dim[r - 2] = x->dim[r - 2];
  out->shape.dim[r - 1] = y->dim[r - 1];
  (void)op;
  return NXVK_OK;
}

/* Tile configuration {BM, BN, BK, TM, TN} for the tiled kernel, from the
 * device: large register tiles on GPUs, small ones on CPU devices (lavapipe
 * runs workgroups as SIMD loops, where big tiles only add spills), each
 * checked against the device's shared memory and workgroup limits.
 * NXVK_DOT_TILES="BM,BN,BK,TM,TN" overrides it for tuning runs. */
static void tile_config(nxvk_ctx *c, nxvk_dtype dt, uint32_t cfg[5]) {
  static const uint32_t gpu_f32[5] = {128, 128, 16, 8, 8};
  static const uint32_t gpu_f64[5] = {64, 64, 16, 4, 4};
  static const uint32_t small[5] = {64, 64, 16, 4, 4};
  static const uint32_t tiny[5] = {32, 32, 8, 2, 2};
  bool cpu = strcmp(c->info.type, "cpu") == 0;
  const uint32_t *want = cpu ? small : (dt == NXVK_F64 ? gpu_f64 : gpu_f32);
  memcpy(cfg, want, 5 * sizeof *cfg);
  if (c->tuning->dot_tiles[3]) memcpy(cfg, c->tuning->dot_tiles, 5 * sizeof *cfg);
  for (int attempt = 0; attempt < 3; attempt++) {
    uint32_t wg = (cfg[0] / cfg[3]) * (cfg[1] / cfg[4]);
    uint64_t shared = (uint64_t)cfg[2] * (cfg[0] + 1 + cfg[1]) * nxvk_dtype_size(dt);
    if (wg <= c->info.max_workgroup_invocations && wg <= c->info.max_workgroup_size[0] &&
        shared <= c->info.max_shared_memory)
      return;
    memcpy(cfg, attempt == 0 ? small : tiny, 5 * sizeof *cfg);
  }
}

/* Shared memory of the vec kernel with RB x CB blocks and BK, on a grid of
 * tx x 16 invocations (dot_vec.comp). */
static uint64_t vec_shared_bytes(const uint32_t cfg[3], nxvk_dtype dt, uint32_t tx) {
  uint32_t q = dt == NXVK_F64 ? 2 : 4;
  return 2ull * cfg[2] * ((16ull * cfg[0] + 1) + (uint64_t)tx * cfg[1]) * q * nxvk_dtype_size(dt);
}

/* Forced tiles must suit their kernel on this device for every dtype it
 * runs (the shared-memory checks take f64's 8 bytes where it has f64). */
int nxvk_dot_tuning_check(const nxvk_ctx *c, const nxvk_tuning *t) {
  const nxvk_device_info *d = &c->info;
  uint64_t esz = d->f64 ? 8 : 4, shared;
  uint32_t max_wg = nxvk_max_workgroup_x(d);
  char why[200] = "";
  const uint32_t *v = t->dot_tiles;
  if (v[0] || v[1] || v[2] || v[3] || v[4]) {
    uint64_t wg = v[3] && v[4] ? (uint64_t)(v[0] / v[3]) * (v[1] / v[4]) : 0;
    shared = (uint64_t)v[2] * (v[0] + 1 + v[1]) * esz;
    if (v[3] < 1 || v[3] > 8 || v[4] < 1 || v[4] > 8)
      snprintf(why, sizeof why, "TM and TN run from 1 to 8 (each invocation keeps TM x TN sums in registers)");
    else if (!v[0] || !v[1] || v[0] % v[3] || v[1] % v[4])
      snprintf(why, sizeof why, "BM and BN must be nonzero multiples of TM and TN");
    else if (!v[2])
      snprintf(why, sizeof why, "BK must be at least 1");
    else if (wg > max_wg)
      snprintf(why, sizeof why, "(BM/TM) x (BN/TN) = %llu invocations a workgroup; %.64s takes at most %u",
               (unsigned long long)wg, d->name, max_wg);
    else if (shared > d->max_shared_memory)
      snprintf(why, sizeof why, "the tiles take %llu bytes of shared memory; %.64s has %u",
               (unsigned long long)shared, d->name, d->max_shared_memory);
    if (*why)
      return nxvk_seterr(NXVK_E_BAD_REQUEST, "NXVK_DOT_TILES=%u,%u,%u,%u,%u: %s", v[0], v[1], v[2], v[3], v[4], why);
  }
  v = t->dot_coopmat;
  if (v[0] || v[1] || v[2] || v[3] || v[4] || t->dot_coopmat_stages || t->dot_coopmat_prefetch ||
      t->dot_coopmat_group || t->dot_coopmat_order || t->dot_coopmat_emu || t->dot_coopmat_diag) {
    /* a layout for coopmat: checked here so that a sweep fails at once, not per product */
    coopmat_kernel k = coopmat_pick(c, false, 0, 0); /* c->tuning is t here (tuning.c); f16's fragments */
    char buf[200];
    const char *no = !d->coopmat_f16_f32 && !k.emu
                         ? "this device has no f16 x f16 -> f32 cooperative matrices (nxvk info)"
                         : coopmat_layout_check(d, &k, buf, sizeof buf);
    if (no && !(v[0] || v[1] || v[2] || v[3] || v[4])) {
      /* the knobs that are set, by name (the refusal starts with the first) */
      const struct { const char *name; uint32_t value; bool set; } knobs[] = {
          {"STAGES", t->dot_coopmat_stages, t->dot_coopmat_stages != 0},
          {"PREFETCH", t->dot_coopmat_prefetch, t->dot_coopmat_prefetch != 0},
          {"GROUP", t->dot_coopmat_group, t->dot_coopmat_group != 0},
          {"ORDER", t->dot_coopmat_order ? t->dot_coopmat_order - 1 : 0, t->dot_coopmat_order != 0},
          {"EMU", (uint32_t)t->dot_coopmat_emu, t->dot_coopmat_emu},
          {"DIAG", t->dot_coopmat_diag, t->dot_coopmat_diag != 0},
      };
      char set[240] = "";
      size_t at = 0;
      for (size_t i = 0; i < sizeof knobs / sizeof knobs[0] && at < sizeof set; i++)
        if (knobs[i].set)
          at += (size_t)snprintf(set + at, sizeof set - at, "%sNXVK_DOT_COOPMAT_%s=%u", at ? ", " : "",
                                 knobs[i].name, knobs[i].value);
      return nxvk_seterr(NXVK_E_BAD_REQUEST, "%s: %s", set, no);
    }
    if (no) {
      if (v[5])
        return nxvk_seterr(NXVK_E_BAD_REQUEST, "NXVK_DOT_COOPMAT=%u,%u,%u,%u,%u,%u,%u,%u: %s", v[0], v[1], v[2], v[3], v[4],
                           v[5], v[6], v[7], no);
      return nxvk_seterr(NXVK_E_BAD_REQUEST, "NXVK_DOT_COOPMAT=%u,%u,%u,%u,%u: %s", v[0], v[1], v[2], v[3], v[4], no);
    }
  }
  v = t->dot_vec;
  if (v[0] || v[1] || v[2] || v[3]) {
    shared = vec_shared_bytes(v, NXVK_F32, t->dot_nt == 128 ? 8 : 16); /* the grid's width */
    if (v[0] < 1 || v[0] > 8 || v[1] < 1 || v[1] > 8)
      snprintf(why, sizeof why, "RB and CB run from 1 to 8 (f64 takes them up to 4, else its rule)");
    else if (v[2] < 4 || v[2] > 64 || v[2] % 4)
      snprintf(why, sizeof why, "BK is a multiple of 4 from 4 to 64");
    else if (v[3] < 1 || v[3] > 64)
      snprintf(why, sizeof why, "S runs from 1 to 64");
    else if (shared > d->max_shared_memory)
      snprintf(why, sizeof why, "the tiles take %llu bytes of shared memory; %.64s has %u",
               (unsigned long long)shared, d->name, d->max_shared_memory);
    if (*why) return nxvk_seterr(NXVK_E_BAD_REQUEST, "NXVK_DOT_VEC=%u,%u,%u,%u: %s", v[0], v[1], v[2], v[3], why);
  }
  return NXVK_OK;
}

/* {RB, CB, BK, S, KC, grid width} for the vec kernel.  Without split K: the largest
 * tile (RB = CB = 2: 128 x 128 for f32, 64 x 64 for f64) that still gives
 * every SM or CU a workgroup; for smaller products 64 x 128 while that
 * still gives half of them one, else 64 x 64.  Devices that do not report
 * their unit count are taken to have 32.
 * Split K, when 128 x 128 tiles leave units idle and K is long: the k range
 * is cut into S chunks of KC (at least 256, a multiple of BK) and the tile
 * and S are those whose workgroups fill one wave of the GPU best: all of
 * them resident at once (a second, partial wave costs as much as a full
 * one), the larger tile on a near tie (within 10%: the larger tile's
 * unsplit kernel runs the batch form, which the smaller one's registers
 * make overflow the wave).  Residency per unit is what the registers allow:
 * on NVIDIA (65536 per SM; the driver reports 123, 80 and 48 per invocation
 * for the three split f32 kernels, NXVK_KERNEL_STATS) 2, 3 and 5 workgroups
 * of 256 (f64's 64 x 32 split kernel, at 116, holds 2: the table is f32's);
 * elsewhere 1 is assumed.  Sweeps of every tile and S agreed with this wave
 * count cell for cell (bench/NOTES.md, split K).  The scratch of S partial
 * products must fit one storage buffer.  The split form is its own kernel
 * (dot_vec_split_<dtype>, -DSPLITK): built from one source with the unsplit
 * kernel, the unsplit one ran 17% slower; some f32 products run the batch
 * form instead (split_form).
 * NXVK_DOT_VEC="RB,CB,BK[,S]" overrides it for tuning runs. */
static uint32_t round_up(uint32_t v, uint32_t q) { return (v + q - 1) / q * q; }

#define SPLIT_MIN_K 256u
#define SPLIT_MAX 8u
static void vec_config(nxvk_ctx *c, nxvk_dtype dt, uint32_t M, uint32_t N, uint32_t K,
                       uint32_t batch, uint32_t cfg[7]) {
  static const uint32_t tiles[][3] = {{2, 2, 1}, {1, 2, 2}, {1, 1, 1}}; /* RB, CB, units divisor */
  static const uint32_t nvidia_resident[] = {2, 3, 5};                 /* per tile, see above */
  uint32_t q = dt == NXVK_F64 ? 2 : 4, bk = 8;
  /* f64 takes k steps of 16 where shared memory allows: half the barriers
   * per DFMA, and its tiles leave room (f32's do not: twice the shared
   * memory halves its residency) */
  const uint32_t f64_wide[3] = {2, 2, 16};
  if (dt == NXVK_F64 && vec_shared_bytes(f64_wide, dt, 16) <= c->info.max_shared_memory) bk = 16;
  uint32_t units = nxvk_compute_units(&c->info);
  bool nvidia = c->info.vendor_id == 0x10de;
  uint64_t groups[3];
  for (size_t t = 0; t < NXVK_ARRAY_LEN(tiles); t++) {
    uint64_t bm = 16ull * q * tiles[t][0], bn = 16ull * q * tiles[t][1];
    groups[t] = ((M + bm - 1) / bm) * ((N + bn - 1) / bn) * batch;
  }
  size_t i = 0;
  while (i + 1 < NXVK_ARRAY_LEN(tiles) && groups[i] * tiles[i][2] < units) i++;
  uint32_t split = 1;
  if (groups[0] < units && K >= 2 * SPLIT_MIN_K) {
    uint32_t max_split = K / SPLIT_MIN_K < SPLIT_MAX ? K / SPLIT_MIN_K : SPLIT_MAX;
    double best = 0;
    for (size_t t = 0; t < NXVK_ARRAY_LEN(tiles); t++) {
      uint64_t slots = (uint64_t)units * (nvidia ? nvidia_resident[t] : 1);
      for (uint32_t sk = 1; sk <= max_split && groups[t] * sk <= slots; sk++) {
        double fill = (double)(groups[t] * sk) / (double)slots;
        if (fill > best * 1.1) { /* a near tie keeps the larger tile */
          best = fill;
          i = t;
          split = sk;
        }
      }
    }
  }
  cfg[0] = tiles[i][0];
  cfg[1] = tiles[i][1];
  cfg[2] = bk;
  /* f64 without split K runs on the 8 x 16 grid (dot_vec128_f64) with twice
   * the column blocks: the same tile, 4 x 8 doubles per invocation instead
   * of 4 x 4, k steps of 8: more DFMA per shared load, in workgroups small
   * enough that three fit an SM.  Only when the product is large enough for
   * the largest tile: small products need the 16 x 16 grid's smaller tiles
   * to fill the GPU.
   * NXVK_DOT_NT=256 or 128 picks the grid for tuning runs. */
  uint32_t nt = c->tuning->dot_nt;
  const uint32_t *v = c->tuning->dot_vec; /* all 0 when unset: fails v[0] >= 1 */
  /* f32 on NVIDIA, products of whole 128 x 128 tiles and k steps of 8 that
   * take the largest tile unsplit: the 8 x 16 grid's 2,4,8 on the aligned
   * kernel with FRAG and XB (dot_vec.comp), 0.900 / 0.879 of cuBLAS at
   * 2048^2 / 4096^2 on an H100 against 0.854 / 0.829 for the 16 x 16 grid's
   * 2,2,8, and the next tile stored before k step 6 (XS, +2.5%; bench/NOTES.md,
   * "f32 at 0.9, second pass"); unless NXVK_DOT_ALIGNED, _NT or _VEC is set */
  bool rule = dt == NXVK_F32 && nvidia && split == 1 && i == 0 && !c->tuning->dot_aligned_set && !nt && !v[0] &&
              M % 128 == 0 && N % 128 == 0 && K % 8 == 0 && K > 0 && c->info.max_workgroup_invocations >= 128;
  bool narrow = nt ? nt == 128 : (dt == NXVK_F64 && split == 1 && i == 0) || rule; /* f32: the rule or forced */
  uint32_t max_blocks = dt == NXVK_F64 ? 4 : 8; /* f64: the shader's literal expansion covers 4 x 4 */
  bool forced = false;
  if (v[0] >= 1 && v[0] <= max_blocks && v[1] >= 1 && v[1] <= max_blocks && v[2] >= q && v[2] <= 64 &&
      v[2] % q == 0 && v[3] >= 1 && v[3] <= 64) {
    uint32_t w[3] = {v[0], v[1], v[2]};
    if (vec_shared_bytes(w, dt, narrow ? 8 : 16) <= c->info.max_shared_memory) {
      memcpy(cfg, w, sizeof w);
      split = v[3];
      forced = true;
    }
  } else if (narrow) {
    cfg[1] *= 2;
    cfg[2] = 8;
  }
  if (narrow && (split > 1 || cfg[1] > max_blocks || c->info.max_workgroup_invocations < 128 ||
                 vec_shared_bytes(cfg, dt, 8) > c->info.max_shared_memory)) {
    narrow = false; /* the narrow grid has no split form */
    rule = false;
    if (!forced) {
      cfg[1] = tiles[i][1];
      cfg[2] = bk;
    }
  }
  cfg[5] = narrow ? 8 : 16;
  cfg[6] = rule;
  /* chunks of whole BK steps; S recomputed so that none is empty */
  uint32_t kc = split > 1 ? (K + split - 1) / split : K;
  kc = round_up(kc, cfg[2]);
  if (kc == 0) kc = cfg[2];
  split = K ? (K + kc - 1) / kc : 1;
  if (split > 1 && (uint64_t)split * batch * M * N * nxvk_dtype_size(dt) > c->info.max_storage_buffer_range) {
    split = 1;
    kc = K;
  }
  cfg[3] = split;
  cfg[4] = kc;
}

/* f64 vec: invocations along a 32-lane group's columns (dot_vec.comp, LW):
 * 2, so that a group shares one k row of A across the grid's 16 rows and
 * its reads of B are near-broadcasts (18% faster than 16, the f32 layout;
 * 4 and 8 gained nothing); at most the grid's width. */
#define VEC_LANES_F64 2u

/* One pass of a 1-D kernel (meta: 5 words) from src into a scratch of
 * `words` 4-byte words it creates, one invocation per word; the scratch
 * lives as long as the recording (its reference is the caller's to drop). */
static int copy_pass(nxvk_rec *r, const char *kernel, nxvk_buffer *src, const uint32_t meta[5],
                     uint64_t words, nxvk_buffer **out) {
  int rc = nxvk_buffer_create(nxvk_rec_ctx(r), words * 4, false, out);
  if (rc != NXVK_OK) return rc;
  uint32_t spec[1] = {NXVK_WG};
  nxvk_buffer *bufs[2] = {src, *out};
  return nxvk_dispatch_1d(r, kernel, spec, 1, meta, 5, bufs, 2, words);
}

/* The coopmat kernel's name: the embedded dot_coopmat_f32 / _f16 for the
 * shader's default layout (coopmat_embedded) on f16 operands, else a
 * run-time kernel (rtkernel.c parses the name back into the shader's
 * defines); its result token: f32 / f16 for f16 operands, b32 / b16 (f32 or
 * bf16 results) for bf16 ones (every bf16 kernel is compiled at run time).
 * f16 results where the driver's conversions round them (hw_f16) take the
 * run-time kernel too: the embedded one rounds in software. */
static void coopmat_name(const coopmat_kernel *k, bool out16, bool hw_f16, char *name, size_t len) {
  const coopmat_kernel *e = &coopmat_embedded;
  const char *res = k->bf16 ? (out16 ? "b16" : "b32") : k->khr ? (out16 ? "k16" : "k32") : out16 ? "f16" : "f32";
  if (k->wm == e->wm && k->wn == e->wn && k->fr == e->fr && k->fc == e->fc && k->bk == e->bk && k->fm == e->fm &&
      k->fn == e->fn && k->fk == e->fk && k->st == e->st && k->pf == e->pf && k->gm == e->gm && k->ord == e->ord &&
      !k->emu && !k->dg && !k->bf16 && !k->khr && !(out16 && hw_f16))
    snprintf(name, len, "dot_coopmat_%s", res);
  else if (k->dg)
    snprintf(name, len, "dotcm_%ux%u_%ux%u_k%u_%ux%ux%u_s%u_p%u_g%u_o%u_%s_dg%u", k->wm, k->wn, k->fr, k->fc, k->bk,
             k->fm, k->fn, k->fk, k->st, k->pf, k->gm, k->ord, res, k->dg);
  else
    snprintf(name, len, "dotcm_%ux%u_%ux%u_k%u_%ux%ux%u_s%u_p%u_g%u_o%u_%s%s", k->wm, k->wn, k->fr, k->fc, k->bk, k->fm,
             k->fn, k->fk, k->st, k->pf, k->gm, k->ord, res, k->emu ? "_emu" : "");
}

bool nxvk_dot_coopmat_padding(nxvk_ctx *c, uint32_t m, uint32_t k, uint32_t n, uint32_t padded[3]) {
  char buf[200];
  if (coopmat_unsupported(c, NXVK_F32, NXVK_F32, m, n, buf, sizeof buf)) return false;
  coopmat_kernel ck = coopmat_pick(c, false, m, n);
  padded[0] = round_up(m, coopmat_bm(&ck));
  padded[1] = k ? round_up(k, ck.bk) : ck.bk;
  padded[2] = round_up(n, coopmat_bn(&ck));
  return true;
}

/* coopmat: f16 or bf16 A and B as they are where their shapes are whole
 * tiles (A: M a multiple of BM, B: N a multiple of BN, both: K a multiple of
 * BK), else a zero-padded 16-bit copy (f16_pack: f32 rounded once to f16;
 * f16_pad: f16 or bf16 copied on the bits, zeros of either being 0) in its
 * own dispatch before the kernel; the copies live as long as the recording.
 * C is f32, or out_dt f16 / bf16 (each f32 sum rounded once). */
static int dot_coopmat(nxvk_rec *r, const coopmat_kernel *k, nxvk_dtype dtype, nxvk_buffer *a, nxvk_buffer *b,
                       nxvk_buffer *out, nxvk_dtype out_dt, uint32_t M, uint32_t N, uint32_t K, uint32_t batch) {
  nxvk_ctx *c = nxvk_rec_ctx(r);
  if (M == 0 || N == 0 || batch == 0) return NXVK_OK;
  uint32_t bm = coopmat_bm(k), bn = coopmat_bn(k);
  uint64_t Mp = round_up(M, bm), Np = round_up(N, bn), Kp = K ? round_up(K, k->bk) : k->bk;
  uint64_t abytes = 2 * batch * Mp * Kp, bbytes = 2 * batch * Kp * Np;
  uint64_t gx = Np / bn, gy = Mp / bm;
  bool half = dtype == NXVK_F16 || dtype == NXVK_BF16, out16 = out_dt == NXVK_F16 || out_dt == NXVK_BF16;
  bool a_direct = half && Mp == M && Kp == K, b_direct = half && Np == N && Kp == K;
  if ((!a_direct && abytes > c->info.max_storage_buffer_range) ||
      (!b_direct && bbytes > c->info.max_storage_buffer_range) || Mp * Kp > UINT32_MAX / 2 ||
      Kp * Np > UINT32_MAX / 2)
    return nxvk_seterr(NXVK_E_TOO_LARGE,
                       "dot: variant coopmat: the 16-bit operands take %llu and %llu bytes (limit %llu)",
                       (unsigned long long)abytes, (unsigned long long)bbytes,
                       (unsigned long long)c->info.max_storage_buffer_range);
  if (gx > c->info.max_workgroup_count[0])
    return nxvk_seterr(NXVK_E_TOO_LARGE, "dot: variant coopmat: n = %u needs %llu workgroups (limit %u)",
                       N, (unsigned long long)gx, c->info.max_workgroup_count[0]);
  if (gy > c->info.max_workgroup_count[1]) gy = c->info.max_workgroup_count[1];
  nxvk_buffer *a16 = NULL, *b16 = NULL;
  uint32_t ameta[5] = {M, K, (uint32_t)Mp, (uint32_t)Kp, (uint32_t)(abytes / 4)};
  uint32_t bmeta[5] = {K, N, (uint32_t)Kp, (uint32_t)Np, (uint32_t)(bbytes / 4)};
  const char *pack = half ? "f16_pad" : "f16_pack";
  int rc = a_direct ? NXVK_OK : copy_pass(r, pack, a, ameta, abytes / 4, &a16);
  if (rc == NXVK_OK && !b_direct) rc = copy_pass(r, pack, b, bmeta, bbytes / 4, &b16);
  /* split K where the blocks would leave the device's units idle: slots
   * of 8 subgroups a unit (two workgroups of 4: the 64 x 64-per-subgroup
   * kernels' registers hold two on an NVIDIA SM; one of 8; units
   * unreported: 32); of 2 to 8 chunks of at least 8 k steps, the fewest
   * whose waves of workgroups, each wave a chunk's work, take the least
   * time: ceil(groups S / slots) / S (128 blocks on 264 slots: 2 chunks, one
   * wave, where 3 took two); f32 partials, summed in chunk order by dot_ksum */
  uint32_t steps = (uint32_t)(Kp / k->bk), S = 1, KS = 0;
  uint64_t groups = gx * (Mp / bm) * batch, units = nxvk_compute_units(&c->info);
  uint64_t per_unit = k->wm * k->wn >= 8 ? 1 : 8 / (k->wm * k->wn), slots = units * per_unit;
  if (c->tuning->dot_coopmat_split) S = c->tuning->dot_coopmat_split;
  else if (groups < slots && steps >= 16) {
    double best = 1.0; /* one chunk: one wave of the whole k */
    for (uint32_t s = 2; s <= 8 && s <= steps / 8; s++) {
      double t = (double)((groups * s + slots - 1) / slots) / s;
      if (t < best - 1e-9) best = t, S = s;
    }
  }
  if (S > steps) S = steps;
  if (S > 1) {
    KS = (steps + S - 1) / S;
    S = (steps + KS - 1) / KS; /* every chunk nonempty */
  }
  uint64_t part_bytes = (uint64_t)S * batch * M * N * 4;
  if (S > 1 && (part_bytes > c->info.max_storage_buffer_range || (uint64_t)batch * M * N > UINT32_MAX))
    S = 1, KS = 0;
  if (S <= 1) KS = 0;
  nxvk_buffer *part = NULL;
  if (rc == NXVK_OK && KS) rc = nxvk_buffer_create(c, part_bytes, false, &part);
  if (rc == NXVK_OK) {
    uint32_t meta[8] = {M, N, K, batch, (uint32_t)Mp, (uint32_t)Np, (uint32_t)Kp, KS};
    uint32_t spec[1] = {coopmat_threads(k)}; /* fixed in the shader; constant 0 is unused */
    nxvk_buffer *bufs[3] = {a_direct ? a : a16, b_direct ? b : b16, KS ? part : out};
    char name[64];
    coopmat_name(k, out16 && !KS, c->tuning->f16_cvt != 0, name, sizeof name);
    uint64_t gzs = KS ? (uint64_t)batch * S : batch;
    if (gzs > c->info.max_workgroup_count[2]) gzs = c->info.max_workgroup_count[2];
    rc = nxvk_dispatch_grid(r, name, spec, 1, meta, 8, bufs, 3, (uint32_t)gx, (uint32_t)gy, (uint32_t)gzs);
  }
  if (rc == NXVK_OK && KS) {
    uint32_t smeta[3] = {M * N, batch, S}, sspec[1] = {NXVK_WG};
    nxvk_buffer *sbufs[2] = {part, out};
    const char *ksum = out_dt == NXVK_F16    ? "dot_ksum_f32_f16"
                       : out_dt == NXVK_BF16 ? "dot_ksum_f32_bf16"
                                             : "dot_ksum_f32";
    rc = nxvk_dispatch_1d(r, ksum, sspec, 1, smeta, 3, sbufs, 2, (uint64_t)batch * M * N);
  }
  nxvk_buffer_unref(c, part);
  nxvk_buffer_unref(c, a16);
  nxvk_buffer_unref(c, b16);
  return rc;
}

/* The batch form reads A's k chunks in place (dot_vec_strided_f32: rows of
 * K = S * KC elements, S a specialization constant) instead of copying them
 * out, for f32 chunks that tile K exactly when S is a power of two: there
 * it saves the copy's 8-10%, but at other S NVIDIA's compiler makes the
 * row length K * S in the address cost more than the copy does
 * (bench/NOTES.md, split K).  NXVK_DOT_SPLIT=copy (forced) always copies. */
static bool chunks_in_place(nxvk_dtype dt, uint32_t S, bool pad_b, const char *forced) {
  if (strcmp(forced, "copy") == 0) return false;
  return dt == NXVK_F32 && !pad_b && (S & (S - 1)) == 0;
}

/* Which form split K takes: the split kernel, or the batch form: A's k
 * chunks as S matrices per batch (copied out by dot_kchunk, or read in
 * place: chunks_in_place), so that the S partial products run on the
 * unsplit kernel as one batch, which runs faster than the split kernel on
 * the same work.  The copy costs a pass over A (and B where the chunks
 * overrun K), so with the copy: f32, the 128 x 128 tile, chunks of at least
 * 512 that tile K exactly; shorter chunks, smaller tiles and f64 lost to the
 * split kernel.  In place it wins with short chunks too, on the square
 * tiles, whose unsplit kernels hold as many workgroups per SM as the split
 * ones (128 x 128: 2, 64 x 64: 5); the 64 x 128 one holds 2 against 3, and
 * the wave the split rule filled would overflow (bench/NOTES.md, split K).  NXVK_DOT_SPLIT=kernel|batch|copy forces
 * a form for tuning and tests.  The copies must fit one storage buffer (B is
 * copied only to pad it: pad_b, S chunks of KC overrun K). */
enum split_form { SPLIT_KERNEL, SPLIT_BATCH_COPY, SPLIT_BATCH_IN_PLACE };
static enum split_form split_form(nxvk_ctx *c, nxvk_dtype dt, const uint32_t vcfg[6], uint32_t M, uint32_t N,
                                  uint32_t batch, bool pad_b) {
  uint32_t S = vcfg[3], KC = vcfg[4];
  uint64_t size = nxvk_dtype_size(dt), range = c->info.max_storage_buffer_range;
  const char *forced = c->tuning->dot_split; /* "" = the rule */
  enum split_form batch_form = chunks_in_place(dt, S, pad_b, forced) ? SPLIT_BATCH_IN_PLACE : SPLIT_BATCH_COPY;
  if (batch_form == SPLIT_BATCH_COPY && ((uint64_t)batch * S * M * KC * size > range ||
                                         (pad_b && (uint64_t)batch * S * KC * N * size > range)))
    return SPLIT_KERNEL;
  if (*forced) return strcmp(forced, "batch") == 0 || strcmp(forced, "copy") == 0 ? batch_form : SPLIT_KERNEL;
  if (batch_form == SPLIT_BATCH_IN_PLACE) return vcfg[0] == vcfg[1] ? batch_form : SPLIT_KERNEL;
  return dt == NXVK_F32 && vcfg[0] == 2 && vcfg[1] == 2 && KC >= 512 && !pad_b ? batch_form : SPLIT_KERNEL;
}

/* dot_kchunk: rows of row_words words (stacks of `rows` per batch) cut into
 * S chunks of chunk_words, chunk s of every row of a batch made one
 * contiguous matrix, zeros past a row's end: `count` chunk rows in all.  The
 * copy lives as long as the recording. */
static int chunk_copy(nxvk_rec *r, nxvk_buffer *src, uint64_t count, uint32_t rows, uint32_t row_words,
                      uint32_t chunk_words, uint32_t S, nxvk_buffer **out) {
  uint64_t words = count * chunk_words;
  uint32_t meta[5] = {rows, row_words, chunk_words, S, (uint32_t)words};
  return copy_pass(r, "dot_kchunk", src, meta, words, out);
}

/* Matrix-vector and skinny products (dot_skinny.comp): a pass over the
 * large operand, which a tiled kernel's 128 x 128 tiles would mostly pad.
 * N <= 16 ("rows", dot_skinny_n): a workgroup per block of 16 rows of A (8
 * for f64), B read through shared memory a k tile at a time.  Otherwise M <= 16 ("columns", dot_skinny_m): workgroups of 64
 * columns of B, NB = M; K is cut into S chunks of KC (at least 256, whole
 * k lanes) while the column blocks alone would leave the device's units
 * with fewer than 4 workgroups each (units unreported: 32), the S partial
 * blocks summed in chunk order by dot_ksum.  Returns 1 (nothing recorded)
 * where the shape or the device does not suit it. */
#define SKINNY_MAX 16u
#define SKINNY_CW 64u
#define SKINNY_MIN_KC 256u
#define SKINNY_MAX_S 64u
static int dot_skinny(nxvk_rec *r, nxvk_dtype dtype, nxvk_buffer *A, nxvk_buffer *B, nxvk_buffer *C,
                      uint32_t M, uint32_t N, uint32_t K, uint32_t batch) {
  nxvk_ctx *c = nxvk_rec_ctx(r);
  const nxvk_device_info *d = &c->info;
  uint32_t wg = dtype == NXVK_F64 ? 128 : 256; /* the shader's WG */
  uint32_t rb = wg / 32 * 2;                     /* its RB: rows per block of the "rows" form */
  /* the larger of the two forms' shared arrays: the rows form's B tile
   * (16 x (WG + 1)) or its lanes' sums (WG / 32 x 16 x 33), the columns
   * form's 16 x WG */
  uint64_t shared = (uint64_t)SKINNY_MAX * (wg + 1) * nxvk_dtype_size(dtype);
  if ((uint64_t)wg / 32 * SKINNY_MAX * 33 * nxvk_dtype_size(dtype) > shared)
    shared = (uint64_t)wg / 32 * SKINNY_MAX * 33 * nxvk_dtype_size(dtype);
  if ((dtype != NXVK_F32 && dtype != NXVK_F64) || M == 0 || N == 0 || (M > SKINNY_MAX && N > SKINNY_MAX) ||
      d->max_workgroup_invocations < wg || d->max_workgroup_size[0] < wg || d->max_shared_memory < shared ||
      batch > d->max_workgroup_count[2])
    return 1;
  const char *dt = nxvk_dtype_name(dtype);
  char name[32];
  nxvk_buffer *bufs[3] = {A, B, C};
  bool rows = N <= SKINNY_MAX && (M > SKINNY_MAX || N <= M);
  if (rows) {
    uint32_t meta[5] = {M, N, K, batch, 0}, spec[1] = {N};
    uint32_t blocks = (M + rb - 1) / rb;
    uint32_t gx = blocks < d->max_workgroup_count[0] ? blocks : d->max_workgroup_count[0];
    snprintf(name, sizeof name, "dot_skinny_n_%s", dt);
    return nxvk_dispatch_grid(r, name, spec, 1, meta, 5, bufs, 3, gx, 1, batch);
  }
  uint32_t gx = (N + SKINNY_CW - 1) / SKINNY_CW, lanes = wg / SKINNY_CW;
  if (gx > d->max_workgroup_count[0]) return 1;
  uint32_t units = nxvk_compute_units(d);
  uint64_t groups = (uint64_t)gx * batch, want = 4ull * units;
  uint32_t S = 1;
  if (groups < want && K >= 2 * SKINNY_MIN_KC) {
    uint64_t s = (want + groups - 1) / groups, smax = K / SKINNY_MIN_KC;
    if (s > smax) s = smax;
    if (s > SKINNY_MAX_S) s = SKINNY_MAX_S;
    if (s > d->max_workgroup_count[1]) s = d->max_workgroup_count[1];
    S = (uint32_t)s;
  }
  uint32_t KC = S > 1 ? (K + S - 1) / S : K;
  if (S > 1) {
    KC = (KC + lanes - 1) / lanes * lanes;
    S = (K + KC - 1) / KC; /* every chunk nonempty */
  }
  /* lavapipe cuts shader loops short past 65535 iterations (see nxvk_dot_gpu) */
  if (strstr(d->driver_name, "llvmpipe") && KC / lanes > 16384) return 1;
  uint64_t mn = (uint64_t)M * N;
  uint32_t meta[5] = {M, N, K, batch, KC}, spec[1] = {M};
  snprintf(name, sizeof name, "dot_skinny_m_%s", dt);
  if (S == 1) return nxvk_dispatch_grid(r, name, spec, 1, meta, 5, bufs, 3, gx, 1, batch);
  nxvk_buffer *part = NULL;
  int rc = nxvk_buffer_create(c, (uint64_t)S * batch * mn * nxvk_dtype_size(dtype), false, &part);
  if (rc == NXVK_OK) {
    nxvk_buffer *pbufs[3] = {A, B, part};
    rc = nxvk_dispatch_grid(r, name, spec, 1, meta, 5, pbufs, 3, gx, S, batch);
  }
  if (rc == NXVK_OK) {
    uint32_t smeta[3] = {(uint32_t)mn, batch, S}, sspec[1] = {NXVK_WG};
    nxvk_buffer *sbufs[2] = {part, C};
    snprintf(name, sizeof name, "dot_ksum_%s", dt);
    rc = nxvk_dispatch_1d(r, name, sspec, 1, smeta, 3, sbufs, 2, batch * mn);
  }
  nxvk_buffer_unref(c, part);
  return rc;
}

int nxvk_dot_gpu(nxvk_rec *r, const nxvk_op *op, const nxvk_attrs *a, nxvk_tensor *const *in,
                 int nin, nxvk_tensor *out) {
  (void)op;
  (void)nin;
  const nxvk_shape *x = &in[0]->shape, *y = &in[1]->shape;
  int rk = x->rank;
  uint32_t batch = rk == 3 ? (uint32_t)x->dim[0] : 1;
  uint32_t M = (uint32_t)x->dim[rk - 2], K = (uint32_t)x->dim[rk - 1], N = (uint32_t)y->dim[rk - 1];
  nxvk_buffer *bufs[3] = {in[0]->buf, in[1]->buf, out->buf};
  nxvk_dtype dtype = in[0]->dtype;
  const char *dt = nxvk_dtype_name(dtype);
  char name[32];
  const char *variant = (a->set & NXVK_ATTR_VARIANT) ? a->variant : "tiled";
  nxvk_ctx *c = nxvk_rec_ctx(r);
  /* f16 and bf16 on cooperative matrices, also by default where the device
   * has them (bf16: its own bf16 configurations; products with m or n up to
   * 16 keep the default kernel) */
  char why[200];
  if ((dtype == NXVK_F16 || dtype == NXVK_BF16) && strcmp(variant, "tiled") == 0 && M > SKINNY_MAX && N > SKINNY_MAX &&
      !coopmat_unsupported(c, dtype, out->dtype, M, N, why, sizeof why))
    variant = "coopmat";
  /* matrix-vector and skinny products of f32 f16 bf16: dot_mv.c ("tiled" and "skinny") */
  if (strcmp(variant, "tiled") == 0 || strcmp(variant, "skinny") == 0) {
    /* the columns form (m <= 16) on dot_mvc.c first */
    int rc = nxvk_dot_mvc(r, dtype, out->dtype, in[0]->buf, in[1]->buf, out->buf, M, N, K, batch);
    if (rc != 1) return rc;
    rc = nxvk_dot_mv(r, dtype, out->dtype, in[0]->buf, in[1]->buf, out->buf, M, N, K, batch);
    if (rc != 1) return rc;
  }
  /* f16 bf16 i32 i64 otherwise: one kernel, the naive one (nxvk_dot_supported) */
  bool naive = strcmp(variant, "naive") == 0 ||
               (dtype != NXVK_F32 && dtype != NXVK_F64 && strcmp(variant, "coopmat") != 0);
  if (naive) {
    uint32_t meta[4] = {M, N, K, batch}, spec[1] = {NXVK_WG};
    /* dot_naive32_f16: the f32 sums stored as they are ("dtype": "f32") */
    snprintf(name, sizeof name, out->dtype != dtype ? "dot_naive32_%s" : "dot_naive_%s", dt);
    return nxvk_dispatch_1d(r, name, spec, 1, meta, 4, bufs, 3, (uint64_t)out->count);
  }
  if (strcmp(variant, "coopmat") == 0) {
    nxvk_meta metas[2] = {{in[0]->dtype, *x}, {in[1]->dtype, *y}};
    nxvk_attrs ca = *a;
    ca.set |= NXVK_ATTR_VARIANT; /* the default variant may have come here */
    snprintf(ca.variant, sizeof ca.variant, "coopmat");
    int rc = nxvk_dot_supported(c, op, &ca, metas, 2);
    if (rc) return rc;
    coopmat_kernel k = coopmat_pick(c, dtype == NXVK_BF16, M, N);
    return dot_coopmat(r, &k, dtype, in[0]->buf, in[1]->buf, out->buf, out->dtype, M, N, K, batch);
  }
  /* matrix-vector and skinny products: their own kernel ("tiled" and "skinny") */
  if (strcmp(variant, "tiled") == 0 || strcmp(variant, "skinny") == 0) {
    int rc = dot_skinny(r, dtype, in[0]->buf, in[1]->buf, out->buf, M, N, K, batch);
    if (rc != 1) return rc;
    variant = "tiled";
  }
  uint32_t cfg[5];
  tile_config(c, dtype, cfg);
  /* the vector kernel: 256 invocations (128 on f64's narrow grid), tiles from vec_config */
  uint32_t vcfg[7], q = dtype == NXVK_F64 ? 2 : 4;
  vec_config(c, dtype, M, N, K, batch, vcfg);
  uint32_t vtx = vcfg[5], vnt = 16 * vtx;
  bool narrow = vtx != 16;
  uint32_t vbm = 16 * q * vcfg[0], vbn = vtx * q * vcfg[1];
  bool vec_fits = c->info.max_workgroup_invocations >= vnt && c->info.max_workgroup_size[0] >= vnt &&
                  c->info.max_shared_memory >= vec_shared_bytes(vcfg, dtype, vtx) &&
                  (uint64_t)batch * vcfg[3] <= c->info.max_workgroup_count[2] &&
                  (M + vbm - 1) / vbm <= c->info.max_workgroup_count[1];
  /* lavapipe (llvmpipe) stops shader loops early (its 65535-iteration
   * guard): observed wrong results for naive from K = 65536, regtile from
   * K = 131071 and vec1 from K = 52605 (f32, 3 x 3 output; the bound moves
   * with the shape and dtype, so it is not one loop's count).  The vec
   * kernel, whose inner loops are unrolled, was checked to K = 2^20 + 1:
   * every variant takes it there once K passes 32768. */
  bool loop_limited = strstr(c->info.driver_name, "llvmpipe") != NULL && K > 32768;
  /* "tiled" on GPUs: vec (f64 too, since its accumulators stay in
   * registers, where it passes vec1); on CPU devices the regtile kernel,
   * whose small scalar tiles suit workgroups run as SIMD loops */
  bool gpu_tiled = strcmp(variant, "tiled") == 0 && strcmp(c->info.type, "cpu") != 0;
  bool vec1 = !loop_limited && strcmp(variant, "vec1") == 0;
  bool vec = !vec1 && (strcmp(variant, "vec") == 0 || loop_limited || gpu_tiled);
  uint32_t v1tile = 32 * q; /* vec1: square tiles, 256 invocations, one buffer of BK = 8 */
  bool vec1_fits = c->info.max_workgroup_invocations >= 256 && c->info.max_workgroup_size[0] >= 256 &&
                   c->info.max_shared_memory >= 2 * 8 * v1tile * nxvk_dtype_size(dtype) &&
                   batch <= c->info.max_workgroup_count[2] &&
                   (M + v1tile - 1) / v1tile <= c->info.max_workgroup_count[1];
  if (vec1 && vec1_fits) {
    uint32_t meta[4] = {M, N, K, batch}, spec[1] = {256};
    snprintf(name, sizeof name, "dot_vec1_%s", dt);
    return nxvk_dispatch_grid(r, name, spec, 1, meta, 4, bufs, 3, (N + v1tile - 1) / v1tile,
                              (M + v1tile - 1) / v1tile, batch);
  }
  if (vec && vec_fits) {
    /* vector loads need whole vectors: rows of A (K) and of B and C (N) */
    uint32_t S = vcfg[3];
    uint32_t lanes = VEC_LANES_F64;
    if (lanes > vtx) lanes = vtx; /* at most the grid's width */
    uint32_t vspec[8] = {vcfg[0], vcfg[1], vcfg[2], lanes, 0, 0, 0, 0}, nspec = dtype == NXVK_F64 ? 4 : 3;
    uint32_t meta[7] = {M, N, K, batch, (K % q == 0 ? 1u : 0u) | (N % q == 0 ? 2u : 0u), S, vcfg[4]};
    if (S == 1) {
      /* f32 of whole tiles: the kernel without bounds tests, its launch in
       * groups of row tiles (NXVK_DOT_ALIGNED, NXVK_DOT_GROUP) */
      bool rule = vcfg[6] != 0; /* vec_config's f32 rule: aligned, FRAG and XB */
      bool aligned = dtype == NXVK_F32 && (c->tuning->dot_aligned || rule) && M % vbm == 0 && N % vbn == 0 &&
                     K % vcfg[2] == 0;
      if (aligned) {
        vspec[3] = c->tuning->dot_group ? c->tuning->dot_group : 1;
        /* FRAG, XB (2 with FRAG only, and BK >= 4: the last two steps) */
        uint32_t frag = rule ? 1 : c->tuning->dot_frag;
        uint32_t xb = rule ? 1 : c->tuning->dot_xb == 2 && !frag ? 1 : c->tuning->dot_xb;
        /* XS: the next tile stored before step XS (XB only, 0 < XS < BK); the
         * rule's 6 of 8 (H100: 44 031 / 45 057 GFLOPS at 2048^2 / 4096^2
         * against 42 960 / 44 044 at the barrier, same call; bench/NOTES.md) */
        uint32_t want_xs = rule && !c->tuning->dot_xs ? 6 : c->tuning->dot_xs;
        uint32_t xs = xb && want_xs < vcfg[2] ? want_xs : 0;
        vspec[4] = frag | xb << 1 | xs << 3;
        /* NXVK_DOT_KU: a proper even divisor of BK, else all unrolled;
         * NXVK_DOT_LW: within the grid (its rows at least 32 / LW);
         * NXVK_DOT_CT: N << 16 | K where both fit 16 bits (KU is ignored with XB) */
        uint32_t ku = c->tuning->dot_ku, lw = c->tuning->dot_lw;
        vspec[5] = ku && ku < vcfg[2] && vcfg[2] % ku == 0 ? ku : 0;
        vspec[6] = lw && lw <= vtx && 32 / lw <= 16 ? lw : 0;
        vspec[7] = c->tuning->dot_ct && N < 65536 && K < 65536 ? N << 16 | K : 0;
        nspec = 8;
      }
      snprintf(name, sizeof name, "dot_vec%s%s%s_%s", narrow ? "128" : "", aligned ? "_aligned" : "",
               aligned && vspec[4] >> 3 ? "_xs" : "", dt); /* XS: its own SPIR-V */
      return nxvk_dispatch_grid(r, name, vspec, nspec, meta, 5, bufs, 3, (N + vbn - 1) / vbn,
                                (M + vbm - 1) / vbm, batch); /* [5], [6]: split only */
    }
    /* split K: S partial products into a scratch the recording holds, then
     * their sum in chunk order; the partials from the split kernel, or (the
     * batch form) from the unsplit kernel on k chunks of A made a batch */
    uint64_t mn = (uint64_t)M * N;
    uint32_t KC = vcfg[4], w = (uint32_t)nxvk_dtype_size(dtype) / 4;
    nxvk_buffer *part = NULL, *ap = NULL, *bp = NULL;
    bool pad_b = (uint64_t)S * KC != K;
    enum split_form form = split_form(c, dtype, vcfg, M, N, batch, pad_b);
    int rc = nxvk_buffer_create(c, S * batch * mn * nxvk_dtype_size(dtype), false, &part);
    if (rc == NXVK_OK && form != SPLIT_KERNEL) {
      /* A's k chunks read in place (its rows S * KC long, S a specialization
       * constant: chunks_in_place) or copied out, B's copied only to pad */
      bool in_place = form == SPLIT_BATCH_IN_PLACE;
      if (!in_place) rc = chunk_copy(r, in[0]->buf, batch * S * M, M, K * w, KC * w, S, &ap);
      if (rc == NXVK_OK && pad_b) rc = chunk_copy(r, in[1]->buf, batch * S, 1, K * N * w, KC * N * w, S, &bp);
      if (rc == NXVK_OK) {
        /* vector loads of A: KC % q == 0; in place, A's rows too */
        uint32_t bmeta[5] = {M, N, KC, batch * S, (!in_place || K % q == 0 ? 1u : 0u) | (N % q == 0 ? 2u : 0u)};
        uint32_t sspec[4] = {vcfg[0], vcfg[1], vcfg[2], S};
        nxvk_buffer *pbufs[3] = {in_place ? in[0]->buf : ap, pad_b ? bp : in[1]->buf, part};
        snprintf(name, sizeof name, in_place ? "dot_vec_strided_%s" : "dot_vec_%s", dt);
        rc = nxvk_dispatch_grid(r, name, in_place ? sspec : vspec, in_place ? 4 : nspec, bmeta, 5, pbufs, 3,
                                (N + vbn - 1) / vbn, (M + vbm - 1) / vbm, batch * S);
      }
    } else if (rc == NXVK_OK) {
      snprintf(name, sizeof name, "dot_vec_split_%s", dt);
      nxvk_buffer *pbufs[3] = {in[0]->buf, in[1]->buf, part};
      rc = nxvk_dispatch_grid(r, name, vspec, nspec, meta, 7, pbufs, 3, (N + vbn - 1) / vbn,
                              (M + vbm - 1) / vbm, batch * S);
    }
    nxvk_buffer_unref(c, ap);
    nxvk_buffer_unref(c, bp);
    if (rc == NXVK_OK) {
      uint32_t smeta[3] = {(uint32_t)mn, batch, S}, spec[1] = {NXVK_WG};
      nxvk_buffer *sbufs[2] = {part, out->buf};
      snprintf(name, sizeof name, "dot_ksum_%s", dt);
      rc = nxvk_dispatch_1d(r, name, spec, 1, smeta, 3, sbufs, 2, batch * mn);
    }
    nxvk_buffer_unref(c, part);
    return rc;
  }
  uint32_t meta[4] = {M, N, K, batch};
  if (!naive && (batch > c->info.max_workgroup_count[2] ||
                 (M + cfg[0] - 1) / cfg[0] > c->info.max_workgroup_count[1]))
    naive = true; /* grid too large for the tiled layout: the naive one strides */
  if (naive) {
    uint32_t spec[1] = {NXVK_WG};
    snprintf(name, sizeof name, "dot_naive_%s", dt);
    return nxvk_dispatch_1d(r, name, spec, 1, meta, 4, bufs, 3, (uint64_t)out->count);
  }
  uint32_t spec[6] = {(cfg[0] / cfg[3]) * (cfg[1] / cfg[4]), cfg[0], cfg[1], cfg[2], cfg[3], cfg[4]};
  snprintf(name, sizeof name, "dot_tiled_%s", dt);
  return nxvk_dispatch_grid(r, name, spec, 6, meta, 4, bufs, 3, (N + cfg[1] - 1) / cfg[1],
                            (M + cfg[0] - 1) / cfg[0], batch);
}

/* One input element for the reference: finite values as long double, the
 * non-finite ones by class, so that the inner loop never does x87
 * arithmetic on NaN, infinities or denormal operands (microcode assists on
 * many Intel CPUs: a 1025x64x1025 product of edge values took minutes). */
enum { DOT_FINITE, DOT_NAN, DOT_POS_INF, DOT_NEG_INF };
typedef struct {
  long double v; /* finite value (every f32/f64 denormal is normal here) */
  unsigned char cls;
} dot_elem;

static bool dot_load(dot_elem *e, double x, bool f16) {
  if (f16) x = nxvk_f16_round(x);
  e->cls = isnan(x) ? DOT_NAN : isinf(x) ? (x > 0 ? DOT_POS_INF : DOT_NEG_INF) : DOT_FINITE;
  e->v = e->cls == DOT_FINITE ? (long double)x : 0;
  return e->cls != DOT_FINITE;
}

/* -1, 0 or 1 for an element that is not NaN (zeros of either sign: 0) */
static int dot_sign(const dot_elem *e) {
  if (e->cls != DOT_FINITE) return e->cls == DOT_POS_INF ? 1 : -1;
  return e->v == 0 ? 0 : signbit(e->v) ? -1 : 1;
}

/* sum_k a[k]*b[k] in long double, in k order, with IEEE's rules for
 * non-finite products and sums applied by class. */
static long double dot_elems(const dot_elem *a, const dot_elem *b, int64_t K, bool special) {
  long double acc = 0;
  if (!special) {
    for (int64_t k = 0; k < K; k++) acc += a[k].v * b[k].v;
    return acc;
  }
  bool nan = false, pinf = false, ninf = false;
  for (int64_t k = 0; k < K; k++) {
    int ca = a[k].cls, cb = b[k].cls;
    if (ca == DOT_FINITE && cb == DOT_FINITE) {
      acc += a[k].v * b[k].v;
    } else if (ca == DOT_NAN || cb == DOT_NAN) {
      nan = true;
    } else { /* an infinity times a finite value or another infinity */
      int sign = dot_sign(&a[k]) * dot_sign(&b[k]);
      if (sign == 0) nan = true; /* inf * 0 */
      else if (sign > 0) pinf = true;
      else ninf = true;
    }
  }
  if (nan || (pinf && ninf)) return NAN;
  if (pinf) return INFINITY;
  if (ninf) return -INFINITY;
  return acc; /* finite f32/f64 products cannot overflow a long double sum */
}

/* The variant coopmat's reference rounds every f32 input element to f16
 * first (as its kernel does; f16 and bf16 inputs are read as they are:
 * their products are exact in f32) and then computes the same long double products;
 * conformance holds it to dot's usual bound against that rounded reference.
 * Rows of A are converted a block at a time and each column of B once per
 * block, which keeps the scratch small for bench-sized products. */
#define DOT_REF_ROWS 64
int nxvk_dot_ref(const nxvk_op *op, const nxvk_attrs *a, const nxvk_host *in, int nin,
                 nxvk_host *out) {
  (void)op;
  (void)nin;
  const nxvk_shape *x = &in[0].shape, *y = &in[1].shape;
  int rk = x->rank;
  int64_t batch = rk == 3 ? x->dim[0] : 1;
  int64_t M = x->dim[rk - 2], K = x->dim[rk - 1], N = y->dim[rk - 1];
  const nxvk_host *A = &in[0], *B = &in[1];
  bool f16 = is_coopmat(a) && A->dtype == NXVK_F32; /* never bf16: its values are no f16's */
  if (!nxvk_dtype_is_float(A->dtype)) { /* integers: exact, wrapping as the kernel */
    for (int64_t b = 0; b < batch; b++)
      for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
          uint64_t acc = 0;
          for (int64_t k = 0; k < K; k++)
            acc += (uint64_t)nxvk_host_get_int(A, b * M * K + i * K + k) *
                   (uint64_t)nxvk_host_get_int(B, b * K * N + k * N + j);
          nxvk_host_set_int(out, b * M * N + i * N + j, (int64_t)acc);
        }
    return NXVK_OK;
  }
  dot_elem *ra = malloc(sizeof *ra * (size_t)(DOT_REF_ROWS * K + 1));
  dot_elem *cb = malloc(sizeof *cb * (size_t)(K + 1));
  bool row_special[DOT_REF_ROWS];
  if (!ra || !cb) {
    free(ra);
    free(cb);
    return nxvk_seterr(NXVK_E_NO_MEMORY, "dot reference: out of host memory");
  }
  for (int64_t b = 0; b < batch; b++)
    for (int64_t i0 = 0; i0 < M; i0 += DOT_REF_ROWS) {
      int64_t rows = M - i0 < DOT_REF_ROWS ? M - i0 : DOT_REF_ROWS;
      for (int64_t r = 0; r < rows; r++) {
        row_special[r] = false;
        for (int64_t k = 0; k < K; k++)
          row_special[r] |= dot_load(&ra[r * K + k], nxvk_host_get(A, b * M * K + (i0 + r) * K + k), f16);
      }
      for (int64_t j = 0; j < N; j++) {
        bool col_special = false;
        for (int64_t k = 0; k < K; k++)
          col_special |= dot_load(&cb[k], nxvk_host_get(B, b * K * N + k * N + j), f16);
        for (int64_t r = 0; r < rows; r++) {
          long double acc = dot_elems(&ra[r * K], cb, K, row_special[r] || col_special);
          int64_t o = b * M * N + (i0 + r) * N + j;
          if (out->dtype == NXVK_F64) ((double *)out->data)[o] = (double)acc;
          else nxvk_host_set(out, o, (double)(float)acc); /* f16 / bf16: the f32 sum rounded */
        }
      }
    }
  free(ra);
  free(cb);
  return NXVK_OK;
}
