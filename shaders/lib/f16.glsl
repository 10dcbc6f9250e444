// f16.glsl - f16 and bf16 on the bits: rounding f32 to them, f16 to f32
// (shaders/dot_coopmat.comp).  Written in the common subset of GLSL and C11
// so tests/unit/test_f16.c compiles this very code (through glsl_compat.h)
// and checks it against numpy's float16.  Vulkan leaves the rounding of
// float -> float16_t conversions to the implementation; this is IEEE 754
// convertFormat with round to nearest, ties to even, whatever the device.
#ifndef NXVK_F16_GLSL
#define NXVK_F16_GLSL
#ifndef NXMATH_C
#define NXFN
#define NX_FLOAT_OF(x) float(x)
#else
#define NX_FLOAT_OF(x) ((float)(x))
#endif

// f32 bits -> f16 bits: |x| >= 65520 (the tie above 65504 goes to even) and
// inf -> inf, f16 subnormals kept (below 2^-25 and at it -> zero), the sign
// of zero kept, NaN -> NaN with the top payload bits (quiet if none are left).
NXFN uint nx_f16_bits(uint x) {
  uint sign = (x >> 16) & 0x8000u;
  uint ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) {
    uint nan = 0x7c00u | ((ax >> 13) & 0x3ffu);
    return sign | (nan == 0x7c00u ? 0x7e00u : nan);
  }
  if (ax >= 0x477ff000u) return sign | 0x7c00u;
  if (ax >= 0x38800000u) {               // a normal f16: rebias the exponent, round off 13 bits
    uint r = ax - 0x38000000u;
    uint h = r >> 13, rem = r & 0x1fffu;
    h += (rem > 0x1000u || (rem == 0x1000u && (h & 1u) != 0u)) ? 1u : 0u;
    return sign | h;                     // a carry into the exponent is right
  }
  if (ax < 0x33000000u) return sign;     // below 2^-25
  uint e = ax >> 23;                     // an f16 subnormal, in units of 2^-24
  uint m = (ax & 0x7fffffu) | 0x800000u;
  uint s = 126u - e;                     // 14 .. 24
  uint h = m >> s, rem = m & ((1u << s) - 1u), half_ulp = 1u << (s - 1u);
  h += (rem > half_ulp || (rem == half_ulp && (h & 1u) != 0u)) ? 1u : 0u;
  return sign | h;                       // rounding up to 2^-14 gives its normal encoding
}

// f16 bits -> f32, exact (subnormals through an exact product, so a driver
// that flushes f32 subnormals still gets them: they are normal f32 values).
// Selects, no branches: every element of an f16 kernel goes through here.
NXFN float nx_f16_to_f32(uint h) {
  uint sign = (h & 0x8000u) << 16;
  uint em = h & 0x7fffu;
  // normal: exponent and mantissa up 13 bits, rebiased (+112); inf and NaN
  // (payload kept): exponent 255
  uint bits = (em << 13) + (em >= 0x7c00u ? 0x70000000u : 0x38000000u);
  float sub = NX_FLOAT_OF(em) * 5.9604644775390625e-8;   // em * 2^-24, exact
  return uintBitsToFloat((em < 0x400u ? floatBitsToUint(sub) : bits) | sign);
}

