/* apigen-trace-model: a guest's trace (APIGEN_TRACE=FILE) summarised into
 * calls, round trips and bytes each way, and the program's time predicted
 * on another network.
 *
 *   apigen-trace-model TRACE [--on RTT_US,GBIT_S] [--at RTT_US,GBIT_S]...
 *
 * It reads the guest's "apigen wire [pid]: rt NAME up=N down=M wait_us=W
 * t_us=T" lines (one per round trip: the bytes sent since the thread's last
 * one, async frames included, and those received) and its "apigen trace"
 * lines (one per call; "[cached, ..." ones were answered in the guest);
 * server lines and anything else are skipped.
 *
 * The model: the span of the trace (the first round trip's request to the
 * last one's reply) is time
 * spent computing (application and server, C) plus, per round trip, the
 * network's round-trip time, plus the bytes each way at its bandwidth:
 *     span = C + trips * rtt + (up + down) / bandwidth
 * --on names the network the trace was taken on (a loopback transport's
 * ping-pong floor and bulk bandwidth, as apigen-bench prints them), which
 * gives C; each --at (default 50,25 and 200,10: 50 us at 25 Gb/s, 200 us
 * at 10 Gb/s) then gets C + its own wire time. Without --on, C is the span
 * less nothing: an upper bound. Bandwidth in Gb/s (bits): 1 GB/s = 8 Gb/s.
 * One thread's calls are in sequence; several threads' round trips that
 * overlap are counted as if they did not (the prediction errs long). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_AT 16
#define MAX_NAMES 512

typedef struct net {
    double rtt_us, gbit;
} net;

typedef struct name_count {
    char name[64];
    uint64_t trips, up, down;
} name_count;

static name_count names[MAX_NAMES];
static int nnames;

static name_count *name_of(const char *n, size_t len)
{
    if (len >= sizeof names[0].name)
        len = sizeof names[0].name - 1;
    for (int i = 0; i < nnames; i++)
        if (strlen(names[i].name) == len && !memcmp(names[i].name, n, len))
            return &names[i];
    if (nnames == MAX_NAMES)
        return NULL;
    memcpy(names[nnames].name, n, len);
    names[nnames].name[len] = 0;
    return &names[nnames++];
}

static int by_trips(const void *a, const void *b)
{
    const name_count *x = a, *y = b;
    return x->trips < y->trips ? 1 : x->trips > y->trips ? -1 : strcmp(x->name, y->name);
}

static int parse_net(const char *v, net *n)
{
    char *end;
    n->rtt_us = strtod(v, &end);
    if (*end != ',' || n->rtt_us < 0)
        return -1;
    n->gbit = strtod(end + 1, &end);
    return *end || n->gbit <= 0 ? -1 : 0;
}

/* seconds on the wire: trips round trips, then the bytes at the bandwidth */
static double wire_s(const net *n, uint64_t trips, uint64_t bytes)
{
    return (double)trips * n->rtt_us * 1e-6 + (double)bytes * 8 / (n->gbit * 1e9);
}

/* The text after a call's trace prefix, "apigen[guest PID NAME] trace: "
 * (or the older "apigen trace [PID]: "); NULL for any other line. */
static const char *trace_text(const char *line)
{
    const char *p;
    if (!strncmp(line, "apigen[", 7) && (p = strstr(line, "] trace: ")))
        return p + 9;
    if (!strncmp(line, "apigen trace [", 14) && (p = strstr(line, "]: ")))
        return p + 3;
    return NULL;
}

