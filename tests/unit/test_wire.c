/* Wire codec: round trips, alignment, hostile lengths, header decoding. */
#define _GNU_SOURCE
#include "apigen_rt.h"
#include "rt_internal.h"
#include "check.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include <sys/socket.h>

static void put_all(apigen_wr *w)
{
    CHECK(apigen_put_u8(w, 0xab));
    CHECK(apigen_put_u16(w, 0xbeef));
    CHECK(apigen_put_u32(w, 0xdeadbeefu));
    CHECK(apigen_put_u64(w, 0x0123456789abcdefull));
    CHECK(apigen_put_f32(w, -1.5f));
    CHECK(apigen_put_f64(w, 3.25e300));
    struct { int a; short b; } raw = {-7, 9};
    CHECK(apigen_put_raw(w, &raw, sizeof raw));
    CHECK(apigen_put_bytes(w, "hello", 5));
    CHECK(apigen_put_bytes(w, NULL, 0));
    CHECK(apigen_put_opt_bytes(w, NULL, 3));
    CHECK(apigen_put_opt_bytes(w, "xyz", 3));
    CHECK(apigen_put_str(w, "a string"));
    CHECK(apigen_put_str(w, NULL));
    CHECK(apigen_put_str(w, ""));
    char *res = apigen_put_bytes_reserve(w, 4);
    CHECK(res != NULL);
    if (res)
        memcpy(res, "RSRV", 4);
}

static void check_aligned(const apigen_rd *r, const void *p)
{
    CHECK(((const uint8_t *)p - r->base) % APIGEN_BUF_ALIGN == 0);
}

static void get_all(apigen_rd *r)
{
    uint8_t u8; uint16_t u16; uint32_t u32; uint64_t u64; float f; double d;
    const void *p; uint64_t n; const char *s;
    CHECK(apigen_get_u8(r, &u8) && u8 == 0xab);
    CHECK(apigen_get_u16(r, &u16) && u16 == 0xbeef);
    CHECK(apigen_get_u32(r, &u32) && u32 == 0xdeadbeefu);
    CHECK(apigen_get_u64(r, &u64) && u64 == 0x0123456789abcdefull);
    CHECK(apigen_get_f32(r, &f) && f == -1.5f);
    CHECK(apigen_get_f64(r, &d) && d == 3.25e300);
    struct { int a; short b; } raw;
    CHECK(apigen_get_raw(r, &raw, sizeof raw) && raw.a == -7 && raw.b == 9);
    CHECK(apigen_get_bytes(r, &p, &n, 100) && n == 5 && memcmp(p, "hello", 5) == 0);
    check_aligned(r, p);
    CHECK(apigen_get_bytes(r, &p, &n, 100) && n == 0 && p != NULL);
    CHECK(apigen_get_opt_bytes(r, &p, &n, 100) && p == NULL && n == 0);
    CHECK(apigen_get_opt_bytes(r, &p, &n, 100) && n == 3 && memcmp(p, "xyz", 3) == 0);
    check_aligned(r, p);
    CHECK(apigen_get_str(r, &s, 100));
    CHECK_STR(s, "a string");
    check_aligned(r, s);
    CHECK(apigen_get_str(r, &s, 100) && s == NULL);
    CHECK(apigen_get_str(r, &s, 100));
    CHECK_STR(s, "");
    char into[8] = {0};
    uint64_t got = 99;
    CHECK(apigen_get_into(r, into, sizeof into, &got) && got == 4 && memcmp(into, "RSRV", 4) == 0);
    CHECK(apigen_rd_done(r));
    CHECK(r->err == NULL);
}

