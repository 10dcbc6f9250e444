/*
 * device.c - choosing a physical device, creating the logical device and its
 * compute queue, and the context's lifetime.
 */
#include "vkcore.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static int type_rank(const char *type) {
  static const char *order[] = {"discrete", "integrated", "virtual", "cpu", "other"};
  for (int i = 0; i < 5; i++)
    if (strcmp(type, order[i]) == 0) return i;
  return 5;
}

/* "N" picks by index, anything else by case-insensitive name substring. */
static int choose_device(const nxvk_device_info *infos, uint32_t n, const char *want,
                         uint32_t *pick) {
  if (want && *want) {
    char *end;
    long idx = strtol(want, &end, 10);
    if (*end == '\0') {
      if (idx < 0 || (uint32_t)idx >= n)
        return nxvk_seterr(NXVK_E_NO_DEVICE, "--device %s: no such device (have %u)", want, n);
      *pick = (uint32_t)idx;
      return NXVK_OK;
    }
    size_t wl = strlen(want);
    for (uint32_t i = 0; i < n; i++)
      for (const char *p = infos[i].name; *p; p++)
        if (strncasecmp(p, want, wl) == 0) {
          *pick = i;
          return NXVK_OK;
        }
    return nxvk_seterr(NXVK_E_NO_DEVICE, "--device %s: no device name contains it", want);
  }
  uint32_t best = 0;
  for (uint32_t i = 1; i < n; i++)
    if (type_rank(infos[i].type) < type_rank(infos[best].type)) best = i;
  *pick = best;
  return NXVK_OK;
}

static int find_compute_queue(VkPhysicalDevice pd, uint32_t *family, uint32_t *count) {
  uint32_t nq = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, NULL);
  VkQueueFamilyProperties *qf = calloc(nq ? nq : 1, sizeof *qf);
  if (!qf) return nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, qf);
  int found = -1;
  /* Prefer a compute-only family (async compute), else any with compute. */
  for (uint32_t i = 0; i < nq && found < 0; i++)
    if ((qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && !(qf[i].queueFlags & VK_QUEUE_GRAPHICS_BIT) &&
        qf[i].timestampValidBits > 0)
      found = (int)i;
  for (uint32_t i = 0; i < nq && found < 0; i++)
    if (qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) found = (int)i;
  *count = found >= 0 ? qf[found].queueCount : 0;
  free(qf);
  if (found < 0) return nxvk_seterr(NXVK_E_NO_DEVICE, "device has no compute queue");
  *family = (uint32_t)found;
  return NXVK_OK;
}

/* A transfer-only queue family (DMA engines: transfers, no graphics or
 * compute), UINT32_MAX where the device has none. */
static uint32_t find_transfer_queue(VkPhysicalDevice pd, int *count) {
  uint32_t nq = 0, found = UINT32_MAX;
  *count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, NULL);
  VkQueueFamilyProperties qf[32];
  if (nq > 32) nq = 32;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, qf);
  for (uint32_t i = 0; i < nq && found == UINT32_MAX; i++)
    if ((qf[i].queueFlags & VK_QUEUE_TRANSFER_BIT) &&
        !(qf[i].queueFlags & (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT)) && qf[i].queueCount > 0) {
      found = i;
      *count = qf[i].queueCount < 4 ? (int)qf[i].queueCount : 4;
    }
  return found;
}

