#version 450
// dot_mvr.comp - skinny products C = A x B with N <= 16 columns (A M x K
// row-major and large, B K x N small) for f32, f16 and bf16, lanes over
// ROWS: f32 sums of exact products, each result rounded once at the store
// (or kept: -DOUT_F32, the f32 results of 16-bit inputs).  Compiled at run
// time (src/ops/rtkernel.c: dot_mvr_n<NB>l<L>r<R>u<U>k<KS>w<WG>p<PF>[_o32]_<dt>);
// src/ops/dot_mvr.c picks the layout (bench/NOTES.md, "dot_mvr").
//
// dot_mv.comp's rows form puts a subgroup's lanes over k, so each lane reads
// its own rows of B (16 sums a row a lane, 4 shared reads of B a k for R
// rows).  Here L consecutive lanes share a row (L x 16 contiguous bytes of
// A a load, lane j the j-th 16 bytes) and a subgroup covers SG / L row slots
// of R rows each: the L lanes of a row read L different k, and every other
// group of L lanes the same ones, so a shared read of B's tile touches L
// distinct 16-byte slots (broadcast to SG / L lanes each) and feeds 4 R
// FMAs.  Per k a lane does NQ (= ceil(NB / 4)) shared reads, R conversions
// of A's elements and 4 NQ R FMAs: few registers (R x NQ vec4 sums), so
// many subgroups a unit to keep A's loads in flight.
//
// A workgroup of WG invocations: its subgroups form KS k groups (subgroup s:
// group s % KS, row group s / KS); a round takes KS x STEP k values (STEP =
// L U V), group g the g-th STEP of them, U vectors a lane.  B's rows of the
// round go through shared memory as f32 (converted once a workgroup, for
// its RW rows), slot ((u V + v) NQ + q) L + j for k = (u L + j) V + v.  A's
// vectors of the next round are loaded before this round's products (PF 1).
// The end: the L lanes of a row by xor shuffles, the KS groups through
// shared memory, in group order.  Split K (S = gy > 1): chunk y covers
// [y KC, (y + 1) KC), KC a multiple of KS x STEP, and its f32 partials go to
// [batch][S][M][N] for dot_mv.comp's SUM pass (or dot_ksum_f32).
// Grid: (ceil(M / RW), S, batch), RW = WG R / (L KS) rows a workgroup.
// meta: [0] M [1] N [2] K [3] batch [4] KC [5] flags (1: K % V == 0, A's
// rows whole 16-byte vectors).  Specialization: 4 SG (the device's subgroup
// size, L divides it), 5 partials (1: write f32 partials).
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_control_flow_attributes : require
#include "dtype.glsl"

const uint NB = CT_NB;
const uint L = CT_L;
const uint R = CT_R;
const uint U = CT_U;
const uint KS = CT_KS;
const uint WG = CT_WG;
layout(local_size_x = CT_WG) in;
layout(constant_id = 4) const uint SG = 32u;
layout(constant_id = 5) const uint PART = 0u;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };

#if defined(DT_f32)
#define V 4u
#define VT vec4
#elif defined(DT_f16) || defined(DT_bf16)
#define V 8u
#define VT uvec4
#else
#error "dot_mvr takes f32, f16, bf16"
#endif

layout(std430, binding = 1) readonly buffer A { ST a[]; };
layout(std430, binding = 1) readonly buffer A4 { VT a4[]; };
layout(std430, binding = 2) readonly buffer B { ST b[]; };
layout(std430, binding = 2) readonly buffer B4 { VT b4[]; };
#ifdef OUT_F32
layout(std430, binding = 3) writeonly buffer C { float c[]; };
#define CST(x) (x)
#else
layout(std430, binding = 3) writeonly buffer C { ST c[]; };
#define CST(x) STV(x)
#endif
layout(std430, binding = 3) writeonly buffer Cp { float cp[]; };

#define NQ ((NB + 3u) / 4u)
#define STEP (L * U * V)
#define KR (KS * STEP)
// B's vectors a round, and how many each invocation stages
#define BV (KR * NB / V)
#define NBV ((BV + WG - 1u) / WG)
#define NSG (WG / SG)
#define RL (SG / L)
#define RW ((NSG / KS) * RL * R)

shared vec4 bs[KS * STEP * NQ];
#if CT_KS > 1
shared vec4 red[KS * RW * NQ];
#endif

