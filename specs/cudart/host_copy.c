/* Hand-written host code of the cudart spec: the hooks of the streamed
 * copies (`stream:` on cudaMemcpy / cudaMemcpyAsync and their per-thread
 * variants). A pageable copy of at least the spec's `min` bytes reaches
 * these instead of the real function, as a stream of chunks:
 *
 * - host to device: each chunk is received into one of NSTAGE pinned
 *   staging blocks and copied with cudaMemcpyAsync on the call's stream,
 *   so the device copy of chunk k overlaps the transport of chunk k + 1; a
 *   block is reused once its event says its copy is done;
 * - device to host: the device copies of the first NSTAGE chunks are issued
 *   ahead; chunk k is sent once its event completed, while the device
 *   copies chunk k + 1, and its block then takes chunk k + NSTAGE.
 *
 * Semantics are the real function's: cudaMemcpy runs on the legacy default
 * stream (the per-thread one for cudaMemcpy_ptds) and returns when the copy
 * is done; cudaMemcpyAsync from or to pageable memory is synchronous for
 * the host, as natively. The first chunk's error is the real one; a copy
 * that fails part way returns its error (the runtime keeps the framing). */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apigen_rt.h"
#include "cudart_wire.h"

#define NSTAGE 3

/* host_capture.c: whether work on a stream is being captured */
bool cudart_host_capturing(cudaStream_t stream, bool ptsz);

/* Per server thread: pinned blocks and their events, kept for the next
 * copy (events belong to the device that was current when they were made). */
typedef struct stage_set {
    void *blk[NSTAGE];
    cudaEvent_t ev[NSTAGE];
    bool busy[NSTAGE]; /* a copy into or out of blk[i] may still run: wait on ev[i] */
    size_t size;       /* bytes per block */
    int device;
} stage_set;

static pthread_key_t stage_key;
static pthread_once_t stage_once = PTHREAD_ONCE_INIT;

static void stage_release(stage_set *s)
{
    for (int i = 0; i < NSTAGE; i++) {
        if (s->busy[i]) (void)cudaEventSynchronize(s->ev[i]);
        if (s->ev[i]) (void)cudaEventDestroy(s->ev[i]);
        if (s->blk[i]) (void)cudaFreeHost(s->blk[i]);
    }
}

static void stage_free(void *p)
{
    if (!p) return;
    stage_release(p);
    free(p);
}

static void stage_init(void) { (void)pthread_key_create(&stage_key, stage_free); }

/* The thread's staging blocks of at least chunk bytes on the current
 * device; NULL: none can be had (the caller copies through the runtime). */
static stage_set *stages(size_t chunk)
{
    int dev = 0;
    pthread_once(&stage_once, stage_init);
    stage_set *s = pthread_getspecific(stage_key);
    if (cudaGetDevice(&dev) != cudaSuccess) return NULL;
    if (s && s->size >= chunk && s->device == dev) return s;
    if (s) {
        stage_release(s);
        memset(s, 0, sizeof *s);
    } else if (!(s = calloc(1, sizeof *s))) {
        return NULL;
    }
    (void)pthread_setspecific(stage_key, s);
    for (int i = 0; i < NSTAGE; i++)
        if (cudaHostAlloc(&s->blk[i], chunk, cudaHostAllocPortable) != cudaSuccess ||
            cudaEventCreateWithFlags(&s->ev[i], cudaEventDisableTiming) != cudaSuccess) {
            (void)cudaGetLastError(); /* not the application's error */
            stage_release(s);
            memset(s, 0, sizeof *s);
            return NULL;
        }
    s->size = chunk;
    s->device = dev;
    return s;
}

/* Waits until block i is free; the error of the copy that used it. */
static cudaError_t stage_wait(stage_set *s, int i)
{
    if (!s->busy[i]) return cudaSuccess;
    s->busy[i] = false;
    return cudaEventSynchronize(s->ev[i]);
}

static cudaError_t stage_issue(stage_set *s, int i, void *dst, const void *src, size_t n,
                               enum cudaMemcpyKind kind, cudaStream_t stream)
{
    cudaError_t e = cudaMemcpyAsync(dst, src, n, kind, stream);
    if (e == cudaSuccess) e = cudaEventRecord(s->ev[i], stream);
    if (e == cudaSuccess) s->busy[i] = true;
    return e;
}

/* What a copy with no staging blocks does: the bytes through one buffer. */
static cudaError_t copy_plain(apigen_stream *st, void *dst, const void *src, size_t count,
                              enum cudaMemcpyKind kind, cudaStream_t stream)
{
    void *buf = malloc(count ? count : 1);
    cudaError_t e;
    if (!buf) return cudaErrorMemoryAllocation; /* the runtime drops the unread bytes */
    if (kind == cudaMemcpyHostToDevice) {
        e = apigen_stream_read(st, buf, count) == count ? cudaMemcpyAsync(dst, buf, count, kind, stream)
                                                        : cudaErrorUnknown;
        if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    } else {
        e = cudaMemcpyAsync(buf, src, count, kind, stream);
        if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
        if (e == cudaSuccess && !apigen_stream_write(st, buf, count)) e = cudaErrorUnknown;
    }
    free(buf);
    return e;
}

