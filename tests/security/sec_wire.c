/* sec_wire: a hostile client of apigen-server-exa that speaks the wire
 * protocol by hand (runtime/SECURITY.md). Each mode prints one line per
 * check and exits 1 if any failed.
 *
 *   sec_wire frames URL       S1/S6/S8/S9/S10: bad headers, handshakes, call ids,
 *                              handles, counts, lengths, truncated frames, streamed
 *                              arguments (rejected before or without their bulk, the
 *                              bulk flag on other calls, cut short, lying lengths)
 *   sec_wire bytes URL        S6: a transport that fails after every byte N of a
 *                              valid session (create context, buffer, write, malloc)
 *   sec_wire stall URL SECS   S2: announce a 1 GiB frame, send 1 byte, hold SECS
 *   sec_wire idle URL N SECS  S6: N connections that never say hello, held SECS
 *   sec_wire session URL      one valid session: prints "ok" (is the server alive?)
 *   sec_wire foreign URL      S3/S4: a second session uses ids and addresses of a
 *                              first one, by hand, byte for byte
 *   sec_wire lanes URL        lanes (runtime/lanes.c, tcp://): forged lanes (another
 *                              session's, a wrong key or thread, twice, out of range,
 *                              another version) refused; a laned frame on a connection
 *                              without lanes, a forged piece, a lane closed in the middle
 *                              of a transfer: that connection closed, the server serves on;
 *                              a laned write through the runtime's own sender lands */
#define _GNU_SOURCE
#include "exa_wire.h"
#include "rt_internal.h"
#include "transport.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int failures;
#define EXPECT(cond, what)                                                                      \
    do {                                                                                        \
        bool ok_ = (cond);                                                                      \
        printf("%s: %s\n", ok_ ? "ok" : "FAIL", what);                                          \
        if (!ok_)                                                                               \
            failures++;                                                                         \
        fflush(stdout);                                                                         \
    } while (0)

static const char *g_url;

static apigen_conn *dial(void)
{
    char err[256];
    apigen_conn *c = NULL;
    if (!apigen_tp_connect(g_url, 5000, &c, err, sizeof err)) {
        printf("FAIL: connect: %s\n", err);
        exit(1);
    }
    return c;
}

/* The server closed: EOF or reset, within 20 s. */
static bool closed(apigen_conn *c)
{
    char err[256];
    uint8_t b[256];
    for (;;) {
        apigen_tp_result r = apigen_tp_recv(c, b, 1, 20000, err, sizeof err);
        if (r == APIGEN_TP_EOF || r == APIGEN_TP_ERROR)
            return true;
        if (r == APIGEN_TP_TIMEOUT)
            return false;
    }
}

static bool send_all(apigen_conn *c, const void *p, size_t n)
{
    char err[256];
    return apigen_tp_send_buf(c, p, n, 5000, err, sizeof err);
}

/* A frame in w: header reserved at the start. */
static void frame_begin(apigen_wr *w, size_t *off)
{
    apigen_wr_init(w);
    if (!rt_wr_begin_frame(w, off))
        abort();
}
static void frame_end(apigen_wr *w, size_t off, uint16_t flags, uint32_t call_id)
{
    if (!rt_wr_end_frame(w, off, flags, call_id, 7, 1))
        abort();
}

static void put_hello(apigen_wr *w, uint32_t proto, const char *name, uint64_t fp, uint8_t join,
                      const uint8_t key[16], const char *token)
{
    size_t off;
    static const uint8_t zero[16];
    frame_begin(w, &off);
    bool ok = apigen_put_u32(w, proto) && apigen_put_str(w, name) && apigen_put_u64(w, fp) &&
              apigen_put_u8(w, join) && apigen_put_raw(w, key ? key : zero, 16) &&
              apigen_put_str(w, token);
    if (!ok)
        abort();
    frame_end(w, off, APIGEN_F_HELLO, 0);
}

/* Receives one frame (20 s). */
static bool recv_frame(apigen_conn *c, apigen_frame_hdr *h, uint8_t **buf, size_t *cap)
{
    char err[256];
    bool eof;
    return rt_recv_frame(c, h, buf, cap, 1u << 30, 20000, &eof, err, sizeof err);
}

/* Handshake; returns the status and message (static). */
static uint32_t hello(apigen_conn *c, uint32_t proto, const char *name, uint64_t fp, uint8_t join,
                      const uint8_t key_in[16], uint8_t key_out[16], const char **msg)
{
    apigen_wr w;
    put_hello(&w, proto, name, fp, join, key_in, getenv("APIGEN_TOKEN"));
    bool ok = send_all(c, w.buf, w.len);
    apigen_wr_free(&w);
    static uint8_t *buf;
    static size_t cap;
    apigen_frame_hdr h;
    *msg = "(no reply)";
    if (!ok || !recv_frame(c, &h, &buf, &cap))
        return 999;
    apigen_rd rd;
    uint32_t st;
    apigen_rd_init(&rd, buf, h.payload_len);
    if (!apigen_get_u32(&rd, &st) || !apigen_get_str(&rd, msg, 4096) ||
        !apigen_get_raw(&rd, key_out, 16))
        return 998;
    return st;
}

static apigen_conn *session(uint8_t key[16])
{
    apigen_conn *c = dial();
    const char *msg;
    uint8_t k[16];
    uint32_t st = hello(c, APIGEN_PROTO_VERSION, "exa", EXA_FINGERPRINT, 0, NULL, key ? key : k, &msg);
    if (st != 0) {
        printf("FAIL: handshake refused: %u %s\n", st, msg);
        exit(1);
    }
    return c;
}

/* ---- calls ------------------------------------------------------------------------ */
typedef struct reply {
    uint32_t status; /* apigen_status */
    bool has_deferred;
    int64_t deferred;
    apigen_rd rd; /* the results */
    bool got;
} reply;

/* The runtime's prefix of a reply into r (false: malformed). */
static bool reply_prefix(reply *r)
{
    rt_reply_prefix p;
    if (!rt_get_reply_prefix(&r->rd, &p))
        return false;
    r->status = p.status;
    r->has_deferred = p.has_deferred;
    r->deferred = p.deferred;
    return true;
}

static uint8_t *g_rbuf;
static size_t g_rcap;

