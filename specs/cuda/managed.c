/* Managed memory through the driver stub (docs/managed.md): the driver's
 * side of what specs/cudart/managed.c does for the runtime, over the same
 * runtime mirrors (runtime/mirror.c) and queues, so that a program using
 * both stubs has one view. cuMemAllocManaged and cuLibraryGetManaged map a
 * mirror at the server's address; pages the host wrote go to the server
 * before launches (launch.c), graph launches, copies and sets; what the
 * device may have written comes back at synchronizations (context, stream,
 * event synchronize, successful stream and event queries, synchronous
 * copies, cuMemFree). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "apigen_rt.h"
#include "cuda_guest.h"
#include "cuda_wire.h"

#define FWD(name, ...) CUresult cuda_fwd_##name(__VA_ARGS__);
FWD(cuMemcpyHtoD_v2, CUdeviceptr dst, const void *src, size_t n)
FWD(cuMemcpyDtoH_v2, void *dst, CUdeviceptr src, size_t n)

/* the stub's own copies: synchronous, their errors the calling API call's */
static CUresult own_htod(CUdeviceptr dst, const void *src, size_t n)
{
    apigen_cuda_own_copies(true);
    CUresult e = cuda_fwd_cuMemcpyHtoD_v2(dst, src, n);
    apigen_cuda_own_copies(false);
    return e;
}

static int push_io(void *alias, uint64_t addr, size_t len, void *user)
{
    (void)user;
    return (int)own_htod((CUdeviceptr)addr, alias, len);
}

static int pull_io(void *alias, uint64_t addr, size_t len, void *user)
{
    (void)user;
    return (int)cuda_fwd_cuMemcpyDtoH_v2(alias, (CUdeviceptr)addr, len);
}

/* Mapped registrations of the application's memory (host_mem.c): the
 * runtime's twins, moved at the same calls as managed memory, every twin's
 * spans in one request (host_spans.c; NCCL keeps a dozen mapped blocks). A
 * push is queued like the launch it precedes where a copy may be
 * (queue_check.c: a context current, no capture), so a changed twin costs
 * no round trip; its error then comes at the thread's next synchronizing
 * call. A sync's pull is one round trip however many twins are stale, and
 * brings back only the pages that differ from the digests twin.c keeps of
 * the twins (runtime/pages.c, apigen_twin_sync_pages): NCCL's 1 MiB work
 * FIFO, which the device only reads, costs its digests (4 KiB) instead of
 * its bytes at every synchronization, and no pass over its bytes in the
 * guest. A twin's last pull (apigen_twin_remove) reads its bytes whole.
 * A push of one span takes the copy's own path. */
static size_t twin_split(const apigen_twin_span *span, unsigned n, CUdeviceptr *dev, size_t *len)
{
    size_t total = 0;
    for (unsigned i = 0; i < n; i++) {
        dev[i] = (CUdeviceptr)span[i].dev;
        len[i] = span[i].len;
        total += len[i];
    }
    return total;
}

static int twin_pull(const apigen_twin_span *span, unsigned n, void *buf)
{
    CUdeviceptr dev[APIGEN_TWIN_SPANS];
    size_t len[APIGEN_TWIN_SPANS], total = twin_split(span, n, dev, len), used = 0;
    return (int)apigenCudaReadSpans(dev, len, n, NULL, 0, buf, total, &used);
}

static int twin_pages_io(const apigen_twin_span *span, unsigned n, const apigen_page_digest *known,
                         void *reply, size_t cap, size_t *used, void *user)
{
    (void)user;
    CUdeviceptr dev[APIGEN_TWIN_SPANS];
    size_t len[APIGEN_TWIN_SPANS];
    (void)twin_split(span, n, dev, len);
    size_t pages = apigen_pages_count(len, n);
    return (int)apigenCudaReadSpans(dev, len, n, known, pages * sizeof *known, reply, cap, used);
}

