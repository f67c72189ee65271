/* apigen-server --replay FILE: answers guests from a recording (record.c)
 * without calling the real library, and fails loudly at the first request
 * that is not the recorded one.
 *
 * What is matched, and what is not (it varies between runs of one program):
 * - sessions in the order their control connections arrive; each gets the
 *   recorded session key, so handle ids and guest ids come out the same;
 * - a session's thread connections are bound to the recorded ones that are
 *   the same so far, narrowed as requests and replies tell them apart
 *   (narrow()), and matched request by request in order: the
 *   frame flags (sync/async), the call, the length and the bytes (the first
 *   APIGEN_RECORD_KEEP bytes one by one, the rest by hash). How the guest
 *   batched async calls into sends, and its wait frames (counts that depend
 *   on timing), are not compared;
 * - after each matched request the frames recorded after it on that
 *   connection (its reply, stream chunks) are sent, with the request's ids;
 *   a callback is sent on the session's control connection once every
 *   connection of the session got as far (requests matched, frames sent
 *   back) as its recorded connection had when the callback was recorded
 *   (callback_due()), so it never overtakes the request that caused it nor
 *   the request that told the replay its renamed callback id, whichever
 *   thread ran first;
 * - arenas are declined, as the recording server declined them.
 * The process exits 0 once every recorded session ended with every request
 * matched and every callback sent; 1 at the first difference, a request past
 * the end of its connection's recording, or a recorded request the guest
 * never sent (checked when the connection ends). */
#define _GNU_SOURCE
#include "rt_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define HELLO_MAX 65536u
#define IO_TIMEOUT_MS 10000
#define MAX_PAYLOAD ((1u << 30) + (1u << 20))
#define MAX_CAND 64

typedef struct msg {
    uint8_t kind; /* RT_REC_REQUEST or RT_REC_SENT */
    uint16_t flags;
    uint32_t call, len;
    uint64_t hash;
    const uint8_t *p;
    size_t stored;
} msg;

typedef struct rconn {
    uint32_t session;
    bool join, claimed, ended;
    const uint8_t *hello;
    uint32_t hello_len;
    uint8_t key[RT_KEY_LEN];
    msg *m;
    size_t nm, capm, pos, nreq, reqs_done;
    size_t prog; /* messages handled by the one live connection bound to it */
} rconn;

/* A recorded callback and where each connection of its session was then:
 * need[i] messages of connection need_conn[i] recorded before it. */
typedef struct rcb {
    uint32_t type;
    const uint8_t *p;
    size_t len;
    bool sent;
    uint32_t *need_conn;
    size_t *need, nneed;
} rcb;

typedef struct rsess {
    uint32_t ctrl; /* its control connection's index */
    uint8_t key[RT_KEY_LEN];
    bool claimed, done;
    unsigned open;
    uint64_t nreq;
    apigen_conn *live_ctrl;
    rcb *cb;
    size_t ncb, capcb, cbpos;
    /* ids the guest assigned (callbacks, guest ids): with several thread
     * connections their order depends on timing, so a request may carry
     * another one than recorded; rec[i] -> live[i], one to one */
    uint64_t *gids;
    size_t ngids, capgids;
    uint64_t *map_rec, *map_live;
    size_t nmap, capmap;
    bool renamed; /* some id maps to another value */
    unsigned nthreads; /* recorded thread connections with requests */
} rsess;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static const char *path_;
static uint8_t *file_;
static rconn *conns_;
static size_t nconns_;
static rsess *sess_;
static size_t nsess_, nsess_done_;
static uint64_t nmatched_;
static int sig_pipe_[2] = {-1, -1};
static const apigen_api *const *apis_;
static unsigned napis_;

/* The first difference ends the replay: the message, then exit 1 (the
 * guest sees its connection lost, its output differs too). */
static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
    char b[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    apigen_log("REPLAY FAILED (%s): %s", path_, b);
    fflush(stderr);
    _exit(1);
}

/* ---- reading the recording --------------------------------------------------- */
typedef struct cur {
    const uint8_t *p;
    size_t left;
    bool bad;
} cur;

static uint64_t get_le(cur *c, int n)
{
    uint64_t v = 0;
    if (c->bad || c->left < (size_t)n) {
        c->bad = true;
        return 0;
    }
    for (int i = 0; i < n; i++)
        v |= (uint64_t)c->p[i] << (8 * i);
    c->p += n;
    c->left -= (size_t)n;
    return v;
}
static const uint8_t *get_bytes(cur *c, size_t n)
{
    if (c->bad || c->left < n) {
        c->bad = true;
        return NULL;
    }
    const uint8_t *p = c->p;
    c->p += n;
    c->left -= n;
    return p;
}

static bool grow(void **p, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return true;
    size_t c = *cap ? *cap * 2 : 16;
    void *q = realloc(*p, c * elem);
    if (!q)
        return false;
    *p = q;
    *cap = c;
    return true;
}

static const char *api_call(const apigen_api *api, uint32_t id)
{
    if (api && id < api->ncalls && api->call_names && api->call_names[id])
        return api->call_names[id];
    return "?";
}

