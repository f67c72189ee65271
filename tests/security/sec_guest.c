/* sec_guest: an exa application for the security tests, run against the
 * stub (LD_LIBRARY_PATH=build/stub, APIGEN_SERVER=URL).
 *
 *   sec_guest owner IDS_FILE GO_FILE   creates a context, a buffer and device memory
 *                                      with known contents, writes their values to
 *                                      IDS_FILE, waits for GO_FILE, then checks they are
 *                                      intact and releases them (S3, S4)
 *   sec_guest intruder IDS_FILE        uses the owner's values: every call must fail
 *                                      with the API's invalid-handle / invalid-value error
 *   sec_guest hog MIB                  allocates MIB MiB of device memory and buffers,
 *                                      prints "ready" and sleeps (to be killed: S5)
 *   sec_guest work SECONDS THREADS     load: THREADS threads loop over the API with their
 *                                      own objects, checking every result; prints
 *                                      "calls=N errors=E" and the checksum (S5, S6)
 *   sec_guest token                    one call; prints its status (S7) */
#define _DEFAULT_SOURCE

#include "exa.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int failures;
#define EXPECT(call, want)                                                                      \
    do {                                                                                        \
        exaStatus st_ = (call);                                                                 \
        printf("%s: %s = %s\n", st_ == (want) ? "ok" : "FAIL", #call, exaStatusString(st_));    \
        if (st_ != (want))                                                                      \
            failures++;                                                                         \
    } while (0)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int owner(const char *ids, const char *go)
{
    exaContext ctx;
    exaBuffer buf;
    void *dev;
    float pattern[64], back[64];
    for (int i = 0; i < 64; i++)
        pattern[i] = (float)i * 1.5f;
    EXPECT(exaCreateContext(0, "owner", &ctx), EXA_SUCCESS);
    EXPECT(exaCreateBuffer(ctx, sizeof pattern, &buf), EXA_SUCCESS);
    EXPECT(exaWriteBuffer(buf, 0, sizeof pattern, pattern), EXA_SUCCESS);
    EXPECT(exaMalloc(&dev, sizeof pattern), EXA_SUCCESS);
    EXPECT(exaMemcpy(dev, pattern, sizeof pattern, EXA_COPY_HOST_TO_DEVICE), EXA_SUCCESS);
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s.tmp", ids);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return 2;
    fprintf(f, "%p %p %p\n", (void *)ctx, (void *)buf, dev);
    fclose(f);
    rename(tmp, ids);
    for (int i = 0; i < 600 && access(go, F_OK) != 0; i++)
        usleep(50000);
    memset(back, 0, sizeof back);
    EXPECT(exaReadBuffer(buf, 0, sizeof back, back), EXA_SUCCESS);
    printf("%s: buffer contents intact\n", memcmp(back, pattern, sizeof back) ? "FAIL" : "ok");
    failures += memcmp(back, pattern, sizeof back) != 0;
    memset(back, 0, sizeof back);
    EXPECT(exaMemcpy(back, dev, sizeof back, EXA_COPY_DEVICE_TO_HOST), EXA_SUCCESS);
    printf("%s: device memory intact\n", memcmp(back, pattern, sizeof back) ? "FAIL" : "ok");
    failures += memcmp(back, pattern, sizeof back) != 0;
    EXPECT(exaFree(dev), EXA_SUCCESS);
    EXPECT(exaReleaseBuffer(buf), EXA_SUCCESS);
    EXPECT(exaDestroyContext(ctx), EXA_SUCCESS);
    return failures ? 1 : 0;
}

static int intruder(const char *ids)
{
    void *pc = NULL, *pb = NULL, *pd = NULL;
    FILE *f = NULL;
    for (int i = 0; i < 600 && !(f = fopen(ids, "r")); i++)
        usleep(50000);
    if (!f || fscanf(f, "%p %p %p", &pc, &pb, &pd) != 3) {
        printf("FAIL: no ids from the owner\n");
        return 1;
    }
    fclose(f);
    exaContext ctx_a = pc, ctx;
    exaBuffer buf_a = pb, buf;
    void *dev_a = pd, *dev;
    char *dev_a8 = (char *)dev_a + 8;
    float host[16] = {0};
    size_t sz = 0;
    double sum;
    EXPECT(exaCreateContext(1, "intruder", &ctx), EXA_SUCCESS);
    EXPECT(exaCreateBuffer(ctx, 64, &buf), EXA_SUCCESS);
    EXPECT(exaMalloc(&dev, 64), EXA_SUCCESS);
    /* S3: handles of another client */
    EXPECT(exaGetBufferSize(buf_a, &sz), EXA_ERROR_INVALID_HANDLE);
    EXPECT(exaReadBuffer(buf_a, 0, sizeof host, host), EXA_ERROR_INVALID_HANDLE);
    EXPECT(exaWriteBuffer(buf_a, 0, sizeof host, host), EXA_ERROR_INVALID_HANDLE);
    EXPECT(exaSumBuffers(buf, &buf_a, 1, 4), EXA_ERROR_INVALID_HANDLE);
    EXPECT(exaSumBuffers(buf_a, &buf, 1, 4), EXA_ERROR_INVALID_HANDLE);
    EXPECT(exaCreateBuffer(ctx_a, 64, &buf), EXA_ERROR_INVALID_HANDLE);
    EXPECT(exaGetContextName(ctx_a, NULL, 0, &sz), EXA_ERROR_INVALID_HANDLE);
    EXPECT(exaReleaseBuffer(buf_a), EXA_ERROR_INVALID_HANDLE);
    EXPECT(exaDestroyContext(ctx_a), EXA_ERROR_INVALID_HANDLE);
    /* launching on another client's context: an async call the guest cannot
     * vouch for (another session's handle) runs synchronously: refused at once */
    EXPECT(exaLaunchFill(ctx_a, dev, 1.0f, 4), EXA_ERROR_INVALID_HANDLE);
    EXPECT(exaFinish(ctx), EXA_SUCCESS);
    /* S4: device memory of another client */
    EXPECT(exaMemcpy(host, dev_a, sizeof host, EXA_COPY_DEVICE_TO_HOST), EXA_ERROR_INVALID_VALUE);
    EXPECT(exaMemcpy(host, dev_a8, 8, EXA_COPY_DEVICE_TO_HOST), EXA_ERROR_INVALID_VALUE);
    EXPECT(exaMemcpy(dev_a, host, sizeof host, EXA_COPY_HOST_TO_DEVICE), EXA_ERROR_INVALID_VALUE);
    EXPECT(exaMemcpy(dev, dev_a, 16, EXA_COPY_DEVICE_TO_DEVICE), EXA_ERROR_INVALID_VALUE);
    EXPECT(exaMemcpy(dev_a, dev, 16, EXA_COPY_DEVICE_TO_DEVICE), EXA_ERROR_INVALID_VALUE);
    EXPECT(exaReduceSum(ctx, dev_a, 4, &sum), EXA_ERROR_INVALID_VALUE);
    EXPECT(exaFree(dev_a), EXA_ERROR_INVALID_VALUE);
    /* async, on memory that is not this client's: refused at the call */
    EXPECT(exaLaunchFill(ctx, dev_a, 7.0f, 4), EXA_ERROR_INVALID_VALUE);
    EXPECT(exaFinish(ctx), EXA_SUCCESS);
    EXPECT(exaLaunchSaxpy(ctx, (exaDim3){1, 1, 1}, 2.0f, dev_a, dev, 4), EXA_ERROR_INVALID_VALUE);
    EXPECT(exaFinish(ctx), EXA_SUCCESS);
    /* its own objects keep working, arithmetic inside its own range included */
    EXPECT(exaMemcpy((char *)dev + 16, host, 16, EXA_COPY_HOST_TO_DEVICE), EXA_SUCCESS);
    EXPECT(exaReduceSum(ctx, (char *)dev + 16, 4, &sum), EXA_SUCCESS);
    EXPECT(exaFree((char *)dev + 8), EXA_ERROR_INVALID_VALUE);
    EXPECT(exaFree(dev), EXA_SUCCESS);
    EXPECT(exaFree(dev), EXA_ERROR_INVALID_VALUE);
    EXPECT(exaReleaseBuffer(buf), EXA_SUCCESS);
    EXPECT(exaDestroyContext(ctx), EXA_SUCCESS);
    return failures ? 1 : 0;
}

static int hog(long mib)
{
    exaContext ctx;
    exaBuffer b;
    void *d;
    static unsigned char ones[1 << 20];
    memset(ones, 1, sizeof ones); /* touched memory: the server's RSS shows it */
    EXPECT(exaCreateContext(0, "hog", &ctx), EXA_SUCCESS);
    for (long i = 0; i < mib; i++) {
        exaStatus st = exaMalloc(&d, sizeof ones);
        if (st == EXA_SUCCESS)
            st = exaMemcpy(d, ones, sizeof ones, EXA_COPY_HOST_TO_DEVICE);
        if (st != EXA_SUCCESS)
            return 1;
    }
    EXPECT(exaCreateBuffer(ctx, 4 << 20, &b), EXA_SUCCESS);
    printf("ready\n");
    fflush(stdout);
    for (;;)
        pause();
}

typedef struct worker {
    int index;
    double until;
    long calls, errors;
    double checksum;
} worker;

static void *work_thread(void *arg)
{
    worker *w = arg;
    enum { N = 512 };
    float host[N], back[N];
    exaContext ctx;
    exaBuffer buf;
    void *x, *y;
    double sum;
#define W(call)                                                                                 \
    do {                                                                                        \
        w->calls++;                                                                             \
        exaStatus st_ = (call);                                                                 \
        if (st_ != EXA_SUCCESS) {                                                               \
            if (w->errors++ < 5)                                                                \
                printf("error: thread %d: %s = %s\n", w->index, #call, exaStatusString(st_));   \
        }                                                                                       \
    } while (0)
    for (int i = 0; i < N; i++)
        host[i] = (float)((i + w->index) % 17);
    int round = 0;
    while (now_s() < w->until) {
        W(exaCreateContext(round & 1, "load", &ctx));
        W(exaCreateBuffer(ctx, sizeof host, &buf));
        W(exaWriteBuffer(buf, 0, sizeof host, host));
        W(exaReadBuffer(buf, 0, sizeof back, back));
        if (memcmp(host, back, sizeof host) != 0 && w->errors++ < 5)
            printf("error: thread %d: buffer contents differ\n", w->index);
        W(exaMalloc(&x, sizeof host));
        W(exaMalloc(&y, sizeof host));
        W(exaMemcpy(x, host, sizeof host, EXA_COPY_HOST_TO_DEVICE));
        W(exaLaunchFill(ctx, y, 1.0f, N));
        W(exaLaunchSaxpy(ctx, (exaDim3){2, 1, 1}, 2.0f, x, y, N));
        W(exaReduceSum(ctx, y, N, &sum));
        W(exaFree(x));
        W(exaFree(y));
        W(exaReleaseBuffer(buf));
        W(exaDestroyContext(ctx));
        /* 2 * sum(host) + N */
        double want = N;
        for (int i = 0; i < N; i++)
            want += 2.0 * host[i];
        if (sum != want && w->errors++ < 5)
            printf("error: thread %d: sum %.1f, want %.1f\n", w->index, sum, want);
        w->checksum = want;
        round++;
    }
    return NULL;
}

static int work(double seconds, int nthreads)
{
    worker *ws = calloc((size_t)nthreads, sizeof *ws);
    pthread_t *ts = calloc((size_t)nthreads, sizeof *ts);
    double until = now_s() + seconds;
    for (int i = 0; i < nthreads; i++) {
        ws[i] = (worker){i, until, 0, 0, 0};
        pthread_create(&ts[i], NULL, work_thread, &ws[i]);
    }
    long calls = 0, errors = 0;
    double check = 0;
    for (int i = 0; i < nthreads; i++) {
        pthread_join(ts[i], NULL);
        calls += ws[i].calls;
        errors += ws[i].errors;
        check += ws[i].checksum;
    }
    printf("calls=%ld errors=%ld checksum=%.1f\n", calls, errors, check);
    free(ws);
    free(ts);
    return errors ? 1 : 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2)
        return 2;
    if (strcmp(argv[1], "owner") == 0 && argc == 4)
        return owner(argv[2], argv[3]);
    if (strcmp(argv[1], "intruder") == 0 && argc == 3)
        return intruder(argv[2]);
    if (strcmp(argv[1], "hog") == 0 && argc == 3)
        return hog(atol(argv[2]));
    if (strcmp(argv[1], "work") == 0 && argc == 4)
        return work(atof(argv[2]), atoi(argv[3]));
    if (strcmp(argv[1], "token") == 0) {
        int n = 0;
        exaStatus st = exaGetDeviceCount(&n);
        printf("exaGetDeviceCount: %s\n", exaStatusString(st));
        return st == EXA_SUCCESS ? 0 : 1;
    }
    fprintf(stderr, "usage: see the header of sec_guest.c\n");
    return 2;
}