static int twin_io(const apigen_twin_span *span, unsigned n, void *buf, bool to_device, void *user)
{
    (void)user;
    if (!to_device) return twin_pull(span, n, buf);
    if (n == 1) return (int)cuda_fwd_cuMemcpyHtoD_v2((CUdeviceptr)span->dev, buf, span->len);
    CUdeviceptr dev[APIGEN_TWIN_SPANS];
    size_t len[APIGEN_TWIN_SPANS], total = twin_split(span, n, dev, len);
    unsigned flags = cuda_may_queue_own() ? 0u : APIGEN_CUDA_SPANS_SYNC;
    return (int)apigenCudaWriteSpans(dev, len, n, buf, total, flags);
}
static CUresult twin_err(int r)
{
    return r == APIGEN_TWIN_NO_MEMORY   ? CUDA_ERROR_OUT_OF_MEMORY
           : r == APIGEN_TWIN_BAD_REPLY ? CUDA_ERROR_UNKNOWN
                                        : (CUresult)r;
}
void apigen_cuda_twin_own(void)
{
    apigen_twin_own(&cuda_api, twin_io); /* the family's libraries push through it */
}
CUresult apigen_cuda_twin_remove(void *host, CUdeviceptr *dev)
{
    uint64_t d = 0;
    CUresult e = twin_err(apigen_twin_remove(host, &d, twin_io, NULL));
    *dev = (CUdeviceptr)d;
    return e;
}

CUresult apigen_cuda_managed_push(void)
{
    CUresult e = twin_err(apigen_twin_push(twin_io, NULL));
    if (e != CUDA_SUCCESS) return e;
    if (!apigen_mirror_live()) return CUDA_SUCCESS;
    return (CUresult)apigen_mirror_push(push_io, NULL);
}

/* CU_STREAM_LEGACY and CU_STREAM_PER_THREAD are cudart's values too: the
 * queues are the runtime stub's. */
static void queue_of(CUstream s, bool ptsz, uint64_t *q, uint64_t *owner)
{
    *owner = 0;
    if ((!s && ptsz) || s == CU_STREAM_PER_THREAD) {
        *q = (uint64_t)(uintptr_t)CU_STREAM_PER_THREAD;
        *owner = (uint64_t)pthread_self();
    } else {
        *q = (uint64_t)(uintptr_t)(s ? s : CU_STREAM_LEGACY);
    }
}

void apigen_cuda_managed_wrote(CUdeviceptr dst, size_t n, CUstream s, bool ptsz)
{
    apigen_twin_wrote((uint64_t)dst, n);
    if (!apigen_mirror_live()) return;
    uint64_t q, o;
    queue_of(s, ptsz, &q, &o);
    apigen_mirror_queued(q, o, (uint64_t)dst, dst ? (n ? n : 1) : 0);
}

CUresult apigen_cuda_managed_sync(int scope, CUstream s, bool ptsz)
{
    CUresult e = twin_err(apigen_twin_sync_pages(scope == APIGEN_SYNC_ALL, twin_pages_io, NULL));
    if (e != CUDA_SUCCESS) return e;
    if (!apigen_mirror_live()) return CUDA_SUCCESS;
    uint64_t q, o;
    queue_of(s, ptsz, &q, &o);
    return (CUresult)apigen_mirror_synced(scope, q, o, pull_io, NULL);
}

/* clean: pulled at once (a variable's initial value); else every page is
 * pushed at the first launch */
static CUresult map_managed(CUdeviceptr dp, size_t size, bool clean, const char *what)
{
    apigen_mirror_own(&cuda_api, push_io); /* the family's libraries push through it */
    int r = apigen_mirror_map((uint64_t)dp, (uint64_t)size, clean);
    if (r == 0) {
        apigen_dev_note(&cuda_api, apigen_current_server(&cuda_api), (uint64_t)dp,
                        (uint64_t)(size ? size : 1));
        return CUDA_SUCCESS;
    }
    apigen_log("cuda: %s: the server's managed memory is at 0x%llx (%zu bytes), but %s in this "
               "process, so the application could not reach it at the same address: refused "
               "(CUDA_ERROR_NOT_SUPPORTED)",
               what, (unsigned long long)dp, size,
               r == EEXIST ? "that address is taken" : "it could not be mapped there");
    return CUDA_ERROR_NOT_SUPPORTED;
}

