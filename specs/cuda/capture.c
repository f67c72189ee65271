/* Async copies between host memory and the device that a stream capture
 * records (CUDA driver stub, guest side). Natively such a copy becomes a
 * graph node that reads or writes the application's host memory at every
 * launch of the graph. Forwarded, the server reaches only the guest's
 * shared-memory arena (unix://, shm://), which it maps and registers
 * (host_arena.c), so while the process has a capture open (from a
 * cuStreamBeginCapture* to its end), an async copy with a host side asks
 * whether its stream captures, and a
 * captured one names host memory through the runtime's apigen_graph_host
 * (arena_shadow.c, shared with cudart's stub): cuMemAllocHost memory (the
 * arena) as it is, pageable memory through a shadow block in the arena with
 * host functions, run here at every launch as captured host functions are,
 * copying between it and the application's rows. A copy from the device
 * into arena memory is apigenCudaMemcpyArena to the server's address of it,
 * captured or not (async, as natively for pinned memory). Without an arena
 * (tcp://, ucx://, APIGEN_ARENA=0) the copy goes as before and the server
 * refuses it with CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, invalidating the
 * capture, with its log line (host_capture.c). 2D/3D copies use the same
 * rules in copy3d.c; 1D array copies become 2D copies there. */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "apigen_rt.h"
#include "capture_mark.h"
#include "cuda_guest.h"
#include "cuda_wire.h"


/* the generated forwarding functions (wrap: {guest: true}) */
CUresult cuda_fwd_cuStreamBeginCapture(CUstream hStream);
CUresult cuda_fwd_cuStreamBeginCapture_ptsz(CUstream hStream);
CUresult cuda_fwd_cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode);
CUresult cuda_fwd_cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode);
#ifdef APIGEN_HAS_FN_cuStreamBeginCaptureToGraph /* 12.3 */
#define TO_GRAPH_ARGS                                                                              \
    CUstream hStream, CUgraph hGraph, const CUgraphNode *dependencies,                             \
        const CUgraphEdgeData *dependencyData, size_t numDependencies, CUstreamCaptureMode mode
CUresult cuda_fwd_cuStreamBeginCaptureToGraph(TO_GRAPH_ARGS);
CUresult cuda_fwd_cuStreamBeginCaptureToGraph_ptsz(TO_GRAPH_ARGS);
#endif
CUresult cuda_fwd_cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s);
CUresult cuda_fwd_cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dst, const void *src, size_t n,
                                            CUstream s);
CUresult cuda_fwd_cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s);
CUresult cuda_fwd_cuMemcpyDtoHAsync_v2_ptsz(void *dst, CUdeviceptr src, size_t n, CUstream s);
CUresult cuda_fwd_cuMemcpyHtoAAsync_v2(CUarray dst, size_t off, const void *src, size_t n,
                                       CUstream s);
CUresult cuda_fwd_cuMemcpyHtoAAsync_v2_ptsz(CUarray dst, size_t off, const void *src, size_t n,
                                            CUstream s);
CUresult cuda_fwd_cuMemcpyAtoHAsync_v2(void *dst, CUarray src, size_t off, size_t n, CUstream s);
CUresult cuda_fwd_cuMemcpyAtoHAsync_v2_ptsz(void *dst, CUarray src, size_t off, size_t n,
                                            CUstream s);

/* ---- captures open: while one is, copies ask -------------------------------------------------
 * (counted before the call: a copy racing with it must ask; the runtime's
 * stub counts through the same name, capture_mark.h) */
static void capture_begins(void)
{
    apigen_cuda_capture_opens();
}

static CUresult capture_begun(CUresult e)
{
    if (e != CUDA_SUCCESS) apigen_cuda_capture_closes();
    return e;
}

