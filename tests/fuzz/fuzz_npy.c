/*
 * fuzz_npy.c - nxvk_npy_read_mem on arbitrary bytes.
 *
 * A file that parses must encode again (nxvk_npy_encode) and read back as
 * the same tensor: dtype, shape and every byte (fortran order and byte
 * swapping are gone after the first read).
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  nxvk_host t;
  int rc = nxvk_npy_read_mem(data, size, "fuzz.npy", &t);
  if (rc) {
    fuzz_check_error(rc);
    FUZZ_CHECK(t.data == NULL, "a failed read left data behind");
    return 0;
  }
  fuzz_check_host(&t);

  void *buf = NULL;
  size_t len = 0;
  rc = nxvk_npy_encode(&t, &buf, &len);
  FUZZ_CHECK(rc == NXVK_OK, "encode of a tensor just read: %s", nxvk_errmsg());
  nxvk_host back;
  rc = nxvk_npy_read_mem(buf, len, "roundtrip.npy", &back);
  FUZZ_CHECK(rc == NXVK_OK, "reading what encode wrote: %s", nxvk_errmsg());
  FUZZ_CHECK((len - nxvk_host_bytes(&back)) % 64 == 0, "data does not start at a multiple of 64");
  fuzz_check_same(&t, &back, "npy round trip");
  free(buf);
  nxvk_host_free(&back);
  nxvk_host_free(&t);
  return 0;
}
