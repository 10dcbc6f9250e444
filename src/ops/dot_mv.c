/*
 * dot_mv.c - matrix-vector and skinny products (m or n up to 16) of f32,
 * f16 and bf16 on dot_mv.comp: one pass over the large operand in 16-byte
 * loads, its f32 sums rounded once to the result's dtype (as dot's other
 * kernels: f16 / bf16 inputs sum in f32; "dtype": "f32" keeps the sums).
 *
 * The rows form (n <= 16, and m > 16 or n <= m) gives each subgroup R rows
 * of A and the columns form (m <= 16) each workgroup SG x V columns of B
 * (bench/NOTES.md, "dot_mv").  The rule, for a GPU whose HBM moves ~13
 * bytes a clock an SM against shared memory's 128: R such that the shared
 * reads of B's tile (16 bytes of f32 per 4 of B's values, per R rows) stay
 * within ~4x the bytes of A; U vectors a lane in flight (R x U ~ 8);
 * k split into S chunks (partials in f32, summed in chunk order) while the
 * workgroups would not give every unit 3 (units unreported: 32).
 * n = 1 reads the vector through shared memory (D = 2, the default: 1.2-1.4x
 * faster on the H100) or beside A (D = 1, L1-resident).  f32 runs here only
 * while NXVK_DOT_MV is set: dot_skinny.comp matched or beat it there (its
 * n, m > 1 layouts ran at ~7% of copy, bench/NOTES.md).
 * NXVK_DOT_MV="R,WG,U,S[,D[,P[,T[,B[,C[,H]]]]]]" overrides each (0: the
 * rule's; P 1: the rows form loads A's next tile while it sums this one; T 1
 * to 8: the rows form's B tile of T sub-tiles of sg V U rows, staged in
 * coalesced loads, two barriers per tile, with P 1 A's next sub-tile in
 * flight across them; T 0, the default: one sub-tile, the older staging; B 2,
 * with T: two such tiles, the next staged before this one's products, one
 * barrier a tile; C 2 or 4, with T: B's column quads split over C subgroups
 * of a workgroup that read the same R rows of A (the repeats from L1 / L2;
 * a workgroup covers WG / sg / C x R rows), H 2, with T: over the two halves
 * of a subgroup's lanes, each lane's vectors of A shuffled to its partner in
 * the other half (A read once); a lane then keeps R x 4 ceil(n / 4 / (C H))
 * sums instead of R x 4 ceil(n / 4), C H at most 4; 1 or 0: no split)
 * and NXVK_DOT_MV=off
 * leaves f16 and bf16 to dot_naive.  The kernels are compiled per layout
 * (dot_mvk_<form>_n<NB>r<R>u<U>d<BD>[p1][t<T>[b2][c<C>][h2]]_<dt>: the sums' arrays of literal size,
 * in registers; n = 1 takes D = 3, B's tile as packed 16-byte vectors);
 * NXVK_DOT_MV_CT=0 gives the specialization-constant form back (dot_mv_<form>_<dt>)
 * for A/B.
 */
#include "ops.h"

#include <stdio.h>
#include <string.h>

#define MV_MAX 16u
#define MV_MIN_TILES 2u /* chunks of split K: at least this many tiles (or rounds of A's tile) */

