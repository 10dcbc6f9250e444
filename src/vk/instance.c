/*
 * instance.c - the Vulkan loader (through volk), the instance with optional
 * validation, and what each physical device says about itself.
 */
#include "vkcore.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t instance_lock = PTHREAD_MUTEX_INITIALIZER;
static nxvk_instance *shared_instance;
static int shared_refs;
static bool volk_ready;

int nxvk_vk_fail(VkResult r, const char *call, const char *file, int line) {
  int code = NXVK_E_VULKAN;
  const char *what = "error";
  switch (r) {
  case VK_ERROR_DEVICE_LOST: code = NXVK_E_DEVICE_LOST; what = "VK_ERROR_DEVICE_LOST"; break;
  case VK_ERROR_OUT_OF_DEVICE_MEMORY: code = NXVK_E_ALLOC_FAILED; what = "VK_ERROR_OUT_OF_DEVICE_MEMORY"; break;
  case VK_ERROR_OUT_OF_HOST_MEMORY: code = NXVK_E_ALLOC_FAILED; what = "VK_ERROR_OUT_OF_HOST_MEMORY"; break;
  case VK_ERROR_TOO_MANY_OBJECTS: code = NXVK_E_ALLOC_FAILED; what = "VK_ERROR_TOO_MANY_OBJECTS"; break;
  case VK_ERROR_INITIALIZATION_FAILED: what = "VK_ERROR_INITIALIZATION_FAILED"; break;
  case VK_ERROR_EXTENSION_NOT_PRESENT: what = "VK_ERROR_EXTENSION_NOT_PRESENT"; break;
  case VK_ERROR_FEATURE_NOT_PRESENT: what = "VK_ERROR_FEATURE_NOT_PRESENT"; break;
  case VK_ERROR_LAYER_NOT_PRESENT: what = "VK_ERROR_LAYER_NOT_PRESENT"; break;
  case VK_ERROR_INCOMPATIBLE_DRIVER: code = NXVK_E_NO_DEVICE; what = "VK_ERROR_INCOMPATIBLE_DRIVER"; break;
  case VK_TIMEOUT: what = "VK_TIMEOUT"; break;
  default: break;
  }
  const char *base = strrchr(file, '/');
  return nxvk_seterr(code, "%s (%d) from %s at %s:%d", what, (int)r, call, base ? base + 1 : file,
                     line);
}

static VKAPI_ATTR VkBool32 VKAPI_CALL on_validation(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT type,
    const VkDebugUtilsMessengerCallbackDataEXT *data, void *user) {
  (void)type;
  nxvk_instance *inst = user;
  if (severity < VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) return VK_FALSE;
  atomic_fetch_add(&inst->validation_messages, 1);
  pthread_mutex_lock(&inst->msg_lock);
  snprintf(inst->last_message, sizeof inst->last_message, "%s",
           data && data->pMessage ? data->pMessage : "(no message)");
  pthread_mutex_unlock(&inst->msg_lock);
  return VK_FALSE;
}

static bool layer_present(const char *name) {
  uint32_t n = 0;
  if (vkEnumerateInstanceLayerProperties(&n, NULL) != VK_SUCCESS || n == 0) return false;
  VkLayerProperties *p = calloc(n, sizeof *p);
  bool found = false;
  if (p && vkEnumerateInstanceLayerProperties(&n, p) == VK_SUCCESS)
    for (uint32_t i = 0; i < n && !found; i++) found = strcmp(p[i].layerName, name) == 0;
  free(p);
  return found;
}

static bool instance_ext_present(const char *name) {
  uint32_t n = 0;
  if (vkEnumerateInstanceExtensionProperties(NULL, &n, NULL) != VK_SUCCESS) return false;
  VkExtensionProperties *p = calloc(n ? n : 1, sizeof *p);
  bool found = false;
  if (p && vkEnumerateInstanceExtensionProperties(NULL, &n, p) == VK_SUCCESS)
    for (uint32_t i = 0; i < n && !found; i++) found = strcmp(p[i].extensionName, name) == 0;
  free(p);
  return found;
}

/* Why the loader found no driver, as one line a user can act on: which
 * variable chose the driver manifests (and whether that file is there), or
 * where the loader looked, and which package gives a CPU driver. */
int nxvk_no_driver_error(const char *what) {
  static const char *const vars[] = {"VK_DRIVER_FILES", "VK_ICD_FILENAMES"};
  char where[1200] = "";
  for (size_t i = 0; i < sizeof vars / sizeof vars[0] && !where[0]; i++) {
    const char *v = getenv(vars[i]);
    if (!v || !*v) continue;
    char first[512];
    size_t n = strcspn(v, ":");
    snprintf(first, sizeof first, "%.*s", (int)(n < sizeof first ? n : sizeof first - 1), v);
    bool there = access(first, R_OK) == 0;
    snprintf(where, sizeof where, "%s=%s %s; unset it or point it at a driver manifest such as "
             "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json", vars[i], v,
             there ? "names a driver that did not load" : "names no readable file");
  }
  if (!where[0])
    snprintf(where, sizeof where,
             "VK_DRIVER_FILES and VK_ICD_FILENAMES are not set, and no driver manifest in "
             "/usr/share/vulkan/icd.d or /etc/vulkan/icd.d loaded");
  return nxvk_seterr(NXVK_E_NO_DEVICE, "%s (%s); for a CPU driver install mesa-vulkan-drivers "
                     "(Debian, Ubuntu, Fedora)", what, where);
}

