#version 450
// dot_mvcm.comp - the columns form of f16 and bf16 skinny products with m =
// FM (16; TR below: 8 or 16) rows on tensor cores (GL_NV_cooperative_matrix):
// C = A x B per batch, A FM x K, B K x N (f16, IN_BF16 bf16, row-major), f32
// sums (the tensor cores'), each result rounded once to f16 (bf16) on its
// bits (or kept: OUT_F32).  Where CUDA cores need 16 FMAs a byte pair of B
// (dot_mvc.comp), this is one MMA a fragment.  Compiled at run time
// (src/ops/rtkernel.c: dot_mvcm[32]_f<FM>x<FN>x<FK>c<FC>p<PF>l<LD>[e|k]_{f16,bf16},
// e the emulation, k f16 as KHR; the transposed form TR
// dot_mvcm[32]_t<FN>x<FM>x<FK>...[z]; src/ops/dot_mvc.c picks it where the
// device lists an FM x FN x FK configuration of the inputs' type with FM =
// 16 = m (TR: FN x FM x FK with FM 8 or 16 >= m, z where m < FM), K and N
// multiples of 8 and K of FK).
// IN_BF16: the kernel is rewritten after glslang into
// VK_KHR_cooperative_matrix SPIR-V with bf16 A and B fragments
// (src/vk/spirv_khr.c, where the GLSL defines NXVK_SPIRV_KHR_BF16), as
// dot_coopmat.comp's IN_BF16: A and B fragments are only loaded and
// multiplied, B's type marked by its row count FKB (specialization constant
// 9).  NXVK_SPIRV_KHR: f16 made a KHR kernel the same way.
//
// A workgroup of NSG subgroups owns FC x FN consecutive columns of B; its
// subgroups take the chunk's k steps of FK in turn (subgroup g: steps g,
// g + NSG, ...), each loading A's FM x FK fragment (L2-resident: A is small)
// and B's FC FK x FN fragments straight from memory, PF steps' loads
// issued before their products; no shared memory and no barrier in the
// loop.  The subgroups' FC accumulators meet in shared memory at the end.
// LD 1: B's FK x FC FN tile of a step goes through the subgroup's own part
// of shared memory instead (16-byte loads, PF steps' tiles held in registers
// while the previous steps multiply; subgroup barriers only), where the
// fragment loads can transpose (a row-major B fragment read straight from
// memory may cost a 2-byte load an element).
// Grid: (ceil(N / (FC FN)), S, batch); split K as dot_mvc.comp (partials
// [batch][S][M][N] in f32, dot_mv_sum / dot_ksum_f32 after, or FOLD).
// meta: [0] M [1] N [2] K [3] batch [4] KC (a multiple of FK)
// Specialization: 0 workgroup size, 2 partials, 3 FOLD (with 2: the chunks
// summed by the column block's last workgroup, mvfold.glsl, C at binding 4).
// CM_EMU: the same data flow with the fragment loads, products and stores
// done by plain code, each 32 invocations playing a subgroup (workgroup
// barriers for its subgroup barriers): lavapipe has no cooperative
// matrices, and this lets it check the k steps, the staging and the sums.
// TR (m = 8, or 16: FM rows of A; dot_mvcm[32]_t<FN>x<FM>x<FK>..., the
// device's configuration FN x FM x FK): the transpose C^T = B^T A^T, so that
// the large operand is the fragments' A operand and the small one's 8 rows
// fit a configuration with 8 columns (NVIDIA's 16x8x16): B^T's FN (columns
// n) x FK (k) fragment loaded column-major from the same staged tile (or B),
// A^T's FK x FM fragment column-major from A (element (k, i) = A[i][k]), the
// FN x FM accumulator stored column-major, so that it lands as C's rows in
// the same [subgroup][FM][BW] sums.  Every address is the plain form's; only
// the fragments' shapes, the product's order and the layouts (BT_CM, AT_CM,
// CT_CM, the emulation's too) differ.  PA (below): A's m rows fewer than the
// configuration's FM columns (m < 8 on 16x8x16, m = 8 where only 16x16x16
// is listed), A^T staged with zero columns.
#ifndef CM_EMU
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#endif
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_GOOGLE_include_directive : require
#include "f16.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 2) const uint PART = 0u;
layout(constant_id = 3) const uint FOLD = 0u; // with PART: split K summed by the last workgroup (mvfold.glsl)
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) readonly buffer A { uvec4 a[]; };  // f16 (IN_BF16: bf16), 8 per uvec4
layout(std430, binding = 2) readonly buffer B { uvec4 b[]; };
#ifdef OUT_F32
layout(std430, binding = 3) writeonly buffer C { float c[]; };
#else
layout(std430, binding = 3) writeonly buffer C { uint16_t c[]; };  // f16 (IN_BF16: bf16) bits
#endif
// the split form's partials (the same binding, f32); coherent: under FOLD
// another workgroup's partials are read back from here
layout(std430, binding = 3) coherent buffer Cp { float cp[]; };
layout(std430, binding = 3) coherent buffer Cp4 { vec4 cp4[]; };
layout(std430, binding = 5) coherent buffer Count { uint count[]; };  // zero; left zero (mvfold.glsl)
#ifdef OUT_F32
layout(std430, binding = 4) writeonly buffer Cf { float cf[]; };
#define CST(x) (x)
#elif defined(IN_BF16)
layout(std430, binding = 4) writeonly buffer Cf { uint16_t cf[]; };
#define CST(x) uint16_t(nx_bf16_bits(floatBitsToUint(x)))
#else
layout(std430, binding = 4) writeonly buffer Cf { uint16_t cf[]; };
#define CST(x) uint16_t(nx_f16_bits(floatBitsToUint(x)))
#endif
#include "mvfold.glsl"

