/*
 * conformance_run.c - the runner of `nxvk conformance` (conformance.h): the
 * cases of every selected op x dtype from the case maker (cases.c), run on
 * the GPU through the public engine API and judged against the CPU reference
 * by nxvk_check() under the op's limit, TAP lines and the summary table.
 */
#include <cjson/cJSON.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"
#include "conformance_fused.h"

static double now_s(void) { return nxvk_now_ns() * 1e-9; }

static uint64_t fnv1a(uint64_t h, const char *s) {
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001B3ull;
  return h;
}

static const char *unsupported_reason(const nxvk_device_info *info, nxvk_dtype d) {
  static char buf[96];
  const char *missing = nxvk_dtype_missing(info, d);
  if (missing) snprintf(buf, sizeof buf, "device has no %s", missing);
  else snprintf(buf, sizeof buf, "device cannot compute %s", nxvk_dtype_name(d));
  return buf;
}

/* Runs op on hosts in[] on the GPU; *got gets the result. */
int conf_gpu_run(nxvk_ctx *ctx, const nxvk_op_desc *op, const nxvk_attrs *a, const nxvk_host *in,
                 int nin, nxvk_host *got) {
  nxvk_tensor *t[CASE_MAX_IN] = {0}, *out = NULL;
  int rc = NXVK_OK, up = 0;
  for (; up < nin && rc == NXVK_OK; up++) rc = nxvk_tensor_from_host(ctx, &in[up], &t[up]);
  if (rc == NXVK_OK) rc = nxvk_op_run(ctx, op, a, t, nin, &out);
  if (rc == NXVK_OK) rc = nxvk_tensor_to_host(ctx, out, got);
  nxvk_tensor_free(out);
  for (int i = 0; i < up; i++) nxvk_tensor_free(t[i]);
  return rc;
}


/* Distribution checks on the GPU's output at a fixed seed: mean, variance
 * and the Kolmogorov-Smirnov distance to the CDF, each against z standard
 * errors (KS: its critical value at ks_alpha). */
