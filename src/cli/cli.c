/* cli.c - option parsing with usage generated from the option tables. */
#include "cli.h"

#include <cjson/cJSON.h>

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void cli_print_usage(FILE *f, const nxvk_usage *u, const nxvk_option *opts) {
  for (int i = 0; u->synopsis[i]; i++)
    fprintf(f, "%s nxvk %s %s\n", i ? "      " : "usage:", u->name, u->synopsis[i]);
  fprintf(f, "\n%s\n", u->summary);
  if (opts && opts[0].name) fprintf(f, "\noptions:\n");
  for (int i = 0; opts && opts[i].name; i++) {
    char left[64];
    const nxvk_option *o = &opts[i];
    if (o->short_name)
      snprintf(left, sizeof left, "-%c, --%s%s%s", o->short_name, o->name, o->arg ? " " : "",
               o->arg ? o->arg : "");
    else
      snprintf(left, sizeof left, "    --%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
    fprintf(f, "  %-26s %s\n", left, o->help);
  }
  fprintf(f, "  %-26s %s\n", "-h, --help", "show this help");
}

int cli_usage_error(const nxvk_usage *u, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "nxvk: error: ");
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, " (see 'nxvk %s --help')\n", u->name);
  return EXIT_USAGE;
}

int cli_engine_error(int code) {
  fprintf(stderr, "nxvk: error: %s\n", nxvk_errmsg());
  return nxvk_err_exit_status(code);
}

/* Optimal string alignment distance (an adjacent swap counts one): the
 * measure of "did you mean" (git's help.c suggests the same way). */
int cli_edit_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 64 || lb > 64) return 1 << 20;
  int d[65][65];
  for (size_t i = 0; i <= la; i++) d[i][0] = (int)i;
  for (size_t j = 0; j <= lb; j++) d[0][j] = (int)j;
  for (size_t i = 1; i <= la; i++)
    for (size_t j = 1; j <= lb; j++) {
      int cost = a[i - 1] != b[j - 1];
      int v = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
      if (d[i - 1][j - 1] + cost < v) v = d[i - 1][j - 1] + cost;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
        v = d[i - 2][j - 2] + 1;
      d[i][j] = v;
    }
  return d[la][lb];
}

const char *cli_nearest(const char *typed, const char *const *cands, int n) {
  size_t len = strlen(typed);
  int limit = len <= 3 ? 1 : len <= 6 ? 2 : 3, best = limit + 1;
  const char *pick = NULL;
  for (int i = 0; i < n; i++) {
    int dist = cli_edit_distance(typed, cands[i]);
    /* a cut-off name ("conf" for "conformance") is as near as one typo */
    if (len >= 3 && strncmp(cands[i], typed, len) == 0 && dist > 1) dist = 1;
    if (dist < best) {
      best = dist;
      pick = cands[i];
    }
  }
  return pick;
}

/* " ; did you mean '--json'?" for an unknown long option, else "". */
static const char *option_hint(const nxvk_option *opts, const char *typed, size_t len) {
  static char hint[96];
  const char *names[128];
  char word[64];
  int n = 0;
  for (int i = 0; opts && opts[i].name && n < 127; i++) names[n++] = opts[i].name;
  names[n++] = "help";
  snprintf(word, sizeof word, "%.*s", (int)(len < sizeof word ? len : sizeof word - 1), typed);
  const char *near = cli_nearest(word, names, n);
  hint[0] = '\0';
  if (near) snprintf(hint, sizeof hint, "; did you mean '--%s'?", near);
  return hint;
}

static const nxvk_option *find_long(const nxvk_option *opts, const char *name, size_t len) {
  for (int i = 0; opts && opts[i].name; i++)
    if (strlen(opts[i].name) == len && strncmp(opts[i].name, name, len) == 0) return &opts[i];
  return NULL;
}

