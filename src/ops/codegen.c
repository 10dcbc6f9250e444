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

/* GLSL types per dtype: storage (what a buffer holds) and compute (what the
 * op table's expressions work in: f16 and bf16 in float, narrow integers in
 * int / uint, wrapped after every op). */
static const char *const glsl_types[NXVK_NDTYPES][2] = {
    [NXVK_F16] = {"uint16_t", "float"},   [NXVK_BF16] = {"uint16_t", "float"},
    [NXVK_F32] = {"float", "float"},      [NXVK_F64] = {"double", "double"},
    [NXVK_I8] = {"int8_t", "int"},        [NXVK_I16] = {"int16_t", "int"},
    [NXVK_I32] = {"int", "int"},          [NXVK_I64] = {"int64_t", "int64_t"},
    [NXVK_U8] = {"uint8_t", "uint"},      [NXVK_U16] = {"uint16_t", "uint"},
    [NXVK_U32] = {"uint", "uint"},        [NXVK_U64] = {"uint64_t", "uint64_t"},
    [NXVK_BOOL] = {"uint8_t", "uint"},
};
const char *nxvk_glsl_storage_type(nxvk_dtype d) { return glsl_types[d][0]; }
const char *nxvk_glsl_compute_type(nxvk_dtype d) { return glsl_types[d][1]; }
static const char *glsl_compute(nxvk_dtype d) { return glsl_types[d][1]; }
static const char *glsl_storage(nxvk_dtype d) { return glsl_types[d][0]; }

/* storage -> compute, as an expression around the loaded value X */
static const char *glsl_load(nxvk_dtype d) {
  switch (d) {
  case NXVK_F16: return "nx_f16_to_f32(uint(%s))";
  case NXVK_BF16: return "uintBitsToFloat(uint(%s) << 16)";
  default: return NULL; /* the compute type's constructor */
  }
}

/* compute -> storage (the value is already rounded or wrapped) */
static const char *glsl_store(nxvk_dtype d) {
  switch (d) {
  case NXVK_F16: return "uint16_t(nx_f16_bits(floatBitsToUint(%s)))";
  case NXVK_BF16: return "uint16_t(nx_bf16_bits(floatBitsToUint(%s)))";
  default: return NULL;
  }
}

/* After every op: the value the dtype would hold, so a fused consumer reads
 * what a tensor of that dtype would have given it (f16 / bf16 rounded once
 * from f32, narrow integers wrapped). */
static const char *glsl_wrap(nxvk_dtype d) {
  switch (d) {
  case NXVK_F16: return "nx_f16_round(";
  case NXVK_BF16: return "nx_bf16_round(";
  case NXVK_I8: return "bitfieldExtract(int(";     /* sign-extends */
  case NXVK_I16: return "bitfieldExtract(int(";
  case NXVK_U8: return "(uint(";
  case NXVK_U16: return "(uint(";
  default: return NULL;
  }
}
static const char *glsl_wrap_end(nxvk_dtype d) {
  switch (d) {
  case NXVK_F16: case NXVK_BF16: return ")";
  case NXVK_I8: return "), 0, 8)";
  case NXVK_I16: return "), 0, 16)";
  case NXVK_U8: return ") & 255u)";
  case NXVK_U16: return ") & 65535u)";
  default: return "";
  }
}

nxvk_dtype nxvk_cg_value_dtype(const nxvk_cg_program *p, int v) {
  if (v < p->ninputs) return p->in_dtype[v];
  const nxvk_cg_node *n = &p->node[v - p->ninputs];
  return n->op->kind == NXVK_KIND_COMPARE ? NXVK_BOOL : n->dtype;
}

/* Does the kernel convert f16 through the driver (NX_F16_HW)? */
static bool cg_hw(const nxvk_cg_program *p) {
  if (!p->f16_cvt) return false;
  for (int v = 0; v < p->ninputs + p->nnodes; v++)
    if (nxvk_cg_value_dtype(p, v) == NXVK_F16) return true;
  return false;
}

bool nxvk_cg_paired(const nxvk_cg_program *p) {
  for (int k = 0; k < p->ninputs; k++)
    if (nxvk_dtype_size(p->in_dtype[k]) != 2) return false;
  for (int k = 0; k < p->noutputs; k++)
    if (nxvk_dtype_size(nxvk_cg_value_dtype(p, p->output[k])) != 2) return false;
  return true;
}

/* Paired kernels: the 16 bits of an element (low half of a uint) ->
 * compute type, and compute type -> the 16 bits. */
static const char *pair_load(nxvk_dtype d) {
  switch (d) {
  case NXVK_F16: return "nx_f16_to_f32(%s)";
  case NXVK_BF16: return "uintBitsToFloat((%s) << 16)";
  case NXVK_I16: return "bitfieldExtract(int(%s), 0, 16)";
  default: return "(%s)";
  }
}
static const char *pair_store(nxvk_dtype d) {
  switch (d) {
  case NXVK_F16: return "nx_f16_bits(floatBitsToUint(%s))";
  case NXVK_BF16: return "nx_bf16_bits(floatBitsToUint(%s))";
  default: return "(uint(%s) & 65535u)";
  }
}

/* Operand names by kind: what the expressions in elementwise.def use (a
 * COMPARE row of one input, kind TEST there, names it a). */
static int operand_names(const nxvk_op_desc *op, const char **names) {
  if (op->kind == NXVK_KIND_UNARY || op->arity == 1) {
    names[0] = "a";
    return 1;
  }
  if (op->kind == NXVK_KIND_SELECT) {
    names[0] = "c"; names[1] = "a"; names[2] = "b";
    return 3;
  }
  names[0] = "a"; names[1] = "b";
  return 2;
}

