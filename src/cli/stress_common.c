/*
 * stress_common.c - the report, the random stream, generic op cases and the
 * memory probes shared by the modes of `nxvk stress`.
 *
 * Cases are built from an op's table row only (kind, arity, dtypes,
 * accepted attributes), so a new op is stressed without touching this file
 * unless it brings a new kind of attribute.
 */
#include "stress_common.h"

#include "cases.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ report */

void report_init(stress_report *r, const char *mode) {
  memset(r, 0, sizeof *r);
  r->mode = mode;
  r->figures = cJSON_CreateObject();
}

void report_free(stress_report *r) {
  cJSON_Delete(r->figures);
  r->figures = NULL;
}

static const char *check_word(check_status st) {
  return st == CHECK_PASS ? "ok" : st == CHECK_FAIL ? "FAIL" : "unchecked";
}

void report_check(stress_report *r, check_status st, const char *name, const char *fmt, ...) {
  stress_check *k = r->nchecks < STRESS_MAX_CHECKS ? &r->checks[r->nchecks++] : NULL;
  char detail[sizeof k->detail];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  if (k) {
    snprintf(k->name, sizeof k->name, "%s", name);
    k->status = st;
    snprintf(k->detail, sizeof k->detail, "%s", detail);
  } else if (st == CHECK_FAIL) {
    /* never lose a failure to the table's size: fold it into the last slot */
    r->checks[STRESS_MAX_CHECKS - 1].status = CHECK_FAIL;
  }
  printf("  %-9s %s: %s\n", check_word(st), name, detail);
  fflush(stdout);
}

void report_num(stress_report *r, const char *key, double v) {
  cJSON_DeleteItemFromObject(r->figures, key);
  cJSON_AddNumberToObject(r->figures, key, v);
}

void report_str(stress_report *r, const char *key, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  cJSON_DeleteItemFromObject(r->figures, key);
  cJSON_AddStringToObject(r->figures, key, buf);
}

void report_summary(stress_report *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->summary, sizeof r->summary, fmt, ap);
  va_end(ap);
}

void report_note(const char *fmt, ...) {
  va_list ap;
  printf("  %-9s ", "note");
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  printf("\n");
  fflush(stdout);
}

void report_results(stress_report *r, const char *what, long long n, long long wrong, const char *first_wrong,
                    long long refused, long long uncompared, const char *first_uncompared) {
  report_num(r, "compared", (double)(n - refused - uncompared));
  report_num(r, "refused_by_design", (double)refused);
  report_num(r, "not_compared", (double)uncompared);
  report_num(r, "wrong_results", (double)wrong);
  if (wrong)
    report_check(r, CHECK_FAIL, "results", "%lld of %lld %s wrong; first: %s", wrong, n, what, first_wrong);
  else if (n == 0)
    report_check(r, CHECK_FAIL, "results", "no op ran");
  else if (n - refused - uncompared == 0)
    report_check(r, CHECK_UNCHECKED, "results", "no result compared: of %lld %s, %lld refused by design, %lld not "
                 "compared", n, what, refused, uncompared);
  else
    report_check(r, CHECK_PASS, "results",
                 "%lld %s checked against the reference, 0 wrong; %lld error cases by design refused by both "
                 "with their error (error-handling checks)",
                 n - refused - uncompared, what, refused);
  if (uncompared)
    report_check(r, CHECK_UNCHECKED, "compared", "%lld %s not compared (the GPU and the reference both refuse "
                 "a value case); first: %s", uncompared, what, first_uncompared);
}

verdict report_verdict(const stress_report *r, bool strict) {
  bool unchecked = false;
  for (int i = 0; i < r->nchecks; i++) {
    if (r->checks[i].status == CHECK_FAIL) return VERDICT_FAIL;
    if (r->checks[i].status == CHECK_UNCHECKED) unchecked = true;
  }
  if (r->nchecks == 0) return VERDICT_FAIL; /* a mode that checked nothing passed nothing */
  if (unchecked) return strict ? VERDICT_FAIL : VERDICT_PARTIAL;
  return VERDICT_PASS;
}

const char *verdict_name(verdict v) {
  return v == VERDICT_PASS ? "pass" : v == VERDICT_PARTIAL ? "partial" : "FAIL";
}

