/*
 * cmd_conformance.c - `nxvk conformance`: every op of the table, for every
 * dtype the device computes, at every size class and input class (random
 * normal-range, wide exponent, IEEE edge values and their pairs), run on
 * the GPU through the public engine API and judged against the CPU
 * reference by nxvk_check() under the op's limit (conformance/limits.json)
 * -- the same judgement as `nxvk run --check`.
 *
 * Nothing here names an op: cases are generated from the table row (kind,
 * arity, dtypes, accepted attributes, kernel variants) and from data
 * (conformance/edge_values.json, conformance/size_classes.json, embedded at
 * build time).  Output: TAP on stdout, one line per op x dtype x case x
 * input class, a `#` summary table and the closing `N passed, N failed`.
 */
#include <cjson/cJSON.h>

#include "cli/junit.h"
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cases.h"
#include "cli/conformance_fused.h"


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

#define DIAG_TERMS 8        /* input values listed for a failing reduction or dot */
#define ALONE_MAX (1 << 20) /* largest reduced set re-run on its own */

/* ------------------------------------------------------------ small helpers */

typedef struct {
  char *s;
  size_t n, cap;
} strbuf;

__attribute__((format(printf, 2, 3))) static void sb_printf(strbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int need = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (need < 0) return;
  if (b->n + (size_t)need + 1 > b->cap) {
    size_t cap = (b->cap ? b->cap * 2 : 256) + (size_t)need;
    char *s = realloc(b->s, cap);
    if (!s) return; /* diagnostics are best effort; the verdict is not */
    b->s = s;
    b->cap = cap;
  }
  va_start(ap, fmt);
  vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
  va_end(ap);
  b->n += (size_t)need;
}

static double now_s(void) { return nxvk_now_ns() * 1e-9; }

static uint64_t fnv1a(uint64_t h, const char *s) {
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001B3ull;
  return h;
}

static bool is_float(nxvk_dtype d) { return nxvk_dtype_is_float(d); }

/* "0x7f800000 (inf)": the bit pattern and the value of element i */
static void elem_text(const nxvk_host *h, int64_t i, char *buf, size_t len) {
  switch (h->dtype) {
  case NXVK_F32: {
    float v = ((const float *)h->data)[i];
    uint32_t b;
    memcpy(&b, &v, 4);
    snprintf(buf, len, "0x%08x (%.9g)", b, (double)v);
    break;
  }
  case NXVK_F64: {
    double v = ((const double *)h->data)[i];
    uint64_t b;
    memcpy(&b, &v, 8);
    snprintf(buf, len, "0x%016llx (%.17g)", (unsigned long long)b, v);
    break;
  }
  case NXVK_F16:
  case NXVK_BF16: {
    uint16_t b = ((const uint16_t *)h->data)[i];
    snprintf(buf, len, "0x%04x (%.5g)", b, nxvk_host_get(h, i));
    break;
  }
  default: { /* integers and bool: the bits of their width, the value */
    int64_t v = nxvk_host_get_int(h, i);
    int digits = (int)nxvk_dtype_size(h->dtype) * 2;
    uint64_t mask = digits == 16 ? ~0ull : (1ull << (4 * digits)) - 1;
    if (h->dtype == NXVK_U64)
      snprintf(buf, len, "0x%0*llx (%llu)", digits, (unsigned long long)v, (unsigned long long)v);
    else
      snprintf(buf, len, "0x%0*llx (%lld)", digits, (unsigned long long)((uint64_t)v & mask), (long long)v);
    break;
  }
  }
}




static bool preserves(const nxvk_device_info *info, nxvk_dtype d) {
  return (nxvk_flush_dtypes(info) & NXVK_DT(d)) == 0;
}

/* A copy with denormals flushed to zero of the same sign where the device
 * may flush them (nxvk_check's rule); *changed says whether any was. */
