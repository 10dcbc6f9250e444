// nx.glsl - the overloaded nx_* names the op table's expressions use, for
// float, double, int and uint (u8).  Every f32 and f64 function is ours
// (nxmath.glsl); the driver's built-ins only give estimates that our code
// corrects.
// glslang drops functions a shader does not call, so an f32 shader that
// includes the double overloads still never asks the device for Float64.

// ---- f32
// Every f32 op is nxvk's own code (nxmath.glsl), never the driver's
// transcendental built-ins, and correct on a driver that flushes denormals
// (shaderDenormPreserveFloat32 = false): add, subtract, multiply, divide,
// sqrt bit-identical to IEEE; comparisons, abs, negate, sign, max, min,
// select, floor, ceil on the bits.
// numpy's maximum/minimum: a NaN operand wins, ties give b (so the sign of
// equal zeros comes from b); sign(±0) is +0 and sign(NaN) is NaN.
float nx_add(float a, float b) { return nxf_add(a, b); }
float nx_sub(float a, float b) { return nxf_sub(a, b); }
float nx_mul(float a, float b) { return nxf_mul(a, b); }
float nx_neg(float a) { return nx_negf(a); }
bool nx_eq(float a, float b) { return nxf_eq(a, b); }
bool nx_lt(float a, float b) { return nxf_lt(a, b); }
bool nx_le(float a, float b) { return nxf_le(a, b); }
float nx_sel(uint c, float a, float b) { return uintBitsToFloat(c != 0u ? floatBitsToUint(a) : floatBitsToUint(b)); }
float nx_max(float a, float b) {
  return nx_isnanf(a) ? a : (nx_isnanf(b) ? b : (nx_keyf(a) > nx_keyf(b) ? a : b));
}
float nx_min(float a, float b) {
  return nx_isnanf(a) ? a : (nx_isnanf(b) ? b : (nx_keyf(a) < nx_keyf(b) ? a : b));
}
float nx_sign(float a) {
  uint u = floatBitsToUint(a);
  if ((u & 0x7fffffffu) > 0x7f800000u) return a;
  if ((u & 0x7fffffffu) == 0u) return 0.0;
  return uintBitsToFloat((u & 0x80000000u) | 0x3f800000u);
}
float nx_div(float a, float b) { return nxf_div(a, b); }
float nx_rem(float a, float b) { return nxf_rem(a, b); }
float nx_pow(float a, float b) { return nxf_pow(a, b); }
float nx_atan2(float a, float b) { return nxf_atan2(a, b); }
float nx_exp(float a) { return nxf_exp(a); }
float nx_log(float a) { return nxf_log(a); }
float nx_sqrt(float a) { return nxf_sqrt(a); }
float nx_rsqrt(float a) { return nxf_rsqrt(a); }
float nx_sin(float a) { return nxf_sin(a); }
float nx_cos(float a) { return nxf_cos(a); }
float nx_abs(float a) { return nx_absf(a); }
float nx_floor(float a) { return nxf_floor(a); }
float nx_ceil(float a) { return nxf_ceil(a); }
float nx_sigmoid(float a) { return nxf_sigmoid(a); }
float nx_tanh(float a) { return nxf_tanh(a); }
float nx_round(float a) { return nxf_round(a); }
float nx_expm1(float a) { return nxf_expm1(a); }
float nx_log1p(float a) { return nxf_log1p(a); }
float nx_erf(float a) { return nxf_erf(a); }
float nx_tan(float a) { return nxf_tan(a); }
float nx_asin(float a) { return nxf_asin(a); }
float nx_acos(float a) { return nxf_acos(a); }
float nx_atan(float a) { return nxf_atan(a); }
float nx_sinh(float a) { return nxf_sinh(a); }
float nx_cosh(float a) { return nxf_cosh(a); }
float nx_asinh(float a) { return nxf_asinh(a); }
float nx_acosh(float a) { return nxf_acosh(a); }
float nx_atanh(float a) { return nxf_atanh(a); }
float nx_cbrt(float a) { return nxf_cbrt(a); }
float nx_erfc(float a) { return nxf_erfc(a); }
float nx_erf_inv(float a) { return nxf_erf_inv(a); }

