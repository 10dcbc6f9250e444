/* port_frame.c - splitting one `nxvk port` payload (see port_frame.h). */
#include "port_frame.h"

#include <stdio.h>
#include <string.h>
#include <sys/uio.h>

uint32_t port_be32_read(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

void port_be32_write(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

int port_utf8_valid(const uint8_t *s, size_t n, size_t *bad) {
  size_t i = 0;
  while (i < n) {
    uint8_t c = s[i];
    size_t len;
    uint32_t cp, min;
    if (c < 0x80) {
      i++;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2, cp = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, cp = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, cp = c & 0x07, min = 0x10000;
    } else {
      goto invalid;
    }
    if (n - i < len) goto invalid;
    for (size_t k = 1; k < len; k++) {
      if ((s[i + k] & 0xC0) != 0x80) goto invalid;
      cp = cp << 6 | (s[i + k] & 0x3F);
    }
    /* overlong forms, UTF-16 surrogates and values past Unicode are not UTF-8 */
    if (cp < min || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) goto invalid;
    i += len;
  }
  return 1;
invalid:
  if (bad) *bad = i;
  return 0;
}

int port_frame_decode(const uint8_t *payload, size_t len, size_t max_header, port_frame *out) {
  memset(out, 0, sizeof *out);
  if (len < PORT_FRAME_PREFIX) {
    snprintf(out->error, sizeof out->error,
             "payload of %zu bytes is too short for its 4-byte header length", len);
    return PORT_FRAME_SHORT;
  }
  size_t hlen = port_be32_read(payload);
  size_t room = len - PORT_FRAME_PREFIX;
  if (hlen == 0) {
    snprintf(out->error, sizeof out->error, "header length is 0 (a request is a JSON object)");
    return PORT_FRAME_HEADER_EMPTY;
  }
  if (hlen > max_header) {
    snprintf(out->error, sizeof out->error, "header length %zu is over the limit of %zu bytes",
             hlen, max_header);
    return PORT_FRAME_HEADER_TOO_LARGE;
  }
  if (hlen > room) {
    snprintf(out->error, sizeof out->error,
             "header length %zu is past the end of the payload (%zu bytes after the length)",
             hlen, room);
    return PORT_FRAME_HEADER_PAST_END;
  }
  const uint8_t *h = payload + PORT_FRAME_PREFIX;
  const void *nul = memchr(h, 0, hlen);
  if (nul) {
    snprintf(out->error, sizeof out->error, "header holds a NUL byte at offset %zu",
             (size_t)((const uint8_t *)nul - h));
    return PORT_FRAME_NUL;
  }
  size_t bad = 0;
  if (!port_utf8_valid(h, hlen, &bad)) {
    snprintf(out->error, sizeof out->error, "header is not UTF-8 (bad byte 0x%02x at offset %zu)",
             h[bad], bad);
    return PORT_FRAME_BAD_UTF8;
  }
  out->header = (const char *)h;
  out->header_len = hlen;
  out->data = h + hlen;
  out->data_len = room - hlen;
  return PORT_FRAME_OK;
}

int port_frame_take(port_frame *f, size_t n, const uint8_t **out) {
  if (n > f->data_len - f->taken) return -1;
  *out = f->data + f->taken;
  f->taken += n;
  return 0;
}

size_t port_frame_left(const port_frame *f) { return f->data_len - f->taken; }

void port_iov_advance(struct iovec **v, int *nv, size_t k) {
  while (*nv > 0 && (k > 0 || (*v)->iov_len == 0)) {
    size_t step = k < (*v)->iov_len ? k : (*v)->iov_len;
    (*v)->iov_base = (char *)(*v)->iov_base + step;
    (*v)->iov_len -= step;
    k -= step;
    if ((*v)->iov_len == 0) (*v)++, (*nv)--;
  }
}
