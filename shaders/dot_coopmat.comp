#version 450
// dot_coopmat.comp - dot on tensor cores through GL_NV_cooperative_matrix
// (bf16, IN_BF16: rewritten to VK_KHR_cooperative_matrix, see below):
// C = A x B per batch from f16 A [batch][Mp][Kp] and B [batch][Kp][Np]
// (either the f16 tensors themselves where their shapes are whole tiles, or
// the zero-padded f16 copies f16_pack.comp made), products and sums in f32
// (the tensor cores' f32 accumulation), C in f32, or (OUT_F16) each f32 sum
// rounded once to f16 on its bits (nx_f16_bits: ties to even, subnormals
// kept, whatever the device's conversions do).
//
// WM x WN subgroups of 32 (the host requires subgroup size 32) own a
// BM x BN block of C; each owns FR x FC accumulators
// fcoopmatNV<32, subgroup, FM, FN> and multiplies FM x FK by FK x FN f16
// fragments read from shared memory (FM x FN x FK: one of the device's
// f16 x f16 + f32 configurations, the host picks).  K is walked in steps of
// BK with two shared stages: the next step's tile is read from global
// memory into registers (16-byte loads, no bounds checks: A and B are whole
// tiles) while the current one is multiplied, then stored to the other
// stage; one barrier per step.  Rows of each stage carry 16 bytes of padding
// so that the rows one fragment read touches fall in distinct banks.
// Accumulators whose FM x FN tile lies inside C go straight to C (f32, rows
// of C a multiple of 4 floats); the others (and all of them for OUT_F16 and
// OUT_BF16) go through a per-subgroup FM x FN f32 scratch (the stage memory,
// free by then) and are written with bounds checks.
// Split K (meta[7] = KS > 0): the k steps are cut into chunks of KS and
// each (batch, chunk) pair writes its f32 partial product to C as block
// b * S + chunk of S (dot_ksum.comp adds them in chunk order); products
// whose grid leaves the device's units idle take it (dot.c).
// Grid: (Np/BN, min(Mp/BM, limit), min(batch * S, limit)); row tiles and
// batches beyond the grid are walked in loops.
// ST = 1: one shared stage instead of two (half the shared memory, so BK
// 64 or 256-wide blocks fit in 48 KiB): the next step's registers are
// stored between two barriers after the current step's products.
// PF = 2: two register sets, each step's global loads two steps ahead of
// its products instead of one (the loop unrolled by two).
// GM > 0: where the grid has a workgroup per row tile, consecutive
// workgroups walk GM row tiles down a column before the next column (L2
// reuse of B's column panels, as the blocks resident at once touch fewer).
// OR: the order of a k slice's fragment loads and products: 0, the FR A
// fragments held while each B fragment is loaded and multiplied by them; 1,
// all FR A and FC B fragments loaded before the FR x FC products (more
// loads in flight, FC x 4 more registers); 2, the FC B fragments held while
// each A fragment is loaded and multiplied by them; 3, two sets of all
// fragments, the next FK slice's loaded before the current one's products.
// CM_EMU: the same data flow with the fragment loads, products and stores
// done by plain code (each 32 invocations play a subgroup, whatever the
// device's subgroups): lavapipe has no cooperative matrices, and this lets
// it check the stages, the prefetch, the regrouping and both stores.
// DG (diagnostics for tuning runs, never a product): 1, the first k step's
// tile alone is loaded and the products run on it for every step (the
// fragment loads and products alone: the inner loop's bound); 2, the tiles
// are loaded and stored but not multiplied (the data movement's bound).
// IN_BF16: A and B hold bf16 (the same data flow; products of bf16 values
// are exact in f32).  The tensor-core form is written against
// GL_NV_cooperative_matrix, which has no bf16, and rewritten after glslang
// into VK_KHR_cooperative_matrix SPIR-V whose 16-bit A and B fragments are
// bf16 (src/vk/spirv_khr.c, run where the GLSL defines
// NXVK_SPIRV_KHR_BF16): there, A and B fragments are only loaded and
// multiplied (no arithmetic on them), and B's type differs from A's by its
// row count FKB, a specialization constant (9) that only marks it (with FM
// = FN = FK the two would be one type, and the rewrite gives each type one
// use: A, B or accumulator).  The emulation reads bf16 bits as
// uintBitsToFloat(bits << 16).
// NXVK_SPIRV_KHR (f16, not the emulation): the same kernel made a
// VK_KHR_cooperative_matrix one without bf16, B marked by FKB as above: on
// an H100 its products run ~40% faster than the NV extension's.
// OUT_BF16: C in bf16, each f32 sum rounded once on its bits (nx_bf16_bits:
// ties to even, NaN kept quiet), through the scratch as OUT_F16.
// NX_F16_HW (OUT_F16, NXVK_F16_CVT's hw form, where the device promises f16
// round to nearest even): the f16 results by the driver's conversion, two
// an instruction (nx_f32x2_to_f16, the same bits but NaN payloads): the ~20
// integer operations of each nx_f16_bits, inlined 4 x FR x FC x 2 times,
// made the f16 kernels' code 2.3x bf16's on an H100 (bench/NOTES.md).
// Defines: WM WN FR FC BK FM FN FK OUT_F16 OUT_BF16 IN_BF16 NXVK_SPIRV_KHR ST PF GM OR CM_EMU DG; the default
// (dot.c's coopmat_embedded) is 2 x 4 subgroups of 64 x 64 (BM = 128, BN =
// 256, 256 invocations, BK = 32) on 16x16x16, one stage, loads one step
// ahead, no regrouping, order 0.
// meta: [0] M [1] N [2] K [3] batch [4] Mp [5] Np [6] Kp [7] KS (0: no split)
#ifndef CM_EMU
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#endif
#extension GL_EXT_control_flow_attributes : require
#extension GL_GOOGLE_include_directive : require
#if defined(OUT_F16) || defined(OUT_BF16)
#define OUT16 1                      // a 16-bit C: every tile through the scratch
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#endif
#if defined(OUT16) || defined(CM_EMU)
#include "f16.glsl"
#endif

