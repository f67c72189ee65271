/* Contexts that end: after a successful cuCtxDestroy, cuDevicePrimaryCtxReset,
 * or a cuDevicePrimaryCtxRelease that leaves the primary context inactive,
 * the context-local storage the runtime keeps through the export tables is
 * dropped and its destructors run (apigen_cuda_export_context_gone), as the
 * real driver does when a context is destroyed. The primary context's handle
 * is the one cuDevicePrimaryCtxRetain last answered for the device: the stub
 * maps the server's primary context to one id, so it stays the same. */
#include <pthread.h>

#include "apigen_rt.h"
#include "cuda_guest.h"
#include "export_tables.h"

CUresult cuda_fwd_cuCtxDestroy(CUcontext ctx);
CUresult cuda_fwd_cuCtxDestroy_v2(CUcontext ctx);
CUresult cuda_fwd_cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev);
CUresult cuda_fwd_cuDevicePrimaryCtxRelease(CUdevice dev);
CUresult cuda_fwd_cuDevicePrimaryCtxRelease_v2(CUdevice dev);
CUresult cuda_fwd_cuDevicePrimaryCtxReset(CUdevice dev);
CUresult cuda_fwd_cuDevicePrimaryCtxReset_v2(CUdevice dev);

#define MAX_DEVICES 256
static pthread_mutex_t lock_ = PTHREAD_MUTEX_INITIALIZER;
static CUcontext primary_[MAX_DEVICES]; /* the handle Retain answered, per ordinal */

static CUcontext primary_of(CUdevice dev)
{
    CUcontext c = NULL;
    if (dev < 0 || dev >= MAX_DEVICES) return NULL;
    pthread_mutex_lock(&lock_);
    c = primary_[dev];
    pthread_mutex_unlock(&lock_);
    return c;
}

APIGEN_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    CUresult e = cuda_fwd_cuDevicePrimaryCtxRetain(pctx, dev);
    if (e == CUDA_SUCCESS && pctx && dev >= 0 && dev < MAX_DEVICES) {
        pthread_mutex_lock(&lock_);
        primary_[dev] = *pctx;
        pthread_mutex_unlock(&lock_);
    }
    return e;
}

static CUresult destroyed(CUresult e, CUcontext ctx)
{
    if (e == CUDA_SUCCESS) apigen_cuda_export_context_gone(ctx);
    if (e == CUDA_SUCCESS) apigen_cuda_globals_forget(1, 0); /* its modules and globals went */
    if (e == CUDA_SUCCESS) apigen_cuda_events_forget();      /* and its events */
    if (e == CUDA_SUCCESS) apigen_twin_forget_all(); /* and twins' allocations: made anew at need */
    if (e == CUDA_SUCCESS) apigen_cuda_functions_gone(); /* and its functions */
    return e;
}

APIGEN_EXPORT CUresult cuCtxDestroy(CUcontext ctx)
{
    return destroyed(cuda_fwd_cuCtxDestroy(ctx), ctx);
}

APIGEN_EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx)
{
    return destroyed(cuda_fwd_cuCtxDestroy_v2(ctx), ctx);
}

/* A reset destroys the primary context whatever its count. */
APIGEN_EXPORT CUresult cuDevicePrimaryCtxReset(CUdevice dev)
{
    return destroyed(cuda_fwd_cuDevicePrimaryCtxReset(dev), primary_of(dev));
}

APIGEN_EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
    return destroyed(cuda_fwd_cuDevicePrimaryCtxReset_v2(dev), primary_of(dev));
}

/* A release destroys it when it was the last reference: the state then says
 * inactive (a failed state query keeps the storage: never drop live data). */
static CUresult released(CUresult e, CUdevice dev)
{
    if (e != CUDA_SUCCESS) return e;
    unsigned flags = 0;
    int active = 1;
    apigen_hold_deferred(true); /* the query's own errors are not the caller's */
    CUresult q = cuDevicePrimaryCtxGetState(dev, &flags, &active);
    apigen_hold_deferred(false);
    if (q == CUDA_SUCCESS && !active) apigen_cuda_export_context_gone(primary_of(dev));
    if (q != CUDA_SUCCESS || !active) apigen_cuda_globals_forget(1, 0); /* asked again */
    if (q != CUDA_SUCCESS || !active) apigen_cuda_events_forget();
    return e;
}

APIGEN_EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice dev)
{
    return released(cuda_fwd_cuDevicePrimaryCtxRelease(dev), dev);
}

APIGEN_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    return released(cuda_fwd_cuDevicePrimaryCtxRelease_v2(dev), dev);
}
