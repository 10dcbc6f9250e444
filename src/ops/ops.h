/*
 * ops.h - the op table's internals.  A row (struct nxvk_op) ties together the
 * public description, the shape rule, the GPU recording and the CPU
 * reference.  Ops of one kind share those functions; what differs per op is
 * data (its GLSL expression, its scalar reference, a kernel op code).
 *
 * Adding an op: one row (elementwise.def for elementwise ops, optable.c for
 * the others), its GLSL, its reference, and its limit in
 * conformance/limits.json.  Conformance, stress and bench then make its
 * cases from the rule of its kind (src/cli/cases.h); an op whose cases or
 * inputs differ from its kind's (index tensors, sorted data, a new kind)
 * adds one case rule there.  Nothing else names ops.
 */
#ifndef NXVK_OPS_H
#define NXVK_OPS_H

#include "../vk/vkcore.h"

struct nxvk_tensor {
  nxvk_ctx *c;
  nxvk_buffer *buf;            /* always owned (one reference) */
  nxvk_dtype dtype;
  nxvk_shape shape;
  int64_t count;
};

/* A scalar for the reference: floats in .f (long double: f32 and f64 ops are
 * computed wider and rounded once), integers in .i. */
typedef union {
  long double f;
  int64_t i;
} nxvk_scalar;

typedef struct nxvk_op nxvk_op;

typedef nxvk_scalar (*nxvk_scalar_fn)(nxvk_scalar a, nxvk_scalar b, nxvk_scalar c, nxvk_dtype t);
typedef int (*nxvk_infer_fn)(const nxvk_op *op, const nxvk_attrs *a, const nxvk_meta *in, int nin,
                             nxvk_meta *out);
typedef int (*nxvk_gpu_fn)(nxvk_rec *r, const nxvk_op *op, const nxvk_attrs *a,
                           nxvk_tensor *const *in, int nin, nxvk_tensor *out);
typedef int (*nxvk_ref_fn)(const nxvk_op *op, const nxvk_attrs *a, const nxvk_host *in, int nin,
                           nxvk_host *out);
/* Whether this device runs the op's kernel for these attributes and
 * operands: NXVK_OK, or NXVK_E_UNSUPPORTED / NXVK_E_UNSUPPORTED_DTYPE with
 * the reason set. */
typedef int (*nxvk_support_fn)(nxvk_ctx *c, const nxvk_op *op, const nxvk_attrs *a,
                               const nxvk_meta *in, int nin);

struct nxvk_op {
  nxvk_op_desc d;              /* first: nxvk_op_desc pointers convert back */
  nxvk_infer_fn infer;
  nxvk_gpu_fn gpu;             /* NULL: no GPU work (reshape is a view) */
  nxvk_ref_fn ref;
  nxvk_scalar_fn scalar;       /* elementwise ops */
  int code;                    /* kernel op code (reductions, random) */
  nxvk_support_fn supported;   /* NULL: wherever the device computes its dtypes */
};

static inline const nxvk_op *nxvk_op_from_desc(const nxvk_op_desc *d) {
  return (const nxvk_op *)d;
}

extern const nxvk_op nxvk_op_table[];
extern const int nxvk_op_table_len;

/* GLSL storage and compute types of a dtype. */
const char *nxvk_glsl_storage_type(nxvk_dtype d);
const char *nxvk_glsl_compute_type(nxvk_dtype d);

/* ---- kinds (one file each) ---- */

/* elementwise.c */
int nxvk_ew_infer(const nxvk_op *op, const nxvk_attrs *a, const nxvk_meta *in, int nin,
                  nxvk_meta *out);
int nxvk_ew_gpu(nxvk_rec *r, const nxvk_op *op, const nxvk_attrs *a, nxvk_tensor *const *in,
                int nin, nxvk_tensor *out);
int nxvk_ew_ref(const nxvk_op *op, const nxvk_attrs *a, const nxvk_host *in, int nin,
                nxvk_host *out);
/* numpy broadcasting of shapes; the error names the operands. */
int nxvk_broadcast(const nxvk_shape *const *shapes, int n, nxvk_shape *out);
/* Strides (in elements) that read `s` broadcast to `out`: 0 on broadcast dims. */
void nxvk_broadcast_strides(const nxvk_shape *s, const nxvk_shape *out, int64_t *strides);

/* reduce.c */
int nxvk_reduce_infer(const nxvk_op *op, const nxvk_attrs *a, const nxvk_meta *in, int nin,
                      nxvk_meta *out);
int nxvk_reduce_gpu(nxvk_rec *r, const nxvk_op *op, const nxvk_attrs *a, nxvk_tensor *const *in,
                    int nin, nxvk_tensor *out);
int nxvk_reduce_ref(const nxvk_op *op, const nxvk_attrs *a, const nxvk_host *in, int nin,
                    nxvk_host *out);
