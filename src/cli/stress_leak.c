/*
 * stress_leak.c - `nxvk stress leak`: cycles of allocate / upload / op /
 * download / free.  Three signals, each with its own verdict:
 *   - nxvk's own accounting (live bytes, buffers, tensors): exact, so any
 *     growth at all fails;
 *   - the device heap usage from VK_EXT_memory_budget, where the device
 *     reports it (where not, the check says "not reported", never "ok");
 *   - the process RSS, a host-side signal with a tolerance (below).
 */
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <time.h>

#include "stress_common.h"

#define WARMUP_CYCLES 20
#define CHECK_EVERY 1000

/* Pick the op a cycle runs: --op, else the first elementwise unary op of the
 * table (cheap, one input, one output), else the first op of the pool. */
static const nxvk_op_desc *leak_op(nxvk_ctx *c, const stress_opts *o, nxvk_dtype *dt) {
  const nxvk_op_desc *pool[256];
  int n = stress_pick_pool(c, o, pool, 256);
  const nxvk_op_desc *op = NULL;
  for (int i = 0; i < n && !op; i++)
    if (pool[i]->kind == NXVK_KIND_UNARY) op = pool[i];
  if (!op && n) op = pool[0];
  if (!op) return NULL;
  unsigned m = case_dtypes(c, op);
  if (o->only_dtype >= 0) m &= NXVK_DT(o->only_dtype);
  *dt = NXVK_F32; /* the common case; else the op's first usable dtype */
  for (int d = 0; d < NXVK_NDTYPES && !(m & NXVK_DT(*dt)); d++)
    if (m & NXVK_DT(d)) *dt = (nxvk_dtype)d;
  return op;
}

typedef struct {
  nxvk_ctx *c;
  stress_case *k;
  nxvk_host got;                      /* download target, allocated once */
} cycle_state;

/* One cycle: everything it allocates on the device is freed before it returns. */
static int cycle(cycle_state *s, bool check, const nxvk_host *ref, case_result *res) {
  stress_case *k = s->k;
  nxvk_tensor *t[4] = {0}, *out = NULL;
  int rc = NXVK_OK, up = 0;
  for (; up < k->nin && rc == NXVK_OK; up++) {
    rc = nxvk_tensor_new(s->c, k->in[up].dtype, &k->in[up].shape, &t[up]);
    if (rc == NXVK_OK) rc = nxvk_tensor_upload(s->c, t[up], k->in[up].data, nxvk_host_bytes(&k->in[up]));
  }
  if (rc == NXVK_OK) rc = nxvk_op_run(s->c, k->op, &k->attrs, t, k->nin, &out);
  if (rc == NXVK_OK) rc = nxvk_tensor_download(s->c, out, s->got.data, nxvk_host_bytes(&s->got));
  if (rc == NXVK_OK && check) {
    nxvk_cmp cmp;
    nxvk_device_info info;
    stress_device_info(s->c, &info);
    rc = nxvk_check(&info, k->op, &k->attrs, k->in, k->nin, &s->got, ref, &cmp);
    if (rc == NXVK_OK && cmp.bad) {
      res->kind = RESULT_WRONG;
      snprintf(res->detail, sizeof res->detail, "%s: %lld of %lld over the limit; first at [%lld]: got %.9g, want %.9g",
               k->label, (long long)cmp.bad, (long long)cmp.n, (long long)cmp.worst, cmp.worst_got,
               cmp.worst_ref);
    }
  }
  if (rc) {
    res->kind = rc == NXVK_E_DEVICE_LOST ? RESULT_LOST : RESULT_ERROR;
    res->code = rc;
    snprintf(res->detail, sizeof res->detail, "%s: %s: %s", k->label, nxvk_err_name(rc), nxvk_errmsg());
  }
  nxvk_tensor_free(out);
  for (int i = 0; i < up; i++) nxvk_tensor_free(t[i]);
  return rc;
}