static int instance_create(bool validate, nxvk_instance *inst) {
  const char *layers[1];
  const char *exts[4];
  uint32_t nlayers = 0, nexts = 0;
  bool debug_utils = instance_ext_present(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  if (validate) {
    if (!layer_present("VK_LAYER_KHRONOS_validation"))
      return nxvk_seterr(NXVK_E_UNSUPPORTED,
                         "validation requested but VK_LAYER_KHRONOS_validation is not installed "
                         "(Debian: vulkan-validationlayers)");
    layers[nlayers++] = "VK_LAYER_KHRONOS_validation";
    if (debug_utils) exts[nexts++] = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
  }
  /* MoltenVK and other portability drivers are enumerated only on request. */
  VkInstanceCreateFlags flags = 0;
  if (instance_ext_present("VK_KHR_portability_enumeration")) {
    exts[nexts++] = "VK_KHR_portability_enumeration";
    flags |= 0x00000001; /* VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR */
  }
  uint32_t api = VK_API_VERSION_1_0;
  if (vkEnumerateInstanceVersion) vkEnumerateInstanceVersion(&api);
  VkApplicationInfo app = {
      .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
      .pApplicationName = "nxvk",
      .applicationVersion = 1,
      .pEngineName = "nxvk",
      .apiVersion = api >= VK_API_VERSION_1_2 ? VK_API_VERSION_1_2 : VK_API_VERSION_1_1,
  };
  /* Report every error and warning, including GPU-side ones via callback. */
  VkDebugUtilsMessengerCreateInfoEXT dbg = {
      .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
      .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                         VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
      .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
      .pfnUserCallback = on_validation,
      .pUserData = inst,
  };
  VkInstanceCreateInfo ci = {
      .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
      .pNext = validate && debug_utils ? &dbg : NULL,
      .flags = flags,
      .pApplicationInfo = &app,
      .enabledLayerCount = nlayers,
      .ppEnabledLayerNames = layers,
      .enabledExtensionCount = nexts,
      .ppEnabledExtensionNames = exts,
  };
  VkResult cr = vkCreateInstance(&ci, NULL, &inst->instance);
  /* the loader says INCOMPATIBLE_DRIVER when it found no driver at all */
  if (cr == VK_ERROR_INCOMPATIBLE_DRIVER) return nxvk_no_driver_error("no Vulkan driver found");
  if (cr != VK_SUCCESS) return nxvk_vk_fail(cr, "vkCreateInstance", __FILE__, __LINE__);
  volkLoadInstanceOnly(inst->instance);
  inst->validate = validate;
  if (validate && debug_utils) {
    VkResult r = vkCreateDebugUtilsMessengerEXT(inst->instance, &dbg, NULL, &inst->messenger);
    if (r != VK_SUCCESS) {
      vkDestroyInstance(inst->instance, NULL);
      return nxvk_vk_fail(r, "vkCreateDebugUtilsMessengerEXT", __FILE__, __LINE__);
    }
  }
  return NXVK_OK;
}

int nxvk_instance_acquire(bool validate, nxvk_instance **out) {
  int rc = NXVK_OK;
  pthread_mutex_lock(&instance_lock);
  if (!volk_ready) {
    if (volkInitialize() != VK_SUCCESS) {
      rc = nxvk_seterr(NXVK_E_NO_LOADER,
                       "no Vulkan loader found (libvulkan.so.1; Debian: libvulkan1)");
      goto done;
    }
    volk_ready = true;
  }
  /* One instance per process; a request for validation upgrades none that
   * exists without it, so callers ask consistently (the CLI decides once). */
  if (shared_instance && shared_instance->validate != validate) {
    rc = nxvk_seterr(NXVK_E_BAD_REQUEST, "Vulkan instance already open with validation %s",
                     shared_instance->validate ? "on" : "off");
    goto done;
  }
  if (!shared_instance) {
    nxvk_instance *inst = calloc(1, sizeof *inst);
    if (!inst) {
      rc = nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
      goto done;
    }
    pthread_mutex_init(&inst->msg_lock, NULL);
    rc = instance_create(validate, inst);
    if (rc) {
      pthread_mutex_destroy(&inst->msg_lock);
      free(inst);
      goto done;
    }
    shared_instance = inst;
  }
  shared_refs++;
  *out = shared_instance;
done:
  pthread_mutex_unlock(&instance_lock);
  return rc;
}

void nxvk_instance_release(nxvk_instance *inst) {
  if (!inst) return;
  pthread_mutex_lock(&instance_lock);
  if (--shared_refs == 0) {
    if (inst->messenger) vkDestroyDebugUtilsMessengerEXT(inst->instance, inst->messenger, NULL);
    vkDestroyInstance(inst->instance, NULL);
    pthread_mutex_destroy(&inst->msg_lock);
    free(inst);
    shared_instance = NULL;
  }
  pthread_mutex_unlock(&instance_lock);
}

/* ---- device description ---- */

static const char *vendor_name(uint32_t id) {
  switch (id) {
  case 0x10DE: return "NVIDIA";
  case 0x1002: return "AMD";
  case 0x8086: return "Intel";
  case 0x13B5: return "ARM";
  case 0x5143: return "Qualcomm";
  case 0x106B: return "Apple";
  case 0x1010: return "ImgTec";
  case 0x10005: return "Mesa";
  default: return "unknown";
  }
}

static const char *type_name(VkPhysicalDeviceType t) {
  switch (t) {
  case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
  case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
  case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
  case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
  default: return "other";
  }
}

/* NVIDIA packs 10.8.8.6 bits; Intel on Windows 18.14; everyone else uses
 * the Vulkan version macros. */
static void decode_driver_version(uint32_t vendor, uint32_t v, char *buf, size_t len) {
  if (vendor == 0x10DE)
    snprintf(buf, len, "%u.%u.%u.%u", v >> 22, (v >> 14) & 0xff, (v >> 6) & 0xff, v & 0x3f);
  else
    snprintf(buf, len, "%u.%u.%u", VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v),
             VK_API_VERSION_PATCH(v));
}