enum { NXVK_RED_SUM, NXVK_RED_PRODUCT, NXVK_RED_MAX, NXVK_RED_MIN, NXVK_RED_ARGMAX,
       NXVK_RED_ARGMIN, NXVK_RED_MEAN, NXVK_RED_ALL, NXVK_RED_ANY };

/* dot.c */
int nxvk_dot_infer(const nxvk_op *op, const nxvk_attrs *a, const nxvk_meta *in, int nin,
                   nxvk_meta *out);
int nxvk_dot_gpu(nxvk_rec *r, const nxvk_op *op, const nxvk_attrs *a, nxvk_tensor *const *in,
                 int nin, nxvk_tensor *out);
int nxvk_dot_ref(const nxvk_op *op, const nxvk_attrs *a, const nxvk_host *in, int nin,
                 nxvk_host *out);
int nxvk_dot_supported(nxvk_ctx *c, const nxvk_op *op, const nxvk_attrs *a, const nxvk_meta *in,
                       int nin);
/* x rounded to the nearest f16 value, ties to even (IEEE convertFormat):
 * |x| >= 65520 -> +-inf, f16 subnormals kept, NaN stays NaN, the sign of
 * zero kept.  What the coopmat variant does to every input element. */
double nxvk_f16_round(double x);

/* conv.c */
int nxvk_conv_infer(const nxvk_op *, const nxvk_attrs *, const nxvk_meta *, int, nxvk_meta *);
int nxvk_conv_gpu(nxvk_rec *, const nxvk_op *, const nxvk_attrs *, nxvk_tensor *const *, int, nxvk_tensor *);
int nxvk_conv_ref(const nxvk_op *, const nxvk_attrs *, const nxvk_host *, int, nxvk_host *);

/* linalg.c: cholesky, triangular_solve */
int nxvk_linalg_infer(const nxvk_op *, const nxvk_attrs *, const nxvk_meta *, int, nxvk_meta *);
int nxvk_linalg_gpu(nxvk_rec *, const nxvk_op *, const nxvk_attrs *, nxvk_tensor *const *, int, nxvk_tensor *);
int nxvk_linalg_ref(const nxvk_op *, const nxvk_attrs *, const nxvk_host *, int, nxvk_host *);
enum { NXVK_LINALG_CHOLESKY, NXVK_LINALG_TRIANGULAR_SOLVE };

/* movement.c: each op its own rule; all GPU work is one strided copy kernel */
int nxvk_reshape_infer(const nxvk_op *, const nxvk_attrs *, const nxvk_meta *, int, nxvk_meta *);
int nxvk_reshape_ref(const nxvk_op *, const nxvk_attrs *, const nxvk_host *, int, nxvk_host *);
int nxvk_transpose_infer(const nxvk_op *, const nxvk_attrs *, const nxvk_meta *, int, nxvk_meta *);
int nxvk_transpose_gpu(nxvk_rec *, const nxvk_op *, const nxvk_attrs *, nxvk_tensor *const *, int,
                       nxvk_tensor *);
int nxvk_transpose_ref(const nxvk_op *, const nxvk_attrs *, const nxvk_host *, int, nxvk_host *);
int nxvk_slice_infer(const nxvk_op *, const nxvk_attrs *, const nxvk_meta *, int, nxvk_meta *);
int nxvk_slice_gpu(nxvk_rec *, const nxvk_op *, const nxvk_attrs *, nxvk_tensor *const *, int,
                   nxvk_tensor *);
int nxvk_slice_ref(const nxvk_op *, const nxvk_attrs *, const nxvk_host *, int, nxvk_host *);
int nxvk_reverse_infer(const nxvk_op *, const nxvk_attrs *, const nxvk_meta *, int, nxvk_meta *);
int nxvk_reverse_gpu(nxvk_rec *, const nxvk_op *, const nxvk_attrs *, nxvk_tensor *const *, int,
                     nxvk_tensor *);
int nxvk_reverse_ref(const nxvk_op *, const nxvk_attrs *, const nxvk_host *, int, nxvk_host *);
int nxvk_concat_infer(const nxvk_op *, const nxvk_attrs *, const nxvk_meta *, int, nxvk_meta *);
int nxvk_concat_gpu(nxvk_rec *, const nxvk_op *, const nxvk_attrs *, nxvk_tensor *const *, int,
                    nxvk_tensor *);
int nxvk_concat_ref(const nxvk_op *, const nxvk_attrs *, const nxvk_host *, int, nxvk_host *);
int nxvk_astype_infer(const nxvk_op *, const nxvk_attrs *, const nxvk_meta *, int, nxvk_meta *);
int nxvk_astype_gpu(nxvk_rec *, const nxvk_op *, const nxvk_attrs *, nxvk_tensor *const *, int,
                    nxvk_tensor *);
