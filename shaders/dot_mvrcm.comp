#version 450
// dot_mvrcm.comp - f16 and bf16 skinny products C = A x B with N <= 16
// columns on tensor cores (GL_NV_cooperative_matrix): f16 x f16 (IN_BF16:
// bf16 x bf16) products, f32 sums, each result rounded once to f16 (bf16)
// on its bits (or kept: OUT_F32).  Compiled at run time (src/ops/rtkernel.c:
// dot_mvrcm[32]_n<NB>f<FM>x<FN>x<FK>u<U>k<KS>w<WG>a<LD>[e|k]_{f16,bf16}, e
// the emulation, k f16 as KHR); src/ops/dot_mvr.c takes it for f16 and bf16
// (n >= 2) where the device has cooperative matrices, or NXVK_DOT_MVR_CM asks
// (bench/NOTES.md, "dot_mvr").
// IN_BF16: A and B hold bf16; the kernel is written against
// GL_NV_cooperative_matrix and rewritten after glslang into
// VK_KHR_cooperative_matrix SPIR-V with bf16 A and B fragments
// (src/vk/spirv_khr.c, where the GLSL defines NXVK_SPIRV_KHR_BF16), as
// dot_coopmat.comp's IN_BF16: A and B fragments are only loaded (or copied)
// and multiplied, and B's type has its own row count FKB, a specialization
// constant (9) that only marks it.  NXVK_SPIRV_KHR: f16 made a KHR kernel
// the same way (the NV extension's multiply-adds are slower on an H100).
//
// Subgroups of 32.  A subgroup owns FM rows of A (one row tile) and one of
// the workgroup's KS k groups; a round takes KS x U x FK k values, group g
// the U fragments at k0 + (g U + u) FK.  A's FM x FK fragments are loaded
// straight from memory (rows K / 8 uvec4 apart: the host requires K % FK ==
// 0), the next round's before this round's products; B's rows of the round
// go through shared memory as 16-bit bits, NF = ceil(NB / FN) fragments of FN
// columns wide (zeros past N and past the chunk's end; for N a multiple of 8
// the padding holds the row's values again, which reach only C's padding
// columns), once a workgroup.
// Rows: the last row tile starts at M - FM (the host requires M >= FM) and
// stores only its own rows, so no load reads past A.  The end: each
// subgroup's NF accumulators to shared memory (f32), the KS groups summed
// in order, C (or the f32 partials of split K, S = gy > 1, for
// dot_mv.comp's SUM pass) written with bounds checks.
// LD 2 (CT_LD): A's U fragments of a round go through the subgroup's own part
// of shared memory instead (16-byte loads, 8 lanes a 128-byte row piece,
// rows padded by 16 bytes), loaded a round ahead into registers and stored
// beside B's tile between the same two barriers: the columns form's
// fragments straight from memory ran at 41% of copy, staged at 66-71%.
// Grid: (ceil(M / (RT FM)), S, batch), RT = WG / 32 / KS row tiles.
// meta: [0] M [1] N [2] K [3] batch [4] KC [5] flags (unused).
// Specialization: 5 partials (1: write f32 partials), 6 FOLD (with 5: the
// workgroup that writes a row block's last chunk sums the S chunks' partials
// of those rows in chunk order, as dot_mv.comp's SUM pass would, and writes C
// to binding 4: one dispatch instead of two; the count of chunks done per
// row block lives in binding 3's buffer after the partials, zeroed).
// CM_EMU: the same data flow with plain loads and FMAs for the fragments
// (each 32 invocations play a subgroup), so lavapipe checks the staging,
// the row clamp, the groups' sums and the stores.
#ifndef CM_EMU
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#endif
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_GOOGLE_include_directive : require
#ifdef IN_BF16
#define DT_bf16 1
#else
#define DT_f16 1
#endif
#include "dtype.glsl"

