/*
 * spirv_khr.c - a GL_NV_cooperative_matrix kernel, as glslang compiled it,
 * rewritten as VK_KHR_cooperative_matrix SPIR-V, with bf16 A and B fragments
 * on request.
 *
 * bf16 on tensor cores needs SPV_KHR_cooperative_matrix with SPV_KHR_bfloat16
 * (NV cooperative matrices have no bf16 type), and Debian 12's glslang 12
 * knows neither GL_KHR_cooperative_matrix nor GL_EXT_bfloat16.  The KHR
 * instructions carry the NV ones' operands, with two additions: each matrix
 * type says its use (A, B or accumulator), and loads and stores take a
 * MemoryLayout constant (before the stride) instead of a column-major bool
 * (after it).  So the kernel is written and compiled for NV, and this pass:
 * - declares CooperativeMatrixKHR instead of CooperativeMatrixNV, and
 *   SPV_KHR_cooperative_matrix instead of the NV extension;
 * - gives every matrix type its use from the multiply-adds: the type of
 *   their A operands is MatrixA, of B MatrixB, of C and of the result the
 *   accumulator.  One type in two roles, or a 16-bit one in none, is refused:
 *   where A and B have one shape (16x16x16) the kernel gives B a dimension
 *   that is a specialization constant, so that B has a type of its own; the
 *   pass writes that dimension as a plain constant of the same value;
 * - with bf16_ab: makes the A and B types' 16-bit float component bf16 (a
 *   new OpTypeFloat 16 with the BFloat16KHR encoding; the f16 type stays for
 *   anything else), and declares BFloat16TypeKHR, BFloat16CooperativeMatrixKHR
 *   and SPV_KHR_bfloat16;
 * - turns loads, stores, multiply-adds and lengths (also inside
 *   OpSpecConstantOp, where glslang puts them) into the KHR opcodes.
 * A and B fragments are bits loaded and multiplied, never computed on (SPIR-V
 * allows no arithmetic on bf16): the kernels (dot_coopmat.comp's IN_BF16)
 * keep to that, and their results go through f32 accumulators.
 */
#include <stdlib.h>
#include <string.h>

#include "vkcore.h"

enum {
  OP_UNDEF = 1, OP_EXTENSION = 10, OP_CAPABILITY = 17, OP_TYPE_INT = 21, OP_TYPE_FLOAT = 22,
  OP_CONSTANT_TRUE = 41, OP_CONSTANT_FALSE = 42, OP_CONSTANT = 43, OP_SPEC_CONSTANT = 50, OP_SPEC_CONSTANT_OP = 52,
  OP_FUNCTION_CALL = 57, OP_LOAD = 61, OP_COMPOSITE_EXTRACT = 81, OP_COPY_OBJECT = 83, OP_SELECT = 169,
  OP_PHI = 245,
  NV_CAP = 5357, NV_TYPE = 5358, NV_LOAD = 5359, NV_STORE = 5360, NV_MULADD = 5361, NV_LENGTH = 5362,
  KHR_CAP = 6022, KHR_TYPE = 4456, KHR_LOAD = 4457, KHR_STORE = 4458, KHR_MULADD = 4459, KHR_LENGTH = 4460,
  CAP_BF16_TYPE = 5116, CAP_BF16_COOPMAT = 5118, ENCODING_BF16 = 0,
  USE_A = 0, USE_B = 1, USE_ACC = 2, USE_NONE = 3,
};

static const char NV_EXT[] = "SPV_NV_cooperative_matrix", KHR_EXT[] = "SPV_KHR_cooperative_matrix",
                  BF16_EXT[] = "SPV_KHR_bfloat16";

typedef struct {
  uint32_t *w;
  size_t n, cap;
} words_t;

static bool put(words_t *o, uint32_t v) {
  if (o->n == o->cap) {
    size_t cap = o->cap ? 2 * o->cap : 1024;
    uint32_t *p = realloc(o->w, cap * sizeof *p);
    if (!p) return false;
    o->w = p;
    o->cap = cap;
  }
  o->w[o->n++] = v;
  return true;
}

