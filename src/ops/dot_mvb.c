/*
 * dot_mvb.c - f32 skinny products with n = 9..16 columns of output (the rows
 * form) on dot_mvb.comp: B held in registers a segment of 128 k at a time,
 * A's rows streaming past it, each row's sums met by a transposing xor tree
 * (no shared reads of B, no barriers in the loop; bench/NOTES.md, "f32 n =
 * 9..16: B in registers").  dot_mv.c calls it for f32 rows products before
 * its own kernel.
 *
 * The rule: CG = 2 column groups (8 columns and 8 k a lane) with RB = 32
 * rows a workgroup for n = 16, else CG = 1 (16 columns and 4 k) with RB =
 * 64 (fewer where their sums do not fit shared memory); 8 subgroups a
 * workgroup (WG 256 on NVIDIA), RU = 2 rows a step; K split into the
 * S chunks (whole NSG x 4 SG k each) whose workgroups fill the device's
 * slots most evenly (~16 subgroups a unit), the fewest where several tie, since each
 * chunk's partials are written and read back; the chunks summed by the row
 * block's last workgroup (mvfold.glsl).
 * NXVK_DOT_MVB="CG,WG,RB,RU[,S[,F]]" overrides each (0: the rule's; F 2: the
 * second pass instead of the fold) and takes every f32 rows product with
 * 2 <= n <= 16 it can; NXVK_DOT_MVB=off leaves them to dot_mv.comp, and so
 * does NXVK_DOT_MV or NXVK_DOT_MVR set to numbers while NXVK_DOT_MVB is not.
 */
#include "ops.h"

#include <stdio.h>
#include <string.h>

int nxvk_dot_mvb(nxvk_rec *r, nxvk_dtype dtype, nxvk_dtype out, nxvk_buffer *A, nxvk_buffer *B, nxvk_buffer *C,
                 uint32_t M, uint32_t N, uint32_t K, uint32_t batch) {
  nxvk_ctx *c = nxvk_rec_ctx(r);
  const nxvk_device_info *d = &c->info;
  const nxvk_tuning *tu = c->tuning;
  const uint32_t *kn = tu->dot_mvb;
  if (tu->dot_mvb_off || dtype != NXVK_F32 || out != NXVK_F32 || N < 2 || N > 16 || M == 0 || K == 0 ||
      batch == 0 || K % 4 || (!tu->dot_mvb_on && N < 9))
    return 1;
  /* a forced layout of the other rows kernels keeps its products (their tests and sweeps) */
  if (!tu->dot_mvb_on && (tu->dot_mvr_on || tu->dot_mv_on)) return 1;
  /* the kernel is compiled for the device's subgroup size, every subgroup full */
  uint32_t sg = d->subgroup_size;
  if (sg < 4 || sg > 128 || (sg & (sg - 1)) || d->min_subgroup_size != d->max_subgroup_size || !d->subgroup_shuffle)
    return 1;
  /* H100 2026-11-28 05:27-05:43 (B permuted: the tree without selects), GB/s at 8192x8192xn (copy 2 875): n =
   * 16 CG 2 RB 32 2 328-2 335, CG 1 2 265, CG 2 RB 64 1 679 (129 registers: one workgroup of 256 a unit), RB 16 /
   * 24 / 48 1 977 / 2 002 / 1 569, RU 1 / 3 1 770 / 2 295, WG 512 2 194, S 2 2 220; n = 9..15 CG 1 2 251-2 365
   * against CG 2 RB 32 2 174-2 221 (n = 12 2 322 / 2 182).  With the selects (04:28): n = 16 CG 1 2 185, CG 2
   * RB 32 2 127 */
  uint32_t cg = kn[0] ? kn[0] : N == 16 ? 2 : 1, wg = kn[1] ? kn[1] : 8 * sg,
           rb = kn[2] ? kn[2] : N == 16 && cg == 2 ? 32 : 64, ru = kn[3] ? kn[3] : 2;
  uint32_t maxwg = nxvk_max_workgroup_x(d);
  while (wg > maxwg) wg /= 2;
  if (cg > sg || wg < sg) return 1;
  uint32_t nsg = wg / sg, span = 4 * wg; /* a segment is 4 sg k */
  /* each subgroup's sums of the block's rows in shared memory */
  if (!kn[2])
    while (rb > 8 && 4ull * nsg * rb * N > nxvk_mv_shared_room(d)) rb /= 2;
  if (4ull * nsg * rb * N > nxvk_mv_shared_room(d)) return 1;
  uint64_t blocks = ((uint64_t)M + rb - 1) / rb, groups = blocks * batch, mn = (uint64_t)M * N;
  if (blocks > d->max_workgroup_count[0] || batch > d->max_workgroup_count[2] ||
      (uint64_t)batch * M * K > UINT32_MAX || (uint64_t)batch * K * N > UINT32_MAX || (uint64_t)batch * mn > UINT32_MAX)
    return 1;
  uint32_t spans = (K + span - 1) / span, S = kn[4];
  if (!S) {
    /* the S (at most one a span) whose waves of slots (~16 subgroups a unit) are fullest: 8192x8192 (128
     * row blocks of 64 on 132 units x 2) takes 2, 16384 rows 1 */
    uint64_t slots = (uint64_t)nxvk_mv_groups_per_unit(wg) * nxvk_compute_units(d);
    double best = 0;
    S = 1;
    for (uint32_t s = 1; s <= spans && s <= 64; s++) {
      uint64_t n = groups * s, waves = (n + slots - 1) / slots;
      double fill = (double)n / (double)(waves * slots);
      if (fill > best + 0.02) best = fill, S = s;
    }
  }
  if (S > spans) S = spans;
  if (S > 64) S = 64;
  if (S > d->max_workgroup_count[1]) S = d->max_workgroup_count[1];
  if (S < 1) S = 1;
  uint32_t KC = (spans + S - 1) / S * span;
  if (S > 1) S = (K + KC - 1) / KC; /* every chunk nonempty */
  if (S > 1 && !nxvk_mv_partials_fit(d, S, batch, mn))
    S = 1;
  if (S == 1) KC = K;
  /* lavapipe cuts shader loops short past 65535 iterations (see nxvk_dot_gpu) */
  if (strstr(d->driver_name, "llvmpipe") && KC / span > 16384) return 1;
  int fold = nxvk_mv_folds(kn[5], S, groups);
  uint32_t meta[5] = {M, N, K, batch, KC};
  uint32_t spec[3] = {wg, S > 1 ? 1u : 0u, fold != NXVK_MV_PASS};
  char name[64];
  snprintf(name, sizeof name, "dot_mvb_n%ug%ur%uu%uw%us%u_f32", N, cg, rb, ru, wg, sg);
  return nxvk_dot_mv_run(r, name, spec, 3, meta, 5, A, B, C, out, (uint32_t)blocks, S, batch, mn, fold);
}
