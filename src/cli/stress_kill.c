/*
 * stress_kill.c - `nxvk stress kill`: child processes upload tensors and
 * start ops, and are SIGKILLed at random points; afterwards the device's
 * memory must be back at baseline and the device must still compute.
 *
 * Children are `nxvk port` servers when one answers a ping (the parent
 * drives them with put and op frames), else the hidden worker of this file
 * (`nxvk stress --worker`), which does the same in-process and reports its
 * progress on stdout.  Kill points are chosen in progress events, not
 * wall time, so they spread over start-up, uploads and ops however loaded
 * the machine is: each child gets a random event index and a random delay
 * after it.
 *
 * The parent cannot see the children's device memory through its own
 * accounting (each process has its own).  What can: VK_EXT_memory_budget's
 * heap budget, which shrinks while other processes hold memory.  The mode
 * proves the probe sees the children (the budget falls while they live)
 * before it trusts the probe to say they are gone.  Where the device has
 * no budget extension (lavapipe), the report says so and does not pass.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "stress_common.h"

extern char **environ;

#define MIB ((uint64_t)1 << 20)
#define MAX_EVENT 12          /* kill after a random progress event 0..MAX_EVENT */
#define MAX_DELAY_S 0.030     /* ... plus up to this much */
#define STALL_S 60.0          /* a child without progress this long is stuck */
#define LIVE_INPUTS 4         /* tensors a child keeps alive */

/* ---------------------------------------------------------------- frames */

static void put_be32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}
static uint32_t get_be32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A frame: length, header length, JSON header, raw bytes. */
static uint8_t *make_frame(const char *json, const void *data, size_t nbytes, size_t *len) {
  size_t hl = strlen(json);
  *len = 8 + hl + nbytes;
  uint8_t *f = malloc(*len);
  if (!f) return NULL;
  put_be32(f, (uint32_t)(4 + hl + nbytes));
  put_be32(f + 4, (uint32_t)hl);
  memcpy(f + 8, json, hl);
  if (nbytes) memcpy(f + 8 + hl, data, nbytes);
  return f;
}

/* The first number named "handle" (or first of "handles") anywhere in a reply. */
static bool find_handle(const cJSON *o, double *out) {
  for (const cJSON *v = o ? o->child : NULL; v; v = v->next) {
    if (v->string && strcmp(v->string, "handle") == 0 && cJSON_IsNumber(v)) {
      *out = v->valuedouble;
      return true;
    }
    if (v->string && strcmp(v->string, "handles") == 0 && cJSON_IsArray(v) && cJSON_IsNumber(v->child)) {
      *out = v->child->valuedouble;
      return true;
    }
    if ((cJSON_IsObject(v) || cJSON_IsArray(v)) && find_handle(v, out)) return true;
  }
  return false;
}

/* ---------------------------------------------------------------- children */

typedef enum { KIND_WORKER, KIND_PORT } child_kind;

typedef struct child {
  pid_t pid;
  int out_fd, in_fd;                  /* in_fd: port requests; -1 for workers */
  double spawned, last_event, deadline;
  int target_event, events;
  double delay;
  char phase;                         /* '-' nothing yet, R U u O o as in the worker */
  bool eof, killed, reaped, stalled;
  char kill_phase;                    /* phase when the kill was sent */
  int status;
  char err[200];
  int errlen;
  bool in_err;
  /* port driving */
  const uint8_t *wbuf;
  uint8_t *wown;
  size_t wlen, woff;
  uint8_t rhead[4];
  size_t rgot;
  uint8_t *rbuf;
  size_t rlen;
  double handles[LIVE_INPUTS];
  int nhandles, puts;
  bool awaiting_put;
} child;

typedef struct kill_ctx {
  const stress_opts *o;
  child_kind kind;
  const char *port_cmd;               /* NXVK_STRESS_PORT, run by /bin/sh */
  const char *op_name;
  uint8_t *put_frame;
  size_t put_len;
  uint64_t size;
  stress_rng rng;
  /* tallies */
  long spawned, killed_by_us, unexpected, stalled, port_errors;
  long phase_count[6];
  long puts, ops;
  char first_unexpected[400];
} kill_ctx;

