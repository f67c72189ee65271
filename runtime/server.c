/* apigen-server: listeners, one thread per connection, handshake, dispatch.
 * Nothing a client sends is trusted: headers are checked before the payload
 * is read, call ids are bounds-checked, and a malformed frame closes only
 * the connection it came on. */
#define _GNU_SOURCE
#include "rt_internal.h"
#include "rt_metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HELLO_MAX_PAYLOAD 65536u
#define HELLO_TIMEOUT_MS 10000
#define REJECT_LOG_CAP 20 /* rejections logged per connection (a hostile client must not flood the log) */
#define DEFAULT_MAX_ARG (1ull << 30)
#define DEFAULT_MAX_CONNS 1024u
#define KEEP_BUF_MAX (16u << 20) /* larger receive/reply buffers: rt_keep_warm */

/* --isolation process: the parent only accepts and reads handshakes; every
 * new session runs in a child process forked before it touches the vendor
 * library, and the connections that join the session are passed to that
 * child (SCM_RIGHTS over a SOCK_SEQPACKET socketpair) with their handshake. */
enum { ISO_THREAD = 0, ISO_PROCESS = 1 };

typedef struct rt_child {
    struct rt_child *next;
    pid_t pid;
    int sock; /* the parent's end of the socketpair */
    const apigen_api *api;
    uint8_t key[RT_KEY_LEN];
} rt_child;

/* What the parent sends with each connection's fd (then the payload). */
typedef struct iso_msg {
    apigen_frame_hdr h;
    char peer[128];
} iso_msg;

typedef struct rt_server {
    const apigen_api *const *apis;
    unsigned napis;
    uint64_t max_arg;
    uint32_t max_payload;
    char *token;
    unsigned max_conns;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct sconn *conns;
    unsigned nconns;        /* every connection being served (under mu) */
    unsigned nmain, nlanes; /* of them, past the handshake: lanes and the rest (ISO_THREAD) */
    int isolation;          /* ISO_THREAD or ISO_PROCESS */
    rt_child *children;     /* parent, ISO_PROCESS: one per live session (under mu) */
    unsigned nchildren;
    bool is_child;          /* a session child: serves the one session below */
    uint8_t child_key[RT_KEY_LEN];
} rt_server;

typedef struct sconn {
    struct sconn *next, *prev;
    rt_server *srv;
    apigen_conn *conn;
    const apigen_api *api;
    struct apigen_session *session;
    uint8_t *rbuf;
    size_t rcap;
    apigen_wr out;
    rt_warm r_warm, out_warm;
    /* the first failed async call's error per API of the connection (a
     * family's APIs share it: each API's error waits for a sync call of
     * that API, in its values, and one API's never hides another's) */
    struct {
        const apigen_api *api;
        int64_t err;
        uint32_t call_id; /* the queued call that failed (for the log) */
        unsigned more;    /* later queued failures it stands for */
    } dfr[RT_DEFER_APIS];
    unsigned ndfr;
    rt_own_error own;       /* api.errors.last_error: the runtime's newest error */
    unsigned nrejected;
    bool pre_hello;         /* session child: the handshake frame is already in rbuf */
    apigen_frame_hdr pre_h;
    bool handed_off;        /* parent: the socket now belongs to a session child */
    rt_mx_slot mx;          /* --metrics: this connection's counters (c NULL: off) */
    const apigen_api *mx_api; /* the API of its last counted frame, */
    uint32_t mx_off;          /* and where its counters are (rt_mx_off) */
    rt_conn_ran ran;        /* its async frames run, for wait frames (RT_CALL_WAIT) */
    bool lane;              /* a lane (lanes.c): its owner's lanes took the connection */
    bool counted_main, counted_lane; /* in srv->nmain / srv->nlanes */
} sconn;

/* the slot of api's held async error, or -1 */
static int dfr_find(const sconn *sc, const apigen_api *api)
{
    for (unsigned i = 0; i < sc->ndfr; i++)
        if (sc->dfr[i].api == api)
            return (int)i;
    return -1;
}

static void dfr_drop(sconn *sc, int i)
{
    if (i >= 0)
        sc->dfr[i] = sc->dfr[--sc->ndfr];
}

/* an async call of api failed: kept unless api already holds one (the
 * first failure is the one reported; the later ones are counted) */
static void dfr_hold(sconn *sc, const apigen_api *api, int64_t err, uint32_t call_id)
{
    int at = dfr_find(sc, api);
    if (at >= 0) {
        sc->dfr[at].more++;
        return;
    }
    if (sc->ndfr == RT_DEFER_APIS) { /* more APIs on one connection than the runtime keeps */
        apigen_log("%s: an async call's error (%lld) is not kept: %u APIs already hold one on "
                   "this connection", api->name, (long long)err, (unsigned)RT_DEFER_APIS);
        return;
    }
    sc->dfr[sc->ndfr].api = api;
    sc->dfr[sc->ndfr].call_id = call_id;
    sc->dfr[sc->ndfr].more = 0;
    sc->dfr[sc->ndfr++].err = err;
}

static int sig_pipe[2] = {-1, -1};

static void on_signal(int sig)
{
    int saved = errno;
    unsigned char c = (unsigned char)sig;
    if (sig_pipe[1] >= 0)
        (void)!write(sig_pipe[1], &c, 1);
    errno = saved;
}

static const char *call_name(const apigen_api *api, uint32_t id)
{
    if (api && id < api->ncalls && api->call_names && api->call_names[id])
        return api->call_names[id];
    return "?";
}

/* ---- handshake --------------------------------------------------------------- */
/* lanes: the guest asked (RT_HELLO_TAG_LANES): u32 version (0: none) and,
 * with a version, the connection's lane key follow the session key */
static bool send_hello_reply(sconn *sc, const apigen_frame_hdr *h, uint32_t status, const char *msg,
                             const uint8_t key[RT_KEY_LEN], bool lanes_asked, uint32_t lanes_version,
                             const uint8_t *lane_key)
{
    apigen_wr w;
    size_t off;
    char err[256];
    static const uint8_t zero[RT_KEY_LEN];
    apigen_wr_init(&w);
    bool ok = rt_wr_begin_frame(&w, &off) && apigen_put_u32(&w, status) && apigen_put_str(&w, msg) &&
              apigen_put_raw(&w, key ? key : zero, RT_KEY_LEN) &&
              (!lanes_asked || apigen_put_u32(&w, lanes_version)) &&
              (!lanes_asked || !lanes_version || apigen_put_raw(&w, lane_key, RT_KEY_LEN)) &&
              rt_wr_end_frame(&w, off, APIGEN_F_HELLO | APIGEN_F_REPLY, 0, h->request_id, h->thread_id) &&
              apigen_tp_send_buf(sc->conn, w.buf, w.len, HELLO_TIMEOUT_MS, err, sizeof err);
    apigen_wr_free(&w);
    return ok;
}

static bool token_eq(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    unsigned char d = (unsigned char)(la != lb);
    for (size_t i = 0; i < la && i < lb; i++)
        d |= (unsigned char)(a[i] ^ b[i]);
    return d == 0;
}

static uint32_t route_to_child(sconn *sc, const apigen_frame_hdr *h, const rt_hello *hl,
                               char *msg, size_t msglen);

/* After the handshake of a new session that offers an arena: the guest's
 * memfd arrives beside the stream; answer whether it is mapped, and where
 * (false: the connection is unusable). */
static bool arena_exchange(sconn *sc)
{
    char tag[RT_ARENA_TAG_LEN], why[256] = "";
    uint8_t ack[RT_ARENA_ACK_LEN];
    uint64_t base = 0;
    int fd;
    if (!apigen_tp_recv_side(sc->conn, tag, sizeof tag, &fd, HELLO_TIMEOUT_MS, why, sizeof why)) {
        apigen_log("closing connection from %s: the arena did not arrive: %s", apigen_tp_peer(sc->conn),
                   why);
        return false;
    }
    /* a recording holds every byte a call uses: no arena references (replay.c
     * declines arenas the same way). A session that a family member without
     * arena use opens (a library, a monitoring API) takes it for the members
     * that use one, which come later (ack 3). */
    bool own = rt_arena_taken(sc->api), fam = !own && rt_arena_taken_family(sc->api);
    bool ok = memcmp(tag, RT_ARENA_TAG, RT_ARENA_TAG_LEN) == 0,
         wanted = (own || fam) && !rt_rec_active;
    if (!ok || !wanted) {
        if (fd >= 0)
            close(fd);
        snprintf(why, sizeof why, "malformed");
        ok = false;
    } else {
        ok = rt_arena_adopt(sc->session, fd, &base, why, sizeof why);
    }
    if (!ok && wanted)
        apigen_log("%s: no shared-memory arena for %s: %s", sc->api->name, apigen_tp_peer(sc->conn), why);
    ack[0] = !wanted ? 2 : !ok ? 0 : own ? 1 : 3;
    for (int i = 0; i < 8; i++)
        ack[1 + i] = (uint8_t)(base >> (8 * i));
    if (!apigen_tp_send_side(sc->conn, ack, sizeof ack, -1, HELLO_TIMEOUT_MS, why, sizeof why)) {
        apigen_log("closing connection from %s: %s", apigen_tp_peer(sc->conn), why);
        return false;
    }
    return true;
}

