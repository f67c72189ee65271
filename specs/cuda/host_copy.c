/* Host side of the CUDA driver stub's pipelined copies (`stream:` on
 * cuMemcpyHtoD_v2, cuMemcpyDtoH_v2, cuMemcpyHtoDAsync_v2, cuMemcpyDtoHAsync_v2 and their
 * per-thread forms), the design of specs/cudart/host_copy.c over the driver: a pageable
 * copy of at least the spec's `min` bytes arrives (or leaves) as chunks;
 * each goes through one of NSTAGE pinned staging blocks with an async copy
 * and an event, so the device copy of one chunk overlaps the transport of
 * the next. Semantics are the real function's: the synchronous forms run on
 * the legacy (or per-thread) default stream and return when the copy is
 * done; a device-to-host copy to pageable memory is synchronous for the
 * host, as natively. A range that is not inside one of the client's
 * allocations, or a thread without a context, takes the plain path, whose
 * real copy says what is wrong. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apigen_rt.h"
#include "cuda_wire.h"

#define NSTAGE 3

typedef struct stage_ahead stage_ahead;
typedef struct stage_set {
    void *blk[NSTAGE];
    CUevent ev[NSTAGE];
    bool busy[NSTAGE];
    size_t size;
    CUcontext ctx; /* events belong to the context that was current */
    CUdevice dev;
    bool primary;           /* ctx is dev's primary context */
    atomic_bool dead;       /* ctx ended: the driver freed the blocks and events */
    stage_ahead *ahead;     /* blocks being pinned on a helper thread (ahead_start) */
    CUstream rd;            /* the twins' reads (cuda_host_read_staged), made at need */
    struct stage_set *next; /* every live set: sets_ */
} stage_set;

/* A block is made when a copy first needs it: each costs ~0.7 ms plus
 * ~0.3 ms per MiB pinned (H200), and a first copy of one chunk paid for all
 * NSTAGE (issue 16: a first 4 MiB copy over tcp 3.1 ms, later ones 0.7).
 * A context that ends (cuCtxDestroy, a primary context reset or released
 * for the last time) takes its sets' blocks and events with it: the host
 * wraps below mark those sets dead (a GPU run of 2026-11-27 had the next
 * copy receive into a freed block: "Bad address", session lost). */
static pthread_mutex_t sets_mu_ = PTHREAD_MUTEX_INITIALIZER;
static stage_set *sets_;

static pthread_key_t key_;
static pthread_once_t once_ = PTHREAD_ONCE_INIT;

/* Pinning ahead (issue 16), as specs/cudart/host_copy.c does: a device
 * allocation of at least one chunk has the thread's blocks pinned on a
 * helper thread while the program goes on (a first 4 MiB copy over tcp paid
 * 4080 us against 843 for a later one, H200 2026-11-27). The set's thread
 * joins the helper before it touches the set (ahead_take); a context that
 * ends waits for a helper that is pinning (ahead_mu_), which pins nothing
 * into a set already marked dead. */
struct stage_ahead {
    pthread_t th;
    stage_set *set; /* read by the helper: only its dead mark */
    int from, n;    /* blocks from..n-1 of the set were missing */
    void *blk[NSTAGE];
    CUevent ev[NSTAGE];
};

static pthread_mutex_t ahead_mu_ = PTHREAD_MUTEX_INITIALIZER;

