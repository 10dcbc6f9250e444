#version 450
// scan.comp - cumulative sum, product, max and min along one axis, forward
// or reverse.  The tensor is seen as lines: element k of line (o, i) is at
// (o * n + k) * inner + i (reverse: k counts from the end of the axis).
// MODE (spec constant 2):
//   0 block totals: rows of contiguous lines (inner = 1) cut into blocks of
//     WG * ITEMS elements; virtual workgroup (r, b) combines block b of row r
//     into part[r * nb + b]
//   1 row offsets: one virtual workgroup per row turns its nb block totals
//     into exclusive prefixes, in place
//   2 block scans: virtual workgroup (r, b) scans its block (each invocation
//     its ITEMS contiguous elements in order, then a tree over the
//     invocations' totals) and starts from part[r * nb + b]
//   3 lines: one invocation per line, in order along the axis (inner > 1,
//     or short rows)
// Sums of floats are therefore not the sequential order's (modes 0..2): the
// bound is the reductions' n*eps*sum|x| (conformance/limits.json).
// max / min: NaN propagates; equal zeros give +0 (max) and -0 (min) whatever
// the order, as reduce.comp.
//
// meta: [0] rows (outer) [1] n [2] inner [3] nb (blocks per row) [4] reverse
// spec: 0 workgroup size, 1 op (0 sum 1 product 2 max 3 min), 2 mode, 3 ITEMS
// bindings: 1 x in, 2 y out, 3 block partials (T, rows * nb)
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "dtype.glsl"
#ifdef IS_FLOAT
#include "nxmath.glsl"
#endif

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OP = 0u;
layout(constant_id = 2) const uint MODE = 0u;
layout(constant_id = 3) const uint ITEMS = 8u;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) readonly buffer In { ST x[]; };
layout(std430, binding = 2) writeonly buffer Out { ST y[]; };
layout(std430, binding = 3) buffer Part { T part[]; };

shared T tot[gl_WorkGroupSize.x];

T identity() {
  // sums start from -0 (x + -0 is x for every x, -0 included)
#if defined(DT_f64)
  if (OP == 0u) return packDouble2x32(uvec2(0u, 0x80000000u));
#elif defined(IS_FLOAT)
  if (OP == 0u) return uintBitsToFloat(0x80000000u);
#else
  if (OP == 0u) return T(0);
#endif
  if (OP == 1u) return T(1);
  return OP == 2u ? T_LOWEST : T_HIGHEST;
}

// Floats: nxmath.glsl's add and multiply, IEEE on the bits (a driver that
// flushes denormals, NVIDIA's f32, would otherwise turn a denormal sum or
// product into 0, and a product that dips below 2^-126 and comes back would
// stay 0), and NaN read from the bits.
#if defined(DT_f64)
T sc_add(T a, T b) { return nxd_add(a, b); }
T sc_mul(T a, T b) { return nxd_mul(a, b); }
bool sc_isnan(T a) { return nx_isnand(a); }
#elif defined(IS_FLOAT)
T sc_add(T a, T b) { return nxf_add(a, b); }
T sc_mul(T a, T b) { return nxf_mul(a, b); }
bool sc_isnan(T a) { return nx_isnanf(a); }
#else
T sc_add(T a, T b) { return a + b; }
T sc_mul(T a, T b) { return a * b; }
bool sc_isnan(T a) { return false; }
#endif

T combine(T a, T b) {
  if (OP == 0u) return sc_add(a, b);
  if (OP == 1u) return sc_mul(a, b);
  if (sc_isnan(a)) return a;
  if (sc_isnan(b)) return b;
  bool lt = t_less(a, b); // on the bits: denormals kept, -0 below +0
  return OP == 2u ? (lt ? b : a) : (lt ? a : b);
}

// In-place inclusive scan of tot[] over the workgroup (Hillis-Steele: the
// workgroup is at most a few hundred wide); every invocation calls it.
void wg_scan() {
  uint t = gl_LocalInvocationID.x;
  for (uint d = 1u; d < gl_WorkGroupSize.x; d <<= 1) {
    barrier();
    T v = t >= d ? tot[t - d] : identity();
    barrier();
    if (t >= d) tot[t] = combine(v, tot[t]);
  }
  barrier();
}

void main() {
  uint m = pc.meta_off;
  uint rows = meta[m], n = meta[m + 1u], inner = meta[m + 2u], nb = meta[m + 3u];
  bool rev = meta[m + 4u] != 0u;
  uint t = gl_LocalInvocationID.x;
  if (MODE == 3u) {
    uint lines = rows * inner;
    uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint l = gl_GlobalInvocationID.x; l < lines; l += step) {
      uint o = l / inner, i = l - o * inner;
      uint base = o * n * inner + i;
      T acc = identity();
      for (uint k = 0u; k < n; k++) {
        uint j = rev ? n - 1u - k : k;
        uint at = base + j * inner;
        acc = k == 0u ? LD(x[at]) : combine(acc, LD(x[at]));
        y[at] = STV(acc);
      }
    }
    return;
  }
  if (MODE == 1u) {
    for (uint r = gl_WorkGroupID.x; r < rows; r += gl_NumWorkGroups.x) {
      uint per = (nb + gl_WorkGroupSize.x - 1u) / gl_WorkGroupSize.x;
      uint lo = min(t * per, nb), hi = min(lo + per, nb);
      T acc = identity();
      for (uint b = lo; b < hi; b++) acc = combine(acc, part[r * nb + b]);
      tot[t] = acc;
      wg_scan();
      T run = t == 0u ? identity() : tot[t - 1u];
      for (uint b = lo; b < hi; b++) {
        T v = part[r * nb + b];
        part[r * nb + b] = run;
        run = combine(run, v);
      }
      barrier();
    }
    return;
  }
  uint bsize = gl_WorkGroupSize.x * ITEMS;
  for (uint g = gl_WorkGroupID.x; g < rows * nb; g += gl_NumWorkGroups.x) {
    uint r = g / nb, b = g - r * nb;
    uint k0 = b * bsize + t * ITEMS;
    uint rowbase = r * n;
    T vals[ITEMS];
    T acc = identity();
    [[unroll]] for (uint q = 0u; q < ITEMS; q++) {
      uint k = k0 + q;
      T v = identity();
      if (k < n) v = LD(x[rowbase + (rev ? n - 1u - k : k)]);
      acc = combine(acc, v);
      vals[q] = acc;
    }
    tot[t] = acc;
    wg_scan();
    if (MODE == 0u) {
      if (t == 0u) part[g] = tot[gl_WorkGroupSize.x - 1u];
    } else {
      T off = part[g];
      T pre = t == 0u ? off : combine(off, tot[t - 1u]);
      bool first = b == 0u && t == 0u;   // the row's first element starts the scan as is
      [[unroll]] for (uint q = 0u; q < ITEMS; q++) {
        uint k = k0 + q;
        if (k < n) y[rowbase + (rev ? n - 1u - k : k)] = STV(first ? vals[q] : combine(pre, vals[q]));
      }
    }
    barrier();
  }
}
