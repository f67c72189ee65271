/* Private to transports/: the socket-level pieces unix.c and tcp.c share. */
#ifndef APIGEN_TP_INTERNAL_H
#define APIGEN_TP_INTERNAL_H

#include "transport.h"

#include <sys/socket.h>

struct tp_shm;
struct tp_ucx;
struct tp_ucx_listener;
struct tp_tls;

struct apigen_conn {
    int fd;
    char peer[340];
    struct tp_shm *shm; /* shm://: the shared segment (the fd is its setup socket) */
    struct tp_ucx *ucx; /* ucx://: worker and endpoint (fd is -1) */
    struct tp_tls *tls; /* tls://: the TLS state over the tcp socket fd */
};

struct apigen_listener {
    int fd;
    apigen_url_scheme scheme;
    char url[300];
    char unlink_path[108]; /* unix: file to remove on close ("" = none) */
    struct tp_ucx_listener *ucx; /* ucx://: fd is the read end of its request pipe */
};

void tp_err(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
apigen_conn *tp_conn_new(int fd, const char *peer, char *err, size_t errlen);
/* Non-blocking connect on fd, waiting up to timeout_ms for completion. 0 or errno. */
int tp_connect_fd(int fd, const struct sockaddr *sa, socklen_t salen, int timeout_ms);
/* ms left until deadline_ns (-1 = none); never negative unless no deadline. */
int tp_ms_left(int64_t deadline_ns);
int64_t tp_deadline(int timeout_ms);
/* Waits until fd is ready for ev (POLLIN/POLLOUT) or the deadline passes. */
apigen_tp_result tp_wait_fd(int fd, short ev, int64_t deadline, char *err, size_t errlen);

bool tp_unix_connect(const apigen_url *u, const char *url, int timeout_ms, apigen_conn **out,
                     char *err, size_t errlen);
bool tp_unix_listen(const apigen_url *u, const char *url, apigen_listener **out, char *err,
                    size_t errlen);
bool tp_tcp_connect(const apigen_url *u, const char *url, int timeout_ms, apigen_conn **out,
                    char *err, size_t errlen);
bool tp_tcp_listen(const apigen_url *u, const char *url, apigen_listener **out, char *err,
                   size_t errlen);
void tp_tcp_nodelay(int fd);

/* shm.c */
bool tp_shm_connect(const apigen_url *u, const char *url, int timeout_ms, apigen_conn **out,
                    char *err, size_t errlen);
bool tp_shm_listen(const apigen_url *u, const char *url, apigen_listener **out, char *err,
                   size_t errlen);
bool tp_shm_accepted(apigen_listener *l, int fd, apigen_conn **out, char *err, size_t errlen);
bool tp_shm_send(apigen_conn *c, const struct iovec *iov, int iovcnt, int timeout_ms, char *err,
                 size_t errlen);
bool tp_shm_send_buf(apigen_conn *c, const void *p, size_t n, int timeout_ms, char *err,
                     size_t errlen);
apigen_tp_result tp_shm_recv(apigen_conn *c, void *buf, size_t n, int timeout_ms, char *err,
                             size_t errlen);
apigen_tp_result tp_shm_recv_head(apigen_conn *c, void *head, size_t head_n, size_t len_off,
                                  void *body, size_t body_cap, size_t *body_got, int timeout_ms,
                                  char *err, size_t errlen);
void tp_shm_shutdown(apigen_conn *c);
void tp_shm_close(apigen_conn *c);
int tp_shm_segment_fd(const apigen_conn *c); /* server side: the memfd, else -1 */
void tp_shm_disown(apigen_conn *c);          /* closing it says nothing to the peer */
void tp_shm_publish(apigen_conn *c);         /* the consumer's tail, now (before a handoff) */
bool tp_shm_adopt(int sock, int mfd, const char *peer, apigen_conn **out, char *err, size_t errlen);

/* ucx.c (built when UCX's headers are found: APIGEN_HAVE_UCX) */
bool tp_ucx_connect(const apigen_url *u, const char *url, int timeout_ms, apigen_conn **out,
                    char *err, size_t errlen);
bool tp_ucx_listen(const apigen_url *u, const char *url, apigen_listener **out, char *err,
                   size_t errlen);
bool tp_ucx_accept(apigen_listener *l, apigen_conn **out, char *err, size_t errlen);
bool tp_ucx_send(apigen_conn *c, const struct iovec *iov, int iovcnt, int timeout_ms, char *err,
                 size_t errlen);
apigen_tp_result tp_ucx_recv(apigen_conn *c, void *buf, size_t n, int timeout_ms, char *err,
                             size_t errlen);
void tp_ucx_shutdown(apigen_conn *c);
void tp_ucx_close(apigen_conn *c);
void tp_ucx_close_x(struct tp_ucx *x);
void tp_ucx_listener_close(apigen_listener *l);


/* tls.c (built when OpenSSL's headers are found: APIGEN_HAVE_TLS) */
bool tp_tls_connect(const apigen_url *u, const char *url, int timeout_ms, apigen_conn **out,
                    char *err, size_t errlen);
bool tp_tls_listen(const apigen_url *u, const char *url, apigen_listener **out, char *err,
                   size_t errlen);
bool tp_tls_accepted(int fd, const char *peer, apigen_conn **out, char *err, size_t errlen);
bool tp_tls_adopt(int fd, const char *peer, apigen_conn **out, char *err, size_t errlen);
bool tp_tls_send(apigen_conn *c, const struct iovec *iov, int iovcnt, int timeout_ms, char *err,
                 size_t errlen);
apigen_tp_result tp_tls_recv(apigen_conn *c, void *buf, size_t n, int timeout_ms, char *err,
                             size_t errlen);
void tp_tls_hand_over(apigen_conn *c); /* close_notify before a handoff */
void tp_tls_close(apigen_conn *c);

#endif
