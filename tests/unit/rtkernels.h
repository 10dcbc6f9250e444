/* rtkernels.h - what the unit tests of the run-time kernels (test_coopmat,
 * test_spirv_khr) share: a kernel's GLSL by its name and its SPIR-V, and a
 * list of names the kernel table must refuse.  Include after tap.h. */
#ifndef NXVK_TEST_RTKERNELS_H
#define NXVK_TEST_RTKERNELS_H
#include "nxvk.h"
#include "ops/ops.h"
#include "vk/vkcore.h"

#include <stdint.h>
#include <stdlib.h>

/* NAME's GLSL (nxvk_rt_kernel_glsl) compiled to SPIR-V: NXVK_OK or the
 * first failure's code (nxvk_errmsg() says why); *glsl and *words are the
 * caller's to free, NULL where not made. */
static int rt_kernel_spirv(const char *name, char **glsl, uint32_t **words, size_t *bytes) {
  *glsl = NULL;
  *words = NULL;
  *bytes = 0;
  int rc = nxvk_rt_kernel_glsl(name, glsl);
  if (rc == NXVK_OK) rc = nxvk_glsl_compile(*glsl, name, words, bytes);
  return rc;
}

/* Each of the n names is refused: NXVK_E_UNSUPPORTED and no GLSL; a TAP
 * line a name, "NAME WHAT". */
static void check_refused(const char *const *names, size_t n, const char *what) {
  for (size_t i = 0; i < n; i++) {
    char *glsl = NULL;
    int rc = nxvk_rt_kernel_glsl(names[i], &glsl);
    CHECK(rc == NXVK_E_UNSUPPORTED && glsl == NULL, "%s %s", names[i], what);
    free(glsl);
  }
}
#endif
