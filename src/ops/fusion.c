/*
 * fusion.c - elementwise fusion: the planner that groups a graph's
 * elementwise ops into kernels, the recording of a fused kernel (GLSL from
 * codegen.c, SPIR-V from this process, the on-disk cache or glslang), and
 * the check of fused results against the reference with composed limits.
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

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/sha256.h"
#include "codegen.h"

/* Bumped when the generated code or its compilation changes meaning: it is
 * part of the GLSL text, so of every cache key. */
#define FUSION_FORMAT "nxvk-fusion-1"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

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
  double t0 = now_ms();
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
  plan->plan_ms = now_ms() - t0;
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
                     char **glsl) {
  *glsl = NULL;
  nxvk_cg_program p;
  int rc = build_program(g, metas, st, &p);
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
  double t = now_ms();
  if (cache_dir) {
    char why[160];
    nxvk_cache_result res = nxvk_cache_spirv_load(cache_dir, st->key, &words, &bytes, why, sizeof why);
    if (res == NXVK_CACHE_HIT) st->source = NXVK_CODE_DISK;
    if (res == NXVK_CACHE_CORRUPT) {
      st->cache_corrupt = true;
      snprintf(st->note, sizeof st->note, "cache file %.16s...: %s", st->key, why);
    }
    st->cache_ms = now_ms() - t;
  }
  bool retried = false;
compile:
  if (!words) {
    char label[64];
    snprintf(label, sizeof label, "fused kernel %.16s", st->key);
    t = now_ms();
    rc = nxvk_glsl_compile(glsl, label, &words, &bytes);
    st->compile_ms = now_ms() - t;
    if (rc) return rc;
    st->source = NXVK_CODE_COMPILED;
    if (cache_dir) {
      t = now_ms();
      if (nxvk_cache_spirv_store(cache_dir, st->key, words, bytes) == NXVK_OK) {
        st->cache_written = true;
      } else { /* a cache that cannot be written costs time, not results */
        size_t at = strlen(st->note);
        snprintf(st->note + at, sizeof st->note - at, "%s%s", at ? "; " : "", nxvk_errmsg());
      }
      st->cache_ms += now_ms() - t;
    }
  }
  t = now_ms();
  rc = nxvk_kernel_get_spirv(c, st->key, words, bytes, spec, NXVK_EW_SPEC, nbuf, k);
  st->pipeline_ms = now_ms() - t;
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
  double t = now_ms();
  nxvk_cg_program prog;
  int rc = build_program(g, metas, st, &prog);
  if (rc) return rc;
  nxvk_kernel *k = NULL;
  int64_t count;
  rc = nxvk_shape_count(&metas[st->outputs[0]].shape, &count);
  if (rc) return rc;
  uint32_t spec[NXVK_EW_SPEC];
  uint32_t groups = nxvk_ew_launch(c, (uint64_t)count, spec);
  if (memo_find(c, &prog, st->key)) /* built in this process: no GLSL needed */
    rc = nxvk_kernel_get_spirv(c, st->key, NULL, 0, spec, NXVK_EW_SPEC, st->ninputs + st->noutputs, &k);
  if (rc) return rc;
  if (k) {
    st->source = NXVK_CODE_MEMORY;
    st->glsl_ms = now_ms() - t;
  } else {
    char *glsl;
    rc = nxvk_fusion_glsl(g, metas, st, &glsl);
    if (rc) return rc;
    uint8_t digest[NXVK_SHA256_BYTES];
    nxvk_sha256(glsl, strlen(glsl), digest);
    nxvk_sha256_hex(digest, st->key);
    st->glsl_ms = now_ms() - t;
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
  /* test-only fault (NXVK_TEST_INJECT=break_op:NAME): a kernel holding op
   * NAME gets one wrong element in each output, as the op alone would */
  bool broken = false;
  for (int j = 0; j < st->nnodes && c->inject_break_op[0]; j++) {
    const nxvk_attrs *a;
    const int *args;
    int nargs;
    const nxvk_op_desc *op = nxvk_graph_value_op(g, ni + st->nodes[j], &a, &args, &nargs);
    broken |= strcmp(c->inject_break_op, op->name) == 0;
  }
  for (int o = 0; o < st->noutputs && broken && rc == NXVK_OK && count > 1; o++) {
    nxvk_tensor *t2 = values[st->outputs[o]];
    int64_t one[1] = {1};
    nxvk_shape single = {1, {1}};
    rc = nxvk_strided_copy(r, t2->buf, t2->dtype, count - 1, one, t2->buf, t2->dtype, 0, one, &single);
  }
  return rc;
}

/* ------------------------------------------------------------ checking */

/* A value known up to an interval per element: lo..hi in the total order
 * where -0 < +0, each end a number of the value's dtype; flags say whether
 * the GPU may hold a number, a NaN, or anything (past a value that might be
 * either, nothing is promised). */
enum { IV_NUM = 1, IV_NAN = 2, IV_ANY = 4, IV_UNBOUNDED = 8 /* with ANY: the spec bounds nothing */ };

typedef struct {
  nxvk_dtype dtype;
  nxvk_shape shape;
  int64_t n;
  double *lo, *hi;
  uint8_t *flags;
  bool point;              /* lo == hi and one class everywhere: one sample is enough */
} interval;

static void iv_free(interval *iv) {
  if (!iv) return;
  free(iv->lo);
  free(iv->hi);
  free(iv->flags);
  free(iv);
}

static interval *iv_new(nxvk_dtype d, const nxvk_shape *s) {
  interval *iv = calloc(1, sizeof *iv);
  if (!iv) return NULL;
  iv->dtype = d;
  iv->shape = *s;
  if (nxvk_shape_count(s, &iv->n)) iv->n = 0;
  size_t n = (size_t)(iv->n ? iv->n : 1);
  iv->lo = malloc(n * sizeof(double));
  iv->hi = malloc(n * sizeof(double));
  iv->flags = calloc(n, 1);
  if (!iv->lo || !iv->hi || !iv->flags) {
    iv_free(iv);
    return NULL;
  }
  for (size_t e = 0; e < n; e++) iv->lo[e] = iv->hi[e] = NAN; /* a NaN-only element samples NaN */
  return iv;
}

/* a <= b with -0 < +0 */
static bool tle(double a, double b) {
  if (a != b) return a < b;
  return !(a == 0 && signbit(b) && !signbit(a));
}

static bool is_float(nxvk_dtype d) { return d == NXVK_F32 || d == NXVK_F64; }

/* Round outward to dtype d: lo down, hi up (f32; the others are exact). */
static double round_down(nxvk_dtype d, double x) {
  if (d != NXVK_F32 || isnan(x)) return x;
  float f = (float)x;
  if ((double)f > x) f = nextafterf(f, -INFINITY);
  return f;
}
static double round_up(nxvk_dtype d, double x) {
  if (d != NXVK_F32 || isnan(x)) return x;
  float f = (float)x;
  if ((double)f < x) f = nextafterf(f, INFINITY);
  return f;
}

static double ulp_at(nxvk_dtype d, double x) {
  int e;
  x = fabs(x);
  if (!isfinite(x)) x = d == NXVK_F32 ? FLT_MAX : DBL_MAX;
  if (d == NXVK_F32) {
    if (x < FLT_MIN) return ldexp(1.0, -149);
    frexp(x, &e);
    return ldexp(1.0, e - 24);
  }
  if (x < DBL_MIN) return ldexp(1.0, -1074);
  frexp(x, &e);
  return ldexp(1.0, e - 53);
}

/* Where the device may flush denormals, a value near zero may be zero. */
static void iv_flush(interval *iv, unsigned flush) {
  if (!is_float(iv->dtype) || !(flush & NXVK_DT(iv->dtype))) return;
  double min = iv->dtype == NXVK_F32 ? FLT_MIN : DBL_MIN;
  for (int64_t e = 0; e < iv->n; e++) {
    if (!(iv->flags[e] & IV_NUM) || !(iv->lo[e] < min && iv->hi[e] > -min)) continue;
    if (iv->lo[e] == 0 && iv->hi[e] == 0) continue; /* a zero stays itself */
    if (tle(-0.0, iv->lo[e])) iv->lo[e] = -0.0;
    if (tle(iv->hi[e], 0.0)) iv->hi[e] = 0.0;
    iv->point = false;
  }
}

static void iv_update_point(interval *iv) {
  iv->point = true;
  for (int64_t e = 0; e < iv->n && iv->point; e++) {
    uint8_t f = iv->flags[e];
    iv->point = (f == IV_NUM && iv->lo[e] == iv->hi[e] && signbit(iv->lo[e]) == signbit(iv->hi[e])) ||
                f == IV_NAN;
  }
}

static interval *iv_from_host(const nxvk_host *h, unsigned flush) {
  interval *iv = iv_new(h->dtype, &h->shape);
  if (!iv) return NULL;
  for (int64_t e = 0; e < iv->n; e++) {
    double x = nxvk_host_get(h, e);
    iv->lo[e] = iv->hi[e] = x;
    iv->flags[e] = isnan(x) ? IV_NAN : IV_NUM;
  }
  iv->point = true;
  iv_flush(iv, flush);
  return iv;
}

/* Offsets into operand shape s of each element of out (row-major), walked
 * with an odometer. */
typedef struct {
  int rank;
  int64_t idx[NXVK_MAX_RANK], st[NXVK_MAX_RANK], dim[NXVK_MAX_RANK], off;
} walker;
static void walk_init(walker *w, const nxvk_shape *s, const nxvk_shape *out) {
  memset(w, 0, sizeof *w);
  w->rank = out->rank;
  nxvk_broadcast_strides(s, out, w->st);
  for (int d = 0; d < out->rank; d++) w->dim[d] = out->dim[d];
}
static void walk_next(walker *w) {
  for (int d = w->rank - 1; d >= 0; d--) {
    w->off += w->st[d];
    if (++w->idx[d] < w->dim[d]) return;
    w->off -= w->st[d] * w->idx[d];
    w->idx[d] = 0;
  }
}

/* How far the op's own result may be from its reference at one element:
 * the rules of nxvk_compare (limits.c) applied over the operands' ranges.
 * *unbounded: the spec bounds only |result| <= 1 there. */
static double op_slack(const nxvk_limit *lim, nxvk_dtype d, double xlo, double xhi, double ylo,
                       double yhi, double lo, double hi, bool *unbounded) {
  *unbounded = false;
  if (lim->exact) return 0;
  if (lim->y_abs_hi > 0) { /* bounded only for |y| in [y_abs_lo, y_abs_hi] (divide) */
    double ymin = ylo <= 0 && yhi >= 0 ? 0 : fmin(fabs(ylo), fabs(yhi));
    double ymax = fmax(fabs(ylo), fabs(yhi));
    if (isnan(ylo) || isnan(yhi) || !(ymin >= lim->y_abs_lo && ymax <= lim->y_abs_hi)) return INFINITY;
  }
  if (lim->abs > 0 && !isfinite(lim->lo)) return lim->abs;
  double w = 0;
  bool inside = !(xhi < lim->lo || xlo > lim->hi) && !isnan(xlo);
  bool outside = isnan(xlo) || xlo < lim->lo || xhi > lim->hi;
  if (lim->abs > 0 && inside) w = lim->abs;
  if (lim->abs == 0 || outside) {
    if (lim->outside_unbounded) {
      *unbounded = true;
    } else {
      double arg;
      if (lim->arg_pow) {
        double lx = fmax(fabs(log2(fabs(xlo))), fabs(log2(fabs(xhi))));
        arg = fmax(fabs(ylo), fabs(yhi)) * lx;
      } else {
        arg = fmax(fabs(xlo), fabs(xhi));
      }
      if (!isfinite(arg)) arg = 0; /* as nxvk_compare: the special cases are exact */
      double ulps = lim->ulps + lim->ulps_per_arg * arg + lim->ulps_per_y * fmax(fabs(ylo), fabs(yhi));
      w = fmax(w, ulps * ulp_at(d, fmax(fabs(lo), fabs(hi))));
    }
  }
  return w;
}

/* Samples of one operand element, in increasing order.  A point: itself.
 * An interval holding at most NS_NARROW values of its dtype: every one of
 * them, so the op's image is exact whatever the op does.  Else evenly
 * spread samples with irregular jitter (NS_NARROW of them, or NS_DENSE for
 * a wide interval, an error an op amplified or a bound such as sin's outside
 * [-pi, pi]), plus the values where ops jump or spike: -0 and +0 when zero
 * is inside, the operand's reference value, and the other operands' values
 * (equal and not_equal turn only there).  Between samples the op is taken
 * to be monotone, and monotone() rejects elements where it visibly is not. */
#define NS_NARROW 10
#define NS_DENSE 52
#define NS_SHARED 8                 /* each of several uncertain operands */
#define NS_EXTRA 4                  /* -0, +0 and two others (reference, other operand) */

static bool wide(const interval *iv, int64_t e) {
  double lo = iv->lo[e], hi = iv->hi[e];
  return iv->flags[e] == IV_NUM && is_float(iv->dtype) &&
         !(hi - lo <= ldexp(fmax(fabs(lo), fabs(hi)), -12));
}

/* The next value of dtype d after x (with -0 then +0). */
static double next_value(nxvk_dtype d, double x) {
  if (x == 0 && signbit(x)) return 0.0;
  if (d == NXVK_F32) return nextafterf((float)x, INFINITY);
  if (d == NXVK_F64) return nextafter(x, INFINITY);
  return x + 1;
}

static void sort_doubles(double *x, int n) {
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && tle(x[j], x[j - 1]) && !(x[j] == x[j - 1] && signbit(x[j]) == signbit(x[j - 1])); j--) {
      double t = x[j];
      x[j] = x[j - 1];
      x[j - 1] = t;
    }
}

