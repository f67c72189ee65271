/* Host functions of the CUDA driver stub: cuLaunchHostFunc and
 * cuStreamAddCallback (and their _ptsz forms). The application's function
 * runs in its own process, on the stub's callback thread, when the server's
 * stream reaches it; the server's stream waits until it returned (host_fn.c),
 * so work queued after it waits as in CUDA. One async message each. */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "apigen_rt.h"
#include "cuda_guest.h"
#include "cuda_wire.h"

typedef struct host_fn {
    bool is_callback;
    CUhostFn fn;
    CUstreamCallback cb;
    void *user;
    CUstream stream;
    bool persist; /* captured into a graph: may run again */
} host_fn;

static atomic_uint_fast64_t next_id_ = 1;

static void reached(uint64_t id, int32_t status, void *user)
{
    host_fn *h = user;
    if (h) {
        if (h->is_callback) h->cb(h->stream, (CUresult)status, h->user);
        else h->fn(h->user);
        if (!h->persist) free(h);
    }
    (void)apigenCudaHostFnDone(id);
}

/* flags may say PERSIST already (the caller knows the stream captures) */
static CUresult enqueue(CUstream stream, CUhostFn fn, CUstreamCallback cb, void *user,
                        uint32_t flags)
{
    if (!fn && !cb) return CUDA_ERROR_INVALID_VALUE;
    host_fn *h = malloc(sizeof *h);
    if (!h) return CUDA_ERROR_OUT_OF_MEMORY;
    *h = (host_fn){cb != NULL, fn, cb, user, stream, false};
    /* captured into a graph, it runs at every launch of the graph: neither
     * side may free its record after the first run */
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    CUresult e = CUDA_SUCCESS;
    if (flags & APIGEN_CUDA_HOSTFN_PERSIST)
        st = CU_STREAM_CAPTURE_STATUS_ACTIVE;
    else
        e = (flags & APIGEN_CUDA_HOSTFN_PTSZ) ? cuStreamIsCapturing_ptsz(stream, &st)
                                              : cuStreamIsCapturing(stream, &st);
    if (e == CUDA_SUCCESS && st != CU_STREAM_CAPTURE_STATUS_NONE) {
        h->persist = true;
        flags |= APIGEN_CUDA_HOSTFN_PERSIST;
    }
    uint64_t id = atomic_fetch_add(&next_id_, 1);
    e = apigenCudaEnqueueHostFn(stream, reached, h, id, cb != NULL, flags);
    if (e != CUDA_SUCCESS) free(h); /* never enqueued: nothing runs or frees it */
    return e;
}

CUresult apigen_cuda_host_fn_captured(CUstream stream, void (*fn)(void *), void *user, int ptsz)
{
    return enqueue(stream, fn, NULL, user,
                   APIGEN_CUDA_HOSTFN_PERSIST | (ptsz ? APIGEN_CUDA_HOSTFN_PTSZ : 0));
}

APIGEN_EXPORT CUresult cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData)
{
    return enqueue(hStream, fn, NULL, userData, 0);
}

APIGEN_EXPORT CUresult cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData)
{
    return enqueue(hStream, fn, NULL, userData, APIGEN_CUDA_HOSTFN_PTSZ);
}

APIGEN_EXPORT CUresult cuStreamAddCallback(CUstream hStream, CUstreamCallback callback,
                                           void *userData, unsigned int flags)
{
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
    return enqueue(hStream, NULL, callback, userData, 0);
}

APIGEN_EXPORT CUresult cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback callback,
                                                void *userData, unsigned int flags)
{
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
    return enqueue(hStream, NULL, callback, userData, APIGEN_CUDA_HOSTFN_PTSZ);
}
