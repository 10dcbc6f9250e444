#version 450
// copy.comp - strided copy with dtype conversion: transpose, slice,
// concatenate and as_type are all this kernel.  Compiled per (source,
// destination) dtype with -DSRC_<d> -DDST_<d> (f32 f64 i32 u8 at build time,
// every other pair at run time by src/ops/rtkernel.c, which adds
// -DSAME_DTYPE for a bit copy where they are one dtype).
//
// meta: [0] n [1] rank [2] src base [3] dst base [4..11] dims
//       [12..19] src strides [20..27] dst strides (elements)
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#if defined(SRC_f16) || defined(SRC_bf16) || defined(SRC_i16) || defined(SRC_u16) || \
    defined(DST_f16) || defined(DST_bf16) || defined(DST_i16) || defined(DST_u16)
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#endif
#if defined(SRC_i64) || defined(SRC_u64) || defined(DST_i64) || defined(DST_u64)
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#endif
#include "nxmath.glsl"
#include "f16.glsl"

// S / D: compute types; SS / DS: storage; SLD: storage -> compute.
// Classes: *_FLOAT, *_SINT, *_UINT, *_BOOL; *_BITS the integer width.
#if defined(SRC_f32)
#define S float
#define SS float
#define S_FLOAT 1
#elif defined(SRC_f64)
#define S double
#define SS double
#define S_FLOAT 1
#define S_F64 1
#elif defined(SRC_f16)
#define S float
#define SS uint16_t
#define S_FLOAT 1
#define SLD(x) nx_f16_to_f32(uint(x))
#elif defined(SRC_bf16)
#define S float
#define SS uint16_t
#define S_FLOAT 1
#define SLD(x) uintBitsToFloat(uint(x) << 16)
#elif defined(SRC_i8)
#define S int
#define SS int8_t
#elif defined(SRC_i16)
#define S int
#define SS int16_t
#elif defined(SRC_i32)
#define S int
#define SS int
#elif defined(SRC_i64)
#define S int64_t
#define SS int64_t
#elif defined(SRC_u8) || defined(SRC_bool)
#define S uint
#define SS uint8_t
#elif defined(SRC_u16)
#define S uint
#define SS uint16_t
#elif defined(SRC_u32)
#define S uint
#define SS uint
#elif defined(SRC_u64)
#define S uint64_t
#define SS uint64_t
#else
#error "compile with -DSRC_<dtype>"
#endif
#ifndef SLD
#define SLD(x) S(x)
#endif

#if defined(DST_f32)
#define D float
#define DS float
#define D_FLOAT 1
#elif defined(DST_f64)
#define D double
#define DS double
#define D_FLOAT 1
#elif defined(DST_f16)
#define D float
#define DS uint16_t
#define D_FLOAT 1
#define D_HALF 1
#define DSTV(x) uint16_t(nx_f16_bits(floatBitsToUint(x)))
#elif defined(DST_bf16)
#define D float
#define DS uint16_t
#define D_FLOAT 1
#define D_HALF 1
#define DSTV(x) uint16_t(nx_bf16_bits(floatBitsToUint(x)))
#elif defined(DST_i8)
#define D int
#define DS int8_t
#define D_SINT 8
#elif defined(DST_i16)
#define D int
#define DS int16_t
#define D_SINT 16
#elif defined(DST_i32)
#define D int
#define DS int
#define D_SINT 32
#elif defined(DST_i64)
#define D int64_t
#define DS int64_t
#define D_SINT 64
#elif defined(DST_u8)
#define D uint
#define DS uint8_t
#define D_UINT 8
#elif defined(DST_bool)
#define D uint
#define DS uint8_t
#define D_BOOL 1
#elif defined(DST_u16)
#define D uint
#define DS uint16_t
#define D_UINT 16
#elif defined(DST_u32)
#define D uint
#define DS uint
#define D_UINT 32
#elif defined(DST_u64)
#define D uint64_t
#define DS uint64_t
#define D_UINT 64
#else
#error "compile with -DDST_<dtype>"
#endif
#ifndef DSTV
#define DSTV(x) DS(x)
#endif

