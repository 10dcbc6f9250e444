/*
 * shaderc.c - GLSL to SPIR-V at run time, through glslang's C interface.
 *
 * The target is the build's (glslangValidator -V --target-env vulkan1.1:
 * Vulkan 1.1, SPIR-V 1.3, no optimizer), so a fused kernel is the same code
 * its ops have as single-op kernels.  glslang is initialized once per
 * process and compiles one shader at a time: compiles are rare (the results
 * are cached), and its C interface makes no promise about threads.
 *
 * After compiling, the float arithmetic and GLSL built-ins of main(), the
 * op_* functions and the nx_* wrappers get the NoContraction decoration.  A
 * fused kernel holds a multiply and the add that reads it in one function,
 * and a driver may otherwise turn them into one fma (one rounding instead
 * of the two that the op table and the reference define), or rewrite
 * log(inversesqrt(x)) as -0.5 * log(x).
 */
#include <glslang/Include/glslang_c_interface.h>
#include <glslang/Public/resource_limits_c.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "vkcore.h"

static pthread_once_t glslang_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t glslang_lock = PTHREAD_MUTEX_INITIALIZER;
static int glslang_ready;

#include <glslang/build_info.h>
#define STR_(x) #x
#define STR(x) STR_(x)
const char *nxvk_glsl_compiler_id(void) {
  /* keep in step with the glslang_input_t below */
  return "glslang " STR(GLSLANG_VERSION_MAJOR) "." STR(GLSLANG_VERSION_MINOR) "." STR(
      GLSLANG_VERSION_PATCH) GLSLANG_VERSION_FLAVOR "; compute; vulkan 1.1; spir-v 1.3; glsl 450; "
                             "default resources; spv+vulkan rules";
}

static void glslang_init(void) { glslang_ready = glslang_initialize_process(); }

/* ---- NoContraction ---- */

enum {
  SPV_MAGIC = 0x07230203u,
  OP_SOURCE_CONTINUED = 2, OP_SOURCE = 3, OP_SOURCE_EXTENSION = 4, OP_NAME = 5, OP_MEMBER_NAME = 6,
  OP_STRING = 7, OP_LINE = 8, OP_EXTENSION = 10, OP_EXT_INST_IMPORT = 11, OP_MEMORY_MODEL = 14,
  OP_ENTRY_POINT = 15, OP_EXECUTION_MODE = 16, OP_CAPABILITY = 17, OP_FUNCTION = 54,
  OP_FUNCTION_END = 56, OP_DECORATE = 71, OP_MEMBER_DECORATE = 72, OP_DECORATION_GROUP = 73,
  OP_GROUP_DECORATE = 74, OP_GROUP_MEMBER_DECORATE = 75, OP_NO_LINE = 317,
  OP_MODULE_PROCESSED = 330, OP_EXECUTION_MODE_ID = 331, OP_DECORATE_ID = 332,
  OP_DECORATE_STRING = 5632, OP_MEMBER_DECORATE_STRING = 5633,
  DECORATION_NO_CONTRACTION = 42,
};

/* Opcodes a compiler may combine with another: FNegate FAdd FSub FMul FDiv
 * FRem FMod VectorTimesScalar Dot, and ExtInst (GLSL.std.450 built-ins: a
 * driver may otherwise rewrite log(inversesqrt(x)) as -0.5 * log(x), which
 * differs from the two ops at x = -0). */
static bool contractible(uint32_t op) {
  return op == 12 || op == 127 || op == 129 || op == 131 || op == 133 || op == 136 ||
         op == 138 || op == 141 || op == 142 || op == 148;
}

