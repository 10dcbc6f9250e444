/*
 * fuzz_graph.c - nxvk_graph_parse on arbitrary text (no device).
 *
 * A graph that parses must be exactly one JSON value (text after it is
 * refused), is walked through every accessor, its shapes are
 * inferred op by op (nxvk_op_infer) with made-up metas for file and handle
 * inputs, and when every value is small it is evaluated on the CPU
 * reference (nxvk_graph_ref), so fuzzed attributes reach the shape rules
 * and the reference kernels too.
 */
#include <cjson/cJSON.h>

#include "fuzz_common.h"

#define REF_MAX_ELEMENTS 4096 /* per value: keeps dot and friends cheap */
#define REF_MAX_NODES 64

/* What a file or handle input stands for: its name picks one of a few. */
static nxvk_meta made_up_meta(const char *name) {
  static const nxvk_meta metas[] = {
      {NXVK_F32, {2, {2, 3}}}, {NXVK_F64, {1, {3}}}, {NXVK_I32, {0, {0}}},
      {NXVK_U8, {3, {2, 1, 3}}}, {NXVK_F32, {2, {3, 3}}}, {NXVK_F32, {1, {0}}},
  };
  unsigned h = 0;
  for (const char *p = name; *p; p++) h = h * 31 + (unsigned char)*p;
  return metas[h % (sizeof metas / sizeof metas[0])];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  nxvk_graph *g = NULL;
  int rc = nxvk_graph_parse((const char *)data, size, "fuzz/graph.json", &g);
  if (rc) {
    fuzz_check_error(rc);
    FUZZ_CHECK(g == NULL, "a failed parse returned a graph");
    return 0;
  }
  /* a graph file is one JSON value: text after it must have been refused */
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts((const char *)data, size, &end, 0);
  FUZZ_CHECK(root != NULL, "a graph parsed that cJSON does not");
  for (const char *p = end; p < (const char *)data + size; p++)
    FUZZ_CHECK(*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r',
               "text after the graph's JSON value was accepted (byte %d)", (int)(p - (const char *)data));
  cJSON_Delete(root);

  int ni = nxvk_graph_input_count(g), nn = nxvk_graph_node_count(g), no = nxvk_graph_output_count(g);
  FUZZ_CHECK(ni >= 0 && nn >= 0 && nn <= NXVK_MAX_GRAPH_NODES && no > 0, "%d %d %d", ni, nn, no);
  int total = ni + nn;
  nxvk_meta *metas = calloc((size_t)total + 1, sizeof *metas);
  nxvk_host *inputs = calloc((size_t)ni + 1, sizeof *inputs);
  nxvk_host *values = calloc((size_t)total + 1, sizeof *values);
  FUZZ_CHECK(metas && inputs && values, "out of memory");

  bool small = nn <= REF_MAX_NODES;
  for (int i = 0; i < ni; i++) {
    const char *name = nxvk_graph_input_name(g, i);
    FUZZ_CHECK(name != NULL, "input %d has no name", i);
    FUZZ_CHECK(strcmp(nxvk_graph_value_name(g, i), name) == 0, "value name of input %d", i);
    const nxvk_attrs *a;
    const int *ops;
    int nops;
    FUZZ_CHECK(nxvk_graph_value_op(g, i, &a, &ops, &nops) == NULL, "input %d has an op", i);
    switch (nxvk_graph_input_kind_of(g, i)) {
    case NXVK_GRAPH_IN_FILE:
      FUZZ_CHECK(nxvk_graph_input_path(g, i) != NULL, "file input without a path");
      metas[i] = made_up_meta(name);
      rc = nxvk_host_alloc(&inputs[i], metas[i].dtype, &metas[i].shape);
      FUZZ_CHECK(rc == NXVK_OK, "alloc");
      break;
    case NXVK_GRAPH_IN_HANDLE:
      FUZZ_CHECK(nxvk_graph_input_handle(g, i) >= 1, "handle 0");
      metas[i] = made_up_meta(name);
      rc = nxvk_host_alloc(&inputs[i], metas[i].dtype, &metas[i].shape);
      FUZZ_CHECK(rc == NXVK_OK, "alloc");
      break;
    case NXVK_GRAPH_IN_INLINE: {
      const nxvk_host *h = nxvk_graph_input_host(g, i);
      fuzz_check_host(h);
      metas[i] = (nxvk_meta){h->dtype, h->shape};
      inputs[i] = *h; /* borrowed: the graph frees it */
      inputs[i].data = NULL;
      rc = nxvk_host_alloc(&inputs[i], h->dtype, &h->shape);
      FUZZ_CHECK(rc == NXVK_OK, "alloc");
      if (nxvk_host_bytes(h)) memcpy(inputs[i].data, h->data, nxvk_host_bytes(h));
      break;
    }
    default: FUZZ_CHECK(0, "input %d: kind %d", i, (int)nxvk_graph_input_kind_of(g, i));
    }
    if (nxvk_host_count(&inputs[i]) > REF_MAX_ELEMENTS) small = false;
  }

  /* shapes op by op, as nxvk_graph_run_opts infers them before any work */
  bool inferred = true;
  for (int i = 0; i < nn; i++) {
    const nxvk_attrs *a;
    const int *ops;
    int nops;
    const nxvk_op_desc *op = nxvk_graph_value_op(g, ni + i, &a, &ops, &nops);
    FUZZ_CHECK(op != NULL && nops >= 0 && nops <= NXVK_MAX_INPUTS, "node %d", i);
    FUZZ_CHECK(nxvk_graph_value_name(g, ni + i) != NULL, "node %d has no name", i);
    nxvk_meta in[NXVK_MAX_INPUTS];
    for (int k = 0; k < nops; k++) {
      FUZZ_CHECK(ops[k] >= 0 && ops[k] < ni + i, "node %d reads value %d", i, ops[k]);
      in[k] = metas[ops[k]];
    }
    if (!inferred) continue;
    rc = nxvk_op_infer(op, a, in, nops, &metas[ni + i]);
    if (rc) {
      fuzz_check_error(rc);
      inferred = false;
      continue;
    }
    int64_t n;
    FUZZ_CHECK(nxvk_shape_count(&metas[ni + i].shape, &n) == NXVK_OK, "inferred shape");
    if (n > REF_MAX_ELEMENTS) small = false;
  }
  for (int o = 0; o < no; o++) {
    FUZZ_CHECK(nxvk_graph_output_name(g, o) != NULL, "output %d has no name", o);
    int v = nxvk_graph_output_value(g, o);
    FUZZ_CHECK(v >= 0 && v < total, "output %d is value %d of %d", o, v, total);
    (void)nxvk_graph_output_path(g, o);
  }

  if (inferred && small) {
    rc = nxvk_graph_ref(g, inputs, values);
    if (rc) {
      fuzz_check_error(rc);
    } else {
      for (int v = 0; v < total; v++) {
        FUZZ_CHECK(values[v].dtype == metas[v].dtype && nxvk_shape_equal(&values[v].shape, &metas[v].shape),
                   "value %d: the reference's result differs from the inferred meta", v);
        fuzz_check_host(&values[v]);
        nxvk_host_free(&values[v]);
      }
    }
  }
  for (int i = 0; i < ni; i++) nxvk_host_free(&inputs[i]);
  free(inputs);
  free(values);
  free(metas);
  nxvk_graph_free(g);
  return 0;
}