static const char phases[] = "-RUuOo";
static int phase_index(char p) {
  const char *s = strchr(phases, p);
  return s && p ? (int)(s - phases) : 0;
}

static int set_flags(int fd) {
  int f = fcntl(fd, F_GETFL);
  if (f < 0 || fcntl(fd, F_SETFL, f | O_NONBLOCK) < 0) return -1;
  return fcntl(fd, F_SETFD, FD_CLOEXEC);
}

/* Spawn one child with its stdout (and, for ports, stdin) on pipes and
 * stderr on /dev/null.  posix_spawn: safe in a process with threads. */
static int spawn_child(kill_ctx *k, child *ch, bool port) {
  int outp[2], inp[2] = {-1, -1};
  memset(ch, 0, sizeof *ch);
  ch->in_fd = ch->out_fd = -1;
  ch->phase = '-';
  if (pipe(outp) < 0) return -1;
  if (port && pipe(inp) < 0) {
    close(outp[0]), close(outp[1]);
    return -1;
  }
  /* the parent's ends must not leak into later children (EOF detection) */
  fcntl(outp[0], F_SETFD, FD_CLOEXEC);
  fcntl(outp[1], F_SETFD, FD_CLOEXEC);
  if (port) fcntl(inp[0], F_SETFD, FD_CLOEXEC), fcntl(inp[1], F_SETFD, FD_CLOEXEC);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, outp[1], 1);
  if (port) posix_spawn_file_actions_adddup2(&fa, inp[0], 0);
  else posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  char size_s[32], seed_s[32];
  snprintf(size_s, sizeof size_s, "%llu", (unsigned long long)k->size);
  /* 63 bits: the worker's --seed is a long, and strict parsing refuses more */
  snprintf(seed_s, sizeof seed_s, "%llu", (unsigned long long)(rng_next(&k->rng) >> 1));
  char *argv_worker[] = {(char *)k->o->exe, "stress", "--worker", "--size", size_s, "--seed", seed_s, NULL};
  char *argv_port[] = {(char *)k->o->exe, "port", NULL};
  char *argv_sh[] = {"/bin/sh", "-c", (char *)k->port_cmd, NULL};
  char **argv = !port ? argv_worker : k->port_cmd ? argv_sh : argv_port;
  int rc = posix_spawn(&ch->pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(outp[1]);
  if (port) close(inp[0]);
  if (rc != 0) {
    close(outp[0]);
    if (port) close(inp[1]);
    errno = rc;
    return -1;
  }
  ch->out_fd = outp[0];
  ch->in_fd = port ? inp[1] : -1;
  set_flags(ch->out_fd);
  if (port) set_flags(ch->in_fd);
  ch->spawned = ch->last_event = now_seconds();
  return 0;
}

static void child_close(child *ch) {
  if (ch->out_fd >= 0) close(ch->out_fd);
  if (ch->in_fd >= 0) close(ch->in_fd);
  ch->out_fd = ch->in_fd = -1;
  free(ch->wown);
  free(ch->rbuf);
  ch->wown = ch->rbuf = NULL;
}

static void child_event(child *ch, char phase) {
  ch->phase = phase;
  ch->events++;
  ch->last_event = now_seconds();
}

static void child_fail(child *ch, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void child_fail(child *ch, const char *fmt, ...) {
  if (!ch->err[0]) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ch->err, sizeof ch->err, fmt, ap);
    va_end(ap);
  }
  ch->deadline = now_seconds(); /* nothing more to see: reap it now */
}

/* Queue the next request for a port child: alternately a put and an op
 * (on the tensor just put, later on a random live one), like the worker. */
static void port_next(kill_ctx *k, child *ch, bool after_put) {
  if (!after_put && ch->nhandles < LIVE_INPUTS) {
    ch->wbuf = k->put_frame;
    ch->wlen = k->put_len;
    ch->awaiting_put = true;
  } else {
    char json[200];
    double h = after_put ? ch->handles[ch->nhandles - 1] : ch->handles[rng_next(&k->rng) % (uint64_t)ch->nhandles];
    snprintf(json, sizeof json, "{\"id\":2,\"cmd\":\"op\",\"op\":\"%s\",\"in\":[%.0f]}", k->op_name, h);
    free(ch->wown);
    ch->wown = make_frame(json, NULL, 0, &ch->wlen);
    ch->wbuf = ch->wown;
    ch->awaiting_put = false;
    if (!ch->wown) child_fail(ch, "out of host memory");
  }
  ch->woff = 0;
}