/* ---- allocation ------------------------------------------------------------------------- */
FWD(cuMemAllocManaged, CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
FWD(cuMemFree_v2, CUdeviceptr dptr)

APIGEN_EXPORT CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
    CUresult e = cuda_fwd_cuMemAllocManaged(dptr, bytesize, flags);
    if (e != CUDA_SUCCESS || !dptr || !*dptr) return e;
    e = map_managed(*dptr, bytesize, false, "cuMemAllocManaged");
    if (e != CUDA_SUCCESS) {
        (void)cuda_fwd_cuMemFree_v2(*dptr);
        *dptr = 0;
    }
    return e;
}

APIGEN_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr)
{
    CUresult e = cuda_fwd_cuMemFree_v2(dptr);
    if (e == CUDA_SUCCESS && dptr && apigen_mirror_find((uint64_t)dptr, NULL, NULL))
        apigen_mirror_unmap((uint64_t)dptr);
    /* the driver synchronizes the context for a free */
    if (e == CUDA_SUCCESS) e = apigen_cuda_managed_sync(APIGEN_SYNC_ALL, NULL, false);
    return e;
}

/* A __managed__ variable of a library (NVIDIA's runtime asks this for the
 * program's __managed__ variables): mirrored, with its current value. */
#ifdef APIGEN_HAS_FN_cuLibraryGetManaged /* 12.0: libraries */
FWD(cuLibraryGetManaged, CUdeviceptr *dptr, size_t *bytes, CUlibrary library, const char *name)
APIGEN_EXPORT CUresult cuLibraryGetManaged(CUdeviceptr *dptr, size_t *bytes, CUlibrary library,
                                           const char *name)
{
    size_t n = 0;
    CUresult e = cuda_fwd_cuLibraryGetManaged(dptr, &n, library, name);
    if (e != CUDA_SUCCESS || !dptr || !*dptr) return e;
    if (bytes) *bytes = n;
    if (apigen_mirror_find((uint64_t)*dptr, NULL, NULL)) return e; /* asked before */
    e = map_managed(*dptr, n, true, name ? name : "cuLibraryGetManaged");
    if (e != CUDA_SUCCESS) return e;
    apigen_cuda_managed_wrote(*dptr, n, NULL, false);
    e = apigen_cuda_managed_sync(APIGEN_SYNC_QUEUE, NULL, false);
    if (e != CUDA_ERROR_INVALID_CONTEXT) return e;
    /* No context is current: NVIDIA's runtime asks for its program's
     * __managed__ variables while it loads the program's library, before
     * it makes its context (driver.sh's `managed` failed so on the H200).
     * A library's managed memory belongs to no context: the initial value
     * is read under device 0's primary context, retained as the runtime is
     * about to retain it, and the thread's context is left as it was. */
    CUdevice dev;
    CUcontext ctx, popped;
    if ((e = cuDeviceGet(&dev, 0)) != CUDA_SUCCESS || (e = cuDevicePrimaryCtxRetain(&ctx, dev)) != CUDA_SUCCESS)
        return e;
    if ((e = cuCtxPushCurrent_v2(ctx)) != CUDA_SUCCESS) return e;
    e = apigen_cuda_managed_sync(APIGEN_SYNC_QUEUE, NULL, false);
    CUresult p = cuCtxPopCurrent_v2(&popped);
    return e != CUDA_SUCCESS ? e : p;
}
#endif

/* ---- settled work (apigen_work_*) ------------------------------------------------------------
 * The scope of a context-wide synchronization is the thread's current
 * context (thread state slot 0, `current_context`, of specs/cuda.yaml's
 * api.thread_state), unknown until a call told it. */
