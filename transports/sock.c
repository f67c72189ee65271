/* The apigen_tp_* entry points, each one call through the connection's (or
 * listener's) table of operations, chosen once from the URL (table.c); and
 * what every stream-socket transport shares: all-or-error send, exact recv
 * with timeouts, accept, passing descriptors. */
#define _GNU_SOURCE
#include "tp_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void tp_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

int64_t tp_deadline(int timeout_ms)
{
    return timeout_ms < 0 ? -1 : tp_mono_ns() + (int64_t)timeout_ms * 1000000;
}

int tp_ms_left(int64_t deadline_ns)
{
    if (deadline_ns < 0)
        return -1;
    int64_t left = deadline_ns - tp_mono_ns();
    if (left <= 0)
        return 0;
    int64_t ms = (left + 999999) / 1000000;
    return ms > 0x7fffffff ? 0x7fffffff : (int)ms;
}

apigen_conn *tp_conn_new(const tp_ops *ops, int fd, const char *peer, char *err, size_t errlen)
{
    apigen_conn *c = calloc(1, sizeof *c);
    if (!c) {
        tp_err(err, errlen, "out of memory");
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    c->ops = ops;
    c->fd = fd;
    snprintf(c->peer, sizeof c->peer, "%s", peer);
    return c;
}

apigen_listener *tp_listener_new(const tp_ops *ops, int fd, char *err, size_t errlen)
{
    apigen_listener *l = calloc(1, sizeof *l);
    if (!l) {
        tp_err(err, errlen, "out of memory");
        return NULL;
    }
    l->ops = ops;
    l->fd = fd;
    return l;
}

int tp_connect_fd(int fd, const struct sockaddr *sa, socklen_t salen, int timeout_ms)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
        return errno;
    int64_t deadline = tp_deadline(timeout_ms);
    int rc = 0;
    for (;;) {
        if (connect(fd, sa, salen) == 0)
            break;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN) {
            /* unix socket with a full backlog: retry until the deadline */
            int left = tp_ms_left(deadline);
            if (left == 0) {
                rc = ETIMEDOUT;
                break;
            }
            struct timespec ts = {0, 2000000};
            nanosleep(&ts, NULL);
            continue;
        }
        if (errno != EINPROGRESS) {
            rc = errno;
            break;
        }
        for (;;) {
            struct pollfd pfd = {fd, POLLOUT, 0};
            int n = poll(&pfd, 1, tp_ms_left(deadline));
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0) {
                rc = errno;
                break;
            }
            if (n == 0) {
                rc = ETIMEDOUT;
                break;
            }
            int soerr = 0;
            socklen_t l = sizeof soerr;
            if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &l) < 0)
                rc = errno;
            else
                rc = soerr;
            break;
        }
        break;
    }
    if (rc == 0 && fcntl(fd, F_SETFL, fl) < 0)
        rc = errno;
    return rc;
}

/* The URL's transport, or NULL and why (unknown, bad URL, not in this build). */
static const tp_ops *ops_for(const char *url, apigen_url *u, const char *doing, char *err,
                             size_t errlen)
{
    if (!apigen_url_parse(url, u, err, errlen))
        return NULL;
    const tp_ops *t = tp_ops_of_scheme(u->scheme);
    if (t && t->absent) {
        tp_err(err, errlen, "cannot %s %s: this build has no %s", doing, url, t->absent);
        return NULL;
    }
    return t;
}

bool apigen_tp_connect(const char *url, int timeout_ms, apigen_conn **out, char *err,
                       size_t errlen)
{
    apigen_url u;
    *out = NULL;
    const tp_ops *t = ops_for(url, &u, "connect to", err, errlen);
    return t && t->connect(&u, url, timeout_ms, out, err, errlen);
}

bool apigen_tp_listen(const char *url, apigen_listener **out, char *err, size_t errlen)
{
    apigen_url u;
    *out = NULL;
    const tp_ops *t = ops_for(url, &u, "listen on", err, errlen);
    return t && t->listen(&u, url, out, err, errlen);
}

apigen_tp_result tp_wait_fd(int fd, short ev, int64_t deadline, char *err, size_t errlen)
{
    for (;;) {
        struct pollfd pfd = {fd, ev, 0};
        int n = poll(&pfd, 1, tp_ms_left(deadline));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            tp_err(err, errlen, "poll: %s", strerror(errno));
            return APIGEN_TP_ERROR;
        }
        if (n == 0) {
            tp_err(err, errlen, "timed out");
            return APIGEN_TP_TIMEOUT;
        }
        return APIGEN_TP_OK;
    }
}

#define TP_MAX_IOV 64