/* The served API named name, checked against the guest's fingerprint and
 * version; RT_HELLO_OK, else the status and msg. */
static uint32_t check_api(const rt_server *srv, const char *name, uint64_t fp,
                          uint64_t api_version, const apigen_api **out, char *msg, size_t msglen)
{
    const apigen_api *a = NULL;
    for (unsigned i = 0; i < srv->napis; i++)
        if (strcmp(srv->apis[i]->name, name) == 0)
            a = srv->apis[i];
    *out = a;
    if (!a) {
        int n = snprintf(msg, msglen, "API '%s' is not served here (server serves:", name);
        for (unsigned i = 0; i < srv->napis && n > 0 && (size_t)n < msglen; i++)
            n += snprintf(msg + n, msglen - (size_t)n, " %s", srv->apis[i]->name);
        if (n > 0 && (size_t)n < msglen - 1)
            snprintf(msg + n, msglen - (size_t)n, ")");
        return RT_HELLO_API;
    }
    if (api_version != a->api_version) {
        /* before the fingerprint, which differs too: say which versions */
        char gv[32], sv[32];
        snprintf(gv, sizeof gv, "%llu", (unsigned long long)api_version);
        snprintf(sv, sizeof sv, "%llu", (unsigned long long)a->api_version);
        snprintf(msg, msglen,
                 "API '%s' version mismatch: guest built for %s %s, server is %s %s "
                 "(generate the stub and the server from the same headers)",
                 name, name, api_version ? gv : "(no version)", name,
                 a->api_version ? sv : "(no version)");
        return RT_HELLO_FINGERPRINT;
    }
    if (fp != a->fingerprint) {
        snprintf(msg, msglen,
                 "API '%s' fingerprint mismatch: guest 0x%016llx, server 0x%016llx "
                 "(stub and server were generated from different headers or specs)",
                 name, (unsigned long long)fp, (unsigned long long)a->fingerprint);
        return RT_HELLO_FINGERPRINT;
    }
    return RT_HELLO_OK;
}

/* APIGEN_LANES=0 or 1 in the server's environment: it grants no lanes (the
 * guests keep one connection each), as a server without them would. */
static bool server_lanes_on(void)
{
    static int on = -1;
    if (on < 0) {
        const char *v = getenv("APIGEN_LANES");
        on = !(v && (strcmp(v, "0") == 0 || strcmp(v, "1") == 0));
    }
    return on;
}

/* --max-conns, at the handshake (ISO_THREAD): a connection that is not a
 * lane takes one of max_conns places; a lane takes none (it is bounded by
 * its owner's lane count, RT_LANES_MAX at most, and the accept loop lets
 * the lanes the server still expects through: rt_lanes_expected), so a
 * guest's lanes neither are refused nor crowd out other clients. */
static bool count_conn(sconn *sc, bool lane)
{
    rt_server *srv = sc->srv;
    bool ok = true;
    pthread_mutex_lock(&srv->mu);
    if (lane) {
        srv->nlanes++;
        sc->counted_lane = true;
    } else if (srv->nmain >= srv->max_conns) {
        ok = false;
    } else {
        srv->nmain++;
        sc->counted_main = true;
    }
    pthread_mutex_unlock(&srv->mu);
    return ok;
}

static bool handshake(sconn *sc)
{
    rt_server *srv = sc->srv;
    apigen_frame_hdr h;
    char err[256], msg[768];
    bool eof;
    if (sc->pre_hello) {
        h = sc->pre_h;
    } else if (!rt_recv_frame(sc->conn, &h, &sc->rbuf, &sc->rcap, HELLO_MAX_PAYLOAD, HELLO_TIMEOUT_MS,
                              &eof, err, sizeof err)) {
        if (!eof)
            apigen_log("closing connection from %s before the handshake: %s", apigen_tp_peer(sc->conn), err);
        return false;
    }
    if (!(h.flags & APIGEN_F_HELLO) || (h.flags & APIGEN_F_REPLY) || h.call_id != 0) {
        apigen_log("closing connection from %s: first frame is not a handshake", apigen_tp_peer(sc->conn));
        return false;
    }
    rt_hello hl;
    const char *why = NULL;
    uint32_t st = rt_hello_parse(sc->rbuf, h.payload_len, &hl, &why);
    const char *name = hl.name, *token = hl.token;
    uint64_t fp = hl.fp, api_version = hl.api_version, arena_size = hl.arena_size;
    uint8_t join = hl.join, key[RT_KEY_LEN];
    memcpy(key, hl.key, RT_KEY_LEN);
    uint32_t nmore = hl.nmore;
    const apigen_api *list[RT_FAMILY_MAX];
    msg[0] = 0;
    if (st == RT_HELLO_PROTO)
        snprintf(msg, sizeof msg, "protocol version mismatch: guest speaks %u, server speaks %u and %u",
                 hl.proto, APIGEN_PROTO_VERSION, RT_HELLO_V3);
    if (st == RT_HELLO_OK)
        st = check_api(srv, name, fp, api_version, &sc->api, msg, sizeof msg);
    list[0] = sc->api;
    for (uint32_t i = 0; i < nmore && st == RT_HELLO_OK; i++) {
        if ((st = check_api(srv, hl.more_name[i], hl.more_fp[i], hl.more_version[i], &list[i + 1], msg,
                            sizeof msg)) == RT_HELLO_OK &&
            !(list[0]->family && rt_same_family(list[0], list[i + 1]))) {
            snprintf(msg, sizeof msg, "API '%s' is not of the family of '%s' (%s): one session "
                     "serves the APIs of one family", hl.more_name[i], list[0]->name,
                     list[0]->family ? list[0]->family : "no family");
            st = RT_HELLO_API;
        }
    }
    if (st == RT_HELLO_MALFORMED)
        snprintf(msg, sizeof msg, "malformed handshake: %s", why);
    if (st == RT_HELLO_OK) {
        if (srv->token && (!token || !token_eq(token, srv->token))) {
            snprintf(msg, sizeof msg, "authentication failed: %s (set APIGEN_TOKEN to the server's token)",
                     token ? "wrong token" : "no token sent");
            st = RT_HELLO_AUTH;
        } else if (srv->isolation == ISO_THREAD && !count_conn(sc, hl.lane)) {
            snprintf(msg, sizeof msg, "too many connections (%u, --max-conns)", srv->max_conns);
            st = RT_HELLO_SESSION;
        } else if (srv->isolation == ISO_PROCESS && !srv->is_child) {
            /* the session's child answers the handshake */
            st = route_to_child(sc, &h, &hl, msg, sizeof msg);
            if (st == RT_HELLO_OK)
                return false;
        } else if (join) {
            sc->session = rt_session_join(sc->api, key);
            if (!sc->session) {
                snprintf(msg, sizeof msg, "unknown session key (the guest's session has ended)");
                st = RT_HELLO_SESSION;
            } else if ((st = rt_session_add_apis(sc->session, list, nmore + 1, msg, sizeof msg)) !=
                       RT_HELLO_OK) {
                rt_session_release(sc->session, sc->conn);
                sc->session = NULL;
            }
        } else {
            sc->session = rt_session_create_keyed(sc->api, sc->conn,
                                                  srv->is_child ? srv->child_key : NULL);
            if (sc->session) /* who it serves, for process lists (procs.c) */
                rt_session_set_guest(sc->session, hl.pid, hl.pidns);
            if (sc->session && rt_mx_on)
                rt_session_set_mx(sc->session, rt_mx_session_open(sc->api, apigen_tp_peer(sc->conn),
                                                                  hl.pid, hl.comm));
            if (!sc->session) {
                snprintf(msg, sizeof msg, "server cannot create a session (out of memory or entropy)");
                st = RT_HELLO_SESSION;
            } else if (nmore &&
                       (st = rt_session_add_apis(sc->session, list, nmore + 1, msg, sizeof msg)) !=
                           RT_HELLO_OK) {
                rt_session_release(sc->session, sc->conn);
                sc->session = NULL;
            }
        }
    }
    /* a lane: joins the session, then belongs to the connection whose
     * thread id and lane key it names (checked now, taken after the reply) */
    if (st == RT_HELLO_OK && hl.lane) {
        if (hl.lane_version != RT_LANES_VERSION) {
            snprintf(msg, sizeof msg, "lanes protocol version mismatch: guest speaks %u, server "
                     "speaks %u", hl.lane_version, RT_LANES_VERSION);
            st = RT_HELLO_PROTO;
        } else {
            st = rt_lanes_offer(sc->session, h.thread_id, hl.lane_key, hl.lane_index, hl.lane_count,
                                hl.lane_piece, hl.lane_min, NULL, msg, sizeof msg);
        }
        if (st != RT_HELLO_OK) {
            rt_session_release(sc->session, sc->conn);
            sc->session = NULL;
        }
    }
    if (st != RT_HELLO_OK) {
        apigen_log("refused %s: %s", apigen_tp_peer(sc->conn), msg);
        (void)send_hello_reply(sc, &h, st, msg, NULL, false, 0, NULL);
        return false;
    }
    rt_session_key(sc->session, key);
    if (hl.lane) {
        if (!send_hello_reply(sc, &h, RT_HELLO_OK, "ok", key, false, 0, NULL))
            return false;
        if (rt_lanes_offer(sc->session, h.thread_id, hl.lane_key, hl.lane_index, hl.lane_count,
                           hl.lane_piece, hl.lane_min, sc->conn, msg, sizeof msg) != RT_HELLO_OK) {
            apigen_log("closing lane from %s: %s", apigen_tp_peer(sc->conn), msg);
            return false;
        }
        sc->lane = true; /* the owner closes it */
        if (apigen_tracing())
            apigen_trace("server: lane %u of %u from %s", hl.lane_index, hl.lane_count,
                         apigen_tp_peer(sc->conn));
        return true;
    }
    /* a thread's connection that may open lanes over a transport where they gain */
    bool lanes_asked = hl.lanes_version != 0;
    uint8_t lane_key[RT_KEY_LEN];
    uint32_t lanes_version = 0;
    if (lanes_asked && hl.lanes_version == RT_LANES_VERSION && h.thread_id && server_lanes_on() &&
        apigen_tp_lanes_useful(sc->conn) && rt_random_key(lane_key) &&
        rt_lanes_new_server(sc->conn, sc->session, h.thread_id, lane_key))
        lanes_version = RT_LANES_VERSION;
    /* before the reply: once the guest has it, another of its threads may
     * wait for this connection's frames */
    rt_session_conn_open(sc->session, &sc->ran, h.thread_id);
    /* recorded before the reply too: once the guest has it, its other
     * threads' connections may join, and their hellos must follow this one */
    if (rt_rec_active)
        rt_rec_hello(sc->conn, sc->session, join, sc->rbuf, h.payload_len, key);
    /* and traced before it: a guest that exits right after finds the line */
    if (apigen_tracing())
        apigen_trace("server: %s %s session from %s", sc->api->name, join ? "joined" : "new",
                     apigen_tp_peer(sc->conn));
    if (!send_hello_reply(sc, &h, RT_HELLO_OK, "ok", key, lanes_asked, lanes_version, lane_key))
        return false;
    if (arena_size && !arena_exchange(sc))
        return false;
    rt_arena_bind(sc->session);
    return true;
}

