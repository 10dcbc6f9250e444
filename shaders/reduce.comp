#version 450
// reduce.comp - reductions over any set of axes.  A workgroup reduces one
// run of elements for one output: its invocations stride over the run, then
// a tree in shared memory.  MODE (spec constant 2):
//   0 direct:  one workgroup per output (grid-stride), the whole reduced set
//   1 partial: nout * P workgroups; group (o, p) reduces elements
//              [p*chunk, (p+1)*chunk) of output o into partial[o*P + p]
//   2 final:   one workgroup per output reduces its P partials (contiguous)
// FOLD (spec constant 3, MODE 1 and not ARG): the partial pass finishes the
// job itself: the last workgroup of an output to store its partial (counted
// by an atomic) reduces that output's P partials exactly as MODE 2 would,
// in index order, so the result does not depend on which group came last.
// -DARG builds argmax/argmin: the result is the i32 index in the reduced set.
//
// meta: [0] nout [1] nred [2] out_rank [3] red_rank [4..11] out dims
//       [12..19] input strides of kept dims [20..27] reduced dims
//       [28..35] input strides of reduced dims [36] P [37] chunk
//       [38] FOLD: first word of the counters (one per output, zeroed) in
//       binding 3
// final mode: [0] nout [1] P [2] nred (mean divides by it)
// spec: 0 workgroup size, 1 op (0 sum 1 product 2 max 3 min 4 argmax
//       5 argmin 6 mean 7 argmax and 8 argmin with ties to the last), 2 mode,
//       3 fold
// bindings: 1 values in, 2 result out (ARG: i32; FOLD: the partials),
//           ARG: 3 partial values out (mode 1), 4 partial indices in
//           (mode 2); not ARG: 3 counters and 4 final result (FOLD only)
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "dtype.glsl"
#ifdef IS_FLOAT
#include "nxmath.glsl"
#endif

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OP = 0u;
layout(constant_id = 2) const uint MODE = 0u;
layout(constant_id = 3) const uint FOLD = 0u;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) readonly buffer In { ST x[]; };
#ifdef ARG
layout(std430, binding = 2) writeonly buffer Out { int y[]; };
layout(std430, binding = 3) writeonly buffer PartVal { ST pval[]; };
layout(std430, binding = 4) readonly buffer PartIdx { int pidx[]; };
#else
// coherent: under FOLD another workgroup's partials are read back from here
layout(std430, binding = 2) coherent buffer Out { ST y[]; };
layout(std430, binding = 3) coherent buffer Count { uint count[]; };
layout(std430, binding = 4) writeonly buffer Final { ST yfinal[]; };
#endif

// Partial results (MODE 1 out, MODE 2 and FOLD in): in the dtype itself,
// except f16 and bf16, whose partials stay f32 (the same bindings seen as
// float), so they are rounded once, at the end, not per partial.
#if defined(DT_f16) || defined(DT_bf16)
#define PT float
layout(std430, binding = 1) readonly buffer InP { float xp[]; };
#ifdef ARG
layout(std430, binding = 3) writeonly buffer PartValP { float pvalp[]; };
#define PART_STORE_PVAL(g, v) pvalp[g] = (v)
#else
layout(std430, binding = 2) coherent buffer OutP { float yp[]; };
#define PART_LOAD_Y(off) yp[off]
#define PART_STORE_Y(g, v) yp[g] = (v)
#endif
#define PART_LOAD_X(off) xp[off]
#else
#define PART_STORE_PVAL(g, v) pval[g] = STV(v)
#define PART_LOAD_Y(off) LD(y[off])
#define PART_STORE_Y(g, v) y[g] = STV(v)
#define PART_LOAD_X(off) LD(x[off])
#endif

// 16-bit dtypes: the input also seen as uint words, two elements each
// (reduce_run's contiguous path: a warp's load is 128 bytes, not 64)
#if (defined(DT_f16) || defined(DT_bf16) || defined(DT_i16) || defined(DT_u16)) && !defined(ARG)
#define WORDS16 1
layout(std430, binding = 1) readonly buffer InW { uint xw[]; };
// LDW2: a word's two elements (element 2w in .x); f16 through the driver's
// conversion where rtkernel.c defines NX_F16_HW (NXVK_F16_CVT), both at once
#if defined(DT_i16)
#define T2 ivec2
#define LDW2(v) ivec2(bitfieldExtract(int(v), 0, 16), bitfieldExtract(int(v), 16, 16))
#elif defined(DT_u16)
#define T2 uvec2
#define LDW2(v) uvec2((v) & 65535u, (v) >> 16u)
#elif defined(DT_f16) && defined(NX_F16_HW)
#define T2 vec2
#define LDW2(v) nx_f16x2_to_f32(v)
#else
#define T2 vec2
#define LDW2(v) vec2(LD((v) & 65535u), LD((v) >> 16u))
#endif
#endif

