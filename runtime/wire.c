/* Wire codec: frame header, growable writer, bounded reader, size helpers.
 * Every byte that arrives from the other side is read through apigen_rd. */
#define _GNU_SOURCE
#include "rt_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors kept in apigen_rd.err (static strings, asserted by tests) ---- */
#define E_TRUNC "truncated payload"
#define E_LONG "buffer length exceeds limit"
#define E_ARENA "buffer outside the session's shared-memory arena"
#define E_PAST "buffer length exceeds payload"
#define E_PAD "nonzero padding"
#define E_FLAG "bad present flag"
#define E_STR0 "string length 0 (must include the NUL)"
#define E_NONUL "string not NUL-terminated"
#define E_EMBNUL "embedded NUL in string"
#define E_CAP "buffer larger than destination"
#define E_NODST "buffer present but no destination"

const char *apigen_status_str(apigen_status s)
{
    static const char *const names[] = {
#define APIGEN_X_STR(k, str) str,
        APIGEN_STATUS_LIST(APIGEN_X_STR)
#undef APIGEN_X_STR
    };
    if ((unsigned)s >= APIGEN_STATUS_COUNT)
        return "unknown status";
    return names[s];
}

/* ---- little-endian helpers ------------------------------------------------ */
/* n (1, 2, 4 or 8) bytes of v at p, little-endian, and back: one load or
 * store on a little-endian host (every call of a call's path goes through
 * these), byte by byte elsewhere. */
static inline void store_le(uint8_t *p, uint64_t v, unsigned n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint8_t b1 = (uint8_t)v;
    uint16_t b2 = (uint16_t)v;
    uint32_t b4 = (uint32_t)v;
    switch (n) {
    case 1: memcpy(p, &b1, 1); return;
    case 2: memcpy(p, &b2, 2); return;
    case 4: memcpy(p, &b4, 4); return;
    default: memcpy(p, &v, 8); return;
    }
#else
    for (unsigned i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
#endif
}

static inline uint64_t load_le(const uint8_t *p, unsigned n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint16_t b2;
    uint32_t b4;
    uint64_t b8;
    switch (n) {
    case 1: return p[0];
    case 2: memcpy(&b2, p, 2); return b2;
    case 4: memcpy(&b4, p, 4); return b4;
    default: memcpy(&b8, p, 8); return b8;
    }
#else
    uint64_t x = 0;
    for (unsigned i = 0; i < n; i++)
        x |= (uint64_t)p[i] << (8 * i);
    return x;
#endif
}

#if !(defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)
/* the frame header, field by field (a little-endian host copies it whole) */
static void le16(uint8_t *p, uint16_t v) { store_le(p, v, 2); }
static void le32(uint8_t *p, uint32_t v) { store_le(p, v, 4); }
static void le64(uint8_t *p, uint64_t v) { store_le(p, v, 8); }
static uint16_t rd16(const uint8_t *p) { return (uint16_t)load_le(p, 2); }
static uint32_t rd32(const uint8_t *p) { return (uint32_t)load_le(p, 4); }
static uint64_t rd64(const uint8_t *p) { return load_le(p, 8); }
#endif

/* ---- frame header ---------------------------------------------------------- */
void apigen_hdr_encode(const apigen_frame_hdr *h, uint8_t out[APIGEN_FRAME_HDR_SIZE])
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    _Static_assert(sizeof *h == APIGEN_FRAME_HDR_SIZE, "the header struct is its wire layout");
    memcpy(out, h, APIGEN_FRAME_HDR_SIZE); /* fields in wire order, no padding: one copy */
#else
    le32(out, h->magic);
    le16(out + 4, h->version);
    le16(out + 6, h->flags);
    le32(out + 8, h->call_id);
    le32(out + 12, h->request_id);
    le64(out + 16, h->thread_id);
    le32(out + 24, h->payload_len);
    le32(out + 28, h->reserved);
#endif
}

bool apigen_hdr_decode(const uint8_t in[APIGEN_FRAME_HDR_SIZE], apigen_frame_hdr *h,
                       uint32_t max_payload, const char **err)
{
    const char *e = NULL;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(h, in, APIGEN_FRAME_HDR_SIZE); /* the struct is the wire layout (encode) */
#else
    h->magic = rd32(in);
    h->version = rd16(in + 4);
    h->flags = rd16(in + 6);
    h->call_id = rd32(in + 8);
    h->request_id = rd32(in + 12);
    h->thread_id = rd64(in + 16);
    h->payload_len = rd32(in + 24);
    h->reserved = rd32(in + 28);
#endif
    if (h->magic != APIGEN_MAGIC)
        e = "bad magic";
    else if (h->version != APIGEN_PROTO_VERSION)
        e = "unsupported protocol version";
    else if (h->reserved != 0 && !(h->flags & APIGEN_F_BULK))
        e = "nonzero reserved field";
    else if ((h->flags & APIGEN_F_BULK) && (uint64_t)h->reserved + 8 > h->payload_len)
        e = "bulk offset past the payload";
    else if (h->payload_len > max_payload)
        e = "payload too large";
    if (e && err)
        *err = e;
    return e == NULL;
}

/* ---- size helpers ------------------------------------------------------------ */
/* The external definitions of apigen_rt.h's inline helpers. */
extern inline bool apigen_mul_size(uint64_t a, uint64_t b, uint64_t *out);
extern inline bool apigen_add_size(uint64_t a, uint64_t b, uint64_t *out);
extern inline bool apigen_put_u8(apigen_wr *w, uint8_t v);
extern inline bool apigen_put_u16(apigen_wr *w, uint16_t v);
extern inline bool apigen_put_u32(apigen_wr *w, uint32_t v);
extern inline bool apigen_put_u64(apigen_wr *w, uint64_t v);
extern inline bool apigen_put_f32(apigen_wr *w, float v);
extern inline bool apigen_put_f64(apigen_wr *w, double v);
extern inline bool apigen_get_u8(apigen_rd *r, uint8_t *v);
extern inline bool apigen_get_u16(apigen_rd *r, uint16_t *v);
extern inline bool apigen_get_u32(apigen_rd *r, uint32_t *v);
extern inline bool apigen_get_u64(apigen_rd *r, uint64_t *v);
extern inline bool apigen_get_f32(apigen_rd *r, float *v);
extern inline bool apigen_get_f64(apigen_rd *r, double *v);
extern inline bool apigen_rd_done(const apigen_rd *r);

