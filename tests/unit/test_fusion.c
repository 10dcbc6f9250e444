/* test_fusion.c - TAP tests for fusion's parts on the default device:
 * glslang at run time (and the NoContraction pass), the on-disk caches
 * through their API (hit, miss, every kind of corruption, the pipeline
 * cache's checks), run-time kernels, the planner's decisions (chains, trees,
 * cycles, kernel limits, u8 wrap, dead values, shapes) and the composed
 * comparison (it passes exact chains and catches a one-ULP error). */
#define _POSIX_C_SOURCE 200809L

#include "nxvk.h"
#include "ops/fusion.h"
#include "tap.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static nxvk_ctx *ctx;
static char tmpdir[256];

/* ------------------------------------------------------------ glslang */

static const char *tiny =
    "#version 450\n"
    "layout(local_size_x = 1) in;\n"
    "layout(std430, binding = 0) buffer B { float v[]; } b;\n"
    "void main() { b.v[0] = b.v[1] * b.v[2] + b.v[3]; b.v[4] = log(inversesqrt(b.v[5])); }\n";

static int count_decorations(const uint32_t *w, size_t bytes) {
  int n = 0;
  for (size_t i = 5; i < bytes / 4;) {
    uint32_t wc = w[i] >> 16, op = w[i] & 0xffff;
    if (wc == 0) break;
    if (op == 71 && wc == 3 && w[i + 2] == 42) n++;
    i += wc;
  }
  return n;
}

static void *compile_thread(void *arg) {
  uint32_t *words;
  size_t bytes;
  int rc = nxvk_glsl_compile(tiny, "thread", &words, &bytes);
  *(size_t *)arg = rc ? 0 : bytes;
  if (!rc) free(words);
  return NULL;
}

static void test_glslang(void) {
  uint32_t *words = NULL;
  size_t bytes = 0;
  int rc = nxvk_glsl_compile(tiny, "tiny", &words, &bytes);
  CHECK(rc == 0 && bytes > 20 && words[0] == 0x07230203u, "glslang compiles GLSL to SPIR-V (%zu bytes): %s",
        bytes, rc ? nxvk_errmsg() : "ok");
  int deco = rc ? 0 : count_decorations(words, bytes);
  /* fmul, fadd, inversesqrt, log */
  CHECK(deco >= 4, "NoContraction on main's arithmetic and built-ins (%d decorations)", deco);
  size_t before = bytes;
  if (!rc) rc = nxvk_spirv_no_contraction(&words, &bytes);
  CHECK(rc == 0 && bytes == before, "the NoContraction pass adds nothing twice (%zu -> %zu bytes)", before, bytes);
  free(words);
  rc = nxvk_glsl_compile("#version 450\nvoid main() { undeclared = 1; }\n", "broken", &words, &bytes);
  CHECK(rc == NXVK_E_BAD_REQUEST && strstr(nxvk_errmsg(), "broken: glslang") && !words,
        "a GLSL error is an error naming the shader: %s", nxvk_errmsg());
  pthread_t th[4];
  size_t got[4] = {0};
  for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, compile_thread, &got[i]);
  for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
  CHECK(got[0] && got[0] == got[1] && got[1] == got[2] && got[2] == got[3],
        "four threads compile at once, all alike (%zu %zu %zu %zu bytes)", got[0], got[1], got[2], got[3]);
}

/* ------------------------------------------------------------ caches */

static const char *key = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

static void spv_path(char *buf, size_t len) { snprintf(buf, len, "%s/c1/spirv/%s.spv", tmpdir, key); }

/* A way to damage a cache file (damage()) and what the reader must say of it. */
typedef struct {
  const char *what, *why; /* the damage, and the words the reader's reason must hold */
  long at;                /* the byte to flip */
  int flip;               /* its bits to flip (0: none) */
  long cut;               /* the length to cut the file to (-1: none) */
} damage_case;

