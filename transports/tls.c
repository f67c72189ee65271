/* tls://host:port: TLS 1.2 or later (1.3 preferred) over a tcp:// socket,
 * with OpenSSL (built when OpenSSL's headers are found: APIGEN_HAVE_TLS).
 *
 * Server: apigen_tp_tls_server_setup (certificate chain, key, optional CA of
 * client certificates) before listening. Accept returns at once; the TLS
 * handshake runs on the connection's first send or receive, so a slow or
 * hostile client holds up only its own thread; that call's timeout bounds
 * it (TLS_HANDSHAKE_MS when it has none). A first byte that is not a TLS handshake record is a
 * plain client: it gets a TLS alert in clear text and the connection ends.
 *
 * Guest: apigen_tp_connect does the handshake within its timeout and checks
 * the server's certificate against APIGEN_TLS_CA (a PEM file; unset: the
 * system's CA store) and the URL's host (or APIGEN_TLS_SERVER_NAME);
 * APIGEN_TLS_CERT + APIGEN_TLS_KEY present a client certificate.
 *
 * Handing a connection to another process (a server's session child): a
 * TLS state cannot move between processes, so the parent ends its TLS with
 * close_notify (apigen_tp_release) and the child, which adopts the socket,
 * answers a new handshake on it. A guest that gets close_notify before any
 * byte of data starts that new handshake on the same socket and checks the
 * server's certificate again; at any other time close_notify is the end.
 *
 * One SSL_* call at a time per connection (a mutex): the runtime may send on
 * a connection from one thread while another receives on it. Waiting for the
 * socket happens outside the lock. The socket BIO sends with MSG_NOSIGNAL
 * (no SIGPIPE in the guest's application) and never blocks. */
#define _GNU_SOURCE
#include "tp_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#define TLS_HANDSHAKE_MS 10000 /* server side, and a guest with no timeout */
#define TLS_STAGE 16384        /* small iovecs are gathered into records this big */

struct tp_tls {
    SSL *ssl;
    pthread_mutex_t mu;
    bool server;
    bool done;      /* handshake completed */
    bool looked;    /* server: the first byte was seen to be a TLS handshake */
    bool got_data;  /* guest: application bytes arrived; close_notify is the end now */
    bool restarted; /* guest: the one new handshake after a handover happened */
    char name[256]; /* guest: the name the certificate must carry, for messages */
};
#define TLS(c) ((struct tp_tls *)(c)->priv)

/* ---- the socket BIO: send/recv that neither block nor raise SIGPIPE ---------- */
static BIO_METHOD *g_bio_method;
static pthread_once_t g_bio_once = PTHREAD_ONCE_INIT;

static int bio_write(BIO *b, const char *p, size_t n, size_t *done)
{
    int fd = (int)(intptr_t)BIO_get_data(b);
    BIO_clear_retry_flags(b);
    for (;;) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                BIO_set_retry_write(b);
            return 0;
        }
        *done = (size_t)k;
        return 1;
    }
}

static int bio_read(BIO *b, char *p, size_t n, size_t *done)
{
    int fd = (int)(intptr_t)BIO_get_data(b);
    BIO_clear_retry_flags(b);
    for (;;) {
        ssize_t k = recv(fd, p, n, MSG_DONTWAIT);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                BIO_set_retry_read(b);
            return 0;
        }
        if (k == 0)
            return 0; /* end of stream: no retry */
        *done = (size_t)k;
        return 1;
    }
}

static long bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    (void)b, (void)num, (void)ptr;
    return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

static int bio_create(BIO *b)
{
    BIO_set_init(b, 1);
    return 1;
}

static void bio_method_init(void)
{
    BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "apigen socket");
    if (m && BIO_meth_set_write_ex(m, bio_write) && BIO_meth_set_read_ex(m, bio_read) &&
        BIO_meth_set_ctrl(m, bio_ctrl) && BIO_meth_set_create(m, bio_create))
        g_bio_method = m;
    else
        BIO_meth_free(m);
}

static bool attach_fd(SSL *ssl, int fd)
{
    pthread_once(&g_bio_once, bio_method_init);
    BIO *b = g_bio_method ? BIO_new(g_bio_method) : NULL;
    if (!b)
        return false;
    BIO_set_data(b, (void *)(intptr_t)fd);
    SSL_set_bio(ssl, b, b);
    return true;
}