static int device_create(nxvk_ctx *c) {
  const nxvk_device_info *d = &c->info;
  const char *exts[16];
  uint32_t nexts = 0;
  bool v12 = d->api_version_raw >= VK_API_VERSION_1_2;
  if (d->has_budget) exts[nexts++] = VK_EXT_MEMORY_BUDGET_EXTENSION_NAME;
  if (!v12 && d->storage_8bit) exts[nexts++] = "VK_KHR_8bit_storage";
  if (!v12 && d->float_controls) exts[nexts++] = "VK_KHR_shader_float_controls";
  if (nxvk_device_ext_present(c->physical, "VK_KHR_portability_subset"))
    exts[nexts++] = "VK_KHR_portability_subset";
  /* dot's coopmat variant: NV cooperative matrices with f16 arithmetic and
   * the Vulkan memory model (glslang declares it with NV cooperative matrices) */
  bool coop = d->coopmat_nv_f16;
  if (coop) exts[nexts++] = VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME; /* only on Vulkan 1.2+ */
  /* bf16 on tensor cores: KHR cooperative matrices with bf16 (spirv_khr.c) */
  bool coop_bf16 = d->coopmat_bf16_f32, coop_khr = coop_bf16 || d->coopmat_khr_f16;
  if (coop_khr) exts[nexts++] = "VK_KHR_cooperative_matrix";
  if (coop_bf16) exts[nexts++] = "VK_KHR_shader_bfloat16";
  /* NXVK_KERNEL_STATS=1: the driver's statistics of every kernel built
   * (registers, spills where it tells) for tuning; off by default because
   * capturing them can cost the pipeline cache on some drivers */
  c->kernel_stats = nxvk_env_flag("NXVK_KERNEL_STATS") &&
                    nxvk_device_ext_present(c->physical, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
  if (c->kernel_stats) exts[nexts++] = VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME;
  /* indexed_add's atomics (src/ops/index.c) */
  if (d->atomic_f32_add) exts[nexts++] = VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME;
  if (d->atomic_i64 && !v12) exts[nexts++] = "VK_KHR_shader_atomic_int64";
  /* transfers straight from and to the caller's memory (memory.c) */
  bool host_import = nxvk_device_ext_present(c->physical, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);
  if (host_import) exts[nexts++] = VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME;

  VkPhysicalDeviceFeatures want = {
      .shaderFloat64 = d->f64,
      .shaderInt64 = d->int64,
      .shaderInt16 = d->int16,
  };
  VkPhysicalDevice8BitStorageFeatures s8 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES,
      .storageBuffer8BitAccess = d->storage_8bit,
  };
  VkPhysicalDeviceShaderFloat16Int8Features f16 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES,
      .shaderFloat16 = d->f16,
      .shaderInt8 = d->int8,
  };
  VkPhysicalDevice16BitStorageFeatures s16 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES,
      .storageBuffer16BitAccess = d->storage_16bit,
  };
  VkPhysicalDeviceVulkanMemoryModelFeatures vmm = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES,
      .vulkanMemoryModel = VK_TRUE,
  };
  VkPhysicalDeviceCooperativeMatrixFeaturesNV cmf = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV,
      .cooperativeMatrix = VK_TRUE,
  };
  VkPhysicalDeviceTimelineSemaphoreFeatures tl = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES,
      .timelineSemaphore = VK_TRUE,
  };
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pexec = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR,
      .pNext = NULL,
      .pipelineExecutableInfo = VK_TRUE,
  };
  VkPhysicalDeviceShaderAtomicFloatFeaturesEXT af = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT,
      .shaderBufferFloat32AtomicAdd = VK_TRUE,
  };
  VkPhysicalDeviceShaderAtomicInt64Features ai = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_INT64_FEATURES,
      .shaderBufferInt64Atomics = VK_TRUE,
  };
  s8.pNext = &f16;
  f16.pNext = &s16;
  /* af and ai go first in the chain (before the optional tail above) */
  if (coop) {
    s16.pNext = &vmm;
    vmm.pNext = &cmf;
  }
  /* optional features go in right after s8 */
