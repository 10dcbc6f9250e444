/*
 * cmd_run.c - `nxvk run`: one op on tensors from files, or a graph file.
 * Inputs are read and shapes checked before any device is opened, so bad
 * input costs no GPU work; outputs are written only once everything ran.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

static const char *const synopsis[] = {
    "--op NAME [--attrs JSON] [--dtype D] [-o OUT.npy] [--print] [--check] [--no-cache] [--device N|NAME] [--validate] [IN...]",
    "GRAPH.json [--print] [--check] [--explain] [--no-fusion] [--no-cache] [--device N|NAME] [--validate]",
    "--list-ops",
    NULL,
};
static const nxvk_usage usage = {
    "run", synopsis,
    "Runs one op on tensors given as .npy or .csv files or inline JSON, or a graph of\n"
    "ops from a JSON file, on the GPU.  --check also runs the CPU reference and prints\n"
    "the max abs and max ULP error per output; exit 1 when one is over the op's limit.\n"
    "Elementwise ops of a graph are fused into generated kernels, cached on disk;\n"
    "--explain prints which ops became which kernel."};

typedef struct {
  bool print, check, explain, no_fusion, no_cache;
  const char *out_path;
} run_opts;

/* Dtypes whose denormals the device may flush (its float controls do not
 * promise to preserve them). */
static unsigned may_flush(nxvk_ctx *ctx) {
  nxvk_device_info info;
  nxvk_ctx_device_info(ctx, &info);
  return (info.denorm_preserve_f32 ? 0u : NXVK_DT(NXVK_F32)) |
         (info.denorm_preserve_f64 ? 0u : NXVK_DT(NXVK_F64));
}

static void print_tensor(const char *name, const nxvk_host *h) {
  char shape[200], *text = NULL;
  nxvk_shape_str(&h->shape, shape, sizeof shape);
  printf("%s: %s %s\n", name, nxvk_dtype_name(h->dtype), shape);
  if (nxvk_host_count(h) > 4096) {
    printf("  (%lld elements: too many to print)\n", (long long)nxvk_host_count(h));
    return;
  }
  if (nxvk_json_tensor_format(h, &text) == NXVK_OK) {
    /* the "data" member is what a person wants to read */
    const char *d = strstr(text, "\"data\":");
    if (d) {
      d += 7;
      printf("  %.*s\n", (int)(strlen(d) - 1), d); /* without the object's closing brace */
    } else {
      printf("  %s\n", text);
    }
  }
  free(text);
}

/* The end of a `check` line: what was counted, then ok or the first failure. */
static void print_verdict(const nxvk_cmp *cmp, bool *failed) {
  if (cmp->unbounded) printf(", %lld outside the spec's bounded range", (long long)cmp->unbounded);
  if (cmp->bad) {
    printf(": FAIL, %lld of %lld over; first at [%lld] got %.17g want %.17g\n", (long long)cmp->bad,
           (long long)cmp->n, (long long)cmp->worst, cmp->worst_got, cmp->worst_ref);
    *failed = true;
  } else {
    printf(": ok\n");
  }
}

/* The reference of `op` on the GPU's own operands, compared with the GPU's
 * result (so each op is judged on its inputs and errors do not compound),
 * forgiving the denormal flushes the device's float controls allow. */
static int check_one(nxvk_ctx *ctx, const char *name, const nxvk_op_desc *op,
                     const nxvk_attrs *attrs, const nxvk_host *in, int nin, const nxvk_host *got,
                     bool *failed) {
  nxvk_device_info info;
  nxvk_ctx_device_info(ctx, &info);
  nxvk_cmp cmp;
  int rc = nxvk_check(&info, op, attrs, in, nin, got, NULL, &cmp);
  if (rc) return rc;
  nxvk_limit lim;
  nxvk_op_limit(op, nin ? in[nin - 1].dtype : got->dtype, &lim);
  printf("check %s (%s %s): max abs %.3g, max ulp %.3g, limit %s", name, op->name,
         nxvk_dtype_name(got->dtype), cmp.max_abs, cmp.max_ulp, lim.text);
  if (cmp.forgiven) printf(", %lld denormal flushes forgiven", (long long)cmp.forgiven);
  print_verdict(&cmp, failed);
  return NXVK_OK;
}

