/*
 * fuzz_csv.c - nxvk_csv_read on arbitrary files.
 *
 * Input layout: the first byte picks the dtype (byte % 4: f32 f64 i32 u8),
 * the rest is the file.  nxvk_csv_read takes a path, so each input is
 * written to one scratch file (fuzz_scratch_file: a memfd on Linux, else a
 * temp file) that is rewritten per input and read through its path.
 */
#define _GNU_SOURCE /* memfd_create */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  static const nxvk_dtype dtypes[4] = {NXVK_F32, NXVK_F64, NXVK_I32, NXVK_U8};
  nxvk_dtype dt = dtypes[data[0] % 4];
  const char *path = fuzz_scratch_file(data + 1, size - 1);

  nxvk_host t;
  int rc = nxvk_csv_read(path, dt, &t);
  if (rc) {
    fuzz_check_error(rc);
    FUZZ_CHECK(t.data == NULL, "a failed read left data behind");
    return 0;
  }
  fuzz_check_host(&t);
  FUZZ_CHECK(t.dtype == dt, "dtype %s asked, %s read", nxvk_dtype_name(dt), nxvk_dtype_name(t.dtype));
  FUZZ_CHECK(t.shape.rank == 2 && t.shape.dim[0] >= 1, "a CSV table is 2-D with a row at least");
  nxvk_host_free(&t);
  return 0;
}
