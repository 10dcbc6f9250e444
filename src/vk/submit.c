/*
 * submit.c - recordings: a command pool, command buffer, fence, descriptor
 * pools, metadata chunks and a timestamp query pool, pooled in the context.
 *
 * One thread owns a recording from begin to submit, so each thread works in
 * its own command pool.  Submission holds the queue lock only around
 * vkQueueSubmit; the fence (or timeline value) is waited on after it is
 * released.  With timeline semaphores, threads that submit together share
 * one vkQueueSubmit (group_submit).
 */
#include "vkcore.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define META_CHUNK_WORDS 16384u     /* 64 KiB per metadata chunk */
#define SETS_PER_POOL 64u
#define HAZARD_MAX 32u               /* buffers tracked between barriers; more: a barrier */

struct nxvk_rec {
  nxvk_ctx *c;
  VkCommandPool pool;
  VkCommandBuffer cmd;
  VkFence fence;
  VkQueryPool queries;                 /* 2 timestamps, created on first use */

  VkDescriptorPool *dpools;            /* owned; reset on release */
  int ndpools, dpool_cur;
  uint32_t sets_in_cur;

  nxvk_buffer **meta;                  /* owned host-visible chunks */
  int nmeta, meta_cur;
  uint32_t meta_used;                  /* words used in meta[meta_cur] */

  nxvk_buffer **held;                  /* references kept until completion */
  int nheld, capheld;

  nxvk_buffer **counts;                /* owned, zeroed (nxvk_rec_counts); counts_used this time */
  int ncounts, capcounts, counts_used;

  /* error flags read after completion (nxvk_rec_check_word; held) */
  struct rec_check {
    nxvk_buffer *b;
    int code;
    const char *msg;
  } *checks;
  int nchecks, capchecks;

  /* buffers read and written by commands since the last barrier (lazy
   * barriers, see before()) */
  VkBuffer since_rd[HAZARD_MAX], since_wr[HAZARD_MAX];
  int nrd, nwr;

  bool timestamps;
  uint32_t ndispatch;
  uint64_t t_begin;                    /* when nxvk_rec_begin was called (stage times) */
  uint64_t t_sub, t_launched, t_wait;  /* launch began, the submission returned, the wait began */
  nxvk_lane *lane;                     /* launched on (nxvk_rec_launch), for the wait */
  uint64_t value;                      /* its timeline value there (grouped) */
  bool lanes, grouped;                 /* several lanes; group commit (else the fence) */
  nxvk_rec *next;                      /* ctx free list */
};

nxvk_ctx *nxvk_rec_ctx(nxvk_rec *r) { return r->c; }

/* CLOCK_MONOTONIC in ns, for the stage times (nxvk_stats; ~50 ns a read) */
static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}
uint32_t nxvk_rec_dispatch_count(nxvk_rec *r) { return r->ndispatch; }

uint32_t nxvk_groups_for(nxvk_ctx *c, uint64_t n, uint32_t wg) {
  uint64_t g = (n + wg - 1) / wg;
  uint64_t cap = c->info.max_workgroup_count[0];
  if (g > cap) g = cap;
  return g ? (uint32_t)g : 1;
}

static void rec_destroy(nxvk_ctx *c, nxvk_rec *r) {
  for (int i = 0; i < r->ndpools; i++) c->vk.vkDestroyDescriptorPool(c->device, r->dpools[i], NULL);
  for (int i = 0; i < r->nmeta; i++) nxvk_buffer_unref(c, r->meta[i]);
  for (int i = 0; i < r->nheld; i++) nxvk_buffer_unref(c, r->held[i]);
  for (int i = 0; i < r->ncounts; i++) nxvk_buffer_unref(c, r->counts[i]);
  if (r->queries) c->vk.vkDestroyQueryPool(c->device, r->queries, NULL);
  if (r->fence) c->vk.vkDestroyFence(c->device, r->fence, NULL);
  if (r->pool) c->vk.vkDestroyCommandPool(c->device, r->pool, NULL);
  free(r->dpools);
  free(r->meta);
  free(r->held);
  free(r->counts);
  free(r->checks);
  free(r);
}

