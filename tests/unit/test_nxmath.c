/* test_nxmath.c - accuracy of shaders/lib/nxmath.glsl, compiled as C.
 *
 * The shader math library is written in the common subset of GLSL and C; this
 * test includes the very same file through glsl_compat.h and checks, for the
 * f64 (nxd_*) and f32 (nxf_*) families:
 *   (a) the edge values of DESIGN.md (+-0, +-inf, NaN, smallest denormal,
 *       FLT_MIN/DBL_MIN, FLT_MAX/DBL_MAX, 1+-eps, near the overflow of exp)
 *       and the C99 Annex F pow table, as explicit assertions;
 *   (b) ~200k random points per function over wide exponent ranges and the
 *       normal ranges, against long double libm rounded to the target type.
 * The ULP error is the distance, in representable numbers, to the long
 * double reference rounded to the target type (0 = correctly rounded); the
 * descriptions also give the error in fractional ULPs of the exact value.
 * Build: cc -std=c11 -O2 -ffp-contract=off -Ishaders/lib -Itests/unit
 *        tests/unit/test_nxmath.c -lm
 * Run: test_nxmath [N [SEED]]: N times the ~200k random points per function
 * (default 1, about a second), SEED for the generator. */
#include <float.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glsl_compat.h"
#include "nxmath.glsl"
#include "tap.h"
#define BITS_SEED 0x9e3779b97f4a7c15ull
#include "bits.h"

/* ---------------------------------------------------------------- limits */
/* f64: every function <= 2 ULP over the whole double range, as DESIGN.md asks
 * of our own f64 code (measured: <= 1 ULP everywhere, see the NOTES at the top
 * of nxmath.glsl).
 * f32: <= 2 ULP as well, well inside the few ULP the Vulkan spec grants the
 * builtins these functions are otherwise built from.  The f32 functions do not
 * call the driver's exp/log: they carry float-float kernels of their own, so
 * the bound is the algorithm's and holds on any device (measured: <= 1 ULP in
 * this build, bit-identical on lavapipe; on devices that flush f32
 * subnormals, inputs and results below 2^-126 are flushed). */
#define LIM_D 2.0
#define LIM_F 2.0

/* ------------------------------------------------------------------ rng */
static double unif(double a, double b) { /* [a, b) */
  return a + (b - a) * ((double)(rnd64() >> 11) * 0x1p-53);
}
/* |x| = 2^e * (1 + random mantissa), e uniform in [emin, emax], random sign
 * if sgn; exponents below -1022 give denormals */
static double logu(int emin, int emax, int sgn) {
  int e = emin + (int)(rnd64() % (uint64_t)(emax - emin + 1));
  double m = 1.0 + (double)(rnd64() >> 12) * 0x1p-52;
  double v = ldexp(m, e);
  if (sgn && (rnd64() & 1)) v = -v;
  return v;
}
static float loguf(int emin, int emax, int sgn) {
  int e = emin + (int)(rnd64() % (uint64_t)(emax - emin + 1));
  float m = 1.0f + (float)(rnd64() >> 41) * 0x1p-23f;
  float v = ldexpf(m, e);
  if (sgn && (rnd64() & 1)) v = -v;
  return v;
}
/* any finite double / float from random bits */
static double rbits_d(void) {
  for (;;) {
    double d = bits2d(rnd64());
    if (isfinite(d)) return d;
  }
}
static float rbits_f(void) {
  for (;;) {
    float f = bits2f((uint32_t)(rnd64() >> 32));
    if (isfinite(f)) return f;
  }
}

/* ------------------------------------------------------------------ ulp */
static int64_t ord_d(double x) {
  int64_t i;
  memcpy(&i, &x, 8);
  return i < 0 ? INT64_MIN - i : i;
}
static int32_t ord_f(float x) {
  int32_t i;
  memcpy(&i, &x, 4);
  return i < 0 ? INT32_MIN - i : i;
}
#define BIG 1e30
/* distance in ULPs from got to ref rounded to double; NaN must match NaN,
 * and a zero must have the reference zero's sign */
static double ulp_d(double got, long double ref) {
  double r = (double)ref;
  if (isnan(r) || isnan(got)) return (isnan(r) && isnan(got)) ? 0.0 : BIG;
  if (r == 0.0 && got == 0.0) return signbit(r) == signbit(got) ? 0.0 : BIG;
  int64_t a = ord_d(got), b = ord_d(r);
  if ((a < 0) != (b < 0)) return fabs((double)a - (double)b); /* no overflow */
  return fabs((double)(a - b));
}
static double ulp_f(float got, long double ref) {
  float r = (float)ref;
  if (isnan(r) || isnan(got)) return (isnan(r) && isnan(got)) ? 0.0 : BIG;
  if (r == 0.0f && got == 0.0f) return signbit(r) == signbit(got) ? 0.0 : BIG;
  return fabs((double)ord_f(got) - (double)ord_f(r));
}
/* error in fractional ULPs of the exact (long double) value */
static double fulp_d(double got, long double ref) {
  if (!isfinite(got) || !isfinite((double)ref) || isnan(ref)) return 0.0;
  double r = (double)ref;
  int e = (r == 0.0) ? -1074 : ilogb(r) - 52;
  if (e < -1074) e = -1074;
  return (double)(fabsl((long double)got - ref) / ldexpl(1.0L, e));
}
static double fulp_f(float got, long double ref) {
  if (!isfinite(got) || !isfinite((float)ref) || isnan(ref)) return 0.0;
  float r = (float)ref;
  int e = (r == 0.0f) ? -149 : ilogbf(r) - 23;
  if (e < -149) e = -149;
  return (double)(fabsl((long double)got - ref) / ldexpl(1.0L, e));
}

/* ------------------------------------------------------------ statistics */
typedef struct {
  long n;
  double worst, worstf; /* max ULP (vs rounded ref), max fractional ULP */
  double wfu;           /* fractional ULP at the worst point */
  double wx, wy;        /* worst input */
  double wgot, wref;
} stat_t;
static void st_add(stat_t *s, double u, double fu, double x, double y, double got, double ref) {
  s->n++;
  if (s->n == 1 || u > s->worst || (u == s->worst && fu > s->wfu)) {
    s->worst = u;
    s->wfu = fu;
    s->wx = x;
    s->wy = y;
    s->wgot = got;
    s->wref = ref;
  }
  if (fu > s->worstf) s->worstf = fu;
}
static void st_report(const stat_t *s, const char *name, double lim, int binary) {
  if (binary)
    CHECK(s->worst <= lim,
          "%s: %ld points, max %.0f ulp (%.3f ulp of exact) at (%a, %a): got %a want %a; limit %.0f",
          name, s->n, s->worst, s->worstf, s->wx, s->wy, s->wgot, s->wref, lim);
  else
    CHECK(s->worst <= lim,
          "%s: %ld points, max %.0f ulp (%.3f ulp of exact) at %a (%.17g): got %a want %a; limit %.0f",
          name, s->n, s->worst, s->worstf, s->wx, s->wx, s->wgot, s->wref, lim);
}

/* ---------------------------------------------------------- references */
static long double ref_sigmoidl(long double x) {
  if (x >= 0) return 1.0L / (1.0L + expl(-x));
  long double e = expl(x);
  return e / (1.0L + e);
}
static long double ref_rsqrtl(long double x) { return 1.0L / sqrtl(x); }

typedef double (*fd1)(double);
typedef double (*fd2)(double, double);
typedef float (*ff1)(float);
typedef float (*ff2)(float, float);
typedef long double (*rl1)(long double);
typedef long double (*rl2)(long double, long double);

