/* tests/cuda/reset_copy.c: large pageable copies before and after the context that made
 * them ends (cudaDeviceReset; cuCtxDestroy then a new context; cuDevicePrimaryCtxReset; one
 * right after an allocation that had the blocks pinned ahead on a helper thread): a server
 * that kept pinned staging blocks of the old context (specs/cudart/host_copy.c,
 * specs/cuda/host_copy.c) would copy through memory the driver freed. Prints what came back;
 * natively and forwarded the output must be the same: tests/gpu/reset-copy.sh on a GPU (both
 * builds), cuda.reset_copy.* in CI (the runtime build; tests/cuda/fake_device.c unmaps its
 * pinned blocks at cudaDeviceReset as the driver frees them). Built against the runtime
 * (default) or, with -DDRIVER, the driver. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef DRIVER
#include <cuda.h>
#define OK(x) ((x) == CUDA_SUCCESS)
#else
#include <cuda_runtime_api.h>
#define OK(x) ((x) == cudaSuccess)
#endif

static int round_trip(const char *what, size_t n, unsigned seed)
{
    unsigned char *h = malloc(n), *b = malloc(n);
    if (!h || !b) return 1;
    for (size_t i = 0; i < n; i++) h[i] = (unsigned char)(i * 131 + seed);
    memset(b, 0, n);
    int ok;
#ifdef DRIVER
    CUdeviceptr d = 0;
    ok = OK(cuMemAlloc(&d, n)) && OK(cuMemcpyHtoD(d, h, n)) && OK(cuMemcpyDtoH(b, d, n));
    if (d) cuMemFree(d);
#else
    void *d = NULL;
    ok = OK(cudaMalloc(&d, n)) && OK(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice)) &&
         OK(cudaMemcpy(b, d, n, cudaMemcpyDeviceToHost));
    if (d) cudaFree(d);
#endif
    printf("%s, %zu MiB: %s\n", what, n >> 20, !ok ? "a call failed" : memcmp(h, b, n) ? "DIFFERS" : "identical");
    free(h);
    free(b);
    return !ok;
}

int main(void)
{
    int bad = 0;
#ifdef DRIVER
    CUdevice dev;
    CUcontext c1, c2, p;
    if (!OK(cuInit(0)) || !OK(cuDeviceGet(&dev, 0)) || !OK(cuCtxCreate(&c1, NULL, 0, dev))) return 2;
    bad |= round_trip("first context", 8u << 20, 1);
    bad |= round_trip("first context again", 20u << 20, 2);
    printf("cuCtxDestroy: %d\n", (int)cuCtxDestroy(c1));
    if (!OK(cuCtxCreate(&c2, NULL, 0, dev))) return 2;
    bad |= round_trip("second context", 8u << 20, 3);
    bad |= round_trip("second context again", 20u << 20, 4);
    printf("cuCtxDestroy: %d\n", (int)cuCtxDestroy(c2));
    if (!OK(cuDevicePrimaryCtxRetain(&p, dev)) || !OK(cuCtxSetCurrent(p))) return 2;
    bad |= round_trip("primary context", 8u << 20, 5);
    printf("cuDevicePrimaryCtxReset: %d\n", (int)cuDevicePrimaryCtxReset(dev));
    if (!OK(cuDevicePrimaryCtxRetain(&p, dev)) || !OK(cuCtxSetCurrent(p))) return 2;
    bad |= round_trip("primary context after its reset", 8u << 20, 6);
    bad |= round_trip("primary context after its reset, again", 20u << 20, 7);
    /* an allocation has the server pin staging blocks ahead (a helper
     * thread), and the context ends before a copy used them */
    CUdeviceptr big = 0;
    printf("cuMemAlloc, 20 MiB: %d\n", (int)cuMemAlloc(&big, 20u << 20));
    printf("cuMemFree: %d\n", (int)cuMemFree(big));
    printf("cuDevicePrimaryCtxReset: %d\n", (int)cuDevicePrimaryCtxReset(dev));
    if (!OK(cuDevicePrimaryCtxRetain(&p, dev)) || !OK(cuCtxSetCurrent(p))) return 2;
    bad |= round_trip("after a reset that followed an allocation", 20u << 20, 8);
#else
    bad |= round_trip("before the reset", 8u << 20, 1);
    bad |= round_trip("before the reset, again", 20u << 20, 2);
    printf("cudaDeviceReset: %d\n", (int)cudaDeviceReset());
    bad |= round_trip("after the reset", 8u << 20, 3);
    bad |= round_trip("after the reset, again", 20u << 20, 4);
    printf("cudaDeviceReset: %d\n", (int)cudaDeviceReset());
    bad |= round_trip("after the second reset", 20u << 20, 5);
    /* an allocation has the server pin staging blocks ahead (a helper
     * thread), and the device is reset before a copy used them */
    void *big = NULL;
    printf("cudaMalloc, 20 MiB: %d\n", (int)cudaMalloc(&big, 20u << 20));
    printf("cudaFree: %d\n", (int)cudaFree(big));
    printf("cudaDeviceReset: %d\n", (int)cudaDeviceReset());
    bad |= round_trip("after a reset that followed an allocation", 20u << 20, 6);
#endif
    return bad;
}