/* Sends w (a finished frame), reads the reply. */
static reply roundtrip(apigen_conn *c, apigen_wr *w)
{
    reply r = {0};
    apigen_frame_hdr h;
    if (!send_all(c, w->buf, w->len) || !recv_frame(c, &h, &g_rbuf, &g_rcap))
        return r;
    apigen_rd_init(&r.rd, g_rbuf, h.payload_len);
    r.got = reply_prefix(&r);
    return r;
}

/* Begins a call frame; the caller puts arguments and calls call_sync. */
static size_t g_off;
static apigen_wr *call_begin(apigen_wr *w)
{
    frame_begin(w, &g_off);
    return w;
}
static reply call_sync(apigen_conn *c, apigen_wr *w, uint32_t call_id)
{
    frame_end(w, g_off, 0, call_id);
    reply r = roundtrip(c, w);
    apigen_wr_free(w);
    return r;
}
static void call_async(apigen_conn *c, apigen_wr *w, uint32_t call_id)
{
    frame_end(w, g_off, APIGEN_F_ASYNC, call_id);
    if (!send_all(c, w->buf, w->len))
        printf("FAIL: async send\n");
    apigen_wr_free(w);
}

#define P(x)                                                                                    \
    do {                                                                                        \
        if (!(x))                                                                               \
            abort();                                                                            \
    } while (0)

static uint32_t ret_of(reply *r)
{
    uint32_t v = 0xffffffffu;
    if (r->got && r->status == APIGEN_OK && !apigen_get_u32(&r->rd, &v))
        v = 0xfffffffeu;
    return v;
}

static uint64_t create_context(apigen_conn *c)
{
    apigen_wr w;
    call_begin(&w);
    P(apigen_put_u32(&w, 0) && apigen_put_str(&w, "sec") && apigen_put_u8(&w, 1));
    reply r = call_sync(c, &w, EXA_CALL_exaCreateContext);
    uint64_t n = 0, id = 0;
    if (ret_of(&r) != EXA_SUCCESS || !apigen_get_u64(&r.rd, &n) || n != 1 ||
        !apigen_get_u64(&r.rd, &id))
        printf("FAIL: exaCreateContext\n");
    return id;
}

static uint64_t create_buffer(apigen_conn *c, uint64_t ctx, uint64_t bytes)
{
    apigen_wr w;
    call_begin(&w);
    P(apigen_put_u64(&w, ctx) && apigen_put_u64(&w, bytes) && apigen_put_u8(&w, 1));
    reply r = call_sync(c, &w, EXA_CALL_exaCreateBuffer);
    uint64_t n = 0, id = 0;
    if (ret_of(&r) != EXA_SUCCESS || !apigen_get_u64(&r.rd, &n) || n != 1 ||
        !apigen_get_u64(&r.rd, &id))
        printf("FAIL: exaCreateBuffer\n");
    return id;
}

static uint64_t dev_malloc(apigen_conn *c, uint64_t bytes)
{
    apigen_wr w;
    call_begin(&w);
    P(apigen_put_u64(&w, bytes) && apigen_put_u8(&w, 1));
    reply r = call_sync(c, &w, EXA_CALL_exaMalloc);
    uint64_t n = 0, p = 0;
    if (ret_of(&r) != EXA_SUCCESS || !apigen_get_u64(&r.rd, &n) || n != 1 ||
        !apigen_get_u64(&r.rd, &p))
        printf("FAIL: exaMalloc\n");
    return p;
}

static reply get_buffer_size(apigen_conn *c, uint64_t buf)
{
    apigen_wr w;
    call_begin(&w);
    P(apigen_put_u64(&w, buf) && apigen_put_u8(&w, 1));
    return call_sync(c, &w, EXA_CALL_exaGetBufferSize);
}

static reply memcpy_d2h(apigen_conn *c, uint64_t src, uint64_t bytes)
{
    apigen_wr w;
    call_begin(&w);
    /* bytes, kind (phase 1); dst: out present flag; src: device u64 */
    P(apigen_put_u64(&w, bytes) && apigen_put_u32(&w, EXA_COPY_DEVICE_TO_HOST) &&
      apigen_put_u8(&w, 1) && apigen_put_u64(&w, src));
    return call_sync(c, &w, EXA_CALL_exaMemcpy);
}

static reply get_device_count(apigen_conn *c)
{
    apigen_wr w;
    call_begin(&w);
    P(apigen_put_u8(&w, 1));
    return call_sync(c, &w, EXA_CALL_exaGetDeviceCount);
}

static bool alive(apigen_conn *c)
{
    reply r = get_device_count(c);
    return ret_of(&r) == EXA_SUCCESS;
}

/* ---- frames ------------------------------------------------------------------------ */
static void raw_header(apigen_conn *c, uint32_t magic, uint16_t version, uint16_t flags,
                       uint32_t payload_len, uint32_t reserved)
{
    apigen_frame_hdr h = {magic, version, flags, 0, 0, 0, payload_len, reserved};
    uint8_t hb[APIGEN_FRAME_HDR_SIZE];
    apigen_hdr_encode(&h, hb);
    (void)send_all(c, hb, sizeof hb);
}

/* ---- streamed arguments (spec `stream:`; exa streams 1 MiB and more) ----------- */
#define STREAM_N ((size_t)3 << 20)

/* Sends w with its zero-copy pieces (a request with a bulk: APIGEN_F_BULK). */
static reply roundtrip_ref(apigen_conn *c, apigen_wr *w, uint32_t call_id)
{
    char err[256];
    reply r = {0};
    apigen_frame_hdr h;
    frame_end(w, g_off, 0, call_id);
    if (rt_wr_send(c, w, 5000, err, sizeof err) && recv_frame(c, &h, &g_rbuf, &g_rcap)) {
        apigen_rd_init(&r.rd, g_rbuf, h.payload_len);
        r.got = reply_prefix(&r);
    }
    apigen_wr_free(w);
    return r;
}

/* exaWriteBuffer(buf, 0, bytes, src of n bytes) with src as a streamed bulk. */
static reply write_streamed(apigen_conn *c, uint64_t buf, uint64_t bytes, const void *src,
                            size_t n)
{
    apigen_wr w;
    call_begin(&w);
    P(apigen_put_u64(&w, buf) && apigen_put_u64(&w, 0) && apigen_put_u64(&w, bytes) &&
      apigen_put_opt_bytes_ref(&w, src, n));
    return roundtrip_ref(c, &w, EXA_CALL_exaWriteBuffer);
}