int nxvk_astype_ref(const nxvk_op *, const nxvk_attrs *, const nxvk_host *, int, nxvk_host *);
int nxvk_bitcast_infer(const nxvk_op *, const nxvk_attrs *, const nxvk_meta *, int, nxvk_meta *);
int nxvk_bitcast_gpu(nxvk_rec *, const nxvk_op *, const nxvk_attrs *, nxvk_tensor *const *, int,
                     nxvk_tensor *);
int nxvk_bitcast_ref(const nxvk_op *, const nxvk_attrs *, const nxvk_host *, int, nxvk_host *);
/* x rounded to the nearest bf16 value, ties to even (as nxvk_f16_round). */
double nxvk_bf16_round(double x);
/* The conversion as_type defines, one element src[si] -> dst[di] (nxvk-run(1),
 * AS_TYPE): float -> float rounds to nearest even; int -> float rounds to
 * nearest even (to f16 / bf16 through f32); float -> int: NaN -> 0, toward
 * zero, saturating; int -> int wraps; anything -> bool is x != 0 (NaN: true). */
void nxvk_convert_elem(const nxvk_host *src, int64_t si, nxvk_host *dst, int64_t di);

/* index.c: broadcast pad dynamic_slice put_slice gather take take_along_axis
 * indexed_add indexed_put (code: take 0 / take_along_axis 1; indexed_add 0 /
 * indexed_put 1) */
#define NXVK_DECL_OP(kind)                                                                          \
  int nxvk_##kind##_infer(const nxvk_op *, const nxvk_attrs *, const nxvk_meta *, int, nxvk_meta *); \
  int nxvk_##kind##_gpu(nxvk_rec *, const nxvk_op *, const nxvk_attrs *, nxvk_tensor *const *, int, \
                        nxvk_tensor *);                                                             \
  int nxvk_##kind##_ref(const nxvk_op *, const nxvk_attrs *, const nxvk_host *, int, nxvk_host *);
NXVK_DECL_OP(broadcast)
NXVK_DECL_OP(pad)
int nxvk_dynslice_infer(const nxvk_op *, const nxvk_attrs *, const nxvk_meta *, int, nxvk_meta *);
NXVK_DECL_OP(putslice)
NXVK_DECL_OP(gather)
NXVK_DECL_OP(indexed)
int nxvk_take_infer(const nxvk_op *, const nxvk_attrs *, const nxvk_meta *, int, nxvk_meta *);
int nxvk_indexed_supported(nxvk_ctx *, const nxvk_op *, const nxvk_attrs *, const nxvk_meta *, int);

/* source.c: iota, eye, random_uniform, random_normal */
int nxvk_source_infer(const nxvk_op *, const nxvk_attrs *, const nxvk_meta *, int, nxvk_meta *);
int nxvk_iota_gpu(nxvk_rec *, const nxvk_op *, const nxvk_attrs *, nxvk_tensor *const *, int,
                  nxvk_tensor *);
int nxvk_iota_ref(const nxvk_op *, const nxvk_attrs *, const nxvk_host *, int, nxvk_host *);
int nxvk_eye_gpu(nxvk_rec *, const nxvk_op *, const nxvk_attrs *, nxvk_tensor *const *, int,
                 nxvk_tensor *);
int nxvk_eye_ref(const nxvk_op *, const nxvk_attrs *, const nxvk_host *, int, nxvk_host *);
int nxvk_random_gpu(nxvk_rec *, const nxvk_op *, const nxvk_attrs *, nxvk_tensor *const *, int,
                    nxvk_tensor *);
int nxvk_random_ref(const nxvk_op *, const nxvk_attrs *, const nxvk_host *, int, nxvk_host *);
enum { NXVK_RANDOM_UNIFORM, NXVK_RANDOM_NORMAL };

/* One axis of a shape seen as lines: element k of line (o, i) is at
 * (o * n + k) * inner + i.  Refuses rank 0 and an axis out of range. */
typedef struct nxvk_lines {
  int axis;
  int64_t outer, n, inner;
} nxvk_lines;
int nxvk_axis_lines(const nxvk_op *op, int axis, const nxvk_shape *s, nxvk_lines *l);

/* scan.c: cumulative_* */
int nxvk_scan_infer(const nxvk_op *, const nxvk_attrs *, const nxvk_meta *, int, nxvk_meta *);
int nxvk_scan_gpu(nxvk_rec *, const nxvk_op *, const nxvk_attrs *, nxvk_tensor *const *, int,
                  nxvk_tensor *);
