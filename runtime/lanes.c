/* Lanes: several extra connections of one guest thread's connection that
 * carry its large transfers in parallel (docs/internals.md, "Lanes").
 *
 * A transfer of n bytes is cut into pieces of `piece` bytes; piece i goes
 * on lane i mod k, each piece after a 32-byte frame header that names it
 * (APIGEN_F_LANES, call_id = lane, request_id = transfer number, thread_id =
 * offset, payload_len = length), which the receiver checks against the
 * layout it computed itself: a stray, forged or out-of-order piece ends the
 * connection instead of landing somewhere. One worker thread per lane sends
 * or receives its pieces; the caller waits for all of them. Any lane's
 * failure shuts every lane down (no worker stays blocked) and the transfer
 * fails: the caller then ends the connection, with the worker's error.
 *
 * Both sides keep one rt_lanes per main connection (apigen_tp_user). The
 * guest opens the lanes itself (guest.c); a server's lane connections
 * arrive through handshakes of their own (server.c), are matched to the
 * owner here by (session, thread id, lane key) and wait in its slot until
 * the owner adopts them. */
#define _GNU_SOURCE
#include "rt_internal.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ADOPT_WAIT_MS 2000 /* a laned frame arrived before its lanes' handshakes finished (they end before the guest sends it: microseconds) */
#define DISCARD_CAP (256u << 10)

void (*rt_lanes_mx)(uint64_t opened, uint64_t in, uint64_t out);

struct rt_lanes {
    apigen_conn *main;
    bool server;
    pid_t pid; /* a fork child neither joins nor wakes its parent's workers */
    /* settings: the guest's (rt_lane_cfg), given to the server in each lane's handshake */
    unsigned k;
    uint32_t piece;
    uint64_t min;
    uint8_t key[RT_KEY_LEN];
    /* the lane connections: the guest's once opened; the server's as they are offered */
    apigen_conn *conn[RT_LANES_MAX];
    unsigned have;
    bool started, gave_up, want;
    bool adopted; /* server: no more offers (under reg_mu) */
    uint32_t reserved; /* server: lanes checked, their connections to come (under reg_mu) */
    /* server: where offers find it (under reg_mu) */
    struct rt_lanes *reg_next;
    const void *session;
    uint64_t tid;
    /* the workers and their one job (under mu) */
    pthread_t th[RT_LANES_MAX];
    unsigned nth;
    pthread_mutex_t mu;
    pthread_cond_t cv_job, cv_done, cv_idle;
    uint64_t gen;
    bool busy, quit, dead;
    unsigned left;
    bool recv;
    const uint8_t *src;
    uint8_t *dst;          /* recv: where [a, b) goes (NULL: discard) */
    uint64_t n, a, b;      /* the transfer's length and this job's range of it */
    uint32_t seq;
    int timeout_ms;
    char err[256];
    /* transfer numbers each way, and the one being received */
    uint32_t seq_out, seq_in;
    uint64_t in_n, in_pos;
    bool in_open;
    uint8_t *scratch[RT_LANES_MAX]; /* discarding receives land here */
    uint64_t bytes_out, bytes_in;   /* for the trace line at the end */
};

/* ---- piece layout ------------------------------------------------------------- */
void rt_lane_it_init(rt_lane_it *it, uint64_t n, uint64_t piece, unsigned k, unsigned lane,
                     uint64_t a, uint64_t b)
{
    it->n = n;
    it->piece = piece ? piece : 1;
    it->k = k ? k : 1;
    it->lane = lane;
    it->a = a;
    it->b = b < n ? b : n;
    /* the first piece of this lane that ends after a */
    uint64_t first = a / it->piece;
    uint64_t r = first % it->k;
    it->i = first + (lane >= r ? lane - r : it->k - r + lane);
}

bool rt_lane_it_next(rt_lane_it *it, rt_lane_seg *s)
{
    uint64_t start = it->i * it->piece;
    if (it->i > UINT64_MAX / it->piece || start >= it->b)
        return false;
    uint64_t end = it->n - start < it->piece ? it->n : start + it->piece;
    s->piece_off = start;
    s->piece_len = end - start;
    s->head = start >= it->a; /* its header comes first: it starts in this range */
    s->off = start > it->a ? start : it->a;
    s->len = (end < it->b ? end : it->b) - s->off;
    it->i += it->k;
    return true;
}

