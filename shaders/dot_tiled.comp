#version 450
// dot_tiled.comp - C = A x B per batch through shared memory, register tiled.
// A workgroup owns a BM x BN tile of C and walks K in steps of BK; each of
// its (BM/TM)*(BN/TN) invocations accumulates TM x TN outputs in registers.
// Rows and columns of an invocation are strided (ty + i*(BM/TM),
// tx + j*(BN/TN)) so shared-memory reads are conflict-free and stores to C
// coalesce.  Tile sizes are specialization constants chosen per device.
// Grid: (ceil(N/BN), ceil(M/BM), batch).  meta: [0] M [1] N [2] K [3] batch
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint BM = 64u;
layout(constant_id = 2) const uint BN = 64u;
layout(constant_id = 3) const uint BK = 16u;
layout(constant_id = 4) const uint TM = 4u;
layout(constant_id = 5) const uint TN = 4u;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) readonly buffer A { ST a[]; };
layout(std430, binding = 2) readonly buffer B { ST b[]; };
layout(std430, binding = 3) writeonly buffer C { ST c[]; };

const uint AS_STRIDE = BM + 1u;   // +1: rows of the A tile fall in different banks
shared T As[BK * (BM + 1u)];
shared T Bs[BK * BN];

void main() {
  uint m = pc.meta_off;
  uint M = meta[m], N = meta[m + 1u], K = meta[m + 2u];
  uint bi = gl_WorkGroupID.z;
  uint row0 = gl_WorkGroupID.y * BM, col0 = gl_WorkGroupID.x * BN;
  uint t = gl_LocalInvocationID.x;
  uint NT = gl_WorkGroupSize.x;
  uint RT = BM / TM, CT = BN / TN;      // invocations along rows, columns
  uint ty = t / CT, tx = t - ty * CT;
  uint abase = bi * M * K, bbase = bi * K * N;

  T acc[TM * TN];
  for (uint i = 0u; i < TM * TN; i++) acc[i] = T(0);
  T av[TM], bv[TN];

  for (uint k0 = 0u; k0 < K; k0 += BK) {
    for (uint e = t; e < BM * BK; e += NT) {   // A tile, k fastest
      uint r = e / BK, kk = e - r * BK;
      uint gr = row0 + r, gk = k0 + kk;
      As[kk * AS_STRIDE + r] = (gr < M && gk < K) ? T(a[abase + gr * K + gk]) : T(0);
    }
    for (uint e = t; e < BK * BN; e += NT) {   // B tile, columns fastest
      uint kk = e / BN, cc = e - kk * BN;
      uint gk = k0 + kk, gc = col0 + cc;
      Bs[kk * BN + cc] = (gk < K && gc < N) ? T(b[bbase + gk * N + gc]) : T(0);
    }
    barrier();
    for (uint kk = 0u; kk < BK; kk++) {
      for (uint i = 0u; i < TM; i++) av[i] = As[kk * AS_STRIDE + ty + i * RT];
      for (uint j = 0u; j < TN; j++) bv[j] = Bs[kk * BN + tx + j * CT];
      for (uint i = 0u; i < TM; i++)
        for (uint j = 0u; j < TN; j++) acc[i * TN + j] = fma(av[i], bv[j], acc[i * TN + j]);
    }
    barrier();
  }
  for (uint i = 0u; i < TM; i++) {
    uint gr = row0 + ty + i * RT;
    if (gr >= M) continue;
    for (uint j = 0u; j < TN; j++) {
      uint gc = col0 + tx + j * CT;
      if (gc < N) c[bi * M * N + gr * N + gc] = ST(acc[i * TN + j]);
    }
  }
}
