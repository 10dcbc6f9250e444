#version 450
// peak_fma.comp - the device's FMA rate, for `nxvk bench peak` (not an op).
//
// Every invocation runs 8 independent chains x = fma(x, a, c), 4 steps per
// chain per loop iteration: 32 FMAs (64 flops) per iteration, 4x that with
// -DVEC4.  Independent chains hide the FMA latency; a and c come from the
// metadata so nothing folds at compile time.  The result is stored only when
// meta[2] is nonzero (the check run) or when it equals meta[3], a value it
// never reaches: the work cannot be dropped and timed runs write no memory.
//
// spec constants: 0 workgroup size, 1 loop iterations.
// meta: [0] a, [1] c (f32 bits), [2] store flag, [3] sentinel (f32 bits).
// binding 1: one value per invocation of a workgroup.
// Compiled with -DDT_f32 or -DDT_f64, and -DVEC4 for the vector variant.
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ITERS = 1024u;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) writeonly buffer Out { ST o[]; };

#ifdef VEC4
#if defined(DT_f64)
#define V dvec4
#else
#define V vec4
#endif
#define LANE_SPREAD V(T(0), T(1.0 / 256.0), T(2.0 / 256.0), T(3.0 / 256.0))
#define TOTAL(v) ((v).x + (v).y + (v).z + (v).w)
#else
#define V T
#define LANE_SPREAD T(0)
#define TOTAL(v) (v)
#endif

#define STEP                \
  x0 = fma(x0, a, c);       \
  x1 = fma(x1, a, c);       \
  x2 = fma(x2, a, c);       \
  x3 = fma(x3, a, c);       \
  x4 = fma(x4, a, c);       \
  x5 = fma(x5, a, c);       \
  x6 = fma(x6, a, c);       \
  x7 = fma(x7, a, c);

void main() {
  uint m = pc.meta_off;
  V a = V(T(uintBitsToFloat(meta[m])));
  V c = V(T(uintBitsToFloat(meta[m + 1u])));
  // chain j of invocation i starts at 1 + i/1024 + j/64 (+ lane/256)
  V x0 = V(T(1) + T(gl_LocalInvocationID.x) * T(1.0 / 1024.0)) + LANE_SPREAD;
  V x1 = x0 + V(T(1.0 / 64.0)), x2 = x0 + V(T(2.0 / 64.0)), x3 = x0 + V(T(3.0 / 64.0));
  V x4 = x0 + V(T(4.0 / 64.0)), x5 = x0 + V(T(5.0 / 64.0)), x6 = x0 + V(T(6.0 / 64.0));
  V x7 = x0 + V(T(7.0 / 64.0));
  for (uint i = 0u; i < ITERS; i++) {
    STEP
    STEP
    STEP
    STEP
  }
  T r = TOTAL(((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7)));
  if (meta[m + 2u] != 0u || r == T(uintBitsToFloat(meta[m + 3u]))) o[gl_LocalInvocationID.x] = ST(r);
}
