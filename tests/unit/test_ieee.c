/* test_ieee.c - shaders/lib/nxmath.glsl's f32 ops on an emulated flushing
 * driver.
 *
 * NVIDIA's Vulkan driver reports shaderDenormPreserveFloat32 = false: every
 * f32 instruction reads a denormal operand as zero and writes a denormal
 * result as zero.  x86 does the same with MXCSR FTZ|DAZ set, so this test
 * compiles the shader library as C (glsl_compat.h), runs it with FTZ|DAZ on
 * and checks, over denormal-heavy random bit patterns and the edge values:
 *   - add, subtract, multiply, divide, sqrt, the comparisons, abs, negate,
 *     sign, max, min, select, floor, ceil, fmod and the f32 <-> f64
 *     conversions are bit-identical to IEEE (computed with FTZ|DAZ off);
 *   - exp, log, rsqrt within 1 ULP, sin, cos, tanh, sigmoid, pow, atan2,
 *     expm1, log1p, erf within 2 ULP of long double libm (x87: unaffected by
 *     MXCSR), denormal inputs and results included;
 *   - the f64 family likewise (shaderDenormPreserveFloat64 = false; SSE2
 *     FTZ|DAZ flushes double too): add, subtract, multiply, divide, sqrt,
 *     max, min, fmod, the comparisons, abs, negate, sign, floor, ceil
 *     bit-identical to IEEE; divide and sqrt also checked correctly rounded
 *     on uniform random bits.
 * First it checks that the emulation flushes at all (a plain C sum of two
 * denormals is 0 under FTZ), so the rest cannot pass vacuously.
 * Build: cc -std=c11 -O2 -ffp-contract=off -Ishaders/lib -Itests/unit
 *        tests/unit/test_ieee.c -lm ; Run: test_ieee [N [SEED]]. */
#include <float.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glsl_compat.h"
#include "nxmath.glsl"
#include "tap.h"
#define BITS_SEED 0x2545f4914f6cdd1dull
#include "bits.h"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define HAVE_FTZ 1
static unsigned saved_csr;
static void ftz_on(void) {
  __asm__ volatile("" ::: "memory");
  saved_csr = _mm_getcsr();
  _mm_setcsr(saved_csr | 0x8040u); /* FTZ | DAZ */
  __asm__ volatile("" ::: "memory");
}
static void ftz_off(void) {
  __asm__ volatile("" ::: "memory");
  _mm_setcsr(saved_csr);
  __asm__ volatile("" ::: "memory");
}
#else
#define HAVE_FTZ 0
static void ftz_on(void) {}
static void ftz_off(void) {}
#endif

static const uint32_t EDGE[] = {
  0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0x00000001u, 0x80000001u,
  0x00000002u, 0x007fffffu, 0x807fffffu, 0x00400000u, 0x00800000u, 0x80800000u, 0x00800001u,
  0x00ffffffu, 0x01000000u, 0x7f7fffffu, 0xff7fffffu, 0x3f800000u, 0xbf800000u, 0x3f800001u,
  0x3f7fffffu, 0x34000000u, 0x33800000u, 0x42b17217u, 0x42b17218u, 0xc2aeac50u, 0xc2cff1b5u,
  0xc2d00000u, 0x4b000000u, 0x3fc90fdbu, 0x40490fdbu, 0x5f000000u, 0x1f800000u, 0x20000000u,
};
#define NEDGE (sizeof EDGE / sizeof EDGE[0])
/* denormal-heavy: a third denormal, a third tiny normal, a third anything */
static float rnd_f(void) {
  uint64_t r = rnd64();
  uint32_t sign = (uint32_t)(r >> 63) << 31, mant = (uint32_t)r & 0x007fffffu;
  switch ((r >> 32) % 6) {
  case 0: case 1: return bits2f(sign | mant);                                             /* denormal */
  case 2: return bits2f(sign | ((uint32_t)(1 + (r >> 40) % 30) << 23) | mant);            /* near FLT_MIN */
  case 3: return bits2f(EDGE[(r >> 40) % NEDGE] ^ sign);
  default: {
    uint32_t e = (uint32_t)((r >> 40) % 255);
    return bits2f(sign | (e << 23) | mant);
  }
  }
}

