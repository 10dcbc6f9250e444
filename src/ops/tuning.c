/*
 * tuning.c - nxvk_ctx_open: the device (src/vk), then every variable that
 * changes how work runs but never what it computes, each read here once and
 * checked against the device and the kernel it steers.  A malformed or
 * unsuitable value is an error naming the variable (bad_request, exit 2),
 * never a silent default: a tuning run must not measure the rule while
 * believing it measured the override.
 */
#include "ops.h"
#include "codegen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A variable's value, NULL when unset or empty. */
static const char *knob(const char *name) {
  const char *v = getenv(name);
  return v && *v ? v : NULL;
}

static int bad(const char *name, const char *v, const char *want) {
  return nxvk_seterr(NXVK_E_BAD_REQUEST, "%s=%.48s%s: %s", name, v, strlen(v) > 48 ? "..." : "", want);
}

/* NAME=a,b,...: from min_n to max_n whole numbers 0..65536 (larger values
 * fit no kernel, and the bound keeps the checks' products in range).
 * Returns how many, 0 when unset. */
static int knob_list(const char *name, uint32_t *out, int min_n, int max_n, const char *want, int *rc) {
  const char *v = knob(name);
  if (!v) return 0;
  int n = 0;
  for (const char *p = v;; p++) {
    if (n == max_n || *p < '0' || *p > '9') break;
    uint32_t x = 0;
    for (; *p >= '0' && *p <= '9'; p++)
      if ((x = x * 10 + (uint32_t)(*p - '0')) > 65536) break;
    if (x > 65536) break;
    out[n++] = x;
    if (*p == '\0') {
      if (n >= min_n) return n;
      break;
    }
    if (*p != ',') break;
  }
  *rc = bad(name, v, want);
  return 0;
}

/* NAME=one of choices; returns its index, -1 when unset. */
static int knob_choice(const char *name, const char *const *choices, int n, const char *want, int *rc) {
  const char *v = knob(name);
  if (!v) return -1;
  for (int i = 0; i < n; i++)
    if (strcmp(v, choices[i]) == 0) return i;
  *rc = bad(name, v, want);
  return -1;
}

static const char *const zero_one[] = {"0", "1"};

