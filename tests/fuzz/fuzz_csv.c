/*
 * fuzz_csv.c - nxvk_csv_read on arbitrary files.
 *
 * Input layout: the first byte picks the dtype (byte % 4: f32 f64 i32 u8),
 * the rest is the file.  nxvk_csv_read takes a path, so each input is
 * written to one scratch file (a memfd on Linux, else a temp file) that is
 * rewritten per input and read through its path.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_common.h"

static int scratch_fd = -1;
static char scratch_path[256];

static void scratch_open(void) {
  if (scratch_fd >= 0) return;
#if defined(__linux__) && defined(MFD_CLOEXEC)
  scratch_fd = memfd_create("fuzz_csv", MFD_CLOEXEC);
  if (scratch_fd >= 0) {
    snprintf(scratch_path, sizeof scratch_path, "/proc/self/fd/%d", scratch_fd);
    if (access(scratch_path, R_OK) == 0) return;
    close(scratch_fd); /* no /proc: fall back to a file */
  }
#endif
  const char *dir = getenv("TMPDIR");
  snprintf(scratch_path, sizeof scratch_path, "%s/fuzz_csv.XXXXXX", dir && *dir ? dir : "/tmp");
  scratch_fd = mkstemp(scratch_path);
  FUZZ_CHECK(scratch_fd >= 0, "cannot create a scratch file %s", scratch_path);
  unlink(scratch_path); /* the name is reused below only while the fd is open */
  snprintf(scratch_path, sizeof scratch_path, "/dev/fd/%d", scratch_fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  static const nxvk_dtype dtypes[4] = {NXVK_F32, NXVK_F64, NXVK_I32, NXVK_U8};
  nxvk_dtype dt = dtypes[data[0] % 4];
  scratch_open();
  FUZZ_CHECK(ftruncate(scratch_fd, 0) == 0, "ftruncate");
  size_t left = size - 1;
  for (const uint8_t *p = data + 1; left > 0;) {
    ssize_t k = pwrite(scratch_fd, p, left, (off_t)(p - (data + 1)));
    FUZZ_CHECK(k > 0, "pwrite");
    p += k;
    left -= (size_t)k;
  }

  nxvk_host t;
  int rc = nxvk_csv_read(scratch_path, dt, &t);
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
