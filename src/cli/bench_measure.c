/*
 * bench_measure.c - the method of `nxvk bench` (DESIGN.md, "Benchmark
 * method"): random inputs, one check against the CPU reference before any
 * timing, a warm-up, then repeated runs summarised as median, min and max.
 * Also the two modes built on ops: the per-op sweep and the matmul ladder.
 *
 * Ops are chosen from the op table by the caller; nothing here knows an op by
 * name.  Operands follow from the op's kind and arity.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "cases.h"


/* Returns an engine code (0 or NXVK_E_*), which the caller reports.  GPU
 * measurements warm up for --warmup seconds as well: a GPU raises its clocks
 * only after some time under load, and one run is far too short for that. */
static int repeat_runs(const bench_opts *o, int warmups, bool gpu, bench_fn fn, void *arg, bench_stat *st) {
  memset(st, 0, sizeof *st);
  double t0 = nxvk_now_ns(), ns;
  int done = 0;
  while (done < warmups || (gpu && warmups > 0 && nxvk_now_ns() - t0 < o->warmup * 1e9)) {
    int rc = fn(arg, &ns);
    if (rc) return rc;
    done++;
  }
  double warm_each = done ? (nxvk_now_ns() - t0) / done : 0;
  int cap = o->repeat > 0 ? (int)o->repeat : 1000;
  /* three runs at least, unless one run already outlasts --min-time */
  int min_runs = o->repeat > 0 ? (int)o->repeat : (warm_each >= o->min_time * 1e9 ? 1 : 3);
  double *v = malloc((size_t)cap * sizeof *v);
  if (!v) return NXVK_E_NO_MEMORY;
  int n = 0;
  double start = nxvk_now_ns();
  while (n < cap) {
    int rc = fn(arg, &v[n]);
    if (rc) {
      free(v);
      return rc;
    }
    n++;
    if (o->repeat == 0 && n >= min_runs && nxvk_now_ns() - start >= o->min_time * 1e9) break;
  }
  qsort(v, (size_t)n, sizeof *v, nxvk_cmp_double);
  st->have = true;
  st->repeats = n;
  st->min = v[0];
  st->max = v[n - 1];
  st->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  free(v);
  return NXVK_OK;
}

int bench_repeat(const bench_opts *o, int warmups, bool gpu, bench_fn fn, void *arg, bench_stat *st) {
  if (gpu) bench_busy_pause();
  int rc = repeat_runs(o, warmups, gpu, fn, arg, st);
  if (gpu) bench_busy_resume();
  return rc;
}

/* progress lines: bench_output.c */

/* ---- inputs ---- */


/* The case maker's timing values (cases.h: FILL_TIMING) for a buffer that
 * is no op case's input, from the bench's RNG. */
void bench_fill_random(bench_ctx *b, nxvk_host *h) { cases_fill_timing(h, &b->rng); }

/* ---- problems: an op, its operands and attributes at one size ---- */

enum { MAX_OPERANDS = 3 };

typedef struct problem {
  bench_ctx *b;
  const nxvk_op_desc *op;
  nxvk_attrs attrs;
  nxvk_dtype dtype;
  int64_t size;
  int nin;
  nxvk_meta meta[MAX_OPERANDS], out;
  nxvk_host in[MAX_OPERANDS], down;
  nxvk_tensor *t[MAX_OPERANDS];
  bool timestamps;
  int dispatches; /* per timed kernel run (kernel_once); 1 until measure() picks */
  char why[240];  /* plan: the case maker's reason when it has no rule */
} problem;

/* Operands from the one case maker (cases.c), in the form a benchmark times:
 * elementwise and reductions (over all axes) take 1-D tensors of `size`; dot
 * takes square [n,n] with n = round(sqrt(size)) (matmul passes n itself with
 * square_n); select a 0/1 predicate first; sources make `size` elements
 * through their shape attribute. */
static int plan(problem *p, const nxvk_op_desc *op, nxvk_dtype d, int64_t size, bool square_n) {
  memset(p, 0, sizeof *p);
  p->op = op;
  p->dtype = d;
  p->size = size;
  conf_case k;
  int64_t n = square_n && op->kind == NXVK_KIND_DOT ? size * size : size;
  case_req req = {.op = op, .dt = d, .n = n, .layout = CASES_PLAIN, .fill = FILL_TIMING, .dtypes_ok = op->dtypes};
  int rc = cases_one(&req, &k);
  if (rc == NXVK_OK && k.nin > MAX_OPERANDS) {
    snprintf(k.where, sizeof k.where, "%s: %d operands, bench times at most %d", op->name, k.nin, MAX_OPERANDS);
    rc = NXVK_E_UNSUPPORTED;
  }
  if (rc) {
    snprintf(p->why, sizeof p->why, "%s", k.where);
    return rc;
  }
  p->attrs = k.attrs;
  p->nin = k.nin;
  for (int i = 0; i < k.nin; i++) p->meta[i] = (nxvk_meta){k.dt[i], k.shape[i]};
  return nxvk_op_infer(op, &p->attrs, p->meta, p->nin, &p->out);
}

/* dot on [b,]m,k x [b,]k,n as --shapes gives it (dims[0] = 0: not batched) */
static int plan_dims(problem *p, const nxvk_op_desc *op, nxvk_dtype d, const int64_t dims[4]) {
  memset(p, 0, sizeof *p);
  p->op = op;
  p->dtype = d;
  p->nin = 2;
  nxvk_shape x = {2, {dims[1], dims[2]}}, y = {2, {dims[2], dims[3]}};
  if (dims[0]) {
    x = (nxvk_shape){3, {dims[0], dims[1], dims[2]}};
    y = (nxvk_shape){3, {dims[0], dims[2], dims[3]}};
  }
  p->meta[0] = (nxvk_meta){d, x};
  p->meta[1] = (nxvk_meta){d, y};
  p->size = dims[1];
  return nxvk_op_infer(op, &p->attrs, p->meta, p->nin, &p->out);
}

bool bench_ops_plan_ok(const nxvk_op_desc *op, nxvk_dtype d, char *why, size_t len) {
  problem p;
  if (plan(&p, op, d, 16, false) == NXVK_OK) return true;
  snprintf(why, len, "%s", p.why[0] ? p.why : nxvk_errmsg());
  return false;
}