bool apigen_tp_send(apigen_conn *c, const struct iovec *iov, int iovcnt, int timeout_ms,
                    char *err, size_t errlen)
{
    if (iovcnt < 0 || iovcnt > TP_MAX_IOV) {
        tp_err(err, errlen, "too many iovecs (%d)", iovcnt);
        return false;
    }
    return c->ops->send(c, iov, iovcnt, timeout_ms, err, errlen);
}

bool tp_sock_send(apigen_conn *c, const struct iovec *iov, int iovcnt, int timeout_ms, char *err,
                  size_t errlen)
{
    struct iovec v[TP_MAX_IOV];
    int n = 0;
    for (int i = 0; i < iovcnt; i++)
        if (iov[i].iov_len)
            v[n++] = iov[i];
    int64_t deadline = tp_deadline(timeout_ms);
    int first = 0;
    while (first < n) {
        struct msghdr m;
        memset(&m, 0, sizeof m);
        m.msg_iov = v + first;
        m.msg_iovlen = (size_t)(n - first);
        int flags = MSG_NOSIGNAL | (timeout_ms >= 0 ? MSG_DONTWAIT : 0);
        ssize_t k = sendmsg(c->fd, &m, flags);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            if ((errno == EAGAIN || errno == EWOULDBLOCK) && timeout_ms >= 0) {
                apigen_tp_result r = tp_wait_fd(c->fd, POLLOUT, deadline, err, errlen);
                if (r != APIGEN_TP_OK) {
                    if (r == APIGEN_TP_TIMEOUT)
                        tp_err(err, errlen, "send to %s timed out after %d ms", c->peer,
                               timeout_ms);
                    return false;
                }
                continue;
            }
            tp_err(err, errlen, "send to %s: %s", c->peer, strerror(errno));
            return false;
        }
        size_t done = (size_t)k;
        while (first < n && done >= v[first].iov_len) {
            done -= v[first].iov_len;
            first++;
        }
        if (first < n) {
            v[first].iov_base = (char *)v[first].iov_base + done;
            v[first].iov_len -= done;
        }
    }
    return true;
}

bool apigen_tp_send_buf(apigen_conn *c, const void *p, size_t n, int timeout_ms, char *err,
                        size_t errlen)
{
    if (c->ops->send_buf)
        return c->ops->send_buf(c, p, n, timeout_ms, err, errlen);
    struct iovec v = {(void *)p, n};
    return c->ops->send(c, &v, 1, timeout_ms, err, errlen);
}

apigen_tp_result apigen_tp_recv_head(apigen_conn *c, void *head, size_t head_n, size_t len_off,
                                     void *body, size_t body_cap, size_t *body_got,
                                     int timeout_ms, char *err, size_t errlen)
{
    *body_got = 0;
    if (c->ops->recv_head)
        return c->ops->recv_head(c, head, head_n, len_off, body, body_cap, body_got, timeout_ms,
                                 err, errlen);
    return c->ops->recv(c, head, head_n, timeout_ms, err, errlen);
}

apigen_tp_result apigen_tp_recv(apigen_conn *c, void *buf, size_t n, int timeout_ms, char *err,
                                size_t errlen)
{
    return c->ops->recv(c, buf, n, timeout_ms, err, errlen);
}

/* Socket waits spin (APIGEN_SOCK_SPIN_US, default 20 us; then as long as the
 * connection's recent waits, up to APIGEN_SPIN_MAX_US: spin.c) with
 * non-blocking reads before they poll: a reader blocked in poll is woken
 * 5-15 us after the bytes came, most of a round trip on loopback. */
#define SOCK_SPIN_US_DEFAULT 20
static pthread_once_t sock_spin_once = PTHREAD_ONCE_INIT;
static int64_t sock_spin_ns, sock_spin_max_ns;
static void sock_spin_init(void)
{
    tp_spin_config("APIGEN_SOCK_SPIN_US", SOCK_SPIN_US_DEFAULT, &sock_spin_ns, &sock_spin_max_ns);
}

/* Read-ahead: a frame is read as a header, then its payload; through
 * AHEAD_BYTES of buffer one recv() brings both and, when the sender is
 * ahead, the frames behind them (a server thread receiving queued launches
 * made two system calls per launch without it). Reads of AHEAD_DIRECT
 * bytes or more go straight into the caller's buffer once the read-ahead
 * is used up. */
enum { AHEAD_BYTES = 32768, AHEAD_DIRECT = 8192 };

