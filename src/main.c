/*
 * main.c - the subcommand table and dispatch, nothing else (git-style: each
 * subcommand lives in src/cmd_NAME.c; see src/cli/cli.h for the checklist).
 */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const cli_command commands[] = {
    {"info", cmd_info, 0, "list Vulkan devices: limits, features, memory"},
    {"run", cmd_run, CMD_NEEDS_DEVICE, "run an op or an op graph on tensors from files"},
    {"conformance", cmd_conformance, CMD_NEEDS_DEVICE, "check every op against the CPU reference (TAP)"},
    {"bench", cmd_bench, CMD_NEEDS_DEVICE, "time ops, the matmul ladder and the device roofline"},
    {"stress", cmd_stress, CMD_NEEDS_DEVICE, "race, leak, kill, oom and bounds checks for CI"},
    {"port", cmd_port, CMD_NEEDS_DEVICE, "serve the engine on stdin/stdout (Elixir Nx port)"},
    {"completion", cmd_completion, CMD_HIDDEN, "print bash or zsh completion for nxvk"},
};

const cli_command *cli_command_table(int *n) {
  *n = (int)(sizeof commands / sizeof commands[0]);
  return commands;
}

static void usage(FILE *f) {
  fprintf(f, "usage: nxvk [--version] [--help] COMMAND [ARGS]\n\ncommands:\n");
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (!(commands[i].flags & CMD_HIDDEN)) fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].summary);
  fprintf(f, "\n'nxvk help COMMAND' or 'nxvk COMMAND --help' describes one command.\n"
             "Exit status: 0 ok, 1 failure or mismatch, 2 usage, 3 no Vulkan or no device,\n"
             "4 device lost.\n");
}

static const cli_command *find(const char *name) {
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp(commands[i].name, name) == 0) return &commands[i];
  return NULL;
}

/* An unknown command, with the nearest one when a typo is likely. */
static int unknown_command(const char *name) {
  const char *names[sizeof commands / sizeof commands[0] + 2];
  int n = 0;
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) names[n++] = commands[i].name;
  names[n++] = "help";
  names[n++] = "version";
  const char *near = cli_nearest(name, names, n);
  if (near)
    fprintf(stderr, "nxvk: error: unknown command '%s'; did you mean '%s'? (see 'nxvk --help')\n", name, near);
  else
    fprintf(stderr, "nxvk: error: unknown command '%s' (see 'nxvk --help')\n", name);
  return EXIT_USAGE;
}

static int finish_stdout(int status) {
  /* a write to a closed pipe or a full disk is a failure, not silence */
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, "nxvk: error: writing standard output failed\n");
    return status ? status : EXIT_FAIL;
  }
  return status;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return EXIT_USAGE;
  }
  const char *name = argv[1];
  if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
    usage(stdout);
    return finish_stdout(EXIT_OK);
  }
  if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
    printf("nxvk %s\n", NXVK_VERSION);
    return finish_stdout(EXIT_OK);
  }
  if (strcmp(name, "help") == 0) {
    if (argc < 3) {
      usage(stdout);
      return finish_stdout(EXIT_OK);
    }
    const cli_command *c = find(argv[2]);
    if (!c) return unknown_command(argv[2]);
    char *hargv[] = {argv[2], "--help", NULL};
    nxvk_cli cli = {0};
    return finish_stdout(c->fn(2, hargv, &cli));
  }
  const cli_command *c = find(name);
  if (!c) return unknown_command(name);
  nxvk_cli cli = {0};
  int status = c->fn(argc - 1, argv + 1, &cli);
  if (c->flags & CMD_NEEDS_DEVICE) status = cli_close_device(&cli, status);
  return finish_stdout(status);
}