static void run_stats(runner *R, const nxvk_op_desc *op, const conf_case *k, case_result *res,
                      nxvk_strbuf *d) {
  const cJSON *ST = cases_jget(R->D->sizes, "statistics"), *cfg = cases_jget(cases_jget(ST, "ops"), op->name);
  const cJSON *dist = cases_jget(cfg, "dist");
  double z = 5, alpha = 0.001, lo = 0, hi = 1, mu = 0, sd = 1;
  cases_jdouble(cases_jget(ST, "z"), &z);
  cases_jdouble(cases_jget(ST, "ks_alpha"), &alpha);
  bool uniform = cJSON_IsString(dist) && strcmp(dist->valuestring, "uniform") == 0;
  bool normal = cJSON_IsString(dist) && strcmp(dist->valuestring, "normal") == 0;
  if ((uniform && (!cases_jdouble(cases_jget(cfg, "lo"), &lo) || !cases_jdouble(cases_jget(cfg, "hi"), &hi))) ||
      (normal && (!cases_jdouble(cases_jget(cfg, "mean"), &mu) || !cases_jdouble(cases_jget(cfg, "sd"), &sd))) ||
      (!uniform && !normal)) {
    res->ok = false;
    snprintf(res->why, sizeof res->why,
             "no distribution recorded for %s in %s statistics.ops (uniform lo hi, or normal mean sd)",
             op->name, SIZE_FILE);
    return;
  }
  nxvk_host got = {0};
  int rc = conf_gpu_run(R->ctx, op, &k->attrs, NULL, 0, &got);
  if (rc) {
    res->ok = false;
    snprintf(res->why, sizeof res->why, "GPU: %s", nxvk_errmsg());
    if (rc == NXVK_E_DEVICE_LOST) R->lost = true;
    return;
  }
  int64_t n = nxvk_host_count(&got), outside = 0, nonfinite = 0;
  double *v = malloc((size_t)(n ? n : 1) * sizeof *v);
  if (!v) {
    res->ok = false;
    snprintf(res->why, sizeof res->why, "out of memory");
    nxvk_host_free(&got);
    return;
  }
  long double sum = 0, sq = 0;
  for (int64_t i = 0; i < n; i++) {
    v[i] = nxvk_host_get(&got, i);
    if (!isfinite(v[i])) nonfinite++;
    if (uniform && !(v[i] >= lo && v[i] < hi)) outside++;
    sum += v[i];
  }
  double mean = (double)(sum / n);
  for (int64_t i = 0; i < n; i++) sq += ((long double)v[i] - mean) * ((long double)v[i] - mean);
  double var = n > 1 ? (double)(sq / (n - 1)) : 0;
  qsort(v, (size_t)n, sizeof *v, nxvk_cmp_double);
  double ks = 0;
  for (int64_t i = 0; i < n; i++) {
    double F = uniform ? (v[i] <= lo ? 0 : v[i] >= hi ? 1 : (v[i] - lo) / (hi - lo))
                       : 0.5 * erfc(-(v[i] - mu) / (sd * sqrt(2.0)));
    double dp = (double)(i + 1) / (double)n - F, dm = F - (double)i / (double)n;
    if (dp > ks) ks = dp;
    if (dm > ks) ks = dm;
  }
  free(v);
  nxvk_host_free(&got);
  double s2 = uniform ? (hi - lo) * (hi - lo) / 12 : sd * sd;
  double m4 = uniform ? pow(hi - lo, 4) / 80 : 3 * s2 * s2;
  double emu = uniform ? (lo + hi) / 2 : mu;
  double tol_mean = z * sqrt(s2 / n), tol_var = z * sqrt((m4 - s2 * s2) / n);
  double ks_crit = sqrt(-0.5 * log(alpha / 2)) / sqrt((double)n);
  bool ok_mean = fabs(mean - emu) <= tol_mean, ok_var = fabs(var - s2) <= tol_var, ok_ks = ks <= ks_crit;
  res->ok = ok_mean && ok_var && ok_ks && !outside && !nonfinite;
  snprintf(res->why, sizeof res->why, "mean=%.5g var=%.5g ks=%.5g", mean, var, ks);
  if (!ok_mean) nxvk_sb_printf(d, "mean %.6g is %.3g from %g: more than %g standard errors (%.3g)\n", mean, fabs(mean - emu), emu, z, tol_mean);
  if (!ok_var) nxvk_sb_printf(d, "variance %.6g is %.3g from %g: more than %g standard errors (%.3g)\n", var, fabs(var - s2), s2, z, tol_var);
  if (!ok_ks) nxvk_sb_printf(d, "Kolmogorov-Smirnov distance %.4g over the critical value %.4g (alpha %g, n %lld)\n", ks, ks_crit, alpha, (long long)n);
  if (outside) nxvk_sb_printf(d, "%lld values outside [%g,%g)\n", (long long)outside, lo, hi);
  if (nonfinite) nxvk_sb_printf(d, "%lld values are not finite\n", (long long)nonfinite);
}

