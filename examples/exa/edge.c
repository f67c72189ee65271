/* exa_edge: corner cases of the exa API (NULL pointers, empty sizes, long
 * strings, big transfers, handle arrays), one status line each. Like the
 * demo, its transcript must be the same natively and forwarded.
 *
 * Left out on purpose, because forwarding changes them by design:
 * argument errors of asynchronous calls that the guest cannot see (natively
 * immediate; forwarded they surface at the next synchronous call and in
 * exaGetLastError: --async-errors, --last-error) and sizes over the server's
 * per-call limit (forwarded: EXA_ERROR_OUT_OF_MEMORY before the real library sees them). */
#define _POSIX_C_SOURCE 200809L

#include "exa.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_bad;

static void show(const char *what, exaStatus got, exaStatus want)
{
    printf("%-58s %s%s\n", what, exaStatusString(got), got == want ? "" : "  <-- UNEXPECTED");
    if (got != want)
        g_bad = 1;
}
#define T(call, want) show(#call, (call), (want))

/* exa_edge --async-errors: an asynchronous call with a bad argument. Natively
 * it fails at once; forwarded, one the guest queued (a destroyed context)
 * returns EXA_SUCCESS and its error comes back from the next synchronous call
 * (spec: errors.async: next_call), one it does not queue (a NULL context,
 * which the server refuses) fails at once. Prints the statuses, one per
 * line, for tests/e2e to check either way. */
static int async_errors(void)
{
    exaContext ctx = NULL, dead = NULL;
    int count = 0;
    if (exaCreateContext(0, "async", &ctx) != EXA_SUCCESS ||
        exaCreateContext(0, "dead", &dead) != EXA_SUCCESS || exaDestroyContext(dead) != EXA_SUCCESS)
        return 2;
    printf("launch on a destroyed context: %s\n",
           exaStatusString(exaLaunchFill(dead, NULL, 1.0f, 4)));
    printf("next synchronous call: %s\n", exaStatusString(exaGetDeviceCount(&count)));
    printf("the one after: %s\n", exaStatusString(exaGetDeviceCount(&count)));
    printf("async write, blocking=0, no source: %s\n",
           exaStatusString(exaEnqueueWrite(NULL, 0, 0, 0, NULL)));
    printf("next synchronous call: %s\n", exaStatusString(exaFinish(ctx)));
    printf("the one after: %s\n", exaStatusString(exaFinish(ctx)));
    return exaDestroyContext(ctx) == EXA_SUCCESS ? 0 : 2;
}

/* exa_edge --last-error: the thread's last error (exaGetLastError reads and
 * clears it, exaPeekAtLastError reads it) with async calls in between.
 * Forwarded, an async call the guest cannot vouch for (a context handle no
 * session gave out) runs synchronously and fails at the call as natively;
 * one the server refuses later (a destroyed context) returns success and
 * its error is the thread's last error, in order with the library's own. */
