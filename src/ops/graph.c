/*
 * graph.c - op graphs: parsed once, run on the GPU in one command buffer
 * (tensors stay on the device between ops), or on the CPU reference.  Both
 * `nxvk run GRAPH.json` and the port's `run` come through here.  A run
 * infers every value's dtype and shape first, lets the fusion planner
 * (fusion.c) group elementwise ops into generated kernels, then records the
 * steps in dependency order.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attrs.h"
#include "fusion.h"
#include "ops.h"

typedef struct {
  char *name;
  nxvk_graph_input_kind kind;
  char *path;
  nxvk_host host;
  uint64_t handle;
} graph_input;

typedef struct {
  const nxvk_op_desc *op;
  nxvk_attrs attrs;
  int nin;
  int in[NXVK_MAX_INPUTS];
  char *out;
} graph_node;

typedef struct {
  char *name;
  char *path;
  int value;
} graph_output;

struct nxvk_graph {
  char *origin;
  int ninputs, nnodes, noutputs;
  graph_input *inputs;
  graph_node *nodes;
  graph_output *outputs;
};

static char *dup(const char *s) {
  size_t n = strlen(s) + 1;
  char *p = malloc(n);
  if (p) memcpy(p, s, n);
  return p;
}

/* Relative paths are relative to the graph file's folder. */
static char *resolve(const char *origin, const char *path) {
  const char *slash = strrchr(origin, '/');
  if (path[0] == '/' || !slash) return dup(path);
  size_t dl = (size_t)(slash - origin) + 1, pl = strlen(path);
  char *p = malloc(dl + pl + 1);
  if (!p) return NULL;
  memcpy(p, origin, dl);
  memcpy(p + dl, path, pl + 1);
  return p;
}

void nxvk_graph_free(nxvk_graph *g) {
  if (!g) return;
  for (int i = 0; i < g->ninputs; i++) {
    free(g->inputs[i].name);
    free(g->inputs[i].path);
    nxvk_host_free(&g->inputs[i].host);
  }
  for (int i = 0; i < g->nnodes; i++) free(g->nodes[i].out);
  for (int i = 0; i < g->noutputs; i++) {
    free(g->outputs[i].name);
    free(g->outputs[i].path);
  }
  free(g->inputs);
  free(g->nodes);
  free(g->outputs);
  free(g->origin);
  free(g);
}

static int value_named(const nxvk_graph *g, const char *name, int upto) {
  for (int i = 0; i < g->ninputs; i++)
    if (strcmp(g->inputs[i].name, name) == 0) return i;
  for (int i = 0; i < upto && i < g->nnodes; i++)
    if (g->nodes[i].out && strcmp(g->nodes[i].out, name) == 0) return g->ninputs + i;
  return -1;
}


static int parse_inputs(nxvk_graph *g, const cJSON *inputs) {
  const char *o = g->origin;
  if (!inputs) return NXVK_OK; /* a graph of sources only */
  if (!cJSON_IsObject(inputs))
    return nxvk_seterr(NXVK_E_BAD_FILE, "%s: \"inputs\" must be an object of name: tensor", o);
  int n = cJSON_GetArraySize(inputs);
  g->inputs = calloc((size_t)(n ? n : 1), sizeof *g->inputs);
  if (!g->inputs) return nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  for (const cJSON *v = inputs->child; v; v = v->next) {
    graph_input *in = &g->inputs[g->ninputs];
    if (value_named(g, v->string, 0) >= 0)
      return nxvk_seterr(NXVK_E_BAD_FILE, "%s: inputs: \"%s\" is named twice", o, v->string);
    in->name = dup(v->string);
    if (!in->name) return nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
    g->ninputs++;
    if (cJSON_IsString(v)) {
      in->kind = NXVK_GRAPH_IN_FILE;
      in->path = resolve(o, v->valuestring);
      if (!in->path) return nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
    } else if (cJSON_IsObject(v) && cJSON_GetObjectItemCaseSensitive(v, "handle")) {
      const cJSON *h = cJSON_GetObjectItemCaseSensitive(v, "handle");
      if (!cJSON_IsNumber(h) || h->valuedouble < 1 || h->valuedouble > 9007199254740992.0 ||
          h->valuedouble != (double)(uint64_t)h->valuedouble || cJSON_GetArraySize(v) != 1)
        return nxvk_seterr(NXVK_E_BAD_FILE, "%s: inputs.%s: handle must be a positive integer",
                           o, v->string);
      in->kind = NXVK_GRAPH_IN_HANDLE;
      in->handle = (uint64_t)h->valuedouble;
    } else if (cJSON_IsObject(v)) {
      in->kind = NXVK_GRAPH_IN_INLINE;
      char *text = cJSON_PrintUnformatted(v);
      if (!text) return nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
      char label[300];
      snprintf(label, sizeof label, "%s: inputs.%s", o, v->string);
      int rc = nxvk_json_tensor_parse(text, strlen(text), label, &in->host);
      free(text);
      if (rc) return rc;
    } else {
      return nxvk_seterr(NXVK_E_BAD_FILE,
                         "%s: inputs.%s must be a file name or an inline tensor object", o, v->string);
    }
  }
  return NXVK_OK;
}

