/*
 * cmd_port.c - `nxvk port`: the engine served to one client (the Elixir Nx
 * wrapper) on stdin/stdout, in frames like Erlang's {:packet, 4}.
 * man nxvk-port(7) is the protocol contract; this file follows it.
 *
 * Tensors stay on the device between requests, addressed by handles that
 * are never reused.  Ops and graphs go through the engine entry points that
 * `nxvk run` uses (nxvk_op_run; nxvk_graph_parse + nxvk_graph_run).  A
 * request that fails gets an error reply and the server reads the next one;
 * only end of input (or a client that stopped reading) ends it.
 */
#ifdef __linux__
#define _GNU_SOURCE /* sched_setaffinity, cpu_set_t (avoid_irq_cpus) */
#include <sched.h>
#endif
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/port_frame.h"
#include "ops/attrs.h"

#define PORT_PROTOCOL 1
#define PORT_DEFAULT_MAX_FRAME ((uint64_t)1 << 30)
#define PORT_MIN_MAX_FRAME 64
#define PORT_MAX_HEADER ((size_t)NXVK_MAX_GRAPH_BYTES) /* a graph request's JSON */
/* a request holds a graph one level down: the graph limit plus one */
#define PORT_MAX_DEPTH (NXVK_MAX_JSON_DEPTH + 1)
#define PORT_CHUNK 65536                               /* discarding oversized frames */
#define PORT_KEEP_MIN ((size_t)1 << 20)                /* frame buffers kept for reuse: from */
#define PORT_KEEP_MAX ((size_t)256 << 20)              /* ... to */
#if defined(__linux__) && !defined(F_SETPIPE_SZ)
#define F_SETPIPE_SZ 1031                              /* <fcntl.h> shows it with _GNU_SOURCE only */
#endif
#define PORT_MAX_JSON_INT 9007199254740992.0           /* 2^53: exact in a JSON number */
#define PORT_MAX_PREPARED 65536                        /* prepared graphs held at once */

static const char *const synopsis[] = {"[--max-frame BYTES] [--max-bytes SIZE] [--poll-us N] [--device N|NAME] [--validate]", NULL};
static const nxvk_usage usage = {
    "port", synopsis,
    "Serves the engine on standard input and output to one client (the Elixir Nx\n"
    "wrapper): 4-byte big-endian length-prefixed frames, each a JSON header and raw\n"
    "tensor bytes.  Tensors stay on the device between requests, named by handles.\n"
    "End of input frees everything and exits 0.  The protocol is in nxvk-port(7)."};

/* ---------------------------------------------------------------- handles */

typedef struct {
  uint64_t id;          /* 0: empty slot */
  nxvk_tensor *t;       /* owned; NULL once the device it lived on was lost */
  uint64_t generation;  /* device generation it was made on */
  size_t bytes;         /* dtype size x elements */
  int err;              /* the error of the early-replied run that was to make it (t is NULL) */
  char *msg;            /* owned: that run's message, naming the op that failed (or NULL) */
} port_handle;

/* Open addressing with linear probing; handles are never reused, so a
 * table (not an array indexed by handle) keeps a long session small. */
typedef struct {
  port_handle *slot;
  size_t cap, used; /* cap: a power of two */
} handle_table;

static size_t slot_of(const handle_table *ht, uint64_t id) {
  return (size_t)((id * 0x9E3779B97F4A7C15ull) >> 17) & (ht->cap - 1);
}

static port_handle *handle_find(handle_table *ht, uint64_t id) {
  if (!ht->cap || !id) return NULL;
  for (size_t i = slot_of(ht, id);; i = (i + 1) & (ht->cap - 1)) {
    if (ht->slot[i].id == id) return &ht->slot[i];
    if (!ht->slot[i].id) return NULL;
  }
}

static int handle_grow(handle_table *ht) {
  size_t cap = ht->cap ? ht->cap * 2 : 64;
  port_handle *slot = calloc(cap, sizeof *slot);
  if (!slot) return -1;
  handle_table bigger = {slot, cap, ht->used};
  for (size_t i = 0; i < ht->cap; i++) {
    if (!ht->slot[i].id) continue;
    size_t j = slot_of(&bigger, ht->slot[i].id);
    while (slot[j].id) j = (j + 1) & (cap - 1);
    slot[j] = ht->slot[i];
  }
  free(ht->slot);
  *ht = bigger;
  return 0;
}

static port_handle *handle_insert(handle_table *ht, uint64_t id) {
  if ((ht->used + 1) * 4 > ht->cap * 3 && handle_grow(ht)) return NULL;
  size_t i = slot_of(ht, id);
  while (ht->slot[i].id) i = (i + 1) & (ht->cap - 1);
  ht->slot[i] = (port_handle){.id = id};
  ht->used++;
  return &ht->slot[i];
}

static void handle_remove(handle_table *ht, port_handle *h) {
  size_t mask = ht->cap - 1, hole = (size_t)(h - ht->slot);
  /* backward shift: move later entries of the probe run into the hole */
  for (size_t j = (hole + 1) & mask; ht->slot[j].id; j = (j + 1) & mask) {
    size_t home = slot_of(ht, ht->slot[j].id);
    bool stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
    if (!stays) {
      ht->slot[hole] = ht->slot[j];
      hole = j;
    }
  }
  ht->slot[hole].id = 0;
  ht->slot[hole].t = NULL;
  ht->slot[hole].msg = NULL;
  ht->used--;
}

/* ----------------------------------------------------------------- server */

/* A graph kept by prepare (cmd_prepare) */
typedef struct {
  uint64_t id;
  nxvk_graph *g;
  int *param;   /* per graph input: its parameter number, or -1 */
  int nparams;
} port_prepared;

typedef struct {
  nxvk_cli *cli;
  nxvk_ctx *ctx;            /* == cli->ctx (main closes it after we return) */
  bool lost;                /* ctx's device was lost: re-created on the next request */
  uint64_t generation;      /* 1 for the first device, +1 per re-creation */
  uint64_t device_losses;
  handle_table handles;
  uint64_t next_handle;
  uint64_t live_handles, lost_handles, handle_bytes;
  uint64_t requests, errors;
  /* time spent per stage (enum port_stage): summed over requests (stats'
   * "time_ns"), the current request's, and the previous request's ("last_ns") */
  uint64_t t_sum[5], t_cur[5], t_last[5];
  const char *cmd_cur, *cmd_last; /* their commands (NULL: none recognized) */
  bool early_cur, early_last;     /* whether they replied early (engine after the reply) */
  bool defer_wait;                /* NXVK_PORT_DEFER_WAIT=1: an early run's wait before the next request */
  struct nxvk_rec *pend;          /* that run, submitted, not yet waited for (finish_pending) */
  nxvk_tensor **pend_vals;        /* its values (owned) */
  int pend_total, pend_no;        /* how many; its outputs */
  uint64_t pend_first;            /* its first output's handle */
  uint64_t max_frame;
  uint64_t poll_ns;         /* --poll-us: poll for the next request this long before blocking */
  uint64_t max_bytes;       /* --max-bytes: device memory this port may hold (0: no cap) */
  bool hooks;               /* NXVK_TEST_HOOKS=1: debug_* commands */
  nxvk_strbuf hdr;          /* the reply header's JSON (send_reply) */
  const cJSON *cur_id;      /* the current request's id (an early reply needs it) */
  bool replied;             /* the current request's reply is written already (early) */
  uint64_t early_reply_ns;  /* of the command stage, the early reply's share */
  uint64_t early_runs, early_failures;
  int irq_cpus_left;        /* vCPUs left for taking the GPU's interrupts (avoid_irq_cpus) */
#ifdef __linux__
  cpu_set_t allowed;        /* the affinity the server started with */
  bool have_allowed;
#endif
  bool cjson_reply;         /* NXVK_PORT_CJSON_REPLY=1: printed by cJSON instead */
  port_prepared *prepared;  /* prepared graphs, in no order */
  size_t nprepared;
  uint64_t next_prepared;
  /* large frames' buffers, kept for the next (a fresh 64 MiB buffer costs
   * 16 384 page faults each time): the request's and the reply's */
  uint8_t *inbuf, *outbuf;
  size_t incap, outcap;
  /* shared memory named by put/get's "shm" (shm_map): mapped whole and
   * kept, so a client that reuses its region pays the mapping's page
   * faults once; a few at most, the oldest unmapped first */
  struct port_shm {
    char name[256];
    dev_t dev;
    ino_t ino;
    size_t size;
    bool writable;
    uint8_t *map;
    uint64_t used;          /* s->requests when last used */
    uint64_t reg_gen;       /* generation + 1 the mapping was offered to nxvk_host_register in (0: not yet) */
    bool registered;        /* and the device took it: transfers from and into it are its DMA alone */
  } shm[4];
  bool closed;              /* the client stopped reading */
  int status;               /* exit status once serving ends */
  int code;                 /* current request's error */
  char message[1024];
} port_server;

typedef struct {
  cJSON *json;              /* reply header: id, ok, results */
  uint8_t *data;            /* tensor bytes after the header (owned) */
  size_t len, cap;
  const uint8_t *echo;      /* ping: the request's own bytes (borrowed) */
  size_t echo_len;
} port_reply;

static int fail(port_server *s, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(port_server *s, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->message, sizeof s->message, fmt, ap);
  va_end(ap);
  /* one line of UTF-8 whatever a request put in it: a cut in the middle of
   * a character ends it there, control characters become spaces */
  size_t bad = 0, n = strlen(s->message);
  if (!port_utf8_valid((const uint8_t *)s->message, n, &bad)) s->message[bad] = '\0';
  for (char *c = s->message; *c; c++)
    if ((unsigned char)*c < 0x20) *c = ' ';
  s->code = code;
  return code;
}

/* An engine error, prefixed with the command.  A lost device is noted on the
 * context whichever call saw it, so the whole generation is retired. */
static int engine_fail(port_server *s, const char *cmd, int rc) {
  if (rc == NXVK_E_DEVICE_LOST && s->ctx) nxvk_ctx_mark_lost(s->ctx);
  return fail(s, rc, "%s: %s", cmd, nxvk_errmsg());
}

/* The device was lost: every handle from it answers device_lost from now on
 * (its entry stays until freed) and its memory goes with the context. */
static void retire_generation(port_server *s) {
  for (size_t i = 0; i < s->handles.cap; i++) {
    port_handle *h = &s->handles.slot[i];
    if (!h->id || !h->t) continue;
    nxvk_tensor_free(h->t);
    h->t = NULL;
    s->live_handles--;
    s->lost_handles++;
    s->handle_bytes -= h->bytes;
  }
  s->lost = true;
  s->device_losses++;
}

/* A new device for a new generation, opened as the command line asked
 * (cli_ctx).  It opens before the old one closes, so the process's Vulkan
 * instance (and its validation count) carries over. */
static int reopen_device(port_server *s) {
  nxvk_ctx *old = s->ctx, *fresh = NULL;
  s->cli->ctx = NULL;
  int rc = cli_ctx(s->cli, &fresh);
  if (rc) {
    s->cli->ctx = old;
    return fail(s, rc, "re-creating the device after it was lost: %s", nxvk_errmsg());
  }
  nxvk_ctx_close(old);
  s->ctx = fresh;
  s->lost = false;
  s->generation++;
  return NXVK_OK;
}

static uint64_t new_handle(port_server *s, nxvk_tensor *t) {
  port_handle *h = handle_insert(&s->handles, ++s->next_handle);
  if (!h) return 0;
  h->t = t;
  h->generation = s->generation;
  h->bytes = (size_t)nxvk_tensor_count(t) * nxvk_dtype_size(nxvk_tensor_dtype(t));
  s->live_handles++;
  s->handle_bytes += h->bytes;
  return h->id;
}

static void drop_handle(port_server *s, port_handle *h) {
  if (h->t) {
    nxvk_tensor_free(h->t);
    s->live_handles--;
    s->handle_bytes -= h->bytes;
  } else {
    s->lost_handles--;
  }
  free(h->msg);
  handle_remove(&s->handles, h);
}

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

enum port_stage { ST_READ, ST_DECODE, ST_COMMAND, ST_ENGINE, ST_REPLY };
static const char *const stage_names[] = {"read", "decode", "command", "engine", "reply"};