static bool put_string_op(words_t *o, uint32_t op, const char *s) {
  size_t len = strlen(s), nw = len / 4 + 1; /* the terminating zero included */
  bool ok = put(o, (uint32_t)(1 + nw) << 16 | op);
  for (size_t i = 0; i < nw && ok; i++) {
    uint32_t v = 0;
    for (size_t b = 0; b < 4; b++)
      if (4 * i + b < len) v |= (uint32_t)(unsigned char)s[4 * i + b] << (8 * b);
    ok = put(o, v);
  }
  return ok;
}

/* Instructions whose words 1 and 2 are a result type and id, among those
 * that can make a matrix value in a glslang kernel. */
static bool typed_result(uint32_t op) {
  switch (op) {
  case OP_UNDEF: case OP_FUNCTION_CALL: case OP_LOAD: case OP_COMPOSITE_EXTRACT: case OP_COPY_OBJECT:
  case OP_SELECT: case OP_PHI: case NV_LOAD: case NV_MULADD:
    return true;
  default:
    return false;
  }
}

typedef struct {
  uint32_t bound0, bound; /* the module's, and with the new ids */
  uint32_t *type_of;  /* value -> its type (typed_result instructions) */
  uint8_t *use;       /* matrix type -> USE_*; USE_NONE also for non-matrices */
  /* 1: a matrix type, 2: an OpConstant, 4: an OpSpecConstant, 8: true, 16: false, 32: made before the
   * first matrix type (a constant a matrix type may name), 64: a float type */
  uint8_t *flags;
  uint32_t *val, *ctype; /* constants' value and type */
  uint32_t *width;    /* OpTypeFloat / OpTypeInt width */
  words_t extra;      /* the new types and constants, before the first matrix type */
} pass_t;

/* A new id, defined by the 4-word instruction op a b c (a, b, c: the words
 * after the opcode, the id among them) added to extra; the per-id tables
 * grow by one.  *id is the new id, set before the words are written. */
static int new_id(pass_t *p, uint32_t op, uint32_t a, uint32_t b, uint32_t c, int at, uint32_t *id) {
  uint32_t nid = p->bound, nb = p->bound + 1;
  uint32_t *val = realloc(p->val, nb * sizeof *val), *ct = val ? realloc(p->ctype, nb * sizeof *ct) : NULL;
  if (val) p->val = val;
  if (ct) p->ctype = ct;
  uint8_t *fl = ct ? realloc(p->flags, nb) : NULL;
  if (!fl) return nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  p->flags = fl;
  p->bound = nb;
  p->flags[nid] = 0;
  uint32_t w[3] = {a, b, c};
  w[at] = nid;
  if (!put(&p->extra, 4u << 16 | op) || !put(&p->extra, w[0]) || !put(&p->extra, w[1]) || !put(&p->extra, w[2]))
    return nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  *id = nid;
  return NXVK_OK;
}

/* A 32-bit integer constant of type t with value v: one made before the
 * first matrix type, else a new one in extra. */
static int new_constant(pass_t *p, uint32_t t, uint32_t v, uint32_t *id) {
  for (uint32_t i = 1; i < p->bound; i++)
    if ((p->flags[i] & (2 | 32)) == (2 | 32) && p->ctype[i] == t && p->val[i] == v) {
      *id = i;
      return NXVK_OK;
    }
  int rc = new_id(p, OP_CONSTANT, t, 0, v, 1, id);
  if (rc == NXVK_OK) {
    p->flags[*id] = 2 | 32;
    p->val[*id] = v;
    p->ctype[*id] = t;
  }
  return rc;
}

