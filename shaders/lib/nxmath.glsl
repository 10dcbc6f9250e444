/* nxmath.glsl - the elementwise math library of nxvk's shaders.
 *
 * ONE SOURCE, TWO LANGUAGES.  This file is written in the common subset of
 * GLSL 4.50 (+ core fp64) and C11.  Shaders include it directly; the unit test
 * tests/unit/test_nxmath.c compiles the very same text as C through
 * shaders/lib/glsl_compat.h and measures it against long double libm.
 *
 * NOTES
 *
 * Families and names.  nxf_* take and return float (f32), nxd_* double
 * (f64); C has no overloading, so the names differ.  f32: expm1 log1p tanh
 * sigmoid erf pow atan2 round sign rem max min (f32 exp/log/sin/cos/sqrt/
 * inversesqrt are the GLSL builtins, called directly by the shaders).  f64:
 * exp log expm1 log1p sin cos tanh sigmoid erf atan2 pow sqrt rsqrt round
 * sign rem max min.  Semantics: DESIGN.md "Op semantics"; pow and atan2
 * follow C99 Annex F for every special case, rem is C fmod (exact, sign of
 * x), round is half away from zero (exact), sign(+-0) = +-0, sign(NaN) = NaN,
 * max/min propagate NaN with max(-0, +0) = +0, min(-0, +0) = -0.
 *
 * Rules of the common subset (for whoever edits this file):
 *  - f64 constants are bit patterns, NXD(hi, lo): a GLSL literal without
 *    `lf` is single precision, C has no `lf`, glslang will not paste one on.
 *    f32 constants likewise NXF(bits); only small exact values (0.5f, 2.0,
 *    16777216.0f) are written as literals.  The coefficients were produced
 *    with mpmath (Taylor coefficients rounded to nearest; erfcx pieces by
 *    mpmath.chebyfit on each interval, checked after rounding).
 *  - conversions through NX_F/NX_D/NX_I/NX_U; structs are used without
 *    `struct` (glsl_compat.h typedefs them for C); no out/inout parameters,
 *    no recursion, no int64, no arrays with initialisers (tables are
 *    switch statements).
 *  - fma() is never relied on: Vulkan lets it round twice, and lavapipe
 *    does.  Exact products use Dekker's splitting (nx_two_prod*), exact sums
 *    Knuth's two-sum; these carry NX_PRECISE (GLSL `precise`) so that no
 *    compiler contracts or reassociates them.  Cody-Waite constants have
 *    trailing zeros so that k * hi is exact in a plain multiply.
 *  - never declare a `precise` variable inside a loop: glslang 12's
 *    precise propagation then exhausts memory (std::bad_alloc); loop bodies
 *    call helpers (nx_rem_step) instead.
 *  - no trunc() on f64: lavapipe returns trunc(x) = x for |x| >= 2^24.
 *    floor() of non-negative values is used.
 *  - keep helpers that scale (nx_ldexp*) straight-line: NVIDIA's compiler
 *    (driver 580, H200) produced wrong results for the branchy form that
 *    reassigned its parameters.
 *  - f32 division only with denominators in [2^-126, 2^126] (GPU division
 *    is unspecified outside; NVIDIA's flushes 1/d to 0): atan2 scales its
 *    operands first.  Every division result is corrected by an exact
 *    residual (nx_dd_div, nx_ff_divf, rem, atan2, rsqrt), so the 2.5 ULP
 *    that Vulkan allows for division (and inexact sqrt) do not show.
 *  - NaN/inf/sign tests read the bits (nx_isnand etc.): they survive
 *    drivers that assume no NaNs in plain comparisons.
 *  - define NXMATH_NO_F64 before including to leave out the f64 family
 *    (glslang drops uncalled functions anyway, so f32-only shaders do not
 *    declare the Float64 capability either way).
 *
 * Methods.
 *  exp: k = round(x/ln2), r = x - k ln2 (ln2 in Cody-Waite parts, r as a
 *    double-double), expm1(r) by Taylor to r^14 (f32: r^8), 2^k scaling in
 *    at most three exact steps.  Returns the core as 2^k (1 + u), u a
 *    double-double, shared by expm1, sigmoid, tanh, erf and pow.  exp
 *    itself takes a cheaper form: r a plain double, Taylor to r^13.
 *  expm1: k = 0: u itself; otherwise 2^k (u + (1 - 2^-k)) or
 *    (2^k - 1) + 2^k u, the constant part exact, summed in double-double.
 *  log, log1p: x = 2^e m, m in [sqrt(1/2), sqrt(2)); log m = 2 atanh(s),
 *    s = (m-1)/(m+1) in double-double, series to s^25 with s, s^2, s^2/3 and
 *    the products in double-double (~2^-66 relative); log1p takes the exact
 *    double-double 1 + x.  f32: the same in float-float, series to s^13.
 *  sin, cos: |x| < 2^30: Cody-Waite with pi/2 in five 22-bit parts and a
 *    sixth double (all k * part exact), r a double-double good to ~2^-100
 *    relative next to multiples of pi/2.  Larger |x|: Payne-Hanek, 2/pi in
 *    24-bit chunks (52 of them), x split 24+24+5 bits, exact partial
 *    products and carries, the fraction summed in double-double.  Kernels:
 *    Taylor to r^17 (sin) and r^18 (cos, with 1 - r^2/2 exact).  Whole
 *    double range, no NaN for finite x.
 *  tanh: e = expm1(2|x|) as a double-double, e / (e + 2) by double-double
 *    division; |x| < 2^-27 (f32 2^-12): x; |x| > 22 (f32 10): +-1.
 *  sigmoid: x >= 0: 1 / (1 + e^-x), x < 0: e^x / (1 + e^x), double-double;
 *    x > 40 (f32 20): 1; x < -40 (f32 -30): e^x.
 *  erf: |x| < 1: x (c0 + c1 x^2 + x^4 R(x^2)), Taylor to x^37 (f32 x^23),
 *    the first two terms and the product in double-double.  1 <= |x| < 6
 *    (f32 4): 1 - exp(-x^2) g(x), g = erfcx fitted on [1,2) [2,3) [3,4.5)
 *    [4.5,6) (f32 [1,2) [2,3) [3,4)), exp(-x^2) from the exact x^2.  Beyond:
 *    +-1.  |x| < 2^-500 (f32 2^-60): c0 x, scaled.
 *  atan2: t = min/max(|x|,|y|) as a double-double (operands scaled so the
 *    larger is in [1,2)), atan t = atan(j/4) + atan((t - j/4)/(1 + t j/4)),
 *    j = round(4t), the reduced |u| <= 1/8 by Taylor to u^21 (f32 u^11),
 *    then pi/2 - and pi - in double-double.
 *  pow: exp(y log|x|) with log|x| in double-double (f32 float-float), y
 *    times it exact, fed to the exp core as a double-double.  Sign by the
 *    parity of y; integer test by floor(y) == y, |y| >= 2^53 (f32 2^24)
 *    even.  y == 1 and y == 2 exact shortcuts.
 *  rsqrt: y0 = 1/sqrt(x), one Newton step on the exact residual 1 - x y0^2
 *    (x scaled into [2^-900, 2^900]).  sqrt is the builtin.
 *  rem: long division by y 2^d, 52 (f32 23) quotient bits per step; each
 *    step's remainder ax - q s is formed exactly and corrected by +-s, so an
 *    inexact division does not matter.  <= 41 (f32 12) steps.
 *  round: floor(|x|) + (frac >= 0.5), sign copied; |x| >= 2^52 (2^23), NaN
 *    and inf returned as they are.
 *
 * Measured (C build, tests/unit/test_nxmath.c against long double libm,
 * distance to the correctly rounded result; 2 x 10M random points (two seeds,
 * `test_nxmath 50 SEED`) + edge values per function):
 *   function   f64: ULP (fraction of an ULP of the exact value)  f32: same
 *   exp        1 (0.82, a subnormal result)                       builtin
 *   log        1 (0.50)                                          builtin
 *   expm1      1 (0.95)                                          1 (0.92)
 *   log1p      1 (0.50)                                          1 (0.50)
 *   sin, cos   1 (0.79), whole double range incl. 2^1023          builtin
 *   tanh       1 (0.79)                                          1 (0.78)
 *   sigmoid    1 (0.77)                                          1 (0.77)
 *   erf        1 (0.88)                                          1 (0.84)
 *   atan2      1 (0.51; 0.98 for subnormal results)              1 (0.51; 0.99)
 *   pow        1 (0.76), whole range incl. results near overflow  1 (0.77)
 *   rsqrt      1 (0.50)                                          builtin
 *  round, sign, rem, max, min: exact (0 ULP, bit for bit with C) in both
 *  families.  Results in the subnormal range take one extra rounding
 *  (still <= 1 ULP).  The unit test checks <= 2 ULP for every function.
 * On devices (262k-4M points each, same inputs, tools not in the repo):
 *  - lavapipe (llvmpipe, LLVM 15): every function bit-identical to the C
 *    build.
 *  - NVIDIA H200 (driver 580): f64 all <= 1 ULP over all inputs, subnormals
 *    included; results differ from C by 1 ULP here and there where the
 *    driver contracts a * b + c.  f32 <= 1 ULP (atan2 2 ULP) for normal
 *    inputs and results; the device flushes f32 subnormals (FTZ) by
 *    default, so e.g. nxf_sign(-2^-149) returns -2^-149 and results below
 *    2^-126 become 0 there.
 */
#ifndef NXMATH_GLSL
#define NXMATH_GLSL

/* ------------------------------------------------------------------------
 * Language glue.  The C side (glsl_compat.h) defines NXMATH_C and these
 * macros; GLSL gets them here.
 * ---------------------------------------------------------------------- */
#ifndef NXMATH_C
#define NXFN
#define NX_PRECISE precise
#define NX_F(x) float(x)
#define NX_D(x) double(x)
#define NX_I(x) int(x)
#define NX_U(x) uint(x)
#endif

/* Constants are given by their bits: a GLSL literal without the `lf` suffix
 * is single precision, C has no `lf`, and glslang cannot paste one on.
 * NXD(hi word, lo word) is an f64, NXF(bits) an f32. */
#define NXD(hi, lo) packDouble2x32(uvec2(lo, hi))
#define NXF(b) uintBitsToFloat(b)

#define NX_INF_F NXF(0x7F800000u)
#define NX_NAN_F NXF(0x7FC00000u)
#define NX_NZERO_F NXF(0x80000000u)

