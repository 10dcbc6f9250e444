// dtype.glsl - maps the -DDT_<dtype> a variant is compiled with to its GLSL
// types: T (compute), ST (storage), and the extremes reductions start from.
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
#elif defined(DT_i32)
#define T int
#define ST int
#define T_LOWEST int(0x80000000u)
#define T_HIGHEST 0x7fffffff
#elif defined(DT_u8)
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#define T uint
#define ST uint8_t
#define T_LOWEST 0u
#define T_HIGHEST 255u
#else
#error "compile with -DDT_f32, -DDT_f64, -DDT_i32 or -DDT_u8"
#endif

#ifdef IS_FLOAT
bool t_isnan(T x) { return isnan(x); }
#else
bool t_isnan(T x) { return false; }
#endif
// The sign bit, read from the bits so no compiler treats -0 as +0.
#if defined(DT_f32)
bool t_signbit(T x) { return (floatBitsToUint(x) >> 31) != 0u; }
#elif defined(DT_f64)
bool t_signbit(T x) { return (unpackDouble2x32(x).y >> 31) != 0u; }
#else
bool t_signbit(T x) { return false; }
#endif
