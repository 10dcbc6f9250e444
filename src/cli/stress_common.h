/*
 * stress_common.h - what the modes of `nxvk stress` share (cmd_stress.c and
 * src/cli/stress_*.c): the per-mode report with its checks and figures,
 * options, a seeded random stream, generic op cases built from the op table
 * (no op names), and the memory probes.
 */
#ifndef NXVK_STRESS_COMMON_H
#define NXVK_STRESS_COMMON_H

#include <cjson/cJSON.h>
#include <stdarg.h>

#include "cli.h"

/* ---------------------------------------------------------------- options */

typedef struct stress_opts {
  bool quick, strict;
  uint64_t seed;
  long threads, ops_per_thread;       /* race */
  double duration;                    /* race, leak: seconds (0 = counts) */
  long cycles;                        /* leak */
  uint64_t size;                      /* leak and kill tensor bytes (0 = mode default) */
  long procs, wave;                   /* kill */
  uint64_t limit;                     /* oom (0 = device default; UINT64_MAX = none) */
  bool limit_given;
  const nxvk_op_desc *only_op;        /* --op */
  int only_dtype;                     /* --dtype, -1 = all */
  const char *exe;                    /* this binary, for kill's children */
} stress_opts;

/* ----------------------------------------------------------------- report */

typedef enum { CHECK_PASS, CHECK_FAIL, CHECK_UNCHECKED } check_status;
typedef enum { VERDICT_PASS, VERDICT_PARTIAL, VERDICT_FAIL } verdict;

#define STRESS_MAX_CHECKS 24

typedef struct stress_check {
  char name[40];
  check_status status;
  char detail[320];
} stress_check;

typedef struct stress_report {
  const char *mode;
  stress_check checks[STRESS_MAX_CHECKS];
  int nchecks;
  cJSON *figures;                     /* owned: numbers and strings for --json */
  char summary[320];                  /* key figures for the table */
  double seconds;
  uint64_t validation_before;
} stress_report;