#ifndef WM
#define WM 2u
#define WN 4u
#define FR 4u
#define FC 4u
#define BK 32u
#ifndef ST
#define ST 1
#endif
#endif
#ifndef FM
#define FM 16u
#define FN 16u
#define FK 16u
#endif
#ifndef ST
#define ST 2
#endif
#ifndef PF
#define PF 1
#endif
#ifndef GM
#define GM 0
#endif
#ifndef OR
#define OR 0
#endif
#ifndef DG
#define DG 0
#endif

#define NT (WM * WN * 32u)
#define BM (WM * FR * FM)
#define BN (WN * FC * FN)
#define AV (BK / 8u + 1u)            // uvec4 per row of an A stage: BK halves + 8 of padding
#define BV (BN / 8u + 1u)            // uvec4 per k row of a B stage
#define A_STAGE (BM * AV)
#define B_STAGE (BK * BV)
#define B0 (uint(ST) * A_STAGE)      // where the B stages start
#define A_LOADS (BM * BK / 8u / NT)  // uvec4 each invocation moves per step
#define B_LOADS (BK * BN / 8u / NT)
#define SV (FM * FN / 4u)            // uvec4 of one subgroup's f32 scratch
#define FE (FM * FN / 32u)           // elements of an FM x FN tile per lane (the emulation's)
#define SM_SIZE (uint(ST) * (A_STAGE + B_STAGE))

layout(local_size_x = NT) in;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) readonly buffer A { uvec4 a[]; };  // f16 (IN_BF16: bf16), 8 per uvec4
layout(std430, binding = 2) readonly buffer B { uvec4 b[]; };
#ifdef OUT16
layout(std430, binding = 3) writeonly buffer C { uint16_t c[]; };  // f16 / bf16 bits
// the same memory four results a store, for rows of C whose four columns are
// all inside it (N a multiple of 4: every such run starts on 8 bytes)
layout(std430, binding = 3) writeonly buffer C4 { uvec2 c4[]; };
#else
layout(std430, binding = 3) writeonly buffer C { float c[]; };
#endif

