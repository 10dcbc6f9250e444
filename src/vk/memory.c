/*
 * memory.c - buffers, their accounting, and moving bytes in and out.
 *
 * Device-local buffers are filled and read through a temporary host-visible
 * staging buffer; on CPU and integrated devices (host_visible_fast_path) the
 * buffer itself is host-visible and mapped, so transfers are memcpy.  Large
 * transfers run on several threads (transfer_parallel): one memcpy into
 * staging runs at a fraction of the PCIe rate, so each thread moves its own
 * pieces and one thread's memcpy overlaps another's DMA copy.
 */
#include "vkcore.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int find_memory_type(nxvk_ctx *c, uint32_t type_bits, VkMemoryPropertyFlags need,
                            VkMemoryPropertyFlags prefer, uint32_t *out) {
  const VkPhysicalDeviceMemoryProperties *mp = &c->mem_props;
  int fallback = -1;
  for (uint32_t i = 0; i < mp->memoryTypeCount; i++) {
    VkMemoryPropertyFlags f = mp->memoryTypes[i].propertyFlags;
    if (!(type_bits & (1u << i)) || (f & need) != need) continue;
    if ((f & prefer) == prefer) {
      *out = i;
      return NXVK_OK;
    }
    if (fallback < 0) fallback = (int)i;
  }
  if (fallback < 0) return nxvk_seterr(NXVK_E_ALLOC_FAILED, "no memory type with flags 0x%x", need);
  *out = (uint32_t)fallback;
  return NXVK_OK;
}

/* vkCreateBuffer for a buffer the compute queue uses and, where the
 * transfer lanes run on a queue family of their own (xfer_on_tq), the
 * lanes copy to and from too: VK_SHARING_MODE_CONCURRENT over the two
 * families there, exclusive otherwise.  pnext is chained to the create
 * info (import_host's external memory), or NULL. */
static int create_shared_buffer(nxvk_ctx *c, const void *pnext, VkDeviceSize size, VkBufferUsageFlags usage,
                                VkBuffer *out) {
  uint32_t families[2] = {c->queue_family, c->xfer_family};
  VkBufferCreateInfo bci = {
      .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
      .pNext = pnext,
      .size = size,
      .usage = usage,
      .sharingMode = c->xfer_on_tq ? VK_SHARING_MODE_CONCURRENT : VK_SHARING_MODE_EXCLUSIVE,
      .queueFamilyIndexCount = c->xfer_on_tq ? 2u : 0u,
      .pQueueFamilyIndices = c->xfer_on_tq ? families : NULL,
  };
  VkResult r = c->vk.vkCreateBuffer(c->device, &bci, NULL, out);
  if (r != VK_SUCCESS) return nxvk_vk_fail(r, "vkCreateBuffer", __FILE__, __LINE__);
  return NXVK_OK;
}

static void account(nxvk_ctx *c, int64_t bytes, int64_t count) {
  unsigned long long now = atomic_fetch_add(&c->live_bytes, (unsigned long long)bytes) +
                           (unsigned long long)bytes;
  atomic_fetch_add(&c->live_buffers, (unsigned long long)count);
  unsigned long long peak = atomic_load(&c->peak_bytes);
  while (now > peak && !atomic_compare_exchange_weak(&c->peak_bytes, &peak, now)) {
  }
}

/* Size class of a request and the capacity that class allocates:
 * 256 * 2^j * {1, 1.25, 1.5, 1.75}.  -1 when too large to pool. */
static int size_class(VkDeviceSize size, VkDeviceSize *cap) {
  VkDeviceSize base = 256;
  for (int k = 0; k < NXVK_POOL_CLASSES; k++) {
    VkDeviceSize c = base + (base / 4) * (VkDeviceSize)(k % 4);
    if (k % 4 == 3) base *= 2;
    if (c > NXVK_POOL_MAX_BUFFER) break;
    if (c >= size) {
      *cap = c;
      return k;
    }
  }
  *cap = size;
  return -1;
}

/* The pool's lists are doubly linked, newest first, so that reuse takes the
 * newest buffer of a class and eviction the oldest of all (the least recent
 * of the class tails) without a walk.  Lock held for these three. */
static void pool_unlink(nxvk_pool *p, nxvk_buffer *b) {
  int h = b->host_visible, k = b->pool_class;
  if (b->prev) b->prev->next = b->next;
  else p->free[h][k] = b->next;
  if (b->next) b->next->prev = b->prev;
  else p->oldest[h][k] = b->prev;
  b->next = b->prev = NULL;
  p->bytes -= b->accounted;
}

static void pool_push(nxvk_pool *p, nxvk_buffer *b) {
  int h = b->host_visible, k = b->pool_class;
  b->released = ++p->clock;
  b->prev = NULL;
  b->next = p->free[h][k];
  if (b->next) b->next->prev = b;
  else p->oldest[h][k] = b;
  p->free[h][k] = b;
  p->bytes += b->accounted;
}

static nxvk_buffer *pool_oldest(nxvk_pool *p) {
  nxvk_buffer *o = NULL;
  for (int h = 0; h < 2; h++)
    for (int k = 0; k < NXVK_POOL_CLASSES; k++)
      if (p->oldest[h][k] && (!o || p->oldest[h][k]->released < o->released)) o = p->oldest[h][k];
  return o;
}

static nxvk_buffer *pool_take(nxvk_ctx *c, bool host_visible, int cls) {
  if (cls < 0) return NULL;
  pthread_mutex_lock(&c->pool.lock);
  nxvk_buffer *b = c->pool.free[host_visible][cls];
  if (b) pool_unlink(&c->pool, b);
  pthread_mutex_unlock(&c->pool.lock);
  return b;
}

static void buffer_destroy(nxvk_ctx *c, nxvk_buffer *b) {
  if (b->mapped) c->vk.vkUnmapMemory(c->device, b->memory);
  c->vk.vkDestroyBuffer(c->device, b->buffer, NULL);
  c->vk.vkFreeMemory(c->device, b->memory, NULL);
  free(b);
}

void nxvk_pool_trim(nxvk_ctx *c) {
  pthread_mutex_lock(&c->pool.lock);
  for (int h = 0; h < 2; h++)
    for (int k = 0; k < NXVK_POOL_CLASSES; k++) {
      nxvk_buffer *b = c->pool.free[h][k];
      while (b) {
        nxvk_buffer *next = b->next;
        c->pool.bytes -= b->accounted;
        buffer_destroy(c, b);
        b = next;
      }
      c->pool.free[h][k] = c->pool.oldest[h][k] = NULL;
    }
  pthread_mutex_unlock(&c->pool.lock);
}

void nxvk_ctx_trim(nxvk_ctx *c) {
  nxvk_pool_trim(c);
  nxvk_xfer_lanes_destroy(c);
}

void nxvk_ctx_set_mem_cap(nxvk_ctx *c, uint64_t bytes) { atomic_store(&c->mem_cap, bytes); }

static int buffer_create(nxvk_ctx *c, VkDeviceSize size, bool host_visible, bool kept, nxvk_buffer **out);

int nxvk_buffer_create(nxvk_ctx *c, VkDeviceSize size, bool host_visible, nxvk_buffer **out) {
  return buffer_create(c, size, host_visible, false, out);
}

int nxvk_buffer_create_kept(nxvk_ctx *c, VkDeviceSize size, nxvk_buffer **out) {
  return buffer_create(c, size, false, true, out);
}