static bool load(const char *path, const apigen_api *const *apis, unsigned napis, char *why,
                 size_t whylen)
{
    FILE *f = fopen(path, "rbe");
    if (!f)
        return snprintf(why, whylen, "%s", strerror(errno)), false;
    size_t cap = 1 << 16, n = 0;
    file_ = malloc(cap);
    for (;;) {
        if (!file_)
            return fclose(f), snprintf(why, whylen, "out of memory"), false;
        n += fread(file_ + n, 1, cap - n, f);
        if (n < cap)
            break;
        cap *= 2;
        uint8_t *q = realloc(file_, cap);
        if (!q)
            free(file_);
        file_ = q;
    }
    bool rerr = ferror(f);
    fclose(f);
    if (rerr)
        return snprintf(why, whylen, "read error"), false;
    cur c = {file_, n, false};
    const uint8_t *mg = get_bytes(&c, RT_REC_MAGIC_LEN);
    uint32_t ver = (uint32_t)get_le(&c, 4);
    if (c.bad || memcmp(mg, RT_REC_MAGIC, RT_REC_MAGIC_LEN) != 0)
        return snprintf(why, whylen, "not an apigen recording (no APIGEN-RECORD header)"), false;
    if (ver != RT_REC_VERSION)
        return snprintf(why, whylen, "recording format %u, this server reads %u (record again)", ver,
                        RT_REC_VERSION),
               false;
    unsigned napi_rec = 0;
    while (c.left) {
        uint8_t tag = (uint8_t)get_le(&c, 1);
        uint64_t len = get_le(&c, 8);
        const uint8_t *body = get_bytes(&c, (size_t)len);
        if (c.bad)
            return snprintf(why, whylen, "cut short at byte %zu (the recording server did not "
                            "finish writing it)", n - c.left), false;
        cur b = {body, (size_t)len, false};
        size_t at = (size_t)(body - file_) - 9;
        if (tag == RT_REC_API) {
            uint32_t l = (uint32_t)get_le(&b, 4);
            const uint8_t *name = get_bytes(&b, l);
            uint64_t fp = get_le(&b, 8), ver2 = get_le(&b, 8);
            if (b.bad)
                goto bad;
            const apigen_api *api = NULL;
            for (unsigned i = 0; i < napis; i++)
                if (strlen(apis[i]->name) == l && memcmp(apis[i]->name, name, l) == 0)
                    api = apis[i];
            if (!api)
                return snprintf(why, whylen, "recorded with a server of API '%.*s', which this "
                                "server does not serve", (int)l, (const char *)name), false;
            if (fp != api->fingerprint || ver2 != api->api_version)
                return snprintf(why, whylen,
                                "recorded with API '%s' fingerprint 0x%016llx version %llu; this "
                                "server is 0x%016llx version %llu (the spec or header changed "
                                "since: record again, e.g. tests/gpu/record.sh)",
                                api->name, (unsigned long long)fp, (unsigned long long)ver2,
                                (unsigned long long)api->fingerprint,
                                (unsigned long long)api->api_version),
                       false;
            napi_rec++;
        } else if (tag == RT_REC_HELLO) {
            uint32_t ci = (uint32_t)get_le(&b, 4), si = (uint32_t)get_le(&b, 4);
            uint8_t join = (uint8_t)get_le(&b, 1);
            uint32_t hl = (uint32_t)get_le(&b, 4);
            const uint8_t *hp = get_bytes(&b, hl), *key = get_bytes(&b, RT_KEY_LEN);
            if (b.bad || ci != nconns_ || join > 1 || si > nsess_ || (join && si == nsess_) ||
                (!join && si != nsess_))
                goto bad;
            conns_ = realloc(conns_, (nconns_ + 1) * sizeof *conns_);
            if (!conns_)
                goto oom;
            rconn *rc = &conns_[nconns_++];
            memset(rc, 0, sizeof *rc);
            rc->session = si;
            rc->join = join;
            rc->hello = hp;
            rc->hello_len = hl;
            memcpy(rc->key, key, RT_KEY_LEN);
            if (!join) {
                rsess *q = realloc(sess_, (nsess_ + 1) * sizeof *sess_);
                if (!q)
                    goto oom;
                sess_ = q;
                memset(&sess_[nsess_], 0, sizeof *sess_);
                sess_[nsess_].ctrl = ci;
                memcpy(sess_[nsess_].key, key, RT_KEY_LEN);
                nsess_++;
            }
        } else if (tag == RT_REC_REQUEST || tag == RT_REC_SENT) {
            uint32_t ci = (uint32_t)get_le(&b, 4);
            msg m = {tag, 0, 0, 0, 0, NULL, 0};
            m.flags = (uint16_t)get_le(&b, 2);
            m.call = (uint32_t)get_le(&b, 4);
            if (tag == RT_REC_REQUEST) {
                m.len = (uint32_t)get_le(&b, 4);
                m.hash = get_le(&b, 8);
            }
            m.stored = b.left;
            m.p = get_bytes(&b, b.left);
            if (tag == RT_REC_SENT)
                m.len = (uint32_t)m.stored;
            if (b.bad || ci >= nconns_ || m.stored > m.len || m.stored != (size_t)len - (size_t)(m.p - body))
                goto bad;
            rconn *rc = &conns_[ci];
            if (!grow((void **)&rc->m, &rc->capm, rc->nm, sizeof *rc->m))
                goto oom;
            rc->m[rc->nm++] = m;
            if (tag == RT_REC_REQUEST)
                rc->nreq++;
        } else if (tag == RT_REC_CALLBACK) {
            uint32_t si = (uint32_t)get_le(&b, 4);
            rcb cb = {0};
            (void)get_le(&b, 8); /* the session's request count: callback_due() is finer */
            cb.type = (uint32_t)get_le(&b, 4);
            cb.len = b.left;
            cb.p = get_bytes(&b, b.left);
            if (b.bad || si >= nsess_)
                goto bad;
            rsess *s = &sess_[si];
            if (!grow((void **)&s->cb, &s->capcb, s->ncb, sizeof *s->cb))
                goto oom;
            for (size_t i = 0; i < nconns_; i++)
                cb.nneed += conns_[i].session == si && conns_[i].nm;
            cb.need_conn = malloc((cb.nneed ? cb.nneed : 1) * sizeof *cb.need_conn);
            cb.need = malloc((cb.nneed ? cb.nneed : 1) * sizeof *cb.need);
            if (!cb.need_conn || !cb.need)
                goto oom;
            cb.nneed = 0;
            for (size_t i = 0; i < nconns_; i++)
                if (conns_[i].session == si && conns_[i].nm) {
                    cb.need_conn[cb.nneed] = (uint32_t)i;
                    cb.need[cb.nneed++] = conns_[i].nm;
                }
            s->cb[s->ncb++] = cb;
        } else if (tag == RT_REC_GUEST_ID) {
            uint32_t si = (uint32_t)get_le(&b, 4);
            uint64_t id = get_le(&b, 8);
            if (b.bad || si >= nsess_)
                goto bad;
            rsess *s = &sess_[si];
            if (!grow((void **)&s->gids, &s->capgids, s->ngids, sizeof *s->gids))
                goto oom;
            s->gids[s->ngids++] = id;
        } else if (tag == RT_REC_END) {
            uint32_t ci = (uint32_t)get_le(&b, 4);
            if (b.bad || ci >= nconns_)
                goto bad;
        } else {
            snprintf(why, whylen, "unknown record '%c' at byte %zu", tag, at);
            return false;
        }
        continue;
    bad:
        snprintf(why, whylen, "malformed record '%c' at byte %zu", tag, at);
        return false;
    }
    for (size_t i = 0; i < nconns_; i++)
        if (conns_[i].join && conns_[i].nreq)
            sess_[conns_[i].session].nthreads++;
    if (!napi_rec || !nsess_)
        return snprintf(why, whylen, "%s", napi_rec ? "no session recorded" : "no API recorded"), false;
    return true;
oom:
    snprintf(why, whylen, "out of memory");
    return false;
}