APIGEN_EXPORT CUresult cuStreamBeginCapture(CUstream hStream)
{
    capture_begins();
    return capture_begun(cuda_fwd_cuStreamBeginCapture(hStream));
}
APIGEN_EXPORT CUresult cuStreamBeginCapture_ptsz(CUstream hStream)
{
    capture_begins();
    return capture_begun(cuda_fwd_cuStreamBeginCapture_ptsz(hStream));
}
APIGEN_EXPORT CUresult cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
    capture_begins();
    return capture_begun(cuda_fwd_cuStreamBeginCapture_v2(hStream, mode));
}
APIGEN_EXPORT CUresult cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode)
{
    capture_begins();
    return capture_begun(cuda_fwd_cuStreamBeginCapture_v2_ptsz(hStream, mode));
}
#ifdef APIGEN_HAS_FN_cuStreamBeginCaptureToGraph
APIGEN_EXPORT CUresult cuStreamBeginCaptureToGraph(TO_GRAPH_ARGS)
{
    capture_begins();
    return capture_begun(cuda_fwd_cuStreamBeginCaptureToGraph(
        hStream, hGraph, dependencies, dependencyData, numDependencies, mode));
}
APIGEN_EXPORT CUresult cuStreamBeginCaptureToGraph_ptsz(TO_GRAPH_ARGS)
{
    capture_begins();
    return capture_begun(cuda_fwd_cuStreamBeginCaptureToGraph_ptsz(
        hStream, hGraph, dependencies, dependencyData, numDependencies, mode));
}
#endif

/* A capture ends at a successful or an invalidated end (the graph NULL). */
CUresult cuda_fwd_cuStreamEndCapture(CUstream hStream, CUgraph *phGraph);
CUresult cuda_fwd_cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph);
static CUresult capture_ended(CUresult e)
{
    if (e == CUDA_SUCCESS || e == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
        apigen_cuda_capture_closes();
    return e;
}
APIGEN_EXPORT CUresult cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
    return capture_ended(cuda_fwd_cuStreamEndCapture(hStream, phGraph));
}
APIGEN_EXPORT CUresult cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph)
{
    return capture_ended(cuda_fwd_cuStreamEndCapture_ptsz(hStream, phGraph));
}

/* ---- whether a stream captures, answered in the guest -------------------------------------- */
CUresult cuda_fwd_cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus);
CUresult cuda_fwd_cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus);

/* NVIDIA's runtime asks cuStreamIsCapturing of the default stream once per
 * PyTorch training step (one of its two round trips over the driver stub,
 * H200 2026-11-27). No stream captures while this process has no capture
 * open (begun here, or through the runtime's stub: the family's count; a
 * stream joins a capture only while one is open), so the answer
 * is CU_STREAM_CAPTURE_STATUS_NONE and success for a default stream (NULL,
 * CU_STREAM_LEGACY, CU_STREAM_PER_THREAD) of the thread's current context,
 * while the guest knows one current (thread state: any call that may end a
 * context makes it unknown; APIGEN_CACHE=0 keeps none). A created stream,
 * a thread with no context it knows, or a capture open: the server is
 * asked (torch_ddp's 688 round trips after its graph's capture had ended,
 * two H200s 2026-11-30). As for every answer kept in the guest, a queued call's error is
 * the next call's that reaches the server. */
static bool no_capture_possible(CUstream s, const CUstreamCaptureStatus *status)
{
    uint64_t ctx = 0;
    return status && (s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD) &&
           apigen_cuda_captures_none() && apigen_tstate_get(&cuda_api, 0, &ctx) && ctx;
}

#define IS_CAPTURING(name)                                                                         \
    APIGEN_EXPORT CUresult name(CUstream hStream, CUstreamCaptureStatus *captureStatus)            \
    {                                                                                              \
        if (!no_capture_possible(hStream, captureStatus))                                          \
            return cuda_fwd_##name(hStream, captureStatus);                                        \
        *captureStatus = CU_STREAM_CAPTURE_STATUS_NONE;                                            \
        if (apigen_tracing())                                                                      \
            apigen_trace(#name "(hStream=%#llx, captureStatus=%#llx) = 0 [cached, 0 us]",          \
                         (unsigned long long)(uintptr_t)hStream,                                   \
                         (unsigned long long)(uintptr_t)captureStatus);                            \
        return CUDA_SUCCESS;                                                                       \
    }
IS_CAPTURING(cuStreamIsCapturing)
IS_CAPTURING(cuStreamIsCapturing_ptsz)

/* The legacy stream never captures (and asking about it while another
 * stream captures would invalidate that capture); NULL is the legacy
 * stream but for the _ptsz forms. */
