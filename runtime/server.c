/* apigen-server: listeners, one thread per connection, handshake, dispatch.
 * Nothing a client sends is trusted: headers are checked before the payload
 * is read, call ids are bounds-checked, and a malformed frame closes only
 * the connection it came on. */
#define _GNU_SOURCE
#include "rt_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define HELLO_MAX_PAYLOAD 65536u
#define HELLO_TIMEOUT_MS 10000
#define REJECT_LOG_CAP 20 /* rejections logged per connection (a hostile client must not flood the log) */
#define PREFIX_LEN 13u    /* u32 status, u8 has_deferred, u64 deferred */
#define DEFAULT_MAX_ARG (1ull << 30)
#define DEFAULT_MAX_CONNS 1024u

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
    unsigned nconns;
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
    bool has_deferred;
    int64_t deferred;
    unsigned nrejected;
} sconn;

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
static bool send_hello_reply(sconn *sc, const apigen_frame_hdr *h, uint32_t status, const char *msg,
                             const uint8_t key[RT_KEY_LEN])
{
    apigen_wr w;
    size_t off;
    char err[256];
    static const uint8_t zero[RT_KEY_LEN];
    apigen_wr_init(&w);
    bool ok = rt_wr_begin_frame(&w, &off) && apigen_put_u32(&w, status) && apigen_put_str(&w, msg) &&
              apigen_put_raw(&w, key ? key : zero, RT_KEY_LEN) &&
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

static bool handshake(sconn *sc)
{
    rt_server *srv = sc->srv;
    apigen_frame_hdr h;
    char err[256], msg[768];
    bool eof;
    if (!rt_recv_frame(sc->conn, &h, &sc->rbuf, &sc->rcap, HELLO_MAX_PAYLOAD, HELLO_TIMEOUT_MS, &eof,
                       err, sizeof err)) {
        if (!eof)
            apigen_log("closing connection from %s before the handshake: %s", apigen_tp_peer(sc->conn), err);
        return false;
    }
    if (!(h.flags & APIGEN_F_HELLO) || (h.flags & APIGEN_F_REPLY) || h.call_id != 0) {
        apigen_log("closing connection from %s: first frame is not a handshake", apigen_tp_peer(sc->conn));
        return false;
    }
    apigen_rd rd;
    apigen_rd_init(&rd, sc->rbuf, h.payload_len);
    uint32_t proto = 0;
    const char *name = NULL, *token = NULL;
    uint64_t fp = 0;
    uint8_t join = 0, key[RT_KEY_LEN];
    uint32_t st = RT_HELLO_OK;
    msg[0] = 0;
    if (!apigen_get_u32(&rd, &proto)) {
        st = RT_HELLO_MALFORMED;
    } else if (proto != APIGEN_PROTO_VERSION) {
        st = RT_HELLO_PROTO;
        snprintf(msg, sizeof msg, "protocol version mismatch: guest speaks %u, server speaks %u", proto,
                 APIGEN_PROTO_VERSION);
    } else if (!apigen_get_str(&rd, &name, RT_NAME_MAX) || !name || !apigen_get_u64(&rd, &fp) ||
               !apigen_get_u8(&rd, &join) || join > 1 || !apigen_get_raw(&rd, key, RT_KEY_LEN) ||
               !apigen_get_str(&rd, &token, RT_TOKEN_MAX) || !apigen_rd_done(&rd)) {
        st = RT_HELLO_MALFORMED;
    }
    if (st == RT_HELLO_MALFORMED)
        snprintf(msg, sizeof msg, "malformed handshake: %s", rd.err ? rd.err : "bad field");
    if (st == RT_HELLO_OK) {
        for (unsigned i = 0; i < srv->napis; i++)
            if (strcmp(srv->apis[i]->name, name) == 0)
                sc->api = srv->apis[i];
        if (!sc->api) {
            int n = snprintf(msg, sizeof msg, "API '%s' is not served here (server serves:", name);
            for (unsigned i = 0; i < srv->napis && n > 0 && (size_t)n < sizeof msg; i++)
                n += snprintf(msg + n, sizeof msg - (size_t)n, " %s", srv->apis[i]->name);
            if (n > 0 && (size_t)n < sizeof msg - 1)
                snprintf(msg + n, sizeof msg - (size_t)n, ")");
            st = RT_HELLO_API;
        } else if (fp != sc->api->fingerprint) {
            snprintf(msg, sizeof msg,
                     "API '%s' fingerprint mismatch: guest 0x%016llx, server 0x%016llx "
                     "(stub and server were generated from different headers or specs)",
                     name, (unsigned long long)fp, (unsigned long long)sc->api->fingerprint);
            st = RT_HELLO_FINGERPRINT;
        } else if (srv->token && (!token || !token_eq(token, srv->token))) {
            snprintf(msg, sizeof msg, "authentication failed: %s (set APIGEN_TOKEN to the server's token)",
                     token ? "wrong token" : "no token sent");
            st = RT_HELLO_AUTH;
        } else if (join) {
            sc->session = rt_session_join(sc->api, key);
            if (!sc->session) {
                snprintf(msg, sizeof msg, "unknown session key (the guest's session has ended)");
                st = RT_HELLO_SESSION;
            }
        } else {
            sc->session = rt_session_create(sc->api, sc->conn);
            if (!sc->session) {
                snprintf(msg, sizeof msg, "server cannot create a session (out of memory or entropy)");
                st = RT_HELLO_SESSION;
            }
        }
    }
    if (st != RT_HELLO_OK) {
        apigen_log("refused %s: %s", apigen_tp_peer(sc->conn), msg);
        (void)send_hello_reply(sc, &h, st, msg, NULL);
        return false;
    }
    rt_session_key(sc->session, key);
    if (!send_hello_reply(sc, &h, RT_HELLO_OK, "ok", key))
        return false;
    if (apigen_tracing())
        apigen_trace("server: %s %s session from %s", sc->api->name, join ? "joined" : "new",
                     apigen_tp_peer(sc->conn));
    return true;
}

/* ---- dispatch ----------------------------------------------------------------- */
static void put_prefix(uint8_t *p, uint32_t status, bool has_deferred, int64_t deferred)
{
    uint64_t d = (uint64_t)deferred;
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(status >> (8 * i));
    p[4] = has_deferred;
    for (int i = 0; i < 8; i++)
        p[5 + i] = (uint8_t)(d >> (8 * i));
}

/* false: the connection must be closed. */
static bool dispatch(sconn *sc, const apigen_frame_hdr *h)
{
    const apigen_api *api = sc->api;
    bool is_async = (h->flags & APIGEN_F_ASYNC) != 0;
    apigen_rd rd;
    size_t off;
    char err[256];
    uint64_t t0 = apigen_tracing() ? apigen_now_ns() : 0;

    apigen_rd_init(&rd, sc->rbuf, h->payload_len);
    apigen_wr_reset(&sc->out);
    if (!rt_wr_begin_frame(&sc->out, &off) || !rt_wr_skip(&sc->out, PREFIX_LEN)) {
        apigen_log("closing connection from %s: out of memory", apigen_tp_peer(sc->conn));
        return false;
    }
    apigen_call_ctx cx = {0};
    cx.api = api;
    cx.session = sc->session;
    cx.rd = &rd;
    cx.wr = &sc->out;
    cx.call_id = h->call_id;
    cx.is_async = is_async;
    cx.status = APIGEN_OK;
    cx.budget = sc->srv->max_arg;

    if (h->call_id >= api->ncalls)
        apigen_reject(&cx, APIGEN_BAD_CALL, "call id");
    else if (!api->handlers || !api->handlers[h->call_id])
        apigen_reject(&cx, APIGEN_UNSUPPORTED, call_name(api, h->call_id));
    else
        api->handlers[h->call_id](&cx);
    apigen_dev_end(&cx, false); /* a range taken by a handler that returned early comes back */
    if (cx.status == APIGEN_OK && sc->out.failed)
        apigen_reject(&cx, APIGEN_NO_MEMORY, "reply");

    if (cx.status != APIGEN_OK && sc->nrejected++ < REJECT_LOG_CAP)
        apigen_log("%s.%s from %s rejected: %s (%s)%s", api->name, call_name(api, h->call_id),
                   apigen_tp_peer(sc->conn), apigen_status_str(cx.status),
                   cx.reject_what ? cx.reject_what : "-",
                   sc->nrejected == REJECT_LOG_CAP ? "; further rejections not logged" : "");

    bool ok = true;
    if (is_async) {
        /* No reply: the first failure is reported with the next sync reply. */
        if (!sc->has_deferred) {
            if (cx.status != APIGEN_OK) {
                sc->has_deferred = true;
                sc->deferred = api->status_error[cx.status];
            } else if (cx.has_result && cx.result_error != api->success_value) {
                sc->has_deferred = true;
                sc->deferred = cx.result_error;
            }
        }
    } else {
        bool report = cx.status == APIGEN_OK && sc->has_deferred;
        if (cx.status != APIGEN_OK) {
            /* drop whatever the handler wrote before it rejected */
            sc->out.failed = false;
            sc->out.len = sc->out.base + PREFIX_LEN;
        }
        put_prefix(sc->out.buf + sc->out.base, (uint32_t)cx.status, report, report ? sc->deferred : 0);
        if (report) {
            sc->has_deferred = false;
            sc->deferred = 0;
        }
        if (!rt_wr_end_frame(&sc->out, off, APIGEN_F_REPLY, h->call_id, h->request_id, h->thread_id) ||
            !apigen_tp_send_buf(sc->conn, sc->out.buf, sc->out.len, -1, err, sizeof err)) {
            apigen_log("closing connection from %s: sending reply to %s: %s", apigen_tp_peer(sc->conn),
                       call_name(api, h->call_id), sc->out.failed ? "reply too large" : err);
            ok = false;
        }
    }
    rt_scratch_free_all(&cx);
    if (t0)
        apigen_trace("server: %s.%s%s -> %s (%llu us)", api->name, call_name(api, h->call_id),
                     is_async ? " [async]" : "", apigen_status_str(cx.status),
                     (unsigned long long)((apigen_now_ns() - t0) / 1000));
    if (sc->out.cap > (16u << 20)) /* do not keep a huge reply buffer per thread */
        apigen_wr_free(&sc->out);
    return ok;
}

static void *conn_main(void *arg)
{
    sconn *sc = arg;
    rt_server *srv = sc->srv;
    apigen_wr_init(&sc->out);
    if (handshake(sc)) {
        for (;;) {
            apigen_frame_hdr h;
            char err[256];
            bool eof;
            if (!rt_recv_frame(sc->conn, &h, &sc->rbuf, &sc->rcap, srv->max_payload, -1, &eof, err,
                               sizeof err)) {
                if (!eof)
                    apigen_log("closing connection from %s: %s", apigen_tp_peer(sc->conn), err);
                break;
            }
            if (h.flags & APIGEN_F_BYE)
                break;
            if (h.flags & (APIGEN_F_HELLO | APIGEN_F_REPLY | APIGEN_F_CALLBACK)) {
                apigen_log("closing connection from %s: unexpected frame flags 0x%x",
                           apigen_tp_peer(sc->conn), h.flags);
                break;
            }
            if (!dispatch(sc, &h))
                break;
            if (sc->rcap > (16u << 20)) { /* a big argument once: do not keep its buffer */
                free(sc->rbuf);
                sc->rbuf = NULL;
                sc->rcap = 0;
            }
        }
    }
    /* Wake anyone sending callbacks on it, then give up the session (the
     * last connection destroys what the client created). */
    apigen_tp_shutdown(sc->conn);
    rt_session_release(sc->session, sc->conn);
    apigen_tp_close(sc->conn);
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
    pthread_cond_broadcast(&srv->cv);
    pthread_mutex_unlock(&srv->mu);
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

static void usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s --listen URL [--listen URL ...] [--max-arg BYTES[K|M|G]] [--max-conns N]\n"
            "       [--token-file FILE]\n"
            "  URL: unix:///path or tcp://host:port or tcp://[addr]:port\n"
            "  --max-arg: bytes one call may make the server allocate (default APIGEN_MAX_ARG or 1G)\n"
            "  --max-conns: connections served at once (default 1024); more are closed at accept\n"
            "  --token-file: clients must send this token (APIGEN_TOKEN or APIGEN_TOKEN_FILE on\n"
            "    the guest); without it, a TCP listener on a non-loopback address is open to anyone\n"
            "    who can reach it. Unix sockets are created mode 0600.\n",
            argv0);
}