/* What comes before the types: capabilities ... debug names ... decorations. */
static bool preamble_op(uint32_t op) {
  switch (op) {
  case OP_SOURCE_CONTINUED: case OP_SOURCE: case OP_SOURCE_EXTENSION: case OP_NAME:
  case OP_MEMBER_NAME: case OP_STRING: case OP_LINE: case OP_EXTENSION: case OP_EXT_INST_IMPORT:
  case OP_MEMORY_MODEL: case OP_ENTRY_POINT: case OP_EXECUTION_MODE: case OP_CAPABILITY:
  case OP_DECORATE: case OP_MEMBER_DECORATE: case OP_DECORATION_GROUP: case OP_GROUP_DECORATE:
  case OP_GROUP_MEMBER_DECORATE: case OP_NO_LINE: case OP_MODULE_PROCESSED:
  case OP_EXECUTION_MODE_ID: case OP_DECORATE_ID: case OP_DECORATE_STRING:
  case OP_MEMBER_DECORATE_STRING:
    return true;
  default:
    return false;
  }
}

/* Does function `id` get the decoration: main (the entry point), the op_*
 * functions of the ops, and the nx_* wrappers they call (shaders/lib/nx.glsl,
 * where the GLSL built-ins are): the places where one op's result meets the
 * next op.  The math library's insides (nxf_*, nxd_*) keep whatever the
 * build-time kernels get, so a fused op computes as its single-op kernel. */
static bool wanted_function(const uint32_t *w, size_t n, uint32_t id, uint32_t entry) {
  if (id == entry) return true;
  for (size_t i = 5; i < n;) {
    uint32_t wc = w[i] >> 16, op = w[i] & 0xffffu;
    if (wc == 0 || i + wc > n) return false;
    if (op == OP_NAME && wc >= 3 && w[i + 1] == id) {
      const char *name = (const char *)&w[i + 2];
      return (strncmp(name, "op_", 3) == 0 || strncmp(name, "nx_", 3) == 0) &&
             memchr(name, 0, (wc - 2) * 4) != NULL;
    }
    if (op == OP_FUNCTION) return false; /* names come before code */
    i += wc;
  }
  return false;
}

int nxvk_spirv_no_contraction(uint32_t **words, size_t *bytes) {
  uint32_t *w = *words;
  size_t n = *bytes / 4;
  if (n < 5 || w[0] != SPV_MAGIC) return nxvk_seterr(NXVK_E_BAD_REQUEST, "not a SPIR-V module");
  uint32_t bound = w[3];
  uint8_t *mark = calloc(bound ? bound : 1, 1); /* 1: decorate, 2: has it already */
  if (!mark) return nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  size_t insert_at = 0, count = 0;
  uint32_t entry = 0;
  bool in_wanted = false;
  for (size_t i = 5; i < n;) {
    uint32_t wc = w[i] >> 16, op = w[i] & 0xffffu;
    if (wc == 0 || i + wc > n) {
      free(mark);
      return nxvk_seterr(NXVK_E_BAD_REQUEST, "SPIR-V: malformed instruction at word %zu", i);
    }
    if (!insert_at && !preamble_op(op)) insert_at = i;
    if (op == OP_ENTRY_POINT && wc >= 3 && !entry) entry = w[i + 2];
    if (op == OP_DECORATE && wc >= 3 && w[i + 2] == DECORATION_NO_CONTRACTION && w[i + 1] < bound)
      mark[w[i + 1]] = 2;
    if (op == OP_FUNCTION && wc >= 3) in_wanted = wanted_function(w, n, w[i + 2], entry);
    if (op == OP_FUNCTION_END) in_wanted = false;
    if (in_wanted && contractible(op) && wc >= 3 && w[i + 2] < bound && mark[w[i + 2]] == 0) {
      mark[w[i + 2]] = 1;
      count++;
    }
    i += wc;
  }
  if (count == 0 || !insert_at) {
    free(mark);
    return NXVK_OK;
  }
  uint32_t *out = malloc((n + 3 * count) * 4);
  if (!out) {
    free(mark);
    return nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  }
  memcpy(out, w, insert_at * 4);
  size_t o = insert_at;
  for (uint32_t id = 0; id < bound; id++)
    if (mark[id] == 1) {
      out[o++] = 3u << 16 | OP_DECORATE;
      out[o++] = id;
      out[o++] = DECORATION_NO_CONTRACTION;
    }
  memcpy(out + o, w + insert_at, (n - insert_at) * 4);
  free(mark);
  free(w);
  *words = out;
  *bytes = (n + 3 * count) * 4;
  return NXVK_OK;
}

