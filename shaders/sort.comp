#version 450
// sort.comp - a stable LSD radix sort of every line along one axis (sort,
// argsort, top_k, top_k_indices).  Each element becomes an unsigned key
// whose order is Nx's: ascending -inf < ... < -0 = +0 < ... < inf < NaN
// (every NaN one key, both zeros one key, so they keep their order);
// descending the complement (NaN first).  Keys sort with their index in the
// line, 4 bits a pass, each pass stable, so ties keep the input's order.
// MODE (spec constant 1):
//   0 keys: key and index of every element, rows of n (row r = line (o, i))
//   1 histogram: virtual workgroup (r, t) counts the digits of tile t
//     (WG * ITEMS elements) into hist[(r * 16 + d) * ntiles + t]
//   2 scatter: with hscan (the inclusive running sum of each row's hist),
//     tile t's elements go to their digit's place, in order
//   3 values out: y at (o, k, i) = x at (o, idx[r, k], i), k < kout
//   4 indices out: y at (o, k, i) = idx[r, k] in the dtype
//   5 short lines (many of them): one invocation per line, a bottom-up
//     merge sort of its keys between buffers (3, 4) and (5, 6), stable;
//     after ceil(log2 n) passes the result is in (5, 6) when that count is
//     odd, else in (3, 4)
// meta: [0] rows [1] n [2] inner [3] ntiles [4] shift [5] kout [6] descending
//       [7] first [8] last (RADIX8 only)
// spec: 0 workgroup size (256), 1 mode, 2 ITEMS; RADIX8: 3 NSG (the most
//       subgroups a workgroup can have), 4 SHW (words of sh)
//
// RADIX8 (sort8_<dtype>): 8 bits a pass, modes 1 and 2 only.  Tile t of a
// line is its elements [t * WG * ITEMS, (t + 1) * WG * ITEMS).
//   1 histogram: hist[(r * 256 + d) * ntiles + t] = tile t's count of digit d
//   2 scatter: subgroup w ranks its slice of the tile (ITEMS rows of one
//     element a lane) digit by digit with ballots, keeping a running count
//     per (subgroup, digit) in sh; those counts summed over the subgroups
//     before it and the digits below give each element its place in the
//     tile sorted by digit; the tile goes through sh in that order, so the
//     stores of one digit are contiguous, to its place in the line (hscan,
//     as in mode 2 above).  Stable: the slices, rows and lanes are in line
//     order.
//   first (meta[7]): keys come from x, indices are positions (no mode 0).
//   last (meta[8]): 0 keys and indices out; 1 indices only; 2 the values
//     themselves into y at (o, pos, i) for pos < kout (no mode 3).
//   values (meta[9], f32 i32 u32): what travels with a key is the value's
//     bits, not its index (sort and top_k: no gather at the end).
// bindings: 1 x, 2 y, 3 keys in, 4 idx in, 5 keys out, 6 idx out, 7 hist,
//           8 hscan
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "dtype.glsl"

#if defined(DT_f64) || defined(DT_i64) || defined(DT_u64)
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#define KT uint64_t
#define KEY64 1
#else
#define KT uint
#endif
#if defined(DT_f64) || defined(DT_i64) || defined(DT_u64)
#define KBITS 64u
#elif defined(DT_f32) || defined(DT_i32) || defined(DT_u32)
#define KBITS 32u
#elif defined(DT_f16) || defined(DT_bf16) || defined(DT_i16) || defined(DT_u16)
#define KBITS 16u
#else
#define KBITS 8u
#endif

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint MODE = 0u;
layout(constant_id = 2) const uint ITEMS = 8u;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) readonly buffer In { ST x[]; };
layout(std430, binding = 2) writeonly buffer Out { ST y[]; };
layout(std430, binding = 3) buffer KIn { KT kin[]; };
layout(std430, binding = 4) buffer IIn { uint iin[]; };
layout(std430, binding = 5) buffer KOut { KT kout_[]; };
layout(std430, binding = 6) buffer IOut { uint iout[]; };
layout(std430, binding = 7) buffer Hist { uint hist[]; };
layout(std430, binding = 8) readonly buffer HScan { uint hscan[]; };