static int flushed_copy(const nxvk_host *in, const nxvk_device_info *info, nxvk_host *out,
                        bool *changed) {
  if (!preserves(info, in->dtype)) return nxvk_host_flush_denormals(in, out, changed);
  *changed = false;
  int rc = nxvk_host_alloc(out, in->dtype, &in->shape);
  if (rc == NXVK_OK && nxvk_host_bytes(in)) memcpy(out->data, in->data, nxvk_host_bytes(in));
  return rc;
}

/* --------------------------------------------------------------- running */

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
  bool ok, skipped, refused; /* refused: GPU and reference both refuse the case */
  char why[400];             /* error, skip reason or statistics */
  nxvk_cmp cmp;
  double max_ulp;
  cJSON *jfail;
} case_result;

static const char *unsupported_reason(const nxvk_device_info *info, nxvk_dtype d) {
  static char buf[96];
  const char *missing = nxvk_dtype_missing(info, d);
  if (missing) snprintf(buf, sizeof buf, "device has no %s", missing);
  else snprintf(buf, sizeof buf, "device cannot compute %s", nxvk_dtype_name(d));
  return buf;
}

static cJSON *json_elem(const nxvk_host *h, int64_t i) {
  char t[96];
  elem_text(h, i, t, sizeof t);
  cJSON *o = cJSON_CreateObject();
  char *sp = strchr(t, ' ');
  if (sp) {
    *sp = 0;
    cJSON_AddStringToObject(o, "hex", t);
    sp[strlen(sp + 1)] = 0; /* drop ')' */
    cJSON_AddStringToObject(o, "value", sp + 2);
  }
  return o;
}

/* Flat index of the input element that output element `flat` reads under
 * numpy broadcasting. */
static int64_t bcast_index(const nxvk_shape *in, const nxvk_shape *out, int64_t flat) {
  int64_t idx[NXVK_MAX_RANK], off = 0, stride = 1;
  for (int d = out->rank - 1; d >= 0; d--) {
    idx[d] = out->dim[d] ? flat % out->dim[d] : 0;
    flat = out->dim[d] ? flat / out->dim[d] : 0;
  }
  for (int d = in->rank - 1; d >= 0; d--) {
    int od = d + out->rank - in->rank;
    off += (in->dim[d] == 1 ? 0 : idx[od]) * stride;
    stride *= in->dim[d];
  }
  return off;
}

/* Input offsets a reduction's output element o reads, in the reduction's
 * order (reduced dims row-major).  Returns how many there are in total. */
static int64_t reduce_terms(const nxvk_attrs *a, const nxvk_shape *in, int64_t o, int64_t *offs,
                            int64_t max) {
  bool red[NXVK_MAX_RANK];
  int64_t st[NXVK_MAX_RANK], s = 1, base = 0, nred = 1;
  for (int d = in->rank - 1; d >= 0; d--) {
    st[d] = s;
    s *= in->dim[d] ? in->dim[d] : 1;
    red[d] = !(a->set & NXVK_ATTR_AXES);
  }
  for (int i = 0; (a->set & NXVK_ATTR_AXES) && i < a->naxes; i++)
    red[a->axes[i] < 0 ? a->axes[i] + in->rank : a->axes[i]] = true;
  for (int d = in->rank - 1; d >= 0; d--) {
    if (red[d]) {
      nred *= in->dim[d];
      continue;
    }
    base += (o % in->dim[d]) * st[d];
    o /= in->dim[d];
  }
  for (int64_t j = 0; j < nred && j < max; j++) {
    int64_t off = base, r = j;
    for (int d = in->rank - 1; d >= 0; d--) {
      if (!red[d]) continue;
      off += (r % in->dim[d]) * st[d];
      r /= in->dim[d];
    }
    offs[j] = off;
  }
  return nred;
}

/* The failing element alone, where the kind allows: elementwise inputs as
 * [1] tensors, a reduction's reduced set as one vector, a dot row and
 * column.  Same bits as in the tensor: the value itself gives the result. */