#define CHAIN_AFTER_S8(x) do { (x).pNext = s8.pNext; s8.pNext = &(x); } while (0)
  nxvk_coopmat_features_khr cmk = {.sType = NXVK_STYPE_COOPMAT_FEATURES_KHR, .cooperativeMatrix = VK_TRUE};
  nxvk_bf16_features_khr bf = {
      .sType = NXVK_STYPE_BF16_FEATURES_KHR, .shaderBFloat16Type = VK_TRUE, .shaderBFloat16CooperativeMatrix = VK_TRUE};
  if (coop_khr) CHAIN_AFTER_S8(cmk);
  if (coop_bf16) CHAIN_AFTER_S8(bf);
  if (coop_khr && !coop) CHAIN_AFTER_S8(vmm);
  if (c->kernel_stats) CHAIN_AFTER_S8(pexec);
  if (d->timeline_semaphore) CHAIN_AFTER_S8(tl);
  if (d->atomic_f32_add) CHAIN_AFTER_S8(af);
  if (d->atomic_i64) CHAIN_AFTER_S8(ai);
#undef CHAIN_AFTER_S8
  float prio[NXVK_MAX_LANES];
  for (int i = 0; i < NXVK_MAX_LANES; i++) prio[i] = 1.0f;
  /* the compute queues (one a lane, submit.c), and a transfer-only one
   * where there is one (the transfer lanes may use it: NXVK_XFER_QUEUE,
   * memory.c) */
  c->xfer_family = find_transfer_queue(c->physical, &c->xfer_nq);
  float prios[4] = {1.0f, 1.0f, 1.0f, 1.0f};
  VkDeviceQueueCreateInfo qci[2] = {
      {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
       .queueFamilyIndex = c->queue_family,
       .queueCount = (uint32_t)c->nqueues,
       .pQueuePriorities = prio},
      {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
       .queueFamilyIndex = c->xfer_family,
       .queueCount = (uint32_t)c->xfer_nq,
       .pQueuePriorities = prios},
  };
  VkDeviceCreateInfo ci = {
      .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
      .pNext = d->api_version_raw >= VK_API_VERSION_1_1 ? &s8 : NULL,
      .queueCreateInfoCount = c->xfer_family != UINT32_MAX ? 2 : 1,
      .pQueueCreateInfos = qci,
      .enabledExtensionCount = nexts,
      .ppEnabledExtensionNames = exts,
      .pEnabledFeatures = &want,
  };
  VK_CHECK(vkCreateDevice(c->physical, &ci, NULL, &c->device));
  volkLoadDeviceTable(&c->vk, c->device);
  if (host_import && c->vk.vkGetMemoryHostPointerPropertiesEXT) {
    VkPhysicalDeviceExternalMemoryHostPropertiesEXT hp = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &hp};
    vkGetPhysicalDeviceProperties2(c->physical, &p2);
    VkDeviceSize a = hp.minImportedHostPointerAlignment;
    /* a power of two that divides memory.c's 8 MiB pieces (drivers give 4 KiB or 64 KiB) */
    c->import_align = a && (a & (a - 1)) == 0 && a <= ((VkDeviceSize)1 << 20) ? a : 0;
    c->host_align = c->import_align;
  }
  /* c->queue is lane 0's (memory.c's transfer lanes submit on it too,
   * under c->queue_lock); more lanes than queues share them, and their locks */
  c->vk.vkGetDeviceQueue(c->device, c->queue_family, 0, &c->queue);
  for (int i = 0; i < c->nlanes; i++) {
    int k = i % c->nqueues;
    c->vk.vkGetDeviceQueue(c->device, c->queue_family, (uint32_t)k, &c->lanes[i].queue);
    c->lanes[i].qlock = k == 0 ? &c->queue_lock : &c->lanes[k].queue_lock;
  }
  for (int i = 0; i < c->xfer_nq; i++) c->vk.vkGetDeviceQueue(c->device, c->xfer_family, (uint32_t)i, &c->xfer_queues[i]);
  if (d->timeline_semaphore) {
    VkSemaphoreTypeCreateInfo sti = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                     .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
    VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &sti};
    for (int i = 0; i < c->nlanes; i++)
      VK_CHECK(c->vk.vkCreateSemaphore(c->device, &sci, NULL, &c->lanes[i].timeline));
    c->group_submit = true;
  }

  return nxvk_pipeline_cache_open(c); /* from the on-disk cache when it fits this driver */
}