static int buffer_create(nxvk_ctx *c, VkDeviceSize size, bool host_visible, bool kept, nxvk_buffer **out) {
  *out = NULL;
  if (atomic_load(&c->lost)) return nxvk_seterr(NXVK_E_DEVICE_LOST, "device was lost");
  if (size == 0) size = 4; /* Vulkan has no empty buffers */
  if (size > c->info.max_storage_buffer_range && !host_visible)
    return nxvk_seterr(NXVK_E_TOO_LARGE,
                       "%llu bytes is over this device's storage buffer range (%llu bytes)",
                       (unsigned long long)size, (unsigned long long)c->info.max_storage_buffer_range);
  if (c->info.max_allocation_size && size > c->info.max_allocation_size)
    return nxvk_seterr(NXVK_E_TOO_LARGE,
                       "%llu bytes is over this device's largest allocation (%llu bytes)",
                       (unsigned long long)size, (unsigned long long)c->info.max_allocation_size);
  VkDeviceSize cap;
  int cls = size_class(size, &cap);
  unsigned long long mcap = atomic_load(&c->mem_cap), live = atomic_load(&c->live_bytes);
  if (!kept && mcap && (size > mcap || live > mcap - size)) /* a cap of the caller's (port --max-bytes) */
    return nxvk_seterr(NXVK_E_ALLOC_FAILED,
                       "%llu bytes more would pass the memory cap of %llu bytes (%llu bytes live)",
                       (unsigned long long)size, mcap, live);
  nxvk_buffer *b = kept ? NULL : pool_take(c, host_visible, cls);
  if (b) {
    b->size = size;
    atomic_init(&b->refs, 1);
    account(c, (int64_t)b->accounted, 1);
    *out = b;
    return NXVK_OK;
  }
  b = calloc(1, sizeof *b);
  if (!b) return nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  b->size = size;
  b->host_visible = host_visible;
  b->pool_class = kept ? -1 : cls;
  b->kept = kept;
  atomic_init(&b->refs, 1);
  /* the class's capacity, so the buffer can serve any request of its class */
  int brc = create_shared_buffer(c, NULL, cap,
                                 VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                     VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                 &b->buffer);
  if (brc) {
    free(b);
    return brc;
  }
  /* Large buffers get their own allocation where the driver asks for one
   * (VkMemoryDedicatedRequirements, core in Vulkan 1.1). */
  VkMemoryDedicatedRequirements dreq = {.sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_REQUIREMENTS};
  VkMemoryRequirements2 req2 = {.sType = VK_STRUCTURE_TYPE_MEMORY_REQUIREMENTS_2, .pNext = &dreq};
  bool v11 = c->info.api_version_raw >= VK_API_VERSION_1_1 && c->vk.vkGetBufferMemoryRequirements2;
  if (v11) {
    VkBufferMemoryRequirementsInfo2 ri = {.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_REQUIREMENTS_INFO_2,
                                          .buffer = b->buffer};
    c->vk.vkGetBufferMemoryRequirements2(c->device, &ri, &req2);
  } else {
    c->vk.vkGetBufferMemoryRequirements(c->device, b->buffer, &req2.memoryRequirements);
  }
  VkMemoryRequirements req = req2.memoryRequirements;
  bool dedicated = v11 && (dreq.prefersDedicatedAllocation || dreq.requiresDedicatedAllocation) &&
                   !c->no_dedicated;
  bool map = host_visible || c->host_visible_fast_path;
  VkMemoryPropertyFlags need = map ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                         VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
                                   : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  /* Staging reads back faster from cached memory. */
  VkMemoryPropertyFlags prefer = need | (host_visible ? VK_MEMORY_PROPERTY_HOST_CACHED_BIT
                                                      : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  uint32_t type = 0;
  int rc = find_memory_type(c, req.memoryTypeBits, need, prefer, &type);
  if (rc) {
    c->vk.vkDestroyBuffer(c->device, b->buffer, NULL);
    free(b);
    return rc;
  }
  VkMemoryDedicatedAllocateInfo dai = {.sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO,
                                       .buffer = b->buffer};
  VkMemoryAllocateInfo mai = {
      .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
      .pNext = dedicated ? &dai : NULL,
      .allocationSize = req.size,
      .memoryTypeIndex = type,
  };
  VkResult r = c->vk.vkAllocateMemory(c->device, &mai, NULL, &b->memory);
  if (r == VK_SUCCESS) r = c->vk.vkBindBufferMemory(c->device, b->buffer, b->memory, 0);
  if (r == VK_SUCCESS && map) r = c->vk.vkMapMemory(c->device, b->memory, 0, VK_WHOLE_SIZE, 0, &b->mapped);
  if (r != VK_SUCCESS) {
    if (b->memory) c->vk.vkFreeMemory(c->device, b->memory, NULL);
    c->vk.vkDestroyBuffer(c->device, b->buffer, NULL);
    free(b);
    rc = nxvk_vk_fail(r, "vkAllocateMemory", __FILE__, __LINE__);
    if (rc == NXVK_E_ALLOC_FAILED)
      nxvk_seterr(rc, "device memory allocation of %llu bytes failed",
                  (unsigned long long)req.size);
    return rc;
  }
  atomic_fetch_add(&c->buffers_created, 1);
  b->accounted = req.size;
  if (!kept) account(c, (int64_t)req.size, 1);
  *out = b;
  return NXVK_OK;
}

void nxvk_buffer_ref(nxvk_buffer *b) {
  if (b) atomic_fetch_add(&b->refs, 1);
}

void nxvk_buffer_unref(nxvk_ctx *c, nxvk_buffer *b) {
  if (!b || atomic_fetch_sub(&b->refs, 1) != 1) return;
  if (!b->kept) account(c, -(int64_t)b->accounted, -1);
  if (b->pool_class >= 0 && !atomic_load(&c->lost)) {
    nxvk_buffer *evicted = NULL;
    pthread_mutex_lock(&c->pool.lock);
    bool keep = b->accounted <= c->pool.cap;
    if (keep) {
      /* room for it at the cost of the buffers that waited longest: a pool
       * full of sizes no longer used made every run of a new size allocate
       * its memory afresh, and runs on fresh memory are the slow ones
       * (bench/NOTES.md, measuring) */
      while (c->pool.bytes + b->accounted > c->pool.cap) {
        nxvk_buffer *old = pool_oldest(&c->pool);
        pool_unlink(&c->pool, old);
        old->next = evicted;
        evicted = old;
      }
      pool_push(&c->pool, b);
    }
    pthread_mutex_unlock(&c->pool.lock);
    while (evicted) {
      nxvk_buffer *next = evicted->next;
      buffer_destroy(c, evicted);
      evicted = next;
    }
    if (keep) return;
  }
  buffer_destroy(c, b);
}

/* ---- imported host memory (VK_EXT_external_memory_host) ---- */

/* [host, host + n), aligned to c->import_align at both ends, as a buffer the
 * device copies to and from by DMA: no memcpy through staging.  The buffer
 * is unpooled and unaccounted (its memory is the caller's); it must be gone
 * before the transfer returns, so nothing touches the caller's memory
 * after.  Fails (with no side effect) where the driver refuses the range:
 * read-only pages, memory it cannot pin, a type it cannot map. */
static int import_host(nxvk_ctx *c, char *host, size_t n, nxvk_buffer **out) {
  *out = NULL;
  if (c->inject_import_fail) return nxvk_seterr(NXVK_E_ALLOC_FAILED, "import refused (NXVK_TEST_INJECT)");
  VkExternalMemoryHandleTypeFlagBits ht = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
  VkMemoryHostPointerPropertiesEXT hp = {.sType = VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT};
  VkResult r = c->vk.vkGetMemoryHostPointerPropertiesEXT(c->device, ht, host, &hp);
  if (r != VK_SUCCESS) return nxvk_vk_fail(r, "vkGetMemoryHostPointerPropertiesEXT", __FILE__, __LINE__);
  nxvk_buffer *b = calloc(1, sizeof *b);
  if (!b) return nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  b->size = n;
  b->pool_class = -1;
  atomic_init(&b->refs, 1);
  VkExternalMemoryBufferCreateInfo ebci = {.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO,
                                           .handleTypes = ht};
  int brc = create_shared_buffer(c, &ebci, n, VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                 &b->buffer);
  if (brc) {
    free(b);
    return brc;
  }
  VkMemoryRequirements req;
  c->vk.vkGetBufferMemoryRequirements(c->device, b->buffer, &req);
  uint32_t type = 0;
  /* coherent, so the device's writes need no invalidation to be seen */
  VkMemoryPropertyFlags need = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  int rc = req.size > n ? nxvk_seterr(NXVK_E_ALLOC_FAILED, "imported buffer wants %llu bytes of %zu",
                                      (unsigned long long)req.size, n)
                        : find_memory_type(c, req.memoryTypeBits & hp.memoryTypeBits, need, need, &type);
  if (rc) {
    c->vk.vkDestroyBuffer(c->device, b->buffer, NULL);
    free(b);
    return rc;
  }
  VkImportMemoryHostPointerInfoEXT imp = {.sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT,
                                          .handleType = ht,
                                          .pHostPointer = host};
  VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                              .pNext = &imp,
                              .allocationSize = n,
                              .memoryTypeIndex = type};
  r = c->vk.vkAllocateMemory(c->device, &mai, NULL, &b->memory);
  if (r == VK_SUCCESS) r = c->vk.vkBindBufferMemory(c->device, b->buffer, b->memory, 0);
  if (r != VK_SUCCESS) {
    if (b->memory) c->vk.vkFreeMemory(c->device, b->memory, NULL);
    c->vk.vkDestroyBuffer(c->device, b->buffer, NULL);
    free(b);
    return nxvk_vk_fail(r, "importing host memory", __FILE__, __LINE__);
  }
  account(c, 0, 1); /* a live buffer (leak checks count it), no device bytes */
  *out = b;
  return NXVK_OK;
}