void report_begin_validation(stress_report *r, nxvk_ctx *c) {
  nxvk_stats st;
  nxvk_ctx_stats(c, &st);
  r->validation_before = st.validation_messages;
}

void report_end_validation(stress_report *r, nxvk_ctx *c) {
  nxvk_stats st;
  nxvk_ctx_stats(c, &st);
  uint64_t n = st.validation_messages - r->validation_before;
  report_num(r, "validation_messages", (double)n);
  if (n) {
    char last[300];
    nxvk_ctx_last_validation(c, last, sizeof last);
    report_check(r, CHECK_FAIL, "validation", "%llu Vulkan validation message(s); last: %s",
                 (unsigned long long)n, last);
  }
}

/* ------------------------------------------------------------------ random */

/* splitmix64: one multiply-xorshift stream per seed; enough for test data */
void rng_seed(stress_rng *r, uint64_t seed) { r->s = seed ^ 0x6a09e667f3bcc909ull; }

uint64_t rng_next(stress_rng *r) { return nxvk_splitmix64(&r->s); }

double rng_unit(stress_rng *r) { return nxvk_rand_unit(&r->s); }

int64_t rng_range(stress_rng *r, int64_t lo, int64_t hi) {
  if (hi <= lo) return lo;
  return lo + (int64_t)(rng_next(r) % (uint64_t)(hi - lo + 1));
}

double now_seconds(void) { return nxvk_now_ns() * 1e-9; }

/* ------------------------------------------------------------ sizes, bytes */

char *fmt_bytes(double b, char *buf, size_t len) {
  const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  double a = fabs(b);
  while (a >= 1024 && u < 4) {
    a /= 1024;
    b /= 1024;
    u++;
  }
  if (u == 0) snprintf(buf, len, "%.0f B", b);
  else snprintf(buf, len, "%.1f %s", b, unit[u]);
  return buf;
}

char *fmt_delta(double b, char *buf, size_t len) {
  char tmp[64];
  fmt_bytes(b, tmp, sizeof tmp);
  snprintf(buf, len, "%s%s", b >= 0 ? "+" : "", tmp);
  return buf;
}

/* ---------------------------------------------------------- memory probes */

void mem_probe_take(nxvk_ctx *c, mem_probe *p) {
  memset(p, 0, sizeof *p);
  nxvk_ctx_stats(c, &p->stats);
  nxvk_device_info info;
  if (nxvk_ctx_device_info(c, &info) == NXVK_OK) {
    bool any_local = false;
    for (int i = 0; i < info.heap_count; i++) any_local |= info.heaps[i].device_local;
    for (int i = 0; i < info.heap_count; i++) {
      if (any_local && !info.heaps[i].device_local) continue;
      p->heap_size += info.heaps[i].size;
      p->heap_usage += info.heaps[i].usage;
      p->heap_budget += info.heaps[i].budget;
    }
    p->has_budget = info.has_budget;
  }
  /* RSS: Linux /proc (and FreeBSD's linprocfs); elsewhere absent, and the
   * report says so instead of passing */
  FILE *f = fopen("/proc/self/statm", "r");
  if (f) {
    unsigned long long size, resident;
    if (fscanf(f, "%llu %llu", &size, &resident) == 2) {
      p->has_rss = true;
      p->rss = resident * (uint64_t)sysconf(_SC_PAGESIZE);
    }
    fclose(f);
  }
  f = fopen("/proc/meminfo", "r");
  if (f) {
    char line[256];
    while (fgets(line, sizeof line, f)) {
      unsigned long long kb;
      if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
        p->has_avail = true;
        p->host_avail = kb * 1024;
      }
    }
    fclose(f);
  }
}

void mem_probe_settle(nxvk_ctx *c, const mem_probe *base, mem_probe *p) {
  mem_probe_take(c, p);
  for (int i = 0; i < 20 && p->has_budget && p->heap_usage > base->heap_usage; i++) {
    struct timespec ts = {0, 100 * 1000 * 1000};
    nanosleep(&ts, NULL);
    mem_probe_take(c, p);
  }
}

/* ------------------------------------------------------------- op cases */

