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
//   4 one pass (rows of contiguous lines, in place of 0..2): tiles of
//     WG * ITEMS elements, each read once and written once.  A workgroup
//     takes the next tile from a ticket (flags[0]), so a tile only ever
//     waits for tiles whose workgroups have already started: no wait relies
//     on a workgroup that is not running, which Vulkan does not promise to
//     schedule.  Per tile: striped (coalesced) loads into shared memory,
//     each invocation scans its ITEMS contiguous elements, a tree over the
//     invocations; then the tile's total is published (part[tile], flag
//     set after a memory barrier).  The tiles of a row form groups of WG;
//     the tile's exclusive prefix is the fold, in a fixed tree, of the
//     totals of the earlier tiles of its group (one invocation reads each,
//     waiting for its flag) after the inclusive prefix of the previous
//     group, which that group's last tile publishes.  Every value is thus
//     a fixed function of the input, whichever workgroup ran first
//     (results do not change from run to run).  Stores are striped too.
// Sums of floats are therefore not the sequential order's (modes 0..2, 4):
// the bound is the reductions' n*eps*sum|x| (conformance/limits.json).
// max / min: NaN propagates; equal zeros give +0 (max) and -0 (min) whatever
// the order, as reduce.comp.
//
// meta: [0] rows (outer) [1] n [2] inner [3] nb (blocks per row) [4] reverse
//       [5] groups of WG tiles per row (mode 4)
// spec: 0 workgroup size, 1 op (0 sum 1 product 2 max 3 min), 2 mode, 3 ITEMS
// bindings: 1 x in, 2 y out, 3 block partials (T, rows * nb; mode 4: then
//           the groups' inclusive prefixes, rows * groups), 4 mode 4's
//           flags (uint, zeroed: the ticket, one per tile, one per group),
//           5 mode 4's error flag (a wait gave up)
// With -DLOOKBACK (scanlb_<dtype>) the file is the look-back scan (MODE 5)
// and the reduce-then-scan passes (MODE 6, 7) instead, described where they
// start below.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#ifdef LOOKBACK
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_shuffle_relative : require
#extension GL_KHR_shader_subgroup_vote : require
#endif
#include "dtype.glsl"
#ifdef IS_FLOAT
#include "nxmath.glsl"
#endif
#ifdef WIDE
// -DWIDE (scanw_<dtype>, cumulative_product of floats, modes 0..4): the
// values scanned are wideprod.glsl's (mantissa, exponent) pairs, so a
// partial product never under- or overflows; XLD / XSTV convert at the
// load and the store (T from here on is the pair).
#include "wideprod.glsl"
#if defined(DT_f32) || defined(DT_f64)
#define XLD(x) wp_from(x)
#else
#define XLD(x) wp_from(LD(x))
#endif
#define XSTV(x) STV(wp_to(x))
#undef T
#define T WT
#else
#define XLD(x) LD(x)
#define XSTV(x) STV(x)
#endif

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OP = 0u;
layout(constant_id = 2) const uint MODE = 0u;
layout(constant_id = 3) const uint ITEMS = 8u;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) readonly buffer In { ST x[]; };
layout(std430, binding = 2) writeonly buffer Out { ST y[]; };
// Mode 4 reads other workgroups' totals and flags.  coherent: past the
// incoherent caches; volatile: a flag is read again on every turn of a
// wait, and no compiler moves a total's load above its flag's or a flag's
// store above its total's (volatile accesses keep their order; lavapipe
// hoisted the plain load of a total above the wait), with
// memoryBarrierBuffer between them for the hardware.
layout(std430, binding = 3) volatile coherent buffer Part { T part[]; };
layout(std430, binding = 4) volatile coherent buffer Flags { uint flags[]; };
// the same words for the ticket's atomic (not volatile)
layout(std430, binding = 4) coherent buffer Ticket { uint ticket[]; };

shared T tot[gl_WorkGroupSize.x];

#ifdef WIDE
T identity() { return wp_one(); }
T combine(T a, T b) { return wp_mul(a, b); }
#else
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
#endif

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

#ifndef LOOKBACK
// mode 4's tile, padded by one word in 32 (the invocations' contiguous
// runs of ITEMS then fall in distinct banks)
shared T sdata[gl_WorkGroupSize.x * ITEMS + (gl_WorkGroupSize.x * ITEMS) / 32u];
shared T red[gl_WorkGroupSize.x];
#endif
shared uint s_tile;
shared T s_ex;

