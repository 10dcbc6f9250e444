#version 450
// dot_mvc.comp - the columns form of the skinny products without barriers in
// its loop: C = A x B per batch where M <= 16 (A small, M x K; B large, K x N,
// row-major), for f32, f16 and bf16 (products summed in f32, each sum rounded
// once to the result's dtype; -DOUT_F32: f16 / bf16 inputs with f32 results).
// Compiled at run time per layout (src/ops/rtkernel.c; src/ops/dot_mvc.c
// names it dot_mvc[32]_n<NB>w<W>u<U>p<P>[a]_<dt> and picks it; bench/NOTES.md,
// "dot_mvc").
//
// A workgroup owns SG x CL consecutive columns of B (lane l: CL of them, one
// W-word load a row: 4, 8 or 16 bytes, a subgroup's loads contiguous); its
// subgroups split the workgroup's k chunk into slabs of SG rows, taken in
// turn (subgroup g: slabs g, g + NSG, ...).  A's columns of a slab (NB values
// each, the same for every lane) go through the subgroup's own part of
// shared memory: lane l loads column k0 + l (NB values, as f32) for the next
// slab while this one is summed and stores it as vec4s before the slab, two
// buffers, one subgroup barrier a slab: no workgroup barrier in the loop.
// Each round a lane issues U rows' loads of B before it sums them (P = 1:
// the next round's loads are issued before this round is summed); sums
// CL x NB f32 in registers; the subgroups' sums meet in shared memory at
// the end, one column of the CL a round.
// Grid: (ceil(N / (SG CL)), S, batch); split K (S > 1): chunk y covers
// [y KC, (y + 1) KC) and its f32 partials go to [batch][S][M][N], summed in
// chunk order by dot_mv_sum / dot_ksum_f32 (dot_mv.comp's second pass) or,
// with FOLD, by the column block's last workgroup (mvfold.glsl, C at binding 4).
// meta: [0] M [1] N [2] K [3] batch [4] KC
// Specialization: 0 workgroup size, 1 SG (the device's subgroup size), 2
// partials, 3 FOLD.  Compile-time: CT_NB (M), CT_W (words a load: 1, 2, 4), CT_U,
// CT_P, CT_AL (1: N a multiple of CL, so every lane's load is one aligned
// vector).
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_control_flow_attributes : require
#include "dtype.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint SG = 32u;
layout(constant_id = 2) const uint PART = 0u;
layout(constant_id = 3) const uint FOLD = 0u; // with PART: split K summed by the last workgroup (mvfold.glsl)
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };

const uint NB = CT_NB;
const uint U = CT_U;
#if CT_W == 4
#define WT uvec4
#elif CT_W == 2
#define WT uvec2
#else
#define WT uint
#endif
#if defined(DT_f32)
#define CL (CT_W * 1u)
#elif defined(DT_f16) || defined(DT_bf16)
#define CL (CT_W * 2u)
#else
#error "dot_mvc takes f32, f16, bf16"
#endif
#define NQ ((NB + 3u) / 4u)
#define NWG (gl_WorkGroupSize.x)
#define NSG (NWG / SG)

layout(std430, binding = 1) readonly buffer A { ST a[]; };
layout(std430, binding = 2) readonly buffer B { ST b[]; };
layout(std430, binding = 2) readonly buffer BW { WT bw[]; };
#ifdef OUT_F32
layout(std430, binding = 3) writeonly buffer C { float c[]; };
#define CST(x) (x)
#else
layout(std430, binding = 3) writeonly buffer C { ST c[]; };
#define CST(x) STV(x)
#endif
// the split form's partials (the same binding, f32); coherent: under FOLD
// another workgroup's partials are read back from here
layout(std430, binding = 3) coherent buffer Cp { float cp[]; };
layout(std430, binding = 3) coherent buffer Cp4 { vec4 cp4[]; };
layout(std430, binding = 5) coherent buffer Count { uint count[]; };  // zero; left zero (mvfold.glsl)
#ifdef OUT_F32
layout(std430, binding = 4) writeonly buffer Cf { float cf[]; };
#else
layout(std430, binding = 4) writeonly buffer Cf { ST cf[]; };
#endif
#include "mvfold.glsl"

// A's slabs: [subgroup][2 buffers][SG columns k][NQ vec4 over i]; at the end
// the subgroups' sums of one column: [subgroup][NQ][SG]
#define SH_A (NSG * 2u * SG * NQ)
#define SH_R (NSG * NQ * SG)
shared vec4 sh[SH_A > SH_R ? SH_A : SH_R];

// the load's words as a uvec4 (unused words 0)
uvec4 widen(WT w) {
#if CT_W == 4
  return w;
#elif CT_W == 2
  return uvec4(w, 0u, 0u);
#else
  return uvec4(w, 0u, 0u, 0u);
#endif
}

