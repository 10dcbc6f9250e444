#version 450
// conv_coopmat.comp - 2-D f16 conv as an implicit GEMM on tensor cores
// (GL_NV_cooperative_matrix): C[m][o] = sum_k A[m][k] B[k][o], m an output
// pixel (n, y0, y1), k = (kernel position, input channel), channels inner,
// as conv_gemm.comp.  A is gathered from the f16 input on the fly (no
// im2col buffer); B is the kernel packed once as f16 [Kp][OP]
// (conv_wpack.comp -DHALF: Kp = K rounded up to BK, OP = O rounded up to
// BN, zeros past K and O, and a flag word after it, nonzero when a weight
// is infinite or NaN).  Products and sums in f32 (the tensor cores' f32
// accumulation); each f32 sum is rounded once to f16 on its bits
// (nx_f16_bits: ties to even, subnormals kept), as conv_gemm's f32 sums are
// rounded by the copy that follows it.
//
// WM x WN subgroups of 32 (the host requires subgroups of 32) own a BM x BN
// block of C, BM = WM FR FM pixels, BN = WN FC FN channels; each owns FR x
// FC accumulators fcoopmatNV<32, subgroup, FM, FN> and multiplies FM x FK
// by FK x FN f16 fragments from shared memory (FM x FN x FK: one of the
// device's f16 x f16 + f32 configurations; the host picks).  K is walked in
// steps of BK with two shared stages and one barrier a step; the next
// step's loads are held in registers meanwhile (dot_coopmat.comp's loop).
//
// A's stage is k-major, [BK][BM + 8 halves]: in NCHW a k row of the block is
// BM consecutive pixels of one channel at one kernel position, so a warp's
// loads are contiguous; the fragments are loaded column-major (pixels
// contiguous).  An invocation owns one pixel pair (t % (BM/2)) and loads
// BK / KSTEP of its k rows (two f16 loads, one 32-bit shared store each).
// With I % BK == 0 a step's k rows share one kernel position: one bounds
// test per pixel and step.  B's stage is [BK][BN + 8 halves], 16-byte loads.
//
// Every output is written here, the border too: a padded position loads 0,
// and 0 * w equals conv's skipped term unless w is infinite or NaN; when the
// pack saw such a weight, the border outputs are recomputed directly at the
// end, skipping the padding (conv's semantics).
//
// Output: each accumulator goes through a per-subgroup FM x FN f32 scratch
// (the stage memory, free by then), column-major, so that lanes write
// consecutive pixels of one channel.
//
// CM_EMU: the same data flow with the fragment loads, products and stores
// done by plain code (each 32 invocations play a subgroup, whatever the
// device's subgroups): lavapipe has no cooperative matrices, and this lets
// it check the gather, the stages, the stores and the border recompute.
//
// For one feature and batch group and no input dilation (conv.c picks it);
// any strides, padding, kernel dilation and permutation (the strides are the
// buffers').  Grid: (ceil(M / BM), ceil(O / BN)).
// Defines: WM WN FR FC BK FM FN FK (conv.c checks NT % (BM/2) == 0, BK a
// multiple of FK and of KSTEP, B's stage split evenly, 32 % FM == 0).
// meta: [0] M (NB Y0 Y1) [1] O [2] K (I K0 K1) [3] Y0 [4] Y1 [5] K0 [6] K1
// [7] X0 [8] X1 [9] s0 [10] s1 [11] kdil0 [12] kdil1 [13] lo0 [14] lo1
// (ints) [15] input batch stride [16] input channel stride [17] [18] input
// spatial strides [19] I [20] OP [21] Kp [22] the flag's word in B
// [23] output batch stride [24] output channel stride [25] [26] output
// spatial strides
#ifndef CM_EMU
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#endif
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_GOOGLE_include_directive : require
#include "f16.glsl"

// f32 bits -> f16 bits, rounded once: by the driver's conversion where the
// device promises round to nearest even (NX_F16_HW: NXVK_F16_CVT's hw form;
// dot_coopmat.comp's epilogue, whose software form made its code 2.3x
// larger), else nx_f16_bits
uint f16_of(uint bits) {
#ifdef NX_F16_HW
  return nx_f32x2_to_f16(uintBitsToFloat(bits), 0.0) & 0xffffu;
#else
  return nx_f16_bits(bits);
#endif
}

