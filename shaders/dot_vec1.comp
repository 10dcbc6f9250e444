#version 450
// dot_vec1.comp - the single-buffered predecessor of dot_vec.comp, kept as
// a variant to measure it against (it was the f64 default until dot_vec.comp
// kept its f64 accumulators in registers; bench/NOTES.md).
// C = A x B per batch: 256 invocations (16 x 16) own a
// TILE x TILE block of C, TILE = 32 * Q, walking K in steps of BK = 8.  Each
// invocation accumulates a (2Q) x (2Q) block as 2 x 2 sub-blocks of Q x Q,
// rows {ty*Q.., TILE/2 + ty*Q..} and columns {tx*Q.., TILE/2 + tx*Q..}, so
// every shared-memory read is a Q-vector and a quarter warp reads 128
// contiguous bytes (no bank conflicts).  The next tile is loaded into
// registers while the current one is multiplied; one shared buffer, two
// barriers per step.
// Q = 4 (vec4) for f32, 2 (dvec2) for f64.
// Grid: (ceil(N/TILE), ceil(M/TILE), batch).  meta: [0] M [1] N [2] K [3] batch
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"

#if defined(DT_f64)
#define Q 2u
#define VT dvec2
#else
#define Q 4u
#define VT vec4
#endif
#define BK 8u
#define TILE (32u * Q)
#define TV (TILE / Q)              // vectors per tile row
// each invocation loads Q elements of A and Q of B per tile: (TILE*BK)/256 = Q
#define A_PER Q
#define B_PER Q

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint WG_UNUSED = 256u;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) readonly buffer A { ST a[]; };
layout(std430, binding = 2) readonly buffer B { ST b[]; };
layout(std430, binding = 3) writeonly buffer C { ST c[]; };

shared VT As[BK * TV];   // As[k][row/Q]: k-major, Q consecutive rows per vector
shared VT Bs[BK * TV];   // Bs[k][col/Q]

void main() {
  uint m = pc.meta_off;
  uint M = meta[m], N = meta[m + 1u], K = meta[m + 2u];
  uint bi = gl_WorkGroupID.z;
  uint row0 = gl_WorkGroupID.y * TILE, col0 = gl_WorkGroupID.x * TILE;
  uint t = gl_LocalInvocationID.x;
  uint tx = t % 16u, ty = t / 16u;
  uint abase = bi * M * K, bbase = bi * K * N;

  // what this invocation loads: A: one row, A_PER consecutive k; B: one k, B_PER columns
  uint ar = t / (BK / A_PER), ak = (t % (BK / A_PER)) * A_PER;
  uint bk = t / (TILE / B_PER), bc = (t % (TILE / B_PER)) * B_PER;
  T ra[A_PER], rb[B_PER];

  VT acc[4u * Q];   // [sub-block (2x2)][row in sub-block] -> Q columns
  for (uint i = 0u; i < 4u * Q; i++) acc[i] = VT(0);

  // prefetch tile 0
  for (uint e = 0u; e < A_PER; e++) {
    uint gr = row0 + ar, gk = ak + e;
    ra[e] = (gr < M && gk < K) ? T(a[abase + gr * K + gk]) : T(0);
  }
  for (uint e = 0u; e < B_PER; e++) {
    uint gk = bk, gc = col0 + bc + e;
    rb[e] = (gk < K && gc < N) ? T(b[bbase + gk * N + gc]) : T(0);
  }

  for (uint k0 = 0u; k0 < K; k0 += BK) {
    // registers -> shared (A transposed: k-major)
    // a component store: neighbouring invocations own the other components
    for (uint e = 0u; e < A_PER; e++) As[(ak + e) * TV + ar / Q][ar % Q] = ra[e];
    {
      VT v;
      for (uint e = 0u; e < Q; e++) v[e] = rb[e];
      Bs[bk * TV + bc / Q] = v;
    }
    barrier();
    // prefetch the next tile while this one is multiplied
    uint k1 = k0 + BK;
    if (k1 < K) {
      for (uint e = 0u; e < A_PER; e++) {
        uint gr = row0 + ar, gk = k1 + ak + e;
        ra[e] = (gr < M && gk < K) ? T(a[abase + gr * K + gk]) : T(0);
      }
      for (uint e = 0u; e < B_PER; e++) {
        uint gk = k1 + bk, gc = col0 + bc + e;
        rb[e] = (gk < K && gc < N) ? T(b[bbase + gk * N + gc]) : T(0);
      }
    }
    for (uint kk = 0u; kk < BK; kk++) {
      VT a0 = As[kk * TV + ty], a1 = As[kk * TV + TV / 2u + ty];
      VT b0 = Bs[kk * TV + tx], b1 = Bs[kk * TV + TV / 2u + tx];
      for (uint i = 0u; i < Q; i++) {
        acc[i] = fma(VT(a0[i]), b0, acc[i]);
        acc[Q + i] = fma(VT(a0[i]), b1, acc[Q + i]);
        acc[2u * Q + i] = fma(VT(a1[i]), b0, acc[2u * Q + i]);
        acc[3u * Q + i] = fma(VT(a1[i]), b1, acc[3u * Q + i]);
      }
    }
    barrier();
  }
  for (uint sb = 0u; sb < 4u; sb++) {
    uint rbase = row0 + (sb / 2u) * (TILE / 2u) + ty * Q;
    uint cbase = col0 + (sb % 2u) * (TILE / 2u) + tx * Q;
    for (uint i = 0u; i < Q; i++) {
      uint gr = rbase + i;
      if (gr >= M) continue;
      VT v = acc[sb * Q + i];
      for (uint j = 0u; j < Q; j++)
        if (cbase + j < N) c[bi * M * N + gr * N + cbase + j] = ST(v[j]);
    }
  }
}
