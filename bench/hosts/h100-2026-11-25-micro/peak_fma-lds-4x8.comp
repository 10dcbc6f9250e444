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

#if defined(DT_f64) && defined(VEC4)
shared dvec2 As[8u * 129u];
shared dvec2 Bs[8u * 128u];
#endif
void main() {
  uint m = pc.meta_off;
  V a = V(T(uintBitsToFloat(meta[m])));
  V c = V(T(uintBitsToFloat(meta[m + 1u])));
  // chain j of invocation i starts at 1 + i/1024 + j/64 (+ lane/256)
#if defined(DT_f64) && defined(VEC4)
  // EXPERIMENT 2: the dot's inner loop without its tile loads: 4 x 8 doubles per
  // invocation from shared memory (2 + 4 dvec2 per k), 128 DFMAs per iteration
  uint t = gl_LocalInvocationID.x, lane = t % 32u, w = t / 32u;
  uint tx = lane % 8u, ty = lane / 8u + 4u * w;
  double ta = double(uintBitsToFloat(meta[m])), tc = double(uintBitsToFloat(meta[m + 1u])) * 1e-6;
  for (uint v = t; v < 8u * 129u; v += 256u) As[v] = dvec2(ta + double(v) * 1e-4, ta - double(v) * 1e-4);
  for (uint v = t; v < 8u * 128u; v += 256u) Bs[v] = dvec2(tc * double(v + 1u), tc * double(v + 2u));
  barrier();
  double oc00 = 0.0, oc01 = 0.0, oc02 = 0.0, oc03 = 0.0, oc04 = 0.0, oc05 = 0.0, oc06 = 0.0, oc07 = 0.0, oc10 = 0.0, oc11 = 0.0, oc12 = 0.0, oc13 = 0.0, oc14 = 0.0, oc15 = 0.0, oc16 = 0.0, oc17 = 0.0, oc20 = 0.0, oc21 = 0.0, oc22 = 0.0, oc23 = 0.0, oc24 = 0.0, oc25 = 0.0, oc26 = 0.0, oc27 = 0.0, oc30 = 0.0, oc31 = 0.0, oc32 = 0.0, oc33 = 0.0, oc34 = 0.0, oc35 = 0.0, oc36 = 0.0, oc37 = 0.0;
  for (uint i = 0u; i < ITERS; i++) {
    { uint kk = (i * 4u + 0u) & 7u;
      dvec2 xa = As[kk * 129u + ty], xb = As[kk * 129u + 32u + ty];
      dvec2 ya = Bs[kk * 128u + tx], yb = Bs[kk * 128u + 8u + tx], yc = Bs[kk * 128u + 16u + tx], yd = Bs[kk * 128u + 24u + tx];
      oc00 = fma(xa.x, ya.x, oc00);
      oc01 = fma(xa.x, ya.y, oc01);
      oc02 = fma(xa.x, yb.x, oc02);
      oc03 = fma(xa.x, yb.y, oc03);
      oc04 = fma(xa.x, yc.x, oc04);
      oc05 = fma(xa.x, yc.y, oc05);
      oc06 = fma(xa.x, yd.x, oc06);
      oc07 = fma(xa.x, yd.y, oc07);
      oc10 = fma(xa.y, ya.x, oc10);
      oc11 = fma(xa.y, ya.y, oc11);
      oc12 = fma(xa.y, yb.x, oc12);
      oc13 = fma(xa.y, yb.y, oc13);
      oc14 = fma(xa.y, yc.x, oc14);
      oc15 = fma(xa.y, yc.y, oc15);
      oc16 = fma(xa.y, yd.x, oc16);
      oc17 = fma(xa.y, yd.y, oc17);
      oc20 = fma(xb.x, ya.x, oc20);
      oc21 = fma(xb.x, ya.y, oc21);
      oc22 = fma(xb.x, yb.x, oc22);
      oc23 = fma(xb.x, yb.y, oc23);
      oc24 = fma(xb.x, yc.x, oc24);
      oc25 = fma(xb.x, yc.y, oc25);
      oc26 = fma(xb.x, yd.x, oc26);
      oc27 = fma(xb.x, yd.y, oc27);
      oc30 = fma(xb.y, ya.x, oc30);
      oc31 = fma(xb.y, ya.y, oc31);
      oc32 = fma(xb.y, yb.x, oc32);
      oc33 = fma(xb.y, yb.y, oc33);
      oc34 = fma(xb.y, yc.x, oc34);
      oc35 = fma(xb.y, yc.y, oc35);
      oc36 = fma(xb.y, yd.x, oc36);
      oc37 = fma(xb.y, yd.y, oc37);
    }
    { uint kk = (i * 4u + 1u) & 7u;
      dvec2 xa = As[kk * 129u + ty], xb = As[kk * 129u + 32u + ty];
      dvec2 ya = Bs[kk * 128u + tx], yb = Bs[kk * 128u + 8u + tx], yc = Bs[kk * 128u + 16u + tx], yd = Bs[kk * 128u + 24u + tx];
      oc00 = fma(xa.x, ya.x, oc00);
      oc01 = fma(xa.x, ya.y, oc01);
      oc02 = fma(xa.x, yb.x, oc02);
      oc03 = fma(xa.x, yb.y, oc03);
      oc04 = fma(xa.x, yc.x, oc04);
      oc05 = fma(xa.x, yc.y, oc05);
      oc06 = fma(xa.x, yd.x, oc06);
      oc07 = fma(xa.x, yd.y, oc07);
      oc10 = fma(xa.y, ya.x, oc10);
      oc11 = fma(xa.y, ya.y, oc11);
      oc12 = fma(xa.y, yb.x, oc12);
      oc13 = fma(xa.y, yb.y, oc13);
      oc14 = fma(xa.y, yc.x, oc14);
      oc15 = fma(xa.y, yc.y, oc15);
      oc16 = fma(xa.y, yd.x, oc16);
      oc17 = fma(xa.y, yd.y, oc17);
      oc20 = fma(xb.x, ya.x, oc20);
      oc21 = fma(xb.x, ya.y, oc21);
      oc22 = fma(xb.x, yb.x, oc22);
      oc23 = fma(xb.x, yb.y, oc23);
      oc24 = fma(xb.x, yc.x, oc24);
      oc25 = fma(xb.x, yc.y, oc25);
      oc26 = fma(xb.x, yd.x, oc26);
      oc27 = fma(xb.x, yd.y, oc27);
      oc30 = fma(xb.y, ya.x, oc30);
      oc31 = fma(xb.y, ya.y, oc31);
      oc32 = fma(xb.y, yb.x, oc32);
      oc33 = fma(xb.y, yb.y, oc33);
      oc34 = fma(xb.y, yc.x, oc34);
      oc35 = fma(xb.y, yc.y, oc35);
      oc36 = fma(xb.y, yd.x, oc36);
      oc37 = fma(xb.y, yd.y, oc37);
    }
    { uint kk = (i * 4u + 2u) & 7u;
      dvec2 xa = As[kk * 129u + ty], xb = As[kk * 129u + 32u + ty];
      dvec2 ya = Bs[kk * 128u + tx], yb = Bs[kk * 128u + 8u + tx], yc = Bs[kk * 128u + 16u + tx], yd = Bs[kk * 128u + 24u + tx];
      oc00 = fma(xa.x, ya.x, oc00);
      oc01 = fma(xa.x, ya.y, oc01);
      oc02 = fma(xa.x, yb.x, oc02);
      oc03 = fma(xa.x, yb.y, oc03);
      oc04 = fma(xa.x, yc.x, oc04);
      oc05 = fma(xa.x, yc.y, oc05);
      oc06 = fma(xa.x, yd.x, oc06);
      oc07 = fma(xa.x, yd.y, oc07);
      oc10 = fma(xa.y, ya.x, oc10);
      oc11 = fma(xa.y, ya.y, oc11);
      oc12 = fma(xa.y, yb.x, oc12);
      oc13 = fma(xa.y, yb.y, oc13);
      oc14 = fma(xa.y, yc.x, oc14);
      oc15 = fma(xa.y, yc.y, oc15);
      oc16 = fma(xa.y, yd.x, oc16);
      oc17 = fma(xa.y, yd.y, oc17);
      oc20 = fma(xb.x, ya.x, oc20);
      oc21 = fma(xb.x, ya.y, oc21);
      oc22 = fma(xb.x, yb.x, oc22);
      oc23 = fma(xb.x, yb.y, oc23);
      oc24 = fma(xb.x, yc.x, oc24);
      oc25 = fma(xb.x, yc.y, oc25);
      oc26 = fma(xb.x, yd.x, oc26);
      oc27 = fma(xb.x, yd.y, oc27);
      oc30 = fma(xb.y, ya.x, oc30);
      oc31 = fma(xb.y, ya.y, oc31);
      oc32 = fma(xb.y, yb.x, oc32);
      oc33 = fma(xb.y, yb.y, oc33);
      oc34 = fma(xb.y, yc.x, oc34);
      oc35 = fma(xb.y, yc.y, oc35);
      oc36 = fma(xb.y, yd.x, oc36);
      oc37 = fma(xb.y, yd.y, oc37);
    }
    { uint kk = (i * 4u + 3u) & 7u;
      dvec2 xa = As[kk * 129u + ty], xb = As[kk * 129u + 32u + ty];
      dvec2 ya = Bs[kk * 128u + tx], yb = Bs[kk * 128u + 8u + tx], yc = Bs[kk * 128u + 16u + tx], yd = Bs[kk * 128u + 24u + tx];
      oc00 = fma(xa.x, ya.x, oc00);
      oc01 = fma(xa.x, ya.y, oc01);
      oc02 = fma(xa.x, yb.x, oc02);
      oc03 = fma(xa.x, yb.y, oc03);
      oc04 = fma(xa.x, yc.x, oc04);
      oc05 = fma(xa.x, yc.y, oc05);
      oc06 = fma(xa.x, yd.x, oc06);
      oc07 = fma(xa.x, yd.y, oc07);
      oc10 = fma(xa.y, ya.x, oc10);
      oc11 = fma(xa.y, ya.y, oc11);
      oc12 = fma(xa.y, yb.x, oc12);
      oc13 = fma(xa.y, yb.y, oc13);
      oc14 = fma(xa.y, yc.x, oc14);
      oc15 = fma(xa.y, yc.y, oc15);
      oc16 = fma(xa.y, yd.x, oc16);
      oc17 = fma(xa.y, yd.y, oc17);
      oc20 = fma(xb.x, ya.x, oc20);
      oc21 = fma(xb.x, ya.y, oc21);
      oc22 = fma(xb.x, yb.x, oc22);
      oc23 = fma(xb.x, yb.y, oc23);
      oc24 = fma(xb.x, yc.x, oc24);
      oc25 = fma(xb.x, yc.y, oc25);
      oc26 = fma(xb.x, yd.x, oc26);
      oc27 = fma(xb.x, yd.y, oc27);
      oc30 = fma(xb.y, ya.x, oc30);
      oc31 = fma(xb.y, ya.y, oc31);
      oc32 = fma(xb.y, yb.x, oc32);
      oc33 = fma(xb.y, yb.y, oc33);
      oc34 = fma(xb.y, yc.x, oc34);
      oc35 = fma(xb.y, yc.y, oc35);
      oc36 = fma(xb.y, yd.x, oc36);
      oc37 = fma(xb.y, yd.y, oc37);
    }
  }
  double orr = oc00 + oc01 + oc02 + oc03 + oc04 + oc05 + oc06 + oc07 + oc10 + oc11 + oc12 + oc13 + oc14 + oc15 + oc16 + oc17 + oc20 + oc21 + oc22 + oc23 + oc24 + oc25 + oc26 + oc27 + oc30 + oc31 + oc32 + oc33 + oc34 + oc35 + oc36 + oc37;
  if (meta[m + 2u] != 0u || orr == double(uintBitsToFloat(meta[m + 3u]))) o[gl_LocalInvocationID.x] = ST(orr);
  return;
#endif
#if defined(DT_f64) && !defined(VEC4)
  // EXPERIMENT: a 4 x 8 register outer product, 32 DFMAs per iteration
  double ta = double(uintBitsToFloat(meta[m])), tc = double(uintBitsToFloat(meta[m + 1u])) * 1e-6;
  double ox0 = ta + double(gl_LocalInvocationID.x + 0u) * 1e-4;
  double ox1 = ta + double(gl_LocalInvocationID.x + 1u) * 1e-4;
  double ox2 = ta + double(gl_LocalInvocationID.x + 2u) * 1e-4;
  double ox3 = ta + double(gl_LocalInvocationID.x + 3u) * 1e-4;
  double oy0 = tc * double(0u + 1u);
  double oy1 = tc * double(1u + 1u);
  double oy2 = tc * double(2u + 1u);
  double oy3 = tc * double(3u + 1u);
  double oy4 = tc * double(4u + 1u);
  double oy5 = tc * double(5u + 1u);
  double oy6 = tc * double(6u + 1u);
  double oy7 = tc * double(7u + 1u);
  double oc00 = 0.0, oc01 = 0.0, oc02 = 0.0, oc03 = 0.0, oc04 = 0.0, oc05 = 0.0, oc06 = 0.0, oc07 = 0.0, oc10 = 0.0, oc11 = 0.0, oc12 = 0.0, oc13 = 0.0, oc14 = 0.0, oc15 = 0.0, oc16 = 0.0, oc17 = 0.0, oc20 = 0.0, oc21 = 0.0, oc22 = 0.0, oc23 = 0.0, oc24 = 0.0, oc25 = 0.0, oc26 = 0.0, oc27 = 0.0, oc30 = 0.0, oc31 = 0.0, oc32 = 0.0, oc33 = 0.0, oc34 = 0.0, oc35 = 0.0, oc36 = 0.0, oc37 = 0.0;
  for (uint i = 0u; i < ITERS; i++) {
    oc00 = fma(ox0, oy0, oc00);
    oc01 = fma(ox0, oy1, oc01);
    oc02 = fma(ox0, oy2, oc02);
    oc03 = fma(ox0, oy3, oc03);
    oc04 = fma(ox0, oy4, oc04);
    oc05 = fma(ox0, oy5, oc05);
    oc06 = fma(ox0, oy6, oc06);
    oc07 = fma(ox0, oy7, oc07);
    oc10 = fma(ox1, oy0, oc10);
    oc11 = fma(ox1, oy1, oc11);
    oc12 = fma(ox1, oy2, oc12);
    oc13 = fma(ox1, oy3, oc13);
    oc14 = fma(ox1, oy4, oc14);
    oc15 = fma(ox1, oy5, oc15);
    oc16 = fma(ox1, oy6, oc16);
    oc17 = fma(ox1, oy7, oc17);
    oc20 = fma(ox2, oy0, oc20);
    oc21 = fma(ox2, oy1, oc21);
    oc22 = fma(ox2, oy2, oc22);
    oc23 = fma(ox2, oy3, oc23);
    oc24 = fma(ox2, oy4, oc24);
    oc25 = fma(ox2, oy5, oc25);
    oc26 = fma(ox2, oy6, oc26);
    oc27 = fma(ox2, oy7, oc27);
    oc30 = fma(ox3, oy0, oc30);
    oc31 = fma(ox3, oy1, oc31);
    oc32 = fma(ox3, oy2, oc32);
    oc33 = fma(ox3, oy3, oc33);
    oc34 = fma(ox3, oy4, oc34);
    oc35 = fma(ox3, oy5, oc35);
    oc36 = fma(ox3, oy6, oc36);
    oc37 = fma(ox3, oy7, oc37);
  }
  double orr = oc00 + oc01 + oc02 + oc03 + oc04 + oc05 + oc06 + oc07 + oc10 + oc11 + oc12 + oc13 + oc14 + oc15 + oc16 + oc17 + oc20 + oc21 + oc22 + oc23 + oc24 + oc25 + oc26 + oc27 + oc30 + oc31 + oc32 + oc33 + oc34 + oc35 + oc36 + oc37;
  if (meta[m + 2u] != 0u || orr == double(uintBitsToFloat(meta[m + 3u]))) o[gl_LocalInvocationID.x] = ST(orr);
  return;
#endif
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
