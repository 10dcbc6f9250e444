/*
 * cmd_stress.c - `nxvk stress MODE`: race, leak, kill, oom and bounds (or
 * all of them), built for CI.  Each mode records checks (ok / FAIL /
 * unchecked) and figures; the run ends with a summary table, an optional
 * --json report, and exit status 0 only when no check failed.
 *
 * The modes live in src/cli/stress_*.c; this file parses options, runs the
 * modes in order on one shared context, and reports.
 */
#include <limits.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/junit.h"
#include "cli/stress_common.h"

static const char *const synopsis[] = {
    "MODE [--quick] [--json FILE] [--tap] [--junit FILE] [--strict] [--seed N] [--device N|NAME] [--validate]",
    "race [--threads T] [--ops N] [--duration SECONDS] [--op NAME] [--dtype D]",
    "leak [--cycles C] [--duration SECONDS] [--size BYTES] [--op NAME] [--dtype D]",
    "kill [--procs P] [--wave W] [--size BYTES]",
    "oom [--limit BYTES]",
    "bounds [--op NAME] [--dtype D]",
    NULL,
};
static const nxvk_usage usage = {
    "stress", synopsis,
    "Stress checks for CI.  MODE is race, leak, kill, oom, bounds or all:\n"
    "  race    T threads run random checked ops through one shared context\n"
    "  leak    cycles of allocate/upload/op/download/free; live bytes, heap usage\n"
    "          (VK_EXT_memory_budget) and RSS must not grow\n"
    "  kill    child processes uploading and running ops are SIGKILLed at random\n"
    "          points; device memory must come back and the device still compute\n"
    "  oom     allocate until the driver refuses (or --limit); the refusal must be a\n"
    "          clean alloc_failed, the device keep working, freeing restore baseline\n"
    "  bounds  every op at sizes 0, 1, 2^k-1, 2^k, 2^k+1 (k = 8..20), checked; absurd\n"
    "          shapes refused before any GPU work\n"
    "Each mode prints its checks and ends as pass, partial (a check this device\n"
    "cannot make, e.g. no memory budget: never counted as passed) or FAIL.\n"
    "--tap writes TAP on stdout instead (one test per check; an unchecked one is\n"
    "a SKIP, or not ok with --strict) and the text above to stderr; --junit FILE\n"
    "writes the same checks as JUnit XML, a testsuite per mode.\n"
    "Exit status: 0 when no check failed, 1 when one did, 2 usage, 3 no device."};

typedef struct mode_row {
  const char *name;
  int (*fn)(nxvk_ctx *c, const stress_opts *o, stress_report *r);
} mode_row;

static const mode_row modes[] = {
    {"race", stress_race}, {"leak", stress_leak}, {"kill", stress_kill},
    {"oom", stress_oom},   {"bounds", stress_bounds},
};
#define NMODES ((int)(sizeof modes / sizeof modes[0]))

/* This binary, for kill mode's children. */
static const char *self_exe(void) {
  static char path[4096];
  const char *links[] = {"/proc/self/exe", "/proc/curproc/file"}; /* Linux, FreeBSD procfs */
  for (size_t i = 0; i < sizeof links / sizeof links[0]; i++) {
    ssize_t n = readlink(links[i], path, sizeof path - 1);
    if (n > 0) {
      path[n] = 0;
      return path;
    }
  }
  return NULL;
}

static cJSON *mode_json(const stress_report *r, verdict v) {
  cJSON *m = cJSON_CreateObject();
  cJSON_AddStringToObject(m, "mode", r->mode);
  cJSON_AddStringToObject(m, "verdict", v == VERDICT_PASS ? "pass" : v == VERDICT_PARTIAL ? "partial" : "fail");
  cJSON_AddNumberToObject(m, "seconds", r->seconds);
  cJSON_AddStringToObject(m, "summary", r->summary);
  cJSON *checks = cJSON_AddArrayToObject(m, "checks");
  for (int i = 0; i < r->nchecks; i++) {
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "name", r->checks[i].name);
    cJSON_AddStringToObject(c, "status", r->checks[i].status == CHECK_PASS ? "ok"
                                         : r->checks[i].status == CHECK_FAIL ? "fail" : "unchecked");
    cJSON_AddStringToObject(c, "detail", r->checks[i].detail);
    cJSON_AddItemToArray(checks, c);
  }
  cJSON_AddItemToObject(m, "figures", cJSON_Duplicate(r->figures, true));
  return m;
}

/* TAP text: one line, and '#' escaped so no detail reads as a directive. */
static void tap_text(FILE *f, const char *s) {
  for (; *s; s++) {
    if (*s == '#') fputs("\\#", f);
    else fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
  }
}

