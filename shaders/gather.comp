#version 450
// gather.comp - one kernel for gather, take, take_along_axis and
// dynamic_slice: every output element reads one input element whose offset
// is a static part (strides per output dimension) plus K index lookups,
// each clamped into [0, lim] as Nx clamps dynamic indices.  A bit copy:
// compiled per element size (-DEB_1/2/4/8) and index dtype (-DIX_<d>) at run
// time (src/ops/rtkernel.c).
//
// meta: [0] n [1] rank [2] K [3] KS [4] src base [5] idx base
//       [6..13] out dims [14..21] src stride per out dim (A)
//       [22..29] idx stride per out dim (B) [30..37] src stride per k (S)
//       [38..45] lim per k.  Index k of output element c is at
//       idx base + sum(c_d * B_d) + k * KS.
#extension GL_GOOGLE_include_directive : require
#if defined(EB_1)
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#define E uint8_t
#elif defined(EB_2)
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#define E uint16_t
#elif defined(EB_4)
#define E uint
#elif defined(EB_8)
#define E uvec2
#else
#error "compile with -DEB_<bytes>"
#endif
#define IDX_BINDING 2

layout(local_size_x_id = 0) in;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) readonly buffer Src { E s[]; };
layout(std430, binding = 3) writeonly buffer Dst { E d[]; };
#include "index.glsl"

void main() {
  uint m = pc.meta_off;
  uint n = meta[m], rank = meta[m + 1u], K = meta[m + 2u], KS = meta[m + 3u];
  uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < n; i += step) {
    uint si = meta[m + 4u], ii = meta[m + 5u], r = i;
    for (int k = int(rank) - 1; k >= 0; k--) {
      uint dim = meta[m + 6u + uint(k)];
      uint q = r / dim, c = r - q * dim;
      si += c * meta[m + 14u + uint(k)];
      ii += c * meta[m + 22u + uint(k)];
      r = q;
    }
    for (uint k = 0u; k < K; k++) {
      bool inr;
      si += load_index(ii + k * KS, meta[m + 38u + k], inr) * meta[m + 30u + k];
    }
    d[i] = s[si];
  }
}