#define AVOID_RECHECK 2000 /* requests: avoid_irq_cpus looks again */
#ifdef __linux__
static int avoid_irq_cpus(const cpu_set_t *allowed);
#endif

static void stage_add(port_server *s, enum port_stage st, uint64_t ns) {
  s->t_sum[st] += ns;
  s->t_cur[st] += ns;
}

/* A new request begins: the one before is complete, its reply written. */
static void stage_next(port_server *s) {
  memcpy(s->t_last, s->t_cur, sizeof s->t_last);
  memset(s->t_cur, 0, sizeof s->t_cur);
  s->cmd_last = s->cmd_cur;
  s->cmd_cur = NULL;
  s->early_last = s->early_cur;
  s->early_cur = false;
}

/* ------------------------------------------------------------ JSON helpers */

static const cJSON *field(const cJSON *o, const char *name) {
  return cJSON_GetObjectItemCaseSensitive(o, name);
}

static bool json_uint(const cJSON *v, double max, uint64_t *out) {
  if (!cJSON_IsNumber(v)) return false;
  double d = v->valuedouble;
  if (!(d >= 0) || d > max || d != floor(d)) return false;
  *out = (uint64_t)d;
  return true;
}

static int json_flag(port_server *s, const cJSON *req, const char *cmd, const char *name, bool dflt,
                     bool *out) {
  const cJSON *v = field(req, name);
  *out = dflt;
  if (!v) return NXVK_OK;
  if (!cJSON_IsBool(v)) return fail(s, NXVK_E_BAD_REQUEST, "%s: \"%s\" must be true or false", cmd, name);
  *out = cJSON_IsTrue(v);
  return NXVK_OK;
}

static int lookup_id(port_server *s, uint64_t id, const char *where, nxvk_tensor **out);

/* A live tensor from a handle value: unknown_handle for one never given out
 * or freed, device_lost for one made on a device since lost. */
static int lookup(port_server *s, const cJSON *v, const char *where, nxvk_tensor **out) {
  uint64_t id;
  if (!json_uint(v, PORT_MAX_JSON_INT, &id) || id == 0)
    return fail(s, NXVK_E_BAD_REQUEST, "%s: a handle is a positive integer", where);
  return lookup_id(s, id, where, out);
}

static int lookup_id(port_server *s, uint64_t id, const char *where, nxvk_tensor **out) {
  port_handle *h = handle_find(&s->handles, id);
  if (!h)
    return fail(s, NXVK_E_UNKNOWN_HANDLE, "%s: handle %llu is not live (never given out, or freed)",
                where, (unsigned long long)id);
  if (!h->t && h->err)
    return fail(s, h->err, "%s: handle %llu: the run that was to make it failed after its early reply (%s): %s",
                where, (unsigned long long)id, nxvk_err_name(h->err), h->msg ? h->msg : "no detail");
  if (!h->t)
    return fail(s, NXVK_E_DEVICE_LOST,
                "%s: handle %llu was made on device generation %llu, which was lost (now %llu)",
                where, (unsigned long long)id, (unsigned long long)h->generation,
                (unsigned long long)s->generation);
  *out = h->t;
  return NXVK_OK;
}

/* {"dtype": "f32", "shape": [2, 3]} */
static int parse_meta(port_server *s, const cJSON *o, const char *where, nxvk_meta *m) {
  const cJSON *dt = field(o, "dtype"), *sh = field(o, "shape");
  if (!cJSON_IsString(dt))
    return fail(s, NXVK_E_BAD_REQUEST, "%s: \"dtype\" must be a string (%s)", where, nxvk_dtype_names());
  if (nxvk_dtype_parse(dt->valuestring, &m->dtype))
    return fail(s, NXVK_E_UNSUPPORTED_DTYPE, "%s: unknown dtype '%s' (%s)", where,
                dt->valuestring, nxvk_dtype_names());
  if (!cJSON_IsArray(sh))
    return fail(s, NXVK_E_BAD_REQUEST, "%s: \"shape\" must be a list of dimensions", where);
  int rank = cJSON_GetArraySize(sh);
  if (rank > NXVK_MAX_RANK)
    return fail(s, NXVK_E_TOO_LARGE, "%s: rank %d is over the limit of %d", where, rank, NXVK_MAX_RANK);
  m->shape.rank = rank;
  int i = 0;
  for (const cJSON *d = sh->child; d; d = d->next, i++) {
    uint64_t v;
    if (!json_uint(d, PORT_MAX_JSON_INT, &v))
      return fail(s, NXVK_E_BAD_REQUEST, "%s: shape[%d] must be a non-negative integer", where, i);
    m->shape.dim[i] = (int64_t)v;
  }
  int64_t count;
  int rc = nxvk_shape_count(&m->shape, &count);
  if (rc) return fail(s, rc, "%s: %s", where, nxvk_errmsg());
  return NXVK_OK;
}

static size_t meta_bytes(const nxvk_meta *m) {
  int64_t count = 0;
  nxvk_shape_count(&m->shape, &count);
  return (size_t)count * nxvk_dtype_size(m->dtype);
}

static cJSON *shape_json(const nxvk_shape *sh) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; a && i < sh->rank; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber((double)sh->dim[i]));
  return a;
}

static void describe(cJSON *o, const nxvk_tensor *t) {
  cJSON_AddStringToObject(o, "dtype", nxvk_dtype_name(nxvk_tensor_dtype(t)));
  cJSON_AddItemToObject(o, "shape", shape_json(nxvk_tensor_shape(t)));
}

/* Download t to the end of the reply's bytes and note "nbytes" on desc. */
static int fetch_into(port_server *s, const char *cmd, port_reply *r, const nxvk_tensor *t, cJSON *desc) {
  size_t n = (size_t)nxvk_tensor_count(t) * nxvk_dtype_size(nxvk_tensor_dtype(t));
  if (n > UINT32_MAX - r->len)
    return fail(s, NXVK_E_TOO_LARGE, "%s: the reply would be over 4 GiB (a frame's limit)", cmd);
  if (r->len + n > r->cap) {
    size_t cap = r->len + n > 2 * r->cap ? r->len + n : 2 * r->cap;
    uint8_t *p = realloc(r->data, cap ? cap : 1);
    if (!p) return fail(s, NXVK_E_NO_MEMORY, "%s: out of memory for %zu reply bytes", cmd, n);
    r->data = p;
    r->cap = cap;
  }
  uint64_t t0 = now_ns();
  int rc = nxvk_tensor_download(s->ctx, t, r->data + r->len, n);
  stage_add(s, ST_ENGINE, now_ns() - t0);
  if (rc) return engine_fail(s, cmd, rc);
  r->len += n;
  cJSON_AddNumberToObject(desc, "nbytes", (double)n);
  return NXVK_OK;
}

/* --------------------------------------------------------------- commands */

typedef int (*port_fn)(port_server *s, cJSON *req, port_frame *f, port_reply *r);

static const char *const kind_names[] = {
    [NXVK_KIND_UNARY] = "unary",   [NXVK_KIND_BINARY] = "binary", [NXVK_KIND_COMPARE] = "compare",
    [NXVK_KIND_SELECT] = "select", [NXVK_KIND_REDUCE] = "reduce", [NXVK_KIND_DOT] = "dot",
    [NXVK_KIND_MOVEMENT] = "movement", [NXVK_KIND_SOURCE] = "source",
    [NXVK_KIND_SORT] = "sort", [NXVK_KIND_SCAN] = "scan", [NXVK_KIND_WINDOW] = "window",
    [NXVK_KIND_CONV] = "conv", [NXVK_KIND_LINALG] = "linalg", [NXVK_KIND_INDEX] = "index",
};

static const struct {
  unsigned bit;
  const char *keys;
} attr_keys[] = {
    {NXVK_ATTR_AXES, "axes"},   {NXVK_ATTR_KEEP_AXES, "keep_axes"},
    {NXVK_ATTR_PERM, "perm"},   {NXVK_ATTR_SLICE, "start length stride"},
    {NXVK_ATTR_AXIS, "axis"},   {NXVK_ATTR_SHAPE, "shape"},
    {NXVK_ATTR_DTYPE, "dtype"}, {NXVK_ATTR_SEED, "seed"},
    {NXVK_ATTR_VARIANT, "variant"},
    {NXVK_ATTR_REVERSE, "reverse"}, {NXVK_ATTR_DIRECTION, "direction"}, {NXVK_ATTR_K, "k"},
    {NXVK_ATTR_WINDOW, "window_dimensions strides padding window_dilations"},
    {NXVK_ATTR_CONV, "strides padding input_dilation kernel_dilation feature_group_size batch_group_size "
                     "input_permutation kernel_permutation output_permutation"},
    {NXVK_ATTR_TRIANGULAR, "left_side lower transform_a"},
    {NXVK_ATTR_PAD, "low high interior"},
};

static cJSON *dtype_list(port_server *s, unsigned mask) {
  cJSON *a = cJSON_CreateArray();
  for (int d = 0; d < NXVK_NDTYPES; d++)
    if ((mask & NXVK_DT(d)) && nxvk_ctx_supports(s->ctx, (nxvk_dtype)d))
      cJSON_AddItemToArray(a, cJSON_CreateString(nxvk_dtype_name((nxvk_dtype)d)));
  return a;
}

static int cmd_info_(port_server *s, cJSON *req, port_frame *f, port_reply *r) {
  nxvk_device_info d;
  nxvk_ctx_device_info(s->ctx, &d);
  cJSON *o = r->json;
  cJSON_AddNumberToObject(o, "protocol", PORT_PROTOCOL);
  cJSON_AddStringToObject(o, "version", NXVK_VERSION);
  cJSON_AddNumberToObject(o, "generation", (double)s->generation);
  cJSON *dev = cJSON_AddObjectToObject(o, "device");
  cJSON_AddNumberToObject(dev, "index", d.index);
  cJSON_AddStringToObject(dev, "name", d.name);
  cJSON_AddStringToObject(dev, "vendor", d.vendor);
  cJSON_AddStringToObject(dev, "type", d.type);
  cJSON_AddStringToObject(dev, "driver_name", d.driver_name);
  cJSON_AddStringToObject(dev, "driver_version", d.driver_version);
  cJSON_AddStringToObject(dev, "api_version", d.api_version);
  cJSON_AddNumberToObject(dev, "max_storage_buffer_range", (double)d.max_storage_buffer_range);
  cJSON_AddItemToObject(o, "dtypes", dtype_list(s, NXVK_DT_ANY));
  /* the dtype table, so a client maps names without a copy of its own:
   * {"name": "bf16", "nx": "bf:16", "numpy": "<V2", "bytes": 2, "supported": true} */
  cJSON *tab = cJSON_AddArrayToObject(o, "dtype_table");
  for (int i = 0; i < NXVK_NDTYPES; i++) {
    const nxvk_dtype_info *t = nxvk_dtype_info_of((nxvk_dtype)i);
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "name", t->name);
    char nx[16], npy[8];
    /* "{:bf, 16}" -> "bf:16" */
    snprintf(nx, sizeof nx, "%.*s:%d", (int)(strchr(t->nx, ',') - t->nx - 2), t->nx + 2,
             t->cls == NXVK_CLASS_BOOL ? 8 : t->bits);
    snprintf(npy, sizeof npy, "%c%s", t->size == 1 ? '|' : '<', t->npy);
    cJSON_AddStringToObject(e, "nx", nx);
    cJSON_AddStringToObject(e, "numpy", npy);
    cJSON_AddNumberToObject(e, "bytes", (double)t->size);
    cJSON_AddBoolToObject(e, "supported", nxvk_ctx_supports(s->ctx, (nxvk_dtype)i));
    cJSON_AddItemToArray(tab, e);
  }
  cJSON *lim = cJSON_AddObjectToObject(o, "limits");
  cJSON_AddNumberToObject(lim, "max_frame", (double)s->max_frame);
  cJSON_AddNumberToObject(lim, "max_header", (double)PORT_MAX_HEADER);
  cJSON_AddNumberToObject(lim, "max_rank", NXVK_MAX_RANK);
  cJSON_AddNumberToObject(lim, "max_inputs", NXVK_MAX_INPUTS);
  cJSON_AddNumberToObject(lim, "max_elements", (double)NXVK_MAX_ELEMENTS - 1);
  cJSON_AddNumberToObject(lim, "max_graph_nodes", NXVK_MAX_GRAPH_NODES);
  cJSON *ops = cJSON_AddArrayToObject(o, "ops");
  for (int i = 0; i < nxvk_op_count(); i++) {
    const nxvk_op_desc *op = nxvk_op_at(i);
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "name", op->name);
    cJSON_AddStringToObject(e, "kind", kind_names[op->kind]);
    cJSON_AddNumberToObject(e, "arity", op->arity);
    cJSON_AddItemToObject(e, "dtypes", dtype_list(s, op->dtypes));
    cJSON *at = cJSON_AddArrayToObject(e, "attrs");
    for (size_t k = 0; k < sizeof attr_keys / sizeof attr_keys[0]; k++) {
      if (!(op->attrs & attr_keys[k].bit)) continue;
      char keys[192];
      snprintf(keys, sizeof keys, "%s", attr_keys[k].keys);
      for (char *save = NULL, *w = strtok_r(keys, " ", &save); w; w = strtok_r(NULL, " ", &save))
        cJSON_AddItemToArray(at, cJSON_CreateString(w));
    }
    cJSON_AddStringToObject(e, "summary", op->summary);
    cJSON_AddItemToArray(ops, e);
  }
  return NXVK_OK;
}