static void problem_free(problem *p) {
  for (int i = 0; i < p->nin; i++) {
    nxvk_tensor_free(p->t[i]);
    nxvk_host_free(&p->in[i]);
    p->t[i] = NULL;
  }
  nxvk_host_free(&p->down);
}

static int64_t meta_count(const nxvk_meta *m) {
  int64_t n = 0;
  return nxvk_shape_count(&m->shape, &n) ? -1 : n;
}

static double meta_bytes(const nxvk_meta *m) {
  return (double)meta_count(m) * (double)nxvk_dtype_size(m->dtype);
}

/* Bytes a run reads and writes at least: every operand once, the result once. */
static double problem_bytes(const problem *p) {
  double s = meta_bytes(&p->out);
  for (int i = 0; i < p->nin; i++) s += meta_bytes(&p->meta[i]);
  return s;
}

/* conv: 2 x outputs x (kernel elements per output channel); the bench's
 * cases take the identity permutations (kernel [O, I, K...]) */
static double conv_flops(const problem *p) {
  int64_t no = meta_count(&p->out), nk = meta_count(&p->meta[1]), O = p->meta[1].shape.dim[0];
  return O > 0 ? 2.0 * (double)no * (double)(nk / O) : 0;
}

static double dot_flops(const problem *p) {
  const nxvk_shape *x = &p->meta[0].shape, *y = &p->meta[1].shape;
  int r = x->rank;
  double batch = r == 3 ? (double)x->dim[0] : 1;
  return 2.0 * batch * (double)x->dim[r - 2] * (double)x->dim[r - 1] * (double)y->dim[r - 1];
}

/* Work of one reference run, for predicting its time from another size. */
static double ref_work(const problem *p) {
  if (p->op->kind == NXVK_KIND_DOT) return dot_flops(p) / 2;
  if (p->op->kind == NXVK_KIND_CONV) return conv_flops(p) / 2;
  return problem_bytes(p);
}

/* Why this size cannot run here (NULL when it can). */
static const char *too_big(const problem *p, const nxvk_device_info *info, char *buf, size_t len) {
  const nxvk_meta *all[MAX_OPERANDS + 1] = {&p->out};
  int n = 1;
  for (int i = 0; i < p->nin; i++) all[n++] = &p->meta[i];
  for (int i = 0; i < n; i++) {
    if (meta_count(all[i]) < 0) {
      snprintf(buf, len, "over the element limit (%lld per tensor)", (long long)NXVK_MAX_ELEMENTS);
      return buf;
    }
    double bytes = meta_bytes(all[i]);
    if (bytes > (double)info->max_storage_buffer_range) {
      snprintf(buf, len, "a %.0f MiB tensor is over the device's storage buffer range (%.0f MiB)",
               bytes / 1048576, (double)info->max_storage_buffer_range / 1048576);
      return buf;
    }
  }
  return NULL;
}

/* --fill normal and bits: a float operand's values again (bench.h) */
static void refill(nxvk_host *h, int fill, uint64_t *rng) {
  int64_t n = nxvk_host_count(h);
  size_t sz = nxvk_dtype_size(h->dtype);
  if (fill == BENCH_FILL_TIMING || !nxvk_dtype_is_float(h->dtype)) return;
  /* normal: the first NORMAL_SEED values by Box-Muller, then blocks of them
   * copied from random places (64M values one by one took ~5 s on the
   * H100's host, too long for a GPU call) */
  enum { NORMAL_SEED = 1 << 20, NORMAL_BLOCK = 4096 };
  int64_t direct = fill == BENCH_FILL_NORMAL && n > NORMAL_SEED ? NORMAL_SEED : n;
  for (int64_t i = 0; i < n; i++) {
    if (fill == BENCH_FILL_NORMAL) {
      if (i >= direct) {
        int64_t k = n - i < NORMAL_BLOCK ? n - i : NORMAL_BLOCK;
        int64_t from = (int64_t)(nxvk_splitmix64(rng) % (uint64_t)(NORMAL_SEED - NORMAL_BLOCK));
        memcpy((char *)h->data + i * (int64_t)sz, (char *)h->data + from * (int64_t)sz, (size_t)k * sz);
        i += k - 1;
        continue;
      }
      double u = ((double)(nxvk_splitmix64(rng) >> 11) + 0.5) * 0x1p-53, v = nxvk_rand_unit(rng);
      nxvk_host_set(h, i, sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v));
      continue;
    }
    for (;;) { /* bits: uniform over the patterns that are not NaN */
      uint64_t b = nxvk_splitmix64(rng);
      if (sz == 2) {
        uint16_t w = (uint16_t)b;
        bool nan = h->dtype == NXVK_F16 ? (w & 0x7c00) == 0x7c00 && (w & 0x3ff) : (w & 0x7f80) == 0x7f80 && (w & 0x7f);
        if (nan) continue;
        ((uint16_t *)h->data)[i] = w;
      } else if (sz == 4) {
        uint32_t w = (uint32_t)b;
        if ((w & 0x7f800000u) == 0x7f800000u && (w & 0x7fffffu)) continue;
        ((uint32_t *)h->data)[i] = w;
      } else {
        if ((b & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (b & 0xfffffffffffffull)) continue;
        ((uint64_t *)h->data)[i] = b;
      }
      break;
    }
  }
}

static int problem_upload(problem *p) {
  for (int i = 0; i < p->nin; i++) {
    int rc = nxvk_host_alloc(&p->in[i], p->meta[i].dtype, &p->meta[i].shape);
    if (rc) return rc;
  }
  /* the case maker's inputs for the op, timing class (select's predicate from its rule) */
  conf_case k = {.nin = p->nin, .fill = FILL_TIMING};
  for (int i = 0; i < p->nin; i++) k.dt[i] = p->meta[i].dtype, k.shape[i] = p->meta[i].shape;
  if (cases_fill(NULL, p->op, &k, false, nxvk_splitmix64(&p->b->rng), p->in))
    return NXVK_E_UNSUPPORTED; /* no rule for the op's kind: plan would have said so first */
  if (p->b->o->fill != BENCH_FILL_TIMING && p->op->kind != NXVK_KIND_SELECT)
    for (int i = 0; i < p->nin; i++) refill(&p->in[i], p->b->o->fill, &p->b->rng);
  for (int i = 0; i < p->nin; i++) {
    int rc = nxvk_tensor_from_host(p->b->ctx, &p->in[i], &p->t[i]);
    if (rc) return rc;
  }
  return nxvk_host_alloc(&p->down, p->out.dtype, &p->out.shape);
}