/* ---- serving ----------------------------------------------------------------- */
typedef struct live {
    apigen_conn *conn;
    const apigen_api *api;
    uint32_t session;
    int rc; /* recorded connection (-1: a thread connection not bound yet) */
    bool ctrl;
    /* a thread connection stays bound to every recorded one that is the same
     * so far (requests and what was sent back), until one request or reply
     * tells them apart: threads that begin alike but diverge later (thread
     * index in an argument) find their own. rc == cand[0]. */
    int cand[MAX_CAND];
    unsigned ncand;
    size_t pos, reqs_done; /* in its candidates' messages (the same so far) */
} live;

static live **lives_; /* every live connection that has a session (under mu) */
static size_t nlives_, caplives_;

static void describe(char *b, size_t n, const live *l)
{
    snprintf(b, n, "session %u, %s connection %d (from %s)", l->session + 1,
             l->ctrl ? "control" : "thread", l->rc >= 0 ? l->rc + 1 : 0, apigen_tp_peer(l->conn));
}

static void hexwin(char *b, size_t n, const uint8_t *p, size_t len, size_t at)
{
    size_t s = at > 8 ? at - 8 : 0, e = at + 8 < len ? at + 8 : len;
    int k = snprintf(b, n, "[%zu..%zu):", s, e);
    for (size_t i = s; i < e && k > 0 && (size_t)k < n; i++)
        k += snprintf(b + k, n - (size_t)k, i == at ? " >%02x" : " %02x", p[i]);
}

static void first_diff(const char *what, const live *l, const uint8_t *want, size_t wn,
                       const uint8_t *got, size_t gn, size_t from)
{
    char d[300], ww[200], gw[200];
    describe(d, sizeof d, l);
    size_t i = from; /* bytes before it matched (ids renamed: match_payload) */
    while (i < wn && i < gn && want[i] == got[i])
        i++;
    hexwin(ww, sizeof ww, want, wn, i);
    hexwin(gw, sizeof gw, got, gn, i);
    fail("%s, %s: %s differs at byte %zu of %zu (recorded %zu bytes): recorded %s, got %s", d, what,
         i < wn && i < gn ? "payload" : "length", i, gn, wn, ww, gw);
}

