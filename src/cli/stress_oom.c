/*
 * stress_oom.c - `nxvk stress oom`: allocate device tensors until the driver
 * refuses (or --limit is reached), then prove the refusal was clean: an
 * alloc_failed / too_large error with a message, no half-made tensor, the
 * accounting untouched by the failed call, the device still computing, and
 * everything back at baseline once freed.
 *
 * The chunks are never written: on a GPU vkAllocateMemory commits memory
 * anyway, and on a CPU device (lavapipe) untouched chunks cost the shared
 * host no RAM while the driver and the engine still account them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stress_common.h"

#define MIB ((uint64_t)1 << 20)
#define GIB ((uint64_t)1 << 30)

/* One random checked op from the pool: the device still computes. */
static bool checked_op(nxvk_ctx *c, const stress_opts *o, stress_rng *rng, char *why, size_t len) {
  const nxvk_op_desc *pool[256];
  int n = stress_pick_pool(c, o, pool, 256);
  if (n == 0) {
    snprintf(why, len, "no op to run (after --op/--dtype)");
    return false;
  }
  for (int tries = 0; tries < 3; tries++) {
    const nxvk_op_desc *op = pool[rng_next(rng) % (uint64_t)n];
    unsigned m = case_dtypes(c, op);
    if (o->only_dtype >= 0) m &= NXVK_DT(o->only_dtype);
    char last[400];
    if (!case_run_checked(c, op, m, 4099, rng, last, sizeof last)) {
      snprintf(why, len, "%s", last);
      return false;
    }
    if (tries == 2) snprintf(why, len, "3 checked ops correct, last %s", last);
  }
  return true;
}

/* Allocate up to n chunks again and free them; returns how many fit. */
static size_t refill_and_free(nxvk_ctx *c, int64_t chunk_elems, size_t n) {
  nxvk_tensor **t = calloc(n ? n : 1, sizeof *t);
  size_t got = 0;
  if (!t) return 0;
  while (got < n && nxvk_tensor_new(c, NXVK_F32, &(nxvk_shape){1, {chunk_elems}}, &t[got]) == NXVK_OK) got++;
  for (size_t i = 0; i < got; i++) nxvk_tensor_free(t[i]);
  free(t);
  return got;
}

static bool clean_code(int rc) { return rc == NXVK_E_ALLOC_FAILED || rc == NXVK_E_TOO_LARGE; }

