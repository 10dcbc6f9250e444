/*
 * ew_desc.h - EW_DESC(name, kind, dtypes, glsl, summary): one row of
 * elementwise.def as an nxvk_op_desc initializer, for the op table and the
 * build-time shader generator (tools/genshaders.c).
 */
#ifndef NXVK_EW_DESC_H
#define NXVK_EW_DESC_H

#define EW_KIND_BINARY NXVK_KIND_BINARY
#define EW_KIND_COMPARE NXVK_KIND_COMPARE
#define EW_KIND_UNARY NXVK_KIND_UNARY
#define EW_KIND_SELECT NXVK_KIND_SELECT
#define EW_KIND_TEST NXVK_KIND_COMPARE /* unary giving bool */
#define EW_ARITY_BINARY 2
#define EW_ARITY_COMPARE 2
#define EW_ARITY_UNARY 1
#define EW_ARITY_SELECT 3
#define EW_ARITY_TEST 1
#define EW_DT_ALL NXVK_DT_ALL
#define EW_DT_FLOAT NXVK_DT_FLOAT
#define EW_DT_ANY NXVK_DT_ANY
#define EW_DT_SIGNED (NXVK_DT_FLOAT | NXVK_DT_SINT)
#define EW_DT_INT NXVK_DT_INT

#define EW_DESC(name, kind, dtypes, glsl, summary) \
  {#name, EW_KIND_##kind, EW_ARITY_##kind, EW_DT_##dtypes, 0, glsl, summary}

#endif