static bool send_frame(apigen_conn *c, uint16_t flags, uint32_t call, uint32_t req, uint64_t tid,
                       const uint8_t *p, size_t n)
{
    char err[256];
    apigen_frame_hdr h = {APIGEN_MAGIC, APIGEN_PROTO_VERSION, flags, call, req, tid, (uint32_t)n, 0};
    uint8_t hb[APIGEN_FRAME_HDR_SIZE];
    apigen_hdr_encode(&h, hb);
    struct iovec iov[2] = {{hb, sizeof hb}, {(void *)p, n}};
    if (!apigen_tp_send(c, iov, n ? 2 : 1, IO_TIMEOUT_MS, err, sizeof err)) {
        apigen_log("replay: sending to %s: %s", apigen_tp_peer(c), err);
        return false;
    }
    return true;
}

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}
static void put_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static bool is_gid(const rsess *s, uint64_t v)
{
    for (size_t i = 0; i < s->ngids; i++)
        if (s->gids[i] == v)
            return true;
    return false;
}

/* Whether rec -> live keeps the renaming one to one (committed pairs and the
 * n pending ones in tr/tl). */
static bool map_ok(const rsess *s, uint64_t r, uint64_t l, const uint64_t *tr, const uint64_t *tl,
                   size_t n)
{
    for (size_t i = 0; i < s->nmap; i++)
        if (s->map_rec[i] == r || s->map_live[i] == l)
            return s->map_rec[i] == r && s->map_live[i] == l;
    for (size_t i = 0; i < n; i++)
        if (tr[i] == r || tl[i] == l)
            return tr[i] == r && tl[i] == l;
    return true;
}

#define MAX_RENAMES 64 /* in one request */

/* Whether the live payload p (n bytes) is the recorded request m, where a
 * session with several thread connections may carry other guest-assigned
 * ids than recorded (one to one, learned as they come). *at: the first
 * byte that differs (n: the hash over the unstored rest). */
static bool match_payload(rsess *s, const msg *m, const uint8_t *p, size_t n, size_t *at, bool commit)
{
    uint64_t tr[MAX_RENAMES], tl[MAX_RENAMES];
    size_t nt = 0, i = 0;
    uint8_t *restored = NULL; /* p with the recorded ids put back (for the hash) */
    if (m->len != n) {
        while (i < m->stored && i < n && m->p[i] == p[i])
            i++;
        *at = i;
        return false;
    }
    while (i < m->stored) {
        if (m->p[i] == p[i]) {
            i++;
            continue;
        }
        bool found = false;
        for (size_t o = i >= 7 ? i - 7 : 0; s->nthreads > 1 && o <= i && o + 8 <= m->stored; o++) {
            uint64_t r = le64(m->p + o), l = le64(p + o);
            if (memcmp(m->p + o, p + o, i - o) != 0 || !is_gid(s, r) || nt == MAX_RENAMES ||
                !map_ok(s, r, l, tr, tl, nt))
                continue;
            if (!restored && !(restored = malloc(n ? n : 1)))
                break;
            if (restored && nt == 0)
                memcpy(restored, p, n);
            put_le64(restored + o, r);
            tr[nt] = r;
            tl[nt++] = l;
            i = o + 8;
            found = true;
            break;
        }
        if (!found) {
            free(restored);
            *at = i;
            return false;
        }
    }
    bool ok = m->hash == rt_rec_hash(restored ? restored : p, n);
    free(restored);
    *at = n;
    if (!ok || !commit)
        return ok;
    for (size_t k = 0; k < nt; k++) {
        bool known = false;
        for (size_t j = 0; j < s->nmap; j++)
            known |= s->map_rec[j] == tr[k];
        if (known)
            continue;
        if (grow((void **)&s->map_rec, &s->capmap, s->nmap, sizeof *s->map_rec)) {
            uint64_t *q = realloc(s->map_live, s->capmap * sizeof *q);
            if (!q)
                fail("out of memory");
            s->map_live = q;
            s->map_rec[s->nmap] = tr[k];
            s->map_live[s->nmap++] = tl[k];
            s->renamed |= tr[k] != tl[k];
        } else {
            fail("out of memory");
        }
    }
    return true;
}

/* A frame to send in a session whose ids were renamed: its recorded ids as
 * the live guest knows them (a callback's id, the first u64 of its payload;
 * guest ids, of the session's form, anywhere). Returns p or a copy in *own. */
static const uint8_t *rename_out(const rsess *s, const uint8_t *p, size_t n, bool callback,
                                 uint8_t **own)
{
    *own = NULL;
    if (!s->renamed)
        return p;
    uint64_t salt = rt_key_salt(s->key);
    for (size_t o = 0; o + 8 <= n; o++) {
        uint64_t v = le64(p + o);
        bool gid = (v & RT_GID_BIT) && ((v >> 32) & 0x7fffffffu) == salt;
        if (!(callback && o == 0) && !gid)
            continue;
        for (size_t j = 0; j < s->nmap; j++) {
            if (s->map_rec[j] != v || s->map_live[j] == v)
                continue;
            if (!*own && !(*own = malloc(n)))
                fail("out of memory");
            if (*own && (p != *own)) {
                memcpy(*own, p, n);
                p = *own;
            }
            put_le64(*own + o, s->map_live[j]);
            break;
        }
    }
    return p;
}

/* Whether recorded message m is request (h, p), renaming nothing yet. */
static bool same_request(rsess *s, const msg *m, const apigen_frame_hdr *h, const uint8_t *p)
{
    size_t at;
    return m->kind == RT_REC_REQUEST && m->call == h->call_id &&
           m->flags == (uint16_t)(h->flags & ~APIGEN_F_BULK) && match_payload(s, m, p, h->payload_len, &at, false);
}

