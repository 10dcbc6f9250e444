/*
 * bench_peak.c - `nxvk bench peak`: the roofline as nxvk itself measures it.
 *   fma      f32/f64, scalar/vec4/outer: shaders/peak_fma.comp, GFLOPS from timestamps
 *   copy     device memory to device memory, GB/s read + written: the engine's
 *            copy, nxvk_tensor_copy (variant device: copy_vec4.comp on a
 *            discrete GPU, vkCmdCopyBuffer on CPU and integrated devices), and
 *            copy_vec4.comp alone (variant shader); the roofline takes the faster
 *   h2d d2h  nxvk_tensor_upload / nxvk_tensor_download, wall clock
 *   latency  one empty dispatch: record, submit, wait, wall clock
 *
 * fma and copy need two engine entry points that run kernels which are not
 * ops (nxvk_bench_kernel, nxvk_tensor_copy).  A build whose nxvk.h does not
 * define NXVK_HAVE_BENCH_KERNELS says so for each of them instead, and
 * measures latency with a 1-element op.
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static bench_row *peak_row(bench_ctx *b, const char *name, const char *variant, const char *dtype,
                           int64_t size) {
  bench_row *row = bench_add_row(b->rep);
  if (!row) return NULL;
  row->device = b->device;
  row->mode = "peak";
  snprintf(row->name, sizeof row->name, "%s", name);
  snprintf(row->variant, sizeof row->variant, "%s", variant);
  row->dtype = dtype;
  row->size = size;
  row->gbps = row->gflops = row->gflops_min = row->gflops_max = NAN;
  row->speedup = row->speedup_e2e = row->pct_peak = row->latency_us = NAN;
  row->max_abs = row->max_ulp = NAN;
  return row;
}

/* Transfer size: the largest power of two up to 256 MiB that one storage
 * buffer may hold, unless --bytes chose one. */
static int64_t transfer_bytes(const bench_ctx *b) {
  if (b->o->peak_bytes > 0) return b->o->peak_bytes;
  uint64_t cap = (uint64_t)256 << 20, bytes = 1 << 20;
  if (b->info.max_storage_buffer_range < cap) cap = b->info.max_storage_buffer_range;
  while (bytes * 2 <= cap) bytes *= 2;
  return (int64_t)bytes;
}

/* ---- host <-> device ---- */

typedef struct xfer {
  nxvk_ctx *c;
  nxvk_tensor *t;
  void *host;
  size_t bytes;
  long calls;
} xfer;

static int upload_once(void *arg, double *ns) {
  xfer *x = arg;
  double t0 = nxvk_now_ns();
  int rc = nxvk_tensor_upload(x->c, x->t, x->host, x->bytes);
  *ns = nxvk_now_ns() - t0;
  x->calls++;
  return rc;
}

static int download_once(void *arg, double *ns) {
  xfer *x = arg;
  double t0 = nxvk_now_ns();
  int rc = nxvk_tensor_download(x->c, x->t, x->host, x->bytes);
  *ns = nxvk_now_ns() - t0;
  x->calls++;
  return rc;
}

typedef struct hostcopy {
  nxvk_ctx *c;
  void *dst;
  const void *src;
  size_t bytes;
} hostcopy;

static int hostcopy_once(void *arg, double *ns) {
  hostcopy *h = arg;
  double t0 = nxvk_now_ns();
  int rc = nxvk_host_copy(h->c, h->dst, h->src, h->bytes);
  *ns = nxvk_now_ns() - t0;
  return rc;
}

/* One timed row of bench transfers: fn over arg, GB/s of bytes a call. */
static int xfer_row(bench_ctx *b, const char *name, const char *variant, int64_t size, double bytes,
                    bench_fn fn, void *arg, const char *check, const char *note, bool pinned) {
  bench_progress(b, "peak %s %s", name, variant);
  bench_row *row = peak_row(b, name, variant, "", size);
  if (!row) return NXVK_E_NO_MEMORY;
  nxvk_stats s0, s1;
  nxvk_ctx_stats(b->ctx, &s0);
  long calls = 0;
  int rc = bench_repeat(b->o, 1, true, fn, arg, &row->e2e);
  nxvk_ctx_stats(b->ctx, &s1);
  if (pinned) calls = ((xfer *)arg)->calls;
  if (rc) {
    b->rep->nrows--;
    return rc;
  }
  row->bytes = bytes;
  row->gbps = row->bytes / row->e2e.median;
  snprintf(row->check, sizeof row->check, "%s", check);
  if (pinned) /* how much the device copied straight from or into pinned memory (NXVK_XFER_PINNED=0: none) */
    snprintf(row->note, sizeof row->note, "%s; %.0f%% of bytes by DMA", note,
             calls ? 100.0 * (double)(s1.pinned_bytes - s0.pinned_bytes) / (bytes * (double)calls) : 0.0);
  else
    snprintf(row->note, sizeof row->note, "%s", note);
  bench_progress_done(b);
  bench_print_row(row);
  return NXVK_OK;
}

