/*
 * conformance_fused.c - the fused-graph class of `nxvk conformance`.
 *
 * Each graph: 1 to 3 inputs of one dtype whose shapes broadcast into a base
 * shape of rank 0 to 8 (dims dropped or set to 1), then 2 to 12 ops drawn
 * from the table's elementwise rows (kinds, not names: unary, binary,
 * compare, select; a select takes its predicate from an earlier compare),
 * each reading recent values more often than old ones so that chains and
 * trees both occur.  Inputs hold random values and, one in twelve, IEEE
 * edge values.  The graph runs twice, fused and with fusion off; every
 * output of both runs is checked against the CPU reference of the whole
 * graph within the limits composed over its ops (nxvk_check_nodes), and
 * where every op is exact the two runs must agree bit for bit.
 */
#include "conformance_fused.h"

#include <cjson/cJSON.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OPS 12
#define MAX_VALUES (3 + MAX_OPS)

typedef struct {
  uint64_t s;
} rng_t;

static int rng_below(rng_t *r, int n) { return (int)(nxvk_splitmix64(&r->s) % (uint64_t)n); }
static double rng_unit(rng_t *r) { return nxvk_rand_unit(&r->s); }

static double edge_value(rng_t *r, nxvk_dtype d) {
  bool f32 = d == NXVK_F32;
  double tiny = f32 ? FLT_MIN : DBL_MIN, big = f32 ? FLT_MAX : DBL_MAX;
  double eps = f32 ? FLT_EPSILON : DBL_EPSILON;
  const double vals[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, tiny / 1024, -tiny, tiny, big,
                         -big, 1 + eps, 1 - eps / 2, 88.5, -103.0, 0.5, -2.0, 3.0};
  return vals[rng_below(r, (int)(sizeof vals / sizeof vals[0]))];
}

static cJSON *json_number(nxvk_dtype d, double v) {
  if (isnan(v)) return cJSON_CreateString("nan");
  if (isinf(v)) return cJSON_CreateString(v > 0 ? "inf" : "-inf");
  if (v == 0 && signbit(v)) return cJSON_CreateString("-0");
  /* cJSON prints 15 digits: written here with enough to round-trip */
  char buf[40];
  snprintf(buf, sizeof buf, d == NXVK_F32 ? "%.9g" : "%.17g", d == NXVK_F32 ? (double)(float)v : v);
  return cJSON_CreateRaw(buf);
}

static cJSON *random_tensor(rng_t *r, nxvk_dtype d, const nxvk_shape *s) {
  cJSON *t = cJSON_CreateObject(), *shape = cJSON_AddArrayToObject(t, "shape");
  cJSON *data = cJSON_CreateArray();
  cJSON_AddStringToObject(t, "dtype", nxvk_dtype_name(d));
  int64_t n = 1;
  for (int i = 0; i < s->rank; i++) {
    cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)s->dim[i]));
    n *= s->dim[i];
  }
  for (int64_t i = 0; i < n; i++) {
    double v;
    if (d == NXVK_I32) {
      static const double ie[] = {0, 1, -1, INT_MIN, INT_MAX, 7, -7};
      v = rng_below(r, 10) == 0 ? ie[rng_below(r, 7)] : (double)(rng_below(r, 101) - 50);
    } else if (rng_below(r, 12) == 0) {
      v = edge_value(r, d);
    } else {
      static const double scale[] = {1, 3, 40};
      v = (rng_unit(r) * 2 - 1) * scale[rng_below(r, 3)];
    }
    cJSON_AddItemToArray(data, json_number(d, v));
  }
  cJSON_AddItemToObject(t, "data", data);
  return t;
}

/* The table's elementwise rows for dtype d, by kind. */
static int elementwise_ops(nxvk_dtype d, nxvk_kind kind, const nxvk_op_desc **out, int max) {
  int n = 0;
  for (int i = 0; i < nxvk_op_count() && n < max; i++) {
    const nxvk_op_desc *op = nxvk_op_at(i);
    if (op->kind == kind && op->expr && (op->dtypes & NXVK_DT(d))) out[n++] = op;
  }
  return n;
}

static const char *pick(rng_t *r, char names[][16], int n) {
  return names[rng_below(r, 2) == 0 ? n - 1 : rng_below(r, n)]; /* the newest half the time */
}

