/* Private to transports/: the table of operations every transport fills,
 * and the socket-level pieces the socket transports share. */
#ifndef APIGEN_TP_INTERNAL_H
#define APIGEN_TP_INTERNAL_H

#include "spin.h"
#include "transport.h"

#include <sys/socket.h>

/* One transport: what its URLs look like and its operations. Chosen once,
 * from the URL's scheme (table.c), and kept in every connection and
 * listener it makes: apigen_tp_* calls go straight to it. A new transport
 * is a file that defines one of these plus its line in table.c
 * (docs/internals.md, "Adding a transport"). NULL operations take the
 * default named beside them. */
typedef enum tp_url_form {
    TP_URL_PATH,     /* scheme:///abs/path (fits sun_path) -> apigen_url.path */
    TP_URL_NAME,     /* scheme://name of [A-Za-z0-9._-], 1 to 80 -> .path */
    TP_URL_HOSTPORT, /* scheme://host:port, scheme://[v6]:port -> .host, .port */
} tp_url_form;

typedef struct tp_ops {
    const char *scheme; /* "unix": URLs start "unix://" */
    tp_url_form form;
    const char *example; /* "unix:///path", for messages */
    /* non-NULL: not in this build, and why ("needs libucx-dev"); nothing below is set */
    const char *absent;
    bool (*connect)(const apigen_url *u, const char *url, int timeout_ms, apigen_conn **out,
                    char *err, size_t errlen);
    bool (*listen)(const apigen_url *u, const char *url, apigen_listener **out, char *err,
                   size_t errlen);
    bool (*accept)(apigen_listener *l, apigen_conn **out, char *err, size_t errlen);
    void (*listener_close)(apigen_listener *l); /* NULL: nothing beyond the fd */
    /* A connection over descriptors another process passed (handoff_fds
     * there); takes them. NULL: this transport's connections never move. */
    bool (*adopt)(const int *fds, int nfds, const char *peer, apigen_conn **out, char *err,
                  size_t errlen);
    bool (*send)(apigen_conn *c, const struct iovec *iov, int iovcnt, int timeout_ms, char *err,
                 size_t errlen);
    /* NULL: send of one iovec */
    bool (*send_buf)(apigen_conn *c, const void *p, size_t n, int timeout_ms, char *err,
                     size_t errlen);
    apigen_tp_result (*recv)(apigen_conn *c, void *buf, size_t n, int timeout_ms, char *err,
                             size_t errlen);
    /* NULL: recv of the head only (the caller receives the body) */
    apigen_tp_result (*recv_head)(apigen_conn *c, void *head, size_t head_n, size_t len_off,
                                  void *body, size_t body_cap, size_t *body_got, int timeout_ms,
                                  char *err, size_t errlen);
    void (*shutdown)(apigen_conn *c);
    void (*close)(apigen_conn *c); /* frees c->priv (the fd and c are closed after); NULL: none */
    /* the descriptors to pass c to another process (0: it cannot go); NULL: never */
    int (*handoff_fds)(apigen_conn *c, int fds[2], bool publish);
    /* before closing this process's copy of a passed connection; NULL: nothing */
    void (*release)(apigen_conn *c);
    /* several connections of this transport carry one large transfer faster
     * than one (tcp: one stream is bound by one socket's window and wake-ups) */
    bool lanes;
    /* microseconds a sender's queued async calls wait at most before they
     * leave when it sent nothing for that long (APIGEN_EAGER_US's default;
     * 0: they wait for the flusher or a synchronous call). Worth it where a
     * send is a copy into memory the peer polls (shm), not a system call */
    int eager_us;
} tp_ops;

/* table.c: every transport, and the one a URL or a peer name names */
const tp_ops *tp_ops_of_url(const char *url);
const tp_ops *tp_ops_of_scheme(const char *scheme);
const tp_ops *tp_ops_at(unsigned i); /* NULL past the last */

struct apigen_conn {
    const tp_ops *ops;
    int fd;      /* the socket (-1: none, ucx://) */
    void *priv;  /* the transport's own state (shm: its segment; tls: the SSL) */
    void *user;  /* the runtime's (apigen_tp_set_user): never touched here */
    tp_spin spin; /* how long a wait for data spins (and yields) before it sleeps (spin.h) */
    /* sockets: bytes read ahead of what was asked (tp_sock_recv), so one
     * recv() brings a frame's header, its payload and the frames behind it */
    uint8_t *ahead;
    uint32_t ahead_pos, ahead_len;
    char peer[340];
};

struct apigen_listener {
    const tp_ops *ops;
    int fd;
    char url[300];
    char unlink_path[108]; /* unix: file to remove on close ("" = none) */
    void *priv;            /* ucx://: its listener thread (fd: its request pipe) */
};

void tp_err(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
apigen_conn *tp_conn_new(const tp_ops *ops, int fd, const char *peer, char *err, size_t errlen);
apigen_listener *tp_listener_new(const tp_ops *ops, int fd, char *err, size_t errlen);
/* Non-blocking connect on fd, waiting up to timeout_ms for completion. 0 or errno. */
int tp_connect_fd(int fd, const struct sockaddr *sa, socklen_t salen, int timeout_ms);
/* ms left until deadline_ns (-1 = none); never negative unless no deadline. */
int tp_ms_left(int64_t deadline_ns);
int64_t tp_deadline(int timeout_ms);
/* Waits until fd is ready for ev (POLLIN/POLLOUT) or the deadline passes. */
apigen_tp_result tp_wait_fd(int fd, short ev, int64_t deadline, char *err, size_t errlen);

/* sock.c: what every stream-socket transport shares */
bool tp_sock_send(apigen_conn *c, const struct iovec *iov, int iovcnt, int timeout_ms, char *err,
                  size_t errlen);
apigen_tp_result tp_sock_recv(apigen_conn *c, void *buf, size_t n, int timeout_ms, char *err,
                              size_t errlen);
void tp_sock_shutdown(apigen_conn *c);
int tp_sock_handoff_fds(apigen_conn *c, int fds[2], bool publish); /* the socket alone */
/* accept4 on l's socket; the peer as "SCHEME://host:port" (inet) or
 * "client of URL" (unix). The fd, or -1 (err). */
int tp_sock_accept(apigen_listener *l, char *peer, size_t cap, char *err, size_t errlen);
/* a stream socket connection of ops over the one fd another process passed */
bool tp_sock_adopt(const tp_ops *ops, const int *fds, int nfds, const char *peer,
                   apigen_conn **out, char *err, size_t errlen);

/* tcp.c, for tls.c: the socket part */
bool tp_tcp_connect(const apigen_url *u, const char *url, int timeout_ms, apigen_conn **out,
                    char *err, size_t errlen);
bool tp_tcp_listen(const apigen_url *u, const char *url, apigen_listener **out, char *err,
                   size_t errlen);
void tp_tcp_nodelay(int fd);

/* the transports (table.c lists them) */
extern const tp_ops tp_unix_ops, tp_tcp_ops, tp_shm_ops;
#ifdef APIGEN_HAVE_UCX
extern const tp_ops tp_ucx_ops;
#endif
#ifdef APIGEN_HAVE_TLS
extern const tp_ops tp_tls_ops;
#endif

#endif