static void port_reply(kill_ctx *k, child *ch) {
  if (ch->rlen < 4) {
    child_fail(ch, "reply frame of %zu bytes", ch->rlen);
    return;
  }
  uint32_t hl = get_be32(ch->rbuf);
  if (hl > ch->rlen - 4) {
    child_fail(ch, "reply header length %u over its frame", hl);
    return;
  }
  cJSON *h = cJSON_ParseWithLength((const char *)ch->rbuf + 4, hl);
  const cJSON *ok = h ? cJSON_GetObjectItemCaseSensitive(h, "ok") : NULL;
  if (!cJSON_IsTrue(ok)) {
    k->port_errors++;
    child_fail(ch, "port replied: %.*s", (int)(hl > 160 ? 160 : hl), (const char *)ch->rbuf + 4);
  } else if (ch->awaiting_put) {
    double handle;
    if (!find_handle(h, &handle)) {
      child_fail(ch, "put reply without a handle: %.*s", (int)(hl > 160 ? 160 : hl), (const char *)ch->rbuf + 4);
    } else {
      ch->handles[ch->nhandles++] = handle;
      k->puts++;
      child_event(ch, 'u');
      port_next(k, ch, true);
    }
  } else {
    k->ops++;
    child_event(ch, 'o');
    port_next(k, ch, false);
  }
  cJSON_Delete(h);
}

/* Read what a child wrote: progress bytes (worker) or reply frames (port). */
static void child_read(kill_ctx *k, child *ch) {
  for (;;) {
    if (k->kind == KIND_WORKER) {
      char buf[256];
      ssize_t n = read(ch->out_fd, buf, sizeof buf);
      if (n == 0) {
        ch->eof = true;
        ch->deadline = now_seconds();
      }
      if (n <= 0) return;
      for (ssize_t i = 0; i < n; i++) {
        if (ch->in_err) {
          if (buf[i] == '\n') ch->in_err = false;
          else if (ch->errlen < (int)sizeof ch->err - 1) ch->err[ch->errlen++] = buf[i];
          continue;
        }
        if (buf[i] == 'E') {
          ch->in_err = true;
          continue;
        }
        if (strchr("RUuOo", buf[i])) {
          child_event(ch, buf[i]);
          if (buf[i] == 'u') k->puts++;
          if (buf[i] == 'o') k->ops++;
        }
      }
      continue;
    }
    /* port: 4-byte length, then the payload */
    uint8_t *dst = ch->rgot < 4 ? ch->rhead + ch->rgot : ch->rbuf + (ch->rgot - 4);
    size_t want = ch->rgot < 4 ? 4 - ch->rgot : ch->rlen - (ch->rgot - 4);
    ssize_t n = want ? read(ch->out_fd, dst, want) : 0;
    if (want && n == 0) {
      ch->eof = true;
      ch->deadline = now_seconds();
    }
    if (want && n <= 0) return;
    ch->rgot += (size_t)n;
    if (ch->rgot == 4) {
      ch->rlen = get_be32(ch->rhead);
      if (ch->rlen > (64u << 20)) {
        child_fail(ch, "reply frame of %zu bytes", ch->rlen);
        return;
      }
      free(ch->rbuf);
      ch->rbuf = malloc(ch->rlen ? ch->rlen : 1);
      if (!ch->rbuf) {
        child_fail(ch, "out of host memory");
        return;
      }
    }
    if (ch->rgot >= 4 && ch->rgot == 4 + ch->rlen) {
      port_reply(k, ch);
      ch->rgot = 0;
      if (ch->deadline > 0 && ch->err[0]) return;
    }
  }
}

static void child_write(child *ch) {
  while (ch->wbuf && ch->woff < ch->wlen) {
    ssize_t n = write(ch->in_fd, ch->wbuf + ch->woff, ch->wlen - ch->woff);
    if (n < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        child_fail(ch, "writing a request: %s", strerror(errno));
      return;
    }
    ch->woff += (size_t)n;
  }
  if (ch->wbuf && ch->woff == ch->wlen) {
    child_event(ch, ch->awaiting_put ? 'U' : 'O');
    ch->wbuf = NULL;
  }
}