uint pad(uint i) { return i + (i >> 5); }

// the error flag of the one-pass forms (modes 4 and LOOKBACK; host-visible,
// zeroed): 1 when a wait gave up, which scan.c's check turns into an error
layout(std430, binding = 5) coherent buffer Err { uint err[]; };

// Until flags[f] is set (volatile: read again on every turn).  Bounded, at
// 2^24 reads (seconds), so that a device that did not run an earlier
// workgroup fails the op (the error flag) instead of hanging; the result
// is then never used.  lavapipe (gallivm) gives an invocation 65 535 loop
// turns for all its loops together, so a long wait there ends early and
// fails the op: CPU devices take the blocks path (tuning.c); one thread
// (LP_NUM_THREADS=1) runs the tiles in ticket order, never waiting, which
// is how the tests check this mode's arithmetic there.
void wait_flag(uint f) {
  bool ready = flags[f] != 0u;
  for (uint o = 0u; !ready && o < 4096u; o++)
    for (uint q = 0u; !ready && q < 4096u; q++) ready = flags[f] != 0u;
  if (!ready) err[0] = 1u;
}

#ifndef LOOKBACK
void one_pass(uint m) {
  uint rows = meta[m], n = meta[m + 1u], nb = meta[m + 3u], ng = meta[m + 5u];
  bool rev = meta[m + 4u] != 0u;
  uint t = gl_LocalInvocationID.x;
  const uint WG = gl_WorkGroupSize.x;
  uint tsize = WG * ITEMS;
  uint total = rows * nb;
  for (;;) {
    if (t == 0u) s_tile = atomicAdd(ticket[0], 1u);
    barrier();
    uint tile = s_tile;
    if (tile >= total) break;   // the same for the whole workgroup
    uint r = tile / nb, b = tile - r * nb;
    uint rowbase = r * n, k0 = b * tsize;
    [[unroll]] for (uint j = 0u; j < ITEMS; j++) {
      uint i = j * WG + t, k = k0 + i;
      T v = identity();
      if (k < n) v = XLD(x[rowbase + (rev ? n - 1u - k : k)]);
      sdata[pad(i)] = v;
    }
    barrier();
    T acc = identity();
    [[unroll]] for (uint q = 0u; q < ITEMS; q++) {
      uint i = pad(t * ITEMS + q);
      acc = combine(acc, sdata[i]);
      sdata[i] = acc;
    }
    tot[t] = acc;
    wg_scan();
    T agg = tot[WG - 1u];
    if (t == 0u) {
      part[tile] = agg;
      memoryBarrierBuffer();
      flags[1u + tile] = 1u;
    }
    // the totals of the group's earlier tiles, folded in a fixed tree
    uint g = b / WG, p = b - g * WG;
    T a = identity();
    if (t < p) {
      uint j = tile - p + t;
      wait_flag(1u + j);
      memoryBarrierBuffer();
      a = part[j];
    }
    red[t] = a;
    // pairs of adjacent runs, in order: every partial is a run of tiles (a
    // product of a run stays finite where the sequential one does)
    for (uint h = 1u; h < WG; h <<= 1) {
      barrier();
      if ((t & (2u * h - 1u)) == 0u) red[t] = combine(red[t], red[t + h]);
    }
    barrier();
    if (t == 0u) {
      T ex = red[0];
      uint gi = total + r * ng + g;   // this group's prefix slot
      if (g > 0u) {
        wait_flag(1u + gi - 1u);
        memoryBarrierBuffer();
        ex = combine(part[gi - 1u], ex);
      }
      s_ex = ex;
      if ((p == WG - 1u || b == nb - 1u) && g + 1u < ng) {
        part[gi] = combine(ex, agg);
        memoryBarrierBuffer();
        flags[1u + gi] = 1u;
      }
    }
    barrier();
    T mine = t == 0u ? s_ex : combine(s_ex, tot[t - 1u]);
    barrier();
    tot[t] = mine;   // now each invocation's exclusive prefix
    barrier();
    [[unroll]] for (uint j = 0u; j < ITEMS; j++) {
      uint i = j * WG + t, k = k0 + i;
      if (k < n) y[rowbase + (rev ? n - 1u - k : k)] = XSTV(combine(tot[i / ITEMS], sdata[pad(i)]));
    }
    barrier();   // before the next tile's s_tile, sdata and tot
  }
}

