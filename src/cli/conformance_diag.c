/*
 * conformance_diag.c - what a failing conformance case needs for a bug
 * report (conformance.h): op, dtype, index, inputs, GPU value and reference
 * value in hex and decimal, the terms a reduction or dot read, the element
 * re-run alone, and whether flushing denormals explains it.
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

#define DIAG_TERMS 8        /* input values listed for a failing reduction or dot */
#define ALONE_MAX (1 << 20) /* largest reduced set re-run on its own */

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

/* What a person filing a bug needs: op, dtype, index, inputs, GPU value and
 * reference value in hex and decimal, and the element re-run alone. */
void conf_describe_failure(runner *R, const nxvk_op_desc *op, const conf_case *k,
                             const nxvk_host *in, const nxvk_host *got, const nxvk_host *ref,
                             const nxvk_limit *lim, case_result *res, nxvk_strbuf *d) {
  int64_t w = res->cmp.worst;
  char g[96], r[96], t[96];
  cJSON *jf = cJSON_CreateObject();
  res->jfail = jf;
  nxvk_sb_printf(d, "op=%s dtype=%s %s class=%s limit=%s\n", op->name,
            nxvk_dtype_name(k->nin ? k->dt[k->nin - 1] : got->dtype), k->where, k->cls, lim->text);
  nxvk_sb_printf(d, "%lld of %lld elements over the limit; first at flat index %lld of %s\n",
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
      nxvk_sb_printf(d, "input %d [%lld]: %s\n", i + 1, (long long)at, t);
      cJSON *e = json_elem(&in[i], at);
      cJSON_AddNumberToObject(e, "input", i + 1);
      cJSON_AddNumberToObject(e, "index", (double)at);
      cJSON_AddItemToArray(jin, e);
    }
  } else if (op->kind == NXVK_KIND_REDUCE) {
    int64_t offs[DIAG_TERMS];
    int64_t nred = reduce_terms(&k->attrs, &in[0].shape, w, offs, DIAG_TERMS);
    nxvk_sb_printf(d, "output %lld reduces %lld elements of input 1; the first %lld:\n", (long long)w,
              (long long)nred, (long long)(nred < DIAG_TERMS ? nred : DIAG_TERMS));
    for (int64_t j = 0; j < nred && j < DIAG_TERMS; j++) {
      elem_text(&in[0], offs[j], t, sizeof t);
      nxvk_sb_printf(d, "  input 1 [%lld]: %s\n", (long long)offs[j], t);
      cJSON *e = json_elem(&in[0], offs[j]);
      cJSON_AddNumberToObject(e, "input", 1);
      cJSON_AddNumberToObject(e, "index", (double)offs[j]);
      cJSON_AddItemToArray(jin, e);
    }
  } else if (op->kind == NXVK_KIND_DOT && k->nin == 2) {
    int rk = in[0].shape.rank;
    int64_t m = in[0].shape.dim[rk - 2], kk = in[0].shape.dim[rk - 1], n = in[1].shape.dim[rk - 1];
    int64_t b = w / (m * n), i = (w / n) % m, j = w % n;
    nxvk_sb_printf(d, "output [%lld,%lld,%lld] = row %lld of input 1 . column %lld of input 2 (k=%lld); first terms:\n",
              (long long)b, (long long)i, (long long)j, (long long)i, (long long)j, (long long)kk);
    for (int64_t q = 0; q < kk && q < DIAG_TERMS / 2; q++) {
      elem_text(&in[0], b * m * kk + i * kk + q, t, sizeof t);
      elem_text(&in[1], b * kk * n + q * n + j, g, sizeof g);
      nxvk_sb_printf(d, "  x[%lld] %s * y[%lld] %s\n", (long long)q, t, (long long)q, g);
    }
  }
  elem_text(got, w, g, sizeof g);
  elem_text(ref, w, r, sizeof r);
  double u = nxvk_ulp_diff(ref->dtype, nxvk_host_get(got, w), nxvk_host_get(ref, w));
  nxvk_sb_printf(d, "gpu: %s\n", g);
  nxvk_sb_printf(d, "ref: %s   (ulp distance %g)\n", r, u);
  cJSON_AddItemToObject(jf, "gpu", json_elem(got, w));
  cJSON_AddItemToObject(jf, "ref", json_elem(ref, w));
  if (isinf(u)) cJSON_AddStringToObject(jf, "ulp", "inf");
  else cJSON_AddNumberToObject(jf, "ulp", u);
  if (op->expr) nxvk_sb_printf(d, "kernel expression: %s\n", op->expr);

  /* the element alone: do the values themselves give the result? */
  nxvk_host alone[CASE_MAX_IN] = {{0}}, flushed[CASE_MAX_IN] = {{0}}, ag = {0}, ar = {0}, fr = {0};
  nxvk_attrs aa;
  int na = alone_inputs(op, k, in, got, w, alone, &aa), rc = NXVK_OK;
  bool same = false, denormal_in = false;
  if (na > 0) {
    rc = conf_gpu_run(R->ctx, op, &aa, alone, na, &ag);
    if (rc == NXVK_OK) rc = nxvk_op_ref(op, &aa, alone, na, &ar);
    if (rc == NXVK_OK && nxvk_host_count(&ag) >= 1) {
      nxvk_cmp c1;
      same = ag.dtype == got->dtype &&
             memcmp(ag.data, (const char *)got->data + w * (int64_t)nxvk_dtype_size(got->dtype),
                    nxvk_dtype_size(got->dtype)) == 0;
      bool over = nxvk_compare(op, &aa, alone, na, &ag, &ar, NULL, &c1) == NXVK_OK && c1.bad > 0;
      elem_text(&ag, 0, g, sizeof g);
      nxvk_sb_printf(d, "alone (%s): gpu %s, %s; %s\n",
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
      nxvk_sb_printf(d, "alone: %s\n", nxvk_errmsg());
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
      nxvk_sb_printf(d, "a denormal input on a device that may flush: no flush of the inputs gives the "
                   "GPU's value either\n");
    if (flush_mask) {
      char which[32] = "";
      for (int i = 0; i < na; i++)
        if (flush_mask & (1 << i)) snprintf(which + strlen(which), sizeof which - strlen(which), "%s%d", which[0] ? "," : "", i + 1);
      nxvk_sb_printf(d, "the GPU's value is the reference with input %s flushed to zero%s\n", which,
                flush_mask == (1 << na) - 1 ? "" : " and the others kept (each instruction may flush)");
    }
    /* a result below the smallest normal before rounding, rounded up to it */
    double gv = nxvk_host_get(got, w), rv = nxvk_host_get(ref, w);
    double tiny = ref->dtype == NXVK_F32 ? FLT_MIN : DBL_MIN;
    tiny_flush = is_float(ref->dtype) && !preserves(&R->info, ref->dtype) && gv == 0 && fabs(rv) == tiny;
    if (tiny_flush)
      nxvk_sb_printf(d, "the exact result is below the smallest normal and rounds up to it: the device "
                   "flushed it before rounding\n");
  }
  if (is_float(ref->dtype) && nxvk_host_get(got, w) == 0 && nxvk_host_get(ref, w) == 0)
    nxvk_sb_printf(d, "only the sign of zero differs: unless a kernel declares SignedZeroInfNanPreserve "
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
  nxvk_sb_printf(d, "attribution: %s%s\n", blame,
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