static const nxvk_option *find_short(const nxvk_option *opts, char c) {
  for (int i = 0; opts && opts[i].name; i++)
    if (opts[i].short_name == c) return &opts[i];
  return NULL;
}

static int set_value(const nxvk_usage *u, const nxvk_option *o, const char *arg) {
  char *end;
  switch (o->type) {
  case OPT_FLAG:
  case OPT_VALIDATE: *(bool *)o->value = true; return 0;
  case OPT_STRING:
  case OPT_DEVICE: *(const char **)o->value = arg; return 0;
  case OPT_INT: { /* strictly: an optional '-' and digits, in range */
    errno = 0;
    bool digits = (arg[0] >= '0' && arg[0] <= '9') || (arg[0] == '-' && arg[1] >= '0' && arg[1] <= '9');
    long v = digits ? strtol(arg, &end, 10) : 0;
    if (!digits || *end) return cli_usage_error(u, "--%s: '%s' is not an integer", o->name, arg);
    if (errno == ERANGE) return cli_usage_error(u, "--%s: '%s' is out of range", o->name, arg);
    *(long *)o->value = v;
    return 0;
  }
  case OPT_DOUBLE: { /* a finite decimal number: no "nan", "inf" or leading space */
    errno = 0;
    bool start = (arg[0] >= '0' && arg[0] <= '9') || arg[0] == '.' ||
                 (arg[0] == '-' && ((arg[1] >= '0' && arg[1] <= '9') || arg[1] == '.'));
    double v = start ? strtod(arg, &end) : 0;
    if (!start || *end || !isfinite(v)) return cli_usage_error(u, "--%s: '%s' is not a number", o->name, arg);
    *(double *)o->value = v;
    return 0;
  }
  }
  return 0;
}

static bool takes_arg(const nxvk_option *o) {
  return o->type != OPT_FLAG && o->type != OPT_VALIDATE;
}

static cli_table_hook table_hook;
static void *table_hook_arg;

void cli_set_table_hook(cli_table_hook fn, void *arg) {
  table_hook = fn;
  table_hook_arg = arg;
}

int cli_parse(int argc, char **argv, const nxvk_usage *u, const nxvk_option *opts, int *npos) {
  if (table_hook) {
    table_hook(table_hook_arg, u, opts);
    return -1;
  }
  int n = 0;
  bool only_pos = false;
  for (int i = 1; i < argc; i++) {
    char *a = argv[i];
    if (only_pos || a[0] != '-' || a[1] == '\0' || (a[0] == '-' && a[1] != '-' && a[1] >= '0' && a[1] <= '9')) {
      argv[n++] = a;
      continue;
    }
    if (strcmp(a, "--") == 0) {
      only_pos = true;
      continue;
    }
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      cli_print_usage(stdout, u, opts);
      return -1;
    }
    const nxvk_option *o;
    const char *val = NULL;
    if (a[1] == '-') {
      const char *eq = strchr(a + 2, '=');
      size_t len = eq ? (size_t)(eq - (a + 2)) : strlen(a + 2);
      o = find_long(opts, a + 2, len);
      if (!o) return cli_usage_error(u, "unknown option '%.*s'%s", (int)len + 2, a, option_hint(opts, a + 2, len));
      if (eq) {
        if (!takes_arg(o)) return cli_usage_error(u, "--%s takes no value", o->name);
        val = eq + 1;
      }
    } else {
      o = find_short(opts, a[1]);
      /* "-json" for "--json" */
      if (a[2] && (!o || !takes_arg(o)) && find_long(opts, a + 1, strlen(a + 1)))
        return cli_usage_error(u, "unknown option '%s'; did you mean '-%s'?", a, a);
      if (!o) return cli_usage_error(u, "unknown option '%.2s'", a);
      /* a short option's value may follow it directly: -oFILE */
      if (a[2]) {
        if (!takes_arg(o)) return cli_usage_error(u, "-%c (--%s) takes no value ('%s')", a[1], o->name, a);
        val = a + 2;
      }
    }
    if (takes_arg(o) && !val) {
      if (i + 1 >= argc) return cli_usage_error(u, "--%s needs a value (%s)", o->name, o->arg);
      val = argv[++i];
    }
    int rc = set_value(u, o, val);
    if (rc) return rc;
  }
  *npos = n;
  return 0;
}