/* ---- one run of each kind ---- */

/* Kernel time per dispatch: p->dispatches copies of the op back to back in
 * one submission, timed together.  One short dispatch per submit + wait
 * leaves the GPU idle half the time, and its governor may then keep the SM
 * clock low for whole measurements (bench/NOTES.md, measuring). */
enum { BENCH_MAX_DISPATCHES = 64 };
#define BENCH_RUN_NS 500e3                     /* a timed run lasts about this long */
#define BENCH_RUN_OUT_BYTES (512.0 * 1048576)  /* and holds at most this much output */

static int kernel_once(void *arg, double *ns) {
  problem *p = arg;
  nxvk_batch *bt;
  nxvk_tensor *out[BENCH_MAX_DISPATCHES] = {0};
  int n = p->dispatches > 1 ? p->dispatches : 1;
  int rc = nxvk_batch_begin(p->b->ctx, NXVK_BATCH_TIMESTAMPS, &bt);
  if (rc) return rc;
  for (int i = 0; i < n && rc == NXVK_OK; i++) rc = nxvk_batch_op(bt, p->op, &p->attrs, p->t, p->nin, &out[i]);
  if (rc) {
    nxvk_batch_abort(bt);
  } else {
    double t0 = nxvk_now_ns();
    rc = nxvk_batch_submit(bt, ns);
    if (!p->timestamps) *ns = nxvk_now_ns() - t0; /* no timestamps: submit + wait */
    *ns /= n;
  }
  for (int i = 0; i < n; i++) nxvk_tensor_free(out[i]);
  return rc;
}

/* How many dispatches a timed run takes: enough for BENCH_RUN_NS, judged
 * from the fastest of three single ones. */
static int pick_dispatches(problem *p) {
  double best = 0, ns;
  p->dispatches = 1;
  for (int i = 0; i < 3; i++) {
    int rc = kernel_once(p, &ns);
    if (rc) return rc;
    if (i == 0 || ns < best) best = ns;
  }
  double by_time = best > 0 ? ceil(BENCH_RUN_NS / best) : BENCH_MAX_DISPATCHES;
  double by_bytes = floor(BENCH_RUN_OUT_BYTES / meta_bytes(&p->out));
  double n = by_time < by_bytes ? by_time : by_bytes;
  p->dispatches = n < 1 ? 1 : n > BENCH_MAX_DISPATCHES ? BENCH_MAX_DISPATCHES : (int)n;
  return NXVK_OK;
}

/* End to end as a user of the engine sees it: host tensors in, host tensor
 * out, through nxvk_op_run_host (upload, op and download in one submission). */
static int e2e_once(void *arg, double *ns) {
  problem *p = arg;
  nxvk_host out = {0};
  double t0 = nxvk_now_ns();
  int rc = nxvk_op_run_host(p->b->ctx, p->op, &p->attrs, p->in, p->nin, &out);
  *ns = nxvk_now_ns() - t0;
  nxvk_host_free(&out);
  return rc;
}

static int cpu_once(void *arg, double *ns) {
  problem *p = arg;
  nxvk_host ref = {0};
  double t0 = nxvk_now_ns();
  int rc = nxvk_op_ref(p->op, &p->attrs, p->in, p->nin, &ref);
  *ns = nxvk_now_ns() - t0;
  nxvk_host_free(&ref);
  return rc;
}

/* ---- the check before timing ---- */

/* The first elements of h, as many as shape holds, as a new tensor of that shape. */
static int host_prefix(const nxvk_host *h, const nxvk_shape *shape, nxvk_host *out) {
  int rc = nxvk_host_alloc(out, h->dtype, shape);
  if (rc == NXVK_OK && nxvk_host_bytes(out)) memcpy(out->data, h->data, nxvk_host_bytes(out));
  return rc;
}

/* First `rows` rows (or elements) of h as a new host tensor. */
static int host_head(const nxvk_host *h, int64_t rows, nxvk_host *out) {
  nxvk_shape s = h->shape;
  s.dim[0] = rows;
  return host_prefix(h, &s, out);
}

static bool is_elementwise(nxvk_kind k) {
  return k == NXVK_KIND_UNARY || k == NXVK_KIND_BINARY || k == NXVK_KIND_COMPARE || k == NXVK_KIND_SELECT;
}

typedef struct check_result {
  double ref_ns, ref_work;   /* one reference run, for predicting the full one */
  bool full;                 /* the reference ran on the timed size itself */
} check_result;

/* Judge got against the reference on in (nxvk_check: the op's limit, the
 * device's freedom to flush denormals); a result over the limit is the
 * bench's failure (exit 1). */
static int compare_or_fail(const problem *p, bench_row *row, const nxvk_host *in, int nin,
                           const nxvk_host *got, check_result *cr, double work) {
  nxvk_host ref = {0};
  double t0 = nxvk_now_ns();
  int rc = nxvk_op_ref(p->op, &p->attrs, in, nin, &ref);
  cr->ref_ns = nxvk_now_ns() - t0;
  cr->ref_work = work;
  nxvk_cmp cmp;
  if (rc == NXVK_OK) rc = nxvk_check(&p->b->info, p->op, &p->attrs, in, nin, got, &ref, &cmp);
  nxvk_host_free(&ref);
  if (rc) return cli_engine_error(rc);
  row->max_abs = cmp.max_abs;
  row->max_ulp = cmp.max_ulp;
  if (cmp.bad) {
    nxvk_limit lim;
    char shape[96];
    nxvk_op_limit(p->op, nin ? in[nin - 1].dtype : got->dtype, &lim);
    nxvk_shape_str(&row->shape, shape, sizeof shape);
    bench_progress_done(p->b);
    fprintf(stderr,
            "nxvk: error: bench: %s %s %s: wrong GPU result (check: %s): %lld of %lld elements "
            "over the limit (%s); first at [%lld]: got %.17g, want %.17g\n",
            p->op->name, nxvk_dtype_name(p->dtype), shape, row->check, (long long)cmp.bad,
            (long long)cmp.n, lim.text, (long long)cmp.worst, cmp.worst_got, cmp.worst_ref);
    return EXIT_FAIL;
  }
  return EXIT_OK;
}