/* Imports smaller than this go through staging: an import has a fixed cost
 * (pinning, the driver's page tables) that a small memcpy undercuts. */
#define IMPORT_MIN ((size_t)256 << 10)

/* One piece: n bytes between host memory and b at off, in one submission.
 * Where import is on (c->import_align), the piece's aligned middle moves by
 * DMA straight from or to host memory and only the unaligned head and tail
 * through *staging; otherwise all of it through *staging.  *staging (at
 * least n bytes, host-visible) is created on first need and kept for the
 * caller's next piece. */
static int piece_copy(nxvk_ctx *c, nxvk_buffer **staging, size_t staging_size, nxvk_buffer *b,
                      VkDeviceSize off, char *host, size_t n, bool write, bool import) {
  size_t a = import ? (size_t)c->import_align : 0, lo = n, hi = n; /* imported: [lo, hi) of the piece */
  nxvk_buffer *imp = NULL;
  if (a) {
    size_t ms = (size_t)((a - (uintptr_t)host % a) % a);
    size_t me = ms < n ? ms + (n - ms) / a * a : ms;
    if (me > ms && me - ms >= IMPORT_MIN) {
      if (import_host(c, host + ms, me - ms, &imp) == NXVK_OK) {
        lo = ms;
        hi = me;
        atomic_fetch_add(&c->imported_bytes, me - ms);
      } else {
        atomic_fetch_add(&c->import_failures, 1); /* this piece goes through staging */
      }
    }
  }
  bool staged = lo > 0 || hi < n;
  int rc = NXVK_OK;
  if (staged && !*staging) rc = nxvk_buffer_create(c, staging_size, true, staging);
  nxvk_buffer *st = *staging;
  if (rc == NXVK_OK && staged && write) { /* staging at the piece's own offsets */
    memcpy(st->mapped, host, lo);
    memcpy((char *)st->mapped + hi, host + hi, n - hi);
  }
  nxvk_rec *r = NULL;
  if (rc == NXVK_OK) rc = nxvk_rec_begin(c, false, &r);
  if (rc == NXVK_OK && lo > 0)
    rc = write ? nxvk_rec_copy(r, st, 0, b, off, lo) : nxvk_rec_copy(r, b, off, st, 0, lo);
  if (rc == NXVK_OK && imp)
    rc = write ? nxvk_rec_copy(r, imp, 0, b, off + lo, hi - lo) : nxvk_rec_copy(r, b, off + lo, imp, 0, hi - lo);
  if (rc == NXVK_OK && hi < n)
    rc = write ? nxvk_rec_copy(r, st, hi, b, off + hi, n - hi) : nxvk_rec_copy(r, b, off + hi, st, hi, n - hi);
  if (rc == NXVK_OK) rc = nxvk_rec_submit(r, NULL); /* waits: the device is done with host memory */
  else nxvk_rec_abort(r);
  /* we asked for coherent memory, so a plain read of the staging copy is enough */
  if (rc == NXVK_OK && staged && !write) {
    memcpy(host, st->mapped, lo);
    memcpy(host + hi, (char *)st->mapped + hi, n - hi);
  }
  nxvk_buffer_unref(c, imp);
  return rc;
}

/* ---- large transfers on several threads ---- */

/* bytes per copy and threads at most: c->xfer_piece (default 4 MiB; the
 * lanes take smaller pieces for smaller transfers) and c->xfer_threads
 * (default 16), set by NXVK_XFER_PIECE and NXVK_XFER_THREADS
 * (src/ops/tuning.c) */
#define XFER_PIECE (x->piece)
#define XFER_MAX_THREADS 64

typedef struct xfer {
  nxvk_ctx *c;
  nxvk_buffer *b;
  VkDeviceSize off;
  char *host;
  size_t n;
  size_t first;                          /* bytes in piece 0 (the rest: XFER_PIECE each but the last) */
  size_t npieces;
  size_t piece;
  bool write;
  bool pipe;                             /* lanes (pipe_run), not piece_copy */
  int nthreads;
  atomic_int first_rc;
  pthread_mutex_t lock;
  char err[512];                         /* the first failure's message (errors are per thread) */
} xfer;

typedef struct xfer_worker {
  xfer *x;
  int index;
  pthread_t tid;
} xfer_worker;

/* The first failure's code and message (errors are per thread). */
static void xfer_fail(xfer *x, int rc) {
  int zero = 0;
  pthread_mutex_lock(&x->lock);
  if (atomic_compare_exchange_strong(&x->first_rc, &zero, rc))
    snprintf(x->err, sizeof x->err, "%s", nxvk_errmsg());
  pthread_mutex_unlock(&x->lock);
}

static int pipe_run(xfer *x, int index);

