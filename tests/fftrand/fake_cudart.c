/* A stand-in device for CI (no GPU), preloaded (LD_PRELOAD) into the cuFFT
 * and cuRAND examples natively and into apigen-server-cuda-family when they
 * run forwarded: the runtime calls the examples make answer as a device
 * would, with "device memory" that is host memory of the process, where
 * tests/fftrand/fake_cufft.c and fake_curand.c compute. So the whole
 * forwarded path (the runtime's stub and the library stubs in one session,
 * ranges, streams, handles) runs here, and a device address that reached
 * the server wrong would be read from the wrong place. Never used with a
 * GPU. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#define _POSIX_C_SOURCE 200809L
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../cuda/fake_devmem.h"

#define FAKE __attribute__((visibility("default")))

struct CUstream_st {
    int magic;
};

FAKE cudaError_t cudaGetDeviceCount(int *count)
{
    if (!count) return cudaErrorInvalidValue;
    *count = 1;
    return cudaSuccess;
}

FAKE cudaError_t cudaGetDevice(int *device)
{
    if (!device) return cudaErrorInvalidValue;
    *device = 0;
    return cudaSuccess;
}

FAKE cudaError_t cudaSetDevice(int device)
{
    return device == 0 ? cudaSuccess : cudaErrorInvalidDevice;
}

/* device memory: tests/cuda/fake_devmem.h (addresses apart from
 * fake_device.c's) */
FAKE cudaError_t cudaMalloc(void **p, size_t size)
{
    static uintptr_t next_;
    if (!p) return cudaErrorInvalidValue;
    *p = fake_devmem_map(0x340000000000ull, &next_, size);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}

FAKE cudaError_t cudaFree(void *p)
{
    if (p) fake_devmem_unmap(p);
    return cudaSuccess;
}

FAKE cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind)
{
    (void)kind;
    if (n && (!dst || !src)) return cudaErrorInvalidValue;
    memmove(dst, src, n);
    return cudaSuccess;
}

FAKE cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind,
                                 cudaStream_t stream)
{
    (void)stream;
    return cudaMemcpy(dst, src, n, kind);
}

FAKE cudaError_t cudaMemset(void *p, int v, size_t n)
{
    if (n && !p) return cudaErrorInvalidValue;
    memset(p, v, n);
    return cudaSuccess;
}

FAKE cudaError_t cudaStreamCreate(cudaStream_t *s)
{
    if (!s) return cudaErrorInvalidValue;
    *s = calloc(1, sizeof **s);
    if (!*s) return cudaErrorMemoryAllocation;
    (*s)->magic = 0x57;
    return cudaSuccess;
}

FAKE cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags)
{
    (void)flags;
    return cudaStreamCreate(s);
}

FAKE cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    if (!s || s->magic != 0x57) return cudaErrorInvalidResourceHandle;
    s->magic = 0;
    free(s);
    return cudaSuccess;
}

FAKE cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    (void)s;
    return cudaSuccess;
}

FAKE cudaError_t cudaDeviceSynchronize(void)
{
    return cudaSuccess;
}

FAKE cudaError_t cudaGetLastError(void)
{
    return cudaSuccess;
}

FAKE cudaError_t cudaPeekAtLastError(void)
{
    return cudaSuccess;
}