/* ---- settings ------------------------------------------------------------------ */
static uint64_t env_size(const char *name, uint64_t dflt, uint64_t lo, uint64_t hi)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return dflt;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    unsigned sh = *end == 'k' || *end == 'K' ? 10 : *end == 'm' || *end == 'M' ? 20 : *end == 'g' || *end == 'G' ? 30 : 0;
    if (sh)
        end++;
    if (errno || end == v || *end || x > (UINT64_MAX >> sh) || (x << sh) < lo || (x << sh) > hi) {
        apigen_log("%s=%s: not a number from %llu to %llu (K, M, G suffixes); using %llu", name, v,
                   (unsigned long long)lo, (unsigned long long)hi, (unsigned long long)dflt);
        return dflt;
    }
    return (uint64_t)x << sh;
}

void rt_lanes_cfg(rt_lane_cfg *c, bool useful)
{
    uint64_t k = env_size("APIGEN_LANES", useful ? RT_LANES_DEFAULT : 0, 0, RT_LANES_MAX);
    c->k = k >= 2 ? (unsigned)k : 0; /* 0 or 1: one connection */
    c->piece = (uint32_t)env_size("APIGEN_LANE_PIECE", RT_LANE_PIECE_DEFAULT, RT_LANE_PIECE_MIN,
                                  RT_LANE_PIECE_MAX);
    c->min = env_size("APIGEN_LANES_MIN", RT_LANES_MIN_DEFAULT, 1, UINT32_MAX);
}

/* ---- the workers ------------------------------------------------------------- */
static void fail_locked(rt_lanes *L, unsigned lane, const char *why)
{
    if (!L->dead) {
        L->dead = true;
        snprintf(L->err, sizeof L->err, "lane %u of %u: %s", lane, L->k, why);
        for (unsigned i = 0; i < L->k; i++) /* wake the others: none waits for bytes now */
            apigen_tp_shutdown(L->conn[i]);
    }
}

static bool lane_send(rt_lanes *L, unsigned lane, const uint8_t *src, uint64_t n, uint32_t seq,
                      int tmo, char *err, size_t errlen)
{
    rt_lane_it it;
    rt_lane_seg s;
    rt_lane_it_init(&it, n, L->piece, L->k, lane, 0, n);
    while (rt_lane_it_next(&it, &s)) {
        apigen_frame_hdr h = {APIGEN_MAGIC,   APIGEN_PROTO_VERSION,   APIGEN_F_LANES, lane, seq,
                              s.piece_off, (uint32_t)s.piece_len, 0};
        uint8_t hb[APIGEN_FRAME_HDR_SIZE];
        apigen_hdr_encode(&h, hb);
        struct iovec iov[2] = {{hb, sizeof hb}, {(void *)(src + s.off), (size_t)s.len}};
        if (!apigen_tp_send(L->conn[lane], iov, 2, tmo, err, errlen))
            return false;
    }
    return true;
}

static bool lane_recv(rt_lanes *L, unsigned lane, uint8_t *dst, uint64_t n, uint64_t a,
                      uint64_t b, uint32_t seq, int tmo, char *err, size_t errlen)
{
    rt_lane_it it;
    rt_lane_seg s;
    rt_lane_it_init(&it, n, L->piece, L->k, lane, a, b);
    while (rt_lane_it_next(&it, &s)) {
        if (s.head) {
            uint8_t hb[APIGEN_FRAME_HDR_SIZE];
            apigen_frame_hdr h;
            const char *e = NULL;
            apigen_tp_result r = apigen_tp_recv(L->conn[lane], hb, sizeof hb, tmo, err, errlen);
            if (r == APIGEN_TP_EOF)
                snprintf(err, errlen, "closed by the peer in the middle of a transfer");
            if (r != APIGEN_TP_OK)
                return false;
            if (!apigen_hdr_decode(hb, &h, RT_LANE_PIECE_MAX, &e)) {
                snprintf(err, errlen, "bad piece header: %s", e);
                return false;
            }
            if (h.flags != APIGEN_F_LANES || h.call_id != lane || h.request_id != seq ||
                h.thread_id != s.piece_off || h.payload_len != s.piece_len) {
                snprintf(err, errlen, "piece (flags 0x%x, lane %u, transfer %u, offset %llu, %u bytes) "
                         "is not the expected one (lane %u, transfer %u, offset %llu, %llu bytes)",
                         h.flags, h.call_id, h.request_id, (unsigned long long)h.thread_id,
                         h.payload_len, lane, seq, (unsigned long long)s.piece_off,
                         (unsigned long long)s.piece_len);
                return false;
            }
        }
        uint64_t done = 0;
        while (done < s.len) {
            uint8_t *at;
            size_t k;
            if (dst) {
                at = dst + (s.off - a) + done;
                k = (size_t)(s.len - done);
            } else {
                if (!L->scratch[lane] && !(L->scratch[lane] = malloc(DISCARD_CAP))) {
                    snprintf(err, errlen, "out of memory");
                    return false;
                }
                at = L->scratch[lane];
                k = s.len - done < DISCARD_CAP ? (size_t)(s.len - done) : DISCARD_CAP;
            }
            apigen_tp_result r = apigen_tp_recv(L->conn[lane], at, k, tmo, err, errlen);
            if (r == APIGEN_TP_EOF)
                snprintf(err, errlen, "closed by the peer in the middle of a transfer");
            if (r != APIGEN_TP_OK)
                return false;
            done += k;
        }
    }
    return true;
}

