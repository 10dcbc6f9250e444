#version 450
// dot_ksum.comp - the second pass of a split-K product (dot_vec.comp,
// dot_coopmat.comp; -DOUT_F16 / -DOUT_BF16: f32 partials, f16 / bf16 result):
// C[b][i] = sum over chunks s = 0..S-1, in that order, of P[b*S + s][i],
// where P holds S partial M x N blocks per batch.
// meta: [0] M*N [1] batch [2] S
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) readonly buffer P { ST p[]; };
#if defined(OUT_F16) || defined(OUT_BF16)
// (with DT_f32) coopmat's f16 / bf16 results: each f32 sum rounded once on its
// bits (nx_f16_bits / nx_bf16_bits: ties to even)
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#include "f16.glsl"
layout(std430, binding = 2) writeonly buffer C { uint16_t c[]; };
#else
layout(std430, binding = 2) writeonly buffer C { ST c[]; };
#endif

void main() {
  uint m = pc.meta_off;
  uint mn = meta[m], n = mn * meta[m + 1u], S = meta[m + 2u];
  uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < n; i += step) {
    uint b = i / mn, e = i - b * mn;
    T acc = T(p[b * S * mn + e]);
    for (uint s = 1u; s < S; s++) acc += T(p[(b * S + s) * mn + e]);
#if defined(OUT_BF16)
    c[i] = uint16_t(nx_bf16_bits(floatBitsToUint(acc)));
#elif defined(OUT_F16)
    c[i] = uint16_t(nx_f16_bits(floatBitsToUint(acc)));
#else
    c[i] = ST(acc);
#endif
  }
}
