/*
 * stress_bounds.c - `nxvk stress bounds`: every op of the table at sizes 0,
 * 1 and both sides of every power-of-two workgroup multiple up to 2^20
 * (255 256 257 ... 1048575 1048576 1048577), each result checked against the
 * reference; then absurd shapes, which the engine must refuse before any GPU
 * work (no buffer created, nothing submitted).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stress_common.h"

/* --quick: the first two workgroup multiples (256, 512) and the 2^16
 * boundary, where grid sizes and 16-bit index assumptions break; the sizes
 * near 2^20 cost a minute on lavapipe and are left to the full run. */
static const int64_t quick_sizes[] = {0, 1, 255, 256, 257, 511, 512, 513, 65535, 65536, 65537};

static int full_sizes(int64_t *out) {
  int n = 0;
  out[n++] = 0;
  out[n++] = 1;
  for (int p = 8; p <= 20; p++) {
    int64_t m = (int64_t)1 << p;
    out[n++] = m - 1;
    out[n++] = m;
    out[n++] = m + 1;
  }
  return n;
}

/* the dtype --quick uses for an op: f32 where it can, else its first */
static nxvk_dtype first_dtype(unsigned m) {
  if (m & NXVK_DT(NXVK_F32)) return NXVK_F32;
  for (int d = 0; d < NXVK_NDTYPES; d++)
    if (m & NXVK_DT(d)) return (nxvk_dtype)d;
  return NXVK_F32;
}

typedef struct absurd_shape {
  const char *what;
  nxvk_shape s;
} absurd_shape;

typedef struct absurd_tally {
  int tried, refused;
  char first_bad[400];
} absurd_tally;

