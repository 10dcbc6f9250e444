#version 450
// conv_wpack.comp - a 2-D conv kernel packed for conv_gemm.comp: B[k][o]
// with k = (kernel position a K1 + b) I + input channel c, rows of OP
// (O rounded up to 4) floats, zeros past O.  One invocation per element of
// B (grid-stride); the kernel's own strides (any kernel_permutation).
// meta: [0] K (I K0 K1) [1] O [2] OP [3] I [4] K1 [5] kernel O stride
// [6] I stride [7] [8] spatial strides
layout(local_size_x_id = 0) in;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) readonly buffer Ker { float w[]; };
layout(std430, binding = 2) writeonly buffer Packed { float b[]; };

void main() {
  uint m = pc.meta_off;
  uint K = meta[m], O = meta[m + 1u], OP = meta[m + 2u], I = meta[m + 3u], K1 = meta[m + 4u];
  uint ko = meta[m + 5u], ki = meta[m + 6u], ks0 = meta[m + 7u], ks1 = meta[m + 8u];
  uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < K * OP; i += step) {
    uint k = i / OP, o = i - k * OP, pos = k / I, c = k - pos * I, a = pos / K1, bb = pos - a * K1;
    b[i] = o < O ? w[o * ko + c * ki + a * ks0 + bb * ks1] : 0.0;
  }
}
