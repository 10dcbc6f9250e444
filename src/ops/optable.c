/*
 * optable.c - THE op table.  Every subcommand iterates it; no subcommand
 * knows an op's name.  Elementwise rows come from elementwise.def; their
 * scalar references are below, one function per op.
 */
#include "ops.h"
#include "ew_desc.h"

#include <math.h>
#include <string.h>

/* ---- scalar references for elementwise ops ----
 * Floats: inputs are exact values of dtype t held in long double.  Ops the
 * precision policy calls exact are computed in t itself (IEEE guarantees the
 * correctly rounded result); the others in long double and rounded once by
 * the caller.  Integers: computed in int64, wrapped to t by the caller. */

#define IS_F(t) nxvk_dtype_is_float(t)
#define U64(t) ((t) == NXVK_U64)
#define F(x) ((nxvk_scalar){.f = (x)})
#define I(x) ((nxvk_scalar){.i = (x)})
/* a OP b evaluated in the dtype's own precision; f16 and bf16 compute in f32
 * (the store rounds the f32 result once more, to the 16-bit format) */
#define NATIVE2(t, a, b, OP) \
  ((t) != NXVK_F64 ? (long double)((float)(a)OP(float)(b)) : (long double)((double)(a)OP(double)(b)))
/* integer arithmetic wraps: done in uint64, so no signed overflow */
#define WRAP2(a, b, OP) ((int64_t)((uint64_t)(a)OP(uint64_t)(b)))

typedef nxvk_scalar S;
typedef nxvk_dtype T;

static S r_add(S a, S b, S c, T t) { (void)c; return IS_F(t) ? F(NATIVE2(t, a.f, b.f, +)) : I(WRAP2(a.i, b.i, +)); }
static S r_subtract(S a, S b, S c, T t) { (void)c; return IS_F(t) ? F(NATIVE2(t, a.f, b.f, -)) : I(WRAP2(a.i, b.i, -)); }
static S r_multiply(S a, S b, S c, T t) {
  (void)c;
  if (IS_F(t)) return F(NATIVE2(t, a.f, b.f, *));
  return I(WRAP2(a.i, b.i, *));   /* the low bits of the product, wrapped by the caller */
}
static S r_divide(S a, S b, S c, T t) {
  (void)c;
  if (IS_F(t)) return F(NATIVE2(t, a.f, b.f, /));
  if (b.i == 0) return I(0);
  if (U64(t)) return I((int64_t)((uint64_t)a.i / (uint64_t)b.i));
  /* INT_MIN / -1 = INT_MIN: narrower types wrap +2^(n-1) back in the caller */
  if (a.i == INT64_MIN && b.i == -1) return I(INT64_MIN);
  return I(a.i / b.i);       /* C truncates toward zero */
}
static S r_pow(S a, S b, S c, T t) { (void)c; (void)t; return F(powl(a.f, b.f)); }
static bool lt(S a, S b, T t) { return U64(t) ? (uint64_t)a.i < (uint64_t)b.i : a.i < b.i; }
static S r_max(S a, S b, S c, T t) {
  (void)c;
  if (IS_F(t)) return isnan(a.f) ? a : isnan(b.f) ? b : (a.f > b.f ? a : b);
  return lt(b, a, t) ? a : b;
}
static S r_min(S a, S b, S c, T t) {
  (void)c;
  if (IS_F(t)) return isnan(a.f) ? a : isnan(b.f) ? b : (a.f < b.f ? a : b);
  return lt(a, b, t) ? a : b;
}
static S r_remainder(S a, S b, S c, T t) {
  (void)c;
  if (IS_F(t)) return F(fmodl(a.f, b.f));
  if (b.i == 0) return I(0);
  if (U64(t)) return I((int64_t)((uint64_t)a.i % (uint64_t)b.i));
  if (b.i == -1) return I(0);      /* INT64_MIN % -1 is 0 (C leaves it undefined) */
  return I(a.i % b.i);
}
static S r_atan2(S a, S b, S c, T t) { (void)c; (void)t; return F(atan2l(a.f, b.f)); }

#define CMP(name, OP)                                        \
  static S r_##name(S a, S b, S c, T t) {                    \
    (void)c;                                                 \
    if (IS_F(t)) return I(a.f OP b.f);                       \
    if (U64(t)) return I((uint64_t)a.i OP(uint64_t)b.i);     \
    return I(a.i OP b.i);                                    \
  }
