/*
 * bench_concurrency.c - `nxvk bench concurrency`: how many small ops per
 * second the engine completes when many host threads submit at once.
 *
 * T threads (1, 16 and 100) share ONE context, as the port's clients and an
 * application's threads do; each runs a 1K-element f32 add end to end
 * (nxvk_op_run_host: inputs in, the op, the result back, in one submission)
 * on its own inputs, over and over, and checks every result exactly (f32 add
 * is correctly rounded, and the inputs are normal numbers whose sums are too).
 * The figure is all threads' ops over the wall time from the moment they are
 * released together to the last one's end.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define CONC_N 1024
#define CONC_MAX_THREADS 100

typedef struct conc_shared {
  nxvk_ctx *c;
  const nxvk_op_desc *op;
  long ops_per_thread;       /* > 0: --repeat; else run until gate.deadline_ns */
  bench_gate gate;           /* released when every thread has done its untimed op */
  atomic_llong ops, wrong;
  atomic_int first_rc;
} conc_shared;

typedef struct conc_thread {
  conc_shared *sh;
  pthread_t tid;
  nxvk_host in[2];
  double end_ns;
} conc_thread;

static void *conc_main(void *arg) {
  conc_thread *t = arg;
  conc_shared *sh = t->sh;
  nxvk_attrs attrs;
  memset(&attrs, 0, sizeof attrs);
  /* one untimed op first, so the timed ones find the kernel built and this
   * thread's recording made: without it the single thread's timed second
   * included building the add pipeline (GLSL, SPIR-V and pipeline where the
   * caches are cold), the likely cause of the 757 us an op measured on an
   * H100 host against ~30 us for bench ops' warm 1K add */
  nxvk_host warm = {0};
  int wrc = nxvk_op_run_host(sh->c, sh->op, &attrs, t->in, 2, &warm);
  nxvk_host_free(&warm);
  if (wrc) {
    int zero = 0;
    atomic_compare_exchange_strong(&sh->first_rc, &zero, wrc);
  }
  bench_gate_arrive(&sh->gate);
  const float *a = t->in[0].data, *b = t->in[1].data;
  for (long i = 0; !wrc; i++) {
    if (sh->ops_per_thread > 0 ? i >= sh->ops_per_thread : nxvk_now_ns() >= sh->gate.deadline_ns) break;
    nxvk_host out = {0};
    int rc = nxvk_op_run_host(sh->c, sh->op, &attrs, t->in, 2, &out);
    if (rc) {
      int zero = 0;
      atomic_compare_exchange_strong(&sh->first_rc, &zero, rc);
      nxvk_host_free(&out);
      break;
    }
    const float *o = out.data;
    bool ok = out.dtype == NXVK_F32 && nxvk_host_count(&out) == CONC_N;
    for (int k = 0; ok && k < CONC_N; k++) ok = o[k] == a[k] + b[k];
    nxvk_host_free(&out);
    atomic_fetch_add(&sh->ops, 1);
    if (!ok) atomic_fetch_add(&sh->wrong, 1);
  }
  t->end_ns = nxvk_now_ns();
  return NULL;
}

/* Where one op's time went (the engine's stage times over the timed part,
 * nxvk_stats), as the row's note: per op, in us; "other" is the rest of
 * the op's wall time (tensors, read back, the check). */
static void conc_stages(bench_row *row, const nxvk_stats *a, const nxvk_stats *b, int threads,
                        double per_op_ns) {
  double recs = (double)(b->recordings - a->recordings), subs = (double)(b->submits - a->submits);
  if (recs <= 0 || subs <= 0) return;
  double rec = (double)(b->record_ns - a->record_ns) / recs * 1e-3;
  double sub = (double)(b->submit_ns - a->submit_ns) / recs * 1e-3;
  double wait = (double)(b->wait_ns - a->wait_ns) / recs * 1e-3;
  double rel = (double)(b->release_ns - a->release_ns) / recs * 1e-3;
  double qs = (double)(b->queue_submit_ns - a->queue_submit_ns) / subs * 1e-3;
  snprintf(row->note, sizeof row->note,
           "%d threads, us an op: record %.1f, submit %.1f, wait %.1f, release %.1f, other %.1f; "
           "%.1f ops a vkQueueSubmit (%.1f us each)",
           threads, rec, sub, wait, rel, per_op_ns * 1e-3 - rec - sub - wait - rel, recs / subs, qs);
}

/* the engine's counters as the timed run starts (bench_gate_start's hook) */
typedef struct {
  nxvk_ctx *c;
  nxvk_stats *st;
} stats_at;
static void take_stats(void *arg) {
  stats_at *s = arg;
  nxvk_ctx_stats(s->c, s->st);
}

