/* cmd_conformance.c - placeholder until [conformance] lands (replaced by its own file). */
#include "cli/cli.h"

int cmd_conformance(int argc, char **argv, nxvk_cli *cli) {
  (void)argc;
  (void)argv;
  (void)cli;
  fprintf(stderr, "nxvk: error: 'conformance' is not implemented yet\n");
  return EXIT_FAIL;
}