/* One mode's checks as TAP tests (numbered on from *n). */
static void tap_mode(FILE *f, const stress_report *r, bool strict, int *n) {
  for (int i = 0; i < r->nchecks; i++) {
    const stress_check *k = &r->checks[i];
    bool bad = k->status == CHECK_FAIL || (k->status == CHECK_UNCHECKED && strict);
    fprintf(f, "%s %d - %s: %s", bad ? "not ok" : "ok", ++*n, r->mode, k->name);
    if (k->status == CHECK_UNCHECKED) {
      fputs(strict ? ": unchecked (--strict): " : " # SKIP ", f);
      tap_text(f, k->detail);
    } else if (k->detail[0]) {
      fputs(": ", f);
      tap_text(f, k->detail);
    }
    fputc('\n', f);
  }
  if (r->nchecks == 0) fprintf(f, "not ok %d - %s: no check was made\n", ++*n, r->mode);
  fflush(f);
}

static void junit_mode(junit_doc *d, const stress_report *r, bool strict) {
  int s = junit_add_suite(d, r->mode, r->seconds);
  char cls[64];
  snprintf(cls, sizeof cls, "nxvk.stress.%s", r->mode);
  for (int i = 0; i < r->nchecks; i++) {
    const stress_check *k = &r->checks[i];
    junit_status st = k->status == CHECK_PASS ? JUNIT_PASS
                      : k->status == CHECK_FAIL || strict ? JUNIT_FAIL : JUNIT_SKIP;
    char msg[400];
    snprintf(msg, sizeof msg, "%s%s", k->status == CHECK_UNCHECKED ? "unchecked: " : "", k->detail);
    junit_add_case(d, s, cls, k->name, st, msg, k->detail[0] ? k->detail : NULL, 0);
  }
  if (r->nchecks == 0) junit_add_case(d, s, cls, "checks", JUNIT_FAIL, "no check was made", NULL, 0);
}

static int parse_mode(const char *s) {
  if (strcmp(s, "all") == 0) return NMODES;
  for (int i = 0; i < NMODES; i++)
    if (strcmp(s, modes[i].name) == 0) return i;
  return -1;
}