static int rec_create(nxvk_ctx *c, nxvk_rec **out) {
  nxvk_rec *r = calloc(1, sizeof *r);
  if (!r) return nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  r->c = c;
  VkCommandPoolCreateInfo cpci = {
      .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
      .flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT,
      .queueFamilyIndex = c->queue_family,
  };
  VkResult vr = c->vk.vkCreateCommandPool(c->device, &cpci, NULL, &r->pool);
  if (vr == VK_SUCCESS) {
    VkCommandBufferAllocateInfo cbai = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = r->pool,
        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
        .commandBufferCount = 1,
    };
    vr = c->vk.vkAllocateCommandBuffers(c->device, &cbai, &r->cmd);
  }
  if (vr == VK_SUCCESS) {
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    vr = c->vk.vkCreateFence(c->device, &fci, NULL, &r->fence);
  }
  if (vr != VK_SUCCESS) {
    rec_destroy(c, r);
    return nxvk_vk_fail(vr, "creating a recording", __FILE__, __LINE__);
  }
  *out = r;
  return NXVK_OK;
}

/* Back to the free list with everything reset; destroyed if reset fails. */
static void rec_release(nxvk_rec *r) {
  nxvk_ctx *c = r->c;
  for (int i = 0; i < r->nheld; i++) nxvk_buffer_unref(c, r->held[i]);
  r->nheld = 0;
  r->nchecks = 0;
  VkResult vr = c->vk.vkResetCommandPool(c->device, r->pool, 0);
  if (vr == VK_SUCCESS) vr = c->vk.vkResetFences(c->device, 1, &r->fence);
  for (int i = 0; i < r->ndpools && vr == VK_SUCCESS; i++)
    vr = c->vk.vkResetDescriptorPool(c->device, r->dpools[i], 0);
  if (vr != VK_SUCCESS) {
    rec_destroy(c, r);
    return;
  }
  r->dpool_cur = 0;
  r->sets_in_cur = 0;
  r->meta_cur = 0;
  r->meta_used = 0;
  r->ndispatch = 0;
  r->counts_used = 0;
  r->nrd = r->nwr = 0;
  pthread_mutex_lock(&c->rec_lock);
  r->next = c->free_recs;
  c->free_recs = r;
  pthread_mutex_unlock(&c->rec_lock);
}

void nxvk_recs_destroy(nxvk_ctx *c) {
  nxvk_rec *r = c->free_recs;
  while (r) {
    nxvk_rec *next = r->next;
    rec_destroy(c, r);
    r = next;
  }
  c->free_recs = NULL;
}

int nxvk_rec_begin(nxvk_ctx *c, bool timestamps, nxvk_rec **out) {
  *out = NULL;
  if (atomic_load(&c->lost)) return nxvk_seterr(NXVK_E_DEVICE_LOST, "device was lost");
  uint64_t t0 = now_ns();
  pthread_mutex_lock(&c->rec_lock);
  nxvk_rec *r = c->free_recs;
  if (r) c->free_recs = r->next;
  pthread_mutex_unlock(&c->rec_lock);
  if (!r) {
    int rc = rec_create(c, &r);
    if (rc) return rc;
  }
  r->next = NULL;
  r->t_begin = t0;
  r->timestamps = timestamps && c->info.timestamps;
  if (r->timestamps && !r->queries) {
    VkQueryPoolCreateInfo q = {
        .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
        .queryType = VK_QUERY_TYPE_TIMESTAMP,
        .queryCount = 2,
    };
    VkResult vr = c->vk.vkCreateQueryPool(c->device, &q, NULL, &r->queries);
    if (vr != VK_SUCCESS) {
      rec_destroy(c, r);
      return nxvk_vk_fail(vr, "vkCreateQueryPool", __FILE__, __LINE__);
    }
  }
  VkCommandBufferBeginInfo bi = {
      .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
      .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
  };
  VkResult vr = c->vk.vkBeginCommandBuffer(r->cmd, &bi);
  if (vr != VK_SUCCESS) {
    rec_destroy(c, r);
    return nxvk_vk_fail(vr, "vkBeginCommandBuffer", __FILE__, __LINE__);
  }
  if (r->timestamps) {
    c->vk.vkCmdResetQueryPool(r->cmd, r->queries, 0, 2);
    c->vk.vkCmdWriteTimestamp(r->cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, r->queries, 0);
  }
  *out = r;
  return NXVK_OK;
}

static int grow(void **arr, int *cap, int need, size_t elem) {
  if (need <= *cap) return NXVK_OK;
  int ncap = *cap ? *cap * 2 : 8;
  while (ncap < need) ncap *= 2;
  void *p = realloc(*arr, (size_t)ncap * elem);
  if (!p) return nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  *arr = p;
  *cap = ncap;
  return NXVK_OK;
}

