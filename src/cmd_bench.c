/*
 * cmd_bench.c - `nxvk bench`: per-op sweeps, the matmul GFLOPS ladder and
 * the device's roofline (nxvk-bench(1)).  This file parses options, walks
 * the chosen devices and writes the outputs; the method lives in
 * src/cli/bench_measure.c, the roofline in src/cli/bench_peak.c, the tables
 * and files in src/cli/bench_output.c.
 *
 * Ops come from the op table: --ops names are looked up there, and only the
 * default list names any.
 */
#include <ctype.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/bench.h"
#include "cli/bench_fusion.h"

static const char *const synopsis[] = {
    "ops [--ops OP,...] [--sizes N,...] [--dtype D,...] [OPTIONS]",
    "matmul [--sizes N,...] [--shapes MxKxN,...] [--variant V,...] [--dtype D,...] [OPTIONS]",
    "peak [--bytes SIZE] [OPTIONS]",
    "transfers [--bytes SIZE] [OPTIONS]",
    "all [--sizes N,...] [--dtype D,...] [--bytes SIZE] [OPTIONS]",
    "fusion [--sizes N] [OPTIONS]",
    "concurrency [--clients N] [--bytes SIZE] [OPTIONS]",
    "compare A.json B.json... [--plot FILE.svg]",
    NULL,
};
static const nxvk_usage usage = {
    "bench", synopsis,
    "Times ops on the GPU against the CPU reference over sizes (ops), the matmul GFLOPS\n"
    "ladder for every dot variant (matmul), or the device's roofline: FMA rate, copy and\n"
    "transfer bandwidth, dispatch latency (peak), or peak's h2d/d2h rows alone (transfers);\n"
    "all runs peak, ops and matmul.  Every\n"
    "result is checked against the CPU reference before it is timed; a wrong one fails\n"
    "the bench (exit 1).  Times are medians of repeated runs after a warm-up, with min\n"
    "and max.  Sizes take K, M, G, T (x1024); ops sizes count elements, matmul sizes are n\n"
    "of n x n matrices (in all, sizes count elements and the ladder takes n = sqrt(N)).\n"
    "concurrency runs 1K-element adds end to end from 1, 16 and 100 threads sharing one\n"
    "context and from --clients port processes, every result checked, and reports ops/s;\n"
    "then a --bytes tensor's put and get through one port, in GB/s.\n"
    "compare reads --json reports of several hosts or runs and prints the same\n"
    "measurements side by side, each with its ratio to the first; --plot draws them."};

static const char *const default_ops = "add,exp,sum,dot";

/* ---- option values ---- */

/* a size in the common grammar (nxvk_parse_bytes), 1 to 2^40 */
static bool parse_size(const char *s, int64_t *out) {
  uint64_t v;
  if (nxvk_parse_bytes(s, &v) || v < 1 || v > ((uint64_t)1 << 40)) return false;
  *out = (int64_t)v;
  return true;
}

/* Split a comma list into at most BENCH_MAX_LIST items (buf is modified);
 * an empty item ("1,,2", a leading or trailing comma) gives -1. */
static int split_list(char *buf, char **items) {
  int n = 0;
  for (char *p = buf;;) {
    char *comma = strchr(p, ',');
    if (comma) *comma = '\0';
    if (!*p || n == BENCH_MAX_LIST) return -1;
    items[n++] = p;
    if (!comma) return n;
    p = comma + 1;
  }
}

