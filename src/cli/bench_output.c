/*
 * bench_output.c - what `nxvk bench` shows and writes: the aligned tables
 * on stdout, and the JSON, CSV (libcsv) and SVG files, each written to a
 * temporary file renamed into place so a failure leaves no partial file.
 */
#include <cjson/cJSON.h>
#include <csv.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "svg.h"

/* ---- the report ---- */

bench_row *bench_add_row(bench_report *r) {
  if (r->nrows == r->caprows) {
    int cap = r->caprows ? 2 * r->caprows : 64;
    bench_row *p = realloc(r->rows, (size_t)cap * sizeof *p);
    if (!p) return NULL;
    r->rows = p;
    r->caprows = cap;
  }
  bench_row *row = &r->rows[r->nrows++];
  memset(row, 0, sizeof *row);
  row->dtype = "";
  return row;
}

void bench_add_skip(bench_ctx *b, const char *mode, const char *name, const char *dtype, int64_t size,
                    const char *fmt, ...) {
  bench_report *r = b->rep;
  if (r->nskips == r->capskips) {
    int cap = r->capskips ? 2 * r->capskips : 16;
    bench_skip *p = realloc(r->skips, (size_t)cap * sizeof *p);
    if (!p) return; /* a note lost to a full heap; the run itself goes on */
    r->skips = p;
    r->capskips = cap;
  }
  bench_skip *s = &r->skips[r->nskips++];
  memset(s, 0, sizeof *s);
  s->device = b->device;
  s->mode = mode;
  snprintf(s->name, sizeof s->name, "%s", name);
  s->dtype = dtype;
  s->size = size;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->reason, sizeof s->reason, fmt, ap);
  va_end(ap);
}

void bench_report_free(bench_report *r) {
  free(r->rows);
  free(r->skips);
  free(r->devices);
  free(r->command);
  memset(r, 0, sizeof *r);
}

/* ---- progress (stderr) ----
 * On a terminal one line rewritten in place; elsewhere (a pipe, a CI log)
 * a plain line now and then: at the first step and then whenever
 * BENCH_PROGRESS_S seconds have passed since the last one, so a long run
 * shows it is alive without flooding the log. */

#define BENCH_PROGRESS_S 5.0