static int cmd_ping(port_server *s, cJSON *req, port_frame *f, port_reply *r) {
  cJSON_AddBoolToObject(r->json, "pong", true);
  const cJSON *echo = field(req, "echo");
  if (echo) cJSON_AddItemToObject(r->json, "echo", cJSON_Duplicate(echo, true));
  /* the request's bytes come back as they came, for framing checks */
  r->echo = f->data;
  r->echo_len = f->data_len;
  f->taken = f->data_len;
  cJSON_AddNumberToObject(r->json, "nbytes", (double)f->data_len);
  return NXVK_OK;
}

/* ---- shared memory (put and get with "shm") ---- */

static void shm_unmap(port_server *s, struct port_shm *m) {
  /* a registration of a closed context (device lost) went with it */
  if (m->registered && m->reg_gen == s->generation + 1) nxvk_host_unregister(s->ctx, m->map);
  if (m->map && m->size) munmap(m->map, m->size);
  memset(m, 0, sizeof *m);
}

static void shm_unmap_all(port_server *s) {
  for (size_t i = 0; i < sizeof s->shm / sizeof s->shm[0]; i++) shm_unmap(s, &s->shm[i]);
}

/* "shm": {"name": "/NAME", "offset": N, "length": N} of a put or get: the
 * POSIX shared memory object (shm_open(3): under /dev/shm on Linux) the
 * tensor's bytes are read from (put) or written to (get) at offset, so
 * they cross no pipe.  need: the tensor's bytes; put wants length (if
 * given) equal to them, get wants at least them.  *at: where they are in
 * this process.  Every check is made before a byte moves; each failure
 * names its field. */
