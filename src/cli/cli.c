/* cli.c - option parsing with usage generated from the option tables. */
#include "cli.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void cli_print_usage(FILE *f, const nxvk_usage *u, const nxvk_option *opts) {
  for (int i = 0; u->synopsis[i]; i++)
    fprintf(f, "%s nxvk %s %s\n", i ? "      " : "usage:", u->name, u->synopsis[i]);
  fprintf(f, "\n%s\n", u->summary);
  if (opts && opts[0].name) fprintf(f, "\noptions:\n");
  for (int i = 0; opts && opts[i].name; i++) {
    char left[64];
    const nxvk_option *o = &opts[i];
    if (o->short_name)
      snprintf(left, sizeof left, "-%c, --%s%s%s", o->short_name, o->name, o->arg ? " " : "",
               o->arg ? o->arg : "");
    else
      snprintf(left, sizeof left, "    --%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
    fprintf(f, "  %-26s %s\n", left, o->help);
  }
  fprintf(f, "  %-26s %s\n", "-h, --help", "show this help");
}

int cli_usage_error(const nxvk_usage *u, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "nxvk: error: ");
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, " (see 'nxvk %s --help')\n", u->name);
  return EXIT_USAGE;
}

int cli_engine_error(int code) {
  fprintf(stderr, "nxvk: error: %s\n", nxvk_errmsg());
  return nxvk_err_exit_status(code);
}

static const nxvk_option *find_long(const nxvk_option *opts, const char *name, size_t len) {
  for (int i = 0; opts && opts[i].name; i++)
    if (strlen(opts[i].name) == len && strncmp(opts[i].name, name, len) == 0) return &opts[i];
  return NULL;
}

static const nxvk_option *find_short(const nxvk_option *opts, char c) {
  for (int i = 0; opts && opts[i].name; i++)
    if (opts[i].short_name == c) return &opts[i];
  return NULL;
}

static int set_value(const nxvk_usage *u, const nxvk_option *o, const char *arg) {
  char *end;
  switch (o->type) {
  case OPT_FLAG:
  case OPT_VALIDATE: *(bool *)o->value = true; return 0;
  case OPT_STRING:
  case OPT_DEVICE: *(const char **)o->value = arg; return 0;
  case OPT_INT: {
    long v = strtol(arg, &end, 10);
    if (!*arg || *end) return cli_usage_error(u, "--%s: '%s' is not an integer", o->name, arg);
    *(long *)o->value = v;
    return 0;
  }
  case OPT_DOUBLE: {
    double v = strtod(arg, &end);
    if (!*arg || *end) return cli_usage_error(u, "--%s: '%s' is not a number", o->name, arg);
    *(double *)o->value = v;
    return 0;
  }
  }
  return 0;
}

static bool takes_arg(const nxvk_option *o) {
  return o->type != OPT_FLAG && o->type != OPT_VALIDATE;
}

int cli_parse(int argc, char **argv, const nxvk_usage *u, const nxvk_option *opts, int *npos) {
  int n = 0;
  bool only_pos = false;
  for (int i = 1; i < argc; i++) {
    char *a = argv[i];
    if (only_pos || a[0] != '-' || a[1] == '\0' || (a[0] == '-' && a[1] != '-' && a[1] >= '0' && a[1] <= '9')) {
      argv[n++] = a;
      continue;
    }
    if (strcmp(a, "--") == 0) {
      only_pos = true;
      continue;
    }
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      cli_print_usage(stdout, u, opts);
      return -1;
    }
    const nxvk_option *o;
    const char *val = NULL;
    if (a[1] == '-') {
      const char *eq = strchr(a + 2, '=');
      size_t len = eq ? (size_t)(eq - (a + 2)) : strlen(a + 2);
      o = find_long(opts, a + 2, len);
      if (!o) return cli_usage_error(u, "unknown option '%.*s'", (int)len + 2, a);
      if (eq) {
        if (!takes_arg(o)) return cli_usage_error(u, "--%s takes no value", o->name);
        val = eq + 1;
      }
    } else {
      o = find_short(opts, a[1]);
      if (!o || a[2]) return cli_usage_error(u, "unknown option '%s'", a);
    }
    if (takes_arg(o) && !val) {
      if (i + 1 >= argc) return cli_usage_error(u, "--%s needs a value (%s)", o->name, o->arg);
      val = argv[++i];
    }
    int rc = set_value(u, o, val);
    if (rc) return rc;
  }
  *npos = n;
  return 0;
}

int cli_ctx(nxvk_cli *cli, nxvk_ctx **out) {
  if (!cli->ctx) {
    nxvk_ctx_opts o = {.device = cli->device, .validate = cli->validate, .no_cache = cli->no_cache};
    int rc = nxvk_ctx_open(&o, &cli->ctx);
    if (rc) return rc;
  }
  *out = cli->ctx;
  return NXVK_OK;
}