static void read_test_faults(nxvk_ctx *c) {
  const char *env = getenv("NXVK_TEST_INJECT");
  if (!env) return;
  c->inject_leak = strstr(env, "leak") != NULL;
  c->inject_unlocked_submit = strstr(env, "unlocked_submit") != NULL;
  c->inject_import_fail = strstr(env, "import_fail") != NULL;
  c->inject_lane_fail = strstr(env, "lane_fail") != NULL;
  const char *b = strstr(env, "break_op:");
  if (b) {
    b += 9;
    size_t n = strcspn(b, ",");
    if (n >= sizeof c->inject_break_op) n = sizeof c->inject_break_op - 1;
    memcpy(c->inject_break_op, b, n);
  }
  const char *f = strstr(env, "fail_op:");
  if (f) {
    f += 8;
    size_t n = strcspn(f, ",");
    if (n >= sizeof c->inject_fail_op) n = sizeof c->inject_fail_op - 1;
    memcpy(c->inject_fail_op, f, n);
  }
}

bool nxvk_ctx_lost(nxvk_ctx *c) { return atomic_load(&c->lost); }
void nxvk_ctx_mark_lost(nxvk_ctx *c) { atomic_store(&c->lost, true); }

/* The device half of nxvk_ctx_open (src/ops/tuning.c adds the knobs). */
int nxvk_vk_ctx_open(const nxvk_ctx_opts *o, nxvk_ctx **out) {
  *out = NULL;
  const char *want = o && o->device ? o->device : getenv("NXVK_DEVICE");
  bool validate = o && o->validate;
  if (nxvk_env_flag("NXVK_VALIDATE")) validate = true;

  if (!(o && o->no_cache) && !nxvk_cache_disabled_by_env()) { /* too long: an error, not a cut */
    int crc = nxvk_cache_dir_check(o ? o->cache_dir : NULL);
    if (crc) return crc;
  }
  nxvk_ctx *c = calloc(1, sizeof *c);
  if (!c) return nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  read_test_faults(c);
  /* the on-disk caches: nothing is read or written when they are off */
  if (!(o && o->no_cache) && !nxvk_cache_disabled_by_env()) {
    if (o && o->cache_dir && *o->cache_dir) {
      size_t n = strlen(o->cache_dir) + 1;
      c->cache_dir = malloc(n);
      if (c->cache_dir) memcpy(c->cache_dir, o->cache_dir, n);
    } else {
      c->cache_dir = nxvk_cache_dir_default();
    }
  }
  pthread_mutex_init(&c->queue_lock, NULL);
  for (int i = 0; i < NXVK_MAX_LANES; i++) {
    pthread_mutex_init(&c->lanes[i].queue_lock, NULL);
    pthread_mutex_init(&c->lanes[i].submit_lock, NULL);
    pthread_cond_init(&c->lanes[i].submit_cond, NULL);
  }
  pthread_mutex_init(&c->kernel_lock, NULL);
  pthread_mutex_init(&c->rec_lock, NULL);
  pthread_mutex_init(&c->fusion_lock, NULL);
  pthread_mutex_init(&c->ew16_lock, NULL);
  pthread_mutex_init(&c->pool.lock, NULL);
  pthread_mutex_init(&c->xfer_lock, NULL);
  pthread_mutex_init(&c->host_lock, NULL);
  for (int i = 0; i < 4; i++) pthread_mutex_init(&c->xfer_qlock[i], NULL);
  c->pool.cap = (uint64_t)1 << 30; /* NXVK_POOL_CAP (src/ops/tuning.c) */

  int rc = nxvk_instance_acquire(validate, &c->inst);
  if (rc) {
    nxvk_ctx_close(c);
    return rc;
  }
  VkPhysicalDevice *pds = NULL;
  uint32_t n = 0;
  nxvk_device_info *infos = NULL;
  rc = nxvk_enumerate(c->inst, &pds, &n);
  if (rc == NXVK_OK) {
    infos = calloc(n, sizeof *infos);
    if (!infos) rc = nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  }
  uint32_t pick = 0;
  if (rc == NXVK_OK) {
    for (uint32_t i = 0; i < n; i++) nxvk_physical_info(c->inst, pds[i], (int)i, &infos[i]);
    rc = choose_device(infos, n, want, &pick);
  }
  if (rc == NXVK_OK) {
    c->physical = pds[pick];
    c->info = infos[pick];
    if (c->info.api_version_raw < VK_API_VERSION_1_1)
      rc = nxvk_seterr(NXVK_E_NO_DEVICE, "%s: Vulkan %s is too old (nxvk needs 1.1)",
                       c->info.name, c->info.api_version);
  }
  free(pds);
  free(infos);
  /* test-only (NXVK_TEST_INJECT=no_int64): the device as if it had no
   * shaderInt64, so i64 / u64 are refused, never computed */
  const char *inj = getenv("NXVK_TEST_INJECT");
  if (rc == NXVK_OK && inj && strstr(inj, "no_int64")) c->info.int64 = c->info.atomic_i64 = false;
  /* test-only (NXVK_TEST_INJECT=no_atomic_float): indexed_add's f32 path by
   * compare-and-swap, as on a device without VK_EXT_shader_atomic_float */
  if (rc == NXVK_OK && inj && strstr(inj, "no_atomic_float")) c->info.atomic_f32_add = false;
  /* test-only (NXVK_TEST_INJECT=f16_denorm_preserve): f16 kernels as on a
   * device that promises f16 subnormals (NXVK_F16_CVT's form without the
   * software subnormal path; lavapipe keeps them though it does not say so) */
  if (rc == NXVK_OK && inj && strstr(inj, "f16_denorm_preserve")) c->info.denorm_preserve_f16 = true;
  /* test-only (NXVK_TEST_INJECT=storage_range:BYTES): a smaller
   * maxStorageBufferRange, so the paths that split work to fit one (e.g.
   * indexed_put's owners, 4 bytes a target) run on small tensors */
  const char *sr = inj ? strstr(inj, "storage_range:") : NULL;
  if (rc == NXVK_OK && sr) {
    char num[32];
    size_t len = strcspn(sr + 14, ",");
    uint64_t v;
    snprintf(num, sizeof num, "%.*s", (int)(len < sizeof num ? len : sizeof num - 1), sr + 14);
    if (nxvk_parse_bytes(num, &v) == 0 && v >= 16 && v < c->info.max_storage_buffer_range)
      c->info.max_storage_buffer_range = v;
  }
  uint32_t family_queues = 0;
  if (rc == NXVK_OK) rc = find_compute_queue(c->physical, &c->queue_family, &family_queues);
  if (rc == NXVK_OK) {
    vkGetPhysicalDeviceMemoryProperties(c->physical, &c->mem_props);
    /* CPU and integrated devices share host memory: map it directly
     * (NXVK_STAGING, read with the other knobs, can turn it off) */
    c->host_visible_fast_path = strcmp(c->info.type, "cpu") == 0 || strcmp(c->info.type, "integrated") == 0;
    /* waits poll 200 us on GPUs, every waiting thread (submit.c;
     * NXVK_WAIT_SPIN_US and NXVK_WAIT_SPINNERS, src/ops/tuning.c: on an
     * H100 host of 16 cores, 4 pollers gave 29 505 ops/s from 16 threads,
     * all 16 gave 38 306) */
    c->spin_ns = strcmp(c->info.type, "cpu") != 0 ? 200000 : 0;
    /* memory.c's transfers (NXVK_XFER_*; measured on an H100, 256 MiB,
     * 2026-11-27: 4 MiB pieces 37.6 / 30.2 GB/s against 8 MiB's 29.8 /
     * 28.0 and 16 MiB's 25.6 / 23.8; streaming copies 32.5 / 37.1 against
     * memcpy's 29.8 / 28.0; at 8 MiB the lanes in 1 MiB pieces 14.4 /
     * 12.2 against one staging copy's 9.2 / 9.2) */
    c->xfer_piece = (size_t)4 << 20;
    /* 16 (no more than the cores): the H200 call of 2026-11-27 10:28, three
     * paired runs at 256 MiB, 16 threads 35.8 / 39.4 GB/s (medians)
     * against 8's 32.2 / 38.5, better in each pair; memcpy alone 57-63
     * against 38-47 */
    c->xfer_threads = 16;
    c->xfer_min = NXVK_XFER_MIN;
    c->xfer_stream = nxvk_xfer_can_stream();
    c->xfer_pipe = true; /* NXVK_XFER_PIPE=0: each piece one synchronous submission, as before */
    c->xfer_pinned = true;  /* pinned host memory: the device's copy alone (NXVK_XFER_PINNED) */
    c->xfer_pinned_split = 1;
    c->lazy_barriers = false; /* submit.c; NXVK_LAZY_BARRIERS=1 (off until a GPU run has checked it) */
    c->max_spinners = 1024;
    c->group_rounds = 1; /* submit.c; NXVK_GROUP_ROUNDS */
    /* lanes: one, or NXVK_QUEUES (src/ops/tuning.c checks the value; it
     * is needed here, before the device), on as many of the family's
     * queues (fewer queues: lanes share them, as on lavapipe's one) */
    /* default: 2 on GPUs with the queues (H100, 2026-11-27, bench
     * concurrency, ops/s from 16 / 100 threads: 1 lane 49 207 / 48 022,
     * 2 lanes 63 449 / 55 325, 4 50 738 / 29 503, 8 34 699 / 33 512) */
    const char *nq = getenv("NXVK_QUEUES");
    long want_q = nq && *nq ? strtol(nq, NULL, 10)
                            : strcmp(c->info.type, "cpu") != 0 && family_queues >= 2 ? 2 : 1;
    c->nlanes = want_q < 1 ? 1 : want_q > NXVK_MAX_LANES ? NXVK_MAX_LANES : (int)want_q;
    c->nqueues = c->nlanes < (int)family_queues ? c->nlanes : (int)family_queues;
    if (c->nqueues < 1) c->nqueues = 1;
    rc = device_create(c);
  }
  if (rc) {
    nxvk_ctx_close(c);
    return rc;
  }
  *out = c;
  return NXVK_OK;
}

