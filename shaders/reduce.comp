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
//       3 fold, 4 add (the f32 sums' and products' form, below), 5 vec
//       (16-byte loads a round, 0: none; below)
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
layout(constant_id = 4) const uint ADD = 0u;
layout(constant_id = 5) const uint VEC = 0u;
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

// VEC (f32 and 16-bit dtypes, not ARG): a contiguous run starting on 16
// bytes read as uvec4s, VEC of them a round (at most 4); invocation t takes
// vectors t, t + W, ... (their elements in order), the last few elements
// the element loop's
#if (defined(DT_f32) || defined(WORDS16)) && !defined(ARG)
#define VEC_OK 1
layout(std430, binding = 1) readonly buffer InV { uvec4 xv[]; };
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

// ADD (spec constant 4): how an invocation's own run of f32 sums, means
// and products (f16 and bf16 too: they compute in f32) combines; the tree
// over the workgroup's invocations and the partials' tree always combine
// exactly (a few dozen r_add / r_mul a workgroup).
//   0 exact: r_add / r_mul at every element (an exponent test and the
//     inlined rare exact path at each)
//   1 fast: the driver's add or multiply, and one test a value: a sum
//     notes a loaded value (element or partial) that is nonzero and below
//     2^-103 in magnitude; a product notes a loaded value whose exponent
//     bits are 0 (zero or denormal) and a product below 2^-125.  An
//     invocation that noted one runs its run again with exact adds (its
//     warp alone pays).  Why a sum needs no test of its results: a float
//     of magnitude >= 2^-103 is a multiple of 2^-126, so every partial sum
//     of such values is one too (a rounded sum at or above 2^-103 lies on
//     a grid of spacing >= 2^-126, a smaller one is exact), so no add of
//     the run meets or makes a denormal and the driver's add is IEEE's,
//     flushing or not.  f16 values (multiples of 2^-24) never trip it.
//     A product: operands and result normal (or inf / NaN) is IEEE's too.
//   2 native: the driver's add or multiply, never checked (diagnostic
//     only: a flushing driver loses denormal sums)
//   3 fuzz: as 1, with the driver's add and multiply made to flush
//     denormal operands and results as NVIDIA's f32 does (tests on
//     lavapipe: every run that met a denormal must be run again, or the
//     results differ from exact's)
//   4 flush: as 2 with that flush (tests: the emulation does lose sums)
// Other ops and dtypes (f64: nxd_*) always combine exactly.
#if defined(IS_FLOAT) && !defined(DT_f64) && !defined(ARG)
const bool FAST = (OP == 0u || OP == 1u || OP == 6u) && ADD != 0u;
#else
const bool FAST = false;
#endif

#if defined(IS_FLOAT) && !defined(DT_f64) && !defined(ARG)
float ftz_fuzz(float x) {
  uint u = floatBitsToUint(x);
  return (u & 0x7f800000u) == 0u ? uintBitsToFloat(u & 0x80000000u) : x;
}
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

// acc (+) v in an invocation's run: exact, or (FAST and not exact) the
// driver's add or multiply, noting in rare (nonzero) a value that may have met a
// denormal (ADD above).
// tested: the caller tested v already (ROUND_TEST)
T run_combine(T acc, T v, bool exact, inout uint rare, bool tested) {
#if defined(IS_FLOAT) && !defined(DT_f64) && !defined(ARG)
  if (FAST && !exact) {
    uint bv = floatBitsToUint(v) & 0x7fffffffu;
    bool emu = ADD == 3u || ADD == 4u, check = ADD == 1u || ADD == 3u;
    if (OP == 1u) {
      float p = emu ? ftz_fuzz(ftz_fuzz(acc) * ftz_fuzz(v)) : acc * v;
      if (check)
        rare |= uint((bv & 0x7f800000u) == 0u) | uint((floatBitsToUint(p) & 0x7f800000u) <= 0x00800000u);
      return p;
    }
    // (f16 values and sums of them are multiples of 2^-24: never rare)
#ifndef DT_f16
    if (check && !tested) rare |= uint(bv - 1u < 0x0bffffffu);   // 0 < |v| < 2^-103
#endif
    return emu ? ftz_fuzz(ftz_fuzz(acc) + ftz_fuzz(v)) : acc + v;
  }
#endif
  return combine(acc, v);
}