// ST A stages, ST B stages; afterwards SV uvec4 (FM x FN f32) per subgroup
shared uvec4 sm[SM_SIZE > WM * WN * SV ? SM_SIZE : WM * WN * SV];

uvec4 ra[A_LOADS], rb[B_LOADS];

// the tile of step s into registers: A rows from abase (uvec4 index), kv
// uvec4 per row; B k rows from bbase, nv uvec4 per row
void load_step_(uint abase, uint bbase, uint kv, uint nv, uint s) {
  uint t = gl_LocalInvocationID.x;
  [[unroll]] for (uint i = 0u; i < A_LOADS; i++) {
    uint p = t + i * NT, r = p / (BK / 8u), q = p % (BK / 8u);
    ra[i] = a[abase + r * kv + s * (BK / 8u) + q];
  }
  [[unroll]] for (uint i = 0u; i < B_LOADS; i++) {
    uint p = t + i * NT, kk = p / (BN / 8u), q = p % (BN / 8u);
    rb[i] = b[bbase + (s * BK + kk) * nv + q];
  }
}

void store_stage_(uint st) {
  uint t = gl_LocalInvocationID.x;
  [[unroll]] for (uint i = 0u; i < A_LOADS; i++) {
    uint p = t + i * NT;
    sm[st * A_STAGE + (p / (BK / 8u)) * AV + p % (BK / 8u)] = ra[i];
  }
  [[unroll]] for (uint i = 0u; i < B_LOADS; i++) {
    uint p = t + i * NT;
    sm[B0 + st * B_STAGE + (p / (BN / 8u)) * BV + p % (BN / 8u)] = rb[i];
  }
}

#if PF == 2
uvec4 ra2[A_LOADS], rb2[B_LOADS];

// load_step and store_stage on the second register set
void load_step2_(uint abase, uint bbase, uint kv, uint nv, uint s) {
  uint t = gl_LocalInvocationID.x;
  [[unroll]] for (uint i = 0u; i < A_LOADS; i++) {
    uint p = t + i * NT, r = p / (BK / 8u), q = p % (BK / 8u);
    ra2[i] = a[abase + r * kv + s * (BK / 8u) + q];
  }
  [[unroll]] for (uint i = 0u; i < B_LOADS; i++) {
    uint p = t + i * NT, kk = p / (BN / 8u), q = p % (BN / 8u);
    rb2[i] = b[bbase + (s * BK + kk) * nv + q];
  }
}

void store_stage2_(uint st) {
  uint t = gl_LocalInvocationID.x;
  [[unroll]] for (uint i = 0u; i < A_LOADS; i++) {
    uint p = t + i * NT;
    sm[st * A_STAGE + (p / (BK / 8u)) * AV + p % (BK / 8u)] = ra2[i];
  }
  [[unroll]] for (uint i = 0u; i < B_LOADS; i++) {
    uint p = t + i * NT;
    sm[B0 + st * B_STAGE + (p / (BN / 8u)) * BV + p % (BN / 8u)] = rb2[i];
  }
}
#endif

#ifdef CM_EMU
// one f16 (IN_BF16: bf16) of the shared stages, as f32; h counts halves from
// the start of sm
#ifdef IN_BF16
float sm_half(uint h) { return uintBitsToFloat(((sm[h / 8u][(h % 8u) / 2u] >> (16u * (h % 2u))) & 0xffffu) << 16); }
#else
float sm_half(uint h) { return nx_f16_to_f32((sm[h / 8u][(h % 8u) / 2u] >> (16u * (h % 2u))) & 0xffffu); }
#endif