static void damage(const char *path, long at, int flip, long truncate_to) {
  FILE *f = fopen(path, "r+b");
  if (!f) return;
  if (flip) {
    fseek(f, at, SEEK_SET);
    int ch = fgetc(f);
    fseek(f, at, SEEK_SET);
    fputc(ch ^ flip, f);
  }
  fclose(f);
  if (truncate_to >= 0 && truncate(path, truncate_to) != 0) perror("truncate");
}

static void test_spirv_cache(void) {
  char dir[300], path[400], why[160];
  snprintf(dir, sizeof dir, "%s/c1", tmpdir);
  uint32_t *words = NULL;
  size_t bytes = 0;
  nxvk_glsl_compile(tiny, "tiny", &words, &bytes);
  uint32_t *back = NULL;
  size_t nb = 0;
  CHECK(nxvk_cache_spirv_load(dir, key, &back, &nb, why, sizeof why) == NXVK_CACHE_MISS && !back,
        "SPIR-V cache: no file is a miss");
  CHECK(nxvk_cache_spirv_store(dir, key, words, bytes) == 0, "SPIR-V cache: stored (folders made)");
  nxvk_cache_result r = nxvk_cache_spirv_load(dir, key, &back, &nb, why, sizeof why);
  CHECK(r == NXVK_CACHE_HIT && nb == bytes && memcmp(back, words, bytes) == 0, "SPIR-V cache: a hit gives the same words");
  free(back);
  spv_path(path, sizeof path);
  damage_case cases[] = {
      {"truncated payload", "truncated", 0, 0, 88 + 40},
      {"truncated header", "truncated", 0, 0, 50},
      {"empty", "truncated", 0, 0, 0},
      {"flipped SPIR-V byte", "checksum", 88 + 100, 4, -1},
      {"flipped checksum byte", "checksum", 60, 1, -1},
      {"flipped key byte", "another key", 30, 1, -1},
      {"flipped magic", "magic", 2, 1, -1},
      {"flipped version", "format version", 8, 2, -1},
      {"flipped length", "truncated or padded", 16, 4, -1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    nxvk_cache_spirv_store(dir, key, words, bytes);
    damage(path, cases[i].at, cases[i].flip, cases[i].cut);
    back = NULL;
    r = nxvk_cache_spirv_load(dir, key, &back, &nb, why, sizeof why);
    CHECK(r == NXVK_CACHE_CORRUPT && !back && strstr(why, cases[i].why),
          "SPIR-V cache: %s is detected (%s)", cases[i].what, why);
    free(back);
  }
  /* a file named for one key holding another key's code */
  const char *key2 = "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100";
  char path2[400];
  snprintf(path2, sizeof path2, "%s/c1/spirv/%s.spv", tmpdir, key2);
  nxvk_cache_spirv_store(dir, key, words, bytes);
  rename(path, path2);
  r = nxvk_cache_spirv_load(dir, key2, &back, &nb, why, sizeof why);
  CHECK(r == NXVK_CACHE_CORRUPT && strstr(why, "another key"), "SPIR-V cache: a renamed file is refused (%s)", why);
  free(words);
}

static void test_pipeline_cache(void) {
  char dir[300];
  snprintf(dir, sizeof dir, "%s/c2", tmpdir);
  nxvk_ctx_opts o = {.cache_dir = dir};
  nxvk_cache_info ci;
  nxvk_ctx *c = NULL;
  int rc = nxvk_ctx_open(&o, &c);
  nxvk_ctx_cache_info(c, &ci);
  CHECK(rc == 0 && ci.enabled && strcmp(ci.dir, dir) == 0 && strstr(ci.pipeline_cache, "none yet"),
        "pipeline cache: none at first (%s)", ci.pipeline_cache);
  nxvk_tensor *t = NULL, *r = NULL;
  nxvk_host h = {0};
  nxvk_shape s = {1, {4}};
  nxvk_host_alloc(&h, NXVK_F32, &s);
  nxvk_tensor_from_host(c, &h, &t);
  nxvk_op_run(c, nxvk_op_find("exp"), NULL, &t, 1, &r); /* a pipeline through the cache */
  nxvk_tensor_free(t);
  nxvk_tensor_free(r);
  nxvk_ctx_close(c);
  char file[400];
  nxvk_device_info info;
  nxvk_ctx_device_info(ctx, &info);
  snprintf(file, sizeof file, "%s/pipeline-%04x-%04x.bin", dir, info.vendor_id, info.device_id);
  struct stat st;
  CHECK(stat(file, &st) == 0 && st.st_size >= 56 + 32, "pipeline cache: saved at close (%lld bytes)",
        (long long)st.st_size);
  rc = nxvk_ctx_open(&o, &c);
  nxvk_ctx_cache_info(c, &ci);
  CHECK(rc == 0 && strstr(ci.pipeline_cache, "loaded"), "pipeline cache: loaded at open (%s)", ci.pipeline_cache);
  nxvk_ctx_close(c);
  damage_case cases[] = {
      {"truncated", "truncated", 0, 0, st.st_size - 1},
      {"header only", "truncated header", 0, 0, 30},
      {"another vendor", "another device or driver", 12, 1, -1},
      {"another driver version", "another device or driver", 20, 1, -1},
      {"another UUID", "another device or driver", 24, 1, -1},
      {"a flipped blob byte", "checksum", 56 + 20, 1, -1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    damage(file, cases[i].at, cases[i].flip, cases[i].cut);
    rc = nxvk_ctx_open(&o, &c);
    nxvk_ctx_cache_info(c, &ci);
    CHECK(rc == 0 && strstr(ci.pipeline_cache, cases[i].why) && strstr(ci.pipeline_cache, "ignored"),
          "pipeline cache: %s is ignored (%s)", cases[i].what, ci.pipeline_cache);
    nxvk_ctx_close(c); /* and written again */
    rc = nxvk_ctx_open(&o, &c);
    nxvk_ctx_cache_info(c, &ci);
    CHECK(rc == 0 && strstr(ci.pipeline_cache, "loaded"), "pipeline cache: rewritten after %s (%s)",
          cases[i].what, ci.pipeline_cache);
    nxvk_ctx_close(c);
  }
  nxvk_ctx_opts off = {.cache_dir = dir, .no_cache = true};
  rc = nxvk_ctx_open(&off, &c);
  nxvk_ctx_cache_info(c, &ci);
  CHECK(rc == 0 && !ci.enabled && strcmp(ci.pipeline_cache, "off") == 0, "no_cache: caches off (%s)",
        ci.pipeline_cache);
  nxvk_ctx_close(c);
  nxvk_host_free(&h);
}

static void test_runtime_kernel(void) {
  uint32_t *words = NULL;
  size_t bytes = 0;
  nxvk_glsl_compile(tiny, "tiny", &words, &bytes);
  uint32_t spec[1] = {1};
  nxvk_kernel *k1 = (nxvk_kernel *)1, *k2 = NULL, *k3 = NULL;
  int rc = nxvk_kernel_get_spirv(ctx, key, NULL, 0, spec, 1, 0, &k1);
  CHECK(rc == 0 && k1 == NULL, "run-time kernel: a lookup of an unbuilt key finds nothing");
  rc = nxvk_kernel_get_spirv(ctx, key, words, bytes, spec, 1, 0, &k2);
  CHECK(rc == 0 && k2, "run-time kernel: built from SPIR-V: %s", rc ? nxvk_errmsg() : "ok");
  rc = nxvk_kernel_get_spirv(ctx, key, NULL, 0, spec, 1, 0, &k3);
  CHECK(rc == 0 && k3 == k2, "run-time kernel: found again by its key");
  uint32_t bad[5] = {1, 2, 3, 4, 5};
  rc = nxvk_kernel_get_spirv(ctx, "other", bad, sizeof bad, spec, 1, 0, &k3);
  CHECK(rc == NXVK_E_BAD_REQUEST, "run-time kernel: words without the SPIR-V magic are refused");
  free(words);
}

/* ------------------------------------------------------------ planner */

typedef struct {
  nxvk_graph *g;
  nxvk_tensor **vals, **in;
  nxvk_plan *plan;
  int ni, total;
} run_t;

static int run_graph(const char *json, bool fuse, run_t *r) {
  memset(r, 0, sizeof *r);
  int rc = nxvk_graph_parse(json, strlen(json), "test", &r->g);
  if (rc) return rc;
  r->ni = nxvk_graph_input_count(r->g);
  r->total = r->ni + nxvk_graph_node_count(r->g);
  r->vals = calloc((size_t)r->total, sizeof *r->vals);
  r->in = calloc((size_t)r->ni + 1, sizeof *r->in);
  for (int i = 0; i < r->ni && rc == 0; i++) rc = nxvk_tensor_from_host(ctx, nxvk_graph_input_host(r->g, i), &r->in[i]);
  nxvk_run_opts o = {.no_fusion = !fuse, .plan = &r->plan};
  if (rc == 0) rc = nxvk_graph_run_opts(ctx, r->g, r->in, r->vals, &o);
  return rc;
}

static void run_free(run_t *r) {
  for (int i = 0; i < r->total && r->vals; i++) nxvk_tensor_free(r->vals[i]);
  for (int i = 0; i < r->ni && r->in; i++) nxvk_tensor_free(r->in[i]);
  free(r->vals);
  free(r->in);
  nxvk_plan_free(r->plan);
  nxvk_graph_free(r->g);
}

/* "3,1,1": the node counts of the plan's steps in order */
static void shape_of_plan(const nxvk_plan *p, char *buf, size_t len) {
  size_t at = 0;
  buf[0] = 0;
  for (int s = 0; p && s < p->nsteps && at < len; s++)
    at += (size_t)snprintf(buf + at, len - at, "%s%d%s", s ? "," : "", p->steps[s].nnodes,
                           p->steps[s].fused ? "f" : "");
}

static const char *T4 = "{\"dtype\":\"f32\",\"shape\":[4],\"data\":[0.5,-1,2,3]}";

static void plan_case(const char *what, const char *ops, const char *outputs, const char *want) {
  char json[8192], got[256];
  snprintf(json, sizeof json,
           "{\"inputs\":{\"x\":%s,\"y\":%s,\"m\":{\"dtype\":\"f32\",\"shape\":[2,4],\"data\":[1,2,3,4,5,6,7,8]},"
           "\"u\":{\"dtype\":\"u8\",\"shape\":[4],\"data\":[200,100,3,4]}},\"ops\":[%s],\"outputs\":{%s}}",
           T4, T4, ops, outputs);
  run_t r;
  int rc = run_graph(json, true, &r);
  shape_of_plan(r.plan, got, sizeof got);
  CHECK(rc == 0 && strcmp(got, want) == 0, "plan: %s: steps %s (want %s)%s%s", what, got, want,
        rc ? ": " : "", rc ? nxvk_errmsg() : "");
  run_free(&r);
}

#define OP1(o, a, out) "{\"op\":\"" o "\",\"in\":[\"" a "\"],\"out\":\"" out "\"}"
#define OP2(o, a, b, out) "{\"op\":\"" o "\",\"in\":[\"" a "\",\"" b "\"],\"out\":\"" out "\"}"

static void test_planner(void) {
  plan_case("a chain of three", OP1("exp", "x", "a") "," OP1("sin", "a", "b") "," OP1("negate", "b", "c"),
            "\"c\":true", "3f");
  plan_case("a tree", OP1("exp", "x", "a") "," OP1("sin", "y", "b") "," OP2("add", "a", "b", "c"), "\"c\":true", "3f");
  plan_case("broadcast operand of another shape stays apart",
            OP1("exp", "x", "a") "," OP2("add", "m", "a", "b") "," OP1("sin", "b", "c"), "\"c\":true", "1,2f");
  plan_case("a reduction between: no cycle",
            OP1("exp", "m", "a") ",{\"op\":\"sum\",\"in\":[\"a\"],\"attrs\":{\"axes\":[1],\"keep_axes\":true},\"out\":\"r\"},"
            OP2("multiply", "a", "r", "b") "," OP1("sin", "b", "c"),
            "\"c\":true", "1,1,2f");
  plan_case("u8 add is stored before divide reads it",
            OP2("add", "u", "u", "a") "," OP2("divide", "a", "u", "b") "," OP2("max", "b", "u", "c"), "\"c\":true",
            "1,2f");
  plan_case("u8 max and min fuse", OP2("max", "u", "u", "a") "," OP2("min", "a", "u", "b"), "\"b\":true", "2f");
  /* a and b: nothing reads them; their kernel has no output and is not run */
  plan_case("values nothing reads", OP1("exp", "x", "a") "," OP1("sin", "a", "b") "," OP1("cos", "x", "c"),
            "\"c\":true", "2f,1");
  /* five outputs from one would-be kernel: at most four per kernel */
  plan_case("at most four outputs",
            OP1("exp", "x", "a") "," OP1("sin", "a", "b") "," OP1("cos", "b", "c") "," OP1("tanh", "c", "d") ","
            OP1("negate", "d", "e"),
            "\"a\":true,\"b\":true,\"c\":true,\"d\":true,\"e\":true", "4f,1");
  /* sixteen distinct inputs into one chain: at most twelve per kernel */
  char inputs[4096] = "", ops[8192] = "", prev[16] = "x0";
  size_t a = 0, b = 0;
  for (int i = 0; i < 16; i++)
    a += (size_t)snprintf(inputs + a, sizeof inputs - a, "%s\"x%d\":%s", i ? "," : "", i, T4);
  for (int i = 1; i < 16; i++) {
    b += (size_t)snprintf(ops + b, sizeof ops - b, "%s{\"op\":\"add\",\"in\":[\"%s\",\"x%d\"],\"out\":\"t%d\"}",
                          i > 1 ? "," : "", prev, i, i);
    snprintf(prev, sizeof prev, "t%d", i);
  }
  char json[16384], got[256];
  snprintf(json, sizeof json, "{\"inputs\":{%s},\"ops\":[%s],\"outputs\":{\"t15\":true}}", inputs, ops);
  run_t r;
  int rc = run_graph(json, true, &r);
  shape_of_plan(r.plan, got, sizeof got);
  bool within = rc == 0 && r.plan->nsteps >= 2;
  for (int s = 0; within && s < r.plan->nsteps; s++)
    within = r.plan->steps[s].ninputs <= 12 && r.plan->steps[s].ninputs + r.plan->steps[s].noutputs <= 15;
  CHECK(within, "plan: 16 inputs split into kernels of at most 12 inputs (%s)", got);
  nxvk_host out = {0};
  if (rc == 0) nxvk_tensor_to_host(ctx, r.vals[r.total - 1], &out);
  CHECK(rc == 0 && out.data && ((float *)out.data)[0] == 8.0f, "plan: the split chain adds up (x0 + ... + x15 = %g)",
        out.data ? (double)((float *)out.data)[0] : NAN);
  nxvk_host_free(&out);
  run_free(&r);

  /* values in registers are NULL; outputs and values read elsewhere are not */
  snprintf(json, sizeof json,
           "{\"inputs\":{\"x\":%s},\"ops\":[" OP1("exp", "x", "a") "," OP1("sin", "a", "b") ","
           "{\"op\":\"sum\",\"in\":[\"b\"],\"out\":\"s\"}," OP1("cos", "b", "c") "],\"outputs\":{\"c\":true,\"s\":true}}",
           T4);
  rc = run_graph(json, true, &r);
  CHECK(rc == 0 && r.vals[1] == NULL && r.vals[2] && r.vals[3] && r.vals[4],
        "values[]: a kept in registers is NULL; b (read by sum), s and c are tensors");
  run_free(&r);
  rc = run_graph(json, false, &r);
  bool all = rc == 0;
  for (int i = 0; i < r.total && all; i++) all = r.vals[i] != NULL;
  CHECK(all && r.plan->fused_kernels == 0 && r.plan->nsteps == 4, "no_fusion: every op alone, every value a tensor");
  run_free(&r);
}

/* ------------------------------------------------------------ composed check */

static void test_compare(void) {
  char json[2048];
  snprintf(json, sizeof json,
           "{\"inputs\":{\"x\":%s,\"y\":%s},\"ops\":[" OP2("multiply", "x", "y", "a") "," OP2("add", "a", "x", "b") ","
           OP1("exp", "b", "c") "," OP2("subtract", "c", "y", "d") "],\"outputs\":{\"b\":true,\"d\":true}}",
           T4, T4);
  run_t r;
  int rc = run_graph(json, true, &r);
  nxvk_host hv[6] = {0}, gb = {0}, gd = {0};
  hv[0] = *nxvk_graph_input_host(r.g, 0);
  hv[1] = *nxvk_graph_input_host(r.g, 1);
  int nodes[4] = {0, 1, 2, 3};
  if (rc == 0) rc = nxvk_tensor_to_host(ctx, r.vals[3], &gb);
  if (rc == 0) rc = nxvk_tensor_to_host(ctx, r.vals[5], &gd);
  nxvk_cmp cmp;
  char text[300];
  rc = rc ? rc : nxvk_compare_nodes(r.g, nodes, 4, hv, 3, &gb, 0, &cmp, text, sizeof text);
  CHECK(rc == 0 && cmp.bad == 0 && cmp.max_ulp == 0, "compare: an exact chain is exact (%s)", text);
  ((float *)gb.data)[2] = nextafterf(((float *)gb.data)[2], INFINITY);
  rc = rc ? rc : nxvk_compare_nodes(r.g, nodes, 4, hv, 3, &gb, 0, &cmp, NULL, 0);
  CHECK(rc == 0 && cmp.bad == 1 && cmp.worst == 2, "compare: one ULP off in an exact chain is caught (bad %lld at %lld)",
        (long long)cmp.bad, (long long)cmp.worst);
  rc = rc ? rc : nxvk_compare_nodes(r.g, nodes, 4, hv, 5, &gd, 0, &cmp, text, sizeof text);
  CHECK(rc == 0 && cmp.bad == 0, "compare: the GPU's chain with exp is within the composed limit (%s)", text);
  /* exp's limit is 3 + 2|x| ULP: 1000 ULP off is caught */
  float *d = gd.data;
  d[0] = d[0] + 1000 * (nextafterf(d[0], INFINITY) - d[0]);
  rc = rc ? rc : nxvk_compare_nodes(r.g, nodes, 4, hv, 5, &gd, 0, &cmp, NULL, 0);
  CHECK(rc == 0 && cmp.bad == 1, "compare: 1000 ULP off after exp is caught (bad %lld)", (long long)cmp.bad);
  rc = nxvk_compare_nodes(r.g, nodes, 4, hv, 0, &gd, 0, &cmp, NULL, 0);
  CHECK(rc == NXVK_E_BAD_REQUEST, "compare: a value that is not one of the nodes is refused");
  nxvk_host_free(&gb);
  nxvk_host_free(&gd);
  run_free(&r);
}

int main(void) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/nxvk-test-fusion-XXXXXX");
  if (!mkdtemp(tmpdir)) return 1;
  char cache[300];
  snprintf(cache, sizeof cache, "%s/default", tmpdir);
  setenv("NXVK_CACHE_DIR", cache, 1);
  unsetenv("NXVK_NO_CACHE");
  nxvk_ctx_opts o = {0};
  int rc = nxvk_ctx_open(&o, &ctx);
  if (rc) {
    printf("not ok 1 - open the default device: %s\n1..1\n", nxvk_errmsg());
    return 1;
  }
  test_glslang();
  test_spirv_cache();
  test_pipeline_cache();
  test_runtime_kernel();
  test_planner();
  test_compare();
  nxvk_ctx_close(ctx);
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  if (system(cmd) != 0) printf("# could not remove %s\n", tmpdir);
  return tap_done();
}