static int parse_ops(nxvk_graph *g, const cJSON *ops) {
  const char *o = g->origin;
  if (!cJSON_IsArray(ops)) return nxvk_seterr(NXVK_E_BAD_FILE, "%s: \"ops\" must be a list", o);
  int n = cJSON_GetArraySize(ops);
  if (n > NXVK_MAX_GRAPH_NODES)
    return nxvk_seterr(NXVK_E_TOO_LARGE, "%s: %d ops is over the limit of %d", o, n,
                       NXVK_MAX_GRAPH_NODES);
  g->nodes = calloc((size_t)(n ? n : 1), sizeof *g->nodes);
  if (!g->nodes) return nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  int idx = 0;
  for (const cJSON *v = ops->child; v; v = v->next, idx++) {
    graph_node *nd = &g->nodes[idx];
    if (!cJSON_IsObject(v)) return nxvk_seterr(NXVK_E_BAD_FILE, "%s: ops[%d] is not an object", o, idx);
    for (const cJSON *k = v->child; k; k = k->next)
      if (strcmp(k->string, "op") && strcmp(k->string, "in") && strcmp(k->string, "out") &&
          strcmp(k->string, "attrs"))
        return nxvk_seterr(NXVK_E_BAD_FILE, "%s: ops[%d]: unknown field \"%s\" (op in out attrs)",
                           o, idx, k->string);
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(v, "op");
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(v, "in");
    const cJSON *out = cJSON_GetObjectItemCaseSensitive(v, "out");
    if (!cJSON_IsString(op)) return nxvk_seterr(NXVK_E_BAD_FILE, "%s: ops[%d]: \"op\" must be a string", o, idx);
    nd->op = nxvk_op_find(op->valuestring);
    if (!nd->op) return nxvk_seterr(NXVK_E_UNKNOWN_OP, "%s: ops[%d]: unknown op '%s' (nxvk run --list-ops shows them)", o, idx, op->valuestring);
    if (!cJSON_IsString(out) || !out->valuestring[0])
      return nxvk_seterr(NXVK_E_BAD_FILE, "%s: ops[%d]: \"out\" must name the result", o, idx);
    if (value_named(g, out->valuestring, idx) >= 0)
      return nxvk_seterr(NXVK_E_BAD_FILE, "%s: ops[%d]: name \"%s\" is already used", o, idx,
                         out->valuestring);
    if (in && !cJSON_IsArray(in))
      return nxvk_seterr(NXVK_E_BAD_FILE, "%s: ops[%d]: \"in\" must be a list of names", o, idx);
    nd->nin = in ? cJSON_GetArraySize(in) : 0;
    if (nd->nin > NXVK_MAX_INPUTS)
      return nxvk_seterr(NXVK_E_TOO_LARGE, "%s: ops[%d]: more than %d inputs", o, idx, NXVK_MAX_INPUTS);
    int k = 0;
    for (const cJSON *e = in ? in->child : NULL; e; e = e->next, k++) {
      if (!cJSON_IsString(e)) return nxvk_seterr(NXVK_E_BAD_FILE, "%s: ops[%d]: \"in\" must be a list of names", o, idx);
      nd->in[k] = value_named(g, e->valuestring, idx);
      if (nd->in[k] < 0)
        return nxvk_seterr(NXVK_E_BAD_FILE, "%s: ops[%d] (%s): \"%s\" is not an input or an earlier result",
                           o, idx, nd->op->name, e->valuestring);
    }
    int rc = nxvk_attrs_from_cjson(nd->op, cJSON_GetObjectItemCaseSensitive(v, "attrs"), &nd->attrs);
    if (rc) {
      char msg[512];
      snprintf(msg, sizeof msg, "%s: ops[%d]: %s", o, idx, nxvk_errmsg());
      return nxvk_seterr(rc, "%s", msg);
    }
    nd->out = dup(out->valuestring);
    if (!nd->out) return nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
    g->nnodes++;
  }
  return NXVK_OK;
}

