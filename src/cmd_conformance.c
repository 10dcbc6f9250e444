/*
 * cmd_conformance.c - `nxvk conformance`, the front end: options, the op x
 * dtype selection, --list, the devices, and the --json/--junit reports.
 * Every op of the table, for every dtype the device computes, at every size
 * class and input class (random normal-range, wide exponent, IEEE edge values
 * and their pairs), is run on the GPU and judged against the CPU reference by
 * nxvk_check() under the op's limit (conformance/limits.json) -- the same
 * judgement as `nxvk run --check`.
 *
 * Nothing here names an op: cases come from the case maker (cli/cases.c),
 * driven by the table row and the data files; the runner and the failure
 * diagnostics are cli/conformance_run.c and cli/conformance_diag.c
 * (cli/conformance.h).  Output: TAP on stdout, one line per op x dtype x case
 * x input class, a `#` summary table and the closing `N passed, N failed`.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cases.h"
#include "cli/cli.h"
#include "cli/conformance.h"
#include "cli/junit.h"

static const char *const synopsis[] = {
    "[--quick] [--op NAME[,NAME...]]... [--dtype D[,D...]] [--json FILE] [--junit FILE] [--device N|NAME|all] [--validate]",
    "--list [--quick] [--op NAME[,NAME...]]... [--dtype D[,D...]]",
    NULL,
};
static const nxvk_usage usage = {
    "conformance", synopsis,
    "Runs every op of the table, for every dtype the device computes, over size\n"
    "classes (0, 1, odd, both sides of workgroup multiples, >= 1M without --quick)\n"
    "and input classes (random normal-range, wide exponent, IEEE edge values and\n"
    "all their pairs), and compares the GPU with the CPU reference under the op's\n"
    "limit.  TAP on stdout, a summary table, and `N passed, N failed`; exit 1 when\n"
    "any case fails.  --junit writes the cases as JUnit XML for CI test reports."};

/* --------------------------------------------------------------- options */

/* --op may be given more than once; cli_parse keeps the last, so collect
 * them all first (cli_parse reorders argv). */
static int collect_ops(int argc, char **argv, const nxvk_option *opts, const char **out, int max,
                       int *n) {
  *n = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *val = NULL;
    if (strcmp(a, "--") == 0) break;
    if (strcmp(a, "--op") == 0) {
      if (i + 1 >= argc) return 0; /* cli_parse reports it */
      val = argv[++i];
    } else if (strncmp(a, "--op=", 5) == 0) {
      val = a + 5;
    } else if (a[0] == '-' && a[1] == '-' && !strchr(a, '=')) {
      for (int k = 0; opts[k].name; k++) /* skip the value of options that take one */
        if (strcmp(a + 2, opts[k].name) == 0 && opts[k].type != OPT_FLAG && opts[k].type != OPT_VALIDATE)
          i++;
    }
    if (val) {
      if (*n >= max) return cli_usage_error(&usage, "--op given more than %d times", max);
      out[(*n)++] = val;
    }
  }
  return 0;
}

static int parse_selection(const char **op_args, int nop, const char *dtype_arg, bool *ops,
                           unsigned *dtypes, bool *fused) {
  int count = nxvk_op_count();
  for (int i = 0; i < count; i++) ops[i] = nop == 0;
  for (int i = 0; i < nop; i++) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", op_args[i]);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
      if (strcmp(tok, "fused") == 0 && !nxvk_op_find(tok)) { /* the fused-graph class */
        *fused = true;
        continue;
      }
      const nxvk_op_desc *op = nxvk_op_find(tok);
      if (!op) return cli_usage_error(&usage, "--op: unknown op '%s'", tok);
      for (int k = 0; k < count; k++)
        if (nxvk_op_at(k) == op) ops[k] = true;
    }
    if (!op_args[i][0]) return cli_usage_error(&usage, "--op: empty op name");
  }
  *dtypes = NXVK_DT_ANY;
  if (dtype_arg) {
    char buf[128];
    *dtypes = 0;
    snprintf(buf, sizeof buf, "%s", dtype_arg);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
      nxvk_dtype d;
      if (nxvk_dtype_parse(tok, &d)) return cli_usage_error(&usage, "--dtype: %s", nxvk_errmsg());
      *dtypes |= NXVK_DT(d);
    }
    if (!*dtypes) return cli_usage_error(&usage, "--dtype: no dtype given");
  }
  return 0;
}