static int alone_inputs(const nxvk_op_desc *op, const conf_case *k, const nxvk_host *in,
                        const nxvk_host *got, int64_t w, nxvk_host *alone, nxvk_attrs *a) {
  *a = k->attrs;
  int rc = NXVK_OK;
  if (op->kind <= NXVK_KIND_SELECT) {
    for (int i = 0; i < k->nin && rc == NXVK_OK; i++) {
      nxvk_shape one = {1, {1}};
      rc = nxvk_host_alloc(&alone[i], in[i].dtype, &one);
      if (rc == NXVK_OK)
        nxvk_host_set(&alone[i], 0, nxvk_host_get(&in[i], bcast_index(&in[i].shape, &got->shape, w)));
      if (rc == NXVK_OK && is_float(in[i].dtype)) /* copy bits: keeps NaN payloads */
        memcpy(alone[i].data,
               (const char *)in[i].data + bcast_index(&in[i].shape, &got->shape, w) * (int64_t)nxvk_dtype_size(in[i].dtype),
               nxvk_dtype_size(in[i].dtype));
    }
    return rc ? rc : k->nin;
  }
  if (op->kind == NXVK_KIND_REDUCE) {
    int64_t nred = reduce_terms(&k->attrs, &in[0].shape, w, NULL, 0);
    if (nred > ALONE_MAX) return 0;
    int64_t *offs = malloc((size_t)(nred ? nred : 1) * sizeof *offs);
    nxvk_shape v = {1, {nred}};
    if (!offs) return 0;
    reduce_terms(&k->attrs, &in[0].shape, w, offs, nred);
    rc = nxvk_host_alloc(&alone[0], in[0].dtype, &v);
    for (int64_t j = 0; rc == NXVK_OK && j < nred; j++)
      nxvk_host_set(&alone[0], j, nxvk_host_get(&in[0], offs[j]));
    free(offs);
    memset(a, 0, sizeof *a); /* all axes of the vector */
    return rc ? rc : 1;
  }
  if (op->kind == NXVK_KIND_DOT && k->nin == 2) {
    const nxvk_shape *x = &in[0].shape, *y = &in[1].shape;
    int r = x->rank;
    int64_t m = x->dim[r - 2], kk = x->dim[r - 1], n = y->dim[r - 1];
    int64_t b = w / (m * n), i = (w / n) % m, j = w % n;
    nxvk_shape xs = {2, {1, kk}}, ys = {2, {kk, 1}};
    rc = nxvk_host_alloc(&alone[0], in[0].dtype, &xs);
    if (rc == NXVK_OK) rc = nxvk_host_alloc(&alone[1], in[1].dtype, &ys);
    for (int64_t t = 0; rc == NXVK_OK && t < kk; t++) {
      nxvk_host_set(&alone[0], t, nxvk_host_get(&in[0], b * m * kk + i * kk + t));
      nxvk_host_set(&alone[1], t, nxvk_host_get(&in[1], b * kk * n + t * n + j));
    }
    return rc ? rc : 2;
  }
  return 0;
}