/* The pinned rows: the same tensor up from and down into host memory the
 * engine pinned (nxvk_pinned_alloc: the device's copy alone, no memcpy),
 * checked by a round trip; then the memcpy the pageable rows pay, alone:
 * the transfer threads copying pageable memory into pinned memory and back
 * (nxvk_host_copy), the rate a staged transfer cannot pass. */
static int bench_pinned(bench_ctx *b, xfer *x, int64_t bytes, const nxvk_host *h) {
  void *up = NULL, *down = NULL;
  nxvk_host back = {0};
  int rc = nxvk_pinned_alloc(b->ctx, x->bytes, &up);
  if (rc == NXVK_OK) rc = nxvk_pinned_alloc(b->ctx, x->bytes, &down);
  if (rc == NXVK_OK) rc = nxvk_host_alloc(&back, h->dtype, &h->shape);
  if (rc) goto out;
  memcpy(up, h->data, x->bytes);
  memset(down, 0, x->bytes);
  rc = nxvk_tensor_upload(b->ctx, x->t, up, x->bytes);
  if (rc == NXVK_OK) rc = nxvk_tensor_download(b->ctx, x->t, down, x->bytes);
  if (rc) goto out;
  if (memcmp(h->data, down, x->bytes) != 0) {
    bench_progress_done(b);
    fprintf(stderr, "nxvk: error: bench: peak: %zu bytes uploaded from and downloaded into pinned memory came back changed\n",
            x->bytes);
    rc = NXVK_E_MISMATCH;
    goto out;
  }
  x->host = up;
  x->calls = 0;
  rc = xfer_row(b, "h2d", "pinned-upload", bytes, (double)x->bytes, upload_once, x, "round trip",
                "nxvk_tensor_upload from nxvk_pinned_alloc memory, wall clock", true);
  x->host = down;
  x->calls = 0;
  if (rc == NXVK_OK)
    rc = xfer_row(b, "d2h", "pinned-download", bytes, (double)x->bytes, download_once, x, "round trip",
                  "nxvk_tensor_download into nxvk_pinned_alloc memory, wall clock", true);
  hostcopy hc = {b->ctx, up, h->data, x->bytes};
  if (rc == NXVK_OK)
    rc = xfer_row(b, "memcpy", "to-pinned", bytes, (double)x->bytes, hostcopy_once, &hc, "-",
                  "nxvk_host_copy (the transfer threads and copy) from malloc'd memory into pinned memory", false);
  hc = (hostcopy){b->ctx, back.data, down, x->bytes};
  if (rc == NXVK_OK)
    rc = xfer_row(b, "memcpy", "from-pinned", bytes, (double)x->bytes, hostcopy_once, &hc, "-",
                  "nxvk_host_copy from pinned memory into malloc'd memory", false);
  if (rc == NXVK_OK && memcmp(back.data, h->data, x->bytes) != 0) {
    fprintf(stderr, "nxvk: error: bench: peak: nxvk_host_copy changed the bytes\n");
    rc = NXVK_E_MISMATCH;
  }
out:
  nxvk_pinned_free(b->ctx, up);
  nxvk_pinned_free(b->ctx, down);
  nxvk_host_free(&back);
  return rc;
}

static int bench_transfers(bench_ctx *b, int64_t bytes) {
  nxvk_shape s = {1, {bytes / 4}};
  nxvk_host h = {0}, back = {0};
  xfer x = {b->ctx, NULL, NULL, (size_t)(bytes / 4) * 4, 0};
  int rc = nxvk_host_alloc(&h, NXVK_F32, &s);
  if (rc == NXVK_OK) rc = nxvk_host_alloc(&back, NXVK_F32, &s);
  if (rc == NXVK_OK) rc = nxvk_tensor_new(b->ctx, NXVK_F32, &s, &x.t);
  if (rc) goto out;
  bench_fill_random(b, &h);
  /* the check: what goes up comes back unchanged */
  rc = nxvk_tensor_upload(b->ctx, x.t, h.data, x.bytes);
  if (rc == NXVK_OK) rc = nxvk_tensor_download(b->ctx, x.t, back.data, x.bytes);
  if (rc) goto out;
  if (memcmp(h.data, back.data, x.bytes) != 0) {
    bench_progress_done(b);
    fprintf(stderr, "nxvk: error: bench: peak: %zu bytes uploaded and downloaded came back changed\n",
            x.bytes);
    nxvk_tensor_free(x.t);
    nxvk_host_free(&h);
    nxvk_host_free(&back);
    return EXIT_FAIL;
  }
  const char *names[2] = {"h2d", "d2h"}, *variants[2] = {"upload", "download"};
  for (int dir = 0; dir < 2 && rc == NXVK_OK; dir++) {
    bench_progress(b, "peak %s", names[dir]);
    bench_row *row = peak_row(b, names[dir], variants[dir], "", bytes);
    if (!row) {
      rc = NXVK_E_NO_MEMORY;
      break;
    }
    x.host = dir == 0 ? h.data : back.data;
    nxvk_stats s0, s1;
    nxvk_ctx_stats(b->ctx, &s0);
    x.calls = 0;
    rc = bench_repeat(b->o, 1, true, dir == 0 ? upload_once : download_once, &x, &row->e2e);
    nxvk_ctx_stats(b->ctx, &s1);
    if (rc) {
      b->rep->nrows--;
      break;
    }
    row->bytes = (double)x.bytes;
    row->gbps = row->bytes / row->e2e.median;
    snprintf(row->check, sizeof row->check, "round trip");
    /* how much moved by DMA straight from or to host memory (memory.c) */
    double imported = (double)(s1.imported_bytes - s0.imported_bytes), moved = (double)x.bytes * (double)x.calls;
    snprintf(row->note, sizeof row->note,
             "%s, wall clock; %.0f%% of bytes imported (VK_EXT_external_memory_host), %llu imports refused",
             dir == 0 ? "nxvk_tensor_upload" : "nxvk_tensor_download", moved > 0 ? 100.0 * imported / moved : 0.0,
             (unsigned long long)(s1.import_failures - s0.import_failures));
    bench_progress_done(b);
    bench_print_row(row);
  }
  if (rc == NXVK_OK) rc = bench_pinned(b, &x, bytes, &h);
out:
  nxvk_tensor_free(x.t);
  nxvk_host_free(&h);
  nxvk_host_free(&back);
  if (rc == NXVK_E_MISMATCH) return EXIT_FAIL;
  return rc ? cli_engine_error(rc) : EXIT_OK;
}