#ifndef WM
#define WM 4u
#define WN 2u
#define FR 2u
#define FC 2u
#define BK 32u
#endif
#ifndef FM
#define FM 16u
#define FN 16u
#define FK 16u
#endif
#define NT (WM * WN * 32u)
#define BM (WM * FR * FM)
#define BN (WN * FC * FN)
#define PAIRS (BM / 2u)              // pixel pairs of a k row
#define KSTEP (NT / PAIRS)           // k rows apart of one invocation's A loads
#define A_LOADS (BK / KSTEP)         // 32-bit words (two pixels) an invocation loads a step
#define AV (BM / 8u + 1u)            // uvec4 per k row of an A stage: BM halves + 8 of padding
#define BV (BN / 8u + 1u)            // uvec4 per k row of a B stage
#define A_STAGE (BK * AV)
#define B_STAGE (BK * BV)
#define B0 (2u * A_STAGE)            // where the B stages start
#define B_LOADS (BK * BN / 8u / NT)  // uvec4 an invocation loads a step
#define SV (FM * FN / 4u)            // uvec4 of one subgroup's f32 scratch
#define FE (FM * FN / 32u)           // elements of a fragment a lane holds
#define SM_SIZE (2u * (A_STAGE + B_STAGE))

layout(local_size_x = NT) in;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) readonly buffer In { uint16_t x[]; };        // f16 bits
layout(std430, binding = 2) readonly buffer Ker { uvec4 bv[]; };         // packed f16, 8 per uvec4
layout(std430, binding = 2) readonly buffer KerW { uint bw[]; };
layout(std430, binding = 2) readonly buffer KerH { uint16_t bh[]; };
layout(std430, binding = 3) writeonly buffer Out { uint16_t y[]; };      // f16 bits

shared uvec4 sm[SM_SIZE > WM * WN * SV ? SM_SIZE : WM * WN * SV];

uint M, O, K, I, K1, OP;
int X0, X1, kd0, kd1, ic, is0, is1;
uint t, kfirst, o0;
// this invocation's two A pixels: base offsets, first window row and column
int pbase0, pbase1, pq00, pq01, pq10, pq11;
bool pok0, pok1;

uint ra[A_LOADS];
uvec4 rb[B_LOADS];

uint xload(bool ok, int off) { return ok ? uint(x[off]) : 0u; }

void load_a(uint k0) {
  if (I % BK == 0u) {
    // one kernel position for the whole step
    uint pos = k0 / I, c0 = k0 - pos * I, a = pos / K1, b = pos - a * K1;
    int r0 = pq00 + int(a) * kd0, c0_ = pq01 + int(b) * kd1;
    int r1 = pq10 + int(a) * kd0, c1_ = pq11 + int(b) * kd1;
    bool ok0 = pok0 && r0 >= 0 && r0 < X0 && c0_ >= 0 && c0_ < X1;
    bool ok1 = pok1 && r1 >= 0 && r1 < X0 && c1_ >= 0 && c1_ < X1;
    int ch = int(c0 + kfirst) * ic;
    int base0 = pbase0 + r0 * is0 + c0_ * is1 + ch, base1 = pbase1 + r1 * is0 + c1_ * is1 + ch;
    [[unroll]] for (uint l = 0u; l < A_LOADS; l++) {
      int d = int(l * KSTEP) * ic;
      ra[l] = xload(ok0, base0 + d) | (xload(ok1, base1 + d) << 16);
    }
  } else {
    [[unroll]] for (uint l = 0u; l < A_LOADS; l++) {
      uint k = k0 + kfirst + l * KSTEP, pos = k / I, c = k - pos * I, a = pos / K1, b = pos - a * K1;
      int r0 = pq00 + int(a) * kd0, c0_ = pq01 + int(b) * kd1;
      int r1 = pq10 + int(a) * kd0, c1_ = pq11 + int(b) * kd1;
      bool ok0 = k < K && pok0 && r0 >= 0 && r0 < X0 && c0_ >= 0 && c0_ < X1;
      bool ok1 = k < K && pok1 && r1 >= 0 && r1 < X0 && c1_ >= 0 && c1_ < X1;
      int ch = int(c) * ic;
      ra[l] = xload(ok0, pbase0 + r0 * is0 + c0_ * is1 + ch) | (xload(ok1, pbase1 + r1 * is0 + c1_ * is1 + ch) << 16);
    }
  }
}

// B: whole rows of the packed kernel, no bounds checks (Kp x OP is whole tiles)
void load_b(uint k0) {
  [[unroll]] for (uint i = 0u; i < B_LOADS; i++) {
    uint p = t + i * NT, kk = p / (BN / 8u), q = p % (BN / 8u);
    rb[i] = bv[((k0 + kk) * OP + o0) / 8u + q];
  }
}

