/* test_spirv_khr.c - TAP tests for the pass that makes a glslang-compiled
 * GL_NV_cooperative_matrix kernel VK_KHR_cooperative_matrix SPIR-V with bf16
 * A and B fragments (src/vk/spirv_khr.c).  No device runs the result here
 * (lavapipe has no cooperative matrices, and Debian 12's spirv-val predates
 * both KHR extensions), so the output is read back word by word: opcodes,
 * capabilities, extensions, each matrix type's use and component, the
 * layouts of loads and stores, plain-constant dimensions, ids defined before
 * the types that name them; and the kernels it must refuse are refused. */
#define _POSIX_C_SOURCE 200809L

#include "nxvk.h"
#include "ops/ops.h"
#include "tap.h"
#include "rtkernels.h"
#include "vk/vkcore.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A: f16 16x16, row major; B: its own type (rows a specialization
 * constant), column major; accumulators in a function array (loads of a
 * variable), a loop (a phi or loads across blocks), a length, a store. */
static const char *good =
    "#version 450\n"
    "#extension GL_NV_cooperative_matrix : require\n"
    "#extension GL_KHR_memory_scope_semantics : require\n"
    "#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require\n"
    "layout(local_size_x = 32) in;\n"
    "layout(constant_id = 9) const uint FKB = 16;\n"
    "layout(std430, binding = 0) buffer A { uvec4 a[]; };\n"
    "layout(std430, binding = 1) buffer C { float c[]; };\n"
    "shared uvec4 sh[512];\n"
    "void main() {\n"
    "  fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc[2];\n"
    "  acc[0] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);\n"
    "  acc[1] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);\n"
    "  for (uint k = 0; k < 4; k++) {\n"
    "    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> fa;\n"
    "    fcoopmatNV<16, gl_ScopeSubgroup, FKB, 16> fb;\n"
    "    coopMatLoadNV(fa, a, 64 * k, 2, false);\n"
    "    coopMatLoadNV(fb, sh, 64 * k, 3, true);\n"
    "    acc[k & 1] = coopMatMulAddNV(fa, fb, acc[k & 1]);\n"
    "  }\n"
    "  c[0] = float(acc[0].length());\n"
    "  coopMatStoreNV(acc[0], c, 16, 5, false);\n"
    "  coopMatStoreNV(acc[1], c, 512, 7, true);\n"
    "}\n";

/* A and B of one type: the pass cannot tell their uses apart */
static const char *one_type =
    "#version 450\n"
    "#extension GL_NV_cooperative_matrix : require\n"
    "#extension GL_KHR_memory_scope_semantics : require\n"
    "#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require\n"
    "layout(local_size_x = 32) in;\n"
    "layout(std430, binding = 0) buffer A { uvec4 a[]; };\n"
    "layout(std430, binding = 1) buffer C { float c[]; };\n"
    "void main() {\n"
    "  fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> fa, fb;\n"
    "  fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);\n"
    "  coopMatLoadNV(fa, a, 0, 2, false);\n"
    "  coopMatLoadNV(fb, a, 64, 2, false);\n"
    "  acc = coopMatMulAddNV(fa, fb, acc);\n"
    "  coopMatStoreNV(acc, c, 0, 16, false);\n"
    "}\n";

static const char *plain =
    "#version 450\n"
    "layout(local_size_x = 1) in;\n"
    "layout(std430, binding = 0) buffer B { float v[]; } b;\n"
    "void main() { b.v[0] = b.v[1] * 2.0; }\n";

/* ---- reading the output back ---- */

typedef struct {
  const uint32_t *w;
  size_t n;
  uint32_t bound;
  size_t *def_at;      /* id -> word index of its definition (0: none) */
  uint32_t *def_op;    /* id -> defining opcode */
} module;

/* Where an instruction's result id is: 1 for types, 2 for typed results. */
static int result_word(uint32_t op) {
  switch (op) {
  case 19: case 20: case 21: case 22: case 23: case 24: case 28: case 29: case 30: case 32: case 33: case 4456:
  case 5358: case 11: case 248:
    return 1;
  case 41: case 42: case 43: case 44: case 46: case 48: case 49: case 50: case 51: case 59: case 61: case 65:
  case 80: case 81: case 83: case 245: case 4457: case 4459: case 4460: case 124: case 112: case 128: case 132:
  case 177: case 170: case 171: case 172: case 173: case 174: case 175: case 176: case 180: case 57: case 54:
  case 55:
    return 2;
  default:
    return 0;
  }
}

