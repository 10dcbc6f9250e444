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
 * (f64); C has no overloading, so the names differ.  f32: exp log expm1
 * log1p sin cos tanh sigmoid erf pow atan2 rsqrt sqrt div add sub mul round
 * sign rem max min floor ceil and the comparisons, all correct on a driver
 * that flushes denormals (see "f32 on the bits" below).  f64:
 * exp log expm1 log1p sin cos tanh sigmoid erf atan2 pow sqrt rsqrt round
 * sign rem max min div add sub mul floor ceil and the comparisons; add, sub,
 * mul, div, sqrt, rem, sign, max, min, floor, ceil and the comparisons are
 * bit-identical to IEEE also where the driver flushes f64 denormals (see
 * "f64 on the bits").  Semantics: DESIGN.md "Op semantics"; pow and atan2
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
 *  - f32 and f64 share one source where they share the algorithm: the
 *    NX_T_* templates ("One source for f32 and f64, the functions" below),
 *    instantiated by each family with its vocabulary, polynomials and
 *    thresholds.  GLSL's `precise` does not reach from a callee back into
 *    its caller: a value a template's exact steps consume, computed in the
 *    caller, is declared NX_PRECISE there (nxf_atan2's th, tl).
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
 *   exp        1 (0.82, a subnormal result)                       1 (0.71)
 *   log        1 (0.50)                                          1 (0.50)
 *   expm1      1 (0.95)                                          1 (0.92)
 *   log1p      1 (0.50)                                          1 (0.50)
 *   sin, cos   1 (0.79), whole double range incl. 2^1023          1 (0.77), whole range
 *   tanh       1 (0.79)                                          1 (0.78)
 *   sigmoid    1 (0.77)                                          1 (0.77)
 *   erf        1 (0.88)                                          1 (0.84)
 *   atan2      1 (0.51; 0.98 for subnormal results)              1 (0.51; 0.99)
 *   pow        1 (0.76), whole range incl. results near overflow  1 (0.77)
 *   rsqrt      1 (0.50)                                          1 (0.50)
 *   sqrt, div  0 (corr. rounded)                                  0 (correctly rounded)
 *  round, sign, rem, max, min: exact (0 ULP, bit for bit with C) in both
 *  families.  Results in the subnormal range take one extra rounding
 *  (still <= 1 ULP).  The unit test checks <= 2 ULP for every function.
 * On devices (262k-4M points each, same inputs, tools not in the repo):
 *  - lavapipe (llvmpipe, LLVM 15): every function bit-identical to the C
 *    build.
 *  - NVIDIA H200 (driver 580): f64 all <= 1 ULP over all inputs, subnormals
 *    included; results differ from C by 1 ULP here and there where the
 *    driver contracts a * b + c.  That device flushes f32 denormals
 *    (shaderDenormPreserveFloat32 = false): the f32 family reads denormal
 *    operands from their bits and builds denormal results from bits, so
 *    its results do not depend on it; tests/unit/test_ieee.c runs the C
 *    build under x86 FTZ|DAZ to check exactly that.
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

/* ------------------------------------------------------------------------
 * One source for f32 and f64: NX_PAIR_ARITH expands, for a type T, the
 * error-free transformations and pair ("float-float" / "double-double")
 * arithmetic under the names it is given, so f32 and f64 get the same text
 * and a fix lands in both.  SPLITTER is Veltkamp's 2^ceil(p/2) + 1 (4097 for
 * f32, 2^27 + 1 for f64, given by its bits: a GLSL literal is single
 * precision).  No fma: Vulkan lets fma() round twice (lavapipe
 * does), so exact products come from Dekker's splitting; `precise` keeps the
 * compiler from contracting or reassociating them.
 *   MK(h, l)            the pair h + l
 *   TWO_SUM(a, b)       a + b exactly (Knuth)
 *   FAST_TWO_SUM(a, b)  a + b exactly for |a| >= |b| or a == 0 (Dekker)
 *   SPLIT(a)            a = hi + lo, each with half the bits; |a| < 2^115
 *                       (f32) or 2^996 (f64)
 *   TWO_PROD(a, b)      a * b exactly, same range, no underflow
 *   ADD, MUL(a, b)      pair sum and product (~2^-2p relative)
 *   DIV(a, b)           pair quotient; an inexact hardware division is
 *                       corrected by the exact residual
 * ---------------------------------------------------------------------- */
#define NX_PAIR_ARITH(T, PAIR, MK, TWO_SUM, FAST_TWO_SUM, SPLIT, TWO_PROD, ADD, MUL, DIV, SPLITTER) \
  NXFN PAIR MK(T h, T l) { PAIR r; r.hi = h; r.lo = l; return r; }                                   \
  NXFN PAIR TWO_SUM(T a, T b) {                                                                     \
    NX_PRECISE T s = a + b;                                                                         \
    NX_PRECISE T bb = s - a;                                                                        \
    NX_PRECISE T e = (a - (s - bb)) + (b - bb);                                                     \
    return MK(s, e);                                                                                \
  }                                                                                                 \
  NXFN PAIR FAST_TWO_SUM(T a, T b) {                                                                \
    NX_PRECISE T s = a + b;                                                                         \
    NX_PRECISE T e = b - (s - a);                                                                   \
    return MK(s, e);                                                                                \
  }                                                                                                 \
  NXFN PAIR SPLIT(T a) {                                                                            \
    NX_PRECISE T c = SPLITTER * a;                                                                  \
    NX_PRECISE T h = c - (c - a);                                                                   \
    NX_PRECISE T l = a - h;                                                                         \
    return MK(h, l);                                                                                \
  }                                                                                                 \
  NXFN PAIR TWO_PROD(T a, T b) {                                                                    \
    PAIR as = SPLIT(a);                                                                             \
    PAIR bs = SPLIT(b);                                                                             \
    NX_PRECISE T p = a * b;                                                                         \
    NX_PRECISE T e = (((as.hi * bs.hi - p) + as.hi * bs.lo) + as.lo * bs.hi) + as.lo * bs.lo;       \
    return MK(p, e);                                                                                \
  }                                                                                                 \
  NXFN PAIR ADD(PAIR a, PAIR b) {                                                                   \
    PAIR s = TWO_SUM(a.hi, b.hi);                                                                   \
    NX_PRECISE T e = s.lo + (a.lo + b.lo);                                                          \
    return FAST_TWO_SUM(s.hi, e);                                                                   \
  }                                                                                                 \
  NXFN PAIR MUL(PAIR a, PAIR b) {                                                                   \
    PAIR p = TWO_PROD(a.hi, b.hi);                                                                  \
    NX_PRECISE T e = p.lo + (a.hi * b.lo + a.lo * b.hi);                                            \
    return FAST_TWO_SUM(p.hi, e);                                                                   \
  }                                                                                                 \
  NXFN PAIR DIV(PAIR a, PAIR b) {                                                                   \
    T q = a.hi / b.hi;                                                                              \
    PAIR qb = TWO_PROD(q, b.hi);                                                                    \
    NX_PRECISE T r = (a.hi - qb.hi) - qb.lo;                                                        \
    NX_PRECISE T r2 = (r + a.lo) - q * b.lo;                                                        \
    NX_PRECISE T ql = r2 / b.hi;                                                                    \
    return FAST_TWO_SUM(q, ql);                                                                     \
  }


/* ------------------------------------------------------------------------
 * One source for f32 and f64, the functions: the templates below are the
 * algorithms both families share, written once over a vocabulary that each
 * family defines before it instantiates them (and undefines after):
 *   NXT                the float type; NXL(v) v converted to it (a bare
 *                      literal would be f64 in C, f32 in GLSL)
 *   NXK(NAME)          the family's constant NXCF_NAME / NXC_NAME
 *   NXT_PAIR, NXT_EXPC the pair and exp-core structs (nxff/nxdd, nxexpf/nxexpd)
 *   NXT_MK, NXT_TWO_SUM, NXT_FAST_TWO_SUM, NXT_TWO_PROD, NXT_PADD, NXT_PMUL,
 *   NXT_PDIV
 *                      NX_PAIR_ARITH's names for the type
 *   NXT_ISNAN NXT_ISINF NXT_ISZERO NXT_SIGNBIT NXT_ABS NXT_COPYSIGN NXT_POW2 NXT_INF NXT_NAN
 *   NXT_EXP_CORE NXT_EXP_FIN NXT_EXP_PAIR NXT_EXPM1_PAIR NXT_LOG_PAIR NXT_EXP NXT_LOG
 *   NXT_LDEXP_PAIR     (hi + lo) 2^k rounded once (nx_ldexp_fff, nx_ldexp_ddd)
 * A POLY argument is a function-like macro giving a Horner polynomial: the
 * degrees (and so the coefficients) are what genuinely differs between the
 * families, and they stay with each family's constants.  Thresholds are
 * arguments.  What stays written twice differs in method, not in type: the
 * f32 family reads classifications, signs and denormals from the bits (a
 * driver that flushes f32 denormals must not see them), the f64 side keeps
 * plain comparisons where that is exact; the sin/cos argument reductions
 * (integer Payne-Hanek on 32-bit words for f32, 24-bit chunks in double
 * arithmetic for f64), rem (integer mantissas vs double long division),
 * the bit-level helpers (one word vs two) and the erfc fits (intervals and
 * degrees per precision).
 * ---------------------------------------------------------------------- */

/* x * 2^n for |n| up to three steps of STEP: exact unless the result leaves
 * the normal range (then one rounding when x is normal and near 1).
 * Straight-line on purpose: NVIDIA's compiler (driver 580, H200) got the
 * branchy version with reassigned parameters wrong.  EMAX, EMIN: the normal
 * exponents; EDEN: the least denormal one. */
#define NX_T_LDEXP(NAME, EMAX, EMIN, EDEN, STEP)                                                   \
  NXFN NXT NAME(NXT x, int n) {                                                                     \
    int a = (n > EMAX) ? STEP : ((n < EMIN) ? -STEP : 0);                                           \
    int m = n - a;                                                                                  \
    int b = (m > EMAX) ? STEP : ((m < EMIN) ? -STEP : 0);                                           \
    int c = m - b;                                                                                  \
    c = (c > EMAX) ? EMAX : ((c < EDEN) ? EDEN : c);                                                \
    NXT r = x * NXT_POW2(a);                                                                        \
    r = r * NXT_POW2(b);                                                                            \
    return r * NXT_POW2(c);                                                                         \
  }

/* exp(xh + xl) = 2^k (1 + u): k = round(xh/ln2), r = xh + xl - k ln2 with
 * ln2 in Cody-Waite parts (k * hi exact, xh - k hi exact), u = expm1(r) =
 * r + r^2 POLY(r) (POLY: the Taylor tail from 1/2!). */
#define NX_T_EXP_CORE(NAME, POLY)                                                                  \
  NXFN NXT_EXPC NAME(NXT xh, NXT xl) {                                                              \
    NXT kd = floor(xh * NXK(INV_LN2) + NXL(0.5));                                                   \
    NX_PRECISE NXT r1 = xh - kd * NXK(LN2_CW_HI);                                                   \
    NX_PRECISE NXT c = xl - kd * NXK(LN2_CW_LO);                                                    \
    NXT_PAIR r = NXT_TWO_SUM(r1, c);                                                                \
    NXT x = r.hi;                                                                                   \
    NXT p = POLY(x);                                                                                \
    NX_PRECISE NXT t = x * x * p + (r.lo + x * r.lo);                                               \
    NXT_PAIR u = NXT_FAST_TWO_SUM(x, t);                                                            \
    NXT_EXPC e;                                                                                     \
    e.hi = u.hi;                                                                                    \
    e.lo = u.lo;                                                                                    \
    e.k = NX_I(kd);                                                                                 \
    return e;                                                                                       \
  }

/* exp(xh + xl) as a pair, for results in the normal range */
#define NX_T_EXP_PAIR(NAME)                                                                        \
  NXFN NXT_PAIR NAME(NXT xh, NXT xl) {                                                              \
    NXT_EXPC e = NXT_EXP_CORE(xh, xl);                                                              \
    NXT_PAIR v = NXT_TWO_SUM(NXL(1.0), e.hi);                                                       \
    NXT_PAIR r = NXT_FAST_TWO_SUM(v.hi, v.lo + e.lo);                                               \
    NXT s = NXT_POW2(e.k);                                                                          \
    return NXT_MK(r.hi * s, r.lo * s);                                                              \
  }

/* expm1(x) as a pair: k = 0: u itself; k > 0: 2^k (u + (1 - 2^-k));
 * k < 0: (2^k - 1) + 2^k u, the constant parts exact */
#define NX_T_EXPM1_PAIR(NAME)                                                                      \
  NXFN NXT_PAIR NAME(NXT x) {                                                                       \
    NXT_EXPC e = NXT_EXP_CORE(x, NXL(0.0));                                                         \
    if (e.k == 0) return NXT_MK(e.hi, e.lo);                                                        \
    NXT s = NXT_POW2(e.k);                                                                          \
    if (e.k > 0) {                                                                                  \
      NXT_PAIR w = NXT_TWO_SUM(NXL(1.0), -NXT_POW2(-e.k));                                          \
      NXT_PAIR v = NXT_TWO_SUM(w.hi, e.hi);                                                         \
      NX_PRECISE NXT vl = (v.lo + w.lo) + e.lo;                                                     \
      NXT_PAIR r = NXT_FAST_TWO_SUM(v.hi, vl);                                                      \
      return NXT_MK(r.hi * s, r.lo * s);                                                            \
    }                                                                                               \
    NXT_PAIR w = NXT_TWO_SUM(NXL(-1.0), s);                                                         \
    NXT_PAIR v = NXT_TWO_SUM(w.hi, s * e.hi);                                                       \
    NX_PRECISE NXT vl = (v.lo + w.lo) + s * e.lo;                                                   \
    return NXT_FAST_TWO_SUM(v.hi, vl);                                                              \
  }

/* log(2^e (m + ml)) as a pair, m in [sqrt(1/2), sqrt(2)), |ml| tiny:
 * log m = 2 atanh(s), s = (m-1)/(m+1), |s| <= 0.1716: 2s (1 + z/3 + z^2
 * POLY(z)), z = s^2, with s, z, z/3 and the products in pair arithmetic,
 * the tail in plain arithmetic; e ln2 as a pair. */
#define NX_T_LOG_M(NAME, POLY)                                                                     \
  NXFN NXT_PAIR NAME(NXT m, NXT ml, int e) {                                                        \
    NXT_PAIR f = NXT_TWO_SUM(m - NXL(1.0), ml);                                                     \
    NXT_PAIR d = NXT_TWO_SUM(NXL(2.0), f.hi);                                                       \
    d.lo += f.lo;                                                                                   \
    NXT_PAIR s = NXT_PDIV(f, d);                                                                    \
    NXT_PAIR z = NXT_TWO_PROD(s.hi, s.hi);                                                          \
    z.lo += NXL(2.0) * s.hi * s.lo;                                                                 \
    NXT zh = z.hi;                                                                                  \
    NXT tp = POLY(zh);                                                                              \
    tp = tp * zh * zh;                                                                              \
    NXT_PAIR q = NXT_TWO_PROD(zh, NXK(THIRD_HI));                                                   \
    q.lo += zh * NXK(THIRD_LO) + z.lo * NXK(THIRD_HI);                                              \
    NXT_PAIR q2 = NXT_TWO_SUM(q.hi, tp);                                                            \
    q2.lo += q.lo;                                                                                  \
    NXT_PAIR sq = NXT_TWO_PROD(s.hi, q2.hi);                                                        \
    sq.lo += s.hi * q2.lo + s.lo * q2.hi;                                                           \
    NXT_PAIR l = NXT_TWO_SUM(s.hi, sq.hi);                                                          \
    l.lo += s.lo + sq.lo;                                                                           \
    l.hi *= NXL(2.0);                                                                               \
    l.lo *= NXL(2.0);                                                                               \
    NXT ef = NXL(e);                                                                                \
    NXT_PAIR el = NXT_TWO_PROD(ef, NXK(LN2_HI));                                                    \
    el.lo += ef * NXK(LN2_LO);                                                                      \
    return NXT_PADD(el, l);                                                                         \
  }

/* sin(rh + rl), |rh| <= pi/4: rh + rh z POLY(z) + rl (1 - z/2), z = rh^2;
 * NAME_pair gives it unrounded (tan divides the pairs) */
#define NX_T_SIN_KERNEL(NAME, POLY)                                                                \
  NXFN NXT_PAIR NAME##_pair(NXT rh, NXT rl) {                                                       \
    NXT z = rh * rh;                                                                                \
    NXT p = POLY(z);                                                                                \
    NX_PRECISE NXT t = rh * z * p + rl * (NXL(1.0) - NXL(0.5) * z);                                 \
    return NXT_FAST_TWO_SUM(rh, t);                                                                 \
  }                                                                                                 \
  NXFN NXT NAME(NXT rh, NXT rl) { return NAME##_pair(rh, rl).hi; }
/* cos(rh + rl), |rh| <= pi/4: 1 - r^2/2 exact as a pair, + r^4 POLY(r^2) */
#define NX_T_COS_KERNEL(NAME, POLY)                                                                \
  NXFN NXT_PAIR NAME##_pair(NXT rh, NXT rl) {                                                                   \
    NXT_PAIR z = NXT_TWO_PROD(rh, rh);                                                              \
    NXT zh = z.hi;                                                                                  \
    NXT p = POLY(zh);                                                                               \
    NXT_PAIR w = NXT_TWO_SUM(NXL(1.0), NXL(-0.5) * zh);                                             \
    NX_PRECISE NXT t = w.lo + ((zh * zh * p - NXL(0.5) * z.lo) - rh * rl);                          \
    return NXT_FAST_TWO_SUM(w.hi, t);                                                               \
  }                                                                                                 \
  NXFN NXT NAME(NXT rh, NXT rl) { return NAME##_pair(rh, rl).hi; }

/* expm1(x): x > BIG: exp (inf above OVF); x < LOW: -1; |x| < TINY: x */
#define NX_T_EXPM1(NAME, BIG, OVF, LOW, TINY)                                                      \
  NXFN NXT NAME(NXT x) {                                                                            \
    if (NXT_ISNAN(x)) return x;                                                                     \
    if (x > BIG) {                                                                                  \
      if (x > OVF) return NXT_INF;                                                                  \
      return NXT_EXP_FIN(NXT_EXP_CORE(x, NXL(0.0)));                                                \
    }                                                                                               \
    if (x < LOW) return NXL(-1.0);                                                                  \
    if (NXT_ABS(x) < TINY) return x;                                                                \
    return NXT_EXPM1_PAIR(x).hi;                                                                    \
  }

/* log1p(x): log of the exact pair 1 + x; |x| < TINY: x */
#define NX_T_LOG1P(NAME, TINY)                                                                     \
  NXFN NXT NAME(NXT x) {                                                                            \
    if (NXT_ISNAN(x)) return x;                                                                     \
    if (x < NXL(-1.0)) return NXT_NAN;                                                              \
    if (x == NXL(-1.0)) return -NXT_INF;                                                            \
    if (NXT_ISINF(x)) return x;                                                                     \
    if (NXT_ABS(x) < TINY) return x;                                                                \
    NXT_PAIR u = NXT_TWO_SUM(NXL(1.0), x);                                                          \
    return NXT_LOG_PAIR(u.hi, u.lo).hi;                                                             \
  }

/* tanh(x) = expm1(2|x|) / (expm1(2|x|) + 2) in pair arithmetic, sign
 * restored; |x| < TINY: x; |x| > BIG: +-1 */
#define NX_T_TANH(NAME, TINY, BIG)                                                                 \
  NXFN NXT NAME(NXT x) {                                                                            \
    if (NXT_ISNAN(x)) return x;                                                                     \
    NXT ax = NXT_ABS(x);                                                                            \
    if (ax < TINY) return x;                                                                        \
    if (ax > BIG) return NXT_COPYSIGN(NXL(1.0), x);                                                 \
    NXT_PAIR e = NXT_EXPM1_PAIR(NXL(2.0) * ax);                                                     \
    NXT_PAIR d = NXT_TWO_SUM(NXL(2.0), e.hi);                                                       \
    d.lo += e.lo;                                                                                   \
    return NXT_COPYSIGN(NXT_PDIV(e, d).hi, x);                                                      \
  }

/* sigmoid(x): x >= 0: 1 / (1 + e^-x) (1 above ONE); x < 0: e^x / (1 + e^x)
 * in pair arithmetic, TAIL(x) = e^x below LOW (e^x (1 - e^x) rounds to e^x) */
#define NX_T_SIGMOID(NAME, ONE, LOW, TAIL)                                                         \
  NXFN NXT NAME(NXT x) {                                                                            \
    if (NXT_ISNAN(x)) return x;                                                                     \
    if (x >= NXL(0.0)) {                                                                            \
      if (x > ONE) return NXL(1.0);                                                                 \
      NXT_PAIR t = NXT_EXP_PAIR(-x, NXL(0.0));                                                      \
      NXT_PAIR d = NXT_TWO_SUM(NXL(1.0), t.hi);                                                     \
      d.lo += t.lo;                                                                                 \
      return NXT_PDIV(NXT_MK(NXL(1.0), NXL(0.0)), d).hi;                                            \
    }                                                                                               \
    if (x < LOW) return TAIL(x);                                                                    \
    NXT_PAIR t = NXT_EXP_PAIR(x, NXL(0.0));                                                         \
    NXT_PAIR d = NXT_TWO_SUM(NXL(1.0), t.hi);                                                       \
    d.lo += t.lo;                                                                                   \
    return NXT_PDIV(t, d).hi;                                                                       \
  }

/* erf(x) for |x| < 1: x (c0 + c1 z + z^2 POLY(z)), z = x^2, the first two
 * terms and the final product in pair arithmetic; NAME_pair unrounded */
#define NX_T_ERF_SMALL(NAME, POLY)                                                                 \
  NXFN NXT_PAIR NAME##_pair(NXT x, NXT ax) {                                                                    \
    NXT_PAIR z = NXT_TWO_PROD(ax, ax);                                                              \
    NXT zh = z.hi;                                                                                  \
    NXT rp = POLY(zh);                                                                              \
    NXT_PAIR c1z = NXT_TWO_PROD(NXK(ERF_C1_HI), zh);                                                \
    c1z.lo += NXK(ERF_C1_HI) * z.lo + NXK(ERF_C1_LO) * zh;                                          \
    NXT_PAIR s = NXT_TWO_SUM(NXK(ERF_C0_HI), c1z.hi);                                               \
    s.lo += NXK(ERF_C0_LO) + c1z.lo;                                                                \
    NXT_PAIR s2 = NXT_TWO_SUM(s.hi, zh * zh * rp);                                                  \
    s2.lo += s.lo;                                                                                  \
    NXT_PAIR p = NXT_TWO_PROD(x, s2.hi);                                                            \
    return NXT_FAST_TWO_SUM(p.hi, p.lo + x * s2.lo);                                                \
  }                                                                                                 \
  NXFN NXT NAME(NXT x, NXT ax) { return NAME##_pair(x, ax).hi; }
/* erf(x) = 1 - exp(-x^2) g for |x| >= 1, g = erfcx(|x|), exp(-x^2) from
 * the exact x^2 */
#define NX_T_ERF_FROM_ERFCX(NAME)                                                                  \
  NXFN NXT NAME(NXT x, NXT ax, NXT g) {                                                             \
    NXT_PAIR z = NXT_TWO_PROD(ax, ax);                                                              \
    NXT erfc = NXT_EXP_FIN(NXT_EXP_CORE(-z.hi, -z.lo)) * g;                                         \
    return NXT_COPYSIGN(NXL(1.0) - erfc, x);                                                        \
  }

/* |x|^y for finite ax = |x| > 0, y finite, not a special case: exp(y log ax)
 * with log ax as a pair and y times its head exact; inf when y log ax > OVF,
 * 0 below UNF */
#define NX_T_POW_ABS(NAME, OVF, UNF)                                                               \
  NXFN NXT NAME(NXT ax, NXT y) {                                                                    \
    NXT_PAIR l = NXT_LOG_PAIR(ax, NXL(0.0));                                                        \
    NXT th = y * l.hi;                                                                              \
    if (th > OVF) return NXT_INF;                                                                   \
    if (th < UNF) return NXL(0.0);                                                                  \
    NXT_PAIR t = NXT_TWO_PROD(y, l.hi);                                                             \
    return NXT_EXP_FIN(NXT_EXP_CORE(t.hi, t.lo + y * l.lo));                                        \
  }

/* atan2's core: t = th + tl = min/max(|x|,|y|) (sw: |y| > |x|, xneg: x < 0).
 * atan t = atan(j/4) + atan((t - j/4)/(1 + t j/4)), j = round(4t), the
 * reduced |u| <= 1/8 by u + u^3 POLY(u^2), then pi/2 - and pi - as pairs;
 * the sign of y. */
#define NX_T_ATAN2_CORE(NAME, POLY)                                                                \
  NXFN NXT NAME(NXT th, NXT tl, bool sw, bool xneg, NXT y) {                                        \
    NXT jf = floor(th * NXL(4.0) + NXL(0.5));                                                       \
    NXT_PAIR a = NXT_MK(NXL(0.0), NXL(0.0));                                                        \
    NXT_PAIR u = NXT_MK(th, tl);                                                                    \
    if (jf > NXL(0.0)) {                                                                            \
      NXT c = jf * NXL(0.25);                                                                       \
      NXT_PAIR n = NXT_TWO_SUM(th, -c);                                                             \
      n.lo += tl;                                                                                   \
      NXT_PAIR pr = NXT_TWO_PROD(th, c);                                                            \
      NXT_PAIR d = NXT_TWO_SUM(NXL(1.0), pr.hi);                                                    \
      d.lo += pr.lo + tl * c;                                                                       \
      u = NXT_PDIV(n, d);                                                                           \
      if (jf == NXL(1.0)) a = NXT_MK(NXK(ATAN_Q1_HI), NXK(ATAN_Q1_LO));                             \
      else if (jf == NXL(2.0)) a = NXT_MK(NXK(ATAN_Q2_HI), NXK(ATAN_Q2_LO));                        \
      else if (jf == NXL(3.0)) a = NXT_MK(NXK(ATAN_Q3_HI), NXK(ATAN_Q3_LO));                        \
      else a = NXT_MK(NXK(PIO4_HI), NXK(PIO4_LO));                                                  \
    }                                                                                               \
    NXT z = u.hi * u.hi;                                                                            \
    NXT pz = POLY(z);                                                                               \
    NX_PRECISE NXT corr = u.hi * z * pz + u.lo * (NXL(1.0) - z);                                    \
    NXT_PAIR r = NXT_PADD(a, NXT_FAST_TWO_SUM(u.hi, corr));                                         \
    if (sw) r = NXT_PADD(NXT_MK(NXK(PIO2_HI), NXK(PIO2_LO)), NXT_MK(-r.hi, -r.lo));                 \
    if (xneg) r = NXT_PADD(NXT_MK(NXK(PI_HI), NXK(PI_LO)), NXT_MK(-r.hi, -r.lo));                   \
    return NXT_COPYSIGN(r.hi, y);                                                                   \
  }

/* 1/sqrt(x) near 1: y0 = 1/sqrt(x) from the driver, one Newton step on the
 * exact residual 1 - x y0^2 (so an inexact sqrt or division is corrected) */
#define NX_T_RSQRT_NEWTON(NAME)                                                                    \
  NXFN NXT NAME(NXT x) {                                                                            \
    NXT y0 = NXL(1.0) / sqrt(x);                                                                    \
    NXT_PAIR q = NXT_TWO_PROD(y0, y0);                                                              \
    NXT_PAIR xp = NXT_TWO_PROD(x, q.hi);                                                            \
    NX_PRECISE NXT e = ((NXL(1.0) - xp.hi) - xp.lo) - x * q.lo;                                     \
    return y0 + (NXL(0.5) * y0) * e;                                                                \
  }

/* round half away from zero, exact; |x| >= BIG is already integral.  floor,
 * not trunc: lavapipe's f64 trunc is wrong */
#define NX_T_ROUND(NAME, BIG)                                                                      \
  NXFN NXT NAME(NXT x) {                                                                            \
    NXT a = NXT_ABS(x);                                                                             \
    if (NXT_ISNAN(x) || a >= BIG) return x;                                                         \
    NXT t = floor(a);                                                                               \
    if (a - t >= NXL(0.5)) t += NXL(1.0);                                                           \
    return NXT_COPYSIGN(t, x);                                                                      \
  }

/* Giles' erf_inv estimate (f32 coefficients; the f64 family converts them) */
#define NX_GILES_POLY1(w) ((((((((NXL(NXF(0x32F16588u)) * (w) + NXL(NXF(0x34B84B36u))) * (w) + NXL(NXF(0xB66C7357u))) * (w) + NXL(NXF(0xB6935AC1u))) * (w) + NXL(NXF(0x396532DBu))) * (w) + NXL(NXF(0xBAA45408u))) * (w) + NXL(NXF(0xBB88E4EFu))) * (w) + NXL(NXF(0x3E7C8F63u))) * (w) + NXL(NXF(0x3FC02E2Fu)))
#define NX_GILES_POLY2(w) ((((((((NXL(NXF(0xB951F09Bu)) * (w) + NXL(NXF(0x38D3B56Bu))) * (w) + NXL(NXF(0x3AB0DC72u))) * (w) + NXL(NXF(0xBB70BDE7u))) * (w) + NXL(NXF(0x3BBC127Bu))) * (w) + NXL(NXF(0xBBF9C5D7u))) * (w) + NXL(NXF(0x3C1AA57Eu))) * (w) + NXL(NXF(0x3F8036DBu))) * (w) + NXL(NXF(0x40354F7Eu)))
/* erfcx(ax) = e^(ax^2) erfc(ax) as a pair, asymptotic form: (c0 + t ASYM(t))
 * / ax, t = 1/ax^2, the last step and the division as pairs */
#define NX_T_ERFCX_ASYM(NAME, ASYM, C0_HI, C0_LO)                                                  \
  NXFN NXT_PAIR NAME(NXT ax) {                                                                      \
    NXT t = NXL(1.0) / (ax * ax);                                                                   \
    NXT_PAIR tq = NXT_TWO_PROD(t, ASYM(t));                                                         \
    NXT_PAIR s = NXT_TWO_SUM(C0_HI, tq.hi);                                                         \
    s.lo += C0_LO + tq.lo;                                                                          \
    return NXT_PDIV(s, NXT_MK(ax, NXL(0.0)));                                                       \
  }

/* erfc(ax) for ax in [0, the point where it underflows) as 2^k (hi + lo)
 * (the exp core's struct, read here as 2^k times the pair): ax < 1:
 * 1 - erf(ax) from the series' pair; else exp(-ax^2) (exp core, from the
 * exact ax^2) times ERFCX(ax), a pair */
#define NX_T_ERFC_CORE(NAME, ERF_SMALL, ERFCX)                                                     \
  NXFN NXT_EXPC NAME(NXT ax) {                                                                      \
    NXT_EXPC res;                                                                                   \
    if (ax < NXL(1.0)) {                                                                            \
      NXT_PAIR e = ERF_SMALL##_pair(ax, ax);                                                        \
      NXT_PAIR r = NXT_TWO_SUM(NXL(1.0), -e.hi);                                                    \
      r = NXT_FAST_TWO_SUM(r.hi, r.lo - e.lo);                                                      \
      res.hi = r.hi;                                                                                \
      res.lo = r.lo;                                                                                \
      res.k = 0;                                                                                    \
      return res;                                                                                   \
    }                                                                                               \
    NXT_PAIR z = NXT_TWO_PROD(ax, ax);                                                              \
    NXT_EXPC e = NXT_EXP_CORE(-z.hi, -z.lo);                                                        \
    NXT_PAIR v = NXT_TWO_SUM(NXL(1.0), e.hi);                                                       \
    v = NXT_FAST_TWO_SUM(v.hi, v.lo + e.lo);                                                        \
    NXT_PAIR p = NXT_PMUL(v, ERFCX(ax));                                                            \
    res.hi = p.hi;                                                                                  \
    res.lo = p.lo;                                                                                  \
    res.k = e.k;                                                                                    \
    return res;                                                                                     \
  }

/* erfc(x): x >= ZERO_ABOVE: 0; x <= -TWO_BELOW: 2; x >= 0: CORE rounded
 * once (denormal results too); x < 0: 2 - erfc(|x|) */
#define NX_T_ERFC(NAME, CORE, ZERO_ABOVE, TWO_BELOW)                                               \
  NXFN NXT NAME(NXT x) {                                                                            \
    if (NXT_ISNAN(x)) return x;                                                                     \
    NXT ax = NXT_ABS(x);                                                                            \
    bool neg = NXT_SIGNBIT(x);                                                                      \
    if (!neg && ax >= ZERO_ABOVE) return NXL(0.0);                                                  \
    if (neg && ax >= TWO_BELOW) return NXL(2.0);                                                    \
    NXT_EXPC c = CORE(ax);                                                                          \
    if (!neg) return NXT_LDEXP_PAIR(c.hi, c.lo, c.k);                                               \
    NXT s = NXT_POW2(c.k);                                                                          \
    NXT_PAIR r = NXT_TWO_SUM(NXL(2.0), -c.hi * s);                                                  \
    return r.hi + (r.lo - c.lo * s);                                                                \
  }

/* erf_inv(y) for 0 < ay = |y| < 1, from x, an estimate of it: Newton steps.
 * ay < 1/2: on erf(x) - ay, erf(x) as a pair; else on log erfc(x) -
 * log(1 - ay) (1 - ay exact; nearly linear in x far into the tail), logs
 * as pairs.  NAME_step is one step (a loop must not declare `precise`). */
#define NX_T_ERFINV_CORE(NAME, ERF_SMALL, ERFC_CORE, STEPS)                                        \
  NXFN NXT NAME##_step(NXT ay, NXT x) {                                                             \
    if (ay < NXL(0.5)) {                                                                            \
      NXT_PAIR e = ERF_SMALL##_pair(x, x);                                                          \
      NXT_PAIR r = NXT_TWO_SUM(e.hi, -ay);                                                          \
      NXT d = NXK(ERF_C0_HI) * NXT_EXP(-x * x);                                                     \
      return x - (r.hi + (r.lo + e.lo)) / d;                                                        \
    }                                                                                               \
    NXT_EXPC c = ERFC_CORE(x);                                                                      \
    NXT kf = NXL(c.k);                                                                              \
    NXT_PAIR el = NXT_TWO_PROD(kf, NXK(LN2_HI));                                                    \
    el.lo += kf * NXK(LN2_LO);                                                                      \
    NXT_PAIR l = NXT_PADD(NXT_LOG_PAIR(c.hi, c.lo), el);                                            \
    NXT_PAIR lt = NXT_LOG_PAIR(NXL(1.0) - ay, NXL(0.0));                                            \
    NXT_PAIR dl = NXT_PADD(l, NXT_MK(-lt.hi, -lt.lo));                                              \
    NXT gp = NXK(ERF_C0_HI) * NXT_EXP(-x * x) / (c.hi * NXT_POW2(c.k));                             \
    return x + dl.hi / gp;                                                                          \
  }                                                                                                 \
  NXFN NXT NAME(NXT ay, NXT x) {                                                                    \
    for (int i = 0; i < STEPS; i++) x = NAME##_step(ay, x);                                         \
    return x;                                                                                       \
  }

