/*
 * bench.h - what the files of `nxvk bench` share (src/cmd_bench.c and
 * src/cli/bench_*.c).  Front-end code: it sees the engine only through
 * nxvk.h.
 *
 * A run fills a bench_report: one bench_row per measurement and one
 * bench_skip per thing it chose not to (or could not) measure, so nothing is
 * left out silently.  The table is printed as rows come in; JSON, CSV and
 * SVG are written from the report at the end, and only when every check
 * passed.
 */
#ifndef NXVK_BENCH_H
#define NXVK_BENCH_H

#include <math.h>
#include <pthread.h>

#include "cli.h"

enum { BENCH_MAX_LIST = 64 };
#define BENCH_CHECK_FULL_MAX ((int64_t)4 << 20)  /* elements checked in full */
#define BENCH_CHECK_SLICE ((int64_t)64 << 10)    /* elements checked above that */
#define BENCH_CHECK_REF_OPS ((int64_t)1 << 27)   /* reference work per check: elements or multiply-adds */

typedef struct bench_opts {
  const char *mode;                     /* ops matmul peak all concurrency */
  bool sizes_given, dtypes_given;
  const nxvk_op_desc *ops[BENCH_MAX_LIST];
  int nops;
  int64_t sizes[BENCH_MAX_LIST];        /* the --sizes list as given */
  int nsizes;
  int64_t shapes[BENCH_MAX_LIST][4];    /* --shapes: batch (0: none), m, k, n */
  int nshapes;
  const char *variants;                 /* --variant: comma list, NULL = every one */
  nxvk_dtype dtypes[NXVK_NDTYPES];
  int ndtypes;
  double min_time;                      /* seconds */
  double warmup;                        /* seconds of untimed GPU runs first */
  long repeat;                          /* 0: until min_time */
  double cpu_limit;                     /* seconds one CPU-reference run may take */
  int64_t peak_bytes;                   /* 0: chosen from the device */
  int clients;                          /* concurrency: port clients (--clients) */
  bool progress;                        /* stderr is a terminal */
  bool idle_gpu;                        /* --idle-gpu: no bench_busy thread */
  const char *sweep;                    /* --sweep FILE: matmul products again under each line's knobs */
  int fill;                             /* --fill: BENCH_FILL_* (ops: the float operands' values) */
} bench_opts;

/* --fill: the case maker's timing values (floats in [0.5, 1.5)), standard
 * normal values, or every finite bit pattern alike (16-bit floats: every
 * one of the 65 536 but NaN) */
enum { BENCH_FILL_TIMING, BENCH_FILL_NORMAL, BENCH_FILL_BITS };

/* Times in nanoseconds. */
typedef struct bench_stat {
  bool have;
  double median, min, max;
  int repeats;
} bench_stat;

typedef struct bench_row {
  int device;
  const char *mode;                     /* "ops" "matmul" "peak" */
  char name[32];                        /* op, or fma copy h2d d2h latency */
  char variant[16];                     /* dot variant, scalar/vec4, or "" */
  const char *dtype;                    /* "f32", or "" */
  int64_t size;                         /* elements (ops), n (matmul), bytes (peak) */
  nxvk_shape shape;                     /* first operand (ops, matmul) */
  char dims[64];                        /* shapes rows: "MxKxN" or "BxMxKxN" */
  double bytes, flops;                  /* per run; 0 when not meaningful */
  bench_stat gpu;                       /* timestamps around the dispatch */
  bench_stat e2e;                       /* wall clock (CLOCK_MONOTONIC) */
  bench_stat cpu;                       /* the CPU reference */
  double gbps, gflops, gflops_min, gflops_max, speedup, speedup_e2e, pct_peak; /* NAN: none */
  double latency_us;                    /* latency row only */
  double ops_per_s;                     /* concurrency rows: ops completed per second; else 0 */
  char check[64];                       /* how the result was checked */
  double max_abs, max_ulp;              /* NAN when the check has no such figure */
  char note[192];
} bench_row;

typedef struct bench_skip {
  int device;
  const char *mode;
  char name[32];
  const char *dtype;
  int64_t size;
  char reason[224];
} bench_skip;

typedef struct bench_report {
  bench_row *rows;
  int nrows, caprows;
  bench_skip *skips;
  int nskips, capskips;
  nxvk_device_info *devices;            /* one per device measured */
  int ndevices;
  char *command;                        /* the command line as typed */
  char date[32];                        /* ISO 8601 UTC */
  bool gpu_kept_busy;                   /* bench_busy's thread ran (a GPU) */
  /* bench compare: rows' device is a column (a device of one file), and
   * plots name their series by these ("[1]", "[2]"); NULL otherwise */
  const char *const *column_labels;
} bench_report;