static int list_cases(const conf_data *D, const selection *sel) {
  case_list L = {0};
  int total = 0;
  for (int o = 0; o < nxvk_op_count(); o++) {
    const nxvk_op_desc *op = nxvk_op_at(o);
    if (!sel->ops[o]) continue;
    unsigned dts = cases_op_dtypes(op) & sel->dtypes;
    for (int d = 0; d < NXVK_NDTYPES; d++) {
      if (!(dts & NXVK_DT(d))) continue;
      if (cases_make(&(case_req){.D = D, .op = op, .dt = (nxvk_dtype)d}, &L)) {
        fprintf(stderr, "nxvk: error: %s\n", L.why);
        free(L.v);
        return EXIT_FAIL;
      }
      for (int c = 0; c < L.n; c++)
        printf("%s %s %s class=%s\n", op->name, nxvk_dtype_name((nxvk_dtype)d), L.v[c].where, L.v[c].cls);
      total += L.n;
    }
  }
  free(L.v);
  printf("# %d cases (%s mode); each runs on every device that computes its dtypes\n", total,
         D->quick ? "quick" : "full");
  return EXIT_OK;
}

static int write_json(const char *path, cJSON *root) {
  char *text = cJSON_Print(root);
  if (!text) {
    fprintf(stderr, "nxvk: error: --json %s: out of memory\n", path);
    return EXIT_FAIL;
  }
  int st = cli_write_text("--json", path, text);
  free(text);
  return st;
}

/* The report as JUnit XML: a testsuite per device, a testcase per TAP line
 * of the op cases, one for the fused-graph class and one for a lost device. */
static int write_junit(const char *path, cJSON *root) {
  junit_doc jd;
  junit_init(&jd, "nxvk conformance");
  cJSON *rep;
  cJSON_ArrayForEach(rep, cJSON_GetObjectItem(root, "reports")) {
    cJSON *dev = cJSON_GetObjectItem(rep, "device");
    char sname[320];
    snprintf(sname, sizeof sname, "device %d: %s", cJSON_GetObjectItem(dev, "index") ? cJSON_GetObjectItem(dev, "index")->valueint : 0,
             cJSON_GetStringValue(cJSON_GetObjectItem(dev, "name")) ? cJSON_GetStringValue(cJSON_GetObjectItem(dev, "name")) : "?");
    cJSON *secs = cJSON_GetObjectItem(rep, "seconds");
    int su = junit_add_suite(&jd, sname, cJSON_IsNumber(secs) ? secs->valuedouble : 0);
    cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(rep, "cases")) {
      const char *op = cJSON_GetStringValue(cJSON_GetObjectItem(c, "op"));
      const char *dt = cJSON_GetStringValue(cJSON_GetObjectItem(c, "dtype"));
      const char *where = cJSON_GetStringValue(cJSON_GetObjectItem(c, "case"));
      const char *cls = cJSON_GetStringValue(cJSON_GetObjectItem(c, "class"));
      const char *verdict = cJSON_GetStringValue(cJSON_GetObjectItem(c, "verdict"));
      char classname[96], name[256], msg[512] = "";
      snprintf(classname, sizeof classname, "nxvk.conformance.%s", op ? op : "?");
      if (where) snprintf(name, sizeof name, "%s %s class=%s", dt ? dt : "?", where, cls ? cls : "?");
      else snprintf(name, sizeof name, "%s (every case)", dt ? dt : "?");
      static const char *const why_keys[] = {"reason", "error", "statistics"};
      for (size_t k = 0; k < sizeof why_keys / sizeof why_keys[0] && !msg[0]; k++) {
        const char *w = cJSON_GetStringValue(cJSON_GetObjectItem(c, why_keys[k]));
        if (w) snprintf(msg, sizeof msg, "%s", w);
      }
      cJSON *ulp = cJSON_GetObjectItem(c, "max_ulp"), *bad = cJSON_GetObjectItem(c, "bad");
      cJSON *n = cJSON_GetObjectItem(c, "elements");
      const char *limit = cJSON_GetStringValue(cJSON_GetObjectItem(c, "limit"));
      char ulps[32];
      if (cJSON_IsNumber(ulp)) snprintf(ulps, sizeof ulps, "%.3g", ulp->valuedouble);
      else snprintf(ulps, sizeof ulps, "%s", cJSON_GetStringValue(ulp) ? cJSON_GetStringValue(ulp) : "-");
      if (!msg[0] && cJSON_IsNumber(bad) && cJSON_IsNumber(n))
        snprintf(msg, sizeof msg, "%.0f of %.0f elements outside the limit (%s); max ulp %s", bad->valuedouble,
                 n->valuedouble, limit ? limit : "?", ulps);
      junit_status st = verdict && !strcmp(verdict, "ok") ? JUNIT_PASS : verdict && !strcmp(verdict, "skip") ? JUNIT_SKIP : JUNIT_FAIL;
      const char *diag = cJSON_GetStringValue(cJSON_GetObjectItem(c, "diagnostic"));
      char text[128];
      const char *as_ref = cJSON_GetStringValue(cJSON_GetObjectItem(c, "error_as_reference"));
      if (st == JUNIT_PASS && cJSON_IsNumber(ulp) && cJSON_IsNumber(n)) {
        snprintf(text, sizeof text, "%.0f elements, max ulp %.3g, limit %s", n->valuedouble, ulp->valuedouble,
                 limit ? limit : "?");
        diag = text;
      } else if (st == JUNIT_PASS && as_ref) {
        snprintf(text, sizeof text, "error-handling check: an error case by design, refused by both with %s", as_ref);
        diag = text;
      }
      junit_add_case(&jd, su, classname, name, st, msg[0] ? msg : verdict ? verdict : "no verdict", diag, 0);
    }
    cJSON *fg = cJSON_GetObjectItem(rep, "fused_graphs");
    if (fg) {
      int fp = cJSON_GetObjectItem(fg, "passed") ? cJSON_GetObjectItem(fg, "passed")->valueint : 0;
      int ff = cJSON_GetObjectItem(fg, "failed") ? cJSON_GetObjectItem(fg, "failed")->valueint : 0;
      const char *err = cJSON_GetStringValue(cJSON_GetObjectItem(fg, "error"));
      char name[64], msg[400];
      snprintf(name, sizeof name, "fused graph class (%d TAP lines)", fp + ff);
      snprintf(msg, sizeof msg, "%d of %d random fused graphs outside their limits%s%s (the TAP diagnostics "
               "show each)", ff, fp + ff, err ? "; stopped: " : "", err ? err : "");
      junit_add_case(&jd, su, "nxvk.conformance.fused", name, ff || err ? JUNIT_FAIL : JUNIT_PASS, msg, NULL, 0);
    }
    if (cJSON_IsTrue(cJSON_GetObjectItem(rep, "device_lost")))
      junit_add_case(&jd, su, "nxvk.conformance", "device", JUNIT_FAIL, "the device was lost; later cases did not run",
                     NULL, 0);
  }
  int rc = cli_write_with("--junit", path, junit_print, &jd);
  junit_free(&jd);
  return rc;
}