shared T sval[gl_WorkGroupSize.x];
shared int sidx[gl_WorkGroupSize.x];
shared bool slast;

// Floats: nxmath.glsl's add, multiply and divide (nxf_*, nxd_* for f64),
// IEEE on a driver that flushes denormals (NVIDIA's f32): the driver's
// instruction plus a test of exponent bits, an exact path only for zero or
// denormal operands or results.  With plain arithmetic such a driver turned
// a sum or product that passes through the denormal range into 0 (numpy
// keeps it).  Comparisons are on the bits (dtype.glsl's t_less), which such
// a driver would read as 0 for every denormal.
#if defined(DT_f64)
T r_add(T a, T b) { return nxd_add(a, b); }
T r_mul(T a, T b) { return nxd_mul(a, b); }
T r_div(T a, T b) { return nxd_div(a, b); }
bool r_zero(T a) { return nx_iszerod(a); }
#elif defined(IS_FLOAT)
T r_add(T a, T b) { return nxf_add(a, b); }
T r_mul(T a, T b) { return nxf_mul(a, b); }
T r_div(T a, T b) { return nxf_div(a, b); }
bool r_zero(T a) { return nx_iszerof(a); }
#else
T r_add(T a, T b) { return a + b; }
T r_mul(T a, T b) { return a * b; }
bool r_zero(T a) { return a == T(0); }
#endif

// NaN wins (the first NaN for arg*), then the larger/smaller, ties to the
// smaller index (-0 ties +0); OP 7 and 8 (argmax, argmin with tie_break
// high): ties, NaNs included, to the larger index.
bool better(T va, int ia, T vb, int ib) {   // is (va, ia) preferred?
  if (ia < 0) return false;
  if (ib < 0) return true;
  bool first = ia < ib;
  if (OP >= 7u) first = ia > ib;
  bool na = t_isnan(va), nb = t_isnan(vb);
  if (na || nb) return na && (!nb || first);
  bool lt = t_less(va, vb), gt = t_less(vb, va);
  if ((!lt && !gt) || (r_zero(va) && r_zero(vb))) return first;
  return (OP == 2u || OP == 4u || OP == 7u) ? gt : lt;
}

T combine(T a, T b) {
  if (OP == 0u || OP == 6u) return r_add(a, b);
  if (OP == 1u) return r_mul(a, b);
  if (t_isnan(a)) return a;
  if (t_isnan(b)) return b;
  // on the bits: -0 orders below +0, so max gives +0 and min -0 of equal
  // zeros whatever order the tree met them in
  bool lt = t_less(a, b);
  return OP == 2u ? (lt ? b : a) : (lt ? a : b);
}

// Input offset of reduced element j of output o (direct and partial modes).
uint kept_base(uint m, uint o) {
  uint base = 0u, r = o;
  for (int d = int(meta[m + 2u]) - 1; d >= 0; d--) {
    uint dim = meta[m + 4u + uint(d)];
    uint q = r / dim;
    base += (r - q * dim) * meta[m + 12u + uint(d)];
    r = q;
  }
  return base;
}

uint red_offset(uint m, uint j) {
  uint rank = meta[m + 3u];
  if (rank == 1u) return j * meta[m + 28u];
  uint off = 0u, rr = j;
  for (int d = int(rank) - 1; d >= 0; d--) {
    uint dim = meta[m + 20u + uint(d)];
    uint q = rr / dim;
    off += (rr - q * dim) * meta[m + 28u + uint(d)];
    rr = q;
  }
  return off;
}

// Offset of element j of the run that starts at base; runs of partials
// are contiguous.
uint elem_offset(uint m, uint base, uint j, bool partials) {
  return partials ? base + j : base + red_offset(m, j);
}

T load(uint off, bool fold_partials) {
#ifndef ARG
  if (fold_partials) return PART_LOAD_Y(off);
#endif
  return MODE == 2u ? PART_LOAD_X(off) : LD(x[off]);
}

// Takes element j (value v, at offset off) into the running result.
void fold(inout T acc, inout int idx, T v, uint off, uint j) {
#ifdef ARG
  int vi = MODE == 2u ? pidx[off] : int(j);
  if (better(v, vi, acc, idx)) { acc = v; idx = vi; }
#else
  acc = combine(acc, v);
#endif
}