/* The frames recorded after message pos of a and of b, up to the next
 * request, are the same. */
static bool same_answers(const rconn *a, const rconn *b, size_t pos)
{
    for (size_t i = pos;; i++) {
        bool ea = i >= a->nm || a->m[i].kind != RT_REC_SENT, eb = i >= b->nm || b->m[i].kind != RT_REC_SENT;
        if (ea || eb)
            return ea == eb;
        if (a->m[i].flags != b->m[i].flags || a->m[i].call != b->m[i].call ||
            a->m[i].stored != b->m[i].stored || memcmp(a->m[i].p, b->m[i].p, a->m[i].stored) != 0)
            return false;
    }
}

/* Narrows l's candidates to those whose next message is request (h, p) and
 * whose answers to it are the first one's; one left is claimed (taken from
 * every other connection's candidates). A thread connection's first request
 * starts from every unclaimed recorded thread connection of its session.
 * With none left, l keeps its first candidate, whose request then fails to
 * match with a message. Caller holds mu. */
static void narrow(live *l, const apigen_frame_hdr *h, const uint8_t *p)
{
    rsess *s = &sess_[l->session];
    if (l->ctrl)
        return;
    if (l->rc < 0) {
        for (size_t i = 0; i < nconns_ && l->ncand < MAX_CAND; i++)
            if (conns_[i].session == l->session && conns_[i].join && !conns_[i].claimed && conns_[i].nreq)
                l->cand[l->ncand++] = (int)i;
        if (!l->ncand) {
            char d[300];
            describe(d, sizeof d, l);
            fail("%s: its first request %s is one connection more than the session's recorded "
                 "thread connections", d, api_call(l->api, h->call_id));
        }
        l->rc = l->cand[0];
    }
    unsigned k = 0;
    int keep = -1;
    for (unsigned i = 0; i < l->ncand; i++) {
        rconn *rc = &conns_[l->cand[i]];
        if ((rc->claimed && l->ncand > 1) || l->pos >= rc->nm || !same_request(s, &rc->m[l->pos], h, p))
            continue;
        if (keep >= 0 && !same_answers(&conns_[keep], rc, l->pos + 1))
            continue;
        if (keep < 0)
            keep = l->cand[i];
        l->cand[k++] = l->cand[i];
    }
    if (!k)
        k = 1; /* cand[0] stays: on_request says how it differs */
    l->ncand = k;
    l->rc = l->cand[0];
    if (l->ncand == 1 && !conns_[l->rc].claimed)
        conns_[l->rc].claimed = true;
}

/* Kuhn's augmenting path: want w gets a live connection of its own (match[k]:
 * the want live k serves, -1: none). */
static bool assign(unsigned w, const bool (*ok)[MAX_CAND], unsigned nl, int *match, bool *seen)
{
    for (unsigned k = 0; k < nl; k++) {
        if (!ok[w][k] || seen[k])
            continue;
        seen[k] = true;
        if (match[k] < 0 || assign((unsigned)match[k], ok, nl, match, seen)) {
            match[k] = (int)w;
            return true;
        }
    }
    return false;
}

/* Whether every connection of s got as far as its recorded connection had
 * when cb was recorded (requests matched, the frames recorded after them
 * sent). The recording server wrote each callback before sending it and each
 * request after receiving it, so whatever the guest did because of cb comes
 * after it in the file: waiting for this never waits for the guest, and it
 * holds cb back until the request that caused it, and the request that
 * carried its (perhaps renamed) callback id, were matched, on whichever
 * thread connection they belong to, in whatever order the threads ran.
 * A recorded thread connection not yet bound to one live connection counts
 * through the live ones that are still the same as it so far: each such
 * connection cb needs must have a live candidate of its own that got far
 * enough. Caller holds mu. */
static bool callback_due(const rsess *s, const rcb *cb)
{
    unsigned nw = 0, nl = 0;
    uint32_t want[MAX_CAND];
    size_t wpos[MAX_CAND];
    for (size_t i = 0; i < cb->nneed; i++) {
        const rconn *rc = &conns_[cb->need_conn[i]];
        if (rc->claimed) {
            if (rc->prog < cb->need[i])
                return false;
        } else {
            if (nw == MAX_CAND)
                return false;
            want[nw] = cb->need_conn[i];
            wpos[nw++] = cb->need[i];
        }
    }
    if (!nw)
        return true;
    const live *lv[MAX_CAND];
    for (size_t i = 0; i < nlives_ && nl < MAX_CAND; i++)
        if (&sess_[lives_[i]->session] == s && !lives_[i]->ctrl && lives_[i]->ncand > 1)
            lv[nl++] = lives_[i];
    if (nl < nw)
        return false;
    bool ok[MAX_CAND][MAX_CAND];
    for (unsigned w = 0; w < nw; w++)
        for (unsigned k = 0; k < nl; k++) {
            ok[w][k] = false;
            for (unsigned c = 0; c < lv[k]->ncand; c++)
                ok[w][k] |= (uint32_t)lv[k]->cand[c] == want[w] && lv[k]->pos >= wpos[w];
        }
    int match[MAX_CAND];
    for (unsigned k = 0; k < nl; k++)
        match[k] = -1;
    for (unsigned w = 0; w < nw; w++) {
        bool seen[MAX_CAND] = {false};
        if (!assign(w, (const bool (*)[MAX_CAND])ok, nl, match, seen))
            return false;
    }
    return true;
}

