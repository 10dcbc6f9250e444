/*
 * bench_compare.c - `nxvk bench compare A.json B.json ...`: the reports of
 * `nxvk bench --json` from several hosts or runs, read side by side.  Each
 * device of each file is a column [1], [2], ...; a measurement (mode, op,
 * variant, dtype, size) is a row; every column after the first has its
 * ratio to [1] in the same direction everywhere: how many times [1]'s speed
 * it reaches (above 1 faster, below 1 slower).  --plot draws the ladder and
 * the sweep of every column with the bench's own plot code.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

enum { MAX_FILE_BYTES = 256 << 20, LABEL_W = 34, CELL_W = 12 };

typedef struct column {
  int file, device;                     /* file index, device index in it */
  char label[16];                       /* "[1]" */
  char what[400];                       /* legend line */
} column;

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap + 1);
  while (buf) {
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (n < cap) break;
    if (cap >= MAX_FILE_BYTES) {
      free(buf);
      buf = NULL;
      errno = EFBIG;
      break;
    }
    cap *= 2;
    char *p = realloc(buf, cap + 1);
    if (!p) free(buf);
    buf = p;
  }
  if (buf && ferror(f)) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  if (buf) {
    buf[n] = '\0';
    *len = n;
  }
  return buf;
}

static const char *str_of(const cJSON *o, const char *k) {
  const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
  return s ? s : "";
}

static double num_of(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static void stat_of(const cJSON *o, const char *k, bench_stat *st) {
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, k);
  memset(st, 0, sizeof *st);
  if (!cJSON_IsObject(s)) return;
  st->median = num_of(s, "median");
  st->min = num_of(s, "min");
  st->max = num_of(s, "max");
  st->repeats = (int)num_of(s, "repeats");
  st->have = !isnan(st->median);
}

