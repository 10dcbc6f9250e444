#version 450
// window.comp - the window ops, three kernels from one source:
//
// (default) window_sum window_product window_max window_min, one output
// element per invocation: the window's elements in row-major order from the
// op's identity (sum +0, product 1, max the lowest value, min the highest),
// as Nx pads with them; input coordinate on axis d of output o and window
// element w: o * stride + w * dilation - pad_lo (outside the input: padding,
// which leaves the value as it is).  max / min: NaN propagates; equal zeros
// give +0 (max) and -0 (min).  Sums and products of floats through
// nxmath.glsl's nxf_add / nxf_mul (nxd_* for f64): IEEE on a driver that
// flushes denormals, as the elementwise add and multiply.
// meta: [0] nout [1] rank [2] window count, then 8 words each: [3] input
//       dims [11] output dims [19] window dims [27] strides [35] dilations
//       [43] low padding (two's complement)
// spec: 0 workgroup size, 1 op (0 sum 1 product 2 max 3 min), 2 fast (1:
//       the pooling path below), 3 its window width WW, 4 its stride SW,
//       5 its outputs per invocation VEC
//
// Pooling path (fast = 1): windows only on the last two axes (the others
// folded into B), no dilations: [B, H, W] -> [B, OH, OW].  Each invocation
// makes VEC outputs next to each other along W from the SPAN = (VEC - 1) *
// SW + WW input elements they share per window row, read as vectors of 4
// (binding 3, the input again) where the row holds them aligned, so a
// subgroup reads its rows coalesced and once; per output the same
// row-major order from the identity as the general path.
// fast meta: [0] invocations [1] NV = ceil(OW / VEC) [2] OH [3] OW [4] H
//            [5] W [6] WH [7] SH [8] low padding H [9] low padding W
//            [10] 1: vector loads allowed (W and the low padding W are
//            multiples of 4 and VEC * SW is)
//
// -DSCATTER: window_scatter_max / window_scatter_min (Nx 0.7.3), two passes
// over the same meta ([0] is the pass's invocation count; disjoint windows:
// ops 7 and 8 / 9 below main's comment):
//   op 4 / 5 (compiled for the input x's dtype): one invocation per window
//     writes the flat index of its selected element into sel, 0xffffffff
//     where the window holds no element of x (all padding).  The selection
//     walks the window's elements of x in row-major order (padding is never
//     selected): the first one, then each later v with v >= acc (max) or
//     v <= acc (min) as IEEE compares them -- the last of equal values wins
//     (-0 and +0 are equal), a NaN is never taken unless it comes first, and
//     then nothing replaces it (Nx.BinaryBackend's select).
//   op 6 (compiled for the result's dtype): one invocation per element e of
//     x loops over the windows that cover it in row-major order and adds
//     source[w] for each whose sel is e onto init: a fixed order, no atomics.
// bindings: 1 x, 2 sel (uint), 3 source, 4 init (one element), 5 result
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"
#include "nxmath.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OP = 0u;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };

#if defined(DT_f32) || defined(DT_f16) || defined(DT_bf16)
T t_add(T a, T b) { return nxf_add(a, b); }
T t_mul(T a, T b) { return nxf_mul(a, b); }
bool t_iszero(T x) { return (floatBitsToUint(x) & 0x7fffffffu) == 0u; }
#elif defined(DT_f64)
T t_add(T a, T b) { return nxd_add(a, b); }
T t_mul(T a, T b) { return nxd_mul(a, b); }
bool t_iszero(T x) {
  uvec2 u = unpackDouble2x32(x);
  return u.x == 0u && (u.y & 0x7fffffffu) == 0u;
}
#else
T t_add(T a, T b) { return a + b; }
T t_mul(T a, T b) { return a * b; }
bool t_iszero(T x) { return false; }
#endif

#ifndef SCATTER
#if defined(DT_f32)
#define ST4 vec4
#elif defined(DT_f64)
#define ST4 dvec4
#elif defined(DT_i32)
#define ST4 ivec4
#elif defined(DT_u32)
#define ST4 uvec4
#elif defined(DT_i64)
#define ST4 i64vec4
#elif defined(DT_u64)
#define ST4 u64vec4
#elif defined(DT_f16) || defined(DT_bf16) || defined(DT_u16)
#define ST4 u16vec4
#elif defined(DT_i16)
#define ST4 i16vec4
#elif defined(DT_i8)
#define ST4 i8vec4
#else
#define ST4 u8vec4
#endif
layout(constant_id = 2) const uint FAST = 0u;
layout(constant_id = 3) const uint WW = 2u;
layout(constant_id = 4) const uint SW = 2u;
layout(constant_id = 5) const uint VEC = 2u;
const uint SPAN = (VEC - 1u) * SW + WW;
const uint SPAN4 = (SPAN + 3u) / 4u;
layout(std430, binding = 1) readonly buffer In { ST x[]; };
layout(std430, binding = 2) writeonly buffer Out { ST y[]; };
layout(std430, binding = 3) readonly buffer In4 { ST4 x4[]; };