static int parse_outputs(nxvk_graph *g, const cJSON *outs) {
  const char *o = g->origin;
  if (!cJSON_IsObject(outs))
    return nxvk_seterr(NXVK_E_BAD_FILE, "%s: \"outputs\" must be an object of name: file", o);
  int n = cJSON_GetArraySize(outs);
  g->outputs = calloc((size_t)(n ? n : 1), sizeof *g->outputs);
  if (!g->outputs) return nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  for (const cJSON *v = outs->child; v; v = v->next) {
    graph_output *out = &g->outputs[g->noutputs];
    out->value = value_named(g, v->string, g->nnodes);
    if (out->value < 0)
      return nxvk_seterr(NXVK_E_BAD_FILE, "%s: outputs: \"%s\" is not a name in the graph", o, v->string);
    out->name = dup(v->string);
    if (!out->name) return nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
    g->noutputs++;
    if (cJSON_IsString(v)) {
      out->path = resolve(o, v->valuestring);
      if (!out->path) return nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
    } else if (!cJSON_IsNull(v) && !cJSON_IsTrue(v)) {
      return nxvk_seterr(NXVK_E_BAD_FILE, "%s: outputs.%s must be a file name (or true/null)", o, v->string);
    }
  }
  return NXVK_OK;
}

int nxvk_graph_parse(const char *text, size_t len, const char *origin, nxvk_graph **out) {
  *out = NULL;
  if (!nxvk_json_depth_ok(text, len, NXVK_MAX_JSON_DEPTH))
    return nxvk_seterr(NXVK_E_TOO_LARGE, "%s: JSON nested deeper than %d", origin, NXVK_MAX_JSON_DEPTH);
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, false);
  while (root && end && end < text + len && *end && strchr(" \t\r\n", *end)) end++;
  if (root && end && end < text + len) {
    cJSON_Delete(root);
    return nxvk_seterr(NXVK_E_BAD_FILE, "%s: text after the graph's JSON value (at byte %zu)", origin,
                       (size_t)(end - text));
  }
  if (!root) {
    size_t at = end ? (size_t)(end - text) : 0;
    return nxvk_seterr(NXVK_E_BAD_FILE, "%s: not valid JSON (near byte %zu)", origin, at);
  }
  int rc = nxvk_graph_from_cjson(root, origin, out);
  cJSON_Delete(root);
  return rc;
}