int cli_write_with(const char *opt, const char *path, int (*fn)(FILE *f, const void *arg), const void *arg) {
  nxvk_out *o;
  int rc = nxvk_out_open(path, 0, &o);
  if (rc == NXVK_OK && fn(nxvk_out_stream(o), arg) != 0) {
    /* a write that failed (ENOSPC on a device) says so at the flush */
    rc = nxvk_out_finish(o);
    nxvk_out_abort(o);
    if (rc == NXVK_OK) {
      fprintf(stderr, "nxvk: error: %s %s: cannot format the report\n", opt, path);
      return EXIT_FAIL;
    }
    fprintf(stderr, "nxvk: error: %s: %s\n", opt, nxvk_errmsg());
    return nxvk_err_exit_status(rc);
  }
  if (rc == NXVK_OK) rc = nxvk_out_commit(o);
  if (rc == NXVK_OK) return EXIT_OK;
  fprintf(stderr, "nxvk: error: %s: %s\n", opt, nxvk_errmsg());
  return nxvk_err_exit_status(rc);
}

static int text_writer(FILE *f, const void *arg) {
  return fputs(arg, f) < 0 || fputc('\n', f) == EOF ? -1 : 0;
}

int cli_write_text(const char *opt, const char *path, const char *text) {
  return cli_write_with(opt, path, text_writer, text);
}

int cli_ctx(nxvk_cli *cli, nxvk_ctx **out) {
  if (!cli->ctx) {
    nxvk_ctx_opts o = {.device = cli->device, .validate = cli->validate, .no_cache = cli->no_cache};
    int rc = nxvk_ctx_open(&o, &cli->ctx);
    if (rc) return rc;
  }
  *out = cli->ctx;
  return NXVK_OK;
}

/* Names of the bits set in a VkQueueFlags / VkMemoryPropertyFlags value,
 * as info shows them; an unnamed bit as "0xN". */
static const struct { uint32_t bit; const char *name; } queue_bits[] = {
    {0x1, "graphics"}, {0x2, "compute"}, {0x4, "transfer"}, {0x8, "sparse_binding"},
    {0x10, "protected"}, {0x20, "video_decode"}, {0x40, "video_encode"}, {0x100, "optical_flow"}};
static const struct { uint32_t bit; const char *name; } memory_bits[] = {
    {0x1, "device_local"}, {0x2, "host_visible"}, {0x4, "host_coherent"}, {0x8, "host_cached"},
    {0x10, "lazily_allocated"}, {0x20, "protected"}, {0x40, "device_coherent_amd"},
    {0x80, "device_uncached_amd"}, {0x100, "rdma_capable_nv"}};

#define FLAG_NAMES(table, flags, fn, arg)                                      \
  do {                                                                         \
    uint32_t left_ = (flags);                                                  \
    for (size_t i_ = 0; i_ < sizeof table / sizeof table[0]; i_++)             \
      if (left_ & table[i_].bit) {                                             \
        fn(arg, table[i_].name);                                               \
        left_ &= ~table[i_].bit;                                               \
      }                                                                        \
    for (int b_ = 0; b_ < 32; b_++)                                            \
      if (left_ & (1u << b_)) {                                                \
        char hex_[16];                                                         \
        snprintf(hex_, sizeof hex_, "0x%x", 1u << b_);                         \
        fn(arg, hex_);                                                         \
      }                                                                        \
  } while (0)