/* In full when the result has at most BENCH_CHECK_FULL_MAX elements and the
 * reference costs at most BENCH_CHECK_REF_OPS (elements read and written, or
 * multiply-adds for dot): a reduction of 64M elements is still checked whole.
 * Otherwise elementwise ops compare the first BENCH_CHECK_SLICE elements of
 * the same result, dot the first rows of its result, and other kinds a
 * separate run at BENCH_CHECK_SLICE elements. */
static int check_problem(problem *p, bench_row *row, check_result *cr) {
  nxvk_ctx *c = p->b->ctx;
  nxvk_tensor *res = NULL;
  nxvk_host got = {0}, part[MAX_OPERANDS] = {{0}}, got_part = {0};
  int status = EXIT_OK, rc = nxvk_op_run(c, p->op, &p->attrs, p->t, p->nin, &res);
  if (rc == NXVK_OK) rc = nxvk_tensor_to_host(c, res, &got);
  nxvk_tensor_free(res);
  if (rc) return cli_engine_error(rc);
  int64_t nout = nxvk_host_count(&got);
  bool is_dot = p->op->kind == NXVK_KIND_DOT;
  memset(cr, 0, sizeof *cr);

  double cost = is_dot ? dot_flops(p) / 2 : (double)nout;
  for (int i = 0; i < p->nin && !is_dot; i++) cost += (double)meta_count(&p->meta[i]);
  if (nout <= BENCH_CHECK_FULL_MAX && cost <= (double)BENCH_CHECK_REF_OPS) {
    snprintf(row->check, sizeof row->check, "full");
    cr->full = true;
    status = compare_or_fail(p, row, p->in, p->nin, &got, cr, ref_work(p));
  } else if (is_elementwise(p->op->kind)) {
    int64_t k = BENCH_CHECK_SLICE < nout ? BENCH_CHECK_SLICE : nout;
    snprintf(row->check, sizeof row->check, "first %lld elements", (long long)k);
    for (int i = 0; i < p->nin && rc == NXVK_OK; i++) rc = host_head(&p->in[i], k, &part[i]);
    if (rc == NXVK_OK) rc = host_head(&got, k, &got_part);
    if (rc == NXVK_OK) {
      double work = ref_work(p) * (double)k / (double)nout;
      status = compare_or_fail(p, row, part, p->nin, &got_part, cr, work);
    }
  } else if (is_dot) {
    /* the first rows (of the first batch): contiguous prefixes of A, B, C */
    const nxvk_shape *xs = &p->meta[0].shape;
    int r = xs->rank;
    int64_t m = xs->dim[r - 2], kk = xs->dim[r - 1], n = p->meta[1].shape.dim[r - 1];
    int64_t rows = BENCH_CHECK_REF_OPS / (kk * n > 0 ? kk * n : 1);
    if (rows < 1) rows = 1;
    if (rows > m) rows = m;
    snprintf(row->check, sizeof row->check, r == 3 ? "first %lld rows of batch 0" : "first %lld rows",
             (long long)rows);
    nxvk_shape sa = {2, {rows, kk}}, sb = {2, {kk, n}}, sc = {2, {rows, n}};
    rc = host_prefix(&p->in[0], &sa, &part[0]);
    if (rc == NXVK_OK) rc = host_prefix(&p->in[1], &sb, &part[1]);
    if (rc == NXVK_OK) rc = host_prefix(&got, &sc, &got_part);
    if (rc == NXVK_OK)
      status = compare_or_fail(p, row, part, 2, &got_part, cr, (double)rows * (double)kk * (double)n);
  } else if (p->op->kind == NXVK_KIND_CONV && p->attrs.conv.batch_groups <= 1 && !p->attrs.conv.nperm_in &&
             !p->attrs.conv.nperm_out && nout > 0) {
    /* the first images of the batch (the bench's conv is [N, C, ...] with
     * one batch group: image n's output reads image n alone), so the check
     * runs the timed kernel on its own shape */
    int64_t n = p->meta[0].shape.dim[0], per = (int64_t)(conv_flops(p) / 2) / n;
    int64_t imgs = BENCH_CHECK_REF_OPS / (per > 0 ? per : 1);
    if (imgs < 1) imgs = 1;
    if (imgs > n) imgs = n;
    snprintf(row->check, sizeof row->check, "first %lld images", (long long)imgs);
    rc = host_head(&p->in[0], imgs, &part[0]);
    if (rc == NXVK_OK) rc = host_prefix(&p->in[1], &p->in[1].shape, &part[1]);
    if (rc == NXVK_OK) rc = host_head(&got, imgs, &got_part);
    if (rc == NXVK_OK) status = compare_or_fail(p, row, part, 2, &got_part, cr, (double)per * (double)imgs);
  } else {
    /* the result depends on all of the input: check the kernel on a smaller run */
    problem small;
    rc = plan(&small, p->op, p->dtype, BENCH_CHECK_SLICE, false);
    small.b = p->b;
    snprintf(row->check, sizeof row->check, "separate %lld-element run", (long long)BENCH_CHECK_SLICE);
    if (rc == NXVK_OK) rc = problem_upload(&small);
    if (rc == NXVK_OK) rc = nxvk_op_run(c, small.op, &small.attrs, small.t, small.nin, &res);
    if (rc == NXVK_OK) rc = nxvk_tensor_to_host(c, res, &got_part);
    nxvk_tensor_free(res);
    if (rc == NXVK_OK) status = compare_or_fail(&small, row, small.in, small.nin, &got_part, cr, ref_work(&small));
    problem_free(&small);
  }
  if (rc) status = cli_engine_error(rc);
  for (int i = 0; i < MAX_OPERANDS; i++) nxvk_host_free(&part[i]);
  nxvk_host_free(&got_part);
  nxvk_host_free(&got);
  return status;
}

/* ---- one measurement: check, kernel time, end-to-end, CPU reference ---- */

