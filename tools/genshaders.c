/*
 * genshaders.c - build-time generator: one GLSL compute shader per
 * elementwise op and dtype, from src/ops/elementwise.def through the same
 * code generator that fusion uses at run time.
 *
 *   genshaders OUTDIR LIBFILE...   writes OUTDIR/ew_<op>_<dtype>.comp
 *   genshaders --list              prints the shader names
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/ops/codegen.h"
#include "../src/ops/ew_desc.h"

static const nxvk_op_desc ops[] = {
#define EW(name, kind, dtypes, glsl, summary) EW_DESC(name, kind, dtypes, glsl, summary),
#include "../src/ops/elementwise.def"
#undef EW
};

/* The dtypes whose kernels are built in (the Makefile's DTYPES); the others
 * are generated at run time (src/ops/rtkernel.c). */
#define EMBEDDED (NXVK_DT(NXVK_F32) | NXVK_DT(NXVK_F64) | NXVK_DT(NXVK_I32) | NXVK_DT(NXVK_U8))

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  if (buf) buf[n] = 0;
  fclose(f);
  return buf;
}

int main(int argc, char **argv) {
  bool list = argc == 2 && strcmp(argv[1], "--list") == 0;
  if (!list && argc < 3) {
    fprintf(stderr, "usage: genshaders OUTDIR LIBFILE... | --list\n");
    return 2;
  }
  char *lib = NULL;
  size_t liblen = 0;
  for (int i = 2; !list && i < argc; i++) {
    char *t = slurp(argv[i]);
    if (!t) {
      fprintf(stderr, "genshaders: cannot read %s\n", argv[i]);
      return 1;
    }
    size_t n = strlen(t);
    lib = realloc(lib, liblen + n + 2);
    memcpy(lib + liblen, t, n);
    liblen += n;
    lib[liblen++] = '\n';
    lib[liblen] = 0;
    free(t);
  }
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    for (int d = 0; d < NXVK_NDTYPES; d++) {
      if (!(ops[i].dtypes & NXVK_DT(d) & EMBEDDED)) continue;
      char name[128];
      snprintf(name, sizeof name, "ew_%s_%s", ops[i].name, nxvk_dtype_name((nxvk_dtype)d));
      if (list) {
        printf("%s\n", name);
        continue;
      }
      nxvk_cg_program p = {0};
      p.ninputs = ops[i].arity;
      for (int k = 0; k < p.ninputs; k++) p.in_dtype[k] = (nxvk_dtype)d;
      if (ops[i].kind == NXVK_KIND_SELECT) p.in_dtype[0] = NXVK_U8;
      p.nnodes = 1;
      p.node[0].op = &ops[i];
      p.node[0].dtype = (nxvk_dtype)d;
      for (int k = 0; k < p.ninputs; k++) p.node[0].arg[k] = k;
      p.noutputs = 1;
      p.output[0] = p.ninputs;
      char *glsl;
      if (nxvk_cg_glsl(&p, lib, &glsl)) {
        fprintf(stderr, "genshaders: %s: %s\n", name, nxvk_errmsg());
        return 1;
      }
      char path[1024];
      snprintf(path, sizeof path, "%s/%s.comp", argv[1], name);
      FILE *f = fopen(path, "w");
      if (!f || fputs(glsl, f) < 0 || fclose(f) != 0) {
        fprintf(stderr, "genshaders: cannot write %s\n", path);
        return 1;
      }
      free(glsl);
    }
  }
  free(lib);
  return 0;
}
