#version 450
// copy_vec4.comp - a device-to-device copy of whole 16-byte words (uvec4
// loads and stores, four per invocation per pass, grid-stride): the copy at
// the bandwidth of the elementwise kernels, beside vkCmdCopyBuffer, which
// some drivers run on a slower engine (bench peak reports both).
// meta: [0] n, the count of 16-byte words
layout(local_size_x_id = 0) in;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) readonly buffer Src { uvec4 s[]; };
layout(std430, binding = 2) writeonly buffer Dst { uvec4 d[]; };

void main() {
  uint n = meta[pc.meta_off];
  uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  uint i = gl_GlobalInvocationID.x;
  // four independent loads in flight, then their stores
  for (; i + 3u * step < n; i += 4u * step) {
    uvec4 a = s[i], b = s[i + step], c = s[i + 2u * step], e = s[i + 3u * step];
    d[i] = a;
    d[i + step] = b;
    d[i + 2u * step] = c;
    d[i + 3u * step] = e;
  }
  for (; i < n; i += step) d[i] = s[i];
}