/* Runs op on hosts in[] on the GPU; *got gets the result. */
static int gpu_run(nxvk_ctx *ctx, const nxvk_op_desc *op, const nxvk_attrs *a, const nxvk_host *in,
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

/* What a person filing a bug needs: op, dtype, index, inputs, GPU value and
 * reference value in hex and decimal, and the element re-run alone. */
static void describe_failure(runner *R, const nxvk_op_desc *op, const conf_case *k,
                             const nxvk_host *in, const nxvk_host *got, const nxvk_host *ref,
                             const nxvk_limit *lim, case_result *res, strbuf *d) {
  int64_t w = res->cmp.worst;
  char g[96], r[96], t[96];
  cJSON *jf = cJSON_CreateObject();
  res->jfail = jf;
  sb_printf(d, "op=%s dtype=%s %s class=%s limit=%s\n", op->name,
            nxvk_dtype_name(k->nin ? k->dt[k->nin - 1] : got->dtype), k->where, k->cls, lim->text);
  sb_printf(d, "%lld of %lld elements over the limit; first at flat index %lld of %s\n",
            (long long)res->cmp.bad, (long long)res->cmp.n, (long long)w,
            nxvk_shape_str(&got->shape, t, sizeof t));
  cJSON_AddNumberToObject(jf, "index", (double)w);
  cJSON_AddNumberToObject(jf, "bad", (double)res->cmp.bad);
  if (w < 0) return;
  cJSON *jin = cJSON_AddArrayToObject(jf, "inputs");
  if (op->kind <= NXVK_KIND_SELECT) {
    for (int i = 0; i < k->nin; i++) {
      int64_t at = bcast_index(&in[i].shape, &got->shape, w);
      elem_text(&in[i], at, t, sizeof t);
      sb_printf(d, "input %d [%lld]: %s\n", i + 1, (long long)at, t);
      cJSON *e = json_elem(&in[i], at);
      cJSON_AddNumberToObject(e, "input", i + 1);
      cJSON_AddNumberToObject(e, "index", (double)at);
      cJSON_AddItemToArray(jin, e);
    }
  } else if (op->kind == NXVK_KIND_REDUCE) {
    int64_t offs[DIAG_TERMS];
    int64_t nred = reduce_terms(&k->attrs, &in[0].shape, w, offs, DIAG_TERMS);
    sb_printf(d, "output %lld reduces %lld elements of input 1; the first %lld:\n", (long long)w,
              (long long)nred, (long long)(nred < DIAG_TERMS ? nred : DIAG_TERMS));
    for (int64_t j = 0; j < nred && j < DIAG_TERMS; j++) {
      elem_text(&in[0], offs[j], t, sizeof t);
      sb_printf(d, "  input 1 [%lld]: %s\n", (long long)offs[j], t);
      cJSON *e = json_elem(&in[0], offs[j]);
      cJSON_AddNumberToObject(e, "input", 1);
      cJSON_AddNumberToObject(e, "index", (double)offs[j]);
      cJSON_AddItemToArray(jin, e);
    }
  } else if (op->kind == NXVK_KIND_DOT && k->nin == 2) {
    int rk = in[0].shape.rank;
    int64_t m = in[0].shape.dim[rk - 2], kk = in[0].shape.dim[rk - 1], n = in[1].shape.dim[rk - 1];
    int64_t b = w / (m * n), i = (w / n) % m, j = w % n;
    sb_printf(d, "output [%lld,%lld,%lld] = row %lld of input 1 . column %lld of input 2 (k=%lld); first terms:\n",
              (long long)b, (long long)i, (long long)j, (long long)i, (long long)j, (long long)kk);
    for (int64_t q = 0; q < kk && q < DIAG_TERMS / 2; q++) {
      elem_text(&in[0], b * m * kk + i * kk + q, t, sizeof t);
      elem_text(&in[1], b * kk * n + q * n + j, g, sizeof g);
      sb_printf(d, "  x[%lld] %s * y[%lld] %s\n", (long long)q, t, (long long)q, g);
    }
  }
  elem_text(got, w, g, sizeof g);
  elem_text(ref, w, r, sizeof r);
  double u = nxvk_ulp_diff(ref->dtype, nxvk_host_get(got, w), nxvk_host_get(ref, w));
  sb_printf(d, "gpu: %s\n", g);
  sb_printf(d, "ref: %s   (ulp distance %g)\n", r, u);
  cJSON_AddItemToObject(jf, "gpu", json_elem(got, w));
  cJSON_AddItemToObject(jf, "ref", json_elem(ref, w));
  if (isinf(u)) cJSON_AddStringToObject(jf, "ulp", "inf");
  else cJSON_AddNumberToObject(jf, "ulp", u);
  if (op->expr) sb_printf(d, "kernel expression: %s\n", op->expr);

  /* the element alone: do the values themselves give the result? */
  nxvk_host alone[CASE_MAX_IN] = {{0}}, flushed[CASE_MAX_IN] = {{0}}, ag = {0}, ar = {0}, fr = {0};
  nxvk_attrs aa;
  int na = alone_inputs(op, k, in, got, w, alone, &aa), rc = NXVK_OK;
  bool same = false, denormal_in = false;
  if (na > 0) {
    rc = gpu_run(R->ctx, op, &aa, alone, na, &ag);
    if (rc == NXVK_OK) rc = nxvk_op_ref(op, &aa, alone, na, &ar);
    if (rc == NXVK_OK && nxvk_host_count(&ag) >= 1) {
      nxvk_cmp c1;
      same = ag.dtype == got->dtype &&
             memcmp(ag.data, (const char *)got->data + w * (int64_t)nxvk_dtype_size(got->dtype),
                    nxvk_dtype_size(got->dtype)) == 0;
      bool over = nxvk_compare(op, &aa, alone, na, &ag, &ar, NULL, &c1) == NXVK_OK && c1.bad > 0;
      elem_text(&ag, 0, g, sizeof g);
      sb_printf(d, "alone (%s): gpu %s, %s; %s\n",
                op->kind <= NXVK_KIND_SELECT ? "these inputs as [1] tensors"
                : op->kind == NXVK_KIND_REDUCE ? "the reduced elements as one vector"
                                               : "this row and column as [1,k]x[k,1]",
                g, over ? "also over the limit" : "within the limit",
                same ? "the same bits: the inputs alone give this result"
                     : "different bits: the result depends on the rest of the tensor");
      cJSON *ja = json_elem(&ag, 0);
      cJSON_AddBoolToObject(ja, "same_bits", same);
      cJSON_AddBoolToObject(ja, "over_limit", over);
      cJSON_AddItemToObject(jf, "alone", ja);
    } else if (rc) {
      sb_printf(d, "alone: %s\n", nxvk_errmsg());
    }
    if (rc == NXVK_E_DEVICE_LOST) R->lost = true;
  }
  /* On a device that may flush denormals, each instruction may flush any
   * denormal it reads or makes: does some flush explain the value? */
  int flush_mask = 0;
  bool tiny_flush = false;
  if (rc == NXVK_OK && na > 0 && nxvk_host_count(&ag) >= 1 && op->kind <= NXVK_KIND_SELECT) {
    size_t es = nxvk_dtype_size(ag.dtype);
    for (int mask = 1; mask < (1 << na) && !flush_mask; mask++) {
      bool changed = false, ok = true;
      for (int i = 0; i < na; i++) {
        nxvk_host_free(&flushed[i]);
        bool ch = false;
        ok = ok && flushed_copy(&alone[i], &R->info, &flushed[i], &ch) == NXVK_OK;
        if (ok && !(mask & (1 << i)) && nxvk_host_bytes(&alone[i])) /* kept as it is */
          memcpy(flushed[i].data, alone[i].data, nxvk_host_bytes(&alone[i]));
        changed = changed || (ch && (mask & (1 << i)));
      }
      denormal_in = denormal_in || changed;
      nxvk_host_free(&fr);
      if (ok && changed && nxvk_op_ref(op, &aa, flushed, na, &fr) == NXVK_OK &&
          fr.dtype == ag.dtype && memcmp(fr.data, ag.data, es) == 0)
        flush_mask = mask;
    }
    if (denormal_in && !flush_mask)
      sb_printf(d, "a denormal input on a device that may flush: no flush of the inputs gives the "
                   "GPU's value either\n");
    if (flush_mask) {
      char which[32] = "";
      for (int i = 0; i < na; i++)
        if (flush_mask & (1 << i)) snprintf(which + strlen(which), sizeof which - strlen(which), "%s%d", which[0] ? "," : "", i + 1);
      sb_printf(d, "the GPU's value is the reference with input %s flushed to zero%s\n", which,
                flush_mask == (1 << na) - 1 ? "" : " and the others kept (each instruction may flush)");
    }
    /* a result below the smallest normal before rounding, rounded up to it */
    double gv = nxvk_host_get(got, w), rv = nxvk_host_get(ref, w);
    double tiny = ref->dtype == NXVK_F32 ? FLT_MIN : DBL_MIN;
    tiny_flush = is_float(ref->dtype) && !preserves(&R->info, ref->dtype) && gv == 0 && fabs(rv) == tiny;
    if (tiny_flush)
      sb_printf(d, "the exact result is below the smallest normal and rounds up to it: the device "
                   "flushed it before rounding\n");
  }
  if (is_float(ref->dtype) && nxvk_host_get(got, w) == 0 && nxvk_host_get(ref, w) == 0)
    sb_printf(d, "only the sign of zero differs: unless a kernel declares SignedZeroInfNanPreserve "
                 "(VK_KHR_shader_float_controls) a driver may ignore the sign of zero\n");
  nxvk_dtype dt = k->nin ? k->dt[k->nin - 1] : got->dtype;
  const char *blame;
  if (same && (flush_mask || tiny_flush))
    blame = "denormal flush: a value the device's float controls allow (the Vulkan precision "
            "rules let any denormal an instruction reads or makes be flushed to zero), which "
            "nxvk_compare does not forgive here";
  else if (same && cases_driver_builtin(R->D, op, dt))
    blame = "driver: in this dtype the kernel is the driver's own arithmetic or GLSL built-in "
            "(conformance/edge_values.json driver_builtins) and these inputs alone reproduce it";
  else if (same)
    blame = "nxvk kernel or reference: the inputs alone reproduce it and the kernel is nxvk's "
            "own code; check both before blaming the driver";
  else if (na > 0)
    blame = "position dependent: the same inputs alone give another value (indexing, "
            "synchronisation or the driver's scheduling)";
  else
    blame = "not isolated: this kind is not re-run element by element";
  sb_printf(d, "attribution: %s%s\n", blame,
            denormal_in && same && !flush_mask ? "; the device neither kept nor flushed the denormal" : "");
  cJSON_AddStringToObject(jf, "attribution", blame);
  for (int i = 0; i < CASE_MAX_IN; i++) {
    nxvk_host_free(&alone[i]);
    nxvk_host_free(&flushed[i]);
  }
  nxvk_host_free(&ag);
  nxvk_host_free(&ar);
  nxvk_host_free(&fr);
}


/* Distribution checks on the GPU's output at a fixed seed: mean, variance
 * and the Kolmogorov-Smirnov distance to the CDF, each against z standard
 * errors (KS: its critical value at ks_alpha). */
static void run_stats(runner *R, const nxvk_op_desc *op, const conf_case *k, case_result *res,
                      strbuf *d) {
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
  int rc = gpu_run(R->ctx, op, &k->attrs, NULL, 0, &got);
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
  if (!ok_mean) sb_printf(d, "mean %.6g is %.3g from %g: more than %g standard errors (%.3g)\n", mean, fabs(mean - emu), emu, z, tol_mean);
  if (!ok_var) sb_printf(d, "variance %.6g is %.3g from %g: more than %g standard errors (%.3g)\n", var, fabs(var - s2), s2, z, tol_var);
  if (!ok_ks) sb_printf(d, "Kolmogorov-Smirnov distance %.4g over the critical value %.4g (alpha %g, n %lld)\n", ks, ks_crit, alpha, (long long)n);
  if (outside) sb_printf(d, "%lld values outside [%g,%g)\n", (long long)outside, lo, hi);
  if (nonfinite) sb_printf(d, "%lld values are not finite\n", (long long)nonfinite);
}

/* Inputs, reference, GPU, comparison; the result in *res, diagnostics in d. */
static void run_checked(runner *R, const nxvk_op_desc *op, const conf_case *k, bool acc,
                        uint64_t seed, nxvk_host *in, case_result *res, strbuf *d) {
  nxvk_host fin[CASE_MAX_IN] = {{0}}, ref = {0}, fref = {0}, got = {0};
  char ref_msg[300] = "";
  int rc = NXVK_OK;
  for (int i = 0; i < k->nin && rc == NXVK_OK; i++) rc = nxvk_host_alloc(&in[i], k->dt[i], &k->shape[i]);
  if (rc) {
    snprintf(res->why, sizeof res->why, "host: %s", nxvk_errmsg());
    return;
  }
  if (cases_fill_inputs(R->D, op, k, acc, seed, in)) {
    snprintf(res->why, sizeof res->why, "%s", cases_err);
    return;
  }
  int ref_rc = nxvk_op_ref(op, &k->attrs, in, k->nin, &ref);
  if (ref_rc) snprintf(ref_msg, sizeof ref_msg, "%s", nxvk_errmsg());
  int gpu_rc = gpu_run(R->ctx, op, &k->attrs, in, k->nin, &got);
  if (gpu_rc == NXVK_E_DEVICE_LOST) R->lost = true;
  if (ref_rc) { /* a case the op refuses (argmax of nothing): the GPU must refuse it too */
    res->ok = res->refused = gpu_rc == ref_rc;
    if (res->ok)
      snprintf(res->why, sizeof res->why, "%s", nxvk_err_name(ref_rc));
    else
      snprintf(res->why, sizeof res->why, "the reference refuses (%s: %s) but the GPU %s%s",
               nxvk_err_name(ref_rc), ref_msg, gpu_rc ? "fails with " : "gives a result",
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
        describe_failure(R, op, k, in, &got, &ref, &lim, res, d);
      }
    }
  }
  for (int i = 0; i < CASE_MAX_IN; i++) nxvk_host_free(&fin[i]);
  nxvk_host_free(&ref);
  nxvk_host_free(&fref);
  nxvk_host_free(&got);
}

