/* glsl_compat.h - the C11 shim that lets shaders/lib/nxmath.glsl compile as C.
 *
 * Include this header, then nxmath.glsl:
 *     #include "glsl_compat.h"
 *     #include "nxmath.glsl"
 * The library is written in the common subset of GLSL 4.50 and C11; this file
 * supplies, for C, what GLSL has built in:
 *   - the types uint, uvec2 (x = low word, y = high word, as in GLSL) and the
 *     uvec2(a, b) constructor;
 *   - floatBitsToUint, uintBitsToFloat, packDouble2x32, unpackDouble2x32;
 *   - the overloaded builtins the library calls (floor, trunc, fma, sqrt):
 *     <tgmath.h> makes them type-generic, so fma(float, float, float) is fmaf;
 *   - NXFN (static inline), NX_PRECISE (GLSL `precise`; C relies on
 *     -ffp-contract=off instead), the conversions NX_F/NX_D/NX_I/NX_U, and the
 *     C names of the library's structs (GLSL names a struct type without the
 *     `struct` keyword).
 * Compile with -ffp-contract=off (or at most clang's default, contraction
 * within one expression) and without -ffast-math: the library's error-free
 * transformations (two-sum, Dekker's two-product) must not be contracted or
 * reassociated; the pragmas below enforce it where the compiler lets them. */
#ifndef NXVK_GLSL_COMPAT_H
#define NXVK_GLSL_COMPAT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <math.h>
#include <tgmath.h>

#define NXMATH_C 1

/* The error-free transformations (Dekker's splitting above all) need every
 * product rounded on its own: no a * b + c contraction across statements
 * (GLSL gets this from `precise`).  ISO-mode gcc and clang's default already
 * comply; these keep gnu-mode gcc (-ffp-contract=fast) from breaking it. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=off")
#elif defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

typedef unsigned int uint;
typedef struct { uint x, y; } uvec2;
/* GLSL's constructor; the function-like macro does not touch the type name. */
#define uvec2(a, b) ((uvec2){ (uint)(a), (uint)(b) })

#define NXFN static inline
#define NX_PRECISE
#define NX_F(x) ((float)(x))
#define NX_D(x) ((double)(x))
#define NX_I(x) ((int)(x))
#define NX_U(x) ((uint)(x))

static inline uint floatBitsToUint(float f) {
  uint u;
  memcpy(&u, &f, sizeof u);
  return u;
}
static inline float uintBitsToFloat(uint u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
static inline double packDouble2x32(uvec2 v) {
  uint64_t b = ((uint64_t)v.y << 32) | (uint64_t)v.x;
  double d;
  memcpy(&d, &b, sizeof d);
  return d;
}
static inline uvec2 unpackDouble2x32(double d) {
  uint64_t b;
  memcpy(&b, &d, sizeof b);
  return (uvec2){ (uint)(b & 0xffffffffu), (uint)(b >> 32) };
}

/* GLSL's findMSB (highest set bit, -1 for 0) and umulExtended (32 x 32 -> 64
 * bits; GLSL passes msb and lsb as out parameters, the macro assigns them). */
static inline int findMSB(uint x) { return x ? 31 - __builtin_clz(x) : -1; }
#define umulExtended(a, b, msb, lsb)                          \
  do {                                                        \
    uint64_t nx_p_ = (uint64_t)(uint)(a) * (uint64_t)(uint)(b); \
    (msb) = (uint)(nx_p_ >> 32);                              \
    (lsb) = (uint)nx_p_;                                      \
  } while (0)

/* struct tags of nxmath.glsl, usable without `struct` as in GLSL */
typedef struct nxff nxff;
typedef struct nxexpf nxexpf;
typedef struct nxdd nxdd;
typedef struct nxexpd nxexpd;
typedef struct nxredd nxredd;
typedef struct nxunpf nxunpf;
typedef struct nxredf nxredf;
typedef struct nxunpd nxunpd;

#endif