/* erf_inv(y): |y| > 1: NaN; +-1: +-inf; |y| < TINY: TINYF(y) (sqrt(pi)/2 y);
 * else CORE from Giles' estimate ("Approximating the erfinv function", GPU
 * Computing Gems, 2011: single-precision coefficients, ~6e-8 relative
 * inside f32's range, coarser beyond: the f64 family takes more steps) */
#define NX_T_ERFINV(NAME, CORE, TINY, TINYF)                                                       \
  NXFN NXT NAME(NXT y) {                                                                            \
    if (NXT_ISNAN(y)) return y;                                                                     \
    NXT ay = NXT_ABS(y);                                                                            \
    if (ay > NXL(1.0)) return NXT_NAN;                                                              \
    if (ay == NXL(1.0)) return NXT_COPYSIGN(NXT_INF, y);                                            \
    if (NXT_ISZERO(y)) return y;                                                                    \
    if (ay < TINY) return TINYF(y);                                                                 \
    NXT w = -NXT_LOG((NXL(1.0) - ay) * (NXL(1.0) + ay));                                            \
    NXT p;                                                                                          \
    if (w < NXL(5.0)) {                                                                             \
      w = w - NXL(2.5);                                                                             \
      p = NX_GILES_POLY1(w);                                                                        \
    } else {                                                                                        \
      w = sqrt(w) - NXL(3.0);                                                                       \
      p = NX_GILES_POLY2(w);                                                                        \
    }                                                                                               \
    return NXT_COPYSIGN(CORE(ay, p * ay), y);                                                       \
  }