/* Inputs, reference, GPU, comparison; the result in *res, diagnostics in d. */
static void run_checked(runner *R, const nxvk_op_desc *op, const conf_case *k, bool acc,
                        uint64_t seed, nxvk_host *in, case_result *res, nxvk_strbuf *d) {
  nxvk_host fin[CASE_MAX_IN] = {{0}}, ref = {0}, fref = {0}, got = {0};
  char ref_msg[300] = "";
  int rc = NXVK_OK;
  for (int i = 0; i < k->nin && rc == NXVK_OK; i++) rc = nxvk_host_alloc(&in[i], k->dt[i], &k->shape[i]);
  if (rc) {
    snprintf(res->why, sizeof res->why, "host: %s", nxvk_errmsg());
    return;
  }
  if (cases_fill(R->D, op, k, acc, seed, in)) {
    snprintf(res->why, sizeof res->why, "%s", cases_err);
    return;
  }
  int ref_rc = nxvk_op_ref(op, &k->attrs, in, k->nin, &ref);
  if (ref_rc) snprintf(ref_msg, sizeof ref_msg, "%s", nxvk_errmsg());
  int gpu_rc = conf_gpu_run(R->ctx, op, &k->attrs, in, k->nin, &got);
  if (gpu_rc == NXVK_E_DEVICE_LOST) R->lost = true;
  if (ref_rc && gpu_rc == ref_rc && ref_rc == k->expect_err) {
    /* an error case by design (argmax of nothing), refused by both as
     * expected: it passes as an error-handling check */
    res->ok = res->refused = true;
    snprintf(res->why, sizeof res->why, "%s", nxvk_err_name(ref_rc));
  } else if (ref_rc && gpu_rc == ref_rc) {
    /* both refuse a case not meant as an error: no value was compared, so
     * it is no pass */
    res->skipped = true;
    snprintf(res->why, sizeof res->why, "not compared: the GPU and the reference both refuse it (%s: %s)",
             nxvk_err_name(ref_rc), ref_msg);
  } else if (ref_rc) {
    snprintf(res->why, sizeof res->why, "the reference refuses (%s: %s) but the GPU %s%s",
             nxvk_err_name(ref_rc), ref_msg, gpu_rc ? "fails with " : "gives a result",
             gpu_rc ? nxvk_err_name(gpu_rc) : "");
  } else if (k->expect_err) {
    snprintf(res->why, sizeof res->why, "an error case by design (%s expected), but the reference gives a result%s%s",
             nxvk_err_name(k->expect_err), gpu_rc ? " and the GPU fails with " : " and so does the GPU",
             gpu_rc ? nxvk_err_name(gpu_rc) : "");
  } else if (gpu_rc) {
    snprintf(res->why, sizeof res->why, "GPU: %s (%s)", nxvk_errmsg(), nxvk_err_name(gpu_rc));
  } else {
    /* the engine's check: the op's limit, with the denormal flushes the
     * device's float controls allow forgiven and counted */
    rc = nxvk_check(&R->info, op, &k->attrs, in, k->nin, &got, &ref, &res->cmp);
    if (rc) {
      snprintf(res->why, sizeof res->why, "compare: %s", nxvk_errmsg());
    } else {
      res->ok = res->cmp.bad == 0;
      res->max_ulp = res->cmp.max_ulp;
      int64_t w = res->cmp.worst;
      if (!res->ok && w >= 0) {
        double u = nxvk_ulp_diff(ref.dtype, nxvk_host_get(&got, w), nxvk_host_get(&ref, w));
        if (u > res->max_ulp) res->max_ulp = u;
      }
      if (!res->ok) {
        nxvk_limit lim;
        nxvk_op_limit(op, k->nin ? k->dt[k->nin - 1] : got.dtype, &lim);
        conf_describe_failure(R, op, k, in, &got, &ref, &lim, res, d);
      }
    }
  }
  for (int i = 0; i < CASE_MAX_IN; i++) nxvk_host_free(&fin[i]);
  nxvk_host_free(&ref);
  nxvk_host_free(&fref);
  nxvk_host_free(&got);
}

static void run_case(runner *R, const nxvk_op_desc *op, const conf_case *k, bool acc, uint64_t seed,
                     case_result *res, nxvk_strbuf *d) {
  nxvk_meta metas[CASE_MAX_IN], om;
  memset(res, 0, sizeof *res);
  /* every dtype the case touches must be one the device computes */
  for (int i = 0; i < k->nin; i++) metas[i] = (nxvk_meta){k->dt[i], k->shape[i]};
  bool inferred = nxvk_op_infer(op, &k->attrs, metas, k->nin, &om) == NXVK_OK;
  for (int i = 0; i <= k->nin; i++) {
    nxvk_dtype t = i < k->nin ? k->dt[i] : om.dtype;
    if ((i < k->nin || inferred) && !nxvk_ctx_supports(R->ctx, t)) {
      res->skipped = true;
      snprintf(res->why, sizeof res->why, "%s", unsupported_reason(&R->info, t));
      return;
    }
  }
  /* a kernel variant the device cannot run (dot's coopmat without
   * cooperative matrices, or on f64) is a skip with the engine's reason */
  if (inferred) {
    int rc = nxvk_op_supported(R->ctx, op, &k->attrs, metas, k->nin);
    if (rc == NXVK_E_UNSUPPORTED || rc == NXVK_E_UNSUPPORTED_DTYPE) {
      res->skipped = true;
      snprintf(res->why, sizeof res->why, "%s", nxvk_errmsg());
      return;
    }
  }
  if (k->fill == FILL_STATS) {
    run_stats(R, op, k, res, d);
    return;
  }
  nxvk_host in[CASE_MAX_IN] = {{0}};
  run_checked(R, op, k, acc, seed, in, res, d);
  for (int i = 0; i < CASE_MAX_IN; i++) nxvk_host_free(&in[i]);
}

static void print_diag(const nxvk_strbuf *d) {
  if (!d->p) return;
  const char *p = d->p;
  while (*p) {
    const char *nl = strchr(p, '\n');
    int len = nl ? (int)(nl - p) : (int)strlen(p);
    printf("# %.*s\n", len, p);
    p += len + (nl ? 1 : 0);
  }
}