// f32 bits -> bf16 bits: to nearest, ties to even (overflow carries into
// inf); NaN keeps its sign and top payload bits, quiet bit set.
NXFN uint nx_bf16_bits(uint x) {
  if ((x & 0x7fffffffu) > 0x7f800000u) return (x >> 16) | 0x40u;
  return (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
}

// x rounded to the nearest f16 / bf16 value, as f32.
NXFN float nx_f16_round(float x) { return nx_f16_to_f32(nx_f16_bits(floatBitsToUint(x))); }
NXFN float nx_bf16_round(float x) { return uintBitsToFloat(nx_bf16_bits(floatBitsToUint(x)) << 16); }

// The driver's own conversions (NXVK_F16_CVT=hw, src/ops/tuning.c): where
// the device promises round to nearest even for 16-bit floats (and the
// kernel says so: RoundingModeRTE 16), f32 -> f16 is one instruction for
// two values instead of ~20 integer operations each.  NX_F16_HW 2: the
// device also promises f16 subnormals (DenormPreserve 16); 1: it does not,
// so words with an f16 subnormal in or out go through the functions above.
// The bits equal those functions' except NaN payloads (a NaN stays a NaN;
// which one is the driver's, as for every f32 op).  GLSL only.
#if defined(NX_F16_HW) && !defined(NXMATH_C)
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_spirv_intrinsics : require
// OpExecutionMode RoundingModeRTE (4462) 16, capability RoundingModeRTE (4467)
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4467], 4462, 16);
#if NX_F16_HW == 2
// OpExecutionMode DenormPreserve (4459) 16, capability DenormPreserve (4464)
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4464], 4459, 16);
#endif

// the two f16 of a word (element 0 in the low half) -> f32, exact
vec2 nx_f16x2_to_f32(uint w) {
  vec2 r = vec2(unpackFloat2x16(w));
#if NX_F16_HW != 2
  uint e = w & 0x7c007c00u, m = w & 0x03ff03ffu;
  if (((e & 0xffffu) == 0u && (m & 0xffffu) != 0u) || ((e >> 16) == 0u && (m >> 16) != 0u))
    r = vec2(nx_f16_to_f32(w & 0xffffu), nx_f16_to_f32(w >> 16));
#endif
  return r;
}

// two f32 -> their f16 bits in one word (lo in the low half), each rounded
// once to nearest even
uint nx_f32x2_to_f16(float lo, float hi) {
  uint bl = floatBitsToUint(lo), bh = floatBitsToUint(hi);
  uint w = packFloat2x16(f16vec2(vec2(lo, hi)));
  // the sign of an f32 subnormal a flushing device read as zero (every
  // other result already has its operand's sign)
  w |= ((bl >> 16) & 0x8000u) | (bh & 0x80000000u);
#if NX_F16_HW != 2
  // an f16 subnormal result: 2^-25 < |x| < 2^-14
  if ((bl & 0x7fffffffu) - 0x33000001u < 0x057fffffu || (bh & 0x7fffffffu) - 0x33000001u < 0x057fffffu)
    w = nx_f16_bits(bl) | (nx_f16_bits(bh) << 16);
#endif
  return w;
}

// the same for two values neither of which is an f32 subnormal (nx.glsl's
// nx16_* results): no sign to restore
uint nx_f32x2_to_f16n(float lo, float hi) {
#if NX_F16_HW == 2
  return packFloat2x16(f16vec2(vec2(lo, hi)));
#else
  return nx_f32x2_to_f16(lo, hi);
#endif
}

#if NX_F16_HW == 2
// a + b, a - b, a * b of the two f16 of words a and b, in f16 arithmetic
// (codegen.c, NXVK_EW16 f16x2): IEEE f16 operations round the exact
// result once (the kernel declares RTE and DenormPreserve 16), which is
// numpy's f32 result rounded to f16: a product of two f16 is exact in f32,
// and for sums f32's 24 bits >= 2 * 11 + 2 make the double rounding
// innocuous.  The same bits but NaN payloads.
uint nx16x2_add(uint a, uint b) {
  precise f16vec2 r = unpackFloat2x16(a) + unpackFloat2x16(b);
  return packFloat2x16(r);
}
uint nx16x2_sub(uint a, uint b) {
  precise f16vec2 r = unpackFloat2x16(a) - unpackFloat2x16(b);
  return packFloat2x16(r);
}
uint nx16x2_mul(uint a, uint b) {
  precise f16vec2 r = unpackFloat2x16(a) * unpackFloat2x16(b);
  return packFloat2x16(r);
}
#endif

// x rounded to the nearest f16 value, as f32 (nx_f16_round's bits)
float nx_f16_round_hw(float x) { return nx_f16x2_to_f32(nx_f32x2_to_f16(x, 0.0)).x; }
#endif
#endif
