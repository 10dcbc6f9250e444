/*
 * cache.c - the on-disk caches: SPIR-V of fused kernels, addressed by the
 * SHA-256 of their GLSL, and the VkPipelineCache blob of each device.
 *
 * Directory: $NXVK_CACHE_DIR, else $XDG_CACHE_HOME/nxvk, else
 * $HOME/.cache/nxvk; NXVK_NO_CACHE=1 (or --no-cache) turns both caches off
 * and then nothing here runs.  Layout:
 *   DIR/spirv/<64 hex digits>.spv    one kernel
 *   DIR/pipeline-<vendor>-<device>.bin   one device's VkPipelineCache data
 *
 * Every file starts with our own header (magic, format version, payload
 * length, a checksum of the payload); a file whose header, length or
 * checksum is wrong is treated as absent and written again.  Files are
 * written to a temporary name in the same folder and renamed into place, so
 * a reader sees a whole old file or a whole new one, and concurrent writers
 * (two `nxvk run` at once) never mix their bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/sha256.h"
#include "vkcore.h"

#define SPV_MAGIC "NXVKSPV"          /* 8 bytes with the NUL */
#define PLC_MAGIC "NXVKPLC"
#define FORMAT_VERSION 1u             /* of the pipeline cache file */
#define SPV_VERSION 2u                /* 2: the compiler's identity is part of the key */
#define SPV_HEADER 120u               /* magic 8, version 4, 0 4, length 8, key 32, sha 32,
                                         compiler 32 */
#define PLC_HEADER 56u                /* magic 8, version 4, vendor 4, device 4, driver 4,
                                         uuid 16, length 8, checksum 8 */
#define MAX_SPIRV_BYTES ((size_t)16 << 20)
#define MAX_PIPELINE_CACHE_BYTES ((size_t)1 << 30)

/* ---- little-endian fields ---- */

static void put32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void put64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t get32(const uint8_t *p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) v |= (uint32_t)p[i] << (8 * i);
  return v;
}
static uint64_t get64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

/* A fast checksum for the pipeline blob (megabytes on some drivers, read at
 * every start): 64-bit multiply-xorshift over 8-byte words.  It finds
 * truncation and flipped bytes; the driver validates its own data too. */
uint64_t nxvk_cache_checksum(const void *data, size_t len) {
  const uint8_t *p = data;
  uint64_t h = 0x9E3779B97F4A7C15ull ^ (uint64_t)len;
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t w = get64(p + i);
    h = (h ^ w) * 0xFF51AFD7ED558CCDull;
    h ^= h >> 32;
  }
  for (; i < len; i++) h = (h ^ p[i]) * 0x100000001B3ull;
  h ^= h >> 29;
  h *= 0xC4CEB9FE1A85EC53ull;
  return h ^ (h >> 32);
}

/* ---- files ---- */

/* The folder named by the environment into buf; false when none is named. */
static bool env_dir(char *buf, size_t len, size_t *need) {
  const char *env = getenv("NXVK_CACHE_DIR");
  int n;
  if (env && *env)
    n = snprintf(buf, len, "%s", env);
  else if ((env = getenv("XDG_CACHE_HOME")) && env[0] == '/') /* XDG: relative is invalid */
    n = snprintf(buf, len, "%s/nxvk", env);
  else if ((env = getenv("HOME")) && *env)
    n = snprintf(buf, len, "%s/.cache/nxvk", env);
  else
    return false;
  *need = (size_t)n;
  return true;
}

/* Room under PATH_MAX for "/spirv/<64 hex>.spv" and the temporary names. */
#define CACHE_DIR_MAX 3800

int nxvk_cache_dir_check(const char *dir) {
  char buf[8];
  size_t need = 0;
  if (dir && *dir)
    need = strlen(dir);
  else if (!env_dir(buf, sizeof buf, &need))
    return NXVK_OK;
  if (need > CACHE_DIR_MAX)
    return nxvk_seterr(NXVK_E_BAD_REQUEST,
                       "NXVK_CACHE_DIR: the cache folder's name is %zu bytes, over the limit of %d", need,
                       CACHE_DIR_MAX);
  return NXVK_OK;
}

char *nxvk_cache_dir_default(void) {
  char buf[CACHE_DIR_MAX + 1];
  size_t need;
  if (!env_dir(buf, sizeof buf, &need) || need > CACHE_DIR_MAX) return NULL; /* (checked at open) */
  size_t n = strlen(buf) + 1;
  char *p = malloc(n);
  if (p) memcpy(p, buf, n);
  return p;
}

bool nxvk_cache_disabled_by_env(void) {
  return nxvk_env_flag("NXVK_NO_CACHE");
}