/* Worker t moves pieces t, t + T, t + 2T, ... so the threads finish together. */
static void *xfer_main(void *arg) {
  xfer_worker *w = arg;
  xfer *x = w->x;
  if (x->pipe) {
    int rc = pipe_run(x, w->index);
    if (rc) xfer_fail(x, rc);
    return NULL;
  }
  nxvk_buffer *staging = NULL;
  int rc = NXVK_OK;
  for (size_t p = (size_t)w->index; rc == NXVK_OK && p < x->npieces; p += (size_t)x->nthreads) {
    if (atomic_load(&x->first_rc)) break;
    size_t at = p == 0 ? 0 : x->first + (p - 1) * XFER_PIECE;
    size_t len = p == 0 ? x->first : x->n - at < XFER_PIECE ? x->n - at : XFER_PIECE;
    rc = piece_copy(x->c, &staging, XFER_PIECE, x->b, x->off + at, x->host + at, len, x->write, true);
  }
  nxvk_buffer_unref(x->c, staging);
  if (rc) xfer_fail(x, rc);
  return NULL;
}

/* ---- pipelined transfers: lanes ----
 *
 * A lane is one thread's means to move pieces with the DMA copy of one
 * overlapping the memcpy of the next: two staging slots of c->xfer_piece
 * bytes each (host-visible, coherent, mapped; cached for downloads, and
 * for uploads too unless NXVK_XFER_WC=1 asks for uncached, write-combined
 * memory), a command buffer and a fence per slot, and their command pool.
 * Each piece is its own vkQueueSubmit with its own fence, outside group
 * commit: a group's members all wait for its last command, which made the
 * threads of the earlier design (one synchronous submission per piece)
 * memcpy together and then wait together for every DMA of the group.
 * Lanes are made on first need and kept, idle ones in c->xfer_lanes, so a
 * transfer allocates and pins nothing once warm.  Their staging is host
 * memory the context keeps (like its pipelines): not in live_bytes, the
 * pool or the memory cap; nxvk_ctx_trim frees it. */
typedef struct nxvk_xfer_lane {
  VkQueue queue;                       /* where its copies go, and the lock held around submitting */
  pthread_mutex_t *qlock;
  bool tq;                             /* a transfer-only queue: no compute stage in its barriers */
  VkCommandPool pool;
  VkCommandBuffer cmd[2];
  VkFence fence[2];
  bool pending[2];                     /* submitted, fence not yet waited on */
  /* staging slots [kind][slot]: kind 0 uncached (uploads with xfer_wc), 1 cached */
  VkBuffer st[2][2];
  VkDeviceMemory st_mem[2][2];
  void *st_map[2][2];
  size_t cap;                          /* bytes per slot */
  struct nxvk_xfer_lane *next;
} nxvk_xfer_lane;

static void lane_free_slots(nxvk_ctx *c, nxvk_xfer_lane *L) {
  for (int k = 0; k < 2; k++)
    for (int s = 0; s < 2; s++) {
      if (L->st_map[k][s]) c->vk.vkUnmapMemory(c->device, L->st_mem[k][s]);
      if (L->st[k][s]) c->vk.vkDestroyBuffer(c->device, L->st[k][s], NULL);
      if (L->st_mem[k][s]) c->vk.vkFreeMemory(c->device, L->st_mem[k][s], NULL);
      L->st[k][s] = VK_NULL_HANDLE;
      L->st_mem[k][s] = VK_NULL_HANDLE;
      L->st_map[k][s] = NULL;
    }
}

static void lane_destroy(nxvk_ctx *c, nxvk_xfer_lane *L) {
  if (!L) return;
  lane_free_slots(c, L);
  for (int s = 0; s < 2; s++)
    if (L->fence[s]) c->vk.vkDestroyFence(c->device, L->fence[s], NULL);
  if (L->pool) c->vk.vkDestroyCommandPool(c->device, L->pool, NULL); /* frees its command buffers */
  free(L);
}

void nxvk_xfer_lanes_destroy(nxvk_ctx *c) {
  pthread_mutex_lock(&c->xfer_lock);
  nxvk_xfer_lane *L = c->xfer_lanes;
  c->xfer_lanes = NULL;
  pthread_mutex_unlock(&c->xfer_lock);
  while (L) {
    nxvk_xfer_lane *next = L->next;
    lane_destroy(c, L);
    L = next;
  }
}

static int lane_create(nxvk_ctx *c, nxvk_xfer_lane **out) {
  *out = NULL;
  nxvk_xfer_lane *L = calloc(1, sizeof *L);
  if (!L) return nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  /* the compute queue, or the transfer family's queues in turn (with the
   * compute queue among them where mixed) */
  L->queue = c->queue;
  L->qlock = &c->queue_lock;
  if (c->xfer_on_tq) {
    pthread_mutex_lock(&c->xfer_lock);
    unsigned k = c->xfer_lanes_made++;
    pthread_mutex_unlock(&c->xfer_lock);
    int nq = c->xfer_nq + (c->xfer_mixed ? 1 : 0), q = (int)(k % (unsigned)nq);
    if (q < c->xfer_nq) {
      L->queue = c->xfer_queues[q];
      L->qlock = &c->xfer_qlock[q];
      L->tq = true;
    }
  }
  VkCommandPoolCreateInfo cpci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                  .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                  .queueFamilyIndex = L->tq ? c->xfer_family : c->queue_family};
  VkResult r = c->vk.vkCreateCommandPool(c->device, &cpci, NULL, &L->pool);
  if (r == VK_SUCCESS) {
    VkCommandBufferAllocateInfo cbai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                        .commandPool = L->pool,
                                        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                        .commandBufferCount = 2};
    r = c->vk.vkAllocateCommandBuffers(c->device, &cbai, L->cmd);
  }
  VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  for (int s = 0; s < 2 && r == VK_SUCCESS; s++) r = c->vk.vkCreateFence(c->device, &fci, NULL, &L->fence[s]);
  if (r != VK_SUCCESS) {
    lane_destroy(c, L);
    return nxvk_vk_fail(r, "creating a transfer lane", __FILE__, __LINE__);
  }
  *out = L;
  return NXVK_OK;
}

/* Staging slots of kind k (0 uncached, 1 cached) for L, made on first use. */
static int lane_slots(nxvk_ctx *c, nxvk_xfer_lane *L, int k, size_t cap) {
  if (L->cap != cap) { /* another piece size (not within one context today) */
    lane_free_slots(c, L);
    L->cap = cap;
  }
  for (int s = 0; s < 2; s++) {
    if (L->st[k][s]) continue;
    VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                              .size = cap,
                              .usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                              .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    VkResult r = c->vk.vkCreateBuffer(c->device, &bci, NULL, &L->st[k][s]);
    if (r != VK_SUCCESS) return nxvk_vk_fail(r, "vkCreateBuffer", __FILE__, __LINE__);
    VkMemoryRequirements req;
    c->vk.vkGetBufferMemoryRequirements(c->device, L->st[k][s], &req);
    /* host-visible and coherent; cached or not as asked, else what there is */
    const VkPhysicalDeviceMemoryProperties *mp = &c->mem_props;
    VkMemoryPropertyFlags need = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    int best = -1, rank = -1;
    for (uint32_t i = 0; i < mp->memoryTypeCount; i++) {
      VkMemoryPropertyFlags f = mp->memoryTypes[i].propertyFlags;
      if (!(req.memoryTypeBits & (1u << i)) || (f & need) != need) continue;
      bool cached = (f & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) != 0;
      /* device-local host-visible memory (a BAR window) is small and slow to read: last */
      int rk = ((cached == (k == 1)) ? 2 : 0) + ((f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) ? 0 : 1);
      if (rk > rank) {
        rank = rk;
        best = (int)i;
      }
    }
    if (best < 0) return nxvk_seterr(NXVK_E_ALLOC_FAILED, "no host-visible coherent memory for staging");
    VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                .allocationSize = req.size,
                                .memoryTypeIndex = (uint32_t)best};
    r = c->vk.vkAllocateMemory(c->device, &mai, NULL, &L->st_mem[k][s]);
    if (r == VK_SUCCESS) r = c->vk.vkBindBufferMemory(c->device, L->st[k][s], L->st_mem[k][s], 0);
    if (r == VK_SUCCESS) r = c->vk.vkMapMemory(c->device, L->st_mem[k][s], 0, VK_WHOLE_SIZE, 0, &L->st_map[k][s]);
    if (r != VK_SUCCESS) {
      int rc = nxvk_vk_fail(r, "allocating transfer staging", __FILE__, __LINE__);
      if (rc == NXVK_E_ALLOC_FAILED)
        nxvk_seterr(rc, "staging allocation of %llu bytes failed", (unsigned long long)req.size);
      return rc;
    }
  }
  return NXVK_OK;
}