#endif

#ifdef LOOKBACK
// LOOKBACK (the scanlb_<dtype> kernels; dtypes computed in 32 bits): rows of
// contiguous lines, in tiles of WG * ITEMS elements.  MODE 6 and 7 are the
// rts passes (described at rts() below); MODE 5, the look-back, scans them
// in one pass, each element read once and written once.
// A workgroup takes the next tile (WG * ITEMS elements of one row) from the
// ticket (flags[0]), so it only waits for tiles whose workgroups have
// started.  Invocation t holds ITEMS / 4 runs of 4 contiguous elements, run
// j at 4 (j WG + t) in the tile (loaded as one 4-vector where the row allows:
// a subgroup's load covers 4 x its width contiguous elements).  Each run is
// scanned in registers, the runs of one (j, subgroup) segment by a subgroup
// scan through shuffles (subgroupShuffleUp, then combine: nxmath's IEEE add,
// not the driver's subgroupInclusiveAdd, which may flush denormals), the
// NJ x subgroups segments by subgroup 0 in order.
// Tile b's exclusive prefix, deterministic whatever ran first: the totals of
// aligned power-of-two runs of tiles, S(l, k) over tiles [k 2^l, (k+1) 2^l),
// S(0, k) a tile's total and S(l+1, k) = S(l, 2k) (+) S(l, 2k+1).  A tile
// publishes S(0, b), then for each trailing one bit l of b reads S(l, b>>l - 1)
// and publishes S(l+1, b>>(l+1)) (every such tile runs earlier);
// its prefix is the fold, high bits first, of S(l, (b>>l) - 1) over the set
// bits l of b (popcount(b) reads, one lane each; the climb reads a subset).
// Every partial is a run of adjacent tiles (products of runs stay finite
// where the sequential product does).
// meta: [0] rows [1] n [3] nb (tiles per row) [4] reverse [5] levels
//       (bit length of nb) [6] 4-vector loads allowed (rows start at
//       multiples of 4 elements, as does a reversed row's end)
// bindings: 3 the S values (T), level by level: level l holds rows x
//           (nb >> l); 4 the ticket then one flag per S value (zeroed)
#if defined(DT_f32)
#define ST4 vec4
#elif defined(DT_i32)
#define ST4 ivec4
#elif defined(DT_u32)
#define ST4 uvec4
#elif defined(DT_f16) || defined(DT_bf16) || defined(DT_u16)
#define ST4 u16vec4
#elif defined(DT_i16)
#define ST4 i16vec4
#elif defined(DT_i8)
#define ST4 i8vec4
#elif defined(DT_u8) || defined(DT_bool)
#define ST4 u8vec4
#else
#error "the look-back scan takes dtypes computed in 32 bits"
#endif
layout(std430, binding = 1) readonly buffer In4 { ST4 x4[]; };
layout(std430, binding = 2) writeonly buffer Out4 { ST4 y4[]; };

const uint NJ = ITEMS / 4u;
// segments: NJ per subgroup, subgroups of at least 4 (scan.c checks)
shared T wseg[(gl_WorkGroupSize.x / 4u) * (ITEMS / 4u)];
shared uint s_rare[2];

// ADD (spec constant 4), f32 sums (f16 / bf16 too: they add in f32):
//   0 exact: every add is nxmath's nxf_add (the driver's add, an exponent
//     test and its rare exact path inlined at each add)
//   1 fast: the driver's add alone, noting in g_rare an add whose result
//     is below 2^-101 in magnitude from operands not both zero (a denormal
//     result, a flushed one, an exact cancellation, or a sum with a
//     denormal operand that could differ: with the other operand at or
//     above 2^-102 the exact sum rounds to it, as the flushed one is); a
//     tile that noted one anywhere is computed again with exact adds (the
//     same tree), so the results are nxf_add's bit for bit
//   2 native: the driver's add, never checked (diagnostic only: a flushing
//     driver makes denormal sums 0)
//   3 fuzz: as 1, with the driver's add made to flush denormal operands
//     and results as NVIDIA's f32 does (tests on lavapipe: the re-run must
//     give the exact results)
// Other ops and dtypes always combine exactly.
layout(constant_id = 4) const uint ADD = 0u;
#if defined(IS_FLOAT) && !defined(DT_f64)
const bool FAST = OP == 0u && ADD != 0u;
#else
const bool FAST = false;
#endif
bool g_rare = false;