// Fast sums over 16-byte vectors: a round's values tested at once in
// float, their least magnitude (min, abs a free modifier: no integer ops,
// which an SM runs at half the float rate) below 2^-103 (zeros, denormals
// flushed or not, tiny normals) sending the round to the integer test of
// each value.  A NaN may hide a value from min, but then the run's sum is
// NaN either way.
// (a macro: glslang 12 wrote a spec-constant bool's negation before it)
#if defined(IS_FLOAT) && !defined(DT_f64) && !defined(DT_f16) && !defined(ARG)
#define ROUND_TEST (FAST && OP != 1u && (ADD == 1u || ADD == 3u))
#else
#define ROUND_TEST false
#endif
uint tiny_nz(float v) { return uint((floatBitsToUint(v) & 0x7fffffffu) - 1u < 0x0bffffffu); }

// Takes element j (value v, at offset off) into the running result.
void fold(inout T acc, inout int idx, T v, uint off, uint j, bool exact, inout uint rare) {
#ifdef ARG
  int vi = MODE == 2u ? pidx[off] : int(j);
  if (better(v, vi, acc, idx)) { acc = v; idx = vi; }
#else
  acc = run_combine(acc, v, exact, rare, false);
#endif
}

// Invocation t's part of elements [lo, hi) of the run at base, combined
// exactly or not (run_combine); fold_partials: the run is P partials in y.
// E: the elements of a unit the invocation took (1 element, 2 a word, 4 or
// 8 a vector), for run_exact.
T run_loop(uint m, uint base, uint lo, uint hi, bool fold_partials, bool exact, inout int idx,
           inout uint rare, out uint E) {
  uint t = gl_LocalInvocationID.x;
  E = 1u;
  bool partials = MODE == 2u || fold_partials;
  T acc = OP == 0u || OP == 6u ? T(0) : (OP == 1u ? T(1) : (OP == 2u || OP == 4u || OP == 7u ? T_LOWEST : T_HIGHEST));
  // four elements per round, loaded before any is combined (one load in
  // flight per invocation left sum f32 at 76% of PyTorch's bandwidth at
  // 64M on an H100); they are combined in the order of the plain loop, so
  // results do not change
  uint j = lo + t;
  const uint W = gl_WorkGroupSize.x;
  bool vec_done = false;
#ifdef VEC_OK
#ifdef WORDS16
  const uint EV = 8u;   // elements a vector
#else
  const uint EV = 4u;
#endif
  if (VEC != 0u && !partials && meta[m + 3u] == 1u && meta[m + 28u] == 1u && ((base + lo) % EV) == 0u) {
    uint v0 = (base + lo) / EV, nv = (hi - lo) / EV, q = t;
    const uint VU = min(VEC, 4u);
    for (; q + (VU - 1u) * W < nv; q += VU * W) {
      uvec4 v[4];
      [[unroll]] for (uint u = 0u; u < 4u; u++)
        if (u < VU) v[u] = xv[v0 + q + u * W];
#if defined(IS_FLOAT) && !defined(DT_f64)
      if (ROUND_TEST && !exact) {
        float mn = uintBitsToFloat(0x7f800000u);
        [[unroll]] for (uint u = 0u; u < 4u; u++)
          [[unroll]] for (uint k = 0u; k < 4u; k++) {
#ifdef WORDS16
            T2 e = LDW2(v[u][k]);
            if (u < VU) mn = min(mn, min(abs(e.x), abs(e.y)));
#else
            if (u < VU) mn = min(mn, abs(uintBitsToFloat(v[u][k])));
#endif
          }
        if (mn < uintBitsToFloat(0x0c000000u)) {   // 2^-103
          [[unroll]] for (uint u = 0u; u < 4u; u++)
            [[unroll]] for (uint k = 0u; k < 4u; k++) {
#ifdef WORDS16
              T2 e = LDW2(v[u][k]);
              if (u < VU) rare |= tiny_nz(e.x) | tiny_nz(e.y);
#else
              if (u < VU) rare |= tiny_nz(uintBitsToFloat(v[u][k]));
#endif
            }
        }
      }
#endif
      [[unroll]] for (uint u = 0u; u < 4u; u++) {
        if (u >= VU) break;
        [[unroll]] for (uint k = 0u; k < 4u; k++) {
#ifdef WORDS16
          T2 e = LDW2(v[u][k]);
          acc = run_combine(acc, e.x, exact, rare, ROUND_TEST);
          acc = run_combine(acc, e.y, exact, rare, ROUND_TEST);
#else
          acc = run_combine(acc, uintBitsToFloat(v[u][k]), exact, rare, ROUND_TEST);
#endif
        }
      }
    }
    for (; q < nv; q += W) {
      uvec4 v1 = xv[v0 + q];
      [[unroll]] for (uint k = 0u; k < 4u; k++) {
#ifdef WORDS16
        T2 e = LDW2(v1[k]);
        acc = run_combine(acc, e.x, exact, rare, false);
        acc = run_combine(acc, e.y, exact, rare, false);
#else
        acc = run_combine(acc, uintBitsToFloat(v1[k]), exact, rare, false);
#endif
      }
    }
    j = lo + nv * EV + t;   // the rest (fewer than EV): the element loop
    vec_done = true;
    E = EV;
  }
#endif
#ifdef WORDS16
  // a contiguous run starting on a word: invocation t takes words t, t + W,
  // ... (elements 2w and 2w + 1, in that order), four words per round; an
  // odd last element goes to invocation 0
  if (!vec_done && !partials && meta[m + 3u] == 1u && meta[m + 28u] == 1u && ((base + lo) & 1u) == 0u) {
    uint w0 = (base + lo) >> 1u, nw = (hi - lo) >> 1u, q = t;
    for (; q + 3u * W < nw; q += 4u * W) {
      uint v[4];
      [[unroll]] for (uint u = 0u; u < 4u; u++) v[u] = xw[w0 + q + u * W];
      [[unroll]] for (uint u = 0u; u < 4u; u++) {
        T2 e = LDW2(v[u]);
        acc = run_combine(acc, e.x, exact, rare, false);
        acc = run_combine(acc, e.y, exact, rare, false);
      }
    }
    for (; q < nw; q += W) {
      T2 e = LDW2(xw[w0 + q]);
      acc = run_combine(acc, e.x, exact, rare, false);
      acc = run_combine(acc, e.y, exact, rare, false);
    }
    if (t == 0u && ((hi - lo) & 1u) != 0u) acc = run_combine(acc, LD(x[base + hi - 1u]), exact, rare, false);
    j = hi; // done: the loops below run no round
    E = 2u;
  }
#endif
  for (; j + 3u * W < hi; j += 4u * W) {
    uint off[4];
    T v[4];
    [[unroll]] for (uint u = 0u; u < 4u; u++) {
      off[u] = elem_offset(m, base, j + u * W, partials);
      v[u] = load(off[u], fold_partials);
    }
    [[unroll]] for (uint u = 0u; u < 4u; u++) fold(acc, idx, v[u], off[u], j + u * W, exact, rare);
  }
  for (; j < hi; j += W) {
    uint off = elem_offset(m, base, j, partials);
    fold(acc, idx, load(off, fold_partials), off, j, exact, rare);
  }
  return acc;
}