#ifndef LD
#define LD 0
#endif
#ifndef TR
#define TR 0
#endif
#ifndef PA
#define PA 0
#endif
// the fragments' layouts: B's (B^T's under TR), A's (A^T's) and the accumulator's store, column-major under TR
#if TR
#define BT_CM true
#define AT_CM true
#define CT_CM true
#else
#define BT_CM false
#define AT_CM false
#define CT_CM false
#endif
#define NWG (gl_WorkGroupSize.x)
#define NSG (NWG / 32u)
#define BW (FC * FN)  // columns a workgroup
#define BV (BW / 8u + 1u)          // uvec4 a row of a staged B tile (16 bytes of padding)
#define NL (FK * (BW / 8u) / 32u)  // uvec4 a lane loads of a staged tile
#define STG (FK * BV)              // uvec4 a staged tile
// PA (TR, LD 1; the name's z): m < FM rows of A, so A^T's fragment is read from the staged step too, A's FK x FM
// slice after B's tile (FM rows of FK / 8 uvec4, rows m.. zeros): FM - m columns of A^T zero, none read past A
#define AV (FK / 8u)
#define STEP (STG + (PA != 0 ? FM * AV : 0u))  // uvec4 a staged step
// LD 1: the subgroups' staged tiles [subgroup][PF][FK][BV]; at the end the
// subgroups' accumulators [subgroup][FM][BW] f32 (as uvec4)
#define SH_B (LD == 1 ? NSG * PF * STEP : 1u)
#define SH_R (NSG * FM * BW / 4u)
shared uvec4 sm[SH_B > SH_R ? SH_B : SH_R];

#if !defined(CM_EMU) && (defined(IN_BF16) || defined(NXVK_SPIRV_KHR))
layout(constant_id = 9) const uint FKB = FK; // the B operand's rows: only marks its type (see above)
#else
#define FKB FK
#endif
// the product's operands: plain, A's FM x FK fragment times B's FK x FN into FM x FN; TR, B^T's FN x FK times
// A^T's FK x FM into FN x FM (FRAG_A the fragment from A, FRAG_B the one from B's tile, MAD in the form's order)
#if TR
#define FRAG_A fcoopmatNV<16, gl_ScopeSubgroup, FKB, FM>
#define FRAG_B fcoopmatNV<16, gl_ScopeSubgroup, FN, FK>
#define FRAG_C fcoopmatNV<32, gl_ScopeSubgroup, FN, FM>
#define MAD(fa, fb, c) coopMatMulAddNV(fb, fa, c)
#else
#define FRAG_A fcoopmatNV<16, gl_ScopeSubgroup, FM, FK>
#define FRAG_B fcoopmatNV<16, gl_ScopeSubgroup, FKB, FN>
#define FRAG_C fcoopmatNV<32, gl_ScopeSubgroup, FM, FN>
#define MAD(fa, fb, c) coopMatMulAddNV(fa, fb, c)
#endif