int nxvk_rec_hold(nxvk_rec *r, nxvk_buffer *b) {
  int rc = grow((void **)&r->held, &r->capheld, r->nheld + 1, sizeof *r->held);
  if (rc) return rc;
  nxvk_buffer_ref(b);
  r->held[r->nheld++] = b;
  return NXVK_OK;
}

int nxvk_rec_counts(nxvk_rec *r, uint32_t n, nxvk_buffer **out) {
  nxvk_ctx *c = r->c;
  int k = r->counts_used;
  VkDeviceSize bytes = (VkDeviceSize)(n ? n : 1) * 4;
  *out = NULL;
  if (k == r->ncounts || r->counts[k]->size < bytes) {
    /* made now, zeroed by a write that completes before this recording is
     * submitted; at least 4 KiB, so a recording's sizes settle at once */
    VkDeviceSize size = bytes < 4096 ? 4096 : bytes;
    void *zeros = calloc(1, (size_t)size);
    nxvk_buffer *b = NULL;
    int rc = zeros ? nxvk_buffer_create_kept(c, size, &b) : nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
    if (rc == NXVK_OK) rc = nxvk_buffer_write(c, b, 0, zeros, (size_t)size);
    if (rc == NXVK_OK && k == r->ncounts) rc = grow((void **)&r->counts, &r->capcounts, k + 1, sizeof *r->counts);
    free(zeros);
    if (rc) {
      nxvk_buffer_unref(c, b);
      return rc;
    }
    if (k == r->ncounts) r->ncounts++;
    else nxvk_buffer_unref(c, r->counts[k]);
    r->counts[k] = b;
  }
  r->counts_used++;
  *out = r->counts[k];
  return NXVK_OK;
}

int nxvk_rec_check_word(nxvk_rec *r, nxvk_buffer *b, int code, const char *msg) {
  if (!b->mapped) return nxvk_seterr(NXVK_E_BAD_REQUEST, "an error flag needs a mapped buffer");
  int rc = grow((void **)&r->checks, &r->capchecks, r->nchecks + 1, sizeof *r->checks);
  if (rc == NXVK_OK) rc = nxvk_rec_hold(r, b);
  if (rc) return rc;
  r->checks[r->nchecks++] = (struct rec_check){b, code, msg};
  return NXVK_OK;
}

/* Everything written by earlier commands is visible to later ones. */
static void barrier(nxvk_rec *r, VkPipelineStageFlags dst_stage, VkAccessFlags dst_access) {
  VkMemoryBarrier mb = {
      .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
      .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
      .dstAccessMask = dst_access,
  };
  r->c->vk.vkCmdPipelineBarrier(r->cmd,
                                VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                                dst_stage, 0, 1, &mb, 0, NULL, 0, NULL);
}

static const VkAccessFlags ALL_RW = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                    VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
static const VkPipelineStageFlags COMPUTE_TRANSFER =
    VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;

/* Lazy barriers (c->lazy_barriers, NXVK_LAZY_BARRIERS): a command waits for
 * the earlier ones only where it touches what they touched since the last
 * barrier: it reads or writes a buffer written since, or writes one read
 * since (whole buffers; a dispatch counts as writing every buffer it binds,
 * and as reading its metadata chunk).  So a run's input uploads and its
 * metadata share one barrier, where each had its own (a barrier is a wait
 * for idle on a GPU).  Off: a barrier after every command, as before. */
static bool touched(const VkBuffer *set, uint32_t n, VkBuffer b) {
  for (uint32_t i = 0; i < n; i++)
    if (set[i] == b) return true;
  return false;
}

static void before(nxvk_rec *r, const VkBuffer *rd, uint32_t nr, const VkBuffer *wr, uint32_t nw) {
  if (!r->c->lazy_barriers) return;
  bool need = (uint32_t)r->nrd + nr > HAZARD_MAX || (uint32_t)r->nwr + nw > HAZARD_MAX;
  for (uint32_t i = 0; i < nr && !need; i++) need = touched(r->since_wr, (uint32_t)r->nwr, rd[i]);
  for (uint32_t i = 0; i < nw && !need; i++)
    need = touched(r->since_wr, (uint32_t)r->nwr, wr[i]) || touched(r->since_rd, (uint32_t)r->nrd, wr[i]);
  if (need) {
    barrier(r, COMPUTE_TRANSFER, ALL_RW);
    r->nrd = r->nwr = 0;
  }
  for (uint32_t i = 0; i < nr && r->nrd < (int)HAZARD_MAX; i++) r->since_rd[r->nrd++] = rd[i];
  for (uint32_t i = 0; i < nw && r->nwr < (int)HAZARD_MAX; i++) r->since_wr[r->nwr++] = wr[i];
}

