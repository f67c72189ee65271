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
#include <stdatomic.h>
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
 * copy (events belong to the device that was current when they were made).
 * A block is made when a copy first needs it: each costs ~0.7 ms plus
 * ~0.3 ms per MiB pinned (H200), and a first copy of one chunk paid for all
 * NSTAGE (issue 16: a first 4 MiB copy over tcp 6.9 ms, later ones 0.4).
 * Making them on a helper thread while the first copies went the plain way
 * was no faster: the pageable copy waited for the pinning (9.4 ms). */
typedef struct stage_ahead stage_ahead;
typedef struct stage_set {
    void *blk[NSTAGE]; /* NULL until a copy needs it */
    cudaEvent_t ev[NSTAGE];
    bool busy[NSTAGE]; /* a copy into or out of blk[i] may still run: wait on ev[i] */
    size_t size;       /* bytes per block */
    int device;
    unsigned gen;       /* the device's reset generation when they were made */
    stage_ahead *ahead; /* blocks being pinned on a helper thread (stage_ahead_start) */
} stage_set;

/* cudaDeviceReset frees the device's pinned blocks and events: a set made
 * before it is never used nor freed again (a GPU run of 2026-11-27 had the
 * next copy receive into the freed block: "Bad address", session lost). */
#define MAX_DEVICES 64
static atomic_uint reset_gen_[MAX_DEVICES];

static unsigned gen_of(int device)
{
    return device >= 0 && device < MAX_DEVICES ? atomic_load(&reset_gen_[device]) : 0;
}

static pthread_key_t stage_key;
static pthread_once_t stage_once = PTHREAD_ONCE_INIT;

/* Pinning ahead (issue 16): a device allocation of at least one chunk says
 * large pageable copies are likely to come (the guest opens its lanes on the
 * same sign), so the thread's blocks are pinned on a helper thread while the
 * program goes on allocating and filling its buffers; the first copy then
 * finds them made (a first 4 MiB copy over tcp paid ~2 ms of pinning, 2538
 * us against 477 for a later one, H200 2026-11-27). The set's thread joins
 * the helper before it touches the set (stage_ahead_take); a device reset
 * waits for a helper that is pinning (ahead_mu_), so blocks are either made
 * before it (freed by it) or after it. */
struct stage_ahead {
    pthread_t th;
    int device;
    int from, n; /* blocks from..n-1 of the set were missing */
    size_t size;
    unsigned gen; /* the device's reset generation when they were made */
    void *blk[NSTAGE];
    cudaEvent_t ev[NSTAGE];
};

static pthread_mutex_t ahead_mu_ = PTHREAD_MUTEX_INITIALIZER;

static void *stage_ahead_main(void *arg)
{
    stage_ahead *a = arg;
    pthread_mutex_lock(&ahead_mu_);
    a->gen = gen_of(a->device);
    if (cudaSetDevice(a->device) == cudaSuccess)
        for (int i = a->from; i < a->n; i++) {
            if (cudaHostAlloc(&a->blk[i], a->size, cudaHostAllocPortable) != cudaSuccess) {
                a->blk[i] = NULL;
                break;
            }
            if (cudaEventCreateWithFlags(&a->ev[i], cudaEventDisableTiming) != cudaSuccess) {
                (void)cudaFreeHost(a->blk[i]);
                a->blk[i] = NULL;
                break;
            }
        }
    pthread_mutex_unlock(&ahead_mu_);
    return NULL;
}

/* Waits for s's helper and takes the blocks it made: into s when both are
 * of the device's present generation, freed when only they are, left to the
 * reset that freed them otherwise. */
static void stage_ahead_take(stage_set *s)
{
    stage_ahead *a = s->ahead;
    if (!a)
        return;
    pthread_join(a->th, NULL);
    s->ahead = NULL;
    bool live = a->gen == gen_of(a->device);
    for (int i = a->from; i < a->n; i++) {
        if (!a->blk[i])
            continue;
        if (live && s->gen == a->gen && !s->blk[i]) {
            s->blk[i] = a->blk[i], s->ev[i] = a->ev[i];
        } else if (live) {
            (void)cudaEventDestroy(a->ev[i]);
            (void)cudaFreeHost(a->blk[i]);
        }
    }
    free(a);
}

static void stage_release(stage_set *s)
{
    if (!s)
        return;
    stage_ahead_take(s);
    if (s->gen == gen_of(s->device)) /* else the reset freed them */
        for (int i = 0; i < NSTAGE; i++) {
            if (s->busy[i])
                (void)cudaEventSynchronize(s->ev[i]);
            if (s->ev[i])
                (void)cudaEventDestroy(s->ev[i]);
            if (s->blk[i])
                (void)cudaFreeHost(s->blk[i]);
        }
    free(s);
}

static void stage_free(void *p)
{
    stage_release(p);
}

static void stage_init(void)
{
    (void)pthread_key_create(&stage_key, stage_free);
}

/* Block i of s, made now if it is not yet; false: it cannot be (the
 * runtime's last error is left as it was). */