void nxvk_ctx_close(nxvk_ctx *c) {
  if (!c) return;
  if (c->device) {
    c->vk.vkDeviceWaitIdle(c->device);
    if (c->ew16_tables_free) c->ew16_tables_free(c);
    nxvk_recs_destroy(c);
    nxvk_host_regions_destroy(c);
    nxvk_xfer_lanes_destroy(c);
    nxvk_kernels_destroy(c);
    nxvk_pool_trim(c);
    nxvk_pipeline_cache_save(c);
    if (c->pipeline_cache) c->vk.vkDestroyPipelineCache(c->device, c->pipeline_cache, NULL);
    for (int i = 0; i < c->nlanes; i++)
      if (c->lanes[i].timeline) c->vk.vkDestroySemaphore(c->device, c->lanes[i].timeline, NULL);
    c->vk.vkDestroyDevice(c->device, NULL);
  }
  nxvk_instance_release(c->inst);
  pthread_mutex_destroy(&c->queue_lock);
  for (int i = 0; i < NXVK_MAX_LANES; i++) {
    pthread_mutex_destroy(&c->lanes[i].queue_lock);
    pthread_mutex_destroy(&c->lanes[i].submit_lock);
    pthread_cond_destroy(&c->lanes[i].submit_cond);
    free(c->lanes[i].queued);
    free(c->lanes[i].queued_slot);
  }
  pthread_mutex_destroy(&c->kernel_lock);
  pthread_mutex_destroy(&c->rec_lock);
  pthread_mutex_destroy(&c->pool.lock);
  pthread_mutex_destroy(&c->xfer_lock);
  pthread_mutex_destroy(&c->host_lock);
  for (int i = 0; i < 4; i++) pthread_mutex_destroy(&c->xfer_qlock[i]);
  if (c->fusion_memo_free) c->fusion_memo_free(c->fusion_memo);
  pthread_mutex_destroy(&c->fusion_lock);
  pthread_mutex_destroy(&c->ew16_lock);
  free(c->cache_dir);
  free(c->tuning);
  free(c);
}

