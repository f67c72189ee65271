/* apigen-bench: one run, native and forwarded over each transport, one table.
 *
 *   apigen-bench --worker PROG --server SERVER --native-dir DIR --stub-dir DIR
 *                [--transports unix,tcp,shm] [--server-arg ARG]... [--worker-arg ARG]...
 *
 * 1. Floors: a 64-byte ping-pong over each transport with the transport
 *    library itself (an echo child process), so the forwarded numbers can be
 *    read against what the transport alone costs on this machine.
 * 2. The worker (an API program: bench/ocl_worker.c, exa_worker.c,
 *    cuda_worker.cu) runs natively (LD_LIBRARY_PATH=native-dir) and then
 *    forwarded (LD_LIBRARY_PATH=stub-dir, APIGEN_SERVER=URL) to a fresh server
 *    per transport. It prints one line per metric:
 *        name|unit|lo or hi (which is better)|value|description
 * 3. The table: each metric natively and per transport, with the ratio to
 *    native as "speed" (higher is better: native time / forwarded time, or
 *    forwarded rate / native rate); the synchronous call also against the
 *    transport's floor. Benchmarks print numbers; nothing is asserted. */
#define _GNU_SOURCE
#include "transport.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_T 4
#define MAX_M 32
#define MAX_ARGS 16

typedef struct metric {
    char name[48], unit[16], desc[96];
    int hi; /* higher is better */
    double v[1 + MAX_T]; /* [0] native, [1+i] transport i; <0: missing */
} metric;

static metric ms[MAX_M];
static int nms;
static const char *tnames[MAX_T];
static int nt;
static double floor_us[MAX_T];

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *fmt, const char *a)
{
    fprintf(stderr, "apigen-bench: ");
    fprintf(stderr, fmt, a);
    fprintf(stderr, "\n");
    exit(2);
}

/* ---- floors ---------------------------------------------------------------------- */
static double pingpong(const char *url)
{
    char err[512];
    apigen_listener *l;
    if (!apigen_tp_listen(url, &l, err, sizeof err)) {
        fprintf(stderr, "floor %s: %s\n", url, err);
        return -1;
    }
    char lurl[300];
    snprintf(lurl, sizeof lurl, "%s", apigen_tp_listener_url(l));
    pid_t pid = fork();
    if (pid == 0) {
        apigen_conn *c;
        char b[64], e[256];
        if (!apigen_tp_connect(lurl, 5000, &c, e, sizeof e))
            _exit(1);
        while (apigen_tp_recv(c, b, sizeof b, -1, e, sizeof e) == APIGEN_TP_OK)
            if (!apigen_tp_send_buf(c, b, sizeof b, -1, e, sizeof e))
                break;
        _exit(0);
    }
    apigen_conn *s;
    double best = -1;
    if (apigen_tp_accept(l, &s, err, sizeof err)) {
        char b[64] = {1};
        for (int round = 0; round < 5; round++) {
            int n = 20000;
            double t0 = now_s();
            for (int i = 0; i < n; i++)
                if (!apigen_tp_send_buf(s, b, sizeof b, -1, err, sizeof err) ||
                    apigen_tp_recv(s, b, sizeof b, -1, err, sizeof err) != APIGEN_TP_OK) {
                    fprintf(stderr, "floor %s: %s\n", url, err);
                    n = 0;
                    break;
                }
            if (!n)
                break;
            double us = (now_s() - t0) * 1e6 / n;
            if (best < 0 || us < best)
                best = us;
        }
        apigen_tp_close(s);
    }
    apigen_tp_listener_close(l);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return best;
}

/* ---- worker runs ------------------------------------------------------------------- */
static void parse_line(char *line, int col)
{
    char *f[5];
    int n = 0;
    for (char *p = line; n < 5; n++) {
        f[n] = p;
        p = strchr(p, '|');
        if (!p) {
            n++;
            break;
        }
        *p++ = 0;
    }
    if (n < 4)
        return;
    char *nl = strchr(f[n - 1], '\n');
    if (nl)
        *nl = 0;
    metric *m = NULL;
    for (int i = 0; i < nms; i++)
        if (strcmp(ms[i].name, f[0]) == 0)
            m = &ms[i];
    if (!m) {
        if (nms == MAX_M)
            return;
        m = &ms[nms++];
        snprintf(m->name, sizeof m->name, "%s", f[0]);
        snprintf(m->unit, sizeof m->unit, "%s", f[1]);
        m->hi = strcmp(f[2], "hi") == 0;
        snprintf(m->desc, sizeof m->desc, "%s", n > 4 ? f[4] : f[0]);
        for (int k = 0; k <= MAX_T; k++)
            m->v[k] = -1;
    }
    m->v[col] = strtod(f[3], NULL);
}

