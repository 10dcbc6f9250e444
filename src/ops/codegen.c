/*
 * codegen.c - GLSL for a program of elementwise ops over broadcast inputs.
 *
 * Each op becomes a small function `op_NAME_DTYPE(a, b, c)` whose body is the
 * op's expression from elementwise.def; main() loads each input once at its
 * broadcast index, evaluates the nodes in order into locals and stores the
 * outputs.  Intermediates never touch memory.
 */
#include "codegen.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/internal.h"

typedef struct {
  char *buf;
  size_t len, cap;
  bool oom;
} sbuf;

static void sb_printf(sbuf *s, const char *fmt, ...) NXVK_PRINTF(2, 3);
static void sb_printf(sbuf *s, const char *fmt, ...) {
  if (s->oom) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(s->buf ? s->buf + s->len : NULL, s->buf ? s->cap - s->len : 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
      s->oom = true;
      return;
    }
    if (s->buf && s->len + (size_t)n < s->cap) {
      s->len += (size_t)n;
      return;
    }
    size_t ncap = s->cap ? s->cap * 2 : 4096;
    while (ncap <= s->len + (size_t)n) ncap *= 2;
    char *p = realloc(s->buf, ncap);
    if (!p) {
      s->oom = true;
      return;
    }
    s->buf = p;
    s->cap = ncap;
  }
}

static const char *glsl_compute(nxvk_dtype d) {
  static const char *t[NXVK_NDTYPES] = {"float", "double", "int", "uint"};
  return t[d];
}
static const char *glsl_storage(nxvk_dtype d) {
  static const char *t[NXVK_NDTYPES] = {"float", "double", "int", "uint8_t"};
  return t[d];
}

nxvk_dtype nxvk_cg_value_dtype(const nxvk_cg_program *p, int v) {
  if (v < p->ninputs) return p->in_dtype[v];
  const nxvk_cg_node *n = &p->node[v - p->ninputs];
  return n->op->kind == NXVK_KIND_COMPARE ? NXVK_U8 : n->dtype;
}

/* Operand names by kind: what the expressions in elementwise.def use. */
static int operand_names(nxvk_kind k, const char **names) {
  switch (k) {
  case NXVK_KIND_UNARY: names[0] = "a"; return 1;
  case NXVK_KIND_SELECT: names[0] = "c"; names[1] = "a"; names[2] = "b"; return 3;
  default: names[0] = "a"; names[1] = "b"; return 2;
  }
}

static void emit_op_function(sbuf *s, const nxvk_cg_node *n) {
  const char *names[3];
  int arity = operand_names(n->op->kind, names);
  const char *t = glsl_compute(n->dtype);
  bool cmp = n->op->kind == NXVK_KIND_COMPARE;
  sb_printf(s, "%s op_%s_%s(", cmp ? "uint" : t, n->op->name, nxvk_dtype_name(n->dtype));
  for (int i = 0; i < arity; i++) {
    bool pred = n->op->kind == NXVK_KIND_SELECT && i == 0;
    sb_printf(s, "%s%s %s", i ? ", " : "", pred ? "uint" : t, names[i]);
  }
  if (cmp)
    sb_printf(s, ") { return (%s) ? 1u : 0u; }\n", n->op->expr);
  else
    sb_printf(s, ") { return %s; }\n", n->op->expr);
}

