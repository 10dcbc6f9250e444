/*
 * rtkernel.c - kernels for the dtypes that are not built in.
 *
 * The build compiles f32 f64 i32 u8 kernels only (the Makefile's DTYPES):
 * 13 dtypes would multiply the embedded SPIR-V (and the build) by ten, for
 * kernels most runs never use.  Any other kernel an op asks for by name
 * ("ew_add_bf16", "copy_f16_i64", "reduce_u16", "iota_bool", "random_f16",
 * "dot_naive_i64", dot's coopmat layouts "dotcm_2x2_4x4_k32_16x16x16_s2_p1_g0_o0_f16[_emu]" (b32 / b16:
 * bf16 inputs) and conv's
 * "convcm_4x2_2x2_k32_16x16x16", "_emu" after it for the emulation)
 * is generated here from the same sources (elementwise.def through the code
 * generator; shaders/copy.comp, reduce.comp, iota.comp, random.comp, dot_naive.comp with the
 * variant's -D defines and their #includes inserted), compiled once through
 * glslang and kept: in the context, and on disk under the SHA-256 of its GLSL
 * in the same cache as fused kernels.
 */
#include "ops.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/sha256.h"
#include "codegen.h"

extern const char nxvk_src_copy[], nxvk_src_reduce[], nxvk_src_iota[], nxvk_src_random[],
    nxvk_src_dot_naive[], nxvk_src_dtype[], nxvk_src_f16[], nxvk_src_scan[], nxvk_src_sort[], nxvk_src_window[],
    nxvk_src_wideprod[], nxvk_src_mvfold[],
    nxvk_src_conv_direct[], nxvk_src_gather[], nxvk_src_scatter[], nxvk_src_index[], nxvk_src_dot_coopmat[],
    nxvk_src_peak_coopmat[], nxvk_src_conv_coopmat[], nxvk_src_dot_mv[], nxvk_src_dot_mvc[], nxvk_src_dot_mvcm[],
    nxvk_src_dot_mvr[], nxvk_src_dot_mvrcm[], nxvk_src_dot_mvb[];

/* name -> content key, for the process (the GLSL of a name never changes) */
typedef struct rt_name {
  char name[64];
  int variant;              /* f16_cvt (the GLSL's NX_F16_HW, 0: none) | fast16 << 4 */
  char key[65];
  char *glsl;               /* kept until its first compile in a context */
  struct rt_name *next;
} rt_name;
static pthread_mutex_t rt_lock = PTHREAD_MUTEX_INITIALIZER;
static rt_name *rt_names;

static bool parse_dtype(const char *s, size_t n, nxvk_dtype *d) {
  char buf[16];
  if (n == 0 || n >= sizeof buf) return false;
  memcpy(buf, s, n);
  buf[n] = 0;
  for (int i = 0; i < NXVK_NDTYPES; i++)
    if (strcmp(buf, nxvk_dtype_name((nxvk_dtype)i)) == 0) {
      *d = (nxvk_dtype)i;
      return true;
    }
  return false;
}

/* Append text with `#include "X"` lines replaced by the embedded X. */
static int append_resolved(char **buf, size_t *len, const char *text) {
  const char *p = text;
  while (*p) {
    const char *eol = strchr(p, '\n');
    size_t n = eol ? (size_t)(eol - p) + 1 : strlen(p);
    const char *ins = NULL;
    if (strncmp(p, "#include \"", 10) == 0) {
      if (strncmp(p + 10, "dtype.glsl\"", 11) == 0) ins = nxvk_src_dtype;
      else if (strncmp(p + 10, "f16.glsl\"", 9) == 0) ins = nxvk_src_f16;
      else if (strncmp(p + 10, "index.glsl\"", 11) == 0) ins = nxvk_src_index;
      else if (strncmp(p + 10, "wideprod.glsl\"", 14) == 0) ins = nxvk_src_wideprod;
      else if (strncmp(p + 10, "mvfold.glsl\"", 12) == 0) ins = nxvk_src_mvfold;
      else if (strncmp(p + 10, "nxmath.glsl\"", 12) == 0) ins = nxvk_glsl_lib;
      else return nxvk_seterr(NXVK_E_BAD_REQUEST, "run-time kernel: unknown include %.40s", p);
    }
    if (ins) {
      int rc = append_resolved(buf, len, ins);
      if (rc) return rc;
    } else {
      char *nb = realloc(*buf, *len + n + 1);
      if (!nb) return nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
      memcpy(nb + *len, p, n);
      *len += n;
      nb[*len] = 0;
      *buf = nb;
    }
    p += n;
  }
  return NXVK_OK;
}

/* A hand-written shader with defines after its #version line. */
static int hand_glsl(const char *src, const char *defines, char **out) {
  const char *body = strchr(src, '\n');
  if (!body) return nxvk_seterr(NXVK_E_BAD_REQUEST, "run-time kernel: empty source");
  body++;
  size_t len = 0;
  char *buf = NULL;
  char head[640];
  snprintf(head, sizeof head, "#version 450\n%s", defines);
  int rc = append_resolved(&buf, &len, head);
  if (rc == NXVK_OK) rc = append_resolved(&buf, &len, body);
  if (rc) {
    free(buf);
    return rc;
  }
  *out = buf;
  return NXVK_OK;
}

