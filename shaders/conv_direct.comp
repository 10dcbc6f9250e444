#version 450
// conv_direct.comp - conv (Nx.conv, XLA's ConvGeneralDilated) with one
// invocation per output element: any spatial rank (1..6), strides, padding
// (negative crops), input and kernel dilation, feature and batch groups, and
// any input / kernel / output permutation (the strides below are the
// buffers' own, taken in canonical order: batch, channel, spatial...).
// f16 / bf16 load into f32 and sum there, rounded once at the store; f32 and
// f64 sum in their own type.  conv's kernel for every shape the implicit-GEMM
// kernel (conv_gemm.comp) does not take.
//
// meta: [0] outputs [1] S (spatial rank) [2] output batch [3] O [4] I (kernel
// input channels) [5] O / feature groups [6] O / batch groups [7] kernel
// positions (product of the kernel's spatial dims) [8] input batch stride
// [9] input channel stride [10] kernel O stride [11] kernel I stride
// [12] output batch stride [13] output channel stride; then per spatial axis
// d, at 16 + 10 d: X (input size) K (kernel size) Y (output size) stride
// input-dilation kernel-dilation low-padding (int) input-stride kernel-stride
// output-stride.
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) readonly buffer In { ST x[]; };
layout(std430, binding = 2) readonly buffer Ker { ST w[]; };
layout(std430, binding = 3) writeonly buffer Out { ST y[]; };

#ifndef LD
#define LD(v) (v)
#endif
#ifndef STV
#define STV(v) (v)
#endif

void main() {
  uint m = pc.meta_off;
  uint total = meta[m], S = meta[m + 1u], NB = meta[m + 2u], O = meta[m + 3u], I = meta[m + 4u];
  uint opg_f = meta[m + 5u], opg_b = meta[m + 6u], KS = meta[m + 7u];
  uint ib = meta[m + 8u], ic = meta[m + 9u], ko = meta[m + 10u], ki = meta[m + 11u];
  uint ob = meta[m + 12u], oc = meta[m + 13u];
  uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < total; i += step) {
    uint r = i, out_off = 0u;
    int q0[6];
    for (int d = int(S) - 1; d >= 0; d--) {
      uint a = m + 16u + 10u * uint(d);
      uint Y = meta[a + 2u];
      uint yd = r % Y;
      r /= Y;
      out_off += yd * meta[a + 9u];
      q0[d] = int(yd * meta[a + 3u]) - int(meta[a + 6u]);
    }
    uint o = r % O, n = r / O;
    out_off += n * ob + o * oc;
    uint in_base = ((o / opg_b) * NB + n) * ib + (o / opg_f) * I * ic;
    uint k_base = o * ko;
    T acc = T(0);
    for (uint kp = 0u; kp < KS; kp++) {
      uint kr = kp, in_off = in_base, k_off = k_base;
      bool ok = true;
      for (int d = int(S) - 1; d >= 0; d--) {
        uint a = m + 16u + 10u * uint(d);
        uint K = meta[a + 1u];
        uint kd = kr % K;
        kr /= K;
        int q = q0[d] + int(kd * meta[a + 5u]);
        int idil = int(meta[a + 4u]);
        int xd = q / idil;
        ok = ok && q >= 0 && xd * idil == q && uint(xd) < meta[a];
        in_off += uint(xd) * meta[a + 7u];
        k_off += kd * meta[a + 8u];
      }
      if (!ok) continue;
      for (uint c = 0u; c < I; c++) acc = fma(LD(x[in_off + c * ic]), LD(w[k_off + c * ki]), acc);
    }
    y[out_off] = STV(acc);
  }
}