static void test_round_trip(void)
{
    apigen_wr w;
    apigen_wr_init(&w);
    put_all(&w);
    CHECK(!w.failed);
    apigen_rd r;
    apigen_rd_init(&r, w.buf, w.len);
    get_all(&r);

    /* Same with a header in front: alignment is relative to the payload. */
    apigen_wr_reset(&w);
    CHECK(apigen_put_raw(&w, "0123456789abcdefghijklmnopqrstu", 31)); /* odd-sized "header" */
    w.base = w.len;
    put_all(&w);
    apigen_rd_init(&r, w.buf + w.base, w.len - w.base);
    get_all(&r);

    /* Data copied to a 16-aligned buffer is aligned in memory too. */
    void *al = aligned_alloc(16, (w.len - w.base + 15) / 16 * 16);
    memcpy(al, w.buf + w.base, w.len - w.base);
    apigen_rd_init(&r, al, w.len - w.base);
    uint8_t u8;
    CHECK(apigen_get_u8(&r, &u8));
    const void *p; uint64_t n;
    uint16_t u16; uint32_t u32; uint64_t u64; float f; double d; char raw[8];
    CHECK(apigen_get_u16(&r, &u16) && apigen_get_u32(&r, &u32) && apigen_get_u64(&r, &u64) &&
          apigen_get_f32(&r, &f) && apigen_get_f64(&r, &d) && apigen_get_raw(&r, raw, 8));
    CHECK(apigen_get_bytes(&r, &p, &n, 10) && ((uintptr_t)p % 16) == 0);
    free(al);
    apigen_wr_free(&w);
}

/* Builds a payload: u64 length then `have` bytes of data, with the padding
 * the writer would put. */
static void hostile_len(apigen_wr *w, uint64_t len, const char *data, size_t have)
{
    apigen_wr_reset(w);
    CHECK(apigen_put_u64(w, len));
    CHECK(apigen_put_raw(w, "\0\0\0\0\0\0\0\0", 8)); /* padding to 16 */
    CHECK(apigen_put_raw(w, data, have));
}

