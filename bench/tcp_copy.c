/* bench/tcp_copy.c: large cudaMemcpy bandwidth next to the plain-C socket
 * stream of the same size, measured in the same run (issue 16, item 3).
 *
 *   tcp_copy [MIB ...]           (default: 64 256)
 *
 * Natively it times the real runtime; run with the cudart stub first on
 * LD_LIBRARY_PATH and APIGEN_SERVER set (bench/tcp-copy.sh does both) it
 * times the forwarded copies, over whatever transport the URL names. Per
 * size: the plain-C stream up and down (bench/raw_stream.c: loopback tcp,
 * or a unix socket when APIGEN_SERVER is unix://), then cudaMemcpy H2D and
 * D2H from pageable (malloc) and pinned (cudaMallocHost) memory, each the
 * best of TCP_COPY_ROUNDS (default 3) after one warm-up, with its ratio to
 * the stream of its direction. The data is incompressible (xorshift), and
 * what comes back is compared with what went (a wrong byte: exit 1). Also
 * the small calls whose latency bulk changes must not worsen: a 4-byte
 * cudaMemcpy each way. TCP_COPY_CONNS=K (default 4) adds the stream split
 * over K connections (what a bulk side channel could give at best).
 * TCP_COPY_PEER_CPUS (a CPU list, "3" or "2-3") pins
 * the stream's far end like the server; pin this program with taskset.
 * Prints numbers only: no timing is ever asserted. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "raw_stream.h"

#define CK(x)                                                                                     \
    do {                                                                                          \
        cudaError_t e_ = (x);                                                                     \
        if (e_ != cudaSuccess) {                                                                  \
            fprintf(stderr, "tcp_copy: %s:%d: %s: %s\n", __FILE__, __LINE__, #x,                  \
                    cudaGetErrorString(e_));                                                      \
            exit(1);                                                                              \
        }                                                                                         \
    } while (0)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void fill_random(void *p, size_t n, uint64_t seed)
{
    uint64_t x = seed | 1, *w = p;
    for (size_t i = 0; i < n / 8; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        w[i] = x;
    }
}

/* The far end of the plain-C stream where the server runs (TCP_COPY_PEER_CPUS). */
static void pin_peer(void)
{
    const char *s = getenv("TCP_COPY_PEER_CPUS");
    if (!s || !*s)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    int a, b, k;
    for (const char *p = s; *p;) {
        if (sscanf(p, "%d%n", &a, &k) != 1)
            return;
        p += k;
        b = a;
        if (*p == '-' && sscanf(p + 1, "%d%n", &b, &k) == 1)
            p += 1 + k;
        for (int i = a; i <= b && i < CPU_SETSIZE; i++)
            CPU_SET(i, &set);
        if (*p == ',')
            p++;
        else if (*p)
            return;
    }
    (void)sched_setaffinity(0, sizeof set, &set);
}

static int rounds_ = 3;

/* Best GB/s of rounds_ cudaMemcpy calls after one warm-up. */
static double copy_gbps(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind)
{
    double best = 0;
    for (int r = 0; r <= rounds_; r++) {
        double t0 = now_s();
        CK(cudaMemcpy(dst, src, n, kind));
        double g = (double)n / (now_s() - t0) / 1e9;
        if (r && g > best)
            best = g;
    }
    return best;
}

static int bad_ = 0;