/* One device's run. */
typedef struct bench_ctx {
  const bench_opts *o;
  nxvk_ctx *ctx;
  nxvk_device_info info;
  int device;
  bench_report *rep;
  double peak_fma[NXVK_NDTYPES];        /* GFLOPS, best variant; 0 = not measured */
  double peak_copy_gbps;                /* 0 = not measured */
  uint64_t rng;
} bench_ctx;

/* bench_peak.c: metadata for the FMA kernel (peak_fma.comp): its
 * recurrence's constants, whether the result is stored, the sentinel. */
void bench_fma_meta(uint32_t meta[4], bool store);

/* bench_busy.c: on a GPU, a thread that keeps one workgroup of work
 * running while the bench does host work, so timed runs start at a loaded
 * GPU's clock; bench_repeat pauses it for GPU timings.  Not started on CPU
 * devices (*started false); the others are no-ops then. */
typedef struct bench_busy bench_busy;
int bench_busy_start(nxvk_ctx *c, const nxvk_device_info *info, bool *started);
void bench_busy_pause(void);
void bench_busy_resume(void);
void bench_busy_stop(void);

/* bench_busy.c: the start gate of a timed run of several threads (bench
 * concurrency's threads and port clients).  Each thread, done with its
 * untimed first op, calls bench_gate_arrive, which returns once the run
 * starts; the main thread calls bench_gate_start with the number of threads
 * started: it waits for all of them, pauses the busy kernel, calls
 * at_start(arg) (NULL: none) and releases them with deadline_ns = t0 +
 * seconds (t0 itself when !run: they stop at once), returning t0. */
typedef struct {
  pthread_mutex_t lock;
  pthread_cond_t ready_cond, go_cond;
  int ready;
  bool go;
  double deadline_ns;
} bench_gate;
void bench_gate_init(bench_gate *g);
void bench_gate_destroy(bench_gate *g);
void bench_gate_arrive(bench_gate *g);
double bench_gate_start(bench_gate *g, int started, double seconds, bool run, void (*at_start)(void *),
                        void *arg);

/* bench_measure.c: timing, inputs, checks and the ops/matmul modes.
 * bench_ops/bench_matmul/bench_peak return 0 or an exit status after
 * printing its error; bench_repeat returns an engine code (NXVK_E_*). */
typedef int (*bench_fn)(void *arg, double *ns);
/* warmups calls (and, for gpu, --warmup seconds of them when warmups > 0),
 * then timed calls until --repeat or --min-time. */
int bench_repeat(const bench_opts *o, int warmups, bool gpu, bench_fn fn, void *arg, bench_stat *st);
void bench_fill_random(bench_ctx *b, nxvk_host *h);
void bench_progress(const bench_ctx *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void bench_progress_done(const bench_ctx *b);
int bench_ops(bench_ctx *b);
int bench_matmul(bench_ctx *b);
/* The problem `bench ops` builds for op at size n, without data: false with
 * why when bench cannot choose operands for it. */
bool bench_ops_plan_ok(const nxvk_op_desc *op, nxvk_dtype d, char *why, size_t len);

/* bench_concurrency.c: `bench concurrency`: 1K-element adds end to end
 * from 1, 16 and 100 threads on one context, ops/s. */
int bench_concurrency(bench_ctx *b);
/* bench_port.c: 1K adds from `clients` port processes; a put and get of `bytes` through one */
int bench_port_clients(bench_ctx *b, int clients);
int bench_port_transfer(bench_ctx *b, int64_t bytes);

/* bench_peak.c: `bench peak`; fma_only for the matmul percentage. */
int bench_peak(bench_ctx *b, bool fma_only);
/* `bench transfers`: peak's h2d and d2h rows only (tuning the transfer knobs). */
int bench_peak_transfers(bench_ctx *b);

/* bench_output.c */
bench_row *bench_add_row(bench_report *r);
void bench_add_skip(bench_ctx *b, const char *mode, const char *name, const char *dtype, int64_t size,
                    const char *fmt, ...) __attribute__((format(printf, 6, 7)));
void bench_report_free(bench_report *r);
void bench_fmt_time(char *buf, size_t len, double ns);   /* "12.3 us" */
void bench_fmt_count(char *buf, size_t len, int64_t n);  /* "16M", "1000" */
/* Tables on stdout: a header per mode, a row per measurement as it comes,
 * then notes for what was skipped or measured another way. */
void bench_print_header(const char *mode);
void bench_print_row(const bench_row *r);
void bench_print_notes(const bench_report *r, int first_row, int first_skip);
int bench_write_json(const char *path, const bench_report *r, const bench_opts *o);
int bench_write_csv(const char *path, const bench_report *r);
int bench_write_plot(const char *path, const bench_report *r);

/* bench_compare.c: `nxvk bench compare A.json B.json ...`: the same
 * measurements of several --json reports side by side with ratios, and
 * with plot_path an SVG of them.  Returns the exit status. */
int bench_compare(int nfiles, char **files, const char *plot_path);

#endif
