/* test_coopmat.c - TAP tests for dot's cooperative-matrix kernels that need
 * no cooperative matrices: every layout the GPU sweep (scripts/gpu.sh
 * coopmat) names compiles through the run-time compiler, with f32 and f16
 * results, bench peak's rate kernels and conv's (conv_coopmat.comp, with its emulation); malformed
 * names are refused; the bf16 forms (b32 / b16) carry the line that sends
 * their SPIR-V to the KHR rewrite (NXVK_SPIRV_KHR_BF16), their emulation
 * does not; on a device without
 * cooperative matrices (lavapipe) the coopmat variant is refused with its
 * reason (bf16: no bf16 configuration), f16 and bf16 dot keep their default
 * kernel, and
 * NXVK_DOT_COOPMAT and its pipeline knobs are refused when the context opens;
 * and f16 and bf16 products through the emulation (NXVK_DOT_COOPMAT_EMU=1)
 * are exact. */
#define _POSIX_C_SOURCE 200809L

#include "nxvk.h"
#include "ops/ops.h"
#include "tap.h"
#include "rtkernels.h"
#include "vk/vkcore.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the layouts scripts/gpu.sh coopmat sweeps (WM,WN,FR,FC,BK), on 16x16x16
 * and on NVIDIA's other f16 shape 16x8x16, with two shared stages, loads
 * one step ahead, no regrouping; then the other pipelines on a few */
static const char *const layouts[] = {
    "2x2_4x4_k32_16x16x16", "2x2_4x4_k16_16x16x16", "2x2_4x4_k64_16x16x16", "2x4_4x2_k32_16x16x16",
    "4x2_4x4_k16_16x16x16", "2x4_4x4_k16_16x16x16", "4x2_2x4_k32_16x16x16", "2x2_2x4_k64_16x16x16",
    "2x2_4x8_k32_16x8x16",  "1x4_8x2_k32_16x16x16", "4x4_2x2_k32_16x16x16", "2x2_2x4_k32_16x16x16",
    "2x2_4x2_k32_16x16x16", "2x2_2x2_k64_16x16x16", "4x2_4x4_k32_16x16x16",
};
/* one shared stage (BK 64, 256-wide blocks), loads two steps ahead, row
 * tiles regrouped (NXVK_DOT_COOPMAT_STAGES, _PREFETCH, _GROUP): gpu.sh's
 * slashed entries and a few more */
static const char *const pipelined[] = {
    "2x2_4x4_k64_16x16x16_s1_p1_g0_o0", "4x2_4x4_k32_16x16x16_s1_p1_g8_o0", "2x4_4x2_k64_16x16x16_s1_p1_g0_o0",
    "2x2_4x4_k32_16x16x16_s2_p2_g0_o0", "4x2_4x4_k16_16x16x16_s2_p2_g8_o0", "2x4_4x2_k32_16x16x16_s2_p2_g16_o0",
    "2x4_4x2_k32_16x16x16_s2_p2_g0_o0", "4x2_4x4_k32_16x16x16_s1_p1_g0_o0", "2x4_4x4_k32_16x16x16_s1_p1_g0_o0",
    "4x2_4x4_k16_16x16x16_s2_p2_g0_o0", "2x4_4x2_k32_16x16x16_s2_p1_g8_o0", "4x2_4x4_k32_16x16x16_s1_p2_g0_o0",
    "2x2_4x4_k64_16x16x16_s1_p2_g8_o0",
    /* the fragment orders (NXVK_DOT_COOPMAT_ORDER) and the emulation (_EMU) */
    "2x4_4x4_k32_16x16x16_s1_p1_g0_o1", "2x4_4x4_k32_16x16x16_s1_p2_g8_o2", "2x2_4x4_k32_16x16x16_s2_p1_g0_o1", "2x4_4x4_k32_16x16x16_s1_p1_g0_o3", "2x2_4x4_k64_16x16x16_s1_p2_g0_o3",
    "2x4_4x4_k32_16x16x16_s1_p1_g0_o0_emu", "2x2_4x4_k32_16x16x16_s2_p2_g8_o0_emu",
};

