/* The floor of bulk copies over a socket: plain C, no framing, the same
 * buffer size the worker copies. The measuring process and an echo child
 * (pinned like a server) connect over loopback tcp or a unix socket; "up"
 * sends n bytes to the child, which receives them all into a buffer of n
 * and answers one byte; "down" asks with one byte and receives n. The
 * default is the transports' own socket settings (TCP_NODELAY, the kernel's
 * buffer autotuning); the variants measure what the bulk choices
 * could give at best: fixed socket buffers, MSG_ZEROCOPY sends, and the n
 * bytes split over several connections (one thread per connection each
 * side). */
#define _GNU_SOURCE
#include "raw_stream.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY 60
#endif
#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY 0x4000000
#endif

#define MAX_CONNS 8

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Waits until the kernel reports every zerocopy send up to `upto` (its
 * counter) done, so the buffer may change again. */
static int zc_drain(int fd, uint32_t upto)
{
    for (;;) {
        char ctl[128];
        struct msghdr m = {.msg_control = ctl, .msg_controllen = sizeof ctl};
        ssize_t k = recvmsg(fd, &m, MSG_ERRQUEUE);
        if (k < 0 && (errno == EAGAIN || errno == EINTR)) {
            struct pollfd p = {fd, 0, 0}; /* POLLERR comes unasked */
            poll(&p, 1, 1000);
            continue;
        }
        if (k < 0)
            return -1;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
            struct sock_extended_err *e = (struct sock_extended_err *)CMSG_DATA(c);
            if (e->ee_origin == SO_EE_ORIGIN_ZEROCOPY && e->ee_data + 1 >= upto)
                return 0;
        }
    }
}

typedef struct side {
    int fd, zc;
    uint32_t zc_sent; /* zerocopy sends so far (the kernel counts from 0) */
} side;

static int send_all(side *s, const char *p, size_t n)
{
    int zc = s->zc && n >= 65536;
    while (n) {
        ssize_t k = send(s->fd, p, n, MSG_NOSIGNAL | (zc ? MSG_ZEROCOPY : 0));
        if (k < 0 && errno == ENOBUFS && zc) { /* out of optmem: let completions in */
            if (s->zc_sent && zc_drain(s->fd, s->zc_sent))
                return -1;
            continue;
        }
        if (k <= 0)
            return -1;
        if (zc)
            s->zc_sent++;
        p += k;
        n -= (size_t)k;
    }
    return zc && s->zc_sent ? zc_drain(s->fd, s->zc_sent) : 0;
}

