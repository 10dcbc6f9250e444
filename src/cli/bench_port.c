/*
 * bench_port.c - `nxvk bench concurrency`'s port rows, as a client of
 * `nxvk port` (nxvk-port(7)) sees them:
 *
 *   - 1K-element f32 adds end to end from N port clients at once, each with
 *     its own `nxvk port` process (as N Elixir nodes or serving partitions
 *     would run): one `run` request per add, its two inputs in the frame and
 *     the sum fetched, every result checked exactly; ops/s over all clients.
 *   - one large tensor's put and get through one port, as GB/s, beside the
 *     engine's own upload/download rate (bench peak's h2d/d2h): its bytes
 *     in the frames (the pipe), then in a POSIX shared memory object the
 *     requests name ("shm", nxvk-port(7)), already there when the put's
 *     clock starts and left there by the get.
 *
 * The ports are this binary (/proc/self/exe) run as `nxvk port`, started
 * with posix_spawn (safe in a process with threads), their stderr inherited.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "bench.h"
#include "port_frame.h"

extern char **environ;

#define PORT_N 1024

typedef struct port_conn {
  pid_t pid;
  int to, from;              /* the port's stdin, its stdout */
  uint8_t *buf;              /* the last reply's payload */
  size_t cap;
  port_frame reply;          /* decoded from buf */
} port_conn;

static const char *self_exe(void) {
  static char path[4096];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return NULL;
  path[n] = 0;
  return path;
}

static int conn_open(port_conn *p, const char *exe) {
  signal(SIGPIPE, SIG_IGN); /* a port that died is an error reply of ours, not the bench's end */
  memset(p, 0, sizeof *p);
  p->to = p->from = -1;
  int in[2], out[2];
  if (pipe(in) < 0) return -1;
  if (pipe(out) < 0) {
    close(in[0]), close(in[1]);
    return -1;
  }
  /* no other port may inherit these ends (it would hold this one's input open) */
  for (int i = 0; i < 2; i++) fcntl(in[i], F_SETFD, FD_CLOEXEC), fcntl(out[i], F_SETFD, FD_CLOEXEC);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  char *argv[] = {(char *)exe, "port", NULL};
  int rc = posix_spawn(&p->pid, exe, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(in[0]);
  close(out[1]);
  if (rc != 0) {
    close(in[1]), close(out[0]);
    errno = rc;
    return -1;
  }
  p->to = in[1];
  p->from = out[0];
  return 0;
}

static void conn_close(port_conn *p) {
  if (p->to >= 0) close(p->to); /* end of input: the port frees everything and exits */
  if (p->from >= 0) close(p->from);
  if (p->pid > 0) waitpid(p->pid, NULL, 0);
  free(p->buf);
  memset(p, 0, sizeof *p);
  p->to = p->from = -1;
}

static int read_all(int fd, void *buf, size_t n) {
  for (size_t got = 0; got < n;) {
    ssize_t k = read(fd, (char *)buf + got, n - got);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return -1;
    got += (size_t)k;
  }
  return 0;
}

/* One request (header JSON and up to two byte ranges) and its reply, which
 * must say "ok":true.  The reply's bytes stay in p->reply until the next. */
static int conn_request(port_conn *p, const char *json, const void *d1, size_t n1, const void *d2, size_t n2,
                        char *err, size_t errlen) {
  size_t h = strlen(json);
  uint8_t pre[8];
  port_be32_write(pre, (uint32_t)(4 + h + n1 + n2));
  port_be32_write(pre + 4, (uint32_t)h);
  struct iovec iov[4] = {{pre, 8}, {(void *)json, h}, {(void *)d1, n1}, {(void *)d2, n2}}, *v = iov;
  int nv = 4;
  port_iov_advance(&v, &nv, 0);
  while (nv > 0) {
    ssize_t k = writev(p->to, v, nv);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) return snprintf(err, errlen, "writing to the port: %s", strerror(errno)), -1;
    port_iov_advance(&v, &nv, (size_t)k);
  }
  uint8_t lenb[4];
  if (read_all(p->from, lenb, 4) < 0) return snprintf(err, errlen, "the port closed its output"), -1;
  size_t len = port_be32_read(lenb);
  if (len > p->cap) {
    uint8_t *b = realloc(p->buf, len);
    if (!b) return snprintf(err, errlen, "out of memory for a %zu-byte reply", len), -1;
    p->buf = b;
    p->cap = len;
  }
  if (read_all(p->from, p->buf, len) < 0) return snprintf(err, errlen, "the port's reply was cut"), -1;
  if (port_frame_decode(p->buf, len, (size_t)1 << 20, &p->reply) != PORT_FRAME_OK)
    return snprintf(err, errlen, "bad reply frame: %s", p->reply.error), -1;
  const char *ok = "\"ok\":true";
  size_t okn = strlen(ok);
  bool good = false;
  for (size_t i = 0; i + okn <= p->reply.header_len && !good; i++)
    good = memcmp(p->reply.header + i, ok, okn) == 0;
  if (!good) return snprintf(err, errlen, "the port refused: %.*s", (int)(p->reply.header_len < 300 ? p->reply.header_len : 300), p->reply.header), -1;
  return 0;
}

