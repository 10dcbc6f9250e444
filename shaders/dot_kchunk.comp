#version 450
// dot_kchunk.comp - the first pass of a split-K product: every row's k range
// cut into S chunks of LC words, each chunk of all R rows made its own
// contiguous matrix, so that the S partial products run as one batch on the
// unsplit kernel (dot_vec.comp) before dot_ksum adds them:
// [batch][R][L] -> [batch][S][R][LC], zeros past the end of a row.  A is
// R = M rows of L = K elements; B, whose chunks are already whole rows, is
// copied (R = 1, L = K * N) only to pad it when S * KC > K.  Words, not
// elements (f64: two per element), so one kernel moves every dtype bit for
// bit.
// Rows of a multiple of 4 words (L, and LC, a multiple of BK elements) are
// moved 16 bytes at a time, the index arithmetic once per 4 words.
// meta: [0] R [1] L [2] LC [3] S [4] n = batch * S * R * LC
layout(local_size_x_id = 0) in;
layout(push_constant) uniform PC { uint meta_off; } pc;
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) readonly buffer Src { uint s[]; };
layout(std430, binding = 1) readonly buffer SrcV { uvec4 sv[]; };
layout(std430, binding = 2) writeonly buffer Dst { uint d[]; };
layout(std430, binding = 2) writeonly buffer DstV { uvec4 dv[]; };

void main() {
  uint m = pc.meta_off;
  uint R = meta[m], L = meta[m + 1u], LC = meta[m + 2u], S = meta[m + 3u], n = meta[m + 4u];
  uint V = (L % 4u == 0u && LC % 4u == 0u) ? 4u : 1u;   // words per access
  uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x, lc = LC / V;
  for (uint i = gl_GlobalInvocationID.x; i < n / V; i += step) {
    uint row = i / lc, w = (i - row * lc) * V;   // row of the [batch][S][R] stack
    uint bs = row / R, r = row - bs * R;          // bs = bi * S + chunk
    uint bi = bs / S, k = (bs - bi * S) * LC + w, src = (bi * R + r) * L + k;
    if (V == 4u)
      dv[i] = k < L ? sv[src / 4u] : uvec4(0u);   // L % 4 == 0: all or none of the 4 past the end
    else
      d[i] = k < L ? s[src] : 0u;
  }
}