// ---- f16 and bf16: cheaper forms of the f32 functions above where the
// operands are f16 or bf16 values (NXVK_EW16, src/ops/tuning.c; codegen.c
// calls them).  Each returns an f32 that rounds to the same f16 / bf16 as
// the f32 function's result, so every stored or fused value is unchanged.
// fz (NXVK_EW16=fuzz, a test mode): act as the worst device the Vulkan spec
// allows, f32 denormal operands and results flushed, exp2 4 ULP off.
float nx16_ftz(float x, bool fz) {
  uint u = floatBitsToUint(x);
  return fz && (u & 0x7f800000u) == 0u ? uintBitsToFloat(u & 0x80000000u) : x;
}
// a + b, a - b, a * b of two f16 values: the driver's f32 operation alone.
// Proof that no f32 denormal can occur, so a flushing device (NVIDIA,
// shaderDenormPreserveFloat32 = false) computes the IEEE f32 result that
// nxf_add / nxf_mul return: an f16 value widened is 0, inf, NaN or a
// multiple of 2^-24 of magnitude >= 2^-24 (f16's least subnormal), a normal
// f32; a sum or difference of two such is a multiple of 2^-24, so 0 or
// >= 2^-24 in magnitude, and rounding to f32 keeps it there; a product is 0
// or >= 2^-48 (and <= 65504^2, finite).  (Rounding the f32 result to f16 is
// what numpy does; it equals rounding the exact result once, as f32's 24
// bits >= 2 * 11 + 2 make double rounding innocuous for + - *.)
float nx16_add(float a, float b, bool fz) {
  precise float r = nx16_ftz(a, fz) + nx16_ftz(b, fz);
  return nx16_ftz(r, fz);
}
float nx16_sub(float a, float b, bool fz) {
  precise float r = nx16_ftz(a, fz) - nx16_ftz(b, fz);
  return nx16_ftz(r, fz);
}
float nx16_mul(float a, float b, bool fz) {
  precise float r = nx16_ftz(a, fz) * nx16_ftz(b, fz);
  return nx16_ftz(r, fz);
}
// bf16: may the driver's + - * take both word pairs (two bf16 of a and of
// b each)?  Yes when each of the four operands is 0 or at least 2^-118 in
// magnitude (thr 0x047f047f: add, subtract) or 2^-63 (0x1fff1fff:
// multiply), and inf and NaN pass.  Then no f32 denormal occurs, the same
// argument as f16's: bf16 values from 2^-118 up are multiples of 2^-125, so
// a sum is 0 or >= 2^-125; a product of values >= 2^-63 is >= 2^-126.
// Else (a bf16 subnormal or tiny operand, rare) ew_eval does it.  Per half
// x = bits & 0x7fff: x + 0x7fff (no carry out) | 0x8000 is 0xffff for x = 0
// and 0x7fff + x for x >= 1; minus thr it keeps bit 15 exactly when x = 0
// or x > thr.
bool nx16_bf_ok(uint a, uint b, uint thr) {
  uint ta = (((a & 0x7fff7fffu) + 0x7fff7fffu) | 0x80008000u) - thr;
  uint tb = (((b & 0x7fff7fffu) + 0x7fff7fffu) | 0x80008000u) - thr;
  return (ta & tb & 0x80008000u) == 0x80008000u;
}
// e^x for an f16 (bf false) or bf16 (bf true) value x: the driver's exp2
// on a reduced argument, and nxf_exp only where that result may round to a
// different 16-bit value than nxf_exp's would.
//   x log2(e) = a + b: a = x L1 exact (L1 = 2955/2048 has 12 bits, x at
//   most 11), b = x L2 (L2 = log2(e) - L1 to 2^-36 relative); k = the
//   integer nearest a, f = (a - k) + b (a - k exact), |f| <= 0.52; e^x =
//   2^k 2^f, 2^k added to the exponent bits.  Error of y: f's roundings
//   (2^-25 absolute: 0.7 ULP of y) plus exp2's, <= 3 + 2|f| < 4.1 ULP by
//   the Vulkan spec's precision table whatever the device: < 4.8 ULP in
//   all; nxf_exp is <= 1 ULP, so the two differ by < 5.8 ULP.
//   y is taken unless its bits below the 16-bit precision (13 for f16
//   normal results, more for f16 subnormals, 16 for bf16) lie within 8 ULP
//   of the midpoint pattern, where the two could round apart.  Ranges:
//   f16's x is clamped to [-18, 12] (e^-18 < 2^-25 / 1.9 rounds to 0,
//   e^12 > 65520 to inf, both also after the error), so y is a normal f32
//   from 2^-27 to 2^18; bf16's x outside [-87, 88.5] (bf16 subnormal, or
//   near f32 overflow) and NaN take nxf_exp.  A flushing device changes
//   nothing: a, b, f and y are normal or 0, and a bf16 subnormal x read as
//   0 gives y = 1 +- 4 ULP, which rounds to 1 as e^x does.
float nx16_exp(float x, bool bf, bool fz) {
  float xc = nx16_ftz(bf ? x : clamp(x, -18.0, 12.0), fz);
  float a = nx16_ftz(xc * 1.44287109375, fz);
  float b = nx16_ftz(xc * uintBitsToFloat(0xb9389ad4u), fz);
  float kf = floor(a + 0.5);
  float f = nx16_ftz((a - kf) + b, fz);
  uint e2 = floatBitsToUint(exp2(f));
  if (fz) e2 += ((floatBitsToUint(x) * 0x9e3779b1u) >> 31) != 0u ? 4u : 0xfffffffcu;
  uint y = e2 + (uint(int(kf)) << 23);
  bool rare;
  if (bf) {
    rare = nx_isnanf(x) || !(x >= -87.0 && x <= 88.5) || (y & 0xffffu) + 8u - 0x8000u < 16u;
  } else {
    uint sh = uint(clamp(int(y >> 23) - 94, 0, 19));   // 32 - bits below f16 precision
    uint t = 8u << sh;                                  // 8 ULP of y, in those bits
    rare = nx_isnanf(x) || (((y & 0x7fffffu) | 0x800000u) << sh) + t - 0x80000000u < 2u * t;
  }
  if (rare) return nxf_exp(x);
  return uintBitsToFloat(y);
}