static void mode_stream(apigen_conn *c, uint64_t ctx)
{
    uint8_t *big = malloc(STREAM_N);
    if (!big)
        abort();
    for (size_t i = 0; i < STREAM_N; i++)
        big[i] = (uint8_t)(i * 13 + 5);
    uint64_t sbuf = create_buffer(c, ctx, STREAM_N);
    reply r = write_streamed(c, sbuf, STREAM_N, big, STREAM_N);
    EXPECT(ret_of(&r) == EXA_SUCCESS, "stream.in: a streamed write is served");
    r = write_streamed(c, 0x7777, STREAM_N, big, STREAM_N);
    EXPECT(r.got && r.status == APIGEN_BAD_HANDLE && alive(c),
           "stream.rejected_before_bulk: rejected, its bulk dropped, the next call served");
    r = write_streamed(c, sbuf, 16, big, STREAM_N);
    EXPECT(r.got && r.status == APIGEN_BAD_ARGS && alive(c),
           "stream.length_mismatch: rejected, its bulk dropped, the next call served");
    r = write_streamed(c, sbuf, STREAM_N + 1, big, STREAM_N);
    EXPECT(r.got && r.status == APIGEN_BAD_ARGS && alive(c),
           "stream.length_short: rejected, the next call served");

    /* the bulk flag on a call that does not stream: received whole, served */
    {
        apigen_wr w;
        call_begin(&w);
        P(apigen_put_u32(&w, 0) && apigen_put_opt_bytes_ref(&w, big, STREAM_N) &&
          apigen_put_u8(&w, 1));
        r = roundtrip_ref(c, &w, EXA_CALL_exaCreateContext);
        EXPECT(r.got && r.status == APIGEN_BAD_ARGS && alive(c),
               "stream.bulk_flag_on_other_call: received whole, rejected as a bad string, served");
    }

    /* out: chunks (APIGEN_F_STREAM, this request's ids) ahead of the reply */
    {
        apigen_wr w;
        apigen_frame_hdr h;
        size_t got = 0, frames = 0;
        bool ids = true;
        call_begin(&w);
        P(apigen_put_u64(&w, sbuf) && apigen_put_u64(&w, 0) && apigen_put_u64(&w, STREAM_N) &&
          apigen_put_u8(&w, 1));
        frame_end(&w, g_off, 0, EXA_CALL_exaReadBuffer);
        bool sent = send_all(c, w.buf, w.len);
        apigen_wr_free(&w);
        while (sent && recv_frame(c, &h, &g_rbuf, &g_rcap) && (h.flags & APIGEN_F_STREAM)) {
            ids = ids && h.call_id == EXA_CALL_exaReadBuffer && h.request_id == 7 &&
                  memcmp(g_rbuf, big + got, h.payload_len) == 0;
            got += h.payload_len;
            frames++;
        }
        uint32_t ret = 1;
        uint64_t len = 1;
        reply rp = {0};
        apigen_rd_init(&rp.rd, g_rbuf, h.payload_len);
        bool tail = (h.flags & APIGEN_F_REPLY) && reply_prefix(&rp) &&
                    apigen_get_u32(&rp.rd, &ret) && apigen_get_u64(&rp.rd, &len);
        EXPECT(got == STREAM_N && frames >= 3 && ids && tail && rp.status == 0 && ret == EXA_SUCCESS &&
                   len == 0,
               "stream.out: 1 MiB chunks with the request's ids, then the reply with an empty "
               "buffer");
    }

    /* a bulk cut short, then gone: others are served */
    {
        apigen_conn *c2 = session(NULL);
        apigen_wr w;
        call_begin(&w);
        P(apigen_put_u64(&w, 0x7777) && apigen_put_u64(&w, 0) && apigen_put_u64(&w, STREAM_N) &&
          apigen_put_opt_bytes_ref(&w, big, STREAM_N));
        frame_end(&w, g_off, 0, EXA_CALL_exaWriteBuffer);
        (void)send_all(c2, w.buf, w.len); /* the head only: the bulk never comes */
        (void)send_all(c2, big, STREAM_N / 3);
        apigen_wr_free(&w);
        apigen_tp_close(c2);
        EXPECT(alive(c), "stream.cut_mid_bulk: the connection ends, others are served");
        /* a bulk length past the frame: closed */
        c2 = session(NULL);
        call_begin(&w);
        P(apigen_put_u64(&w, sbuf) && apigen_put_u64(&w, 0) && apigen_put_u64(&w, 64) &&
          apigen_put_u8(&w, 1) && apigen_put_u64(&w, 1ull << 40));
        size_t len_off = w.len - 8 - g_off - APIGEN_FRAME_HDR_SIZE;
        P(rt_wr_skip(&w, 8)); /* padding, then 8 bytes of "data" */
        P(rt_wr_skip(&w, 8));
        frame_end(&w, g_off, 0, EXA_CALL_exaWriteBuffer);
        apigen_frame_hdr fh;
        const char *e;
        P(apigen_hdr_decode(w.buf + g_off, &fh, UINT32_MAX, &e));
        fh.flags |= APIGEN_F_BULK;
        fh.reserved = (uint32_t)len_off;
        apigen_hdr_encode(&fh, w.buf + g_off);
        (void)send_all(c2, w.buf, w.len);
        apigen_wr_free(&w);
        EXPECT(closed(c2), "stream.bulk_length_past_frame: closed");
        apigen_tp_close(c2);
        EXPECT(alive(c), "stream: others still served");
    }
    free(big);
}