/* Does a later node read value v? */
static bool value_read(const nxvk_cg_program *p, int v) {
  for (int i = v < p->ninputs ? 0 : v - p->ninputs + 1; i < p->nnodes; i++) {
    const char *names[3];
    int arity = operand_names(p->node[i].op, names);
    for (int a = 0; a < arity; a++)
      if (p->node[i].arg[a] == v) return true;
  }
  return false;
}

/* The cheaper body of an f16 / bf16 op under NXVK_EW16 (nx.glsl's nx16_*,
 * which give the same 16-bit results), or NULL: f16 add, subtract and
 * multiply without the f32 denormal tests, and f16 / bf16 exp through exp2
 * with a test for the rare results that need nxf_exp. */
static const char *fast16_expr(const nxvk_cg_node *n, int fast16, char *buf, size_t len) {
  const char *fz = (fast16 & NXVK_EW16_FUZZ) ? "true" : "false";
  const char *name = n->op->name;
  if ((fast16 & NXVK_EW16_ARITH) && n->dtype == NXVK_F16) {
    const char *f = strcmp(name, "add") == 0        ? "nx16_add"
                    : strcmp(name, "subtract") == 0 ? "nx16_sub"
                    : strcmp(name, "multiply") == 0 ? "nx16_mul"
                                                    : NULL;
    if (f) {
      snprintf(buf, len, "%s(a, b, %s)", f, fz);
      return buf;
    }
  }
  if ((fast16 & NXVK_EW16_EXP) && (n->dtype == NXVK_F16 || n->dtype == NXVK_BF16) && strcmp(name, "exp") == 0) {
    snprintf(buf, len, "nx16_exp(a, %s, %s)", n->dtype == NXVK_BF16 ? "true" : "false", fz);
    return buf;
  }
  return NULL;
}

static void emit_op_function(sbuf *s, const nxvk_cg_node *n, int fast16) {
  const char *names[3];
  int arity = operand_names(n->op, names);
  const char *t = glsl_compute(n->dtype);
  bool cmp = n->op->kind == NXVK_KIND_COMPARE;
  char fbuf[64];
  const char *expr = fast16_expr(n, fast16, fbuf, sizeof fbuf);
  if (!expr) expr = n->op->expr;
  sb_printf(s, "%s op_%s_%s(", cmp ? "uint" : t, n->op->name, nxvk_dtype_name(n->dtype));
  for (int i = 0; i < arity; i++) {
    bool pred = n->op->kind == NXVK_KIND_SELECT && i == 0;
    sb_printf(s, "%s%s %s", i ? ", " : "", pred ? "uint" : t, names[i]);
  }
  /* NXW: the dtype's width in bits, for the expressions that need it */
  int w = (int)nxvk_dtype_size(n->dtype) * 8;
  if (cmp)
    sb_printf(s, ") { const int NXW = %d; return (%s) ? 1u : 0u; }\n", w, expr);
  else
    sb_printf(s, ") { const int NXW = %d; return %s; }\n", w, expr);
}

/* The nodes in order, into locals v<ninputs>...; an f16 / bf16 value no
 * later node reads is left unrounded: its store rounds it, once (rounding
 * twice gives the same bits, at twice the cost). */
static int emit_nodes(sbuf *s, const nxvk_cg_program *p, const char *ind) {
  for (int i = 0; i < p->nnodes; i++) {
    const nxvk_cg_node *n = &p->node[i];
    int v = p->ninputs + i;
    const char *names[3];
    int arity = operand_names(n->op, names);
    nxvk_dtype vd = nxvk_cg_value_dtype(p, v);
    /* wrap / round to the result's dtype (compare gives 0 or 1, select
     * picks an operand that already holds a value of the dtype) */
    bool wrap = glsl_wrap(vd) && n->op->kind != NXVK_KIND_COMPARE && n->op->kind != NXVK_KIND_SELECT;
    if ((vd == NXVK_F16 || vd == NXVK_BF16) && !value_read(p, v)) wrap = false;
    const char *wr = !wrap ? "" : vd == NXVK_F16 && cg_hw(p) ? "nx_f16_round_hw(" : glsl_wrap(vd);
    sb_printf(s, "%s%s v%d = %sop_%s_%s(", ind, glsl_compute(vd), v, wr, n->op->name,
              nxvk_dtype_name(n->dtype));
    for (int a = 0; a < arity; a++) {
      if (n->arg[a] < 0 || n->arg[a] >= v)
        return nxvk_seterr(NXVK_E_BAD_REQUEST, "codegen: node %d reads a later value", i);
      sb_printf(s, "%sv%d", a ? ", " : "", n->arg[a]);
    }
    sb_printf(s, ")%s;\n", wrap ? glsl_wrap_end(vd) : "");
  }
  return NXVK_OK;
}

/* "add", "sub" or "mul" when the program is that one op on two inputs of
 * dtype d (an f16 or bf16 add, subtract or multiply kernel), else NULL */
static const char *binary16_op(const nxvk_cg_program *p, nxvk_dtype d) {
  if (p->nnodes != 1 || p->noutputs != 1 || p->ninputs != 2 || p->output[0] != 2 || p->node[0].dtype != d ||
      p->in_dtype[0] != d || p->in_dtype[1] != d || p->node[0].arg[0] != 0 || p->node[0].arg[1] != 1)
    return NULL;
  const char *name = p->node[0].op->name;
  return strcmp(name, "add") == 0 ? "add" : strcmp(name, "subtract") == 0 ? "sub" : strcmp(name, "multiply") == 0 ? "mul" : NULL;
}