static int same(float a, float b) { return (isnan(a) && isnan(b)) || f2bits(a) == f2bits(b); }
/* ULP distance of got from the long double ref rounded to float */
static int32_t ord(float x) {
  int32_t i;
  memcpy(&i, &x, 4);
  return i < 0 ? INT32_MIN - i : i;
}
static double ulps(float got, long double ref) {
  float r = (float)ref;
  if (isnan(r) || isnan(got)) return (isnan(r) && isnan(got)) ? 0 : 1e30;
  if (r == 0 && got == 0) return signbit(r) == signbit(got) ? 0 : 1e30;
  return fabs((double)ord(got) - (double)ord(r));
}

static int N = 200000;
static float *xa, *ya, *out;
static unsigned *uo;

typedef float (*ff1)(float);
typedef float (*ff2)(float, float);
/* out[i] = f(x[i]) (or f(x[i], y[i])) with FTZ|DAZ on */
static __attribute__((noinline)) void run1(ff1 f) {
  ftz_on();
  for (int i = 0; i < N; i++) out[i] = f(xa[i]);
  ftz_off();
}
static __attribute__((noinline)) void run2(ff2 f) {
  ftz_on();
  for (int i = 0; i < N; i++) out[i] = f(xa[i], ya[i]);
  ftz_off();
}

/* the IEEE references, computed with FTZ|DAZ off */
static float r_add(float a, float b) { return a + b; }
static float r_sub(float a, float b) { return a - b; }
static float r_mul(float a, float b) { return a * b; }
static float r_div(float a, float b) { return a / b; }
static float r_sqrt(float a) { return sqrtf(a); }
static float r_abs(float a) { return fabsf(a); }
static float r_neg(float a) { return -a; }
static float r_floor(float a) { return floorf(a); }
static float r_ceil(float a) { return ceilf(a); }
static float r_sign(float a) { return a > 0 ? 1.0f : a < 0 ? -1.0f : a; }
static float r_max(float a, float b) {
  if (isnan(a) || isnan(b)) return NAN;
  if (a == b) return signbit(a) ? b : a;
  return a > b ? a : b;
}
static float r_min(float a, float b) {
  if (isnan(a) || isnan(b)) return NAN;
  if (a == b) return signbit(a) ? a : b;
  return a < b ? a : b;
}
static float r_fmod(float a, float b) { return fmodf(a, b); }
static float c_eq(float a, float b) { return nxf_eq(a, b) ? 1.0f : 0.0f; }
static float c_lt(float a, float b) { return nxf_lt(a, b) ? 1.0f : 0.0f; }
static float c_le(float a, float b) { return nxf_le(a, b) ? 1.0f : 0.0f; }
static float r_eq(float a, float b) { return a == b ? 1.0f : 0.0f; }
static float r_lt(float a, float b) { return a < b ? 1.0f : 0.0f; }
static float r_le(float a, float b) { return a <= b ? 1.0f : 0.0f; }
/* f32 -> f64 -> f32 through the bit conversions, and the f64 side checked */
static float c_cast(float a) { return nx_f64_to_f32(nx_f32_to_f64(a)); }
static float c_cast_half(float a) { /* f64 a * 0.5 (exact in f64) back to f32: the rounding into the denormals */
  return nx_f64_to_f32(nx_f32_to_f64(a) * 0.5);
}
static float r_cast_half(float a) { return (float)((double)a * 0.5); }
static float r_ident(float a) { return a; }

static void exact1(const char *name, ff1 f, ff1 ref) {
  run1(f);
  long bad = 0, first = -1;
  for (int i = 0; i < N; i++)
    if (!same(out[i], ref(xa[i]))) {
      if (first < 0) first = i;
      bad++;
    }
  if (first < 0)
    CHECK(1, "%s bit-identical to IEEE under FTZ|DAZ on %d inputs", name, N);
  else
    CHECK(0, "%s under FTZ|DAZ: %ld of %d differ, e.g. x=%a got %a want %a", name, bad, N,
          (double)xa[first], (double)out[first], (double)ref(xa[first]));
}
static void exact2(const char *name, ff2 f, ff2 ref) {
  run2(f);
  long bad = 0, first = -1;
  for (int i = 0; i < N; i++)
    if (!same(out[i], ref(xa[i], ya[i]))) {
      if (first < 0) first = i;
      bad++;
    }
  if (first < 0)
    CHECK(1, "%s bit-identical to IEEE under FTZ|DAZ on %d pairs", name, N);
  else
    CHECK(0, "%s under FTZ|DAZ: %ld of %d differ, e.g. (%a, %a) got %a want %a", name, bad, N,
          (double)xa[first], (double)ya[first], (double)out[first],
          (double)ref(xa[first], ya[first]));
}

