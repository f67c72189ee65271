/* Guest call path: per-thread connections, lazy connect from APIGEN_SERVER,
 * the session handshake, the async queue, replies, callbacks, and the "lost"
 * state. Nothing here may abort or exit the application: every failure
 * becomes APIGEN_LOST and one log line. */
#define _GNU_SOURCE
#include "rt_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/futex.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define QUEUE_MAX_BYTES (256u << 10) /* flush async calls at this size ... */
#define QUEUE_MAX_CALLS 1024u        /* ... or this many */
#define GIDS_MAX 64u                 /* own unsent guest ids remembered (more: stray flushes) */
#define KEEP_BUF_MAX (1u << 20)      /* buffers above this are freed once no call used most */
                                     /* of them for APIGEN_KEEP_MS (rt_keep_warm) */
#define DEFAULT_CONNECT_MS 5000
#define REPLY_MAX_PAYLOAD UINT32_MAX

/* A thread state's lock (gthr.mu): its owner takes it on every call, other
 * threads rarely (flush_others, the flusher, exit). A futex word instead of
 * a pthread mutex keeps the owner's path to one atomic instruction each
 * way. 0: free, 1: held, 2: held and someone may be waiting. */
typedef _Atomic uint32_t tlock;

static void tlock_wait(tlock *l, uint32_t c)
{
    if (c != 2)
        c = atomic_exchange_explicit(l, 2, memory_order_acquire);
    while (c != 0) {
        syscall(SYS_futex, (uint32_t *)l, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
        c = atomic_exchange_explicit(l, 2, memory_order_acquire);
    }
}
static inline void tlock_take(tlock *l)
{
    uint32_t c = 0;
    if (!atomic_compare_exchange_strong_explicit(l, &c, 1, memory_order_acquire,
                                                 memory_order_relaxed))
        tlock_wait(l, c);
}
static inline bool tlock_try(tlock *l)
{
    uint32_t c = 0;
    return atomic_compare_exchange_strong_explicit(l, &c, 1, memory_order_acquire,
                                                   memory_order_relaxed);
}
static inline void tlock_give(tlock *l)
{
    if (atomic_exchange_explicit(l, 0, memory_order_release) == 2)
        syscall(SYS_futex, (uint32_t *)l, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

typedef struct gcb {
    const apigen_api *api; /* whose callback (a family shares the table) */
    uint64_t id;
    unsigned type;
    void *fn, *user;
    bool once;
} gcb;

/* Process-wide state of one API, or of the APIs of one family (api.family),
 * on one server (APIGEN_SERVER=url1,url2,...: one per URL, index = its
 * position; route.c picks the server of a call). */
typedef struct gapi {
    struct gapi *next;
    const apigen_api *api; /* the first seen: names the family's state */
    /* The session's APIs, in the order the server knows them (a frame's API
     * index): apis[0] opened it, a later one joined it (join_member). napis
     * is published after apis[napis - 1] is set and the server accepted it. */
    const apigen_api *apis[RT_FAMILY_MAX];
    _Atomic unsigned napis;
    const apigen_api *refused[RT_FAMILY_MAX]; /* members the server refused (under mu) */
    unsigned nrefused;
    unsigned index;     /* which server */
    struct gapi *home;  /* server 0's: it keeps the API's callback table */
    /* apigen_set_session_hook: 0 not run on this session, 1 running (on
     * hook_thread), 2 done */
    atomic_int hook_state;
    pthread_t hook_thread;
    pthread_mutex_t mu; /* connect, callback table */
    unsigned gen;       /* bumped in a fork child: thread states of the parent are stale */
    bool connected;
    atomic_bool lost;
    char url[512];
    int connect_ms, reply_ms;
    apigen_conn *ctrl;
    uint8_t key[RT_KEY_LEN];
    gcb *cbs;
    size_t ncbs, capcbs;
    uint64_t next_cb;
    bool reader_started;
    uint64_t salt;               /* the session's, from its key (rt_key_salt) */
    atomic_uint_fast64_t next_gid; /* apigen_guest_id */
    /* Ordering across threads: every async frame a thread queues is counted
     * in nasync; a sync call that may not have seen all of them (another
     * thread queued some since its last sync) sends every thread's queue and
     * asks the server to run it once the session has run that many
     * (RT_CALL_WAIT), so calls that synchronize see what other threads
     * queued before. thr_mu guards the list of thread states (thrs). */
    atomic_uint_fast64_t nasync;
    pthread_mutex_t thr_mu;
    struct gthr *thrs;
    /* The wait frame names, per other thread, how many async frames its
     * connection must have run (a session-wide count let frames that a third
     * thread sent later stand in for them). Threads gone with frames perhaps
     * not run yet stay named (gone, under thr_mu) until a reply to a wait
     * frame that named them came back (gone_seq numbers the entries). */
    struct gone_thr {
        uint64_t tid, count, seq;
    } *gone;
    size_t ngone, capgone;
    uint64_t gone_seq;
    /* Guest ids in queues not sent yet (the sum of the threads' ngids): an
     * async call that may name one of another thread takes the cross-thread
     * path too (foreign_gid). */
    atomic_uint_fast64_t gid_unsent;
    /* Timer flush (APIGEN_FLUSH_US, default 200, 0 = off): a flusher
     * thread sends each thread's queue that held frames over a whole tick
     * and was not sent meanwhile (gthr.nsent); started on the first async
     * call (flusher_on: decided). */
    int flush_us;
    atomic_bool flusher_on;
    /* Eager sends (APIGEN_EAGER_US; default the transport's: shm 20, sockets
     * 0 = off): a queued async call leaves at once when its thread sent
     * nothing for that long, so a server that waits gets work while the
     * program is busy elsewhere; calls coming faster still leave together,
     * at most one send per eager_ns. Set with flush_us (start_flusher). */
    int64_t eager_ns;
    /* spec `cache:`: this session's kept answers (created with the session,
     * under mu; a fork child's session starts without the parent's) */
    rt_cache *_Atomic cache;
    /* spec `cache.group`: the groups of kept answers this session has seen,
     * each with an epoch that apigen_cache_forget moves on (names added
     * once, under g_cgroup_mu; read without it up to ncgroups) */
    struct {
        const char *name;
        atomic_uint_fast64_t epoch;
    } cgroups[RT_CACHE_GROUPS];
    atomic_uint ncgroups;
    /* api.thread_state: bumped by apigen_tstate_forget_all; a thread's value
     * holds only while its epoch is the current one */
    atomic_uint_fast64_t state_epoch;
    bool no_answers; /* APIGEN_CACHE=0: neither kept answers nor thread state */
    /* APIGEN_LANES...: each thread's connection may open this many more for
     * its large transfers (lanes.c; read at connect, k 0: off) */
    rt_lane_cfg lanes;
    atomic_bool lanes_said; /* the one log line of a fallback to one connection */
    rt_settle settle; /* the work this process queued, what is known complete (settle.c) */
} gapi;

/* Per thread, per API. */
typedef struct gthr {
    struct gthr *next;
    struct gthr *all_next, *all_prev; /* g->thrs, under g->thr_mu */
    /* mu guards q and the connection's sending side: held by the owner while
     * it builds a frame and sends, by another thread that sends this queue
     * (flush_all), never while waiting for a reply; one at a time */
    tlock mu;
    uint64_t upto; /* g->nasync when every counted frame was this thread's own */
    bool locked;   /* the owner holds mu (only the owner reads or writes this) */
    bool hold;     /* a frame waits in q for a wait frame: flush_others leaves q (under mu) */
    uint64_t nasent; /* async frames sent on conn (under mu) ... */
    atomic_uint_fast64_t nran; /* ... of which a reply on conn showed all run */
    uint64_t nsent;               /* queue sends (under mu) ... */
    uint64_t sent_ns;             /* when q was last sent (under mu; g->eager_ns only) */
    uint64_t seen_sent;           /* ... as the flusher saw them last tick, */
    bool seen_full;               /* with frames queued (flusher only, under mu) */
    uint32_t ngids;              /* guest ids this thread named since q was last sent ... */
    uint32_t gids[GIDS_MAX];     /* ... (their n; the first GIDS_MAX), under mu */
    /* queued calls' errors that no call has reported yet (the sync call
     * that got one could not return it), one per API, in its error values:
     * the API's next call returns it */
    struct {
        const apigen_api *api;
        int64_t err;
    } pend[RT_DEFER_APIS];
    unsigned npend;
    gapi *g;
    unsigned gen;
    apigen_conn *conn;
    /* lanes being opened ahead of the first large copy (lanes_ahead): their
     * connections, made on a thread of their own; the first flush that
     * needs them, or finds them ready, adopts them (under mu) */
    struct lanes_ahead *ahead;
    apigen_wr q; /* queued async frames, then the frame being built */
    size_t frame_off;
    bool in_frame;
    uint32_t nq, req;
    uint64_t tid;
    uint8_t *rbuf;
    size_t rcap;
    size_t last_sent, last_reply; /* bytes of the last flush and the last reply */
    /* when tracing: bytes sent (atomic: another thread may flush this
     * queue) and received since this thread's last "apigen wire" line */
    uint64_t tr_up, tr_down;
    rt_warm q_warm, r_warm;       /* large queue / reply buffers stay while in use */
    rt_pull pull;                 /* the reply's bulk, while it is in transit */
    /* apigen_call_sync_cached -> apigen_call_cache_keep: the request of the
     * call in flight (call id, payload) and where its reply lies */
    uint8_t *ckey;
    size_t ckey_len, ckey_cap;
    uint32_t ckey_call;
    uint32_t ckey_group;  /* its spec `cache.group` (index + 1; 0: none) ... */
    uint64_t ckey_epoch;  /* ... and the group's epoch when it was sent */
    /* per API of the session (its index): calls queued since a sync call of
     * that API came back (their errors wait for its next one), and memoized
     * answers given in the guest meanwhile (sync_cached) */
    uint32_t unasked[RT_FAMILY_MAX], memo_given[RT_FAMILY_MAX];
    bool ckey_memo;       /* a memoized query's key (spec `cache: {contents:}`) ... */
    uint64_t ckey_taint;  /* ... made while the guest's contents were this good */
    bool ckey_ok;
    const uint8_t *crep;
    size_t crep_len, crep_off;
    /* api.thread_state: this thread's values on this server, per API of
     * the family that keeps any (the first RT_TSTATE_APIS to; a further
     * one keeps none). The APIs share this connection, and a call of one
     * may change what another keeps (one API's device selection changes
     * another's current context): api.thread_state_effects says which
     * calls do (tstate_other_call, apigen_tstate_forget_others). */
    struct tstate {
        const apigen_api *api; /* NULL: free, and so is every later one */
        uint64_t val[APIGEN_TSTATE_MAX], epoch[APIGEN_TSTATE_MAX];
        uint32_t known; /* bit per slot */
    } ts[RT_TSTATE_APIS];
    uint64_t epoch_at_send; /* g->state_epoch when the last sync call left */
    uint8_t skey[RT_KEY_LEN]; /* the session's key, for lane handshakes */
} gthr;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static gapi *g_apis;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static pthread_key_t g_key;
static _Thread_local gthr *tl_head;
static atomic_uint_fast64_t g_next_tid = 1;

static const char *call_name(const apigen_api *api, uint32_t id)
{
    if (id < api->ncalls && api->call_names && api->call_names[id])
        return api->call_names[id];
    return id == RT_CALL_ARENA ? "apigenArenaSegment" : "call";
}

/* The one log line of a lost connection; later failures stay silent. */
static void mark_lost(gapi *g, const char *fmt, ...) APIGEN_PRINTF(2, 3);
static void mark_lost(gapi *g, const char *fmt, ...)
{
    if (atomic_exchange(&g->lost, true))
        return;
    char why[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    /* a family's state: every API of it is cut off */
    char n[160];
    if (g->api->family)
        snprintf(n, sizeof n, "family %s", g->api->family);
    else
        snprintf(n, sizeof n, "%s", g->api->name);
    if (rt_servers(g->api) > 1)
        apigen_log("%s: lost connection to server %u (%s): %s; every further %s call routed "
                   "there fails, the other servers still serve", n, g->index,
                   g->url[0] ? g->url : "(no server)", why, n);
    else
        apigen_log("%s: lost connection to %s: %s; every further %s call fails", n,
                   g->url[0] ? g->url : "(no server)", why, n);
}

/* The thread is gone: nobody else sends its queue from now on, and the
 * async frames it sent and still sends (nq: free_thr) are named by other
 * threads' wait frames until one of them got its reply: its connection may
 * still run them. */
static void retire_thr(gthr *t)
{
    gapi *g = t->g;
    pthread_mutex_lock(&g->thr_mu);
    if (t->all_prev || g->thrs == t) {
        if (t->all_prev)
            t->all_prev->all_next = t->all_next;
        else
            g->thrs = t->all_next;
        if (t->all_next)
            t->all_next->all_prev = t->all_prev;
    }
    t->all_next = t->all_prev = NULL;
    /* a flush of another thread may be sending q (a fork child's stale
     * state: its lock may have stayed taken, and it names nothing here) */
    bool take = t->gen == g->gen && !t->locked;
    if (take)
        tlock_take(&t->mu);
    uint64_t count = t->nasent + t->nq;
    if (take)
        tlock_give(&t->mu);
    if (t->gen == g->gen && t->conn && count > atomic_load(&t->nran)) {
        if (g->ngone == g->capgone) {
            size_t nc = g->capgone ? g->capgone * 2 : 8;
            struct gone_thr *p = realloc(g->gone, nc * sizeof *p);
            if (p) {
                g->gone = p;
                g->capgone = nc;
            }
        }
        if (g->ngone < g->capgone) /* else (no memory) later waits may miss its frames */
            g->gone[g->ngone++] = (struct gone_thr){t->tid, count, ++g->gone_seq};
    }
    pthread_mutex_unlock(&g->thr_mu);
}

/* q was sent (or dropped): its guest ids are no longer unsent. Under t->mu. */
static void gids_sent(gthr *t)
{
    if (t->ngids) {
        atomic_fetch_sub(&t->g->gid_unsent, t->ngids);
        t->ngids = 0;
    }
}

/* Queued calls' errors a sync call got but could not return (it returned a
 * handle, or hand-written code held it) and no later call of their API
 * returned: said once, as the thread or the process ends, never dropped. */
static void pend_unreported(gthr *t, const char *when)
{
    for (unsigned i = 0; i < t->npend; i++)
        apigen_log("%s: a queued call failed with %lld and no later %s call of this thread "
                   "returned the error (%s)", t->pend[i].api->name, (long long)t->pend[i].err,
                   t->pend[i].api->name, when);
    t->npend = 0;
}

static void lanes_ahead_drop(gthr *t);

static void free_thr(gthr *t, bool flush)
{
    char err[256];
    if (flush)
        pend_unreported(t, "thread exit");
    if (flush)
        retire_thr(t); /* nobody else sends this queue from now on */
    if (flush && t->conn && t->in_frame)
        rt_wr_truncate(&t->q, t->frame_off);
    if (flush && t->conn && t->nq && t->q.len && !atomic_load(&t->g->lost) && t->gen == t->g->gen)
        if (!rt_wr_send(t->conn, &t->q, t->g->connect_ms, err, sizeof err))
            apigen_log("%s: queued calls lost at thread exit: %s", t->g->api->name, err);
    if (t->gen == t->g->gen)
        gids_sent(t);
    lanes_ahead_drop(t);
    rt_lanes_free(t->conn);
    apigen_tp_close(t->conn);
    apigen_wr_free(&t->q);
    free(t->rbuf);
    free(t->ckey);
    free(t);
}

static void thread_exit(void *head)
{
    for (gthr *t = head, *n; t; t = n) {
        n = t->next;
        free_thr(t, true);
    }
    tl_head = NULL;
}

/* fork(): the child must not share the parent's sockets or session. Hold
 * every lock across fork so the child gets them in a known state. */
static void fork_prepare(void)
{
    pthread_mutex_lock(&g_mu);
    for (gapi *g = g_apis; g; g = g->next) {
        pthread_mutex_lock(&g->mu);
        pthread_mutex_lock(&g->thr_mu);
    }
}
static void fork_parent(void)
{
    for (gapi *g = g_apis; g; g = g->next) {
        pthread_mutex_unlock(&g->thr_mu);
        pthread_mutex_unlock(&g->mu);
    }
    pthread_mutex_unlock(&g_mu);
}
static void fork_child(void)
{
    for (gapi *g = g_apis; g; g = g->next) {
        g->gen++;
        g->connected = false;
        atomic_store(&g->lost, false);
        apigen_tp_close(g->ctrl); /* close only: the parent keeps using its socket */
        g->ctrl = NULL;
        g->ncbs = 0;
        g->reader_started = false;
        g->thrs = NULL; /* the parent's threads: not ours (stale states are freed by get_thr) */
        g->ngone = 0;
        atomic_store(&g->nasync, 0);
        atomic_store(&g->next_gid, 0);
        atomic_store(&g->gid_unsent, 0);
        atomic_store(&g->flusher_on, false); /* the parent's flusher is not here */
        atomic_store(&g->hook_state, 0);
        /* the parent's session's answers: the child opens its own session.
         * Left allocated, not freed: another parent thread may have held
         * its lock at fork(). */
        atomic_store(&g->cache, NULL);
        rt_settle_init(&g->settle); /* the child's session has queued nothing */
        pthread_mutex_unlock(&g->thr_mu);
        pthread_mutex_unlock(&g->mu);
    }
    rt_route_forget_sessions();
    pthread_mutex_unlock(&g_mu);
}

static void once_init(void)
{
    (void)pthread_key_create(&g_key, thread_exit);
    (void)pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static gapi *get_gapi(const apigen_api *api, unsigned index)
{
    gapi *home = index ? get_gapi(api, 0) : NULL;
    if (index && !home)
        return NULL;
    pthread_once(&g_once, once_init);
    pthread_mutex_lock(&g_mu);
    gapi *g = g_apis;
    while (g && (!rt_same_family(g->api, api) || g->index != index))
        g = g->next;
    if (!g && (g = calloc(1, sizeof *g))) {
        g->api = api;
        g->apis[0] = api;
        atomic_init(&g->napis, 1);
        g->index = index;
        g->home = home ? home : g;
        atomic_init(&g->hook_state, 0);
        pthread_mutex_init(&g->mu, NULL);
        pthread_mutex_init(&g->thr_mu, NULL);
        atomic_init(&g->lost, false);
        atomic_init(&g->next_gid, 0);
        atomic_init(&g->nasync, 0);
        atomic_init(&g->cache, NULL);
        atomic_init(&g->state_epoch, 1);
        atomic_init(&g->gid_unsent, 0);
        rt_settle_init(&g->settle);
        g->next = g_apis;
        g_apis = g;
    }
    pthread_mutex_unlock(&g_mu);
    return g;
}

/* A non-negative int from the environment; unit names it in the message. */
static int env_int(const char *name, int dflt, const char *unit)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return dflt;
    char *end;
    long n = strtol(v, &end, 10);
    if (*end || n < 0 || n > 0x7fffffff) {
        apigen_log("%s=%s is not a number of %s; using %d", name, v, unit, dflt);
        return dflt;
    }
    return (int)n;
}

/* The token to present: APIGEN_TOKEN, else the first line of
 * APIGEN_TOKEN_FILE (trailing blanks dropped), else none. false + why when
 * the file cannot be read. */
static bool guest_token(char *buf, size_t cap, char *why, size_t whylen)
{
    buf[0] = 0;
    const char *t = getenv("APIGEN_TOKEN");
    if (t && *t) {
        if (strlen(t) >= cap) {
            snprintf(why, whylen, "APIGEN_TOKEN is longer than %zu bytes", cap - 1);
            return false;
        }
        snprintf(buf, cap, "%s", t);
        return true;
    }
    const char *path = getenv("APIGEN_TOKEN_FILE");
    if (!path || !*path)
        return true;
    FILE *f = fopen(path, "re");
    if (!f) {
        snprintf(why, whylen, "APIGEN_TOKEN_FILE=%s: %s", path, strerror(errno));
        return false;
    }
    size_t n = fread(buf, 1, cap - 1, f);
    fclose(f);
    buf[n] = 0;
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' ' || buf[n - 1] == '\t'))
        buf[--n] = 0;
    if (n == 0 || strlen(buf) != n) {
        snprintf(why, whylen, "APIGEN_TOKEN_FILE=%s: empty or not text", path);
        return false;
    }
    return true;
}

/* A handshake's lanes part (rt_internal.h, RT_HELLO_TAG_LANES/LANE). */
typedef struct hello_lanes {
    bool ask;                /* a thread's connection asks whether the server has lanes */
    uint32_t granted;        /* out: the server's lanes version (0: none) */
    uint8_t key[RT_KEY_LEN]; /* out: this connection's lane key; in, for a lane */
    bool lane;               /* this connection is lane `index` of `count` */
    unsigned index, count;
    uint32_t piece;
    uint64_t min;
} hello_lanes;

/* Which pid space this process's pid belongs to, for the handshake
 * (RT_HELLO_TAG_PIDNS): the boot's id and the device and inode of
 * /proc/self/ns/pid, which name one pid namespace of one boot of one
 * machine. The server shows a guest the GPU processes of those guests
 * only whose pids are of the same space (procs.c); "" (not sent) when
 * /proc does not tell, and then a guest sees its own process only.
 * APIGEN_PID_SPACE names it instead (guests that know they share pids in
 * a way /proc does not show; tests). */
static void pid_space(char *buf, size_t len)
{
    char boot[64] = "";
    struct stat st;
    buf[0] = 0;
    const char *given = getenv("APIGEN_PID_SPACE");
    if (given && *given) {
        int n = snprintf(buf, len, "%s", given);
        if (n < 0 || (size_t)n >= len)
            buf[0] = 0;
        return;
    }
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
    if (!f)
        return;
    bool ok = fgets(boot, sizeof boot, f) != NULL;
    fclose(f);
    boot[strcspn(boot, "\n")] = 0;
    if (!ok || !boot[0] || stat("/proc/self/ns/pid", &st) != 0)
        return;
    int n = snprintf(buf, len, "%s:%llx:%llu", boot, (unsigned long long)st.st_dev,
                     (unsigned long long)st.st_ino);
    if (n < 0 || (size_t)n >= len)
        buf[0] = 0;
}

/* Sends the handshake on conn, naming the session's APIs list[0..n) (the
 * server checks each; a join that names one more adds it to the session),
 * and reads the answer; false + why, and the server's status in *st (0 when
 * none came). lanes: NULL, or what it says about lanes. */
static bool hello(gapi *g, apigen_conn *conn, bool join, uint8_t key[RT_KEY_LEN], uint64_t tid,
                  const apigen_api *const *list, unsigned n, uint32_t *stp, char *why,
                  size_t whylen, hello_lanes *lanes)
{
    *stp = 0;
    apigen_wr w;
    size_t off;
    char token[RT_TOKEN_MAX];
    if (!guest_token(token, sizeof token, why, whylen))
        return false;
    /* a new session over a local socket offers the shared-memory arena */
    uint64_t asize = 0;
    int afd = !join && apigen_tp_can_pass_fds(conn) && rt_servers(g->api) == 1
                  ? rt_arena_guest_fd(&asize) /* one server: several would each need theirs */
                  : -1;
    /* who we are, for the server's metrics and logs (rt_internal.h: hello
     * version 3): the pid and process name as this process sees them */
    uint8_t pid[8];
    uint64_t p = (uint64_t)getpid();
    for (int i = 0; i < 8; i++)
        pid[i] = (uint8_t)(p >> (8 * i));
    const char *comm = program_invocation_short_name ? program_invocation_short_name : "";
    char pidns[RT_PIDNS_MAX];
    pid_space(pidns, sizeof pidns);
    apigen_wr_init(&w);
    const apigen_api *a0 = list[0];
    bool ok = rt_wr_begin_frame(&w, &off) && apigen_put_u32(&w, RT_HELLO_V3) &&
              apigen_put_str(&w, a0->name) && apigen_put_u64(&w, a0->fingerprint) &&
              apigen_put_u8(&w, join) && apigen_put_raw(&w, key, RT_KEY_LEN) &&
              apigen_put_str(&w, token[0] ? token : NULL) &&
              apigen_put_u64(&w, a0->api_version) && apigen_put_u64(&w, afd < 0 ? 0 : asize) &&
              apigen_put_u32(&w, RT_HELLO_TAG_PID) && apigen_put_bytes(&w, pid, sizeof pid) &&
              apigen_put_u32(&w, RT_HELLO_TAG_COMM) && apigen_put_bytes(&w, comm, strlen(comm)) &&
              (!pidns[0] || (apigen_put_u32(&w, RT_HELLO_TAG_PIDNS) &&
                             apigen_put_bytes(&w, pidns, strlen(pidns))));
    if (ok && n >= 2) { /* the family's further APIs: one extension */
        apigen_wr f;
        apigen_wr_init(&f);
        bool fok = apigen_put_u32(&f, n - 1);
        for (unsigned i = 1; fok && i < n; i++)
            fok = apigen_put_str(&f, list[i]->name) && apigen_put_u64(&f, list[i]->fingerprint) &&
                  apigen_put_u64(&f, list[i]->api_version);
        ok = fok && apigen_put_u32(&w, RT_HELLO_TAG_FAMILY) && apigen_put_bytes(&w, f.buf, f.len);
        apigen_wr_free(&f);
    }
    if (ok && lanes && (lanes->ask || lanes->lane)) {
        apigen_wr f;
        apigen_wr_init(&f);
        bool fok = apigen_put_u32(&f, RT_LANES_VERSION);
        if (lanes->lane)
            fok = fok && apigen_put_u32(&f, lanes->index) && apigen_put_u32(&f, lanes->count) &&
                  apigen_put_u32(&f, lanes->piece) && apigen_put_u64(&f, lanes->min) &&
                  apigen_put_raw(&f, lanes->key, RT_KEY_LEN);
        ok = fok && apigen_put_u32(&w, lanes->lane ? RT_HELLO_TAG_LANE : RT_HELLO_TAG_LANES) &&
             apigen_put_bytes(&w, f.buf, f.len);
        apigen_wr_free(&f);
    }
    ok = ok && rt_wr_end_frame(&w, off, APIGEN_F_HELLO, 0, 0, tid);
    if (!ok) {
        snprintf(why, whylen, "out of memory");
        apigen_wr_free(&w);
        return false;
    }
    ok = apigen_tp_send_buf(conn, w.buf, w.len, g->connect_ms, why, whylen);
    apigen_wr_free(&w);
    if (!ok)
        return false;
    apigen_frame_hdr h;
    uint8_t *buf = NULL;
    size_t cap = 0;
    bool eof;
    if (!rt_recv_frame(conn, &h, &buf, &cap, 65536, g->connect_ms, &eof, why, whylen)) {
        free(buf);
        return false;
    }
    apigen_rd rd;
    uint32_t st;
    const char *msg = NULL;
    uint8_t k[RT_KEY_LEN];
    apigen_rd_init(&rd, buf, h.payload_len);
    if (h.flags != (APIGEN_F_HELLO | APIGEN_F_REPLY) || !apigen_get_u32(&rd, &st) ||
        !apigen_get_str(&rd, &msg, 4096) || !apigen_get_raw(&rd, k, RT_KEY_LEN)) {
        snprintf(why, whylen, "malformed handshake reply (%s)", rd.err ? rd.err : "bad flags");
        ok = false;
    } else if (st != RT_HELLO_OK) {
        *stp = st;
        snprintf(why, whylen, "server refused the connection: %s", msg ? msg : "(no reason)");
        ok = false;
    } else {
        memcpy(key, k, RT_KEY_LEN);
        ok = true;
        /* a server that has lanes says so after the key (one without: nothing) */
        if (lanes && lanes->ask) {
            lanes->granted = 0;
            if (!apigen_rd_done(&rd) &&
                (!apigen_get_u32(&rd, &lanes->granted) ||
                 (lanes->granted && !apigen_get_raw(&rd, lanes->key, RT_KEY_LEN)))) {
                snprintf(why, whylen, "malformed handshake reply (lanes: %s)", rd.err ? rd.err : "?");
                ok = false;
            }
        }
    }
    free(buf);
    if (ok && afd >= 0) {
        /* the memfd goes beside the stream; the server answers whether it
         * mapped it, and where */
        uint8_t ack[RT_ARENA_ACK_LEN];
        int nofd;
        ok = apigen_tp_send_side(conn, RT_ARENA_TAG, RT_ARENA_TAG_LEN, afd, g->connect_ms, why,
                                 whylen) &&
             apigen_tp_recv_side(conn, ack, sizeof ack, &nofd, g->connect_ms, why, whylen);
        if (ok)
            rt_arena_guest_ack(a0, ack, nofd);
    }
    return ok;
}

/* The server refused api (it does not serve it, or another version): api's
 * calls fail from now on, with one line; the family's other APIs go on.
 * Caller holds g->mu. */
static void refuse_member(gapi *g, const apigen_api *api, const char *why)
{
    for (unsigned i = 0; i < g->nrefused; i++)
        if (g->refused[i] == api)
            return;
    if (g->nrefused < RT_FAMILY_MAX)
        g->refused[g->nrefused++] = api;
    apigen_log("%s: %s (%s); every %s call fails%s%s%s", api->name, why,
               g->url[0] ? g->url : "(no server)", api->name,
               api->family ? ", the other APIs of family " : "", api->family ? api->family : "",
               api->family ? " go on" : "");
}

static bool is_refused(const gapi *g, const apigen_api *api)
{
    for (unsigned i = 0; i < g->nrefused; i++)
        if (g->refused[i] == api)
            return true;
    return false;
}

/* A refusal that concerns the API named, not the connection or the session. */
static bool api_refusal(uint32_t st)
{
    return st == RT_HELLO_API || st == RT_HELLO_FINGERPRINT;
}

/* Control connection + session, once per process; api (the API of the call
 * that needs it) opens it and is the session's API 0. Caller holds g->mu. */
static bool ensure_session(gapi *g, const apigen_api *api)
{
    char why[600];
    uint32_t st;
    if (atomic_load(&g->lost) || is_refused(g, api))
        return false;
    if (g->connected)
        return true;
    const char *url = getenv("APIGEN_SERVER");
    if (!url || !*url) {
        g->url[0] = 0;
        mark_lost(g, "APIGEN_SERVER is not set (expected unix:///path or tcp://host:port)");
        return false;
    }
    if (!rt_server_url(g->api, g->index, g->url, sizeof g->url)) {
        g->url[0] = 0;
        mark_lost(g, "server %u of APIGEN_SERVER is longer than %zu bytes", g->index,
                  sizeof g->url - 1);
        return false;
    }
    g->connect_ms = env_int("APIGEN_TIMEOUT_MS", DEFAULT_CONNECT_MS, "milliseconds");
    rt_lanes_cfg(&g->lanes, true); /* asked for only where the transport gains (new_thr) */
    g->reply_ms = env_int("APIGEN_TIMEOUT_MS", -1, "milliseconds");
    g->apis[0] = api;
    atomic_store_explicit(&g->napis, 1, memory_order_release);
    /* several servers: a handle's salt names its server, so two sessions
     * with one salt (a 2^-30 chance) are not kept: ask for another */
    for (int tries = 0;; tries++) {
        if (!apigen_tp_connect(g->url, g->connect_ms, &g->ctrl, why, sizeof why)) {
            mark_lost(g, "%s", why);
            return false;
        }
        memset(g->key, 0, sizeof g->key);
        if (!hello(g, g->ctrl, false, g->key, 0, g->apis, 1, &st, why, sizeof why, NULL)) {
            apigen_tp_close(g->ctrl);
            g->ctrl = NULL;
            if (api->family && api_refusal(st))
                refuse_member(g, api, why); /* another member may still open the session */
            else
                mark_lost(g, "%s", why);
            return false;
        }
        g->salt = rt_key_salt(g->key);
        if (tries == 8 || !rt_route_salt_taken(g->api, g->index, g->salt))
            break;
        apigen_tp_close(g->ctrl);
        g->ctrl = NULL;
    }
    rt_route_salt(g->api, g->index, g->salt);
    /* kept answers are this session's (spec `cache:`, `thread_state:`); APIGEN_CACHE=0:
     * none, every call goes to the server (to measure what they save) */
    g->no_answers = env_int("APIGEN_CACHE", 1, "0 or 1") == 0;
    if (!atomic_load(&g->cache) && !g->no_answers)
        atomic_store_explicit(&g->cache, rt_cache_new(), memory_order_release);
    g->connected = true;
    return true;
}

/* api's index in g's session, when the session has it. */
static inline bool member_of(gapi *g, const apigen_api *api, unsigned *idx)
{
    unsigned n = atomic_load_explicit(&g->napis, memory_order_acquire);
    for (unsigned i = 0; i < n; i++)
        if (g->apis[i] == api) {
            *idx = i;
            return true;
        }
    return false;
}

/* api (a member of g's family) joins g's session: a handshake on a
 * connection of its own names the session's APIs and api last; the server
 * checks api and adds it. Then every connection of the session may carry
 * api's calls (its index in the frames' call ids). */
static bool join_member(gapi *g, const apigen_api *api, unsigned *idx)
{
    char why[600];
    uint32_t st;
    bool ok = false;
    pthread_mutex_lock(&g->mu);
    if (member_of(g, api, idx)) {
        ok = true;
    } else if (ensure_session(g, api)) {
        unsigned n = atomic_load(&g->napis);
        apigen_conn *conn = NULL;
        uint8_t key[RT_KEY_LEN];
        memcpy(key, g->key, sizeof key);
        if (member_of(g, api, idx)) {
            ok = true; /* it opened the session */
        } else if (n >= RT_FAMILY_MAX) {
            refuse_member(g, api, "the session has the most APIs a family may have");
        } else {
            g->apis[n] = api;
            if (!apigen_tp_connect(g->url, g->connect_ms, &conn, why, sizeof why)) {
                mark_lost(g, "%s", why);
            } else if (!hello(g, conn, true, key, 0, g->apis, n + 1, &st, why, sizeof why, NULL)) {
                if (api_refusal(st))
                    refuse_member(g, api, why);
                else
                    mark_lost(g, "%s", why);
            } else {
                atomic_store_explicit(&g->napis, n + 1, memory_order_release);
                *idx = n;
                ok = true;
                if (apigen_tracing())
                    apigen_trace("%s: joined the %s session as its API %u", api->name,
                                 api->family, n);
            }
            apigen_tp_close(conn);
        }
    }
    pthread_mutex_unlock(&g->mu);
    return ok;
}

static gthr *new_thr(gapi *g, const apigen_api *api)
{
    char why[600];
    uint8_t key[RT_KEY_LEN];
    const apigen_api *list[RT_FAMILY_MAX];
    uint32_t st;
    pthread_mutex_lock(&g->mu);
    bool ok = ensure_session(g, api);
    unsigned gen = g->gen, n = atomic_load(&g->napis);
    memcpy(key, g->key, sizeof key);
    memcpy(list, g->apis, n * sizeof list[0]);
    pthread_mutex_unlock(&g->mu);
    if (!ok)
        return NULL;
    gthr *t = calloc(1, sizeof *t);
    if (!t) {
        mark_lost(g, "out of memory");
        return NULL;
    }
    t->g = g;
    t->gen = gen;
    t->tid = atomic_fetch_add(&g_next_tid, 1);
    atomic_init(&t->mu, 0);
    apigen_wr_init(&t->q);
    hello_lanes hl = {0};
    ok = apigen_tp_connect(g->url, g->connect_ms, &t->conn, why, sizeof why);
    apigen_tp_set_reply_waits(ok ? t->conn : NULL); /* a sync call's wait yields, not sleeps */
    hl.ask = ok && g->lanes.k >= 2 && apigen_tp_lanes_useful(t->conn); /* where lanes gain */
    if (!ok || !hello(g, t->conn, true, key, t->tid, list, n, &st, why, sizeof why, &hl)) {
        mark_lost(g, "%s", why);
        free_thr(t, false);
        return NULL;
    }
    memcpy(t->skey, key, sizeof key);
    if (hl.ask && hl.granted == RT_LANES_VERSION) {
        if (!rt_lanes_new_guest(t->conn, &g->lanes, hl.key))
            apigen_log("%s: out of memory for lanes; this thread's copies use one connection",
                       g->api->name);
    } else if (hl.ask && !atomic_exchange(&g->lanes_said, true)) {
        if (hl.granted)
            apigen_log("%s: the server speaks lanes version %u, this guest %u: large copies use one "
                       "connection (APIGEN_LANES)", g->api->name, hl.granted, RT_LANES_VERSION);
        else if (apigen_tracing())
            apigen_trace("%s: the server has no lanes: large copies use one connection",
                         g->api->name);
    }
    t->next = tl_head;
    tl_head = t;
    (void)pthread_setspecific(g_key, tl_head);
    pthread_mutex_lock(&g->thr_mu);
    t->upto = 0; /* its first sync call waits for whatever other threads queued */
    t->all_next = g->thrs;
    if (g->thrs)
        g->thrs->all_prev = t;
    g->thrs = t;
    pthread_mutex_unlock(&g->thr_mu);
    return t;
}

/* The calling thread's connection to server `server` of api's session
 * (of its family's: one for all its members), and api's index there. */
/* The thread state t keeps of api (add: make room for it; NULL: none, or
 * no room left). */
static struct tstate *tstate_of(gthr *t, const apigen_api *api, bool add)
{
    for (unsigned i = 0; i < RT_TSTATE_APIS; i++) {
        struct tstate *s = &t->ts[i];
        if (s->api == api)
            return s;
        if (!s->api) {
            if (!add)
                return NULL;
            s->api = api;
            s->known = 0;
            return s;
        }
    }
    return NULL;
}

/* A call of api begins on t: what it may do to the values the family's
 * other APIs keep of this thread (api.thread_state_effects). `any`: each
 * may have changed. Otherwise only a value another API may replace on its
 * own (api.thread_state_lazy: "no context", which any call of another API
 * may replace by making one current) is forgotten; what `declared` calls
 * change, they forget after the call (apigen_tstate_forget_others). */
static void tstate_other_call(gthr *t, const apigen_api *api)
{
    for (unsigned i = 0; i < RT_TSTATE_APIS && t->ts[i].api; i++) {
        struct tstate *s = &t->ts[i];
        if (s->api == api || !s->known)
            continue;
        if (api->tstate_effects == APIGEN_TSTATE_EFFECTS_ANY) {
            s->known = 0;
            continue;
        }
        for (uint32_t m = s->known & s->api->tstate_lazy_mask; m; m &= m - 1) {
            unsigned k = (unsigned)__builtin_ctz(m);
            if (s->val[k] == s->api->tstate_lazy[k])
                s->known &= ~(1u << k);
        }
    }
}

static gthr *get_thr(const apigen_api *api, unsigned server, unsigned *idx)
{
    gthr *h = tl_head;
    if (h && h->g->apis[0] == api && h->g->index == server && h->gen == h->g->gen) {
        *idx = 0; /* the common case: the thread's first state, its session's first API */
        return h;
    }
    for (gthr **pp = &tl_head; *pp; pp = &(*pp)->next) {
        gthr *t = *pp;
        if (t->g->index != server || !rt_same_family(t->g->api, api))
            continue;
        if (t->gen == t->g->gen) {
            if (t->g->apis[0] == api) { /* the common case: one API, or the first */
                *idx = 0;
                return t;
            }
            return member_of(t->g, api, idx) || join_member(t->g, api, idx) ? t : NULL;
        }
        *pp = t->next; /* inherited from the parent across fork() */
        free_thr(t, false);
        break;
    }
    gapi *g = get_gapi(api, server);
    if (!g) {
        apigen_log("%s: out of memory", api->name);
        return NULL;
    }
    if (atomic_load(&g->lost))
        return NULL;
    gthr *t = new_thr(g, api);
    if (t && !member_of(g, api, idx) && !join_member(g, api, idx))
        return NULL;
    return t;
}

/* A further server's session is set up, or a fork child's session with the
 * first server (the parent's registrations are not in it): the API's
 * hand-written code replays its process-wide registrations there
 * (apigen_set_session_hook) before any call of this thread or another uses
 * it; the hook's own calls (nested, on the hook's thread) go straight
 * through. */
static void run_session_hook(gapi *g)
{
    int st = atomic_load(&g->hook_state);
    if (st == 2 || (st == 1 && pthread_equal(g->hook_thread, pthread_self())))
        return;
    void (*hook)(unsigned) = rt_route_hook(g->api);
    if (!hook) {
        atomic_store(&g->hook_state, 2);
        return;
    }
    int zero = 0;
    pthread_mutex_lock(&g->mu);
    bool mine = atomic_compare_exchange_strong(&g->hook_state, &zero, 1);
    if (mine)
        g->hook_thread = pthread_self();
    pthread_mutex_unlock(&g->mu);
    if (mine) {
        hook(g->index);
        atomic_store(&g->hook_state, 2);
        return;
    }
    struct timespec ts = {0, 1000000};
    while (atomic_load(&g->hook_state) != 2 && !atomic_load(&g->lost))
        nanosleep(&ts, NULL);
}

/* ---- calls ---------------------------------------------------------------------- */
bool apigen_call_begin(const apigen_api *api, apigen_call *c, uint32_t call_id)
{
    return apigen_call_begin_on(api, c, call_id, APIGEN_ROUTE_ANY);
}

bool apigen_call_begin_on(const apigen_api *api, apigen_call *c, uint32_t call_id, int server)
{
    /* field by field: the stub's call struct is ~120 bytes, a memset of it
     * cost more than these stores */
    c->api = api;
    c->call_id = call_id;
    c->wr = NULL;
    c->rd = (apigen_rd){0};
    c->status = APIGEN_LOST;
    c->server = 0;
    c->has_deferred = false;
    c->deferred_error = 0;
    c->t0 = 0;
    c->thread = NULL;
    c->sink = NULL;
    c->sink_cap = 0;
    c->wire_id = call_id;
    c->salt = 0;
    /* mirrored memory a library of the family may read: pushed first */
    if (apigen_mirror_live() && rt_mirror_foreign_call(api) != 0)
        return false;
    if (apigen_twin_live() && rt_twin_foreign_call(api) != 0)
        return false;
    rt_arena_guest_current(api); /* arena references only to a server that took the arena */
    /* c->rd is empty: all zero is what apigen_rd_init(NULL, 0) writes */
    unsigned want = server >= 0 ? (unsigned)server : rt_route_current(api), idx = 0;
    if (want && want >= rt_servers(api))
        return false;
    gthr *t = get_thr(api, want, &idx);
    if (!t || atomic_load(&t->g->lost))
        return false;
    c->wire_id = call_id | idx << RT_CALL_API_SHIFT;
    /* a further server's session, or a fork child's first: replayed before this call */
    if ((want || t->g->gen) && atomic_load_explicit(&t->g->hook_state, memory_order_acquire) != 2) {
        run_session_hook(t->g);
        if (atomic_load(&t->g->lost))
            return false;
    }
    c->server = (int)want;
    rt_route_building((int)want);
    if (!t->locked) { /* until the frame is queued or sent; a call begun inside a */
        tlock_take(&t->mu); /* call (hand-written code) drops the outer frame */
        t->locked = true;
    }
    if (t->in_frame) {
        /* begin without end on this thread (a bug in hand-written code): drop the old frame */
        apigen_log("%s: %s started before the previous call on this thread ended", api->name,
                   call_name(api, call_id));
        rt_wr_truncate(&t->q, t->frame_off);
        t->in_frame = false;
    }
    t->q.failed = false;
    if (!rt_wr_begin_frame(&t->q, &t->frame_off)) {
        t->q.failed = false;
        t->locked = false;
        tlock_give(&t->mu);
        apigen_log("%s: %s: out of memory", api->name, call_name(api, call_id));
        return false;
    }
    t->in_frame = true;
    if (t->ts[0].api)
        tstate_other_call(t, api);
    c->wr = &t->q;
    c->thread = t;
    c->salt = t->g->salt;
    c->status = APIGEN_OK; /* c->t0 stays 0: the stub keeps its own trace start */
    return true;
}

/* mu taken for the owner if free (another thread may be sending t's queue) */
static bool lock_thr_try(gthr *t)
{
    if (t->locked || !tlock_try(&t->mu))
        return false;
    t->locked = true;
    return true;
}

static void unlock_thr(gthr *t)
{
    if (t->locked) {
        t->locked = false;
        tlock_give(&t->mu);
    }
}

/* One lane's connection and handshake (connect_lanes runs them side by side). */
typedef struct lane_open {
    gapi *g;
    uint8_t key[RT_KEY_LEN]; /* hello() writes the session's key back: one copy per lane */
    uint64_t tid;
    const apigen_api *list[RT_FAMILY_MAX];
    unsigned n;
    hello_lanes hl;
    apigen_conn *conn;
    bool ok;
    char why[600];
} lane_open;

static void *lane_open_main(void *arg)
{
    lane_open *o = arg;
    uint32_t st;
    o->ok = apigen_tp_connect(o->g->url, o->g->connect_ms, &o->conn, o->why, sizeof o->why) &&
            hello(o->g, o->conn, true, o->key, o->tid, o->list, o->n, &st, o->why, sizeof o->why,
                  &o->hl);
    return NULL;
}

/* t's lanes to open (L's settings, t's session and thread), or NULL (out of
 * memory); *count of them. Gives L up: it is tried once, whatever comes of it. */
static lane_open *lanes_prepare(gthr *t, rt_lanes *L, unsigned *count)
{
    gapi *g = t->g;
    hello_lanes hl = {0};
    rt_lanes_give_up(L);
    rt_lanes_settings(L, &hl.count, &hl.piece, &hl.min, hl.key);
    hl.lane = true;
    lane_open *o = calloc(hl.count ? hl.count : 1, sizeof *o);
    if (!o)
        return NULL;
    unsigned n = atomic_load(&g->napis);
    for (unsigned i = 0; i < hl.count; i++) {
        o[i] = (lane_open){.g = g, .tid = t->tid, .n = n, .hl = hl};
        memcpy(o[i].key, t->skey, sizeof o[i].key);
        memcpy(o[i].list, g->apis, n * sizeof o[i].list[0]);
        o[i].hl.index = i;
    }
    *count = hl.count;
    return o;
}

/* Every lane connects and shakes hands at once: one after the other they
 * cost the first large copy a handshake each (~1.5 ms for 4 over tcp on a
 * 16-core GPU machine). A lane whose thread cannot start opens on this
 * thread. */
static void connect_lanes(lane_open *o, unsigned count)
{
    pthread_t th[RT_LANES_MAX];
    bool started[RT_LANES_MAX] = {false};
    for (unsigned i = 1; i < count && i < RT_LANES_MAX; i++)
        started[i] = pthread_create(&th[i], NULL, lane_open_main, &o[i]) == 0;
    for (unsigned i = 0; i < count; i++)
        if (!started[i])
            lane_open_main(&o[i]);
    for (unsigned i = 1; i < count && i < RT_LANES_MAX; i++)
        if (started[i])
            pthread_join(th[i], NULL);
}

/* The opened lanes become t's (rt_lanes_start starts their threads), or,
 * when one could not open, all are closed and t keeps its one connection
 * (said once). Frees o. Under t->mu. */
static void lanes_adopt(gthr *t, rt_lanes *L, lane_open *o, unsigned count, const char *how)
{
    gapi *g = t->g;
    char why[600] = "out of memory";
    apigen_conn *conns[RT_LANES_MAX] = {0};
    bool ok = o != NULL;
    for (unsigned i = 0; o && i < count && i < RT_LANES_MAX; i++) {
        conns[i] = o[i].conn;
        if (ok && !o[i].ok) {
            snprintf(why, sizeof why, "%s", o[i].why);
            ok = false;
        }
    }
    unsigned piece = o && count ? o[0].hl.piece : 0;
    unsigned long long min = o && count ? (unsigned long long)o[0].hl.min : 0;
    free(o);
    if (!ok) /* the server adopts no lanes of a connection that has not all of them */
        for (unsigned i = 0; i < count && i < RT_LANES_MAX; i++)
            apigen_tp_close(conns[i]);
    else /* the lanes own the connections now, also when their threads could not start */
        ok = rt_lanes_start(L, conns, count, why, sizeof why);
    if (!ok) {
        if (!atomic_exchange(&g->lanes_said, true))
            apigen_log("%s: cannot open %u lanes to %s (%s): large copies use one connection",
                       g->api->name, count, g->url, why);
        return;
    }
    if (apigen_tracing())
        apigen_trace("%s: %u lanes open%s (pieces of %u bytes, bulks from %llu bytes)",
                     g->api->name, count, how, piece, min);
}

/* Opens t's lanes (lanes.c) now: their connections, each with a handshake
 * that names t's connection, then their threads. Under t->mu. */
static void open_lanes(gthr *t, rt_lanes *L)
{
    unsigned count = 0;
    lane_open *o = lanes_prepare(t, L, &count);
    if (o)
        connect_lanes(o, count);
    lanes_adopt(t, L, o, count, "");
}

/* Lanes opened ahead: a device allocation of at least the lanes' size
 * (apigen_dev_note) says large copies are coming, so t's lanes connect on a
 * thread of their own while the program goes on (allocating, filling its
 * host buffers); the first copy then finds them open instead of waiting
 * ~1.3 ms for four handshakes (H200, tcp, 2026-11-27). */
typedef struct lanes_ahead {
    pthread_t th;
    lane_open *o;
    unsigned count;
    atomic_bool done;
} lanes_ahead;

static void *lanes_ahead_main(void *arg)
{
    lanes_ahead *a = arg;
    connect_lanes(a->o, a->count);
    atomic_store(&a->done, true);
    return NULL;
}

/* Adopts t's lanes opened ahead once they are ready, or now when this
 * flush needs them (waiting for the rest of their handshakes). Under t->mu. */
static void lanes_ahead_adopt(gthr *t, rt_lanes *L, bool needed)
{
    lanes_ahead *a = t->ahead;
    if (!needed && !atomic_load(&a->done))
        return;
    pthread_join(a->th, NULL);
    t->ahead = NULL;
    lanes_adopt(t, L, a->o, a->count, " (opened ahead)");
    free(a);
}

/* A reply's bulk comes on lanes: the server took them as soon as they had
 * all joined, which may be before this thread's flushes adopted them (a
 * large read right after the allocation that opened them ahead: a launch,
 * then the result read back). They are adopted now, waiting for the rest of
 * their handshakes; the reader then finds them started. */
static void lanes_ahead_for_reply(gthr *t)
{
    tlock_take(&t->mu);
    t->locked = true;
    rt_lanes *L = rt_lanes_of(t->conn);
    if (t->ahead && L && !rt_lanes_started(L))
        lanes_ahead_adopt(t, L, true);
    unlock_thr(t);
}

/* At thread exit: the opener is waited for and its connections closed. In
 * a fork child (another gen) the opener thread is not there: only closed. */
static void lanes_ahead_drop(gthr *t)
{
    lanes_ahead *a = t->ahead;
    if (!a)
        return;
    if (t->gen == t->g->gen)
        pthread_join(a->th, NULL);
    for (unsigned i = 0; a->o && i < a->count; i++)
        apigen_tp_close(a->o[i].conn);
    free(a->o);
    free(a);
    t->ahead = NULL;
}

void rt_lanes_ahead(const apigen_api *api, int server, uint64_t bytes)
{
    if (server < 0)
        return;
    for (gthr *t = tl_head; t; t = t->next) {
        if (t->g->index != (unsigned)server || !rt_same_family(t->g->api, api) ||
            t->gen != t->g->gen)
            continue;
        rt_lanes *L = rt_lanes_of(t->conn);
        if (!L || !lock_thr_try(t)) /* (a flusher sending this queue: the copy opens them) */
            return;
        lanes_ahead *a = t->ahead || !rt_lanes_wanted(L, bytes) ? NULL : calloc(1, sizeof *a);
        if (!a) {
            unlock_thr(t); /* opening or open already, not wanted, or the first copy opens them */
            return;
        }
        if ((a->o = lanes_prepare(t, L, &a->count)) &&
            pthread_create(&a->th, NULL, lanes_ahead_main, a) == 0) {
            t->ahead = a;
        } else { /* no thread for it (L is given up): open them now */
            if (a->o)
                connect_lanes(a->o, a->count);
            lanes_adopt(t, L, a->o, a->count, "");
            free(a);
        }
        unlock_thr(t);
        return;
    }
}

/* t's queued frames have left (flush_queue, send_own_queued). Under t->mu. */
static void queued_sent(gthr *t)
{
    t->nasent += t->nq;
    t->nq = 0;
    t->nsent++;
    if (t->g->eager_ns)
        t->sent_ns = apigen_now_ns();
}

/* Sends t's queued frames; false: the connection is lost (said). Under t->mu. */
static bool flush_queue(gthr *t)
{
    char err[512];
    if (!t->q.len)
        return true;
    rt_lanes *L = rt_lanes_of(t->conn);
    if (L && !rt_lanes_started(L)) {
        uint64_t largest = 0;
        for (unsigned i = 0; i < t->q.next; i++)
            largest = t->q.ext[i].n > largest ? t->q.ext[i].n : largest;
        if (t->ahead)
            lanes_ahead_adopt(t, L, rt_lanes_large(L, largest));
        else if (rt_lanes_wanted(L, largest))
            open_lanes(t, L);
    }
    if (!rt_wr_send(t->conn, &t->q, t->g->reply_ms, err, sizeof err)) {
        mark_lost(t->g, "%s", err);
        return false;
    }
    t->last_sent = t->q.len;
    if (apigen_tracing())
        __atomic_fetch_add(&t->tr_up, t->q.len + t->q.ext_total, __ATOMIC_RELAXED);
    rt_wr_truncate(&t->q, 0);
    t->q.base = 0;
    queued_sent(t);
    gids_sent(t);
    return true;
}

/* Sends what every other thread of g has queued (each under its own lock,
 * one at a time; the caller holds none). Their frames then run on their own
 * server threads; RT_CALL_WAIT orders the caller's call after them: pairs
 * gets (thread id, async frames sent) for each thread whose connection may
 * not have run all it was sent, gone threads' included (*gone_upto: the
 * newest of those; false: no memory for the pairs). *skipped: how many
 * queued frames it could not send: those of a thread that is mid-frame (a
 * thread that is itself waiting, `hold`, sent its own queued frames first:
 * send_own_queued). The wait must not count them, or it could wait for
 * frames queued behind another thread's wait frame. */
static bool flush_others(gapi *g, gthr *self, apigen_wr *pairs, uint64_t *gone_upto,
                         uint64_t *skipped)
{
    bool ok = true;
    *skipped = 0;
    *gone_upto = 0;
    pthread_mutex_lock(&g->thr_mu);
    for (gthr *x = g->thrs; x; x = x->all_next) {
        if (x == self)
            continue;
        tlock_take(&x->mu);
        if (x->nq && (x->in_frame || x->hold))
            *skipped += x->nq;
        if (x->nq && !x->in_frame && !x->hold && x->gen == g->gen && !atomic_load(&g->lost))
            (void)flush_queue(x);
        if (x->gen == g->gen && x->nasent > atomic_load(&x->nran))
            ok = ok && apigen_put_u64(pairs, x->tid) && apigen_put_u64(pairs, x->nasent);
        tlock_give(&x->mu);
    }
    for (size_t i = 0; i < g->ngone; i++) {
        ok = ok && apigen_put_u64(pairs, g->gone[i].tid) &&
             apigen_put_u64(pairs, g->gone[i].count);
        if (g->gone[i].seq > *gone_upto)
            *gone_upto = g->gone[i].seq;
    }
    pthread_mutex_unlock(&g->thr_mu);
    return ok;
}

/* A reply came to a wait frame that named the gone threads up to seq: their
 * frames ran, no wait needs to name them again. */
static void gone_ran(gapi *g, uint64_t seq)
{
    if (!seq)
        return;
    pthread_mutex_lock(&g->thr_mu);
    size_t k = 0;
    for (size_t i = 0; i < g->ngone; i++)
        if (g->gone[i].seq > seq)
            g->gone[k++] = g->gone[i];
    g->ngone = k;
    pthread_mutex_unlock(&g->thr_mu);
}

/* Before a thread holds its queue for a wait frame, its own queued async
 * frames (all before the frame at t->frame_off) leave: a thread
 * synchronizing at the same moment counts them in its wait, so they must
 * neither sit behind this thread's wait frame (each thread would wait for
 * the other's) nor be left out of that wait (its call would not see them:
 * the sync_storm e2e test). Under t->mu. */
static bool send_own_queued(gthr *t)
{
    char err[512];
    if (!t->nq)
        return true;
    if (!rt_wr_send_head(t->conn, &t->q, t->frame_off, t->g->reply_ms, err, sizeof err)) {
        mark_lost(t->g, "%s", err);
        return false;
    }
    if (apigen_tracing())
        __atomic_fetch_add(&t->tr_up, t->frame_off, __ATOMIC_RELAXED);
    t->frame_off = 0;
    queued_sent(t);
    return true;
}

/* What a wait frame asks the server to have run when the pairs could not be
 * written (no memory): n counted frames less this thread's own queue (none:
 * send_own_queued sent it) and those flush_others left (frames of a thread
 * in the middle of building one), as a session-wide count. */
static uint64_t wait_count(uint64_t n, uint64_t own, uint64_t skipped)
{
    return n > own + skipped ? n - own - skipped : 0;
}

/* RT_CALL_WAIT: the server runs this thread's next frames once the other
 * threads' connections ran the frames the pairs name (n: a session-wide
 * count instead, see wait_count). Nothing to wait for: no frame. */
static bool send_wait(gthr *t, uint64_t n, const apigen_wr *pairs)
{
    if (!n && !pairs->len)
        return true;
    apigen_wr w;
    size_t off;
    char err[512];
    apigen_wr_init(&w);
    bool ok = rt_wr_begin_frame(&w, &off) && apigen_put_u64(&w, n) &&
              (!pairs->len || apigen_put_raw(&w, pairs->buf, pairs->len)) &&
              rt_wr_end_frame(&w, off, APIGEN_F_ASYNC, RT_CALL_WAIT, 0, t->tid);
    if (ok && !apigen_tp_send_buf(t->conn, w.buf, w.len, t->g->reply_ms, err, sizeof err)) {
        mark_lost(t->g, "%s", err);
        ok = false;
    }
    if (ok && apigen_tracing())
        __atomic_fetch_add(&t->tr_up, w.len, __ATOMIC_RELAXED);
    apigen_wr_free(&w);
    return ok;
}

/* The cross-thread path of a call whose frame is at t->frame_off (t->mu
 * held, t->locked): this thread's queued frames leave, then every other
 * thread's queue, then the wait frame; the call's frame stays in q. False:
 * the connection is lost (t->mu is held again either way). */
static bool wait_for_others(gthr *t, uint64_t n, uint64_t *gone_upto, uint64_t *skipped)
{
    gapi *g = t->g;
    if (!send_own_queued(t))
        return false;
    t->hold = true; /* the frame leaves after the wait frame, by this thread */
    t->locked = false;
    tlock_give(&t->mu);
    apigen_wr pairs;
    apigen_wr_init(&pairs);
    bool named = flush_others(g, t, &pairs, gone_upto, skipped);
    tlock_take(&t->mu);
    t->locked = true;
    t->hold = false;
    if (!named) { /* no memory for the pairs: the session-wide count */
        pairs.len = 0;
        *gone_upto = 0;
    }
    bool ok = send_wait(t, named ? 0 : wait_count(n, t->nq, *skipped), &pairs);
    apigen_wr_free(&pairs);
    return ok;
}

/* The flusher: every flush_us, a queue that has held frames since the last
 * tick without being sent leaves (trylock: an owner building or sending
 * goes first). Runs for the process' life. */
static void *flusher_main(void *arg)
{
    gapi *g = arg;
    unsigned gen = g->gen;
    struct timespec ts = {g->flush_us / 1000000, (long)(g->flush_us % 1000000) * 1000};
    for (;;) {
        nanosleep(&ts, NULL);
        if (gen != g->gen || atomic_load(&g->lost))
            return NULL; /* a fork child's copy of the state, or no server */
        pthread_mutex_lock(&g->thr_mu);
        for (gthr *x = g->thrs; x; x = x->all_next) {
            if (!tlock_try(&x->mu))
                continue;
            bool full = x->nq && x->q.len && !x->in_frame && !x->hold && x->gen == g->gen;
            if (full && x->seen_full && x->seen_sent == x->nsent) {
                if (flush_queue(x))
                    full = false;
            }
            x->seen_full = full;
            x->seen_sent = x->nsent;
            tlock_give(&x->mu);
        }
        pthread_mutex_unlock(&g->thr_mu);
    }
}

/* Once per process (and per fork child): start the flusher unless
 * APIGEN_FLUSH_US=0. */
static void start_flusher(gapi *g)
{
    pthread_mutex_lock(&g->mu);
    if (!atomic_load(&g->flusher_on)) {
        g->flush_us = env_int("APIGEN_FLUSH_US", 200, "microseconds");
        /* the transport's default: on where a send costs no system call */
        g->eager_ns = (int64_t)env_int("APIGEN_EAGER_US", apigen_tp_eager_us(g->ctrl),
                                       "microseconds") * 1000;
        if (g->flush_us > 0) {
            pthread_t th;
            pthread_attr_t at;
            pthread_attr_init(&at);
            pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
            int rc = pthread_create(&th, &at, flusher_main, g);
            pthread_attr_destroy(&at);
            if (rc)
                apigen_log("%s: cannot start the queue flusher: %s; queued calls leave at the "
                           "next synchronous call", g->api->name, strerror(rc));
        }
        atomic_store(&g->flusher_on, true);
    }
    pthread_mutex_unlock(&g->mu);
}

/* After a frame was sent or queued, before the owner lets go of t->mu: an
 * empty queue's large buffer goes once calls stop using most of it. Done
 * here so that apigen_call_end need not take t->mu again. */
static void settle_queue(gthr *t)
{
    if (t->q.len)
        return;
    t->q.base = 0;
    if (!rt_keep_warm(&t->q_warm, t->q.cap, t->last_sent, KEEP_BUF_MAX))
        apigen_wr_free(&t->q);
    t->last_sent = 0;
}

/* A frame that could not be built (no memory, or over the u32 frame size). */
static apigen_status drop_frame(gthr *t, apigen_call *c)
{
    rt_wr_truncate(&t->q, t->frame_off);
    t->in_frame = false;
    apigen_log("%s: %s: arguments too large to send", c->api->name, call_name(c->api, c->call_id));
    return APIGEN_TOO_LARGE;
}

/* api's queued error that no call reported: kept for its next call */
static void pend_put(gthr *t, const apigen_api *api, int64_t err)
{
    unsigned i = 0;
    while (i < t->npend && t->pend[i].api != api)
        i++;
    if (i == RT_DEFER_APIS) {
        apigen_log("%s: an async call's error (%lld) is not kept: %u APIs already hold one",
                   api->name, (long long)err, (unsigned)RT_DEFER_APIS);
        return;
    }
    if (i == t->npend)
        t->npend++;
    t->pend[i].api = api;
    t->pend[i].err = err;
}

/* apigen_hold_deferred: calls of hand-written guest code that report no error */
static _Thread_local unsigned tl_hold_deferred;

/* An APIGEN_F_OUTPUT frame (runtime/output.c): the bytes a session process
 * printed, written to this process's stdout through stdio (in order with
 * what the program printed before) and flushed, as the driver does with a
 * kernel's printf. body: the payload when it came with the header. */
static bool take_output(apigen_conn *conn, const apigen_frame_hdr *h, const uint8_t *body,
                        int timeout_ms, char *err, size_t errlen)
{
    uint8_t *own = NULL;
    if (!body && h->payload_len) {
        if (!(own = malloc(h->payload_len))) {
            snprintf(err, errlen, "out of memory");
            return false;
        }
        if (apigen_tp_recv(conn, own, h->payload_len, timeout_ms, err, errlen) != APIGEN_TP_OK) {
            free(own);
            return false;
        }
        body = own;
    }
    bool ok = h->payload_len >= 1 && (body[0] == 1 || body[0] == 2);
    FILE *to = ok && body[0] == 2 ? stderr : stdout;
    if (!ok)
        snprintf(err, errlen, "neither stdout nor stderr");
    else if (h->payload_len > 1) {
        (void)fwrite(body + 1, 1, h->payload_len - 1, to);
        (void)fflush(to);
    }
    free(own);
    return ok;
}

static apigen_status call_sync(apigen_call *c);

apigen_status apigen_call_sync(apigen_call *c)
{
    gthr *t = c->thread;
    if (!t || !t->in_frame)
        return c->status = APIGEN_LOST;
    rt_settle *s = &t->g->settle;
    rt_settle_note(s, c, t->tid, true);
    apigen_status st = call_sync(c);
    rt_settle_replied(s);
    return st;
}

static apigen_status call_sync(apigen_call *c)
{
    gthr *t = c->thread;
    gapi *g = t->g;
    if (atomic_load(&g->lost)) {
        t->in_frame = false;
        return c->status = APIGEN_LOST;
    }
    uint32_t req = ++t->req;
    t->epoch_at_send = atomic_load(&g->state_epoch);
    if (t->q.failed || !rt_wr_end_frame(&t->q, t->frame_off, 0, c->wire_id, req, t->tid)) {
        c->status = drop_frame(t, c);
        unlock_thr(t);
        return c->status;
    }
    t->in_frame = false;
    /* Other threads queued async calls since this thread last synchronized:
     * they leave now, and this call runs after the session ran them all. */
    uint64_t n = atomic_load(&g->nasync);
    bool waits = n != t->upto;
    uint64_t gone_upto = 0, skipped = 0;
    if (waits && !wait_for_others(t, n, &gone_upto, &skipped)) {
        unlock_thr(t);
        return c->status = APIGEN_LOST;
    }
    bool sent = flush_queue(t);
    if (sent)
        settle_queue(t);
    uint64_t asent = t->nasent; /* all run once the reply is here */
    unlock_thr(t);
    if (!sent)
        return c->status = APIGEN_LOST;

    apigen_frame_hdr h;
    char err[512];
    bool eof;
    uint64_t streamed = 0, sent_ns = apigen_tracing() ? apigen_now_ns() : 0;
    size_t have;
    t->pull.pending = false; /* rt_recv_payload sets what a pending pull reads */
    t->pull.failed = false;
    for (;;) {
        /* a call with a sink takes its streamed chunks straight from the transport */
        if (!rt_recv_hdr(t->conn, &h, REPLY_MAX_PAYLOAD, g->reply_ms, &eof, t->rbuf,
                         c->sink ? 0 : t->rcap, &have, err, sizeof err)) {
            if (eof)
                mark_lost(g, "server closed the connection during %s", call_name(c->api, c->call_id));
            else
                mark_lost(g, "waiting for the reply to %s: %s", call_name(c->api, c->call_id), err);
            return c->status = APIGEN_LOST;
        }
        t->tr_down += APIGEN_FRAME_HDR_SIZE + (uint64_t)h.payload_len; /* read only when tracing */
        if (h.flags & APIGEN_F_LANES)
            lanes_ahead_for_reply(t);
        if (h.flags & APIGEN_F_OUTPUT) { /* what the session printed: ours to print first */
            if (h.flags != APIGEN_F_OUTPUT || h.request_id != req || h.call_id != c->wire_id ||
                !take_output(t->conn, &h, have ? t->rbuf : NULL, g->reply_ms, err, sizeof err)) {
                mark_lost(g, "bad output frame in the reply to %s: %s",
                          call_name(c->api, c->call_id), h.flags != APIGEN_F_OUTPUT ? "flags" : err);
                apigen_tp_shutdown(t->conn);
                return c->status = APIGEN_LOST;
            }
            continue;
        }
        if (!(h.flags & APIGEN_F_STREAM))
            break;
        /* a chunk of a streamed out-buffer: straight into the caller's memory
         * (a large one over the lanes) */
        if ((h.flags & ~APIGEN_F_LANES) != APIGEN_F_STREAM || h.request_id != req ||
            h.call_id != c->wire_id || !c->sink || h.payload_len > c->sink_cap - streamed || have) {
            mark_lost(g, "unexpected streamed data in the reply to %s",
                      call_name(c->api, c->call_id));
            apigen_tp_shutdown(t->conn);
            return c->status = APIGEN_LOST;
        }
        rt_lanes *L = NULL;
        if ((h.flags & APIGEN_F_LANES) &&
            (!(L = rt_lanes_for_recv(t->conn, err, sizeof err)) ||
             !rt_lanes_recv_begin(L, h.payload_len, err, sizeof err) ||
             !rt_lanes_recv(L, (uint8_t *)c->sink + streamed, h.payload_len, g->reply_ms, err,
                            sizeof err))) {
            mark_lost(g, "receiving the reply to %s: %s", call_name(c->api, c->call_id), err);
            apigen_tp_shutdown(t->conn);
            return c->status = APIGEN_LOST;
        }
        if (!L)
            rt_lanes_note_recv(t->conn, h.payload_len);
        if (!L && h.payload_len && apigen_tp_recv(t->conn, (uint8_t *)c->sink + streamed, h.payload_len,
                                                  g->reply_ms, err, sizeof err) != APIGEN_TP_OK) {
            mark_lost(g, "receiving the reply to %s: %s", call_name(c->api, c->call_id), err);
            return c->status = APIGEN_LOST;
        }
        streamed += h.payload_len;
    }
    if (!rt_recv_payload(t->conn, &h, &t->rbuf, &t->rcap, have, g->reply_ms, true, err, sizeof err,
                         &t->pull, &c->rd)) {
        mark_lost(g, "waiting for the reply to %s: %s", call_name(c->api, c->call_id), err);
        return c->status = APIGEN_LOST;
    }
    rt_reply_prefix rp;
    if (!(h.flags & APIGEN_F_REPLY) || h.request_id != req || h.call_id != c->wire_id ||
        !rt_get_reply_prefix(&c->rd, &rp)) {
        mark_lost(g, "malformed reply to %s", call_name(c->api, c->call_id));
        apigen_rd_init(&c->rd, NULL, 0);
        return c->status = APIGEN_LOST;
    }
    t->last_reply = h.payload_len;
    if (sent_ns) { /* one round trip: what went each way since the last one, and its wait */
        uint64_t now = apigen_now_ns();
        rt_trace_wire("rt %s up=%llu down=%llu wait_us=%llu t_us=%llu", call_name(c->api, c->call_id),
                      (unsigned long long)__atomic_exchange_n(&t->tr_up, 0, __ATOMIC_RELAXED),
                      (unsigned long long)t->tr_down,
                      (unsigned long long)((now - sent_ns) / 1000), (unsigned long long)(now / 1000));
        t->tr_down = 0;
    }
    if (waits && t->upto < n)
        t->upto = n;
    atomic_store(&t->nran, asent);
    gone_ran(g, gone_upto);
    c->status = (apigen_status)rp.status;
    t->unasked[(c->wire_id >> RT_CALL_API_SHIFT) % RT_FAMILY_MAX] = 0; /* their errors: here */
    c->has_deferred = rp.has_deferred;
    c->deferred_error = rp.deferred;
    if (rp.has_deferred) { /* an async call failed: the last error is no longer known, */
        apigen_lasterr_forget(c->api);
        rt_contents_taint(); /* nor what the handles it may have set hold */
    }
    for (unsigned i = 0; i < t->npend; i++)
        if (t->pend[i].api == c->api) { /* the first error of the queued calls wins */
            c->has_deferred = true;
            c->deferred_error = t->pend[i].err;
            t->pend[i] = t->pend[--t->npend];
            break;
        }
    if (tl_hold_deferred && c->has_deferred) { /* a call hand-written code made for itself */
        pend_put(t, c->api, c->deferred_error);
        c->has_deferred = false;
    }
    return c->status;
}

/* ---- kept answers (spec `cache:`) ------------------------------------------------ */
/* NULL: APIGEN_CACHE=0, or no memory for one when the session began (calls
 * then go to the server) */
static rt_cache *session_cache(gapi *g)
{
    return atomic_load_explicit(&g->cache, memory_order_acquire);
}

/* Whether the frame being built is all in t->q's buffer (no zero-copy
 * piece of the caller's memory, which the key would not hold). */
static bool frame_is_flat(const gthr *t)
{
    for (unsigned i = 0; i < t->q.next; i++)
        if (t->q.ext[i].at > t->frame_off)
            return false;
    return !t->q.failed;
}

/* The index of group name in g's session (add: made known; -1: not known,
 * or the table is full, which keeps nothing of the group). */
static pthread_mutex_t g_cgroup_mu = PTHREAD_MUTEX_INITIALIZER;
static int cache_group(gapi *g, const char *name, bool add)
{
    unsigned n = atomic_load(&g->ncgroups);
    for (unsigned i = 0; i < n; i++)
        if (g->cgroups[i].name == name || strcmp(g->cgroups[i].name, name) == 0)
            return (int)i;
    if (!add)
        return -1;
    int r = -1;
    pthread_mutex_lock(&g_cgroup_mu);
    n = atomic_load(&g->ncgroups);
    for (unsigned i = 0; i < n && r < 0; i++)
        if (strcmp(g->cgroups[i].name, name) == 0)
            r = (int)i;
    if (r < 0 && n < RT_CACHE_GROUPS) {
        g->cgroups[n].name = name; /* the stub's string: stubs stay loaded (-z nodelete) */
        atomic_store(&g->cgroups[n].epoch, 1);
        atomic_store(&g->ncgroups, n + 1);
        r = (int)n;
    }
    pthread_mutex_unlock(&g_cgroup_mu);
    return r;
}

static apigen_status sync_cached(apigen_call *c, bool cacheable, bool *hit, const char *group,
                                 const apigen_wr *memo, const void *extra, size_t nextra);

apigen_status apigen_call_sync_cached(apigen_call *c, bool cacheable, bool *hit)
{
    return sync_cached(c, cacheable, hit, NULL, NULL, NULL, 0);
}

apigen_status apigen_call_sync_cached_group(apigen_call *c, bool cacheable, bool *hit,
                                            const char *group)
{
    return sync_cached(c, cacheable, hit, group, NULL, NULL, 0);
}

apigen_status apigen_call_sync_cached_keyed(apigen_call *c, bool cacheable, bool *hit,
                                            const char *group, const void *extra, size_t n)
{
    return sync_cached(c, cacheable, hit, group, NULL, extra, n);
}

apigen_status apigen_call_sync_memo(apigen_call *c, bool cacheable, const apigen_wr *key, bool *hit)
{
    return sync_cached(c, cacheable && key && !key->failed && !key->next, hit, NULL, key, NULL, 0);
}

void apigen_cache_forget(apigen_call *c, const char *group)
{
    gthr *t = c->thread;
    int i = t ? cache_group(t->g, group, false) : -1;
    if (i >= 0)
        atomic_fetch_add(&t->g->cgroups[i].epoch, 1);
}

bool apigen_cache_epoch(const apigen_api *api, const char *group, uint64_t *epoch)
{
    unsigned server = rt_route_current(api);
    for (gthr *t = tl_head; t; t = t->next) {
        if (t->g->index != server || !rt_same_family(t->g->api, api))
            continue;
        gapi *g = t->g;
        int i = cache_group(g, group, true);
        if (t->gen != g->gen || atomic_load(&g->lost) || g->no_answers || i < 0)
            return false;
        /* a fork child's session starts its epochs again: the generation
         * keeps its values apart from the parent's */
        *epoch = ((uint64_t)g->gen << 40) + atomic_load(&g->cgroups[i].epoch);
        return true;
    }
    return false;
}

/* t->ckey holds n bytes at least (grown if need be); false: out of memory. */
static bool ckey_room(gthr *t, size_t n)
{
    if (t->ckey_cap < n) {
        uint8_t *nk = realloc(t->ckey, n);
        if (!nk)
            return false;
        t->ckey = nk;
        t->ckey_cap = n;
    }
    return true;
}

static apigen_status sync_cached(apigen_call *c, bool cacheable, bool *hit, const char *group,
                                 const apigen_wr *memo, const void *extra, size_t nextra)
{
    gthr *t = c->thread;
    *hit = false;
    /* the thread's values (apigen_tstate_get) are those of its current
     * server: a call that goes to another one is asked */
    if (nextra && c->server != (int)rt_route_current(c->api))
        cacheable = false;
    if (!cacheable || !t || !t->in_frame || !frame_is_flat(t) || atomic_load(&t->g->lost))
        return apigen_call_sync(c); /* which says what is wrong, if anything */
    gapi *g = t->g;
    rt_cache *kc = session_cache(g);
    /* the request's bytes, or a memoized query's own key (its handles' contents) */
    const uint8_t *key = memo ? memo->buf : t->q.buf + t->frame_off + APIGEN_FRAME_HDR_SIZE;
    size_t n = memo ? memo->len : t->q.len - t->frame_off - APIGEN_FRAME_HDR_SIZE, len, off;
    uint64_t taint = rt_contents_taint_now();
    if (memo && !key)
        kc = NULL;
    if (kc && nextra) { /* the request, then the thread's values the answer depends on */
        if (ckey_room(t, n + nextra)) {
            memcpy(t->ckey, key, n);
            memcpy(t->ckey + n, extra, nextra);
            key = t->ckey;
            n += nextra;
        } else {
            kc = NULL; /* out of memory: asked, not kept */
        }
    }
    /* A memoized answer may be a thread's only sync call of its API (a
     * training step: descriptors, heuristic, matmul, all but the heuristic
     * queued): while calls of the API are queued since its last sync call,
     * one in RT_MEMO_ASK_EVERY goes to the server anyway, so that a queued
     * call's error reaches the program within that many of them. */
    unsigned ai = (c->wire_id >> RT_CALL_API_SHIFT) % RT_FAMILY_MAX;
    bool ask = memo && t->unasked[ai] && ++t->memo_given[ai] >= RT_MEMO_ASK_EVERY;
    if (ask)
        t->memo_given[ai] = 0;
    const uint8_t *find_key = ask ? NULL : key;
    /* a grouped answer holds while its group's epoch is the one it was
     * asked under: read before the question leaves, so a forget that
     * comes while it is in flight leaves the answer stale */
    int gi = group && kc ? cache_group(g, group, true) : -1;
    uint32_t grp = gi >= 0 ? (uint32_t)gi + 1 : 0;
    uint64_t epoch = gi >= 0 ? atomic_load(&g->cgroups[gi].epoch) : 0;
    if (group && gi < 0)
        kc = NULL;
    if (kc && find_key &&
        rt_cache_find(kc, c->wire_id, find_key, n, &t->rbuf, &t->rcap, &len, &off, grp, epoch)) {
        rt_wr_truncate(&t->q, t->frame_off); /* never sent */
        t->in_frame = false;
        settle_queue(t);
        unlock_thr(t);
        apigen_rd_init(&c->rd, t->rbuf, len);
        c->rd.p += off;
        c->rd.left -= off;
        t->last_reply = len;
        /* the function's own answer: errors of async calls (queued, or
         * known and not reported yet) stay for the next call that reaches
         * the server, as natively a query does not return a launch's error */
        c->has_deferred = false;
        *hit = true;
        return c->status = APIGEN_OK;
    }
    t->ckey_ok = false;
    bool keyed = kc && ckey_room(t, n);
    if (keyed) {
        if (key != t->ckey) /* a keyed request is built there already */
            memcpy(t->ckey, key, n);
        t->ckey_len = n;
        t->ckey_call = c->wire_id;
        t->ckey_group = grp;
        t->ckey_epoch = epoch;
        t->ckey_memo = memo != NULL;
        t->ckey_taint = taint;
    }
    apigen_status st = apigen_call_sync(c);
    if (st == APIGEN_OK && keyed && !c->rd.pull && c->rd.base) {
        t->crep = c->rd.base;
        t->crep_off = (size_t)(c->rd.p - c->rd.base);
        t->crep_len = t->crep_off + c->rd.left;
        t->ckey_ok = true;
    }
    return st;
}

void apigen_call_cache_keep(apigen_call *c)
{
    gthr *t = c->thread;
    if (!t || !t->ckey_ok || c->status != APIGEN_OK || t->ckey_call != c->wire_id)
        return;
    t->ckey_ok = false;
    if (t->ckey_memo && t->ckey_taint != rt_contents_taint_now())
        return; /* an async error came back: a setter of the contents asked about may have failed */
    if (t->gen == t->g->gen && !atomic_load(&t->g->lost))
        rt_cache_add(session_cache(t->g), t->ckey_call, t->ckey, t->ckey_len, t->crep,
                     t->crep_len, t->crep_off, t->ckey_group, t->ckey_epoch);
}

/* ---- thread state kept in the guest (api.thread_state) ------------------------ */
bool apigen_tstate_get(const apigen_api *api, unsigned slot, uint64_t *value)
{
    if (slot >= APIGEN_TSTATE_MAX)
        return false;
    unsigned server = rt_route_current(api);
    for (gthr *t = tl_head; t; t = t->next) {
        if (t->g->index != server || !rt_same_family(t->g->api, api))
            continue;
        struct tstate *s = tstate_of(t, api, false);
        gapi *g = t->g;
        if (!s || t->gen != g->gen || atomic_load(&g->lost) || g->no_answers ||
            !(s->known & (1u << slot)) || s->epoch[slot] != atomic_load(&g->state_epoch))
            return false;
        *value = s->val[slot];
        return true;
    }
    return false;
}

void apigen_tstate_set(apigen_call *c, unsigned slot, uint64_t value)
{
    gthr *t = c->thread;
    if (!t || slot >= APIGEN_TSTATE_MAX || c->status != APIGEN_OK)
        return;
    struct tstate *s = tstate_of(t, c->api, true);
    if (!s)
        return;
    s->val[slot] = value;
    s->epoch[slot] = t->epoch_at_send; /* stale if a forget_all came meanwhile */
    s->known |= 1u << slot;
}

void apigen_tstate_forget(apigen_call *c, unsigned slot)
{
    gthr *t = c->thread;
    struct tstate *s = t && slot < APIGEN_TSTATE_MAX ? tstate_of(t, c->api, false) : NULL;
    if (s)
        s->known &= ~(1u << slot);
}

void apigen_tstate_forget_others(apigen_call *c)
{
    gthr *t = c->thread;
    for (unsigned i = 0; t && i < RT_TSTATE_APIS && t->ts[i].api; i++)
        if (t->ts[i].api != c->api)
            t->ts[i].known = 0;
}

void apigen_tstate_forget_named(apigen_call *c, const char *slot)
{
    gthr *t = c->thread;
    for (unsigned i = 0; t && i < RT_TSTATE_APIS && t->ts[i].api; i++) {
        struct tstate *s = &t->ts[i];
        const char *const *names = s->api->tstate_names;
        if (s->api == c->api || !names)
            continue;
        for (unsigned k = 0; k < APIGEN_TSTATE_MAX && names[k]; k++)
            if (strcmp(names[k], slot) == 0)
                s->known &= ~(1u << k);
    }
}

void apigen_tstate_forget_all(apigen_call *c)
{
    gthr *t = c->thread;
    if (t)
        atomic_fetch_add(&t->g->state_epoch, 1);
}

/* The calling thread's state of api's session on the current server when a
 * synchronization may be answered in the guest: the session live, answers
 * kept, and no async call's error the call must return; else NULL. */
static gthr *settle_thread(const apigen_api *api, bool known)
{
    if (!known)
        return NULL;
    unsigned server = rt_route_current(api);
    for (gthr *t = tl_head; t; t = t->next) {
        if (t->g->index != server || !rt_same_family(t->g->api, api))
            continue;
        gapi *g = t->g;
        return t->gen != g->gen || atomic_load(&g->lost) || g->no_answers || t->npend ? NULL : t;
    }
    return NULL;
}

bool apigen_work_settled(const apigen_api *api, bool known, uint64_t scope)
{
    gthr *t = settle_thread(api, known);
    return t && rt_settle_idle(&t->g->settle, scope);
}

bool apigen_queue_settled(const apigen_api *api, bool known, uint64_t scope, uint64_t queue)
{
    gthr *t = settle_thread(api, known);
    return t && rt_settle_queue_idle(&t->g->settle, scope, queue, t->tid);
}

void apigen_hold_deferred(bool on)
{
    if (on)
        tl_hold_deferred++;
    else if (tl_hold_deferred > 0)
        tl_hold_deferred--;
}

extern inline bool apigen_vouch_id(const apigen_call *c, uint64_t id);

/* Whether the frame just ended in t->q holds a value of guest-id form (of
 * this session) that this thread did not name since its queue was last
 * sent: handles go as u64s, so every offset is looked at; a stray match
 * costs only a flush. */
static bool foreign_gid(gthr *t)
{
    uint32_t hi = (uint32_t)(RT_GID_BIT >> 32) | (uint32_t)t->g->salt;
    const uint8_t *p = t->q.buf + t->frame_off;
    size_t n = t->q.len - t->frame_off;
    for (size_t i = 0; i + 8 <= n; i++) {
        uint32_t h = (uint32_t)p[i + 4] | (uint32_t)p[i + 5] << 8 | (uint32_t)p[i + 6] << 16 |
                     (uint32_t)p[i + 7] << 24;
        if (h != hi)
            continue;
        uint32_t lo = (uint32_t)p[i] | (uint32_t)p[i + 1] << 8 | (uint32_t)p[i + 2] << 16 |
                      (uint32_t)p[i + 3] << 24;
        bool own = false;
        for (uint32_t k = 0; k < t->ngids && k < GIDS_MAX && !own; k++)
            own = t->gids[k] == lo;
        if (!own)
            return true;
    }
    return false;
}

apigen_status apigen_call_async(apigen_call *c)
{
    gthr *t = c->thread;
    if (!t || !t->in_frame)
        return c->status = APIGEN_LOST;
    if (atomic_load(&t->g->lost)) {
        t->in_frame = false;
        return c->status = APIGEN_LOST;
    }
    if (t->q.failed ||
        !rt_wr_end_frame(&t->q, t->frame_off, APIGEN_F_ASYNC, c->wire_id, ++t->req, t->tid)) {
        (void)drop_frame(t, c);
        unlock_thr(t);
        return c->status = APIGEN_LOST; /* only OK or LOST may be returned here */
    }
    t->in_frame = false;
    /* Another thread queued async frames since this thread's last ordering
     * point (they may still sit in its queue, or be sent but not run yet: the
     * server runs each connection on its own): natively work a thread
     * enqueued first runs first on a stream both use (PyTorch's autograd
     * thread and its main thread share the legacy stream), so that thread's
     * queue leaves first and this frame runs after the session ran it
     * (RT_CALL_WAIT). Before 2026-11-26 only a frame naming a guest id of
     * another thread's queue took this path; the other threads' frequent
     * sync calls hid the rest, until those were answered in the guest
     * (training over the driver stub lost bitwise equality on the H200).
     * The same holds for a frame that names a guest id still queued there. */
    if (atomic_load_explicit(&t->g->nasync, memory_order_relaxed) != t->upto ||
        (atomic_load_explicit(&t->g->gid_unsent, memory_order_relaxed) > t->ngids &&
         atomic_load_explicit(&t->g->next_gid, memory_order_relaxed) && foreign_gid(t))) {
        gapi *g = t->g;
        uint64_t n = atomic_load(&g->nasync); /* what was queued before this call */
        uint64_t gone_upto, skipped;
        if (!wait_for_others(t, n, &gone_upto, &skipped)) {
            rt_wr_truncate(&t->q, t->frame_off);
            unlock_thr(t);
            return c->status = APIGEN_LOST;
        }
        if (!skipped && t->upto < n)
            t->upto = n; /* what was queued before has run before this frame */
    }
    t->nq++;
    t->unasked[(c->wire_id >> RT_CALL_API_SHIFT) % RT_FAMILY_MAX]++;
    if (!atomic_load_explicit(&t->g->flusher_on, memory_order_relaxed))
        start_flusher(t->g);
    uint64_t prev = atomic_fetch_add(&t->g->nasync, 1);
    /* numbered once counted: a sync call numbered later waits for it */
    rt_settle_note(&t->g->settle, c, t->tid, false);
    if (prev == t->upto)
        t->upto = prev + 1; /* no other thread queued in between */
    /* zero-copy pieces point into the caller's memory: they leave now */
    bool ok = !(t->q.len >= QUEUE_MAX_BYTES || t->nq >= QUEUE_MAX_CALLS || t->q.next ||
                (t->g->eager_ns && (int64_t)(apigen_now_ns() - t->sent_ns) >= t->g->eager_ns)) ||
              flush_queue(t);
    settle_queue(t);
    unlock_thr(t);
    return c->status = ok ? APIGEN_OK : APIGEN_LOST;
}

void apigen_call_end(apigen_call *c)
{
    gthr *t = c->thread;
    rt_route_building(-1);
    if (!t)
        return;
    /* A frame sent or queued let go of t->mu (settle_queue done): the lock
     * is needed again only while the owner still holds it or a frame was
     * begun and never finished (in_frame: only the owner writes it). */
    if (t->locked || t->in_frame) {
        if (!t->locked) {
            tlock_take(&t->mu);
            t->locked = true;
        }
        if (t->in_frame) { /* begun but neither sent nor queued */
            rt_wr_truncate(&t->q, t->frame_off);
            t->in_frame = false;
        }
        settle_queue(t);
        unlock_thr(t);
    }
    if (c->has_deferred && c->status == APIGEN_OK) { /* not reported: the next call does */
        pend_put(t, c->api, c->deferred_error);
    }
    if (c->rd.pull && !rt_pull_drain(&c->rd)) /* a bulk the caller did not read */
        mark_lost(t->g, "reading the reply to %s: %s", call_name(c->api, c->call_id),
                  t->pull.err);
    if (!rt_keep_warm(&t->r_warm, t->rcap, t->last_reply, KEEP_BUF_MAX)) {
        free(t->rbuf);
        t->rbuf = NULL;
        t->rcap = 0;
    }
    t->last_reply = 0;
    t->ckey_ok = false;
    c->rd = (apigen_rd){0}; /* apigen_rd_init(NULL, 0) */
    c->thread = NULL;
}

void apigen_call_stream_into(apigen_call *c, void *dst, uint64_t cap)
{
    c->sink = dst;
    c->sink_cap = dst ? cap : 0;
}

void apigen_call_bad_reply(apigen_call *c)
{
    gthr *t = c->thread;
    if (t) {
        mark_lost(t->g, "malformed reply to %s (%s)", call_name(c->api, c->call_id),
                  c->rd.err ? c->rd.err : "unexpected content");
        apigen_tp_shutdown(t->conn);
    }
    c->status = APIGEN_LOST;
}

/* Application exit: send what the exiting thread still has queued (thread
 * destructors do not run for the thread that calls exit()). */
__attribute__((destructor)) static void flush_at_exit(void)
{
    char err[256];
    for (gthr *t = tl_head; t; t = t->next) {
        if (t->gen == t->g->gen)
            pend_unreported(t, "process exit");
        if (t->locked)
            continue; /* exit() inside a call */
        tlock_take(&t->mu); /* the flusher may be sending it */
        if (!t->in_frame && t->nq && !atomic_load(&t->g->lost) && t->gen == t->g->gen) {
            if (!rt_wr_send(t->conn, &t->q, t->g->connect_ms, err, sizeof err))
                apigen_log("%s: queued calls lost at exit: %s", t->g->api->name, err);
            t->nq = 0;
            t->nsent++;
            rt_wr_truncate(&t->q, 0);
            gids_sent(t);
        }
        tlock_give(&t->mu);
    }
}

uint64_t apigen_guest_id(const apigen_call *c)
{
    gthr *t = c->thread;
    if (!t || atomic_load(&t->g->lost))
        return 0;
    uint64_t n = atomic_fetch_add(&t->g->next_gid, 1) + 1;
    if (n > 0xffffffffu)
        return 0; /* this session's guest ids are used up */
    /* unsent until this thread's queue leaves (foreign_gid); beyond
     * GIDS_MAX of them, another thread's call naming this thread's own id
     * is a stray match (a flush) */
    if (t->ngids < GIDS_MAX)
        t->gids[t->ngids] = (uint32_t)n;
    t->ngids++;
    atomic_fetch_add(&t->g->gid_unsent, 1);
    return RT_GID_BIT | t->g->salt << 32 | n;
}

/* ---- callbacks --------------------------------------------------------------------- */
static void *cb_reader(void *arg)
{
    gapi *g = arg, *home = g->home; /* frames of server g, registrations in home */
    apigen_conn *ctrl;
    unsigned gen;
    pthread_mutex_lock(&g->mu);
    ctrl = g->ctrl;
    gen = g->gen;
    pthread_mutex_unlock(&g->mu);
    uint8_t *buf = NULL;
    size_t cap = 0;
    for (;;) {
        apigen_frame_hdr h;
        char err[512];
        bool eof;
        if (!rt_recv_frame(ctrl, &h, &buf, &cap, REPLY_MAX_PAYLOAD, -1, &eof, err, sizeof err)) {
            if (gen == g->gen)
                mark_lost(g, "%s", eof ? "server closed the control connection" : err);
            break;
        }
        apigen_rd rd;
        uint64_t id;
        apigen_rd_init(&rd, buf, h.payload_len);
        if (!(h.flags & APIGEN_F_CALLBACK) || !apigen_get_u64(&rd, &id)) {
            mark_lost(g, "malformed frame on the callback channel");
            break;
        }
        gcb cb = {0};
        bool found = false;
        pthread_mutex_lock(&home->mu);
        for (size_t i = 0; i < home->ncbs; i++)
            if (home->cbs[i].id == id) {
                cb = home->cbs[i];
                found = true;
                if (cb.once)
                    home->cbs[i] = home->cbs[--home->ncbs];
                break;
            }
        pthread_mutex_unlock(&home->mu);
        const apigen_api *api = found ? cb.api : g->api;
        if (!found || cb.type != h.call_id || cb.type >= api->ncb_types || !api->cb_dispatch ||
            !api->cb_dispatch[cb.type]) {
            apigen_log("%s: ignoring callback %llu of type %u: not registered", api->name,
                       (unsigned long long)id, h.call_id);
            continue;
        }
        api->cb_dispatch[cb.type](&rd, cb.fn, cb.user);
    }
    free(buf);
    return NULL;
}

uint64_t apigen_cb_register(const apigen_api *api, unsigned cb_type, void *fn, void *user_data,
                            bool once)
{
    if (!fn)
        return 0;
    /* the registration is the API's (server 0's table); the frames come from
     * the server of the call that passes it, whose reader must run */
    gapi *h = get_gapi(api, 0);
    int b = apigen_building_server();
    unsigned k = b > 0 && rt_servers(api) > 1 ? (unsigned)b : 0;
    gapi *g = k ? get_gapi(api, k) : h;
    if (!h || !g)
        return 0;
    uint64_t id = 0;
    pthread_mutex_lock(&g->mu);
    bool ok = ensure_session(g, api);
    if (ok && !g->reader_started) {
        pthread_t th;
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        int rc = pthread_create(&th, &at, cb_reader, g);
        pthread_attr_destroy(&at);
        if (rc) {
            apigen_log("%s: cannot start the callback thread: %s", api->name, strerror(rc));
            ok = false;
        }
        g->reader_started = ok;
    }
    pthread_mutex_unlock(&g->mu);
    if (!ok)
        return 0;
    pthread_mutex_lock(&h->mu);
    if (h->ncbs == h->capcbs) {
        size_t nc = h->capcbs ? h->capcbs * 2 : 16;
        gcb *p = realloc(h->cbs, nc * sizeof *p);
        if (!p)
            goto out;
        h->cbs = p;
        h->capcbs = nc;
    }
    id = ++h->next_cb;
    h->cbs[h->ncbs++] = (gcb){api, id, cb_type, fn, user_data, once};
out:
    pthread_mutex_unlock(&h->mu);
    return id;
}
