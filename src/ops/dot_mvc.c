/*
 * dot_mvc.c - the columns form of the skinny products (m up to 16 rows of
 * the result, B large) of f32, f16 and bf16 on dot_mvc.comp: a workgroup
 * owns SG x CL columns of B, each lane one W-word load of a row (CL columns),
 * its subgroups take slabs of SG rows in turn and read A's columns from
 * their own part of shared memory (one subgroup barrier a slab: no
 * workgroup barrier in the loop); the f32 sums rounded once to the result's
 * dtype.  K is split into S chunks (f32 partials, summed in chunk order by
 * each column block's last workgroup, mvfold.glsl, or by dot_mv.comp's second
 * pass) so that the grid gives every unit ~4 workgroups (bench/NOTES.md,
 * "dot_mvc").
 *
 * The rule (measured on an H100, nxvk_dot_mvc below): f32 m <= 4 and 9..16
 * W = 2, 5..8 W = 4; 16-bit m = 1 W = 4, m >= 2 W = 2; the next round's
 * loads before this round's sums (P) for f32 m > 8 and 16-bit m > 1; U = 8
 * rows in flight a lane (16-bit m = 1: 4); WG 256; S a power of two (~4
 * workgroups a unit, 16-bit m > 8 ~2); f16 and bf16 m = 16 on tensor cores
 * (dot_mvcm.comp, WG 128) where the device has them for the dtype, and m = 8
 * there too as the transpose C^T = B^T A^T (B's columns the fragments' rows:
 * a configuration with 8 columns, NVIDIA's 16x8x16, else 16 with A^T
 * zero-padded; NXVK_DOT_MVC_CM's T).  It
 * takes every columns shape (NXVK_DOT_MVC="W,U,S,WG[,P[,F]]" overrides, 0: the
 * rule's; P 1 plain, 2 the next round's loads first; F 1 the fold, 2 the second pass);
 * NXVK_DOT_MVC=off (or NXVK_DOT_MV=off while NXVK_DOT_MVC names no layout)
 * leaves them to dot_mv.c / dot_skinny.comp as before.
 */
#include "ops.h"

#include <stdio.h>
#include <string.h>

#define MVC_MAX 16u

/* Split K for a grid of gx x batch workgroups whose chunks are multiples of
 * `span` k: a power of two giving every unit ~4 workgroups, each chunk at
 * least two spans (forced: NXVK_DOT_MVC's S); KC the chunk. */
static uint32_t mvc_split(const nxvk_device_info *d, const nxvk_tuning *tu, uint32_t gx, uint32_t batch, uint32_t K,
                          uint64_t span, uint32_t per_unit, uint64_t *KC) {
  uint32_t units = nxvk_compute_units(d);
  uint64_t groups = (uint64_t)gx * batch, want = (uint64_t)per_unit * units;
  uint32_t S = 1;
  if (tu->dot_mvc[2]) S = tu->dot_mvc[2];
  else if (groups < want) {
    uint64_t s = (want + groups - 1) / groups, smax = K / (2 * span);
    if (s > smax) s = smax;
    if (s > 64) s = 64;
    S = nxvk_pow2_floor(s ? (uint32_t)s : 1);
  }
  if (S > d->max_workgroup_count[1]) S = d->max_workgroup_count[1];
  if (S < 1) S = 1;
  *KC = S > 1 ? ((uint64_t)K + S - 1) / S : K;
  if (S > 1) {
    *KC = (*KC + span - 1) / span * span;
    S = (uint32_t)((K + *KC - 1) / *KC); /* every chunk nonempty */
  }
  return S;
}

/* Records the product's kernel (name, spec, grid gx x S x batch; spec[2] the
 * partials, spec[3] the fold, set here) and, for S > 1 without the fold, the
 * partials' sum. */
