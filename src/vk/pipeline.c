/*
 * pipeline.c - compute pipelines from embedded SPIR-V with specialization
 * constants, or from SPIR-V made at run time (fused kernels, addressed by a
 * content key).  A kernel is built once per (code, constants) and kept for
 * the context's life, so the hot path creates no Vulkan objects once warm.
 * Pipelines go through the context's VkPipelineCache, which the on-disk
 * cache fills at open (cache.c).
 */
#include "vkcore.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The embedded kernels by name: a sorted index made once, searched by
 * halves (a linear strcmp over the ~250 names took ~1.3 us for the middle
 * one, twice a dispatch, on the 2-core CI machine). */
static const nxvk_spirv **spirv_sorted;
static size_t spirv_nsorted;
static pthread_once_t spirv_once = PTHREAD_ONCE_INIT;

static int spirv_cmp(const void *a, const void *b) {
  return strcmp((*(const nxvk_spirv *const *)a)->name, (*(const nxvk_spirv *const *)b)->name);
}

static void spirv_index(void) {
  const nxvk_spirv **v = malloc((nxvk_spirv_count ? nxvk_spirv_count : 1) * sizeof *v);
  if (!v) return; /* the linear search below serves */
  for (size_t i = 0; i < nxvk_spirv_count; i++) v[i] = &nxvk_spirv_table[i];
  qsort(v, nxvk_spirv_count, sizeof *v, spirv_cmp);
  spirv_sorted = v;
  spirv_nsorted = nxvk_spirv_count;
}

const nxvk_spirv *nxvk_spirv_find(const char *name) {
  pthread_once(&spirv_once, spirv_index);
  if (spirv_sorted) {
    size_t lo = 0, hi = spirv_nsorted;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      int c = strcmp(spirv_sorted[mid]->name, name);
      if (c == 0) return spirv_sorted[mid];
      if (c < 0) lo = mid + 1;
      else hi = mid;
    }
    return NULL;
  }
  for (size_t i = 0; i < nxvk_spirv_count; i++)
    if (strcmp(nxvk_spirv_table[i].name, name) == 0) return &nxvk_spirv_table[i];
  return NULL;
}

static bool kernel_matches(const nxvk_kernel *k, const nxvk_spirv *s, const char *key,
                           const uint32_t *spec, int nspec, int nbuffers) {
  return k->spirv == s && strcmp(k->key, key ? key : "") == 0 && k->nspec == nspec &&
         k->nbuffers == nbuffers && memcmp(k->spec, spec, (size_t)nspec * sizeof *spec) == 0;
}

static void kernel_destroy(nxvk_ctx *c, nxvk_kernel *k) {
  if (k->pipeline) c->vk.vkDestroyPipeline(c->device, k->pipeline, NULL);
  if (k->layout) c->vk.vkDestroyPipelineLayout(c->device, k->layout, NULL);
  if (k->set_layout) c->vk.vkDestroyDescriptorSetLayout(c->device, k->set_layout, NULL);
  free(k->stats);
  free(k);
}

/* "name=value, ..." of the driver's statistics for the compute executable
 * (VK_KHR_pipeline_executable_properties); NULL when it reports none. */
static char *capture_stats(nxvk_ctx *c, VkPipeline pipeline) {
  VkPipelineExecutableInfoKHR ei = {
      .sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR,
      .pipeline = pipeline,
      .executableIndex = 0,
  };
  VkPipelineExecutableStatisticKHR st[32];
  uint32_t n = (uint32_t)NXVK_ARRAY_LEN(st);
  for (uint32_t i = 0; i < n; i++)
    st[i] = (VkPipelineExecutableStatisticKHR){.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR};
  VkResult r = c->vk.vkGetPipelineExecutableStatisticsKHR(c->device, &ei, &n, st);
  if ((r != VK_SUCCESS && r != VK_INCOMPLETE) || n == 0) return NULL;
  char *out = calloc(1, 2048);
  if (!out) return NULL;
  size_t len = 0;
  for (uint32_t i = 0; i < n && len < 2000; i++) {
    const VkPipelineExecutableStatisticValueKHR *v = &st[i].value;
    char val[48];
    switch (st[i].format) {
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: snprintf(val, sizeof val, "%s", v->b32 ? "true" : "false"); break;
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: snprintf(val, sizeof val, "%lld", (long long)v->i64); break;
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: snprintf(val, sizeof val, "%llu", (unsigned long long)v->u64); break;
    default: snprintf(val, sizeof val, "%g", v->f64); break;
    }
    len += (size_t)snprintf(out + len, 2048 - len, "%s%s=%s", i ? ", " : "", st[i].name, val);
  }
  return out;
}