// The same e^x split in two for kernels that take the exact path out of
// their unrolled loop (NXVK_EW16_SPLIT, codegen.c): nx16_exp_y gives y's
// bits, nx16_exp_rare whether nxf_exp must replace them (the tests of
// nx16_exp).  k by adding 1.5 2^23 (round to nearest even, |a - k| <= 1/2
// as before; k lies in the low bits of the sum, so k << 23 is the sum's
// bits shifted) instead of floor and a conversion; |a| < 2^22 wherever y is
// taken (f16 x is clamped, bf16 x outside [-87, 88.5] is rare).
uint nx16_exp_y(float x, bool bf, bool fz) {
  float xc = nx16_ftz(bf ? x : clamp(x, -18.0, 12.0), fz);
  float a = nx16_ftz(xc * 1.44287109375, fz);
  float b = nx16_ftz(xc * uintBitsToFloat(0xb9389ad4u), fz);
  precise float t = a + 12582912.0;
  precise float kf = t - 12582912.0;
  float f = nx16_ftz((a - kf) + b, fz);
  uint e2 = floatBitsToUint(exp2(f));
  if (fz) e2 += ((floatBitsToUint(x) * 0x9e3779b1u) >> 31) != 0u ? 4u : 0xfffffffcu;
  return e2 + (floatBitsToUint(t) << 23);
}
bool nx16_exp_rare(float x, uint y, bool bf) {
  if (bf) return !(x >= -87.0 && x <= 88.5) || (y & 0xffffu) + 8u - 0x8000u < 16u;
  uint sh = uint(clamp(int(y >> 23) - 94, 0, 19));
  uint t = 8u << sh;
  return nx_isnanf(x) || (((y & 0x7fffffu) | 0x800000u) << sh) + t - 0x80000000u < 2u * t;
}
#if defined(NX_F16_HW)
// f16, two elements of a word with the driver's conversions: y's bits 8
// below and 8 above, each rounded to f16 (RTE 16); where the two words are
// equal no 16-bit rounding boundary lies within 8 ULP of y (rounding is
// monotone), the test nx16_exp_rare makes, and either word is the result.
// Without DenormPreserve 16 (NX_F16_HW 1) results below 2^-14 are rare too.
bool nx16_exp2_hw(uint w, bool fz, out uint r) {
  vec2 x = nx_f16x2_to_f32(w);
  uint y0 = nx16_exp_y(x.x, false, fz), y1 = nx16_exp_y(x.y, false, fz);
  uint lo = packFloat2x16(f16vec2(vec2(uintBitsToFloat(y0 - 8u), uintBitsToFloat(y1 - 8u))));
  r = packFloat2x16(f16vec2(vec2(uintBitsToFloat(y0 + 8u), uintBitsToFloat(y1 + 8u))));
  bool rare = lo != r || nx_isnanf(x.x) || nx_isnanf(x.y);
#if NX_F16_HW != 2
  rare = rare || min(y0, y1) < 0x38800008u;
#endif
  return rare;
}
#endif
// bf16, two elements of a word: y's bits rounded to nearest by adding half
// a bf16 ULP (no tie, NaN or overflow where the result is taken)
bool nx16_exp2_bf(uint w, bool fz, out uint r) {
  float x0 = uintBitsToFloat(w << 16), x1 = uintBitsToFloat(w & 0xffff0000u);
  uint y0 = nx16_exp_y(x0, true, fz), y1 = nx16_exp_y(x1, true, fz);
  r = ((y0 + 0x8000u) >> 16) | ((y1 + 0x8000u) & 0xffff0000u);
  return nx16_exp_rare(x0, y0, true) || nx16_exp_rare(x1, y1, true);
}
// f16 without the driver's conversions
bool nx16_exp2_sw(uint w, bool fz, out uint r) {
  float x0 = nx_f16_to_f32(w & 0xffffu), x1 = nx_f16_to_f32(w >> 16);
  uint y0 = nx16_exp_y(x0, false, fz), y1 = nx16_exp_y(x1, false, fz);
  r = nx_f16_bits(y0) | (nx_f16_bits(y1) << 16);
  return nx16_exp_rare(x0, y0, false) || nx16_exp_rare(x1, y1, false);
}

