/* Sessions: one per guest process, keyed by a random 16-byte key, shared by
 * that process's connections. Each owns a handle table (id <-> real pointer,
 * type-checked, ids never reused) so a client can only name its own objects. */
#define _GNU_SOURCE
#include "rt_internal.h"
#include "rt_metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* A handle id is (salt << 32) | (FIRST_ID + index): the salt is random per
 * session and never 0, so ids are far from small integers and from the
 * ids of other sessions. Hand-written host code that must tell a handle from
 * plain bytes (an 8-byte kernel argument that may be an object) can then look the value
 * up with apigen_handle_lookup with little risk of a scalar matching. */
#define FIRST_ID 0x1000u
#define ID_LOW(id) ((id) & 0xffffffffu)

/* A narrow (integer) handle's value 0 is a real handle (an FFT library's first
 * plan may be 0): the table keeps value + 1, so that 0 still means "none" there
 * (and -1, such a library's null plan, becomes none). */
static void *kept(const apigen_handle_type *ht, void *real)
{
    return ht->flags & APIGEN_HT_NARROW ? (void *)((uintptr_t)real + 1) : real;
}

static void *given(const apigen_handle_type *ht, void *k)
{
    return ht->flags & APIGEN_HT_NARROW ? (void *)((uintptr_t)k - 1) : k;
}

typedef struct hent {
    const apigen_handle_type *ht;
    void *real;
    uint32_t next; /* reverse-map chain: index + 1, 0 = end */
    uint32_t refs; /* references the client holds (creates + retains - releases) */
    bool live, owned;
    uint64_t gid;  /* the guest-assigned id it was bound to (its id), 0: none */
} hent;

struct apigen_session {
    struct apigen_session *next;
    uint8_t key[RT_KEY_LEN];
    uint64_t salt; /* high 32 bits of every id of this session */
    /* Its APIs (one, or members of a family): a frame's API index names one.
     * napis is published after apis[napis - 1] is set (under mu). */
    const apigen_api *apis[RT_FAMILY_MAX];
    _Atomic unsigned napis;
    unsigned refs; /* connections; under g_mu */

    pthread_mutex_t mu; /* handles and bindings */
    uint64_t serial;    /* unique per session of this process (the lookup cache's key) */
    _Atomic uint64_t drops; /* handles forgotten so far (the lookup cache's generation) */
    hent *h;
    size_t nh, caph;
    uint32_t *buckets; /* (tag, real) -> index + 1 */
    size_t nbuckets, nlive;
    void **bindings;
    size_t nbind, capbind;
    /* guest-assigned ids (apigen_handle_claim/bind): open addressing, never
     * removed, so an id is claimed once; gval = index + 1, 0 = not bound */
    uint64_t *gkey;
    uint32_t *gval;
    size_t ngid, capgid;

    pthread_mutex_t run_mu; /* async frames run (RT_CALL_WAIT): waiters sleep on run_cv */
    pthread_cond_t run_cv;
    _Atomic uint64_t nran;     /* one atomic add per async frame, no lock ... */
    _Atomic unsigned nwaiting; /* ... unless someone waits (run_mu then) */
    rt_conn_ran *conns;        /* each live connection's count (under run_mu) */

    pthread_mutex_t send_mu; /* the control connection, for callbacks */
    apigen_conn *ctrl;
    bool ctrl_dead;