static bool module_read(module *m, const uint32_t *w, size_t bytes) {
  memset(m, 0, sizeof *m);
  m->w = w;
  m->n = bytes / 4;
  if (m->n < 5 || w[0] != 0x07230203u) return false;
  m->bound = w[3];
  m->def_at = calloc(m->bound, sizeof *m->def_at);
  m->def_op = calloc(m->bound, sizeof *m->def_op);
  for (size_t i = 5; i < m->n;) {
    uint32_t wc = w[i] >> 16, op = w[i] & 0xffff;
    if (wc == 0 || i + wc > m->n) return false;
    int r = result_word(op);
    if (r && (size_t)r < wc) {
      uint32_t id = w[i + r];
      if (id == 0 || id >= m->bound || m->def_at[id]) return false; /* past the bound, or defined twice */
      m->def_at[id] = i;
      m->def_op[id] = op;
    }
    i += wc;
  }
  return true;
}

static uint32_t constant_value(const module *m, uint32_t id, bool *plain_constant) {
  *plain_constant = id < m->bound && m->def_op[id] == 43;
  return id < m->bound && m->def_at[id] && (m->def_op[id] == 43 || m->def_op[id] == 50) ? m->w[m->def_at[id] + 3]
                                                                                          : 0xffffffffu;
}

static bool has_capability(const module *m, uint32_t cap) {
  for (size_t i = 5; i < m->n; i += m->w[i] >> 16)
    if ((m->w[i] & 0xffff) == 17 && m->w[i + 1] == cap) return true;
  return false;
}

static bool has_extension(const module *m, const char *name) {
  for (size_t i = 5; i < m->n; i += m->w[i] >> 16)
    if ((m->w[i] & 0xffff) == 10 && strcmp((const char *)(m->w + i + 1), name) == 0) return true;
  return false;
}

/* Instructions with opcode op, also as an OpSpecConstantOp's operation
 * (where glslang puts a matrix's length). */
static size_t count_op(const module *m, uint32_t op) {
  size_t k = 0;
  for (size_t i = 5; i < m->n; i += m->w[i] >> 16)
    k += (m->w[i] & 0xffff) == op || ((m->w[i] & 0xffff) == 52 && (m->w[i] >> 16) >= 4 && m->w[i + 3] == op);
  return k;
}

/* The type of a value (its defining instruction's word 1). */
static uint32_t type_of(const module *m, uint32_t id) {
  return id < m->bound && m->def_at[id] && result_word(m->def_op[id]) == 2 ? m->w[m->def_at[id] + 1] : 0;
}

