#version 450
// dot_mvb.comp - f32 skinny products C = A x B with N <= 16 columns (A M x K
// row-major and large, B K x N small) with B held in registers: each lane
// keeps its part of B for a whole segment of k and A's rows stream past it,
// so no shared reads of B and no barriers in the loop.  Compiled at run time
// (src/ops/rtkernel.c: dot_mvb_n<NB>g<CG>r<RB>u<RU>w<WG>s<SG>_f32); src/ops/dot_mvb.c
// picks the layout (bench/NOTES.md, "f32 n = 9..16: B in registers").
//
// dot_mv.comp's rows form reads NB / 4 vec4 of B from shared memory for
// every 4 k of A it sums (R rows a lane share them), which at n = 16 keeps
// the loop on the shared-memory pipe and the sums (R x NB a lane) on
// registers.  Here the subgroup's lanes form CG column groups of LK = SG /
// CG lanes; group g owns columns [g NC, g NC + NC) (NC = 16 / CG) and lane
// kl of it the k values (j LK + kl) 4 + e (j < CG, e < 4) of a segment of
// SEG = 4 SG k (128): 64 values of B a lane, loaded once a segment.  A row's CG
// vec4 a lane are one contiguous 16 x LK-byte load a j (the groups read
// the same addresses).  A lane's NC sums of a row (4 CG NC = 64 FMAs) meet
// the group's others by a transposing xor tree: each step halves the values
// a lane keeps (B's columns are loaded permuted by lane, so the lower half
// of its registers holds the columns its mask's bit picks: it keeps them and
// sends the upper half) while it keeps two or more, then plain steps; with SG = 32,
// log2 NC steps and one plain one, NC shuffles a row in all, after which
// lane kl holds column kl / 2 of its group's (twice: kl and kl ^ 1).
//
// A workgroup of WG invocations (NSG subgroups) owns RB rows and a chunk of
// k; subgroup s takes the chunk's segments s, s + NSG, ...; for each it
// loads its B and runs the RB rows, RU a step with the next step's rows'
// loads issued before this step's products, and adds each row's result to
// its own shared slots [s][row][NB] (one lane a slot: no barrier).  At the
// end the subgroups' slots are summed in subgroup order.
// Split K (S = gy > 1): chunk y covers [y KC, (y + 1) KC), KC a multiple of
// NSG SEG; its f32 partials go to [batch][S][M][N], summed in chunk order by
// the row block's last workgroup (mvfold.glsl, FOLD) or dot_ksum_f32.
// Grid: (ceil(M / RB), S, batch).
// meta: [0] M [1] N [2] K [3] batch [4] KC; K % 4 == 0 (whole vec4 rows).
// Specialization: 1 partials, 2 FOLD.
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_control_flow_attributes : require

const uint NB = CT_NB;
const uint CG = CT_CG;   // column groups a subgroup: 1, 2 or 4
const uint RB = CT_RB;   // rows a workgroup
const uint RU = CT_RU;   // rows a step
const uint WG = CT_WG;
const uint SG = CT_SG;          // the device's subgroup size, 4 to 128
const uint NC = 16u / CG;       // columns a group
const uint LK = SG / CG;        // lanes a group
const uint SEG = LK * 4u * CG;  // k a segment (4 SG)
const uint NSG = WG / SG;
// the tree (TREE_STEP): W values a lane keeps at its end, PLAIN lanes
// holding the same ones, LOGLK steps
const uint W = NC > LK ? NC / LK : 1u;
const uint PLAIN = LK > NC ? LK / NC : 1u;
const uint LOGLK = LK >= 128u ? 7u : LK >= 64u ? 6u : LK >= 32u ? 5u : LK >= 16u ? 4u : LK >= 8u ? 3u : LK >= 4u ? 2u : LK >= 2u ? 1u : 0u;
layout(local_size_x = CT_WG) in;
layout(constant_id = 1) const uint PART = 0u;
layout(constant_id = 2) const uint FOLD = 0u;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) readonly buffer A4 { vec4 a4[]; };
layout(std430, binding = 2) readonly buffer B { float b[]; };
layout(std430, binding = 3) writeonly buffer C { float c[]; };
// the split form's partials (the same binding); coherent: read back by the fold
layout(std430, binding = 3) coherent buffer Cp { float cp[]; };
layout(std430, binding = 3) coherent buffer Cp4 { vec4 cp4[]; };
layout(std430, binding = 4) writeonly buffer Cf { float cf[]; };
layout(std430, binding = 5) coherent buffer Count { uint count[]; };
#define CST(x) (x)
#include "mvfold.glsl"

shared float red[NSG * RB * NB];

// Step ST of the tree, mask LK >> (ST + 1): while the mask is at least PLAIN
// it halves the lane's values (NC >> ST of them), then plain sums.  B's
// columns were loaded permuted (the lane's value i is column i ^ P, P = kl /
// PLAIN x W), which makes every step's choice once a segment: the lane
// keeps its lower half and sends the upper, where choosing by the mask's bit
// took two selects a shuffle (H100, 8192x8192x16: 2 127 GB/s with the
// selects, 2 333 without, CG 2 RB 32).  The mask is a literal constant in
// each step: with the mask a loop variable (even one a literal-count loop
// unrolls) NVIDIA's shuffles ran ~9x slower (193 GB/s, and 1 683 with the
// tree left out; 1 662 with these steps, CG 2 RB 64).
#define TREE_STEP(ST) \
  if (LOGLK > ST) { \
    const uint mk = LK >> (ST + 1u), w = NC >> (ST + 1u); \
    if (mk >= PLAIN) \
      [[unroll]] for (uint i = 0u; i < w; i++) v[i] += subgroupShuffleXor(v[w + i], mk); \
    else \
      v[0] += subgroupShuffleXor(v[0], mk); \
  }