/* ---- dispatch ----------------------------------------------------------------- */
/* The reply's prefix (rt_internal.h), len bytes that rt_wr_begin_reply
 * zeroed: RT_REPLY_PREFIX, or RT_REPLY_PREFIX_VALUE while an async error
 * is held (reported when the call went through, else kept for the next). */
static void put_prefix(uint8_t *p, size_t len, apigen_status status, bool report, int64_t deferred)
{
    p[0] = (uint8_t)status;
    if (len == RT_REPLY_PREFIX)
        return;
    p[1] = RT_REPLY_VALUE | (report ? RT_REPLY_DEFERRED : 0);
    uint64_t d = report ? (uint64_t)deferred : 0;
    for (int i = 0; i < 8; i++)
        p[2 + i] = (uint8_t)(d >> (8 * i));
}

/* APIGEN_TRACE's line of a served call: the time from its request to its
 * reply ready. Written before the reply leaves: once the guest has it, the
 * guest may exit and whoever watches the log expects the line there. */
static void trace_call(const apigen_api *api, uint32_t call_id, bool is_async, apigen_status st,
                       uint64_t t0)
{
    apigen_trace("server: %s.%s%s -> %s (%llu us)", api->name,
                 call_id == RT_CALL_ARENA ? "apigenArenaSegment" : call_name(api, call_id),
                 is_async ? " [async]" : "", apigen_status_str(st),
                 (unsigned long long)((apigen_now_ns() - t0) / 1000));
}

/* false: the connection must be closed. rd: the request's payload (only
 * its head when pl->pending: a call that may stream its last in-buffer). */
static bool dispatch(sconn *sc, const apigen_frame_hdr *h, apigen_rd *rdp, rt_pull *pl)
{
    /* the frame's API: its index in the session (0 with one API) */
    const apigen_api *api = rt_session_api(sc->session, h->call_id >> RT_CALL_API_SHIFT);
    uint32_t call_id = h->call_id & RT_CALL_LOCAL_MASK;
    bool bad_api = !api;
    if (bad_api) {
        api = sc->api; /* its error values say it */
        call_id = UINT32_MAX;
    }
    bool is_async = (h->flags & APIGEN_F_ASYNC) != 0;
    apigen_rd rd = *rdp;
    size_t off;
    char err[256];
    uint64_t t0 = apigen_tracing() ? apigen_now_ns() : 0;
    uint64_t m0 = sc->mx.c ? rt_mx_ticks() : 0;
    if (m0 && api != sc->mx_api) { /* a family's connection carries several APIs' calls */
        sc->mx_api = api;
        sc->mx_off = rt_mx_off(api);
    }
    bool mx_count = m0 && call_id < api->ncalls && sc->mx_off != UINT32_MAX;
    rt_dispatch rtd = {sc->conn, h, pl->pending ? pl : NULL, {0}, {0}, &sc->own, false, false};

    /* an async call's error is reported to a call of the same API (its values) */
    int held_at = dfr_find(sc, api);
    bool held = held_at >= 0;
    size_t prefix = !is_async && held ? RT_REPLY_PREFIX_VALUE : RT_REPLY_PREFIX;
    if (!rt_wr_begin_reply(&sc->out, &off, prefix)) {
        apigen_log("closing connection from %s: out of memory", apigen_tp_peer(sc->conn));
        return false;
    }
    apigen_call_ctx cx = {0};
    cx.api = api;
    cx.session = sc->session;
    cx.rd = &rd;
    cx.wr = &sc->out;
    cx.call_id = call_id;
    cx.is_async = is_async;
    cx.status = APIGEN_OK;
    cx.budget = sc->srv->max_arg;
    cx.rt = &rtd;

    if (bad_api)
        apigen_reject(&cx, APIGEN_BAD_CALL, "API index of the call id");
    else if (call_id == RT_CALL_ARENA && !is_async)
        rt_arena_call(&cx); /* the runtime's own: an arena segment (arena_host.c) */
    else if (call_id >= api->ncalls)
        apigen_reject(&cx, APIGEN_BAD_CALL, "call id");
    else if (!api->handlers || !api->handlers[call_id])
        apigen_reject(&cx, APIGEN_UNSUPPORTED, call_name(api, call_id));
    else
        api->handlers[call_id](&cx);
    if (cx.dev_taken)
        apigen_dev_end(&cx, false); /* a range taken by a handler that returned early comes back */
    if (cx.status == APIGEN_OK && sc->out.failed)
        apigen_reject(&cx, APIGEN_NO_MEMORY, "reply");
    /* the rest of a streamed argument: read before the reply (nothing to do
     * for a request that came whole and streamed nothing) */
    if ((rtd.pull || rtd.in.on || rtd.out.on) && !rt_stream_finish(&rtd)) {
        rt_scratch_free_all(&cx);
        return false;
    }

    if (cx.status != APIGEN_OK && sc->nrejected++ < REJECT_LOG_CAP)
        apigen_log("%s.%s from %s rejected: %s (%s)%s", api->name, call_name(api, call_id),
                   apigen_tp_peer(sc->conn), apigen_status_str(cx.status),
                   cx.reject_what ? cx.reject_what : "-",
                   sc->nrejected == REJECT_LOG_CAP ? "; further rejections not logged" : "");

    /* The thread's last error, in call order: what the runtime refused (or
     * hand-written host code decided) is newer than the library's own until
     * the library returns an error again. */
    if (!rtd.last_error_call) {
        if (cx.status != APIGEN_OK) {
            sc->own.has = true;
            sc->own.err = api->status_error[cx.status];
            sc->own.api = api;
        } else if (cx.has_result && cx.result_error != api->success_value) {
            /* the library's own state is the newer, unless the error never
             * reached it (apigen_result_own, or its peek says otherwise) */
            sc->own.has = rtd.result_own ||
                          (api->last_error_peek && api->last_error_peek() != cx.result_error);
            sc->own.err = cx.result_error;
            sc->own.api = api;
        }
    }
    /* --metrics: counted before the reply leaves, so a guest that saw the
     * reply finds the call counted (even if this process dies next) */
    bool mx_err = cx.status != APIGEN_OK || (cx.has_result && cx.result_error != api->success_value);
    uint64_t mx_in = APIGEN_FRAME_HDR_SIZE + (uint64_t)h->payload_len;
    bool ok = true;
    if (is_async) {
        if (mx_count)
            rt_mx_count(&sc->mx, sc->mx_off, call_id, mx_err, mx_in, 0, rt_mx_ticks() - m0);
        /* No reply: the first failure is reported with the next sync reply. */
        if (cx.status != APIGEN_OK)
            dfr_hold(sc, api, api->status_error[cx.status], call_id);
        else if (cx.has_result && cx.result_error != api->success_value)
            dfr_hold(sc, api, cx.result_error, call_id);
    } else {
        bool report = cx.status == APIGEN_OK && held && !rtd.last_error_call;
        if (rtd.last_error_call && cx.status == APIGEN_OK && held) {
            /* the last error it returned includes the held async error (or a
             * newer one): reported */
            dfr_drop(sc, held_at);
            held_at = -1;
        }
        if (cx.status != APIGEN_OK) {
            /* drop whatever the handler wrote before it rejected */
            rt_wr_truncate(&sc->out, sc->out.base + prefix);
        }
        put_prefix(sc->out.buf + sc->out.base, prefix, cx.status, report,
                   report ? sc->dfr[held_at].err : 0);
        if (report && sc->dfr[held_at].more) /* natively each would have said its own */
            apigen_log("%s: %u more queued calls failed after %s (%lld), whose error %s returned "
                       "to the guest thread %s", api->name, sc->dfr[held_at].more,
                       call_name(api, sc->dfr[held_at].call_id), (long long)sc->dfr[held_at].err,
                       call_name(api, call_id), apigen_tp_peer(sc->conn));
        if (report)
            dfr_drop(sc, held_at);
        /* what the call printed (a kernel's printf at a synchronization) goes
         * out first, so the guest has written it when the call returns */
        if (api->forward_output && !rt_output_forward(sc->conn, h))
            ok = false;
        bool framed = ok && rt_wr_end_frame(&sc->out, off, APIGEN_F_REPLY, h->call_id,
                                            h->request_id, h->thread_id);
        if (framed && rt_rec_active)
            rt_rec_sent_wr(sc->conn, &sc->out, off);
        if (mx_count && framed)
            rt_mx_count(&sc->mx, sc->mx_off, call_id, mx_err, mx_in,
                        sc->out.len + sc->out.ext_total, rt_mx_ticks() - m0);
        if (t0)
            trace_call(api, call_id, false, cx.status, t0);
        if (ok && (!framed || !rt_wr_send(sc->conn, &sc->out, -1, err, sizeof err))) {
            apigen_log("closing connection from %s: sending reply to %s: %s", apigen_tp_peer(sc->conn),
                       call_name(api, call_id), sc->out.failed ? "reply too large" : err);
            ok = false;
        }
    }
    rt_scratch_free_all(&cx);
    if (t0 && is_async) /* no reply: a sync call's line went before its reply */
        trace_call(api, call_id, true, cx.status, t0);
    /* Do not keep a huge reply buffer per thread, unless replies used most of
     * it lately (large copies between small calls reuse warm memory). */
    if (!rt_keep_warm(&sc->out_warm, sc->out.cap, is_async ? 0 : sc->out.len, KEEP_BUF_MAX))
        apigen_wr_free(&sc->out);
    return ok;
}