/* gather_b<bytes>_<ix>, scatter_{put,owned,ownp,pickg,pickp}_b<bytes>_<ix>
 * and scatter_{owner,add32,add64,addf,addfa,addd}_<ix> (index.c names
 * them; the pick passes read no index: index.c names them _u32). */
static int index_glsl(const char *name, const char *us, nxvk_dtype ix, char **out) {
  if (!nxvk_dtype_is_int(ix)) goto unknown;
  bool gather = strncmp(name, "gather_", 7) == 0;
  const char *mode = name + (gather ? 7 : 8);
  char modes[16] = "", bytes = 0;
  size_t mlen = (size_t)(us - mode);
  if (gather) {
    if (mlen != 2 || mode[0] != 'b') goto unknown;
    bytes = mode[1];
  } else {
    const char *mus = strchr(mode, '_');
    size_t n = (size_t)(mus - mode);
    if (n >= sizeof modes) goto unknown;
    memcpy(modes, mode, n);
    modes[n] = 0;
    bool sized = strcmp(modes, "put") == 0 || strcmp(modes, "owned") == 0 || strcmp(modes, "ownp") == 0 ||
                 strcmp(modes, "pickg") == 0 || strcmp(modes, "pickp") == 0;
    if (!sized && strcmp(modes, "owner") && strcmp(modes, "add32") && strcmp(modes, "add64") &&
        strcmp(modes, "addf") && strcmp(modes, "addfa") && strcmp(modes, "addd"))
      goto unknown;
    if (sized) {
      if (mus + 3 != us || mus[1] != 'b') goto unknown;
      bytes = mus[2];
    } else if (mus != us) {
      goto unknown;
    }
    for (char *q = modes; *q; q++)
      if (*q >= 'a' && *q <= 'z') *q = (char)(*q - 'a' + 'A');
  }
  if (bytes && bytes != '1' && bytes != '2' && bytes != '4' && bytes != '8') goto unknown;
  if (bytes == '8' && (strcmp(modes, "OWNP") == 0 || strcmp(modes, "PICKP") == 0)) goto unknown;
  char defs[128] = "", eb[24] = "";
  if (bytes) snprintf(eb, sizeof eb, "#define EB_%c 1\n", bytes);
  snprintf(defs, sizeof defs, "#define IX_%s 1\n%s%s%s%s", nxvk_dtype_name(ix), eb,
           gather ? "" : "#define OP_", gather ? "" : modes, gather ? "" : " 1\n");
  return hand_glsl(gather ? nxvk_src_gather : nxvk_src_scatter, defs, out);
unknown:
  return nxvk_seterr(NXVK_E_UNSUPPORTED, "no kernel named '%s'", name);
}

/* The define that has an f16 kernel convert through the driver (f16.glsl's
 * NX_F16_HW: 1 or 2, f16_cvt) where on, else nothing. */
static const char *hw_define(bool on, int f16_cvt) {
  return !on ? "" : f16_cvt == 1 ? "#define NX_F16_HW 1\n" : f16_cvt == 2 ? "#define NX_F16_HW 2\n" : "";
}

/* GLSL for a kernel name, or NXVK_E_UNSUPPORTED when the name means nothing;
 * variant: the f16 conversions of ew_*_f16, reduce_f16 and dot's coopmat
 * layouts with f16 results (codegen.h's
 * f16_cvt) | the fast16 forms of ew_*_f16 and ew_*_bf16 << 4. */
