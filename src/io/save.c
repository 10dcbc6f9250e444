/* save.c - a tensor written as .npy, .csv, .json or (several) .npz, to an
 * nxvk_out (out.c decides how the path is replaced). */
#define _POSIX_C_SOURCE 200809L

#include "../core/internal.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static const char *const fmt_names[] = {"", "npy", "csv", "json", "npz"};

const char *nxvk_format_name(nxvk_format f) {
  return (unsigned)f < NXVK_ARRAY_LEN(fmt_names) ? fmt_names[f] : "";
}

int nxvk_format_parse(const char *name, nxvk_format *out) {
  for (size_t i = 1; name && i < NXVK_ARRAY_LEN(fmt_names); i++)
    if (strcmp(name, fmt_names[i]) == 0) {
      *out = (nxvk_format)i;
      return NXVK_OK;
    }
  return nxvk_seterr(NXVK_E_BAD_REQUEST, "'%s' is not a format (npy csv json npz)", name ? name : "");
}

nxvk_format nxvk_format_of_path(const char *path) {
  const char *slash = strrchr(path, '/');
  const char *dot = strrchr(slash ? slash + 1 : path, '.');
  if (!dot || dot == (slash ? slash + 1 : path)) return NXVK_FMT_NONE; /* ".npy" alone: a hidden name */
  char ext[8];
  size_t n = strlen(dot + 1);
  if (n == 0 || n >= sizeof ext) return NXVK_FMT_NONE;
  for (size_t i = 0; i <= n; i++) ext[i] = (char)tolower((unsigned char)dot[1 + i]);
  for (size_t i = 1; i < NXVK_ARRAY_LEN(fmt_names); i++)
    if (strcmp(ext, fmt_names[i]) == 0) return (nxvk_format)i;
  return NXVK_FMT_NONE;
}

/* ------------------------------------------------------------------ csv */

static int csv_value(nxvk_out *o, const nxvk_host *t, int64_t i, const char *sep) {
  double v = nxvk_host_get(t, i);
  if (t->dtype == NXVK_U64)  /* integers exactly, u64 unsigned */
    return nxvk_out_printf(o, "%s%llu", sep, (unsigned long long)nxvk_host_get_int(t, i));
  if (!(NXVK_DT(t->dtype) & NXVK_DT_FLOAT))
    return nxvk_out_printf(o, "%s%lld", sep, (long long)nxvk_host_get_int(t, i));
  if (isnan(v)) return nxvk_out_printf(o, "%snan", sep);
  if (isinf(v)) return nxvk_out_printf(o, "%s%s", sep, v < 0 ? "-inf" : "inf");
  /* enough digits to read back the same value of the dtype */
  return nxvk_out_printf(o, t->dtype == NXVK_F32 ? "%s%.9g" : t->dtype == NXVK_F64 ? "%s%.17g" : "%s%.5g",
                         sep, v);
}

/* numpy.savetxt's layout: a 2-D tensor one row a line, a 1-D one a value a
 * line (numpy.loadtxt reads it back as 1-D), a scalar one line. */
static int save_csv(nxvk_out *o, const nxvk_host *t) {
  if (t->shape.rank > 2)
    return nxvk_seterr(NXVK_E_BAD_REQUEST,
                       "%s: CSV holds at most 2 dimensions, the tensor has %d (write .npy or .json)",
                       nxvk_out_path(o), t->shape.rank);
  int64_t rows = t->shape.rank == 0 ? 1 : t->shape.dim[0];
  int64_t cols = t->shape.rank == 2 ? t->shape.dim[1] : 1;
  int rc = NXVK_OK;
  for (int64_t r = 0; r < rows && rc == NXVK_OK; r++) {
    for (int64_t c = 0; c < cols && rc == NXVK_OK; c++) rc = csv_value(o, t, r * cols + c, c ? "," : "");
    if (rc == NXVK_OK) rc = nxvk_out_write(o, "\n", 1);
  }
  return rc;
}

/* ------------------------------------------------------------------ npz */

/* A zip of stored members NAME.npy, as numpy.savez writes (numpy.load reads
 * it; members of 4 GiB and more would need zip64 and are refused). */
static void le16(uint8_t *p, unsigned v) { p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8); }
static void le32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