/* Whether a request arrives head first: its last in-buffer may stream to
 * the call's handler (the API says which calls; a frame's flag alone never
 * decides, since a handler of another call keeps pointers into the payload
 * that receiving the rest later could move). */
static bool stream_head_first(const sconn *sc, const apigen_frame_hdr *h)
{
    const apigen_api *api = (h->flags & APIGEN_F_BULK) && sc->session
                                ? rt_session_api(sc->session, h->call_id >> RT_CALL_API_SHIFT)
                                : NULL;
    uint32_t call_id = h->call_id & RT_CALL_LOCAL_MASK;
    /* recording: whole requests, so that their bytes can be written */
    return !rt_rec_active && api && api->stream_in_calls && call_id < api->ncalls &&
           api->stream_in_calls[call_id] &&
           !(h->flags & (APIGEN_F_BYE | APIGEN_F_HELLO | APIGEN_F_REPLY | APIGEN_F_CALLBACK)) &&
           !(h->call_id == RT_CALL_WAIT && (h->flags & APIGEN_F_ASYNC));
}

/* The guest thread is gone with queued calls' errors that no call of their
 * API returned (it made none after them): never dropped silently. */
static void dfr_unreported(sconn *sc)
{
    for (unsigned i = 0; i < sc->ndfr; i++)
        apigen_log("%s: queued call %s failed with %lld%s, and the guest thread %s made no later "
                   "%s call that could return it: the error was never reported to the program",
                   sc->dfr[i].api->name, call_name(sc->dfr[i].api, sc->dfr[i].call_id),
                   (long long)sc->dfr[i].err,
                   sc->dfr[i].more ? " (and later queued calls failed too)" : "",
                   sc->conn ? apigen_tp_peer(sc->conn) : "?", sc->dfr[i].api->name);
    sc->ndfr = 0;
}

static void *conn_main(void *arg)
{
    sconn *sc = arg;
    rt_server *srv = sc->srv;
    apigen_wr_init(&sc->out);
    if (handshake(sc) && !sc->lane) {
        if (rt_mx_on)
            rt_mx_claim(&sc->mx);
        for (;;) {
            apigen_frame_hdr h;
            char err[256];
            bool eof;
            apigen_rd rd;
            rt_pull pl;
            size_t have;
            if (!rt_recv_hdr(sc->conn, &h, srv->max_payload, -1, &eof, sc->rbuf, sc->rcap, &have,
                             err, sizeof err) ||
                !rt_recv_payload(sc->conn, &h, &sc->rbuf, &sc->rcap, have, -1,
                                 stream_head_first(sc, &h), err, sizeof err, &pl, &rd)) {
                if (!eof)
                    apigen_log("closing connection from %s: %s", apigen_tp_peer(sc->conn), err);
                break;
            }
            if (h.flags & APIGEN_F_BYE)
                break;
            if (rt_rec_active && !(h.call_id == RT_CALL_WAIT && (h.flags & APIGEN_F_ASYNC))) {
                apigen_frame_hdr rh = h; /* the frame as it means: over lanes or not is transport */
                rh.flags &= (uint16_t)~APIGEN_F_LANES;
                rt_rec_request(sc->conn, &rh, rd.base); /* wait frames depend on timing */
            }
            if (h.flags & (APIGEN_F_HELLO | APIGEN_F_REPLY | APIGEN_F_CALLBACK)) {
                apigen_log("closing connection from %s: unexpected frame flags 0x%x",
                           apigen_tp_peer(sc->conn), h.flags);
                break;
            }
            if (h.call_id == RT_CALL_WAIT && (h.flags & APIGEN_F_ASYNC)) {
                /* run what follows after the session's other connections ran
                 * the async frames the guest sent before (guest.c) */
                apigen_rd rd;
                uint64_t n;
                apigen_rd_init(&rd, sc->rbuf, h.payload_len);
                if (!apigen_get_u64(&rd, &n) || (h.payload_len - 8) % 16) {
                    apigen_log("closing connection from %s: malformed wait frame",
                               apigen_tp_peer(sc->conn));
                    break;
                }
                if (!rt_session_wait_async(sc->session, n, sc->rbuf + 8,
                                           (h.payload_len - 8) / 16))
                    apigen_log("%s: %s: queued calls of other threads did not arrive within %d ms; "
                               "going on", sc->api->name, apigen_tp_peer(sc->conn), RT_WAIT_MS);
                continue;
            }
            bool ok = dispatch(sc, &h, &rd, &pl);
            if (h.flags & APIGEN_F_ASYNC)
                rt_session_async_ran(sc->session, &sc->ran);
            if (!ok)
                break;
            /* a big argument once: do not keep its buffer (kept while big ones follow).
             * It is never registered with the accelerator (apigen_set_host_memory):
             * the guest's in-bytes are pageable memory to the API, which copies
             * them before an asynchronous call returns; registered, the buffer
             * would be read by a transfer that outlives the call while the next
             * frame overwrites it (the first bytes of a 9 MiB asynchronous
             * host-to-device copy were the next frame's, 2026-11-26). */
            if (!rt_keep_warm(&sc->r_warm, sc->rcap, h.payload_len, KEEP_BUF_MAX)) {
                free(sc->rbuf);
                sc->rbuf = NULL;
                sc->rcap = 0;
            }
        }
    }
    /* Wake anyone sending callbacks on it, then give up the session (the
     * last connection destroys what the client created). A socket handed to
     * a session child is only closed here: shutdown would end it there too. */
    rt_mx_unclaim(&sc->mx);
    dfr_unreported(sc);
    if (sc->lane) { /* its owner's lanes hold the connection now */
        pthread_mutex_lock(&srv->mu);
        sc->conn = NULL;
        pthread_mutex_unlock(&srv->mu);
    }
    if (!sc->handed_off)
        apigen_tp_shutdown(sc->conn);
    if (rt_rec_active)
        rt_rec_end(sc->conn);
    rt_session_conn_close(sc->session, &sc->ran); /* runs nothing more: no wait for it */
    rt_session_release(sc->session, sc->conn);
    rt_arena_unbind(); /* after the session's cleanup, which may still use it */
    /* Under mu: the shutdown paths walk srv->conns and wake each conn; they
     * must never see one that is already closed (NULL is skipped). */
    pthread_mutex_lock(&srv->mu);
    if (sc->handed_off) {
        apigen_tp_release(sc->conn); /* the session's process serves it */
    } else {
        rt_lanes_free(sc->conn);
        apigen_tp_close(sc->conn);
    }
    sc->conn = NULL;
    pthread_mutex_unlock(&srv->mu);
    free(sc->rbuf);
    apigen_wr_free(&sc->out);

    pthread_mutex_lock(&srv->mu);
    if (sc->prev)
        sc->prev->next = sc->next;
    else
        srv->conns = sc->next;
    if (sc->next)
        sc->next->prev = sc->prev;
    srv->nconns--;
    srv->nmain -= sc->counted_main;
    srv->nlanes -= sc->counted_lane;
    /* A session child has served its one session: exiting frees whatever the
     * client left on the device, even after a fault that poisoned it. Only
     * once every connection's thread is past its cleanup: the session's other
     * connection may still be closing its lanes (their totals, traced and
     * counted, were lost when the first to finish exited). */
    bool child_done = srv->is_child && srv->nconns == 0 && rt_session_count() == 0;
    pthread_cond_broadcast(&srv->cv);
    pthread_mutex_unlock(&srv->mu);
    if (child_done)
        _exit(0);
    free(sc);
    return NULL;
}