static void acc_d1(stat_t *s, fd1 f, rl1 r, double x) {
  double got = f(x);
  long double ref = r((long double)x);
  st_add(s, ulp_d(got, ref), fulp_d(got, ref), x, 0.0, got, (double)ref);
}
static void acc_d2(stat_t *s, fd2 f, rl2 r, double x, double y) {
  double got = f(x, y);
  long double ref = r((long double)x, (long double)y);
  st_add(s, ulp_d(got, ref), fulp_d(got, ref), x, y, got, (double)ref);
}
static void acc_f1(stat_t *s, ff1 f, rl1 r, float x) {
  float got = f(x);
  long double ref = r((long double)x);
  st_add(s, ulp_f(got, ref), fulp_f(got, ref), x, 0.0, got, (double)(float)ref);
}
static void acc_f2(stat_t *s, ff2 f, rl2 r, float x, float y) {
  float got = f(x, y);
  long double ref = r((long double)x, (long double)y);
  st_add(s, ulp_f(got, ref), fulp_f(got, ref), x, y, got, (double)(float)ref);
}

/* ---------------------------------------------------------- edge values */
static const double EDGE_D[] = {
  0.0, -0.0, INFINITY, -INFINITY, NAN, 0x1p-1074, -0x1p-1074, DBL_MIN, -DBL_MIN,
  DBL_MAX, -DBL_MAX, 1.0, -1.0, 1.0 + DBL_EPSILON, 1.0 - DBL_EPSILON / 2,
  -1.0 + DBL_EPSILON / 2, -1.0 - DBL_EPSILON, 0.5, -0.5, 2.0, -2.0, 0x1p-1022 * 3,
  709.782712893384, 709.7827128933840, 709.78271289338397, 709.78271289338408, 709.79,
  710.0, -708.3964185322641, -708.4, -744.44007192138126, -745.13321910194110,
  -745.1332191019412, -745.14, -746.0, 88.72283935546875, 88.7228, 89.0, -87.33654,
  -103.2789, -103.97, -104.0, 1e-300, -1e-300, 1e-10, -1e-10, 0x1p-27, 0x1p-54,
  0x1p-60, 3.0, -3.0, 0.75, 5.9, 6.0, 5.8, 22.0, 19.1, 40.0, -40.0, 37.5,
  1.5707963267948966, 3.141592653589793, 1e22, 1e300, 0x1p30, 0x1p30 - 1, 0x1p52, 0x1p53,
  6381956970095103.0 * 0x1p797, 5319372648111134.0 * 0x1p-8,
};
static const float EDGE_F[] = {
  0.0f, -0.0f, INFINITY, -INFINITY, NAN, 0x1p-149f, -0x1p-149f, FLT_MIN, -FLT_MIN,
  FLT_MAX, -FLT_MAX, 1.0f, -1.0f, 1.0f + FLT_EPSILON, 1.0f - FLT_EPSILON / 2,
  -1.0f + FLT_EPSILON / 2, -1.0f - FLT_EPSILON, 0.5f, -0.5f, 2.0f, -2.0f,
  88.72283935546875f, 88.7228f, 88.73f, 89.0f, -87.33654f, -87.34f, -103.2789f,
  -103.97f, -104.0f, -105.0f, 1e-30f, -1e-30f, 1e-5f, -1e-5f, 0x1p-12f, 0x1p-25f,
  3.0f, -3.0f, 3.9f, 4.0f, 0.75f, 9.0f, 9.01f, 10.0f, 17.3f, 20.0f, -20.0f, 1e10f,
  1.5707964f, 3.1415927f, 16777216.0f, 8388608.0f,
};
#define NEDGE_D (sizeof EDGE_D / sizeof EDGE_D[0])
#define NEDGE_F (sizeof EDGE_F / sizeof EDGE_F[0])

static void edges_d1(stat_t *s, fd1 f, rl1 r) {
  for (size_t i = 0; i < NEDGE_D; i++) {
    acc_d1(s, f, r, EDGE_D[i]);
    acc_d1(s, f, r, -EDGE_D[i]);
  }
}
static void edges_f1(stat_t *s, ff1 f, rl1 r) {
  for (size_t i = 0; i < NEDGE_F; i++) {
    acc_f1(s, f, r, EDGE_F[i]);
    acc_f1(s, f, r, -EDGE_F[i]);
  }
}
static void edges_d2(stat_t *s, fd2 f, rl2 r) {
  for (size_t i = 0; i < NEDGE_D; i++)
    for (size_t j = 0; j < NEDGE_D; j++) acc_d2(s, f, r, EDGE_D[i], EDGE_D[j]);
}
static void edges_f2(stat_t *s, ff2 f, rl2 r) {
  for (size_t i = 0; i < NEDGE_F; i++)
    for (size_t j = 0; j < NEDGE_F; j++) acc_f2(s, f, r, EDGE_F[i], EDGE_F[j]);
}

/* random points per function; `test_nxmath N` multiplies them by N */
static int NR = 200000;

