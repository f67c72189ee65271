/* apigen-server --record FILE: writes every request a session's connections
 * send and every frame the server sends back (replies, stream chunks,
 * callbacks), in the order they happen, so that `--replay FILE` can answer
 * the same guest later without the real library (replay.c). The format is
 * in docs/internals.md ("Record and replay"); it is written as the server
 * goes (flushed at each connection's end and at exit). */
#define _GNU_SOURCE
#include "rt_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REC_REQ_KEEP_DEFAULT 4096u /* request bytes stored; the rest is checked by hash */

bool rt_rec_active;

typedef struct rec_conn {
    apigen_conn *conn;
    uint32_t idx, session;
} rec_conn;
typedef struct rec_sess {
    struct apigen_session *s;
    uint32_t idx;
    uint64_t nreq; /* requests its connections sent so far (a callback's position) */
} rec_sess;

static pthread_mutex_t rec_mu = PTHREAD_MUTEX_INITIALIZER;
static FILE *rec_f;
static char rec_path[1024];
static bool rec_failed;
static uint32_t rec_keep = REC_REQ_KEEP_DEFAULT;
static rec_conn *conns;
static size_t nconns, capconns;
static uint32_t next_conn;
static rec_sess *sess;
static size_t nsess, capsess;

uint64_t rt_rec_hash(const void *p, size_t n)
{
    const uint8_t *b = p;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* ---- one record in a growable buffer, then written whole ------------------ */
typedef struct rbuf {
    uint8_t *p;
    size_t n, cap;
    bool bad;
} rbuf;

static void rb_add(rbuf *b, const void *p, size_t n)
{
    if (b->bad || !n)
        return;
    if (b->cap - b->n < n) {
        size_t c = b->cap ? b->cap : 256;
        while (c - b->n < n)
            c *= 2;
        uint8_t *q = realloc(b->p, c);
        if (!q) {
            b->bad = true;
            return;
        }
        b->p = q;
        b->cap = c;
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
}
static void rb_u8(rbuf *b, uint8_t v) { rb_add(b, &v, 1); }
static void rb_le(rbuf *b, uint64_t v, int bytes)
{
    uint8_t t[8];
    for (int i = 0; i < bytes; i++)
        t[i] = (uint8_t)(v >> (8 * i));
    rb_add(b, t, (size_t)bytes);
}
static void rb_u16(rbuf *b, uint16_t v) { rb_le(b, v, 2); }
static void rb_u32(rbuf *b, uint32_t v) { rb_le(b, v, 4); }
static void rb_u64(rbuf *b, uint64_t v) { rb_le(b, v, 8); }

/* Writes tag + u64 length + body; caller holds rec_mu. A failed write is
 * logged once and ends the recording (a partial one would replay wrongly:
 * the file is then cut short and replay.c refuses it). */
static void put_record(uint8_t tag, rbuf *b)
{
    if (!rec_f || rec_failed)
        return;
    uint8_t hd[9];
    hd[0] = tag;
    for (int i = 0; i < 8; i++)
        hd[1 + i] = (uint8_t)((uint64_t)b->n >> (8 * i));
    if (b->bad || fwrite(hd, 1, sizeof hd, rec_f) != sizeof hd ||
        (b->n && fwrite(b->p, 1, b->n, rec_f) != b->n)) {
        apigen_log("--record %s: %s; the recording stops here and is incomplete", rec_path,
                   b->bad ? "out of memory" : strerror(errno));
        rec_failed = true;
    }
}

static rec_conn *find_conn(apigen_conn *c)
{
    for (size_t i = 0; i < nconns; i++)
        if (conns[i].conn == c)
            return &conns[i];
    return NULL;
}

static rec_sess *find_sess(struct apigen_session *s)
{
    for (size_t i = nsess; i-- > 0;) /* newest first: an address may be reused */
        if (sess[i].s == s)
            return &sess[i];
    return NULL;
}

bool rt_rec_open(const char *path, const apigen_api *const *apis, unsigned napis)
{
    snprintf(rec_path, sizeof rec_path, "%s", path);
    const char *k = getenv("APIGEN_RECORD_KEEP");
    if (k && *k) {
        char *end;
        unsigned long v = strtoul(k, &end, 10);
        if (*end || v > (1ul << 30)) {
            apigen_log("APIGEN_RECORD_KEEP=%s is not a byte count", k);
            return false;
        }
        rec_keep = (uint32_t)v;
    }
    rec_f = fopen(path, "wbe");
    if (!rec_f) {
        apigen_log("--record %s: %s", path, strerror(errno));
        return false;
    }
    uint8_t v[4];
    for (int i = 0; i < 4; i++)
        v[i] = (uint8_t)(RT_REC_VERSION >> (8 * i));
    bool ok = fwrite(RT_REC_MAGIC, 1, RT_REC_MAGIC_LEN, rec_f) == RT_REC_MAGIC_LEN &&
              fwrite(v, 1, 4, rec_f) == 4;
    for (unsigned i = 0; ok && i < napis; i++) {
        rbuf b = {0};
        size_t l = strlen(apis[i]->name);
        rb_u32(&b, (uint32_t)l);
        rb_add(&b, apis[i]->name, l);
        rb_u64(&b, apis[i]->fingerprint);
        rb_u64(&b, apis[i]->api_version);
        put_record(RT_REC_API, &b);
        free(b.p);
        ok = !rec_failed;
    }
    if (!ok) {
        apigen_log("--record %s: cannot write: %s", path, strerror(errno));
        fclose(rec_f);
        rec_f = NULL;
        return false;
    }
    rt_rec_active = true;
    return true;
}

void rt_rec_close(void)
{
    pthread_mutex_lock(&rec_mu);
    if (rec_f) {
        if (fclose(rec_f) != 0 && !rec_failed)
            apigen_log("--record %s: %s; the recording is incomplete", rec_path, strerror(errno));
        rec_f = NULL;
    }
    free(conns);
    free(sess);
    conns = NULL;
    sess = NULL;
    nconns = capconns = nsess = capsess = 0;
    pthread_mutex_unlock(&rec_mu);
}

void rt_rec_hello(apigen_conn *c, struct apigen_session *s, bool join, const uint8_t *payload,
                  uint32_t len, const uint8_t key[RT_KEY_LEN])
{
    pthread_mutex_lock(&rec_mu);
    rec_sess *rs = join ? find_sess(s) : NULL;
    if (!rs) {
        if (nsess == capsess) {
            size_t nc = capsess ? capsess * 2 : 8;
            rec_sess *q = realloc(sess, nc * sizeof *q);
            if (!q)
                goto oom;
            sess = q;
            capsess = nc;
        }
        rs = &sess[nsess];
        *rs = (rec_sess){s, (uint32_t)nsess, 0};
        nsess++;
    }
    if (nconns == capconns) {
        size_t nc = capconns ? capconns * 2 : 16;
        rec_conn *q = realloc(conns, nc * sizeof *q);
        if (!q)
            goto oom;
        conns = q;
        capconns = nc;
    }
    conns[nconns] = (rec_conn){c, next_conn++, rs->idx};
    rbuf b = {0};
    rb_u32(&b, conns[nconns].idx);
    rb_u32(&b, rs->idx);
    rb_u8(&b, join);
    rb_u32(&b, len);
    rb_add(&b, payload, len);
    rb_add(&b, key, RT_KEY_LEN);
    nconns++;
    put_record(RT_REC_HELLO, &b);
    free(b.p);
    pthread_mutex_unlock(&rec_mu);
    return;
oom:
    apigen_log("--record %s: out of memory; the recording stops here", rec_path);
    rec_failed = true;
    pthread_mutex_unlock(&rec_mu);
}

void rt_rec_request(apigen_conn *c, const apigen_frame_hdr *h, const uint8_t *payload)
{
    pthread_mutex_lock(&rec_mu);
    rec_conn *rc = find_conn(c);
    if (rc) {
        for (size_t i = 0; i < nsess; i++)
            if (sess[i].idx == rc->session)
                sess[i].nreq++;
        uint32_t keep = h->payload_len < rec_keep ? h->payload_len : rec_keep;
        rbuf b = {0};
        rb_u32(&b, rc->idx);
        rb_u16(&b, (uint16_t)(h->flags & ~APIGEN_F_BULK));
        rb_u32(&b, h->call_id);
        rb_u32(&b, h->payload_len);
        rb_u64(&b, rt_rec_hash(payload, h->payload_len));
        rb_add(&b, payload, keep);
        put_record(RT_REC_REQUEST, &b);
        free(b.p);
    }
    pthread_mutex_unlock(&rec_mu);
}

/* The payload of the frame at frame_off in w: its bytes with the zero-copy
 * pieces where they go (rt_wr_send's order). */
static void add_wr_payload(rbuf *b, const apigen_wr *w, size_t frame_off)
{
    size_t at = frame_off + APIGEN_FRAME_HDR_SIZE;
    for (unsigned i = 0; i < w->next; i++) {
        if (w->ext[i].at < at)
            continue; /* a piece of an earlier frame */
        rb_add(b, w->buf + at, w->ext[i].at - at);
        rb_add(b, w->ext[i].p, (size_t)w->ext[i].n);
        at = w->ext[i].at;
    }
    if (w->len > at)
        rb_add(b, w->buf + at, w->len - at);
}

static uint16_t hdr_flags(const uint8_t *hb) { return (uint16_t)(hb[6] | hb[7] << 8); }
static uint32_t hdr_call(const uint8_t *hb)
{
    return (uint32_t)hb[8] | (uint32_t)hb[9] << 8 | (uint32_t)hb[10] << 16 | (uint32_t)hb[11] << 24;
}

void rt_rec_sent_wr(apigen_conn *c, const apigen_wr *w, size_t frame_off)
{
    pthread_mutex_lock(&rec_mu);
    rec_conn *rc = find_conn(c);
    if (rc) {
        const uint8_t *hb = w->buf + frame_off;
        rbuf b = {0};
        rb_u32(&b, rc->idx);
        rb_u16(&b, (uint16_t)(hdr_flags(hb) & ~APIGEN_F_BULK));
        rb_u32(&b, hdr_call(hb));
        add_wr_payload(&b, w, frame_off);
        put_record(RT_REC_SENT, &b);
        free(b.p);
    }
    pthread_mutex_unlock(&rec_mu);
}

void rt_rec_sent(apigen_conn *c, const apigen_frame_hdr *h, const void *p, size_t n)
{
    pthread_mutex_lock(&rec_mu);
    rec_conn *rc = find_conn(c);
    if (rc) {
        rbuf b = {0};
        rb_u32(&b, rc->idx);
        rb_u16(&b, (uint16_t)(h->flags & ~APIGEN_F_BULK));
        rb_u32(&b, h->call_id);
        rb_add(&b, p, n);
        put_record(RT_REC_SENT, &b);
        free(b.p);
    }
    pthread_mutex_unlock(&rec_mu);
}

void rt_rec_callback(struct apigen_session *s, const apigen_wr *w)
{
    pthread_mutex_lock(&rec_mu);
    rec_sess *rs = find_sess(s);
    if (rs) {
        rbuf b = {0};
        rb_u32(&b, rs->idx);
        rb_u64(&b, rs->nreq);
        rb_u32(&b, hdr_call(w->buf));
        add_wr_payload(&b, w, 0);
        put_record(RT_REC_CALLBACK, &b);
        free(b.p);
    }
    pthread_mutex_unlock(&rec_mu);
}

void rt_rec_guest_id(struct apigen_session *s, uint64_t id)
{
    pthread_mutex_lock(&rec_mu);
    rec_sess *rs = find_sess(s);
    if (rs) {
        rbuf b = {0};
        rb_u32(&b, rs->idx);
        rb_u64(&b, id);
        put_record(RT_REC_GUEST_ID, &b);
        free(b.p);
    }
    pthread_mutex_unlock(&rec_mu);
}

void rt_rec_end(apigen_conn *c)
{
    pthread_mutex_lock(&rec_mu);
    rec_conn *rc = find_conn(c);
    if (rc) {
        rbuf b = {0};
        rb_u32(&b, rc->idx);
        put_record(RT_REC_END, &b);
        free(b.p);
        *rc = conns[--nconns]; /* the address may be reused by a later connection */
        if (rec_f)
            fflush(rec_f);
    }
    pthread_mutex_unlock(&rec_mu);
}