/* ---- writer -------------------------------------------------------------- */
void apigen_wr_init(apigen_wr *w) { memset(w, 0, sizeof *w); }

void apigen_wr_reset(apigen_wr *w)
{
    w->len = 0;
    w->base = 0;
    w->failed = false;
    w->next = 0;
    w->ext_total = 0;
}

void rt_wr_truncate(apigen_wr *w, size_t len)
{
    while (w->next && w->ext[w->next - 1].at > len) {
        w->next--;
        w->ext_total -= (size_t)w->ext[w->next].n;
    }
    w->len = len;
    w->failed = false;
}

/* A large frame in pieces of 4 MiB, a progress line a second (progress.c).
 * The caller holds the connection for the whole frame, as for one send. */
static bool send_with_progress(apigen_conn *c, const struct iovec *iov, int n, size_t total,
                               int timeout_ms, char *err, size_t errlen)
{
    enum { CHUNK = 4 << 20 };
    rt_progress p;
    rt_progress_begin(&p, "sending", total);
    int i = 0;
    size_t off = 0; /* into iov[i] */
    while (i < n) {
        struct iovec part[2 * APIGEN_WR_EXT + 1];
        int k = 0;
        size_t got = 0;
        while (i < n && got < CHUNK) {
            size_t left = iov[i].iov_len - off, take = left < CHUNK - got ? left : CHUNK - got;
            if (take)
                part[k++] = (struct iovec){(char *)iov[i].iov_base + off, take};
            got += take;
            off += take;
            if (off == iov[i].iov_len) {
                i++;
                off = 0;
            }
        }
        if (k && !apigen_tp_send(c, part, k, timeout_ms, err, errlen))
            return false;
        rt_progress_step(&p, got);
    }
    rt_progress_end(&p);
    return true;
}

/* w's bytes with every frame's bulk of at least the lanes' threshold on
 * lanes L: the frame's header goes with APIGEN_F_LANES, the payload before
 * the bulk, then the bulk over the lanes, then the rest, in w's order (the
 * receiver reads them in that order: a frame's tail never waits behind a
 * later frame's bulk). false with err[0] == 0: w's frames could not be
 * walked (the caller sends it plainly). */
static bool send_laned(apigen_conn *c, rt_lanes *L, const apigen_wr *w, int timeout_ms, char *err,
                       size_t errlen)
{
    uint64_t min = rt_lanes_min(L);
    bool laned[APIGEN_WR_EXT] = {0};
    size_t hoff[APIGEN_WR_EXT] = {0};
    unsigned nl = 0;
    /* the frames: a frame at p has 32 + payload_len bytes, less those of
     * its zero-copy pieces, in the buffer (its pieces: the next ones whose
     * insertion point lies before its end) */
    size_t p = 0;
    unsigned j = 0;
    while (p < w->len) {
        apigen_frame_hdr h;
        const char *e;
        if (w->len - p < APIGEN_FRAME_HDR_SIZE || !apigen_hdr_decode(w->buf + p, &h, UINT32_MAX, &e))
            goto plain;
        uint64_t end = p + APIGEN_FRAME_HDR_SIZE + (uint64_t)h.payload_len;
        for (; j < w->next && w->ext[j].at > p && w->ext[j].at + w->ext[j].n <= end; j++) {
            end -= w->ext[j].n;
            if ((h.flags & APIGEN_F_BULK) && w->ext[j].len_off == h.reserved && w->ext[j].n >= min &&
                !(h.flags & APIGEN_F_LANES)) {
                laned[j] = true;
                hoff[j] = p;
                nl++;
            }
        }
        if (end > w->len)
            goto plain;
        p = (size_t)end;
    }
    if (j != w->next || !nl)
        goto plain;
    /* in order: buffer bytes (each laned frame's header patched), pieces */
    struct iovec iov[4 * APIGEN_WR_EXT + 2];
    uint8_t hdr[APIGEN_WR_EXT][APIGEN_FRAME_HDR_SIZE];
    unsigned ph = 0; /* the next laned piece whose header is still to go */
    int n = 0;
    size_t at = 0;
    for (unsigned i = 0; i <= w->next; i++) {
        size_t upto = i < w->next ? w->ext[i].at : w->len;
        for (; ph < w->next && (!laned[ph] || hoff[ph] < upto); ph++) {
            if (!laned[ph])
                continue;
            if (hoff[ph] > at)
                iov[n++] = (struct iovec){w->buf + at, hoff[ph] - at};
            memcpy(hdr[ph], w->buf + hoff[ph], APIGEN_FRAME_HDR_SIZE);
            uint16_t fl = (uint16_t)(hdr[ph][6] | hdr[ph][7] << 8) | APIGEN_F_LANES;
            hdr[ph][6] = (uint8_t)fl;
            hdr[ph][7] = (uint8_t)(fl >> 8);
            iov[n++] = (struct iovec){hdr[ph], APIGEN_FRAME_HDR_SIZE};
            at = hoff[ph] + APIGEN_FRAME_HDR_SIZE;
        }
        if (upto > at)
            iov[n++] = (struct iovec){w->buf + at, upto - at};
        at = upto;
        if (i == w->next)
            break;
        if (!laned[i]) {
            iov[n++] = (struct iovec){(void *)w->ext[i].p, (size_t)w->ext[i].n};
            continue;
        }
        if ((n && !apigen_tp_send(c, iov, n, timeout_ms, err, errlen)) ||
            !rt_lanes_send(L, w->ext[i].p, w->ext[i].n, timeout_ms, err, errlen))
            return false;
        n = 0;
    }
    return !n || apigen_tp_send(c, iov, n, timeout_ms, err, errlen);
plain:
    if (err && errlen)
        err[0] = 0;
    return false;
}