/* NXVK_KERNEL_IR=DIR (with NXVK_KERNEL_STATS=1): the driver's internal
 * representations of each kernel built (VK_KHR_pipeline_executable_properties;
 * whatever the driver gives: none, or text such as its assembly), one file
 * each, DIR/NAME-SPECS-INDEX.txt or .bin; appended to the statistics: how
 * many it gave and their sizes.  For reading what a compiler made of a
 * kernel on a machine without a profiler. */
static void capture_ir(nxvk_ctx *c, nxvk_kernel *k, VkPipeline pipeline, const char *dir) {
  VkPipelineExecutableInfoKHR ei = {
      .sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR,
      .pipeline = pipeline,
      .executableIndex = 0,
  };
  VkPipelineExecutableInternalRepresentationKHR ir[8];
  uint32_t n = (uint32_t)NXVK_ARRAY_LEN(ir);
  for (uint32_t i = 0; i < n; i++)
    ir[i] = (VkPipelineExecutableInternalRepresentationKHR){
        .sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INTERNAL_REPRESENTATION_KHR};
  VkResult r = c->vk.vkGetPipelineExecutableInternalRepresentationsKHR(c->device, &ei, &n, ir);
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) n = 0;
  char sum[400];
  size_t len = (size_t)snprintf(sum, sizeof sum, ", internal representations=%u", n);
  for (uint32_t i = 0; i < n; i++) {
    ir[i].pData = ir[i].dataSize ? malloc(ir[i].dataSize) : NULL;
    if (ir[i].dataSize && !ir[i].pData) ir[i].dataSize = 0;
  }
  if (n && c->vk.vkGetPipelineExecutableInternalRepresentationsKHR(c->device, &ei, &n, ir) != VK_SUCCESS) n = 0;
  for (uint32_t i = 0; i < n; i++) {
    char path[1024], specs[128] = "";
    size_t sl = 0;
    for (int j = 0; j < k->nspec && sl < sizeof specs - 12; j++)
      sl += (size_t)snprintf(specs + sl, sizeof specs - sl, "%s%u", j ? "_" : "", k->spec[j]);
    snprintf(path, sizeof path, "%.700s/%.47s-%s-%u.%s", dir,
             k->spirv ? k->spirv->name : k->rt_name[0] ? k->rt_name : "kernel", specs, i, ir[i].isText ? "txt" : "bin");
    FILE *f = fopen(path, "wb");
    size_t bytes = ir[i].dataSize;
    if (f && ir[i].pData && bytes) {
      if (ir[i].isText) bytes = strnlen(ir[i].pData, bytes); /* without the terminating zero */
      fwrite(ir[i].pData, 1, bytes, f);
    }
    if (f) fclose(f);
    if (len < sizeof sum - 100)
      len += (size_t)snprintf(sum + len, sizeof sum - len, "%s %.40s (%s, %zu bytes)", i ? ";" : ":", ir[i].name,
                              ir[i].isText ? "text" : "binary", bytes);
    free(ir[i].pData);
  }
  size_t old = k->stats ? strlen(k->stats) : 0;
  char *s = realloc(k->stats, old + len + 1);
  if (!s) return;
  memcpy(s + old, sum, len + 1);
  k->stats = s;
}