void bench_progress(const bench_ctx *b, const char *fmt, ...) {
  static double start_ns = -1, last_ns = -1;
  va_list ap;
  if (b->o->progress) {
    fprintf(stderr, "\r\033[Kbench: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fflush(stderr);
    return;
  }
  double now = nxvk_now_ns();
  if (start_ns < 0) start_ns = now;
  if (last_ns >= 0 && now - last_ns < BENCH_PROGRESS_S * 1e9) return;
  last_ns = now;
  fprintf(stderr, "nxvk bench: %.0f s: ", (now - start_ns) / 1e9);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  fflush(stderr);
}

void bench_progress_done(const bench_ctx *b) {
  if (b->o->progress) fprintf(stderr, "\r\033[K");
}

/* ---- formatting ---- */

void bench_fmt_time(char *buf, size_t len, double ns) {
  static const struct { double scale; const char *unit; } units[] = {
      {1, "ns"}, {1e3, "us"}, {1e6, "ms"}, {1e9, "s"}};
  int u = 0;
  while (u < 3 && ns >= 1000 * units[u].scale) u++;
  double v = ns / units[u].scale;
  snprintf(buf, len, v < 10 ? "%.2f %s" : v < 100 ? "%.1f %s" : "%.0f %s", v, units[u].unit);
}

void bench_fmt_count(char *buf, size_t len, int64_t n) {
  static const char suffix[] = "KMGT";
  int s = -1;
  while (n >= 1024 && n % 1024 == 0 && s < 3) {
    n /= 1024;
    s++;
  }
  if (s < 0) snprintf(buf, len, "%lld", (long long)n);
  else snprintf(buf, len, "%lld%c", (long long)n, suffix[s]);
}

static const char *fmt_num(char *buf, size_t len, double v, const char *fmt) {
  if (isnan(v)) snprintf(buf, len, "-");
  else snprintf(buf, len, fmt, v);
  return buf;
}

static const char *fmt_stat(char *buf, size_t len, const bench_stat *s, int which) {
  if (!s->have) return snprintf(buf, len, "-"), buf;
  bench_fmt_time(buf, len, which == 0 ? s->median : which == 1 ? s->min : s->max);
  return buf;
}

/* ---- tables ---- */

#define OPS_FMT "%-12s %-5s %8s %-14s %10s %10s %10s %10s %10s %10s %9s  %s\n"
#define MATMUL_FMT "%-6s %-8s %-5s %6s %10s %9s %9s %9s %7s  %s\n"
#define SHAPES_FMT "%-6s %-8s %-5s %18s %10s %9s %9s %9s %7s %9s  %s\n"
#define PEAK_FMT "%-8s %-12s %-5s %8s %10s %10s %10s %16s  %s\n"
#define CONC_FMT "%-6s %-5s %6s %8s %12s %12s  %s\n"

void bench_print_header(const char *mode) {
  if (strcmp(mode, "ops") == 0) {
    printf("\nops: median of repeated runs [min, max]; kernel from GPU timestamps, per dispatch of\n"
           "runs of ~0.5 ms back to back; e2e = upload + dispatch + download (wall clock);\n"
           "vs cpu ref = cpu ref / kernel, where cpu ref is nxvk's own single-threaded C reference\n"
           "(not numpy or a tuned library); GB/s = bytes read + written / kernel time\n");
    printf(OPS_FMT, "op", "dtype", "size", "shape", "cpu ref", "kernel", "min", "max", "e2e", "vs cpu ref",
           "GB/s", "check");
  } else if (strcmp(mode, "shapes") == 0) {
    printf("\nmatmul shapes (--shapes): the default variant on m x k x n products (b x m x k x n\n"
           "batched), GFLOPS as above; GB/s = bytes of A, B and C / kernel time (skinny products\n"
           "are a pass over memory: compare with bench peak's copy)\n");
    printf(SHAPES_FMT, "op", "variant", "dtype", "shape", "kernel", "GFLOPS", "min", "max", "%peak", "GB/s", "check");
  } else if (strcmp(mode, "matmul") == 0) {
    printf("\nmatmul: GFLOPS = 2*m*n*k / kernel time (GPU timestamps), median [min, max]; %%peak of this\n"
           "device's measured FMA peak for the dtype\n");
    printf(MATMUL_FMT, "op", "variant", "dtype", "n", "kernel", "GFLOPS", "min", "max", "%peak", "check");
  } else if (strcmp(mode, "concurrency") == 0) {
    printf("\nconcurrency: threads sharing one context, each running the op end to end (inputs in,\n"
           "op, result back: one submission) on its own inputs and checking every result; ops/s =\n"
           "all threads' ops / wall time; per op = the mean wall time of one op in a thread\n");
    printf(CONC_FMT, "op", "dtype", "size", "threads", "per op", "ops/s", "check");
  } else {
    printf("\npeak: the roofline measured by nxvk on this device, median [min, max]\n");
    printf(PEAK_FMT, "measure", "variant", "dtype", "size", "time", "min", "max", "result", "check");
  }
}

void bench_print_row(const bench_row *r) {
  char a[32], b[32], c[32], d[32], e[32], f[32], g[32], h[32], shape[96];
  if (strcmp(r->mode, "ops") == 0) {
    bench_fmt_count(a, sizeof a, r->size);
    nxvk_shape_str(&r->shape, shape, sizeof shape);
    printf(OPS_FMT, r->name, r->dtype, a, shape, fmt_stat(b, sizeof b, &r->cpu, 0),
           fmt_stat(c, sizeof c, &r->gpu, 0), fmt_stat(d, sizeof d, &r->gpu, 1), fmt_stat(e, sizeof e, &r->gpu, 2),
           fmt_stat(f, sizeof f, &r->e2e, 0), fmt_num(g, sizeof g, r->speedup, "%.2fx"),
           fmt_num(h, sizeof h, r->gbps, "%.2f"), r->check);
  } else if (strcmp(r->mode, "shapes") == 0) {
    printf(SHAPES_FMT, r->name, r->variant, r->dtype, r->dims, fmt_stat(b, sizeof b, &r->gpu, 0),
           fmt_num(c, sizeof c, r->gflops, "%.2f"), fmt_num(d, sizeof d, r->gflops_min, "%.2f"),
           fmt_num(e, sizeof e, r->gflops_max, "%.2f"), fmt_num(f, sizeof f, r->pct_peak, "%.1f%%"),
           fmt_num(g, sizeof g, r->gbps, "%.1f"), r->check);
  } else if (strcmp(r->mode, "matmul") == 0) {
    snprintf(a, sizeof a, "%lld", (long long)r->size);
    printf(MATMUL_FMT, r->name, r->variant, r->dtype, a, fmt_stat(b, sizeof b, &r->gpu, 0),
           fmt_num(c, sizeof c, r->gflops, "%.2f"), fmt_num(d, sizeof d, r->gflops_min, "%.2f"),
           fmt_num(e, sizeof e, r->gflops_max, "%.2f"), fmt_num(f, sizeof f, r->pct_peak, "%.1f%%"), r->check);
  } else if (strcmp(r->mode, "concurrency") == 0) {
    bench_fmt_count(a, sizeof a, r->size);
    printf(CONC_FMT, r->name, r->dtype, a, r->dims, fmt_stat(b, sizeof b, &r->e2e, 0),
           fmt_num(c, sizeof c, r->ops_per_s, "%.0f"), r->check);
  } else {
    /* wall clock where there is one (transfers, latency), else timestamps */
    const bench_stat *s = r->e2e.have ? &r->e2e : &r->gpu;
    char result[48];
    if (!isnan(r->gflops)) snprintf(result, sizeof result, "%.2f GFLOPS", r->gflops);
    else if (!isnan(r->latency_us)) snprintf(result, sizeof result, "%.2f us", r->latency_us);
    else fmt_num(result, sizeof result, r->gbps, "%.2f GB/s");
    if (r->size > 0 && strcmp(r->name, "fma") != 0) bench_fmt_count(a, sizeof a, r->size);
    else snprintf(a, sizeof a, "-");
    printf(PEAK_FMT, r->name, r->variant, r->dtype[0] ? r->dtype : "-", a, fmt_stat(b, sizeof b, s, 0),
           fmt_stat(c, sizeof c, s, 1), fmt_stat(d, sizeof d, s, 2), result, r->check);
  }
  fflush(stdout); /* each row as it finishes, into a pipe too (| tee) */
}

/* Notes for what this mode skipped or left out, after its table. */
void bench_print_notes(const bench_report *r, int first_row, int first_skip) {
  char sz[32];
  for (int i = first_skip; i < r->nskips; i++) {
    const bench_skip *s = &r->skips[i];
    bench_fmt_count(sz, sizeof sz, s->size);
    printf("note: %s %s%s%s%s%s skipped: %s\n", s->mode, s->name, s->dtype[0] ? " " : "", s->dtype,
           s->size ? " " : "", s->size ? sz : "", s->reason);
  }
  for (int i = first_row; i < r->nrows; i++) {
    const bench_row *row = &r->rows[i];
    if (!row->note[0] || strcmp(row->mode, "peak") == 0) continue;
    bench_fmt_count(sz, sizeof sz, row->size);
    printf("note: %s %s %s%s%s %s: %s\n", row->mode, row->name, row->variant, row->variant[0] ? " " : "",
           row->dtype, sz, row->note);
  }
  for (int i = first_row; i < r->nrows; i++) /* peak notes say how each figure was taken */
    if (r->rows[i].note[0] && strcmp(r->rows[i].mode, "peak") == 0)
      printf("  %s %s%s%s: %s\n", r->rows[i].name, r->rows[i].variant, r->rows[i].dtype[0] ? " " : "",
             r->rows[i].dtype, r->rows[i].note);
}

/* ---- files: temp + rename ---- */

typedef int (*writer_fn)(FILE *f, const void *arg);

/* Through nxvk_out (cli_write_with): a regular file replaced atomically, a
 * device or FIFO written in place, write errors reported. */
static int write_atomic(const char *path, writer_fn fn, const void *arg) {
  return cli_write_with("bench", path, fn, arg);
}

/* ---- JSON ---- */

static void add_num(cJSON *o, const char *k, double v) {
  if (isnan(v) || isinf(v)) cJSON_AddNullToObject(o, k);
  else cJSON_AddNumberToObject(o, k, v);
}

static void add_stat(cJSON *o, const char *k, const bench_stat *s) {
  if (!s->have) {
    cJSON_AddNullToObject(o, k);
    return;
  }
  cJSON *j = cJSON_AddObjectToObject(o, k);
  cJSON_AddNumberToObject(j, "median", s->median);
  cJSON_AddNumberToObject(j, "min", s->min);
  cJSON_AddNumberToObject(j, "max", s->max);
  cJSON_AddNumberToObject(j, "repeats", s->repeats);
}

static cJSON *row_json(const bench_row *r) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "device", r->device);
  cJSON_AddStringToObject(o, "mode", r->mode);
  cJSON_AddStringToObject(o, "name", r->name);
  cJSON_AddStringToObject(o, "variant", r->variant);
  cJSON_AddStringToObject(o, "dtype", r->dtype);
  cJSON_AddNumberToObject(o, "size", (double)r->size);
  if (r->dims[0]) cJSON_AddStringToObject(o, "dims", r->dims);
  cJSON *shape = cJSON_AddArrayToObject(o, "shape");
  if (strcmp(r->mode, "peak") != 0)
    for (int i = 0; i < r->shape.rank; i++) cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)r->shape.dim[i]));
  cJSON_AddNumberToObject(o, "bytes", r->bytes);
  cJSON_AddNumberToObject(o, "flops", r->flops);
  add_stat(o, "gpu_ns", &r->gpu);
  add_stat(o, "e2e_ns", &r->e2e);
  add_stat(o, "cpu_ns", &r->cpu);
  add_num(o, "gbps", r->gbps);
  add_num(o, "gflops", r->gflops);
  add_num(o, "gflops_min", r->gflops_min);
  add_num(o, "gflops_max", r->gflops_max);
  add_num(o, "speedup", r->speedup);
  add_num(o, "speedup_e2e", r->speedup_e2e);
  add_num(o, "pct_peak", r->pct_peak);
  add_num(o, "latency_us", r->latency_us);
  if (strcmp(r->mode, "concurrency") == 0) add_num(o, "ops_per_s", r->ops_per_s);
  cJSON *chk = cJSON_AddObjectToObject(o, "check");
  cJSON_AddStringToObject(chk, "on", r->check);
  add_num(chk, "max_abs", r->max_abs);
  add_num(chk, "max_ulp", r->max_ulp);
  cJSON_AddStringToObject(o, "note", r->note);
  return o;
}