enum { WANT_E2E = 1, WANT_CPU = 2 };

static void add_note(bench_row *row, const char *text) {
  size_t n = strlen(row->note);
  snprintf(row->note + n, sizeof row->note - n, "%s%s", n ? "; " : "", text);
}

/* dot's coopmat variant on f32: its two f16_pack passes (A and B rounded
 * into zero-padded f16 copies) timed alone, as the engine runs them, so the
 * row can say how much of its time is the conversion.  ns = 0 where the
 * device has no coopmat or the operands are not f32. */
static int coopmat_pack_ns(problem *p, double *ns) {
  *ns = 0;
  if (p->op->kind != NXVK_KIND_DOT || p->dtype != NXVK_F32 || !(p->attrs.set & NXVK_ATTR_VARIANT) ||
      strcmp(p->attrs.variant, "coopmat") != 0)
    return NXVK_OK;
  const nxvk_shape *xs = &p->meta[0].shape;
  int r = xs->rank;
  uint32_t batch = r == 3 ? (uint32_t)xs->dim[0] : 1, M = (uint32_t)xs->dim[r - 2], K = (uint32_t)xs->dim[r - 1],
           N = (uint32_t)p->meta[1].shape.dim[r - 1], pad[3];
  if (!nxvk_dot_coopmat_padding(p->b->ctx, M, K, N, pad)) return NXVK_OK;
  const nxvk_device_info *d = &p->b->info;
  for (int i = 0; i < 2; i++) {
    uint32_t rows = i ? K : M, cols = i ? N : K, rp = i ? pad[1] : pad[0], cp = i ? pad[2] : pad[1];
    uint64_t words = (uint64_t)batch * rp * cp / 2;
    nxvk_shape s = {1, {(int64_t)words}};
    nxvk_tensor *dst = NULL;
    int rc = nxvk_tensor_new(p->b->ctx, NXVK_F32, &s, &dst);
    if (rc) return rc;
    uint32_t meta[5] = {rows, cols, rp, cp, (uint32_t)words}, spec[1] = {256};
    uint64_t groups = (words + 255) / 256;
    if (groups > d->max_workgroup_count[0]) groups = d->max_workgroup_count[0];
    nxvk_tensor *bufs[2] = {p->t[i], dst};
    double best = 0;
    for (int rep = 0; rep < 4 && rc == NXVK_OK; rep++) { /* one warm-up, the best of three */
      double t = 0;
      rc = nxvk_bench_kernel(p->b->ctx, "f16_pack", spec, 1, meta, 5, bufs, 2, (uint32_t)groups, &t);
      if (rep == 1 || (rep > 1 && t < best)) best = t;
    }
    nxvk_tensor_free(dst);
    if (rc) return rc;
    *ns += best;
  }
  return NXVK_OK;
}

static int measure(bench_ctx *b, problem *p, bench_row *row, unsigned want, const char *label) {
  p->b = b;
  p->timestamps = b->info.timestamps;
  row->max_abs = row->max_ulp = NAN;
  int rc = problem_upload(p);
  if (rc) return cli_engine_error(rc);
  check_result cr;
  bench_progress(b, "%s: check", label);
  int status = check_problem(p, row, &cr);
  if (status) return status;
  if (!p->timestamps) add_note(row, "no timestamps: kernel time is submit + wait");
  bench_progress(b, "%s: kernel", label);
  bench_busy_pause(); /* the dispatch count is judged from timed runs too */
  rc = pick_dispatches(p);
  if (rc == NXVK_OK) rc = bench_repeat(b->o, 1, true, kernel_once, p, &row->gpu);
  double pack_ns = 0;
  if (rc == NXVK_OK && p->timestamps) rc = coopmat_pack_ns(p, &pack_ns);
  bench_busy_resume();
  if (rc == NXVK_OK && pack_ns > 0) {
    char text[200];
    double flops = dot_flops(p), kern = row->gpu.median - pack_ns;
    snprintf(text, sizeof text,
             "of its %.4g us, the f16 conversion of A and B (f16_pack, timed alone) takes %.4g us; the "
             "tensor-core kernel about %.4g us (%.4g GFLOPS)",
             row->gpu.median / 1e3, pack_ns / 1e3, kern / 1e3, kern > 0 ? flops / kern : NAN);
    add_note(row, text);
  }
  if (rc == NXVK_OK && (want & WANT_E2E)) {
    bench_progress(b, "%s: end to end", label);
    rc = bench_repeat(b->o, 1, true, e2e_once, p, &row->e2e);
  }
  if (rc) return cli_engine_error(rc);
  if (want & WANT_CPU) {
    double predicted = cr.ref_work > 0 ? cr.ref_ns * ref_work(p) / cr.ref_work : 0;
    if (predicted > b->o->cpu_limit * 1e9) {
      char why[128];
      snprintf(why, sizeof why, "CPU reference not timed: one run would take about %.3g s (--cpu-limit %g)",
               predicted / 1e9, b->o->cpu_limit);
      add_note(row, why);
    } else {
      /* a full check already ran the reference once: that was its warm-up */
      bench_progress(b, "%s: CPU reference", label);
      rc = bench_repeat(b->o, cr.full ? 0 : 1, false, cpu_once, p, &row->cpu);
      if (rc) return cli_engine_error(rc);
    }
  }
  row->bytes = problem_bytes(p);
  row->gbps = row->bytes / row->gpu.median;   /* bytes per ns = GB/s */
  row->speedup = row->cpu.have ? row->cpu.median / row->gpu.median : NAN;
  row->speedup_e2e = row->cpu.have && row->e2e.have ? row->cpu.median / row->e2e.median : NAN;
  row->flops = p->op->kind == NXVK_KIND_DOT ? dot_flops(p) : p->op->kind == NXVK_KIND_CONV ? conv_flops(p) : 0;
  row->gflops = row->flops ? row->flops / row->gpu.median : NAN;
  row->gflops_min = row->flops ? row->flops / row->gpu.max : NAN;
  row->gflops_max = row->flops ? row->flops / row->gpu.min : NAN;
  row->pct_peak = NAN;
  return EXIT_OK;
}

