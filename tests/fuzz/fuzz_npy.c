/*
 * fuzz_npy.c - nxvk_npy_read_mem on arbitrary bytes.
 *
 * The same bytes are also read as a file (nxvk_npy_read on a scratch file:
 * the path `nxvk run x.npy` takes, header first, data straight into the
 * tensor), which must agree with the in-memory reader: the same error
 * code, or the same tensor.  A file that parses must encode again
 * (nxvk_npy_encode) and read back as the same tensor: dtype, shape and every
 * byte (fortran order and byte swapping are gone after the first read).
 */
#define _GNU_SOURCE /* memfd_create */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  nxvk_host t, f;
  int rc = nxvk_npy_read_mem(data, size, "fuzz.npy", &t);
  int frc = nxvk_npy_read(fuzz_scratch_file(data, size), &f);
  FUZZ_CHECK(rc == frc, "memory read says %s, file read says %s (%s)", nxvk_err_name(rc),
             nxvk_err_name(frc), nxvk_errmsg());
  if (rc) {
    fuzz_check_error(rc);
    FUZZ_CHECK(t.data == NULL && f.data == NULL, "a failed read left data behind");
    return 0;
  }
  fuzz_check_host(&t);
  fuzz_check_same(&t, &f, "file read vs memory read");
  nxvk_host_free(&f);

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