static int glsl_for(const char *name, int variant, char **out) {
  *out = NULL;
  int f16_cvt = variant & 15;
  nxvk_dtype d, d2;
  char defs[384];
  const char *us = strrchr(name, '_');
  if (!us) goto unknown;
  if (strncmp(name, "dotcm_", 6) == 0) { /* dot.c's coopmat_name */
    unsigned v[12];
    char res[4] = "", emu[4] = "", tail;
    int n = sscanf(name, "dotcm_%ux%u_%ux%u_k%u_%ux%ux%u_s%u_p%u_g%u_o%u_%3[fbk0-9]_%3s%c", &v[0], &v[1], &v[2],
                   &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10], &v[11], res, emu, &tail);
    /* the result: f32 / f16 (f16 inputs, or f32 rounded to f16), k32 / k16
     * (the same as a KHR kernel), b32 / b16 (bf16 inputs: f32 or bf16
     * results); the suffix: "emu" (the emulation) or "dg1" / "dg2" (the
     * diagnostics, DG) */
    bool is_emu = n == 14 && strcmp(emu, "emu") == 0, dg = n == 14 && (!strcmp(emu, "dg1") || !strcmp(emu, "dg2"));
    bool bf = res[0] == 'b', khr16 = res[0] == 'k';
    if ((n != 13 && !is_emu && !dg) || (khr16 && is_emu) ||
        (strcmp(res, "f32") && strcmp(res, "f16") && strcmp(res, "b32") && strcmp(res, "b16") && strcmp(res, "k32") &&
         strcmp(res, "k16")) ||
        v[8] < 1 ||
        v[8] > 2 || v[9] < 1 || v[9] > 2 || v[10] > 64 || v[11] > 3)
      goto unknown;
    char canon[96]; /* nothing after, no signs or zeros ahead */
    snprintf(canon, sizeof canon, "dotcm_%ux%u_%ux%u_k%u_%ux%ux%u_s%u_p%u_g%u_o%u_%s%s%s", v[0], v[1], v[2], v[3],
             v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], res, n == 14 ? "_" : "", n == 14 ? emu : "");
    if (strcmp(canon, name) != 0) goto unknown;
    /* bf16 on tensor cores: spirv_khr.c rewrites the SPIR-V of GLSL with
     * this line into VK_KHR_cooperative_matrix with bf16 A and B (not the
     * emulation's: it has no cooperative matrices) */
    snprintf(defs, sizeof defs,
             "#define WM %uu\n#define WN %uu\n#define FR %uu\n#define FC %uu\n#define BK %uu\n#define FM %uu\n"
             "#define FN %uu\n#define FK %uu\n#define ST %u\n#define PF %u\n#define GM %u\n#define OR %u\n%s%s%s%s%s",
             v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11],
             res[1] == '3' ? "" : bf ? "#define OUT_BF16 1\n" : "#define OUT_F16 1\n",
             hw_define(res[1] != '3' && !bf, f16_cvt), /* f16 results by the driver's conversions */
             khr16 ? "#define NXVK_SPIRV_KHR 1\n"
             : !bf ? ""
             : is_emu ? "#define IN_BF16 1\n"
                      : "#define IN_BF16 1\n#define NXVK_SPIRV_KHR_BF16 1\n",
             is_emu ? "#define CM_EMU 1\n" : "", !dg ? "" : emu[2] == '1' ? "#define DG 1\n" : "#define DG 2\n");
    return hand_glsl(nxvk_src_dot_coopmat, defs, out);
  }
  if (strncmp(name, "convcm_", 7) == 0) { /* conv.c's cm_name */
    unsigned v[8];
    char emu[4] = "", tail;
    int n = sscanf(name, "convcm_%ux%u_%ux%u_k%u_%ux%ux%u_%3s%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
                   &v[7], emu, &tail);
    char canon[64];
    snprintf(canon, sizeof canon, "convcm_%ux%u_%ux%u_k%u_%ux%ux%u%s", v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7],
             n == 9 ? "_emu" : "");
    if ((n != 8 && n != 9) || strcmp(canon, name) != 0) goto unknown; /* nothing after, no signs or zeros ahead */
    snprintf(defs, sizeof defs,
             "#define WM %uu\n#define WN %uu\n#define FR %uu\n#define FC %uu\n#define BK %uu\n#define FM %uu\n"
             "#define FN %uu\n#define FK %uu\n%s%s",
             v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], n == 9 ? "#define CM_EMU 1\n" : "",
             hw_define(true, f16_cvt)); /* f16 results by the driver's conversions */
    return hand_glsl(nxvk_src_conv_coopmat, defs, out);
  }
  if (strncmp(name, "peakcm_", 7) == 0) { /* bench peak's tensor-core rate (bench_peak.c) */
    unsigned v[3];
    char ty[5], tail;
    if (sscanf(name, "peakcm_%ux%ux%u_%4s%c", &v[0], &v[1], &v[2], ty, &tail) != 4 ||
        (strcmp(ty, "f16") != 0 && strcmp(ty, "s8") != 0 && strcmp(ty, "bf16") != 0 && strcmp(ty, "f16k") != 0))
      goto unknown;
    snprintf(defs, sizeof defs, "#define FM %uu\n#define FN %uu\n#define FK %uu\n%s", v[0], v[1], v[2],
             ty[0] == 's'   ? "#define INT8 1\n"
             : ty[0] == 'b' ? "#define BF16 1\n#define NXVK_SPIRV_KHR_BF16 1\n"
             : ty[3] == 'k' ? "#define KHR16 1\n#define NXVK_SPIRV_KHR 1\n"
                            : "");
    return hand_glsl(nxvk_src_peak_coopmat, defs, out);
  }
  if (strncmp(name, "ew_", 3) == 0 && parse_dtype(us + 1, strlen(us + 1), &d)) {
    char opname[40];
    size_t n = (size_t)(us - (name + 3));
    if (n >= sizeof opname) goto unknown;
    memcpy(opname, name + 3, n);
    opname[n] = 0;
    const nxvk_op_desc *op = nxvk_op_find(opname);
    if (!op || op->kind > NXVK_KIND_SELECT || !(op->dtypes & NXVK_DT(d))) goto unknown;
    nxvk_cg_program p = {0};
    p.ninputs = op->arity;
    for (int k = 0; k < p.ninputs; k++) p.in_dtype[k] = d;
    if (op->kind == NXVK_KIND_SELECT) p.in_dtype[0] = NXVK_U8; /* bool has the same bytes */
    p.nnodes = 1;
    p.node[0].op = op;
    p.node[0].dtype = d;
    for (int k = 0; k < p.ninputs; k++) p.node[0].arg[k] = k;
    p.noutputs = 1;
    p.output[0] = p.ninputs;
    p.f16_cvt = f16_cvt;
    p.fast16 = variant >> 4;
    return nxvk_cg_glsl(&p, nxvk_glsl_lib, out);
  }
  if (strncmp(name, "copy_", 5) == 0) {
    const char *a = name + 5, *mid = strchr(a, '_');
    if (!mid || !parse_dtype(a, (size_t)(mid - a), &d) || !parse_dtype(mid + 1, strlen(mid + 1), &d2))
      goto unknown;
    snprintf(defs, sizeof defs, "#define SRC_%s 1\n#define DST_%s 1\n%s", nxvk_dtype_name(d),
             nxvk_dtype_name(d2), d == d2 ? "#define SAME_DTYPE 1\n" : "");
    return hand_glsl(nxvk_src_copy, defs, out);
  }
  if (!parse_dtype(us + 1, strlen(us + 1), &d)) goto unknown;
  if (strncmp(name, "gather_", 7) == 0 || strncmp(name, "scatter_", 8) == 0)
    return index_glsl(name, us, d, out);
  size_t stem = (size_t)(us - name);
  if ((stem == 6 && strncmp(name, "reduce", 6) == 0) || (stem == 9 && strncmp(name, "argreduce", 9) == 0)) {
    snprintf(defs, sizeof defs, "#define DT_%s 1\n%s%s", nxvk_dtype_name(d), stem == 9 ? "#define ARG 1\n" : "",
             hw_define(d == NXVK_F16 && stem == 6, f16_cvt));
    return hand_glsl(nxvk_src_reduce, defs, out);
  }
  if ((stem == 9 && strncmp(name, "dot_naive", 9) == 0) ||
      (stem == 11 && strncmp(name, "dot_naive32", 11) == 0 && (d == NXVK_F16 || d == NXVK_BF16))) {
    snprintf(defs, sizeof defs, "#define DT_%s 1\n%s", nxvk_dtype_name(d), stem == 11 ? "#define OUT_F32 1\n" : "");
    return hand_glsl(nxvk_src_dot_naive, defs, out);
  }
  if (strncmp(name, "dot_mvcm", 8) == 0 && (d == NXVK_F16 || d == NXVK_BF16)) {
    /* dot_mvc.c's tensor-core form: dot_mvcm[32]_f<FM>x<FN>x<FK>c<FC>p<PF>l<LD>[e|k]_{f16,bf16} (e: its emulation;
     * k: f16 as a KHR kernel; bf16 is one always, but for the emulation); the transposed form (TR, C^T = B^T A^T)
     * dot_mvcm[32]_t<FN>x<FM>x<FK>..., the device's configuration with B's FN columns as its rows, A's FM rows (8
     * or 16) as its columns; z after l1: fewer rows of A than FM, A^T staged with zero columns (PA) */
    const char *p = name + 8;
    bool o32 = strncmp(p, "32", 2) == 0;
    if (o32) p += 2;
    unsigned fm, fn, fk, fc, pf, ld, f1, f2;
    char canon[64], form = 0;
    int at = 0;
    if (sscanf(p, "_%c%ux%ux%uc%up%ul%u%n", &form, &f1, &f2, &fk, &fc, &pf, &ld, &at) != 7 ||
        (form != 'f' && form != 't'))
      goto unknown;
    bool tr = form == 't';
    fm = tr ? f2 : f1, fn = tr ? f1 : f2;
    bool pa = p[at] == 'z';
    if (pa) at++;
    bool emu = p[at] == 'e', khr = p[at] == 'k', bf = d == NXVK_BF16;
    snprintf(canon, sizeof canon, "dot_mvcm%s_%c%ux%ux%uc%up%ul%u%s%s_%s", o32 ? "32" : "", form, f1, f2, fk, fc, pf,
             ld, pa ? "z" : "", emu ? "e" : khr ? "k" : "", nxvk_dtype_name(d));
    if (strcmp(canon, name) != 0 || (khr && bf) || (tr ? fm != 8 && fm != 16 : fm != 16) || fn < 8 || fn > 64 ||
        fn % 8 || fk < 8 || fk > 64 || fk % 8 || fc < 1 || fc > 16 || (fc & (fc - 1)) ||
        (pf != 1 && pf != 2 && pf != 4) || ld > 1 || (ld && fk * fc * fn / 8 % 32) || fm * fn % 32 ||
        (pa && (!tr || !ld || fm * fk / 8 > 32)))
      goto unknown;
    /* bf16 and k on tensor cores: spirv_khr.c rewrites the SPIR-V of GLSL with these lines */
    snprintf(defs, sizeof defs,
             "#define FM %uu\n#define FN %uu\n#define FK %uu\n#define FC %uu\n#define PF %uu\n"
             "#define LD %u\n%s%s%s%s%s",
             fm, fn, fk, fc, pf, ld, tr ? "#define TR 1\n" : "", pa ? "#define PA 1\n" : "",
             o32 ? "#define OUT_F32 1\n" : "", emu ? "#define CM_EMU 1\n" : "",
             khr        ? "#define NXVK_SPIRV_KHR 1\n"
             : !bf      ? ""
             : emu      ? "#define IN_BF16 1\n"
                        : "#define IN_BF16 1\n#define NXVK_SPIRV_KHR_BF16 1\n");
    return hand_glsl(nxvk_src_dot_mvcm, defs, out);
  }
  if (strncmp(name, "dot_mvc", 7) == 0 && (d == NXVK_F32 || d == NXVK_F16 || d == NXVK_BF16)) {
    /* dot_mvc.c's layouts: dot_mvc[32]_n<NB>w<W>u<U>p<P>[a]_<dt> (32: f32 results of 16-bit inputs) */
    const char *p = name + 7;
    bool o32 = strncmp(p, "32", 2) == 0;
    if (o32) p += 2;
    unsigned nb, w, u, pf;
    int at = 0;
    char canon[64];
    if (sscanf(p, "_n%uw%uu%up%u%n", &nb, &w, &u, &pf, &at) != 4) goto unknown;
    bool al = p[at] == 'a';
    snprintf(canon, sizeof canon, "dot_mvc%s_n%uw%uu%up%u%s_%s", o32 ? "32" : "", nb, w, u, pf, al ? "a" : "",
             nxvk_dtype_name(d));
    if (strcmp(canon, name) != 0 || (o32 && d == NXVK_F32) || nb < 1 || nb > 16 || (w != 1 && w != 2 && w != 4) ||
        u < 1 || u > 32 || (u & (u - 1)) || pf > 1)
      goto unknown;
    const char *hw = hw_define(d == NXVK_F16, f16_cvt);
    snprintf(defs, sizeof defs, "#define DT_%s 1\n%s#define CT_NB %uu\n#define CT_W %u\n#define CT_U %uu\n"
             "#define CT_P %u\n#define CT_AL %u\n%s", nxvk_dtype_name(d), o32 ? "#define OUT_F32 1\n" : "", nb, w, u,
             pf, al ? 1u : 0u, hw);
    return hand_glsl(nxvk_src_dot_mvc, defs, out);
  }
  if (strncmp(name, "dot_mvk_", 8) == 0 && (d == NXVK_F32 || d == NXVK_F16 || d == NXVK_BF16)) {
    /* dot_mv.c's compile-time layouts: dot_mvk_{rows,cols}[32]_n<NB>r<R>u<U>d<BD>[p1][t<T>[b2][c<CG>][h2]]_<dt>
     * (p1: rows, prefetch; t<T>: rows, B's tile of T sub-tiles, 1 to 8; b2: two such tiles; c2 / c4: B's
     * columns split over 2 or 4 subgroups on the same rows; h2: over the two halves of a subgroup's lanes) */
    char form[8], canon[96], tsfx[24] = "";
    unsigned nb, rr, uu, bd, pf = 0, tt = 0, b2 = 0, cg = 1, lh = 1;
    int at = 0, at2 = 0;
    if (sscanf(name, "dot_mvk_%6[rowscl32]_n%ur%uu%ud%u%n", form, &nb, &rr, &uu, &bd, &at) != 5) goto unknown;
    if (name[at] == 'p') pf = 1, at += 2;
    if (name[at] == 't' && sscanf(name + at, "t%u%n", &tt, &at2) == 1 && tt >= 1 && tt <= 8) {
      at += at2;
      if (strncmp(name + at, "b2", 2) == 0) b2 = 1, at += 2;
      if (name[at] == 'c' && (name[at + 1] == '2' || name[at + 1] == '4')) cg = (unsigned)(name[at + 1] - '0'), at += 2;
      if (strncmp(name + at, "h2", 2) == 0) lh = 2;
      char csfx[4] = "";
      if (cg > 1) snprintf(csfx, sizeof csfx, "c%u", cg);
      snprintf(tsfx, sizeof tsfx, "t%u%s%s%s", tt, b2 ? "b2" : "", csfx, lh == 2 ? "h2" : "");
    }
    snprintf(canon, sizeof canon, "dot_mvk_%s_n%ur%uu%ud%u%s%s_%s", form, nb, rr, uu, bd, pf ? "p1" : "", tsfx,
             nxvk_dtype_name(d));
    bool rows = strncmp(form, "rows", 4) == 0, o32 = form[4] == '3';
    if (strcmp(canon, name) != 0 || (!rows && strncmp(form, "cols", 4) != 0) || (form[4] && strcmp(form + 4, "32")) ||
        (o32 && d == NXVK_F32) || nb < 1 || nb > 16 || rr < 1 || rr > 8 || uu < 1 || uu > 16 || bd > 2 ||
        (bd && (!rows || nb != 1)) || (pf && !rows) || (tt && (!rows || bd)))
      goto unknown;
    const char *hw = hw_define(d == NXVK_F16, f16_cvt);
    snprintf(defs, sizeof defs, "#define DT_%s 1\n#define %s 1\n%s#define CT_NB %uu\n#define CT_R %uu\n"
             "#define CT_U %uu\n#define CT_BD %u\n#define CT_PF %u\n#define CT_T %u\n#define CT_B2 %u\n"
             "#define CT_CG %uu\n#define CT_LH %uu\n%s",
             nxvk_dtype_name(d), rows ? "ROWS" : "COLS", o32 ? "#define OUT_F32 1\n" : "", nb, rr, uu, bd, pf, tt, b2, cg,
             lh, hw);
    return hand_glsl(nxvk_src_dot_mv, defs, out);
  }
  if (strncmp(name, "dot_mvb_", 8) == 0 && d == NXVK_F32) {
    /* dot_mvb.c's layouts: dot_mvb_n<NB>g<CG>r<RB>u<RU>w<WG>s<SG>_f32 */
    unsigned nb, cg, rb, ru, wg, sg;
    char canon[64];
    if (sscanf(name + 8, "n%ug%ur%uu%uw%us%u", &nb, &cg, &rb, &ru, &wg, &sg) != 6) goto unknown;
    snprintf(canon, sizeof canon, "dot_mvb_n%ug%ur%uu%uw%us%u_f32", nb, cg, rb, ru, wg, sg);
    if (strcmp(canon, name) != 0 || nb < 1 || nb > 16 || (cg != 1 && cg != 2 && cg != 4) || rb < 1 || rb > 256 ||
        ru < 1 || ru > 8 || sg < 4 || sg > 128 || (sg & (sg - 1)) || sg < cg || wg < sg || wg > 1024 ||
        (wg & (wg - 1)))
      goto unknown;
    snprintf(defs, sizeof defs, "#define CT_NB %uu\n#define CT_CG %uu\n#define CT_RB %uu\n#define CT_RU %uu\n"
             "#define CT_WG %u\n#define CT_SG %uu\n", nb, cg, rb, ru, wg, sg);
    return hand_glsl(nxvk_src_dot_mvb, defs, out);
  }
  if (strncmp(name, "dot_mvrcm", 9) == 0 && (d == NXVK_F16 || d == NXVK_BF16)) {
    /* dot_mvr.c's tensor-core form: dot_mvrcm[32]_n<NB>f<FM>x<FN>x<FK>u<U>k<KS>w<WG>a<LD>[e|k]_{f16,bf16} (e: the
     * emulation; k: f16 as a KHR kernel; bf16 is one always, but for the emulation) */
    unsigned nb, fm, fn, fk, uu, ks, wg, ld;
    int at = 0;
    char canon[80];
    bool o32 = strncmp(name, "dot_mvrcm32_", 12) == 0;
    if (sscanf(name + (o32 ? 12 : 10), "n%uf%ux%ux%uu%uk%uw%ua%u%n", &nb, &fm, &fn, &fk, &uu, &ks, &wg, &ld, &at) != 8)
      goto unknown;
    char sfx = name[(o32 ? 12 : 10) + at];
    bool emu = sfx == 'e', khr = sfx == 'k', bf = d == NXVK_BF16;
    snprintf(canon, sizeof canon, "dot_mvrcm%s_n%uf%ux%ux%uu%uk%uw%ua%u%s_%s", o32 ? "32" : "", nb, fm, fn, fk, uu,
             ks, wg, ld, emu ? "e" : khr ? "k" : "", nxvk_dtype_name(d));
    if (strcmp(canon, name) != 0 || (khr && bf) || nb < 1 || nb > 16 || fm < 8 || fm > 32 || fn < 8 || fn > 32 || fk < 8 ||
        fk > 32 || fn % 8 || fk % 8 || (fm * fn) % 32 || uu < 1 || uu > 8 || ks < 1 || ks > 16 || (ks & (ks - 1)) ||
        wg < 32 || wg > 1024 || wg % (32 * ks) || ld < 1 || ld > 2)
      goto unknown;
    /* bf16 and k on tensor cores: spirv_khr.c rewrites the SPIR-V of GLSL with these lines */
    snprintf(defs, sizeof defs, "%s%s%s#define CT_LD %uu\n#define CT_NB %uu\n#define CT_FM %uu\n#define CT_FN %uu\n"
             "#define CT_FK %uu\n#define CT_U %uu\n#define CT_KS %uu\n#define CT_WG %u\n", o32 ? "#define OUT_F32 1\n" : "",
             emu ? "#define CM_EMU 1\n" : "",
             khr        ? "#define NXVK_SPIRV_KHR 1\n"
             : !bf      ? ""
             : emu      ? "#define IN_BF16 1\n"
                        : "#define IN_BF16 1\n#define NXVK_SPIRV_KHR_BF16 1\n",
             ld, nb, fm, fn, fk, uu, ks, wg);
    return hand_glsl(nxvk_src_dot_mvrcm, defs, out);
  }
  if (strncmp(name, "dot_mvr", 7) == 0 && (d == NXVK_F32 || d == NXVK_F16 || d == NXVK_BF16)) {
    /* dot_mvr.c's layouts: dot_mvr[32]_n<NB>l<L>r<R>u<U>k<KS>w<WG>p<PF>_<dt> (32: f32 results of 16-bit inputs) */
    unsigned nb, ll, rr, uu, ks, wg, pf;
    char canon[64];
    bool o32 = strncmp(name, "dot_mvr32_", 10) == 0;
    if (sscanf(name + (o32 ? 10 : 8), "n%ul%ur%uu%uk%uw%up%u", &nb, &ll, &rr, &uu, &ks, &wg, &pf) != 7) goto unknown;
    snprintf(canon, sizeof canon, "dot_mvr%s_n%ul%ur%uu%uk%uw%up%u_%s", o32 ? "32" : "", nb, ll, rr, uu, ks, wg, pf,
             nxvk_dtype_name(d));
    if (strcmp(canon, name) != 0 || (o32 && d == NXVK_F32) || nb < 2 || nb > 16 || ll < 1 || ll > 32 ||
        (ll & (ll - 1)) || rr < 1 || rr > 8 || uu < 1 || uu > 8 || ks < 1 || ks > 16 || (ks & (ks - 1)) || wg < 32 ||
        wg > 1024 || (wg & (wg - 1)) || pf > 1)
      goto unknown;
    const char *hw = hw_define(d == NXVK_F16, f16_cvt);
    snprintf(defs, sizeof defs, "#define DT_%s 1\n%s#define CT_NB %uu\n#define CT_L %uu\n#define CT_R %uu\n"
             "#define CT_U %uu\n#define CT_KS %u\n#define CT_WG %u\n#define CT_PF %u\n%s", nxvk_dtype_name(d),
             o32 ? "#define OUT_F32 1\n" : "", nb, ll, rr, uu, ks, wg, pf, hw);
    return hand_glsl(nxvk_src_dot_mvr, defs, out);
  }
  if (strncmp(name, "dot_mv_", 7) == 0 && (d == NXVK_F32 || d == NXVK_F16 || d == NXVK_BF16)) {
    /* dot.c's dot_mv: dot_mv_{rows,cols}[32]_<dt> (32: f32 results of 16-bit inputs), dot_mv_sum_<out dt> */
    static const char *const forms[] = {"rows", "cols", "rows32", "cols32", "sum"};
    static const char *const defines[] = {"#define ROWS 1\n", "#define COLS 1\n", "#define ROWS 1\n#define OUT_F32 1\n",
                                          "#define COLS 1\n#define OUT_F32 1\n", "#define SUM 1\n"};
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++)
      if (stem == 7 + strlen(forms[i]) && strncmp(name + 7, forms[i], strlen(forms[i])) == 0 &&
          !(i >= 2 && i <= 3 && d == NXVK_F32)) {
        const char *hw = hw_define(d == NXVK_F16, f16_cvt);
        snprintf(defs, sizeof defs, "#define DT_%s 1\n%s%s", nxvk_dtype_name(d), defines[i], hw);
        return hand_glsl(nxvk_src_dot_mv, defs, out);
      }
    goto unknown;
  }
  if ((stem == 4 && strncmp(name, "scan", 4) == 0) || (stem == 6 && strncmp(name, "scanlb", 6) == 0)) {
    snprintf(defs, sizeof defs, "#define DT_%s 1\n%s", nxvk_dtype_name(d), stem == 6 ? "#define LOOKBACK 1\n" : "");
    return hand_glsl(nxvk_src_scan, defs, out);
  }
  if ((stem == 4 && strncmp(name, "sort", 4) == 0) || (stem == 5 && strncmp(name, "sort8", 5) == 0)) {
    snprintf(defs, sizeof defs, "#define DT_%s 1\n%s", nxvk_dtype_name(d), stem == 5 ? "#define RADIX8 1\n" : "");
    return hand_glsl(nxvk_src_sort, defs, out);
  }
  if ((stem == 6 && strncmp(name, "window", 6) == 0) || (stem == 8 && strncmp(name, "wscatter", 8) == 0)) {
    snprintf(defs, sizeof defs, "#define DT_%s 1\n%s", nxvk_dtype_name(d), stem == 8 ? "#define SCATTER 1\n" : "");
    return hand_glsl(nxvk_src_window, defs, out);
  }
  /* products of floats with a wide exponent range (wideprod.glsl) */
  if (((stem == 5 && strncmp(name, "scanw", 5) == 0) || (stem == 7 && strncmp(name, "windoww", 7) == 0)) &&
      nxvk_dtype_is_float(d)) {
    snprintf(defs, sizeof defs, "#define DT_%s 1\n#define WIDE 1\n", nxvk_dtype_name(d));
    return hand_glsl(stem == 5 ? nxvk_src_scan : nxvk_src_window, defs, out);
  }
  if (stem == 11 && strncmp(name, "conv_direct", 11) == 0 && nxvk_dtype_is_float(d)) {
    snprintf(defs, sizeof defs, "#define DT_%s 1\n", nxvk_dtype_name(d));
    return hand_glsl(nxvk_src_conv_direct, defs, out);
  }
  if (stem == 4 && strncmp(name, "iota", 4) == 0) {
    snprintf(defs, sizeof defs, "#define DT_%s 1\n", nxvk_dtype_name(d));
    return hand_glsl(nxvk_src_iota, defs, out);
  }
  if (stem == 6 && strncmp(name, "random", 6) == 0 && nxvk_dtype_is_float(d)) {
    snprintf(defs, sizeof defs, "#define DT_%s 1\n", nxvk_dtype_name(d));
    return hand_glsl(nxvk_src_random, defs, out);
  }