/* Caller holds mu: the session's callbacks that are due, in recorded order
 * (each one needs at least what the one before it needed). */
static void send_callbacks(rsess *s)
{
    while (s->cbpos < s->ncb && callback_due(s, &s->cb[s->cbpos])) {
        rcb *cb = &s->cb[s->cbpos++];
        uint8_t *own;
        const uint8_t *out = rename_out(s, cb->p, cb->len, true, &own);
        bool sent = s->live_ctrl && send_frame(s->live_ctrl, APIGEN_F_CALLBACK, cb->type, 0, 0, out, cb->len);
        free(own);
        if (!sent)
            fail("session %u: recorded callback %zu (type %u) cannot be delivered: the guest's "
                 "control connection is gone", (unsigned)(s - sess_) + 1, s->cbpos, cb->type);
        cb->sent = true;
    }
}

static void on_request(live *l, const apigen_frame_hdr *h, const uint8_t *p)
{
    char d[300];
    pthread_mutex_lock(&mu);
    narrow(l, h, p);
    rconn *rc = &conns_[l->rc];
    describe(d, sizeof d, l);
    uint16_t fl = (uint16_t)(h->flags & ~APIGEN_F_BULK);
    if (l->pos >= rc->nm)
        fail("%s: request %zu (%s%s) is past the end of the recording (%zu requests recorded)", d,
             l->reqs_done + 1, api_call(l->api, h->call_id), fl & APIGEN_F_ASYNC ? ", async" : "",
             rc->nreq);
    const msg *m = &rc->m[l->pos];
    char what[200];
    snprintf(what, sizeof what, "request %zu (recorded %s%s)", l->reqs_done + 1,
             api_call(l->api, m->call), m->flags & APIGEN_F_ASYNC ? ", async" : "");
    if (m->call != h->call_id)
        fail("%s, %s: got call %s instead", d, what, api_call(l->api, h->call_id));
    if (m->flags != fl)
        fail("%s, %s: frame flags 0x%x, recorded 0x%x (%s)", d, what, fl, m->flags,
             (fl ^ m->flags) & APIGEN_F_ASYNC ? "sync against async" : "flags");
    rsess *s = &sess_[l->session];
    size_t at;
    if (!match_payload(s, m, p, h->payload_len, &at, true)) {
        if (at < h->payload_len || m->len != h->payload_len)
            first_diff(what, l, m->p, m->len, p, h->payload_len, m->len == h->payload_len ? at : 0);
        fail("%s, %s: payload differs after byte %zu (checked by hash: the recording keeps the "
             "first %zu bytes)", d, what, m->stored, m->stored);
    }
    l->pos++;
    l->reqs_done++;
    nmatched_++;
    s->nreq++;
    if (l->ctrl || l->ncand == 1)
        rc->prog = l->pos;
    send_callbacks(s); /* those recorded between this request and its reply */
    while (l->pos < rc->nm && rc->m[l->pos].kind == RT_REC_SENT) {
        const msg *o = &rc->m[l->pos++];
        uint8_t *own;
        const uint8_t *out = rename_out(s, o->p, o->stored, false, &own);
        bool sent = send_frame(l->conn, o->flags, o->call, h->request_id, h->thread_id, out, o->stored);
        free(own);
        if (!sent)
            break;
    }
    rc->pos = l->pos; /* for report_unfinished */
    rc->reqs_done = l->reqs_done;
    if (l->ctrl || l->ncand == 1)
        rc->prog = l->pos;
    send_callbacks(s);
    pthread_mutex_unlock(&mu);
}

/* Caller holds mu: l ended; its session, once all its connections did. */
static void on_end(live *l)
{
    char d[300];
    describe(d, sizeof d, l);
    if (l->rc >= 0 && l->ncand > 1) {
        /* still ambiguous: the candidate that ends here, unclaimed */
        for (unsigned i = 0; i < l->ncand; i++) {
            rconn *c = &conns_[l->cand[i]];
            if (!c->claimed && l->reqs_done == c->nreq) {
                l->rc = l->cand[i];
                break;
            }
        }
        conns_[l->rc].claimed = true;
    }
    if (l->rc >= 0) {
        rconn *rc = &conns_[l->rc];
        rc->ended = true;
        if (!l->ctrl) {
            rc->pos = l->pos;
            rc->reqs_done = l->reqs_done;
        }
        rc->prog = l->pos;
        describe(d, sizeof d, l);
        for (size_t i = rc->pos; i < rc->nm; i++)
            if (rc->m[i].kind == RT_REC_REQUEST)
                fail("%s ended, but recorded request %zu (%s%s) and %zu more were never sent", d,
                     rc->reqs_done + 1, api_call(l->api, rc->m[i].call),
                     rc->m[i].flags & APIGEN_F_ASYNC ? ", async" : "",
                     rc->nreq - rc->reqs_done - 1);
    }
    for (size_t i = 0; i < nlives_; i++)
        if (lives_[i] == l) {
            lives_[i] = lives_[--nlives_];
            break;
        }
    rsess *s = &sess_[l->session];
    if (s->live_ctrl && l->rc >= 0)
        send_callbacks(s); /* what this connection's binding made due */
    if (l->ctrl)
        s->live_ctrl = NULL;
    if (--s->open)
        return;
    for (size_t i = 0; i < nconns_; i++)
        if (conns_[i].session == l->session && conns_[i].nreq && !conns_[i].claimed)
            fail("session %u ended, but its recorded thread connection %zu (%zu requests, the first "
                 "%s) never came", l->session + 1, i + 1, conns_[i].nreq,
                 api_call(l->api, conns_[i].m[0].call));
    if (s->cbpos < s->ncb)
        fail("session %u ended, but recorded callback %zu of %zu (type %u) was never due",
             l->session + 1, s->cbpos + 1, s->ncb, s->cb[s->cbpos].type);
    s->done = true;
    if (++nsess_done_ == nsess_) {
        apigen_log("replay of %s complete: %zu session(s), %llu requests matched", path_, nsess_,
                   (unsigned long long)nmatched_);
        fflush(stderr);
        _exit(0);
    }
}