// acc += A x B, FM x FK from uvec4 aoff (row-major, rows as uvec4 apart)
// times FK x FN from boff (row-major, bs apart); this lane's elements
// e = lane + 32 h: row e / FN, column e % FN
void emu_mad(inout float acc[FE], uint aoff, uint as, uint boff, uint bs, uint lane) {
  [[dont_unroll]] for (uint h = 0u; h < FE; h++) {
    uint e = lane + 32u * h, r = e / FN, c = e % FN;
    float s = acc[h];
    [[dont_unroll]] for (uint k = 0u; k < FK; k++)
      s = fma(sm_half(aoff * 8u + r * as * 8u + k), sm_half(boff * 8u + k * bs * 8u + c), s);
    acc[h] = s;
  }
}

#define MMA_STAGE(ST_)                                                                                      \
  [[dont_unroll]] for (uint kk = 0u; kk < BK; kk += FK)                                                     \
    [[dont_unroll]] for (uint i = 0u; i < FR; i++)                                                          \
      [[dont_unroll]] for (uint j = 0u; j < FC; j++)                                                        \
        emu_mad(acc[i][j], (ST_) * A_STAGE + (wr * FR * FM + i * FM) * AV + kk / 8u, AV,                    \
                B0 + (ST_) * B_STAGE + kk * BV + (wc * FC * FN + j * FN) / 8u, BV, lane);
#else
// the A and B fragment types (made KHR, bf16 or f16: B's rows the marker FKB, see above)
#define FRAG_A fcoopmatNV<16, gl_ScopeSubgroup, FM, FK>
#if defined(IN_BF16) || defined(NXVK_SPIRV_KHR)
layout(constant_id = 9) const uint FKB = FK;
#define FRAG_B fcoopmatNV<16, gl_ScopeSubgroup, FKB, FN>
#else
#define FRAG_B fcoopmatNV<16, gl_ScopeSubgroup, FK, FN>
#endif
#define LOAD_A(ST_, kk, i, F)                                                                               \
  coopMatLoadNV(F, sm, (ST_) * A_STAGE + (wr * FR * FM + (i) * FM) * AV + (kk) / 8u, AV, false)
#define LOAD_B(ST_, kk, j, F)                                                                               \
  coopMatLoadNV(F, sm, B0 + (ST_) * B_STAGE + (kk) * BV + (wc * FC * FN + (j) * FN) / 8u, BV, false)
#if OR == 1
// the products of stage ST_ into acc: per FK of the step, all FR A and FC B
// fragments, then their FR x FC products
#define MMA_STAGE(ST_)                                                                                      \
  [[unroll]] for (uint kk = 0u; kk < BK; kk += FK) {                                                        \
    FRAG_A fa[FR];                                                                                          \
    FRAG_B fb[FC];                                                                                          \
    [[unroll]] for (uint i = 0u; i < FR; i++) LOAD_A(ST_, kk, i, fa[i]);                                    \
    [[unroll]] for (uint j = 0u; j < FC; j++) LOAD_B(ST_, kk, j, fb[j]);                                    \
    [[unroll]] for (uint j = 0u; j < FC; j++)                                                               \
      [[unroll]] for (uint i = 0u; i < FR; i++) acc[i][j] = coopMatMulAddNV(fa[i], fb[j], acc[i][j]);       \
  }
#elif OR == 2
// per FK of the step, the subgroup's FC B fragments, then each A fragment
// times all of them
#define MMA_STAGE(ST_)                                                                                      \
  [[unroll]] for (uint kk = 0u; kk < BK; kk += FK) {                                                        \
    FRAG_B fb[FC];                                                                                          \
    [[unroll]] for (uint j = 0u; j < FC; j++) LOAD_B(ST_, kk, j, fb[j]);                                    \
    [[unroll]] for (uint i = 0u; i < FR; i++) {                                                             \
      FRAG_A fa;                                                                                            \
      LOAD_A(ST_, kk, i, fa);                                                                               \
      [[unroll]] for (uint j = 0u; j < FC; j++) acc[i][j] = coopMatMulAddNV(fa, fb[j], acc[i][j]);          \
    }                                                                                                       \
  }