CMP(equal, ==)
CMP(less, <)
CMP(less_equal, <=)
CMP(greater, >)
CMP(greater_equal, >=)
static S r_not_equal(S a, S b, S c, T t) { (void)c; return I(IS_F(t) ? !(a.f == b.f) : a.i != b.i); }

#define UNARY_F(name, expr)                       \
  static S r_##name(S a, S b, S c, T t) {         \
    (void)b; (void)c; (void)t;                    \
    long double x = a.f;                          \
    return F(expr);                               \
  }
UNARY_F(exp, expl(x))
UNARY_F(log, logl(x))
UNARY_F(rsqrt, 1.0L / sqrtl(x))
UNARY_F(sigmoid, 1.0L / (1.0L + expl(-x)))
UNARY_F(tanh, tanhl(x))
UNARY_F(floor, floorl(x))
UNARY_F(ceil, ceill(x))
UNARY_F(round, roundl(x))
UNARY_F(sin, sinl(x))
UNARY_F(cos, cosl(x))
UNARY_F(expm1, expm1l(x))
UNARY_F(log1p, log1pl(x))
UNARY_F(erf, erfl(x))
UNARY_F(tan, tanl(x))
UNARY_F(asin, asinl(x))
UNARY_F(acos, acosl(x))
UNARY_F(atan, atanl(x))
UNARY_F(sinh, sinhl(x))
UNARY_F(cosh, coshl(x))
UNARY_F(asinh, asinhl(x))
UNARY_F(acosh, acoshl(x))
UNARY_F(atanh, atanhl(x))
UNARY_F(cbrt, cbrtl(x))
UNARY_F(erfc, erfcl(x))
/* erf_inv: long double Newton steps on erfl (|y| < 1/2) or erfcl (1 - |y|
 * exact), from a bisection: libm has no inverse */
static long double erf_inv_ld(long double y) {
  if (isnan(y)) return y;
  long double ay = fabsl(y);
  if (ay > 1) return NAN;
  if (ay == 1) return copysignl(INFINITY, y);
  if (ay < 0x1p-40L) return y * 0.886226925452758013649083741671L;
  long double lo = 0, hi = 30;
  for (int i = 0; i < 80; i++) {
    long double m = 0.5L * (lo + hi);
    long double v = ay < 0.5L ? erfl(m) - ay : (1 - ay) - erfcl(m);
    if (v > 0) hi = m; else lo = m;
  }
  long double x = 0.5L * (lo + hi);
  const long double c = 1.128379167095512573896158903121545L; /* 2/sqrt(pi) */
  for (int i = 0; i < 3; i++) {
    long double d = c * expl(-x * x);
    x -= ay < 0.5L ? (erfl(x) - ay) / d : ((1 - ay) - erfcl(x)) / d;
  }
  return copysignl(x, y);
}
UNARY_F(erf_inv, erf_inv_ld(x))
static S r_sqrt(S a, S b, S c, T t) {
  (void)b; (void)c;
  /* correctly rounded in the dtype itself */
  return F(t != NXVK_F64 ? (long double)sqrtf((float)a.f) : (long double)sqrt((double)a.f));
}
/* abs(INT_MIN) = INT_MIN and -INT_MIN = INT_MIN, as numpy wraps */
static S r_abs(S a, S b, S c, T t) { (void)b; (void)c; return IS_F(t) ? F(fabsl(a.f)) : I(a.i < 0 ? WRAP2(0, a.i, -) : a.i); }
static S r_negate(S a, S b, S c, T t) { (void)b; (void)c; return IS_F(t) ? F(-a.f) : I(WRAP2(0, a.i, -)); }
static S r_sign(S a, S b, S c, T t) {
  (void)b; (void)c;
  if (IS_F(t)) return F(a.f > 0 ? 1.0L : a.f < 0 ? -1.0L : isnan(a.f) ? a.f : 0.0L);
  return I(a.i > 0 ? 1 : a.i < 0 ? -1 : 0);
}
static S r_select(S a, S b, S c, T t) {
  (void)t;
  /* operands are (pred, a, b); the kernel's expression names them c, a, b */
  return a.i != 0 ? b : c;
}

/* ---- integer and logical ops: integers arrive sign- (signed) or zero-
 * extended (unsigned; u64 as its bits) and results are wrapped by the
 * caller, so only shifts, clz and popcount look at the width. */
