/*
 * internal.h - helpers shared by the engine's files; never included by the
 * front end.
 */
#ifndef NXVK_INTERNAL_H
#define NXVK_INTERNAL_H

#include "../nxvk.h"

#if defined(__GNUC__) || defined(__clang__)
#define NXVK_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define NXVK_PRINTF(f, a)
#endif

/* Record a detail for this thread's last error and return code, so callers
 * write `return nxvk_seterr(NXVK_E_BAD_FILE, "%s: header too long", name);`. */
int nxvk_seterr(int code, const char *fmt, ...) NXVK_PRINTF(2, 3);

#define NXVK_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* A tuning switch: unset or "" gives dflt, "0" false, anything else true
 * (nxvk_env_flag is this with dflt false). */
bool nxvk_env_bool(const char *name, bool dflt);

/* Checked multiply for sizes: false on overflow. */
static inline bool nxvk_mul_ok(int64_t a, int64_t b, int64_t *out) {
  if (a < 0 || b < 0) return false;
  if (a != 0 && b > INT64_MAX / a) return false;
  *out = a * b;
  return true;
}

/* An input opened once: a file, or "-" for stdin.  Bytes peeked to tell
 * the format (nxvk_src_peek) are handed on to the reader, so a pipe is read
 * once (src.c).  Directories are refused at open. */
typedef struct nxvk_src {
  FILE *f;
  const char *name; /* for messages */
  bool regular;     /* a regular file: size is its size */
  int64_t size;
  uint8_t peek[16];
  size_t npeek, ppos;
  bool eof_seen;
  bool own;         /* fclose at the end (not stdin) */
} nxvk_src;
int nxvk_src_open(const char *path, nxvk_src *s);
/* Up to n bytes peeked (fewer at end of input); *got tells how many. */
int nxvk_src_peek(nxvk_src *s, size_t n, const uint8_t **p, size_t *got);
/* Like fread: fewer than n only at end of input or on error (NXVK_E_IO set). */
int nxvk_src_read(nxvk_src *s, void *buf, size_t n, size_t *got);
/* The rest of the input, growing as bytes arrive, at most max bytes. */
int nxvk_src_read_all(nxvk_src *s, int64_t max, uint8_t **buf, size_t *len);
void nxvk_src_close(nxvk_src *s);
int nxvk_npy_read_src(nxvk_src *s, nxvk_host *out);
int nxvk_npz_read_src(nxvk_src *s, nxvk_npz *out);
int nxvk_csv_read_src(nxvk_src *s, nxvk_dtype dtype, int header, nxvk_host *out);

/* The complete .npy header of t (magic .. '\n'), malloc'd (npy.c). */
int nxvk_npy_header(const nxvk_host *t, uint8_t **out, size_t *outlen);

#endif