bool rt_wr_send(apigen_conn *c, const apigen_wr *w, int timeout_ms, char *err, size_t errlen)
{
    size_t total = w->len + w->ext_total;
    rt_lanes *L;
    if (w->next && w->ext_total >= RT_LANE_PIECE_MIN && (L = rt_lanes_for_send(c, w->ext_total))) {
        if (send_laned(c, L, w, timeout_ms, err, errlen))
            return true;
        if (!err || err[0])
            return false; /* sending failed */
    }
    if (rt_progress_wanted(total) && !w->next) {
        struct iovec one = {w->buf, w->len};
        return send_with_progress(c, &one, 1, total, timeout_ms, err, errlen);
    }
    if (!w->next)
        return apigen_tp_send_buf(c, w->buf, w->len, timeout_ms, err, errlen);
    struct iovec iov[2 * APIGEN_WR_EXT + 1];
    int n = 0;
    size_t at = 0;
    for (unsigned i = 0; i < w->next; i++) {
        if (w->ext[i].at > at)
            iov[n++] = (struct iovec){w->buf + at, w->ext[i].at - at};
        iov[n++] = (struct iovec){(void *)w->ext[i].p, (size_t)w->ext[i].n};
        at = w->ext[i].at;
    }
    if (w->len > at)
        iov[n++] = (struct iovec){w->buf + at, w->len - at};
    if (rt_progress_wanted(total))
        return send_with_progress(c, iov, n, total, timeout_ms, err, errlen);
    return apigen_tp_send(c, iov, n, timeout_ms, err, errlen);
}

static bool set_err(const char *e, char *err, size_t errlen);

bool rt_wr_send_head(apigen_conn *c, apigen_wr *w, size_t upto, int timeout_ms, char *err,
                     size_t errlen)
{
    if (upto > w->len || (w->next && w->ext[0].at <= upto)) /* queued frames keep none */
        return set_err("a queued frame holds a zero-copy piece", err, errlen);
    if (!apigen_tp_send_buf(c, w->buf, upto, timeout_ms, err, errlen))
        return false;
    memmove(w->buf, w->buf + upto, w->len - upto);
    w->len -= upto;
    w->base = w->base > upto ? w->base - upto : 0;
    for (unsigned i = 0; i < w->next; i++)
        w->ext[i].at -= upto;
    return true;
}

void apigen_wr_free(apigen_wr *w)
{
    free(w->buf);
    apigen_wr_init(w);
}

/* Whether extra more bytes fit w's buffer as it is, within a u32 payload
 * (inline: every put of a call checks it). */
static inline bool wr_fits(const apigen_wr *w, uint64_t extra)
{
    return !w->failed && extra <= w->cap - w->len &&
           w->len + extra + w->ext_total - w->base <= UINT32_MAX;
}

/* A frame's payload_len is a u32: nothing larger can ever be sent, so fail
 * here instead of trying to allocate it. */
static bool wr_grow(apigen_wr *w, uint64_t extra)
{
    if (w->failed)
        return false;
    uint64_t need, payload;
    if (!apigen_add_size(w->len, extra, &need) || need > SIZE_MAX ||
        (payload = need + w->ext_total - w->base) > UINT32_MAX) {
        w->failed = true;
        return false;
    }
    if (need <= w->cap)
        return true;
    size_t nc = w->cap ? w->cap : 256;
    while (nc < need)
        nc = nc > SIZE_MAX / 2 ? (size_t)need : nc * 2;
    uint8_t *p = realloc(w->buf, nc);
    if (!p) {
        w->failed = true;
        return false;
    }
    w->buf = p;
    w->cap = nc;
    return true;
}

static inline bool wr_room(apigen_wr *w, uint64_t extra)
{
    return wr_fits(w, extra) || wr_grow(w, extra);
}

/* Copies n bytes: the sizes of most out-parameters (a u32, a u64, a
 * pointer) as one move each, instead of a call into the C library. */
static inline void copy_bytes(void *dst, const void *src, size_t n)
{
    if (n == 8)
        memcpy(dst, src, 8);
    else if (n == 4)
        memcpy(dst, src, 4);
    else if (n)
        memcpy(dst, src, n);
}

/* pad (< 16) zero bytes at p: a few stores instead of a memset call. */
static inline void zero_pad(uint8_t *p, size_t pad)
{
    static const uint8_t zeros[8];
    if (pad & 8)
        memcpy(p, zeros, 8), p += 8;
    if (pad & 4)
        memcpy(p, zeros, 4), p += 4;
    if (pad & 2)
        memcpy(p, zeros, 2), p += 2;
    if (pad & 1)
        *p = 0;
}

bool rt_wr_skip(apigen_wr *w, size_t n)
{
    if (!wr_room(w, n))
        return false;
    memset(w->buf + w->len, 0, n);
    w->len += n;
    return true;
}

bool rt_wr_begin_reply(apigen_wr *w, size_t *frame_off, size_t prefix)
{
    apigen_wr_reset(w);
    if (!wr_room(w, APIGEN_FRAME_HDR_SIZE + prefix))
        return false;
    *frame_off = 0; /* the header is written by rt_wr_end_frame */
    w->len = APIGEN_FRAME_HDR_SIZE;
    w->base = APIGEN_FRAME_HDR_SIZE;
    if (prefix < 16)
        zero_pad(w->buf + w->len, prefix); /* a reply's prefix: a store or two, no memset call */
    else
        memset(w->buf + w->len, 0, prefix);
    w->len += prefix;
    return true;
}