static int shm_map(port_server *s, const char *cmd, const cJSON *o, size_t need, bool write, uint8_t **at) {
  *at = NULL;
  if (!cJSON_IsObject(o))
    return fail(s, NXVK_E_BAD_REQUEST, "%s: \"shm\" must be an object {\"name\", \"offset\", \"length\"}", cmd);
  for (const cJSON *k = o->child; k; k = k->next)
    if (strcmp(k->string, "name") && strcmp(k->string, "offset") && strcmp(k->string, "length"))
      return fail(s, NXVK_E_BAD_REQUEST, "%s: shm: unknown field \"%s\" (accepted: name offset length)", cmd,
                  k->string);
  const cJSON *nv = field(o, "name"), *ov = field(o, "offset"), *lv = field(o, "length");
  const char *name = cJSON_IsString(nv) ? nv->valuestring : NULL;
  size_t nlen = name ? strlen(name) : 0;
  bool name_ok = name && nlen >= 2 && nlen < sizeof s->shm[0].name && name[0] == '/' &&
                 strcmp(name, "/.") && strcmp(name, "/..");
  for (size_t i = 1; name_ok && i < nlen; i++) name_ok = name[i] != '/';
  if (!name_ok)
    return fail(s, NXVK_E_BAD_REQUEST,
                "%s: shm.name: want \"/NAME\", a shared memory object's name (one slash, first; at most %zu bytes)",
                cmd, sizeof s->shm[0].name - 1);
  uint64_t off = 0, len = need;
  if (ov && !json_uint(ov, PORT_MAX_JSON_INT, &off))
    return fail(s, NXVK_E_BAD_REQUEST, "%s: shm.offset: want a whole number of bytes", cmd);
  if (lv && !json_uint(lv, PORT_MAX_JSON_INT, &len))
    return fail(s, NXVK_E_BAD_REQUEST, "%s: shm.length: want a whole number of bytes", cmd);
  if (!write && len != need)
    return fail(s, NXVK_E_SIZE_MISMATCH, "%s: shm.length: %llu bytes; the tensor is %zu", cmd,
                (unsigned long long)len, need);
  if (write && len < need)
    return fail(s, NXVK_E_SIZE_MISMATCH, "%s: shm.length: room for %llu bytes; the tensor is %zu", cmd,
                (unsigned long long)len, need);
  /* read-write where the client allows it, puts too: the device imports
   * writable pages (nxvk_host_register), and one mapping serves both */
  int fd = shm_open(name, O_RDWR, 0);
  bool rw = fd >= 0;
  if (fd < 0 && !write && errno == EACCES) fd = shm_open(name, O_RDONLY, 0);
  if (fd < 0)
    return fail(s, NXVK_E_BAD_REQUEST, "%s: shm.name: cannot open %s%s: %s", cmd, name,
                write ? " to write" : "", strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return fail(s, NXVK_E_BAD_REQUEST, "%s: shm.name: %s is not a shared memory object", cmd, name);
  }
  size_t size = (size_t)st.st_size;
  if (off > size || need > size - off) {
    close(fd);
    return fail(s, NXVK_E_SIZE_MISMATCH, "%s: shm.offset: %llu + %zu bytes runs past the end of %s (%zu bytes)",
                cmd, (unsigned long long)off, need, name, size);
  }
  /* the mapping kept from an earlier request where it is the same object
   * (a name unlinked and made again is another inode), as large, and
   * writable where this one writes */
  struct port_shm *m = NULL, *slot = &s->shm[0];
  for (size_t i = 0; i < sizeof s->shm / sizeof s->shm[0]; i++) {
    struct port_shm *e = &s->shm[i];
    if (e->map && e->dev == st.st_dev && e->ino == st.st_ino && e->size == size && (e->writable || !write) &&
        strcmp(e->name, name) == 0)
      m = e;
    if (!e->map || (slot->map && e->used < slot->used)) slot = e;
  }
  if (!m && need > 0) {
    shm_unmap(s, slot);
    /* the whole object, populated now: one pass of the kernel's, where
     * faulting 64 MiB page by page in the copy took longer than the copy */
    void *p = mmap(NULL, size, rw ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (p == MAP_FAILED) {
      int e = errno;
      close(fd);
      return fail(s, NXVK_E_NO_MEMORY, "%s: shm.name: cannot map %s (%zu bytes): %s", cmd, name, size, strerror(e));
    }
    m = slot;
    snprintf(m->name, sizeof m->name, "%s", name);
    m->dev = st.st_dev;
    m->ino = st.st_ino;
    m->size = size;
    m->writable = rw;
    m->map = p;
  }
  /* imported once for the mapping's life (the device's copy alone, no
   * staging); refused (a read-only mapping, no VK_EXT_external_memory_host),
   * the transfers go through staging as before */
  if (m && m->reg_gen != s->generation + 1) {
    m->reg_gen = s->generation + 1;
    m->registered = nxvk_host_register(s->ctx, m->map, m->size) == NXVK_OK;
  }
  close(fd); /* the mapping keeps the object */
  if (m) {
    m->used = s->requests;
    *at = m->map + off;
  }
  return NXVK_OK;
}

static int cmd_put(port_server *s, cJSON *req, port_frame *f, port_reply *r) {
  nxvk_meta m;
  int rc = parse_meta(s, req, "put", &m);
  if (rc) return rc;
  size_t want = meta_bytes(&m);
  const cJSON *shm = field(req, "shm");
  if (shm && f->data_len)
    return fail(s, NXVK_E_SIZE_MISMATCH, "put: the frame carries %zu tensor bytes; with \"shm\" it carries none",
                f->data_len);
  uint8_t *from = NULL;
  if (shm && (rc = shm_map(s, "put", shm, want, false, &from))) return rc;
  if (!shm && f->data_len != want) {
    char shape[200];
    nxvk_shape_str(&m.shape, shape, sizeof shape);
    return fail(s, NXVK_E_SIZE_MISMATCH, "put: the frame carries %zu tensor bytes; %s %s needs %zu",
                f->data_len, nxvk_dtype_name(m.dtype), shape, want);
  }
  const uint8_t *bytes = from;
  if (!shm) port_frame_take(f, want, &bytes);
  nxvk_tensor *t = NULL;
  uint64_t t0 = now_ns();
  rc = nxvk_tensor_new(s->ctx, m.dtype, &m.shape, &t);
  if (rc == NXVK_OK) rc = nxvk_tensor_upload(s->ctx, t, bytes, want);
  stage_add(s, ST_ENGINE, now_ns() - t0);
  if (rc) {
    nxvk_tensor_free(t);
    return engine_fail(s, "put", rc);
  }
  uint64_t id = new_handle(s, t);
  if (!id) {
    nxvk_tensor_free(t);
    return fail(s, NXVK_E_NO_MEMORY, "put: out of memory for the handle table");
  }
  cJSON_AddNumberToObject(r->json, "handle", (double)id);
  describe(r->json, t);
  return NXVK_OK;
}

static int cmd_get(port_server *s, cJSON *req, port_frame *f, port_reply *r) {
  nxvk_tensor *t;
  int rc = lookup(s, field(req, "handle"), "get", &t);
  if (rc) return rc;
  const cJSON *shm = field(req, "shm");
  if (shm) {
    size_t n = (size_t)nxvk_tensor_count(t) * nxvk_dtype_size(nxvk_tensor_dtype(t));
    uint8_t *to = NULL;
    if ((rc = shm_map(s, "get", shm, n, true, &to))) return rc;
    uint64_t t0 = now_ns();
    if (n) rc = nxvk_tensor_download(s->ctx, t, to, n);
    stage_add(s, ST_ENGINE, now_ns() - t0);
    if (rc) return engine_fail(s, "get", rc);
    cJSON_AddNumberToObject(r->json, "handle", field(req, "handle")->valuedouble);
    describe(r->json, t);
    cJSON_AddNumberToObject(r->json, "nbytes", (double)n);
    return NXVK_OK;
  }
  cJSON_AddNumberToObject(r->json, "handle", field(req, "handle")->valuedouble);
  describe(r->json, t);
  return fetch_into(s, "get", r, t, r->json);
}

static int cmd_free(port_server *s, cJSON *req, port_frame *f, port_reply *r) {
  const cJSON *one = field(req, "handle"), *many = field(req, "handles");
  if (!one == !many) return fail(s, NXVK_E_BAD_REQUEST, "free: give \"handle\": N or \"handles\": [N, ...]");
  if (many && !cJSON_IsArray(many)) return fail(s, NXVK_E_BAD_REQUEST, "free: \"handles\" must be a list");
  /* all known, or nothing freed; a handle listed twice is freed once */
  for (const cJSON *v = one ? one : many->child; v; v = one ? NULL : v->next) {
    uint64_t id;
    if (!json_uint(v, PORT_MAX_JSON_INT, &id) || id == 0)
      return fail(s, NXVK_E_BAD_REQUEST, "free: a handle is a positive integer");
    if (!handle_find(&s->handles, id))
      return fail(s, NXVK_E_UNKNOWN_HANDLE, "free: handle %llu is not live (never given out, or freed)",
                  (unsigned long long)id);
  }
  int n = 0;
  for (const cJSON *v = one ? one : many->child; v; v = one ? NULL : v->next) {
    port_handle *h = handle_find(&s->handles, (uint64_t)v->valuedouble);
    if (h) drop_handle(s, h), n++;
  }
  cJSON_AddNumberToObject(r->json, "freed", n);
  return NXVK_OK;
}

static int cmd_op(port_server *s, cJSON *req, port_frame *f, port_reply *r) {
  const cJSON *name = field(req, "op"), *in = field(req, "in"), *attrs = field(req, "attrs");
  if (!cJSON_IsString(name))
    return fail(s, NXVK_E_BAD_REQUEST, "op: \"op\" must name an op (info lists them)");
  const nxvk_op_desc *op = nxvk_op_find(name->valuestring);
  if (!op) return fail(s, NXVK_E_UNKNOWN_OP, "op: unknown op '%s' (info lists them)", name->valuestring);
  char where[64];
  snprintf(where, sizeof where, "op %s", op->name);
  bool fetch, keep;
  int rc = json_flag(s, req, where, "fetch", false, &fetch);
  if (rc == NXVK_OK) rc = json_flag(s, req, where, "keep", true, &keep);
  if (rc) return rc;
  if (in && !cJSON_IsArray(in))
    return fail(s, NXVK_E_BAD_REQUEST, "%s: \"in\" must be a list of handles", where);
  int nin = in ? cJSON_GetArraySize(in) : 0;
  if (nin > NXVK_MAX_INPUTS)
    return fail(s, NXVK_E_TOO_LARGE, "%s: %d inputs is over the limit of %d", where, nin, NXVK_MAX_INPUTS);
  nxvk_tensor *args[NXVK_MAX_INPUTS];
  int k = 0;
  for (const cJSON *v = in ? in->child : NULL; v; v = v->next, k++) {
    char what[96];
    snprintf(what, sizeof what, "%s: in[%d]", where, k);
    rc = lookup(s, v, what, &args[k]);
    if (rc) return rc;
  }
  nxvk_attrs a;
  char *text = attrs ? cJSON_PrintUnformatted(attrs) : NULL;
  if (attrs && !text) return fail(s, NXVK_E_NO_MEMORY, "%s: out of memory", where);
  rc = nxvk_attrs_parse(op, text, &a);
  free(text);
  if (rc) return engine_fail(s, "op", rc);
  nxvk_tensor *out = NULL;
  uint64_t t0 = now_ns();
  rc = nxvk_op_run(s->ctx, op, &a, args, nin, &out);
  stage_add(s, ST_ENGINE, now_ns() - t0);
  if (rc) return engine_fail(s, "op", rc);
  describe(r->json, out);
  if (fetch) rc = fetch_into(s, where, r, out, r->json);
  if (rc == NXVK_OK && keep) {
    uint64_t id = new_handle(s, out);
    if (!id) rc = fail(s, NXVK_E_NO_MEMORY, "%s: out of memory for the handle table", where);
    else cJSON_AddNumberToObject(r->json, "handle", (double)id);
    if (id) out = NULL;
  }
  nxvk_tensor_free(out);
  return rc;
}

/* Inputs of a run request whose bytes ride in the frame:
 * {"dtype": D, "shape": S, "bytes": true}.  Each becomes a tensor here and the
 * request's graph names it by a handle number known only to this request. */
typedef struct {
  const char *name; /* the input's name (in the request's JSON) */
  uint64_t id;
  nxvk_tensor *t;
} run_temp;

static int run_frame_inputs(port_server *s, cJSON *graph, port_frame *f, run_temp *temps, int *ntemps) {
  cJSON *inputs = cJSON_GetObjectItemCaseSensitive(graph, "inputs");
  /* not an object: nxvk_graph_parse says what is wrong */
  for (cJSON *v = cJSON_IsObject(inputs) ? inputs->child : NULL; v; v = v->next) {
    char where[300];
    snprintf(where, sizeof where, "run: inputs.%s", v->string);
    if (cJSON_IsString(v))
      return fail(s, NXVK_E_BAD_REQUEST,
                  "%s: the port reads no files (put the tensor, then name its handle)", where);
    const cJSON *bytes = cJSON_IsObject(v) ? field(v, "bytes") : NULL;
    if (!bytes) continue;
    if (!cJSON_IsTrue(bytes)) return fail(s, NXVK_E_BAD_REQUEST, "%s: \"bytes\" can only be true", where);
    for (const cJSON *k = v->child; k; k = k->next)
      if (strcmp(k->string, "dtype") && strcmp(k->string, "shape") && strcmp(k->string, "bytes"))
        return fail(s, NXVK_E_BAD_REQUEST, "%s: unknown field \"%s\" (dtype shape bytes)", where, k->string);
    nxvk_meta m;
    int rc = parse_meta(s, v, where, &m);
    if (rc) return rc;
    size_t n = meta_bytes(&m);
    const uint8_t *data;
    if (port_frame_take(f, n, &data))
      return fail(s, NXVK_E_SIZE_MISMATCH, "%s: needs %zu bytes but the frame has %zu left", where,
                  n, port_frame_left(f));
    run_temp *tmp = &temps[*ntemps];
    rc = nxvk_tensor_new(s->ctx, m.dtype, &m.shape, &tmp->t);
    if (rc == NXVK_OK) rc = nxvk_tensor_upload(s->ctx, tmp->t, data, n);
    if (rc) {
      nxvk_tensor_free(tmp->t);
      return engine_fail(s, "run", rc);
    }
    tmp->id = ++s->next_handle;
    tmp->name = v->string;
    (*ntemps)++;
    cJSON *ref = cJSON_CreateObject();
    cJSON_AddNumberToObject(ref, "handle", (double)tmp->id);
    ref->string = v->string; /* the input keeps its name */
    v->string = NULL;
    cJSON_ReplaceItemViaPointer(inputs, v, ref);
    v = ref;
  }
  if (port_frame_left(f))
    return fail(s, NXVK_E_SIZE_MISMATCH, "run: %zu tensor bytes in the frame that no input claims",
                port_frame_left(f));
  return NXVK_OK;
}

static int run_outputs_check(port_server *s, const cJSON *graph) {
  const cJSON *outs = field(graph, "outputs");
  for (const cJSON *v = cJSON_IsObject(outs) ? outs->child : NULL; v; v = v->next)
    if (cJSON_IsString(v))
      return fail(s, NXVK_E_BAD_REQUEST, "run: outputs.%s: the port writes no files (use true)", v->string);
  return NXVK_OK;
}

static bool wants_fetch(const cJSON *fetch, const char *name) {
  if (cJSON_IsTrue(fetch)) return true;
  for (const cJSON *v = cJSON_IsArray(fetch) ? fetch->child : NULL; v; v = v->next)
    if (cJSON_IsString(v) && strcmp(v->valuestring, name) == 0) return true;
  return false;
}

static void send_reply(port_server *s, const cJSON *id, int rc, port_reply *r);

/* An early reply (a run or exec with "early": true, keep and no fetch):
 * the outputs' dtypes and shapes are inferred and their handles numbered
 * first, the reply written, and the graph run after it, before the next
 * request is read.  The client's side of the round trip (the pipe, the
 * BEAM's wake-ups, decoding) then overlaps the engine's submit and wait
 * instead of following it.  The reply cannot report a failure of the run
 * itself: its handles then answer that error's code to whatever names
 * them (stats' early_failures counts such runs).  Returns 1 when the graph does not
 * qualify (an inference error, which the normal path reports, or outputs
 * that would take over half of the --max-bytes headroom: alloc_failed must
 * stay a reply the client can retry). */
static int graph_exec_early(port_server *s, const nxvk_graph *g, nxvk_tensor **tin, port_reply *r) {
  int ni = nxvk_graph_input_count(g), total = ni + nxvk_graph_node_count(g);
  int no = nxvk_graph_output_count(g);
  nxvk_meta metas_small[16], *metas = total + 1 > 16 ? calloc((size_t)total + 1, sizeof *metas) : metas_small;
  if (!metas) return 1;
  int rc = NXVK_OK;
  for (int i = 0; i < ni; i++) metas[i] = (nxvk_meta){nxvk_tensor_dtype(tin[i]), *nxvk_tensor_shape(tin[i])};
  for (int v = ni; v < total && rc == NXVK_OK; v++) {
    const nxvk_attrs *a;
    const int *ops;
    int nops;
    const nxvk_op_desc *op = nxvk_graph_value_op(g, v, &a, &ops, &nops);
    nxvk_meta in[NXVK_MAX_INPUTS];
    for (int k = 0; k < nops; k++) in[k] = metas[ops[k]];
    rc = nxvk_op_infer(op, a, in, nops, &metas[v]);
    /* what the recording would refuse (a dtype or kernel this device
     * lacks: the client falls back on such codes) is answered now, as are
     * the scans, whose one-pass kernels may answer unsupported after
     * running (scan.c) */
    if (rc == NXVK_OK && (!nxvk_ctx_supports(s->ctx, metas[v].dtype) || op->kind == NXVK_KIND_SCAN))
      rc = NXVK_E_UNSUPPORTED;
    if (rc == NXVK_OK) rc = nxvk_op_supported(s->ctx, op, a, in, nops);
  }
  uint64_t out_bytes = 0;
  for (int o = 0; o < no && rc == NXVK_OK; o++) out_bytes += meta_bytes(&metas[nxvk_graph_output_value(g, o)]);
  if (rc || (s->max_bytes && s->handle_bytes + out_bytes > s->max_bytes / 2)) {
    if (metas != metas_small) free(metas);
    return 1;
  }
  uint64_t first = s->next_handle + 1;
  s->next_handle += (uint64_t)no;
  cJSON *outs = cJSON_AddArrayToObject(r->json, "outputs");
  for (int o = 0; o < no; o++) {
    const nxvk_meta *m = &metas[nxvk_graph_output_value(g, o)];
    cJSON *e = cJSON_CreateObject();
    cJSON_AddItemToArray(outs, e);
    cJSON_AddStringToObject(e, "name", nxvk_graph_output_name(g, o));
    cJSON_AddStringToObject(e, "dtype", nxvk_dtype_name(m->dtype));
    cJSON_AddItemToObject(e, "shape", shape_json(&m->shape));
    cJSON_AddNumberToObject(e, "handle", (double)(first + (uint64_t)o));
  }
  if (metas != metas_small) free(metas);
  uint64_t t0 = now_ns();
  send_reply(s, s->cur_id, NXVK_OK, r);
  s->early_reply_ns += now_ns() - t0;
  s->replied = true;
  s->early_cur = true;
  s->early_runs++;

  /* deferred (s->defer_wait): on the heap, kept until the wait */
  nxvk_tensor *vals_small[16],
      **vals = total + 1 > 16 || s->defer_wait ? calloc((size_t)total + 1, sizeof *vals) : vals_small;
  rc = vals ? NXVK_OK : nxvk_seterr(NXVK_E_NO_MEMORY, "out of memory");
  t0 = now_ns();
  struct nxvk_rec *pending = NULL;
  nxvk_run_opts ro = {.pending = s->defer_wait ? &pending : NULL};
  if (rc == NXVK_OK) rc = nxvk_graph_run_opts(s->ctx, g, tin, vals, &ro);
  stage_add(s, ST_ENGINE, now_ns() - t0);
  if (rc == NXVK_E_DEVICE_LOST && s->ctx) nxvk_ctx_mark_lost(s->ctx);
  /* the engine's message names the op that failed (ops[i] (op -> value)):
   * each handle keeps it for the error at its next use */
  char msg[512] = "";
  if (rc) snprintf(msg, sizeof msg, "%s", nxvk_errmsg());
  for (int o = 0; o < no; o++) {
    nxvk_tensor *view = NULL;
    const nxvk_tensor *t = rc ? NULL : vals[nxvk_graph_output_value(g, o)];
    if (t) rc = nxvk_tensor_view(t, nxvk_tensor_shape(t), &view);
    port_handle *h = handle_insert(&s->handles, first + (uint64_t)o);
    if (!h) { /* out of host memory: the handle stays unknown */
      nxvk_tensor_free(view);
      continue;
    }
    h->generation = s->generation;
    if (view) {
      h->t = view;
      h->bytes = (size_t)nxvk_tensor_count(view) * nxvk_dtype_size(nxvk_tensor_dtype(view));
      s->live_handles++;
      s->handle_bytes += h->bytes;
    } else {
      h->err = rc ? rc : NXVK_E_NO_MEMORY;
      h->msg = strdup(msg[0] ? msg : nxvk_errmsg());
      s->lost_handles++;
    }
  }
  if (rc) s->early_failures++; /* nothing on stderr while serving (nxvk-port(7)) */
  if (pending && rc == NXVK_OK) { /* finish_pending waits, before the next request */
    s->pend = pending;
    s->pend_vals = vals;
    s->pend_total = total;
    s->pend_first = first;
    s->pend_no = no;
    return NXVK_OK;
  }
  if (pending) {
    (void)nxvk_graph_finish(pending); /* a handle failed: wait, then free */
  }
  if (vals)
    for (int i = 0; i < total; i++) nxvk_tensor_free(vals[i]);
  if (vals != vals_small) free(vals);
  return NXVK_OK;
}

/* The wait of an early run submitted and not waited for (NXVK_PORT_DEFER_WAIT):
 * called before the next request is served (and at the end), so the GPU's
 * latency passes while the client reads the reply and sends that request.
 * A failure turns the run's handles into its error, as graph_exec_early's. */
static void finish_pending(port_server *s) {
  if (!s->pend) return;
  uint64_t t0 = now_ns();
  int rc = nxvk_graph_finish(s->pend);
  stage_add(s, ST_ENGINE, now_ns() - t0);
  s->pend = NULL;
  if (rc) {
    if (rc == NXVK_E_DEVICE_LOST && s->ctx) nxvk_ctx_mark_lost(s->ctx);
    char msg[512];
    snprintf(msg, sizeof msg, "run: %s", nxvk_errmsg());
    for (int o = 0; o < s->pend_no; o++) {
      port_handle *h = handle_find(&s->handles, s->pend_first + (uint64_t)o);
      if (!h || !h->t) continue;
      nxvk_tensor_free(h->t);
      h->t = NULL;
      s->live_handles--;
      s->handle_bytes -= h->bytes;
      s->lost_handles++;
      h->err = rc;
      h->msg = strdup(msg);
    }
    s->early_failures++;
  }
  for (int i = 0; i < s->pend_total; i++) nxvk_tensor_free(s->pend_vals[i]);
  free(s->pend_vals);
  s->pend_vals = NULL;
}

/* Runs graph g on its inputs tin (one per graph input) and answers with its
 * outputs: fetched into the reply's bytes where `fetch` asks, kept as new
 * handles when `keep`.  The run and exec commands end here. */
static int graph_exec(port_server *s, const nxvk_graph *g, nxvk_tensor **tin, const cJSON *fetch,
                      bool keep, bool early, port_reply *r) {
  if (early && keep && (!fetch || cJSON_IsFalse(fetch)) && graph_exec_early(s, g, tin, r) == NXVK_OK)
    return NXVK_OK;
  int ni = nxvk_graph_input_count(g), total = ni + nxvk_graph_node_count(g);
  nxvk_tensor *vals_small[16], **vals = vals_small;
  if (total + 1 > 16) vals = calloc((size_t)total + 1, sizeof *vals);
  if (!vals) return fail(s, NXVK_E_NO_MEMORY, "run: out of memory");
  uint64_t t0 = now_ns();
  int rc = nxvk_graph_run(s->ctx, g, tin, vals);
  stage_add(s, ST_ENGINE, now_ns() - t0);
  if (rc) rc = engine_fail(s, "run", rc);
  if (rc == NXVK_OK) {
    int no = nxvk_graph_output_count(g);
    cJSON *outs = cJSON_AddArrayToObject(r->json, "outputs");
    if (cJSON_IsArray(fetch))
      for (const cJSON *v = fetch->child; v && rc == NXVK_OK; v = v->next) {
        bool found = false;
        for (int o = 0; o < no; o++)
          found |= cJSON_IsString(v) && strcmp(v->valuestring, nxvk_graph_output_name(g, o)) == 0;
        if (!found) rc = fail(s, NXVK_E_BAD_REQUEST, "run: fetch names \"%s\", which is not an output",
                              cJSON_IsString(v) ? v->valuestring : "(not a string)");
      }
    /* bytes first (a failure leaves no handle behind), then handles */
    for (int o = 0; o < no && rc == NXVK_OK; o++) {
      const char *name = nxvk_graph_output_name(g, o);
      const nxvk_tensor *t = vals[nxvk_graph_output_value(g, o)];
      cJSON *e = cJSON_CreateObject();
      cJSON_AddItemToArray(outs, e);
      cJSON_AddStringToObject(e, "name", name);
      describe(e, t);
      if (wants_fetch(fetch, name)) rc = fetch_into(s, "run", r, t, e);
    }
    int o = 0;
    for (cJSON *e = outs->child; e && keep && rc == NXVK_OK; e = e->next, o++) {
      const nxvk_tensor *t = vals[nxvk_graph_output_value(g, o)];
      nxvk_tensor *view = NULL;
      rc = nxvk_tensor_view(t, nxvk_tensor_shape(t), &view);
      uint64_t id = rc ? 0 : new_handle(s, view);
      if (rc) rc = engine_fail(s, "run", rc);
      else if (!id) rc = fail(s, NXVK_E_NO_MEMORY, "run: out of memory for the handle table");
      if (!id) nxvk_tensor_free(view);
      else cJSON_AddNumberToObject(e, "handle", (double)id);
    }
    if (rc) /* no handle survives a failed run */
      for (cJSON *e = outs->child; e; e = e->next) {
        const cJSON *id = field(e, "handle");
        port_handle *h = id ? handle_find(&s->handles, (uint64_t)id->valuedouble) : NULL;
        if (h) drop_handle(s, h);
      }
    for (int i = 0; i < total; i++) nxvk_tensor_free(vals[i]);
  }
  if (vals != vals_small) free(vals);
  return rc;
}

static int run_flags(port_server *s, const char *cmd, cJSON *req, const cJSON **fetch, bool *keep, bool *early) {
  *fetch = field(req, "fetch");
  if (*fetch && !cJSON_IsBool(*fetch) && !cJSON_IsArray(*fetch))
    return fail(s, NXVK_E_BAD_REQUEST, "%s: \"fetch\" must be true, false or a list of output names", cmd);
  int rc = json_flag(s, req, cmd, "keep", true, keep);
  return rc ? rc : json_flag(s, req, cmd, "early", false, early);
}

static int cmd_graph_run(port_server *s, cJSON *req, port_frame *f, port_reply *r) {
  cJSON *graph = cJSON_GetObjectItemCaseSensitive(req, "graph");
  const cJSON *fetch;
  bool keep, early;
  if (!cJSON_IsObject(graph))
    return fail(s, NXVK_E_BAD_REQUEST, "run: \"graph\" must be a graph object (inputs ops outputs)");
  int rc = run_flags(s, "run", req, &fetch, &keep, &early);
  if (rc == NXVK_OK) rc = run_outputs_check(s, graph);
  if (rc) return rc;

  const cJSON *inputs = field(graph, "inputs");
  int ninputs = cJSON_IsObject(inputs) ? cJSON_GetArraySize(inputs) : 0;
  run_temp *temps = calloc((size_t)ninputs + 1, sizeof *temps);
  int ntemps = 0;
  nxvk_graph *g = NULL;
  nxvk_tensor **tin = NULL;
  bool *owned = NULL;
  int ni = 0;
  if (!temps) return fail(s, NXVK_E_NO_MEMORY, "run: out of memory");
  rc = run_frame_inputs(s, graph, f, temps, &ntemps);
  if (rc == NXVK_OK) {
    /* the request's nesting was checked with its frame (PORT_MAX_DEPTH) */
    rc = nxvk_graph_from_cjson(graph, "run", &g);
    /* a request is not a file: its faults are bad requests */
    if (rc) rc = fail(s, rc == NXVK_E_BAD_FILE ? NXVK_E_BAD_REQUEST : rc, "%s", nxvk_errmsg());
  }
  if (rc == NXVK_OK) {
    ni = nxvk_graph_input_count(g);
    tin = calloc((size_t)ni + 1, sizeof *tin);
    owned = calloc((size_t)ni + 1, sizeof *owned);
    if (!tin || !owned) rc = fail(s, NXVK_E_NO_MEMORY, "run: out of memory");
  }
  for (int i = 0; i < ni && rc == NXVK_OK; i++) {
    char where[300];
    snprintf(where, sizeof where, "run: inputs.%s", nxvk_graph_input_name(g, i));
    if (nxvk_graph_input_kind_of(g, i) == NXVK_GRAPH_IN_INLINE) {
      rc = nxvk_tensor_from_host(s->ctx, nxvk_graph_input_host(g, i), &tin[i]);
      owned[i] = rc == NXVK_OK;
      if (rc) rc = engine_fail(s, where, rc);
      continue;
    }
    uint64_t id = nxvk_graph_input_handle(g, i);
    for (int k = 0; k < ntemps && !tin[i]; k++)
      if (temps[k].id == id && strcmp(temps[k].name, nxvk_graph_input_name(g, i)) == 0) tin[i] = temps[k].t;
    if (!tin[i]) rc = lookup_id(s, id, where, &tin[i]);
  }
  if (rc == NXVK_OK) rc = graph_exec(s, g, tin, fetch, keep, early, r);
  for (int i = 0; i < ni && tin; i++)
    if (owned[i]) nxvk_tensor_free(tin[i]);
  for (int k = 0; k < ntemps; k++) nxvk_tensor_free(temps[k].t);
  free(temps);
  free(tin);
  free(owned);
  nxvk_graph_free(g);
  return rc;
}

/* Prepared graphs (prepare, exec, release): a graph parsed once and kept,
 * whose parameters ("name": true in its inputs) are named by handles in
 * each exec request, so a compiled function that runs again sends only
 * the graph's number and its inputs' handles. */
static port_prepared *prepared_find(port_server *s, const cJSON *v, const char *cmd) {
  uint64_t id;
  if (!json_uint(v, PORT_MAX_JSON_INT, &id) || id == 0) {
    fail(s, NXVK_E_BAD_REQUEST, "%s: \"graph\" must be a prepared graph's number (from prepare)", cmd);
    return NULL;
  }
  for (size_t i = 0; i < s->nprepared; i++)
    if (s->prepared[i].id == id) return &s->prepared[i];
  fail(s, NXVK_E_UNKNOWN_HANDLE, "%s: graph %llu is not prepared (never, or released)", cmd,
       (unsigned long long)id);
  return NULL;
}

static int cmd_prepare(port_server *s, cJSON *req, port_frame *f, port_reply *r) {
  cJSON *graph = cJSON_GetObjectItemCaseSensitive(req, "graph");
  if (!cJSON_IsObject(graph))
    return fail(s, NXVK_E_BAD_REQUEST, "prepare: \"graph\" must be a graph object (inputs ops outputs)");
  int rc = run_outputs_check(s, graph);
  if (rc) return rc;
  if (s->nprepared >= PORT_MAX_PREPARED)
    return fail(s, NXVK_E_TOO_LARGE, "prepare: %d graphs are prepared already (release some)",
                PORT_MAX_PREPARED);
  /* parameters ("x": true) become placeholder handles (exec names the real
   * ones); param[i]: input i's parameter number, or -1 for a tensor kept by
   * handle or given inline */
  cJSON *inputs = cJSON_GetObjectItemCaseSensitive(graph, "inputs");
  int nin = cJSON_IsObject(inputs) ? cJSON_GetArraySize(inputs) : 0, nparams = 0, k = 0;
  int *param = calloc((size_t)nin + 1, sizeof *param);
  if (!param) return fail(s, NXVK_E_NO_MEMORY, "prepare: out of memory");
  for (cJSON *v = nin ? inputs->child : NULL; v && rc == NXVK_OK; v = v->next, k++) {
    param[k] = -1;
    if (cJSON_IsObject(v) && field(v, "bytes"))
      rc = fail(s, NXVK_E_BAD_REQUEST, "prepare: inputs.%s: a prepared graph takes no bytes "
                "(a parameter is true, a tensor a handle)", v->string);
    else if (cJSON_IsString(v))
      rc = fail(s, NXVK_E_BAD_REQUEST,
                "prepare: inputs.%s: the port reads no files (put the tensor, then name its handle)",
                v->string);
    if (rc || !cJSON_IsTrue(v)) continue;
    cJSON *ph = cJSON_CreateObject();
    if (!ph || !cJSON_AddNumberToObject(ph, "handle", (double)(nparams + 1))) {
      cJSON_Delete(ph);
      rc = fail(s, NXVK_E_NO_MEMORY, "prepare: out of memory");
      continue;
    }
    ph->string = v->string;
    v->string = NULL;
    cJSON_ReplaceItemViaPointer(inputs, v, ph);
    v = ph;
    param[k] = nparams++;
  }
  nxvk_graph *g = NULL;
  if (rc == NXVK_OK) {
    rc = nxvk_graph_from_cjson(graph, "prepare", &g);
    if (rc) rc = fail(s, rc == NXVK_E_BAD_FILE ? NXVK_E_BAD_REQUEST : rc, "%s", nxvk_errmsg());
  }
  port_prepared *grown = rc ? NULL : realloc(s->prepared, (s->nprepared + 1) * sizeof *grown);
  if (rc == NXVK_OK && !grown) rc = fail(s, NXVK_E_NO_MEMORY, "prepare: out of memory");
  if (rc) {
    free(param);
    nxvk_graph_free(g);
    return rc;
  }
  s->prepared = grown;
  port_prepared *p = &s->prepared[s->nprepared++];
  *p = (port_prepared){.id = ++s->next_prepared, .g = g, .param = param, .nparams = nparams};
  cJSON_AddNumberToObject(r->json, "graph", (double)p->id);
  cJSON_AddNumberToObject(r->json, "params", nparams);
  return NXVK_OK;
}
static int cmd_exec(port_server *s, cJSON *req, port_frame *f, port_reply *r) {
  const port_prepared *p = prepared_find(s, field(req, "graph"), "exec");
  if (!p) return s->code;
  const cJSON *fetch, *in = field(req, "in");
  bool keep, early;
  int rc = run_flags(s, "exec", req, &fetch, &keep, &early);
  if (rc) return rc;
  if (!cJSON_IsArray(in) || cJSON_GetArraySize(in) != p->nparams)
    return fail(s, NXVK_E_BAD_REQUEST, "exec: \"in\" must list %d handle%s, one per parameter of graph %llu",
                p->nparams, p->nparams == 1 ? "" : "s", (unsigned long long)p->id);
  int ni = nxvk_graph_input_count(p->g);
  nxvk_tensor *tin_small[16] = {0}, **tin = tin_small;
  bool owned_small[16] = {0}, *owned = owned_small;
  if (ni + 1 > 16) {
    tin = calloc((size_t)ni + 1, sizeof *tin);
    owned = calloc((size_t)ni + 1, sizeof *owned);
    if (!tin || !owned) rc = fail(s, NXVK_E_NO_MEMORY, "exec: out of memory");
  }
  const cJSON *arg = in->child;
  for (int i = 0; i < ni && rc == NXVK_OK; i++) {
    char where[300];
    snprintf(where, sizeof where, "exec: inputs.%s", nxvk_graph_input_name(p->g, i));
    if (p->param[i] >= 0) {
      rc = lookup(s, arg, where, &tin[i]);
      arg = arg->next;
    } else if (nxvk_graph_input_kind_of(p->g, i) == NXVK_GRAPH_IN_INLINE) {
      rc = nxvk_tensor_from_host(s->ctx, nxvk_graph_input_host(p->g, i), &tin[i]);
      owned[i] = rc == NXVK_OK;
      if (rc) rc = engine_fail(s, where, rc);
    } else {
      rc = lookup_id(s, nxvk_graph_input_handle(p->g, i), where, &tin[i]);
    }
  }
  if (rc == NXVK_OK) rc = graph_exec(s, p->g, tin, fetch, keep, early, r);
  for (int i = 0; i < ni && tin && owned; i++)
    if (owned[i]) nxvk_tensor_free(tin[i]);
  if (tin != tin_small) free(tin);
  if (owned != owned_small) free(owned);
  return rc;
}

static int cmd_release(port_server *s, cJSON *req, port_frame *f, port_reply *r) {
  port_prepared *p = prepared_find(s, field(req, "graph"), "release");
  if (!p) return s->code;
  nxvk_graph_free(p->g);
  free(p->param);
  *p = s->prepared[--s->nprepared];
  cJSON_AddNumberToObject(r->json, "released", 1);
  return NXVK_OK;
}

static int cmd_stats(port_server *s, cJSON *req, port_frame *f, port_reply *r) {
  nxvk_stats st;
  nxvk_ctx_stats(s->ctx, &st);
  cJSON *o = r->json;
  cJSON_AddNumberToObject(o, "handles", (double)s->live_handles);
  cJSON_AddNumberToObject(o, "lost_handles", (double)s->lost_handles);
  cJSON_AddNumberToObject(o, "handle_bytes", (double)s->handle_bytes);
  cJSON_AddNumberToObject(o, "max_bytes", (double)s->max_bytes);
  cJSON_AddNumberToObject(o, "live_tensors", (double)st.live_tensors);
  cJSON_AddNumberToObject(o, "live_bytes", (double)st.live_bytes);
  cJSON_AddNumberToObject(o, "live_buffers", (double)st.live_buffers);
  cJSON_AddNumberToObject(o, "peak_bytes", (double)st.peak_bytes);
  cJSON_AddNumberToObject(o, "pooled_bytes", (double)st.pooled_bytes);
  cJSON_AddNumberToObject(o, "pinned_bytes", (double)st.pinned_bytes);
  cJSON_AddNumberToObject(o, "buffers_created", (double)st.buffers_created);
  cJSON_AddNumberToObject(o, "pipelines_created", (double)st.pipelines_created);
  cJSON_AddNumberToObject(o, "submits", (double)st.submits);
  cJSON_AddNumberToObject(o, "validation_messages", (double)st.validation_messages);
  cJSON_AddNumberToObject(o, "requests", (double)s->requests);
  cJSON_AddNumberToObject(o, "errors", (double)s->errors);
  cJSON_AddNumberToObject(o, "generation", (double)s->generation);
  cJSON_AddNumberToObject(o, "device_losses", (double)s->device_losses);
  cJSON_AddNumberToObject(o, "early_runs", (double)s->early_runs);
  cJSON_AddNumberToObject(o, "early_failures", (double)s->early_failures);
  cJSON_AddNumberToObject(o, "irq_cpus_left", s->irq_cpus_left);
#ifdef __linux__
  cJSON_AddNumberToObject(o, "cpu", sched_getcpu()); /* the vCPU serving requests (and submitting) now */
#endif
  /* the engine's recordings, summed: recording, vkQueueSubmit and its
   * group, the wait for the GPU, release (nxvk-port(7), stats) */
  cJSON *e = cJSON_AddObjectToObject(o, "engine_ns");
  cJSON_AddNumberToObject(e, "recordings", (double)st.recordings);
  cJSON_AddNumberToObject(e, "record", (double)st.record_ns);
  cJSON_AddNumberToObject(e, "submit", (double)st.submit_ns);
  cJSON_AddNumberToObject(e, "wait", (double)st.wait_ns);
  cJSON_AddNumberToObject(e, "release", (double)st.release_ns);
  cJSON *t = cJSON_AddObjectToObject(o, "time_ns"), *l = cJSON_AddObjectToObject(o, "last_ns");
  for (int i = 0; i < 5; i++) {
    cJSON_AddNumberToObject(t, stage_names[i], (double)s->t_sum[i]);
    cJSON_AddNumberToObject(l, stage_names[i], (double)s->t_last[i]);
  }
  cJSON_AddStringToObject(l, "cmd", s->cmd_last ? s->cmd_last : "");
  cJSON_AddBoolToObject(l, "early", s->early_last);
  return NXVK_OK;
}

/* Test hook: what a lost device looks like, without losing one. */
static int cmd_debug_lose_device(port_server *s, cJSON *req, port_frame *f, port_reply *r) {
  nxvk_ctx_mark_lost(s->ctx);
  cJSON_AddNumberToObject(r->json, "generation", (double)s->generation);
  return NXVK_OK;
}

static const struct port_command {
  const char *name;
  port_fn fn;
  const char *fields;  /* accepted besides "id" and "cmd" */
  bool takes_bytes;    /* tensor bytes may follow the header */
  bool test_hook;      /* only with NXVK_TEST_HOOKS=1 */
} commands[] = {
    {"info", cmd_info_, "", false, false},
    {"ping", cmd_ping, "echo", true, false},
    {"put", cmd_put, "dtype shape shm", true, false},
    {"get", cmd_get, "handle shm", false, false},
    {"free", cmd_free, "handle handles", false, false},
    {"op", cmd_op, "op in attrs fetch keep", false, false},
    {"run", cmd_graph_run, "graph fetch keep early", true, false},
    {"prepare", cmd_prepare, "graph", false, false},
    {"exec", cmd_exec, "graph in fetch keep early", false, false},
    {"release", cmd_release, "graph", false, false},
    {"stats", cmd_stats, "", false, false},
    {"debug_lose_device", cmd_debug_lose_device, "", false, true},
};

static bool word_in(const char *list, const char *w) {
  size_t n = strlen(w);
  for (const char *p = list; (p = strstr(p, w)) != NULL; p += n)
    if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return true;
  return false;
}

static int dispatch(port_server *s, cJSON *req, port_frame *f, port_reply *r) {
  const cJSON *cmd = field(req, "cmd");
  if (!cJSON_IsString(cmd))
    return fail(s, NXVK_E_BAD_REQUEST, "a request needs \"cmd\" (info put get free op run prepare exec release stats ping)");
  const struct port_command *c = NULL;
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp(commands[i].name, cmd->valuestring) == 0 && (!commands[i].test_hook || s->hooks))
      c = &commands[i];
  if (!c)
    return fail(s, NXVK_E_BAD_REQUEST, "unknown command '%s' (info put get free op run prepare exec release stats ping)",
                cmd->valuestring);
  for (const cJSON *k = req->child; k; k = k->next)
    if (strcmp(k->string, "id") && strcmp(k->string, "cmd") && !word_in(c->fields, k->string))
      return fail(s, NXVK_E_BAD_REQUEST, "%s: unknown field \"%s\" (accepted: id cmd%s%s)", c->name,
                  k->string, c->fields[0] ? " " : "", c->fields);
  if (!c->takes_bytes && f->data_len)
    return fail(s, NXVK_E_SIZE_MISMATCH, "%s: the frame carries %zu tensor bytes; this command takes none",
                c->name, f->data_len);
  if (s->lost) {
    int rc = reopen_device(s);
    if (rc) return rc;
  }
  s->cmd_cur = c->name;
  return c->fn(s, req, f, r);
}