static void after(nxvk_rec *r) {
  if (!r->c->lazy_barriers) barrier(r, COMPUTE_TRANSFER, ALL_RW);
}

/* Kernel metadata goes into 64 KiB chunks.  Where device memory is mapped
 * (CPU and integrated devices) it is written in place; on discrete GPUs the
 * chunk is device-local and filled by vkCmdUpdateBuffer, because shaders
 * reading host memory there pay a PCIe round trip per warp (NVIDIA does not
 * cache coherent system memory). */
int nxvk_rec_meta(nxvk_rec *r, const uint32_t *words, uint32_t n, uint32_t *offset) {
  if (n > META_CHUNK_WORDS) return nxvk_seterr(NXVK_E_TOO_LARGE, "kernel metadata too large");
  if (r->nmeta == 0 || r->meta_used + n > META_CHUNK_WORDS) {
    if (r->nmeta > 0) r->meta_cur++;
    if (r->meta_cur >= r->nmeta) {
      nxvk_buffer **m = realloc(r->meta, (size_t)(r->nmeta + 1) * sizeof *m);
      if (!m) return nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
      r->meta = m;
      int rc = nxvk_buffer_create(r->c, META_CHUNK_WORDS * 4, r->c->host_visible_fast_path,
                                  &r->meta[r->nmeta]);
      if (rc) return rc;
      r->nmeta++;
    }
    r->meta_used = 0;
  }
  nxvk_buffer *chunk = r->meta[r->meta_cur];
  if (chunk->mapped) {
    memcpy((uint32_t *)chunk->mapped + r->meta_used, words, n * 4);
  } else {
    before(r, NULL, 0, &chunk->buffer, 1);
    r->c->vk.vkCmdUpdateBuffer(r->cmd, chunk->buffer, (VkDeviceSize)r->meta_used * 4,
                               (VkDeviceSize)n * 4, words);
    after(r);
  }
  *offset = r->meta_used;
  r->meta_used += n;
  return NXVK_OK;
}

static int alloc_set(nxvk_rec *r, nxvk_kernel *k, VkDescriptorSet *set) {
  nxvk_ctx *c = r->c;
  if (r->ndpools == 0 || r->sets_in_cur >= SETS_PER_POOL) {
    if (r->ndpools > 0) r->dpool_cur++;
    if (r->dpool_cur >= r->ndpools) {
      VkDescriptorPool *p = realloc(r->dpools, (size_t)(r->ndpools + 1) * sizeof *p);
      if (!p) return nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
      r->dpools = p;
      VkDescriptorPoolSize size = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                   SETS_PER_POOL * NXVK_MAX_BINDINGS};
      VkDescriptorPoolCreateInfo dpci = {
          .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
          .maxSets = SETS_PER_POOL,
          .poolSizeCount = 1,
          .pPoolSizes = &size,
      };
      VK_CHECK(c->vk.vkCreateDescriptorPool(c->device, &dpci, NULL, &r->dpools[r->ndpools]));
      r->ndpools++;
    }
    r->sets_in_cur = 0;
  }
  VkDescriptorSetAllocateInfo ai = {
      .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
      .descriptorPool = r->dpools[r->dpool_cur],
      .descriptorSetCount = 1,
      .pSetLayouts = &k->set_layout,
  };
  VK_CHECK(c->vk.vkAllocateDescriptorSets(c->device, &ai, set));
  r->sets_in_cur++;
  return NXVK_OK;
}