static cJSON *json_num_or_inf(double v) {
  return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateString(isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
}

/* One op in one dtype: every case, one TAP line each. */
static int run_op_dtype(runner *R, const nxvk_op_desc *op, nxvk_dtype dt, case_list *L, tally *T) {
  const char *dn = nxvk_dtype_name(dt);
  memset(T, 0, sizeof *T);
  nxvk_limit lim;
  if (!nxvk_ctx_supports(R->ctx, dt)) {
    snprintf(T->skip_reason, sizeof T->skip_reason, "%s", unsupported_reason(&R->info, dt));
    printf("ok %d - %s %s # SKIP %s\n", ++*R->tap, op->name, dn, T->skip_reason);
    R->skipped++;
    T->skipped = 1;
    if (R->jcases) {
      cJSON *j = cJSON_CreateObject();
      cJSON_AddStringToObject(j, "op", op->name);
      cJSON_AddStringToObject(j, "dtype", dn);
      cJSON_AddStringToObject(j, "verdict", "skip");
      cJSON_AddStringToObject(j, "reason", T->skip_reason);
      cJSON_AddItemToArray(R->jcases, j);
    }
    return 0;
  }
  if (nxvk_op_limit(op, dt, &lim)) {
    snprintf(T->limit, sizeof T->limit, "none");
    printf("not ok %d - %s %s no error limit\n# %s: record one in conformance/limits.json\n",
           ++*R->tap, op->name, dn, nxvk_errmsg());
    if (R->jcases) {
      cJSON *j = cJSON_CreateObject();
      cJSON_AddNumberToObject(j, "tap", *R->tap);
      cJSON_AddStringToObject(j, "op", op->name);
      cJSON_AddStringToObject(j, "dtype", dn);
      cJSON_AddStringToObject(j, "verdict", "fail");
      cJSON_AddStringToObject(j, "error", "no error limit: record one in conformance/limits.json");
      cJSON_AddItemToArray(R->jcases, j);
    }
    R->failed++;
    T->cases = T->failed = 1;
    return 0;
  }
  snprintf(T->limit, sizeof T->limit, "%s", lim.text);
  T->limit_ulp = lim.exact ? 0 : (lim.sum_factor > 0 || lim.abs > 0 || lim.ulps_per_arg > 0) ? -1 : lim.ulps;
  bool acc = lim.sum_factor > 0 && !lim.exact;
  if (cases_make(&(case_req){.D = R->D, .op = op, .dt = dt}, L)) return -1;
  for (int c = 0; c < L->n && !R->lost; c++) {
    const conf_case *k = &L->v[c];
    uint64_t seed = fnv1a(fnv1a(fnv1a(0xcbf29ce484222325ull, op->name), dn), k->where);
    seed = fnv1a(seed, k->cls);
    case_result res;
    nxvk_strbuf d = {0};
    run_case(R, op, k, acc, seed, &res, &d);
    int n = ++*R->tap;
    const char *verdict;
    if (res.skipped) {
      printf("ok %d - %s %s %s class=%s # SKIP %s\n", n, op->name, dn, k->where, k->cls, res.why);
      R->skipped++;
      T->skipped++;
      if (!T->skip_reason[0]) snprintf(T->skip_reason, sizeof T->skip_reason, "%.*s", (int)sizeof T->skip_reason - 1, res.why);
      verdict = "skip";
    } else if (k->fill == FILL_STATS) {
      printf("%s %d - %s %s %s class=%s %s\n", res.ok ? "ok" : "not ok", n, op->name, dn, k->where,
             k->cls, res.why);
      verdict = res.ok ? "ok" : "fail";
    } else if (res.refused) {
      printf("ok %d - %s %s %s class=%s error=%s (as the reference: an error case by design)\n", n, op->name,
             dn, k->where, k->cls, res.why);
      verdict = "ok";
    } else {
      char extra[96] = "";
      if (res.cmp.forgiven)
        snprintf(extra, sizeof extra, " forgiven=%lld", (long long)res.cmp.forgiven);
      if (res.why[0]) {
        printf("not ok %d - %s %s %s class=%s error\n", n, op->name, dn, k->where, k->cls);
        nxvk_sb_printf(&d, "op=%s dtype=%s %s class=%s: %s\n", op->name, dn, k->where, k->cls, res.why);
      } else {
        if (!res.ok)
          snprintf(extra + strlen(extra), sizeof extra - strlen(extra), " bad=%lld/%lld",
                   (long long)res.cmp.bad, (long long)res.cmp.n);
        printf("%s %d - %s %s %s class=%s maxulp=%.3g%s\n", res.ok ? "ok" : "not ok", n, op->name,
               dn, k->where, k->cls, res.max_ulp, extra);
      }
      res.ok = res.ok && !res.why[0];
      verdict = res.ok ? "ok" : "fail";
    }
    if (!res.skipped) {
      T->cases++;
      if (res.ok) R->passed++;
      else {
        R->failed++;
        T->failed++;
      }
      if (res.max_ulp > T->max_ulp) T->max_ulp = res.max_ulp;
      T->forgiven += res.cmp.forgiven;
    }
    print_diag(&d);
    fflush(stdout); /* a case that hangs the device is then the line after the last one seen */
    if (R->jcases) {
      cJSON *j = cJSON_CreateObject();
      cJSON_AddNumberToObject(j, "tap", n);
      cJSON_AddStringToObject(j, "op", op->name);
      cJSON_AddStringToObject(j, "dtype", dn);
      cJSON_AddStringToObject(j, "case", k->where);
      cJSON_AddStringToObject(j, "class", k->cls);
      cJSON_AddStringToObject(j, "verdict", verdict);
      cJSON_AddStringToObject(j, "limit", lim.text);
      char sd[24];
      snprintf(sd, sizeof sd, "%016llx", (unsigned long long)seed);
      cJSON_AddStringToObject(j, "input_seed", sd);
      if (k->fill != FILL_STATS && !res.skipped && !res.refused) {
        cJSON_AddNumberToObject(j, "elements", (double)res.cmp.n);
        cJSON_AddItemToObject(j, "max_ulp", json_num_or_inf(res.max_ulp));
        cJSON_AddItemToObject(j, "max_abs", json_num_or_inf(res.cmp.max_abs));
        cJSON_AddNumberToObject(j, "bad", (double)res.cmp.bad);
        cJSON_AddNumberToObject(j, "forgiven", (double)res.cmp.forgiven);
      }
      if (res.why[0]) cJSON_AddStringToObject(j, res.skipped ? "reason" : res.refused ? "error_as_reference" : k->fill == FILL_STATS ? "statistics" : "error", res.why);
      if (res.jfail) cJSON_AddItemToObject(j, "failure", res.jfail);
      else cJSON_Delete(res.jfail);
      if (d.p && !res.ok) cJSON_AddStringToObject(j, "diagnostic", d.p);
      cJSON_AddItemToArray(R->jcases, j);
    } else {
      cJSON_Delete(res.jfail);
    }
    free(d.p);
  }
  return 0;
}

/* Every selected op x dtype on one device; its report into jrep. */
int conf_run_device(runner *R, const selection *sel, cJSON *jrep) {
  double t0 = now_s();
  nxvk_ctx_device_info(R->ctx, &R->info);
  const nxvk_device_info *i = &R->info;
  printf("# device %d: %s (%s %s, Vulkan %s)\n", i->index, i->name, i->driver_name,
         i->driver_version, i->api_version);
  printf("# denormals preserved: f32 %s, f64 %s%s\n", i->denorm_preserve_f32 ? "yes" : "no",
         i->denorm_preserve_f64 ? "yes" : "no",
         i->denorm_preserve_f32 && i->denorm_preserve_f64
             ? ""
             : " (results matching a flush of denormals are forgiven and counted as forgiven=N)");
  int nops = nxvk_op_count();
  tally *T = calloc((size_t)nops * NXVK_NDTYPES, sizeof *T);
  case_list L = {0};
  if (!T) return cases_fail("out of memory");
  if (jrep) {
    cJSON_AddItemToObject(jrep, "device", cli_device_json(i));
    R->jcases = cJSON_AddArrayToObject(jrep, "cases");
  }
  int rc = 0;
  for (int o = 0; o < nops && rc == 0 && !R->lost; o++) {
    const nxvk_op_desc *op = nxvk_op_at(o);
    if (!sel->ops[o]) continue;
    unsigned dts = cases_op_dtypes(op) & sel->dtypes;
    for (int d = 0; d < NXVK_NDTYPES && rc == 0 && !R->lost; d++)
      if (dts & NXVK_DT(d)) {
        rc = run_op_dtype(R, op, (nxvk_dtype)d, &L, &T[o * NXVK_NDTYPES + d]);
        fflush(stdout);
      }
  }
  free(L.v);
  if (R->lost) printf("Bail out! device lost: %s\n", nxvk_errmsg());
  /* the summary table */
  printf("# summary for device %d (%s)\n", i->index, i->name);
  printf("# %-15s %-5s %6s %10s %9s  %-34s %s\n", "op", "dtype", "cases", "max ulp", "forgiven",
         "limit", "verdict");
  cJSON *js = jrep ? cJSON_AddArrayToObject(jrep, "summary") : NULL;
  for (int o = 0; o < nops && rc == 0; o++) {
    const nxvk_op_desc *op = nxvk_op_at(o);
    if (!sel->ops[o]) continue;
    for (int d = 0; d < NXVK_NDTYPES; d++) {
      tally *t = &T[o * NXVK_NDTYPES + d];
      if (!(cases_op_dtypes(op) & sel->dtypes & NXVK_DT(d)) || (!t->cases && !t->skipped)) continue;
      const char *verdict = t->failed ? "FAIL" : t->cases ? "ok" : "skipped";
      char some[48] = ""; /* cases run and cases skipped (a variant the device lacks) */
      if (t->cases && t->skipped) snprintf(some, sizeof some, ", %d skipped", t->skipped);
      printf("# %-15s %-5s %6d %10.3g %9lld  %-34s %s%s%s%s\n", op->name, nxvk_dtype_name((nxvk_dtype)d),
             t->cases, t->max_ulp, (long long)t->forgiven, t->limit[0] ? t->limit : "-", verdict,
             some, t->skip_reason[0] ? ": " : "", t->skip_reason);
      if (js) {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddStringToObject(r, "op", op->name);
        cJSON_AddStringToObject(r, "dtype", nxvk_dtype_name((nxvk_dtype)d));
        cJSON_AddNumberToObject(r, "cases", t->cases);
        cJSON_AddNumberToObject(r, "failed", t->failed);
        cJSON_AddNumberToObject(r, "skipped", t->skipped);
        cJSON_AddItemToObject(r, "max_ulp", json_num_or_inf(t->max_ulp));
        cJSON_AddNumberToObject(r, "forgiven", (double)t->forgiven);
        cJSON_AddStringToObject(r, "limit", t->limit);
        if (t->cases && t->limit_ulp >= 0 && strcmp(t->limit, "none") != 0)
          cJSON_AddNumberToObject(r, "limit_ulp", t->limit_ulp);
        cJSON_AddStringToObject(r, "verdict", t->failed ? "fail" : t->cases ? "ok" : "skip");
        if (t->skip_reason[0]) cJSON_AddStringToObject(r, "reason", t->skip_reason);
        cJSON_AddItemToArray(js, r);
      }
    }
  }
  /* the fused-graph class: random elementwise graphs, fused and unfused,
   * against the reference (whole-table runs, or --op fused: graphs mix every op) */
  if ((sel->all || sel->fused) && !R->lost) {
    int fp = *R->tap, ff = 0, tap0 = *R->tap;
    int frc = conformance_fused_class(R->ctx, 2026u, R->D->quick ? 24 : 200, &fp, &ff);
    R->passed += fp - *R->tap;
    R->failed += ff;
    *R->tap = fp + ff;
    if (jrep) {
      cJSON *jf = cJSON_AddObjectToObject(jrep, "fused_graphs");
      cJSON_AddNumberToObject(jf, "passed", fp - tap0);
      cJSON_AddNumberToObject(jf, "failed", ff);
      if (frc) cJSON_AddStringToObject(jf, "error", nxvk_errmsg());
    }
    if (frc == NXVK_E_DEVICE_LOST) R->lost = true;
    if (frc) printf("# fused graphs stopped: %s (%s)\n", nxvk_errmsg(), nxvk_err_name(frc));
  }
  double secs = now_s() - t0;
  printf("# device %d: %d passed, %d failed, %d skipped in %.1f s\n", i->index, R->passed, R->failed,
         R->skipped, secs);
  if (jrep) {
    cJSON_AddNumberToObject(jrep, "passed", R->passed);
    cJSON_AddNumberToObject(jrep, "failed", R->failed);
    cJSON_AddNumberToObject(jrep, "skipped", R->skipped);
    cJSON_AddNumberToObject(jrep, "seconds", secs);
    cJSON_AddBoolToObject(jrep, "device_lost", R->lost);
  }
  free(T);
  return rc;
}