int nxvk_scan_ref(const nxvk_op *, const nxvk_attrs *, const nxvk_host *, int, nxvk_host *);
enum { NXVK_SCAN_SUM, NXVK_SCAN_PRODUCT, NXVK_SCAN_MAX, NXVK_SCAN_MIN };
/* The references' products of floats (cumulative_product, window_product):
 * m 2^e with m a long double (frexpl's [0.5, 1)) and e unbounded, so no
 * partial product under- or overflows (the kernels' scanw / windoww keep a
 * wide exponent too: shaders/lib/wideprod.glsl).  nxvk_wide_value: the
 * value rounded once to dtype d (f16 / bf16 through f32, as the GPU's). */
typedef struct nxvk_wide {
  long double m;
  int64_t e;
} nxvk_wide;
void nxvk_wide_mul(nxvk_wide *p, long double v);
double nxvk_wide_value(const nxvk_wide *p, nxvk_dtype d);
/* the scan kernels for rows of contiguous lines (NXVK_SCAN, scan.c) */
enum { NXVK_SCAN_BLOCKS, NXVK_SCAN_ONE_PASS, NXVK_SCAN_LOOKBACK, NXVK_SCAN_RTS };
/* rts's f32 adds: nxf_add at each, the driver's with a re-run of a tile
 * that met a denormal, the driver's unchecked (diagnostic), fast with a
 * flush emulated (tests) (scan.comp ADD) */
enum { NXVK_SCAN_ADD_EXACT, NXVK_SCAN_ADD_FAST, NXVK_SCAN_ADD_NATIVE, NXVK_SCAN_ADD_FUZZ };
/* NXVK_SCAN_PASS: the passes once, or the top level's reduce or scan pass
 * 4 more times (a diagnostic: that pass's time by difference) */
enum { NXVK_SCAN_PASS_ONCE, NXVK_SCAN_PASS_REDUCE, NXVK_SCAN_PASS_SCAN };
/* Whether this device can run the look-back scan with workgroups of wg
 * (subgroup shuffles, whole subgroups of at least 4) (scan.c). */
bool nxvk_scan_lookback_ok(const nxvk_ctx *c, uint32_t wg);
/* Running sums (code) of `rows` contiguous rows of n elements, src -> dst,
 * in dtype dt (the sort's digit counts). */
int nxvk_scan_rows(nxvk_rec *r, nxvk_dtype dt, int code, nxvk_buffer *src, nxvk_buffer *dst,
                   uint64_t rows, uint64_t n);

/* sort.c: sort argsort top_k top_k_indices */
int nxvk_sort_infer(const nxvk_op *, const nxvk_attrs *, const nxvk_meta *, int, nxvk_meta *);
int nxvk_sort_gpu(nxvk_rec *, const nxvk_op *, const nxvk_attrs *, nxvk_tensor *const *, int,
                  nxvk_tensor *);
int nxvk_sort_ref(const nxvk_op *, const nxvk_attrs *, const nxvk_host *, int, nxvk_host *);
enum { NXVK_SORT_VALUES, NXVK_SORT_INDICES };

/* window.c: window_sum window_product window_max window_min (op codes are
 * NXVK_SCAN_*) */
int nxvk_window_infer(const nxvk_op *, const nxvk_attrs *, const nxvk_meta *, int, nxvk_meta *);
int nxvk_window_gpu(nxvk_rec *, const nxvk_op *, const nxvk_attrs *, nxvk_tensor *const *, int,
                    nxvk_tensor *);
int nxvk_window_ref(const nxvk_op *, const nxvk_attrs *, const nxvk_host *, int, nxvk_host *);

/* limits.c: one compared element into the tally (max abs/ulp over finite
 * pairs; the first failure, else the largest ulp, as the worst). */
void nxvk_cmp_note(nxvk_cmp *c, int64_t i, double got, double ref, double ulp, bool ok,
                   bool is_float, double *worst_ulp);

/* ---- shared by the kinds ---- */

/* Check, allocate and record one op into a recording (what nxvk_batch_op
 * and the graph runner do for every op). */
int nxvk_rec_op(nxvk_rec *r, const nxvk_op_desc *op, const nxvk_attrs *a,
                nxvk_tensor *const *in, int nin, nxvk_tensor **out);

/* Row-major strides (elements) of a shape. */
void nxvk_contiguous_strides(const nxvk_shape *s, int64_t *strides);

/* Record one dispatch of a named embedded kernel: meta words, buffers
 * (inputs then outputs), n invocations of a 1-D grid-stride kernel. */
int nxvk_dispatch_1d(nxvk_rec *r, const char *kernel, const uint32_t *spec, int nspec,
                     const uint32_t *meta, uint32_t nmeta, nxvk_buffer *const *bufs, int nbufs,
                     uint64_t n);
/* As above with an explicit grid. */
int nxvk_dispatch_grid(nxvk_rec *r, const char *kernel, const uint32_t *spec, int nspec,
                       const uint32_t *meta, uint32_t nmeta, nxvk_buffer *const *bufs, int nbufs,
                       uint32_t gx, uint32_t gy, uint32_t gz);
