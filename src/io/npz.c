/* npz.c - .npz read: a zip of NAME.npy members, stored (numpy.savez) or
 * deflated (numpy.savez_compressed), zip64 fields as numpy writes them.
 *
 * The central directory is the index: every offset and size in it is checked
 * against the bytes present before it is used, inflated sizes are bounded by
 * the size the directory declares, which must be within deflate's largest
 * ratio of the compressed size (and NXVK_MAX_FILE_BYTES), and each
 * member's CRC-32 is checked.  Each member is then read as a .npy. */
#define _POSIX_C_SOURCE 200809L

#include "../core/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define NPZ_MAX_MEMBERS 4096

static uint32_t rd16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t rd32(const uint8_t *p) { return rd16(p) | rd16(p + 2) << 16; }
static uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

static int bad(const char *name, const char *what) {
  return nxvk_seterr(NXVK_E_BAD_FILE, "%s: not a readable .npz: %s", name, what);
}

static int inflate_member(const uint8_t *src, uint64_t clen, uint8_t *dst, uint64_t ulen, const char *name,
                          const char *member) {
  z_stream z;
  memset(&z, 0, sizeof z);
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) return nxvk_seterr(NXVK_E_NO_MEMORY, "%s: inflateInit failed", name);
  uint64_t in_at = 0, out_at = 0;
  int zr = Z_OK;
  while (zr == Z_OK) {
    uInt in_step = clen - in_at > (1u << 30) ? (1u << 30) : (uInt)(clen - in_at);
    uInt out_step = ulen - out_at > (1u << 30) ? (1u << 30) : (uInt)(ulen - out_at);
    z.next_in = (Bytef *)(uintptr_t)(src + in_at);
    z.avail_in = in_step;
    z.next_out = dst + out_at;
    z.avail_out = out_step;
    zr = inflate(&z, Z_NO_FLUSH);
    in_at += in_step - z.avail_in;
    out_at += out_step - z.avail_out;
    if (zr == Z_OK && z.avail_out == out_step && z.avail_in == in_step) break; /* no progress */
    if (zr == Z_BUF_ERROR) break;
  }
  inflateEnd(&z);
  if (zr != Z_STREAM_END || out_at != ulen)
    return nxvk_seterr(NXVK_E_BAD_FILE, "%s: member %s: deflate data is corrupt or not of the size declared",
                       name, member);
  return NXVK_OK;
}