#ifdef CM_EMU
#define FE (FM * FN / 32u)  // elements of the accumulator a lane owns (row-major, lane l: l FE ..)
#if TR
#define RC FN  // the accumulator's rows and columns
#define CC FM
#else
#define RC FM
#define CC FN
#endif
// a fragment: where its element (0, 0) is (in halves), its stride and whether column-major (element (r, c) at
// off + c stride + r, else off + r stride + c); src 0 A, 1 B, 2 shared
struct Frag { uint src; uint off; uint stride; bool cm; };
float half_at(uint src, uint i) {
  uvec4 v = src == 0u ? a[i / 8u] : src == 1u ? b[i / 8u] : sm[i / 8u];
  uint w = v[(i % 8u) / 2u];
  uint h = (i % 2u) == 0u ? w & 0xffffu : w >> 16;
#ifdef IN_BF16
  return uintBitsToFloat(h << 16);
#else
  return nx_f16_to_f32(h);
#endif
}
uint frag_at(Frag f, uint r, uint c) { return f.off + (f.cm ? c * f.stride + r : r * f.stride + c); }
// acc (RC x CC) += fx (RC x FK) fy (FK x CC)
void emu_mad(Frag fx, Frag fy, uint lane, inout float acc[FE]) {
  [[dont_unroll]] for (uint q = 0u; q < FE; q++) {
    uint e = lane * FE + q, row = e / CC, col = e - row * CC;
    [[dont_unroll]] for (uint kk = 0u; kk < FK; kk++)
      acc[q] = fma(half_at(fx.src, frag_at(fx, row, kk)), half_at(fy.src, frag_at(fy, kk, col)), acc[q]);
  }
}
// the product of A's fragment fa and B's fb in the form's order (MAD's)
#if TR
#define EMU_MAD(fa, fb, lane, acc) emu_mad(fb, fa, lane, acc)
#else
#define EMU_MAD(fa, fb, lane, acc) emu_mad(fa, fb, lane, acc)
#endif
#define SG_BARRIER() barrier()
#else
#define SG_BARRIER() subgroupBarrier()
#endif