static bool stage_block(stage_set *s, int i)
{
    if (s->blk[i])
        return true;
    cudaError_t before = cudaPeekAtLastError();
    if (cudaHostAlloc(&s->blk[i], s->size, cudaHostAllocPortable) == cudaSuccess &&
        cudaEventCreateWithFlags(&s->ev[i], cudaEventDisableTiming) == cudaSuccess)
        return true;
    if (s->blk[i])
        (void)cudaFreeHost(s->blk[i]);
    s->blk[i] = NULL;
    if (before == cudaSuccess)
        (void)cudaGetLastError(); /* not the application's error */
    return false;
}

/* The thread's staging set of chunk-byte blocks on the current device (its
 * blocks made or not); NULL: none can be had. */
static stage_set *stage_set_of(size_t chunk)
{
    int dev = 0;
    pthread_once(&stage_once, stage_init);
    stage_set *s = pthread_getspecific(stage_key);
    if (cudaGetDevice(&dev) != cudaSuccess)
        return NULL;
    if (!(s && s->size >= chunk && s->device == dev && s->gen == gen_of(dev))) {
        stage_release(s);
        (void)pthread_setspecific(stage_key, NULL);
        if (!(s = calloc(1, sizeof *s)))
            return NULL;
        s->size = chunk, s->device = dev, s->gen = gen_of(dev);
        (void)pthread_setspecific(stage_key, s);
    }
    return s;
}

/* The thread's staging set, its block 0 made; NULL: none can be had (the
 * caller copies through the runtime). */
static stage_set *stages(size_t chunk)
{
    stage_set *s = stage_set_of(chunk);
    if (s)
        stage_ahead_take(s);
    return s && stage_block(s, 0) ? s : NULL;
}

/* The spec's chunk of cudaMemcpy and cudaMemcpyAsync (cudart.yaml): blocks
 * pinned ahead are of this size; a copy of another chunk makes its own. */
#define STAGE_CHUNK ((size_t)4 << 20)

/* After the thread's device allocation of bytes: the blocks a copy of that
 * size would take turns on are pinned on a helper thread, unless they are
 * made or being made already. */
static void stage_ahead_start(size_t bytes)
{
    if (bytes < STAGE_CHUNK)
        return;
    stage_set *s = stage_set_of(STAGE_CHUNK);
    if (!s || s->ahead)
        return;
    size_t want = (bytes + STAGE_CHUNK - 1) / STAGE_CHUNK;
    int n = want < NSTAGE ? (int)want : NSTAGE, from = 0;
    while (from < n && s->blk[from]) /* made already (copies make them in order) */
        from++;
    stage_ahead *a = from < n ? calloc(1, sizeof *a) : NULL;
    if (!a)
        return;
    a->device = s->device, a->from = from, a->n = n, a->size = s->size;
    if (pthread_create(&a->th, NULL, stage_ahead_main, a) != 0) {
        free(a); /* the first copy makes them */
        return;
    }
    s->ahead = a;
}

/* cudaMalloc's host wrap: the allocation, then the staging blocks of the
 * copies it announces. */
cudaError_t cudart_host_malloc(apigen_call_ctx *cx, void **devPtr, size_t size)
{
    (void)cx;
    cudaError_t e = cudaMalloc(devPtr, size);
    if (e == cudaSuccess)
        stage_ahead_start(size);
    return e;
}

/* How many blocks a copy of count bytes in pieces of chunk takes turns on: one per piece up to
 * NSTAGE, made now if need be (fewer when one cannot be). */
static int stage_blocks(stage_set *s, size_t count, size_t chunk)
{
    int k = 1;
    while (k < NSTAGE && (size_t)k * chunk < count && stage_block(s, k))
        k++;
    return k;
}

static cudaError_t reset(cudaError_t (*fn)(void))
{
    int dev = -1;
    if (cudaGetDevice(&dev) != cudaSuccess)
        dev = -1;
    pthread_mutex_lock(&ahead_mu_); /* not while a helper pins (stage_ahead_main) */
    cudaError_t e = fn();
    if (e == cudaSuccess && dev >= 0 && dev < MAX_DEVICES)
        atomic_fetch_add(&reset_gen_[dev], 1);
    pthread_mutex_unlock(&ahead_mu_);
    return e;
}

void cudart_host_kernels_gone(void); /* host.c: kernel handles' layouts */

cudaError_t cudart_host_device_reset(apigen_call_ctx *cx)
{
    (void)cx;
    cudaError_t e = reset(cudaDeviceReset);
    if (e == cudaSuccess) cudart_host_kernels_gone(); /* its libraries' kernels went */
    return e;
}

#ifdef APIGEN_HAS_FN_cudaThreadExit
cudaError_t cudart_host_thread_exit(apigen_call_ctx *cx)
{
    (void)cx;
    return reset(cudaThreadExit);
}
#endif