static void *serve(void *arg)
{
    live *l = arg;
    apigen_frame_hdr h;
    uint8_t *buf = NULL;
    size_t cap = 0;
    char err[256];
    bool eof;
    if (!rt_recv_frame(l->conn, &h, &buf, &cap, HELLO_MAX, IO_TIMEOUT_MS, &eof, err, sizeof err) ||
        !(h.flags & APIGEN_F_HELLO)) {
        apigen_log("replay: %s: no handshake (%s)", apigen_tp_peer(l->conn), eof ? "closed" : err);
        goto out;
    }
    rt_hello hl;
    const char *why = NULL;
    if (rt_hello_parse(buf, h.payload_len, &hl, &why) != RT_HELLO_OK)
        fail("%s: malformed handshake", apigen_tp_peer(l->conn));
    const char *name = hl.name;
    uint8_t join = hl.join, key[RT_KEY_LEN];
    memcpy(key, hl.key, RT_KEY_LEN);
    for (unsigned k = 0; k < napis_; k++)
        if (strcmp(apis_[k]->name, name) == 0)
            l->api = apis_[k];
    pthread_mutex_lock(&mu);
    const rconn *ref = NULL;
    if (!join) {
        size_t i = 0;
        while (i < nsess_ && sess_[i].claimed)
            i++;
        if (i == nsess_)
            fail("a new session from %s is one more than the %zu recorded", apigen_tp_peer(l->conn),
                 nsess_);
        sess_[i].claimed = true;
        sess_[i].live_ctrl = l->conn;
        l->session = (uint32_t)i;
        l->ctrl = true;
        l->rc = (int)sess_[i].ctrl;
        conns_[l->rc].claimed = true;
        ref = &conns_[l->rc];
    } else {
        size_t i = 0;
        while (i < nsess_ && !(sess_[i].claimed && !sess_[i].done && memcmp(sess_[i].key, key, RT_KEY_LEN) == 0))
            i++;
        if (i == nsess_)
            fail("%s joins a session that is not live (its key is none the replay handed out)",
                 apigen_tp_peer(l->conn));
        l->session = (uint32_t)i;
        l->rc = -1;
        for (size_t k = 0; k < nconns_ && !ref; k++)
            if (conns_[k].session == i && conns_[k].join)
                ref = &conns_[k];
        if (!ref)
            fail("session %zu: %s opens a thread connection; the recording has none", i + 1,
                 apigen_tp_peer(l->conn));
    }
    sess_[l->session].open++;
    if (!grow((void **)&lives_, &caplives_, nlives_, sizeof *lives_))
        fail("out of memory");
    lives_[nlives_++] = l;
    /* compared as version 2 (the guest's pid and name change from run to
     * run; a recording of either version replays with a guest of either) */
    rt_hello rh;
    apigen_wr cr, cl;
    apigen_wr_init(&cr);
    apigen_wr_init(&cl);
    if (rt_hello_parse(ref->hello, ref->hello_len, &rh, &why) != RT_HELLO_OK ||
        !rt_hello_canon(&rh, &cr) || !rt_hello_canon(&hl, &cl))
        fail("the recording's handshake (API '%s') is malformed or out of memory", name);
    if (cr.len != cl.len || memcmp(cr.buf, cl.buf, cl.len) != 0) {
        char what[64];
        snprintf(what, sizeof what, "handshake (API '%s')", name);
        first_diff(what, l, cr.buf, cr.len, cl.buf, cl.len, 0);
    }
    apigen_wr_free(&cr);
    apigen_wr_free(&cl);
    pthread_mutex_unlock(&mu);

    /* the reply the recording server sent: ok and the recorded key */
    {
        apigen_wr w;
        size_t off;
        apigen_wr_init(&w);
        bool ok = rt_wr_begin_frame(&w, &off) && apigen_put_u32(&w, RT_HELLO_OK) &&
                  apigen_put_str(&w, "ok") && apigen_put_raw(&w, ref->key, RT_KEY_LEN) &&
                  rt_wr_end_frame(&w, off, APIGEN_F_HELLO | APIGEN_F_REPLY, 0, h.request_id, h.thread_id) &&
                  apigen_tp_send_buf(l->conn, w.buf, w.len, IO_TIMEOUT_MS, err, sizeof err);
        apigen_wr_free(&w);
        if (!ok) {
            pthread_mutex_lock(&mu);
            goto ended;
        }
    }
    if (hl.arena_size) { /* declined, as the recording server did (record.c) */
        char tag[RT_ARENA_TAG_LEN];
        uint8_t ack[RT_ARENA_ACK_LEN] = {2};
        int fd = -1;
        if (!apigen_tp_recv_side(l->conn, tag, sizeof tag, &fd, IO_TIMEOUT_MS, err, sizeof err) ||
            (fd >= 0 && close(fd) != 0) ||
            !apigen_tp_send_side(l->conn, ack, sizeof ack, -1, IO_TIMEOUT_MS, err, sizeof err)) {
            apigen_log("replay: %s: arena exchange: %s", apigen_tp_peer(l->conn), err);
            pthread_mutex_lock(&mu);
            goto ended;
        }
    }
    for (;;) {
        if (!rt_recv_frame(l->conn, &h, &buf, &cap, MAX_PAYLOAD, -1, &eof, err, sizeof err)) {
            if (!eof)
                apigen_log("replay: %s: %s", apigen_tp_peer(l->conn), err);
            break;
        }
        if (h.flags & APIGEN_F_BYE)
            break;
        if (h.flags & (APIGEN_F_HELLO | APIGEN_F_REPLY | APIGEN_F_CALLBACK | APIGEN_F_STREAM))
            fail("%s: unexpected frame flags 0x%x", apigen_tp_peer(l->conn), h.flags);
        if (h.call_id == RT_CALL_WAIT && (h.flags & APIGEN_F_ASYNC))
            continue; /* ordering across threads: nothing runs here */
        on_request(l, &h, buf);
    }
    pthread_mutex_lock(&mu);
ended:
    on_end(l);
    pthread_mutex_unlock(&mu);
out:
    free(buf);
    apigen_tp_close(l->conn);
    free(l);
    return NULL;
}

