/*
 * stress_race.c - `nxvk stress race`: T threads run random checked ops on
 * their own tensors at once, through ONE shared context.  What it can find:
 * wrong results (a buffer or recording shared by mistake, a missing
 * barrier), device loss, and, under the validation layer's thread-safety
 * checks or ThreadSanitizer (nxvk-tsan), unsynchronized use of the queue or
 * of the engine's own state.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stress_common.h"

#define POOL_MAX 256

typedef struct race_shared {
  nxvk_ctx *c;
  const stress_opts *o;
  const nxvk_op_desc *pool[POOL_MAX];
  int npool;
  double deadline;                    /* 0: run ops_per_thread each */
  atomic_llong ops, wrong, errors, lost, elements, refused, uncompared;
  pthread_mutex_t first_lock;
  char first_wrong[400], first_error[400], first_uncompared[400];
} race_shared;

typedef struct race_thread {
  race_shared *sh;
  int index;
  pthread_t tid;
} race_thread;

/* Sizes: mostly small (many submits, most contention), sometimes past a
 * few workgroups. */
static int64_t pick_size(stress_rng *rng) {
  uint64_t r = rng_next(rng) % 16;
  if (r == 0) return rng_range(rng, 0, 1);
  if (r < 12) return rng_range(rng, 2, 1024);
  return rng_range(rng, 1025, 20000);
}

static void note_first(race_shared *sh, char *slot, const char *msg) {
  pthread_mutex_lock(&sh->first_lock);
  if (!slot[0]) snprintf(slot, 400, "%s", msg);
  pthread_mutex_unlock(&sh->first_lock);
}

static void *race_main(void *arg) {
  race_thread *t = arg;
  race_shared *sh = t->sh;
  stress_rng rng;
  rng_seed(&rng, sh->o->seed * 1000003u + (uint64_t)t->index);
  for (long i = 0;; i++) {
    if (sh->deadline > 0 ? now_seconds() >= sh->deadline : i >= sh->o->ops_per_thread) break;
    const nxvk_op_desc *op = sh->pool[rng_next(&rng) % (uint64_t)sh->npool];
    unsigned m = case_dtypes(sh->c, op);
    if (sh->o->only_dtype >= 0) m &= NXVK_DT(sh->o->only_dtype);
    nxvk_dtype dts[NXVK_NDTYPES];
    int ndt = 0;
    for (int d = 0; d < NXVK_NDTYPES; d++)
      if (m & NXVK_DT(d)) dts[ndt++] = (nxvk_dtype)d;
    nxvk_dtype dt = dts[rng_next(&rng) % (uint64_t)ndt];
    int64_t n = pick_size(&rng);
    if (op->kind == NXVK_KIND_DOT) n = rng_range(&rng, 0, 300); /* O(n) per output */
    stress_case k;
    case_result res;
    int rc = case_build(&k, sh->c, op, dt, n, (int)(rng_next(&rng) % 64), &rng);
    if (rc) {
      res.kind = RESULT_ERROR;
      snprintf(res.detail, sizeof res.detail, "[%lld]: building inputs: %s", (long long)n, k.label);
    } else {
      case_check(sh->c, &k, &res);
      case_free(&k);
    }
    atomic_fetch_add(&sh->ops, 1);
    atomic_fetch_add(&sh->elements, n);
    switch (res.kind) {
    case RESULT_OK: break;
    case RESULT_REFUSED: atomic_fetch_add(&sh->refused, 1); break;
    case RESULT_UNCOMPARED:
      atomic_fetch_add(&sh->uncompared, 1);
      note_first(sh, sh->first_uncompared, res.detail);
      break;
    case RESULT_WRONG:
      atomic_fetch_add(&sh->wrong, 1);
      note_first(sh, sh->first_wrong, res.detail);
      break;
    case RESULT_ERROR:
      atomic_fetch_add(&sh->errors, 1);
      note_first(sh, sh->first_error, res.detail);
      break;
    case RESULT_LOST:
      atomic_fetch_add(&sh->lost, 1);
      note_first(sh, sh->first_error, res.detail);
      break;
    }
    if (res.kind == RESULT_LOST) break; /* nothing more will run */
  }
  return NULL;
}