/* Waits until block i is free; the error of the copy that used it. */
static cudaError_t stage_wait(stage_set *s, int i)
{
    if (!s->busy[i])
        return cudaSuccess;
    s->busy[i] = false;
    return cudaEventSynchronize(s->ev[i]);
}

static cudaError_t stage_issue(stage_set *s, int i, void *dst, const void *src, size_t n,
                               enum cudaMemcpyKind kind, cudaStream_t stream)
{
    cudaError_t e = cudaMemcpyAsync(dst, src, n, kind, stream);
    if (e == cudaSuccess)
        e = cudaEventRecord(s->ev[i], stream);
    if (e == cudaSuccess)
        s->busy[i] = true;
    return e;
}

/* What a copy with no staging blocks does: the bytes through one buffer. */
static cudaError_t copy_plain(apigen_stream *st, void *dst, const void *src, size_t count,
                              enum cudaMemcpyKind kind, cudaStream_t stream)
{
    void *buf = malloc(count ? count : 1);
    cudaError_t e;
    if (!buf)
        return cudaErrorMemoryAllocation; /* the runtime drops the unread bytes */
    if (kind == cudaMemcpyHostToDevice) {
        e = apigen_stream_read(st, buf, count) == count
                ? cudaMemcpyAsync(dst, buf, count, kind, stream)
                : cudaErrorUnknown;
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(stream);
    } else {
        e = cudaMemcpyAsync(buf, src, count, kind, stream);
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(stream);
        if (e == cudaSuccess && !apigen_stream_write(st, buf, count))
            e = cudaErrorUnknown;
    }
    free(buf);
    return e;
}

static cudaError_t copy_h2d(apigen_stream *st, void *dst, size_t count, cudaStream_t stream)
{
    size_t chunk = (size_t)apigen_stream_chunk(st);
    stage_set *s = stages(chunk);
    if (!s)
        return copy_plain(st, dst, NULL, count, cudaMemcpyHostToDevice, stream);
    cudaError_t e = cudaSuccess;
    size_t off = 0;
    int i = 0, last = -1, k = stage_blocks(s, count, chunk);
    while (off < count) {
        if ((e = stage_wait(s, i)) != cudaSuccess)
            break;
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
        i = (i + 1) % k;
    }
    /* done when the last chunk landed (its event follows every earlier one) */
    if (e == cudaSuccess && last >= 0)
        e = stage_wait(s, last);
    return e;
}

static cudaError_t copy_d2h(apigen_stream *st, const void *src, size_t count, cudaStream_t stream)
{
    size_t chunk = (size_t)apigen_stream_chunk(st);
    stage_set *s = stages(chunk);
    if (!s)
        return copy_plain(st, NULL, src, count, cudaMemcpyDeviceToHost, stream);
    cudaError_t e = cudaSuccess;
    size_t issued = 0, sent = 0;
    int i, k = stage_blocks(s, count, chunk);
    for (i = 0; i < NSTAGE; i++) /* blocks a copy of an earlier call may still use */
        if ((e = stage_wait(s, i)) != cudaSuccess)
            return e;
    for (i = 0; i < k && issued < count && e == cudaSuccess; i++) {
        size_t n = count - issued < chunk ? count - issued : chunk;
        e = stage_issue(s, i, s->blk[i], (const char *)src + issued, n, cudaMemcpyDeviceToHost,
                        stream);
        issued += e == cudaSuccess ? n : 0;
    }
    for (i = 0; e == cudaSuccess && sent < count; i = (i + 1) % k) {
        size_t n = count - sent < chunk ? count - sent : chunk;
        if ((e = stage_wait(s, i)) != cudaSuccess)
            break;
        if (!apigen_stream_write(st, s->blk[i], n)) {
            e = cudaErrorUnknown; /* the guest went away: the connection closes */
            break;
        }
        sent += n;
        if (issued < count) {
            size_t m = count - issued < chunk ? count - issued : chunk;
            e = stage_issue(s, i, s->blk[i], (const char *)src + issued, m, cudaMemcpyDeviceToHost,
                            stream);
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
    if (kind == cudaMemcpyHostToDevice)
        return copy_h2d(st, dst, count, stream);
    return copy_d2h(st, src, count, stream);
}

cudaError_t cudart_stream_memcpy(apigen_call_ctx *cx, apigen_stream *st, void *dst, const void *src,
                                 size_t count, enum cudaMemcpyKind kind)
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
    if (cudart_host_capturing(stream, false))
        return cudaErrorStreamCaptureUnsupported;
    return stream_copy(cx, st, dst, src, count, kind, stream);
}

cudaError_t cudart_stream_memcpy_async_ptsz(apigen_call_ctx *cx, apigen_stream *st, void *dst,
                                            const void *src, size_t count, enum cudaMemcpyKind kind,
                                            cudaStream_t stream)
{
    if (cudart_host_capturing(stream, true))
        return cudaErrorStreamCaptureUnsupported;
    return stream_copy(cx, st, dst, src, count, kind, stream ? stream : cudaStreamPerThread);
}