/* Up from host, back into a cleared buffer, compared. */
static void check_round_trip(char *host, char *back, void *dev, size_t n, const char *what)
{
    memset(back, 0, n);
    CK(cudaMemcpy(dev, host, n, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(back, dev, n, cudaMemcpyDeviceToHost));
    if (memcmp(host, back, n)) {
        size_t i = 0;
        while (host[i] == back[i])
            i++;
        printf("DATA DIFFERS (%s, %zu bytes): first wrong byte at %zu\n", what, n, i);
        bad_ = 1;
    }
}

static void row(const char *what, double g, double raw)
{
    if (raw > 0)
        printf("%-44s %8.3f GB/s  %5.2fx the plain-C stream (%.3f)\n", what, g, g / raw, raw);
    else
        printf("%-44s %8.3f GB/s\n", what, g);
}

int main(int argc, char **argv)
{
    size_t mib[8] = {64, 256};
    int nsize = 2;
    if (argc > 1) {
        nsize = 0;
        for (int i = 1; i < argc && nsize < 8; i++) {
            long v = strtol(argv[i], NULL, 10);
            if (v <= 0 || v > 4096) {
                fprintf(stderr, "tcp_copy: size %s: MiB from 1 to 4096 expected\n", argv[i]);
                return 2;
            }
            mib[nsize++] = (size_t)v;
        }
    }
    const char *r = getenv("TCP_COPY_ROUNDS");
    if (r && atoi(r) > 0)
        rounds_ = atoi(r);
    const char *url = getenv("APIGEN_SERVER");
    raw_stream_opts ro = {!(url && !strncmp(url, "unix:", 5)), 1, 0, 0};
    printf("tcp_copy: %s, plain-C %s stream, best of %d\n", url ? url : "native",
           ro.tcp ? "tcp" : "unix", rounds_);
    size_t maxn = 0;
    for (int i = 0; i < nsize; i++)
        if (mib[i] << 20 > maxn)
            maxn = mib[i] << 20;
    /* TCP_COPY_ONLY=h2d|d2h: that pageable copy of the first size, rounds
     * times, and nothing else (for perf or strace) */
    const char *only = getenv("TCP_COPY_ONLY");
    if (only && *only) {
        int h2d = !strcmp(only, "h2d");
        size_t n = mib[0] << 20;
        char *buf = malloc(n);
        void *d = NULL;
        if (!buf)
            return 1;
        fill_random(buf, n, 1);
        CK(cudaMalloc(&d, n));
        if (!h2d) /* the device memory written once: D2H copies what a program wrote */
            CK(cudaMemcpy(d, buf, n, cudaMemcpyHostToDevice));
        double g = h2d ? copy_gbps(d, buf, n, cudaMemcpyHostToDevice)
                       : copy_gbps(buf, d, n, cudaMemcpyDeviceToHost);
        printf("cudaMemcpy %s, pageable, %zu MiB: %.3f GB/s\n", h2d ? "H2D" : "D2H", mib[0], g);
        return 0;
    }
    /* the streams first: no runtime threads yet when it forks its far end */
    double up[8], down[8], kup[8] = {0}, kdown[8] = {0};
    /* TCP_COPY_CONNS=K (default 4; 0 or 1: none): the same stream split over
     * K connections, a thread each side: what several connections could
     * give a bulk copy at best on this machine */
    const char *kc = getenv("TCP_COPY_CONNS");
    raw_stream_opts rk = ro;
    rk.conns = kc ? atoi(kc) : 4;
    for (int i = 0; i < nsize; i++) {
        up[i] = raw_stream_gbps(&ro, 1, mib[i] << 20, rounds_, pin_peer);
        down[i] = raw_stream_gbps(&ro, 0, mib[i] << 20, rounds_, pin_peer);
        if (rk.conns > 1) {
            kup[i] = raw_stream_gbps(&rk, 1, mib[i] << 20, rounds_, pin_peer);
            kdown[i] = raw_stream_gbps(&rk, 0, mib[i] << 20, rounds_, pin_peer);
        }
    }
    char *host = malloc(maxn), *back = malloc(maxn), *pinned = NULL;
    void *dev = NULL;
    if (!host || !back) {
        fprintf(stderr, "tcp_copy: out of memory for two %zu MiB buffers\n", maxn >> 20);
        return 1;
    }
    fill_random(host, maxn, 0x9e3779b97f4a7c15ull);
    memset(back, 0, maxn);
    CK(cudaMalloc(&dev, maxn));
    CK(cudaMallocHost((void **)&pinned, maxn));
    fill_random(pinned, maxn, 0x2545f4914f6cdd1dull);

    /* small calls: what the bulk path must not slow down */
    {
        void *d4 = NULL;
        int v = 7, w = 0;
        enum { N = 2000 };
        CK(cudaMalloc(&d4, 4096));
        for (int k = 0; k < 2; k++) {
            double t0 = now_s();
            for (int j = 0; j < N; j++)
                CK(cudaMemcpy(d4, &v, sizeof v, cudaMemcpyHostToDevice));
            double t1 = now_s();
            for (int j = 0; j < N; j++)
                CK(cudaMemcpy(&w, d4, sizeof w, cudaMemcpyDeviceToHost));
            double t2 = now_s();
            if (k)
                printf("4-byte cudaMemcpy H2D / D2H: %.2f / %.2f us\n", (t1 - t0) / N * 1e6,
                       (t2 - t1) / N * 1e6);
        }
        if (w != v) {
            printf("DATA DIFFERS (4-byte copy): %d came back for %d\n", w, v);
            bad_ = 1;
        }
        CK(cudaFree(d4));
    }
    for (int i = 0; i < nsize; i++) {
        size_t n = mib[i] << 20;
        char what[96];
        printf("-- %zu MiB\n", mib[i]);
        row("plain-C stream up", up[i], 0);
        row("plain-C stream down", down[i], 0);
        if (rk.conns > 1) {
            snprintf(what, sizeof what, "plain-C stream up, %d connections", rk.conns);
            row(what, kup[i], up[i]);
            snprintf(what, sizeof what, "plain-C stream down, %d connections", rk.conns);
            row(what, kdown[i], down[i]);
        }
        snprintf(what, sizeof what, "cudaMemcpy H2D, pageable");
        row(what, copy_gbps(dev, host, n, cudaMemcpyHostToDevice), up[i]);
        snprintf(what, sizeof what, "cudaMemcpy D2H, pageable");
        row(what, copy_gbps(back, dev, n, cudaMemcpyDeviceToHost), down[i]);
        snprintf(what, sizeof what, "cudaMemcpy H2D, cudaMallocHost");
        row(what, copy_gbps(dev, pinned, n, cudaMemcpyHostToDevice), up[i]);
        snprintf(what, sizeof what, "cudaMemcpy D2H, cudaMallocHost");
        row(what, copy_gbps(pinned, dev, n, cudaMemcpyDeviceToHost), down[i]);
        check_round_trip(host, back, dev, n, "pageable");
    }
    printf("data: %s\n", bad_ ? "DIFFERS" : "identical");
    CK(cudaFreeHost(pinned));
    CK(cudaFree(dev));
    free(host);
    free(back);
    return bad_;
}
