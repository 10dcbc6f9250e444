// dtype.glsl - maps the -DDT_<dtype> a variant is compiled with to its GLSL
// types: T (compute), ST (storage), LD(x) / STV(x) between them, and the
// extremes reductions start from.  f16 and bf16 compute in float (their bits
// in uint16_t storage), narrow integers in int / uint (the store wraps them),
// i64 / u64 natively (GL_EXT_shader_explicit_arithmetic_types_int64; the
// device needs shaderInt64).  Every dtype other than f32 f64 i32 u8 is
// compiled at run time (src/ops/rtkernel.c), which inserts this text.
#if defined(DT_f16) || defined(DT_bf16) || defined(DT_i16) || defined(DT_u16)
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#endif
#if defined(DT_u8) || defined(DT_i8) || defined(DT_bool)
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#endif
#if defined(DT_i64) || defined(DT_u64)
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#endif
#include "f16.glsl"

#if defined(DT_f32)
#define T float
#define ST float
#define IS_FLOAT 1
#define T_LOWEST uintBitsToFloat(0xff800000u)
#define T_HIGHEST uintBitsToFloat(0x7f800000u)
#elif defined(DT_f64)
#define T double
#define ST double
#define IS_FLOAT 1
#define T_LOWEST packDouble2x32(uvec2(0u, 0xfff00000u))
#define T_HIGHEST packDouble2x32(uvec2(0u, 0x7ff00000u))
#elif defined(DT_f16)
#define T float
#define ST uint16_t
#define IS_FLOAT 1
#define LD(x) nx_f16_to_f32(uint(x))
#define STV(x) uint16_t(nx_f16_bits(floatBitsToUint(x)))
#define T_LOWEST uintBitsToFloat(0xff800000u)
#define T_HIGHEST uintBitsToFloat(0x7f800000u)
#elif defined(DT_bf16)
#define T float
#define ST uint16_t
#define IS_FLOAT 1
#define LD(x) uintBitsToFloat(uint(x) << 16)
#define STV(x) uint16_t(nx_bf16_bits(floatBitsToUint(x)))
#define T_LOWEST uintBitsToFloat(0xff800000u)
#define T_HIGHEST uintBitsToFloat(0x7f800000u)
#elif defined(DT_i32)
#define T int
#define ST int
#define T_LOWEST int(0x80000000u)
#define T_HIGHEST 0x7fffffff
#elif defined(DT_i8)
#define T int
#define ST int8_t
#define STV(x) int8_t(bitfieldExtract(int(x), 0, 8))
#define T_LOWEST (-128)
#define T_HIGHEST 127
#elif defined(DT_i16)
#define T int
#define ST int16_t
#define STV(x) int16_t(bitfieldExtract(int(x), 0, 16))
#define T_LOWEST (-32768)
#define T_HIGHEST 32767
#elif defined(DT_i64)
#define T int64_t
#define ST int64_t
#define T_LOWEST int64_t(0x8000000000000000ul)
#define T_HIGHEST 0x7fffffffffffffffl
#elif defined(DT_u8)
#define T uint
#define ST uint8_t
#define STV(x) uint8_t(uint(x) & 255u)
#define T_LOWEST 0u
#define T_HIGHEST 255u
#elif defined(DT_bool)
#define T uint
#define ST uint8_t
#define STV(x) uint8_t(uint(x) != 0u ? 1u : 0u)
#define T_LOWEST 0u
#define T_HIGHEST 1u
#elif defined(DT_u16)
#define T uint
#define ST uint16_t
#define STV(x) uint16_t(uint(x) & 65535u)
#define T_LOWEST 0u
#define T_HIGHEST 65535u
#elif defined(DT_u32)
#define T uint
#define ST uint
#define T_LOWEST 0u
#define T_HIGHEST 0xffffffffu
#elif defined(DT_u64)
#define T uint64_t
#define ST uint64_t
#define T_LOWEST 0ul
#define T_HIGHEST 0xfffffffffffffffful
#else
#error "compile with -DDT_<dtype> (f16 bf16 f32 f64 i8 i16 i32 i64 u8 u16 u32 u64 bool)"
#endif
#ifndef LD
#define LD(x) T(x)
#endif
#ifndef STV
#define STV(x) ST(x)
#endif

#ifdef IS_FLOAT
bool t_isnan(T x) { return isnan(x); }
#else
bool t_isnan(T x) { return false; }
#endif
// The sign bit, read from the bits so no compiler treats -0 as +0.
#if defined(DT_f32) || defined(DT_f16) || defined(DT_bf16)
bool t_signbit(T x) { return (floatBitsToUint(x) >> 31) != 0u; }
#elif defined(DT_f64)
bool t_signbit(T x) { return (unpackDouble2x32(x).y >> 31) != 0u; }
#else
bool t_signbit(T x) { return false; }
#endif
// a < b for values that are not NaN, on the bits: a driver that flushes
// denormals (NVIDIA) would compare a denormal as 0, and -0 orders below +0
// here, which gives max +0 and min -0 of two zeros in any order.
#if defined(DT_f32) || defined(DT_f16) || defined(DT_bf16)
int t_key(T x) {
  int k = floatBitsToInt(x);
  return k < 0 ? k ^ 0x7fffffff : k;
}
bool t_less(T a, T b) { return t_key(a) < t_key(b); }
#elif defined(DT_f64)
bool t_less(T a, T b) {
  uvec2 ua = unpackDouble2x32(a), ub = unpackDouble2x32(b);
  if ((ua.y >> 31) != 0u) ua = uvec2(~ua.x, ua.y ^ 0x7fffffffu);
  if ((ub.y >> 31) != 0u) ub = uvec2(~ub.x, ub.y ^ 0x7fffffffu);
  return int(ua.y) < int(ub.y) || (ua.y == ub.y && ua.x < ub.x);
}
#else
bool t_less(T a, T b) { return a < b; }
#endif