layout(local_size_x_id = 0) in;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) readonly buffer Src { SS s[]; };
layout(std430, binding = 2) writeonly buffer Dst { DS d[]; };

// The conversions as_type documents (nxvk-run(1), AS_TYPE): anything -> bool
// is x != 0 (NaN: true); float -> int: NaN -> 0, toward zero, saturating at
// the type's range; int -> int wraps (two's complement); -> f16 / bf16
// rounds to nearest even (f64 through f32 rounded to odd, so only once;
// integers through f32); everything else rounds to nearest.
#if defined(S_F64) && defined(D_HALF)
float to_f32_odd(double x) {
  float f = nx_f64_to_f32(x);                 // on the bits: no flushing
  double back = nx_f32_to_f64(f);
  if (isnan(x) || isinf(f) || back == x) return f;
  uint b = floatBitsToUint(f);
  if (abs(back) > abs(x)) b -= 1u;
  return uintBitsToFloat(b | 1u);
}
#endif

D convert(S x) {
#if defined(D_BOOL) && defined(S_F64)
  uvec2 w = unpackDouble2x32(x);  // on the bits: a flushing driver reads a denormal as 0
  return ((w.y & 0x7fffffffu) | w.x) != 0u ? 1u : 0u;
#elif defined(D_BOOL) && defined(S_FLOAT)
  return (floatBitsToUint(x) & 0x7fffffffu) != 0u ? 1u : 0u;  // likewise; NaN is true
#elif defined(D_BOOL)
  return x != S(0) ? 1u : 0u;
#elif defined(D_FLOAT) && defined(S_F64) && defined(D_HALF)
  return to_f32_odd(x);
#elif defined(DST_f64) && defined(S_FLOAT) && !defined(S_F64)
  return nx_f32_to_f64(x); // from the bits: a flushing driver's conversion drops denormals
#elif defined(SRC_f64) && defined(DST_f32)
  return nx_f64_to_f32(x); // rounded on the bits, denormal results included
#elif defined(D_FLOAT) || !defined(S_FLOAT)
  return D(x);            // float -> float, int -> float, int -> int (wraps in the store)
#elif defined(D_SINT)
  if (isnan(x)) return D(0);
#if D_SINT == 64
  if (x >= S(9223372036854775808.0)) return D(0x7fffffffffffffffl);
  if (x <= S(-9223372036854775808.0)) return D(0x8000000000000000ul);
#else
  if (x >= S(1u << (D_SINT - 1))) return D((1u << (D_SINT - 1)) - 1u);
  if (x <= -S(1u << (D_SINT - 1))) return D(-int((1u << (D_SINT - 1)) - 1u) - 1);
#endif
  return D(x);
#elif defined(D_UINT)
  if (isnan(x) || x <= S(0)) return D(0);
#if D_UINT == 64
  if (x >= S(18446744073709551616.0)) return D(0xfffffffffffffffful);
#elif D_UINT == 32
  if (x >= S(4294967296.0)) return D(0xffffffffu);
#else
  if (x >= S(1u << D_UINT)) return D((1u << D_UINT) - 1u);
#endif
  return D(x);
#endif
}

void main() {
  uint m = pc.meta_off;
  uint n = meta[m], rank = meta[m + 1u], sbase = meta[m + 2u], dbase = meta[m + 3u];
  uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < n; i += step) {
    uint si = sbase, di = dbase, r = i;
    for (int k = int(rank) - 1; k >= 0; k--) {
      uint dim = meta[m + 4u + uint(k)];
      uint q = r / dim, c = r - q * dim;
      si += c * meta[m + 12u + uint(k)];
      di += c * meta[m + 20u + uint(k)];
      r = q;
    }
#if defined(SAME_DTYPE)
    d[di] = s[si];          // movement keeps the bits (NaN payloads, -0)
#else
    d[di] = DSTV(convert(SLD(s[si])));
#endif
  }
}