/* One thread count: a row, or an exit status after printing the error. */
static int conc_run(bench_ctx *b, const nxvk_op_desc *op, int threads) {
  const bench_opts *o = b->o;
  conc_shared sh = {.c = b->ctx, .op = op, .ops_per_thread = o->repeat > 0 ? o->repeat : 0};
  bench_gate_init(&sh.gate);
  conc_thread *th = calloc((size_t)threads, sizeof *th);
  int status = EXIT_OK, started = 0, rc = th ? NXVK_OK : NXVK_E_NO_MEMORY;
  nxvk_shape s = {.rank = 1, .dim = {CONC_N}};
  for (int i = 0; i < threads && rc == NXVK_OK; i++) {
    th[i].sh = &sh;
    for (int k = 0; k < 2 && rc == NXVK_OK; k++) {
      rc = nxvk_host_alloc(&th[i].in[k], NXVK_F32, &s);
      if (rc == NXVK_OK) bench_fill_random(b, &th[i].in[k]);
    }
  }
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 1u << 20);
  for (int i = 0; i < threads && rc == NXVK_OK; i++) {
    if (pthread_create(&th[i].tid, &attr, conc_main, &th[i]) != 0) rc = NXVK_E_NO_MEMORY;
    else started++;
  }
  pthread_attr_destroy(&attr);
  /* release them together, once each has run its untimed op (those
   * started: on a failed start they run no timed op).  The gate pauses
   * bench_busy.c's kernel (~1 ms) while timing: every op queued behind it
   * waited for it, which made one thread's op take ~0.8 ms on an H100
   * (1 195 ops/s) where bench ops' end-to-end add, timed with it paused,
   * took ~30 us; on lavapipe with it forced on (NXVK_TEST_INJECT=
   * busy_on_cpu) 1 thread fell from 8 783 to 892 ops/s */
  nxvk_stats st0;
  sh.ops_per_thread = rc == NXVK_OK ? sh.ops_per_thread : 0;
  double t0 = bench_gate_start(&sh.gate, started, o->min_time, rc == NXVK_OK, take_stats, &(stats_at){sh.c, &st0});
  double end = t0;
  for (int i = 0; i < started; i++) {
    pthread_join(th[i].tid, NULL);
    if (th[i].end_ns > end) end = th[i].end_ns;
  }
  nxvk_stats st1;
  nxvk_ctx_stats(sh.c, &st1);
  bench_busy_resume();
  if (rc == NXVK_OK) rc = atomic_load(&sh.first_rc);
  long long ops = atomic_load(&sh.ops), wrong = atomic_load(&sh.wrong);
  if (rc) {
    status = cli_engine_error(rc);
  } else if (wrong) {
    fprintf(stderr, "nxvk: error: bench concurrency: %lld of %lld results from %d threads were wrong\n", wrong,
            ops, threads);
    status = EXIT_FAIL;
  } else {
    bench_row *row = bench_add_row(b->rep);
    if (!row) {
      status = cli_engine_error(NXVK_E_NO_MEMORY);
    } else {
      double wall = end - t0;
      row->device = b->device;
      row->mode = "concurrency";
      snprintf(row->name, sizeof row->name, "%s", op->name);
      snprintf(row->variant, sizeof row->variant, "threads");
      row->dtype = "f32";
      row->size = CONC_N;
      row->shape = s;
      snprintf(row->dims, sizeof row->dims, "%d", threads);
      row->bytes = 3.0 * CONC_N * 4;
      row->e2e = (bench_stat){.have = true, .median = wall / (double)(ops ? ops : 1) * threads,
                              .min = NAN, .max = NAN, .repeats = (int)ops};
      row->e2e.min = row->e2e.max = row->e2e.median;
      row->gbps = row->gflops = row->gflops_min = row->gflops_max = row->speedup = row->speedup_e2e =
          row->pct_peak = row->latency_us = row->max_abs = row->max_ulp = NAN;
      row->ops_per_s = wall > 0 ? (double)ops / (wall * 1e-9) : NAN;
      snprintf(row->check, sizeof row->check, "all %lld exact", ops);
      conc_stages(row, &st0, &st1, threads, row->e2e.median);
      bench_print_row(row);
    }
  }
  for (int i = 0; i < threads && th; i++) {
    nxvk_host_free(&th[i].in[0]);
    nxvk_host_free(&th[i].in[1]);
  }
  free(th);
  bench_gate_destroy(&sh.gate);
  return status;
}

int bench_concurrency(bench_ctx *b) {
  static const int counts[] = {1, 16, CONC_MAX_THREADS};
  const nxvk_op_desc *op = nxvk_op_find("add");
  if (!op) return cli_engine_error(NXVK_E_BAD_REQUEST);
  bench_print_header("concurrency");
  int status = EXIT_OK;
  for (size_t i = 0; i < sizeof counts / sizeof counts[0] && status == EXIT_OK; i++) {
    bench_progress(b, "concurrency: %d threads", counts[i]);
    status = conc_run(b, op, counts[i]);
  }
  /* the same adds from port clients (one `nxvk port` each), then a large
   * tensor's put and get through one port (bench_port.c) */
  if (status == EXIT_OK && b->o->clients > 0) {
    bench_progress(b, "concurrency: %d port clients", b->o->clients);
    status = bench_port_clients(b, b->o->clients);
  }
  if (status == EXIT_OK) status = bench_port_transfer(b, b->o->peak_bytes > 0 ? b->o->peak_bytes : (int64_t)64 << 20);
  return status;
}