static int mvc_dispatch(nxvk_rec *r, const char *kname, nxvk_dtype out, nxvk_buffer *A, nxvk_buffer *B,
                        nxvk_buffer *C, uint32_t *spec, uint32_t M, uint32_t N, uint32_t K, uint32_t batch,
                        uint32_t gx, uint32_t S, uint64_t KC, uint32_t F) {
  uint32_t meta[5] = {M, N, K, batch, (uint32_t)(S == 1 ? K : KC)};
  int fold = nxvk_mv_folds(F, S, (uint64_t)gx * batch); /* each column block's last workgroup sums */
  spec[2] = S > 1 ? 1u : 0u;
  spec[3] = fold != NXVK_MV_PASS;
  return nxvk_dot_mv_run(r, kname, spec, 4, meta, 5, A, B, C, out, gx, S, batch, (uint64_t)M * N, fold);
}

/* f16 and bf16 m = 16 (and 8) on dot_mvcm.comp (tensor cores): the
 * device's f16 x f16 + f32 (bf16 x bf16 + f32: the KHR extension's)
 * configurations with FM = 16 = m (the largest FN x FK of them whose sides
 * are multiples of 8), subgroups of 32, K and N whole fragments and 16-byte
 * vectors; 1 where any of it is missing.  The transposed form (T, the
 * knob's 6th field: C^T = B^T A^T, B's FN columns the configuration's rows
 * and A's m rows its columns; m = 8 by default, any m up to 16 where T says)
 * takes a configuration FN x FM x FK instead, FM 8 or 16, the fewest columns
 * that hold m (NVIDIA's 16x8x16 for m = 8); with m < FM (m = 8 where only
 * 16x16x16 is listed) A^T is staged with zero columns (the kernel's z, B
 * staged only).  bf16 runs as a KHR kernel (spirv_khr.c), f16 where
 * nxvk_coopmat_khr says. */
