/* cmd_stress.c - placeholder until [stress] lands (replaced by its own file). */
#include "cli/cli.h"

int cmd_stress(int argc, char **argv, nxvk_cli *cli) {
  (void)argc;
  (void)argv;
  (void)cli;
  fprintf(stderr, "nxvk: error: 'stress' is not implemented yet\n");
  return EXIT_FAIL;
}