static void test_hostile(void)
{
    apigen_wr w;
    apigen_rd r;
    const void *p = (const void *)1;
    uint64_t n = 77;
    apigen_wr_init(&w);

    /* lengths near UINT64_MAX / UINT32_MAX against the limit and the payload */
    uint64_t lens[] = {UINT64_MAX, UINT64_MAX - 7, UINT64_MAX - 15, (uint64_t)UINT32_MAX,
                       (uint64_t)UINT32_MAX + 1, 5};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        hostile_len(&w, lens[i], "abcd", 4);
        apigen_rd_init(&r, w.buf, w.len);
        CHECK(!apigen_get_bytes(&r, &p, &n, UINT64_MAX));
        CHECK_STR(r.err, "buffer length exceeds payload");
        apigen_rd_init(&r, w.buf, w.len);
        CHECK(!apigen_get_bytes(&r, &p, &n, 4));
        CHECK_STR(r.err, "buffer length exceeds limit");
        CHECK(r.left == 0);
    }
    /* exact fit passes */
    hostile_len(&w, 4, "abcd", 4);
    apigen_rd_init(&r, w.buf, w.len);
    CHECK(apigen_get_bytes(&r, &p, &n, 4) && n == 4 && apigen_rd_done(&r));

    /* truncated fixed fields */
    apigen_rd_init(&r, "\1\2\3", 3);
    uint32_t u32;
    CHECK(!apigen_get_u32(&r, &u32));
    CHECK_STR(r.err, "truncated payload");
    uint8_t u8;
    CHECK(!apigen_get_u8(&r, &u8)); /* errors are sticky */
    CHECK_STR(r.err, "truncated payload");
    CHECK(!apigen_rd_done(&r));
    apigen_rd_init(&r, "\1\2\3\4\5\6\7", 7);
    uint64_t u64;
    CHECK(!apigen_get_u64(&r, &u64));
    CHECK_STR(r.err, "truncated payload");
    apigen_rd_init(&r, NULL, 0);
    CHECK(!apigen_get_u8(&r, &u8));
    CHECK_STR(r.err, "truncated payload");
    char raw[4];
    apigen_rd_init(&r, "ab", 2);
    CHECK(!apigen_get_raw(&r, raw, 4));
    CHECK_STR(r.err, "truncated payload");

    /* padding cut short, nonzero padding */
    apigen_wr_reset(&w);
    CHECK(apigen_put_u64(&w, 1));
    CHECK(apigen_put_raw(&w, "\0\0\0", 3));
    apigen_rd_init(&r, w.buf, w.len);
    CHECK(!apigen_get_bytes(&r, &p, &n, 10));
    CHECK_STR(r.err, "truncated payload");
    apigen_wr_reset(&w);
    CHECK(apigen_put_u64(&w, 1));
    CHECK(apigen_put_raw(&w, "\0\0\0\0\0\0\0\1X", 9));
    apigen_rd_init(&r, w.buf, w.len);
    CHECK(!apigen_get_bytes(&r, &p, &n, 10));
    CHECK_STR(r.err, "nonzero padding");

    /* present flags */
    apigen_rd_init(&r, "\2", 1);
    CHECK(!apigen_get_opt_bytes(&r, &p, &n, 10));
    CHECK_STR(r.err, "bad present flag");
    CHECK(p == NULL && n == 0);
    apigen_rd_init(&r, "\xff", 1);
    const char *s = "x";
    CHECK(!apigen_get_str(&r, &s, 10));
    CHECK_STR(r.err, "bad present flag");
    CHECK(s == NULL);

    /* strings: missing NUL, embedded NUL, zero length, too long */
    struct { uint64_t len; const char *data; const char *err; } strs[] = {
        {3, "abc", "string not NUL-terminated"},
        {4, "a\0b\0", "embedded NUL in string"},
        {1, "\0", NULL},
        {0, "", "string length 0 (must include the NUL)"},
    };
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
        apigen_wr_reset(&w);
        CHECK(apigen_put_u8(&w, 1));
        CHECK(apigen_put_u64(&w, strs[i].len));
        CHECK(apigen_put_raw(&w, "\0\0\0\0\0\0\0", 7));
        CHECK(apigen_put_raw(&w, strs[i].data, (size_t)strs[i].len));
        apigen_rd_init(&r, w.buf, w.len);
        bool ok = apigen_get_str(&r, &s, 100);
        if (strs[i].err) {
            CHECK(!ok);
            CHECK_STR(r.err, strs[i].err);
        } else {
            CHECK(ok && s && *s == 0 && apigen_rd_done(&r));
        }
    }
    apigen_wr_reset(&w);
    CHECK(apigen_put_str(&w, "0123456789"));
    apigen_rd_init(&r, w.buf, w.len);
    CHECK(!apigen_get_str(&r, &s, 10)); /* 11 bytes with the NUL */
    CHECK_STR(r.err, "buffer length exceeds limit");

    /* get_into bounds */
    apigen_wr_reset(&w);
    CHECK(apigen_put_bytes(&w, "12345", 5));
    char dst[4];
    uint64_t got = 9;
    apigen_rd_init(&r, w.buf, w.len);
    CHECK(!apigen_get_into(&r, dst, sizeof dst, &got));
    CHECK_STR(r.err, "buffer larger than destination");
    CHECK(got == 0);
    apigen_rd_init(&r, w.buf, w.len);
    CHECK(!apigen_get_into(&r, NULL, 10, &got));
    CHECK_STR(r.err, "buffer present but no destination");
    apigen_wr_reset(&w);
    CHECK(apigen_put_bytes(&w, NULL, 0));
    apigen_rd_init(&r, w.buf, w.len);
    CHECK(apigen_get_into(&r, NULL, 0, &got) && got == 0);

    /* trailing bytes are visible */
    apigen_rd_init(&r, "\1\2", 2);
    CHECK(apigen_get_u8(&r, &u8));
    CHECK(!apigen_rd_done(&r));
    apigen_wr_free(&w);
}