int stress_race(nxvk_ctx *c, const stress_opts *o, stress_report *r) {
  race_shared *sh = calloc(1, sizeof *sh);
  race_thread *th = calloc((size_t)o->threads, sizeof *th);
  if (!sh || !th) {
    free(sh);
    free(th);
    report_check(r, CHECK_FAIL, "setup", "out of host memory");
    return EXIT_FAIL;
  }
  sh->c = c;
  sh->o = o;
  sh->npool = stress_pick_pool(c, o, sh->pool, POOL_MAX);
  pthread_mutex_init(&sh->first_lock, NULL);
  if (sh->npool == 0) {
    report_check(r, CHECK_FAIL, "setup", "no op to run (after --op/--dtype)");
    pthread_mutex_destroy(&sh->first_lock);
    free(sh);
    free(th);
    return EXIT_FAIL;
  }
  if (o->duration > 0)
    printf("== race: %ld threads for %.1f s over %d ops, seed %llu\n", o->threads, o->duration,
           sh->npool, (unsigned long long)o->seed);
  else
    printf("== race: %ld threads x %ld ops over %d ops of the table, seed %llu\n", o->threads,
           o->ops_per_thread, sh->npool, (unsigned long long)o->seed);
  fflush(stdout);

  nxvk_stats before;
  nxvk_ctx_stats(c, &before);
  double t0 = now_seconds();
  if (o->duration > 0) sh->deadline = t0 + o->duration;
  long started = 0;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 1u << 20); /* 100 threads: keep stacks modest */
  for (long i = 0; i < o->threads; i++) {
    th[i].sh = sh;
    th[i].index = (int)i;
    if (pthread_create(&th[i].tid, &attr, race_main, &th[i]) != 0) break;
    started++;
  }
  pthread_attr_destroy(&attr);
  for (long i = 0; i < started; i++) pthread_join(th[i].tid, NULL);
  double secs = now_seconds() - t0;
  nxvk_stats after;
  nxvk_ctx_stats(c, &after);

  long long ops = atomic_load(&sh->ops), wrong = atomic_load(&sh->wrong);
  long long errors = atomic_load(&sh->errors), lost = atomic_load(&sh->lost);
  long long refused = atomic_load(&sh->refused), uncompared = atomic_load(&sh->uncompared);
  double rate = secs > 0 ? (double)ops / secs : 0;
  report_num(r, "threads", (double)o->threads);
  report_num(r, "threads_started", (double)started);
  report_num(r, "ops", (double)ops);
  report_num(r, "ops_per_second", rate);
  report_num(r, "engine_errors", (double)errors);
  report_num(r, "device_lost", (double)lost);
  report_num(r, "submits", (double)(after.submits - before.submits));
  report_num(r, "pool_ops", sh->npool);
  report_num(r, "seconds", secs);

  if (started < o->threads)
    report_check(r, CHECK_FAIL, "threads", "only %ld of %ld threads started", started, o->threads);
  else
    report_check(r, CHECK_PASS, "threads", "%ld threads shared one context", started);
  report_results(r, "ops", ops, wrong, sh->first_wrong, refused, uncompared, sh->first_uncompared);
  if (lost)
    report_check(r, CHECK_FAIL, "device", "device lost (%lld ops saw it): %s", lost, sh->first_error);
  else
    report_check(r, CHECK_PASS, "device", "not lost");
  if (errors)
    report_check(r, CHECK_FAIL, "errors", "%lld engine errors; first: %s", errors, sh->first_error);
  else
    report_check(r, CHECK_PASS, "errors", "none");
  report_note("%.1f ops/s, %llu submits in %.2f s", rate,
              (unsigned long long)(after.submits - before.submits), secs);
  report_summary(r, "%ld threads, %lld ops, %.0f ops/s, %lld wrong, %lld errors, %lld lost",
                 o->threads, ops, rate, wrong, errors, lost);
  pthread_mutex_destroy(&sh->first_lock);
  free(sh);
  free(th);
  return EXIT_OK;
}