bool rt_wr_begin_frame_slow(apigen_wr *w, size_t *frame_off)
{
    size_t off = w->len;
    if (!wr_room(w, APIGEN_FRAME_HDR_SIZE))
        return false;
    w->len += APIGEN_FRAME_HDR_SIZE; /* not zeroed: rt_wr_end_frame writes all of it, and a */
    *frame_off = off;                /* frame that is never ended is never sent */
    w->base = w->len + w->ext_total;
    return true;
}

bool rt_wr_end_frame(apigen_wr *w, size_t frame_off, uint16_t flags, uint32_t call_id,
                     uint32_t request_id, uint64_t thread_id)
{
    if (w->failed || frame_off + APIGEN_FRAME_HDR_SIZE > w->len)
        return false;
    uint64_t payload = w->len - frame_off - APIGEN_FRAME_HDR_SIZE, bulk = 0;
    const apigen_wr_ext *big = NULL;
    for (unsigned i = 0; i < w->next; i++)
        if (w->ext[i].at > frame_off) {
            payload += w->ext[i].n;
            if (!big || w->ext[i].n > big->n)
                big = &w->ext[i];
        }
    if (payload > UINT32_MAX)
        return false;
    if (big) { /* the largest piece: a guest may place it, a streaming handler take it in chunks */
        flags |= APIGEN_F_BULK;
        bulk = big->len_off;
    }
    apigen_frame_hdr h = {APIGEN_MAGIC, APIGEN_PROTO_VERSION, flags, call_id, request_id,
                          thread_id, (uint32_t)payload, (uint32_t)bulk};
    apigen_hdr_encode(&h, w->buf + frame_off);
    return true;
}

static inline bool put_le(apigen_wr *w, uint64_t v, unsigned n)
{
    if (!wr_room(w, n))
        return false;
    store_le(w->buf + w->len, v, n);
    w->len += n;
    return true;
}

bool apigen_put_le_slow(apigen_wr *w, uint64_t v, unsigned n) { return put_le(w, v, n); }

bool apigen_put_raw(apigen_wr *w, const void *p, size_t n)
{
    if (!wr_room(w, n))
        return false;
    if (n)
        memcpy(w->buf + w->len, p, n);
    w->len += n;
    return true;
}

/* Whether pad (< 16) bytes at p are all zero: a few loads, no loop. */
static inline bool zero_bytes(const uint8_t *p, size_t pad)
{
    uint64_t z = 0, v8 = 0;
    uint32_t v4 = 0;
    uint16_t v2 = 0;
    if (pad & 8)
        memcpy(&v8, p, 8), p += 8;
    if (pad & 4)
        memcpy(&v4, p, 4), p += 4;
    if (pad & 2)
        memcpy(&v2, p, 2), p += 2;
    z = v8 | v4 | v2 | (pad & 1 ? *p : 0u);
    return z == 0;
}

/* Zero bytes that follow a u64 length so the data starts 16-aligned
 * relative to the payload start. */
static size_t pad_after_len(const apigen_wr *w)
{
    size_t off = w->len + w->ext_total - w->base + 8;
    return (APIGEN_BUF_ALIGN - off % APIGEN_BUF_ALIGN) % APIGEN_BUF_ALIGN;
}

/* apigen_put_bytes_reserve, inline in the writers below (every out-buffer
 * of a reply goes through one of them). */
static inline void *reserve_bytes(apigen_wr *w, uint64_t n)
{
    if (w->failed)
        return NULL;
    size_t pad = pad_after_len(w);
    uint64_t total;
    if (!apigen_add_size(8 + pad, n, &total)) {
        w->failed = true;
        return NULL;
    }
    if (!wr_room(w, total))
        return NULL;
    store_le(w->buf + w->len, n, 8); /* room for all of it was made above */
    w->len += 8;
    zero_pad(w->buf + w->len, pad);
    w->len += pad;
    void *at = w->buf + w->len;
    w->len += (size_t)n;
    return at;
}

void *apigen_put_bytes_reserve(apigen_wr *w, uint64_t n) { return reserve_bytes(w, n); }

static inline bool put_bytes(apigen_wr *w, const void *p, uint64_t n)
{
    if (n && !p) {
        w->failed = true;
        return false;
    }
    void *at = reserve_bytes(w, n);
    if (!at)
        return false;
    copy_bytes(at, p, (size_t)n);
    return true;
}

bool apigen_put_bytes(apigen_wr *w, const void *p, uint64_t n) { return put_bytes(w, p, n); }

bool (*rt_wire_arena_find)(const void *p, uint64_t n, uint64_t *off);
const void *(*rt_wire_arena_at)(uint64_t off, uint64_t n, bool *bound);

/* The bytes of a small buffer (most out-parameters of a reply) when they
 * fit as the buffer is: length, padding and data in one pass. false: take
 * the general path (which also reports the errors). */
static inline bool put_small(apigen_wr *w, const void *p, uint64_t n)
{
    if (n > 64 || (n && !p) || w->failed)
        return false;
    size_t at = w->len + w->ext_total - w->base; /* the length's payload offset */
    size_t pad = (APIGEN_BUF_ALIGN - (at + 8) % APIGEN_BUF_ALIGN) % APIGEN_BUF_ALIGN;
    size_t need = 8 + pad + (size_t)n;
    if (need > w->cap - w->len || at + need > UINT32_MAX)
        return false;
    uint8_t *o = w->buf + w->len;
    store_le(o, n, 8);
    zero_pad(o + 8, pad);
    copy_bytes(o + 8 + pad, p, (size_t)n);
    w->len += need;
    return true;
}

