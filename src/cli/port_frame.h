/*
 * port_frame.h - the payload layout of `nxvk port` (man nxvk-port(7)):
 *
 *   [4-byte big-endian header length H][H bytes of UTF-8 JSON][tensor bytes]
 *
 * Engine-independent (no nxvk.h, no allocation, no I/O) so a fuzz target can
 * link port_frame.c alone.  The outer {:packet, 4} length prefix is the
 * caller's business; this file sees one payload.
 */
#ifndef NXVK_PORT_FRAME_H
#define NXVK_PORT_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define PORT_FRAME_PREFIX 4 /* bytes of each big-endian length */

enum {
  PORT_FRAME_OK = 0,
  PORT_FRAME_SHORT = -1,            /* fewer than 4 bytes: no header length */
  PORT_FRAME_HEADER_EMPTY = -2,     /* header length 0 */
  PORT_FRAME_HEADER_TOO_LARGE = -3, /* header length over max_header */
  PORT_FRAME_HEADER_PAST_END = -4,  /* header length past the payload's end */
  PORT_FRAME_BAD_UTF8 = -5,         /* header is not UTF-8 */
  PORT_FRAME_NUL = -6,              /* header holds a NUL byte */
};

typedef struct port_frame {
  const char *header; /* not NUL-terminated */
  size_t header_len;
  const uint8_t *data; /* the tensor bytes, back to back */
  size_t data_len;
  size_t taken;        /* data bytes handed out by port_frame_take */
  char error[160];     /* one line when decode fails */
} port_frame;

/* Split a payload of len bytes.  Returns PORT_FRAME_OK or a negative
 * PORT_FRAME_* code with out->error describing it. */
int port_frame_decode(const uint8_t *payload, size_t len, size_t max_header, port_frame *out);

/* The next n tensor bytes (in header order); -1 when fewer remain. */
int port_frame_take(port_frame *f, size_t n, const uint8_t **out);
/* Tensor bytes not yet taken. */
size_t port_frame_left(const port_frame *f);

uint32_t port_be32_read(const uint8_t *p);
void port_be32_write(uint8_t *p, uint32_t v);

/* Whether s[0..n) is well-formed UTF-8 (no overlongs, surrogates, or code
 * points past U+10FFFF).  *bad gets the offset of the first bad byte. */
int port_utf8_valid(const uint8_t *s, size_t n, size_t *bad);

struct iovec;
/* After a writev of k bytes from the *nv vectors at *v (k = 0 before the
 * first): step *v and *nv past what was written and past empty vectors,
 * shortening the first one left.  Shared by the port and its clients. */
void port_iov_advance(struct iovec **v, int *nv, size_t k);

#endif