static int lane_get(nxvk_ctx *c, nxvk_xfer_lane **out) {
  pthread_mutex_lock(&c->xfer_lock);
  nxvk_xfer_lane *L = c->xfer_lanes;
  if (L) c->xfer_lanes = L->next;
  pthread_mutex_unlock(&c->xfer_lock);
  if (L) {
    L->next = NULL;
    *out = L;
    return NXVK_OK;
  }
  return lane_create(c, out);
}

/* Waits for slot s's submission; NXVK_OK at once when none is pending. */
static int lane_wait(nxvk_ctx *c, nxvk_xfer_lane *L, int s) {
  if (!L->pending[s]) return NXVK_OK;
  VkResult r = c->vk.vkWaitForFences(c->device, 1, &L->fence[s], VK_TRUE, UINT64_MAX);
  if (r == VK_SUCCESS) {
    L->pending[s] = false;
    r = c->vk.vkResetFences(c->device, 1, &L->fence[s]);
  }
  if (r == VK_SUCCESS) return NXVK_OK;
  int rc = nxvk_vk_fail(r, "vkWaitForFences", __FILE__, __LINE__);
  if (rc == NXVK_E_DEVICE_LOST) atomic_store(&c->lost, true);
  return rc;
}

/* Back to the idle list once nothing of it is in flight; destroyed where a
 * wait failed (its command buffers may still be pending). */
static void lane_put(nxvk_ctx *c, nxvk_xfer_lane *L) {
  if (!L) return;
  bool ok = lane_wait(c, L, 0) == NXVK_OK;
  ok = lane_wait(c, L, 1) == NXVK_OK && ok;
  if (!ok || atomic_load(&c->lost)) {
    if (!atomic_load(&c->lost)) lane_destroy(c, L); /* a lost device may still hold them */
    return;
  }
  pthread_mutex_lock(&c->xfer_lock);
  L->next = c->xfer_lanes;
  c->xfer_lanes = L;
  pthread_mutex_unlock(&c->xfer_lock);
}

/* Records and submits the copy of n bytes between host-side buffer host at
 * host_off (a staging slot, or pinned host memory) and b at off, signalling
 * slot s's fence.  The barrier after the copy makes its
 * writes visible to every later command (upload) or to the host
 * (download). */
static int lane_copy(nxvk_ctx *c, nxvk_xfer_lane *L, int s, VkBuffer host, VkDeviceSize host_off,
                     nxvk_buffer *b, VkDeviceSize off, size_t n, bool write) {
  VkCommandBuffer cmd = L->cmd[s];
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                 .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
  VkResult r = c->vk.vkResetCommandBuffer(cmd, 0);
  if (r == VK_SUCCESS) r = c->vk.vkBeginCommandBuffer(cmd, &bi);
  if (r != VK_SUCCESS) return nxvk_vk_fail(r, "vkBeginCommandBuffer", __FILE__, __LINE__);
  VkBufferCopy region = {write ? host_off : off, write ? off : host_off, n};
  if (write) c->vk.vkCmdCopyBuffer(cmd, host, b->buffer, 1, &region);
  else c->vk.vkCmdCopyBuffer(cmd, b->buffer, host, 1, &region);
  /* on the transfer queue an upload's writes reach the compute queue's
   * later commands through the fence the host waits on before the
   * transfer returns (no compute stage to name there) */
  bool tq = L->tq;
  VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                        .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                        .dstAccessMask = !write ? VK_ACCESS_HOST_READ_BIT
                                         : tq   ? VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT
                                                : VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                                      VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT};
  c->vk.vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT,
                             !write ? VK_PIPELINE_STAGE_HOST_BIT
                             : tq   ? VK_PIPELINE_STAGE_TRANSFER_BIT
                                    : VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                             0, 1, &mb, 0, NULL, 0, NULL);
  r = c->vk.vkEndCommandBuffer(cmd);
  if (r != VK_SUCCESS) return nxvk_vk_fail(r, "vkEndCommandBuffer", __FILE__, __LINE__);
  VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cmd};
  pthread_mutex_lock(L->qlock);
  r = c->vk.vkQueueSubmit(L->queue, 1, &si, L->fence[s]);
  pthread_mutex_unlock(L->qlock);
  atomic_fetch_add(&c->submits, 1);
  if (r != VK_SUCCESS) {
    int rc = nxvk_vk_fail(r, "vkQueueSubmit", __FILE__, __LINE__);
    if (rc == NXVK_E_DEVICE_LOST) atomic_store(&c->lost, true);
    return rc;
  }
  L->pending[s] = true;
  return NXVK_OK;
}

static int lane_submit(nxvk_ctx *c, nxvk_xfer_lane *L, int k, int s, nxvk_buffer *b, VkDeviceSize off,
                       size_t n, bool write) {
  return lane_copy(c, L, s, L->st[k][s], 0, b, off, n, write);
}

/* The lanes' memcpy between host memory and staging.  With
 * c->xfer_stream (NXVK_XFER_COPY=stream) on x86-64, non-temporal stores
 * (SSE2 movntdq, one 64-byte line an iteration): they write whole lines
 * without reading them first, where a cached store reads each destination
 * line before it writes it (3 bytes of memory traffic a byte copied, not
 * 2), and leave the cache to the other threads; glibc streams only copies
 * larger than a share of the last-level cache, far above a piece.  The
 * sfence at the end orders the stores before the submission that follows. */
#if defined(__x86_64__) && defined(__SSE2__)
#include <emmintrin.h>
static void copy_stream(void *dst, const void *src, size_t n) {
  char *d = dst;
  const char *s = src;
  size_t head = (size_t)(-(uintptr_t)d & 15); /* to the destination's 16-byte alignment */
  if (head > n) head = n;
  memcpy(d, s, head);
  d += head, s += head, n -= head;
  for (; n >= 64; d += 64, s += 64, n -= 64) {
    __m128i a = _mm_loadu_si128((const __m128i *)s), b = _mm_loadu_si128((const __m128i *)(s + 16));
    __m128i c = _mm_loadu_si128((const __m128i *)(s + 32)), e = _mm_loadu_si128((const __m128i *)(s + 48));
    _mm_stream_si128((__m128i *)d, a);
    _mm_stream_si128((__m128i *)(d + 16), b);
    _mm_stream_si128((__m128i *)(d + 32), c);
    _mm_stream_si128((__m128i *)(d + 48), e);
  }
  memcpy(d, s, n);
  _mm_sfence();
}
#define HAVE_COPY_STREAM 1
#else
#define HAVE_COPY_STREAM 0
#endif

