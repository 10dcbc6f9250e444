#version 450
// iota.comp - out[i] = i, or the index along one axis; mode 2 is eye.
// meta: [0] n [1] inner (product of dims after axis) [2] axis dim [3] use
// axis (eye: [1] columns [2] rows [3] 2: 1 where row == column, else 0)
#extension GL_GOOGLE_include_directive : require
#include "dtype.glsl"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) writeonly buffer Out { ST y[]; };

void main() {
  uint m = pc.meta_off;
  uint n = meta[m], inner = meta[m + 1u], dim = meta[m + 2u], use_axis = meta[m + 3u];
  uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < n; i += step) {
    uint v = use_axis == 2u ? uint((i / inner) % dim == i % inner)
                            : (use_axis != 0u ? (i / inner) % dim : i);
    y[i] = STV(T(v));
  }
}