static void test_compile(void) {
  size_t nl = sizeof layouts / sizeof *layouts, np = sizeof pipelined / sizeof *pipelined;
  /* o: the result token, f32 f16 (f16 inputs), b32 b16 (bf16 inputs) */
  static const char *const res[4] = {"f32", "f16", "b32", "b16"};
  for (size_t i = 0; i < nl + np; i++)
    for (int o = 0; o < 4; o++) {
      char name[80];
      if (o >= 2 && i < nl && i % 4) continue; /* bf16: every fourth plain layout, all the pipelined ones */
      if (i < nl)
        snprintf(name, sizeof name, "dotcm_%s_s2_p1_g0_o0_%s", layouts[i], res[o]);
      else { /* "..._emu" entries: the result type goes before the suffix */
        const char *pl = pipelined[i - nl], *e = strstr(pl, "_emu");
        snprintf(name, sizeof name, "dotcm_%.*s_%s%s", e ? (int)(e - pl) : (int)strlen(pl), pl, res[o],
                 e ? "_emu" : "");
      }
      bool emu = strstr(name, "_emu") != NULL, bf = o >= 2, o16 = o % 2 == 1;
      char *glsl;
      uint32_t *words;
      size_t bytes;
      int rc = rt_kernel_spirv(name, &glsl, &words, &bytes);
      CHECK(rc == NXVK_OK && bytes > 1000 && words[0] == 0x07230203u, "%s compiles (%s)", name,
             rc ? nxvk_errmsg() : "ok");
      CHECK(glsl && (strstr(glsl, "#define OUT_F16") != NULL) == (o16 && !bf) &&
                (strstr(glsl, "#define OUT_BF16") != NULL) == (o16 && bf) &&
                (strstr(glsl, "#define IN_BF16") != NULL) == bf && (strstr(glsl, "#define CM_EMU") != NULL) == emu &&
                (strstr(glsl, "#define NXVK_SPIRV_KHR_BF16 1\n") != NULL) == (bf && !emu),
            "%s: OUT_F16 %s, OUT_BF16 %s, IN_BF16 %s, CM_EMU %s, the KHR rewrite's line %s", name,
            o16 && !bf ? "defined" : "not defined", o16 && bf ? "defined" : "not defined", bf ? "defined" : "not defined",
            emu ? "defined" : "not defined", bf && !emu ? "there" : "not there");
      if (bf && !emu && rc == NXVK_OK) {
        /* the contract with spirv_khr.c: the pass takes the kernel (A and B
         * types apart, each in one role, no arithmetic on them) and gives
         * KHR cooperative matrices (OpTypeCooperativeMatrixKHR, 4456) with
         * no NV one left (OpTypeCooperativeMatrixNV, 5358) */
        rc = nxvk_spirv_coopmat_khr(&words, &bytes, true);
        int khr = 0, nv = 0;
        for (size_t w = 5; rc == NXVK_OK && w < bytes / 4 && (words[w] >> 16); w += words[w] >> 16) {
          khr += (words[w] & 0xffffu) == 4456;
          nv += (words[w] & 0xffffu) == 5358;
        }
        CHECK(rc == NXVK_OK && khr >= 3 && nv == 0, "%s: the KHR bf16 rewrite takes it (%s; %d KHR, %d NV matrix types)",
              name, rc ? nxvk_errmsg() : "ok", khr, nv);
      }
      free(glsl);
      free(words);
    }
  /* bench peak's rate kernels on NVIDIA's f16 and s8 shapes */
  static const char *const peak[] = {"peakcm_16x16x16_f16", "peakcm_16x8x16_f16", "peakcm_16x8x8_f16",
                                     "peakcm_16x16x32_s8", "peakcm_16x8x32_s8"};
  for (size_t i = 0; i < sizeof peak / sizeof *peak; i++) {
    char *glsl;
    uint32_t *words;
    size_t bytes;
    int rc = rt_kernel_spirv(peak[i], &glsl, &words, &bytes);
    CHECK(rc == NXVK_OK && bytes > 500, "%s compiles (%s)", peak[i], rc ? nxvk_errmsg() : "ok");
    free(glsl);
    free(words);
  }
  /* the skinny columns form's NV f16 kernels (dot_mvc.c): plain (m = 16) and transposed (t: m = 8 on 16x8x16, m =
   * 16 on 16x16x16), B staged or not, and their emulations */
  static const char *const mvcm[] = {"dot_mvcm_f16x16x16c4p1l1_f16",   "dot_mvcm_t16x8x16c4p1l1_f16",
                                     "dot_mvcm32_t16x8x16c8p2l0_f16",  "dot_mvcm_t16x16x16c4p1l1_f16",
                                     "dot_mvcm_t16x8x8c2p4l1_f16",     "dot_mvcm_t16x8x16c4p1l1e_f16",
                                     "dot_mvcm32_t16x16x16c2p2l0e_bf16", "dot_mvcm_t16x16x16c4p1l1z_f16",
                                     "dot_mvcm_t16x8x16c8p2l1ze_f16"};
  for (size_t i = 0; i < sizeof mvcm / sizeof *mvcm; i++) {
    char *glsl;
    uint32_t *words;
    size_t bytes;
    int rc = rt_kernel_spirv(mvcm[i], &glsl, &words, &bytes);
    bool emu = strstr(mvcm[i], "e_") != NULL;
    CHECK(rc == NXVK_OK && bytes > 1000 && glsl && (strstr(glsl, "#define TR 1") != NULL) == (mvcm[i][9] == 't' ||
                                                                                           mvcm[i][11] == 't') &&
              (strstr(glsl, "#define CM_EMU") != NULL) == emu,
          "%s compiles (%s)", mvcm[i], rc ? nxvk_errmsg() : "ok");
    free(glsl);
    free(words);
  }
  /* conv's layouts (scripts/gpu.sh conv sweeps them), with and without the emulation */
  static const char *const conv[] = {"4x1_2x4_k32_16x16x16", "4x2_2x2_k32_16x16x16", "2x2_2x2_k32_16x16x16",
                                     "8x1_2x4_k32_16x16x16", "2x2_4x2_k32_16x16x16", "4x1_2x4_k16_16x16x16",
                                     "4x1_2x8_k32_16x8x16"};
  for (size_t i = 0; i < sizeof conv / sizeof *conv; i++)
    for (int e = 0; e < 2; e++) {
      char name[64], *glsl;
      snprintf(name, sizeof name, "convcm_%s%s", conv[i], e ? "_emu" : "");
      uint32_t *words;
      size_t bytes;
      int rc = rt_kernel_spirv(name, &glsl, &words, &bytes);
      CHECK(rc == NXVK_OK && bytes > 1000 && glsl && (strstr(glsl, "#define CM_EMU") != NULL) == (e == 1) &&
                (strstr(glsl, "coopMatMulAddNV") != NULL),
            "%s compiles (%s)", name, rc ? nxvk_errmsg() : "ok");
      free(glsl);
      free(words);
    }
  static const char *const bad[] = {"convcm_4x1_2x4_k32_16x16x16_f16", "convcm_4x1_2x4_k32_16x16",
                                    "convcm_04x1_2x4_k32_16x16x16", "convcm_4x1_2x4_k32_16x16x16x", "peakcm_16x16x16_f32", "peakcm_16x16_s8", "dotcm_2x2_4x4_k32_16x16x16_s2_p1_g0_bf16",
                                    "dotcm_2x2_4x4_k32_16x16_s2_p1_g0_f32", "dotcm_2x2_4x4_k32_16x16x16_s2_p1_g0_f32x",
                                    "dotcm_2x2_4x4_k32_16x16x16_f32", "dotcm_2x2_4x4_k32_16x16x16_s3_p1_g0_f32",
                                    "dotcm_2x2_4x4_k32_16x16x16_s2_p3_g0_f32", "dotcm_2x2_4x4_k32_16x16x16_s2_p1_g65_f32",
                                    "dotcm__f32", "dotcm_2x2_4x4_k32_16x16x16_s2_p1_g0_f32",
                                    "dotcm_2x2_4x4_k32_16x16x16_s2_p1_g0_o4_f32", "dotcm_2x2_4x4_k32_16x16x16_s2_p1_g0_o0_f32_emx",
                                    "dotcm_2x2_4x4_k32_16x16x16_s2_p1_g0_o0_f32_emu_",
                                    /* the bf16 tokens, strictly: no other token, nothing after, no zeros ahead */
                                    "dotcm_2x2_4x4_k32_16x16x16_s2_p1_g0_o0_bf16", "dotcm_2x2_4x4_k32_16x16x16_s2_p1_g0_o0_b8",
                                    "dotcm_2x2_4x4_k32_16x16x16_s2_p1_g0_o0_b32x", "dotcm_2x2_4x4_k32_16x16x16_s2_p1_g0_o0_b64",
                                    "dotcm_2x2_4x4_k32_16x16x16_s2_p1_g0_o0_b16_emu_", "dotcm_2x2_4x4_k32_16x16x16_s2_p1_g0_o0_b16_emux",
                                    "dotcm_02x2_4x4_k32_16x16x16_s2_p1_g0_o0_b32", "dotcm_2x2_4x4_k32_16x16x16_s2_p1_g0_o0_f3",
                                    "dotcm_2x2_4x4_k32_16x16x16_s2_p1_g0_o0_b32_dg3", "dotcm_2x2_4x4_k+32_16x16x16_s2_p1_g0_o0_b32"};
  check_refused(bad, sizeof bad / sizeof *bad, "is refused");
}

