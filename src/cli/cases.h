/*
 * cases.h - conformance's case maker: the cases of an op x dtype, generated
 * from its op-table row (kind, arity, dtypes, accepted attributes, kernel
 * variants) and from data (conformance/size_classes.json: size classes and
 * layouts; conformance/edge_values.json: input classes and edge values),
 * and their inputs, filled from one seeded RNG per case.  Stress and bench
 * take their cases at a given size from the same rules (cases_sized).  A new
 * op kind is one generator here (cases_generate and cases_sized dispatch on
 * the kind); a new dtype is one input rule (cases_fill_inputs,
 * cases_fill_sized) and its rows in the data.
 */
#ifndef NXVK_CLI_CASES_H
#define NXVK_CLI_CASES_H

#include <cjson/cJSON.h>

#include "../nxvk.h"

#define CASE_MAX_IN 4
#define SIZE_FILE "conformance/size_classes.json"

typedef struct {
  cJSON *values; /* edge_values.json */
  cJSON *sizes;  /* size_classes.json */
  bool quick;
} conf_data;

enum { FILL_NORMAL, FILL_WIDE, FILL_EDGE, FILL_POSITIVE, FILL_NONE, FILL_STATS };
extern const char *const fill_names[];

typedef struct {
  int nin;
  nxvk_dtype dt[CASE_MAX_IN];
  nxvk_shape shape[CASE_MAX_IN];
  nxvk_attrs attrs;
  int fill;
  char cls[16];   /* fill name; "edge-pairs" where inputs pair up */
  char where[240]; /* "size=257", "shape=[5,7,9] axes=[0,2] keep_axes" */
} conf_case;

typedef struct {
  conf_case *v;
  int n, cap;
} case_list;

/* the last data error (cases_load, cases_generate, cases_fill_inputs: -1) */
extern char cases_err[400];
int cases_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int cases_load(conf_data *D);
void cases_unload(conf_data *D);
bool cases_driver_builtin(const conf_data *D, const nxvk_op_desc *op, nxvk_dtype d);
int cases_fill_inputs(const conf_data *D, const nxvk_op_desc *op, const conf_case *k, bool acc,
                      uint64_t seed, nxvk_host *in);
int cases_generate(const conf_data *D, const nxvk_op_desc *op, nxvk_dtype dt, case_list *L);
unsigned cases_op_dtypes(const nxvk_op_desc *op);
/* One case of op x dt at about n elements, the rule stress and bench take:
 * shapes, dtypes and attributes (no inputs) in one of cases_sized_layouts(op)
 * layouts (shapes, kernel variants, target dtypes; `layout` is taken modulo
 * it), or CASES_PLAIN, the form a benchmark times (layout 0; dot square with
 * the op's own kernel choice).  dtypes_ok: the NXVK_DT mask a conversion may
 * target; seed: a source op's seed attribute.  NXVK_E_UNSUPPORTED for an op
 * kind or attribute set it has no rule for, k->where saying why. */
#define CASES_PLAIN (-1)
int cases_sized_layouts(const nxvk_op_desc *op);
int cases_sized(const nxvk_op_desc *op, nxvk_dtype dt, int64_t n, int layout, unsigned dtypes_ok,
                uint64_t seed, conf_case *k);
/* Inputs of a sized case from one seeded RNG: values where the reference and
 * the limits are meaningful for the op's kind (predicate: 0 or 1). */
void cases_fill_sized(nxvk_host *h, nxvk_kind kind, bool predicate, uint64_t *rng);
const cJSON *cases_jget(const cJSON *o, const char *key);
bool cases_jdouble(const cJSON *v, double *out);

#endif