/* One random graph as JSON text (malloc'd); *desc gets its op list. */
static char *random_graph(rng_t *r, nxvk_dtype d, char *desc, size_t desclen, nxvk_shape *base) {
  static const int ranks[] = {0, 1, 1, 2, 2, 2, 3, 3, 4, 8};
  base->rank = ranks[rng_below(r, 10)];
  int maxdim = base->rank <= 2 ? 9 : base->rank <= 4 ? 4 : 2;
  for (int i = 0; i < base->rank; i++) base->dim[i] = 1 + rng_below(r, maxdim);
  cJSON *root = cJSON_CreateObject(), *inputs = cJSON_AddObjectToObject(root, "inputs");
  cJSON *ops = cJSON_AddArrayToObject(root, "ops"), *outputs = cJSON_AddObjectToObject(root, "outputs");
  char vals[MAX_VALUES][16], preds[MAX_VALUES][16];
  int nvals = 0, npreds = 0;
  int nin = 1 + rng_below(r, 3);
  for (int k = 0; k < nin; k++) {
    nxvk_shape s = *base;
    if (k > 0) { /* a broadcast operand: leading dims dropped, others set to 1 */
      int drop = rng_below(r, 3) == 0 ? rng_below(r, base->rank + 1) : 0;
      s.rank = base->rank - drop;
      for (int i = 0; i < s.rank; i++) {
        s.dim[i] = base->dim[i + drop];
        if (rng_below(r, 3) == 0) s.dim[i] = 1;
      }
    }
    snprintf(vals[nvals], sizeof vals[0], "x%d", k);
    cJSON_AddItemToObject(inputs, vals[nvals++], random_tensor(r, d, &s));
  }
  const nxvk_op_desc *kinds[4][64];
  int nk[4];
  nxvk_kind kind_of[4] = {NXVK_KIND_UNARY, NXVK_KIND_BINARY, NXVK_KIND_COMPARE, NXVK_KIND_SELECT};
  for (int k = 0; k < 4; k++) nk[k] = elementwise_ops(d, kind_of[k], kinds[k], 64);
  int nops = 2 + rng_below(r, MAX_OPS - 1);
  size_t at = 0;
  desc[0] = 0;
  for (int i = 0; i < nops; i++) {
    int k = rng_below(r, 10);
    k = k < 3 ? 0 : k < 7 ? 1 : k < 8 ? 2 : 3;   /* unary binary compare select */
    if (k == 3 && npreds == 0) k = 2;
    if (nk[k] == 0) k = 1;
    const nxvk_op_desc *op = kinds[k][rng_below(r, nk[k])];
    cJSON *o = cJSON_CreateObject(), *in = cJSON_AddArrayToObject(o, "in");
    cJSON_AddStringToObject(o, "op", op->name);
    if (k == 3) cJSON_AddItemToArray(in, cJSON_CreateString(pick(r, preds, npreds)));
    /* value operands: select's two beside its predicate, else the op's
     * arity (one-input tests such as is_nan are compare rows) */
    for (int a = 0; a < (k == 3 ? 2 : op->arity); a++) cJSON_AddItemToArray(in, cJSON_CreateString(pick(r, vals, nvals)));
    char out[16];
    snprintf(out, sizeof out, "t%d", i);
    cJSON_AddStringToObject(o, "out", out);
    cJSON_AddItemToArray(ops, o);
    if (k == 2) snprintf(preds[npreds++], sizeof preds[0], "%s", out);
    else snprintf(vals[nvals++], sizeof vals[0], "%s", out);
    if (i == nops - 1 || rng_below(r, 4) == 0) cJSON_AddTrueToObject(outputs, out);
    if (at < desclen) at += (size_t)snprintf(desc + at, desclen - at, "%s%s", i ? " " : "", op->name);
  }
  char *text = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  return text;
}

/* Fused and unfused agree bit for bit (NaN as a class)? */
static int64_t differing(const nxvk_host *a, const nxvk_host *b) {
  int64_t n = nxvk_host_count(a), bad = 0;
  for (int64_t i = 0; i < n; i++)
    bad += nxvk_ulp_diff(a->dtype, nxvk_host_get(a, i), nxvk_host_get(b, i)) != 0;
  return bad;
}