/* mkdir -p, each folder made 0700 (the cache is the user's alone); an
 * existing folder is fine. */
static int make_dirs(const char *path) {
  char buf[4096];
  size_t n = strlen(path);
  if (n == 0 || n >= sizeof buf) return nxvk_seterr(NXVK_E_BAD_REQUEST, "cache: folder name too long");
  memcpy(buf, path, n + 1);
  for (size_t i = 1; i <= n; i++) {
    if (buf[i] != '/' && buf[i] != 0) continue;
    char keep = buf[i];
    buf[i] = 0;
    if (mkdir(buf, 0700) != 0 && errno != EEXIST)
      return nxvk_seterr(NXVK_E_IO, "cache: cannot create %s: %s", buf, strerror(errno));
    buf[i] = keep;
  }
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
    return nxvk_seterr(NXVK_E_IO, "cache: %s is not a folder", path);
  return NXVK_OK;
}

/* Header and payload to folder/name through nxvk_out: a mkstemp temporary
 * renamed into place; NXVK_OUT_REPLACE: whatever is at the path (a FIFO, a
 * link) is replaced, never followed or written through. */
static int write_atomic(const char *folder, const char *name, const void *head, size_t hlen,
                        const void *payload, size_t plen) {
  int rc = make_dirs(folder);
  if (rc) return rc;
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", folder, name);
  nxvk_out *o;
  rc = nxvk_out_open(path, NXVK_OUT_REPLACE, &o);
  if (rc) return rc;
  rc = nxvk_out_write(o, head, hlen);
  if (rc == NXVK_OK) rc = nxvk_out_write(o, payload, plen);
  if (rc) {
    nxvk_out_abort(o);
    return rc;
  }
  return nxvk_out_commit(o);
}