static size_t take_ahead(apigen_conn *c, void *buf, size_t n)
{
    size_t k = c->ahead_len - c->ahead_pos;
    if (k > n)
        k = n;
    memcpy(buf, c->ahead + c->ahead_pos, k);
    c->ahead_pos += (uint32_t)k;
    if (c->ahead_pos == c->ahead_len)
        c->ahead_pos = c->ahead_len = 0;
    return k;
}

apigen_tp_result tp_sock_recv(apigen_conn *c, void *buf, size_t n, int timeout_ms, char *err,
                              size_t errlen)
{
    size_t got = 0;
    int64_t deadline = -1; /* computed at the first wait: a read that finds its bytes reads no clock */
    int64_t start = -1, spin_end = -1, yield_end = -1;
    pthread_once(&sock_spin_once, sock_spin_init);
    if (c->ahead_len)
        got = take_ahead(c, buf, n);
    if (got < n && n - got < AHEAD_DIRECT && !c->ahead)
        c->ahead = malloc(AHEAD_BYTES); /* none: every read goes straight in */
    while (got < n) {
        bool into_ahead = c->ahead && n - got < AHEAD_DIRECT;
        ssize_t k = into_ahead ? recv(c->fd, c->ahead, AHEAD_BYTES, MSG_DONTWAIT)
                               : recv(c->fd, (char *)buf + got, n - got, MSG_DONTWAIT);
        if (k > 0) {
            if (start >= 0 && got == 0) /* the wait for a message's first bytes: learned */
                tp_spin_learn(&c->spin, sock_spin_ns, sock_spin_max_ns, tp_mono_ns() - start);
            if (into_ahead) {
                c->ahead_pos = 0;
                c->ahead_len = (uint32_t)k;
                got += take_ahead(c, (char *)buf + got, n - got);
            } else {
                got += (size_t)k;
            }
            continue;
        }
        if (k == 0) {
            if (got == 0) {
                tp_err(err, errlen, "%s closed the connection", c->peer);
                return APIGEN_TP_EOF;
            }
            tp_err(err, errlen, "%s closed the connection in the middle of a message (%zu of %zu bytes)",
                   c->peer, got, n);
            return APIGEN_TP_ERROR;
        }
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            tp_err(err, errlen, "recv from %s: %s", c->peer, strerror(errno));
            return APIGEN_TP_ERROR;
        }
        int64_t now = tp_mono_ns();
        if (start < 0) {
            start = now;
            spin_end = now + tp_spin_budget(&c->spin, sock_spin_ns);
            yield_end = spin_end + tp_yield_ns(&c->spin);
            deadline = tp_deadline(timeout_ms);
        }
        if (now < spin_end) {
            for (int i = 0; i < 16; i++)
                tp_cpu_relax();
            continue;
        }
        /* a caller awaiting a reply: yield a while before it polls (spin.h) */
        if (now < yield_end && (deadline < 0 || now < deadline)) {
            sched_yield();
            continue;
        }
        apigen_tp_result r = tp_wait_fd(c->fd, POLLIN, deadline, err, errlen);
        if (r == APIGEN_TP_TIMEOUT) {
            tp_err(err, errlen, "no data from %s within %d ms", c->peer, timeout_ms);
            return r;
        }
        if (r != APIGEN_TP_OK)
            return r;
    }
    return APIGEN_TP_OK;
}

void apigen_tp_shutdown(apigen_conn *c)
{
    if (c)
        c->ops->shutdown(c);
}

void tp_sock_shutdown(apigen_conn *c)
{
    if (c->fd >= 0)
        shutdown(c->fd, SHUT_RDWR);
}

void apigen_tp_close(apigen_conn *c)
{
    if (!c)
        return;
    if (c->ops->close)
        c->ops->close(c);
    if (c->fd >= 0)
        close(c->fd);
    free(c->ahead);
    free(c);
}

const char *apigen_tp_peer(const apigen_conn *c) { return c ? c->peer : "(none)"; }
int apigen_tp_fd(const apigen_conn *c) { return c ? c->fd : -1; }
bool apigen_tp_lanes_useful(const apigen_conn *c) { return c && c->ops->lanes; }
int apigen_tp_eager_us(const apigen_conn *c) { return c ? c->ops->eager_us : 0; }
void apigen_tp_set_user(apigen_conn *c, void *p)
{
    if (c)
        c->user = p;
}
void *apigen_tp_user(const apigen_conn *c) { return c ? c->user : NULL; }
void apigen_tp_set_reply_waits(apigen_conn *c)
{
    if (c)
        c->spin.yields = true;
}

bool apigen_tp_passable(const apigen_conn *c)
{
    int fds[2];
    return c && c->ops->handoff_fds && c->ops->handoff_fds((apigen_conn *)c, fds, false) > 0;
}

