#version 450
// dot_naive.comp - one invocation per output element: the reference point
// for the tiled kernel, and dot's kernel for f16 bf16 (f32 sums) and i32
// i64 (exact, wrapping).  meta: [0] M [1] N [2] K [3] batch
// -DOUT_F32 (f16 / bf16, dot's "dtype": "f32"): the f32 sums stored as they
// are, not rounded to the input dtype.
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) readonly buffer A { ST a[]; };
layout(std430, binding = 2) readonly buffer B { ST b[]; };
#ifdef OUT_F32
layout(std430, binding = 3) writeonly buffer C { float c[]; };
#define CST(x) (x)
#else
layout(std430, binding = 3) writeonly buffer C { ST c[]; };
#define CST(x) STV(x)
#endif

void main() {
  uint m = pc.meta_off;
  uint M = meta[m], N = meta[m + 1u], K = meta[m + 2u], batch = meta[m + 3u];
  uint total = M * N * batch;
  uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < total; i += step) {
    uint bi = i / (M * N), rem = i - bi * M * N;
    uint row = rem / N, col = rem - row * N;
    uint ao = bi * M * K + row * K, bo = bi * K * N + col;
    T acc = T(0);
#ifdef IS_FLOAT
    // f16 / bf16 load into f32 and sum there, rounded once at the store
    for (uint k = 0u; k < K; k++) acc = fma(LD(a[ao + k]), LD(b[bo + k * N]), acc);
#else
    // integers: exact, wrapping (two's complement)
    for (uint k = 0u; k < K; k++) acc += LD(a[ao + k]) * LD(b[bo + k * N]);
#endif
    c[i] = CST(acc);
  }
}