static cJSON *device_json(const bench_report *r, int i) {
  const nxvk_device_info *d = &r->devices[i];
  cJSON *o = cli_device_json(d); /* info's record, plus short names and the roofline */
  cJSON_AddStringToObject(o, "driver", d->driver_name);
  cJSON_AddStringToObject(o, "api", d->api_version);
  /* the roofline from this run's peak rows, when they were measured */
  double f32 = NAN, f64 = NAN, copy = NAN;
  for (int k = 0; k < r->nrows; k++) {
    const bench_row *row = &r->rows[k];
    if (row->device != d->index || strcmp(row->mode, "peak") != 0) continue;
    if (strcmp(row->name, "fma") == 0 && strcmp(row->dtype, "f32") == 0 && !(row->gflops <= f32)) f32 = row->gflops;
    if (strcmp(row->name, "fma") == 0 && strcmp(row->dtype, "f64") == 0 && !(row->gflops <= f64)) f64 = row->gflops;
    if (strcmp(row->name, "copy") == 0 && !(row->gbps <= copy)) copy = row->gbps; /* the faster copy */
  }
  cJSON *peak = cJSON_AddObjectToObject(o, "peak");
  add_num(peak, "fma_gflops_f32", f32);
  add_num(peak, "fma_gflops_f64", f64);
  add_num(peak, "copy_gbps", copy);
  return o;
}