static uint64_t field(const char *line, const char *key)
{
    const char *p = strstr(line, key);
    return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    net on = {0, 0}, at[MAX_AT];
    int have_on = 0, nat = 0;
    for (int i = 1; i < argc; i++) {
        if ((!strcmp(argv[i], "--on") || !strcmp(argv[i], "--at")) && i + 1 < argc) {
            net n;
            if (parse_net(argv[i + 1], &n)) {
                fprintf(stderr, "apigen-trace-model: %s %s: want RTT_US,GBIT_S (e.g. 50,25)\n", argv[i],
                        argv[i + 1]);
                return 2;
            }
            if (!strcmp(argv[i], "--on")) {
                on = n;
                have_on = 1;
            } else if (nat < MAX_AT) {
                at[nat++] = n;
            }
            i++;
        } else if (!path && argv[i][0] != '-') {
            path = argv[i];
        } else {
            fprintf(stderr, "usage: apigen-trace-model TRACE [--on RTT_US,GBIT_S] [--at RTT_US,GBIT_S]...\n");
            return 2;
        }
    }
    if (!path) {
        fprintf(stderr, "usage: apigen-trace-model TRACE [--on RTT_US,GBIT_S] [--at RTT_US,GBIT_S]...\n");
        return 2;
    }
    if (!nat) {
        at[nat++] = (net){50, 25};
        at[nat++] = (net){200, 10};
    }
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return 2;
    }
    uint64_t calls = 0, cached = 0, trips = 0, up = 0, down = 0, wait_us = 0, t0 = 0, t1 = 0;
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        const char *p;
        const char *t = trace_text(line);
        if (t && strncmp(t, "server: ", 8)) {
            calls++;
            cached += strstr(line, "[cached, ") != NULL;
        } else if (!strncmp(line, "apigen wire [", 13) && (p = strstr(line, "]: rt "))) {
            p += 6;
            size_t len = strcspn(p, " \n");
            uint64_t u = field(line, " up="), d = field(line, " down="), t = field(line, " t_us="),
                     w = field(line, " wait_us="), from = t > w ? t - w : 0;
            trips++;
            up += u;
            down += d;
            wait_us += w;
            if (!t0 || from < t0) /* from the first round trip's request */
                t0 = from;
            if (t > t1)
                t1 = t;
            name_count *nc = name_of(p, len);
            if (nc) {
                nc->trips++;
                nc->up += u;
                nc->down += d;
            }
        }
    }
    fclose(f);
    double span = (double)(t1 - t0) * 1e-6;
    printf("trace %s\n", path);
    printf("calls: %llu (answered in the guest: %llu)\n", (unsigned long long)calls, (unsigned long long)cached);
    printf("round trips: %llu\n", (unsigned long long)trips);
    printf("bytes up: %llu\nbytes down: %llu\n", (unsigned long long)up, (unsigned long long)down);
    printf("span: %.3f ms (first request to last reply); waiting for replies: %.3f ms\n", span * 1e3,
           (double)wait_us * 1e-3);
    qsort(names, (size_t)nnames, sizeof names[0], by_trips);
    printf("%-40s %10s %14s %14s\n", "round trips by call", "trips", "bytes up", "bytes down");
    for (int i = 0; i < nnames && i < 15; i++)
        printf("%-40.40s %10llu %14llu %14llu\n", names[i].name, (unsigned long long)names[i].trips,
               (unsigned long long)names[i].up, (unsigned long long)names[i].down);
    double compute = span;
    if (have_on) {
        compute = span - wire_s(&on, trips, up + down);
        if (compute < 0)
            compute = 0;
        printf("taken on rtt %.2f us, %.2f Gb/s: compute %.3f ms + wire %.3f ms\n", on.rtt_us, on.gbit,
               compute * 1e3, (span - compute) * 1e3);
    } else {
        printf("no --on: compute taken as the whole span (an upper bound)\n");
    }
    printf("%-28s %12s %12s %12s\n", "predicted at", "wire ms", "total ms", "x span");
    for (int i = 0; i < nat; i++) {
        char what[64];
        snprintf(what, sizeof what, "%.2f us, %.2f Gb/s", at[i].rtt_us, at[i].gbit);
        double w = wire_s(&at[i], trips, up + down);
        printf("%-28s %12.3f %12.3f %12.2f\n", what, w * 1e3, (compute + w) * 1e3,
               span > 0 ? (compute + w) / span : 0);
    }
    return 0;
}