/* Strided copy with dtype conversion (transpose, slice, concatenate,
 * as_type): dims, src/dst strides and bases in elements. */
/* n bytes from src to dst in a recording, bit for bit (copy_vec4 and a
 * vkCmdCopyBuffer tail; vkCmdCopyBuffer alone where it is the faster) */
int nxvk_rec_copy_bytes(nxvk_rec *r, nxvk_buffer *src, nxvk_buffer *dst, size_t n);
int nxvk_strided_copy(nxvk_rec *r, nxvk_buffer *src, nxvk_dtype sd, int64_t src_base,
                      const int64_t *src_strides, nxvk_buffer *dst, nxvk_dtype dd,
                      int64_t dst_base, const int64_t *dst_strides, const nxvk_shape *dims);

/* rtkernel.c: a kernel that is not built in (dtypes outside the Makefile's
 * DTYPES), generated from the same sources, compiled through glslang on
 * first use and cached on disk; NXVK_E_UNSUPPORTED for an unknown name. */
int nxvk_rt_kernel_get(nxvk_ctx *c, const char *name, const uint32_t *spec, int nspec, int nbuffers,
                       nxvk_kernel **k);
/* The GLSL behind a run-time kernel's name (the caller frees it), without
 * a device: the unit tests compile kernels this device cannot run (coopmat). */
int nxvk_rt_kernel_glsl(const char *name, char **glsl);

#define NXVK_WG 256u     /* default workgroup size for 1-D kernels */

/* Launch of an elementwise kernel (codegen.c) over n elements: fills its
 * specialization constants {workgroup size, elements per invocation and
 * round, blocked rounds} and returns the workgroup count. */
#define NXVK_EW_SPEC 3
uint32_t nxvk_ew_launch(nxvk_ctx *c, uint64_t n, bool paired, uint32_t spec[NXVK_EW_SPEC]);

/* The ops' tuning (tuning.c): each kernel's rule, or what a variable
 * forced, read once when the context opens and checked then against the
 * device and the kernel (c->tuning, never NULL once open).  0 or "" means
 * the rule. */
