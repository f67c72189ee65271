/* Hand-written host code for specs/exa.yaml: the hooks of the streamed
 * copies (`stream:`). A copy of at least the spec's `min` bytes reaches the
 * hook instead of the real function; the hook moves it chunk by chunk with
 * the real library, as each chunk arrives (in) or before it leaves (out).
 * exa is a CPU library, so there is nothing to overlap here: these hooks
 * exist so the generic streaming path runs, and is compared with the native
 * results, in every test. The result is what one real call would return:
 * arguments are checked by a zero-byte call first where the library checks
 * them before copying. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "apigen_rt.h"
#include "exa.h"

/* One chunk-sized buffer per server thread, kept for the next copy and
 * freed when the thread ends. */
typedef struct stage_buf {
    size_t n;
    unsigned char bytes[];
} stage_buf;

static pthread_key_t stage_key;
static pthread_once_t stage_once = PTHREAD_ONCE_INIT;
static void stage_init(void) { (void)pthread_key_create(&stage_key, free); }

static void *stage(size_t n)
{
    pthread_once(&stage_once, stage_init);
    stage_buf *b = pthread_getspecific(stage_key);
    if (!b || b->n < n) {
        free(b);
        b = malloc(sizeof *b + n);
        if (b)
            b->n = n;
        (void)pthread_setspecific(stage_key, b);
    }
    return b ? b->bytes : NULL;
}

/* Host to device: each chunk goes to the device as it arrives. */
static exaStatus copy_in(apigen_stream *s, exaStatus (*put)(void *at, size_t off, const void *p,
                                                              size_t n),
                         void *at)
{
    size_t chunk = (size_t)apigen_stream_chunk(s), got;
    uint8_t *buf = stage(chunk);
    if (!buf)
        return EXA_ERROR_OUT_OF_MEMORY; /* the runtime drops the unread bytes */
    exaStatus st = EXA_SUCCESS;
    uint64_t off = 0;
    while (st == EXA_SUCCESS && (got = apigen_stream_read(s, buf, chunk)) > 0) {
        st = put(at, (size_t)off, buf, got);
        off += got;
    }
    if (st == EXA_SUCCESS && off != apigen_stream_size(s))
        st = EXA_ERROR_CONNECTION_LOST; /* the guest went away mid-copy */
    return st;
}

/* Device to host: each chunk leaves once the library produced it. */
static exaStatus copy_out(apigen_stream *s, exaStatus (*get)(void *at, size_t off, void *p,
                                                               size_t n),
                          void *at)
{
    size_t chunk = (size_t)apigen_stream_chunk(s);
    uint64_t n = apigen_stream_size(s), off = 0;
    uint8_t *buf = stage(chunk);
    if (!buf)
        return EXA_ERROR_OUT_OF_MEMORY;
    while (off < n) {
        size_t k = n - off < chunk ? (size_t)(n - off) : chunk;
        exaStatus st = get(at, (size_t)off, buf, k);
        if (st != EXA_SUCCESS)
            return st; /* the guest keeps the chunks that left before */
        if (!apigen_stream_write(s, buf, k))
            return EXA_ERROR_CONNECTION_LOST;
        off += k;
    }
    return EXA_SUCCESS;
}

static exaStatus memcpy_put(void *dev, size_t off, const void *p, size_t n)
{
    return exaMemcpy((uint8_t *)dev + off, p, n, EXA_COPY_HOST_TO_DEVICE);
}

static exaStatus memcpy_get(void *dev, size_t off, void *p, size_t n)
{
    return exaMemcpy(p, (const uint8_t *)dev + off, n, EXA_COPY_DEVICE_TO_HOST);
}

/* The library checks the whole device range before it copies a byte: so
 * does the hook, against the client's ranges (which are exa's allocations). */
exaStatus exa_stream_memcpy(apigen_call_ctx *cx, apigen_stream *s, void *dst, const void *src,
                            size_t bytes, exaCopyKind kind)
{
    const void *dev = kind == EXA_COPY_HOST_TO_DEVICE ? dst : src;
    if (!apigen_dev_owned(cx->session, (uint64_t)(uintptr_t)dev, bytes, true))
        return EXA_ERROR_OUT_OF_RANGE; /* its start is the client's: the handler checked */
    if (kind == EXA_COPY_HOST_TO_DEVICE)
        return copy_in(s, memcpy_put, dst);
    return copy_out(s, memcpy_get, (void *)src);
}

/* Buffer objects: where offset + bytes exceeds the buffer, the real library
 * refuses the whole call before copying, so ask it first with the whole
 * range (a read of the last byte) and copy only when it agrees. */
typedef struct buf_at {
    exaBuffer buffer;
    size_t offset;
} buf_at;

static exaStatus write_put(void *at, size_t off, const void *p, size_t n)
{
    buf_at *b = at;
    return exaWriteBuffer(b->buffer, b->offset + off, n, p);
}

static exaStatus read_get(void *at, size_t off, void *p, size_t n)
{
    buf_at *b = at;
    return exaReadBuffer(b->buffer, b->offset + off, n, p);
}

static exaStatus range_ok(exaBuffer buffer, size_t offset, size_t bytes)
{
    uint8_t last;
    if (offset + bytes < offset)
        return EXA_ERROR_OUT_OF_RANGE;
    return exaReadBuffer(buffer, offset + bytes - 1, 1, &last);
}

exaStatus exa_stream_write_buffer(apigen_call_ctx *cx, apigen_stream *s, exaBuffer buffer, size_t offset, size_t bytes,
                                  const void *src)
{
    (void)cx;
    (void)src;
    exaStatus st = range_ok(buffer, offset, bytes);
    buf_at at = {buffer, offset};
    return st == EXA_SUCCESS ? copy_in(s, write_put, &at) : st;
}

exaStatus exa_stream_read_buffer(apigen_call_ctx *cx, apigen_stream *s, exaBuffer buffer, size_t offset, size_t bytes,
                                 void *dst)
{
    (void)cx;
    (void)dst;
    exaStatus st = range_ok(buffer, offset, bytes);
    buf_at at = {buffer, offset};
    return st == EXA_SUCCESS ? copy_out(s, read_get, &at) : st;
}
