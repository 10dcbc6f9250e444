/*
 * dot_mvr.c - skinny products with 2 <= n <= 16 columns of output (the rows
 * form) of f32, f16 and bf16 on dot_mvr.comp: lanes over rows of A (L lanes
 * a row, R rows a lane), k split over the workgroup's KS subgroup groups
 * (summed in shared memory) and, while the row blocks leave units idle,
 * over workgroups (f32 partials, dot_mv.comp's SUM pass).  dot_mv.c calls it
 * for the rows form with n >= 2 before its own kernel (n = 1 stays there).
 *
 * NXVK_DOT_MVR="L,R,U,KS[,WG[,S[,P]]]" overrides each (0: the rule's),
 * NXVK_DOT_MVR=off gives these shapes back to dot_mv.comp's rows form
 * (bench/NOTES.md, "dot_mvr").  By default f16 and bf16 take
 * dot_mvrcm.comp (tensor cores: FM-row tiles of A staged through shared
 * memory, B's round beside them) where the device has cooperative matrices
 * of their type (bf16: the KHR extension's; f16 as KHR where
 * nxvk_coopmat_khr says), and K is whole fragments; else, with n <= 4,
 * dot_mvr.comp;
 * NXVK_DOT_MVR_CM="U,KS[,WG[,S[,E[,LD[,F]]]]]" sets its layout (E = 1: its emulation, plain FMAs, for devices without
 * cooperative matrices; LD 1: A's fragments straight from memory; F 1 / 2: split K summed by the last
 * workgroup / by a second pass).
 */
#include "ops.h"

#include <stdio.h>

#define MVR_MIN_ROUNDS 2u /* a chunk of split K: at least this many rounds */

/* S for blocks workgroups of rounds of k: while they would not give every
 * unit per_unit workgroups, chunks of at least MVR_MIN_ROUNDS rounds (or
 * forced) */
static uint32_t split_count(const nxvk_device_info *d, uint32_t forced, uint64_t groups, uint32_t rounds,
                            uint32_t per_unit) {
  uint32_t units = nxvk_compute_units(d), S = 1;
  uint64_t want = (uint64_t)per_unit * units;
  if (forced) S = forced;
  else if (groups < want) {
    S = (uint32_t)((want + groups - 1) / groups);
    if (S > rounds / MVR_MIN_ROUNDS) S = rounds / MVR_MIN_ROUNDS;
  }
  if (S > rounds) S = rounds;
  if (S > 64) S = 64;
  if (S > d->max_workgroup_count[1]) S = d->max_workgroup_count[1];
  return S < 1 ? 1 : S;
}

/* f16 and bf16 on tensor cores (dot_mvrcm.comp): 1 where it does not apply.
 * bf16 needs the device's bf16 cooperative matrices (a KHR kernel,
 * spirv_khr.c) and takes its fragment from their list; f16 runs as a KHR
 * kernel where nxvk_coopmat_khr says; the emulation (E = 1) as either. */