static __attribute__((noinline)) bool put_bytes_ref_any(apigen_wr *w, const void *p, uint64_t n);

bool apigen_put_bytes_ref(apigen_wr *w, const void *p, uint64_t n)
{
    if (!rt_wire_arena_find && put_small(w, p, n)) /* an arena may hold p: not this path */
        return true;
    return put_bytes_ref_any(w, p, n); /* out of line: the small path saves no registers */
}

static bool put_bytes_ref_any(apigen_wr *w, const void *p, uint64_t n)
{
    uint64_t aoff;
    if (n && p && rt_wire_arena_find && n < RT_ARENA_BIT && rt_wire_arena_find(p, n, &aoff))
        return apigen_put_u64(w, n | RT_ARENA_BIT) && apigen_put_u64(w, aoff); /* the server maps it */
    if (n < APIGEN_REF_MIN || w->next == APIGEN_WR_EXT || !p)
        return put_bytes(w, p, n);
    if (w->failed)
        return false;
    size_t pad = pad_after_len(w), len_off = w->len + w->ext_total - w->base;
    uint64_t payload;
    if (!apigen_add_size(len_off + 8 + pad, n, &payload) || payload > UINT32_MAX || n > SIZE_MAX) {
        w->failed = true;
        return false;
    }
    if (!wr_room(w, 8 + pad) || !put_le(w, n, 8))
        return false;
    memset(w->buf + w->len, 0, pad);
    w->len += pad;
    w->ext[w->next++] = (apigen_wr_ext){w->len, len_off, p, n};
    w->ext_total += (size_t)n;
    return true;
}

bool apigen_put_opt_bytes_ref(apigen_wr *w, const void *p, uint64_t n)
{
    if (!p)
        return apigen_put_u8(w, 0);
    return apigen_put_u8(w, 1) && apigen_put_bytes_ref(w, p, n);
}

bool apigen_put_opt_bytes(apigen_wr *w, const void *p, uint64_t n)
{
    if (!p)
        return apigen_put_u8(w, 0);
    return apigen_put_u8(w, 1) && apigen_put_bytes(w, p, n);
}

bool apigen_put_str(apigen_wr *w, const char *s)
{
    if (!s)
        return apigen_put_u8(w, 0);
    return apigen_put_u8(w, 1) && apigen_put_bytes(w, s, (uint64_t)strlen(s) + 1);
}

/* ---- reader ------------------------------------------------------------------ */
void apigen_rd_init(apigen_rd *r, const void *payload, size_t len)
{
    r->base = payload;
    r->p = payload;
    r->left = payload ? len : 0;
    r->err = NULL;
    r->pull = NULL;
}

static bool pull_rest(apigen_rd *r);

/* n more bytes are there, or come once the rest of a bulk reply is read */
static inline bool rd_need(apigen_rd *r, size_t n)
{
    return r->left >= n || (r->pull && r->pull->pending && pull_rest(r) && r->left >= n);
}

static bool rd_fail(apigen_rd *r, const char *e)
{
    if (!r->err)
        r->err = e;
    r->left = 0;
    return false;
}

static inline bool get_le(apigen_rd *r, uint64_t *v, unsigned n)
{
    if (r->err)
        return false;
    if (!rd_need(r, n))
        return rd_fail(r, E_TRUNC);
    *v = load_le(r->p, n);
    r->p += n;
    r->left -= n;
    return true;
}

bool apigen_get_le_slow(apigen_rd *r, uint64_t *v, unsigned n) { return get_le(r, v, n); }

bool apigen_get_raw(apigen_rd *r, void *dst, size_t n)
{
    if (r->err)
        return false;
    if (!rd_need(r, n))
        return rd_fail(r, E_TRUNC);
    if (n)
        memcpy(dst, r->p, n);
    r->p += n;
    r->left -= n;
    return true;
}

/* The u64 length and padding of a buffer. */
static bool get_bytes_head(apigen_rd *r, uint64_t *len, uint64_t max)
{
    if (!get_le(r, len, 8))
        return false;
    if (*len > max)
        return rd_fail(r, E_LONG);
    size_t off = (size_t)(r->p - r->base);
    size_t pad = (APIGEN_BUF_ALIGN - off % APIGEN_BUF_ALIGN) % APIGEN_BUF_ALIGN;
    if (!rd_need(r, pad))
        return rd_fail(r, E_TRUNC);
    for (size_t i = 0; i < pad; i++)
        if (r->p[i])
            return rd_fail(r, E_PAD);
    r->p += pad;
    r->left -= pad;
    return true;
}

static bool get_bytes_in(apigen_rd *r, const void **p, uint64_t *n, uint64_t max, bool arena)
{
    uint64_t len;
    apigen_rd at = *r;
    bool bound = false;
    if (arena && rt_wire_arena_at && get_le(&at, &len, 8) && (len & RT_ARENA_BIT) &&
        (rt_wire_arena_at(0, 0, &bound), bound)) {
        /* (length, offset) in the guest's arena: a pointer into our mapping */
        uint64_t aoff;
        const void *q;
        len &= ~RT_ARENA_BIT;
        if (!get_le(&at, &aoff, 8))
            return rd_fail(r, E_TRUNC);
        if (!(q = rt_wire_arena_at(aoff, len, &bound)))
            return rd_fail(r, E_ARENA);
        *r = at;
        *p = q;
        *n = len;
        return true;
    }
    if (!get_bytes_head(r, &len, max))
        return false;
    if (len > SIZE_MAX || !rd_need(r, (size_t)len))
        return rd_fail(r, E_PAST);
    *p = r->p;
    *n = len;
    r->p += len;
    r->left -= (size_t)len;
    return true;
}

bool apigen_get_bytes(apigen_rd *r, const void **p, uint64_t *n, uint64_t max)
{
    return get_bytes_in(r, p, n, max, true);
}

