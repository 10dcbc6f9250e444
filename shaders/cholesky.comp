#version 450
// cholesky.comp - A = L L^T, one workgroup per matrix (workgroups stride
// over the batch), column by column: the pivot by one invocation, then the
// column below it with rows spread over the workgroup; barriers between.
// Reads A's lower triangle only; writes zeros above the diagonal.  A
// non-positive pivot gives NaN from there on (sqrt of a negative number).
// Columns j0 .. j1-1 in one dispatch (src/ops/linalg.c cuts n into blocks
// on lavapipe, whose loop guard stops long shader loops).
// meta: [0] n [1] batch [2] j0 [3] j1
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) readonly buffer A { ST a[]; };
layout(std430, binding = 2) coherent buffer L { ST l[]; };

void main() {
  uint m = pc.meta_off;
  uint n = meta[m], batch = meta[m + 1u], j0 = meta[m + 2u], j1 = meta[m + 3u];
  uint tid = gl_LocalInvocationID.x, wg = gl_WorkGroupSize.x;
  for (uint b = gl_WorkGroupID.x; b < batch; b += gl_NumWorkGroups.x) {
    uint o = b * n * n;
    for (uint idx = tid; j0 == 0u && idx < n * n; idx += wg) {
      uint i = idx / n, j = idx - i * n;
      if (j > i) l[o + idx] = ST(0);
    }
    for (uint j = j0; j < j1; j++) {
      uint rj = o + j * n;
      if (tid == 0u) {
        T d = a[rj + j];
        for (uint k = 0u; k < j; k++) d -= l[rj + k] * l[rj + k];
        l[rj + j] = sqrt(d);
      }
      memoryBarrierBuffer();
      barrier();
      T djj = l[rj + j];
      for (uint i = j + 1u + tid; i < n; i += wg) {
        uint ri = o + i * n;
        T v = a[ri + j];
        for (uint k = 0u; k < j; k++) v -= l[ri + k] * l[rj + k];
        l[ri + j] = v / djj;
      }
      memoryBarrierBuffer();
      barrier();
    }
  }
}