static int mode_frames(void)
{
    apigen_conn *c;
    const char *msg;
    uint8_t key[16], key2[16];

    /* S1/S6: broken headers close the connection */
    c = dial();
    raw_header(c, 0x12345678u, APIGEN_PROTO_VERSION, APIGEN_F_HELLO, 0, 0);
    EXPECT(closed(c), "frame.bad_magic: closed");
    apigen_tp_close(c);
    c = dial();
    raw_header(c, APIGEN_MAGIC, 99, APIGEN_F_HELLO, 0, 0);
    EXPECT(closed(c), "frame.bad_version: closed");
    apigen_tp_close(c);
    c = dial();
    raw_header(c, APIGEN_MAGIC, APIGEN_PROTO_VERSION, APIGEN_F_HELLO, 0, 0xdead);
    EXPECT(closed(c), "frame.nonzero_reserved: closed");
    apigen_tp_close(c);
    c = dial();
    raw_header(c, APIGEN_MAGIC, APIGEN_PROTO_VERSION, APIGEN_F_HELLO, UINT32_MAX, 0);
    EXPECT(closed(c), "frame.hello_4GiB: closed");
    apigen_tp_close(c);
    c = dial();
    raw_header(c, APIGEN_MAGIC, APIGEN_PROTO_VERSION, APIGEN_F_HELLO | APIGEN_F_REPLY, 0, 0);
    EXPECT(closed(c), "frame.hello_with_reply_flag: closed");
    apigen_tp_close(c);
    c = dial();
    raw_header(c, APIGEN_MAGIC, APIGEN_PROTO_VERSION, APIGEN_F_HELLO, 100, 0);
    (void)send_all(c, "abc", 3);
    apigen_tp_close(c); /* truncated handshake, then gone */
    printf("ok: frame.truncated_hello: sent\n");

    /* S10/S9: handshakes that do not match */
    c = dial();
    EXPECT(hello(c, 77, "exa", EXA_FINGERPRINT, 0, NULL, key, &msg) == RT_HELLO_PROTO &&
               strstr(msg, "protocol version mismatch"),
           "hello.bad_version: refused with a message");
    apigen_tp_close(c);
    c = dial();
    EXPECT(hello(c, APIGEN_PROTO_VERSION, "cudart", EXA_FINGERPRINT, 0, NULL, key, &msg) ==
                   RT_HELLO_API && strstr(msg, "not served here"),
           "hello.bad_api: refused with a message");
    apigen_tp_close(c);
    c = dial();
    EXPECT(hello(c, APIGEN_PROTO_VERSION, "exa", EXA_FINGERPRINT ^ 1, 0, NULL, key, &msg) ==
                   RT_HELLO_FINGERPRINT && strstr(msg, "fingerprint mismatch"),
           "hello.bad_fingerprint: refused with a message");
    apigen_tp_close(c);
    c = dial();
    memset(key2, 0x42, sizeof key2);
    EXPECT(hello(c, APIGEN_PROTO_VERSION, "exa", EXA_FINGERPRINT, 1, key2, key, &msg) ==
                   RT_HELLO_SESSION,
           "hello.guessed_session_key: refused");
    apigen_tp_close(c);
    c = dial();
    {
        apigen_wr w;
        size_t off;
        frame_begin(&w, &off);
        P(apigen_put_u32(&w, APIGEN_PROTO_VERSION) && apigen_put_u8(&w, 1) &&
          apigen_put_u64(&w, UINT64_MAX - 3));
        frame_end(&w, off, APIGEN_F_HELLO, 0);
        (void)send_all(c, w.buf, w.len);
        apigen_wr_free(&w);
        apigen_frame_hdr h;
        uint8_t *b = NULL;
        size_t cap = 0;
        apigen_rd rd;
        uint32_t st = 0;
        bool ok = recv_frame(c, &h, &b, &cap);
        if (ok) {
            apigen_rd_init(&rd, b, h.payload_len);
            ok = apigen_get_u32(&rd, &st) && st == RT_HELLO_MALFORMED;
        }
        EXPECT(ok, "hello.string_length_past_frame: refused as malformed");
        free(b);
    }
    apigen_tp_close(c);

    /* a valid session for the rest */
    c = session(key);
    EXPECT(alive(c), "session: a valid call works");

    /* S8: call ids outside the table; the connection stays usable */
    uint32_t bad_ids[] = {EXA_NCALLS, EXA_NCALLS + 1, 0x7fffffffu, UINT32_MAX, 0};
    for (size_t i = 0; i < sizeof bad_ids / sizeof bad_ids[0]; i++) {
        apigen_wr w;
        call_begin(&w);
        reply r = call_sync(c, &w, bad_ids[i]);
        char what[96];
        snprintf(what, sizeof what, "call.id_%u: rejected (status %u), connection usable", bad_ids[i],
                 r.status);
        EXPECT(r.got && (r.status == APIGEN_BAD_CALL || r.status == APIGEN_UNSUPPORTED) && alive(c),
               what);
    }

    /* S3: bogus handle ids */
    uint64_t bogus[] = {0, 1, 0x1000, 0xffffffffffffffffull, 0x8000000000001000ull};
    for (size_t i = 0; i < sizeof bogus / sizeof bogus[0]; i++) {
        reply r = get_buffer_size(c, bogus[i]);
        char what[96];
        snprintf(what, sizeof what, "handle.bogus_%llx: rejected as bad handle",
                 (unsigned long long)bogus[i]);
        EXPECT(r.got && r.status == APIGEN_BAD_HANDLE, what);
    }
    uint64_t ctx = create_context(c);
    uint64_t buf = create_buffer(c, ctx, 256);
    {
        reply r = get_buffer_size(c, ctx); /* a context id where a buffer is expected */
        EXPECT(r.got && r.status == APIGEN_BAD_HANDLE, "handle.wrong_type: rejected");
        r = get_buffer_size(c, buf + 1); /* the next slot: not allocated */
        EXPECT(r.got && r.status == APIGEN_BAD_HANDLE, "handle.next_id: rejected");
        r = get_buffer_size(c, buf ^ (1ull << 40)); /* another session's salt */
        EXPECT(r.got && r.status == APIGEN_BAD_HANDLE, "handle.other_salt: rejected");
    }

    /* S4: device addresses that are not this client's */
    uint64_t dev = dev_malloc(c, 64);
    {
        reply r = memcpy_d2h(c, dev + 16, 16);
        EXPECT(ret_of(&r) == EXA_SUCCESS, "devptr.own_interior: allowed");
        r = memcpy_d2h(c, dev + 64, 4);
        EXPECT(r.got && r.status == APIGEN_BAD_DEVPTR, "devptr.one_past_end: rejected");
        r = memcpy_d2h(c, dev - 1, 4);
        EXPECT(r.got && r.status == APIGEN_BAD_DEVPTR, "devptr.before_start: rejected");
        r = memcpy_d2h(c, (uint64_t)(uintptr_t)&r, 4); /* an address in the server's space? no: ours */
        EXPECT(r.got && r.status == APIGEN_BAD_DEVPTR, "devptr.arbitrary_address: rejected");
        r = memcpy_d2h(c, 0x400000, 4);
        EXPECT(r.got && r.status == APIGEN_BAD_DEVPTR, "devptr.server_text_segment: rejected");
    }

    /* S1/S2: lengths and counts */
    {
        apigen_wr w; /* exaWriteBuffer(buffer, offset, bytes, src): src claims 2^64-1 bytes */
        call_begin(&w);
        P(apigen_put_u64(&w, buf) && apigen_put_u64(&w, 0) && apigen_put_u64(&w, 16) &&
          apigen_put_u8(&w, 1) && apigen_put_u64(&w, UINT64_MAX));
        reply r = call_sync(c, &w, EXA_CALL_exaWriteBuffer);
        EXPECT(r.got && r.status == APIGEN_BAD_ARGS, "length.past_frame: rejected");

        call_begin(&w); /* src length disagrees with `bytes` */
        P(apigen_put_u64(&w, buf) && apigen_put_u64(&w, 0) && apigen_put_u64(&w, 16) &&
          apigen_put_opt_bytes(&w, "0123456789", 10));
        r = call_sync(c, &w, EXA_CALL_exaWriteBuffer);
        EXPECT(r.got && r.status == APIGEN_BAD_ARGS, "length.mismatch: rejected");

        call_begin(&w); /* exaReadBuffer asking the server for 2^62 bytes of scratch */
        P(apigen_put_u64(&w, buf) && apigen_put_u64(&w, 0) && apigen_put_u64(&w, 1ull << 62) &&
          apigen_put_u8(&w, 1));
        r = call_sync(c, &w, EXA_CALL_exaReadBuffer);
        EXPECT(r.got && r.status == APIGEN_TOO_LARGE, "alloc.out_2^62: rejected as too large");

        call_begin(&w); /* exaReadBuffer with bytes*1 overflowing nothing but > max-arg */
        P(apigen_put_u64(&w, buf) && apigen_put_u64(&w, 0) && apigen_put_u64(&w, 3ull << 30) &&
          apigen_put_u8(&w, 1));
        r = call_sync(c, &w, EXA_CALL_exaReadBuffer);
        EXPECT(r.got && r.status == APIGEN_TOO_LARGE, "alloc.out_over_max_arg: rejected");

        call_begin(&w); /* exaSumBuffers: num_srcs 2^32-1, count says so, no ids follow */
        P(apigen_put_u64(&w, buf) && apigen_put_u32(&w, UINT32_MAX) && apigen_put_u64(&w, 4) &&
          apigen_put_u8(&w, 1) && apigen_put_u64(&w, UINT32_MAX));
        r = call_sync(c, &w, EXA_CALL_exaSumBuffers);
        EXPECT(r.got && (r.status == APIGEN_TOO_LARGE || r.status == APIGEN_BAD_ARGS),
               "count.handles_2^32: rejected");

        call_begin(&w); /* string without its NUL */
        P(apigen_put_u32(&w, 0) && apigen_put_u8(&w, 1) && apigen_put_bytes(&w, "abc", 3) &&
          apigen_put_u8(&w, 1));
        r = call_sync(c, &w, EXA_CALL_exaCreateContext);
        EXPECT(r.got && r.status == APIGEN_BAD_ARGS, "string.no_nul: rejected");

        call_begin(&w); /* trailing bytes */
        P(apigen_put_u8(&w, 1) && apigen_put_u64(&w, 0));
        r = call_sync(c, &w, EXA_CALL_exaGetDeviceCount);
        EXPECT(r.got && r.status == APIGEN_BAD_ARGS, "frame.trailing_bytes: rejected");

        call_begin(&w); /* truncated arguments */
        P(apigen_put_u32(&w, 1));
        r = call_sync(c, &w, EXA_CALL_exaReadBuffer);
        EXPECT(r.got && r.status == APIGEN_BAD_ARGS, "frame.truncated_args: rejected");

        call_begin(&w); /* an async call on a bogus context: reported with the next sync reply */
        P(apigen_put_u64(&w, 0x1234) && apigen_put_u64(&w, 0));
        call_async(c, &w, EXA_CALL_exaLaunchFill);
        r = get_device_count(c);
        EXPECT(r.got && r.status == APIGEN_OK && r.has_deferred &&
                   r.deferred == EXA_ERROR_INVALID_HANDLE,
               "async.bogus_handle: deferred to the next sync call as invalid_handle");
        call_begin(&w); /* an async call with a foreign device address */
        P(apigen_put_u64(&w, ctx) && apigen_put_u64(&w, 0x400000) && apigen_put_f32(&w, 1.0f) &&
          apigen_put_u64(&w, 4));
        call_async(c, &w, EXA_CALL_exaLaunchFill);
        r = get_device_count(c);
        EXPECT(r.got && r.status == APIGEN_OK && r.has_deferred &&
                   r.deferred == EXA_ERROR_INVALID_VALUE,
               "async.bad_devptr: deferred to the next sync call as invalid_value");
    }
    EXPECT(alive(c), "session: still usable after every rejection");
    mode_stream(c, ctx);

    /* S6: flags a client may not send close only that connection */
    {
        apigen_conn *c2 = session(NULL);
        apigen_wr w;
        call_begin(&w);
        P(apigen_put_u8(&w, 1));
        frame_end(&w, g_off, APIGEN_F_REPLY, EXA_CALL_exaGetDeviceCount);
        (void)send_all(c2, w.buf, w.len);
        apigen_wr_free(&w);
        EXPECT(closed(c2), "frame.reply_flag_from_client: closed");
        apigen_tp_close(c2);
        c2 = session(NULL);
        raw_header(c2, APIGEN_MAGIC, APIGEN_PROTO_VERSION, 0, 64, 0);
        (void)send_all(c2, "short", 5);
        apigen_tp_close(c2); /* truncated call frame, then gone */
        EXPECT(alive(c), "others: served after a truncated frame elsewhere");
    }
    apigen_tp_close(c);
    return failures ? 1 : 0;
}