static bool dtype_ok(nxvk_ctx *c, nxvk_dtype d) { return nxvk_ctx_supports(c, d); }

unsigned case_dtypes(nxvk_ctx *c, const nxvk_op_desc *op) {
  unsigned m = 0;
  for (int d = 0; d < NXVK_NDTYPES; d++)
    if ((op->dtypes & NXVK_DT(d)) && dtype_ok(c, (nxvk_dtype)d)) m |= NXVK_DT(d);
  /* u8 results or predicates need 8-bit storage */
  if ((op->kind == NXVK_KIND_COMPARE || op->kind == NXVK_KIND_SELECT) && !dtype_ok(c, NXVK_U8))
    m = 0;
  return m;
}

int case_layouts(const nxvk_op_desc *op) { return cases_layouts(op); }

static void append(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t len, const char *fmt, ...) {
  size_t off = strlen(buf);
  if (off >= len) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + off, len - off, fmt, ap);
  va_end(ap);
}

static void make_label(stress_case *k, nxvk_dtype dt) {
  char s[160];
  snprintf(k->label, sizeof k->label, "%s %s", k->op->name, nxvk_dtype_name(dt));
  for (int i = 0; i < k->nin; i++)
    append(k->label, sizeof k->label, "%s%s", i ? " x " : " ", nxvk_shape_str(&k->in[i].shape, s, sizeof s));
  const nxvk_attrs *a = &k->attrs;
  if (a->set & NXVK_ATTR_SHAPE) append(k->label, sizeof k->label, " shape=%s", nxvk_shape_str(&a->shape, s, sizeof s));
  if (a->set & NXVK_ATTR_AXES) {
    append(k->label, sizeof k->label, " axes=[");
    for (int i = 0; i < a->naxes; i++) append(k->label, sizeof k->label, "%s%d", i ? "," : "", a->axes[i]);
    append(k->label, sizeof k->label, "]");
  }
  if (a->set & NXVK_ATTR_KEEP_AXES) append(k->label, sizeof k->label, " keep_axes");
  if (a->set & NXVK_ATTR_PERM) {
    append(k->label, sizeof k->label, " perm=[");
    for (int i = 0; i < a->nperm; i++) append(k->label, sizeof k->label, "%s%d", i ? "," : "", a->perm[i]);
    append(k->label, sizeof k->label, "]");
  }
  if (a->set & NXVK_ATTR_SLICE)
    append(k->label, sizeof k->label, " start=%lld length=%lld stride=%lld", (long long)a->start[0],
           (long long)a->length[0], (long long)a->stride[0]);
  if (a->set & NXVK_ATTR_AXIS) append(k->label, sizeof k->label, " axis=%d", a->axis);
  if (a->set & NXVK_ATTR_DTYPE) append(k->label, sizeof k->label, " dtype=%s", nxvk_dtype_name(a->dtype));
  if (a->set & NXVK_ATTR_SEED) append(k->label, sizeof k->label, " seed=%llu", (unsigned long long)a->seed);
  if (a->set & NXVK_ATTR_VARIANT) append(k->label, sizeof k->label, " variant=%s", a->variant);
}

void case_free(stress_case *k) {
  for (int i = 0; i < k->nin; i++) nxvk_host_free(&k->in[i]);
  k->nin = 0;
}