static int set_use(pass_t *p, uint32_t type, int use, const char *what) {
  if (type >= p->bound0 || !(p->flags[type] & 1))
    return nxvk_seterr(NXVK_E_BAD_REQUEST, "SPIR-V to KHR: a multiply-add's %s is not a cooperative matrix", what);
  if (p->use[type] != USE_NONE && p->use[type] != use)
    return nxvk_seterr(NXVK_E_BAD_REQUEST,
                       "SPIR-V to KHR: matrix type %u is used as two of A, B and the accumulator (give B a type "
                       "of its own)",
                       type);
  p->use[type] = (uint8_t)use;
  return NXVK_OK;
}

/* The plain constant standing for a matrix dimension (a specialization constant's default). */
static int dimension(pass_t *p, uint32_t id, uint32_t *out) {
  *out = id;
  if (id < p->bound0 && (p->flags[id] & 4)) return new_constant(p, p->ctype[id], p->val[id], out);
  if (id >= p->bound0 || !(p->flags[id] & 2))
    return nxvk_seterr(NXVK_E_BAD_REQUEST, "SPIR-V to KHR: a matrix dimension is not a constant");
  return NXVK_OK;
}

static void pass_free(pass_t *p) {
  free(p->type_of);
  free(p->use);
  free(p->flags);
  free(p->val);
  free(p->ctype);
  free(p->width);
  free(p->extra.w);
}