/* The two ew_eval calls of a paired word (low half into lo<o>, high half
 * into hi<o>, for the first nout outputs): operand k's word is named by
 * word_fmt ("l%d[u]" in the main loop, "a%d" in a split kernel's exact
 * path); an f16 operand in driver arithmetic is its f<k> vec2, already
 * converted. */
static void emit_ew_eval_pair(sbuf *s, const nxvk_cg_program *p, const char *indent, const char *word_fmt,
                              int nout) {
  int ni = p->ninputs;
  bool hw = cg_hw(p);
  for (int h = 0; h < 2; h++) {
    sb_printf(s, "%sew_eval(", indent);
    for (int k = 0; k < ni; k++) {
      char word[24], w[48];
      if (k) sb_printf(s, ", ");
      if (hw && p->in_dtype[k] == NXVK_F16) {
        sb_printf(s, "f%d.%c", k, h ? 'y' : 'x');
        continue;
      }
      snprintf(word, sizeof word, word_fmt, k);
      snprintf(w, sizeof w, h ? "%s >> 16u" : "%s & 65535u", word);
      sb_printf(s, pair_load(p->in_dtype[k]), w);
    }
    for (int o = 0; o < nout; o++) sb_printf(s, "%s%s%d", ni + o ? ", " : "", h ? "hi" : "lo", o);
    sb_printf(s, ");\n");
  }
}

/* main() of a paired kernel (every input and output 16 bits wide): each
 * invocation takes two elements per 32-bit word, so a warp's load or store
 * moves 128 bytes as the f32 kernels' do (one 16-bit element at a time
 * left f16 / bf16 add at 0.22-0.47 of PyTorch's bandwidth on an H100), and
 * no 16-bit storage or arithmetic is needed.  Word i holds elements 2i and
 * 2i+1; the last word of an odd count gets 0 in its upper half (buffers
 * are whole words).  Broadcast inputs read each element's half of its word. */
