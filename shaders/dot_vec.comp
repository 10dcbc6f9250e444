#version 450
// dot_vec.comp - C = A x B per batch, the GPU kernel.  NT invocations on a
// grid of TXN x TYN (16 x 16; 8 x 16 as dot_vec128_f64) own a BM x BN block
// of C, BM = TYN Q RB and BN = TXN Q CB, and walk K in steps of BK.  Each
// invocation accumulates RB x CB sub-blocks of Q x Q: rows rb*TYN*Q + ty*Q
// + i, columns cb*TXN*Q + tx*Q + j, so every shared-memory
// read is a Q-vector and a quarter warp reads 16 contiguous vectors (no bank
// conflicts).  Shared memory is double buffered: the next tile is loaded
// from global memory into registers while the current one is multiplied, then
// stored into the other buffer, so each step needs a single barrier.
// Global loads and C stores are Q-vectors when K % Q == 0 (A) and
// N % Q == 0 (B, C), scalars with per-element bounds otherwise.
// Q = 4 (vec4) for f32, 2 (dvec2) for f64.  RB, CB, BK: specialization
// constants chosen per device and shape (dot.c).  The default for f32 on
// GPUs, f32 and f64.
// Split K (compiled with -DSPLITK as dot_vec_split_<dtype>): the k range is
// cut into S chunks of KC (a multiple of BK); workgroup z = batch index * S +
// chunk writes its partial block to C + z*M*N (a scratch of S*batch*M*N) and
// dot_ksum.comp adds the S partials in chunk order (f32 products whose chunks
// tile K run the unsplit kernel on a batch of chunk copies instead: dot.c,
// split_as_batch).  It gives products with
// few blocks of C (1000x3000x700: 96 blocks for 132 SMs) enough workgroups
// to fill the GPU.  A separate variant because the unsplit kernel built from
// the split source measured 17% slower at 4096^2 on an H100 (bench/NOTES.md):
// without SPLITK this file compiles to the same SPIR-V as before split K.
// Strided (compiled with -DSTRIDED as dot_vec_strided_f32): the batch form of
// split K without copying A's k chunks: batch index z = product * SCH +
// chunk, K = the chunk's extent, A's rows K * SCH long (SCH a specialization
// constant: as a runtime meta word the kernel ran 15% slower at 4096^2 on an
// H200 even with the rows K long; with SCH = 3 or 5 it is ~8% slower than
// with 4, so dot.c takes it only for powers of two; bench/NOTES.md).
// f64: NVIDIA's compiler kept the accumulators in local memory (its
// statistics: Local Memory Size = the bytes of acc; ~1 TFLOPS at any tile),
// so for f64 every access to acc, x and y has a literal index (macros over
// at most 4 x 4 blocks, guarded by the specialization constants), whether or
// not the compiler unrolls the loops around them.
// f64 also places each 32-invocation group (an NVIDIA warp) on LW columns x
// 32/LW rows of the 16 x 16 invocation grid (LW = 16: 16 x 2, f32's layout).
// On an H200 f64 2,2,16 ran 19.0 TFLOPS at 4096^2 with LW = 2 against 16.1
// with 16, 4 or 8.  f32 keeps its layout and its measured SPIR-V: the same
// code in f32 measured no faster at any LW and the rebuilt kernel 15% slower
// at LW = 16 (bench/NOTES.md).
// dot_vec128_f64 (8 x 16 = 128 invocations, CB doubled: the same tile with
// 4 x 8 doubles per invocation, 154 registers, three workgroups per SM)
// measured 19.8 TFLOPS at 4096^2 on an H200 against 18.8 for 16 x 16.
// Aligned (compiled with -DALIGNED as dot_vec_aligned_f32 and
// dot_vec128_aligned_f32, f32 only): for products whose M, N and K are whole
// tiles (BM, BN, BK), with no bounds tests and only vector loads and stores,
// and the workgroups launched in groups of GM row tiles (GM a specialization
// constant; 1: row after row), so that the blocks resident at once share
// A's and B's tiles in L2.  Their own SPIR-V: the unaligned kernels'
// is unchanged (bench/NOTES.md, "f32 tiled at 0.9").
// Its forms (specialization constants 4-7, each a tuning knob, dot.c):
// FRAG (shared reads one k step ahead), XB (the next tile's stores, the
// barrier and its first reads before the last k step's products: f32's
// default on NVIDIA with FRAG on the 8 x 16 grid, 2,4,8), KU (BK as a loop
// over unrolled passes), LWA (a warp's grid columns), NK (N and K compiled
// in); XS (-DXSTORE, dot_vec[128]_aligned_xs_f32) stores the next tile
// mid-tile.  Each source change moved the driver's code by up to 17%, so
// the measured kernels keep their SPIR-V (bench/NOTES.md, "f32 at 0.9,
// second pass").
// Grid: (ceil(N/BN), ceil(M/BM), batch), batch * S with SPLITK.
// meta: [0] M [1] N [2] K [3] batch [4] bit 0: A vector loads, bit 1: B and C
//       [5] S [6] KC (SPLITK)
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "dtype.glsl"