/* --------------------------------------------------------------- framing */

static ssize_t read_full(int fd, void *buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t k = read(fd, (char *)buf + got, n - got);
    if (k == 0) break;
    if (k < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    got += (size_t)k;
  }
  return (ssize_t)got;
}

/* One frame, written completely (looping over partial writes). */
static int write_frame(port_server *s, const char *hdr, size_t hlen, const uint8_t *d1, size_t n1,
                       const uint8_t *d2, size_t n2) {
  uint8_t prefix[8];
  port_be32_write(prefix, (uint32_t)(4 + hlen + n1 + n2));
  port_be32_write(prefix + 4, (uint32_t)hlen);
  struct iovec iov[4] = {{prefix, 8}, {(void *)hdr, hlen}, {(void *)d1, n1}, {(void *)d2, n2}};
  struct iovec *v = iov;
  int nv = 4;
  port_iov_advance(&v, &nv, 0);
  while (nv > 0) {
    ssize_t k = writev(STDOUT_FILENO, v, nv);
    if (k < 0) {
      if (errno == EINTR) continue;
      if (errno != EPIPE) {
        fprintf(stderr, "nxvk: error: port: writing a reply failed: %s\n", strerror(errno));
        s->status = EXIT_FAIL;
      }
      s->closed = true; /* EPIPE: the client stopped reading; its session is over */
      return -1;
    }
    port_iov_advance(&v, &nv, (size_t)k);
  }
  return 0;
}