/* ---- messages ------------------------------------------------------------------ */
/* The reason of the first OpenSSL error queued, "" if none. Clears the queue. */
static const char *ssl_reason(char *buf, size_t len)
{
    unsigned long e = ERR_get_error();
    buf[0] = 0;
    if (e) {
        const char *r = ERR_reason_error_string(e);
        if (r)
            snprintf(buf, len, "%s", r);
        else
            ERR_error_string_n(e, buf, len);
    }
    ERR_clear_error();
    return buf;
}

static bool readable_file(const char *what, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        tp_err(err, errlen, "%s %s: %s", what, path, strerror(errno));
        return false;
    }
    fclose(f);
    return true;
}

/* ---- contexts -------------------------------------------------------------------- */
static SSL_CTX *g_server_ctx; /* set once before listening; a session child inherits it */
static pthread_once_t g_init_once = PTHREAD_ONCE_INIT;

/* No OpenSSL cleanup at exit: the guest stub's exit-time flush may still send
 * queued calls on a TLS connection after atexit handlers ran. (An
 * application that initialized OpenSSL itself keeps its own choice.) */
static void tls_init(void)
{
    OPENSSL_init_ssl(OPENSSL_INIT_NO_ATEXIT | OPENSSL_INIT_LOAD_SSL_STRINGS | OPENSSL_INIT_LOAD_CRYPTO_STRINGS,
                     NULL);
}

static SSL_CTX *new_ctx(const SSL_METHOD *m)
{
    pthread_once(&g_init_once, tls_init);
    SSL_CTX *ctx = SSL_CTX_new(m);
    if (!ctx)
        return NULL;
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
    /* no session tickets or cache: nothing resumes, and a parent handing a
     * connection over has nothing of its own left to write */
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_num_tickets(ctx, 0);
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    /* read what the socket has, not one record header at a time. Safe with
     * the handover: nobody sends past a close_notify before answering it. */
    SSL_CTX_set_read_ahead(ctx, 1);
    return ctx;
}

/* Own certificate chain + key into ctx; what names the files in messages. */
static bool load_identity(SSL_CTX *ctx, const char *cert_what, const char *cert, const char *key_what,
                          const char *key, char *err, size_t errlen)
{
    char r[256];
    if (!readable_file(cert_what, cert, err, errlen) || !readable_file(key_what, key, err, errlen))
        return false;
    if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1) {
        tp_err(err, errlen, "%s %s: not a PEM certificate (%s)", cert_what, cert, ssl_reason(r, sizeof r));
        return false;
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1) {
        if (strstr(ssl_reason(r, sizeof r), "mismatch"))
            tp_err(err, errlen, "%s %s does not belong to %s %s", key_what, key, cert_what, cert);
        else
            tp_err(err, errlen, "%s %s: not a PEM private key (%s)", key_what, key, r);
        return false;
    }
    if (SSL_CTX_check_private_key(ctx) != 1) {
        tp_err(err, errlen, "%s %s does not belong to %s %s", key_what, key, cert_what, cert);
        ERR_clear_error();
        return false;
    }
    return true;
}

static bool load_ca(SSL_CTX *ctx, const char *what, const char *ca, char *err, size_t errlen)
{
    char r[256];
    if (!readable_file(what, ca, err, errlen))
        return false;
    if (SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1) {
        tp_err(err, errlen, "%s %s: no PEM certificate in it (%s)", what, ca, ssl_reason(r, sizeof r));
        return false;
    }
    return true;
}

bool apigen_tp_tls_available(void) { return true; }

bool apigen_tp_tls_server_setup(const char *cert_file, const char *key_file, const char *client_ca_file,
                                char *err, size_t errlen)
{
    if (!cert_file || !key_file) {
        tp_err(err, errlen, "a TLS server needs both a certificate and its private key");
        return false;
    }
    SSL_CTX *ctx = new_ctx(TLS_server_method());
    if (!ctx) {
        tp_err(err, errlen, "cannot create a TLS context (out of memory?)");
        return false;
    }
    if (!load_identity(ctx, "certificate", cert_file, "private key", key_file, err, errlen))
        goto fail;
    if (client_ca_file) {
        if (!load_ca(ctx, "client CA file", client_ca_file, err, errlen))
            goto fail;
        STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(client_ca_file);
        if (names)
            SSL_CTX_set_client_CA_list(ctx, names);
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    }
    ERR_clear_error();
    SSL_CTX_free(g_server_ctx);
    g_server_ctx = ctx;
    return true;
fail:
    SSL_CTX_free(ctx);
    return false;
}

