/*
 * fuzz_json_tensor.c - nxvk_json_tensor_parse on arbitrary text.
 *
 * A tensor that parses must format (nxvk_json_tensor_format) and parse back
 * as the same tensor: NaN stays NaN, -0 and infinities keep their sign, f32
 * values survive their 9 significant digits.  An empty tensor of many
 * lists ([1000000, 0]) formats to megabytes of "[]" by design; those are
 * formatted but not parsed back, which would only measure cJSON.
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  nxvk_host t;
  int rc = nxvk_json_tensor_parse((const char *)data, size, "fuzz tensor", &t);
  if (rc) {
    fuzz_check_error(rc);
    FUZZ_CHECK(t.data == NULL, "a failed parse left data behind");
    return 0;
  }
  fuzz_check_host(&t);

  char *text = NULL;
  rc = nxvk_json_tensor_format(&t, &text);
  FUZZ_CHECK(rc == NXVK_OK, "format of a tensor just parsed: %s", nxvk_errmsg());
  if (strlen(text) > ((size_t)1 << 18)) {
    free(text);
    nxvk_host_free(&t);
    return 0;
  }
  nxvk_host back;
  rc = nxvk_json_tensor_parse(text, strlen(text), "round trip", &back);
  FUZZ_CHECK(rc == NXVK_OK, "parsing what format wrote: %s: %.200s", nxvk_errmsg(), text);
  fuzz_check_same(&t, &back, "json round trip");
  free(text);
  nxvk_host_free(&back);
  nxvk_host_free(&t);
  return 0;
}