static int parse_lists(bench_opts *o, const char *ops, const char *sizes, const char *dtypes) {
  char buf[4096], *items[BENCH_MAX_LIST];
  if (sizes) {
    snprintf(buf, sizeof buf, "%s", sizes);
    int n = split_list(buf, items);
    if (n <= 0) return cli_usage_error(&usage, "--sizes: give 1 to %d sizes, no empty item, e.g. 1K,1M", BENCH_MAX_LIST);
    for (int i = 0; i < n; i++)
      if (!parse_size(items[i], &o->sizes[i]))
        return cli_usage_error(&usage, "--sizes: '%s' is not a size (a positive count, K M G = x1024)", items[i]);
    o->nsizes = n;
    o->sizes_given = true;
  }
  if (dtypes) {
    snprintf(buf, sizeof buf, "%s", dtypes);
    int n = split_list(buf, items);
    if (n <= 0) return cli_usage_error(&usage, "--dtype: give one or more of %s", nxvk_dtype_names());
    for (int i = 0; i < n; i++) {
      nxvk_dtype d;
      if (nxvk_dtype_parse(items[i], &d))
        return cli_usage_error(&usage, "--dtype: '%s' is not a dtype (%s)", items[i], nxvk_dtype_names());
      bool seen = false;
      for (int k = 0; k < o->ndtypes; k++) seen |= o->dtypes[k] == d;
      if (!seen) o->dtypes[o->ndtypes++] = d;
    }
    o->dtypes_given = true;
  }
  snprintf(buf, sizeof buf, "%s", ops ? ops : default_ops);
  int n = split_list(buf, items);
  if (n <= 0) return cli_usage_error(&usage, "--ops: give 1 to %d op names", BENCH_MAX_LIST);
  for (int i = 0; i < n; i++) {
    const nxvk_op_desc *op = nxvk_op_find(items[i]);
    if (!op) {
      fprintf(stderr, "nxvk: error: --ops: unknown op '%s' (nxvk run --list-ops lists them)\n", items[i]);
      return EXIT_USAGE;
    }
    /* operands come from the one case maker (cases.c): say so when it has no rule */
    char why[256] = "";
    bool ok = false;
    for (int d = 0; d < NXVK_NDTYPES && !ok; d++)
      if (op->dtypes & NXVK_DT(d)) ok = bench_ops_plan_ok(op, (nxvk_dtype)d, why, sizeof why);
    if (!ok) {
      fprintf(stderr, "nxvk: error: --ops: bench cannot choose operands for %s: %s\n", op->name, why);
      return EXIT_USAGE;
    }
    o->ops[o->nops++] = op;
  }
  return EXIT_OK;
}

/* --shapes: MxKxN or BxMxKxN (batched), each dimension a size */
static int parse_shapes(bench_opts *o, const char *shapes) {
  char buf[4096], *items[BENCH_MAX_LIST];
  snprintf(buf, sizeof buf, "%s", shapes);
  int n = split_list(buf, items);
  if (n <= 0) return cli_usage_error(&usage, "--shapes: give 1 to %d shapes, e.g. 1000x3000x700", BENCH_MAX_LIST);
  for (int i = 0; i < n; i++) {
    int64_t d[4];
    int nd = 0;
    char *save = NULL, copy[256];
    snprintf(copy, sizeof copy, "%s", items[i]);
    bool ok = true;
    for (char *tok = strtok_r(copy, "xX", &save); tok && ok; tok = strtok_r(NULL, "xX", &save))
      ok = nd < 4 && parse_size(tok, &d[nd++]);
    if (!ok || nd < 3)
      return cli_usage_error(&usage, "--shapes: '%s' is not MxKxN or BxMxKxN (sizes, K M G = x1024)", items[i]);
    int64_t *out = o->shapes[o->nshapes++];
    out[0] = nd == 4 ? d[0] : 0;
    memcpy(out + 1, d + nd - 3, 3 * sizeof *d);
  }
  return EXIT_OK;
}

/* Outputs are written at the end: find an unwritable folder before the run. */
static int check_output_dir(const char *opt, const char *path) {
  if (!path) return EXIT_OK;
  if (!*path) return cli_usage_error(&usage, "--%s: empty file name", opt);
  char copy[4096];
  snprintf(copy, sizeof copy, "%s", path);
  const char *dir = dirname(copy);
  if (access(dir, W_OK) != 0) {
    fprintf(stderr, "nxvk: error: --%s: cannot write in '%s': %s\n", opt, dir, strerror(errno));
    return EXIT_FAIL;
  }
  return EXIT_OK;
}

/* "nxvk bench ops --sizes 1K", quoting words a shell would split. */
static char *command_line(int argc, char **argv) {
  size_t len = 8;
  for (int i = 0; i < argc; i++) len += strlen(argv[i]) * 4 + 3;
  char *s = malloc(len), *p = s;
  if (!s) return NULL;
  p += sprintf(p, "nxvk");
  for (int i = 0; i < argc; i++) {
    bool plain = *argv[i] != '\0';
    for (const char *c = argv[i]; *c; c++)
      plain &= isalnum((unsigned char)*c) || strchr("-_.,/=:+@%", *c) != NULL;
    if (plain) {
      p += sprintf(p, " %s", argv[i]);
      continue;
    }
    p += sprintf(p, " '");
    for (const char *c = argv[i]; *c; c++) p += *c == '\'' ? sprintf(p, "'\\''") : sprintf(p, "%c", *c);
    p += sprintf(p, "'");
  }
  return s;
}

/* ---- one device ---- */

static bool mode_is(const bench_opts *o, const char *m) { return strcmp(o->mode, m) == 0; }