static pid_t spawn(char *const argv[], const char *ld, const char *server_url, int out_fd, int err_fd)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (ld && *ld)
            setenv("LD_LIBRARY_PATH", ld, 1);
        else
            unsetenv("LD_LIBRARY_PATH");
        if (server_url)
            setenv("APIGEN_SERVER", server_url, 1);
        else
            unsetenv("APIGEN_SERVER");
        if (out_fd >= 0)
            dup2(out_fd, 1);
        if (err_fd >= 0)
            dup2(err_fd, 2);
        execv(argv[0], argv);
        fprintf(stderr, "apigen-bench: exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    return pid;
}

static void run_worker(char **wargv, const char *ld, const char *url, int col)
{
    int p[2];
    if (pipe(p) < 0)
        die("pipe: %s", strerror(errno));
    pid_t pid = spawn(wargv, ld, url, p[1], -1);
    close(p[1]);
    FILE *f = fdopen(p[0], "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        if (strchr(line, '|'))
            parse_line(line, col);
        else
            fprintf(stderr, "  [%s] %s", url ? url : "native", line);
    }
    if (f)
        fclose(f);
    int st;
    waitpid(pid, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fprintf(stderr, "apigen-bench: worker (%s) exited with status 0x%x\n", url ? url : "native", st);
}

/* Starts the server on url; waits for "listening on" on its stderr. */
static pid_t start_server(char **sargv, char *url_out, size_t cap)
{
    int p[2];
    if (pipe(p) < 0)
        return -1;
    pid_t pid = spawn(sargv, NULL, NULL, -1, p[1]);
    close(p[1]);
    FILE *f = fdopen(p[0], "r");
    char line[512];
    double t0 = now_s();
    while (f && now_s() - t0 < 20 && fgets(line, sizeof line, f)) {
        char *q = strstr(line, "listening on ");
        if (q) {
            q += strlen("listening on ");
            size_t n = strcspn(q, " \n");
            snprintf(url_out, cap, "%.*s", (int)n, q);
            /* keep draining its log in the background (it must not block on a full pipe) */
            if (fork() == 0) {
                while (fgets(line, sizeof line, f))
                    if (!strstr(line, "listening"))
                        fprintf(stderr, "  [server] %s", line);
                _exit(0);
            }
            fclose(f);
            return pid;
        }
        fprintf(stderr, "  [server] %s", line);
    }
    if (f)
        fclose(f);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

static const char *fmt_v(double v, char *buf, size_t cap)
{
    if (v < 0)
        snprintf(buf, cap, "-");
    else if (v >= 1000)
        snprintf(buf, cap, "%.0f", v);
    else if (v >= 10)
        snprintf(buf, cap, "%.1f", v);
    else
        snprintf(buf, cap, "%.3f", v);
    return buf;
}

int main(int argc, char **argv)
{
    const char *worker = NULL, *server = NULL, *native_dir = "", *stub_dir = NULL;
    char tlist[64] = "unix,tcp,shm";
    char *sargs[MAX_ARGS], *wargs[MAX_ARGS];
    int nsargs = 0, nwargs = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            die("missing value for %s", a);
        if (!strcmp(a, "--worker"))
            worker = v;
        else if (!strcmp(a, "--server"))
            server = v;
        else if (!strcmp(a, "--native-dir"))
            native_dir = v;
        else if (!strcmp(a, "--stub-dir"))
            stub_dir = v;
        else if (!strcmp(a, "--transports"))
            snprintf(tlist, sizeof tlist, "%s", v);
        else if (!strcmp(a, "--server-arg") && nsargs < MAX_ARGS - 4)
            sargs[nsargs++] = (char *)v;
        else if (!strcmp(a, "--worker-arg") && nwargs < MAX_ARGS - 2)
            wargs[nwargs++] = (char *)v;
        else
            die("unknown option %s (see the header of bench/bench.c)", a);
        i++;
    }
    if (!worker || !server || !stub_dir)
        die("%s", "usage: apigen-bench --worker PROG --server SERVER --native-dir DIR --stub-dir DIR "
                  "[--transports unix,tcp,shm] [--server-arg A]... [--worker-arg A]...");
    signal(SIGPIPE, SIG_IGN);
    for (char *save = NULL, *t = strtok_r(tlist, ",", &save); t && nt < MAX_T; t = strtok_r(NULL, ",", &save))
        tnames[nt++] = strdup(t);

    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/apigen-bench-%d", (int)getpid());
    mkdir(dir, 0700);
    char *wargv[MAX_ARGS + 2];
    wargv[0] = (char *)worker;
    for (int i = 0; i < nwargs; i++)
        wargv[1 + i] = wargs[i];
    wargv[1 + nwargs] = NULL;

    /* 1. floors */
    for (int t = 0; t < nt; t++) {
        char url[128];
        if (!strcmp(tnames[t], "unix"))
            snprintf(url, sizeof url, "unix://%s/floor.sock", dir);
        else if (!strcmp(tnames[t], "tcp"))
            snprintf(url, sizeof url, "tcp://127.0.0.1:0");
        else
            snprintf(url, sizeof url, "%s://apigen-bench-floor-%d", tnames[t], (int)getpid());
        floor_us[t] = pingpong(url);
    }

    /* 2. native, then each transport */
    fprintf(stderr, "apigen-bench: native run (%s)\n", native_dir[0] ? native_dir : "system libraries");
    run_worker(wargv, native_dir, NULL, 0);
    for (int t = 0; t < nt; t++) {
        char url[128], real_url[300];
        if (!strcmp(tnames[t], "unix"))
            snprintf(url, sizeof url, "unix://%s/server.sock", dir);
        else if (!strcmp(tnames[t], "tcp"))
            snprintf(url, sizeof url, "tcp://127.0.0.1:0");
        else
            snprintf(url, sizeof url, "%s://apigen-bench-%d", tnames[t], (int)getpid());
        char *sargv[MAX_ARGS + 4];
        int k = 0;
        sargv[k++] = (char *)server;
        sargv[k++] = "--listen";
        sargv[k++] = url;
        for (int i = 0; i < nsargs; i++)
            sargv[k++] = sargs[i];
        sargv[k] = NULL;
        pid_t sp = start_server(sargv, real_url, sizeof real_url);
        if (sp < 0) {
            fprintf(stderr, "apigen-bench: the server did not start on %s\n", url);
            continue;
        }
        fprintf(stderr, "apigen-bench: forwarded run over %s\n", real_url);
        run_worker(wargv, stub_dir, real_url, 1 + t);
        kill(sp, SIGTERM);
        waitpid(sp, NULL, 0);
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "apigen-bench: could not remove %s\n", dir);

    /* 3. the table */
    char b[32];
    printf("\n%-34s %-6s %10s", "metric", "unit", "native");
    for (int t = 0; t < nt; t++)
        printf(" %10s %7s", tnames[t], "speed");
    printf("\n");
    printf("%-34s %-6s %10s", "transport ping-pong floor (64 B)", "us", "-");
    for (int t = 0; t < nt; t++)
        printf(" %10s %7s", fmt_v(floor_us[t], b, sizeof b), "");
    printf("\n");
    for (int i = 0; i < nms; i++) {
        metric *m = &ms[i];
        printf("%-34.34s %-6s %10s", m->desc, m->unit, fmt_v(m->v[0], b, sizeof b));
        for (int t = 0; t < nt; t++) {
            double v = m->v[1 + t], r = -1;
            if (v > 0 && m->v[0] > 0)
                r = m->hi ? v / m->v[0] : m->v[0] / v;
            char rb[32];
            if (r < 0)
                snprintf(rb, sizeof rb, "-");
            else
                snprintf(rb, sizeof rb, "%.2fx", r);
            printf(" %10s %7s", fmt_v(v, b, sizeof b), rb);
        }
        printf("\n");
    }
    for (int i = 0; i < nms; i++)
        if (!strcmp(ms[i].name, "sync_call"))
            for (int t = 0; t < nt; t++)
                if (ms[i].v[1 + t] > 0 && floor_us[t] > 0)
                    printf("sync call over %s: %.3f us = %.2fx its transport floor (%.3f us)\n", tnames[t],
                           ms[i].v[1 + t], ms[i].v[1 + t] / floor_us[t], floor_us[t]);
    printf("speed: native time / forwarded time (latencies) or forwarded / native (rates); 1.00x = native\n");
    return 0;
}
