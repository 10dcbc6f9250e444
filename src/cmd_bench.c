/* cmd_bench.c - placeholder until [bench] lands (replaced by its own file). */
#include "cli/cli.h"

int cmd_bench(int argc, char **argv, nxvk_cli *cli) {
  (void)argc;
  (void)argv;
  (void)cli;
  fprintf(stderr, "nxvk: error: 'bench' is not implemented yet\n");
  return EXIT_FAIL;
}