/* SIGKILL now; the status is collected later (a dying process with driver
 * threads takes a while, and the others keep running meanwhile). */
static void child_kill(child *ch) {
  ch->kill_phase = ch->phase;
  if (getenv("NXVK_STRESS_DEBUG"))
    fprintf(stderr, "kill %d: target event %d, at event %d (%c) after %.3f s\n", (int)ch->pid,
            ch->target_event, ch->events, ch->phase, now_seconds() - ch->spawned);
  kill(ch->pid, SIGKILL);
  ch->killed = true;
  child_close(ch);
}

/* Collect a killed child's status; false while it is still dying. */
static bool child_reap(kill_ctx *k, child *ch) {
  pid_t got;
  do {
    got = waitpid(ch->pid, &ch->status, WNOHANG);
  } while (got < 0 && errno == EINTR);
  if (got == 0) return false;
  ch->reaped = true;
  if (got > 0 && WIFSIGNALED(ch->status) && WTERMSIG(ch->status) == SIGKILL && !ch->err[0] && !ch->eof) {
    k->killed_by_us++;
    k->phase_count[phase_index(ch->kill_phase)]++;
    return true;
  }
  k->unexpected++;
  if (!k->first_unexpected[0]) {
    char how[64];
    if (got < 0) snprintf(how, sizeof how, "could not be waited for (%s)", strerror(errno));
    else if (WIFEXITED(ch->status)) snprintf(how, sizeof how, "exited %d", WEXITSTATUS(ch->status));
    else if (WIFSIGNALED(ch->status) && WTERMSIG(ch->status) == SIGKILL) snprintf(how, sizeof how, "ended");
    else if (WIFSIGNALED(ch->status)) snprintf(how, sizeof how, "died of signal %d", WTERMSIG(ch->status));
    else snprintf(how, sizeof how, "status 0x%x", ch->status);
    snprintf(k->first_unexpected, sizeof k->first_unexpected, "child %d %s before its kill%s%s",
             (int)ch->pid, how, ch->err[0] ? ": " : "", ch->err);
  }
  return true;
}

/* One wave: spawn, drive, kill at the chosen points, reap. */
static void run_wave(kill_ctx *k, nxvk_ctx *c, child *kids, int n, uint64_t *min_budget) {
  for (int i = 0; i < n; i++) {
    child *ch = &kids[i];
    if (spawn_child(k, ch, k->kind == KIND_PORT) < 0) {
      ch->pid = 0;
      k->unexpected++;
      if (!k->first_unexpected[0])
        snprintf(k->first_unexpected, sizeof k->first_unexpected, "spawning %s: %s", k->o->exe, strerror(errno));
      continue;
    }
    k->spawned++;
    ch->target_event = (int)rng_range(&k->rng, 0, MAX_EVENT);
    ch->delay = rng_unit(&k->rng) * MAX_DELAY_S;
    if (k->kind == KIND_PORT) port_next(k, ch, false);
  }
  struct pollfd pfd[512];
  double last_sample = 0;
  for (;;) {
    double now = now_seconds();
    int live = 0, np = 0, dying = 0;
    double next = now + 0.05;
    for (int i = 0; i < n; i++) {
      child *ch = &kids[i];
      if (!ch->pid || ch->reaped) continue;
      if (ch->killed) {
        if (!child_reap(k, ch)) dying++;
        continue;
      }
      if (ch->deadline == 0 && ch->events >= ch->target_event) ch->deadline = now + ch->delay;
      if (ch->deadline == 0 && now - ch->last_event > STALL_S) {
        ch->stalled = true;
        k->stalled++;
        ch->deadline = now;
      }
      if (ch->deadline > 0 && now >= ch->deadline) {
        child_kill(ch);
        dying++;
        continue;
      }
      live++;
      if (ch->deadline > 0 && ch->deadline < next) next = ch->deadline;
      if (np < 510) {
        pfd[np++] = (struct pollfd){.fd = ch->out_fd, .events = POLLIN};
        if (ch->in_fd >= 0 && ch->wbuf) pfd[np++] = (struct pollfd){.fd = ch->in_fd, .events = POLLOUT};
      }
    }
    if (!live && !dying) break;
    if (!live) next = now + 0.005; /* only reaping left */
    if (now - last_sample > 0.05) {
      mem_probe p;
      mem_probe_take(c, &p);
      if (p.has_budget && p.heap_budget < *min_budget) *min_budget = p.heap_budget;
      last_sample = now;
    }
    int ms = (int)((next - now) * 1000);
    poll(pfd, (nfds_t)np, ms < 1 ? 1 : ms);
    for (int i = 0; i < n; i++) {
      child *ch = &kids[i];
      if (!ch->pid || ch->killed) continue;
      child_read(k, ch);
      if (ch->in_fd >= 0 && ch->wbuf) child_write(ch);
    }
  }
}

