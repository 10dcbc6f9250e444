/*
 * codegen.h - GLSL for elementwise programs.  The same generator makes the
 * build-time shader of every single elementwise op (tools/genshaders.c) and
 * the run-time fused shaders, so one expression per op serves both.
 */
#ifndef NXVK_CODEGEN_H
#define NXVK_CODEGEN_H

#include "../nxvk.h"

#define NXVK_CG_MAX_INPUTS 12
#define NXVK_CG_MAX_OUTPUTS 4
#define NXVK_CG_MAX_NODES 64

/* Value ids: 0..ninputs-1 are inputs, ninputs+i is node i. */
typedef struct nxvk_cg_node {
  const nxvk_op_desc *op;   /* an elementwise op */
  int arg[3];
  nxvk_dtype dtype;         /* of the operands (select: of a and b) */
} nxvk_cg_node;

typedef struct nxvk_cg_program {
  int ninputs;
  nxvk_dtype in_dtype[NXVK_CG_MAX_INPUTS];
  int nnodes;
  nxvk_cg_node node[NXVK_CG_MAX_NODES];
  int noutputs;
  int output[NXVK_CG_MAX_OUTPUTS];
  /* f16 conversions (NXVK_F16_CVT): 0 in integer operations (f16.glsl);
   * 1 the driver's, subnormals in software; 2 the driver's, subnormals
   * too (the device promises DenormPreserve 16).  Changes no bits. */
  int f16_cvt;
  /* NXVK_EW16: cheaper f16 / bf16 forms with the same bits (nx.glsl's
   * nx16_*): NXVK_EW16_ARITH f16 add / subtract / multiply, NXVK_EW16_EXP
   * f16 and bf16 exp; NXVK_EW16_F16X2 f16 add / subtract / multiply
   * kernels in f16 arithmetic where f16_cvt is 2; NXVK_EW16_FUZZ (tests) makes them act as the worst
   * device the Vulkan spec allows (flushed denormals, exp2 4 ULP off). */
  int fast16;
} nxvk_cg_program;
#define NXVK_EW16_ARITH 1
#define NXVK_EW16_EXP 2
#define NXVK_EW16_FUZZ 4
#define NXVK_EW16_F16X2 8
/* NXVK_EW16_SPLIT: single f16 / bf16 exp and bf16 add / subtract /
 * multiply kernels compute every word of a round in the cheap form alone
 * and take the exact path out of the unrolled loop: SPLIT1 after the
 * round, in the invocation's own loop over the rare words; SPLIT2 after the
 * round, the workgroup's rare words queued in shared memory and shared out
 * among its invocations. */
#define NXVK_EW16_SPLIT1 16
#define NXVK_EW16_SPLIT2 32
/* NXVK_EW16_VEC: split kernels (and f16 add / subtract / multiply in f16
 * arithmetic, through the split form) load and store contiguous operands
 * as uvec4, four words at a time */
#define NXVK_EW16_VEC 64

/* Result dtype of a node (compare -> u8). */
nxvk_dtype nxvk_cg_value_dtype(const nxvk_cg_program *p, int value);

/* Metadata layout the generated kernels read (words):
 *   [0] n  [1] rank  [2] contiguous-input bits  [3..10] dims
 *   [11 + 8*k .. 18 + 8*k] element strides of input k */
#define NXVK_EW_META_WORDS(ninputs) (11u + 8u * (uint32_t)(ninputs))

/* Every input and output 16 bits wide: the kernel takes two elements per
 * 32-bit word, so it runs over (count + 1) / 2 words (nxvk_ew_launch's n). */
bool nxvk_cg_paired(const nxvk_cg_program *p);

/* GLSL source (malloc'd) for the program; lib is the shader math library. */
int nxvk_cg_glsl(const nxvk_cg_program *p, const char *lib, char **out);

/* Embedded text of shaders/lib/nxmath.glsl + nx.glsl (build/gen/glsl_lib.c). */
extern const char nxvk_glsl_lib[];

#endif