/* ---- compiling ---- */

/* The first line of glslang's log is what a person needs. */
static int compile_error(const char *name, const char *stage, const char *log) {
  char first[300] = "";
  if (log) {
    size_t len = strcspn(log, "\n");
    if (len >= sizeof first) len = sizeof first - 1;
    memcpy(first, log, len);
    first[len] = 0;
  }
  return nxvk_seterr(NXVK_E_BAD_REQUEST, "%s: glslang %s failed: %s", name, stage, first);
}

int nxvk_glsl_compile(const char *glsl, const char *name, uint32_t **words, size_t *bytes) {
  *words = NULL;
  *bytes = 0;
  pthread_once(&glslang_once, glslang_init);
  if (!glslang_ready) return nxvk_seterr(NXVK_E_UNSUPPORTED, "glslang failed to initialize");
  const glslang_input_t input = {
      .language = GLSLANG_SOURCE_GLSL,
      .stage = GLSLANG_STAGE_COMPUTE,
      .client = GLSLANG_CLIENT_VULKAN,
      .client_version = GLSLANG_TARGET_VULKAN_1_1,
      .target_language = GLSLANG_TARGET_SPV,
      .target_language_version = GLSLANG_TARGET_SPV_1_3,
      .code = glsl,
      .default_version = 450,
      .default_profile = GLSLANG_NO_PROFILE,
      .force_default_version_and_profile = false,
      .forward_compatible = false,
      .messages = GLSLANG_MSG_SPV_RULES_BIT | GLSLANG_MSG_VULKAN_RULES_BIT,
      .resource = glslang_default_resource(),
  };
  int rc = NXVK_OK;
  pthread_mutex_lock(&glslang_lock);
  glslang_shader_t *shader = glslang_shader_create(&input);
  glslang_program_t *program = NULL;
  if (!shader) rc = nxvk_seterr(NXVK_E_NO_MEMORY, "%s: glslang: out of memory", name);
  if (rc == NXVK_OK && !glslang_shader_preprocess(shader, &input))
    rc = compile_error(name, "preprocessing", glslang_shader_get_info_log(shader));
  if (rc == NXVK_OK && !glslang_shader_parse(shader, &input))
    rc = compile_error(name, "parsing", glslang_shader_get_info_log(shader));
  if (rc == NXVK_OK) {
    program = glslang_program_create();
    glslang_program_add_shader(program, shader);
    if (!glslang_program_link(program, GLSLANG_MSG_SPV_RULES_BIT | GLSLANG_MSG_VULKAN_RULES_BIT))
      rc = compile_error(name, "linking", glslang_program_get_info_log(program));
  }
  if (rc == NXVK_OK) {
    glslang_program_SPIRV_generate(program, GLSLANG_STAGE_COMPUTE);
    const char *msg = glslang_program_SPIRV_get_messages(program);
    size_t n = glslang_program_SPIRV_get_size(program);
    if (n == 0) {
      rc = compile_error(name, "SPIR-V generation", msg ? msg : "no code");
    } else {
      *words = malloc(n * 4);
      if (!*words) rc = nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
      else memcpy(*words, glslang_program_SPIRV_get_ptr(program), n * 4);
      *bytes = n * 4;
    }
  }
  if (program) glslang_program_delete(program);
  if (shader) glslang_shader_delete(shader);
  pthread_mutex_unlock(&glslang_lock);
  if (rc == NXVK_OK) rc = nxvk_spirv_no_contraction(words, bytes);
  if (rc) {
    free(*words);
    *words = NULL;
    *bytes = 0;
  }
  return rc;
}