static void test_writer_limits(void)
{
    apigen_wr w;
    apigen_wr_init(&w);
    CHECK(!apigen_put_bytes(&w, "x", UINT64_MAX));
    CHECK(w.failed);
    CHECK(!apigen_put_u8(&w, 1)); /* stays failed */
    apigen_wr_reset(&w);
    CHECK(!w.failed);
    CHECK(apigen_put_bytes_reserve(&w, UINT64_MAX - 8) == NULL && w.failed);
    apigen_wr_reset(&w);
    /* a frame payload cannot exceed UINT32_MAX: refused before allocating */
    CHECK(apigen_put_bytes_reserve(&w, (uint64_t)UINT32_MAX) == NULL && w.failed);
    apigen_wr_reset(&w);
    CHECK(!apigen_put_bytes(&w, NULL, 3) && w.failed);
    apigen_wr_reset(&w);
    CHECK(apigen_put_u32(&w, 1) && w.len == 4);
    apigen_wr_free(&w);
}

static void test_sizes(void)
{
    uint64_t out = 0;
    CHECK(apigen_mul_size(1u << 20, 1u << 20, &out) && out == (1ull << 40));
    CHECK(!apigen_mul_size(UINT64_MAX, 2, &out));
    CHECK(!apigen_mul_size((1ull << 32), (1ull << 32), &out));
    CHECK(apigen_mul_size(UINT64_MAX, 1, &out) && out == UINT64_MAX);
    CHECK(apigen_mul_size(0, UINT64_MAX, &out) && out == 0);
    CHECK(apigen_add_size(UINT64_MAX - 1, 1, &out) && out == UINT64_MAX);
    CHECK(!apigen_add_size(UINT64_MAX, 1, &out));
    CHECK(!apigen_add_size(UINT64_MAX - 5, 6, &out));
}

static void test_header(void)
{
    apigen_frame_hdr h = {APIGEN_MAGIC, APIGEN_PROTO_VERSION, APIGEN_F_REPLY | APIGEN_F_ASYNC,
                          0x11223344u, 0x55667788u, 0x99aabbccddeeff00ull, 1000, 0};
    uint8_t b[APIGEN_FRAME_HDR_SIZE];
    apigen_hdr_encode(&h, b);
    CHECK(b[0] == 0x41 && b[1] == 0x50 && b[2] == 0x47 && b[3] == 0x4e); /* "APGN" LE */
    CHECK(b[24] == 0xe8 && b[25] == 0x03);                                 /* 1000 LE */
    apigen_frame_hdr d;
    const char *err = NULL;
    CHECK(apigen_hdr_decode(b, &d, 1000, &err) && err == NULL);
    CHECK(memcmp(&d, &h, sizeof h) == 0);
    CHECK(!apigen_hdr_decode(b, &d, 999, &err));
    CHECK_STR(err, "payload too large");

    uint8_t bad[APIGEN_FRAME_HDR_SIZE];
    memcpy(bad, b, sizeof b);
    bad[0] ^= 1;
    CHECK(!apigen_hdr_decode(bad, &d, 1u << 30, &err));
    CHECK_STR(err, "bad magic");
    memcpy(bad, b, sizeof b);
    bad[4] = APIGEN_PROTO_VERSION + 1;
    CHECK(!apigen_hdr_decode(bad, &d, 1u << 30, &err));
    CHECK_STR(err, "unsupported protocol version");
    memcpy(bad, b, sizeof b);
    bad[31] = 1;
    CHECK(!apigen_hdr_decode(bad, &d, 1u << 30, &err));
    CHECK_STR(err, "nonzero reserved field");
    memcpy(bad, b, sizeof b);
    bad[24] = bad[25] = bad[26] = bad[27] = 0xff;
    CHECK(!apigen_hdr_decode(bad, &d, UINT32_MAX - 1, &err));
    CHECK_STR(err, "payload too large");
    CHECK(apigen_hdr_decode(bad, &d, UINT32_MAX, &err) && d.payload_len == UINT32_MAX);
}

static void test_status(void)
{
    CHECK_STR(apigen_status_str(APIGEN_OK), "ok");
    CHECK_STR(apigen_status_str(APIGEN_LOST), "connection lost");
    CHECK_STR(apigen_status_str(APIGEN_NO_MEMORY), "server out of memory");
    CHECK_STR(apigen_status_str(APIGEN_STATUS_COUNT), "unknown status");
}