/* Fills x[ns] in increasing order; returns true when the samples are
 * every value of the interval (the op's image is then exact). */
static bool samples_of(const interval *iv, int64_t e, int ns, const double *extra, int nextra,
                       double *x, bool *zero) {
  double lo = iv->lo[e], hi = iv->hi[e];
  for (int s = 0; s < ns; s++) {
    x[s] = hi;
    zero[s] = false;
  }
  if (ns == 1 || iv->flags[e] != IV_NUM) { /* a point, NaN, or anything: its ends stand for it */
    for (int s = 0; s < ns / 2; s++) x[s] = lo;
    return true;
  }
  /* every value, when there are few */
  int n = 0;
  for (double v = lo; n < ns && tle(v, hi); v = next_value(iv->dtype, v)) x[n++] = v;
  if (n < ns || (x[ns - 1] == hi && signbit(x[ns - 1]) == signbit(hi))) {
    for (int s = 0; s < ns; s++) zero[s] = x[s] == 0;
    return true;
  }
  int base = ns >= NS_EXTRA + 4 ? ns - NS_EXTRA : ns; /* few samples: no room for extras */
  double big = iv->dtype == NXVK_F32 ? FLT_MAX : iv->dtype == NXVK_F64 ? DBL_MAX : INT32_MAX;
  double a = fmax(lo, -big), b = fmin(hi, big); /* finite ends */
  x[0] = lo;
  x[base - 1] = hi;
  for (int s = 1; s < base - 1; s++) {
    /* irregular steps: no sample sits on a round fraction of the interval */
    double t = ((double)s - 0.5 + 0.45 * sin((double)s * 2.399963)) / (double)(base - 1);
    x[s] = a * (1 - t) + b * t;
    if (!is_float(iv->dtype)) x[s] = nearbyint(x[s]);
  }
  int at = base;
  if (lo < 0 && hi > 0 && at + 2 <= ns) {
    x[at++] = -0.0;
    x[at++] = 0.0;
  }
  for (int k = 0; k < nextra && at < ns; k++)
    if (!isnan(extra[k]) && tle(lo, extra[k]) && tle(extra[k], hi)) x[at++] = extra[k];
  while (at < ns) x[at++] = hi;
  if (iv->dtype == NXVK_F32)
    for (int s = 0; s < ns; s++) x[s] = (float)x[s];
  sort_doubles(x, ns);
  for (int s = 0; s < ns; s++) zero[s] = x[s] == 0;
  return false;
}

