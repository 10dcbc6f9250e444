#version 450
// conv_gemm.comp - 2-D f32 conv as an implicit GEMM, dot_vec.comp's
// structure: C[m][o] = sum_k A[m][k] B[k][o] with m an output pixel
// (n, y0, y1), k = (kernel position, input channel) (channels inner) and A
// gathered from the input on the fly (no im2col buffer).  B is the kernel
// packed once as [K][OP] (conv_wpack.comp: OP = O rounded up to 4, zeros
// past O), so its tile loads are vec4 rows.
//
// NT invocations on a grid of TX columns x NT/TX rows own a BM x BN block,
// BM = (NT/TX) 4 RB pixels and BN = TX 4 CB output channels, and walk K in
// steps of BK with two shared stages (one barrier a step) and the next
// step's loads held in registers meanwhile, as dot_vec.  Each invocation
// sums RB x CB blocks of 4 x 4.  A's tile is loaded pixel-major: an
// invocation owns one pixel of the block (t % BM) and loads BK / (NT/BM)
// of its k rows; in NCHW a k row of the tile is BM consecutive pixels of
// one channel, so a warp's loads are contiguous, and with I % BK == 0 a
// step's k rows share one kernel position (one bounds test per step).
// Specialization constants: [0] NT (workgroup size) [1] TX [2] RB [3] CB
// [4] BK, with TX % (4 RB) == 0 (NT a multiple of BM) and BK a multiple of
// NT / BM (conv.c checks them).
//
// Every output is written here, the border too: a padded position loads 0,
// and 0 * w equals conv's skipped term unless w is infinite or NaN.  A
// workgroup that loaded a non-finite weight recomputes its border outputs
// directly at the end, skipping the padding (conv's semantics).
//
// For one feature and batch group and no input dilation (conv.c picks it);
// any strides, padding, kernel dilation and permutation (the strides are
// the buffers').  Grid: (ceil(M / BM), ceil(O / BN)).
//
// meta: [0] M (NB * Y0 * Y1) [1] O [2] K (I * K0 * K1) [3] Y0 [4] Y1 [5] K0
// [6] K1 [7] X0 [8] X1 [9] s0 [10] s1 [11] kdil0 [12] kdil1 [13] lo0 [14]
// lo1 (ints) [15] input batch stride [16] input channel stride [17] [18]
// input spatial strides [19] I [20] OP [21] vector stores (1: the output is
// [.., Y0, Y1] contiguous with Y0 Y1, batch and channel strides multiples
// of 4) [23] output batch stride [24] output channel stride [25] [26]
// output spatial strides
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint TX = 8u;
layout(constant_id = 2) const uint RB = 2u;
layout(constant_id = 3) const uint CB = 2u;
layout(constant_id = 4) const uint BK = 8u;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) readonly buffer In { float x[]; };
layout(std430, binding = 2) readonly buffer Ker { float w[]; };
layout(std430, binding = 2) readonly buffer KerV { vec4 wv[]; };
layout(std430, binding = 3) writeonly buffer Out { float y[]; };
layout(std430, binding = 3) writeonly buffer OutV { vec4 yv[]; };

const uint NT = gl_WorkGroupSize.x;
const uint TY = NT / TX;
const uint BMV = TY * RB;              // tile rows / 4
const uint BM = BMV * 4u;
const uint BNV = TX * CB;              // tile columns / 4
const uint KSTEP = NT / BM;            // k rows apart of one invocation's A loads
const uint A_LOADS = BK / KSTEP;
const uint B_VECS = BK * BNV;
const uint B_LOADS = (B_VECS + NT - 1u) / NT;

shared vec4 As[2u * BK * BMV];         // [buffer][k][pixel / 4]
shared vec4 Bs[2u * BK * BNV];         // [buffer][k][channel / 4]
shared bool wbad;                      // a loaded weight is infinite or NaN

uint M, O, K, KK, K1, I, OP, o0;
int X0, X1, kd0, kd1, ic, is0, is1;
// this invocation's A pixel: its base offset, first window row and column
int pbase, pq0, pq1;
bool p_ok, bad;
uint t, kfirst;

bool nonfinite(vec4 v) {
  uvec4 e = floatBitsToUint(v) & 0x7f800000u;
  return any(equal(e, uvec4(0x7f800000u)));
}