/* ---- the inverse and hyperbolic functions, tan and cbrt ---- */

/* sqrt of a pair a >= 0 as a pair: the driver's sqrt(a.hi) corrected by the
 * exact residual a - s^2 */
#define NX_T_PAIR_SQRT(NAME)                                                                       \
  NXFN NXT_PAIR NAME(NXT_PAIR a) {                                                                  \
    if (a.hi == NXL(0.0)) return NXT_MK(NXL(0.0), NXL(0.0));                                        \
    NXT s = sqrt(a.hi);                                                                             \
    NXT_PAIR p = NXT_TWO_PROD(s, s);                                                                \
    NX_PRECISE NXT r = ((a.hi - p.hi) - p.lo) + a.lo;                                               \
    return NXT_FAST_TWO_SUM(s, r / (NXL(2.0) * s));                                                 \
  }

/* tan(rh + rl + q pi/2), |rh| <= pi/4: sin/cos of r as pairs, divided as
 * pairs (q odd: -cos/sin) and rounded once */
#define NX_T_TAN_CORE(NAME, SINK, COSK)                                                            \
  NXFN NXT NAME(NXT rh, NXT rl, int q) {                                                            \
    NXT_PAIR s = SINK##_pair(rh, rl);                                                               \
    NXT_PAIR c = COSK##_pair(rh, rl);                                                               \
    if ((q & 1) == 0) return NXT_PDIV(s, c).hi;                                                     \
    return -NXT_PDIV(c, s).hi;                                                                      \
  }

/* asin(x) (acos_ false) and acos(x) (true) for |x| = ax <= 1 through
 * atan2's core: c = sqrt((1 - ax)(1 + ax)) as a pair, asin x = atan2(ax, c)
 * with the sign of x, acos x = atan2(c, x); the quotient min/max as a pair */
#define NX_T_ASINCOS(NAME, PSQRT, CORE)                                                            \
  NXFN NXT NAME(NXT x, NXT ax, bool acos_) {                                                        \
    NXT_PAIR c = PSQRT(NXT_PMUL(NXT_TWO_SUM(NXL(1.0), -ax), NXT_TWO_SUM(NXL(1.0), ax)));            \
    NXT_PAIR num = acos_ ? c : NXT_MK(ax, NXL(0.0));                                                \
    NXT_PAIR den = acos_ ? NXT_MK(ax, NXL(0.0)) : c;                                                \
    bool sw = num.hi > den.hi;                                                                      \
    NXT_PAIR q = sw ? NXT_PDIV(den, num) : NXT_PDIV(num, den);                                      \
    NX_PRECISE NXT th = q.hi;                                                                       \
    NX_PRECISE NXT tl = q.lo;                                                                       \
    return CORE(th, tl, sw, acos_ && NXT_SIGNBIT(x), acos_ ? NXL(1.0) : x);                         \
  }

/* e^ax / 2 for ax > 0 (sinh and cosh of large arguments): the exp core with
 * k - 1, so that results up to the overflow threshold stay finite; inf above
 * OVF */
#define NX_T_HALF_EXP(NAME, OVF)                                                                   \
  NXFN NXT NAME(NXT ax) {                                                                           \
    if (ax > OVF) return NXT_INF;                                                                   \
    NXT_EXPC e = NXT_EXP_CORE(ax, NXL(0.0));                                                        \
    e.k -= 1;                                                                                       \
    return NXT_EXP_FIN(e);                                                                          \
  }

/* sinh(x) = (E + E / (E + 1)) / 2, E = expm1(|x|) as a pair; |x| < TINY: x;
 * |x| > MID: e^|x| / 2 (HALF_EXP) */
#define NX_T_SINH(NAME, TINY, MID, HALF_EXP)                                                       \
  NXFN NXT NAME(NXT x) {                                                                            \
    if (NXT_ISNAN(x)) return x;                                                                     \
    NXT ax = NXT_ABS(x);                                                                            \
    if (ax < TINY) return x;                                                                        \
    if (ax > MID) return NXT_COPYSIGN(HALF_EXP(ax), x);                                             \
    NXT_PAIR e = NXT_EXPM1_PAIR(ax);                                                                \
    NXT_PAIR d = NXT_TWO_SUM(NXL(1.0), e.hi);                                                       \
    d.lo += e.lo;                                                                                   \
    NXT_PAIR s = NXT_PADD(e, NXT_PDIV(e, d));                                                       \
    return NXT_COPYSIGN(NXL(0.5) * s.hi, x);                                                        \
  }

/* cosh(x) = (E + 1/E) / 2, E = e^|x| as a pair; |x| < TINY: 1; |x| > MID:
 * e^|x| / 2 */
#define NX_T_COSH(NAME, TINY, MID, HALF_EXP)                                                       \
  NXFN NXT NAME(NXT x) {                                                                            \
    if (NXT_ISNAN(x)) return x;                                                                     \
    NXT ax = NXT_ABS(x);                                                                            \
    if (ax < TINY) return NXL(1.0);                                                                 \
    if (ax > MID) return HALF_EXP(ax);                                                              \
    NXT_PAIR e = NXT_EXP_PAIR(ax, NXL(0.0));                                                        \
    NXT_PAIR s = NXT_PADD(e, NXT_PDIV(NXT_MK(NXL(1.0), NXL(0.0)), e));                              \
    return NXL(0.5) * s.hi;                                                                         \
  }

/* log(2 ax) as a pair, for ax past the point where asinh and acosh equal it */
#define NX_T_LOG2X(NAME)                                                                           \
  NXFN NXT_PAIR NAME(NXT ax) {                                                                      \
    return NXT_PADD(NXT_LOG_PAIR(ax, NXL(0.0)), NXT_MK(NXK(LN2_HI), NXK(LN2_LO)));                  \
  }

/* asinh(x) = log(|x| + sqrt(x^2 + 1)), the argument of log as a pair (the
 * log of a pair near 1 keeps its relative accuracy); |x| < TINY: x;
 * |x| > BIG: log(2|x|) */
#define NX_T_ASINH(NAME, TINY, BIG, PSQRT, LOG2X)                                                  \
  NXFN NXT NAME(NXT x) {                                                                            \
    if (NXT_ISNAN(x) || NXT_ISINF(x)) return x;                                                     \
    NXT ax = NXT_ABS(x);                                                                            \
    if (ax < TINY) return x;                                                                        \
    NXT_PAIR l;                                                                                     \
    if (ax > BIG) {                                                                                 \
      l = LOG2X(ax);                                                                                \
    } else {                                                                                        \
      NXT_PAIR q = NXT_PADD(NXT_TWO_PROD(ax, ax), NXT_MK(NXL(1.0), NXL(0.0)));                      \
      NXT_PAIR w = NXT_PADD(PSQRT(q), NXT_MK(ax, NXL(0.0)));                                        \
      l = NXT_LOG_PAIR(w.hi, w.lo);                                                                 \
    }                                                                                               \
    return NXT_COPYSIGN(l.hi, x);                                                                   \
  }

/* acosh(x) = log(x + sqrt((x - 1)(x + 1))), pairs as asinh; x < 1: NaN;
 * x > BIG: log(2x) */
#define NX_T_ACOSH(NAME, BIG, PSQRT, LOG2X)                                                        \
  NXFN NXT NAME(NXT x) {                                                                            \
    if (NXT_ISNAN(x)) return x;                                                                     \
    if (x < NXL(1.0)) return NXT_NAN;                                                               \
    if (NXT_ISINF(x)) return x;                                                                     \
    if (x == NXL(1.0)) return NXL(0.0);                                                             \
    NXT_PAIR l;                                                                                     \
    if (x > BIG) {                                                                                  \
      l = LOG2X(x);                                                                                 \
    } else {                                                                                        \
      NXT_PAIR q = NXT_PMUL(NXT_TWO_SUM(x, NXL(-1.0)), NXT_TWO_SUM(x, NXL(1.0)));                   \
      NXT_PAIR w = NXT_PADD(PSQRT(q), NXT_MK(x, NXL(0.0)));                                         \
      l = NXT_LOG_PAIR(w.hi, w.lo);                                                                 \
    }                                                                                               \
    return l.hi;                                                                                    \
  }

/* atanh(x) = log((1 + |x|) / (1 - |x|)) / 2, the quotient as a pair (1 - |x|
 * exact near 1); |x| > 1: NaN; +-1: +-inf; |x| < TINY: x */
#define NX_T_ATANH(NAME, TINY)                                                                     \
  NXFN NXT NAME(NXT x) {                                                                            \
    if (NXT_ISNAN(x)) return x;                                                                     \
    NXT ax = NXT_ABS(x);                                                                            \
    if (ax > NXL(1.0)) return NXT_NAN;                                                              \
    if (ax == NXL(1.0)) return NXT_COPYSIGN(NXT_INF, x);                                            \
    if (ax < TINY) return x;                                                                        \
    NXT_PAIR q = NXT_PDIV(NXT_TWO_SUM(NXL(1.0), ax), NXT_TWO_SUM(NXL(1.0), -ax));                   \
    return NXT_COPYSIGN(NXL(0.5) * NXT_LOG_PAIR(q.hi, q.lo).hi, x);                                 \
  }

/* cbrt(m) for m = M 2^r, M in [1, 2), r in {0, 1, 2}: a quadratic estimate
 * (2^-9.7 relative), STEPS Newton steps in plain arithmetic, then one on
 * the exact residual m - y^3 (y^3 as a pair), rounded once */
#define NX_T_CBRT_CORE(NAME, STEPS)                                                                \
  NXFN NXT NAME(NXT M, int r) {                                                                     \
    NXT m = M * ((r == 0) ? NXL(1.0) : ((r == 1) ? NXL(2.0) : NXL(4.0)));                           \
    NXT y = (NXL(0.625) + M * (NXL(0.435546875) - NXL(0.059326171875) * M)) *                      \
            ((r == 0) ? NXL(1.0) : ((r == 1) ? NXL(1.260009765625) : NXL(1.58740234375)));          \
    for (int i = 0; i < STEPS; i++) y = (NXL(2.0) * y + m / (y * y)) * NXK(THIRD_HI);               \
    NXT_PAIR y2 = NXT_TWO_PROD(y, y);                                                               \
    NXT_PAIR y3 = NXT_PMUL(y2, NXT_MK(y, NXL(0.0)));                                                \
    NX_PRECISE NXT d = (m - y3.hi) - y3.lo;                                                         \
    return y + d / (NXL(3.0) * y2.hi);                                                              \
  }

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

/* the vocabulary of the templates (see "One source for f32 and f64") */
#define NXT float
#define NXL(v) NX_F(v)
#define NXK(NAME) NXCF_##NAME
#define NXT_PAIR nxff
#define NXT_EXPC nxexpf
#define NXT_MK nx_ff
#define NXT_TWO_SUM nx_two_sumf
#define NXT_FAST_TWO_SUM nx_fast_two_sumf
#define NXT_TWO_PROD nx_two_prodf
#define NXT_PADD nx_ff_addf
#define NXT_PDIV nx_ff_divf
#define NXT_PMUL nx_ff_mulf
#define NXT_SIGNBIT nx_signbitf
#define NXT_ISZERO nx_iszerof
#define NXT_LDEXP_PAIR nx_ldexp_fff
#define NXT_EXP nxf_exp
#define NXT_LOG nxf_log
#define NXT_ISNAN nx_isnanf
#define NXT_ISINF nx_isinff
#define NXT_ABS nx_absf
#define NXT_COPYSIGN nx_copysignf
#define NXT_POW2 nx_pow2f
#define NXT_INF NX_INF_F
#define NXT_NAN NX_NAN_F
#define NXT_EXP_CORE nx_expf_core
#define NXT_EXP_FIN nx_expf_fin
#define NXT_EXP_PAIR nx_expf_ff
#define NXT_EXPM1_PAIR nx_expm1f_ff
#define NXT_LOG_PAIR nx_logf_ff

