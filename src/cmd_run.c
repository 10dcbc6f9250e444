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
    "--op NAME [--attrs JSON] [--dtype D] [--csv-header] [-o OUT|-] [--format F] [--print] [--check] [--no-cache] [--device N|NAME] [--validate] [IN...]",
    "GRAPH.json [--csv-header] [--print] [--check] [--explain] [--no-fusion] [--no-cache] [--device N|NAME] [--validate]",
    "--list-ops",
    NULL,
};
static const nxvk_usage usage = {
    "run", synopsis,
    "Runs one op on tensors given as .npy, .npz or .csv files (- for stdin) or inline\n"
    "JSON, or a graph of ops from a JSON file, on the GPU.  -o writes .npy, .csv, .json\n"
    "or .npz by its extension (- is stdout, --format names the format).  --check also runs the CPU reference and prints\n"
    "the max abs and max ULP error per output; exit 1 when one is over the op's limit.\n"
    "Elementwise ops of a graph are fused into generated kernels, cached on disk;\n"
    "--explain prints which ops became which kernel."};

typedef struct {
  bool print, check, explain, no_fusion, no_cache, csv_header;
  const char *out_path, *format;
} run_opts;

/* The format of an output: --format, else the extension; a device, FIFO or
 * stdout without one gets .npy.  0, or the usage error's exit status. */
static int pick_format(const char *what, const char *path, const char *forced, bool in_place,
                       nxvk_format *f) {
  if (forced) {
    if (nxvk_format_parse(forced, f)) return cli_usage_error(&usage, "--format: %s", nxvk_errmsg());
    return 0;
  }
  *f = nxvk_format_of_path(path);
  if (*f == NXVK_FMT_NONE && in_place) *f = NXVK_FMT_NPY;
  if (*f == NXVK_FMT_NONE)
    return cli_usage_error(&usage, "%s: cannot tell the format of '%s' from its extension (.npy .csv .json .npz)%s",
                           what, path, strcmp(what, "-o") == 0 ? "; name one or give --format" : "");
  return 0;
}