/* ---- 1K adds from N port clients ---- */

static const char ADD_REQUEST[] =
    "{\"cmd\":\"run\",\"fetch\":true,\"keep\":false,\"graph\":{\"inputs\":{"
    "\"a\":{\"dtype\":\"f32\",\"shape\":[1024],\"bytes\":true},\"b\":{\"dtype\":\"f32\",\"shape\":[1024],\"bytes\":true}},"
    "\"ops\":[{\"op\":\"add\",\"in\":[\"a\",\"b\"],\"out\":\"s\"}],\"outputs\":{\"s\":true}}}";

typedef struct pc_shared {
  long ops_per_client;       /* > 0: --repeat; else run until gate.deadline_ns */
  bench_gate gate;           /* released when every client has done its untimed request */
  pthread_mutex_t lock;      /* err */
  atomic_llong ops, wrong;
  atomic_int failed;
  char err[400];
} pc_shared;

typedef struct pc_client {
  pc_shared *sh;
  port_conn conn;
  pthread_t tid;
  float a[PORT_N], b[PORT_N];
  double end_ns;
} pc_client;

static bool add_once(pc_client *t, char *err, size_t errlen, bool *right) {
  if (conn_request(&t->conn, ADD_REQUEST, t->a, sizeof t->a, t->b, sizeof t->b, err, errlen) < 0) return false;
  const port_frame *f = &t->conn.reply;
  *right = f->data_len == sizeof t->a;
  for (int k = 0; *right && k < PORT_N; k++) {
    float s;
    memcpy(&s, f->data + 4 * (size_t)k, 4);
    *right = s == t->a[k] + t->b[k];
  }
  return true;
}

static void pc_fail(pc_shared *sh, const char *err) {
  pthread_mutex_lock(&sh->lock);
  if (!atomic_exchange(&sh->failed, 1)) snprintf(sh->err, sizeof sh->err, "%s", err);
  pthread_mutex_unlock(&sh->lock);
}

static void *pc_main(void *arg) {
  pc_client *t = arg;
  pc_shared *sh = t->sh;
  char err[360];
  bool right = true;
  /* the first request untimed: the port opens its device and builds the kernel */
  bool up = add_once(t, err, sizeof err, &right);
  if (!up) pc_fail(sh, err);
  bench_gate_arrive(&sh->gate);
  for (long i = 0; up && !atomic_load(&sh->failed); i++) {
    if (sh->ops_per_client > 0 ? i >= sh->ops_per_client : nxvk_now_ns() >= sh->gate.deadline_ns) break;
    if (!add_once(t, err, sizeof err, &right)) {
      pc_fail(sh, err);
      break;
    }
    atomic_fetch_add(&sh->ops, 1);
    if (!right) atomic_fetch_add(&sh->wrong, 1);
  }
  t->end_ns = nxvk_now_ns();
  return NULL;
}