typedef struct nxvk_tuning {
  uint32_t dot_tiles[5]; /* NXVK_DOT_TILES: BM, BN, BK, TM, TN of dot_tiled */
  uint32_t dot_vec[4];   /* NXVK_DOT_VEC: RB, CB, BK, S of dot_vec */
  uint32_t dot_nt;       /* NXVK_DOT_NT: 128 (the narrow grid) or 256 */
  bool dot_aligned;      /* NXVK_DOT_ALIGNED: whole-tile f32 products on dot_vec_aligned */
  bool dot_aligned_set;  /* NXVK_DOT_ALIGNED set (0 or 1): no rule (dot.c's f32_rule) */
  uint32_t dot_group;    /* NXVK_DOT_GROUP: row tiles a launch group of dot_vec_aligned (0: the rule) */
  uint32_t dot_frag;     /* NXVK_DOT_FRAG: 1: dot_vec_aligned writes the next k's shared reads first */
  uint32_t dot_ku;       /* NXVK_DOT_KU: k steps a pass of dot_vec_aligned's k loop, unrolled (0: BK) */
  uint32_t dot_lw;       /* NXVK_DOT_LW: a warp's grid columns in dot_vec_aligned (0: the grid's width) */
  bool dot_ct;           /* NXVK_DOT_CT: dot_vec_aligned with N and K compiled in */
  uint32_t dot_xb;       /* NXVK_DOT_XB: dot_vec_aligned's last 1 or 2 k steps' products after the barrier */
  uint32_t dot_xs;       /* NXVK_DOT_XS: with XB, the next tile stored before this k step (0: at the barrier) */
  char dot_split[8];     /* NXVK_DOT_SPLIT: kernel, batch or copy */
  uint32_t dot_coopmat[8]; /* NXVK_DOT_COOPMAT: WM, WN, FR, FC, BK[, FM, FN, FK] of dot_coopmat */
  uint32_t dot_coopmat_split; /* NXVK_DOT_COOPMAT_SPLIT: k chunks of dot_coopmat (1: none) */
  uint32_t dot_coopmat_stages; /* NXVK_DOT_COOPMAT_STAGES: shared stages of dot_coopmat (1 or 2) */
  uint32_t dot_coopmat_prefetch; /* NXVK_DOT_COOPMAT_PREFETCH: k steps dot_coopmat loads ahead (1 or 2) */
  uint32_t dot_coopmat_group; /* NXVK_DOT_COOPMAT_GROUP: row tiles a column walk of dot_coopmat (0: none) */
  uint32_t dot_mv[10];   /* NXVK_DOT_MV: R, WG, U, S, D, P, T, B, C, H of dot_mv.comp (0: the rule's) */
  bool dot_mv_off;       /* NXVK_DOT_MV=off: skinny products on dot_skinny.comp (f32, f64) */
  bool dot_mv_on;        /* NXVK_DOT_MV set to numbers: f32 takes dot_mv too (its rule: dot_skinny.comp) */
  bool dot_mv_ct;        /* NXVK_DOT_MV_CT (default 1): dot_mv.comp's layout compiled in (0: specialization constants) */
  uint32_t dot_mvc[6];   /* NXVK_DOT_MVC: W, U, S, WG, P, F of dot_mvc.comp (0: the rule's) */
  int dot_mvc_mode;      /* NXVK_DOT_MVC: 0 unset, 2 numbers (every columns shape); 1 off (dot_mv / dot_skinny) */
  uint32_t dot_mvc_cm[6]; /* NXVK_DOT_MVC_CM: FC, PF, LD, E, F, T of dot_mvcm.comp (16-bit m = 16, 8 on tensor
                           * cores; 0: the rule's) */
  int dot_mvc_cm_mode;   /* NXVK_DOT_MVC_CM: 0 unset, 2 numbers (wherever it can run); 1 off */
  uint32_t dot_mvr[7];   /* NXVK_DOT_MVR: L, R, U, KS, WG, S, P + 1 of dot_mvr.comp (0: the rule's) */
  bool dot_mvr_off;      /* NXVK_DOT_MVR=off: n = 2..16 rows products on dot_mv.comp's rows form */
  bool dot_mvr_on;       /* NXVK_DOT_MVR set to numbers: every n = 2..16 rows product takes dot_mvr.comp */
  uint32_t dot_mvb[6];   /* NXVK_DOT_MVB: CG, WG, RB, RU, S, F of dot_mvb.comp (0: the rule's) */
  bool dot_mvb_off;      /* NXVK_DOT_MVB=off: f32 rows products on dot_mv.comp */
  bool dot_mvb_on;       /* NXVK_DOT_MVB set to numbers: f32 rows products with 2 <= n <= 16 take it */
  uint32_t dot_mvr_cm[7]; /* NXVK_DOT_MVR_CM: U, KS, WG, S, E, LD, F of dot_mvrcm.comp (f16 on tensor cores) */
  bool dot_mvr_cm_on;    /* NXVK_DOT_MVR_CM set: f16 rows products with 2 <= n <= 16 take it where they can */
  uint32_t dot_coopmat_order; /* NXVK_DOT_COOPMAT_ORDER: dot_coopmat's fragment order (0-3) + 1 (0: unset) */
  bool dot_coopmat_emu; /* NXVK_DOT_COOPMAT_EMU=1: dot_coopmat's data flow without tensor cores */
  bool coopmat_nv;      /* NXVK_COOPMAT_KHR=0: f16 tensor-core kernels as NV ones where KHR would be used */
  uint32_t dot_coopmat_diag; /* NXVK_DOT_COOPMAT_DIAG: 1 products alone, 2 loads alone (wrong results: timing only) */
  uint32_t ew_unroll;    /* elements per invocation and round (codegen.c) */
  uint32_t ew16_unroll;  /* words (two 16-bit elements) per invocation and round of a paired kernel */
  uint32_t ew16_wg;      /* workgroup size of a paired kernel (NXVK_EW16_WG) */
  uint32_t ew_blocked;   /* 1: a workgroup's round is one contiguous block */
  bool reduce_fold;      /* a split reduction's last workgroup adds the partials */
  uint32_t reduce_partials; /* NXVK_REDUCE_PARTIALS: a split reduction's partials at most (0: the rule, 1 024) */
  uint32_t reduce_wg;    /* NXVK_REDUCE_WG: reduce.comp's workgroup size (0: NXVK_WG) */
  uint32_t reduce_vec;   /* NXVK_REDUCE_VEC: 16-byte loads a round of a contiguous f32 / 16-bit run (0: none) */
  uint32_t reduce_add;   /* NXVK_REDUCE_ADD: f32 sums' and products' form, NXVK_SCAN_ADD_* or 4 flush (reduce.comp ADD) */
  bool conv_direct;      /* NXVK_CONV_DIRECT: conv_direct alone, no implicit GEMM (conv.c) */
  uint32_t conv_gemm[5]; /* NXVK_CONV_GEMM: NT, TX, RB, CB, BK of conv_gemm */
  uint32_t conv_coopmat[5]; /* NXVK_CONV_COOPMAT: WM, WN, FR, FC, BK of conv_coopmat */
  bool conv_coopmat_off; /* NXVK_CONV_COOPMAT=0: f16 conv through conv_gemm's f32 copies */
  bool conv_coopmat_emu; /* NXVK_CONV_COOPMAT_EMU=1: conv_coopmat's data flow without tensor cores */
  uint32_t sort_bits;   /* NXVK_SORT_BITS: 8 (sort8 kernels) or 4 bits a radix pass (sort.c) */
  uint32_t sort_items;  /* NXVK_SORT_ITEMS: elements per invocation of a pass */
  int f16_cvt;           /* NXVK_F16_CVT: 0 integer f16 conversions, 1 or 2 the driver's (codegen.h) */
  int ew16;              /* NXVK_EW16: codegen.h's NXVK_EW16_* flags (cheaper f16 / bf16 forms, same bits) */
  int ew16_table;        /* NXVK_EW16_TABLE: single f16 / bf16 unary ops by table (elementwise.c, lut16.comp) */
  bool ew16_table_rule;  /* NXVK_EW16_TABLE unset: the table for the ops the rule names (elementwise.c) */
  uint32_t scan_kind;    /* NXVK_SCAN: NXVK_SCAN_BLOCKS, _ONE_PASS, _LOOKBACK or _RTS (scan.c) */
  uint32_t scan_wg;      /* NXVK_SCAN_WG: the look-back and rts scans' workgroup size (0: the rule) */
  uint32_t scan_items;   /* NXVK_SCAN_ITEMS: their elements per invocation (0: the rule) */
  uint32_t scan_add;     /* NXVK_SCAN_ADD: rts's f32 adds, NXVK_SCAN_ADD_* (scan.comp ADD) */
  uint32_t scan_pass;    /* NXVK_SCAN_PASS: NXVK_SCAN_PASS_* (diagnostic: one rts pass again) */
  bool scan_narrow;      /* NXVK_SCAN_WIDE=0: float products in the dtype's own range (diagnostic) */
  int scatter_put;       /* NXVK_SCATTER_PUT: 0 the rule, else an NXVK_PUT_* (index.c) */
} nxvk_tuning;
/* indexed_put's pass structures (index.c, bench/NOTES.md) */
enum { NXVK_PUT_RULE, NXVK_PUT_PACKED, NXVK_PUT_GATHER, NXVK_PUT_OWNED };
/* The largest power of two <= v (1 for v = 0): workgroup sizes and splits
 * of the skinny products (dot_mv.c, dot_mvc.c). */