/* rt_keep_warm: large buffers stay while used, go after APIGEN_KEEP_MS idle;
 * registered host memory: registered once, unregistered once when forgotten. */
static int nreg, nunreg;
static void *last_reg;
static bool fake_reg(void *p, size_t n)
{
    (void)n;
    nreg++;
    last_reg = p;
    return true;
}
static void fake_unreg(void *p)
{
    CHECK(p == last_reg);
    nunreg++;
}

static void test_keep_and_register(void)
{
    /* 300 ms, not 30: "right after" must hold on a loaded 2-core CI machine,
     * where this thread can be preempted for tens of ms between two lines */
    setenv("APIGEN_KEEP_MS", "300", 1);
    rt_warm w = {0};
    CHECK(rt_keep_warm(&w, 1000, 0, 4096));         /* small: always kept */
    CHECK(rt_keep_warm(&w, 1u << 24, 1u << 23, 4096)); /* used most of it */
    CHECK(rt_keep_warm(&w, 1u << 24, 10, 4096));      /* a small call right after: kept */
    struct timespec ts = {0, 350 * 1000000L};
    nanosleep(&ts, NULL);
    CHECK(!rt_keep_warm(&w, 1u << 24, 10, 4096)); /* idle past APIGEN_KEEP_MS: freed */

    /* the hooks pin only what is asked for (the arena), nothing else */
    static char block[8u << 20];
    CHECK(!rt_host_pin(block, sizeof block)); /* no hooks: nothing happens */
    apigen_set_host_memory(fake_reg, fake_unreg);
    CHECK(nreg == 0);
    CHECK(rt_host_pin(block, sizeof block));
    CHECK(nreg == 1 && last_reg == block);
    rt_host_unpin(block);
    CHECK(nunreg == 1);
    apigen_set_host_memory(NULL, NULL);
    CHECK(!rt_host_pin(block, sizeof block));
    CHECK(nreg == 1);
}

/* Zero-copy pieces (apigen_put_bytes_ref) put the same bytes on the wire as
 * copies; a reply's bulk is received into the caller's memory, the fields
 * after it still decode, and a reader that is not at the bulk gets it too. */
static void zc_frame(apigen_wr *w, const uint8_t *big, size_t n, bool ref, uint16_t flags)
{
    size_t off;
    apigen_wr_reset(w);
    CHECK(rt_wr_begin_frame(w, &off));
    CHECK(apigen_put_u32(w, 7) && apigen_put_u8(w, 1));
    CHECK(ref ? apigen_put_opt_bytes_ref(w, big, n) : apigen_put_opt_bytes(w, big, n));
    CHECK(apigen_put_u8(w, 3));
    CHECK(ref ? apigen_put_bytes_ref(w, big + 1, n - 5) : apigen_put_bytes(w, big + 1, n - 5));
    CHECK(apigen_put_u64(w, 0x1122334455667788ull) && apigen_put_str(w, "tail"));
    CHECK(rt_wr_end_frame(w, off, flags, 9, 1, 2));
}

typedef struct zc_send {
    pthread_t th;
    apigen_conn *c;
    const apigen_wr *w[2];
    bool ok;
} zc_send;

static void *zc_sender(void *arg)
{
    zc_send *z = arg;
    char err[256];
    z->ok = true;
    for (int i = 0; i < 2 && z->w[i]; i++)
        z->ok = z->ok && rt_wr_send(z->c, z->w[i], 5000, err, sizeof err);
    return NULL;
}

/* Sends w (then w2) from another thread: a socket holds less than a frame. */
static zc_send *zc_start(apigen_conn *c, const apigen_wr *w, const apigen_wr *w2)
{
    static zc_send z;
    z.c = c;
    z.w[0] = w;
    z.w[1] = w2;
    CHECK(pthread_create(&z.th, NULL, zc_sender, &z) == 0);
    return &z;
}

