/*
 * fuzz_npz.c - nxvk_npz_read_mem on arbitrary bytes (a zip of .npy members,
 * stored or deflated, zip64 fields, CRC-32 checked).
 *
 * A file that parses gives n tensors with names, each a valid host tensor;
 * written again with nxvk_npz_save (stored members, as numpy.savez) and read
 * back, it gives the same names and the same tensors, byte for byte.
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  nxvk_npz z;
  int rc = nxvk_npz_read_mem(data, size, "fuzz.npz", &z);
  if (rc) {
    fuzz_check_error(rc);
    FUZZ_CHECK(z.n == 0 && z.host == NULL && z.names == NULL, "a failed read left arrays behind");
    return 0;
  }
  for (int i = 0; i < z.n; i++) {
    FUZZ_CHECK(z.names[i] != NULL, "member %d has no name", i);
    fuzz_check_host(&z.host[i]);
  }
  static char path[64];
  if (!path[0]) snprintf(path, sizeof path, "%s/nxvk_fuzz_npz.%ld.npz", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid());
  nxvk_out *o;
  rc = nxvk_out_open(path, 0, &o);
  FUZZ_CHECK(rc == NXVK_OK, "open %s: %s", path, nxvk_errmsg());
  const char **names = calloc((size_t)z.n + 1, sizeof *names);
  const nxvk_host **ts = calloc((size_t)z.n + 1, sizeof *ts);
  for (int i = 0; i < z.n; i++) names[i] = z.names[i], ts[i] = &z.host[i];
  rc = nxvk_npz_save(o, z.n, names, ts);
  if (rc == NXVK_OK) rc = nxvk_out_commit(o);
  else nxvk_out_abort(o);
  FUZZ_CHECK(rc == NXVK_OK, "writing what was read: %s", nxvk_errmsg());
  FILE *f = fopen(path, "rb");
  FUZZ_CHECK(f != NULL, "reopen %s", path);
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *buf = malloc(len > 0 ? (size_t)len : 1);
  FUZZ_CHECK(fread(buf, 1, (size_t)len, f) == (size_t)len, "short read of %s", path);
  fclose(f);
  unlink(path);
  nxvk_npz back;
  rc = nxvk_npz_read_mem(buf, (size_t)len, "roundtrip.npz", &back);
  FUZZ_CHECK(rc == NXVK_OK, "reading what npz_save wrote: %s", nxvk_errmsg());
  FUZZ_CHECK(back.n == z.n, "%d members written, %d read back", z.n, back.n);
  for (int i = 0; i < z.n; i++) {
    FUZZ_CHECK(strcmp(back.names[i], z.names[i]) == 0, "member %d: name %s came back as %s", i, z.names[i],
               back.names[i]);
    fuzz_check_same(&z.host[i], &back.host[i], "npz round trip");
  }
  free(buf);
  free(names);
  free(ts);
  nxvk_npz_free(&back);
  nxvk_npz_free(&z);
  return 0;
}