void load_a(uint k0, out float ra[A_LOADS]) {
  if (I % BK == 0u) {
    // one kernel position for the whole step
    uint pos = k0 / I, c0 = k0 - pos * I, a = pos / K1, b = pos - a * K1;
    int q0 = pq0 + int(a) * kd0, q1 = pq1 + int(b) * kd1;
    bool ok = p_ok && k0 < K && q0 >= 0 && q0 < X0 && q1 >= 0 && q1 < X1;
    int base = pbase + q0 * is0 + q1 * is1 + int(c0 + kfirst) * ic;
    [[unroll]] for (uint l = 0u; l < A_LOADS; l++) {
      ra[l] = 0.0;
      if (ok) ra[l] = x[base + int(l * KSTEP) * ic];
    }
  } else {
    [[unroll]] for (uint l = 0u; l < A_LOADS; l++) {
      uint k = k0 + kfirst + l * KSTEP, pos = k / I, c = k - pos * I, a = pos / K1, b = pos - a * K1;
      int q0 = pq0 + int(a) * kd0, q1 = pq1 + int(b) * kd1;
      ra[l] = 0.0;
      if (p_ok && k < K && q0 >= 0 && q0 < X0 && q1 >= 0 && q1 < X1)
        ra[l] = x[pbase + q0 * is0 + q1 * is1 + int(c) * ic];
    }
  }
}

void load_b(uint k0, out vec4 rb[B_LOADS]) {
  [[unroll]] for (uint l = 0u; l < B_LOADS; l++) {
    uint v = t + l * NT, kk = v / BNV, c = o0 + (v - kk * BNV) * 4u;
    rb[l] = vec4(0.0);
    if (v < B_VECS && k0 + kk < K && c < OP) {
      rb[l] = wv[((k0 + kk) * OP + c) / 4u];
      bad = bad || nonfinite(rb[l]);
    }
  }
}

void store_tile(uint buf, float ra[A_LOADS], vec4 rb[B_LOADS]) {
  uint pm = t % BM;
  [[unroll]] for (uint l = 0u; l < A_LOADS; l++)
    As[(buf * BK + kfirst + l * KSTEP) * BMV + pm / 4u][pm % 4u] = ra[l];
  [[unroll]] for (uint l = 0u; l < B_LOADS; l++) {
    uint v = t + l * NT;
    if (v < B_VECS) Bs[buf * BK * BNV + v] = rb[l];
  }
}

