/* tcp://host:port: TCP with TCP_NODELAY on both ends (calls are small and
 * latency-bound; Nagle would add tens of milliseconds). */
#define _GNU_SOURCE
#include "tp_internal.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void tp_tcp_nodelay(int fd)
{
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

bool tp_tcp_connect(const apigen_url *u, const char *url, int timeout_ms, apigen_conn **out,
                    char *err, size_t errlen)
{
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int g = getaddrinfo(u->host, u->port, &hints, &res);
    if (g) {
        tp_err(err, errlen, "cannot connect to %s: %s", url, gai_strerror(g));
        return false;
    }
    int rc = ECONNREFUSED;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            rc = errno;
            continue;
        }
        rc = tp_connect_fd(fd, ai->ai_addr, ai->ai_addrlen, timeout_ms);
        if (rc == 0) {
            freeaddrinfo(res);
            tp_tcp_nodelay(fd);
            *out = tp_conn_new(&tp_tcp_ops, fd, url, err, errlen);
            return *out != NULL;
        }
        close(fd);
    }
    freeaddrinfo(res);
    tp_err(err, errlen, "cannot connect to %s: %s", url, strerror(rc));
    return false;
}

bool tp_tcp_listen(const apigen_url *u, const char *url, apigen_listener **out, char *err,
                   size_t errlen)
{
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    int g = getaddrinfo(u->host, u->port, &hints, &res);
    if (g) {
        tp_err(err, errlen, "cannot listen on %s: %s", url, gai_strerror(g));
        return false;
    }
    int rc = EADDRNOTAVAIL, fd = -1;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            rc = errno;
            continue;
        }
        int one = 1;
        (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 128) == 0)
            break;
        rc = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        tp_err(err, errlen, "cannot listen on %s: %s", url, strerror(rc));
        return false;
    }
    apigen_listener *l = tp_listener_new(&tp_tcp_ops, fd, err, errlen);
    if (!l) {
        close(fd);
        return false;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char host[256] = "?", port[16] = "?";
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
        getnameinfo((struct sockaddr *)&ss, sl, host, sizeof host, port, sizeof port,
                    NI_NUMERICHOST | NI_NUMERICSERV);
    if (strchr(host, ':'))
        snprintf(l->url, sizeof l->url, "tcp://[%s]:%s", host, port);
    else
        snprintf(l->url, sizeof l->url, "tcp://%s:%s", host, port);
    *out = l;
    return true;
}

static bool tcp_accept(apigen_listener *l, apigen_conn **out, char *err, size_t errlen)
{
    char peer[sizeof((apigen_conn *)0)->peer];
    int fd = tp_sock_accept(l, peer, sizeof peer, err, errlen);
    if (fd < 0)
        return false;
    tp_tcp_nodelay(fd);
    return (*out = tp_conn_new(&tp_tcp_ops, fd, peer, err, errlen)) != NULL;
}

static bool tcp_adopt(const int *fds, int nfds, const char *peer, apigen_conn **out, char *err,
                      size_t errlen)
{
    return tp_sock_adopt(&tp_tcp_ops, fds, nfds, peer, out, err, errlen);
}

const tp_ops tp_tcp_ops = {
    .scheme = "tcp",
    .form = TP_URL_HOSTPORT,
    .example = "tcp://host:port",
    .connect = tp_tcp_connect,
    .listen = tp_tcp_listen,
    .accept = tcp_accept,
    .adopt = tcp_adopt,
    .send = tp_sock_send,
    .recv = tp_sock_recv,
    .shutdown = tp_sock_shutdown,
    .handoff_fds = tp_sock_handoff_fds,
    .lanes = true,
    /* a send is a system call: at most one per 200 us. H200, 2026-11-27
     * (docs/performance.md): GPU-bound PyTorch steps 0.93-0.94x -> 0.96-0.99x
     * native, CPU-bound ones within their noise */
    .eager_us = 200,
};
