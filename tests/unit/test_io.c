/* test_io.c - TAP tests for the tensor file readers and writers (npy, inline
 * JSON, CSV, nxvk_tensor_load).
 *
 *   test_io                          run the tests
 *   test_io --roundtrip IN.npy OUT.npy   read IN and write OUT (io_oracle.py)
 */
#define _POSIX_C_SOURCE 200809L

#include "nxvk.h"
#include "core/internal.h" /* nxvk_src: the CSV reader with --csv-header */
#include "tap.h"

#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define LEN(a) (sizeof(a) / sizeof((a)[0]))

static char tmpdir[64];

/* ------------------------------------------------------------- helpers */

static nxvk_shape shp(int rank, ...) {
  nxvk_shape s = {rank, {0}};
  va_list ap;
  va_start(ap, rank);
  for (int i = 0; i < rank; i++) s.dim[i] = va_arg(ap, int);
  va_end(ap);
  return s;
}

/* A tensor with awkward values: signed zeros, NaN, infinities, denormals,
 * extremes, then a ramp. */
static nxvk_host make(nxvk_dtype d, nxvk_shape s) {
  nxvk_host h;
  if (nxvk_host_alloc(&h, d, &s) != NXVK_OK) abort();
  int64_t n = nxvk_host_count(&h);
  static const double fedge[] = {0.0, -0.0, 1.0, -1.5, NAN, INFINITY, -INFINITY, 0.1,
                                 1.0 / 3.0, 1e-40, FLT_MIN, FLT_MAX, -FLT_MAX};
  static const double dedge[] = {0.0, -0.0, 1.0, -1.5, NAN, INFINITY, -INFINITY, 0.1,
                                 1.0 / 3.0, 5e-324, DBL_MIN, DBL_MAX, -DBL_MAX};
  static const double iedge[] = {0, -1, 1, 2147483647.0, -2147483648.0, 12345, -54321};
  for (int64_t i = 0; i < n; i++) {
    double v;
    switch (d) {
    case NXVK_F32: v = i < 13 ? fedge[i] : (double)i * 0.37 - 11; break;
    case NXVK_F64: v = i < 13 ? dedge[i] : (double)i * 0.37 - 11; break;
    case NXVK_I32: v = i < 7 ? iedge[i] : (double)(i * 7919 % 100003 - 50000); break;
    default: v = (double)((i * 37 + 3) % 256); break;
    }
    nxvk_host_set(&h, i, v);
  }
  return h;
}

static bool same(const nxvk_host *a, const nxvk_host *b) {
  if (a->dtype != b->dtype || !nxvk_shape_equal(&a->shape, &b->shape)) return false;
  size_t n = nxvk_host_bytes(a);
  return n == 0 || (a->data && b->data && memcmp(a->data, b->data, n) == 0);
}

static bool zeroed(const nxvk_host *h) { return h->data == NULL && h->shape.rank == 0; }

static bool msg_has(const char *s) { return strstr(nxvk_errmsg(), s) != NULL; }

/* A .npy built by hand: magic, version, length field, header text as given,
 * then data.  Exactly sized, so ASan sees any over-read. */
static uint8_t *npy_hand(int major, const char *hdr, const void *data, size_t dlen, size_t *len) {
  size_t hl = strlen(hdr), ls = major == 1 ? 2 : 4;
  *len = 8 + ls + hl + dlen;
  uint8_t *b = malloc(*len);
  memcpy(b, "\x93NUMPY", 6);
  b[6] = (uint8_t)major;
  b[7] = 0;
  for (size_t i = 0; i < ls; i++) b[8 + i] = (uint8_t)(hl >> (8 * i));
  memcpy(b + 8 + ls, hdr, hl);
  if (dlen) memcpy(b + 8 + ls + hl, data, dlen);
  return b;
}

static int read_hand(int major, const char *hdr, const void *data, size_t dlen, nxvk_host *out) {
  size_t len;
  uint8_t *b = npy_hand(major, hdr, data, dlen, &len);
  int rc = nxvk_npy_read_mem(b, len, "hand.npy", out);
  free(b);
  return rc;
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  if (!f) abort();
  fwrite(text, 1, strlen(text), f);
  fclose(f);
}

static char *tpath(const char *name) {
  static char buf[4][256];
  static int k;
  char *p = buf[k++ % 4];
  snprintf(p, 256, "%s/%s", tmpdir, name);
  return p;
}

static int count_files(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d)))
    if (e->d_name[0] != '.') n++;
  if (d) closedir(d);
  return n;
}

static void swap_each(uint8_t *p, size_t n, size_t size) {
  for (size_t i = 0; i < n; i++, p += size)
    for (size_t a = 0, b = size - 1; a < b; a++, b--) {
      uint8_t t = p[a];
      p[a] = p[b];
      p[b] = t;
    }
}

/* ---------------------------------------------------------------- npy */

static void test_npy_roundtrip(void) {
  const nxvk_shape shapes[] = {shp(0), shp(1, 0), shp(1, 1), shp(1, 17), shp(2, 3, 5),
                               shp(3, 2, 0, 3), shp(8, 1, 2, 1, 2, 1, 2, 1, 2),
                               shp(8, 2, 2, 2, 2, 2, 2, 2, 3)};
  for (int d = 0; d < NXVK_NDTYPES; d++)
    for (size_t k = 0; k < LEN(shapes); k++) {
      char sb[64];
      nxvk_host t = make((nxvk_dtype)d, shapes[k]), r;
      void *buf;
      size_t len;
      int rc = nxvk_npy_encode(&t, &buf, &len);
      CHECK(rc == 0, "encode %s %s", nxvk_dtype_name((nxvk_dtype)d), nxvk_shape_str(&shapes[k], sb, sizeof sb));
      const uint8_t *b = buf;
      size_t hl = (size_t)b[8] | (size_t)b[9] << 8;
      CHECK(b[6] == 1 && b[7] == 0 && (10 + hl) % 64 == 0 && b[10 + hl - 1] == '\n' &&
                len == 10 + hl + nxvk_host_bytes(&t),
            "  version 1.0, data at a multiple of 64 (%zu), header ends in newline", 10 + hl);
      rc = nxvk_npy_read_mem(buf, len, "rt.npy", &r);
      CHECK(rc == 0 && same(&t, &r), "  decode gives the same tensor (rc %d %s)", rc,
            rc ? nxvk_errmsg() : "");
      free(buf);
      nxvk_host_free(&r);

      /* through a file as well */
      const char *p = tpath("rt.npy");
      rc = nxvk_npy_write(p, &t);
      int rc2 = nxvk_npy_read(p, &r);
      CHECK(rc == 0 && rc2 == 0 && same(&t, &r) && count_files(tmpdir) == 1,
            "  write + read file, no temp left (rc %d %d)", rc, rc2);
      nxvk_host_free(&r);
      unlink(p);
      nxvk_host_free(&t);
    }

  /* header text numpy would write */
  nxvk_host t = make(NXVK_F32, shp(1, 3));
  void *buf;
  size_t len;
  nxvk_npy_encode(&t, &buf, &len);
  const char *want = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";
  CHECK(memcmp((char *)buf + 10, want, strlen(want)) == 0, "header text is numpy's: %s", want);
  free(buf);
  nxvk_host_free(&t);
  t = make(NXVK_U8, shp(2, 2, 3));
  nxvk_npy_encode(&t, &buf, &len);
  want = "{'descr': '|u1', 'fortran_order': False, 'shape': (2, 3), }";
  CHECK(memcmp((char *)buf + 10, want, strlen(want)) == 0, "header text is numpy's: %s", want);
  free(buf);
  nxvk_host_free(&t);
}