#ifdef WIDE
// -DWIDE (windoww_<dtype>, window_product of floats): the running product is
// wideprod.glsl's (mantissa, exponent) pair AT, so a partial product never
// under- or overflows; OUTV rounds it to the dtype once, at the store.
#include "wideprod.glsl"
#define AT WT
#define OUTV(a) wp_to(a)
AT combine(AT a, T b) { return wp_mul(a, wp_from(b)); }
AT identity() { return wp_one(); }
#else
#define AT T
#define OUTV(a) (a)
T combine(T a, T b) {
  if (OP == 0u) return t_add(a, b);
  if (OP == 1u) return t_mul(a, b);
  if (t_isnan(a)) return a;
  if (t_isnan(b)) return b;
  bool lt = t_less(a, b); // on the bits: denormals kept, -0 below +0
  return OP == 2u ? (lt ? b : a) : (lt ? a : b);
}

T identity() { return OP == 0u ? T(0) : OP == 1u ? T(1) : OP == 2u ? T_LOWEST : T_HIGHEST; }
#endif

void pool() {
  uint m = pc.meta_off;
  uint n = meta[m], NV = meta[m + 1u], OH = meta[m + 2u], OW = meta[m + 3u], H = meta[m + 4u],
       W = meta[m + 5u], WH = meta[m + 6u], SH = meta[m + 7u];
  int loh = int(meta[m + 8u]), low = int(meta[m + 9u]);
  bool vec_ok = meta[m + 10u] != 0u;
  uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < n; i += step) {
    uint q = i / NV;          // (b, oh) row of the output
    uint j0 = (i - q * NV) * VEC;
    uint b = q / OH, oh = q - b * OH;
    int iw0 = int(j0 * SW) - low;
    bool full = j0 + VEC <= OW;
    bool inb = full && iw0 >= 0 && iw0 + int(SPAN) <= int(W);
    bool vec = inb && vec_ok && iw0 + int(SPAN4 * 4u) <= int(W);
    AT acc[VEC];
    for (uint j = 0u; j < VEC; j++) acc[j] = identity();
    for (uint kh = 0u; kh < WH; kh++) {
      int ih = int(oh * SH) - loh + int(kh);
      if (ih < 0 || ih >= int(H)) continue;
      uint row = (b * H + uint(ih)) * W;
      if (inb) {
        T v[SPAN4 * 4u];
        if (vec) {
          uint r4 = (row + uint(iw0)) >> 2u;
          for (uint k = 0u; k < SPAN4; k++) {
            ST4 u = x4[r4 + k];
            v[4u * k] = LD(u.x);
            v[4u * k + 1u] = LD(u.y);
            v[4u * k + 2u] = LD(u.z);
            v[4u * k + 3u] = LD(u.w);
          }
        } else {
          for (uint k = 0u; k < SPAN; k++) v[k] = LD(x[row + uint(iw0) + k]);
        }
        for (uint j = 0u; j < VEC; j++)
          for (uint kw = 0u; kw < WW; kw++) acc[j] = combine(acc[j], v[j * SW + kw]);
      } else {
        for (uint j = 0u; j < VEC; j++)
          for (uint kw = 0u; kw < WW; kw++) {
            int c = iw0 + int(j * SW + kw);
            if (j0 + j < OW && c >= 0 && c < int(W)) acc[j] = combine(acc[j], LD(x[row + uint(c)]));
          }
      }
    }
    uint o = q * OW + j0;
    for (uint j = 0u; j < VEC; j++)
      if (j0 + j < OW) y[o + j] = STV(OUTV(acc[j]));
  }
}

void main() {
  if (FAST != 0u) {
    pool();
    return;
  }
  uint m = pc.meta_off;
  uint nout = meta[m], rank = meta[m + 1u], wcount = meta[m + 2u];
  uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint o = gl_GlobalInvocationID.x; o < nout; o += step) {
    int base[8];
    uint r = o;
    for (int d = int(rank) - 1; d >= 0; d--) {
      uint od = meta[m + 11u + uint(d)];
      uint q = r / od;
      base[d] = int((r - q * od) * meta[m + 27u + uint(d)]) - int(meta[m + 43u + uint(d)]);
      r = q;
    }
    AT acc = identity();
    for (uint w = 0u; w < wcount; w++) {
      uint rw = w, off = 0u, mul = 1u;
      bool inside = true;
      for (int d = int(rank) - 1; d >= 0; d--) {
        uint wd = meta[m + 19u + uint(d)];
        uint q = rw / wd;
        int c = base[d] + int((rw - q * wd) * meta[m + 35u + uint(d)]);
        rw = q;
        uint dim = meta[m + 3u + uint(d)];
        inside = inside && c >= 0 && c < int(dim);
        off += uint(c) * mul;
        mul *= dim;
      }
      if (inside) acc = combine(acc, LD(x[off]));
    }
    y[o] = STV(OUTV(acc));
  }
}