static bool zc_join(zc_send *z)
{
    pthread_join(z->th, NULL);
    return z->ok;
}

static void test_zero_copy(void)
{
    enum { N = 300001 };
    uint8_t *big = malloc(N), *dst = malloc(N), *dst2 = malloc(N);
    for (size_t i = 0; i < N; i++)
        big[i] = (uint8_t)(i * 7 + 3);
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    apigen_conn *a = NULL, *b = NULL;
    char err[256];
    CHECK(apigen_tp_adopt_fd(sv[0], "a", &a, err, sizeof err));
    CHECK(apigen_tp_adopt_fd(sv[1], "b", &b, err, sizeof err));
    apigen_wr copy, ref;
    apigen_wr_init(&copy);
    apigen_wr_init(&ref);
    zc_frame(&copy, big, N, false, 0);
    zc_frame(&ref, big, N, true, 0);
    CHECK(ref.next == 2 && ref.len + ref.ext_total == copy.len);
    /* a request: same bytes; with pieces, the bulk flag names the largest (a
     * handler of a call with a streamed in-buffer may take it in chunks) */
    uint8_t *buf = NULL;
    size_t cap = 0;
    apigen_frame_hdr h;
    bool eof;
    for (int k = 0; k < 2; k++) {
        zc_send *z = zc_start(a, k ? &ref : &copy, NULL);
        CHECK(rt_recv_frame(b, &h, &buf, &cap, UINT32_MAX, 1000, &eof, err, sizeof err));
        CHECK(zc_join(z));
        CHECK(h.payload_len == copy.len - APIGEN_FRAME_HDR_SIZE);
        CHECK(k ? (h.flags & APIGEN_F_BULK) && h.reserved > 0 && h.reserved + 8 <= h.payload_len
                : !(h.flags & APIGEN_F_BULK) && h.reserved == 0);
        CHECK(memcmp(buf, copy.buf + APIGEN_FRAME_HDR_SIZE, h.payload_len) == 0);
    }
    /* a reply: the larger piece is the bulk, received into dst */
    zc_frame(&ref, big, N, true, APIGEN_F_REPLY);
    for (int k = 0; k < 2; k++) {
        rt_pull pl;
        apigen_rd rd;
        uint32_t u32;
        uint8_t u8;
        uint64_t u64, got;
        const void *p;
        const char *str;
        zc_send *z = zc_start(a, &ref, NULL);
        CHECK(rt_recv_reply(b, &h, &buf, &cap, UINT32_MAX, 1000, &eof, err, sizeof err, &pl, &rd));
        CHECK((h.flags & APIGEN_F_BULK) && rd.pull == &pl && pl.n == N);
        CHECK(apigen_get_u32(&rd, &u32) && u32 == 7 && apigen_get_u8(&rd, &u8));
        memset(dst, 0, N);
        if (k == 0) { /* into the caller's memory (after the present flag) */
            CHECK(apigen_get_u8(&rd, &u8) && u8 == 1);
            CHECK(apigen_get_into(&rd, dst, N, &got) && got == N && !pl.pending);
            CHECK(memcmp(dst, big, N) == 0);
        } else {      /* read as plain bytes: the rest arrives into the buffer */
            CHECK(apigen_get_opt_bytes(&rd, &p, &got, UINT64_MAX) && got == N);
            CHECK(memcmp(p, big, N) == 0 && !pl.pending);
        }
        CHECK(apigen_get_u8(&rd, &u8) && u8 == 3);
        CHECK(apigen_get_into(&rd, dst2, N, &got) && got == N - 5 && memcmp(dst2, big + 1, N - 5) == 0);
        CHECK(apigen_get_u64(&rd, &u64) && u64 == 0x1122334455667788ull);
        CHECK(apigen_get_str(&rd, &str, 100) && str && strcmp(str, "tail") == 0);
        CHECK(apigen_rd_done(&rd) && rt_pull_drain(&rd));
        CHECK(zc_join(z));
    }
    /* a reply nobody reads: draining leaves the stream at the next frame */
    {
        rt_pull pl;
        apigen_rd rd;
        uint32_t u32;
        zc_send *z = zc_start(a, &ref, &copy);
        CHECK(rt_recv_reply(b, &h, &buf, &cap, UINT32_MAX, 1000, &eof, err, sizeof err, &pl, &rd));
        CHECK(rt_pull_drain(&rd) && !pl.pending);
        CHECK(rt_recv_reply(b, &h, &buf, &cap, UINT32_MAX, 1000, &eof, err, sizeof err, &pl, &rd));
        CHECK(!(h.flags & APIGEN_F_BULK) && rd.pull == NULL && apigen_get_u32(&rd, &u32) && u32 == 7);
        CHECK(zc_join(z));
    }
    /* a peer gone in the middle of the bulk: the read fails, nothing hangs */
    {
        rt_pull pl;
        apigen_rd rd;
        uint32_t u32;
        uint8_t u8;
        CHECK(apigen_tp_send_buf(a, ref.buf, ref.ext[0].at, 1000, err, sizeof err));
        CHECK(apigen_tp_send_buf(a, big, 1000, 1000, err, sizeof err)); /* fits the socket */
        apigen_tp_close(a);
        CHECK(rt_recv_reply(b, &h, &buf, &cap, UINT32_MAX, 1000, &eof, err, sizeof err, &pl, &rd));
        CHECK(apigen_get_u32(&rd, &u32) && apigen_get_u8(&rd, &u8) && apigen_get_u8(&rd, &u8));
        CHECK(!apigen_get_into(&rd, dst, N, NULL) && pl.failed);
        CHECK(!rt_pull_drain(&rd));
    }
    /* a bulk offset past the payload is refused by the header check */
    {
        uint8_t hb[APIGEN_FRAME_HDR_SIZE];
        apigen_frame_hdr bad = {APIGEN_MAGIC, APIGEN_PROTO_VERSION, APIGEN_F_REPLY | APIGEN_F_BULK,
                                0, 0, 0, 16, 9};
        const char *e = NULL;
        apigen_hdr_encode(&bad, hb);
        CHECK(!apigen_hdr_decode(hb, &h, UINT32_MAX, &e) && e && strstr(e, "bulk"));
    }
    apigen_tp_close(b);
    apigen_wr_free(&copy);
    apigen_wr_free(&ref);
    free(buf);
    free(big);
    free(dst);
    free(dst2);
}

