/*
 * cmd_run.c - `nxvk run`: one op on tensors from files, or a graph file.
 * Inputs are read and shapes checked before any device is opened, so bad
 * input costs no GPU work; outputs are written only once everything ran.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

static const char *const synopsis[] = {
    "--op NAME [--attrs JSON] [--dtype D] [-o OUT.npy] [--print] [--check] [--device N|NAME] [--validate] [IN...]",
    "GRAPH.json [--print] [--check] [--device N|NAME] [--validate]",
    "--list-ops",
    NULL,
};
static const nxvk_usage usage = {
    "run", synopsis,
    "Runs one op on tensors given as .npy or .csv files or inline JSON, or a graph of\n"
    "ops from a JSON file, on the GPU.  --check also runs the CPU reference and prints\n"
    "the max abs and max ULP error per output; exit 1 when one is over the op's limit."};

typedef struct {
  bool print, check;
  const char *out_path;
} run_opts;

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

/* Reference of `op` on the GPU's own operands, compared with the GPU's
 * result: each op is judged on its inputs, errors do not compound. */
static int check_one(nxvk_ctx *ctx, const char *name, const nxvk_op_desc *op,
                     const nxvk_attrs *attrs, const nxvk_host *in, int nin, const nxvk_host *got,
                     bool *failed) {
  nxvk_host ref = {0}, flushed_ref = {0};
  int rc = nxvk_op_ref(op, attrs, in, nin, &ref);
  if (rc) return rc;
  nxvk_device_info info;
  nxvk_ctx_device_info(ctx, &info);
  bool may_flush = (got->dtype == NXVK_F32 && !info.denorm_preserve_f32) ||
                   (got->dtype == NXVK_F64 && !info.denorm_preserve_f64);
  nxvk_host flushed_in[NXVK_MAX_INPUTS];
  int made = 0;
  if (may_flush) {
    for (; made < nin && rc == NXVK_OK; made++) {
      rc = nxvk_host_alloc(&flushed_in[made], in[made].dtype, &in[made].shape);
      double lim = in[made].dtype == NXVK_F32 ? FLT_MIN : DBL_MIN;
      for (int64_t i = 0; rc == NXVK_OK && i < nxvk_host_count(&in[made]); i++) {
        double v = nxvk_host_get(&in[made], i);
        bool fl = (in[made].dtype == NXVK_F32 || in[made].dtype == NXVK_F64) && v != 0 && fabs(v) < lim;
        nxvk_host_set(&flushed_in[made], i, fl ? copysign(0.0, v) : v);
      }
    }
    if (rc == NXVK_OK) rc = nxvk_op_ref(op, attrs, flushed_in, nin, &flushed_ref);
  }
  nxvk_cmp cmp;
  if (rc == NXVK_OK)
    rc = nxvk_compare(op, attrs, in, nin, got, &ref, may_flush ? &flushed_ref : NULL, &cmp);
  if (rc == NXVK_OK) {
    nxvk_limit lim;
    nxvk_op_limit(op, nin ? in[nin - 1].dtype : got->dtype, &lim);
    printf("check %s (%s %s): max abs %.3g, max ulp %.3g, limit %s", name, op->name,
           nxvk_dtype_name(got->dtype), cmp.max_abs, cmp.max_ulp, lim.text);
    if (cmp.forgiven) printf(", %lld denormal flushes forgiven", (long long)cmp.forgiven);
    if (cmp.bad) {
      printf(": FAIL, %lld of %lld over; first at [%lld] got %.17g want %.17g\n",
             (long long)cmp.bad, (long long)cmp.n, (long long)cmp.worst, cmp.worst_got,
             cmp.worst_ref);
      *failed = true;
    } else {
      printf(": ok\n");
    }
  }
  for (int i = 0; i < made; i++) nxvk_host_free(&flushed_in[i]);
  nxvk_host_free(&ref);
  nxvk_host_free(&flushed_ref);
  return rc;
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
  nxvk_tensor *t[NXVK_MAX_INPUTS] = {0}, *res = NULL;
  nxvk_host got = {0};
  nxvk_ctx *ctx = NULL;
  int nloaded = 0, nup = 0;
  bool failed = false;
  for (; nloaded < nargs && rc == NXVK_OK; nloaded++) {
    rc = nxvk_tensor_load(args[nloaded], csv_dtype, &in[nloaded]);
    metas[nloaded] = (nxvk_meta){in[nloaded].dtype, in[nloaded].shape};
  }
  if (rc == NXVK_OK) rc = nxvk_op_infer(op, &attrs, metas, nargs, &om);
  if (rc == NXVK_OK) rc = cli_ctx(cli, &ctx);
  for (; rc == NXVK_OK && nup < nargs; nup++) rc = nxvk_tensor_from_host(ctx, &in[nup], &t[nup]);
  if (rc == NXVK_OK) rc = nxvk_op_run(ctx, op, &attrs, t, nargs, &res);
  if (rc == NXVK_OK) rc = nxvk_tensor_to_host(ctx, res, &got);
  if (rc == NXVK_OK && ro->check) rc = check_one(ctx, ro->out_path ? ro->out_path : "result", op, &attrs, in, nargs, &got, &failed);
  if (rc == NXVK_OK && ro->out_path) rc = nxvk_npy_write(ro->out_path, &got);
  if (rc == NXVK_OK && (ro->print || !ro->out_path)) print_tensor(op->name, &got);

  int status = rc ? cli_engine_error(rc) : (failed ? EXIT_FAIL : EXIT_OK);
  nxvk_tensor_free(res);
  for (int i = 0; i < nup; i++) nxvk_tensor_free(t[i]);
  for (int i = 0; i < nloaded; i++) nxvk_host_free(&in[i]);
  nxvk_host_free(&got);
  return status;
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
  bool failed = false;
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
  if (rc == NXVK_OK) rc = nxvk_graph_run(ctx, g, tin, vals);
  /* download the outputs, and for --check the operands of the ops making them */
  for (int o = 0; o < no && rc == NXVK_OK; o++) {
    int v = nxvk_graph_output_value(g, o);
    const nxvk_attrs *attrs;
    const int *operands = NULL;
    int nops = 0;
    const nxvk_op_desc *op = nxvk_graph_value_op(g, v, &attrs, &operands, &nops);
    if (!have[v]) rc = nxvk_tensor_to_host(ctx, vals[v], &down[v]);
    have[v] = rc == NXVK_OK;
    if (rc || !ro->check || !op) continue;
    nxvk_host args[NXVK_MAX_INPUTS];
    for (int k = 0; k < nops && rc == NXVK_OK; k++) {
      int a = operands[k];
      if (!have[a]) rc = nxvk_tensor_to_host(ctx, vals[a], &down[a]);
      have[a] = rc == NXVK_OK;
      args[k] = down[a];
    }
    if (rc == NXVK_OK)
      rc = check_one(ctx, nxvk_graph_output_name(g, o), op, attrs, args, nops, &down[v], &failed);
  }
  for (int o = 0; o < no && rc == NXVK_OK; o++) {
    const char *p = nxvk_graph_output_path(g, o);
    int v = nxvk_graph_output_value(g, o);
    if (p) {
      rc = nxvk_npy_write(p, &down[v]);
      if (rc == NXVK_OK) written[nwritten++] = (char *)p;
    }
    if (rc == NXVK_OK && ro->print) print_tensor(nxvk_graph_output_name(g, o), &down[v]);
  }
  if (rc)
    for (int i = 0; i < nwritten; i++) unlink(written[i]); /* all outputs or none */
  int status = rc ? cli_engine_error(rc) : (failed ? EXIT_FAIL : EXIT_OK);
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
      {"list-ops", 0, OPT_FLAG, &list, NULL, "list the ops and exit"},
      OPT_COMMON_DEVICE(cli),
      OPT_END,
  };
  int npos, rc = cli_parse(argc, argv, &usage, opts, &npos);
  if (rc) return rc < 0 ? EXIT_OK : rc;
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
  if (op) return run_op(cli, op, attrs, dtype, argv, npos, &ro);
  if (attrs || dtype) return cli_usage_error(&usage, "--attrs and --dtype go with --op");
  if (npos != 1) return cli_usage_error(&usage, "give --op NAME and inputs, or one GRAPH.json");
  if (ro.out_path) return cli_usage_error(&usage, "-o goes with --op (graphs name their outputs)");
  return run_graph(cli, argv[0], &ro);
}