#if defined(DT_f64)
#define Q 2u
#define VT dvec2
#else
#define Q 4u
#define VT vec4
#endif

// The invocation grid: TXN columns x TYN rows, NT = TXN * TYN invocations
// (Makefile -D for other sizes; the default 16 x 16 is the one f32 uses).
#ifndef NT
#define NT_LAYOUT 256
#define NT 256u
#define NT_M1 255u   // NT - 1 as a literal: the measured SPIR-V
#define TXN 16u
#define TYN 16u
#endif
layout(local_size_x = NT_LAYOUT) in;
layout(constant_id = 0) const uint RB = 2u;   // Q-row blocks per invocation
layout(constant_id = 1) const uint CB = 2u;   // Q-column blocks per invocation
layout(constant_id = 2) const uint BK = 8u;   // a multiple of Q
#if defined(DT_f64)
layout(constant_id = 3) const uint LW = 2u;   // 2, 4, 8 or 16
#endif
#if defined(ALIGNED)
#if defined(DT_f64) || defined(SPLITK) || defined(STRIDED)
#error "ALIGNED is an f32 kernel without split K"
#endif
layout(constant_id = 3) const uint GM = 1u;   // row tiles per launch group
layout(constant_id = 4) const uint FL = 0u;   // bit 0 FRAG, bits 1-2 XB, bits 3-7 XS (XSTORE)
const uint FRAG = FL & 1u;   // 1: shared reads one k ahead in the source order
const uint XB = (FL >> 1u) & 3u;   // the tile's last XB k steps' products after the barrier (2: FRAG only)
#if defined(XSTORE)
// its own SPIR-V (dot_vec[128]_aligned_xs_f32): the kernels measured
// without it keep theirs byte for byte (bench/NOTES.md, "Measuring")
const uint XS = (FL >> 3u) & 31u;  // XB: the next tile stored before step XS's products (0: at the barrier)
#endif
layout(constant_id = 5) const uint KU = 0u;   // k steps a pass of a loop not unrolled (0: BK, all unrolled)
layout(constant_id = 6) const uint LWA = 0u;  // a warp's columns of the grid (0: TXN, the default layout)
layout(constant_id = 7) const uint NK = 0u;   // N << 16 | K compiled in (0: N and K from meta)
#endif
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
// each operand twice: as scalars and as Q-vectors (the same descriptor)
layout(std430, binding = 1) readonly buffer A { ST a[]; };
layout(std430, binding = 1) readonly buffer AV { VT av[]; };
layout(std430, binding = 2) readonly buffer B { ST b[]; };
layout(std430, binding = 2) readonly buffer BV { VT bv[]; };
layout(std430, binding = 3) writeonly buffer C { ST c[]; };
layout(std430, binding = 3) writeonly buffer CV { VT cv[]; };