static int kernel_build(nxvk_ctx *c, nxvk_kernel *k, const uint32_t *code, size_t bytes) {
  VkDescriptorSetLayoutBinding binds[NXVK_MAX_BINDINGS];
  int nb = 1 + k->nbuffers;
  for (int i = 0; i < nb; i++)
    binds[i] = (VkDescriptorSetLayoutBinding){
        .binding = (uint32_t)i,
        .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
        .descriptorCount = 1,
        .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
    };
  VkDescriptorSetLayoutCreateInfo dl = {
      .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
      .bindingCount = (uint32_t)nb,
      .pBindings = binds,
  };
  VK_CHECK(c->vk.vkCreateDescriptorSetLayout(c->device, &dl, NULL, &k->set_layout));
  VkPushConstantRange pcr = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .offset = 0, .size = 16};
  VkPipelineLayoutCreateInfo pl = {
      .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
      .setLayoutCount = 1,
      .pSetLayouts = &k->set_layout,
      .pushConstantRangeCount = 1,
      .pPushConstantRanges = &pcr,
  };
  VK_CHECK(c->vk.vkCreatePipelineLayout(c->device, &pl, NULL, &k->layout));

  VkShaderModuleCreateInfo smci = {
      .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
      .codeSize = bytes,
      .pCode = code,
  };
  VkShaderModule module;
  VK_CHECK(c->vk.vkCreateShaderModule(c->device, &smci, NULL, &module));
  VkSpecializationMapEntry entries[NXVK_MAX_SPEC];
  for (int i = 0; i < k->nspec; i++)
    entries[i] = (VkSpecializationMapEntry){
        .constantID = (uint32_t)i, .offset = (uint32_t)(i * 4), .size = 4};
  VkSpecializationInfo si = {
      .mapEntryCount = (uint32_t)k->nspec,
      .pMapEntries = entries,
      .dataSize = (size_t)k->nspec * 4,
      .pData = k->spec,
  };
  const char *ir_dir = getenv("NXVK_KERNEL_IR");
  if (ir_dir && !*ir_dir) ir_dir = NULL;
  VkComputePipelineCreateInfo cpci = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .stage =
          {
              .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
              .stage = VK_SHADER_STAGE_COMPUTE_BIT,
              .module = module,
              .pName = "main",
              .pSpecializationInfo = &si,
          },
      .flags = c->kernel_stats ? VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR |
                                     (ir_dir ? VK_PIPELINE_CREATE_CAPTURE_INTERNAL_REPRESENTATIONS_BIT_KHR : 0)
                               : 0,
      .layout = k->layout,
  };
  VkResult r =
      c->vk.vkCreateComputePipelines(c->device, c->pipeline_cache, 1, &cpci, NULL, &k->pipeline);
  c->vk.vkDestroyShaderModule(c->device, module, NULL);
  if (r != VK_SUCCESS) return nxvk_vk_fail(r, "vkCreateComputePipelines", __FILE__, __LINE__);
  atomic_fetch_add(&c->pipelines_created, 1);
  if (c->kernel_stats) k->stats = capture_stats(c, k->pipeline);
  if (c->kernel_stats && ir_dir) capture_ir(c, k, k->pipeline, ir_dir);
  return NXVK_OK;
}

/* Find or build under kernel_lock.  code NULL: find only. */
static int kernel_lookup(nxvk_ctx *c, const nxvk_spirv *s, const char *key, const uint32_t *code,
                         size_t bytes, const uint32_t *spec, int nspec, int nbuffers,
                         nxvk_kernel **out) {
  pthread_mutex_lock(&c->kernel_lock);
  nxvk_kernel *k;
  for (k = c->kernels; k; k = k->next)
    if (kernel_matches(k, s, key, spec, nspec, nbuffers)) break;
  int rc = NXVK_OK;
  if (!k && code) {
    k = calloc(1, sizeof *k);
    if (!k) {
      rc = nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
    } else {
      k->spirv = s;
      if (key) snprintf(k->key, sizeof k->key, "%s", key);
      k->nspec = nspec;
      k->nbuffers = nbuffers;
      k->wg_size = spec[0];
      memcpy(k->spec, spec, (size_t)nspec * sizeof *spec);
      rc = kernel_build(c, k, code, bytes);
      if (rc) {
        kernel_destroy(c, k);
        k = NULL;
      } else {
        k->next = c->kernels;
        c->kernels = k;
      }
    }
  }
  pthread_mutex_unlock(&c->kernel_lock);
  *out = k;
  return rc;
}