/* For the fuzzer and tests: serves one connection on the calling thread
 * (handshake, calls, session release) as a server with these settings would,
 * and closes it. */
void rt_serve_conn(const apigen_api *const *apis, unsigned napis, uint64_t max_arg,
                   const char *token, apigen_conn *conn)
{
    rt_server srv = {0};
    srv.apis = apis;
    srv.napis = napis;
    srv.max_arg = max_arg;
    uint64_t mp = max_arg + (1u << 20);
    srv.max_payload = mp > UINT32_MAX || mp < max_arg ? UINT32_MAX : (uint32_t)mp;
    srv.token = (char *)token;
    srv.max_conns = 1;
    pthread_mutex_init(&srv.mu, NULL);
    pthread_cond_init(&srv.cv, NULL);
    sconn *sc = calloc(1, sizeof *sc);
    if (sc) {
        sc->srv = &srv;
        sc->conn = conn;
        srv.conns = sc;
        srv.nconns = 1;
        conn_main(sc); /* frees sc, closes conn */
    } else {
        apigen_tp_close(conn);
    }
    pthread_mutex_destroy(&srv.mu);
    pthread_cond_destroy(&srv.cv);
}

/* ---- process-per-session isolation --------------------------------------------- */
static bool key_eq(const uint8_t *a, const uint8_t *b)
{
    uint8_t d = 0;
    for (unsigned i = 0; i < RT_KEY_LEN; i++)
        d |= (uint8_t)(a[i] ^ b[i]);
    return d == 0;
}

/* Sends one connection (its fds, handshake header and payload) to a child. */
static bool send_conn(int sock, const int *fds, int nfds, const iso_msg *m, const uint8_t *payload,
                      uint32_t len)
{
    struct iovec iov[2] = {{(void *)m, sizeof *m}, {(void *)payload, len}};
    union {
        char buf[CMSG_SPACE(2 * sizeof(int))];
        struct cmsghdr align;
    } u;
    struct msghdr mh;
    memset(&mh, 0, sizeof mh);
    memset(&u, 0, sizeof u);
    mh.msg_iov = iov;
    mh.msg_iovlen = len ? 2 : 1;
    mh.msg_control = u.buf;
    mh.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
    memcpy(CMSG_DATA(cm), fds, (size_t)nfds * sizeof(int));
    for (int tries = 0; tries < 100; tries++) { /* a child that does not read: 5 s at most */
        ssize_t k = sendmsg(sock, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k == (ssize_t)(sizeof *m + len))
            return true;
        if (k >= 0 || (errno != EAGAIN && errno != EINTR))
            return false;
        struct pollfd pf = {sock, POLLOUT, 0};
        (void)poll(&pf, 1, 50);
    }
    return false;
}

/* Receives one connection (1 or 2 fds: apigen_tp_handoff_fds); 0: the
 * parent is gone, -1: a bad message. */
static int recv_conn(int sock, iso_msg *m, uint8_t *payload, size_t cap, int fd[2], int *nfds)
{
    struct iovec iov[2] = {{m, sizeof *m}, {payload, cap}};
    union {
        char buf[CMSG_SPACE(2 * sizeof(int))];
        struct cmsghdr align;
    } u;
    struct msghdr mh;
    memset(&mh, 0, sizeof mh);
    mh.msg_iov = iov;
    mh.msg_iovlen = 2;
    mh.msg_control = u.buf;
    mh.msg_controllen = sizeof u.buf;
    ssize_t k;
    do
        k = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
    while (k < 0 && errno == EINTR);
    if (k <= 0)
        return 0;
    *nfds = 0;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS && *nfds == 0 &&
            cm->cmsg_len >= CMSG_LEN(sizeof(int)) && cm->cmsg_len <= CMSG_LEN(2 * sizeof(int))) {
            *nfds = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
            memcpy(fd, CMSG_DATA(cm), (size_t)*nfds * sizeof(int));
        }
    if (*nfds == 0 || (size_t)k < sizeof *m || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
        (size_t)k - sizeof *m != m->h.payload_len) {
        for (int i = 0; i < *nfds; i++)
            close(fd[i]);
        return -1;
    }
    m->peer[sizeof m->peer - 1] = 0;
    return 1;
}

/* Closes every descriptor a session child inherited except stdio, its
 * socketpair and the trace file: other clients' sockets stay with them. */
static void close_inherited_fds(int keep1, int keep2)
{
    for (;;) {
        int fds[256], n = 0;
        DIR *d = opendir("/proc/self/fd");
        if (!d) {
            for (int fd = 3; fd < 65536; fd++)
                if (fd != keep1 && fd != keep2)
                    (void)close(fd);
            return;
        }
        struct dirent *e;
        while ((e = readdir(d)) && n < 256) {
            int fd = atoi(e->d_name);
            if (e->d_name[0] >= '0' && e->d_name[0] <= '9' && fd > 2 && fd != keep1 &&
                fd != keep2 && fd != dirfd(d))
                fds[n++] = fd;
        }
        closedir(d);
        for (int i = 0; i < n; i++)
            (void)close(fds[i]);
        if (n < 256)
            return;
    }
}

static void *conn_main(void *arg);

/* The body of a session child: serves the connections its parent passes
 * until its session ends (conn_main exits then) or the parent goes away. */