unknown:
  return nxvk_seterr(NXVK_E_UNSUPPORTED, "no kernel named '%s'", name);
}

int nxvk_rt_kernel_glsl(const char *name, char **glsl) { return glsl_for(name, 0, glsl); }

/* The name's entry (GLSL and key made on first use). */
static int lookup(const char *name, int variant, rt_name **out) {
  pthread_mutex_lock(&rt_lock);
  for (rt_name *e = rt_names; e; e = e->next)
    if (strcmp(e->name, name) == 0 && e->variant == variant) {
      pthread_mutex_unlock(&rt_lock);
      *out = e;
      return NXVK_OK;
    }
  pthread_mutex_unlock(&rt_lock);
  if (strlen(name) >= sizeof rt_names->name)
    return nxvk_seterr(NXVK_E_UNSUPPORTED, "no kernel named '%.60s'", name);
  char *glsl;
  int rc = glsl_for(name, variant, &glsl);
  if (rc) return rc;
  rt_name *e = calloc(1, sizeof *e);
  if (!e) {
    free(glsl);
    return nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  }
  snprintf(e->name, sizeof e->name, "%s", name);
  e->variant = variant;
  uint8_t dg[NXVK_SHA256_BYTES];
  nxvk_sha256(glsl, strlen(glsl), dg);
  nxvk_sha256_hex(dg, e->key);
  e->glsl = glsl;
  pthread_mutex_lock(&rt_lock);
  for (rt_name *o = rt_names; o; o = o->next)
    if (strcmp(o->name, name) == 0 && o->variant == variant) { /* another thread made it meanwhile */
      pthread_mutex_unlock(&rt_lock);
      free(e->glsl);
      free(e);
      *out = o;
      return NXVK_OK;
    }
  e->next = rt_names;
  rt_names = e;
  pthread_mutex_unlock(&rt_lock);
  *out = e;
  return NXVK_OK;
}