void main() {
  uint m = pc.meta_off;
  uint M = meta[m], N = meta[m + 1u], K = meta[m + 2u], KC = meta[m + 4u];
  uint bi = gl_WorkGroupID.z, t = gl_LocalInvocationID.x;
#ifdef CM_EMU
  uint sg = t / 32u, lane = t % 32u;
#else
  uint sg = gl_SubgroupID, lane = gl_SubgroupInvocationID;
#endif
  uint kb = gl_WorkGroupID.y * KC, ke = min(K, kb + KC);
  uint S = gl_NumWorkGroups.y;
  uint col0 = gl_WorkGroupID.x * BW;
  uint abase = bi * M * K, bbase = bi * K * N;
  // fragments past N (the last block's) are neither loaded nor multiplied
  uint fc = min(FC, (N - col0) / FN);
#ifdef CM_EMU
  float acc[FC][FE];
  [[unroll]] for (uint j = 0u; j < FC; j++)
    [[unroll]] for (uint q = 0u; q < FE; q++) acc[j][q] = 0.0;
#else
  FRAG_C acc[FC];
  [[unroll]] for (uint j = 0u; j < FC; j++) acc[j] = FRAG_C(0.0);
#endif
  uint step = NSG * FK;
#if LD == 1
  // B's tiles of the next PF steps, lane l's NL uvec4 of each (zeros past ke and past the block's fragments)
  uvec4 rb[PF][NL];
#define LOAD_B(K0)                                                                           \
  [[unroll]] for (uint p = 0u; p < PF; p++) {                                                \
    uint k = (K0) + p * step;                                                                \
    [[unroll]] for (uint i = 0u; i < NL; i++) {                                              \
      uint e = i * 32u + lane, row = e / (BW / 8u), cv = e - row * (BW / 8u);                \
      rb[p][i] = k < ke && cv * 8u < fc * FN ? b[(bbase + (k + row) * N + col0) / 8u + cv] : uvec4(0); \
    }                                                                                        \
  }
#if PA
  // A's slices of the next PF steps: lane l row l / AV of A's FM (zeros from m), uvec4 l % AV
  uvec4 ra[PF];
#define LOAD_A(K0)                                                                           \
  [[unroll]] for (uint p = 0u; p < PF; p++) {                                                \
    uint k = (K0) + p * step, row = lane / AV, cv = lane - row * AV;                         \
    ra[p] = k < ke && row < M ? a[(abase + row * K + k) / 8u + cv] : uvec4(0);               \
  }
#else
#define LOAD_A(K0)
#endif
  LOAD_B(kb + sg * FK)
  LOAD_A(kb + sg * FK)
  uint sb = sg * PF * STEP;
#endif
  // (the trip count is the workgroup's, so the emulation's barriers stay uniform)
  for (uint kw = kb; kw < ke; kw += PF * step) {
    uint k0 = kw + sg * FK;
#if LD == 1
    SG_BARRIER();  // the previous steps' fragment loads are done
    [[unroll]] for (uint p = 0u; p < PF; p++)
      [[unroll]] for (uint i = 0u; i < NL; i++) {
        uint e = i * 32u + lane, row = e / (BW / 8u), cv = e - row * (BW / 8u);
        sm[sb + p * STEP + row * BV + cv] = rb[p][i];
      }
#if PA
    [[unroll]] for (uint p = 0u; p < PF; p++)
      if (lane < FM * AV) sm[sb + p * STEP + STG + lane] = ra[p];
#endif
    subgroupMemoryBarrierShared();
    SG_BARRIER();
    LOAD_B(k0 + PF * step)
    LOAD_A(k0 + PF * step)
#endif
#ifdef CM_EMU
    [[unroll]] for (uint p = 0u; p < PF; p++) {
      uint k = k0 + p * step;
      if (k < ke) {
#if PA
        Frag fa = Frag(2u, (sb + p * STEP + STG) * 8u, FK, AT_CM);
#else
        Frag fa = Frag(0u, abase + k, K, AT_CM);
#endif
        [[unroll]] for (uint j = 0u; j < FC; j++)
#if LD == 1
          if (j < fc) EMU_MAD(fa, Frag(2u, (sb + p * STEP) * 8u + j * FN, BV * 8u, BT_CM), lane, acc[j]);
#else
          if (j < fc) EMU_MAD(fa, Frag(1u, bbase + k * N + col0 + j * FN, N, BT_CM), lane, acc[j]);
#endif
      }
    }
#elif LD == 1
    // the staged steps: each fragment read from shared memory just before its product
    [[unroll]] for (uint p = 0u; p < PF; p++) {
      uint k = k0 + p * step;
      if (k < ke) {
        FRAG_A fa;
#if PA
        coopMatLoadNV(fa, sm, sb + p * STEP + STG, AV, AT_CM);
#else
        coopMatLoadNV(fa, a, (abase + k) / 8u, K / 8u, AT_CM);
#endif
        [[unroll]] for (uint j = 0u; j < FC; j++)
          if (j < fc) {
            FRAG_B fb;
            coopMatLoadNV(fb, sm, sb + p * STEP + j * FN / 8u, BV, BT_CM);
            acc[j] = MAD(fa, fb, acc[j]);
          }
      }
    }
#else
    FRAG_A fa[PF];
    FRAG_B fb[PF][FC];
    [[unroll]] for (uint p = 0u; p < PF; p++) {
      uint k = k0 + p * step;
      if (k < ke) {
        coopMatLoadNV(fa[p], a, (abase + k) / 8u, K / 8u, AT_CM);
        [[unroll]] for (uint j = 0u; j < FC; j++)
          if (j < fc) coopMatLoadNV(fb[p][j], b, (bbase + k * N + col0 + j * FN) / 8u, N / 8u, BT_CM);
      }
    }
    [[unroll]] for (uint p = 0u; p < PF; p++)
      if (k0 + p * step < ke)
        [[unroll]] for (uint j = 0u; j < FC; j++)
          if (j < fc) acc[j] = MAD(fa[p], fb[p][j], acc[j]);
#endif
  }
  barrier();  // (LD 1) every subgroup's staged tiles are read
#ifdef CM_EMU
  [[unroll]] for (uint j = 0u; j < FC; j++)
    [[unroll]] for (uint q = 0u; q < FE; q++) {
      uint e = lane * FE + q, row = e / CC, col = e - row * CC;
      uint x = sg * FM * BW + j * FN + (CT_CM ? col * BW + row : row * BW + col);
      sm[x / 4u][x % 4u] = floatBitsToUint(acc[j][q]);
    }
#else
  [[unroll]] for (uint j = 0u; j < FC; j++) coopMatStoreNV(acc[j], sm, (sg * FM * BW + j * FN) / 4u, BW / 4u, CT_CM);
#endif
  barrier();
  for (uint e = t; e < FM * BW; e += NWG) {
    uint i = e / BW, cl = e - i * BW, cn = col0 + cl;
    if (i < M && cn < N && cl < fc * FN) {
      float s = uintBitsToFloat(sm[e / 4u][e % 4u]);
      for (uint g = 1u; g < NSG; g++) {
        uint x = g * FM * BW + e;
        s += uintBitsToFloat(sm[x / 4u][x % 4u]);
      }
      if (PART != 0u) cp[((bi * S + gl_WorkGroupID.y) * M + i) * N + cn] = s;
      else c[(bi * M + i) * N + cn] = CST(s);
    }
  }
  if (FOLD != 0u && PART != 0u) mv_fold(bi, S, M, N, 0u, M, col0, col0 + fc * FN, t, NWG);
}
