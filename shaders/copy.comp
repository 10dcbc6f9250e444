#version 450
// copy.comp - strided copy with dtype conversion: transpose, slice,
// concatenate and as_type are all this kernel.  Compiled per (source,
// destination) dtype with -DSRC_<d> -DDST_<d>.
//
// meta: [0] n [1] rank [2] src base [3] dst base [4..11] dims
//       [12..19] src strides [20..27] dst strides (elements)
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_GOOGLE_include_directive : require
#include "nxmath.glsl"

#if defined(SRC_f32)
#define S float
#define SS float
#elif defined(SRC_f64)
#define S double
#define SS double
#elif defined(SRC_i32)
#define S int
#define SS int
#else
#define S uint
#define SS uint8_t
#endif
#if defined(DST_f32)
#define D float
#define DS float
#elif defined(DST_f64)
#define D double
#define DS double
#elif defined(DST_i32)
#define D int
#define DS int
#else
#define D uint
#define DS uint8_t
#endif

layout(local_size_x_id = 0) in;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) readonly buffer Src { SS s[]; };
layout(std430, binding = 2) writeonly buffer Dst { DS d[]; };

// The conversions as_type documents: NaN -> 0; float -> i32 and u8 saturate;
// i32 -> u8 wraps (mod 256); everything else rounds to nearest.
D convert(S x) {
#if (defined(SRC_f32) || defined(SRC_f64)) && defined(DST_i32)
  if (isnan(x)) return 0;
  if (x >= S(2147483648.0)) return 0x7fffffff;
  if (x <= S(-2147483648.0)) return int(0x80000000u);
  return int(x);
#elif (defined(SRC_f32) || defined(SRC_f64)) && defined(DST_u8)
  if (isnan(x) || x <= S(0)) return 0u;
  if (x >= S(255)) return 255u;
  return uint(x);
#elif defined(SRC_i32) && defined(DST_u8)
  return uint(x) & 255u;
#elif defined(SRC_f32) && defined(DST_f64)
  return nx_f32_to_f64(x); // from the bits: a flushing driver's conversion drops denormals
#elif defined(SRC_f64) && defined(DST_f32)
  return nx_f64_to_f32(x); // rounded on the bits, denormal results included
#else
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
    d[di] = DS(convert(S(s[si])));
  }
}