static int emit_paired_main(sbuf *s, const nxvk_cg_program *p) {
  int ni = p->ninputs;
  /* with the driver's f16 conversions (cg_hw) an f16 input or output moves
   * as f32, two per word converted at once in main() */
  bool hw = cg_hw(p);
  bool hw_out[NXVK_CG_MAX_OUTPUTS];
  for (int o = 0; o < p->noutputs; o++) hw_out[o] = hw && nxvk_cg_value_dtype(p, p->output[o]) == NXVK_F16;
  /* evaluation of one element: compute-type inputs in, stored bits out */
  sb_printf(s, "void ew_eval(");
  for (int k = 0; k < ni; k++) sb_printf(s, "%s%s v%d", k ? ", " : "", glsl_compute(p->in_dtype[k]), k);
  for (int o = 0; o < p->noutputs; o++)
    sb_printf(s, "%sout %s r%d", ni + o ? ", " : "", hw_out[o] ? "float" : "uint", o);
  sb_printf(s, ") {\n");
  int rc = emit_nodes(s, p, "  ");
  if (rc) return rc;
  for (int o = 0; o < p->noutputs; o++) {
    char vv[16];
    snprintf(vv, sizeof vv, "v%d", p->output[o]);
    sb_printf(s, "  r%d = ", o);
    sb_printf(s, hw_out[o] ? "%s" : pair_store(nxvk_cg_value_dtype(p, p->output[o])), vv);
    sb_printf(s, ";\n");
  }
  sb_printf(s, "}\n");
  if (ni > 0) { /* element e's index in each input (broadcast) */
    sb_printf(s, "void ew_index(uint m, uint rank, uint contig, uint e");
    for (int k = 0; k < ni; k++) sb_printf(s, ", out uint x%d", k);
    sb_printf(s, ") {\n");
    for (int k = 0; k < ni; k++) sb_printf(s, "  x%d = (contig & %uu) != 0u ? e : 0u;\n", k, 1u << k);
    sb_printf(s, "  uint r = e;\n"
                 "  for (int d = int(rank) - 1; d >= 0; d--) {\n"
                 "    uint dim = meta[m + 3u + uint(d)];\n"
                 "    uint q = r / dim, c = r - q * dim;\n"
                 "    r = q;\n");
    for (int k = 0; k < ni; k++)
      sb_printf(s, "    if ((contig & %uu) == 0u) x%d += c * meta[m + %uu + uint(d)];\n", 1u << k, k,
                11u + 8u * (unsigned)k);
    sb_printf(s, "  }\n}\n");
  }
  sb_printf(s,
            "void main() {\n"
            "  uint m = pc.meta_off;\n"
            "  uint n = meta[m], rank = meta[m + 1u], contig = meta[m + 2u];\n"
            "  uint np = n / 2u + (n & 1u);\n"
            "  uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;\n"
            "  uint ustep = BLOCKED != 0u ? gl_WorkGroupSize.x : step;\n"
            "  uint first = BLOCKED != 0u ? gl_WorkGroupID.x * gl_WorkGroupSize.x * UNROLL +\n"
            "                                   gl_LocalInvocationID.x\n"
            "                             : gl_GlobalInvocationID.x;\n"
            "  for (uint i0 = first; i0 < np; i0 += step * UNROLL) {\n");
  for (int k = 0; k < ni; k++) sb_printf(s, "    uint l%d[UNROLL];\n", k);
  sb_printf(s, "    [[unroll]] for (uint u = 0u; u < UNROLL; u++) {\n"
               "      if (u * ustep >= np - i0) break;\n"
               "      uint i = i0 + u * ustep;\n");
  if (ni > 0) {
    sb_printf(s, "      if (contig == %uu) {\n", (1u << ni) - 1u);
    for (int k = 0; k < ni; k++) sb_printf(s, "        l%d[u] = in%d.v[i];\n", k, k);
    sb_printf(s, "      } else {\n        uint ");
    for (int k = 0; k < ni; k++) sb_printf(s, "%sa%d, b%d", k ? ", " : "", k, k);
    sb_printf(s, ";\n        ew_index(m, rank, contig, 2u * i");
    for (int k = 0; k < ni; k++) sb_printf(s, ", a%d", k);
    sb_printf(s, ");\n        ew_index(m, rank, contig, min(2u * i + 1u, n - 1u)");
    for (int k = 0; k < ni; k++) sb_printf(s, ", b%d", k);
    sb_printf(s, ");\n");
    for (int k = 0; k < ni; k++)
      sb_printf(s, "        l%d[u] = ((in%d.v[a%d >> 1u] >> ((a%d & 1u) << 4u)) & 65535u) |\n"
                   "                ((in%d.v[b%d >> 1u] >> ((b%d & 1u) << 4u)) << 16u);\n",
                k, k, k, k, k, k, k);
    sb_printf(s, "      }\n");
  }
  sb_printf(s, "    }\n"
               "    [[unroll]] for (uint u = 0u; u < UNROLL; u++) {\n"
               "      if (u * ustep >= np - i0) break;\n"
               "      uint i = i0 + u * ustep;\n");
  /* f16 add / subtract / multiply where the device promises f16 RTE and
   * subnormals (NX_F16_HW 2, NXVK_EW16 f16x2): both elements of a word in
   * one f16 instruction, no conversion (f16.glsl's nx16x2_*) */
  const char *x2 = binary16_op(p, NXVK_F16);
  if (x2 && (p->fast16 & NXVK_EW16_F16X2) && hw && p->f16_cvt == 2) {
    sb_printf(s, "      uint w0 = nx16x2_%s(l0[u], l1[u]);\n"
                 "      out0.v[i] = 2u * i + 1u < n ? w0 : (w0 & 65535u);\n"
                 "    }\n  }\n}\n", x2);
    return NXVK_OK;
  }
  for (int k = 0; k < ni; k++)
    if (hw && p->in_dtype[k] == NXVK_F16) sb_printf(s, "      vec2 f%d = nx_f16x2_to_f32(l%d[u]);\n", k, k);
  for (int o = 0; o < p->noutputs; o++)
    sb_printf(s, "      %s lo%d, hi%d;\n", hw_out[o] ? "float" : "uint", o, o);
  /* bf16 add / subtract / multiply (NXVK_EW16 arith): one test of the
   * four operands' bits a word pair, then the driver's operation
   * (nx.glsl's nx16_bf_ok); ew_eval only where the test fails */
  const char *bf_op = (p->fast16 & NXVK_EW16_ARITH) ? binary16_op(p, NXVK_BF16) : NULL;
  if (bf_op) {
    const char *fz = (p->fast16 & NXVK_EW16_FUZZ) ? "true" : "false";
    sb_printf(s, "      if (nx16_bf_ok(l0[u], l1[u], %s)) {\n", strcmp(bf_op, "mul") == 0 ? "0x1fff1fffu" : "0x047f047fu");
    sb_printf(s, "        lo0 = nx_bf16_bits(floatBitsToUint(nx16_%s(uintBitsToFloat(l0[u] << 16u), "
                 "uintBitsToFloat(l1[u] << 16u), %s)));\n", bf_op, fz);
    sb_printf(s, "        hi0 = nx_bf16_bits(floatBitsToUint(nx16_%s(uintBitsToFloat(l0[u] & 0xffff0000u), "
                 "uintBitsToFloat(l1[u] & 0xffff0000u), %s)));\n", bf_op, fz);
    sb_printf(s, "      } else {\n");
  }
  emit_ew_eval_pair(s, p, "      ", "l%d[u]", p->noutputs);
  if (bf_op) sb_printf(s, "      }\n");
  for (int o = 0; o < p->noutputs; o++) {
    /* an nx16_* result is never an f32 subnormal: no sign to restore */
    char fb[64];
    int v = p->output[o];
    bool n16 = v >= ni && fast16_expr(&p->node[v - ni], p->fast16, fb, sizeof fb);
    if (hw_out[o])
      sb_printf(s, "      uint w%d = nx_f32x2_to_f16%s(lo%d, hi%d);\n"
                   "      out%d.v[i] = 2u * i + 1u < n ? w%d : (w%d & 65535u);\n", o, n16 ? "n" : "", o, o, o, o, o);
    else
      sb_printf(s, "      out%d.v[i] = lo%d | ((2u * i + 1u < n ? hi%d : 0u) << 16u);\n", o, o, o);
  }
  sb_printf(s, "    }\n  }\n}\n");
  return NXVK_OK;
}

/* Which word form a split kernel (NXVK_EW16_SPLIT) computes: "exp_hw",
 * "exp_sw" (f16), "exp_bf" (bf16), "add", "sub" or "mul" (bf16), or NULL
 * when the program is none of those single ops (the kernel keeps its
 * exact path inline). */