static int read_tuning(nxvk_ctx *c, nxvk_tuning *t) {
  int rc = NXVK_OK, i;
  bool gpu = strcmp(c->info.type, "cpu") != 0;
  /* GPUs need several loads in flight per invocation of an elementwise
   * kernel, a workgroup apart so that each round is one contiguous block:
   * of the forms measured, 8 blocked was the one within 10% of PyTorch at
   * every add and exp size (bench/NOTES.md).  CPU devices run workgroups
   * as loops and gain nothing.  CI covers both forms. */
  t->ew_unroll = gpu ? 8 : 1;
  t->ew_blocked = gpu;
  uint32_t u[5];
  if (knob_list("NXVK_EW_UNROLL", u, 1, 1, "want one number from 1 to 8", &rc)) {
    if (u[0] < 1 || u[0] > 8) return bad("NXVK_EW_UNROLL", knob("NXVK_EW_UNROLL"), "want one number from 1 to 8");
    t->ew_unroll = u[0];
  }
  /* kernels of 16-bit elements two a word (codegen.c's paired kernels): 4
   * words a round on GPUs, where an H100 ran f16/bf16 add at 0.88-0.90 /
   * 0.82-0.88 of PyTorch against 0.64-0.65 / 0.67-0.72 with 8 (exp 0.59-0.61
   * against 0.56-0.61; bench/NOTES.md); NXVK_EW_UNROLL sets both,
   * NXVK_EW16_UNROLL these alone */
  t->ew16_unroll = knob("NXVK_EW_UNROLL") ? t->ew_unroll : gpu ? 4 : 1;
  if (knob_list("NXVK_EW16_UNROLL", u, 1, 1, "want one number from 1 to 8", &rc)) {
    if (u[0] < 1 || u[0] > 8) return bad("NXVK_EW16_UNROLL", knob("NXVK_EW16_UNROLL"), "want one number from 1 to 8");
    t->ew16_unroll = u[0];
  }
  /* their workgroup size (0: NXVK_WG, 256) */
  if (knob_list("NXVK_EW16_WG", u, 1, 1, "want 64, 128, 256, 512 or 1024", &rc)) {
    if (u[0] < 64 || u[0] > 1024 || (u[0] & (u[0] - 1)) || u[0] > c->info.max_workgroup_invocations)
      return bad("NXVK_EW16_WG", knob("NXVK_EW16_WG"), "want 64, 128, 256, 512 or 1024 (at most the device's workgroup invocations)");
    t->ew16_wg = u[0];
  }
  if ((i = knob_choice("NXVK_EW_BLOCKED", zero_one, 2, "want 0 or 1", &rc)) >= 0) t->ew_blocked = (uint32_t)i;
  /* the last workgroup of a split reduction adding the partials saves a
   * GPU a dispatch; lavapipe ran it 20-40% slower than two passes */
  t->reduce_fold = gpu;
  if ((i = knob_choice("NXVK_REDUCE_FOLD", zero_one, 2, "want 0 or 1", &rc)) >= 0) t->reduce_fold = i == 1;
  /* f32 (f16, bf16) sums, means and products: the driver's add or multiply
   * with one test a value, an invocation's run again with nxmath's exact
   * ones where a denormal may be met (fast, the rule: the same bits as
   * exact); exact at every element; native (no test), fuzz (a flush
   * emulated) and flush (native with that flush: loses denormal sums) for
   * measuring and testing (reduce.comp ADD) */
  /* contiguous f32, f16 and bf16 runs read as 16-byte vectors, this many a
   * round (0: 4-byte loads, 4 a round); GPUs 4, with at most 512 partials
   * (H100, 13:25: sum 16M / 64M f16 0.950 / 0.998 of torch.sum, bf16 0.852
   * / 0.939, f32 0.984 / 1.006 against 0.924 / 0.979, 0.684 / 0.819, 0.943
   * / 0.957 with 4-byte loads and 1 024; bench/NOTES.md) */
  t->reduce_vec = gpu ? 4 : 0;
  if (knob_list("NXVK_REDUCE_VEC", u, 1, 1, "want 0 to 4 vectors a round", &rc)) {
    if (u[0] > 4) return bad("NXVK_REDUCE_VEC", knob("NXVK_REDUCE_VEC"), "want 0 to 4 vectors a round");
    t->reduce_vec = u[0];
  }
  /* a split reduction's partials at most, and its workgroup size */
  if (knob_list("NXVK_REDUCE_PARTIALS", u, 1, 1, "want a power of two from 16 to 8192", &rc)) {
    if (u[0] < 16 || u[0] > 8192 || (u[0] & (u[0] - 1)))
      return bad("NXVK_REDUCE_PARTIALS", knob("NXVK_REDUCE_PARTIALS"), "want a power of two from 16 to 8192");
    t->reduce_partials = u[0];
  }
  if (knob_list("NXVK_REDUCE_WG", u, 1, 1, "want 64, 128, 256, 512 or 1024", &rc)) {
    if (u[0] < 64 || u[0] > 1024 || (u[0] & (u[0] - 1)) || u[0] > c->info.max_workgroup_invocations)
      return bad("NXVK_REDUCE_WG", knob("NXVK_REDUCE_WG"),
                 "want 64, 128, 256, 512 or 1024 (at most the device's workgroup invocations)");
    t->reduce_wg = u[0];
  }
  static const char *const radds[] = {"exact", "fast", "native", "fuzz", "flush"};
  t->reduce_add = NXVK_SCAN_ADD_FAST;
  if ((i = knob_choice("NXVK_REDUCE_ADD", radds, 5, "want exact, fast, native, fuzz or flush", &rc)) >= 0)
    t->reduce_add = (uint32_t)i;
  /* conv's one-output-per-invocation kernel everywhere (the baseline the
   * implicit GEMM is timed against, and a fault finder) */
  if ((i = knob_choice("NXVK_CONV_DIRECT", zero_one, 2, "want 0 or 1", &rc)) >= 0) t->conv_direct = i == 1;
  knob_list("NXVK_CONV_GEMM", t->conv_gemm, 5, 5, "want NT,TX,RB,CB,BK (five whole numbers)", &rc);
  /* f16 conv on cooperative matrices (conv_coopmat.comp): 0 turns it off
   * (f16 through conv_gemm's f32 copies), five numbers force a layout; the
   * emulation runs the same data flow without tensor cores (lavapipe) */
  int ncm = knob_list("NXVK_CONV_COOPMAT", t->conv_coopmat, 1, 5, "want 0 or WM,WN,FR,FC,BK (five whole numbers)", &rc);
  if (ncm == 1 && t->conv_coopmat[0] == 0) t->conv_coopmat_off = true;
  else if (ncm && ncm != 5) rc = bad("NXVK_CONV_COOPMAT", knob("NXVK_CONV_COOPMAT"), "want 0 or WM,WN,FR,FC,BK (five whole numbers)");
  if (ncm != 5) memset(t->conv_coopmat, 0, sizeof t->conv_coopmat);
  if ((i = knob_choice("NXVK_CONV_COOPMAT_EMU", zero_one, 2, "want 0 or 1", &rc)) >= 0) t->conv_coopmat_emu = i == 1;
  if (rc) return rc;
  rc = nxvk_conv_tuning_check(c, t);
  if (rc) return rc;
  /* sort: 8 bits a radix pass where subgroup ballots and the shared memory
   * allow, else 4; elements per invocation (0: the kernel's own, 16 and 8) */
  static const char *const sort_bits[] = {"4", "8"};
  if (knob_list("NXVK_SORT_ITEMS", u, 1, 1, "want one number from 1 to 32", &rc)) {
    if (u[0] < 1 || u[0] > 32) return bad("NXVK_SORT_ITEMS", knob("NXVK_SORT_ITEMS"), "want one number from 1 to 32");
    t->sort_items = u[0];
  }
  if (rc) return rc;
  t->sort_bits = nxvk_sort8_wg(c, t->sort_items ? t->sort_items : 16) ? 8 : 4;
  if ((i = knob_choice("NXVK_SORT_BITS", sort_bits, 2, "want 4 or 8", &rc)) >= 0) {
    if (i == 1 && t->sort_bits != 8)
      return bad("NXVK_SORT_BITS", knob("NXVK_SORT_BITS"),
                 "this device cannot run the 8-bit sort (subgroup ballots, subgroups of at most 128, shared memory)");
    t->sort_bits = i ? 8 : 4;
  }
  /* scans of contiguous rows: rts (reduce then scan, three passes, subgroup
   * scans, 4-vector loads), lookback (one pass, rts's tiles), one_pass (one
   * pass, shared-memory scans) or the three-pass block scan that reads the
   * input twice (scan.c).  CPU devices
   * take blocks: lavapipe cut long waits for another workgroup short and
   * lost the waiting workgroups' outputs (scan.comp's wait_flag) */
  static const char *const scans[] = {"blocks", "one_pass", "lookback", "rts"};
  static const char *const adds[] = {"exact", "fast", "native", "fuzz"};
  static const char *const passes[] = {"once", "reduce", "scan"};
  knob_list("NXVK_SCAN_WG", &t->scan_wg, 1, 1, "want a workgroup size (64 to 1024, a power of two)", &rc);
  if (rc) return rc;
  if (t->scan_wg && (t->scan_wg < 64 || t->scan_wg > 1024 || (t->scan_wg & (t->scan_wg - 1)) ||
                     !nxvk_scan_lookback_ok(c, t->scan_wg)))
    return bad("NXVK_SCAN_WG", knob("NXVK_SCAN_WG"),
               "want a power of two from 64 to 1024 that this device's look-back scan can take "
               "(whole subgroups of at least 4, at most its workgroup invocations)");
  knob_list("NXVK_SCAN_ITEMS", &t->scan_items, 1, 1, "want elements per invocation (4 to 64, a multiple of 4)", &rc);
  if (rc) return rc;
  if (t->scan_items && (t->scan_items < 4 || t->scan_items > 64 || t->scan_items % 4))
    return bad("NXVK_SCAN_ITEMS", knob("NXVK_SCAN_ITEMS"), "want 4 to 64, a multiple of 4");
  /* GPUs: rts where the device has its subgroup operations (H100, 16M f32:
   * 1 524 GB/s against one_pass's 780 and lookback's 719, bench/NOTES.md),
   * else one_pass */
  t->scan_kind = !gpu ? NXVK_SCAN_BLOCKS
                 : nxvk_scan_lookback_ok(c, t->scan_wg ? t->scan_wg : 256) ? NXVK_SCAN_RTS
                                                                           : NXVK_SCAN_ONE_PASS;
  if ((i = knob_choice("NXVK_SCAN", scans, 4, "want rts, lookback, one_pass or blocks", &rc)) >= 0) {
    if ((i == NXVK_SCAN_LOOKBACK || i == NXVK_SCAN_RTS) && !nxvk_scan_lookback_ok(c, t->scan_wg ? t->scan_wg : 256))
      return bad("NXVK_SCAN", scans[i], "this device lacks subgroup shuffles in compute shaders "
                                        "or subgroups of at least 4");
    t->scan_kind = (uint32_t)i;
  }
  if (rc) return rc;
  /* rts's f32 adds (fast: the driver's, a tile re-run exactly where a
   * denormal may have been flushed; native and fuzz are for measuring and
   * testing) and NXVK_SCAN_PASS, a diagnostic (one pass run 4 more times) */
  t->scan_add = NXVK_SCAN_ADD_FAST;
  if ((i = knob_choice("NXVK_SCAN_ADD", adds, 4, "want exact, fast, native or fuzz", &rc)) >= 0) t->scan_add = (uint32_t)i;
  if ((i = knob_choice("NXVK_SCAN_PASS", passes, 3, "want once, reduce or scan", &rc)) >= 0) t->scan_pass = (uint32_t)i;
  /* NXVK_SCAN_WIDE=0, a diagnostic: cumulative_product and window_product
   * of floats in the dtype's own exponent range (what the wide range costs) */
  if ((i = knob_choice("NXVK_SCAN_WIDE", zero_one, 2, "want 0 or 1", &rc)) >= 0) t->scan_narrow = i == 0;
  if (rc) return rc;
  /* indexed_put: packed (one 64-bit atomicMax of row and value, then a pass
   * over the targets), gather (a 32-bit owner, then a pass over the targets
   * reading the owner's update) or owned (a copy, the owners, then the
   * owning rows store); unset: index.c's rule by sizes */
  static const char *const puts[] = {"packed", "gather", "owned"};
  if ((i = knob_choice("NXVK_SCATTER_PUT", puts, 3, "want packed, gather or owned", &rc)) >= 0) {
    if (i == 0 && !c->info.atomic_i64)
      return bad("NXVK_SCATTER_PUT", "packed", "the device lacks 64-bit atomics (shaderBufferInt64Atomics)");
    t->scatter_put = NXVK_PUT_PACKED + i;
  }
  if (rc) return rc;
  /* f16 conversions in the elementwise kernels and sums: the driver's
   * (packFloat2x16 of an f16vec2, one instruction for two values, against
   * ~20 integer operations each) where the device promises round to
   * nearest even for f16 (with DenormPreserve 16 too: 2, else subnormals
   * in software: 1); the integer ones elsewhere.  Same bits either way. */
  const nxvk_device_info *d = &c->info;
  bool hw_ok = d->f16 && d->float_controls && d->rte_f16;
  int hw = hw_ok ? (d->denorm_preserve_f16 ? 2 : 1) : 0;
  t->f16_cvt = hw;
  static const char *const cvts[] = {"sw", "hw"};
  if ((i = knob_choice("NXVK_F16_CVT", cvts, 2, "want sw or hw", &rc)) >= 0) {
    if (i == 1 && !hw_ok)
      return bad("NXVK_F16_CVT", "hw", "the device does not promise f16 rounding to nearest even "
                                       "(shaderFloat16 and shaderRoundingModeRTEFloat16)");
    t->f16_cvt = i ? hw : 0;
  }
  /* f16 add / subtract / multiply without the f32 denormal tests, f16 and
   * bf16 exp through exp2 with a rare exact path (nx.glsl's nx16_*): the
   * same bits by argument on every device, so on everywhere.  0: the f32
   * functions, for A/B runs; f32: all but f16 add / subtract / multiply
   * kernels in f16 arithmetic (f16x2, where the device promises f16 RTE
   * and subnormals); fuzz: the cheap forms acting as the worst device the
   * Vulkan spec allows (tests). */
  static const char *const ew16s[] = {"0", "arith", "exp", "all", "fuzz", "f32"};
  static const int ew16v[] = {0,
                              NXVK_EW16_ARITH | NXVK_EW16_F16X2,
                              NXVK_EW16_EXP,
                              NXVK_EW16_ARITH | NXVK_EW16_EXP | NXVK_EW16_F16X2,
                              NXVK_EW16_ARITH | NXVK_EW16_EXP | NXVK_EW16_F16X2 | NXVK_EW16_FUZZ,
                              NXVK_EW16_ARITH | NXVK_EW16_EXP};
  t->ew16 = ew16v[3];
  if ((i = knob_choice("NXVK_EW16", ew16s, 6, "want 0, arith, exp, all, f32 or fuzz", &rc)) >= 0) t->ew16 = ew16v[i];
  /* where the cheap forms' exact path runs (codegen.c, NXVK_EW16_SPLIT*):
   * 0 inline, under a branch per element in the unrolled loop; 1 after
   * each round, an invocation's rare words in its own loop; 2 after each
   * round, a workgroup's rare words queued in shared memory and shared out */
  /* GPUs: 2 with vectors, the form that ran every f16/bf16 add and exp
   * cell at 0.93-1.00 of PyTorch on an H100 (0.59-0.89 inline; bench/NOTES.md) */
  static const char *const splits[] = {"0", "1", "2"};
  int split = gpu ? 2 : 0, vec = gpu;
  if ((i = knob_choice("NXVK_EW16_SPLIT", splits, 3, "want 0, 1 or 2", &rc)) >= 0) split = i;
  if (split) t->ew16 |= split == 1 ? NXVK_EW16_SPLIT1 : NXVK_EW16_SPLIT2;
  /* split kernels with contiguous operands: 16-byte vector loads, the
   * round's NXVK_EW16_UNROLL words in whole vectors */
  if ((i = knob_choice("NXVK_EW16_VEC", zero_one, 2, "want 0 or 1", &rc)) >= 0) vec = i;
  if (vec) t->ew16 |= NXVK_EW16_VEC;
  /* a single f16 / bf16 unary op as a lookup in its 65 536-entry table,
   * made by the CPU reference (elementwise.c, shaders/lut16.comp).  GPUs:
   * on for every unary op but exp (elementwise.c's rule: an H100 ran
   * f16/bf16 tanh, log, sin, erf at 0.94-1.01 of PyTorch by table,
   * 0.18-0.34 computed; exp 0.89-0.99 by table and 0.93-0.98 computed, so
   * exp keeps its kernel; bench/NOTES.md);
   * set, the variable takes every unary op (1) or none (0); CPU devices: 0 */
  t->ew16_table = gpu ? 1 : 0;
  t->ew16_table_rule = true;
  if ((i = knob_choice("NXVK_EW16_TABLE", zero_one, 2, "want 0 or 1", &rc)) >= 0) {
    t->ew16_table = i;
    t->ew16_table_rule = false;
  }
  if (rc) return rc;

  knob_list("NXVK_DOT_TILES", t->dot_tiles, 5, 5, "want BM,BN,BK,TM,TN (five whole numbers)", &rc);
  if (knob_list("NXVK_DOT_VEC", t->dot_vec, 3, 4, "want RB,CB,BK[,S] (three or four whole numbers)", &rc) == 3)
    t->dot_vec[3] = 1;
  static const char *const grids[] = {"128", "256"}, *const forms[] = {"kernel", "batch", "copy"};
  if ((i = knob_choice("NXVK_DOT_NT", grids, 2, "want 128 or 256", &rc)) >= 0) t->dot_nt = i ? 256 : 128;
  /* f32 products of whole tiles (M, N, K multiples of the block and the k
   * step) on the vec kernel without bounds tests, launched in groups of
   * row tiles (dot_vec.comp, ALIGNED): off until an H100 measures it faster */
  t->dot_aligned = false;
  t->dot_aligned_set = false;
  if ((i = knob_choice("NXVK_DOT_ALIGNED", zero_one, 2, "want 0 or 1", &rc)) >= 0) {
    t->dot_aligned = i == 1;
    t->dot_aligned_set = true;
  }
  if (knob_list("NXVK_DOT_GROUP", u, 1, 1, "want a number of row tiles from 1 to 64", &rc)) {
    if (u[0] < 1 || u[0] > 64) return bad("NXVK_DOT_GROUP", knob("NXVK_DOT_GROUP"), "want a number of row tiles from 1 to 64");
    t->dot_group = u[0];
  }
  if ((i = knob_choice("NXVK_DOT_FRAG", zero_one, 2, "want 0 or 1", &rc)) >= 0) t->dot_frag = (uint32_t)i;
  /* more forms of that kernel, each tuning only (dot.c, dot_vec.comp): KU k
   * steps unrolled in a loop over the tile's BK (an even divisor of BK; 0:
   * all unrolled), LW grid columns a warp (2, 4, 8 or 16 within the grid),
   * N and K compiled in as specialization constants (CT) */
  if (knob_list("NXVK_DOT_KU", u, 1, 1, "want an even number of k steps from 2 to 32", &rc)) {
    if (u[0] < 2 || u[0] > 32 || u[0] % 2)
      return bad("NXVK_DOT_KU", knob("NXVK_DOT_KU"), "want an even number of k steps from 2 to 32");
    t->dot_ku = u[0];
  }
  if (knob_list("NXVK_DOT_LW", u, 1, 1, "want 2, 4, 8 or 16", &rc)) {
    if (u[0] != 2 && u[0] != 4 && u[0] != 8 && u[0] != 16)
      return bad("NXVK_DOT_LW", knob("NXVK_DOT_LW"), "want 2, 4, 8 or 16");
    t->dot_lw = u[0];
  }
  if ((i = knob_choice("NXVK_DOT_CT", zero_one, 2, "want 0 or 1", &rc)) >= 0) t->dot_ct = i == 1;
  /* XB: the next tile's stores, the barrier and its first reads before the
   * tile's last k step's multiply-adds (2: the last two, with FRAG) */
  static const char *const xbs[] = {"0", "1", "2"};
  if ((i = knob_choice("NXVK_DOT_XB", xbs, 3, "want 0, 1 or 2", &rc)) >= 0) t->dot_xb = (uint32_t)i;
  if (knob_list("NXVK_DOT_XS", u, 1, 1, "want a k step from 0 to 31", &rc)) {
    if (u[0] > 31) return bad("NXVK_DOT_XS", knob("NXVK_DOT_XS"), "want a k step from 0 to 31");
    t->dot_xs = u[0];
  }
  if ((i = knob_choice("NXVK_DOT_SPLIT", forms, 3, "want kernel, batch or copy", &rc)) >= 0)
    snprintf(t->dot_split, sizeof t->dot_split, "%s", forms[i]);
  if (knob_list("NXVK_DOT_COOPMAT", t->dot_coopmat, 5, 8, "want WM,WN,FR,FC,BK[,FM,FN,FK] (five or eight whole numbers)",
                &rc) &&
      !t->dot_coopmat[7] && t->dot_coopmat[5])
    rc = bad("NXVK_DOT_COOPMAT", knob("NXVK_DOT_COOPMAT"), "want WM,WN,FR,FC,BK[,FM,FN,FK] (five or eight whole numbers)");
  if (knob_list("NXVK_DOT_COOPMAT_SPLIT", u, 1, 1, "want one number from 1 to 16", &rc)) {
    if (u[0] < 1 || u[0] > 16)
      return bad("NXVK_DOT_COOPMAT_SPLIT", knob("NXVK_DOT_COOPMAT_SPLIT"), "want one number from 1 to 16");
    t->dot_coopmat_split = u[0];
  }
  if (knob_list("NXVK_DOT_COOPMAT_STAGES", u, 1, 1, "want 1 or 2", &rc)) {
    if (u[0] < 1 || u[0] > 2) return bad("NXVK_DOT_COOPMAT_STAGES", knob("NXVK_DOT_COOPMAT_STAGES"), "want 1 or 2");
    t->dot_coopmat_stages = u[0];
  }
  if (knob_list("NXVK_DOT_COOPMAT_PREFETCH", u, 1, 1, "want 1 or 2", &rc)) {
    if (u[0] < 1 || u[0] > 2) return bad("NXVK_DOT_COOPMAT_PREFETCH", knob("NXVK_DOT_COOPMAT_PREFETCH"), "want 1 or 2");
    t->dot_coopmat_prefetch = u[0];
  }
  if (knob_list("NXVK_DOT_COOPMAT_GROUP", u, 1, 1, "want a number of row tiles from 0 to 64", &rc)) {
    if (u[0] > 64)
      return bad("NXVK_DOT_COOPMAT_GROUP", knob("NXVK_DOT_COOPMAT_GROUP"), "want a number of row tiles from 0 to 64");
    t->dot_coopmat_group = u[0];
  }
  /* dot_mv.comp's layout (dot_mv.c): R,WG,U,S[,D[,P[,T[,B[,C[,H]]]]]], 0 = the rule's; or off */
  if (knob("NXVK_DOT_MV") && strcmp(knob("NXVK_DOT_MV"), "off") == 0) t->dot_mv_off = true;
  else if (knob_list("NXVK_DOT_MV", t->dot_mv, 4, 10, "want R,WG,U,S[,D[,P[,T[,B[,C[,H]]]]]] (0: the rule's) or off", &rc)) {
    const uint32_t *v = t->dot_mv;
    t->dot_mv_on = true;
    if (v[0] > 8 || (v[1] && (v[1] < 32 || v[1] > 1024 || (v[1] & (v[1] - 1)))) || v[2] > 16 || v[3] > 64 || v[4] > 3 ||
        v[5] > 1 || v[6] > 8 || v[7] > 2 || (v[7] == 2 && !v[6]) || (v[8] && v[8] != 1 && v[8] != 2 && v[8] != 4) ||
        (v[8] > 1 && !v[6]) || v[9] > 2 || (v[9] == 2 && !v[6]) || (v[8] == 4 && v[9] == 2))
      return bad("NXVK_DOT_MV", knob("NXVK_DOT_MV"),
                 "R up to 8 rows a subgroup, WG a power of two from 32 to 1024, U up to 16, S up to 64, D 1, 2 or 3, "
                 "P 0 or 1, T up to 8 sub-tiles a tile of B, B 1 or 2 tiles of B (2: with T), C 1, 2 or 4 subgroups "
                 "a row block (with T), H 1 or 2 lane halves (with T, not with C 4) (0: the rule's)");
  }
  /* dot_mvc.comp's layout (dot_mvc.c): W,U,S,WG[,P[,F]], 0 = the rule's; or off */
  if (knob("NXVK_DOT_MVC") && strcmp(knob("NXVK_DOT_MVC"), "off") == 0) t->dot_mvc_mode = 1;
  else if (knob_list("NXVK_DOT_MVC", t->dot_mvc, 4, 6, "want W,U,S,WG[,P[,F]] (0: the rule's) or off", &rc)) {
    const uint32_t *v = t->dot_mvc;
    t->dot_mvc_mode = 2;
    if ((v[0] && v[0] != 1 && v[0] != 2 && v[0] != 4) || (v[1] && (v[1] > 32 || (v[1] & (v[1] - 1)))) || v[2] > 64 ||
        (v[3] && (v[3] < 32 || v[3] > 1024 || (v[3] & (v[3] - 1)))) || (v[4] && v[4] != 1 && v[4] != 2) || v[5] > 3)
      return bad("NXVK_DOT_MVC", knob("NXVK_DOT_MVC"),
                 "W 1, 2 or 4 words a load, U a power of two up to 32 rows in flight, S up to 64 k chunks, "
                 "WG a power of two from 32 to 1024, P 1 (no prefetch) or 2 (the next round's loads first), "
                 "F 1 (split K's chunks summed by the last workgroup), 2 (by a second pass) or 3 (as 1, fresh counts "
                 "zeroed by an update before the kernel); 0: the rule's");
  }
  /* dot_mvcm.comp's layout (dot_mvc.c): FC,PF[,LD[,E[,F[,T]]]], 0 = the rule's; or off */
  if (knob("NXVK_DOT_MVC_CM") && strcmp(knob("NXVK_DOT_MVC_CM"), "off") == 0) t->dot_mvc_cm_mode = 1;
  else if (knob_list("NXVK_DOT_MVC_CM", t->dot_mvc_cm, 2, 6, "want FC,PF[,LD[,E[,F[,T]]]] (0: the rule's) or off",
                     &rc)) {
    const uint32_t *v = t->dot_mvc_cm;
    t->dot_mvc_cm_mode = 2;
    if (v[0] > 16 || (v[0] & (v[0] - 1)) || v[1] > 4 || v[1] == 3 || v[2] > 2 || v[3] > 1 || v[4] > 3 || v[5] > 2)
      return bad("NXVK_DOT_MVC_CM", knob("NXVK_DOT_MVC_CM"),
                 "FC fragments a subgroup a power of two up to 16, PF k steps in flight 1, 2 or 4, LD 1 B's fragments "
                 "straight from memory or 2 through shared memory, E 1 the emulation, F 1 (split K's chunks summed by "
                 "the last workgroup), 2 (by a second pass) or 3 (as 1, fresh counts zeroed by an update before the "
                 "kernel), T 1 the plain form (m = 16) or 2 the transposed one (m = 8 or 16) (0: the rule's)");
  }
  /* dot_mvr.comp's layout (dot_mvr.c): L,R,U,KS[,WG[,S[,P]]], 0 = the rule's (P: 1 loads a round ahead, 2 not); or off */
  if (knob("NXVK_DOT_MVR") && strcmp(knob("NXVK_DOT_MVR"), "off") == 0) t->dot_mvr_off = true;
  else if (knob_list("NXVK_DOT_MVR", t->dot_mvr, 4, 7, "want L,R,U,KS[,WG[,S[,P]]] (0: the rule's) or off", &rc)) {
    const uint32_t *v = t->dot_mvr;
    t->dot_mvr_on = true;
    if ((v[0] & (v[0] - 1)) || v[0] > 32 || v[1] > 8 || v[2] > 8 || (v[3] & (v[3] - 1)) || v[3] > 16 ||
        (v[4] && (v[4] < 32 || v[4] > 1024 || (v[4] & (v[4] - 1)))) || v[5] > 64 || v[6] > 2)
      return bad("NXVK_DOT_MVR", knob("NXVK_DOT_MVR"),
                 "L a power of two up to 32 lanes a row, R up to 8 rows a lane, U up to 8 vectors, KS a power of two "
                 "up to 16 k groups, WG a power of two from 32 to 1024, S up to 64, P 1 (loads a round ahead) or 2 "
                 "(not) (0: the rule's)");
  }
  /* dot_mvb.comp's layout (dot_mvb.c): CG,WG,RB,RU[,S[,F]], 0 = the rule's; or off */
  if (knob("NXVK_DOT_MVB") && strcmp(knob("NXVK_DOT_MVB"), "off") == 0) t->dot_mvb_off = true;
  else if (knob_list("NXVK_DOT_MVB", t->dot_mvb, 4, 6, "want CG,WG,RB,RU[,S[,F]] (0: the rule's) or off", &rc)) {
    const uint32_t *v = t->dot_mvb;
    t->dot_mvb_on = true;
    if (v[0] == 3 || v[0] > 4 || (v[1] && (v[1] < 32 || v[1] > 1024 || (v[1] & (v[1] - 1)))) || v[2] > 256 ||
        v[3] > 8 || v[4] > 64 || v[5] > 2)
      return bad("NXVK_DOT_MVB", knob("NXVK_DOT_MVB"),
                 "CG 1, 2 or 4 column groups a subgroup, WG a power of two from 32 to 1024, RB up to 256 rows a "
                 "workgroup, RU up to 8 rows a step, S up to 64, F 1 (chunks summed by the last workgroup) or 2 (by "
                 "a second pass) (0: the rule's)");
  }
  /* dot_mvrcm.comp (f16 on tensor cores, dot_mvr.c): U,KS[,WG[,S[,E[,LD[,F]]]]], 0 = the rule's; E 1: the
   * emulation; F 1: split K's chunks summed by the last workgroup, 2: by a second pass, 3: as 1 with fresh
   * counts zeroed by an update before the kernel (the form before 2026-11-28, for A/B) */
  if (knob_list("NXVK_DOT_MVR_CM", t->dot_mvr_cm, 2, 7, "want U,KS[,WG[,S[,E[,LD[,F]]]]] (0: the rule's)", &rc)) {
    const uint32_t *v = t->dot_mvr_cm;
    t->dot_mvr_cm_on = true;
    if (v[0] > 8 || (v[1] & (v[1] - 1)) || v[1] > 16 || (v[2] && (v[2] < 32 || v[2] > 1024 || (v[2] & (v[2] - 1)))) ||
        v[3] > 64 || v[4] > 1 || v[5] > 2 || v[6] > 3)
      return bad("NXVK_DOT_MVR_CM", knob("NXVK_DOT_MVR_CM"),
                 "U up to 8 fragments a round, KS a power of two up to 16, WG a power of two from 32 to 1024, S up "
                 "to 64, E 0 or 1, LD 1 (A straight from memory) or 2 (staged), F 1 (chunks summed by the last "
                 "workgroup), 2 (by a second pass) or 3 (as 1, fresh counts zeroed by an update before the kernel) (0: "
                 "the rule's)");
  }
  /* dot_mv.comp's compile-time layouts (1, the default) or its specialization-constant form (0) */
  t->dot_mv_ct = true;
  if ((i = knob_choice("NXVK_DOT_MV_CT", zero_one, 2, "want 0 or 1", &rc)) >= 0) t->dot_mv_ct = i == 1;
  if (knob_list("NXVK_DOT_COOPMAT_ORDER", u, 1, 1, "want 0 to 3", &rc)) {
    if (u[0] > 3) return bad("NXVK_DOT_COOPMAT_ORDER", knob("NXVK_DOT_COOPMAT_ORDER"), "want 0 to 3");
    t->dot_coopmat_order = u[0] + 1;
  }
  if ((i = knob_choice("NXVK_DOT_COOPMAT_EMU", zero_one, 2, "want 0 or 1", &rc)) >= 0) t->dot_coopmat_emu = i == 1;
  if ((i = knob_choice("NXVK_COOPMAT_KHR", zero_one, 2, "want 0 or 1", &rc)) >= 0) t->coopmat_nv = i == 0;
  /* tuning diagnostics whose results are NOT the product (dot_coopmat.comp's DG): for bench --sweep's '~' lines */
  static const char *const diags[] = {"0", "1", "2"};
  if ((i = knob_choice("NXVK_DOT_COOPMAT_DIAG", diags, 3, "want 0, 1 or 2", &rc)) >= 0) t->dot_coopmat_diag = (uint32_t)i;
  if (rc) return rc;
  rc = nxvk_dot_tuning_check(c, t);
  if (rc) return rc;

  /* memory (src/vk/memory.c): the pool's cap, the discrete-GPU transfer
   * paths on any device (so CI on lavapipe covers them), no dedicated
   * allocations (set to anything); submissions (src/vk/submit.c): one
   * vkQueueSubmit and fence each instead of groups */
  const char *v = knob("NXVK_POOL_CAP");
  if (v && nxvk_parse_bytes(v, &c->pool.cap) != 0) return bad("NXVK_POOL_CAP", v, "want a size (nxvk(1) SIZES)");
  if (knob_choice("NXVK_STAGING", zero_one, 2, "want 0 or 1", &rc) == 1) c->host_visible_fast_path = false;
  c->no_dedicated = getenv("NXVK_NO_DEDICATED") != NULL;
  if (knob_choice("NXVK_GROUP_SUBMIT", zero_one, 2, "want 0 or 1", &rc) == 0) c->group_submit = false;
  uint32_t w[1];
  /* group commit: groups one leader submits at most before another leads
   * (more than 1: the others poll for their group's value before blocking) */
  if (knob_list("NXVK_GROUP_ROUNDS", w, 1, 1, "want a number of groups from 1 to 1024", &rc)) {
    if (w[0] < 1 || w[0] > 1024) return bad("NXVK_GROUP_ROUNDS", knob("NXVK_GROUP_ROUNDS"), "want a number of groups from 1 to 1024");
    c->group_rounds = (int)w[0];
  }
  /* queues (src/vk/device.c reads it before making the device): 1 to 16,
   * at most the queue family's count */
  if (knob_list("NXVK_QUEUES", w, 1, 1, "want a number of queues from 1 to 16", &rc) && (w[0] < 1 || w[0] > 16))
    return bad("NXVK_QUEUES", knob("NXVK_QUEUES"), "want a number of queues from 1 to 16");
  /* waits: how long to poll before blocking, and how many threads may poll at once */
  if (knob_list("NXVK_WAIT_SPIN_US", w, 1, 1, "want microseconds from 0 to 10000", &rc)) {
    if (w[0] > 10000) return bad("NXVK_WAIT_SPIN_US", knob("NXVK_WAIT_SPIN_US"), "want microseconds from 0 to 10000");
    c->spin_ns = (uint64_t)w[0] * 1000;
  }
  if (knob_list("NXVK_WAIT_POLL_GAP_US", w, 1, 1, "want microseconds from 0 to 1000", &rc)) {
    if (w[0] > 1000) return bad("NXVK_WAIT_POLL_GAP_US", knob("NXVK_WAIT_POLL_GAP_US"), "want microseconds from 0 to 1000");
    c->poll_gap_ns = (uint64_t)w[0] * 1000;
  }
  if (knob_list("NXVK_WAIT_SPINNERS", w, 1, 1, "want a number of threads from 1 to 1024", &rc)) {
    if (w[0] < 1 || w[0] > 1024) return bad("NXVK_WAIT_SPINNERS", knob("NXVK_WAIT_SPINNERS"), "want a number of threads from 1 to 1024");
    c->max_spinners = (int)w[0];
  }
  /* large transfers: bytes per piece (a whole number of MiB, 1 to 64) and threads at most */
  if ((v = knob("NXVK_XFER_PIECE"))) {
    uint64_t piece = 0;
    if (nxvk_parse_bytes(v, &piece) != 0 || piece < (1u << 20) || piece > (64u << 20) || piece % (1u << 20))
      return bad("NXVK_XFER_PIECE", v, "want a whole number of MiB from 1M to 64M");
    c->xfer_piece = (size_t)piece;
    c->xfer_piece_set = true;
  }
  if (knob_list("NXVK_XFER_THREADS", w, 1, 1, "want a number of threads from 1 to 64", &rc)) {
    if (w[0] < 1 || w[0] > 64) return bad("NXVK_XFER_THREADS", knob("NXVK_XFER_THREADS"), "want a number of threads from 1 to 64");
    c->xfer_threads = (int)w[0];
  }
  /* large transfers: 0, each piece one synchronous submission (the design
   * before the lanes); uploads through uncached (write-combined) staging;
   * the size from which transfers run in pieces on threads (0: every
   * staged transfer, so tests reach the lanes with any size) */
  if ((i = knob_choice("NXVK_XFER_PIPE", zero_one, 2, "want 0 or 1", &rc)) >= 0) c->xfer_pipe = i == 1;
  if ((i = knob_choice("NXVK_XFER_WC", zero_one, 2, "want 0 or 1", &rc)) >= 0) c->xfer_wc = i == 1;
  static const char *const queues[] = {"compute", "transfer", "mixed"};
  if ((i = knob_choice("NXVK_XFER_QUEUE", queues, 3, "want compute, transfer or mixed", &rc)) >= 1) {
    if (c->xfer_family == UINT32_MAX)
      return bad("NXVK_XFER_QUEUE", queues[i], "this device has no transfer-only queue family");
    c->xfer_on_tq = true;
    c->xfer_mixed = i == 2;
  }
  static const char *const copies[] = {"libc", "stream"};
  if ((i = knob_choice("NXVK_XFER_COPY", copies, 2, "want libc or stream", &rc)) >= 0) {
    if (i == 1 && !nxvk_xfer_can_stream())
      return bad("NXVK_XFER_COPY", "stream", "this build has no streaming copy (x86-64 only)");
    c->xfer_stream = i == 1;
  }
  if ((v = knob("NXVK_XFER_MIN"))) {
    uint64_t m = 0;
    if (nxvk_parse_bytes(v, &m) != 0 || m > ((uint64_t)1 << 30))
      return bad("NXVK_XFER_MIN", v, "want a size from 0 to 1G");
    c->xfer_min = (size_t)m;
  }
  /* pinned host memory (nxvk_pinned_alloc, nxvk_host_register): 0 moves it
   * as any host memory (through the lanes' staging), for comparison; the
   * submissions (lanes) a transfer from or into it is split in */
  if ((i = knob_choice("NXVK_XFER_PINNED", zero_one, 2, "want 0 or 1", &rc)) >= 0) c->xfer_pinned = i == 1;
  if (knob_list("NXVK_XFER_PINNED_SPLIT", w, 1, 1, "want a number of submissions from 1 to 16", &rc)) {
    if (w[0] < 1 || w[0] > 16)
      return bad("NXVK_XFER_PINNED_SPLIT", knob("NXVK_XFER_PINNED_SPLIT"), "want a number of submissions from 1 to 16");
    c->xfer_pinned_split = (int)w[0];
  }
  /* 1: barriers only where recorded commands conflict, not after every one */
  if ((i = knob_choice("NXVK_LAZY_BARRIERS", zero_one, 2, "want 0 or 1", &rc)) >= 0) c->lazy_barriers = i == 1;
  /* importing host memory for large transfers: only with NXVK_XFER_IMPORT=1
   * (an H100 moved 6.4 GB/s that way, 24.5 through staging, 2026-11-27) */
  if (knob_choice("NXVK_XFER_IMPORT", zero_one, 2, "want 0 or 1", &rc) != 1) c->import_align = 0;
  return rc;
}