typedef struct worker_arg {
    rt_lanes *L;
    unsigned lane;
} worker_arg;

static void *worker_main(void *arg)
{
    worker_arg wa = *(worker_arg *)arg;
    free(arg);
    rt_lanes *L = wa.L;
    uint64_t seen = 0;
    char err[200];
    pthread_mutex_lock(&L->mu);
    for (;;) {
        while (!L->quit && L->gen == seen)
            pthread_cond_wait(&L->cv_job, &L->mu);
        if (L->quit)
            break;
        seen = L->gen;
        bool recv = L->recv, ok = !L->dead;
        const uint8_t *src = L->src;
        uint8_t *dst = L->dst;
        uint64_t n = L->n, a = L->a, b = L->b;
        uint32_t seq = L->seq;
        int tmo = L->timeout_ms;
        pthread_mutex_unlock(&L->mu);
        err[0] = 0;
        if (ok)
            ok = recv ? lane_recv(L, wa.lane, dst, n, a, b, seq, tmo, err, sizeof err)
                      : lane_send(L, wa.lane, src, n, seq, tmo, err, sizeof err);
        pthread_mutex_lock(&L->mu);
        if (!ok && err[0])
            fail_locked(L, wa.lane, err);
        if (--L->left == 0)
            pthread_cond_broadcast(&L->cv_done);
    }
    pthread_mutex_unlock(&L->mu);
    return NULL;
}

/* One job on every lane; false: a lane failed (the lanes are dead from now on). */
static bool run_job(rt_lanes *L, bool recv, const void *src, void *dst, uint64_t n, uint64_t a,
                    uint64_t b, uint32_t seq, int tmo, char *err, size_t errlen)
{
    pthread_mutex_lock(&L->mu);
    while (L->busy) /* one transfer at a time (a thread's sends and its replies never overlap) */
        pthread_cond_wait(&L->cv_idle, &L->mu);
    bool ok = !L->dead;
    if (ok) {
        L->busy = true;
        L->recv = recv;
        L->src = src;
        L->dst = dst;
        L->n = n;
        L->a = a;
        L->b = b;
        L->seq = seq;
        L->timeout_ms = tmo;
        L->left = L->nth;
        L->gen++;
        pthread_cond_broadcast(&L->cv_job);
        while (L->left)
            pthread_cond_wait(&L->cv_done, &L->mu);
        L->busy = false;
        pthread_cond_signal(&L->cv_idle);
        ok = !L->dead;
    }
    if (!ok)
        snprintf(err, errlen, "%s", L->err[0] ? L->err : "lanes closed");
    pthread_mutex_unlock(&L->mu);
    return ok;
}

/* ---- per connection ------------------------------------------------------------- */
static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t reg_cv = PTHREAD_COND_INITIALIZER;
static rt_lanes *reg_head;

static rt_lanes *lanes_new(apigen_conn *main, bool server)
{
    rt_lanes *L = calloc(1, sizeof *L);
    if (!L)
        return NULL;
    L->main = main;
    L->server = server;
    L->pid = getpid();
    pthread_mutex_init(&L->mu, NULL);
    pthread_cond_init(&L->cv_job, NULL);
    pthread_cond_init(&L->cv_done, NULL);
    pthread_cond_init(&L->cv_idle, NULL);
    apigen_tp_set_user(main, L);
    return L;
}

