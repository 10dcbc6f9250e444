/*
 * fuzz_attrs.c - nxvk_attrs_parse for every op of the table on arbitrary
 * text (the --attrs of `nxvk run` and "attrs" of a port op request).
 *
 * Attributes that parse are handed to the op's shape rule (nxvk_op_infer)
 * with a few input metas of the op's arity, so fuzzed axes, permutations,
 * slices and shapes reach the code that trusts them.
 */
#include "fuzz_common.h"

static const nxvk_meta probe_metas[] = {
    {NXVK_F32, {3, {2, 3, 4}}},
    {NXVK_F64, {1, {5}}},
    {NXVK_I32, {0, {0}}},
    {NXVK_U8, {4, {1, 0, 2, 1}}},
    {NXVK_F32, {8, {1, 2, 1, 2, 1, 2, 1, 2}}},
};
#define NPROBES (sizeof probe_metas / sizeof probe_metas[0])

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  FUZZ_CHECK(text != NULL, "out of memory");
  memcpy(text, data, size);
  text[size] = '\0';
  for (int i = 0; i < nxvk_op_count(); i++) {
    const nxvk_op_desc *op = nxvk_op_at(i);
    nxvk_attrs a;
    int rc = nxvk_attrs_parse(op, text, &a);
    if (rc) {
      fuzz_check_error(rc);
      continue;
    }
    FUZZ_CHECK((a.set & ~op->attrs) == 0, "%s accepted attributes it does not declare (0x%x)",
               op->name, a.set & ~op->attrs);
    FUZZ_CHECK(a.naxes >= 0 && a.naxes <= NXVK_MAX_RANK && a.nperm >= 0 &&
                   a.nperm <= NXVK_MAX_RANK && a.nslice >= 0 && a.nslice <= NXVK_MAX_RANK &&
                   a.shape.rank >= 0 && a.shape.rank <= NXVK_MAX_RANK,
               "%s: counts out of range", op->name);
    FUZZ_CHECK(memchr(a.variant, 0, sizeof a.variant) != NULL, "variant not terminated");
    int nin = op->arity >= 0 ? op->arity : 1 + (int)(size % 3);
    for (size_t p = 0; p < NPROBES; p++) {
      nxvk_meta in[4], out;
      for (int k = 0; k < nin && k < 4; k++) in[k] = probe_metas[(p + (size_t)k * (size & 1)) % NPROBES];
      rc = nxvk_op_infer(op, &a, in, nin < 4 ? nin : 4, &out);
      if (rc) {
        fuzz_check_error(rc);
        continue;
      }
      int64_t n;
      FUZZ_CHECK(nxvk_shape_count(&out.shape, &n) == NXVK_OK && (unsigned)out.dtype < NXVK_NDTYPES,
                 "%s: inferred meta is not valid", op->name);
    }
  }
  free(text);
  return 0;
}