#if defined(IS_FLOAT) && !defined(DT_f64)
float ftz_fuzz(float x) {
  uint u = floatBitsToUint(x);
  return (u & 0x7f800000u) == 0u ? uintBitsToFloat(u & 0x80000000u) : x;
}
#endif

T cmb(T a, T b, bool exact) {
#if defined(IS_FLOAT) && !defined(DT_f64)
  if (OP == 0u && ADD != 0u && !exact) {
    // (fuzz: the operands' bits stay as they are, as in the registers of a
    // driver that flushes them inside the add)
    float s = ADD == 3u ? ftz_fuzz(ftz_fuzz(a) + ftz_fuzz(b)) : a + b;
    if (ADD != 2u && (floatBitsToUint(s) & 0x7fffffffu) < 0x0d000000u &&   // |s| < 2^-101
        ((floatBitsToUint(a) | floatBitsToUint(b)) & 0x7fffffffu) != 0u)
      g_rare = true;
    return s;
  }
#endif
  return combine(a, b);
}

// S(l, k) of row r: its slot in part[], its flag at 1 + slot
// (levels below l hold sum over q < l of nb >> q = (2 nb - popcount(nb)) -
// (2 (nb >> l) - popcount(nb >> l)) slots a row; no loop of a lane's own
// length: lavapipe lost track of lanes that left a loop one by one)
uint sslot(uint l, uint r, uint k, uint rows, uint nb) {
  uint hi = nb >> l;
  uint off = 2u * nb - uint(bitCount(nb)) - (2u * hi - uint(bitCount(hi)));
  return rows * off + r * hi + k;
}

// part[s] = v, then its flag, by invocation 0.  The memory barrier runs on
// its whole subgroup: lavapipe lost track of a subgroup's lanes after one
// that ran on a single lane.
void publish(uint s, T v) {
  if (gl_SubgroupID == 0u) {
    if (gl_SubgroupInvocationID == 0u) part[s] = v;
    memoryBarrierBuffer();
    if (gl_SubgroupInvocationID == 0u) flags[1u + s] = 1u;
  }
}

// inclusive scan over the subgroup's lanes, in a fixed tree
T sg_scan(T v, bool exact) {
  uint lane = gl_SubgroupInvocationID;
  for (uint d = 1u; d < gl_SubgroupSize; d <<= 1) {
    T o = subgroupShuffleUp(v, d);
    if (lane >= d) v = cmb(o, v, exact);
  }
  return v;
}

// The tile's elements of this invocation: ITEMS / 4 runs of 4, run j at
// 4 (j WG + t) in the tile (tile elements k0.. of the row at rowbase; one
// 4-vector each where the whole tile is in the row and vec)
void tile_load(uint rowbase, uint n, uint k0, bool full, bool rev, out T v[ITEMS]) {
  const uint WG = gl_WorkGroupSize.x;
  uint t = gl_LocalInvocationID.x;
  if (full) {
    [[unroll]] for (uint j = 0u; j < NJ; j++) {
      uint k = k0 + 4u * (j * WG + t);
      ST4 q = x4[(rowbase + (rev ? n - 4u - k : k)) >> 2];
      if (rev) q = q.wzyx;
      v[4u * j] = LD(q.x);
      v[4u * j + 1u] = LD(q.y);
      v[4u * j + 2u] = LD(q.z);
      v[4u * j + 3u] = LD(q.w);
    }
  } else {
    [[unroll]] for (uint i = 0u; i < ITEMS; i++) {
      uint k = k0 + 4u * ((i >> 2) * WG + t) + (i & 3u);
      v[i] = k < n ? LD(x[rowbase + (rev ? n - 1u - k : k)]) : identity();
    }
  }
}