static void print_tensor(const char *name, const nxvk_host *h) {
  char shape[200], *text = NULL;
  nxvk_shape_str(&h->shape, shape, sizeof shape);
  printf("%s: %s %s\n", name, nxvk_dtype_name(h->dtype), shape);
  /* numpy's habit: past 1000 elements, 3 at each edge of every axis and "..." */
  int rc = nxvk_host_count(h) > 1000 ? nxvk_json_tensor_summary(h, 3, &text)
                                     : nxvk_json_tensor_format(h, &text);
  if (rc == NXVK_OK) {
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
  nxvk_format fmt = NXVK_FMT_NONE;
  if (ro->out_path) { /* the output is checked before any input is read or GPU work done */
    char *dest;
    bool in_place;
    rc = nxvk_out_resolve(ro->out_path, 0, &dest, &in_place);
    if (rc) return cli_engine_error(rc);
    free(dest);
    int st = pick_format("-o", ro->out_path, ro->format, in_place, &fmt);
    if (st) return st;
  }

  nxvk_host in[NXVK_MAX_INPUTS] = {{0}};
  nxvk_out *out = NULL;
  nxvk_meta metas[NXVK_MAX_INPUTS], om;
  nxvk_host got = {0};
  nxvk_ctx *ctx = NULL;
  int nloaded = 0;
  bool failed = false;
  nxvk_load_opts lo = {.csv_dtype = csv_dtype, .csv_header = ro->csv_header ? 1 : 0};
  int ntensors = 0; /* an .npz gives one input per member */
  for (int a = 0; a < nargs && rc == NXVK_OK; a++) {
    int got_n = 0;
    rc = nxvk_tensor_load_all(args[a], &lo, in + ntensors, NXVK_MAX_INPUTS - ntensors, &got_n);
    ntensors += got_n;
  }
  nloaded = ntensors;
  for (int i = 0; i < ntensors; i++) metas[i] = (nxvk_meta){in[i].dtype, in[i].shape};
  nargs = ntensors;
  if (rc == NXVK_OK) rc = nxvk_op_infer(op, &attrs, metas, nargs, &om);
  if (rc == NXVK_OK && ro->out_path) rc = nxvk_out_open(ro->out_path, 0, &out);
  if (rc == NXVK_OK) rc = cli_ctx(cli, &ctx);
  /* upload, op and download in one submission */
  if (rc == NXVK_OK) rc = nxvk_op_run_host(ctx, op, &attrs, in, nargs, &got);
  if (rc == NXVK_OK && ro->check) rc = check_one(ctx, ro->out_path ? ro->out_path : "result", op, &attrs, in, nargs, &got, &failed);
  if (rc == NXVK_OK && out) rc = nxvk_tensor_save(out, fmt, &got);
  if (rc == NXVK_OK && out) {
    rc = nxvk_out_commit(out);
    out = NULL;
  }
  nxvk_out_abort(out); /* a failure leaves no partial file and the old one */
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
  nxvk_device_info info;
  nxvk_ctx_device_info(ctx, &info);
  int rc = nxvk_check_nodes(&info, g, st->nodes, st->nnodes, down, v, &down[v], &cmp, limit, sizeof limit);
  if (rc) return rc;
  printf("check %s (fused kernel %.16s, %s): max abs %.3g, max ulp %.3g, limit %s", name, st->key,
         nxvk_dtype_name(down[v].dtype), cmp.max_abs, cmp.max_ulp, limit);
  if (cmp.forgiven) /* where an error crossed a jump of an op, the bound says nothing */
    printf(", %lld element%s past what the bound can judge", (long long)cmp.forgiven,
           cmp.forgiven == 1 ? "" : "s");
  print_verdict(&cmp, failed);
  return NXVK_OK;
}

/* One output of a graph.  Outputs naming one .npz file share it (members
 * by output name): group is the first of them, which holds the file. */
typedef struct {
  nxvk_format fmt;
  char *dest;
  int group;
  nxvk_out *out;
} out_slot;
#define NXVK_MAX_GRAPH_OUTPUTS_NPZ 4096

/* Every output path checked before any input is read or GPU work done: a
 * known extension, no directory, no two outputs on one file (except the
 * members of one .npz).  0, or the exit status after the message. */
static int check_outputs(const nxvk_graph *g, out_slot *slots) {
  int no = nxvk_graph_output_count(g), st = 0;
  for (int o = 0; o < no; o++) slots[o].group = -1;
  for (int o = 0; o < no && !st; o++) {
    const char *p = nxvk_graph_output_path(g, o);
    if (!p) continue;
    bool in_place;
    int rc = nxvk_out_resolve(p, 0, &slots[o].dest, &in_place);
    if (rc) {
      fprintf(stderr, "nxvk: error: outputs: %s: %s\n", nxvk_graph_output_name(g, o), nxvk_errmsg());
      st = nxvk_err_exit_status(rc);
      break;
    }
    char what[160];
    snprintf(what, sizeof what, "outputs: %.100s", nxvk_graph_output_name(g, o));
    st = pick_format(what, p, NULL, in_place, &slots[o].fmt);
    slots[o].group = o;
    for (int k = 0; k < o && !st; k++) {
      if (!slots[k].dest || strcmp(slots[k].dest, slots[o].dest) != 0) continue;
      if (slots[o].fmt == NXVK_FMT_NPZ && slots[k].fmt == NXVK_FMT_NPZ) {
        slots[o].group = slots[k].group;
        break;
      }
      st = cli_usage_error(&usage, "outputs: '%s' and '%s' both write %s (one file per output, or an .npz for several)",
                           nxvk_graph_output_name(g, k), nxvk_graph_output_name(g, o), p);
    }
  }
  for (int o = 0; o < no; o++) {
    free(slots[o].dest);
    slots[o].dest = NULL;
  }
  /* keep dest only long enough to compare: the files are opened later */
  return st;
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
  out_slot *slots = calloc((size_t)no + 1, sizeof *slots);
  bool *have = calloc((size_t)total + 1, sizeof *have); /* downloaded already */
  nxvk_ctx *ctx = NULL;
  nxvk_plan *plan = NULL;
  bool failed = false, failed_write = false;
  if (!hin || !tin || !vals || !down || !slots || !have) {
    fprintf(stderr, "nxvk: error: out of memory\n");
    return EXIT_FAIL; /* (a few bytes per op: not worth unwinding) */
  }
  int ust = check_outputs(g, slots);
  if (ust) {
    rc = -1; /* (the message is printed) */
    goto out;
  }
  nxvk_load_opts lo = {.csv_dtype = NXVK_F32, .csv_header = ro->csv_header ? 1 : 0};
  for (int i = 0; i < ni && rc == NXVK_OK; i++) {
    switch (nxvk_graph_input_kind_of(g, i)) {
    case NXVK_GRAPH_IN_FILE:
      lo.npz_member = nxvk_graph_input_name(g, i); /* an .npz input: the member of that name */
      rc = nxvk_tensor_load_opts(nxvk_graph_input_path(g, i), &lo, &hin[i]);
      break;
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
  for (int o = 0; o < no && rc == NXVK_OK; o++) /* temporaries made before GPU work */
    if (slots[o].group == o && nxvk_graph_output_path(g, o))
      rc = nxvk_out_open(nxvk_graph_output_path(g, o), 0, &slots[o].out);
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
  /* All outputs or none: each file was opened (a temporary beside it) before
   * GPU work; all are written and flushed, and only then renamed into place. */
  for (int o = 0; o < no && rc == NXVK_OK; o++) {
    if (!slots[o].out) continue; /* no path, or a later member of an .npz */
    if (slots[o].fmt == NXVK_FMT_NPZ) {
      const char *names[NXVK_MAX_GRAPH_OUTPUTS_NPZ];
      const nxvk_host *ts[NXVK_MAX_GRAPH_OUTPUTS_NPZ];
      int n = 0;
      for (int k = o; k < no && n < NXVK_MAX_GRAPH_OUTPUTS_NPZ; k++)
        if (slots[k].group == o) {
          names[n] = nxvk_graph_output_name(g, k);
          ts[n++] = &down[nxvk_graph_output_value(g, k)];
        }
      rc = nxvk_npz_save(slots[o].out, n, names, ts);
    } else {
      rc = nxvk_tensor_save(slots[o].out, slots[o].fmt, &down[nxvk_graph_output_value(g, o)]);
    }
    if (rc == NXVK_OK) rc = nxvk_out_finish(slots[o].out);
  }
  for (int o = 0; o < no && rc == NXVK_OK; o++) {
    if (!slots[o].out) continue;
    rc = nxvk_out_commit(slots[o].out);
    slots[o].out = NULL;
    if (rc) failed_write = true; /* a rename failed: the others may be in place */
  }
  for (int o = 0; o < no && rc == NXVK_OK && !failed_write && ro->print; o++)
    print_tensor(nxvk_graph_output_name(g, o), &down[nxvk_graph_output_value(g, o)]);
  int status = rc ? cli_engine_error(rc) : (failed || failed_write ? EXIT_FAIL : EXIT_OK);
out:
  if (ust) status = ust;
  nxvk_plan_free(plan);
  for (int i = 0; i < total && vals; i++) nxvk_tensor_free(vals[i]);
  for (int i = 0; i < ni && tin; i++) nxvk_tensor_free(tin[i]);
  for (int i = 0; i < ni && hin; i++) nxvk_host_free(&hin[i]);
  for (int i = 0; i < total && down; i++) nxvk_host_free(&down[i]);
  free(hin);
  free(tin);
  free(vals);
  free(down);
  for (int o = 0; o < no && slots; o++) nxvk_out_abort(slots[o].out);
  free(slots);
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
      {"dtype", 0, OPT_STRING, &dtype, "D", "dtype of .csv inputs (any dtype; default f32)"},
      {"csv-header", 0, OPT_FLAG, &ro.csv_header, NULL, "the first row of .csv inputs is a header (default: detected)"},
      {"output", 'o', OPT_STRING, &ro.out_path, "OUT", "write the result: .npy .csv .json .npz by extension; - is stdout"},
      {"format", 0, OPT_STRING, &ro.format, "F", "format of -o: npy csv json npz (default: the extension)"},
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
      char dts[96] = ""; /* every dtype: 12 names, 11 commas */
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
  if (ro.format && !ro.out_path) return cli_usage_error(&usage, "--format goes with -o");
  if (ro.print && ro.out_path && strcmp(ro.out_path, "-") == 0)
    return cli_usage_error(&usage, "--print and -o - both write stdout");
  if (op) return run_op(cli, op, attrs, dtype, argv, npos, &ro);
  if (attrs || dtype) return cli_usage_error(&usage, "--attrs and --dtype go with --op");
  if (npos != 1) return cli_usage_error(&usage, "give --op NAME and inputs, or one GRAPH.json");
  if (ro.out_path) return cli_usage_error(&usage, "-o goes with --op (graphs name their outputs)");
  return run_graph(cli, argv[0], &ro);
}