static int run_op(nxvk_cli *cli, const char *opname, const char *attrs_json, const char *dtype_s,
                  char **args, int nargs, const run_opts *ro) {
  const nxvk_op_desc *op = nxvk_op_find(opname);
  if (!op) {
    fprintf(stderr, "nxvk: error: --op: unknown op '%s' (nxvk run --list-ops shows them)\n", opname);
    return EXIT_USAGE;
  }
  nxvk_dtype csv_dtype = NXVK_F32;
  if (dtype_s && nxvk_dtype_parse(dtype_s, &csv_dtype))
    return cli_usage_error(&usage, "--dtype: %s", nxvk_errmsg());
  if (nargs > NXVK_MAX_INPUTS) return cli_usage_error(&usage, "more than %d inputs", NXVK_MAX_INPUTS);
  nxvk_attrs attrs;
  int rc = nxvk_attrs_parse(op, attrs_json, &attrs);
  if (rc) return cli_engine_error(rc);

  nxvk_host in[NXVK_MAX_INPUTS] = {{0}};
  nxvk_meta metas[NXVK_MAX_INPUTS], om;
  nxvk_host got = {0};
  nxvk_ctx *ctx = NULL;
  int nloaded = 0;
  bool failed = false;
  for (; nloaded < nargs && rc == NXVK_OK; nloaded++) {
    rc = nxvk_tensor_load(args[nloaded], csv_dtype, &in[nloaded]);
    metas[nloaded] = (nxvk_meta){in[nloaded].dtype, in[nloaded].shape};
  }
  if (rc == NXVK_OK) rc = nxvk_op_infer(op, &attrs, metas, nargs, &om);
  if (rc == NXVK_OK) rc = cli_ctx(cli, &ctx);
  /* upload, op and download in one submission */
  if (rc == NXVK_OK) rc = nxvk_op_run_host(ctx, op, &attrs, in, nargs, &got);
  if (rc == NXVK_OK && ro->check) rc = check_one(ctx, ro->out_path ? ro->out_path : "result", op, &attrs, in, nargs, &got, &failed);
  if (rc == NXVK_OK && ro->out_path) rc = nxvk_npy_write(ro->out_path, &got);
  if (rc == NXVK_OK && (ro->print || !ro->out_path)) print_tensor(op->name, &got);

  int status = rc ? cli_engine_error(rc) : (failed ? EXIT_FAIL : EXIT_OK);
  for (int i = 0; i < nloaded; i++) nxvk_host_free(&in[i]);
  nxvk_host_free(&got);
  return status;
}

/* A value as the graph file names it. */
static void value_label(const nxvk_graph *g, int v, char *buf, size_t len) {
  snprintf(buf, len, "%s", nxvk_graph_value_name(g, v));
}

static const char *source_text(nxvk_code_source s) {
  switch (s) {
  case NXVK_CODE_MEMORY: return "built earlier in this process";
  case NXVK_CODE_DISK: return "cache hit (SPIR-V from disk)";
  case NXVK_CODE_COMPILED: return "compiled (cache miss)";
  default: return "build-time kernel";
  }
}