int nxvk_rec_dispatch(nxvk_rec *r, nxvk_kernel *k, const nxvk_binding *bufs, int nbufs,
                      uint32_t meta_offset, uint32_t gx, uint32_t gy, uint32_t gz) {
  nxvk_ctx *c = r->c;
  if (nbufs != k->nbuffers)
    return nxvk_seterr(NXVK_E_BAD_REQUEST, "kernel wants %d buffers, got %d", k->nbuffers, nbufs);
  if (r->nmeta == 0) {
    /* kernels always bind metadata; give it a chunk even if none was written */
    uint32_t dummy = 0, off;
    int rc = nxvk_rec_meta(r, &dummy, 1, &off);
    if (rc) return rc;
  }
  VkDescriptorSet set;
  int rc = alloc_set(r, k, &set);
  if (rc) return rc;
  VkDescriptorBufferInfo info[NXVK_MAX_BINDINGS];
  VkWriteDescriptorSet writes[NXVK_MAX_BINDINGS];
  info[0] = (VkDescriptorBufferInfo){r->meta[r->meta_cur]->buffer, 0, VK_WHOLE_SIZE};
  for (int i = 0; i < nbufs; i++) {
    VkDeviceSize range = bufs[i].range ? bufs[i].range : VK_WHOLE_SIZE;
    info[i + 1] = (VkDescriptorBufferInfo){bufs[i].buf->buffer, bufs[i].offset, range};
    rc = nxvk_rec_hold(r, bufs[i].buf);
    if (rc) return rc;
  }
  for (int i = 0; i <= nbufs; i++)
    writes[i] = (VkWriteDescriptorSet){
        .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
        .dstSet = set,
        .dstBinding = (uint32_t)i,
        .descriptorCount = 1,
        .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
        .pBufferInfo = &info[i],
    };
  c->vk.vkUpdateDescriptorSets(c->device, (uint32_t)nbufs + 1, writes, 0, NULL);
  c->vk.vkCmdBindPipeline(r->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k->pipeline);
  c->vk.vkCmdBindDescriptorSets(r->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k->layout, 0, 1, &set, 0,
                                NULL);
  uint32_t pc[4] = {meta_offset, 0, 0, 0};
  c->vk.vkCmdPushConstants(r->cmd, k->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, pc);
  VkBuffer wr[NXVK_MAX_BINDINGS];
  for (int i = 0; i < nbufs; i++) wr[i] = bufs[i].buf->buffer;
  before(r, &info[0].buffer, 1, wr, (uint32_t)nbufs);
  c->vk.vkCmdDispatch(r->cmd, gx, gy, gz);
  after(r);
  r->ndispatch++;
  return NXVK_OK;
}

int nxvk_rec_copy(nxvk_rec *r, nxvk_buffer *src, VkDeviceSize src_off, nxvk_buffer *dst,
                  VkDeviceSize dst_off, VkDeviceSize n) {
  int rc = nxvk_rec_hold(r, src);
  if (rc == NXVK_OK) rc = nxvk_rec_hold(r, dst);
  if (rc) return rc;
  VkBufferCopy region = {src_off, dst_off, n};
  before(r, &src->buffer, 1, &dst->buffer, 1);
  r->c->vk.vkCmdCopyBuffer(r->cmd, src->buffer, dst->buffer, 1, &region);
  after(r);
  return NXVK_OK;
}

int nxvk_rec_fill(nxvk_rec *r, nxvk_buffer *b, VkDeviceSize n, uint32_t word) {
  int rc = nxvk_rec_hold(r, b);
  if (rc) return rc;
  before(r, NULL, 0, &b->buffer, 1);
  r->c->vk.vkCmdFillBuffer(r->cmd, b->buffer, 0, (n + 3) & ~(VkDeviceSize)3, word);
  after(r);
  return NXVK_OK;
}

int nxvk_rec_update(nxvk_rec *r, nxvk_buffer *b, VkDeviceSize off, const void *data,
                    VkDeviceSize n) {
  int rc = nxvk_rec_hold(r, b);
  if (rc) return rc;
  before(r, NULL, 0, &b->buffer, 1);
  r->c->vk.vkCmdUpdateBuffer(r->cmd, b->buffer, off, n, data);
  after(r);
  return NXVK_OK;
}

void nxvk_rec_abort(nxvk_rec *r) {
  if (!r) return;
  r->c->vk.vkEndCommandBuffer(r->cmd);
  rec_release(r);
}

static int note_lost(nxvk_ctx *c, int rc) {
  if (rc == NXVK_E_DEVICE_LOST) atomic_store(&c->lost, true);
  return rc;
}

/* Small jobs finish in microseconds, and a blocking wait costs tens of
 * microseconds to wake up: poll briefly first (c->spin_ns; none on CPU
 * devices, where the poller would take a core from the driver's own
 * threads).  At most c->max_spinners threads poll at once, the others block
 * at once: 16 threads polling on a 16-core host took the cores the
 * submitting thread and the driver needed. */
static bool spin_begin(nxvk_ctx *c) {
  if (!c->spin_ns) return false;
  if (atomic_fetch_add(&c->spinners, 1) < c->max_spinners) return true;
  atomic_fetch_sub(&c->spinners, 1);
  return false;
}

static uint64_t since(const struct timespec *t0) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)((t.tv_sec - t0->tv_sec) * 1000000000L + (t.tv_nsec - t0->tv_nsec));
}

/* Whether to poll again; with c->poll_gap_ns (NXVK_WAIT_POLL_GAP_US) it
 * first lets that long pass reading only the clock, in case a poll (a call
 * into the driver) is what the submitting threads wait behind. */