/* the f32 polynomials (Horner; degrees chosen for 24 bits) */
#define NXF_EXPM1_POLY(x) ((((((NXCF_FI8 * (x) + NXCF_FI7) * (x) + NXCF_FI6) * (x) + NXCF_FI5) * (x) + NXCF_FI4) * (x) + NXCF_FI3) * (x) + NXCF_FI2) /* expm1 r = r + r^2 P, to r^8 */
#define NXF_LOG_POLY(z) ((((NXCF_INV13 * (z) + NXCF_INV11) * (z) + NXCF_INV9) * (z) + NXCF_INV7) * (z) + NXCF_INV5) /* atanh tail, to s^13 */
#define NXF_ERF_POLY(z) (((((((((NXCF_ERF_T11 * (z) + NXCF_ERF_T10) * (z) + NXCF_ERF_T9) * (z) + NXCF_ERF_T8) * (z) + NXCF_ERF_T7) * (z) + NXCF_ERF_T6) * (z) + NXCF_ERF_T5) * (z) + NXCF_ERF_T4) * (z) + NXCF_ERF_T3) * (z) + NXCF_ERF_T2) /* erf, to x^23 */
#define NXF_ATAN_POLY(z) ((((-NXCF_INV11 * (z) + NXCF_INV9) * (z) - NXCF_INV7) * (z) + NXCF_INV5) * (z) - NXCF_THIRD_HI) /* atan, to u^11 */

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
/* x * 2^n for n in [-300, 300] */
NX_T_LDEXP(nx_ldexpf, 127, -126, -149, 100)
/* exponent of a finite nonzero x (subnormals included) */
NXFN int nx_ilogbf(float x) {
  int e = NX_I((floatBitsToUint(x) >> 23) & 0xffu);
  if (e == 0) return NX_I((floatBitsToUint(x * 16777216.0f) >> 23) & 0xffu) - 127 - 24;
  return e - 127;
}

/* --- f32 on the bits: correct on a device that flushes denormals ---
 * A driver with shaderDenormPreserveFloat32 = false (NVIDIA) reads every
 * denormal operand of a float instruction as zero and writes every denormal
 * result as zero, abs and negate included.  So: classification, sign, abs,
 * negate, comparisons, max/min and select work on the bits; a denormal
 * operand is brought into the normal range with integer operations
 * (nx_unpackf, nx_up64f); a result that may be denormal is built from its
 * bits (nx_packf, nx_ldexp_fff, nx_down64f).  The normal case stays one
 * instruction plus a test of exponent bits (nxf_add, nxf_mul). */
struct nxunpf { uint m; int e; }; /* |x| = m 2^(e-23), m in [2^23, 2^24) */

NXFN bool nx_iszerof(float x) { return (floatBitsToUint(x) & 0x7fffffffu) == 0u; }
NXFN float nx_negf(float x) { return uintBitsToFloat(floatBitsToUint(x) ^ 0x80000000u); }
/* |bits| of a finite nonzero float -> integer mantissa and exponent */
NXFN nxunpf nx_unpackf(uint a) {
  nxunpf r;
  if (a >= 0x00800000u) {
    r.m = (a & 0x007fffffu) | 0x00800000u;
    r.e = NX_I(a >> 23) - 127;
  } else {
    int h = findMSB(a);
    r.m = a << NX_U(23 - h);
    r.e = h - 149;
  }
  return r;
}
/* the mantissa of a finite nonzero x as a float in [1, 2), denormals too */
NXFN float nx_mantf(float x) {
  nxunpf u = nx_unpackf(floatBitsToUint(x) & 0x7fffffffu);
  return uintBitsToFloat((u.m & 0x007fffffu) | 0x3f800000u);
}
/* x 2^64 exactly, for |x| < 2^60 (denormals included) */
NXFN float nx_up64f(float x) {
  uint b = floatBitsToUint(x);
  uint a = b & 0x7fffffffu;
  if (a >= 0x00800000u) return uintBitsToFloat(b + 0x20000000u);
  return uintBitsToFloat((b & 0x80000000u) | floatBitsToUint(NX_F(a) * NXF(0x15000000u))); /* a 2^-85 */
}
/* y 2^-64 for y = an exact result of nx_up64f operands (a multiple of 2^-85):
 * exact, the denormals built from the bits */
NXFN float nx_down64f(float y) {
  uint b = floatBitsToUint(y);
  uint a = b & 0x7fffffffu;
  if (a >= 0x20800000u) return uintBitsToFloat(b - 0x20000000u);
  return uintBitsToFloat((b & 0x80000000u) | NX_U(uintBitsToFloat(a) * NXF(0x6A000000u))); /* |y| 2^85 */
}
/* sign s | round(m 2^(e-31) + sticky): m has its top bit set, sticky says
 * the exact value is a little above m 2^(e-31).  Rounds to nearest even at
 * the normal or the denormal position, overflows to inf. */
NXFN float nx_packf(uint s, int e, uint m, bool st) {
  if (e > 127) return uintBitsToFloat(s | 0x7f800000u);
  int d = (e >= -126) ? 8 : 8 - 126 - e; /* low bits dropped */
  if (d > 32) return uintBitsToFloat(s);
  uint q = (d == 32) ? 0u : (m >> NX_U(d));
  uint rest = (d == 32) ? m : (m << NX_U(32 - d));
  if (rest > 0x80000000u || (rest == 0x80000000u && (st || (q & 1u) != 0u))) q += 1u;
  uint b = (e >= -126) ? (NX_U(e + 126) << 23) + q : q;
  return uintBitsToFloat(s | b);
}
/* (hi + lo) 2^k rounded once, for hi = RN(hi + lo) normal (or 0, inf, NaN):
 * a normal result by adding to the exponent bits, a denormal one rounded on
 * the denormal grid (the tie broken by the sign of lo). */
NXFN float nx_ldexp_fff(float hi, float lo, int k) {
  uint hb = floatBitsToUint(hi);
  uint ha = hb & 0x7fffffffu;
  uint s = hb & 0x80000000u;
  if (ha == 0u || ha >= 0x7f800000u) return hi;
  int f = NX_I(ha >> 23) + k;
  if (f >= 255) return uintBitsToFloat(s | 0x7f800000u);
  if (f >= 1) return uintBitsToFloat(hb + (NX_U(k) << 23));
  if (f + 149 < 1) return uintBitsToFloat(s);
  float u = uintBitsToFloat(ha + (NX_U(k + 149) << 23)); /* |hi| 2^(k+149) < 2^23 */
  NX_PRECISE float t = (u + 8388608.0f) - 8388608.0f;   /* rint(u) */
  NX_PRECISE float d = u - t;
  uint lb = floatBitsToUint(lo);
  if ((d == 0.5f || d == -0.5f) && (lb & 0x7fffffffu) != 0u)
    t = ((lb & 0x80000000u) == s) ? u + 0.5f : u - 0.5f;
  return uintBitsToFloat(s | NX_U(t));
}

/* x + y, x - y, x * y: IEEE on every device.  The driver's result stands
 * unless an operand is zero or denormal or the result is (a test of the
 * exponent bits); then both operands are scaled by 2^64 (exact; the sum of
 * two values below 2^-60 is exact when it is below 2^-126) or, for the
 * product, the mantissas are multiplied as integers and rounded once. */
NXFN float nx_addf_rare(float a, float b, float s) {
  uint aa = floatBitsToUint(a) & 0x7fffffffu;
  uint ab = floatBitsToUint(b) & 0x7fffffffu;
  if (aa >= 0x21800000u || ab >= 0x21800000u) return s; /* an operand >= 2^-60: a denormal cannot change it */
  return nx_down64f(nx_up64f(a) + nx_up64f(b));
}
NXFN float nxf_add(float a, float b) {
  float s = a + b;
  if ((floatBitsToUint(a) & 0x7f800000u) != 0u && (floatBitsToUint(b) & 0x7f800000u) != 0u &&
      (floatBitsToUint(s) & 0x7f800000u) != 0u)
    return s;
  return nx_addf_rare(a, b, s);
}
NXFN float nxf_sub(float a, float b) { return nxf_add(a, nx_negf(b)); }
NXFN float nx_mulf_rare(float a, float b) {
  uint ua = floatBitsToUint(a);
  uint ub = floatBitsToUint(b);
  uint aa = ua & 0x7fffffffu;
  uint ab = ub & 0x7fffffffu;
  uint s = (ua ^ ub) & 0x80000000u;
  if (aa > 0x7f800000u || ab > 0x7f800000u) return NX_NAN_F;
  if (aa == 0x7f800000u || ab == 0x7f800000u)
    return (aa == 0u || ab == 0u) ? NX_NAN_F : uintBitsToFloat(s | 0x7f800000u);
  if (aa == 0u || ab == 0u) return uintBitsToFloat(s);
  nxunpf pa = nx_unpackf(aa);
  nxunpf pb = nx_unpackf(ab);
  uint hi;
  uint lo;
  umulExtended(pa.m, pb.m, hi, lo); /* in [2^46, 2^48) */
  int e = pa.e + pb.e;
  if (hi >= 0x8000u) return nx_packf(s, e + 1, (hi << 16) | (lo >> 16), (lo & 0xffffu) != 0u);
  return nx_packf(s, e, (hi << 17) | (lo >> 15), (lo & 0x7fffu) != 0u);
}
NXFN float nxf_mul(float a, float b) {
  float p = a * b;
  if ((floatBitsToUint(a) & 0x7f800000u) != 0u && (floatBitsToUint(b) & 0x7f800000u) != 0u &&
      (floatBitsToUint(p) & 0x7f800000u) != 0u)
    return p;
  return nx_mulf_rare(a, b);
}

/* x / y correctly rounded (the driver's division may be 2.5 ULP off and
 * flushes): the mantissas' quotient estimated by the driver, then the exact
 * integer quotient Q (25 bits) and remainder R = A 2^sh - Q B (mod 2^32,
 * exact because |R| < 2^31), then one rounding by nx_packf. */
NXFN float nxf_div(float a, float b) {
  uint ua = floatBitsToUint(a);
  uint ub = floatBitsToUint(b);
  uint aa = ua & 0x7fffffffu;
  uint ab = ub & 0x7fffffffu;
  uint s = (ua ^ ub) & 0x80000000u;
  if (aa - 1u >= 0x7f7fffffu || ab - 1u >= 0x7f7fffffu) { /* a zero, inf or NaN */
    if (aa > 0x7f800000u || ab > 0x7f800000u) return NX_NAN_F;
    if (aa == ab && (aa == 0u || aa == 0x7f800000u)) return NX_NAN_F; /* 0/0, inf/inf */
    if (aa == 0x7f800000u || ab == 0u) return uintBitsToFloat(s | 0x7f800000u);
    return uintBitsToFloat(s); /* 0/y, x/inf */
  }
  nxunpf pa = nx_unpackf(aa);
  nxunpf pb = nx_unpackf(ab);
  uint sh = (pa.m >= pb.m) ? 24u : 25u;
  float fb = NX_F(pb.m);
  float q0 = NX_F(pa.m) / fb; /* in (1/2, 2), a few ULP */
  uint q = NX_U(q0 * ((sh == 24u) ? 16777216.0f : 33554432.0f));
  int r = NX_I((pa.m << sh) - q * pb.m);
  int c = NX_I(floor(NX_F(r) / fb));
  q = NX_U(NX_I(q) + c);
  r -= c * NX_I(pb.m);
  if (r < 0) { q -= 1u; r += NX_I(pb.m); }
  if (r < 0) { q -= 1u; r += NX_I(pb.m); }
  if (r >= NX_I(pb.m)) { q += 1u; r -= NX_I(pb.m); }
  if (r >= NX_I(pb.m)) { q += 1u; r -= NX_I(pb.m); }
  return nx_packf(s, pa.e - pb.e + 24 - NX_I(sh), q << 7, r != 0);
}

/* sqrt(x) correctly rounded: x = N 2^(2t) with N an integer in [2^46, 2^48),
 * S = floor(sqrt(N)) from the driver's estimate and the exact remainder
 * N - S^2 (mod 2^32), rounded up when the remainder exceeds S (no ties). */
NXFN float nxf_sqrt(float x) {
  uint u = floatBitsToUint(x);
  uint a = u & 0x7fffffffu;
  if (a == 0u) return x;
  if (u > 0x7f800000u) return NX_NAN_F; /* negative or NaN */
  if (a == 0x7f800000u) return x;
  nxunpf p = nx_unpackf(a);
  uint j = ((p.e & 1) == 0) ? 23u : 24u;
  float fm = NX_F(p.m) * ((j == 23u) ? NXF(0x34000000u) : NXF(0x34800000u)); /* m 2^-23 or 2^-22: [1, 4) */
  uint q = NX_U(sqrt(fm) * 8388608.0f);
  int r = NX_I((p.m << j) - q * q);
  int c = NX_I(floor(NX_F(r) / NX_F(2u * q)));
  q = NX_U(NX_I(q) + c);
  r = NX_I((p.m << j) - q * q);
  if (r < 0) { q -= 1u; r += NX_I(2u * q + 1u); }
  if (r < 0) { q -= 1u; r += NX_I(2u * q + 1u); }
  if (r > NX_I(2u * q)) { r -= NX_I(2u * q + 1u); q += 1u; }
  if (r > NX_I(2u * q)) { r -= NX_I(2u * q + 1u); q += 1u; }
  if (r > NX_I(q)) q += 1u;
  int e = (p.e - NX_I(j) + 23) / 2; /* even: sqrt(x) = (q 2^-23) 2^e */
  return uintBitsToFloat((NX_U(e + 126) << 23) + q);
}

/* comparisons, max, min, sign, abs, floor, ceil on the bits */
NXFN int nx_keyf(float x) { /* monotone in x, -0 == +0; not for NaN */
  uint b = floatBitsToUint(x);
  int m = NX_I(b & 0x7fffffffu);
  return ((b & 0x80000000u) != 0u) ? -m : m;
}
NXFN bool nxf_eq(float a, float b) { return !nx_isnanf(a) && !nx_isnanf(b) && nx_keyf(a) == nx_keyf(b); }
NXFN bool nxf_lt(float a, float b) { return !nx_isnanf(a) && !nx_isnanf(b) && nx_keyf(a) < nx_keyf(b); }
NXFN bool nxf_le(float a, float b) { return !nx_isnanf(a) && !nx_isnanf(b) && nx_keyf(a) <= nx_keyf(b); }
NXFN float nxf_floor(float x) {
  uint b = floatBitsToUint(x);
  if ((b & 0x7f800000u) != 0u) return floor(x);
  if ((b & 0x7fffffffu) == 0u || b < 0x80000000u) return uintBitsToFloat(b & 0x80000000u);
  return -1.0f;
}
NXFN float nxf_ceil(float x) {
  uint b = floatBitsToUint(x);
  if ((b & 0x7f800000u) != 0u) return ceil(x);
  if ((b & 0x7fffffffu) == 0u || b >= 0x80000000u) return uintBitsToFloat(b & 0x80000000u);
  return 1.0f;
}
/* f32 -> f64 and f64 -> f32 (round to nearest even) from the bits */
#ifndef NXMATH_NO_F64
NXFN double nx_f32_to_f64(float x) {
  uint b = floatBitsToUint(x);
  uint a = b & 0x7fffffffu;
  uint s = b & 0x80000000u;
  if (a == 0u) return packDouble2x32(uvec2(0u, s));
  if (a >= 0x7f800000u) return packDouble2x32(uvec2(0u, s | 0x7ff00000u | (a & 0x007fffffu) >> 3 | ((a > 0x7f800000u) ? 0x00080000u : 0u)));
  nxunpf p = nx_unpackf(a); /* mantissa bits 22..0 -> 51..29 */
  uint m = p.m & 0x007fffffu;
  return packDouble2x32(uvec2(m << 29, s | (NX_U(p.e + 1023) << 20) | (m >> 3)));
}
NXFN float nx_f64_to_f32(double x) {
  uvec2 w = unpackDouble2x32(x);
  uint s = w.y & 0x80000000u;
  uint h = w.y & 0x7fffffffu;
  if (h >= 0x7ff00000u) return (h == 0x7ff00000u && w.x == 0u) ? uintBitsToFloat(s | 0x7f800000u) : NX_NAN_F;
  int e = NX_I(h >> 20) - 1023;
  if (e < -1000) return uintBitsToFloat(s); /* zero, f64 denormals, far below 2^-150 */
  /* the 53-bit mantissa's top 32 bits, the rest as sticky */
  uint m = 0x80000000u | ((h & 0x000fffffu) << 11) | (w.x >> 21);
  return nx_packf(s, e, m, (w.x & 0x001fffffu) != 0u);
}
#endif

