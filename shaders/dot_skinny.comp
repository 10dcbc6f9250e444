#version 450
// dot_skinny.comp - matrix-vector and skinny products: C = A x B per batch
// where N (-DNSKINNY: "rows") or M (-DMSKINNY: "columns") is at most 16.
// Such a product is a pass over the large operand, so the kernel streams it
// once with coalesced reads and keeps the few sums of every output in
// registers, reduced through shared memory at the end.
//
// NSKINNY (N <= 16): a workgroup owns RB rows of A at a time (blocks
//   x, x + gx, ...), RPL = 2 rows for each lane group of LG invocations; B
//   goes through shared memory a k tile of KT rows at a time, transposed
//   (Bs[j][k], padded against bank conflicts), so each tile is read from
//   memory once per RB rows and not once per row.  A lane group reads its
//   rows at consecutive k (coalesced), each lane keeping RPL x NB sums; the
//   LG lanes' sums are reduced in shared memory once per block.
//   Grid: (min(ceil(M / RB), limit), 1, batch).
// MSKINNY (M <= 16): the WG invocations are CW columns x KS k lanes; a
//   workgroup owns CW consecutive columns of B and the k chunk
//   [y * KC, (y + 1) * KC): each warp reads CW consecutive elements of a row
//   of B, multiplying them by the NB elements of A's column k (the same for
//   every invocation: a broadcast) into NB sums; the KS lanes are reduced in
//   shared memory.  With S = gy > 1 chunks the partial blocks go to a
//   scratch [batch][S][M][N] that dot_ksum.comp sums in chunk order.
//   Grid: (ceil(N / CW), S, batch).
// NB (constant 0) is N (rows) or M (columns): the sums per invocation.
// meta: [0] M [1] N [2] K [3] batch [4] KC (columns: the chunk of k)
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"

// 16 x WG sums in shared memory: 16 KiB for f32 and f64 alike
#if defined(DT_f64)
#define WG 128u
#else
#define WG 256u
#endif
#define NMAX 16u
#define CW 64u
#define KS (WG / CW)
#define LG 32u                    // NSKINNY: lanes per group
#define RPL 2u                    // NSKINNY: rows per group
#define RB (WG / LG * RPL)        // NSKINNY: rows per block
#define KT WG                     // NSKINNY: k rows of B per tile

layout(local_size_x = WG) in;
layout(constant_id = 0) const uint NB = 1u;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) readonly buffer A { ST a[]; };
layout(std430, binding = 2) readonly buffer B { ST b[]; };
layout(std430, binding = 3) writeonly buffer C { ST c[]; };

#if defined(NSKINNY)
// the B tile during the k loop, then the lanes' sums of one row per group
// (twice: RPL rows), NMAX rows of LG + 1 per group
#define SH_TILE (NMAX * (KT + 1u))
#define SH_RED ((WG / LG) * NMAX * (LG + 1u))
shared T sh[SH_TILE > SH_RED ? SH_TILE : SH_RED];
#else
shared T red[NMAX * WG];
#endif

void main() {
  uint m = pc.meta_off;
  uint M = meta[m], N = meta[m + 1u], K = meta[m + 2u];
  uint bi = gl_WorkGroupID.z, t = gl_LocalInvocationID.x;
  uint abase = bi * M * K, bbase = bi * K * N;
  T acc[NMAX];
#if defined(NSKINNY)
  T acc2[NMAX];
#endif
#if defined(NSKINNY)
  uint g = t / LG, lane = t % LG;
  for (uint rb = gl_WorkGroupID.x * RB; rb < M; rb += gl_NumWorkGroups.x * RB) {
    uint r0 = rb + g * RPL;
    for (uint j = 0u; j < NB; j++) {
      acc[j] = T(0);
      acc2[j] = T(0);
    }
    for (uint k0 = 0u; k0 < K; k0 += KT) {
      barrier(); // the previous tile (or block's sums) is no longer read
      // rows k0 .. k0 + KT of B are contiguous: coalesced reads, stored transposed
      for (uint i = t; i < KT * NB; i += WG) {
        uint kk = i / NB, j = i % NB;
        sh[j * (KT + 1u) + kk] = k0 + kk < K ? T(b[bbase + (k0 + kk) * NB + j]) : T(0);
      }
      barrier();
      uint kend = min(KT, K - k0);
      if (r0 + 1u < M) {
        uint a0 = abase + r0 * K + k0, a1 = a0 + K;
        for (uint kk = lane; kk < kend; kk += LG) {
          T x0 = T(a[a0 + kk]), x1 = T(a[a1 + kk]);
          for (uint j = 0u; j < NB; j++) {
            T bv = sh[j * (KT + 1u) + kk];
            acc[j] = fma(x0, bv, acc[j]);
            acc2[j] = fma(x1, bv, acc2[j]);
          }
        }
      } else if (r0 < M) {
        uint a0 = abase + r0 * K + k0;
        for (uint kk = lane; kk < kend; kk += LG) {
          T x0 = T(a[a0 + kk]);
          for (uint j = 0u; j < NB; j++) acc[j] = fma(x0, sh[j * (KT + 1u) + kk], acc[j]);
        }
      }
    }
    for (uint h = 0u; h < RPL; h++) {
      barrier();
      for (uint j = 0u; j < NB; j++) sh[(g * NMAX + j) * (LG + 1u) + lane] = h == 0u ? acc[j] : acc2[j];
      barrier();
      for (uint o = t; o < (WG / LG) * NB; o += WG) {
        uint gl = o / NB, j = o % NB, row = rb + gl * RPL + h;
        if (row < M) {
          uint base = (gl * NMAX + j) * (LG + 1u);
          T s = sh[base];
          for (uint l = 1u; l < LG; l++) s += sh[base + l];
          c[bi * M * NB + row * NB + j] = ST(s);
        }
      }
    }
  }
#else
  uint KC = meta[m + 4u], S = gl_NumWorkGroups.y;
  uint tx = t % CW, ty = t / CW;
  uint col = gl_WorkGroupID.x * CW + tx;
  uint k0 = gl_WorkGroupID.y * KC, k1 = min(K, k0 + KC);
  for (uint i = 0u; i < NB; i++) acc[i] = T(0);
  if (col < N) {
    for (uint k = k0 + ty; k < k1; k += KS) {
      T bv = T(b[bbase + k * N + col]);
      for (uint i = 0u; i < NB; i++) acc[i] = fma(T(a[abase + i * K + k]), bv, acc[i]);
    }
  }
  for (uint i = 0u; i < NB; i++) red[(i * KS + ty) * CW + tx] = acc[i];
  barrier();
  if (ty == 0u && col < N) {
    // out: C itself (S = 1) or the scratch block [bi][y] of dot_ksum
    uint obase = (bi * S + gl_WorkGroupID.y) * NB * N;
    for (uint i = 0u; i < NB; i++) {
      T s = red[(i * KS) * CW + tx];
      for (uint l = 1u; l < KS; l++) s += red[(i * KS + l) * CW + tx];
      c[obase + i * N + col] = ST(s);
    }
  }
#endif
}
