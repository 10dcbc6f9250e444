/* cmd_info.c - `nxvk info`: what every Vulkan device here says about itself. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const char *const synopsis[] = {"[--json] [--device N|NAME] [--validate]", NULL};
static const nxvk_usage usage = {
    "info", synopsis,
    "Lists every Vulkan device: name, vendor, driver, API version, type, memory heaps\n"
    "with budget and usage, limits, subgroup size, features and float controls.\n"
    "With --device, only that device."};

static cJSON *device_json(const nxvk_device_info *d) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "index", d->index);
  cJSON_AddStringToObject(o, "name", d->name);
  cJSON_AddStringToObject(o, "vendor", d->vendor);
  cJSON_AddNumberToObject(o, "vendor_id", d->vendor_id);
  cJSON_AddNumberToObject(o, "device_id", d->device_id);
  cJSON_AddStringToObject(o, "type", d->type);
  cJSON_AddStringToObject(o, "driver_name", d->driver_name);
  cJSON_AddStringToObject(o, "driver_info", d->driver_info);
  cJSON_AddStringToObject(o, "driver_version", d->driver_version);
  cJSON_AddStringToObject(o, "api_version", d->api_version);
  char uuid[40];
  for (int i = 0; i < 16; i++) snprintf(uuid + 2 * i, 3, "%02x", d->pipeline_cache_uuid[i]);
  cJSON_AddStringToObject(o, "pipeline_cache_uuid", uuid);

  cJSON *mem = cJSON_AddObjectToObject(o, "memory");
  cJSON_AddBoolToObject(mem, "budget_available", d->has_budget);
  cJSON *heaps = cJSON_AddArrayToObject(mem, "heaps");
  for (int i = 0; i < d->heap_count; i++) {
    cJSON *h = cJSON_CreateObject();
    cJSON_AddNumberToObject(h, "size", (double)d->heaps[i].size);
    cJSON_AddBoolToObject(h, "device_local", d->heaps[i].device_local);
    if (d->has_budget) {
      cJSON_AddNumberToObject(h, "budget", (double)d->heaps[i].budget);
      cJSON_AddNumberToObject(h, "usage", (double)d->heaps[i].usage);
    } else {
      cJSON_AddNullToObject(h, "budget");
      cJSON_AddNullToObject(h, "usage");
    }
    cJSON_AddItemToArray(heaps, h);
  }

  cJSON *l = cJSON_AddObjectToObject(o, "limits");
  cJSON_AddItemToObject(l, "max_workgroup_size",
                        cJSON_CreateIntArray((const int[]){(int)d->max_workgroup_size[0],
                                                           (int)d->max_workgroup_size[1],
                                                           (int)d->max_workgroup_size[2]}, 3));
  cJSON_AddNumberToObject(l, "max_workgroup_invocations", d->max_workgroup_invocations);
  cJSON_AddItemToObject(l, "max_workgroup_count",
                        cJSON_CreateDoubleArray((const double[]){d->max_workgroup_count[0],
                                                                 d->max_workgroup_count[1],
                                                                 d->max_workgroup_count[2]}, 3));
  cJSON_AddNumberToObject(l, "max_shared_memory", d->max_shared_memory);
  cJSON_AddNumberToObject(l, "max_push_constants", d->max_push_constants);
  cJSON_AddNumberToObject(l, "max_storage_buffer_range", (double)d->max_storage_buffer_range);
  cJSON_AddNumberToObject(l, "max_allocation_size", (double)d->max_allocation_size);
  cJSON_AddNumberToObject(l, "subgroup_size", d->subgroup_size);
  cJSON_AddNumberToObject(l, "min_subgroup_size", d->min_subgroup_size);
  cJSON_AddNumberToObject(l, "max_subgroup_size", d->max_subgroup_size);
  cJSON_AddNumberToObject(l, "timestamp_period_ns", d->timestamp_period_ns);
  cJSON_AddNumberToObject(l, "timestamp_valid_bits", d->timestamp_valid_bits);

  cJSON *f = cJSON_AddObjectToObject(o, "features");
  cJSON_AddBoolToObject(f, "f64", d->f64);
  cJSON_AddBoolToObject(f, "f16", d->f16);
  cJSON_AddBoolToObject(f, "int64", d->int64);
  cJSON_AddBoolToObject(f, "int16", d->int16);
  cJSON_AddBoolToObject(f, "int8", d->int8);
  cJSON_AddBoolToObject(f, "storage_8bit", d->storage_8bit);
  cJSON_AddBoolToObject(f, "storage_16bit", d->storage_16bit);
  cJSON_AddBoolToObject(f, "timestamps", d->timestamps);
  cJSON_AddBoolToObject(f, "push_descriptor", d->push_descriptor);
  cJSON_AddBoolToObject(f, "cooperative_matrix_nv", d->coop_matrix_nv);
  cJSON_AddBoolToObject(f, "cooperative_matrix_khr", d->coop_matrix_khr);

  cJSON *fc = cJSON_AddObjectToObject(o, "float_controls");
  cJSON_AddBoolToObject(fc, "available", d->float_controls);
  cJSON_AddBoolToObject(fc, "denorm_preserve_f32", d->denorm_preserve_f32);
  cJSON_AddBoolToObject(fc, "denorm_preserve_f64", d->denorm_preserve_f64);
  cJSON_AddBoolToObject(fc, "denorm_flush_f32", d->denorm_flush_f32);
  cJSON_AddBoolToObject(fc, "denorm_flush_f64", d->denorm_flush_f64);
  cJSON_AddBoolToObject(fc, "signed_zero_inf_nan_preserve_f32", d->signed_zero_inf_nan_f32);
  cJSON_AddBoolToObject(fc, "signed_zero_inf_nan_preserve_f64", d->signed_zero_inf_nan_f64);
  return o;
}

static const char *yn(bool b) { return b ? "yes" : "no"; }

static void human_bytes(uint64_t b, char *buf, size_t n) {
  const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = (double)b;
  int i = 0;
  while (v >= 1024 && i < 4) {
    v /= 1024;
    i++;
  }
  snprintf(buf, n, i ? "%.1f %s" : "%.0f %s", v, u[i]);
}

static void device_text(const nxvk_device_info *d) {
  char b1[32], b2[32], b3[32];
  printf("device %d: %s\n", d->index, d->name);
  printf("  vendor          %s (0x%04x), device 0x%04x, type %s\n", d->vendor, d->vendor_id,
         d->device_id, d->type);
  printf("  driver          %s %s (%s)\n", d->driver_name[0] ? d->driver_name : "?",
         d->driver_version, d->driver_info[0] ? d->driver_info : "no driver info");
  printf("  api             Vulkan %s\n", d->api_version);
  for (int i = 0; i < d->heap_count; i++) {
    human_bytes(d->heaps[i].size, b1, sizeof b1);
    printf("  heap %d          %s%s", i, b1, d->heaps[i].device_local ? " device-local" : "");
    if (d->has_budget) {
      human_bytes(d->heaps[i].budget, b2, sizeof b2);
      human_bytes(d->heaps[i].usage, b3, sizeof b3);
      printf(", budget %s, usage %s", b2, b3);
    }
    printf("\n");
  }
  if (!d->has_budget) printf("  memory budget   not reported (no VK_EXT_memory_budget)\n");
  printf("  workgroup       size %u x %u x %u, %u invocations, count %u x %u x %u\n",
         d->max_workgroup_size[0], d->max_workgroup_size[1], d->max_workgroup_size[2],
         d->max_workgroup_invocations, d->max_workgroup_count[0], d->max_workgroup_count[1],
         d->max_workgroup_count[2]);
  human_bytes(d->max_storage_buffer_range, b1, sizeof b1);
  printf("  limits          shared memory %u B, push constants %u B, storage buffer %s\n",
         d->max_shared_memory, d->max_push_constants, b1);
  printf("  subgroup        %u (min %u, max %u)\n", d->subgroup_size, d->min_subgroup_size,
         d->max_subgroup_size);
  printf("  timestamps      %s (%u valid bits, %.3g ns per tick)\n", yn(d->timestamps),
         d->timestamp_valid_bits, d->timestamp_period_ns);
  printf("  features        f64 %s, f16 %s, int64 %s, int8 %s, 8-bit storage %s, 16-bit storage %s\n",
         yn(d->f64), yn(d->f16), yn(d->int64), yn(d->int8), yn(d->storage_8bit),
         yn(d->storage_16bit));
  printf("  float controls  denormals preserve f32 %s f64 %s, flush f32 %s f64 %s; "
         "signed zero/inf/nan preserve f32 %s f64 %s\n",
         yn(d->denorm_preserve_f32), yn(d->denorm_preserve_f64), yn(d->denorm_flush_f32),
         yn(d->denorm_flush_f64), yn(d->signed_zero_inf_nan_f32), yn(d->signed_zero_inf_nan_f64));
  printf("  coop. matrix    NV %s, KHR %s\n", yn(d->coop_matrix_nv), yn(d->coop_matrix_khr));
}

int cmd_info(int argc, char **argv, nxvk_cli *cli) {
  bool json = false;
  const nxvk_option opts[] = {
      {"json", 0, OPT_FLAG, &json, NULL, "print JSON instead of text"},
      OPT_COMMON_DEVICE(cli),
      OPT_END,
  };
  int npos, rc = cli_parse(argc, argv, &usage, opts, &npos);
  if (rc) return rc < 0 ? EXIT_OK : rc;
  if (npos > 0) return cli_usage_error(&usage, "unexpected argument '%s'", argv[0]);

  nxvk_instance_opts io = {.validate = cli->validate};
  nxvk_device_info *infos = NULL;
  int n = 0;
  rc = nxvk_devices_query(&io, &infos, &n);
  if (rc) return cli_engine_error(rc);
  int first = 0, last = n;
  if (cli->device || getenv("NXVK_DEVICE")) {
    /* the same choice rule as every other command */
    nxvk_ctx *ctx;
    rc = cli_ctx(cli, &ctx);
    if (rc) {
      free(infos);
      return cli_engine_error(rc);
    }
    nxvk_device_info d;
    nxvk_ctx_device_info(ctx, &d);
    first = d.index;
    last = first + 1;
    nxvk_ctx_close(ctx);
    cli->ctx = NULL;
  }
  if (json) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "nxvk_version", NXVK_VERSION);
    cJSON *arr = cJSON_AddArrayToObject(root, "devices");
    for (int i = first; i < last; i++) cJSON_AddItemToArray(arr, device_json(&infos[i]));
    char *s = cJSON_Print(root);
    if (s) puts(s);
    free(s);
    cJSON_Delete(root);
  } else {
    for (int i = first; i < last; i++) {
      if (i > first) printf("\n");
      device_text(&infos[i]);
    }
  }
  free(infos);
  return EXIT_OK;
}