bool nxvk_xfer_can_stream(void) { return HAVE_COPY_STREAM; }

static void xfer_copy(nxvk_ctx *c, void *dst, const void *src, size_t n) {
#if HAVE_COPY_STREAM
  if (c->xfer_stream) {
    copy_stream(dst, src, n);
    return;
  }
#endif
  memcpy(dst, src, n);
}

/* Where piece p starts and how long it is. */
static size_t piece_at(const xfer *x, size_t p, size_t *len) {
  size_t at = p == 0 ? 0 : x->first + (p - 1) * XFER_PIECE;
  *len = p == 0 ? x->first : x->n - at < XFER_PIECE ? x->n - at : XFER_PIECE;
  return at;
}

/* Worker t of a pipelined transfer: pieces t, t + T, ...  Upload: memcpy
 * piece i into slot i % 2 (once that slot's last copy is done), submit
 * its copy, go on with the next; download: the copies of the first two
 * pieces are submitted at once, and each memcpy out of a slot is followed
 * by the submission of the slot's next piece.  Every copy is waited for
 * before the lane is put back, on failure too. */
static int pipe_run(xfer *x, int index) {
  nxvk_ctx *c = x->c;
  nxvk_xfer_lane *L = NULL;
  int k = x->write && c->xfer_wc ? 0 : 1;
  int rc = lane_get(c, &L);
  if (rc == NXVK_OK) rc = lane_slots(c, L, k, c->xfer_piece); /* the largest piece */
  if (rc) {
    lane_put(c, L);
    return rc;
  }
  size_t T = (size_t)x->nthreads, len;
  /* test-only: worker 1 fails after two pieces are in flight, so the
   * others must stop and every lane come back idle */
  size_t fail_at = c->inject_lane_fail && index == 1 ? (size_t)index + 2 * T : SIZE_MAX;
  if (x->write) {
    int s = 0;
    for (size_t p = (size_t)index; rc == NXVK_OK && p < x->npieces; p += T, s ^= 1) {
      if (atomic_load(&x->first_rc)) break;
      size_t at = piece_at(x, p, &len);
      rc = p == fail_at ? nxvk_seterr(NXVK_E_ALLOC_FAILED, "transfer piece %zu refused (NXVK_TEST_INJECT)", p)
                        : lane_wait(c, L, s);
      if (rc == NXVK_OK) {
        xfer_copy(c, L->st_map[k][s], x->host + at, len);
        rc = lane_submit(c, L, k, s, x->b, x->off + at, len, true);
      }
    }
  } else {
    size_t p = (size_t)index, next = p; /* next: the first piece not yet submitted */
    for (int s = 0; s < 2 && rc == NXVK_OK && next < x->npieces; s++, next += T) {
      size_t at = piece_at(x, next, &len);
      rc = lane_submit(c, L, k, s, x->b, x->off + at, len, false);
    }
    for (int s = 0; rc == NXVK_OK && p < x->npieces; p += T, s ^= 1) {
      if (atomic_load(&x->first_rc)) break;
      size_t at = piece_at(x, p, &len);
      rc = p == fail_at ? nxvk_seterr(NXVK_E_ALLOC_FAILED, "transfer piece %zu refused (NXVK_TEST_INJECT)", p)
                        : lane_wait(c, L, s);
      if (rc == NXVK_OK) xfer_copy(c, x->host + at, L->st_map[k][s], len);
      if (rc == NXVK_OK && next < x->npieces) {
        size_t nat = piece_at(x, next, &len);
        rc = lane_submit(c, L, k, s, x->b, x->off + nat, len, false);
        next += T;
      }
    }
  }
  lane_put(c, L); /* waits for what is still in flight */
  return rc;
}

/* Pieces of XFER_PIECE bytes, the first cut short so that the others start
 * on the import alignment in host memory (every piece's middle imports
 * whole); worker 0 runs on the calling thread. */
static int transfer_parallel(nxvk_ctx *c, nxvk_buffer *b, VkDeviceSize off, char *host, size_t n,
                             bool write) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  /* the lanes where no import is asked for (imports go one piece at a time) */
  bool pipe = c->xfer_pipe && !c->import_align;
  size_t a = (size_t)c->import_align, piece = c->xfer_piece;
  int t = cpus < 2 ? 2 : cpus > XFER_MAX_THREADS ? XFER_MAX_THREADS : (int)cpus;
  if (t > c->xfer_threads) t = c->xfer_threads;
  /* the lanes' pieces: unless NXVK_XFER_PIECE says, at least two a thread
   * (a lane overlaps a piece's DMA with the next one's copy only where it
   * has a next one), whole MiB from 1 MiB to c->xfer_piece: 4 MiB at 256
   * MiB and 64 MiB, 1 MiB at 8 MiB */
  if (pipe && !c->xfer_piece_set) {
    size_t p = n / (2 * (size_t)t) & ~(((size_t)1 << 20) - 1);
    piece = p < ((size_t)1 << 20) ? (size_t)1 << 20 : p < piece ? p : piece;
  }
  size_t first = a ? piece - (size_t)((uintptr_t)host % a) : piece;
  if (first > n) first = n;
  size_t npieces = 1 + (n - first + piece - 1) / piece;
  if ((size_t)t > npieces) t = (int)npieces;
  xfer x = {.c = c, .b = b, .off = off, .host = host, .n = n, .first = first, .npieces = npieces,
            .piece = piece, .write = write, .pipe = pipe, .nthreads = t};
  atomic_init(&x.first_rc, 0);
  pthread_mutex_init(&x.lock, NULL);
  xfer_worker w[XFER_MAX_THREADS];
  /* workers 1 .. t-1 on threads of their own, worker 0 on this one */
  int started = 1;
  for (; started < t; started++) {
    w[started] = (xfer_worker){.x = &x, .index = started};
    if (pthread_create(&w[started].tid, NULL, xfer_main, &w[started]) != 0) break;
  }
  if (started < t) {
    /* a thread that failed to start leaves its pieces: the others cannot
     * take them over, so the transfer fails as a whole */
    int zero = 0;
    if (atomic_compare_exchange_strong(&x.first_rc, &zero, NXVK_E_NO_MEMORY))
      snprintf(x.err, sizeof x.err, "could not start transfer thread %d of %d", started + 1, t);
  }
  w[0] = (xfer_worker){.x = &x, .index = 0};
  xfer_main(&w[0]);
  for (int i = 1; i < started; i++) pthread_join(w[i].tid, NULL);
  pthread_mutex_destroy(&x.lock);
  int rc = atomic_load(&x.first_rc);
  return rc ? nxvk_seterr(rc, "%s", x.err) : NXVK_OK;
}

/* Transfers this large import host memory where they can (smaller ones
 * cost less through one staging copy). */
#define IMPORT_XFER_MIN ((size_t)1 << 20)

bool nxvk_xfer_direct(nxvk_ctx *c, size_t n) {
  return n >= c->xfer_min || (c->import_align && n >= IMPORT_XFER_MIN);
}

/* One staged copy through a staging buffer of n bytes (no import). */
static int staged_copy(nxvk_ctx *c, nxvk_buffer *b, VkDeviceSize off, char *host, size_t n, bool write) {
  nxvk_buffer *staging;
  int rc = nxvk_buffer_create(c, n, true, &staging);
  if (rc) return rc;
  rc = piece_copy(c, &staging, n, b, off, host, n, write, false);
  nxvk_buffer_unref(c, staging);
  return rc;
}