static nxvk_tensor *tensor(nxvk_ctx *c, nxvk_dtype d, int64_t r, int64_t k) {
  nxvk_shape s = {2, {r, k}};
  nxvk_tensor *t = NULL;
  if (nxvk_tensor_new(c, d, &s, &t)) return NULL;
  return t;
}

static void test_device(void) {
  nxvk_ctx *c = NULL;
  nxvk_ctx_opts o = {0};
  int rc = nxvk_ctx_open(&o, &c);
  CHECK(rc == NXVK_OK, "open the default device");
  if (rc) return;
  const nxvk_op_desc *dot = nxvk_op_find("dot");
  if (c->info.coopmat_f16_f32) {
    for (int i = 0; i < 7; i++)
      printf("ok %d # SKIP %s has cooperative matrices: the no-coopmat checks are lavapipe's\n", ++tap_n,
             c->info.name);
    nxvk_ctx_close(c);
    return;
  }
  nxvk_attrs a = {0};
  a.set |= NXVK_ATTR_VARIANT;
  snprintf(a.variant, sizeof a.variant, "coopmat");
  nxvk_meta m16[2] = {{NXVK_F16, {2, {64, 32}}}, {NXVK_F16, {2, {32, 48}}}};
  rc = nxvk_op_supported(c, dot, &a, m16, 2);
  CHECK(rc == NXVK_E_UNSUPPORTED && strstr(nxvk_errmsg(), "not supported on") != NULL,
         "coopmat f16 without cooperative matrices: unsupported (%s)", nxvk_errmsg());
  nxvk_meta mb[2] = {{NXVK_BF16, {2, {64, 32}}}, {NXVK_BF16, {2, {32, 48}}}};
  rc = nxvk_op_supported(c, dot, &a, mb, 2);
  CHECK(rc == NXVK_E_UNSUPPORTED && strstr(nxvk_errmsg(), "not supported on") &&
            strstr(nxvk_errmsg(), "no bf16 x bf16 -> f32"),
        "coopmat bf16 without bf16 cooperative matrices: unsupported, the reason named (%s)", nxvk_errmsg());
  /* f16 and bf16 dot by default: the naive kernel still, exact on small integers */
  for (int b16 = 0; b16 < 2; b16++) {
    nxvk_dtype dt = b16 ? NXVK_BF16 : NXVK_F16;
    nxvk_tensor *x = tensor(c, dt, 40, 24), *y = tensor(c, dt, 24, 36), *z = NULL;
    bool ok = x && y;
    uint16_t hx[40 * 24], hy[24 * 36];
    for (int i = 0; i < 40 * 24; i++)
      hx[i] = b16 ? nxvk_f32_to_bf16((float)(i % 7 - 3)) : nxvk_f32_to_f16((float)(i % 7 - 3));
    for (int i = 0; i < 24 * 36; i++)
      hy[i] = b16 ? nxvk_f32_to_bf16((float)(i % 5 - 2)) : nxvk_f32_to_f16((float)(i % 5 - 2));
    ok = ok && nxvk_tensor_upload(c, x, hx, sizeof hx) == NXVK_OK && nxvk_tensor_upload(c, y, hy, sizeof hy) == NXVK_OK;
    nxvk_tensor *in[2] = {x, y};
    nxvk_attrs none = {0};
    ok = ok && nxvk_op_run(c, dot, &none, in, 2, &z) == NXVK_OK;
    uint16_t hz[40 * 36];
    ok = ok && nxvk_tensor_download(c, z, hz, sizeof hz) == NXVK_OK;
    int bad = 0;
    for (int i = 0; ok && i < 40; i++)
      for (int j = 0; j < 36; j++) {
        float want = 0;
        for (int k = 0; k < 24; k++) want += (float)((i * 24 + k) % 7 - 3) * (float)((k * 36 + j) % 5 - 2);
        bad += (b16 ? nxvk_bf16_to_f32(hz[i * 36 + j]) : nxvk_f16_to_f32(hz[i * 36 + j])) != want;
      }
    CHECK(ok && bad == 0, "%s dot 40x24x36 by default: exact (%d wrong)", nxvk_dtype_name(dt), bad);
    nxvk_tensor_free(x);
    nxvk_tensor_free(y);
    nxvk_tensor_free(z);
  }
  nxvk_ctx_close(c);
  setenv("NXVK_DOT_COOPMAT", "2,2,4,4,32", 1);
  rc = nxvk_ctx_open(&o, &c);
  CHECK(rc == NXVK_E_BAD_REQUEST && strstr(nxvk_errmsg(), "NXVK_DOT_COOPMAT") != NULL,
         "NXVK_DOT_COOPMAT without cooperative matrices: refused (%s)", nxvk_errmsg());
  if (rc == NXVK_OK) nxvk_ctx_close(c);
  unsetenv("NXVK_DOT_COOPMAT");
  static const char *const knobs[] = {"NXVK_DOT_COOPMAT_STAGES", "NXVK_DOT_COOPMAT_PREFETCH", "NXVK_DOT_COOPMAT_GROUP",
                                      "NXVK_DOT_COOPMAT_ORDER"};
  for (int i = 0; i < 4; i++) {
    setenv(knobs[i], "1", 1);
    rc = nxvk_ctx_open(&o, &c);
    CHECK(rc == NXVK_E_BAD_REQUEST && strstr(nxvk_errmsg(), knobs[i]) != NULL,
           "%s without cooperative matrices: refused (%s)", knobs[i], nxvk_errmsg());
    if (rc == NXVK_OK) nxvk_ctx_close(c);
    unsetenv(knobs[i]);
  }
}

