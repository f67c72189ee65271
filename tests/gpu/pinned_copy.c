/* Pinned host-to-device copies of several sizes, timed on the host
 * (tests/gpu/pinned-shm.sh): for each size, the allocation
 * (cudaMallocHost / cuMemAllocHost), the first cudaMemcpyAsync /
 * cuMemcpyHtoDAsync + stream synchronize from it, then ITERS more: best
 * and median microseconds. Built twice with gcc, no nvcc: against the
 * runtime (libcudart.so: NVIDIA's or apigen's runtime stub) and, with
 * -DDRIVER, against the driver (libcuda.so.1: NVIDIA's or the driver stub).
 *   pinned_copy [ITERS]        one line per size */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef DRIVER
#include <cuda.h>
#define CK(x) ((x) == CUDA_SUCCESS ? 0 : (fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #x), exit(1), 0))
#else
#include <cuda_runtime_api.h>
#define CK(x) ((x) == cudaSuccess ? 0 : (fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #x), exit(1), 0))
#endif

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 20;
    static const size_t sizes[] = {44, 256u << 10, 1u << 20, 4u << 20, 16u << 20, 64u << 20};
    double *t = calloc((size_t)(iters > 0 ? iters : 1), sizeof *t);
    if (iters < 1 || !t) return 2;
#ifdef DRIVER
    CUdevice dev;
    CUcontext ctx;
    CUstream st;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
#define DEV CUdeviceptr
#define DMALLOC(p, n) CK(cuMemAlloc(&(p), n))
#define DFREE(p) CK(cuMemFree(p))
#define HMALLOC(p, n) CK(cuMemAllocHost((void **)&(p), n))
#define HFREE(p) CK(cuMemFreeHost(p))
#define COPY(d, h, n) (CK(cuMemcpyHtoDAsync(d, h, n, st)), CK(cuStreamSynchronize(st)))
#else
    cudaStream_t st;
    CK(cudaSetDevice(0));
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
#define DEV void *
#define DMALLOC(p, n) CK(cudaMalloc(&(p), n))
#define DFREE(p) CK(cudaFree(p))
#define HMALLOC(p, n) CK(cudaMallocHost((void **)&(p), n))
#define HFREE(p) CK(cudaFreeHost(p))
#define COPY(d, h, n) (CK(cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice, st)), CK(cudaStreamSynchronize(st)))
#endif
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        DEV d;
        char *h;
        DMALLOC(d, n);
        double t0 = now_us();
        HMALLOC(h, n);
        double alloc = now_us() - t0;
        memset(h, 1, n);
        t0 = now_us();
        COPY(d, h, n);
        double first = now_us() - t0;
        for (int i = 0; i < iters; i++) {
            t0 = now_us();
            COPY(d, h, n);
            t[i] = now_us() - t0;
        }
        qsort(t, (size_t)iters, sizeof *t, cmp);
        printf("%9zu B: alloc %9.1f first %9.1f best %9.1f median %9.1f us\n", n, alloc, first, t[0],
               t[iters / 2]);
        fflush(stdout);
        HFREE(h);
        DFREE(d);
    }
    free(t);
    return 0;
}