void nxvk_ctx_cache_info(nxvk_ctx *c, nxvk_cache_info *out) {
  memset(out, 0, sizeof *out);
  out->enabled = c->cache_dir != NULL;
  snprintf(out->dir, sizeof out->dir, "%s", c->cache_dir ? c->cache_dir : "");
  snprintf(out->pipeline_cache, sizeof out->pipeline_cache, "%s", c->pcache_status);
}

int nxvk_ctx_device_info(nxvk_ctx *c, nxvk_device_info *out) {
  nxvk_physical_info(c->inst, c->physical, c->info.index, out);
  return NXVK_OK;
}

const char *nxvk_dtype_missing(const nxvk_device_info *dev, nxvk_dtype d) {
  const nxvk_dtype_info *t = nxvk_dtype_info_of(d);
  if (!t) return "no such dtype";
  if ((t->needs & NXVK_NEEDS_F64) && !dev->f64) return "shaderFloat64";
  if ((t->needs & NXVK_NEEDS_INT64) && !dev->int64) return "shaderInt64";
  if ((t->needs & NXVK_NEEDS_16BIT) && !dev->storage_16bit) return "storageBuffer16BitAccess";
  if ((t->needs & NXVK_NEEDS_8BIT) && !dev->storage_8bit) return "storageBuffer8BitAccess";
  return NULL;
}