static int width(T t) { return nxvk_dtype_info_of(t)->bits; }
static uint64_t wmask(T t) { return width(t) == 64 ? ~UINT64_C(0) : (UINT64_C(1) << width(t)) - 1; }
static bool is_signed(T t) { return nxvk_dtype_info_of(t)->cls == NXVK_CLASS_SIGNED; }
/* a shift count outside 0..width-1 (negative too; u64 counts unsigned) */
static bool shift_out(S b, T t) {
  return is_signed(t) ? (b.i < 0 || b.i >= width(t)) : (uint64_t)b.i >= (uint64_t)width(t);
}
static S r_bitwise_and(S a, S b, S c, T t) { (void)c; (void)t; return I(a.i & b.i); }
static S r_bitwise_or(S a, S b, S c, T t) { (void)c; (void)t; return I(a.i | b.i); }
static S r_bitwise_xor(S a, S b, S c, T t) { (void)c; (void)t; return I(a.i ^ b.i); }
static S r_bitwise_not(S a, S b, S c, T t) { (void)b; (void)c; (void)t; return I(~a.i); }
static S r_left_shift(S a, S b, S c, T t) {
  (void)c;
  return shift_out(b, t) ? I(0) : I((int64_t)((uint64_t)a.i << b.i));
}
static S r_right_shift(S a, S b, S c, T t) {
  (void)c;
  if (is_signed(t)) return I(shift_out(b, t) ? (a.i < 0 ? -1 : 0) : (a.i < 0 ? ~(~a.i >> b.i) : a.i >> b.i));
  return shift_out(b, t) ? I(0) : I((int64_t)(((uint64_t)a.i & wmask(t)) >> b.i));
}
static S r_count_leading_zeros(S a, S b, S c, T t) {
  (void)b; (void)c;
  uint64_t x = (uint64_t)a.i & wmask(t);
  return I(x ? width(t) - (64 - __builtin_clzll(x)) : width(t));
}
static S r_population_count(S a, S b, S c, T t) {
  (void)b; (void)c;
  return I(__builtin_popcountll((uint64_t)a.i & wmask(t)));
}
static S r_quotient(S a, S b, S c, T t) { return r_divide(a, b, c, t); }
/* nonzero is true, NaN too; -0 is false */
static bool truth(S a, T t) { return IS_F(t) ? a.f != 0 || isnan(a.f) : a.i != 0; }
static S r_logical_and(S a, S b, S c, T t) { (void)c; return I(truth(a, t) && truth(b, t)); }
static S r_logical_or(S a, S b, S c, T t) { (void)c; return I(truth(a, t) || truth(b, t)); }
static S r_logical_xor(S a, S b, S c, T t) { (void)c; return I(truth(a, t) != truth(b, t)); }
static S r_logical_not(S a, S b, S c, T t) { (void)b; (void)c; return I(!truth(a, t)); }
static S r_is_nan(S a, S b, S c, T t) { (void)b; (void)c; return I(IS_F(t) && isnan(a.f)); }
static S r_is_infinity(S a, S b, S c, T t) { (void)b; (void)c; return I(IS_F(t) && isinf(a.f)); }

/* ---- the table ---- */

#define RED_ATTRS (NXVK_ATTR_AXES | NXVK_ATTR_KEEP_AXES)
#define NUMERIC NXVK_DT_ALL

