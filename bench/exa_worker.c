/* exa bench worker: the tiny CPU "accelerator" of examples/exa, whose kernel
 * launches are async in the spec, so this shows the async queue. Prints
 * metrics for apigen-bench; LD_LIBRARY_PATH picks build/real or build/stub. */
#include "worker.h"
#include "exa.h"



#include <string.h>

#define CK(x)                                                                                      \
    do {                                                                                           \
        exaStatus e_ = (x);                                                                        \
        if (e_ != EXA_SUCCESS) {                                                                   \
            fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #x, (int)e_);                  \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* --sweep: exaMemcpy bandwidth against size, both ways */
typedef struct sweep_bufs {
    void *dev;
    char *host;
} sweep_bufs;

static int copy_h2d(void *user, size_t n)
{
    sweep_bufs *b = user;
    return exaMemcpy(b->dev, b->host, n, EXA_COPY_HOST_TO_DEVICE) != EXA_SUCCESS;
}

static int copy_d2h(void *user, size_t n)
{
    sweep_bufs *b = user;
    return exaMemcpy(b->host, b->dev, n, EXA_COPY_DEVICE_TO_HOST) != EXA_SUCCESS;
}

static int sweep(void)
{
    size_t max = bw_sweep_max();
    sweep_bufs b = {NULL, malloc(max)};
    if (!b.host)
        return 1;
    memset(b.host, 1, max);
    CK(exaMalloc(&b.dev, max));
    bw_sweep("H2D exaMemcpy, pageable", max, copy_h2d, &b);
    bw_sweep("D2H exaMemcpy, pageable", max, copy_d2h, &b);
    CK(exaFree(b.dev));
    free(b.host);
    return 0;
}

int main(void)
{
    if (bw_sweep_on())
        return sweep();
    exaContext ctx;
    CK(exaCreateContext(0, "bench", &ctx));
    exaBuffer buf;
    CK(exaCreateBuffer(ctx, 4096, &buf));
    void *d4;
    CK(exaMalloc(&d4, 4096));
    double best;
    size_t sz;
    int n = 20000;
    BW_BEST(3, best, for (int i = 0; i < n; i++) CK(exaGetBufferSize(buf, &sz)));
    bw_report("sync_call", "us", "lo", best * 1e6 / n, "sync no-op call (exaGetBufferSize)");

    n = 20000;
    CK(exaFinish(ctx));
    BW_BEST(3, best, {
        for (int i = 0; i < n; i++)
            CK(exaLaunchFill(ctx, d4, 1.0f, 1));
        CK(exaFinish(ctx));
    });
    bw_report("launch_rate", "k/s", "hi", n / best / 1e3, "async launch throughput (exaLaunchFill)");

    n = 2000;
    BW_BEST(3, best, for (int i = 0; i < n; i++) {
        CK(exaLaunchFill(ctx, d4, 1.0f, 1));
        CK(exaFinish(ctx));
    });
    bw_report("launch_sync", "us", "lo", best * 1e6 / n, "launch + exaFinish latency");

    float v = 1;
    BW_BEST(3, best, for (int i = 0; i < n; i++) CK(exaMemcpy(d4, &v, 4, EXA_COPY_HOST_TO_DEVICE)));
    bw_report("copy4_h2d", "us", "lo", best * 1e6 / n, "4-byte exaMemcpy H2D");
    BW_BEST(3, best, for (int i = 0; i < n; i++) CK(exaMemcpy(&v, d4, 4, EXA_COPY_DEVICE_TO_HOST)));
    bw_report("copy4_d2h", "us", "lo", best * 1e6 / n, "4-byte exaMemcpy D2H");

    size_t big = bw_copy_bytes();
    char *host = malloc(big), desc[96];
    memset(host, 1, big);
    void *dbig;
    CK(exaMalloc(&dbig, big));
    CK(exaMemcpy(dbig, host, big, EXA_COPY_HOST_TO_DEVICE));
    BW_BEST(3, best, CK(exaMemcpy(dbig, host, big, EXA_COPY_HOST_TO_DEVICE)));
    snprintf(desc, sizeof desc, "%zu MiB exaMemcpy H2D, pageable", big >> 20);
    bw_report("copy_h2d", "GB/s", "hi", big / best / 1e9, desc);
    BW_BEST(3, best, CK(exaMemcpy(host, dbig, big, EXA_COPY_DEVICE_TO_HOST)));
    snprintf(desc, sizeof desc, "%zu MiB exaMemcpy D2H, pageable", big >> 20);
    bw_report("copy_d2h", "GB/s", "hi", big / best / 1e9, desc);
    CK(exaFree(dbig));
    free(host);

    /* a whole program: saxpy rounds on 1M floats, a reduction each round */
    size_t nv = 1u << 20, bytes = nv * sizeof(float);
    float *x = malloc(bytes);
    for (size_t i = 0; i < nv; i++)
        x[i] = 1.0f;
    void *dx, *dy;
    CK(exaMalloc(&dx, bytes));
    CK(exaMalloc(&dy, bytes));
    double sum = 0;
    BW_BEST(2, best, {
        CK(exaMemcpy(dx, x, bytes, EXA_COPY_HOST_TO_DEVICE));
        CK(exaLaunchFill(ctx, dy, 0.0f, nv));
        for (int it = 0; it < 20; it++) {
            exaDim3 grid = {1, 1, 1};
            CK(exaLaunchSaxpy(ctx, grid, 2.0f, dx, dy, nv));
            CK(exaReduceSum(ctx, dy, nv, &sum));
        }
        CK(exaMemcpy(x, dy, bytes, EXA_COPY_DEVICE_TO_HOST));
    });
    bw_report("whole", "ms", "lo", best * 1e3, "whole program (20x saxpy+reduce 1M)");

    /* a synchronous call that waits on a few hundred us of queued work (a
     * cudaDeviceSynchronize after a multi-pass transform): forwarded, the
     * caller's wait outlasts any spin, and what a wake-up costs shows here */
    size_t nw = 1u << 19; /* ~450 us of work here: past every spin */
    n = 100;
    BW_BEST(3, best, for (int i = 0; i < n; i++) {
        exaDim3 grid = {1, 1, 1};
        CK(exaLaunchSaxpy(ctx, grid, 1.0f, dx, dy, nw));
        CK(exaReduceSum(ctx, dy, nw, &sum));
    });
    (void)sum;
    bw_report("sync_after_work", "us", "lo", best * 1e6 / n,
              "sync call after ~0.5 ms of queued work (saxpy + reduce 512K)");
    return 0;
}