static bool spin_more(nxvk_ctx *c, const struct timespec *t0) {
  uint64_t t = since(t0);
  if (c->poll_gap_ns)
    while (since(t0) - t < c->poll_gap_ns) {
    }
  return t < c->spin_ns;
}

static VkResult wait_fence(nxvk_ctx *c, VkFence fence) {
  if (spin_begin(c)) {
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    VkResult vr;
    do vr = c->vk.vkGetFenceStatus(c->device, fence);
    while (vr == VK_NOT_READY && spin_more(c, &t0));
    atomic_fetch_sub(&c->spinners, 1);
    if (vr != VK_NOT_READY) return vr;
  }
  return c->vk.vkWaitForFences(c->device, 1, &fence, VK_TRUE, UINT64_MAX);
}

/* A command buffer's place in a group: the group's signal value (0 until
 * its vkQueueSubmit returned) and that call's result. */
typedef struct group_slot {
  atomic_ullong value;
  VkResult vr;
} group_slot;

/* Submit what is queued on lane q, one group (one vkQueueSubmit) at a time,
 * at most `rounds` groups; called and returns with q->submit_lock held,
 * q->submitting false. */
static void lead(nxvk_ctx *c, nxvk_lane *q, int rounds) {
  atomic_store(&q->submitting, true);
  for (int round = 0; round < rounds && q->nqueued > 0; round++) {
    int n = q->nqueued;
    VkCommandBuffer *group = q->queued;
    group_slot **slots = q->queued_slot;
    uint64_t to = q->timeline_assigned;
    q->queued = NULL;
    q->queued_slot = NULL;
    q->nqueued = q->capqueued = 0;
    pthread_mutex_unlock(&q->submit_lock);
    VkTimelineSemaphoreSubmitInfo tsi = {
        .sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
        .signalSemaphoreValueCount = 1,
        .pSignalSemaphoreValues = &to,
    };
    /* with several lanes, the group also waits for what the others have
     * been seen to complete: values already reached, so no delay, but the
     * memory dependency that makes their writes visible on this queue */
    VkSemaphore wsem[NXVK_MAX_LANES];
    uint64_t wval[NXVK_MAX_LANES];
    VkPipelineStageFlags wstage[NXVK_MAX_LANES];
    uint32_t nw = 0;
    for (int i = 0; i < c->nlanes; i++) {
      /* a value this lane already waited for needs no second wait: the
       * wait orders everything submitted after it on this queue */
      uint64_t done = atomic_load(&c->lanes[i].completed);
      if (&c->lanes[i] == q || done <= q->waited[i]) continue;
      wsem[nw] = c->lanes[i].timeline;
      wval[nw] = done;
      wstage[nw++] = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    }
    tsi.waitSemaphoreValueCount = nw;
    tsi.pWaitSemaphoreValues = wval;
    VkSubmitInfo si = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
        .pNext = &tsi,
        .waitSemaphoreCount = nw,
        .pWaitSemaphores = wsem,
        .pWaitDstStageMask = wstage,
        .commandBufferCount = (uint32_t)n,
        .pCommandBuffers = group,
        .signalSemaphoreCount = 1,
        .pSignalSemaphores = &q->timeline,
    };
    uint64_t tq = now_ns();
    pthread_mutex_lock(q->qlock);
    VkResult vr = c->vk.vkQueueSubmit(q->queue, 1, &si, VK_NULL_HANDLE);
    pthread_mutex_unlock(q->qlock);
    for (uint32_t i = 0, j = 0; vr == VK_SUCCESS && i < nw; i++) { /* which lanes those were */
      while (c->lanes[j].timeline != wsem[i]) j++;
      q->waited[j] = wval[i];
    }
    atomic_fetch_add(&c->t_queue_submit, now_ns() - tq);
    atomic_fetch_add(&c->submits, 1);
    pthread_mutex_lock(&q->submit_lock);
    for (int i = 0; i < n; i++) { /* the result first: a spinning owner reads it once value is set */
      slots[i]->vr = vr;
      atomic_store_explicit(&slots[i]->value, to, memory_order_release);
    }
    if (!q->queued) {           /* keep the larger arrays for the next group */
      q->queued = group;
      q->queued_slot = slots;
      q->capqueued = n;
    } else {
      free(group);
      free(slots);
    }
    pthread_cond_broadcast(&q->submit_cond);
  }
  atomic_store(&q->submitting, false);
  if (q->nqueued > 0) pthread_cond_broadcast(&q->submit_cond); /* one of them leads next */
}