int apigen_server_main(int argc, char **argv, const apigen_api *const *apis, unsigned napis)
{
    const char *urls[16];
    unsigned nurls = 0;
    const char *token_file = NULL;
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
        const char *opts[] = {"--listen", "--max-arg", "--token-file", "--max-conns"};
        int which = -1;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(argv0);
            free(srv);
            return 0;
        }
        for (int k = 0; k < 4; k++) {
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
    /* A whole frame may be a max-arg buffer plus its scalar arguments. */
    uint64_t mp = srv->max_arg + (1u << 20);
    srv->max_payload = mp > UINT32_MAX || mp < srv->max_arg ? UINT32_MAX : (uint32_t)mp;
    if (token_file && !(srv->token = read_token(token_file)))
        return free(srv), 2;

    signal(SIGPIPE, SIG_IGN);
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
        apigen_log("listening on %s (%s)", apigen_tp_listener_url(ls[i]), names);
        const char *lu = apigen_tp_listener_url(ls[i]);
        if (!srv->token && strncmp(lu, "tcp://", 6) == 0 && strncmp(lu, "tcp://127.", 10) != 0 &&
            strncmp(lu, "tcp://[::1]", 11) != 0)
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
            (void)!read(sig_pipe[0], &c, 1);
            apigen_log("signal %d: shutting down", c);
            break;
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
            pthread_mutex_lock(&srv->mu);
            bool full = srv->nconns >= srv->max_conns;
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
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += 5;
    pthread_mutex_lock(&srv->mu);
    for (sconn *sc = srv->conns; sc; sc = sc->next)
        apigen_tp_shutdown(sc->conn);
    while (srv->nconns > 0)
        if (pthread_cond_timedwait(&srv->cv, &srv->mu, &dl) == ETIMEDOUT)
            break;
    unsigned left = srv->nconns;
    pthread_mutex_unlock(&srv->mu);
    if (left) {
        /* threads stuck in the real library still point at srv: leave it */
        apigen_log("%u connection(s) still busy at exit", left);
        return rc;
    }
    pthread_mutex_destroy(&srv->mu);
    pthread_cond_destroy(&srv->cv);
    free(srv->token);
    free(srv);
    return rc;
}