int case_build(stress_case *k, nxvk_ctx *c, const nxvk_op_desc *op, nxvk_dtype dt, int64_t n,
               int layout, stress_rng *rng) {
  memset(k, 0, sizeof *k);
  k->op = op;
  unsigned ok = 0;
  for (int d = 0; d < NXVK_NDTYPES; d++)
    if (dtype_ok(c, (nxvk_dtype)d)) ok |= NXVK_DT(d);
  conf_case cc;
  case_req req = {.op = op, .dt = dt, .n = n, .layout = layout, .fill = FILL_SIZED, .dtypes_ok = ok, .seed = rng_next(rng)};
  int rc = cases_one(&req, &cc);
  if (rc == NXVK_E_UNSUPPORTED) {
    snprintf(k->label, sizeof k->label, "%.159s", cc.where);
    return rc;
  }
  k->attrs = cc.attrs;
  k->expect_err = cc.expect_err;
  nxvk_attrs *a = &k->attrs;
  for (int i = 0; i < cc.nin && rc == NXVK_OK; i++) {
    rc = nxvk_host_alloc(&k->in[i], cc.dt[i], &cc.shape[i]);
    if (rc) break;
    k->nin++;
  }
  if (rc == NXVK_OK && cases_fill(NULL, op, &cc, false, rng_next(rng), k->in)) {
    snprintf(k->label, sizeof k->label, "%.159s", cases_err);
    rc = NXVK_E_UNSUPPORTED;
  }
  if (rc) {
    if (rc != NXVK_E_UNSUPPORTED) snprintf(k->label, sizeof k->label, "%s %s: %s", op->name, nxvk_dtype_name(dt), nxvk_errmsg());
    case_free(k);
    return rc;
  }
  /* a kernel variant this device cannot run (dot's coopmat without
   * cooperative matrices, or on f64): the op's default kernel instead */
  if (a->set & NXVK_ATTR_VARIANT) {
    nxvk_meta metas[4];
    for (int i = 0; i < k->nin && i < 4; i++) metas[i] = (nxvk_meta){k->in[i].dtype, k->in[i].shape};
    if (nxvk_op_supported(c, op, a, metas, k->nin) != NXVK_OK) {
      a->set &= ~(unsigned)NXVK_ATTR_VARIANT;
      a->variant[0] = 0;
    }
  }
  make_label(k, dt);
  return NXVK_OK;
}

bool case_run_checked(nxvk_ctx *c, const nxvk_op_desc *op, unsigned m, int64_t n, stress_rng *rng,
                      char *why, size_t len) {
  nxvk_dtype dt = NXVK_F32;
  for (int d = 0; d < NXVK_NDTYPES && !(m & NXVK_DT(dt)); d++)
    if (m & NXVK_DT(d)) dt = (nxvk_dtype)d;
  stress_case k;
  if (case_build(&k, c, op, dt, op->kind == NXVK_KIND_DOT ? 64 : n, 0, rng)) {
    snprintf(why, len, "%s", k.label);
    return false;
  }
  case_result res;
  case_check(c, &k, &res);
  case_free(&k);
  snprintf(why, len, "%s", res.kind == RESULT_OK ? k.label : res.detail);
  return res.kind == RESULT_OK;
}

/* asked once per context: it is not free (it reads the memory budget) */
void stress_device_info(nxvk_ctx *c, nxvk_device_info *out) {
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  static nxvk_ctx *known;
  static nxvk_device_info info;
  pthread_mutex_lock(&lock);
  if (known != c) {
    nxvk_ctx_device_info(c, &info);
    known = c;
  }
  *out = info;
  pthread_mutex_unlock(&lock);
}

/* The result's detail line; longer ones are cut (through vsnprintf, so
 * the compiler does not warn about a truncation we accept). */
