/*
 * cases.h - conformance's case maker: the cases of an op x dtype, generated
 * from its op-table row (kind, arity, dtypes, accepted attributes, kernel
 * variants) and from data (conformance/size_classes.json: size classes and
 * layouts; conformance/edge_values.json: input classes and edge values),
 * and their inputs, filled from one seeded RNG per case.  A new op kind is
 * one generator here (cases_generate dispatches on the kind); a new dtype
 * is one input rule (cases_fill_inputs) and its rows in the data.
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
const cJSON *cases_jget(const cJSON *o, const char *key);
bool cases_jdouble(const cJSON *v, double *out);

#endif