static bench_row *new_row(bench_ctx *b, const char *mode, const problem *p) {
  bench_row *row = bench_add_row(b->rep);
  if (!row) return NULL;
  row->device = b->device;
  row->mode = mode;
  snprintf(row->name, sizeof row->name, "%s", p->op->name);
  row->dtype = nxvk_dtype_name(p->dtype);
  row->size = p->size;
  row->shape = p->nin ? p->meta[0].shape : p->out.shape;
  row->gbps = row->gflops = row->gflops_min = row->gflops_max = NAN;
  row->speedup = row->speedup_e2e = row->pct_peak = row->latency_us = NAN;
  row->max_abs = row->max_ulp = NAN;
  return row;
}

/* Rows are added before they are measured; a failed one is taken back. */
static void drop_last_row(bench_ctx *b) { b->rep->nrows--; }

/* --sweep FILE: lines "NAME VAR=VALUE ..." ('#' starts a comment); each
 * product of matmul and shapes runs again under each line's variables (the
 * previous line's put back first, each as it was before that line: set to
 * its value or unset; the context's tuning read again), checked
 * and timed as the default was, on the same inputs: a row each, with NAME
 * as its variant.  A NAME starting with '~' is a timing diagnostic (e.g.
 * NXVK_DOT_COOPMAT_DIAG): not checked, its check column says so.  A line the context refuses is a note.  Afterwards the
 * variables are as they were before the sweep and the tuning read again. */
enum { SWEEP_MAX = 48, SWEEP_VARS = 8 };
typedef struct {
  char name[16];
  char var[SWEEP_VARS][40], val[SWEEP_VARS][40];
  int nvars;
} sweep_line;

static int sweep_error(const char *path, int lineno, const char *what) {
  fprintf(stderr, "nxvk: error: bench: --sweep %s", path);
  if (lineno) fprintf(stderr, ":%d", lineno);
  fprintf(stderr, ": %s\n", what);
  return EXIT_USAGE;
}

static int sweep_read(const char *path, sweep_line *lines, int *n) {
  FILE *f = fopen(path, "r");
  *n = 0;
  if (!f) return sweep_error(path, 0, "cannot read it");
  char buf[512];
  int status = EXIT_OK, lineno = 0;
  while (status == EXIT_OK && fgets(buf, sizeof buf, f)) {
    lineno++;
    char *hash = strchr(buf, '#');
    if (hash) *hash = '\0';
    char *save = NULL, *tok = strtok_r(buf, " \t\r\n", &save);
    if (!tok) continue;
    if (*n == SWEEP_MAX) {
      status = sweep_error(path, lineno, "more than 48 lines");
      break;
    }
    sweep_line *l = &lines[(*n)++];
    memset(l, 0, sizeof *l);
    snprintf(l->name, sizeof l->name, "%s", tok);
    while ((tok = strtok_r(NULL, " \t\r\n", &save))) {
      char *eq = strchr(tok, '=');
      if (!eq || eq == tok || l->nvars == SWEEP_VARS || (size_t)(eq - tok) >= sizeof l->var[0] ||
          strlen(eq + 1) >= sizeof l->val[0]) {
        status = sweep_error(path, lineno, "want NAME VAR=VALUE ... (at most 8 variables, each under 40 characters)");
        break;
      }
      snprintf(l->var[l->nvars], sizeof l->var[0], "%.*s", (int)(eq - tok), tok);
      snprintf(l->val[l->nvars], sizeof l->val[0], "%s", eq + 1);
      l->nvars++;
    }
  }
  fclose(f);
  return status;
}

/* A line's variables back as they were before sweep_set (old[i]: the
 * value, NULL: unset), the last first, so that a variable named twice gets
 * its value from before the line. */
static void sweep_restore(const sweep_line *l, int n, char **old) {
  for (int i = n - 1; l && i >= 0; i--) {
    if (old[i]) setenv(l->var[i], old[i], 1);
    else unsetenv(l->var[i]);
    free(old[i]);
    old[i] = NULL;
  }
}

/* Set a line's variables, keeping their values (strdup'd) in old. */
static int sweep_set(const sweep_line *l, char **old) {
  for (int i = 0; i < l->nvars; i++) {
    const char *v = getenv(l->var[i]);
    old[i] = v ? strdup(v) : NULL;
    if (v && !old[i]) {
      sweep_restore(l, i, old);
      return NXVK_E_NO_MEMORY;
    }
    setenv(l->var[i], l->val[i], 1);
  }
  return NXVK_OK;
}

static void set_rates(bench_row *row, problem *p) {
  row->bytes = problem_bytes(p);
  row->gbps = row->bytes / row->gpu.median;
  row->flops = p->op->kind == NXVK_KIND_DOT ? dot_flops(p) : 0;
  row->gflops = row->flops ? row->flops / row->gpu.median : NAN;
  row->gflops_min = row->flops ? row->flops / row->gpu.max : NAN;
  row->gflops_max = row->flops ? row->flops / row->gpu.min : NAN;
}