static void add_name_json(cJSON *arr, const char *name) { cJSON_AddItemToArray(arr, cJSON_CreateString(name)); }
static void add_name_text(char *buf, const char *name) {
  size_t at = strlen(buf);
  snprintf(buf + at, 256 - at, "%s%s", at ? " " : "", name);
}

void cli_queue_flags_text(uint32_t flags, char buf[256]) {
  buf[0] = '\0';
  FLAG_NAMES(queue_bits, flags, add_name_text, buf);
}

void cli_memory_flags_text(uint32_t flags, char buf[256]) {
  buf[0] = '\0';
  FLAG_NAMES(memory_bits, flags, add_name_text, buf);
}

static void add_uuid(cJSON *o, const char *key, const uint8_t *u, bool have) {
  if (!have) {
    cJSON_AddNullToObject(o, key);
    return;
  }
  char hex[40];
  for (int i = 0; i < 16; i++) snprintf(hex + 2 * i, 3, "%02x", u[i]);
  cJSON_AddStringToObject(o, key, hex);
}

/* Each item of a list (items apart by sep) as a string of the array arr,
 * an item cut at 255 bytes. */
static void add_items(cJSON *arr, const char *list, const char *sep) {
  size_t n = strlen(sep);
  for (const char *p = list; *p;) {
    const char *end = strstr(p, sep);
    size_t len = end ? (size_t)(end - p) : strlen(p);
    char one[256];
    snprintf(one, sizeof one, "%.*s", (int)(len < sizeof one ? len : sizeof one - 1), p);
    cJSON_AddItemToArray(arr, cJSON_CreateString(one));
    p += len + (end ? n : 0);
  }
}

