/* load.c - a tensor named on a command line: inline JSON, *.npy, *.npz,
 * *.csv, or "-" for stdin.  The input is opened once; the bytes looked at to
 * tell its format are handed on to the reader, so pipes work. */
#define _POSIX_C_SOURCE 200809L

#include "../core/internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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

typedef enum { K_NPY, K_NPZ, K_CSV } kind;

/* The open input's kind: by extension, else by its first bytes. */
static int sniff(nxvk_src *s, const char *arg, kind *k) {
  if (has_ext(arg, "npy")) return *k = K_NPY, NXVK_OK;
  if (has_ext(arg, "npz")) return *k = K_NPZ, NXVK_OK;
  if (has_ext(arg, "csv")) return *k = K_CSV, NXVK_OK;
  const uint8_t *p;
  size_t got;
  int rc = nxvk_src_peek(s, 6, &p, &got);
  if (rc) return rc;
  if (got == 6 && memcmp(p, "\x93NUMPY", 6) == 0) return *k = K_NPY, NXVK_OK;
  if (got >= 4 && (memcmp(p, "PK\x03\x04", 4) == 0 || memcmp(p, "PK\x05\x06", 4) == 0))
    return *k = K_NPZ, NXVK_OK;
  if (!s->regular) return *k = K_CSV, NXVK_OK; /* a pipe of text */
  return nxvk_seterr(NXVK_E_BAD_FILE,
                     "%s: not a tensor: expected a .npy, .npz or .csv file, or inline JSON {...}", arg);
}

static int load(const char *arg, const nxvk_load_opts *o, nxvk_host *out, int max, int *n, bool all) {
  *n = 0;
  if (!arg || !*arg) return nxvk_seterr(NXVK_E_BAD_REQUEST, "empty tensor argument");
  const char *p = arg;
  while (isspace((unsigned char)*p)) p++;
  if (*p == '{') {
    if (max < 1) return nxvk_seterr(NXVK_E_BAD_REQUEST, "too many inputs");
    int rc = nxvk_json_tensor_parse(arg, strlen(arg), "inline tensor", out);
    *n = rc ? 0 : 1;
    return rc;
  }
  nxvk_src s;
  int rc = nxvk_src_open(arg, &s);
  if (rc) {
    if (!has_ext(arg, "npy") && !has_ext(arg, "npz") && !has_ext(arg, "csv") && rc == NXVK_E_IO &&
        errno == ENOENT)
      rc = nxvk_seterr(NXVK_E_IO, "%s: cannot open: %s (expected a .npy, .npz or .csv file, or inline JSON {...})",
                       arg, strerror(ENOENT));
    return rc;
  }
  kind k = K_CSV;
  rc = sniff(&s, arg, &k);
  if (rc == NXVK_OK && k != K_NPZ && max < 1) rc = nxvk_seterr(NXVK_E_BAD_REQUEST, "too many inputs");
  if (rc == NXVK_OK && k == K_NPY) rc = nxvk_npy_read_src(&s, out);
  if (rc == NXVK_OK && k == K_CSV)
    rc = nxvk_csv_read_src(&s, o->csv_dtype, o->csv_header, out);
  if (rc == NXVK_OK && k != K_NPZ) *n = 1;
  if (rc == NXVK_OK && k == K_NPZ) {
    nxvk_npz z;
    rc = nxvk_npz_read_src(&s, &z);
    int pick = -1;
    if (rc == NXVK_OK && !all) {
      for (int i = 0; i < z.n; i++)
        if (o->npz_member ? strcmp(z.names[i], o->npz_member) == 0 : z.n == 1) pick = i;
      if (pick < 0) {
        char list[256] = "";
        for (int i = 0; i < z.n && strlen(list) < 200; i++)
          snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? " " : "", z.names[i]);
        rc = o->npz_member
                 ? nxvk_seterr(NXVK_E_BAD_FILE, "%s: no array named '%s' (it has: %s)", arg, o->npz_member, list)
                 : nxvk_seterr(NXVK_E_BAD_FILE, "%s: holds %d arrays (%s), one was expected", arg, z.n, list);
      }
    }
    if (rc == NXVK_OK && all && z.n > max)
      rc = nxvk_seterr(NXVK_E_BAD_REQUEST, "%s: %d arrays are more inputs than the %d allowed", arg, z.n, max);
    for (int i = 0; rc == NXVK_OK && i < z.n; i++) {
      if (!all && i != pick) continue;
      out[*n] = z.host[i]; /* moved: z no longer owns it */
      memset(&z.host[i], 0, sizeof z.host[i]);
      (*n)++;
    }
    nxvk_npz_free(&z); /* what was moved out is zeroed there */
  }
  nxvk_src_close(&s);
  return rc;
}

int nxvk_tensor_load_opts(const char *arg, const nxvk_load_opts *o, nxvk_host *out) {
  if (!out) return nxvk_seterr(NXVK_E_BAD_REQUEST, "tensor load: no output tensor");
  memset(out, 0, sizeof *out);
  nxvk_load_opts dflt = {0};
  int n;
  return load(arg, o ? o : &dflt, out, 1, &n, false);
}

int nxvk_tensor_load_all(const char *arg, const nxvk_load_opts *o, nxvk_host *out, int max, int *n) {
  nxvk_load_opts dflt = {0};
  for (int i = 0; i < max; i++) memset(&out[i], 0, sizeof out[i]);
  return load(arg, o ? o : &dflt, out, max, n, true);
}

int nxvk_tensor_load(const char *arg, nxvk_dtype csv_dtype, nxvk_host *out) {
  nxvk_load_opts o = {.csv_dtype = csv_dtype};
  return nxvk_tensor_load_opts(arg, &o, out);
}