int cmd_conformance(int argc, char **argv, nxvk_cli *cli) {
  bool quick = false, list = false;
  const char *op_last = NULL, *dtype_arg = NULL, *json_path = NULL, *junit_path = NULL;
  const nxvk_option opts[] = {
      {"quick", 0, OPT_FLAG, &quick, NULL, "CI-sized run: fewer sizes (under 2 minutes on lavapipe)"},
      {"op", 0, OPT_STRING, &op_last, "NAME", "only these ops (repeatable, or a comma list)"},
      {"dtype", 0, OPT_STRING, &dtype_arg, "D", "only these dtypes (f16 bf16 f32 f64 i8..i64 u8..u64 bool, comma list)"},
      {"json", 0, OPT_STRING, &json_path, "FILE", "write the full report (every case) as JSON"},
      {"junit", 0, OPT_STRING, &junit_path, "FILE", "write every case as JUnit XML (CI test reports)"},
      {"list", 0, OPT_FLAG, &list, NULL, "list the op x dtype x case x class cases and exit"},
      {"device", 0, OPT_DEVICE, &cli->device, "N|NAME|all", "device index or name, or all (one report each)"},
      {"validate", 0, OPT_VALIDATE, &cli->validate, NULL, "Vulkan validation layers on; any message fails"},
      OPT_END,
  };
  const char *op_args[64];
  int nop = 0, npos;
  int rc = collect_ops(argc, argv, opts, op_args, 64, &nop);
  if (rc) return rc;
  rc = cli_parse(argc, argv, &usage, opts, &npos);
  if (rc) return rc < 0 ? EXIT_OK : rc;
  if (npos) return cli_usage_error(&usage, "unexpected argument '%s'", argv[0]);
  if (list && (json_path || junit_path)) return cli_usage_error(&usage, "--json and --junit do not go with --list");
  if (junit_path && !*junit_path) return cli_usage_error(&usage, "--junit: empty file name");
  if (list && cli->device) return cli_usage_error(&usage, "--device does not go with --list");
  bool *ops = calloc((size_t)nxvk_op_count(), sizeof *ops);
  if (!ops) return EXIT_FAIL;
  selection sel = {ops, 0, nop == 0 && !dtype_arg, false};
  rc = parse_selection(op_args, nop, dtype_arg, ops, &sel.dtypes, &sel.fused);
  if (rc) {
    free(ops);
    return rc;
  }
  conf_data D = {0};
  D.quick = quick;
  if (cases_load(&D)) {
    fprintf(stderr, "nxvk: error: %s\n", cases_err);
    cases_unload(&D);
    free(ops);
    return EXIT_FAIL;
  }
  if (list) {
    rc = list_cases(&D, &sel);
    cases_unload(&D);
    free(ops);
    return rc;
  }

  int tap = 0, passed = 0, failed = 0, skipped = 0, status = EXIT_OK;
  bool lost = false;
  cJSON *root = json_path || junit_path ? cJSON_CreateObject() : NULL, *reports = NULL;
  if (root) {
    cJSON_AddStringToObject(root, "nxvk_version", NXVK_VERSION);
    cJSON_AddStringToObject(root, "mode", quick ? "quick" : "full");
    reports = cJSON_AddArrayToObject(root, "reports");
  }
  printf("# nxvk conformance (%s mode)\n", quick ? "quick" : "full");
  bool all = cli->device && strcmp(cli->device, "all") == 0;
  int ndev = 1;
  nxvk_device_info *infos = NULL;
  if (all) {
    nxvk_instance_opts io = {.validate = cli->validate};
    rc = nxvk_devices_query(&io, &infos, &ndev);
    if (rc) status = cli_engine_error(rc);
    else if (ndev == 0) {
      fprintf(stderr, "nxvk: error: no Vulkan device\n");
      status = EXIT_NO_DEVICE;
    }
  }
  for (int dv = 0; dv < ndev && status == EXIT_OK; dv++) {
    nxvk_ctx *ctx = NULL;
    if (all) {
      char idx[16];
      snprintf(idx, sizeof idx, "%d", infos[dv].index);
      nxvk_ctx_opts co = {.device = idx, .validate = cli->validate};
      rc = nxvk_ctx_open(&co, &ctx);
    } else {
      rc = cli_ctx(cli, &ctx); /* main closes it and checks validation */
    }
    if (rc) {
      status = cli_engine_error(rc);
      break;
    }
    runner R = {.D = &D, .ctx = ctx, .tap = &tap};
    cJSON *jrep = reports ? cJSON_CreateObject() : NULL;
    if (jrep) cJSON_AddItemToArray(reports, jrep);
    if (conf_run_device(&R, &sel, jrep)) {
      fprintf(stderr, "nxvk: error: %s\n", cases_err);
      status = EXIT_FAIL;
    }
    passed += R.passed;
    failed += R.failed;
    skipped += R.skipped;
    lost = lost || R.lost;
    if (all) { /* a context of our own: its validation messages are ours to report */
      nxvk_stats st;
      nxvk_ctx_stats(ctx, &st);
      if (st.validation_messages) {
        char last[512];
        nxvk_ctx_last_validation(ctx, last, sizeof last);
        fprintf(stderr, "nxvk: error: device %d: %llu Vulkan validation message(s); last: %s\n",
                infos[dv].index, (unsigned long long)st.validation_messages, last);
        failed++;
      }
      nxvk_ctx_close(ctx);
    }
  }
  free(infos);
  printf("1..%d\n", tap);
  printf("%d passed, %d failed", passed, failed);
  if (skipped) printf(", %d skipped", skipped);
  printf("\n");
  if (root) {
    cJSON_AddNumberToObject(root, "passed", passed);
    cJSON_AddNumberToObject(root, "failed", failed);
    cJSON_AddNumberToObject(root, "skipped", skipped);
    int wrc = json_path ? write_json(json_path, root) : EXIT_OK;
    if (wrc && status == EXIT_OK) status = wrc;
    wrc = junit_path ? write_junit(junit_path, root) : EXIT_OK;
    if (wrc && status == EXIT_OK) status = wrc;
    cJSON_Delete(root);
  }
  cases_unload(&D);
  free(ops);
  /* a lost device wins over a failure; no failure is success */
  if (lost) return EXIT_DEVICE_LOST;
  if (status) return status;
  return failed ? EXIT_FAIL : EXIT_OK;
}

