/*
 * test_f16.c - the f32 -> f16 rounding of dot's coopmat variant, both of it:
 * the kernel's (nx_f16_bits in shaders/lib/f16.glsl, compiled here as C
 * through glsl_compat.h) and the CPU reference's (nxvk_f16_round in
 * src/ops/dot.c).  Checked on edge values against numpy's float16 (the
 * expected bits below were produced by numpy 1.24's np.float16(np.float32(x)))
 * and against each other over a sweep of f32 bit patterns.
 *
 *   test_f16                 TAP
 *   test_f16 --round         stdin: one f32 bit pattern per line (hex);
 *                            stdout: "KERNEL_F16_BITS REFERENCE_F64_BITS" in hex
 *                            (test_f16_numpy.py compares both with numpy)
 */
#include "nxvk.h"
#include "ops/ops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glsl_compat.h"
#include "f16.glsl"
#include "tap.h"

static float f32_of(uint32_t b) {
  float f;
  memcpy(&f, &b, 4);
  return f;
}

/* the value of f16 bits, exactly */
static double f16_value(uint32_t h) {
  double s = (h & 0x8000u) ? -1.0 : 1.0;
  uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 31) return m ? NAN : s * INFINITY;
  if (e == 0) return s * ldexp((double)m, -24);
  return s * ldexp((double)(m | 0x400u), (int)e - 25);
}

/* the two agree: same value, same sign of zero, NaN for NaN */
static bool same(double a, double b) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  return a == b && signbit(a) == signbit(b);
}

static const struct {
  uint32_t f32, f16;
  const char *what;
} cases[] = {
    /* from numpy: np.float16(np.float32(x)) */
    {0x00000000u, 0x0000u, "0"},
    {0x80000000u, 0x8000u, "-0"},
    {0x3f800000u, 0x3c00u, "1"},
    {0xbf800000u, 0xbc00u, "-1"},
    {0x477fe000u, 0x7bffu, "65504, the largest f16"},
    {0x477fe100u, 0x7bffu, "65505"},
    {0x477fefffu, 0x7bffu, "65519.996 (just below the tie)"},
    {0x477ff000u, 0x7c00u, "65520 (the tie) -> inf"},
    {0xc77ff000u, 0xfc00u, "-65520 -> -inf"},
    {0x4788b800u, 0x7c00u, "70000 -> inf"},
    {0x7f7fffffu, 0x7c00u, "FLT_MAX -> inf"},
    {0x7f800000u, 0x7c00u, "inf"},
    {0xff800000u, 0xfc00u, "-inf"},
    {0x7fc00000u, 0x7e00u, "NaN"},
    {0x33800000u, 0x0001u, "2^-24, the smallest f16 subnormal"},
    {0xb3800000u, 0x8001u, "-2^-24"},
    {0x33000000u, 0x0000u, "2^-25 (the tie) -> 0"},
    {0x33000001u, 0x0001u, "just above 2^-25 -> 2^-24"},
    {0x33c00000u, 0x0002u, "3 * 2^-25 (a tie) -> 2 * 2^-24"},
    {0x32800000u, 0x0000u, "2^-26 -> 0"},
    {0x38800000u, 0x0400u, "2^-14, the smallest normal"},
    {0x387fc000u, 0x03ffu, "the largest subnormal"},
    {0x387ff000u, 0x0400u, "rounds up from subnormal to normal"},
    {0x387fda40u, 0x03ffu, "6.1e-5"},
    {0x3f801000u, 0x3c00u, "1 + 2^-11 (a tie) -> 1"},
    {0x3f803000u, 0x3c02u, "1 + 3 * 2^-11 (a tie) -> up to even"},
    {0x3f801008u, 0x3c01u, "just above the tie -> up"},
    {0x45001000u, 0x6800u, "2049 -> 2048"},
    {0x45003000u, 0x6802u, "2051 -> 2052"},
    {0x3dcccccdu, 0x2e66u, "0.1"},
    {0x322bcc77u, 0x0000u, "1e-8 -> 0"},
    {0x00000001u, 0x0000u, "the smallest f32 denormal -> 0"},
};