/* A pipe has no size: the stream path reads what arrives. */
static void test_npy_fifo(void) {
  nxvk_host t = make(NXVK_F64, shp(3, 20, 30, 40)), r; /* 192000 bytes: several pipe buffers */
  void *buf;
  size_t len;
  nxvk_npy_encode(&t, &buf, &len);
  const char *p = tpath("fifo.npy");
  for (int extra = 0; extra < 2; extra++) {
    if (mkfifo(p, 0600) != 0) abort();
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      FILE *f = fopen(p, "wb");
      fwrite(buf, 1, len - (extra ? 1 : 0), f);
      fclose(f);
      _exit(0);
    }
    int rc = nxvk_npy_read(p, &r);
    waitpid(pid, NULL, 0);
    if (!extra)
      CHECK(rc == 0 && same(&t, &r), "read from a FIFO (rc %d %s)", rc, rc ? nxvk_errmsg() : "");
    else
      CHECK(rc == NXVK_E_BAD_FILE && zeroed(&r) && msg_has("truncated"), "short FIFO: bad_file (%s)", nxvk_errmsg());
    nxvk_host_free(&r);
    unlink(p);
  }
  free(buf);
  nxvk_host_free(&t);
}

static void test_npy_write_fail(void) {
  nxvk_host t = make(NXVK_F64, shp(1, 4));
  char p[300];
  snprintf(p, sizeof p, "%s/no/such/dir/x.npy", tmpdir);
  int rc = nxvk_npy_write(p, &t);
  CHECK(rc == NXVK_E_IO && msg_has("x.npy"), "write into a missing directory: io error (%s)", nxvk_errmsg());
  CHECK(count_files(tmpdir) == 0, "  nothing left behind");

  /* a directory at the path is refused before anything is written */
  snprintf(p, sizeof p, "%s/adir", tmpdir);
  mkdir(p, 0700);
  char inner[320];
  snprintf(inner, sizeof inner, "%s/f", p);
  write_text(inner, "x");
  rc = nxvk_npy_write(p, &t);
  CHECK(rc == NXVK_E_BAD_REQUEST && msg_has("is a directory"), "write onto a non-empty directory: bad_request (%s)", nxvk_errmsg());
  CHECK(count_files(tmpdir) == 1, "  temp file removed");
  unlink(inner);
  rmdir(p);

  nxvk_host bad = t;
  bad.data = NULL;
  CHECK(nxvk_npy_write(tpath("b.npy"), &bad) == NXVK_E_BAD_REQUEST && count_files(tmpdir) == 0,
        "write of a tensor without data: bad_request, no file");
  bad = t;
  bad.shape.rank = 9;
  void *buf;
  size_t len;
  CHECK(nxvk_npy_encode(&bad, &buf, &len) == NXVK_E_TOO_LARGE && buf == NULL, "encode rank 9: too_large");
  nxvk_host_free(&t);

  /* an existing file is replaced whole */
  t = make(NXVK_I32, shp(1, 5));
  const char *q = tpath("r.npy");
  write_text(q, "old contents");
  nxvk_host r;
  rc = nxvk_npy_write(q, &t);
  CHECK(rc == 0 && nxvk_npy_read(q, &r) == 0 && same(&t, &r), "write replaces an existing file");
  nxvk_host_free(&r);
  nxvk_host_free(&t);
  unlink(q);
}

/* Each supported descr by hand, with byte order and bool handling. */
static void test_npy_descr(void) {
  static const struct {
    const char *descr;
    nxvk_dtype d;
    bool big;
  } rows[] = {
      {"<f4", NXVK_F32, false}, {"<f8", NXVK_F64, false}, {"<i4", NXVK_I32, false},
      {">f4", NXVK_F32, true},  {">f8", NXVK_F64, true},  {">i4", NXVK_I32, true},
      {"=f4", NXVK_F32, false}, {"=f8", NXVK_F64, false}, {"=i4", NXVK_I32, false},
      {"f4", NXVK_F32, false},  {"|u1", NXVK_U8, false},  {"u1", NXVK_U8, false},
      {"<u1", NXVK_U8, false},  {">u1", NXVK_U8, false},  {"=u1", NXVK_U8, false},
      {"<f2", NXVK_F16, false}, {">f2", NXVK_F16, true},  {"|i1", NXVK_I8, false},
      {"<i2", NXVK_I16, false}, {">i2", NXVK_I16, true},  {"<i8", NXVK_I64, false},
      {">i8", NXVK_I64, true},  {"<u2", NXVK_U16, false}, {">u2", NXVK_U16, true},
      {"<u4", NXVK_U32, false}, {">u4", NXVK_U32, true},  {"<u8", NXVK_U64, false},
      {">u8", NXVK_U64, true},  {"<V2", NXVK_BF16, false}, {"|V2", NXVK_BF16, false},
      {">V2", NXVK_BF16, true},
  };
  for (size_t k = 0; k < LEN(rows); k++) {
    nxvk_host t = make(rows[k].d, shp(2, 3, 7)), r;
    size_t bytes = nxvk_host_bytes(&t);
    uint8_t *data = malloc(bytes);
    memcpy(data, t.data, bytes);
    if (rows[k].big) swap_each(data, 21, nxvk_dtype_size(rows[k].d));
    char hdr[200];
    snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (3, 7), }\n", rows[k].descr);
    int rc = read_hand(1, hdr, data, bytes, &r);
    CHECK(rc == 0 && same(&t, &r), "descr '%s' reads as %s (rc %d %s)", rows[k].descr,
          nxvk_dtype_name(rows[k].d), rc, rc ? nxvk_errmsg() : "");
    nxvk_host_free(&r);
    nxvk_host_free(&t);
    free(data);
  }

  /* b1: any nonzero byte is true */
  const uint8_t bools[6] = {0, 1, 2, 255, 0, 128};
  for (int k = 0; k < 2; k++) {
    nxvk_host r;
    const char *hdr = k ? "{'descr': 'b1', 'fortran_order': False, 'shape': (2, 3), }"
                        : "{'descr': '|b1', 'fortran_order': False, 'shape': (2, 3), }";
    int rc = read_hand(1, hdr, bools, 6, &r);
    const uint8_t *v = r.data;
    CHECK(rc == 0 && r.dtype == NXVK_BOOL && v && v[0] == 0 && v[1] == 1 && v[2] == 1 && v[3] == 1 &&
              v[4] == 0 && v[5] == 1,
          "descr '%s' reads as bool 0/1", k ? "b1" : "|b1");
    nxvk_host_free(&r);
  }
}

