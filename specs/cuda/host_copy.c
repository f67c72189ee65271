/* Host side of the CUDA driver stub's pipelined copies (`stream:` on
 * cuMemcpyHtoD_v2, cuMemcpyDtoH_v2, cuMemcpyDtoHAsync_v2 and their per-thread
 * forms), the design of specs/cudart/host_copy.c over the driver: a pageable
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
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apigen_rt.h"
#include "cuda_wire.h"

#define NSTAGE 3

typedef struct stage_set {
    void *blk[NSTAGE];
    CUevent ev[NSTAGE];
    bool busy[NSTAGE];
    size_t size;
    CUcontext ctx; /* events belong to the context that was current */
} stage_set;

static pthread_key_t key_;
static pthread_once_t once_ = PTHREAD_ONCE_INIT;

static void release(stage_set *s)
{
    for (int i = 0; i < NSTAGE; i++) {
        if (s->busy[i]) (void)cuEventSynchronize(s->ev[i]);
        if (s->ev[i]) (void)cuEventDestroy_v2(s->ev[i]);
        if (s->blk[i]) (void)cuMemFreeHost(s->blk[i]);
    }
    memset(s, 0, sizeof *s);
}

static void free_set(void *p)
{
    if (p) release(p);
    free(p);
}

static void init_key(void) { (void)pthread_key_create(&key_, free_set); }

static stage_set *stages(size_t chunk)
{
    CUcontext ctx = NULL;
    pthread_once(&once_, init_key);
    if (cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx) return NULL;
    stage_set *s = pthread_getspecific(key_);
    if (s && s->size >= chunk && s->ctx == ctx) return s;
    if (s) release(s);
    else if (!(s = calloc(1, sizeof *s))) return NULL;
    (void)pthread_setspecific(key_, s);
    for (int i = 0; i < NSTAGE; i++)
        if (cuMemHostAlloc(&s->blk[i], chunk, CU_MEMHOSTALLOC_PORTABLE) != CUDA_SUCCESS ||
            cuEventCreate(&s->ev[i], CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
            release(s);
            return NULL;
        }
    s->size = chunk;
    s->ctx = ctx;
    return s;
}

static CUresult wait_blk(stage_set *s, int i)
{
    if (!s->busy[i]) return CUDA_SUCCESS;
    s->busy[i] = false;
    return cuEventSynchronize(s->ev[i]);
}

static CUresult record(stage_set *s, int i, CUresult e, CUstream stream)
{
    if (e == CUDA_SUCCESS) e = cuEventRecord(s->ev[i], stream);
    if (e == CUDA_SUCCESS) s->busy[i] = true;
    return e;
}

/* the bytes through one buffer, as the real function would copy them */
static CUresult plain(apigen_stream *st, CUdeviceptr dev, size_t n, int to_device, CUstream stream)
{
    void *buf = malloc(n ? n : 1);
    CUresult e;
    if (!buf) return CUDA_ERROR_OUT_OF_MEMORY; /* the runtime drops the unread bytes */
    if (to_device) {
        e = apigen_stream_read(st, buf, n) == n ? cuMemcpyHtoDAsync_v2(dev, buf, n, stream)
                                                : CUDA_ERROR_UNKNOWN;
        if (e == CUDA_SUCCESS) e = cuStreamSynchronize(stream);
    } else {
        e = cuMemcpyDtoHAsync_v2(buf, dev, n, stream);
        if (e == CUDA_SUCCESS) e = cuStreamSynchronize(stream);
        if (e == CUDA_SUCCESS && !apigen_stream_write(st, buf, n)) e = CUDA_ERROR_UNKNOWN;
    }
    free(buf);
    return e;
}

static CUresult h2d(apigen_call_ctx *cx, apigen_stream *st, CUdeviceptr dst, size_t n,
                    CUstream stream)
{
    size_t chunk = (size_t)apigen_stream_chunk(st);
    stage_set *s = apigen_dev_owned(cx->session, dst, n, true) ? stages(chunk) : NULL;
    if (!s) return plain(st, dst, n, 1, stream);
    CUresult e = CUDA_SUCCESS;
    size_t off = 0;
    int i = 0, last = -1;
    while (off < n) {
        if ((e = wait_blk(s, i)) != CUDA_SUCCESS) break;
        size_t got = apigen_stream_read(st, s->blk[i], chunk);
        if (!got) {
            e = CUDA_ERROR_UNKNOWN; /* the guest went away: the connection closes */
            break;
        }
        e = record(s, i, cuMemcpyHtoDAsync_v2(dst + off, s->blk[i], got, stream), stream);
        if (e != CUDA_SUCCESS) break;
        last = i;
        off += got;
        i = (i + 1) % NSTAGE;
    }
    if (e == CUDA_SUCCESS && last >= 0) e = wait_blk(s, last); /* follows every earlier chunk */
    return e;
}

static CUresult d2h(apigen_call_ctx *cx, apigen_stream *st, CUdeviceptr src, size_t n,
                    CUstream stream)
{
    size_t chunk = (size_t)apigen_stream_chunk(st);
    stage_set *s = apigen_dev_owned(cx->session, src, n, true) ? stages(chunk) : NULL;
    if (!s) return plain(st, src, n, 0, stream);
    CUresult e = CUDA_SUCCESS;
    size_t issued = 0, sent = 0;
    int i;
    for (i = 0; i < NSTAGE; i++)
        if ((e = wait_blk(s, i)) != CUDA_SUCCESS) return e;
    for (i = 0; i < NSTAGE && issued < n && e == CUDA_SUCCESS; i++) {
        size_t k = n - issued < chunk ? n - issued : chunk;
        e = record(s, i, cuMemcpyDtoHAsync_v2(s->blk[i], src + issued, k, stream), stream);
        issued += e == CUDA_SUCCESS ? k : 0;
    }
    for (i = 0; e == CUDA_SUCCESS && sent < n; i = (i + 1) % NSTAGE) {
        size_t k = n - sent < chunk ? n - sent : chunk;
        if ((e = wait_blk(s, i)) != CUDA_SUCCESS) break;
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