/* The device record of `info --json`, which every JSON report embeds. */
cJSON *cli_device_json(const nxvk_device_info *d) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "index", d->index);
  cJSON_AddStringToObject(o, "name", d->name);
  cJSON_AddStringToObject(o, "vendor", d->vendor);
  cJSON_AddNumberToObject(o, "vendor_id", d->vendor_id);
  cJSON_AddNumberToObject(o, "device_id", d->device_id);
  cJSON_AddStringToObject(o, "type", d->type);
  cJSON_AddStringToObject(o, "driver_name", d->driver_name);
  cJSON_AddStringToObject(o, "driver_info", d->driver_info);
  cJSON_AddStringToObject(o, "driver_version", d->driver_version);
  cJSON_AddStringToObject(o, "api_version", d->api_version);
  char uuid[40];
  for (int i = 0; i < 16; i++) snprintf(uuid + 2 * i, 3, "%02x", d->pipeline_cache_uuid[i]);
  cJSON_AddStringToObject(o, "pipeline_cache_uuid", uuid);
  add_uuid(o, "device_uuid", d->device_uuid, d->has_ids);
  add_uuid(o, "driver_uuid", d->driver_uuid, d->has_ids);
  if (d->driver_id) {
    cJSON_AddNumberToObject(o, "driver_id", d->driver_id);
    cJSON_AddStringToObject(o, "driver_id_name", d->driver_id_name);
  } else {
    cJSON_AddNullToObject(o, "driver_id");
    cJSON_AddNullToObject(o, "driver_id_name");
  }
  if (d->conformance_version[0]) cJSON_AddStringToObject(o, "conformance_version", d->conformance_version);
  else cJSON_AddNullToObject(o, "conformance_version");
  cJSON *qfs = cJSON_AddArrayToObject(o, "queue_families");
  for (int i = 0; i < d->queue_family_count; i++) {
    cJSON *q = cJSON_CreateObject();
    cJSON_AddNumberToObject(q, "index", i);
    cJSON *fl = cJSON_AddArrayToObject(q, "flags");
    FLAG_NAMES(queue_bits, d->queue_families[i].flags, add_name_json, fl);
    cJSON_AddNumberToObject(q, "count", d->queue_families[i].count);
    cJSON_AddNumberToObject(q, "timestamp_valid_bits", d->queue_families[i].timestamp_valid_bits);
    cJSON_AddItemToArray(qfs, q);
  }

  cJSON *mem = cJSON_AddObjectToObject(o, "memory");
  cJSON_AddBoolToObject(mem, "budget_available", d->has_budget);
  cJSON *heaps = cJSON_AddArrayToObject(mem, "heaps");
  for (int i = 0; i < d->heap_count; i++) {
    cJSON *h = cJSON_CreateObject();
    cJSON_AddNumberToObject(h, "size", (double)d->heaps[i].size);
    cJSON_AddBoolToObject(h, "device_local", d->heaps[i].device_local);
    if (d->has_budget) {
      cJSON_AddNumberToObject(h, "budget", (double)d->heaps[i].budget);
      cJSON_AddNumberToObject(h, "usage", (double)d->heaps[i].usage);
    } else {
      cJSON_AddNullToObject(h, "budget");
      cJSON_AddNullToObject(h, "usage");
    }
    cJSON_AddItemToArray(heaps, h);
  }
  cJSON *types = cJSON_AddArrayToObject(mem, "types");
  for (int i = 0; i < d->memory_type_count; i++) {
    cJSON *t = cJSON_CreateObject();
    cJSON_AddNumberToObject(t, "index", i);
    cJSON_AddNumberToObject(t, "heap", d->memory_types[i].heap);
    cJSON *fl = cJSON_AddArrayToObject(t, "flags");
    FLAG_NAMES(memory_bits, d->memory_types[i].flags, add_name_json, fl);
    cJSON_AddItemToArray(types, t);
  }

  cJSON *l = cJSON_AddObjectToObject(o, "limits");
  cJSON_AddItemToObject(l, "max_workgroup_size",
                        cJSON_CreateIntArray((const int[]){(int)d->max_workgroup_size[0],
                                                           (int)d->max_workgroup_size[1],
                                                           (int)d->max_workgroup_size[2]}, 3));
  cJSON_AddNumberToObject(l, "max_workgroup_invocations", d->max_workgroup_invocations);
  cJSON_AddItemToObject(l, "max_workgroup_count",
                        cJSON_CreateDoubleArray((const double[]){d->max_workgroup_count[0],
                                                                 d->max_workgroup_count[1],
                                                                 d->max_workgroup_count[2]}, 3));
  cJSON_AddNumberToObject(l, "max_shared_memory", d->max_shared_memory);
  cJSON_AddNumberToObject(l, "max_push_constants", d->max_push_constants);
  cJSON_AddNumberToObject(l, "max_storage_buffer_range", (double)d->max_storage_buffer_range);
  cJSON_AddNumberToObject(l, "max_allocation_size", (double)d->max_allocation_size);
  cJSON_AddNumberToObject(l, "subgroup_size", d->subgroup_size);
  cJSON_AddNumberToObject(l, "min_subgroup_size", d->min_subgroup_size);
  cJSON_AddNumberToObject(l, "max_subgroup_size", d->max_subgroup_size);
  if (d->compute_units) cJSON_AddNumberToObject(l, "compute_units", d->compute_units);
  else cJSON_AddNullToObject(l, "compute_units"); /* only vendor extensions say */
  cJSON_AddNumberToObject(l, "timestamp_period_ns", d->timestamp_period_ns);
  cJSON_AddNumberToObject(l, "timestamp_valid_bits", d->timestamp_valid_bits);

  cJSON *f = cJSON_AddObjectToObject(o, "features");
  cJSON_AddBoolToObject(f, "f64", d->f64);
  cJSON_AddBoolToObject(f, "f16", d->f16);
  cJSON_AddBoolToObject(f, "int64", d->int64);
  cJSON_AddBoolToObject(f, "int16", d->int16);
  cJSON_AddBoolToObject(f, "int8", d->int8);
  cJSON_AddBoolToObject(f, "storage_8bit", d->storage_8bit);
  cJSON_AddBoolToObject(f, "storage_16bit", d->storage_16bit);
  cJSON_AddBoolToObject(f, "timestamps", d->timestamps);
  cJSON_AddBoolToObject(f, "push_descriptor", d->push_descriptor);
  cJSON_AddBoolToObject(f, "cooperative_matrix_nv", d->coop_matrix_nv);
  cJSON_AddBoolToObject(f, "cooperative_matrix_khr", d->coop_matrix_khr);
  cJSON_AddBoolToObject(f, "vulkan_memory_model", d->vulkan_memory_model);
  cJSON_AddBoolToObject(f, "coopmat_f16_f32", d->coopmat_f16_f32);
  cJSON_AddBoolToObject(f, "coopmat_bf16_f32", d->coopmat_bf16_f32);
  cJSON_AddBoolToObject(f, "coopmat_khr_f16", d->coopmat_khr_f16);
  add_items(cJSON_AddArrayToObject(f, "cooperative_matrix_shapes"), d->coop_shapes, ", ");

  cJSON *fc = cJSON_AddObjectToObject(o, "float_controls");
  cJSON_AddBoolToObject(fc, "available", d->float_controls);
  cJSON_AddBoolToObject(fc, "denorm_preserve_f32", d->denorm_preserve_f32);
  cJSON_AddBoolToObject(fc, "denorm_preserve_f64", d->denorm_preserve_f64);
  cJSON_AddBoolToObject(fc, "denorm_flush_f32", d->denorm_flush_f32);
  cJSON_AddBoolToObject(fc, "denorm_flush_f64", d->denorm_flush_f64);
  cJSON_AddBoolToObject(fc, "signed_zero_inf_nan_preserve_f32", d->signed_zero_inf_nan_f32);
  cJSON_AddBoolToObject(fc, "signed_zero_inf_nan_preserve_f64", d->signed_zero_inf_nan_f64);
  cJSON_AddBoolToObject(fc, "denorm_preserve_f16", d->denorm_preserve_f16);
  cJSON_AddBoolToObject(fc, "denorm_flush_f16", d->denorm_flush_f16);
  cJSON_AddBoolToObject(fc, "rounding_mode_rte_f16", d->rte_f16);
  cJSON_AddBoolToObject(fc, "signed_zero_inf_nan_preserve_f16", d->signed_zero_inf_nan_f16);
  add_items(cJSON_AddArrayToObject(o, "extensions"), d->extensions, " ");
  return o;
}


