#version 450
// dot_mv.comp - matrix-vector and skinny products at the memory's rate:
// C = A x B per batch where N (-DROWS) or M (-DCOLS) is at most 16, for
// f32, f16 and bf16 (16-bit elements read as they are, 16 bytes a load,
// products summed in f32, each sum rounded once to the result's dtype;
// -DOUT_F32: f16 / bf16 inputs with f32 results).  Compiled at run time
// (src/ops/rtkernel.c: dot_mv_rows_<dt>, dot_mv_cols_<dt>, the _o32 forms,
// and dot_mv_sum_<dt>, the split form's second pass); src/ops/dot.c's
// dot_mv picks the layout (bench/NOTES.md, "dot_mv").
//
// ROWS (N <= 16): each subgroup of SG invocations owns R rows of A; lane l
//   reads V consecutive elements of each row at k = (i SG + l) V (16 bytes,
//   a subgroup reads SG x 16 contiguous bytes a row), U of them a tile, all
//   loads of a tile issued before the tile of B is stored; B's tile of KT =
//   SG V U rows goes through shared memory, laid out so that lane l reads
//   its own 16 bytes (vec4 over j, consecutive lanes consecutive: no bank
//   conflicts), once per workgroup for its SG-many R rows.  Each lane keeps
//   R x NQ vec4 sums (NQ = ceil(NB / 4)); the lanes' sums meet through
//   subgroup shuffles (xor tree) at the end.
//   Grid: (ceil(M / (R x subgroups)), S, batch).
//   T > 0 (-DCT_T, the compiled form's "t<T>" layouts, NXVK_DOT_MV's 7th
//   field): B's tile covers T sub-tiles of KT rows (two barriers per T KT
//   k, not per KT), staged in coalesced 16-byte loads (consecutive
//   invocations, consecutive vectors of B's rows) into 4 vec4 slots a k row
//   plus one slot after every V rows (so the stores and the lanes' reads,
//   lane l at k = (i SG + l) V + v, hit distinct banks); P = 1 there loads
//   A's next sub-tile before this sub-tile's products (two sets of A's
//   registers; the loads stay in flight across the barriers too).  B2
//   (-DCT_B2 1, "b2"): two tiles of B, the next staged before this one's
//   products, one barrier a tile instead of two.  With T, B's column quads
//   may be split so that a lane keeps R x 4 NQP sums (NQP = ceil(NQ / (CG
//   LH))) instead of R x 4 NQ: CG (-DCT_CG 2 or 4, "c2" / "c4",
//   NXVK_DOT_MV's 9th field C) subgroups of a workgroup read the same R rows
//   of A (the repeats hit L1 / L2; a workgroup covers NSG / CG x R rows),
//   each summing its part of the quads; LH (-DCT_LH 2, "h2", the 10th field
//   H) splits them between the two halves of a subgroup's lanes: lane l
//   sums its half's quads for its own k and for lane l ^ SG / 2's, whose
//   vectors of A come by subgroupShuffleXor (A read once), and the lanes'
//   sums meet within each half.
// COLS (M <= 16): a workgroup owns SG V consecutive columns of B (lane l:
//   V of them, 16 bytes, from every row it reads); its subgroups are k
//   lanes, each reading U rows of B a round (U loads in flight); A's column
//   k (NB values, the same for the whole subgroup) comes from a shared tile
//   of A as vec4 over i (a broadcast).  The subgroups' sums meet in shared
//   memory at the end, V columns a round.
//   Grid: (ceil(N / (SG V)), S, batch).
// Split K (S = gy > 1): chunk y covers [y KC, (y + 1) KC) and its f32
// partial sums go to a scratch [batch][S][M][N] that dot_mv_sum (-DSUM, or
// dot_ksum_f32 for f32 results) adds in chunk order.
// meta: [0] M [1] N [2] K [3] batch [4] KC [5] flags (1: rows of the large
// operand whole vectors, so vector loads are aligned)
// Specialization: 0 workgroup size, 1 NB (N or M), 2 R (rows per subgroup;
// COLS: unused), 3 U (vectors a lane loads per tile or round), 4 SG (the
// device's subgroup size), 5 partials (1: write f32 partials), 6 BD (ROWS
// with N = 1: each lane reads its 16 bytes of the vector from memory (L1)
// beside A's, 4 sums a row in the vec4's components; no shared tile, no
// barriers).  The compile-time form (-DCT_NB -DCT_R -DCT_U -DCT_BD) takes
// 1, 2, 3 and 6 as literals instead, and CT_BD 2: n = 1 with B's tile in
// shared memory as packed 16-byte vectors (lane l reads A's layout); CT_PF
// 1 the prefetch (P = 1), CT_T the sub-tiles of B's tile (T, above; 0: one).
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#include "dtype.glsl"