int nxvk_ctx_open(const nxvk_ctx_opts *o, nxvk_ctx **out) {
  *out = NULL;
  nxvk_ctx *c;
  int rc = nxvk_vk_ctx_open(o, &c);
  if (rc) return rc;
  c->tuning = calloc(1, sizeof *c->tuning);
  rc = c->tuning ? read_tuning(c, c->tuning) : nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  if (rc) {
    nxvk_ctx_close(c);
    return rc;
  }
  *out = c;
  return NXVK_OK;
}

bool nxvk_coopmat_khr(const nxvk_ctx *c, bool bf16) {
  if (bf16) return c->info.coopmat_bf16_f32;
  return c->info.coopmat_khr_f16 && !(c->tuning && c->tuning->coopmat_nv && c->info.coopmat_nv_f16);
}

int nxvk_ctx_retune(nxvk_ctx *c) {
  nxvk_tuning *t = calloc(1, sizeof *t);
  if (!t) return nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  /* the checks read c->tuning (as at open, where it is t): t while reading */
  nxvk_tuning *old = c->tuning;
  c->tuning = t;
  int rc = read_tuning(c, t);
  c->tuning = old;
  if (rc == NXVK_OK) *old = *t; /* in place: the pointer others hold stays valid */
  free(t);
  return rc;
}