/* --- float-float arithmetic: NX_PAIR_ARITH instantiated for float --- */
NX_PAIR_ARITH(float, nxff, nx_ff, nx_two_sumf, nx_fast_two_sumf, nx_splitf, nx_two_prodf,
              nx_ff_addf, nx_ff_mulf, nx_ff_divf, 4097.0f)

/* exp(xh + xl) = 2^k (1 + u), u = expm1(r) to r^8.  Valid for |xh| <= 105,
 * |xl| <= 2^-20 |xh|. */
NX_T_EXP_CORE(nx_expf_core, NXF_EXPM1_POLY)
/* 2^k (1 + u) rounded once (twice for subnormal results) */
NXFN float nx_expf_fin(nxexpf e) {
  nxff v = nx_two_sumf(1.0f, e.hi);
  nxff w = nx_fast_two_sumf(v.hi, v.lo + e.lo);
  return nx_ldexp_fff(w.hi, w.lo, e.k);
}
NX_T_EXP_PAIR(nx_expf_ff)
/* expm1(x) as float-float for x in [-20, 40] */
NX_T_EXPM1_PAIR(nx_expm1f_ff)

/* log(xh + xl) as float-float; xh > 0 finite, |xl| <= ulp(xh).  x = 2^e m,
 * m in [sqrt(1/2), sqrt(2)) from the bits (a denormal xh too: a flushing
 * device reads it as 0), then nx_log_mf, series to s^13: ~2^-38 relative. */
NX_T_LOG_M(nx_log_mf, NXF_LOG_POLY)
NXFN nxff nx_logf_ff(float xh, float xl) {
  int e = 0;
  if ((floatBitsToUint(xh) & 0x7f800000u) == 0u) { xh = nx_up64f(xh); e = -64; }
  uint b = floatBitsToUint(xh);
  e += NX_I(b >> 23) - 127;
  uint mb = b & 0x007fffffu;
  if (mb >= 0x003504f3u) { mb = mb | 0x3f000000u; e += 1; } else { mb = mb | 0x3f800000u; }
  float m = uintBitsToFloat(mb);
  float ml = (xl == 0.0f) ? 0.0f : nx_ldexpf(xl, -e);
  return nx_log_mf(m, ml, e);
}

/* exp(x) <= 1 ULP, denormal results included.  k = round(x/ln2),
 * r = x - k ln2 as a float-float (Cody-Waite, k * hi exact), e^r - 1 - r by
 * Taylor from r^2 to r^7 (truncation < 2^-27), 1 + r exact as two floats,
 * one rounding; 2^k by adding to the exponent bits, or nx_ldexp_fff when the
 * result is below 2^-125. */
NXFN float nxf_exp(float x) {
  if (nx_isnanf(x)) return x;
  if (x > NXF(0x42B17217u)) return NX_INF_F; /* above, e^x rounds to inf */
  if (x < -104.0f) return 0.0f;
  float kf = floor(x * NXCF_INV_LN2 + 0.5f);
  NX_PRECISE float r1 = x - kf * NXCF_LN2_CW_HI; /* exact */
  NX_PRECISE float c = -(kf * NXCF_LN2_CW_LO);
  nxff r = nx_two_sumf(r1, c);
  float p = NXCF_FI7;
  p = p * r.hi + NXCF_FI6;
  p = p * r.hi + NXCF_FI5;
  p = p * r.hi + NXCF_FI4;
  p = p * r.hi + NXCF_FI3;
  p = p * r.hi + NXCF_FI2;
  NX_PRECISE float t = r.lo + r.hi * r.hi * p;
  nxff v = nx_fast_two_sumf(1.0f, r.hi);
  int k = NX_I(kf);
  if (k >= -125) {
    float y = v.hi + (v.lo + t); /* in [0.7, 1.42]: 2^k y is normal */
    return uintBitsToFloat(floatBitsToUint(y) + (NX_U(k) << 23));
  }
  nxff w = nx_fast_two_sumf(v.hi, v.lo + t);
  return nx_ldexp_fff(w.hi, w.lo, k);
}

/* log(x) <= 1 ULP: nx_logf_ff (about 2^-38 relative) rounded once */
NXFN float nxf_log(float x) {
  uint b = floatBitsToUint(x);
  if ((b & 0x7fffffffu) > 0x7f800000u) return x;
  if ((b & 0x7fffffffu) == 0u) return -NX_INF_F;
  if (b > 0x80000000u) return NX_NAN_F;
  if (b == 0x7f800000u) return x;
  return nx_logf_ff(x, 0.0f).hi;
}

/* 1/sqrt(x) <= 1 ULP: x = xm 4^j, xm in [1, 4) from the bits, then one
 * Newton step (nx_rsqrt_newtonf), the result in [1/2, 1] scaled by bits. */
NX_T_RSQRT_NEWTON(nx_rsqrt_newtonf)
NXFN float nxf_rsqrt(float x) {
  uint b = floatBitsToUint(x);
  uint a = b & 0x7fffffffu;
  if (a > 0x7f800000u) return x;
  if (a == 0u) return uintBitsToFloat((b & 0x80000000u) | 0x7f800000u);
  if (b > 0x80000000u) return NX_NAN_F;
  if (a == 0x7f800000u) return 0.0f;
  nxunpf p = nx_unpackf(a);
  int odd = p.e & 1;
  int h = (p.e - odd) / 2; /* x = xm 2^(2h) */
  float xm = uintBitsToFloat((p.m & 0x007fffffu) | 0x3f800000u) * NX_F(1 + odd);
  float y = nx_rsqrt_newtonf(xm); /* in [1/2, 1] */
  return uintBitsToFloat(floatBitsToUint(y) - (NX_U(h) << 23));
}

/* 2/pi in 32-bit words: 2/pi = sum_j w(j) 2^(-32(j+1)) */
NXFN uint nx_twoopi_w(int j) {
  switch (j) {
  case 0: return 0xA2F9836Eu;
  case 1: return 0x4E441529u;
  case 2: return 0xFC2757D1u;
  case 3: return 0xF534DDC0u;
  case 4: return 0xDB629599u;
  case 5: return 0x3C439041u;
  case 6: return 0xFE5163ABu;
  default: return 0xDEBBC561u;
  }
  return 0u;
}
/* bits [p, p+31] of the 160-bit r4:r3:r2:r1:r0 (r0 least significant), 0 <= p < 160 */
NXFN uint nx_bits160(uint r0, uint r1, uint r2, uint r3, uint r4, uint p) {
  uint i = p >> 5u;
  uint sh = p & 31u;
  uint lo = r0;
  uint hi = r1;
  if (i == 1u) { lo = r1; hi = r2; }
  if (i == 2u) { lo = r2; hi = r3; }
  if (i == 3u) { lo = r3; hi = r4; }
  if (i == 4u) { lo = r4; hi = 0u; }
  if (sh == 0u) return lo;
  return (lo >> sh) | (hi << (32u - sh));
}

#define NXCF_TWO_OVER_PI NXF(0x3F22F983u)
#define NXCF_PIO2_1 NXF(0x3FC91000u) /* pi/2 in 12-bit parts: k * part exact for k < 2^12 */
#define NXCF_PIO2_2 NXF(0xB6957000u)
#define NXCF_PIO2_3 NXF(0xB06F5000u)
#define NXCF_PIO2_4 NXF(0x298C234Cu)
#define NXCF_FI9 NXF(0x3638EF1Du)
#define NXCF_FI10 NXF(0x3493F27Eu)
#define NXCF_FI11 NXF(0x32D7322Bu)
#define NXF_SIN_POLY(z) ((((-NXCF_FI11 * (z) + NXCF_FI9) * (z) - NXCF_FI7) * (z) + NXCF_FI5) * (z) - NXCF_FI3) /* sin, to r^11 */
#define NXF_COS_POLY(z) (((-NXCF_FI10 * (z) + NXCF_FI8) * (z) - NXCF_FI6) * (z) + NXCF_FI4) /* cos, to r^10 */
struct nxredf { float hi; float lo; int q; }; /* x = q pi/2 + hi + lo (mod 2 pi) */

/* Argument reduction for 2^-12 <= ax < inf: |r| <= pi/4.  ax < 4096:
 * Cody-Waite with pi/2 in three 12-bit parts and a fourth float (k * part
 * exact).  Larger: Payne-Hanek on integers: the 24-bit mantissa times the 128
 * bits of 2/pi that matter (32 x 32 -> 64 products), the quadrant from the two
 * bits above the binary point, 64 fraction bits below it. */
NXFN nxredf nx_rem_pio2f_cw(float ax) {
  nxredf res;
  float k = floor(ax * NXCF_TWO_OVER_PI + 0.5f);
  NX_PRECISE float r1 = ax - k * NXCF_PIO2_1;
  nxff r = nx_two_sumf(r1, -(k * NXCF_PIO2_2));
  nxff t = nx_two_sumf(r.hi, -(k * NXCF_PIO2_3));
  NX_PRECISE float lo = t.lo + (r.lo - k * NXCF_PIO2_4);
  nxff u = nx_fast_two_sumf(t.hi, lo);
  res.hi = u.hi;
  res.lo = u.lo;
  res.q = NX_I(k) & 3;
  return res;
}
/* the 64 fraction bits fh:fl as a float-float times pi/2 (no `precise`
 * here: glslang 12 runs out of memory propagating it next to umulExtended) */
NXFN nxff nx_frac64_pio2f(uint fh, uint fl) {
  nxff f = nx_two_sumf(NX_F(fh >> 8) * NXF(0x33800000u),
                       NX_F(((fh & 0xffu) << 16) | (fl >> 16)) * NXF(0x27800000u)); /* 2^-24, 2^-48 */
  f.lo += NX_F(fl & 0xffffu) * NXF(0x1F800000u);                             /* 2^-64 */
  nxff pr = nx_two_prodf(f.hi, NXCF_PIO2_HI);
  pr.lo += f.hi * NXCF_PIO2_LO + f.lo * NXCF_PIO2_HI;
  return nx_fast_two_sumf(pr.hi, pr.lo);
}
NXFN nxredf nx_rem_pio2f(float ax) {
  if (ax < 4096.0f) return nx_rem_pio2f_cw(ax);
  nxredf res;
  nxunpf p = nx_unpackf(floatBitsToUint(ax));
  int ex = p.e - 23; /* ax = m 2^ex, ex >= -11 */
  int j0 = (ex >= 2) ? (ex - 2) / 32 : 0; /* earlier words add multiples of 4 */
  uint h0, l0, h1, l1, h2, l2, h3, l3;
  umulExtended(p.m, nx_twoopi_w(j0), h0, l0);
  umulExtended(p.m, nx_twoopi_w(j0 + 1), h1, l1);
  umulExtended(p.m, nx_twoopi_w(j0 + 2), h2, l2);
  umulExtended(p.m, nx_twoopi_w(j0 + 3), h3, l3);
  uint r0 = l3;
  uint r1 = h3 + l2;
  uint c = (r1 < h3) ? 1u : 0u;
  uint r2 = h2 + l1;
  uint c2 = (r2 < h2) ? 1u : 0u;
  r2 += c;
  c2 += (r2 < c) ? 1u : 0u;
  uint r3 = h1 + l0;
  uint c3 = (r3 < h1) ? 1u : 0u;
  r3 += c2;
  c3 += (r3 < c2) ? 1u : 0u;
  uint r4 = h0 + c3;
  uint bp = NX_U(32 * (j0 + 4) - ex); /* the binary point, in [95, 139] */
  int q = NX_I(nx_bits160(r0, r1, r2, r3, r4, bp) & 3u);
  uint fh = nx_bits160(r0, r1, r2, r3, r4, bp - 32u);
  uint fl = nx_bits160(r0, r1, r2, r3, r4, bp - 64u);
  bool neg = fh >= 0x80000000u;
  if (neg) { /* fraction >= 1/2: take 1 - f, next quadrant */
    fl = ~fl + 1u;
    fh = ~fh + ((fl == 0u) ? 1u : 0u);
    q += 1;
  }
  nxff r = nx_frac64_pio2f(fh, fl);
  res.hi = neg ? -r.hi : r.hi;
  res.lo = neg ? -r.lo : r.lo;
  res.q = q & 3;
  return res;
}
/* sin, cos of rh + rl, |rh| <= pi/4: Taylor to r^11, r^10 */
NX_T_SIN_KERNEL(nx_sin_kernelf, NXF_SIN_POLY)
NX_T_COS_KERNEL(nx_cos_kernelf, NXF_COS_POLY)
/* sin(x), cos(x) <= 2 ULP (measured 1) for every finite x; inf, NaN -> NaN */
NXFN float nxf_sin(float x) {
  uint b = floatBitsToUint(x);
  uint a = b & 0x7fffffffu;
  if (a > 0x7f800000u) return x;
  if (a == 0x7f800000u) return NX_NAN_F;
  if (a < 0x39800000u) return x; /* |x| < 2^-12: sin x = x (denormals too) */
  nxredf r = nx_rem_pio2f(uintBitsToFloat(a));
  float v = ((r.q & 1) == 0) ? nx_sin_kernelf(r.hi, r.lo) : nx_cos_kernelf(r.hi, r.lo);
  uint s = (((r.q & 2) != 0) ? 0x80000000u : 0u) ^ (b & 0x80000000u);
  return uintBitsToFloat(floatBitsToUint(v) ^ s);
}
NXFN float nxf_cos(float x) {
  uint b = floatBitsToUint(x);
  uint a = b & 0x7fffffffu;
  if (a > 0x7f800000u) return x;
  if (a == 0x7f800000u) return NX_NAN_F;
  if (a < 0x39800000u) return 1.0f;
  nxredf r = nx_rem_pio2f(uintBitsToFloat(a));
  float v = ((r.q & 1) == 0) ? nx_cos_kernelf(r.hi, r.lo) : nx_sin_kernelf(r.hi, r.lo);
  return uintBitsToFloat(floatBitsToUint(v) ^ ((((r.q + 1) & 2) != 0) ? 0x80000000u : 0u));
}

NX_T_EXPM1(nxf_expm1, 40.0f, 89.0f, -20.0f, nx_pow2f(-25))

NX_T_LOG1P(nxf_log1p, nx_pow2f(-25))

NX_T_TANH(nxf_tanh, nx_pow2f(-12), 10.0f)

/* sigmoid: e^x below -30 (nxf_exp: denormal results too) */
NX_T_SIGMOID(nxf_sigmoid, 20.0f, -30.0f, nxf_exp)

/* erfcx(ax) = e^(ax^2) erfc(ax) for ax in [1, 4): the fits */
NXFN float nx_erfcx_fitf(float ax) {
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
  return p;
}
NX_T_ERF_SMALL(nx_erf_smallf, NXF_ERF_POLY)
NX_T_ERF_FROM_ERFCX(nx_erf_erfcxf)
/* erf(x): |x| < 2^-60 c0 x from the bits; |x| < 1 to x^23; 1 <= |x| < 4
 * from erfcx fitted (Chebyshev, mpmath) on [1,2), [2,3), [3,4); beyond +-1
 * (erfc(3.92) < 2^-25). */
NXFN float nxf_erf(float x) {
  if (nx_isnanf(x)) return x;
  float ax = nx_absf(x);
  if (nx_iszerof(x)) return x;
  if ((floatBitsToUint(x) & 0x7fffffffu) < 0x21800000u) { /* |x| < 2^-60: c0 x, from x 2^64 (denormals too) */
    float xs = nx_up64f(x);
    nxff p = nx_two_prodf(xs, NXCF_ERF_C0_HI);
    nxff q = nx_fast_two_sumf(p.hi, p.lo + xs * NXCF_ERF_C0_LO);
    return nx_ldexp_fff(q.hi, q.lo, -64);
  }
  if (ax < 1.0f) return nx_erf_smallf(x, ax);
  if (ax < 4.0f) return nx_erf_erfcxf(x, ax, nx_erfcx_fitf(ax));
  return nx_copysignf(1.0f, x);
}