int bench_port_clients(bench_ctx *b, int clients) {
  const bench_opts *o = b->o;
  const char *exe = self_exe();
  if (!exe) {
    fprintf(stderr, "nxvk: error: bench concurrency: cannot find this binary to run ports\n");
    return EXIT_FAIL;
  }
  pc_shared sh = {.ops_per_client = o->repeat > 0 ? o->repeat : 0};
  pthread_mutex_init(&sh.lock, NULL);
  bench_gate_init(&sh.gate);
  pc_client *th = calloc((size_t)clients, sizeof *th);
  int opened = 0, started = 0;
  bool fail = th == NULL;
  for (int i = 0; i < clients && !fail; i++) {
    th[i].sh = &sh;
    nxvk_shape s = {.rank = 1, .dim = {PORT_N}};
    nxvk_host h[2];
    for (int k = 0; k < 2; k++) {
      if (nxvk_host_alloc(&h[k], NXVK_F32, &s) != NXVK_OK) {
        fail = true;
        break;
      }
      bench_fill_random(b, &h[k]);
    }
    if (fail) break;
    memcpy(th[i].a, h[0].data, sizeof th[i].a);
    memcpy(th[i].b, h[1].data, sizeof th[i].b);
    nxvk_host_free(&h[0]);
    nxvk_host_free(&h[1]);
    if (conn_open(&th[i].conn, exe) < 0) {
      snprintf(sh.err, sizeof sh.err, "starting port %d of %d: %s", i + 1, clients, strerror(errno));
      sh.failed = 1;
      fail = true;
      break;
    }
    opened++;
  }
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 1u << 20);
  for (int i = 0; i < opened && !fail; i++) {
    if (pthread_create(&th[i].tid, &attr, pc_main, &th[i]) != 0) fail = true;
    else started++;
  }
  pthread_attr_destroy(&attr);
  /* the ports share the GPU with the busy kernel: the gate pauses it */
  if (fail) sh.ops_per_client = -1;
  double t0 = bench_gate_start(&sh.gate, started, o->min_time, !fail, NULL, NULL);
  double end = t0;
  for (int i = 0; i < started; i++) {
    pthread_join(th[i].tid, NULL);
    if (th[i].end_ns > end) end = th[i].end_ns;
  }
  bench_busy_resume();
  for (int i = 0; i < opened; i++) conn_close(&th[i].conn);
  free(th);
  bench_gate_destroy(&sh.gate);
  pthread_mutex_destroy(&sh.lock);
  long long ops = atomic_load(&sh.ops), wrong = atomic_load(&sh.wrong);
  if (fail || sh.failed) {
    fprintf(stderr, "nxvk: error: bench concurrency: %d port clients: %s\n", clients,
            sh.err[0] ? sh.err : "out of memory or threads");
    return EXIT_FAIL;
  }
  if (wrong) {
    fprintf(stderr, "nxvk: error: bench concurrency: %lld of %lld results from %d port clients were wrong\n",
            wrong, ops, clients);
    return EXIT_FAIL;
  }
  bench_row *row = bench_add_row(b->rep);
  if (!row) return cli_engine_error(NXVK_E_NO_MEMORY);
  double wall = end - t0;
  row->device = b->device;
  row->mode = "concurrency";
  snprintf(row->name, sizeof row->name, "add");
  snprintf(row->variant, sizeof row->variant, "ports");
  row->dtype = "f32";
  row->size = PORT_N;
  row->shape = (nxvk_shape){.rank = 1, .dim = {PORT_N}};
  snprintf(row->dims, sizeof row->dims, "%d ports", clients);
  row->bytes = 3.0 * PORT_N * 4;
  row->e2e = (bench_stat){.have = true, .median = wall / (double)(ops ? ops : 1) * clients, .repeats = (int)ops};
  row->e2e.min = row->e2e.max = row->e2e.median;
  row->gbps = row->gflops = row->gflops_min = row->gflops_max = row->speedup = row->speedup_e2e =
      row->pct_peak = row->latency_us = row->max_abs = row->max_ulp = NAN;
  row->ops_per_s = wall > 0 ? (double)ops / (wall * 1e-9) : NAN;
  snprintf(row->check, sizeof row->check, "all %lld exact", ops);
  bench_print_row(row);
  return EXIT_OK;
}

/* ---- a large tensor's put and get through one port ---- */

typedef struct pt_run {
  port_conn *conn;
  const uint8_t *data;
  size_t bytes;
  char put_json[400], get_json[400];
  bool shm;                  /* the bytes stay in the shared memory object */
  long calls;
  char err[400];
} pt_run;

static int put_once(void *arg, double *ns) {
  pt_run *x = arg;
  double t0 = nxvk_now_ns();
  int rc = conn_request(x->conn, x->put_json, x->shm ? NULL : x->data, x->shm ? 0 : x->bytes, NULL, 0, x->err,
                        sizeof x->err);
  *ns = nxvk_now_ns() - t0;
  x->calls++;
  if (rc < 0) return NXVK_E_BAD_REQUEST;
  /* the handle, then an untimed free */
  const char *h = strstr(x->conn->reply.header, "\"handle\":");
  char req[96];
  snprintf(req, sizeof req, "{\"cmd\":\"free\",\"handle\":%lld}", h ? atoll(h + 9) : 0LL);
  return conn_request(x->conn, req, NULL, 0, NULL, 0, x->err, sizeof x->err) < 0 ? NXVK_E_BAD_REQUEST : NXVK_OK;
}