#ifdef RADIX8
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_ballot : require
layout(constant_id = 3) const uint NSG = 8u;
layout(constant_id = 4) const uint SHW = 4096u;
shared uint sh[SHW];        // (subgroup, digit) counts, then the tile in order
shared uint sb[512];        // the digit totals' running sum, two halves
shared uint dpre[256];      // the tile's first place of each digit
shared uint goff[256];      // the line's first place of each digit of this tile
#else
shared uint sc[16 * 256];
shared uint seg[256];
shared uint base[16];
#endif

// The ascending key of element at (its storage value).
KT key_of(uint at) {
#if defined(DT_f32)
  uint u = floatBitsToUint(x[at]);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0xffffffffu;
  if ((u & 0x7fffffffu) == 0u) return 0x80000000u;
  return (u >> 31) != 0u ? ~u : (u | 0x80000000u);
#elif defined(DT_f64)
  uvec2 w = unpackDouble2x32(x[at]);
  uint64_t u = (uint64_t(w.y) << 32) | uint64_t(w.x);
  uint64_t mag = u & 0x7fffffffffffffffUL;
  if (mag > 0x7ff0000000000000UL) return 0xffffffffffffffffUL;
  if (mag == 0UL) return 0x8000000000000000UL;
  return (u >> 63) != 0UL ? ~u : (u | 0x8000000000000000UL);
#elif defined(DT_f16) || defined(DT_bf16)
  uint u = uint(x[at]) & 0xffffu;
#if defined(DT_f16)
  const uint INF = 0x7c00u;
#else
  const uint INF = 0x7f80u;
#endif
  if ((u & 0x7fffu) > INF) return 0xffffu;
  if ((u & 0x7fffu) == 0u) return 0x8000u;
  return (u >> 15) != 0u ? (~u & 0xffffu) : (u | 0x8000u);
#elif defined(DT_i64)
  return uint64_t(x[at]) ^ 0x8000000000000000UL;
#elif defined(DT_u64)
  return x[at];
#elif defined(DT_i32)
  return uint(x[at]) ^ 0x80000000u;
#elif defined(DT_i16)
  return (uint(int(x[at])) & 0xffffu) ^ 0x8000u;
#elif defined(DT_i8)
  return (uint(int(x[at])) & 0xffu) ^ 0x80u;
#else
  return uint(x[at]);
#endif
}

#if defined(DT_f64) || defined(DT_i64) || defined(DT_u64)
const KT KMASK = 0xffffffffffffffffUL;
#elif defined(DT_f32) || defined(DT_i32) || defined(DT_u32)
const KT KMASK = 0xffffffffu;
#elif defined(DT_f16) || defined(DT_bf16) || defined(DT_i16) || defined(DT_u16)
const KT KMASK = 0xffffu;
#else
const KT KMASK = 0xffu;
#endif

#ifdef RADIX8
// sort's values of 32-bit dtypes travel as their bits instead of their
// index (the last pass then writes them without a gather)
#if defined(DT_f32)
#define VPAYLOAD 1
#define VBITS(v) floatBitsToUint(v)
#define VOUT(p) uintBitsToFloat(p)
#elif defined(DT_i32)
#define VPAYLOAD 1
#define VBITS(v) uint(v)
#define VOUT(p) int(p)
#elif defined(DT_u32)
#define VPAYLOAD 1
#define VBITS(v) (v)
#define VOUT(p) (p)
#endif

// the key of element k of line (o, i), in the line's order
KT line_key(uint o, uint i, uint n, uint inner, uint k, bool desc) {
  KT key = key_of((o * n + k) * inner + i);
  return desc ? (~key & KMASK) : key;
}

