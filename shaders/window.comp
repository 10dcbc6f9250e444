#version 450
// window.comp - window_sum window_product window_max window_min, one output
// element per invocation: the window's elements in row-major order from the
// op's identity (sum +0, product 1, max the lowest value, min the highest),
// as Nx pads with them; input coordinate on axis d of output o and window
// element w: o * stride + w * dilation - pad_lo (outside the input: padding,
// which leaves the value as it is).  max / min: NaN propagates; equal zeros
// give +0 (max) and -0 (min).
// meta: [0] nout [1] rank [2] window count, then 8 words each: [3] input
//       dims [11] output dims [19] window dims [27] strides [35] dilations
//       [43] low padding (two's complement)
// spec: 0 workgroup size, 1 op (0 sum 1 product 2 max 3 min)
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OP = 0u;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) readonly buffer In { ST x[]; };
layout(std430, binding = 2) writeonly buffer Out { ST y[]; };

T combine(T a, T b) {
  if (OP == 0u) return a + b;
  if (OP == 1u) return a * b;
  if (t_isnan(a)) return a;
  if (t_isnan(b)) return b;
  bool lt = t_less(a, b); // on the bits: denormals kept, -0 below +0
  return OP == 2u ? (lt ? b : a) : (lt ? a : b);
}

void main() {
  uint m = pc.meta_off;
  uint nout = meta[m], rank = meta[m + 1u], wcount = meta[m + 2u];
  uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint o = gl_GlobalInvocationID.x; o < nout; o += step) {
    int base[8];
    uint r = o;
    for (int d = int(rank) - 1; d >= 0; d--) {
      uint od = meta[m + 11u + uint(d)];
      uint q = r / od;
      base[d] = int((r - q * od) * meta[m + 27u + uint(d)]) - int(meta[m + 43u + uint(d)]);
      r = q;
    }
    T acc = OP == 0u ? T(0) : OP == 1u ? T(1) : OP == 2u ? T_LOWEST : T_HIGHEST;
    for (uint w = 0u; w < wcount; w++) {
      uint rw = w, off = 0u, mul = 1u;
      bool inside = true;
      for (int d = int(rank) - 1; d >= 0; d--) {
        uint wd = meta[m + 19u + uint(d)];
        uint q = rw / wd;
        int c = base[d] + int((rw - q * wd) * meta[m + 35u + uint(d)]);
        rw = q;
        uint dim = meta[m + 3u + uint(d)];
        inside = inside && c >= 0 && c < int(dim);
        off += uint(c) * mul;
        mul *= dim;
      }
      if (inside) acc = combine(acc, LD(x[off]));
    }
    y[o] = STV(acc);
  }
}