/* --explain: which ops became which kernel, and where its code came from. */
static void print_plan(nxvk_ctx *ctx, const nxvk_graph *g, const nxvk_plan *p) {
  int ni = nxvk_graph_input_count(g), singles = p->nsteps - p->fused_kernels;
  printf("plan: %d op%s in %d kernel step%s: %d fused kernel%s (%d ops, %d value%s kept in registers), "
         "%d single op%s%s\n",
         nxvk_graph_node_count(g), nxvk_graph_node_count(g) == 1 ? "" : "s", p->nsteps,
         p->nsteps == 1 ? "" : "s", p->fused_kernels, p->fused_kernels == 1 ? "" : "s", p->fused_ops,
         p->in_registers, p->in_registers == 1 ? "" : "s", singles, singles == 1 ? "" : "s",
         p->fusion ? "" : " (fusion off)");
  char lab[128];
  for (int s = 0; s < p->nsteps; s++) {
    const nxvk_plan_step *st = &p->steps[s];
    const nxvk_attrs *a;
    const int *args;
    int nargs;
    if (!st->fused) {
      const nxvk_op_desc *op = nxvk_graph_value_op(g, ni + st->nodes[0], &a, &args, &nargs);
      value_label(g, ni + st->nodes[0], lab, sizeof lab);
      printf("  step %d: ops[%d] %s -> %s: single op, build-time kernel (%s)\n", s + 1, st->nodes[0],
             op->name, lab, st->alone);
      continue;
    }
    printf("  step %d: fused kernel %.16s: %d ops:", s + 1, st->key, st->nnodes);
    for (int k = 0; k < st->nnodes; k++) {
      const nxvk_op_desc *op = nxvk_graph_value_op(g, ni + st->nodes[k], &a, &args, &nargs);
      printf(" ops[%d] %s%s", st->nodes[k], op->name, k + 1 < st->nnodes ? "," : "\n");
    }
    printf("    reads:");
    for (int k = 0; k < st->ninputs; k++) {
      value_label(g, st->inputs[k], lab, sizeof lab);
      printf(" %s", lab);
    }
    printf("; writes:");
    for (int k = 0; k < st->noutputs; k++) {
      value_label(g, st->outputs[k], lab, sizeof lab);
      printf(" %s", lab);
    }
    printf("; in registers:");
    int kept = 0;
    for (int k = 0; k < st->nnodes; k++) {
      bool out = false;
      for (int j = 0; j < st->noutputs; j++) out |= st->outputs[j] == ni + st->nodes[k];
      if (out) continue;
      value_label(g, ni + st->nodes[k], lab, sizeof lab);
      printf(" %s", lab);
      kept++;
    }
    printf("%s\n", kept ? "" : " none");
    if (st->noutputs == 0) {
      printf("    code: none (%s)\n", st->note);
      continue;
    }
    printf("    code: %s, GLSL + key %.2f ms", source_text(st->source), st->glsl_ms);
    if (st->source == NXVK_CODE_COMPILED) printf(", glslang %.1f ms", st->compile_ms);
    if (st->source == NXVK_CODE_DISK || st->source == NXVK_CODE_COMPILED) {
      if (p->disk_cache) printf(", cache %.2f ms", st->cache_ms);
      printf(", pipeline %.1f ms", st->pipeline_ms);
    }
    if (st->cache_written) printf(", SPIR-V written to the cache");
    if (st->source == NXVK_CODE_COMPILED && !p->disk_cache) printf(" (cache off)");
    printf("\n");
    if (st->cache_corrupt) printf("    cache: corrupt file ignored and rewritten: %s\n", st->note);
    else if (st->note[0]) printf("    cache: %s\n", st->note);
  }
  nxvk_cache_info ci;
  nxvk_ctx_cache_info(ctx, &ci);
  if (ci.enabled)
    printf("cache: %s; pipeline cache %s\n", ci.dir, ci.pipeline_cache);
  else
    printf("cache: off\n");
  printf("time: plan %.2f ms, record %.2f ms (compiles included), run %.2f ms\n", p->plan_ms,
         p->record_ms, p->run_ms);
}

/* --check of a value a fused kernel computed: its intermediates never
 * existed in memory, so the reference runs the kernel's ops from the
 * kernel's own inputs and the limit is composed over them (nxvk-run(1)). */
static int check_fused(nxvk_ctx *ctx, const nxvk_graph *g, const nxvk_plan_step *st, int v,
                       const char *name, const nxvk_host *down, bool *failed) {
  nxvk_cmp cmp;
  char limit[512];
  int rc = nxvk_compare_nodes(g, st->nodes, st->nnodes, down, v, &down[v], may_flush(ctx), &cmp,
                              limit, sizeof limit);
  if (rc) return rc;
  printf("check %s (fused kernel %.16s, %s): max abs %.3g, max ulp %.3g, limit %s", name, st->key,
         nxvk_dtype_name(down[v].dtype), cmp.max_abs, cmp.max_ulp, limit);
  if (cmp.forgiven) /* where an error crossed a jump of an op, the bound says nothing */
    printf(", %lld element%s past what the bound can judge", (long long)cmp.forgiven,
           cmp.forgiven == 1 ? "" : "s");
  print_verdict(&cmp, failed);
  return NXVK_OK;
}