static void *ahead_main(void *arg)
{
    stage_ahead *a = arg;
    pthread_mutex_lock(&ahead_mu_);
    if (!atomic_load(&a->set->dead) && cuCtxSetCurrent(a->set->ctx) == CUDA_SUCCESS)
        for (int i = a->from; i < a->n; i++) {
            if (cuMemHostAlloc(&a->blk[i], a->set->size, CU_MEMHOSTALLOC_PORTABLE) !=
                CUDA_SUCCESS) {
                a->blk[i] = NULL;
                break;
            }
            if (cuEventCreate(&a->ev[i], CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
                (void)cuMemFreeHost(a->blk[i]);
                a->blk[i] = NULL;
                break;
            }
        }
    pthread_mutex_unlock(&ahead_mu_);
    return NULL;
}

/* Waits for s's helper and takes the blocks it made (a context that ended
 * since took them with it). */
static void ahead_take(stage_set *s)
{
    stage_ahead *a = s->ahead;
    if (!a)
        return;
    pthread_join(a->th, NULL);
    s->ahead = NULL;
    for (int i = a->from; i < a->n; i++)
        if (a->blk[i] && !atomic_load(&s->dead))
            s->blk[i] = a->blk[i], s->ev[i] = a->ev[i];
    free(a);
}

static void release(stage_set *s)
{
    if (!s)
        return;
    ahead_take(s);
    pthread_mutex_lock(&sets_mu_);
    for (stage_set **p = &sets_; *p; p = &(*p)->next)
        if (*p == s) {
            *p = s->next;
            break;
        }
    pthread_mutex_unlock(&sets_mu_);
    if (!atomic_load(&s->dead) && s->rd)
        (void)cuStreamDestroy_v2(s->rd);
    if (!atomic_load(&s->dead))
        for (int i = 0; i < NSTAGE; i++) {
            if (s->busy[i])
                (void)cuEventSynchronize(s->ev[i]);
            if (s->ev[i])
                (void)cuEventDestroy_v2(s->ev[i]);
            if (s->blk[i])
                (void)cuMemFreeHost(s->blk[i]);
        }
    free(s);
}

static void free_set(void *p)
{
    release(p);
}

static void init_key(void)
{
    (void)pthread_key_create(&key_, free_set);
}

/* Block i of s, made now if it is not yet; false: it cannot be. */
static bool block(stage_set *s, int i)
{
    if (s->blk[i])
        return true;
    if (cuMemHostAlloc(&s->blk[i], s->size, CU_MEMHOSTALLOC_PORTABLE) == CUDA_SUCCESS &&
        cuEventCreate(&s->ev[i], CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS)
        return true;
    if (s->blk[i])
        (void)cuMemFreeHost(s->blk[i]);
    s->blk[i] = NULL;
    return false;
}

/* How many blocks a copy of n bytes in pieces of chunk takes turns on:
 * one per piece up to NSTAGE, made now if need be (fewer when one cannot). */
static int blocks(stage_set *s, size_t n, size_t chunk)
{
    int k = 1;
    while (k < NSTAGE && (size_t)k * chunk < n && block(s, k))
        k++;
    return k;
}

/* The thread's staging set of chunk-byte blocks in the current context
 * (its blocks made or not); NULL: none. */
static stage_set *set_of(size_t chunk)
{
    CUcontext ctx = NULL;
    pthread_once(&once_, init_key);
    if (cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx)
        return NULL;
    stage_set *s = pthread_getspecific(key_);
    if (!(s && s->size >= chunk && s->ctx == ctx && !atomic_load(&s->dead))) {
        CUcontext primary = NULL;
        unsigned flags = 0;
        int active = 0;
        release(s);
        (void)pthread_setspecific(key_, NULL);
        if (!(s = calloc(1, sizeof *s)))
            return NULL;
        s->size = chunk, s->ctx = ctx;
        if (cuCtxGetDevice(&s->dev) == CUDA_SUCCESS &&
            cuDevicePrimaryCtxGetState(s->dev, &flags, &active) == CUDA_SUCCESS && active &&
            cuDevicePrimaryCtxRetain(&primary, s->dev) == CUDA_SUCCESS) {
            s->primary = primary == ctx;
            (void)cuDevicePrimaryCtxRelease_v2(s->dev);
        }
        pthread_mutex_lock(&sets_mu_);
        s->next = sets_, sets_ = s;
        pthread_mutex_unlock(&sets_mu_);
        (void)pthread_setspecific(key_, s);
    }
    return s;
}

/* The thread's staging set, its block 0 made; NULL: none (the plain way). */
static stage_set *stages(size_t chunk)
{
    stage_set *s = set_of(chunk);
    if (s)
        ahead_take(s);
    return s && block(s, 0) ? s : NULL;
}

/* The spec's chunk of the streamed copies (cuda.yaml): blocks pinned ahead
 * are of this size; a copy of another chunk makes its own. */
#define STAGE_CHUNK ((size_t)4 << 20)

/* After the thread's device allocation of bytes: the blocks a copy of that
 * size would take turns on are pinned on a helper thread, unless they are
 * made or being made already. */
static void ahead_start(size_t bytes)
{
    if (bytes < STAGE_CHUNK)
        return;
    stage_set *s = set_of(STAGE_CHUNK);
    if (!s || s->ahead)
        return;
    size_t want = (bytes + STAGE_CHUNK - 1) / STAGE_CHUNK;
    int n = want < NSTAGE ? (int)want : NSTAGE, from = 0;
    while (from < n && s->blk[from]) /* made already (copies make them in order) */
        from++;
    stage_ahead *a = from < n ? calloc(1, sizeof *a) : NULL;
    if (!a)
        return;
    a->set = s, a->from = from, a->n = n;
    if (pthread_create(&a->th, NULL, ahead_main, a) != 0) {
        free(a); /* the first copy makes them */
        return;
    }
    s->ahead = a;
}

/* cuMemAlloc_v2's host wrap: the allocation, then the staging blocks of the
 * copies it announces. */
CUresult cuda_host_mem_alloc(apigen_call_ctx *cx, CUdeviceptr *dptr, size_t bytesize)
{
    (void)cx;
    CUresult e = cuMemAlloc_v2(dptr, bytesize);
    if (e == CUDA_SUCCESS)
        ahead_start(bytesize);
    return e;
}

/* Marks the sets of a context that ended (ctx, or dev's primary one). */
static void ended(CUcontext ctx, int dev)
{
    pthread_mutex_lock(&sets_mu_);
    for (stage_set *s = sets_; s; s = s->next)
        if (ctx ? s->ctx == ctx : (s->primary && (int)s->dev == dev))
            atomic_store(&s->dead, true);
    pthread_mutex_unlock(&sets_mu_);
}

static CUresult end_ctx(CUresult (*fn)(CUcontext), CUcontext ctx)
{
    pthread_mutex_lock(&ahead_mu_); /* not while a helper pins (ahead_main) */
    CUresult e = fn(ctx);
    if (e == CUDA_SUCCESS)
        ended(ctx, -1);
    pthread_mutex_unlock(&ahead_mu_);
    return e;
}

static CUresult end_primary(CUresult (*fn)(CUdevice), CUdevice dev, bool release_only)
{
    unsigned flags = 0;
    int active = 1;
    pthread_mutex_lock(&ahead_mu_); /* not while a helper pins (ahead_main) */
    CUresult e = fn(dev);
    if (e == CUDA_SUCCESS && release_only) /* the last release ends it */
        (void)cuDevicePrimaryCtxGetState(dev, &flags, &active);
    if (e == CUDA_SUCCESS && (!release_only || !active))
        ended(NULL, (int)dev);
    pthread_mutex_unlock(&ahead_mu_);
    return e;
}

CUresult cuda_host_ctx_destroy(apigen_call_ctx *cx, CUcontext ctx)
{
    (void)cx;
    return end_ctx(cuCtxDestroy_v2, ctx);
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations" /* cuCtxDetach: the client's call */
CUresult cuda_host_ctx_detach(apigen_call_ctx *cx, CUcontext ctx)
{
    (void)cx;
    return end_ctx(cuCtxDetach, ctx);
}
#pragma GCC diagnostic pop

CUresult cuda_host_primary_reset(apigen_call_ctx *cx, CUdevice dev)
{
    (void)cx;
    return end_primary(cuDevicePrimaryCtxReset_v2, dev, false);
}

CUresult cuda_host_primary_release(apigen_call_ctx *cx, CUdevice dev)
{
    (void)cx;
    return end_primary(cuDevicePrimaryCtxRelease_v2, dev, true);
}

static CUresult wait_blk(stage_set *s, int i)
{
    if (!s->busy[i])
        return CUDA_SUCCESS;
    s->busy[i] = false;
    return cuEventSynchronize(s->ev[i]);
}

static CUresult record(stage_set *s, int i, CUresult e, CUstream stream)
{
    if (e == CUDA_SUCCESS)
        e = cuEventRecord(s->ev[i], stream);
    if (e == CUDA_SUCCESS)
        s->busy[i] = true;
    return e;
}

/* The twins' reads (host_spans.c): n ranges of the client's device memory
 * in the current context, total bytes in all (at most a chunk), copied
 * into the thread's pinned block 0 on a non-blocking stream of the set's
 * own: natively the host reads mapped memory as it is, while a copy on the
 * legacy stream (cuMemcpyDtoH_v2) would wait for the work of every blocking
 * stream of the context (a collective waiting for a late peer), and from
 * pageable memory at a few GB/s. *out: the bytes back to back, until the
 * thread's next copy. CUDA_ERROR_NOT_SUPPORTED: not here (no context, no
 * pinned block, a range of another context): the caller copies plainly. */
CUresult cuda_host_read_staged(const CUdeviceptr *dev, const size_t *len, unsigned n, size_t total,
                               const void **out)
{
    stage_set *s = total <= STAGE_CHUNK ? stages(STAGE_CHUNK) : NULL;
    if (!s)
        return CUDA_ERROR_NOT_SUPPORTED;
    for (unsigned i = 0; i < n; i++) {
        CUcontext owner = NULL;
        if (len[i] &&
            (cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, dev[i]) != CUDA_SUCCESS ||
             owner != s->ctx))
            return CUDA_ERROR_NOT_SUPPORTED;
    }
    if (!s->rd && cuStreamCreate(&s->rd, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) {
        s->rd = NULL;
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    CUresult e = wait_blk(s, 0);
    unsigned char *b = s->blk[0];
    for (unsigned i = 0; i < n && e == CUDA_SUCCESS; b += len[i], i++)
        if (len[i])
            e = cuMemcpyDtoHAsync_v2(b, dev[i], len[i], s->rd);
    if (e == CUDA_SUCCESS)
        e = cuStreamSynchronize(s->rd);
    *out = s->blk[0];
    return e;
}

/* the bytes through one buffer, as the real function would copy them */
static CUresult plain(apigen_stream *st, CUdeviceptr dev, size_t n, int to_device, CUstream stream)
{
    void *buf = malloc(n ? n : 1);
    CUresult e;
    if (!buf)
        return CUDA_ERROR_OUT_OF_MEMORY; /* the runtime drops the unread bytes */
    if (to_device) {
        e = apigen_stream_read(st, buf, n) == n ? cuMemcpyHtoDAsync_v2(dev, buf, n, stream)
                                                : CUDA_ERROR_UNKNOWN;
        if (e == CUDA_SUCCESS)
            e = cuStreamSynchronize(stream);
    } else {
        e = cuMemcpyDtoHAsync_v2(buf, dev, n, stream);
        if (e == CUDA_SUCCESS)
            e = cuStreamSynchronize(stream);
        if (e == CUDA_SUCCESS && !apigen_stream_write(st, buf, n))
            e = CUDA_ERROR_UNKNOWN;
    }
    free(buf);
    return e;
}

static CUresult h2d(apigen_call_ctx *cx, apigen_stream *st, CUdeviceptr dst, size_t n,
                    CUstream stream)
{
    size_t chunk = (size_t)apigen_stream_chunk(st);
    stage_set *s = apigen_dev_owned(cx->session, dst, n, true) ? stages(chunk) : NULL;
    if (!s)
        return plain(st, dst, n, 1, stream);
    CUresult e = CUDA_SUCCESS;
    size_t off = 0;
    int i = 0, last = -1, k = blocks(s, n, chunk);
    while (off < n) {
        if ((e = wait_blk(s, i)) != CUDA_SUCCESS)
            break;
        size_t got = apigen_stream_read(st, s->blk[i], chunk);
        if (!got) {
            e = CUDA_ERROR_UNKNOWN; /* the guest went away: the connection closes */
            break;
        }
        e = record(s, i, cuMemcpyHtoDAsync_v2(dst + off, s->blk[i], got, stream), stream);
        if (e != CUDA_SUCCESS)
            break;
        last = i;
        off += got;
        i = (i + 1) % k;
    }
    if (e == CUDA_SUCCESS && last >= 0)
        e = wait_blk(s, last); /* follows every earlier chunk */
    return e;
}

static CUresult d2h(apigen_call_ctx *cx, apigen_stream *st, CUdeviceptr src, size_t n,
                    CUstream stream)
{
    size_t chunk = (size_t)apigen_stream_chunk(st);
    stage_set *s = apigen_dev_owned(cx->session, src, n, true) ? stages(chunk) : NULL;
    if (!s)
        return plain(st, src, n, 0, stream);
    CUresult e = CUDA_SUCCESS;
    size_t issued = 0, sent = 0;
    int i, k = blocks(s, n, chunk);
    for (i = 0; i < NSTAGE; i++)
        if ((e = wait_blk(s, i)) != CUDA_SUCCESS)
            return e;
    for (i = 0; i < k && issued < n && e == CUDA_SUCCESS; i++) {
        size_t k = n - issued < chunk ? n - issued : chunk;
        e = record(s, i, cuMemcpyDtoHAsync_v2(s->blk[i], src + issued, k, stream), stream);
        issued += e == CUDA_SUCCESS ? k : 0;
    }
    for (i = 0; e == CUDA_SUCCESS && sent < n; i = (i + 1) % k) {
        size_t k = n - sent < chunk ? n - sent : chunk;
        if ((e = wait_blk(s, i)) != CUDA_SUCCESS)
            break;
        if (!apigen_stream_write(st, s->blk[i], k)) {
            e = CUDA_ERROR_UNKNOWN;
            break;
        }
        sent += k;
        if (issued < n) {
            size_t m = n - issued < chunk ? n - issued : chunk;
            e = record(s, i, cuMemcpyDtoHAsync_v2(s->blk[i], src + issued, m, stream), stream);
            issued += e == CUDA_SUCCESS ? m : 0;
        }
    }
    return e;
}

CUresult cuda_stream_htod(apigen_call_ctx *cx, apigen_stream *st, CUdeviceptr dstDevice,
                          const void *srcHost, size_t ByteCount)
{
    (void)srcHost;
    return h2d(cx, st, dstDevice, ByteCount, CU_STREAM_LEGACY);
}

CUresult cuda_stream_htod_ptds(apigen_call_ctx *cx, apigen_stream *st, CUdeviceptr dstDevice,
                               const void *srcHost, size_t ByteCount)
{
    (void)srcHost;
    return h2d(cx, st, dstDevice, ByteCount, CU_STREAM_PER_THREAD);
}

CUresult cuda_stream_dtoh(apigen_call_ctx *cx, apigen_stream *st, void *dstHost,
                          CUdeviceptr srcDevice, size_t ByteCount)
{
    (void)dstHost;
    return d2h(cx, st, srcDevice, ByteCount, CU_STREAM_LEGACY);
}

CUresult cuda_stream_dtoh_ptds(apigen_call_ctx *cx, apigen_stream *st, void *dstHost,
                               CUdeviceptr srcDevice, size_t ByteCount)
{
    (void)dstHost;
    return d2h(cx, st, srcDevice, ByteCount, CU_STREAM_PER_THREAD);
}

bool cuda_host_htod_refused(apigen_call_ctx *cx, CUstream s, int ptsz, CUresult *e);

/* A large async copy from pageable memory streams like the synchronous one
 * (issue 16: 64 MiB in one frame over tcp took 12.7 ms, the streamed
 * synchronous form 5.1): queued, so the server's wait for its last chunk
 * costs the program nothing. Inside a capture it is refused as
 * host_capture.c refuses every copy of the request's bytes. */
static CUresult htod_async(apigen_call_ctx *cx, apigen_stream *st, CUdeviceptr dst, size_t n,
                           CUstream stream, int ptsz)
{
    CUresult e;
    if (cuda_host_htod_refused(cx, stream, ptsz, &e))
        return e;
    return h2d(cx, st, dst, n, ptsz && !stream ? CU_STREAM_PER_THREAD : stream);
}

CUresult cuda_stream_htod_async(apigen_call_ctx *cx, apigen_stream *st, CUdeviceptr dstDevice,
                                const void *srcHost, size_t ByteCount, CUstream hStream)
{
    (void)srcHost;
    return htod_async(cx, st, dstDevice, ByteCount, hStream, 0);
}

CUresult cuda_stream_htod_async_ptsz(apigen_call_ctx *cx, apigen_stream *st, CUdeviceptr dstDevice,
                                     const void *srcHost, size_t ByteCount, CUstream hStream)
{
    (void)srcHost;
    return htod_async(cx, st, dstDevice, ByteCount, hStream, 1);
}

/* A captured copy would keep the staging blocks in its graph, which later
 * copies reuse: refused, as specs/cudart does. */
static CUresult dtoh_async(apigen_call_ctx *cx, apigen_stream *st, CUdeviceptr src, size_t n,
                           CUstream stream, int ptsz)
{
    CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
    if ((ptsz ? cuStreamIsCapturing_ptsz(stream, &cs) : cuStreamIsCapturing(stream, &cs)) ==
            CUDA_SUCCESS &&
        cs != CU_STREAM_CAPTURE_STATUS_NONE)
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    return d2h(cx, st, src, n, ptsz && !stream ? CU_STREAM_PER_THREAD : stream);
}

CUresult cuda_stream_dtoh_async(apigen_call_ctx *cx, apigen_stream *st, void *dstHost,
                                CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)
{
    (void)dstHost;
    return dtoh_async(cx, st, srcDevice, ByteCount, hStream, 0);
}

CUresult cuda_stream_dtoh_async_ptsz(apigen_call_ctx *cx, apigen_stream *st, void *dstHost,
                                     CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)
{
    (void)dstHost;
    return dtoh_async(cx, st, srcDevice, ByteCount, hStream, 1);
}
