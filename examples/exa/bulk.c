/* exa_bulk: large copies both ways, for the bulk-data tests.
 *
 *   exa_bulk [MIB] [SECONDS] [fill-first]
 *
 * Copies MIB (default 8) MiB of a pattern to the device and back with
 * exaMemcpy, through a buffer object with exaWriteBuffer / exaReadBuffer at
 * an odd offset, and with a non-blocking exaEnqueueWrite, and prints one
 * checksum per copy: the transcript is the same natively and forwarded. With
 * SECONDS, it prints "ready" and repeats the copies for that long (a test
 * kills a peer meanwhile); a failing call prints "first error: STATUS", the
 * status of one later call, and exits 1. Exit 2: wrong bytes. With
 * fill-first, the new allocation is first filled on the device and read
 * back at once (a launch, then a large read right after the allocation: the
 * pattern of a program's first result; over tcp the reply's bulk may come
 * while the lanes the allocation opened ahead are still joining). */
#define _POSIX_C_SOURCE 200809L

#include "exa.h"

#include <stdint.h>
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

static uint64_t fnv(const unsigned char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static void fill(unsigned char *p, size_t n, uint64_t seed)
{
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        p[i] = (unsigned char)x;
    }
}

static unsigned char *src, *dst;

static int failed(exaStatus st)
{
    free(src);
    free(dst);
    printf("first error: %s\n", exaStatusString(st));
    double t0 = now_s();
    int count = 0;
    exaStatus later = exaGetDeviceCount(&count);
    printf("later call: %s (%s)\n", exaStatusString(later),
           now_s() - t0 < 2.0 ? "less than 2 s" : "TOO LONG");
    fflush(stdout);
    return 1;
}

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? (size_t)atoi(argv[1]) : 8;
    double seconds = argc > 2 ? atof(argv[2]) : 0;
    size_t n = mib << 20, off = 4093, part = n - off - 777;
    src = malloc(n);
    dst = malloc(n);
    void *dev = NULL;
    exaContext ctx = NULL;
    exaBuffer buf = NULL;
    exaStatus st;
    if (!src || !dst || n == 0)
        return 3;
    if ((st = exaCreateContext(0, "bulk", &ctx)) != EXA_SUCCESS ||
        (st = exaCreateBuffer(ctx, n, &buf)) != EXA_SUCCESS ||
        (st = exaMalloc(&dev, n)) != EXA_SUCCESS)
        return failed(st);
    if (argc > 3 && strcmp(argv[3], "fill-first") == 0) {
        if ((st = exaLaunchFill(ctx, dev, 1.5f, n / sizeof(float))) != EXA_SUCCESS ||
            (st = exaMemcpy(dst, dev, n, EXA_COPY_DEVICE_TO_HOST)) != EXA_SUCCESS)
            return failed(st);
        printf("%zu MiB filled with 1.5 on the device, read back at once: %016llx\n", mib,
               (unsigned long long)fnv(dst, n));
    }
    if (seconds > 0) {
        printf("ready\n");
        fflush(stdout);
    }
    double end = now_s() + seconds;
    for (unsigned long iter = 0;; iter++) {
        fill(src, n, iter);
        memset(dst, 0xee, n);
        if ((st = exaMemcpy(dev, src, n, EXA_COPY_HOST_TO_DEVICE)) != EXA_SUCCESS ||
            (st = exaMemcpy(dst, dev, n, EXA_COPY_DEVICE_TO_HOST)) != EXA_SUCCESS)
            return failed(st);
        if (memcmp(src, dst, n) != 0) {
            printf("exaMemcpy: wrong bytes at iteration %lu\n", iter);
            return 2;
        }
        uint64_t h1 = fnv(dst, n);
        memset(dst, 0xee, n);
        if ((st = exaWriteBuffer(buf, off, part, src + 11)) != EXA_SUCCESS ||
            (st = exaReadBuffer(buf, off, part, dst + 5)) != EXA_SUCCESS)
            return failed(st);
        if (memcmp(src + 11, dst + 5, part) != 0 || dst[4] != 0xee || dst[5 + part] != 0xee) {
            printf("exaWriteBuffer/exaReadBuffer: wrong bytes at iteration %lu\n", iter);
            return 2;
        }
        uint64_t h2 = fnv(dst, n);
        fill(src, n, iter + 1000);
        if ((st = exaEnqueueWrite(buf, 0, 0, n, src)) != EXA_SUCCESS)
            return failed(st);
        fill(src, n, 7); /* the write above must have taken its bytes already */
        if ((st = exaFinish(ctx)) != EXA_SUCCESS ||
            (st = exaReadBuffer(buf, 0, n, dst)) != EXA_SUCCESS)
            return failed(st);
        fill(src, n, iter + 1000);
        if (memcmp(src, dst, n) != 0) {
            printf("exaEnqueueWrite: wrong bytes at iteration %lu\n", iter);
            return 2;
        }
        if (seconds <= 0) {
            printf("%zu MiB: memcpy %016llx, buffer %016llx, enqueue %016llx\n", mib,
                   (unsigned long long)h1, (unsigned long long)h2,
                   (unsigned long long)fnv(dst, n));
            break;
        }
        if (now_s() >= end) {
            printf("no error in %.0f s\n", seconds);
            break;
        }
    }
    if ((st = exaFree(dev)) != EXA_SUCCESS || (st = exaReleaseBuffer(buf)) != EXA_SUCCESS ||
        (st = exaDestroyContext(ctx)) != EXA_SUCCESS)
        return failed(st);
    free(src);
    free(dst);
    printf("done\n");
    return 0;
}