static const char *split_form(const nxvk_cg_program *p) {
  if (!(p->fast16 & (NXVK_EW16_SPLIT1 | NXVK_EW16_SPLIT2)) || !nxvk_cg_paired(p)) return NULL;
  if ((p->fast16 & NXVK_EW16_EXP) && p->nnodes == 1 && p->noutputs == 1 && p->ninputs == 1 &&
      p->output[0] == 1 && p->node[0].arg[0] == 0 && strcmp(p->node[0].op->name, "exp") == 0 &&
      p->in_dtype[0] == p->node[0].dtype) {
    if (p->node[0].dtype == NXVK_BF16) return "exp_bf";
    if (p->node[0].dtype == NXVK_F16) return cg_hw(p) ? "exp_hw" : "exp_sw";
  }
  if (!(p->fast16 & NXVK_EW16_ARITH)) return NULL;
  /* f16 add / subtract / multiply in f16 arithmetic (emit_paired_main's
   * f16x2 kernels) take the split form only for its vector loads */
  const char *x2 = binary16_op(p, NXVK_F16);
  if (x2 && (p->fast16 & NXVK_EW16_VEC) && (p->fast16 & NXVK_EW16_F16X2) && cg_hw(p) && p->f16_cvt == 2)
    return strcmp(x2, "add") == 0 ? "x2add" : strcmp(x2, "sub") == 0 ? "x2sub" : "x2mul";
  return binary16_op(p, NXVK_BF16);
}

/* main() of a split kernel (NXVK_EW16_SPLIT): the unrolled loop computes
 * each word in the cheap form alone (nx.glsl's nx16_exp2_*, or bf16's
 * operand test and the driver's operation) and notes the words whose
 * test failed; the exact path (ew_eval, nxvk's f32 functions) runs after
 * the round for those words only, so the unrolled body holds no copy of
 * it.  SPLIT1: each invocation loops over its own rare words.  SPLIT2: the
 * workgroup queues them in shared memory (two an invocation; beyond, an
 * invocation redoes its own) and its invocations share them out after a
 * barrier (a warp then runs the exact path once a round for the whole
 * workgroup, not once per warp).  A rare word is stored by the exact path
 * alone. */