static int last_error(void)
{
    exaContext ctx = NULL, dead = NULL, forged = (exaContext)(uintptr_t)0x1234;
    int count = 0;
    if (exaCreateContext(0, "last", &ctx) != EXA_SUCCESS ||
        exaCreateContext(0, "dead", &dead) != EXA_SUCCESS || exaDestroyContext(dead) != EXA_SUCCESS)
        return 2;
#define P(what, call) printf("%s: %s\n", what, exaStatusString(call))
    P("start: get", exaGetLastError());
    P("launch on a forged context", exaLaunchFill(forged, NULL, 1.0f, 4));
    P("peek", exaPeekAtLastError());
    P("get", exaGetLastError());
    P("get again", exaGetLastError());
    P("launch on a destroyed context", exaLaunchFill(dead, NULL, 1.0f, 4));
    P("peek", exaPeekAtLastError());
    P("peek again", exaPeekAtLastError());
    P("get", exaGetLastError());
    P("get again", exaGetLastError());
    P("next synchronous call", exaGetDeviceCount(&count));
    P("launch on a destroyed context", exaLaunchFill(dead, NULL, 1.0f, 4));
    /* forwarded, a kept answer (spec `cache:`) is the query's own: the
     * launch's error waits for the next call that reaches the server */
    P("the device count again", exaGetDeviceCount(&count));
    P("next synchronous call", exaFinish(ctx));
    P("get", exaGetLastError());
    P("get again", exaGetLastError());
    P("launch on a destroyed context", exaLaunchFill(dead, NULL, 1.0f, 4));
    P("library error (no such device)", exaCreateContext(99, "x", &dead));
    P("get (the library's is newer)", exaGetLastError());
    P("get again", exaGetLastError());
    P("next synchronous call", exaGetDeviceCount(&count));
#undef P
    return exaDestroyContext(ctx) == EXA_SUCCESS ? 0 : 2;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--async-errors") == 0)
        return async_errors();
    if (argc > 1 && strcmp(argv[1], "--last-error") == 0)
        return last_error();

    exaContext ctx = NULL, ctx2 = NULL;
    exaBuffer b = NULL, c = NULL;
    void *dev = NULL;
    float host[64];
    char name[16];
    size_t len = 0;
    int minor = 0;
    double sum = 0;
    memset(host, 0, sizeof host);

    printf("== NULL and empty arguments\n");
    T(exaGetVersion(NULL, &minor), EXA_ERROR_INVALID_VALUE);
    T(exaGetDeviceCount(NULL), EXA_ERROR_INVALID_VALUE);
    exaDeviceInfo info;
    memset(&info, 0, sizeof info);
    T(exaGetDeviceInfo(-1, &info), EXA_ERROR_INVALID_VALUE);
    T(exaCreateContext(0, "x", NULL), EXA_ERROR_INVALID_VALUE);
    T(exaCreateContext(0, NULL, &ctx), EXA_SUCCESS);
    T(exaGetContextName(ctx, name, sizeof name, &len), EXA_SUCCESS);
    printf("  default name \"%s\", length %zu\n", name, len);
    T(exaGetContextName(ctx, name, sizeof name, NULL), EXA_SUCCESS);
    printf("  without length: \"%s\"\n", name);
    len = 0;
    T(exaGetContextName(ctx, NULL, sizeof name, &len), EXA_SUCCESS);
    printf("  without name: length %zu\n", len);
    T(exaGetContextName(ctx, NULL, 0, NULL), EXA_SUCCESS);
    T(exaCreateBuffer(ctx, 0, &b), EXA_ERROR_INVALID_VALUE);
    T(exaCreateBuffer(ctx, sizeof host, NULL), EXA_ERROR_INVALID_VALUE);
    T(exaCreateBuffer(ctx, sizeof host, &b), EXA_SUCCESS);
    T(exaCreateBuffer(ctx, sizeof host, &c), EXA_SUCCESS);
    T(exaGetBufferSize(b, NULL), EXA_ERROR_INVALID_VALUE);
    T(exaWriteBuffer(b, 0, 0, NULL), EXA_SUCCESS);
    T(exaReadBuffer(b, 0, 0, NULL), EXA_SUCCESS);
    T(exaWriteBuffer(b, sizeof host, 0, host), EXA_SUCCESS);
    T(exaWriteBuffer(b, sizeof host + 1, 0, host), EXA_ERROR_OUT_OF_RANGE);
    T(exaSumBuffers(b, NULL, 2, 4), EXA_ERROR_INVALID_VALUE);
    T(exaSumBuffers(b, NULL, 0, 4), EXA_SUCCESS);
    T(exaReadBuffer(b, 0, sizeof host, host), EXA_SUCCESS);
    printf("  sum of no buffers: %g %g %g %g\n", (double)host[0], (double)host[1],
           (double)host[2], (double)host[3]);
    T(exaMalloc(NULL, 16), EXA_ERROR_INVALID_VALUE);
    T(exaMalloc(&dev, 0), EXA_ERROR_INVALID_VALUE);
    T(exaFree(NULL), EXA_SUCCESS);
    T(exaMalloc(&dev, sizeof host), EXA_SUCCESS);
    T(exaMemcpy(NULL, host, 16, EXA_COPY_HOST_TO_DEVICE), EXA_ERROR_INVALID_VALUE);
    T(exaMemcpy(dev, host, 0, EXA_COPY_HOST_TO_DEVICE), EXA_SUCCESS);
    T(exaMemcpy(dev, dev, 16, EXA_COPY_DEVICE_TO_DEVICE), EXA_SUCCESS);
    T(exaReduceSum(ctx, dev, 4, NULL), EXA_ERROR_INVALID_VALUE);
    T(exaReduceSum(ctx, NULL, 0, &sum), EXA_SUCCESS);
    T(exaReduceSum(ctx, NULL, 4, &sum), EXA_ERROR_INVALID_VALUE);
    T(exaSetNotify(ctx, NULL, host), EXA_SUCCESS);
    T(exaDestroyContext(NULL), EXA_ERROR_INVALID_HANDLE);
    T(exaReleaseBuffer(NULL), EXA_ERROR_INVALID_HANDLE);

    printf("== property lists\n");
    const int64_t unknown[] = {99, 1, 0};
    const int64_t empty[] = {0};
    const int64_t devonly[] = {EXA_PROP_DEVICE, 1, EXA_PROP_END};
    const int64_t badlimit[] = {EXA_PROP_MEMORY_LIMIT, -5, EXA_PROP_END};
    T(exaCreateContextWithProperties(unknown, &ctx2), EXA_ERROR_INVALID_VALUE);
    T(exaCreateContextWithProperties(badlimit, &ctx2), EXA_ERROR_INVALID_VALUE);
    T(exaCreateContextWithProperties(empty, &ctx2), EXA_SUCCESS);
    T(exaGetContextName(ctx2, name, sizeof name, &len), EXA_SUCCESS);
    printf("  \"%s\"\n", name);
    T(exaDestroyContext(ctx2), EXA_SUCCESS);
    T(exaCreateContextWithProperties(devonly, &ctx2), EXA_SUCCESS);
    T(exaGetContextName(ctx2, name, sizeof name, &len), EXA_SUCCESS);
    printf("  \"%s\"\n", name);
    T(exaDestroyContext(ctx2), EXA_SUCCESS);
    T(exaDestroyContext(ctx2), EXA_ERROR_INVALID_HANDLE);

    printf("== long strings and big transfers\n");
    {
        enum { L = 5000 };
        char *longname = malloc(L + 1), *back = malloc(L + 1);
        for (int i = 0; i < L; i++)
            longname[i] = (char)('a' + i % 26);
        longname[L] = '\0';
        T(exaCreateContext(1, longname, &ctx2), EXA_SUCCESS);
        memset(back, 0, L + 1);
        T(exaGetContextName(ctx2, back, L + 1, &len), EXA_SUCCESS);
        printf("  name of %zu bytes comes back %s\n", len, strcmp(back, longname) ? "DIFFERENT" : "equal");
        T(exaGetContextName(ctx2, back, 3, &len), EXA_SUCCESS);
        printf("  in 3 bytes: \"%s\"\n", back);
        T(exaDestroyContext(ctx2), EXA_SUCCESS);
        free(longname);
        free(back);
    }
    {
        size_t n = (size_t)8 << 20; /* 8M floats, 32 MiB */
        float *big = malloc(n * sizeof(float)), *again = malloc(n * sizeof(float));
        void *d = NULL;
        exaBuffer bb = NULL;
        for (size_t i = 0; i < n; i++)
            big[i] = (float)(i % 1000);
        T(exaMalloc(&d, n * sizeof(float)), EXA_SUCCESS);
        T(exaMemcpy(d, big, n * sizeof(float), EXA_COPY_HOST_TO_DEVICE), EXA_SUCCESS);
        T(exaReduceSum(ctx, d, n, &sum), EXA_SUCCESS);
        printf("  sum of 32 MiB: %.1f\n", sum);
        memset(again, 0, n * sizeof(float));
        T(exaMemcpy(again, d, n * sizeof(float), EXA_COPY_DEVICE_TO_HOST), EXA_SUCCESS);
        printf("  32 MiB round trip %s\n", memcmp(big, again, n * sizeof(float)) ? "DIFFERENT" : "equal");
        T(exaCreateBuffer(ctx, n * sizeof(float), &bb), EXA_SUCCESS);
        T(exaEnqueueWrite(bb, 0, 0, n * sizeof(float), big), EXA_SUCCESS);
        memset(again, 0, n * sizeof(float));
        T(exaReadBuffer(bb, 0, n * sizeof(float), again), EXA_SUCCESS);
        printf("  32 MiB queued write and read %s\n",
               memcmp(big, again, n * sizeof(float)) ? "DIFFERENT" : "equal");
        T(exaReleaseBuffer(bb), EXA_SUCCESS);
        T(exaFree(d), EXA_SUCCESS);
        free(big);
        free(again);
    }

    printf("== handle arrays\n");
    {
        enum { K = 100 };
        exaBuffer many[K];
        for (int i = 0; i < 4; i++)
            host[i] = 1.0f;
        T(exaWriteBuffer(c, 0, 4 * sizeof(float), host), EXA_SUCCESS);
        for (int i = 0; i < K; i++)
            many[i] = c;
        T(exaSumBuffers(b, many, K, 4), EXA_SUCCESS);
        T(exaReadBuffer(b, 0, 4 * sizeof(float), host), EXA_SUCCESS);
        printf("  sum of %d handles: %g\n", K, (double)host[0]);
        many[K - 1] = (exaBuffer)(uintptr_t)12345;
        T(exaSumBuffers(b, many, K, 4), EXA_ERROR_INVALID_HANDLE);
        many[K - 1] = NULL;
        T(exaSumBuffers(b, many, K, 4), EXA_ERROR_INVALID_HANDLE);
        many[K - 1] = b; /* dst among the sources */
        T(exaSumBuffers(b, many, K, 1), EXA_SUCCESS);
        T(exaReadBuffer(b, 0, sizeof(float), host), EXA_SUCCESS);
        printf("  with itself: %g\n", (double)host[0]);
    }

    printf("== cleanup\n");
    T(exaFree(dev), EXA_SUCCESS);
    T(exaReleaseBuffer(b), EXA_SUCCESS);
    T(exaReleaseBuffer(c), EXA_SUCCESS);
    T(exaDestroyContext(ctx), EXA_SUCCESS);
    printf("%s\n", g_bad ? "UNEXPECTED RESULTS" : "all as expected");
    return g_bad;
}
