#version 450
// dot_coopmat.comp - C = A x B per batch on tensor cores through
// GL_NV_cooperative_matrix: f32 in global memory, every element rounded to
// f16 on its bits (nx_f16_bits, shaders/lib/f16.glsl: nearest even, overflow
// to +-inf, f16 subnormals kept, NaN stays NaN), products and sums in f32
// (the tensor cores' f32 accumulation), C in f32.
//
// 256 invocations = 8 subgroups of 32 (the host requires subgroup size 32)
// own a BM x BN = 128 x 128 block of C and walk K in steps of BK = 32.  The
// subgroups sit 2 (rows) x 4 (columns); each owns a 64 x 32 patch of C as
// 4 x 2 accumulators fcoopmatNV<32, subgroup, 16, 16> and multiplies 16x16
// f16 fragments (16x16x16, f16 x f16 -> f32) loaded from shared memory.
// Global loads are scalar with bounds checks (zeros outside M, N, K), so any
// shape works; the next step's tile is loaded into registers while the
// current one is multiplied.  The result goes through a per-subgroup 16x16
// f32 scratch in shared memory and is written to C with bounds checks.
// Grid: (ceil(N/BN), min(ceil(M/BM), limit), min(batch, limit)); row tiles
// and batches beyond the grid are walked in loops.
// meta: [0] M [1] N [2] K [3] batch
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_GOOGLE_include_directive : require
#include "f16.glsl"

#define BM 128u
#define BN 128u
#define BK 32u
#define WG 256u
#define ASTR (BK + 8u)      // f16 elements per row of the A tile (80 bytes: a multiple of 16)
#define BSTR (BN + 8u)      // f16 elements per row of the B tile (272 bytes)
#define SG_ROWS 64u         // rows of C per subgroup
#define SG_COLS 32u         // columns of C per subgroup
#define FR (SG_ROWS / 16u)  // accumulator fragments per subgroup, rows
#define FC (SG_COLS / 16u)  // and columns
#define A_PAIRS (BM * BK / 2u / WG)   // element pairs each invocation loads per step
#define B_PAIRS (BK * BN / 2u / WG)

layout(local_size_x = 256) in;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
// inputs as bits: rounding reads the f32 encoding, never a (maybe flushed) float
layout(std430, binding = 1) readonly buffer A { uint a[]; };
layout(std430, binding = 2) readonly buffer B { uint b[]; };
layout(std430, binding = 3) writeonly buffer C { float c[]; };

shared float16_t As[BM * ASTR];          // [row][k]
shared float16_t Bs[BK * BSTR];          // [k][column]
shared float Cs[(WG / 32u) * 256u];      // one 16x16 f32 scratch per subgroup

// two f32 bit patterns -> the two f16 values, by bit cast (no conversion)
f16vec2 to_f16x2(uint lo, uint hi) { return unpackFloat2x16(nx_f16_bits(lo) | (nx_f16_bits(hi) << 16)); }

uint M, N, K;
uint ra[A_PAIRS * 2u], rb[B_PAIRS * 2u];   // the next tile, as f32 bits

void load_tiles(uint abase, uint bbase, uint row0, uint col0, uint k0) {
  uint t = gl_LocalInvocationID.x;
  for (uint i = 0u; i < A_PAIRS; i++) {     // A: 16 pairs per row (k fastest)
    uint p = t + i * WG, r = p / (BK / 2u), k = k0 + (p % (BK / 2u)) * 2u, gr = row0 + r;
    ra[2u * i] = (gr < M && k < K) ? a[abase + gr * K + k] : 0u;
    ra[2u * i + 1u] = (gr < M && k + 1u < K) ? a[abase + gr * K + k + 1u] : 0u;
  }
  for (uint i = 0u; i < B_PAIRS; i++) {     // B: 64 pairs per k row (columns fastest)
    uint p = t + i * WG, kk = p / (BN / 2u), cc = (p % (BN / 2u)) * 2u;
    uint gk = k0 + kk, gc = col0 + cc;
    rb[2u * i] = (gk < K && gc < N) ? b[bbase + gk * N + gc] : 0u;
    rb[2u * i + 1u] = (gk < K && gc + 1u < N) ? b[bbase + gk * N + gc + 1u] : 0u;
  }
}