layout(local_size_x_id = 0) in;
#if defined(CT_NB)
// the compile-time form (dot_mv.c's dot_mvk_* names, NXVK_DOT_MV_CT=1, the
// default): NB, R, U and BD are literals, so the sums' and loads' arrays
// have literal sizes and their loops unroll, which keeps them in registers
// (sized by specialization constants NVIDIA's compiler put them in local
// memory: bench/NOTES.md, dot_mv)
#extension GL_EXT_control_flow_attributes : require
const uint NB = CT_NB;
const uint R = CT_R;
const uint U = CT_U;
const uint BD = CT_BD;
#define UNROLL [[unroll]]
#else
layout(constant_id = 1) const uint NB = 1u;
layout(constant_id = 2) const uint R = 1u;
layout(constant_id = 3) const uint U = 4u;
layout(constant_id = 6) const uint BD = 0u;
#define UNROLL
#endif
layout(constant_id = 4) const uint SG = 32u;
layout(constant_id = 5) const uint PART = 0u;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };

#if defined(SUM)
// the split form's second pass: C[b][e] = sum over s in order of P[b][s][e]
layout(std430, binding = 1) readonly buffer P { float p[]; };
#ifdef OUT_F32
layout(std430, binding = 2) writeonly buffer C { float c[]; };
#define CST(x) (x)
#else
layout(std430, binding = 2) writeonly buffer C { ST c[]; };
#define CST(x) STV(x)
#endif
void main() {
  uint m = pc.meta_off;
  uint mn = meta[m], n = mn * meta[m + 1u], S = meta[m + 2u];
  uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < n; i += step) {
    uint b = i / mn, e = i - b * mn;
    float acc = p[b * S * mn + e];
    for (uint s = 1u; s < S; s++) acc += p[(b * S + s) * mn + e];
    c[i] = CST(acc);
  }
}
#else

// VT: 16 bytes of the large operand, V elements
#if defined(DT_f32)
#define V 4u
#define VT vec4
#elif defined(DT_f16) || defined(DT_bf16)
#define V 8u
#define VT uvec4
#else
#error "dot_mv takes f32, f16, bf16"
#endif

layout(std430, binding = 1) readonly buffer A { ST a[]; };
layout(std430, binding = 2) readonly buffer B { ST b[]; };
#if defined(ROWS)
layout(std430, binding = 1) readonly buffer A4 { VT a4[]; };
layout(std430, binding = 2) readonly buffer B4 { VT b4[]; };
#else
layout(std430, binding = 2) readonly buffer B4 { VT b4[]; };
#endif
#ifdef OUT_F32
layout(std430, binding = 3) writeonly buffer C { float c[]; };
#define CST(x) (x)
#else
layout(std430, binding = 3) writeonly buffer C { ST c[]; };
#define CST(x) STV(x)
#endif
// the split form's partials (the same binding, f32)
layout(std430, binding = 3) writeonly buffer Cp { float cp[]; };