/* rt_wr_send_head: the queued frames before a frame leave alone (the guest's
 * own queue before its wait frame: runtime/guest.c send_own_queued), the
 * rest, zero-copy piece included, moves to the front and still sends as it
 * would have; a head that would cut through a zero-copy piece is refused. */
static void test_send_head(void)
{
    enum { N = 300001 };
    uint8_t *big = malloc(N), *got = NULL;
    for (size_t i = 0; i < N; i++)
        big[i] = (uint8_t)(i * 5 + 1);
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    apigen_conn *a = NULL, *b = NULL;
    char err[256];
    CHECK(apigen_tp_adopt_fd(sv[0], "a", &a, err, sizeof err));
    CHECK(apigen_tp_adopt_fd(sv[1], "b", &b, err, sizeof err));
    apigen_wr w, copy;
    apigen_wr_init(&w);
    apigen_wr_init(&copy);
    size_t off;
    for (uint32_t k = 1; k <= 2; k++) { /* two queued frames */
        CHECK(rt_wr_begin_frame(&w, &off) && apigen_put_u32(&w, k));
        CHECK(rt_wr_end_frame(&w, off, APIGEN_F_ASYNC, 5, k, 1));
    }
    size_t head = w.len;
    CHECK(rt_wr_begin_frame(&w, &off) && off == head); /* the frame being sent, with a piece */
    CHECK(apigen_put_u32(&w, 3) && apigen_put_bytes_ref(&w, big, N) && apigen_put_u8(&w, 9));
    CHECK(rt_wr_end_frame(&w, off, 0, 6, 3, 1));
    size_t total = w.len, at = w.ext[0].at;
    CHECK(w.next == 1);
    CHECK(!rt_wr_send_head(a, &w, w.ext[0].at, 1000, err, sizeof err)); /* cuts the piece */
    CHECK(rt_wr_send_head(a, &w, head, 1000, err, sizeof err));
    CHECK(w.len == total - head && w.next == 1 && w.ext[0].at == at - head);
    apigen_frame_hdr h;
    size_t cap = 0;
    bool eof;
    for (uint32_t k = 1; k <= 2; k++) {
        CHECK(rt_recv_frame(b, &h, &got, &cap, UINT32_MAX, 1000, &eof, err, sizeof err));
        CHECK(h.request_id == k && h.payload_len == 4 && got[0] == k);
    }
    CHECK(rt_wr_begin_frame(&copy, &off)); /* what the rest must still be on the wire */
    CHECK(apigen_put_u32(&copy, 3) && apigen_put_bytes(&copy, big, N) && apigen_put_u8(&copy, 9));
    CHECK(rt_wr_end_frame(&copy, off, 0, 6, 3, 1));
    zc_send *z = zc_start(a, &w, NULL);
    CHECK(rt_recv_frame(b, &h, &got, &cap, UINT32_MAX, 1000, &eof, err, sizeof err));
    CHECK(zc_join(z));
    CHECK(h.request_id == 3 && h.payload_len == copy.len - APIGEN_FRAME_HDR_SIZE);
    CHECK(memcmp(got, copy.buf + APIGEN_FRAME_HDR_SIZE, h.payload_len) == 0);
    apigen_wr_free(&w);
    apigen_wr_free(&copy);
    free(got);
    free(big);
    apigen_tp_close(a);
    apigen_tp_close(b);
}

