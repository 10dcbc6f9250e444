/*
 * bench_fusion.c - `nxvk bench fusion` (see bench_fusion.h).
 *
 * The chain is chosen from the op table by kind and limit, never by name:
 * the binary ops that are exact for f32, alternating with the exact unary
 * ops, eight in all, each binary op reading the second input y.  Two inputs
 * and one output: the fused chain moves the bytes of one binary op, so on
 * a memory-bound device its time should be close to one add's.
 */
#include "bench_fusion.h"
#include "cases.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CHAIN 8
#define CHECK_ELEMENTS 65536
#define WARM_ELEMENTS 1024

static double now_ms(void) { return nxvk_now_ns() * 1e-6; }

typedef struct {
  double median, min, max;
  int repeats;
} stat_t;

static void stat_of(double *v, int n, stat_t *s) {
  qsort(v, (size_t)n, sizeof *v, nxvk_cmp_double);
  s->repeats = n;
  s->min = n ? v[0] : 0;
  s->max = n ? v[n - 1] : 0;
  s->median = n ? (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) : 0;
}

/* The chain's ops: exact f32 binary and unary rows of the table, alternated. */
static int choose_chain(const nxvk_op_desc **chain, const nxvk_op_desc **single) {
  const nxvk_op_desc *bin[32], *un[32];
  int nb = 0, nu = 0;
  *single = NULL;
  for (int i = 0; i < nxvk_op_count(); i++) {
    const nxvk_op_desc *op = nxvk_op_at(i);
    nxvk_limit lim;
    if (!op->expr || !(op->dtypes & NXVK_DT(NXVK_F32))) continue;
    if (op->kind == NXVK_KIND_BINARY && !*single) *single = op; /* the table's first: add */
    if (nxvk_op_limit(op, NXVK_F32, &lim) || !lim.exact) continue;
    if (op->kind == NXVK_KIND_BINARY && nb < 32) bin[nb++] = op;
    if (op->kind == NXVK_KIND_UNARY && nu < 32) un[nu++] = op;
  }
  if (nb == 0 || !*single) return -1;
  for (int i = 0; i < CHAIN; i++)
    chain[i] = (i % 2 == 0 || nu == 0) ? bin[(i / 2) % nb] : un[(i / 2) % nu];
  return 0;
}

/* The graph as JSON, its inputs x and y as handles: the tensors are given
 * to the run (uploaded from memory), as a port client's would be. */
static char *chain_graph(const nxvk_op_desc *const *ops, int nops) {
  cJSON *root = cJSON_CreateObject(), *in = cJSON_AddObjectToObject(root, "inputs");
  cJSON *list = cJSON_AddArrayToObject(root, "ops"), *outs = cJSON_AddObjectToObject(root, "outputs");
  for (int k = 0; k < 2; k++) {
    cJSON *t = cJSON_CreateObject();
    cJSON_AddNumberToObject(t, "handle", k + 1);
    cJSON_AddItemToObject(in, k ? "y" : "x", t);
  }
  char prev[16] = "x", name[16] = "x";
  for (int i = 0; i < nops; i++) {
    cJSON *o = cJSON_CreateObject(), *args = cJSON_AddArrayToObject(o, "in");
    cJSON_AddStringToObject(o, "op", ops[i]->name);
    cJSON_AddItemToArray(args, cJSON_CreateString(prev));
    if (ops[i]->kind == NXVK_KIND_BINARY) cJSON_AddItemToArray(args, cJSON_CreateString("y"));
    snprintf(name, sizeof name, "t%d", i);
    cJSON_AddStringToObject(o, "out", name);
    cJSON_AddItemToArray(list, o);
    snprintf(prev, sizeof prev, "%s", name);
  }
  cJSON_AddTrueToObject(outs, name);
  char *text = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  return text;
}