void tile_store(uint rowbase, uint n, uint k0, bool full, bool rev, T v[ITEMS]) {
  const uint WG = gl_WorkGroupSize.x;
  uint t = gl_LocalInvocationID.x;
  if (full) {
    [[unroll]] for (uint j = 0u; j < NJ; j++) {
      uint k = k0 + 4u * (j * WG + t);
      ST4 q = ST4(STV(v[4u * j]), STV(v[4u * j + 1u]), STV(v[4u * j + 2u]), STV(v[4u * j + 3u]));
      if (rev) q = q.wzyx;
      y4[(rowbase + (rev ? n - 4u - k : k)) >> 2] = q;
    }
  } else {
    [[unroll]] for (uint i = 0u; i < ITEMS; i++) {
      uint k = k0 + 4u * ((i >> 2) * WG + t) + (i & 3u);
      if (k < n) y[rowbase + (rev ? n - 1u - k : k)] = STV(v[i]);
    }
  }
}

// The scan inside the tile: each run in registers (v becomes the runs'
// inclusive scans), the runs of each (j, subgroup) segment across lanes
// (lex[j]: the lane's exclusive prefix in its segment), the segments in
// order (pre[j]: the exclusive prefix of this invocation's segment j in
// the tile).  Returns the tile's total.  One workgroup barrier (wseg).
T tile_scan(inout T v[ITEMS], out T pre[NJ], out T lex[NJ], bool exact) {
  uint lane = gl_SubgroupInvocationID, sg = gl_SubgroupID;
  uint SG = gl_SubgroupSize, NW = gl_NumSubgroups;
  T inc[NJ];
  [[unroll]] for (uint j = 0u; j < NJ; j++) {
    v[4u * j + 1u] = cmb(v[4u * j], v[4u * j + 1u], exact);
    v[4u * j + 2u] = cmb(v[4u * j + 1u], v[4u * j + 2u], exact);
    v[4u * j + 3u] = cmb(v[4u * j + 2u], v[4u * j + 3u], exact);
    inc[j] = v[4u * j + 3u];
  }
  for (uint d = 1u; d < SG; d <<= 1) {
    [[unroll]] for (uint j = 0u; j < NJ; j++) {
      T o = subgroupShuffleUp(inc[j], d);
      if (lane >= d) inc[j] = cmb(o, inc[j], exact);
    }
  }
  [[unroll]] for (uint j = 0u; j < NJ; j++) {
    lex[j] = subgroupShuffleUp(inc[j], 1u);
    if (lane == SG - 1u) wseg[j * NW + sg] = inc[j];
  }
  barrier();
  // Every subgroup alike (no branch on the subgroup: lavapipe mixed up
  // subgroup operations and barriers inside one): the segments' exclusive
  // prefixes in the tile, in batches of SG, keeping its own segments'
  uint C = NJ * NW;
  T carry = identity();
  for (uint base = 0u; base < C; base += SG) {
    uint i = base + lane;
    T s = sg_scan(i < C ? wseg[i] : identity(), exact);
    T e = cmb(carry, subgroupShuffleUp(s, 1u), exact);
    if (lane == 0u) e = carry;
    [[unroll]] for (uint j = 0u; j < NJ; j++) {
      uint mine = j * NW + sg;   // the same for the whole subgroup
      T ej = subgroupShuffle(e, (mine - base) & (SG - 1u));
      if (mine >= base && mine < base + SG) pre[j] = ej;
    }
    carry = cmb(carry, subgroupShuffle(s, SG - 1u), exact);
  }
  return carry;
}

// v (the runs' scans) from the tile's exclusive prefix ex
void tile_apply(inout T v[ITEMS], T ex, T pre[NJ], T lex[NJ], bool exact) {
  uint lane = gl_SubgroupInvocationID;
  [[unroll]] for (uint j = 0u; j < NJ; j++) {
    T p = cmb(ex, pre[j], exact);
    if (lane != 0u) p = cmb(p, lex[j], exact);
    [[unroll]] for (uint c = 0u; c < 4u; c++) v[4u * j + c] = cmb(p, v[4u * j + c], exact);
  }
}