static int get_once(void *arg, double *ns) {
  pt_run *x = arg;
  double t0 = nxvk_now_ns();
  int rc = conn_request(x->conn, x->get_json, NULL, 0, NULL, 0, x->err, sizeof x->err);
  *ns = nxvk_now_ns() - t0;
  x->calls++;
  return rc < 0 ? NXVK_E_BAD_REQUEST : NXVK_OK;
}

/* The port's own time so far (its stats request), ns: reading requests,
 * the engine, writing replies; false where it does not say. */
/* t: the port's read, engine and reply times (ns) and its pinned_bytes. */
static bool port_times(port_conn *p, double t[4]) {
  char err[400];
  if (conn_request(p, "{\"cmd\":\"stats\"}", NULL, 0, NULL, 0, err, sizeof err) < 0) return false;
  cJSON *j = cJSON_ParseWithLength(p->reply.header, p->reply.header_len);
  const cJSON *tn = cJSON_GetObjectItemCaseSensitive(j, "time_ns");
  static const char *const keys[3] = {"read", "engine", "reply"};
  bool ok = tn != NULL;
  for (int i = 0; i < 3 && ok; i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(tn, keys[i]);
    ok = cJSON_IsNumber(v);
    if (ok) t[i] = v->valuedouble;
  }
  const cJSON *pb = cJSON_GetObjectItemCaseSensitive(j, "pinned_bytes");
  t[3] = cJSON_IsNumber(pb) ? pb->valuedouble : 0;
  cJSON_Delete(j);
  return ok;
}

/* The shared memory object for the shm rows: bytes long, filled with data;
 * NULL (and err set) where there is none to be had. */
static uint8_t *shm_make(const char *name, size_t bytes, const uint8_t *data, char *err, size_t errlen) {
  int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0) {
    snprintf(err, errlen, "shm_open %s: %s", name, strerror(errno));
    return NULL;
  }
  void *p = MAP_FAILED;
  if (ftruncate(fd, (off_t)bytes) == 0) p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) snprintf(err, errlen, "shared memory of %zu bytes: %s", bytes, strerror(errno));
  close(fd);
  if (p == MAP_FAILED) {
    shm_unlink(name);
    return NULL;
  }
  memcpy(p, data, bytes);
  return p;
}