rt_lanes *rt_lanes_new_guest(apigen_conn *main, const rt_lane_cfg *cfg, const uint8_t key[RT_KEY_LEN])
{
    rt_lanes *L = lanes_new(main, false);
    if (L) {
        L->k = cfg->k;
        L->piece = cfg->piece;
        L->min = cfg->min;
        memcpy(L->key, key, RT_KEY_LEN);
    }
    return L;
}

rt_lanes *rt_lanes_new_server(apigen_conn *main, const void *session, uint64_t tid,
                              const uint8_t key[RT_KEY_LEN])
{
    rt_lanes *L = lanes_new(main, true);
    if (!L)
        return NULL;
    L->session = session;
    L->tid = tid;
    memcpy(L->key, key, RT_KEY_LEN);
    pthread_mutex_lock(&reg_mu);
    L->reg_next = reg_head;
    reg_head = L;
    pthread_mutex_unlock(&reg_mu);
    return L;
}

rt_lanes *rt_lanes_of(const apigen_conn *c) { return apigen_tp_user(c); }

void rt_lanes_shutdown(apigen_conn *main)
{
    rt_lanes *L = apigen_tp_user(main);
    if (!L || L->pid != getpid())
        return;
    pthread_mutex_lock(&reg_mu); /* a server's lanes still arriving */
    pthread_mutex_lock(&L->mu);
    fail_locked(L, 0, "the connection was shut down");
    for (unsigned i = 0; i < RT_LANES_MAX; i++)
        apigen_tp_shutdown(L->conn[i]);
    pthread_mutex_unlock(&L->mu);
    pthread_mutex_unlock(&reg_mu);
}

void rt_lanes_free(apigen_conn *main)
{
    rt_lanes *L = apigen_tp_user(main);
    if (!L)
        return;
    apigen_tp_set_user(main, NULL);
    if (L->pid != getpid()) { /* a fork child: the parent's workers are not here */
        for (unsigned i = 0; i < RT_LANES_MAX; i++)
            apigen_tp_close(L->conn[i]);
        return; /* the rest stays allocated: its locks may have been held at fork() */
    }
    if (L->server) {
        pthread_mutex_lock(&reg_mu);
        for (rt_lanes **pp = &reg_head; *pp; pp = &(*pp)->reg_next)
            if (*pp == L) {
                *pp = L->reg_next;
                break;
            }
        pthread_mutex_unlock(&reg_mu);
    }
    if (L->nth && apigen_tracing())
        apigen_trace("lanes of %s: %u lanes, %u transfers (%llu bytes) sent, %u (%llu bytes) received%s%s",
                     apigen_tp_peer(main), L->k, L->seq_out, (unsigned long long)L->bytes_out,
                     L->seq_in, (unsigned long long)L->bytes_in, L->dead ? "; ended: " : "",
                     L->dead ? L->err : "");
    pthread_mutex_lock(&L->mu);
    L->quit = true;
    pthread_cond_broadcast(&L->cv_job);
    pthread_mutex_unlock(&L->mu);
    for (unsigned i = 0; i < L->nth; i++)
        pthread_join(L->th[i], NULL);
    for (unsigned i = 0; i < RT_LANES_MAX; i++) {
        apigen_tp_close(L->conn[i]);
        free(L->scratch[i]);
    }
    pthread_mutex_destroy(&L->mu);
    pthread_cond_destroy(&L->cv_job);
    pthread_cond_destroy(&L->cv_done);
    pthread_cond_destroy(&L->cv_idle);
    free(L);
}

/* Starts one worker per lane connection (L->conn[0..k) set). */
static bool start_workers(rt_lanes *L, char *err, size_t errlen)
{
    for (unsigned i = 0; i < L->k; i++) {
        worker_arg *wa = malloc(sizeof *wa);
        if (wa)
            *wa = (worker_arg){L, i};
        int rc = wa ? pthread_create(&L->th[i], NULL, worker_main, wa) : ENOMEM;
        if (rc) {
            free(wa);
            snprintf(err, errlen, "cannot start lane threads: %s", strerror(rc));
            pthread_mutex_lock(&L->mu);
            fail_locked(L, i, "no thread");
            pthread_mutex_unlock(&L->mu);
            return false;
        }
        L->nth++;
    }
    L->started = true;
    return true;
}