// The tile's total (the reduce pass): each run ((a b)(c d)), the runs of
// each segment in a tree of adjacent lanes, the segments in order: every
// partial a run of adjacent elements.  One workgroup barrier (wseg).
T tile_reduce(T v[ITEMS], bool exact) {
  uint lane = gl_SubgroupInvocationID, sg = gl_SubgroupID;
  uint SG = gl_SubgroupSize, NW = gl_NumSubgroups;
  T s[NJ];
  [[unroll]] for (uint j = 0u; j < NJ; j++)
    s[j] = cmb(cmb(v[4u * j], v[4u * j + 1u], exact), cmb(v[4u * j + 2u], v[4u * j + 3u], exact), exact);
  for (uint d = 1u; d < SG; d <<= 1) {
    [[unroll]] for (uint j = 0u; j < NJ; j++) {
      T o = subgroupShuffleDown(s[j], d);
      if ((lane & (2u * d - 1u)) == 0u) s[j] = cmb(s[j], o, exact);
    }
  }
  [[unroll]] for (uint j = 0u; j < NJ; j++)
    if (lane == 0u) wseg[j * NW + sg] = s[j];
  barrier();
  uint C = NJ * NW;
  T carry = identity();
  for (uint base = 0u; base < C; base += SG) {
    uint i = base + lane;
    T a = i < C ? wseg[i] : identity();
    for (uint d = 1u; d < SG; d <<= 1) {
      T o = subgroupShuffleDown(a, d);
      if ((lane & (2u * d - 1u)) == 0u) a = cmb(a, o, exact);
    }
    carry = cmb(carry, subgroupShuffle(a, 0u), exact);
  }
  return carry;
}

// Whether any invocation of the workgroup noted a rare add (g_rare); the
// same answer for all.  s_rare[k] was zeroed before the tile's first
// barrier; each k is asked once a tile.
bool wg_rare(uint k) {
  if (g_rare) s_rare[k] = 1u;
  barrier();
  return s_rare[k] != 0u;
}

// RTS (MODE 6, 7): reduce then scan, three passes and no waits between
// workgroups (scan.c): 6 writes each tile's total to part[r * nb + b]; the
// totals are scanned (inclusive) by the same passes, recursively; 7 scans
// each tile from the total of the tiles before it, part[r * nb + b - 1].
// One tile per workgroup, tile = the workgroup's index in the grid.
void rts(uint m) {
  uint rows = meta[m], n = meta[m + 1u], nb = meta[m + 3u];
  bool rev = meta[m + 4u] != 0u, vec = meta[m + 6u] != 0u;
  uint t = gl_LocalInvocationID.x;
  uint tsize = gl_WorkGroupSize.x * ITEMS;
  uint tile = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (tile >= rows * nb) return;   // the same for the whole workgroup
  uint r = tile / nb, b = tile - r * nb;
  uint rowbase = r * n, k0 = b * tsize;
  bool full = vec && k0 + tsize <= n;
  bool fast = FAST && ADD != 2u;   // native: never re-run
  if (t == 0u) s_rare[0] = 0u;
  T v[ITEMS];
  tile_load(rowbase, n, k0, full, rev, v);
  if (MODE == 6u) {
    T tot = tile_reduce(v, !FAST);
    if (fast && wg_rare(0u)) tot = tile_reduce(v, true);
    if (t == 0u) part[tile] = tot;
    return;
  }
  T ex = identity();
  if (b > 0u) ex = part[tile - 1u];
  T pre[NJ], lex[NJ];
  tile_scan(v, pre, lex, !FAST);
  tile_apply(v, ex, pre, lex, !FAST);
  if (fast && wg_rare(0u)) {
    tile_load(rowbase, n, k0, full, rev, v);
    tile_scan(v, pre, lex, true);
    tile_apply(v, ex, pre, lex, true);
  }
  tile_store(rowbase, n, k0, full, rev, v);
}

