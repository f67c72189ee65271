/* ucx://host:port: UCX (UCP stream API) for guests on other machines: RDMA
 * where present, shared memory or TCP where that is all there is (UCX picks;
 * UCX_TLS narrows it).
 *
 * libucp is loaded with dlopen on the first ucx:// URL, so neither the guest
 * stub nor the server depends on UCX unless a ucx:// URL is used (UCX's
 * libraries install memory hooks and, unless told otherwise, signal
 * handlers: UCX_HANDLE_ERRORS defaults to "none" here when unset).
 *
 * One UCP context per process (workers shared across threads), one worker per
 * connection (the runtime uses a connection per guest thread and a server
 * thread per connection, so no two threads share a worker); a listener has
 * its own worker, progressed by a thread of the listener that queues
 * connection requests and makes the listener's pipe readable; accept creates
 * the connection's worker and endpoint from the request and returns (the
 * wire-up completes as the connection is used: see tp_ucx_accept). Waiting
 * progresses the worker, spins ~50 us, then sleeps on the worker's event fd
 * (and an eventfd that apigen_tp_shutdown writes). Endpoints use peer error
 * handling: a peer that closes or dies fails the endpoint, and send/recv
 * return an error (recv: EOF between messages) instead of waiting. A UCX
 * endpoint cannot be passed to another process: apigen_tp_handoff_fds gives 0
 * (the server refuses ucx:// clients under --isolation process). */
#define _GNU_SOURCE
#include "tp_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include <ucp/api/ucp.h>

/* ---- libucp, loaded on first use --------------------------------------------------- */
#define UCX_FUNCS(X)                                                                              \
    X(ucp_config_read) X(ucp_config_release) X(ucp_init_version) X(ucp_worker_create)             \
    X(ucp_worker_destroy) X(ucp_worker_progress) X(ucp_worker_get_efd) X(ucp_worker_arm)          \
    X(ucp_listener_create) X(ucp_listener_destroy) X(ucp_listener_query) X(ucp_listener_reject)   \
    X(ucp_conn_request_query) X(ucp_ep_create) X(ucp_ep_close_nbx) X(ucp_stream_send_nbx)         \
    X(ucp_stream_recv_data_nb) X(ucp_stream_data_release) X(ucp_request_check_status)             \
    X(ucp_request_free) X(ucs_status_string) X(ucp_ep_flush_nbx)