static int mvc_coopmat(nxvk_rec *r, nxvk_dtype dtype, nxvk_dtype out, nxvk_buffer *A, nxvk_buffer *B, nxvk_buffer *C,
                       uint32_t M, uint32_t N, uint32_t K, uint32_t batch) {
  nxvk_ctx *c = nxvk_rec_ctx(r);
  const nxvk_device_info *d = &c->info;
  const nxvk_tuning *tu = c->tuning;
  bool emu = tu->dot_mvc_cm[3] == 1; /* the emulation: plain code, any subgroups (lavapipe's tests) */
  bool bf = dtype == NXVK_BF16;
  bool cm = bf ? nxvk_coopmat_khr(c, true) : d->coopmat_f16_f32;
  /* T: 0 the rule's (m = 8 transposed, m = 16 plain), 1 plain, 2 transposed (any m up to 16).  H100, 01:32,
   * GB/s: 8x8192x8192 f16 / bf16 2 434 / 2 446 transposed against dot_mvc's 2 093 / 2 138, 8x16384x8192 f16
   * 2 646 against 2 398; 16x8192x8192 f16 transposed 2 217, plain 2 224 */
  uint32_t T = tu->dot_mvc_cm[5];
  bool tr = T == 2 || (T == 0 && M == 8);
  if ((tr ? M > 16 : M != 16) ||
      (!emu && (!cm || d->subgroup_size != 32 || d->min_subgroup_size != d->max_subgroup_size)))
    return 1;
  bool khr = !emu && !bf && nxvk_coopmat_khr(c, false);
  int ns = bf ? d->coop_bf16_nshapes : d->coop_f16_nshapes;
  if (ns < 0) ns = 0;
  if (ns > 8) ns = 8;
  /* fm rows of A a fragment (the configuration's M, transposed its N: 8 or 16, the fewest that hold m), fn columns
   * of B (its N, transposed its M), fk its K; then the largest fn x fk */
  uint32_t fm = emu ? (tr && M <= 8 ? 8 : 16) : 0, fn = emu ? 16 : 0, fk = emu ? 16 : 0;
  for (int i = 0; i < ns; i++) {
    const uint32_t *s = bf ? d->coop_bf16_shapes[i] : d->coop_f16_shapes[i];
    uint32_t sm = tr ? s[1] : s[0], sn = tr ? s[0] : s[1];
    if ((tr ? sm != 8 && sm != 16 : sm != 16) || sm < M || !sn || !s[2] || sn % 8 || s[2] % 8 || sn > 64 || s[2] > 64)
      continue;
    if (!fm || sm < fm || (sm == fm && (sn * s[2] > fn * fk || (sn * s[2] == fn * fk && sn == 16))))
      fm = sm, fn = sn, fk = s[2];
  }
  /* transposed with fewer rows than fm: A^T staged with zero columns (the kernel's z), one uvec4 a lane */
  bool pad = tr && fm != M;
  if (!fn || N % fn || N % 8 || K % fk || K % 8 || K == 0) return 1;
  /* FC 4, PF 1, staged (H100 16:26: 2 044 GB/s at 16x8192x8192; PF 2 1 889, PF 4 1 298, FC 2 1 395, FC 8
   * 1 506, straight from memory 1 190) */
  uint32_t fc = tu->dot_mvc_cm[0] ? tu->dot_mvc_cm[0] : 4, pf = tu->dot_mvc_cm[1] ? tu->dot_mvc_cm[1] : 1;
  /* B's tiles through the subgroup's shared memory (1) or straight from memory (0) */
  uint32_t ld = tu->dot_mvc_cm[2] ? tu->dot_mvc_cm[2] - 1 : 1;
  if (ld && fk * fc * fn / 8 % 32) ld = 0;
  if (pad && (!ld || fm * fk / 8 > 32)) return 1;
  uint32_t maxwg = nxvk_max_workgroup_x(d);
  /* 256 invocations and the fewest k chunks that keep ~16 subgroups a unit (H100, 2026-11-28 02:48, f16 / bf16
   * 16x8192x8192 GB/s: WG 256 S 2 2 309 / 2 320 against WG 128 S 4 2 244 / 2 268 (the rule before), WG 256 S 4
   * 2 167 / 2 176, WG 512 S 2 2 307 / 2 321, S 1 1 902-1 913 at WG 256 to 1024; 8x8192x8192 transposed WG 256 S 2
   * 2 450 / 2 471 against 2 447 / 2 470): split K's partials are traffic (S m n f32 written and read back) */
  uint32_t wg = tu->dot_mvc[3] ? tu->dot_mvc[3] : 256;
  if (wg > maxwg) wg = nxvk_pow2_floor(maxwg);
  /* shared: the accumulators at the end, or (ld) PF staged FK x (FC FN + 8) tiles a subgroup (pad: and FK x fm) */
  uint64_t per_sg = (uint64_t)fm * fc * fn * 4, stg = ld ? (uint64_t)pf * fk * (fc * fn + 8 + (pad ? fm : 0)) * 2 : 0;
  if (stg > per_sg) per_sg = stg;
  uint64_t room = nxvk_mv_shared_room(d);
  while (wg > 32 && wg / 32 * per_sg > room) wg /= 2;
  if (wg < 32 || wg / 32 * per_sg > room) return 1;
  uint64_t blocks = (N + (uint64_t)fc * fn - 1) / ((uint64_t)fc * fn);
  if (blocks > d->max_workgroup_count[0] || batch > d->max_workgroup_count[2]) return 1;
  if ((uint64_t)batch * M * K > UINT32_MAX || (uint64_t)batch * K * N > UINT32_MAX ||
      (uint64_t)batch * M * N > UINT32_MAX)
    return 1;
  uint64_t KC;
  uint32_t gx = (uint32_t)blocks,
           S = mvc_split(d, tu, gx, batch, K, (uint64_t)wg / 32 * fk, nxvk_mv_groups_per_unit(wg), &KC);
  if (S > 1 && !nxvk_mv_partials_fit(d, S, batch, (uint64_t)M * N))
    S = 1;
  char name[96];
  /* plain dot_mvcm[32]_f16x<FN>x<FK>..., transposed dot_mvcm[32]_t<FN>x<m>x<FK>... (the configurations) */
  if (tr)
    snprintf(name, sizeof name, "dot_mvcm%s_t%ux%ux%uc%up%ul%u%s%s_%s", out == NXVK_F32 ? "32" : "", fn, fm, fk, fc,
             pf, ld, pad ? "z" : "", emu ? "e" : khr ? "k" : "", nxvk_dtype_name(dtype));
  else
    snprintf(name, sizeof name, "dot_mvcm%s_f16x%ux%uc%up%ul%u%s_%s", out == NXVK_F32 ? "32" : "", fn, fk, fc, pf,
             ld, emu ? "e" : khr ? "k" : "", nxvk_dtype_name(dtype));
  uint32_t spec[4] = {wg, 0};
  return mvc_dispatch(r, name, out, A, B, C, spec, M, N, K, batch, gx, S, KC, tu->dot_mvc_cm[4]);
}

