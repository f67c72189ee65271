/* apigen-bench: one run, native and forwarded over each transport, one table.
 *
 *   apigen-bench --worker PROG --server SERVER --native-dir DIR --stub-dir DIR
 *                [--transports unix,tcp,shm] [--server-arg ARG]... [--worker-arg ARG]...
 *                [--sweep FILE [--sweep-max SIZE]] [--rounds N] [--cpus GUEST:SERVER]
 *                [--tsv FILE] [--floors 0|1]
 *
 * 1. Floors: a 64-byte ping-pong over each transport with the transport
 *    library itself (an echo child process), so the forwarded numbers can be
 *    read against what the transport alone costs on this machine; and, with
 *    shm, the same over plain shared-memory rings in plain C (raw_ring.c),
 *    the floor of any shared-memory transport on this machine. With tcp
 *    and unix, the bulk floor too: a plain C stream over a loopback socket
 *    of the same kind (raw_stream.c), BENCH_COPY_MB (default 256) MiB each
 *    way, against which the worker's copy_h2d* / copy_d2h* rates are read.
 * 2. The worker (an API program: bench/ocl_worker.c, exa_worker.c,
 *    cuda_worker.cu) runs natively (LD_LIBRARY_PATH=native-dir) and then
 *    forwarded (LD_LIBRARY_PATH=stub-dir, APIGEN_SERVER=URL) to a fresh server
 *    per transport. It prints one line per metric:
 *        name|unit|lo or hi (which is better)|value|description
 * 3. The table: each metric natively and per transport, with the ratio to
 *    native as "speed" (higher is better: native time / forwarded time, or
 *    forwarded rate / native rate); the synchronous call also against the
 *    transport's floor. Benchmarks print numbers; nothing is asserted.
 *
 * --rounds N (default 1): steps 1 and 2 N times over, native and forwarded
 * taking turns, and each cell the best of its N values: on a shared machine
 * (the GPU machine's native launch rate moves 220-290 k/s from one minute to
 * the next) a ratio of two single samples is mostly the noise between them.
 *
 * --tcp-variants 1: also the plain-C tcp stream's variants (raw_stream.c):
 * 4 and 16 MiB socket buffers, MSG_ZEROCOPY sends, the bytes over 2 and 4
 * connections; what each choice for bulk copies over tcp could give at best.
 *
 * --cpus GUEST:SERVER: every guest side (worker, the floors' measuring end)
 * on the CPUs of GUEST, every server side (server, the floors' echo end) on
 * those of SERVER (bench/cpus.h): runs then compare on the same core pair.
 *
 * --tsv FILE: the table also as tab-separated rows for scripts
 * (tests/gpu/patterns.sh, bench/patterns_table.sh):
 *     transports<TAB>T1<TAB>T2...
 *     floor<TAB>T<TAB>us                   (the 64-byte ping-pong, per transport)
 *     metric<TAB>NAME<TAB>UNIT<TAB>lo|hi<TAB>NATIVE<TAB>T1<TAB>T2...<TAB>DESC
 * a missing value is "-". --floors 0 skips step 1 (a run for its traces only).
 *
 * --sweep FILE: instead of 1-3, copy bandwidth against transfer size. The
 * worker (BENCH_SWEEP=1) copies 4 KiB, 8 KiB, ... up to SIZE (K/M/G suffix,
 * default 1G, capped at an eighth of MemAvailable so that guest, server and
 * device copies fit) in each of its series (pageable / pinned, each way),
 * natively and over each transport; FILE gets one tab-separated row per
 * series and size (GB/s per column, "-" when missing), which bench/plot.sh
 * turns into a picture. */
#define _GNU_SOURCE
#include "cpus.h"
#include "raw_ring.h"
#include "raw_stream.h"
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
#define MAX_S 8  /* sweep series */
#define MAX_P 32 /* sizes per series */

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
static double raw_floor_us = -1; /* plain-C shared-memory rings (when shm is measured) */
static double raw_gbps[MAX_T][2]; /* plain-C stream over tcp/unix: [t][0] up (H2D), [1] down */