typedef long double (*rl1)(long double);
typedef long double (*rl2)(long double, long double);
/* glibc's powl(-inf, -2^63) is inf (want +0): infinities through pow */
static long double l_pow(long double x, long double y) {
  return (isinf(x) || isinf(y)) ? (long double)pow((double)x, (double)y) : powl(x, y);
}
static long double l_rsqrt(long double x) { return 1.0L / sqrtl(x); }
static long double l_sigmoid(long double x) {
  if (x >= 0) return 1.0L / (1.0L + expl(-x));
  long double e = expl(x);
  return e / (1.0L + e);
}
static void ulp1(const char *name, ff1 f, rl1 ref, double lim) {
  run1(f);
  double worst = 0;
  int wi = 0;
  for (int i = 0; i < N; i++) {
    double u = ulps(out[i], ref((long double)xa[i]));
    if (u > worst) { worst = u; wi = i; }
  }
  CHECK(worst <= lim, "%s under FTZ|DAZ: max %.0f ULP on %d inputs (limit %.0f), worst x=%a got %a want %a",
        name, worst, N, lim, (double)xa[wi], (double)out[wi], (double)(float)ref((long double)xa[wi]));
}
static void ulp2(const char *name, ff2 f, rl2 ref, double lim) {
  run2(f);
  double worst = 0;
  int wi = 0;
  for (int i = 0; i < N; i++) {
    double u = ulps(out[i], ref((long double)xa[i], (long double)ya[i]));
    if (u > worst) { worst = u; wi = i; }
  }
  CHECK(worst <= lim, "%s under FTZ|DAZ: max %.0f ULP on %d pairs (limit %.0f), worst (%a, %a) got %a want %a",
        name, worst, N, lim, (double)xa[wi], (double)ya[wi], (double)out[wi],
        (double)(float)ref((long double)xa[wi], (long double)ya[wi]));
}
/* scaled inputs for the transcendentals: x in the function's useful range */
static void fill_scaled(float lo, float hi, int with_denormals) {
  for (int i = 0; i < N; i++) {
    uint64_t r = rnd64();
    if (with_denormals && r % 4 == 0) xa[i] = rnd_f();
    else xa[i] = lo + (hi - lo) * (float)((double)(r >> 11) * 0x1p-53);
  }
}


/* ---- f64: the same on an emulated driver that flushes f64 denormals
 * (shaderDenormPreserveFloat64 = false; SSE2's FTZ|DAZ flushes double too) */