int nxvk_graph_from_cjson(const cJSON *root, const char *origin, nxvk_graph **out) {
  *out = NULL;
  nxvk_graph *g = calloc(1, sizeof *g);
  int rc = g ? NXVK_OK : nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  if (rc == NXVK_OK) {
    g->origin = dup(origin);
    if (!g->origin) rc = nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  }
  if (rc == NXVK_OK && !cJSON_IsObject(root))
    rc = nxvk_seterr(NXVK_E_BAD_FILE, "%s: a graph is a JSON object", origin);
  for (const cJSON *k = rc ? NULL : root->child; k && rc == NXVK_OK; k = k->next)
    if (strcmp(k->string, "inputs") && strcmp(k->string, "ops") && strcmp(k->string, "outputs"))
      rc = nxvk_seterr(NXVK_E_BAD_FILE, "%s: unknown field \"%s\" (inputs ops outputs)", origin, k->string);
  if (rc == NXVK_OK) {
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(root, "inputs");
    const cJSON *ops = cJSON_GetObjectItemCaseSensitive(root, "ops");
    const cJSON *outs = cJSON_GetObjectItemCaseSensitive(root, "outputs");
    if (!ops || !outs)
      rc = nxvk_seterr(NXVK_E_BAD_FILE, "%s: a graph needs \"ops\" and \"outputs\"", origin);
    if (rc == NXVK_OK) rc = parse_inputs(g, in);
    if (rc == NXVK_OK) rc = parse_ops(g, ops);
    if (rc == NXVK_OK) rc = parse_outputs(g, outs);
    if (rc == NXVK_OK && g->noutputs == 0)
      rc = nxvk_seterr(NXVK_E_BAD_FILE, "%s: \"outputs\" names nothing", origin);
  }
  if (rc) {
    nxvk_graph_free(g);
    return rc;
  }
  *out = g;
  return NXVK_OK;
}

int nxvk_graph_load(const char *path, nxvk_graph **out) {
  *out = NULL;
  FILE *f = fopen(path, "rb");
  if (!f) return nxvk_seterr(NXVK_E_IO, "%s: cannot open: %s", path, strerror(errno));
  char *buf = NULL;
  size_t n = 0, cap = 0;
  int rc = NXVK_OK;
  for (;;) { /* read at most one byte past the limit: enough to know it is over */
    if (n == cap) {
      if (cap > (size_t)NXVK_MAX_GRAPH_BYTES) {
        rc = nxvk_seterr(NXVK_E_TOO_LARGE, "%s: graph file over %d MiB", path,
                         NXVK_MAX_GRAPH_BYTES >> 20);
        break;
      }
      cap = cap ? cap * 2 : 65536;
      if (cap > (size_t)NXVK_MAX_GRAPH_BYTES + 1) cap = (size_t)NXVK_MAX_GRAPH_BYTES + 1;
      char *p = realloc(buf, cap + 1);
      if (!p) {
        rc = nxvk_seterr(NXVK_E_NO_MEMORY, "%s: out of memory", path);
        break;
      }
      buf = p;
    }
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0) break;
  }
  if (rc == NXVK_OK && ferror(f)) rc = nxvk_seterr(NXVK_E_IO, "%s: read error", path);
  fclose(f);
  if (rc == NXVK_OK) rc = nxvk_graph_parse(buf, n, path, out);
  free(buf);
  for (int i = 0; rc == NXVK_OK && i < (*out)->ninputs; i++)
    if ((*out)->inputs[i].kind == NXVK_GRAPH_IN_HANDLE) {
      rc = nxvk_seterr(NXVK_E_BAD_FILE, "%s: inputs.%s: handles exist only in nxvk port", path,
                       (*out)->inputs[i].name);
      nxvk_graph_free(*out);
      *out = NULL;
    }
  return rc;
}

int nxvk_graph_input_count(const nxvk_graph *g) { return g->ninputs; }
const char *nxvk_graph_input_name(const nxvk_graph *g, int i) { return g->inputs[i].name; }
nxvk_graph_input_kind nxvk_graph_input_kind_of(const nxvk_graph *g, int i) { return g->inputs[i].kind; }
const char *nxvk_graph_input_path(const nxvk_graph *g, int i) { return g->inputs[i].path; }
const nxvk_host *nxvk_graph_input_host(const nxvk_graph *g, int i) { return &g->inputs[i].host; }
uint64_t nxvk_graph_input_handle(const nxvk_graph *g, int i) { return g->inputs[i].handle; }
int nxvk_graph_node_count(const nxvk_graph *g) { return g->nnodes; }
int nxvk_graph_output_count(const nxvk_graph *g) { return g->noutputs; }
const char *nxvk_graph_output_name(const nxvk_graph *g, int i) { return g->outputs[i].name; }
const char *nxvk_graph_output_path(const nxvk_graph *g, int i) { return g->outputs[i].path; }
int nxvk_graph_output_value(const nxvk_graph *g, int i) { return g->outputs[i].value; }