static void on_signal(int sig)
{
    unsigned char c = (unsigned char)sig;
    if (sig_pipe_[1] >= 0)
        (void)!write(sig_pipe_[1], &c, 1);
}

/* Stopped before every recorded session ran: say what is missing. */
static void report_unfinished(void)
{
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < nsess_; i++) {
        if (sess_[i].done)
            continue;
        if (!sess_[i].claimed)
            fail("stopped; recorded session %zu of %zu never started", i + 1, nsess_);
        for (size_t k = 0; k < nconns_; k++) {
            rconn *rc = &conns_[k];
            if (rc->session == i && rc->reqs_done < rc->nreq)
                fail("stopped; session %zu connection %zu sent %zu of its %zu recorded requests "
                     "(next: %s)", i + 1, k + 1, rc->reqs_done, rc->nreq,
                     rc->pos < rc->nm ? "request" : "-");
        }
        fail("stopped; session %zu is still open", i + 1);
    }
    pthread_mutex_unlock(&mu);
}

int rt_replay_main(const char *path, const apigen_api *const *apis, unsigned napis,
                   const char *const *urls, unsigned nurls)
{
    char why[600];
    path_ = path;
    apis_ = apis;
    napis_ = napis;
    if (!load(path, apis, napis, why, sizeof why)) {
        apigen_log("--replay %s: %s", path, why);
        return 2;
    }
    size_t nreq = 0;
    for (size_t i = 0; i < nconns_; i++)
        nreq += conns_[i].nreq;
    signal(SIGPIPE, SIG_IGN);
    if (pipe2(sig_pipe_, O_CLOEXEC | O_NONBLOCK) < 0)
        return apigen_log("pipe: %s", strerror(errno)), 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    apigen_listener *ls[16];
    struct pollfd pf[17];
    for (unsigned i = 0; i < nurls; i++) {
        if (!apigen_tp_listen(urls[i], &ls[i], why, sizeof why)) {
            apigen_log("%s", why);
            return 1;
        }
        apigen_log("listening on %s (replaying %s: %zu session(s), %zu connection(s), %zu "
                   "requests)", apigen_tp_listener_url(ls[i]), path, nsess_, nconns_, nreq);
    }
    for (;;) {
        for (unsigned i = 0; i < nurls; i++)
            pf[i] = (struct pollfd){apigen_tp_listener_fd(ls[i]), POLLIN, 0};
        pf[nurls] = (struct pollfd){sig_pipe_[0], POLLIN, 0};
        int n = poll(pf, nurls + 1, -1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return apigen_log("poll: %s", strerror(errno)), 1;
        if (pf[nurls].revents) {
            report_unfinished(); /* exits 1 unless all is done */
            return 0;
        }
        for (unsigned i = 0; i < nurls; i++) {
            apigen_conn *c;
            if (!pf[i].revents)
                continue;
            if (!apigen_tp_accept(ls[i], &c, why, sizeof why)) {
                apigen_log("%s", why);
                continue;
            }
            live *l = calloc(1, sizeof *l);
            pthread_t t;
            pthread_attr_t at;
            pthread_attr_init(&at);
            pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
            if (!l)
                fail("out of memory");
            l->conn = c;
            if (pthread_create(&t, &at, serve, l) != 0)
                fail("out of threads");
            pthread_attr_destroy(&at);
        }
    }
}