static bool device_ext_present(VkPhysicalDevice pd, const char *name) {
  uint32_t n = 0;
  if (vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL) != VK_SUCCESS) return false;
  VkExtensionProperties *p = calloc(n ? n : 1, sizeof *p);
  bool found = false;
  if (p && vkEnumerateDeviceExtensionProperties(pd, NULL, &n, p) == VK_SUCCESS)
    for (uint32_t i = 0; i < n && !found; i++) found = strcmp(p[i].extensionName, name) == 0;
  free(p);
  return found;
}

bool nxvk_device_ext_present(VkPhysicalDevice pd, const char *name) {
  return device_ext_present(pd, name);
}

/* VK_NV_cooperative_matrix, unless NXVK_TEST_INJECT has no_nv_coopmat
 * (test-only: the device as one with the KHR extension only, as AMD's, Intel's
 * and Mesa's are, so NVIDIA can check that form) */
static bool nv_coopmat_present(VkPhysicalDevice pd) {
  const char *inj = getenv("NXVK_TEST_INJECT");
  return !(inj && strstr(inj, "no_nv_coopmat")) && device_ext_present(pd, "VK_NV_cooperative_matrix");
}

static const char *coop_type_name(VkComponentTypeNV t) {
  switch (t) {
  case VK_COMPONENT_TYPE_FLOAT16_NV: return "f16";
  case VK_COMPONENT_TYPE_FLOAT32_NV: return "f32";
  case VK_COMPONENT_TYPE_FLOAT64_NV: return "f64";
  case VK_COMPONENT_TYPE_SINT8_NV: return "i8";
  case VK_COMPONENT_TYPE_SINT16_NV: return "i16";
  case VK_COMPONENT_TYPE_SINT32_NV: return "i32";
  case VK_COMPONENT_TYPE_SINT64_NV: return "i64";
  case VK_COMPONENT_TYPE_UINT8_NV: return "u8";
  case VK_COMPONENT_TYPE_UINT16_NV: return "u16";
  case VK_COMPONENT_TYPE_UINT32_NV: return "u32";
  case VK_COMPONENT_TYPE_UINT64_NV: return "u64";
  default: return "?";
  }
}

/* The VK_NV_cooperative_matrix configurations the device lists, written to
 * o->coop_shapes (a user bringing up a GPU wants to know which types its
 * matrix units take: f64, for one) and the f16 and s8 ones to
 * o->coop_f16_shapes and o->coop_s8_shapes; returns whether one the coopmat
 * dot kernel can use is among them: A and B f16, C and D f32, subgroup
 * scope, sides multiples of 8. */