static void test_numpy_table(void) {
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    uint32_t k = nx_f16_bits(cases[i].f32);
    bool kok = isnan(f16_value(cases[i].f16)) ? isnan(f16_value(k)) && (k & 0x8000u) == (cases[i].f16 & 0x8000u)
                                               : k == cases[i].f16;
    CHECK(kok, "kernel rounding of 0x%08x (%s): 0x%04x, numpy 0x%04x", cases[i].f32, cases[i].what, k,
          cases[i].f16);
    double r = nxvk_f16_round((double)f32_of(cases[i].f32));
    CHECK(same(r, f16_value(cases[i].f16)), "reference rounding of 0x%08x (%s): %.9g, numpy %.9g",
          cases[i].f32, cases[i].what, r, f16_value(cases[i].f16));
  }
}

/* the kernel's and the reference's rounding agree on every f32 pattern of a
 * dense sweep (every 97th pattern: all exponents, many mantissas) */
static void test_kernel_vs_reference(void) {
  uint64_t n = 0, bad = 0;
  uint32_t first = 0;
  for (uint64_t b = 0; b <= 0xffffffffull; b += 97) {
    uint32_t x = (uint32_t)b;
    n++;
    if (!same(f16_value(nx_f16_bits(x)), nxvk_f16_round((double)f32_of(x))) && !bad++) first = x;
  }
  CHECK(bad == 0, "kernel and reference round %llu f32 patterns alike (%llu differ, first 0x%08x)",
        (unsigned long long)n, (unsigned long long)bad, first);
}

/* f16 -> f32 (every kernel's load of an f16): all 65 536 patterns, the
 * value exact, the sign of zero kept, a NaN's payload kept in the top
 * mantissa bits, and rounding back gives the same bits */
static void test_to_f32_all(void) {
  uint32_t bad = 0, first = 0;
  for (uint32_t h = 0; h < 65536u; h++) {
    float f = nx_f16_to_f32(h);
    uint32_t fb;
    memcpy(&fb, &f, 4);
    bool ok = same((double)f, f16_value(h)) && nx_f16_bits(fb) == h;
    if (isnan(f16_value(h))) ok = ok && (fb >> 31) == (h >> 15) && ((fb >> 13) & 0x3ffu) == (h & 0x3ffu);
    if (!ok && !bad++) first = h;
  }
  CHECK(bad == 0, "f16 -> f32 exact and round-trips on all 65536 patterns (%u differ, first 0x%04x)", bad,
        first);
}

/* the reference also takes f64 (conformance scales its bound with it) */
static void test_reference_f64(void) {
  CHECK(same(nxvk_f16_round(65519.999999), 65504.0), "f64 65519.999999 -> 65504");
  CHECK(same(nxvk_f16_round(1.0 + ldexp(1, -11) + ldexp(1, -40)), 1.0 + ldexp(1, -10)),
        "f64 just above a tie rounds up");
  CHECK(same(nxvk_f16_round(-ldexp(1, -30)), -0.0), "f64 -2^-30 -> -0");
}

static int round_stdin(void) {
  char line[64];
  while (fgets(line, sizeof line, stdin)) {
    uint32_t x = (uint32_t)strtoul(line, NULL, 16);
    double r = nxvk_f16_round((double)f32_of(x));
    uint64_t rb;
    memcpy(&rb, &r, 8);
    printf("%04x %016llx\n", nx_f16_bits(x), (unsigned long long)rb);
  }
  return fflush(stdout) == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--round") == 0) return round_stdin();
  if (argc != 1) {
    fprintf(stderr, "usage: test_f16 [--round]\n");
    return 2;
  }
  test_numpy_table();
  test_kernel_vs_reference();
  test_to_f32_all();
  test_reference_f64();
  return tap_done();
}