// Reduces elements [lo, hi) of the run at base into sval[0] (and sidx[0]);
// the whole workgroup calls it.  fold_partials: the run is P partials in y.
void reduce_run(uint m, uint base, uint lo, uint hi, bool fold_partials) {
  uint t = gl_LocalInvocationID.x;
  bool partials = MODE == 2u || fold_partials;
  T acc = OP == 0u || OP == 6u ? T(0) : (OP == 1u ? T(1) : (OP == 2u || OP == 4u || OP == 7u ? T_LOWEST : T_HIGHEST));
  int idx = -1;
  // four elements per round, loaded before any is combined (one load in
  // flight per invocation left sum f32 at 76% of PyTorch's bandwidth at
  // 64M on an H100); they are combined in the order of the plain loop, so
  // results do not change
  uint j = lo + t;
  const uint W = gl_WorkGroupSize.x;
#ifdef WORDS16
  // a contiguous run starting on a word: invocation t takes words t, t + W,
  // ... (elements 2w and 2w + 1, in that order), four words per round; an
  // odd last element goes to invocation 0
  if (!partials && meta[m + 3u] == 1u && meta[m + 28u] == 1u && ((base + lo) & 1u) == 0u) {
    uint w0 = (base + lo) >> 1u, nw = (hi - lo) >> 1u, q = t;
    for (; q + 3u * W < nw; q += 4u * W) {
      uint v[4];
      [[unroll]] for (uint u = 0u; u < 4u; u++) v[u] = xw[w0 + q + u * W];
      [[unroll]] for (uint u = 0u; u < 4u; u++) {
        T2 e = LDW2(v[u]);
        acc = combine(acc, e.x);
        acc = combine(acc, e.y);
      }
    }
    for (; q < nw; q += W) {
      T2 e = LDW2(xw[w0 + q]);
      acc = combine(acc, e.x);
      acc = combine(acc, e.y);
    }
    if (t == 0u && ((hi - lo) & 1u) != 0u) acc = combine(acc, LD(x[base + hi - 1u]));
    j = hi; // done: the loops below run no round
  }
#endif
  for (; j + 3u * W < hi; j += 4u * W) {
    uint off[4];
    T v[4];
    [[unroll]] for (uint u = 0u; u < 4u; u++) {
      off[u] = elem_offset(m, base, j + u * W, partials);
      v[u] = load(off[u], fold_partials);
    }
    [[unroll]] for (uint u = 0u; u < 4u; u++) fold(acc, idx, v[u], off[u], j + u * W);
  }
  for (; j < hi; j += W) {
    uint off = elem_offset(m, base, j, partials);
    fold(acc, idx, load(off, fold_partials), off, j);
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
}

T finish(T res, uint nred) {
#ifdef IS_FLOAT
  if (OP == 6u) res = r_div(res, T(nred));
#endif
  return res;
}

void main() {
  uint m = pc.meta_off;
  uint nout = meta[m];
  uint t = gl_LocalInvocationID.x;
  uint P = MODE == 1u ? meta[m + 36u] : 1u;
  for (uint g = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x; g < nout * P;
       g += gl_NumWorkGroups.x * gl_NumWorkGroups.y) {
    uint o = g / P, p = g - o * P;
    uint lo, hi, base = 0u;
    if (MODE == 2u) {
      lo = 0u;
      hi = meta[m + 1u];
      base = o * hi;
    } else if (MODE == 1u) {
      uint chunk = meta[m + 37u];
      lo = p * chunk;
      hi = min(lo + chunk, meta[m + 1u]);
      base = kept_base(m, o);
    } else {
      lo = 0u;
      hi = meta[m + 1u];
      base = kept_base(m, o);
    }
    reduce_run(m, base, lo, hi, false);
    if (t == 0u) {
#ifdef ARG
      y[g] = sidx[0];
      if (MODE == 1u) PART_STORE_PVAL(g, sval[0]);
#else
      if (MODE == 1u) PART_STORE_Y(g, sval[0]);
      else y[g] = STV(finish(sval[0], meta[m + (MODE == 2u ? 2u : 1u)]));
      if (MODE == 1u && FOLD != 0u) {
        // the partial is out before the count says so; the group that
        // makes the count P sees every partial of o
        memoryBarrierBuffer();
        slast = atomicAdd(count[meta[m + 38u] + o], 1u) == P - 1u;
      }
#endif
    }
    barrier();
#ifndef ARG
    if (MODE == 1u && FOLD != 0u && slast) {
      memoryBarrierBuffer();
      reduce_run(m, o * P, 0u, P, true);
      if (t == 0u) yfinal[o] = STV(finish(sval[0], meta[m + 1u]));
      barrier();
    }
#endif
  }
}