/* The presence flag of an optional buffer (0 or 1; anything else fails the
 * reader); the buffer starts out absent. */
static bool get_present(apigen_rd *r, uint8_t *present, const void **p, uint64_t *n)
{
    *p = NULL;
    *n = 0;
    if (!apigen_get_u8(r, present))
        return false;
    return *present <= 1 || rd_fail(r, E_FLAG);
}

static bool get_opt_bytes_noarena(apigen_rd *r, const void **p, uint64_t *n, uint64_t max)
{
    uint8_t present;
    if (!get_present(r, &present, p, n))
        return false;
    return !present || get_bytes_in(r, p, n, max, false);
}

bool apigen_get_opt_bytes(apigen_rd *r, const void **p, uint64_t *n, uint64_t max)
{
    uint8_t present;
    if (!get_present(r, &present, p, n))
        return false;
    return !present || apigen_get_bytes(r, p, n, max);
}

bool apigen_get_opt_bytes_stream(apigen_call_ctx *cx, const void **p, uint64_t *n, uint64_t max,
                                 uint64_t chunk, uint64_t min, apigen_stream **s)
{
    apigen_rd *r = cx->rd;
    rt_dispatch *d = cx->rt;
    rt_pull *pl = d ? d->pull : NULL;
    uint8_t present;
    *s = NULL;
    if (!get_present(r, &present, p, n))
        return false;
    if (!present)
        return true;
    /* still in transit, the payload's last field, and long enough: stream it */
    if (pl && pl->pending && !r->err && (size_t)(r->p - r->base) == pl->len_off && !pl->tail &&
        pl->n >= min && pl->n >= 1 && !d->in.on) {
        uint64_t len;
        if (!get_bytes_head(r, &len, max))
            return false;
        if (len != pl->n || r->left != 0)
            return rd_fail(r, E_PAST);
        pl->pending = false;
        d->in = (struct apigen_stream){d, true, false, false, len, 0, chunk ? chunk : len, pl->lanes};
        *n = len;
        *s = &d->in;
        return true;
    }
    return apigen_get_bytes(r, p, n, max);
}

bool apigen_get_str(apigen_rd *r, const char **s, uint64_t max)
{
    const void *p;
    uint64_t n;
    *s = NULL;
    /* checked, then used: never bytes the guest can still change */
    if (!get_opt_bytes_noarena(r, &p, &n, max))
        return false;
    if (!p)
        return true;
    if (n == 0)
        return rd_fail(r, E_STR0);
    const char *c = p;
    if (c[n - 1] != '\0')
        return rd_fail(r, E_NONUL);
    if (memchr(c, 0, (size_t)n - 1))
        return rd_fail(r, E_EMBNUL);
    *s = c;
    return true;
}

static bool pull_into(apigen_rd *r, void *dst);

bool apigen_get_into(apigen_rd *r, void *dst, uint64_t cap, uint64_t *got)
{
    const void *p;
    uint64_t n;
    if (got)
        *got = 0;
    rt_pull *pl = r->pull;
    if (!r->err && r->left >= 8 && !(pl && pl->pending)) {
        /* all of it is here (every out-buffer of a small reply): checked in
         * place; anything unusual takes the general path below */
        n = load_le(r->p, 8);
        size_t off = (size_t)(r->p - r->base) + 8;
        size_t pad = (APIGEN_BUF_ALIGN - off % APIGEN_BUF_ALIGN) % APIGEN_BUF_ALIGN;
        if (n <= cap && (n == 0 || dst) && r->left - 8 >= pad && n <= r->left - 8 - pad &&
            zero_bytes(r->p + 8, pad)) {
            copy_bytes(dst, r->p + 8 + pad, (size_t)n);
            r->p += 8 + pad + (size_t)n;
            r->left -= 8 + pad + (size_t)n;
            if (got)
                *got = n;
            return true;
        }
    }
    if (pl && pl->pending && !r->err && (size_t)(r->p - r->base) == pl->len_off) {
        /* the bulk of the reply: from the transport straight into dst */
        if (!get_bytes_head(r, &n, UINT64_MAX))
            return false;
        if (n > cap)
            return rd_fail(r, E_CAP);
        if (n && !dst)
            return rd_fail(r, E_NODST);
        if (n == pl->n && r->left == 0 && (size_t)(r->p - r->base) == pl->data_off) {
            if (!pull_into(r, dst))
                return false;
            if (got)
                *got = n;
            return true;
        }
        if (!rd_need(r, (size_t)n))
            return rd_fail(r, E_PAST);
        p = r->p;
        r->p += n;
        r->left -= (size_t)n;
    } else if (!apigen_get_bytes(r, &p, &n, UINT64_MAX)) {
        return false;
    }
    if (n > cap)
        return rd_fail(r, E_CAP);
    if (n && !dst)
        return rd_fail(r, E_NODST);
    if (n)
        memcpy(dst, p, (size_t)n);
    if (got)
        *got = n;
    return true;
}

bool apigen_rd_pending(const apigen_rd *r)
{
    return r->pull && r->pull->pending;
}

static uint64_t keep_ns_;
static void keep_init(void)
{
    const char *v = getenv("APIGEN_KEEP_MS");
    char *end = NULL;
    long ms = v && *v ? strtol(v, &end, 10) : -1;
    keep_ns_ = (ms >= 0 && end && !*end ? (uint64_t)ms : 2000u) * 1000000u;
}

bool rt_keep_warm_slow(rt_warm *w, size_t cap, size_t used, size_t keep_min)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    if (cap <= keep_min)
        return true;
    pthread_once(&once, keep_init);
    uint64_t now = apigen_now_ns();
    if (used >= cap / 4 || !w->used_ns) {
        w->used_ns = now;
        return true;
    }
    if (now - w->used_ns < keep_ns_)
        return true;
    w->used_ns = 0;
    return false;
}