int nxvk_npz_read_mem(const void *buf, size_t len, const char *name, nxvk_npz *out) {
  const uint8_t *b = buf;
  memset(out, 0, sizeof *out);
  if (!name) name = "<memory>";
  if (len < 22) return bad(name, "shorter than a zip's end record");
  /* the end record, then (numpy writes zip64) its zip64 form */
  size_t eocd = (size_t)-1;
  size_t lo = len > 22 + 65535 ? len - 22 - 65535 : 0;
  for (size_t i = len - 22 + 1; i-- > lo;)
    if (rd32(b + i) == 0x06054b50) {
      eocd = i;
      break;
    }
  if (eocd == (size_t)-1) return bad(name, "no zip end record (is it a zip file?)");
  uint64_t count = rd16(b + eocd + 10), cdsize = rd32(b + eocd + 12), cdoff = rd32(b + eocd + 16);
  if (rd16(b + eocd + 4) != 0 || rd16(b + eocd + 6) != 0) return bad(name, "a multi-disk zip");
  if ((count == 0xFFFF || cdsize == 0xFFFFFFFF || cdoff == 0xFFFFFFFF) && eocd >= 20 &&
      rd32(b + eocd - 20) == 0x07064b50) {
    uint64_t z64 = rd64(b + eocd - 20 + 8);
    if (len < 56 || z64 > len - 56 || rd32(b + z64) != 0x06064b50) return bad(name, "bad zip64 end record");
    count = rd64(b + z64 + 32);
    cdsize = rd64(b + z64 + 40);
    cdoff = rd64(b + z64 + 48);
  }
  if (count > NPZ_MAX_MEMBERS)
    return nxvk_seterr(NXVK_E_TOO_LARGE, "%s: %llu members is over the limit of %d", name,
                       (unsigned long long)count, NPZ_MAX_MEMBERS);
  if (cdoff > len || cdsize > len - cdoff) return bad(name, "central directory outside the file");
  out->host = calloc(count + 1, sizeof *out->host);
  out->names = calloc(count + 1, sizeof *out->names);
  if (!out->host || !out->names) {
    nxvk_npz_free(out);
    return nxvk_seterr(NXVK_E_NO_MEMORY, "%s: out of memory", name);
  }
  int rc = NXVK_OK;
  const uint8_t *c = b + cdoff, *cend = b + cdoff + cdsize;
  for (uint64_t i = 0; i < count && rc == NXVK_OK; i++) {
    if ((size_t)(cend - c) < 46 || rd32(c) != 0x02014b50) {
      rc = bad(name, "central directory entry truncated");
      break;
    }
    uint32_t flags = rd16(c + 8), method = rd16(c + 10), crc = rd32(c + 16);
    uint64_t csize = rd32(c + 20), usize = rd32(c + 24), loff = rd32(c + 42);
    size_t nl = rd16(c + 28), xl = rd16(c + 30), kl = rd16(c + 32);
    if ((size_t)(cend - c) - 46 < nl + xl + kl) {
      rc = bad(name, "central directory entry truncated");
      break;
    }
    const uint8_t *x = c + 46 + nl, *xend = x + xl;
    while (xend - x >= 4) { /* zip64 sizes where the 32-bit fields say 0xFFFFFFFF */
      uint32_t id = rd16(x), sz = rd16(x + 2);
      if ((size_t)(xend - x) - 4 < sz) break;
      if (id == 1) {
        const uint8_t *v = x + 4, *vend = v + sz;
        if (usize == 0xFFFFFFFF && vend - v >= 8) usize = rd64(v), v += 8;
        if (csize == 0xFFFFFFFF && vend - v >= 8) csize = rd64(v), v += 8;
        if (loff == 0xFFFFFFFF && vend - v >= 8) loff = rd64(v), v += 8;
      }
      x += 4 + sz;
    }
    char member[256];
    if (nl > 200) {
      rc = nxvk_seterr(NXVK_E_BAD_FILE, "%s: a member's name is over 200 bytes", name);
      break;
    }
    snprintf(member, sizeof member, "%.*s", (int)nl, (const char *)c + 46);
    for (char *q = member; *q; q++)
      if ((unsigned char)*q < 0x20 || (unsigned char)*q >= 0x7f) *q = '?';
    c += 46 + nl + xl + kl;
    if (flags & 1) {
      rc = nxvk_seterr(NXVK_E_BAD_FILE, "%s: member %s is encrypted", name, member);
      break;
    }
    if (method != 0 && method != 8) {
      rc = nxvk_seterr(NXVK_E_BAD_FILE, "%s: member %s: compression method %u (stored and deflate are read)",
                       name, member, method);
      break;
    }
    if (loff > len || len - loff < 30 || rd32(b + loff) != 0x04034b50) {
      rc = nxvk_seterr(NXVK_E_BAD_FILE, "%s: member %s: local header outside the file", name, member);
      break;
    }
    uint64_t data = loff + 30 + rd16(b + loff + 26) + rd16(b + loff + 28);
    if (data > len || csize > len - data) {
      rc = nxvk_seterr(NXVK_E_BAD_FILE, "%s: member %s: data outside the file", name, member);
      break;
    }
    /* deflate cannot expand past about 1032:1: a larger declared size is a
     * lie, refused before it is allocated */
    if (usize > (uint64_t)NXVK_MAX_FILE_BYTES || (method == 0 && usize != csize) ||
        (method == 8 && usize > csize * 1040 + 64)) {
      rc = nxvk_seterr(NXVK_E_BAD_FILE, "%s: member %s: size %llu is not plausible", name, member,
                       (unsigned long long)usize);
      break;
    }
    const uint8_t *bytes = b + data;
    uint8_t *inflated = NULL;
    if (method == 8) {
      inflated = malloc(usize ? (size_t)usize : 1);
      if (!inflated) {
        rc = nxvk_seterr(NXVK_E_NO_MEMORY, "%s: member %s: cannot allocate %llu bytes", name, member,
                         (unsigned long long)usize);
        break;
      }
      rc = inflate_member(bytes, csize, inflated, usize, name, member);
      bytes = inflated;
    }
    if (rc == NXVK_OK) {
      uLong sum = crc32(0L, Z_NULL, 0);
      for (uint64_t at = 0; at < usize;) {
        uint64_t step = usize - at > (1u << 30) ? (1u << 30) : usize - at;
        sum = crc32(sum, bytes + at, (uInt)step);
        at += step;
      }
      if ((uint32_t)sum != crc) rc = nxvk_seterr(NXVK_E_BAD_FILE, "%s: member %s: CRC-32 mismatch", name, member);
    }
    /* the member's name without ".npy" is the tensor's */
    size_t ml = strlen(member);
    if (ml >= 4 && strcmp(member + ml - 4, ".npy") == 0) member[ml - 4] = '\0';
    if (rc == NXVK_OK && !member[0]) rc = nxvk_seterr(NXVK_E_BAD_FILE, "%s: a member has no name", name);
    char label[600];
    snprintf(label, sizeof label, "%s[%s]", name, member);
    if (rc == NXVK_OK) rc = nxvk_npy_read_mem(bytes, (size_t)usize, label, &out->host[i]);
    free(inflated);
    if (rc == NXVK_OK) {
      size_t n = strlen(member) + 1;
      out->names[i] = malloc(n);
      if (!out->names[i]) {
        nxvk_host_free(&out->host[i]);
        rc = nxvk_seterr(NXVK_E_NO_MEMORY, "%s: out of memory", name);
      } else {
        memcpy(out->names[i], member, n);
        out->n++;
      }
    }
  }
  if (rc) nxvk_npz_free(out);
  return rc;
}

void nxvk_npz_free(nxvk_npz *z) {
  for (int i = 0; z && i < z->n; i++) {
    nxvk_host_free(&z->host[i]);
    free(z->names[i]);
  }
  if (z) {
    free(z->host);
    free(z->names);
    memset(z, 0, sizeof *z);
  }
}

int nxvk_npz_read_src(nxvk_src *s, nxvk_npz *out) {
  uint8_t *buf;
  size_t len;
  memset(out, 0, sizeof *out);
  int rc = nxvk_src_read_all(s, NXVK_MAX_FILE_BYTES, &buf, &len);
  if (rc) return rc;
  rc = nxvk_npz_read_mem(buf, len, s->name, out);
  free(buf);
  return rc;
}