/* The guest's context, from the environment; rebuilt when it changes. */
static pthread_mutex_t g_client_mu = PTHREAD_MUTEX_INITIALIZER;
static SSL_CTX *g_client_ctx;
static char g_client_env[3][4096];

static const char *env_or_empty(const char *name)
{
    const char *v = getenv(name);
    return v ? v : "";
}

/* A reference to the guest's context (SSL_CTX_free it), or NULL + err. */
static SSL_CTX *client_ctx(char *err, size_t errlen)
{
    const char *ca = env_or_empty("APIGEN_TLS_CA"), *cert = env_or_empty("APIGEN_TLS_CERT"),
               *key = env_or_empty("APIGEN_TLS_KEY");
    const char *now[3] = {ca, cert, key};
    SSL_CTX *ctx = NULL;
    pthread_mutex_lock(&g_client_mu);
    bool same = g_client_ctx != NULL;
    for (int i = 0; i < 3 && same; i++)
        same = strcmp(g_client_env[i], now[i]) == 0;
    if (same) {
        SSL_CTX_up_ref(g_client_ctx);
        ctx = g_client_ctx;
        goto out;
    }
    if ((*cert != 0) != (*key != 0)) {
        tp_err(err, errlen, "a client certificate needs both APIGEN_TLS_CERT and APIGEN_TLS_KEY (%s is not set)",
               *cert ? "APIGEN_TLS_KEY" : "APIGEN_TLS_CERT");
        goto out;
    }
    if (!(ctx = new_ctx(TLS_client_method()))) {
        tp_err(err, errlen, "cannot create a TLS context (out of memory?)");
        goto out;
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    bool ok = *ca ? load_ca(ctx, "APIGEN_TLS_CA", ca, err, errlen)
                  : SSL_CTX_set_default_verify_paths(ctx) == 1;
    if (ok && *cert)
        ok = load_identity(ctx, "APIGEN_TLS_CERT", cert, "APIGEN_TLS_KEY", key, err, errlen);
    if (!ok) {
        if (!*ca && err && !*err)
            tp_err(err, errlen, "cannot load the system's CA store (set APIGEN_TLS_CA)");
        SSL_CTX_free(ctx);
        ctx = NULL;
        goto out;
    }
    ERR_clear_error();
    SSL_CTX_free(g_client_ctx);
    g_client_ctx = ctx;
    for (int i = 0; i < 3; i++)
        snprintf(g_client_env[i], sizeof g_client_env[i], "%s", now[i]);
    SSL_CTX_up_ref(ctx);
out:
    pthread_mutex_unlock(&g_client_mu);
    return ctx;
}

/* ---- connections --------------------------------------------------------------- */
static struct tp_tls *tls_new(SSL_CTX *ctx, int fd, bool server, char *err, size_t errlen)
{
    struct tp_tls *t = calloc(1, sizeof *t);
    if (t)
        t->ssl = SSL_new(ctx);
    if (!t || !t->ssl || !attach_fd(t->ssl, fd)) {
        if (t)
            SSL_free(t->ssl);
        free(t);
        tp_err(err, errlen, "cannot set up TLS (out of memory?)");
        return NULL;
    }
    pthread_mutex_init(&t->mu, NULL);
    t->server = server;
    return t;
}

/* The guest's SSL for a (new) handshake: SNI and the name to verify. */
static bool client_ssl_setup(struct tp_tls *t, char *err, size_t errlen)
{
    unsigned char ip[16];
    X509_VERIFY_PARAM *vp = SSL_get0_param(t->ssl);
    if (inet_pton(AF_INET, t->name, ip) == 1 || inet_pton(AF_INET6, t->name, ip) == 1) {
        if (X509_VERIFY_PARAM_set1_ip_asc(vp, t->name) == 1)
            return true;
    } else if (SSL_set_tlsext_host_name(t->ssl, t->name) == 1 && SSL_set1_host(t->ssl, t->name) == 1) {
        return true;
    }
    tp_err(err, errlen, "cannot check the server's certificate for the name '%s'", t->name);
    return false;
}

/* Waits until the socket is ready for what OpenSSL wants (sslerr). */
static apigen_tp_result wait_for(apigen_conn *c, int sslerr, int64_t deadline, char *err, size_t errlen)
{
    return tp_wait_fd(c->fd, sslerr == SSL_ERROR_WANT_WRITE ? POLLOUT : POLLIN, deadline, err, errlen);
}

/* The connection's end of the handshake, until deadline. TIMEOUT: not
 * finished yet (a later call goes on with it); ERROR + err (for people). */
static apigen_tp_result handshake(apigen_conn *c, int64_t deadline, char *err, size_t errlen)
{
    struct tp_tls *t = c->priv;
    char r[256];
    if (t->server && !t->looked) {
        /* a plain client speaks first too: tell it in clear text and stop */
        apigen_tp_result w = tp_wait_fd(c->fd, POLLIN, deadline, err, errlen);
        if (w != APIGEN_TP_OK)
            return w;
        unsigned char first = 0;
        ssize_t k;
        do
            k = recv(c->fd, &first, 1, MSG_PEEK | MSG_DONTWAIT);
        while (k < 0 && errno == EINTR);
        if (k == 0) {
            tp_err(err, errlen, "%s closed the connection", c->peer);
            return APIGEN_TP_EOF;
        }
        if (k == 1 && first != 0x16) {
            /* alert record: fatal protocol_version */
            static const unsigned char alert[] = {0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x46};
            (void)!send(c->fd, alert, sizeof alert, MSG_NOSIGNAL | MSG_DONTWAIT);
            tp_err(err, errlen, "%s is not a TLS client (a plain tcp:// guest? it must connect with tls://)",
                   c->peer);
            return APIGEN_TP_ERROR;
        }
        t->looked = k == 1;
    }
    for (;;) {
        pthread_mutex_lock(&t->mu);
        ERR_clear_error();
        int ret = t->server ? SSL_accept(t->ssl) : SSL_connect(t->ssl);
        int e = ret == 1 ? SSL_ERROR_NONE : SSL_get_error(t->ssl, ret);
        long vr = SSL_get_verify_result(t->ssl);
        const char *why = e == SSL_ERROR_NONE ? "" : ssl_reason(r, sizeof r);
        pthread_mutex_unlock(&t->mu);
        if (e == SSL_ERROR_NONE) {
            t->done = true;
            return APIGEN_TP_OK;
        }
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
            apigen_tp_result w = wait_for(c, e, deadline, err, errlen);
            if (w == APIGEN_TP_OK)
                continue;
            if (w == APIGEN_TP_TIMEOUT)
                tp_err(err, errlen, "TLS handshake with %s did not finish in time", c->peer);
            return w;
        }
        if (!t->server && vr != X509_V_OK) {
            const char *ca = getenv("APIGEN_TLS_CA");
            tp_err(err, errlen,
                   "%s: the server's certificate is not trusted: %s (checked against %s%s, for the name '%s')",
                   c->peer, X509_verify_cert_error_string(vr), ca && *ca ? "APIGEN_TLS_CA=" : "the system's CA store",
                   ca && *ca ? ca : "", t->name);
        } else if (t->server && vr != X509_V_OK) {
            tp_err(err, errlen, "%s: its client certificate is not trusted: %s (checked against --tls-client-ca)",
                   c->peer, X509_verify_cert_error_string(vr));
        } else if (!*why || e == SSL_ERROR_SYSCALL || strstr(why, "unexpected eof")) {
            tp_err(err, errlen, t->server ? "%s closed the connection during the TLS handshake"
                                          : "%s closed the connection during the TLS handshake (a plain tcp:// "
                                            "server? then connect with tcp://)",
                   c->peer);
        } else if (t->server && strstr(why, "did not return a certificate")) {
            tp_err(err, errlen, "%s: TLS handshake failed: the client sent no certificate (--tls-client-ca asks for one)",
                   c->peer);
        } else {
            tp_err(err, errlen, "%s: TLS handshake failed: %s", c->peer, why);
        }
        return APIGEN_TP_ERROR;
    }
}