int nxvk_dot_mv_run(nxvk_rec *r, const char *kernel, const uint32_t *spec, int nspec, const uint32_t *meta, int nmeta,
                    nxvk_buffer *A, nxvk_buffer *B, nxvk_buffer *C, nxvk_dtype out, uint32_t gx, uint32_t S,
                    uint32_t batch, uint64_t mn, int fold) {
  nxvk_ctx *c = nxvk_rec_ctx(r);
  /* binding 4 is C and binding 5 the counts for the kernels that fold (a
   * shader's bindings must all be in its layout, used or not); the others
   * leave them unread */
  if (S == 1) {
    nxvk_buffer *bufs[5] = {A, B, C, C, C};
    return nxvk_dispatch_grid(r, kernel, spec, nspec, meta, nmeta, bufs, 5, gx, 1, batch);
  }
  static const uint32_t zeros[NXVK_MV_FOLD_COUNTS];
  uint64_t nparts = (uint64_t)S * batch * mn, ncount = (uint64_t)gx * batch;
  if (fold != NXVK_MV_PASS && ncount > NXVK_MV_FOLD_COUNTS)
    return nxvk_seterr(NXVK_E_TOO_LARGE, "dot: %llu row blocks to count (limit %d)", (unsigned long long)ncount,
                       NXVK_MV_FOLD_COUNTS);
  nxvk_buffer *part = NULL, *counts = NULL;
  int rc = nxvk_buffer_create(c, nparts * 4, false, &part);
  if (rc == NXVK_OK && fold == NXVK_MV_FOLD) {
    rc = nxvk_rec_counts(r, (uint32_t)ncount, &counts);
    nxvk_buffer_ref(counts);
  } else if (rc == NXVK_OK && fold == NXVK_MV_FOLD_UPDATE) {
    rc = nxvk_buffer_create(c, ncount * 4, false, &counts);
    if (rc == NXVK_OK) rc = nxvk_rec_update(r, counts, 0, zeros, ncount * 4);
  }
  if (rc == NXVK_OK) {
    nxvk_buffer *pbufs[5] = {A, B, part, C, counts ? counts : part};
    rc = nxvk_dispatch_grid(r, kernel, spec, nspec, meta, nmeta, pbufs, 5, gx, S, batch);
  }
  if (rc == NXVK_OK && fold == NXVK_MV_PASS) {
    char sname[32];
    uint32_t smeta[3] = {(uint32_t)mn, batch, S}, sspec[1] = {NXVK_WG};
    nxvk_buffer *sbufs[2] = {part, C};
    if (out == NXVK_F32) snprintf(sname, sizeof sname, "dot_ksum_f32");
    else snprintf(sname, sizeof sname, "dot_mv_sum_%s", nxvk_dtype_name(out));
    rc = nxvk_dispatch_1d(r, sname, sspec, 1, smeta, 3, sbufs, 2, batch * mn);
  }
  nxvk_buffer_unref(c, counts);
  nxvk_buffer_unref(c, part);
  return rc;
}