static bool coop_shapes_list(VkPhysicalDevice pd, nxvk_device_info *o) {
  uint32_t n = 0;
  if (vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(pd, &n, NULL) != VK_SUCCESS || n == 0) return false;
  VkCooperativeMatrixPropertiesNV *p = calloc(n, sizeof *p);
  if (!p) return false;
  for (uint32_t i = 0; i < n; i++) p[i].sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV;
  bool found = false;
  size_t at = 0, cap = sizeof o->coop_shapes;
  if (vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(pd, &n, p) >= VK_SUCCESS)
    for (uint32_t i = 0; i < n; i++) {
      bool sub = p[i].scope == VK_SCOPE_SUBGROUP_NV;
      bool f16 = sub && p[i].AType == VK_COMPONENT_TYPE_FLOAT16_NV && p[i].BType == VK_COMPONENT_TYPE_FLOAT16_NV &&
                 p[i].CType == VK_COMPONENT_TYPE_FLOAT32_NV && p[i].DType == VK_COMPONENT_TYPE_FLOAT32_NV;
      bool s8 = sub && p[i].AType == VK_COMPONENT_TYPE_SINT8_NV && p[i].BType == VK_COMPONENT_TYPE_SINT8_NV &&
                p[i].CType == VK_COMPONENT_TYPE_SINT32_NV && p[i].DType == VK_COMPONENT_TYPE_SINT32_NV;
      uint32_t(*list)[3] = f16 ? o->coop_f16_shapes : s8 ? o->coop_s8_shapes : NULL;
      int *count = f16 ? &o->coop_f16_nshapes : &o->coop_s8_nshapes;
      if (list && *count < 8) {
        list[*count][0] = p[i].MSize;
        list[*count][1] = p[i].NSize;
        list[*count][2] = p[i].KSize;
        ++*count;
      }
      /* the coopmat kernel takes fragments whose sides are multiples of 8
       * (16-byte rows of f16 in shared memory) */
      found |= f16 && p[i].MSize % 8 == 0 && p[i].NSize % 8 == 0 && p[i].KSize % 8 == 0 && p[i].MSize &&
               p[i].NSize && p[i].KSize;
      if (at < cap) {
        int w = snprintf(o->coop_shapes + at, cap - at, "%s%s x %s + %s -> %s %ux%ux%u%s", at ? ", " : "",
                         coop_type_name(p[i].AType), coop_type_name(p[i].BType), coop_type_name(p[i].CType),
                         coop_type_name(p[i].DType), p[i].MSize, p[i].NSize, p[i].KSize,
                         p[i].scope == VK_SCOPE_SUBGROUP_NV ? "" : " (not subgroup scope)");
        at = w < 0 ? cap : at + (size_t)w;
      }
    }
  free(p);
  return found;
}

/* VK_KHR_cooperative_matrix's list: its bf16 x bf16 + f32 -> f32 subgroup
 * configurations to o->coop_bf16_shapes, and those with a type the NV list
 * cannot name (bf16, fp8) added to o->coop_shapes marked "(KHR)" (every
 * one, and the f16 x f16 + f32 -> f32 ones to o->coop_f16_shapes, where the
 * NV list gave none: a device with the KHR extension only); returns
 * whether one the bf16 coopmat kernel can use is among them (sides multiples
 * of 8, as for f16), and in *f16 whether an f16 x f16 + f32 -> f32 one is. */