static void set_detail(case_result *res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_detail(case_result *res, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(res->detail, sizeof res->detail, fmt, ap);
  va_end(ap);
}

void case_check(nxvk_ctx *c, stress_case *k, case_result *res) {
  memset(res, 0, sizeof *res);
  nxvk_tensor *t[4] = {0}, *out = NULL;
  nxvk_host got = {0}, ref = {0};
  char ref_err[300] = "";
  int rc_ref = nxvk_op_ref(k->op, &k->attrs, k->in, k->nin, &ref);
  if (rc_ref) snprintf(ref_err, sizeof ref_err, "%s", nxvk_errmsg());

  int rc = NXVK_OK, up = 0;
  for (; up < k->nin && rc == NXVK_OK; up++) rc = nxvk_tensor_from_host(c, &k->in[up], &t[up]);
  if (rc) up--; /* t[up] was not made */
  if (rc == NXVK_OK) rc = nxvk_op_run(c, k->op, &k->attrs, t, k->nin, &out);
  if (rc == NXVK_OK && rc_ref == NXVK_OK) rc = nxvk_tensor_to_host(c, out, &got);

  if (rc == NXVK_E_DEVICE_LOST || (rc && nxvk_ctx_lost(c))) {
    res->kind = RESULT_LOST;
    res->code = rc;
    set_detail(res, "%s: device lost: %s", k->label, nxvk_errmsg());
  } else if (rc_ref != NXVK_OK) {
    /* the reference refuses (argmax of nothing): the GPU path must refuse
     * too; as conformance counts them, a refusal by both is an
     * error-handling check where the case is an error by design, else a
     * case not compared (no pass either way) */
    if (rc == rc_ref && rc_ref == k->expect_err) {
      res->kind = RESULT_REFUSED;
      set_detail(res, "%s: an error case by design, refused by both with %s", k->label, nxvk_err_name(rc_ref));
    } else if (rc == rc_ref) {
      res->kind = RESULT_UNCOMPARED;
      set_detail(res, "%s: not compared: the GPU and the reference both refuse it (%s: %s)", k->label,
                 nxvk_err_name(rc_ref), ref_err);
    } else if (rc == NXVK_OK) {
      res->kind = RESULT_WRONG;
      res->bad = 1;
      set_detail(res,
               "%s: the GPU path accepted what the reference refuses (%s: %s)", k->label,
               nxvk_err_name(rc_ref), ref_err);
    } else {
      res->kind = RESULT_ERROR;
      res->code = rc;
      set_detail(res, "%s: GPU path says %s (%s), reference says %s (%s)",
               k->label, nxvk_err_name(rc), nxvk_errmsg(), nxvk_err_name(rc_ref), ref_err);
    }
  } else if (k->expect_err) {
    res->kind = RESULT_WRONG;
    res->bad = 1;
    set_detail(res, "%s: an error case by design (%s expected), but the reference gives a result%s%s", k->label,
               nxvk_err_name(k->expect_err), rc ? " and the GPU fails with " : " and so does the GPU",
               rc ? nxvk_err_name(rc) : "");
  } else if (rc != NXVK_OK) {
    res->kind = RESULT_ERROR;
    res->code = rc;
    set_detail(res, "%s: %s: %s", k->label, nxvk_err_name(rc), nxvk_errmsg());
  } else {
    /* the one judge, with the device's freedom to flush denormals */
    nxvk_device_info info;
    stress_device_info(c, &info);
    nxvk_cmp cmp;
    int crc = nxvk_check(&info, k->op, &k->attrs, k->in, k->nin, &got, &ref, &cmp);
    if (crc) {
      res->kind = RESULT_ERROR;
      res->code = crc;
      set_detail(res, "%s: compare: %s", k->label, nxvk_errmsg());
    } else {
      res->n = cmp.n;
      res->bad = cmp.bad;
      if (cmp.bad) {
        nxvk_limit lim;
        if (nxvk_op_limit(k->op, k->nin ? k->in[k->nin - 1].dtype : got.dtype, &lim)) lim.text[0] = 0;
        res->kind = RESULT_WRONG;
        set_detail(res,
                 "%s: %lld of %lld over the limit (%s); first at [%lld]: got %.9g, want %.9g",
                 k->label, (long long)cmp.bad, (long long)cmp.n, lim.text, (long long)cmp.worst,
                 cmp.worst_got, cmp.worst_ref);
      }
    }
  }
  nxvk_tensor_free(out);
  for (int i = 0; i < up; i++) nxvk_tensor_free(t[i]);
  nxvk_host_free(&got);
  nxvk_host_free(&ref);
}

/* ------------------------------------------------------------- op pools */

int stress_pick_pool(nxvk_ctx *c, const stress_opts *o, const nxvk_op_desc **pool, int max) {
  int n = 0;
  for (int i = 0; i < nxvk_op_count() && n < max; i++) {
    const nxvk_op_desc *op = nxvk_op_at(i);
    if (o->only_op && op != o->only_op) continue;
    bool kind_ok = op->kind == NXVK_KIND_UNARY || op->kind == NXVK_KIND_BINARY ||
                   op->kind == NXVK_KIND_COMPARE || op->kind == NXVK_KIND_SELECT ||
                   op->kind == NXVK_KIND_REDUCE || op->kind == NXVK_KIND_DOT;
    if (!kind_ok && !o->only_op) continue;
    unsigned m = case_dtypes(c, op);
    if (o->only_dtype >= 0) m &= NXVK_DT(o->only_dtype);
    if (m) pool[n++] = op;
  }
  return n;
}