int bench_port_transfer(bench_ctx *b, int64_t bytes) {
  const char *exe = self_exe();
  if (!exe) {
    fprintf(stderr, "nxvk: error: bench concurrency: cannot find this binary to run a port\n");
    return EXIT_FAIL;
  }
  nxvk_shape s = {1, {bytes / 4}};
  nxvk_host h = {0};
  port_conn conn;
  pt_run x = {.conn = &conn, .bytes = (size_t)(bytes / 4) * 4};
  if (nxvk_host_alloc(&h, NXVK_F32, &s) != NXVK_OK) return cli_engine_error(NXVK_E_NO_MEMORY);
  bench_fill_random(b, &h);
  x.data = h.data;
  if (conn_open(&conn, exe) < 0) {
    fprintf(stderr, "nxvk: error: bench concurrency: starting a port: %s\n", strerror(errno));
    nxvk_host_free(&h);
    return EXIT_FAIL;
  }
  char shm_name[64];
  snprintf(shm_name, sizeof shm_name, "/nxvk-bench-%ld", (long)getpid());
  uint8_t *shm = NULL;
  int status = EXIT_OK;
  bool same = true, header = false;
  /* the pipe, then shared memory: each way's first put stays for its
   * gets; put once, got back, compared */
  for (int way = 0; way < 2 && same; way++) {
    x.shm = way == 1;
    if (x.shm) {
      shm = shm_make(shm_name, x.bytes, x.data, x.err, sizeof x.err);
      if (!shm) {
        /* no shared memory here (a container without /dev/shm): the pipe rows stand alone */
        fprintf(stderr, "nxvk: bench concurrency: no shm rows: %s\n", x.err);
        break;
      }
      snprintf(x.put_json, sizeof x.put_json,
               "{\"cmd\":\"put\",\"dtype\":\"f32\",\"shape\":[%lld],\"shm\":{\"name\":\"%s\",\"offset\":0}}",
               (long long)(bytes / 4), shm_name);
    } else {
      snprintf(x.put_json, sizeof x.put_json, "{\"cmd\":\"put\",\"dtype\":\"f32\",\"shape\":[%lld]}", (long long)(bytes / 4));
    }
    same = conn_request(&conn, x.put_json, x.shm ? NULL : x.data, x.shm ? 0 : x.bytes, NULL, 0, x.err, sizeof x.err) == 0;
    long long handle = 0;
    for (size_t i = 0; same && i + 9 <= conn.reply.header_len && !handle; i++)
      if (memcmp(conn.reply.header + i, "\"handle\":", 9) == 0) handle = atoll(conn.reply.header + i + 9);
    if (x.shm)
      snprintf(x.get_json, sizeof x.get_json,
               "{\"cmd\":\"get\",\"handle\":%lld,\"shm\":{\"name\":\"%s\",\"offset\":0,\"length\":%zu}}", handle,
               shm_name, x.bytes);
    else
      snprintf(x.get_json, sizeof x.get_json, "{\"cmd\":\"get\",\"handle\":%lld}", handle);
    if (same && x.shm) memset(shm, 0, x.bytes); /* the get must write every byte back */
    same = same && conn_request(&conn, x.get_json, NULL, 0, NULL, 0, x.err, sizeof x.err) == 0;
    const uint8_t *back = x.shm ? shm : conn.reply.data;
    size_t back_len = x.shm ? x.bytes : conn.reply.data_len;
    if (same && (back_len != x.bytes || memcmp(back, x.data, x.bytes) != 0)) {
      snprintf(x.err, sizeof x.err, "%zu bytes put and got back%s came back changed", x.bytes,
               x.shm ? " through shared memory" : "");
      same = false;
    }
    const char *variants[2][2] = {{"port put", "port get"}, {"port put shm", "port get shm"}};
    const char *names[2] = {"h2d", "d2h"};
    if (same && !header) bench_print_header("peak"), header = true;
    for (int dir = 0; dir < 2 && same; dir++) {
      bench_progress(b, "concurrency: %s", variants[way][dir]);
      bench_row *row = bench_add_row(b->rep);
      if (!row) {
        status = cli_engine_error(NXVK_E_NO_MEMORY);
        same = false;
        break;
      }
      row->device = b->device;
      row->mode = "peak";
      snprintf(row->name, sizeof row->name, "%s", names[dir]);
      snprintf(row->variant, sizeof row->variant, "%s", variants[way][dir]);
      row->dtype = "f32";
      row->size = bytes;
      row->gflops = row->gflops_min = row->gflops_max = row->speedup = row->speedup_e2e = row->pct_peak =
          row->latency_us = row->max_abs = row->max_ulp = row->ops_per_s = NAN;
      double t0[4], t1[4];
      bool split = port_times(&conn, t0);
      x.calls = 0;
      int rc = bench_repeat(b->o, 1, true, dir == 0 ? put_once : get_once, &x, &row->e2e);
      split = split && rc == NXVK_OK && port_times(&conn, t1) && x.calls > 0;
      bench_progress_done(b);
      if (rc) {
        b->rep->nrows--;
        same = false;
        break;
      }
      row->bytes = (double)x.bytes;
      row->gbps = row->bytes / row->e2e.median;
      snprintf(row->check, sizeof row->check, "round trip");
      /* where the port's time went, per request (puts: their frees included) */
      /* and how much of the bytes the device copied alone (the registered shm mapping) */
      char where[128] = "";
      if (split)
        snprintf(where, sizeof where, "; the port: read %.2f, engine %.2f, reply %.2f ms a request; %.0f%% by DMA",
                 (t1[0] - t0[0]) / x.calls * 1e-6, (t1[1] - t0[1]) / x.calls * 1e-6,
                 (t1[2] - t0[2]) / x.calls * 1e-6, 100.0 * (t1[3] - t0[3]) / ((double)x.bytes * (double)x.calls));
      snprintf(row->note, sizeof row->note, "%s through one `nxvk port` %s, wall clock%s", dir == 0 ? "put" : "get",
               x.shm ? "from/to shared memory" : "over pipes", where);
      bench_print_row(row);
    }
  }
  if (!same && status == EXIT_OK) {
    fprintf(stderr, "nxvk: error: bench concurrency: port put/get of %lld bytes: %s\n", (long long)bytes, x.err);
    status = EXIT_FAIL;
  }
  conn_close(&conn);
  if (shm) {
    munmap(shm, x.bytes);
    shm_unlink(shm_name);
  }
  nxvk_host_free(&h);
  return status;
}