static bool graph_exact(const nxvk_graph *g) {
  int ni = nxvk_graph_input_count(g);
  for (int i = 0; i < nxvk_graph_node_count(g); i++) {
    const nxvk_attrs *a;
    const int *args;
    int nargs;
    const nxvk_op_desc *op = nxvk_graph_value_op(g, ni + i, &a, &args, &nargs);
    nxvk_limit lim;
    if (nxvk_op_limit(op, nxvk_graph_input_host(g, 0)->dtype, &lim) || !lim.exact) return false;
  }
  return true;
}

/* One graph: 0 when it ran (pass or fail in *ok), else an engine code. */
static int one_graph(nxvk_ctx *c, const char *text, const nxvk_device_info *info, bool *ok, int *kernels,
                     int64_t *unchecked, char *why, size_t whylen) {
  nxvk_graph *g = NULL;
  *ok = false;
  *kernels = 0;
  *unchecked = 0;
  why[0] = 0;
  int rc = nxvk_graph_parse(text, strlen(text), "fused graph", &g);
  if (rc) {
    snprintf(why, whylen, "graph refused: %s", nxvk_errmsg());
    return NXVK_OK;
  }
  int ni = nxvk_graph_input_count(g), nn = nxvk_graph_node_count(g), total = ni + nn;
  nxvk_tensor **tin = calloc((size_t)ni, sizeof *tin);
  nxvk_tensor **vf = calloc((size_t)total, sizeof *vf), **vu = calloc((size_t)total, sizeof *vu);
  nxvk_host *hv = calloc((size_t)total, sizeof *hv);
  int *nodes = calloc((size_t)nn, sizeof *nodes);
  nxvk_plan *plan = NULL;
  if (!tin || !vf || !vu || !hv || !nodes) rc = NXVK_E_NO_MEMORY;
  for (int i = 0; i < nn && rc == NXVK_OK; i++) nodes[i] = i;
  for (int i = 0; i < ni && rc == NXVK_OK; i++) {
    hv[i] = *nxvk_graph_input_host(g, i); /* borrowed */
    rc = nxvk_tensor_from_host(c, &hv[i], &tin[i]);
  }
  nxvk_run_opts fused = {.plan = &plan}, unfused = {.no_fusion = true};
  if (rc == NXVK_OK) rc = nxvk_graph_run_opts(c, g, tin, vf, &fused);
  if (rc == NXVK_OK) rc = nxvk_graph_run_opts(c, g, tin, vu, &unfused);
  if (rc == NXVK_OK) *kernels = plan->fused_kernels;
  bool exact = rc == NXVK_OK && graph_exact(g), all_ok = true;
  size_t at = 0;
  for (int o = 0; o < nxvk_graph_output_count(g) && rc == NXVK_OK; o++) {
    int v = nxvk_graph_output_value(g, o);
    nxvk_host hf = {0}, hu = {0};
    rc = nxvk_tensor_to_host(c, vf[v], &hf);
    if (rc == NXVK_OK) rc = nxvk_tensor_to_host(c, vu[v], &hu);
    nxvk_cmp cf, cu;
    if (rc == NXVK_OK) rc = nxvk_check_nodes(info, g, nodes, nn, hv, v, &hf, &cf, NULL, 0);
    if (rc == NXVK_OK) rc = nxvk_check_nodes(info, g, nodes, nn, hv, v, &hu, &cu, NULL, 0);
    int64_t diff = rc == NXVK_OK ? differing(&hf, &hu) : 0;
    if (rc == NXVK_OK) *unchecked += cf.forgiven + cf.unbounded;
    const char *name = nxvk_graph_output_name(g, o);
    if (rc == NXVK_OK && cf.bad && at < whylen) {
      at += (size_t)snprintf(why + at, whylen - at, "%s fused: %lld of %lld outside the composed limit, first [%lld] got %.17g want %.17g; ",
                             name, (long long)cf.bad, (long long)cf.n, (long long)cf.worst, cf.worst_got, cf.worst_ref);
    }
    if (rc == NXVK_OK && cu.bad && at < whylen) {
      at += (size_t)snprintf(why + at, whylen - at, "%s unfused: %lld of %lld outside the composed limit, first [%lld] got %.17g want %.17g; ",
                             name, (long long)cu.bad, (long long)cu.n, (long long)cu.worst, cu.worst_got, cu.worst_ref);
    }
    if (rc == NXVK_OK && exact && diff && at < whylen)
      at += (size_t)snprintf(why + at, whylen - at, "%s: fused and unfused differ in %lld elements (exact ops); ", name, (long long)diff);
    if (rc == NXVK_OK) all_ok = all_ok && !cf.bad && !cu.bad && !(exact && diff);
    nxvk_host_free(&hf);
    nxvk_host_free(&hu);
  }
  *ok = rc == NXVK_OK && all_ok;
  nxvk_plan_free(plan);
  for (int i = 0; i < total; i++) {
    if (vf) nxvk_tensor_free(vf[i]);
    if (vu) nxvk_tensor_free(vu[i]);
  }
  for (int i = 0; i < ni && tin; i++) nxvk_tensor_free(tin[i]);
  free(tin);
  free(vf);
  free(vu);
  free(hv);
  free(nodes);
  nxvk_graph_free(g);
  /* a graph the engine refused is a failed case, not a device failure */
  if (rc && rc != NXVK_E_DEVICE_LOST && rc != NXVK_E_ALLOC_FAILED && rc != NXVK_E_NO_MEMORY) {
    snprintf(why, whylen, "%s", nxvk_errmsg());
    rc = NXVK_OK;
  }
  return rc;
}

