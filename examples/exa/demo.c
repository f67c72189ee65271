/* exa demo: uses the whole exa API and prints a deterministic transcript.
 *
 * The transcript is the same whether libexa.so.1 is the real library or
 * apigen's stub forwarding to a server (tests/e2e compares them byte for
 * byte), so it prints values, names and status names, never addresses or
 * timings. Callbacks are recorded and printed after they have all arrived:
 * forwarded, they come from another thread some time after exaFinish. */
#define _POSIX_C_SOURCE 200809L

#include "exa.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CALLBACK_TIMEOUT_MS 5000

static const char *S(exaStatus st)
{
    return exaStatusString(st);
}

/* An unexpected status ends the program with its name and exit status 2. */
static void check(exaStatus st, const char *what, int line)
{
    if (st != EXA_SUCCESS) {
        printf("FAILED (line %d): %s: %s\n", line, what, S(st));
        fflush(stdout);
        exit(2);
    }
}
#define CHECK(call) check((call), #call, __LINE__)

/* A call expected to fail with `want`: prints what it got. */
static void expect(exaStatus got, exaStatus want, const char *what, int line)
{
    printf("%s -> %s\n", what, S(got));
    if (got != want) {
        printf("FAILED (line %d): expected %s\n", line, S(want));
        fflush(stdout);
        exit(2);
    }
}
#define EXPECT(call, want) expect((call), (want), #call, __LINE__)

/* ---- callback recording ------------------------------------------------- */

typedef struct event_rec {
    exaContext ctx;
    exaEvent event;
    int32_t value;
} event_rec;

typedef struct notes {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned n;
    event_rec e[64];
} notes;

static void notes_init(notes *nt)
{
    pthread_mutex_init(&nt->mu, NULL);
    pthread_cond_init(&nt->cv, NULL);
    nt->n = 0;
}

static void on_notify(exaContext ctx, exaEvent event, int32_t value, void *user_data)
{
    notes *nt = user_data;
    pthread_mutex_lock(&nt->mu);
    if (nt->n < 64)
        nt->e[nt->n] = (event_rec){ctx, event, value};
    nt->n++;
    pthread_cond_broadcast(&nt->cv);
    pthread_mutex_unlock(&nt->mu);
}

/* Waits until `want` events in all have arrived; false on timeout. */
static bool notes_wait(notes *nt, unsigned want)
{
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += CALLBACK_TIMEOUT_MS / 1000;
    dl.tv_nsec += (long)(CALLBACK_TIMEOUT_MS % 1000) * 1000000L;
    if (dl.tv_nsec >= 1000000000L) {
        dl.tv_sec++;
        dl.tv_nsec -= 1000000000L;
    }
    bool ok = true;
    pthread_mutex_lock(&nt->mu);
    while (nt->n < want && ok)
        ok = pthread_cond_timedwait(&nt->cv, &nt->mu, &dl) == 0 || nt->n >= want;
    ok = nt->n >= want;
    pthread_mutex_unlock(&nt->mu);
    return ok;
}

/* Prints events [from, to) after waiting for them. */
static void notes_print(notes *nt, unsigned from, unsigned to, exaContext expect_ctx)
{
    if (!notes_wait(nt, to)) {
        pthread_mutex_lock(&nt->mu);
        printf("callback: timed out waiting for event %u (have %u)\n", to, nt->n);
        pthread_mutex_unlock(&nt->mu);
        return;
    }
    pthread_mutex_lock(&nt->mu);
    for (unsigned i = from; i < to && i < 64; i++) {
        const event_rec *r = &nt->e[i];
        if (r->event == EXA_EVENT_FINISHED)
            printf("callback %u: FINISHED, %d items, context %s\n", i, (int)r->value,
                   r->ctx == expect_ctx ? "matches" : "DIFFERS");
        else if (r->event == EXA_EVENT_ERROR)
            printf("callback %u: ERROR %s, context %s\n", i, S((exaStatus)r->value),
                   r->ctx == expect_ctx ? "matches" : "DIFFERS");
        else
            printf("callback %u: unknown event %d\n", i, (int)r->event);
    }
    pthread_mutex_unlock(&nt->mu);
}