int nxvk_dot_mv(nxvk_rec *r, nxvk_dtype dtype, nxvk_dtype out, nxvk_buffer *A, nxvk_buffer *B, nxvk_buffer *C,
                uint32_t M, uint32_t N, uint32_t K, uint32_t batch) {
  nxvk_ctx *c = nxvk_rec_ctx(r);
  const nxvk_device_info *d = &c->info;
  const nxvk_tuning *tu = c->tuning;
  uint32_t sg = d->subgroup_size;
  if (tu->dot_mv_off || (dtype != NXVK_F32 && dtype != NXVK_F16 && dtype != NXVK_BF16) || M == 0 || N == 0 ||
      batch == 0 || (M > MV_MAX && N > MV_MAX) || !d->subgroup_shuffle || sg < 4 || sg > 128 || (sg & (sg - 1)) ||
      d->min_subgroup_size != d->max_subgroup_size || batch > d->max_workgroup_count[2])
    return 1;
  bool rows = N <= MV_MAX && (M > MV_MAX || N <= M);
  /* f32 rows with n = 9..16: B in registers (dot_mvb.c) unless NXVK_DOT_MVB=off */
  if (rows && dtype == NXVK_F32) {
    int rc = nxvk_dot_mvb(r, dtype, out, A, B, C, M, N, K, batch);
    if (rc != 1) return rc;
  }
  /* the rows form with n >= 2: lanes over rows (dot_mvr.c) unless NXVK_DOT_MVR=off */
  if (rows && N >= 2) {
    int rc = nxvk_dot_mvr(r, dtype, out, A, B, C, M, N, K, batch);
    if (rc != 1) return rc;
  }
  /* f32 takes this kernel for matrix-vector products (n = 1: H100 2 326
   * against 1 911 GB/s at 4096, H200 3 924 against 3 467 at 8192) and stays
   * on dot_skinny.comp otherwise unless NXVK_DOT_MV is set: it matched or
   * beat this kernel's other layouts (bench/NOTES.md, dot_mv) */
  /* compiled form (H100, 13:25, 8192): f32 8192x8192x16 1 742 against
   * dot_skinny's 1 092 GB/s, 16x8192x8192 1 798 against 784; m = 1 stays
   * there (2 629, where 16-bit columns ran 1 900-2 230), and so do m < 8
   * (not measured) */
  bool f32_here = rows ? (N == 1 || tu->dot_mv_ct) : tu->dot_mv_ct && M >= 8;
  if (dtype == NXVK_F32 && !tu->dot_mv_on && !f32_here) return 1;
  uint32_t nb = rows ? N : M, nq = (nb + 3) / 4;
  uint32_t esz = (uint32_t)nxvk_dtype_size(dtype), V = 16 / esz;
  uint32_t maxwg = nxvk_max_workgroup_x(d);
  /* f32 n = 9..16 (rows, compiled form), unless T is set: 4 rows a subgroup, B's tile of one sub-tile
   * double-buffered, A's next sub-tile prefetched, the column quads over the two halves of the lanes (R 4
   * T 1 B 2 P 1 H 2).  H100, GB/s at 8192x8192xn (n = 16 / 12 / 9) and 16384x8192x16: the old form 1 760
   * / 1 517 / 1 480 and 1 852 (01:09); without H (T 1 B 2 P 1; T 4 P 1 WG 512 at n <= 12) 1 983 / 1 840 /
   * 1 851 and 2 177 (01:09); with H 2 032 / 2 067 / 1 903 and 2 227 (01:38); C 2 and 4 lost to each */
  bool wide32 = rows && tu->dot_mv_ct && esz == 4 && nb >= 9 && !tu->dot_mv[6];
  uint32_t wg = tu->dot_mv[1] ? tu->dot_mv[1] : 256;
  if (wg > maxwg) wg = nxvk_pow2_floor(maxwg);
  if (wg < sg) return 1;
  uint32_t nsg = wg / sg;
  uint32_t units = nxvk_compute_units(d);
  uint64_t want = 3ull * units;
  /* n = 1: the vector straight from memory (1), through shared memory as
   * vec4 over j (2; the spec-constant form's default: 1.2-1.4x faster than 1
   * on the H100) or as packed 16-byte vectors (3, the compile-time form only) */
  /* f32 keeps 2 (H100, 13:02: 8192x8192x1 2 771 GB/s on the old form's D = 2 against 2 258 with D = 3;
   * f16 D = 3 2 178 against 2 029 with D = 2) */
  uint32_t D = rows && nb == 1 ? (tu->dot_mv[4] ? tu->dot_mv[4] : tu->dot_mv_ct && esz == 2 ? 3 : 2) : 0;
  if (D == 3 && !tu->dot_mv_ct) D = 2;
  uint32_t bd = D == 1 ? 1u : D == 3 ? 2u : 0u;
  /* T > 0 (the compiled rows form, B's tile through shared memory as vec4
   * over j): B's tile of T sub-tiles, staged in coalesced loads (dot_mv.comp) */
  uint32_t T = rows && tu->dot_mv_ct && bd == 0 ? (wide32 ? 1 : tu->dot_mv[6]) : 0;
  /* B 2 (with T): two such tiles, the next staged while this one is summed, one barrier a tile */
  uint32_t nbt = T && (tu->dot_mv[7] == 2 || (wide32 && !tu->dot_mv[7])) ? 2 : 1;
  /* C 2 or 4 (with T): B's column quads split over C subgroups on the same R rows (A's rows read C times,
   * the repeats from L1 / L2), so a lane keeps R x n / C sums; H 2 (with T): over the two halves of a
   * subgroup's lanes, each lane's vectors of A shuffled to its partner in the other half (one read of A) */
  uint32_t cg = T && tu->dot_mv[8] > 1 ? tu->dot_mv[8] : 1, lh = T && (tu->dot_mv[9] == 2 || (wide32 && !tu->dot_mv[9])) ? 2 : 1;
  while (cg > nsg) cg /= 2;
  uint32_t rsg = nsg / cg; /* subgroups a workgroup over distinct rows */
  uint32_t R = 1, U, tile, gx;
  uint64_t shared;
  if (rows) {
    /* shared bytes read per byte of A: 16 nq / (R esz) per V elements ... kept <= ~4 */
    R = tu->dot_mv[0] ? tu->dot_mv[0] : (4 * nb + 4 * esz - 1) / (4 * esz);
    /* f32 with n = 3 and 4 two rows (H100, 23:20, 8192x8192xn GB/s: n = 4 R = 2 U = 2 2 844 against R = 1
     * U = 4's 2 180; n = 3 2 479-2 736 with R = 2 against 2 312) */
    if (!tu->dot_mv[0] && esz == 4 && nb >= 3 && R < 2) R = 2;
    if (!tu->dot_mv[0] && wide32) R = 4;
    if (R > 8) R = 8;
    if (R < 1) R = 1;
    /* the compile-time form keeps R x n sums a lane in registers: at most 64
     * (16-bit n = 16: R = 4, not 8) */
    if (tu->dot_mv_ct && !tu->dot_mv[0])
      while (R > 1 && R * nb > 64) R /= 2;
    /* fewer rows a subgroup while that leaves units without workgroups */
    if (!tu->dot_mv[0])
      while (R > 1 && (uint64_t)((M + rsg * R - 1) / (rsg * R)) * batch < units) R /= 2;
    /* 8 vectors a lane in flight for f32, 4 for 16-bit elements in the
     * compiled form (H100, 13:02: f16 8192x8192x1 U = 4 2 318 GB/s against
     * 2 178 at 8; 8192x8192x16 R = 4: U = 1 1 085 against 772 at 2) */
    /* n > 1 f32 (13:25): R = 4 U = 1 1 742 GB/s against U = 2 1 475 */
    uint32_t uw = tu->dot_mv_ct && (esz == 2 || nb > 1) ? 4 : 8;
    U = tu->dot_mv[2] ? tu->dot_mv[2] : (uw / R ? uw / R : 1);
    if (T) {
      /* nbt tiles of BT = T sg V U rows of 4 vec4 slots, and one after every V rows */
      while (T > 1 && (uint64_t)nbt * sg * U * T * (V * 4 + 1) * 16 > d->max_shared_memory) T--;
      while (U > 1 && (uint64_t)nbt * sg * U * T * (V * 4 + 1) * 16 > d->max_shared_memory) U /= 2;
      shared = (uint64_t)nbt * sg * U * T * (V * 4 + 1) * 16;
      tile = sg * V * U * T;
    } else {
      while (U > 1 && (uint64_t)sg * V * U * nq * 16 > d->max_shared_memory) U /= 2;
      shared = (uint64_t)sg * V * U * nq * 16;
      tile = sg * V * U;
    }
    uint64_t blocks = (M + (uint64_t)rsg * R - 1) / ((uint64_t)rsg * R);
    if (blocks > d->max_workgroup_count[0]) return 1;
    gx = (uint32_t)blocks;
  } else {
    U = tu->dot_mv[2] ? tu->dot_mv[2] : 4;
    uint64_t sa = (uint64_t)nsg * U * 4 * nq, sr = (uint64_t)nsg * nq * sg;
    shared = 16 * (sa > sr ? sa : sr);
    tile = nsg * U * 4;
    uint64_t blocks = (N + (uint64_t)sg * V - 1) / ((uint64_t)sg * V);
    if (blocks > d->max_workgroup_count[0]) return 1;
    gx = (uint32_t)blocks;
  }
  if (shared > d->max_shared_memory) return 1;
  /* split K: chunks of whole tiles, each at least MV_MIN_TILES of them */
  uint64_t groups = (uint64_t)gx * batch;
  uint32_t S = 1;
  if (tu->dot_mv[3]) S = tu->dot_mv[3];
  else if (groups < want && K >= 2 * MV_MIN_TILES * tile)
    S = (uint32_t)((want + groups - 1) / groups);
  /* columns, compiled form: a power of two (H100, 13:25: f16 1x8192x8192
   * S = 8 2 228 GB/s against 1 902 at the rule's 13; 16x8192x8192 794
   * against 688: 416 workgroups made a second, thin wave) */
  if (!tu->dot_mv[3] && !rows && tu->dot_mv_ct) S = nxvk_pow2_floor(S);
  uint32_t tiles = K ? (K + tile - 1) / tile : 1;
  if (!tu->dot_mv[3] && S > tiles / MV_MIN_TILES) S = tiles / MV_MIN_TILES;
  /* 16-bit results of n or m > 1 through the split form's f32 partials: the
   * direct form's rounding at the store spilled the sums to local memory
   * (13:25: rows n16r4u1 S = 1 120 registers + 256 bytes local, 108 GB/s,
   * against S = 2 127 + 0, 1 076) */
  if (!tu->dot_mv[3] && tu->dot_mv_ct && nb > 1 && out != NXVK_F32 && S < 2 && tiles >= 2) S = 2;
  if (S > tiles) S = tiles;
  if (S < 1) S = 1;
  if (S > 64) S = 64;
  if (S > d->max_workgroup_count[1]) S = d->max_workgroup_count[1];
  uint32_t KC = (tiles + S - 1) / S * tile;
  if (S > 1) S = (K + KC - 1) / KC; /* every chunk nonempty */
  uint64_t mn = (uint64_t)M * N;
  if (S > 1 && !nxvk_mv_partials_fit(d, S, batch, mn))
    S = 1, KC = tiles * tile;
  if (S == 1) KC = K;
  /* the kernel's flat indices are 32-bit */
  if ((uint64_t)batch * M * K > UINT32_MAX || (uint64_t)batch * K * N > UINT32_MAX ||
      (uint64_t)batch * mn > UINT32_MAX)
    return 1;
  bool whole = rows ? K % V == 0 : N % V == 0;
  bool o32 = out == NXVK_F32 && dtype != NXVK_F32;
  uint32_t meta[6] = {M, N, K, batch, KC, whole ? 1u : 0u};
  uint32_t spec[7] = {wg, nb, R, U, sg, S > 1 ? 1u : 0u, bd};
  char name[96], tsfx[24] = "";
  const char *dt = nxvk_dtype_name(dtype);
  if (T)
    snprintf(tsfx, sizeof tsfx, "t%u%s%s%s", T, nbt == 2 ? "b2" : "", cg == 2 ? "c2" : cg == 4 ? "c4" : "",
             lh == 2 ? "h2" : "");
  if (tu->dot_mv_ct) /* the compile-time form: NB R U BD P T in the kernel's name (the sums in registers) */
    snprintf(name, sizeof name, "dot_mvk_%s%s_n%ur%uu%ud%u%s%s_%s", rows ? "rows" : "cols", o32 ? "32" : "", nb,
             rows ? R : 1u, U, bd, rows && (tu->dot_mv[5] || wide32) ? "p1" : "", tsfx, dt);
  else
    snprintf(name, sizeof name, "dot_mv_%s%s_%s", rows ? "rows" : "cols", o32 ? "32" : "", dt);
  return nxvk_dot_mv_run(r, name, spec, 7, meta, 6, A, B, C, out, gx, S, batch, mn, NXVK_MV_PASS);
}
