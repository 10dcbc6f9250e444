/* cmd_info.c - `nxvk info`: what every Vulkan device here says about itself. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const char *const synopsis[] = {"[--json] [--verbose] [--device N|NAME] [--validate]", NULL};
static const nxvk_usage usage = {
    "info", synopsis,
    "Lists every Vulkan device: name, vendor, driver (its ID and the conformance test\n"
    "version it passed), device and driver UUIDs, API version, type, memory heaps with\n"
    "budget and usage, limits, subgroup size, features and float controls.  --verbose\n"
    "adds the queue families (flags, queue count, timestamp bits), the memory types\n"
    "(flags, heap) and the device extensions; --json always has them.  With --device,\n"
    "only that device."};

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

/* 8-4-4-4-12, as vulkaninfo and nvidia-smi print UUIDs */
static void uuid_text(const uint8_t *u, char *buf) {
  char *p = buf;
  for (int i = 0; i < 16; i++) p += sprintf(p, "%s%02x", i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "", u[i]);
}

/* --verbose: queue families, memory types, extensions (wrapped) */
static void device_lists_text(const nxvk_device_info *d) {
  char fl[256];
  for (int i = 0; i < d->queue_family_count; i++) {
    cli_queue_flags_text(d->queue_families[i].flags, fl);
    printf("  queue family %-2d %s; %u queue%s, timestamps %u bits\n", i, fl[0] ? fl : "(no flags)",
           d->queue_families[i].count, d->queue_families[i].count == 1 ? "" : "s",
           d->queue_families[i].timestamp_valid_bits);
  }
  for (int i = 0; i < d->memory_type_count; i++) {
    cli_memory_flags_text(d->memory_types[i].flags, fl);
    printf("  memory type %-3d heap %u: %s\n", i, d->memory_types[i].heap, fl[0] ? fl : "(no flags)");
  }
  printf("  extensions      %d", d->extension_count);
  int col = 200;
  for (const char *p = d->extensions; *p;) {
    int len = (int)strcspn(p, " ");
    if (col + 1 + len > 100) {
      printf("\n   ");
      col = 3;
    }
    printf(" %.*s", len, p);
    col += 1 + len;
    p += len + (p[len] ? 1 : 0);
  }
  printf("\n");
}

static void device_text(const nxvk_device_info *d) {
  char b1[32], b2[32], b3[32];
  printf("device %d: %s\n", d->index, d->name);
  printf("  vendor          %s (0x%04x), device 0x%04x, type %s\n", d->vendor, d->vendor_id,
         d->device_id, d->type);
  printf("  driver          %s %s (%s)\n", d->driver_name[0] ? d->driver_name : "?",
         d->driver_version, d->driver_info[0] ? d->driver_info : "no driver info");
  if (d->driver_id || d->conformance_version[0])
    printf("  driver id       %s (%u)%s%s\n", d->driver_id ? d->driver_id_name : "not reported", d->driver_id,
           d->conformance_version[0] ? ", conformance " : ", no conformance version",
           d->conformance_version);
  if (d->has_ids) {
    char du[40], dr[40];
    uuid_text(d->device_uuid, du);
    uuid_text(d->driver_uuid, dr);
    printf("  uuid            device %s, driver %s\n", du, dr);
  }
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
  if (d->compute_units) printf("  compute units   %u\n", d->compute_units);
  printf("  timestamps      %s (%u valid bits, %.3g ns per tick)\n", yn(d->timestamps),
         d->timestamp_valid_bits, d->timestamp_period_ns);
  printf("  features        f64 %s, f16 %s, int64 %s, int8 %s, 8-bit storage %s, 16-bit storage %s\n",
         yn(d->f64), yn(d->f16), yn(d->int64), yn(d->int8), yn(d->storage_8bit),
         yn(d->storage_16bit));
  printf("  float controls  denormals preserve f32 %s f64 %s, flush f32 %s f64 %s; "
         "signed zero/inf/nan preserve f32 %s f64 %s\n",
         yn(d->denorm_preserve_f32), yn(d->denorm_preserve_f64), yn(d->denorm_flush_f32),
         yn(d->denorm_flush_f64), yn(d->signed_zero_inf_nan_f32), yn(d->signed_zero_inf_nan_f64));
  printf("  float controls  f16: denormals preserve %s, flush %s; round to nearest even %s; "
         "signed zero/inf/nan preserve %s\n",
         yn(d->denorm_preserve_f16), yn(d->denorm_flush_f16), yn(d->rte_f16), yn(d->signed_zero_inf_nan_f16));
  printf("  coop. matrix    NV %s, KHR %s; dot variant coopmat: f16 x f16 -> f32 %s%s, bf16 x bf16 -> f32 %s\n",
         yn(d->coop_matrix_nv), yn(d->coop_matrix_khr), yn(d->coopmat_f16_f32),
         d->coopmat_khr_f16 ? " (as KHR)" : "", yn(d->coopmat_bf16_f32));
  if (d->coop_shapes[0]) printf("  coop. shapes    %s\n", d->coop_shapes);
}

int cmd_info(int argc, char **argv, nxvk_cli *cli) {
  bool json = false, verbose = false;
  const nxvk_option opts[] = {
      {"json", 0, OPT_FLAG, &json, NULL, "print JSON instead of text (every field)"},
      {"verbose", 'v', OPT_FLAG, &verbose, NULL, "also queue families, memory types, extensions"},
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
    for (int i = first; i < last; i++) cJSON_AddItemToArray(arr, cli_device_json(&infos[i]));
    char *s = cJSON_Print(root);
    if (s) puts(s);
    free(s);
    cJSON_Delete(root);
  } else {
    for (int i = first; i < last; i++) {
      if (i > first) printf("\n");
      device_text(&infos[i]);
      if (verbose) device_lists_text(&infos[i]);
    }
  }
  free(infos);
  return EXIT_OK;
}
