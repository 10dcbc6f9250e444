/*
 * bits.h - what the math unit tests share: a seeded splitmix64 (the test
 * defines BITS_SEED before including this; `prog N SEED` overrides it) and
 * the float/double <-> bits moves.  One copy for test_nxmath and test_ieee.
 */
#ifndef NXVK_TEST_BITS_H
#define NXVK_TEST_BITS_H
#include <stdint.h>
#include <string.h>

static uint64_t rng_s = BITS_SEED;
static inline uint64_t rnd64(void) {
  uint64_t z = (rng_s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static inline float bits2f(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }
static inline uint32_t f2bits(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }
static inline double bits2d(uint64_t b) { double d; memcpy(&d, &b, 8); return d; }
static inline uint64_t d2bits(double d) { uint64_t b; memcpy(&b, &d, 8); return b; }

#endif