int nxvk_npz_save(nxvk_out *o, int n, const char *const *names, const nxvk_host *const *ts) {
  uint8_t *cd = NULL;
  size_t cdlen = 0;
  uint64_t off = 0;
  int rc = NXVK_OK;
  for (int i = 0; i < n && rc == NXVK_OK; i++) {
    size_t nl = strlen(names[i]) + 4;
    if (nl > 1000) {
      rc = nxvk_seterr(NXVK_E_BAD_REQUEST, "%s: member name '%.40s...' is too long", nxvk_out_path(o), names[i]);
      break;
    }
    char mname[1024];
    snprintf(mname, sizeof mname, "%s.npy", names[i]);
    uint8_t *h;
    size_t hl;
    rc = nxvk_npy_header(ts[i], &h, &hl);
    if (rc) break;
    size_t dl = nxvk_host_bytes(ts[i]);
    uint64_t size = (uint64_t)hl + dl;
    if (size >= 0xFFFFFFFFull || off + size + 30 + nl >= 0xFFFFFFFFull) {
      free(h);
      rc = nxvk_seterr(NXVK_E_TOO_LARGE, "%s: .npz output over 4 GiB is not supported (write .npy files)",
                       nxvk_out_path(o));
      break;
    }
    uLong crc = crc32(0L, Z_NULL, 0);
    crc = crc32(crc, h, (uInt)hl);
    for (size_t at = 0; at < dl;) { /* crc32 takes uInt lengths */
      size_t step = dl - at > (1u << 30) ? (1u << 30) : dl - at;
      crc = crc32(crc, (const Bytef *)ts[i]->data + at, (uInt)step);
      at += step;
    }
    uint8_t lh[30] = {0};
    le32(lh, 0x04034b50);
    le16(lh + 4, 20);
    le16(lh + 12, 0x21); /* 1980-01-01, as numpy's zipfile writes it */
    le32(lh + 14, (uint32_t)crc);
    le32(lh + 18, (uint32_t)size);
    le32(lh + 22, (uint32_t)size);
    le16(lh + 26, (unsigned)nl);
    rc = nxvk_out_write(o, lh, sizeof lh);
    if (rc == NXVK_OK) rc = nxvk_out_write(o, mname, nl);
    if (rc == NXVK_OK) rc = nxvk_out_write(o, h, hl);
    if (rc == NXVK_OK) rc = nxvk_out_write(o, ts[i]->data, dl);
    free(h);
    uint8_t *ncd = realloc(cd, cdlen + 46 + nl);
    if (!ncd) {
      rc = nxvk_seterr(NXVK_E_NO_MEMORY, "%s: out of memory", nxvk_out_path(o));
      break;
    }
    cd = ncd;
    uint8_t *c = cd + cdlen;
    memset(c, 0, 46);
    le32(c, 0x02014b50);
    le16(c + 4, 20);
    le16(c + 6, 20);
    le16(c + 14, 0x21);
    le32(c + 16, (uint32_t)crc);
    le32(c + 20, (uint32_t)size);
    le32(c + 24, (uint32_t)size);
    le16(c + 28, (unsigned)nl);
    le32(c + 38, 0644u << 16); /* external attributes: a plain file */
    le32(c + 42, (uint32_t)off);
    memcpy(c + 46, mname, nl);
    cdlen += 46 + nl;
    off += 30 + nl + size;
  }
  if (rc == NXVK_OK) rc = nxvk_out_write(o, cd, cdlen);
  if (rc == NXVK_OK) {
    uint8_t e[22] = {0};
    le32(e, 0x06054b50);
    le16(e + 8, (unsigned)n);
    le16(e + 10, (unsigned)n);
    le32(e + 12, (uint32_t)cdlen);
    le32(e + 16, (uint32_t)off);
    rc = nxvk_out_write(o, e, sizeof e);
  }
  free(cd);
  return rc;
}

/* ------------------------------------------------------------------ one tensor */

int nxvk_tensor_save(nxvk_out *o, nxvk_format f, const nxvk_host *t) {
  switch (f) {
  case NXVK_FMT_NPY: {
    uint8_t *h;
    size_t hl;
    int rc = nxvk_npy_header(t, &h, &hl);
    if (rc) return rc;
    rc = nxvk_out_write(o, h, hl);
    free(h);
    if (rc == NXVK_OK) rc = nxvk_out_write(o, t->data, nxvk_host_bytes(t));
    return rc;
  }
  case NXVK_FMT_CSV: return save_csv(o, t);
  case NXVK_FMT_JSON: {
    char *text;
    int rc = nxvk_json_tensor_format(t, &text);
    if (rc) return rc;
    rc = nxvk_out_write(o, text, strlen(text));
    if (rc == NXVK_OK) rc = nxvk_out_write(o, "\n", 1);
    free(text);
    return rc;
  }
  case NXVK_FMT_NPZ: {
    const char *name = "arr_0"; /* numpy.savez's name for an unnamed array */
    return nxvk_npz_save(o, 1, &name, &t);
  }
  default: return nxvk_seterr(NXVK_E_BAD_REQUEST, "%s: no output format", nxvk_out_path(o));
  }
}