/* NXVK_DOT_MVC unset, this form takes every columns shape (f16 m = 16 on the
 * tensor cores where it can), each measured faster than the kernels before it
 * on an H100 (copy 2 881 GB/s; bench/NOTES.md, "dot_mvc"), GB/s against the
 * old route's: f32 m = 1,
 * 2, 4 2 808 / 2 795 / 2 774 (dot_skinny 2 633 / 2 605 / 2 470), m = 8 2 622
 * (dot_mv 2 470), m = 16 2 366 (2 182); f16 / bf16 m = 1 2 404 / 2 413
 * (dot_mv 2 236 / 2 264), f16 m = 2 2 456 (2 225), bf16 m = 8 2 067 (1 911),
 * bf16 m = 16 1 234 (997); f16 m = 16 on tensor cores 2 044 (791). */

int nxvk_dot_mvc(nxvk_rec *r, nxvk_dtype dtype, nxvk_dtype out, nxvk_buffer *A, nxvk_buffer *B, nxvk_buffer *C,
                 uint32_t M, uint32_t N, uint32_t K, uint32_t batch) {
  nxvk_ctx *c = nxvk_rec_ctx(r);
  const nxvk_device_info *d = &c->info;
  const nxvk_tuning *tu = c->tuning;
  uint32_t sg = d->subgroup_size;
  /* the columns form only: n <= 16 with n <= m is dot_mv's rows form */
  bool rows = N <= MVC_MAX && (M > MVC_MAX || N <= M);
  /* NXVK_DOT_MV=off turns this form off too, unless NXVK_DOT_MVC names a layout */
  if (tu->dot_mvc_mode == 1 || (tu->dot_mv_off && tu->dot_mvc_mode != 2) || rows || M > MVC_MAX ||
      (dtype != NXVK_F32 && dtype != NXVK_F16 && dtype != NXVK_BF16) || M == 0 || N == 0 || batch == 0 ||
      !d->subgroup_shuffle || sg < 4 || sg > 128 || (sg & (sg - 1)) || d->min_subgroup_size != d->max_subgroup_size ||
      batch > d->max_workgroup_count[2])
    return 1;
  /* f16 and bf16 m = 16 on tensor cores where the device lists a 16 x FN x FK configuration of their type, m = 8
   * transposed on an FN x 8 x FK one (else FN x 16 x FK, A^T zero-padded) (the default; NXVK_DOT_MVC_CM=off: the
   * CUDA-core form) */
  if ((dtype == NXVK_F16 || dtype == NXVK_BF16) && tu->dot_mvc_cm_mode != 1) {
    int rc = mvc_coopmat(r, dtype, out, A, B, C, M, N, K, batch);
    if (rc != 1) return rc;
  }
  uint32_t esz = (uint32_t)nxvk_dtype_size(dtype), nq = (M + 3) / 4;
  /* W words a load: 16 bytes while the lane's CL x M sums stay <= 64 */
  /* W words a load and P (the next round's loads first), H100 15:46 and 16:26:
   * f32 m <= 4 W = 2 (m = 1 2 808 GB/s against 2 762 at W = 4), 5..8 W = 4
   * (m = 8 2 622 against 2 323), 9..16 W = 2 P (m = 16 2 366 against 1 997
   * at W = 4, 2 199 without P); 16-bit m = 1 W = 4 (2 404 against 1 120 at
   * W = 1), m >= 2 W = 2 P (f16 m = 2 2 456 against 2 355 at W = 4; bf16
   * m = 8 2 067 against 1 597; m = 16 1 234 against 1 003 without P) */
  bool big = esz == 4 ? M > 8 : M > 1;
  uint32_t W = tu->dot_mvc[0];
  if (!W) W = esz == 4 ? (M <= 4 || M > 8 ? 2 : 4) : M == 1 ? 4 : 2;
  uint32_t cl = W * 4 / esz;
  /* 16-bit m = 1: 4 rows in flight (15:46: f16 2 404 against 2 391 at 8, bf16 2 413 against 2 396) */
  uint32_t U = tu->dot_mvc[1] ? tu->dot_mvc[1] : esz == 2 && M == 1 ? 4 : 8;
  if (U > sg) U = sg;
  uint32_t P = tu->dot_mvc[4] ? tu->dot_mvc[4] - 1 : big ? 1 : 0;
  uint32_t maxwg = nxvk_max_workgroup_x(d);
  uint32_t wg = tu->dot_mvc[3] ? tu->dot_mvc[3] : 256;
  if (wg > maxwg) wg = nxvk_pow2_floor(maxwg);
  uint32_t nsg = wg / sg;
  /* A's two slabs a subgroup, or the end's sums */
  uint64_t room = nxvk_mv_shared_room(d);
  while (nsg > 1 && 16ull * nsg * 2 * sg * nq > room) nsg /= 2;
  if (nsg < 1 || 16ull * nsg * 2 * sg * nq > room) return 1;
  wg = nsg * sg;
  uint64_t blocks = (N + (uint64_t)sg * cl - 1) / ((uint64_t)sg * cl);
  if (blocks > d->max_workgroup_count[0]) return 1;
  uint32_t gx = (uint32_t)blocks;
  /* split K: ~4 workgroups a unit, a power of two, each subgroup >= 2 slabs */
  uint64_t span = (uint64_t)nsg * sg, KC;
  /* ~4 workgroups a unit; m > 8 ~2 (H100 16:47: bf16 16x8192x8192 S 4 1 327 GB/s against 1 238 at S 8;
   * 16:26: f16 1 216 against 1 137; 2026-11-28 04:1x, f32 m = 9 / 12 at 8192 S 2 2 739 / 2 657 against S 4
   * 2 668 / 2 578) */
  uint32_t S = mvc_split(d, tu, gx, batch, K, span, M > 8 ? 2 : 4, &KC);
  uint64_t mn = (uint64_t)M * N;
  if (S > 1 && !nxvk_mv_partials_fit(d, S, batch, mn))
    S = 1;
  if (S == 1) KC = K;
  /* the kernel's flat indices are 32-bit */
  if ((uint64_t)batch * M * K + K + 2 * span > UINT32_MAX || (uint64_t)batch * K * N > UINT32_MAX ||
      (uint64_t)batch * mn > UINT32_MAX)
    return 1;
  /* lavapipe cuts shader loops short past 65535 iterations (see nxvk_dot_gpu) */
  if (strstr(d->driver_name, "llvmpipe") && KC / span > 16384) return 1;
  bool al = N % cl == 0;
  bool o32 = out == NXVK_F32 && dtype != NXVK_F32;
  uint32_t spec[4] = {wg, sg};
  char name[96];
  snprintf(name, sizeof name, "dot_mvc%s_n%uw%uu%up%u%s_%s", o32 ? "32" : "", M, W, U, P, al ? "a" : "",
           nxvk_dtype_name(dtype));
  /* f32 m > 12 sums split K by the second pass: the fold's code took the m = 16 kernel to 129 registers (one
   * workgroup of 256 a unit instead of two; H100 2026-11-28, 16x8192x8192 S 2: 2 439 GB/s by the second pass
   * against 1 861 folded, 1 774 at S 4 folded, which had run 2 415 before the fold's counts moved to binding 5) */
  uint32_t F = tu->dot_mvc[5] ? tu->dot_mvc[5] : esz == 4 && M > 12 ? 2 : 0;
  return mvc_dispatch(r, name, out, A, B, C, spec, M, N, K, batch, gx, S, KC, F);
}