static int emit_paired_split(sbuf *s, const nxvk_cg_program *p, const char *form) {
  int ni = p->ninputs;
  bool hw = cg_hw(p), wg = (p->fast16 & NXVK_EW16_SPLIT2) != 0, vec = (p->fast16 & NXVK_EW16_VEC) != 0;
  bool never = strncmp(form, "x2", 2) == 0; /* f16x2 arithmetic: no exact path to take */
  const char *fz = (p->fast16 & NXVK_EW16_FUZZ) ? "true" : "false";
  nxvk_dtype od = nxvk_cg_value_dtype(p, p->output[0]);
  bool hw_out = hw && od == NXVK_F16;
  sb_printf(s, "void ew_eval(");
  for (int k = 0; k < ni; k++) sb_printf(s, "%s%s v%d", k ? ", " : "", glsl_compute(p->in_dtype[k]), k);
  sb_printf(s, ", out %s r0) {\n", hw_out ? "float" : "uint");
  int rc = emit_nodes(s, p, "  ");
  if (rc) return rc;
  char vv[16];
  snprintf(vv, sizeof vv, "v%d", p->output[0]);
  sb_printf(s, "  r0 = ");
  sb_printf(s, hw_out ? "%s" : pair_store(od), vv);
  sb_printf(s, ";\n}\n");
  /* the exact path for word i of inputs a0.. */
  sb_printf(s, "void ew_exact(uint n, uint i");
  for (int k = 0; k < ni; k++) sb_printf(s, ", uint a%d", k);
  sb_printf(s, ") {\n");
  for (int k = 0; k < ni; k++)
    if (hw && p->in_dtype[k] == NXVK_F16) sb_printf(s, "  vec2 f%d = nx_f16x2_to_f32(a%d);\n", k, k);
  sb_printf(s, "  %s lo0, hi0;\n", hw_out ? "float" : "uint");
  emit_ew_eval_pair(s, p, "  ", "a%d", 1);
  if (hw_out)
    sb_printf(s, "  uint w0 = nx_f32x2_to_f16(lo0, hi0);\n"
                 "  out0.v[i] = 2u * i + 1u < n ? w0 : (w0 & 65535u);\n}\n");
  else
    sb_printf(s, "  out0.v[i] = lo0 | ((2u * i + 1u < n ? hi0 : 0u) << 16u);\n}\n");
  /* the cheap form: the word in r, true where the exact path must redo it */
  sb_printf(s, "bool ew_fast(");
  for (int k = 0; k < ni; k++) sb_printf(s, "uint a%d, ", k);
  sb_printf(s, "out uint r) {\n");
  if (strncmp(form, "exp_", 4) == 0) {
    sb_printf(s, "  return nx16_exp2_%s(a0, %s, r);\n}\n", form + 4, fz);
  } else if (never) {
    sb_printf(s, "  r = nx16x2_%s(a0, a1);\n  return false;\n}\n", form + 2);
  } else {
    sb_printf(s, "  float r0 = nx16_%s(uintBitsToFloat(a0 << 16u), uintBitsToFloat(a1 << 16u), %s);\n"
                 "  float r1 = nx16_%s(uintBitsToFloat(a0 & 0xffff0000u), uintBitsToFloat(a1 & 0xffff0000u), %s);\n"
                 "  r = nx_bf16_bits(floatBitsToUint(r0)) | (nx_bf16_bits(floatBitsToUint(r1)) << 16u);\n"
                 "  return !nx16_bf_ok(a0, a1, %s);\n}\n",
              form, fz, form, fz, strcmp(form, "mul") == 0 ? "0x1fff1fffu" : "0x047f047fu");
  }
  /* word i of every input (broadcast inputs: each element's half) */
  sb_printf(s, "void ew_load(uint m, uint n, uint rank, uint contig, uint i");
  for (int k = 0; k < ni; k++) sb_printf(s, ", out uint a%d", k);
  sb_printf(s, ") {\n  if (contig == %uu) {\n", (1u << ni) - 1u);
  for (int k = 0; k < ni; k++) sb_printf(s, "    a%d = in%d.v[i];\n", k, k);
  sb_printf(s, "    return;\n  }\n");
  for (int k = 0; k < ni; k++) sb_printf(s, "  uint x%d = (contig & %uu) != 0u ? 2u * i : 0u;\n", k, 1u << k);
  for (int k = 0; k < ni; k++) sb_printf(s, "  uint y%d = (contig & %uu) != 0u ? min(2u * i + 1u, n - 1u) : 0u;\n", k, 1u << k);
  sb_printf(s, "  for (int h = 0; h < 2; h++) {\n"
               "    uint r = h == 0 ? 2u * i : min(2u * i + 1u, n - 1u);\n"
               "    for (int d = int(rank) - 1; d >= 0; d--) {\n"
               "      uint dim = meta[m + 3u + uint(d)];\n"
               "      uint q = r / dim, c = r - q * dim;\n"
               "      r = q;\n");
  for (int k = 0; k < ni; k++)
    sb_printf(s, "      if ((contig & %uu) == 0u) { if (h == 0) x%d += c * meta[m + %uu + uint(d)]; "
                 "else y%d += c * meta[m + %uu + uint(d)]; }\n",
              1u << k, k, 11u + 8u * (unsigned)k, k, 11u + 8u * (unsigned)k);
  sb_printf(s, "    }\n  }\n");
  for (int k = 0; k < ni; k++)
    sb_printf(s, "  a%d = ((in%d.v[x%d >> 1u] >> ((x%d & 1u) << 4u)) & 65535u) |\n"
                 "       ((in%d.v[y%d >> 1u] >> ((y%d & 1u) << 4u)) << 16u);\n",
              k, k, k, k, k, k, k);
  sb_printf(s, "}\n");
  if (vec) sb_printf(s, "const uint VU = (UNROLL + 3u) / 4u;\n");
  if (wg && !never) { /* the workgroup's rare words of a round, two an invocation (more: each redoes its own) */
    const char *sz = "gl_WorkGroupSize.x * 2u";
    sb_printf(s, "shared uint rq_n;\nshared uint rq_i[%s];\n", sz);
    for (int k = 0; k < ni; k++) sb_printf(s, "shared uint rq_a%d[%s];\n", k, sz);
  }
  /* the loop runs the same rounds in every invocation of a workgroup (the
   * barriers of SPLIT2 need that): b0 is the workgroup's first unit (a
   * word, or with NXVK_EW16_VEC four words) */
  sb_printf(s,
            "void main() {\n"
            "  uint m = pc.meta_off;\n"
            "  uint n = meta[m], rank = meta[m + 1u], contig = meta[m + 2u];\n"
            "  uint np = n / 2u + (n & 1u);\n"
            "  uint lid = gl_LocalInvocationID.x;\n"
            "  uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;\n"
            "  uint ustep = BLOCKED != 0u ? gl_WorkGroupSize.x : step;\n"
            "  uint first = BLOCKED != 0u ? gl_WorkGroupID.x * gl_WorkGroupSize.x * UNROLL\n"
            "                             : gl_WorkGroupID.x * gl_WorkGroupSize.x;\n");
  if (wg && !never) sb_printf(s, "  if (lid == 0u) rq_n = 0u;\n  barrier();\n");
  for (int pass = vec ? 0 : 1; pass < 2; pass++) {
    /* pass 0: contiguous inputs as uvec4 (16 bytes a load, as PyTorch's
     * kernels), the last np % 4 words after the loop; pass 1: words */
    bool v4 = pass == 0;
    const char *cnt = v4 ? "nv" : "np";
    if (v4) sb_printf(s, "  if (contig == %uu) {\n  uint nv = np >> 2u;\n", (1u << ni) - 1u);
    else if (vec) sb_printf(s, "  {\n");
    const char *U = v4 ? "VU" : "UNROLL";
    if (v4) /* the vectors' own unroll: UNROLL words a round in whole vectors (the grid is the words') */
      sb_printf(s, "  uint vfirst = BLOCKED != 0u ? gl_WorkGroupID.x * gl_WorkGroupSize.x * VU\n"
                   "                              : gl_WorkGroupID.x * gl_WorkGroupSize.x;\n");
    sb_printf(s, "  for (uint b0 = %s; b0 < %s; b0 += step * %s) {\n"
                 "    uint i0 = b0 + lid;\n"
                 "    uint left = i0 < %s ? %s - i0 : 0u;\n", v4 ? "vfirst" : "first", cnt, U, cnt, cnt);
    for (int k = 0; k < ni; k++) sb_printf(s, "    %s l%d[%s];\n", v4 ? "uvec4" : "uint", k, U);
    sb_printf(s, "    [[unroll]] for (uint u = 0u; u < %s; u++) {\n"
                 "      if (u * ustep >= left) break;\n", U);
    if (v4) {
      for (int k = 0; k < ni; k++) sb_printf(s, "      l%d[u] = in%dv.v[i0 + u * ustep];\n", k, k);
    } else {
      sb_printf(s, "      ew_load(m, n, rank, contig, i0 + u * ustep");
      for (int k = 0; k < ni; k++) sb_printf(s, ", l%d[u]", k);
      sb_printf(s, ");\n");
    }
    sb_printf(s, "    }\n"
                 "    uint rare = 0u;\n"
                 "    [[unroll]] for (uint u = 0u; u < %s; u++) {\n"
                 "      if (u * ustep >= left) break;\n", U);
    if (v4) {
      /* bit 4u + c: word c of the round's vector u */
      sb_printf(s, "      uint j = i0 + u * ustep, rm = 0u;\n      uvec4 w;\n");
      for (int c = 0; c < 4; c++) {
        sb_printf(s, "      if (ew_fast(");
        for (int k = 0; k < ni; k++) sb_printf(s, "l%d[u].%c, ", k, "xyzw"[c]);
        sb_printf(s, "w.%c)) rm |= %du;\n", "xyzw"[c], 1 << c);
      }
      sb_printf(s, "      w.w = 8u * j + 7u < n ? w.w : (w.w & 65535u);   /* the last word of an odd count */\n"
                   "      if (rm == 0u) out0v.v[j] = w;\n"
                   "      else {\n");
      for (int c = 0; c < 4; c++) sb_printf(s, "        if ((rm & %du) == 0u) out0.v[4u * j + %du] = w.%c;\n", 1 << c, c, "xyzw"[c]);
      sb_printf(s, "        rare |= rm << (4u * u);\n      }\n    }\n");
    } else {
      sb_printf(s, "      uint i = i0 + u * ustep, w;\n"
                   "      if (ew_fast(");
      for (int k = 0; k < ni; k++) sb_printf(s, "l%d[u], ", k);
      sb_printf(s, "w)) rare |= 1u << u;\n"
                   "      else out0.v[i] = 2u * i + 1u < n ? w : (w & 65535u);\n"
                   "    }\n");
    }
    if (!never) {
      /* the rare words' inputs, picked from the unrolled registers by
       * selects (an array indexed at run time would go to memory) */
      sb_printf(s, "    for (uint rr = rare; rr != 0u; rr &= rr - 1u) {\n"
                   "      uint b = uint(findLSB(rr));\n");
      if (v4) {
        sb_printf(s, "      uint u = b >> 2u, c = b & 3u;\n");
        for (int k = 0; k < ni; k++) sb_printf(s, "      uvec4 e%d = l%d[0];\n", k, k);
        sb_printf(s, "      [[unroll]] for (uint v = 1u; v < VU; v++)\n        if (u == v) {");
        for (int k = 0; k < ni; k++) sb_printf(s, " e%d = l%d[v];", k, k);
        sb_printf(s, " }\n");
        for (int k = 0; k < ni; k++)
          sb_printf(s, "      uint a%d = c == 0u ? e%d.x : c == 1u ? e%d.y : c == 2u ? e%d.z : e%d.w;\n", k, k, k, k, k);
        sb_printf(s, "      uint i = 4u * (i0 + u * ustep) + c;\n");
      } else {
        sb_printf(s, "      uint u = b;\n");
        for (int k = 0; k < ni; k++) sb_printf(s, "      uint a%d = l%d[0];\n", k, k);
        sb_printf(s, "      [[unroll]] for (uint v = 1u; v < UNROLL; v++)\n        if (u == v) {");
        for (int k = 0; k < ni; k++) sb_printf(s, " a%d = l%d[v];", k, k);
        sb_printf(s, " }\n      uint i = i0 + u * ustep;\n");
      }
      if (!wg) {
        sb_printf(s, "      ew_exact(n, i");
        for (int k = 0; k < ni; k++) sb_printf(s, ", a%d", k);
        sb_printf(s, ");\n    }\n");
      } else {
        sb_printf(s, "      uint q = atomicAdd(rq_n, 1u);\n"
                     "      if (q >= 2u * gl_WorkGroupSize.x) {\n"
                     "        ew_exact(n, i");
        for (int k = 0; k < ni; k++) sb_printf(s, ", a%d", k);
        sb_printf(s, ");\n        continue;\n      }\n"
                     "      rq_i[q] = i;\n");
        for (int k = 0; k < ni; k++) sb_printf(s, "      rq_a%d[q] = a%d;\n", k, k);
        sb_printf(s, "    }\n"
                     "    barrier();\n"
                     "    uint nq = min(rq_n, 2u * gl_WorkGroupSize.x);\n"
                     "    for (uint q = lid; q < nq; q += gl_WorkGroupSize.x)\n"
                     "      ew_exact(n, rq_i[q]");
        for (int k = 0; k < ni; k++) sb_printf(s, ", rq_a%d[q]", k);
        sb_printf(s, ");\n"
                     "    barrier();\n"
                     "    if (lid == 0u) rq_n = 0u;\n"
                     "    barrier();\n");
      }
    }
    sb_printf(s, "  }\n");
    if (v4) {
      /* the last np % 4 words: workgroup 0, one a word */
      sb_printf(s, "  uint i = 4u * nv + lid;\n"
                   "  if (gl_WorkGroupID.x == 0u && i < np) {\n");
      for (int k = 0; k < ni; k++) sb_printf(s, "    uint a%d = in%d.v[i];\n", k, k);
      sb_printf(s, "    uint w;\n    if (ew_fast(");
      for (int k = 0; k < ni; k++) sb_printf(s, "a%d, ", k);
      sb_printf(s, "w)) ");
      if (never) sb_printf(s, "{}\n");
      else {
        sb_printf(s, "ew_exact(n, i");
        for (int k = 0; k < ni; k++) sb_printf(s, ", a%d", k);
        sb_printf(s, ");\n");
      }
      sb_printf(s, "    else out0.v[i] = 2u * i + 1u < n ? w : (w & 65535u);\n  }\n  } else");
    } else if (vec) {
      sb_printf(s, "  }\n");
    }
  }
  sb_printf(s, "}\n");
  return NXVK_OK;
}