// the V values of one 16-byte vector, as f32
void unpack(VT w, out float f[V]) {
#if defined(DT_f32)
  f[0] = w.x, f[1] = w.y, f[2] = w.z, f[3] = w.w;
#elif defined(DT_bf16)
  [[unroll]] for (uint i = 0u; i < 4u; i++) {
    f[2u * i] = uintBitsToFloat(w[i] << 16);
    f[2u * i + 1u] = uintBitsToFloat(w[i] & 0xffff0000u);
  }
#else
  [[unroll]] for (uint i = 0u; i < 4u; i++) {
#if defined(NX_F16_HW)
    vec2 h = nx_f16x2_to_f32(w[i]);
    f[2u * i] = h.x, f[2u * i + 1u] = h.y;
#else
    f[2u * i] = nx_f16_to_f32(w[i] & 0xffffu);
    f[2u * i + 1u] = nx_f16_to_f32(w[i] >> 16);
#endif
  }
#endif
}

// 16 bytes of A at element o (V of them, those at or past `left` read as zeros)
VT load_a1(uint o, uint left, bool vec) {
  if (vec) return a4[o / V];
  VT w = VT(0);
#if defined(DT_f32)
  [[unroll]] for (uint v = 0u; v < V; v++) w[v] = v < left ? a[o + v] : 0.0;
#else
  [[unroll]] for (uint v = 0u; v < V; v += 2u) {
    uint lo = v < left ? uint(a[o + v]) : 0u, hi = v + 1u < left ? uint(a[o + v + 1u]) : 0u;
    w[v / 2u] = lo | (hi << 16);
  }
#endif
  return w;
}

// this lane's vectors of a round: rows rb + r RL, k = kg + (u L + j) V
void load_a(uint kg, uint rb, uint j, uint M, uint K, uint ke, uint abase, bool whole, out VT ra[R * U]) {
  [[unroll]] for (uint r = 0u; r < R; r++)
    [[unroll]] for (uint u = 0u; u < U; u++) {
      uint row = rb + r * RL, k = kg + (u * L + j) * V;
      VT w = VT(0);
      if (row < M && k < ke) w = load_a1(abase + row * K + k, ke - k, whole && k + V <= ke);
      ra[r * U + u] = w;
    }
}

// this invocation's vectors of B's round at k0: flat elements k0 NB + p V, p = t + i WG
void load_b(uint k0, uint t, uint ke, uint bbase, bool bvec, out VT rb[NBV]) {
  [[unroll]] for (uint i = 0u; i < NBV; i++) {
    uint p = t + i * WG, f = k0 * NB + p * V, end = ke * NB;
    VT w = VT(0);
    if (p < BV && f < end) {
      uint o = bbase + f;
      if (bvec && f + V <= end) {
        w = b4[o / V];
      } else {
#if defined(DT_f32)
        [[unroll]] for (uint v = 0u; v < V; v++) w[v] = f + v < end ? b[o + v] : 0.0;
#else
        [[unroll]] for (uint v = 0u; v < V; v += 2u) {
          uint lo = f + v < end ? uint(b[o + v]) : 0u, hi = f + v + 1u < end ? uint(b[o + v + 1u]) : 0u;
          w[v / 2u] = lo | (hi << 16);
        }
#endif
      }
    }
    rb[i] = w;
  }
}

// B's round into the shared tile as f32: element (kl, col) of group kl / STEP
void store_b(uint t, VT rb[NBV]) {
  [[unroll]] for (uint i = 0u; i < NBV; i++) {
    uint p = t + i * WG;
    if (p < BV) {
      float f[V];
      unpack(rb[i], f);
      if (NB % 4u == 0u) { // four consecutive values are one slot's vec4
        [[unroll]] for (uint x = 0u; x < V; x += 4u) {
          uint e = p * V + x, kk = e / NB, col = e - kk * NB, g = kk / STEP, kl = kk - g * STEP;
          uint u = kl / (L * V), j = (kl / V) % L, v = kl % V;
          bs[g * STEP * NQ + ((u * V + v) * NQ + col / 4u) * L + j] = vec4(f[x], f[x + 1u], f[x + 2u], f[x + 3u]);
        }
      } else {
        [[unroll]] for (uint x = 0u; x < V; x++) {
          uint e = p * V + x, kk = e / NB, col = e - kk * NB, g = kk / STEP, kl = kk - g * STEP;
          uint u = kl / (L * V), j = (kl / V) % L, v = kl % V;
          bs[g * STEP * NQ + ((u * V + v) * NQ + col / 4u) * L + j][col % 4u] = f[x];
        }
      }
    }
  }
}

