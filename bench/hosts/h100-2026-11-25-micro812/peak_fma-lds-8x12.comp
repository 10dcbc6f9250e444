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
// 1.98 GHz; bench/NOTES.md, seventh round), in f32 both ~98%: the rate is
// the best of the three.
//
// spec constants: 0 workgroup size, 1 loop iterations.
// meta: [0] a, [1] c (f32 bits), [2] store flag, [3] sentinel (f32 bits).
// binding 1: one value per invocation of a workgroup.
// Compiled with -DDT_f32 or -DDT_f64, and -DVEC4 or -DOUTER for the other
// variants.
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
#if defined(DT_f64) && defined(VEC4)
shared dvec2 As[8u * 129u];
shared dvec2 Bs[8u * 128u];
#endif
void main() {
  uint m = pc.meta_off;
#if defined(DT_f64) && defined(VEC4)
  uint t = gl_LocalInvocationID.x, lane = t % 32u, w = t / 32u;
  uint tx = lane % 2u + 2u * (w % 4u), ty = lane / 2u + 16u * (w / 4u);
  double ta = double(uintBitsToFloat(meta[m])), tc = double(uintBitsToFloat(meta[m + 1u])) * 1e-6;
  for (uint v = t; v < 8u * 129u; v += 256u) As[v] = dvec2(ta + double(v) * 1e-4, ta - double(v) * 1e-4);
  for (uint v = t; v < 8u * 128u; v += 256u) Bs[v] = dvec2(tc * double(v + 1u), tc * double(v + 2u));
  barrier();
  double oc0_0 = 0.0, oc0_1 = 0.0, oc0_2 = 0.0, oc0_3 = 0.0, oc0_4 = 0.0, oc0_5 = 0.0, oc0_6 = 0.0, oc0_7 = 0.0, oc0_8 = 0.0, oc0_9 = 0.0, oc0_10 = 0.0, oc0_11 = 0.0, oc1_0 = 0.0, oc1_1 = 0.0, oc1_2 = 0.0, oc1_3 = 0.0, oc1_4 = 0.0, oc1_5 = 0.0, oc1_6 = 0.0, oc1_7 = 0.0, oc1_8 = 0.0, oc1_9 = 0.0, oc1_10 = 0.0, oc1_11 = 0.0, oc2_0 = 0.0, oc2_1 = 0.0, oc2_2 = 0.0, oc2_3 = 0.0, oc2_4 = 0.0, oc2_5 = 0.0, oc2_6 = 0.0, oc2_7 = 0.0, oc2_8 = 0.0, oc2_9 = 0.0, oc2_10 = 0.0, oc2_11 = 0.0, oc3_0 = 0.0, oc3_1 = 0.0, oc3_2 = 0.0, oc3_3 = 0.0, oc3_4 = 0.0, oc3_5 = 0.0, oc3_6 = 0.0, oc3_7 = 0.0, oc3_8 = 0.0, oc3_9 = 0.0, oc3_10 = 0.0, oc3_11 = 0.0, oc4_0 = 0.0, oc4_1 = 0.0, oc4_2 = 0.0, oc4_3 = 0.0, oc4_4 = 0.0, oc4_5 = 0.0, oc4_6 = 0.0, oc4_7 = 0.0, oc4_8 = 0.0, oc4_9 = 0.0, oc4_10 = 0.0, oc4_11 = 0.0, oc5_0 = 0.0, oc5_1 = 0.0, oc5_2 = 0.0, oc5_3 = 0.0, oc5_4 = 0.0, oc5_5 = 0.0, oc5_6 = 0.0, oc5_7 = 0.0, oc5_8 = 0.0, oc5_9 = 0.0, oc5_10 = 0.0, oc5_11 = 0.0, oc6_0 = 0.0, oc6_1 = 0.0, oc6_2 = 0.0, oc6_3 = 0.0, oc6_4 = 0.0, oc6_5 = 0.0, oc6_6 = 0.0, oc6_7 = 0.0, oc6_8 = 0.0, oc6_9 = 0.0, oc6_10 = 0.0, oc6_11 = 0.0, oc7_0 = 0.0, oc7_1 = 0.0, oc7_2 = 0.0, oc7_3 = 0.0, oc7_4 = 0.0, oc7_5 = 0.0, oc7_6 = 0.0, oc7_7 = 0.0, oc7_8 = 0.0, oc7_9 = 0.0, oc7_10 = 0.0, oc7_11 = 0.0;
  for (uint i = 0u; i < ITERS; i++) {
    { uint kk = (i * 2u + 0u) & 7u;
      dvec2 xa = As[kk * 129u + 0u + ty], xb = As[kk * 129u + 32u + ty], xc = As[kk * 129u + 64u + ty], xd = As[kk * 129u + 96u + ty];
      dvec2 ya = Bs[kk * 128u + 0u + tx], yb = Bs[kk * 128u + 8u + tx], yc = Bs[kk * 128u + 16u + tx], yd = Bs[kk * 128u + 24u + tx], ye = Bs[kk * 128u + 32u + tx], yf = Bs[kk * 128u + 40u + tx];
      oc0_0 = fma(xa.x, ya.x, oc0_0);
      oc0_1 = fma(xa.x, ya.y, oc0_1);
      oc0_2 = fma(xa.x, yb.x, oc0_2);
      oc0_3 = fma(xa.x, yb.y, oc0_3);
      oc0_4 = fma(xa.x, yc.x, oc0_4);
      oc0_5 = fma(xa.x, yc.y, oc0_5);
      oc0_6 = fma(xa.x, yd.x, oc0_6);
      oc0_7 = fma(xa.x, yd.y, oc0_7);
      oc0_8 = fma(xa.x, ye.x, oc0_8);
      oc0_9 = fma(xa.x, ye.y, oc0_9);
      oc0_10 = fma(xa.x, yf.x, oc0_10);
      oc0_11 = fma(xa.x, yf.y, oc0_11);
      oc1_0 = fma(xa.y, ya.x, oc1_0);
      oc1_1 = fma(xa.y, ya.y, oc1_1);
      oc1_2 = fma(xa.y, yb.x, oc1_2);
      oc1_3 = fma(xa.y, yb.y, oc1_3);
      oc1_4 = fma(xa.y, yc.x, oc1_4);
      oc1_5 = fma(xa.y, yc.y, oc1_5);
      oc1_6 = fma(xa.y, yd.x, oc1_6);
      oc1_7 = fma(xa.y, yd.y, oc1_7);
      oc1_8 = fma(xa.y, ye.x, oc1_8);
      oc1_9 = fma(xa.y, ye.y, oc1_9);
      oc1_10 = fma(xa.y, yf.x, oc1_10);
      oc1_11 = fma(xa.y, yf.y, oc1_11);
      oc2_0 = fma(xb.x, ya.x, oc2_0);
      oc2_1 = fma(xb.x, ya.y, oc2_1);
      oc2_2 = fma(xb.x, yb.x, oc2_2);
      oc2_3 = fma(xb.x, yb.y, oc2_3);
      oc2_4 = fma(xb.x, yc.x, oc2_4);
      oc2_5 = fma(xb.x, yc.y, oc2_5);
      oc2_6 = fma(xb.x, yd.x, oc2_6);
      oc2_7 = fma(xb.x, yd.y, oc2_7);
      oc2_8 = fma(xb.x, ye.x, oc2_8);
      oc2_9 = fma(xb.x, ye.y, oc2_9);
      oc2_10 = fma(xb.x, yf.x, oc2_10);
      oc2_11 = fma(xb.x, yf.y, oc2_11);
      oc3_0 = fma(xb.y, ya.x, oc3_0);
      oc3_1 = fma(xb.y, ya.y, oc3_1);
      oc3_2 = fma(xb.y, yb.x, oc3_2);
      oc3_3 = fma(xb.y, yb.y, oc3_3);
      oc3_4 = fma(xb.y, yc.x, oc3_4);
      oc3_5 = fma(xb.y, yc.y, oc3_5);
      oc3_6 = fma(xb.y, yd.x, oc3_6);
      oc3_7 = fma(xb.y, yd.y, oc3_7);
      oc3_8 = fma(xb.y, ye.x, oc3_8);
      oc3_9 = fma(xb.y, ye.y, oc3_9);
      oc3_10 = fma(xb.y, yf.x, oc3_10);
      oc3_11 = fma(xb.y, yf.y, oc3_11);
      oc4_0 = fma(xc.x, ya.x, oc4_0);
      oc4_1 = fma(xc.x, ya.y, oc4_1);
      oc4_2 = fma(xc.x, yb.x, oc4_2);
      oc4_3 = fma(xc.x, yb.y, oc4_3);
      oc4_4 = fma(xc.x, yc.x, oc4_4);
      oc4_5 = fma(xc.x, yc.y, oc4_5);
      oc4_6 = fma(xc.x, yd.x, oc4_6);
      oc4_7 = fma(xc.x, yd.y, oc4_7);
      oc4_8 = fma(xc.x, ye.x, oc4_8);
      oc4_9 = fma(xc.x, ye.y, oc4_9);
      oc4_10 = fma(xc.x, yf.x, oc4_10);
      oc4_11 = fma(xc.x, yf.y, oc4_11);
      oc5_0 = fma(xc.y, ya.x, oc5_0);
      oc5_1 = fma(xc.y, ya.y, oc5_1);
      oc5_2 = fma(xc.y, yb.x, oc5_2);
      oc5_3 = fma(xc.y, yb.y, oc5_3);
      oc5_4 = fma(xc.y, yc.x, oc5_4);
      oc5_5 = fma(xc.y, yc.y, oc5_5);
      oc5_6 = fma(xc.y, yd.x, oc5_6);
      oc5_7 = fma(xc.y, yd.y, oc5_7);
      oc5_8 = fma(xc.y, ye.x, oc5_8);
      oc5_9 = fma(xc.y, ye.y, oc5_9);
      oc5_10 = fma(xc.y, yf.x, oc5_10);
      oc5_11 = fma(xc.y, yf.y, oc5_11);
      oc6_0 = fma(xd.x, ya.x, oc6_0);
      oc6_1 = fma(xd.x, ya.y, oc6_1);
      oc6_2 = fma(xd.x, yb.x, oc6_2);
      oc6_3 = fma(xd.x, yb.y, oc6_3);
      oc6_4 = fma(xd.x, yc.x, oc6_4);
      oc6_5 = fma(xd.x, yc.y, oc6_5);
      oc6_6 = fma(xd.x, yd.x, oc6_6);
      oc6_7 = fma(xd.x, yd.y, oc6_7);
      oc6_8 = fma(xd.x, ye.x, oc6_8);
      oc6_9 = fma(xd.x, ye.y, oc6_9);
      oc6_10 = fma(xd.x, yf.x, oc6_10);
      oc6_11 = fma(xd.x, yf.y, oc6_11);
      oc7_0 = fma(xd.y, ya.x, oc7_0);
      oc7_1 = fma(xd.y, ya.y, oc7_1);
      oc7_2 = fma(xd.y, yb.x, oc7_2);
      oc7_3 = fma(xd.y, yb.y, oc7_3);
      oc7_4 = fma(xd.y, yc.x, oc7_4);
      oc7_5 = fma(xd.y, yc.y, oc7_5);
      oc7_6 = fma(xd.y, yd.x, oc7_6);
      oc7_7 = fma(xd.y, yd.y, oc7_7);
      oc7_8 = fma(xd.y, ye.x, oc7_8);
      oc7_9 = fma(xd.y, ye.y, oc7_9);
      oc7_10 = fma(xd.y, yf.x, oc7_10);
      oc7_11 = fma(xd.y, yf.y, oc7_11);
    }
    { uint kk = (i * 2u + 1u) & 7u;
      dvec2 xa = As[kk * 129u + 0u + ty], xb = As[kk * 129u + 32u + ty], xc = As[kk * 129u + 64u + ty], xd = As[kk * 129u + 96u + ty];
      dvec2 ya = Bs[kk * 128u + 0u + tx], yb = Bs[kk * 128u + 8u + tx], yc = Bs[kk * 128u + 16u + tx], yd = Bs[kk * 128u + 24u + tx], ye = Bs[kk * 128u + 32u + tx], yf = Bs[kk * 128u + 40u + tx];
      oc0_0 = fma(xa.x, ya.x, oc0_0);
      oc0_1 = fma(xa.x, ya.y, oc0_1);
      oc0_2 = fma(xa.x, yb.x, oc0_2);
      oc0_3 = fma(xa.x, yb.y, oc0_3);
      oc0_4 = fma(xa.x, yc.x, oc0_4);
      oc0_5 = fma(xa.x, yc.y, oc0_5);
      oc0_6 = fma(xa.x, yd.x, oc0_6);
      oc0_7 = fma(xa.x, yd.y, oc0_7);
      oc0_8 = fma(xa.x, ye.x, oc0_8);
      oc0_9 = fma(xa.x, ye.y, oc0_9);
      oc0_10 = fma(xa.x, yf.x, oc0_10);
      oc0_11 = fma(xa.x, yf.y, oc0_11);
      oc1_0 = fma(xa.y, ya.x, oc1_0);
      oc1_1 = fma(xa.y, ya.y, oc1_1);
      oc1_2 = fma(xa.y, yb.x, oc1_2);
      oc1_3 = fma(xa.y, yb.y, oc1_3);
      oc1_4 = fma(xa.y, yc.x, oc1_4);
      oc1_5 = fma(xa.y, yc.y, oc1_5);
      oc1_6 = fma(xa.y, yd.x, oc1_6);
      oc1_7 = fma(xa.y, yd.y, oc1_7);
      oc1_8 = fma(xa.y, ye.x, oc1_8);
      oc1_9 = fma(xa.y, ye.y, oc1_9);
      oc1_10 = fma(xa.y, yf.x, oc1_10);
      oc1_11 = fma(xa.y, yf.y, oc1_11);
      oc2_0 = fma(xb.x, ya.x, oc2_0);
      oc2_1 = fma(xb.x, ya.y, oc2_1);
      oc2_2 = fma(xb.x, yb.x, oc2_2);
      oc2_3 = fma(xb.x, yb.y, oc2_3);
      oc2_4 = fma(xb.x, yc.x, oc2_4);
      oc2_5 = fma(xb.x, yc.y, oc2_5);
      oc2_6 = fma(xb.x, yd.x, oc2_6);
      oc2_7 = fma(xb.x, yd.y, oc2_7);
      oc2_8 = fma(xb.x, ye.x, oc2_8);
      oc2_9 = fma(xb.x, ye.y, oc2_9);
      oc2_10 = fma(xb.x, yf.x, oc2_10);
      oc2_11 = fma(xb.x, yf.y, oc2_11);
      oc3_0 = fma(xb.y, ya.x, oc3_0);
      oc3_1 = fma(xb.y, ya.y, oc3_1);
      oc3_2 = fma(xb.y, yb.x, oc3_2);
      oc3_3 = fma(xb.y, yb.y, oc3_3);
      oc3_4 = fma(xb.y, yc.x, oc3_4);
      oc3_5 = fma(xb.y, yc.y, oc3_5);
      oc3_6 = fma(xb.y, yd.x, oc3_6);
      oc3_7 = fma(xb.y, yd.y, oc3_7);
      oc3_8 = fma(xb.y, ye.x, oc3_8);
      oc3_9 = fma(xb.y, ye.y, oc3_9);
      oc3_10 = fma(xb.y, yf.x, oc3_10);
      oc3_11 = fma(xb.y, yf.y, oc3_11);
      oc4_0 = fma(xc.x, ya.x, oc4_0);
      oc4_1 = fma(xc.x, ya.y, oc4_1);
      oc4_2 = fma(xc.x, yb.x, oc4_2);
      oc4_3 = fma(xc.x, yb.y, oc4_3);
      oc4_4 = fma(xc.x, yc.x, oc4_4);
      oc4_5 = fma(xc.x, yc.y, oc4_5);
      oc4_6 = fma(xc.x, yd.x, oc4_6);
      oc4_7 = fma(xc.x, yd.y, oc4_7);
      oc4_8 = fma(xc.x, ye.x, oc4_8);
      oc4_9 = fma(xc.x, ye.y, oc4_9);
      oc4_10 = fma(xc.x, yf.x, oc4_10);
      oc4_11 = fma(xc.x, yf.y, oc4_11);
      oc5_0 = fma(xc.y, ya.x, oc5_0);
      oc5_1 = fma(xc.y, ya.y, oc5_1);
      oc5_2 = fma(xc.y, yb.x, oc5_2);
      oc5_3 = fma(xc.y, yb.y, oc5_3);
      oc5_4 = fma(xc.y, yc.x, oc5_4);
      oc5_5 = fma(xc.y, yc.y, oc5_5);
      oc5_6 = fma(xc.y, yd.x, oc5_6);
      oc5_7 = fma(xc.y, yd.y, oc5_7);
      oc5_8 = fma(xc.y, ye.x, oc5_8);
      oc5_9 = fma(xc.y, ye.y, oc5_9);
      oc5_10 = fma(xc.y, yf.x, oc5_10);
      oc5_11 = fma(xc.y, yf.y, oc5_11);
      oc6_0 = fma(xd.x, ya.x, oc6_0);
      oc6_1 = fma(xd.x, ya.y, oc6_1);
      oc6_2 = fma(xd.x, yb.x, oc6_2);
      oc6_3 = fma(xd.x, yb.y, oc6_3);
      oc6_4 = fma(xd.x, yc.x, oc6_4);
      oc6_5 = fma(xd.x, yc.y, oc6_5);
      oc6_6 = fma(xd.x, yd.x, oc6_6);
      oc6_7 = fma(xd.x, yd.y, oc6_7);
      oc6_8 = fma(xd.x, ye.x, oc6_8);
      oc6_9 = fma(xd.x, ye.y, oc6_9);
      oc6_10 = fma(xd.x, yf.x, oc6_10);
      oc6_11 = fma(xd.x, yf.y, oc6_11);
      oc7_0 = fma(xd.y, ya.x, oc7_0);
      oc7_1 = fma(xd.y, ya.y, oc7_1);
      oc7_2 = fma(xd.y, yb.x, oc7_2);
      oc7_3 = fma(xd.y, yb.y, oc7_3);
      oc7_4 = fma(xd.y, yc.x, oc7_4);
      oc7_5 = fma(xd.y, yc.y, oc7_5);
      oc7_6 = fma(xd.y, yd.x, oc7_6);
      oc7_7 = fma(xd.y, yd.y, oc7_7);
      oc7_8 = fma(xd.y, ye.x, oc7_8);
      oc7_9 = fma(xd.y, ye.y, oc7_9);
      oc7_10 = fma(xd.y, yf.x, oc7_10);
      oc7_11 = fma(xd.y, yf.y, oc7_11);
    }
  }
  double orr = oc0_0 + oc0_1 + oc0_2 + oc0_3 + oc0_4 + oc0_5 + oc0_6 + oc0_7 + oc0_8 + oc0_9 + oc0_10 + oc0_11 + oc1_0 + oc1_1 + oc1_2 + oc1_3 + oc1_4 + oc1_5 + oc1_6 + oc1_7 + oc1_8 + oc1_9 + oc1_10 + oc1_11 + oc2_0 + oc2_1 + oc2_2 + oc2_3 + oc2_4 + oc2_5 + oc2_6 + oc2_7 + oc2_8 + oc2_9 + oc2_10 + oc2_11 + oc3_0 + oc3_1 + oc3_2 + oc3_3 + oc3_4 + oc3_5 + oc3_6 + oc3_7 + oc3_8 + oc3_9 + oc3_10 + oc3_11 + oc4_0 + oc4_1 + oc4_2 + oc4_3 + oc4_4 + oc4_5 + oc4_6 + oc4_7 + oc4_8 + oc4_9 + oc4_10 + oc4_11 + oc5_0 + oc5_1 + oc5_2 + oc5_3 + oc5_4 + oc5_5 + oc5_6 + oc5_7 + oc5_8 + oc5_9 + oc5_10 + oc5_11 + oc6_0 + oc6_1 + oc6_2 + oc6_3 + oc6_4 + oc6_5 + oc6_6 + oc6_7 + oc6_8 + oc6_9 + oc6_10 + oc6_11 + oc7_0 + oc7_1 + oc7_2 + oc7_3 + oc7_4 + oc7_5 + oc7_6 + oc7_7 + oc7_8 + oc7_9 + oc7_10 + oc7_11;
  if (meta[m + 2u] != 0u || orr == double(uintBitsToFloat(meta[m + 3u]))) o[gl_LocalInvocationID.x] = ST(orr);
  return;
#endif
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