static struct {
#define X(f) __typeof__(f) *f;
    UCX_FUNCS(X)
#undef X
} U;
static ucp_context_h g_ctx;
static char g_init_err[300];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void ucx_init_once(void)
{
    setenv("UCX_HANDLE_ERRORS", "none", 0); /* the application's signals stay its own */
    setenv("UCX_WARN_UNUSED_ENV_VARS", "n", 0);
    void *h = dlopen("libucp.so.0", RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        snprintf(g_init_err, sizeof g_init_err, "UCX is not available (libucp.so.0: %s)", dlerror());
        return;
    }
#define X(f)                                                                                      \
    if (!(U.f = (__typeof__(f) *)dlsym(h, #f))) {                                                 \
        snprintf(g_init_err, sizeof g_init_err, "UCX is too old: libucp.so.0 lacks %s", #f);     \
        return;                                                                                   \
    }
    UCX_FUNCS(X)
#undef X
    ucp_config_t *cfg;
    ucs_status_t st = U.ucp_config_read(NULL, NULL, &cfg);
    if (st != UCS_OK) {
        snprintf(g_init_err, sizeof g_init_err, "UCX configuration: %s", U.ucs_status_string(st));
        return;
    }
    ucp_params_t p;
    memset(&p, 0, sizeof p);
    p.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
    p.features = UCP_FEATURE_STREAM | UCP_FEATURE_WAKEUP;
    p.mt_workers_shared = 1;
    st = U.ucp_init_version(UCP_API_MAJOR, UCP_API_MINOR, &p, cfg, &g_ctx);
    U.ucp_config_release(cfg);
    if (st != UCS_OK) {
        g_ctx = NULL;
        snprintf(g_init_err, sizeof g_init_err, "UCX cannot initialize: %s", U.ucs_status_string(st));
    }
}

static bool ucx_ready(char *err, size_t errlen)
{
    pthread_once(&g_once, ucx_init_once);
    if (!g_ctx)
        tp_err(err, errlen, "%s", g_init_err);
    return g_ctx != NULL;
}

/* ---- connections ---------------------------------------------------------------- */
struct tp_ucx {
    ucp_worker_h w;
    ucp_ep_h ep;
    int efd;              /* the worker's event fd */
    int wake;             /* eventfd: apigen_tp_shutdown */
    atomic_bool down;     /* apigen_tp_shutdown was called */
    _Atomic(ucs_status_t) failed; /* the first error: the endpoint's error handler (inside a
                                     progress call) or a failed request; read by any thread
                                     that sends, receives or closes (ep_status) */
    bool broken;          /* a send failed or timed out half-way */
    void *rdata;          /* received data not yet consumed (ucp_stream_recv_data_nb) */
    size_t rlen, roff;
    ucp_dt_iov_t siov[64]; /* a send's iov (UCX reads it until the send completes) */
};

static ucp_worker_h worker_new(ucs_thread_mode_t mode, int *efd, char *err, size_t errlen)
{
    ucp_worker_params_t wp;
    memset(&wp, 0, sizeof wp);
    wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wp.thread_mode = mode;
    ucp_worker_h w;
    ucs_status_t st = U.ucp_worker_create(g_ctx, &wp, &w);
    if (st != UCS_OK) {
        tp_err(err, errlen, "UCX worker: %s", U.ucs_status_string(st));
        return NULL;
    }
    if ((st = U.ucp_worker_get_efd(w, efd)) != UCS_OK) {
        tp_err(err, errlen, "UCX worker event fd: %s", U.ucs_status_string(st));
        U.ucp_worker_destroy(w);
        return NULL;
    }
    return w;
}

/* The first error of the connection stays (later ones are its echoes). */
static void ep_fail(struct tp_ucx *x, ucs_status_t st)
{
    ucs_status_t ok = UCS_OK;
    atomic_compare_exchange_strong_explicit(&x->failed, &ok, st, memory_order_relaxed,
                                            memory_order_relaxed);
}

static ucs_status_t ep_status(struct tp_ucx *x)
{
    return atomic_load_explicit(&x->failed, memory_order_relaxed);
}

static void ep_failed(void *arg, ucp_ep_h ep, ucs_status_t st)
{
    (void)ep;
    ep_fail(arg, st);
}

#define SPIN_NS 50000

/* Nothing progressed: spin a little, then sleep on the worker's events (at
 * most 100 ms at a time, in case a transport wakes nobody). false: deadline. */
static bool idle_wait(struct tp_ucx *x, int64_t deadline, int64_t *spin_from)
{
    int64_t now = tp_mono_ns();
    if (deadline >= 0 && now >= deadline)
        return false;
    if (*spin_from == 0)
        *spin_from = now;
    if (now - *spin_from < SPIN_NS)
        return true;
    if (U.ucp_worker_arm(x->w) != UCS_OK) /* UCS_ERR_BUSY: events pending */
        return true;
    int ms = tp_ms_left(deadline);
    if (ms < 0 || ms > 100)
        ms = 100;
    struct pollfd pf[2] = {{x->efd, POLLIN, 0}, {x->wake, POLLIN, 0}};
    (void)poll(pf, 2, ms);
    *spin_from = 0;
    return true;
}

static void tp_ucx_close_x(struct tp_ucx *x);

static apigen_conn *conn_new(struct tp_ucx *x, const char *peer, char *err, size_t errlen)
{
    apigen_conn *c = tp_conn_new(&tp_ucx_ops, -1, peer, err, errlen);
    if (c)
        c->priv = x;
    return c;
}

static void ux_free(struct tp_ucx *x)
{
    if (x->w)
        U.ucp_worker_destroy(x->w);
    if (x->wake >= 0)
        close(x->wake);
    free(x);
}

static struct tp_ucx *ux_new(char *err, size_t errlen)
{
    struct tp_ucx *x = calloc(1, sizeof *x);
    if (!x) {
        tp_err(err, errlen, "out of memory");
        return NULL;
    }
    x->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (x->wake < 0) {
        tp_err(err, errlen, "eventfd: %s", strerror(errno));
        free(x);
        return NULL;
    }
    /* multi-threaded: a connection is received on by its own thread while
     * another sends on it (a server's callback frames, a guest thread sending
     * the queued frames of another); a serialized worker asserts then */
    if (!(x->w = worker_new(UCS_THREAD_MODE_MULTI, &x->efd, err, errlen))) {
        ux_free(x);
        return NULL;
    }
    return x;
}

static bool ep_create(struct tp_ucx *x, ucp_ep_params_t *ep, char *err, size_t errlen)
{
    ep->field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
    ep->err_mode = UCP_ERR_HANDLING_MODE_PEER;
    ep->err_handler.cb = ep_failed;
    ep->err_handler.arg = x;
    ucs_status_t st = U.ucp_ep_create(x->w, ep, &x->ep);
    if (st != UCS_OK) {
        x->ep = NULL;
        tp_err(err, errlen, "%s", U.ucs_status_string(st));
        return false;
    }
    return true;
}

static int resolve(const apigen_url *u, bool passive, struct sockaddr_storage *ss, socklen_t *sl)
{
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = passive ? AI_PASSIVE : 0;
    int g = getaddrinfo(u->host, u->port, &hints, &res);
    if (g)
        return g;
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    *sl = res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

/* Waits (progressing) until the endpoint is wired up to its peer: a flush
 * completes then. Only connect does it: the client's connection request
 * leaves only while its worker progresses, and the server side must progress
 * too (its first recv or send does). */
static bool ux_establish(struct tp_ucx *x, int timeout_ms, char *err, size_t errlen)
{
    ucp_request_param_t p;
    memset(&p, 0, sizeof p);
    ucs_status_ptr_t req = U.ucp_ep_flush_nbx(x->ep, &p);
    if (req == NULL)
        return true;
    if (UCS_PTR_IS_ERR(req)) {
        tp_err(err, errlen, "%s", U.ucs_status_string(UCS_PTR_STATUS(req)));
        return false;
    }
    int64_t deadline = tp_deadline(timeout_ms), spin = 0;
    ucs_status_t st;
    while ((st = U.ucp_request_check_status(req)) == UCS_INPROGRESS && ep_status(x) == UCS_OK) {
        if (U.ucp_worker_progress(x->w))
            continue;
        if (!idle_wait(x, deadline, &spin))
            break;
    }
    U.ucp_request_free(req);
    if (st == UCS_OK)
        return true;
    if (ep_status(x) != UCS_OK)
        st = ep_status(x);
    tp_err(err, errlen, "%s", st == UCS_INPROGRESS ? "timed out" : U.ucs_status_string(st));
    x->broken = true;
    return false;
}

/* Connecting waits until the server accepted (or timeout_ms). */
static bool tp_ucx_connect(const apigen_url *u, const char *url, int timeout_ms, apigen_conn **out,
                    char *err, size_t errlen)
{
    char why[300];
    if (!ucx_ready(why, sizeof why)) {
        tp_err(err, errlen, "cannot connect to %s: %s", url, why);
        return false;
    }
    struct sockaddr_storage ss;
    socklen_t sl;
    int g = resolve(u, false, &ss, &sl);
    if (g) {
        tp_err(err, errlen, "cannot connect to %s: %s", url, gai_strerror(g));
        return false;
    }
    struct tp_ucx *x = ux_new(why, sizeof why);
    if (!x) {
        tp_err(err, errlen, "cannot connect to %s: %s", url, why);
        return false;
    }
    ucp_ep_params_t ep;
    memset(&ep, 0, sizeof ep);
    ep.field_mask = UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR;
    ep.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
    ep.sockaddr.addr = (struct sockaddr *)&ss;
    ep.sockaddr.addrlen = sl;
    if (!ep_create(x, &ep, why, sizeof why)) {
        tp_err(err, errlen, "cannot connect to %s: %s", url, why);
        ux_free(x);
        return false;
    }
    if (!ux_establish(x, timeout_ms, why, sizeof why)) {
        tp_err(err, errlen, "cannot connect to %s: %s", url, why);
        tp_ucx_close_x(x);
        return false;
    }
    if (!(*out = conn_new(x, url, err, errlen))) {
        tp_ucx_close_x(x);
        return false;
    }
    return true;
}

/* How UCX reports a peer that closed or died (a closed peer shows up as an
 * endpoint timeout too, depending on the transport). */
static bool peer_gone(ucs_status_t st)
{
    return st == UCS_ERR_CONNECTION_RESET || st == UCS_ERR_NOT_CONNECTED ||
           st == UCS_ERR_ENDPOINT_TIMEOUT;
}

static void fail_msg(struct tp_ucx *x, const apigen_conn *c, const char *what, char *err, size_t errlen)
{
    if (peer_gone(ep_status(x)))
        tp_err(err, errlen, "%s %s: %s closed the connection (%s)", what, c->peer, c->peer,
               U.ucs_status_string(ep_status(x)));
    else
        tp_err(err, errlen, "%s %s: %s", what, c->peer, U.ucs_status_string(ep_status(x)));
}

static bool tp_ucx_send(apigen_conn *c, const struct iovec *iov, int iovcnt, int timeout_ms, char *err,
                 size_t errlen)
{
    struct tp_ucx *x = c->priv;
    if (x->broken || atomic_load_explicit(&x->down, memory_order_relaxed)) {
        tp_err(err, errlen, "send to %s: connection shut down", c->peer);
        return false;
    }
    size_t n = 0;
    for (int i = 0; i < iovcnt && i < 64; i++)
        if (iov[i].iov_len) {
            x->siov[n].buffer = iov[i].iov_base;
            x->siov[n++].length = iov[i].iov_len;
        }
    if (n == 0)
        return true;
    ucp_request_param_t p;
    memset(&p, 0, sizeof p);
    ucs_status_ptr_t req;
    if (n == 1) {
        p.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE;
        p.datatype = ucp_dt_make_contig(1);
        req = U.ucp_stream_send_nbx(x->ep, x->siov[0].buffer, x->siov[0].length, &p);
    } else {
        p.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE;
        p.datatype = ucp_dt_make_iov();
        req = U.ucp_stream_send_nbx(x->ep, x->siov, n, &p);
    }
    if (req == NULL)
        return true;
    if (UCS_PTR_IS_ERR(req)) {
        x->broken = true;
        ep_fail(x, UCS_PTR_STATUS(req));
        fail_msg(x, c, "send to", err, errlen);
        return false;
    }
    int64_t deadline = tp_deadline(timeout_ms), spin = 0;
    for (;;) {
        ucs_status_t st = U.ucp_request_check_status(req);
        if (st != UCS_INPROGRESS) {
            U.ucp_request_free(req);
            if (st == UCS_OK)
                return true;
            x->broken = true;
            ep_fail(x, st);
            fail_msg(x, c, "send to", err, errlen);
            return false;
        }
        if (atomic_load_explicit(&x->down, memory_order_relaxed)) {
            tp_err(err, errlen, "send to %s: connection shut down", c->peer);
            break;
        }
        if (U.ucp_worker_progress(x->w))
            continue;
        if (!idle_wait(x, deadline, &spin)) {
            tp_err(err, errlen, "send to %s timed out after %d ms", c->peer, timeout_ms);
            break;
        }
    }
    /* still in flight: the stream is unusable; closing purges the request */
    U.ucp_request_free(req);
    x->broken = true;
    return false;
}

static apigen_tp_result tp_ucx_recv(apigen_conn *c, void *buf, size_t n, int timeout_ms, char *err,
                             size_t errlen)
{
    struct tp_ucx *x = c->priv;
    size_t got = 0;
    int64_t deadline = tp_deadline(timeout_ms), spin = 0;
    while (got < n) {
        if (x->rdata) {
            size_t k = x->rlen - x->roff < n - got ? x->rlen - x->roff : n - got;
            memcpy((char *)buf + got, (char *)x->rdata + x->roff, k);
            got += k;
            x->roff += k;
            if (x->roff == x->rlen) {
                U.ucp_stream_data_release(x->ep, x->rdata);
                x->rdata = NULL;
            }
            continue;
        }
        if (atomic_load_explicit(&x->down, memory_order_relaxed)) {
            tp_err(err, errlen, "connection to %s shut down", c->peer);
            return got ? APIGEN_TP_ERROR : APIGEN_TP_EOF;
        }
        if (!x->broken) {
            size_t len = 0;
            ucs_status_ptr_t d = U.ucp_stream_recv_data_nb(x->ep, &len);
            if (UCS_PTR_IS_ERR(d)) {
                ep_fail(x, UCS_PTR_STATUS(d));
            } else if (d) {
                x->rdata = d;
                x->rlen = len;
                x->roff = 0;
                continue;
            }
        }
        if (ep_status(x) != UCS_OK || x->broken) {
            if (got) {
                tp_err(err, errlen,
                       "%s closed the connection in the middle of a message (%zu of %zu bytes)",
                       c->peer, got, n);
                return APIGEN_TP_ERROR;
            }
            if (peer_gone(ep_status(x))) {
                tp_err(err, errlen, "%s closed the connection", c->peer);
                return APIGEN_TP_EOF;
            }
            tp_err(err, errlen, "recv from %s: %s", c->peer,
                   x->broken ? "connection unusable after a failed send"
                             : U.ucs_status_string(ep_status(x)));
            return APIGEN_TP_ERROR;
        }
        if (U.ucp_worker_progress(x->w))
            continue;
        if (!idle_wait(x, deadline, &spin)) {
            tp_err(err, errlen, "no data from %s within %d ms", c->peer, timeout_ms);
            return got ? APIGEN_TP_ERROR : APIGEN_TP_TIMEOUT;
        }
    }
    return APIGEN_TP_OK;
}

static void tp_ucx_shutdown(apigen_conn *c)
{
    struct tp_ucx *x = c->priv;
    atomic_store(&x->down, true);
    uint64_t one = 1;
    (void)!write(x->wake, &one, sizeof one);
}

static void tp_ucx_close_x(struct tp_ucx *x)
{
    if (x->rdata)
        U.ucp_stream_data_release(x->ep, x->rdata);
    if (x->ep) {
        ucp_request_param_t p;
        memset(&p, 0, sizeof p);
        bool force = ep_status(x) != UCS_OK || x->broken || atomic_load(&x->down);
        p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        p.flags = force ? UCP_EP_CLOSE_FLAG_FORCE : 0;
        ucs_status_ptr_t req = U.ucp_ep_close_nbx(x->ep, &p);
        if (UCS_PTR_IS_PTR(req)) {
            /* a flushing close waits at most 1 s for the peer */
            int64_t deadline = tp_deadline(1000), spin = 0;
            while (U.ucp_request_check_status(req) == UCS_INPROGRESS) {
                if (U.ucp_worker_progress(x->w))
                    continue;
                if (!idle_wait(x, deadline, &spin))
                    break;
            }
            /* not done (a peer that does not progress): the worker goes anyway */
            U.ucp_request_free(req);
        }
        x->ep = NULL;
    }
    ux_free(x);
}

static void tp_ucx_close(apigen_conn *c)
{
    if (c->priv)
        tp_ucx_close_x(c->priv);
    c->priv = NULL;
}

/* ---- listeners ------------------------------------------------------------------- */
struct tp_ucx_listener {
    ucp_worker_h w;
    ucp_listener_h l;
    int efd;
    int pipe[2];  /* [0]: the listener's fd (a byte per queued request) */
    int stop;     /* eventfd: ends the thread */
    pthread_t thr;
    bool thr_started;
    pthread_mutex_t mu;
    ucp_conn_request_h q[256];
    unsigned qn;
};

static void on_conn(ucp_conn_request_h req, void *arg)
{
    struct tp_ucx_listener *L = arg;
    pthread_mutex_lock(&L->mu);
    if (L->qn < sizeof L->q / sizeof L->q[0]) {
        L->q[L->qn++] = req;
        pthread_mutex_unlock(&L->mu);
        char b = 1;
        (void)!write(L->pipe[1], &b, 1);
        return;
    }
    pthread_mutex_unlock(&L->mu);
    U.ucp_listener_reject(L->l, req); /* backlog full */
}

static void *listen_main(void *arg)
{
    struct tp_ucx_listener *L = arg;
    for (;;) {
        while (U.ucp_worker_progress(L->w))
            ;
        if (U.ucp_worker_arm(L->w) != UCS_OK)
            continue;
        struct pollfd pf[2] = {{L->efd, POLLIN, 0}, {L->stop, POLLIN, 0}};
        (void)poll(pf, 2, 100);
        if (pf[1].revents)
            return NULL;
    }
}

static void ucx_listener_free(struct tp_ucx_listener *L)
{
    if (L->thr_started) {
        uint64_t one = 1;
        (void)!write(L->stop, &one, sizeof one);
        pthread_join(L->thr, NULL);
    }
    if (L->l) {
        for (unsigned i = 0; i < L->qn; i++)
            U.ucp_listener_reject(L->l, L->q[i]);
        U.ucp_listener_destroy(L->l);
    }
    if (L->w)
        U.ucp_worker_destroy(L->w);
    for (int i = 0; i < 2; i++)
        if (L->pipe[i] >= 0)
            close(L->pipe[i]);
    if (L->stop >= 0)
        close(L->stop);
    pthread_mutex_destroy(&L->mu);
    free(L);
}

static void addr_url(const struct sockaddr_storage *ss, char *out, size_t cap)
{
    char host[256] = "?", port[16] = "?";
    getnameinfo((const struct sockaddr *)ss,
                ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in),
                host, sizeof host, port, sizeof port, NI_NUMERICHOST | NI_NUMERICSERV);
    snprintf(out, cap, strchr(host, ':') ? "ucx://[%s]:%s" : "ucx://%s:%s", host, port);
}

static bool tp_ucx_listen(const apigen_url *u, const char *url, apigen_listener **out, char *err,
                   size_t errlen)
{
    char why[300];
    if (!ucx_ready(why, sizeof why)) {
        tp_err(err, errlen, "cannot listen on %s: %s", url, why);
        return false;
    }
    struct sockaddr_storage ss;
    socklen_t sl;
    int g = resolve(u, true, &ss, &sl);
    if (g) {
        tp_err(err, errlen, "cannot listen on %s: %s", url, gai_strerror(g));
        return false;
    }
    apigen_listener *l = tp_listener_new(&tp_ucx_ops, -1, err, errlen);
    struct tp_ucx_listener *L = calloc(1, sizeof *L);
    if (!l || !L) {
        free(l);
        free(L);
        tp_err(err, errlen, "out of memory");
        return false;
    }
    pthread_mutex_init(&L->mu, NULL);
    L->pipe[0] = L->pipe[1] = -1;
    L->stop = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (L->stop < 0 || pipe2(L->pipe, O_CLOEXEC) < 0) {
        tp_err(err, errlen, "cannot listen on %s: %s", url, strerror(errno));
        goto fail;
    }
    if (!(L->w = worker_new(UCS_THREAD_MODE_MULTI, &L->efd, why, sizeof why))) {
        tp_err(err, errlen, "cannot listen on %s: %s", url, why);
        goto fail;
    }
    ucp_listener_params_t lp;
    memset(&lp, 0, sizeof lp);
    lp.field_mask = UCP_LISTENER_PARAM_FIELD_SOCK_ADDR | UCP_LISTENER_PARAM_FIELD_CONN_HANDLER;
    lp.sockaddr.addr = (struct sockaddr *)&ss;
    lp.sockaddr.addrlen = sl;
    lp.conn_handler.cb = on_conn;
    lp.conn_handler.arg = L;
    ucs_status_t st = U.ucp_listener_create(L->w, &lp, &L->l);
    if (st != UCS_OK) {
        L->l = NULL;
        tp_err(err, errlen, "cannot listen on %s: %s", url, U.ucs_status_string(st));
        goto fail;
    }
    ucp_listener_attr_t la;
    memset(&la, 0, sizeof la);
    la.field_mask = UCP_LISTENER_ATTR_FIELD_SOCKADDR;
    if (U.ucp_listener_query(L->l, &la) == UCS_OK)
        addr_url(&la.sockaddr, l->url, sizeof l->url);
    else
        snprintf(l->url, sizeof l->url, "%s", url);
    if (pthread_create(&L->thr, NULL, listen_main, L) != 0) {
        tp_err(err, errlen, "cannot listen on %s: cannot start a thread", url);
        goto fail;
    }
    L->thr_started = true;
    l->fd = L->pipe[0];
    l->priv = L;
    *out = l;
    return true;
fail:
    ucx_listener_free(L);
    free(l);
    return false;
}

static bool tp_ucx_accept(apigen_listener *l, apigen_conn **out, char *err, size_t errlen)
{
    struct tp_ucx_listener *L = l->priv;
    char b;
    ssize_t k;
    do
        k = read(L->pipe[0], &b, 1);
    while (k < 0 && errno == EINTR);
    if (k != 1) {
        tp_err(err, errlen, "accept on %s: %s", l->url, k < 0 ? strerror(errno) : "listener closed");
        return false;
    }
    pthread_mutex_lock(&L->mu);
    ucp_conn_request_h req = L->qn ? L->q[0] : NULL;
    if (L->qn)
        memmove(L->q, L->q + 1, --L->qn * sizeof L->q[0]);
    pthread_mutex_unlock(&L->mu);
    if (!req) {
        tp_err(err, errlen, "accept on %s: no connection request", l->url);
        return false;
    }
    char peer[sizeof ((apigen_conn *)0)->peer] = "", why[300];
    ucp_conn_request_attr_t ra;
    memset(&ra, 0, sizeof ra);
    ra.field_mask = UCP_CONN_REQUEST_ATTR_FIELD_CLIENT_ADDR;
    if (U.ucp_conn_request_query(req, &ra) == UCS_OK)
        addr_url(&ra.client_address, peer, sizeof peer);
    else
        snprintf(peer, sizeof peer, "client of %s", l->url);
    struct tp_ucx *x = ux_new(why, sizeof why);
    if (!x) {
        U.ucp_listener_reject(L->l, req);
        tp_err(err, errlen, "accept on %s: %s", l->url, why);
        return false;
    }
    ucp_ep_params_t ep;
    memset(&ep, 0, sizeof ep);
    ep.field_mask = UCP_EP_PARAM_FIELD_CONN_REQUEST;
    ep.conn_request = req;
    if (!ep_create(x, &ep, why, sizeof why)) {
        tp_err(err, errlen, "accept on %s: %s: %s", l->url, peer, why);
        ux_free(x);
        return false;
    }
    /* No waiting for the wire-up here: the server side's flush completes only
     * after a wire-up message that the client sends while its worker
     * progresses after its connect returned, so a client busy elsewhere held
     * accept (and the server's one accept loop) for its whole timeout. The
     * wire-up finishes in the connection's first recv or send; a stalled or
     * vanished client fails that, not the accept loop. */
    if (!(*out = conn_new(x, peer, err, errlen))) {
        tp_ucx_close_x(x);
        return false;
    }
    return true;
}

static void tp_ucx_listener_close(apigen_listener *l)
{
    ucx_listener_free(l->priv);
    l->priv = NULL;
    l->fd = -1; /* the pipe, closed above */
}

const tp_ops tp_ucx_ops = {
    .scheme = "ucx",
    .form = TP_URL_HOSTPORT,
    .example = "ucx://host:port",
    .connect = tp_ucx_connect,
    .listen = tp_ucx_listen,
    .accept = tp_ucx_accept,
    .listener_close = tp_ucx_listener_close,
    .send = tp_ucx_send,
    .recv = tp_ucx_recv,
    .shutdown = tp_ucx_shutdown,
    .close = tp_ucx_close,
    /* no adopt, no handoff_fds: a UCX endpoint cannot move to another process */
};