/* Repeated timed runs of graph g (GPU time); warm-up first. */
static int time_graph(nxvk_ctx *c, const nxvk_graph *g, nxvk_tensor *const *in, bool fuse,
                      double min_time, stat_t *st, int *kernels) {
  int total = nxvk_graph_input_count(g) + nxvk_graph_node_count(g);
  nxvk_tensor **vals = calloc((size_t)total, sizeof *vals);
  double *t = malloc(10000 * sizeof *t);
  if (!vals || !t) {
    free(vals);
    free(t);
    return NXVK_E_NO_MEMORY;
  }
  int n = 0, rc = NXVK_OK;
  double start = now_ms();
  for (int it = 0; rc == NXVK_OK && n < 10000; it++) {
    double ns = 0;
    nxvk_plan *plan = NULL;
    nxvk_run_opts o = {.no_fusion = !fuse, .batch_flags = NXVK_BATCH_TIMESTAMPS, .gpu_ns = &ns,
                       .plan = it == 0 ? &plan : NULL};
    rc = nxvk_graph_run_opts(c, g, in, vals, &o);
    for (int i = 0; i < total; i++) {
      nxvk_tensor_free(vals[i]);
      vals[i] = NULL;
    }
    if (plan) *kernels = plan->nsteps;
    nxvk_plan_free(plan);
    if (it < 2) continue; /* warm-up: pipelines, pools, caches */
    t[n++] = ns / 1e6;
    if (n >= 5 && now_ms() - start >= min_time * 1e3) break;
  }
  if (rc == NXVK_OK) stat_of(t, n, st);
  free(vals);
  free(t);
  return rc;
}

/* A context on the same device with its caches in folder (NULL: off). */
static int open_like(nxvk_ctx *c, const char *folder, nxvk_ctx **out) {
  nxvk_device_info info;
  nxvk_ctx_device_info(c, &info);
  char idx[16];
  snprintf(idx, sizeof idx, "%d", info.index);
  nxvk_ctx_opts o = {.device = idx, .no_cache = folder == NULL, .cache_dir = folder};
  return nxvk_ctx_open(&o, out);
}

/* Where a start's time goes: parse, upload, the graph run (planning, GLSL
 * and key, cache read, pipeline, recording, GPU), download. */
typedef struct {
  double total, parse, upload, run, download;
} phases;

/* Graph text -> parsed -> inputs up -> run -> output down. */
static int parse_to_result(nxvk_ctx *c, const char *text, const nxvk_host *hosts, nxvk_plan **plan,
                           phases *ph) {
  double t0 = now_ms(), t;
  nxvk_graph *g = NULL;
  int rc = nxvk_graph_parse(text, strlen(text), "bench fusion", &g);
  ph->parse = now_ms() - t0;
  t = now_ms();
  int ni = g ? nxvk_graph_input_count(g) : 0, total = g ? ni + nxvk_graph_node_count(g) : 0;
  nxvk_tensor *in[2] = {NULL, NULL}, **vals = g ? calloc((size_t)total, sizeof *vals) : NULL;
  nxvk_host out = {0};
  if (rc == NXVK_OK && !vals) rc = NXVK_E_NO_MEMORY;
  for (int i = 0; i < ni && i < 2 && rc == NXVK_OK; i++)
    rc = nxvk_tensor_from_host(c, &hosts[i], &in[i]);
  ph->upload = now_ms() - t;
  t = now_ms();
  nxvk_run_opts o = {.plan = plan};
  if (rc == NXVK_OK) rc = nxvk_graph_run_opts(c, g, in, vals, &o);
  ph->run = now_ms() - t;
  t = now_ms();
  if (rc == NXVK_OK) rc = nxvk_tensor_to_host(c, vals[nxvk_graph_output_value(g, 0)], &out);
  ph->download = now_ms() - t;
  ph->total = now_ms() - t0;
  nxvk_host_free(&out);
  for (int i = 0; vals && i < total; i++) nxvk_tensor_free(vals[i]);
  for (int i = 0; i < 2; i++) nxvk_tensor_free(in[i]);
  free(vals);
  nxvk_graph_free(g);
  return rc;
}

/* The scratch cache folder: our own files (spirv/<key>.spv,
 * pipeline-*.bin, and temporaries of either), then the folders. */
static void remove_cache_folder(const char *dir) {
  char path[4200];
  for (int pass = 0; pass < 2; pass++) {
    snprintf(path, sizeof path, pass == 0 ? "%s/spirv" : "%s", dir);
    DIR *d = opendir(path);
    for (struct dirent *ent = d ? readdir(d) : NULL; ent; ent = readdir(d)) {
      const char *n = ent->d_name;
      bool ours = pass == 0 ? strstr(n, ".spv") != NULL
                            : strncmp(n, "pipeline-", 9) == 0 || strncmp(n, ".pipeline-", 10) == 0;
      if (!ours) continue;
      char f[4500];
      snprintf(f, sizeof f, "%s/%s", path, n);
      unlink(f);
    }
    if (d) closedir(d);
    rmdir(path);
  }
}