/* ======================================================== f64 functions */
static void test_exp_d(void) {
  stat_t s = {0};
  edges_d1(&s, nxd_exp, expl);
  for (int i = 0; i < NR; i++) {
    int k = i % 4;
    double x = k == 0 ? unif(-746.0, 710.0) : k == 1 ? unif(-1.0, 1.0)
             : k == 2 ? logu(-60, 9, 1) : unif(-746.0, -700.0) + (i & 8 ? 1416.0 : 0.0);
    acc_d1(&s, nxd_exp, expl, x);
  }
  st_report(&s, "nxd_exp", LIM_D, 0);
}
static void test_log_d(void) {
  stat_t s = {0};
  edges_d1(&s, nxd_log, logl);
  for (int i = 0; i < NR; i++) {
    int k = i % 4;
    double x = k == 0 ? fabs(rbits_d()) : k == 1 ? 1.0 + logu(-53, -1, 1)
             : k == 2 ? unif(0.5, 2.0) : logu(-1074, -1023, 0);
    acc_d1(&s, nxd_log, logl, x);
  }
  st_report(&s, "nxd_log", LIM_D, 0);
}
static void test_expm1_d(void) {
  stat_t s = {0};
  edges_d1(&s, nxd_expm1, expm1l);
  for (int i = 0; i < NR; i++) {
    int k = i % 4;
    double x = k == 0 ? unif(-45.0, 710.0) : k == 1 ? logu(-70, 0, 1)
             : k == 2 ? unif(-2.0, 2.0) : unif(-45.0, 45.0);
    acc_d1(&s, nxd_expm1, expm1l, x);
  }
  st_report(&s, "nxd_expm1", LIM_D, 0);
}
static void test_log1p_d(void) {
  stat_t s = {0};
  edges_d1(&s, nxd_log1p, log1pl);
  for (int i = 0; i < NR; i++) {
    int k = i % 5;
    double x = k == 0 ? logu(-70, -1, 1) : k == 1 ? unif(-1.0, 1.0)
             : k == 2 ? logu(-1, 1023, 0) : k == 3 ? -1.0 + logu(-53, -1, 0) : logu(-1074, -1023, 1);
    acc_d1(&s, nxd_log1p, log1pl, x);
  }
  st_report(&s, "nxd_log1p", LIM_D, 0);
}
/* doubles next to multiples of pi/2: the hard cases of argument reduction */
static double near_pio2_multiple(void) {
  long double k = (long double)(rnd64() >> (34 + rnd64() % 30));
  double x = (double)(k * 1.5707963267948966192313216916397514L);
  uint64_t b = d2bits(x) + (rnd64() % 5) - 2;
  return bits2d(b);
}
static void test_sincos_d(void) {
  stat_t s = {0}, c = {0};
  edges_d1(&s, nxd_sin, sinl);
  edges_d1(&c, nxd_cos, cosl);
  /* known hard case (r ~ 2^-60.9) */
  acc_d1(&s, nxd_sin, sinl, 6381956970095103.0 * 0x1p797);
  acc_d1(&c, nxd_cos, cosl, 6381956970095103.0 * 0x1p797);
  for (int i = 0; i < NR; i++) {
    int k = i % 6;
    double x = k == 0 ? unif(-10.0, 10.0) : k == 1 ? logu(-30, 29, 1)
             : k == 2 ? logu(30, 1023, 1) : k == 3 ? near_pio2_multiple()
             : k == 4 ? rbits_d() : logu(-60, -20, 1);
    acc_d1(&s, nxd_sin, sinl, x);
    acc_d1(&c, nxd_cos, cosl, x);
  }
  st_report(&s, "nxd_sin", LIM_D, 0);
  st_report(&c, "nxd_cos", LIM_D, 0);
}
static void test_tanh_d(void) {
  stat_t s = {0};
  edges_d1(&s, nxd_tanh, tanhl);
  for (int i = 0; i < NR; i++) {
    int k = i % 3;
    double x = k == 0 ? logu(-60, 5, 1) : k == 1 ? unif(-25.0, 25.0) : unif(-1.0, 1.0);
    acc_d1(&s, nxd_tanh, tanhl, x);
  }
  st_report(&s, "nxd_tanh", LIM_D, 0);
}
static void test_sigmoid_d(void) {
  stat_t s = {0};
  edges_d1(&s, nxd_sigmoid, ref_sigmoidl);
  for (int i = 0; i < NR; i++) {
    int k = i % 4;
    double x = k == 0 ? unif(-800.0, 50.0) : k == 1 ? unif(-45.0, 45.0)
             : k == 2 ? logu(-60, 3, 1) : unif(-750.0, -700.0);
    acc_d1(&s, nxd_sigmoid, ref_sigmoidl, x);
  }
  st_report(&s, "nxd_sigmoid", LIM_D, 0);
}
static void test_erf_d(void) {
  stat_t s = {0};
  static const double bp[] = { 1.0, 2.0, 3.0, 4.5, 6.0 };
  edges_d1(&s, nxd_erf, erfl);
  for (size_t j = 0; j < 5; j++)
    for (int d = -8; d <= 8; d++) acc_d1(&s, nxd_erf, erfl, bits2d(d2bits(bp[j]) + (uint64_t)(int64_t)d));
  for (int i = 0; i < NR; i++) {
    int k = i % 3;
    double x = k == 0 ? unif(-7.0, 7.0) : k == 1 ? logu(-60, 2, 1) : logu(-1074, -1000, 1);
    acc_d1(&s, nxd_erf, erfl, x);
  }
  st_report(&s, "nxd_erf", LIM_D, 0);
}
static void test_atan2_d(void) {
  stat_t s = {0};
  edges_d2(&s, nxd_atan2, atan2l);
  for (int i = 0; i < NR; i++) {
    int k = i % 5;
    double y, x;
    if (k == 0) { y = logu(-1074, 1023, 1); x = logu(-1074, 1023, 1); }
    else if (k == 4) { y = logu(-1074, -900, 1); x = logu(-1074, -900, 1); }
    else if (k == 1) { x = logu(-20, 20, 1); y = x * unif(-2.0, 2.0); }
    else if (k == 2) { y = unif(-1.0, 1.0); x = unif(-1.0, 1.0); }
    else { y = rbits_d(); x = rbits_d(); }
    acc_d2(&s, nxd_atan2, atan2l, y, x);
  }
  st_report(&s, "nxd_atan2", LIM_D, 1);
}
static void test_pow_d(void) {
  stat_t s = {0};
  edges_d2(&s, nxd_pow, powl);
  for (int i = 0; i < NR; i++) {
    int k = i % 5;
    double x, y;
    if (k == 0) { /* any positive x, y so that |y log2 x| spans the range */
      x = logu(-1074, 1023, 0);
      double l2 = log2(x);
      y = unif(-1100.0, 1100.0) / (fabs(l2) < 1e-300 ? 1.0 : l2);
    } else if (k == 1) { /* x near 1, large y */
      x = 1.0 + logu(-53, -3, 1);
      y = unif(-1.0, 1.0) * 745.0 / fabs(log(x));
    } else if (k == 2) { /* negative x, integer y */
      x = -logu(-30, 30, 0);
      y = (double)(int64_t)unif(-1000.0 / (fabs(log2(-x)) + 1.0), 1000.0 / (fabs(log2(-x)) + 1.0));
    } else if (k == 3) {
      x = unif(0.0, 10.0); y = unif(-50.0, 50.0);
    } else { x = rbits_d(); y = rbits_d(); }
    acc_d2(&s, nxd_pow, powl, x, y);
  }
  st_report(&s, "nxd_pow", LIM_D, 1);
}
static void test_rsqrt_d(void) {
  stat_t s = {0};
  edges_d1(&s, nxd_rsqrt, ref_rsqrtl);
  for (int i = 0; i < NR; i++) {
    double x = (i & 1) ? fabs(rbits_d()) : logu(-1074, 1023, 0);
    acc_d1(&s, nxd_rsqrt, ref_rsqrtl, x);
  }
  st_report(&s, "nxd_rsqrt", LIM_D, 0);
}

/* exact functions: bitwise comparison (NaN matches any NaN) */
static int same_d(double a, double b) { return (isnan(a) && isnan(b)) || d2bits(a) == d2bits(b); }
static int same_f(float a, float b) { return (isnan(a) && isnan(b)) || f2bits(a) == f2bits(b); }
static double ref_max_d(double a, double b) {
  if (isnan(a) || isnan(b)) return NAN;
  if (a == b) return signbit(a) ? b : a;
  return a > b ? a : b;
}
static double ref_min_d(double a, double b) {
  if (isnan(a) || isnan(b)) return NAN;
  if (a == b) return signbit(a) ? a : b;
  return a < b ? a : b;
}
static float ref_max_f(float a, float b) {
  if (isnan(a) || isnan(b)) return NAN;
  if (a == b) return signbit(a) ? b : a;
  return a > b ? a : b;
}
static float ref_min_f(float a, float b) {
  if (isnan(a) || isnan(b)) return NAN;
  if (a == b) return signbit(a) ? a : b;
  return a < b ? a : b;
}
static double ref_sign_d(double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : x; }
static float ref_sign_f(float x) { return x > 0 ? 1.0f : x < 0 ? -1.0f : x; }

