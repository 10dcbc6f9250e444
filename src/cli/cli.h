/*
 * cli.h - what every subcommand shares: declared options with generated
 * usage, the device the user chose, and the one way errors are printed.
 *
 * Adding a subcommand:
 *   1. src/cmd_NAME.c with `int cmd_NAME(int argc, char **argv, nxvk_cli *cli)`
 *      returning the exit status;
 *   2. a row in main.c's commands[] (with CMD_NEEDS_DEVICE if it opens one);
 *   3. man/nxvk-NAME.1 whose SYNOPSIS matches `nxvk NAME --help`;
 *   4. tests in tests/cli/.
 */
#ifndef NXVK_CLI_H
#define NXVK_CLI_H

#include <stdio.h>

#include "../nxvk.h"

/* Documented exit statuses (nxvk(1)). */
enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2, EXIT_NO_DEVICE = 3, EXIT_DEVICE_LOST = 4 };

typedef struct nxvk_cli {
  const char *device;          /* --device, else NXVK_DEVICE */
  bool validate;               /* --validate, or NXVK_VALIDATE=1 */
  bool no_cache;               /* --no-cache: no on-disk cache read or written */
  nxvk_ctx *ctx;               /* opened by cli_ctx(), closed by main */
} nxvk_cli;

typedef enum { OPT_FLAG, OPT_STRING, OPT_INT, OPT_DOUBLE, OPT_DEVICE, OPT_VALIDATE } opt_type;

typedef struct nxvk_option {
  const char *name;            /* long name without "--" */
  char short_name;             /* 0 for none */
  opt_type type;
  void *value;                 /* bool*, const char**, long*, double* */
  const char *arg;             /* argument name in usage ("FILE") */
  const char *help;
} nxvk_option;

#define OPT_END {NULL, 0, OPT_FLAG, NULL, NULL, NULL}
#define OPT_COMMON_DEVICE(cli)                                                            \
  {"device", 0, OPT_DEVICE, &(cli)->device, "N|NAME", "device index or name (default: first discrete GPU)"}, \
  {"validate", 0, OPT_VALIDATE, &(cli)->validate, NULL, "Vulkan validation layers on; any message fails"}

typedef struct nxvk_usage {
  const char *name;            /* "run" */
  const char *const *synopsis; /* NULL-terminated lines after "nxvk NAME " */
  const char *summary;
} nxvk_usage;

/* Parse options; positional arguments are moved to the front of argv and
 * counted in *npos.  Returns -1 after printing help (caller exits 0), 0 on
 * success, EXIT_USAGE after printing a usage error. */
int cli_parse(int argc, char **argv, const nxvk_usage *u, const nxvk_option *opts, int *npos);
void cli_print_usage(FILE *f, const nxvk_usage *u, const nxvk_option *opts);

/* "Did you mean": the candidate nearest to typed (edit distance, or typed
 * cut short), or NULL when none is near enough to suggest. */
const char *cli_nearest(const char *typed, const char *const *cands, int n);
int cli_edit_distance(const char *a, const char *b);

/* Print `nxvk: error: MSG` (one line) and return EXIT_USAGE. */
int cli_usage_error(const nxvk_usage *u, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Print the engine's last error as one line and map it to an exit status. */
int cli_engine_error(int code);
/* The device as `nxvk info --json` shows it (a cJSON object); the reports of
 * conformance and bench embed the same record. */
struct cJSON *cli_device_json(const nxvk_device_info *d);
/* The names of the bits of a VkQueueFlags / VkMemoryPropertyFlags value
 * ("compute transfer", "device_local host_visible"), as --json lists them. */
void cli_queue_flags_text(uint32_t flags, char buf[256]);
void cli_memory_flags_text(uint32_t flags, char buf[256]);
/* Close the device a command opened: a validation message or a tensor still
 * alive fails the command (status becomes EXIT_FAIL when it was EXIT_OK). */
int cli_close_device(nxvk_cli *cli, int status);
/* text and a newline to path through nxvk_out (a regular file replaced
 * atomically, a device or FIFO written in place); on failure one error line
 * naming the option and EXIT_FAIL (EXIT_USAGE for a directory). */
int cli_write_text(const char *opt, const char *path, const char *text);
/* The same with a writer that prints to a stream (0 on success). */
int cli_write_with(const char *opt, const char *path, int (*fn)(FILE *f, const void *arg), const void *arg);
/* Open (once) the device the options chose. */
int cli_ctx(nxvk_cli *cli, nxvk_ctx **out);

/* The subcommand table (main.c): a hidden command is left out of the
 * command list of --help (completion). */
enum { CMD_NEEDS_DEVICE = 1u << 0, CMD_HIDDEN = 1u << 1 };
typedef struct cli_command {
  const char *name;
  int (*fn)(int argc, char **argv, nxvk_cli *cli);
  unsigned flags;
  const char *summary;
} cli_command;
const cli_command *cli_command_table(int *n);

/* While a hook is set, cli_parse hands it the command's usage and option
 * table and returns -1 (as after --help) without parsing: how `nxvk
 * completion` reads every command's options from the tables themselves. */
typedef void (*cli_table_hook)(void *arg, const nxvk_usage *u, const nxvk_option *opts);
void cli_set_table_hook(cli_table_hook fn, void *arg);

/* Handlers */
int cmd_info(int argc, char **argv, nxvk_cli *cli);
int cmd_run(int argc, char **argv, nxvk_cli *cli);
int cmd_conformance(int argc, char **argv, nxvk_cli *cli);
int cmd_bench(int argc, char **argv, nxvk_cli *cli);
int cmd_stress(int argc, char **argv, nxvk_cli *cli);
int cmd_port(int argc, char **argv, nxvk_cli *cli);
int cmd_completion(int argc, char **argv, nxvk_cli *cli);

#endif