typedef struct json_args {
  const bench_report *r;
  const bench_opts *o;
} json_args;

static int json_writer(FILE *f, const void *arg) {
  const json_args *a = arg;
  const bench_report *r = a->r;
  cJSON *root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "tool", "nxvk bench");
  cJSON_AddStringToObject(root, "nxvk_version", NXVK_VERSION);
  cJSON_AddStringToObject(root, "date", r->date);
  cJSON_AddStringToObject(root, "command", r->command ? r->command : "");
  cJSON_AddStringToObject(root, "mode", a->o->mode);
  cJSON *m = cJSON_AddObjectToObject(root, "method");
  cJSON_AddNumberToObject(m, "min_time_s", a->o->min_time);
  if (a->o->repeat > 0) cJSON_AddNumberToObject(m, "repeat", (double)a->o->repeat);
  else cJSON_AddNullToObject(m, "repeat");
  cJSON_AddNumberToObject(m, "warmup_runs", 1);
  cJSON_AddNumberToObject(m, "warmup_s", a->o->warmup);
  cJSON_AddNumberToObject(m, "cpu_limit_s", a->o->cpu_limit);
  cJSON_AddStringToObject(m, "gpu_timer", "vkCmdWriteTimestamp x timestampPeriod");
  cJSON_AddStringToObject(m, "wall_timer", "CLOCK_MONOTONIC");
  /* whether bench_busy.c's thread ran (GPUs, without --idle-gpu) */
  cJSON_AddBoolToObject(m, "gpu_kept_busy", r->gpu_kept_busy);
  cJSON *devs = cJSON_AddArrayToObject(root, "devices");
  for (int i = 0; i < r->ndevices; i++) cJSON_AddItemToArray(devs, device_json(r, i));
  cJSON *res = cJSON_AddArrayToObject(root, "results");
  for (int i = 0; i < r->nrows; i++) cJSON_AddItemToArray(res, row_json(&r->rows[i]));
  cJSON *sk = cJSON_AddArrayToObject(root, "skipped");
  for (int i = 0; i < r->nskips; i++) {
    const bench_skip *s = &r->skips[i];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "device", s->device);
    cJSON_AddStringToObject(o, "mode", s->mode);
    cJSON_AddStringToObject(o, "name", s->name);
    cJSON_AddStringToObject(o, "dtype", s->dtype);
    if (s->size) cJSON_AddNumberToObject(o, "size", (double)s->size);
    else cJSON_AddNullToObject(o, "size");
    cJSON_AddStringToObject(o, "reason", s->reason);
    cJSON_AddItemToArray(sk, o);
  }
  char *text = cJSON_Print(root);
  cJSON_Delete(root);
  if (!text) return -1;
  int rc = fputs(text, f) < 0 || fputc('\n', f) == EOF ? -1 : 0;
  cJSON_free(text);
  return rc;
}