/* The reply header's JSON, written straight into a buffer the server keeps
 * (s->hdr, an nxvk_strbuf):
 * cJSON_PrintUnformatted allocates as it goes and prints every number
 * through sprintf and sscanf (a few microseconds a reply).  Integers, every
 * number a reply holds but stats' ratios, print digit by digit; strings are
 * escaped as cJSON escapes them.  NXVK_PORT_CJSON_REPLY=1 prints with cJSON
 * instead (the A/B of bench/NOTES.md "The port's round trip"). */
static void jb_str(nxvk_strbuf *b, const char *s) {
  nxvk_sb_put(b, "\"", 1);
  const char *run = s;
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    nxvk_sb_put(b, run, (size_t)(s - run));
    char esc[8];
    switch (c) {
    case '"': nxvk_sb_put(b, "\\\"", 2); break;
    case '\\': nxvk_sb_put(b, "\\\\", 2); break;
    case '\b': nxvk_sb_put(b, "\\b", 2); break;
    case '\f': nxvk_sb_put(b, "\\f", 2); break;
    case '\n': nxvk_sb_put(b, "\\n", 2); break;
    case '\r': nxvk_sb_put(b, "\\r", 2); break;
    case '\t': nxvk_sb_put(b, "\\t", 2); break;
    default:
      snprintf(esc, sizeof esc, "\\u%04x", c);
      nxvk_sb_put(b, esc, 6);
    }
    run = s + 1;
  }
  nxvk_sb_put(b, run, (size_t)(s - run));
  nxvk_sb_put(b, "\"", 1);
}

