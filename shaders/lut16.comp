#version 450
// lut16.comp - a unary op on f16 or bf16 by table (NXVK_EW16_TABLE,
// elementwise.c): a 16-bit input has 65 536 values, so the op's whole
// result is a table of 65 536 16-bit words, made once per (op, dtype) and
// device by the CPU reference itself; out[i] = table[in[i]].  No float
// arithmetic runs here, so a driver that flushes denormals changes nothing.
// Elements two a word as the paired kernels (codegen.c): word i holds
// elements 2i and 2i+1, the last word of an odd count gets 0 in its upper
// half.  Whole 16-byte vectors of words (UNROLL a round per invocation, a
// workgroup apart), then the last words % 4 one a word in workgroup 0.
// The table two entries a word.  (Measured on an H100 and dropped: the
// table as uint16_t, the same rate; a window of it in each workgroup's
// shared memory, 0.6-0.7 of this; bench/NOTES.md.)
// meta: [0] n, the element count.
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint UNROLL = 1u;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) readonly buffer In { uvec4 v[]; } inv;
layout(std430, binding = 1) readonly buffer InW { uint v[]; } inw;
layout(std430, binding = 2) readonly buffer Tab { uint t[]; } tab;
uint look(uint h) { return (tab.t[h >> 1u] >> ((h & 1u) << 4u)) & 65535u; }
layout(std430, binding = 3) writeonly buffer Out { uvec4 v[]; } outv;
layout(std430, binding = 3) writeonly buffer OutW { uint v[]; } outw;

uint word(uint w) { return look(w & 65535u) | (look(w >> 16u) << 16u); }

void main() {
  uint n = meta[pc.meta_off];
  uint np = (n >> 1u) + (n & 1u);  // words
  uint nv = np >> 2u;              // whole vectors
  uint wg = gl_WorkGroupSize.x, lid = gl_LocalInvocationID.x;
  uint step = gl_NumWorkGroups.x * wg * UNROLL;
  for (uint b0 = gl_WorkGroupID.x * wg * UNROLL; b0 < nv; b0 += step) {
    uvec4 l[UNROLL];
    [[unroll]] for (uint u = 0u; u < UNROLL; u++) {
      uint j = b0 + u * wg + lid;
      if (j < nv) l[u] = inv.v[j];
    }
    [[unroll]] for (uint u = 0u; u < UNROLL; u++) {
      uint j = b0 + u * wg + lid;
      if (j < nv) {
        uvec4 w = uvec4(word(l[u].x), word(l[u].y), word(l[u].z), word(l[u].w));
        if (8u * j + 7u >= n) w.w &= 65535u;  // the last word of an odd count
        outv.v[j] = w;
      }
    }
  }
  uint i = 4u * nv + lid;
  if (gl_WorkGroupID.x == 0u && i < np) {
    uint w = word(inw.v[i]);
    outw.v[i] = 2u * i + 1u < n ? w : (w & 65535u);
  }
}