int bench_write_json(const char *path, const bench_report *r, const bench_opts *o) {
  json_args a = {r, o};
  return write_atomic(path, json_writer, &a);
}

/* ---- CSV (libcsv quotes every field) ---- */

static const char *const csv_header[] = {
    "device", "device_name", "mode", "name", "variant", "dtype", "size", "shape", "bytes", "flops",
    "gpu_median_ns", "gpu_min_ns", "gpu_max_ns", "gpu_repeats", "e2e_median_ns", "e2e_min_ns",
    "e2e_max_ns", "e2e_repeats", "cpu_median_ns", "cpu_min_ns", "cpu_max_ns", "cpu_repeats", "gbps",
    "gflops", "speedup", "speedup_e2e", "pct_peak", "latency_us", "check", "note", "ops_per_s"};
enum { CSV_COLS = sizeof csv_header / sizeof csv_header[0] };

static int csv_field(FILE *f, bool first, const char *s) {
  if (!first && fputc(',', f) == EOF) return -1;
  return csv_fwrite(f, s, strlen(s)) == 0 ? 0 : -1;
}

static void num_text(char *buf, size_t len, double v) {
  if (isnan(v) || isinf(v)) buf[0] = '\0';
  else snprintf(buf, len, "%.9g", v);
}

static int csv_writer(FILE *f, const void *arg) {
  const bench_report *r = arg;
  int rc = 0;
  for (int i = 0; i < CSV_COLS && rc == 0; i++) rc = csv_field(f, i == 0, csv_header[i]);
  if (fputc('\n', f) == EOF) rc = -1;
  for (int k = 0; k < r->nrows && rc == 0; k++) {
    const bench_row *row = &r->rows[k];
    char v[CSV_COLS][320];
    const char *name = "";
    for (int d = 0; d < r->ndevices; d++)
      if (r->devices[d].index == row->device) name = r->devices[d].name;
    const bench_stat *st[3] = {&row->gpu, &row->e2e, &row->cpu};
    int c = 0;
    snprintf(v[c++], 320, "%d", row->device);
    snprintf(v[c++], 320, "%s", name);
    snprintf(v[c++], 320, "%s", row->mode);
    snprintf(v[c++], 320, "%s", row->name);
    snprintf(v[c++], 320, "%s", row->variant);
    snprintf(v[c++], 320, "%s", row->dtype);
    snprintf(v[c++], 320, "%lld", (long long)row->size);
    if (strcmp(row->mode, "peak") != 0) nxvk_shape_str(&row->shape, v[c++], 320);
    else v[c++][0] = '\0';
    num_text(v[c++], 320, row->bytes);
    num_text(v[c++], 320, row->flops);
    for (int s = 0; s < 3; s++) {
      num_text(v[c++], 320, st[s]->have ? st[s]->median : NAN);
      num_text(v[c++], 320, st[s]->have ? st[s]->min : NAN);
      num_text(v[c++], 320, st[s]->have ? st[s]->max : NAN);
      num_text(v[c++], 320, st[s]->have ? st[s]->repeats : NAN);
    }
    num_text(v[c++], 320, row->gbps);
    num_text(v[c++], 320, row->gflops);
    num_text(v[c++], 320, row->speedup);
    num_text(v[c++], 320, row->speedup_e2e);
    num_text(v[c++], 320, row->pct_peak);
    num_text(v[c++], 320, row->latency_us);
    snprintf(v[c++], 320, "%s", row->check);
    snprintf(v[c++], 320, "%s", row->note);
    num_text(v[c++], 320, strcmp(row->mode, "concurrency") == 0 ? row->ops_per_s : NAN);
    for (int i = 0; i < c && rc == 0; i++) rc = csv_field(f, i == 0, v[i]);
    if (fputc('\n', f) == EOF) rc = -1;
  }
  return rc;
}