static void jb_num(nxvk_strbuf *b, double d) {
  char tmp[32];
  if (isnan(d) || isinf(d)) {
    nxvk_sb_put(b, "null", 4); /* as cJSON prints them */
  } else if (d == floor(d) && fabs(d) < 9.0e18) {
    long long v = (long long)d;
    unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
    int n = (int)sizeof tmp;
    do tmp[--n] = (char)('0' + u % 10);
    while (u /= 10);
    if (v < 0) tmp[--n] = '-';
    nxvk_sb_put(b, tmp + n, sizeof tmp - (size_t)n);
  } else {
    /* cJSON's rule: 15 significant digits when they read back the same, else 17 */
    int n = snprintf(tmp, sizeof tmp, "%1.15g", d);
    if (strtod(tmp, NULL) != d) n = snprintf(tmp, sizeof tmp, "%1.17g", d);
    nxvk_sb_put(b, tmp, (size_t)n);
  }
}

static void jb_value(nxvk_strbuf *b, const cJSON *v) {
  if (cJSON_IsNumber(v)) {
    jb_num(b, v->valuedouble);
  } else if (cJSON_IsString(v)) {
    jb_str(b, v->valuestring ? v->valuestring : "");
  } else if (cJSON_IsTrue(v)) {
    nxvk_sb_put(b, "true", 4);
  } else if (cJSON_IsFalse(v)) {
    nxvk_sb_put(b, "false", 5);
  } else if (cJSON_IsRaw(v)) {
    nxvk_sb_str(b, v->valuestring ? v->valuestring : "null");
  } else if (cJSON_IsArray(v) || cJSON_IsObject(v)) {
    bool obj = cJSON_IsObject(v);
    nxvk_sb_put(b, obj ? "{" : "[", 1);
    for (const cJSON *c = v->child; c; c = c->next) {
      if (c != v->child) nxvk_sb_put(b, ",", 1);
      if (obj) {
        jb_str(b, c->string ? c->string : "");
        nxvk_sb_put(b, ":", 1);
      }
      jb_value(b, c);
    }
    nxvk_sb_put(b, obj ? "}" : "]", 1);
  } else {
    nxvk_sb_put(b, "null", 4);
  }
}

static void send_reply(port_server *s, const cJSON *id, int rc, port_reply *r) {
  char *text = NULL;
  size_t hlen = 0;
  if (s->cjson_reply) {
    cJSON *out = cJSON_CreateObject();
    if (out) cJSON_AddItemToObject(out, "id", id ? cJSON_Duplicate(id, true) : cJSON_CreateNull());
    if (out) cJSON_AddBoolToObject(out, "ok", rc == NXVK_OK);
    if (out && rc == NXVK_OK) {
      /* the results, moved after id and ok */
      while (r->json && r->json->child) {
        cJSON *item = cJSON_DetachItemViaPointer(r->json, r->json->child);
        cJSON_AddItemToObject(out, item->string, item);
      }
    } else if (out) {
      cJSON *e = cJSON_AddObjectToObject(out, "error");
      cJSON_AddStringToObject(e, "code", nxvk_err_name(rc));
      cJSON_AddStringToObject(e, "message", s->message);
    }
    text = out ? cJSON_PrintUnformatted(out) : NULL;
    cJSON_Delete(out);
    hlen = text ? strlen(text) : 0;
  } else {
    nxvk_strbuf *b = &s->hdr;
    b->len = 0;
    b->oom = false;
    nxvk_sb_str(b, "{\"id\":");
    jb_value(b, id); /* NULL prints null */
    if (rc == NXVK_OK) {
      nxvk_sb_str(b, ",\"ok\":true");
      for (const cJSON *c = r->json ? r->json->child : NULL; c; c = c->next) {
        nxvk_sb_put(b, ",", 1);
        jb_str(b, c->string ? c->string : "");
        nxvk_sb_put(b, ":", 1);
        jb_value(b, c);
      }
    } else {
      nxvk_sb_str(b, ",\"ok\":false,\"error\":{\"code\":");
      jb_str(b, nxvk_err_name(rc));
      nxvk_sb_str(b, ",\"message\":");
      jb_str(b, s->message);
      nxvk_sb_put(b, "}", 1);
    }
    nxvk_sb_put(b, "}", 1);
    if (!b->oom) {
      text = b->p;
      hlen = b->len;
    }
  }
  if (rc != NXVK_OK) s->errors++;
  const uint8_t *d1 = rc ? NULL : r->data, *d2 = rc ? NULL : r->echo;
  size_t n1 = rc ? 0 : r->len, n2 = rc ? 0 : r->echo_len;
  if (!text || (uint64_t)hlen + n1 + n2 + 4 > UINT32_MAX) {
    /* a last resort that needs no allocation */
    static const char oom[] = "{\"id\":null,\"ok\":false,\"error\":{\"code\":\"too_large\","
                              "\"message\":\"the reply could not be built (over 4 GiB or out of memory)\"}}";
    write_frame(s, oom, sizeof oom - 1, NULL, 0, NULL, 0);
    if (rc == NXVK_OK) s->errors++;
  } else {
    write_frame(s, text, hlen, d1, n1, d2, n2);
  }
  if (s->cjson_reply) free(text);
  /* a large header (info's) is not kept */
  if (s->hdr.cap > 65536) {
    free(s->hdr.p);
    s->hdr = (nxvk_strbuf){0};
  }
}

/* The "id" of a request whose frame is refused, when its header can be read
 * from the bytes we have: so the client can match the error to the request. */
static cJSON *peek_id(const uint8_t *payload, size_t have) {
  port_frame f;
  if (port_frame_decode(payload, have, PORT_MAX_HEADER, &f) != PORT_FRAME_OK ||
      !nxvk_json_depth_ok(f.header, f.header_len, PORT_MAX_DEPTH))
    return NULL;
  cJSON *req = cJSON_ParseWithLength(f.header, f.header_len);
  cJSON *id = cJSON_IsObject(req) ? cJSON_DetachItemFromObjectCaseSensitive(req, "id") : NULL;
  cJSON_Delete(req);
  return id;
}

static void serve_payload(port_server *s, const uint8_t *payload, size_t len) {
  port_reply r = {.json = cJSON_CreateObject(), .data = s->outbuf, .cap = s->outcap};
  s->outbuf = NULL;
  s->outcap = 0;
  port_frame f;
  cJSON *req = NULL;
  const cJSON *id = NULL;
  int rc;
  uint64_t t0 = now_ns(), t1 = 0;
  s->code = NXVK_OK;
  finish_pending(s);
  if (!r.json) {
    rc = fail(s, NXVK_E_NO_MEMORY, "out of memory");
  } else if (port_frame_decode(payload, len, PORT_MAX_HEADER, &f) != PORT_FRAME_OK) {
    rc = fail(s, NXVK_E_BAD_REQUEST, "frame: %s", f.error);
  } else if (!nxvk_json_depth_ok(f.header, f.header_len, PORT_MAX_DEPTH)) {
    rc = fail(s, NXVK_E_TOO_LARGE, "header: JSON nested deeper than %d levels", PORT_MAX_DEPTH);
  } else {
    const char *end = NULL;
    req = cJSON_ParseWithLengthOpts(f.header, f.header_len, &end, false);
    while (req && end < f.header + f.header_len && *end && strchr(" \t\r\n", *end)) end++;
    if (!req)
      rc = fail(s, NXVK_E_BAD_REQUEST, "header: not valid JSON (near byte %zu)",
                end ? (size_t)(end - f.header) : (size_t)0);
    else if (end != f.header + f.header_len)
      rc = fail(s, NXVK_E_BAD_REQUEST, "header: text after the JSON value (at byte %zu)",
                (size_t)(end - f.header));
    else if (!cJSON_IsObject(req))
      rc = fail(s, NXVK_E_BAD_REQUEST, "header: a request is a JSON object");
    else {
      id = field(req, "id");
      s->cur_id = id;
      s->replied = false;
      s->early_reply_ns = 0;
      t1 = now_ns();
      stage_add(s, ST_DECODE, t1 - t0);
      rc = dispatch(s, req, &f, &r);
      stage_add(s, ST_COMMAND, now_ns() - t1 - s->early_reply_ns);
      stage_add(s, ST_REPLY, s->early_reply_ns);
    }
  }
  /* any call may have been the one that found the device lost */
  if (s->ctx && !s->lost && nxvk_ctx_lost(s->ctx)) retire_generation(s);
  uint64_t t2 = now_ns();
  if (!s->replied) send_reply(s, id, rc, &r);
  s->replied = false;
  s->cur_id = NULL;
  stage_add(s, ST_REPLY, now_ns() - t2);
  cJSON_Delete(req);
  cJSON_Delete(r.json);
  if (r.cap >= PORT_KEEP_MIN && r.cap <= PORT_KEEP_MAX) {
    s->outbuf = r.data;
    s->outcap = r.cap;
  } else {
    free(r.data);
  }
}

/* A refused frame: read and drop the payload in chunks, never holding it.
 * no_room: under the limit, but this host could not allocate it. */
static void refuse_frame(port_server *s, uint64_t len, bool no_room) {
  static uint8_t chunk[PORT_CHUNK];
  size_t first = len < PORT_CHUNK ? (size_t)len : PORT_CHUNK;
  ssize_t got = read_full(STDIN_FILENO, chunk, first);
  cJSON *id = got > 0 ? peek_id(chunk, (size_t)got) : NULL;
  uint64_t left = len - (got > 0 ? (uint64_t)got : 0);
  bool eof = got < (ssize_t)first;
  while (left > 0 && !eof) {
    size_t n = left < PORT_CHUNK ? (size_t)left : PORT_CHUNK;
    ssize_t k = read_full(STDIN_FILENO, chunk, n);
    if (k < (ssize_t)n) eof = true;
    left -= k > 0 ? (uint64_t)k : 0;
  }
  if (no_room)
    fail(s, NXVK_E_NO_MEMORY, "frame of %llu bytes: out of host memory to hold it", (unsigned long long)len);
  else
    fail(s, NXVK_E_TOO_LARGE, "frame of %llu bytes is over the limit of %llu (--max-frame)",
         (unsigned long long)len, (unsigned long long)s->max_frame);
  port_reply r = {0};
  send_reply(s, id, s->code, &r);
  cJSON_Delete(id);
  if (eof) s->closed = true;
}

/* A client in a loop sends its next request microseconds after our reply,
 * and a process blocked in read() takes tens of microseconds to wake (more
 * on a virtual machine's idle vCPU): poll for input for s->poll_ns first,
 * as the engine polls a fence before blocking on it.  Returns early at the
 * first byte, end of input or error; the read that follows finds them. */