static bool coop_khr_list(nxvk_instance *inst, VkPhysicalDevice pd, nxvk_device_info *o, bool *f16) {
  typedef VkResult(VKAPI_PTR * list_fn)(VkPhysicalDevice, uint32_t *, nxvk_coopmat_properties_khr *);
  list_fn list = (list_fn)vkGetInstanceProcAddr(inst->instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR");
  uint32_t n = 0;
  if (!list || list(pd, &n, NULL) != VK_SUCCESS || n == 0) return false;
  nxvk_coopmat_properties_khr *p = calloc(n, sizeof *p);
  if (!p) return false;
  for (uint32_t i = 0; i < n; i++) p[i].sType = NXVK_STYPE_COOPMAT_PROPERTIES_KHR;
  bool found = false, khr_f16 = false, nv_listed = o->coop_f16_nshapes > 0 || o->coop_s8_nshapes > 0;
  size_t at = strlen(o->coop_shapes), cap = sizeof o->coop_shapes;
  if (list(pd, &n, p) >= VK_SUCCESS)
    for (uint32_t i = 0; i < n; i++) {
      bool sub = p[i].scope == VK_SCOPE_SUBGROUP_NV;
      bool bf16 = sub && p[i].AType == NXVK_COMPONENT_BF16_KHR && p[i].BType == NXVK_COMPONENT_BF16_KHR &&
                  p[i].CType == VK_COMPONENT_TYPE_FLOAT32_NV && p[i].ResultType == VK_COMPONENT_TYPE_FLOAT32_NV;
      bool is_f16 = sub && p[i].AType == VK_COMPONENT_TYPE_FLOAT16_NV && p[i].BType == VK_COMPONENT_TYPE_FLOAT16_NV &&
                    p[i].CType == VK_COMPONENT_TYPE_FLOAT32_NV && p[i].ResultType == VK_COMPONENT_TYPE_FLOAT32_NV;
      khr_f16 |= is_f16 && p[i].MSize % 8 == 0 && p[i].NSize % 8 == 0 && p[i].KSize % 8 == 0 && p[i].MSize;
      if (is_f16 && !nv_listed && o->coop_f16_nshapes < 8) {
        uint32_t *s = o->coop_f16_shapes[o->coop_f16_nshapes++];
        s[0] = p[i].MSize, s[1] = p[i].NSize, s[2] = p[i].KSize;
      }
      if (bf16 && o->coop_bf16_nshapes < 8) {
        uint32_t *s = o->coop_bf16_shapes[o->coop_bf16_nshapes++];
        s[0] = p[i].MSize, s[1] = p[i].NSize, s[2] = p[i].KSize;
      }
      found |= bf16 && p[i].MSize % 8 == 0 && p[i].NSize % 8 == 0 && p[i].KSize % 8 == 0 && p[i].MSize &&
               p[i].NSize && p[i].KSize;
      const int32_t t[4] = {p[i].AType, p[i].BType, p[i].CType, p[i].ResultType};
      const char *name[4];
      bool new_type = false;
      for (int k = 0; k < 4; k++) {
        new_type |= t[k] >= 1000000000;
        name[k] = t[k] == NXVK_COMPONENT_BF16_KHR   ? "bf16"
                  : t[k] == NXVK_COMPONENT_E4M3_EXT ? "e4m3"
                  : t[k] == NXVK_COMPONENT_E5M2_EXT ? "e5m2"
                                                    : coop_type_name((VkComponentTypeNV)t[k]);
      }
      if ((new_type || !nv_listed) && at < cap) {
        int w = snprintf(o->coop_shapes + at, cap - at, "%s%s x %s + %s -> %s %ux%ux%u (KHR)%s", at ? ", " : "",
                         name[0], name[1], name[2], name[3], p[i].MSize, p[i].NSize, p[i].KSize,
                         sub ? "" : " (not subgroup scope)");
        at = w < 0 ? cap : at + (size_t)w;
      }
    }
  free(p);
  *f16 = khr_f16;
  return found;
}

static const char *driver_id_name(uint32_t id) {
  static const char *const names[] = {
      "", "AMD_PROPRIETARY", "AMD_OPEN_SOURCE", "MESA_RADV", "NVIDIA_PROPRIETARY",
      "INTEL_PROPRIETARY_WINDOWS", "INTEL_OPEN_SOURCE_MESA", "IMAGINATION_PROPRIETARY",
      "QUALCOMM_PROPRIETARY", "ARM_PROPRIETARY", "GOOGLE_SWIFTSHADER", "GGP_PROPRIETARY",
      "BROADCOM_PROPRIETARY", "MESA_LLVMPIPE", "MOLTENVK", "COREAVI_PROPRIETARY", "JUICE_PROPRIETARY",
      "VERISILICON_PROPRIETARY", "MESA_TURNIP", "MESA_V3DV", "MESA_PANVK", "SAMSUNG_PROPRIETARY",
      "MESA_VENUS", "MESA_DOZEN", "MESA_NVK", "IMAGINATION_OPEN_SOURCE_MESA", "MESA_HONEYKRISP"};
  return id < sizeof names / sizeof names[0] ? names[id] : "unknown";
}

/* Queue families, memory types and the extension list: what vulkaninfo
 * shows that matters for compute bring-up. */
static void physical_lists(VkPhysicalDevice pd, nxvk_device_info *o) {
  uint32_t nq = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, NULL);
  VkQueueFamilyProperties *qf = calloc(nq ? nq : 1, sizeof *qf);
  if (qf) {
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, qf);
    o->queue_family_count = (int)(nq < 16 ? nq : 16);
    for (int i = 0; i < o->queue_family_count; i++) {
      o->queue_families[i].flags = qf[i].queueFlags;
      o->queue_families[i].count = qf[i].queueCount;
      o->queue_families[i].timestamp_valid_bits = qf[i].timestampValidBits;
    }
    free(qf);
  }
  VkPhysicalDeviceMemoryProperties mp;
  vkGetPhysicalDeviceMemoryProperties(pd, &mp);
  o->memory_type_count = (int)(mp.memoryTypeCount < 32 ? mp.memoryTypeCount : 32);
  for (int i = 0; i < o->memory_type_count; i++) {
    o->memory_types[i].flags = mp.memoryTypes[i].propertyFlags;
    o->memory_types[i].heap = mp.memoryTypes[i].heapIndex;
  }
  uint32_t n = 0;
  if (vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL) != VK_SUCCESS) return;
  VkExtensionProperties *p = calloc(n ? n : 1, sizeof *p);
  if (p && vkEnumerateDeviceExtensionProperties(pd, NULL, &n, p) >= VK_SUCCESS) {
    size_t at = 0, cap = sizeof o->extensions;
    for (uint32_t i = 0; i < n; i++) {
      size_t len = strlen(p[i].extensionName);
      if (at + len + 2 > cap) break; /* the list is cut, never a name */
      memcpy(o->extensions + at, p[i].extensionName, len);
      at += len;
      o->extensions[at++] = ' ';
      o->extension_count++;
    }
    o->extensions[at ? at - 1 : 0] = '\0';
  }
  free(p);
}