bool rt_lanes_start(rt_lanes *L, apigen_conn *const *conns, unsigned k, char *err, size_t errlen)
{
    if (!L || L->started || k < 2 || k > RT_LANES_MAX) {
        snprintf(err, errlen, "lanes: bad start");
        for (unsigned i = 0; i < k && i < RT_LANES_MAX; i++)
            apigen_tp_close(conns[i]);
        return false;
    }
    L->k = k;
    for (unsigned i = 0; i < k; i++)
        L->conn[i] = conns[i];
    L->have = k;
    return start_workers(L, err, errlen);
}

/* ---- the guest: when to open ---------------------------------------------------- */
bool rt_lanes_large(const rt_lanes *L, uint64_t n)
{
    return L && (n >= L->min || __atomic_load_n(&L->want, __ATOMIC_RELAXED));
}

bool rt_lanes_wanted(const rt_lanes *L, uint64_t largest)
{
    return L && !L->server && !L->started && !L->gave_up && L->k >= 2 && rt_lanes_large(L, largest);
}

void rt_lanes_give_up(rt_lanes *L)
{
    if (L)
        L->gave_up = true;
}

void rt_lanes_note_recv(const apigen_conn *c, uint64_t n)
{
    rt_lanes *L = apigen_tp_user(c);
    if (L && !L->server && !L->started && n >= L->min)
        __atomic_store_n(&L->want, true, __ATOMIC_RELAXED); /* a large reply came on one
                                                                connection: the next send opens them */
}

void rt_lanes_settings(const rt_lanes *L, unsigned *k, uint32_t *piece, uint64_t *min,
                       uint8_t key[RT_KEY_LEN])
{
    *k = L->k;
    *piece = L->piece;
    *min = L->min;
    memcpy(key, L->key, RT_KEY_LEN);
}

/* ---- the server: lanes arriving ------------------------------------------------- */
static bool key_eq(const uint8_t *a, const uint8_t *b)
{
    uint8_t d = 0;
    for (unsigned i = 0; i < RT_KEY_LEN; i++)
        d |= (uint8_t)(a[i] ^ b[i]);
    return d == 0;
}

uint32_t rt_lanes_offer(const void *session, uint64_t tid, const uint8_t key[RT_KEY_LEN],
                        unsigned idx, unsigned k, uint32_t piece, uint64_t min, apigen_conn *conn,
                        char *msg, size_t msglen)
{
    uint32_t st = RT_HELLO_OK;
    if (k < 2 || k > RT_LANES_MAX || idx >= k || piece < RT_LANE_PIECE_MIN ||
        piece > RT_LANE_PIECE_MAX || !min) {
        snprintf(msg, msglen, "lane %u of %u (pieces of %u bytes): out of range (2 to %u lanes, "
                 "pieces of %u to %u bytes)", idx, k, piece, RT_LANES_MAX, RT_LANE_PIECE_MIN,
                 RT_LANE_PIECE_MAX);
        return RT_HELLO_MALFORMED;
    }
    pthread_mutex_lock(&reg_mu);
    rt_lanes *L = reg_head;
    /* every candidate's key is compared: the time taken says nothing about it */
    rt_lanes *found = NULL;
    for (; L; L = L->reg_next)
        if (L->session == session && L->tid == tid && key_eq(L->key, key))
            found = L;
    L = found;
    if (!L) {
        snprintf(msg, msglen, "no connection of this session (thread %llu) has that lane key: a "
                 "lane of another session or connection, or a forged one",
                 (unsigned long long)tid);
        st = RT_HELLO_SESSION;
    } else if (L->adopted || L->dead || (L->k && (k != L->k || piece != L->piece || min != L->min)) ||
               L->conn[idx] || (!conn && (L->reserved >> idx & 1u))) {
        snprintf(msg, msglen, "lane %u of %u: %s", idx, k,
                 L->adopted || L->dead ? "the connection's lanes are already open"
                 : L->conn[idx] || (L->reserved >> idx & 1u) ? "offered twice"
                                                             : "its settings differ from the other lanes'");
        st = RT_HELLO_SESSION;
    } else {
        /* the check reserves the lane for this handshake: its connection is
         * taken after the reply, and the guest, once it has the reply, may
         * offer the lane again, which must be refused then too */
        L->k = k;
        L->piece = piece;
        L->min = min;
        L->reserved |= 1u << idx;
        if (conn) {
            L->conn[idx] = conn;
            L->have++;
            pthread_cond_broadcast(&reg_cv);
        }
    }
    pthread_mutex_unlock(&reg_mu);
    return st;
}

