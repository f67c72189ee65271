/* Shared by the bench workers: a clock and the one-line metric format that
 * apigen-bench reads (name|unit|lo/hi|value|description). Workers print
 * nothing else on stdout. */
#ifndef APIGEN_BENCH_WORKER_H
#define APIGEN_BENCH_WORKER_H

#if !defined(_POSIX_C_SOURCE) && !defined(__cplusplus)
#define _POSIX_C_SOURCE 200809L
#endif

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline double bw_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline void bw_report(const char *name, const char *unit, const char *better, double v,
                             const char *desc)
{
    printf("%s|%s|%s|%.6f|%s\n", name, unit, better, v, desc);
    fflush(stdout);
}

/* BENCH_COPY_MB (default 256): the size of the large copies. */
static inline size_t bw_copy_bytes(void)
{
    const char *e = getenv("BENCH_COPY_MB");
    long mb = e && *e ? atol(e) : 256;
    return (size_t)(mb > 0 ? mb : 256) << 20;
}

/* Copy bandwidth against size (apigen-bench --sweep sets BENCH_SWEEP=1 and
 * BENCH_SWEEP_MAX=bytes for the worker, which then runs only its sweeps).
 * Sizes 4 KiB, 8 KiB, ... up to the max; each size is copied until about
 * 32 MiB moved (at least once), best of 3. One line per size:
 *     sweep|SERIES|BYTES|GB/s                                                 */
static inline int bw_sweep_on(void)
{
    const char *e = getenv("BENCH_SWEEP");
    return e && *e && *e != '0';
}

static inline size_t bw_sweep_max(void)
{
    const char *e = getenv("BENCH_SWEEP_MAX");
    unsigned long long v = e && *e ? strtoull(e, NULL, 10) : 0;
    return v >= 4096 ? (size_t)v : (size_t)1 << 30;
}

typedef int (*bw_copy_fn)(void *user, size_t bytes); /* one copy; nonzero: it failed */

static inline void bw_sweep(const char *series, size_t max, bw_copy_fn copy, void *user)
{
    for (size_t n = 4096; n <= max; n *= 2) {
        size_t reps = ((size_t)32 << 20) / n;
        if (!reps)
            reps = 1;
        double best = 1e30;
        int failed = copy(user, n); /* warm: first touch, registration, buffers */
        for (int r = 0; r < 3 && !failed; r++) {
            double t0 = bw_now();
            for (size_t i = 0; i < reps && !failed; i++)
                failed = copy(user, n);
            double d = bw_now() - t0;
            if (d < best)
                best = d;
        }
        if (failed) {
            fprintf(stderr, "sweep %s: a copy of %zu bytes failed; series ends here\n", series, n);
            return;
        }
        printf("sweep|%s|%zu|%.6f\n", series, n, (double)n * (double)reps / best / 1e9);
        fflush(stdout);
    }
}

/* Best of `rounds` runs of a timed block (the fastest is the least disturbed). */
#define BW_BEST(rounds, best, ...)                                                               \
    do {                                                                                           \
        best = 1e30;                                                                               \
        for (int r_ = 0; r_ < (rounds); r_++) {                                                    \
            double t0_ = bw_now();                                                                 \
            __VA_ARGS__;                                                                           \
            double d_ = bw_now() - t0_;                                                            \
            if (d_ < best)                                                                         \
                best = d_;                                                                         \
        }                                                                                          \
    } while (0)

#endif