#ifdef NXVK_HAVE_BENCH_KERNELS

enum { FMA_WG = 256, FMA_ITERS = 1024, FMA_CHECK_ITERS = 16, FMA_FLOPS_PER_ITER = 64 };
#define FMA_TARGET_NS 20e6 /* one timed dispatch lasts about this long */

/* The recurrence's constants: x -> x*a + c with a = 1 - 2^-8 converges to 1
 * slowly enough that the check run's result depends on every step. */
static const float fma_a = 1.0f - 0x1.0p-8f, fma_c = 0x1.0p-8f, fma_sentinel = -1.0f;

static uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

void bench_fma_meta(uint32_t meta[4], bool store) {
  uint32_t m[4] = {f32_bits(fma_a), f32_bits(fma_c), store, f32_bits(fma_sentinel)};
  memcpy(meta, m, sizeof m);
}

typedef struct fma_run {
  nxvk_ctx *c;
  char kernel[32];
  uint32_t spec[2], meta[4];
  nxvk_tensor *out;
  uint32_t groups;
  bool timestamps;
} fma_run;

static int fma_once(void *arg, double *ns) {
  fma_run *f = arg;
  double t0 = nxvk_now_ns();
  int rc = nxvk_bench_kernel(f->c, f->kernel, f->spec, 2, f->meta, 4, &f->out, 1, f->groups,
                             f->timestamps ? ns : NULL);
  if (!f->timestamps) *ns = nxvk_now_ns() - t0;
  return rc;
}

/* The fma variants: the chains of x -> x*a + c, four lanes of them, and a
 * 4 x 8 register tile (shaders/peak_fma.comp, kernel peak_fma_<dtype><suffix>). */
enum fma_variant { FMA_SCALAR, FMA_VEC4, FMA_OUTER, FMA_NVARIANTS };
static const struct {
  const char *name, *suffix, *check;
  int lanes;
} fma_variants[FMA_NVARIANTS] = {
    {"scalar", "", "recurrence", 1},
    {"vec4", "_vec4", "recurrence", 4},
    {"outer", "_outer", "tile", 1},
};

/* The value invocation i of the check run must hold, in double: the sum of
 * its chains, or of its tile (iters * x[r] * y[c] each). */
static double fma_expected(int i, enum fma_variant v, int iters) {
  if (v == FMA_OUTER) {
    double xs = 0, ys = 0;
    for (int r = 0; r < 4; r++) xs += fma_a + (i % 16) / 128.0 + r / 8.0;
    for (int c = 0; c < 8; c++) ys += (double)fma_c * (c + 1);
    return iters * xs * ys;
  }
  int lanes = fma_variants[v].lanes, steps = iters * 4;
  double r = 0;
  for (int j = 0; j < 8; j++)
    for (int l = 0; l < lanes; l++) {
      double x = 1.0 + i / 1024.0 + j / 64.0 + l / 256.0;
      for (int s = 0; s < steps; s++) x = x * fma_a + fma_c;
      r += x;
    }
  return r;
}

/* half: the f16 chains (peak_fma_f16*, shaderFloat16), results stored as f32
 * (d), reported as dtype f16 and kept out of f32's peak */
