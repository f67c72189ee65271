/* One program over two APIs of one family (exa and exb): objects made
 * through one are used through the other, natively or through both stubs
 * (one session). Prints what it sees; tests/family/family.sh compares the
 * native and the forwarded output.
 *   family all            every case below, in order
 *   family create         prints a buffer's handle value (then exits)
 *   family use HEX        exbDescribe of another process's handle value
 *   family exa-only       exa calls, then one exb call (its status)
 *   family exb-first      the same with an exb call first */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exb.h"

static int failures;

#define CHECK(what, got, want)                                                               \
    do {                                                                                     \
        int g_ = (int)(got), w_ = (int)(want);                                               \
        printf("%-48s %d%s\n", what, g_, g_ == w_ ? "" : "  <-- unexpected");                \
        if (g_ != w_)                                                                        \
            failures++;                                                                      \
    } while (0)

static exaContext make_ctx(void)
{
    exaContext ctx = NULL;
    CHECK("exaCreateContext", exaCreateContext(0, "family", &ctx), EXA_SUCCESS);
    return ctx;
}

static exaBuffer make_buffer(exaContext ctx, size_t n, unsigned char seed)
{
    exaBuffer b = NULL;
    unsigned char data[256];
    for (size_t i = 0; i < n && i < sizeof data; i++)
        data[i] = (unsigned char)(seed + i);
    CHECK("exaCreateBuffer", exaCreateBuffer(ctx, n, &b), EXA_SUCCESS);
    CHECK("exaWriteBuffer", exaWriteBuffer(b, 0, n, data), EXA_SUCCESS);
    return b;
}

static void all(void)
{
    char text[64];
    exaContext ctx = make_ctx();

    /* made through exa, used through exb */
    exaBuffer a = make_buffer(ctx, 64, 1);
    CHECK("exbDescribe(exa buffer)", exbDescribe(ctx, a, text, sizeof text), EXB_SUCCESS);
    printf("  %s\n", text);

    /* made through exb, used through exa */
    exaBuffer b = NULL;
    size_t n = 0;
    unsigned char back[64];
    CHECK("exbCreateBufferLike", exbCreateBufferLike(ctx, a, &b), EXB_SUCCESS);
    CHECK("exaGetBufferSize(exb buffer)", exaGetBufferSize(b, &n), EXA_SUCCESS);
    CHECK("  its size", n, 64);
    CHECK("exaReadBuffer(exb buffer)", exaReadBuffer(b, 0, sizeof back, back), EXA_SUCCESS);
    CHECK("  its byte 10", back[10], 11);

    /* one thread's calls of both APIs in order: an async exa call, then a
     * sync exb call that must see its effect */
    unsigned char ones[64];
    memset(ones, 1, sizeof ones);
    CHECK("exaEnqueueWrite(non-blocking)", exaEnqueueWrite(a, 0, 0, sizeof ones, ones), EXA_SUCCESS);
    CHECK("exbDescribe after it", exbDescribe(ctx, a, text, sizeof text), EXB_SUCCESS);
    printf("  %s\n", text);
    void *dev = NULL;
    double sum = 0;
    CHECK("exaMalloc", exaMalloc(&dev, 1024 * sizeof(float)), EXA_SUCCESS);
    for (int round = 1; round <= 3; round++) {
        CHECK("exaLaunchFill(async)", exaLaunchFill(ctx, dev, 0.5f * (float)round, 1024), EXA_SUCCESS);
        CHECK("exbSumDevice(exa device memory)", exbSumDevice(ctx, dev, 1024, &sum), EXB_SUCCESS);
        printf("  sum %.1f\n", sum);
    }

    /* a handle of one type where another is taken: each API's own error */
    CHECK("exbDescribe(context as buffer)", exbDescribe(ctx, (exaBuffer)ctx, text, sizeof text),
          EXB_ERROR_INVALID_HANDLE);
    CHECK("exbCreateBufferLike(buffer as context)", exbCreateBufferLike((exaContext)a, a, &b),
          EXB_ERROR_INVALID_HANDLE);
    CHECK("exbSumDevice(address of no allocation)",
          exbSumDevice(ctx, (const void *)(uintptr_t)0x1000, 4, &sum), EXB_ERROR_INVALID_VALUE);

    /* released through one, gone through the other */
    CHECK("exbReleaseBuffer(exa buffer)", exbReleaseBuffer(a), EXB_SUCCESS);
    CHECK("exaGetBufferSize(released)", exaGetBufferSize(a, &n), EXA_ERROR_INVALID_HANDLE);
    CHECK("exaReleaseBuffer(exb buffer)", exaReleaseBuffer(b), EXA_SUCCESS);
    CHECK("exbDescribe(released)", exbDescribe(ctx, b, text, sizeof text), EXB_ERROR_INVALID_HANDLE);
    CHECK("exaFree", exaFree(dev), EXA_SUCCESS);
    CHECK("exaDestroyContext", exaDestroyContext(ctx), EXA_SUCCESS);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "all";
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (strcmp(mode, "all") == 0) {
        all();
    } else if (strcmp(mode, "create") == 0) {
        exaContext ctx = NULL;
        exaBuffer b = NULL;
        if (exaCreateContext(0, "family", &ctx) != EXA_SUCCESS || exaCreateBuffer(ctx, 16, &b) != EXA_SUCCESS)
            return 1;
        printf("%" PRIxPTR "\n", (uintptr_t)b);
        return 0;
    } else if (strcmp(mode, "use") == 0 && argc > 2) {
        /* another process's buffer: never this process's object */
        exaContext ctx = make_ctx();
        char text[64];
        exaBuffer b = (exaBuffer)(uintptr_t)strtoull(argv[2], NULL, 16);
        CHECK("exbDescribe(another process's buffer)", exbDescribe(ctx, b, text, sizeof text),
              EXB_ERROR_INVALID_HANDLE);
    } else if (strcmp(mode, "exa-only") == 0 || strcmp(mode, "exb-first") == 0) {
        int v = 0;
        if (mode[2] == 'b') /* exb's call comes first: it cannot open the session */
            printf("exbGetVersion %d\n", (int)exbGetVersion(&v));
        exaContext ctx = make_ctx();
        exaBuffer a = make_buffer(ctx, 16, 3);
        size_t n = 0;
        CHECK("exaGetBufferSize", exaGetBufferSize(a, &n), EXA_SUCCESS);
        printf("exbGetVersion %d\n", (int)exbGetVersion(&v));
        CHECK("exaGetBufferSize again", exaGetBufferSize(a, &n), EXA_SUCCESS);
    } else {
        fprintf(stderr, "usage: %s all|create|use HEX|exa-only|exb-first\n", argv[0]);
        return 2;
    }
    printf("%s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}