int nxvk_kernel_get(nxvk_ctx *c, const char *spirv_name, const uint32_t *spec, int nspec,
                    int nbuffers, nxvk_kernel **out) {
  *out = NULL;
  const nxvk_spirv *s = nxvk_spirv_find(spirv_name);
  if (!s) return nxvk_seterr(NXVK_E_UNSUPPORTED, "no embedded shader named '%s'", spirv_name);
  if (nspec < 1 || nspec > NXVK_MAX_SPEC || nbuffers + 1 > NXVK_MAX_BINDINGS)
    return nxvk_seterr(NXVK_E_BAD_REQUEST, "kernel %s: bad constants or bindings", spirv_name);
  return kernel_lookup(c, s, NULL, s->code, s->size, spec, nspec, nbuffers, out);
}

int nxvk_kernel_get_spirv(nxvk_ctx *c, const char *key, const uint32_t *words, size_t bytes,
                          const uint32_t *spec, int nspec, int nbuffers, nxvk_kernel **out) {
  *out = NULL;
  if (!key || !key[0] || strlen(key) >= sizeof((nxvk_kernel *)0)->key)
    return nxvk_seterr(NXVK_E_BAD_REQUEST, "run-time kernel: bad key");
  if (nspec < 1 || nspec > NXVK_MAX_SPEC || nbuffers + 1 > NXVK_MAX_BINDINGS)
    return nxvk_seterr(NXVK_E_BAD_REQUEST, "kernel %.16s: bad constants or bindings", key);
  if (words && (bytes < 20 || bytes % 4 != 0 || words[0] != 0x07230203u))
    return nxvk_seterr(NXVK_E_BAD_REQUEST, "kernel %.16s: not SPIR-V", key);
  return kernel_lookup(c, NULL, key, words, bytes, spec, nspec, nbuffers, out);
}

int nxvk_kernel_stats_report(nxvk_ctx *c, char **text) {
  *text = NULL;
  size_t cap = 4096, len = 0;
  char *out = malloc(cap);
  if (!out) return nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  out[0] = 0;
  pthread_mutex_lock(&c->kernel_lock);
  for (nxvk_kernel *k = c->kernels; k; k = k->next) {
    char line[2400];
    int n = snprintf(line, sizeof line, "%.47s", k->spirv ? k->spirv->name : k->rt_name[0] ? k->rt_name : k->key);
    for (int i = 0; i < k->nspec; i++)
      n += snprintf(line + n, sizeof line - (size_t)n, "%s%u", i ? "," : " [", k->spec[i]);
    snprintf(line + n, sizeof line - (size_t)n, "]: %s\n", k->stats ? k->stats : "no statistics");
    size_t ln = strlen(line);
    if (len + ln + 1 > cap) {
      char *p = realloc(out, cap = 2 * (len + ln + 1));
      if (!p) break;
      out = p;
    }
    memcpy(out + len, line, ln + 1);
    len += ln;
  }
  pthread_mutex_unlock(&c->kernel_lock);
  *text = out;
  return NXVK_OK;
}

void nxvk_kernels_destroy(nxvk_ctx *c) {
  nxvk_kernel *k = c->kernels;
  while (k) {
    nxvk_kernel *next = k->next;
    kernel_destroy(c, k);
    k = next;
  }
  c->kernels = NULL;
}