/* pow(x, y), C99 Annex F special cases; otherwise exp(y log|x|) with log in
 * float-float and the product y*log in float-float.  Every test reads the
 * bits (a flushing device compares a denormal y equal to 0), integer and odd
 * y from the mantissa bits, signed zeros and infinities built from bits. */
NX_T_POW_ABS(nx_pow_absf, 89.0f, -105.0f)
NXFN float nxf_pow(float x, float y) {
  uint ux = floatBitsToUint(x);
  uint uy = floatBitsToUint(y);
  uint ax = ux & 0x7fffffffu;
  uint ay = uy & 0x7fffffffu;
  if (ay == 0u) return 1.0f;          /* y = +-0, even x NaN */
  if (ux == 0x3f800000u) return 1.0f; /* x = 1, even y NaN */
  if (ax > 0x7f800000u || ay > 0x7f800000u) return NX_NAN_F;
  bool ypos = uy < 0x80000000u;
  if (ay == 0x7f800000u) {
    if (ax == 0x3f800000u) return 1.0f; /* (-1)^+-inf */
    return ((ax < 0x3f800000u) == ypos) ? 0.0f : NX_INF_F;
  }
  /* y integer / odd from its bits: the units bit sits at 150 - exponent */
  int ey = NX_I(ay >> 23);
  bool yint;
  bool yodd;
  if (ey < 127) {
    yint = false;
    yodd = false;
  } else if (ey > 150) {
    yint = true;
    yodd = false;
  } else {
    uint mant = (ay & 0x007fffffu) | 0x00800000u;
    uint sh = NX_U(150 - ey);
    yint = (sh == 0u) || (mant << (32u - sh)) == 0u;
    yodd = yint && ((mant >> sh) & 1u) != 0u;
  }
  uint sx = ux & 0x80000000u;
  uint sres = yodd ? sx : 0u; /* the sign of the result for x < 0 */
  if (ax == 0u) return uintBitsToFloat(sres | (ypos ? 0u : 0x7f800000u));
  if (ax == 0x7f800000u) return uintBitsToFloat(sres | (ypos ? 0x7f800000u : 0u));
  if (sx != 0u && !yint) return NX_NAN_F;
  if (ax == 0x3f800000u) return uintBitsToFloat(sres | 0x3f800000u); /* x = -1 */
  if (uy == 0x3f800000u) return x;
  float axf = uintBitsToFloat(ax);
  if (uy == 0x40000000u) return nxf_mul(x, x);
  float r = nx_pow_absf(axf, y); /* |y| < 2^31 where it reaches exp */
  return uintBitsToFloat(floatBitsToUint(r) | sres);
}

/* atan2(y, x), C99 Annex F special cases.  t = min/max(|x|,|y|) in
 * float-float from the mantissas (so denormal operands are read from their
 * bits), atan t = atan(j/4) + atan((t - j/4)/(1 + t j/4)), j = round(4t),
 * the reduced argument |u| <= 1/8 by its odd Taylor polynomial to u^11;
 * quadrant fixes in float-float.  t < 2^-13: atan t = t, correctly rounded
 * by nxf_div (denormal results too). */
NX_T_ATAN2_CORE(nx_atan2_coref, NXF_ATAN_POLY)
NXFN float nxf_atan2(float y, float x) {
  if (nx_isnanf(x) || nx_isnanf(y)) return NX_NAN_F;
  uint uy = floatBitsToUint(y) & 0x7fffffffu;
  uint ux = floatBitsToUint(x) & 0x7fffffffu;
  bool xneg = nx_signbitf(x);
  if (uy == 0x7f800000u) {
    float v = (ux == 0x7f800000u) ? (xneg ? NXCF_3PIO4 : NXCF_PIO4_HI) : NXCF_PIO2_HI;
    return nx_copysignf(v, y);
  }
  if (ux == 0x7f800000u || uy == 0u) return nx_copysignf(xneg ? NXCF_PI_HI : 0.0f, y);
  if (ux == 0u) return nx_copysignf(NXCF_PIO2_HI, y);
  bool sw = uy > ux;
  uint num = sw ? ux : uy;
  uint den = sw ? uy : ux;
  nxunpf pn = nx_unpackf(num);
  nxunpf pd = nx_unpackf(den);
  int de = pn.e - pd.e; /* <= 0 */
  /* precise: the core's exact steps reach back to th and tl (GLSL's precise
   * follows a value's operations, but not into a caller) */
  NX_PRECISE float th;
  NX_PRECISE float tl = 0.0f;
  if (de < -14) {
    th = nxf_div(uintBitsToFloat(num), uintBitsToFloat(den));
    if (!sw && !xneg) return nx_copysignf(th, y);
  } else {
    float ds = uintBitsToFloat((pd.m & 0x007fffffu) | 0x3f800000u);
    float ns = uintBitsToFloat(((pn.m & 0x007fffffu) | 0x3f800000u) + (NX_U(de) << 23));
    th = ns / ds;
    nxff pt = nx_two_prodf(th, ds);
    tl = ((ns - pt.hi) - pt.lo) / ds; /* th + tl = num / den to ~2^-48 */
  }
  return nx_atan2_coref(th, tl, sw, xneg, y);
}

/* round half away from zero, exact */
NX_T_ROUND(nxf_round, 8388608.0f)

/* sign: 1, -1, or x itself for +-0 and NaN */
NXFN float nxf_sign(float x) {
  uint b = floatBitsToUint(x);
  if ((b & 0x7fffffffu) == 0u || (b & 0x7fffffffu) > 0x7f800000u) return x;
  return uintBitsToFloat((b & 0x80000000u) | 0x3f800000u);
}

/* fmod(x, y): exact, sign of x.  On the integer mantissas: r = mx mod my,
 * then 8 more bits of x a step (r << 8 < 2^32), at most 35 steps; the result
 * r 2^(ey-23) is exact and built from the bits (denormals too). */
NXFN float nxf_rem(float x, float y) {
  uint ux = floatBitsToUint(x);
  uint ax = ux & 0x7fffffffu;
  uint ay = floatBitsToUint(y) & 0x7fffffffu;
  if (ax >= 0x7f800000u || ay > 0x7f800000u || ay == 0u) return NX_NAN_F;
  if (ay == 0x7f800000u || ax < ay) return x;
  nxunpf px = nx_unpackf(ax);
  nxunpf py = nx_unpackf(ay);
  uint r = px.m % py.m;
  int d = px.e - py.e;
  for (int it = 0; it < 40; it++) {
    if (d <= 0 || r == 0u) break;
    int st = (d < 8) ? d : 8;
    r = (r << NX_U(st)) % py.m;
    d -= st;
  }
  if (r == 0u) return uintBitsToFloat(ux & 0x80000000u);
  return nx_ldexp_fff(uintBitsToFloat(floatBitsToUint(NX_F(r)) | (ux & 0x80000000u)), 0.0f, py.e - 23);
}

/* NaN-propagating max/min; max(-0, +0) = +0, min(-0, +0) = -0; an
 * operand's bits, compared on the bits */
NXFN float nxf_max(float a, float b) {
  if (nx_isnanf(a) || nx_isnanf(b)) return NX_NAN_F;
  int ka = nx_keyf(a);
  int kb = nx_keyf(b);
  if (ka == kb) return nx_signbitf(a) ? b : a;
  return ka > kb ? a : b;
}
NXFN float nxf_min(float a, float b) {
  if (nx_isnanf(a) || nx_isnanf(b)) return NX_NAN_F;
  int ka = nx_keyf(a);
  int kb = nx_keyf(b);
  if (ka == kb) return nx_signbitf(a) ? a : b;
  return ka < kb ? a : b;
}

/* ---- tan, the inverse and hyperbolic functions, cbrt (f32) ---- */
NX_T_PAIR_SQRT(nx_ff_sqrtf)
NX_T_TAN_CORE(nx_tan_coref, nx_sin_kernelf, nx_cos_kernelf)
/* tan(x) <= 1 ULP for every finite x; inf, NaN -> NaN; |x| < 2^-12: x */
NXFN float nxf_tan(float x) {
  uint b = floatBitsToUint(x);
  uint a = b & 0x7fffffffu;
  if (a > 0x7f800000u) return x;
  if (a == 0x7f800000u) return NX_NAN_F;
  if (a < 0x39800000u) return x;
  nxredf r = nx_rem_pio2f(uintBitsToFloat(a));
  float v = nx_tan_coref(r.hi, r.lo, r.q);
  return uintBitsToFloat(floatBitsToUint(v) ^ (b & 0x80000000u));
}
/* atan(x) = atan2(x, 1) */
NXFN float nxf_atan(float x) { return nxf_atan2(x, 1.0f); }
NX_T_ASINCOS(nx_asincosf, nx_ff_sqrtf, nx_atan2_coref)
/* asin(x), acos(x): |x| > 1 NaN; asin of |x| < 2^-12 is x (denormals too) */
NXFN float nxf_asin(float x) {
  uint a = floatBitsToUint(x) & 0x7fffffffu;
  if (a > 0x3f800000u) return NX_NAN_F; /* |x| > 1, NaN */
  if (a < 0x39800000u) return x;
  return nx_asincosf(x, uintBitsToFloat(a), false);
}
NXFN float nxf_acos(float x) {
  uint a = floatBitsToUint(x) & 0x7fffffffu;
  if (a > 0x3f800000u) return NX_NAN_F;
  return nx_asincosf(x, uintBitsToFloat(a), true);
}
NX_T_HALF_EXP(nx_half_expf, 90.0f)
NX_T_SINH(nxf_sinh, nx_pow2f(-12), 20.0f, nx_half_expf)
NX_T_COSH(nxf_cosh, nx_pow2f(-12), 20.0f, nx_half_expf)
NX_T_LOG2X(nx_log2xf)
NX_T_ASINH(nxf_asinh, nx_pow2f(-12), 4096.0f, nx_ff_sqrtf, nx_log2xf)
NX_T_ACOSH(nxf_acosh, 4096.0f, nx_ff_sqrtf, nx_log2xf)
NX_T_ATANH(nxf_atanh, nx_pow2f(-12))
NX_T_CBRT_CORE(nx_cbrt_coref, 2)
/* cbrt(x): |x| = M 2^(3q + r) from the bits (denormals too), cbrt(M 2^r)
 * in [1, 2] scaled by 2^q on the bits (never denormal), sign of x */
NXFN float nxf_cbrt(float x) {
  uint b = floatBitsToUint(x);
  uint a = b & 0x7fffffffu;
  if (a == 0u || a >= 0x7f800000u) return x;
  nxunpf u = nx_unpackf(a);
  int q = (u.e + 1200) / 3 - 400;
  float y = nx_cbrt_coref(uintBitsToFloat((u.m & 0x007fffffu) | 0x3f800000u), u.e - 3 * q);
  return uintBitsToFloat((floatBitsToUint(y) + (NX_U(q) << 23)) | (b & 0x80000000u));
}

/* erfc, erf_inv (f32) */
#define NXCF_SQRTPI_2_HI NXF(0x3F62DFC5u) /* sqrt(pi)/2 */
#define NXCF_SQRTPI_2_LO NXF(0xB2E4B109u)
#define NXCF_ERFCX_C0_HI NXF(0x3F106EBAu) /* the fit's c0, ~1/sqrt(pi) */
#define NXCF_ERFCX_C0_LO NXF(0x32E7E0BBu)
/* x erfcx(x) = c0 + t P(t), t = 1/x^2 in [1/10.06^2, 1/16]: Chebyshev fit
 * (mpmath), rel err 2^-35.8, 2^-28.5 as evaluated */
#define NXF_ERFCX_ASYM_POLY(t) (((((NXF(0x41C50771u) * (t) + NXF(0xC13A2EC4u)) * (t) + NXF(0x405DF26Fu)) * (t) + NXF(0xBF868E0Fu)) * (t) + NXF(0x3ED897C0u)) * (t) + NXF(0xBE906E9Bu))
/* erfc's own fits on [1, 4) (erf's, above, are good to 2^-24.7 only: enough
 * there, where erfc is a small correction): erfcx(x) = c0 + s P(s),
 * s = x - 1.5 on [1, 2); x erfcx(x) = c0 + t P(t), t = 1/x^2, on [2, 4);
 * mpmath Chebyshev fits, 2^-25.6 and 2^-26.9 relative as evaluated */
#define NXF_ERFCX_NEAR_POLY(s) ((((((((NXF(0xB8A1D84Au) * (s) + NXF(0x3979B51Du)) * (s) + NXF(0xBA2D425Du)) * (s) + NXF(0x3AF6CA0Eu)) * (s) + NXF(0xBBA8A02Cu)) * (s) + NXF(0x3C5B2DDFu)) * (s) + NXF(0xBD06E28Eu)) * (s) + NXF(0x3D9BF512u)) * (s) + NXF(0xBE278CC4u))
#define NXF_ERFCX_MID_POLY(t) ((((((NXF(0xC092095Bu) * (t) + NXF(0x40DD3E7Au)) * (t) + NXF(0xC09E1B50u)) * (t) + NXF(0x40166FA1u)) * (t) + NXF(0xBF71568Eu)) * (t) + NXF(0x3ED54E8Fu)) * (t) + NXF(0xBE90526Cu))
NX_T_ERFCX_ASYM(nx_erfcx_midf, NXF_ERFCX_MID_POLY, NXF(0x3F106E86u), NXF(0x32155ABFu))
NX_T_ERFCX_ASYM(nx_erfcx_farf, NXF_ERFCX_ASYM_POLY, NXCF_ERFCX_C0_HI, NXCF_ERFCX_C0_LO)
NXFN nxff nx_erfcx_pairf(float ax) { /* ax in [1, 10.06) */
  if (ax < 2.0f) {
    float s = ax - 1.5f;
    nxff sq = nx_two_prodf(s, NXF_ERFCX_NEAR_POLY(s));
    nxff r = nx_two_sumf(NXF(0x3EA4A6D8u), sq.hi);
    r.lo += NXF(0xAFA1451Bu) + sq.lo;
    return r;
  }
  if (ax < 4.0f) return nx_erfcx_midf(ax);
  return nx_erfcx_farf(ax);
}
NX_T_ERFC_CORE(nx_erfc_coref, nx_erf_smallf, nx_erfcx_pairf)
/* erfc(x): 0 from 10.06 (erfc(10.0542) = 2^-150), 2 below -4 */
NX_T_ERFC(nxf_erfc, nx_erfc_coref, 10.06f, 4.0f)
/* sqrt(pi)/2 y rounded once, from y 2^64 (denormals too) */
NXFN float nx_erfinv_tinyf(float y) {
  float ys = nx_up64f(y);
  nxff p = nx_two_prodf(ys, NXCF_SQRTPI_2_HI);
  nxff q = nx_fast_two_sumf(p.hi, p.lo + ys * NXCF_SQRTPI_2_LO);
  return nx_ldexp_fff(q.hi, q.lo, -64);
}
NX_T_ERFINV_CORE(nx_erfinv_coref, nx_erf_smallf, nx_erfc_coref, 2)
NX_T_ERFINV(nxf_erf_inv, nx_erfinv_coref, nx_pow2f(-13), nx_erfinv_tinyf)

#undef NXT
#undef NXL
#undef NXK
#undef NXT_PAIR
#undef NXT_EXPC
#undef NXT_MK
#undef NXT_TWO_SUM
#undef NXT_FAST_TWO_SUM
#undef NXT_TWO_PROD
#undef NXT_PADD
#undef NXT_PDIV
#undef NXT_PMUL
#undef NXT_SIGNBIT
#undef NXT_ISZERO
#undef NXT_LDEXP_PAIR
#undef NXT_EXP
#undef NXT_LOG
#undef NXT_ISNAN
#undef NXT_ISINF
#undef NXT_ABS
#undef NXT_COPYSIGN
#undef NXT_POW2
#undef NXT_INF
#undef NXT_NAN
#undef NXT_EXP_CORE
#undef NXT_EXP_FIN
#undef NXT_EXP_PAIR
#undef NXT_EXPM1_PAIR
#undef NXT_LOG_PAIR

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

