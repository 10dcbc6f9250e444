// index.glsl - what gather.comp and scatter.comp share: the index buffer in
// any integer dtype, read as a position clamped into [0, lim] with a flag
// saying whether it was in range (no int64 arithmetic: 64-bit indices are
// read as two words).  Compile with -DIX_<dtype>; binding IDX_BINDING.
#if defined(IX_i8) || defined(IX_u8)
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#endif
#if defined(IX_i16) || defined(IX_u16)
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#endif

#if defined(IX_i8)
#define IXS int8_t
#define IX_SIGNED 1
#elif defined(IX_i16)
#define IXS int16_t
#define IX_SIGNED 1
#elif defined(IX_i32)
#define IXS int
#define IX_SIGNED 1
#elif defined(IX_u8)
#define IXS uint8_t
#elif defined(IX_u16)
#define IXS uint16_t
#elif defined(IX_u32)
#define IXS uint
#elif defined(IX_i64)
#define IXS uvec2
#define IX_WIDE 1
#define IX_SIGNED 1
#elif defined(IX_u64)
#define IXS uvec2
#define IX_WIDE 1
#else
#error "compile with -DIX_<integer dtype>"
#endif

layout(std430, binding = IDX_BINDING) readonly buffer Idx { IXS ix[]; };

// The index at element off, clamped into [0, lim]; inr: it was in range.
uint load_index(uint off, uint lim, out bool inr) {
#if defined(IX_WIDE)
  uvec2 v = ix[off];
#if defined(IX_SIGNED)
  if ((v.y & 0x80000000u) != 0u) { inr = false; return 0u; }
#endif
  if (v.y != 0u || v.x > lim) { inr = false; return lim; }
  inr = true;
  return v.x;
#elif defined(IX_SIGNED)
  int x = int(ix[off]);
  if (x < 0) { inr = false; return 0u; }
  inr = uint(x) <= lim;
  return min(uint(x), lim);
#else
  uint x = uint(ix[off]);
  inr = x <= lim;
  return min(x, lim);
#endif
}