static void test_good(void) {
  uint32_t *words = NULL;
  size_t bytes = 0;
  int rc = nxvk_glsl_compile(good, "good", &words, &bytes);
  CHECK(rc == 0, "the NV kernel compiles: %s", rc ? nxvk_errmsg() : "ok");
  if (rc) return;
  uint32_t bound0 = words[3];
  module before;
  bool ok = module_read(&before, words, bytes);
  size_t nv_loads = count_op(&before, 5359), nv_stores = count_op(&before, 5360), nv_muladds = count_op(&before, 5361);
  CHECK(ok && nv_loads == 2 && nv_stores == 2 && nv_muladds == 1 && count_op(&before, 5362) == 1,
        "glslang wrote NV loads %zu, stores %zu, multiply-adds %zu", nv_loads, nv_stores, nv_muladds);
  free(before.def_at);
  free(before.def_op);
  rc = nxvk_spirv_coopmat_khr(&words, &bytes, true);
  CHECK(rc == 0, "the pass rewrites it: %s", rc ? nxvk_errmsg() : "ok");
  if (rc) {
    free(words);
    return;
  }
  module m;
  ok = module_read(&m, words, bytes);
  CHECK(ok, "the output is whole: every instruction in bounds, every id below the bound (%u, was %u), defined once",
        m.bound, bound0);
  if (!ok) goto done;
  size_t nv = 0;
  for (uint32_t op = 5357; op <= 5362; op++) nv += count_op(&m, op);
  CHECK(nv == 0 && !has_capability(&m, 5357) && !has_extension(&m, "SPV_NV_cooperative_matrix"),
        "no NV cooperative-matrix instruction, capability or extension is left (%zu)", nv);
  CHECK(has_capability(&m, 6022) && has_capability(&m, 5116) && has_capability(&m, 5118),
        "capabilities CooperativeMatrixKHR, BFloat16TypeKHR and BFloat16CooperativeMatrixKHR");
  CHECK(has_extension(&m, "SPV_KHR_cooperative_matrix") && has_extension(&m, "SPV_KHR_bfloat16"),
        "extensions SPV_KHR_cooperative_matrix and SPV_KHR_bfloat16");
  CHECK(count_op(&m, 4457) == nv_loads && count_op(&m, 4458) == nv_stores && count_op(&m, 4459) == nv_muladds &&
            count_op(&m, 4460) == 1,
        "as many KHR loads, stores, multiply-adds and lengths as NV ones");
  /* the multiply-add's operand types */
  uint32_t ta = 0, tb = 0, tc = 0, tr = 0;
  for (size_t i = 5; i < m.n; i += m.w[i] >> 16)
    if ((m.w[i] & 0xffff) == 4459) {
      tr = m.w[i + 1];
      ta = type_of(&m, m.w[i + 3]);
      tb = type_of(&m, m.w[i + 4]);
      tc = type_of(&m, m.w[i + 5]);
    }
  CHECK(ta && tb && tc && m.def_op[ta] == 4456 && m.def_op[tb] == 4456 && m.def_op[tc] == 4456 && ta != tb &&
            tc == tr,
        "A, B and C are KHR matrix types, A's and B's distinct, C's the result's (%u %u %u %u)", ta, tb, tc, tr);
  if (!(ta && tb && tc && m.def_op[ta] == 4456 && m.def_op[tb] == 4456 && m.def_op[tc] == 4456)) goto done;
  const uint32_t *A = m.w + m.def_at[ta], *B = m.w + m.def_at[tb], *C = m.w + m.def_at[tc];
  bool pa, pb, pc;
  CHECK(constant_value(&m, A[6], &pa) == 0 && pa && constant_value(&m, B[6], &pb) == 1 && pb &&
            constant_value(&m, C[6], &pc) == 2 && pc,
        "uses: A MatrixA (0), B MatrixB (1), C the accumulator (2), each a plain constant");
  const uint32_t *fa = m.w + m.def_at[A[2]], *fc = m.w + m.def_at[C[2]];
  CHECK(m.def_op[A[2]] == 22 && (fa[0] >> 16) == 4 && fa[2] == 16 && fa[3] == 0 && A[2] == B[2],
        "A and B hold one bf16 type (OpTypeFloat 16 with encoding BFloat16KHR)");
  CHECK(m.def_op[C[2]] == 22 && (fc[0] >> 16) == 3 && fc[2] == 32, "C holds f32");
  /* dimensions: plain constants of 16, B's rows no longer the specialization constant */
  bool all_plain = true, all_16 = true, before_use = true;
  const uint32_t *types[3] = {A, B, C};
  for (int t = 0; t < 3; t++)
    for (int k = 2; k <= 6; k++) {
      uint32_t id = types[t][k];
      before_use &= m.def_at[id] && m.def_at[id] < (size_t)(types[t] - m.w);
      if (k == 4 || k == 5) {
        bool p;
        all_16 &= constant_value(&m, id, &p) == 16;
        all_plain &= p;
      }
    }
  CHECK(all_plain && all_16, "every dimension is a plain constant 16 (B's rows were a specialization constant)");
  CHECK(before_use, "every id a matrix type names is defined before it");
  /* loads: A row major (0), B column major (1), strides kept after the layout */
  int loads_ok = 0, stores_ok = 0;
  for (size_t i = 5; i < m.n; i += m.w[i] >> 16) {
    uint32_t op = m.w[i] & 0xffff;
    bool p1, p2;
    if (op == 4457) {
      uint32_t layout = constant_value(&m, m.w[i + 4], &p1), stride = constant_value(&m, m.w[i + 5], &p2);
      if (m.w[i + 1] == ta && layout == 0 && stride == 2 && p1) loads_ok++;
      if (m.w[i + 1] == tb && layout == 1 && stride == 3 && p1) loads_ok++;
    }
    if (op == 4458) {
      uint32_t layout = constant_value(&m, m.w[i + 3], &p1), stride = constant_value(&m, m.w[i + 4], &p2);
      if ((layout == 0 && stride == 5) || (layout == 1 && stride == 7)) stores_ok++;
    }
  }
  CHECK(loads_ok == 2, "loads: A's layout RowMajor and stride 2, B's ColumnMajor and stride 3 (%d of 2)", loads_ok);
  CHECK(stores_ok == 2, "stores: RowMajor with stride 5, ColumnMajor with stride 7 (%d of 2)", stores_ok);
  /* a second pass finds nothing to rewrite */
  rc = nxvk_spirv_coopmat_khr(&words, &bytes, true);
  CHECK(rc == NXVK_E_BAD_REQUEST && strstr(nxvk_errmsg(), "no NV cooperative matrices"),
        "a rewritten module is refused a second time: %s", nxvk_errmsg());
done:
  free(m.def_at);
  free(m.def_op);
  free(words);
}