int apigen_tp_handoff_fds(apigen_conn *c, int fds[2])
{
    return c && c->ops->handoff_fds ? c->ops->handoff_fds(c, fds, true) : 0;
}

int tp_sock_handoff_fds(apigen_conn *c, int fds[2], bool publish)
{
    (void)publish;
    fds[0] = c->fd;
    /* bytes already read ahead would not go with the socket */
    return c->fd >= 0 && c->ahead_len == 0;
}

/* The transport a passed connection's peer name names ("tcp://1.2.3.4:5",
 * "client of shm://name (pid 7)"): the first "SCHEME://" in it. */
static const tp_ops *ops_of_peer(const char *peer)
{
    for (const char *p = peer ? strstr(peer, "://") : NULL; p; p = strstr(p + 3, "://")) {
        const char *b = p;
        while (b > peer && b[-1] >= 'a' && b[-1] <= 'z')
            b--;
        char sch[16];
        if (p - b > 0 && (size_t)(p - b) < sizeof sch) {
            memcpy(sch, b, (size_t)(p - b));
            sch[p - b] = 0;
            const tp_ops *t = tp_ops_of_scheme(sch);
            if (t && !t->absent)
                return t;
        }
    }
    return NULL;
}

bool apigen_tp_adopt_fds(const int *fds, int nfds, const char *peer, apigen_conn **out, char *err,
                         size_t errlen)
{
    *out = NULL;
    const tp_ops *t = ops_of_peer(peer);
    if (!t && nfds == 1)
        t = &tp_unix_ops; /* a stream socket of no known name: any socket transport reads it */
    if (t && t->adopt)
        return t->adopt(fds, nfds, peer ? peer : "(passed connection)", out, err, errlen);
    for (int i = 0; i < nfds; i++)
        close(fds[i]);
    tp_err(err, errlen, "cannot adopt a connection of %d descriptors from %s", nfds,
           peer ? peer : "(unnamed)");
    return false;
}

bool tp_sock_adopt(const tp_ops *ops, const int *fds, int nfds, const char *peer,
                   apigen_conn **out, char *err, size_t errlen)
{
    if (nfds != 1 || fds[0] < 0) {
        for (int i = 0; i < nfds; i++)
            close(fds[i]);
        tp_err(err, errlen, "%s: a %s connection is one socket, not %d descriptors", peer,
               ops->scheme, nfds);
        return false;
    }
    *out = tp_conn_new(ops, fds[0], peer, err, errlen);
    return *out != NULL;
}

bool apigen_tp_adopt_fd(int fd, const char *peer, apigen_conn **out, char *err, size_t errlen)
{
    *out = NULL;
    if (fd < 0) {
        tp_err(err, errlen, "no socket to adopt");
        return false;
    }
    return apigen_tp_adopt_fds(&fd, 1, peer ? peer : "(passed socket)", out, err, errlen);
}

void apigen_tp_release(apigen_conn *c)
{
    if (c && c->ops->release)
        c->ops->release(c);
    apigen_tp_close(c);
}

#ifndef APIGEN_HAVE_TLS
bool apigen_tp_tls_available(void) { return false; }

bool apigen_tp_tls_server_setup(const char *cert_file, const char *key_file, const char *client_ca_file,
                                char *err, size_t errlen)
{
    (void)cert_file, (void)key_file, (void)client_ca_file;
    tp_err(err, errlen, "this build has no TLS support (needs libssl-dev)");
    return false;
}
#endif

bool apigen_tp_can_pass_fds(const apigen_conn *c)
{
    int dom = 0;
    socklen_t sl = sizeof dom;
    return c && c->fd >= 0 && getsockopt(c->fd, SOL_SOCKET, SO_DOMAIN, &dom, &sl) == 0 && dom == AF_UNIX;
}

bool apigen_tp_send_side(apigen_conn *c, const void *p, size_t n, int fd, int timeout_ms, char *err,
                         size_t errlen)
{
    if (!apigen_tp_can_pass_fds(c) || !n) {
        tp_err(err, errlen, "%s: cannot pass descriptors on this connection", apigen_tp_peer(c));
        return false;
    }
    int64_t deadline = tp_deadline(timeout_ms);
    size_t done = 0;
    while (done < n) {
        union {
            struct cmsghdr h;
            char b[CMSG_SPACE(sizeof(int))];
        } cb;
        struct iovec v = {(char *)p + done, n - done};
        struct msghdr mh = {.msg_iov = &v, .msg_iovlen = 1};
        if (fd >= 0 && done == 0) {
            memset(&cb, 0, sizeof cb);
            mh.msg_control = cb.b;
            mh.msg_controllen = sizeof cb.b;
            struct cmsghdr *ch = CMSG_FIRSTHDR(&mh);
            ch->cmsg_level = SOL_SOCKET;
            ch->cmsg_type = SCM_RIGHTS;
            ch->cmsg_len = CMSG_LEN(sizeof(int));
            memcpy(CMSG_DATA(ch), &fd, sizeof fd);
        }
        ssize_t k = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k < 0 && (errno == EAGAIN || errno == EINTR)) {
            apigen_tp_result r = tp_wait_fd(c->fd, POLLOUT, deadline, err, errlen);
            if (r != APIGEN_TP_OK)
                return false;
            continue;
        }
        if (k <= 0) {
            tp_err(err, errlen, "sendmsg to %s: %s", c->peer, k < 0 ? strerror(errno) : "nothing sent");
            return false;
        }
        done += (size_t)k;
    }
    return true;
}