/* ---- f32 constants ---- */
#define NXCF_LN2_CW_HI NXF(0x3F317200u) /* ln2 to 16 bits: k * hi exact for |k| < 2^8 */
#define NXCF_LN2_CW_LO NXF(0x35BFBE8Eu) /* 1.428606765330187e-06 */
#define NXCF_LN2_HI NXF(0x3F317218u) /* 0.6931471824645996 */
#define NXCF_LN2_LO NXF(0xB102E308u) /* -1.9046542121259336e-09 */
#define NXCF_INV_LN2 NXF(0x3FB8AA3Bu) /* 1.4426950216293335 */
#define NXCF_FI2 NXF(0x3F000000u) /* 1/2! */
#define NXCF_FI3 NXF(0x3E2AAAABu) /* 1/3! */
#define NXCF_FI4 NXF(0x3D2AAAABu) /* 1/4! */
#define NXCF_FI5 NXF(0x3C088889u) /* 1/5! */
#define NXCF_FI6 NXF(0x3AB60B61u) /* 1/6! */
#define NXCF_FI7 NXF(0x39500D01u) /* 1/7! */
#define NXCF_FI8 NXF(0x37D00D01u) /* 1/8! */
#define NXCF_THIRD_HI NXF(0x3EAAAAABu) /* 0.3333333432674408 */
#define NXCF_THIRD_LO NXF(0xB22AAAABu) /* -9.934107758624577e-09 */
#define NXCF_INV5 NXF(0x3E4CCCCDu) /* 1/5 */
#define NXCF_INV7 NXF(0x3E124925u) /* 1/7 */
#define NXCF_INV9 NXF(0x3DE38E39u) /* 1/9 */
#define NXCF_INV11 NXF(0x3DBA2E8Cu) /* 1/11 */
#define NXCF_INV13 NXF(0x3D9D89D9u) /* 1/13 */
#define NXCF_PIO2_HI NXF(0x3FC90FDBu) /* 1.5707963705062866 */
#define NXCF_PIO2_LO NXF(0xB33BBD2Eu) /* -4.371138828673793e-08 */
#define NXCF_PI_HI NXF(0x40490FDBu) /* 3.1415927410125732 */
#define NXCF_PI_LO NXF(0xB3BBBD2Eu) /* -8.742277657347586e-08 */
#define NXCF_PIO4_HI NXF(0x3F490FDBu) /* 0.7853981852531433 */
#define NXCF_PIO4_LO NXF(0xB2BBBD2Eu) /* -2.1855694143368964e-08 */
#define NXCF_3PIO4 NXF(0x4016CBE4u) /* 2.356194496154785 */
#define NXCF_ATAN_Q1_HI NXF(0x3E7ADBB0u) /* 0.244978666305542 */
#define NXCF_ATAN_Q1_LO NXF(0xB15A6FE4u) /* -3.1786777654474463e-09 */
#define NXCF_ATAN_Q2_HI NXF(0x3EED6338u) /* 0.46364760398864746 */
#define NXCF_ATAN_Q2_LO NXF(0x31AC376Au) /* 5.01215868808913e-09 */
#define NXCF_ATAN_Q3_HI NXF(0x3F24BC7Du) /* 0.6435011029243469 */
#define NXCF_ATAN_Q3_LO NXF(0x31C9A7B8u) /* 5.868937336117597e-09 */
#define NXCF_ERF_C0_HI NXF(0x3F906EBBu) /* 1.128379225730896 */
#define NXCF_ERF_C0_LO NXF(0xB37BD649u) /* -5.8635382771399236e-08 */
#define NXCF_ERF_C1_HI NXF(0xBEC093A3u) /* -0.37612637877464294 */
#define NXCF_ERF_C1_LO NXF(0xB230379Eu) /* -1.0257194205109954e-08 */
#define NXCF_ERF_T2 NXF(0x3DE71791u) /* 0.11283791810274124 */
#define NXCF_ERF_T3 NXF(0xBCDC1672u) /* -0.02686617150902748 */
#define NXCF_ERF_T4 NXF(0x3BAB2DE7u) /* 0.005223977845162153 */
#define NXCF_ERF_T5 NXF(0xBA6016DAu) /* -0.0008548327023163438 */
#define NXCF_ERF_T6 NXF(0x38FCD193u) /* 0.00012055332626914605 */
#define NXCF_ERF_T7 NXF(0xB77A692Eu) /* -1.4925650248187594e-05 */
#define NXCF_ERF_T8 NXF(0x35DCF365u) /* 1.6462114444948384e-06 */
#define NXCF_ERF_T9 NXF(0xB42FBA17u) /* -1.6365844146548625e-07 */
#define NXCF_ERF_T10 NXF(0x327E62B9u) /* 1.4807192805221803e-08 */
#define NXCF_ERF_T11 NXF(0xB0A8EB8Cu) /* -1.2290555240213052e-09 */

/* ========================================================================
 * f32 family
 * ====================================================================== */

struct nxff { float hi; float lo; };          /* unevaluated sum hi + lo */
struct nxexpf { float hi; float lo; int k; }; /* exp(x) = 2^k (1 + hi + lo) */

NXFN bool nx_isnanf(float x) { return (floatBitsToUint(x) & 0x7fffffffu) > 0x7f800000u; }
NXFN bool nx_isinff(float x) { return (floatBitsToUint(x) & 0x7fffffffu) == 0x7f800000u; }
NXFN bool nx_signbitf(float x) { return (floatBitsToUint(x) & 0x80000000u) != 0u; }
NXFN float nx_absf(float x) { return uintBitsToFloat(floatBitsToUint(x) & 0x7fffffffu); }
NXFN float nx_copysignf(float a, float b) {
  return uintBitsToFloat((floatBitsToUint(a) & 0x7fffffffu) | (floatBitsToUint(b) & 0x80000000u));
}
/* 2^k, k in [-149, 127] */
NXFN float nx_pow2f(int k) {
  if (k >= -126) return uintBitsToFloat(NX_U(k + 127) << 23);
  return uintBitsToFloat(1u << NX_U(k + 149));
}
/* x * 2^n for n in [-300, 300]: exact unless the result leaves the normal
 * range (then one rounding when x is normal and near 1).  Straight-line on
 * purpose: NVIDIA's compiler (driver 580, H200) got the branchy version with
 * reassigned parameters wrong. */
NXFN float nx_ldexpf(float x, int n) {
  int a = (n > 127) ? 100 : ((n < -126) ? -100 : 0);
  int m = n - a;
  int b = (m > 127) ? 100 : ((m < -126) ? -100 : 0);
  int c = m - b;
  c = (c > 127) ? 127 : ((c < -149) ? -149 : c);
  float r = x * nx_pow2f(a);
  r = r * nx_pow2f(b);
  return r * nx_pow2f(c);
}
/* exponent of a finite nonzero x (subnormals included) */
NXFN int nx_ilogbf(float x) {
  int e = NX_I((floatBitsToUint(x) >> 23) & 0xffu);
  if (e == 0) return NX_I((floatBitsToUint(x * 16777216.0f) >> 23) & 0xffu) - 127 - 24;
  return e - 127;
}

/* --- float-float arithmetic ---
 * No fma: Vulkan lets fma() round twice (lavapipe does), so exact products
 * come from Dekker's splitting; `precise` keeps the compiler from
 * contracting or reassociating the error-free transformations. */
NXFN nxff nx_ff(float h, float l) { nxff r; r.hi = h; r.lo = l; return r; }
NXFN nxff nx_two_sumf(float a, float b) {
  NX_PRECISE float s = a + b;
  NX_PRECISE float bb = s - a;
  NX_PRECISE float e = (a - (s - bb)) + (b - bb);
  return nx_ff(s, e);
}
NXFN nxff nx_fast_two_sumf(float a, float b) { /* |a| >= |b| or a == 0 */
  NX_PRECISE float s = a + b;
  NX_PRECISE float e = b - (s - a);
  return nx_ff(s, e);
}
/* a = hi + lo, each with at most 12 significant bits (Veltkamp); |a| < 2^115 */
NXFN nxff nx_splitf(float a) {
  NX_PRECISE float c = 4097.0f * a;
  NX_PRECISE float h = c - (c - a);
  NX_PRECISE float l = a - h;
  return nx_ff(h, l);
}
/* a * b = hi + lo exactly (Dekker); |a|, |b| < 2^115, no underflow */
NXFN nxff nx_two_prodf(float a, float b) {
  nxff as = nx_splitf(a);
  nxff bs = nx_splitf(b);
  NX_PRECISE float p = a * b;
  NX_PRECISE float e = (((as.hi * bs.hi - p) + as.hi * bs.lo) + as.lo * bs.hi) + as.lo * bs.lo;
  return nx_ff(p, e);
}
NXFN nxff nx_ff_addf(nxff a, nxff b) {
  nxff s = nx_two_sumf(a.hi, b.hi);
  NX_PRECISE float e = s.lo + (a.lo + b.lo);
  return nx_fast_two_sumf(s.hi, e);
}
/* a / b; tolerates an inexact hardware division (the residual corrects it) */
NXFN nxff nx_ff_divf(nxff a, nxff b) {
  float q = a.hi / b.hi;
  nxff qb = nx_two_prodf(q, b.hi);
  NX_PRECISE float r = (a.hi - qb.hi) - qb.lo; /* exact */
  NX_PRECISE float r2 = (r + a.lo) - q * b.lo;
  NX_PRECISE float ql = r2 / b.hi;
  return nx_fast_two_sumf(q, ql);
}

/* exp(xh + xl) = 2^k (1 + u): k = round(xh/ln2), r = xh + xl - k ln2 with
 * ln2 in Cody-Waite parts (k * hi exact, xh - k hi exact), u = expm1(r) by
 * its Taylor polynomial to r^8.  Valid for |xh| <= 105, |xl| <= 2^-20 |xh|. */
NXFN nxexpf nx_expf_core(float xh, float xl) {
  float kf = floor(xh * NXCF_INV_LN2 + 0.5f);
  NX_PRECISE float r1 = xh - kf * NXCF_LN2_CW_HI;
  NX_PRECISE float c = xl - kf * NXCF_LN2_CW_LO;
  nxff r = nx_two_sumf(r1, c);
  float x = r.hi;
  float p = NXCF_FI8;
  p = p * x + NXCF_FI7;
  p = p * x + NXCF_FI6;
  p = p * x + NXCF_FI5;
  p = p * x + NXCF_FI4;
  p = p * x + NXCF_FI3;
  p = p * x + NXCF_FI2;
  NX_PRECISE float t = x * x * p + (r.lo + x * r.lo);
  nxff u = nx_fast_two_sumf(x, t);
  nxexpf e;
  e.hi = u.hi;
  e.lo = u.lo;
  e.k = NX_I(kf);
  return e;
}
/* 2^k (1 + u) rounded once (twice for subnormal results) */
NXFN float nx_expf_fin(nxexpf e) {
  nxff v = nx_two_sumf(1.0f, e.hi);
  return nx_ldexpf(v.hi + (v.lo + e.lo), e.k);
}
/* exp(xh + xl) as float-float, for results in the normal range */
NXFN nxff nx_expf_ff(float xh, float xl) {
  nxexpf e = nx_expf_core(xh, xl);
  nxff v = nx_two_sumf(1.0f, e.hi);
  nxff r = nx_fast_two_sumf(v.hi, v.lo + e.lo);
  float s = nx_pow2f(e.k);
  return nx_ff(r.hi * s, r.lo * s);
}
/* expm1(x) as float-float for x in [-20, 40] */
NXFN nxff nx_expm1f_ff(float x) {
  nxexpf e = nx_expf_core(x, 0.0f);
  if (e.k == 0) return nx_ff(e.hi, e.lo);
  float s = nx_pow2f(e.k);
  if (e.k > 0) { /* 2^k (u + (1 - 2^-k)) */
    nxff w = nx_two_sumf(1.0f, -nx_pow2f(-e.k));
    nxff v = nx_two_sumf(w.hi, e.hi);
    NX_PRECISE float vl = (v.lo + w.lo) + e.lo;
    nxff r = nx_fast_two_sumf(v.hi, vl);
    return nx_ff(r.hi * s, r.lo * s);
  }
  /* (2^k - 1) + 2^k u */
  nxff w = nx_two_sumf(-1.0f, s);
  nxff v = nx_two_sumf(w.hi, s * e.hi);
  NX_PRECISE float vl = (v.lo + w.lo) + s * e.lo;
  return nx_fast_two_sumf(v.hi, vl);
}

/* log(xh + xl) as float-float; xh > 0 finite, |xl| <= ulp(xh).
 * x = 2^e m, m in [sqrt(1/2), sqrt(2)); log m = 2 atanh(s), s = (m-1)/(m+1),
 * |s| <= 0.1716: 2s (1 + z/3 + z^2/5 + ...), z = s^2, with s, z, z/3 and
 * the products in float-float, the tail in float. ~2^-38 relative. */
NXFN nxff nx_logf_ff(float xh, float xl) {
  int e = 0;
  if (xh < NXF(0x00800000u)) { xh = xh * 16777216.0f; xl = xl * 16777216.0f; e = -24; }
  uint b = floatBitsToUint(xh);
  e += NX_I(b >> 23) - 127;
  uint mb = b & 0x007fffffu;
  if (mb >= 0x003504f3u) { mb = mb | 0x3f000000u; e += 1; } else { mb = mb | 0x3f800000u; }
  float m = uintBitsToFloat(mb);
  float ml = (xl == 0.0f) ? 0.0f : nx_ldexpf(xl, -e);
  nxff f = nx_two_sumf(m - 1.0f, ml);
  nxff d = nx_two_sumf(2.0f, f.hi);
  d.lo += f.lo;
  nxff s = nx_ff_divf(f, d);
  nxff z = nx_two_prodf(s.hi, s.hi);
  z.lo += 2.0f * s.hi * s.lo;
  float zh = z.hi;
  float tp = NXCF_INV13;
  tp = tp * zh + NXCF_INV11;
  tp = tp * zh + NXCF_INV9;
  tp = tp * zh + NXCF_INV7;
  tp = tp * zh + NXCF_INV5;
  tp = tp * zh * zh;
  nxff q = nx_two_prodf(zh, NXCF_THIRD_HI);
  q.lo += zh * NXCF_THIRD_LO + z.lo * NXCF_THIRD_HI;
  nxff q2 = nx_two_sumf(q.hi, tp);
  q2.lo += q.lo;
  nxff sq = nx_two_prodf(s.hi, q2.hi);
  sq.lo += s.hi * q2.lo + s.lo * q2.hi;
  nxff l = nx_two_sumf(s.hi, sq.hi);
  l.lo += s.lo + sq.lo;
  l.hi *= 2.0f;
  l.lo *= 2.0f;
  float ef = NX_F(e);
  nxff el = nx_two_prodf(ef, NXCF_LN2_HI);
  el.lo += ef * NXCF_LN2_LO;
  return nx_ff_addf(el, l);
}

