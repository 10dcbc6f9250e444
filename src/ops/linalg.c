/*
 * linalg.c - cholesky and triangular_solve on batches of square matrices
 * (the last two axes), as Nx.LinAlg defines them.
 *
 * cholesky: A = L L^T for each symmetric positive definite A; L lower, the
 * upper triangle zeros; only A's lower triangle is read.  A matrix that is
 * not positive definite gives NaN from its first non-positive pivot on (the
 * square root of a negative number; Nx's default adds 1e-10 to pivots).
 *
 * triangular_solve(a, b): op(a) x = b ("left_side": true, the default) or
 * x op(a) = b (false), op(a) = a or a^T ("transform_a": "none" or
 * "transpose"), a lower ("lower": true, the default) or upper triangular:
 * only that triangle is read.  b is [..., n] (one right-hand side) or
 * [..., n, m] (left) / [..., m, n] (right), with a's batch axes.  A zero on
 * the diagonal gives infinities or NaN (Nx raises).
 *
 * Both reduce to one effective triangular matrix M with M z = c per
 * right-hand side: M = op(a) on the left, op(a)^T on the right (x op(a) = b
 * is op(a)^T x^T = b^T), so the right-hand sides are b's columns on the left
 * and its rows on the right.  The reference computes in long double; the
 * kernels (linalg.comp) run one workgroup per matrix (cholesky, column by
 * column) and one invocation per right-hand side (triangular_solve).
 */
#include "ops.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Shape of the triangular solve: batch count, n, right-hand sides m, and the
 * element strides of b (and x) along the solve (n) and across rhs (m). */
typedef struct {
  int64_t batch, n, m, b_step, b_rhs;
  bool lower_eff, transposed;
} trsm_plan;

static void trsm_make(const nxvk_attrs *a, const nxvk_shape *as, const nxvk_shape *bs, trsm_plan *p) {
  int r = as->rank;
  p->n = as->dim[r - 1];
  p->batch = 1;
  for (int d = 0; d < r - 2; d++) p->batch *= as->dim[d];
  bool vec = bs->rank == r - 1;
  if (vec) {
    p->m = 1;
    p->b_step = 1;
    p->b_rhs = 0;
  } else if (!a->right_side) { /* b [n, m]: columns are the rhs */
    p->m = bs->dim[r - 1];
    p->b_step = p->m;
    p->b_rhs = 1;
  } else { /* b [m, n]: rows are the rhs */
    p->m = bs->dim[r - 2];
    p->b_step = 1;
    p->b_rhs = p->n;
  }
  /* M = op(a) (left) or op(a)^T (right): transposed an odd number of times? */
  p->transposed = a->transpose_a != a->right_side;
  p->lower_eff = !a->upper != p->transposed;
}

int nxvk_linalg_infer(const nxvk_op *op, const nxvk_attrs *a, const nxvk_meta *in, int nin, nxvk_meta *out) {
  (void)a;
  char b1[160], b2[160];
  const nxvk_shape *as = &in[0].shape;
  const char *name = op->d.name;
  if (as->rank < 2 || as->dim[as->rank - 1] != as->dim[as->rank - 2])
    return nxvk_seterr(NXVK_E_SHAPE_MISMATCH, "%s: a %s is not a square matrix or a batch of them", name,
                       nxvk_shape_str(as, b1, sizeof b1));
  out->dtype = in[0].dtype;
  if (op->code == NXVK_LINALG_CHOLESKY) {
    out->shape = *as;
    return NXVK_OK;
  }
  (void)nin;
  if (in[1].dtype != in[0].dtype)
    return nxvk_seterr(NXVK_E_DTYPE_MISMATCH, "%s: a is %s, b is %s (use as_type)", name,
                       nxvk_dtype_name(in[0].dtype), nxvk_dtype_name(in[1].dtype));
  const nxvk_shape *bs = &in[1].shape;
  int r = as->rank;
  int64_t n = as->dim[r - 1];
  bool ok = bs->rank == r - 1 || bs->rank == r;
  for (int d = 0; ok && d < r - 2; d++) ok = bs->dim[d] == as->dim[d];
  if (ok && bs->rank == r - 1) ok = bs->dim[r - 2] == n;
  if (ok && bs->rank == r) ok = bs->dim[a->right_side ? r - 1 : r - 2] == n;
  if (!ok)
    return nxvk_seterr(NXVK_E_SHAPE_MISMATCH,
                       "%s: b %s does not fit a %s: b is [..., n], or [..., n, m] (left_side) or [..., m, n] "
                       "(left_side false) with a's batch axes",
                       name, nxvk_shape_str(bs, b2, sizeof b2), nxvk_shape_str(as, b1, sizeof b1));
  out->shape = *bs;
  return NXVK_OK;
}

/* ---- the reference ---- */

static int cholesky_ref(const nxvk_host *A, nxvk_host *L) {
  const nxvk_shape *s = &A->shape;
  int64_t n = s->dim[s->rank - 1], nn = n * n, batch = n ? nxvk_host_count(A) / nn : 0;
  for (int64_t b = 0; b < batch; b++) {
    int64_t o = b * nn;
    for (int64_t j = 0; j < n; j++) {
      long double d = nxvk_host_get(A, o + j * n + j);
      for (int64_t k = 0; k < j; k++) {
        long double l = nxvk_host_get(L, o + j * n + k);
        d -= l * l;
      }
      long double djj = sqrtl(d);
      /* stored rounded (what the kernel divides by, up to its own sums) */
      nxvk_host_set(L, o + j * n + j, (double)djj);
      for (int64_t i = j + 1; i < n; i++) {
        long double v = nxvk_host_get(A, o + i * n + j);
        for (int64_t k = 0; k < j; k++)
          v -= (long double)nxvk_host_get(L, o + i * n + k) * nxvk_host_get(L, o + j * n + k);
        nxvk_host_set(L, o + i * n + j, (double)(v / djj));
      }
      for (int64_t i = 0; i < j; i++) nxvk_host_set(L, o + i * n + j, 0.0);
    }
  }
  return NXVK_OK;
}