int cmd_stress(int argc, char **argv, nxvk_cli *cli) {
  if (argc >= 2 && strcmp(argv[1], "--worker") == 0) return stress_worker(argc, argv, cli);

  const char *json_path = NULL, *size_s = NULL, *limit_s = NULL, *op_s = NULL, *dtype_s = NULL;
  const char *junit_path = NULL;
  bool quick = false, strict = false, tap = false;
  /* LONG_MIN: not given (so a given -1 is refused, never taken as "default") */
  long seed = LONG_MIN, threads = LONG_MIN, ops = LONG_MIN, cycles = LONG_MIN, procs = LONG_MIN, wave = LONG_MIN;
  double duration = 0;
  const nxvk_option opts[] = {
      {"quick", 0, OPT_FLAG, &quick, NULL, "CI sizes: all modes in under 3 minutes on lavapipe"},
      {"json", 0, OPT_STRING, &json_path, "FILE", "write the report as JSON"},
      {"tap", 0, OPT_FLAG, &tap, NULL, "TAP on stdout, one test per check (the text to stderr)"},
      {"junit", 0, OPT_STRING, &junit_path, "FILE", "write the checks as JUnit XML (CI test reports)"},
      {"strict", 0, OPT_FLAG, &strict, NULL, "a check this device cannot make fails the mode"},
      {"seed", 0, OPT_INT, &seed, "N", "random seed (default: from the clock; printed)"},
      {"threads", 0, OPT_INT, &threads, "T", "race: threads (default 100, --quick 16)"},
      {"ops", 0, OPT_INT, &ops, "N", "race: ops per thread (default 100, --quick 20)"},
      {"duration", 0, OPT_DOUBLE, &duration, "SECONDS", "race, leak: run this long instead of counting"},
      {"cycles", 0, OPT_INT, &cycles, "C", "leak: cycles (default 100000, --quick 2000)"},
      {"size", 0, OPT_STRING, &size_s, "BYTES", "leak: tensor size (default 1M); kill: (default 10M)"},
      {"procs", 0, OPT_INT, &procs, "P", "kill: child processes (default 200, --quick 20)"},
      {"wave", 0, OPT_INT, &wave, "W", "kill: children alive at once (default 20, --quick 10)"},
      {"limit", 0, OPT_STRING, &limit_s, "BYTES", "oom: cap (0 = none; default min(heap, 8G), --quick 256M)"},
      {"op", 0, OPT_STRING, &op_s, "NAME", "race, leak, bounds: only this op"},
      {"dtype", 0, OPT_STRING, &dtype_s, "D", "race, leak, bounds: only this dtype"},
      OPT_COMMON_DEVICE(cli),
      OPT_END,
  };
  int npos, rc = cli_parse(argc, argv, &usage, opts, &npos);
  if (rc) return rc < 0 ? EXIT_OK : rc;
  if (npos != 1) return cli_usage_error(&usage, npos ? "give one MODE" : "missing MODE (race, leak, kill, oom, bounds or all)");
  int mode = parse_mode(argv[0]);
  if (mode < 0) {
    static const char *const names[] = {"race", "leak", "kill", "oom", "bounds", "all"};
    const char *near = cli_nearest(argv[0], names, 6);
    if (near) return cli_usage_error(&usage, "unknown mode '%s'; did you mean '%s'?", argv[0], near);
    return cli_usage_error(&usage, "unknown mode '%s' (race, leak, kill, oom, bounds or all)", argv[0]);
  }

  stress_opts o = {0};
  o.quick = quick;
  o.strict = strict;
  o.only_dtype = -1;
#define GIVEN(v) ((v) != LONG_MIN)
  if (GIVEN(seed) && seed < 0) return cli_usage_error(&usage, "--seed: must be 0 or more ('%ld' given)", seed);
  o.seed = GIVEN(seed) ? (uint64_t)seed : (uint64_t)time(NULL) % 1000000007u;
  o.threads = GIVEN(threads) ? threads : quick ? 16 : 100;
  o.ops_per_thread = GIVEN(ops) ? ops : quick ? 20 : 100;
  o.cycles = GIVEN(cycles) ? cycles : quick ? 2000 : 100000;
  o.procs = GIVEN(procs) ? procs : quick ? 20 : 200;
  o.wave = GIVEN(wave) ? wave : quick ? 10 : 20;
#undef GIVEN
  o.duration = duration;
  if (o.threads < 1 || o.threads > 1024) return cli_usage_error(&usage, "--threads: must be 1..1024");
  if (o.ops_per_thread < 1) return cli_usage_error(&usage, "--ops: must be >= 1");
  if (o.cycles < 1) return cli_usage_error(&usage, "--cycles: must be >= 1");
  if (o.procs < 1) return cli_usage_error(&usage, "--procs: must be >= 1");
  if (o.wave < 1 || o.wave > 200) return cli_usage_error(&usage, "--wave: must be 1..200");
  if (!(duration >= 0 && duration <= 1e7)) return cli_usage_error(&usage, "--duration: must be 0 to 1e7 seconds");
  if (size_s && (nxvk_parse_bytes(size_s, &o.size) || o.size < 4))
    return cli_usage_error(&usage, "--size: '%s' is not a byte count of at least 4 (e.g. 1M, 4096)", size_s);
  if (size_s && o.size > ((uint64_t)1 << 34))
    return cli_usage_error(&usage, "--size: '%s' is over 16 GiB", size_s);
  if (limit_s) {
    if (nxvk_parse_bytes(limit_s, &o.limit)) return cli_usage_error(&usage, "--limit: '%s' is not a byte count (e.g. 512M, 0 for none)", limit_s);
    o.limit_given = true;
  }
  if (op_s && !(o.only_op = nxvk_op_find(op_s)))
    return cli_usage_error(&usage, "--op: unknown op '%s' (nxvk run --list-ops shows them)", op_s);
  if (dtype_s) {
    nxvk_dtype d;
    if (nxvk_dtype_parse(dtype_s, &d)) return cli_usage_error(&usage, "--dtype: %s", nxvk_errmsg());
    o.only_dtype = (int)d;
  }
  o.exe = self_exe();
  if (junit_path && !*junit_path) return cli_usage_error(&usage, "--junit: empty file name");

  /* --tap: the TAP stream keeps stdout; everything else printed goes to stderr */
  FILE *tap_out = NULL;
  if (tap) {
    fflush(stdout);
    int fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    if (fd < 0 || !(tap_out = fdopen(fd, "w")) || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
      fprintf(stderr, "nxvk: error: --tap: %s\n", strerror(errno));
      if (tap_out) fclose(tap_out);
      else if (fd >= 0) close(fd);
      return EXIT_FAIL;
    }
  }
  int tap_n = 0;

  nxvk_ctx *c;
  rc = cli_ctx(cli, &c);
  if (rc) {
    if (tap_out) { /* a plan of no tests: the reason is on stderr */
      fprintf(tap_out, "1..0 # SKIP no device\n");
      fclose(tap_out);
    }
    return cli_engine_error(rc);
  }
  nxvk_device_info info;
  nxvk_ctx_device_info(c, &info);
  printf("nxvk stress %s%s on %s (%s), seed %llu\n", argv[0], quick ? " --quick" : "", info.name,
         info.driver_name, (unsigned long long)o.seed);
  fflush(stdout);

  stress_report reports[NMODES];
  verdict verdicts[NMODES];
  int nrun = 0, first = mode == NMODES ? 0 : mode, last = mode == NMODES ? NMODES - 1 : mode;
  double t_all = now_seconds();
  for (int m = first; m <= last; m++) {
    stress_report *r = &reports[nrun];
    report_init(r, modes[m].name);
    if (nxvk_ctx_lost(c)) {
      printf("== %s\n", modes[m].name);
      report_check(r, CHECK_FAIL, "not run", "the device was lost earlier");
    } else {
      report_begin_validation(r, c);
      double t0 = now_seconds();
      modes[m].fn(c, &o, r);
      r->seconds = now_seconds() - t0;
      report_end_validation(r, c);
      if (nxvk_ctx_lost(c)) report_check(r, CHECK_FAIL, "device lost", "the device was lost during %s", modes[m].name);
    }
    verdicts[nrun] = report_verdict(r, strict);
    printf("  -> %s %s (%.1f s)\n\n", modes[m].name, verdict_name(verdicts[nrun]), r->seconds);
    fflush(stdout);
    if (tap_out) tap_mode(tap_out, r, strict, &tap_n);
    nrun++;
  }
  double total = now_seconds() - t_all;

  int status = EXIT_OK;
  printf("%-7s %-8s %8s  %s\n", "mode", "verdict", "seconds", "key figures");
  for (int i = 0; i < nrun; i++) {
    printf("%-7s %-8s %8.1f  %s\n", reports[i].mode, verdict_name(verdicts[i]), reports[i].seconds,
           reports[i].summary[0] ? reports[i].summary : "-");
    if (verdicts[i] == VERDICT_FAIL) status = EXIT_FAIL;
    for (int k = 0; k < reports[i].nchecks; k++)
      if (reports[i].checks[k].status == CHECK_UNCHECKED)
        printf("%-7s %-8s %8s  unchecked: %s: %s\n", "", "", "", reports[i].checks[k].name, reports[i].checks[k].detail);
  }
  printf("stress %s: %s in %.1f s\n", argv[0], status == EXIT_OK ? "nothing wrong, lost or leaked" : "FAILED", total);

  if (json_path) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "nxvk_version", NXVK_VERSION);
    cJSON_AddStringToObject(root, "mode", argv[0]);
    cJSON_AddStringToObject(root, "device", info.name);
    cJSON_AddStringToObject(root, "driver", info.driver_name);
    cJSON_AddStringToObject(root, "driver_info", info.driver_info);
    cJSON_AddBoolToObject(root, "memory_budget", info.has_budget);
    cJSON_AddNumberToObject(root, "seed", (double)o.seed);
    cJSON_AddBoolToObject(root, "quick", quick);
    cJSON_AddBoolToObject(root, "strict", strict);
    cJSON_AddBoolToObject(root, "validate", cli->validate || nxvk_env_flag("NXVK_VALIDATE"));
    cJSON_AddNumberToObject(root, "seconds", total);
    cJSON *arr = cJSON_AddArrayToObject(root, "modes");
    for (int i = 0; i < nrun; i++) cJSON_AddItemToArray(arr, mode_json(&reports[i], verdicts[i]));
    cJSON_AddNumberToObject(root, "exit_status", status);
    char *text = cJSON_Print(root);
    int wst = text ? cli_write_text("--json", json_path, text) : EXIT_FAIL;
    if (!text) fprintf(stderr, "nxvk: error: --json %s: out of memory\n", json_path);
    if (wst && status == EXIT_OK) status = wst;
    free(text);
    cJSON_Delete(root);
  }
  if (junit_path) {
    junit_doc jd;
    char name[64];
    snprintf(name, sizeof name, "nxvk stress %s", argv[0]);
    junit_init(&jd, name);
    for (int i = 0; i < nrun; i++) junit_mode(&jd, &reports[i], strict);
    int wst = cli_write_with("--junit", junit_path, junit_print, &jd);
    if (wst && status == EXIT_OK) status = wst;
    junit_free(&jd);
  }
  if (tap_out) {
    fprintf(tap_out, "1..%d\n", tap_n);
    if (fflush(tap_out) != 0 || ferror(tap_out)) {
      fprintf(stderr, "nxvk: error: --tap: writing standard output failed\n");
      if (status == EXIT_OK) status = EXIT_FAIL;
    }
    fclose(tap_out);
  }
  for (int i = 0; i < nrun; i++) report_free(&reports[i]);
  return status;
}
