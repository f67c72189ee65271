/* The runtime calls of examples/cublasLt beyond tests/cuda/fake_device.c
 * (copies, streams), on host memory standing in for the device: preloaded
 * with it into the example natively and into the family's server forwarded
 * (tests/cublasLt/diff.sh), CI has no GPU. Never used with a GPU. */
#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

#define FAKE __attribute__((visibility("default")))

FAKE cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                                 cudaStream_t stream)
{
    (void)stream;
    if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault) return cudaErrorInvalidMemcpyDirection;
    if (count && (!dst || !src)) return cudaErrorInvalidValue;
    if (count) memmove(dst, src, count);
    return cudaSuccess;
}
FAKE cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    return cudaMemcpyAsync(dst, src, count, kind, 0);
}
FAKE cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags)
{
    (void)flags;
    if (!stream) return cudaErrorInvalidValue;
    return (*stream = calloc(1, 64)) ? cudaSuccess : cudaErrorMemoryAllocation;
}
FAKE cudaError_t cudaStreamCreate(cudaStream_t *stream)
{
    return cudaStreamCreateWithFlags(stream, 0);
}
FAKE cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    free(stream);
    return cudaSuccess;
}
FAKE cudaError_t cudaSetDevice(int device)
{
    return device == 0 ? cudaSuccess : cudaErrorInvalidDevice;
}
FAKE cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    return event ? cudaSuccess : cudaErrorInvalidResourceHandle;
}