static inline uint32_t nxvk_pow2_floor(uint32_t v) {
  uint32_t p = 1;
  while (p * 2 <= v) p *= 2;
  return p;
}
/* dot_mv.c: matrix-vector and skinny products (m or n up to 16) of f32,
 * f16 and bf16 on dot_mv.comp; 1 (nothing recorded) where the shape, the
 * dtype or the device does not suit it. */
int nxvk_dot_mv(nxvk_rec *r, nxvk_dtype dtype, nxvk_dtype out, nxvk_buffer *A, nxvk_buffer *B, nxvk_buffer *C,
                uint32_t M, uint32_t N, uint32_t K, uint32_t batch);
/* dot_mv.c: one skinny kernel over a gx x S x batch grid (the same for
 * dot_mv, dot_mvr and dot_mvc): S = 1 writes C; S > 1 writes f32 partials
 * [batch][S][mn] that dot_mv_sum (dot_ksum_f32 for f32 results) adds into C
 * in chunk order, or (fold: the kernels that include mvfold.glsl) the
 * kernel's last workgroup of each block adds itself, C bound fourth and
 * batch x gx counts fifth, at most NXVK_MV_FOLD_COUNTS.  The counts are the
 * recording's (nxvk_rec_counts: zeroed once, put back to zero by the
 * kernel), so nothing is recorded before the kernel; NXVK_MV_FOLD_UPDATE
 * (a knob's F 3) zeroes fresh counts by vkCmdUpdateBuffer instead, the form
 * before 2026-11-28, which costs an update and a barrier before every
 * product (1-2% on an H100, bench/NOTES.md). */
#define NXVK_MV_FOLD_COUNTS 16384
enum { NXVK_MV_PASS = 0, NXVK_MV_FOLD = 1, NXVK_MV_FOLD_UPDATE = 3 };
/* the shared memory mvfold.glsl adds to every kernel that includes it (its
 * flag, rounded up to 16 bytes) */
#define NXVK_MV_FOLD_SHARED 16u
/* How a split of S chunks over `groups` blocks (gx x batch) is summed: the
 * fold unless F (a knob's field) is 2, the second pass, or the counts do
 * not fit; F 3 the fold with updated counts. */
static inline int nxvk_mv_folds(uint32_t F, uint32_t S, uint64_t groups) {
  if (S <= 1 || F == 2 || groups > NXVK_MV_FOLD_COUNTS) return NXVK_MV_PASS;
  return F == 3 ? NXVK_MV_FOLD_UPDATE : NXVK_MV_FOLD;
}
/* The device's compute units, 32 where it does not say (the kernels' rules
 * for how many workgroups fill it). */
