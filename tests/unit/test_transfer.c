/* test_transfer.c - TAP tests for host <-> device transfers (issue 30) on
 * the default device, forced onto the discrete-GPU paths (NXVK_STAGING=1):
 * through staging only (NXVK_XFER_IMPORT=0), importing the caller's memory
 * (VK_EXT_external_memory_host, where the device has it: lavapipe does),
 * and with every import refused (NXVK_TEST_INJECT=import_fail), which must
 * fall back to staging with the same bytes.
 *
 * Sizes cross each path's thresholds (vkCmdUpdateBuffer, one staging copy,
 * import from 1 MiB, several threads from 32 MiB) at host addresses that are
 * aligned and not (the import takes the aligned middle, staging the head
 * and tail) and at buffer offsets 0 and 12.  Every byte is compared, and the
 * counters say which path ran: bytes imported only where the import is on,
 * and no buffer left behind (live_buffers the same after as before).
 *
 * Pinned host memory (nxvk_pinned_alloc, nxvk_host_register): transfers
 * from and into it, whole, at odd addresses and lengths, split in 1 and 3
 * submissions, and straddling a registered range (its head and tail as any
 * host memory), move their bytes unchanged and count the region's bytes
 * (and only those) as pinned_bytes; NXVK_XFER_PINNED=0 moves none by DMA.
 *
 * White-box: includes ops.h (vkcore.h) for nxvk_buffer_write/read at an
 * offset and the context's import alignment.
 */
#define _POSIX_C_SOURCE 200809L

#include "nxvk.h"
#include "ops/ops.h"
#include "tap.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rnd(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 0x2545F4914F6CDD1DULL;
}

enum { MODE_STAGING, MODE_IMPORT, MODE_IMPORT_REFUSED, MODE_LANES, MODE_LANES_WC, MODE_LANES_STREAM, MODE_SYNC };
static const char *const mode_names[] = {"staging only", "import", "import refused", "lanes",
                                         "lanes, uncached uploads", "lanes, streaming copies",
                                         "one submission a piece"};