static int mvr_coopmat(nxvk_rec *r, nxvk_dtype dtype, nxvk_dtype out, nxvk_buffer *A, nxvk_buffer *B, nxvk_buffer *C,
                       uint32_t M, uint32_t N, uint32_t K, uint32_t batch) {
  nxvk_ctx *c = nxvk_rec_ctx(r);
  const nxvk_device_info *d = &c->info;
  const uint32_t *kn = c->tuning->dot_mvr_cm;
  bool emu = kn[4] == 1, bf = dtype == NXVK_BF16;
  bool sg32 = d->subgroup_size == 32 && d->min_subgroup_size == d->max_subgroup_size;
  if (!emu && !(sg32 && (bf ? nxvk_coopmat_khr(c, true) : d->coopmat_f16_f32)))
    return 1;
  bool khr = !emu && !bf && nxvk_coopmat_khr(c, false);
  uint32_t f[3];
  if (bf) nxvk_coopmat_fragment_bf16(d, f);
  else nxvk_coopmat_fragment(d, false, f);
  uint32_t FM = f[0], FN = f[1], FK = f[2];
  /* H100, call of 16:45 (LD 2), f16 8192x8192x16 / 4096x4096x16 / 8192x8208x16, GB/s: U = 4 KS = 1 WG = 128
   * 2 222 / 1 696 / 2 135 (77% / 59% / 74% of copy), U = 4 KS = 2 WG = 256 2 073 / 1 413 / 1 973, U = 8 KS = 1
   * 1 983 / 1 288 / 1 850, U = 2 KS = 4 1 837 / 1 432 / 1 750; main's rows form 1 076 / 719 / 1 059 */
  /* H100, 2026-11-28 02:51 (counts kept by the recording): KS = 2 WG = 256 with S = 2, f16 / bf16
   * 8192x8192x16 2 437 / 2 447 and 8192x8192x4 2 329 / 2 335 GB/s against KS = 1 WG = 128 (S = 4) 2 307 /
   * 2 326 and 2 292 / 2 302; KS = 2 WG = 256 with S = 4 2 009 / 1 931, KS = 1 WG = 256 S = 4 2 278 / 2 294,
   * S = 2 1 920 / 1 676: split K's partials are traffic (S M n f32 written and read back), so the fewest
   * chunks that keep ~16 subgroups a unit */
  uint32_t U = kn[0] ? kn[0] : 4, KS = kn[1] ? kn[1] : 2, wg = kn[2] ? kn[2] : 256;
  /* where the row blocks (64 rows either way) alone give every unit one, KS = 1 WG = 128 as before (03:01,
   * f16 16384x8192xn n = 2 / 4 / 16: 2 450 / 2 398 / 2 458 against KS = 2 WG = 256 S = 2 2 118 / 2 115 /
   * 2 208 and S = 1 2 180 / 2 500 / 2 488) */
  uint32_t units = nxvk_compute_units(d);
  if (!kn[1] && !kn[2] && (uint64_t)batch * ((M + 4 * FM - 1) / (4 * FM)) >= units) KS = 1, wg = 128;
  uint32_t maxwg = nxvk_max_workgroup_x(d);
  while (wg > maxwg) wg /= 2;
  if (M < FM || K % FK || FN % 8 || FM * FN % 32 || wg % (32 * KS)) return 1;
  uint32_t nf = (N + FN - 1) / FN, np = nf * FN, kr = KS * U * FK, rt = wg / 32 / KS;
  /* A's fragments: 1 straight from memory, 2 staged through shared memory (the default: call of 16:25, mvcols) */
  uint32_t ld = kn[5] ? kn[5] : 2;
  uint64_t shared = 2ull * kr * np + 4ull * KS * rt * FM * np + (ld == 2 ? 16ull * (wg / 32) * FM * (U * FK / 8 + 1) : 0);
  if (shared > nxvk_mv_shared_room(d)) return 1;
  uint64_t blocks = ((uint64_t)M + (uint64_t)rt * FM - 1) / ((uint64_t)rt * FM), mn = (uint64_t)M * N;
  if (blocks > d->max_workgroup_count[0] || batch > d->max_workgroup_count[2] ||
      (uint64_t)batch * M * K > UINT32_MAX || (uint64_t)batch * K * N + (uint64_t)kr * np > UINT32_MAX ||
      (uint64_t)batch * mn > UINT32_MAX)
    return 1;
  uint32_t rounds = (K + kr - 1) / kr;
  uint32_t S = split_count(d, kn[3], blocks * batch, rounds, nxvk_mv_groups_per_unit(wg));
  /* a power of two (H100, 00:57, f16 16384x8192x2 GB/s: the rule's S = 3 1 993, S = 2 2 481, 4 2 399;
   * 8192x8192x2 S = 5 2 325, 4 2 322) */
  if (!kn[3]) S = nxvk_pow2_floor(S);
  uint32_t KC = (rounds + S - 1) / S * kr;
  if (S > 1) S = (K + KC - 1) / KC;
  if (S > 1 && !nxvk_mv_partials_fit(d, S, batch, mn))
    S = 1;
  if (S == 1) KC = K;
  /* split K's chunks summed by the row block's last workgroup (mvfold.glsl), one dispatch instead of two
   * (F = 2: the second pass), where the counters fit NXVK_MV_FOLD_COUNTS.  H100, 23:01 and 23:04, f16 GB/s
   * folded against two passes: 4096x4096xn n = 2 / 4 / 8 1 957 / 1 889 / 1 802 against 1 772 / 1 725 /
   * 1 772, 8192x8192xn 2 324 / 2 312 / 2 294 against 2 247 / 2 237 / 2 264; n = 16 lost then (2 213
   * against 2 239: the old epilogue's 8 results an invocation cost the kernel registers) and wins with
   * mvfold's loop (00:57: 2 293 against 2 249) */
  int fold = nxvk_mv_folds(kn[6], S, blocks * batch);
  uint32_t meta[6] = {M, N, K, batch, KC, 0};
  uint32_t spec[7] = {wg, N, 0, U, 32, S > 1 ? 1u : 0u, fold != NXVK_MV_PASS};
  char name[128];
  snprintf(name, sizeof name, "dot_mvrcm%s_n%uf%ux%ux%uu%uk%uw%ua%u%s_%s", out == NXVK_F32 ? "32" : "", N, FM, FN,
           FK, U, KS, wg, ld, emu ? "e" : khr ? "k" : "", nxvk_dtype_name(dtype));
  return nxvk_dot_mv_run(r, name, spec, 7, meta, 6, A, B, C, out, (uint32_t)blocks, S, batch, mn, fold);
}