// ---- f64: the same guarantees as f32 on a driver that flushes f64
// denormals (shaderDenormPreserveFloat64 = false): add, subtract, multiply,
// divide, sqrt bit-identical to IEEE (divide and sqrt correctly rounded on
// every driver); comparisons, abs, negate, sign, max, min, select, floor,
// ceil on the bits (nxmath.glsl's nxd_*).
double nx_add(double a, double b) { return nxd_add(a, b); }
double nx_sub(double a, double b) { return nxd_sub(a, b); }
double nx_mul(double a, double b) { return nxd_mul(a, b); }
double nx_neg(double a) { return nx_negd(a); }
bool nx_eq(double a, double b) { return nxd_eq(a, b); }
bool nx_lt(double a, double b) { return nxd_lt(a, b); }
bool nx_le(double a, double b) { return nxd_le(a, b); }
double nx_sel(uint c, double a, double b) {
  return packDouble2x32(c != 0u ? unpackDouble2x32(a) : unpackDouble2x32(b));
}
double nx_sqrt(double a) { return nxd_sqrt(a); }
double nx_floor(double a) { return nxd_floor(a); }
double nx_ceil(double a) { return nxd_ceil(a); }
double nx_max(double a, double b) { return nx_isnand(a) ? a : (nx_isnand(b) ? b : (nxd_lt(b, a) ? a : b)); }
double nx_min(double a, double b) { return nx_isnand(a) ? a : (nx_isnand(b) ? b : (nxd_lt(a, b) ? a : b)); }
double nx_sign(double a) { return nx_iszerod(a) ? 0.0lf : nxd_sign(a); }
double nx_div(double a, double b) { return nxd_div(a, b); }
double nx_rem(double a, double b) { return nxd_rem(a, b); }
double nx_pow(double a, double b) { return nxd_pow(a, b); }
double nx_atan2(double a, double b) { return nxd_atan2(a, b); }
double nx_exp(double a) { return nxd_exp(a); }
double nx_log(double a) { return nxd_log(a); }
double nx_rsqrt(double a) { return nxd_rsqrt(a); }
double nx_sin(double a) { return nxd_sin(a); }
double nx_cos(double a) { return nxd_cos(a); }
double nx_abs(double a) { return nx_absd(a); }
double nx_sigmoid(double a) { return nxd_sigmoid(a); }
double nx_tanh(double a) { return nxd_tanh(a); }
double nx_round(double a) { return nxd_round(a); }
double nx_expm1(double a) { return nxd_expm1(a); }
double nx_log1p(double a) { return nxd_log1p(a); }
double nx_erf(double a) { return nxd_erf(a); }
double nx_tan(double a) { return nxd_tan(a); }
double nx_asin(double a) { return nxd_asin(a); }
double nx_acos(double a) { return nxd_acos(a); }
double nx_atan(double a) { return nxd_atan(a); }
double nx_sinh(double a) { return nxd_sinh(a); }
double nx_cosh(double a) { return nxd_cosh(a); }
double nx_asinh(double a) { return nxd_asinh(a); }
double nx_acosh(double a) { return nxd_acosh(a); }
double nx_atanh(double a) { return nxd_atanh(a); }
double nx_cbrt(double a) { return nxd_cbrt(a); }
double nx_erfc(double a) { return nxd_erfc(a); }
double nx_erf_inv(double a) { return nxd_erf_inv(a); }

