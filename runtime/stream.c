/* Streamed bulk arguments (spec `stream:`), server side: a large in-buffer
 * handed to the spec's host hook chunk by chunk as it arrives from the
 * transport, and a large out-buffer sent as APIGEN_F_STREAM frames ahead of
 * the reply while the hook produces the next chunk. Whatever a hook does,
 * the framing stays intact: unread in-bytes are discarded afterwards. */
#define _GNU_SOURCE
#include "rt_internal.h"

#include <stdlib.h>
#include <string.h>

#define DISCARD_BUF (64u << 10)

size_t apigen_stream_read(apigen_stream *s, void *buf, size_t cap)
{
    char err[256];
    if (!s || !s->on || s->out || s->failed || !buf)
        return 0;
    uint64_t left = s->n - s->done;
    size_t k = (uint64_t)cap < left ? cap : (size_t)left;
    if (!k)
        return 0;
    if (s->lanes ? !rt_lanes_recv(s->lanes, buf, k, -1, err, sizeof err)
                 : apigen_tp_recv(s->d->conn, buf, k, -1, err, sizeof err) != APIGEN_TP_OK) {
        apigen_log("closing connection from %s: receiving a streamed argument: %s",
                   apigen_tp_peer(s->d->conn), err);
        s->failed = true;
        return 0;
    }
    s->done += k;
    return k;
}

apigen_stream *apigen_stream_out(apigen_call_ctx *cx, uint64_t n, uint64_t chunk, uint64_t min)
{
    rt_dispatch *d = cx->rt;
    /* over the per-call limit: the scratch buffer path rejects it as before
     * (a stream allocates nothing, but the limit says what one call may ask) */
    if (!d || cx->is_async || n < min || n == 0 || n > cx->budget || d->out.on)
        return NULL;
    d->out = (struct apigen_stream){d, true, true, false, n, 0, chunk ? chunk : n, NULL};
    return &d->out;
}

bool apigen_stream_write(apigen_stream *s, const void *buf, size_t len)
{
    char err[256];
    if (!s || !s->on || !s->out || s->failed)
        return false;
    if (len == 0)
        return true;
    if (!buf || len > s->n - s->done || len > UINT32_MAX) {
        apigen_log("a streamed reply's chunk of %zu bytes exceeds its %llu bytes left (host hook "
                   "bug); closing the connection",
                   len, (unsigned long long)(s->n - s->done));
        s->failed = true;
        return false;
    }
    const apigen_frame_hdr *rq = s->d->h;
    apigen_frame_hdr h = {APIGEN_MAGIC,    APIGEN_PROTO_VERSION, APIGEN_F_STREAM,  rq->call_id,
                          rq->request_id, rq->thread_id,        (uint32_t)len, 0};
    uint8_t hb[APIGEN_FRAME_HDR_SIZE];
    if (rt_rec_active)
        rt_rec_sent(s->d->conn, &h, buf, len);
    /* a large chunk: its header here, its bytes over the lanes */
    rt_lanes *L = rt_lanes_for_send(s->d->conn, len);
    if (L)
        h.flags |= APIGEN_F_LANES;
    apigen_hdr_encode(&h, hb);
    struct iovec iov[2] = {{hb, sizeof hb}, {(void *)buf, len}};
    if (!apigen_tp_send(s->d->conn, iov, L ? 1 : 2, -1, err, sizeof err) ||
        (L && !rt_lanes_send(L, buf, len, -1, err, sizeof err))) {
        apigen_log("closing connection from %s: sending a streamed reply: %s",
                   apigen_tp_peer(s->d->conn), err);
        s->failed = true;
        return false;
    }
    s->done += len;
    return true;
}

uint64_t apigen_stream_size(const apigen_stream *s) { return s ? s->n : 0; }
uint64_t apigen_stream_chunk(const apigen_stream *s) { return s ? s->chunk : 0; }
uint64_t apigen_stream_done(const apigen_stream *s) { return s ? s->done : 0; }
bool apigen_stream_failed(const apigen_stream *s) { return !s || s->failed; }

bool rt_discard(apigen_conn *c, uint64_t n, int timeout_ms)
{
    char err[256];
    if (!n)
        return true;
    uint8_t *b = malloc(DISCARD_BUF);
    if (!b)
        return false;
    bool ok = true;
    while (ok && n) {
        size_t k = n < DISCARD_BUF ? (size_t)n : DISCARD_BUF;
        ok = apigen_tp_recv(c, b, k, timeout_ms, err, sizeof err) == APIGEN_TP_OK;
        n -= k;
    }
    free(b);
    return ok;
}

bool rt_stream_finish(rt_dispatch *d)
{
    bool ok = true;
    char err[256] = "";
    if (d->in.on && !d->in.failed && d->in.done < d->in.n)
        ok = d->in.lanes ? rt_lanes_recv(d->in.lanes, NULL, d->in.n - d->in.done, -1, err, sizeof err)
                         : rt_discard(d->conn, d->in.n - d->in.done, -1);
    else if (d->in.on && d->in.failed)
        ok = false;
    /* a rejected request whose bulk nobody read: drop it unread (it may be
     * large; pulling it into memory would only be to throw it away) */
    if (ok && d->pull && d->pull->pending) {
        d->pull->pending = false;
        ok = d->pull->lanes ? rt_lanes_recv(d->pull->lanes, NULL, d->pull->n, -1, err, sizeof err) &&
                                  rt_discard(d->conn, d->pull->tail, -1)
                            : rt_discard(d->conn, d->pull->n + d->pull->tail, -1);
    }
    if (!ok && err[0])
        apigen_log("closing connection from %s: receiving a bulk over lanes: %s",
                   apigen_tp_peer(d->conn), err);
    if (d->out.on && d->out.failed)
        ok = false;
    return ok;
}
