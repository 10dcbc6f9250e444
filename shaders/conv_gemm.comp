#version 450
// conv_gemm.comp - 2-D f32 conv as an implicit GEMM: C[m][o] = sum_k A[m][k]
// B[k][o] with m an output pixel (n, y0, y1), k an (input channel, kernel
// row, kernel column) and A gathered from the input on the fly (no im2col
// buffer).  64 x 64 tiles, k steps of 16, 256 invocations of 4 x 4 sums.
// For one feature and batch group and no input dilation (src/ops/conv.c
// picks it); any strides, padding, kernel dilation and permutation (the
// strides are the buffers').
//
// Only outputs whose window lies inside the input are written here: a
// padded position would multiply a zero by the kernel, and 0 * inf is NaN
// where conv skips padding.  conv_direct then computes the border outputs
// (its "border only" flag).
//
// meta: [0] M (outputs per channel: NB * Y0 * Y1) [1] O [2] K (I * K0 * K1)
// [3] Y0 [4] Y1 [5] K0 [6] K1 [7] X0 [8] X1 [9] s0 [10] s1 [11] kdil0
// [12] kdil1 [13] lo0 [14] lo1 (ints) [15] input batch stride [16] input
// channel stride [17] [18] input spatial strides [19] kernel O stride
// [20] kernel I stride [21] [22] kernel spatial strides [23] output batch
// stride [24] output channel stride [25] [26] output spatial strides
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 256) in;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) readonly buffer In { float x[]; };
layout(std430, binding = 2) readonly buffer Ker { float w[]; };
layout(std430, binding = 3) writeonly buffer Out { float y[]; };

#define BM 64
#define BN 64
#define BK 16

shared float As[BK][BM];
shared float Bs[BK][BN];
shared int kt_in[BK], kt_w[BK], kt_d0[BK], kt_d1[BK];
shared bool kt_ok[BK];

void main() {
  uint mo = pc.meta_off;
  uint M = meta[mo], O = meta[mo + 1u], K = meta[mo + 2u];
  uint Y0 = meta[mo + 3u], Y1 = meta[mo + 4u], K0 = meta[mo + 5u], K1 = meta[mo + 6u];
  int X0 = int(meta[mo + 7u]), X1 = int(meta[mo + 8u]);
  int s0 = int(meta[mo + 9u]), s1 = int(meta[mo + 10u]), kd0 = int(meta[mo + 11u]), kd1 = int(meta[mo + 12u]);
  int lo0 = int(meta[mo + 13u]), lo1 = int(meta[mo + 14u]);
  int ib = int(meta[mo + 15u]), ic = int(meta[mo + 16u]), is0 = int(meta[mo + 17u]), is1 = int(meta[mo + 18u]);
  int ko = int(meta[mo + 19u]), ki = int(meta[mo + 20u]), ks0 = int(meta[mo + 21u]), ks1 = int(meta[mo + 22u]);
  uint ob = meta[mo + 23u], oc = meta[mo + 24u], os0 = meta[mo + 25u], os1 = meta[mo + 26u];
  uint t = gl_LocalInvocationID.x;
  uint m0 = gl_WorkGroupID.x * BM, o0 = gl_WorkGroupID.y * BN;
  uint YY = Y0 * Y1, KK = K0 * K1;

  // this invocation's loads: row (and column) t % 64, k rows t / 64 + 4 j
  uint lm = t & 63u, lk = t >> 6;
  uint m = m0 + lm;
  bool m_ok = m < M;
  uint n = m / YY, r = m - n * YY, y0 = r / Y1, y1 = r - y0 * Y1;
  int q00 = int(y0) * s0 - lo0, q01 = int(y1) * s1 - lo1;
  int rowbase = int(n) * ib + q00 * is0 + q01 * is1;
  uint o = o0 + lm;
  bool o_ok = o < O;
  int wbase = int(o) * ko;

  // this invocation's sums: rows tm .. tm+3, columns tn .. tn+3
  uint tm = (t >> 4) * 4u, tn = (t & 15u) * 4u;
  float acc[4][4];
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) acc[i][j] = 0.0;

  for (uint k0 = 0u; k0 < K; k0 += BK) {
    if (t < BK) {
      uint k = k0 + t;
      uint c = k / KK, kr = k - c * KK, a = kr / K1, b = kr - a * K1;
      kt_ok[t] = k < K;
      kt_d0[t] = int(a) * kd0;
      kt_d1[t] = int(b) * kd1;
      kt_in[t] = int(c) * ic + int(a) * kd0 * is0 + int(b) * kd1 * is1;
      kt_w[t] = int(c) * ki + int(a) * ks0 + int(b) * ks1;
    }
    barrier();
    for (uint j = 0u; j < 4u; j++) {
      uint kk = lk + 4u * j;
      int q0 = q00 + kt_d0[kk], q1 = q01 + kt_d1[kk];
      bool ok = m_ok && kt_ok[kk] && q0 >= 0 && q0 < X0 && q1 >= 0 && q1 < X1;
      As[kk][lm] = ok ? x[rowbase + kt_in[kk]] : 0.0;
      Bs[kk][lm] = o_ok && kt_ok[kk] ? w[wbase + kt_w[kk]] : 0.0;
    }
    barrier();
    for (uint kk = 0u; kk < BK; kk++) {
      vec4 av = vec4(As[kk][tm], As[kk][tm + 1u], As[kk][tm + 2u], As[kk][tm + 3u]);
      vec4 bv = vec4(Bs[kk][tn], Bs[kk][tn + 1u], Bs[kk][tn + 2u], Bs[kk][tn + 3u]);
      for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) acc[i][j] = fma(av[i], bv[j], acc[i][j]);
    }
    barrier();
  }

  int span0 = (int(K0) - 1) * kd0, span1 = (int(K1) - 1) * kd1;
  for (uint i = 0u; i < 4u; i++) {
    uint mm = m0 + tm + i;
    if (mm >= M) continue;
    uint nn = mm / YY, rr = mm - nn * YY, a0 = rr / Y1, a1 = rr - a0 * Y1;
    int p0 = int(a0) * s0 - lo0, p1 = int(a1) * s1 - lo1;
    // the border (a window reaching into the padding) is conv_direct's
    if (p0 < 0 || p1 < 0 || p0 + span0 >= X0 || p1 + span1 >= X1) continue;
    uint base = nn * ob + a0 * os0 + a1 * os1;
    for (uint j = 0u; j < 4u; j++) {
      uint oo = o0 + tn + j;
      if (oo < O) y[base + oo * oc] = acc[i][j];
    }
  }
}