void nxvk_physical_info(nxvk_instance *inst, VkPhysicalDevice pd, int index,
                        nxvk_device_info *o) {
  memset(o, 0, sizeof *o);
  o->index = index;

  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(pd, &props);
  bool v11 = props.apiVersion >= VK_API_VERSION_1_1;
  bool v12 = props.apiVersion >= VK_API_VERSION_1_2;

  VkPhysicalDeviceDriverProperties drv = {.sType =
                                              VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceSubgroupProperties sub = {.sType =
                                                VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceSubgroupSizeControlProperties subctl = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
  VkPhysicalDeviceFloatControlsProperties fc = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES};
  VkPhysicalDeviceMaintenance3Properties m3 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
  bool has_subctl = device_ext_present(pd, "VK_EXT_subgroup_size_control") ||
                    props.apiVersion >= VK_API_VERSION_1_3;
  o->float_controls = v12 || device_ext_present(pd, "VK_KHR_shader_float_controls");
  bool has_driver_props = v12 || device_ext_present(pd, "VK_KHR_driver_properties");
  /* how many SMs / CUs: only vendor extensions say; kernels size their grids by it */
  VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sm = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
  VkPhysicalDeviceShaderCorePropertiesAMD amd = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_PROPERTIES_AMD};
  bool has_sm = device_ext_present(pd, "VK_NV_shader_sm_builtins");
  bool has_amd = device_ext_present(pd, "VK_AMD_shader_core_properties");
  VkPhysicalDeviceIDProperties ids = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};

  if (v11) {
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    void **tail = &p2.pNext;
#define CHAIN(s) do { *tail = &(s); tail = &(s).pNext; } while (0)
    CHAIN(sub);
    CHAIN(m3);
    CHAIN(ids);
    if (has_driver_props) CHAIN(drv);
    if (has_subctl) CHAIN(subctl);
    if (o->float_controls) CHAIN(fc);
    if (has_sm) CHAIN(sm);
    if (has_amd) CHAIN(amd);
#undef CHAIN
    vkGetPhysicalDeviceProperties2(pd, &p2);
  }

  snprintf(o->name, sizeof o->name, "%s", props.deviceName);
  o->vendor_id = props.vendorID;
  o->device_id = props.deviceID;
  o->vendor = vendor_name(props.vendorID);
  o->type = type_name(props.deviceType);
  o->driver_version_raw = props.driverVersion;
  decode_driver_version(props.vendorID, props.driverVersion, o->driver_version,
                        sizeof o->driver_version);
  o->api_version_raw = props.apiVersion;
  snprintf(o->api_version, sizeof o->api_version, "%u.%u.%u",
           VK_API_VERSION_MAJOR(props.apiVersion), VK_API_VERSION_MINOR(props.apiVersion),
           VK_API_VERSION_PATCH(props.apiVersion));
  memcpy(o->pipeline_cache_uuid, props.pipelineCacheUUID, 16);
  o->driver_id_name = "";
  if (has_driver_props) {
    snprintf(o->driver_name, sizeof o->driver_name, "%s", drv.driverName);
    snprintf(o->driver_info, sizeof o->driver_info, "%s", drv.driverInfo);
    o->driver_id = (uint32_t)drv.driverID;
    o->driver_id_name = drv.driverID ? driver_id_name((uint32_t)drv.driverID) : "";
    const VkConformanceVersion *cv = &drv.conformanceVersion;
    if (cv->major || cv->minor || cv->subminor || cv->patch)
      snprintf(o->conformance_version, sizeof o->conformance_version, "%u.%u.%u.%u", cv->major, cv->minor,
               cv->subminor, cv->patch);
  }
  if (v11) {
    o->has_ids = true;
    memcpy(o->device_uuid, ids.deviceUUID, 16);
    memcpy(o->driver_uuid, ids.driverUUID, 16);
  }
  physical_lists(pd, o);

  const VkPhysicalDeviceLimits *l = &props.limits;
  for (int i = 0; i < 3; i++) {
    o->max_workgroup_size[i] = l->maxComputeWorkGroupSize[i];
    o->max_workgroup_count[i] = l->maxComputeWorkGroupCount[i];
  }
  o->max_workgroup_invocations = l->maxComputeWorkGroupInvocations;
  o->max_shared_memory = l->maxComputeSharedMemorySize;
  o->max_push_constants = l->maxPushConstantsSize;
  o->max_storage_buffer_range = l->maxStorageBufferRange;
  o->max_allocation_size = v11 ? m3.maxMemoryAllocationSize : 0;
  o->timestamp_period_ns = l->timestampPeriod;
  o->subgroup_size = v11 ? sub.subgroupSize : 0;
  o->min_subgroup_size = has_subctl ? subctl.minSubgroupSize : o->subgroup_size;
  o->max_subgroup_size = has_subctl ? subctl.maxSubgroupSize : o->subgroup_size;
  VkSubgroupFeatureFlags want = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_BALLOT_BIT;
  o->subgroup_ballot = v11 && (sub.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                       (sub.supportedOperations & want) == want;
  VkSubgroupFeatureFlags shuf = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_VOTE_BIT |
                                VK_SUBGROUP_FEATURE_SHUFFLE_BIT | VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT;
  o->subgroup_shuffle = v11 && (sub.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                        (sub.supportedOperations & shuf) == shuf;

  if (o->float_controls) {
    o->denorm_preserve_f32 = fc.shaderDenormPreserveFloat32;
    o->denorm_preserve_f64 = fc.shaderDenormPreserveFloat64;
    o->denorm_flush_f32 = fc.shaderDenormFlushToZeroFloat32;
    o->denorm_flush_f64 = fc.shaderDenormFlushToZeroFloat64;
    o->signed_zero_inf_nan_f32 = fc.shaderSignedZeroInfNanPreserveFloat32;
    o->signed_zero_inf_nan_f64 = fc.shaderSignedZeroInfNanPreserveFloat64;
    o->denorm_preserve_f16 = fc.shaderDenormPreserveFloat16;
    o->denorm_flush_f16 = fc.shaderDenormFlushToZeroFloat16;
    o->rte_f16 = fc.shaderRoundingModeRTEFloat16;
    o->signed_zero_inf_nan_f16 = fc.shaderSignedZeroInfNanPreserveFloat16;
  }

  /* features */
  VkPhysicalDeviceFeatures f;
  vkGetPhysicalDeviceFeatures(pd, &f);
  o->f64 = f.shaderFloat64;
  o->int64 = f.shaderInt64;
  o->int16 = f.shaderInt16;
  if (v11) {
    VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    VkPhysicalDevice16BitStorageFeatures s16 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
    VkPhysicalDevice8BitStorageFeatures s8 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES};
    VkPhysicalDeviceShaderFloat16Int8Features f16 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
    VkPhysicalDeviceVulkanMemoryModelFeatures vmm = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES};
    VkPhysicalDeviceCooperativeMatrixFeaturesNV cmf = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
    VkPhysicalDeviceTimelineSemaphoreFeatures tl = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES};
    VkPhysicalDeviceShaderAtomicFloatFeaturesEXT af = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};
    VkPhysicalDeviceShaderAtomicInt64Features ai = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_INT64_FEATURES};
    bool hasaf = device_ext_present(pd, VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
    bool hasai = v12 || device_ext_present(pd, "VK_KHR_shader_atomic_int64");
    f2.pNext = &s16;
    bool has8 = v12 || device_ext_present(pd, "VK_KHR_8bit_storage");
    bool hasf16 = v12 || device_ext_present(pd, "VK_KHR_shader_float16_int8");
    bool hasvmm = v12 || device_ext_present(pd, "VK_KHR_vulkan_memory_model");
    bool hascm = nv_coopmat_present(pd);
    nxvk_coopmat_features_khr cmk = {.sType = NXVK_STYPE_COOPMAT_FEATURES_KHR};
    nxvk_bf16_features_khr bf = {.sType = NXVK_STYPE_BF16_FEATURES_KHR};
    bool hascmk = device_ext_present(pd, "VK_KHR_cooperative_matrix");
    bool hasbf = device_ext_present(pd, "VK_KHR_shader_bfloat16");
    void **tail = &s16.pNext;
    if (has8) { *tail = &s8; tail = &s8.pNext; }
    if (hasf16) { *tail = &f16; tail = &f16.pNext; }
    if (hasvmm) { *tail = &vmm; tail = &vmm.pNext; }
    if (hascm) { *tail = &cmf; tail = &cmf.pNext; }
    if (hascmk) { *tail = &cmk; tail = &cmk.pNext; }
    if (hasbf) { *tail = &bf; tail = &bf.pNext; }
    if (v12) { *tail = &tl; tail = &tl.pNext; }
    if (hasaf) { *tail = &af; tail = &af.pNext; }
    if (hasai) { *tail = &ai; tail = &ai.pNext; }
    vkGetPhysicalDeviceFeatures2(pd, &f2);
    o->timeline_semaphore = v12 && tl.timelineSemaphore;
    o->atomic_f32_add = hasaf && af.shaderBufferFloat32AtomicAdd;
    o->atomic_i64 = hasai && ai.shaderBufferInt64Atomics && o->int64;
    o->storage_16bit = s16.storageBuffer16BitAccess;
    o->storage_8bit = has8 && s8.storageBuffer8BitAccess;
    o->f16 = hasf16 && f16.shaderFloat16;
    o->int8 = hasf16 && f16.shaderInt8;
    o->vulkan_memory_model = hasvmm && vmm.vulkanMemoryModel;
    /* the dot variant "coopmat" (shaders/dot_coopmat.comp) needs Vulkan 1.2
     * (f16 arithmetic and the memory model, which glslang declares with NV
     * cooperative matrices, are core there), the cooperativeMatrix feature
     * and an f16 x f16 -> f32 subgroup configuration it can take */
    bool listed = hascm && cmf.cooperativeMatrix && vkGetPhysicalDeviceCooperativeMatrixPropertiesNV &&
                  coop_shapes_list(pd, o);
    o->coopmat_nv_f16 = listed && v12 && o->f16 && o->vulkan_memory_model;
    /* bf16 on tensor cores (dot's coopmat with bf16 inputs): the KHR
     * extension's feature and list, bf16 in shaders and in cooperative
     * matrices, and what the NV-written kernel declares (f16 types, the
     * memory model: spirv_khr.c keeps them) */
    bool khr_f16 = false, listed_khr = hascmk && cmk.cooperativeMatrix && coop_khr_list(inst, pd, o, &khr_f16);
    o->coopmat_bf16_f32 = listed_khr && hasbf && bf.shaderBFloat16Type && bf.shaderBFloat16CooperativeMatrix && v12 &&
                          o->f16 && o->vulkan_memory_model;
    o->coopmat_khr_f16 = hascmk && cmk.cooperativeMatrix && khr_f16 && v12 && o->f16 && o->vulkan_memory_model;
    o->coopmat_f16_f32 = o->coopmat_nv_f16 || o->coopmat_khr_f16;
  }
  o->push_descriptor = device_ext_present(pd, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
  if (has_sm) o->compute_units = sm.shaderSMCount;
  else if (has_amd)
    o->compute_units = amd.shaderEngineCount * amd.shaderArraysPerEngineCount * amd.computeUnitsPerShaderArray;
  o->coop_matrix_nv = nv_coopmat_present(pd);
  o->coop_matrix_khr = device_ext_present(pd, "VK_KHR_cooperative_matrix");

  /* timestamps on the compute queue we would pick */
  uint32_t nq = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, NULL);
  VkQueueFamilyProperties *qf = calloc(nq ? nq : 1, sizeof *qf);
  if (qf) {
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, qf);
    for (uint32_t i = 0; i < nq; i++)
      if (qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
        o->timestamp_valid_bits = qf[i].timestampValidBits;
        break;
      }
    free(qf);
  }
  o->timestamps = o->timestamp_valid_bits > 0 &&
                  (l->timestampComputeAndGraphics || o->timestamp_valid_bits > 0);

  /* memory heaps, with budget where the device reports it */
  VkPhysicalDeviceMemoryProperties mp;
  VkPhysicalDeviceMemoryBudgetPropertiesEXT budget = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
  o->has_budget = v11 && device_ext_present(pd, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
  if (o->has_budget) {
    VkPhysicalDeviceMemoryProperties2 mp2 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2, .pNext = &budget};
    vkGetPhysicalDeviceMemoryProperties2(pd, &mp2);
    mp = mp2.memoryProperties;
  } else {
    vkGetPhysicalDeviceMemoryProperties(pd, &mp);
  }
  o->heap_count = (int)(mp.memoryHeapCount < 16 ? mp.memoryHeapCount : 16);
  for (int i = 0; i < o->heap_count; i++) {
    o->heaps[i].size = mp.memoryHeaps[i].size;
    o->heaps[i].device_local = mp.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT;
    if (o->has_budget) {
      o->heaps[i].budget = budget.heapBudget[i];
      o->heaps[i].usage = budget.heapUsage[i];
    }
  }
}