static uint64_t current_context(bool *known)
{
    uint64_t ctx = 0;
    *known = apigen_tstate_get(&cuda_api, 0, &ctx);
    return ctx;
}

void apigen_cuda_work_hint(uint32_t call_id, enum apigen_work kind)
{
    bool known;
    uint64_t ctx = current_context(&known);
    apigen_work_hint(&cuda_api, call_id, kind, known, ctx);
}

/* The queue a stream names (queue_of; the thread's own per-thread stream
 * is told apart by the calling thread, settle.c's marks are per thread). */
static uint64_t queue_key(CUstream s, bool ptsz)
{
    uint64_t q, owner;
    queue_of(s, ptsz, &q, &owner);
    return q;
}

void apigen_cuda_queue_hint(uint32_t call_id, CUstream stream, bool ptsz)
{
    bool known;
    uint64_t ctx = current_context(&known);
    apigen_work_hint_queue(&cuda_api, call_id, known, ctx, queue_key(stream, ptsz));
}

/* A stream's work known complete (apigen_queue_settled: this thread's last
 * copy to pageable memory on it or synchronization of it succeeded and
 * nothing reached the session since, from any thread: NVIDIA's runtime
 * copying a loss to the host through its staging block, then synchronizing
 * the stream): nothing to wait for and no error to report. */