// the CL values of one load, as f32
void unpack(WT wt, out float f[CL]) {
  uvec4 w = widen(wt);
#if defined(DT_f32)
  [[unroll]] for (uint i = 0u; i < CL; i++) f[i] = uintBitsToFloat(w[i]);
#elif defined(DT_bf16)
  [[unroll]] for (uint i = 0u; i < CL / 2u; i++) {
    f[2u * i] = uintBitsToFloat(w[i] << 16);
    f[2u * i + 1u] = uintBitsToFloat(w[i] & 0xffff0000u);
  }
#else
  [[unroll]] for (uint i = 0u; i < CL / 2u; i++) {
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

// row k of B at the lane's columns col .. col + CL - 1 (zeros past N; the
// caller keeps k inside the chunk)
WT load_b(uint bbase, uint k, uint col, uint N) {
#if CT_AL == 1
  return col < N ? bw[(bbase + k * N + col) / CL] : WT(0);
#else
  uvec4 w = uvec4(0);
  uint o = bbase + k * N + col;
#if defined(DT_f32)
  [[unroll]] for (uint v = 0u; v < CL; v++) if (col + v < N) w[v] = floatBitsToUint(b[o + v]);
#else
  [[unroll]] for (uint v = 0u; v < CL; v += 2u) {
    uint lo = col + v < N ? uint(b[o + v]) : 0u, hi = col + v + 1u < N ? uint(b[o + v + 1u]) : 0u;
    w[v / 2u] = lo | (hi << 16);
  }
#endif
#if CT_W == 4
  return w;
#elif CT_W == 2
  return w.xy;
#else
  return w.x;
#endif
#endif
}

// A's column k (NB values as f32; zeros at or past ke)
void load_a(uint abase, uint K, uint k, uint ke, out float x[NB]) {
  [[unroll]] for (uint i = 0u; i < NB; i++) x[i] = k < ke ? LD(a[abase + i * K + k]) : 0.0;
}

void main() {
  uint m = pc.meta_off;
  uint N = meta[m + 1u], K = meta[m + 2u], KC = meta[m + 4u];
  uint bi = gl_WorkGroupID.z, t = gl_LocalInvocationID.x;
  uint lane = gl_SubgroupInvocationID, sg = gl_SubgroupID;
  uint kb = gl_WorkGroupID.y * KC, ke = min(K, kb + KC);
  uint S = gl_NumWorkGroups.y;
  uint col = (gl_WorkGroupID.x * SG + lane) * CL;
  uint abase = bi * NB * K, bbase = bi * K * N;
  float acc[CL * NB];
  [[unroll]] for (uint i = 0u; i < CL * NB; i++) acc[i] = 0.0;
  float ap[NB];
  uint step = NSG * SG;
  uint k0 = kb + sg * SG;
  load_a(abase, K, k0 + lane, ke, ap);
  uint sbase = sg * 2u * SG * NQ;
  for (uint buf = 0u; k0 < ke; k0 += step, buf ^= 1u) {
    // this slab's A, column k0 + lane, as NQ vec4
    uint sa = sbase + buf * SG * NQ;
    [[unroll]] for (uint q = 0u; q < NQ; q++) {
      vec4 v4 = vec4(0);
      [[unroll]] for (uint j = 0u; j < 4u; j++)
        if (q * 4u + j < NB) v4[j] = ap[q * 4u + j];
      sh[sa + lane * NQ + q] = v4;
    }
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    load_a(abase, K, k0 + step + lane, ke, ap);
    uint rows = min(SG, ke - k0);
#if CT_P == 1
    WT nxt[U];
    [[unroll]] for (uint u = 0u; u < U; u++) nxt[u] = u < rows ? load_b(bbase, k0 + u, col, N) : WT(0);
#endif
    for (uint r = 0u; r < rows; r += U) {
      WT rb[U];
#if CT_P == 1
      rb = nxt;
      [[unroll]] for (uint u = 0u; u < U; u++) {
        uint kk = r + U + u;
        nxt[u] = kk < rows ? load_b(bbase, k0 + kk, col, N) : WT(0);
      }
#else
      [[unroll]] for (uint u = 0u; u < U; u++) rb[u] = r + u < rows ? load_b(bbase, k0 + r + u, col, N) : WT(0);
#endif
      [[unroll]] for (uint u = 0u; u < U; u++) {
        float fb[CL];
        unpack(rb[u], fb);
        float av[NQ * 4u];
        [[unroll]] for (uint q = 0u; q < NQ; q++) {
          vec4 v4 = sh[sa + (r + u) * NQ + q];
          av[4u * q] = v4.x, av[4u * q + 1u] = v4.y, av[4u * q + 2u] = v4.z, av[4u * q + 3u] = v4.w;
        }
        [[unroll]] for (uint cc = 0u; cc < CL; cc++)
          [[unroll]] for (uint i = 0u; i < NB; i++) acc[cc * NB + i] = fma(av[i], fb[cc], acc[cc * NB + i]);
      }
    }
  }
  // the subgroups' sums, one column of the CL a round, in subgroup order
  [[unroll]] for (uint cc = 0u; cc < CL; cc++) {
    barrier();
    [[unroll]] for (uint q = 0u; q < NQ; q++) {
      vec4 v4 = vec4(0);
      [[unroll]] for (uint j = 0u; j < 4u; j++)
        if (q * 4u + j < NB) v4[j] = acc[cc * NB + q * 4u + j];
      sh[(sg * NQ + q) * SG + lane] = v4;
    }
    barrier();
    for (uint e = t; e < NB * SG; e += NWG) {
      uint i = e / SG, l = e - i * SG, q = i / 4u, j = i - q * 4u;
      float s = sh[q * SG + l][j];
      for (uint g = 1u; g < NSG; g++) s += sh[(g * NQ + q) * SG + l][j];
      uint cn = (gl_WorkGroupID.x * SG + l) * CL + cc;
      if (cn < N) {
        if (PART != 0u) cp[((bi * S + gl_WorkGroupID.y) * NB + i) * N + cn] = s;
        else c[(bi * NB + i) * N + cn] = CST(s);
      }
    }
  }
  uint c0 = gl_WorkGroupID.x * SG * CL;
  if (FOLD != 0u && PART != 0u) mv_fold(bi, S, NB, N, 0u, NB, c0, min(c0 + SG * CL, N), t, NWG);
}
