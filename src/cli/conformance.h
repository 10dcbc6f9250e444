/*
 * conformance.h - the runner and the failure diagnostics of `nxvk conformance`
 * (cmd_conformance.c is the front end: options, selection, reports).
 * conformance_run.c runs the cases of each op x dtype on one device and
 * judges them through nxvk_check; conformance_diag.c says what a failing case
 * needs for a bug report.  Front-end code: it sees the engine through nxvk.h
 * and the cases through cases.h.
 */
#ifndef NXVK_CLI_CONFORMANCE_H
#define NXVK_CLI_CONFORMANCE_H

#include <cjson/cJSON.h>

#include "../nxvk.h"
#include "cases.h"

typedef struct {
  int cases, failed, skipped;
  double max_ulp;
  double limit_ulp; /* the ULP limit (0: exact), -1 when the limit is not in ULPs */
  int64_t forgiven;
  char limit[96];
  char skip_reason[200];
} tally;

typedef struct {
  const conf_data *D;
  nxvk_ctx *ctx;
  nxvk_device_info info;
  int *tap;                /* TAP number, shared by every device */
  int passed, failed, skipped;
  cJSON *jcases;           /* NULL without --json */
  bool lost;
} runner;

typedef struct {
  bool ok, skipped, refused; /* refused: an error case by design, refused as expected */
  char why[400];             /* error, skip reason or statistics */
  nxvk_cmp cmp;
  double max_ulp;
  cJSON *jfail;
} case_result;

typedef struct {
  const bool *ops;   /* selected ops, by table index */
  unsigned dtypes;   /* NXVK_DT() mask */
  bool all;          /* no --op and no --dtype given */
  bool fused;        /* --op fused: the fused-graph class too */
} selection;

/* Runs op on hosts in[] on the GPU; *got gets the result. */
int conf_gpu_run(nxvk_ctx *ctx, const nxvk_op_desc *op, const nxvk_attrs *a, const nxvk_host *in,
                 int nin, nxvk_host *got);
/* What a person filing a bug needs, into d (and res->jfail with --json). */
void conf_describe_failure(runner *R, const nxvk_op_desc *op, const conf_case *k, const nxvk_host *in,
                           const nxvk_host *got, const nxvk_host *ref, const nxvk_limit *lim,
                           case_result *res, nxvk_strbuf *d);
/* Every selected op x dtype on one device: TAP lines and the summary table on
 * stdout, its report into jrep.  Returns 0, or an engine code. */
int conf_run_device(runner *R, const selection *sel, cJSON *jrep);

#endif