/* Interned strings for the rows' const char * fields (mode, dtype). */
static const char *intern(const char *s) {
  static const char *const known[] = {"ops", "matmul", "shapes", "peak", "", "f16", "bf16", "f32", "f64",
                                      "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "bool"};
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (strcmp(known[i], s) == 0) return known[i];
  return NULL;
}

/* One result of a report as a bench_row of column col. */
static bool row_from_json(const cJSON *j, int col, bench_row *r) {
  memset(r, 0, sizeof *r);
  r->device = col;
  r->mode = intern(str_of(j, "mode"));
  r->dtype = intern(str_of(j, "dtype"));
  if (!r->mode || !r->dtype || !*r->mode) return false;
  snprintf(r->name, sizeof r->name, "%s", str_of(j, "name"));
  snprintf(r->variant, sizeof r->variant, "%s", str_of(j, "variant"));
  snprintf(r->dims, sizeof r->dims, "%s", str_of(j, "dims"));
  double size = num_of(j, "size");
  r->size = isnan(size) ? 0 : (int64_t)size;
  const cJSON *shape = cJSON_GetObjectItemCaseSensitive(j, "shape"), *d;
  cJSON_ArrayForEach(d, shape) {
    if (r->shape.rank < NXVK_MAX_RANK && cJSON_IsNumber(d)) r->shape.dim[r->shape.rank++] = (int64_t)d->valuedouble;
  }
  r->bytes = num_of(j, "bytes");
  r->flops = num_of(j, "flops");
  stat_of(j, "gpu_ns", &r->gpu);
  stat_of(j, "e2e_ns", &r->e2e);
  stat_of(j, "cpu_ns", &r->cpu);
  r->gbps = num_of(j, "gbps");
  r->gflops = num_of(j, "gflops");
  r->gflops_min = num_of(j, "gflops_min");
  r->gflops_max = num_of(j, "gflops_max");
  r->speedup = num_of(j, "speedup");
  r->speedup_e2e = num_of(j, "speedup_e2e");
  r->pct_peak = num_of(j, "pct_peak");
  r->latency_us = num_of(j, "latency_us");
  return true;
}

/* The figure a row is compared on: its value, whether more is faster, and
 * how it prints. */
static double figure(const bench_row *r, bool *higher_better, char *text, size_t len) {
  *higher_better = true;
  if (!strcmp(r->mode, "ops")) {
    *higher_better = false;
    if (!r->gpu.have) return NAN;
    bench_fmt_time(text, len, r->gpu.median);
    return r->gpu.median;
  }
  if (!strcmp(r->mode, "matmul") || !strcmp(r->mode, "shapes")) {
    snprintf(text, len, "%.2f", r->gflops);
    return r->gflops;
  }
  if (!isnan(r->gflops)) {
    snprintf(text, len, "%.1f GFLOPS", r->gflops);
    return r->gflops;
  }
  if (!isnan(r->latency_us)) {
    *higher_better = false;
    snprintf(text, len, "%.2f us", r->latency_us);
    return r->latency_us;
  }
  snprintf(text, len, "%.2f GB/s", r->gbps);
  return r->gbps;
}

static bool same_measure(const bench_row *a, const bench_row *b) {
  return !strcmp(a->mode, b->mode) && !strcmp(a->name, b->name) && !strcmp(a->variant, b->variant) &&
         !strcmp(a->dtype, b->dtype) && a->size == b->size && !strcmp(a->dims, b->dims);
}

static void row_label(const bench_row *r, char *buf, size_t len) {
  char sz[32];
  bench_fmt_count(sz, sizeof sz, r->size);
  if (!strcmp(r->mode, "ops")) {
    char shape[96];
    nxvk_shape_str(&r->shape, shape, sizeof shape);
    int w = snprintf(buf, len, "%s %s %s %s", r->name, r->dtype, sz, shape);
    if (w < 0 || (size_t)w >= len) buf[len - 1] = '\0'; /* a label cut short is still a label */
  } else if (!strcmp(r->mode, "matmul")) {
    snprintf(buf, len, "%s %s %s n=%lld", r->name, r->variant, r->dtype, (long long)r->size);
  } else if (!strcmp(r->mode, "shapes")) {
    snprintf(buf, len, "%s %s %s %s", r->name, r->variant, r->dtype, r->dims);
  } else {
    snprintf(buf, len, "%s%s%s%s%s%s%s", r->name, r->variant[0] ? " " : "", r->variant, r->dtype[0] ? " " : "",
             r->dtype, r->size > 0 && strcmp(r->name, "fma") ? " " : "",
             r->size > 0 && strcmp(r->name, "fma") ? sz : "");
  }
}

static const struct {
  const char *mode, *what;
} sections[] = {
    {"peak", "peak: the roofline each device measured, median (GFLOPS, GB/s: more is faster; us: less)"},
    {"ops", "ops: kernel time per dispatch, median of GPU timestamps (less is faster)"},
    {"matmul", "matmul: GFLOPS = 2*n^3 / kernel time, median (more is faster)"},
    {"shapes", "matmul shapes: GFLOPS of m x k x n products, median (more is faster)"},
};

static void print_table(const bench_report *rep, const column *cols, int ncols) {
  for (size_t s = 0; s < sizeof sections / sizeof sections[0]; s++) {
    bool any = false;
    for (int i = 0; i < rep->nrows && !any; i++) any = !strcmp(rep->rows[i].mode, sections[s].mode);
    if (!any) continue;
    printf("\n%s\n%-*s", sections[s].what, LABEL_W, "measurement");
    for (int c = 0; c < ncols; c++) {
      printf(" %*s", CELL_W, cols[c].label);
      if (c > 0) printf(" %7s", "x[1]");
    }
    printf("\n");
    /* each measurement once, in the order it first appears */
    for (int i = 0; i < rep->nrows; i++) {
      const bench_row *r = &rep->rows[i];
      if (strcmp(r->mode, sections[s].mode) != 0) continue;
      bool seen = false;
      for (int k = 0; k < i && !seen; k++) seen = same_measure(&rep->rows[k], r);
      if (seen) continue;
      char label[160];
      row_label(r, label, sizeof label);
      printf("%-*s", LABEL_W, label);
      double base = NAN;
      for (int c = 0; c < ncols; c++) {
        const bench_row *hit = NULL;
        for (int k = 0; k < rep->nrows && !hit; k++)
          if (rep->rows[k].device == c && same_measure(&rep->rows[k], r)) hit = &rep->rows[k];
        char text[48] = "-", ratio[24] = "-";
        bool higher = true;
        double v = hit ? figure(hit, &higher, text, sizeof text) : NAN;
        if (isnan(v)) snprintf(text, sizeof text, "-");
        if (c == 0) base = v;
        else if (v > 0 && base > 0) snprintf(ratio, sizeof ratio, "%.2fx", higher ? v / base : base / v);
        printf(" %*s", CELL_W, text);
        if (c > 0) printf(" %7s", ratio);
      }
      printf("\n");
    }
  }
}

int bench_compare(int nfiles, char **files, const char *plot_path) {
  bench_report rep = {0};
  column *cols = NULL;
  const char **labels = NULL;
  int ncols = 0, status = EXIT_OK;
  for (int f = 0; f < nfiles && status == EXIT_OK; f++) {
    size_t len = 0;
    char *text = read_file(files[f], &len);
    if (!text) {
      fprintf(stderr, "nxvk: error: bench compare: %s: %s\n", files[f], strerror(errno));
      status = EXIT_FAIL;
      break;
    }
    cJSON *doc = cJSON_ParseWithLength(text, len);
    free(text);
    const cJSON *results = cJSON_GetObjectItemCaseSensitive(doc, "results");
    const cJSON *devices = cJSON_GetObjectItemCaseSensitive(doc, "devices");
    if (!doc || strcmp(str_of(doc, "tool"), "nxvk bench") != 0 || !cJSON_IsArray(results) || !cJSON_IsArray(devices)) {
      fprintf(stderr, "nxvk: error: bench compare: %s is not a report of 'nxvk bench --json'%s\n", files[f],
              doc ? "" : " (not JSON)");
      cJSON_Delete(doc);
      status = EXIT_USAGE;
      break;
    }
    const cJSON *dev;
    cJSON_ArrayForEach(dev, devices) {
      int index = (int)num_of(dev, "index");
      column *cp = realloc(cols, (size_t)(ncols + 1) * sizeof *cp);
      nxvk_device_info *dp = realloc(rep.devices, (size_t)(ncols + 1) * sizeof *dp);
      if (cp) cols = cp;
      if (dp) rep.devices = dp;
      if (!cp || !dp) {
        status = cli_engine_error(NXVK_E_NO_MEMORY);
        break;
      }
      column *c = &cols[ncols];
      c->file = f;
      c->device = index;
      snprintf(c->label, sizeof c->label, "[%d]", ncols + 1);
      snprintf(c->what, sizeof c->what, "%s: device %d, %s (%s %s), %s", files[f], index, str_of(dev, "name"),
               str_of(dev, "driver_name"), str_of(dev, "driver_info"), str_of(doc, "date"));
      memset(&rep.devices[ncols], 0, sizeof rep.devices[ncols]);
      rep.devices[ncols].index = ncols;
      snprintf(rep.devices[ncols].name, sizeof rep.devices[ncols].name, "%s", str_of(dev, "name"));
      const cJSON *res;
      cJSON_ArrayForEach(res, results) {
        if ((int)num_of(res, "device") != index) continue;
        bench_row *r = bench_add_row(&rep);
        if (!r) {
          status = cli_engine_error(NXVK_E_NO_MEMORY);
          break;
        }
        if (!row_from_json(res, ncols, r)) rep.nrows--; /* a mode this version does not know */
      }
      ncols++;
      rep.ndevices = ncols;
    }
    cJSON_Delete(doc);
  }
  if (status == EXIT_OK && ncols < 2) {
    fprintf(stderr, "nxvk: error: bench compare: %d device report(s) in %d file(s): give two or more to compare\n",
            ncols, nfiles);
    status = EXIT_USAGE;
  }
  if (status == EXIT_OK) {
    printf("nxvk bench compare: %d runs side by side\n", ncols);
    for (int c = 0; c < ncols; c++) printf("  %s %s\n", cols[c].label, cols[c].what);
    printf("x[1]: how many times [1]'s speed this run reaches (its GFLOPS or GB/s over [1]'s, or [1]'s\n"
           "time over its time): above 1 faster than [1], below 1 slower; '-' where it has no such\n"
           "measurement\n");
    print_table(&rep, cols, ncols);
    labels = calloc((size_t)ncols, sizeof *labels);
    if (!labels) status = cli_engine_error(NXVK_E_NO_MEMORY);
  }
  if (status == EXIT_OK && plot_path) {
    for (int c = 0; c < ncols; c++) labels[c] = cols[c].label;
    rep.column_labels = labels;
    status = bench_write_plot(plot_path, &rep);
  }
  free(labels);
  free(cols);
  rep.column_labels = NULL;
  bench_report_free(&rep);
  return status;
}