static int bench_fma_one(bench_ctx *b, nxvk_dtype d, enum fma_variant v, bool half) {
  int lanes = fma_variants[v].lanes;
  fma_run f = {.c = b->ctx, .timestamps = b->info.timestamps, .groups = 1};
  snprintf(f.kernel, sizeof f.kernel, "peak_fma_%s%s", half ? "f16" : nxvk_dtype_name(d), fma_variants[v].suffix);
  nxvk_shape s = {1, {FMA_WG}};
  nxvk_host got = {0};
  int rc = nxvk_tensor_new(b->ctx, d, &s, &f.out);
  if (rc) return cli_engine_error(rc);

  /* check: one workgroup, few iterations, every invocation stores */
  f.spec[0] = FMA_WG;
  f.spec[1] = FMA_CHECK_ITERS;
  bench_fma_meta(f.meta, true);
  double ns;
  rc = fma_once(&f, &ns);
  if (rc == NXVK_OK) rc = nxvk_tensor_to_host(b->ctx, f.out, &got);
  if (rc) goto fail;
  /* f16: the recurrence's steps near its fixed point are under an f16 ulp
   * and round away (1.7% seen on lavapipe), sums of 8 to 32 chains */
  double tol = half ? 5e-2 : d == NXVK_F32 ? 1e-4 : 1e-10, worst = 0;
  for (int i = 0; i < FMA_WG; i++) {
    double want = fma_expected(i, v, FMA_CHECK_ITERS), have = nxvk_host_get(&got, i);
    double rel = fabs(have - want) / want;
    if (!(rel <= tol)) {
      bench_progress_done(b);
      fprintf(stderr, "nxvk: error: bench: peak: %s gave %.17g at invocation %d, want %.17g\n", f.kernel,
              have, i, want);
      nxvk_tensor_free(f.out);
      nxvk_host_free(&got);
      return EXIT_FAIL;
    }
    if (rel > worst) worst = rel;
  }
  nxvk_host_free(&got);

  /* timed: grow the grid until one dispatch lasts FMA_TARGET_NS */
  f.spec[1] = FMA_ITERS;
  f.meta[2] = 0;
  f.groups = 64;
  uint32_t cap = b->info.max_workgroup_count[0];
  for (;;) {
    rc = fma_once(&f, &ns);
    if (rc) goto fail;
    if (ns >= FMA_TARGET_NS || f.groups >= cap) break;
    double grow = ns > 0 ? FMA_TARGET_NS / ns * 1.1 : 16;
    if (grow > 16) grow = 16;
    if (grow < 2) grow = 2;
    f.groups = (uint32_t)((double)f.groups * grow) > cap ? cap : (uint32_t)((double)f.groups * grow);
  }
  bench_row *row = peak_row(b, "fma", fma_variants[v].name, half ? "f16" : nxvk_dtype_name(d), 0);
  if (!row) {
    rc = NXVK_E_NO_MEMORY;
    goto fail;
  }
  rc = bench_repeat(b->o, 1, true, fma_once, &f, &row->gpu);
  if (rc) {
    b->rep->nrows--;
    goto fail;
  }
  row->size = (int64_t)f.groups * FMA_WG;
  row->flops = (double)FMA_FLOPS_PER_ITER * FMA_ITERS * lanes * FMA_WG * f.groups;
  row->gflops = row->flops / row->gpu.median;
  row->gflops_min = row->flops / row->gpu.max;
  row->gflops_max = row->flops / row->gpu.min;
  row->max_abs = NAN;
  row->max_ulp = NAN;
  snprintf(row->check, sizeof row->check, "%s (%d iters)", fma_variants[v].check, FMA_CHECK_ITERS);
  snprintf(row->note, sizeof row->note, "%u workgroups x %d invocations x %d iterations; rel. error %.2g",
           f.groups, FMA_WG, FMA_ITERS, worst);
  if (!half && row->gflops > b->peak_fma[d]) b->peak_fma[d] = row->gflops;
  bench_progress_done(b);
  bench_print_row(row);
  nxvk_tensor_free(f.out);
  return EXIT_OK;
fail:
  nxvk_tensor_free(f.out);
  nxvk_host_free(&got);
  return cli_engine_error(rc);
}

/* ---- cooperative-matrix rates (peak_coopmat.comp) ---- */

enum { COOP_WG = 128, COOP_ITERS = 1024, COOP_CHECK_ITERS = 16, COOP_NACC = 8 };

enum coop_kind { COOP_F16, COOP_INT8, COOP_BF16, COOP_NKINDS };
static const char *const coop_kind_names[COOP_NKINDS] = {"f16", "int8", "bf16"};

/* The largest configuration the device lists (f16 x f16 + f32 -> f32,
 * s8 x s8 + s32 -> s32, bf16 x bf16 + f32 -> f32), or false when it lists none. */
static bool coop_shape(const nxvk_device_info *d, enum coop_kind kind, uint32_t f[3]) {
  int n = kind == COOP_INT8 ? d->coop_s8_nshapes : kind == COOP_BF16 ? d->coop_bf16_nshapes : d->coop_f16_nshapes;
  uint64_t best = 0;
  for (int i = 0; i < n; i++) {
    const uint32_t *s = kind == COOP_INT8   ? d->coop_s8_shapes[i]
                        : kind == COOP_BF16 ? d->coop_bf16_shapes[i]
                                            : d->coop_f16_shapes[i];
    uint64_t v = (uint64_t)s[0] * s[1] * s[2];
    if (v > best && v <= 16384 && s[0] % 8 == 0 && s[1] % 8 == 0) {
      best = v;
      memcpy(f, s, 3 * sizeof *f);
    }
  }
  return best > 0;
}