static void put_stat(cJSON *o, const char *key, const stat_t *s) {
  cJSON *t = cJSON_AddObjectToObject(o, key);
  cJSON_AddNumberToObject(t, "median_ms", s->median);
  cJSON_AddNumberToObject(t, "min_ms", s->min);
  cJSON_AddNumberToObject(t, "max_ms", s->max);
  cJSON_AddNumberToObject(t, "repeats", s->repeats);
}

static void print_stat(FILE *out, const char *what, const stat_t *s) {
  fprintf(out, "  %-34s gpu %10.3f ms  (min %.3f, max %.3f, %d runs)\n", what, s->median, s->min,
          s->max, s->repeats);
}

int bench_fusion_run(nxvk_ctx *c, long elements, double min_time, FILE *out, void *json_report) {
  int64_t n = elements > 0 ? elements : (int64_t)16 << 20;
  const nxvk_op_desc *chain[CHAIN], *single;
  if (choose_chain(chain, &single) != 0) return NXVK_E_UNSUPPORTED;
  nxvk_device_info info;
  nxvk_ctx_device_info(c, &info);
  char names[256] = "";
  for (int i = 0; i < CHAIN; i++) {
    strcat(names, i ? " " : "");
    strncat(names, chain[i]->name, sizeof names - strlen(names) - 1);
  }
  fprintf(out, "fusion: %d-op f32 chain (%s) vs one %s, %lld elements, on %s\n", CHAIN, names,
          single->name, (long long)n, info.name);

  /* inputs, the graphs, a correctness check on a slice */
  nxvk_shape shape = {1, {n}}, small = {1, {n < CHECK_ELEMENTS ? n : CHECK_ELEMENTS}};
  nxvk_host hx = {0}, hy = {0}, sx = {0}, sy = {0};
  nxvk_tensor *tin[2] = {NULL, NULL}, *sin_[2] = {NULL, NULL};
  nxvk_graph *gchain = NULL, *gsingle = NULL;
  char *tchain = chain_graph(chain, CHAIN), *tsingle = chain_graph(&single, 1);
  int rc = tchain && tsingle ? NXVK_OK : NXVK_E_NO_MEMORY;
  if (rc == NXVK_OK) rc = nxvk_host_alloc(&hx, NXVK_F32, &shape);
  if (rc == NXVK_OK) rc = nxvk_host_alloc(&hy, NXVK_F32, &shape);
  if (rc == NXVK_OK) rc = nxvk_host_alloc(&sx, NXVK_F32, &small);
  if (rc == NXVK_OK) rc = nxvk_host_alloc(&sy, NXVK_F32, &small);
  if (rc == NXVK_OK) {
    uint64_t rng = 1; /* the case maker's timing values, as bench's other inputs */
    cases_fill_timing(&hx, &rng);
    cases_fill_timing(&hy, &rng);
    memcpy(sx.data, hx.data, nxvk_host_bytes(&sx));
    memcpy(sy.data, hy.data, nxvk_host_bytes(&sy));
  }
  if (rc == NXVK_OK) rc = nxvk_graph_parse(tchain, strlen(tchain), "bench fusion chain", &gchain);
  if (rc == NXVK_OK) rc = nxvk_graph_parse(tsingle, strlen(tsingle), "bench fusion single", &gsingle);
  if (rc == NXVK_OK) rc = nxvk_tensor_from_host(c, &hx, &tin[0]);
  if (rc == NXVK_OK) rc = nxvk_tensor_from_host(c, &hy, &tin[1]);
  if (rc == NXVK_OK) rc = nxvk_tensor_from_host(c, &sx, &sin_[0]);
  if (rc == NXVK_OK) rc = nxvk_tensor_from_host(c, &sy, &sin_[1]);

  /* cold compile and warm start, in a scratch cache folder; first, so that
   * the cold start pays what a new process pays (glslang's set-up too) */
  double cold_glslang = 0, cold_pipeline = 0, cold_total = 0, warm[3] = {0, 0, 0};
  phases wph[3] = {{0}};          /* the warm starts, for where their time went */
  nxvk_plan_step wstep[3] = {{0}};
  nxvk_code_source warm_source = NXVK_CODE_EMBEDDED;
  char folder[512] = "";
  const char *tmp = getenv("TMPDIR");
  snprintf(folder, sizeof folder, "%s/nxvk-bench-fusion-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  bool made = rc == NXVK_OK && mkdtemp(folder) != NULL;
  if (rc == NXVK_OK && !made) {
    fprintf(out, "  cold/warm: skipped: cannot create %s: %s\n", folder, strerror(errno));
  }
  nxvk_host wx = {0}, wy = {0};
  nxvk_shape wshape = {1, {WARM_ELEMENTS}};
  char *twarm = NULL;
  if (made && (rc = nxvk_host_alloc(&wx, NXVK_F32, &wshape)) == NXVK_OK &&
      (rc = nxvk_host_alloc(&wy, NXVK_F32, &wshape)) == NXVK_OK) {
    size_t wb = nxvk_host_bytes(&wx) < nxvk_host_bytes(&hx) ? nxvk_host_bytes(&wx) : nxvk_host_bytes(&hx);
    memcpy(wx.data, hx.data, wb);
    memcpy(wy.data, hy.data, wb);
    twarm = chain_graph(chain, CHAIN); /* inputs by handle: uploaded from memory */
    if (!twarm) rc = NXVK_E_NO_MEMORY;
  }
  for (int round = 0; made && rc == NXVK_OK && round < 4; round++) {
    nxvk_ctx *fresh = NULL;
    nxvk_plan *plan = NULL;
    phases ph = {0};
    rc = open_like(c, folder, &fresh);
    nxvk_host whost[2] = {wx, wy};
    if (rc == NXVK_OK) rc = parse_to_result(fresh, twarm, whost, &plan, &ph);
    double ms = ph.total;
    for (int s = 0; rc == NXVK_OK && s < plan->nsteps; s++) {
      if (!plan->steps[s].fused) continue;
      if (round == 0) {
        cold_glslang += plan->steps[s].compile_ms;
        cold_pipeline += plan->steps[s].pipeline_ms;
      } else {
        warm_source = plan->steps[s].source;
        wstep[round - 1] = plan->steps[s];
        wstep[round - 1].nodes = wstep[round - 1].inputs = wstep[round - 1].outputs = NULL;
      }
    }
    if (round == 0) {
      cold_total = ms;
    } else {
      warm[round - 1] = ms;
      wph[round - 1] = ph;
    }
    nxvk_plan_free(plan);
    nxvk_ctx_close(fresh); /* saves the pipeline cache into the folder */
  }
  if (made) remove_cache_folder(folder);
  nxvk_cmp cmp = {0};
  if (rc == NXVK_OK) { /* the fused kernel (same code at any size) on a slice, checked */
    int total = 2 + CHAIN, nodes[CHAIN];
    nxvk_tensor *vals[2 + CHAIN] = {0};
    nxvk_host hv[2 + CHAIN] = {sx, sy}, got = {0};
    for (int i = 0; i < CHAIN; i++) nodes[i] = i;
    rc = nxvk_graph_run_opts(c, gchain, sin_, vals, NULL);
    if (rc == NXVK_OK) rc = nxvk_tensor_to_host(c, vals[total - 1], &got);
    if (rc == NXVK_OK) rc = nxvk_check_nodes(&info, gchain, nodes, CHAIN, hv, total - 1, &got, &cmp, NULL, 0);
    for (int i = 0; i < total; i++) nxvk_tensor_free(vals[i]);
    nxvk_host_free(&got);
    if (rc == NXVK_OK && cmp.bad) {
      fprintf(out, "  check: FAIL: %lld of %lld elements of the fused chain outside its limit; "
                   "first [%lld] got %.9g want %.9g\n",
              (long long)cmp.bad, (long long)cmp.n, (long long)cmp.worst, cmp.worst_got, cmp.worst_ref);
      rc = NXVK_E_MISMATCH;
    }
  }

  /* kernel times */
  stat_t fused = {0}, unfused = {0}, one = {0};
  int kf = 0, ku = 0, k1 = 0;
  if (rc == NXVK_OK) rc = time_graph(c, gchain, tin, true, min_time, &fused, &kf);
  if (rc == NXVK_OK) rc = time_graph(c, gchain, tin, false, min_time, &unfused, &ku);
  if (rc == NXVK_OK) rc = time_graph(c, gsingle, tin, true, min_time, &one, &k1);
  double ratio = one.median > 0 ? fused.median / one.median : 0;
  if (rc == NXVK_OK) {
    char what[64];
    snprintf(what, sizeof what, "fused chain (%d kernel%s)", kf, kf == 1 ? "" : "s");
    print_stat(out, what, &fused);
    snprintf(what, sizeof what, "unfused chain (%d kernels)", ku);
    print_stat(out, what, &unfused);
    snprintf(what, sizeof what, "one %s", single->name);
    print_stat(out, what, &one);
    fprintf(out, "  %-34s %.2fx the kernel time of one %s; unfused %.2fx (1.00x: the %d-op chain costs what one op does)\n",
            "fused chain", ratio, single->name, one.median > 0 ? unfused.median / one.median : 0, CHAIN);
    fprintf(out, "  %-34s %lld elements within the composed limit (max ulp %.3g)\n", "check",
            (long long)cmp.n, cmp.max_ulp);
  }

  /* the median warm start, with its phases */
  int mid = 0;
  for (int i = 0; i < 3; i++) {
    int below = 0;
    for (int j = 0; j < 3; j++) below += warm[j] < warm[i] || (warm[j] == warm[i] && j < i);
    if (below == 1) mid = i;
  }
  const phases *wp = &wph[mid];
  const nxvk_plan_step *ws = &wstep[mid];
  if (made && rc == NXVK_OK) {
    fprintf(out, "  %-34s glslang %.1f ms, pipeline %.1f ms; parse to result %.1f ms\n",
            "cold start (empty cache)", cold_glslang, cold_pipeline, cold_total);
    fprintf(out, "  %-34s %.2f ms parse to result (median of 3 fresh contexts; %s)\n",
            "warm start (cache hit)", warm[mid],
            warm_source == NXVK_CODE_DISK ? "SPIR-V from the disk cache" : "NOT a disk-cache hit");
    fprintf(out, "  %-34s parse %.2f, upload %.2f, run %.2f (GLSL+key %.2f, cache read %.2f, pipeline %.2f), "
                 "download %.2f ms\n",
            "  where it went", wp->parse, wp->upload, wp->run, ws->glsl_ms, ws->cache_ms, ws->pipeline_ms,
            wp->download);
  }

  if (rc == NXVK_OK && json_report) {
    cJSON *o = cJSON_AddObjectToObject((cJSON *)json_report, "fusion");
    cJSON *ops = cJSON_AddArrayToObject(o, "chain");
    for (int i = 0; i < CHAIN; i++) cJSON_AddItemToArray(ops, cJSON_CreateString(chain[i]->name));
    cJSON_AddStringToObject(o, "single", single->name);
    cJSON_AddStringToObject(o, "dtype", "f32");
    cJSON_AddNumberToObject(o, "elements", (double)n);
    cJSON_AddStringToObject(o, "device", info.name);
    put_stat(o, "fused_gpu", &fused);
    put_stat(o, "unfused_gpu", &unfused);
    put_stat(o, "single_gpu", &one);
    cJSON_AddNumberToObject(o, "fused_kernels", kf);
    cJSON_AddNumberToObject(o, "unfused_kernels", ku);
    cJSON_AddNumberToObject(o, "ratio_fused_to_single", ratio);
    cJSON_AddNumberToObject(o, "check_elements", (double)cmp.n);
    cJSON_AddNumberToObject(o, "check_max_ulp", cmp.max_ulp);
    if (made) {
      cJSON_AddNumberToObject(o, "cold_glslang_ms", cold_glslang);
      cJSON_AddNumberToObject(o, "cold_pipeline_ms", cold_pipeline);
      cJSON_AddNumberToObject(o, "cold_parse_to_result_ms", cold_total);
      cJSON_AddNumberToObject(o, "warm_parse_to_result_ms", warm[mid]);
      cJSON *wj = cJSON_AddObjectToObject(o, "warm_phases_ms");
      cJSON_AddNumberToObject(wj, "parse", wp->parse);
      cJSON_AddNumberToObject(wj, "upload", wp->upload);
      cJSON_AddNumberToObject(wj, "run", wp->run);
      cJSON_AddNumberToObject(wj, "glsl_and_key", ws->glsl_ms);
      cJSON_AddNumberToObject(wj, "cache_read", ws->cache_ms);
      cJSON_AddNumberToObject(wj, "pipeline", ws->pipeline_ms);
      cJSON_AddNumberToObject(wj, "download", wp->download);
      cJSON_AddBoolToObject(o, "warm_disk_cache_hit", warm_source == NXVK_CODE_DISK);
      cJSON_AddNumberToObject(o, "warm_elements", WARM_ELEMENTS);
    }
  }
  free(twarm);
  nxvk_host_free(&wx);
  nxvk_host_free(&wy);
  for (int i = 0; i < 2; i++) {
    nxvk_tensor_free(tin[i]);
    nxvk_tensor_free(sin_[i]);
  }
  nxvk_graph_free(gchain);
  nxvk_graph_free(gsingle);
  free(tchain);
  free(tsingle);
  nxvk_host_free(&hx);
  nxvk_host_free(&hy);
  nxvk_host_free(&sx);
  nxvk_host_free(&sy);
  return rc;
}
