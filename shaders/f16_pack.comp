#version 450
// f16_pack.comp - the first half of dot's coopmat variant: one f32 matrix
// per batch, every element rounded to f16 on its bits (nx_f16_bits,
// shaders/lib/f16.glsl), into a copy padded with zeros to whole tiles:
// [batch][R][C] f32 -> [batch][Rp][Cp] f16, two per uint.  Rounding once
// here, where the pass is bound by memory, keeps the bit arithmetic out of
// the tensor-core loop, and the padding keeps bounds checks out of its loads.
// meta: [0] R [1] C [2] Rp [3] Cp (even) [4] n = batch * Rp * Cp / 2
#extension GL_GOOGLE_include_directive : require
#include "f16.glsl"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) readonly buffer Src { uint s[]; };   // f32 bits (SRC_F16: f16 pairs)
layout(std430, binding = 2) writeonly buffer Dst { uint d[]; };  // f16 pairs

void main() {
  uint m = pc.meta_off;
  uint R = meta[m], C = meta[m + 1u], Rp = meta[m + 2u], Cp = meta[m + 3u], n = meta[m + 4u];
  uint pairs = Cp / 2u, plane = Rp * pairs;
  uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < n; i += step) {
    uint bi = i / plane, rem = i - bi * plane;
    uint r = rem / pairs, c = (rem - r * pairs) * 2u;
    uint lo = 0u, hi = 0u;
    if (r < R) {
      uint src = (bi * R + r) * C + c;
#ifdef SRC_F16
      if (c < C) lo = (s[src >> 1u] >> ((src & 1u) * 16u)) & 0xffffu;
      if (c + 1u < C) hi = (s[(src + 1u) >> 1u] >> (((src + 1u) & 1u) * 16u)) & 0xffffu;
#else
      if (c < C) lo = nx_f16_bits(s[src]);
      if (c + 1u < C) hi = nx_f16_bits(s[src + 1u]);
#endif
    }
    d[i] = lo | (hi << 16);
  }
}