static void child_main(const rt_server *parent, int sock, const uint8_t key[RT_KEY_LEN])
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGCHLD, &sa, NULL);
    sig_pipe[0] = sig_pipe[1] = -1;
    close_inherited_fds(sock, rt_trace_fd());
    rt_crash_report_install();
    /* this process serves one client: what its libraries print is that
     * client's (api.forward_output) */
    for (unsigned i = 0; i < parent->napis; i++)
        if (parent->apis[i]->forward_output) {
            if (!rt_output_capture())
                apigen_log("session child: cannot capture stdout (%s): kernels' output stays in "
                           "the server's", strerror(errno));
            break;
        }

    rt_server *srv = calloc(1, sizeof *srv);
    uint8_t *payload = malloc(HELLO_MAX_PAYLOAD);
    if (!srv || !payload)
        _exit(1);
    srv->apis = parent->apis;
    srv->napis = parent->napis;
    srv->max_arg = parent->max_arg;
    srv->max_payload = parent->max_payload;
    srv->token = parent->token;
    srv->max_conns = parent->max_conns;
    srv->isolation = ISO_PROCESS;
    srv->is_child = true;
    rt_procs_own();
    memcpy(srv->child_key, key, RT_KEY_LEN);
    pthread_mutex_init(&srv->mu, NULL);
    pthread_cond_init(&srv->cv, NULL);
    for (;;) {
        iso_msg m;
        int fd[2], nfds = 0;
        int r = recv_conn(sock, &m, payload, HELLO_MAX_PAYLOAD, fd, &nfds);
        if (r == 0)
            break;
        if (r < 0)
            continue;
        apigen_conn *conn;
        char err[256];
        if (!apigen_tp_adopt_fds(fd, nfds, m.peer, &conn, err, sizeof err)) {
            apigen_log("session child: %s", err);
            continue;
        }
        sconn *sc = calloc(1, sizeof *sc);
        uint8_t *buf = malloc(m.h.payload_len ? m.h.payload_len : 1);
        pthread_t t;
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        bool started = false;
        if (sc && buf) {
            memcpy(buf, payload, m.h.payload_len);
            sc->srv = srv;
            sc->conn = conn;
            sc->rbuf = buf;
            sc->rcap = m.h.payload_len ? m.h.payload_len : 1;
            sc->pre_hello = true;
            sc->pre_h = m.h;
            pthread_mutex_lock(&srv->mu);
            sc->next = srv->conns;
            if (srv->conns)
                srv->conns->prev = sc;
            srv->conns = sc;
            srv->nconns++;
            pthread_mutex_unlock(&srv->mu);
            started = pthread_create(&t, &at, conn_main, sc) == 0;
            if (!started) {
                pthread_mutex_lock(&srv->mu);
                srv->conns = sc->next;
                if (sc->next)
                    sc->next->prev = NULL;
                srv->nconns--;
                pthread_mutex_unlock(&srv->mu);
            }
        }
        pthread_attr_destroy(&at);
        if (!started) {
            apigen_log("session child: cannot serve %s: out of memory or threads", m.peer);
            free(sc);
            free(buf);
            apigen_tp_close(conn);
        }
    }
    /* The parent is gone (shut down or crashed): end the session now. */
    pthread_mutex_lock(&srv->mu);
    for (sconn *sc = srv->conns; sc; sc = sc->next) {
        apigen_tp_shutdown(sc->conn);
        rt_lanes_shutdown(sc->conn);
    }
    pthread_mutex_unlock(&srv->mu);
    for (int i = 0; i < 50; i++) {
        pthread_mutex_lock(&srv->mu);
        unsigned n = srv->nconns;
        pthread_mutex_unlock(&srv->mu);
        if (!n)
            break;
        struct timespec ts = {0, 100000000};
        nanosleep(&ts, NULL);
    }
    _exit(0);
}

/* Before a session process is forked (srv->mu held): the child starts with
 * every lock as this process's other threads held it at that moment, and a
 * lock held then stays held there (ASan's allocator, taken by a handshake
 * thread that was allocating: the child's first allocation never returned,
 * a bad-input test of a library, 2026-11-27, while another client's lanes shook
 * hands). This process's other threads are short handshakes: wait until
 * this is the only one left, at most 50 ms (a client that never sends its
 * hello must not hold the sessions of others up longer). */
static void quiesce_for_fork(rt_server *srv)
{
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_nsec += 50 * 1000000L;
    if (dl.tv_nsec >= 1000000000L) {
        dl.tv_sec++;
        dl.tv_nsec -= 1000000000L;
    }
    while (srv->nconns > 1 && pthread_cond_timedwait(&srv->cv, &srv->mu, &dl) == 0) {
    }
}

/* Parent: hands sc's connection to the child of its session (a new child
 * for a new session). RT_HELLO_OK: the child owns the socket now. */
static uint32_t route_to_child(sconn *sc, const apigen_frame_hdr *h, const rt_hello *hl,
                               char *msg, size_t msglen)
{
    bool join = hl->join;
    const uint8_t *key = hl->key;
    rt_server *srv = sc->srv;
    iso_msg m;
    int fds[2], nfds = apigen_tp_handoff_fds(sc->conn, fds);
    if (nfds <= 0) {
        snprintf(msg, msglen, "%s cannot be handed to a session process: serve this transport "
                 "with apigen-server --isolation thread", apigen_tp_peer(sc->conn));
        return RT_HELLO_SESSION;
    }
    memset(&m, 0, sizeof m);
    m.h = *h;
    snprintf(m.peer, sizeof m.peer, "%s", apigen_tp_peer(sc->conn));
    int sock = -1;
    pthread_mutex_lock(&srv->mu);
    if (join) {
        for (rt_child *c = srv->children; c; c = c->next)
            if (c->api == sc->api && key_eq(c->key, key))
                sock = fcntl(c->sock, F_DUPFD_CLOEXEC, 3);
        pthread_mutex_unlock(&srv->mu);
        if (sock < 0) {
            snprintf(msg, msglen, "unknown session key (the guest's session has ended)");
            return RT_HELLO_SESSION;
        }
    } else {
        uint8_t nkey[RT_KEY_LEN];
        int sv[2];
        rt_child *c = NULL;
        if (srv->nchildren >= srv->max_conns) {
            pthread_mutex_unlock(&srv->mu);
            snprintf(msg, msglen, "too many sessions (%u, --max-conns)", srv->max_conns);
            return RT_HELLO_SESSION;
        }
        if (!rt_random_key(nkey) || !(c = calloc(1, sizeof *c)) ||
            socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
            pthread_mutex_unlock(&srv->mu);
            free(c);
            snprintf(msg, msglen, "server cannot create a session (out of memory, entropy or fds)");
            return RT_HELLO_SESSION;
        }
        /* its counters: shared with this process, which serves the scrape */
        struct rt_mx_seg *mx = rt_mx_seg_new(sc->api, apigen_tp_peer(sc->conn), hl->pid, hl->comm);
        quiesce_for_fork(srv);
        pid_t pid = fork();
        if (pid == 0) {
            close(sv[0]);
            rt_mx_seg_child(mx);
            child_main(srv, sv[1], nkey); /* never returns */
        }
        close(sv[1]);
        if (pid < 0) {
            pthread_mutex_unlock(&srv->mu);
            rt_mx_seg_free(mx);
            close(sv[0]);
            free(c);
            snprintf(msg, msglen, "server cannot create a session process: %s", strerror(errno));
            return RT_HELLO_SESSION;
        }
        rt_mx_seg_add(mx, pid);
        rt_procs_add(pid, hl->pid, hl->pidns);
        c->pid = pid;
        c->sock = sv[0];
        c->api = sc->api;
        memcpy(c->key, nkey, RT_KEY_LEN);
        c->next = srv->children;
        srv->children = c;
        srv->nchildren++;
        sock = fcntl(c->sock, F_DUPFD_CLOEXEC, 3);
        pthread_mutex_unlock(&srv->mu);
        if (apigen_tracing())
            apigen_trace("server: %s session from %s runs in process %ld", sc->api->name,
                         apigen_tp_peer(sc->conn), (long)pid);
    }
    bool ok = sock >= 0 && send_conn(sock, fds, nfds, &m, sc->rbuf, h->payload_len);
    if (sock >= 0)
        close(sock);
    if (!ok) {
        snprintf(msg, msglen, "the session's server process is gone");
        return RT_HELLO_SESSION;
    }
    sc->handed_off = true;
    return RT_HELLO_OK;
}

/* Parent: collects exited session children. */
static void reap_children(rt_server *srv)
{
    int st;
    pid_t pid;
    while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
        rt_mx_seg_end(pid); /* its counts join the API's totals */
        rt_procs_end(pid);
        if (pid == rt_mx_collector_pid()) {
            if (WIFSIGNALED(st))
                apigen_log("the metrics collector process %ld was killed by signal %d", (long)pid,
                           WTERMSIG(st));
            continue;
        }
        pthread_mutex_lock(&srv->mu);
        for (rt_child **pp = &srv->children; *pp; pp = &(*pp)->next) {
            rt_child *c = *pp;
            if (c->pid != pid)
                continue;
            *pp = c->next;
            srv->nchildren--;
            close(c->sock);
            free(c);
            break;
        }
        pthread_mutex_unlock(&srv->mu);
        if (WIFSIGNALED(st))
            apigen_log("session process %ld was killed by signal %d; its client's session ended, "
                       "other sessions go on", (long)pid, WTERMSIG(st));
        else if (WIFEXITED(st) && WEXITSTATUS(st) != 0)
            apigen_log("session process %ld exited with status %d", (long)pid, WEXITSTATUS(st));
    }
}