const char *nxvk_graph_value_name(const nxvk_graph *g, int value) {
  return value < g->ninputs ? g->inputs[value].name : g->nodes[value - g->ninputs].out;
}

const nxvk_op_desc *nxvk_graph_value_op(const nxvk_graph *g, int value, const nxvk_attrs **attrs,
                                        const int **operands, int *noperands) {
  if (value < g->ninputs) return NULL;
  const graph_node *nd = &g->nodes[value - g->ninputs];
  *attrs = &nd->attrs;
  *operands = nd->in;
  *noperands = nd->nin;
  return nd->op;
}

/* Prefix an op's error with where it sits in the graph. */
static int node_error(const nxvk_graph *g, int i, int rc) {
  char msg[512];
  snprintf(msg, sizeof msg, "%s: ops[%d] (%s -> %s): %s", g->origin, i, g->nodes[i].op->name,
           g->nodes[i].out, nxvk_errmsg());
  return nxvk_seterr(rc, "%s", msg);
}

/* One op into the recording: what nxvk_batch_op does for a batch (checks,
 * output tensor, dispatch, the break_op test fault), on the graph's own
 * recording so that fused kernels can share it.  (exec.c keeps the batch
 * private; see the note in nxvk_graph_run_opts.) */
/* Prefix a fused kernel's error with the ops it holds. */
static int step_error(const nxvk_graph *g, const nxvk_plan_step *st, int rc) {
  char msg[512];
  snprintf(msg, sizeof msg, "%s: fused kernel of ops[%d..%d] (%s ... %s): %s", g->origin,
           st->nodes[0], st->nodes[st->nnodes - 1], g->nodes[st->nodes[0]].op->name,
           g->nodes[st->nodes[st->nnodes - 1]].op->name, nxvk_errmsg());
  return nxvk_seterr(rc, "%s", msg);
}

int nxvk_graph_run(nxvk_ctx *c, const nxvk_graph *g, nxvk_tensor *const *inputs,
                   nxvk_tensor **values) {
  return nxvk_graph_run_opts(c, g, inputs, values, NULL);
}