/* Group commit on lane q: queue cmd; a thread that finds nobody submitting
 * on q leads: it submits everything queued there so far (its own
 * included) in one vkQueueSubmit, which signals q's timeline once, with
 * the group's last value, and with c->group_rounds > 1 goes on with what
 * was queued meanwhile, up to that many groups.  The others wait for their
 * group's value: blocking on submit_cond, or (group_rounds > 1, polling
 * waits) polling it first, and lead when nobody does.  *signal gets the
 * value, for the caller to wait on.  A vkQueueSubmit that fails fails
 * every command buffer it carried. */
static VkResult group_submit(nxvk_ctx *c, nxvk_lane *q, VkCommandBuffer cmd, uint64_t *signal) {
  group_slot me = {.vr = VK_SUCCESS};
  atomic_init(&me.value, 0);
  pthread_mutex_lock(&q->submit_lock);
  if (q->nqueued == q->capqueued) {
    int cap = q->capqueued ? 2 * q->capqueued : 16;
    VkCommandBuffer *nq = realloc(q->queued, (size_t)cap * sizeof *nq);
    if (nq) q->queued = nq;
    group_slot **qs = nq ? realloc(q->queued_slot, (size_t)cap * sizeof *qs) : NULL;
    if (!qs) {
      pthread_mutex_unlock(&q->submit_lock);
      return VK_ERROR_OUT_OF_HOST_MEMORY;
    }
    q->queued_slot = qs;
    q->capqueued = cap;
  }
  ++q->timeline_assigned;
  q->queued[q->nqueued] = cmd;
  q->queued_slot[q->nqueued++] = &me;
  if (!atomic_load(&q->submitting)) lead(c, q, c->group_rounds);
  if (atomic_load(&me.value) == 0 && c->group_rounds > 1 && c->spin_ns) {
    pthread_mutex_unlock(&q->submit_lock);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (atomic_load_explicit(&me.value, memory_order_acquire) == 0 && atomic_load(&q->submitting) &&
           spin_more(c, &t0)) {
    }
    pthread_mutex_lock(&q->submit_lock);
  }
  while (atomic_load(&me.value) == 0) {
    if (!atomic_load(&q->submitting)) lead(c, q, c->group_rounds);
    else pthread_cond_wait(&q->submit_cond, &q->submit_lock);
  }
  pthread_mutex_unlock(&q->submit_lock);
  *signal = atomic_load(&me.value);
  return me.vr;
}

/* As wait_fence, for value v of lane q's timeline. */
static VkResult wait_timeline(nxvk_ctx *c, nxvk_lane *q, uint64_t v) {
  if (spin_begin(c)) {
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    uint64_t now = 0;
    VkResult vr;
    do vr = c->vk.vkGetSemaphoreCounterValue(c->device, q->timeline, &now);
    while (vr == VK_SUCCESS && now < v && spin_more(c, &t0));
    atomic_fetch_sub(&c->spinners, 1);
    if (vr != VK_SUCCESS || now >= v) return vr;
  }
  VkSemaphoreWaitInfo wi = {
      .sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
      .semaphoreCount = 1,
      .pSemaphores = &q->timeline,
      .pValues = &v,
  };
  return c->vk.vkWaitSemaphores(c->device, &wi, UINT64_MAX);
}

/* The end of a recording, submitted or not: the stage times where it was
 * waited for (t_waited), then back to the pool (or destroyed on a lost
 * device). */
static int rec_end(nxvk_rec *r, int rc, uint64_t t_waited) {
  nxvk_ctx *c = r->c;
  if (t_waited) {
    atomic_fetch_add(&c->recordings, 1);
    atomic_fetch_add(&c->t_record, r->t_sub - r->t_begin);
    atomic_fetch_add(&c->t_submit, r->t_launched - r->t_sub);
    atomic_fetch_add(&c->t_wait, t_waited - r->t_wait);
  }
  if (rc == NXVK_E_DEVICE_LOST) {
    /* nothing may be reused on a lost device; drop our references */
    for (int i = 0; i < r->nheld; i++) nxvk_buffer_unref(c, r->held[i]);
    r->nheld = 0;
    rec_destroy(c, r);
  } else {
    rec_release(r);
    if (t_waited) atomic_fetch_add(&c->t_release, now_ns() - t_waited);
  }
  return rc;
}