#else // SCATTER
layout(std430, binding = 1) readonly buffer In { ST x[]; };
layout(std430, binding = 2) buffer Sel { uint sel[]; };
layout(std430, binding = 3) readonly buffer Src { ST src[]; };
layout(std430, binding = 4) readonly buffer Init { ST init[]; };
layout(std430, binding = 5) writeonly buffer Out { ST y[]; };

const uint NONE = 0xffffffffu;

// v replaces acc: v >= acc (max) or v <= acc (min), IEEE (on the bits, so
// a flushing driver still orders denormals; equal zeros are equal)
bool takes(T v, T acc) {
  if (t_isnan(v) || t_isnan(acc)) return false;
  if (t_iszero(v) && t_iszero(acc)) return true;
  return OP == 4u || OP == 8u ? !t_less(v, acc) : !t_less(acc, v);
}

// Windows that share no element (every stride >= its window) and x of the
// result's dtype: op 7 writes init everywhere, then op 8 / 9 (max / min)
// selects per window and writes init + source at once (one writer per
// element, so no gather pass).
void main() {
  uint m = pc.meta_off;
  uint n = meta[m], rank = meta[m + 1u], wcount = meta[m + 2u];
  uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (OP == 7u) {
    ST v = init[0];
    for (uint e = gl_GlobalInvocationID.x; e < n; e += step) y[e] = v;
    return;
  }
  if (OP != 6u) {
    for (uint o = gl_GlobalInvocationID.x; o < n; o += step) {
      int base[8];
      uint r = o;
      for (int d = int(rank) - 1; d >= 0; d--) {
        uint od = meta[m + 11u + uint(d)];
        uint q = r / od;
        base[d] = int((r - q * od) * meta[m + 27u + uint(d)]) - int(meta[m + 43u + uint(d)]);
        r = q;
      }
      uint best = NONE;
      T acc = T(0);
      for (uint w = 0u; w < wcount; w++) {
        uint rw = w, off = 0u, mul = 1u;
        bool inside = true;
        for (int d = int(rank) - 1; d >= 0; d--) {
          uint wd = meta[m + 19u + uint(d)];
          uint q = rw / wd;
          int c = base[d] + int(rw - q * wd);
          rw = q;
          uint dim = meta[m + 3u + uint(d)];
          inside = inside && c >= 0 && c < int(dim);
          off += uint(c) * mul;
          mul *= dim;
        }
        if (inside) {
          T v = LD(x[off]);
          if (best == NONE || takes(v, acc)) {
            best = off;
            acc = v;
          }
        }
      }
      if (OP >= 8u) {
        if (best != NONE) y[best] = STV(t_add(LD(init[0]), LD(src[o])));
      } else {
        sel[o] = best;
      }
    }
    return;
  }
  // op 6: the windows covering element e on axis d are those o with
  // o * stride - lo <= c <= o * stride - lo + window - 1, 0 <= o < out dim
  for (uint e = gl_GlobalInvocationID.x; e < n; e += step) {
    int lo[8], hi[8], cur[8];
    uint r = e;
    bool any = true;
    for (int d = int(rank) - 1; d >= 0; d--) {
      uint dim = meta[m + 3u + uint(d)];
      uint q = r / dim;
      int t = int(r - q * dim) + int(meta[m + 43u + uint(d)]);
      r = q;
      int s = int(meta[m + 27u + uint(d)]), w = int(meta[m + 19u + uint(d)]);
      int h = t < 0 ? -1 : min(t / s, int(meta[m + 11u + uint(d)]) - 1);
      int l = t - w + 1 <= 0 ? 0 : (t - w + s) / s;
      lo[d] = l;
      hi[d] = h;
      cur[d] = l;
      any = any && l <= h;
    }
    T acc = LD(init[0]);
    while (any) {
      uint widx = 0u;
      for (int d = 0; d < int(rank); d++) widx = widx * meta[m + 11u + uint(d)] + uint(cur[d]);
      if (sel[widx] == e) acc = t_add(acc, LD(src[widx]));
      // the next window in row-major order
      int d = int(rank) - 1;
      for (; d >= 0; d--) {
        if (cur[d] < hi[d]) {
          cur[d]++;
          break;
        }
        cur[d] = lo[d];
      }
      any = d >= 0;
    }
    y[e] = STV(acc);
  }
}
#endif