int nxvk_cg_glsl(const nxvk_cg_program *p, const char *lib, char **out) {
  *out = NULL;
  if (p->ninputs < 0 || p->ninputs > NXVK_CG_MAX_INPUTS || p->nnodes < 1 ||
      p->nnodes > NXVK_CG_MAX_NODES || p->noutputs < 1 || p->noutputs > NXVK_CG_MAX_OUTPUTS)
    return nxvk_seterr(NXVK_E_BAD_REQUEST, "codegen: program out of bounds");
  bool u8 = false, f64 = false;
  for (int v = 0; v < p->ninputs + p->nnodes; v++) {
    nxvk_dtype d = nxvk_cg_value_dtype(p, v);
    u8 |= d == NXVK_U8;
    f64 |= d == NXVK_F64;
  }
  sbuf s = {0};
  sb_printf(&s, "#version 450\n");
  if (u8)
    sb_printf(&s, "#extension GL_EXT_shader_8bit_storage : require\n"
                  "#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require\n");
  sb_printf(&s, "#extension GL_EXT_control_flow_attributes : require\n"
                "layout(local_size_x_id = 0) in;\n"
                "layout(constant_id = 1) const uint UNROLL = 1u;\n"
                "layout(constant_id = 2) const uint BLOCKED = 0u;\n"
                "layout(push_constant) uniform PC { uint meta_off; } pc;\n"
                "layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };\n");
  int binding = 1;
  for (int i = 0; i < p->ninputs; i++)
    sb_printf(&s, "layout(std430, binding = %d) readonly buffer In%d { %s v[]; } in%d;\n",
              binding++, i, glsl_storage(p->in_dtype[i]), i);
  for (int i = 0; i < p->noutputs; i++)
    sb_printf(&s, "layout(std430, binding = %d) writeonly buffer Out%d { %s v[]; } out%d;\n",
              binding++, i, glsl_storage(nxvk_cg_value_dtype(p, p->output[i])), i);
  if (lib) sb_printf(&s, "%s\n", lib);
  (void)f64;

  /* one function per distinct (op, dtype) */
  for (int i = 0; i < p->nnodes; i++) {
    bool seen = false;
    for (int j = 0; j < i && !seen; j++)
      seen = p->node[j].op == p->node[i].op && p->node[j].dtype == p->node[i].dtype;
    if (!seen) emit_op_function(&s, &p->node[i]);
  }

  /* UNROLL elements per invocation and round, every load issued before any
   * arithmetic: with one element at a time too few loads are in flight to
   * cover memory latency (f32 add and exp stayed under 85% of PyTorch's
   * bandwidth at 64M elements on an H100).  Element u of the round is
   * i0 + u * ustep, so each load of a warp is still contiguous: ustep is the
   * whole grid, or with BLOCKED one workgroup, whose round then covers
   * UNROLL * its size contiguous elements. */
  sb_printf(&s,
            "void main() {\n"
            "  uint m = pc.meta_off;\n"
            "  uint n = meta[m], rank = meta[m + 1u], contig = meta[m + 2u];\n"
            "  uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;\n"
            "  uint ustep = BLOCKED != 0u ? gl_WorkGroupSize.x : step;\n"
            "  uint first = BLOCKED != 0u ? gl_WorkGroupID.x * gl_WorkGroupSize.x * UNROLL +\n"
            "                                   gl_LocalInvocationID.x\n"
            "                             : gl_GlobalInvocationID.x;\n"
            "  for (uint i0 = first; i0 < n; i0 += step * UNROLL) {\n");
  for (int k = 0; k < p->ninputs; k++)
    sb_printf(&s, "    %s l%d[UNROLL];\n", glsl_compute(p->in_dtype[k]), k);
  sb_printf(&s, "    [[unroll]] for (uint u = 0u; u < UNROLL; u++) {\n"
                "      if (u * ustep >= n - i0) break;\n"
                "      uint i = i0 + u * ustep;\n");
  for (int k = 0; k < p->ninputs; k++)
    sb_printf(&s, "      uint x%d = (contig & %uu) != 0u ? i : 0u;\n", k, 1u << k);
  if (p->ninputs > 0) {
    sb_printf(&s, "      if (contig != %uu) {\n"
                  "        uint r = i;\n"
                  "        for (int d = int(rank) - 1; d >= 0; d--) {\n"
                  "          uint dim = meta[m + 3u + uint(d)];\n"
                  "          uint q = r / dim, c = r - q * dim;\n"
                  "          r = q;\n",
              (1u << p->ninputs) - 1u);
    for (int k = 0; k < p->ninputs; k++)
      sb_printf(&s, "          if ((contig & %uu) == 0u) x%d += c * meta[m + %uu + uint(d)];\n",
                1u << k, k, 11u + 8u * (unsigned)k);
    sb_printf(&s, "        }\n      }\n");
  }
  for (int k = 0; k < p->ninputs; k++) {
    nxvk_dtype d = p->in_dtype[k];
    sb_printf(&s, "      l%d[u] = %s(in%d.v[x%d]);\n", k, glsl_compute(d), k, k);
  }
  sb_printf(&s, "    }\n"
                "    [[unroll]] for (uint u = 0u; u < UNROLL; u++) {\n"
                "      if (u * ustep >= n - i0) break;\n"
                "      uint i = i0 + u * ustep;\n");
  for (int k = 0; k < p->ninputs; k++)
    sb_printf(&s, "      %s v%d = l%d[u];\n", glsl_compute(p->in_dtype[k]), k, k);
  for (int i = 0; i < p->nnodes; i++) {
    const nxvk_cg_node *n = &p->node[i];
    int v = p->ninputs + i;
    const char *names[3];
    int arity = operand_names(n->op->kind, names);
    sb_printf(&s, "      %s v%d = op_%s_%s(", glsl_compute(nxvk_cg_value_dtype(p, v)), v,
              n->op->name, nxvk_dtype_name(n->dtype));
    for (int a = 0; a < arity; a++) {
      if (n->arg[a] < 0 || n->arg[a] >= v) {
        free(s.buf);
        return nxvk_seterr(NXVK_E_BAD_REQUEST, "codegen: node %d reads a later value", i);
      }
      sb_printf(&s, "%sv%d", a ? ", " : "", n->arg[a]);
    }
    /* u8 arithmetic is done in uint: wrap it here, so a fused consumer
     * reads the same value the u8 tensor would have held */
    bool wrap = nxvk_cg_value_dtype(p, v) == NXVK_U8 && n->op->kind != NXVK_KIND_COMPARE &&
                n->op->kind != NXVK_KIND_SELECT;
    sb_printf(&s, ")%s;\n", wrap ? " & 255u" : "");
  }
  for (int i = 0; i < p->noutputs; i++) {
    nxvk_dtype d = nxvk_cg_value_dtype(p, p->output[i]);
    sb_printf(&s, "      out%d.v[i] = %s(v%d);\n", i, glsl_storage(d), p->output[i]);
  }
  sb_printf(&s, "    }\n");
  sb_printf(&s, "  }\n}\n");
  if (s.oom) {
    free(s.buf);
    return nxvk_seterr(NXVK_E_NO_MEMORY, "codegen: out of memory");
  }
  *out = s.buf;
  return NXVK_OK;
}