int nxvk_graph_run_opts(nxvk_ctx *c, const nxvk_graph *g, nxvk_tensor *const *inputs,
                        nxvk_tensor **values, const nxvk_run_opts *o) {
  static const nxvk_run_opts defaults = {0};
  if (!o) o = &defaults;
  if (o->plan) *o->plan = NULL;
  if (o->pending) *o->pending = NULL;
  double t0 = (nxvk_now_ns() * 1e-6);
  int total = g->ninputs + g->nnodes;
  memset(values, 0, (size_t)total * sizeof *values);
  /* every value's dtype and shape first: errors name the op before any work */
  nxvk_meta *metas = calloc((size_t)total + 1, sizeof *metas);
  if (!metas) return nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  int rc = NXVK_OK;
  for (int i = 0; i < g->ninputs && rc == NXVK_OK; i++) {
    if (!inputs[i] || inputs[i]->c != c)
      rc = nxvk_seterr(NXVK_E_BAD_REQUEST, "%s: input %s is not a tensor of this device", g->origin,
                       g->inputs[i].name);
    else
      metas[i] = (nxvk_meta){inputs[i]->dtype, inputs[i]->shape};
  }
  for (int i = 0; i < g->nnodes && rc == NXVK_OK; i++) {
    nxvk_meta in[NXVK_MAX_INPUTS];
    for (int k = 0; k < g->nodes[i].nin; k++) in[k] = metas[g->nodes[i].in[k]];
    rc = nxvk_op_infer(g->nodes[i].op, &g->nodes[i].attrs, in, g->nodes[i].nin,
                       &metas[g->ninputs + i]);
    if (rc) rc = node_error(g, i, rc);
  }
  nxvk_plan *plan = NULL;
  if (rc == NXVK_OK) rc = nxvk_fusion_plan(c, g, metas, !o->no_fusion, &plan);
  nxvk_rec *r = NULL;
  if (rc == NXVK_OK) rc = nxvk_rec_begin(c, (o->batch_flags & NXVK_BATCH_TIMESTAMPS) != 0, &r);
  double t_rec = (nxvk_now_ns() * 1e-6);
  for (int i = 0; i < g->ninputs && rc == NXVK_OK; i++)
    rc = nxvk_tensor_view(inputs[i], nxvk_tensor_shape(inputs[i]), &values[i]);
  const char *cache_dir = o->no_cache ? NULL : c->cache_dir;
  for (int s = 0; plan && s < plan->nsteps && rc == NXVK_OK; s++) {
    nxvk_plan_step *st = &plan->steps[s];
    if (st->fused) {
      rc = nxvk_fusion_record(r, g, metas, st, values, cache_dir);
      if (rc) rc = step_error(g, st, rc);
      continue;
    }
    int i = st->nodes[0];
    nxvk_tensor *args[NXVK_MAX_INPUTS];
    for (int k = 0; k < g->nodes[i].nin; k++) args[k] = values[g->nodes[i].in[k]];
    rc = nxvk_rec_op(r, g->nodes[i].op, &g->nodes[i].attrs, args, g->nodes[i].nin,
                     &values[g->ninputs + i]);
    if (rc) rc = node_error(g, i, rc);
  }
  if (plan) {
    plan->disk_cache = cache_dir != NULL;
    plan->record_ms = (nxvk_now_ns() * 1e-6) - t_rec;
  }
  if (rc) {
    if (r) nxvk_rec_abort(r);
  } else if (o->pending) {
    rc = nxvk_rec_launch(r);
    if (rc == NXVK_OK) *o->pending = r;
  } else {
    rc = nxvk_rec_submit(r, o->gpu_ns);
  }
  if (rc)
    for (int i = 0; i < total; i++) {
      nxvk_tensor_free(values[i]);
      values[i] = NULL;
    }
  free(metas);
  if (plan) plan->run_ms = (nxvk_now_ns() * 1e-6) - t0;
  if (rc == NXVK_OK && o->plan) *o->plan = plan;
  else nxvk_plan_free(plan);
  return rc;
}

int nxvk_graph_finish(nxvk_rec *pending) { return pending ? nxvk_rec_wait(pending, NULL) : NXVK_OK; }

int nxvk_graph_ref(const nxvk_graph *g, const nxvk_host *inputs, nxvk_host *values) {
  int total = g->ninputs + g->nnodes;
  memset(values, 0, (size_t)total * sizeof *values);
  int rc = NXVK_OK;
  for (int i = 0; i < g->ninputs && rc == NXVK_OK; i++) {
    rc = nxvk_host_alloc(&values[i], inputs[i].dtype, &inputs[i].shape);
    if (rc == NXVK_OK && nxvk_host_bytes(&inputs[i]))
      memcpy(values[i].data, inputs[i].data, nxvk_host_bytes(&inputs[i]));
  }
  for (int i = 0; i < g->nnodes && rc == NXVK_OK; i++) {
    nxvk_host args[NXVK_MAX_INPUTS];
    for (int k = 0; k < g->nodes[i].nin; k++) args[k] = values[g->nodes[i].in[k]];
    rc = nxvk_op_ref(g->nodes[i].op, &g->nodes[i].attrs, args, g->nodes[i].nin,
                     &values[g->ninputs + i]);
    if (rc) rc = node_error(g, i, rc);
  }
  if (rc)
    for (int i = 0; i < total; i++) nxvk_host_free(&values[i]);
  return rc;
}