static int recv_all(int fd, char *p, size_t n)
{
    while (n) {
        ssize_t k = recv(fd, p, n, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static void setup_fd(int fd, const raw_stream_opts *o)
{
    int one = 1;
    if (o->tcp)
        (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (o->buf > 0) {
        (void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &o->buf, sizeof o->buf);
        (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &o->buf, sizeof o->buf);
    }
    if (o->zerocopy)
        (void)setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof one);
}

/* One connection's share of a copy, on its own thread. */
typedef struct job {
    side s;
    char *p;
    size_t n;
    int send, rc;
} job;

static void *run_job(void *arg)
{
    job *j = arg;
    j->rc = j->send ? send_all(&j->s, j->p, j->n) : recv_all(j->s.fd, j->p, j->n);
    return NULL;
}

/* Moves buf over the k connections, slice i on connection i; send or receive. */
static int move(side *sd, int k, char *buf, size_t n, int send)
{
    job j[MAX_CONNS];
    pthread_t th[MAX_CONNS];
    size_t per = (n / (size_t)k + 4095) & ~(size_t)4095, at = 0;
    for (int i = 0; i < k; i++) {
        size_t len = i == k - 1 ? n - at : (per < n - at ? per : n - at);
        j[i] = (job){sd[i], buf + at, len, send, 0};
        at += len;
        if (i && pthread_create(&th[i], NULL, run_job, &j[i]) != 0)
            return -1;
    }
    run_job(&j[0]);
    int rc = j[0].rc;
    sd[0] = j[0].s;
    for (int i = 1; i < k; i++) {
        pthread_join(th[i], NULL);
        rc |= j[i].rc;
        sd[i] = j[i].s;
    }
    return rc;
}

/* The child: one command byte on connection 0 ('u': receive n then ack, 'd': send n). */
static void echo(side *sd, int k, char *buf, size_t n)
{
    char cmd, ack = 1;
    while (recv_all(sd[0].fd, &cmd, 1) == 0) {
        if (cmd == 'u' && (move(sd, k, buf, n, 0) || send(sd[0].fd, &ack, 1, MSG_NOSIGNAL) != 1))
            break;
        if (cmd == 'd' && move(sd, k, buf, n, 1))
            break;
    }
    _exit(0);
}

double raw_stream_gbps(const raw_stream_opts *o, int up, size_t n, int rounds,
                       void (*peer_setup)(void))
{
    int k = o->conns < 1 ? 1 : o->conns > MAX_CONNS ? MAX_CONNS : o->conns;
    struct sockaddr_storage ss;
    socklen_t sl;
    memset(&ss, 0, sizeof ss);
    int lfd = socket(o->tcp ? AF_INET : AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (lfd < 0)
        return -1;
    if (o->tcp) {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET;
        a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        sl = sizeof *a;
    } else {
        struct sockaddr_un *a = (struct sockaddr_un *)&ss;
        a->sun_family = AF_UNIX;
        /* abstract name: nothing to remove afterwards */
        int len = snprintf(a->sun_path + 1, sizeof a->sun_path - 1, "apigen-bench-raw-%d", (int)getpid());
        sl = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)len);
    }
    if (o->buf > 0) /* before listen: the window scale is agreed at the handshake */
        (void)setsockopt(lfd, SOL_SOCKET, SO_RCVBUF, &o->buf, sizeof o->buf);
    if (bind(lfd, (struct sockaddr *)&ss, sl) < 0 || listen(lfd, MAX_CONNS) < 0 ||
        getsockname(lfd, (struct sockaddr *)&ss, &sl) < 0) {
        close(lfd);
        return -1;
    }
    char *buf = malloc(n);
    if (!buf) {
        close(lfd);
        return -1;
    }
    memset(buf, 1, n); /* touched: no page faults in the timed part */
    side sd[MAX_CONNS];
    pid_t pid = fork();
    if (pid == 0) {
        if (peer_setup)
            peer_setup();
        close(lfd);
        for (int i = 0; i < k; i++) {
            sd[i] = (side){socket(o->tcp ? AF_INET : AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), o->zerocopy, 0};
            if (sd[i].fd < 0)
                _exit(1);
            setup_fd(sd[i].fd, o);
            if (connect(sd[i].fd, (struct sockaddr *)&ss, sl) < 0)
                _exit(1);
        }
        echo(sd, k, buf, n);
    }
    int got = 0;
    for (; pid > 0 && got < k; got++) {
        sd[got] = (side){accept4(lfd, NULL, NULL, SOCK_CLOEXEC), o->zerocopy, 0};
        if (sd[got].fd < 0)
            break;
        setup_fd(sd[got].fd, o);
    }
    close(lfd);
    double best = -1;
    if (got == k) {
        char cmd = up ? 'u' : 'd', ack;
        for (int r = 0; r <= rounds; r++) { /* round 0 warms both ends */
            double t0 = now_s();
            int bad = send(sd[0].fd, &cmd, 1, MSG_NOSIGNAL) != 1 ||
                      (up ? move(sd, k, buf, n, 1) || recv_all(sd[0].fd, &ack, 1) : move(sd, k, buf, n, 0));
            if (bad) {
                best = -1;
                break;
            }
            double g = (double)n / (now_s() - t0) / 1e9;
            if (r && g > best)
                best = g;
        }
    }
    for (int i = 0; i < got; i++)
        if (sd[i].fd >= 0)
            close(sd[i].fd);
    if (pid > 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
    free(buf);
    return best;
}