int stress_leak(nxvk_ctx *c, const stress_opts *o, stress_report *r) {
  nxvk_dtype dt = NXVK_F32;
  const nxvk_op_desc *op = leak_op(c, o, &dt);
  if (!op) {
    report_check(r, CHECK_FAIL, "setup", "no op to run (after --op/--dtype)");
    return EXIT_FAIL;
  }
  uint64_t size = o->size ? o->size : (uint64_t)1 << 20;
  int64_t n = (int64_t)(size / nxvk_dtype_size(dt));
  if (n < 1) n = 1;
  stress_rng rng;
  rng_seed(&rng, o->seed ^ 0x1eaull);
  stress_case k;
  int rc = case_build(&k, c, op, dt, n, 0, &rng);
  if (rc) {
    report_check(r, CHECK_FAIL, "setup", "%s", k.label);
    return EXIT_FAIL;
  }
  nxvk_host ref = {0};
  cycle_state s = {c, &k, {0}};
  rc = nxvk_op_ref(op, &k.attrs, k.in, k.nin, &ref);
  if (rc == NXVK_OK) rc = nxvk_host_alloc(&s.got, ref.dtype, &ref.shape);
  if (rc) {
    report_check(r, CHECK_FAIL, "setup", "%s: reference: %s", k.label, nxvk_errmsg());
    case_free(&k);
    return EXIT_FAIL;
  }
  char b1[64], b2[64], b3[64], b4[64], b5[64];
  if (o->duration > 0)
    printf("== leak: %.1f s of cycles of %s (%s per tensor), seed %llu\n", o->duration, k.label,
           fmt_bytes((double)size, b1, sizeof b1), (unsigned long long)o->seed);
  else
    printf("== leak: %ld cycles of %s (%s per tensor), seed %llu\n", o->cycles, k.label,
           fmt_bytes((double)size, b1, sizeof b1), (unsigned long long)o->seed);
  fflush(stdout);

  /* Warm-up: pipelines, the recording pool and driver caches are built
   * once and kept; they are not leaks, so the baseline is taken after. */
  case_result res = {0};
  long done = 0, checked = 0, failed_at = -1;
  for (int i = 0; i < WARMUP_CYCLES && rc == NXVK_OK && res.kind == RESULT_OK; i++)
    rc = cycle(&s, i == 0, &ref, &res);
  mem_probe base, end;
  mem_probe_take(c, &base);
  double t0 = now_seconds(), last_print = t0;
  uint64_t grow_stop = 16 * size + ((uint64_t)1 << 20); /* a leak this big is certain: stop */
  bool stopped_early = false;
  long cap = o->duration > 0 ? LONG_MAX : o->cycles;
  while (rc == NXVK_OK && done < cap && res.kind == RESULT_OK) {
    if (o->duration > 0 && (done & 15) == 0 && now_seconds() - t0 >= o->duration) break;
    bool check = done % CHECK_EVERY == 0 || done == cap - 1;
    rc = cycle(&s, check, &ref, &res);
    if (rc == NXVK_OK) done++;
    checked += check;
    if (res.kind != RESULT_OK) failed_at = done;
    nxvk_stats st;
    nxvk_ctx_stats(c, &st);
    if (st.live_bytes > base.stats.live_bytes + grow_stop) {
      stopped_early = true;
      break;
    }
    double now = now_seconds();
    if (now - last_print >= 10) {
      mem_probe p;
      mem_probe_take(c, &p);
      report_note("%ld cycles, live bytes %s, rss %s", done,
                  fmt_delta((double)p.stats.live_bytes - (double)base.stats.live_bytes, b1, sizeof b1),
                  p.has_rss ? fmt_delta((double)p.rss - (double)base.rss, b2, sizeof b2) : "n/a");
      last_print = now;
    }
  }
  double secs = now_seconds() - t0;
  mem_probe_settle(c, &base, &end);

  double live_growth = (double)end.stats.live_bytes - (double)base.stats.live_bytes;
  double buf_growth = (double)end.stats.live_buffers - (double)base.stats.live_buffers;
  double tensor_growth = (double)end.stats.live_tensors - (double)base.stats.live_tensors;
  report_str(r, "op", "%s", k.label);
  report_num(r, "cycles", (double)done);
  report_num(r, "tensor_bytes", (double)size);
  report_num(r, "seconds", secs);
  report_num(r, "cycles_per_second", secs > 0 ? done / secs : 0);
  report_num(r, "live_bytes_before", (double)base.stats.live_bytes);
  report_num(r, "live_bytes_after", (double)end.stats.live_bytes);
  report_num(r, "live_buffers_before", (double)base.stats.live_buffers);
  report_num(r, "live_buffers_after", (double)end.stats.live_buffers);
  report_num(r, "checked_results", (double)checked);

  if (rc != NXVK_OK || res.kind != RESULT_OK) {
    report_check(r, CHECK_FAIL, res.kind == RESULT_WRONG ? "results" : "errors",
                 "cycle %ld: %s", failed_at >= 0 ? failed_at : done, res.detail);
  } else {
    report_check(r, CHECK_PASS, "results", "%ld cycles, %ld results checked against the reference",
                 done, checked);
  }
  if (live_growth != 0 || buf_growth != 0 || tensor_growth != 0)
    report_check(r, CHECK_FAIL, "live bytes",
                 "%s in %+.0f buffers (%+.0f tensors) after %ld cycles (%s per cycle)%s",
                 fmt_delta(live_growth, b1, sizeof b1), buf_growth, tensor_growth, done,
                 fmt_delta(done ? live_growth / (double)done : 0, b2, sizeof b2),
                 stopped_early ? "; stopped early" : "");
  else
    report_check(r, CHECK_PASS, "live bytes", "%s before and after (%llu buffers)",
                 fmt_bytes((double)end.stats.live_bytes, b1, sizeof b1),
                 (unsigned long long)end.stats.live_buffers);

  if (base.has_budget && end.has_budget) {
    double g = (double)end.heap_usage - (double)base.heap_usage;
    report_num(r, "heap_usage_before", (double)base.heap_usage);
    report_num(r, "heap_usage_after", (double)end.heap_usage);
    report_check(r, g > 0 ? CHECK_FAIL : CHECK_PASS, "memory budget",
                 "device-local heap usage %s -> %s (%s)", fmt_bytes((double)base.heap_usage, b1, sizeof b1),
                 fmt_bytes((double)end.heap_usage, b2, sizeof b2), fmt_delta(g, b3, sizeof b3));
  } else {
    report_str(r, "heap_usage", "not reported by this device");
    report_check(r, CHECK_UNCHECKED, "memory budget", "not reported by this device (no VK_EXT_memory_budget)");
  }

  /* RSS tolerance: the host allocator keeps freed blocks for reuse and the
   * driver fills caches lazily, so RSS may rise by about one cycle's working
   * set (inputs, output, staging) without a leak.  4 x the tensor size or 8
   * MiB, whichever is larger, covers that; a leak of one tensor per cycle
   * passes it within 4 cycles, and the per-cycle rate is printed beside. */
  if (base.has_rss && end.has_rss) {
    double g = (double)end.rss - (double)base.rss;
    double tol = 4.0 * (double)size > 8.0 * 1048576 ? 4.0 * (double)size : 8.0 * 1048576;
    report_num(r, "rss_before", (double)base.rss);
    report_num(r, "rss_after", (double)end.rss);
    report_num(r, "rss_tolerance", tol);
    report_check(r, g > tol ? CHECK_FAIL : CHECK_PASS, "rss", "%s -> %s (%s, %s per cycle; tolerance %s)",
                 fmt_bytes((double)base.rss, b1, sizeof b1), fmt_bytes((double)end.rss, b2, sizeof b2),
                 fmt_delta(g, b3, sizeof b3), fmt_delta(done ? g / (double)done : 0, b4, sizeof b4),
                 fmt_bytes(tol, b5, sizeof b5));
  } else {
    report_check(r, CHECK_UNCHECKED, "rss", "not available here (no /proc/self/statm)");
  }
  report_summary(r, "%ld cycles of %s, live %s, heap %s, rss %s", done,
                 fmt_bytes((double)size, b1, sizeof b1), fmt_delta(live_growth, b2, sizeof b2),
                 base.has_budget ? "checked" : "not reported",
                 end.has_rss ? fmt_delta((double)end.rss - (double)base.rss, b3, sizeof b3) : "n/a");
  case_free(&k);
  nxvk_host_free(&ref);
  nxvk_host_free(&s.got);
  return EXIT_OK;
}