int nxvk_enumerate(nxvk_instance *inst, VkPhysicalDevice **out, uint32_t *count) {
  uint32_t n = 0;
  VK_CHECK(vkEnumeratePhysicalDevices(inst->instance, &n, NULL));
  if (n == 0) return nxvk_no_driver_error("no Vulkan device found");
  VkPhysicalDevice *pds = calloc(n, sizeof *pds);
  if (!pds) return nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  VkResult r = vkEnumeratePhysicalDevices(inst->instance, &n, pds);
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
    free(pds);
    return nxvk_vk_fail(r, "vkEnumeratePhysicalDevices", __FILE__, __LINE__);
  }
  *out = pds;
  *count = n;
  return NXVK_OK;
}

int nxvk_devices_query(const nxvk_instance_opts *o, nxvk_device_info **infos, int *count) {
  nxvk_instance *inst;
  int rc = nxvk_instance_acquire(o && o->validate, &inst);
  if (rc) return rc;
  VkPhysicalDevice *pds = NULL;
  uint32_t n = 0;
  rc = nxvk_enumerate(inst, &pds, &n);
  if (rc == NXVK_OK) {
    *infos = calloc(n, sizeof **infos);
    if (!*infos) {
      rc = nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
    } else {
      for (uint32_t i = 0; i < n; i++) nxvk_physical_info(inst, pds[i], (int)i, &(*infos)[i]);
      *count = (int)n;
    }
  }
  free(pds);
  nxvk_instance_release(inst);
  return rc;
}