/* Along one operand's samples (others fixed), is the op monotone, except
 * for turns at zero?  A turn elsewhere means an extreme or a jump between
 * samples (fmod, a branch cut), which the samples do not bound. */
static bool monotone(const double *r, const bool *zero, int n, size_t stride) {
  int prev = 0;
  bool zero_run = zero[0];
  for (int j = 1; j < n; j++) {
    double a = r[(size_t)(j - 1) * stride], b = r[(size_t)j * stride];
    if (isnan(a) || isnan(b)) { /* a number/NaN border: the flags carry it */
      prev = 0;
      zero_run = zero[j];
      continue;
    }
    int d = a == b ? 0 : b > a ? 1 : -1;
    if (d == 0) {
      zero_run |= zero[j];
      continue;
    }
    if (prev != 0 && d != prev && !zero_run) return false;
    prev = d;
    zero_run = zero[j];
  }
  return true;
}

#define EVAL_BUDGET ((size_t)1 << 20)   /* results held at once (doubles) */

/* The interval of one node's result from its operands' intervals: the op's
 * reference at every combination of its operands' samples, element by
 * element in chunks, then widened by the op's own limit.  pts: the
 * operands' reference values. */
static int iv_node(const nxvk_op_desc *op, const nxvk_attrs *attrs, interval *const *in,
                   const nxvk_host *pts, int nin, const nxvk_meta *om, unsigned flush,
                   interval **out) {
  *out = NULL;
  int nonpoint = 0;
  for (int k = 0; k < nin; k++) nonpoint += !in[k]->point;
  interval *iv = iv_new(om->dtype, &om->shape);
  nxvk_limit lim = {.exact = true};
  int rc = iv ? NXVK_OK : nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  if (rc == NXVK_OK && is_float(om->dtype)) rc = nxvk_op_limit(op, in[nin - 1]->dtype, &lim);
  /* samples per operand: 1 for points; a wide interval is sampled densely
   * when it is the only uncertain operand, and makes the result unchecked
   * (anything) when there are others */
  int ns[3] = {1, 1, 1}, most[3] = {1, 1, 1};
  size_t combos = 1, max_combos = 1;
  for (int k = 0; k < nin; k++) {
    most[k] = in[k]->point ? 1 : !is_float(in[k]->dtype) ? 4 : nonpoint > 1 ? NS_SHARED : NS_DENSE;
    max_combos *= (size_t)most[k];
  }
  size_t chunk = EVAL_BUDGET / max_combos;
  if (chunk < 1) chunk = 1;
  if (chunk > 8192) chunk = 8192;
  nxvk_host smp[3][NS_DENSE];
  memset(smp, 0, sizeof smp);
  double *res = rc ? NULL : malloc(max_combos * chunk * sizeof(double));
  bool *zero = rc ? NULL : malloc((size_t)3 * chunk * NS_DENSE * sizeof(bool));
  bool *all = rc ? NULL : malloc((size_t)3 * chunk * sizeof(bool)); /* exhaustive samples */
  uint8_t *any = rc ? NULL : malloc(chunk);
  int64_t *off = rc ? NULL : malloc((size_t)3 * chunk * sizeof(int64_t));
  if (rc == NXVK_OK && (!res || !zero || !all || !any || !off))
    rc = nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  walker w[3];
  for (int k = 0; k < nin; k++) walk_init(&w[k], &in[k]->shape, &om->shape);
  nxvk_shape line = {1, {(int64_t)chunk}};
  for (int k = 0; k < nin && rc == NXVK_OK; k++)
    for (int s = 0; s < most[k] && rc == NXVK_OK; s++) rc = nxvk_host_alloc(&smp[k][s], in[k]->dtype, &line);
  int *order = rc ? NULL : malloc(chunk * sizeof(int));
  if (rc == NXVK_OK && !order) rc = nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  for (int64_t e0 = 0; rc == NXVK_OK && e0 < iv->n; e0 += (int64_t)chunk) {
    int m = (int)(iv->n - e0 < (int64_t)chunk ? iv->n - e0 : (int64_t)chunk);
    /* the window's operand offsets; its elements in two passes: those with
     * narrow intervals, then those that need dense samples */
    int nnarrow = 0, nall = 0;
    for (int e = 0; e < m; e++) {
      bool dense = false;
      for (int k = 0; k < nin; k++) {
        off[(size_t)k * chunk + e] = w[k].off;
        dense |= most[k] == NS_DENSE && wide(in[k], w[k].off);
        walk_next(&w[k]);
      }
      if (!dense) order[nnarrow++] = e;
    }
    nall = nnarrow;
    for (int e = 0, at = 0; e < m; e++) { /* the dense ones after the narrow ones */
      while (at < nnarrow && order[at] < e) at++;
      if (at < nnarrow && order[at] == e) continue;
      order[nall++] = e;
    }
    for (int pass = 0; pass < 2 && rc == NXVK_OK; pass++) {
      int first = pass ? nnarrow : 0, mm = pass ? nall - nnarrow : nnarrow;
      if (mm == 0) continue;
      combos = 1;
      for (int k = 0; k < nin; k++) {
        ns[k] = most[k] == NS_DENSE && !pass ? NS_NARROW : most[k];
        combos *= (size_t)ns[k];
      }
      for (int j = 0; j < mm; j++) {
        int e = order[first + j];
        any[j] = 0;
        for (int k = 0; k < nin; k++) {
          int64_t o = off[(size_t)k * chunk + e];
          uint8_t f = in[k]->flags[o];
          any[j] |= (f & IV_ANY) || f == (IV_NUM | IV_NAN);
          any[j] |= f & IV_UNBOUNDED;
          double extra[3], x[NS_DENSE];
          int nextra = 0;
          if (!in[k]->point) {
            extra[nextra++] = nxvk_host_get(&pts[k], o);
            for (int i2 = 0; i2 < nin; i2++) {
              int64_t oj = off[(size_t)i2 * chunk + e];
              if (i2 != k && in[i2]->dtype == in[k]->dtype && in[i2]->lo[oj] == in[i2]->hi[oj] && nextra < 3)
                extra[nextra++] = in[i2]->lo[oj];
            }
          }
          bool every = samples_of(in[k], o, ns[k], extra, nextra, x, &zero[((size_t)k * chunk + j) * NS_DENSE]);
          all[(size_t)k * chunk + j] = every;
          /* a wide interval among several uncertain operands: no sampling bounds it */
          any[j] |= !every && nonpoint > 1 && wide(in[k], o);
          for (int sm = 0; sm < ns[k]; sm++) nxvk_host_set(&smp[k][sm], j, x[sm]);
        }
      }
      for (size_t cb = 0; cb < combos && rc == NXVK_OK; cb++) {
        nxvk_host args[3], r;
        size_t rest = cb;
        for (int k = 0; k < nin; k++) {
          args[k] = smp[k][rest % (size_t)ns[k]];
          args[k].shape.dim[0] = mm;
          rest /= (size_t)ns[k];
        }
        rc = nxvk_op_ref(op, attrs, args, nin, &r);
        for (int j = 0; rc == NXVK_OK && j < mm; j++) res[cb * chunk + (size_t)j] = nxvk_host_get(&r, j);
        nxvk_host_free(&r);
      }
      for (int j = 0; j < mm && rc == NXVK_OK; j++) {
        int e = order[first + j];
        uint8_t f = 0;
        double lo = NAN, hi = NAN;
        for (size_t cb = 0; cb < combos; cb++) {
          double x = res[cb * chunk + (size_t)j];
          if (isnan(x)) {
            f |= IV_NAN;
          } else if (!(f & IV_NUM)) {
            f |= IV_NUM;
            lo = hi = x;
          } else {
            if (tle(x, lo)) lo = x;
            if (tle(hi, x)) hi = x;
          }
        }
        /* monotone along each sampled (not enumerated) operand, the others
         * held at each of their samples */
        size_t stride = 1;
        for (int k = 0; k < nin && !any[j]; stride *= (size_t)ns[k], k++) {
          if (ns[k] < 3 || all[(size_t)k * chunk + j]) continue;
          for (size_t cb = 0; cb < combos && !any[j]; cb++)
            if ((cb / stride) % (size_t)ns[k] == 0) /* each line once, from its first sample */
              any[j] = !monotone(&res[cb * chunk + (size_t)j], &zero[((size_t)k * chunk + j) * NS_DENSE],
                                 ns[k], stride * chunk);
        }
        if (any[j]) f = IV_ANY | (any[j] & IV_UNBOUNDED);
        if (!lim.exact && (f & IV_NUM)) {
          const interval *x0 = in[0], *x1 = nin > 1 ? in[1] : NULL;
          int64_t o0 = off[e], o1 = nin > 1 ? off[chunk + (size_t)e] : 0;
          bool unbounded;
          double slack = op_slack(&lim, om->dtype, x0->lo[o0], x0->hi[o0], x1 ? x1->lo[o1] : 0,
                                  x1 ? x1->hi[o1] : 0, lo, hi, &unbounded);
          if (isfinite(slack)) {
            lo = round_down(om->dtype, lo - slack);
            hi = round_up(om->dtype, hi + slack);
          } else { /* the spec bounds nothing here: any value, counted apart */
            f = IV_ANY | IV_UNBOUNDED;
          }
          if (unbounded) {
            lo = fmin(lo, -1.0);
            hi = fmax(hi, 1.0);
          }
        }
        iv->flags[e0 + e] = f;
        iv->lo[e0 + e] = lo;
        iv->hi[e0 + e] = hi;
      }
    }
  }
  free(order);
  for (int k = 0; k < 3; k++)
    for (int s = 0; s < NS_DENSE; s++) nxvk_host_free(&smp[k][s]);
  free(res);
  free(zero);
  free(all);
  free(any);
  free(off);
  if (rc) {
    iv_free(iv);
    return rc;
  }
  iv_update_point(iv);
  iv_flush(iv, flush);
  *out = iv;
  return NXVK_OK;
}

