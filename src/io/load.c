/* load.c - a tensor named on a command line: inline JSON, *.npy or *.csv. */
#define _POSIX_C_SOURCE 200809L

#include "../core/internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

static bool has_ext(const char *path, const char *ext) {
  const char *slash = strrchr(path, '/');
  const char *dot = strrchr(slash ? slash + 1 : path, '.');
  if (!dot) return false;
  for (const char *a = dot + 1, *b = ext;; a++, b++) {
    if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return false;
    if (!*a) return true;
  }
}

int nxvk_tensor_load(const char *arg, nxvk_dtype csv_dtype, nxvk_host *out) {
  if (!out) return nxvk_seterr(NXVK_E_BAD_REQUEST, "tensor load: no output tensor");
  memset(out, 0, sizeof *out);
  if (!arg || !*arg) return nxvk_seterr(NXVK_E_BAD_REQUEST, "empty tensor argument");

  const char *p = arg;
  while (isspace((unsigned char)*p)) p++;
  if (*p == '{') return nxvk_json_tensor_parse(arg, strlen(arg), "inline tensor", out);
  if (has_ext(arg, "npy")) return nxvk_npy_read(arg, out);
  if (has_ext(arg, "csv")) return nxvk_csv_read(arg, csv_dtype, out);

  /* No known extension: a .npy file says so in its first bytes. */
  FILE *f = fopen(arg, "rb");
  if (!f)
    return nxvk_seterr(NXVK_E_IO, "%s: cannot open: %s (expected a .npy or .csv file, or inline JSON {...})",
                       arg, strerror(errno));
  unsigned char magic[6];
  size_t got = fread(magic, 1, sizeof magic, f);
  fclose(f);
  if (got == sizeof magic && memcmp(magic, "\x93NUMPY", 6) == 0) return nxvk_npy_read(arg, out);
  return nxvk_seterr(NXVK_E_BAD_FILE,
                     "%s: not a tensor: expected a .npy or .csv file, or inline JSON {...}", arg);
}