/* --sweep: GB/s per series and size, [0] native, [1+i] transport i */
typedef struct sweep_series {
    char name[64];
    int np;
    unsigned long long bytes[MAX_P];
    double v[MAX_P][1 + MAX_T];
} sweep_series;
static sweep_series ss[MAX_S];
static int nss;

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
        cpus_pin_server();
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
/* "sweep|SERIES|BYTES|GB/s" */
static void parse_sweep(char *line, int col)
{
    char *name = line + strlen("sweep|"), *bytes = strchr(name, '|'), *gbps;
    if (!bytes || !(gbps = strchr(bytes + 1, '|')))
        return;
    *bytes++ = 0;
    *gbps++ = 0;
    sweep_series *sr = NULL;
    for (int i = 0; i < nss && !sr; i++)
        if (!strcmp(ss[i].name, name))
            sr = &ss[i];
    if (!sr) {
        if (nss == MAX_S)
            return;
        sr = &ss[nss++];
        snprintf(sr->name, sizeof sr->name, "%.*s", (int)sizeof sr->name - 1, name);
    }
    unsigned long long n = strtoull(bytes, NULL, 10);
    int k = 0;
    while (k < sr->np && sr->bytes[k] != n)
        k++;
    if (k == sr->np) {
        if (sr->np == MAX_P)
            return;
        sr->np++;
        sr->bytes[k] = n;
        for (int c = 0; c <= MAX_T; c++)
            sr->v[k][c] = -1;
    }
    double v = strtod(gbps, NULL);
    if (v > sr->v[k][col]) /* best of the rounds; missing is < 0 */
        sr->v[k][col] = v;
}

static void parse_line(char *line, int col)
{
    if (!strncmp(line, "sweep|", 6)) {
        parse_sweep(line, col);
        return;
    }
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
        /* cut to their columns on purpose */
        snprintf(m->name, sizeof m->name, "%.*s", (int)sizeof m->name - 1, f[0]);
        snprintf(m->unit, sizeof m->unit, "%.*s", (int)sizeof m->unit - 1, f[1]);
        m->hi = strcmp(f[2], "hi") == 0;
        snprintf(m->desc, sizeof m->desc, "%.*s", (int)sizeof m->desc - 1, n > 4 ? f[4] : f[0]);
        for (int k = 0; k <= MAX_T; k++)
            m->v[k] = -1;
    }
    double v = strtod(f[3], NULL), *cell = &m->v[col];
    if (*cell < 0 || (m->hi ? v > *cell : v < *cell)) /* best of the rounds */
        *cell = v;
}