/* expm1(x) */
NXFN float nxf_expm1(float x) {
  if (nx_isnanf(x)) return x;
  if (x > 40.0f) {
    if (x > 89.0f) return NX_INF_F;
    return nx_expf_fin(nx_expf_core(x, 0.0f));
  }
  if (x < -20.0f) return -1.0f;
  if (nx_absf(x) < nx_pow2f(-25)) return x;
  return nx_expm1f_ff(x).hi;
}

/* log1p(x) */
NXFN float nxf_log1p(float x) {
  if (nx_isnanf(x)) return x;
  if (x < -1.0f) return NX_NAN_F;
  if (x == -1.0f) return -NX_INF_F;
  if (nx_isinff(x)) return x;
  if (nx_absf(x) < nx_pow2f(-25)) return x;
  nxff u = nx_two_sumf(1.0f, x);
  return nx_logf_ff(u.hi, u.lo).hi;
}

/* tanh(x) = expm1(2|x|) / (expm1(2|x|) + 2), sign restored */
NXFN float nxf_tanh(float x) {
  if (nx_isnanf(x)) return x;
  float ax = nx_absf(x);
  if (ax < nx_pow2f(-12)) return x;
  if (ax > 10.0f) return nx_copysignf(1.0f, x);
  nxff e = nx_expm1f_ff(2.0f * ax);
  nxff d = nx_two_sumf(2.0f, e.hi);
  d.lo += e.lo;
  return nx_copysignf(nx_ff_divf(e, d).hi, x);
}

/* sigmoid(x) = 1 / (1 + exp(-x)) */
NXFN float nxf_sigmoid(float x) {
  if (nx_isnanf(x)) return x;
  if (x >= 0.0f) {
    if (x > 20.0f) return 1.0f;
    nxff t = nx_expf_ff(-x, 0.0f);
    nxff d = nx_two_sumf(1.0f, t.hi);
    d.lo += t.lo;
    return nx_ff_divf(nx_ff(1.0f, 0.0f), d).hi;
  }
  if (x < -30.0f) {
    if (x < -105.0f) return 0.0f;
    return nx_expf_fin(nx_expf_core(x, 0.0f)); /* e^x (1 - e^x), e^x < 2^-43 */
  }
  nxff t = nx_expf_ff(x, 0.0f);
  nxff d = nx_two_sumf(1.0f, t.hi);
  d.lo += t.lo;
  return nx_ff_divf(t, d).hi;
}

/* erf(x).  |x| < 1: x (c0 + c1 z + z^2 R(z)), z = x^2, Taylor to x^23, the
 * first two terms in float-float.  1 <= |x| < 4: 1 - exp(-x^2) g(x) with
 * g = erfcx fitted (Chebyshev, mpmath) on [1,2), [2,3), [3,4) and exp(-x^2)
 * from the exact x^2.  |x| >= 4: +-1 (erfc(3.92) < 2^-25). */
NXFN float nxf_erf(float x) {
  if (nx_isnanf(x)) return x;
  float ax = nx_absf(x);
  /* a device that flushes denormals sees a denormal x as zero here and must
   * return a zero of x's sign, not the denormal itself (made from the bits:
   * compilers fold x * 0 to +0) */
  if (ax == 0.0f) return uintBitsToFloat(floatBitsToUint(x) & 0x80000000u);
  if (ax < nx_pow2f(-60)) { /* c0 x, scaled so the product's rounding is normal */
    float xs = x * nx_pow2f(64);
    nxff p = nx_two_prodf(xs, NXCF_ERF_C0_HI);
    return (p.hi + (p.lo + xs * NXCF_ERF_C0_LO)) * nx_pow2f(-64);
  }
  if (ax < 1.0f) {
    nxff z = nx_two_prodf(ax, ax);
    float zh = z.hi;
    float rp = NXCF_ERF_T11;
    rp = rp * zh + NXCF_ERF_T10;
    rp = rp * zh + NXCF_ERF_T9;
    rp = rp * zh + NXCF_ERF_T8;
    rp = rp * zh + NXCF_ERF_T7;
    rp = rp * zh + NXCF_ERF_T6;
    rp = rp * zh + NXCF_ERF_T5;
    rp = rp * zh + NXCF_ERF_T4;
    rp = rp * zh + NXCF_ERF_T3;
    rp = rp * zh + NXCF_ERF_T2;
    nxff c1z = nx_two_prodf(NXCF_ERF_C1_HI, zh);
    c1z.lo += NXCF_ERF_C1_HI * z.lo + NXCF_ERF_C1_LO * zh;
    nxff s = nx_two_sumf(NXCF_ERF_C0_HI, c1z.hi);
    s.lo += NXCF_ERF_C0_LO + c1z.lo;
    nxff s2 = nx_two_sumf(s.hi, zh * zh * rp);
    s2.lo += s.lo;
    nxff p = nx_two_prodf(x, s2.hi);
    return p.hi + (p.lo + x * s2.lo);
  }
  if (ax < 4.0f) {
    float p;
    float t;
    if (ax < 2.0f) {
      t = ax - 1.5f;
      /* f32 erfcx on [1,2), t = x - 1.5, deg 8, rel err 2^-26.0 */
      p = NXF(0x39781CCEu);
      p = p * t + NXF(0xBA38A19Fu); /* -0.000704312639 */
      p = p * t + NXF(0x3AF6E38Fu); /* 0.00188361283 */
      p = p * t + NXF(0xBBA85C00u); /* -0.00513792038 */
      p = p * t + NXF(0x3C5B2D5Fu); /* 0.0133775165 */
      p = p * t + NXF(0xBD06E325u); /* -0.0329314657 */
      p = p * t + NXF(0x3D9BF513u); /* 0.0761510357 */
      p = p * t + NXF(0xBE278CC3u); /* -0.163622901 */
      p = p * t + NXF(0x3EA4A6D8u); /* 0.321585417 */
    } else if (ax < 3.0f) {
      t = ax - 2.5f;
      /* f32 erfcx on [2,3), t = x - 2.5, deg 7, rel err 2^-24.7 */
      p = NXF(0xB87FF3DFu);
      p = p * t + NXF(0x3965D691u); /* 0.000219190741 */
      p = p * t + NXF(0xBA4037B4u); /* -0.000733251916 */
      p = p * t + NXF(0x3B21986Fu); /* 0.00246575079 */
      p = p * t + NXF(0xBC031916u); /* -0.00800158642 */
      p = p * t + NXF(0x3CCC4AE8u); /* 0.0249380618 */
      p = p * t + NXF(0xBD98436Cu); /* -0.074347347 */
      p = p * t + NXF(0x3E57DDA0u); /* 0.21080637 */
    } else {
      t = ax - 3.5f;
      /* f32 erfcx on [3,4), t = x - 3.5, deg 7, rel err 2^-25.2 */
      p = NXF(0xB70DA233u);
      p = p * t + NXF(0x381BAC43u); /* 3.7115311e-05 */
      p = p * t + NXF(0xB922FCC5u); /* -0.000155436879 */
      p = p * t + NXF(0x3A2B0F33u); /* 0.000652539718 */
      p = p * t + NXF(0xBB2F2EC6u); /* -0.002673076 */
      p = p * t + NXF(0x3C2EAC10u); /* 0.0106611401 */
      p = p * t + NXF(0xBD2942E9u); /* -0.0413235761 */
      p = p * t + NXF(0x3E1F054Du); /* 0.155293658 */
    }
    nxff z = nx_two_prodf(ax, ax);
    float erfc = nx_expf_fin(nx_expf_core(-z.hi, -z.lo)) * p;
    return nx_copysignf(1.0f - erfc, x);
  }
  return nx_copysignf(1.0f, x);
}

/* pow(x, y), C99 Annex F special cases; otherwise exp(y log|x|) with log in
 * float-float and the product y*log in float-float. */
NXFN float nxf_pow(float x, float y) {
  if (y == 0.0f) return 1.0f; /* y = +-0, even x NaN; a compare, so a flushed denormal y is 0 here as below */
  if (x == 1.0f) return 1.0f;                                 /* even y NaN */
  if (nx_isnanf(x) || nx_isnanf(y)) return x + y;
  float ax = nx_absf(x);
  float ay = nx_absf(y);
  if (nx_isinff(y)) {
    if (ax == 1.0f) return 1.0f; /* (-1)^+-inf */
    return ((ax < 1.0f) == (y > 0.0f)) ? 0.0f : NX_INF_F;
  }
  bool yint = floor(y) == y;
  bool yodd = yint && ay < 16777216.0f && floor(y * 0.5f) * 2.0f != y; /* |y| >= 2^24: even */
  if (ax == 0.0f) {
    if (y < 0.0f) return yodd ? nx_copysignf(NX_INF_F, x) : NX_INF_F;
    return yodd ? x : 0.0f;
  }
  if (nx_isinff(x)) {
    if (x > 0.0f) return (y < 0.0f) ? 0.0f : NX_INF_F;
    if (y < 0.0f) return yodd ? NX_NZERO_F : 0.0f;
    return yodd ? -NX_INF_F : NX_INF_F;
  }
  if (x < 0.0f && !yint) return NX_NAN_F;
  bool neg = x < 0.0f && yodd;
  if (ax == 1.0f) return neg ? -1.0f : 1.0f; /* x = -1, any integer y */
  if (y == 1.0f) return x;
  if (y == 2.0f) return x * x;
  nxff l = nx_logf_ff(ax, 0.0f);
  float th = y * l.hi;
  float r;
  if (th > 89.0f) {
    r = NX_INF_F;
  } else if (th < -105.0f) {
    r = 0.0f;
  } else { /* |y| < 2^31 here */
    nxff t = nx_two_prodf(y, l.hi);
    r = nx_expf_fin(nx_expf_core(t.hi, t.lo + y * l.lo));
  }
  return neg ? -r : r;
}

/* atan2(y, x), C99 Annex F special cases.  t = min/max(|x|,|y|) in
 * float-float, atan t = atan(j/4) + atan((t - j/4)/(1 + t j/4)), j = round(4t),
 * the reduced argument |u| <= 1/8 by its odd Taylor polynomial to u^11;
 * quadrant fixes in float-float. */