void store_stage(uint st) {
  uint pr = t % PAIRS;
  [[unroll]] for (uint l = 0u; l < A_LOADS; l++)
    sm[st * A_STAGE + (kfirst + l * KSTEP) * AV + pr / 4u][pr % 4u] = ra[l];
  [[unroll]] for (uint i = 0u; i < B_LOADS; i++) {
    uint p = t + i * NT;
    sm[B0 + st * B_STAGE + (p / (BN / 8u)) * BV + p % (BN / 8u)] = rb[i];
  }
}

#ifdef CM_EMU
// one f16 of a stage, as f32; h counts halves from the start of sm
float sm_half(uint h) { return nx_f16_to_f32((sm[h / 8u][(h % 8u) / 2u] >> (16u * (h % 2u))) & 0xffffu); }

// acc += A x B with A at uvec4 aoff (column-major, stride as) and B at boff
// (row-major, stride bs); this lane's elements e = lane + 32 h: row e / FN,
// column e % FN
void emu_mad(inout float acc[FE], uint aoff, uint as, uint boff, uint bs, uint lane) {
  [[dont_unroll]] for (uint h = 0u; h < FE; h++) {
    uint e = lane + 32u * h, r = e / FN, c = e % FN;
    float s = acc[h];
    [[dont_unroll]] for (uint k = 0u; k < FK; k++) s = fma(sm_half(aoff * 8u + k * as * 8u + r), sm_half(boff * 8u + k * bs * 8u + c), s);
    acc[h] = s;
  }
}
#endif

