/* apigen transports: one byte-stream interface, chosen by URL scheme.
 *
 *   unix:///abs/path       AF_UNIX stream socket (listener unlinks a stale file)
 *   tcp://host:port        TCP, TCP_NODELAY on both ends
 *   tcp://[::1]:port       IPv6 literal
 *   shm://name             same machine: shared-memory rings, set up over an
 *                          abstract unix socket (shm.c; name: [A-Za-z0-9._-])
 *   ucx://host:port        UCX stream endpoints (ucx.c): RDMA, shared memory or
 *                          TCP, as UCX finds them; built when UCX's headers are
 *                          found, libucp loaded at run time (fd of a conn: -1)
 *   tls://host:port        TLS over TCP (tls.c; built when OpenSSL is found).
 *                          Server: apigen_tp_tls_server_setup first. Guest:
 *                          APIGEN_TLS_CA, APIGEN_TLS_SERVER_NAME,
 *                          APIGEN_TLS_CERT + APIGEN_TLS_KEY (read at connect)
 *
 * Each transport is a table of operations (tp_internal.h) in a file of its
 * own, chosen once from the URL's scheme (table.c); docs/internals.md says
 * how to add one.
 *
 * Errors come back as human strings in a caller buffer (err, errlen); err may
 * be NULL. Timeouts are in milliseconds, -1 = wait forever. Nothing here
 * raises SIGPIPE (MSG_NOSIGNAL). Only runtime/ includes this header. */
#ifndef APIGEN_TRANSPORT_H
#define APIGEN_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#if defined(__GNUC__)
#define APIGEN_TP_CHECK __attribute__((warn_unused_result))
#else
#define APIGEN_TP_CHECK
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct apigen_conn apigen_conn;
typedef struct apigen_listener apigen_listener;

/* ---- URLs ------------------------------------------------------------------ */
typedef struct apigen_url {
    char scheme[8];  /* "unix", "tcp", "shm", "ucx", "tls": the transport's name */
    char path[108];  /* unix: absolute socket path (fits sun_path); shm: the name */
    char host[256];  /* tcp, ucx, tls: host name or address, without [] */
    char port[8];    /* tcp, ucx, tls: decimal port, "0" = any (listen only) */
} apigen_url;

APIGEN_TP_CHECK bool apigen_url_parse(const char *url, apigen_url *out, char *err, size_t errlen);
/* A list of servers (APIGEN_SERVER=url1,url2,...): the number of
 * comma-separated URLs in list (empty ones count: the connect names them),
 * and the k-th of them copied into out (false: no such one, or longer than
 * cap - 1 bytes). */
unsigned apigen_url_list_count(const char *list);
APIGEN_TP_CHECK bool apigen_url_list_item(const char *list, unsigned k, char *out, size_t cap);

/* ---- connections ------------------------------------------------------------ */
typedef enum apigen_tp_result {
    APIGEN_TP_OK = 0,
    APIGEN_TP_EOF = 1,      /* peer closed cleanly before the first byte */
    APIGEN_TP_ERROR = -1,   /* error, or EOF in the middle of the n bytes */
    APIGEN_TP_TIMEOUT = -2, /* nothing (more) arrived within the timeout */
} apigen_tp_result;

APIGEN_TP_CHECK bool apigen_tp_connect(const char *url, int timeout_ms, apigen_conn **out,
                                       char *err, size_t errlen);
/* Sends every byte of iov[] or fails (the stream is then unusable). */
APIGEN_TP_CHECK bool apigen_tp_send(apigen_conn *c, const struct iovec *iov, int iovcnt,
                                    int timeout_ms, char *err, size_t errlen);
APIGEN_TP_CHECK bool apigen_tp_send_buf(apigen_conn *c, const void *p, size_t n, int timeout_ms,
                                        char *err, size_t errlen);
/* Receives exactly n bytes. */
APIGEN_TP_CHECK apigen_tp_result apigen_tp_recv(apigen_conn *c, void *buf, size_t n,
                                                int timeout_ms, char *err, size_t errlen);
/* A length-prefixed message's head: exactly head_n bytes, whose
 * little-endian u32 at len_off is the body's length; and, where the
 * transport can do it in the same pass (a shared ring), the whole body too
 * when all of it has arrived and it fits in body_cap (*body_got = its
 * length; else 0 and the caller receives the body). */
APIGEN_TP_CHECK apigen_tp_result apigen_tp_recv_head(apigen_conn *c, void *head, size_t head_n,
                                                     size_t len_off, void *body, size_t body_cap,
                                                     size_t *body_got, int timeout_ms, char *err,
                                                     size_t errlen);
/* Wakes any thread blocked in send/recv on c (they fail); thread-safe. */
void apigen_tp_shutdown(apigen_conn *c);
void apigen_tp_close(apigen_conn *c);
/* "unix:///path" or "tcp://1.2.3.4:5678" of the other end, for log lines. */
const char *apigen_tp_peer(const apigen_conn *c);
int apigen_tp_fd(const apigen_conn *c); /* for poll(); -1 if none */
/* Whether several connections of c's transport carry one large transfer
 * faster than c alone (tcp): the runtime's lanes (runtime/lanes.c). */