int conformance_fused_class(nxvk_ctx *c, unsigned seed, int ngraphs, int *passed, int *failed) {
  nxvk_device_info info;
  nxvk_ctx_device_info(c, &info);
  nxvk_dtype dts[3] = {NXVK_F32, NXVK_F64, NXVK_I32};
  int ndts = 0, with_kernels = 0, total_kernels = 0;
  nxvk_dtype use[3];
  for (int i = 0; i < 3; i++)
    if (nxvk_ctx_supports(c, dts[i])) use[ndts++] = dts[i];
  for (int i = 0; i < ngraphs; i++) {
    unsigned gs = seed + (unsigned)i;
    rng_t r = {0x9E3779B97F4A7C15ull ^ ((uint64_t)gs * 0xD1B54A32D192ED03ull + 1)};
    nxvk_dtype d = use[i % ndts];
    char desc[400], why[1200], shape[200];
    nxvk_shape base;
    char *text = random_graph(&r, d, desc, sizeof desc, &base);
    if (!text) return NXVK_E_NO_MEMORY;
    bool ok;
    int kernels;
    int64_t unchecked;
    int rc = one_graph(c, text, &info, &ok, &kernels, &unchecked, why, sizeof why);
    if (rc) {
      free(text);
      return rc;
    }
    with_kernels += kernels > 0;
    total_kernels += kernels;
    int n = *passed + *failed + 1;
    nxvk_shape_str(&base, shape, sizeof shape);
    char note[96] = "";
    if (unchecked) /* said, not hidden: where an op amplified an error across a jump */
      snprintf(note, sizeof note, "; %lld element%s unbounded or past what the bound can judge", (long long)unchecked,
               unchecked == 1 ? "" : "s");
    printf("%s %d - fused graph seed=%u %s %s: %s (%d fused kernel%s%s)\n", ok ? "ok" : "not ok", n, gs,
           nxvk_dtype_name(d), shape, desc, kernels, kernels == 1 ? "" : "s", note);
    if (ok) {
      (*passed)++;
    } else {
      (*failed)++;
      printf("#   %s\n", why);
      /* the ops, without the input data, to read; the seed reproduces it all */
      const char *ops = strstr(text, "\"ops\":");
      printf("#   %.*s\n", ops ? 900 : 0, ops ? ops : "");
    }
    free(text);
  }
  /* a planner that never fuses would pass everything above: say so */
  int n = *passed + *failed + 1;
  bool fused_enough = ngraphs < 4 || with_kernels * 2 >= ngraphs;
  printf("%s %d - fused graphs: %d of %d graphs ran fused kernels (%d kernels)\n",
         fused_enough ? "ok" : "not ok", n, with_kernels, ngraphs, total_kernels);
  if (fused_enough) (*passed)++;
  else (*failed)++;
  return NXVK_OK;
}