static void limits_text(const nxvk_graph *g, const int *nodes, int nnodes, const nxvk_meta *metas,
                        char *buf, size_t len) {
  if (!buf || !len) return;
  int ni = nxvk_graph_input_count(g);
  size_t at = (size_t)snprintf(buf, len, "composed over %d op%s:", nnodes, nnodes == 1 ? "" : "s");
  for (int j = 0; j < nnodes && at < len; j++) {
    const nxvk_attrs *a;
    const int *args;
    int nargs;
    const nxvk_op_desc *op = nxvk_graph_value_op(g, ni + nodes[j], &a, &args, &nargs);
    nxvk_limit lim;
    const char *t = nxvk_op_limit(op, metas[args[nargs - 1]].dtype, &lim) == NXVK_OK ? lim.text : "?";
    at += (size_t)snprintf(buf + at, len - at, "%s %s %s", j ? "," : "", op->name, t);
  }
}

int nxvk_compare_nodes(const nxvk_graph *g, const int *nodes, int nnodes, const nxvk_host *values,
                       int v, const nxvk_host *got, unsigned flush, nxvk_cmp *out,
                       char *limit_text, size_t len) {
  memset(out, 0, sizeof *out);
  out->worst = -1;
  int ni = nxvk_graph_input_count(g), nv = ni + nxvk_graph_node_count(g);
  int last = -1;
  for (int j = 0; j < nnodes; j++)
    if (ni + nodes[j] == v) last = j;
  if (last < 0) return nxvk_seterr(NXVK_E_BAD_REQUEST, "compare: value %d is not one of the nodes", v);
  interval **iv = calloc((size_t)nv, sizeof *iv);
  nxvk_host *ref = calloc((size_t)nv, sizeof *ref);
  nxvk_meta *metas = calloc((size_t)nv, sizeof *metas);
  bool *inside = calloc((size_t)nv, sizeof *inside);
  bool *needed = calloc((size_t)nv, sizeof *needed);
  int rc = iv && ref && metas && inside && needed ? NXVK_OK : nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  for (int j = 0; j < nnodes && rc == NXVK_OK; j++) inside[ni + nodes[j]] = true;
  /* only the nodes v depends on */
  if (rc == NXVK_OK) needed[v] = true;
  for (int j = last; j >= 0 && rc == NXVK_OK; j--) {
    const nxvk_attrs *a;
    const int *args;
    int nargs;
    if (!needed[ni + nodes[j]]) continue;
    nxvk_graph_value_op(g, ni + nodes[j], &a, &args, &nargs);
    for (int k = 0; k < nargs; k++) needed[args[k]] = true;
  }
  int used[NXVK_CG_MAX_NODES], nused = 0;
  int *usedp = nnodes <= NXVK_CG_MAX_NODES ? used : malloc((size_t)nnodes * sizeof *usedp);
  if (!usedp && rc == NXVK_OK) rc = nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  for (int j = 0; j <= last && rc == NXVK_OK; j++)
    if (needed[ni + nodes[j]]) usedp[nused++] = nodes[j];
  /* operands from outside: points (the GPU's own values) */
  for (int j = 0; j < nused && rc == NXVK_OK; j++) {
    const nxvk_attrs *a;
    const int *args;
    int nargs;
    nxvk_graph_value_op(g, ni + usedp[j], &a, &args, &nargs);
    for (int k = 0; k < nargs && rc == NXVK_OK; k++) {
      int x = args[k];
      if (inside[x] || iv[x]) continue;
      const nxvk_host *h = &values[x];
      int64_t n;
      if (nxvk_shape_count(&h->shape, &n) || (n > 0 && !h->data)) {
        rc = nxvk_seterr(NXVK_E_BAD_REQUEST, "compare: operand value %d is missing", x);
        break;
      }
      metas[x] = (nxvk_meta){h->dtype, h->shape};
      ref[x] = *h; /* borrowed: not freed below */
      iv[x] = iv_from_host(h, flush);
      if (!iv[x]) rc = nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
    }
  }
  for (int j = 0; j < nused && rc == NXVK_OK; j++) {
    int x = ni + usedp[j];
    const nxvk_attrs *a;
    const int *args;
    int nargs;
    const nxvk_op_desc *op = nxvk_graph_value_op(g, x, &a, &args, &nargs);
    interval *ins[3];
    nxvk_host pts[3];
    if (nargs < 1 || nargs > 3 || op->kind > NXVK_KIND_SELECT) {
      rc = nxvk_seterr(NXVK_E_BAD_REQUEST, "compare: %s is not elementwise", op->name);
      break;
    }
    for (int k = 0; k < nargs; k++) {
      ins[k] = iv[args[k]];
      pts[k] = ref[args[k]];
    }
    rc = nxvk_op_ref(op, a, pts, nargs, &ref[x]);
    if (rc == NXVK_OK) metas[x] = (nxvk_meta){ref[x].dtype, ref[x].shape};
    if (rc == NXVK_OK) rc = iv_node(op, a, ins, pts, nargs, &metas[x], flush, &iv[x]);
  }
  if (rc == NXVK_OK && (got->dtype != metas[v].dtype || !nxvk_shape_equal(&got->shape, &metas[v].shape)))
    rc = nxvk_seterr(NXVK_E_MISMATCH, "compare: result dtype or shape differs from the reference");
  if (rc == NXVK_OK) {
    const interval *r = iv[v];
    nxvk_dtype d = r->dtype;
    double worst_u = -1;
    out->n = r->n;
    for (int64_t e = 0; e < r->n; e++) {
      double gv = nxvk_host_get(got, e), rv = nxvk_host_get(&ref[v], e);
      uint8_t f = r->flags[e];
      /* counted, not hidden: where the spec bounds nothing, and where the
       * composed bound cannot judge */
      if (f & IV_UNBOUNDED) out->unbounded++;
      else if (f & IV_ANY) out->forgiven++;
      bool ok = (f & IV_ANY) || (isnan(gv) ? (f & IV_NAN) != 0
                                           : (f & IV_NUM) && tle(r->lo[e], gv) && tle(gv, r->hi[e]));
      nxvk_cmp_note(out, e, gv, rv, nxvk_ulp_diff(d, gv, rv), ok, is_float(d), &worst_u);
    }
    limits_text(g, usedp, nused, metas, limit_text, len);
  }
  for (int x = 0; iv && x < nv; x++) {
    iv_free(iv[x]);
    if (inside[x]) nxvk_host_free(&ref[x]);
  }
  free(iv);
  free(ref);
  free(metas);
  free(inside);
  free(needed);
  if (usedp != used) free(usedp);
  return rc;
}