bool nxvk_ctx_supports(nxvk_ctx *c, nxvk_dtype d) { return nxvk_dtype_missing(&c->info, d) == NULL; }

void nxvk_ctx_stats(nxvk_ctx *c, nxvk_stats *o) {
  memset(o, 0, sizeof *o);
  o->live_tensors = atomic_load(&c->live_tensors);
  o->live_bytes = atomic_load(&c->live_bytes);
  o->live_buffers = atomic_load(&c->live_buffers);
  o->peak_bytes = atomic_load(&c->peak_bytes);
  pthread_mutex_lock(&c->pool.lock);
  o->pooled_bytes = c->pool.bytes;
  pthread_mutex_unlock(&c->pool.lock);
  o->buffers_created = atomic_load(&c->buffers_created);
  o->pipelines_created = atomic_load(&c->pipelines_created);
  o->submits = atomic_load(&c->submits);
  o->imported_bytes = atomic_load(&c->imported_bytes);
  o->import_failures = atomic_load(&c->import_failures);
  o->pinned_bytes = atomic_load(&c->pinned_bytes);
  o->validation_messages = atomic_load(&c->inst->validation_messages);
  o->recordings = atomic_load(&c->recordings);
  o->record_ns = atomic_load(&c->t_record);
  o->submit_ns = atomic_load(&c->t_submit);
  o->wait_ns = atomic_load(&c->t_wait);
  o->release_ns = atomic_load(&c->t_release);
  o->queue_submit_ns = atomic_load(&c->t_queue_submit);
}

void nxvk_ctx_last_validation(nxvk_ctx *c, char *buf, size_t len) {
  pthread_mutex_lock(&c->inst->msg_lock);
  snprintf(buf, len, "%s", c->inst->last_message);
  pthread_mutex_unlock(&c->inst->msg_lock);
}
