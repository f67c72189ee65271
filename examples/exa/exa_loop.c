/* exa_loop: keeps calling the exa API for a while, for failure tests.
 *
 *   exa_loop [SECONDS]
 *
 * Prints "ready" once set up, then loops over writes, reads, launches and
 * exaFinish for SECONDS (default 10). If a call fails (the server went
 * away), it prints that status, checks that later calls fail promptly with
 * the same status instead of hanging or crashing, and exits with 1.
 * Exit 0: the time ran out with every call successful; 2: wrong results. */
#define _POSIX_C_SOURCE 200809L

#include "exa.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int after_failure(exaStatus first, exaContext ctx, exaBuffer buf)
{
    printf("first error: %s\n", exaStatusString(first));
    double t0 = now_s();
    int count = 0;
    exaStatus st[4];
    st[0] = exaGetDeviceCount(&count);
    st[1] = exaFinish(ctx);
    st[2] = exaReleaseBuffer(buf);
    st[3] = exaDestroyContext(ctx);
    double dt = now_s() - t0;
    for (int i = 0; i < 4; i++)
        printf("later call %d: %s\n", i, exaStatusString(st[i]));
    printf("later calls took %s\n", dt < 2.0 ? "less than 2 s" : "TOO LONG");
    fflush(stdout);
    return 1;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 10.0;
    enum { N = 256 };
    float v[N], out[N];
    exaContext ctx = NULL;
    exaBuffer buf = NULL;
    void *dev = NULL;
    exaStatus st;

    if ((st = exaCreateContext(0, "loop", &ctx)) != EXA_SUCCESS ||
        (st = exaCreateBuffer(ctx, sizeof v, &buf)) != EXA_SUCCESS ||
        (st = exaMalloc(&dev, sizeof v)) != EXA_SUCCESS)
        return after_failure(st, ctx, buf);
    printf("ready\n");
    fflush(stdout);

    double end = now_s() + seconds;
    unsigned long iter = 0;
    while (now_s() < end) {
        for (int i = 0; i < N; i++)
            v[i] = (float)(iter + (unsigned long)i);
        double sum = 0;
        if ((st = exaWriteBuffer(buf, 0, sizeof v, v)) != EXA_SUCCESS ||
            (st = exaReadBuffer(buf, 0, sizeof out, out)) != EXA_SUCCESS ||
            (st = exaLaunchFill(ctx, dev, 1.0f, N)) != EXA_SUCCESS ||
            (st = exaFinish(ctx)) != EXA_SUCCESS ||
            (st = exaReduceSum(ctx, dev, N, &sum)) != EXA_SUCCESS)
            return after_failure(st, ctx, buf);
        if (memcmp(v, out, sizeof v) != 0 || sum != (double)N) {
            printf("wrong results at iteration %lu\n", iter);
            return 2;
        }
        iter++;
    }
    printf("no error in %.0f s\n", seconds);
    if (exaFree(dev) != EXA_SUCCESS || exaReleaseBuffer(buf) != EXA_SUCCESS ||
        exaDestroyContext(ctx) != EXA_SUCCESS)
        return 2;
    return 0;
}
