#version 450
// scatter.comp - put_slice, indexed_put and indexed_add: every element of
// the updates goes to one element of the output (already a copy of the
// target), at a static offset (strides per update dimension) plus K index
// lookups.  CLAMP (meta[47] = 1, put_slice) clamps each index into
// [0, lim]; otherwise an update whose index is out of range is dropped.
// Compiled at run time (src/ops/rtkernel.c) per mode and index dtype:
//   OP_PUT   -DEB_<bytes>: store the update (put_slice: no two updates meet)
//   OP_OWNER : owner[t] = max(owner[t], i / row_len + 1): the last row wins
//              (row_len 1: the update's own position, which orders rows too,
//              since the elements of one row meet no other of that row) ...
//   OP_OWNED -DEB_<bytes>: ... and only the owning row stores (indexed_put
//              "owned": a copy, the owners, the stores)
//   OP_PICKG -DEB_<bytes>: over the targets, out[t] = owner[t] ?
//              u[owner[t] - 1] : x[t] (indexed_put "gather": owners by
//              position, then this pass, which is the copy too)
//   OP_OWNP  -DEB_<1|2|4>: s[t] = max(s[t], (row + 1) << 32 | the update's
//              bits) by one 64-bit atomicMax: the owner and its value at
//              once (shaderBufferInt64Atomics) ...
//   OP_PICKP -DEB_<1|2|4>: ... then out[t] = s[t] >> 32 ? low bits : x[t]
//              (indexed_put "packed")
//   OP_ADD32 : 32-bit integer add (8/16-bit dtypes go through i32 scratch)
//   OP_ADD64 : 64-bit integer add as two 32-bit atomics (low word, then the
//              carry into the high word): exact, in any order
//   OP_ADDF  : f32 add by compare-and-swap (f16 / bf16 through f32 scratch)
//   OP_ADDFA : f32 add by atomicAdd (VK_EXT_shader_atomic_float)
//   OP_ADDD  : f64 add by 64-bit compare-and-swap (shaderBufferInt64Atomics)
//
// meta: as gather.comp, over the updates' dimensions ([14..21] dst stride
//       per update dim), then [46] elements per update row [47] CLAMP
//       [48] [49] a window of the targets, its first and its length: an
//       update whose target is outside is another pass's; the owners
//       (OWNER, OWNED) and the destination of the other modes are the
//       window's (index target - [48]), OWNED's output the whole target
//       (index.c: where a 4-byte-a-target array would pass the storage
//       buffer range); the PICK passes: [0] the number of targets.
#extension GL_GOOGLE_include_directive : require
#if defined(OP_ADD32) || defined(OP_ADDF) || defined(OP_OWNER)
#define E uint
#elif defined(OP_ADDFA)
#extension GL_EXT_shader_atomic_float : require
#define E float
#elif defined(OP_ADDD)
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_atomic_int64 : require
#define E uint64_t
#elif defined(OP_ADD64)
#define E uvec2
#elif defined(EB_1)
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#define E uint8_t
#elif defined(EB_2)
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#define E uint16_t
#elif defined(EB_4)
#define E uint
#elif defined(EB_8)
#define E uvec2
#else
#error "compile with -DOP_<mode> (and -DEB_<bytes> for OP_PUT / OP_OWNED / OP_OWNP / OP_PICK*)"
#endif
#if defined(OP_OWNP)
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_atomic_int64 : require
#endif
#define IDX_BINDING 2

layout(local_size_x_id = 0) in;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };

#if defined(OP_PICKG) || defined(OP_PICKP)
// binding 1 the target x, 2 the updates (PICKG), 3 the output, 4 the owners
layout(std430, binding = 1) readonly buffer Src { E x[]; };
layout(std430, binding = 3) writeonly buffer Dst { E d[]; };
#if defined(OP_PICKG)
layout(std430, binding = 2) readonly buffer Upd { E u[]; };
layout(std430, binding = 4) readonly buffer Owner { uint owner[]; };
#else
layout(std430, binding = 4) readonly buffer Owner { uvec2 owner[]; };
#endif