const uint BMV = TYN * RB;           // tile rows / Q
const uint BNV = TXN * CB;           // tile columns / Q
const uint ASTR = BMV + 1u;          // +1 vector: the k rows of As fall in other banks
const uint KQ = BK / Q;              // vectors along k in one row of the A tile
const uint A_VECS = TYN * RB * BK;   // Q-vectors in the A tile (BM * BK / Q)
const uint B_VECS = TXN * CB * BK;   // and in the B tile
const uint A_LOADS = (A_VECS + NT_M1) / NT;
const uint B_LOADS = (B_VECS + NT_M1) / NT;

shared VT As[2u * BK * ASTR];        // [buffer][k][row / Q]: A transposed
shared VT Bs[2u * BK * BNV];         // [buffer][k][column / Q]

#if defined(SPLITK)
uint M, N, K, KE, abase, bbase, row0, col0;   // KE: end of this chunk's k range
#define KEND KE
#elif defined(STRIDED)
layout(constant_id = 3) const uint SCH = 1u;   // k chunks per product (f32 only)
uint M, N, K, abase, bbase, row0, col0;        // K: the chunk's extent
#define KEND K
#define A_ROW (K * SCH)
#else
uint M, N, K, abase, bbase, row0, col0;
#define KEND K
#endif
#if defined(ALIGNED)
// NK != 0: N and K are constants, so addresses and the loop's bound fold
#define KV (NK != 0u ? (NK & 0xffffu) : K)
#define NV (NK != 0u ? (NK >> 16) : N)
#undef KEND
#define KEND KV
#define A_ROW KV
#endif
#ifndef A_ROW
#define A_ROW K
#endif
bool vec_a, vec_b;
#if defined(DT_f64)
uint tx, ty;   // this invocation's column and row in the TXN x TYN grid
#endif

VT load_a(uint v, uint k0) {
  uint r = v / KQ, gr = row0 + r, gk = k0 + (v - r * KQ) * Q;
#if defined(ALIGNED)
  return av[(abase + gr * A_ROW + gk) / Q];
#else
  if (vec_a) return (gr < M && gk < KEND) ? av[(abase + gr * A_ROW + gk) / Q] : VT(0);
  VT x = VT(0);
  [[unroll]] for (uint e = 0u; e < Q; e++)
    if (gr < M && gk + e < KEND) x[e] = T(a[abase + gr * A_ROW + gk + e]);
  return x;
#endif
}

VT load_b(uint v, uint k0) {
  uint k = v / BNV, gk = k0 + k, gc = col0 + (v - k * BNV) * Q;
#if defined(ALIGNED)
  return bv[(bbase + gk * NV + gc) / Q];
#else
  if (vec_b) return (gk < KEND && gc < N) ? bv[(bbase + gk * N + gc) / Q] : VT(0);
  VT x = VT(0);
  [[unroll]] for (uint e = 0u; e < Q; e++)
    if (gk < KEND && gc + e < N) x[e] = T(b[bbase + gk * N + gc + e]);
  return x;
#endif
}

// registers -> shared buffer `buf` (A transposed: k-major)
void store_tile(uint buf, VT ra[A_LOADS], VT rb[B_LOADS]) {
  uint t = gl_LocalInvocationID.x;
  [[unroll]] for (uint l = 0u; l < A_LOADS; l++) {
    uint v = t + l * NT;
    if (v >= A_VECS) break;
    uint r = v / KQ, kq = v - r * KQ;
    [[unroll]] for (uint e = 0u; e < Q; e++) As[buf * BK * ASTR + (kq * Q + e) * ASTR + r / Q][r % Q] = ra[l][e];
  }
  [[unroll]] for (uint l = 0u; l < B_LOADS; l++) {
    uint v = t + l * NT;
    if (v >= B_VECS) break;
    Bs[buf * BK * BNV + v] = rb[l];
  }
}