/* random x for exact tests: random bits, halves, integers, near .5 */
static double rx_exact_d(int i) {
  switch (i % 5) {
  case 0: return rbits_d();
  case 1: return (double)((int64_t)(rnd64() % 2000001) - 1000000) * 0.5;
  case 2: return bits2d(d2bits((double)(int64_t)(rnd64() % 100000) + 0.5) + (rnd64() % 3) - 1) * ((rnd64() & 1) ? -1 : 1);
  case 3: return logu(-60, 60, 1);
  default: return logu(50, 54, 1);
  }
}
static float rx_exact_f(int i) {
  switch (i % 5) {
  case 0: return rbits_f();
  case 1: return (float)((int32_t)(rnd64() % 20001) - 10000) * 0.5f;
  case 2: return bits2f(f2bits((float)(rnd64() % 10000) + 0.5f) + (uint32_t)(rnd64() % 3) - 1u) * ((rnd64() & 1) ? -1.0f : 1.0f);
  case 3: return loguf(-30, 30, 1);
  default: return loguf(21, 25, 1);
  }
}
static void test_exact_d(void) {
  long bad_round = 0, bad_sign = 0, bad_max = 0, bad_min = 0, bad_rem = 0, n = 0;
  double wr = 0, wrm_x = 0, wrm_y = 0;
  for (size_t i = 0; i < NEDGE_D; i++) {
    for (int sg = 0; sg < 2; sg++) {
      double x = sg ? -EDGE_D[i] : EDGE_D[i];
      if (!same_d(nxd_round(x), round(x))) { bad_round++; wr = x; }
      if (!same_d(nxd_sign(x), ref_sign_d(x))) bad_sign++;
    }
    for (size_t j = 0; j < NEDGE_D; j++) {
      double x = EDGE_D[i], y = EDGE_D[j];
      if (!same_d(nxd_max(x, y), ref_max_d(x, y))) bad_max++;
      if (!same_d(nxd_min(x, y), ref_min_d(x, y))) bad_min++;
      if (!same_d(nxd_rem(x, y), fmod(x, y))) { bad_rem++; wrm_x = x; wrm_y = y; }
    }
  }
  for (int i = 0; i < NR; i++, n++) {
    double x = rx_exact_d(i), y = rx_exact_d(i + 1 + (int)(rnd64() % 4));
    if (!same_d(nxd_round(x), round(x))) { bad_round++; wr = x; }
    if (!same_d(nxd_sign(x), ref_sign_d(x))) bad_sign++;
    if (!same_d(nxd_max(x, y), ref_max_d(x, y))) bad_max++;
    if (!same_d(nxd_min(x, y), ref_min_d(x, y))) bad_min++;
    if (i % 4 == 0) y = rbits_d();
    if (i % 4 == 1) { x = logu(-1074, 1023, 1); y = logu(-1074, 1023, 1); }
    if (i % 4 == 2) { x = logu(-1074, -900, 1); y = logu(-1074, -1000, 1); }
    if (!same_d(nxd_rem(x, y), fmod(x, y))) { bad_rem++; wrm_x = x; wrm_y = y; }
  }
  CHECK(bad_round == 0, "nxd_round: exact on %ld random + edge points (%ld wrong, e.g. %a)", n, bad_round, wr);
  CHECK(bad_sign == 0, "nxd_sign: exact on %ld random + edge points (%ld wrong)", n, bad_sign);
  CHECK(bad_max == 0, "nxd_max: exact, NaN-propagating on %ld random + edge pairs (%ld wrong)", n, bad_max);
  CHECK(bad_min == 0, "nxd_min: exact, NaN-propagating on %ld random + edge pairs (%ld wrong)", n, bad_min);
  CHECK(bad_rem == 0, "nxd_rem: exact = fmod on %ld random + edge pairs (%ld wrong, e.g. %a, %a)", n, bad_rem, wrm_x, wrm_y);
}
static void test_exact_f(void) {
  long bad_round = 0, bad_sign = 0, bad_max = 0, bad_min = 0, bad_rem = 0, n = 0;
  float wr = 0, wrm_x = 0, wrm_y = 0;
  for (size_t i = 0; i < NEDGE_F; i++) {
    for (int sg = 0; sg < 2; sg++) {
      float x = sg ? -EDGE_F[i] : EDGE_F[i];
      if (!same_f(nxf_round(x), roundf(x))) { bad_round++; wr = x; }
      if (!same_f(nxf_sign(x), ref_sign_f(x))) bad_sign++;
    }
    for (size_t j = 0; j < NEDGE_F; j++) {
      float x = EDGE_F[i], y = EDGE_F[j];
      if (!same_f(nxf_max(x, y), ref_max_f(x, y))) bad_max++;
      if (!same_f(nxf_min(x, y), ref_min_f(x, y))) bad_min++;
      if (!same_f(nxf_rem(x, y), fmodf(x, y))) { bad_rem++; wrm_x = x; wrm_y = y; }
    }
  }
  for (int i = 0; i < NR; i++, n++) {
    float x = rx_exact_f(i), y = rx_exact_f(i + 1 + (int)(rnd64() % 4));
    if (!same_f(nxf_round(x), roundf(x))) { bad_round++; wr = x; }
    if (!same_f(nxf_sign(x), ref_sign_f(x))) bad_sign++;
    if (!same_f(nxf_max(x, y), ref_max_f(x, y))) bad_max++;
    if (!same_f(nxf_min(x, y), ref_min_f(x, y))) bad_min++;
    if (i % 4 == 0) y = rbits_f();
    if (i % 4 == 1) { x = loguf(-149, 127, 1); y = loguf(-149, 127, 1); }
    if (i % 4 == 2) { x = loguf(-149, -100, 1); y = loguf(-149, -120, 1); }
    if (!same_f(nxf_rem(x, y), fmodf(x, y))) { bad_rem++; wrm_x = x; wrm_y = y; }
  }
  CHECK(bad_round == 0, "nxf_round: exact on %ld random + edge points (%ld wrong, e.g. %a)", n, bad_round, (double)wr);
  CHECK(bad_sign == 0, "nxf_sign: exact on %ld random + edge points (%ld wrong)", n, bad_sign);
  CHECK(bad_max == 0, "nxf_max: exact, NaN-propagating on %ld random + edge pairs (%ld wrong)", n, bad_max);
  CHECK(bad_min == 0, "nxf_min: exact, NaN-propagating on %ld random + edge pairs (%ld wrong)", n, bad_min);
  CHECK(bad_rem == 0, "nxf_rem: exact = fmodf on %ld random + edge pairs (%ld wrong, e.g. %a, %a)", n, bad_rem, (double)wrm_x, (double)wrm_y);
}