static int sweep_rows(bench_ctx *b, problem *p, const bench_row *base, const char *label) {
  static sweep_line lines[SWEEP_MAX];
  int n = 0, status = sweep_read(b->o->sweep, lines, &n);
  const sweep_line *prev = NULL;
  char *old[SWEEP_VARS] = {NULL};
  bool failed = false;
  for (int i = 0; status == EXIT_OK && i < n; i++) {
    const sweep_line *l = &lines[i];
    sweep_restore(prev, prev ? prev->nvars : 0, old);
    prev = NULL;
    if (sweep_set(l, old) != NXVK_OK) {
      status = cli_engine_error(NXVK_E_NO_MEMORY);
      break;
    }
    prev = l;
    char what[160];
    snprintf(what, sizeof what, "%.100s (--sweep %.15s)", label, l->name);
    bench_busy_pause();
    int rc = nxvk_ctx_retune(b->ctx);
    bench_busy_resume();
    if (rc) {
      bench_add_skip(b, base->mode, base->name, base->dtype, base->size, "%s: %s", what, nxvk_errmsg());
      continue;
    }
    bench_row *row = bench_add_row(b->rep);
    if (!row) {
      status = cli_engine_error(NXVK_E_NO_MEMORY);
      break;
    }
    base = &b->rep->rows[b->rep->nrows - 2]; /* the rows may have moved */
    *row = *base;
    snprintf(row->variant, sizeof row->variant, "%.15s", l->name);
    row->note[0] = row->check[0] = '\0';
    row->gpu = (bench_stat){0};
    row->max_abs = row->max_ulp = NAN;
    check_result cr;
    bench_progress(b, "%s: check", what);
    bool diagnostic = l->name[0] == '~'; /* a timing diagnostic: its result is not the product */
    int st = diagnostic ? EXIT_OK : check_problem(p, row, &cr);
    if (diagnostic) snprintf(row->check, sizeof row->check, "none (diagnostic)");
    if (st == EXIT_OK) {
      bench_progress(b, "%s: kernel", what);
      bench_busy_pause();
      rc = pick_dispatches(p);
      if (rc == NXVK_OK) rc = bench_repeat(b->o, 1, true, kernel_once, p, &row->gpu);
      bench_busy_resume();
      if (rc) st = cli_engine_error(rc);
    }
    if (st) { /* a wrong or failed product: a note, the next line, and the command fails */
      failed = true;
      drop_last_row(b);
      bench_add_skip(b, base->mode, base->name, base->dtype, base->size, "%s: failed (%s)", what, nxvk_errmsg());
      base = &b->rep->rows[b->rep->nrows - 1];
      continue;
    }
    set_rates(row, p);
    if (strcmp(row->mode, "ops") == 0) row->pct_peak = b->peak_copy_gbps > 0 ? 100 * row->gbps / b->peak_copy_gbps : NAN;
    else row->pct_peak = b->peak_fma[p->dtype] > 0 ? 100 * row->gflops / b->peak_fma[p->dtype] : NAN;
    bench_progress_done(b);
    bench_print_row(row);
  }
  sweep_restore(prev, prev ? prev->nvars : 0, old);
  bench_busy_pause();
  int rc = nxvk_ctx_retune(b->ctx);
  bench_busy_resume();
  if (status == EXIT_OK && rc) status = cli_engine_error(rc);
  return status == EXIT_OK && failed ? EXIT_FAIL : status;
}

/* Measure a new row's problem (freed here), take the row back if that
 * failed, else set its share of the roofline (ops: of the copy bandwidth;
 * matmul and shapes: of the FMA rate of its dtype) and print it. */
static int measure_row(bench_ctx *b, problem *p, bench_row *row, unsigned want, const char *label) {
  nxvk_dtype dt = p->dtype;
  int status = measure(b, p, row, want, label);
  /* --sweep: matmul's products, and ops' reductions (their knobs' A/B on one input) */
  bool ops = strcmp(row->mode, "ops") == 0;
  if (status == EXIT_OK && b->o->sweep &&
      ((p->op->kind == NXVK_KIND_DOT && !ops) || (p->op->kind == NXVK_KIND_REDUCE && ops))) {
    if (ops) row->pct_peak = b->peak_copy_gbps > 0 ? 100 * row->gbps / b->peak_copy_gbps : NAN;
    else if (b->peak_fma[dt] > 0) row->pct_peak = 100 * row->gflops / b->peak_fma[dt];
    bench_progress_done(b);
    bench_print_row(row);
    status = sweep_rows(b, p, row, label);
    problem_free(p);
    return status;
  }
  problem_free(p);
  if (status) {
    drop_last_row(b);
    return status;
  }
  if (ops) {
    if (b->peak_copy_gbps > 0) row->pct_peak = 100 * row->gbps / b->peak_copy_gbps;
  } else if (b->peak_fma[dt] > 0) {
    row->pct_peak = 100 * row->gflops / b->peak_fma[dt];
  }
  bench_progress_done(b);
  bench_print_row(row);
  return EXIT_OK;
}

/* dtype the device or the op cannot take: one note each, not per size */
static bool dtype_usable(bench_ctx *b, const char *mode, const nxvk_op_desc *op, nxvk_dtype d) {
  if (!(op->dtypes & NXVK_DT(d))) {
    bench_add_skip(b, mode, op->name, nxvk_dtype_name(d), 0, "%s does not take %s", op->name,
                   nxvk_dtype_name(d));
    return false;
  }
  if (!nxvk_ctx_supports(b->ctx, d)) {
    bench_add_skip(b, mode, op->name, nxvk_dtype_name(d), 0, "%s cannot compute %s", b->info.name,
                   nxvk_dtype_name(d));
    return false;
  }
  return true;
}

int bench_ops(bench_ctx *b) {
  const bench_opts *o = b->o;
  static const int64_t default_sizes[] = {1 << 10, 16 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20};
  const int64_t *sizes = o->sizes_given ? o->sizes : default_sizes;
  int nsizes = o->sizes_given ? o->nsizes : (int)(sizeof default_sizes / sizeof default_sizes[0]);
  nxvk_dtype dts[NXVK_NDTYPES] = {NXVK_F32};
  int ndts = 1;
  if (o->dtypes_given) {
    memcpy(dts, o->dtypes, sizeof dts);
    ndts = o->ndtypes;
  }
  bench_print_header("ops");
  for (int i = 0; i < o->nops; i++)
    for (int d = 0; d < ndts; d++) {
      if (!dtype_usable(b, "ops", o->ops[i], dts[d])) continue;
      for (int s = 0; s < nsizes; s++) {
        problem p;
        char why[160], sz[32];
        int rc = plan(&p, o->ops[i], dts[d], sizes[s], false);
        if (rc == NXVK_E_TOO_LARGE) {
          bench_add_skip(b, "ops", p.op->name, nxvk_dtype_name(p.dtype), p.size, "%s", nxvk_errmsg());
          continue;
        }
        if (rc) return cli_engine_error(rc);
        if (too_big(&p, &b->info, why, sizeof why)) {
          bench_add_skip(b, "ops", p.op->name, nxvk_dtype_name(p.dtype), p.size, "%s", why);
          continue;
        }
        char label[96];
        bench_fmt_count(sz, sizeof sz, p.size);
        snprintf(label, sizeof label, "ops %s %s %s", p.op->name, nxvk_dtype_name(p.dtype), sz);
        bench_row *row = new_row(b, "ops", &p);
        if (!row) return cli_engine_error(NXVK_E_NO_MEMORY);
        int status = measure_row(b, &p, row, WANT_E2E | WANT_CPU, label);
        if (status) return status;
      }
    }
  return EXIT_OK;
}