#elif OR == 3
// two sets of all FR A and FC B fragments: the next FK slice's loaded before
// the current slice's products (their latency behind those products; twice
// the fragment registers; BK a multiple of 2 FK)
#define MMA_STAGE(ST_)                                                                                      \
  {                                                                                                         \
    FRAG_A fa0[FR], fa1[FR];                                                                                \
    FRAG_B fb0[FC], fb1[FC];                                                                                \
    [[unroll]] for (uint i = 0u; i < FR; i++) LOAD_A(ST_, 0u, i, fa0[i]);                                   \
    [[unroll]] for (uint j = 0u; j < FC; j++) LOAD_B(ST_, 0u, j, fb0[j]);                                   \
    [[unroll]] for (uint kk = 0u; kk < BK; kk += 2u * FK) {                                                 \
      [[unroll]] for (uint i = 0u; i < FR; i++) LOAD_A(ST_, kk + FK, i, fa1[i]);                            \
      [[unroll]] for (uint j = 0u; j < FC; j++) LOAD_B(ST_, kk + FK, j, fb1[j]);                            \
      [[unroll]] for (uint j = 0u; j < FC; j++)                                                             \
        [[unroll]] for (uint i = 0u; i < FR; i++) acc[i][j] = coopMatMulAddNV(fa0[i], fb0[j], acc[i][j]);   \
      if (kk + 2u * FK < BK) {                                                                              \
        [[unroll]] for (uint i = 0u; i < FR; i++) LOAD_A(ST_, kk + 2u * FK, i, fa0[i]);                     \
        [[unroll]] for (uint j = 0u; j < FC; j++) LOAD_B(ST_, kk + 2u * FK, j, fb0[j]);                     \
      }                                                                                                     \
      [[unroll]] for (uint j = 0u; j < FC; j++)                                                             \
        [[unroll]] for (uint i = 0u; i < FR; i++) acc[i][j] = coopMatMulAddNV(fa1[i], fb1[j], acc[i][j]);   \
    }                                                                                                       \
  }
#else
// per FK of the step, the subgroup's FR A fragments, then each B fragment
// times all of them
#define MMA_STAGE(ST_)                                                                                      \
  [[unroll]] for (uint kk = 0u; kk < BK; kk += FK) {                                                        \
    FRAG_A fa[FR];                                                                                          \
    [[unroll]] for (uint i = 0u; i < FR; i++) LOAD_A(ST_, kk, i, fa[i]);                                    \
    [[unroll]] for (uint j = 0u; j < FC; j++) {                                                             \
      FRAG_B fb;                                                                                            \
      LOAD_B(ST_, kk, j, fb);                                                                               \
      [[unroll]] for (uint i = 0u; i < FR; i++) acc[i][j] = coopMatMulAddNV(fa[i], fb, acc[i][j]);          \
    }                                                                                                       \
  }
#endif
#endif

// the main loop's loads, stores and products (none of some in the diagnostics)
#if DG == 1
#define LOAD(a_, b_, k_, n_, s_)
#define STORE(s_)
#define LOAD2(a_, b_, k_, n_, s_)
#define STORE2(s_)
#else
#define LOAD load_step_
#define STORE store_stage_
#define LOAD2 load_step2_
#define STORE2 store_stage2_
#endif
#if DG == 2
#define MMA(ST_)
#else
#define MMA MMA_STAGE
#endif