// ---- i32
// Truncating, x/0 = 0, INT_MIN/-1 = INT_MIN: computed on magnitudes so no
// case relies on how a driver divides negative integers.
int nx_div(int a, int b) {
  if (b == 0) return 0;
  uint q = uint(a < 0 ? -a : a) / uint(b < 0 ? -b : b);
  return ((a < 0) != (b < 0)) ? -int(q) : int(q);
}
int nx_rem(int a, int b) {
  if (b == 0) return 0;
  uint r = uint(a < 0 ? -a : a) % uint(b < 0 ? -b : b);
  return a < 0 ? -int(r) : int(r);
}
int nx_add(int a, int b) { return a + b; }
int nx_sub(int a, int b) { return a - b; }
int nx_mul(int a, int b) { return a * b; }
int nx_neg(int a) { return -a; }
bool nx_eq(int a, int b) { return a == b; }
bool nx_lt(int a, int b) { return a < b; }
bool nx_le(int a, int b) { return a <= b; }
int nx_sel(uint c, int a, int b) { return c != 0u ? a : b; }
int nx_max(int a, int b) { return a > b ? a : b; }
int nx_min(int a, int b) { return a < b ? a : b; }
int nx_abs(int a) { return a < 0 ? -a : a; }
int nx_sign(int a) { return a > 0 ? 1 : (a < 0 ? -1 : 0); }

// ---- u8
uint nx_div(uint a, uint b) { return b == 0u ? 0u : a / b; }
uint nx_rem(uint a, uint b) { return b == 0u ? 0u : a % b; }
uint nx_add(uint a, uint b) { return a + b; }
uint nx_sub(uint a, uint b) { return a - b; }
uint nx_mul(uint a, uint b) { return a * b; }
bool nx_eq(uint a, uint b) { return a == b; }
bool nx_lt(uint a, uint b) { return a < b; }
bool nx_le(uint a, uint b) { return a <= b; }
uint nx_sel(uint c, uint a, uint b) { return c != 0u ? a : b; }
uint nx_max(uint a, uint b) { return a > b ? a : b; }
uint nx_min(uint a, uint b) { return a < b ? a : b; }