int nxvk_cg_glsl(const nxvk_cg_program *p, const char *lib, char **out) {
  *out = NULL;
  if (p->ninputs < 0 || p->ninputs > NXVK_CG_MAX_INPUTS || p->nnodes < 1 ||
      p->nnodes > NXVK_CG_MAX_NODES || p->noutputs < 1 || p->noutputs > NXVK_CG_MAX_OUTPUTS)
    return nxvk_seterr(NXVK_E_BAD_REQUEST, "codegen: program out of bounds");
  bool paired = nxvk_cg_paired(p);
  const char *split = split_form(p);
  bool u8 = false, b16 = false, b64 = false;
  for (int v = 0; v < p->ninputs + p->nnodes; v++) {
    nxvk_dtype d = nxvk_cg_value_dtype(p, v);
    size_t sz = nxvk_dtype_size(d);
    u8 |= sz == 1;
    b16 |= sz == 2;
    b64 |= d == NXVK_I64 || d == NXVK_U64;
  }
  if (paired) u8 = b16 = false; /* every value in memory is a whole uint */
  sbuf s = {0};
  sb_printf(&s, "#version 450\n");
  if (u8)
    sb_printf(&s, "#extension GL_EXT_shader_8bit_storage : require\n"
                  "#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require\n");
  if (b16)
    sb_printf(&s, "#extension GL_EXT_shader_16bit_storage : require\n"
                  "#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require\n");
  if (b64) /* nx.glsl's 64-bit integer overloads exist only under NX_INT64 */
    sb_printf(&s, "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n"
                  "#define NX_INT64 1\n");
  sb_printf(&s, "#extension GL_EXT_control_flow_attributes : require\n"
                "layout(local_size_x_id = 0) in;\n"
                "layout(constant_id = 1) const uint UNROLL = 1u;\n"
                "layout(constant_id = 2) const uint BLOCKED = 0u;\n"
                "layout(push_constant) uniform PC { uint meta_off; } pc;\n"
                "layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };\n");
  int binding = 1;
  for (int i = 0; i < p->ninputs; i++)
    sb_printf(&s, "layout(std430, binding = %d) readonly buffer In%d { %s v[]; } in%d;\n",
              binding++, i, paired ? "uint" : glsl_storage(p->in_dtype[i]), i);
  for (int i = 0; i < p->noutputs; i++)
    sb_printf(&s, "layout(std430, binding = %d) writeonly buffer Out%d { %s v[]; } out%d;\n",
              binding++, i, paired ? "uint" : glsl_storage(nxvk_cg_value_dtype(p, p->output[i])), i);
  if (split && (p->fast16 & NXVK_EW16_VEC)) { /* the same buffers as 16-byte vectors */
    for (int i = 0; i < p->ninputs; i++)
      sb_printf(&s, "layout(std430, binding = %d) readonly buffer In%dv { uvec4 v[]; } in%dv;\n", 1 + i, i, i);
    sb_printf(&s, "layout(std430, binding = %d) writeonly buffer Out0v { uvec4 v[]; } out0v;\n", 1 + p->ninputs);
  }
  if (cg_hw(p)) sb_printf(&s, "#define NX_F16_HW %d\n", p->f16_cvt);
  if (lib) sb_printf(&s, "%s\n", lib);

  /* one function per distinct (op, dtype) */
  for (int i = 0; i < p->nnodes; i++) {
    bool seen = false;
    for (int j = 0; j < i && !seen; j++)
      seen = p->node[j].op == p->node[i].op && p->node[j].dtype == p->node[i].dtype;
    /* a split kernel's ew_eval is the exact path: the f32 functions */
    if (!seen) emit_op_function(&s, &p->node[i], split ? p->fast16 & ~(NXVK_EW16_ARITH | NXVK_EW16_EXP) : p->fast16);
  }

  if (paired) {
    int rc = split ? emit_paired_split(&s, p, split) : emit_paired_main(&s, p);
    if (rc || s.oom) {
      free(s.buf);
      return rc ? rc : nxvk_seterr(NXVK_E_NO_MEMORY, "codegen: out of memory");
    }
    *out = s.buf;
    return NXVK_OK;
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
    char ld[32];
    snprintf(ld, sizeof ld, "in%d.v[x%d]", k, k);
    sb_printf(&s, "      l%d[u] = ", k);
    if (glsl_load(d)) sb_printf(&s, glsl_load(d), ld);
    else sb_printf(&s, "%s(%s)", glsl_compute(d), ld);
    sb_printf(&s, ";\n");
  }
  sb_printf(&s, "    }\n"
                "    [[unroll]] for (uint u = 0u; u < UNROLL; u++) {\n"
                "      if (u * ustep >= n - i0) break;\n"
                "      uint i = i0 + u * ustep;\n");
  for (int k = 0; k < p->ninputs; k++)
    sb_printf(&s, "      %s v%d = l%d[u];\n", glsl_compute(p->in_dtype[k]), k, k);
  int rc = emit_nodes(&s, p, "      ");
  if (rc) {
    free(s.buf);
    return rc;
  }
  for (int i = 0; i < p->noutputs; i++) {
    nxvk_dtype d = nxvk_cg_value_dtype(p, p->output[i]);
    char vv[16];
    snprintf(vv, sizeof vv, "v%d", p->output[i]);
    sb_printf(&s, "      out%d.v[i] = ", i);
    if (glsl_store(d)) sb_printf(&s, glsl_store(d), vv);
    else sb_printf(&s, "%s(%s)", glsl_storage(d), vv);
    sb_printf(&s, ";\n");
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