/* ---- helpers --------------------------------------------------------------- */

static void print_floats(const char *label, const float *v, size_t n)
{
    printf("%s:", label);
    for (size_t i = 0; i < n; i++)
        printf(" %g", (double)v[i]);
    printf("\n");
}

static void *dev_offset(void *base, size_t floats)
{
    return (char *)base + floats * sizeof(float);
}

/* ---- two threads, each with a context of its own -------------------------- */

typedef struct worker {
    int index;
    notes nt;
    char out[1024];
    size_t len;
    int failed;
} worker;

static void wprint(worker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void wprint(worker *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(w->out + w->len, sizeof w->out - w->len, fmt, ap);
    va_end(ap);
    if (n > 0 && (size_t)n < sizeof w->out - w->len)
        w->len += (size_t)n;
}

#define WCHECK(w, call)                                                                  \
    do {                                                                                 \
        exaStatus st_ = (call);                                                          \
        if (st_ != EXA_SUCCESS) {                                                        \
            wprint((w), "  FAILED: %s: %s\n", #call, S(st_));                            \
            (w)->failed = 1;                                                             \
            return NULL;                                                                 \
        }                                                                                \
    } while (0)

static void *worker_main(void *arg)
{
    worker *w = arg;
    enum { N = 256, ROUNDS = 20 };
    char name[32];
    exaContext ctx;
    void *x, *y;
    snprintf(name, sizeof name, "worker%d", w->index);
    WCHECK(w, exaCreateContext(w->index % 2, name, &ctx));
    WCHECK(w, exaSetNotify(ctx, on_notify, &w->nt));
    WCHECK(w, exaMalloc(&x, N * sizeof(float)));
    WCHECK(w, exaMalloc(&y, N * sizeof(float)));
    exaDim3 grid = {(uint32_t)(w->index + 1), 1, 1};
    double total = 0;
    for (int r = 0; r < ROUNDS; r++) {
        double sum;
        WCHECK(w, exaLaunchFill(ctx, x, (float)(w->index + 1), N));
        WCHECK(w, exaLaunchFill(ctx, y, (float)r, N));
        WCHECK(w, exaLaunchSaxpy(ctx, grid, 2.0f, x, y, N));
        WCHECK(w, exaReduceSum(ctx, y, N, &sum));
        total += sum;
    }
    WCHECK(w, exaFinish(ctx));
    char got[32];
    size_t len = 0;
    WCHECK(w, exaGetContextName(ctx, got, sizeof got, &len));
    bool ok = notes_wait(&w->nt, 1);
    pthread_mutex_lock(&w->nt.mu);
    int32_t finished = ok ? w->nt.e[0].value : -1;
    bool same = ok && w->nt.e[0].ctx == ctx && w->nt.e[0].event == EXA_EVENT_FINISHED;
    pthread_mutex_unlock(&w->nt.mu);
    wprint(w, "  %s (length %zu): total of %d rounds %.1f\n", got, len, (int)ROUNDS, total);
    if (ok)
        wprint(w, "  finished event with %d items, context %s\n", (int)finished,
               same ? "matches" : "DIFFERS");
    else
        wprint(w, "  callback: timed out\n");
    WCHECK(w, exaFree(x));
    WCHECK(w, exaFree(y));
    WCHECK(w, exaSetNotify(ctx, NULL, NULL));
    WCHECK(w, exaDestroyContext(ctx));
    return NULL;
}

int main(void)
{
    int major = 0, minor = 0, ndev = 0;
    setvbuf(stdout, NULL, _IOLBF, 0);

    printf("== library\n");
    CHECK(exaGetVersion(&major, &minor));
    printf("exa version %d.%d (header %d.%d)\n", major, minor, EXA_VERSION_MAJOR,
           EXA_VERSION_MINOR);
    CHECK(exaGetDeviceCount(&ndev));
    printf("devices: %d\n", ndev);
    for (int d = 0; d < ndev; d++) {
        exaDeviceInfo info;
        memset(&info, 0, sizeof info);
        CHECK(exaGetDeviceInfo(d, &info));
        printf("device %d: %s, %u units, %u threads, %llu bytes, %.2f GHz, index %d\n", d,
               info.name, info.compute_units, info.max_threads,
               (unsigned long long)info.memory_bytes, info.clock_ghz, (int)info.device_index);
    }
    {
        exaDeviceInfo info;
        EXPECT(exaGetDeviceInfo(ndev + 3, &info), EXA_ERROR_INVALID_VALUE);
    }
    for (int s = 0; s <= 8; s++)
        printf("status %d: %s\n", s, S((exaStatus)s));

    printf("== contexts\n");
    exaContext ctx;
    char name[64];
    size_t len = 0;
    CHECK(exaCreateContext(0, "main context", &ctx));
    CHECK(exaGetContextName(ctx, name, sizeof name, &len));
    printf("name \"%s\", length %zu\n", name, len);
    memset(name, 'x', sizeof name);
    CHECK(exaGetContextName(ctx, name, 5, &len));
    printf("name in 5 bytes \"%s\", length %zu\n", name, len);
    len = 0;
    CHECK(exaGetContextName(ctx, NULL, 0, &len));
    printf("length only: %zu\n", len);
    EXPECT(exaCreateContext(7, "nowhere", &(exaContext){0}), EXA_ERROR_INVALID_VALUE);

    exaContext pctx, dctx;
    const int64_t props[] = {EXA_PROP_DEVICE, 1, EXA_PROP_PRIORITY, 3, EXA_PROP_MEMORY_LIMIT,
                             256, EXA_PROP_END};
    CHECK(exaCreateContextWithProperties(props, &pctx));
    CHECK(exaGetContextName(pctx, name, sizeof name, &len));
    printf("properties context: \"%s\"\n", name);
    CHECK(exaCreateContextWithProperties(NULL, &dctx));
    CHECK(exaGetContextName(dctx, name, sizeof name, &len));
    printf("default properties context: \"%s\"\n", name);
    const int64_t bad_props[] = {EXA_PROP_PRIORITY, 9, EXA_PROP_END};
    EXPECT(exaCreateContextWithProperties(bad_props, &(exaContext){0}), EXA_ERROR_INVALID_VALUE);
    {
        exaBuffer big, more;
        CHECK(exaCreateBuffer(pctx, 200, &big));
        EXPECT(exaCreateBuffer(pctx, 100, &more), EXA_ERROR_OUT_OF_MEMORY);
        CHECK(exaReleaseBuffer(big));
        CHECK(exaCreateBuffer(pctx, 100, &more));
        CHECK(exaReleaseBuffer(more));
    }
    CHECK(exaDestroyContext(pctx));
    CHECK(exaDestroyContext(dctx));

    notes nt;
    notes_init(&nt);
    CHECK(exaSetNotify(ctx, on_notify, &nt));
    unsigned seen = 0;

    printf("== buffers\n");
    enum { NF = 16 };
    exaBuffer b1, b2, b3;
    float v[NF], out[NF];
    size_t size = 0;
    CHECK(exaCreateBuffer(ctx, NF * sizeof(float), &b1));
    CHECK(exaCreateBuffer(ctx, NF * sizeof(float), &b2));
    CHECK(exaCreateBuffer(ctx, NF * sizeof(float), &b3));
    CHECK(exaGetBufferSize(b1, &size));
    printf("buffer size %zu\n", size);
    for (int i = 0; i < NF; i++)
        v[i] = (float)i;
    CHECK(exaWriteBuffer(b1, 0, sizeof v, v));
    CHECK(exaReadBuffer(b1, 0, sizeof out, out));
    print_floats("b1", out, NF);
    for (int i = 0; i < NF; i++)
        v[i] = 1.5f;
    CHECK(exaEnqueueWrite(b2, 0, 0, sizeof v, v)); /* queued: runs before the read */
    for (int i = 0; i < 4; i++)
        v[i] = -2.0f;
    CHECK(exaEnqueueWrite(b2, 1, 4 * sizeof(float), 4 * sizeof(float), v));
    CHECK(exaReadBuffer(b2, 0, sizeof out, out));
    print_floats("b2", out, NF);
    exaBuffer srcs[3] = {b1, b2, b1};
    CHECK(exaSumBuffers(b3, srcs, 3, NF));
    CHECK(exaReadBuffer(b3, 0, sizeof out, out));
    print_floats("b3 = b1 + b2 + b1", out, NF);
    EXPECT(exaSumBuffers(b3, srcs, 3, NF + 1), EXA_ERROR_OUT_OF_RANGE);
    CHECK(exaReadBuffer(b1, 8 * sizeof(float), 2 * sizeof(float), out));
    print_floats("b1[8..9]", out, 2);

    printf("== errors\n");
    /* on stderr, where forwarding logs its refusals, and not in the
     * transcript that must be the same natively and forwarded */
    fflush(stdout);
    fprintf(stderr, "exa_demo: the error cases that follow fail on purpose; forwarded, the "
                    "'rejected: ...' and 'not supported' lines logged for them are expected\n");
    for (int i = 0; i < NF; i++)
        out[i] = 42.0f;
    EXPECT(exaReadBuffer(b1, 15 * sizeof(float), 2 * sizeof(float), out),
           EXA_ERROR_OUT_OF_RANGE);
    printf("destination after the failed read: %s\n",
           out[0] == 42.0f && out[1] == 42.0f ? "untouched" : "MODIFIED");
    EXPECT(exaWriteBuffer(b1, (size_t)-8, 16, v), EXA_ERROR_OUT_OF_RANGE);
    EXPECT(exaDestroyContext(ctx), EXA_ERROR_BUSY);
    CHECK(exaReleaseBuffer(b3));
    EXPECT(exaGetBufferSize(b3, &size), EXA_ERROR_INVALID_HANDLE);
    EXPECT(exaReleaseBuffer(b3), EXA_ERROR_INVALID_HANDLE);
    exaBuffer stale[2] = {b1, b3};
    EXPECT(exaSumBuffers(b2, stale, 2, NF), EXA_ERROR_INVALID_HANDLE);
    EXPECT(exaFinish(NULL), EXA_ERROR_INVALID_HANDLE);

    printf("== device memory and kernels\n");
    enum { N = 1024 };
    static float host[N];
    void *x, *y;
    double sum = 0;
    CHECK(exaMalloc(&x, N * sizeof(float)));
    CHECK(exaMalloc(&y, N * sizeof(float)));
    for (int i = 0; i < N; i++)
        host[i] = (float)i * 0.5f;
    CHECK(exaMemcpy(x, host, sizeof host, EXA_COPY_HOST_TO_DEVICE));
    for (int i = 0; i < N; i++)
        host[i] = 1.0f;
    CHECK(exaMemcpy(y, host, sizeof host, EXA_COPY_HOST_TO_DEVICE));
    CHECK(exaLaunchFill(ctx, dev_offset(y, N / 2), 2.0f, N / 2));
    CHECK(exaLaunchSaxpy(ctx, (exaDim3){4, 1, 1}, 2.0f, x, y, N));
    CHECK(exaFinish(ctx));
    notes_print(&nt, seen, seen + 1, ctx);
    seen += 1;
    CHECK(exaReduceSum(ctx, y, N, &sum));
    printf("sum(y) = %.1f\n", sum);
    CHECK(exaReduceSum(ctx, dev_offset(y, N / 2), N / 2, &sum));
    printf("sum(y[512..]) = %.1f\n", sum);
    CHECK(exaMemcpy(host, y, 4 * sizeof(float), EXA_COPY_DEVICE_TO_HOST));
    print_floats("y[0..3]", host, 4);
    CHECK(exaMemcpy(host, dev_offset(y, N - 4), 4 * sizeof(float), EXA_COPY_DEVICE_TO_HOST));
    print_floats("y[1020..1023]", host, 4);
    CHECK(exaMemcpy(dev_offset(x, 8), y, 4 * sizeof(float), EXA_COPY_DEVICE_TO_DEVICE));
    CHECK(exaMemcpy(host, dev_offset(x, 6), 8 * sizeof(float), EXA_COPY_DEVICE_TO_HOST));
    print_floats("x[6..13] after a device copy", host, 8);
    EXPECT(exaMemcpy(dev_offset(x, N - 4), host, 8 * sizeof(float), EXA_COPY_HOST_TO_DEVICE),
           EXA_ERROR_OUT_OF_RANGE);
    EXPECT(exaMemcpy(x, y, 4, (exaCopyKind)9), EXA_ERROR_INVALID_VALUE);

    printf("== asynchronous errors\n");
    CHECK(exaLaunchFill(ctx, dev_offset(x, N - 24), 0.0f, 100)); /* runs past the end */
    CHECK(exaEnqueueWrite(b1, 0, 60, 8, v));                       /* past the end */
    CHECK(exaLaunchFill(ctx, x, 3.0f, 4));                         /* fine */
    EXPECT(exaFinish(ctx), EXA_ERROR_OUT_OF_RANGE);
    notes_print(&nt, seen, seen + 3, ctx);
    seen += 3;
    EXPECT(exaFinish(ctx), EXA_SUCCESS);
    notes_print(&nt, seen, seen + 1, ctx);
    seen += 1;
    CHECK(exaMemcpy(host, x, 4 * sizeof(float), EXA_COPY_DEVICE_TO_HOST));
    print_floats("x[0..3]", host, 4);
    CHECK(exaFree(x));
    EXPECT(exaFree(x), EXA_ERROR_INVALID_VALUE);
    CHECK(exaFree(y));

    printf("== not available remotely\n");
    {
        /* Natively it prints to stdout; the transcript must not depend on
         * where it runs, so its output and its status go to stderr. */
        fflush(stdout);
        int saved = dup(1);
        dup2(2, 1);
        exaStatus st = exaDebugDump(ctx);
        fflush(stdout);
        dup2(saved, 1);
        close(saved);
        fprintf(stderr, "exaDebugDump -> %s\n", S(st));
        printf("exaDebugDump: %s\n", st == EXA_SUCCESS || st == EXA_ERROR_NOT_SUPPORTED
                                         ? "an expected status"
                                         : S(st));
    }

    printf("== threads\n");
    worker w[2];
    pthread_t t[2];
    for (int i = 0; i < 2; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].index = i;
        notes_init(&w[i].nt);
        if (pthread_create(&t[i], NULL, worker_main, &w[i]) != 0) {
            printf("FAILED: pthread_create\n");
            return 2;
        }
    }
    int failed = 0;
    for (int i = 0; i < 2; i++) {
        pthread_join(t[i], NULL);
        printf("thread %d:\n%s", i, w[i].out);
        failed |= w[i].failed;
    }
    if (failed)
        return 2;

    printf("== cleanup\n");
    CHECK(exaSetNotify(ctx, NULL, NULL));
    CHECK(exaReleaseBuffer(b1));
    CHECK(exaReleaseBuffer(b2));
    CHECK(exaDestroyContext(ctx));
    EXPECT(exaGetContextName(ctx, name, sizeof name, &len), EXA_ERROR_INVALID_HANDLE);
    printf("done\n");
    return 0;
}
