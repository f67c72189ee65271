/* A stand-in runtime and cuBLAS for tests/cuda/tstate_ci.c, over the
 * contexts of fake_tstate_drv.c (one library, preloaded into the program
 * natively and into apigen-server-cuda-family forwarded): as NVIDIA's
 * runtime, a call that needs a context makes the runtime device's primary
 * context current on a thread that has none, cudaSetDevice makes the
 * device's primary context current, and cudaGetDevice answers the current
 * context's device (or the runtime's own when none is current). cuBLAS's
 * handle creation initializes the runtime as the library does. Never
 * used with a GPU. */
#define _GNU_SOURCE
#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdlib.h>

#include "fake_tstate.h"

static _Thread_local cudaError_t last_;

static cudaError_t fail(cudaError_t e)
{
    if (e != cudaSuccess) last_ = e;
    return e;
}

FAKE cudaError_t cudaGetDeviceCount(int *n)
{
    if (!n) return fail(cudaErrorInvalidValue);
    *n = FAKE_NDEV;
    return cudaSuccess;
}
FAKE cudaError_t cudaGetDevice(int *d)
{
    if (!d) return fail(cudaErrorInvalidValue);
    *d = fake_current() ? fake_current()->dev : fake_rt_device();
    return cudaSuccess;
}
FAKE cudaError_t cudaSetDevice(int d)
{
    if (d < 0 || d >= FAKE_NDEV) return fail(cudaErrorInvalidDevice);
    fake_rt_set_device(d);
    fake_rt_hold(d);
    fake_set_current(fake_primary(d)); /* the device's primary context, current at once */
    return cudaSuccess;
}
FAKE cudaError_t cudaSetDeviceFlags(unsigned int flags)
{
    fake_set_flags(fake_rt_device(), flags);
    fake_lazy_init();
    return cudaSuccess;
}
FAKE cudaError_t cudaDeviceReset(void)
{
    int d = 0;
    cudaGetDevice(&d);
    fake_reset(d); /* deinitialized; stays current where it was */
    return cudaSuccess;
}
FAKE cudaError_t cudaGetLastError(void)
{
    cudaError_t e = last_;
    last_ = cudaSuccess;
    return e;
}
FAKE cudaError_t cudaPeekAtLastError(void) { return last_; }
/* no runtime stream captures here; asking about the legacy stream while a
 * stream captures (the driver's, globally) is refused, as CUDA does */
FAKE cudaError_t cudaStreamIsCapturing(cudaStream_t s, enum cudaStreamCaptureStatus *status)
{
    if (!status) return fail(cudaErrorInvalidValue);
    if (fake_captures() && (!s || s == cudaStreamLegacy)) return fail(cudaErrorStreamCaptureImplicit);
    *status = cudaStreamCaptureStatusNone;
    return cudaSuccess;
}
FAKE cudaError_t cudaMalloc(void **p, size_t n)
{
    if (!p) return fail(cudaErrorInvalidValue);
    fake_lazy_init();
    if (!(*p = malloc(n ? n : 1))) return fail(cudaErrorMemoryAllocation);
    return cudaSuccess;
}
FAKE cudaError_t cudaFree(void *p)
{
    fake_lazy_init();
    free(p);
    return cudaSuccess;
}
/* the test's marker between its phases: answers as a device would */
FAKE cudaError_t cudaMemGetInfo(size_t *free_b, size_t *total)
{
    if (!free_b || !total) return fail(cudaErrorInvalidValue);
    fake_lazy_init();
    *free_b = (size_t)1 << 30;
    *total = (size_t)2 << 30;
    return cudaSuccess;
}

struct cublasContext {
    int dev;
    cublasMath_t math;
};

FAKE cublasStatus_t cublasCreate_v2(cublasHandle_t *h)
{
    if (!h) return CUBLAS_STATUS_INVALID_VALUE;
    fake_lazy_init(); /* the library initializes the runtime */
    struct cublasContext *c = calloc(1, sizeof *c);
    if (!c) return CUBLAS_STATUS_ALLOC_FAILED;
    c->dev = fake_current()->dev;
    *h = c;
    return CUBLAS_STATUS_SUCCESS;
}
FAKE cublasStatus_t cublasDestroy_v2(cublasHandle_t h)
{
    if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
    free(h);
    return CUBLAS_STATUS_SUCCESS;
}
FAKE cublasStatus_t cublasGetMathMode(cublasHandle_t h, cublasMath_t *mode)
{
    if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!mode) return CUBLAS_STATUS_INVALID_VALUE;
    *mode = h->math;
    return CUBLAS_STATUS_SUCCESS;
}