int bench_write_csv(const char *path, const bench_report *r) { return write_atomic(path, csv_writer, r); }

/* ---- SVG: the ladder (matmul) and the sweep (ops) ---- */

enum { MAX_SERIES = 64, MAX_POINTS = BENCH_MAX_LIST };

typedef struct series_buf {
  char label[192];
  int device;
  char name[32], variant[16], dtype[8];
  double x[MAX_POINTS], y[MAX_POINTS];
  double lo[MAX_POINTS], hi[MAX_POINTS];  /* the fastest and slowest run's figure */
  bool bars;
  int n;
} series_buf;

typedef struct plot_buf {
  series_buf s[MAX_SERIES];
  svg_series out[MAX_SERIES];
  int n;
} plot_buf;

static series_buf *series_for(plot_buf *p, const bench_row *row, bool multi_dev, const char *const *labels) {
  for (int i = 0; i < p->n; i++) {
    series_buf *s = &p->s[i];
    if (s->device == row->device && !strcmp(s->name, row->name) && !strcmp(s->variant, row->variant) &&
        !strcmp(s->dtype, row->dtype))
      return s;
  }
  if (p->n == MAX_SERIES) return NULL;
  series_buf *s = &p->s[p->n++];
  memset(s, 0, sizeof *s);
  s->device = row->device;
  snprintf(s->name, sizeof s->name, "%s", row->name);
  snprintf(s->variant, sizeof s->variant, "%s", row->variant);
  snprintf(s->dtype, sizeof s->dtype, "%s", row->dtype);
  char dev[24] = "";
  if (labels) snprintf(dev, sizeof dev, "%.16s ", labels[row->device]);
  else if (multi_dev) snprintf(dev, sizeof dev, "device %d: ", row->device);
  if (strcmp(row->mode, "matmul") == 0)
    snprintf(s->label, sizeof s->label, "%s%s %s %s", dev, row->name, row->variant, row->dtype);
  else
    snprintf(s->label, sizeof s->label, "%s%s %s", dev, row->name, row->dtype);
  return s;
}

