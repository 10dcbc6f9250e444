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

#endif