/* named assertions from the brief / DESIGN.md */
#define EXPECT_D(expr, want)                                                    \
  do {                                                                          \
    double g_ = (expr), w_ = (want);                                            \
    CHECK(same_d(g_, w_), "%s = %a (want %a)", #expr, g_, w_);                  \
  } while (0)
#define EXPECT_F(expr, want)                                                    \
  do {                                                                          \
    float g_ = (expr), w_ = (want);                                             \
    CHECK(same_f(g_, w_), "%s = %a (want %a)", #expr, (double)g_, (double)w_);  \
  } while (0)

#define PI_D 0x1.921fb54442d18p+1
#define PIO2_D 0x1.921fb54442d18p+0
#define PIO4_D 0x1.921fb54442d18p-1
#define TPIO4_D 0x1.2d97c7f3321d2p+1

static void test_named(void) {
  const double inf = INFINITY, nan = NAN;
  const float inff = INFINITY, nanf = NAN;
  /* pow: C99 Annex F, both families */
  EXPECT_D(nxd_pow(nan, 0.0), 1.0);
  EXPECT_D(nxd_pow(nan, -0.0), 1.0);
  EXPECT_D(nxd_pow(-3.5, 0.0), 1.0);
  EXPECT_D(nxd_pow(inf, -0.0), 1.0);
  EXPECT_D(nxd_pow(1.0, nan), 1.0);
  EXPECT_D(nxd_pow(1.0, inf), 1.0);
  EXPECT_D(nxd_pow(1.0, -inf), 1.0);
  EXPECT_D(nxd_pow(-1.0, inf), 1.0);
  EXPECT_D(nxd_pow(-1.0, -inf), 1.0);
  EXPECT_D(nxd_pow(0.0, -3.0), inf);
  EXPECT_D(nxd_pow(-0.0, -3.0), -inf);
  EXPECT_D(nxd_pow(-0.0, -2.0), inf);
  EXPECT_D(nxd_pow(-0.0, -0.5), inf);
  EXPECT_D(nxd_pow(-0.0, -inf), inf);
  EXPECT_D(nxd_pow(0.0, 3.0), 0.0);
  EXPECT_D(nxd_pow(-0.0, 3.0), -0.0);
  EXPECT_D(nxd_pow(-0.0, 2.0), 0.0);
  EXPECT_D(nxd_pow(-0.0, 0.5), 0.0);
  EXPECT_D(nxd_pow(-0.0, inf), 0.0);
  EXPECT_D(nxd_pow(-0.0, 0x1p60), 0.0);
  EXPECT_D(nxd_pow(-0.0, -0x1p60), inf);
  EXPECT_D(nxd_pow(-2.0, 0.5), nan);
  EXPECT_D(nxd_pow(-8.0, 1.0 / 3.0), nan);
  EXPECT_D(nxd_pow(-2.0, 3.0), -8.0);
  EXPECT_D(nxd_pow(-2.0, 2.0), 4.0);
  EXPECT_D(nxd_pow(-2.0, -3.0), -0.125);
  EXPECT_D(nxd_pow(-1.0, 0x1p60), 1.0);
  EXPECT_D(nxd_pow(-1.0, 0x1p53 + 2.0), 1.0);
  EXPECT_D(nxd_pow(-1.0, 0x1p53 - 1.0), -1.0);
  EXPECT_D(nxd_pow(-1.5, 0x1p60), inf);
  EXPECT_D(nxd_pow(-0.5, 0x1p60), 0.0);
  EXPECT_D(nxd_pow(0.5, -inf), inf);
  EXPECT_D(nxd_pow(-0.5, -inf), inf);
  EXPECT_D(nxd_pow(2.0, -inf), 0.0);
  EXPECT_D(nxd_pow(-2.0, -inf), 0.0);
  EXPECT_D(nxd_pow(0.5, inf), 0.0);
  EXPECT_D(nxd_pow(-0.5, inf), 0.0);
  EXPECT_D(nxd_pow(2.0, inf), inf);
  EXPECT_D(nxd_pow(-2.0, inf), inf);
  EXPECT_D(nxd_pow(-inf, -3.0), -0.0);
  EXPECT_D(nxd_pow(-inf, -2.0), 0.0);
  EXPECT_D(nxd_pow(-inf, -0.5), 0.0);
  EXPECT_D(nxd_pow(-inf, 3.0), -inf);
  EXPECT_D(nxd_pow(-inf, 2.0), inf);
  EXPECT_D(nxd_pow(-inf, 0.5), inf);
  EXPECT_D(nxd_pow(inf, -2.0), 0.0);
  EXPECT_D(nxd_pow(inf, 0.5), inf);
  EXPECT_D(nxd_pow(nan, 1.0), nan);
  EXPECT_D(nxd_pow(2.0, nan), nan);
  EXPECT_D(nxd_pow(-1.0, nan), nan);
  EXPECT_D(nxd_pow(10.0, 308.0), 1e308);
  EXPECT_D(nxd_pow(10.0, 309.0), inf);
  EXPECT_D(nxd_pow(-10.0, 309.0), -inf);
  EXPECT_D(nxd_pow(2.0, -1074.0), 0x1p-1074);
  EXPECT_D(nxd_pow(2.0, -1075.0), 0.0);
  EXPECT_D(nxd_pow(-2.0, -1075.0), -0.0);
  EXPECT_D(nxd_pow(2.0, 1023.0), 0x1p1023);
  EXPECT_D(nxd_pow(2.0, 1024.0), inf);
  EXPECT_D(nxd_pow(9.0, 0.5), 3.0);
  EXPECT_F(nxf_pow(nanf, 0.0f), 1.0f);
  EXPECT_F(nxf_pow(nanf, -0.0f), 1.0f);
  EXPECT_F(nxf_pow(1.0f, nanf), 1.0f);
  EXPECT_F(nxf_pow(-1.0f, inff), 1.0f);
  EXPECT_F(nxf_pow(-1.0f, -inff), 1.0f);
  EXPECT_F(nxf_pow(0.0f, -3.0f), inff);
  EXPECT_F(nxf_pow(-0.0f, -3.0f), -inff);
  EXPECT_F(nxf_pow(-0.0f, -2.0f), inff);
  EXPECT_F(nxf_pow(-0.0f, -0.5f), inff);
  EXPECT_F(nxf_pow(-0.0f, 3.0f), -0.0f);
  EXPECT_F(nxf_pow(-0.0f, 2.0f), 0.0f);
  EXPECT_F(nxf_pow(-0.0f, 0.5f), 0.0f);
  EXPECT_F(nxf_pow(-0.0f, 0x1p30f), 0.0f);
  EXPECT_F(nxf_pow(-2.0f, 0.5f), nanf);
  EXPECT_F(nxf_pow(-8.0f, 1.0f / 3.0f), nanf);
  EXPECT_F(nxf_pow(-2.0f, 3.0f), -8.0f);
  EXPECT_F(nxf_pow(-2.0f, 2.0f), 4.0f);
  EXPECT_F(nxf_pow(-1.0f, 0x1p24f + 2.0f), 1.0f);
  EXPECT_F(nxf_pow(-1.0f, 0x1p24f - 1.0f), -1.0f);
  EXPECT_F(nxf_pow(-1.0f, 0x1p30f), 1.0f);
  EXPECT_F(nxf_pow(0.5f, -inff), inff);
  EXPECT_F(nxf_pow(2.0f, -inff), 0.0f);
  EXPECT_F(nxf_pow(0.5f, inff), 0.0f);
  EXPECT_F(nxf_pow(-2.0f, inff), inff);
  EXPECT_F(nxf_pow(-inff, -3.0f), -0.0f);
  EXPECT_F(nxf_pow(-inff, -2.0f), 0.0f);
  EXPECT_F(nxf_pow(-inff, 3.0f), -inff);
  EXPECT_F(nxf_pow(-inff, 2.5f), inff);
  EXPECT_F(nxf_pow(inff, -1.0f), 0.0f);
  EXPECT_F(nxf_pow(inff, 1e-3f), inff);
  EXPECT_F(nxf_pow(2.0f, -149.0f), 0x1p-149f);
  EXPECT_F(nxf_pow(2.0f, -150.0f), 0.0f);
  EXPECT_F(nxf_pow(2.0f, 128.0f), inff);
  EXPECT_F(nxf_pow(-2.0f, 127.0f), -0x1p127f);
  /* round: half away from zero, exact */
  EXPECT_F(nxf_round(0.49999997f), 0.0f);
  EXPECT_F(nxf_round(-0.49999997f), -0.0f);
  EXPECT_F(nxf_round(-0.5f), -1.0f);
  EXPECT_F(nxf_round(2.5f), 3.0f);
  EXPECT_F(nxf_round(-2.5f), -3.0f);
  EXPECT_F(nxf_round(-0.0f), -0.0f);
  EXPECT_F(nxf_round(8388609.0f), 8388609.0f);
  EXPECT_F(nxf_round(8388607.5f), 8388608.0f);
  EXPECT_F(nxf_round(nanf), nanf);
  EXPECT_F(nxf_round(-inff), -inff);
  EXPECT_D(nxd_round(0.49999999999999994), 0.0);
  EXPECT_D(nxd_round(-0.5), -1.0);
  EXPECT_D(nxd_round(2.5), 3.0);
  EXPECT_D(nxd_round(-0.0), -0.0);
  EXPECT_D(nxd_round(-0.2), -0.0);
  EXPECT_D(nxd_round(4503599627370495.5), 4503599627370496.0);
  EXPECT_D(nxd_round(0x1p52 + 1.0), 0x1p52 + 1.0);
  EXPECT_D(nxd_round(nan), nan);
  /* sign */
  EXPECT_D(nxd_sign(-0.0), -0.0);
  EXPECT_D(nxd_sign(0.0), 0.0);
  EXPECT_D(nxd_sign(-1e-310), -1.0);
  EXPECT_D(nxd_sign(inf), 1.0);
  EXPECT_D(nxd_sign(nan), nan);
  EXPECT_F(nxf_sign(-0.0f), -0.0f);
  EXPECT_F(nxf_sign(0x1p-149f), 1.0f);
  EXPECT_F(nxf_sign(nanf), nanf);
  /* max / min */
  EXPECT_D(nxd_max(-0.0, 0.0), 0.0);
  EXPECT_D(nxd_max(0.0, -0.0), 0.0);
  EXPECT_D(nxd_min(-0.0, 0.0), -0.0);
  EXPECT_D(nxd_min(0.0, -0.0), -0.0);
  EXPECT_D(nxd_max(nan, 1.0), nan);
  EXPECT_D(nxd_min(1.0, nan), nan);
  EXPECT_F(nxf_max(-0.0f, 0.0f), 0.0f);
  EXPECT_F(nxf_min(0.0f, -0.0f), -0.0f);
  EXPECT_F(nxf_max(1.0f, nanf), nanf);
  EXPECT_F(nxf_min(nanf, -inff), nanf);
  /* rem: C fmod */
  EXPECT_D(nxd_rem(-7.0, 2.0), -1.0);
  EXPECT_D(nxd_rem(7.0, -2.0), 1.0);
  EXPECT_D(nxd_rem(-4.0, 2.0), -0.0);
  EXPECT_D(nxd_rem(DBL_MAX, 0x1p-1074), 0.0);
  EXPECT_D(nxd_rem(DBL_MAX, 3.0), fmod(DBL_MAX, 3.0));
  EXPECT_D(nxd_rem(5.0, inf), 5.0);
  EXPECT_D(nxd_rem(inf, 5.0), nan);
  EXPECT_D(nxd_rem(5.0, 0.0), nan);
  EXPECT_F(nxf_rem(-7.0f, 2.0f), -1.0f);
  EXPECT_F(nxf_rem(FLT_MAX, 0x1p-149f), 0.0f);
  EXPECT_F(nxf_rem(FLT_MAX, 3.0f), fmodf(FLT_MAX, 3.0f));
  EXPECT_F(nxf_rem(-0.0f, 3.0f), -0.0f);
  /* tanh / sigmoid / expm1 / log1p robustness */
  EXPECT_F(nxf_tanh(-0.0f), -0.0f);
  EXPECT_F(nxf_tanh(100.0f), 1.0f);
  EXPECT_F(nxf_tanh(-inff), -1.0f);
  EXPECT_F(nxf_sigmoid(inff), 1.0f);
  EXPECT_F(nxf_sigmoid(-inff), 0.0f);
  EXPECT_F(nxf_expm1(-0.0f), -0.0f);
  EXPECT_F(nxf_log1p(-0.0f), -0.0f);
  EXPECT_F(nxf_log1p(-1.0f), -inff);
  EXPECT_F(nxf_erf(-0.0f), -0.0f);
  EXPECT_F(nxf_erf(-inff), -1.0f);
  EXPECT_D(nxd_tanh(-0.0), -0.0);
  EXPECT_D(nxd_tanh(1e300), 1.0);
  EXPECT_D(nxd_sigmoid(inf), 1.0);
  EXPECT_D(nxd_sigmoid(-inf), 0.0);
  EXPECT_D(nxd_expm1(-0.0), -0.0);
  EXPECT_D(nxd_log1p(-0.0), -0.0);
  EXPECT_D(nxd_sin(-0.0), -0.0);
  EXPECT_D(nxd_cos(-0.0), 1.0);
  EXPECT_D(nxd_sin(inf), nan);
  EXPECT_D(nxd_erf(-0.0), -0.0);
  EXPECT_D(nxd_rsqrt(-0.0), -inf);
  EXPECT_D(nxd_rsqrt(inf), 0.0);
  EXPECT_D(nxd_exp(-inf), 0.0);
  EXPECT_D(nxd_log(0.0), -inf);
  EXPECT_D(nxd_log(1.0), 0.0);
  /* atan2: C99 Annex F */
  EXPECT_D(nxd_atan2(0.0, -0.0), PI_D);
  EXPECT_D(nxd_atan2(-0.0, -0.0), -PI_D);
  EXPECT_D(nxd_atan2(0.0, 0.0), 0.0);
  EXPECT_D(nxd_atan2(-0.0, 0.0), -0.0);
  EXPECT_D(nxd_atan2(-0.0, -1.0), -PI_D);
  EXPECT_D(nxd_atan2(1.0, -0.0), PIO2_D);
  EXPECT_D(nxd_atan2(-1.0, 0.0), -PIO2_D);
  EXPECT_D(nxd_atan2(1.0, -inf), PI_D);
  EXPECT_D(nxd_atan2(-1.0, inf), -0.0);
  EXPECT_D(nxd_atan2(inf, -inf), TPIO4_D);
  EXPECT_D(nxd_atan2(-inf, inf), -PIO4_D);
  EXPECT_D(nxd_atan2(-inf, 5.0), -PIO2_D);
  EXPECT_F(nxf_atan2(0.0f, -0.0f), (float)PI_D);
  EXPECT_F(nxf_atan2(-0.0f, 0.0f), -0.0f);
  EXPECT_F(nxf_atan2(-1.0f, -0.0f), -(float)PIO2_D);
  EXPECT_F(nxf_atan2(inff, -inff), (float)(TPIO4_D));
  EXPECT_F(nxf_atan2(-inff, inff), -(float)PIO4_D);
  EXPECT_F(nxf_atan2(1.0f, -inff), (float)PI_D);
}

/* ======================================================== f32 functions */
static void test_f32(void) {
  stat_t s;
  /* expm1 */
  memset(&s, 0, sizeof s);
  edges_f1(&s, nxf_expm1, expm1l);
  for (int i = 0; i < NR; i++) {
    int k = i % 4;
    float x = k == 0 ? (float)unif(-25.0, 89.0) : k == 1 ? loguf(-40, 0, 1)
            : k == 2 ? (float)unif(-2.0, 2.0) : (float)unif(-20.0, 45.0);
    acc_f1(&s, nxf_expm1, expm1l, x);
  }
  st_report(&s, "nxf_expm1", LIM_F, 0);
  /* log1p */
  memset(&s, 0, sizeof s);
  edges_f1(&s, nxf_log1p, log1pl);
  for (int i = 0; i < NR; i++) {
    int k = i % 5;
    float x = k == 0 ? loguf(-40, -1, 1) : k == 1 ? (float)unif(-1.0, 1.0)
            : k == 2 ? loguf(-1, 127, 0) : k == 3 ? -1.0f + loguf(-24, -1, 0) : loguf(-149, -127, 1);
    acc_f1(&s, nxf_log1p, log1pl, x);
  }
  st_report(&s, "nxf_log1p", LIM_F, 0);
  /* tanh */
  memset(&s, 0, sizeof s);
  edges_f1(&s, nxf_tanh, tanhl);
  for (int i = 0; i < NR; i++) {
    int k = i % 3;
    float x = k == 0 ? loguf(-40, 4, 1) : k == 1 ? (float)unif(-12.0, 12.0) : (float)unif(-1.0, 1.0);
    acc_f1(&s, nxf_tanh, tanhl, x);
  }
  st_report(&s, "nxf_tanh", LIM_F, 0);
  /* sigmoid */
  memset(&s, 0, sizeof s);
  edges_f1(&s, nxf_sigmoid, ref_sigmoidl);
  for (int i = 0; i < NR; i++) {
    int k = i % 4;
    float x = k == 0 ? (float)unif(-110.0, 30.0) : k == 1 ? (float)unif(-30.0, 25.0)
            : k == 2 ? loguf(-40, 3, 1) : (float)unif(-105.0, -85.0);
    acc_f1(&s, nxf_sigmoid, ref_sigmoidl, x);
  }
  st_report(&s, "nxf_sigmoid", LIM_F, 0);
  /* erf */
  memset(&s, 0, sizeof s);
  edges_f1(&s, nxf_erf, erfl);
  {
    static const float bp[] = { 1.0f, 2.0f, 3.0f, 4.0f };
    for (size_t j = 0; j < 4; j++)
      for (int d = -8; d <= 8; d++) acc_f1(&s, nxf_erf, erfl, bits2f(f2bits(bp[j]) + (uint32_t)d));
  }
  for (int i = 0; i < NR; i++) {
    int k = i % 3;
    float x = k == 0 ? (float)unif(-5.0, 5.0) : k == 1 ? loguf(-40, 2, 1) : loguf(-149, -120, 1);
    acc_f1(&s, nxf_erf, erfl, x);
  }
  st_report(&s, "nxf_erf", LIM_F, 0);
  /* atan2 */
  memset(&s, 0, sizeof s);
  edges_f2(&s, nxf_atan2, atan2l);
  for (int i = 0; i < NR; i++) {
    int k = i % 5;
    float y, x;
    if (k == 0) { y = loguf(-149, 127, 1); x = loguf(-149, 127, 1); }
    else if (k == 4) { y = loguf(-149, -100, 1); x = loguf(-149, -100, 1); }
    else if (k == 1) { x = loguf(-20, 20, 1); y = x * (float)unif(-2.0, 2.0); }
    else if (k == 2) { y = (float)unif(-1.0, 1.0); x = (float)unif(-1.0, 1.0); }
    else { y = rbits_f(); x = rbits_f(); }
    acc_f2(&s, nxf_atan2, atan2l, y, x);
  }
  st_report(&s, "nxf_atan2", LIM_F, 1);
  /* pow */
  memset(&s, 0, sizeof s);
  edges_f2(&s, nxf_pow, powl);
  for (int i = 0; i < NR; i++) {
    int k = i % 5;
    float x, y;
    if (k == 0) {
      x = loguf(-149, 127, 0);
      double l2 = log2((double)x);
      y = (float)(unif(-160.0, 160.0) / (fabs(l2) < 1e-30 ? 1.0 : l2));
    } else if (k == 1) {
      x = 1.0f + loguf(-24, -3, 1);
      y = (float)(unif(-1.0, 1.0) * 100.0 / fabs(log((double)x)));
    } else if (k == 2) {
      x = -loguf(-10, 10, 0);
      double m = 120.0 / (fabs(log2(-(double)x)) + 1.0);
      y = (float)(int32_t)unif(-m, m);
    } else if (k == 3) {
      x = (float)unif(0.0, 10.0); y = (float)unif(-30.0, 30.0);
    } else { x = rbits_f(); y = rbits_f(); }
    acc_f2(&s, nxf_pow, powl, x, y);
  }
  st_report(&s, "nxf_pow", LIM_F, 1);
}

/* ================================== f32 exp log rsqrt sin cos sqrt divide
 * (our own since issue 24: exp, log, rsqrt <= 1 ULP, sin and cos <= 2 ULP
 * over the whole range, sqrt and divide correctly rounded) */
#define LIM_F1 1.0
static long double ref_sqrtl(long double x) { return sqrtl(x); }
static long double ref_divl(long double x, long double y) { return x / y; }
/* a float near a multiple of pi/2 (the hard cases of the reduction) */
static float near_pio2_multiple_f(void) {
  double k = floor(unif(1.0, 2.0e6));
  float x = (float)(k * 1.5707963267948966);
  return bits2f(f2bits(x) + (uint32_t)(int)(rnd64() % 5) - 2u);
}
static void test_f32_own(void) {
  stat_t s;
  memset(&s, 0, sizeof s);
  edges_f1(&s, nxf_exp, expl);
  for (int i = 0; i < NR; i++) {
    int k = i % 4;
    float x = k == 0 ? (float)unif(-104.0, 89.0) : k == 1 ? (float)unif(-1.0, 1.0)
            : k == 2 ? loguf(-149, 6, 1) : (float)unif(-104.0, -85.0);
    acc_f1(&s, nxf_exp, expl, x);
  }
  st_report(&s, "nxf_exp (denormal results included)", LIM_F1, 0);
  memset(&s, 0, sizeof s);
  edges_f1(&s, nxf_log, logl);
  for (int i = 0; i < NR; i++) {
    int k = i % 4;
    float x = k == 0 ? fabsf(rbits_f()) : k == 1 ? 1.0f + loguf(-24, -1, 1)
            : k == 2 ? (float)unif(0.5, 2.0) : loguf(-149, -127, 0);
    acc_f1(&s, nxf_log, logl, x);
  }
  st_report(&s, "nxf_log (near 1, denormal inputs)", LIM_F1, 0);
  memset(&s, 0, sizeof s);
  edges_f1(&s, nxf_rsqrt, ref_rsqrtl);
  for (int i = 0; i < NR; i++) acc_f1(&s, nxf_rsqrt, ref_rsqrtl, i % 2 ? fabsf(rbits_f()) : loguf(-149, 127, 0));
  st_report(&s, "nxf_rsqrt", LIM_F1, 0);
  memset(&s, 0, sizeof s);
  edges_f1(&s, nxf_sqrt, ref_sqrtl);
  for (int i = 0; i < NR; i++) acc_f1(&s, nxf_sqrt, ref_sqrtl, i % 2 ? fabsf(rbits_f()) : loguf(-149, 127, 0));
  st_report(&s, "nxf_sqrt correctly rounded", 0.0, 0);
  memset(&s, 0, sizeof s);
  edges_f2(&s, nxf_div, ref_divl);
  for (int i = 0; i < NR; i++) {
    int k = i % 3;
    float x = k == 0 ? rbits_f() : loguf(-149, 127, 1);
    float y = k == 1 ? rbits_f() : k == 2 ? loguf(-149, -100, 1) : loguf(-149, 127, 1);
    acc_f2(&s, nxf_div, ref_divl, x, y);
  }
  st_report(&s, "nxf_div correctly rounded (denormal results included)", 0.0, 1);
  for (int w = 0; w < 2; w++) {
    ff1 f = w ? nxf_cos : nxf_sin;
    rl1 r = w ? cosl : sinl;
    memset(&s, 0, sizeof s);
    edges_f1(&s, f, r);
    for (int i = 0; i < NR; i++) {
      int k = i % 5;
      float x = k == 0 ? (float)unif(-3.2, 3.2) : k == 1 ? rbits_f() : k == 2 ? loguf(-149, 12, 1)
              : k == 3 ? (float)unif(-2.0e6, 2.0e6) : near_pio2_multiple_f();
      acc_f1(&s, f, r, x);
    }
    st_report(&s, w ? "nxf_cos (whole range, near multiples of pi/2)" : "nxf_sin (whole range, near multiples of pi/2)", LIM_F, 0);
  }
}

/* ============ tan, the inverse and hyperbolic functions, cbrt, erfc, erf_inv
 * ([nx-ops]): <= 2 ULP (f64 erfc 3: erfcx below 6 comes from erf's fits),
 * cbrt <= 1; the edges, random bits, and each function's own range */
static long double erf_invl(long double y) { /* bisection, then Newton in long double */
  if (isnan(y) || fabsl(y) > 1) return NAN;
  if (fabsl(y) == 1) return copysignl(INFINITY, y);
  long double ay = fabsl(y);
  if (ay < 0x1p-40L) return y * 0.886226925452758013649083741671L;
  long double lo = 0, hi = 30;
  for (int i = 0; i < 80; i++) {
    long double m = 0.5L * (lo + hi);
    if ((ay < 0.5L ? erfl(m) - ay : (1 - ay) - erfcl(m)) > 0) hi = m; else lo = m;
  }
  long double x = 0.5L * (lo + hi);
  for (int i = 0; i < 3; i++) {
    long double d = 1.128379167095512573896158903121545L * expl(-x * x);
    x -= (ay < 0.5L ? erfl(x) - ay : (1 - ay) - erfcl(x)) / d;
  }
  return copysignl(x, y);
}
static void test_more(void) {
  static const struct {
    const char *name;
    ff1 f;
    fd1 d;
    rl1 r;
    double lo, hi; /* the function's own range, uniform */
    double lim_f, lim_d;
  } T[] = {
    {"tan", nxf_tan, nxd_tan, tanl, -10.0, 10.0, 2, 2},
    {"atan", nxf_atan, nxd_atan, atanl, -8.0, 8.0, 2, 2},
    {"asin", nxf_asin, nxd_asin, asinl, -1.0, 1.0, 2, 2},
    {"acos", nxf_acos, nxd_acos, acosl, -1.0, 1.0, 2, 2},
    {"sinh", nxf_sinh, nxd_sinh, sinhl, -30.0, 30.0, 2, 2},
    {"cosh", nxf_cosh, nxd_cosh, coshl, -30.0, 30.0, 2, 2},
    {"asinh", nxf_asinh, nxd_asinh, asinhl, -20.0, 20.0, 2, 2},
    {"acosh", nxf_acosh, nxd_acosh, acoshl, 1.0, 20.0, 2, 2},
    {"atanh", nxf_atanh, nxd_atanh, atanhl, -1.0, 1.0, 2, 2},
    {"cbrt", nxf_cbrt, nxd_cbrt, cbrtl, -100.0, 100.0, 1, 1},
    {"erfc", nxf_erfc, nxd_erfc, erfcl, -7.0, 28.0, 2, 3},
    {"erf_inv", nxf_erf_inv, nxd_erf_inv, erf_invl, -1.0, 1.0, 2, 2},
  };
  int nr = NR / 8; /* erf_inv's reference is slow */
  for (size_t k = 0; k < sizeof T / sizeof T[0]; k++) {
    stat_t s;
    char name[96];
    memset(&s, 0, sizeof s);
    edges_f1(&s, T[k].f, T[k].r);
    for (int i = 0; i < nr; i++) {
      int c = i % 3;
      float x = c == 0 ? (float)unif(T[k].lo, T[k].hi) : c == 1 ? rbits_f() : loguf(-149, 5, 1);
      if (k == 11 && c == 2) x = 1.0f - loguf(-24, -2, 0); /* erf_inv: the tail */
      acc_f1(&s, T[k].f, T[k].r, x);
    }
    snprintf(name, sizeof name, "nxf_%s", T[k].name);
    st_report(&s, name, T[k].lim_f, 0);
    memset(&s, 0, sizeof s);
    edges_d1(&s, T[k].d, T[k].r);
    for (int i = 0; i < nr; i++) {
      int c = i % 3;
      double x = c == 0 ? unif(T[k].lo, T[k].hi) : c == 1 ? rbits_d() : logu(-1074, 5, 1);
      if (k == 11 && c == 2) x = 1.0 - logu(-53, -2, 0);
      acc_d1(&s, T[k].d, T[k].r, x);
    }
    snprintf(name, sizeof name, "nxd_%s", T[k].name);
    st_report(&s, name, T[k].lim_d, 0);
  }
  /* the brief's named values */
  EXPECT_F(nxf_cbrt(-8.0f), -2.0f);
  EXPECT_D(nxd_cbrt(-8.0), -2.0);
  EXPECT_D(nxd_cbrt(27.0), 3.0);
  EXPECT_F(nxf_atanh(1.0f), INFINITY);
  EXPECT_D(nxd_atanh(-1.0), -INFINITY);
  EXPECT_F(nxf_erf_inv(-1.0f), -INFINITY);
  EXPECT_D(nxd_erf_inv(1.0), INFINITY);
  EXPECT_F(nxf_erf_inv(-0.0f), -0.0f);
  EXPECT_D(nxd_erf_inv(-0.0), -0.0);
  EXPECT_F(nxf_asin(1.0f + FLT_EPSILON), NAN);
  EXPECT_D(nxd_acos(-1.0 - DBL_EPSILON), NAN);
  EXPECT_F(nxf_acosh(0.5f), NAN);
  EXPECT_D(nxd_acosh(1.0), 0.0);
  EXPECT_F(nxf_atanh(2.0f), NAN);
  EXPECT_F(nxf_tan(INFINITY), NAN);
  EXPECT_D(nxd_tan(-0.0), -0.0);
  EXPECT_F(nxf_sinh(-INFINITY), -INFINITY);
  EXPECT_D(nxd_cosh(-INFINITY), INFINITY);
  EXPECT_D(nxd_asinh(-INFINITY), -INFINITY);
  EXPECT_F(nxf_erfc(INFINITY), 0.0f);
  EXPECT_D(nxd_erfc(-INFINITY), 2.0);
  EXPECT_F(nxf_erfc(-0.0f), 1.0f);
  EXPECT_F(nxf_atan(-INFINITY), -0x1.921fb6p+0f);
  EXPECT_D(nxd_acos(1.0), 0.0);
  EXPECT_D(nxd_acos(-1.0), PI_D);
  EXPECT_F(nxf_cbrt(0x1p-149f), 0x1.428a3p-50f); /* the smallest denormal: 2^(-149/3) */
}

int main(int argc, char **argv) {
  if (argc > 1 && atoi(argv[1]) > 0) NR *= atoi(argv[1]);
  if (argc > 2) rng_s = (uint64_t)strtoull(argv[2], NULL, 0);
  test_named();
  test_exp_d();
  test_log_d();
  test_expm1_d();
  test_log1p_d();
  test_sincos_d();
  test_tanh_d();
  test_sigmoid_d();
  test_erf_d();
  test_atan2_d();
  test_pow_d();
  test_rsqrt_d();
  test_exact_d();
  test_f32();
  test_exact_f();
  test_f32_own();
  test_more();
  return tap_done();
}