int apigen_cuda_captures(CUstream s, int ptsz)
{
    if (apigen_cuda_captures_none() || s == CU_STREAM_LEGACY || (!ptsz && s == NULL)) return 0;
    CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
    apigen_hold_deferred(true); /* an async error is the application's next call's */
    CUresult q = ptsz ? cuStreamIsCapturing_ptsz(s, &cs) : cuStreamIsCapturing(s, &cs);
    apigen_hold_deferred(false);
    return q == CUDA_SUCCESS && cs == CU_STREAM_CAPTURE_STATUS_ACTIVE;
}

/* The host side of a captured 1D copy: 1 with *gh set, 0 to send the copy
 * as it is (no arena: the server refuses it), -1 with *e an error. */
static int graph_host(void *user, size_t n, apigen_graph_host_t *gh, CUresult *e)
{
    switch (apigen_graph_host(&cuda_api, user, n, n, 1, 1, n, gh)) {
    case APIGEN_GRAPH_HOST_OK: return 1;
    case APIGEN_GRAPH_HOST_NO_ARENA: return 0;
    case APIGEN_GRAPH_HOST_NO_MEMORY: *e = CUDA_ERROR_OUT_OF_MEMORY; return -1;
    default: *e = CUDA_ERROR_INVALID_VALUE; return -1;
    }
}

/* ---- 1D copies ------------------------------------------------------------------------------- */
static CUresult htod(CUdeviceptr dst, const void *src, size_t n, CUstream s, int pt)
{
    apigen_graph_host_t gh;
    CUresult e = CUDA_SUCCESS;
    int r = n && !apigen_arena_owns(src) && apigen_cuda_captures(s, pt)
                ? graph_host((void *)(uintptr_t)src, n, &gh, &e)
                : 0;
    if (r < 0) return e;
    if (r > 0 && gh.shadow) {
        if ((e = apigen_cuda_host_fn_captured(s, apigen_shadow_fill, gh.shadow, pt)) !=
            CUDA_SUCCESS) {
            apigen_shadow_drop(gh.shadow);
            return e;
        }
        src = gh.local; /* sent as an arena reference */
    }
    return pt ? cuda_fwd_cuMemcpyHtoDAsync_v2_ptsz(dst, src, n, s)
              : cuda_fwd_cuMemcpyHtoDAsync_v2(dst, src, n, s);
}

static CUresult dtoh(void *dst, CUdeviceptr src, size_t n, CUstream s, int pt)
{
    unsigned fl = pt ? APIGEN_CUDA_ARENA_PTSZ : 0;
    uint64_t peer = n && apigen_arena_owns(dst) ? apigen_arena_peer_addr(&cuda_api, dst, n) : 0;
    if (peer) return apigenCudaMemcpyArena(src, peer, n, s, fl); /* pinned: async, no bytes back */
    apigen_graph_host_t gh;
    CUresult e = CUDA_SUCCESS;
    int r = n && apigen_cuda_captures(s, pt) ? graph_host(dst, n, &gh, &e) : 0;
    if (r < 0) return e;
    if (r == 0) { /* the bytes come back with the reply: it returns once s's work is done */
        uint32_t call = pt ? CUDA_CALL_cuMemcpyDtoHAsync_v2_ptsz : CUDA_CALL_cuMemcpyDtoHAsync_v2;
        if (n) apigen_cuda_queue_hint(call, s, pt != 0);
        e = pt ? cuda_fwd_cuMemcpyDtoHAsync_v2_ptsz(dst, src, n, s)
               : cuda_fwd_cuMemcpyDtoHAsync_v2(dst, src, n, s);
        if (n) apigen_work_done(e == CUDA_SUCCESS);
        return e;
    }
    e = apigenCudaMemcpyArena(src, gh.peer, n, s, fl);
    if (!gh.shadow) return e;
    if (e == CUDA_SUCCESS) return apigen_cuda_host_fn_captured(s, apigen_shadow_drain, gh.shadow, pt);
    apigen_shadow_drop(gh.shadow);
    return e;
}

/* The async copies' exports: a "device" side that is host memory the
 * device cannot reach there goes the unified way (host_mem.c,
 * apigen_cuda_copy_unreached); managed memory (managed.c) the host wrote
 * goes first, and a copy into managed memory is device work on s. */
