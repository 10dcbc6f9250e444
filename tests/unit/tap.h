/* tap.h - a minimal TAP producer for the C unit tests (one header, no deps).
 * CHECK(cond, fmt, ...) prints `ok N - desc` or `not ok N - desc` with the
 * values; tap_done() prints the plan and returns the exit status. */
#ifndef NXVK_TAP_H
#define NXVK_TAP_H
#include <stdio.h>

static int tap_n, tap_failed;

#define CHECK(cond, ...)                                   \
  do {                                                     \
    int ok_ = (cond) ? 1 : 0;                              \
    tap_n++;                                               \
    if (!ok_) tap_failed++;                                \
    printf("%s %d - ", ok_ ? "ok" : "not ok", tap_n);      \
    printf(__VA_ARGS__);                                   \
    printf("\n");                                          \
    if (!ok_) printf("#   failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
  } while (0)

#define CHECK_EQ_INT(a, b, desc)                                           \
  do {                                                                     \
    long long a_ = (long long)(a), b_ = (long long)(b);                    \
    CHECK(a_ == b_, "%s (got %lld, want %lld)", desc, a_, b_);             \
  } while (0)

static inline int tap_done(void) {
  printf("1..%d\n", tap_n);
  fflush(stdout);
  return tap_failed ? 1 : 0;
}
#endif
