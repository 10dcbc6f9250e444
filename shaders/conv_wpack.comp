#version 450
// conv_wpack.comp - a 2-D conv kernel packed for conv_gemm.comp: B[k][o]
// with k = (kernel position a K1 + b) I + input channel c, rows of OP
// (O rounded up to 4) floats, zeros past O.  One invocation per element of
// B (grid-stride); the kernel's own strides (any kernel_permutation).
// HALF: for conv_coopmat.comp, f16 kernel in, f16 B out as 32-bit words of
// two channels (OP even: O rounded up to the tile), Kp rows (K rounded up
// to the k step, zero rows past K), and word meta[10] of B set to 1 (an
// atomic or; the caller zeroed it) when a weight is infinite or NaN.
// meta: [0] K (I K0 K1) [1] O [2] OP [3] I [4] K1 [5] kernel O stride
// [6] I stride [7] [8] spatial strides; HALF: [9] Kp [10] the flag's word
#ifdef HALF
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#endif
layout(local_size_x_id = 0) in;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
#ifdef HALF
layout(std430, binding = 1) readonly buffer Ker { uint16_t w[]; };
layout(std430, binding = 2) buffer Packed { uint b[]; };
#else
layout(std430, binding = 1) readonly buffer Ker { float w[]; };
layout(std430, binding = 2) writeonly buffer Packed { float b[]; };
#endif

void main() {
  uint m = pc.meta_off;
  uint K = meta[m], O = meta[m + 1u], OP = meta[m + 2u], I = meta[m + 3u], K1 = meta[m + 4u];
  uint ko = meta[m + 5u], ki = meta[m + 6u], ks0 = meta[m + 7u], ks1 = meta[m + 8u];
  uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
#ifdef HALF
  uint Kp = meta[m + 9u], flag = meta[m + 10u];
  bool bad = false;
  for (uint i = gl_GlobalInvocationID.x; i < Kp * OP / 2u; i += step) {
    uint k = 2u * i / OP, o = 2u * i - k * OP, pos = k / I, c = k - pos * I, a = pos / K1, bb = pos - a * K1;
    uint src = o * ko + c * ki + a * ks0 + bb * ks1;
    uint lo = k < K && o < O ? uint(w[src]) : 0u;
    uint hi = k < K && o + 1u < O ? uint(w[src + ko]) : 0u;
    bad = bad || (lo & 0x7c00u) == 0x7c00u || (hi & 0x7c00u) == 0x7c00u;
    b[i] = lo | (hi << 16);
  }
  if (bad) atomicOr(b[flag], 1u);
#else
  for (uint i = gl_GlobalInvocationID.x; i < K * OP; i += step) {
    uint k = i / OP, o = i - k * OP, pos = k / I, c = k - pos * I, a = pos / K1, bb = pos - a * K1;
    b[i] = o < O ? w[o * ko + c * ki + a * ks0 + bb * ks1] : 0.0;
  }
#endif
}
