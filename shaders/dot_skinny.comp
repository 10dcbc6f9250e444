#version 450
// dot_skinny.comp - matrix-vector and skinny products: C = A x B per batch
// where N (-DNSKINNY: "rows") or M (-DMSKINNY: "columns") is at most 16.
// Such a product is a pass over the large operand, so the kernel streams it
// once with coalesced reads and keeps the few sums of every output in
// registers, reduced through shared memory at the end.
//
// NSKINNY (N <= 16): a workgroup owns one row of A at a time (rows r = x,
//   x + gx, ...): its WG invocations read the row at consecutive k (one
//   coalesced line per warp), each multiplying its element by the row k of B
//   (N values, small enough to stay in cache) into NB sums; the NB x WG sums
//   are then reduced in shared memory and written.
//   Grid: (min(M, limit), 1, batch).
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

layout(local_size_x = WG) in;
layout(constant_id = 0) const uint NB = 1u;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) readonly buffer A { ST a[]; };
layout(std430, binding = 2) readonly buffer B { ST b[]; };
layout(std430, binding = 3) writeonly buffer C { ST c[]; };

shared T red[NMAX * WG];

void main() {
  uint m = pc.meta_off;
  uint M = meta[m], N = meta[m + 1u], K = meta[m + 2u];
  uint bi = gl_WorkGroupID.z, t = gl_LocalInvocationID.x;
  uint abase = bi * M * K, bbase = bi * K * N;
  T acc[NMAX];
#if defined(NSKINNY)
  for (uint r = gl_WorkGroupID.x; r < M; r += gl_NumWorkGroups.x) {
    for (uint j = 0u; j < NB; j++) acc[j] = T(0);
    uint arow = abase + r * K;
    for (uint k = t; k < K; k += WG) {
      T av = T(a[arow + k]);
      uint bo = bbase + k * NB;
      for (uint j = 0u; j < NB; j++) acc[j] = fma(av, T(b[bo + j]), acc[j]);
    }
    for (uint j = 0u; j < NB; j++) red[j * WG + t] = acc[j];
    barrier();
    for (uint s = WG / 2u; s > 0u; s >>= 1u) {
      if (t < s)
        for (uint j = 0u; j < NB; j++) red[j * WG + t] += red[j * WG + t + s];
      barrier();
    }
    if (t < NB) c[bi * M * NB + r * NB + t] = ST(red[t * WG]);
    barrier(); // red is rewritten by the next row
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