/* ---- a transport that fails after byte N ------------------------------------------ */
static void transcript(apigen_wr *t)
{
    /* handshake, exaCreateContext, exaCreateBuffer(id of the first object),
     * exaWriteBuffer, exaMalloc, exaGetDeviceCount: sent without reading
     * replies (the server answers into the socket buffer). Ids of a new
     * session are unknown to us, so the buffer is created on a bogus ctx
     * (rejected) and the rest stands alone. */
    apigen_wr w;
    put_hello(&w, APIGEN_PROTO_VERSION, "exa", EXA_FINGERPRINT, 0, NULL, getenv("APIGEN_TOKEN"));
    P(apigen_put_raw(t, w.buf, w.len));
    apigen_wr_free(&w);
    struct {
        uint32_t id;
        int kind;
    } calls[] = {{EXA_CALL_exaCreateContext, 0}, {EXA_CALL_exaCreateBuffer, 1},
                 {EXA_CALL_exaMalloc, 2},        {EXA_CALL_exaWriteBuffer, 3},
                 {EXA_CALL_exaMalloc, 2},        {EXA_CALL_exaGetDeviceCount, 4}};
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        call_begin(&w);
        switch (calls[i].kind) {
        case 0: P(apigen_put_u32(&w, 1) && apigen_put_str(&w, "partial") && apigen_put_u8(&w, 1)); break;
        case 1: P(apigen_put_u64(&w, 0x1000) && apigen_put_u64(&w, 64) && apigen_put_u8(&w, 1)); break;
        case 2: P(apigen_put_u64(&w, 4096) && apigen_put_u8(&w, 1)); break;
        case 3:
            P(apigen_put_u64(&w, 0x1000) && apigen_put_u64(&w, 0) && apigen_put_u64(&w, 8) &&
              apigen_put_opt_bytes(&w, "abcdefgh", 8));
            break;
        default: P(apigen_put_u8(&w, 1)); break;
        }
        frame_end(&w, g_off, 0, calls[i].id);
        P(apigen_put_raw(t, w.buf, w.len));
        apigen_wr_free(&w);
    }
}