/* the vocabulary of the templates (see "One source for f32 and f64") */
#define NXT double
#define NXL(v) NX_D(v)
#define NXK(NAME) NXC_##NAME
#define NXT_PAIR nxdd
#define NXT_EXPC nxexpd
#define NXT_MK nx_dd
#define NXT_TWO_SUM nx_two_sum
#define NXT_FAST_TWO_SUM nx_fast_two_sum
#define NXT_TWO_PROD nx_two_prod
#define NXT_PADD nx_dd_add
#define NXT_PDIV nx_dd_div
#define NXT_PMUL nx_dd_mul
#define NXT_SIGNBIT nx_signbitd
#define NXT_ISZERO nx_iszerod
#define NXT_LDEXP_PAIR nx_ldexp_ddd
#define NXT_EXP nxd_exp
#define NXT_LOG nxd_log
#define NXT_ISNAN nx_isnand
#define NXT_ISINF nx_isinfd
#define NXT_ABS nx_absd
#define NXT_COPYSIGN nx_copysignd
#define NXT_POW2 nx_pow2d
#define NXT_INF NX_INF_D
#define NXT_NAN NX_NAN_D
#define NXT_EXP_CORE nx_exp_core
#define NXT_EXP_FIN nx_exp_fin
#define NXT_EXP_PAIR nx_exp_dd
#define NXT_EXPM1_PAIR nx_expm1_dd
#define NXT_LOG_PAIR nx_log_dd

/* the f64 polynomials (Horner; degrees chosen for 53 bits) */
#define NXD_EXPM1_POLY(x) ((((((((((((NXC_FI14 * (x) + NXC_FI13) * (x) + NXC_FI12) * (x) + NXC_FI11) * (x) + NXC_FI10) * (x) + NXC_FI9) * (x) + NXC_FI8) * (x) + NXC_FI7) * (x) + NXC_FI6) * (x) + NXC_FI5) * (x) + NXC_FI4) * (x) + NXC_FI3) * (x) + NXC_FI2) /* expm1 r = r + r^2 P, to r^14 */
#define NXD_LOG_POLY(z) ((((((((((NXC_INV25 * (z) + NXC_INV23) * (z) + NXC_INV21) * (z) + NXC_INV19) * (z) + NXC_INV17) * (z) + NXC_INV15) * (z) + NXC_INV13) * (z) + NXC_INV11) * (z) + NXC_INV9) * (z) + NXC_INV7) * (z) + NXC_INV5) /* atanh tail, to s^25 */
#define NXD_ERF_POLY(z) ((((((((((((((((NXC_ERF_T18 * (z) + NXC_ERF_T17) * (z) + NXC_ERF_T16) * (z) + NXC_ERF_T15) * (z) + NXC_ERF_T14) * (z) + NXC_ERF_T13) * (z) + NXC_ERF_T12) * (z) + NXC_ERF_T11) * (z) + NXC_ERF_T10) * (z) + NXC_ERF_T9) * (z) + NXC_ERF_T8) * (z) + NXC_ERF_T7) * (z) + NXC_ERF_T6) * (z) + NXC_ERF_T5) * (z) + NXC_ERF_T4) * (z) + NXC_ERF_T3) * (z) + NXC_ERF_T2) /* erf, to x^37 */
#define NXD_ATAN_POLY(z) (((((((((NXC_INV21 * (z) - NXC_INV19) * (z) + NXC_INV17) * (z) - NXC_INV15) * (z) + NXC_INV13) * (z) - NXC_INV11) * (z) + NXC_INV9) * (z) - NXC_INV7) * (z) + NXC_INV5) * (z) - NXC_THIRD_HI) /* atan, to u^21 */
#define NXD_SIN_POLY(z) (((((((NXC_FI17 * (z) - NXC_FI15) * (z) + NXC_FI13) * (z) - NXC_FI11) * (z) + NXC_FI9) * (z) - NXC_FI7) * (z) + NXC_FI5) * (z) - NXC_FI3) /* sin, to r^17 */
#define NXD_COS_POLY(z) (((((((-NXC_FI18 * (z) + NXC_FI16) * (z) - NXC_FI14) * (z) + NXC_FI12) * (z) - NXC_FI10) * (z) + NXC_FI8) * (z) - NXC_FI6) * (z) + NXC_FI4) /* cos, to r^18 */

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
/* x * 2^n for n in [-2200, 2200] */
NX_T_LDEXP(nx_ldexpd, 1023, -1022, -1074, 600)
/* --- f64 on the bits: correct on a device that flushes f64 denormals ---
 * The same design as the f32 side (shaderDenormPreserveFloat64 = false
 * reads denormal operands as zero and writes denormal results as zero):
 * classification, comparisons, max/min, sign, floor/ceil on the bits; a
 * denormal operand is unpacked with integer operations (nx_unpackd); a
 * result that may be denormal is built from its bits (nx_ldexp_ddd).  add
 * and mul keep the driver's result unless an exponent field is 0; divide
 * and sqrt are always the exact (correctly rounded) path.  No int64: the
 * 64-bit words are uint pairs. */
struct nxunpd { double m; int e; }; /* |x| = m 2^e, m in [1, 2) */

NXFN uint nx_expfieldd(double x) { return (unpackDouble2x32(x).y >> 20) & 0x7ffu; }
NXFN bool nx_iszerod(double x) {
  uvec2 w = unpackDouble2x32(x);
  return ((w.y & 0x7fffffffu) | w.x) == 0u;
}
NXFN double nx_negd(double x) {
  uvec2 w = unpackDouble2x32(x);
  return packDouble2x32(uvec2(w.x, w.y ^ 0x80000000u));
}
/* |x| of a finite nonzero x (denormals included) -> m in [1, 2), e */
NXFN nxunpd nx_unpackd(double x) {
  uvec2 w = unpackDouble2x32(x);
  uint h = w.y & 0x7fffffffu;
  nxunpd r;
  if (h >= 0x00100000u) {
    r.e = NX_I(h >> 20) - 1023;
    r.m = packDouble2x32(uvec2(w.x, (h & 0x000fffffu) | 0x3ff00000u));
    return r;
  }
  int msb = (h != 0u) ? findMSB(h) + 32 : findMSB(w.x); /* the leading bit, 0..51 */
  int sh = 52 - msb;                                     /* 1..52 */
  uint mh = (sh >= 32) ? (w.x << NX_U(sh - 32))
                       : ((h << NX_U(sh)) | (w.x >> NX_U(32 - sh)));
  uint ml = (sh >= 32) ? 0u : (w.x << NX_U(sh));
  r.m = packDouble2x32(uvec2(ml, (mh & 0x000fffffu) | 0x3ff00000u));
  r.e = msb - 1074;
  return r;
}
/* exponent of a finite nonzero x (subnormals included), from the bits */
NXFN int nx_ilogbd(double x) { return nx_unpackd(x).e; }

/* --- double-double arithmetic: the same template (NX_PAIR_ARITH) --- */
NX_PAIR_ARITH(double, nxdd, nx_dd, nx_two_sum, nx_fast_two_sum, nx_split, nx_two_prod,
              nx_dd_add, nx_dd_mul, nx_dd_div, NXD(0x41A00000u, 0x02000000u)) /* 2^27 + 1 */

/* (hi + lo) 2^k rounded once, for hi = RN(hi + lo) normal (or 0, inf, NaN):
 * a normal result by adding to the exponent bits, a denormal one rounded on
 * the denormal grid (the tie broken by the sign of lo) and built from the
 * bits.  The f64 twin of nx_ldexp_fff. */
NXFN double nx_ldexp_ddd(double hi, double lo, int k) {
  uvec2 w = unpackDouble2x32(hi);
  uint ha = w.y & 0x7fffffffu;
  uint s = w.y & 0x80000000u;
  if ((ha | w.x) == 0u || ha >= 0x7ff00000u) return hi;
  int f = NX_I(ha >> 20) + k;
  if (f >= 2047) return packDouble2x32(uvec2(0u, s | 0x7ff00000u));
  if (f >= 1) return packDouble2x32(uvec2(w.x, w.y + (NX_U(k) << 20)));
  if (f + 1074 < 1) return packDouble2x32(uvec2(0u, s));
  double u = packDouble2x32(uvec2(w.x, ha + (NX_U(k + 1074) << 20))); /* |hi| 2^(k+1074) < 2^52 */
  NX_PRECISE double t = (u + nx_pow2d(52)) - nx_pow2d(52);              /* rint(u) */
  NX_PRECISE double d = u - t;
  uvec2 lw = unpackDouble2x32(lo);
  if ((d == 0.5 || d == -0.5) && ((lw.y & 0x7fffffffu) | lw.x) != 0u)
    t = ((lw.y & 0x80000000u) == s) ? u + 0.5 : u - 0.5;
  double th = floor(t * nx_pow2d(-32)); /* t <= 2^52: its two words */
  uint tl = NX_U(t - th * nx_pow2d(32));
  return packDouble2x32(uvec2(tl, s | NX_U(th)));
}
/* x 2^n exactly (rounded once if it leaves the range), any finite x,
 * denormals in and out included */
NXFN double nx_scalbd(double x, int n) {
  uvec2 w = unpackDouble2x32(x);
  if (nx_iszerod(x) || (w.y & 0x7fffffffu) >= 0x7ff00000u) return x;
  nxunpd p = nx_unpackd(x);
  uvec2 r = unpackDouble2x32(nx_ldexp_ddd(p.m, 0.0, p.e + n));
  return packDouble2x32(uvec2(r.x, r.y | (w.y & 0x80000000u)));
}

/* x + y, x - y, x * y: IEEE on every device.  The driver's result stands
 * unless an exponent field (an operand's or the result's) is 0.  Then: a
 * sum with an operand >= 2^-960 was right (a denormal is below its half
 * ULP, and a denormal sum of normals is exact, Sterbenz); otherwise both
 * operands are scaled by 2^128 (exact), added (exact if the result is
 * denormal) and scaled back from the bits.  A product: the mantissas'
 * exact product (Dekker) rounded once by nx_ldexp_ddd. */
NXFN double nx_addd_rare(double a, double b, double s) {
  if (nx_expfieldd(a) >= 63u || nx_expfieldd(b) >= 63u) return s;
  return nx_scalbd(nx_scalbd(a, 128) + nx_scalbd(b, 128), -128);
}
NXFN double nxd_add(double a, double b) {
  double s = a + b;
  if (nx_expfieldd(a) != 0u && nx_expfieldd(b) != 0u && nx_expfieldd(s) != 0u) return s;
  return nx_addd_rare(a, b, s);
}
NXFN double nxd_sub(double a, double b) { return nxd_add(a, nx_negd(b)); }
NXFN double nx_muld_rare(double a, double b) {
  uvec2 wa = unpackDouble2x32(a);
  uvec2 wb = unpackDouble2x32(b);
  uint s = (wa.y ^ wb.y) & 0x80000000u;
  if (nx_isnand(a) || nx_isnand(b)) return NX_NAN_D;
  bool za = nx_iszerod(a);
  bool zb = nx_iszerod(b);
  if (nx_isinfd(a) || nx_isinfd(b))
    return (za || zb) ? NX_NAN_D : packDouble2x32(uvec2(0u, s | 0x7ff00000u));
  if (za || zb) return packDouble2x32(uvec2(0u, s));
  nxunpd pa = nx_unpackd(a);
  nxunpd pb = nx_unpackd(b);
  nxdd p = nx_two_prod(pa.m, pb.m); /* exact, in [1, 4) */
  uvec2 r = unpackDouble2x32(nx_ldexp_ddd(p.hi, p.lo, pa.e + pb.e));
  return packDouble2x32(uvec2(r.x, r.y | s));
}
NXFN double nxd_mul(double a, double b) {
  double p = a * b;
  if (nx_expfieldd(a) != 0u && nx_expfieldd(b) != 0u && nx_expfieldd(p) != 0u) return p;
  return nx_muld_rare(a, b);
}

/* x / y correctly rounded (Vulkan lets a driver's f64 division be 2.5 ULP
 * off, and a flushing one drops denormals).  The mantissas A in [B, 2B),
 * B in [1, 2): t = floor(A/B) on the grid u = 2^-52, found from the
 * driver's estimate (one Newton step, then +-u steps) with the residual
 * A - tB formed exactly (Dekker) as a pair; the round bit and the tie from
 * comparing it with uB/2, one rounding by nx_ldexp_ddd (so denormal
 * results are rounded once).  All of A, t, B, tB, uB are multiples of
 * 2^-104, so the comparisons of a two_sum pair with a double are exact
 * (lexicographic on hi, then the sign of lo). */
NXFN nxdd nx_div_resid(double a, double b, double t) { /* a - t b as a pair */
  nxdd p = nx_two_prod(t, b);
  NX_PRECISE double h = a - p.hi; /* exact (Sterbenz) */
  return nx_two_sum(h, -p.lo);
}
NXFN int nx_cmp_pair(nxdd r, double c) { /* sign of r.hi + r.lo - c, r a two_sum pair */
  if (r.hi > c) return 1;
  if (r.hi < c) return -1;
  return (r.lo > 0.0) ? 1 : ((r.lo < 0.0) ? -1 : 0);
}
NXFN double nx_div_step(double a, double b, double t) { /* t one u closer to floor_u(a/b) */
  double u = nx_pow2d(-52);
  nxdd r = nx_div_resid(a, b, t);
  if (r.hi < 0.0) return t - u;
  if (nx_cmp_pair(r, u * b) >= 0) return t + u;
  return t;
}
NXFN double nxd_div(double a, double b) {
  uvec2 wa = unpackDouble2x32(a);
  uvec2 wb = unpackDouble2x32(b);
  uint s = (wa.y ^ wb.y) & 0x80000000u;
  if (nx_isnand(a) || nx_isnand(b)) return NX_NAN_D;
  bool za = nx_iszerod(a);
  bool zb = nx_iszerod(b);
  bool ia = nx_isinfd(a);
  bool ib = nx_isinfd(b);
  if ((za && zb) || (ia && ib)) return NX_NAN_D;
  if (ia || zb) return packDouble2x32(uvec2(0u, s | 0x7ff00000u));
  if (za || ib) return packDouble2x32(uvec2(0u, s));
  nxunpd pa = nx_unpackd(a);
  nxunpd pb = nx_unpackd(b);
  double A = pa.m;
  double B = pb.m;
  int k = pa.e - pb.e;
  if (A < B) { A = A * 2.0; k -= 1; }
  double u = nx_pow2d(-52);
  double t = A / B; /* in [1, 2], a few ULP */
  nxdd r0 = nx_div_resid(A, B, t);
  t = t + r0.hi / B; /* Newton: within an ULP */
  t = (t < 1.0) ? 1.0 : ((t > 2.0 - u) ? 2.0 - u : t);
  t = nx_div_step(A, B, t);
  t = nx_div_step(A, B, t);
  t = nx_div_step(A, B, t);
  nxdd r = nx_div_resid(A, B, t); /* 0 <= r < uB */
  int c = nx_cmp_pair(r, 0.5 * u * B);
  double hi = t;
  double lo = (r.hi != 0.0) ? 0.25 * u : 0.0; /* only the sign of lo is used */
  if (c > 0) { hi = t + u; lo = -0.25 * u; }
  else if (c == 0) { /* a tie at 53 bits: to even */
    bool odd = (unpackDouble2x32(t).x & 1u) != 0u;
    hi = odd ? t + u : t;
    lo = odd ? -0.5 * u : 0.5 * u;
  }
  uvec2 q = unpackDouble2x32(nx_ldexp_ddd(hi, lo, k));
  return packDouble2x32(uvec2(q.x, q.y | s));
}

/* sqrt(x) correctly rounded: x = X 2^(2e), X in [1, 4); t = floor(sqrt X) on
 * the grid u = 2^-52 from the driver's estimate, the residual X - t^2 exact
 * as a pair; rounded up when it exceeds t u (no ties: every quantity is a
 * multiple of 2^-104, t u + u^2/4 is not).  The result is normal. */