#if defined(DT_f64)
// literal-index expansion over i < 4 row blocks, q < Q, j < 4 column blocks
#define ACC(i, q, j) acc[((i) * 2u + (q)) * 4u + (j)]
#define EACH_J(F, i, q) F(i, q, 0u) F(i, q, 1u) F(i, q, 2u) F(i, q, 3u)
#define EACH_QJ(F, i) EACH_J(F, i, 0u) EACH_J(F, i, 1u)
#define EACH(F) EACH_QJ(F, 0u) EACH_QJ(F, 1u) EACH_QJ(F, 2u) EACH_QJ(F, 3u)
#define ACC_ZERO(i, q, j) ACC(i, q, j) = VT(0);
#define ACC_FMA(i, q, j) if ((i) < RB && (j) < CB) ACC(i, q, j) = fma(VT(x[i][q]), y[j], ACC(i, q, j));
#define ACC_STORE(i, q, j) if ((i) < RB && (j) < CB) store_c(i, q, j, zout, ACC(i, q, j));
#define LOAD_X(i) if ((i) < RB) x[i] = As[abuf + kk * ASTR + (i) * TYN + ty];
#define LOAD_Y(j) if ((j) < CB) y[j] = Bs[bbuf + kk * BNV + (j) * TXN + tx];

void store_c(uint i, uint q, uint j, uint zout, VT v) {
  uint gr = row0 + i * TYN * Q + ty * Q + q;
  uint gc = col0 + j * TXN * Q + tx * Q;
  if (gr >= M) return;
  uint o = zout * M * N + gr * N + gc;
  if (vec_b && gc < N) {
    cv[o / Q] = v;
  } else {
    for (uint e = 0u; e < Q; e++)
      if (gc + e < N) c[o + e] = ST(v[e]);
  }
}
#endif