int nxvk_rec_launch(nxvk_rec *r) {
  nxvk_ctx *c = r->c;
  r->t_sub = now_ns();
  if (r->timestamps)
    c->vk.vkCmdWriteTimestamp(r->cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, r->queries, 1);
  /* Results read through mapped memory must be visible to the host. */
  barrier(r, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
  VkResult vr = c->vk.vkEndCommandBuffer(r->cmd);
  if (vr != VK_SUCCESS) return rec_end(r, nxvk_vk_fail(vr, "vkEndCommandBuffer", __FILE__, __LINE__), 0);
  VkSubmitInfo si = {
      .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
      .commandBufferCount = 1,
      .pCommandBuffers = &r->cmd,
  };
  /* a lane per thread (group commit only; one lane otherwise), the
   * threads spread over the lanes in the order they first submit: a lone
   * thread keeps to one lane and never waits on another.  A recording that
   * reads what another lane wrote began after that one's wait, so its group
   * waits on that lane's timeline (group_submit) */
  bool lanes = c->nlanes > 1 && c->group_submit;
  static _Thread_local unsigned thread_seq; /* 0: not given yet */
  static atomic_uint threads_seen;
  if (lanes && thread_seq == 0) thread_seq = atomic_fetch_add(&threads_seen, 1) + 1;
  nxvk_lane *q = &c->lanes[lanes ? (thread_seq - 1) % (unsigned)c->nlanes : 0];
  r->lane = q;
  r->lanes = lanes;
  r->grouped = c->group_submit && !c->inject_unlocked_submit;
  if (r->grouped) {
    vr = group_submit(c, q, r->cmd, &r->value);
    if (vr != VK_SUCCESS)
      return rec_end(r, note_lost(c, nxvk_vk_fail(vr, "vkQueueSubmit", __FILE__, __LINE__)), 0);
  } else {
    bool lock = !c->inject_unlocked_submit;
    uint64_t tq = now_ns();
    if (lock) pthread_mutex_lock(q->qlock);
    vr = c->vk.vkQueueSubmit(q->queue, 1, &si, r->fence);
    if (lock) pthread_mutex_unlock(q->qlock);
    atomic_fetch_add(&c->t_queue_submit, now_ns() - tq);
    atomic_fetch_add(&c->submits, 1);
    if (vr != VK_SUCCESS)
      return rec_end(r, note_lost(c, nxvk_vk_fail(vr, "vkQueueSubmit", __FILE__, __LINE__)), 0);
  }
  r->t_launched = now_ns();
  return NXVK_OK;
}

int nxvk_rec_wait(nxvk_rec *r, double *gpu_ns) {
  nxvk_ctx *c = r->c;
  int rc = NXVK_OK;
  if (gpu_ns) *gpu_ns = 0;
  r->t_wait = now_ns();
  VkResult vr;
  if (r->grouped) {
    nxvk_lane *q = r->lane;
    vr = wait_timeline(c, q, r->value);
    if (r->lanes && vr == VK_SUCCESS) {
      unsigned long long done = atomic_load(&q->completed);
      while (done < r->value && !atomic_compare_exchange_weak(&q->completed, &done, r->value)) {
      }
    }
    if (vr != VK_SUCCESS) rc = note_lost(c, nxvk_vk_fail(vr, "vkWaitSemaphores", __FILE__, __LINE__));
  } else {
    vr = wait_fence(c, r->fence);
    if (vr != VK_SUCCESS) rc = note_lost(c, nxvk_vk_fail(vr, "vkWaitForFences", __FILE__, __LINE__));
  }
  uint64_t t_waited = now_ns();
  for (int i = 0; i < r->nchecks && rc == NXVK_OK; i++)
    if (*(volatile const uint32_t *)r->checks[i].b->mapped != 0)
      rc = nxvk_seterr(r->checks[i].code, "%s", r->checks[i].msg);
  if (rc == NXVK_OK && r->timestamps && gpu_ns) {
    uint64_t ts[2];
    vr = c->vk.vkGetQueryPoolResults(c->device, r->queries, 0, 2, sizeof ts, ts, sizeof ts[0],
                                     VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
    if (vr == VK_SUCCESS) {
      uint32_t bits = c->info.timestamp_valid_bits;
      uint64_t mask = bits >= 64 ? ~0ull : ((1ull << bits) - 1);
      *gpu_ns = (double)((ts[1] - ts[0]) & mask) * c->info.timestamp_period_ns;
    }
  }
  return rec_end(r, rc, t_waited);
}

int nxvk_rec_submit(nxvk_rec *r, double *gpu_ns) {
  if (gpu_ns) *gpu_ns = 0;
  int rc = nxvk_rec_launch(r);
  return rc ? rc : nxvk_rec_wait(r, gpu_ns);
}