static int bench_device(const bench_opts *o, bench_report *rep, nxvk_ctx *ctx) {
  bench_ctx b = {.o = o, .ctx = ctx, .rep = rep, .rng = 0x6e78766b62656e63ull};
  nxvk_ctx_device_info(ctx, &b.info);
  b.device = b.info.index;
  nxvk_device_info *d = realloc(rep->devices, (size_t)(rep->ndevices + 1) * sizeof *d);
  if (!d) return cli_engine_error(NXVK_E_NO_MEMORY);
  rep->devices = d;
  rep->devices[rep->ndevices++] = b.info;
  printf("device %d: %s, %s %s, Vulkan %s\n", b.info.index, b.info.name, b.info.driver_name,
         b.info.driver_info, b.info.api_version);
  if (!b.info.timestamps)
    printf("note: no timestamp queries on this device: kernel times are submit + wait wall time\n");

  bool all = mode_is(o, "all");
  int status = EXIT_OK, row0 = rep->nrows, skip0 = rep->nskips;
  if (mode_is(o, "fusion")) {
    /* an 8-op chain fused vs unfused vs one add, cold and warm starts */
    int rc = bench_fusion_run(ctx, o->nsizes ? (long)o->sizes[0] : 0, o->min_time, stdout, NULL);
    return rc == NXVK_E_MISMATCH ? EXIT_FAIL : rc ? cli_engine_error(rc) : EXIT_OK;
  }
  if (!o->idle_gpu) {
    bool started;
    int rc = bench_busy_start(ctx, &b.info, &started);
    if (rc) return cli_engine_error(rc);
    rep->gpu_kept_busy |= started;
  }
  if (all || mode_is(o, "peak") || mode_is(o, "matmul")) {
    /* matmul reports % of the FMA peak: measure that first */
    status = bench_peak(&b, mode_is(o, "matmul"));
    bench_print_notes(rep, row0, skip0);
  }
  if (mode_is(o, "transfers")) {
    status = bench_peak_transfers(&b);
    bench_print_notes(rep, row0, skip0);
  }
  if (status == EXIT_OK && (all || mode_is(o, "ops"))) {
    row0 = rep->nrows, skip0 = rep->nskips;
    status = bench_ops(&b);
    bench_print_notes(rep, row0, skip0);
  }
  if (mode_is(o, "concurrency")) {
    status = bench_concurrency(&b);
    bench_print_notes(rep, row0, skip0);
  }
  if (status == EXIT_OK && (all || mode_is(o, "matmul"))) {
    row0 = rep->nrows, skip0 = rep->nskips;
    status = bench_matmul(&b);
    bench_print_notes(rep, row0, skip0);
  }
  bench_busy_stop();
  bench_progress_done(&b);
  return status;
}

static int run_devices(nxvk_cli *cli, const bench_opts *o, bench_report *rep) {
  nxvk_ctx *ctx;
  if (!cli->device || strcmp(cli->device, "all") != 0) {
    int rc = cli_ctx(cli, &ctx);
    return rc ? cli_engine_error(rc) : bench_device(o, rep, ctx);
  }
  nxvk_instance_opts io = {.validate = cli->validate};
  nxvk_device_info *infos = NULL;
  int count = 0, rc = nxvk_devices_query(&io, &infos, &count);
  if (rc) return cli_engine_error(rc);
  free(infos);
  if (count == 0) {
    fprintf(stderr, "nxvk: error: no Vulkan device\n");
    return EXIT_NO_DEVICE;
  }
  static char index[16];
  int status = EXIT_OK;
  for (int i = 0; i < count && status == EXIT_OK; i++) {
    if (i > 0) printf("\n");
    snprintf(index, sizeof index, "%d", i);
    cli->device = index;
    rc = cli_ctx(cli, &ctx);
    status = rc ? cli_engine_error(rc) : bench_device(o, rep, ctx);
    if (i + 1 < count && cli->ctx) status = cli_close_device(cli, status); /* main closes the last */
  }
  return status;
}