static int mode_bytes(void)
{
    apigen_wr t;
    apigen_wr_init(&t);
    transcript(&t);
    size_t n = t.len;
    unsigned sent = 0;
    for (size_t cut = 0; cut <= n; cut++) {
        apigen_conn *c = dial();
        if (cut)
            (void)send_all(c, t.buf, cut);
        apigen_tp_close(c); /* the transport fails here */
        sent++;
    }
    char what[128];
    snprintf(what, sizeof what, "bytes.every_cut: %u connections cut after byte 0..%zu", sent, n);
    EXPECT(sent == n + 1, what);
    /* the whole transcript works, and the server still serves */
    apigen_conn *c = dial();
    EXPECT(send_all(c, t.buf, t.len), "bytes.full_transcript: sent");
    apigen_tp_close(c);
    c = session(NULL);
    EXPECT(alive(c), "bytes.after: the server still serves");
    apigen_tp_close(c);
    apigen_wr_free(&t);
    return failures ? 1 : 0;
}

static int mode_stall(int secs)
{
    apigen_conn *c = session(NULL);
    raw_header(c, APIGEN_MAGIC, APIGEN_PROTO_VERSION, 0, 1u << 30, 0); /* 1 GiB announced */
    (void)send_all(c, "x", 1);
    printf("stalling\n");
    fflush(stdout);
    sleep((unsigned)secs);
    apigen_tp_close(c);
    return 0;
}

static int mode_idle(int n, int secs)
{
    apigen_conn **cs = calloc((size_t)n, sizeof *cs);
    for (int i = 0; i < n; i++)
        cs[i] = dial();
    printf("holding %d\n", n);
    fflush(stdout);
    int closed_n = 0;
    time_t t0 = time(NULL);
    /* count how many the server drops (pre-handshake timeout) within secs */
    for (int i = 0; i < n; i++) {
        int left = secs - (int)(time(NULL) - t0);
        char err[64];
        uint8_t b;
        if (left > 0 && apigen_tp_recv(cs[i], &b, 1, left * 1000, err, sizeof err) != APIGEN_TP_TIMEOUT)
            closed_n++;
    }
    printf("dropped by the server: %d of %d\n", closed_n, n);
    for (int i = 0; i < n; i++)
        apigen_tp_close(cs[i]);
    free(cs);
    return 0;
}

/* S3/S4 by hand: session B names session A's objects. */
static int mode_foreign(void)
{
    apigen_conn *a = session(NULL), *b = session(NULL);
    uint64_t ctx_a = create_context(a), buf_a = create_buffer(a, ctx_a, 64), dev_a = dev_malloc(a, 64);
    uint64_t ctx_b = create_context(b);
    (void)ctx_b;
    reply r = get_buffer_size(b, buf_a);
    EXPECT(r.got && r.status == APIGEN_BAD_HANDLE, "handle.foreign_buffer: rejected");
    r = memcpy_d2h(b, dev_a, 8);
    EXPECT(r.got && r.status == APIGEN_BAD_DEVPTR, "devptr.foreign: rejected");
    r = memcpy_d2h(b, dev_a + 8, 8);
    EXPECT(r.got && r.status == APIGEN_BAD_DEVPTR, "devptr.foreign_interior: rejected");
    apigen_wr w;
    call_begin(&w);
    P(apigen_put_u64(&w, dev_a));
    r = call_sync(b, &w, EXA_CALL_exaFree);
    EXPECT(r.got && r.status == APIGEN_BAD_DEVPTR, "devptr.foreign_free: rejected");
    r = memcpy_d2h(a, dev_a, 8);
    EXPECT(ret_of(&r) == EXA_SUCCESS, "devptr.owner_still_uses_it: allowed");
    r = get_buffer_size(a, buf_a);
    EXPECT(ret_of(&r) == EXA_SUCCESS, "handle.owner_still_uses_it: allowed");
    apigen_tp_close(a);
    apigen_tp_close(b);
    return failures ? 1 : 0;
}

/* ---- lanes -------------------------------------------------------------------------- */
/* A version-3 handshake on c joining (join) session key_in, with the owner's
 * thread id tid and one lanes tag: ask (RT_HELLO_TAG_LANES) or, with
 * lane_key, lane idx of k. Returns the status; *msg, the session key, and
 * what the server said about lanes (*lver, lkey) when it granted them. */