static int run_graph(nxvk_cli *cli, const char *path, const run_opts *ro) {
  nxvk_graph *g = NULL;
  int rc = nxvk_graph_load(path, &g);
  if (rc) return cli_engine_error(rc);

  int ni = nxvk_graph_input_count(g), nn = nxvk_graph_node_count(g), no = nxvk_graph_output_count(g);
  int total = ni + nn;
  nxvk_host *hin = calloc((size_t)ni + 1, sizeof *hin);
  nxvk_tensor **tin = calloc((size_t)ni + 1, sizeof *tin);
  nxvk_tensor **vals = calloc((size_t)total + 1, sizeof *vals);
  nxvk_host *down = calloc((size_t)total + 1, sizeof *down);
  char **written = calloc((size_t)no + 1, sizeof *written);
  bool *have = calloc((size_t)total + 1, sizeof *have); /* downloaded already */
  int nwritten = 0;
  nxvk_ctx *ctx = NULL;
  nxvk_plan *plan = NULL;
  bool failed = false, failed_write = false;
  if (!hin || !tin || !vals || !down || !written || !have) {
    fprintf(stderr, "nxvk: error: out of memory\n");
    return EXIT_FAIL; /* (a few bytes per op: not worth unwinding) */
  }
  for (int i = 0; i < ni && rc == NXVK_OK; i++) {
    switch (nxvk_graph_input_kind_of(g, i)) {
    case NXVK_GRAPH_IN_FILE: rc = nxvk_tensor_load(nxvk_graph_input_path(g, i), NXVK_F32, &hin[i]); break;
    case NXVK_GRAPH_IN_INLINE: {
      const nxvk_host *h = nxvk_graph_input_host(g, i);
      rc = nxvk_host_alloc(&hin[i], h->dtype, &h->shape);
      if (rc == NXVK_OK && nxvk_host_bytes(h)) memcpy(hin[i].data, h->data, nxvk_host_bytes(h));
      break;
    }
    default: /* nxvk_graph_load refuses handles */
      break;
    }
  }
  if (rc == NXVK_OK) rc = cli_ctx(cli, &ctx);
  for (int i = 0; i < ni && rc == NXVK_OK; i++) rc = nxvk_tensor_from_host(ctx, &hin[i], &tin[i]);
  nxvk_run_opts opts = {.no_fusion = ro->no_fusion, .no_cache = ro->no_cache, .plan = &plan};
  if (rc == NXVK_OK) rc = nxvk_graph_run_opts(ctx, g, tin, vals, &opts);
  if (rc == NXVK_OK && ro->explain) print_plan(ctx, g, plan);
  /* download the outputs, and for --check the operands of the ops (or of
   * the fused kernels) making them */
  for (int o = 0; o < no && rc == NXVK_OK; o++) {
    int v = nxvk_graph_output_value(g, o);
    const nxvk_attrs *attrs;
    const int *operands = NULL;
    int nops = 0;
    const nxvk_op_desc *op = nxvk_graph_value_op(g, v, &attrs, &operands, &nops);
    if (!have[v]) rc = nxvk_tensor_to_host(ctx, vals[v], &down[v]);
    have[v] = rc == NXVK_OK;
    if (rc || !ro->check || !op) continue;
    const nxvk_plan_step *st = nxvk_plan_step_of(plan, g, v);
    if (st && st->fused) {
      nops = st->ninputs;
      operands = st->inputs;
    }
    nxvk_host args[NXVK_MAX_INPUTS];
    for (int k = 0; k < nops && rc == NXVK_OK; k++) {
      int a = operands[k];
      if (!have[a]) rc = nxvk_tensor_to_host(ctx, vals[a], &down[a]);
      have[a] = rc == NXVK_OK;
      args[k] = down[a];
    }
    if (rc == NXVK_OK && st && st->fused)
      rc = check_fused(ctx, g, st, v, nxvk_graph_output_name(g, o), down, &failed);
    else if (rc == NXVK_OK)
      rc = check_one(ctx, nxvk_graph_output_name(g, o), op, attrs, args, nops, &down[v], &failed);
  }
  /* All outputs or none, and a file already at an output path is replaced
   * only when every output was written: each goes to a temporary name first,
   * and the renames happen at the end. */
  for (int o = 0; o < no && rc == NXVK_OK; o++) {
    const char *p = nxvk_graph_output_path(g, o);
    if (!p) continue;
    char *tmp = malloc(strlen(p) + 32);
    if (!tmp) {
      rc = NXVK_E_NO_MEMORY;
      break;
    }
    sprintf(tmp, "%s.nxvk-out-%ld", p, (long)getpid());
    rc = nxvk_npy_write(tmp, &down[nxvk_graph_output_value(g, o)]);
    if (rc == NXVK_OK) written[nwritten++] = tmp;
    else free(tmp);
  }
  for (int i = 0, o = 0; rc == NXVK_OK && o < no; o++) {
    const char *p = nxvk_graph_output_path(g, o);
    if (!p) continue;
    if (rename(written[i], p) != 0) {
      fprintf(stderr, "nxvk: error: %s: cannot write: %s\n", p, strerror(errno));
      failed_write = true;
      break;
    }
    free(written[i]);
    written[i++] = NULL;
  }
  for (int i = 0; i < nwritten; i++)
    if (written[i]) {
      unlink(written[i]);
      free(written[i]);
    }
  for (int o = 0; o < no && rc == NXVK_OK && !failed_write && ro->print; o++)
    print_tensor(nxvk_graph_output_name(g, o), &down[nxvk_graph_output_value(g, o)]);
  int status = rc ? cli_engine_error(rc) : (failed || failed_write ? EXIT_FAIL : EXIT_OK);
  nxvk_plan_free(plan);
  for (int i = 0; i < total && vals; i++) nxvk_tensor_free(vals[i]);
  for (int i = 0; i < ni && tin; i++) nxvk_tensor_free(tin[i]);
  for (int i = 0; i < ni && hin; i++) nxvk_host_free(&hin[i]);
  for (int i = 0; i < total && down; i++) nxvk_host_free(&down[i]);
  free(hin);
  free(tin);
  free(vals);
  free(down);
  free(written);
  free(have);
  nxvk_graph_free(g);
  return status;
}