static void test_refusals(void) {
  uint32_t *words = NULL;
  size_t bytes = 0;
  int rc = nxvk_glsl_compile(one_type, "one_type", &words, &bytes);
  CHECK(rc == 0, "the one-type kernel compiles: %s", rc ? nxvk_errmsg() : "ok");
  if (rc == 0) {
    uint32_t *kept = words;
    rc = nxvk_spirv_coopmat_khr(&words, &bytes, true);
    CHECK(rc == NXVK_E_BAD_REQUEST && strstr(nxvk_errmsg(), "two of A, B and the accumulator") && words == kept,
          "A and B of one type are refused, the module left as it was: %s", nxvk_errmsg());
    /* cut inside an instruction past the middle: refused without reading past the end */
    size_t i = 5, n = bytes / 4;
    while (i < n && (i < n / 2 || (words[i] >> 16) < 2)) i += words[i] >> 16;
    size_t cut = (i + 1) * 4;
    rc = i < n ? nxvk_spirv_coopmat_khr(&words, &cut, true) : -1;
    CHECK(rc == NXVK_E_BAD_REQUEST && strstr(nxvk_errmsg(), "malformed instruction"),
          "a module cut inside an instruction (word %zu of %zu) is refused: %s", i + 1, n, nxvk_errmsg());
    free(words);
  }
  rc = nxvk_glsl_compile(plain, "plain", &words, &bytes);
  if (rc == 0) rc = nxvk_spirv_coopmat_khr(&words, &bytes, true);
  CHECK(rc == NXVK_E_BAD_REQUEST && strstr(nxvk_errmsg(), "no NV cooperative matrices"),
        "a kernel without cooperative matrices is refused: %s", nxvk_errmsg());
  free(words);
  uint32_t junk[3] = {1, 2, 3};
  uint32_t *jp = malloc(sizeof junk);
  memcpy(jp, junk, sizeof junk);
  size_t jb = sizeof junk;
  rc = nxvk_spirv_coopmat_khr(&jp, &jb, true);
  CHECK(rc == NXVK_E_BAD_REQUEST && strstr(nxvk_errmsg(), "not a SPIR-V module"), "three words of junk are refused: %s",
        nxvk_errmsg());
  free(jp);
}

/* A skinny columns kernel's (dot_mvcm's) loads and stores: how many take
 * each layout (0 RowMajor, 1 ColumnMajor, 2 another or not a plain constant),
 * and the multiply-adds' A, B and accumulator types as rows x cols (the
 * last multiply-add's; 0 where not found). */
static void mvcm_layouts(const module *m, int count[3], uint32_t dims[3][2]) {
  count[0] = count[1] = count[2] = 0;
  memset(dims, 0, 3 * 2 * sizeof dims[0][0]);
  for (size_t i = 5; i < m->n; i += m->w[i] >> 16) {
    uint32_t op = m->w[i] & 0xffff;
    bool p;
    if (op == 4457 || op == 4458) {
      uint32_t layout = constant_value(m, m->w[i + (op == 4457 ? 4 : 3)], &p);
      count[p && layout <= 1 ? layout : 2]++;
    }
    if (op == 4459)
      for (int k = 0; k < 3; k++) {
        uint32_t t = type_of(m, m->w[i + 3 + k]);
        if (t && m->def_op[t] == 4456) {
          dims[k][0] = constant_value(m, m->w[m->def_at[t] + 4], &p);
          dims[k][1] = constant_value(m, m->w[m->def_at[t] + 5], &p);
        }
      }
  }
}