int stress_oom(nxvk_ctx *c, const stress_opts *o, stress_report *r) {
  nxvk_device_info info;
  nxvk_ctx_device_info(c, &info);
  stress_rng rng;
  rng_seed(&rng, o->seed ^ 0x00aull);
  char b1[64], b2[64], b3[64], why[512];

  mem_probe base;
  mem_probe_take(c, &base);
  uint64_t heap = base.heap_size;
  /* Default cap: a few hundred MiB for --quick; else the device-local heap,
   * at most 8 GiB (on a CPU device the "heap" is the host's RAM, shared). */
  uint64_t limit;
  const char *limit_from;
  if (o->limit_given) {
    limit = o->limit ? o->limit : UINT64_MAX;
    limit_from = o->limit ? "--limit" : "--limit 0 (none)";
  } else if (o->quick) {
    limit = 256 * MIB;
    limit_from = "--quick default";
  } else {
    limit = heap < 8 * GIB ? heap : 8 * GIB;
    limit_from = "default: min(device-local heap, 8 GiB)";
  }
  /* Without a cap, a driver that hands out twice its heap is not going to
   * refuse in a useful way: stop there and say so. */
  uint64_t hard_stop = limit != UINT64_MAX ? limit : (heap ? 2 * heap : 64 * GIB);

  /* chunks well below the per-buffer limits, and fine enough near the cap */
  uint64_t chunk = 256 * MIB;
  if (info.max_storage_buffer_range / 2 < chunk) chunk = info.max_storage_buffer_range / 2;
  if (info.max_allocation_size && info.max_allocation_size / 2 < chunk) chunk = info.max_allocation_size / 2;
  if (hard_stop / 16 < chunk) chunk = hard_stop / 16;
  chunk &= ~(MIB - 1);
  if (chunk < MIB) chunk = MIB;
  int64_t chunk_elems = (int64_t)(chunk / 4);

  printf("== oom: %s chunks up to %s (%s), device-local heap %s, seed %llu\n",
         fmt_bytes((double)chunk, b1, sizeof b1),
         limit == UINT64_MAX ? "the driver's refusal" : fmt_bytes((double)limit, b2, sizeof b2),
         limit_from, fmt_bytes((double)heap, b3, sizeof b3), (unsigned long long)o->seed);
  fflush(stdout);

  /* a checked op first: pipelines and the recording pool exist before the baseline */
  if (!checked_op(c, o, &rng, why, sizeof why)) {
    report_check(r, CHECK_FAIL, "device before", "%s", why);
    report_summary(r, "the device failed before any allocation");
    return EXIT_OK;
  }
  mem_probe_take(c, &base);

  size_t cap = 64, count = 0;
  nxvk_tensor **held = malloc(cap * sizeof *held);
  if (!held) {
    report_check(r, CHECK_FAIL, "setup", "out of host memory");
    return EXIT_OK;
  }
  uint64_t allocated = 0;
  int refusal = NXVK_OK;
  char refusal_msg[400] = "";
  bool refusal_clean = false;
  double t0 = now_seconds();
  while (allocated + chunk <= hard_stop) {
    if (count == cap) {
      nxvk_tensor **h = realloc(held, 2 * cap * sizeof *held);
      if (!h) break;
      held = h;
      cap *= 2;
    }
    nxvk_stats sb, sa;
    nxvk_ctx_stats(c, &sb);
    nxvk_tensor *t = (nxvk_tensor *)(uintptr_t)1; /* must come back NULL on failure */
    int rc = nxvk_tensor_new(c, NXVK_F32, &(nxvk_shape){1, {chunk_elems}}, &t);
    if (rc == NXVK_OK) {
      held[count++] = t;
      allocated += chunk;
      continue;
    }
    nxvk_ctx_stats(c, &sa);
    refusal = rc;
    snprintf(refusal_msg, sizeof refusal_msg, "%s", nxvk_errmsg());
    refusal_clean = clean_code(rc) && t == NULL && sa.live_bytes == sb.live_bytes &&
                    sa.live_buffers == sb.live_buffers && !nxvk_ctx_lost(c) && refusal_msg[0];
    if (!refusal_clean)
      snprintf(why, sizeof why, "%s (%s)%s%s%s", nxvk_err_name(rc), refusal_msg,
               t != NULL ? "; a tensor came back anyway" : "",
               sa.live_bytes != sb.live_bytes ? "; live bytes moved" : "",
               nxvk_ctx_lost(c) ? "; the device is lost" : "");
    break;
  }
  double fill_secs = now_seconds() - t0;
  mem_probe full;
  mem_probe_take(c, &full);
  report_num(r, "chunk_bytes", (double)chunk);
  report_num(r, "limit_bytes", limit == UINT64_MAX ? -1 : (double)limit);
  report_num(r, "allocated_bytes", (double)allocated);
  report_num(r, "chunks", (double)count);
  report_num(r, "fill_seconds", fill_secs);
  report_str(r, "refusal", "%s", refusal ? nxvk_err_name(refusal) : "none");

  if (refusal && refusal_clean)
    report_check(r, CHECK_PASS, "refusal", "the driver refused after %s in %zu chunks: %s (%s)",
                 fmt_bytes((double)allocated, b1, sizeof b1), count, nxvk_err_name(refusal), refusal_msg);
  else if (refusal)
    report_check(r, CHECK_FAIL, "refusal", "after %s: not a clean refusal: %s",
                 fmt_bytes((double)allocated, b1, sizeof b1), why);
  else if (limit == UINT64_MAX)
    report_check(r, CHECK_UNCHECKED, "refusal",
                 "the driver gave %s (twice its %s heap) without refusing; stopped there",
                 fmt_bytes((double)allocated, b1, sizeof b1), fmt_bytes((double)heap, b2, sizeof b2));
  else
    report_check(r, CHECK_UNCHECKED, "refusal",
                 "no refusal below the cap: %s allocated in %zu chunks (%s); the driver's refusal "
                 "was not exercised (--limit 0 lifts the cap on a machine of your own)",
                 fmt_bytes((double)allocated, b1, sizeof b1), count, limit_from);

  /* Over the per-buffer limit: the engine refuses before the driver sees it. */
  {
    nxvk_stats sb, sa;
    nxvk_ctx_stats(c, &sb);
    int64_t over = (int64_t)(info.max_storage_buffer_range / 4) + 1;
    nxvk_tensor *t = NULL;
    int rc = nxvk_tensor_new(c, NXVK_F32, &(nxvk_shape){1, {over}}, &t);
    nxvk_ctx_stats(c, &sa);
    bool ok = rc == NXVK_E_TOO_LARGE && t == NULL && sa.buffers_created == sb.buffers_created &&
              sa.live_bytes == sb.live_bytes;
    report_check(r, ok ? CHECK_PASS : CHECK_FAIL, "per-buffer limit",
                 "%lld f32 elements (%s, over the %s storage buffer range): %s (%s)%s", (long long)over,
                 fmt_bytes((double)over * 4, b1, sizeof b1),
                 fmt_bytes((double)info.max_storage_buffer_range, b2, sizeof b2), nxvk_err_name(rc),
                 rc ? nxvk_errmsg() : "accepted", sa.buffers_created != sb.buffers_created ? "; a buffer was created" : "");
    nxvk_tensor_free(t);
  }

  /* The device keeps working: with one chunk given back when it was full. */
  size_t peak_count = count;
  if (refusal && count > 0) {
    nxvk_tensor_free(held[--count]);
    allocated -= chunk;
  }
  bool works = checked_op(c, o, &rng, why, sizeof why);
  report_check(r, works ? CHECK_PASS : CHECK_FAIL, "device under pressure", "%s", why);

  for (size_t i = 0; i < count; i++) nxvk_tensor_free(held[i]);
  free(held);
  mem_probe after;
  mem_probe_settle(c, &base, &after);
  double g = (double)after.stats.live_bytes - (double)base.stats.live_bytes;
  report_num(r, "live_bytes_before", (double)base.stats.live_bytes);
  report_num(r, "live_bytes_full", (double)full.stats.live_bytes);
  report_num(r, "live_bytes_after", (double)after.stats.live_bytes);
  report_check(r, g == 0 && after.stats.live_buffers == base.stats.live_buffers ? CHECK_PASS : CHECK_FAIL,
               "freed", "live bytes %s -> %s at the peak -> %s after freeing (%s)",
               fmt_bytes((double)base.stats.live_bytes, b1, sizeof b1),
               fmt_bytes((double)full.stats.live_bytes, b2, sizeof b2),
               fmt_bytes((double)after.stats.live_bytes, b3, sizeof b3), g == 0 ? "back at baseline" : "NOT back");
  if (base.has_budget) {
    double hg = (double)after.heap_usage - (double)base.heap_usage;
    report_num(r, "heap_usage_before", (double)base.heap_usage);
    report_num(r, "heap_usage_full", (double)full.heap_usage);
    report_num(r, "heap_usage_after", (double)after.heap_usage);
    if (hg <= 0) {
      report_check(r, CHECK_PASS, "memory budget", "device-local heap usage %s -> %s -> %s",
                   fmt_bytes((double)base.heap_usage, b1, sizeof b1), fmt_bytes((double)full.heap_usage, b2, sizeof b2),
                   fmt_bytes((double)after.heap_usage, b3, sizeof b3));
    } else {
      /* Some drivers keep freed blocks for reuse (NVIDIA kept three 256 MiB
       * chunks).  A cache does not grow when the same fill and free is done
       * again; a leak does. */
      mem_probe again;
      size_t refilled = refill_and_free(c, chunk_elems, peak_count);
      mem_probe_settle(c, &after, &again);
      double g2 = (double)again.heap_usage - (double)after.heap_usage;
      report_num(r, "heap_usage_after_second_round", (double)again.heap_usage);
      report_num(r, "second_round_chunks", (double)refilled);
      char b4[64], b5[64];
      report_check(r, g2 > (double)MIB || refilled < peak_count ? CHECK_FAIL : CHECK_PASS, "memory budget",
                   "device-local heap usage %s -> %s -> %s after freeing: the driver kept %s; a second fill of "
                   "%zu of %zu chunks and free left %s (%s: %s)",
                   fmt_bytes((double)base.heap_usage, b1, sizeof b1), fmt_bytes((double)full.heap_usage, b2, sizeof b2),
                   fmt_bytes((double)after.heap_usage, b3, sizeof b3), fmt_bytes(hg, b4, sizeof b4), refilled,
                   peak_count, fmt_bytes((double)again.heap_usage, b5, sizeof b5),
                   refilled < peak_count ? "fewer chunks fit" : g2 > (double)MIB ? "it grew" : "no growth",
                   refilled < peak_count ? "memory was lost" : g2 > (double)MIB ? "a leak" : "a cache, not a leak");
    }
  } else {
    report_str(r, "heap_usage", "not reported by this device");
    report_check(r, CHECK_UNCHECKED, "memory budget", "not reported by this device (no VK_EXT_memory_budget)");
  }
  works = checked_op(c, o, &rng, why, sizeof why);
  report_check(r, works ? CHECK_PASS : CHECK_FAIL, "device after", "%s", why);
  report_summary(r, "%s in %s chunks, refusal: %s, freed %s", fmt_bytes((double)full.stats.live_bytes - (double)base.stats.live_bytes, b1, sizeof b1),
                 fmt_bytes((double)chunk, b2, sizeof b2),
                 refusal ? nxvk_err_name(refusal) : "none (cap reached)", g == 0 ? "to baseline" : "NOT to baseline");
  return EXIT_OK;
}