/* One row: NACC chains of coopMatMulAddNV per subgroup on one fragment pair
 * (x = 0.5, y = 0.25 for f16 and bf16; 1 and 2 for int8), checked exactly on one
 * workgroup (every result element is NACC x iters x FK x x y), then timed
 * on a grid grown until a dispatch lasts FMA_TARGET_NS.  bf16 runs as KHR
 * cooperative matrices (spirv_khr.c). */
static int bench_coopmat_one(bench_ctx *b, enum coop_kind kind) {
  const nxvk_device_info *d = &b->info;
  bool int8 = kind == COOP_INT8;
  const char *type = coop_kind_names[kind];
  uint32_t f[3];
  if (kind == COOP_BF16 && (!d->coopmat_bf16_f32 || d->subgroup_size != 32 || !coop_shape(d, kind, f))) {
    bench_add_skip(b, "peak", "coopmat", type, 0,
                   "not supported: %s has no bf16 cooperative matrices nxvk can use (VK_KHR_cooperative_matrix "
                   "with VK_KHR_shader_bfloat16, a bf16 x bf16 + f32 -> f32 subgroup configuration, "
                   "vulkanMemoryModel and 32-wide subgroups)",
                   d->name);
    return EXIT_OK;
  }
  /* int8 runs as an NV kernel only; f16 as either (nxvk_coopmat_khr) */
  if (int8 ? !d->coop_matrix_nv : !d->coop_matrix_nv && !d->coop_matrix_khr) {
    bench_add_skip(b, "peak", "coopmat", type, 0, "not supported: %s has no VK_NV_cooperative_matrix%s", d->name,
                   int8 ? "" : " or VK_KHR_cooperative_matrix");
    return EXIT_OK;
  }
  if (kind != COOP_BF16 && (!(int8 ? d->coopmat_nv_f16 : d->coopmat_f16_f32) || d->subgroup_size != 32 ||
                            (int8 && !d->int8) || !coop_shape(d, kind, f))) {
    bench_add_skip(b, "peak", "coopmat", type, 0,
                   "not supported: %s lists no %s subgroup configuration nxvk can use (or lacks %s, "
                   "vulkanMemoryModel or 32-wide subgroups)",
                   d->name, int8 ? "s8 x s8 + s32 -> s32" : "f16 x f16 + f32 -> f32", int8 ? "shaderInt8" : "shaderFloat16");
    return EXIT_OK;
  }
  bench_progress(b, "peak coopmat %s %ux%ux%u", type, f[0], f[1], f[2]);
  fma_run r = {.c = b->ctx, .timestamps = d->timestamps, .groups = 1};
  /* f16 through KHR where the context runs its f16 kernels so (faster on NVIDIA: bench/NOTES.md) */
  bool khr = kind == COOP_BF16 || (kind == COOP_F16 && nxvk_coopmat_khr(b->ctx, false));
  snprintf(r.kernel, sizeof r.kernel, "peakcm_%ux%ux%u_%s", f[0], f[1], f[2],
           int8 ? "s8" : kind == COOP_F16 && khr ? "f16k" : type);
  uint32_t per_sg = f[0] * f[1], n = COOP_WG / 32 * per_sg;
  nxvk_shape s = {1, {n}};
  nxvk_host got = {0};
  int rc = nxvk_tensor_new(b->ctx, int8 ? NXVK_I32 : NXVK_F32, &s, &r.out);
  if (rc) return cli_engine_error(rc);
  double x = int8 ? 1 : 0.5, y = int8 ? 2 : 0.25;
  r.spec[0] = COOP_WG;
  r.spec[1] = COOP_CHECK_ITERS;
  r.meta[0] = 1;
  r.meta[1] = int8 ? (uint32_t)-1 : f32_bits(fma_sentinel);
  r.meta[2] = int8 ? (uint32_t)x : f32_bits((float)x);
  r.meta[3] = int8 ? (uint32_t)y : f32_bits((float)y);
  double ns;
  rc = fma_once(&r, &ns);
  if (rc == NXVK_OK) rc = nxvk_tensor_to_host(b->ctx, r.out, &got);
  if (rc) goto fail;
  double want = (double)COOP_NACC * COOP_CHECK_ITERS * f[2] * x * y;
  for (uint32_t i = 0; i < n; i++) {
    double have = nxvk_host_get(&got, i);
    if (have != want) {
      bench_progress_done(b);
      fprintf(stderr, "nxvk: error: bench: peak: %s gave %.17g at element %u, want %.17g\n", r.kernel, have, i, want);
      nxvk_tensor_free(r.out);
      nxvk_host_free(&got);
      return EXIT_FAIL;
    }
  }
  nxvk_host_free(&got);
  r.spec[1] = COOP_ITERS;
  r.meta[0] = 0;
  r.groups = 64;
  uint32_t cap = d->max_workgroup_count[0];
  for (;;) {
    rc = fma_once(&r, &ns);
    if (rc) goto fail;
    if (ns >= FMA_TARGET_NS || r.groups >= cap) break;
    double grow = ns > 0 ? FMA_TARGET_NS / ns * 1.1 : 16;
    if (grow > 16) grow = 16;
    if (grow < 2) grow = 2;
    r.groups = (uint32_t)((double)r.groups * grow) > cap ? cap : (uint32_t)((double)r.groups * grow);
  }
  char shape[32];
  snprintf(shape, sizeof shape, "%ux%ux%u", f[0], f[1], f[2]);
  bench_row *row = peak_row(b, "coopmat", shape, type, 0);
  if (!row) {
    rc = NXVK_E_NO_MEMORY;
    goto fail;
  }
  rc = bench_repeat(b->o, 1, true, fma_once, &r, &row->gpu);
  if (rc) {
    b->rep->nrows--;
    goto fail;
  }
  row->size = (int64_t)r.groups * COOP_WG;
  row->flops = 2.0 * f[0] * f[1] * f[2] * COOP_NACC * COOP_ITERS * (COOP_WG / 32) * r.groups;
  row->gflops = row->flops / row->gpu.median;
  row->gflops_min = row->flops / row->gpu.max;
  row->gflops_max = row->flops / row->gpu.min;
  snprintf(row->check, sizeof row->check, "exact (%d iters)", COOP_CHECK_ITERS);
  snprintf(row->note, sizeof row->note,
           "%u workgroups x %d subgroups x %d accumulators x %d iterations of %s %s%s", r.groups, COOP_WG / 32,
           COOP_NACC, COOP_ITERS, shape, khr ? "KHR multiply-adds (fragments from shared memory)" : "coopMatMulAddNV",
           int8 ? "; int8 ops counted as flops" : "");
  bench_progress_done(b);
  bench_print_row(row);
  nxvk_tensor_free(r.out);
  return EXIT_OK;
fail:
  nxvk_tensor_free(r.out);
  nxvk_host_free(&got);
  return cli_engine_error(rc);
}