NXFN float nxf_atan2(float y, float x) {
  if (nx_isnanf(x) || nx_isnanf(y)) return x + y;
  float ay = nx_absf(y);
  float ax = nx_absf(x);
  bool xneg = nx_signbitf(x);
  if (nx_isinff(y)) {
    float v = nx_isinff(x) ? (xneg ? NXCF_3PIO4 : NXCF_PIO4_HI) : NXCF_PIO2_HI;
    return nx_copysignf(v, y);
  }
  if (nx_isinff(x) || ay == 0.0f) return nx_copysignf(xneg ? NXCF_PI_HI : 0.0f, y);
  if (ax == 0.0f) return nx_copysignf(NXCF_PIO2_HI, y);
  bool sw = ay > ax;
  float num = sw ? ax : ay;
  float den = sw ? ay : ax;
  /* den scaled to [1, 2): GPU division is only specified for |den| within
   * [2^-126, 2^126] (NVIDIA's flushes 1/den past that), and the product
   * below must not overflow or underflow */
  int e = nx_ilogbf(den);
  float ns = nx_ldexpf(num, -e);
  float ds = nx_ldexpf(den, -e);
  float th = ns / ds;
  float tl = 0.0f; /* th + tl = num / den to ~2^-48; for th < 2^-100 th alone is enough */
  if (th >= nx_pow2f(-100)) {
    nxff pt = nx_two_prodf(th, ds);
    tl = ((ns - pt.hi) - pt.lo) / ds;
  }
  float jf = floor(th * 4.0f + 0.5f);
  nxff a = nx_ff(0.0f, 0.0f);
  nxff u = nx_ff(th, tl);
  if (jf > 0.0f) {
    float c = jf * 0.25f;
    nxff n = nx_two_sumf(th, -c);
    n.lo += tl;
    nxff pr = nx_two_prodf(th, c);
    nxff d = nx_two_sumf(1.0f, pr.hi);
    d.lo += pr.lo + tl * c;
    u = nx_ff_divf(n, d);
    if (jf == 1.0f) a = nx_ff(NXCF_ATAN_Q1_HI, NXCF_ATAN_Q1_LO);
    else if (jf == 2.0f) a = nx_ff(NXCF_ATAN_Q2_HI, NXCF_ATAN_Q2_LO);
    else if (jf == 3.0f) a = nx_ff(NXCF_ATAN_Q3_HI, NXCF_ATAN_Q3_LO);
    else a = nx_ff(NXCF_PIO4_HI, NXCF_PIO4_LO);
  }
  float z = u.hi * u.hi;
  float pz = -NXCF_INV11;
  pz = pz * z + NXCF_INV9;
  pz = pz * z - NXCF_INV7;
  pz = pz * z + NXCF_INV5;
  pz = pz * z - NXCF_THIRD_HI;
  NX_PRECISE float corr = u.hi * z * pz + u.lo * (1.0f - z);
  nxff r = nx_ff_addf(a, nx_fast_two_sumf(u.hi, corr));
  if (sw) r = nx_ff_addf(nx_ff(NXCF_PIO2_HI, NXCF_PIO2_LO), nx_ff(-r.hi, -r.lo));
  if (xneg) r = nx_ff_addf(nx_ff(NXCF_PI_HI, NXCF_PI_LO), nx_ff(-r.hi, -r.lo));
  return nx_copysignf(r.hi, y);
}

/* round half away from zero, exact */
NXFN float nxf_round(float x) {
  float a = nx_absf(x);
  if (nx_isnanf(x) || a >= 8388608.0f) return x; /* 2^23: already integral */
  float t = floor(a); /* a >= 0; floor, not trunc: lavapipe's f64 trunc is wrong */
  if (a - t >= 0.5f) t += 1.0f;
  return nx_copysignf(t, x);
}

/* sign: 1, -1, or x itself for +-0 and NaN */
NXFN float nxf_sign(float x) {
  if (x > 0.0f) return 1.0f;
  if (x < 0.0f) return -1.0f;
  return x;
}

/* one +-s correction of the exact remainder r (float-float) toward [0, s) */
NXFN nxff nx_rem_fixf(nxff r, float s) {
  float d = 0.0f;
  if (r.hi < 0.0f) d = s;
  else if (r.hi > s || (r.hi == s && r.lo >= 0.0f)) d = -s;
  nxff t = nx_two_sumf(r.hi, d);
  return nx_two_sumf(t.hi, t.lo + r.lo);
}
/* ax mod s for s <= ax < 2^24 s: ax - q s with q = floor(ax / s) formed
 * exactly in float-float, then corrected by +-s; an inexact hardware
 * division (q off by a few units) does not matter. */
NXFN float nx_rem_stepf(float ax, float s) {
  /* keep q s and the splitting finite, and its partial products normal */
  int sc = (ax >= nx_pow2f(100)) ? -32 : (s < nx_pow2f(-100)) ? 64 : 0;
  ax = ax * nx_pow2f(sc);
  s = s * nx_pow2f(sc);
  float q = floor(ax / s);
  nxff p = nx_two_prodf(q, s);
  NX_PRECISE float h = ax - p.hi; /* exact (Sterbenz) */
  nxff r = nx_two_sumf(h, -p.lo);
  r = nx_rem_fixf(r, s);
  r = nx_rem_fixf(r, s);
  r = nx_rem_fixf(r, s);
  return r.hi * nx_pow2f(-sc);
}
/* fmod(x, y): exact, sign of x.  Long division by y 2^d, 23 bits a step. */
NXFN float nxf_rem(float x, float y) {
  if (nx_isnanf(x) || nx_isnanf(y)) return x + y;
  if (nx_isinff(x) || y == 0.0f) return NX_NAN_F;
  float ax = nx_absf(x);
  float ay = nx_absf(y);
  if (nx_isinff(y) || ax < ay) return x;
  int ey = nx_ilogbf(ay);
  for (int it = 0; it < 16; it++) {
    if (ax < ay) break;
    int d = nx_ilogbf(ax) - ey - 23;
    ax = nx_rem_stepf(ax, (d > 0) ? nx_ldexpf(ay, d) : ay);
  }
  return nx_copysignf(ax, x);
}

/* NaN-propagating max/min; max(-0, +0) = +0, min(-0, +0) = -0 */
NXFN float nxf_max(float a, float b) {
  if (nx_isnanf(a) || nx_isnanf(b)) return a + b;
  if (a == b) return nx_signbitf(a) ? b : a;
  return a > b ? a : b;
}
NXFN float nxf_min(float a, float b) {
  if (nx_isnanf(a) || nx_isnanf(b)) return a + b;
  if (a == b) return nx_signbitf(a) ? a : b;
  return a < b ? a : b;
}

#ifndef NXMATH_NO_F64
/* ========================================================================
 * f64 family (define NXMATH_NO_F64 before including to leave it out)
 * ====================================================================== */

#define NX_INF_D NXD(0x7FF00000u, 0x00000000u)
#define NX_NAN_D NXD(0x7FF80000u, 0x00000000u)
#define NX_NZERO_D NXD(0x80000000u, 0x00000000u)

/* ---- f64 constants ---- */
#define NXC_LN2_CW_HI NXD(0x3FE62E42u, 0xFEFA4000u) /* ln2 to 40 bits: k * hi exact for |k| < 2^13 */
#define NXC_LN2_CW_LO NXD(0xBD48432Au, 0x1B0E2634u) /* -1.7239444525614835e-13 */
#define NXC_LN2_HI NXD(0x3FE62E42u, 0xFEFA39EFu) /* 0.6931471805599453 */
#define NXC_LN2_LO NXD(0x3C7ABC9Eu, 0x3B39803Fu) /* 2.3190468138462996e-17 */
#define NXC_INV_LN2 NXD(0x3FF71547u, 0x652B82FEu) /* 1.4426950408889634 */
#define NXC_FI2 NXD(0x3FE00000u, 0x00000000u) /* 1/2! */
#define NXC_FI3 NXD(0x3FC55555u, 0x55555555u) /* 1/3! */
#define NXC_FI4 NXD(0x3FA55555u, 0x55555555u) /* 1/4! */
#define NXC_FI5 NXD(0x3F811111u, 0x11111111u) /* 1/5! */
#define NXC_FI6 NXD(0x3F56C16Cu, 0x16C16C17u) /* 1/6! */
#define NXC_FI7 NXD(0x3F2A01A0u, 0x1A01A01Au) /* 1/7! */
#define NXC_FI8 NXD(0x3EFA01A0u, 0x1A01A01Au) /* 1/8! */
#define NXC_FI9 NXD(0x3EC71DE3u, 0xA556C734u) /* 1/9! */
#define NXC_FI10 NXD(0x3E927E4Fu, 0xB7789F5Cu) /* 1/10! */
#define NXC_FI11 NXD(0x3E5AE645u, 0x67F544E4u) /* 1/11! */
#define NXC_FI12 NXD(0x3E21EED8u, 0xEFF8D898u) /* 1/12! */
#define NXC_FI13 NXD(0x3DE61246u, 0x13A86D09u) /* 1/13! */
#define NXC_FI14 NXD(0x3DA93974u, 0xA8C07C9Du) /* 1/14! */
#define NXC_FI15 NXD(0x3D6AE7F3u, 0xE733B81Fu) /* 1/15! */
#define NXC_FI16 NXD(0x3D2AE7F3u, 0xE733B81Fu) /* 1/16! */
#define NXC_FI17 NXD(0x3CE952C7u, 0x7030AD4Au) /* 1/17! */
#define NXC_FI18 NXD(0x3CA68278u, 0x63B97D97u) /* 1/18! */
#define NXC_THIRD_HI NXD(0x3FD55555u, 0x55555555u) /* 0.3333333333333333 */
#define NXC_THIRD_LO NXD(0x3C755555u, 0x55555555u) /* 1.850371707708594e-17 */
#define NXC_INV5 NXD(0x3FC99999u, 0x9999999Au) /* 1/5 */
#define NXC_INV7 NXD(0x3FC24924u, 0x92492492u) /* 1/7 */
#define NXC_INV9 NXD(0x3FBC71C7u, 0x1C71C71Cu) /* 1/9 */
#define NXC_INV11 NXD(0x3FB745D1u, 0x745D1746u) /* 1/11 */
#define NXC_INV13 NXD(0x3FB3B13Bu, 0x13B13B14u) /* 1/13 */
#define NXC_INV15 NXD(0x3FB11111u, 0x11111111u) /* 1/15 */
#define NXC_INV17 NXD(0x3FAE1E1Eu, 0x1E1E1E1Eu) /* 1/17 */
#define NXC_INV19 NXD(0x3FAAF286u, 0xBCA1AF28u) /* 1/19 */
#define NXC_INV21 NXD(0x3FA86186u, 0x18618618u) /* 1/21 */
#define NXC_INV23 NXD(0x3FA642C8u, 0x590B2164u) /* 1/23 */
#define NXC_INV25 NXD(0x3FA47AE1u, 0x47AE147Bu) /* 1/25 */
#define NXC_PIO2_1 NXD(0x3FF921FBu, 0x80000000u) /* pi/2 part 1 (22 bits) */
#define NXC_PIO2_2 NXD(0xBE85DDE9u, 0x80000000u) /* pi/2 part 2 (22 bits) */
#define NXC_PIO2_3 NXD(0x3CF84698u, 0x80000000u) /* pi/2 part 3 (22 bits) */
#define NXC_PIO2_4 NXD(0x3B78CC51u, 0x80000000u) /* pi/2 part 4 (22 bits) */
#define NXC_PIO2_5 NXD(0xB9EFC8F9u, 0x00000000u) /* pi/2 part 5 (22 bits) */
#define NXC_PIO2_6 NXD(0x387A2520u, 0x49C1114Du) /* 1.2293331171481208e-36 */
#define NXC_TWO_OVER_PI NXD(0x3FE45F30u, 0x6DC9C883u) /* 0.6366197723675814 */
#define NXC_PIO2_HI NXD(0x3FF921FBu, 0x54442D18u) /* 1.5707963267948966 */
#define NXC_PIO2_LO NXD(0x3C91A626u, 0x33145C07u) /* 6.123233995736766e-17 */
#define NXC_PI_HI NXD(0x400921FBu, 0x54442D18u) /* 3.141592653589793 */
#define NXC_PI_LO NXD(0x3CA1A626u, 0x33145C07u) /* 1.2246467991473532e-16 */
#define NXC_PIO4_HI NXD(0x3FE921FBu, 0x54442D18u) /* 0.7853981633974483 */
#define NXC_PIO4_LO NXD(0x3C81A626u, 0x33145C07u) /* 3.061616997868383e-17 */
#define NXC_3PIO4 NXD(0x4002D97Cu, 0x7F3321D2u) /* 2.356194490192345 */
#define NXC_ATAN_Q1_HI NXD(0x3FCF5B75u, 0xF92C80DDu) /* 0.24497866312686414 */
#define NXC_ATAN_Q1_LO NXD(0x3C68AB6Eu, 0x3CF7AFBDu) /* 1.0698755618734451e-17 */
#define NXC_ATAN_Q2_HI NXD(0x3FDDAC67u, 0x0561BB4Fu) /* 0.4636476090008061 */
#define NXC_ATAN_Q2_LO NXD(0x3C7A2B7Fu, 0x222F65E2u) /* 2.2698777452961687e-17 */
#define NXC_ATAN_Q3_HI NXD(0x3FE4978Fu, 0xA3269EE1u) /* 0.6435011087932844 */
#define NXC_ATAN_Q3_LO NXD(0x3C72419Au, 0x87F2A458u) /* 1.5834785051444286e-17 */
#define NXC_ERF_C0_HI NXD(0x3FF20DD7u, 0x50429B6Du) /* 1.1283791670955126 */
#define NXC_ERF_C0_LO NXD(0x3C71AE3Au, 0x914FED80u) /* 1.533545961316588e-17 */
#define NXC_ERF_C1_HI NXD(0xBFD81274u, 0x6B0379E7u) /* -0.37612638903183754 */
#define NXC_ERF_C1_LO NXD(0x3C6EE12Eu, 0x49CAB700u) /* 1.3391897206030649e-17 */
#define NXC_ERF_T2 NXD(0x3FBCE2F2u, 0x1A042BE2u) /* 0.11283791670955126 */
#define NXC_ERF_T3 NXD(0xBF9B82CEu, 0x31288B51u) /* -0.026866170645131252 */
#define NXC_ERF_T4 NXD(0x3F7565BCu, 0xD0E6A53Fu) /* 0.005223977625442188 */
#define NXC_ERF_T5 NXD(0xBF4C02DBu, 0x40040B86u) /* -0.0008548327023450853 */
#define NXC_ERF_T6 NXD(0x3F1F9A32u, 0x6F9B89B7u) /* 0.00012055332981789664 */
#define NXC_ERF_T7 NXD(0xBEEF4D25u, 0xC3E0C2EBu) /* -1.492565035840625e-05 */
#define NXC_ERF_T8 NXD(0x3EBB9E6Cu, 0x9DC651A3u) /* 1.6462114365889248e-06 */
#define NXC_ERF_T9 NXD(0xBE85F742u, 0xEC43E71Au) /* -1.6365844691234924e-07 */
#define NXC_ERF_T10 NXD(0x3E4FCC57u, 0x20624C1Cu) /* 1.4807192815879218e-08 */
#define NXC_ERF_T11 NXD(0xBE151D71u, 0x81C5D36Du) /* -1.2290555301717928e-09 */
#define NXC_ERF_T12 NXD(0x3DD9E6ADu, 0x5E55A730u) /* 9.422759064650411e-11 */
#define NXC_ERF_T13 NXD(0xBD9D8453u, 0xCB0C46EAu) /* -6.7113668551641105e-12 */
#define NXC_ERF_T14 NXD(0x3D5F683Au, 0xE4A97007u) /* 4.4632242632864775e-13 */
#define NXC_ERF_T15 NXD(0xBD1F56F0u, 0x71A885CFu) /* -2.7835162072109215e-14 */
#define NXC_ERF_T16 NXD(0x3CDD70B3u, 0x537F4765u) /* 1.6342614095367152e-15 */
#define NXC_ERF_T17 NXD(0xBC9A2007u, 0xAF3447F6u) /* -9.063970842808673e-17 */
#define NXC_ERF_T18 NXD(0x3C55F791u, 0x9BC67B8Cu) /* 4.763348040515068e-18 */

