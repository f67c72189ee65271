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
