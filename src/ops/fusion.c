/*
 * fusion.c - elementwise fusion: the planner that groups a graph's
 * elementwise ops into kernels, the recording of a fused kernel (GLSL from
 * codegen.c, SPIR-V from this process, the on-disk cache or glslang).  The
 * check of fused results with composed limits is fused_bound.c's.
 *
 * Planning, in graph order, node by node: an elementwise node joins the
 * groups of its operands that have its shape (all at once, else the largest
 * one that fits), when the merged group
 *   - keeps the steps acyclic: nothing outside it is both fed by it and
 *     feeding it (else no order could run it as one dispatch),
 *   - fits one kernel: at most NXVK_CG_MAX_NODES ops, NXVK_CG_MAX_INPUTS
 *     inputs, NXVK_CG_MAX_OUTPUTS outputs, and inputs + outputs within the
 *     device's storage-buffer bindings,
 *   - reads no u8 intermediate that may have left 0..255: shaders compute u8
 *     in 32-bit registers and only a store wraps, so u8 add, subtract and
 *     multiply (found by probing the op's reference, not by name) must be
 *     stored before another op reads them.
 * A group's values that anything outside it reads, and graph outputs, are
 * its outputs (stored); the others live in registers only.  One shape per
 * group: a smaller operand (a broadcast) is read through strides, never
 * recomputed per element of the larger shape.
 */
#include "fusion.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/sha256.h"
#include "codegen.h"

/* Bumped when the generated code or its compilation changes meaning: it is
 * part of the GLSL text, so of every cache key. */
#define FUSION_FORMAT "nxvk-fusion-1"

/* ------------------------------------------------------------ planning */

typedef struct {
  const nxvk_graph *g;
  const nxvk_meta *metas;
  int ni, nn;
  const nxvk_op_desc **op;     /* per node */
  const int **arg;
  int *narg;
  int *cstart, *cons;          /* consumers of value v: cons[cstart[v] .. cstart[v + 1]) */
  bool *is_out;                /* per value: a graph output */
  const char **alone;          /* per node: why it cannot fuse (NULL: it can) */
  bool *wide_u8;               /* per node: a u8 result that may exceed 0..255 in registers */
  int *unit;                   /* per node: id (a member node) of its group or single */
  int **mem;                   /* per unit id: members, ascending */
  int *nmem;
  int *seen, stamp;            /* per unit: search marks */
  int *queue;
  int max_io;                  /* tensor bindings one kernel may have */
} planner;

static bool elementwise(const nxvk_op_desc *d) {
  return d->kind <= NXVK_KIND_SELECT && d->expr != NULL;
}

/* Does the op's u8 result leave 0..255 before the store wraps it? */
static bool u8_may_overflow(const nxvk_op_desc *d) {
  const nxvk_op *op = nxvk_op_from_desc(d);
  if (d->kind == NXVK_KIND_COMPARE || !op->scalar) return false;
  static const int64_t probes[][3] = {{255, 255, 1}, {0, 1, 1}, {1, 0, 0}, {16, 16, 1},
                                      {0, 255, 0},   {255, 1, 1}, {128, 2, 1}};
  for (size_t i = 0; i < NXVK_ARRAY_LEN(probes); i++) {
    nxvk_scalar a = {.i = probes[i][0]}, b = {.i = probes[i][1]}, c = {.i = probes[i][2]};
    nxvk_scalar r = d->kind == NXVK_KIND_SELECT ? op->scalar(c, a, b, NXVK_U8)
                                                : op->scalar(a, b, c, NXVK_U8);
    if (r.i < 0 || r.i > 255) return true;
  }
  return false;
}

static const char *why_alone(planner *p, nxvk_ctx *c, int i) {
  if (!elementwise(p->op[i]) || p->narg[i] < 1 || p->narg[i] > 3) return "not elementwise";
  const nxvk_meta *m = &p->metas[p->ni + i];
  int64_t n = 0;
  if (nxvk_shape_count(&m->shape, &n) || n == 0) return "empty result";
  if (!nxvk_ctx_supports(c, m->dtype)) return "dtype not on this device";
  for (int k = 0; k < p->narg[i]; k++)
    if (!nxvk_ctx_supports(c, p->metas[p->arg[i][k]].dtype)) return "dtype not on this device";
  return NULL;
}