static void run_mode(int mode) {
  setenv("NXVK_STAGING", "1", 1);
  setenv("NXVK_XFER_IMPORT", mode == MODE_IMPORT || mode == MODE_IMPORT_REFUSED ? "1" : "0", 1);
  /* the lanes (NXVK_XFER_PIPE, default on) and the synchronous pieces
   * before them, from any size (NXVK_XFER_MIN=0) in 1 MiB pieces on 3
   * threads, so that small sizes, sizes that are no multiple of a piece
   * and fewer pieces than threads all run the piecewise paths */
  bool pieces = mode >= MODE_LANES;
  if (pieces) {
    setenv("NXVK_XFER_MIN", "0", 1);
    setenv("NXVK_XFER_PIECE", "1M", 1);
    setenv("NXVK_XFER_THREADS", "3", 1);
  } else {
    unsetenv("NXVK_XFER_MIN");
    unsetenv("NXVK_XFER_PIECE");
    unsetenv("NXVK_XFER_THREADS");
  }
  setenv("NXVK_XFER_PIPE", mode == MODE_SYNC ? "0" : "1", 1);
  setenv("NXVK_XFER_WC", mode == MODE_LANES_WC ? "1" : "0", 1);
  setenv("NXVK_XFER_COPY", mode == MODE_LANES_STREAM ? "stream" : "libc", 1);
  if (mode == MODE_IMPORT_REFUSED) setenv("NXVK_TEST_INJECT", "import_fail", 1);
  else unsetenv("NXVK_TEST_INJECT");
  nxvk_ctx *c = NULL;
  int rc = nxvk_ctx_open(NULL, &c);
  CHECK(rc == NXVK_OK, "%s: context opens (%s)", mode_names[mode], rc ? nxvk_errmsg() : "ok");
  if (rc) return;
  bool can_import = c->import_align != 0;
  if (mode != MODE_IMPORT && mode != MODE_IMPORT_REFUSED)
    CHECK(!can_import, "%s: NXVK_XFER_IMPORT=0 turns the import off", mode_names[mode]);
  static const size_t big_sizes[] = {100, 70000, (300 << 10) + 7, (3 << 20) + 5, (40 << 20) + 12345};
  /* 0 and 1 byte, a piece less one, a piece, a piece and one, two pieces
   * and a bit (fewer than the threads), seven pieces less 3 (more) */
  static const size_t piece_sizes[] = {0, 1, 3, 100, (1 << 20) - 1, 1 << 20, (1 << 20) + 1, (2 << 20) + 4097,
                                       (7 << 20) - 3};
  const size_t *sizes = pieces ? piece_sizes : big_sizes;
  size_t nsizes = pieces ? sizeof piece_sizes / sizeof piece_sizes[0] : sizeof big_sizes / sizeof big_sizes[0];
  static const size_t host_offs[] = {0, 1, 4093};
  static const VkDeviceSize buf_offs[] = {0, 12};
  uint64_t seed = 0x9E3779B97F4A7C15ULL;
  for (size_t si = 0; si < nsizes; si++) {
    size_t n = sizes[si];
    char *src = malloc(n + 8192), *dst = malloc(n + 8192);
    if (!src || !dst) {
      CHECK(0, "host memory for %zu bytes", n);
      free(src);
      free(dst);
      continue;
    }
    for (size_t i = 0; i < n + 8192; i += 8) {
      uint64_t v = rnd(&seed);
      memcpy(src + i, &v, n + 8192 - i < 8 ? n + 8192 - i : 8);
    }
    for (size_t hi = 0; hi < sizeof host_offs / sizeof host_offs[0]; hi++)
      for (size_t bi = 0; bi < sizeof buf_offs / sizeof buf_offs[0]; bi++) {
        /* the largest size once only (aligned host, buffer offset 0 and
         * unaligned host, offset 12): each run moves 80 MB on lavapipe */
        if (!pieces && si == 4 && (hi == 0) != (bi == 0)) continue;
        size_t ho = host_offs[hi];
        VkDeviceSize bo = buf_offs[bi];
        nxvk_buffer *b = NULL;
        nxvk_stats s0, s1;
        nxvk_ctx_stats(c, &s0);
        rc = nxvk_buffer_create(c, bo + n, false, &b);
        /* the source's alignment, the reader's another one */
        char *from = src + ho, *to = dst + (4096 - ho) % 4096;
        memset(to, 0xA5, n + 64); /* 64 guard bytes after: a read writes n bytes, no more */
        if (rc == NXVK_OK) rc = nxvk_buffer_write(c, b, bo, from, n);
        if (rc == NXVK_OK) rc = nxvk_buffer_read(c, b, bo, to, n);
        nxvk_buffer_unref(c, b);
        nxvk_ctx_stats(c, &s1);
        uint64_t imported = s1.imported_bytes - s0.imported_bytes, refused = s1.import_failures - s0.import_failures;
        bool same = rc == NXVK_OK && memcmp(from, to, n) == 0;
        for (size_t g = n; g < n + 64; g++) same = same && (unsigned char)to[g] == 0xA5;
        CHECK(same, "%s: %zu bytes, host address %% 4096 = %zu, buffer offset %llu: up and back unchanged (%s)",
              mode_names[mode], n, ho, (unsigned long long)bo, rc ? nxvk_errmsg() : "ok");
        bool big = n >= ((size_t)1 << 20);
        if (mode == MODE_IMPORT && can_import)
          CHECK(big ? imported > 0 && imported <= 2 * n && refused == 0 : imported == 0,
                "import: %zu bytes: %llu imported, %llu refused (%s)", n, (unsigned long long)imported,
                (unsigned long long)refused, big ? "most of both ways" : "none under 1 MiB");
        else if (mode == MODE_IMPORT && !can_import)
          printf("ok %d - # SKIP the device has no VK_EXT_external_memory_host\n", ++tap_n);
        else
          CHECK(imported == 0 && (mode != MODE_IMPORT_REFUSED || !can_import || !big || refused > 0),
                "%s: %zu bytes: nothing imported (%llu refused)", mode_names[mode], n,
                (unsigned long long)refused);
        CHECK(s1.live_buffers == s0.live_buffers, "%s: %zu bytes: no buffer left behind (live %llu, then %llu)",
              mode_names[mode], n, (unsigned long long)s0.live_buffers, (unsigned long long)s1.live_buffers);
      }
    free(src);
    free(dst);
  }
  /* which path ran: the lanes leave idle lanes behind, the others none */
  bool lanes = mode == MODE_LANES || mode == MODE_LANES_WC || mode == MODE_LANES_STREAM || mode == MODE_STAGING;
  CHECK((c->xfer_lanes != NULL) == lanes, "%s: %s", mode_names[mode],
        lanes ? "transfers ran through the lanes" : "no lane was used");
  nxvk_stats st;
  nxvk_ctx_stats(c, &st);
  CHECK(st.validation_messages == 0, "%s: no validation messages (%llu; run with NXVK_VALIDATE=1 to look)",
        mode_names[mode], (unsigned long long)st.validation_messages);
  nxvk_ctx_close(c);
}