static CUresult htod_async(CUdeviceptr dst, const void *src, size_t n, CUstream s, int pt)
{
    int how = APIGEN_CUDA_COPY_ASYNC | (pt ? APIGEN_CUDA_COPY_PT : 0);
    CUresult e;
    if (apigen_cuda_copy_unreached(dst, 1, (CUdeviceptr)(uintptr_t)src, 0, n, s, how, &e)) return e;
    if ((e = apigen_cuda_managed_push()) != CUDA_SUCCESS) return e;
    e = htod(dst, src, n, s, pt);
    if (e == CUDA_SUCCESS) apigen_cuda_managed_wrote(dst, n, s, pt != 0);
    return e;
}

static CUresult dtoh_async(void *dst, CUdeviceptr src, size_t n, CUstream s, int pt)
{
    int how = APIGEN_CUDA_COPY_ASYNC | (pt ? APIGEN_CUDA_COPY_PT : 0);
    CUresult e;
    if (apigen_cuda_copy_unreached((CUdeviceptr)(uintptr_t)dst, 0, src, 1, n, s, how, &e)) return e;
    e = apigen_cuda_managed_push();
    return e != CUDA_SUCCESS ? e : dtoh(dst, src, n, s, pt);
}

APIGEN_EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
    return htod_async(dst, src, n, s, 0);
}
APIGEN_EXPORT CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dst, const void *src, size_t n,
                                                 CUstream s)
{
    return htod_async(dst, src, n, s, 1);
}
APIGEN_EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
    return dtoh_async(dst, src, n, s, 0);
}
APIGEN_EXPORT CUresult cuMemcpyDtoHAsync_v2_ptsz(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
    return dtoh_async(dst, src, n, s, 1);
}

/* ---- 1D arrays: captured, the same copy as a 2D one (copy3d.c) -------------------------------- */
static CUresult array_2d(CUarray arr, size_t off, void *host, size_t n, CUstream s, int pt,
                         int to_array)
{
    CUDA_MEMCPY2D m;
    memset(&m, 0, sizeof m);
    m.WidthInBytes = n;
    m.Height = 1;
    if (to_array) {
        m.srcMemoryType = CU_MEMORYTYPE_HOST, m.srcHost = host, m.srcPitch = n;
        m.dstMemoryType = CU_MEMORYTYPE_ARRAY, m.dstArray = arr, m.dstXInBytes = off;
    } else {
        m.srcMemoryType = CU_MEMORYTYPE_ARRAY, m.srcArray = arr, m.srcXInBytes = off;
        m.dstMemoryType = CU_MEMORYTYPE_HOST, m.dstHost = host, m.dstPitch = n;
    }
    return pt ? cuMemcpy2DAsync_v2_ptsz(&m, s) : cuMemcpy2DAsync_v2(&m, s);
}

APIGEN_EXPORT CUresult cuMemcpyHtoAAsync_v2(CUarray dst, size_t off, const void *src, size_t n,
                                            CUstream s)
{
    if (n && apigen_cuda_captures(s, 0)) return array_2d(dst, off, (void *)(uintptr_t)src, n, s, 0, 1);
    return cuda_fwd_cuMemcpyHtoAAsync_v2(dst, off, src, n, s);
}
APIGEN_EXPORT CUresult cuMemcpyHtoAAsync_v2_ptsz(CUarray dst, size_t off, const void *src,
                                                 size_t n, CUstream s)
{
    if (n && apigen_cuda_captures(s, 1)) return array_2d(dst, off, (void *)(uintptr_t)src, n, s, 1, 1);
    return cuda_fwd_cuMemcpyHtoAAsync_v2_ptsz(dst, off, src, n, s);
}
APIGEN_EXPORT CUresult cuMemcpyAtoHAsync_v2(void *dst, CUarray src, size_t off, size_t n, CUstream s)
{
    if (n && apigen_cuda_captures(s, 0)) return array_2d(src, off, dst, n, s, 0, 0);
    return cuda_fwd_cuMemcpyAtoHAsync_v2(dst, src, off, n, s);
}
APIGEN_EXPORT CUresult cuMemcpyAtoHAsync_v2_ptsz(void *dst, CUarray src, size_t off, size_t n,
                                                 CUstream s)
{
    if (n && apigen_cuda_captures(s, 1)) return array_2d(src, off, dst, n, s, 1, 0);
    return cuda_fwd_cuMemcpyAtoHAsync_v2_ptsz(dst, src, off, n, s);
}