/* The kernels that take the pass: bench peak's bf16 and KHR f16 rates and
 * dot's bf16 (b32, b16) and KHR f16 (k32, k16) layouts ask for it (bf16:
 * NXVK_SPIRV_KHR_BF16, f16: NXVK_SPIRV_KHR), compile and are rewritten;
 * NV f16 kernels and the emulations do not ask. */
static void test_kernels(void) {
  static const char *const names[] = {"peakcm_16x16x16_bf16", "peakcm_16x8x16_bf16", "peakcm_16x16x16_f16k",
                                      "dotcm_2x4_4x4_k32_16x16x16_s1_p2_g0_o0_b32",
                                      "dotcm_2x2_4x4_k32_16x16x16_s2_p1_g0_o1_b16",
                                      "dotcm_2x4_4x4_k32_16x16x16_s1_p2_g0_o0_k32", "dotcm_4x4_2x4_k32_16x16x16_s1_p2_g0_o0_k16",
                                      "dotcm_2x4_4x4_k32_16x16x16_s1_p2_g8_o3_k16",
                                      "dotcm_2x2_4x8_k32_16x8x16_s2_p2_g0_o0_k32",
                                      /* the skinny products' tensor-core forms (bf16; k: f16 as KHR) */
                                      "dot_mvrcm_n16f16x16x16u4k1w128a2_bf16", "dot_mvrcm32_n5f16x16x16u1k4w256a1_bf16",
                                      "dot_mvrcm_n8f16x8x16u4k2w256a2_bf16", "dot_mvrcm_n16f16x16x16u4k1w128a2k_f16",
                                      "dot_mvrcm32_n11f16x16x16u2k4w128a1k_f16", "dot_mvcm_f16x16x16c4p1l1_bf16",
                                      "dot_mvcm32_f16x16x16c2p4l0_bf16", "dot_mvcm_f16x8x16c4p1l1_bf16",
                                      "dot_mvcm_f16x16x16c4p1l1k_f16", "dot_mvcm32_f16x16x16c8p2l0k_f16",
                                      /* its transposed form (m = 8 on 16x8x16, and m = 16): every load and store
                                       * column-major */
                                      "dot_mvcm_t16x8x16c4p1l1_bf16", "dot_mvcm32_t16x8x16c2p4l0_bf16",
                                      "dot_mvcm_t16x16x16c4p1l1_bf16", "dot_mvcm_t16x8x16c4p1l1k_f16",
                                      "dot_mvcm32_t16x8x16c8p2l0k_f16", "dot_mvcm_t16x8x8c4p1l1k_f16",
                                      /* z: A^T staged with zero columns (m = 8 where only 16x16x16 is listed) */
                                      "dot_mvcm_t16x16x16c4p1l1z_bf16", "dot_mvcm32_t16x8x16c8p2l1zk_f16"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    char *glsl;
    uint32_t *words;
    size_t bytes;
    bool bf16 = strstr(names[i], "bf16") || strstr(names[i], "_b32") || strstr(names[i], "_b16");
    int rc = rt_kernel_spirv(names[i], &glsl, &words, &bytes);
    bool asks = glsl && strstr(glsl, bf16 ? "\n#define NXVK_SPIRV_KHR_BF16 1\n" : "\n#define NXVK_SPIRV_KHR 1\n");
    if (rc == NXVK_OK) rc = nxvk_spirv_coopmat_khr(&words, &bytes, bf16);
    module m = {0};
    bool whole = rc == NXVK_OK && module_read(&m, words, bytes);
    CHECK(asks && whole && count_op(&m, 4459) > 0 && count_op(&m, 5361) == 0 && has_capability(&m, 6022) &&
              has_capability(&m, 5118) == bf16,
          "%s asks for the pass, compiles and is rewritten (%s)", names[i], rc ? nxvk_errmsg() : "ok");
    unsigned f1, f2, f3;
    char form;
    if (whole && (sscanf(names[i], "dot_mvcm_%c%ux%ux%u", &form, &f1, &f2, &f3) == 4 ||
                  sscanf(names[i], "dot_mvcm32_%c%ux%ux%u", &form, &f1, &f2, &f3) == 4)) {
      /* the plain form: A (16 x FK) times B (FK x FN), every layout row-major; the transposed one (t FN x FM x
       * FK): B^T (FN x FK) times A^T (FK x FM) into FN x FM, every layout column-major */
      int count[3];
      uint32_t dims[3][2];
      mvcm_layouts(&m, count, dims);
      int want = form == 't' ? 1 : 0;
      CHECK(count[want] > 0 && count[1 - want] == 0 && count[2] == 0 && dims[0][0] == f1 && dims[0][1] == f3 &&
                dims[1][0] == f3 && dims[1][1] == f2 && dims[2][0] == f1 && dims[2][1] == f2,
            "%s: %d loads and stores %s (%d and %d others), products %ux%u . %ux%u -> %ux%u", names[i], count[want],
            want ? "ColumnMajor" : "RowMajor", count[1 - want], count[2], dims[0][0], dims[0][1], dims[1][0],
            dims[1][1], dims[2][0], dims[2][1]);
    }
    free(m.def_at);
    free(m.def_op);
    free(glsl);
    free(words);
  }
  static const char *const nv[] = {"peakcm_16x16x16_f16", "dotcm_2x4_4x4_k32_16x16x16_s1_p1_g0_o0_f32",
                                   "dotcm_2x4_4x4_k32_16x16x16_s1_p1_g0_o0_f16_emu",
                                   "dotcm_2x4_4x4_k32_16x16x16_s1_p1_g0_o0_b32_emu",
                                   "dot_mvrcm_n16f16x16x16u4k1w128a2_f16", "dot_mvrcm_n16f16x16x16u4k1w128a2e_bf16",
                                   "dot_mvrcm_n16f16x16x16u4k1w128a2e_f16", "dot_mvcm_f16x16x16c4p1l1_f16",
                                   "dot_mvcm_f16x16x16c4p1l1e_bf16", "dot_mvcm32_f16x16x16c4p1l0e_f16",
                                   "dot_mvcm_t16x8x16c4p1l1_f16", "dot_mvcm_t16x8x16c4p1l1e_bf16",
                                   "dot_mvcm32_t16x16x16c2p1l0e_f16", "dot_mvcm_t16x8x16c4p1l1ze_bf16"};
  for (size_t i = 0; i < sizeof nv / sizeof *nv; i++) {
    char *glsl = NULL;
    int rc = nxvk_rt_kernel_glsl(nv[i], &glsl);
    CHECK(rc == NXVK_OK && !strstr(glsl, "#define NXVK_SPIRV_KHR"), "%s does not ask for it", nv[i]);
    free(glsl);
  }
  char *glsl = NULL;
  int rc = nxvk_rt_kernel_glsl("dotcm_2x4_4x4_k32_16x16x16_s1_p1_g0_o0_k32_emu", &glsl);
  CHECK(rc == NXVK_E_UNSUPPORTED, "a KHR f16 name with the emulation is unknown: %s", nxvk_errmsg());
  rc = nxvk_rt_kernel_glsl("peakcm_16x16x16_bf16x", &glsl);
  CHECK(rc == NXVK_E_UNSUPPORTED, "a name with more after bf16 is unknown: %s", nxvk_errmsg());
  /* the skinny forms: k (KHR) is f16's alone, and one suffix at most */
  static const char *const bad[] = {"dot_mvrcm_n16f16x16x16u4k1w128a2k_bf16", "dot_mvrcm_n16f16x16x16u4k1w128a2ek_f16",
                                    "dot_mvrcm_n16f16x16x16u4k1w128a2x_bf16", "dot_mvcm_f16x16x16c4p1l1k_bf16",
                                    "dot_mvcm_f16x16x16c4p1l1ke_f16", "dot_mvcm_f16x16x16c4p1l1_bf16x",
                                    "dot_mvcm_f16x16x16c4p1l1_f32", "dot_mvcm_t16x8x16c4p1l1k_bf16",
                                    "dot_mvcm_t16x4x16c4p1l1_f16", "dot_mvcm_t16x32x16c4p1l1_f16",
                                    "dot_mvcm_f8x16x16c4p1l1_f16", "dot_mvcm_x16x8x16c4p1l1_f16",
                                    "dot_mvcm_T16x8x16c4p1l1_f16", "dot_mvcm_t16x8x16c4p1l1ek_f16",
                                    "dot_mvcm_t16x8x16c4p1l0z_f16", "dot_mvcm_f16x16x16c4p1l1z_f16",
                                    "dot_mvcm_t16x8x16c4p1l1ez_f16", "dot_mvcm_t16x16x32c4p1l1z_f16"};
  check_refused(bad, sizeof bad / sizeof *bad, "is unknown");
}

int main(void) {
  test_good();
  test_kernels();
  test_refusals();
  return tap_done();
}
