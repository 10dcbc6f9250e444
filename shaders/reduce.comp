#version 450
// reduce.comp - one workgroup per output element (grid-stride over
// outputs); its threads stride over the reduced elements, then a tree in
// shared memory.  -DARG builds argmax/argmin (i32 index output).
//
// meta: [0] nout [1] nred [2] out_rank [3] red_rank [4..11] out dims
//       [12..19] input strides of kept dims [20..27] reduced dims
//       [28..35] input strides of reduced dims
// spec: 0 workgroup size, 1 op (0 sum 1 product 2 max 3 min 4 argmax
//       5 argmin 6 mean)
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OP = 0u;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) readonly buffer In { ST x[]; };
#ifdef ARG
layout(std430, binding = 2) writeonly buffer Out { int y[]; };
#else
layout(std430, binding = 2) writeonly buffer Out { ST y[]; };
#endif

shared T sval[gl_WorkGroupSize.x];
shared int sidx[gl_WorkGroupSize.x];

// NaN wins (first NaN for arg*), then the larger/smaller, ties to the first.
bool better(T va, int ia, T vb, int ib) {   // is (va, ia) preferred?
  if (ia < 0) return false;
  if (ib < 0) return true;
  bool na = t_isnan(va), nb = t_isnan(vb);
  if (na || nb) return na && (!nb || ia < ib);
  if (va == vb) return ia < ib;
  return (OP == 2u || OP == 4u) ? va > vb : va < vb;
}

T combine(T a, T b) {
  if (OP == 0u || OP == 6u) return a + b;
  if (OP == 1u) return a * b;
  if (t_isnan(a)) return a;
  if (t_isnan(b)) return b;
  return OP == 2u ? (a > b ? a : b) : (a < b ? a : b);
}

void main() {
  uint m = pc.meta_off;
  uint nout = meta[m], nred = meta[m + 1u];
  uint out_rank = meta[m + 2u], red_rank = meta[m + 3u];
  uint t = gl_LocalInvocationID.x;
  T init = OP == 0u || OP == 6u ? T(0) : (OP == 1u ? T(1) : (OP == 2u || OP == 4u ? T_LOWEST : T_HIGHEST));
  for (uint o = gl_WorkGroupID.x; o < nout; o += gl_NumWorkGroups.x) {
    uint base = 0u, r = o;
    for (int d = int(out_rank) - 1; d >= 0; d--) {
      uint dim = meta[m + 4u + uint(d)];
      uint q = r / dim;
      base += (r - q * dim) * meta[m + 12u + uint(d)];
      r = q;
    }
    T acc = init;
    int idx = -1;
    for (uint j = t; j < nred; j += gl_WorkGroupSize.x) {
      uint off = base, rr = j;
      for (int d = int(red_rank) - 1; d >= 0; d--) {
        uint dim = meta[m + 20u + uint(d)];
        uint q = rr / dim;
        off += (rr - q * dim) * meta[m + 28u + uint(d)];
        rr = q;
      }
      T v = T(x[off]);
#ifdef ARG
      if (better(v, int(j), acc, idx)) { acc = v; idx = int(j); }
#else
      acc = combine(acc, v);
#endif
    }
    sval[t] = acc;
    sidx[t] = idx;
    barrier();
    for (uint s = gl_WorkGroupSize.x / 2u; s > 0u; s >>= 1) {
      if (t < s) {
#ifdef ARG
        if (better(sval[t + s], sidx[t + s], sval[t], sidx[t])) {
          sval[t] = sval[t + s];
          sidx[t] = sidx[t + s];
        }
#else
        sval[t] = combine(sval[t], sval[t + s]);
#endif
      }
      barrier();
    }
    if (t == 0u) {
#ifdef ARG
      y[o] = sidx[0];
#else
      T res = sval[0];
#ifdef IS_FLOAT
      if (OP == 6u) res = res / T(nred);
#endif
      y[o] = ST(res);
#endif
    }
    barrier();
  }
}