#define STREAM_SYNC(name, ptsz)                                                                    \
    FWD(name, CUstream s)                                                                          \
    APIGEN_EXPORT CUresult name(CUstream s)                                                        \
    {                                                                                              \
        bool known_;                                                                               \
        uint64_t ctx_ = current_context(&known_);                                                  \
        CUresult e_;                                                                               \
        if (apigen_queue_settled(&cuda_api, known_, ctx_, queue_key(s, ptsz))) {                   \
            if (apigen_tracing())                                                                  \
                apigen_trace(#name "(hStream=%p) = 0 [cached, 0 us]", (void *)s);                  \
            e_ = CUDA_SUCCESS;                                                                     \
        } else {                                                                                   \
            apigen_cuda_queue_hint(CUDA_CALL_##name, s, ptsz);                                     \
            e_ = cuda_fwd_##name(s);                                                               \
            apigen_work_done(e_ == CUDA_SUCCESS);                                                  \
        }                                                                                          \
        if (e_ == CUDA_SUCCESS) e_ = apigen_cuda_managed_sync(APIGEN_SYNC_QUEUE, s, ptsz);         \
        return e_;                                                                                 \
    }

/* The context's work known complete (its last synchronization, or a
 * synchronous copy to the host on the legacy stream that waited for all of
 * it, succeeded and nothing reached the session since, from any thread):
 * nothing to wait for and no error to report, as the driver would answer. */
FWD(cuCtxSynchronize, void)
#ifdef APIGEN_HAS_FN_cuCtxSynchronize_v2 /* 13.0 */
FWD(cuCtxSynchronize_v2, CUcontext ctx)
#endif
static CUresult ctx_synchronize(CUcontext ctx, bool v2)
{
    bool known;
    uint64_t scope = current_context(&known);
    if (ctx) { /* another context than the current one: its handle */
        scope = (uint64_t)(uintptr_t)ctx;
        known = true;
    }
    CUresult e;
    if (apigen_work_settled(&cuda_api, known, scope)) {
        if (apigen_tracing())
            apigen_trace("%s() = 0 [cached, 0 us]", v2 ? "cuCtxSynchronize_v2" : "cuCtxSynchronize");
        e = CUDA_SUCCESS;
    } else {
#ifdef APIGEN_HAS_FN_cuCtxSynchronize_v2 /* 13.0 */
        uint32_t call = v2 ? CUDA_CALL_cuCtxSynchronize_v2 : CUDA_CALL_cuCtxSynchronize;
#else
        uint32_t call = CUDA_CALL_cuCtxSynchronize;
#endif
        apigen_work_hint(&cuda_api, call, APIGEN_WORK_SETTLES_ALL, known, scope);
#ifdef APIGEN_HAS_FN_cuCtxSynchronize_v2 /* 13.0 */
        e = v2 ? cuda_fwd_cuCtxSynchronize_v2(ctx) : cuda_fwd_cuCtxSynchronize();
#else
        e = cuda_fwd_cuCtxSynchronize();
#endif
        apigen_work_done(e == CUDA_SUCCESS);
    }
    if (e == CUDA_SUCCESS) e = apigen_cuda_managed_sync(APIGEN_SYNC_ALL, NULL, false);
    return e;
}

/* ---- synchronizations ------------------------------------------------------------------- */
#define SYNC(name, params, args, scope, stream, ptsz)                                              \
    FWD(name, params)                                                                              \
    APIGEN_EXPORT CUresult name(params)                                                            \
    {                                                                                              \
        CUresult e_ = cuda_fwd_##name args;                                                        \
        if (e_ == CUDA_SUCCESS) e_ = apigen_cuda_managed_sync(scope, stream, ptsz);                \
        return e_;                                                                                 \
    }
#define P(...) __VA_ARGS__
APIGEN_EXPORT CUresult cuCtxSynchronize(void) { return ctx_synchronize(NULL, false); }
#ifdef APIGEN_HAS_FN_cuCtxSynchronize_v2 /* 13.0 */
APIGEN_EXPORT CUresult cuCtxSynchronize_v2(CUcontext ctx) { return ctx_synchronize(ctx, true); }
#endif
STREAM_SYNC(cuStreamSynchronize, false)
STREAM_SYNC(cuStreamSynchronize_ptsz, true)
SYNC(cuStreamQuery, CUstream s, (s), APIGEN_SYNC_QUEUE, s, false)
SYNC(cuStreamQuery_ptsz, CUstream s, (s), APIGEN_SYNC_QUEUE, s, true)
SYNC(cuEventSynchronize, CUevent ev, (ev), APIGEN_SYNC_POINT, NULL, false)
SYNC(cuEventQuery, CUevent ev, (ev), APIGEN_SYNC_POINT, NULL, false)

/* ---- graph launches, copies and sets ------------------------------------------------------ */
#define GRAPH_LAUNCH(name, ptsz)                                                                   \
    FWD(name, CUgraphExec g, CUstream s)                                                           \
    APIGEN_EXPORT CUresult name(CUgraphExec g, CUstream s)                                         \
    {                                                                                              \
        CUresult e_ = apigen_cuda_managed_push();                                                  \
        if (e_ != CUDA_SUCCESS) return e_;                                                         \
        e_ = cuda_fwd_##name(g, s);                                                                \
        if (e_ == CUDA_SUCCESS) apigen_cuda_managed_wrote(0, 0, s, ptsz);                          \
        return e_;                                                                                 \
    }
GRAPH_LAUNCH(cuGraphLaunch, false)
GRAPH_LAUNCH(cuGraphLaunch_ptsz, true)

/* synchronous: the host sees what it wrote into managed memory at once.
 * work: on the legacy stream (not the _ptds forms), what the copy is for
 * apigen_work_* (to the host: it returns once it and all before it are
 * complete). sides: which of d (1) and s (2) the call names device memory:
 * host memory the device cannot reach there goes the unified way
 * (host_mem.c, apigen_cuda_copy_unreached). */
#define SYNC_COPY(name, params, args, dst, n, ptsz, work, sides)                                   \
    FWD(name, params)                                                                              \
    APIGEN_EXPORT CUresult name(params)                                                            \
    {                                                                                              \
        CUresult e_;                                                                               \
        if (apigen_cuda_copy_unreached((CUdeviceptr)(uintptr_t)d, (sides) & 1,                      \
                                       (CUdeviceptr)(uintptr_t)s, (sides) & 2, n, NULL,            \
                                       (ptsz) ? APIGEN_CUDA_COPY_PT : 0, &e_))                      \
            return e_;                                                                             \
        e_ = apigen_cuda_managed_push();                                                           \
        if (e_ != CUDA_SUCCESS) return e_;                                                         \
        if ((work) != APIGEN_WORK_ANY) apigen_cuda_work_hint(CUDA_CALL_##name, (work));            \
        e_ = cuda_fwd_##name args;                                                                 \
        apigen_work_done(e_ == CUDA_SUCCESS);                                                      \
        if (e_ != CUDA_SUCCESS || !apigen_mirror_live()) return e_;                                \
        apigen_cuda_managed_wrote(dst, n, NULL, ptsz);                                             \
        return apigen_cuda_managed_sync(APIGEN_SYNC_QUEUE, NULL, ptsz);                            \
    }
SYNC_COPY(cuMemcpyHtoD_v2, P(CUdeviceptr d, const void *s, size_t n), (d, s, n), d, n, false, APIGEN_WORK_ORDERED, 1)
SYNC_COPY(cuMemcpyHtoD_v2_ptds, P(CUdeviceptr d, const void *s, size_t n), (d, s, n), d, n, true, APIGEN_WORK_ANY, 1)
SYNC_COPY(cuMemcpyDtoH_v2, P(void *d, CUdeviceptr s, size_t n), (d, s, n), (CUdeviceptr)(uintptr_t)d, n, false,
          APIGEN_WORK_SETTLES_ORDERED, 2)
SYNC_COPY(cuMemcpyDtoH_v2_ptds, P(void *d, CUdeviceptr s, size_t n), (d, s, n), (CUdeviceptr)(uintptr_t)d, n, true,
          APIGEN_WORK_ANY, 2)
SYNC_COPY(cuMemcpyDtoD_v2, P(CUdeviceptr d, CUdeviceptr s, size_t n), (d, s, n), d, n, false, APIGEN_WORK_ORDERED, 3)
SYNC_COPY(cuMemcpyDtoD_v2_ptds, P(CUdeviceptr d, CUdeviceptr s, size_t n), (d, s, n), d, n, true, APIGEN_WORK_ANY, 3)

/* sets: in stream order, like a launch. One into host memory the device
 * cannot reach at its address (pinned memory over tcp://; natively a set
 * may name pinned memory under unified addressing: XLA's autotuner does)
 * sets its twin (host_mem.c), read back at the next synchronization, or at
 * once for the synchronous forms (sync), which natively complete before
 * returning when they set pinned memory. */
#define STREAM_OP(name, params, args, dst, n, stream, ptsz, sync)                                  \
    FWD(name, params)                                                                              \
    APIGEN_EXPORT CUresult name(params)                                                            \
    {                                                                                              \
        int host_ = 0;                                                                             \
        CUresult e_ = apigen_cuda_reach_dst(&d, &host_);                                           \
        if (e_ != CUDA_SUCCESS) return e_;                                                         \
        if ((e_ = apigen_cuda_managed_push()) != CUDA_SUCCESS) return e_;                          \
        e_ = cuda_fwd_##name args;                                                                 \
        if (e_ == CUDA_SUCCESS) apigen_cuda_managed_wrote(dst, n, stream, ptsz);                   \
        if (e_ == CUDA_SUCCESS && host_ && (sync))                                                 \
            e_ = apigen_cuda_managed_sync(APIGEN_SYNC_QUEUE, NULL, ptsz);                          \
        return e_;                                                                                 \
    }
/* a device copy whose side is host memory the device cannot reach there:
 * the unified way (SYNC_COPY's sides) */
#define STREAM_COPY(name, ptsz)                                                                    \
    FWD(name, CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st)                                 \
    APIGEN_EXPORT CUresult name(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st)               \
    {                                                                                              \
        CUresult e_;                                                                               \
        if (apigen_cuda_copy_unreached(d, 1, s, 1, n, st,                                          \
                                       APIGEN_CUDA_COPY_ASYNC | ((ptsz) ? APIGEN_CUDA_COPY_PT : 0), \
                                       &e_))                                                       \
            return e_;                                                                             \
        if ((e_ = apigen_cuda_managed_push()) != CUDA_SUCCESS) return e_;                          \
        e_ = cuda_fwd_##name(d, s, n, st);                                                         \
        if (e_ == CUDA_SUCCESS) apigen_cuda_managed_wrote(d, n, st, ptsz);                         \
        return e_;                                                                                 \
    }
STREAM_COPY(cuMemcpyDtoDAsync_v2, false)
STREAM_COPY(cuMemcpyDtoDAsync_v2_ptsz, true)
STREAM_OP(cuMemsetD8_v2, P(CUdeviceptr d, unsigned char v, size_t n), (d, v, n), d, n, NULL, false, true)
STREAM_OP(cuMemsetD8_v2_ptds, P(CUdeviceptr d, unsigned char v, size_t n), (d, v, n), d, n, NULL, true, true)
STREAM_OP(cuMemsetD16_v2, P(CUdeviceptr d, unsigned short v, size_t n), (d, v, n), d, 2 * n, NULL, false, true)
STREAM_OP(cuMemsetD16_v2_ptds, P(CUdeviceptr d, unsigned short v, size_t n), (d, v, n), d, 2 * n, NULL, true, true)
STREAM_OP(cuMemsetD32_v2, P(CUdeviceptr d, unsigned int v, size_t n), (d, v, n), d, 4 * n, NULL, false, true)
STREAM_OP(cuMemsetD32_v2_ptds, P(CUdeviceptr d, unsigned int v, size_t n), (d, v, n), d, 4 * n, NULL, true, true)
STREAM_OP(cuMemsetD8Async, P(CUdeviceptr d, unsigned char v, size_t n, CUstream st), (d, v, n, st), d, n, st, false, false)
STREAM_OP(cuMemsetD8Async_ptsz, P(CUdeviceptr d, unsigned char v, size_t n, CUstream st), (d, v, n, st), d, n, st, true, false)
STREAM_OP(cuMemsetD16Async, P(CUdeviceptr d, unsigned short v, size_t n, CUstream st), (d, v, n, st), d, 2 * n, st, false, false)
STREAM_OP(cuMemsetD16Async_ptsz, P(CUdeviceptr d, unsigned short v, size_t n, CUstream st), (d, v, n, st), d, 2 * n, st, true, false)
STREAM_OP(cuMemsetD32Async, P(CUdeviceptr d, unsigned int v, size_t n, CUstream st), (d, v, n, st), d, 4 * n, st, false, false)
STREAM_OP(cuMemsetD32Async_ptsz, P(CUdeviceptr d, unsigned int v, size_t n, CUstream st), (d, v, n, st), d, 4 * n, st, true, false)

/* A module's or library's global that is a __managed__ variable (NVIDIA's
 * runtime may look those up as globals): mirrored like cuLibraryGetManaged's.
 * One question per global not mirrored yet. */
CUresult apigen_cuda_managed_global(CUdeviceptr p, size_t n, const char *name)
{
    if (!p || apigen_mirror_find((uint64_t)p, NULL, NULL)) return CUDA_SUCCESS;
    unsigned int managed = 0;
    apigen_hold_deferred(true); /* the query's own errors are not the caller's */
    CUresult e = cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, p);
    apigen_hold_deferred(false);
    if (e != CUDA_SUCCESS || !managed) return CUDA_SUCCESS;
    e = map_managed(p, n, true, name ? name : "a __managed__ variable");
    if (e != CUDA_SUCCESS) return e;
    apigen_cuda_managed_wrote(p, n, NULL, false);
    return apigen_cuda_managed_sync(APIGEN_SYNC_QUEUE, NULL, false);
}