/* ------------------------------------------------------------ port probe */

/* Does `nxvk port` (or NXVK_STRESS_PORT) answer a ping?  why gets the reason
 * when not. */
static bool port_answers(kill_ctx *k, char *why, size_t len) {
  child ch;
  if (spawn_child(k, &ch, true) < 0) {
    snprintf(why, len, "cannot start it: %s", strerror(errno));
    return false;
  }
  size_t flen;
  uint8_t *f = make_frame("{\"id\":1,\"cmd\":\"ping\"}", NULL, 0, &flen);
  bool answered = false;
  ch.wbuf = ch.wown = f;
  ch.wlen = flen;
  ch.awaiting_put = false;
  double t0 = now_seconds();
  snprintf(why, len, "no reply to a ping within 10 s");
  while (now_seconds() - t0 < 10 && f) {
    struct pollfd p[2] = {{.fd = ch.out_fd, .events = POLLIN}, {.fd = ch.in_fd, .events = POLLOUT}};
    poll(p, ch.wbuf ? 2 : 1, 100);
    if (ch.wbuf) {
      ssize_t n = write(ch.in_fd, ch.wbuf + ch.woff, ch.wlen - ch.woff);
      if (n > 0 && (ch.woff += (size_t)n) == ch.wlen) ch.wbuf = NULL;
      if (n < 0 && errno != EAGAIN && errno != EINTR) {
        snprintf(why, len, "it closed its input (exited?)");
        break;
      }
    }
    uint8_t buf[4096];
    ssize_t n = read(ch.out_fd, buf, sizeof buf);
    if (n == 0) {
      snprintf(why, len, "it exited without a reply");
      break;
    }
    if (n >= 8) {
      uint32_t hl = get_be32(buf + 4);
      cJSON *h = hl <= (uint32_t)n - 8 ? cJSON_ParseWithLength((const char *)buf + 8, hl) : NULL;
      answered = h && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(h, "ok"));
      if (!answered) snprintf(why, len, "the reply to a ping was not ok");
      cJSON_Delete(h);
      break;
    }
  }
  /* end of input asks a server to exit; then make sure */
  close(ch.in_fd);
  ch.in_fd = -1;
  for (int i = 0; i < 50; i++) {
    int st;
    if (waitpid(ch.pid, &st, WNOHANG) == ch.pid) {
      ch.pid = 0;
      break;
    }
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  if (ch.pid) {
    kill(ch.pid, SIGKILL);
    waitpid(ch.pid, NULL, 0);
  }
  child_close(&ch);
  return answered;
}

/* -------------------------------------------------------------- the mode */

static const nxvk_op_desc *unary_f32_op(void) {
  for (int i = 0; i < nxvk_op_count(); i++) {
    const nxvk_op_desc *op = nxvk_op_at(i);
    if (op->kind == NXVK_KIND_UNARY && (op->dtypes & NXVK_DT(NXVK_F32))) return op;
  }
  return NULL;
}