// the V values of one 16-byte vector, as f32
void unpack(VT w, out float f[V]) {
#if defined(DT_f32)
  f[0] = w.x, f[1] = w.y, f[2] = w.z, f[3] = w.w;
#elif defined(DT_bf16)
  UNROLL for (uint i = 0u; i < 4u; i++) {
    f[2u * i] = uintBitsToFloat(w[i] << 16);
    f[2u * i + 1u] = uintBitsToFloat(w[i] & 0xffff0000u);
  }
#else
  UNROLL for (uint i = 0u; i < 4u; i++) {
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

#define NQ ((NB + 3u) / 4u)
// B's column quads split into NP parts (T > 0 only): CG subgroups of a
// workgroup over the same R rows (CT_CG), and within a subgroup LH lane
// halves (CT_LH 2); each lane keeps R x NQP sums, its part's quads from
// q0 = part NQP (a part's quads past NQ are never stored;
// NQP NP <= 4 keeps them within bslot's 4 slots a k row)
#if defined(CT_T) && CT_T > 0 && defined(CT_CG)
const uint CG = CT_CG;
const uint LH = CT_LH;
#else
const uint CG = 1u;
const uint LH = 1u;
#endif
#define NP (CG * LH)
#define NQP ((NQ + NP - 1u) / NP)
#define NWG (gl_WorkGroupSize.x)
#define NSG (NWG / SG)

#if defined(ROWS)
#define KT (SG * V * U)
#if defined(CT_T) && CT_T > 0
// T sub-tiles of B: k row kl's 4 vec4 slots from kl 4 + kl / V (bslot)
// B2 (CT_B2 1): two such tiles, the next one staged while this one is
// summed, one barrier per tile
#define BT (KT * uint(CT_T))
#define BSZ (BT * 4u + BT / V)
#if defined(CT_B2) && CT_B2 == 1
shared vec4 bs[2u * BSZ];
#else
shared vec4 bs[BSZ];
#endif
uint bslot(uint kl, uint q) { return kl * 4u + q + kl / V; }
#elif defined(CT_BD) && CT_BD == 2
shared VT bsp[U * SG];
#else
shared vec4 bs[KT * NQ];
#endif
#else
// A's tile: KA k values of NB rows (vec4 over i); the end's sums: NSG x NQ x SG vec4 a round
#define KA (NSG * U * 4u)
#define SH_A (KA * NQ)
#define SH_R (NSG * NQ * SG)
shared vec4 sh[SH_A > SH_R ? SH_A : SH_R];
#endif

// x + its value in every other lane of the subgroup (LH 2: of its half)
vec4 lanes_sum(vec4 x) {
  for (uint o = SG / (2u * LH); o > 0u; o /= 2u) x += subgroupShuffleXor(x, o);
  return x;
}

#if defined(ROWS) && defined(CT_NB)
// A's vectors of rows r0 .. r0 + R - 1 at k0 + (u SG + lane) V, u < U (zeros past M or ke)
void load_a(uint k0, uint r0, uint M, uint K, uint ke, uint abase, bool whole, uint lane, out VT ra[R * U]) {
  UNROLL for (uint r = 0u; r < R; r++)
    UNROLL for (uint u = 0u; u < U; u++) {
      uint row = r0 + r, k = k0 + (u * SG + lane) * V;
      VT w = VT(0);
      if (row < M && k < ke) {
        uint o = abase + row * K + k;
        if (whole && k + V <= ke) {
          w = a4[o / V];
        } else {
#if defined(DT_f32)
          UNROLL for (uint v = 0u; v < V; v++) w[v] = k + v < ke ? a[o + v] : 0.0;
#else
          UNROLL for (uint v = 0u; v < V; v += 2u) {
            uint lo = k + v < ke ? uint(a[o + v]) : 0u, hi = k + v + 1u < ke ? uint(a[o + v + 1u]) : 0u;
            w[v / 2u] = lo | (hi << 16);
          }
#endif
        }
      }
      ra[r * U + u] = w;
    }
}
#endif

#if defined(ROWS) && defined(CT_T) && CT_T > 0
// B's rows [k0, k0 + BT) (zeros past ke) into bs from off (bslot's layout)
void stage_b(uint k0, uint ke, uint bbase, uint t, uint off) {
  if (NB % V == 0u) {
    // 16-byte vectors in order: invocation e takes row kl = e / (NB / V)'s
    // vector jv (its V columns)
    const uint nv = NB / V;
    for (uint e = t; e < BT * nv; e += NWG) {
      uint kl = e / nv, jv = e - kl * nv;
      VT w = k0 + kl < ke ? b4[bbase / V + k0 * nv + e] : VT(0);
      float f[V];
      unpack(w, f);
      UNROLL for (uint h = 0u; h < V; h += 4u)
        bs[off + bslot(kl, (jv * V + h) / 4u)] = vec4(f[h], f[h + 1u], f[h + 2u], f[h + 3u]);
    }
  } else {
    // values in order: invocation e takes row e / NB's column e % NB
    for (uint e = t; e < BT * NB; e += NWG) {
      uint kl = e / NB, j = e - kl * NB;
      float x = k0 + kl < ke ? LD(b[bbase + (k0 + kl) * NB + j]) : 0.0;
      bs[off + bslot(kl, j / 4u)][j % 4u] = x;
    }
  }
}
#endif

void main() {
  uint m = pc.meta_off;
  uint M = meta[m], N = meta[m + 1u], K = meta[m + 2u], KC = meta[m + 4u];
  bool whole = (meta[m + 5u] & 1u) != 0u;
  uint bi = gl_WorkGroupID.z, t = gl_LocalInvocationID.x;
  uint lane = t % SG, sg = t / SG;
  uint kb = gl_WorkGroupID.y * KC, ke = min(K, kb + KC);
  uint S = gl_NumWorkGroups.y;
#if defined(ROWS)
  // CG subgroups a row block (sg % CG: the part of B's columns)
  uint r0 = (gl_WorkGroupID.x * (NSG / CG) + sg / CG) * R;
  uint abase = bi * M * K, bbase = bi * K * NB;
  uint half_ = LH == 2u ? lane / (SG / 2u) : 0u;
  uint q0 = ((sg % CG) * LH + half_) * NQP;
  vec4 acc[R * NQP];
  UNROLL for (uint i = 0u; i < R * NQP; i++) acc[i] = vec4(0);
  VT ra[R * U];
#if defined(CT_T) && CT_T > 0
  // B's tile of T sub-tiles (BT rows), see the header
#if CT_PF == 1
  load_a(kb, r0, M, K, ke, abase, whole, lane, ra);
#endif
#if defined(CT_B2) && CT_B2 == 1
  // two tiles: this one's (from off) summed while the next one is staged
  // into the other; the barrier at the end of the round both publishes the
  // next and frees this one
  uint off = 0u;
  stage_b(kb, ke, bbase, t, 0u);
  barrier();
  for (uint k0 = kb; k0 < ke; k0 += BT) {
    if (k0 + BT < ke) stage_b(k0 + BT, ke, bbase, t, BSZ - off);
#else
  const uint off = 0u;
  for (uint k0 = kb; k0 < ke; k0 += BT) {
    barrier(); // the previous tile of B is no longer read
    stage_b(k0, ke, bbase, t, 0u);
    barrier();
#endif
    UNROLL for (uint s = 0u; s < uint(CT_T); s++) {
      uint ks = k0 + s * KT;
#if CT_PF == 1
      VT cur[R * U] = ra;
      load_a(ks + KT, r0, M, K, ke, abase, whole, lane, ra);
#else
      VT cur[R * U];
      load_a(ks, r0, M, K, ke, abase, whole, lane, cur);
#endif
      if (ks < ke) // the last tile's sub-tiles past the chunk add nothing
        UNROLL for (uint u = 0u; u < U; u++) {
          // LH 2: this lane's vectors and its partner's (lane ^ SG / 2, the
          // other half), each half summing its quads for both lanes' k
          UNROLL for (uint w = 0u; w < LH; w++) {
            uint lw = lane ^ (w * (SG / 2u));
            float f[R][V];
            UNROLL for (uint r = 0u; r < R; r++)
              unpack(w == 0u ? cur[r * U + u] : subgroupShuffleXor(cur[r * U + u], SG / 2u), f[r]);
            UNROLL for (uint v = 0u; v < V; v++) {
              uint kl = s * KT + (u * SG + lw) * V + v;
              UNROLL for (uint qq = 0u; qq < NQP; qq++) {
                uint q = q0 + qq;
                // a part's quads past NQ: skipped where the part is the
                // subgroup's (CG), summed and never stored where it is a
                // half's (LH 2: no divergent branch in the products)
                if (LH == 2u || NQ % NP == 0u || q < NQ) {
                  vec4 bv = bs[off + bslot(kl, q)];
                  UNROLL for (uint r = 0u; r < R; r++) acc[r * NQP + qq] = fma(vec4(f[r][v]), bv, acc[r * NQP + qq]);
                }
              }
            }
          }
        }
    }
#if defined(CT_B2) && CT_B2 == 1
    barrier();
    off = BSZ - off;
#endif
  }
#else
#if defined(CT_PF) && CT_PF == 1
  // prefetch (P = 1): the next tile's vectors of A are loaded while this
  // tile's (cur) are summed
  load_a(kb, r0, M, K, ke, abase, whole, lane, ra);
#define CUR cur
#else
#define CUR ra
#endif
  for (uint k0 = kb; k0 < ke; k0 += KT) {
#if defined(CT_PF) && CT_PF == 1
    VT cur[R * U] = ra;
    load_a(k0 + KT, r0, M, K, ke, abase, whole, lane, ra);
#elif defined(CT_NB)
    load_a(k0, r0, M, K, ke, abase, whole, lane, ra);
#else
    // this tile's vectors of A, all in flight before B's tile is stored
    UNROLL for (uint r = 0u; r < R; r++)
      UNROLL for (uint u = 0u; u < U; u++) {
        uint row = r0 + r, k = k0 + (u * SG + lane) * V;
        VT w = VT(0);
        if (row < M && k < ke) {
          uint o = abase + row * K + k;
          if (whole && k + V <= ke) {
            w = a4[o / V];
          } else {
#if defined(DT_f32)
            UNROLL for (uint v = 0u; v < V; v++) w[v] = k + v < ke ? a[o + v] : 0.0;
#else
            UNROLL for (uint v = 0u; v < V; v += 2u) {
              uint lo = k + v < ke ? uint(a[o + v]) : 0u, hi = k + v + 1u < ke ? uint(a[o + v + 1u]) : 0u;
              w[v / 2u] = lo | (hi << 16);
            }
#endif
          }
        }
        ra[r * U + u] = w;
      }
#endif
    if (BD != 0u) {
      UNROLL for (uint u = 0u; u < U; u++) {
        uint k = k0 + (u * SG + lane) * V;
        VT w = VT(0);
        if (k < ke) {
          uint o = bbase + k;
          if (whole && k + V <= ke) {
            w = b4[o / V];
          } else {
#if defined(DT_f32)
            UNROLL for (uint v = 0u; v < V; v++) w[v] = k + v < ke ? b[o + v] : 0.0;
#else
            UNROLL for (uint v = 0u; v < V; v += 2u) {
              uint lo = k + v < ke ? uint(b[o + v]) : 0u, hi = k + v + 1u < ke ? uint(b[o + v + 1u]) : 0u;
              w[v / 2u] = lo | (hi << 16);
            }
#endif
          }
        }
        float fb[V];
        unpack(w, fb);
        UNROLL for (uint r = 0u; r < R; r++) {
          float fa[V];
          unpack(CUR[r * U + u], fa);
          UNROLL for (uint v = 0u; v < V; v += 4u)
            acc[r * NQ] = fma(vec4(fa[v], fa[v + 1u], fa[v + 2u], fa[v + 3u]),
                              vec4(fb[v], fb[v + 1u], fb[v + 2u], fb[v + 3u]), acc[r * NQ]);
        }
      }
      continue;
    }
#if defined(CT_BD) && CT_BD == 2
    // n = 1, the packed tile: B's KT values in shared memory as the 16-byte
    // vectors lane l reads (V values, the layout of A's): shared reads = A's
    // bytes / R, no per-value stores
    barrier();
    for (uint e = t; e < U * SG; e += NWG) {
      uint k = k0 + e * V;
      VT w = VT(0);
      if (k < ke) {
        uint o = bbase + k;
        if (whole && k + V <= ke) {
          w = b4[o / V];
        } else {
#if defined(DT_f32)
          UNROLL for (uint v = 0u; v < V; v++) w[v] = k + v < ke ? b[o + v] : 0.0;
#else
          UNROLL for (uint v = 0u; v < V; v += 2u) {
            uint lo = k + v < ke ? uint(b[o + v]) : 0u, hi = k + v + 1u < ke ? uint(b[o + v + 1u]) : 0u;
            w[v / 2u] = lo | (hi << 16);
          }
#endif
        }
      }
      bsp[e] = w;
    }
    barrier();
    UNROLL for (uint u = 0u; u < U; u++) {
      float fb[V];
      unpack(bsp[u * SG + lane], fb);
      UNROLL for (uint r = 0u; r < R; r++) {
        float fa[V];
        unpack(CUR[r * U + u], fa);
        UNROLL for (uint v = 0u; v < V; v += 4u)
          acc[r * NQ] = fma(vec4(fa[v], fa[v + 1u], fa[v + 2u], fa[v + 3u]),
                            vec4(fb[v], fb[v + 1u], fb[v + 2u], fb[v + 3u]), acc[r * NQ]);
      }
    }
#else
    barrier(); // the previous tile of B is no longer read
#if defined(CT_NB)
    if (NB % V == 0u) {
      // B's rows in 16-byte vectors (V columns), lane-major: invocation e
      // takes slot l = e % SG's row kl = (i SG + l) V + v, vector jv, and
      // stores its V values as vec4s to consecutive slots (no bank conflicts)
      for (uint e = t; e < KT * NB / V; e += NWG) {
        uint l = e % SG, rest = e / SG, jv = rest % (NB / V), iv = rest / (NB / V);
        uint i = iv / V, v = iv - i * V, kl = (i * SG + l) * V + v;
        VT w = k0 + kl < ke ? b4[(bbase + (k0 + kl) * NB) / V + jv] : VT(0);
        float f[V];
        unpack(w, f);
        UNROLL for (uint h = 0u; h < V; h += 4u)
          bs[((i * V + v) * NQ + (jv * V + h) / 4u) * SG + l] = vec4(f[h], f[h + 1u], f[h + 2u], f[h + 3u]);
      }
    } else
#endif
    // B's rows k0 .. k0 + KT (contiguous): element (kl, j) to lane (kl / V) % SG's slot
    for (uint e = t; e < KT * NB; e += NWG) {
      uint kl = e / NB, j = e - kl * NB;
      uint i = kl / (SG * V), rem = kl - i * SG * V, l = rem / V, v = rem - l * V;
      float x = k0 + kl < ke ? LD(b[bbase + (k0 + kl) * NB + j]) : 0.0;
      bs[((i * V + v) * NQ + j / 4u) * SG + l][j % 4u] = x;
    }
    barrier();
    UNROLL for (uint u = 0u; u < U; u++) {
      float f[R][V];
      UNROLL for (uint r = 0u; r < R; r++) unpack(CUR[r * U + u], f[r]);
      UNROLL for (uint v = 0u; v < V; v++)
        UNROLL for (uint q = 0u; q < NQ; q++) {
          vec4 bv = bs[((u * V + v) * NQ + q) * SG + lane];
          UNROLL for (uint r = 0u; r < R; r++) acc[r * NQ + q] = fma(vec4(f[r][v]), bv, acc[r * NQ + q]);
        }
    }
#endif
  }
#endif // CT_T
  UNROLL for (uint r = 0u; r < R; r++) {
    uint row = r0 + r;
    if (BD != 0u) { // the vec4's four sums, then the lanes'
      vec4 s = lanes_sum(acc[r * NQ]);
      float x = (s.x + s.y) + (s.z + s.w);
      if (lane == 0u && row < M) {
        if (PART != 0u) cp[(bi * S + gl_WorkGroupID.y) * M + row] = x;
        else c[bi * M + row] = CST(x);
      }
      continue;
    }
    UNROLL for (uint qq = 0u; qq < NQP; qq++) {
      uint q = q0 + qq;
      vec4 s = lanes_sum(acc[r * NQP + qq]);
      if (lane % (SG / LH) == 0u && row < M && q < NQ)
        UNROLL for (uint j = 0u; j < 4u; j++) {
          uint col = q * 4u + j;
          if (col < NB) {
            if (PART != 0u) cp[((bi * S + gl_WorkGroupID.y) * M + row) * NB + col] = s[j];
            else c[(bi * M + row) * NB + col] = CST(s[j]);
          }
        }
    }
  }
#else
  // COLS: NB = M rows of A; lane's columns col .. col + V - 1
  uint col = (gl_WorkGroupID.x * SG + lane) * V;
  uint abase = bi * NB * K, bbase = bi * K * N;
  vec4 acc[V * NQ];
  UNROLL for (uint i = 0u; i < V * NQ; i++) acc[i] = vec4(0);
  for (uint k0 = kb; k0 < ke; k0 += KA) {
    barrier(); // the previous tile of A is no longer read
    for (uint e = t; e < KA * NB; e += NWG) {
      uint i = e / KA, kk = e - i * KA;
      float x = k0 + kk < ke ? LD(a[abase + i * K + k0 + kk]) : 0.0;
      sh[kk * NQ + i / 4u][i % 4u] = x;
    }
    barrier();
    // rounds of U rows of B a subgroup: rows k0 + (p NSG + sg) U + u
    UNROLL for (uint p = 0u; p < 4u; p++) {
      VT rb[U];
      uint kr = (p * NSG + sg) * U;
      UNROLL for (uint u = 0u; u < U; u++) {
        uint k = k0 + kr + u;
        VT w = VT(0);
        if (k < ke && col < N) {
          uint o = bbase + k * N + col;
          if (whole && col + V <= N) {
            w = b4[o / V];
          } else {
#if defined(DT_f32)
            UNROLL for (uint v = 0u; v < V; v++) w[v] = col + v < N ? b[o + v] : 0.0;
#else
            UNROLL for (uint v = 0u; v < V; v += 2u) {
              uint lo = col + v < N ? uint(b[o + v]) : 0u, hi = col + v + 1u < N ? uint(b[o + v + 1u]) : 0u;
              w[v / 2u] = lo | (hi << 16);
            }
#endif
          }
        }
        rb[u] = w;
      }
      UNROLL for (uint u = 0u; u < U; u++) {
        float f[V];
        unpack(rb[u], f);
        UNROLL for (uint q = 0u; q < NQ; q++) {
          vec4 av = sh[(kr + u) * NQ + q];
          UNROLL for (uint v = 0u; v < V; v++) acc[v * NQ + q] = fma(av, vec4(f[v]), acc[v * NQ + q]);
        }
      }
    }
  }
  // the subgroups' sums, one column of the V a round, in subgroup order
  UNROLL for (uint v = 0u; v < V; v++) {
    barrier();
    UNROLL for (uint q = 0u; q < NQ; q++) sh[(sg * NQ + q) * SG + lane] = acc[v * NQ + q];
    barrier();
    for (uint e = t; e < NQ * SG; e += NWG) {
      uint q = e / SG, l = e - q * SG;
      vec4 s = sh[q * SG + l];
      for (uint g = 1u; g < NSG; g++) s += sh[(g * NQ + q) * SG + l];
      uint cc = (gl_WorkGroupID.x * SG + l) * V + v;
      if (cc < N)
        UNROLL for (uint j = 0u; j < 4u; j++) {
          uint i = q * 4u + j;
          if (i < NB) {
            if (PART != 0u) cp[((bi * S + gl_WorkGroupID.y) * NB + i) * N + cc] = s[j];
            else c[(bi * NB + i) * N + cc] = CST(s[j]);
          }
        }
    }
  }
#endif
}
#endif