void main() {
  uint m = pc.meta_off;
  uint rows = meta[m], n = meta[m + 1u], inner = meta[m + 2u], ntiles = meta[m + 3u];
  uint shift = meta[m + 4u], kout = meta[m + 5u];
  bool desc = meta[m + 6u] != 0u, first = meta[m + 7u] != 0u;
  uint last = meta[m + 8u];
#ifdef VPAYLOAD
  bool vp = meta[m + 9u] != 0u;   // the payload is the value's bits
#else
  const bool vp = false;
#endif
  uint WG = gl_WorkGroupSize.x, t = gl_LocalInvocationID.x;
  uint tile = WG * ITEMS;
  for (uint g = gl_WorkGroupID.x; g < rows * ntiles; g += gl_NumWorkGroups.x) {
    uint r = g / ntiles, tl = g - r * ntiles;
    uint o = r / inner, i = r - o * inner;
    uint rb = r * n, k0 = tl * tile;
    if (MODE == 1u) {
      for (uint d = t; d < 256u; d += WG) sh[d] = 0u;
      barrier();
      [[unroll]] for (uint q = 0u; q < ITEMS; q++) {
        uint k = k0 + q * WG + t;
        if (k < n) {
          KT key = first ? line_key(o, i, n, inner, k, desc) : kin[rb + k];
          atomicAdd(sh[uint(key >> shift) & 255u], 1u);
        }
      }
      barrier();
      for (uint d = t; d < 256u; d += WG) hist[(r * 256u + d) * ntiles + tl] = sh[d];
      barrier();
      continue;
    }
    uint S = gl_SubgroupSize, w = gl_SubgroupID, lane = gl_SubgroupInvocationID;
    uint nsg = gl_NumSubgroups;
    for (uint j = t; j < nsg * 256u; j += WG) sh[j] = 0u;
    barrier();
    KT key[ITEMS];
    uint ix[ITEMS], rk[ITEMS];
    uint cbase = k0 + w * S * ITEMS + lane;
    [[unroll]] for (uint q = 0u; q < ITEMS; q++) {
      uint k = cbase + q * S;
      bool valid = k < n;
      KT kk = KT(0);
      uint id = 0u;
      if (valid) {
        kk = first ? line_key(o, i, n, inner, k, desc) : kin[rb + k];
#ifdef VPAYLOAD
        id = !first ? iin[rb + k] : vp ? VBITS(x[(o * n + k) * inner + i]) : k;
#else
        id = first ? k : iin[rb + k];
#endif
      }
      uint d = uint(kk >> shift) & 255u;
      // the lanes holding this digit
      uvec4 same = subgroupBallot(valid);
      [[unroll]] for (uint b = 0u; b < 8u; b++) {
        bool bit = ((d >> b) & 1u) != 0u;
        uvec4 v = subgroupBallot(bit);
        same &= bit ? v : ~v;
      }
      uint below = subgroupBallotExclusiveBitCount(same);
      uint prior = valid ? sh[w * 256u + d] : 0u;
      subgroupBarrier();
      if (valid && below == 0u) sh[w * 256u + d] = prior + subgroupBallotBitCount(same);
      subgroupBarrier();
      key[q] = kk;
      ix[q] = id;
      rk[q] = prior + below;
    }
    barrier();
    // per digit: the subgroups' counts become their running sums; the totals
    // into sb; this tile's first place of each digit in the line
    for (uint d = t; d < 256u; d += WG) {
      uint run = 0u;
      for (uint v = 0u; v < nsg; v++) {
        uint c = sh[v * 256u + d];
        sh[v * 256u + d] = run;
        run += c;
      }
      sb[d] = run;
      uint j = (r * 256u + d) * ntiles + tl;
      goff[d] = hscan[j] - hist[j];
    }
    barrier();
    for (uint st = 1u, src = 0u; st < 256u; st <<= 1, src = 256u - src) {
      for (uint d = t; d < 256u; d += WG) sb[256u - src + d] = sb[src + d] + (d >= st ? sb[src + d - st] : 0u);
      barrier();
    }
    // 8 steps: the inclusive sums are back in sb[0, 256)
    for (uint d = t; d < 256u; d += WG) dpre[d] = d == 0u ? 0u : sb[d - 1u];
    barrier();
    [[unroll]] for (uint q = 0u; q < ITEMS; q++) {
      uint d = uint(key[q] >> shift) & 255u;
      rk[q] += dpre[d] + sh[w * 256u + d];
    }
    barrier();
    uint cnt = min(tile, n - k0);
    uint gp[ITEMS];
#ifdef KEY64
    uint wsave[ITEMS];
    bool hi = shift >= 32u;
#endif
    // the word that holds the digit, in tile order: each element's place
    [[unroll]] for (uint q = 0u; q < ITEMS; q++)
      if (cbase + q * S < n) {
#ifdef KEY64
        sh[rk[q]] = uint(hi ? key[q] >> 32 : key[q]);
#else
        sh[rk[q]] = uint(key[q]);
#endif
      }
    barrier();
    [[unroll]] for (uint j = 0u; j < ITEMS; j++) {
      uint e = j * WG + t;
      if (e < cnt) {
        uint wv = sh[e];
        uint d = (wv >> (shift & 31u)) & 255u;
        gp[j] = goff[d] + e - dpre[d];
#ifdef KEY64
        wsave[j] = wv;
#else
        if (last == 0u) kout_[rb + gp[j]] = KT(wv);
#endif
      }
    }
    barrier();
#ifdef KEY64
    if (last == 0u) {
      [[unroll]] for (uint q = 0u; q < ITEMS; q++)
        if (cbase + q * S < n) sh[rk[q]] = uint(hi ? key[q] : key[q] >> 32);
      barrier();
      [[unroll]] for (uint j = 0u; j < ITEMS; j++) {
        uint e = j * WG + t;
        if (e < cnt) {
          uint ov = sh[e];
          uint lo = hi ? ov : wsave[j], hw = hi ? wsave[j] : ov;
          kout_[rb + gp[j]] = (uint64_t(hw) << 32) | uint64_t(lo);
        }
      }
      barrier();
    }
#endif
    [[unroll]] for (uint q = 0u; q < ITEMS; q++)
      if (cbase + q * S < n) sh[rk[q]] = ix[q];
    barrier();
    [[unroll]] for (uint j = 0u; j < ITEMS; j++) {
      uint e = j * WG + t;
      if (e < cnt) {
        uint id = sh[e];
        if (last == 2u) {
#ifdef VPAYLOAD
          if (gp[j] < kout) y[(o * kout + gp[j]) * inner + i] = vp ? VOUT(id) : x[(o * n + id) * inner + i];
#else
          if (gp[j] < kout) y[(o * kout + gp[j]) * inner + i] = x[(o * n + id) * inner + i];
#endif
        } else {
          iout[rb + gp[j]] = id;
        }
      }
    }
    barrier();
  }
}
#else
void main() {
  uint m = pc.meta_off;
  uint rows = meta[m], n = meta[m + 1u], inner = meta[m + 2u], ntiles = meta[m + 3u];
  uint shift = meta[m + 4u], kout = meta[m + 5u];
  bool desc = meta[m + 6u] != 0u;
  uint t = gl_LocalInvocationID.x;
  if (MODE == 5u) {
    uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint r = gl_GlobalInvocationID.x; r < rows; r += step) {
      uint rb = r * n;
      bool ab = true;   // source is (kin, iin)
      for (uint w = 1u; w < n; w <<= 1) {
        for (uint lo = 0u; lo < n; lo += 2u * w) {
          uint mid = min(lo + w, n), hi = min(lo + 2u * w, n);
          uint i = lo, j = mid, k = lo;
          while (k < hi) {
            bool right;
            if (i >= mid) right = true;
            else if (j >= hi) right = false;
            else right = ab ? kin[rb + j] < kin[rb + i] : kout_[rb + j] < kout_[rb + i];
            uint from = right ? j : i;
            if (ab) { kout_[rb + k] = kin[rb + from]; iout[rb + k] = iin[rb + from]; }
            else { kin[rb + k] = kout_[rb + from]; iin[rb + k] = iout[rb + from]; }
            if (right) j++; else i++;
            k++;
          }
        }
        ab = !ab;
      }
    }
    return;
  }
  if (MODE == 0u || MODE >= 3u) {
    uint len = MODE == 0u ? n : kout;
    uint total = rows * len;
    uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint e = gl_GlobalInvocationID.x; e < total; e += step) {
      uint r = e / len, k = e - r * len;
      uint o = r / inner, i = r - o * inner;
      if (MODE == 0u) {
        KT key = key_of((o * n + k) * inner + i);
        kout_[r * n + k] = desc ? (~key & KMASK) : key;
        iout[r * n + k] = k;
      } else {
        uint j = iin[r * n + k];
        uint at = (o * kout + k) * inner + i;
        if (MODE == 3u) y[at] = x[(o * n + j) * inner + i];
        else y[at] = STV(T(j));
      }
    }
    return;
  }
  uint tile = gl_WorkGroupSize.x * ITEMS;
  for (uint g = gl_WorkGroupID.x; g < rows * ntiles; g += gl_NumWorkGroups.x) {
    uint r = g / ntiles, tl = g - r * ntiles;
    uint k0 = tl * tile + t * ITEMS;
    uint rb = r * n;
    if (MODE == 1u) {
      if (t < 16u) base[t] = 0u;
      barrier();
      for (uint q = 0u; q < ITEMS; q++) {
        uint k = k0 + q;
        if (k < n) atomicAdd(base[uint(kin[rb + k] >> shift) & 15u], 1u);
      }
      barrier();
      if (t < 16u) hist[(r * 16u + t) * ntiles + tl] = base[t];
      barrier();
      continue;
    }
    // MODE 2: this invocation's counts per digit, then per digit the
    // running count over the invocations before it (16 x 256 in sc)
    uint cnt[16];
    [[unroll]] for (uint d = 0u; d < 16u; d++) cnt[d] = 0u;
    for (uint q = 0u; q < ITEMS; q++) {
      uint k = k0 + q;
      if (k < n) cnt[uint(kin[rb + k] >> shift) & 15u]++;
    }
    [[unroll]] for (uint d = 0u; d < 16u; d++) sc[d * 256u + t] = cnt[d];
    if (t < 16u) {
      uint j = (r * 16u + t) * ntiles + tl;
      base[t] = hscan[j] - hist[j];   // exclusive: this tile's first place for digit t
    }
    barrier();
    uint dd = t >> 4, s = t & 15u;
    uint sum = 0u;
    for (uint j = 0u; j < 16u; j++) sum += sc[dd * 256u + s * 16u + j];
    seg[t] = sum;
    barrier();
    if (t < 16u) {
      uint run = 0u;
      for (uint j = 0u; j < 16u; j++) {
        uint v = seg[t * 16u + j];
        seg[t * 16u + j] = run;
        run += v;
      }
    }
    barrier();
    uint run = seg[t];
    for (uint j = 0u; j < 16u; j++) {
      uint v = sc[dd * 256u + s * 16u + j];
      sc[dd * 256u + s * 16u + j] = run;
      run += v;
    }
    barrier();
    [[unroll]] for (uint d = 0u; d < 16u; d++) cnt[d] = 0u;
    for (uint q = 0u; q < ITEMS; q++) {
      uint k = k0 + q;
      if (k < n) {
        KT key = kin[rb + k];
        uint d = uint(key >> shift) & 15u;
        uint pos = base[d] + sc[d * 256u + t] + cnt[d];
        cnt[d]++;
        kout_[rb + pos] = key;
        iout[rb + pos] = iin[rb + k];
      }
    }
    barrier();
  }
}
#endif
