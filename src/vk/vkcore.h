/*
 * vkcore.h - the Vulkan core: instance, device, memory, pipelines and
 * submission.  Knows nothing about ops: it runs named SPIR-V kernels over
 * buffers.  Internal to the engine.
 *
 * Threading: a ctx is shared by all threads.  A queue is externally
 * synchronized, so every vkQueueSubmit holds its lane's queue_lock; fences
 * and timelines are waited on outside it.  Recordings (command pool + buffer + fence + descriptor pool +
 * metadata buffer) are pooled and owned by one thread at a time, which gives
 * each thread its own command pool without thread-local storage.
 */
#ifndef NXVK_VKCORE_H
#define NXVK_VKCORE_H

#include <pthread.h>
#include <stdatomic.h>
#include <volk.h>

#include "../core/internal.h"

/* Map a failed VkResult to our code, record `file:line call` and return. */
int nxvk_vk_fail(VkResult r, const char *call, const char *file, int line);
/* NXVK_E_NO_DEVICE with what the loader was told (VK_DRIVER_FILES, ...) */
int nxvk_no_driver_error(const char *what);
/* nxvk_ctx_open without the ops' knobs (nxvk_ctx_open, src/ops/tuning.c,
 * calls it and then reads them) */
int nxvk_vk_ctx_open(const nxvk_ctx_opts *o, nxvk_ctx **out);
#define VK_CHECK(call)                                                   \
  do {                                                                   \
    VkResult vkr_ = (call);                                              \
    if (vkr_ != VK_SUCCESS) return nxvk_vk_fail(vkr_, #call, __FILE__, __LINE__); \
  } while (0)

/* ---- instance (process-wide, refcounted) ---- */

typedef struct nxvk_instance {
  VkInstance instance;
  VkDebugUtilsMessengerEXT messenger;
  bool validate;
  atomic_ullong validation_messages;
  pthread_mutex_t msg_lock;
  char last_message[512];
} nxvk_instance;

int nxvk_instance_acquire(bool validate, nxvk_instance **out);
void nxvk_instance_release(nxvk_instance *inst);
/* Fill info for one physical device (memory budget read now). */
void nxvk_physical_info(nxvk_instance *inst, VkPhysicalDevice pd, int index,
                        nxvk_device_info *out);
int nxvk_enumerate(nxvk_instance *inst, VkPhysicalDevice **out, uint32_t *count);
bool nxvk_device_ext_present(VkPhysicalDevice pd, const char *name);

/* ---- buffers ---- */

typedef struct nxvk_buffer {
  VkBuffer buffer;
  VkDeviceMemory memory;
  VkDeviceSize size;        /* bytes requested (>= 4: zero-size tensors get 4) */
  VkDeviceSize accounted;   /* bytes of device memory behind it (live_bytes) */
  bool host_visible;        /* staging / metadata memory */
  int pool_class;           /* size class it returns to when freed; -1: never pooled */
  struct nxvk_buffer *next, *prev; /* pool free list (next: older) */
  uint64_t released;        /* pool clock when it last entered the pool */
  void *mapped;             /* non-NULL when host-visible and mapped */
  atomic_int refs;          /* tensors and batches sharing it */
  bool kept;                /* the engine's own (nxvk_buffer_create_kept): outside live_bytes and the cap */
} nxvk_buffer;

/* ---- pipelines ---- */

#define NXVK_MAX_BINDINGS 16    /* binding 0 = metadata, 1.. = tensors (fused kernels: up to 15) */
#define NXVK_MAX_SPEC 8

typedef struct nxvk_spirv {
  const char *name;
  const uint32_t *code;
  size_t size;              /* bytes */
} nxvk_spirv;

/* Embedded SPIR-V, generated at build time (build/gen/spirv_table.c). */
extern const nxvk_spirv nxvk_spirv_table[];
extern const size_t nxvk_spirv_count;
const nxvk_spirv *nxvk_spirv_find(const char *name);

typedef struct nxvk_kernel {
  const nxvk_spirv *spirv;        /* NULL for run-time compiled code */
  char key[65];                   /* run-time code: its content address; else "" */
  char rt_name[48];               /* run-time code: the name it was first asked for (rtkernel.c) */
  uint32_t spec[NXVK_MAX_SPEC];
  int nspec;
  int nbuffers;                   /* tensor bindings (binding 1..nbuffers) */
  uint32_t wg_size;               /* local_size_x (also spec constant 0) */
  VkPipeline pipeline;
  VkPipelineLayout layout;
  VkDescriptorSetLayout set_layout;
  char *stats;                    /* the driver's statistics (NXVK_KERNEL_STATS), malloc'd */
  struct nxvk_kernel *next;       /* ctx's kernel list */
} nxvk_kernel;

/* ---- the context ---- */

typedef struct nxvk_rec nxvk_rec;

/* One queue and its submissions (submit.c). */
#define NXVK_MAX_LANES 16
typedef struct nxvk_lane {
  VkQueue queue;
  pthread_mutex_t queue_lock;          /* its queue's lock, where it is the first lane on it */
  pthread_mutex_t *qlock;              /* held around every vkQueueSubmit on queue: that
                                        * lane's queue_lock, or c->queue_lock for queue 0 */
  VkSemaphore timeline;                /* VK_NULL_HANDLE: one submission and fence each */
  pthread_mutex_t submit_lock;
  pthread_cond_t submit_cond;
  atomic_bool submitting;              /* a thread leads (submits groups) on this lane */
  uint64_t timeline_assigned;          /* the last value given to a command buffer */
  VkCommandBuffer *queued;             /* owned; the next group, in order */
  struct group_slot **queued_slot;     /* owned; where each one's group value goes */
  int nqueued, capqueued;
  atomic_ullong completed;             /* a value of timeline a host wait has seen reached */
  uint64_t waited[NXVK_MAX_LANES];     /* the other lanes' values a submission here waited
                                        * for (the leader's, under submitting) */
} nxvk_lane;

/* Freed buffers wait here for reuse, by size class (4 per power of two from
 * 256 bytes to NXVK_POOL_MAX_BUFFER), so a warm hot path allocates nothing. */
#define NXVK_POOL_CLASSES 96
#define NXVK_POOL_MAX_BUFFER ((VkDeviceSize)512 << 20)
typedef struct nxvk_pool {
  pthread_mutex_t lock;
  nxvk_buffer *free[2][NXVK_POOL_CLASSES];   /* [host_visible][class], newest first, owned */
  nxvk_buffer *oldest[2][NXVK_POOL_CLASSES]; /* the other end of each list */
  uint64_t bytes;                            /* device memory held here */
  uint64_t cap;                              /* most it may hold */
  uint64_t clock;                            /* counts buffers entering it */
} nxvk_pool;
void nxvk_pool_trim(nxvk_ctx *c);

struct nxvk_ctx {
  nxvk_instance *inst;                 /* always owned (one reference) */
  VkPhysicalDevice physical;
  VkDevice device;
  struct VolkDeviceTable vk;           /* device functions, per device */
  nxvk_device_info info;
  VkPhysicalDeviceMemoryProperties mem_props;
  uint32_t queue_family;
  VkQueue queue;                       /* the family's first queue (lane 0's) */
  pthread_mutex_t queue_lock;          /* held around every vkQueueSubmit on it */
  /* Lanes (submit.c): one, or NXVK_QUEUES, on as many queues of
   * queue_family (past the family's count lanes share queues).  Each
   * thread submits on one lane (they are spread in turn), so groups on
   * different queues may run on the device at once.  Each lane has its own lock, timeline
   * and group commit: where the device has timeline semaphores, a thread
   * that submits while another is in vkQueueSubmit on its lane queues its
   * command buffer, and the next submitter takes every queued one in one
   * vkQueueSubmit, which signals the lane's timeline once, to the group's
   * last value; each thread waits for that value (not its own: the
   * validation layer of Vulkan SDK 1.3.239 can miss a host wait on a value
   * no submission signals and time out after 10 s). */
  nxvk_lane lanes[NXVK_MAX_LANES];
  int nlanes, nqueues;
  bool group_submit;                   /* use it (NXVK_GROUP_SUBMIT, src/ops/tuning.c) */
  int group_rounds;                    /* groups a leader submits at most (NXVK_GROUP_ROUNDS) */
  /* waits poll this long before blocking, at most max_spinners threads at
   * once (submit.c; NXVK_WAIT_SPIN_US, NXVK_WAIT_SPINNERS) */
  uint64_t spin_ns;
  uint64_t poll_gap_ns;                /* between two polls (NXVK_WAIT_POLL_GAP_US) */
  int max_spinners;
  atomic_int spinners;
  bool lazy_barriers;                  /* barriers only where commands conflict (submit.c) */
  bool host_visible_fast_path;         /* CPU / UMA devices: map device memory */
  bool no_dedicated;                   /* never a dedicated allocation (memory.c) */
  /* VK_EXT_external_memory_host: large transfers import the caller's memory
   * and copy it by DMA (memory.c); 0 where the device has no such import or
   * NXVK_XFER_IMPORT=0 turned it off */
  VkDeviceSize import_align;           /* minImportedHostPointerAlignment */
  VkDeviceSize host_align;             /* the same, whatever NXVK_XFER_IMPORT says (nxvk_host_register) */
  /* host memory the device reaches by DMA (nxvk_pinned_alloc,
   * nxvk_host_register): transfers from or into it are copies by the
   * device alone, split in xfer_pinned_split submissions on as many lanes
   * (NXVK_XFER_PINNED_SPLIT); xfer_pinned false (NXVK_XFER_PINNED=0)
   * treats it as any host memory, for comparison */
  pthread_mutex_t host_lock;
  struct nxvk_host_region *host_regions; /* owned */
  atomic_int host_nregions;            /* their count, read without the lock (most transfers see 0) */
  int xfer_pinned_split;
  bool xfer_pinned;
  size_t xfer_piece;                   /* bytes per piece of a large transfer, at most (NXVK_XFER_PIECE) */
  bool xfer_piece_set;                 /* NXVK_XFER_PIECE given: every piece that size */
  int xfer_threads;                    /* threads at most (NXVK_XFER_THREADS) */
  size_t xfer_min;                     /* transfers this large run in pieces on threads (NXVK_XFER_MIN) */
  bool xfer_pipe;                      /* pieces through lanes, overlapped (NXVK_XFER_PIPE; memory.c) */
  bool xfer_wc;                        /* uploads through uncached (write-combined) staging (NXVK_XFER_WC) */
  bool xfer_stream;                    /* the lanes' memcpy with non-temporal stores (NXVK_XFER_COPY) */
  /* the transfer-only family's queues (xfer_family UINT32_MAX: none),
   * up to 4, each with its lock around vkQueueSubmit; the lanes use them
   * where xfer_on_tq (NXVK_XFER_QUEUE=transfer, or mixed: the compute
   * queue too, xfer_mixed); buffers are then shared by both families
   * (VK_SHARING_MODE_CONCURRENT) */
  uint32_t xfer_family;
  int xfer_nq;
  VkQueue xfer_queues[4];
  pthread_mutex_t xfer_qlock[4];
  bool xfer_on_tq, xfer_mixed;
  unsigned xfer_lanes_made;            /* lanes created so far: the next one's queue */
  pthread_mutex_t xfer_lock;           /* xfer_lanes */
  struct nxvk_xfer_lane *xfer_lanes;   /* owned: idle lanes (staging pair, fences, command pool) */
  atomic_ullong imported_bytes, import_failures, pinned_bytes;
  /* the ops' tuning: set and read by src/ops (tuning.c); plain memory this
   * layer only frees, so that src/vk knows no op */
  struct nxvk_tuning *tuning;          /* owned */
  bool kernel_stats;                   /* capture the driver's statistics per kernel */
  atomic_bool lost;                    /* VK_ERROR_DEVICE_LOST seen */

  pthread_mutex_t kernel_lock;         /* kernels list and creation */
  nxvk_kernel *kernels;                /* owned */
  VkPipelineCache pipeline_cache;      /* loaded from / saved to cache_dir (cache.c) */

  /* fused kernels' program -> key, so a repeated graph (port) skips its
   * GLSL; owned by ops/fusion.c, which sets the destructor */
  pthread_mutex_t fusion_lock;
  void *fusion_memo;
  void (*fusion_memo_free)(void *memo);
  /* 16-bit unary ops' tables (NXVK_EW16_TABLE): device buffers made on
   * first use and kept until close; owned by ops/elementwise.c, which sets
   * the destructor (called while the device is still open) */
  pthread_mutex_t ew16_lock;
  void *ew16_tables;
  void (*ew16_tables_free)(nxvk_ctx *c);

  /* on-disk caches (cache.c) */
  char *cache_dir;                     /* owned; NULL: caches off (--no-cache) */
  char pcache_status[320];             /* what became of the pipeline cache file at open */
  bool pcache_rejected;                /* a file was there but not used: rewrite it */
  size_t pcache_loaded_bytes;          /* what was loaded, to skip saving it unchanged */
  uint64_t pcache_loaded_sum;

  pthread_mutex_t rec_lock;            /* free recordings */
  nxvk_rec *free_recs;                 /* owned */

  /* test-only faults (NXVK_TEST_INJECT) */
  bool inject_leak, inject_unlocked_submit, inject_import_fail;
  bool inject_lane_fail;               /* a transfer's worker 1 fails at its third piece (memory.c) */
  char inject_break_op[32];
  char inject_fail_op[32]; /* NXVK_TEST_INJECT=fail_op:NAME: op NAME's recording fails (vulkan_error) */

  /* accounting */
  atomic_ullong live_tensors, live_bytes, live_buffers, peak_bytes, buffers_created;
  atomic_ullong mem_cap;               /* live_bytes may not pass it (0: none); nxvk_ctx_set_mem_cap */
  atomic_ullong pipelines_created, submits;
  /* submit.c's stage times (nxvk_stats: recordings, record_ns ...) */
  atomic_ullong recordings, t_record, t_submit, t_wait, t_release, t_queue_submit;
  nxvk_pool pool;
};

/* Buffers: device-local (with staging) or host-visible on the fast path.
 * Every creation and destruction is accounted. */
int nxvk_buffer_create(nxvk_ctx *c, VkDeviceSize size, bool host_visible, nxvk_buffer **out);
/* A device-local buffer the engine keeps for itself until the context
 * closes (lut16's tables): like its pipelines and the transfer lanes'
 * staging, not the caller's, so outside live_bytes, live_buffers and the
 * memory cap (port --max-bytes), and never pooled. */
int nxvk_buffer_create_kept(nxvk_ctx *c, VkDeviceSize size, nxvk_buffer **out);
void nxvk_buffer_ref(nxvk_buffer *b);
void nxvk_buffer_unref(nxvk_ctx *c, nxvk_buffer *b);
/* Transfers of NXVK_XFER_MIN bytes or more (c->xfer_min, NXVK_XFER_MIN)
 * run in pieces on several threads. */
#define NXVK_XFER_MIN ((size_t)8 << 20)
/* The transfer lanes' staging memory and Vulkan objects (memory.c), freed
 * by nxvk_ctx_trim and at close. */
void nxvk_xfer_lanes_destroy(nxvk_ctx *c);
/* Pinned allocations and registrations the caller left (at close). */
void nxvk_host_regions_destroy(nxvk_ctx *c);
/* Whether this build has the lanes' streaming copy (x86-64). */
bool nxvk_xfer_can_stream(void);
/* n bytes move best on their own (nxvk_buffer_write/read: several threads,
 * or host memory imported), not through staging inside a recording. */
bool nxvk_xfer_direct(nxvk_ctx *c, size_t n);
int nxvk_buffer_write(nxvk_ctx *c, nxvk_buffer *b, VkDeviceSize off, const void *src, size_t n);
int nxvk_buffer_read(nxvk_ctx *c, nxvk_buffer *b, VkDeviceSize off, void *dst, size_t n);

/* Kernels: one pipeline per (SPIR-V, spec constants), built once and kept.
 * spec[0] is the workgroup size. */
int nxvk_kernel_get(nxvk_ctx *c, const char *spirv_name, const uint32_t *spec, int nspec,
                    int nbuffers, nxvk_kernel **out);

/* ---- recordings ---- */

typedef struct nxvk_binding {
  nxvk_buffer *buf;
  VkDeviceSize offset, range;          /* range 0 = whole buffer */
} nxvk_binding;

/* Acquire a recording from the pool (its command buffer begun). */
int nxvk_rec_begin(nxvk_ctx *c, bool timestamps, nxvk_rec **out);
/* Append metadata words for one dispatch; returns its word offset, which the
 * kernel receives as push constant 0. */
int nxvk_rec_meta(nxvk_rec *r, const uint32_t *words, uint32_t n, uint32_t *offset);
/* Bind buffers (metadata at binding 0 added here), push the metadata offset,
 * dispatch groups, and put a compute->compute barrier after it.  The
 * recording keeps a reference to each buffer until it completes. */
int nxvk_rec_dispatch(nxvk_rec *r, nxvk_kernel *k, const nxvk_binding *bufs, int nbufs,
                      uint32_t meta_offset, uint32_t groups_x, uint32_t groups_y,
                      uint32_t groups_z);
/* Copy between buffers (staging) with the needed barriers. */
int nxvk_rec_copy(nxvk_rec *r, nxvk_buffer *src, VkDeviceSize src_off, nxvk_buffer *dst,
                  VkDeviceSize dst_off, VkDeviceSize n);
/* Write n bytes (a multiple of 4, at most 65536) into b inline. */
int nxvk_rec_update(nxvk_rec *r, nxvk_buffer *b, VkDeviceSize off, const void *data,
                    VkDeviceSize n);
/* Fill the first n bytes (rounded up to 4) of b with a 32-bit word. */
int nxvk_rec_fill(nxvk_rec *r, nxvk_buffer *b, VkDeviceSize n, uint32_t word);
/* The recording's next buffer of n zeroed 32-bit counts (the skinny
 * products' fold, dot_mv.c): the k-th call of a recording gets its k-th,
 * kept with the recording and zeroed once when made, so whoever counts in
 * it must leave it zero again.  Each call's is its own buffer, so lazy
 * barriers keep consecutive products apart only where their data meet. */
int nxvk_rec_counts(nxvk_rec *r, uint32_t n, nxvk_buffer **out);
/* Keep a buffer alive until the recording completes. */
int nxvk_rec_hold(nxvk_rec *r, nxvk_buffer *b);
/* A kernel's error flag: once the recording completes, nxvk_rec_submit
 * fails with `code` and `msg` (a static string) where the first word of the
 * host-visible buffer b is not 0.  The recording holds b until then. */
int nxvk_rec_check_word(nxvk_rec *r, nxvk_buffer *b, int code, const char *msg);
/* End, submit (under the queue lock), wait (outside it), release to pool. */
int nxvk_rec_submit(nxvk_rec *r, double *gpu_ns);
/* nxvk_rec_submit in two halves: end and submit (a failure releases the
 * recording), then wait, check and release.  Between them the caller may
 * do other work, but no other recording on this thread may wait on it. */
int nxvk_rec_launch(nxvk_rec *r);
int nxvk_rec_wait(nxvk_rec *r, double *gpu_ns);
void nxvk_rec_abort(nxvk_rec *r);
nxvk_ctx *nxvk_rec_ctx(nxvk_rec *r);
uint32_t nxvk_rec_dispatch_count(nxvk_rec *r);

/* Workgroups for n invocations at wg size, capped to the device limit
 * (kernels loop grid-stride over the rest). */
uint32_t nxvk_groups_for(nxvk_ctx *c, uint64_t n, uint32_t wg);

/* Kernels from run-time SPIR-V (fused shaders): one pipeline per (key,
 * spec constants, buffers), built once and kept like the embedded ones.
 * key names the code (the SHA-256 of its GLSL, 64 hex digits).  With words
 * NULL it only looks: *out is NULL (and NXVK_OK returned) when no such
 * kernel was built yet. */
int nxvk_kernel_get_spirv(nxvk_ctx *c, const char *key, const uint32_t *words, size_t bytes,
                          const uint32_t *spec, int nspec, int nbuffers, nxvk_kernel **out);

void nxvk_kernels_destroy(nxvk_ctx *c);

/* ---- VK_KHR_cooperative_matrix and VK_KHR_shader_bfloat16 ----
 * Both postdate Debian 12's Vulkan headers (1.3.239): their structures and
 * values as the Vulkan registry defines them.  Component types and scopes
 * share the NV extension's values (f16 0, f32 1, subgroup 3). */
#define NXVK_STYPE_COOPMAT_FEATURES_KHR ((VkStructureType)1000506000)
#define NXVK_STYPE_COOPMAT_PROPERTIES_KHR ((VkStructureType)1000506001)
#define NXVK_STYPE_BF16_FEATURES_KHR ((VkStructureType)1000141000)
#define NXVK_COMPONENT_BF16_KHR 1000141000
#define NXVK_COMPONENT_E4M3_EXT 1000491002
#define NXVK_COMPONENT_E5M2_EXT 1000491003
typedef struct {
  VkStructureType sType;
  void *pNext;
  VkBool32 cooperativeMatrix, cooperativeMatrixRobustBufferAccess;
} nxvk_coopmat_features_khr;
typedef struct {
  VkStructureType sType;
  void *pNext;
  uint32_t MSize, NSize, KSize;
  int32_t AType, BType, CType, ResultType;
  VkBool32 saturatingAccumulation;
  int32_t scope;
} nxvk_coopmat_properties_khr;
typedef struct {
  VkStructureType sType;
  void *pNext;
  VkBool32 shaderBFloat16Type, shaderBFloat16DotProduct, shaderBFloat16CooperativeMatrix;
} nxvk_bf16_features_khr;

/* ---- run-time shaders (shaderc.c) ---- */

/* GLSL -> SPIR-V through glslang (Vulkan 1.1, SPIR-V 1.3, the build's
 * target), with NoContraction on the arithmetic of main and op_* so that a
 * driver keeps each op's own rounding.  *words is malloc'd.  Thread-safe. */
int nxvk_glsl_compile(const char *glsl, const char *name, uint32_t **words, size_t *bytes);
/* The NoContraction pass alone (may replace *words). */
int nxvk_spirv_no_contraction(uint32_t **words, size_t *bytes);
/* A GL_NV_cooperative_matrix kernel's SPIR-V made VK_KHR_cooperative_matrix
 * SPIR-V, its A and B fragments bf16 with bf16_ab (spirv_khr.c: the rules it
 * expects of the kernel).  Replaces *words on success. */
int nxvk_spirv_coopmat_khr(uint32_t **words, size_t *bytes, bool bf16_ab);

/* ---- on-disk caches (cache.c) ---- */

/* $NXVK_CACHE_DIR, else $XDG_CACHE_HOME/nxvk, else $HOME/.cache/nxvk
 * (malloc'd); NULL when none can be named. */
char *nxvk_cache_dir_default(void);
/* dir (or the environment's folder when dir is NULL or "") is not too long
 * for the cache's paths: NXVK_E_BAD_REQUEST naming NXVK_CACHE_DIR if it is. */
int nxvk_cache_dir_check(const char *dir);
/* NXVK_NO_CACHE set to anything but "" or "0". */
bool nxvk_cache_disabled_by_env(void);
uint64_t nxvk_cache_checksum(const void *data, size_t len);

typedef enum { NXVK_CACHE_MISS, NXVK_CACHE_HIT, NXVK_CACHE_CORRUPT } nxvk_cache_result;
/* DIR/spirv/KEY.spv.  HIT: *words (malloc'd) passed every check; MISS: no
 * file; CORRUPT: a file failed a check (why says which) and is to be
 * written again. */
nxvk_cache_result nxvk_cache_spirv_load(const char *dir, const char *key, uint32_t **words,
                                        size_t *bytes, char *why, size_t whylen);
/* Written through a temporary file renamed into place. */
int nxvk_cache_spirv_store(const char *dir, const char *key, const uint32_t *words, size_t bytes);
/* Remove the entry (its module did not build a pipeline). */
void nxvk_cache_spirv_discard(const char *dir, const char *key);
/* What else than the GLSL decides the SPIR-V: the compiler's version and
 * options (shaderc.c); part of every cache entry's key. */
const char *nxvk_glsl_compiler_id(void);
/* Create c->pipeline_cache, from the device's file in c->cache_dir when it
 * is whole and was made by this device and driver version; sets
 * c->pcache_status. */
int nxvk_pipeline_cache_open(nxvk_ctx *c);
/* Write the pipeline cache back when it changed (best effort: a cache). */
void nxvk_pipeline_cache_save(nxvk_ctx *c);
void nxvk_recs_destroy(nxvk_ctx *c);

#endif
