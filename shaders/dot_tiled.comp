#version 450
// dot_tiled.comp - C = A x B per batch, 64x64 output tiles through shared
// memory in steps of 16 along K; 256 invocations each own a 4x4 block.
// Grid: (ceil(N/64), ceil(M/64), batch).  meta: [0] M [1] N [2] K [3] batch
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"

#define TM 64u
#define TN 64u
#define TK 16u

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint WG_UNUSED = 256u;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) readonly buffer A { ST a[]; };
layout(std430, binding = 2) readonly buffer B { ST b[]; };
layout(std430, binding = 3) writeonly buffer C { ST c[]; };

shared T As[TK][TM + 1u];   // k-major; +1 spreads banks
shared T Bs[TK][TN];

void main() {
  uint m = pc.meta_off;
  uint M = meta[m], N = meta[m + 1u], K = meta[m + 2u];
  uint bi = gl_WorkGroupID.z;
  uint row0 = gl_WorkGroupID.y * TM, col0 = gl_WorkGroupID.x * TN;
  uint t = gl_LocalInvocationID.x;
  uint tr = (t / 16u) * 4u, tc = (t % 16u) * 4u;
  uint abase = bi * M * K, bbase = bi * K * N;
  T acc[4][4];
  for (uint i = 0u; i < 4u; i++)
    for (uint j = 0u; j < 4u; j++) acc[i][j] = T(0);

  for (uint k0 = 0u; k0 < K; k0 += TK) {
    // A tile: 64 rows x 16 k, 4 loads per invocation, consecutive k per row
    for (uint l = 0u; l < 4u; l++) {
      uint e = t + l * 256u;
      uint r = e / TK, kk = e % TK;
      uint gr = row0 + r, gk = k0 + kk;
      As[kk][r] = (gr < M && gk < K) ? T(a[abase + gr * K + gk]) : T(0);
    }
    // B tile: 16 k x 64 cols, consecutive columns
    for (uint l = 0u; l < 4u; l++) {
      uint e = t + l * 256u;
      uint kk = e / TN, cc = e % TN;
      uint gk = k0 + kk, gc = col0 + cc;
      Bs[kk][cc] = (gk < K && gc < N) ? T(b[bbase + gk * N + gc]) : T(0);
    }
    barrier();
    for (uint kk = 0u; kk < TK; kk++) {
      T av[4], bv[4];
      for (uint i = 0u; i < 4u; i++) av[i] = As[kk][tr + i];
      for (uint j = 0u; j < 4u; j++) bv[j] = Bs[kk][tc + j];
      for (uint i = 0u; i < 4u; i++)
        for (uint j = 0u; j < 4u; j++) acc[i][j] = fma(av[i], bv[j], acc[i][j]);
    }
    barrier();
  }
  for (uint i = 0u; i < 4u; i++) {
    uint gr = row0 + tr + i;
    if (gr >= M) continue;
    for (uint j = 0u; j < 4u; j++) {
      uint gc = col0 + tc + j;
      if (gc < N) c[bi * M * N + gr * N + gc] = ST(acc[i][j]);
    }
  }
}