static bool variant_chosen(const bench_opts *o, const char *v) {
  if (!o->variants) return true;
  size_t n = strlen(v);
  for (const char *p = o->variants; (p = strstr(p, v)) != NULL; p += n)
    if ((p == o->variants || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) return true;
  return false;
}

/* --shapes: odd, non-square and batched products through the default
 * variant, to be read against the square ladder. */
static int matmul_shapes(bench_ctx *b, const nxvk_op_desc *op, const nxvk_dtype *dts, int ndts) {
  const bench_opts *o = b->o;
  bench_print_header("shapes");
  for (int d = 0; d < ndts; d++) {
    if (!nxvk_ctx_supports(b->ctx, dts[d]) || !(op->dtypes & NXVK_DT(dts[d]))) continue; /* noted by the ladder */
    for (int s = 0; s < o->nshapes; s++) {
      const int64_t *dims = o->shapes[s];
      problem p;
      char why[160], label[96], text[64];
      if (dims[0])
        snprintf(text, sizeof text, "%lldx%lldx%lldx%lld", (long long)dims[0], (long long)dims[1],
                 (long long)dims[2], (long long)dims[3]);
      else
        snprintf(text, sizeof text, "%lldx%lldx%lld", (long long)dims[1], (long long)dims[2], (long long)dims[3]);
      int rc = plan_dims(&p, op, dts[d], dims);
      if (rc == NXVK_E_TOO_LARGE) {
        bench_add_skip(b, "shapes", op->name, nxvk_dtype_name(dts[d]), 0, "%s: %s", text, nxvk_errmsg());
        continue;
      }
      if (rc) return cli_engine_error(rc);
      if (too_big(&p, &b->info, why, sizeof why)) {
        bench_add_skip(b, "shapes", op->name, nxvk_dtype_name(dts[d]), 0, "%s: %s", text, why);
        continue;
      }
      snprintf(label, sizeof label, "shapes %s %s %s", op->name, nxvk_dtype_name(p.dtype), text);
      bench_row *row = new_row(b, "shapes", &p);
      if (!row) return cli_engine_error(NXVK_E_NO_MEMORY);
      const char *const *variants;
      snprintf(row->variant, sizeof row->variant, "%s", nxvk_op_variants(op, &variants) > 0 ? variants[0] : "default");
      snprintf(row->dims, sizeof row->dims, "%s", text);
      int status = measure_row(b, &p, row, 0, label);
      if (status) return status;
    }
  }
  return EXIT_OK;
}

int bench_matmul(bench_ctx *b) {
  const bench_opts *o = b->o;
  static const int64_t default_sizes[] = {128, 256, 512, 1024, 2048, 4096};
  const int64_t *sizes = o->sizes_given ? o->sizes : default_sizes;
  int nsizes = o->sizes_given ? o->nsizes : (int)(sizeof default_sizes / sizeof default_sizes[0]);
  /* in `all`, --sizes counts elements (as for ops): the ladder takes n = round(sqrt(N)) */
  bool square_n = !(o->sizes_given && strcmp(o->mode, "all") == 0);
  nxvk_dtype dts[NXVK_NDTYPES] = {NXVK_F32, NXVK_F64};
  int ndts = 2;
  if (o->dtypes_given) {
    memcpy(dts, o->dtypes, sizeof dts);
    ndts = o->ndtypes;
  }
  bench_print_header("matmul");
  for (int i = 0; i < nxvk_op_count(); i++) {
    const nxvk_op_desc *op = nxvk_op_at(i);
    if (op->kind != NXVK_KIND_DOT) continue;
    const char *const *variants;
    int nv = nxvk_op_variants(op, &variants);
    for (int d = 0; d < ndts; d++) {
      if (!dtype_usable(b, "matmul", op, dts[d])) continue;
      for (int v = 0; v < (nv > 0 ? nv : 1); v++)
        for (int s = 0; s < nsizes && (nv == 0 || variant_chosen(o, variants[v])); s++) {
          problem p;
          char why[160];
          int rc = plan(&p, op, dts[d], sizes[s], square_n);
          if (rc == NXVK_E_TOO_LARGE) {
            bench_add_skip(b, "matmul", op->name, nxvk_dtype_name(p.dtype), p.size, "%s", nxvk_errmsg());
            continue;
          }
          if (rc) return cli_engine_error(rc);
          p.size = p.meta[0].shape.dim[0]; /* the ladder's x: n */
          if (nv > 0) {
            p.attrs.set |= NXVK_ATTR_VARIANT;
            snprintf(p.attrs.variant, sizeof p.attrs.variant, "%s", variants[v]);
          }
          /* a variant this device cannot run (coopmat without cooperative
           * matrices, or on f64): one note, then the next variant */
          rc = nxvk_op_supported(b->ctx, op, &p.attrs, p.meta, p.nin);
          if (rc == NXVK_E_UNSUPPORTED || rc == NXVK_E_UNSUPPORTED_DTYPE) {
            bench_add_skip(b, "matmul", op->name, nxvk_dtype_name(p.dtype), 0, "%s", nxvk_errmsg());
            break;
          }
          if (rc) return cli_engine_error(rc);
          if (too_big(&p, &b->info, why, sizeof why)) {
            bench_add_skip(b, "matmul", op->name, nxvk_dtype_name(p.dtype), p.size, "%s", why);
            continue;
          }
          char label[96];
          snprintf(label, sizeof label, "matmul %s %s %s n=%lld", op->name, nv > 0 ? variants[v] : "",
                   nxvk_dtype_name(p.dtype), (long long)p.size);
          bench_row *row = new_row(b, "matmul", &p);
          if (!row) return cli_engine_error(NXVK_E_NO_MEMORY);
          snprintf(row->variant, sizeof row->variant, "%s", nv > 0 ? variants[v] : "default");
          int status = measure_row(b, &p, row, 0, label);
          if (status) return status;
        }
    }
    if (o->nshapes) {
      int status = matmul_shapes(b, op, dts, ndts);
      if (status) return status;
    }
  }
  return EXIT_OK;
}