const uint NB = CT_NB;
const uint FM = CT_FM;
const uint FN = CT_FN;
const uint FK = CT_FK;
const uint U = CT_U;
const uint KS = CT_KS;
const uint WG = CT_WG;
const uint LDA = CT_LD;
layout(local_size_x = CT_WG) in;
layout(constant_id = 5) const uint PART = 0u;
layout(constant_id = 6) const uint FOLD = 0u;
#if !defined(CM_EMU) && (defined(IN_BF16) || defined(NXVK_SPIRV_KHR))
layout(constant_id = 9) const uint FKB = FK; // B's rows: only marks B's type (see above)
#define FRAG_B fcoopmatNV<16, gl_ScopeSubgroup, FKB, FN>
#else
#define FRAG_B fcoopmatNV<16, gl_ScopeSubgroup, FK, FN>
#endif
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) readonly buffer A4 { uvec4 a4[]; };
layout(std430, binding = 1) readonly buffer A { uint16_t a[]; };
layout(std430, binding = 2) readonly buffer B { uint16_t b[]; };
layout(std430, binding = 2) readonly buffer B4 { uvec4 b4[]; };
#ifdef OUT_F32
layout(std430, binding = 3) writeonly buffer C { float c[]; };
#define CST(x) (x)
#else
layout(std430, binding = 3) writeonly buffer C { uint16_t c[]; };
#define CST(x) STV(x)
#endif
// coherent: under FOLD another workgroup's partials are read back from here
layout(std430, binding = 3) coherent buffer Cp { float cp[]; };
layout(std430, binding = 3) coherent buffer Cp4 { vec4 cp4[]; };
layout(std430, binding = 5) coherent buffer Count { uint count[]; };  // zero; left zero (mvfold.glsl)
#ifdef OUT_F32
layout(std430, binding = 4) writeonly buffer Cf { float cf[]; };
#else
layout(std430, binding = 4) writeonly buffer Cf { uint16_t cf[]; };
#endif
#include "mvfold.glsl"

#define NF ((NB + FN - 1u) / FN)
#define NP (NF * FN)            // B's columns, padded
#define BRV (NP / 8u)           // uvec4 a row of B's tile
#define KR (KS * U * FK)        // k values a round
#define BE (KR * BRV)           // uvec4 of B's tile
#define NBE ((BE + WG - 1u) / WG)
#define NSG (WG / 32u)
#define RT (NSG / KS)           // row tiles a workgroup
#define TV (FM * NP / 4u)       // vec4 of one subgroup's sums
#define FE (FM * FN / 32u)      // an FM x FN tile's elements a lane (the emulation's)
#define AV (U * FK / 8u + 1u)   // LD 2: uvec4 a staged row of A (U fragments + 16 bytes of padding)
#define AE (FM * U * FK / 8u)   // LD 2: A's uvec4 a subgroup a round
#define NAE ((AE + 31u) / 32u)

shared uvec4 bsh[BE];
shared uvec4 red[KS * RT * TV]; // f32 bits
shared uvec4 ash[LDA == 2u ? NSG * FM * AV : 1u];

// this invocation's vectors of B's round at k0 (packed f16 or bf16, zeros past N and ke)
void load_b(uint k0, uint t, uint ke, uint bbase, bool bvec, out uvec4 rb[NBE]) {
  [[unroll]] for (uint i = 0u; i < NBE; i++) {
    uint e = t + i * WG, kl = e / BRV, c0 = (e % BRV) * 8u, k = k0 + kl;
    uvec4 w = uvec4(0);
    if (e < BE && k < ke) {
      uint o = bbase + k * NB + c0;
      if (bvec && NB % 8u == 0u) {
        // every invocation loads: the padding's vectors (c0 >= NB, n = 8 on
        // 16-column fragments) load the row's first 16 bytes again, so
        // nothing reads past B, and they only reach C's padding columns,
        // which are never stored.  (Loading the next row there read past
        // B's end at its last; the load under c0 < NB cost n = 8 15% on an
        // H100, 2 071 GB/s against 2 448 at 8192x8192x8.)
        w = b4[(c0 < NB ? o : o - c0) / 8u];
      } else {
        [[unroll]] for (uint v = 0u; v < 8u; v += 2u) {
          uint lo = c0 + v < NB ? uint(b[o + v]) : 0u, hi = c0 + v + 1u < NB ? uint(b[o + v + 1u]) : 0u;
          w[v / 2u] = lo | (hi << 16);
        }
      }
    }
    rb[i] = w;
  }
}