/* Validation messages are failures: report them after the command ran. */
int cli_close_device(nxvk_cli *cli, int status) {
  if (!cli->ctx) return status;
  char *report = NULL;
  if (nxvk_env_flag("NXVK_KERNEL_STATS") && nxvk_kernel_stats_report(cli->ctx, &report) == NXVK_OK) {
    fprintf(stderr, "nxvk: kernels built (NXVK_KERNEL_STATS):\n%s", report);
    free(report);
  }
  nxvk_stats st;
  nxvk_ctx_stats(cli->ctx, &st);
  if (st.validation_messages > 0) {
    char last[512];
    nxvk_ctx_last_validation(cli->ctx, last, sizeof last);
    fprintf(stderr, "nxvk: error: %llu Vulkan validation message(s); last: %s\n",
            (unsigned long long)st.validation_messages, last);
    if (status == EXIT_OK) status = EXIT_FAIL;
  }
  /* every command frees what it made: a tensor still alive is a bug */
  if (st.live_tensors > 0) {
    fprintf(stderr, "nxvk: error: %llu tensor(s) not freed at exit (internal bug)\n",
            (unsigned long long)st.live_tensors);
    if (status == EXIT_OK) status = EXIT_FAIL;
  }
  nxvk_ctx_close(cli->ctx);
  cli->ctx = NULL;
  return status;
}