// ---- i64 / u64 (only where the shader enables 64-bit integer types)
#ifdef NX_INT64
int64_t nx_div(int64_t a, int64_t b) {
  if (b == 0l) return 0l;
  uint64_t q = uint64_t(a < 0l ? -a : a) / uint64_t(b < 0l ? -b : b);
  return ((a < 0l) != (b < 0l)) ? -int64_t(q) : int64_t(q);
}
int64_t nx_rem(int64_t a, int64_t b) {
  if (b == 0l) return 0l;
  uint64_t r = uint64_t(a < 0l ? -a : a) % uint64_t(b < 0l ? -b : b);
  return a < 0l ? -int64_t(r) : int64_t(r);
}
int64_t nx_max(int64_t a, int64_t b) { return a > b ? a : b; }
int64_t nx_min(int64_t a, int64_t b) { return a < b ? a : b; }
int64_t nx_abs(int64_t a) { return a < 0l ? -a : a; }
int64_t nx_sign(int64_t a) { return a > 0l ? 1l : (a < 0l ? -1l : 0l); }
uint64_t nx_div(uint64_t a, uint64_t b) { return b == 0ul ? 0ul : a / b; }
uint64_t nx_rem(uint64_t a, uint64_t b) { return b == 0ul ? 0ul : a % b; }
uint64_t nx_max(uint64_t a, uint64_t b) { return a > b ? a : b; }
uint64_t nx_min(uint64_t a, uint64_t b) { return a < b ? a : b; }
int64_t nx_add(int64_t a, int64_t b) { return a + b; }
int64_t nx_sub(int64_t a, int64_t b) { return a - b; }
int64_t nx_mul(int64_t a, int64_t b) { return a * b; }
int64_t nx_neg(int64_t a) { return -a; }
bool nx_eq(int64_t a, int64_t b) { return a == b; }
bool nx_lt(int64_t a, int64_t b) { return a < b; }
bool nx_le(int64_t a, int64_t b) { return a <= b; }
int64_t nx_sel(uint c, int64_t a, int64_t b) { return c != 0u ? a : b; }
uint64_t nx_add(uint64_t a, uint64_t b) { return a + b; }
uint64_t nx_sub(uint64_t a, uint64_t b) { return a - b; }
uint64_t nx_mul(uint64_t a, uint64_t b) { return a * b; }
bool nx_eq(uint64_t a, uint64_t b) { return a == b; }
bool nx_lt(uint64_t a, uint64_t b) { return a < b; }
bool nx_le(uint64_t a, uint64_t b) { return a <= b; }
uint64_t nx_sel(uint c, uint64_t a, uint64_t b) { return c != 0u ? a : b; }
#endif