void lookback(uint m) {
  uint rows = meta[m], n = meta[m + 1u], nb = meta[m + 3u], nlev = meta[m + 5u];
  bool rev = meta[m + 4u] != 0u, vec = meta[m + 6u] != 0u;
  uint t = gl_LocalInvocationID.x, lane = gl_SubgroupInvocationID;
  uint SG = gl_SubgroupSize;
  uint tsize = gl_WorkGroupSize.x * ITEMS;
  uint total = rows * nb;
  {
    // one tile per workgroup (lavapipe caps the loop turns of one
    // invocation: a workgroup that took every tile in turn hit it)
    if (t == 0u) {
      s_tile = atomicAdd(ticket[0], 1u);
      s_rare[0] = 0u;
      s_rare[1] = 0u;
    }
    barrier();
    uint tile = s_tile;
    if (tile >= total) return;   // the same for the whole workgroup
    uint r = tile / nb, b = tile - r * nb;
    uint rowbase = r * n, k0 = b * tsize;
    bool full = vec && k0 + tsize <= n;
    // fast adds (ADD 1, 3): the tile's total is checked before it is
    // published, the applied prefix after (each a re-run with exact adds
    // where an add was rare)
    bool fast = FAST && ADD != 2u, exact = !FAST;
    T v[ITEMS];
    tile_load(rowbase, n, k0, full, rev, v);
    T pre[NJ], lex[NJ];
    T carry = tile_scan(v, pre, lex, exact);
    if (fast && wg_rare(0u)) {
      exact = true;
      tile_load(rowbase, n, k0, full, rev, v);
      carry = tile_scan(v, pre, lex, true);
    }
    // One value published per tile: S(z, b >> z) for z the trailing one bits
    // of b (only S(l, k) of even k are ever read), the tile's total folded
    // with the z values below it: S(0, b) at once where b is even, else
    // after the reads.  The tile's prefix: S(l, (b>>l) - 1) for the set bits
    // l of b, higher bits to the left.  Each subgroup reads them (a lane
    // each) and folds them alike.
    uint z = findLSB(~b);
    if (z == 0u) publish(r * nb + b, carry);
    T c = carry, ex = identity();
    // Two rounds: the levels below z (the climb, published at once: a tile
    // that also waited for its higher levels first chained every odd
    // tile's value to the one before, 2-6 us a tile on the H100), then
    // the levels above z (the rest of the prefix)
    for (uint ph = 0u; ph < 2u; ph++) {
      uint lo = ph == 0u ? 0u : z + 1u, hi = ph == 0u ? z : nlev;
      for (uint l0 = lo; l0 < hi; l0 += SG) {
        uint l = l0 + lane;
        bool need = l < hi && ((b >> l) & 1u) != 0u;
        uint s = need ? sslot(l, r, (b >> l) - 1u, rows, nb) : 0u;
        // waits that every lane turns through together (subgroupAll):
        // lavapipe lost track of its lanes after a loop they left one by one
        bool ready = !need || flags[1u + s] != 0u;
        for (uint o = 0u; !subgroupAll(ready) && o < 4096u; o++)
          for (uint w = 0u; !subgroupAll(ready) && w < 4096u; w++)
            if (!ready) ready = flags[1u + s] != 0u;
        // still waiting after 2^24 turns (seconds; lavapipe cuts any wait
        // past 65 535 turns short): the device did not run the earlier
        // workgroup alongside, and the result would be wrong, so the host
        // fails the op instead
        if (!ready) err[0] = 1u;
        memoryBarrierBuffer();
        T a = identity();
        if (need) a = part[s];
        for (uint q = 0u; q < SG && l0 + q < hi; q++) {
          uint lq = l0 + q;
          T aq = subgroupShuffle(a, q);
          if (((b >> lq) & 1u) != 0u) ex = combine(aq, ex);
          if (ph == 0u) c = combine(aq, c);
        }
      }
      if (ph == 0u && z > 0u) publish(sslot(z, r, b >> z, rows, nb), c);
    }
    tile_apply(v, ex, pre, lex, exact);
    if (fast && !exact && wg_rare(1u)) {
      tile_load(rowbase, n, k0, full, rev, v);
      tile_scan(v, pre, lex, true);
      tile_apply(v, ex, pre, lex, true);
    }
    tile_store(rowbase, n, k0, full, rev, v);
  }
}

void main() {
  if (MODE == 5u) lookback(pc.meta_off);
  else rts(pc.meta_off);
}
#else
void main() {
  uint m = pc.meta_off;
  if (MODE == 4u) {
    one_pass(m);
    return;
  }
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
        acc = k == 0u ? XLD(x[at]) : combine(acc, XLD(x[at]));
        y[at] = XSTV(acc);
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
      if (k < n) v = XLD(x[rowbase + (rev ? n - 1u - k : k)]);
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
        if (k < n) y[rowbase + (rev ? n - 1u - k : k)] = XSTV(first ? vals[q] : combine(pre, vals[q]));
      }
    }
    barrier();
  }
}
#endif