static int trsm_ref(const nxvk_attrs *at, const nxvk_host *A, const nxvk_host *B, nxvk_host *X) {
  trsm_plan p;
  trsm_make(at, &A->shape, &B->shape, &p);
  int64_t n = p.n, nn = n * n, per_b = n * p.m;
  for (int64_t b = 0; b < p.batch; b++)
    for (int64_t r = 0; r < p.m; r++) {
      int64_t ao = b * nn, bo = b * per_b + r * p.b_rhs;
      for (int64_t t = 0; t < n; t++) {
        int64_t i = p.lower_eff ? t : n - 1 - t;
        long double v = nxvk_host_get(B, bo + i * p.b_step);
        for (int64_t u = 0; u < t; u++) {
          int64_t j = p.lower_eff ? u : n - 1 - u;
          long double mij = nxvk_host_get(A, ao + (p.transposed ? j * n + i : i * n + j));
          v -= mij * (long double)nxvk_host_get(X, bo + j * p.b_step);
        }
        v /= (long double)nxvk_host_get(A, ao + i * n + i);
        /* rounded to the dtype as the kernel keeps it */
        nxvk_host_set(X, bo + i * p.b_step, X->dtype == NXVK_F64 ? (double)v : (double)(float)v);
      }
    }
  return NXVK_OK;
}

int nxvk_linalg_ref(const nxvk_op *op, const nxvk_attrs *a, const nxvk_host *in, int nin, nxvk_host *out) {
  (void)nin;
  if (op->code == NXVK_LINALG_CHOLESKY) return cholesky_ref(&in[0], out);
  return trsm_ref(a, &in[0], &in[1], out);
}

/* ---- the GPU ---- */

#define LINALG_WG 256u

/* Steps (columns, substitution rows) per dispatch: all n, except on
 * lavapipe, whose guard stops shader loops past 65535 iterations (a
 * 300 x 300 cholesky went wrong from column 250 in one dispatch): there
 * blocks of about 16384 / n steps, so no invocation loops that long. */
static uint64_t linalg_block(nxvk_ctx *c, uint64_t n) {
  if (!strstr(c->info.driver_name, "llvmpipe") || n == 0) return n ? n : 1;
  uint64_t b = 16384 / n;
  return b ? b : 1;
}

int nxvk_linalg_gpu(nxvk_rec *r, const nxvk_op *op, const nxvk_attrs *a, nxvk_tensor *const *in, int nin,
                    nxvk_tensor *out) {
  (void)nin;
  nxvk_ctx *c = nxvk_rec_ctx(r);
  char name[40];
  const char *dt = nxvk_dtype_name(out->dtype);
  uint32_t spec[1] = {LINALG_WG};
  if (out->count == 0) return NXVK_OK;
  if (op->code == NXVK_LINALG_CHOLESKY) {
    const nxvk_shape *s = &in[0]->shape;
    uint64_t n = (uint64_t)s->dim[s->rank - 1], batch = (uint64_t)out->count / (n * n);
    uint32_t groups = batch < c->info.max_workgroup_count[0] ? (uint32_t)batch : c->info.max_workgroup_count[0];
    snprintf(name, sizeof name, "cholesky_%s", dt);
    nxvk_buffer *bufs[2] = {in[0]->buf, out->buf};
    uint64_t blk = linalg_block(c, n);
    int rc = NXVK_OK;
    for (uint64_t j0 = 0; rc == NXVK_OK && j0 < n; j0 += blk) {
      uint32_t meta[4] = {(uint32_t)n, (uint32_t)batch, (uint32_t)j0, (uint32_t)(j0 + blk < n ? j0 + blk : n)};
      rc = nxvk_dispatch_grid(r, name, spec, 1, meta, 4, bufs, 2, groups, 1, 1);
    }
    return rc;
  }
  trsm_plan p;
  trsm_make(a, &in[0]->shape, &in[1]->shape, &p);
  snprintf(name, sizeof name, "trsm_%s", dt);
  nxvk_buffer *bufs[3] = {in[0]->buf, in[1]->buf, out->buf};
  uint64_t n = (uint64_t)p.n, blk = linalg_block(c, n);
  int rc = NXVK_OK;
  for (uint64_t t0 = 0; rc == NXVK_OK && t0 < n; t0 += blk) {
    uint32_t meta[9] = {(uint32_t)p.n, (uint32_t)p.m, (uint32_t)p.batch, (uint32_t)p.b_step, (uint32_t)p.b_rhs,
                        p.lower_eff ? 1u : 0u, p.transposed ? 1u : 0u, (uint32_t)t0,
                        (uint32_t)(t0 + blk < n ? t0 + blk : n)};
    rc = nxvk_dispatch_1d(r, name, spec, 1, meta, 9, bufs, 3, (uint64_t)p.batch * p.m);
  }
  return rc;
}