/* ---- pinned host memory: the engine's allocations and registered ranges ----
 *
 * A region is host memory with a VkBuffer over it: an allocation of
 * host-visible, coherent (cached where there is such) memory, mapped
 * (nxvk_pinned_alloc), or the caller's memory imported once with
 * VK_EXT_external_memory_host (nxvk_host_register), its aligned middle.
 * Either way the driver has its pages pinned for as long as the region
 * lives, so a transfer from or into it is the device's copy alone: no
 * memcpy through staging, no pinning per call.  A transfer that overlaps a
 * region moves that part by DMA (split in c->xfer_pinned_split submissions
 * on as many lanes) and the rest as any host memory.  The caller keeps a
 * region alive while transfers use it (as with any buffer it passes). */
typedef struct nxvk_host_region {
  char *base;
  size_t len;
  nxvk_buffer *buf;                    /* unpooled; live_buffers counts it */
  bool owned;                          /* nxvk_pinned_alloc's: base is buf's mapping */
  struct nxvk_host_region *next;
} nxvk_host_region;

static void region_destroy(nxvk_ctx *c, nxvk_host_region *R) {
  nxvk_buffer_unref(c, R->buf); /* unmaps an owned one's memory (buffer_destroy) */
  free(R);
}

void nxvk_host_regions_destroy(nxvk_ctx *c) {
  pthread_mutex_lock(&c->host_lock);
  nxvk_host_region *R = c->host_regions;
  c->host_regions = NULL;
  atomic_store(&c->host_nregions, 0);
  pthread_mutex_unlock(&c->host_lock);
  while (R) {
    nxvk_host_region *next = R->next;
    region_destroy(c, R);
    R = next;
  }
}

static int region_add(nxvk_ctx *c, char *base, size_t len, nxvk_buffer *buf, bool owned) {
  nxvk_host_region *R = calloc(1, sizeof *R);
  if (!R) {
    nxvk_buffer_unref(c, buf);
    return nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  }
  *R = (nxvk_host_region){.base = base, .len = len, .buf = buf, .owned = owned};
  pthread_mutex_lock(&c->host_lock);
  R->next = c->host_regions;
  c->host_regions = R;
  atomic_fetch_add(&c->host_nregions, 1);
  pthread_mutex_unlock(&c->host_lock);
  return NXVK_OK;
}

/* Unlinks the region starting at p (owned or not as asked); NULL if none. */
static nxvk_host_region *region_take(nxvk_ctx *c, const void *p, bool owned) {
  pthread_mutex_lock(&c->host_lock);
  nxvk_host_region **at = &c->host_regions, *R;
  while ((R = *at) && !(R->owned == owned && (owned ? R->base == p : R->base >= (const char *)p &&
                                                                         R->base < (const char *)p + c->host_align)))
    at = &R->next;
  if (R) {
    *at = R->next;
    atomic_fetch_sub(&c->host_nregions, 1);
  }
  pthread_mutex_unlock(&c->host_lock);
  return R;
}

/* The region overlapping [p, p + n) that starts lowest, with where the
 * overlap starts in it; NULL if none (or NXVK_XFER_PINNED=0). */
static nxvk_host_region *region_find(nxvk_ctx *c, const char *p, size_t n) {
  if (!c->xfer_pinned || atomic_load(&c->host_nregions) == 0) return NULL;
  nxvk_host_region *best = NULL;
  pthread_mutex_lock(&c->host_lock);
  for (nxvk_host_region *R = c->host_regions; R; R = R->next)
    if (R->base < p + n && p < R->base + R->len && (!best || R->base < best->base)) best = R;
  pthread_mutex_unlock(&c->host_lock);
  return best;
}

int nxvk_pinned_alloc(nxvk_ctx *c, size_t n, void **out) {
  *out = NULL;
  if (atomic_load(&c->lost)) return nxvk_seterr(NXVK_E_DEVICE_LOST, "device was lost");
  if (n == 0) n = 4;
  if (c->info.max_allocation_size && n > c->info.max_allocation_size)
    return nxvk_seterr(NXVK_E_TOO_LARGE, "%zu bytes is over this device's largest allocation (%llu bytes)", n,
                       (unsigned long long)c->info.max_allocation_size);
  nxvk_buffer *b = calloc(1, sizeof *b);
  if (!b) return nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  b->size = n;
  b->host_visible = true;
  b->pool_class = -1;
  atomic_init(&b->refs, 1);
  int brc = create_shared_buffer(c, NULL, n, VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                 &b->buffer);
  if (brc) {
    free(b);
    return brc;
  }
  VkMemoryRequirements req;
  c->vk.vkGetBufferMemoryRequirements(c->device, b->buffer, &req);
  /* host-visible and coherent; cached (the caller reads it) and not
   * device-local (a BAR window is small and slow to read) where there is such */
  const VkPhysicalDeviceMemoryProperties *mp = &c->mem_props;
  VkMemoryPropertyFlags need = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  int best = -1, rank = -1;
  for (uint32_t i = 0; i < mp->memoryTypeCount; i++) {
    VkMemoryPropertyFlags f = mp->memoryTypes[i].propertyFlags;
    if (!(req.memoryTypeBits & (1u << i)) || (f & need) != need) continue;
    int rk = ((f & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) ? 2 : 0) + ((f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) ? 0 : 1);
    if (rk > rank) {
      rank = rk;
      best = (int)i;
    }
  }
  int rc = NXVK_OK;
  if (best < 0) rc = nxvk_seterr(NXVK_E_ALLOC_FAILED, "no host-visible coherent memory to pin");
  VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                              .allocationSize = req.size,
                              .memoryTypeIndex = (uint32_t)best};
  if (rc == NXVK_OK) {
    VkResult r = c->vk.vkAllocateMemory(c->device, &mai, NULL, &b->memory);
    if (r == VK_SUCCESS) r = c->vk.vkBindBufferMemory(c->device, b->buffer, b->memory, 0);
    if (r == VK_SUCCESS) r = c->vk.vkMapMemory(c->device, b->memory, 0, VK_WHOLE_SIZE, 0, &b->mapped);
    if (r != VK_SUCCESS) {
      rc = nxvk_vk_fail(r, "allocating pinned host memory", __FILE__, __LINE__);
      if (rc == NXVK_E_ALLOC_FAILED) nxvk_seterr(rc, "pinned host allocation of %zu bytes failed", n);
    }
  }
  if (rc) {
    if (b->memory) c->vk.vkFreeMemory(c->device, b->memory, NULL);
    c->vk.vkDestroyBuffer(c->device, b->buffer, NULL);
    free(b);
    return rc;
  }
  account(c, 0, 1); /* a live buffer (leak checks count it), no device bytes */
  void *p = b->mapped;
  rc = region_add(c, p, n, b, true);
  if (rc == NXVK_OK) *out = p;
  return rc;
}

void nxvk_pinned_free(nxvk_ctx *c, void *p) {
  if (!c || !p) return;
  nxvk_host_region *R = region_take(c, p, true);
  if (R) region_destroy(c, R);
}

int nxvk_host_register(nxvk_ctx *c, void *p, size_t n) {
  size_t a = (size_t)c->host_align;
  if (!a) return nxvk_seterr(NXVK_E_UNSUPPORTED, "this device cannot import host memory (VK_EXT_external_memory_host)");
  /* the aligned middle of [p, p + n) */
  char *lo = (char *)p + (a - (uintptr_t)p % a) % a, *hi = (char *)(((uintptr_t)p + n) / a * a);
  if (hi <= lo) return nxvk_seterr(NXVK_E_UNSUPPORTED, "%zu bytes hold no aligned block of %zu to import", n, a);
  nxvk_buffer *b;
  int rc = import_host(c, lo, (size_t)(hi - lo), &b);
  if (rc) return rc;
  return region_add(c, lo, (size_t)(hi - lo), b, false);
}