int cmd_bench(int argc, char **argv, nxvk_cli *cli) {
  const char *ops = NULL, *sizes = NULL, *dtypes = NULL, *bytes = NULL, *shapes = NULL;
  const char *json = NULL, *csv = NULL, *plot = NULL, *fill = NULL;
  long clients = LONG_MIN; /* not given */
  bench_opts o = {.min_time = 0.5, .warmup = 0.2, .cpu_limit = 2, .repeat = LONG_MIN /* not given */};
  const nxvk_option opts[] = {
      {"ops", 0, OPT_STRING, &ops, "OP,...", "ops to time (ops mode; default add,exp,sum,dot)"},
      {"sizes", 0, OPT_STRING, &sizes, "N,...", "ops: elements (default 1K..64M); matmul: n (128..4096)"},
      {"shapes", 0, OPT_STRING, &shapes, "MxKxN,...", "matmul: also these products (BxMxKxN batched)"},
      {"variant", 0, OPT_STRING, &o.variants, "V,...", "matmul: only these dot variants (default: every one)"},
      {"dtype", 0, OPT_STRING, &dtypes, "D,...", "dtypes (default: ops f32, matmul f32,f64)"},
      {"fill", 0, OPT_STRING, &fill, "timing|normal|bits", "ops: float operands' values (default timing: [0.5, 1.5))"},
      {"bytes", 0, OPT_STRING, &bytes, "SIZE", "peak: copy and transfer size (default up to 256M); concurrency: the port's put/get (64M)"},
      {"clients", 0, OPT_INT, &clients, "N", "concurrency: port clients, one `nxvk port` each (default 100; 0: none)"},
      {"min-time", 0, OPT_DOUBLE, &o.min_time, "SECONDS", "time each measurement at least this long (0.5)"},
      {"repeat", 0, OPT_INT, &o.repeat, "N", "exactly N timed runs instead of --min-time"},
      {"warmup", 0, OPT_DOUBLE, &o.warmup, "SECONDS", "untimed GPU runs first, at least this long (0.2)"},
      {"cpu-limit", 0, OPT_DOUBLE, &o.cpu_limit, "SECONDS", "skip CPU-reference timing over this per run (2)"},
      {"idle-gpu", 0, OPT_FLAG, &o.idle_gpu, NULL, "leave a GPU idle between timings (its clock may fall)"},
      {"sweep", 0, OPT_STRING, &o.sweep, "FILE", "matmul, ops' reductions: each again under each line's knobs (NAME VAR=VALUE ...; ~NAME: not checked)"},
      {"json", 0, OPT_STRING, &json, "FILE", "write every measurement as JSON"},
      {"csv", 0, OPT_STRING, &csv, "FILE", "write every measurement as CSV"},
      {"plot", 0, OPT_STRING, &plot, "FILE.svg", "draw the ladder (matmul) or the sweep (ops) as SVG"},
      {"device", 0, OPT_DEVICE, &cli->device, "N|NAME|all", "device index, name, or every device"},
      {"validate", 0, OPT_VALIDATE, &cli->validate, NULL, "Vulkan validation layers on; any message fails"},
      OPT_END,
  };
  char *cmdline = command_line(argc, argv); /* before cli_parse reorders argv */
  int npos, rc = cli_parse(argc, argv, &usage, opts, &npos);
  if (rc) {
    free(cmdline);
    return rc < 0 ? EXIT_OK : rc;
  }
  bench_report rep = {.command = cmdline};
  int status = EXIT_OK;
#define USAGE(...) do { status = cli_usage_error(&usage, __VA_ARGS__); goto out; } while (0)
  if (npos == 0) USAGE("give a mode: ops, matmul, peak, all, fusion, concurrency or compare");
  if (strcmp(argv[0], "compare") == 0) {
    /* reports, not a device: only --plot goes with it */
    if (ops || sizes || dtypes || bytes || shapes || o.variants || json || csv || cli->device || cli->validate)
      USAGE("compare takes report files and --plot only");
    if (npos < 3) USAGE("compare: give two or more reports of 'nxvk bench --json' (A.json B.json ...)");
    if ((status = check_output_dir("plot", plot))) goto out;
    status = bench_compare(npos - 1, argv + 1, plot);
    goto out;
  }
  if (npos > 1) USAGE("one mode only ('%s' is extra)", argv[1]);
  o.mode = argv[0];
  if (!mode_is(&o, "ops") && !mode_is(&o, "matmul") && !mode_is(&o, "peak") && !mode_is(&o, "all") &&
      !mode_is(&o, "fusion") && !mode_is(&o, "concurrency") && !mode_is(&o, "transfers")) {
    static const char *const modes[] = {"ops", "matmul", "peak", "all", "fusion", "compare", "concurrency", "transfers"};
    const char *near = cli_nearest(o.mode, modes, 8);
    if (near) USAGE("unknown mode '%s'; did you mean '%s'?", o.mode, near);
    USAGE("unknown mode '%s' (ops, matmul, peak, transfers, all, fusion, concurrency or compare)", o.mode);
  }
  if (mode_is(&o, "concurrency") && (ops || sizes || dtypes || shapes || plot))
    USAGE("concurrency takes the timing options, --clients, --bytes, --json and --csv only");
  if (clients != LONG_MIN && !mode_is(&o, "concurrency")) USAGE("--clients goes with the concurrency mode");
  if (clients != LONG_MIN && (clients < 0 || clients > 1000)) USAGE("--clients: give 0 to 1000 port clients");
  o.clients = clients == LONG_MIN ? 100 : (int)clients;
  if (mode_is(&o, "fusion") && (ops || dtypes || bytes || json || csv || plot))
    USAGE("fusion takes --sizes N (one size) and the timing options only");
  if (ops && !mode_is(&o, "ops") && !mode_is(&o, "all")) USAGE("--ops goes with the ops and all modes");
  if ((sizes || dtypes) && (mode_is(&o, "peak") || mode_is(&o, "transfers")))
    USAGE("--sizes and --dtype do not apply to %s", o.mode);
  if (shapes && !mode_is(&o, "matmul")) USAGE("--shapes goes with the matmul mode");
  if (o.variants && !mode_is(&o, "matmul") && !mode_is(&o, "all")) USAGE("--variant goes with the matmul and all modes");
  if (o.variants) {
    /* every name must be a variant of some op: a typo would time nothing */
    char buf[256], *items[BENCH_MAX_LIST];
    snprintf(buf, sizeof buf, "%s", o.variants);
    int n = split_list(buf, items);
    if (n <= 0) USAGE("--variant: give one or more dot variants");
    for (int i = 0; i < n; i++) {
      bool known = false;
      for (int k = 0; k < nxvk_op_count() && !known; k++) {
        const char *const *names;
        int nv = nxvk_op_variants(nxvk_op_at(k), &names);
        for (int v = 0; v < nv; v++) known |= strcmp(names[v], items[i]) == 0;
      }
      if (!known) USAGE("--variant: '%s' is not a dot variant (tiled vec vec1 regtile naive coopmat skinny)", items[i]);
    }
  }
  if (bytes && !mode_is(&o, "peak") && !mode_is(&o, "all") && !mode_is(&o, "concurrency") &&
      !mode_is(&o, "transfers"))
    USAGE("--bytes goes with the peak, transfers, all and concurrency modes");
  if (plot && (mode_is(&o, "peak") || mode_is(&o, "transfers")))
    USAGE("--plot draws ops or matmul results; %s has none to draw", o.mode);
  if (fill) {
    if (!mode_is(&o, "ops")) USAGE("--fill goes with the ops mode");
    if (strcmp(fill, "timing") == 0) o.fill = BENCH_FILL_TIMING;
    else if (strcmp(fill, "normal") == 0) o.fill = BENCH_FILL_NORMAL;
    else if (strcmp(fill, "bits") == 0) o.fill = BENCH_FILL_BITS;
    else USAGE("--fill: give timing, normal or bits");
  }
  if (!(o.min_time >= 0 && o.min_time <= 3600)) USAGE("--min-time: give 0 to 3600 seconds");
  if (o.repeat != LONG_MIN && (o.repeat < 1 || o.repeat > 100000)) USAGE("--repeat: give 1 to 100000 runs");
  if (o.repeat == LONG_MIN) o.repeat = 0; /* none given: --min-time decides */
  if (!(o.warmup >= 0 && o.warmup <= 60)) USAGE("--warmup: give 0 to 60 seconds");
  if (!(o.cpu_limit >= 0)) USAGE("--cpu-limit: give seconds >= 0");
  if (bytes && (!parse_size(bytes, &o.peak_bytes) || o.peak_bytes < 4 || o.peak_bytes % 4))
    USAGE("--bytes: '%s' is not a size in bytes (a multiple of 4, K M G = x1024)", bytes);
  if ((status = parse_lists(&o, ops, sizes, dtypes))) goto out;
  if (shapes && (status = parse_shapes(&o, shapes))) goto out;
  if ((status = check_output_dir("json", json)) || (status = check_output_dir("csv", csv)) ||
      (status = check_output_dir("plot", plot)))
    goto out;
  o.progress = isatty(STDERR_FILENO);
  setvbuf(stdout, NULL, _IOLBF, 0); /* every line as it is printed, into a pipe too */

  time_t now = time(NULL);
  struct tm utc;
  gmtime_r(&now, &utc);
  strftime(rep.date, sizeof rep.date, "%Y-%m-%dT%H:%M:%SZ", &utc);

  status = run_devices(cli, &o, &rep);
  /* files only from a run that passed every check: never a partial report */
  if (status == EXIT_OK && json) status = bench_write_json(json, &rep, &o);
  if (status == EXIT_OK && csv) status = bench_write_csv(csv, &rep);
  if (status == EXIT_OK && plot) status = bench_write_plot(plot, &rep);
#undef USAGE
out:
  bench_report_free(&rep);
  return status;
}