void main() {
  uint m = pc.meta_off;
  uint M = meta[m], K = meta[m + 2u], KC = meta[m + 4u];
  bool whole = (meta[m + 5u] & 1u) != 0u;
  uint bi = gl_WorkGroupID.z, t = gl_LocalInvocationID.x;
  uint lane = t % SG, sgi = t / SG, g = sgi % KS, rs = sgi / KS, j = lane % L, i = lane / L;
  uint kb = gl_WorkGroupID.y * KC, ke = min(K, kb + KC);
  uint S = gl_NumWorkGroups.y;
  uint rl0 = rs * RL * R + i; // this lane's first row in the workgroup (then + r RL)
  uint rb = gl_WorkGroupID.x * RW + rl0;
  uint abase = bi * M * K, bbase = bi * K * NB;
  bool bvec = bbase % V == 0u;
  vec4 acc[R * NQ];
  [[unroll]] for (uint x = 0u; x < R * NQ; x++) acc[x] = vec4(0);
  VT ra[R * U];
  VT rbv[NBV];
#if CT_PF == 1
  load_a(kb + g * STEP, rb, j, M, K, ke, abase, whole, ra);
  load_b(kb, t, ke, bbase, bvec, rbv);
#endif
  for (uint k0 = kb; k0 < ke; k0 += KR) {
#if CT_PF == 1
    VT ca[R * U] = ra;
    VT cb[NBV] = rbv;
    if (k0 + KR < ke) { // the next round's loads, in flight during this one
      load_a(k0 + KR + g * STEP, rb, j, M, K, ke, abase, whole, ra);
      load_b(k0 + KR, t, ke, bbase, bvec, rbv);
    }
#else
    VT ca[R * U];
    VT cb[NBV];
    load_a(k0 + g * STEP, rb, j, M, K, ke, abase, whole, ca);
    load_b(k0, t, ke, bbase, bvec, cb);
#endif
    barrier(); // the previous round's tile is no longer read
    store_b(t, cb);
    barrier();
    [[unroll]] for (uint u = 0u; u < U; u++) {
      float f[R][V];
      [[unroll]] for (uint r = 0u; r < R; r++) unpack(ca[r * U + u], f[r]);
      [[unroll]] for (uint v = 0u; v < V; v++)
        [[unroll]] for (uint q = 0u; q < NQ; q++) {
          vec4 bv = bs[g * STEP * NQ + ((u * V + v) * NQ + q) * L + j];
          [[unroll]] for (uint r = 0u; r < R; r++) acc[r * NQ + q] = fma(vec4(f[r][v]), bv, acc[r * NQ + q]);
        }
    }
  }
  // the L lanes of a row (consecutive lanes: xor within the group)
  [[unroll]] for (uint x = 0u; x < R * NQ; x++)
    [[unroll]] for (uint o = 1u; o < L; o *= 2u) acc[x] += subgroupShuffleXor(acc[x], o);
#if CT_KS > 1
  if (j == 0u)
    [[unroll]] for (uint r = 0u; r < R; r++)
      [[unroll]] for (uint q = 0u; q < NQ; q++) red[(g * RW + rl0 + r * RL) * NQ + q] = acc[r * NQ + q];
  barrier();
  for (uint e = t; e < RW * NQ; e += WG) {
    uint rl = e / NQ, q = e - rl * NQ, row = gl_WorkGroupID.x * RW + rl;
    vec4 s = red[e];
    [[unroll]] for (uint h = 1u; h < KS; h++) s += red[h * RW * NQ + e];
    if (row < M)
      [[unroll]] for (uint x = 0u; x < 4u; x++) {
        uint col = q * 4u + x;
        if (col < NB) {
          if (PART != 0u) cp[((bi * S + gl_WorkGroupID.y) * M + row) * NB + col] = s[x];
          else c[(bi * M + row) * NB + col] = CST(s[x]);
        }
      }
  }
#else
  if (j == 0u)
    [[unroll]] for (uint r = 0u; r < R; r++) {
      uint row = rb + r * RL;
      if (row < M)
        [[unroll]] for (uint q = 0u; q < NQ; q++)
          [[unroll]] for (uint x = 0u; x < 4u; x++) {
            uint col = q * 4u + x;
            if (col < NB) {
              if (PART != 0u) cp[((bi * S + gl_WorkGroupID.y) * M + row) * NB + col] = acc[r * NQ + q][x];
              else c[(bi * M + row) * NB + col] = CST(acc[r * NQ + q][x]);
            }
          }
    }
#endif
}