static void add_point(series_buf *s, double x, double y) {
  if (s && s->n < MAX_POINTS) {
    s->x[s->n] = x;
    s->y[s->n] = y;
    s->lo[s->n] = s->hi[s->n] = y;
    s->n++;
  }
}

/* A point with its min/max bar. */
static void add_point_range(series_buf *s, double x, double y, double lo, double hi) {
  if (!s || s->n >= MAX_POINTS) return;
  add_point(s, x, y);
  s->lo[s->n - 1] = lo;
  s->hi[s->n - 1] = hi;
  s->bars = true;
}

/* A horizontal line at a measured peak across the plotted x range. */
static void add_roof(plot_buf *p, const char *label, double y, double x0, double x1) {
  if (p->n >= MAX_SERIES || !(y > 0) || !(x1 >= x0)) return;
  series_buf *s = p->s + p->n;
  p->n++;
  memset(s, 0, sizeof *s);
  s->device = -1;
  size_t n = strlen(label) < sizeof s->label - 1 ? strlen(label) : sizeof s->label - 1;
  memcpy(s->label, label, n);
  add_point(s, x0, y);
  add_point(s, x1, y);
}

static void fill_plot(plot_buf *p, const bench_report *r, const char *mode) {
  bool multi = r->ndevices > 1;
  const char *const *labels = r->column_labels;
  double x0 = INFINITY, x1 = -INFINITY;
  p->n = 0;
  for (int i = 0; i < r->nrows; i++) {
    const bench_row *row = &r->rows[i];
    if (strcmp(row->mode, mode) != 0) continue;
    double x, y, lo, hi;
    if (strcmp(mode, "matmul") == 0) {
      x = (double)row->size;
      y = row->gflops;
      lo = row->gflops_min; /* the slowest run's GFLOPS */
      hi = row->gflops_max;
    } else {
      int64_t n = 1;
      for (int k = 0; k < row->shape.rank; k++) n *= row->shape.dim[k];
      x = (double)n;
      y = row->gbps;
      /* bytes / slowest and fastest kernel time */
      bool st = row->gpu.have && row->gpu.min > 0 && row->gpu.max > 0;
      lo = st ? y * row->gpu.median / row->gpu.max : NAN;
      hi = st ? y * row->gpu.median / row->gpu.min : NAN;
    }
    add_point_range(series_for(p, row, multi, labels), x, y, lo, hi);
    if (x < x0) x0 = x;
    if (x > x1) x1 = x;
  }
  /* the roofs this run measured: under the ladder the best FMA rate of each
   * dtype it shows, under the sweep the device copy bandwidth */
  for (int i = 0; i < r->nrows; i++) {
    const bench_row *row = &r->rows[i];
    if (strcmp(row->mode, "peak") != 0) continue;
    char label[192], dev[24] = "";
    if (labels) snprintf(dev, sizeof dev, "%.16s ", labels[row->device]);
    else if (multi) snprintf(dev, sizeof dev, "device %d: ", row->device);
    if (!strcmp(mode, "matmul") && !strcmp(row->name, "fma")) {
      bool shown = false, best = true;
      for (int k = 0; k < r->nrows; k++) {
        const bench_row *o = &r->rows[k];
        if (o->device != row->device || strcmp(o->dtype, row->dtype) != 0) continue;
        shown |= !strcmp(o->mode, "matmul");
        if (!strcmp(o->mode, "peak") && !strcmp(o->name, "fma") && o->gflops > row->gflops) best = false;
      }
      if (!shown || !best) continue;
      snprintf(label, sizeof label, "%speak FMA %s (%s)", dev, row->dtype, row->variant);
      add_roof(p, label, row->gflops, x0, x1);
    } else if (!strcmp(mode, "ops") && !strcmp(row->name, "copy")) {
      snprintf(label, sizeof label, "%speak device copy (%s)", dev, row->variant);
      add_roof(p, label, row->gbps, x0, x1);
    }
  }
  for (int i = 0; i < p->n; i++)
    p->out[i] = (svg_series){p->s[i].label, p->s[i].n, p->s[i].x, p->s[i].y, p->s[i].bars ? p->s[i].lo : NULL,
                             p->s[i].bars ? p->s[i].hi : NULL};
}