/* A worker that fails mid-transfer (NXVK_TEST_INJECT=lane_fail: worker 1
 * refuses its third piece while two of its copies are in flight): the
 * transfer fails with that worker's message, both ways, leaves no buffer
 * behind, and the lanes are idle again: a transfer on one thread (worker
 * 0 only, which never fails) then moves its bytes unchanged. */
static void run_lane_failure(void) {
  setenv("NXVK_STAGING", "1", 1);
  setenv("NXVK_XFER_IMPORT", "0", 1);
  setenv("NXVK_XFER_MIN", "0", 1);
  setenv("NXVK_XFER_PIECE", "1M", 1);
  setenv("NXVK_XFER_THREADS", "3", 1);
  setenv("NXVK_XFER_PIPE", "1", 1);
  setenv("NXVK_TEST_INJECT", "lane_fail", 1);
  nxvk_ctx *c = NULL;
  int rc = nxvk_ctx_open(NULL, &c);
  CHECK(rc == NXVK_OK, "lane failure: context opens (%s)", rc ? nxvk_errmsg() : "ok");
  if (rc) return;
  size_t n = (12 << 20) + 5; /* 13 pieces: worker 1 has its third on 2 or 3 threads */
  char *src = malloc(n), *dst = malloc(n);
  nxvk_buffer *b = NULL;
  nxvk_stats s0, s1;
  nxvk_ctx_stats(c, &s0);
  rc = src && dst ? nxvk_buffer_create(c, n, false, &b) : NXVK_E_NO_MEMORY;
  CHECK(rc == NXVK_OK, "lane failure: a buffer of %zu bytes", n);
  if (rc == NXVK_OK) {
    for (size_t i = 0; i < n; i++) src[i] = (char)(i * 7 + 3);
    rc = nxvk_buffer_write(c, b, 0, src, n);
    CHECK(rc == NXVK_E_ALLOC_FAILED && strstr(nxvk_errmsg(), "refused (NXVK_TEST_INJECT)"),
          "lane failure: the upload fails with the worker's message (%d: %s)", rc, nxvk_errmsg());
    rc = nxvk_buffer_read(c, b, 0, dst, n);
    CHECK(rc == NXVK_E_ALLOC_FAILED && strstr(nxvk_errmsg(), "refused (NXVK_TEST_INJECT)"),
          "lane failure: the download fails the same way (%d: %s)", rc, nxvk_errmsg());
    size_t one = 1 << 20; /* one piece: worker 0 alone */
    memset(dst, 0, one);
    rc = nxvk_buffer_write(c, b, 0, src, one);
    if (rc == NXVK_OK) rc = nxvk_buffer_read(c, b, 0, dst, one);
    CHECK(rc == NXVK_OK && memcmp(src, dst, one) == 0, "lane failure: the lanes work again after it (%s)",
          rc ? nxvk_errmsg() : "ok");
  }
  nxvk_buffer_unref(c, b);
  nxvk_ctx_stats(c, &s1);
  CHECK(s1.live_buffers == s0.live_buffers, "lane failure: no buffer left behind (live %llu, then %llu)",
        (unsigned long long)s0.live_buffers, (unsigned long long)s1.live_buffers);
  free(src);
  free(dst);
  nxvk_ctx_close(c);
  unsetenv("NXVK_TEST_INJECT");
}

/* Pinned host memory (nxvk_pinned_alloc, nxvk_host_register) on the
 * discrete-GPU path (NXVK_STAGING=1); split: NXVK_XFER_PINNED_SPLIT,
 * dma: NXVK_XFER_PINNED (0: the same bytes, none of them by DMA). */