/* Parent at shutdown: SIGTERM to every child, SIGKILL after 5 s. */
static void stop_children(rt_server *srv)
{
    pthread_mutex_lock(&srv->mu);
    for (rt_child *c = srv->children; c; c = c->next)
        kill(c->pid, SIGTERM);
    pthread_mutex_unlock(&srv->mu);
    for (int i = 0; i < 100; i++) {
        reap_children(srv);
        pthread_mutex_lock(&srv->mu);
        unsigned n = srv->nchildren;
        pthread_mutex_unlock(&srv->mu);
        if (!n)
            return;
        struct timespec ts = {0, 50000000};
        nanosleep(&ts, NULL);
    }
    pthread_mutex_lock(&srv->mu);
    for (rt_child *c = srv->children; c; c = c->next)
        kill(c->pid, SIGKILL);
    pthread_mutex_unlock(&srv->mu);
    reap_children(srv);
}

/* ---- options ------------------------------------------------------------------ */
static bool parse_size(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-')
        return false;
    uint64_t mul = 1;
    if (*end == 'K' || *end == 'k')
        mul = 1ull << 10, end++;
    else if (*end == 'M' || *end == 'm')
        mul = 1ull << 20, end++;
    else if (*end == 'G' || *end == 'g')
        mul = 1ull << 30, end++;
    if (*end)
        return false;
    return apigen_mul_size(v, mul, out) && *out > 0;
}

static char *read_token(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        apigen_log("--token-file %s: %s", path, strerror(errno));
        return NULL;
    }
    char buf[RT_TOKEN_MAX];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' ' || buf[n - 1] == '\t'))
        buf[--n] = 0;
    if (n == 0 || strlen(buf) != n) {
        apigen_log("--token-file %s: empty or not text", path);
        return NULL;
    }
    return strdup(buf);
}

/* --tls-*: both or neither of cert and key, and only with a tls:// listener
 * (a certificate no listener uses would look like protection). */
static bool tls_setup(const char *const *urls, unsigned nurls, const char *cert, const char *key,
                      const char *client_ca)
{
    bool any_tls = false;
    for (unsigned i = 0; i < nurls; i++)
        any_tls |= strncmp(urls[i], "tls://", 6) == 0;
    if (!cert && !key && !client_ca)
        return true; /* a tls:// listener without them says so when it starts */
    if (!any_tls) {
        apigen_log("--tls-cert/--tls-key/--tls-client-ca need a tls:// listener (--listen tls://host:port)");
        return false;
    }
    if (!cert || !key) {
        apigen_log("tls://: give both --tls-cert FILE and --tls-key FILE (%s is missing)",
                   cert ? "--tls-key" : "--tls-cert");
        return false;
    }
    char err[600];
    if (!apigen_tp_tls_server_setup(cert, key, client_ca, err, sizeof err)) {
        apigen_log("tls://: %s", err);
        return false;
    }
    return true;
}

static void usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s --listen URL [--listen URL ...] [--max-arg BYTES[K|M|G]] [--max-conns N]\n"
            "       [--token-file FILE] [--isolation thread|process]\n"
            "       [--tls-cert FILE --tls-key FILE [--tls-client-ca FILE]]\n"
            "       [--record FILE | --replay FILE] [--metrics tcp://ADDR:PORT]\n"
            "  URL: unix:///path, tcp://host:port, tcp://[addr]:port, tls://host:port, shm://name,\n"
            "    ucx://host:port\n"
            "  --max-arg: bytes one call may make the server allocate (default APIGEN_MAX_ARG or 1G)\n"
            "  --max-conns: connections served at once (default 1024); more are closed at accept or\n"
            "               refused at the handshake; a guest's lanes (tcp) do not count\n"
            "  --token-file: clients must send this token (APIGEN_TOKEN or APIGEN_TOKEN_FILE on\n"
            "    the guest); without it, a TCP listener on a non-loopback address is open to anyone\n"
            "    who can reach it. Unix sockets are created mode 0600.\n"
            "  --isolation: thread (every session in this process) or process (each session in a\n"
            "    process of its own: a crash or a sticky device fault ends only that session);\n"
            "    the default is process when a served API's spec says `isolation: process`\n"
            "  --tls-cert, --tls-key: the certificate chain and private key (PEM) a tls:// listener\n"
            "    presents; guests check it against APIGEN_TLS_CA\n"
            "  --tls-client-ca: tls:// clients must present a certificate issued by this CA (PEM)\n"
            "    (APIGEN_TLS_CERT and APIGEN_TLS_KEY on the guest)\n"
            "  --record FILE: write every request and every frame sent back, per connection, to\n"
            "    FILE (sessions as threads; no shared-memory arena; docs/internals.md)\n"
            "  --replay FILE: answer guests from a recording, calling nothing; exits 0 once every\n"
            "    recorded session ran as recorded, 1 at the first request that differs\n"
            "  --metrics tcp://ADDR:PORT: Prometheus metrics on http://ADDR:PORT/metrics (calls,\n"
            "    errors, latency and bytes per function, sessions, device memory per session, and\n"
            "    what the served APIs add); no token: bind it to an address only monitors reach\n",
            argv0);
}

