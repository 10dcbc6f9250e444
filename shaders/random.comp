#version 450
// random.comp - Philox4x32-10 keyed by a 64-bit seed, counter (block, 0, 0, 0).
//   f32 uniform: element i = word i%4 of block i/4, (w >> 8) * 2^-24
//   f64 uniform: element i = words 2(i%2), 2(i%2)+1 of block i/2,
//                ((hi >> 11) * 2^32 + lo) * 2^-53
//   normal: pair p from block p: u1, u2 as above (f32 from w0, w1; f64 from
//           (w0,w1), (w2,w3)); r = sqrt(-2 log(1 - u1));
//           element 2p = r cos(2 pi u2), 2p+1 = r sin(2 pi u2)
//   f16 / bf16: the f32 stream; uniform takes the word's top 11 / 8 bits
// The reference (src/ops/source.c) does the same bit for bit up to u.
// meta: [0] n [1] key lo [2] key hi.  spec: 0 workgroup size, 1 op (0 uniform, 1 normal)
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "nxmath.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OP = 0u;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) writeonly buffer Out { ST y[]; };

uvec4 philox(uint block, uint k0, uint k1) {
  uvec4 c = uvec4(block, 0u, 0u, 0u);
  for (int round = 0; round < 10; round++) {
    uint hi0, lo0, hi1, lo1;
    umulExtended(0xD2511F53u, c.x, hi0, lo0);
    umulExtended(0xCD9E8D57u, c.z, hi1, lo1);
    c = uvec4(hi1 ^ c.y ^ k0, lo1, hi0 ^ c.w ^ k1, lo0);
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return c;
}

#if defined(DT_f32) || defined(DT_f16) || defined(DT_bf16)
#define F32_STREAM 1
#define PER_BLOCK 4u
T unit(uint w) { return T(w >> 8) * T(1.0 / 16777216.0); }
// f16 / bf16 uniform: the word's top 11 / 8 bits, k * 2^-bits, exact in the
// dtype and below 1 (an f32 value rounded could reach 1.0)
#if defined(DT_f16)
T unit_half(uint w) { return T(w >> 21) * T(1.0 / 2048.0); }
#elif defined(DT_bf16)
T unit_half(uint w) { return T(w >> 24) * T(1.0 / 256.0); }
#else
T unit_half(uint w) { return unit(w); }
#endif
#else
#define PER_BLOCK 2u
T unit2(uint lo, uint hi) {
  return (T(hi >> 11) * 4294967296.0lf + T(lo)) * (1.0lf / 9007199254740992.0lf);
}
#endif

void main() {
  uint m = pc.meta_off;
  uint n = meta[m], k0 = meta[m + 1u], k1 = meta[m + 2u];
  uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < n; i += step) {
    T v;
    if (OP == 0u) {
      uvec4 w = philox(i / PER_BLOCK, k0, k1);
#if defined(F32_STREAM)
      v = unit_half(w[i % 4u]);
#else
      v = (i % 2u) == 0u ? unit2(w.x, w.y) : unit2(w.z, w.w);
#endif
    } else {
      uvec4 w = philox(i / 2u, k0, k1);
#if defined(F32_STREAM)
      T u1 = unit(w.x), u2 = unit(w.y);
      // nxvk's own f32 log, sqrt, sin, cos (never the driver's built-ins)
      T r = nxf_sqrt(-2.0 * nxf_log(1.0 - u1));
      T a = 6.2831853071795864769 * u2;
      v = (i % 2u) == 0u ? r * nxf_cos(a) : r * nxf_sin(a);
#else
      T u1 = unit2(w.x, w.y), u2 = unit2(w.z, w.w);
      T r = sqrt(-2.0lf * nxd_log(1.0lf - u1));
      T a = 6.283185307179586476925lf * u2;
      v = (i % 2u) == 0u ? r * nxd_cos(a) : r * nxd_sin(a);
#endif
    }
    y[i] = STV(v);
  }
}