void report_init(stress_report *r, const char *mode);
void report_free(stress_report *r);
/* Record a check and print it as one line ("  ok    name: detail"). */
void report_check(stress_report *r, check_status st, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void report_num(stress_report *r, const char *key, double v);
void report_str(stress_report *r, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void report_summary(stress_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The figures compared, refused_by_design, not_compared and wrong_results
 * and the checks "results" (fails on a wrong result, or when nothing ran)
 * and, where some were not compared, "compared" (unchecked) of a mode that
 * checked n cases (what: "cases", "ops") with case_check. */
void report_results(stress_report *r, const char *what, long long n, long long wrong, const char *first_wrong,
                    long long refused, long long uncompared, const char *first_uncompared);
/* Print an indented note line (not a check). */
void report_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
verdict report_verdict(const stress_report *r, bool strict);
const char *verdict_name(verdict v);
/* Validation messages during the mode are a failure (counted from the ctx). */
void report_begin_validation(stress_report *r, nxvk_ctx *c);
void report_end_validation(stress_report *r, nxvk_ctx *c);

/* ------------------------------------------------------------------ random */

typedef struct stress_rng {
  uint64_t s;
} stress_rng;

void rng_seed(stress_rng *r, uint64_t seed);
uint64_t rng_next(stress_rng *r);
double rng_unit(stress_rng *r);                     /* [0, 1) */
int64_t rng_range(stress_rng *r, int64_t lo, int64_t hi); /* [lo, hi] */

/* ------------------------------------------------------------- op cases */

/* One op with attributes and host inputs, built generically from the op's
 * kind, arity and accepted attributes. */
typedef struct stress_case {
  const nxvk_op_desc *op;
  nxvk_attrs attrs;
  int nin;
  nxvk_host in[4];
  char label[160];                    /* "add f32 [257] x [257]" */
  int expect_err;                     /* an error case by design (argmax of nothing): the
                                         code both must refuse it with (cases.h); 0: a value case */
} stress_case;

/* How many distinct input layouts the builder has for this op (shapes,
 * kernel variants, target dtypes); `layout` below is taken modulo it. */
int case_layouts(const nxvk_op_desc *op);
/* Build a case of op on dtype dt at about n elements.  NXVK_E_UNSUPPORTED
 * when the op's kind/attributes are ones this builder does not know; on any
 * failure k->label says why. */
int case_build(stress_case *k, nxvk_ctx *c, const nxvk_op_desc *op, nxvk_dtype dt, int64_t n,
               int layout, stress_rng *rng);
void case_free(stress_case *k);
/* Dtypes this op can be stressed with on this device (NXVK_DT mask). */
unsigned case_dtypes(nxvk_ctx *c, const nxvk_op_desc *op);

/* As conformance judges: OK, a result within the limit; REFUSED, an error
 * case by design refused by both with its expected error (an error-handling
 * check, no value compared); UNCOMPARED, a value case both refuse with the
 * same error (no value compared: neither a pass nor a failure). */
typedef enum { RESULT_OK, RESULT_WRONG, RESULT_ERROR, RESULT_LOST, RESULT_REFUSED, RESULT_UNCOMPARED } result_kind;

typedef struct case_result {
  result_kind kind;
  int code;                           /* engine error code for ERROR / LOST */
  int64_t bad, n;
  char detail[400];
} case_result;

/* Upload, run on the GPU, download, run the reference, compare. */
void case_check(nxvk_ctx *c, stress_case *k, case_result *res);
/* One case of op at n elements (dot: 64) in the first dtype of mask m (f32
 * where m has it), built, run and checked.  False when it cannot be built or
 * its result was not compared and found correct, why saying so; true with
 * why = its label. */
bool case_run_checked(nxvk_ctx *c, const nxvk_op_desc *op, unsigned m, int64_t n, stress_rng *rng,
                      char *why, size_t len);
/* The device's info for nxvk_check, asked once per context and kept. */
void stress_device_info(nxvk_ctx *c, nxvk_device_info *out);

/* ---------------------------------------------------------- memory probes */

typedef struct mem_probe {
  nxvk_stats stats;
  bool has_budget;
  uint64_t heap_usage, heap_budget;   /* summed over device-local heaps */
  uint64_t heap_size;
  bool has_rss;
  uint64_t rss;                       /* bytes resident (/proc/self/statm) */
  bool has_avail;
  uint64_t host_avail;                /* MemAvailable (/proc/meminfo) */
} mem_probe;

void mem_probe_take(nxvk_ctx *c, mem_probe *p);
/* mem_probe_take, again for up to 2 s while the heap usage is over base's
 * (drivers may return heap memory lazily) */
void mem_probe_settle(nxvk_ctx *c, const mem_probe *base, mem_probe *p);
/* "1.5 MiB", signed variants for growth. */
char *fmt_bytes(double b, char *buf, size_t len);
char *fmt_delta(double b, char *buf, size_t len);

double now_seconds(void);

/* Ops a random stress picks from: elementwise, reductions and dot that
 * this device can run (after --op/--dtype filters).  Returns the count. */
int stress_pick_pool(nxvk_ctx *c, const stress_opts *o, const nxvk_op_desc **pool, int max);

/* ------------------------------------------------------------------ modes */

int stress_race(nxvk_ctx *c, const stress_opts *o, stress_report *r);
int stress_leak(nxvk_ctx *c, const stress_opts *o, stress_report *r);
int stress_kill(nxvk_ctx *c, const stress_opts *o, stress_report *r);
int stress_oom(nxvk_ctx *c, const stress_opts *o, stress_report *r);
int stress_bounds(nxvk_ctx *c, const stress_opts *o, stress_report *r);
/* The hidden child of kill mode: `nxvk stress --worker`. */
int stress_worker(int argc, char **argv, nxvk_cli *cli);

#endif
