/*
 * cases.h - the one case maker of conformance, stress and bench, and the
 * input filler behind them.  Every harness judges what it runs through
 * nxvk_check (one op) or nxvk_check_nodes (a fused chain), as `run --check`
 * does: the ULP limits, the denormal-flush rule and the fused-chain bound
 * live there, not here.
 *
 * A request (case_req) names an op-table row, a dtype, a size class, an
 * input class, a layout and a seed.  cases_make() finds the op's case rule
 * (case_rule below: by op name first, then by the op's kind) and asks it:
 *   - conformance (req.D set): every case the data names -- the size
 *     classes, shapes and layouts of conformance/size_classes.json, each in
 *     the input classes the data gives the kind (edge_values.json holds the
 *     edge values and random ranges per dtype);
 *   - stress and bench (req.D NULL): one case at about req.n elements in
 *     layout req.layout (taken modulo cases_layouts(op); CASES_PLAIN: the
 *     form a benchmark times), inputs of class req.fill.
 * cases_fill() fills a case's inputs from one seeded RNG: the rule's input
 * hook for the inputs it names special (select's predicate; an index
 * tensor, sorted data), the case's input class for the others.
 *
 * ADDING AN OP.  One row in the op table (src/ops/ops.h) -- and, when the
 * rule of its kind does not already make the right cases, one case rule in
 * cases.c:
 *   1. its cases:  static int data_<x>(case_gen *g)  calls case_add() for
 *      each conformance case (read sizes and shapes from the data with
 *      sizes_of() / jshape(), input classes with classes_of(); a new
 *      section of size_classes.json is fine), and
 *      static int sized_<x>(case_gen *g, int layout, conf_case *k)  fills
 *      k's inputs (sized_in()) and attributes for one case at g->r->n
 *      elements (return rule_refuse(g, ...) where it has none), and
 *      static int layouts_<x>(const nxvk_op_desc *op)  says how many
 *      layouts sized_<x> knows;
 *   2. special inputs (optional):  static void input_<x>(const case_fill *f,
 *      int i, nxvk_host *h, uint64_t *rng)  fills input i of every case
 *      whose bit is set in the rule's .special (index tensors in range,
 *      sorted or unsorted data, predicates); other inputs get the class;
 *   3. a row: in kind_rules[] for a new kind, or in op_rules[] for one op
 *      of an existing kind ({"gather", .input = input_gather, .special =
 *      1u << 1}: the fields it leaves NULL or 0 come from its kind's row).
 * A new dtype is its entries in conformance/edge_values.json (edge values,
 * ranges) and, where FILL_SIZED or FILL_TIMING need a rule for it, a branch
 * in fill_sized() / fill_timing().
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

/* Input classes.  NORMAL..POSITIVE: the data's ranges and edge values
 * (conformance); NONE: a source op's (no inputs); STATS: a source op's
 * distribution check; SIZED: values where every op's reference and limit
 * are meaningful at any size (stress); TIMING: cheap values in [0.5, 1.5)
 * that keep kernels off slow paths (bench). */
enum { FILL_NORMAL, FILL_WIDE, FILL_EDGE, FILL_POSITIVE, FILL_NONE, FILL_STATS, FILL_SIZED, FILL_TIMING };
extern const char *const fill_names[];

typedef struct {
  int nin;
  nxvk_dtype dt[CASE_MAX_IN];
  nxvk_shape shape[CASE_MAX_IN];
  nxvk_attrs attrs;
  int fill;
  char cls[16];   /* fill name; "edge-pairs" where inputs pair up */
  char where[240]; /* "size=257", "shape=[5,7,9] axes=[0,2] keep_axes" */
  int expect_err;  /* an error case by design (argmax of nothing): the code both the
                      GPU and the reference must refuse it with; 0: a value case */
} conf_case;

typedef struct {
  conf_case *v;
  int n, cap;
  char why[400]; /* cases_make's reason when it returns nonzero */
} case_list;