struct nxdd { double hi; double lo; };           /* unevaluated sum hi + lo */
struct nxexpd { double hi; double lo; int k; };  /* exp(x) = 2^k (1 + hi + lo) */
struct nxredd { double hi; double lo; int q; };  /* x = q pi/2 + hi + lo (mod 2 pi) */

NXFN bool nx_isnand(double x) {
  uvec2 w = unpackDouble2x32(x);
  uint h = w.y & 0x7fffffffu;
  return h > 0x7ff00000u || (h == 0x7ff00000u && w.x != 0u);
}
NXFN bool nx_isinfd(double x) {
  uvec2 w = unpackDouble2x32(x);
  return (w.y & 0x7fffffffu) == 0x7ff00000u && w.x == 0u;
}
NXFN bool nx_signbitd(double x) { return (unpackDouble2x32(x).y & 0x80000000u) != 0u; }
NXFN double nx_absd(double x) {
  uvec2 w = unpackDouble2x32(x);
  return packDouble2x32(uvec2(w.x, w.y & 0x7fffffffu));
}
NXFN double nx_copysignd(double a, double b) {
  uvec2 w = unpackDouble2x32(a);
  uint s = unpackDouble2x32(b).y & 0x80000000u;
  return packDouble2x32(uvec2(w.x, (w.y & 0x7fffffffu) | s));
}
/* 2^k, k in [-1074, 1023] */
NXFN double nx_pow2d(int k) {
  if (k >= -1022) return packDouble2x32(uvec2(0u, NX_U(k + 1023) << 20));
  int s = k + 1074;
  if (s >= 32) return packDouble2x32(uvec2(0u, 1u << NX_U(s - 32)));
  return packDouble2x32(uvec2(1u << NX_U(s), 0u));
}
/* x * 2^n for n in [-2200, 2200]: exact unless the result leaves the normal
 * range (then one rounding when x is normal and near 1).  Straight-line on
 * purpose (see nx_ldexpf). */
NXFN double nx_ldexpd(double x, int n) {
  int a = (n > 1023) ? 600 : ((n < -1022) ? -600 : 0);
  int m = n - a;
  int b = (m > 1023) ? 600 : ((m < -1022) ? -600 : 0);
  int c = m - b;
  c = (c > 1023) ? 1023 : ((c < -1074) ? -1074 : c);
  double r = x * nx_pow2d(a);
  r = r * nx_pow2d(b);
  return r * nx_pow2d(c);
}
/* exponent of a finite nonzero x (subnormals included) */
NXFN int nx_ilogbd(double x) {
  int e = NX_I((unpackDouble2x32(x).y >> 20) & 0x7ffu);
  if (e == 0) return NX_I((unpackDouble2x32(x * nx_pow2d(54)).y >> 20) & 0x7ffu) - 1023 - 54;
  return e - 1023;
}

/* --- double-double arithmetic (no fma; see the float-float note) --- */
NXFN nxdd nx_dd(double h, double l) { nxdd r; r.hi = h; r.lo = l; return r; }
NXFN nxdd nx_two_sum(double a, double b) {
  NX_PRECISE double s = a + b;
  NX_PRECISE double bb = s - a;
  NX_PRECISE double e = (a - (s - bb)) + (b - bb);
  return nx_dd(s, e);
}
NXFN nxdd nx_fast_two_sum(double a, double b) { /* |a| >= |b| or a == 0 */
  NX_PRECISE double s = a + b;
  NX_PRECISE double e = b - (s - a);
  return nx_dd(s, e);
}
/* a = hi + lo, each with at most 26 significant bits (Veltkamp); |a| < 2^996 */
NXFN nxdd nx_split(double a) {
  NX_PRECISE double c = 134217729.0 * a;
  NX_PRECISE double h = c - (c - a);
  NX_PRECISE double l = a - h;
  return nx_dd(h, l);
}
/* a * b = hi + lo exactly (Dekker); |a|, |b| < 2^996, no underflow */
NXFN nxdd nx_two_prod(double a, double b) {
  nxdd as = nx_split(a);
  nxdd bs = nx_split(b);
  NX_PRECISE double p = a * b;
  NX_PRECISE double e = (((as.hi * bs.hi - p) + as.hi * bs.lo) + as.lo * bs.hi) + as.lo * bs.lo;
  return nx_dd(p, e);
}
NXFN nxdd nx_dd_add(nxdd a, nxdd b) {
  nxdd s = nx_two_sum(a.hi, b.hi);
  NX_PRECISE double e = s.lo + (a.lo + b.lo);
  return nx_fast_two_sum(s.hi, e);
}
NXFN nxdd nx_dd_mul(nxdd a, nxdd b) {
  nxdd p = nx_two_prod(a.hi, b.hi);
  NX_PRECISE double e = p.lo + (a.hi * b.lo + a.lo * b.hi);
  return nx_fast_two_sum(p.hi, e);
}
/* a / b; tolerates an inexact hardware division (the residual corrects it) */
NXFN nxdd nx_dd_div(nxdd a, nxdd b) {
  double q = a.hi / b.hi;
  nxdd qb = nx_two_prod(q, b.hi);
  NX_PRECISE double r = (a.hi - qb.hi) - qb.lo; /* exact */
  NX_PRECISE double r2 = (r + a.lo) - q * b.lo;
  NX_PRECISE double ql = r2 / b.hi;
  return nx_fast_two_sum(q, ql);
}

/* exp(xh + xl) = 2^k (1 + u): k = round(xh/ln2), r = xh + xl - k ln2 with
 * ln2 in Cody-Waite parts (k * hi exact, xh - k hi exact), u = expm1(r) by
 * its Taylor polynomial to r^14 (|r| <= 0.3466, truncation < 2^-62).
 * Valid for |xh| <= 750, |xl| <= 2^-40. */
NXFN nxexpd nx_exp_core(double xh, double xl) {
  double kd = floor(xh * NXC_INV_LN2 + 0.5);
  NX_PRECISE double r1 = xh - kd * NXC_LN2_CW_HI;
  NX_PRECISE double c = xl - kd * NXC_LN2_CW_LO;
  nxdd r = nx_two_sum(r1, c);
  double x = r.hi;
  double p = NXC_FI14;
  p = p * x + NXC_FI13;
  p = p * x + NXC_FI12;
  p = p * x + NXC_FI11;
  p = p * x + NXC_FI10;
  p = p * x + NXC_FI9;
  p = p * x + NXC_FI8;
  p = p * x + NXC_FI7;
  p = p * x + NXC_FI6;
  p = p * x + NXC_FI5;
  p = p * x + NXC_FI4;
  p = p * x + NXC_FI3;
  p = p * x + NXC_FI2;
  NX_PRECISE double t = x * x * p + (r.lo + x * r.lo);
  nxdd u = nx_fast_two_sum(x, t);
  nxexpd e;
  e.hi = u.hi;
  e.lo = u.lo;
  e.k = NX_I(kd);
  return e;
}
/* 2^k (1 + u) rounded once (twice for subnormal results) */
NXFN double nx_exp_fin(nxexpd e) {
  nxdd v = nx_two_sum(1.0, e.hi);
  return nx_ldexpd(v.hi + (v.lo + e.lo), e.k);
}
/* exp(xh + xl) as double-double, for results in the normal range */
NXFN nxdd nx_exp_dd(double xh, double xl) {
  nxexpd e = nx_exp_core(xh, xl);
  nxdd v = nx_two_sum(1.0, e.hi);
  nxdd r = nx_fast_two_sum(v.hi, v.lo + e.lo);
  double s = nx_pow2d(e.k);
  return nx_dd(r.hi * s, r.lo * s);
}
/* expm1(x) as double-double for x in [-40, 45] */
NXFN nxdd nx_expm1_dd(double x) {
  nxexpd e = nx_exp_core(x, 0.0);
  if (e.k == 0) return nx_dd(e.hi, e.lo);
  double s = nx_pow2d(e.k);
  if (e.k > 0) { /* 2^k (u + (1 - 2^-k)) */
    nxdd w = nx_two_sum(1.0, -nx_pow2d(-e.k));
    nxdd v = nx_two_sum(w.hi, e.hi);
    NX_PRECISE double vl = (v.lo + w.lo) + e.lo;
    nxdd r = nx_fast_two_sum(v.hi, vl);
    return nx_dd(r.hi * s, r.lo * s);
  }
  /* (2^k - 1) + 2^k u */
  nxdd w = nx_two_sum(-1.0, s);
  nxdd v = nx_two_sum(w.hi, s * e.hi);
  NX_PRECISE double vl = (v.lo + w.lo) + s * e.lo;
  return nx_fast_two_sum(v.hi, vl);
}

/* log(xh + xl) as double-double; xh > 0 finite, |xl| <= ulp(xh).
 * x = 2^e m, m in [sqrt(1/2), sqrt(2)); log m = 2 atanh(s), s = (m-1)/(m+1),
 * |s| <= 0.1716: 2s (1 + z/3 + z^2/5 + ... + z^12/25), z = s^2, with s, z,
 * z/3 and the products in double-double and the tail in double; e ln2 in
 * double-double.  About 2^-66 relative: enough for pow. */