static const uint64_t EDGE_D[] = {
  0x0000000000000000ull, 0x8000000000000000ull, 0x7ff0000000000000ull, 0xfff0000000000000ull,
  0x7ff8000000000000ull, 0x0000000000000001ull, 0x8000000000000001ull, 0x0000000000000002ull,
  0x000fffffffffffffull, 0x800fffffffffffffull, 0x0008000000000000ull, 0x0010000000000000ull,
  0x8010000000000000ull, 0x0010000000000001ull, 0x001fffffffffffffull, 0x0020000000000000ull,
  0x7fefffffffffffffull, 0xffefffffffffffffull, 0x3ff0000000000000ull, 0xbff0000000000000ull,
  0x3ff0000000000001ull, 0x3fefffffffffffffull, 0x3cb0000000000000ull, 0x3ca0000000000000ull,
  0x43300000000000ffull, 0x03f0000000000000ull, 0x0400000000000000ull, 0x7fe0000000000000ull,
  0x00000000ffffffffull, 0x0000000100000000ull, 0x3fe0000000000000ull, 0x4000000000000000ull,
};
#define NEDGE_D (sizeof EDGE_D / sizeof EDGE_D[0])
static double rnd_d(void) {
  uint64_t r = rnd64();
  uint64_t sign = (r >> 63) << 63, mant = rnd64() & 0x000fffffffffffffull;
  switch ((r >> 32) % 7) {
  case 0: return bits2d(sign | mant);                                                   /* denormal */
  case 1: return bits2d(sign | (mant >> ((r >> 40) % 52)));                             /* small denormal */
  case 2: return bits2d(sign | ((uint64_t)(1 + (r >> 40) % 70) << 52) | mant);          /* near DBL_MIN */
  case 3: return bits2d(EDGE_D[(r >> 40) % NEDGE_D] ^ sign);
  case 4: return bits2d(sign | ((uint64_t)(1023 - 40 + (r >> 40) % 80) << 52) | mant); /* near 1 */
  default: return bits2d(sign | ((uint64_t)((r >> 40) % 2047) << 52) | mant);
  }
}
static double *xd, *yd, *od;
static int same_d(double a, double b) { return (isnan(a) && isnan(b)) || d2bits(a) == d2bits(b); }
typedef double (*dd1)(double);
typedef double (*dd2)(double, double);
static __attribute__((noinline)) void run1d(dd1 f) {
  ftz_on();
  for (int i = 0; i < N; i++) od[i] = f(xd[i]);
  ftz_off();
}
static __attribute__((noinline)) void run2d(dd2 f) {
  ftz_on();
  for (int i = 0; i < N; i++) od[i] = f(xd[i], yd[i]);
  ftz_off();
}
static void exact1d(const char *name, dd1 f, dd1 ref) {
  run1d(f);
  long bad = 0, first = -1;
  for (int i = 0; i < N; i++)
    if (!same_d(od[i], ref(xd[i]))) {
      if (first < 0) first = i;
      bad++;
    }
  if (first < 0)
    CHECK(1, "f64 %s bit-identical to IEEE under FTZ|DAZ on %d inputs", name, N);
  else
    CHECK(0, "f64 %s under FTZ|DAZ: %ld of %d differ, e.g. x=%a got %a want %a", name, bad, N, xd[first],
          od[first], ref(xd[first]));
}
static void exact2d(const char *name, dd2 f, dd2 ref) {
  run2d(f);
  long bad = 0, first = -1;
  for (int i = 0; i < N; i++)
    if (!same_d(od[i], ref(xd[i], yd[i]))) {
      if (first < 0) first = i;
      bad++;
    }
  if (first < 0)
    CHECK(1, "f64 %s bit-identical to IEEE under FTZ|DAZ on %d pairs", name, N);
  else
    CHECK(0, "f64 %s under FTZ|DAZ: %ld of %d differ, e.g. (%a, %a) got %a want %a", name, bad, N,
          xd[first], yd[first], od[first], ref(xd[first], yd[first]));
}
static double rd_add(double a, double b) { return a + b; }
static double rd_sub(double a, double b) { return a - b; }
static double rd_mul(double a, double b) { return a * b; }
static double rd_div(double a, double b) { return a / b; }
static double rd_sqrt(double a) { return sqrt(a); }
static double rd_floor(double a) { return floor(a); }
static double rd_ceil(double a) { return ceil(a); }
static double rd_abs(double a) { return fabs(a); }
static double rd_neg(double a) { return -a; }
static double rd_sign(double a) { return a > 0 ? 1.0 : a < 0 ? -1.0 : a; }
static double rd_fmod(double a, double b) { return fmod(a, b); }
static double rd_max(double a, double b) {
  if (isnan(a) || isnan(b)) return NAN;
  if (a == b) return signbit(a) ? b : a;
  return a > b ? a : b;
}
static double rd_min(double a, double b) {
  if (isnan(a) || isnan(b)) return NAN;
  if (a == b) return signbit(a) ? a : b;
  return a < b ? a : b;
}
static double cd_eq(double a, double b) { return nxd_eq(a, b) ? 1.0 : 0.0; }
static double cd_lt(double a, double b) { return nxd_lt(a, b) ? 1.0 : 0.0; }
static double cd_le(double a, double b) { return nxd_le(a, b) ? 1.0 : 0.0; }
static double rd_eq(double a, double b) { return a == b ? 1.0 : 0.0; }
static double rd_lt(double a, double b) { return a < b ? 1.0 : 0.0; }
static double rd_le(double a, double b) { return a <= b ? 1.0 : 0.0; }
static volatile double vdden = 0x1p-1070;
static __attribute__((noinline)) double plain_add_d(double a, double b) { return a + b; }