static uint32_t hello3(apigen_conn *c, uint8_t join, const uint8_t key_in[16], uint64_t tid,
                       uint32_t version, const uint8_t *lane_key, uint32_t idx, uint32_t k,
                       uint8_t key_out[16], uint32_t *lver, uint8_t lkey[16], const char **msg)
{
    apigen_wr w, f;
    size_t off;
    static const uint8_t zero[16];
    const char *tok = getenv("APIGEN_TOKEN");
    frame_begin(&w, &off);
    apigen_wr_init(&f);
    P(apigen_put_u32(&w, RT_HELLO_V3) && apigen_put_str(&w, "exa") &&
      apigen_put_u64(&w, EXA_FINGERPRINT) && apigen_put_u8(&w, join) &&
      apigen_put_raw(&w, key_in ? key_in : zero, 16) && apigen_put_str(&w, tok && *tok ? tok : NULL) &&
      apigen_put_u64(&w, 0) && apigen_put_u64(&w, 0) && apigen_put_u32(&f, version));
    if (lane_key)
        P(apigen_put_u32(&f, idx) && apigen_put_u32(&f, k) && apigen_put_u32(&f, 65536) &&
          apigen_put_u64(&f, 1 << 20) && apigen_put_raw(&f, lane_key, 16));
    P(apigen_put_u32(&w, lane_key ? RT_HELLO_TAG_LANE : RT_HELLO_TAG_LANES) &&
      apigen_put_bytes(&w, f.buf, f.len));
    P(rt_wr_end_frame(&w, off, APIGEN_F_HELLO, 0, 7, tid));
    bool ok = send_all(c, w.buf, w.len);
    apigen_wr_free(&w);
    apigen_wr_free(&f);
    static uint8_t *buf;
    static size_t cap;
    apigen_frame_hdr h;
    *msg = "(no reply)";
    *lver = 0;
    if (!ok || !recv_frame(c, &h, &buf, &cap))
        return 999;
    apigen_rd rd;
    uint32_t st;
    apigen_rd_init(&rd, buf, h.payload_len);
    if (!apigen_get_u32(&rd, &st) || !apigen_get_str(&rd, msg, 4096) ||
        !apigen_get_raw(&rd, key_out, 16))
        return 998;
    if (!apigen_rd_done(&rd) && (!apigen_get_u32(&rd, lver) || (*lver && !apigen_get_raw(&rd, lkey, 16))))
        return 997;
    return st;
}

typedef struct owner {
    apigen_conn *c;
    uint8_t skey[16], lkey[16];
    uint32_t lver;
} owner;

/* A new session whose connection (thread id tid) asks for lanes. */
static owner lane_owner(uint64_t tid)
{
    owner o = {dial(), {0}, {0}, 0};
    const char *msg;
    uint32_t st = hello3(o.c, 0, NULL, tid, RT_LANES_VERSION, NULL, 0, 0, o.skey, &o.lver, o.lkey, &msg);
    if (st != RT_HELLO_OK) {
        printf("FAIL: handshake refused: %u %s\n", st, msg);
        exit(1);
    }
    return o;
}

/* Lane idx of k for o (session key skey, thread tid, lane key lkey): the status. */
static uint32_t lane_hello(apigen_conn **out, const uint8_t skey[16], uint64_t tid, uint32_t version,
                           const uint8_t lkey[16], uint32_t idx, uint32_t k, const char **msg)
{
    uint8_t kout[16], lk[16];
    uint32_t lv;
    *out = dial();
    return hello3(*out, 1, skey, tid, version, lkey, idx, k, kout, &lv, lk, msg);
}

static bool has(const char *msg, const char *part) { return msg && strstr(msg, part); }

/* The piece header of lanes.c: lane, transfer, offset, length. */
static void piece_header(apigen_conn *c, uint32_t lane, uint32_t seq, uint64_t off, uint32_t len)
{
    apigen_frame_hdr h = {APIGEN_MAGIC, APIGEN_PROTO_VERSION, APIGEN_F_LANES, lane, seq, off, len, 0};
    uint8_t hb[APIGEN_FRAME_HDR_SIZE];
    apigen_hdr_encode(&h, hb);
    (void)send_all(c, hb, sizeof hb);
}

/* The header and the payload before the bulk of exaWriteBuffer(buf, 0, n, n bytes)
 * with APIGEN_F_LANES: the bulk itself is left to the caller's lanes. */
static void laned_write_head(apigen_conn *c, uint64_t buf, size_t n)
{
    static uint8_t dummy[1];
    apigen_wr w;
    call_begin(&w);
    P(apigen_put_u64(&w, buf) && apigen_put_u64(&w, 0) && apigen_put_u64(&w, n) &&
      apigen_put_opt_bytes_ref(&w, dummy, n)); /* a zero-copy piece: never sent */
    frame_end(&w, g_off, 0, EXA_CALL_exaWriteBuffer);
    uint8_t *hb = w.buf + g_off;
    hb[6] = (uint8_t)(hb[6] | (APIGEN_F_LANES & 0xff));
    hb[7] = (uint8_t)(hb[7] | (APIGEN_F_LANES >> 8));
    (void)send_all(c, w.buf, w.ext[0].at); /* header and payload up to the bulk's data */
    apigen_wr_free(&w);
}