void main() {
  uint m = pc.meta_off;
  M = meta[m];
  N = meta[m + 1u];
  K = meta[m + 2u];
  vec_a = (meta[m + 4u] & 1u) != 0u;
  vec_b = (meta[m + 4u] & 2u) != 0u;
#if defined(SPLITK)
  uint S = meta[m + 5u], KC = meta[m + 6u];
  uint z = gl_WorkGroupID.z, bi = z / S, k1 = (z - bi * S) * KC;
  KE = min(K, k1 + KC);
#define KSTART k1
#define ZOUT z
#else
  uint bi = gl_WorkGroupID.z;
#define KSTART 0u
#define ZOUT bi
#endif
#if defined(ALIGNED)
  // launch order: groups of GM row tiles, walked column by column
  uint bx = gl_WorkGroupID.x, by = gl_WorkGroupID.y;
  if (GM > 1u) {
    uint gx = gl_NumWorkGroups.x, id = by * gx + bx, per = GM * gx, g = id / per;
    uint first = g * GM, rows = min(gl_NumWorkGroups.y - first, GM), in_g = id - g * per;
    by = first + in_g % rows;
    bx = in_g / rows;
  }
  row0 = by * BMV * Q;
  col0 = bx * BNV * Q;
#else
  row0 = gl_WorkGroupID.y * BMV * Q;
  col0 = gl_WorkGroupID.x * BNV * Q;
#endif
  uint t = gl_LocalInvocationID.x;
#if defined(DT_f64)
  uint lane = t % 32u, w = t / 32u, wx = TXN / LW;   // NT/32 groups of 32: wx across
  tx = (w % wx) * LW + lane % LW;
  ty = (w / wx) * (32u / LW) + lane / LW;
#elif defined(ALIGNED)
  uint tx = t % TXN, ty = t / TXN;
  if (LWA != 0u) {   // NT/32 warps of LWA columns x 32/LWA rows, TXN/LWA across
    uint lane = t % 32u, w = t / 32u, wx = TXN / LWA;
    tx = (w % wx) * LWA + lane % LWA;
    ty = (w / wx) * (32u / LWA) + lane / LWA;
  }
#else
  uint tx = t % TXN, ty = t / TXN;
#endif
#if defined(STRIDED)
  uint p = bi / SCH;
  abase = p * M * K * SCH + (bi - p * SCH) * K;   // product p, k chunk bi - p SCH of its A
#elif defined(ALIGNED)
  abase = bi * M * KV;
#else
  abase = bi * M * K;
#endif
#if defined(ALIGNED)
  bbase = bi * KV * NV;
#else
  bbase = bi * K * N;
#endif

  VT ra[A_LOADS], rb[B_LOADS];
#if defined(DT_f64)
  VT acc[4u * Q * 4u];
  EACH(ACC_ZERO)
#else
  VT acc[RB * Q * CB];   // [row block][row in block][column block]
  [[unroll]] for (uint i = 0u; i < RB * Q * CB; i++) acc[i] = VT(0);
#endif

  // tile 0 into buffer 0; then per step: load the next tile into registers
  // (its latency hidden behind the multiplication), multiply this one, store
  // the next into the other buffer, one barrier
  [[unroll]] for (uint l = 0u; l < A_LOADS; l++)
    if (t + l * NT < A_VECS) ra[l] = load_a(t + l * NT, KSTART);
  [[unroll]] for (uint l = 0u; l < B_LOADS; l++)
    if (t + l * NT < B_VECS) rb[l] = load_b(t + l * NT, KSTART);
  store_tile(0u, ra, rb);
  barrier();
  uint buf = 0u;
#if defined(ALIGNED)
  // XB: the next tile's stores, the barrier and its first shared reads come
  // before the last k step's multiply-adds (their values read before the
  // barrier), so that those hide the reads' latency after the barrier; the
  // tile's first k step runs on values read in the step before
  if (XB != 0u) {
    // slot 0: k step 0 of this tile; slot 1: the step in hand; slot 2
    // (XB = 2): the next tile's step 0 while steps BK - 2 and BK - 1 are in 0 and 1
    VT xf[3u * RB], yf[3u * CB];
    [[unroll]] for (uint i = 0u; i < RB; i++) xf[i] = As[i * TYN + ty];
    [[unroll]] for (uint j = 0u; j < CB; j++) yf[j] = Bs[j * TXN + tx];
    for (uint k0 = 0u; k0 < KEND; k0 += BK) {
      bool more = k0 + BK < KEND;
      if (more) {
        [[unroll]] for (uint l = 0u; l < A_LOADS; l++)
          if (t + l * NT < A_VECS) ra[l] = load_a(t + l * NT, k0 + BK);
        [[unroll]] for (uint l = 0u; l < B_LOADS; l++)
          if (t + l * NT < B_VECS) rb[l] = load_b(t + l * NT, k0 + BK);
      }
      uint abuf = buf * BK * ASTR, bbuf = buf * BK * BNV, nb = buf ^ 1u;
      [[unroll]] for (uint kk = 0u; kk < BK; kk++) {
        // FRAG: slot kk & 1 holds this step, the next step's reads go to
        // the other; else slot 0 holds step 0 and each later step is read
        // into slot 1 just before its products (the last, before the barrier)
        uint cx = FRAG == 1u ? (kk & 1u) * RB : (kk == 0u ? 0u : RB);
        uint cy = FRAG == 1u ? (kk & 1u) * CB : (kk == 0u ? 0u : CB);
        if (FRAG == 0u && kk > 0u) {
          [[unroll]] for (uint i = 0u; i < RB; i++) xf[RB + i] = As[abuf + kk * ASTR + i * TYN + ty];
          [[unroll]] for (uint j = 0u; j < CB; j++) yf[CB + j] = Bs[bbuf + kk * BNV + j * TXN + tx];
        }
        if (FRAG == 1u && kk + 1u < BK) {
          [[unroll]] for (uint i = 0u; i < RB; i++) xf[RB - cx + i] = As[abuf + (kk + 1u) * ASTR + i * TYN + ty];
          [[unroll]] for (uint j = 0u; j < CB; j++) yf[CB - cy + j] = Bs[bbuf + (kk + 1u) * BNV + j * TXN + tx];
        }
#if defined(XSTORE)
        if (XS != 0u && kk == XS && more) store_tile(nb, ra, rb);   // the other buffer is free since the barrier
#endif
        if (kk + XB == BK) {
          // the last XB steps (their values in registers): the next tile
          // into the other buffer, the barrier, and its first step's reads
          // into slot 0 (BK is even: the FRAG form's last step is in slot
          // 1), or slot 2 while slot 0 holds step BK - 2
          uint ns = XB == 2u ? 2u : 0u;
#if defined(XSTORE)
          if (XS == 0u && more) store_tile(nb, ra, rb);
#else
          if (more) store_tile(nb, ra, rb);
#endif
          barrier();
          if (more) {
            [[unroll]] for (uint i = 0u; i < RB; i++) xf[ns * RB + i] = As[nb * BK * ASTR + i * TYN + ty];
            [[unroll]] for (uint j = 0u; j < CB; j++) yf[ns * CB + j] = Bs[nb * BK * BNV + j * TXN + tx];
          }
        }
        [[unroll]] for (uint i = 0u; i < RB; i++)
          [[unroll]] for (uint q = 0u; q < Q; q++)
            [[unroll]] for (uint j = 0u; j < CB; j++)
              acc[(i * Q + q) * CB + j] = fma(VT(xf[cx + i][q]), yf[cy + j], acc[(i * Q + q) * CB + j]);
        if (XB == 2u && kk + 1u == BK) {
          [[unroll]] for (uint i = 0u; i < RB; i++) xf[i] = xf[2u * RB + i];
          [[unroll]] for (uint j = 0u; j < CB; j++) yf[j] = yf[2u * CB + j];
        }
      }
      buf = nb;
    }
  } else
#endif
  for (uint k0 = KSTART; k0 < KEND; k0 += BK) {
    bool more = k0 + BK < KEND;
    if (more) {
      [[unroll]] for (uint l = 0u; l < A_LOADS; l++)
        if (t + l * NT < A_VECS) ra[l] = load_a(t + l * NT, k0 + BK);
      [[unroll]] for (uint l = 0u; l < B_LOADS; l++)
        if (t + l * NT < B_VECS) rb[l] = load_b(t + l * NT, k0 + BK);
    }
    uint abuf = buf * BK * ASTR, bbuf = buf * BK * BNV;
    [[unroll]] for (uint kk = 0u; kk < BK; kk++) {
#if defined(DT_f64)
      VT x[4], y[4];
      LOAD_X(0u) LOAD_X(1u) LOAD_X(2u) LOAD_X(3u)
      LOAD_Y(0u) LOAD_Y(1u) LOAD_Y(2u) LOAD_Y(3u)
      EACH(ACC_FMA)
#else
#if defined(ALIGNED)
      if (FRAG == 1u || KU != 0u) break;   // the loops below
#endif
      VT x[RB], y[CB];
      [[unroll]] for (uint i = 0u; i < RB; i++) x[i] = As[abuf + kk * ASTR + i * TYN + ty];
      [[unroll]] for (uint j = 0u; j < CB; j++) y[j] = Bs[bbuf + kk * BNV + j * TXN + tx];
      [[unroll]] for (uint i = 0u; i < RB; i++)
        [[unroll]] for (uint q = 0u; q < Q; q++)
          [[unroll]] for (uint j = 0u; j < CB; j++)
            acc[(i * Q + q) * CB + j] = fma(VT(x[i][q]), y[j], acc[(i * Q + q) * CB + j]);
#endif
    }
#if defined(ALIGNED)
    // FRAG = 1: the next k's shared reads written before this k's
    // multiply-adds (fragments double-buffered in registers)
    if (FRAG == 1u) {
      VT xf[2u * RB], yf[2u * CB];
      [[unroll]] for (uint i = 0u; i < RB; i++) xf[i] = As[abuf + i * TYN + ty];
      [[unroll]] for (uint j = 0u; j < CB; j++) yf[j] = Bs[bbuf + j * TXN + tx];
      if (KU == 0u) {
        [[unroll]] for (uint kk = 0u; kk < BK; kk++) {
          uint cx = (kk & 1u) * RB, cy = (kk & 1u) * CB, nx = RB - cx, ny = CB - cy;
          if (kk + 1u < BK) {
            [[unroll]] for (uint i = 0u; i < RB; i++) xf[nx + i] = As[abuf + (kk + 1u) * ASTR + i * TYN + ty];
            [[unroll]] for (uint j = 0u; j < CB; j++) yf[ny + j] = Bs[bbuf + (kk + 1u) * BNV + j * TXN + tx];
          }
          [[unroll]] for (uint i = 0u; i < RB; i++)
            [[unroll]] for (uint q = 0u; q < Q; q++)
              [[unroll]] for (uint j = 0u; j < CB; j++)
                acc[(i * Q + q) * CB + j] = fma(VT(xf[cx + i][q]), yf[cy + j], acc[(i * Q + q) * CB + j]);
        }
      } else {
        // KU even (dot.c): a pass starts on fragment slot 0 and leaves the
        // next pass's first fragments in slot 0
        [[dont_unroll]] for (uint k1 = 0u; k1 < BK; k1 += KU) {
          [[unroll]] for (uint k2 = 0u; k2 < KU; k2++) {
            uint kk = k1 + k2;
            uint cx = (k2 & 1u) * RB, cy = (k2 & 1u) * CB, nx = RB - cx, ny = CB - cy;
            if (kk + 1u < BK) {
              [[unroll]] for (uint i = 0u; i < RB; i++) xf[nx + i] = As[abuf + (kk + 1u) * ASTR + i * TYN + ty];
              [[unroll]] for (uint j = 0u; j < CB; j++) yf[ny + j] = Bs[bbuf + (kk + 1u) * BNV + j * TXN + tx];
            }
            [[unroll]] for (uint i = 0u; i < RB; i++)
              [[unroll]] for (uint q = 0u; q < Q; q++)
                [[unroll]] for (uint j = 0u; j < CB; j++)
                  acc[(i * Q + q) * CB + j] = fma(VT(xf[cx + i][q]), yf[cy + j], acc[(i * Q + q) * CB + j]);
          }
        }
      }
    } else if (KU != 0u) {
      // KU k steps unrolled a pass of a loop that is not: BK = 16 in the
      // registers of BK = 8's unrolled body
      [[dont_unroll]] for (uint k1 = 0u; k1 < BK; k1 += KU) {
        [[unroll]] for (uint k2 = 0u; k2 < KU; k2++) {
          uint kk = k1 + k2;
          VT x[RB], y[CB];
          [[unroll]] for (uint i = 0u; i < RB; i++) x[i] = As[abuf + kk * ASTR + i * TYN + ty];
          [[unroll]] for (uint j = 0u; j < CB; j++) y[j] = Bs[bbuf + kk * BNV + j * TXN + tx];
          [[unroll]] for (uint i = 0u; i < RB; i++)
            [[unroll]] for (uint q = 0u; q < Q; q++)
              [[unroll]] for (uint j = 0u; j < CB; j++)
                acc[(i * Q + q) * CB + j] = fma(VT(x[i][q]), y[j], acc[(i * Q + q) * CB + j]);
        }
      }
    }
#endif
    buf ^= 1u;
    if (more) store_tile(buf, ra, rb);
    barrier();
  }
#if defined(DT_f64)
  uint zout = ZOUT;
  EACH(ACC_STORE)
#else
  [[unroll]] for (uint i = 0u; i < RB; i++)
    [[unroll]] for (uint q = 0u; q < Q; q++) {
      uint gr = row0 + i * TYN * Q + ty * Q + q;
#if !defined(ALIGNED)
      if (gr >= M) continue;
#endif
      [[unroll]] for (uint j = 0u; j < CB; j++) {
        uint gc = col0 + j * TXN * Q + tx * Q;
        VT v = acc[(i * Q + q) * CB + j];
#if defined(ALIGNED)
        uint o = ZOUT * M * NV + gr * NV + gc;
        cv[o / Q] = v;
#else
        uint o = ZOUT * M * N + gr * N + gc;   // ZOUT: z with SPLITK
        if (vec_b && gc < N) {
          cv[o / Q] = v;
        } else {
          [[unroll]] for (uint e = 0u; e < Q; e++)
            if (gc + e < N) c[o + e] = ST(v[e]);
        }
#endif
      }
    }
#endif
}