/* The whole file, up to max bytes (malloc'd).  ENOENT leaves *data NULL. */
static int read_file(const char *path, size_t max, uint8_t **data, size_t *len, char *why,
                     size_t whylen) {
  *data = NULL;
  *len = 0;
  /* never follow a link, never wait on a FIFO: a cache file is a regular
   * file of plausible size or it is ignored (and replaced when written) */
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    if (e != ENOENT) snprintf(why, whylen, "cannot open: %s", e == ELOOP ? "a symbolic link" : strerror(e));
    return e == ENOENT ? 0 : -1;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > max) {
    snprintf(why, whylen, "not a regular file of at most %zu bytes", max);
    close(fd);
    return -1;
  }
  size_t n = (size_t)st.st_size;
  uint8_t *buf = malloc(n ? n : 1);
  size_t got = 0;
  while (buf && got < n) {
    ssize_t r = read(fd, buf + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  close(fd);
  if (!buf || got != n) {
    free(buf);
    snprintf(why, whylen, "%s", buf ? "short read" : "out of memory");
    return -1;
  }
  *data = buf;
  *len = n;
  return 0;
}

static bool hex_key(const char *key, uint8_t out[32]) {
  if (strlen(key) != 64) return false;
  for (int i = 0; i < 64; i++) {
    char ch = key[i];
    int v = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
    if (v < 0) return false;
    if (i % 2 == 0) out[i / 2] = (uint8_t)(v << 4);
    else out[i / 2] |= (uint8_t)v;
  }
  return true;
}

/* ---- SPIR-V ---- */

/* The rest of the entry's key: SHA-256 of the compiler's version and options. */
static void compiler_digest(uint8_t out[32]) {
  const char *id = nxvk_glsl_compiler_id();
  nxvk_sha256(id, strlen(id), out);
}

void nxvk_cache_spirv_discard(const char *dir, const char *key) {
  uint8_t k[32];
  if (!dir || !hex_key(key, k)) return;
  char path[4200];
  snprintf(path, sizeof path, "%s/spirv/%s.spv", dir, key);
  unlink(path);
}

nxvk_cache_result nxvk_cache_spirv_load(const char *dir, const char *key, uint32_t **words,
                                        size_t *bytes, char *why, size_t whylen) {
  *words = NULL;
  *bytes = 0;
  why[0] = 0;
  uint8_t want_key[32];
  if (!hex_key(key, want_key)) {
    snprintf(why, whylen, "bad key");
    return NXVK_CACHE_MISS;
  }
  char path[4200];
  snprintf(path, sizeof path, "%s/spirv/%s.spv", dir, key);
  uint8_t *f;
  size_t n;
  if (read_file(path, SPV_HEADER + MAX_SPIRV_BYTES, &f, &n, why, whylen) != 0)
    return NXVK_CACHE_CORRUPT;
  if (!f) return NXVK_CACHE_MISS;
  nxvk_cache_result res = NXVK_CACHE_CORRUPT;
  uint8_t sha[32], cdig[32];
  if (n < SPV_HEADER) {
    snprintf(why, whylen, "truncated: %zu bytes, shorter than the header", n);
  } else if (memcmp(f, SPV_MAGIC, 8) != 0) {
    snprintf(why, whylen, "not an nxvk SPIR-V cache file (bad magic)");
  } else if (get32(f + 8) != SPV_VERSION) {
    snprintf(why, whylen, "format version %u, not %u", get32(f + 8), SPV_VERSION);
  } else if (get64(f + 16) != n - SPV_HEADER) {
    snprintf(why, whylen, "truncated or padded: header says %llu bytes of SPIR-V, file has %zu",
             (unsigned long long)get64(f + 16), n - SPV_HEADER);
  } else if ((n - SPV_HEADER) % 4 != 0 || n - SPV_HEADER < 20) {
    snprintf(why, whylen, "SPIR-V of %zu bytes is not a module", n - SPV_HEADER);
  } else if (memcmp(f + 24, want_key, 32) != 0) {
    snprintf(why, whylen, "made for another key");
  } else if (compiler_digest(cdig), memcmp(f + 88, cdig, 32) != 0) {
    snprintf(why, whylen, "made by another compiler version or options");
  } else if (nxvk_sha256(f + SPV_HEADER, n - SPV_HEADER, sha), memcmp(sha, f + 56, 32) != 0) {
    snprintf(why, whylen, "checksum mismatch (corrupt content)");
  } else if (get32(f + SPV_HEADER) != 0x07230203u) {
    snprintf(why, whylen, "no SPIR-V magic number");
  } else {
    *bytes = n - SPV_HEADER;
    *words = malloc(*bytes);
    if (*words) {
      memcpy(*words, f + SPV_HEADER, *bytes);
      res = NXVK_CACHE_HIT;
    } else {
      *bytes = 0;
      snprintf(why, whylen, "out of memory");
      res = NXVK_CACHE_MISS;
    }
  }
  free(f);
  return res;
}

int nxvk_cache_spirv_store(const char *dir, const char *key, const uint32_t *words, size_t bytes) {
  uint8_t head[SPV_HEADER] = {0};
  memcpy(head, SPV_MAGIC, 8);
  put32(head + 8, SPV_VERSION);
  put64(head + 16, bytes);
  compiler_digest(head + 88);
  if (!hex_key(key, head + 24)) return nxvk_seterr(NXVK_E_BAD_REQUEST, "cache: bad key");
  nxvk_sha256(words, bytes, head + 56);
  char folder[4200], name[80];
  snprintf(folder, sizeof folder, "%s/spirv", dir);
  snprintf(name, sizeof name, "%s.spv", key);
  return write_atomic(folder, name, head, sizeof head, words, bytes);
}

/* ---- VkPipelineCache ---- */

static void pipeline_path(const nxvk_ctx *c, char *buf, size_t len) {
  snprintf(buf, len, "%s/pipeline-%04x-%04x.bin", c->cache_dir, c->info.vendor_id,
           c->info.device_id);
}

/* Our header, then the driver's header (VkPipelineCacheHeaderVersionOne,
 * little-endian whatever the host): both must name this device and driver. */
static bool pipeline_blob_ok(const nxvk_ctx *c, const uint8_t *f, size_t n, char *why, size_t len) {
  const nxvk_device_info *d = &c->info;
  if (n < PLC_HEADER) {
    snprintf(why, len, "corrupt (truncated header), ignored");
    return false;
  }
  if (memcmp(f, PLC_MAGIC, 8) != 0 || get32(f + 8) != FORMAT_VERSION) {
    snprintf(why, len, "corrupt (bad magic or format version), ignored");
    return false;
  }
  if (get32(f + 12) != d->vendor_id || get32(f + 16) != d->device_id ||
      get32(f + 20) != d->driver_version_raw || memcmp(f + 24, d->pipeline_cache_uuid, 16) != 0) {
    snprintf(why, len, "made by another device or driver version, ignored");
    return false;
  }
  uint64_t plen = get64(f + 40);
  if (plen != n - PLC_HEADER) {
    snprintf(why, len, "corrupt (truncated: %llu bytes promised, %zu present), ignored",
             (unsigned long long)plen, n - PLC_HEADER);
    return false;
  }
  if (nxvk_cache_checksum(f + PLC_HEADER, n - PLC_HEADER) != get64(f + 48)) {
    snprintf(why, len, "corrupt (checksum mismatch), ignored");
    return false;
  }
  const uint8_t *v = f + PLC_HEADER;
  size_t vn = n - PLC_HEADER;
  if (vn < 32 || get32(v) < 32 || get32(v) > vn || get32(v + 4) != 1u /* VERSION_ONE */ ||
      get32(v + 8) != d->vendor_id || get32(v + 12) != d->device_id ||
      memcmp(v + 16, d->pipeline_cache_uuid, 16) != 0) {
    snprintf(why, len, "driver header names another device or pipelineCacheUUID, ignored");
    return false;
  }
  return true;
}

int nxvk_pipeline_cache_open(nxvk_ctx *c) {
  uint8_t *f = NULL;
  size_t n = 0;
  char why[160] = "", path[4200], name[64];
  snprintf(name, sizeof name, "pipeline-%04x-%04x.bin", c->info.vendor_id, c->info.device_id);
  bool use = false;
  if (!c->cache_dir) {
    snprintf(c->pcache_status, sizeof c->pcache_status, "off");
  } else {
    pipeline_path(c, path, sizeof path);
    if (read_file(path, PLC_HEADER + MAX_PIPELINE_CACHE_BYTES, &f, &n, why, sizeof why) != 0) {
      snprintf(c->pcache_status, sizeof c->pcache_status, "%s: %s, ignored", name, why);
      c->pcache_rejected = true;
    } else if (!f) {
      snprintf(c->pcache_status, sizeof c->pcache_status, "%s: none yet", name);
    } else if (!pipeline_blob_ok(c, f, n, why, sizeof why)) {
      snprintf(c->pcache_status, sizeof c->pcache_status, "%s: %s", name, why);
      c->pcache_rejected = true;
    } else {
      use = true;
    }
  }
  VkPipelineCacheCreateInfo ci = {
      .sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO,
      .initialDataSize = use ? n - PLC_HEADER : 0,
      .pInitialData = use ? f + PLC_HEADER : NULL,
  };
  VkResult r = c->vk.vkCreatePipelineCache(c->device, &ci, NULL, &c->pipeline_cache);
  if (r != VK_SUCCESS && use) { /* the driver refused the data: start empty */
    snprintf(c->pcache_status, sizeof c->pcache_status, "%s: refused by the driver, ignored", name);
    c->pcache_rejected = true;
    use = false;
    ci.initialDataSize = 0;
    ci.pInitialData = NULL;
    r = c->vk.vkCreatePipelineCache(c->device, &ci, NULL, &c->pipeline_cache);
  }
  if (use) {
    snprintf(c->pcache_status, sizeof c->pcache_status, "%s: loaded %zu bytes", name, n - PLC_HEADER);
    c->pcache_loaded_bytes = n - PLC_HEADER;
    c->pcache_loaded_sum = get64(f + 48);
  }
  free(f);
  if (r != VK_SUCCESS) return nxvk_vk_fail(r, "vkCreatePipelineCache", __FILE__, __LINE__);
  return NXVK_OK;
}

void nxvk_pipeline_cache_save(nxvk_ctx *c) {
  if (!c->cache_dir || !c->pipeline_cache) return;
  size_t n = 0;
  if (c->vk.vkGetPipelineCacheData(c->device, c->pipeline_cache, &n, NULL) != VK_SUCCESS || n == 0 ||
      n > MAX_PIPELINE_CACHE_BYTES)
    return;
  uint8_t *data = malloc(n);
  if (!data) return;
  VkResult r = c->vk.vkGetPipelineCacheData(c->device, c->pipeline_cache, &n, data);
  uint64_t sum = nxvk_cache_checksum(data, n);
  /* unchanged since it was loaded: leave the file as it is */
  if (r == VK_SUCCESS &&
      (c->pcache_rejected || n != c->pcache_loaded_bytes || sum != c->pcache_loaded_sum)) {
    uint8_t head[PLC_HEADER] = {0};
    memcpy(head, PLC_MAGIC, 8);
    put32(head + 8, FORMAT_VERSION);
    put32(head + 12, c->info.vendor_id);
    put32(head + 16, c->info.device_id);
    put32(head + 20, c->info.driver_version_raw);
    memcpy(head + 24, c->info.pipeline_cache_uuid, 16);
    put64(head + 40, n);
    put64(head + 48, sum);
    char name[64];
    snprintf(name, sizeof name, "pipeline-%04x-%04x.bin", c->info.vendor_id, c->info.device_id);
    (void)write_atomic(c->cache_dir, name, head, sizeof head, data, n); /* a cache: best effort */
  }
  free(data);
}