static cudaError_t copy_h2d(apigen_stream *st, void *dst, size_t count, cudaStream_t stream)
{
    size_t chunk = (size_t)apigen_stream_chunk(st);
    stage_set *s = stages(chunk);
    if (!s) return copy_plain(st, dst, NULL, count, cudaMemcpyHostToDevice, stream);
    cudaError_t e = cudaSuccess;
    size_t off = 0;
    int i = 0, last = -1;
    while (off < count) {
        if ((e = stage_wait(s, i)) != cudaSuccess) break;
        size_t got = apigen_stream_read(st, s->blk[i], chunk);
        if (got == 0) {
            e = cudaErrorUnknown; /* the guest went away: the connection closes */
            break;
        }
        if ((e = stage_issue(s, i, (char *)dst + off, s->blk[i], got, cudaMemcpyHostToDevice,
                             stream)) != cudaSuccess)
            break;
        last = i;
        off += got;
        i = (i + 1) % NSTAGE;
    }
    /* done when the last chunk landed (its event follows every earlier one) */
    if (e == cudaSuccess && last >= 0) e = stage_wait(s, last);
    return e;
}

static cudaError_t copy_d2h(apigen_stream *st, const void *src, size_t count, cudaStream_t stream)
{
    size_t chunk = (size_t)apigen_stream_chunk(st);
    stage_set *s = stages(chunk);
    if (!s) return copy_plain(st, NULL, src, count, cudaMemcpyDeviceToHost, stream);
    cudaError_t e = cudaSuccess;
    size_t issued = 0, sent = 0;
    int i;
    for (i = 0; i < NSTAGE; i++) /* blocks a copy of an earlier call may still use */
        if ((e = stage_wait(s, i)) != cudaSuccess) return e;
    for (i = 0; i < NSTAGE && issued < count && e == cudaSuccess; i++) {
        size_t n = count - issued < chunk ? count - issued : chunk;
        e = stage_issue(s, i, s->blk[i], (const char *)src + issued, n, cudaMemcpyDeviceToHost,
                        stream);
        issued += e == cudaSuccess ? n : 0;
    }
    for (i = 0; e == cudaSuccess && sent < count; i = (i + 1) % NSTAGE) {
        size_t n = count - sent < chunk ? count - sent : chunk;
        if ((e = stage_wait(s, i)) != cudaSuccess) break;
        if (!apigen_stream_write(st, s->blk[i], n)) {
            e = cudaErrorUnknown; /* the guest went away: the connection closes */
            break;
        }
        sent += n;
        if (issued < count) {
            size_t m = count - issued < chunk ? count - issued : chunk;
            e = stage_issue(s, i, s->blk[i], (const char *)src + issued, m,
                            cudaMemcpyDeviceToHost, stream);
            issued += e == cudaSuccess ? m : 0;
        }
    }
    return e;
}

/* The real runtime checks the whole device range before it copies a byte:
 * a range that is not inside one allocation of the client takes the plain
 * path, whose real copy says what is wrong with it. */
static cudaError_t stream_copy(apigen_call_ctx *cx, apigen_stream *st, void *dst, const void *src,
                               size_t count, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    const void *dev = kind == cudaMemcpyHostToDevice ? dst : src;
    if (!apigen_dev_owned(cx->session, (uint64_t)(uintptr_t)dev, count, true))
        return copy_plain(st, dst, src, count, kind, stream);
    if (kind == cudaMemcpyHostToDevice) return copy_h2d(st, dst, count, stream);
    return copy_d2h(st, src, count, stream);
}

cudaError_t cudart_stream_memcpy(apigen_call_ctx *cx, apigen_stream *st, void *dst,
                                 const void *src, size_t count, enum cudaMemcpyKind kind)
{
    return stream_copy(cx, st, dst, src, count, kind, cudaStreamLegacy);
}

cudaError_t cudart_stream_memcpy_ptds(apigen_call_ctx *cx, apigen_stream *st, void *dst,
                                      const void *src, size_t count, enum cudaMemcpyKind kind)
{
    return stream_copy(cx, st, dst, src, count, kind, cudaStreamPerThread);
}

/* A capture would keep the staging blocks in its graph, which later copies
 * reuse: refused (the guest library never streams a captured copy: it
 * names the arena instead, see host_capture.c). */
cudaError_t cudart_stream_memcpy_async(apigen_call_ctx *cx, apigen_stream *st, void *dst,
                                       const void *src, size_t count, enum cudaMemcpyKind kind,
                                       cudaStream_t stream)
{
    if (cudart_host_capturing(stream, false)) return cudaErrorStreamCaptureUnsupported;
    return stream_copy(cx, st, dst, src, count, kind, stream);
}

cudaError_t cudart_stream_memcpy_async_ptsz(apigen_call_ctx *cx, apigen_stream *st, void *dst,
                                            const void *src, size_t count,
                                            enum cudaMemcpyKind kind, cudaStream_t stream)
{
    if (cudart_host_capturing(stream, true)) return cudaErrorStreamCaptureUnsupported;
    return stream_copy(cx, st, dst, src, count, kind, stream ? stream : cudaStreamPerThread);
}