    struct rt_mx_sess *mx; /* --metrics: its record (NULL: off) */
    uint64_t guest_pid;    /* the guest's pid as it sees it (0: not told) */
    char pidns[RT_PIDNS_MAX]; /* the guest's pid space ("" not told) */
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static struct apigen_session *g_sessions;
static unsigned g_nsessions;
static _Atomic uint64_t g_serial;

/* Handle lookups without the session's lock: each server thread keeps the
 * ids it resolved lately. An entry holds while its session (serial: never
 * reused, unlike an address) has forgotten no handle since (drops): a
 * handle forgotten by another thread between the check and the use is the
 * same race as with the lock, which is released before the use too. */
#define LOOKUP_CACHE 8
typedef struct lookup_ent {
    uint64_t serial, drops, id;
    unsigned tag;
    void *real;
} lookup_ent;
static _Thread_local RT_TLS_HOST lookup_ent tl_lookup[LOOKUP_CACHE];

static lookup_ent *lookup_slot(uint64_t id)
{
    return &tl_lookup[(id ^ (id >> 7)) & (LOOKUP_CACHE - 1)];
}

bool rt_random_key(uint8_t key[RT_KEY_LEN])
{
    size_t got = 0;
    while (got < RT_KEY_LEN) {
        ssize_t k = getrandom(key + got, RT_KEY_LEN - got, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    if (got == RT_KEY_LEN)
        return true;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t k = read(fd, key, RT_KEY_LEN);
    close(fd);
    return k == RT_KEY_LEN;
}

struct apigen_session *rt_session_create(const apigen_api *api, apigen_conn *ctrl)
{
    return rt_session_create_keyed(api, ctrl, NULL);
}

struct apigen_session *rt_session_create_keyed(const apigen_api *api, apigen_conn *ctrl,
                                               const uint8_t *key)
{
    struct apigen_session *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    if (key) {
        memcpy(s->key, key, RT_KEY_LEN);
    } else if (!rt_random_key(s->key)) {
        free(s);
        return NULL;
    }
    s->salt = rt_key_salt(s->key); /* never 0; the server's ids stay below 2^63 */
    s->serial = atomic_fetch_add(&g_serial, 1) + 1; /* never 0: an empty cache entry matches none */
    s->apis[0] = api;
    atomic_init(&s->napis, 1);
    s->refs = 1;
    s->ctrl = ctrl;
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->send_mu, NULL);
    pthread_mutex_init(&s->run_mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->run_cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_lock(&g_mu);
    s->next = g_sessions;
    g_sessions = s;
    g_nsessions++;
    pthread_mutex_unlock(&g_mu);
    return s;
}

/* No early exit: the time taken does not tell how much of a key matched. */
static bool key_eq(const uint8_t *a, const uint8_t *b)
{
    uint8_t d = 0;
    for (unsigned i = 0; i < RT_KEY_LEN; i++)
        d |= (uint8_t)(a[i] ^ b[i]);
    return d == 0;
}

struct apigen_session *rt_session_join(const apigen_api *api, const uint8_t key[RT_KEY_LEN])
{
    struct apigen_session *found = NULL;
    pthread_mutex_lock(&g_mu);
    for (struct apigen_session *s = g_sessions; s; s = s->next)
        if (key_eq(s->key, key) && s->apis[0] == api)
            found = s;
    if (found)
        found->refs++;
    pthread_mutex_unlock(&g_mu);
    return found;
}

void rt_session_set_mx(struct apigen_session *s, struct rt_mx_sess *m)
{
    s->mx = m;
}

/* under g_mu: rt_sessions_of_space reads them from other sessions' threads */
void rt_session_set_guest(struct apigen_session *s, uint64_t pid, const char *pidns)
{
    pthread_mutex_lock(&g_mu);
    s->guest_pid = pid;
    snprintf(s->pidns, sizeof s->pidns, "%s", pidns ? pidns : "");
    pthread_mutex_unlock(&g_mu);
}

/* set once, before the session's first call: its own calls read it unlocked */
uint64_t rt_session_guest(const struct apigen_session *s, const char **pidns)
{
    if (pidns)
        *pidns = s ? s->pidns : "";
    return s ? s->guest_pid : 0;
}

unsigned rt_sessions_of_space(const char *pidns, uint64_t gpid, const struct apigen_session **ses,
                              uint64_t *gpids, unsigned max)
{
    unsigned n = 0;
    if (!pidns || !pidns[0])
        return 0;
    pthread_mutex_lock(&g_mu);
    for (struct apigen_session *s = g_sessions; s && n < max; s = s->next)
        if (s->guest_pid && strcmp(s->pidns, pidns) == 0 && (!gpid || s->guest_pid == gpid)) {
            ses[n] = s;
            gpids[n++] = s->guest_pid;
        }
    pthread_mutex_unlock(&g_mu);
    return n;
}

struct rt_mx_sess *rt_session_mx(const struct apigen_session *s)
{
    return s ? s->mx : NULL;
}

const apigen_api *rt_session_api(struct apigen_session *s, unsigned idx)
{
    return idx < atomic_load_explicit(&s->napis, memory_order_acquire) ? s->apis[idx] : NULL;
}

uint32_t rt_session_add_apis(struct apigen_session *s, const apigen_api *const *list, unsigned n,
                             char *msg, size_t msglen)
{
    uint32_t st = RT_HELLO_OK;
    pthread_mutex_lock(&s->mu);
    unsigned have = atomic_load(&s->napis);
    for (unsigned i = 0; i < n && st == RT_HELLO_OK; i++) {
        if (i < have && s->apis[i] != list[i]) {
            snprintf(msg, msglen, "API '%s' named as API %u of a session whose API %u is '%s'",
                     list[i]->name, i, i, s->apis[i]->name);
            st = RT_HELLO_API;
        } else if (i > have) {
            snprintf(msg, msglen, "API '%s' named as API %u of a session of %u", list[i]->name,
                     i, have);
            st = RT_HELLO_API;
        } else if (i == have) {
            for (unsigned k = 0; k < have && st == RT_HELLO_OK; k++)
                if (s->apis[k] == list[i]) {
                    snprintf(msg, msglen, "API '%s' named twice", list[i]->name);
                    st = RT_HELLO_API;
                }
            if (st == RT_HELLO_OK) {
                s->apis[have++] = list[i];
                atomic_store_explicit(&s->napis, have, memory_order_release);
                if (apigen_tracing())
                    apigen_trace("server: %s joined the session of %s as its API %u",
                                 list[i]->name, s->apis[0]->name, i);
            }
        }
    }
    pthread_mutex_unlock(&s->mu);
    return st;
}

void rt_session_key(const struct apigen_session *s, uint8_t key[RT_KEY_LEN])
{
    memcpy(key, s->key, RT_KEY_LEN);
}

unsigned rt_session_count(void)
{
    pthread_mutex_lock(&g_mu);
    unsigned n = g_nsessions;
    pthread_mutex_unlock(&g_mu);
    return n;
}

static void session_destroy(struct apigen_session *s)
{
    /* No connection is left, so nothing changes the table now; the lock is
     * not held while destroying because a destroy may fire a callback
     * whose trampoline looks up handle ids. Newest first: children
     * (a buffer of a context) go before their parents. Device memory
     * first: it may belong to a context (SVM). */
    const apigen_api *dapi = s->apis[0]; /* the ranges are the session's: a member frees them */
    for (unsigned i = 0; i < atomic_load(&s->napis) && !dapi->device_destroy; i++)
        if (s->apis[i]->device_destroy)
            dapi = s->apis[i];
    rt_dev_release_session(s, dapi);
    rt_mx_session_close(s->mx);
    for (size_t i = s->nh; i-- > 0;) {
        hent *e = &s->h[i];
        if (e->live && e->owned && e->ht->destroy)
            for (uint32_t k = e->refs ? e->refs : 1; k > 0; k--)
                e->ht->destroy(given(e->ht, e->real));
    }
    for (size_t i = 0; i < s->nbind; i++)
        rt_cb_free_binding(s->bindings[i]);
    free(s->bindings);
    free(s->gkey);
    free(s->gval);
    free(s->h);
    free(s->buckets);
    pthread_mutex_destroy(&s->mu);
    pthread_mutex_destroy(&s->send_mu);
    pthread_mutex_destroy(&s->run_mu);
    pthread_cond_destroy(&s->run_cv);
    free(s);
}

void rt_session_release(struct apigen_session *s, apigen_conn *conn)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->send_mu);
    if (s->ctrl == conn)
        s->ctrl = NULL; /* the connection is about to be closed: no more callbacks on it */
    pthread_mutex_unlock(&s->send_mu);

    bool last = false;
    pthread_mutex_lock(&g_mu);
    if (--s->refs == 0) {
        last = true;
        for (struct apigen_session **pp = &g_sessions; *pp; pp = &(*pp)->next)
            if (*pp == s) {
                *pp = s->next;
                break;
            }
        g_nsessions--;
    }
    pthread_mutex_unlock(&g_mu);
    if (last)
        session_destroy(s);
}

bool apigen_cb_alive(void *bound)
{
    bool alive = false;
    if (!bound)
        return false;
    pthread_mutex_lock(&g_mu);
    for (struct apigen_session *s = g_sessions; s && !alive; s = s->next) {
        pthread_mutex_lock(&s->mu);
        for (size_t i = 0; i < s->nbind && !alive; i++)
            alive = s->bindings[i] == bound;
        pthread_mutex_unlock(&s->mu);
        if (alive) {
            pthread_mutex_lock(&s->send_mu);
            alive = s->ctrl && !s->ctrl_dead;
            pthread_mutex_unlock(&s->send_mu);
        }
    }
    pthread_mutex_unlock(&g_mu);
    return alive;
}

void rt_session_cb_lock(struct apigen_session *s, apigen_conn **ctrl)
{
    pthread_mutex_lock(&s->send_mu);
    *ctrl = s->ctrl_dead ? NULL : s->ctrl;
}

void rt_session_cb_unlock(struct apigen_session *s, bool dead)
{
    if (dead)
        s->ctrl_dead = true;
    pthread_mutex_unlock(&s->send_mu);
}

void rt_session_conn_open(struct apigen_session *s, rt_conn_ran *c, uint64_t tid)
{
    c->tid = tid;
    atomic_init(&c->n, 0);
    pthread_mutex_lock(&s->run_mu);
    c->next = s->conns;
    s->conns = c;
    c->linked = true;
    pthread_mutex_unlock(&s->run_mu);
}

/* The connection ran its last frame: a wait for its thread id is over. */
void rt_session_conn_close(struct apigen_session *s, rt_conn_ran *c)
{
    if (!s || !c->linked)
        return;
    pthread_mutex_lock(&s->run_mu);
    for (rt_conn_ran **pp = &s->conns; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    c->linked = false;
    pthread_cond_broadcast(&s->run_cv);
    pthread_mutex_unlock(&s->run_mu);
}

void rt_session_async_ran(struct apigen_session *s, rt_conn_ran *c)
{
    /* seq_cst: either this sees the waiter, or the waiter (nwaiting before
     * nran) sees this frame counted */
    atomic_fetch_add(&c->n, 1);
    atomic_fetch_add(&s->nran, 1);
    if (atomic_load(&s->nwaiting)) {
        pthread_mutex_lock(&s->run_mu); /* the waiter is in its wait or re-checks */
        pthread_cond_broadcast(&s->run_cv);
        pthread_mutex_unlock(&s->run_mu);
    }
}

/* Whether thread tid's connections ran count async frames (none live: they
 * ended, and run nothing more). Caller holds run_mu. */
static bool thread_ran(const struct apigen_session *s, uint64_t tid, uint64_t count)
{
    for (const rt_conn_ran *c = s->conns; c; c = c->next)
        if (c->tid == tid && atomic_load(&c->n) < count)
            return false;
    return true;
}

static uint64_t pair_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

bool rt_session_wait_async(struct apigen_session *s, uint64_t n, const uint8_t *pairs,
                           size_t npairs)
{
    pthread_mutex_lock(&g_mu);
    unsigned conns = s->refs;
    pthread_mutex_unlock(&g_mu);
    if (conns <= 1) /* no other connection could run them */
        return true;
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += RT_WAIT_MS / 1000;
    bool timed_out = false;
    size_t done = 0; /* pairs before this one are met (counts only grow) */
    pthread_mutex_lock(&s->run_mu);
    atomic_fetch_add(&s->nwaiting, 1);
    for (;;) {
        while (done < npairs &&
               thread_ran(s, pair_u64(pairs + 16 * done), pair_u64(pairs + 16 * done + 8)))
            done++;
        if ((done == npairs && atomic_load(&s->nran) >= n) || timed_out)
            break;
        timed_out = pthread_cond_timedwait(&s->run_cv, &s->run_mu, &until) == ETIMEDOUT;
    }
    atomic_fetch_sub(&s->nwaiting, 1);
    pthread_mutex_unlock(&s->run_mu);
    return done == npairs && atomic_load(&s->nran) >= n;
}

void rt_session_add_binding(struct apigen_session *s, void *b)
{
    pthread_mutex_lock(&s->mu);
    if (s->nbind == s->capbind) {
        size_t nc = s->capbind ? s->capbind * 2 : 16;
        void **p = realloc(s->bindings, nc * sizeof *p);
        if (!p) {
            pthread_mutex_unlock(&s->mu);
            return; /* leaks b rather than freeing it while the library holds it */
        }
        s->bindings = p;
        s->capbind = nc;
    }
    s->bindings[s->nbind++] = b;
    pthread_mutex_unlock(&s->mu);
}

/* ---- handle tables ------------------------------------------------------------ */
static size_t bucket_of(const struct apigen_session *s, unsigned tag, const void *real)
{
    uint64_t x = (uint64_t)(uintptr_t)real ^ ((uint64_t)tag << 48);
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (size_t)(x & (s->nbuckets - 1));
}

static bool is_passthrough(const apigen_handle_type *ht, uint64_t v)
{
    for (unsigned i = 0; i < ht->npassthrough; i++)
        if (ht->passthrough[i] == v)
            return true;
    return false;
}

static bool rehash(struct apigen_session *s)
{
    size_t nb = s->nbuckets ? s->nbuckets * 2 : 64;
    uint32_t *b = calloc(nb, sizeof *b);
    if (!b)
        return false;
    free(s->buckets);
    s->buckets = b;
    s->nbuckets = nb;
    for (size_t i = 0; i < s->nh; i++) {
        hent *e = &s->h[i];
        if (!e->live)
            continue;
        size_t k = bucket_of(s, e->ht->tag, e->real);
        e->next = b[k];
        b[k] = (uint32_t)(i + 1);
    }
    return true;
}

/* Index of the live entry for (tag, real), or SIZE_MAX. Caller holds mu. */
static size_t find_real(const struct apigen_session *s, unsigned tag, const void *real)
{
    if (!s->nbuckets)
        return SIZE_MAX;
    for (uint32_t i = s->buckets[bucket_of(s, tag, real)]; i; i = s->h[i - 1].next) {
        const hent *e = &s->h[i - 1];
        if (e->real == real && e->ht->tag == tag)
            return i - 1;
    }
    return SIZE_MAX;
}

/* The id the client knows entry i by. Caller holds mu. */
static uint64_t id_of(const struct apigen_session *s, size_t i)
{
    return s->h[i].gid ? s->h[i].gid : (s->salt << 32) | (FIRST_ID + i);
}

/* Position of guest id g in the gid table, or SIZE_MAX. Caller holds mu. */
static size_t gid_find(const struct apigen_session *s, uint64_t g)
{
    if (!s->capgid)
        return SIZE_MAX;
    for (size_t k = (size_t)((g * 0x9e3779b97f4a7c15ull) >> 40) & (s->capgid - 1);; k = (k + 1) & (s->capgid - 1)) {
        if (s->gkey[k] == g)
            return k;
        if (!s->gkey[k])
            return SIZE_MAX;
    }
}

static bool gid_insert(struct apigen_session *s, uint64_t g)
{
    if ((s->ngid + 1) * 2 > s->capgid) {
        size_t nc = s->capgid ? s->capgid * 2 : 64;
        uint64_t *nk = calloc(nc, sizeof *nk);
        uint32_t *nv = calloc(nc, sizeof *nv);
        if (!nk || !nv) {
            free(nk);
            free(nv);
            return false;
        }
        for (size_t i = 0; i < s->capgid; i++) {
            if (!s->gkey[i])
                continue;
            size_t k = (size_t)((s->gkey[i] * 0x9e3779b97f4a7c15ull) >> 40) & (nc - 1);
            while (nk[k])
                k = (k + 1) & (nc - 1);
            nk[k] = s->gkey[i];
            nv[k] = s->gval[i];
        }
        free(s->gkey);
        free(s->gval);
        s->gkey = nk;
        s->gval = nv;
        s->capgid = nc;
    }
    size_t k = (size_t)((g * 0x9e3779b97f4a7c15ull) >> 40) & (s->capgid - 1);
    while (s->gkey[k])
        k = (k + 1) & (s->capgid - 1);
    s->gkey[k] = g;
    s->gval[k] = 0;
    s->ngid++;
    return true;
}

/* Slot of real (found or new), SIZE_MAX when the table cannot grow. A new
 * entry gets gid as its id. Caller holds mu. */
static size_t put_slot(struct apigen_session *s, const apigen_handle_type *ht, void *real,
                       bool owned, uint64_t gid)
{
    size_t i = find_real(s, ht->tag, real);
    if (i != SIZE_MAX) {
        s->h[i].owned |= owned;
        if (owned)
            s->h[i].refs++;
        return i;
    }
    if (s->nh >= UINT32_MAX - FIRST_ID - 1)
        return SIZE_MAX; /* id space of this session exhausted */
    if ((s->nlive + 1) * 2 > s->nbuckets && !rehash(s))
        return SIZE_MAX;
    if (s->nh == s->caph) {
        size_t nc = s->caph ? s->caph * 2 : 64;
        hent *p = realloc(s->h, nc * sizeof *p);
        if (!p)
            return SIZE_MAX;
        s->h = p;
        s->caph = nc;
    }
    i = s->nh++;
    size_t k = bucket_of(s, ht->tag, real);
    s->h[i] = (hent){ht, real, s->buckets[k], owned ? 1u : 0u, true, owned, gid};
    s->buckets[k] = (uint32_t)(i + 1);
    s->nlive++;
    return i;
}

static uint64_t put(struct apigen_session *s, const apigen_handle_type *ht, void *real, bool owned)
{
    uint64_t v = (uint64_t)(uintptr_t)real;
    if (is_passthrough(ht, v))
        return v;
    real = kept(ht, real);
    if (!real)
        return 0;
    pthread_mutex_lock(&s->mu);
    size_t i = put_slot(s, ht, real, owned, 0);
    uint64_t id = i == SIZE_MAX ? 0 : id_of(s, i);
    pthread_mutex_unlock(&s->mu);
    return id;
}

uint64_t apigen_handle_put(apigen_call_ctx *cx, const apigen_handle_type *ht, void *real)
{
    if (!ht) {
        apigen_reject(cx, APIGEN_BAD_ARGS, "a handle of a type this build does not know");
        return 0;
    }
    uint64_t id = put(cx->session, ht, real, false);
    if (!id && kept(ht, real))
        apigen_reject(cx, APIGEN_NO_MEMORY, ht->name);
    return id;
}

uint64_t apigen_handle_put_owned(apigen_call_ctx *cx, const apigen_handle_type *ht, void *real)
{
    uint64_t id = put(cx->session, ht, real, true);
    if (!id && kept(ht, real))
        apigen_reject(cx, APIGEN_NO_MEMORY, ht->name);
    return id;
}

/* Index of the slot id names in s, or SIZE_MAX. Caller holds mu. */
static size_t slot_of(const struct apigen_session *s, uint64_t id)
{
    if (id & RT_GID_BIT) {
        size_t k = gid_find(s, id);
        return k == SIZE_MAX || !s->gval[k] ? SIZE_MAX : (size_t)s->gval[k] - 1;
    }
    if ((id >> 32) != s->salt || ID_LOW(id) < FIRST_ID || ID_LOW(id) - FIRST_ID >= s->nh)
        return SIZE_MAX;
    return (size_t)(ID_LOW(id) - FIRST_ID);
}

/* A narrow handle type's id as the guest kept it (its low 32 bits): the
 * session's id again. */
static uint64_t widen(const struct apigen_session *s, const apigen_handle_type *ht, uint64_t id)
{
    return (ht->flags & APIGEN_HT_NARROW) && id && !(id >> 32) ? (s->salt << 32) | id : id;
}

static bool lookup_one(struct apigen_session *s, const apigen_handle_type *ht, uint64_t id,
                       void **real);

bool apigen_handle_lookup(struct apigen_session *s, const apigen_handle_type *ht, uint64_t id,
                          void **real)
{
    if (!ht) /* a type this header version lacks (hand-written code names types by name) */
        return false;
    if (s)
        id = widen(s, ht, id); /* the `also` types take it as this type's id */
    if (lookup_one(s, ht, id, real))
        return true;
    for (unsigned k = 0; k < ht->nalso; k++) /* ids of the types that may stand for this one */
        if (ht->also[k] != ht && !is_passthrough(ht->also[k], id) &&
            lookup_one(s, ht->also[k], id, real))
            return true;
    return false;
}

static bool lookup_one(struct apigen_session *s, const apigen_handle_type *ht, uint64_t id,
                       void **real)
{
    *real = NULL;
    if (!s)
        return false;
    if (is_passthrough(ht, id)) {
        *real = (void *)(uintptr_t)id;
        return true;
    }
    lookup_ent *c = lookup_slot(id);
    if (c->id == id && c->serial == s->serial && c->tag == ht->tag &&
        c->drops == atomic_load_explicit(&s->drops, memory_order_acquire)) {
        *real = given(ht, c->real);
        return true;
    }
    bool ok = false;
    pthread_mutex_lock(&s->mu);
    size_t i = slot_of(s, id);
    if (i != SIZE_MAX) {
        const hent *e = &s->h[i];
        if (e->live && e->ht->tag == ht->tag) {
            *real = given(ht, e->real);
            ok = true;
            *c = (lookup_ent){s->serial, atomic_load_explicit(&s->drops, memory_order_relaxed), id,
                              ht->tag, e->real};
        }
    }
    pthread_mutex_unlock(&s->mu);
    return ok;
}

bool apigen_handle_get(apigen_call_ctx *cx, const apigen_handle_type *ht, uint64_t id, void **real)
{
    if (apigen_handle_lookup(cx->session, ht, id, real))
        return true;
    if (ht->flags & APIGEN_HT_UNKNOWN_AS_NULL) {
        *real = NULL; /* the real library reports its own invalid-handle error */
        return true;
    }
    apigen_reject(cx, APIGEN_BAD_HANDLE, ht->name);
    return false;
}

void apigen_handle_retain(apigen_call_ctx *cx, const apigen_handle_type *ht, uint64_t id)
{
    struct apigen_session *s = cx->session;
    if (is_passthrough(ht, id))
        return;
    id = widen(s, ht, id);
    pthread_mutex_lock(&s->mu);
    size_t i = slot_of(s, id);
    if (i != SIZE_MAX && s->h[i].live && s->h[i].ht->tag == ht->tag) {
        s->h[i].refs++;
        s->h[i].owned = true;
    }
    pthread_mutex_unlock(&s->mu);
}

void apigen_handle_drop(apigen_call_ctx *cx, const apigen_handle_type *ht, uint64_t id)
{
    struct apigen_session *s = cx->session;
    if (is_passthrough(ht, id))
        return;
    id = widen(s, ht, id);
    pthread_mutex_lock(&s->mu);
    size_t i = slot_of(s, id);
    if (i != SIZE_MAX) {
        hent *e = &s->h[i];
        if (e->live && e->ht->tag == ht->tag && e->refs > 1) {
            e->refs--; /* the client still holds a reference */
        } else if (e->live && e->ht->tag == ht->tag && e->refs == 0 && !e->owned) {
            /* received, never created or retained: stays known */
        } else if (e->live && e->ht->tag == ht->tag) {
            /* unlink from its reverse chain; the slot stays so the id is never reused */
            uint32_t *pp = &s->buckets[bucket_of(s, e->ht->tag, e->real)];
            while (*pp && *pp != i + 1)
                pp = &s->h[*pp - 1].next;
            if (*pp)
                *pp = e->next;
            e->live = false;
            e->real = NULL;
            s->nlive--;
            atomic_fetch_add_explicit(&s->drops, 1, memory_order_release); /* lookup caches */
        }
    }
    pthread_mutex_unlock(&s->mu);
}

uint64_t apigen_session_handle_id(struct apigen_session *s, const apigen_handle_type *ht, void *real)
{
    uint64_t v = (uint64_t)(uintptr_t)real;
    if (!s)
        return 0;
    if (is_passthrough(ht, v))
        return v;
    pthread_mutex_lock(&s->mu);
    size_t i = find_real(s, ht->tag, kept(ht, real));
    uint64_t id = i == SIZE_MAX ? 0 : id_of(s, i);
    pthread_mutex_unlock(&s->mu);
    return id;
}

/* ---- guest-assigned ids ---------------------------------------------------------- */
bool apigen_handle_claim(apigen_call_ctx *cx, uint64_t id)
{
    struct apigen_session *s = cx->session;
    bool ok = false;
    const char *why = "guest id: not of this session";
    pthread_mutex_lock(&s->mu);
    if ((id & RT_GID_BIT) && ((id >> 32) & 0x7fffffffu) == s->salt && (id & 0xffffffffu)) {
        why = "guest id: used before";
        if (gid_find(s, id) == SIZE_MAX) {
            why = "guest id: out of memory";
            ok = gid_insert(s, id);
        }
    }
    pthread_mutex_unlock(&s->mu);
    if (ok && rt_rec_active)
        rt_rec_guest_id(s, id); /* guest-assigned: replay may rename it */
    if (!ok)
        apigen_reject(cx, strcmp(why, "guest id: out of memory") ? APIGEN_BAD_HANDLE
                                                                  : APIGEN_NO_MEMORY, why);
    return ok;
}

bool apigen_handle_bind(apigen_call_ctx *cx, const apigen_handle_type *ht, uint64_t id,
                        void *real, bool owned)
{
    struct apigen_session *s = cx->session;
    if (!real || is_passthrough(ht, (uint64_t)(uintptr_t)real))
        return true; /* nothing to name: the id stays unbound */
    bool ok = false;
    pthread_mutex_lock(&s->mu);
    size_t k = gid_find(s, id);
    if (k != SIZE_MAX && !s->gval[k]) {
        size_t i = put_slot(s, ht, kept(ht, real), owned, id);
        if (i != SIZE_MAX && i < UINT32_MAX) {
            s->gval[k] = (uint32_t)(i + 1);
            ok = true;
        }
    }
    pthread_mutex_unlock(&s->mu);
    if (!ok) {
        if (owned && ht->destroy)
            ht->destroy(real); /* the client can never name it */
        apigen_reject(cx, APIGEN_NO_MEMORY, ht->name);
    }
    return ok;
}