/* all: the f16 and cooperative-matrix rows too (bench peak and all; matmul
 * needs only the f32/f64 peaks its %peak divides by) */
static int bench_fma(bench_ctx *b, bool all) {
  static const nxvk_dtype dts[2] = {NXVK_F32, NXVK_F64};
  for (int i = 0; i < 2; i++) {
    if (!nxvk_ctx_supports(b->ctx, dts[i])) {
      bench_add_skip(b, "peak", "fma", nxvk_dtype_name(dts[i]), 0, "%s cannot compute %s", b->info.name,
                     nxvk_dtype_name(dts[i]));
      continue;
    }
    for (int v = 0; v < FMA_NVARIANTS; v++) {
      bench_progress(b, "peak fma %s %s", nxvk_dtype_name(dts[i]), fma_variants[v].name);
      int status = bench_fma_one(b, dts[i], (enum fma_variant)v, false);
      if (status) return status;
    }
  }
  if (!all) return EXIT_OK;
  /* f16 arithmetic (scalar chains and f16vec4, which packs pairs where the
   * device has half2 FMA) where the device has shaderFloat16 */
  if (!b->info.f16) {
    bench_add_skip(b, "peak", "fma", "f16", 0, "not supported: %s has no shaderFloat16", b->info.name);
  } else {
    for (int v = FMA_SCALAR; v <= FMA_VEC4; v++) {
      bench_progress(b, "peak fma f16 %s", fma_variants[v].name);
      int status = bench_fma_one(b, NXVK_F32, (enum fma_variant)v, true);
      if (status) return status;
    }
  }
  /* the tensor-core rates (shaders/peak_coopmat.comp) where the device has
   * NV cooperative matrices of the type */
  for (int k = 0; k < COOP_NKINDS; k++) {
    int status = bench_coopmat_one(b, (enum coop_kind)k);
    if (status) return status;
  }
  return EXIT_OK;
}

typedef struct copy_run {
  nxvk_ctx *c;
  nxvk_tensor *src, *dst;
  bool timestamps;
  bool shader;          /* copy_vec4.comp alone instead of nxvk_tensor_copy */
  uint32_t words;       /* shader: 16-byte words */
  uint32_t groups;
} copy_run;

static int copy_once(void *arg, double *ns) {
  copy_run *x = arg;
  double t0 = nxvk_now_ns();
  int rc;
  if (x->shader) {
    uint32_t spec[1] = {256}, meta[1] = {x->words};
    nxvk_tensor *bufs[2] = {x->src, x->dst};
    rc = nxvk_bench_kernel(x->c, "copy_vec4", spec, 1, meta, 1, bufs, 2, x->groups, x->timestamps ? ns : NULL);
  } else {
    rc = nxvk_tensor_copy(x->c, x->dst, x->src, ns);
  }
  if (!x->timestamps) *ns = nxvk_now_ns() - t0;
  return rc;
}