// fast's rare path: invocation t's elements as run_loop took them (units
// t, t + W, ... of E contiguous elements, then the rest one by one), in
// the same order, with exact adds; one at a time and not unrolled, so this
// path, which almost never runs, needs few registers (the kernel's
// registers, which bound how many invocations an SM holds, are the most
// any path needs).
T run_exact(uint m, uint base, uint lo, uint hi, bool fold_partials, uint E) {
  uint t = gl_LocalInvocationID.x;
  const uint W = gl_WorkGroupSize.x;
  bool partials = MODE == 2u || fold_partials;
  T acc = OP == 1u ? T(1) : T(0);
  uint nu = E > 1u ? (hi - lo) / E : 0u;
  [[dont_unroll]] for (uint q = t; q < nu; q += W)
    [[dont_unroll]] for (uint e = 0u; e < E; e++) acc = combine(acc, LD(x[base + lo + q * E + e]));
  [[dont_unroll]] for (uint j = lo + nu * E + t; j < hi; j += W)
    acc = combine(acc, load(elem_offset(m, base, j, partials), fold_partials));
  return acc;
}

// Reduces elements [lo, hi) of the run at base into sval[0] (and sidx[0]);
// the whole workgroup calls it.  fold_partials: the run is P partials in y.
void reduce_run(uint m, uint base, uint lo, uint hi, bool fold_partials) {
  uint t = gl_LocalInvocationID.x;
  int idx = -1;
  uint rare = 0u, E;
  T acc = run_loop(m, base, lo, hi, fold_partials, !FAST, idx, rare, E);
  // fast (ADD 1, 3): an invocation that noted a rare value runs again,
  // exactly (the same order, so its result is exact's bit for bit)
  if (FAST && rare != 0u) acc = run_exact(m, base, lo, hi, fold_partials, E);
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