static bool checked_ops(nxvk_ctx *c, const stress_opts *o, stress_rng *rng, char *why, size_t len) {
  const nxvk_op_desc *pool[256];
  int n = stress_pick_pool(c, o, pool, 256);
  snprintf(why, len, "no op to run");
  for (int i = 0; i < 4 && n; i++) {
    const nxvk_op_desc *op = i == 0 && unary_f32_op() ? unary_f32_op() : pool[rng_next(rng) % (uint64_t)n];
    char last[400];
    bool ok = case_run_checked(c, op, case_dtypes(c, op), 65537, rng, last, sizeof last);
    if (!ok) {
      snprintf(why, len, "%s", last);
      return false;
    }
    snprintf(why, len, "4 checked ops correct after the kills (last: %.300s)", last);
  }
  return n > 0;
}

int stress_kill(nxvk_ctx *c, const stress_opts *o, stress_report *r) {
  kill_ctx k = {0};
  k.o = o;
  k.size = o->size ? o->size : 10 * MIB;
  k.port_cmd = getenv("NXVK_STRESS_PORT");
  if (k.port_cmd && !*k.port_cmd) k.port_cmd = NULL;
  rng_seed(&k.rng, o->seed ^ 0x4b11ull);
  char b1[64], b2[64], b3[64], b4[64], b5[64], why[400];
  const nxvk_op_desc *op = unary_f32_op();
  if (!o->exe || !op) {
    report_check(r, CHECK_FAIL, "setup", "%s", !op ? "no unary f32 op in the table" : "cannot find this program's path to start children");
    return EXIT_OK;
  }
  k.op_name = op->name;

  /* SIGPIPE would kill us when a child dies under a write */
  struct sigaction ign = {.sa_handler = SIG_IGN}, old_pipe;
  sigaction(SIGPIPE, &ign, &old_pipe);

  bool port = port_answers(&k, why, sizeof why);
  k.kind = port ? KIND_PORT : KIND_WORKER;
  const char *kind_text = port ? (k.port_cmd ? "port servers (NXVK_STRESS_PORT)" : "`nxvk port` servers")
                               : "`nxvk stress --worker` processes";
  printf("== kill: %ld %s in waves of %ld, %s tensors, %s, seed %llu\n", o->procs, kind_text, o->wave,
         fmt_bytes((double)k.size, b1, sizeof b1), op->name, (unsigned long long)o->seed);
  if (!port)
    report_note("children are workers: %s did not answer a ping (%s)",
                k.port_cmd ? "NXVK_STRESS_PORT" : "`nxvk port`", why);
  fflush(stdout);
  report_str(r, "children", "%s", port ? "port" : "worker");
  if (!port) report_str(r, "port_probe", "%s", why);

  if (port) {
    size_t n = (size_t)(k.size / 4);
    float *data = malloc(n * 4 + 4);
    char json[200];
    snprintf(json, sizeof json, "{\"id\":1,\"cmd\":\"put\",\"dtype\":\"f32\",\"shape\":[%zu]}", n);
    if (data) {
      for (size_t i = 0; i < n; i++) data[i] = (float)(rng_unit(&k.rng) * 8 - 4);
      k.put_frame = make_frame(json, data, n * 4, &k.put_len);
    }
    free(data);
    if (!k.put_frame) {
      report_check(r, CHECK_FAIL, "setup", "out of host memory");
      sigaction(SIGPIPE, &old_pipe, NULL);
      return EXIT_OK;
    }
  }

  mem_probe base, after;
  mem_probe_take(c, &base);
  uint64_t min_budget = base.has_budget ? base.heap_budget : 0;
  child *kids = calloc((size_t)o->wave, sizeof *kids);
  double t0 = now_seconds();
  for (long done = 0; kids && done < o->procs; done += o->wave) {
    int n = (int)(o->procs - done < o->wave ? o->procs - done : o->wave);
    memset(kids, 0, (size_t)o->wave * sizeof *kids);
    run_wave(&k, c, kids, n, &min_budget);
  }
  double secs = now_seconds() - t0;
  free(kids);
  free(k.put_frame);
  sigaction(SIGPIPE, &old_pipe, NULL);

  /* the drivers reclaim a dead process's memory asynchronously: wait for
   * the budget to come back (up to 10 s) before judging */
  uint64_t tol = k.size / 2; /* less than one child tensor: a leaked tensor shows */
  if (tol < 4 * MIB) tol = 4 * MIB;
  mem_probe_take(c, &after);
  for (int i = 0; i < 100 && after.has_budget && after.heap_budget + tol < base.heap_budget; i++) {
    struct timespec ts = {0, 100 * 1000 * 1000};
    nanosleep(&ts, NULL);
    mem_probe_take(c, &after);
  }

  report_num(r, "procs", (double)o->procs);
  report_num(r, "spawned", (double)k.spawned);
  report_num(r, "killed", (double)k.killed_by_us);
  report_num(r, "unexpected_exits", (double)k.unexpected);
  report_num(r, "stalled", (double)k.stalled);
  report_num(r, "uploads_done", (double)k.puts);
  report_num(r, "ops_done", (double)k.ops);
  report_num(r, "tensor_bytes", (double)k.size);
  report_num(r, "seconds", secs);
  static const char *const phase_names[] = {"before_ready", "ready", "uploading", "uploaded", "in_op", "op_done"};
  cJSON *ph = cJSON_AddObjectToObject(r->figures, "killed_at");
  for (int i = 0; i < 6; i++) cJSON_AddNumberToObject(ph, phase_names[i], (double)k.phase_count[i]);

  if (k.unexpected || k.killed_by_us != o->procs)
    report_check(r, CHECK_FAIL, "children", "%ld of %ld killed as planned, %ld ended otherwise; first: %s",
                 k.killed_by_us, o->procs, k.unexpected, k.first_unexpected[0] ? k.first_unexpected : "(none)");
  else
    report_check(r, CHECK_PASS, "children", "%ld started and SIGKILLed, all reaped; %ld uploads and %ld ops finished before",
                 k.killed_by_us, k.puts, k.ops);
  long mid_work = k.phase_count[2] + k.phase_count[4];
  char spread[200];
  snprintf(spread, sizeof spread, "%ld before the device was open, %ld idle, %ld uploading, %ld between, %ld in an op, %ld after one",
           k.phase_count[0], k.phase_count[1], k.phase_count[2], k.phase_count[3], k.phase_count[4], k.phase_count[5]);
  report_check(r, mid_work > 0 ? CHECK_PASS : CHECK_UNCHECKED, "kill points", "%s%s", spread,
               mid_work > 0 ? "" : " (no kill landed during an upload or op)");
  if (k.stalled) report_check(r, CHECK_FAIL, "progress", "%ld children made no progress for %.0f s", k.stalled, STALL_S);

  if (base.has_budget) {
    double drop = (double)base.heap_budget - (double)min_budget;
    double back = (double)base.heap_budget - (double)after.heap_budget;
    report_num(r, "heap_budget_before", (double)base.heap_budget);
    report_num(r, "heap_budget_lowest", (double)min_budget);
    report_num(r, "heap_budget_after", (double)after.heap_budget);
    if (drop < (double)k.size)
      report_check(r, CHECK_UNCHECKED, "device memory",
                   "the heap budget did not fall while children held memory (lowest %s below baseline): "
                   "on this driver it does not see other processes, so it cannot show they are gone",
                   fmt_bytes(drop, b1, sizeof b1));
    else
      report_check(r, back > (double)tol ? CHECK_FAIL : CHECK_PASS, "device memory",
                   "heap budget %s before, %s lowest while children lived, %s after (%s short; tolerance %s)",
                   fmt_bytes((double)base.heap_budget, b1, sizeof b1), fmt_bytes((double)min_budget, b2, sizeof b2),
                   fmt_bytes((double)after.heap_budget, b3, sizeof b3), fmt_bytes(back > 0 ? back : 0, b4, sizeof b4),
                   fmt_bytes((double)tol, b5, sizeof b5));
  } else {
    report_str(r, "heap_budget", "not reported by this device");
    report_check(r, CHECK_UNCHECKED, "device memory",
                 "memory budget: not reported by this device (no VK_EXT_memory_budget), so the "
                 "device memory left after the kills cannot be read");
  }
  if (base.has_avail && after.has_avail)
    report_note("host MemAvailable %s before, %s after (%s; others share this machine: a hint, not a verdict)",
                fmt_bytes((double)base.host_avail, b1, sizeof b1), fmt_bytes((double)after.host_avail, b2, sizeof b2),
                fmt_delta((double)after.host_avail - (double)base.host_avail, b3, sizeof b3));
  bool works = checked_ops(c, o, &k.rng, why, sizeof why);
  report_check(r, works ? CHECK_PASS : CHECK_FAIL, "device after", "%s", why);
  report_summary(r, "%ld %s killed (%ld mid-upload/op), %ld unexpected, memory %s, device %s", k.killed_by_us,
                 port ? "ports" : "workers", mid_work, k.unexpected,
                 base.has_budget ? "checked" : "not reported", works ? "ok" : "FAILED");
  return EXIT_OK;
}