static void run_pinned(const char *split, bool dma) {
  setenv("NXVK_STAGING", "1", 1);
  setenv("NXVK_XFER_IMPORT", "0", 1); /* registration imports whatever this says */
  setenv("NXVK_XFER_PINNED_SPLIT", split, 1);
  setenv("NXVK_XFER_PINNED", dma ? "1" : "0", 1);
  unsetenv("NXVK_XFER_MIN");
  unsetenv("NXVK_XFER_PIECE");
  setenv("NXVK_XFER_THREADS", "3", 1);
  unsetenv("NXVK_TEST_INJECT");
  char what[64];
  snprintf(what, sizeof what, "pinned (split %s%s)", split, dma ? "" : ", NXVK_XFER_PINNED=0");
  nxvk_ctx *c = NULL;
  int rc = nxvk_ctx_open(NULL, &c);
  CHECK(rc == NXVK_OK, "%s: context opens (%s)", what, rc ? nxvk_errmsg() : "ok");
  if (rc) return;
  nxvk_stats s0, s1;
  nxvk_ctx_stats(c, &s0);
  size_t P = (5 << 20) + 3;
  char *up = NULL, *down = NULL, *plain = malloc(P + 64);
  rc = nxvk_pinned_alloc(c, P, (void **)&up);
  if (rc == NXVK_OK) rc = nxvk_pinned_alloc(c, P, (void **)&down);
  CHECK(rc == NXVK_OK && up && down && plain, "%s: two pinned allocations of %zu bytes (%s)", what, P,
        rc ? nxvk_errmsg() : "ok");
  nxvk_ctx_stats(c, &s1);
  CHECK(s1.live_buffers == s0.live_buffers + 2, "%s: each counts as a live buffer (%llu -> %llu)", what,
        (unsigned long long)s0.live_buffers, (unsigned long long)s1.live_buffers);
  uint64_t seed = 0x1234567ULL;
  if (rc == NXVK_OK)
    for (size_t i = 0; i < P; i++) up[i] = (char)rnd(&seed);
  /* (host offset, length, buffer offset, download into pinned memory) */
  static const struct { size_t ho, n, bo; bool pinned_down; } cases[] = {
      {0, (5 << 20) + 3, 0, true},  {1, (3 << 20) + 7, 12, false}, {4093, 100, 12, true},
      {0, 3, 0, true},              {7, (1 << 20) + 1, 4, true}};
  for (size_t k = 0; rc == NXVK_OK && k < sizeof cases / sizeof cases[0]; k++) {
    size_t n = cases[k].n, ho = cases[k].ho;
    nxvk_buffer *b = NULL;
    char *to = cases[k].pinned_down ? down + ho : plain;
    memset(to, 0xA5, n);
    nxvk_stats a, z;
    nxvk_ctx_stats(c, &a);
    int r2 = nxvk_buffer_create(c, cases[k].bo + n, false, &b);
    if (r2 == NXVK_OK) r2 = nxvk_buffer_write(c, b, cases[k].bo, up + ho, n);
    if (r2 == NXVK_OK) r2 = nxvk_buffer_read(c, b, cases[k].bo, to, n);
    nxvk_buffer_unref(c, b);
    nxvk_ctx_stats(c, &z);
    CHECK(r2 == NXVK_OK && memcmp(up + ho, to, n) == 0,
          "%s: %zu bytes from pinned + %zu to buffer offset %zu and back into %s memory, unchanged (%s)", what, n, ho,
          cases[k].bo, cases[k].pinned_down ? "pinned" : "malloc'd", r2 ? nxvk_errmsg() : "ok");
    uint64_t want = dma ? (cases[k].pinned_down ? 2 * n : n) : 0, got = z.pinned_bytes - a.pinned_bytes;
    CHECK(got == want, "%s: %zu bytes: %llu moved by DMA, want %llu", what, n, (unsigned long long)got,
          (unsigned long long)want);
  }
  /* a registered range inside a larger malloc'd block: a transfer of the
   * whole block moves the range's aligned middle by DMA, the rest through
   * staging */
  size_t B = (6 << 20) + 11;
  char *blk = malloc(B), *back = malloc(B);
  if (c->host_align && blk && back) {
    for (size_t i = 0; i < B; i++) blk[i] = (char)rnd(&seed);
    int r2 = nxvk_host_register(c, blk + 100, 4 << 20);
    CHECK(r2 == NXVK_OK, "%s: register 4 MiB of malloc'd memory (%s)", what, r2 ? nxvk_errmsg() : "ok");
    size_t a = (size_t)c->host_align;
    uintptr_t lo = ((uintptr_t)blk + 100 + a - 1) / a * a, hi = ((uintptr_t)blk + 100 + (4 << 20)) / a * a;
    nxvk_buffer *b = NULL;
    nxvk_stats x, y;
    nxvk_ctx_stats(c, &x);
    memset(back, 0, B);
    if (r2 == NXVK_OK) r2 = nxvk_buffer_create(c, B, false, &b);
    if (r2 == NXVK_OK) r2 = nxvk_buffer_write(c, b, 0, blk, B);
    if (r2 == NXVK_OK) r2 = nxvk_buffer_read(c, b, 0, back, B);
    nxvk_buffer_unref(c, b);
    nxvk_ctx_stats(c, &y);
    CHECK(r2 == NXVK_OK && memcmp(blk, back, B) == 0, "%s: %zu bytes straddling the registered range, unchanged (%s)",
          what, B, r2 ? nxvk_errmsg() : "ok");
    uint64_t got = y.pinned_bytes - x.pinned_bytes, want = dma ? (uint64_t)(hi - lo) : 0;
    CHECK(got == want, "%s: the range's aligned middle (%llu bytes) went by DMA: %llu", what,
          (unsigned long long)want, (unsigned long long)got);
    /* a transfer into the range only: all of it by DMA */
    nxvk_ctx_stats(c, &x);
    r2 = nxvk_buffer_create(c, 1 << 20, false, &b);
    if (r2 == NXVK_OK) r2 = nxvk_buffer_write(c, b, 0, (char *)lo, 1 << 20);
    if (r2 == NXVK_OK) r2 = nxvk_buffer_read(c, b, 0, back, 1 << 20);
    nxvk_buffer_unref(c, b);
    nxvk_ctx_stats(c, &y);
    CHECK(r2 == NXVK_OK && memcmp((char *)lo, back, 1 << 20) == 0 && y.pinned_bytes - x.pinned_bytes == (dma ? 1u << 20 : 0),
          "%s: 1 MiB from inside the range: unchanged, %llu by DMA", what,
          (unsigned long long)(y.pinned_bytes - x.pinned_bytes));
    nxvk_host_unregister(c, blk + 100);
    nxvk_host_unregister(c, blk + 100); /* twice: nothing left to do */
  } else {
    printf("ok %d - # SKIP the device has no VK_EXT_external_memory_host\n", ++tap_n);
    printf("ok %d - # SKIP the device has no VK_EXT_external_memory_host\n", ++tap_n);
    printf("ok %d - # SKIP the device has no VK_EXT_external_memory_host\n", ++tap_n);
    printf("ok %d - # SKIP the device has no VK_EXT_external_memory_host\n", ++tap_n);
  }
  free(blk);
  free(back);
  /* nxvk_host_copy on 3 threads, a size no multiple of anything, and 5 bytes */
  if (rc == NXVK_OK) {
    memset(plain, 0, P);
    nxvk_host_copy(c, plain, up, P);
    bool same = memcmp(plain, up, P) == 0;
    nxvk_host_copy(c, plain + 1, up + 3, 5);
    same = same && memcmp(plain + 1, up + 3, 5) == 0 && plain[6] == up[6];
    CHECK(same, "%s: nxvk_host_copy of %zu and 5 bytes: exact, nothing past the end", what, P);
  }
  nxvk_pinned_free(c, down);
  nxvk_pinned_free(c, NULL);
  nxvk_ctx_stats(c, &s1);
  CHECK(s1.live_buffers == s0.live_buffers + (up ? 1 : 0), "%s: freed ones are gone, registrations too (%llu -> %llu)",
        what, (unsigned long long)s0.live_buffers, (unsigned long long)s1.live_buffers);
  free(plain);
  /* up stays allocated: closing the context frees it (asan and valgrind see a leak otherwise) */
  nxvk_ctx_close(c);
  unsetenv("NXVK_XFER_PINNED_SPLIT");
  unsetenv("NXVK_XFER_PINNED");
}

int main(void) {
  run_mode(MODE_STAGING);
  run_mode(MODE_IMPORT);
  run_mode(MODE_IMPORT_REFUSED);
  run_mode(MODE_LANES);
  run_mode(MODE_LANES_WC);
  if (nxvk_xfer_can_stream()) run_mode(MODE_LANES_STREAM);
  else printf("ok %d - # SKIP no streaming copy in this build (x86-64 only)\n", ++tap_n);
  run_mode(MODE_SYNC);
  run_lane_failure();
  run_pinned("1", true);
  run_pinned("3", true);
  run_pinned("1", false);
  return tap_done();
}