static int mode_lanes(void)
{
    const char *msg;
    apigen_conn *l, *l2;
    owner a = lane_owner(5), b = lane_owner(5);
    EXPECT(a.lver == RT_LANES_VERSION, "lanes.granted: a tcp connection that asks gets a lane key");
    static const uint8_t junk[16] = {1, 2, 3};
    EXPECT(lane_hello(&l, a.skey, 5, RT_LANES_VERSION, junk, 0, 2, &msg) == RT_HELLO_SESSION &&
               has(msg, "lane key") && closed(l),
           "lanes.forged_key: refused, closed");
    apigen_tp_close(l);
    EXPECT(lane_hello(&l, a.skey, 6, RT_LANES_VERSION, a.lkey, 0, 2, &msg) == RT_HELLO_SESSION &&
               closed(l),
           "lanes.other_thread: a connection's key with another thread id refused");
    apigen_tp_close(l);
    EXPECT(lane_hello(&l, b.skey, 5, RT_LANES_VERSION, a.lkey, 0, 2, &msg) == RT_HELLO_SESSION &&
               closed(l),
           "lanes.other_session: session A's lane key in session B refused");
    apigen_tp_close(l);
    EXPECT(lane_hello(&l, a.skey, 5, 99, a.lkey, 0, 2, &msg) == RT_HELLO_PROTO &&
               has(msg, "lanes protocol version") && closed(l),
           "lanes.version: another lanes version refused, saying so");
    apigen_tp_close(l);
    EXPECT(lane_hello(&l, a.skey, 5, RT_LANES_VERSION, a.lkey, 5, 2, &msg) == RT_HELLO_MALFORMED &&
               closed(l),
           "lanes.out_of_range: lane 5 of 2 refused");
    apigen_tp_close(l);
    /* a's two lanes; lane 0 again is refused */
    EXPECT(lane_hello(&l, a.skey, 5, RT_LANES_VERSION, a.lkey, 0, 2, &msg) == RT_HELLO_OK,
           "lanes.lane0: accepted");
    EXPECT(lane_hello(&l2, a.skey, 5, RT_LANES_VERSION, a.lkey, 0, 2, &msg) == RT_HELLO_SESSION &&
               has(msg, "twice") && closed(l2),
           "lanes.twice: lane 0 offered again refused");
    apigen_tp_close(l2);
    EXPECT(lane_hello(&l2, a.skey, 5, RT_LANES_VERSION, a.lkey, 1, 2, &msg) == RT_HELLO_OK,
           "lanes.lane1: accepted");
    /* a laned write: piece 0 whole on lane 0, half of piece 1 on lane 1, lane 1 closed */
    uint64_t ctx = create_context(a.c), buf = create_buffer(a.c, ctx, 4 << 20);
    size_t n = 3 << 20;
    uint8_t *data = calloc(1, n);
    P(data);
    laned_write_head(a.c, buf, n);
    piece_header(l, 0, 0, 0, 65536);
    (void)send_all(l, data, 65536);
    piece_header(l2, 1, 0, 65536, 65536);
    (void)send_all(l2, data, 30000);
    apigen_tp_close(l2);
    EXPECT(closed(a.c), "lanes.closed_mid_transfer: the owner's connection closed");
    apigen_tp_close(l);
    apigen_tp_close(a.c);
    /* a forged piece: the right lane, a wrong offset */
    owner c = lane_owner(9);
    apigen_conn *cl[2];
    EXPECT(lane_hello(&cl[0], c.skey, 9, RT_LANES_VERSION, c.lkey, 0, 2, &msg) == RT_HELLO_OK &&
               lane_hello(&cl[1], c.skey, 9, RT_LANES_VERSION, c.lkey, 1, 2, &msg) == RT_HELLO_OK,
           "lanes.pair: two lanes accepted");
    ctx = create_context(c.c);
    buf = create_buffer(c.c, ctx, 4 << 20);
    laned_write_head(c.c, buf, n);
    piece_header(cl[0], 0, 0, 4096, 65536);
    (void)send_all(cl[0], data, 65536);
    EXPECT(closed(c.c), "lanes.forged_piece: a piece at the wrong offset closes the connection");
    apigen_tp_close(cl[0]);
    apigen_tp_close(cl[1]);
    apigen_tp_close(c.c);
    /* a laned frame on b, which opened no lanes: closed after the lanes' wait */
    ctx = create_context(b.c);
    buf = create_buffer(b.c, ctx, 4 << 20);
    laned_write_head(b.c, buf, n);
    EXPECT(closed(b.c), "lanes.unopened: a laned frame without lanes closes the connection");
    apigen_tp_close(b.c);
    /* the runtime's own sender over two lanes: the bytes land */
    owner d = lane_owner(11);
    apigen_conn *dl[2];
    char err[256];
    EXPECT(lane_hello(&dl[0], d.skey, 11, RT_LANES_VERSION, d.lkey, 0, 2, &msg) == RT_HELLO_OK &&
               lane_hello(&dl[1], d.skey, 11, RT_LANES_VERSION, d.lkey, 1, 2, &msg) == RT_HELLO_OK,
           "lanes.pair2: two lanes accepted");
    rt_lane_cfg cfg = {2, 65536, 1 << 20};
    rt_lanes *L = rt_lanes_new_guest(d.c, &cfg, d.lkey);
    P(L && rt_lanes_start(L, dl, 2, err, sizeof err));
    ctx = create_context(d.c);
    buf = create_buffer(d.c, ctx, 4 << 20);
    for (size_t i = 0; i < n; i++)
        data[i] = (uint8_t)(i * 7 + 1);
    reply r = write_streamed(d.c, buf, n - 5, data, n - 5);
    EXPECT(ret_of(&r) == EXA_SUCCESS, "lanes.write: a laned exaWriteBuffer of 3 MiB - 5 succeeds");
    /* read back in small (unstreamed) pieces: the first and the last bytes */
    size_t at[2] = {0, n - 5 - 4096};
    bool same = true;
    for (int i = 0; i < 2; i++) {
        apigen_wr w;
        call_begin(&w);
        P(apigen_put_u64(&w, buf) && apigen_put_u64(&w, at[i]) && apigen_put_u64(&w, 4096) &&
          apigen_put_u8(&w, 1));
        r = call_sync(d.c, &w, EXA_CALL_exaReadBuffer);
        const void *p = NULL;
        uint64_t got = 0;
        same = same && ret_of(&r) == EXA_SUCCESS && apigen_get_bytes(&r.rd, &p, &got, 4096) &&
               got == 4096 && memcmp(p, data + at[i], 4096) == 0;
    }
    EXPECT(same, "lanes.read_back: the bytes that went over the lanes are the ones written");
    rt_lanes_free(d.c);
    apigen_tp_close(d.c);
    free(data);
    apigen_conn *e = session(NULL);
    EXPECT(alive(e), "lanes.server_alive: a new session is served");
    apigen_tp_close(e);
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 3) {
        fprintf(stderr, "usage: sec_wire frames|bytes|stall|idle|session|foreign URL [ARGS]\n");
        return 2;
    }
    g_url = argv[2];
    if (strcmp(argv[1], "frames") == 0)
        return mode_frames();
    if (strcmp(argv[1], "bytes") == 0)
        return mode_bytes();
    if (strcmp(argv[1], "stall") == 0)
        return mode_stall(argc > 3 ? atoi(argv[3]) : 5);
    if (strcmp(argv[1], "idle") == 0)
        return mode_idle(argc > 3 ? atoi(argv[3]) : 10, argc > 4 ? atoi(argv[4]) : 15);
    if (strcmp(argv[1], "foreign") == 0)
        return mode_foreign();
    if (strcmp(argv[1], "lanes") == 0)
        return mode_lanes();
    if (strcmp(argv[1], "session") == 0) {
        apigen_conn *c = session(NULL);
        EXPECT(alive(c), "session: served");
        apigen_tp_close(c);
        return failures ? 1 : 0;
    }
    fprintf(stderr, "sec_wire: unknown mode %s\n", argv[1]);
    return 2;
}