void main() {
  uint n = meta[pc.meta_off];
  uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint t = gl_GlobalInvocationID.x; t < n; t += step) {
#if defined(OP_PICKG)
    uint o = owner[t];
    d[t] = o != 0u ? u[o - 1u] : x[t];
#else
    uvec2 o = owner[t];
    d[t] = o.y != 0u ? E(o.x) : x[t];
#endif
  }
}
#else
layout(std430, binding = 1) readonly buffer Upd { E u[]; };
#if defined(OP_ADD64)
layout(std430, binding = 3) buffer Dst { uint d[]; };
#elif defined(OP_OWNP)
layout(std430, binding = 3) buffer Dst { uint64_t d[]; };
#else
layout(std430, binding = 3) buffer Dst { E d[]; };
#endif
#if defined(OP_OWNER) || defined(OP_OWNED)
layout(std430, binding = 4) buffer Owner { uint owner[]; };
#endif
#include "index.glsl"

void main() {
  uint m = pc.meta_off;
  uint n = meta[m], rank = meta[m + 1u], K = meta[m + 2u], KS = meta[m + 3u];
  uint row_len = meta[m + 46u];
  bool clamp_ix = meta[m + 47u] != 0u;
  uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < n; i += step) {
    uint ti = meta[m + 4u], ii = meta[m + 5u], r = i;
    for (int k = int(rank) - 1; k >= 0; k--) {
      uint dim = meta[m + 6u + uint(k)];
      uint q = r / dim, c = r - q * dim;
      ti += c * meta[m + 14u + uint(k)];
      ii += c * meta[m + 22u + uint(k)];
      r = q;
    }
    bool ok = true;
    for (uint k = 0u; k < K; k++) {
      bool inr;
      ti += load_index(ii + k * KS, meta[m + 38u + k], inr) * meta[m + 30u + k];
      ok = ok && (inr || clamp_ix);
    }
    if (!ok) continue;
    uint wi = ti - meta[m + 48u]; // wraps past the end below the window
    if (wi >= meta[m + 49u]) continue;
#if defined(OP_OWNED)
    if (owner[wi] == i / row_len + 1u) d[ti] = u[i];
#else
    ti = wi;
#endif
#if defined(OP_PUT)
    d[ti] = u[i];
#elif defined(OP_OWNER)
    atomicMax(owner[ti], i / row_len + 1u);
#elif defined(OP_OWNP)
    atomicMax(d[ti], (uint64_t(i / row_len + 1u) << 32) | uint64_t(uint(u[i])));
#elif defined(OP_ADD32)
    atomicAdd(d[ti], u[i]);
#elif defined(OP_ADD64)
    uvec2 v = u[i];
    uint old = atomicAdd(d[2u * ti], v.x);
    uint carry = (old + v.x < old) ? 1u : 0u;
    if (v.y + carry != 0u) atomicAdd(d[2u * ti + 1u], v.y + carry);
#elif defined(OP_ADDFA)
    atomicAdd(d[ti], u[i]);
#elif defined(OP_ADDD)
    double add = uint64BitsToDouble(u[i]);
    uint64_t cur = d[ti];
    for (;;) {
      uint64_t want = doubleBitsToUint64(uint64BitsToDouble(cur) + add);
      uint64_t seen = atomicCompSwap(d[ti], cur, want);
      if (seen == cur) break;
      cur = seen;
    }
#elif defined(OP_ADDF)
    float add = uintBitsToFloat(u[i]);
    uint cur = d[ti];
    for (;;) {
      uint want = floatBitsToUint(uintBitsToFloat(cur) + add);
      uint seen = atomicCompSwap(d[ti], cur, want);
      if (seen == cur) break;
      cur = seen;
    }
#endif
  }
}
#endif
