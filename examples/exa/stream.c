/* exa_stream: copies of sizes around the streaming chunk (specs/exa.yaml
 * streams exaMemcpy, exaWriteBuffer and exaReadBuffer of 1 MiB or more in
 * 1 MiB chunks), for the streamed-copy tests.
 *
 *   exa_stream
 *
 * For each size (0, 1, chunk - 1, chunk, chunk + 1, several chunks + a
 * tail) it copies a pattern to the device and back with exaMemcpy, and
 * through a buffer object at an odd offset, checks the bytes and the guard
 * bytes around them, and prints one checksum line; then the errors of
 * streamed-size copies (past the end of an allocation or a buffer, a
 * released buffer) and that the memory around them is unchanged. The
 * transcript is the same natively and forwarded. Exit 2: wrong bytes. */
#include "exa.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK ((size_t)1 << 20)

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

static int wrong(const char *what, size_t n)
{
    printf("%s of %zu bytes: wrong bytes\n", what, n);
    return 2;
}

/* One size: device round trip and buffer round trip. 0: fine, 2: wrong bytes. */
static int round_trip(exaContext ctx, size_t n, uint64_t seed)
{
    const size_t off = 4093, pad = 64;
    unsigned char *src = malloc(n + 2 * pad), *dst = malloc(n + 2 * pad);
    void *dev = NULL;
    exaBuffer buf = NULL;
    exaStatus m1, m2, w, r;
    int rc = 0;
    if (!src || !dst)
        exit(3);
    fill(src, n + 2 * pad, seed);
    memset(dst, 0xee, n + 2 * pad);
    exaStatus a = exaMalloc(&dev, n ? n : 1);
    m1 = exaMemcpy(dev, src + pad, n, EXA_COPY_HOST_TO_DEVICE);
    m2 = exaMemcpy(dst + pad, dev, n, EXA_COPY_DEVICE_TO_HOST);
    if (memcmp(src + pad, dst + pad, n) != 0 || dst[pad - 1] != 0xee || dst[pad + n] != 0xee)
        rc = wrong("exaMemcpy", n);
    uint64_t h1 = fnv(dst, n + 2 * pad);
    memset(dst, 0xee, n + 2 * pad);
    exaStatus b = exaCreateBuffer(ctx, n + off + 7, &buf);
    w = exaWriteBuffer(buf, off, n, src + pad + 3);
    r = exaReadBuffer(buf, off, n, dst + pad);
    if (memcmp(src + pad + 3, dst + pad, n) != 0 || dst[pad - 1] != 0xee || dst[pad + n] != 0xee)
        rc = wrong("exaWriteBuffer/exaReadBuffer", n);
    printf("%9zu bytes: malloc %s, memcpy %s/%s %016llx, buffer %s, write %s, read %s %016llx\n", n,
           exaStatusString(a), exaStatusString(m1), exaStatusString(m2), (unsigned long long)h1,
           exaStatusString(b), exaStatusString(w), exaStatusString(r),
           (unsigned long long)fnv(dst, n + 2 * pad));
    exaReleaseBuffer(buf);
    exaFree(dev);
    free(src);
    free(dst);
    return rc;
}

int main(void)
{
    exaContext ctx = NULL;
    exaStatus st = exaCreateContext(0, "stream", &ctx);
    if (st != EXA_SUCCESS) {
        printf("exaCreateContext: %s\n", exaStatusString(st));
        return 1;
    }
    const size_t sizes[] = {0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 12345};
    int rc = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (round_trip(ctx, sizes[i], i + 1))
            rc = 2;

    /* errors of streamed sizes: nothing is copied, the caller's bytes stay */
    size_t n = 2 * CHUNK + 1;
    unsigned char *host = malloc(n), *keep = malloc(n);
    void *dev = NULL;
    exaBuffer buf = NULL;
    if (!host || !keep)
        return 3;
    fill(host, n, 99);
    memcpy(keep, host, n);
    printf("exaMalloc(2 MiB): %s\n", exaStatusString(exaMalloc(&dev, 2 * CHUNK)));
    printf("exaMemcpy H2D 2 MiB + 1 into 2 MiB: %s\n",
           exaStatusString(exaMemcpy(dev, host, n, EXA_COPY_HOST_TO_DEVICE)));
    printf("exaMemcpy D2H 2 MiB + 1 from 2 MiB: %s\n",
           exaStatusString(exaMemcpy(host, dev, n, EXA_COPY_DEVICE_TO_HOST)));
    printf("exaMemcpy D2H 2 MiB from 1 byte in: %s\n",
           exaStatusString(exaMemcpy(host, (char *)dev + 1, 2 * CHUNK, EXA_COPY_DEVICE_TO_HOST)));
    printf("  host bytes %s\n", memcmp(host, keep, n) ? "CHANGED" : "unchanged");
    printf("exaCreateBuffer(2 MiB): %s\n", exaStatusString(exaCreateBuffer(ctx, 2 * CHUNK, &buf)));
    printf("exaWriteBuffer 2 MiB + 1: %s\n", exaStatusString(exaWriteBuffer(buf, 0, n, host)));
    printf("exaWriteBuffer 2 MiB at 1: %s\n", exaStatusString(exaWriteBuffer(buf, 1, 2 * CHUNK, host)));
    printf("exaReadBuffer 2 MiB + 1: %s\n", exaStatusString(exaReadBuffer(buf, 0, n, host)));
    printf("exaReadBuffer 1 MiB at 1 MiB + 1: %s\n",
           exaStatusString(exaReadBuffer(buf, CHUNK + 1, CHUNK, host)));
    printf("  host bytes %s\n", memcmp(host, keep, n) ? "CHANGED" : "unchanged");
    printf("exaReleaseBuffer: %s\n", exaStatusString(exaReleaseBuffer(buf)));
    printf("exaWriteBuffer 2 MiB, released buffer: %s\n",
           exaStatusString(exaWriteBuffer(buf, 0, 2 * CHUNK, host)));
    printf("exaReadBuffer 2 MiB, released buffer: %s\n",
           exaStatusString(exaReadBuffer(buf, 0, 2 * CHUNK, host)));
    printf("  host bytes %s\n", memcmp(host, keep, n) ? "CHANGED" : "unchanged");
    /* a streamed copy right after errors: the framing is intact */
    fill(host, 2 * CHUNK, 7);
    memset(keep, 0, n);
    printf("exaMemcpy H2D 2 MiB: %s\n",
           exaStatusString(exaMemcpy(dev, host, 2 * CHUNK, EXA_COPY_HOST_TO_DEVICE)));
    printf("exaMemcpy D2H 2 MiB: %s\n",
           exaStatusString(exaMemcpy(keep, dev, 2 * CHUNK, EXA_COPY_DEVICE_TO_HOST)));
    printf("  round trip %s\n", memcmp(host, keep, 2 * CHUNK) ? "DIFFERENT" : "equal");
    printf("exaFree: %s\n", exaStatusString(exaFree(dev)));
    printf("exaDestroyContext: %s\n", exaStatusString(exaDestroyContext(ctx)));
    free(host);
    free(keep);
    printf("done\n");
    return rc;
}