static void poll_input(const port_server *s) {
  if (!s->poll_ns) return;
  uint64_t t0 = now_ns();
  struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
  do {
    if (poll(&p, 1, 0) != 0) return;
  } while (now_ns() - t0 < s->poll_ns);
}

/* A request's buffer: large ones kept from the last large request. */
static uint8_t *payload_get(port_server *s, size_t len) {
  if (len < PORT_KEEP_MIN || len > PORT_KEEP_MAX) return malloc(len ? len : 1);
  if (len > s->incap) {
    free(s->inbuf);
    s->inbuf = malloc(len);
    s->incap = s->inbuf ? len : 0;
  }
  return s->inbuf;
}

static void payload_put(port_server *s, uint8_t *p) {
  if (p != s->inbuf) free(p);
}

static void serve(port_server *s) {
  while (!s->closed) {
    uint8_t prefix[4];
    poll_input(s);
    ssize_t got = read_full(STDIN_FILENO, prefix, 4);
    if (got == 0) break; /* end of input between frames: the normal end */
    if (got < 0) {
      fprintf(stderr, "nxvk: error: port: reading standard input failed: %s\n", strerror(errno));
      s->status = EXIT_FAIL;
      break;
    }
    s->requests++;
#ifdef __linux__
    if (s->requests == AVOID_RECHECK && s->have_allowed) s->irq_cpus_left = avoid_irq_cpus(&s->allowed);
#endif
    if (got < 4) {
      fail(s, NXVK_E_BAD_REQUEST, "truncated frame: input ended inside the 4-byte length (%zd bytes)", got);
      port_reply r = {0};
      send_reply(s, NULL, s->code, &r);
      break;
    }
    uint64_t len = port_be32_read(prefix);
    if (len > s->max_frame) {
      refuse_frame(s, len, false);
      continue;
    }
    uint8_t *payload = payload_get(s, (size_t)len);
    if (!payload) {
      refuse_frame(s, len, true);
      continue;
    }
    stage_next(s);
    uint64_t t0 = now_ns();
    got = read_full(STDIN_FILENO, payload, (size_t)len);
    stage_add(s, ST_READ, now_ns() - t0);
    if (got < 0) {
      fprintf(stderr, "nxvk: error: port: reading standard input failed: %s\n", strerror(errno));
      s->status = EXIT_FAIL;
      payload_put(s, payload);
      break;
    }
    if ((uint64_t)got < len) {
      cJSON *id = peek_id(payload, (size_t)got);
      fail(s, NXVK_E_BAD_REQUEST, "truncated frame: input ended after %zd of %llu bytes", got,
           (unsigned long long)len);
      port_reply r = {0};
      send_reply(s, id, s->code, &r);
      cJSON_Delete(id);
      payload_put(s, payload);
      break;
    }
    serve_payload(s, payload, (size_t)len);
    payload_put(s, payload);
  }
}

/* On a virtual machine the vCPU that takes the GPU's interrupts runs a
 * thread that submits and waits at half speed (a 1K add 68-70 us there,
 * 30-35 elsewhere: nxvk-bench(1); H100, 2026-11-27: a wait of 51 us on the
 * vCPU of IRQ 42, 12-14 on the others), and the port's every request is
 * such a thread.  The server leaves the vCPUs that /proc/interrupts and
 * /proc/irq/N say take a GPU driver's interrupts (nvidia, amdgpu, i915, xe,
 * nouveau, radeon), when they are fewer than half of those it may use
 * (`allowed`, its affinity at start).  A driver may have many vectors of
 * which one or two fire (the H100's guests: 8, on 8 of 16 vCPUs, with all
 * the counts on IRQ 42): where some have counted interrupts, only those
 * with at least 1/8 of the busiest one's count are left.  Called before
 * the device opens (the driver's threads inherit it), and again once the
 * engine has run a while (AVOID_RECHECK requests: the counts are then the
 * port's own).  Returns how many it left; NXVK_PORT_IRQ_CPUS=1 keeps them. */
#ifdef __linux__
static int avoid_irq_cpus(const cpu_set_t *allowed) {
  const char *keep = getenv("NXVK_PORT_IRQ_CPUS");
  if (keep && strcmp(keep, "1") == 0) return 0;
  FILE *f = fopen("/proc/interrupts", "r");
  if (!f) return 0;
  static char line[1 << 14];
  static const char *const drivers[] = {"nvidia", "amdgpu", "i915", " xe", "nouveau", "radeon"};
  enum { MAX_LINES = 64 };
  long irqs[MAX_LINES];
  unsigned long long counts[MAX_LINES], busiest = 0;
  int nlines = 0;
  while (nlines < MAX_LINES && fgets(line, sizeof line, f)) {
    bool gpu = false;
    for (size_t i = 0; i < sizeof drivers / sizeof drivers[0]; i++) gpu |= strstr(line, drivers[i]) != NULL;
    char *end;
    long n = strtol(line, &end, 10);
    if (!gpu || end == line || *end != ':') continue;
    unsigned long long sum = 0; /* the per-CPU counts after "N:" */
    for (char *p = end + 1;;) {
      char *q;
      unsigned long long v = strtoull(p, &q, 10);
      if (q == p) break;
      sum += v;
      p = q;
    }
    irqs[nlines] = n;
    counts[nlines++] = sum;
    if (sum > busiest) busiest = sum;
  }
  fclose(f);
  cpu_set_t irq;
  CPU_ZERO(&irq);
  for (int i = 0; i < nlines; i++) {
    if (busiest > 0 && counts[i] * 8 < busiest) continue; /* a vector that (nearly) never fires */
    char path[64], list[1024];
    snprintf(path, sizeof path, "/proc/irq/%ld/effective_affinity_list", irqs[i]);
    FILE *a = fopen(path, "r");
    if (!a) {
      snprintf(path, sizeof path, "/proc/irq/%ld/smp_affinity_list", irqs[i]);
      a = fopen(path, "r");
    }
    if (!a) continue;
    char *end;
    if (fgets(list, sizeof list, a)) /* "3", "0-3,8" */
      for (char *p = list; *p && *p != '\n';) {
        long lo = strtol(p, &end, 10), hi = lo;
        if (end == p) break;
        if (*end == '-') hi = strtol(end + 1, &end, 10);
        for (long c = lo; c <= hi && c < CPU_SETSIZE; c++) CPU_SET((int)c, &irq);
        p = *end == ',' ? end + 1 : end;
        if (*p != ',' && !(*p >= '0' && *p <= '9')) break;
      }
    fclose(a);
  }
  cpu_set_t rest;
  CPU_AND(&irq, &irq, allowed);
  CPU_XOR(&rest, allowed, &irq);
  int n_irq = CPU_COUNT(&irq), n_all = CPU_COUNT(allowed);
  if (n_irq == 0 || 2 * n_irq >= n_all || sched_setaffinity(0, sizeof rest, &rest)) {
    (void)sched_setaffinity(0, sizeof *allowed, allowed); /* a recheck may undo an earlier choice */
    return 0;
  }
  return n_irq;
}
#endif

/* The default cap: the budget of the largest device-local heap (its size
 * where the device gives no budget). */
static uint64_t default_max_bytes(nxvk_ctx *ctx) {
  nxvk_device_info info;
  uint64_t best = 0;
  if (nxvk_ctx_device_info(ctx, &info)) return 0;
  for (int i = 0; i < info.heap_count; i++) {
    uint64_t b = info.has_budget && info.heaps[i].budget ? info.heaps[i].budget : info.heaps[i].size;
    if (info.heaps[i].device_local && b > best) best = b;
  }
  return best;
}

int cmd_port(int argc, char **argv, nxvk_cli *cli) {
  const char *max_frame = NULL, *max_bytes = NULL;
  long poll_us = LONG_MIN; /* unset */
  const nxvk_option opts[] = {
      {"max-frame", 0, OPT_STRING, &max_frame, "BYTES",
       "refuse frames over this size, e.g. 64M (default 1G, at most 4G-1)"},
      {"max-bytes", 0, OPT_STRING, &max_bytes, "SIZE",
       "device memory the port's tensors may hold (default: the heap's budget; 0: none)"},
      {"poll-us", 0, OPT_INT, &poll_us, "N",
       "poll for the next request N microseconds before blocking (default 200 on a GPU, 0 on a CPU device)"},
      OPT_COMMON_DEVICE(cli),
      OPT_END,
  };
  int npos, rc = cli_parse(argc, argv, &usage, opts, &npos);
  if (rc) return rc < 0 ? EXIT_OK : rc;
  if (npos) return cli_usage_error(&usage, "unexpected argument '%s'", argv[0]);
  port_server s = {.cli = cli, .max_frame = PORT_DEFAULT_MAX_FRAME, .generation = 1};
  if (max_frame && (nxvk_parse_bytes(max_frame, &s.max_frame) || s.max_frame < PORT_MIN_MAX_FRAME ||
                    s.max_frame > UINT32_MAX))
    return cli_usage_error(&usage, "--max-frame: '%s' is not a size from %d bytes to 4G-1 (e.g. 64M)",
                           max_frame, PORT_MIN_MAX_FRAME);
  uint64_t cap = 0;
  if (max_bytes && nxvk_parse_bytes(max_bytes, &cap))
    return cli_usage_error(&usage, "--max-bytes: '%s' is not a size (e.g. 2G, 512M; 0 for no cap)", max_bytes);
  if (poll_us != LONG_MIN && (poll_us < 0 || poll_us > 1000000))
    return cli_usage_error(&usage, "--poll-us: %ld is not from 0 to 1000000", poll_us);
  const char *hooks = getenv("NXVK_TEST_HOOKS");
  s.hooks = hooks && strcmp(hooks, "1") == 0;
  const char *cj = getenv("NXVK_PORT_CJSON_REPLY");
  s.cjson_reply = cj && strcmp(cj, "1") == 0;

  /* A terminal on stdout would get binary frames: almost surely a mistake. */
  if (isatty(STDOUT_FILENO))
    return cli_usage_error(&usage,
                           "standard output is a terminal; the port speaks binary frames to a program");
#ifdef __linux__
  if (sched_getaffinity(0, sizeof s.allowed, &s.allowed) == 0) {
    s.have_allowed = true;
    s.irq_cpus_left = avoid_irq_cpus(&s.allowed);
  }
#endif
  const char *defer = getenv("NXVK_PORT_DEFER_WAIT");
  s.defer_wait = defer && strcmp(defer, "1") == 0;
  rc = cli_ctx(cli, &s.ctx);
  if (rc) return cli_engine_error(rc);
  s.max_bytes = max_bytes ? cap : default_max_bytes(s.ctx);
  nxvk_ctx_set_mem_cap(s.ctx, s.max_bytes);
  /* not on a CPU device by default: the poller would take a core from the
   * driver's own threads (and from the client) */
  nxvk_device_info dev;
  if (poll_us == LONG_MIN)
    poll_us = nxvk_ctx_device_info(s.ctx, &dev) == NXVK_OK && strcmp(dev.type, "cpu") != 0 ? 200 : 0;
  s.poll_ns = (uint64_t)poll_us * 1000;
  /* a client that goes away shows up as EPIPE on a write, not as a signal */
  signal(SIGPIPE, SIG_IGN);
  /* 1 MiB pipes where stdin and stdout are pipes (Linux's default 64 KiB
   * made a 64 MiB put a thousand wake-ups of reader and writer); no pipe,
   * or a lower limit (/proc/sys/fs/pipe-max-size): nothing changes */
#ifdef F_SETPIPE_SZ
  (void)fcntl(STDIN_FILENO, F_SETPIPE_SZ, 1 << 20);
  (void)fcntl(STDOUT_FILENO, F_SETPIPE_SZ, 1 << 20);
#endif

  serve(&s);
  finish_pending(&s);
  shm_unmap_all(&s);
  free(s.inbuf);
  free(s.outbuf);

  for (size_t i = 0; i < s.handles.cap; i++)
    if (s.handles.slot[i].id) {
      nxvk_tensor_free(s.handles.slot[i].t);
      free(s.handles.slot[i].msg);
    }
  free(s.handles.slot);
  for (size_t i = 0; i < s.nprepared; i++) {
    nxvk_graph_free(s.prepared[i].g);
    free(s.prepared[i].param);
  }
  free(s.prepared);
  free(s.hdr.p);
  return s.status;
}