NXFN nxdd nx_log_dd(double xh, double xl) {
  int e = 0;
  if (xh < NXD(0x00100000u, 0x00000000u)) {
    xh = xh * nx_pow2d(54);
    xl = xl * nx_pow2d(54);
    e = -54;
  }
  uvec2 w = unpackDouble2x32(xh);
  e += NX_I(w.y >> 20) - 1023;
  uint mh = w.y & 0x000fffffu;
  if (mh >= 0x0006a09eu) { mh = mh | 0x3fe00000u; e += 1; } else { mh = mh | 0x3ff00000u; }
  double m = packDouble2x32(uvec2(w.x, mh));
  double ml = (xl == 0.0) ? 0.0 : nx_ldexpd(xl, -e);
  nxdd f = nx_two_sum(m - 1.0, ml);
  nxdd d = nx_two_sum(2.0, f.hi);
  d.lo += f.lo;
  nxdd s = nx_dd_div(f, d);
  nxdd z = nx_two_prod(s.hi, s.hi);
  z.lo += 2.0 * s.hi * s.lo;
  double zh = z.hi;
  double tp = NXC_INV25;
  tp = tp * zh + NXC_INV23;
  tp = tp * zh + NXC_INV21;
  tp = tp * zh + NXC_INV19;
  tp = tp * zh + NXC_INV17;
  tp = tp * zh + NXC_INV15;
  tp = tp * zh + NXC_INV13;
  tp = tp * zh + NXC_INV11;
  tp = tp * zh + NXC_INV9;
  tp = tp * zh + NXC_INV7;
  tp = tp * zh + NXC_INV5;
  tp = tp * zh * zh;
  nxdd q = nx_two_prod(zh, NXC_THIRD_HI);
  q.lo += zh * NXC_THIRD_LO + z.lo * NXC_THIRD_HI;
  nxdd q2 = nx_two_sum(q.hi, tp);
  q2.lo += q.lo;
  nxdd sq = nx_two_prod(s.hi, q2.hi);
  sq.lo += s.hi * q2.lo + s.lo * q2.hi;
  nxdd l = nx_two_sum(s.hi, sq.hi);
  l.lo += s.lo + sq.lo;
  l.hi *= 2.0;
  l.lo *= 2.0;
  double ed = NX_D(e);
  nxdd el = nx_two_prod(ed, NXC_LN2_HI);
  el.lo += ed * NXC_LN2_LO;
  return nx_dd_add(el, l);
}

/* exp(x) on its own, in plain double: the core's reduction with r rounded
 * to a double (|r| <= 0.3466; its rounding costs <= 0.25 ULP of the
 * result), e^r - 1 - r by Taylor from r^2 to r^13 (truncation < 2^-57
 * relative), 1 + r exact as two doubles, then 2^k in two halves (each
 * factor normal, so only the last product rounds, once, for subnormal
 * results).  About half the f64 operations of nx_exp_fin(nx_exp_core()):
 * f64 exp was compute-bound on an H200 (bench/NOTES.md, fifth round). */
NXFN double nxd_exp(double x) {
  if (nx_isnand(x)) return x;
  if (x > 710.0) return NX_INF_D;
  if (x < -746.0) return 0.0;
  double kd = floor(x * NXC_INV_LN2 + 0.5);
  NX_PRECISE double r1 = x - kd * NXC_LN2_CW_HI; /* exact */
  double r = r1 - kd * NXC_LN2_CW_LO;
  double p = NXC_FI13;
  p = p * r + NXC_FI12;
  p = p * r + NXC_FI11;
  p = p * r + NXC_FI10;
  p = p * r + NXC_FI9;
  p = p * r + NXC_FI8;
  p = p * r + NXC_FI7;
  p = p * r + NXC_FI6;
  p = p * r + NXC_FI5;
  p = p * r + NXC_FI4;
  p = p * r + NXC_FI3;
  p = p * r + NXC_FI2;
  double t = r * r * p;
  nxdd s = nx_fast_two_sum(1.0, r);
  double v = s.hi + (s.lo + t);
  int k = NX_I(kd);
  int k1 = k / 2; /* k in [-1077, 1025]: both halves in [-539, 513] */
  double h1 = packDouble2x32(uvec2(0u, NX_U(k1 + 1023) << 20));
  double h2 = packDouble2x32(uvec2(0u, NX_U(k - k1 + 1023) << 20));
  return (v * h1) * h2;
}

/* log(x) */
NXFN double nxd_log(double x) {
  if (nx_isnand(x)) return x;
  if (x == 0.0) return -NX_INF_D;
  if (x < 0.0) return NX_NAN_D;
  if (nx_isinfd(x)) return x;
  return nx_log_dd(x, 0.0).hi;
}

/* expm1(x) */
NXFN double nxd_expm1(double x) {
  if (nx_isnand(x)) return x;
  if (x > 40.0) {
    if (x > 710.0) return NX_INF_D;
    return nx_exp_fin(nx_exp_core(x, 0.0));
  }
  if (x < -40.0) return -1.0;
  if (nx_absd(x) < nx_pow2d(-54)) return x;
  return nx_expm1_dd(x).hi;
}

/* log1p(x): log of the exact double-double 1 + x */
NXFN double nxd_log1p(double x) {
  if (nx_isnand(x)) return x;
  if (x < -1.0) return NX_NAN_D;
  if (x == -1.0) return -NX_INF_D;
  if (nx_isinfd(x)) return x;
  if (nx_absd(x) < nx_pow2d(-54)) return x;
  nxdd u = nx_two_sum(1.0, x);
  return nx_log_dd(u.hi, u.lo).hi;
}

/* tanh(x) = expm1(2|x|) / (expm1(2|x|) + 2) in double-double */
NXFN double nxd_tanh(double x) {
  if (nx_isnand(x)) return x;
  double ax = nx_absd(x);
  if (ax < nx_pow2d(-27)) return x;
  if (ax > 22.0) return nx_copysignd(1.0, x);
  nxdd e = nx_expm1_dd(2.0 * ax);
  nxdd d = nx_two_sum(2.0, e.hi);
  d.lo += e.lo;
  return nx_copysignd(nx_dd_div(e, d).hi, x);
}

/* sigmoid(x) = 1 / (1 + exp(-x)) in double-double */
NXFN double nxd_sigmoid(double x) {
  if (nx_isnand(x)) return x;
  if (x >= 0.0) {
    if (x > 40.0) return 1.0;
    nxdd t = nx_exp_dd(-x, 0.0);
    nxdd d = nx_two_sum(1.0, t.hi);
    d.lo += t.lo;
    return nx_dd_div(nx_dd(1.0, 0.0), d).hi;
  }
  if (x < -40.0) {
    if (x < -750.0) return 0.0;
    return nx_exp_fin(nx_exp_core(x, 0.0)); /* e^x (1 - e^x), e^x < 2^-57 */
  }
  nxdd t = nx_exp_dd(x, 0.0);
  nxdd d = nx_two_sum(1.0, t.hi);
  d.lo += t.lo;
  return nx_dd_div(t, d).hi;
}

/* erf(x).  |x| < 1: x (c0 + c1 z + z^2 R(z)), z = x^2, Taylor to x^37, the
 * first two terms and the final product in double-double.  1 <= |x| < 6:
 * 1 - exp(-x^2) g(x), g = erfcx fitted (Chebyshev, mpmath) on [1,2), [2,3),
 * [3,4.5), [4.5,6); exp(-x^2) from the exact x^2.  |x| >= 6: +-1. */
NXFN double nxd_erf(double x) {
  if (nx_isnand(x)) return x;
  double ax = nx_absd(x);
  if (ax == 0.0) return x;
  if (ax < nx_pow2d(-500)) { /* c0 x, scaled so the product's rounding is normal */
    double xs = x * nx_pow2d(600);
    nxdd p = nx_two_prod(xs, NXC_ERF_C0_HI);
    return (p.hi + (p.lo + xs * NXC_ERF_C0_LO)) * nx_pow2d(-600);
  }
  if (ax < 1.0) {
    nxdd z = nx_two_prod(ax, ax);
    double zh = z.hi;
    double rp = NXC_ERF_T18;
    rp = rp * zh + NXC_ERF_T17;
    rp = rp * zh + NXC_ERF_T16;
    rp = rp * zh + NXC_ERF_T15;
    rp = rp * zh + NXC_ERF_T14;
    rp = rp * zh + NXC_ERF_T13;
    rp = rp * zh + NXC_ERF_T12;
    rp = rp * zh + NXC_ERF_T11;
    rp = rp * zh + NXC_ERF_T10;
    rp = rp * zh + NXC_ERF_T9;
    rp = rp * zh + NXC_ERF_T8;
    rp = rp * zh + NXC_ERF_T7;
    rp = rp * zh + NXC_ERF_T6;
    rp = rp * zh + NXC_ERF_T5;
    rp = rp * zh + NXC_ERF_T4;
    rp = rp * zh + NXC_ERF_T3;
    rp = rp * zh + NXC_ERF_T2;
    nxdd c1z = nx_two_prod(NXC_ERF_C1_HI, zh);
    c1z.lo += NXC_ERF_C1_HI * z.lo + NXC_ERF_C1_LO * zh;
    nxdd s = nx_two_sum(NXC_ERF_C0_HI, c1z.hi);
    s.lo += NXC_ERF_C0_LO + c1z.lo;
    nxdd s2 = nx_two_sum(s.hi, zh * zh * rp);
    s2.lo += s.lo;
    nxdd p = nx_two_prod(x, s2.hi);
    return p.hi + (p.lo + x * s2.lo);
  }
  if (ax < 6.0) {
    double p;
    double t;
    if (ax < 2.0) {
      t = ax - 1.5;
      /* erfcx on [1,2), t = x - 1.5, deg 16, rel err 2^-54.0 */
      p = NXD(0x3E4C702Au, 0x07F72A49u);
      p = p * t + NXD(0xBE6A9986u, 0x23712D22u); /* -4.9545807838901603e-08 */
      p = p * t + NXD(0x3E866EFCu, 0xC06CA710u); /* 1.6714292901928126e-07 */
      p = p * t + NXD(0xBEA3F2AEu, 0xC68E0EF9u); /* -5.9449611199176638e-07 */
      p = p * t + NXD(0x3EC156FDu, 0x6FB88DA9u); /* 2.0670657912156654e-06 */
      p = p * t + NXD(0xBEDD41BCu, 0xF828A13Du); /* -6.9753622278584302e-06 */
      p = p * t + NXD(0x3EF7F996u, 0xB47B4062u); /* 2.2864299608127746e-05 */
      p = p * t + NXD(0xBF130C0Du, 0xEEF7E30Bu); /* -7.2658873015895586e-05 */
      p = p * t + NXD(0x3F2D4509u, 0xD2E96628u); /* 0.0002233099453004411 */
      p = p * t + NXD(0xBF45B0ACu, 0x006DED44u); /* -0.00066193007010843146 */
      p = p * t + NXD(0x3F5EE705u, 0xE7339EA0u); /* 0.0018861348769919975 */
      p = p * t + NXD(0xBF7513EDu, 0x75FE3AA1u); /* -0.0051459575478377826 */
      p = p * t + NXD(0x3F8B6594u, 0x4F34F932u); /* 0.013377340953067394 */
      p = p * t + NXD(0xBFA0DC51u, 0xD2941FE8u); /* -0.032930905299565272 */
      p = p * t + NXD(0x3FB37EA2u, 0x71BC54BDu); /* 0.076151039855477401 */
      p = p * t + NXD(0xBFC4F198u, 0x8444CAF6u); /* -0.16362291773256005 */
      p = p * t + NXD(0x3FD494DAu, 0xFFA2AD68u); /* 0.32158541645431749 */
    } else if (ax < 3.0) {
      t = ax - 2.5;
      /* erfcx on [2,3), t = x - 2.5, deg 15, rel err 2^-54.5 */
      p = NXD(0xBE0FF38Cu, 0x1D4F39EEu);
      p = p * t + NXD(0x3E3147E2u, 0x62E8C3B4u); /* 4.0234993518744626e-09 */
      p = p * t + NXD(0xBE515773u, 0x96695E75u); /* -1.6150630522493301e-08 */
      p = p * t + NXD(0x3E720001u, 0xE7E74DE6u); /* 6.7055333708661543e-08 */
      p = p * t + NXD(0xBE92515Bu, 0xF72E2AEFu); /* -2.7295663256796009e-07 */
      p = p * t + NXD(0x3EB23512u, 0xBE3A8587u); /* 1.0852406768030674e-06 */
      p = p * t + NXD(0xBED1AD10u, 0xB982CCA0u); /* -4.2142954940648967e-06 */
      p = p * t + NXD(0x3EF0BCBAu, 0x0CBC77A2u); /* 1.5961851018812493e-05 */
      p = p * t + NXD(0xBF0EDD42u, 0x39D4F7CDu); /* -5.8868964723831839e-05 */
      p = p * t + NXD(0x3F2BA8A6u, 0x7D47F1BEu); /* 0.0002110198244195237 */
      p = p * t + NXD(0xBF4809CEu, 0x8AB511D7u); /* -0.00073359093713825762 */
      p = p * t + NXD(0x3F6435C0u, 0x4E205695u); /* 0.0024670368156972191 */
      p = p * t + NXD(0xBF806320u, 0x76809E02u); /* -0.0080015693821016178 */
      p = p * t + NXD(0x3F998958u, 0xA7A8E4B2u); /* 0.024937997086656956 */
      p = p * t + NXD(0xBFB3086Du, 0x7F01AC85u); /* -0.074347346789794669 */
      p = p * t + NXD(0x3FCAFBB3u, 0xF3B7343Bu); /* 0.21080636406114359 */
    } else if (ax < 4.5) {
      t = ax - 3.75;
      /* erfcx on [3,4.5), t = x - 3.75, deg 16, rel err 2^-53.1 */
      p = NXD(0x3D8967DAu, 0xE44D4942u);
      p = p * t + NXD(0xBDB0F29Au, 0x1B804B70u); /* -1.5413810608799364e-11 */
      p = p * t + NXD(0x3DD46826u, 0xA9906362u); /* 7.423965122429706e-11 */
      p = p * t + NXD(0xBDFA6968u, 0xCAA2FC63u); /* -3.8434162331612393e-10 */
      p = p * t + NXD(0x3E20E61Eu, 0x0CCD1455u); /* 1.9672904194654415e-09 */
      p = p * t + NXD(0xBE4539ACu, 0x8DE010CAu); /* -9.8837955007995465e-09 */
      p = p * t + NXD(0x3E6A3BECu, 0xF1FD62E2u); /* 4.8864789768930948e-08 */
      p = p * t + NXD(0xBE8FE3E1u, 0x75E55576u); /* -2.3760019991307292e-07 */
      p = p * t + NXD(0x3EB30C2Fu, 0xB5AF24B6u); /* 1.1353256101790305e-06 */
      p = p * t + NXD(0xBED65778u, 0xAD238AA2u); /* -5.3266728221335899e-06 */
      p = p * t + NXD(0x3EF9B50Du, 0x0D23A191u); /* 2.4516325375951968e-05 */
      p = p * t + NXD(0xBF1CFCDEu, 0xA1AEA45Cu); /* -0.00011057957492134743 */
      p = p * t + NXD(0x3F3FFF03u, 0x2A0DFA18u); /* 0.00048822238209558907 */
      p = p * t + NXD(0xBF61434Au, 0xE05874BCu); /* -0.0021072828701692286 */
      p = p * t + NXD(0x3F822F06u, 0x64F3CBF8u); /* 0.0088787555273252966 */
      p = p * t + NXD(0xBFA2AA65u, 0x03ACDA11u); /* -0.036456257532723531 */
      p = p * t + NXD(0x3FC2A2AFu, 0x19C14930u); /* 0.14558972127503855 */
    } else {
      t = ax - 5.25;
      /* erfcx on [4.5,6), t = x - 5.25, deg 14, rel err 2^-54.9 */
      p = NXD(0x3D7D1C59u, 0x8868F054u);
      p = p * t + NXD(0xBDA757DFu, 0xBB236BF6u); /* -1.0615284561152645e-11 */
      p = p * t + NXD(0x3DD190FEu, 0xA7460880u); /* 6.390613890363394e-11 */
      p = p * t + NXD(0xBDFB8E2Fu, 0x9A828BF9u); /* -4.0098404675658852e-10 */
      p = p * t + NXD(0x3E2566AAu, 0x000F373Cu); /* 2.4914079692311725e-09 */
      p = p * t + NXD(0xBE506A48u, 0x84D7C747u); /* -1.5287817503200323e-08 */
      p = p * t + NXD(0x3E78E375u, 0x120C9F4Du); /* 9.2716906607682889e-08 */
      p = p * t + NXD(0xBEA2A435u, 0x156FFA39u); /* -5.5555805544822307e-07 */
      p = p * t + NXD(0x3ECB93F4u, 0x7379EC9Fu); /* 3.2875476810280219e-06 */
      p = p * t + NXD(0xBEF4230Eu, 0x3CE7686Bu); /* -1.9204078677372368e-05 */
      p = p * t + NXD(0x3F1D03E1u, 0x9AA1074Du); /* 0.00011068405606898015 */
      p = p * t + NXD(0xBF449D49u, 0x2A39E16Au); /* -0.00062910149104226693 */
      p = p * t + NXD(0x3F6CDEAEu, 0x21161625u); /* 0.0035241509401113973 */
      p = p * t + NXD(0xBF93E981u, 0xB3B13591u); /* -0.019445444672148652 */
      p = p * t + NXD(0x3FBB096Fu, 0xACE146FEu); /* 0.1056127354688918 */
    }
    nxdd z = nx_two_prod(ax, ax);
    double erfc = nx_exp_fin(nx_exp_core(-z.hi, -z.lo)) * p;
    return nx_copysignd(1.0 - erfc, x);
  }
  return nx_copysignd(1.0, x);
}