static pid_t spawn(char *const argv[], const char *ld, const char *server_url, int out_fd, int err_fd,
                   void (*pin)(void))
{
    pid_t pid = fork();
    if (pid == 0) {
        pin();
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
    pid_t pid = spawn(wargv, ld, url, p[1], -1, cpus_pin_guest);
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
    pid_t pid = spawn(sargv, NULL, NULL, -1, p[1], cpus_pin_server);
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

/* "1G", "512M", "4096": bytes, or 0 when it is not a size */
static unsigned long long parse_size(const char *v)
{
    char *end;
    unsigned long long n = strtoull(v, &end, 10);
    if (*end == 'K' || *end == 'k')
        n <<= 10, end++;
    else if (*end == 'M' || *end == 'm')
        n <<= 20, end++;
    else if (*end == 'G' || *end == 'g')
        n <<= 30, end++;
    return *end ? 0 : n;
}

static unsigned long long mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    unsigned long long kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb << 10;
}

static const char *fmt_v(double v, char *buf, size_t cap);

/* The sweep's rows (FILE) and the same as a table on stdout. */
static void write_sweep(const char *path, const char *worker)
{
    FILE *f = fopen(path, "w");
    if (!f)
        die("cannot write the sweep file: %s", strerror(errno));
    char host[128] = "?", when[64] = "?";
    gethostname(host, sizeof host);
    time_t now = time(NULL);
    strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    const char *wname = strrchr(worker, '/') ? strrchr(worker, '/') + 1 : worker;
    fprintf(f, "# apigen-bench --sweep: copy bandwidth in GB/s against transfer size; %s, %s, %ld cores, "
               "worker %s\n", when, host, sysconf(_SC_NPROCESSORS_ONLN), wname);
    fprintf(f, "#series\tbytes\tnative");
    printf("\n%-40s %10s %10s", "copy bandwidth (GB/s)", "bytes", "native");
    for (int t = 0; t < nt; t++) {
        fprintf(f, "\t%s", tnames[t]);
        printf(" %10s", tnames[t]);
    }
    fprintf(f, "\n");
    printf("\n");
    for (int i = 0; i < nss; i++)
        for (int k = 0; k < ss[i].np; k++) {
            fprintf(f, "%s\t%llu", ss[i].name, ss[i].bytes[k]);
            printf("%-40.40s %10llu", ss[i].name, ss[i].bytes[k]);
            for (int c = 0; c <= nt; c++) {
                char b[32];
                if (ss[i].v[k][c] < 0)
                    fprintf(f, "\t-");
                else
                    fprintf(f, "\t%.4f", ss[i].v[k][c]);
                printf(" %10s", fmt_v(ss[i].v[k][c], b, sizeof b));
            }
            fprintf(f, "\n");
            printf("\n");
        }
    if (fclose(f) != 0)
        die("writing the sweep file: %s", strerror(errno));
    printf("apigen-bench: wrote %s (bench/plot.sh %s OUT.svg draws it)\n", path, path);
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

/* --tsv: the table for scripts (format in the header) */
static void write_tsv(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        die("cannot write the --tsv file: %s", strerror(errno));
    fprintf(f, "transports");
    for (int t = 0; t < nt; t++)
        fprintf(f, "\t%s", tnames[t]);
    fprintf(f, "\n");
    for (int t = 0; t < nt; t++)
        if (floor_us[t] > 0)
            fprintf(f, "floor\t%s\t%.3f\n", tnames[t], floor_us[t]);
    for (int i = 0; i < nms; i++) {
        fprintf(f, "metric\t%s\t%s\t%s", ms[i].name, ms[i].unit, ms[i].hi ? "hi" : "lo");
        for (int c = 0; c <= nt; c++) {
            if (ms[i].v[c] < 0)
                fprintf(f, "\t-");
            else
                fprintf(f, "\t%.6f", ms[i].v[c]);
        }
        fprintf(f, "\t%s\n", ms[i].desc);
    }
    if (fclose(f) != 0)
        die("writing the --tsv file: %s", strerror(errno));
}

/* BENCH_COPY_MB (default 256), as the workers read it (worker.h) */
static size_t copy_bytes(void)
{
    const char *e = getenv("BENCH_COPY_MB");
    long mb = e && *e ? atol(e) : 256;
    return (size_t)(mb > 0 ? mb : 256) << 20;
}

/* Where transport t listens for `what` ("floor" or "server"); tcp takes a
 * free port. */
static void listen_url(char *url, size_t cap, int t, const char *dir, const char *what)
{
    if (!strcmp(tnames[t], "unix"))
        snprintf(url, cap, "unix://%s/%s.sock", dir, what);
    else if (!strcmp(tnames[t], "tcp"))
        snprintf(url, cap, "tcp://127.0.0.1:0");
    else
        snprintf(url, cap, "%s://apigen-bench-%s-%d", tnames[t], what, (int)getpid());
}

/* The plain-C tcp stream with each bulk choice, best of 3 copies x rounds. */
static void print_tcp_variants(int rounds)
{
    static const struct {
        const char *what;
        raw_stream_opts o;
    } v[] = {
        {"default (1 connection, autotuned buffers)", {1, 1, 0, 0}},
        {"SO_SNDBUF/SO_RCVBUF 4 MiB", {1, 1, 4 << 20, 0}},
        {"SO_SNDBUF/SO_RCVBUF 16 MiB (capped by rmem_max)", {1, 1, 16 << 20, 0}},
        {"MSG_ZEROCOPY sends", {1, 1, 0, 1}},
        {"2 connections", {1, 2, 0, 0}},
        {"4 connections", {1, 4, 0, 0}},
        {"4 connections, MSG_ZEROCOPY", {1, 4, 0, 1}},
    };
    printf("\n%-50s %10s %10s   (plain-C tcp stream, %zu MiB)\n", "tcp bulk variant", "up GB/s",
           "down GB/s", copy_bytes() >> 20);
    cpus_pin_guest();
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        char b1[32], b2[32];
        double up = raw_stream_gbps(&v[i].o, 1, copy_bytes(), 3 * rounds, cpus_pin_server);
        double down = raw_stream_gbps(&v[i].o, 0, copy_bytes(), 3 * rounds, cpus_pin_server);
        printf("%-50s %10s %10s\n", v[i].what, fmt_v(up, b1, sizeof b1), fmt_v(down, b2, sizeof b2));
    }
    cpus_unpin();
}

/* One round: the floors (unless sweeping), the worker natively, then over
 * each transport against a fresh server; each cell keeps its best value. */
static void one_round(const char *dir, char **wargv, const char *server, char **sargs, int nsargs,
                      const char *native_dir, const char *stub_dir, int floors)
{
    /* 1. floors: this process measures (on the guest CPUs), its child echoes */
    cpus_pin_guest();
    for (int t = 0; t < nt && floors; t++) {
        char url[128];
        listen_url(url, sizeof url, t, dir, "floor");
        double f = pingpong(url);
        if (f > 0 && (floor_us[t] < 0 || f < floor_us[t]))
            floor_us[t] = f;
        if (!strcmp(tnames[t], "tcp") || !strcmp(tnames[t], "unix")) {
            for (int up = 1; up >= 0; up--) {
                raw_stream_opts o = {!strcmp(tnames[t], "tcp"), 1, 0, 0};
                double g = raw_stream_gbps(&o, up, copy_bytes(), 3, cpus_pin_server);
                if (g > raw_gbps[t][!up])
                    raw_gbps[t][!up] = g;
            }
        }
        if (!strcmp(tnames[t], "shm")) {
            double r = raw_ring_pingpong_us(5, 20000, cpus_pin_server);
            if (r > 0 && (raw_floor_us < 0 || r < raw_floor_us))
                raw_floor_us = r;
        }
    }
    cpus_unpin();

    /* 2. native, then each transport */
    fprintf(stderr, "apigen-bench: native run (%s)\n", native_dir[0] ? native_dir : "system libraries");
    run_worker(wargv, native_dir, NULL, 0);
    for (int t = 0; t < nt; t++) {
        char url[128], real_url[300];
        listen_url(url, sizeof url, t, dir, "server");
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
}

int main(int argc, char **argv)
{
    const char *worker = NULL, *server = NULL, *native_dir = "", *stub_dir = NULL;
    const char *sweep_file = NULL, *tsv_file = NULL;
    int floors = 1;
    unsigned long long sweep_max = 1ull << 30;
    int rounds = 1, tcp_variants = 0;
    char tlist[64] = "unix,tcp,shm";
    char *sargs[MAX_ARGS], *wargs[MAX_ARGS];
    int nsargs = 0, nwargs = 0;
    for (int i = 1; i < argc; i += 2) { /* every option takes a value */
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
        else if (!strcmp(a, "--tcp-variants"))
            tcp_variants = atoi(v) > 0;
        else if (!strcmp(a, "--sweep"))
            sweep_file = v;
        else if (!strcmp(a, "--tsv"))
            tsv_file = v;
        else if (!strcmp(a, "--floors")) {
            if (strcmp(v, "0") && strcmp(v, "1"))
                die("--floors %s: want 0 or 1", v);
            floors = *v == '1';
        }
        else if (!strcmp(a, "--rounds")) {
            if ((rounds = atoi(v)) < 1 || rounds > 100)
                die("--rounds %s: want 1 to 100", v);
        }
        else if (!strcmp(a, "--cpus")) {
            char why[200], msg[400];
            if (!cpus_parse(v, why, sizeof why)) {
                snprintf(msg, sizeof msg, "--cpus %s: %s", v, why);
                die("%s", msg);
            }
        }
        else if (!strcmp(a, "--sweep-max")) {
            if ((sweep_max = parse_size(v)) < 4096)
                die("--sweep-max %s: want a size of at least 4K (K/M/G suffixes)", v);
        }
        else
            die("unknown option %s (see the header of bench/bench.c)", a);
    }
    if (!worker || !server || !stub_dir)
        die("%s", "usage: apigen-bench --worker PROG --server SERVER --native-dir DIR --stub-dir DIR "
                  "[--transports unix,tcp,shm] [--server-arg A]... [--worker-arg A]... "
                  "[--sweep FILE [--sweep-max SIZE]] [--rounds N] [--cpus GUEST:SERVER] "
                  "[--tsv FILE] [--floors 0|1] [--tcp-variants 1]");
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

    if (sweep_file) {
        /* guest buffer, its frames, the server's copy and the device's: keep
         * the largest size well inside what the machine has free */
        unsigned long long cap = mem_available() / 8, p = 4096;
        if (!cap)
            cap = sweep_max; /* no /proc/meminfo: as asked */
        while (p * 2 <= sweep_max && p * 2 <= cap)
            p *= 2;
        if (p < sweep_max)
            fprintf(stderr, "apigen-bench: sweep up to %llu MiB (%s)\n", p >> 20,
                    p * 2 <= sweep_max ? "an eighth of MemAvailable" : "a power of two");
        char b[32];
        snprintf(b, sizeof b, "%llu", p);
        setenv("BENCH_SWEEP", "1", 1);
        setenv("BENCH_SWEEP_MAX", b, 1);
    }

    for (int t = 0; t < nt; t++)
        floor_us[t] = raw_gbps[t][0] = raw_gbps[t][1] = -1;
    for (int round = 1; round <= rounds; round++) {
        if (rounds > 1)
            fprintf(stderr, "apigen-bench: round %d of %d\n", round, rounds);
        one_round(dir, wargv, server, sargs, nsargs, native_dir, stub_dir, floors && !sweep_file);
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "apigen-bench: could not remove %s\n", dir);

    if (sweep_file) {
        write_sweep(sweep_file, worker);
        return 0;
    }

    if (tsv_file)
        write_tsv(tsv_file);
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
    if (raw_floor_us > 0) { /* in the shm column */
        printf("%-34s %-6s %10s", "plain-C shared-memory rings (64 B)", "us", "-");
        for (int t = 0; t < nt; t++)
            printf(" %10s %7s", strcmp(tnames[t], "shm") ? "" : fmt_v(raw_floor_us, b, sizeof b), "");
        printf("\n");
    }
    for (int d = 0; d < 2; d++) {
        int any = 0;
        for (int t = 0; t < nt; t++)
            any |= raw_gbps[t][d] > 0;
        if (!any)
            continue;
        char what[64];
        snprintf(what, sizeof what, "plain-C stream, %zu MiB %s", copy_bytes() >> 20, d ? "down" : "up");
        printf("%-34s %-6s %10s", what, "GB/s", "-");
        for (int t = 0; t < nt; t++)
            printf(" %10s %7s", raw_gbps[t][d] > 0 ? fmt_v(raw_gbps[t][d], b, sizeof b) : "", "");
        printf("\n");
    }
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
                {
                    printf("sync call over %s: %.3f us = %.2fx its transport floor (%.3f us)", tnames[t],
                           ms[i].v[1 + t], ms[i].v[1 + t] / floor_us[t], floor_us[t]);
                    if (!strcmp(tnames[t], "shm") && raw_floor_us > 0)
                        printf(", %.2fx plain-C rings (%.3f us)", ms[i].v[1 + t] / raw_floor_us,
                               raw_floor_us);
                    printf("\n");
                }
    for (int i = 0; i < nms; i++) { /* bulk copies against the plain stream of their direction */
        int d = !strncmp(ms[i].name, "copy_h2d", 8) ? 0 : !strncmp(ms[i].name, "copy_d2h", 8) ? 1 : -1;
        for (int t = 0; d >= 0 && t < nt; t++)
            if (ms[i].v[1 + t] > 0 && raw_gbps[t][d] > 0)
                printf("%s over %s: %.3f GB/s = %.2fx a plain-C %s stream (%.3f GB/s)\n", ms[i].desc,
                       tnames[t], ms[i].v[1 + t], ms[i].v[1 + t] / raw_gbps[t][d], tnames[t],
                       raw_gbps[t][d]);
    }
    printf("speed: native time / forwarded time (latencies) or forwarded / native (rates); 1.00x = native");
    if (rounds > 1)
        printf("; each cell the best of %d rounds", rounds);
    printf("\n");
    if (tcp_variants)
        print_tcp_variants(rounds);
    return 0;
}