static void run_case(runner *R, const nxvk_op_desc *op, const conf_case *k, bool acc, uint64_t seed,
                     case_result *res, strbuf *d) {
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

static void print_diag(const strbuf *d) {
  if (!d->s) return;
  const char *p = d->s;
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
  if (cases_generate(R->D, op, dt, L)) return -1;
  for (int c = 0; c < L->n && !R->lost; c++) {
    const conf_case *k = &L->v[c];
    uint64_t seed = fnv1a(fnv1a(fnv1a(0xcbf29ce484222325ull, op->name), dn), k->where);
    seed = fnv1a(seed, k->cls);
    case_result res;
    strbuf d = {0};
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
      printf("ok %d - %s %s %s class=%s error=%s (as the reference)\n", n, op->name, dn, k->where,
             k->cls, res.why);
      verdict = "ok";
    } else {
      char extra[96] = "";
      if (res.cmp.forgiven)
        snprintf(extra, sizeof extra, " forgiven=%lld", (long long)res.cmp.forgiven);
      if (res.why[0]) {
        printf("not ok %d - %s %s %s class=%s error\n", n, op->name, dn, k->where, k->cls);
        sb_printf(&d, "op=%s dtype=%s %s class=%s: %s\n", op->name, dn, k->where, k->cls, res.why);
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
      if (d.s && !res.ok) cJSON_AddStringToObject(j, "diagnostic", d.s);
      cJSON_AddItemToArray(R->jcases, j);
    } else {
      cJSON_Delete(res.jfail);
    }
    free(d.s);
  }
  return 0;
}

typedef struct {
  const bool *ops;   /* selected ops, by table index */
  unsigned dtypes;   /* NXVK_DT() mask */
  bool all;          /* no --op and no --dtype given */
} selection;

/* Every selected op x dtype on one device; its report into jrep. */
static int run_device(runner *R, const selection *sel, cJSON *jrep) {
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
   * against the reference (whole-table runs only: graphs mix every op) */
  if (sel->all && !R->lost) {
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
                           unsigned *dtypes) {
  int count = nxvk_op_count();
  for (int i = 0; i < count; i++) ops[i] = nop == 0;
  for (int i = 0; i < nop; i++) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", op_args[i]);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
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
      if (cases_generate(D, op, (nxvk_dtype)d, &L)) {
        free(L.v);
        fprintf(stderr, "nxvk: error: %s\n", cases_err);
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
      if (st == JUNIT_PASS && cJSON_IsNumber(ulp) && cJSON_IsNumber(n)) {
        snprintf(text, sizeof text, "%.0f elements, max ulp %.3g, limit %s", n->valuedouble, ulp->valuedouble,
                 limit ? limit : "?");
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
  selection sel = {ops, 0, nop == 0 && !dtype_arg};
  rc = parse_selection(op_args, nop, dtype_arg, ops, &sel.dtypes);
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
    if (run_device(&R, &sel, jrep)) {
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