bool apigen_tp_lanes_useful(const apigen_conn *c);
/* How long (us) a queued async call of c's sender waits at most once the
 * sender was idle that long: the default of APIGEN_EAGER_US for c (shm 20,
 * sockets 0: off). */
int apigen_tp_eager_us(const apigen_conn *c);
/* One pointer the runtime keeps with a connection (NULL at first; the
 * transport never reads it, apigen_tp_close does not free it). */
void apigen_tp_set_user(apigen_conn *c, void *p);
void *apigen_tp_user(const apigen_conn *c);
/* c carries a caller's requests and their replies (not a channel the peer
 * writes to when it likes): once a wait for data has spun its budget, it
 * yields the CPU in a loop for up to APIGEN_YIELD_US (default 2000) before it
 * sleeps, as a vendor runtime's synchronize spins while the device works. A
 * reply that comes after a long kernel is then seen within a microsecond, not
 * 5-15 us after a wake-up; another thread that needs the core gets it. The
 * default is 0 (sleep after the spin) where the process may use fewer than 4
 * CPUs (its affinity mask). APIGEN_YIELD_US=0: never yield. */
void apigen_tp_set_reply_waits(apigen_conn *c);
/* A connection over a stream socket fd received from elsewhere (a server's
 * session child gets its clients' sockets from its parent); takes fd. A
 * peer that names a tls:// URL (apigen_tp_peer of a handed-off tls://
 * connection) makes it a TLS server connection: its handshake runs anew. */
APIGEN_TP_CHECK bool apigen_tp_adopt_fd(int fd, const char *peer, apigen_conn **out, char *err,
                                        size_t errlen);
/* Whether c can be passed to another process (apigen_tp_handoff_fds). */
bool apigen_tp_passable(const apigen_conn *c);
/* The descriptors that carry c, to pass to another process (SCM_RIGHTS):
 * 1 (a stream socket) or 2 (an accepted shm:// connection: its socket and
 * its shared segment); 0 when c cannot be passed. c keeps them: after
 * sending, release it with apigen_tp_release. */
int apigen_tp_handoff_fds(apigen_conn *c, int fds[2]);
/* The other process's side: a connection over the nfds descriptors
 * apigen_tp_handoff_fds gave (takes them, closes them on failure). */
APIGEN_TP_CHECK bool apigen_tp_adopt_fds(const int *fds, int nfds, const char *peer,
                                         apigen_conn **out, char *err, size_t errlen);
/* Closes this process's copy of a connection passed to another process,
 * telling the peer nothing (no shutdown, no close mark in shared memory);
 * tls:// ends this process's TLS with close_notify, which tells the guest
 * to start a new handshake with the process that now holds the socket. */
void apigen_tp_release(apigen_conn *c);
/* Side channel for descriptors: on a connection over a local (AF_UNIX)
 * socket -- unix://, and shm://'s setup socket -- sends n bytes with fd
 * attached (fd -1: none) / receives exactly n bytes and the descriptor that
 * came with them (*fd = -1 when none did). Both ends must agree on when:
 * on unix:// the bytes are part of the stream. false (err) on any other
 * connection, a timeout or a closed peer. */
bool apigen_tp_can_pass_fds(const apigen_conn *c);
APIGEN_TP_CHECK bool apigen_tp_send_side(apigen_conn *c, const void *p, size_t n, int fd,
                                         int timeout_ms, char *err, size_t errlen);
APIGEN_TP_CHECK bool apigen_tp_recv_side(apigen_conn *c, void *p, size_t n, int *fd,
                                         int timeout_ms, char *err, size_t errlen);

/* ---- tls:// ------------------------------------------------------------------ */
/* false when this build has no TLS (OpenSSL was not found at configure time). */
bool apigen_tp_tls_available(void);
/* The server's certificate chain and private key (PEM files), and the CA
 * file client certificates must chain to (NULL: none asked for). Before
 * listening on a tls:// URL. false + err: a file missing, unreadable, not
 * PEM, or a key that does not belong to the certificate. */
APIGEN_TP_CHECK bool apigen_tp_tls_server_setup(const char *cert_file, const char *key_file,
                                                const char *client_ca_file, char *err,
                                                size_t errlen);

/* ---- listeners ------------------------------------------------------------- */
APIGEN_TP_CHECK bool apigen_tp_listen(const char *url, apigen_listener **out, char *err,
                                      size_t errlen);
/* Blocks until a connection arrives (poll the fd first to avoid blocking). */
APIGEN_TP_CHECK bool apigen_tp_accept(apigen_listener *l, apigen_conn **out, char *err,
                                      size_t errlen);
int apigen_tp_listener_fd(const apigen_listener *l);
/* The bound address as a URL (a tcp port 0 is replaced by the real port). */
const char *apigen_tp_listener_url(const apigen_listener *l);
/* Closes; a unix listener also removes its socket file. */
void apigen_tp_listener_close(apigen_listener *l);

#ifdef __cplusplus
}
#endif
#endif