/* An operation without a deadline still gives a handshake only so long. */
static int64_t handshake_deadline(int64_t op_deadline)
{
    return op_deadline >= 0 ? op_deadline : tp_deadline(TLS_HANDSHAKE_MS);
}

/* The server's handshake on first use (the caller's timeout bounds it; the
 * runtime reads a handshake frame within 10 s). */
static apigen_tp_result ensure_handshake(apigen_conn *c, int64_t deadline, char *err, size_t errlen)
{
    if (TLS(c)->done)
        return APIGEN_TP_OK;
    apigen_tp_result r = handshake(c, handshake_deadline(deadline), err, errlen);
    if (r == APIGEN_TP_TIMEOUT && deadline < 0) { /* our own bound, not the caller's */
        tp_err(err, errlen, "%s did not complete a TLS handshake within %d ms", c->peer, TLS_HANDSHAKE_MS);
        r = APIGEN_TP_ERROR;
    }
    return r;
}

static bool tp_tls_connect(const apigen_url *u, const char *url, int timeout_ms, apigen_conn **out,
                    char *err, size_t errlen)
{
    int64_t deadline = tp_deadline(timeout_ms < 0 ? TLS_HANDSHAKE_MS : timeout_ms);
    SSL_CTX *ctx = client_ctx(err, errlen);
    if (!ctx)
        return false;
    apigen_conn *c = NULL;
    if (!tp_tcp_connect(u, url, timeout_ms, &c, err, errlen)) {
        SSL_CTX_free(ctx);
        return false;
    }
    c->ops = &tp_tls_ops; /* the tcp socket, with TLS on it */
    c->priv = tls_new(ctx, c->fd, false, err, errlen);
    SSL_CTX_free(ctx);
    if (!c->priv) {
        apigen_tp_close(c);
        return false;
    }
    const char *sn = getenv("APIGEN_TLS_SERVER_NAME");
    snprintf(TLS(c)->name, sizeof TLS(c)->name, "%s", sn && *sn ? sn : u->host);
    if (!client_ssl_setup(TLS(c), err, errlen) || handshake(c, deadline, err, errlen) != APIGEN_TP_OK) {
        apigen_tp_close(c);
        return false;
    }
    *out = c;
    return true;
}