static int bench_copy(bench_ctx *b, int64_t bytes, bool shader) {
  nxvk_shape s = {1, {bytes / 4}};
  nxvk_host h = {0}, back = {0};
  copy_run x = {b->ctx, NULL, NULL, b->info.timestamps, shader, 0, 0};
  if (shader) {
    uint64_t words = (uint64_t)bytes / 16, groups = (words + 1023) / 1024; /* 256 invocations x 4 words */
    if (bytes % 16 || words > UINT32_MAX) {
      bench_add_skip(b, "peak", "copy", "", bytes, "the copy shader moves whole 16-byte words");
      return EXIT_OK;
    }
    x.words = (uint32_t)words;
    x.groups = (uint32_t)(groups < 1 ? 1 : groups > b->info.max_workgroup_count[0] ? b->info.max_workgroup_count[0] : groups);
  }
  bench_progress(b, "peak copy");
  int rc = nxvk_host_alloc(&h, NXVK_F32, &s);
  if (rc == NXVK_OK) rc = nxvk_host_alloc(&back, NXVK_F32, &s);
  if (rc == NXVK_OK) rc = nxvk_tensor_new(b->ctx, NXVK_F32, &s, &x.src);
  if (rc == NXVK_OK) rc = nxvk_tensor_new(b->ctx, NXVK_F32, &s, &x.dst);
  if (rc == NXVK_OK) {
    bench_fill_random(b, &h);
    rc = nxvk_tensor_upload(b->ctx, x.src, h.data, nxvk_host_bytes(&h));
  }
  double ns;
  if (rc == NXVK_OK) rc = copy_once(&x, &ns);
  if (rc == NXVK_OK) rc = nxvk_tensor_download(b->ctx, x.dst, back.data, nxvk_host_bytes(&back));
  int status = EXIT_OK;
  if (rc == NXVK_OK && memcmp(h.data, back.data, nxvk_host_bytes(&h)) != 0) {
    bench_progress_done(b);
    fprintf(stderr, "nxvk: error: bench: peak: a device copy of %lld bytes came out different\n",
            (long long)bytes);
    status = EXIT_FAIL;
  }
  if (rc == NXVK_OK && status == EXIT_OK) {
    bench_row *row = peak_row(b, "copy", shader ? "shader" : "device", "", bytes);
    if (!row) rc = NXVK_E_NO_MEMORY;
    if (row) rc = bench_repeat(b->o, 1, true, copy_once, &x, &row->gpu);
    if (row && rc) b->rep->nrows--;
    if (row && rc == NXVK_OK) {
      row->bytes = 2.0 * (double)nxvk_host_bytes(&h); /* read once, written once */
      row->gbps = row->bytes / row->gpu.median;
      snprintf(row->check, sizeof row->check, "bytes equal");
      snprintf(row->note, sizeof row->note,
               shader ? "copy_vec4.comp (16-byte loads, %u workgroups of 256); GB/s counts bytes read + written"
                      : "nxvk_tensor_copy (copy_vec4.comp on a discrete GPU, else vkCmdCopyBuffer); GB/s counts bytes read + written", x.groups);
      if (row->gbps > b->peak_copy_gbps) b->peak_copy_gbps = row->gbps; /* the faster of the two */
      bench_progress_done(b);
      bench_print_row(row);
    }
  }
  nxvk_tensor_free(x.src);
  nxvk_tensor_free(x.dst);
  nxvk_host_free(&h);
  nxvk_host_free(&back);
  if (rc) return cli_engine_error(rc);
  return status;
}

/* An empty dispatch: the FMA kernel with no iterations, one invocation. */
static int bench_latency(bench_ctx *b) {
  fma_run f = {.c = b->ctx, .timestamps = true, .groups = 1};
  snprintf(f.kernel, sizeof f.kernel, "peak_fma_f32");
  f.spec[0] = 1;
  f.spec[1] = 0;
  bench_fma_meta(f.meta, false);
  nxvk_shape s = {1, {FMA_WG}};
  bench_progress(b, "peak latency");
  int rc = nxvk_tensor_new(b->ctx, NXVK_F32, &s, &f.out);
  if (rc) return cli_engine_error(rc);
  bench_row *row = peak_row(b, "latency", "empty", "", 0);
  if (!row) rc = NXVK_E_NO_MEMORY;
  /* the wall clock around the whole call is the latency; the timestamps of
   * a first series say how much of it the GPU spent */
  bench_stat gpu = {0};
  if (rc == NXVK_OK) rc = bench_repeat(b->o, 1, true, fma_once, &f, &gpu);
  if (rc == NXVK_OK) {
    f.timestamps = false; /* fma_once now gives the wall time */
    rc = bench_repeat(b->o, 1, true, fma_once, &f, &row->e2e);
  }
  nxvk_tensor_free(f.out);
  if (rc) {
    if (row) b->rep->nrows--;
    return cli_engine_error(rc);
  }
  if (b->info.timestamps) row->gpu = gpu;
  row->latency_us = row->e2e.median / 1e3;
  snprintf(row->check, sizeof row->check, "-");
  snprintf(row->note, sizeof row->note, "record + submit + wait of one empty dispatch, wall clock");
  bench_progress_done(b);
  bench_print_row(row);
  return EXIT_OK;
}