const nxvk_op nxvk_op_table[] = {
#define EW(name, kind, dtypes, glsl, summary)                                                     \
  {EW_DESC(name, kind, dtypes, glsl, summary), nxvk_ew_infer, nxvk_ew_gpu, nxvk_ew_ref, r_##name, 0, NULL},
#include "elementwise.def"
#undef EW
    /* reductions */
    {{"sum", NXVK_KIND_REDUCE, 1, NUMERIC, RED_ATTRS, NULL, "sum over axes (empty: 0)"},
     nxvk_reduce_infer, nxvk_reduce_gpu, nxvk_reduce_ref, NULL, NXVK_RED_SUM, NULL},
    {{"product", NXVK_KIND_REDUCE, 1, NUMERIC, RED_ATTRS, NULL, "product over axes (empty: 1)"},
     nxvk_reduce_infer, nxvk_reduce_gpu, nxvk_reduce_ref, NULL, NXVK_RED_PRODUCT, NULL},
    {{"reduce_max", NXVK_KIND_REDUCE, 1, NXVK_DT_ALL, RED_ATTRS, NULL,
      "maximum over axes, NaN propagates (empty: -inf)"},
     nxvk_reduce_infer, nxvk_reduce_gpu, nxvk_reduce_ref, NULL, NXVK_RED_MAX, NULL},
    {{"reduce_min", NXVK_KIND_REDUCE, 1, NXVK_DT_ALL, RED_ATTRS, NULL,
      "minimum over axes, NaN propagates (empty: +inf)"},
     nxvk_reduce_infer, nxvk_reduce_gpu, nxvk_reduce_ref, NULL, NXVK_RED_MIN, NULL},
    {{"argmax", NXVK_KIND_REDUCE, 1, NXVK_DT_ALL, RED_ATTRS | NXVK_ATTR_TIE_BREAK, NULL,
      "i32 index of the first maximum (first NaN) over axes; tie_break high: the last"},
     nxvk_reduce_infer, nxvk_reduce_gpu, nxvk_reduce_ref, NULL, NXVK_RED_ARGMAX, NULL},
    {{"argmin", NXVK_KIND_REDUCE, 1, NXVK_DT_ALL, RED_ATTRS | NXVK_ATTR_TIE_BREAK, NULL,
      "i32 index of the first minimum (first NaN) over axes; tie_break high: the last"},
     nxvk_reduce_infer, nxvk_reduce_gpu, nxvk_reduce_ref, NULL, NXVK_RED_ARGMIN, NULL},
    {{"all", NXVK_KIND_REDUCE, 1, NXVK_DT_ANY, RED_ATTRS, NULL,
      "bool: every element over axes nonzero (NaN is nonzero; empty: true)"},
     nxvk_reduce_infer, nxvk_reduce_gpu, nxvk_reduce_ref, NULL, NXVK_RED_ALL, NULL},
    {{"any", NXVK_KIND_REDUCE, 1, NXVK_DT_ANY, RED_ATTRS, NULL,
      "bool: some element over axes nonzero (empty: false)"},
     nxvk_reduce_infer, nxvk_reduce_gpu, nxvk_reduce_ref, NULL, NXVK_RED_ANY, NULL},
    {{"mean", NXVK_KIND_REDUCE, 1, NXVK_DT_FLOAT, RED_ATTRS, NULL, "mean over axes (empty: NaN)"},
     nxvk_reduce_infer, nxvk_reduce_gpu, nxvk_reduce_ref, NULL, NXVK_RED_MEAN, NULL},
    /* dot */
    {{"dot", NXVK_KIND_DOT, 2, NXVK_DT_FLOAT | NXVK_DT(NXVK_I32) | NXVK_DT(NXVK_I64),
      NXVK_ATTR_VARIANT | NXVK_ATTR_DTYPE, NULL,
      "[m,k]x[k,n] and batched [b,m,k]x[b,k,n] (f16/bf16 summed in f32, result f16/bf16 or \"dtype\": \"f32\"; "
      "integers exact, wrapping)"},
     nxvk_dot_infer, nxvk_dot_gpu, nxvk_dot_ref, NULL, 0, nxvk_dot_supported},
    /* conv */
    {{"conv", NXVK_KIND_CONV, 2, NXVK_DT_FLOAT, NXVK_ATTR_CONV, NULL,
      "Nx.conv: strides, padding, dilations, feature/batch groups, permutations (f16/bf16 summed in f32)"},
     nxvk_conv_infer, nxvk_conv_gpu, nxvk_conv_ref, NULL, 0, NULL},
    /* linear algebra */
    {{"cholesky", NXVK_KIND_LINALG, 1, NXVK_DT(NXVK_F32) | NXVK_DT(NXVK_F64), 0, NULL,
      "L with A = L L^T per [..., n, n] matrix (lower triangle read; not positive definite: NaN)"},
     nxvk_linalg_infer, nxvk_linalg_gpu, nxvk_linalg_ref, NULL, NXVK_LINALG_CHOLESKY, NULL},
    {{"triangular_solve", NXVK_KIND_LINALG, 2, NXVK_DT(NXVK_F32) | NXVK_DT(NXVK_F64), NXVK_ATTR_TRIANGULAR, NULL,
      "x with op(a) x = b or x op(a) = b, a triangular (left_side, lower, transform_a as Nx)"},
     nxvk_linalg_infer, nxvk_linalg_gpu, nxvk_linalg_ref, NULL, NXVK_LINALG_TRIANGULAR_SOLVE, NULL},
    /* movement */
    {{"reshape", NXVK_KIND_MOVEMENT, 1, NXVK_DT_ANY, NXVK_ATTR_SHAPE, NULL,
      "same data under a new shape (one -1 inferred); no copy"},
     nxvk_reshape_infer, NULL, nxvk_reshape_ref, NULL, 0, NULL},
    {{"transpose", NXVK_KIND_MOVEMENT, 1, NXVK_DT_ANY, NXVK_ATTR_PERM, NULL,
      "permute axes (default: reverse)"},
     nxvk_transpose_infer, nxvk_transpose_gpu, nxvk_transpose_ref, NULL, 0, NULL},
    {{"slice", NXVK_KIND_MOVEMENT, 1, NXVK_DT_ANY, NXVK_ATTR_SLICE, NULL,
      "start, length and stride per axis"},
     nxvk_slice_infer, nxvk_slice_gpu, nxvk_slice_ref, NULL, 0, NULL},
    {{"reverse", NXVK_KIND_MOVEMENT, 1, NXVK_DT_ANY, NXVK_ATTR_AXES, NULL,
      "reverse the order along axes (default: all)"},
     nxvk_reverse_infer, nxvk_reverse_gpu, nxvk_reverse_ref, NULL, 0, NULL},
    {{"concatenate", NXVK_KIND_MOVEMENT, -1, NXVK_DT_ANY, NXVK_ATTR_AXIS, NULL,
      "join along axis (default 0)"},
     nxvk_concat_infer, nxvk_concat_gpu, nxvk_concat_ref, NULL, 0, NULL},
    {{"as_type", NXVK_KIND_MOVEMENT, 1, NXVK_DT_ANY, NXVK_ATTR_DTYPE, NULL,
      "convert dtype (NaN -> 0, float -> int saturates)"},
     nxvk_astype_infer, nxvk_astype_gpu, nxvk_astype_ref, NULL, 0, NULL},
    {{"bitcast", NXVK_KIND_MOVEMENT, 1, NXVK_DT_ALL, NXVK_ATTR_DTYPE, NULL,
      "the same bytes as another dtype of the same width (Nx.bitcast)"},
     nxvk_bitcast_infer, nxvk_bitcast_gpu, nxvk_bitcast_ref, NULL, 0, NULL},
    /* shape and indexing (index.c) */
    {{"broadcast", NXVK_KIND_INDEX, 1, NXVK_DT_ANY, NXVK_ATTR_SHAPE | NXVK_ATTR_AXES, NULL,
      "to shape; axes: the result axis of each input axis (default: the trailing ones)"},
     nxvk_broadcast_infer, nxvk_broadcast_gpu, nxvk_broadcast_ref, NULL, 0, NULL},
    {{"pad", NXVK_KIND_INDEX, 2, NXVK_DT_ANY, NXVK_ATTR_PAD, NULL,
      "pad(x, value): low, high (negative trims) and interior per axis; value a scalar"},
     nxvk_pad_infer, nxvk_pad_gpu, nxvk_pad_ref, NULL, 0, NULL},
    {{"dynamic_slice", NXVK_KIND_INDEX, 2, NXVK_DT_ANY, NXVK_ATTR_SLICE, NULL,
      "dynamic_slice(x, starts): length (and stride) per axis; starts clamped to 0..dim-length"},
     nxvk_dynslice_infer, nxvk_gather_gpu, nxvk_gather_ref, NULL, 0, NULL},
    {{"put_slice", NXVK_KIND_INDEX, 3, NXVK_DT_ANY, 0, NULL,
      "put_slice(x, slice, starts): starts clamped to 0..dim-slice dim"},
     nxvk_putslice_infer, nxvk_putslice_gpu, nxvk_putslice_ref, NULL, 0, NULL},
    {{"gather", NXVK_KIND_INDEX, 2, NXVK_DT_ANY, NXVK_ATTR_AXES, NULL,
      "gather(x, indices): indices' last axis indexes axes (default leading); clamped"},
     nxvk_gather_infer, nxvk_gather_gpu, nxvk_gather_ref, NULL, 0, NULL},
    {{"take", NXVK_KIND_INDEX, 2, NXVK_DT_ANY, NXVK_ATTR_AXIS, NULL,
      "take(x, indices) along axis (default 0); indices clamped"},
     nxvk_take_infer, nxvk_gather_gpu, nxvk_gather_ref, NULL, 0, NULL},
    {{"take_along_axis", NXVK_KIND_INDEX, 2, NXVK_DT_ANY, NXVK_ATTR_AXIS, NULL,
      "take_along_axis(x, indices) along axis (default 0); indices clamped"},
     nxvk_take_infer, nxvk_gather_gpu, nxvk_gather_ref, NULL, 1, NULL},
    {{"indexed_add", NXVK_KIND_INDEX, 3, NXVK_DT_ALL, NXVK_ATTR_AXES, NULL,
      "indexed_add(x, indices [n,k], updates): duplicates add; out-of-range dropped"},
     nxvk_indexed_infer, nxvk_indexed_gpu, nxvk_indexed_ref, NULL, 0, nxvk_indexed_supported},
    {{"indexed_put", NXVK_KIND_INDEX, 3, NXVK_DT_ANY, NXVK_ATTR_AXES, NULL,
      "indexed_put(x, indices [n,k], updates): the last duplicate wins; out-of-range dropped"},
     nxvk_indexed_infer, nxvk_indexed_gpu, nxvk_indexed_ref, NULL, 1, NULL},
    /* sources */
    {{"iota", NXVK_KIND_SOURCE, 0, NXVK_DT_ALL, NXVK_ATTR_SHAPE | NXVK_ATTR_AXIS | NXVK_ATTR_DTYPE,
      NULL, "0, 1, 2, ... over the shape, or along axis (default dtype i32)"},
     nxvk_source_infer, nxvk_iota_gpu, nxvk_iota_ref, NULL, 0, NULL},
    {{"eye", NXVK_KIND_SOURCE, 0, NXVK_DT_ALL, NXVK_ATTR_SHAPE | NXVK_ATTR_DTYPE, NULL,
      "identity matrices: 1 where the last two indices are equal (rank >= 2; default dtype i32)"},
     nxvk_source_infer, nxvk_eye_gpu, nxvk_eye_ref, NULL, 0, NULL},
    {{"random_uniform", NXVK_KIND_SOURCE, 0, NXVK_DT_FLOAT,
      NXVK_ATTR_SHAPE | NXVK_ATTR_SEED | NXVK_ATTR_DTYPE, NULL,
      "Philox4x32-10 uniform in [0,1) (default dtype f32)"},
     nxvk_source_infer, nxvk_random_gpu, nxvk_random_ref, NULL, NXVK_RANDOM_UNIFORM, NULL},
    {{"random_normal", NXVK_KIND_SOURCE, 0, NXVK_DT_FLOAT,
      NXVK_ATTR_SHAPE | NXVK_ATTR_SEED | NXVK_ATTR_DTYPE, NULL,
      "Philox4x32-10 + Box-Muller standard normal (default dtype f32)"},
     nxvk_source_infer, nxvk_random_gpu, nxvk_random_ref, NULL, NXVK_RANDOM_NORMAL, NULL},
    /* scans (scan.c) */
#define SCAN_ATTRS (NXVK_ATTR_AXIS | NXVK_ATTR_REVERSE)
    {{"cumulative_sum", NXVK_KIND_SCAN, 1, NXVK_DT_ALL, SCAN_ATTRS, NULL,
      "running sum along axis (default 0), reverse: from the end"},
     nxvk_scan_infer, nxvk_scan_gpu, nxvk_scan_ref, NULL, NXVK_SCAN_SUM, NULL},
    {{"cumulative_product", NXVK_KIND_SCAN, 1, NXVK_DT_ALL, SCAN_ATTRS, NULL,
      "running product along axis (default 0), reverse: from the end"},
     nxvk_scan_infer, nxvk_scan_gpu, nxvk_scan_ref, NULL, NXVK_SCAN_PRODUCT, NULL},
    {{"cumulative_max", NXVK_KIND_SCAN, 1, NXVK_DT_ALL, SCAN_ATTRS, NULL,
      "running maximum along axis (NaN propagates), reverse: from the end"},
     nxvk_scan_infer, nxvk_scan_gpu, nxvk_scan_ref, NULL, NXVK_SCAN_MAX, NULL},
    {{"cumulative_min", NXVK_KIND_SCAN, 1, NXVK_DT_ALL, SCAN_ATTRS, NULL,
      "running minimum along axis (NaN propagates), reverse: from the end"},
     nxvk_scan_infer, nxvk_scan_gpu, nxvk_scan_ref, NULL, NXVK_SCAN_MIN, NULL},
    /* sorting (sort.c): stable, NaN last ascending and first descending, -0 == +0 */
    {{"sort", NXVK_KIND_SORT, 1, NXVK_DT_ANY, NXVK_ATTR_AXIS | NXVK_ATTR_DIRECTION, NULL,
      "stable sort along axis (default 0), direction asc (default) or desc"},
     nxvk_sort_infer, nxvk_sort_gpu, nxvk_sort_ref, NULL, NXVK_SORT_VALUES, NULL},
    {{"argsort", NXVK_KIND_SORT, 1, NXVK_DT_ANY, NXVK_ATTR_AXIS | NXVK_ATTR_DIRECTION | NXVK_ATTR_DTYPE,
      NULL, "indices of the stable sort along axis (dtype default i32)"},
     nxvk_sort_infer, nxvk_sort_gpu, nxvk_sort_ref, NULL, NXVK_SORT_INDICES, NULL},
    {{"top_k", NXVK_KIND_SORT, 1, NXVK_DT_ANY, NXVK_ATTR_K, NULL,
      "the k (default 1) largest along the last axis, descending (NaN first; ties: first index)"},
     nxvk_sort_infer, nxvk_sort_gpu, nxvk_sort_ref, NULL, NXVK_SORT_VALUES, NULL},
    {{"top_k_indices", NXVK_KIND_SORT, 1, NXVK_DT_ANY, NXVK_ATTR_K | NXVK_ATTR_DTYPE, NULL,
      "indices of top_k's values (dtype default i32)"},
     nxvk_sort_infer, nxvk_sort_gpu, nxvk_sort_ref, NULL, NXVK_SORT_INDICES, NULL},
    /* windows (window.c) */
    {{"window_sum", NXVK_KIND_WINDOW, 1, NXVK_DT_ALL, NXVK_ATTR_WINDOW, NULL,
      "sum over windows (window_dimensions, strides, padding, window_dilations)"},
     nxvk_window_infer, nxvk_window_gpu, nxvk_window_ref, NULL, NXVK_SCAN_SUM, NULL},
    {{"window_product", NXVK_KIND_WINDOW, 1, NXVK_DT_ALL, NXVK_ATTR_WINDOW, NULL,
      "product over windows"},
     nxvk_window_infer, nxvk_window_gpu, nxvk_window_ref, NULL, NXVK_SCAN_PRODUCT, NULL},
    {{"window_max", NXVK_KIND_WINDOW, 1, NXVK_DT_ALL, NXVK_ATTR_WINDOW, NULL,
      "maximum over windows, NaN propagates (padding: the lowest value)"},
     nxvk_window_infer, nxvk_window_gpu, nxvk_window_ref, NULL, NXVK_SCAN_MAX, NULL},
    {{"window_min", NXVK_KIND_WINDOW, 1, NXVK_DT_ALL, NXVK_ATTR_WINDOW, NULL,
      "minimum over windows, NaN propagates (padding: the highest value)"},
     nxvk_window_infer, nxvk_window_gpu, nxvk_window_ref, NULL, NXVK_SCAN_MIN, NULL},
    {{"window_scatter_max", NXVK_KIND_WINDOW, 3, NXVK_DT_ALL, NXVK_ATTR_WINDOW, NULL,
      "window_scatter_max(x, source, init): init + source at each window's last largest x"},
     nxvk_window_infer, nxvk_window_gpu, nxvk_window_ref, NULL, NXVK_SCAN_MAX, NULL},
    {{"window_scatter_min", NXVK_KIND_WINDOW, 3, NXVK_DT_ALL, NXVK_ATTR_WINDOW, NULL,
      "window_scatter_min(x, source, init): init + source at each window's last smallest x"},
     nxvk_window_infer, nxvk_window_gpu, nxvk_window_ref, NULL, NXVK_SCAN_MIN, NULL},
};

const int nxvk_op_table_len = (int)NXVK_ARRAY_LEN(nxvk_op_table);

int nxvk_op_count(void) { return nxvk_op_table_len; }

const nxvk_op_desc *nxvk_op_at(int i) {
  return i >= 0 && i < nxvk_op_table_len ? &nxvk_op_table[i].d : NULL;
}

const nxvk_op_desc *nxvk_op_find(const char *name) {
  for (int i = 0; i < nxvk_op_table_len; i++)
    if (strcmp(nxvk_op_table[i].d.name, name) == 0) return &nxvk_op_table[i].d;
  return NULL;
}