/* A server's connection over fd; its handshake runs on first use. Takes fd. */
static bool server_conn(int fd, const char *peer, apigen_conn **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!g_server_ctx) {
        close(fd);
        tp_err(err, errlen, "tls://: no server certificate set up");
        return false;
    }
    apigen_conn *c = tp_conn_new(&tp_tls_ops, fd, peer, err, errlen);
    if (!c)
        return false;
    if (!(c->priv = tls_new(g_server_ctx, fd, true, err, errlen))) {
        apigen_tp_close(c);
        return false;
    }
    *out = c;
    return true;
}

static bool tp_tls_accepted(int fd, const char *peer, apigen_conn **out, char *err, size_t errlen)
{
    return server_conn(fd, peer, out, err, errlen);
}

static bool tp_tls_adopt(int fd, const char *peer, apigen_conn **out, char *err, size_t errlen)
{
    return server_conn(fd, peer, out, err, errlen);
}

static bool tp_tls_listen(const apigen_url *u, const char *url, apigen_listener **out, char *err,
                   size_t errlen)
{
    if (!g_server_ctx) {
        tp_err(err, errlen, "cannot listen on %s: no server certificate and key were given", url);
        return false;
    }
    if (!tp_tcp_listen(u, url, out, err, errlen))
        return false;
    apigen_listener *l = *out;
    l->ops = &tp_tls_ops;
    memcpy(l->url, "tls", 3); /* "tcp://..." -> "tls://..." */
    return true;
}

/* The guest: the server handed the connection to another process (its
 * close_notify before any data): a new handshake on the same socket. */
static bool restart(apigen_conn *c, int64_t deadline, char *err, size_t errlen)
{
    struct tp_tls *t = c->priv;
    SSL_CTX *ctx = client_ctx(err, errlen);
    if (!ctx)
        return false;
    SSL *ssl = SSL_new(ctx);
    SSL_CTX_free(ctx);
    if (!ssl || !attach_fd(ssl, c->fd)) {
        SSL_free(ssl);
        tp_err(err, errlen, "cannot set up TLS (out of memory?)");
        return false;
    }
    pthread_mutex_lock(&t->mu);
    SSL_free(t->ssl); /* without close_notify: the stream goes on */
    t->ssl = ssl;
    t->done = false;
    t->restarted = true;
    pthread_mutex_unlock(&t->mu);
    return client_ssl_setup(t, err, errlen) &&
           handshake(c, handshake_deadline(deadline), err, errlen) == APIGEN_TP_OK;
}