/* Fortran order, every dtype and both byte orders, ranks 2 and 3. */
static void test_npy_fortran(void) {
  const nxvk_shape shapes[] = {shp(2, 3, 4), shp(3, 2, 3, 4), shp(3, 4, 1, 5), shp(2, 0, 3)};
  for (int d = 0; d < NXVK_NDTYPES; d++)
    for (int big = 0; big < 2; big++)
      for (size_t k = 0; k < LEN(shapes); k++) {
        nxvk_host t = make((nxvk_dtype)d, shapes[k]), r;
        const nxvk_shape *s = &t.shape;
        size_t size = nxvk_dtype_size(t.dtype), n = (size_t)nxvk_host_count(&t);
        uint8_t *f = malloc(n * size + 1);
        /* file order: first index fastest */
        int64_t idx[NXVK_MAX_RANK] = {0};
        for (size_t j = 0; j < n; j++) {
          int64_t c = 0;
          for (int a = 0; a < s->rank; a++) c = c * s->dim[a] + idx[a];
          memcpy(f + j * size, (uint8_t *)t.data + (size_t)c * size, size);
          for (int a = 0; a < s->rank; a++) {
            if (++idx[a] < s->dim[a]) break;
            idx[a] = 0;
          }
        }
        if (big) swap_each(f, n, size);
        char hdr[200], sb[64];
        int o = snprintf(hdr, sizeof hdr, "{'fortran_order': True, 'descr': '%c%s', 'shape': (",
                         size == 1 ? '|' : big ? '>' : '<', nxvk_dtype_info_of((nxvk_dtype)d)->npy);
        for (int a = 0; a < s->rank; a++) o += snprintf(hdr + o, sizeof hdr - (size_t)o, "%lld, ", (long long)s->dim[a]);
        snprintf(hdr + o, sizeof hdr - (size_t)o, ")}");
        int rc = read_hand(1, hdr, f, n * size, &r);
        CHECK(rc == 0 && same(&t, &r), "fortran_order %s%s %s transposed to C order (rc %d)",
              big && size > 1 ? ">" : "", nxvk_dtype_info_of((nxvk_dtype)d)->npy, nxvk_shape_str(s, sb, sizeof sb), rc);
        nxvk_host_free(&r);
        nxvk_host_free(&t);
        free(f);
      }
}

static void test_npy_headers(void) {
  const float v3[3] = {1, 2, 3};
  static const struct {
    int major;
    const char *hdr;
    int rank;
    const char *desc;
  } ok[] = {
      {2, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }\n", 1, "version 2.0"},
      {3, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }\n", 1, "version 3.0"},
      {1, "{'shape': (3,), 'fortran_order': False, 'descr': '<f4'}", 1, "keys in another order"},
      {1, "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (3,)}", 1, "double quotes"},
      {1, "  {  'descr'  :'<f4' ,\n'fortran_order':False,'shape':(  3  ,  )  ,  }  \n\n ", 1, "odd whitespace"},
      {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3)}", 1, "(3) taken as (3,)"},
      {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3L,)}", 1, "Python 2 long 3L"},
      {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 1,)}", 3, "trailing comma in shape"},
      {1, "{'descr':'<f4','fortran_order':True,'shape':(3,),}", 1, "fortran rank 1, no spaces"},
  };
  for (size_t k = 0; k < LEN(ok); k++) {
    nxvk_host r;
    int rc = read_hand(ok[k].major, ok[k].hdr, v3, sizeof v3, &r);
    CHECK(rc == 0 && r.dtype == NXVK_F32 && r.shape.rank == ok[k].rank && nxvk_host_count(&r) == 3 &&
              ((float *)r.data)[2] == 3.0f,
          "header: %s (rc %d %s)", ok[k].desc, rc, rc ? nxvk_errmsg() : "");
    nxvk_host_free(&r);
  }
  /* 0-d and empty */
  nxvk_host r;
  int rc = read_hand(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }\n", "\0\0\0\0\0\0\x14@", 8, &r);
  CHECK(rc == 0 && r.shape.rank == 0 && r.data && ((double *)r.data)[0] == 5.0, "0-d f64 reads");
  nxvk_host_free(&r);
  rc = read_hand(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (0, 5), }\n", NULL, 0, &r);
  CHECK(rc == 0 && r.shape.rank == 2 && r.shape.dim[1] == 5 && r.data == NULL, "empty (0, 5) reads, data NULL");
  nxvk_host_free(&r);

  /* a real 2.0 header just over 64 KiB is over our limit */
  char *big = malloc(70000);
  int o = snprintf(big, 70000, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }");
  memset(big + o, ' ', 70000 - (size_t)o - 2);
  big[70000 - 2] = '\n';
  big[70000 - 1] = '\0';
  rc = read_hand(2, big, v3, sizeof v3, &r);
  CHECK(rc == NXVK_E_TOO_LARGE && zeroed(&r), "version 2.0 header over NXVK_MAX_NPY_HEADER: too_large (%s)", nxvk_errmsg());
  /* and one of exactly 65536 bytes is fine */
  big[65536 - 1] = '\n';
  big[65536] = '\0';
  rc = read_hand(2, big, v3, sizeof v3, &r);
  CHECK(rc == 0 && nxvk_host_count(&r) == 3, "version 2.0 header of 65536 bytes reads (rc %d %s)", rc, rc ? nxvk_errmsg() : "");
  nxvk_host_free(&r);
  /* the same from a file, where the reader takes the header in one read of
   * at most 12 + NXVK_MAX_NPY_HEADER bytes, with and without a trailing byte */
  for (int extra = 0; extra < 2; extra++) {
    size_t len;
    uint8_t *b = npy_hand(2, big, "\0\0\x80?\0\0\0@\0\0@@!", sizeof v3 + (size_t)extra, &len);
    FILE *fp = fopen(tpath("big.npy"), "wb");
    fwrite(b, 1, len, fp);
    fclose(fp);
    free(b);
    rc = nxvk_npy_read(tpath("big.npy"), &r);
    if (!extra)
      CHECK(rc == 0 && nxvk_host_count(&r) == 3 && ((float *)r.data)[2] == 3, "version 2.0 file, 65536-byte header (rc %d %s)", rc, rc ? nxvk_errmsg() : "");
    else
      CHECK(rc == NXVK_E_BAD_FILE && msg_has("1 trailing bytes") && msg_has("big.npy"), "  one byte more: trailing bytes (%s)", nxvk_errmsg());
    nxvk_host_free(&r);
  }
  unlink(tpath("big.npy"));
  free(big);
}