#define RECV_CHUNK (1u << 20)

/* ---- frames over a transport ----------------------------------------------------- */
static bool set_err(const char *e, char *err, size_t errlen)
{
    if (err && errlen) {
        size_t l = strlen(e);
        if (l >= errlen)
            l = errlen - 1;
        memcpy(err, e, l);
        err[l] = 0;
    }
    return false;
}

/* Receives payload bytes [have, want) into *buf, growing it (never past
 * limit) with the bytes that actually arrive (SECURITY.md S2). */
static bool recv_grow_from(apigen_conn *c, rt_lanes *L, uint8_t **buf, size_t *cap, size_t have,
                           size_t want, size_t limit, int timeout_ms, char *err, size_t errlen);
static bool recv_grow(apigen_conn *c, uint8_t **buf, size_t *cap, size_t have, size_t want,
                      size_t limit, int timeout_ms, char *err, size_t errlen)
{
    return recv_grow_from(c, NULL, buf, cap, have, want, limit, timeout_ms, err, errlen);
}

/* As recv_grow, the bytes coming over lanes L when L (in steps as large as
 * the buffer already is: a lanes transfer has a cost per step) */
static bool recv_grow_from(apigen_conn *c, rt_lanes *L, uint8_t **buf, size_t *cap, size_t have,
                           size_t want, size_t limit, int timeout_ms, char *err, size_t errlen)
{
    while (have < want) {
        size_t step = L && *cap > have + RECV_CHUNK ? *cap - have : RECV_CHUNK;
        size_t upto = want - have > step ? have + step : want;
        if (upto > *cap) {
            size_t nc = *cap * 2 > upto ? *cap * 2 : upto;
            if (nc > limit)
                nc = limit;
            uint8_t *p = realloc(*buf, nc);
            if (!p)
                return set_err("out of memory for the frame payload", err, errlen);
            *buf = p;
            *cap = nc;
        }
        if (L ? !rt_lanes_recv(L, *buf + have, upto - have, timeout_ms, err, errlen)
              : apigen_tp_recv(c, *buf + have, upto - have, timeout_ms, err, errlen) != APIGEN_TP_OK)
            return false; /* EOF inside a frame is an error, not a clean close */
        have = upto;
    }
    return true;
}

/* Reads the rest of a bulk reply into the reply buffer, where a plain one
 * would have it (a getter past the head, or the caller draining it). */
static bool pull_rest(apigen_rd *r)
{
    rt_pull *pl = r->pull;
    size_t off = (size_t)(r->p - r->base), total = pl->data_off + (size_t)pl->n + pl->tail;
    pl->pending = false;
    size_t upto = pl->lanes ? pl->data_off + (size_t)pl->n : pl->data_off;
    if ((pl->lanes && !recv_grow_from(pl->conn, pl->lanes, pl->buf, pl->cap, pl->data_off, upto,
                                      total, pl->timeout_ms, pl->err, sizeof pl->err)) ||
        !recv_grow(pl->conn, pl->buf, pl->cap, upto, total, total, pl->timeout_ms, pl->err,
                   sizeof pl->err)) {
        pl->failed = true;
        r->left = 0;
        return false;
    }
    r->base = *pl->buf;
    r->p = r->base + off;
    r->left = total - off;
    return true;
}

/* At the bulk's data: n bytes into dst, then the tail into the reply buffer
 * at an offset with the same alignment it has in the payload. */
static bool pull_into(apigen_rd *r, void *dst)
{
    rt_pull *pl = r->pull;
    size_t at = pl->tail ? pl->data_off + ((size_t)pl->n & (APIGEN_BUF_ALIGN - 1)) : pl->data_off;
    pl->pending = false;
    if ((pl->n && (pl->lanes ? !rt_lanes_recv(pl->lanes, dst, pl->n, pl->timeout_ms, pl->err,
                                              sizeof pl->err)
                             : apigen_tp_recv(pl->conn, dst, (size_t)pl->n, pl->timeout_ms, pl->err,
                                              sizeof pl->err) != APIGEN_TP_OK)) ||
        !recv_grow(pl->conn, pl->buf, pl->cap, at, at + pl->tail, at + pl->tail, pl->timeout_ms,
                   pl->err, sizeof pl->err)) {
        pl->failed = true;
        return rd_fail(r, E_TRUNC);
    }
    r->base = *pl->buf;
    r->p = r->base + at;
    r->left = pl->tail;
    return true;
}

bool rt_pull_drain(apigen_rd *r)
{
    if (!r->pull || !r->pull->pending)
        return !(r->pull && r->pull->failed);
    return pull_rest(r);
}

#define FRAME_LEN_OFF 24 /* payload_len's offset in the frame header */
/* Payloads up to this come with their header when they are all there:
 * larger ones keep their head-first reading (a streamed bulk goes straight
 * to its destination, not through the receive buffer). */
#define HEAD_READ_MAX (16u << 10)

bool rt_recv_hdr(apigen_conn *c, apigen_frame_hdr *h, uint32_t max_payload, int timeout_ms,
                 bool *eof, uint8_t *body, size_t body_cap, size_t *have, char *err,
                 size_t errlen)
{
    uint8_t hb[APIGEN_FRAME_HDR_SIZE];
    const char *e = NULL;
    *eof = false;
    *have = 0;
    if (!body)
        body_cap = 0;
    else if (body_cap > HEAD_READ_MAX)
        body_cap = HEAD_READ_MAX;
    apigen_tp_result r = apigen_tp_recv_head(c, hb, sizeof hb, FRAME_LEN_OFF, body, body_cap,
                                             have, timeout_ms, err, errlen);
    if (r != APIGEN_TP_OK) {
        *eof = r == APIGEN_TP_EOF;
        return false;
    }
    if (!apigen_hdr_decode(hb, h, max_payload, &e))
        return set_err(e, err, errlen);
    return true;
}

