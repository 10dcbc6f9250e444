#version 450
// trsm.comp - triangular_solve: one invocation per (matrix, right-hand
// side), substitution in order: forward for an effectively lower matrix,
// backward for an upper one (src/ops/linalg.c says how left_side, lower and
// transform_a make the effective matrix M).  Only M's triangle is read.
// Steps t0 .. t1-1 of the substitution in one dispatch (src/ops/linalg.c
// cuts n into blocks on lavapipe, whose loop guard stops long loops).
// meta: [0] n [1] m (right-hand sides) [2] batch [3] b's step along the
// solve [4] b's step between right-hand sides [5] M lower [6] M is a^T
// [7] t0 [8] t1
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) readonly buffer A { ST a[]; };
layout(std430, binding = 2) readonly buffer B { ST bv[]; };
layout(std430, binding = 3) buffer X { ST x[]; };

void main() {
  uint mo = pc.meta_off;
  uint n = meta[mo], m = meta[mo + 1u], batch = meta[mo + 2u], step = meta[mo + 3u], rhs = meta[mo + 4u];
  bool lower = meta[mo + 5u] != 0u, tr = meta[mo + 6u] != 0u;
  uint t0 = meta[mo + 7u], t1 = meta[mo + 8u];
  uint total = batch * m, gstep = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint idx = gl_GlobalInvocationID.x; idx < total; idx += gstep) {
    uint b = idx / m, r = idx - b * m;
    uint ao = b * n * n, bo = b * n * m + r * rhs;
    for (uint t = t0; t < t1; t++) {
      uint i = lower ? t : n - 1u - t;
      T v = bv[bo + i * step];
      for (uint u = 0u; u < t; u++) {
        uint j = lower ? u : n - 1u - u;
        T mij = tr ? a[ao + j * n + i] : a[ao + i * n + j];
        v -= mij * x[bo + j * step];
      }
      x[bo + i * step] = v / a[ao + i * n + i];
    }
  }
}