static bool in_set(const planner *p, int node, int i, const int *cand, int ncand) {
  if (node == i) return true;
  if (node > i) return false; /* not planned yet: outside */
  for (int k = 0; k < ncand; k++)
    if (p->unit[node] == cand[k]) return true;
  return false;
}

/* Queue the steps (not yet queued) that read node's value, outside the set. */
static void mark_consumers(planner *p, int node, int i, const int *cand, int ncand, int *tail) {
  int v = p->ni + node;
  for (int k = p->cstart[v]; k < p->cstart[v + 1]; k++) {
    int cn = p->cons[k];
    if (cn >= i || in_set(p, cn, i, cand, ncand)) continue; /* later nodes have no step yet */
    int u = p->unit[cn];
    if (p->seen[u] == p->stamp) continue;
    p->seen[u] = p->stamp;
    p->queue[(*tail)++] = u;
  }
}

/* Would node i and the groups cand[] make one valid kernel? */
static bool merge_ok(planner *p, int i, const int *cand, int ncand) {
  int members[NXVK_CG_MAX_NODES], n = 0;
  for (int k = 0; k < ncand; k++) {
    if (n + p->nmem[cand[k]] >= NXVK_CG_MAX_NODES) return false; /* + i itself */
    memcpy(members + n, p->mem[cand[k]], (size_t)p->nmem[cand[k]] * sizeof *members);
    n += p->nmem[cand[k]];
  }
  members[n++] = i;
  /* inputs, outputs, and u8 intermediates read in registers */
  int inputs[3 * NXVK_CG_MAX_NODES], nin = 0, nout = 0;
  for (int m = 0; m < n; m++) {
    int s = members[m];
    for (int k = 0; k < p->narg[s]; k++) {
      int v = p->arg[s][k];
      if (v >= p->ni && in_set(p, v - p->ni, i, cand, ncand)) {
        if (p->wide_u8[v - p->ni]) return false;
        continue;
      }
      bool dup = false;
      for (int j = 0; j < nin && !dup; j++) dup = inputs[j] == v;
      if (!dup) inputs[nin++] = v;
    }
    int v = p->ni + s;
    bool out = p->is_out[v];
    for (int k = p->cstart[v]; k < p->cstart[v + 1] && !out; k++)
      out = !in_set(p, p->cons[k], i, cand, ncand); /* later nodes count: they are outside yet */
    nout += out;
  }
  if (nin > NXVK_CG_MAX_INPUTS || nout > NXVK_CG_MAX_OUTPUTS || nin + nout > p->max_io)
    return false;

  /* acyclic: search forward from the set through the other steps; reaching
   * a step the set reads from would be a cycle */
  p->stamp++;
  int head = 0, tail = 0;
  for (int m = 0; m < n; m++) mark_consumers(p, members[m], i, cand, ncand, &tail);
  while (head < tail) {
    int u = p->queue[head++];
    for (int a = 0; a < p->nmem[u]; a++) mark_consumers(p, p->mem[u][a], i, cand, ncand, &tail);
  }
  for (int m = 0; m < n; m++) {
    int s = members[m];
    for (int k = 0; k < p->narg[s]; k++) {
      int v = p->arg[s][k];
      if (v < p->ni || in_set(p, v - p->ni, i, cand, ncand)) continue;
      if (p->seen[p->unit[v - p->ni]] == p->stamp) return false;
    }
  }
  return true;
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

static void merge(planner *p, int i, const int *cand, int ncand) {
  int rep = cand[0];
  for (int k = 1; k < ncand; k++) {
    memcpy(p->mem[rep] + p->nmem[rep], p->mem[cand[k]], (size_t)p->nmem[cand[k]] * sizeof(int));
    p->nmem[rep] += p->nmem[cand[k]];
    p->nmem[cand[k]] = 0;
  }
  p->mem[rep][p->nmem[rep]++] = i;
  p->nmem[i] = 0;
  qsort(p->mem[rep], (size_t)p->nmem[rep], sizeof(int), cmp_int);
  for (int m = 0; m < p->nmem[rep]; m++) p->unit[p->mem[rep][m]] = rep;
}

static void plan_node(planner *p, nxvk_ctx *c, int i, bool enabled) {
  p->unit[i] = i;
  p->mem[i][0] = i;
  p->nmem[i] = 1;
  p->alone[i] = enabled ? why_alone(p, c, i) : "fusion off";
  p->wide_u8[i] = p->metas[p->ni + i].dtype == NXVK_U8 && u8_may_overflow(p->op[i]);
  if (p->alone[i]) return;
  int cand[3], ncand = 0;
  const nxvk_shape *shape = &p->metas[p->ni + i].shape;
  for (int k = 0; k < p->narg[i]; k++) {
    int v = p->arg[i][k];
    if (v < p->ni || p->alone[v - p->ni]) continue;
    if (!nxvk_shape_equal(&p->metas[v].shape, shape)) continue;
    int u = p->unit[v - p->ni];
    bool dup = false;
    for (int j = 0; j < ncand && !dup; j++) dup = cand[j] == u;
    if (!dup) cand[ncand++] = u;
  }
  if (ncand == 0) return;
  if (merge_ok(p, i, cand, ncand)) {
    merge(p, i, cand, ncand);
    return;
  }
  /* one group at a time, the largest first */
  for (int a = 0; a < ncand; a++)
    for (int b = a + 1; b < ncand; b++)
      if (p->nmem[cand[b]] > p->nmem[cand[a]]) {
        int t = cand[a];
        cand[a] = cand[b];
        cand[b] = t;
      }
  for (int a = 0; a < ncand; a++)
    if (merge_ok(p, i, &cand[a], 1)) {
      merge(p, i, &cand[a], 1);
      return;
    }
}

void nxvk_plan_free(nxvk_plan *p) {
  if (!p) return;
  for (int i = 0; i < p->nsteps; i++) {
    free(p->steps[i].nodes);
    free(p->steps[i].inputs);
    free(p->steps[i].outputs);
  }
  free(p->steps);
  free(p);
}

const nxvk_plan_step *nxvk_plan_step_of(const nxvk_plan *p, const nxvk_graph *g, int v) {
  int node = v - nxvk_graph_input_count(g);
  if (!p || node < 0) return NULL;
  for (int s = 0; s < p->nsteps; s++)
    for (int k = 0; k < p->steps[s].nnodes; k++)
      if (p->steps[s].nodes[k] == node) return &p->steps[s];
  return NULL;
}

/* Inputs and outputs of a finished group. */
static int fill_io(planner *p, int u, nxvk_plan_step *st) {
  int n = p->nmem[u];
  st->inputs = malloc((size_t)(3 * n) * sizeof(int));
  st->outputs = malloc((size_t)n * sizeof(int));
  if (!st->inputs || !st->outputs) return nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  for (int m = 0; m < n; m++) {
    int s = p->mem[u][m];
    for (int k = 0; k < p->narg[s]; k++) {
      int v = p->arg[s][k];
      if (v >= p->ni && p->unit[v - p->ni] == u) continue;
      bool dup = false;
      for (int j = 0; j < st->ninputs && !dup; j++) dup = st->inputs[j] == v;
      if (!dup) st->inputs[st->ninputs++] = v;
    }
    int v = p->ni + s;
    bool out = p->is_out[v];
    for (int k = p->cstart[v]; k < p->cstart[v + 1] && !out; k++) out = p->unit[p->cons[k]] != u;
    if (out) st->outputs[st->noutputs++] = v;
  }
  return NXVK_OK;
}

static void planner_free(planner *p) {
  if (p->mem)
    for (int i = 0; i < p->nn; i++) free(p->mem[i]);
  free(p->mem);
  free(p->op);
  free(p->arg);
  free(p->narg);
  free(p->cstart);
  free(p->cons);
  free(p->is_out);
  free(p->alone);
  free(p->wide_u8);
  free(p->unit);
  free(p->nmem);
  free(p->seen);
  free(p->queue);
}

/* Tensor bindings one kernel may have: ours, and the device's. */
static int max_io(nxvk_ctx *c) {
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(c->physical, &props);
  uint32_t dev = props.limits.maxPerStageDescriptorStorageBuffers;
  if (props.limits.maxDescriptorSetStorageBuffers < dev) dev = props.limits.maxDescriptorSetStorageBuffers;
  uint32_t ours = NXVK_MAX_BINDINGS;
  return (int)(dev < ours ? dev : ours) - 1; /* binding 0 is the metadata */
}

int nxvk_fusion_plan(nxvk_ctx *c, const nxvk_graph *g, const nxvk_meta *metas, bool enabled,
                     nxvk_plan **out) {
  *out = NULL;
  double t0 = (nxvk_now_ns() * 1e-6);
  planner p = {.g = g, .metas = metas};
  p.ni = nxvk_graph_input_count(g);
  p.nn = nxvk_graph_node_count(g);
  int nv = p.ni + p.nn, nn1 = p.nn ? p.nn : 1;
  p.op = calloc((size_t)nn1, sizeof *p.op);
  p.arg = calloc((size_t)nn1, sizeof *p.arg);
  p.narg = calloc((size_t)nn1, sizeof *p.narg);
  p.cstart = calloc((size_t)nv + 2, sizeof *p.cstart);
  p.is_out = calloc((size_t)nv + 1, sizeof *p.is_out);
  p.alone = calloc((size_t)nn1, sizeof *p.alone);
  p.wide_u8 = calloc((size_t)nn1, sizeof *p.wide_u8);
  p.unit = calloc((size_t)nn1, sizeof *p.unit);
  p.mem = calloc((size_t)nn1, sizeof *p.mem);
  p.nmem = calloc((size_t)nn1, sizeof *p.nmem);
  p.seen = calloc((size_t)nn1, sizeof *p.seen);
  p.queue = calloc((size_t)nn1, sizeof *p.queue);
  nxvk_plan *plan = calloc(1, sizeof *plan);
  int rc = NXVK_OK;
  if (!p.op || !p.arg || !p.narg || !p.cstart || !p.is_out || !p.alone || !p.wide_u8 || !p.unit ||
      !p.mem || !p.nmem || !p.seen || !p.queue || !plan)
    rc = nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  int nedges = 0;
  for (int i = 0; i < p.nn && rc == NXVK_OK; i++) {
    const nxvk_attrs *a;
    p.op[i] = nxvk_graph_value_op(g, p.ni + i, &a, &p.arg[i], &p.narg[i]);
    for (int k = 0; k < p.narg[i]; k++) p.cstart[p.arg[i][k] + 1]++;
    nedges += p.narg[i];
    p.mem[i] = malloc(NXVK_CG_MAX_NODES * sizeof(int));
    if (!p.mem[i]) rc = nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  }
  if (rc == NXVK_OK) {
    for (int v = 0; v < nv; v++) p.cstart[v + 1] += p.cstart[v];
    p.cons = malloc((size_t)(nedges ? nedges : 1) * sizeof *p.cons);
    int *fill = calloc((size_t)nv + 1, sizeof *fill);
    if (!p.cons || !fill) {
      rc = nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
    } else {
      for (int i = 0; i < p.nn; i++)
        for (int k = 0; k < p.narg[i]; k++) {
          int v = p.arg[i][k];
          /* a node reading one value twice is one consumer, listed twice: harmless */
          p.cons[p.cstart[v] + fill[v]++] = i;
        }
    }
    free(fill);
    for (int o = 0; o < nxvk_graph_output_count(g); o++) p.is_out[nxvk_graph_output_value(g, o)] = true;
    p.max_io = max_io(c);
  }
  for (int i = 0; i < p.nn && rc == NXVK_OK; i++) plan_node(&p, c, i, enabled);

  /* steps in dependency order: repeatedly the first step whose inputs are made */
  int nunits = 0;
  for (int i = 0; i < p.nn; i++) nunits += p.nmem[i] > 0;
  bool *done = calloc((size_t)nn1, sizeof *done);
  if (rc == NXVK_OK && (!done || !(plan->steps = calloc((size_t)(nunits ? nunits : 1), sizeof *plan->steps))))
    rc = nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  while (rc == NXVK_OK && plan->nsteps < nunits) {
    int before = plan->nsteps;
    for (int u = 0; u < p.nn && rc == NXVK_OK; u++) {
      if (p.nmem[u] == 0 || done[u]) continue;
      bool ready = true;
      for (int m = 0; m < p.nmem[u] && ready; m++) {
        int s = p.mem[u][m];
        for (int k = 0; k < p.narg[s] && ready; k++) {
          int v = p.arg[s][k];
          ready = v < p.ni || p.unit[v - p.ni] == u || done[p.unit[v - p.ni]];
        }
      }
      if (!ready) continue;
      done[u] = true;
      nxvk_plan_step *st = &plan->steps[plan->nsteps++];
      st->nnodes = p.nmem[u];
      st->nodes = malloc((size_t)st->nnodes * sizeof(int));
      if (!st->nodes) {
        rc = nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
        break;
      }
      memcpy(st->nodes, p.mem[u], (size_t)st->nnodes * sizeof(int));
      st->fused = st->nnodes > 1;
      st->source = NXVK_CODE_EMBEDDED;
      if (st->fused) {
        rc = fill_io(&p, u, st);
        plan->fused_kernels++;
        plan->fused_ops += st->nnodes;
        plan->in_registers += st->nnodes - st->noutputs;
      } else {
        st->alone = p.alone[u] ? p.alone[u] : "no elementwise neighbour of its shape to fuse with";
      }
    }
    if (plan->nsteps == before && rc == NXVK_OK)
      rc = nxvk_seterr(NXVK_E_BAD_REQUEST, "fusion: steps depend on each other (planner bug)");
  }
  free(done);
  planner_free(&p);
  if (rc) {
    nxvk_plan_free(plan);
    return rc;
  }
  plan->fusion = enabled;
  plan->plan_ms = (nxvk_now_ns() * 1e-6) - t0;
  *out = plan;
  return NXVK_OK;
}

/* ------------------------------------------------------------ kernels */

static int position(const int *list, int n, int v) {
  for (int k = 0; k < n; k++)
    if (list[k] == v) return k;
  return -1;
}

static int build_program(const nxvk_graph *g, const nxvk_meta *metas, const nxvk_plan_step *st,
                         nxvk_cg_program *p) {
  memset(p, 0, sizeof *p);
  int ni = nxvk_graph_input_count(g);
  if (st->ninputs > NXVK_CG_MAX_INPUTS || st->nnodes > NXVK_CG_MAX_NODES ||
      st->noutputs > NXVK_CG_MAX_OUTPUTS || st->noutputs < 1)
    return nxvk_seterr(NXVK_E_BAD_REQUEST, "fusion: group over the kernel limits");
  p->ninputs = st->ninputs;
  for (int k = 0; k < st->ninputs; k++) p->in_dtype[k] = metas[st->inputs[k]].dtype;
  p->nnodes = st->nnodes;
  for (int j = 0; j < st->nnodes; j++) {
    const nxvk_attrs *a;
    const int *args;
    int nargs;
    nxvk_cg_node *n = &p->node[j];
    n->op = nxvk_graph_value_op(g, ni + st->nodes[j], &a, &args, &nargs);
    n->dtype = metas[args[nargs - 1]].dtype; /* select: of a and b */
    for (int k = 0; k < nargs; k++) {
      int at = args[k] >= ni ? position(st->nodes, j, args[k] - ni) : -1;
      n->arg[k] = at >= 0 ? st->ninputs + at : position(st->inputs, st->ninputs, args[k]);
      if (n->arg[k] < 0) return nxvk_seterr(NXVK_E_BAD_REQUEST, "fusion: operand outside the group");
    }
  }
  p->noutputs = st->noutputs;
  for (int k = 0; k < st->noutputs; k++)
    p->output[k] = st->ninputs + position(st->nodes, st->nnodes, st->outputs[k] - ni);
  return NXVK_OK;
}

/* Program -> key within a context: a graph run again (a port client's)
 * finds its kernels without generating GLSL.  Programs hold op pointers of
 * this process and zeroed unused slots, so memcmp compares them. */
#define MEMO_MAX 1024
typedef struct memo {
  nxvk_cg_program prog;
  char key[65];
  struct memo *next;
} memo;

static void memo_free(void *head) {
  for (memo *m = head; m;) {
    memo *next = m->next;
    free(m);
    m = next;
  }
}

static bool memo_find(nxvk_ctx *c, const nxvk_cg_program *p, char *key) {
  bool found = false;
  pthread_mutex_lock(&c->fusion_lock);
  for (memo *m = c->fusion_memo; m && !found; m = m->next)
    if (memcmp(&m->prog, p, sizeof *p) == 0) {
      memcpy(key, m->key, sizeof m->key);
      found = true;
    }
  pthread_mutex_unlock(&c->fusion_lock);
  return found;
}

static void memo_add(nxvk_ctx *c, const nxvk_cg_program *p, const char *key) {
  memo *m = malloc(sizeof *m);
  if (!m) return; /* a memo: it only saves time */
  memcpy(&m->prog, p, sizeof *p); /* padding too: memcmp compares it */
  snprintf(m->key, sizeof m->key, "%s", key);
  pthread_mutex_lock(&c->fusion_lock);
  int n = 0;
  for (memo *x = c->fusion_memo; x; x = x->next) n++;
  if (n < MEMO_MAX) {
    m->next = c->fusion_memo;
    c->fusion_memo = m;
    c->fusion_memo_free = memo_free;
    m = NULL;
  }
  pthread_mutex_unlock(&c->fusion_lock);
  free(m);
}

int nxvk_fusion_glsl(const nxvk_graph *g, const nxvk_meta *metas, const nxvk_plan_step *st,
                     int f16_cvt, int fast16, char **glsl) {
  *glsl = NULL;
  nxvk_cg_program p;
  int rc = build_program(g, metas, st, &p);
  p.f16_cvt = f16_cvt;
  p.fast16 = fast16;
  char *body = NULL;
  if (rc == NXVK_OK) rc = nxvk_cg_glsl(&p, nxvk_glsl_lib, &body);
  if (rc) return rc;
  /* a comment may precede #version: the format is part of the key */
  static const char head[] = "// " FUSION_FORMAT " " NXVK_VERSION "\n";
  size_t n = strlen(body);
  *glsl = malloc(sizeof head + n);
  if (!*glsl) {
    free(body);
    return nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  }
  memcpy(*glsl, head, sizeof head - 1);
  memcpy(*glsl + sizeof head - 1, body, n + 1);
  free(body);
  return NXVK_OK;
}

/* The kernel of a step: built in this process, else SPIR-V from the disk
 * cache, else compiled (and written to the cache). */
static int step_kernel(nxvk_ctx *c, nxvk_plan_step *st, const char *glsl, const char *cache_dir,
                       const uint32_t *spec, nxvk_kernel **k) {
  int nbuf = st->ninputs + st->noutputs;
  int rc = nxvk_kernel_get_spirv(c, st->key, NULL, 0, spec, NXVK_EW_SPEC, nbuf, k);
  if (rc || *k) {
    st->source = NXVK_CODE_MEMORY;
    return rc;
  }
  uint32_t *words = NULL;
  size_t bytes = 0;
  double t = (nxvk_now_ns() * 1e-6);
  if (cache_dir) {
    char why[160];
    nxvk_cache_result res = nxvk_cache_spirv_load(cache_dir, st->key, &words, &bytes, why, sizeof why);
    if (res == NXVK_CACHE_HIT) st->source = NXVK_CODE_DISK;
    if (res == NXVK_CACHE_CORRUPT) {
      st->cache_corrupt = true;
      snprintf(st->note, sizeof st->note, "cache file %.16s...: %s", st->key, why);
    }
    st->cache_ms = (nxvk_now_ns() * 1e-6) - t;
  }
  bool retried = false;
compile:
  if (!words) {
    char label[64];
    snprintf(label, sizeof label, "fused kernel %.16s", st->key);
    t = (nxvk_now_ns() * 1e-6);
    rc = nxvk_glsl_compile(glsl, label, &words, &bytes);
    st->compile_ms = (nxvk_now_ns() * 1e-6) - t;
    if (rc) return rc;
    st->source = NXVK_CODE_COMPILED;
    if (cache_dir) {
      t = (nxvk_now_ns() * 1e-6);
      if (nxvk_cache_spirv_store(cache_dir, st->key, words, bytes) == NXVK_OK) {
        st->cache_written = true;
      } else { /* a cache that cannot be written costs time, not results */
        size_t at = strlen(st->note);
        snprintf(st->note + at, sizeof st->note - at, "%s%s", at ? "; " : "", nxvk_errmsg());
      }
      st->cache_ms += (nxvk_now_ns() * 1e-6) - t;
    }
  }
  t = (nxvk_now_ns() * 1e-6);
  rc = nxvk_kernel_get_spirv(c, st->key, words, bytes, spec, NXVK_EW_SPEC, nbuf, k);
  st->pipeline_ms = (nxvk_now_ns() * 1e-6) - t;
  free(words);
  if (rc && st->source == NXVK_CODE_DISK && !retried && !nxvk_ctx_lost(c)) {
    /* the cached module does not build: discard it and compile the GLSL */
    char why[200];
    snprintf(why, sizeof why, "%s", nxvk_errmsg());
    nxvk_cache_spirv_discard(cache_dir, st->key);
    st->cache_corrupt = true;
    snprintf(st->note, sizeof st->note, "cache file %.16s...: no pipeline from it (%.120s): discarded, recompiled",
             st->key, why);
    words = NULL;
    retried = true;
    goto compile;
  }
  return rc;
}

int nxvk_fusion_record(nxvk_rec *r, const nxvk_graph *g, const nxvk_meta *metas,
                       nxvk_plan_step *st, nxvk_tensor **values, const char *cache_dir) {
  nxvk_ctx *c = nxvk_rec_ctx(r);
  int ni = nxvk_graph_input_count(g);
  if (st->noutputs == 0) { /* nothing reads any of its values: nothing to run */
    snprintf(st->note, sizeof st->note, "nothing reads its results: not run");
    return NXVK_OK;
  }
  double t = (nxvk_now_ns() * 1e-6);
  nxvk_cg_program prog;
  int rc = build_program(g, metas, st, &prog);
  if (rc) return rc;
  prog.f16_cvt = c->tuning ? c->tuning->f16_cvt : 0;
  prog.fast16 = c->tuning ? c->tuning->ew16 : 0;
  nxvk_kernel *k = NULL;
  int64_t count;
  rc = nxvk_shape_count(&metas[st->outputs[0]].shape, &count);
  if (rc) return rc;
  uint32_t spec[NXVK_EW_SPEC];
  uint32_t groups =
      nxvk_ew_launch(c, nxvk_cg_paired(&prog) ? ((uint64_t)count + 1) / 2 : (uint64_t)count, nxvk_cg_paired(&prog), spec);
  if (memo_find(c, &prog, st->key)) /* built in this process: no GLSL needed */
    rc = nxvk_kernel_get_spirv(c, st->key, NULL, 0, spec, NXVK_EW_SPEC, st->ninputs + st->noutputs, &k);
  if (rc) return rc;
  if (k) {
    st->source = NXVK_CODE_MEMORY;
    st->glsl_ms = (nxvk_now_ns() * 1e-6) - t;
  } else {
    char *glsl;
    rc = nxvk_fusion_glsl(g, metas, st, prog.f16_cvt, prog.fast16, &glsl);
    if (rc) return rc;
    uint8_t digest[NXVK_SHA256_BYTES];
    nxvk_sha256(glsl, strlen(glsl), digest);
    nxvk_sha256_hex(digest, st->key);
    st->glsl_ms = (nxvk_now_ns() * 1e-6) - t;
    rc = step_kernel(c, st, glsl, cache_dir, spec, &k);
    free(glsl);
    if (rc) return rc;
    memo_add(c, &prog, st->key);
  }

  const nxvk_shape *domain = &metas[ni + st->nodes[st->nnodes - 1]].shape;
  for (int o = 0; o < st->noutputs && rc == NXVK_OK; o++) {
    int v = st->outputs[o];
    rc = nxvk_tensor_new(c, metas[v].dtype, &metas[v].shape, &values[v]);
  }
  if (rc) return rc;
  uint32_t meta[NXVK_EW_META_WORDS(NXVK_CG_MAX_INPUTS)] = {0};
  meta[0] = (uint32_t)count;
  meta[1] = (uint32_t)domain->rank;
  for (int d = 0; d < domain->rank; d++) meta[3 + d] = (uint32_t)domain->dim[d];
  nxvk_binding b[NXVK_MAX_BINDINGS];
  for (int i = 0; i < st->ninputs; i++) {
    const nxvk_tensor *in = values[st->inputs[i]];
    if (!in) return nxvk_seterr(NXVK_E_BAD_REQUEST, "fusion: an input of the kernel was not stored");
    if (nxvk_shape_equal(&in->shape, domain)) meta[2] |= 1u << i;
    int64_t strides[NXVK_MAX_RANK];
    nxvk_broadcast_strides(&in->shape, domain, strides);
    for (int d = 0; d < domain->rank; d++) meta[11 + 8 * i + d] = (uint32_t)strides[d];
    b[i] = (nxvk_binding){in->buf, 0, 0};
  }
  for (int o = 0; o < st->noutputs; o++) b[st->ninputs + o] = (nxvk_binding){values[st->outputs[o]]->buf, 0, 0};
  uint32_t off = 0;
  rc = nxvk_rec_meta(r, meta, NXVK_EW_META_WORDS(st->ninputs), &off);
  if (rc == NXVK_OK)
    rc = nxvk_rec_dispatch(r, k, b, st->ninputs + st->noutputs, off, groups, 1, 1);
  /* test-only faults (NXVK_TEST_INJECT=break_op:NAME): a kernel holding op
   * NAME gets one wrong element in each output, as the op alone would;
   * fail_op:NAME: its recording fails */
  bool broken = false;
  for (int j = 0; j < st->nnodes && (c->inject_break_op[0] || c->inject_fail_op[0]); j++) {
    const nxvk_attrs *a;
    const int *args;
    int nargs;
    const nxvk_op_desc *op = nxvk_graph_value_op(g, ni + st->nodes[j], &a, &args, &nargs);
    broken |= strcmp(c->inject_break_op, op->name) == 0;
    if (rc == NXVK_OK && strcmp(c->inject_fail_op, op->name) == 0)
      rc = nxvk_seterr(NXVK_E_VULKAN, "%s: failed on the device (NXVK_TEST_INJECT=fail_op)", op->name);
  }
  for (int o = 0; o < st->noutputs && broken && rc == NXVK_OK && count > 1; o++) {
    nxvk_tensor *t2 = values[st->outputs[o]];
    int64_t one[1] = {1};
    nxvk_shape single = {1, {1}};
    rc = nxvk_strided_copy(r, t2->buf, t2->dtype, count - 1, one, t2->buf, t2->dtype, 0, one, &single);
  }
  return rc;
}