void main() {
  uint m = pc.meta_off;
  uint M = meta[m], N = meta[m + 1u], K = meta[m + 2u], KC = meta[m + 4u];
  uint bi = gl_WorkGroupID.z, t = gl_LocalInvocationID.x;
  uint lane = gl_SubgroupInvocationID, s = gl_SubgroupID;
  uint g = lane / LK, kl = lane % LK;
  uint kb = gl_WorkGroupID.y * KC, ke = min(K, kb + KC);
  uint r0 = gl_WorkGroupID.x * RB, nr = min(RB, M - r0);
  uint K4 = K / 4u, abase = (bi * M + r0) * K4, bbase = bi * K * N;
  // after the tree the lane holds W columns from col (P: the halves it
  // kept); the PLAIN lanes that differ in the plain steps' masks hold the
  // same: the first owns them
  uint perm = kl / PLAIN * W, col = g * NC + perm;
  bool owner = kl % PLAIN == 0u;
  uint slot = (s * RB) * NB + col;
  bool first = true;
  for (uint k0 = kb + s * SEG; k0 < ke; k0 += NSG * SEG) {
    // B's part for this segment: rows (j LK + kl) 4 + e, columns g NC + c
    float bv[CG * 4u * NC];
    [[unroll]] for (uint j = 0u; j < CG; j++)
      [[unroll]] for (uint e = 0u; e < 4u; e++) {
        uint k = k0 + (j * LK + kl) * 4u + e;
        // column cc ^ P at register cc (the tree's choices)
        [[unroll]] for (uint cc = 0u; cc < NC; cc++) {
          uint cn = g * NC + (cc ^ perm);
          bv[(j * 4u + e) * NC + cc] = k < ke && cn < N ? b[bbase + k * N + cn] : 0.0;
        }
      }
    // the lane's vec4 of A in this segment: a4[row K4 + kv[j]] where inside
    uint kv[CG];
    bool in_k[CG];
    [[unroll]] for (uint j = 0u; j < CG; j++) {
      uint k = k0 + (j * LK + kl) * 4u;
      in_k[j] = k < ke;
      kv[j] = k / 4u;
    }
    vec4 nxt[RU][CG];
    [[unroll]] for (uint u = 0u; u < RU; u++)
      [[unroll]] for (uint j = 0u; j < CG; j++)
        nxt[u][j] = u < nr && in_k[j] ? a4[abase + u * K4 + kv[j]] : vec4(0.0);
    for (uint r = 0u; r < nr; r += RU) {
      vec4 cur[RU][CG] = nxt;
      [[unroll]] for (uint u = 0u; u < RU; u++)
        [[unroll]] for (uint j = 0u; j < CG; j++) {
          uint rr = r + RU + u;
          nxt[u][j] = rr < nr && in_k[j] ? a4[abase + rr * K4 + kv[j]] : vec4(0.0);
        }
      [[unroll]] for (uint u = 0u; u < RU; u++) {
        float v[NC];
        [[unroll]] for (uint cc = 0u; cc < NC; cc++) v[cc] = 0.0;
        [[unroll]] for (uint j = 0u; j < CG; j++)
          [[unroll]] for (uint e = 0u; e < 4u; e++)
            [[unroll]] for (uint cc = 0u; cc < NC; cc++)
              v[cc] = fma(cur[u][j][e], bv[(j * 4u + e) * NC + cc], v[cc]);
        // the transposing tree over masks LK / 2, ..., 1 (TREE_STEP)
        TREE_STEP(0u) TREE_STEP(1u) TREE_STEP(2u) TREE_STEP(3u) TREE_STEP(4u) TREE_STEP(5u) TREE_STEP(6u)
        if (owner && r + u < nr)
          [[unroll]] for (uint i = 0u; i < W; i++)
            if (col + i < N) {
              uint at = slot + (r + u) * NB + i;
              red[at] = first ? v[i] : red[at] + v[i];
            }
      }
    }
    first = false;
  }
  // subgroups whose chunk has no segment of theirs left their slots unwritten
  if (first)
    for (uint e = lane; e < RB * NB; e += SG) red[s * RB * NB + e] = 0.0;
  barrier();
  uint S = gl_NumWorkGroups.y;
  for (uint e = t; e < nr * N; e += WG) {
    uint rr = e / N, cn = e - rr * N;
    float acc = red[rr * NB + cn];
    for (uint q = 1u; q < NSG; q++) acc += red[(q * RB + rr) * NB + cn];
    uint row = r0 + rr;
    if (PART != 0u) cp[((bi * S + gl_WorkGroupID.y) * M + row) * N + cn] = acc;
    else c[(bi * M + row) * N + cn] = acc;
  }
  if (FOLD != 0u && PART != 0u) mv_fold(bi, S, M, N, r0, r0 + nr, 0u, N, t, WG);
}
