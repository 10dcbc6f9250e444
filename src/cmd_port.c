/* cmd_port.c - placeholder until [port] lands (replaced by its own file). */
#include "cli/cli.h"

int cmd_port(int argc, char **argv, nxvk_cli *cli) {
  (void)argc;
  (void)argv;
  (void)cli;
  fprintf(stderr, "nxvk: error: 'port' is not implemented yet\n");
  return EXIT_FAIL;
}