static inline uint32_t nxvk_compute_units(const nxvk_device_info *d) {
  return d->compute_units ? d->compute_units : 32;
}
/* The largest one-dimensional workgroup the device runs. */
static inline uint32_t nxvk_max_workgroup_x(const nxvk_device_info *d) {
  return d->max_workgroup_invocations < d->max_workgroup_size[0] ? d->max_workgroup_invocations
                                                                 : d->max_workgroup_size[0];
}
/* Whether a skinny product's S x batch x mn f32 partials fit one storage
 * buffer and the kernels' 32-bit indices. */
static inline bool nxvk_mv_partials_fit(const nxvk_device_info *d, uint32_t S, uint32_t batch, uint64_t mn) {
  uint64_t n = (uint64_t)S * batch * mn;
  return n * 4 <= d->max_storage_buffer_range && n <= UINT32_MAX;
}
/* Workgroups of wg invocations a compute unit that make ~16 subgroups of 32
 * (512 invocations) a unit: the skinny tensor-core forms and dot_mvb split K
 * into the fewest chunks that reach it, since each chunk's partials are written and
 * read back (bench/NOTES.md, "partials are traffic"). */
static inline uint32_t nxvk_mv_groups_per_unit(uint32_t wg) { return wg >= 512 ? 1 : 512 / wg; }
/* The shared memory a kernel that includes mvfold.glsl has for its own. */
static inline uint64_t nxvk_mv_shared_room(const nxvk_device_info *d) {
  return d->max_shared_memory > NXVK_MV_FOLD_SHARED ? d->max_shared_memory - NXVK_MV_FOLD_SHARED : 0;
}
int nxvk_dot_mv_run(nxvk_rec *r, const char *kernel, const uint32_t *spec, int nspec, const uint32_t *meta, int nmeta,
                    nxvk_buffer *A, nxvk_buffer *B, nxvk_buffer *C, nxvk_dtype out, uint32_t gx, uint32_t S,
                    uint32_t batch, uint64_t mn, int fold);
/* dot_mvc.c: the columns form (m up to 16, n > 16 or above m) of f32, f16
 * and bf16 on dot_mvc.comp (no barriers in its loop); 1 (nothing recorded)
 * where the rule, the shape or the device leaves it to nxvk_dot_mv. */
int nxvk_dot_mvc(nxvk_rec *r, nxvk_dtype dtype, nxvk_dtype out, nxvk_buffer *A, nxvk_buffer *B, nxvk_buffer *C,
                 uint32_t M, uint32_t N, uint32_t K, uint32_t batch);
/* dot_mvr.c: the rows form with 2 <= n <= 16 on dot_mvr.comp (lanes over
 * rows); 1 (nothing recorded) where it does not apply (dot_mv.c goes on). */
int nxvk_dot_mvr(nxvk_rec *r, nxvk_dtype dtype, nxvk_dtype out, nxvk_buffer *A, nxvk_buffer *B, nxvk_buffer *C,
                 uint32_t M, uint32_t N, uint32_t K, uint32_t batch);
/* dot_mvb.c: f32 rows products with n = 9..16 (2..16 under NXVK_DOT_MVB) on
 * dot_mvb.comp (B in registers); 1 (nothing recorded) where it does not apply. */
int nxvk_dot_mvb(nxvk_rec *r, nxvk_dtype dtype, nxvk_dtype out, nxvk_buffer *A, nxvk_buffer *B, nxvk_buffer *C,
                 uint32_t M, uint32_t N, uint32_t K, uint32_t batch);
/* Whether forced dot tiles suit the kernels on this device: NXVK_OK, or
 * NXVK_E_BAD_REQUEST with a message naming the variable (dot.c). */
int nxvk_dot_tuning_check(const nxvk_ctx *c, const nxvk_tuning *t);
/* The device's f16 x f16 + f32 fragment shape for dot and conv (dot.c). */
void nxvk_coopmat_fragment(const nxvk_device_info *d, bool fm_divides_32, uint32_t f[3]);
/* The same rule on the device's bf16 x bf16 + f32 configurations (16x16x16 where none is listed). */
void nxvk_coopmat_fragment_bf16(const nxvk_device_info *d, uint32_t f[3]);
/* The same for a forced conv_gemm tile and conv_coopmat layout (conv.c). */
int nxvk_conv_tuning_check(const nxvk_ctx *c, const nxvk_tuning *t);
/* The 8-bit radix sort's workgroup size for `items` elements an invocation
 * on this device, 0 where it cannot run (no subgroup ballots, subgroups
 * wider than 128, too little shared memory) (sort.c). */
uint32_t nxvk_sort8_wg(const nxvk_ctx *c, uint32_t items);

#endif