bool apigen_tp_recv_side(apigen_conn *c, void *p, size_t n, int *fd, int timeout_ms, char *err,
                         size_t errlen)
{
    *fd = -1;
    if (!apigen_tp_can_pass_fds(c)) {
        tp_err(err, errlen, "%s: cannot pass descriptors on this connection", apigen_tp_peer(c));
        return false;
    }
    if (c->ahead_len) { /* read ahead with recv(), a descriptor would have been dropped */
        tp_err(err, errlen, "%s sent %u bytes before the descriptor was due", apigen_tp_peer(c),
               c->ahead_len - c->ahead_pos);
        return false;
    }
    int64_t deadline = tp_deadline(timeout_ms);
    size_t got = 0;
    while (got < n) {
        apigen_tp_result r = tp_wait_fd(c->fd, POLLIN, deadline, err, errlen);
        if (r != APIGEN_TP_OK)
            goto fail;
        union {
            struct cmsghdr h;
            char b[CMSG_SPACE(4 * sizeof(int))];
        } cb;
        struct iovec v = {(char *)p + got, n - got};
        struct msghdr mh = {.msg_iov = &v, .msg_iovlen = 1, .msg_control = cb.b,
                            .msg_controllen = sizeof cb.b};
        ssize_t k = recvmsg(c->fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
        if (k < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        if (k <= 0) {
            tp_err(err, errlen, "recvmsg from %s: %s", c->peer, k < 0 ? strerror(errno) : "closed");
            goto fail;
        }
        for (struct cmsghdr *ch = CMSG_FIRSTHDR(&mh); ch; ch = CMSG_NXTHDR(&mh, ch))
            if (ch->cmsg_level == SOL_SOCKET && ch->cmsg_type == SCM_RIGHTS) {
                size_t nf = (ch->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                for (size_t i = 0; i < nf; i++) {
                    int f;
                    memcpy(&f, CMSG_DATA(ch) + i * sizeof(int), sizeof f);
                    if (*fd < 0)
                        *fd = f;
                    else
                        close(f); /* one descriptor is all we take */
                }
            }
        got += (size_t)k;
    }
    return true;
fail:
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
    return false;
}

bool apigen_tp_accept(apigen_listener *l, apigen_conn **out, char *err, size_t errlen)
{
    *out = NULL;
    return l->ops->accept(l, out, err, errlen);
}

int tp_sock_accept(apigen_listener *l, char *peer, size_t cap, char *err, size_t errlen)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    int fd;
    do
        fd = accept4(l->fd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        tp_err(err, errlen, "accept on %s: %s", l->url, strerror(errno));
        return -1;
    }
    if (ss.ss_family == AF_INET || ss.ss_family == AF_INET6) {
        char host[256] = "?", port[16] = "?";
        getnameinfo((struct sockaddr *)&ss, sl, host, sizeof host, port, sizeof port,
                    NI_NUMERICHOST | NI_NUMERICSERV);
        if (strchr(host, ':'))
            snprintf(peer, cap, "%s://[%s]:%s", l->ops->scheme, host, port);
        else
            snprintf(peer, cap, "%s://%s:%s", l->ops->scheme, host, port);
    } else {
        snprintf(peer, cap, "client of %s", l->url);
    }
    return fd;
}

int apigen_tp_listener_fd(const apigen_listener *l) { return l ? l->fd : -1; }
const char *apigen_tp_listener_url(const apigen_listener *l) { return l ? l->url : ""; }

void apigen_tp_listener_close(apigen_listener *l)
{
    if (!l)
        return;
    if (l->ops->listener_close)
        l->ops->listener_close(l);
    if (l->fd >= 0)
        close(l->fd);
    if (l->unlink_path[0])
        unlink(l->unlink_path);
    free(l);
}