int nxvk_rt_kernel_get(nxvk_ctx *c, const char *name, const uint32_t *spec, int nspec, int nbuffers,
                       nxvk_kernel **k) {
  rt_name *e = NULL;
  /* only f16 kernels differ by NXVK_F16_CVT, only f16 and bf16 elementwise
   * kernels by NXVK_EW16: one entry for every other name */
  size_t len = strlen(name);
  bool f16 = len > 4 && strcmp(name + len - 4, "_f16") == 0, bf16 = len > 5 && strcmp(name + len - 5, "_bf16") == 0;
  /* dot's coopmat layouts with f16 results (f16, k16; the emulation's too) */
  f16 |= strncmp(name, "dotcm_", 6) == 0 && (strstr(name, "_f16") || strstr(name, "_k16"));
  f16 |= strncmp(name, "convcm_", 7) == 0; /* f16 results always */
  int variant = f16 && c->tuning ? c->tuning->f16_cvt : 0;
  if ((f16 || bf16) && strncmp(name, "ew_", 3) == 0 && c->tuning) variant |= c->tuning->ew16 << 4;
  int rc = lookup(name, variant, &e);
  if (rc) return rc;
  rc = nxvk_kernel_get_spirv(c, e->key, NULL, 0, spec, nspec, nbuffers, k);
  if (rc || *k) return rc;
  uint32_t *words = NULL;
  size_t bytes = 0;
  if (c->cache_dir) {
    char why[160];
    nxvk_cache_spirv_load(c->cache_dir, e->key, &words, &bytes, why, sizeof why);
  }
  if (!words) {
    rc = nxvk_glsl_compile(e->glsl, name, &words, &bytes);
    if (rc) return rc;
    /* a cache that cannot be written costs time, not results */
    if (c->cache_dir) (void)nxvk_cache_spirv_store(c->cache_dir, e->key, words, bytes);
  }
  /* tensor-core kernels written for NV cooperative matrices and run as KHR
   * ones (bf16 fragments: NXVK_SPIRV_KHR_BF16; spirv_khr.c); the cache keeps
   * glslang's words, so that the pass's own changes need no new key */
  bool khr_bf16 = strstr(e->glsl, "\n#define NXVK_SPIRV_KHR_BF16 1\n") != NULL;
  if (khr_bf16 || strstr(e->glsl, "\n#define NXVK_SPIRV_KHR 1\n"))
    rc = nxvk_spirv_coopmat_khr(&words, &bytes, khr_bf16);
  if (rc == NXVK_OK) rc = nxvk_kernel_get_spirv(c, e->key, words, bytes, spec, nspec, nbuffers, k);
  free(words);
  if (rc == NXVK_OK && *k) {
    /* threads compiling the same kernel race here; the stats report reads it under the same lock */
    pthread_mutex_lock(&c->kernel_lock);
    if (!(*k)->rt_name[0]) snprintf((*k)->rt_name, sizeof (*k)->rt_name, "%s", name);
    pthread_mutex_unlock(&c->kernel_lock);
  }
  return rc;
}