static void test_npy_bad(void) {
  const float v3[3] = {1, 2, 3};
  static const struct {
    int major;
    const char *hdr;
    size_t dlen;
    int code;
    const char *msg;
  } bad[] = {
      {1, "{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }", 12, NXVK_E_UNSUPPORTED_DTYPE, "descr '<c8' (complex64) is not supported"},
      {1, "{'descr': '|O', 'fortran_order': False, 'shape': (3,), }", 12, NXVK_E_UNSUPPORTED_DTYPE, "descr '|O'"},
      {1, "{'descr': '<c16', 'fortran_order': False, 'shape': (3,), }", 12, NXVK_E_UNSUPPORTED_DTYPE, "two float arrays"},
      {1, "{'descr': '<f16', 'fortran_order': False, 'shape': (3,), }", 12, NXVK_E_UNSUPPORTED_DTYPE, "a.astype(np.float64)"},
      {1, "{'descr': '<M8[s]', 'fortran_order': False, 'shape': (3,), }", 12, NXVK_E_UNSUPPORTED_DTYPE, "descr '<M8[s]'"},
      {1, "{'descr': '|V4', 'fortran_order': False, 'shape': (3,), }", 12, NXVK_E_UNSUPPORTED_DTYPE, "bfloat16"},
      {1, "{'descr': '|O', 'fortran_order': False, 'shape': (3,), }", 12, NXVK_E_UNSUPPORTED_DTYPE, "astype"},
      {1, "{'descr': '|S4', 'fortran_order': False, 'shape': (3,), }", 12, NXVK_E_UNSUPPORTED_DTYPE, "descr '|S4'"},
      {1, "{'descr': '<U1', 'fortran_order': False, 'shape': (3,), }", 12, NXVK_E_UNSUPPORTED_DTYPE, "descr '<U1'"},
      {1, "{'descr': '|i2', 'fortran_order': False, 'shape': (3,), }", 12, NXVK_E_UNSUPPORTED_DTYPE, "descr '|i2'"},
      {1, "{'descr': '|f4', 'fortran_order': False, 'shape': (3,), }", 12, NXVK_E_UNSUPPORTED_DTYPE, "descr '|f4'"},
      {1, "{'descr': '', 'fortran_order': False, 'shape': (3,), }", 12, NXVK_E_UNSUPPORTED_DTYPE, "descr ''"},
      {1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (3,), }", 12, NXVK_E_UNSUPPORTED_DTYPE, "structured"},
      {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,3), }", 12, NXVK_E_TOO_LARGE, "rank"},
      {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-3,), }", 12, NXVK_E_BAD_FILE, "negative"},
      {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, -1), }", 12, NXVK_E_BAD_FILE, "negative"},
      {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (a,), }", 12, NXVK_E_BAD_FILE, "shape"},
      {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3.0,), }", 12, NXVK_E_BAD_FILE, "shape"},
      {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (,), }", 12, NXVK_E_BAD_FILE, "shape"},
      {1, "{'descr': '<f4', 'fortran_order': False, 'shape': [3], }", 12, NXVK_E_BAD_FILE, "tuple"},
      {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, }", 12, NXVK_E_BAD_FILE, "shape"},
      {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,), }", 12, NXVK_E_TOO_LARGE, "limit"},
      {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2147483648,), }", 12, NXVK_E_TOO_LARGE, "limit"},
      {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (65536, 65536), }", 12, NXVK_E_TOO_LARGE, "2^31"},
      {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", 12, NXVK_E_BAD_FILE, "truncated"},
      {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 12, NXVK_E_BAD_FILE, "4 trailing bytes"},
      {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 12, NXVK_E_BAD_FILE, "8 trailing bytes"},
      {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0,), }", 12, NXVK_E_BAD_FILE, "trailing bytes"},
      {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 8, NXVK_E_BAD_FILE, "truncated"},
      {1, "{'descr': '<f4', 'fortran_order': False}", 12, NXVK_E_BAD_FILE, "missing key 'shape'"},
      {1, "{'fortran_order': False, 'shape': (3,)}", 12, NXVK_E_BAD_FILE, "missing key 'descr'"},
      {1, "{'descr': '<f4', 'shape': (3,)}", 12, NXVK_E_BAD_FILE, "missing key 'fortran_order'"},
      {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'x': 1}", 12, NXVK_E_BAD_FILE, "unknown key 'x'"},
      {1, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (3,)}", 12, NXVK_E_BAD_FILE, "twice"},
      {1, "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (3,)}", 12, NXVK_E_BAD_FILE, "fortran_order"},
      {1, "{'descr': '<f4', 'fortran_order': Truer, 'shape': (3,)}", 12, NXVK_E_BAD_FILE, "fortran_order"},
      {1, "{'descr': '<f4', 'fortran_order': 1, 'shape': (3,)}", 12, NXVK_E_BAD_FILE, "fortran_order"},
      {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), '", 12, NXVK_E_BAD_FILE, "unterminated"},
      {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,)} x", 12, NXVK_E_BAD_FILE, "after"},
      {1, "{'descr': '<f4' 'fortran_order': False, 'shape': (3,)}", 12, NXVK_E_BAD_FILE, "header"},
      {1, "'descr': '<f4', 'fortran_order': False, 'shape': (3,)}", 12, NXVK_E_BAD_FILE, "'{'"},
      {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,)", 12, NXVK_E_BAD_FILE, "header"},
      {1, "{'de\\scr': '<f4', 'fortran_order': False, 'shape': (3,)}", 12, NXVK_E_BAD_FILE, "header"},
      {1, "", 12, NXVK_E_BAD_FILE, "header"},
  };
  for (size_t k = 0; k < LEN(bad); k++) {
    nxvk_host r;
    uint8_t data[16] = {0};
    memcpy(data, v3, sizeof v3);
    int rc = read_hand(bad[k].major, bad[k].hdr, data, bad[k].dlen, &r);
    CHECK(rc == bad[k].code && zeroed(&r) && msg_has("hand.npy") && msg_has(bad[k].msg),
          "bad header %zu gives %s with \"%s\" (got %s: %s)", k, nxvk_err_name(bad[k].code),
          bad[k].msg, nxvk_err_name(rc), nxvk_errmsg());
    nxvk_host_free(&r);
  }

  /* the prefix itself */
  nxvk_host r;
  size_t len;
  uint8_t *b = npy_hand(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", v3, 12, &len);
  b[0] = 'X';
  CHECK(nxvk_npy_read_mem(b, len, "m.npy", &r) == NXVK_E_BAD_FILE && msg_has("magic"), "bad magic: bad_file (%s)", nxvk_errmsg());
  b[0] = 0x93;
  b[6] = 4;
  CHECK(nxvk_npy_read_mem(b, len, "m.npy", &r) == NXVK_E_BAD_FILE && msg_has("version 4.0"), "version 4.0: bad_file (%s)", nxvk_errmsg());
  b[6] = 1;
  b[7] = 1;
  CHECK(nxvk_npy_read_mem(b, len, "m.npy", &r) == NXVK_E_BAD_FILE && msg_has("version 1.1"), "version 1.1: bad_file");
  b[7] = 0;
  b[8] = 0xff;
  b[9] = 0xff;
  CHECK(nxvk_npy_read_mem(b, len, "m.npy", &r) == NXVK_E_BAD_FILE && msg_has("truncated"), "header length past the end: bad_file (%s)", nxvk_errmsg());
  free(b);
  b = npy_hand(2, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", v3, 12, &len);
  b[11] = 0xff; /* header length ~4 GiB */
  CHECK(nxvk_npy_read_mem(b, len, "m.npy", &r) == NXVK_E_TOO_LARGE, "version 2.0 header length 4 GiB: too_large (%s)", nxvk_errmsg());
  free(b);
  CHECK(nxvk_npy_read_mem(NULL, 0, "m.npy", &r) == NXVK_E_BAD_FILE, "empty buffer: bad_file");
  CHECK(nxvk_npy_read(tpath("missing.npy"), &r) == NXVK_E_IO && msg_has("missing.npy"), "missing file: io error (%s)", nxvk_errmsg());
  CHECK(nxvk_npy_read(tmpdir, &r) == NXVK_E_IO, "directory: io error (%s)", nxvk_errmsg());
  write_text(tpath("text.npy"), "hello, world\n");
  CHECK(nxvk_npy_read(tpath("text.npy"), &r) == NXVK_E_BAD_FILE && msg_has("text.npy"), "text file named .npy: bad_file (%s)", nxvk_errmsg());
  unlink(tpath("text.npy"));
}

/* Every prefix of valid files must fail cleanly; mutated headers must never
 * crash. */
static void test_npy_truncate_fuzz(void) {
  const nxvk_shape shapes[] = {shp(2, 2, 3), shp(0), shp(1, 0)};
  for (int d = 0; d < NXVK_NDTYPES; d++)
    for (size_t k = 0; k < LEN(shapes); k++) {
      nxvk_host t = make((nxvk_dtype)d, shapes[k]), r;
      void *buf;
      size_t len;
      nxvk_npy_encode(&t, &buf, &len);
      int fails = 0;
      for (size_t cut = 0; cut < len; cut++) {
        uint8_t *p = malloc(cut ? cut : 1);
        memcpy(p, buf, cut);
        int rc = nxvk_npy_read_mem(p, cut, "cut.npy", &r);
        if (rc == 0 || !zeroed(&r) || (rc != NXVK_E_BAD_FILE)) fails++;
        nxvk_host_free(&r);
        free(p);
      }
      /* the same through a file, which takes the read-into-place path */
      int ffails = 0;
      for (size_t cut = 0; cut < len; cut++) {
        FILE *fp = fopen(tpath("cut.npy"), "wb");
        fwrite(buf, 1, cut, fp);
        fclose(fp);
        int rc = nxvk_npy_read(tpath("cut.npy"), &r);
        if (rc != NXVK_E_BAD_FILE || !zeroed(&r) || !msg_has("cut.npy")) ffails++;
        nxvk_host_free(&r);
      }
      unlink(tpath("cut.npy"));
      char sb[64];
      CHECK(ffails == 0, "%s %s: all %zu truncated files give bad_file (%d did not)",
            nxvk_dtype_name((nxvk_dtype)d), nxvk_shape_str(&shapes[k], sb, sizeof sb), len, ffails);
      CHECK(fails == 0, "%s %s: all %zu truncations give bad_file (%d did not)",
            nxvk_dtype_name((nxvk_dtype)d), nxvk_shape_str(&shapes[k], sb, sizeof sb), len, fails);

      /* mutate each header byte to characters the parser cares about */
      static const uint8_t subst[] = {0, ' ', '(', ')', ',', '9', '-', '\'', '"', '{', '}', ':', 'L', 0xff, '\n', '\\'};
      int crashes_would_show_here = 0, oks = 0;
      uint8_t *p = malloc(len);
      for (size_t i = 0; i < len - nxvk_host_bytes(&t); i++)
        for (size_t s = 0; s < sizeof subst; s++) {
          memcpy(p, buf, len);
          p[i] = subst[s];
          int rc = nxvk_npy_read_mem(p, len, "mut.npy", &r);
          if (rc == 0) {
            oks++;
            if (nxvk_host_bytes(&r) > len) crashes_would_show_here++;
          } else if (!zeroed(&r)) {
            crashes_would_show_here++;
          }
          nxvk_host_free(&r);
        }
      free(p);
      CHECK(crashes_would_show_here == 0, "  header mutations: no crash, errors leave the tensor empty (%d parsed)", oks);
      free(buf);
      nxvk_host_free(&t);
    }
}

/* ---------------------------------------------------------------- JSON */

static int jparse(const char *s, nxvk_host *r) { return nxvk_json_tensor_parse(s, strlen(s), "js", r); }

static void test_json_parse(void) {
  nxvk_host r;
  int rc = jparse("{\"dtype\":\"f32\",\"shape\":[2,2],\"data\":[1,2,3,\"nan\"]}", &r);
  float *f = r.data;
  CHECK(rc == 0 && r.dtype == NXVK_F32 && r.shape.rank == 2 && f[0] == 1 && f[2] == 3 && isnan(f[3]),
        "flat data with shape [2,2] (rc %d %s)", rc, rc ? nxvk_errmsg() : "");
  nxvk_host_free(&r);
  rc = jparse(" { \"data\" : [[1, 2.5], [\"-0\", \"-inf\"]], \"shape\": [2, 2], \"dtype\": \"float32\" } \n", &r);
  f = r.data;
  CHECK(rc == 0 && f[1] == 2.5f && f[2] == 0 && signbit(f[2]) && isinf(f[3]) && f[3] < 0,
        "nested data, keys in any order, -0 has its sign bit, -inf");
  nxvk_host_free(&r);

  static const struct {
    const char *s;
    double v;
  } specials[] = {{"nan", NAN},       {"NaN", NAN},        {"inf", INFINITY}, {"+inf", INFINITY},
                  {"Infinity", INFINITY}, {"INF", INFINITY}, {"-inf", -INFINITY}, {"-Infinity", -INFINITY},
                  {"-0", -0.0},        {"+0", 0.0}};
  for (size_t k = 0; k < LEN(specials); k++)
    for (int d = 0; d < 2; d++) {
      char js[128];
      snprintf(js, sizeof js, "{\"dtype\":\"%s\",\"data\":\"%s\"}", d ? "f64" : "f32", specials[k].s);
      rc = jparse(js, &r);
      double v = rc ? 99 : nxvk_host_get(&r, 0);
      double w = specials[k].v;
      CHECK(rc == 0 && r.shape.rank == 0 &&
                (isnan(w) ? isnan(v) : (v == w && signbit(v) == signbit(w))),
            "\"%s\" as a %s scalar", specials[k].s, d ? "f64" : "f32");
      nxvk_host_free(&r);
    }

  rc = jparse("{\"dtype\":\"f64\",\"data\":[0.1, -0, 1e308, 5e-324]}", &r);
  double *dd = r.data;
  CHECK(rc == 0 && r.shape.rank == 1 && r.shape.dim[0] == 4 && dd[0] == 0.1 && signbit(dd[1]) &&
            dd[2] == 1e308 && dd[3] == 5e-324,
        "no shape, flat data: shape [4]; numeric -0 keeps its sign");
  nxvk_host_free(&r);
  rc = jparse("{\"dtype\":\"i32\",\"data\":-2147483648}", &r);
  CHECK(rc == 0 && r.shape.rank == 0 && ((int32_t *)r.data)[0] == INT32_MIN, "scalar i32 INT_MIN, shape []");
  nxvk_host_free(&r);
  rc = jparse("{\"dtype\":\"u8\",\"shape\":[4],\"data\":[true,false,255,0]}", &r);
  uint8_t *u = r.data;
  CHECK(rc == 0 && u[0] == 1 && u[1] == 0 && u[2] == 255, "u8 with true/false");
  nxvk_host_free(&r);
  rc = jparse("{\"dtype\":\"i32\",\"shape\":[2,0],\"data\":[[],[]]}", &r);
  CHECK(rc == 0 && r.shape.dim[0] == 2 && r.shape.dim[1] == 0 && !r.data, "shape [2,0] nested [[],[]]");
  nxvk_host_free(&r);
  rc = jparse("{\"dtype\":\"i32\",\"shape\":[2,0],\"data\":[]}", &r);
  CHECK(rc == 0 && r.shape.dim[0] == 2, "shape [2,0] flat []");
  nxvk_host_free(&r);
  rc = jparse("{\"dtype\":\"f32\",\"data\":[]}", &r);
  CHECK(rc == 0 && r.shape.rank == 1 && r.shape.dim[0] == 0, "no shape, []: shape [0]");
  nxvk_host_free(&r);
  rc = jparse("{\"dtype\":\"f32\",\"shape\":[1,1],\"data\":7}", &r);
  CHECK(rc == 0 && ((float *)r.data)[0] == 7, "one number for shape [1,1]");
  nxvk_host_free(&r);
  rc = jparse("{\"dtype\":\"f32\",\"shape\":[2,1,2],\"data\":[[[1,2]],[[3,4]]]}", &r);
  CHECK(rc == 0 && ((float *)r.data)[3] == 4, "rank 3 nested");
  nxvk_host_free(&r);
  char text[] = "{\"dtype\":\"f32\",\"data\":[1]}";
  rc = nxvk_json_tensor_parse(text, sizeof text, "js", &r); /* len counts the NUL */
  CHECK(rc == 0, "len that counts the terminating NUL");
  nxvk_host_free(&r);
}

static void test_json_bad(void) {
  static const struct {
    const char *s;
    int code;
    const char *msg;
  } bad[] = {
      {"{\"shape\":[1],\"data\":[1]}", NXVK_E_BAD_FILE, "\"dtype\""},
      {"{\"dtype\":\"f32\",\"shape\":[1]}", NXVK_E_BAD_FILE, "\"data\""},
      {"{\"dtype\":7,\"data\":[1]}", NXVK_E_BAD_FILE, "\"dtype\""},
      {"{\"dtype\":\"c64\",\"data\":[1]}", NXVK_E_UNSUPPORTED_DTYPE, "c64"},
      {"{\"dtype\":\"f32\",\"shape\":[2,2],\"data\":[1,2,3]}", NXVK_E_BAD_FILE, "data has 3 values, shape [2,2] needs 4"},
      {"{\"dtype\":\"f32\",\"shape\":[2],\"data\":[1,2,3]}", NXVK_E_BAD_FILE, "3 values"},
      {"{\"dtype\":\"f32\",\"shape\":[2,2],\"data\":[[1,2],[3]]}", NXVK_E_BAD_FILE, "data[1] has 1 entries"},
      {"{\"dtype\":\"f32\",\"shape\":[2,2],\"data\":[[1,2],3]}", NXVK_E_BAD_FILE, "data[1]"},
      {"{\"dtype\":\"f32\",\"shape\":[2,2],\"data\":[[1,2],[3,[4]]]}", NXVK_E_BAD_FILE, "data[1][1]"},
      {"{\"dtype\":\"f32\",\"shape\":[2,2],\"data\":[[1,2,3],[4]]}", NXVK_E_BAD_FILE, "data[0] has 3"},
      {"{\"dtype\":\"f32\",\"shape\":[3],\"data\":[[1],[2],[3]]}", NXVK_E_BAD_FILE, "nested deeper"},
      {"{\"dtype\":\"f32\",\"data\":[[1,2],[3,4]]}", NXVK_E_BAD_FILE, "\"shape\" is required"},
      {"{\"dtype\":\"f32\",\"shape\":[2],\"data\":1}", NXVK_E_BAD_FILE, "one number"},
      {"{\"dtype\":\"f32\",\"data\":[1,\"x\"]}", NXVK_E_BAD_FILE, "data[1]: string \"x\""},
      {"{\"dtype\":\"f32\",\"data\":[1,null]}", NXVK_E_BAD_FILE, "data[1]"},
      {"{\"dtype\":\"f32\",\"data\":[true]}", NXVK_E_BAD_FILE, "true/false"},
      {"{\"dtype\":\"f32\",\"data\":{}}", NXVK_E_BAD_FILE, "\"data\""},
      {"{\"dtype\":\"i32\",\"data\":[1.5]}", NXVK_E_BAD_FILE, "not an integer"},
      {"{\"dtype\":\"i32\",\"data\":[2147483648]}", NXVK_E_BAD_FILE, "out of range"},
      {"{\"dtype\":\"i32\",\"data\":[-2147483649]}", NXVK_E_BAD_FILE, "out of range"},
      {"{\"dtype\":\"i32\",\"data\":[\"nan\"]}", NXVK_E_BAD_FILE, "not an integer"},
      {"{\"dtype\":\"u8\",\"data\":[256]}", NXVK_E_BAD_FILE, "out of range"},
      {"{\"dtype\":\"u8\",\"data\":[-1]}", NXVK_E_BAD_FILE, "out of range"},
      {"{\"dtype\":\"f32\",\"shape\":[-1],\"data\":[]}", NXVK_E_BAD_FILE, "shape[0]"},
      {"{\"dtype\":\"f32\",\"shape\":[1.5],\"data\":[]}", NXVK_E_BAD_FILE, "shape[0]"},
      {"{\"dtype\":\"f32\",\"shape\":\"3\",\"data\":[]}", NXVK_E_BAD_FILE, "\"shape\""},
      {"{\"dtype\":\"f32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data\":[1]}", NXVK_E_TOO_LARGE, "rank"},
      {"{\"dtype\":\"f32\",\"shape\":[65536,65536],\"data\":[]}", NXVK_E_TOO_LARGE, "2^31"},
      {"{\"dtype\":\"f32\",\"shape\":[1e300],\"data\":[]}", NXVK_E_TOO_LARGE, "shape[0]"},
      {"{\"dtype\":\"f32\",\"data\":[1],\"extra\":1}", NXVK_E_BAD_FILE, "unknown field \"extra\""},
      {"{\"dtype\":\"f32\",\"dtype\":\"f32\",\"data\":[1]}", NXVK_E_BAD_FILE, "twice"},
      {"{\"dtype\":\"f32\",\"data\":[1]} x", NXVK_E_BAD_FILE, "unexpected text"},
      {"{\"dtype\":\"f32\",\"data\":[1,]}", NXVK_E_BAD_FILE, "invalid JSON"},
      {"[1,2]", NXVK_E_BAD_FILE, "object"},
      {"", NXVK_E_BAD_FILE, "invalid JSON"},
  };
  for (size_t k = 0; k < LEN(bad); k++) {
    nxvk_host r;
    int rc = jparse(bad[k].s, &r);
    CHECK(rc == bad[k].code && zeroed(&r) && msg_has("js: ") && msg_has(bad[k].msg),
          "bad JSON %zu gives %s with '%s' (got %s: %s)", k, nxvk_err_name(bad[k].code), bad[k].msg,
          nxvk_err_name(rc), nxvk_errmsg());
    nxvk_host_free(&r);
  }

  /* nesting: 65 levels is over the limit, 100000 must not reach cJSON's recursion */
  size_t depths[] = {NXVK_MAX_JSON_DEPTH + 1, 100000};
  for (size_t k = 0; k < 2; k++) {
    size_t n = depths[k];
    char *s = malloc(2 * n + 64);
    size_t o = (size_t)sprintf(s, "{\"dtype\":\"f32\",\"data\":");
    for (size_t i = 0; i < n; i++) s[o++] = '[';
    for (size_t i = 0; i < n; i++) s[o++] = ']';
    s[o++] = '}';
    s[o] = 0;
    nxvk_host r;
    int rc = jparse(s, &r);
    CHECK(rc == NXVK_E_TOO_LARGE && msg_has("deeper"), "%zu nested lists: too_large (%s)", n, nxvk_errmsg());
    free(s);
  }
  /* brackets inside strings do not count */
  char *s = malloc(400);
  int o = sprintf(s, "{\"dtype\":\"f32\",\"data\":[1],\"shape\":[1],\"x\":\"");
  for (int i = 0; i < 100; i++) s[o++] = '[';
  sprintf(s + o, "\\\"\"}");
  nxvk_host r;
  int rc = jparse(s, &r);
  CHECK(rc == NXVK_E_BAD_FILE && msg_has("unknown field"), "brackets in a string are not nesting (%s)", nxvk_errmsg());
  free(s);
}

static void test_json_format(void) {
  static const struct {
    nxvk_dtype d;
    nxvk_shape s;
    double v[6];
    const char *want;
  } rows[] = {
      {NXVK_F32, {2, {2, 2}}, {1, 2.5, NAN, -0.0}, "{\"dtype\":\"f32\",\"shape\":[2,2],\"data\":[[1,2.5],[\"nan\",\"-0\"]]}"},
      {NXVK_F64, {0, {0}}, {0.1}, "{\"dtype\":\"f64\",\"shape\":[],\"data\":0.10000000000000001}"},
      {NXVK_F32, {1, {3}}, {INFINITY, -INFINITY, 0.1}, "{\"dtype\":\"f32\",\"shape\":[3],\"data\":[\"inf\",\"-inf\",0.100000001]}"},
      {NXVK_I32, {1, {3}}, {-2147483648.0, 0, 2147483647}, "{\"dtype\":\"i32\",\"shape\":[3],\"data\":[-2147483648,0,2147483647]}"},
      {NXVK_U8, {2, {2, 0}}, {0}, "{\"dtype\":\"u8\",\"shape\":[2,0],\"data\":[[],[]]}"},
      {NXVK_U8, {2, {0, 3}}, {0}, "{\"dtype\":\"u8\",\"shape\":[0,3],\"data\":[]}"},
      {NXVK_F64, {3, {1, 2, 1}}, {1e22, -2}, "{\"dtype\":\"f64\",\"shape\":[1,2,1],\"data\":[[[1e+22],[-2]]]}"},
  };
  for (size_t k = 0; k < LEN(rows); k++) {
    nxvk_host t;
    nxvk_host_alloc(&t, rows[k].d, &rows[k].s);
    for (int64_t i = 0; i < nxvk_host_count(&t); i++) nxvk_host_set(&t, i, rows[k].v[i]);
    char *out = NULL;
    int rc = nxvk_json_tensor_format(&t, &out);
    CHECK(rc == 0 && out && strcmp(out, rows[k].want) == 0, "format %s", out ? out : "(null)");
    nxvk_host r;
    rc = out ? jparse(out, &r) : -1;
    bool eq = rc == 0 && r.dtype == t.dtype && nxvk_shape_equal(&r.shape, &t.shape);
    for (int64_t i = 0; eq && i < nxvk_host_count(&t); i++) {
      double a = nxvk_host_get(&t, i), b = nxvk_host_get(&r, i);
      eq = isnan(a) ? isnan(b) : (a == b && signbit(a) == signbit(b));
    }
    CHECK(eq, "  and parses back");
    nxvk_host_free(&r);
    free(out);
    nxvk_host_free(&t);
  }

  /* every dtype: bit-exact round trip through text (floats from random bits) */
  const nxvk_shape shapes[] = {shp(0), shp(1, 0), shp(1, 200), shp(2, 20, 10), shp(3, 2, 0, 4), shp(8, 1, 2, 1, 2, 2, 1, 3, 2)};
  uint64_t x = 0x9E3779B97F4A7C15u;
  for (int d = 0; d < NXVK_NDTYPES; d++)
    for (size_t k = 0; k < LEN(shapes); k++) {
      nxvk_host t = make((nxvk_dtype)d, shapes[k]), r;
      size_t n = (size_t)nxvk_host_count(&t);
      for (size_t i = 13; i < n && d < 2; i++) { /* random bit patterns after the edge values */
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        if (d == NXVK_F32) {
          uint32_t b = (uint32_t)x;
          memcpy((float *)t.data + i, &b, 4);
        } else {
          memcpy((double *)t.data + i, &x, 8);
        }
      }
      char *out = NULL;
      int rc = nxvk_json_tensor_format(&t, &out);
      int rc2 = out ? jparse(out, &r) : -1;
      bool eq = rc == 0 && rc2 == 0 && r.dtype == t.dtype && nxvk_shape_equal(&r.shape, &t.shape);
      for (size_t i = 0; eq && i < n; i++) {
        double a = nxvk_host_get(&t, (int64_t)i), b = nxvk_host_get(&r, (int64_t)i);
        /* NaN payloads are not kept: "nan" is NaN as a class */
        eq = isnan(a) ? isnan(b) : memcmp((char *)t.data + i * nxvk_dtype_size(t.dtype),
                                          (char *)r.data + i * nxvk_dtype_size(t.dtype),
                                          nxvk_dtype_size(t.dtype)) == 0;
      }
      char sb[64];
      CHECK(eq, "JSON round trip %s %s bit-exact (rc %d %d %s)", nxvk_dtype_name((nxvk_dtype)d),
            nxvk_shape_str(&shapes[k], sb, sizeof sb), rc, rc2, rc2 ? nxvk_errmsg() : "");
      free(out);
      nxvk_host_free(&r);
      nxvk_host_free(&t);
    }
}

/* ---------------------------------------------------------------- CSV */

static void test_csv(void) {
  const char *p = tpath("t.csv");
  nxvk_host r;
  write_text(p, "1,2,3\n4.5, -6 ,7e2\n");
  int rc = nxvk_csv_read(p, NXVK_F32, &r);
  float *f = r.data;
  CHECK(rc == 0 && r.shape.rank == 2 && r.shape.dim[0] == 2 && r.shape.dim[1] == 3 && f[3] == 4.5f &&
            f[4] == -6 && f[5] == 700,
        "2x3 f32 (rc %d %s)", rc, rc ? nxvk_errmsg() : "");
  nxvk_host_free(&r);

  write_text(p, "\xEF\xBB\xBF\n0.1,nan\r\n\r\n  \n-inf,\"-0\"\r\ninf,\" 1e-320 \"");
  rc = nxvk_csv_read(p, NXVK_F64, &r);
  double *d = r.data;
  CHECK(rc == 0 && r.shape.dim[0] == 3 && r.shape.dim[1] == 2 && d[0] == 0.1 && isnan(d[1]) &&
            isinf(d[2]) && d[2] < 0 && d[3] == 0 && signbit(d[3]) && isinf(d[4]) && d[5] == 1e-320,
        "f64: BOM, CRLF, blank lines, quotes, nan/inf/-0, no final newline (rc %d %s)", rc,
        rc ? nxvk_errmsg() : "");
  nxvk_host_free(&r);

  write_text(p, "0.1\n16777217\n");
  rc = nxvk_csv_read(p, NXVK_F32, &r);
  f = r.data;
  CHECK(rc == 0 && f[0] == 0.1f && f[1] == 16777216.0f && r.shape.dim[1] == 1, "f32 rounds once (strtof), one column");
  nxvk_host_free(&r);

  write_text(p, "-2147483648,2147483647\n+5,0\n");
  rc = nxvk_csv_read(p, NXVK_I32, &r);
  int32_t *iv = r.data;
  CHECK(rc == 0 && iv[0] == INT32_MIN && iv[1] == INT32_MAX && iv[2] == 5, "i32 extremes");
  nxvk_host_free(&r);
  write_text(p, "0,255\n");
  rc = nxvk_csv_read(p, NXVK_U8, &r);
  CHECK(rc == 0 && ((uint8_t *)r.data)[1] == 255, "u8");
  nxvk_host_free(&r);

  write_text(p, "x, \"y z\"\n1,2\n3,4\n");
  rc = nxvk_csv_read(p, NXVK_F32, &r);
  f = r.data;
  CHECK(rc == 0 && r.shape.dim[0] == 2 && r.shape.dim[1] == 2 && f[0] == 1 && f[3] == 4,
        "a header row (no number in it) is detected and skipped (rc %d %s)", rc, rc ? nxvk_errmsg() : "");
  nxvk_host_free(&r);
  {
    nxvk_src s;
    write_text(p, "7,8\n1,2\n");
    rc = nxvk_src_open(p, &s);
    if (rc == 0) rc = nxvk_csv_read_src(&s, NXVK_F32, 1, &r);
    nxvk_src_close(&s);
    f = r.data;
    CHECK(rc == 0 && r.shape.dim[0] == 1 && f[0] == 1 && f[1] == 2, "--csv-header skips a numeric first row too");
    nxvk_host_free(&r);
  }
  { /* one huge field is refused as it grows, not after quadratic copying */
    size_t big = (size_t)8 << 20;
    char *text = malloc(big + 2);
    memset(text, '1', big);
    text[big] = '\n';
    text[big + 1] = 0;
    write_text(p, text);
    free(text);
    double t0 = now_s();
    rc = nxvk_csv_read(p, NXVK_F32, &r);
    CHECK(rc == NXVK_E_BAD_FILE && msg_has("a field longer than 4096 bytes") && now_s() - t0 < 2.0,
          "an 8 MiB field: refused in %.3f s (%s)", now_s() - t0, nxvk_errmsg());
    nxvk_host_free(&r);
  }

  static const struct {
    const char *text;
    nxvk_dtype d;
    int code;
    const char *msg;
  } bad[] = {
      {"", NXVK_F32, NXVK_E_BAD_FILE, "no rows"},
      {"\n\n  \n", NXVK_F32, NXVK_E_BAD_FILE, "no rows"},
      {"1,2,3\n4,5\n", NXVK_F32, NXVK_E_BAD_FILE, "line 2 (row 2) has 2 fields, row 1 has 3"},
      {"1,2\n\n3,4,5\n", NXVK_F32, NXVK_E_BAD_FILE, "line 3 (row 2) has 3 fields"},
      {"1,2\n3,x\n", NXVK_F32, NXVK_E_BAD_FILE, "line 2 (row 2), column 2: 'x' is not a number"},
      {"a,2\n1,2\n", NXVK_F64, NXVK_E_BAD_FILE, "line 1 (row 1): the first row mixes numbers and text"},
      {"1,b\n1,2\n", NXVK_F64, NXVK_E_BAD_FILE, "line 1 (row 1), column 2"},
      {"a,b\n1,2,3\n", NXVK_F64, NXVK_E_BAD_FILE, "line 2 (row 1) has 3 fields, the header has 2"},
      {"a,b\n", NXVK_F64, NXVK_E_BAD_FILE, "no rows"},
      {"1,2abc\n", NXVK_F64, NXVK_E_BAD_FILE, "'2abc'"},
      {"1,,2\n", NXVK_F32, NXVK_E_BAD_FILE, "column 2: '' is empty"},
      {"1,2,\n", NXVK_F32, NXVK_E_BAD_FILE, "column 3"},
      {"1.5\n", NXVK_I32, NXVK_E_BAD_FILE, "not an i32 integer"},
      {"nan\n", NXVK_I32, NXVK_E_BAD_FILE, "not an i32 integer"},
      {"2147483648\n", NXVK_I32, NXVK_E_BAD_FILE, "out of range for i32"},
      {"99999999999999999999999\n", NXVK_I32, NXVK_E_BAD_FILE, "out of range for i32"},
      {"256\n", NXVK_U8, NXVK_E_BAD_FILE, "out of range for u8"},
      {"-1\n", NXVK_U8, NXVK_E_BAD_FILE, "out of range for u8"},
      {"1,\"2\n", NXVK_F32, NXVK_E_BAD_FILE, "malformed"},
      {"1,\"2\"x\n", NXVK_F32, NXVK_E_BAD_FILE, "malformed"},
  };
  for (size_t k = 0; k < LEN(bad); k++) {
    write_text(p, bad[k].text);
    rc = nxvk_csv_read(p, bad[k].d, &r);
    CHECK(rc == bad[k].code && zeroed(&r) && msg_has("t.csv") && msg_has(bad[k].msg),
          "bad CSV %zu gives %s with '%s' (got %s: %s)", k, nxvk_err_name(bad[k].code), bad[k].msg,
          nxvk_err_name(rc), nxvk_errmsg());
    nxvk_host_free(&r);
  }
  unlink(p);
  CHECK(nxvk_csv_read(tpath("none.csv"), NXVK_F32, &r) == NXVK_E_IO && msg_has("none.csv"), "missing CSV: io error");

  /* bigger than one 64 KiB read chunk, lines split across chunks */
  FILE *fp = fopen(p, "wb");
  for (int i = 0; i < 20000; i++) fprintf(fp, "%d,%d.25,%d\n", i, i, -i);
  fclose(fp);
  rc = nxvk_csv_read(p, NXVK_F64, &r);
  d = r.data;
  CHECK(rc == 0 && r.shape.dim[0] == 20000 && d[3 * 19999 + 1] == 19999.25 && d[3 * 12345 + 2] == -12345,
        "20000 rows across read chunks");
  nxvk_host_free(&r);
  fp = fopen(p, "wb");
  for (int i = 0; i < 20000; i++) fprintf(fp, i == 15000 ? "%d,1\n" : "%d,1,2\n", i);
  fclose(fp);
  rc = nxvk_csv_read(p, NXVK_F64, &r);
  CHECK(rc == NXVK_E_BAD_FILE && msg_has("line 15001 (row 15001)"), "ragged row 15001 found by line (%s)", nxvk_errmsg());
  unlink(p);
}

/* ---------------------------------------------------------------- load */

static void test_load(void) {
  nxvk_host r, t = make(NXVK_I32, shp(2, 2, 2));
  int rc = nxvk_tensor_load(" {\"dtype\":\"i32\",\"data\":[1,2]}", NXVK_F32, &r);
  CHECK(rc == 0 && r.dtype == NXVK_I32 && r.shape.dim[0] == 2, "inline JSON");
  nxvk_host_free(&r);
  rc = nxvk_tensor_load("{\"dtype\":\"i32\"}", NXVK_F32, &r);
  CHECK(rc == NXVK_E_BAD_FILE && msg_has("inline tensor"), "bad inline JSON names 'inline tensor' (%s)", nxvk_errmsg());

  nxvk_npy_write(tpath("a.NPY"), &t);
  rc = nxvk_tensor_load(tpath("a.NPY"), NXVK_F32, &r);
  CHECK(rc == 0 && same(&r, &t), ".NPY by extension");
  nxvk_host_free(&r);
  rename(tpath("a.NPY"), tpath("noext"));
  rc = nxvk_tensor_load(tpath("noext"), NXVK_F32, &r);
  CHECK(rc == 0 && same(&r, &t), "npy without extension, by magic");
  nxvk_host_free(&r);
  unlink(tpath("noext"));

  write_text(tpath("b.Csv"), "1,2\n3,4\n");
  rc = nxvk_tensor_load(tpath("b.Csv"), NXVK_I32, &r);
  CHECK(rc == 0 && r.dtype == NXVK_I32 && r.shape.dim[0] == 2 && ((int32_t *)r.data)[3] == 4, ".Csv by extension, csv dtype used");
  nxvk_host_free(&r);
  unlink(tpath("b.Csv"));

  write_text(tpath("c.txt"), "1,2\n");
  rc = nxvk_tensor_load(tpath("c.txt"), NXVK_F32, &r);
  CHECK(rc == NXVK_E_BAD_FILE && msg_has("c.txt"), "unknown file kind: bad_file naming it (%s)", nxvk_errmsg());
  unlink(tpath("c.txt"));
  rc = nxvk_tensor_load(tpath("nothing"), NXVK_F32, &r);
  CHECK(rc == NXVK_E_IO && msg_has("nothing"), "missing file: io error naming it (%s)", nxvk_errmsg());
  rc = nxvk_tensor_load("", NXVK_F32, &r);
  CHECK(rc == NXVK_E_BAD_REQUEST, "empty argument: bad_request");
  nxvk_host_free(&t);
}

static int roundtrip(const char *in, const char *out) {
  nxvk_host t;
  int rc = nxvk_npy_read(in, &t);
  if (rc == 0) rc = nxvk_npy_write(out, &t);
  nxvk_host_free(&t);
  if (rc) fprintf(stderr, "test_io: %s: %s\n", nxvk_err_name(rc), nxvk_errmsg());
  return rc ? 1 : 0;
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "--roundtrip") == 0) return roundtrip(argv[2], argv[3]);
  if (argc != 1) {
    fprintf(stderr, "usage: test_io [--roundtrip IN.npy OUT.npy]\n");
    return 2;
  }
  snprintf(tmpdir, sizeof tmpdir, "/tmp/nxvk_test_io.XXXXXX");
  if (!mkdtemp(tmpdir)) {
    perror("mkdtemp");
    return 1;
  }
  test_npy_roundtrip();
  test_npy_write_fail();
  test_npy_fifo();
  test_npy_descr();
  test_npy_fortran();
  test_npy_headers();
  test_npy_bad();
  test_npy_truncate_fuzz();
  test_json_parse();
  test_json_bad();
  test_json_format();
  test_csv();
  test_load();
  CHECK(count_files(tmpdir) == 0, "no files left in the temp directory");
  rmdir(tmpdir);
  return tap_done();
}