// ---- integer and logical ops (intops).  w is the dtype's width in bits
// (codegen gives every op function the constant NXW): narrow values arrive
// sign-extended (int) or zero-extended (uint) and the result is wrapped to
// the dtype after the op, so only shifts, clz and popcount need w.
// Shifts: a count outside 0..w-1 (a negative one too) shifts every bit
// out: left_shift gives 0, right_shift the sign fill (0 or -1); right_shift
// is arithmetic for signed dtypes.  Nx's Bitwise gives the same for counts
// >= w and raises on negative ones; numpy gives the same for both.
uint nx_wmask(int w) { return w >= 32 ? 0xffffffffu : (1u << uint(w)) - 1u; }
int nx_band(int a, int b) { return a & b; }
int nx_bor(int a, int b) { return a | b; }
int nx_bxor(int a, int b) { return a ^ b; }
int nx_bnot(int a) { return ~a; }
int nx_shl(int a, int b, int w) { return (b < 0 || b >= w) ? 0 : a << b; }
int nx_shr(int a, int b, int w) { return a >> ((b < 0 || b >= w) ? 31 : b); }
int nx_clz(int a, int w) { return w - 1 - findMSB(uint(a) & nx_wmask(w)); }
int nx_popcount(int a, int w) { return bitCount(uint(a) & nx_wmask(w)); }
uint nx_band(uint a, uint b) { return a & b; }
uint nx_bor(uint a, uint b) { return a | b; }
uint nx_bxor(uint a, uint b) { return a ^ b; }
uint nx_bnot(uint a) { return ~a; }
uint nx_shl(uint a, uint b, int w) { return b >= uint(w) ? 0u : a << b; }
uint nx_shr(uint a, uint b, int w) { return b >= uint(w) ? 0u : a >> b; }
uint nx_clz(uint a, int w) { return uint(w - 1 - findMSB(a & nx_wmask(w))); }
uint nx_popcount(uint a, int w) { return uint(bitCount(a & nx_wmask(w))); }
// logical ops: nonzero is true (NaN too, -0 is false), on the bits so a
// driver that flushes denormals still sees a denormal as nonzero
bool nx_truth(float a) { return (floatBitsToUint(a) & 0x7fffffffu) != 0u; }
bool nx_truth(double a) { uvec2 u = unpackDouble2x32(a); return ((u.y & 0x7fffffffu) | u.x) != 0u; }
bool nx_truth(int a) { return a != 0; }
bool nx_truth(uint a) { return a != 0u; }
bool nx_isnan(float a) { return (floatBitsToUint(a) & 0x7fffffffu) > 0x7f800000u; }
bool nx_isnan(double a) { uvec2 u = unpackDouble2x32(a); return (u.y & 0x7fffffffu) > 0x7ff00000u || ((u.y & 0x7fffffffu) == 0x7ff00000u && u.x != 0u); }
bool nx_isnan(int a) { return false; }
bool nx_isnan(uint a) { return false; }
bool nx_isinf(float a) { return (floatBitsToUint(a) & 0x7fffffffu) == 0x7f800000u; }
bool nx_isinf(double a) { uvec2 u = unpackDouble2x32(a); return (u.y & 0x7fffffffu) == 0x7ff00000u && u.x == 0u; }
bool nx_isinf(int a) { return false; }
bool nx_isinf(uint a) { return false; }
#ifdef NX_INT64
int64_t nx_band(int64_t a, int64_t b) { return a & b; }
int64_t nx_bor(int64_t a, int64_t b) { return a | b; }
int64_t nx_bxor(int64_t a, int64_t b) { return a ^ b; }
int64_t nx_bnot(int64_t a) { return ~a; }
int64_t nx_shl(int64_t a, int64_t b, int w) { return (b < 0l || b >= 64l) ? 0l : a << int(b); }
int64_t nx_shr(int64_t a, int64_t b, int w) { return a >> ((b < 0l || b >= 64l) ? 63 : int(b)); }
int nx_clz64(uint64_t x) {
  uint hi = uint(x >> 32), lo = uint(x & 0xffffffffUL);
  return hi != 0u ? 31 - findMSB(hi) : 63 - findMSB(lo);
}
int nx_popcount64(uint64_t x) { return bitCount(uint(x >> 32)) + bitCount(uint(x & 0xffffffffUL)); }
int64_t nx_clz(int64_t a, int w) { return int64_t(nx_clz64(uint64_t(a))); }
int64_t nx_popcount(int64_t a, int w) { return int64_t(nx_popcount64(uint64_t(a))); }
uint64_t nx_band(uint64_t a, uint64_t b) { return a & b; }
uint64_t nx_bor(uint64_t a, uint64_t b) { return a | b; }
uint64_t nx_bxor(uint64_t a, uint64_t b) { return a ^ b; }
uint64_t nx_bnot(uint64_t a) { return ~a; }
uint64_t nx_shl(uint64_t a, uint64_t b, int w) { return b >= 64UL ? 0UL : a << int(b); }
uint64_t nx_shr(uint64_t a, uint64_t b, int w) { return b >= 64UL ? 0UL : a >> int(b); }
uint64_t nx_clz(uint64_t a, int w) { return uint64_t(nx_clz64(a)); }
uint64_t nx_popcount(uint64_t a, int w) { return uint64_t(nx_popcount64(a)); }
bool nx_truth(int64_t a) { return a != 0l; }
bool nx_truth(uint64_t a) { return a != 0UL; }
bool nx_isnan(int64_t a) { return false; }
bool nx_isnan(uint64_t a) { return false; }
bool nx_isinf(int64_t a) { return false; }
bool nx_isinf(uint64_t a) { return false; }
#endif
