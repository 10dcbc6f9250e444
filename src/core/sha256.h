/*
 * sha256.h - SHA-256 (FIPS 180-4), our own, for content addresses of the
 * shader cache.  Incremental (init/update/final) or one call.
 */
#ifndef NXVK_SHA256_H
#define NXVK_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define NXVK_SHA256_BYTES 32

typedef struct nxvk_sha256_ctx {
  uint32_t h[8];
  uint64_t bytes;          /* message length so far */
  uint8_t block[64];
  size_t used;             /* bytes waiting in block */
} nxvk_sha256_ctx;

void nxvk_sha256_init(nxvk_sha256_ctx *s);
void nxvk_sha256_update(nxvk_sha256_ctx *s, const void *data, size_t len);
void nxvk_sha256_final(nxvk_sha256_ctx *s, uint8_t digest[NXVK_SHA256_BYTES]);
void nxvk_sha256(const void *data, size_t len, uint8_t digest[NXVK_SHA256_BYTES]);
/* 64 lowercase hex digits and a NUL into hex[65]. */
void nxvk_sha256_hex(const uint8_t digest[NXVK_SHA256_BYTES], char hex[65]);

#endif