unsigned rt_lanes_expected(void)
{
    unsigned n = 0;
    pthread_mutex_lock(&reg_mu);
    for (rt_lanes *L = reg_head; L; L = L->reg_next)
        if (!L->adopted && !L->dead && n < UINT_MAX - RT_LANES_MAX)
            n += L->k ? L->k - L->have : RT_LANES_MAX;
    pthread_mutex_unlock(&reg_mu);
    return n;
}

/* The server adopts the lanes that arrived: all of them (wait_ms: for the
 * last handshakes to finish), else none. Under nothing. */
static bool adopt(rt_lanes *L, int wait_ms, char *err, size_t errlen)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += wait_ms / 1000;
    until.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&reg_mu);
    while (wait_ms > 0 && !L->dead && (L->k < 2 || L->have < L->k))
        if (pthread_cond_timedwait(&reg_cv, &reg_mu, &until) == ETIMEDOUT)
            break;
    bool ok = !L->adopted && !L->dead && L->k >= 2 && L->have == L->k;
    if (ok)
        L->adopted = true; /* no more offers */
    unsigned have = L->have, k = L->k;
    pthread_mutex_unlock(&reg_mu);
    if (!ok) {
        snprintf(err, errlen, "%u of %u lanes arrived", have, k);
        return false;
    }
    if (!start_workers(L, err, errlen))
        return false;
    if (rt_lanes_mx)
        rt_lanes_mx(k, 0, 0);
    return true;
}

/* ---- the data path -------------------------------------------------------------- */
rt_lanes *rt_lanes_for_send(apigen_conn *c, uint64_t n)
{
    rt_lanes *L = apigen_tp_user(c);
    char err[64];
    if (!L || n < L->min || L->dead)
        return NULL;
    if (L->started)
        return L;
    if (L->server && !L->adopted && adopt(L, 0, err, sizeof err))
        return L;
    return NULL;
}

rt_lanes *rt_lanes_for_recv(apigen_conn *c, char *err, size_t errlen)
{
    rt_lanes *L = apigen_tp_user(c);
    if (!L) {
        snprintf(err, errlen, "a frame's bulk travels on lanes this connection never agreed on");
        return NULL;
    }
    if (L->started)
        return L;
    if (!L->server) {
        snprintf(err, errlen, "a frame's bulk travels on lanes this connection has not opened");
        return NULL;
    }
    char why[128];
    if (!adopt(L, ADOPT_WAIT_MS, why, sizeof why)) {
        snprintf(err, errlen, "a frame's bulk travels on lanes that are not there (%s)", why);
        return NULL;
    }
    return L;
}

bool rt_lanes_send(rt_lanes *L, const void *p, uint64_t n, int timeout_ms, char *err, size_t errlen)
{
    uint32_t seq = L->seq_out++;
    L->bytes_out += n;
    bool ok = run_job(L, false, p, NULL, n, 0, n, seq, timeout_ms, err, errlen);
    if (ok && L->server && rt_lanes_mx)
        rt_lanes_mx(0, 0, n);
    return ok;
}

bool rt_lanes_recv_begin(rt_lanes *L, uint64_t n, char *err, size_t errlen)
{
    if (L->in_open && L->in_pos != L->in_n) {
        snprintf(err, errlen, "lanes: a transfer began before the last one was read (%llu of %llu bytes)",
                 (unsigned long long)L->in_pos, (unsigned long long)L->in_n);
        return false;
    }
    L->in_open = true;
    L->in_n = n;
    L->in_pos = 0;
    L->seq_in++;
    return true;
}

bool rt_lanes_recv(rt_lanes *L, void *dst, uint64_t n, int timeout_ms, char *err, size_t errlen)
{
    if (!L->in_open || n > L->in_n - L->in_pos) {
        snprintf(err, errlen, "lanes: %llu bytes asked past the transfer's end", (unsigned long long)n);
        return false;
    }
    if (!n)
        return true;
    uint64_t a = L->in_pos;
    L->in_pos += n;
    L->bytes_in += n;
    bool ok = run_job(L, true, NULL, dst, L->in_n, a, a + n, L->seq_in - 1, timeout_ms, err, errlen);
    if (ok && L->server && rt_lanes_mx)
        rt_lanes_mx(0, n, 0);
    return ok;
}

uint64_t rt_lanes_min(const rt_lanes *L) { return L ? L->min : UINT64_MAX; }
bool rt_lanes_started(const rt_lanes *L) { return L && L->started; }
