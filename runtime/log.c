/* Logging (always on, one line per event, "apigen[server 1234]: ...") and the
 * per-call trace (APIGEN_TRACE=1 -> stderr, APIGEN_TRACE=/path -> appended
 * there, "apigen[guest 5678 prog] trace: ..." per call and, on the guest, one
 * "apigen wire" line per round trip (rt_trace_wire; bench/trace_model.c reads
 * them)). */
#define _GNU_SOURCE
#include "rt_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_once_t trace_once = PTHREAD_ONCE_INIT;
static int trace_fd = -1;
static int log_fd = 2; /* stderr, or its copy once stderr is forwarded (output.c) */
/* Every call asks whether it traces (twice on the guest): after the first
 * answer that is one load, not a pthread_once. 0: not read yet, 1: off, 2: on. */
int apigen_trace_state_; /* __atomic_* only (apigen_rt.h reads it inline) */

/* One write() per line so lines from several threads never interleave. */
static void write_line(int fd, const char *prefix, const char *fmt, va_list ap)
{
    char buf[2048];
    int n = snprintf(buf, sizeof buf, "%s", prefix);
    if (n < 0)
        return;
    int m = vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
    if (m < 0)
        return;
    size_t len = (size_t)n + (size_t)m;
    if (len > sizeof buf - 2)
        len = sizeof buf - 2;
    buf[len++] = '\n';
    const char *p = buf;
    while (len) {
        ssize_t k = write(fd, p, len);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return;
        p += k;
        len -= (size_t)k;
    }
}

/* Which side wrote a line: each library of the runtime is compiled with its
 * own (runtime/CMakeLists.txt); a copy compiled without one (the fuzz
 * targets) says neither. */
#ifndef APIGEN_LOG_SIDE
#define APIGEN_LOG_SIDE ""
#endif

/* "apigen[server 1234]: " or "apigen[guest 5678 exa_demo]: " (+ what), so that
 * a line in a terminal both sides write to names its process. The pid is read
 * per line: a session process forked by the server has its own. */
static void line_prefix(char *buf, size_t size, const char *what)
{
    const char *side = APIGEN_LOG_SIDE;
    long pid = (long)getpid();
    if (strcmp(side, "guest") == 0)
        snprintf(buf, size, "apigen[guest %ld %s]%s: ", pid, program_invocation_short_name, what);
    else if (*side)
        snprintf(buf, size, "apigen[%s %ld]%s: ", side, pid, what);
    else
        snprintf(buf, size, "apigen[%ld]%s: ", pid, what);
}

void apigen_log(const char *fmt, ...)
{
    char prefix[96];
    line_prefix(prefix, sizeof prefix, "");
    va_list ap;
    va_start(ap, fmt);
    write_line(log_fd, prefix, fmt, ap);
    va_end(ap);
}

static bool trace_time; /* APIGEN_TRACE_TIME=1: CLOCK_MONOTONIC on every trace line */

static void trace_init(void)
{
    const char *t = getenv("APIGEN_TRACE_TIME");
    trace_time = t && strcmp(t, "1") == 0;
    const char *v = getenv("APIGEN_TRACE");
    if (!v || !*v || strcmp(v, "0") == 0)
        return;
    if (strcmp(v, "1") == 0) {
        trace_fd = log_fd;
        return;
    }
    int fd = open(v, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        apigen_log("APIGEN_TRACE=%s: %s; tracing to stderr instead", v, strerror(errno));
        fd = log_fd;
    }
    trace_fd = fd;
}

extern inline bool apigen_tracing(void);

bool apigen_tracing_slow(void)
{
    pthread_once(&trace_once, trace_init);
    int st = trace_fd >= 0 ? 2 : 1; /* trace_fd is published by the release below */
    __atomic_store_n(&apigen_trace_state_, st, __ATOMIC_RELEASE);
    return st == 2;
}

void apigen_trace(const char *fmt, ...)
{
    if (!apigen_tracing())
        return;
    char prefix[128], when[40] = " trace";
    if (trace_time) {
        /* one clock for every process of the machine: the guest's and the
         * server's lines of one call line up (tests/gpu/pinned-shm.sh) */
        uint64_t ns = apigen_now_ns();
        snprintf(when, sizeof when, " trace @%llu.%06llu", (unsigned long long)(ns / 1000000000u),
                 (unsigned long long)(ns % 1000000000u / 1000u));
    }
    line_prefix(prefix, sizeof prefix, when);
    va_list ap;
    va_start(ap, fmt);
    write_line(trace_fd, prefix, fmt, ap);
    va_end(ap);
}

void rt_trace_wire(const char *fmt, ...)
{
    if (!apigen_tracing())
        return;
    char prefix[64];
    snprintf(prefix, sizeof prefix, "apigen wire [%ld]: ", (long)getpid());
    va_list ap;
    va_start(ap, fmt);
    write_line(trace_fd, prefix, fmt, ap);
    va_end(ap);
}

/* The log (and a trace to stderr) goes to fd from now on: a session process
 * forwards its stderr to the client (output.c), the log stays the server's. */
void rt_log_redirect(int fd)
{
    if (trace_fd == log_fd)
        trace_fd = fd;
    log_fd = fd;
}

int rt_trace_fd(void)
{
    return apigen_tracing() ? trace_fd : -1;
}

uint64_t apigen_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