/* What a failed SSL_read/SSL_write means, for people. */
static void io_error(apigen_conn *c, const char *what, int e, const char *why, char *err, size_t errlen)
{
    const char *hint = "";
    if (strstr(why, "certificate required"))
        hint = " (the server wants a client certificate: set APIGEN_TLS_CERT and APIGEN_TLS_KEY)";
    else if (strstr(why, "unknown ca") || strstr(why, "bad certificate") || strstr(why, "certificate unknown") ||
             strstr(why, "certificate expired"))
        hint = " (the server does not accept the client certificate APIGEN_TLS_CERT: it must come from "
               "the CA of the server's --tls-client-ca)";
    if (e == SSL_ERROR_SYSCALL && !*why)
        tp_err(err, errlen, "%s %s: %s", what, c->peer, errno ? strerror(errno) : "connection lost");
    else
        tp_err(err, errlen, "%s %s: TLS: %s%s", what, c->peer, *why ? why : "protocol error", hint);
}

static bool tp_tls_send(apigen_conn *c, const struct iovec *iov, int iovcnt, int timeout_ms, char *err,
                 size_t errlen)
{
    struct tp_tls *t = c->priv;
    int64_t deadline = tp_deadline(timeout_ms);
    apigen_tp_result h = ensure_handshake(c, deadline, err, errlen);
    if (h != APIGEN_TP_OK) {
        if (h == APIGEN_TP_TIMEOUT)
            tp_err(err, errlen, "send to %s timed out after %d ms (TLS handshake)", c->peer, timeout_ms);
        return false;
    }
    unsigned char stage[TLS_STAGE];
    size_t staged = 0;
    int i = 0;
    size_t off = 0; /* into iov[i] */
    for (;;) {
        /* the next piece: gathered small iovecs, or a large one in place */
        const unsigned char *p;
        size_t n;
        while (i < iovcnt && staged < sizeof stage && iov[i].iov_len - off < sizeof stage - staged) {
            memcpy(stage + staged, (const char *)iov[i].iov_base + off, iov[i].iov_len - off);
            staged += iov[i].iov_len - off;
            i++, off = 0;
        }
        if (staged) {
            p = stage, n = staged;
        } else if (i < iovcnt) {
            p = (const unsigned char *)iov[i].iov_base + off, n = iov[i].iov_len - off;
        } else {
            return true;
        }
        size_t sent = 0;
        while (sent < n) {
            char r[256];
            size_t k = 0;
            pthread_mutex_lock(&t->mu);
            ERR_clear_error();
            int ret = SSL_write_ex(t->ssl, p + sent, n - sent, &k);
            int e = ret == 1 ? SSL_ERROR_NONE : SSL_get_error(t->ssl, ret);
            const char *why = e == SSL_ERROR_NONE ? "" : ssl_reason(r, sizeof r);
            pthread_mutex_unlock(&t->mu);
            if (e == SSL_ERROR_NONE) {
                sent += k;
                continue;
            }
            if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
                apigen_tp_result w = wait_for(c, e, deadline, err, errlen);
                if (w == APIGEN_TP_OK)
                    continue;
                if (w == APIGEN_TP_TIMEOUT)
                    tp_err(err, errlen, "send to %s timed out after %d ms", c->peer, timeout_ms);
                return false;
            }
            if (!*why) {
                /* the server refused us after the handshake (TLS 1.3 checks a
                 * client certificate then) and closed: its alert says why */
                char tmp;
                size_t k2;
                pthread_mutex_lock(&t->mu);
                ERR_clear_error();
                if (SSL_read_ex(t->ssl, &tmp, 1, &k2) != 1)
                    why = ssl_reason(r, sizeof r);
                pthread_mutex_unlock(&t->mu);
                if (*why)
                    e = SSL_ERROR_SSL;
            }
            io_error(c, "send to", e, why, err, errlen);
            return false;
        }
        if (staged)
            staged = 0;
        else
            i++, off = 0;
    }
}