void store_tiles() {
  uint t = gl_LocalInvocationID.x;
  for (uint i = 0u; i < A_PAIRS; i++) {
    uint p = t + i * WG, r = p / (BK / 2u), k = (p % (BK / 2u)) * 2u;
    f16vec2 h = to_f16x2(ra[2u * i], ra[2u * i + 1u]);
    As[r * ASTR + k] = h.x;
    As[r * ASTR + k + 1u] = h.y;
  }
  for (uint i = 0u; i < B_PAIRS; i++) {
    uint p = t + i * WG, kk = p / (BN / 2u), cc = (p % (BN / 2u)) * 2u;
    f16vec2 h = to_f16x2(rb[2u * i], rb[2u * i + 1u]);
    Bs[kk * BSTR + cc] = h.x;
    Bs[kk * BSTR + cc + 1u] = h.y;
  }
}

void main() {
  uint m = pc.meta_off;
  M = meta[m];
  N = meta[m + 1u];
  K = meta[m + 2u];
  uint batch = meta[m + 3u];
  uint tiles_m = (M + BM - 1u) / BM;
  uint sg = gl_SubgroupID, lane = gl_SubgroupInvocationID;
  uint sy = sg / 4u, sx = sg % 4u;           // 2 x 4 subgroups
  uint col0 = gl_WorkGroupID.x * BN;

  for (uint bi = gl_WorkGroupID.z; bi < batch; bi += gl_NumWorkGroups.z)
    for (uint tm = gl_WorkGroupID.y; tm < tiles_m; tm += gl_NumWorkGroups.y) {
      uint row0 = tm * BM;
      uint abase = bi * M * K, bbase = bi * K * N;
      fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc[FR][FC];
      for (uint i = 0u; i < FR; i++)
        for (uint j = 0u; j < FC; j++) acc[i][j] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);

      load_tiles(abase, bbase, row0, col0, 0u);
      for (uint k0 = 0u; k0 < K; k0 += BK) {
        barrier();                           // everyone is done with the last tile
        store_tiles();
        barrier();
        if (k0 + BK < K) load_tiles(abase, bbase, row0, col0, k0 + BK);  // in flight meanwhile
        for (uint kk = 0u; kk < BK; kk += 16u) {
          fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> fa[FR];
          fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> fb[FC];
          for (uint i = 0u; i < FR; i++)
            coopMatLoadNV(fa[i], As, (sy * SG_ROWS + i * 16u) * ASTR + kk, ASTR, false);
          for (uint j = 0u; j < FC; j++)
            coopMatLoadNV(fb[j], Bs, kk * BSTR + sx * SG_COLS + j * 16u, BSTR, false);
          for (uint i = 0u; i < FR; i++)
            for (uint j = 0u; j < FC; j++) acc[i][j] = coopMatMulAddNV(fa[i], fb[j], acc[i][j]);
        }
      }

      // accumulators -> this subgroup's scratch -> C, with bounds
      for (uint i = 0u; i < FR; i++)
        for (uint j = 0u; j < FC; j++) {
          coopMatStoreNV(acc[i][j], Cs, sg * 256u, 16u, false);
          subgroupMemoryBarrierShared();
          subgroupBarrier();
          uint r0 = row0 + sy * SG_ROWS + i * 16u, c0 = col0 + sx * SG_COLS + j * 16u;
          for (uint e = lane; e < 256u; e += 32u) {
            uint gr = r0 + e / 16u, gc = c0 + e % 16u;
            if (gr < M && gc < N) c[bi * M * N + gr * N + gc] = Cs[sg * 256u + e];
          }
          subgroupMemoryBarrierShared();
          subgroupBarrier();
        }
    }
}