#ifdef CM_EMU
// one f16 (IN_BF16: bf16) of shared memory as f32 (dtype.glsl's LD)
float bsh_half(uint h) { return LD((bsh[h / 8u][(h % 8u) / 2u] >> (16u * (h % 2u))) & 0xffffu); }
float ash_half(uint h) { return LD((ash[h / 8u][(h % 8u) / 2u] >> (16u * (h % 2u))) & 0xffffu); }
#endif

// LD 2: this lane's uvec4 of the subgroup's A piece at kg (FM rows of U FK, zeros past ke)
void load_as(uint kg, uint lane, bool live, uint ke, uint arow, uint K, out uvec4 ra[NAE]) {
  [[unroll]] for (uint i = 0u; i < NAE; i++) {
    uint e = i * 32u + lane, r = e / (U * FK / 8u), cv = e % (U * FK / 8u), k = kg + cv * 8u;
    ra[i] = live && e < AE && k < ke ? a4[(arow + r * K + k) / 8u] : uvec4(0);
  }
}

void main() {
  uint m = pc.meta_off;
  uint M = meta[m], K = meta[m + 2u], KC = meta[m + 4u];
  uint bi = gl_WorkGroupID.z, t = gl_LocalInvocationID.x;
  uint lane = t % 32u, sgi = t / 32u, g = sgi % KS, rs = sgi / KS;
  uint kb = gl_WorkGroupID.y * KC, ke = min(K, kb + KC);
  uint S = gl_NumWorkGroups.y;
  uint tile0 = (gl_WorkGroupID.x * RT + rs) * FM; // this subgroup's own rows: tile0 .. tile0 + FM - 1
  bool live = tile0 < M;
  uint row0 = min(tile0, M - FM);                 // where its fragments start (the last tile clamped)
  uint abase = bi * M * K, bbase = bi * K * NB;
  bool bvec = bbase % 8u == 0u;
  uint kv = K / 8u;
#ifdef CM_EMU
  float acc[NF][FE];
  [[unroll]] for (uint f = 0u; f < NF; f++)
    [[unroll]] for (uint h = 0u; h < FE; h++) acc[f][h] = 0.0;
#else
  fcoopmatNV<32, gl_ScopeSubgroup, FM, FN> acc[NF];
  [[unroll]] for (uint f = 0u; f < NF; f++) acc[f] = fcoopmatNV<32, gl_ScopeSubgroup, FM, FN>(0.0);
  fcoopmatNV<16, gl_ScopeSubgroup, FM, FK> fa[U];
#endif
  uvec4 rb[NBE];
  load_b(kb, t, ke, bbase, bvec, rb);
  uint arow = abase + row0 * K, sa = sgi * FM * AV;
  uvec4 ras[NAE];
  if (LDA == 2u) load_as(kb + g * U * FK, lane, live, ke, arow, K, ras);
#ifndef CM_EMU
  if (LDA != 2u) [[unroll]] for (uint u = 0u; u < U; u++) {
    uint kk = kb + (g * U + u) * FK;
    if (live && kk < ke) coopMatLoadNV(fa[u], a4, (abase + row0 * K + kk) / 8u, kv, false);
  }
#endif
  for (uint k0 = kb; k0 < ke; k0 += KR) {
    uvec4 cb[NBE] = rb;
    uvec4 cas[NAE] = ras;
#ifndef CM_EMU
    fcoopmatNV<16, gl_ScopeSubgroup, FM, FK> ca[U] = fa;
#endif
    if (k0 + KR < ke) { // the next round's loads, in flight during this one
      load_b(k0 + KR, t, ke, bbase, bvec, rb);
      if (LDA == 2u) load_as(k0 + KR + g * U * FK, lane, live, ke, arow, K, ras);
#ifndef CM_EMU
      if (LDA != 2u) [[unroll]] for (uint u = 0u; u < U; u++) {
        uint kk = k0 + KR + (g * U + u) * FK;
        if (live && kk < ke) coopMatLoadNV(fa[u], a4, (abase + row0 * K + kk) / 8u, kv, false);
      }
#endif
    }
    barrier(); // the previous round's tile is no longer read
    [[unroll]] for (uint i = 0u; i < NBE; i++)
      if (t + i * WG < BE) bsh[t + i * WG] = cb[i];
    if (LDA == 2u)
      [[unroll]] for (uint i = 0u; i < NAE; i++) {
        uint e = i * 32u + lane;
        if (e < AE) ash[sa + (e / (U * FK / 8u)) * AV + e % (U * FK / 8u)] = cas[i];
      }
    barrier();
    [[unroll]] for (uint u = 0u; u < U; u++) {
      uint kl = (g * U + u) * FK, kk = k0 + kl;
      if (live && kk < ke)
        [[unroll]] for (uint f = 0u; f < NF; f++) {
#ifdef CM_EMU
          [[unroll]] for (uint h = 0u; h < FE; h++) {
            uint e = lane + 32u * h, r = e / FN, cc = e % FN;
            float s = acc[f][h];
            for (uint x = 0u; x < FK; x++) {
              float av = LDA == 2u ? ash_half((sa + r * AV) * 8u + u * FK + x)
                                   : LD(a[abase + (row0 + r) * K + kk + x]);
              s = fma(av, bsh_half((kl + x) * NP + f * FN + cc), s);
            }
            acc[f][h] = s;
          }
#else
          FRAG_B fb;
          coopMatLoadNV(fb, bsh, kl * BRV + f * (FN / 8u), BRV, false);
          if (LDA == 2u) {
            fcoopmatNV<16, gl_ScopeSubgroup, FM, FK> fs;
            coopMatLoadNV(fs, ash, sa + u * (FK / 8u), AV, false);
            acc[f] = coopMatMulAddNV(fs, fb, acc[f]);
          } else {
            acc[f] = coopMatMulAddNV(ca[u], fb, acc[f]);
          }
#endif
        }
    }
  }
  // the sums: this subgroup's FM x NP tile to shared memory (f32), then the groups' in order
  uint rbase = (g * RT + rs) * TV;
#ifdef CM_EMU
  [[unroll]] for (uint f = 0u; f < NF; f++)
    [[unroll]] for (uint h = 0u; h < FE; h++) {
      uint e = lane + 32u * h, r = e / FN, cc = f * FN + e % FN;
      red[rbase + r * (NP / 4u) + cc / 4u][cc % 4u] = floatBitsToUint(acc[f][h]);
    }
#else
  [[unroll]] for (uint f = 0u; f < NF; f++) coopMatStoreNV(acc[f], red, rbase + f * (FN / 4u), NP / 4u, false);
#endif
  barrier();
  for (uint e = t; e < RT * TV; e += WG) {
    uint ts = e / TV, rl = (e % TV) / (NP / 4u), q = e % (NP / 4u);
    uint own = (gl_WorkGroupID.x * RT + ts) * FM, row = min(own, M - FM) + rl;
    vec4 s = uintBitsToFloat(red[e]);
    [[unroll]] for (uint h = 1u; h < KS; h++) s += uintBitsToFloat(red[h * RT * TV + e]);
    if (own < M && row >= own && row < M)
      [[unroll]] for (uint x = 0u; x < 4u; x++) {
        uint col = q * 4u + x;
        if (col < NB) {
          if (PART != 0u) cp[((bi * S + gl_WorkGroupID.y) * M + row) * NB + col] = s[x];
          else c[(bi * M + row) * NB + col] = CST(s[x]);
        }
      }
  }
  if (FOLD == 0u || PART == 0u) return;
  uint r0 = gl_WorkGroupID.x * RT * FM;
  mv_fold(bi, S, M, NB, r0, min(r0 + RT * FM, M), 0u, NB, t, WG);
}