#else /* no benchmark kernels in this engine */

static void unavailable(bench_ctx *b, const char *name) {
  bench_add_skip(b, "peak", name, "", 0,
                 "not available in this build: the engine lacks nxvk_bench_kernel/nxvk_tensor_copy "
                 "(NXVK_HAVE_BENCH_KERNELS)");
}

static int bench_fma(bench_ctx *b, bool all) {
  (void)all;
  unavailable(b, "fma");
  return EXIT_OK;
}

static int bench_copy(bench_ctx *b, int64_t bytes, bool shader) {
  (void)bytes;
  if (shader) return EXIT_OK;
  unavailable(b, "copy");
  return EXIT_OK;
}

typedef struct op_latency {
  nxvk_ctx *c;
  const nxvk_op_desc *op;
  nxvk_tensor *in;
} op_latency;

static int op_latency_once(void *arg, double *ns) {
  op_latency *l = arg;
  nxvk_tensor *out = NULL;
  double t0 = nxvk_now_ns();
  int rc = nxvk_op_run(l->c, l->op, NULL, &l->in, 1, &out);
  *ns = nxvk_now_ns() - t0;
  nxvk_tensor_free(out);
  return rc;
}

/* Without an empty kernel: the first unary f32 op of the table on one
 * element, checked against its reference like any timed result. */
static int bench_latency(bench_ctx *b) {
  op_latency l = {b->ctx, NULL, NULL};
  for (int i = 0; i < nxvk_op_count() && !l.op; i++) {
    const nxvk_op_desc *d = nxvk_op_at(i);
    if (d->kind == NXVK_KIND_UNARY && (d->dtypes & NXVK_DT(NXVK_F32))) l.op = d;
  }
  if (!l.op) {
    bench_add_skip(b, "peak", "latency", "", 0, "no unary f32 op in the table to dispatch");
    return EXIT_OK;
  }
  bench_progress(b, "peak latency");
  nxvk_shape s = {1, {1}};
  nxvk_host h = {0}, got = {0}, ref = {0};
  nxvk_tensor *out = NULL;
  int status = EXIT_OK, rc = nxvk_host_alloc(&h, NXVK_F32, &s);
  if (rc == NXVK_OK) {
    bench_fill_random(b, &h);
    rc = nxvk_tensor_from_host(b->ctx, &h, &l.in);
  }
  if (rc == NXVK_OK) rc = nxvk_op_run(b->ctx, l.op, NULL, &l.in, 1, &out);
  if (rc == NXVK_OK) rc = nxvk_tensor_to_host(b->ctx, out, &got);
  if (rc == NXVK_OK) rc = nxvk_op_ref(l.op, NULL, &h, 1, &ref);
  nxvk_cmp cmp;
  if (rc == NXVK_OK) rc = nxvk_check(&b->info, l.op, NULL, &h, 1, &got, &ref, &cmp);
  if (rc == NXVK_OK && cmp.bad) {
    bench_progress_done(b);
    fprintf(stderr, "nxvk: error: bench: peak: latency op %s gave %.17g, want %.17g\n", l.op->name,
            cmp.worst_got, cmp.worst_ref);
    status = EXIT_FAIL;
  }
  bench_row *row = NULL;
  if (rc == NXVK_OK && !status) {
    row = peak_row(b, "latency", "1-element op", "f32", 1);
    if (!row) rc = NXVK_E_NO_MEMORY;
  }
  if (row) {
    rc = bench_repeat(b->o, 1, true, op_latency_once, &l, &row->e2e);
    if (rc) b->rep->nrows--;
  }
  if (row && rc == NXVK_OK) {
    row->latency_us = row->e2e.median / 1e3;
    snprintf(row->check, sizeof row->check, "full");
    snprintf(row->note, sizeof row->note,
             "one dispatch of %s on 1 element (no empty kernel in this build), wall clock", l.op->name);
    bench_progress_done(b);
    bench_print_row(row);
  }
  nxvk_tensor_free(out);
  nxvk_tensor_free(l.in);
  nxvk_host_free(&h);
  nxvk_host_free(&got);
  nxvk_host_free(&ref);
  if (rc) return cli_engine_error(rc);
  return status;
}

#endif

int bench_peak_transfers(bench_ctx *b) {
  bench_print_header("peak");
  return bench_transfers(b, transfer_bytes(b));
}

int bench_peak(bench_ctx *b, bool fma_only) {
  bench_print_header("peak");
  int status = bench_fma(b, !fma_only);
  if (status || fma_only) return status;
  int64_t bytes = transfer_bytes(b);
  status = bench_copy(b, bytes, false);
  if (status == EXIT_OK) status = bench_copy(b, bytes, true);
  if (status == EXIT_OK) status = bench_transfers(b, bytes);
  if (status == EXIT_OK) status = bench_latency(b);
  return status;
}
