// mvfold.glsl - split K's chunks of a skinny product summed by the last of
// the chunks' workgroups ("fold"): one dispatch instead of the product and
// dot_mv.comp's SUM pass, the same sums in the same order (chunk 0 + chunk 1
// + ...), so the results are bit-identical to that pass's.
// The includer declares, on the buffer its partials go to (binding 3, laid
// out [batch][S][M][N] in f32), coherent float cp[] and coherent vec4 cp4[]
// (coherent: another workgroup's are read back); the results cf[] (binding
// 4) with CST(x), a sum to cf's type; and uint count[] (binding 5), one
// count a workgroup of the grid's x and z, zero when the kernel starts.
// The block's last workgroup puts its count back to zero, so the next
// product finds them zero with nothing recorded in between
// (nxvk_rec_counts).
// mv_fold is called by every invocation of the workgroup (it has barriers)
// after its partials are written; it returns at once in all but the block's
// last workgroup, which writes rows [r0, r1) x columns [c0, c1) of the
// batch's results.
#define MV_FOLD_J 4u // chunks' loads in flight at once

shared bool mv_last_chunk;

void mv_fold(uint bi, uint S, uint M, uint N, uint r0, uint r1, uint c0, uint c1, uint t, uint nwg) {
  // the partials are out before the count says so; the workgroup that makes
  // the count S sees every chunk's partials of its block
  memoryBarrierBuffer();
  barrier();
  if (t == 0u) {
    uint at = bi * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    mv_last_chunk = atomicAdd(count[at], 1u) == S - 1u;
    // the others of the block have counted: zero again for the next product
    if (mv_last_chunk) atomicExchange(count[at], 0u);
  }
  barrier();
  if (!mv_last_chunk) return;
  memoryBarrierBuffer();
  uint nc = c1 - c0, total = (r1 > r0 ? r1 - r0 : 0u) * nc, chunk = M * N, base = bi * S * chunk;
  if (N % 4u == 0u && c0 % 4u == 0u && nc % 4u == 0u) {
    // four columns a load
    uint nq = nc / 4u;
    for (uint e = t; e < total / 4u; e += nwg) {
      uint o = (r0 + e / nq) * N + c0 + (e % nq) * 4u;
      vec4 s = cp4[(base + o) / 4u];
      for (uint j0 = 1u; j0 < S; j0 += MV_FOLD_J) {
        vec4 v[MV_FOLD_J];
        [[unroll]] for (uint u = 0u; u < MV_FOLD_J; u++)
          v[u] = j0 + u < S ? cp4[(base + (j0 + u) * chunk + o) / 4u] : vec4(0.0);
        [[unroll]] for (uint u = 0u; u < MV_FOLD_J; u++)
          if (j0 + u < S) s += v[u];
      }
      [[unroll]] for (uint x = 0u; x < 4u; x++) cf[bi * chunk + o + x] = CST(s[x]);
    }
  } else {
    for (uint e = t; e < total; e += nwg) {
      uint o = (r0 + e / nc) * N + c0 + e % nc;
      float s = cp[base + o];
      for (uint j0 = 1u; j0 < S; j0 += MV_FOLD_J) {
        float v[MV_FOLD_J];
        [[unroll]] for (uint u = 0u; u < MV_FOLD_J; u++) v[u] = j0 + u < S ? cp[base + (j0 + u) * chunk + o] : 0.0;
        [[unroll]] for (uint u = 0u; u < MV_FOLD_J; u++)
          if (j0 + u < S) s += v[u];
      }
      cf[bi * chunk + o] = CST(s);
    }
  }
}
