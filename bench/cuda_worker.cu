// CUDA bench worker (nvcc -cudart shared): prints metrics for apigen-bench.
// LD_LIBRARY_PATH picks the toolkit's libcudart.so.13 or apigen's stub.
#include <cuda_runtime.h>

#include <cstring>

#include "worker.h"

#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d: %s = %d (%s)\n", __FILE__, __LINE__, #x, (int)e_,              \
                    cudaGetErrorString(e_));                                                       \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

__global__ void nop(int *p) {}
__global__ void saxpy(float a, const float *x, float *y, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

static void copies(const char *tag, const char *kind, char *host, void *dev, size_t big)
{
    double best;
    char desc[96];
    CK(cudaMemcpy(dev, host, big, cudaMemcpyHostToDevice));
    BW_BEST(3, best, CK(cudaMemcpy(dev, host, big, cudaMemcpyHostToDevice)));
    snprintf(desc, sizeof desc, "%zu MiB cudaMemcpy H2D, %s", big >> 20, kind);
    char name[32];
    snprintf(name, sizeof name, "copy_h2d_%s", tag);
    bw_report(name, "GB/s", "hi", big / best / 1e9, desc);
    BW_BEST(3, best, CK(cudaMemcpy(host, dev, big, cudaMemcpyDeviceToHost)));
    snprintf(desc, sizeof desc, "%zu MiB cudaMemcpy D2H, %s", big >> 20, kind);
    snprintf(name, sizeof name, "copy_d2h_%s", tag);
    bw_report(name, "GB/s", "hi", big / best / 1e9, desc);
}

// --sweep: cudaMemcpy bandwidth against size, both ways, from pageable
// (malloc) and from cudaMallocHost memory
struct sweep_bufs {
    void *dev;
    char *host;
};

static int copy_h2d(void *user, size_t n)
{
    sweep_bufs *b = (sweep_bufs *)user;
    return cudaMemcpy(b->dev, b->host, n, cudaMemcpyHostToDevice) != cudaSuccess;
}

static int copy_d2h(void *user, size_t n)
{
    sweep_bufs *b = (sweep_bufs *)user;
    return cudaMemcpy(b->host, b->dev, n, cudaMemcpyDeviceToHost) != cudaSuccess;
}

static int sweep()
{
    size_t max = bw_sweep_max();
    sweep_bufs b = {NULL, (char *)malloc(max)};
    if (!b.host)
        return 1;
    memset(b.host, 1, max);
    CK(cudaMalloc(&b.dev, max));
    bw_sweep("H2D cudaMemcpy, pageable", max, copy_h2d, &b);
    bw_sweep("D2H cudaMemcpy, pageable", max, copy_d2h, &b);
    free(b.host);
    CK(cudaMallocHost((void **)&b.host, max));
    memset(b.host, 1, max);
    bw_sweep("H2D cudaMemcpy, cudaMallocHost", max, copy_h2d, &b);
    bw_sweep("D2H cudaMemcpy, cudaMallocHost", max, copy_d2h, &b);
    CK(cudaFreeHost(b.host));
    CK(cudaFree(b.dev));
    return 0;
}

int main()
{
    int dev = 0, n;
    double best;
    CK(cudaSetDevice(0));
    if (bw_sweep_on())
        return sweep();
    int *d4;
    CK(cudaMalloc(&d4, 4096));
    CK(cudaDeviceSynchronize());

    n = 20000;
    BW_BEST(3, best, for (int i = 0; i < n; i++) CK(cudaGetDevice(&dev)));
    bw_report("getdevice", "us", "lo", best * 1e6 / n, "cudaGetDevice");
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    int prio = 0;
    BW_BEST(3, best, for (int i = 0; i < n; i++) CK(cudaStreamGetPriority(s, &prio)));
    bw_report("sync_call", "us", "lo", best * 1e6 / n, "sync no-op call (cudaStreamGetPriority)");

    n = 100000;
    BW_BEST(3, best, {
        for (int i = 0; i < n; i++)
            nop<<<1, 1>>>(d4);
        CK(cudaDeviceSynchronize());
    });
    bw_report("launch_rate", "k/s", "hi", n / best / 1e3, "async kernel launch throughput");

    n = 5000;
    BW_BEST(3, best, for (int i = 0; i < n; i++) {
        nop<<<1, 1>>>(d4);
        CK(cudaDeviceSynchronize());
    });
    bw_report("launch_sync", "us", "lo", best * 1e6 / n, "launch + cudaDeviceSynchronize");

    int v = 1;
    BW_BEST(3, best, for (int i = 0; i < n; i++) CK(cudaMemcpy(d4, &v, 4, cudaMemcpyHostToDevice)));
    bw_report("copy4_h2d", "us", "lo", best * 1e6 / n, "4-byte cudaMemcpy H2D");
    BW_BEST(3, best, for (int i = 0; i < n; i++) CK(cudaMemcpy(&v, d4, 4, cudaMemcpyDeviceToHost)));
    bw_report("copy4_d2h", "us", "lo", best * 1e6 / n, "4-byte cudaMemcpy D2H");

    size_t big = bw_copy_bytes();
    void *dbig;
    CK(cudaMalloc(&dbig, big));
    char *host = (char *)malloc(big);
    memset(host, 1, big);
    copies("pageable", "pageable", host, dbig, big);
    free(host);
    char *pinned;
    CK(cudaMallocHost((void **)&pinned, big));
    memset(pinned, 1, big);
    copies("pinned", "cudaMallocHost", pinned, dbig, big);
    CK(cudaFreeHost(pinned));
    CK(cudaFree(dbig));

    // a whole program: 200 rounds of a 16M-element saxpy with a small
    // readback each round, upload and download at the ends
    size_t nv = 16u << 20, bytes = nv * sizeof(float);
    float *x = (float *)malloc(bytes), *out = (float *)malloc(bytes), *dx, *dy, r = 0;
    for (size_t i = 0; i < nv; i++)
        x[i] = 1.0f;
    CK(cudaMalloc(&dx, bytes));
    CK(cudaMalloc(&dy, bytes));
    BW_BEST(2, best, {
        CK(cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice));
        CK(cudaMemset(dy, 0, bytes));
        for (int it = 0; it < 200; it++) {
            saxpy<<<(unsigned)((nv + 255) / 256), 256>>>(2.0f, dx, dy, nv);
            if (it % 10 == 9)
                CK(cudaMemcpy(&r, dy + it, sizeof r, cudaMemcpyDeviceToHost));
        }
        CK(cudaMemcpy(out, dy, bytes, cudaMemcpyDeviceToHost));
    });
    if (out[7] != 400.0f)
        fprintf(stderr, "wrong result %f\n", out[7]);
    bw_report("whole", "ms", "lo", best * 1e3, "whole program (200x saxpy 16M)");
    return 0;
}