bool rt_recv_payload(apigen_conn *c, const apigen_frame_hdr *h, uint8_t **buf, size_t *cap,
                     size_t have, int timeout_ms, bool head_only, char *err, size_t errlen,
                     rt_pull *pl, apigen_rd *rd)
{
    size_t want = h->payload_len;
    pl->pending = false; /* the rest of pl is read only while pending: set below */
    pl->failed = false;
    pl->lanes = NULL;
    rt_lanes *L = NULL;
    if (h->flags & APIGEN_F_LANES) {
        if (!(h->flags & APIGEN_F_BULK) || have)
            return set_err("a frame on lanes without a bulk", err, errlen);
        if (!(L = rt_lanes_for_recv(c, err, errlen)))
            return false;
    }
    if (have) { /* all of it came with the header (rt_recv_hdr) */
        apigen_rd_init(rd, *buf, want);
        return true;
    }
    if (!*buf || *cap < 4096) {
        uint8_t *p = realloc(*buf, 4096);
        if (!p)
            return set_err("out of memory for the frame payload", err, errlen);
        *buf = p;
        *cap = 4096;
    }
    if (!L && (!head_only || !(h->flags & APIGEN_F_BULK))) {
        if (!recv_grow(c, buf, cap, 0, want, want, timeout_ms, err, errlen))
            return false;
        apigen_rd_init(rd, *buf, want);
        return true;
    }
    /* the head, up to the bulk's data (its length and padding included) */
    size_t len_off = h->reserved, data_off = len_off + 8;
    data_off += (APIGEN_BUF_ALIGN - data_off % APIGEN_BUF_ALIGN) % APIGEN_BUF_ALIGN;
    if (data_off > want)
        return set_err("bulk data past the payload", err, errlen);
    size_t limit = data_off + APIGEN_BUF_ALIGN > want ? want : data_off + APIGEN_BUF_ALIGN;
    if (!recv_grow(c, buf, cap, 0, data_off, limit, timeout_ms, err, errlen))
        return false;
    uint64_t n = 0;
    for (int i = 0; i < 8; i++)
        n |= (uint64_t)(*buf)[len_off + i] << (8 * i);
    if (n > want - data_off)
        return set_err("bulk length past the payload", err, errlen);
    if (L) {
        if (!rt_lanes_recv_begin(L, n, err, errlen))
            return false;
        if (!head_only) { /* all of it in the buffer: head, bulk from the lanes, tail */
            if (!recv_grow_from(c, L, buf, cap, data_off, data_off + (size_t)n, want, timeout_ms,
                                err, errlen) ||
                !recv_grow(c, buf, cap, data_off + (size_t)n, want, want, timeout_ms, err, errlen))
                return false;
            apigen_rd_init(rd, *buf, want);
            return true;
        }
    }
    rt_lanes_note_recv(c, n);
    pl->lanes = L;
    pl->conn = c;
    pl->timeout_ms = timeout_ms;
    pl->buf = buf;
    pl->cap = cap;
    pl->len_off = len_off;
    pl->data_off = data_off;
    pl->n = n;
    pl->tail = want - data_off - (size_t)n;
    pl->pending = true;
    apigen_rd_init(rd, *buf, data_off);
    rd->pull = pl;
    return true;
}

bool rt_recv_reply(apigen_conn *c, apigen_frame_hdr *h, uint8_t **buf, size_t *cap,
                   uint32_t max_payload, int timeout_ms, bool *eof, char *err, size_t errlen,
                   rt_pull *pl, apigen_rd *rd)
{
    size_t have;
    memset(pl, 0, sizeof *pl);
    return rt_recv_hdr(c, h, max_payload, timeout_ms, eof, *buf, *cap, &have, err, errlen) &&
           rt_recv_payload(c, h, buf, cap, have, timeout_ms, true, err, errlen, pl, rd);
}

/* A TLS record where a frame should start (a handshake or an alert, TLS
 * 1.0 to 1.3): one end of a handshake uses tls:// and the other does not. */
static bool tls_record(const uint8_t *hb)
{
    return (hb[0] == 0x15 || hb[0] == 0x16) && hb[1] == 0x03 && hb[2] <= 0x04;
}

bool rt_recv_frame(apigen_conn *c, apigen_frame_hdr *h, uint8_t **buf, size_t *cap,
                   uint32_t max_payload, int timeout_ms, bool *eof, char *err, size_t errlen)
{
    uint8_t hb[APIGEN_FRAME_HDR_SIZE] = {0};
    const char *e = NULL;
    *eof = false;
    apigen_tp_result r = apigen_tp_recv(c, hb, sizeof hb, timeout_ms, err, errlen);
    bool decoded = r == APIGEN_TP_OK && apigen_hdr_decode(hb, h, max_payload, &e);
    if (!decoded && tls_record(hb)) {
        if (err && errlen)
            snprintf(err, errlen, "%s speaks TLS and this end does not: use tls:// on both ends "
                     "(or tcp:// on both)", apigen_tp_peer(c));
        return false;
    }
    if (r != APIGEN_TP_OK) {
        *eof = r == APIGEN_TP_EOF;
        return false;
    }
    if (!decoded)
        return set_err(e, err, errlen);
    /* The buffer grows with the bytes that actually arrive (SECURITY.md S2):
     * a header announcing 1 GiB followed by silence costs 1 MiB, not 1 GiB. */
    size_t want = h->payload_len;
    if (!*buf || *cap < 4096) {
        uint8_t *p = realloc(*buf, 4096);
        if (!p)
            return set_err("out of memory for the frame payload", err, errlen);
        *buf = p;
        *cap = 4096;
    }
    return recv_grow(c, buf, cap, 0, want, want, timeout_ms, err, errlen);
}