void main() {
  uint mo = pc.meta_off;
  M = meta[mo];
  O = meta[mo + 1u];
  K = meta[mo + 2u];
  uint Y0 = meta[mo + 3u], Y1 = meta[mo + 4u], K0 = meta[mo + 5u];
  K1 = meta[mo + 6u];
  KK = K0 * K1;
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
  bool vec_out = meta[mo + 21u] != 0u;
  uint ob = meta[mo + 23u], oc = meta[mo + 24u], os0 = meta[mo + 25u], os1 = meta[mo + 26u];
  uint YY = Y0 * Y1;
  t = gl_LocalInvocationID.x;
  uint m0 = gl_WorkGroupID.x * BM;
  o0 = gl_WorkGroupID.y * BNV * 4u;
  uint tx = t % TX, ty = t / TX;

  // this invocation's A pixel and first k row
  uint pm = m0 + t % BM;
  kfirst = t / BM;
  p_ok = pm < M;
  {
    uint n = pm / YY, r = pm - n * YY, y0 = r / Y1, y1 = r - y0 * Y1;
    pq0 = int(y0) * s0 - lo0;
    pq1 = int(y1) * s1 - lo1;
    pbase = int(n) * ib;
  }
  bad = false;
  if (t == 0u) wbad = false;

  float ra[A_LOADS];
  vec4 rb[B_LOADS];
  vec4 acc[RB * 4u * CB];   // [row block][row in block][column block]
  [[unroll]] for (uint i = 0u; i < RB * 4u * CB; i++) acc[i] = vec4(0.0);

  load_a(0u, ra);
  load_b(0u, rb);
  store_tile(0u, ra, rb);
  barrier();
  uint buf = 0u;
  for (uint k0 = 0u; k0 < K; k0 += BK) {
    bool more = k0 + BK < K;
    if (more) {
      load_a(k0 + BK, ra);
      load_b(k0 + BK, rb);
    }
    uint abuf = buf * BK * BMV, bbuf = buf * BK * BNV;
    [[unroll]] for (uint kk = 0u; kk < BK; kk++) {
      vec4 xa[RB], yb[CB];
      [[unroll]] for (uint i = 0u; i < RB; i++) xa[i] = As[abuf + kk * BMV + i * TY + ty];
      [[unroll]] for (uint j = 0u; j < CB; j++) yb[j] = Bs[bbuf + kk * BNV + j * TX + tx];
      [[unroll]] for (uint i = 0u; i < RB; i++)
        [[unroll]] for (uint q = 0u; q < 4u; q++)
          [[unroll]] for (uint j = 0u; j < CB; j++)
            acc[(i * 4u + q) * CB + j] = fma(vec4(xa[i][q]), yb[j], acc[(i * 4u + q) * CB + j]);
    }
    buf ^= 1u;
    if (more) store_tile(buf, ra, rb);
    barrier();
  }
  if (bad) wbad = true;
  barrier();
  bool fix = wbad;

  int span0 = (int(K0) - 1) * kd0, span1 = (int(K1) - 1) * kd1;
  // The stores index acc only in fully unrollable loops (no inner loops,
  // no continue): the H100's compiler put acc in local memory when the
  // border recompute sat inside them (conv 3.8 ms against 2.0 for
  // conv_direct).  The rare recompute is a second pass over the same
  // outputs of this invocation, which the first pass then leaves alone.
  [[unroll]] for (uint i = 0u; i < RB; i++) {
    uint mr = m0 + (i * TY + ty) * 4u;   // 4 pixels from mr
    if (mr < M) {
      if (vec_out && !fix) {
        // 4 pixels of one image, contiguous and 16-byte aligned
        uint n = mr / YY, r = mr - n * YY, base = n * ob + r;
        [[unroll]] for (uint j = 0u; j < CB; j++)
          [[unroll]] for (uint e = 0u; e < 4u; e++) {
            uint o = o0 + (j * TX + tx) * 4u + e;
            if (o < O)
              yv[(base + o * oc) / 4u] = vec4(acc[(i * 4u) * CB + j][e], acc[(i * 4u + 1u) * CB + j][e],
                                              acc[(i * 4u + 2u) * CB + j][e], acc[(i * 4u + 3u) * CB + j][e]);
          }
      } else {
        [[unroll]] for (uint q = 0u; q < 4u; q++) {
          uint m = mr + q;
          uint n = m / YY, r = m - n * YY, a0 = r / Y1, a1 = r - a0 * Y1;
          int p0 = int(a0) * s0 - lo0, p1 = int(a1) * s1 - lo1;
          bool border = p0 < 0 || p1 < 0 || p0 + span0 >= X0 || p1 + span1 >= X1;
          uint base = n * ob + a0 * os0 + a1 * os1;
          [[unroll]] for (uint j = 0u; j < CB; j++)
            [[unroll]] for (uint e = 0u; e < 4u; e++) {
              uint o = o0 + (j * TX + tx) * 4u + e;
              if (m < M && o < O && !(fix && border)) y[base + o * oc] = acc[(i * 4u + q) * CB + j][e];
            }
        }
      }
    }
  }
  if (!fix) return;
  for (uint i = 0u; i < RB; i++)
    for (uint q = 0u; q < 4u; q++) {
      uint m = m0 + (i * TY + ty) * 4u + q;
      if (m >= M) continue;
      uint n = m / YY, r = m - n * YY, a0 = r / Y1, a1 = r - a0 * Y1;
      int p0 = int(a0) * s0 - lo0, p1 = int(a1) * s1 - lo1;
      if (!(p0 < 0 || p1 < 0 || p0 + span0 >= X0 || p1 + span1 >= X1)) continue;
      uint base = n * ob + a0 * os0 + a1 * os1;
      for (uint j = 0u; j < CB; j++)
        for (uint e = 0u; e < 4u; e++) {
          uint o = o0 + (j * TX + tx) * 4u + e;
          if (o >= O) continue;
          // conv's semantics: padded positions are skipped, not 0 * w
          float v = 0.0;
          for (uint pos = 0u; pos < KK; pos++) {
            uint a = pos / K1, b = pos - a * K1;
            int q0 = p0 + int(a) * kd0, q1 = p1 + int(b) * kd1;
            if (q0 < 0 || q0 >= X0 || q1 < 0 || q1 >= X1) continue;
            int xb = int(n) * ib + q0 * is0 + q1 * is1;
            for (uint c = 0u; c < I; c++) v = fma(x[xb + int(c) * ic], w[(pos * I + c) * OP + o], v);
          }
          y[base + o * oc] = v;
        }
    }
}