/* pow(x, y), C99 Annex F special cases; otherwise exp(y log|x|) with log|x|
 * in double-double (~2^-66) and y*log as an exact product plus the low part,
 * so large results keep their accuracy. */
NXFN double nxd_pow(double x, double y) {
  if ((unpackDouble2x32(y).y & 0x7fffffffu) == 0u && unpackDouble2x32(y).x == 0u) return 1.0;
  if (x == 1.0) return 1.0;
  if (nx_isnand(x) || nx_isnand(y)) return x + y;
  double ax = nx_absd(x);
  double ay = nx_absd(y);
  if (nx_isinfd(y)) {
    if (ax == 1.0) return 1.0;
    return ((ax < 1.0) == (y > 0.0)) ? 0.0 : NX_INF_D;
  }
  bool yint = floor(y) == y;
  bool yodd = yint && ay < nx_pow2d(53) && floor(y * 0.5) * 2.0 != y; /* |y| >= 2^53: even */
  if (ax == 0.0) {
    if (y < 0.0) return yodd ? nx_copysignd(NX_INF_D, x) : NX_INF_D;
    return yodd ? x : 0.0;
  }
  if (nx_isinfd(x)) {
    if (x > 0.0) return (y < 0.0) ? 0.0 : NX_INF_D;
    if (y < 0.0) return yodd ? NX_NZERO_D : 0.0;
    return yodd ? -NX_INF_D : NX_INF_D;
  }
  if (x < 0.0 && !yint) return NX_NAN_D;
  bool neg = x < 0.0 && yodd;
  if (ax == 1.0) return neg ? -1.0 : 1.0; /* x = -1, any integer y */
  if (y == 1.0) return x;
  if (y == 2.0) return x * x;
  nxdd l = nx_log_dd(ax, 0.0);
  double th = y * l.hi;
  double r;
  if (th > 710.0) {
    r = NX_INF_D;
  } else if (th < -746.0) {
    r = 0.0;
  } else { /* |y| < 2^63 here */
    nxdd t = nx_two_prod(y, l.hi);
    r = nx_exp_fin(nx_exp_core(t.hi, t.lo + y * l.lo));
  }
  return neg ? -r : r;
}

/* 24-bit chunk j of the fraction of 2/pi: 2/pi = sum_j chunk(j) 2^(-24(j+1)) */
NXFN double nx_twoopi_chunk(int j) {
  switch (j) {
  case 0: return NX_D(0xA2F983u);
  case 1: return NX_D(0x6E4E44u);
  case 2: return NX_D(0x1529FCu);
  case 3: return NX_D(0x2757D1u);
  case 4: return NX_D(0xF534DDu);
  case 5: return NX_D(0xC0DB62u);
  case 6: return NX_D(0x95993Cu);
  case 7: return NX_D(0x439041u);
  case 8: return NX_D(0xFE5163u);
  case 9: return NX_D(0xABDEBBu);
  case 10: return NX_D(0xC561B7u);
  case 11: return NX_D(0x246E3Au);
  case 12: return NX_D(0x424DD2u);
  case 13: return NX_D(0xE00649u);
  case 14: return NX_D(0x2EEA09u);
  case 15: return NX_D(0xD1921Cu);
  case 16: return NX_D(0xFE1DEBu);
  case 17: return NX_D(0x1CB129u);
  case 18: return NX_D(0xA73EE8u);
  case 19: return NX_D(0x8235F5u);
  case 20: return NX_D(0x2EBB44u);
  case 21: return NX_D(0x84E99Cu);
  case 22: return NX_D(0x7026B4u);
  case 23: return NX_D(0x5F7E41u);
  case 24: return NX_D(0x3991D6u);
  case 25: return NX_D(0x398353u);
  case 26: return NX_D(0x39F49Cu);
  case 27: return NX_D(0x845F8Bu);
  case 28: return NX_D(0xBDF928u);
  case 29: return NX_D(0x3B1FF8u);
  case 30: return NX_D(0x97FFDEu);
  case 31: return NX_D(0x05980Fu);
  case 32: return NX_D(0xEF2F11u);
  case 33: return NX_D(0x8B5A0Au);
  case 34: return NX_D(0x6D1F6Du);
  case 35: return NX_D(0x367ECFu);
  case 36: return NX_D(0x27CB09u);
  case 37: return NX_D(0xB74F46u);
  case 38: return NX_D(0x3F669Eu);
  case 39: return NX_D(0x5FEA2Du);
  case 40: return NX_D(0x7527BAu);
  case 41: return NX_D(0xC7EBE5u);
  case 42: return NX_D(0xF17B3Du);
  case 43: return NX_D(0x0739F7u);
  case 44: return NX_D(0x8A5292u);
  case 45: return NX_D(0xEA6BFBu);
  case 46: return NX_D(0x5FB11Fu);
  case 47: return NX_D(0x8D5D08u);
  case 48: return NX_D(0x560330u);
  case 49: return NX_D(0x46FC7Bu);
  case 50: return NX_D(0x6BABF0u);
  case 51: return NX_D(0xCFBC20u);
  default: return 0.0;
  }
  return 0.0;
}

/* Argument reduction: |x| = q pi/2 + r, |r| <= pi/4 (+ 2^-22 slack), r as a
 * double-double.  |x| < 2^30: Cody-Waite with pi/2 in five 22-bit parts and
 * a sixth double, all products exact, so r is good to ~2^-100 relative even
 * next to a multiple of pi/2.  Larger |x|: Payne-Hanek with 2/pi in 24-bit chunks:
 * x (53 bits as 24+24+5) times the 8 chunks that matter, exact partial
 * products, exact carry propagation, fraction summed in double-double. */