typedef struct plot_args {
  const bench_report *r;
} plot_args;

static int plot_writer(FILE *f, const void *arg) {
  const bench_report *r = ((const plot_args *)arg)->r;
  static plot_buf ladder, sweep; /* large; one plot per run */
  svg_plot plots[2];
  int n = 0;
  char t1[320], t2[320], dev[280] = "";
  if (r->column_labels) snprintf(dev, sizeof dev, ": %d runs compared", r->ndevices);
  else if (r->ndevices == 1) snprintf(dev, sizeof dev, " on %s", r->devices[0].name);
  fill_plot(&ladder, r, "matmul");
  fill_plot(&sweep, r, "ops");
  bool has_ladder = false, has_sweep = false;
  for (int i = 0; i < r->nrows; i++) {
    has_ladder |= strcmp(r->rows[i].mode, "matmul") == 0;
    has_sweep |= strcmp(r->rows[i].mode, "ops") == 0;
  }
  if (has_ladder) {
    snprintf(t1, sizeof t1, "nxvk matmul ladder%s", dev);
    plots[n++] = (svg_plot){t1, {"matrix size n", "n x n matrices", true, 2},
                            {"throughput, 2n^3 / kernel time", "GFLOPS", true, 10}, ladder.n, ladder.out};
  }
  if (has_sweep) {
    snprintf(t2, sizeof t2, "nxvk op sweep%s", dev);
    plots[n++] = (svg_plot){t2, {"operand size", "elements", true, 4},
                            {"bandwidth, bytes read + written / kernel time", "GB/s", true, 10}, sweep.n,
                            sweep.out};
  }
  return svg_write(f, plots, n);
}

int bench_write_plot(const char *path, const bench_report *r) {
  plot_args a = {r};
  return write_atomic(path, plot_writer, &a);
}