void nxvk_host_unregister(nxvk_ctx *c, void *p) {
  if (!c || !p || !c->host_align) return;
  nxvk_host_region *R = region_take(c, p, false);
  if (R) region_destroy(c, R);
}

/* [host, host + n), all inside region R, to or from b at off: the device's
 * copy alone, in up to c->xfer_pinned_split submissions on as many lanes
 * (whole pages each, at least 1 MiB), waited for before it returns. */
static int region_copy(nxvk_ctx *c, nxvk_host_region *R, char *host, nxvk_buffer *b, VkDeviceSize off, size_t n,
                       bool write) {
  nxvk_xfer_lane *L[16] = {0};
  int split = c->xfer_pinned_split;
  size_t most = n >> 20; /* 1 MiB a submission at least */
  if ((size_t)split > most) split = most ? (int)most : 1;
  size_t chunk = (n / (size_t)split + 4095) & ~(size_t)4095;
  int rc = NXVK_OK, made = 0;
  size_t at = 0;
  for (; made < split && at < n && rc == NXVK_OK; made++) {
    size_t len = n - at < chunk ? n - at : chunk;
    rc = lane_get(c, &L[made]);
    if (rc == NXVK_OK)
      rc = lane_copy(c, L[made], 0, R->buf->buffer, (VkDeviceSize)(host - R->base) + at, b, off + at, len, write);
    at += len;
  }
  for (int i = 0; i < made; i++) lane_put(c, L[i]); /* waits; on failure too */
  if (rc == NXVK_OK && atomic_load(&c->lost)) rc = nxvk_seterr(NXVK_E_DEVICE_LOST, "device was lost");
  if (rc == NXVK_OK) atomic_fetch_add(&c->pinned_bytes, (unsigned long long)n);
  return rc;
}

static int buffer_write(nxvk_ctx *c, nxvk_buffer *b, VkDeviceSize off, const void *src, size_t n);
static int buffer_read(nxvk_ctx *c, nxvk_buffer *b, VkDeviceSize off, void *dst, size_t n);

/* A transfer overlapping a region: its part by DMA, the parts before and
 * after it as any host memory (or other regions: neither overlaps R). */
static int region_transfer(nxvk_ctx *c, nxvk_host_region *R, nxvk_buffer *b, VkDeviceSize off, char *host,
                           size_t n, bool write) {
  size_t head = R->base > host ? (size_t)(R->base - host) : 0;
  char *end = host + n < R->base + R->len ? host + n : R->base + R->len;
  size_t mid = (size_t)(end - (host + head)), tail = n - head - mid;
  int rc = NXVK_OK;
  if (head) rc = write ? nxvk_buffer_write(c, b, off, host, head) : nxvk_buffer_read(c, b, off, host, head);
  if (rc == NXVK_OK) rc = region_copy(c, R, host + head, b, off + head, mid, write);
  if (rc == NXVK_OK && tail)
    rc = write ? nxvk_buffer_write(c, b, off + head + mid, end, tail) : nxvk_buffer_read(c, b, off + head + mid, end, tail);
  return rc;
}

int nxvk_buffer_write(nxvk_ctx *c, nxvk_buffer *b, VkDeviceSize off, const void *src, size_t n) {
  if (n == 0) return NXVK_OK;
  if (off + n > b->size) return nxvk_seterr(NXVK_E_SIZE_MISMATCH, "write past end of buffer");
  if (b->mapped) {
    memcpy((char *)b->mapped + off, src, n);
    return NXVK_OK;
  }
  nxvk_host_region *R = region_find(c, src, n);
  if (R) return region_transfer(c, R, b, off, (char *)src, n, true);
  return buffer_write(c, b, off, src, n);
}

/* nxvk_buffer_write's other cases: host memory outside any region. */
static int buffer_write(nxvk_ctx *c, nxvk_buffer *b, VkDeviceSize off, const void *src, size_t n) {
  if (n <= 65536 && n % 4 == 0 && off % 4 == 0) {
    /* small and aligned: vkCmdUpdateBuffer carries it, no staging buffer */
    nxvk_rec *r;
    int rc = nxvk_rec_begin(c, false, &r);
    if (rc) return rc;
    rc = nxvk_rec_update(r, b, off, src, n);
    if (rc == NXVK_OK) return nxvk_rec_submit(r, NULL);
    nxvk_rec_abort(r);
    return rc;
  }
  if (nxvk_xfer_direct(c, n)) return transfer_parallel(c, b, off, (char *)src, n, true);
  return staged_copy(c, b, off, (char *)src, n, true);
}

int nxvk_buffer_read(nxvk_ctx *c, nxvk_buffer *b, VkDeviceSize off, void *dst, size_t n) {
  if (n == 0) return NXVK_OK;
  if (off + n > b->size) return nxvk_seterr(NXVK_E_SIZE_MISMATCH, "read past end of buffer");
  if (b->mapped) {
    memcpy(dst, (const char *)b->mapped + off, n);
    return NXVK_OK;
  }
  nxvk_host_region *R = region_find(c, dst, n);
  if (R) return region_transfer(c, R, b, off, dst, n, false);
  return buffer_read(c, b, off, dst, n);
}

static int buffer_read(nxvk_ctx *c, nxvk_buffer *b, VkDeviceSize off, void *dst, size_t n) {
  if (nxvk_xfer_direct(c, n)) return transfer_parallel(c, b, off, dst, n, false);
  return staged_copy(c, b, off, dst, n, false);
}

/* ---- nxvk_host_copy: memcpy on the transfer threads ---- */

typedef struct hcopy {
  nxvk_ctx *c;
  char *dst;
  const char *src;
  size_t n, chunk;
  int index;
  pthread_t tid;
} hcopy;

static void *hcopy_main(void *arg) {
  hcopy *h = arg;
  size_t at = (size_t)h->index * h->chunk;
  if (at < h->n) xfer_copy(h->c, h->dst + at, h->src + at, h->n - at < h->chunk ? h->n - at : h->chunk);
  return NULL;
}

int nxvk_host_copy(nxvk_ctx *c, void *dst, const void *src, size_t n) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  int t = cpus < 1 ? 1 : cpus > XFER_MAX_THREADS ? XFER_MAX_THREADS : (int)cpus;
  if (t > c->xfer_threads) t = c->xfer_threads;
  if ((size_t)t > n >> 20) t = n >> 20 ? (int)(n >> 20) : 1; /* 1 MiB a thread at least */
  hcopy h[XFER_MAX_THREADS];
  size_t chunk = (n / (size_t)t + 4095) & ~(size_t)4095;
  int started = 1;
  for (int i = 0; i < t; i++) h[i] = (hcopy){.c = c, .dst = dst, .src = src, .n = n, .chunk = chunk, .index = i};
  for (; started < t; started++)
    if (pthread_create(&h[started].tid, NULL, hcopy_main, &h[started]) != 0) break;
  for (int i = started; i < t; i++) hcopy_main(&h[i]); /* threads that did not start: here */
  hcopy_main(&h[0]);
  for (int i = 1; i < started; i++) pthread_join(h[i].tid, NULL);
  return NXVK_OK;
}