NXFN nxredd nx_rem_pio2(double ax) {
  nxredd res;
  if (ax < nx_pow2d(30)) {
    /* k < 2^30 and each part has 22 bits: k * part is exact; subtract the
     * parts from the double-double r, the first two exactly */
    double k = floor(ax * NXC_TWO_OVER_PI + 0.5);
    nxdd r = nx_two_sum(ax, -k * NXC_PIO2_1);
    r = nx_dd_add(r, nx_dd(-k * NXC_PIO2_2, 0.0));
    r = nx_dd_add(r, nx_dd(-k * NXC_PIO2_3, 0.0));
    r = nx_dd_add(r, nx_dd(-k * NXC_PIO2_4, 0.0));
    r = nx_dd_add(r, nx_dd(-k * NXC_PIO2_5, -k * NXC_PIO2_6));
    res.hi = r.hi;
    res.lo = r.lo;
    res.q = NX_I(k - 4.0 * floor(k * 0.25));
    return res;
  }
  int ex = nx_ilogbd(ax);
  int s0 = ex - 23;
  double a0 = floor(ax * nx_pow2d(-s0));
  NX_PRECISE double rem = ax - a0 * nx_pow2d(s0);
  double a1 = floor(rem * nx_pow2d(24 - s0));
  NX_PRECISE double a2 = (rem - a1 * nx_pow2d(s0 - 24)) * nx_pow2d(48 - s0);
  /* x 2/pi = sum_n q_n 2^(w_n), w_n = ex - 47 - 24 n; terms with w_n >= 2 are
   * multiples of 4 and dropped: start at n0, the first with w_n <= 1. */
  int n0 = (ex >= 49) ? (ex - 49) / 24 + 1 : 0;
  int w0 = ex - 47 - 24 * n0;
  double q[8];
  for (int i = 0; i < 8; i++) {
    int n = n0 + i;
    double acc = a0 * nx_twoopi_chunk(n);
    if (n >= 1) acc += a1 * nx_twoopi_chunk(n - 1);
    if (n >= 2) acc += a2 * nx_twoopi_chunk(n - 2);
    q[i] = acc; /* < 3 * 2^48: exact */
  }
  double carry = 0.0;
  for (int i = 7; i >= 0; i--) {
    double zq = q[i] + carry;
    carry = floor(zq * nx_pow2d(-24));
    q[i] = zq - carry * 16777216.0; /* 24-bit digit */
  }
  /* integer part from the two top digits (48 contiguous bits, exact) */
  NX_PRECISE double top = q[0] * nx_pow2d(w0) + q[1] * nx_pow2d(w0 - 24);
  double ip = floor(top);
  NX_PRECISE double fr = top - ip;
  ip = ip - 4.0 * floor(ip * 0.25);
  if (fr >= 0.5) { fr -= 1.0; ip += 1.0; }
  nxdd f = nx_dd(fr, 0.0);
  for (int i = 2; i < 8; i++) {
    nxdd t = nx_two_sum(f.hi, q[i] * nx_pow2d(w0 - 24 * i));
    f = nx_fast_two_sum(t.hi, t.lo + f.lo);
  }
  nxdd r = nx_dd_mul(f, nx_dd(NXC_PIO2_HI, NXC_PIO2_LO));
  res.hi = r.hi;
  res.lo = r.lo;
  res.q = NX_I(ip) & 3;
  return res;
}

/* sin(rh + rl), |rh| <= pi/4: Taylor to r^17 */
NXFN double nx_sin_kernel(double rh, double rl) {
  double z = rh * rh;
  double p = NXC_FI17;
  p = p * z - NXC_FI15;
  p = p * z + NXC_FI13;
  p = p * z - NXC_FI11;
  p = p * z + NXC_FI9;
  p = p * z - NXC_FI7;
  p = p * z + NXC_FI5;
  p = p * z - NXC_FI3;
  NX_PRECISE double t = rh * z * p + rl * (1.0 - 0.5 * z);
  return rh + t;
}
/* cos(rh + rl), |rh| <= pi/4: 1 - r^2/2 exact in double-double, Taylor to r^18 */
NXFN double nx_cos_kernel(double rh, double rl) {
  nxdd z = nx_two_prod(rh, rh);
  double zh = z.hi;
  double p = -NXC_FI18;
  p = p * zh + NXC_FI16;
  p = p * zh - NXC_FI14;
  p = p * zh + NXC_FI12;
  p = p * zh - NXC_FI10;
  p = p * zh + NXC_FI8;
  p = p * zh - NXC_FI6;
  p = p * zh + NXC_FI4;
  nxdd w = nx_two_sum(1.0, -0.5 * zh);
  NX_PRECISE double t = w.lo + ((zh * zh * p - 0.5 * z.lo) - rh * rl);
  return w.hi + t;
}

/* sin(x), cos(x): any finite x (Payne-Hanek past 2^30); +-inf, NaN -> NaN */
NXFN double nxd_sin(double x) {
  if (nx_isnand(x)) return x;
  if (nx_isinfd(x)) return NX_NAN_D;
  double ax = nx_absd(x);
  if (ax < nx_pow2d(-26)) return x;
  nxredd r = nx_rem_pio2(ax);
  double v = ((r.q & 1) == 0) ? nx_sin_kernel(r.hi, r.lo) : nx_cos_kernel(r.hi, r.lo);
  if ((r.q & 2) != 0) v = -v;
  return nx_signbitd(x) ? -v : v;
}
NXFN double nxd_cos(double x) {
  if (nx_isnand(x)) return x;
  if (nx_isinfd(x)) return NX_NAN_D;
  double ax = nx_absd(x);
  if (ax < nx_pow2d(-27)) return 1.0;
  nxredd r = nx_rem_pio2(ax);
  double v = ((r.q & 1) == 0) ? nx_cos_kernel(r.hi, r.lo) : nx_sin_kernel(r.hi, r.lo);
  if (((r.q + 1) & 2) != 0) v = -v;
  return v;
}

/* atan2(y, x), C99 Annex F special cases; as nxf_atan2 in double-double with
 * the reduced |u| <= 1/8 by its odd Taylor polynomial to u^21. */
NXFN double nxd_atan2(double y, double x) {
  if (nx_isnand(x) || nx_isnand(y)) return x + y;
  double ay = nx_absd(y);
  double ax = nx_absd(x);
  bool xneg = nx_signbitd(x);
  if (nx_isinfd(y)) {
    double v = nx_isinfd(x) ? (xneg ? NXC_3PIO4 : NXC_PIO4_HI) : NXC_PIO2_HI;
    return nx_copysignd(v, y);
  }
  if (nx_isinfd(x) || ay == 0.0) return nx_copysignd(xneg ? NXC_PI_HI : 0.0, y);
  if (ax == 0.0) return nx_copysignd(NXC_PIO2_HI, y);
  bool sw = ay > ax;
  double num = sw ? ax : ay;
  double den = sw ? ay : ax;
  /* den scaled to [1, 2), see nxf_atan2 */
  int e = nx_ilogbd(den);
  double ns = nx_ldexpd(num, -e);
  double ds = nx_ldexpd(den, -e);
  double th = ns / ds;
  double tl = 0.0; /* th + tl = num / den to ~2^-104; for th < 2^-900 th alone is enough */
  if (th >= nx_pow2d(-900)) {
    nxdd pt = nx_two_prod(th, ds);
    tl = ((ns - pt.hi) - pt.lo) / ds;
  }
  double jd = floor(th * 4.0 + 0.5);
  nxdd a = nx_dd(0.0, 0.0);
  nxdd u = nx_dd(th, tl);
  if (jd > 0.0) {
    double c = jd * 0.25;
    nxdd n = nx_two_sum(th, -c);
    n.lo += tl;
    nxdd pr = nx_two_prod(th, c);
    nxdd d = nx_two_sum(1.0, pr.hi);
    d.lo += pr.lo + tl * c;
    u = nx_dd_div(n, d);
    if (jd == 1.0) a = nx_dd(NXC_ATAN_Q1_HI, NXC_ATAN_Q1_LO);
    else if (jd == 2.0) a = nx_dd(NXC_ATAN_Q2_HI, NXC_ATAN_Q2_LO);
    else if (jd == 3.0) a = nx_dd(NXC_ATAN_Q3_HI, NXC_ATAN_Q3_LO);
    else a = nx_dd(NXC_PIO4_HI, NXC_PIO4_LO);
  }
  double z = u.hi * u.hi;
  double pz = NXC_INV21;
  pz = pz * z - NXC_INV19;
  pz = pz * z + NXC_INV17;
  pz = pz * z - NXC_INV15;
  pz = pz * z + NXC_INV13;
  pz = pz * z - NXC_INV11;
  pz = pz * z + NXC_INV9;
  pz = pz * z - NXC_INV7;
  pz = pz * z + NXC_INV5;
  pz = pz * z - NXC_THIRD_HI;
  NX_PRECISE double corr = u.hi * z * pz + u.lo * (1.0 - z);
  nxdd r = nx_dd_add(a, nx_fast_two_sum(u.hi, corr));
  if (sw) r = nx_dd_add(nx_dd(NXC_PIO2_HI, NXC_PIO2_LO), nx_dd(-r.hi, -r.lo));
  if (xneg) r = nx_dd_add(nx_dd(NXC_PI_HI, NXC_PI_LO), nx_dd(-r.hi, -r.lo));
  return nx_copysignd(r.hi, y);
}

/* sqrt: the GLSL builtin (correctly rounded for double) */
NXFN double nxd_sqrt(double x) { return sqrt(x); }

/* 1/sqrt(x): y0 = 1/sqrt(x), one Newton step with the residual 1 - x y0^2
 * formed exactly (so an inexact hardware sqrt or division is corrected); rsqrt(+-0) = +-inf, rsqrt(+inf) = +0, x < 0 -> NaN. */
NXFN double nxd_rsqrt(double x) {
  if (nx_isnand(x)) return x;
  if (x == 0.0) return nx_copysignd(NX_INF_D, x);
  if (x < 0.0) return NX_NAN_D;
  if (nx_isinfd(x)) return 0.0;
  double sc = 1.0;
  if (x > nx_pow2d(900)) { x = x * nx_pow2d(-200); sc = nx_pow2d(-100); }
  else if (x < nx_pow2d(-900)) { x = x * nx_pow2d(200); sc = nx_pow2d(100); }
  double y0 = 1.0 / sqrt(x);
  nxdd p = nx_two_prod(y0, y0);
  nxdd xp = nx_two_prod(x, p.hi);
  NX_PRECISE double e = ((1.0 - xp.hi) - xp.lo) - x * p.lo; /* 1 - x y0^2 */
  return (y0 + (0.5 * y0) * e) * sc;
}

/* round half away from zero, exact */
NXFN double nxd_round(double x) {
  double a = nx_absd(x);
  if (nx_isnand(x) || a >= nx_pow2d(52)) return x; /* already integral */
  double t = floor(a); /* a >= 0; floor, not trunc: lavapipe's f64 trunc is wrong */
  if (a - t >= 0.5) t += 1.0;
  return nx_copysignd(t, x);
}

/* sign: 1, -1, or x itself for +-0 and NaN */
NXFN double nxd_sign(double x) {
  if (x > 0.0) return 1.0;
  if (x < 0.0) return -1.0;
  return x;
}

/* see nx_rem_fixf / nx_rem_stepf */
NXFN nxdd nx_rem_fix(nxdd r, double s) {
  double d = 0.0;
  if (r.hi < 0.0) d = s;
  else if (r.hi > s || (r.hi == s && r.lo >= 0.0)) d = -s;
  nxdd t = nx_two_sum(r.hi, d);
  return nx_two_sum(t.hi, t.lo + r.lo);
}
NXFN double nx_rem_step(double ax, double s) {
  /* keep q s and the splitting finite, and its partial products normal */
  int sc = (ax >= nx_pow2d(960)) ? -128 : (s < nx_pow2d(-900)) ? 600 : 0;
  ax = ax * nx_pow2d(sc);
  s = s * nx_pow2d(sc);
  double q = floor(ax / s);
  nxdd p = nx_two_prod(q, s);
  NX_PRECISE double h = ax - p.hi; /* exact (Sterbenz) */
  nxdd r = nx_two_sum(h, -p.lo);
  r = nx_rem_fix(r, s);
  r = nx_rem_fix(r, s);
  r = nx_rem_fix(r, s);
  return r.hi * nx_pow2d(-sc);
}
/* fmod(x, y): exact, sign of x.  Long division by y 2^d, 52 bits a step
 * (at most 41 steps). */
NXFN double nxd_rem(double x, double y) {
  if (nx_isnand(x) || nx_isnand(y)) return x + y;
  if (nx_isinfd(x) || y == 0.0) return NX_NAN_D;
  double ax = nx_absd(x);
  double ay = nx_absd(y);
  if (nx_isinfd(y) || ax < ay) return x;
  int ey = nx_ilogbd(ay);
  for (int it = 0; it < 48; it++) {
    if (ax < ay) break;
    int d = nx_ilogbd(ax) - ey - 52;
    ax = nx_rem_step(ax, (d > 0) ? nx_ldexpd(ay, d) : ay);
  }
  return nx_copysignd(ax, x);
}

/* NaN-propagating max/min; max(-0, +0) = +0, min(-0, +0) = -0 */
NXFN double nxd_max(double a, double b) {
  if (nx_isnand(a) || nx_isnand(b)) return a + b;
  if (a == b) return nx_signbitd(a) ? b : a;
  return a > b ? a : b;
}
NXFN double nxd_min(double a, double b) {
  if (nx_isnand(a) || nx_isnand(b)) return a + b;
  if (a == b) return nx_signbitd(a) ? a : b;
  return a < b ? a : b;
}

#endif /* NXMATH_NO_F64 */
#endif /* NXMATH_GLSL */