int apigen_server_main(int argc, char **argv, const apigen_api *const *apis, unsigned napis)
{
    const char *urls[16];
    unsigned nurls = 0;
    const char *token_file = NULL;
    const char *tls_cert = NULL, *tls_key = NULL, *tls_client_ca = NULL;
    const char *record = NULL, *replay = NULL, *metrics = NULL;
    int isolation = -1;
    rt_server *srv = calloc(1, sizeof *srv);
    if (!srv)
        return 1;
    srv->apis = apis;
    srv->napis = napis;
    srv->max_arg = DEFAULT_MAX_ARG;
    srv->max_conns = DEFAULT_MAX_CONNS;
    const char *env = getenv("APIGEN_MAX_ARG");
    if (env && *env && !parse_size(env, &srv->max_arg)) {
        apigen_log("APIGEN_MAX_ARG=%s is not a size", env);
        return free(srv), 2;
    }
    const char *argv0 = argc > 0 && argv[0] ? argv[0] : "apigen-server";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        const char *opts[] = {"--listen",     "--max-arg",  "--token-file", "--max-conns",
                              "--isolation",  "--tls-cert", "--tls-key",    "--tls-client-ca",
                              "--record",     "--replay",   "--metrics"};
        const int nopts = (int)(sizeof opts / sizeof opts[0]);
        int which = -1;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(argv0);
            for (unsigned k = 0; k < napis && apis; k++)
                if (apis[k]->privileged_option)
                    fprintf(stderr, "  --%s: run %s's privileged calls (they change the device for "
                            "every user); without it they are refused\n",
                            apis[k]->privileged_option, apis[k]->name);
            free(srv);
            return 0;
        }
        /* flags of the served APIs: --<privileged_option> (no value) */
        bool flag = false;
        for (unsigned k = 0; k < napis && apis && !flag; k++) {
            const char *po = apis[k]->privileged_option;
            if (po && strncmp(a, "--", 2) == 0 && strcmp(a + 2, po) == 0) {
                apigen_privileged_allow(po);
                apigen_log("%s: %s's privileged calls are allowed", a, apis[k]->name);
                flag = true;
            }
        }
        if (flag) continue;
        for (int k = 0; k < nopts; k++) {
            size_t l = strlen(opts[k]);
            if (strncmp(a, opts[k], l) == 0 && (a[l] == 0 || a[l] == '=')) {
                which = k;
                v = a[l] == '=' ? a + l + 1 : (i + 1 < argc ? argv[++i] : NULL);
            }
        }
        if (which < 0 || !v) {
            fprintf(stderr, "apigen-server: %s '%s'\n", which < 0 ? "unknown option" : "missing value for", a);
            usage(argv0);
            return free(srv), 2;
        }
        if (which == 0) {
            if (nurls == sizeof urls / sizeof urls[0]) {
                fprintf(stderr, "apigen-server: too many --listen\n");
                return free(srv), 2;
            }
            urls[nurls++] = v;
        } else if (which == 1) {
            if (!parse_size(v, &srv->max_arg)) {
                fprintf(stderr, "apigen-server: --max-arg '%s' is not a size\n", v);
                return free(srv), 2;
            }
        } else if (which == 3) {
            uint64_t n;
            if (!parse_size(v, &n) || n > 1000000) {
                fprintf(stderr, "apigen-server: --max-conns '%s' is not a count\n", v);
                return free(srv), 2;
            }
            srv->max_conns = (unsigned)n;
        } else if (which == 4) {
            if (strcmp(v, "thread") == 0)
                isolation = ISO_THREAD;
            else if (strcmp(v, "process") == 0)
                isolation = ISO_PROCESS;
            else {
                fprintf(stderr, "apigen-server: --isolation '%s': thread or process\n", v);
                return free(srv), 2;
            }
        } else if (which == 5) {
            tls_cert = v;
        } else if (which == 6) {
            tls_key = v;
        } else if (which == 7) {
            tls_client_ca = v;
        } else if (which == 8) {
            record = v;
        } else if (which == 9) {
            replay = v;
        } else if (which == 10) {
            metrics = v;
        } else {
            token_file = v;
        }
    }
    if (nurls == 0) {
        usage(argv0);
        return free(srv), 2;
    }
    if (napis == 0 || !apis) {
        apigen_log("no API to serve");
        return free(srv), 2;
    }
    if (record && replay) {
        fprintf(stderr, "apigen-server: --record and --replay exclude each other\n");
        return free(srv), 2;
    }
    if (replay) {
        free(srv);
        return rt_replay_main(replay, apis, napis, urls, nurls);
    }
    if (record) {
        /* one process writes the file: sessions as threads */
        if (isolation == ISO_PROCESS)
            apigen_log("--record: sessions run as threads of this process (--isolation process "
                       "is not recorded)");
        isolation = ISO_THREAD;
        if (!rt_rec_open(record, apis, napis))
            return free(srv), 2;
    }
    if (isolation < 0) {
        isolation = ISO_THREAD;
        for (unsigned i = 0; i < napis; i++)
            if (apis[i]->isolate_process)
                isolation = ISO_PROCESS;
    }
    srv->isolation = isolation;
    if (isolation == ISO_PROCESS) /* before any fork: every session child maps it */
        rt_procs_init(srv->max_conns < 65536 ? srv->max_conns : 65536);
    /* A whole frame may be a max-arg buffer plus its scalar arguments. */
    uint64_t mp = srv->max_arg + (1u << 20);
    srv->max_payload = mp > UINT32_MAX || mp < srv->max_arg ? UINT32_MAX : (uint32_t)mp;
    if (token_file && !(srv->token = read_token(token_file)))
        return free(srv), 2;
    if (!tls_setup(urls, nurls, tls_cert, tls_key, tls_client_ca)) {
        free(srv->token);
        return free(srv), 2;
    }

    signal(SIGPIPE, SIG_IGN);
    /* before the listeners: a collector process forked here inherits none */
    if (metrics && !rt_mx_start(metrics, apis, napis, srv->isolation == ISO_PROCESS)) {
        free(srv->token);
        return free(srv), 2;
    }
    if (sig_pipe[0] < 0 && pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
        apigen_log("pipe: %s", strerror(errno));
        free(srv->token);
        free(srv);
        return 1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    if (srv->isolation == ISO_PROCESS) {
        sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
        sigaction(SIGCHLD, &sa, NULL);
    }

    apigen_listener *ls[16];
    struct pollfd pf[17];
    char err[512];
    for (unsigned i = 0; i < nurls; i++) {
        if (!apigen_tp_listen(urls[i], &ls[i], err, sizeof err)) {
            apigen_log("%s", err);
            for (unsigned k = 0; k < i; k++)
                apigen_tp_listener_close(ls[k]);
            free(srv->token);
            free(srv);
            return 1;
        }
    }
    pthread_mutex_init(&srv->mu, NULL);
    pthread_cond_init(&srv->cv, NULL);
    for (unsigned i = 0; i < nurls; i++) {
        char names[256];
        int n = 0;
        names[0] = 0;
        for (unsigned k = 0; k < napis && n >= 0 && (size_t)n < sizeof names; k++)
            n += snprintf(names + n, sizeof names - (size_t)n, "%s%s", k ? " " : "", apis[k]->name);
        apigen_log("listening on %s (%s%s)", apigen_tp_listener_url(ls[i]), names,
                   srv->isolation == ISO_PROCESS ? "; a process per session" : "");
        const char *lu = apigen_tp_listener_url(ls[i]);
        bool net = strncmp(lu, "tcp://", 6) == 0 || (strncmp(lu, "tls://", 6) == 0 && !tls_client_ca);
        if (!srv->token && net && strncmp(lu + 6, "127.", 4) != 0 && strncmp(lu + 6, "[::1]", 5) != 0)
            apigen_log("warning: %s accepts clients without a token: anyone who can reach it can "
                       "use the accelerator (give --token-file)", lu);
    }

    int rc = 0;
    for (;;) {
        for (unsigned i = 0; i < nurls; i++)
            pf[i] = (struct pollfd){apigen_tp_listener_fd(ls[i]), POLLIN, 0};
        pf[nurls] = (struct pollfd){sig_pipe[0], POLLIN, 0};
        int n = poll(pf, nurls + 1, -1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            apigen_log("poll: %s", strerror(errno));
            rc = 1;
            break;
        }
        if (pf[nurls].revents) {
            unsigned char c = 0;
            bool stop = false;
            while (read(sig_pipe[0], &c, 1) == 1)
                if (c != SIGCHLD) {
                    apigen_log("signal %d: shutting down", c);
                    stop = true;
                }
            reap_children(srv);
            if (stop)
                break;
            continue;
        }
        for (unsigned i = 0; i < nurls; i++) {
            if (!pf[i].revents)
                continue;
            apigen_conn *conn;
            if (!apigen_tp_accept(ls[i], &conn, err, sizeof err)) {
                apigen_log("%s", err);
                struct timespec ts = {0, 10000000}; /* e.g. out of fds: do not spin */
                nanosleep(&ts, NULL);
                continue;
            }
            /* lanes past their handshake count for nothing; lanes still
             * to come may arrive beyond the bound (count_conn). Under
             * --isolation process the grants live in the session processes
             * and the lanes they route here (route_to_child) are only in
             * their handshake: each session may be opening all its lanes
             * at once (the guest opens them together). */
            unsigned expected = rt_lanes_expected();
            pthread_mutex_lock(&srv->mu);
            if (srv->isolation == ISO_PROCESS && srv->nchildren < UINT_MAX / RT_LANES_MAX)
                expected += RT_LANES_MAX * srv->nchildren;
            bool full = srv->nconns - srv->nlanes >= srv->max_conns + expected;
            pthread_mutex_unlock(&srv->mu);
            if (full) {
                static unsigned nfull;
                if (nfull++ % 100 == 0) /* a flood must not flood the log */
                    apigen_log("refused %s: %u connections already (--max-conns)",
                               apigen_tp_peer(conn), srv->max_conns);
                apigen_tp_close(conn);
                continue;
            }
            sconn *sc = calloc(1, sizeof *sc);
            pthread_t t;
            pthread_attr_t at;
            pthread_attr_init(&at);
            pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
            if (sc) {
                sc->srv = srv;
                sc->conn = conn;
                pthread_mutex_lock(&srv->mu);
                sc->next = srv->conns;
                if (srv->conns)
                    srv->conns->prev = sc;
                srv->conns = sc;
                srv->nconns++;
                pthread_mutex_unlock(&srv->mu);
            }
            if (!sc || pthread_create(&t, &at, conn_main, sc) != 0) {
                apigen_log("cannot serve %s: out of memory or threads", apigen_tp_peer(conn));
                if (sc) {
                    pthread_mutex_lock(&srv->mu);
                    if (sc->prev)
                        sc->prev->next = sc->next;
                    else
                        srv->conns = sc->next;
                    if (sc->next)
                        sc->next->prev = sc->prev;
                    srv->nconns--;
                    pthread_mutex_unlock(&srv->mu);
                    free(sc);
                }
                apigen_tp_close(conn);
            }
            pthread_attr_destroy(&at);
        }
    }

    /* Stop accepting, wake every connection, and give them a moment to
     * release their sessions (which destroys what clients created). */
    for (unsigned i = 0; i < nurls; i++)
        apigen_tp_listener_close(ls[i]);
    rt_mx_stop();
    stop_children(srv);
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += 5;
    pthread_mutex_lock(&srv->mu);
    for (sconn *sc = srv->conns; sc; sc = sc->next) {
        apigen_tp_shutdown(sc->conn);
        rt_lanes_shutdown(sc->conn);
    }
    while (srv->nconns > 0)
        if (pthread_cond_timedwait(&srv->cv, &srv->mu, &dl) == ETIMEDOUT)
            break;
    unsigned left = srv->nconns;
    pthread_mutex_unlock(&srv->mu);
    if (left) {
        /* threads stuck in the real library still point at srv: leave it */
        apigen_log("%u connection(s) still busy at exit", left);
        if (record)
            rt_rec_close();
        return rc;
    }
    pthread_mutex_destroy(&srv->mu);
    pthread_cond_destroy(&srv->cv);
    free(srv->token);
    free(srv);
    if (record)
        rt_rec_close();
    return rc;
}