int nxvk_spirv_coopmat_khr(uint32_t **words, size_t *bytes, bool bf16_ab) {
  uint32_t *w = *words;
  size_t n = *bytes / 4;
  if (n < 5 || w[0] != 0x07230203u) return nxvk_seterr(NXVK_E_BAD_REQUEST, "SPIR-V to KHR: not a SPIR-V module");
  pass_t p = {.bound0 = w[3], .bound = w[3]};
  size_t nb = p.bound ? p.bound : 1;
  p.type_of = calloc(nb, sizeof *p.type_of);
  p.use = malloc(nb);
  p.flags = calloc(nb, 1);
  p.val = calloc(nb, sizeof *p.val);
  p.ctype = calloc(nb, sizeof *p.ctype);
  p.width = calloc(nb, sizeof *p.width);
  if (!p.type_of || !p.use || !p.flags || !p.val || !p.ctype || !p.width) {
    pass_free(&p);
    return nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  }
  memset(p.use, USE_NONE, nb);
  int rc = NXVK_OK;
  size_t first_type = 0, nv_cap = 0;
  /* 1: what every id is */
  for (size_t i = 5; i < n && rc == NXVK_OK;) {
    uint32_t wc = w[i] >> 16, op = w[i] & 0xffffu;
    if (wc == 0 || i + wc > n) {
      rc = nxvk_seterr(NXVK_E_BAD_REQUEST, "SPIR-V to KHR: malformed instruction at word %zu", i);
      break;
    }
    const uint32_t *a = w + i;
    bool ids_ok = wc < 3 || (a[1] < p.bound && a[2] < p.bound);
    if (!ids_ok && (op == OP_CONSTANT || op == OP_SPEC_CONSTANT || typed_result(op))) {
      rc = nxvk_seterr(NXVK_E_BAD_REQUEST, "SPIR-V to KHR: an id past the bound at word %zu", i);
      break;
    }
    if (op == OP_CAPABILITY && wc == 2 && a[1] == NV_CAP) nv_cap++;
    if ((op == OP_TYPE_FLOAT || op == OP_TYPE_INT) && wc >= 3 && a[1] < p.bound) {
      p.width[a[1]] = a[2];
      if (op == OP_TYPE_FLOAT) p.flags[a[1]] |= 64;
    }
    if ((op == OP_CONSTANT || op == OP_SPEC_CONSTANT) && wc == 4) {
      p.flags[a[2]] |= (op == OP_CONSTANT ? 2 : 4) | (first_type ? 0 : 32);
      p.ctype[a[2]] = a[1];
      p.val[a[2]] = a[3];
    }
    if ((op == OP_CONSTANT_TRUE || op == OP_CONSTANT_FALSE) && wc == 3 && a[2] < p.bound) p.flags[a[2]] |= op == OP_CONSTANT_TRUE ? 8 : 16;
    if (op == NV_TYPE) {
      if (wc != 6 || a[1] >= p.bound) {
        rc = nxvk_seterr(NXVK_E_BAD_REQUEST, "SPIR-V to KHR: malformed matrix type at word %zu", i);
        break;
      }
      p.flags[a[1]] |= 1;
      if (!first_type) first_type = i;
    }
    if (typed_result(op) && wc >= 3) p.type_of[a[2]] = a[1];
    i += wc;
  }
  if (rc == NXVK_OK && (!nv_cap || !first_type))
    rc = nxvk_seterr(NXVK_E_BAD_REQUEST, "SPIR-V to KHR: the module has no NV cooperative matrices");
  /* 2: uses from the multiply-adds */
  for (size_t i = 5; i < n && rc == NXVK_OK; i += w[i] >> 16) {
    if ((w[i] & 0xffffu) != NV_MULADD) continue;
    if ((w[i] >> 16) != 6) {
      rc = nxvk_seterr(NXVK_E_BAD_REQUEST, "SPIR-V to KHR: malformed multiply-add at word %zu", i);
      break;
    }
    const uint32_t *a = w + i;
    uint32_t ta = a[3] < p.bound0 ? p.type_of[a[3]] : 0, tb = a[4] < p.bound0 ? p.type_of[a[4]] : 0,
             tc = a[5] < p.bound0 ? p.type_of[a[5]] : 0;
    rc = set_use(&p, ta, USE_A, "A");
    if (rc == NXVK_OK) rc = set_use(&p, tb, USE_B, "B");
    if (rc == NXVK_OK) rc = set_use(&p, tc, USE_ACC, "C");
    if (rc == NXVK_OK) rc = set_use(&p, a[1], USE_ACC, "result");
  }
  /* 3: the new bf16 type and the constants, made before the output */
  uint32_t bf16 = 0, int_t = 0, use_id[3] = {0}, layout_id[2] = {0};
  if (rc == NXVK_OK && bf16_ab) rc = new_id(&p, OP_TYPE_FLOAT, 0, 16, ENCODING_BF16, 0, &bf16);
  if (rc == NXVK_OK) {
    uint32_t rows = w[first_type + 4]; /* its type is a 32-bit integer type */
    int_t = rows < p.bound0 ? p.ctype[rows] : 0;
    if (!int_t || int_t >= p.bound0 || p.width[int_t] != 32 || (p.flags[int_t] & 64))
      rc = nxvk_seterr(NXVK_E_BAD_REQUEST, "SPIR-V to KHR: a matrix dimension is not a 32-bit constant");
  }
  for (int u = 0; u < 3 && rc == NXVK_OK; u++) rc = new_constant(&p, int_t, (uint32_t)u, &use_id[u]);
  for (int l = 0; l < 2 && rc == NXVK_OK; l++) rc = new_constant(&p, int_t, (uint32_t)l, &layout_id[l]);
  /* 4: the output */
  words_t o = {0};
  if (rc == NXVK_OK && (!put(&o, w[0]) || !put(&o, w[1]) || !put(&o, w[2]) || !put(&o, 0) || !put(&o, w[4])))
    rc = nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  bool mem_ok = true;
  for (size_t i = 5; i < n && rc == NXVK_OK && mem_ok; i += w[i] >> 16) {
    uint32_t wc = w[i] >> 16, op = w[i] & 0xffffu;
    const uint32_t *a = w + i;
    if (i == first_type)
      for (size_t k = 0; k < p.extra.n && mem_ok; k++) mem_ok = put(&o, p.extra.w[k]);
    if (op == OP_CAPABILITY && wc == 2 && a[1] == NV_CAP) {
      mem_ok = put(&o, 2u << 16 | OP_CAPABILITY) && put(&o, KHR_CAP);
      if (bf16_ab)
        mem_ok = mem_ok && put(&o, 2u << 16 | OP_CAPABILITY) && put(&o, CAP_BF16_TYPE) &&
                 put(&o, 2u << 16 | OP_CAPABILITY) && put(&o, CAP_BF16_COOPMAT);
    } else if (op == OP_EXTENSION && (wc - 1) * 4 > strlen(NV_EXT) &&
               strncmp((const char *)(a + 1), NV_EXT, (wc - 1) * 4) == 0) {
      mem_ok = put_string_op(&o, OP_EXTENSION, KHR_EXT) && (!bf16_ab || put_string_op(&o, OP_EXTENSION, BF16_EXT));
    } else if (op == NV_TYPE) {
      int use = p.use[a[1]]; /* a[1] < bound0: checked in 1 */
      if (use == USE_NONE) {
        if (a[2] < p.bound0 && p.width[a[2]] == 32) use = USE_ACC; /* f32 matrices no product reads */
        else {
          rc = nxvk_seterr(NXVK_E_BAD_REQUEST, "SPIR-V to KHR: matrix type %u is in no multiply-add", a[1]);
          break;
        }
      }
      uint32_t rows, cols;
      rc = dimension(&p, a[4], &rows);
      if (rc == NXVK_OK) rc = dimension(&p, a[5], &cols);
      if (rc) break;
      uint32_t comp = a[2];
      if (use != USE_ACC && bf16_ab) {
        if (comp >= p.bound0 || p.width[comp] != 16 || !(p.flags[comp] & 64)) {
          rc = nxvk_seterr(NXVK_E_BAD_REQUEST, "SPIR-V to KHR: an A or B matrix is not of 16-bit floats");
          break;
        }
        comp = bf16;
      }
      mem_ok = put(&o, 7u << 16 | KHR_TYPE) && put(&o, a[1]) && put(&o, comp) && put(&o, a[3]) && put(&o, rows) &&
               put(&o, cols) && put(&o, use_id[use]);
    } else if (op == NV_LOAD || op == NV_STORE) {
      /* load: type result pointer stride colmajor [memory]; store: pointer object stride colmajor [memory] */
      size_t s = op == NV_LOAD ? 4 : 3;
      if (wc < s + 2) {
        rc = nxvk_seterr(NXVK_E_BAD_REQUEST, "SPIR-V to KHR: malformed matrix load or store at word %zu", i);
        break;
      }
      uint32_t cm = a[s + 1];
      int major = cm < p.bound0 ? (p.flags[cm] & 8 ? 1 : p.flags[cm] & 16 ? 0 : -1) : -1;
      if (major < 0) {
        rc = nxvk_seterr(NXVK_E_BAD_REQUEST, "SPIR-V to KHR: a matrix load or store's layout is not a constant");
        break;
      }
      mem_ok = put(&o, wc << 16 | (op == NV_LOAD ? KHR_LOAD : KHR_STORE));
      for (size_t k = 1; k < s && mem_ok; k++) mem_ok = put(&o, a[k]);
      mem_ok = mem_ok && put(&o, layout_id[major]) && put(&o, a[s]);
      for (size_t k = s + 2; k < wc && mem_ok; k++) mem_ok = put(&o, a[k]);
    } else {
      uint32_t nop = op == NV_MULADD ? KHR_MULADD : op == NV_LENGTH ? KHR_LENGTH : op;
      mem_ok = put(&o, wc << 16 | nop);
      for (size_t k = 1; k < wc && mem_ok; k++)
        /* glslang writes a matrix's length as a specialization-constant operation */
        mem_ok = put(&o, op == OP_SPEC_CONSTANT_OP && k == 3 && a[k] == NV_LENGTH ? KHR_LENGTH : a[k]);
    }
  }
  if (rc == NXVK_OK && !mem_ok) rc = nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  if (rc == NXVK_OK) {
    o.w[3] = p.bound;
    free(*words);
    *words = o.w;
    *bytes = o.n * 4;
  } else {
    free(o.w);
  }
  pass_free(&p);
  return rc;
}