int cmd_run(int argc, char **argv, nxvk_cli *cli) {
  const char *op = NULL, *attrs = NULL, *dtype = NULL;
  bool list = false;
  run_opts ro = {0};
  const nxvk_option opts[] = {
      {"op", 0, OPT_STRING, &op, "NAME", "run this op on the IN tensors"},
      {"attrs", 0, OPT_STRING, &attrs, "JSON", "op attributes, e.g. '{\"axes\":[0]}'"},
      {"dtype", 0, OPT_STRING, &dtype, "D", "dtype of .csv inputs (f32 f64 i32 u8; default f32)"},
      {"output", 'o', OPT_STRING, &ro.out_path, "OUT.npy", "write the result here"},
      {"print", 0, OPT_FLAG, &ro.print, NULL, "print outputs as text (default without -o)"},
      {"check", 0, OPT_FLAG, &ro.check, NULL, "compare with the CPU reference; exit 1 over the limit"},
      {"explain", 0, OPT_FLAG, &ro.explain, NULL, "print the fusion plan: kernels, cache hits and misses, times"},
      {"no-fusion", 0, OPT_FLAG, &ro.no_fusion, NULL, "run every op of a graph as its own kernel"},
      {"no-cache", 0, OPT_FLAG, &ro.no_cache, NULL, "neither read nor write the on-disk kernel and pipeline caches"},
      {"list-ops", 0, OPT_FLAG, &list, NULL, "list the ops and exit"},
      OPT_COMMON_DEVICE(cli),
      OPT_END,
  };
  int npos, rc = cli_parse(argc, argv, &usage, opts, &npos);
  if (rc) return rc < 0 ? EXIT_OK : rc;
  cli->no_cache = ro.no_cache;
  if (list) {
    for (int i = 0; i < nxvk_op_count(); i++) {
      const nxvk_op_desc *d = nxvk_op_at(i);
      char dts[32] = "";
      for (int t = 0; t < NXVK_NDTYPES; t++)
        if (d->dtypes & NXVK_DT(t)) {
          strcat(dts, dts[0] ? "," : "");
          strcat(dts, nxvk_dtype_name((nxvk_dtype)t));
        }
      printf("%-15s %-15s %s\n", d->name, dts, d->summary);
    }
    return EXIT_OK;
  }
  if (op && (ro.explain || ro.no_fusion))
    return cli_usage_error(&usage, "--explain and --no-fusion go with a graph");
  if (op) return run_op(cli, op, attrs, dtype, argv, npos, &ro);
  if (attrs || dtype) return cli_usage_error(&usage, "--attrs and --dtype go with --op");
  if (npos != 1) return cli_usage_error(&usage, "give --op NAME and inputs, or one GRAPH.json");
  if (ro.out_path) return cli_usage_error(&usage, "-o goes with --op (graphs name their outputs)");
  return run_graph(cli, argv[0], &ro);
}