/* f16 or bf16 dot on the emulation (NXVK_DOT_COOPMAT_EMU=1, any device): m
 * x k x n of small integers, exact in f32 sums and in f16 / bf16 (sums up to
 * 256 in magnitude here), against a plain loop, through the default layout
 * and forced ones with the other pipelines */
static uint16_t to16(nxvk_dtype dt, float v) { return dt == NXVK_BF16 ? nxvk_f32_to_bf16(v) : nxvk_f32_to_f16(v); }
static float of16(nxvk_dtype dt, uint16_t h) { return dt == NXVK_BF16 ? nxvk_bf16_to_f32(h) : nxvk_f16_to_f32(h); }
static void emu_product(const char *what, nxvk_dtype dt, int m, int k, int n, bool out_f32) {
  nxvk_ctx *c = NULL;
  nxvk_ctx_opts o = {0};
  int rc = nxvk_ctx_open(&o, &c);
  CHECK(rc == NXVK_OK, "%s: open with NXVK_DOT_COOPMAT_EMU=1 (%s)", what, rc ? nxvk_errmsg() : "ok");
  if (rc) return;
  const nxvk_op_desc *dot = nxvk_op_find("dot");
  nxvk_attrs a = {0};
  a.set |= NXVK_ATTR_VARIANT;
  snprintf(a.variant, sizeof a.variant, "coopmat");
  if (out_f32) {
    a.set |= NXVK_ATTR_DTYPE;
    a.dtype = NXVK_F32;
  }
  nxvk_tensor *x = tensor(c, dt, m, k), *y = tensor(c, dt, k, n), *z = NULL;
  uint16_t *hx = malloc(sizeof *hx * m * k), *hy = malloc(sizeof *hy * k * n);
  float *hz = malloc(sizeof *hz * m * n);
  bool ok = x && y && hx && hy && hz;
  for (int i = 0; ok && i < m * k; i++) hx[i] = to16(dt, (float)(i % 7 - 3));
  for (int i = 0; ok && i < k * n; i++) hy[i] = to16(dt, (float)(i % 5 - 2));
  ok = ok && nxvk_tensor_upload(c, x, hx, sizeof *hx * m * k) == NXVK_OK &&
       nxvk_tensor_upload(c, y, hy, sizeof *hy * k * n) == NXVK_OK;
  nxvk_tensor *in[2] = {x, y};
  rc = ok ? nxvk_op_run(c, dot, &a, in, 2, &z) : NXVK_E_NO_MEMORY;
  ok = ok && rc == NXVK_OK;
  if (ok && out_f32) {
    ok = nxvk_tensor_download(c, z, hz, sizeof *hz * m * n) == NXVK_OK;
  } else if (ok) {
    uint16_t *t16 = malloc(sizeof *t16 * m * n);
    ok = t16 && nxvk_tensor_download(c, z, t16, sizeof *t16 * m * n) == NXVK_OK;
    for (int i = 0; ok && i < m * n; i++) hz[i] = of16(dt, t16[i]);
    free(t16);
  }
  int bad = 0;
  for (int i = 0; ok && i < m; i++)
    for (int j = 0; j < n; j++) {
      float want = 0;
      for (int kk = 0; kk < k; kk++) want += (float)((i * k + kk) % 7 - 3) * (float)((kk * n + j) % 5 - 2);
      bad += hz[i * n + j] != want;
    }
  CHECK(ok && bad == 0, "%s: %s dot %dx%dx%d on the emulation, %s results: exact (%d wrong; %s)", what,
        nxvk_dtype_name(dt), m, k, n, out_f32 ? "f32" : nxvk_dtype_name(dt), bad, rc ? nxvk_errmsg() : "ran");
  free(hx);
  free(hy);
  free(hz);
  nxvk_tensor_free(x);
  nxvk_tensor_free(y);
  nxvk_tensor_free(z);
  nxvk_ctx_close(c);
}