int nxvk_dot_mvr(nxvk_rec *r, nxvk_dtype dtype, nxvk_dtype out, nxvk_buffer *A, nxvk_buffer *B, nxvk_buffer *C,
                 uint32_t M, uint32_t N, uint32_t K, uint32_t batch) {
  nxvk_ctx *c = nxvk_rec_ctx(r);
  const nxvk_device_info *d = &c->info;
  const nxvk_tuning *tu = c->tuning;
  uint32_t sg = d->subgroup_size;
  if (tu->dot_mvr_off || N < 2 || N > 16 || M == 0 || batch == 0 || K == 0 ||
      (dtype != NXVK_F32 && dtype != NXVK_F16 && dtype != NXVK_BF16))
    return 1;
  /* f16 n >= 5 on tensor cores by default where the device has them (H100, call of 16:45, 8192x8192xn against
   * main's rows form: n = 16 2 222 against 1 076 GB/s, n = 12 1 966 against 642, n = 8 2 087 against 1 588, the
   * last two with U = 4 KS = 2 WG = 256); NXVK_DOT_MVR set to numbers keeps them on dot_mvr.comp */
  /* bf16 the same way (its own fragments, a KHR kernel); n = 2 to 4 too (call of 17:06, f16: 2 239 / 2 211 GB/s
   * at n = 2 / 4 against dot_mvr's 2 120 / 1 944) */
  if ((dtype == NXVK_F16 || dtype == NXVK_BF16) && (tu->dot_mvr_cm_on || !tu->dot_mvr_on)) {
    int rc = mvr_coopmat(r, dtype, out, A, B, C, M, N, K, batch);
    if (rc != 1) return rc;
  }
  /* by default f16 with n <= 4 only, where the tensor-core form is not taken (H100, calls of 15:45 and 16:20, GB/s at 8192x8192xn against main's rows
   * form): n = 4 1 959 / 1 955 against 1 449 / 1 418 (4,2,2,2), n = 2 2 116 (32,2,1,2) and 1 946 (4,2,2,2)
   * against 1 790 (L: the subgroup, at most 32); n = 8 1 486 / 1 493 against 1 584 / 1 594 and n = 16 888 against 1 090 stay there; bf16
   * f32 n <= 4 not measured */
  /* bf16 (call of 16:45): n = 2 2 124 (32,2,1,2) against 1 871, n = 4 1 953 (4,2,2,2) against 1 696 */
  bool rule = !tu->dot_mvr_on && (dtype == NXVK_F16 || dtype == NXVK_BF16) && N <= 4;
  if (!tu->dot_mvr_on && !rule) return 1;
  const uint32_t *kn = tu->dot_mvr;
  uint32_t esz = (uint32_t)nxvk_dtype_size(dtype), V = 16 / esz, nq = (N + 3) / 4;
  uint32_t L = kn[0] ? kn[0] : rule && N <= 2 ? (sg < 32 ? sg : 32) : 4, R = kn[1] ? kn[1] : 2, U = kn[2] ? kn[2] : rule && N <= 2 ? 1 : 2,
           KS = kn[3] ? kn[3] : 2;
  uint32_t wg = kn[4] ? kn[4] : 256, P = kn[6] ? kn[6] - 1 : 1;
  uint32_t maxwg = nxvk_max_workgroup_x(d);
  while (wg > maxwg) wg /= 2;
  if (L > sg || sg % L || wg % (sg * KS)) return 1;
  uint32_t step = L * U * V, kr = KS * step, rw = wg / sg / KS * (sg / L) * R;
  uint64_t shared = 16ull * KS * step * nq + (KS > 1 ? 16ull * KS * rw * nq : 0);
  if (shared > d->max_shared_memory) return 1;
  uint64_t blocks = ((uint64_t)M + rw - 1) / rw;
  if (blocks > d->max_workgroup_count[0] || batch > d->max_workgroup_count[2]) return 1;
  /* the kernel's flat indices are 32-bit */
  uint64_t mn = (uint64_t)M * N;
  if ((uint64_t)batch * M * K > UINT32_MAX || (uint64_t)batch * K * N + (uint64_t)kr * N > UINT32_MAX ||
      (uint64_t)batch * mn > UINT32_MAX)
    return 1;
  /* split K while the row blocks would not give every unit 4 workgroups */
  uint32_t rounds = (K + kr - 1) / kr, S = split_count(d, kn[5], blocks * batch, rounds, 4);
  uint32_t KC = (rounds + S - 1) / S * kr;
  if (S > 1) S = (K + KC - 1) / KC; /* every chunk nonempty */
  if (S > 1 && !nxvk_mv_partials_fit(d, S, batch, mn))
    S = 1;
  if (S == 1) KC = K;
  bool o32 = out == NXVK_F32 && dtype != NXVK_F32;
  uint32_t meta[6] = {M, N, K, batch, KC, K % V == 0 ? 1u : 0u};
  uint32_t spec[6] = {wg, N, R, U, sg, S > 1 ? 1u : 0u};
  char name[128];
  snprintf(name, sizeof name, "dot_mvr%s_n%ul%ur%uu%uk%uw%up%u_%s", o32 ? "32" : "", N, L, R, U, KS, wg, P,
           nxvk_dtype_name(dtype));
  return nxvk_dot_mv_run(r, name, spec, 6, meta, 6, A, B, C, out, (uint32_t)blocks, S, batch, mn, NXVK_MV_PASS);
}