/* What a harness asks the case maker for. */
#define CASES_PLAIN (-1)
typedef struct case_req {
  const conf_data *D;       /* set: every case the data names (conformance); NULL: one sized case */
  const nxvk_op_desc *op;   /* the op-table row */
  nxvk_dtype dt;            /* the dtype under test: inputs, or a source op's output */
  int64_t n;                /* sized: about n elements (the size class) */
  int layout;               /* sized: which layout (modulo cases_layouts), or CASES_PLAIN */
  int fill;                 /* sized: the input class, FILL_SIZED or FILL_TIMING */
  unsigned dtypes_ok;       /* sized: the NXVK_DT mask a conversion may target */
  uint64_t seed;            /* sized: a source op's seed attribute */
} case_req;

/* The one case maker: L gets the cases of r (L->n is reset; L->v grows and
 * is the caller's to free).  0, or nonzero with the reason in L->why:
 * -1 for malformed data, NXVK_E_UNSUPPORTED where the op's rule has no case
 * (a sized request for an op kind or attribute set it knows no layout of).
 * Thread-safe for sized requests. */
int cases_make(const case_req *r, case_list *L);
/* A sized request's one case (cases_make into k; the reason in k->where). */
int cases_one(const case_req *r, conf_case *k);
/* How many layouts the op's rule has for sized requests. */
int cases_layouts(const nxvk_op_desc *op);
/* The dtypes an op is checked in. */
unsigned cases_op_dtypes(const nxvk_op_desc *op);

/* Inputs of a case (allocated by the caller to k's dtypes and shapes) from
 * one seeded RNG.  acc: the op accumulates (its limit has a sum factor:
 * the data may give such ops other ranges).  D may be NULL for FILL_SIZED
 * and FILL_TIMING.  -1 with cases_err set when the data has no rule. */
int cases_fill(const conf_data *D, const nxvk_op_desc *op, const conf_case *k, bool acc, uint64_t seed,
               nxvk_host *in);
/* FILL_TIMING values for a buffer that is no op's input (bench). */
void cases_fill_timing(nxvk_host *h, uint64_t *rng);

/* the data files */
extern char cases_err[400]; /* the last data error (cases_load, cases_fill: -1) */
int cases_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int cases_load(conf_data *D);
void cases_unload(conf_data *D);
bool cases_driver_builtin(const conf_data *D, const nxvk_op_desc *op, nxvk_dtype d);
const cJSON *cases_jget(const cJSON *o, const char *key);
bool cases_jdouble(const cJSON *v, double *out);

/* ---- for case rules (cases.c) ---- */

typedef struct case_rule case_rule;

/* A request being answered. */
typedef struct case_gen {
  const case_req *r;
  const conf_data *D;       /* r->D */
  const nxvk_op_desc *op;   /* r->op */
  nxvk_dtype dt;            /* r->dt */
  const case_rule *rule;    /* the op's rule, its kind's fields filled in */
  case_list *L;
} case_gen;

/* What an input hook sees. */
typedef struct case_fill {
  const conf_data *D;       /* NULL for sized cases */
  const nxvk_op_desc *op;
  const conf_case *k;
  bool acc;
} case_fill;

struct case_rule {
  const char *op;           /* op_rules[]: the op's name; kind_rules[]: NULL */
  int (*data)(case_gen *g); /* conformance: case_add() for every case the data names */
  int (*sized)(case_gen *g, int layout, conf_case *k); /* one case at g->r->n elements */
  int (*layouts)(const nxvk_op_desc *op);              /* how many layouts sized knows */
  unsigned special;         /* bit i: input i is filled by input(), not by the class */
  void (*input)(const case_fill *f, int i, nxvk_host *h, uint64_t *rng);
  int sized_values;         /* FILL_SIZED's ranges (0 in op_rules[]: the kind's) */
  int empty_error;          /* the error an op over no element is by design (argmax,
                               argmin, top_k); its cases expect it */
};
enum { SIZED_PLAIN = 1, SIZED_UNIT, SIZED_PRODUCT };

/* Add a case to g's list (cases.c; every rule's cases go through it). */
int case_add(case_gen *g, int nin, const nxvk_shape *shapes, const nxvk_dtype *dts,
             const nxvk_attrs *a, int fill, const char *where);

/* cases_index.c: the rule of the indexing ops (NXVK_KIND_INDEX). */
int cases_index_data(case_gen *g);
int cases_index_sized(case_gen *g, int layout, conf_case *k);
int cases_index_layouts(const nxvk_op_desc *op);
void cases_index_input(const case_fill *f, int i, nxvk_host *h, uint64_t *rng);

#endif
