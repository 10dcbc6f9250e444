/* test_sha256.c - our SHA-256 against the FIPS 180-4 example vectors (NIST
 * "Cryptographic Standards and Guidelines: Examples with Intermediate
 * Values", SHA-256), plus incremental updates split at every block edge. */
#include "core/sha256.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

static void hex_of(const void *data, size_t len, char hex[65]) {
  uint8_t d[NXVK_SHA256_BYTES];
  nxvk_sha256(data, len, d);
  nxvk_sha256_hex(d, hex);
}

int main(void) {
  static const struct {
    const char *msg, *digest;
  } vectors[] = {
      {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
      {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
       "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
  };
  char hex[65];
  for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
    hex_of(vectors[i].msg, strlen(vectors[i].msg), hex);
    CHECK(strcmp(hex, vectors[i].digest) == 0, "FIPS 180-4 vector %zu (%zu bytes): got %s", i + 1,
          strlen(vectors[i].msg), hex);
  }

  /* one million 'a', fed in pieces of 1, 7 and 64 + 3 bytes */
  static const char *million = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
  char *a = malloc(1000000);
  memset(a, 'a', 1000000);
  hex_of(a, 1000000, hex);
  CHECK(strcmp(hex, million) == 0, "one million 'a' in one call: got %s", hex);
  static const size_t pieces[] = {1, 7, 67};
  for (size_t p = 0; p < 3; p++) {
    nxvk_sha256_ctx s;
    uint8_t d[NXVK_SHA256_BYTES];
    nxvk_sha256_init(&s);
    for (size_t off = 0; off < 1000000; off += pieces[p])
      nxvk_sha256_update(&s, a + off, 1000000 - off < pieces[p] ? 1000000 - off : pieces[p]);
    nxvk_sha256_final(&s, d);
    nxvk_sha256_hex(d, hex);
    CHECK(strcmp(hex, million) == 0, "one million 'a' in %zu-byte pieces: got %s", pieces[p], hex);
  }

  /* lengths around the padding edges (55, 56, 63, 64, 65, 119, 120): split
   * anywhere, the digest is the one-call digest */
  static const size_t lens[] = {55, 56, 63, 64, 65, 119, 120, 128};
  for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++) {
    char want[65];
    hex_of(a, lens[l], want);
    int bad = 0;
    for (size_t cut = 0; cut <= lens[l]; cut++) {
      nxvk_sha256_ctx s;
      uint8_t d[NXVK_SHA256_BYTES];
      nxvk_sha256_init(&s);
      nxvk_sha256_update(&s, a, cut);
      nxvk_sha256_update(&s, a + cut, lens[l] - cut);
      nxvk_sha256_final(&s, d);
      nxvk_sha256_hex(d, hex);
      bad += strcmp(hex, want) != 0;
    }
    CHECK(bad == 0, "%zu bytes split at every position: %d digests differ", lens[l], bad);
  }
  /* different inputs give different digests (a flipped bit is seen) */
  char other[65];
  a[500000] ^= 1;
  hex_of(a, 1000000, other);
  CHECK(strcmp(other, million) != 0, "one flipped bit changes the digest");
  free(a);
  return tap_done();
}