static void f64_checks(void) {
  xd = malloc(sizeof(double) * (size_t)N);
  yd = malloc(sizeof(double) * (size_t)N);
  od = malloc(sizeof(double) * (size_t)N);
  if (!xd || !yd || !od) exit(1);
  ftz_on();
  double flushed = plain_add_d(vdden, vdden);
  ftz_off();
  CHECK(flushed == 0.0 && plain_add_d(vdden, vdden) != 0.0,
        "the emulation flushes f64: 2^-1070 + 2^-1070 = %a under FTZ|DAZ, %a without", flushed,
        plain_add_d(vdden, vdden));
  int k = 0;
  for (size_t i = 0; i < NEDGE_D && k < N; i++)
    for (size_t j = 0; j < NEDGE_D && k < N; j++, k++) {
      xd[k] = bits2d(EDGE_D[i]);
      yd[k] = bits2d(EDGE_D[j]);
    }
  for (; k < N; k++) {
    xd[k] = rnd_d();
    yd[k] = rnd_d();
    if (k % 8 == 0) yd[k] = bits2d(d2bits(xd[k]) ^ 0x8000000000000000ull); /* exact cancellation */
    if (k % 8 == 1) yd[k] = bits2d(d2bits(xd[k]) + rnd64() % 5); /* near ties */
    if (k % 8 == 2) { /* products and quotients near the denormal boundary */
      uint64_t ex = (uint64_t)((rnd64() % 120) + 1023 - 60) << 52;
      yd[k] = bits2d((d2bits(yd[k]) & 0x800fffffffffffffull) | ex);
      xd[k] = bits2d((d2bits(xd[k]) & 0x800fffffffffffffull) | ((uint64_t)(1 + rnd64() % 60) << 52));
    }
  }
  exact2d("add", nxd_add, rd_add);
  exact2d("subtract", nxd_sub, rd_sub);
  exact2d("multiply", nxd_mul, rd_mul);
  exact2d("divide", nxd_div, rd_div);
  exact2d("max", nxd_max, rd_max);
  exact2d("min", nxd_min, rd_min);
  exact2d("fmod", nxd_rem, rd_fmod);
  exact2d("equal", cd_eq, rd_eq);
  exact2d("less", cd_lt, rd_lt);
  exact2d("less_equal", cd_le, rd_le);
  exact1d("sqrt", nxd_sqrt, rd_sqrt);
  exact1d("abs", nx_absd, rd_abs);
  exact1d("negate", nx_negd, rd_neg);
  exact1d("sign", nxd_sign, rd_sign);
  exact1d("floor", nxd_floor, rd_floor);
  exact1d("ceil", nxd_ceil, rd_ceil);
  /* divide and sqrt correctly rounded on uniform random bits (every exponent) without FTZ too */
  for (int i = 0; i < N; i++) {
    xd[i] = bits2d(rnd64());
    yd[i] = bits2d(rnd64());
  }
  long bad = 0;
  for (int i = 0; i < N; i++)
    if (!same_d(nxd_div(xd[i], yd[i]), xd[i] / yd[i]) || !same_d(nxd_sqrt(xd[i]), sqrt(xd[i]))) bad++;
  CHECK(bad == 0, "f64 divide and sqrt correctly rounded (no FTZ) on %d random bit patterns (%ld differ)", N, bad);
  free(xd);
  free(yd);
  free(od);
}

static volatile float vden = 0x1p-140f;
static __attribute__((noinline)) float plain_add(float a, float b) { return a + b; }