void main() {
  uint m = pc.meta_off;
  uint M = meta[m], N = meta[m + 1u], batch = meta[m + 3u];
  uint Mp = meta[m + 4u], Np = meta[m + 5u], Kp = meta[m + 6u];
  uint tiles_m = Mp / BM, all_steps = Kp / BK, kv = Kp / 8u, nv = Np / 8u;
  uint ks = meta[m + 7u], nsplit = ks == 0u ? 1u : (all_steps + ks - 1u) / ks;
#ifdef CM_EMU
  uint sg = gl_LocalInvocationID.x / 32u, lane = gl_LocalInvocationID.x % 32u;
#else
  uint sg = gl_SubgroupID, lane = gl_SubgroupInvocationID;
#endif
  uint wr = sg / WN, wc = sg % WN;
  uint tn0 = gl_WorkGroupID.x, tm0 = gl_WorkGroupID.y;
#if GM > 0
  if (gl_NumWorkGroups.y == tiles_m) {       // one row tile each: regroup
    uint gx = gl_NumWorkGroups.x, per = uint(GM) * gx, id = tm0 * gx + tn0;
    uint first = (id / per) * uint(GM), rows = min(tiles_m - first, uint(GM)), r = id % per;
    tm0 = first + r % rows;
    tn0 = r / rows;
  }
#endif
  uint col0 = tn0 * BN;

  for (uint z = gl_WorkGroupID.z; z < batch * nsplit; z += gl_NumWorkGroups.z)
    for (uint tm = tm0; tm < tiles_m; tm += gl_NumWorkGroups.y) {
      uint bi = z % batch, sp = z / batch;
      uint s0 = ks == 0u ? 0u : sp * ks;
      uint steps = ks == 0u ? all_steps : min(all_steps - s0, ks);
      uint row0 = tm * BM;
      // this chunk's first k step: A's columns and B's rows from s0 * BK
      uint abase = (bi * Mp + row0) * kv + s0 * (BK / 8u), bbase = bi * Kp * nv + col0 / 8u + s0 * BK * nv;
#ifdef CM_EMU
      float acc[FR][FC][FE];
      [[unroll]] for (uint i = 0u; i < FR; i++)
        [[unroll]] for (uint j = 0u; j < FC; j++)
          [[unroll]] for (uint h = 0u; h < FE; h++) acc[i][j][h] = 0.0;
#else
      fcoopmatNV<32, gl_ScopeSubgroup, FM, FN> acc[FR][FC];
      [[unroll]] for (uint i = 0u; i < FR; i++)
        [[unroll]] for (uint j = 0u; j < FC; j++) acc[i][j] = fcoopmatNV<32, gl_ScopeSubgroup, FM, FN>(0.0);
#endif

      barrier();                             // the last tile's scratch is read
      if (steps > 0u) {
        load_step_(abase, bbase, kv, nv, 0u);
        store_stage_(0u);
#if DG == 1 && ST == 2
        store_stage_(1u);                    // the diagnostic multiplies both stages
#endif
      }
#if PF == 2
      // ra/rb and ra2/rb2 take turns: the loads of step s + 2 are issued
      // before the products of step s, stored after those of step s + 1
      if (steps > 1u) LOAD(abase, bbase, kv, nv, 1u);
      barrier();
      // (ST = 1: both steps on stage 0, a barrier before each store)
      for (uint s = 0u; s < steps; s += 2u) {
        if (s + 2u < steps) LOAD2(abase, bbase, kv, nv, s + 2u);
        MMA(0u)
#if ST == 1
        barrier();
#endif
        if (s + 1u < steps) STORE(uint(ST) - 1u);
        barrier();
        if (s + 1u >= steps) break;
        if (s + 3u < steps) LOAD(abase, bbase, kv, nv, s + 3u);
        MMA(uint(ST) - 1u)
#if ST == 1
        barrier();
#endif
        if (s + 2u < steps) STORE2(0u);
        barrier();
      }
#else
      barrier();
      for (uint s = 0u; s < steps; s++) {
#if ST == 1
        uint st = 0u;
#else
        uint st = s & 1u;
#endif
        if (s + 1u < steps) LOAD(abase, bbase, kv, nv, s + 1u);  // in flight meanwhile
        MMA(st)
#if ST == 1
        barrier();                           // every subgroup is done with the stage
        if (s + 1u < steps) STORE(0u);
#else
        if (s + 1u < steps) STORE(st ^ 1u);
#endif
        barrier();
      }
#endif

      // accumulators -> C: whole tiles straight (f32), the rest through this
      // subgroup's scratch (FM rows of FN/4 uvec4) with bounds checks
      uint cbase = (bi * nsplit + sp) * M * N;
      [[unroll]] for (uint i = 0u; i < FR; i++)
        [[unroll]] for (uint j = 0u; j < FC; j++) {
          uint r0 = row0 + wr * FR * FM + i * FM, c0 = col0 + wc * FC * FN + j * FN;
#ifdef CM_EMU
          // every invocation reaches each barrier (they are the workgroup's):
          // whole tiles straight to C (as coopMatStoreNV would), the rest
          // through the scratch
#ifndef OUT16
          bool whole = r0 + FM <= M && c0 + FN <= N && N % 4u == 0u;
#else
          bool whole = false;
#endif
          bool part = !whole && r0 < M && c0 < N;
          [[unroll]] for (uint h = 0u; h < FE; h++) {
            uint e = lane + 32u * h, er = e / FN, ec = e % FN;
#ifndef OUT16
            if (whole) c[cbase + (r0 + er) * N + c0 + ec] = acc[i][j][h];
#endif
            if (part) sm[sg * SV + er * (FN / 4u) + ec / 4u][ec % 4u] = floatBitsToUint(acc[i][j][h]);
          }
          memoryBarrierShared();
          barrier();
#else
#ifndef OUT16
          if (r0 + FM <= M && c0 + FN <= N && N % 4u == 0u) {
            coopMatStoreNV(acc[i][j], c, cbase + r0 * N + c0, N, false);
            continue;
          }
#endif
          if (r0 >= M || c0 >= N) continue;
          bool part = true;
          coopMatStoreNV(acc[i][j], sm, sg * SV, FN / 4u, false);
          subgroupMemoryBarrierShared();
          subgroupBarrier();
#endif
          [[unroll]] for (uint h = 0u; h < (SV + 31u) / 32u; h++) {
            uint e = lane + 32u * h, gr = r0 + e / (FN / 4u), gc = c0 + (e % (FN / 4u)) * 4u;
            if (part && e < SV && gr < M) {
              vec4 v = uintBitsToFloat(sm[sg * SV + e]);
              uint o = cbase + gr * N + gc;
#ifdef OUT_BF16
              uvec4 hv = uvec4(nx_bf16_bits(floatBitsToUint(v.x)), nx_bf16_bits(floatBitsToUint(v.y)),
                               nx_bf16_bits(floatBitsToUint(v.z)), nx_bf16_bits(floatBitsToUint(v.w)));
#endif
#if defined(OUT_F16) && defined(NX_F16_HW)
              // the driver's conversion, two values an instruction (f16.glsl)
              uint w0 = nx_f32x2_to_f16(v.x, v.y), w1 = nx_f32x2_to_f16(v.z, v.w);
              uvec4 hv = uvec4(w0 & 0xffffu, w0 >> 16, w1 & 0xffffu, w1 >> 16);
#elif defined(OUT_F16)
              uvec4 hv = uvec4(nx_f16_bits(floatBitsToUint(v.x)), nx_f16_bits(floatBitsToUint(v.y)),
                               nx_f16_bits(floatBitsToUint(v.z)), nx_f16_bits(floatBitsToUint(v.w)));
#endif
#ifdef OUT16
              if (gc + 3u < N && N % 4u == 0u) {
                c4[o / 4u] = uvec2(hv.x | (hv.y << 16), hv.z | (hv.w << 16));
              } else {
                if (gc < N) c[o] = uint16_t(hv.x);
                if (gc + 1u < N) c[o + 1u] = uint16_t(hv.y);
                if (gc + 2u < N) c[o + 2u] = uint16_t(hv.z);
                if (gc + 3u < N) c[o + 3u] = uint16_t(hv.w);
              }
#else
              if (gc < N) c[o] = v.x;
              if (gc + 1u < N) c[o + 1u] = v.y;
              if (gc + 2u < N) c[o + 2u] = v.z;
              if (gc + 3u < N) c[o + 3u] = v.w;
#endif
            }
          }
#ifdef CM_EMU
          barrier();
#else
          subgroupMemoryBarrierShared();
          subgroupBarrier();
#endif
        }
    }
}