void main() {
  uint mo = pc.meta_off;
  M = meta[mo];
  O = meta[mo + 1u];
  K = meta[mo + 2u];
  uint Y0 = meta[mo + 3u], Y1 = meta[mo + 4u], K0 = meta[mo + 5u];
  K1 = meta[mo + 6u];
  X0 = int(meta[mo + 7u]);
  X1 = int(meta[mo + 8u]);
  int s0 = int(meta[mo + 9u]), s1 = int(meta[mo + 10u]);
  kd0 = int(meta[mo + 11u]);
  kd1 = int(meta[mo + 12u]);
  int lo0 = int(meta[mo + 13u]), lo1 = int(meta[mo + 14u]);
  int ib = int(meta[mo + 15u]);
  ic = int(meta[mo + 16u]);
  is0 = int(meta[mo + 17u]);
  is1 = int(meta[mo + 18u]);
  I = meta[mo + 19u];
  OP = meta[mo + 20u];
  uint Kp = meta[mo + 21u];
  bool fix = bw[meta[mo + 22u]] != 0u;
  uint ob = meta[mo + 23u], oc = meta[mo + 24u], os0 = meta[mo + 25u], os1 = meta[mo + 26u];
  uint YY = Y0 * Y1;
  t = gl_LocalInvocationID.x;
#ifdef CM_EMU
  uint sg = t / 32u, lane = t % 32u;
#else
  uint sg = gl_SubgroupID, lane = gl_SubgroupInvocationID;
#endif
  uint wr = sg / WN, wc = sg % WN;
  uint m0 = gl_WorkGroupID.x * BM;
  o0 = gl_WorkGroupID.y * BN;

  // this invocation's A pixels (a pair) and first k row
  kfirst = t / PAIRS;
  {
    uint pm = m0 + 2u * (t % PAIRS);
    pok0 = pm < M;
    pok1 = pm + 1u < M;
    uint n = pm / YY, r = pm - n * YY, a0 = r / Y1, a1 = r - a0 * Y1;
    pq00 = int(a0) * s0 - lo0;
    pq01 = int(a1) * s1 - lo1;
    pbase0 = int(n) * ib;
    pm++;
    n = pm / YY, r = pm - n * YY, a0 = r / Y1, a1 = r - a0 * Y1;
    pq10 = int(a0) * s0 - lo0;
    pq11 = int(a1) * s1 - lo1;
    pbase1 = int(n) * ib;
  }

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

  uint steps = Kp / BK;
  load_a(0u);
  load_b(0u);
  store_stage(0u);
  barrier();
  for (uint s = 0u; s < steps; s++) {
    uint st = s & 1u;
    bool more = s + 1u < steps;
    if (more) {
      load_a((s + 1u) * BK);
      load_b((s + 1u) * BK);
    }
    [[unroll]] for (uint kk = 0u; kk < BK; kk += FK) {
#ifdef CM_EMU
      [[dont_unroll]] for (uint i = 0u; i < FR; i++)
        [[dont_unroll]] for (uint j = 0u; j < FC; j++)
          emu_mad(acc[i][j], st * A_STAGE + kk * AV + (wr * FR * FM + i * FM) / 8u, AV,
                  B0 + st * B_STAGE + kk * BV + (wc * FC * FN + j * FN) / 8u, BV, lane);
#else
      fcoopmatNV<16, gl_ScopeSubgroup, FM, FK> fa[FR];
      [[unroll]] for (uint i = 0u; i < FR; i++)
        coopMatLoadNV(fa[i], sm, st * A_STAGE + kk * AV + (wr * FR * FM + i * FM) / 8u, AV, true);
      [[unroll]] for (uint j = 0u; j < FC; j++) {
        fcoopmatNV<16, gl_ScopeSubgroup, FK, FN> fb;
        coopMatLoadNV(fb, sm, B0 + st * B_STAGE + kk * BV + (wc * FC * FN + j * FN) / 8u, BV, false);
        [[unroll]] for (uint i = 0u; i < FR; i++) acc[i][j] = coopMatMulAddNV(fa[i], fb, acc[i][j]);
      }
#endif
    }
    if (more) store_stage(st ^ 1u);
    barrier();
  }

  // accumulators -> the output: through this subgroup's scratch (FN columns
  // of FM f32, column-major), each lane one pixel (32 % FM == 0) and
  // channels FM * h / 32 apart; every subgroup runs the same loops (the
  // emulation's barriers are the workgroup's)
  int span0 = (int(K0) - 1) * kd0, span1 = (int(K1) - 1) * kd1;
  uint pi = lane % FM, cl = lane / FM;
  [[unroll]] for (uint i = 0u; i < FR; i++) {
    uint m = m0 + wr * FR * FM + i * FM + pi;
    uint n = m / YY, r = m - n * YY, a0 = r / Y1, a1 = r - a0 * Y1;
    int p0 = int(a0) * s0 - lo0, p1 = int(a1) * s1 - lo1;
    bool border = p0 < 0 || p1 < 0 || p0 + span0 >= X0 || p1 + span1 >= X1;
    bool mine = m < M && !(fix && border);
    uint base = n * ob + a0 * os0 + a1 * os1;
    [[unroll]] for (uint j = 0u; j < FC; j++) {
#ifdef CM_EMU
      [[unroll]] for (uint h = 0u; h < FE; h++) {
        uint e = lane + 32u * h, er = e / FN, ec = e % FN, f = ec * FM + er;
        sm[sg * SV + f / 4u][f % 4u] = floatBitsToUint(acc[i][j][h]);
      }
      memoryBarrierShared();
      barrier();
#else
      coopMatStoreNV(acc[i][j], sm, sg * SV, FM / 4u, true);
      subgroupMemoryBarrierShared();
      subgroupBarrier();
#endif
      uint c0 = o0 + wc * FC * FN + j * FN;
      [[unroll]] for (uint h = 0u; h < FE; h++) {
        uint ch = cl + h * (32u / FM), o = c0 + ch, f = ch * FM + pi;
        if (mine && o < O) y[base + o * oc] = uint16_t(f16_of(sm[sg * SV + f / 4u][f % 4u]));
      }
#ifdef CM_EMU
      barrier();
#else
      subgroupMemoryBarrierShared();
      subgroupBarrier();
#endif
    }
  }
  if (!fix) return;
  // conv's semantics at the border where a weight is infinite or NaN: the
  // padded positions skipped, not 0 * w; the sums in f32 from the f16 terms
  for (uint i = 0u; i < FR; i++) {
    uint m = m0 + wr * FR * FM + i * FM + pi;
    if (m >= M) continue;
    uint n = m / YY, r = m - n * YY, a0 = r / Y1, a1 = r - a0 * Y1;
    int p0 = int(a0) * s0 - lo0, p1 = int(a1) * s1 - lo1;
    if (!(p0 < 0 || p1 < 0 || p0 + span0 >= X0 || p1 + span1 >= X1)) continue;
    uint base = n * ob + a0 * os0 + a1 * os1;
    for (uint j = 0u; j < FC; j++)
      for (uint h = 0u; h < FE; h++) {
        uint o = o0 + wc * FC * FN + j * FN + cl + h * (32u / FM);
        if (o >= O) continue;
        float v = 0.0;
        for (uint pos = 0u; pos < K0 * K1; pos++) {
          uint a = pos / K1, b = pos - a * K1;
          int q0 = p0 + int(a) * kd0, q1 = p1 + int(b) * kd1;
          if (q0 < 0 || q0 >= X0 || q1 < 0 || q1 >= X1) continue;
          int xb = int(n) * ib + q0 * is0 + q1 * is1;
          for (uint c = 0u; c < I; c++)
            v = fma(nx_f16_to_f32(uint(x[xb + int(c) * ic])), nx_f16_to_f32(uint(bh[(pos * I + c) * OP + o])), v);
        }
        y[base + o * oc] = uint16_t(nx_f16_bits(floatBitsToUint(v)));
      }
  }
}