NXFN double nx_sqrt_step(double x, double t) {
  double u = nx_pow2d(-52);
  nxdd r = nx_div_resid(x, t, t);
  if (r.hi < 0.0) return t - u;
  if (nx_cmp_pair(r, 2.0 * u * t) > 0) return t + u;
  return t;
}
NXFN double nxd_sqrt(double x) {
  uvec2 w = unpackDouble2x32(x);
  if (nx_iszerod(x)) return x;
  if (nx_isnand(x) || (w.y & 0x80000000u) != 0u) return NX_NAN_D;
  if (nx_isinfd(x)) return x;
  nxunpd p = nx_unpackd(x);
  double X = p.m;
  int e = p.e;
  if ((e & 1) != 0) { X = X * 2.0; e -= 1; }
  double u = nx_pow2d(-52);
  double t = sqrt(X); /* in [1, 2], a few ULP */
  nxdd r0 = nx_div_resid(X, t, t);
  t = t + r0.hi / (2.0 * t);
  t = (t < 1.0) ? 1.0 : ((t > 2.0 - u) ? 2.0 - u : t);
  t = nx_sqrt_step(X, t);
  t = nx_sqrt_step(X, t);
  t = nx_sqrt_step(X, t);
  nxdd r = nx_div_resid(X, t, t);
  if (nx_cmp_pair(r, u * t) > 0) t = t + u;
  uvec2 q = unpackDouble2x32(t);
  return packDouble2x32(uvec2(q.x, q.y + (NX_U(e / 2) << 20)));
}

/* comparisons, floor, ceil on the bits */
NXFN bool nxd_eq(double a, double b) {
  if (nx_isnand(a) || nx_isnand(b)) return false;
  uvec2 wa = unpackDouble2x32(a);
  uvec2 wb = unpackDouble2x32(b);
  return (nx_iszerod(a) && nx_iszerod(b)) || (wa.x == wb.x && wa.y == wb.y);
}
NXFN bool nxd_lt(double a, double b) {
  if (nx_isnand(a) || nx_isnand(b)) return false;
  if (nx_iszerod(a) && nx_iszerod(b)) return false;
  uvec2 wa = unpackDouble2x32(a);
  uvec2 wb = unpackDouble2x32(b);
  bool sa = (wa.y & 0x80000000u) != 0u;
  bool sb = (wb.y & 0x80000000u) != 0u;
  if (sa != sb) return sa;
  uint ha = wa.y & 0x7fffffffu;
  uint hb = wb.y & 0x7fffffffu;
  bool less = ha < hb || (ha == hb && wa.x < wb.x);
  bool more = ha > hb || (ha == hb && wa.x > wb.x);
  return sa ? more : less;
}
NXFN bool nxd_le(double a, double b) { return nxd_lt(a, b) || nxd_eq(a, b); }
NXFN double nxd_floor(double x) {
  uvec2 w = unpackDouble2x32(x);
  if (((w.y >> 20) & 0x7ffu) != 0u) return floor(x);
  if (nx_iszerod(x) || (w.y & 0x80000000u) == 0u) return packDouble2x32(uvec2(0u, w.y & 0x80000000u));
  return -1.0;
}
NXFN double nxd_ceil(double x) {
  uvec2 w = unpackDouble2x32(x);
  if (((w.y >> 20) & 0x7ffu) != 0u) return ceil(x);
  if (nx_iszerod(x) || (w.y & 0x80000000u) != 0u) return packDouble2x32(uvec2(0u, w.y & 0x80000000u));
  return 1.0;
}

/* exp(xh + xl) = 2^k (1 + u), u = expm1(r) to r^14 (|r| <= 0.3466,
 * truncation < 2^-62).  Valid for |xh| <= 750, |xl| <= 2^-40. */
NX_T_EXP_CORE(nx_exp_core, NXD_EXPM1_POLY)
/* 2^k (1 + u) rounded once (twice for subnormal results) */
NXFN double nx_exp_fin(nxexpd e) {
  nxdd v = nx_two_sum(1.0, e.hi);
  return nx_ldexpd(v.hi + (v.lo + e.lo), e.k);
}
NX_T_EXP_PAIR(nx_exp_dd)
/* expm1(x) as double-double for x in [-40, 45] */
NX_T_EXPM1_PAIR(nx_expm1_dd)

/* log(xh + xl) as double-double; xh > 0 finite, |xl| <= ulp(xh).  x = 2^e m,
 * m in [sqrt(1/2), sqrt(2)), then nx_log_md, series to s^25: about 2^-66
 * relative, enough for pow.  (The f32 side unpacks a denormal from its
 * bits; here a plain scaling, as the f64 transcendentals do.) */
NX_T_LOG_M(nx_log_md, NXD_LOG_POLY)
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
  return nx_log_md(m, ml, e);
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

NX_T_EXPM1(nxd_expm1, 40.0, 710.0, -40.0, nx_pow2d(-54))

NX_T_LOG1P(nxd_log1p, nx_pow2d(-54))

NX_T_TANH(nxd_tanh, nx_pow2d(-27), 22.0)

/* sigmoid's tail below -40: e^x (1 - e^x), e^x < 2^-57 */
NXFN double nx_sigmoid_taild(double x) {
  if (x < -750.0) return 0.0;
  return nx_exp_fin(nx_exp_core(x, 0.0));
}
NX_T_SIGMOID(nxd_sigmoid, 40.0, -40.0, nx_sigmoid_taild)

/* erfcx(ax) = e^(ax^2) erfc(ax) for ax in [1, 6): the fits */
NXFN double nx_erfcx_fitd(double ax) {
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
  return p;
}
NX_T_ERF_SMALL(nx_erf_smalld, NXD_ERF_POLY)
NX_T_ERF_FROM_ERFCX(nx_erf_erfcxd)
/* erf(x): |x| < 1 to x^37; 1 <= |x| < 6 from erfcx fitted on [1,2), [2,3),
 * [3,4.5), [4.5,6) (more pieces and degrees than f32 for 53 bits); beyond
 * +-1. */
NXFN double nxd_erf(double x) {
  if (nx_isnand(x)) return x;
  double ax = nx_absd(x);
  if (ax == 0.0) return x;
  if (ax < nx_pow2d(-500)) { /* c0 x, scaled so the product's rounding is normal */
    double xs = x * nx_pow2d(600);
    nxdd p = nx_two_prod(xs, NXC_ERF_C0_HI);
    return (p.hi + (p.lo + xs * NXC_ERF_C0_LO)) * nx_pow2d(-600);
  }
  if (ax < 1.0) return nx_erf_smalld(x, ax);
  if (ax < 6.0) return nx_erf_erfcxd(x, ax, nx_erfcx_fitd(ax));
  return nx_copysignd(1.0, x);
}

/* pow(x, y), C99 Annex F special cases; otherwise exp(y log|x|) with log|x|
 * in double-double (~2^-66) and y*log as an exact product plus the low part,
 * so large results keep their accuracy. */
NX_T_POW_ABS(nx_pow_absd, 710.0, -746.0)
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
  double r = nx_pow_absd(ax, y); /* |y| < 2^63 where it reaches exp */
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

/* sin, cos of rh + rl, |rh| <= pi/4: Taylor to r^17, r^18 */
NX_T_SIN_KERNEL(nx_sin_kernel, NXD_SIN_POLY)
NX_T_COS_KERNEL(nx_cos_kernel, NXD_COS_POLY)

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
NX_T_ATAN2_CORE(nx_atan2_cored, NXD_ATAN_POLY)
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
  NX_PRECISE double th = ns / ds; /* precise: see nxf_atan2 */
  NX_PRECISE double tl = 0.0; /* th + tl = num / den to ~2^-104; for th < 2^-900 th alone is enough */
  if (th >= nx_pow2d(-900)) {
    nxdd pt = nx_two_prod(th, ds);
    tl = ((ns - pt.hi) - pt.lo) / ds;
  }
  return nx_atan2_cored(th, tl, sw, xneg, y);
}

NX_T_RSQRT_NEWTON(nx_rsqrt_newtond)
/* 1/sqrt(x): x scaled into [2^-900, 2^900], nx_rsqrt_newtond; rsqrt(+-0) =
 * +-inf, rsqrt(+inf) = +0, x < 0 -> NaN. */
NXFN double nxd_rsqrt(double x) {
  if (nx_isnand(x)) return x;
  if (x == 0.0) return nx_copysignd(NX_INF_D, x);
  if (x < 0.0) return NX_NAN_D;
  if (nx_isinfd(x)) return 0.0;
  double sc = 1.0;
  if (x > nx_pow2d(900)) { x = x * nx_pow2d(-200); sc = nx_pow2d(-100); }
  else if (x < nx_pow2d(-900)) { x = x * nx_pow2d(200); sc = nx_pow2d(100); }
  return nx_rsqrt_newtond(x) * sc;
}

/* round half away from zero, exact */
NX_T_ROUND(nxd_round, nx_pow2d(52))

/* sign: 1, -1, or x itself for +-0 and NaN */
NXFN double nxd_sign(double x) {
  if (nx_isnand(x) || nx_iszerod(x)) return x;
  return nx_signbitd(x) ? -1.0 : 1.0;
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
  int sc = (nx_expfieldd(ax) >= 1983u) ? -128 : (nx_expfieldd(s) < 123u) ? 600 : 0;
  ax = nx_scalbd(ax, sc); /* exact, from the bits: s may be denormal */
  s = nx_scalbd(s, sc);
  double q = floor(ax / s);
  nxdd p = nx_two_prod(q, s);
  NX_PRECISE double h = ax - p.hi; /* exact (Sterbenz) */
  nxdd r = nx_two_sum(h, -p.lo);
  r = nx_rem_fix(r, s);
  r = nx_rem_fix(r, s);
  r = nx_rem_fix(r, s);
  return nx_scalbd(r.hi, -sc);
}
/* fmod(x, y): exact, sign of x.  Long division by y 2^d, 52 bits a step
 * (at most 41 steps). */
NXFN double nxd_rem(double x, double y) {
  if (nx_isnand(x) || nx_isnand(y)) return x + y;
  if (nx_isinfd(x) || nx_iszerod(y)) return NX_NAN_D;
  double ax = nx_absd(x);
  double ay = nx_absd(y);
  if (nx_isinfd(y) || nxd_lt(ax, ay) || nx_iszerod(x)) return x;
  int ey = nx_ilogbd(ay);
  for (int it = 0; it < 48; it++) {
    if (nxd_lt(ax, ay)) break;
    int d = nx_ilogbd(ax) - ey - 52;
    ax = nx_rem_step(ax, (d > 0) ? nx_scalbd(ay, d) : ay);
  }
  return nx_copysignd(ax, x);
}

/* NaN-propagating max/min; max(-0, +0) = +0, min(-0, +0) = -0 */
NXFN double nxd_max(double a, double b) {
  if (nx_isnand(a) || nx_isnand(b)) return NX_NAN_D;
  if (nxd_eq(a, b)) return nx_signbitd(a) ? b : a;
  return nxd_lt(b, a) ? a : b;
}
NXFN double nxd_min(double a, double b) {
  if (nx_isnand(a) || nx_isnand(b)) return NX_NAN_D;
  if (nxd_eq(a, b)) return nx_signbitd(a) ? a : b;
  return nxd_lt(a, b) ? a : b;
}


/* ---- tan, the inverse and hyperbolic functions, cbrt (f64) ---- */
NX_T_PAIR_SQRT(nx_dd_sqrt)
NX_T_TAN_CORE(nx_tan_cored, nx_sin_kernel, nx_cos_kernel)
NXFN double nxd_tan(double x) {
  if (nx_isnand(x)) return x;
  if (nx_isinfd(x)) return NX_NAN_D;
  double ax = nx_absd(x);
  if (ax < nx_pow2d(-27)) return x;
  nxredd r = nx_rem_pio2(ax);
  double v = nx_tan_cored(r.hi, r.lo, r.q);
  return nx_signbitd(x) ? -v : v;
}
NXFN double nxd_atan(double x) { return nxd_atan2(x, 1.0); }
NX_T_ASINCOS(nx_asincosd, nx_dd_sqrt, nx_atan2_cored)
NXFN double nxd_asin(double x) {
  if (nx_isnand(x)) return x;
  double ax = nx_absd(x);
  if (ax > 1.0) return NX_NAN_D;
  if (ax < nx_pow2d(-27)) return x;
  return nx_asincosd(x, ax, false);
}
NXFN double nxd_acos(double x) {
  if (nx_isnand(x)) return x;
  double ax = nx_absd(x);
  if (ax > 1.0) return NX_NAN_D;
  return nx_asincosd(x, ax, true);
}
NX_T_HALF_EXP(nx_half_expd, 711.0)
NX_T_SINH(nxd_sinh, nx_pow2d(-28), 22.0, nx_half_expd)
NX_T_COSH(nxd_cosh, nx_pow2d(-28), 22.0, nx_half_expd)
NX_T_LOG2X(nx_log2xd)
NX_T_ASINH(nxd_asinh, nx_pow2d(-28), nx_pow2d(28), nx_dd_sqrt, nx_log2xd)
NX_T_ACOSH(nxd_acosh, nx_pow2d(28), nx_dd_sqrt, nx_log2xd)
NX_T_ATANH(nxd_atanh, nx_pow2d(-28))
NX_T_CBRT_CORE(nx_cbrt_cored, 3)
NXFN double nxd_cbrt(double x) {
  if (nx_iszerod(x) || nx_isnand(x) || nx_isinfd(x)) return x;
  nxunpd u = nx_unpackd(x);
  int q = (u.e + 1200) / 3 - 400;
  uvec2 w = unpackDouble2x32(nx_cbrt_cored(u.m, u.e - 3 * q));
  return packDouble2x32(uvec2(w.x, (w.y + (NX_U(q) << 20)) | (unpackDouble2x32(x).y & 0x80000000u)));
}

/* erfc, erf_inv (f64) */
#define NXC_SQRTPI_2_HI NXD(0x3FEC5BF8u, 0x91B4EF6Bu) /* sqrt(pi)/2 */
#define NXC_SQRTPI_2_LO NXD(0xBC8618F1u, 0x3EB7CA89u)
#define NXC_ERFCX_C0_HI NXD(0x3FE20DD7u, 0x50429B6Cu) /* the fit's c0, ~1/sqrt(pi) */
#define NXC_ERFCX_C0_LO NXD(0x3C529A26u, 0x9F604209u)
/* x erfcx(x) = c0 + t P(t), t = 1/x^2 in [1/27.3^2, 1/36]: Chebyshev fit
 * (mpmath), rel err 2^-59.1, 2^-57.9 as evaluated */
#define NXD_ERFCX_ASYM_POLY(t) (((((((((NXD(0x40F515D3u, 0x6D4D9020u) * (t) + NXD(0xC0D79651u, 0x264B7CCDu)) * (t) + NXD(0x40AF3F0Bu, 0x388259ACu)) * (t) + NXD(0xC0824763u, 0x5FFFC1B8u)) * (t) + NXD(0x4056DE0Eu, 0x61A5FE1Fu)) * (t) + NXD(0xC030A8D2u, 0x48AF6BF4u)) * (t) + NXD(0x400D9EAEu, 0xC283C689u)) * (t) + NXD(0xBFF0ECF9u, 0xCC5EF2F2u)) * (t) + NXD(0x3FDB14C2u, 0xF83B42F9u)) * (t) + NXD(0xBFD20DD7u, 0x50428CCFu))
NX_T_ERFCX_ASYM(nx_erfcx_fard, NXD_ERFCX_ASYM_POLY, NXC_ERFCX_C0_HI, NXC_ERFCX_C0_LO)
/* erfcx below 6 from erf's fits (2^-53.1 to 2^-54.9 relative) */
NXFN nxdd nx_erfcx_paird(double ax) {
  if (ax < 6.0) return nx_dd(nx_erfcx_fitd(ax), 0.0);
  return nx_erfcx_fard(ax);
}
NX_T_ERFC_CORE(nx_erfc_cored, nx_erf_smalld, nx_erfcx_paird)
/* erfc(x): 0 from 27.3 (erfc(27.2276) = 2^-1075), 2 below -6 */
NX_T_ERFC(nxd_erfc, nx_erfc_cored, 27.3, 6.0)
NXFN double nx_erfinv_tinyd(double y) {
  double ys = nx_scalbd(y, 600);
  nxdd p = nx_two_prod(ys, NXC_SQRTPI_2_HI);
  nxdd q = nx_fast_two_sum(p.hi, p.lo + ys * NXC_SQRTPI_2_LO);
  return nx_ldexp_ddd(q.hi, q.lo, -600);
}
NX_T_ERFINV_CORE(nx_erfinv_cored, nx_erf_smalld, nx_erfc_cored, 4)
NX_T_ERFINV(nxd_erf_inv, nx_erfinv_cored, nx_pow2d(-28), nx_erfinv_tinyd)

#endif /* NXMATH_NO_F64 */
#endif /* NXMATH_GLSL */
