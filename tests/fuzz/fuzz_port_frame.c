/*
 * fuzz_port_frame.c - the `nxvk port` payload decoder (src/cli/port_frame.c)
 * on arbitrary payloads.
 *
 * The first byte picks the header limit (small ones make the too-large path
 * reachable), the rest is one payload as the server hands it to
 * port_frame_decode.  A decoded frame must describe the payload exactly,
 * its header must be what an independent UTF-8 check accepts, and the
 * header is then parsed as the server parses it (cJSON, one object, text
 * after it refused).  The tensor bytes are taken in pieces whose sizes come
 * from the payload itself, as the server takes them per named tensor.
 */
#include <cjson/cJSON.h>

#include "cli/port_frame.h"
#include "fuzz_common.h"

/* Well-formed UTF-8 by Unicode's table 3-7, written apart from the decoder. */
static bool utf8_ok(const uint8_t *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    uint8_t c = s[i];
    uint8_t lo = 0x80, hi = 0xBF;
    size_t more;
    if (c <= 0x7F) more = 0;
    else if (c >= 0xC2 && c <= 0xDF) more = 1;
    else if (c == 0xE0) more = 2, lo = 0xA0;
    else if (c >= 0xE1 && c <= 0xEC) more = 2;
    else if (c == 0xED) more = 2, hi = 0x9F;
    else if (c >= 0xEE && c <= 0xEF) more = 2;
    else if (c == 0xF0) more = 3, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3) more = 3;
    else if (c == 0xF4) more = 3, hi = 0x8F;
    else return false;
    if (n - i - 1 < more) return false;
    for (size_t k = 1; k <= more; k++) {
      uint8_t b = s[i + k];
      if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) return false;
    }
    i += more + 1;
  }
  return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  static const size_t limits[4] = {64, 1024, (size_t)1 << 28, (size_t)-1};
  size_t max_header = limits[data[0] % 4];
  const uint8_t *payload = data + 1;
  size_t len = size - 1;
  /* a copy of exactly len bytes: ASan sees any read past the payload */
  uint8_t *copy = malloc(len ? len : 1);
  FUZZ_CHECK(copy != NULL, "out of memory");
  if (len) memcpy(copy, payload, len);

  size_t bad = (size_t)-1;
  int valid = port_utf8_valid(copy, len, &bad);
  FUZZ_CHECK(valid == utf8_ok(copy, len), "port_utf8_valid says %d over %zu bytes", valid, len);
  if (!valid) FUZZ_CHECK(bad < len && utf8_ok(copy, bad), "first bad byte reported at %zu", bad);

  port_frame f;
  int rc = port_frame_decode(copy, len, max_header, &f);
  if (rc != PORT_FRAME_OK) {
    FUZZ_CHECK(rc >= PORT_FRAME_NUL && rc <= PORT_FRAME_SHORT, "code %d", rc);
    FUZZ_CHECK(f.error[0] && !memchr(f.error, '\n', strlen(f.error)), "error text: %s", f.error);
    free(copy);
    return 0;
  }
  FUZZ_CHECK(f.header == (const char *)copy + 4 && f.header_len > 0 && f.header_len <= max_header,
             "header at %p, %zu bytes", (const void *)f.header, f.header_len);
  FUZZ_CHECK(4 + f.header_len + f.data_len == len, "4 + %zu + %zu != %zu", f.header_len, f.data_len, len);
  FUZZ_CHECK(port_be32_read(copy) == f.header_len, "header length");
  FUZZ_CHECK(f.data == copy + 4 + f.header_len && f.taken == 0, "data");
  FUZZ_CHECK(!memchr(f.header, 0, f.header_len), "NUL in a decoded header");
  FUZZ_CHECK(utf8_ok((const uint8_t *)f.header, f.header_len), "decoded header is not UTF-8");

  /* the header as serve_payload reads it */
  const char *end = NULL;
  cJSON *req = cJSON_ParseWithLengthOpts(f.header, f.header_len, &end, 0);
  if (req) {
    FUZZ_CHECK(end >= f.header && end <= f.header + f.header_len, "cJSON end out of the header");
    char *text = cJSON_PrintUnformatted(req);
    free(text);
    cJSON_Delete(req);
  }

  /* tensor bytes in pieces: each piece's size from the data's own bytes */
  size_t total = 0;
  uint8_t round_trip[4];
  for (int piece = 0; piece < 16; piece++) {
    size_t left = port_frame_left(&f);
    FUZZ_CHECK(left == f.data_len - total, "left %zu after taking %zu of %zu", left, total, f.data_len);
    size_t want = left ? (f.data[total % f.data_len] % (left + 2)) : (size_t)piece;
    const uint8_t *p = NULL;
    if (port_frame_take(&f, want, &p) == 0) {
      FUZZ_CHECK(want <= left && p == f.data + total, "take of %zu with %zu left", want, left);
      volatile uint8_t sink = 0;
      for (size_t i = 0; i < want; i++) sink ^= p[i];
      (void)sink;
      total += want;
    } else {
      FUZZ_CHECK(want > left, "take of %zu refused with %zu left", want, left);
    }
  }
  port_be32_write(round_trip, (uint32_t)f.header_len);
  FUZZ_CHECK(memcmp(round_trip, copy, 4) == 0, "be32 write/read disagree");
  free(copy);
  return 0;
}