static void test_emu(void) {
  setenv("NXVK_DOT_COOPMAT_EMU", "1", 1);
  for (int b16 = 0; b16 < 2; b16++) {
    nxvk_dtype dt = b16 ? NXVK_BF16 : NXVK_F16;
    emu_product("default layout", dt, 40, 24, 36, false);
    emu_product("default layout", dt, 130, 72, 260, true); /* two row tiles, two column tiles, edges */
  }
  setenv("NXVK_DOT_COOPMAT", "2,2,4,2,32", 1); /* two stages of 128 x 64 (lavapipe's 32 KiB hold them) */
  setenv("NXVK_DOT_COOPMAT_PREFETCH", "2", 1);
  setenv("NXVK_DOT_COOPMAT_GROUP", "2", 1);
  emu_product("2,2,4,2,32 PREFETCH=2 GROUP=2", NXVK_F16, 300, 100, 256, true); /* 3 row tiles regrouped by 2, odd steps */
  emu_product("2,2,4,2,32 PREFETCH=2 GROUP=2", NXVK_BF16, 300, 100, 256, false);
  setenv("NXVK_DOT_COOPMAT", "2,2,4,4,32", 1);
  setenv("NXVK_DOT_COOPMAT_STAGES", "1", 1);
  setenv("NXVK_DOT_COOPMAT_SPLIT", "3", 1);
  emu_product("2,2,4,4,32 STAGES=1 PREFETCH=2 GROUP=2 SPLIT=3", NXVK_F16, 128, 320, 128, false); /* whole tiles, K in 3 chunks */
  emu_product("2,2,4,4,32 STAGES=1 PREFETCH=2 GROUP=2 SPLIT=3", NXVK_BF16, 128, 320, 128, false); /* dot_ksum_f32_bf16 */
  emu_product("2,2,4,4,32 STAGES=1 PREFETCH=2 GROUP=2 SPLIT=3", NXVK_BF16, 128, 320, 128, true);
  unsetenv("NXVK_DOT_COOPMAT");
  unsetenv("NXVK_DOT_COOPMAT_PREFETCH");
  unsetenv("NXVK_DOT_COOPMAT_GROUP");
  unsetenv("NXVK_DOT_COOPMAT_STAGES");
  unsetenv("NXVK_DOT_COOPMAT_SPLIT");
  unsetenv("NXVK_DOT_COOPMAT_EMU");
}

int main(void) {
  test_compile();
  test_device();
  test_emu();
  return tap_done();
}
