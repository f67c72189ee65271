/* A fake libcudart.so.13 for the cuDNN CI (no GPU): "device memory" is host
 * memory of the process that loads it, so that tests/cudnn/fake_cudnn.c
 * computes on it. Loaded natively by the examples and by the fake family
 * server (the CUDA runtime's and cuDNN's handlers in one process, as
 * apigen-server-cuda-family has them), so a cudaMalloc pointer and a stream
 * are cuDNN's arguments in one session there. Only what the examples and
 * the runtime's server code ask is implemented; every other symbol answers
 * cudaErrorNotSupported (fake_weak_cudart.c). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#define EXPORT __attribute__((visibility("default")))

static _Thread_local cudaError_t last;

static cudaError_t ret(cudaError_t e)
{
    if (e != cudaSuccess) last = e;
    return e;
}

EXPORT cudaError_t cudaMalloc(void **p, size_t n)
{
    if (!p) return ret(cudaErrorInvalidValue);
    /* 256-byte aligned like cudaMalloc's */
    *p = aligned_alloc(256, ((n ? n : 1) + 255) / 256 * 256);
    if (!*p) return ret(cudaErrorMemoryAllocation);
    memset(*p, 0, n);
    return cudaSuccess;
}

EXPORT cudaError_t cudaFree(void *p)
{
    free(p);
    return cudaSuccess;
}

EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind)
{
    (void)kind;
    if (n && (!dst || !src)) return ret(cudaErrorInvalidValue);
    memmove(dst, src, n);
    return cudaSuccess;
}

EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind,
                                   cudaStream_t s)
{
    (void)s;
    return cudaMemcpy(dst, src, n, kind);
}

EXPORT cudaError_t cudaMemset(void *p, int v, size_t n)
{
    if (n && !p) return ret(cudaErrorInvalidValue);
    memset(p, v, n);
    return cudaSuccess;
}

struct CUstream_st {
    int magic;
};

EXPORT cudaError_t cudaStreamCreate(cudaStream_t *s)
{
    if (!s) return ret(cudaErrorInvalidValue);
    *s = calloc(1, sizeof **s);
    if (!*s) return ret(cudaErrorMemoryAllocation);
    (*s)->magic = 0x5743;
    return cudaSuccess;
}

EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags)
{
    (void)flags;
    return cudaStreamCreate(s);
}

EXPORT cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    if (!s || s->magic != 0x5743) return ret(cudaErrorInvalidResourceHandle);
    s->magic = 0;
    free(s);
    return cudaSuccess;
}

EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t s) { (void)s; return cudaSuccess; }
EXPORT cudaError_t cudaStreamQuery(cudaStream_t s) { (void)s; return cudaSuccess; }
EXPORT cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }
EXPORT cudaError_t cudaGetDeviceCount(int *n) { if (!n) return ret(cudaErrorInvalidValue); *n = 1; return cudaSuccess; }
EXPORT cudaError_t cudaGetDevice(int *d) { if (!d) return ret(cudaErrorInvalidValue); *d = 0; return cudaSuccess; }
EXPORT cudaError_t cudaSetDevice(int d) { return d == 0 ? cudaSuccess : ret(cudaErrorInvalidDevice); }
EXPORT cudaError_t cudaRuntimeGetVersion(int *v) { if (!v) return ret(cudaErrorInvalidValue); *v = CUDART_VERSION; return cudaSuccess; }
EXPORT cudaError_t cudaDriverGetVersion(int *v) { if (!v) return ret(cudaErrorInvalidValue); *v = CUDART_VERSION; return cudaSuccess; }

EXPORT cudaError_t cudaGetLastError(void)
{
    cudaError_t e = last;
    last = cudaSuccess;
    return e;
}

EXPORT cudaError_t cudaPeekAtLastError(void) { return last; }

EXPORT const char *cudaGetErrorName(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorNotSupported: return "cudaErrorNotSupported";
    default: return "cudaErrorUnknown (fake)";
    }
}

EXPORT const char *cudaGetErrorString(cudaError_t e) { return cudaGetErrorName(e); }
