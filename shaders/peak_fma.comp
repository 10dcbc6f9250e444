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
// -DOUTER: a matmul's register tile instead, c[i][j] = fma(x[i], y[j],
// c[i][j]) over 4 x 8 accumulators, 32 FMAs per iteration like the chains
// (x[i] = a + i/8 + (invocation % 16)/128, y[j] = c (j + 1)); after n
// iterations c[i][j] = n x[i] y[j].  On an H100 the chains reached 30.6
// TFLOPS in f64 and this form 33.2 (99% of 64 FMAs per SM per clock at
// 1.98 GHz; bench/NOTES.md, dot f64), in f32 both ~98%: the rate is
// the best of the three.
//
// spec constants: 0 workgroup size, 1 loop iterations.
// meta: [0] a, [1] c (f32 bits), [2] store flag, [3] sentinel (f32 bits).
// binding 1: one value per invocation of a workgroup.
// Compiled with -DDT_f32 or -DDT_f64, and -DVEC4 or -DOUTER for the other
// variants.
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
// -DFMA_F16 (with -DDT_f32): the chains in f16 (shaderFloat16), the result
// stored as f32; f16vec4 with -DVEC4
#ifdef FMA_F16
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#undef T
#define T float16_t
#endif

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ITERS = 1024u;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) writeonly buffer Out { ST o[]; };

#ifdef VEC4
#if defined(FMA_F16)
#define V f16vec4
#elif defined(DT_f64)
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

#ifdef OUTER
#define ROW(i) T c##i##0 = T(0), c##i##1 = T(0), c##i##2 = T(0), c##i##3 = T(0), \
                 c##i##4 = T(0), c##i##5 = T(0), c##i##6 = T(0), c##i##7 = T(0);
#define ROW_FMA(i)                                                            \
  c##i##0 = fma(x##i, y0, c##i##0); c##i##1 = fma(x##i, y1, c##i##1);         \
  c##i##2 = fma(x##i, y2, c##i##2); c##i##3 = fma(x##i, y3, c##i##3);         \
  c##i##4 = fma(x##i, y4, c##i##4); c##i##5 = fma(x##i, y5, c##i##5);         \
  c##i##6 = fma(x##i, y6, c##i##6); c##i##7 = fma(x##i, y7, c##i##7);
#define ROW_SUM(i) (((c##i##0 + c##i##1) + (c##i##2 + c##i##3)) + ((c##i##4 + c##i##5) + (c##i##6 + c##i##7)))

void main() {
  uint m = pc.meta_off;
  T a = T(uintBitsToFloat(meta[m])), c = T(uintBitsToFloat(meta[m + 1u]));
  T x0 = a + T(gl_LocalInvocationID.x % 16u) * T(1.0 / 128.0);
  T x1 = x0 + T(0.125), x2 = x0 + T(0.25), x3 = x0 + T(0.375);
  T y0 = c, y1 = c * T(2), y2 = c * T(3), y3 = c * T(4), y4 = c * T(5), y5 = c * T(6), y6 = c * T(7), y7 = c * T(8);
  ROW(0) ROW(1) ROW(2) ROW(3)
  for (uint i = 0u; i < ITERS; i++) {
    ROW_FMA(0) ROW_FMA(1) ROW_FMA(2) ROW_FMA(3)
  }
  T r = (ROW_SUM(0) + ROW_SUM(1)) + (ROW_SUM(2) + ROW_SUM(3));
  if (meta[m + 2u] != 0u || r == T(uintBitsToFloat(meta[m + 3u]))) o[gl_LocalInvocationID.x] = ST(r);
}
#else
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
#endif