int main(int argc, char **argv) {
  if (argc > 1 && atoi(argv[1]) > 0) N *= atoi(argv[1]);
  if (argc > 2) rng_s = strtoull(argv[2], NULL, 0);
  if (!HAVE_FTZ) {
    printf("ok 1 # SKIP not x86: no MXCSR to emulate a flushing driver\n");
    return tap_done();
  }
  xa = malloc(sizeof(float) * (size_t)N);
  ya = malloc(sizeof(float) * (size_t)N);
  out = malloc(sizeof(float) * (size_t)N);
  uo = malloc(sizeof(unsigned) * (size_t)N);
  if (!xa || !ya || !out || !uo) return 1;
  ftz_on();
  float flushed = plain_add(vden, vden);
  ftz_off();
  CHECK(flushed == 0.0f && plain_add(vden, vden) != 0.0f,
        "the emulation flushes: 2^-140 + 2^-140 = %a under FTZ|DAZ, %a without", (double)flushed,
        (double)plain_add(vden, vden));

  /* pairs: every edge pair first, then random denormal-heavy ones */
  int k = 0;
  for (size_t i = 0; i < NEDGE && k < N; i++)
    for (size_t j = 0; j < NEDGE && k < N; j++, k++) {
      xa[k] = bits2f(EDGE[i]);
      ya[k] = bits2f(EDGE[j]);
    }
  for (; k < N; k++) {
    xa[k] = rnd_f();
    ya[k] = rnd_f();
    if (k % 8 == 0) ya[k] = bits2f(f2bits(xa[k]) ^ 0x80000000u) ; /* exact cancellation */
    if (k % 8 == 1) ya[k] = bits2f(f2bits(xa[k]) + (uint32_t)(rnd64() % 5)); /* near ties */
  }
  exact2("add", nxf_add, r_add);
  exact2("subtract", nxf_sub, r_sub);
  exact2("multiply", nxf_mul, r_mul);
  exact2("divide", nxf_div, r_div);
  exact2("max", nxf_max, r_max);
  exact2("min", nxf_min, r_min);
  exact2("fmod", nxf_rem, r_fmod);
  exact2("equal", c_eq, r_eq);
  exact2("less", c_lt, r_lt);
  exact2("less_equal", c_le, r_le);
  exact1("sqrt", nxf_sqrt, r_sqrt);
  exact1("abs", nx_absf, r_abs);
  exact1("negate", nx_negf, r_neg);
  exact1("sign", nxf_sign, r_sign);
  exact1("floor", nxf_floor, r_floor);
  exact1("ceil", nxf_ceil, r_ceil);
  exact1("f32 -> f64 -> f32", c_cast, r_ident);
  exact1("f64 x/2 -> f32 (rounding into the denormals)", c_cast_half, r_cast_half);
  {
    long bad = 0;
    for (int i = 0; i < N; i++) {
      ftz_on();
      double d = nx_f32_to_f64(xa[i]);
      ftz_off();
      if (d2bits(d) != d2bits((double)xa[i]) && !(isnan(d) && isnan(xa[i]))) bad++;
    }
    CHECK(bad == 0, "f32 -> f64 keeps denormals under FTZ|DAZ (%ld of %d differ)", bad, N);
  }

  /* transcendentals */
  ulp2("pow", nxf_pow, l_pow, 2);
  ulp2("atan2", nxf_atan2, atan2l, 2);
  fill_scaled(-105.0f, 89.0f, 1);
  ulp1("exp (results near FLT_MIN and denormal)", nxf_exp, expl, 1);
  ulp1("sigmoid", nxf_sigmoid, l_sigmoid, 2);
  fill_scaled(-30.0f, 89.0f, 1);
  ulp1("expm1", nxf_expm1, expm1l, 2);
  fill_scaled(-12.0f, 12.0f, 1);
  ulp1("tanh", nxf_tanh, tanhl, 2);
  ulp1("erf", nxf_erf, erfl, 2);
  fill_scaled(-1.0e6f, 1.0e6f, 1);
  ulp1("sin", nxf_sin, sinl, 2);
  ulp1("cos", nxf_cos, cosl, 2);
  for (int i = 0; i < N; i++) xa[i] = bits2f(f2bits(rnd_f()) & 0x7fffffffu);
  ulp1("log (denormal inputs)", nxf_log, logl, 1);
  ulp1("rsqrt (denormal inputs)", nxf_rsqrt, l_rsqrt, 1);
  for (int i = 0; i < N; i++) xa[i] = (i % 2) ? rnd_f() : (float)((double)(rnd64() >> 11) * 0x1p-53 * 2.0 - 1.0);
  ulp1("log1p", nxf_log1p, log1pl, 2);
  f64_checks();
  free(xa);
  free(ya);
  free(out);
  free(uo);
  return tap_done();
}