static apigen_tp_result tp_tls_recv(apigen_conn *c, void *buf, size_t n, int timeout_ms, char *err,
                             size_t errlen)
{
    struct tp_tls *t = c->priv;
    int64_t deadline = tp_deadline(timeout_ms);
    size_t got = 0;
    apigen_tp_result h = ensure_handshake(c, deadline, err, errlen);
    if (h == APIGEN_TP_TIMEOUT)
        tp_err(err, errlen, "no data from %s within %d ms", c->peer, timeout_ms);
    if (h != APIGEN_TP_OK)
        return h; /* EOF: a peer that connected and closed without a word */
    while (got < n) {
        char r[256];
        size_t k = 0;
        pthread_mutex_lock(&t->mu);
        ERR_clear_error();
        errno = 0;
        int ret = SSL_read_ex(t->ssl, (char *)buf + got, n - got, &k);
        int e = ret == 1 ? SSL_ERROR_NONE : SSL_get_error(t->ssl, ret);
        int saved_errno = errno;
        const char *why = e == SSL_ERROR_NONE ? "" : ssl_reason(r, sizeof r);
        pthread_mutex_unlock(&t->mu);
        if (e == SSL_ERROR_NONE) {
            got += k;
            t->got_data = true;
            continue;
        }
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
            apigen_tp_result w = wait_for(c, e, deadline, err, errlen);
            if (w == APIGEN_TP_TIMEOUT) {
                tp_err(err, errlen, "no data from %s within %d ms", c->peer, timeout_ms);
                return w;
            }
            if (w != APIGEN_TP_OK)
                return w;
            continue;
        }
        if (e == SSL_ERROR_ZERO_RETURN && !t->server && !t->got_data && !t->restarted && got == 0) {
            if (!restart(c, deadline, err, errlen))
                return APIGEN_TP_ERROR;
            continue;
        }
        bool closed = e == SSL_ERROR_ZERO_RETURN || (e == SSL_ERROR_SYSCALL && !*why && saved_errno == 0) ||
                      strstr(why, "unexpected eof") != NULL;
        if (closed && got == 0) {
            tp_err(err, errlen, "%s closed the connection", c->peer);
            return APIGEN_TP_EOF;
        }
        if (closed) {
            tp_err(err, errlen, "%s closed the connection in the middle of a message (%zu of %zu bytes)",
                   c->peer, got, n);
            return APIGEN_TP_ERROR;
        }
        errno = saved_errno;
        io_error(c, "recv from", e, why, err, errlen);
        return APIGEN_TP_ERROR;
    }
    return APIGEN_TP_OK;
}

static void tp_tls_hand_over(apigen_conn *c)
{
    struct tp_tls *t = c->priv;
    pthread_mutex_lock(&t->mu);
    if (t->done) {
        ERR_clear_error();
        (void)SSL_shutdown(t->ssl); /* close_notify: the peer starts over with the new holder */
        ERR_clear_error();
    }
    pthread_mutex_unlock(&t->mu);
}

static void tp_tls_close(apigen_conn *c)
{
    struct tp_tls *t = c->priv;
    if (!t)
        return;
    SSL_free(t->ssl); /* no close_notify: a forked guest's copy must say nothing */
    pthread_mutex_destroy(&t->mu);
    free(t);
    c->priv = NULL;
}

static bool tls_accept(apigen_listener *l, apigen_conn **out, char *err, size_t errlen)
{
    char peer[sizeof((apigen_conn *)0)->peer];
    int fd = tp_sock_accept(l, peer, sizeof peer, err, errlen); /* "tls://host:port" */
    if (fd < 0)
        return false;
    tp_tcp_nodelay(fd);
    return tp_tls_accepted(fd, peer, out, err, errlen);
}

/* A session process's side of a passed connection: a new handshake (the
 * parent's TLS ended with close_notify, tp_tls_hand_over). */
static bool tls_adopt(const int *fds, int nfds, const char *peer, apigen_conn **out, char *err,
                      size_t errlen)
{
    if (nfds != 1) {
        for (int i = 0; i < nfds; i++)
            close(fds[i]);
        tp_err(err, errlen, "%s: a tls connection is one socket, not %d descriptors", peer, nfds);
        return false;
    }
    return tp_tls_adopt(fds[0], peer, out, err, errlen);
}

const tp_ops tp_tls_ops = {
    .scheme = "tls",
    .form = TP_URL_HOSTPORT,
    .example = "tls://host:port",
    .connect = tp_tls_connect,
    .listen = tp_tls_listen,
    .accept = tls_accept,
    .adopt = tls_adopt,
    .send = tp_tls_send,
    .recv = tp_tls_recv,
    .shutdown = tp_sock_shutdown,
    .close = tp_tls_close,
    .handoff_fds = tp_sock_handoff_fds,
    .release = tp_tls_hand_over,
};
