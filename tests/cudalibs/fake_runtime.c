/* A stand-in device for the cuSPARSE and cuSOLVER tests on a machine without
 * a GPU: preloaded (LD_PRELOAD, with fake_cusparse.c and fake_cusolver.c in
 * one library) into an example natively and into apigen-server-cuda-family
 * forwarded, so both take the same path. "Device memory" is host memory of
 * the process that loads it; copies are memcpy; streams are blocks with a
 * magic number. Everything else is the real libcudart's. Never used with a
 * GPU. */
#define _POSIX_C_SOURCE 200809L
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FAKE __attribute__((visibility("default")))

static _Thread_local cudaError_t last_;

static cudaError_t fail(cudaError_t e)
{
    if (e != cudaSuccess) last_ = e;
    return e;
}

FAKE cudaError_t cudaGetDeviceCount(int *count)
{
    if (!count) return fail(cudaErrorInvalidValue);
    *count = 1;
    return cudaSuccess;
}
FAKE cudaError_t cudaGetDevice(int *device)
{
    if (!device) return fail(cudaErrorInvalidValue);
    *device = 0;
    return cudaSuccess;
}
FAKE cudaError_t cudaSetDevice(int device)
{
    return device == 0 ? cudaSuccess : fail(cudaErrorInvalidDevice);
}
FAKE cudaError_t cudaMalloc(void **devPtr, size_t size)
{
    if (!devPtr) return fail(cudaErrorInvalidValue);
    void *p = NULL;
    if (posix_memalign(&p, 256, size ? size : 1) != 0) return fail(cudaErrorMemoryAllocation);
    memset(p, 0, size ? size : 1);
    *devPtr = p;
    return cudaSuccess;
}
FAKE cudaError_t cudaFree(void *devPtr)
{
    free(devPtr);
    return cudaSuccess;
}
FAKE cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    if ((unsigned)kind > cudaMemcpyDefault) return fail(cudaErrorInvalidMemcpyDirection);
    if (count && (!dst || !src)) return fail(cudaErrorInvalidValue);
    memmove(dst, src, count);
    return cudaSuccess;
}
FAKE cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
                                 enum cudaMemcpyKind kind, cudaStream_t stream)
{
    (void)stream;
    return cudaMemcpy(dst, src, count, kind);
}

#define STREAM_MAGIC 0x5742ea11u
struct fake_stream { uint32_t magic; };

FAKE cudaError_t cudaStreamCreate(cudaStream_t *s)
{
    if (!s) return fail(cudaErrorInvalidValue);
    struct fake_stream *f = malloc(sizeof *f);
    if (!f) return fail(cudaErrorMemoryAllocation);
    f->magic = STREAM_MAGIC;
    *s = (cudaStream_t)(void *)f;
    return cudaSuccess;
}
FAKE cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags)
{
    (void)flags;
    return cudaStreamCreate(s);
}
FAKE cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    struct fake_stream *f = (struct fake_stream *)(void *)s;
    if (!f || f->magic != STREAM_MAGIC) return fail(cudaErrorInvalidResourceHandle);
    f->magic = 0;
    free(f);
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
    cudaError_t e = last_;
    last_ = cudaSuccess;
    return e;
}
FAKE cudaError_t cudaPeekAtLastError(void)
{
    return last_;
}
/* the shared-memory arena: "registered" */
FAKE cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
    (void)ptr, (void)size, (void)flags;
    return cudaSuccess;
}
FAKE cudaError_t cudaHostUnregister(void *ptr)
{
    (void)ptr;
    return cudaSuccess;
}
FAKE cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *a, const void *ptr)
{
    if (!a) return fail(cudaErrorInvalidValue);
    memset(a, 0, sizeof *a);
    a->type = cudaMemoryTypeHost;
    a->devicePointer = (void *)ptr;
    a->hostPointer = (void *)ptr;
    return cudaSuccess;
}