/* The reply prefix: two bytes, ten while an async error rides along. */
static void test_reply_prefix(void)
{
    rt_reply_prefix p;
    apigen_rd r;
    const uint8_t ok[] = {APIGEN_OK, 0, 0xaa};
    apigen_rd_init(&r, ok, sizeof ok);
    CHECK(rt_get_reply_prefix(&r, &p) && p.status == APIGEN_OK && !p.has_deferred && r.left == 1);
    /* an async call's error (-5), reported */
    const uint8_t dv[] = {APIGEN_OK, RT_REPLY_DEFERRED | RT_REPLY_VALUE, 0xfb, 0xff, 0xff, 0xff,
                          0xff, 0xff, 0xff, 0xff};
    apigen_rd_init(&r, dv, sizeof dv);
    CHECK(rt_get_reply_prefix(&r, &p) && p.has_deferred && p.deferred == -5 && r.left == 0);
    /* held by the server but not reported (the call was rejected) */
    const uint8_t held[] = {APIGEN_BAD_HANDLE, RT_REPLY_VALUE, 0, 0, 0, 0, 0, 0, 0, 0};
    apigen_rd_init(&r, held, sizeof held);
    CHECK(rt_get_reply_prefix(&r, &p) && p.status == APIGEN_BAD_HANDLE && !p.has_deferred);
    /* malformed: short, unknown status, unknown flag, a report without its value */
    const uint8_t bad[][10] = {{APIGEN_STATUS_COUNT, 0}, {0, 4}, {0, RT_REPLY_DEFERRED}, {0, RT_REPLY_VALUE}};
    const size_t len[] = {2, 2, 2, 9};
    for (size_t i = 0; i < 4; i++) {
        apigen_rd_init(&r, bad[i], len[i]);
        CHECK(!rt_get_reply_prefix(&r, &p));
    }
    apigen_rd_init(&r, ok, 1);
    CHECK(!rt_get_reply_prefix(&r, &p));
}

int main(void)
{
    test_zero_copy();
    test_send_head();
    test_keep_and_register();
    test_round_trip();
    test_hostile();
    test_writer_limits();
    test_sizes();
    test_header();
    test_status();
    test_reply_prefix();
    CHECK_DONE();
}