/* ------------------------------------------------------------ the worker */

static void say(const char *s, size_t n) {
  /* a closed pipe means the parent is gone: nothing left to do */
  if (write(1, s, n) < 0) _exit(0);
}

static int worker_fail(const char *what) {
  char line[400];
  int n = snprintf(line, sizeof line, "E%s: %s\n", what, nxvk_errmsg());
  say(line, (size_t)(n < (int)sizeof line ? n : (int)sizeof line - 1));
  return EXIT_FAIL;
}

int stress_worker(int argc, char **argv, nxvk_cli *cli) {
  const char *size_s = NULL;
  long seed = 1;
  const nxvk_option opts[] = {
      {"worker", 0, OPT_FLAG, &(bool){false}, NULL, "run as kill mode's child"},
      {"size", 0, OPT_STRING, &size_s, "BYTES", "tensor size"},
      {"seed", 0, OPT_INT, &seed, "N", "random seed"},
      OPT_COMMON_DEVICE(cli),
      OPT_END,
  };
  static const char *const syn[] = {"--worker [--size BYTES] [--seed N]", NULL};
  const nxvk_usage u = {"stress", syn, "The child process of `nxvk stress kill` (not for direct use)."};
  int npos, rc = cli_parse(argc, argv, &u, opts, &npos);
  if (rc) return rc < 0 ? EXIT_OK : rc;
#ifdef __linux__
  prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the stress run */
#endif
  uint64_t size = 10 * MIB;
  if (size_s && nxvk_parse_bytes(size_s, &size)) return cli_usage_error(&u, "--size: '%s' is not a byte count", size_s);
  const nxvk_op_desc *op = unary_f32_op();
  if (!op) return worker_fail("no unary f32 op");
  nxvk_ctx *c;
  rc = cli_ctx(cli, &c);
  if (rc) return worker_fail("opening the device");
  say("R", 1);
  int64_t n = (int64_t)(size / 4);
  if (n < 1) n = 1;
  float *data = malloc((size_t)n * 4);
  if (!data) return worker_fail("host memory");
  stress_rng rng;
  rng_seed(&rng, (uint64_t)seed);
  for (int64_t i = 0; i < n; i++) data[i] = (float)(rng_unit(&rng) * 8 - 4);
  nxvk_tensor *live[LIVE_INPUTS] = {0}, *outs[LIVE_INPUTS] = {0};
  nxvk_shape s = {1, {n}};
  double t0 = now_seconds();
  /* until killed; the time cap only guards against a parent that vanished
   * without the death signal (systems without prctl) */
  for (long i = 0; now_seconds() - t0 < 300; i++) {
    int slot = (int)(i % LIVE_INPUTS);
    nxvk_tensor_free(live[slot]);
    nxvk_tensor_free(outs[slot]);
    live[slot] = outs[slot] = NULL;
    say("U", 1);
    rc = nxvk_tensor_new(c, NXVK_F32, &s, &live[slot]);
    if (rc == NXVK_OK) rc = nxvk_tensor_upload(c, live[slot], data, (size_t)n * 4);
    if (rc) return worker_fail("upload");
    say("u", 1);
    say("O", 1);
    rc = nxvk_op_run(c, op, NULL, &live[rng_next(&rng) % (i + 1 < LIVE_INPUTS ? (uint64_t)i + 1 : LIVE_INPUTS)], 1,
                     &outs[slot]);
    if (rc) return worker_fail(op->name);
    say("o", 1);
  }
  for (int i = 0; i < LIVE_INPUTS; i++) {
    nxvk_tensor_free(live[i]);
    nxvk_tensor_free(outs[i]);
  }
  free(data);
  return EXIT_OK;
}
