/*
 * bench_busy.c - keeps a GPU busy while the bench does host work.
 *
 * Between two measurements the bench checks results against the CPU
 * reference, times that reference and makes inputs: seconds in which the
 * GPU idles.  A GPU may drop its SM clock within 100 ms of idling and take
 * over a second to climb back, longer than the warm-up, so timed runs
 * straddle the climb and one measurement mixes fast and slow runs
 * (bench/NOTES.md, measuring).  PyTorch's timings in compare_torch.py run back to back
 * and never see that.  So on a GPU a thread keeps one workgroup of the FMA
 * kernel running (~1 ms a dispatch) whenever no timing is under way: the
 * clock the timed runs start at is the clock of a loaded GPU.  One SM of
 * many, nothing written to memory the measured kernels use.  CPU devices
 * (lavapipe) get no thread: there it would only take a core
 * (NXVK_TEST_INJECT=busy_on_cpu starts it anyway, for the test suite).
 *
 * bench_repeat pauses it around GPU and end-to-end timings (pauses nest);
 * CPU-reference timings leave it running: that costs a host core some of
 * the time on a GPU machine, and a GPU idle for a CPU timing's 0.5 s would
 * start the next measurement cold.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define BUSY_WG 256
#define BUSY_TARGET_NS 1e6 /* one dispatch's length */

enum busy_state { BUSY_RUN, BUSY_PAUSE, BUSY_STOP };

struct bench_busy {
  nxvk_ctx *c;
  nxvk_tensor *out;
  uint32_t spec[2], meta[4];
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  enum busy_state state;
  int pauses;       /* nesting depth of bench_busy_pause */
  bool in_flight;   /* a dispatch is submitted and not yet waited for */
};

static bench_busy *current; /* the bench runs one device at a time */

static int dispatch(bench_busy *h, double *ns) {
  return nxvk_bench_kernel(h->c, "peak_fma_f32", h->spec, 2, h->meta, 4, &h->out, 1, 1, ns);
}

static void *busy_main(void *arg) {
  bench_busy *h = arg;
  pthread_mutex_lock(&h->mu);
  for (;;) {
    while (h->state == BUSY_PAUSE) pthread_cond_wait(&h->cv, &h->mu);
    if (h->state == BUSY_STOP) break;
    h->in_flight = true;
    pthread_mutex_unlock(&h->mu);
    int rc = dispatch(h, NULL);
    pthread_mutex_lock(&h->mu);
    h->in_flight = false;
    pthread_cond_broadcast(&h->cv);
    if (rc) break; /* a lost device: the measurements will say so */
  }
  pthread_mutex_unlock(&h->mu);
  return NULL;
}

int bench_busy_start(nxvk_ctx *c, const nxvk_device_info *info, bool *started) {
  *started = false;
  const char *inject = getenv("NXVK_TEST_INJECT");
  bool on_cpu = inject && strstr(inject, "busy_on_cpu");
  if ((strcmp(info->type, "cpu") == 0 && !on_cpu) || !info->timestamps || current) return NXVK_OK;
  bench_busy *h = calloc(1, sizeof *h);
  if (!h) return NXVK_E_NO_MEMORY;
  h->c = c;
  nxvk_shape s = {1, {BUSY_WG}};
  int rc = nxvk_tensor_new(c, NXVK_F32, &s, &h->out);
  bench_fma_meta(h->meta, false); /* timed runs of bench peak alike: nothing stored */
  h->spec[0] = BUSY_WG;
  /* size one dispatch from a short one: ~1 ms keeps the submit gaps small */
  h->spec[1] = 1024;
  double ns = 0;
  if (rc == NXVK_OK) rc = dispatch(h, &ns);
  if (rc == NXVK_OK && ns > 0) {
    double iters = 1024.0 * BUSY_TARGET_NS / ns;
    h->spec[1] = iters < 1024 ? 1024 : iters > (1 << 24) ? (1 << 24) : (uint32_t)iters;
    rc = dispatch(h, NULL); /* builds that pipeline now, not under a timing */
  }
  if (rc == NXVK_OK) {
    pthread_mutex_init(&h->mu, NULL);
    pthread_cond_init(&h->cv, NULL);
    h->state = BUSY_RUN;
    if (pthread_create(&h->thread, NULL, busy_main, h) != 0) {
      pthread_mutex_destroy(&h->mu);
      pthread_cond_destroy(&h->cv);
      rc = NXVK_E_NO_MEMORY;
    }
  }
  if (rc) {
    nxvk_tensor_free(h->out);
    free(h);
    return rc;
  }
  current = h;
  *started = true;
  return NXVK_OK;
}

void bench_busy_pause(void) {
  bench_busy *h = current;
  if (!h) return;
  pthread_mutex_lock(&h->mu);
  if (h->pauses++ == 0) h->state = BUSY_PAUSE;
  while (h->in_flight) pthread_cond_wait(&h->cv, &h->mu);
  pthread_mutex_unlock(&h->mu);
}

void bench_busy_resume(void) {
  bench_busy *h = current;
  if (!h) return;
  pthread_mutex_lock(&h->mu);
  if (h->pauses > 0 && --h->pauses == 0) {
    h->state = BUSY_RUN;
    pthread_cond_broadcast(&h->cv);
  }
  pthread_mutex_unlock(&h->mu);
}

void bench_busy_stop(void) {
  bench_busy *h = current;
  if (!h) return;
  pthread_mutex_lock(&h->mu);
  h->state = BUSY_STOP;
  pthread_cond_broadcast(&h->cv);
  pthread_mutex_unlock(&h->mu);
  pthread_join(h->thread, NULL);
  pthread_mutex_destroy(&h->mu);
  pthread_cond_destroy(&h->cv);
  nxvk_tensor_free(h->out);
  free(h);
  current = NULL;
}

void bench_gate_init(bench_gate *g) {
  memset(g, 0, sizeof *g);
  pthread_mutex_init(&g->lock, NULL);
  pthread_cond_init(&g->ready_cond, NULL);
  pthread_cond_init(&g->go_cond, NULL);
}

void bench_gate_destroy(bench_gate *g) {
  pthread_cond_destroy(&g->go_cond);
  pthread_cond_destroy(&g->ready_cond);
  pthread_mutex_destroy(&g->lock);
}

void bench_gate_arrive(bench_gate *g) {
  pthread_mutex_lock(&g->lock);
  g->ready++;
  pthread_cond_signal(&g->ready_cond);
  while (!g->go) pthread_cond_wait(&g->go_cond, &g->lock);
  pthread_mutex_unlock(&g->lock);
}

double bench_gate_start(bench_gate *g, int started, double seconds, bool run, void (*at_start)(void *),
                        void *arg) {
  pthread_mutex_lock(&g->lock);
  while (g->ready < started) pthread_cond_wait(&g->ready_cond, &g->lock);
  pthread_mutex_unlock(&g->lock);
  /* the busy kernel (~1 ms) off the queue while timing: every op queued
   * behind it waited for it (bench_concurrency.c) */
  bench_busy_pause();
  if (at_start) at_start(arg);
  pthread_mutex_lock(&g->lock);
  double t0 = nxvk_now_ns();
  g->deadline_ns = run ? t0 + seconds * 1e9 : t0;
  g->go = true;
  pthread_cond_broadcast(&g->go_cond);
  pthread_mutex_unlock(&g->lock);
  return t0;
}