static void tally(absurd_tally *t, bool ok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void tally(absurd_tally *t, bool ok, const char *fmt, ...) {
  t->tried++;
  if (ok) {
    t->refused++;
    return;
  }
  if (t->first_bad[0]) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(t->first_bad, sizeof t->first_bad, fmt, ap);
  va_end(ap);
}

/* A refusal that is an input error, not a device failure. */
static bool input_error(int rc) {
  return rc == NXVK_E_TOO_LARGE || rc == NXVK_E_BAD_REQUEST || rc == NXVK_E_BAD_ATTR ||
         rc == NXVK_E_SHAPE_MISMATCH;
}

/* Run op on inputs with attrs; it must refuse with no buffer made and
 * nothing submitted. */
static void expect_refusal(nxvk_ctx *c, absurd_tally *t, const char *what, const nxvk_op_desc *op,
                           const nxvk_attrs *a, nxvk_tensor *const *in, int nin) {
  nxvk_stats sb, sa;
  nxvk_ctx_stats(c, &sb);
  nxvk_tensor *out = NULL;
  int rc = nxvk_op_run(c, op, a, in, nin, &out);
  nxvk_ctx_stats(c, &sa);
  bool ok = input_error(rc) && out == NULL && sa.buffers_created == sb.buffers_created &&
            sa.submits == sb.submits;
  tally(t, ok, "%s %s: %s (%s)%s%s", op->name, what, nxvk_err_name(rc), rc ? nxvk_errmsg() : "accepted",
        sa.buffers_created != sb.buffers_created ? "; a buffer was created" : "",
        sa.submits != sb.submits ? "; work was submitted" : "");
  nxvk_tensor_free(out);
}

static void absurd_checks(nxvk_ctx *c, const stress_opts *o, stress_report *r) {
  const int64_t big = (int64_t)1 << 40;
  const absurd_shape shapes[] = {
      {"[2^40,2^40] (product overflows)", {2, {big, big}}},
      {"[2^62,2^62,4] (product overflows)", {3, {(int64_t)1 << 62, (int64_t)1 << 62, 4}}},
      {"rank 9", {9, {1, 1, 1, 1, 1, 1, 1, 1}}},
      {"rank -1", {-1, {0}}},
      {"[-2] (negative)", {1, {-2}}},
      {"[4,-3] (negative)", {2, {4, -3}}},
      {"[2^31] (over NXVK_MAX_ELEMENTS)", {1, {NXVK_MAX_ELEMENTS}}},
      {"[65536,32768] (2^31 elements)", {2, {65536, 32768}}},
      {"[2^31+1,1,1]", {3, {NXVK_MAX_ELEMENTS + 1, 1, 1}}},
  };
  const int nshapes = (int)(sizeof shapes / sizeof shapes[0]);
  absurd_tally t = {0};

  /* 1. tensors of absurd shape, every dtype */
  for (int i = 0; i < nshapes; i++)
    for (int d = 0; d < NXVK_NDTYPES; d++) {
      nxvk_stats sb, sa;
      nxvk_ctx_stats(c, &sb);
      nxvk_tensor *x = NULL;
      int rc = nxvk_tensor_new(c, (nxvk_dtype)d, &shapes[i].s, &x);
      nxvk_ctx_stats(c, &sa);
      tally(&t, input_error(rc) && x == NULL && sa.buffers_created == sb.buffers_created,
            "tensor %s %s: %s (%s)", nxvk_dtype_name((nxvk_dtype)d), shapes[i].what, nxvk_err_name(rc),
            rc ? nxvk_errmsg() : "accepted");
      nxvk_tensor_free(x);
    }

  /* 2. every op's shape rule on absurd operand shapes (no device involved) */
  for (int i = 0; i < nxvk_op_count(); i++) {
    const nxvk_op_desc *op = nxvk_op_at(i);
    if (o->only_op && op != o->only_op) continue;
    int nin = op->arity < 0 ? 2 : op->arity;
    if (nin == 0) continue;
    for (int s = 0; s < nshapes; s++) {
      nxvk_meta in[4];
      nxvk_dtype dt = first_dtype(op->dtypes);
      for (int k = 0; k < nin; k++) in[k] = (nxvk_meta){dt, shapes[s].s};
      if (op->kind == NXVK_KIND_SELECT) in[0].dtype = NXVK_U8;
      nxvk_meta out;
      int rc = nxvk_op_infer(op, NULL, in, nin, &out);
      tally(&t, input_error(rc) || rc == NXVK_E_BAD_ATTR, "%s shape rule on %s: %s (%s)", op->name,
            shapes[s].what, nxvk_err_name(rc), rc ? nxvk_errmsg() : "accepted");
    }
  }

  /* 3. absurd shapes as the "shape" attribute (sources, reshape), and
   * small real tensors whose result would be absurd (broadcasting and dot
   * to 2^32 elements) */
  for (int i = 0; i < nxvk_op_count(); i++) {
    const nxvk_op_desc *op = nxvk_op_at(i);
    if (o->only_op && op != o->only_op) continue;
    unsigned m = case_dtypes(c, op);
    if (!m) continue;
    nxvk_dtype dt = first_dtype(m);
    nxvk_tensor *in[3] = {0};
    int nin = 0, rc = NXVK_OK;
    if (op->attrs & NXVK_ATTR_SHAPE) {
      nin = op->arity > 0 ? op->arity : 0;
      for (int k = 0; k < nin && rc == NXVK_OK; k++) {
        rc = nxvk_tensor_new(c, dt, &(nxvk_shape){1, {4}}, &in[k]);
        if (rc == NXVK_OK) rc = nxvk_tensor_upload(c, in[k], (const char[32]){0}, 4 * nxvk_dtype_size(dt));
      }
      for (int s = 0; s < nshapes && rc == NXVK_OK; s++) {
        nxvk_attrs a = {0};
        a.set = NXVK_ATTR_SHAPE;
        a.shape = shapes[s].s;
        if (op->attrs & NXVK_ATTR_DTYPE) {
          a.set |= NXVK_ATTR_DTYPE;
          a.dtype = dt;
        }
        char what[160];
        snprintf(what, sizeof what, "shape=%s", shapes[s].what);
        expect_refusal(c, &t, what, op, &a, in, nin);
      }
    } else if (op->kind == NXVK_KIND_BINARY || op->kind == NXVK_KIND_COMPARE ||
               op->kind == NXVK_KIND_SELECT || op->kind == NXVK_KIND_DOT) {
      /* [65536,1] with [1,65536]: 2^32 result elements from 512 KiB of inputs */
      nin = op->kind == NXVK_KIND_SELECT ? 3 : 2;
      nxvk_shape col = {2, {65536, 1}}, row = {2, {1, 65536}};
      for (int k = 0; k < nin && rc == NXVK_OK; k++) {
        nxvk_dtype kd = (op->kind == NXVK_KIND_SELECT && k == 0) ? NXVK_U8 : dt;
        rc = nxvk_tensor_new(c, kd, k == 1 ? &row : &col, &in[k]);
      }
      if (rc == NXVK_OK)
        expect_refusal(c, &t, op->kind == NXVK_KIND_DOT ? "[65536,1]x[1,65536] (2^32 results)"
                                                        : "[65536,1] with [1,65536] (broadcast to 2^32)",
                       op, NULL, in, nin);
    }
    if (rc) tally(&t, false, "%s: making its small inputs failed: %s", op->name, nxvk_errmsg());
    for (int k = 0; k < 3; k++) nxvk_tensor_free(in[k]);
  }
  report_num(r, "absurd_cases", t.tried);
  report_num(r, "absurd_refused", t.refused);
  if (t.refused == t.tried)
    report_check(r, CHECK_PASS, "absurd shapes",
                 "%d of %d refused as input errors with no buffer created for them and nothing submitted",
                 t.refused, t.tried);
  else
    report_check(r, CHECK_FAIL, "absurd shapes", "%d of %d not refused cleanly; first: %s",
                 t.tried - t.refused, t.tried, t.first_bad);
}

int stress_bounds(nxvk_ctx *c, const stress_opts *o, stress_report *r) {
  int64_t sizes[64];
  int nsizes;
  if (o->quick) {
    nsizes = (int)(sizeof quick_sizes / sizeof quick_sizes[0]);
    memcpy(sizes, quick_sizes, sizeof quick_sizes);
  } else {
    nsizes = full_sizes(sizes);
  }
  stress_rng rng;
  rng_seed(&rng, o->seed ^ 0xb0ull);
  char list[400] = "";
  for (int i = 0; i < nsizes; i++) {
    size_t off = strlen(list);
    snprintf(list + off, sizeof list - off, "%s%lld", i ? " " : "", (long long)sizes[i]);
  }
  printf("== bounds: every op at sizes %s%s, seed %llu\n", list,
         o->quick ? " (--quick: one dtype per op)" : " (every dtype)", (unsigned long long)o->seed);
  fflush(stdout);
  report_str(r, "sizes", "%s", list);

  long cases = 0, wrong = 0, errors = 0, lost = 0, ops = 0, unbuilt = 0, refused = 0, uncompared = 0;
  char first_wrong[400] = "", first_error[400] = "", first_unbuilt[400] = "", first_uncompared[400] = "";
  double t0 = now_seconds();
  for (int i = 0; i < nxvk_op_count() && !lost; i++) {
    const nxvk_op_desc *op = nxvk_op_at(i);
    if (o->only_op && op != o->only_op) continue;
    unsigned m = case_dtypes(c, op);
    if (o->only_dtype >= 0) m &= NXVK_DT(o->only_dtype);
    if (!m) continue;
    if (o->quick) m = NXVK_DT(first_dtype(m));
    ops++;
    for (int d = 0; d < NXVK_NDTYPES && !lost; d++) {
      if (!(m & NXVK_DT(d))) continue;
      for (int s = 0; s < nsizes && !lost; s++) {
        /* the op's layouts (shapes, kernel variants, target dtypes) take turns over the sizes */
        int layout = (s + d) % case_layouts(op);
        int64_t n = sizes[s];
        stress_case k;
        if (case_build(&k, c, op, (nxvk_dtype)d, n, layout, &rng)) {
          if (!unbuilt++) snprintf(first_unbuilt, sizeof first_unbuilt, "%s", k.label);
          break;
        }
        case_result res;
        case_check(c, &k, &res);
        case_free(&k);
        cases++;
        if (res.kind == RESULT_WRONG && !wrong++) snprintf(first_wrong, sizeof first_wrong, "%s", res.detail);
        if (res.kind == RESULT_ERROR && !errors++) snprintf(first_error, sizeof first_error, "%s", res.detail);
        if (res.kind == RESULT_LOST && !lost++) snprintf(first_error, sizeof first_error, "%s", res.detail);
        if (res.kind == RESULT_REFUSED) refused++;
        if (res.kind == RESULT_UNCOMPARED && !uncompared++)
          snprintf(first_uncompared, sizeof first_uncompared, "%s", res.detail);
        if (res.kind == RESULT_UNCOMPARED) printf("  %-9s %s\n", "skipped", res.detail);
        else if (res.kind != RESULT_OK && res.kind != RESULT_REFUSED) printf("  %-9s %s\n", "bad", res.detail);
      }
    }
  }
  double secs = now_seconds() - t0;
  report_num(r, "ops", (double)ops);
  report_num(r, "cases", (double)cases);
  report_num(r, "engine_errors", (double)errors);
  report_num(r, "device_lost", (double)lost);
  report_num(r, "seconds", secs);
  if (unbuilt)
    report_check(r, CHECK_FAIL, "coverage", "%ld op/dtype pair(s) could not be built: %s", unbuilt, first_unbuilt);
  else if (ops == 0)
    report_check(r, CHECK_FAIL, "coverage", "no op ran (after --op/--dtype)");
  else
    report_check(r, CHECK_PASS, "coverage", "%ld ops of %d in the table, %ld cases", ops, nxvk_op_count(), cases);
  report_results(r, "cases", cases, wrong, first_wrong, refused, uncompared, first_uncompared);
  if (errors || lost)
    report_check(r, CHECK_FAIL, "errors", "%ld engine errors, %ld device lost; first: %s", errors, lost, first_error);
  else
    report_check(r, CHECK_PASS, "errors", "none");
  if (!lost) absurd_checks(c, o, r);
  report_summary(r, "%ld ops, %ld cases, %ld wrong, %ld errors, absurd shapes %s", ops, cases, wrong,
                 errors + lost, r->checks[r->nchecks - 1].status == CHECK_PASS ? "refused" : "NOT all refused");
  return EXIT_OK;
}
