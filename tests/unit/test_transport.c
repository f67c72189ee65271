/* Transports over loopback: unix, tcp (v4, v6 when available) and shm; a peer
 * that dies in the middle of a transfer never leaves the other side hanging.
 * `unit_transport tls CERTS_SCRIPT` runs the same over tls:// (exit 77
 * without TLS or the openssl command).
 * `unit_transport ucx` runs the same over ucx:// (with UCX_TLS as set: CTest
 * runs it with tcp and with shared memory); exit 77 when UCX cannot start here.
 * UCX does not survive fork, so its peers are this program exec'ed again. */
#define _GNU_SOURCE
#include "transport.h"
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char err[512];

/* How long a connect, or data that must come, may take: generous, for a
 * loaded 2-core CI machine under sanitizers (a real hang still fails, within
 * CTest's timeout). Waits that are meant to time out stay short. */
#define WAIT_MS 30000

struct conn_arg { const char *url; apigen_conn *c; char err[256]; atomic_bool done; };

static void *connect_main(void *arg)
{
    struct conn_arg *a = arg;
    if (!apigen_tp_connect(a->url, WAIT_MS, &a->c, a->err, sizeof a->err))
        a->c = NULL;
    atomic_store(&a->done, true);
    return NULL;
}

/* accepts, letting the server side's transport progress (as its reader
 * would) until the client's connect returned */
static void accept_for(apigen_listener *l, struct conn_arg *a, pthread_t t, apigen_conn **s)
{
    *s = NULL;
    bool accepted = apigen_tp_accept(l, s, err, sizeof err);
    CHECK(accepted);
    if (!accepted)
        fprintf(stderr, "accept: %s\n", err);
    char b;
    while (*s && !atomic_load(&a->done))
        CHECK(apigen_tp_recv(*s, &b, 1, 5, err, sizeof err) == APIGEN_TP_TIMEOUT);
    pthread_join(t, NULL);
}

/* connect in a thread: a ucx:// connect returns once the server accepted */
static void pair(const char *url, apigen_listener **l, apigen_conn **c, apigen_conn **s)
{
    *l = NULL;
    *c = *s = NULL;
    CHECK(apigen_tp_listen(url, l, err, sizeof err));
    if (!*l) {
        fprintf(stderr, "listen %s: %s\n", url, err);
        return;
    }
    struct conn_arg a = {apigen_tp_listener_url(*l), NULL, "", false};
    pthread_t t;
    pthread_create(&t, NULL, connect_main, &a);
    accept_for(*l, &a, t, s);
    *c = a.c;
    CHECK(*c != NULL);
    if (!*c)
        fprintf(stderr, "connect %s: %s\n", url, a.err);
}

struct big { apigen_conn *c; uint8_t *buf; size_t n; bool ok; };

static void *send_big(void *arg)
{
    struct big *b = arg;
    struct iovec v[3] = {{b->buf, 1}, {b->buf + 1, b->n / 2}, {b->buf + 1 + b->n / 2, b->n - 1 - b->n / 2}};
    char e[256];
    b->ok = apigen_tp_send(b->c, v, 3, -1, e, sizeof e);
    return NULL;
}

/* ---- a stream of frames of mixed sizes ------------------------------------ */
/* Frames as the runtime sends them: a 32-byte head whose bytes 24..27 give
 * the body's length, then the body; sizes from 0 to 5000 bytes, every 97th
 * 300 KiB-1.2 MiB (more than an shm record holds), sent as one to three
 * iovecs. The reader takes them with apigen_tp_recv_head (a body buffer
 * that is sometimes too small) or plain reads in odd pieces: every byte
 * must come through, in order, over many laps of an shm ring. */
#define STREAM_FRAMES 6000
#define STREAM_HEAD 32

static uint32_t stream_len(uint32_t i)
{
    uint32_t x = i * 2654435761u;
    if (i % 97 == 96)
        return 300000 + x % 900000;
    return (x >> 7) % 5001;
}

static uint8_t stream_byte(uint32_t frame, uint32_t off)
{
    return (uint8_t)(frame * 131 + off * 7 + (off >> 8));
}

struct stream { apigen_conn *c; bool ok; };

static void *stream_send(void *arg)
{
    struct stream *st = arg;
    uint8_t *buf = malloc(STREAM_HEAD + 1300000);
    char e[256];
    st->ok = buf != NULL;
    for (uint32_t i = 0; i < STREAM_FRAMES && st->ok; i++) {
        uint32_t len = stream_len(i);
        memset(buf, 0, STREAM_HEAD);
        memcpy(buf, &i, 4);
        for (int b = 0; b < 4; b++)
            buf[24 + b] = (uint8_t)(len >> (8 * b));
        for (uint32_t k = 0; k < len; k++)
            buf[STREAM_HEAD + k] = stream_byte(i, k);
        size_t total = STREAM_HEAD + len, cut1 = i % 3 == 0 ? 0 : 5 + i % 40, cut2 = total / 2;
        if (cut1 > cut2)
            cut1 = cut2;
        struct iovec v[3] = {{buf, cut1}, {buf + cut1, cut2 - cut1}, {buf + cut2, total - cut2}};
        st->ok = apigen_tp_send(st->c, v, 3, WAIT_MS, e, sizeof e);
    }
    free(buf);
    return NULL;
}

static void stream_of_frames(apigen_conn *c, apigen_conn *s, const char *url)
{
    struct stream st = {c, false};
    pthread_t t;
    pthread_create(&t, NULL, stream_send, &st);
    uint8_t head[STREAM_HEAD], *body = malloc(1300000);
    uint32_t bad = 0, i;
    uint64_t bytes = 0;
    for (i = 0; i < STREAM_FRAMES && body; i++) {
        size_t got = 0, cap = i % 5 == 0 ? 64 : 1300000; /* too small now and then */
        if (i % 2 == 0) {
            if (apigen_tp_recv_head(s, head, STREAM_HEAD, 24, body, cap, &got, WAIT_MS, err, sizeof err) !=
                APIGEN_TP_OK)
                break;
        } else if (apigen_tp_recv(s, head, STREAM_HEAD, WAIT_MS, err, sizeof err) != APIGEN_TP_OK) {
            break;
        }
        uint32_t seq, len = (uint32_t)head[24] | (uint32_t)head[25] << 8 | (uint32_t)head[26] << 16 |
                            (uint32_t)head[27] << 24;
        memcpy(&seq, head, 4);
        if (seq != i || len != stream_len(i) || (got && got != len)) {
            bad++;
            break;
        }
        while (got < len) { /* the rest in odd pieces */
            size_t k = len - got < 7777 ? len - got : 7777;
            if (apigen_tp_recv(s, body + got, k, WAIT_MS, err, sizeof err) != APIGEN_TP_OK)
                break;
            got += k;
        }
        if (got != len)
            break;
        for (uint32_t k = 0; k < len && !bad; k++)
            bad += body[k] != stream_byte(i, k);
        if (bad)
            break;
        bytes += STREAM_HEAD + len;
    }
    pthread_join(t, NULL);
    CHECK(st.ok);
    CHECK(i == STREAM_FRAMES && !bad);
    if (i != STREAM_FRAMES || bad)
        fprintf(stderr, "%s: stream of frames broke at frame %u (bad %u): %s\n", url, i, bad, err);
    else
        fprintf(stderr, "%s: %u frames, %llu bytes came through intact\n", url, i, (unsigned long long)bytes);
    free(body);
}

static void *close_main(void *arg)
{
    apigen_tp_close(arg);
    return NULL;
}

static void exercise(const char *url)
{
    apigen_listener *l;
    apigen_conn *c, *s;
    pair(url, &l, &c, &s);
    if (!c || !s) {
        apigen_tp_close(c);
        apigen_tp_close(s);
        apigen_tp_listener_close(l);
        return;
    }
    fprintf(stderr, "%s: listening on %s, peer %s\n", url, apigen_tp_listener_url(l),
            apigen_tp_peer(s));
    /* both ends wait as callers do: past the spin they yield (APIGEN_YIELD_US;
     * unit.transport.yield makes it 10 s, so every wait below, timeouts,
     * closes and shutdowns included, ends inside the yield) */
    apigen_tp_set_reply_waits(c);
    apigen_tp_set_reply_waits(s);

    /* iovec send, partial reads */
    struct iovec v[3] = {{(void *)"hel", 3}, {(void *)"", 0}, {(void *)"lo world", 8}};
    CHECK(apigen_tp_send(c, v, 3, WAIT_MS, err, sizeof err));
    char buf[16] = {0};
    CHECK(apigen_tp_recv(s, buf, 1, WAIT_MS, err, sizeof err) == APIGEN_TP_OK && buf[0] == 'h');
    CHECK(apigen_tp_recv(s, buf + 1, 10, -1, err, sizeof err) == APIGEN_TP_OK);
    CHECK_STR(buf, "hello world");

    /* the other direction */
    CHECK(apigen_tp_send_buf(s, "pong", 4, -1, err, sizeof err));
    CHECK(apigen_tp_recv(c, buf, 4, WAIT_MS, err, sizeof err) == APIGEN_TP_OK && memcmp(buf, "pong", 4) == 0);

    /* a send bigger than the socket buffers, read in odd-sized pieces */
    struct big b = {c, malloc(8u << 20), 8u << 20, false};
    for (size_t i = 0; i < b.n; i++)
        b.buf[i] = (uint8_t)(i * 31 + 7);
    pthread_t t;
    pthread_create(&t, NULL, send_big, &b);
    uint8_t *in = malloc(b.n);
    size_t got = 0;
    bool ok = true;
    while (got < b.n && ok) {
        size_t k = b.n - got < 100003 ? b.n - got : 100003;
        ok = apigen_tp_recv(s, in + got, k, WAIT_MS, err, sizeof err) == APIGEN_TP_OK;
        got += k;
    }
    pthread_join(t, NULL);
    CHECK(ok && b.ok);
    CHECK(memcmp(in, b.buf, b.n) == 0);
    free(in);
    free(b.buf);

    stream_of_frames(c, s, url);

    /* nothing arrives -> timeout, connection still usable */
    CHECK(apigen_tp_recv(s, buf, 1, 20, err, sizeof err) == APIGEN_TP_TIMEOUT);
    CHECK_CONTAINS(err, "within 20 ms");

    /* peer closes mid-message -> error; cleanly -> EOF (closed in a thread:
     * a ucx:// close flushes, which needs the reader to progress) */
    CHECK(apigen_tp_send_buf(c, "abc", 3, -1, err, sizeof err));
    pthread_create(&t, NULL, close_main, c);
    CHECK(apigen_tp_recv(s, buf, 8, WAIT_MS, err, sizeof err) == APIGEN_TP_ERROR);
    CHECK_CONTAINS(err, "in the middle of a message (3 of 8 bytes)");
    CHECK(apigen_tp_recv(s, buf, 8, -1, err, sizeof err) == APIGEN_TP_EOF);
    CHECK_CONTAINS(err, "closed the connection");
    pthread_join(t, NULL);

    /* sending to a closed peer fails (and does not raise SIGPIPE) */
    bool sent = true;
    for (int i = 0; i < 100 && sent; i++)
        sent = apigen_tp_send_buf(s, buf, 8, WAIT_MS, err, sizeof err);
    CHECK(!sent);

    /* shutdown wakes a blocked reader */
    apigen_conn *c2, *s2;
    struct conn_arg a2 = {apigen_tp_listener_url(l), NULL, "", false};
    pthread_t t2;
    pthread_create(&t2, NULL, connect_main, &a2);
    accept_for(l, &a2, t2, &s2);
    c2 = a2.c;
    CHECK(s2 != NULL);
    if (!s2) { /* accept failed (said above): nothing to shut down (c is closed) */
        apigen_tp_close(c2);
        apigen_tp_close(s);
        apigen_tp_listener_close(l);
        return;
    }
    apigen_tp_shutdown(s2);
    CHECK(apigen_tp_recv(s2, buf, 1, -1, err, sizeof err) == APIGEN_TP_EOF);
    apigen_tp_close(s2);
    apigen_tp_close(c2);

    apigen_tp_close(s);
    apigen_tp_listener_close(l);
}

static void test_urls(void)
{
    apigen_url u;
    CHECK(apigen_url_parse("unix:///tmp/x.sock", &u, err, sizeof err) && !strcmp(u.scheme, "unix"));
    CHECK_STR(u.path, "/tmp/x.sock");
    CHECK(apigen_url_parse("tcp://localhost:8080", &u, err, sizeof err) && !strcmp(u.scheme, "tcp"));
    CHECK_STR(u.host, "localhost");
    CHECK_STR(u.port, "8080");
    CHECK(apigen_url_parse("tcp://[::1]:0", &u, err, sizeof err));
    CHECK_STR(u.host, "::1");
    CHECK_STR(u.port, "0");
    struct { const char *url, *err; } bad[] = {
        {"", "empty transport URL"},
        {"udp://x:1", "unknown transport"},
        {"unix://relative.sock", "must be absolute"},
        {"tcp://host", "missing port"},
        {"tcp://host:", "bad port"},
        {"tcp://host:99999", "port out of range"},
        {"tcp://host:12a", "bad port"},
        {"tcp://::1:5", "need brackets"},
        {"tcp://[::1]5", "expected tcp://[address]:port"},
        {"tcp://:80", "bad host"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        CHECK(!apigen_url_parse(bad[i].url, &u, err, sizeof err));
        CHECK_CONTAINS(err, bad[i].err);
    }
    CHECK(apigen_url_parse("shm://apigen-x_1.2", &u, err, sizeof err) && !strcmp(u.scheme, "shm"));
    CHECK_STR(u.path, "apigen-x_1.2");
    const char *bad_shm[] = {"shm://", "shm://a/b", "shm://a b",
                             "shm://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"};
    for (size_t i = 0; i < sizeof bad_shm / sizeof bad_shm[0]; i++) {
        CHECK(!apigen_url_parse(bad_shm[i], &u, err, sizeof err));
        CHECK_CONTAINS(err, "shm name must be");
    }
    char longp[200] = "unix:///";
    memset(longp + 8, 'a', 150);
    CHECK(!apigen_url_parse(longp, &u, err, sizeof err));
    CHECK_CONTAINS(err, "longer than");
    /* APIGEN_SERVER with several servers: comma-separated, in order */
    char item[64];
    const char *list = "unix:///a.sock,tcp://h:1,,shm://s";
    CHECK(apigen_url_list_count(list) == 4 && apigen_url_list_count("tcp://h:1") == 1);
    CHECK(apigen_url_list_item(list, 0, item, sizeof item));
    CHECK_STR(item, "unix:///a.sock");
    CHECK(apigen_url_list_item(list, 1, item, sizeof item));
    CHECK_STR(item, "tcp://h:1");
    CHECK(apigen_url_list_item(list, 2, item, sizeof item) && item[0] == 0);
    CHECK(apigen_url_list_item(list, 3, item, sizeof item));
    CHECK_STR(item, "shm://s");
    CHECK(!apigen_url_list_item(list, 4, item, sizeof item));
    CHECK(!apigen_url_list_item(list, 0, item, 8)); /* longer than the room */
}

static void test_connect_nothing(void)
{
    char url[128];
    apigen_conn *c = (apigen_conn *)1;
    snprintf(url, sizeof url, "unix:///tmp/apigen-unit-none-%d.sock", (int)getpid());
    CHECK(!apigen_tp_connect(url, 500, &c, err, sizeof err) && c == NULL);
    CHECK_CONTAINS(err, "cannot connect to unix:///tmp/apigen-unit-none-");
    CHECK_CONTAINS(err, "No such file or directory");

    /* a tcp port nobody listens on: take one, then close it */
    apigen_listener *l;
    CHECK(apigen_tp_listen("tcp://127.0.0.1:0", &l, err, sizeof err));
    snprintf(url, sizeof url, "%s", apigen_tp_listener_url(l));
    apigen_tp_listener_close(l);
    CHECK(!apigen_tp_connect(url, 500, &c, err, sizeof err));
    CHECK_CONTAINS(err, "Connection refused");
    CHECK(!apigen_tp_connect("tcp://no-such-host.invalid:1", 500, &c, err, sizeof err));
    CHECK_CONTAINS(err, "cannot connect to tcp://no-such-host.invalid:1");
}

static void test_unix_stale(void)
{
    char path[108], url[128];
    snprintf(path, sizeof path, "/tmp/apigen-unit-stale-%d.sock", (int)getpid());
    snprintf(url, sizeof url, "unix://%s", path);
    unlink(path);
    /* a socket file left behind by a dead server */
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    strcpy(sa.sun_path, path);
    CHECK(bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0);
    close(fd);
    struct stat st;
    CHECK(stat(path, &st) == 0);
    apigen_listener *l, *l2;
    CHECK(apigen_tp_listen(url, &l, err, sizeof err));
    /* the file shows only once the socket listens, owner only, and the
     * name it was bound under first is gone */
    CHECK(stat(path, &st) == 0 && S_ISSOCK(st.st_mode) && (st.st_mode & 0777) == 0600);
    char side[108];
    snprintf(side, sizeof side, "/tmp/.apigen-%ld.sock", (long)getpid());
    CHECK(stat(side, &st) < 0 && errno == ENOENT);
    /* a live one is not taken over */
    CHECK(!apigen_tp_listen(url, &l2, err, sizeof err));
    CHECK_CONTAINS(err, "another server is listening there");
    apigen_tp_listener_close(l);
    CHECK(stat(path, &st) < 0 && errno == ENOENT);
    /* a regular file is never removed */
    fd = open(path, O_CREAT | O_WRONLY, 0600);
    close(fd);
    CHECK(!apigen_tp_listen(url, &l2, err, sizeof err));
    CHECK_CONTAINS(err, "exists and is not a socket");
    CHECK(stat(path, &st) == 0);
    unlink(path);
}

static double secs_since(struct timespec t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
}

/* A peer process killed in the middle of a transfer: the reader gets an
 * error (not a hang, not a crash) within seconds; and a writer blocked on a
 * full pipe whose reader dies fails too. */
static const char *g_self; /* argv[0]: ucx peers are exec'ed, not forked */

static pid_t spawn_peer(const char *what, const char *url)
{
    pid_t pid = fork();
    if (pid == 0) {
        execl(g_self, g_self, what, url, (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* The peers of test_peer_dies: "peer-send URL" streams until killed;
 * "peer-quit URL" sends a byte, waits for the reader's answer (so the byte
 * surely left) and exits without reading more or closing. */
static int run_peer(const char *what, const char *lurl)
{
    size_t chunk = 1u << 20;
    uint8_t *buf = calloc(1, chunk);
    apigen_conn *c;
    char e[256];
    if (!apigen_tp_connect(lurl, WAIT_MS, &c, e, sizeof e))
        _exit(1);
    if (strcmp(what, "peer-send") == 0)
        for (;;)
            if (!apigen_tp_send_buf(c, buf, chunk, -1, e, sizeof e))
                _exit(2);
    if (!apigen_tp_send_buf(c, "x", 1, WAIT_MS, e, sizeof e))
        _exit(1);
    /* ucx: the byte leaves while the worker progresses; wait as a reader would */
    if (apigen_tp_recv(c, buf, 1, WAIT_MS, e, sizeof e) != APIGEN_TP_OK)
        _exit(3);
    struct timespec ts = {0, 300000000}; /* the writer is likely blocked by then */
    nanosleep(&ts, NULL);
    _exit(0); /* without reading or closing: as if it crashed */
}

static void test_peer_dies(const char *url)
{
    bool exec_peers = strncmp(url, "ucx://", 6) == 0;
    apigen_listener *l;
    CHECK(apigen_tp_listen(url, &l, err, sizeof err));
    if (!l)
        return;
    const char *lurl = apigen_tp_listener_url(l);
    size_t chunk = 1u << 20;
    uint8_t *buf = calloc(1, chunk);

    /* 1: the sender is killed while it streams */
    pid_t pid = exec_peers ? spawn_peer("peer-send", lurl) : fork();
    if (pid == 0) {
        apigen_conn *c;
        char e[256];
        if (!apigen_tp_connect(lurl, WAIT_MS, &c, e, sizeof e))
            _exit(1);
        for (;;)
            if (!apigen_tp_send_buf(c, buf, chunk, -1, e, sizeof e))
                _exit(2);
    }
    apigen_conn *s = NULL;
    CHECK(apigen_tp_accept(l, &s, err, sizeof err));
    apigen_tp_set_reply_waits(s); /* the death must end a yielding wait too */
    size_t got = 0;
    while (s && got < (4u << 20) && apigen_tp_recv(s, buf, 4096, WAIT_MS, err, sizeof err) == APIGEN_TP_OK)
        got += 4096;
    CHECK(got == (4u << 20));
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    apigen_tp_result r = APIGEN_TP_OK;
    for (int i = 0; s && i < 100000 && r == APIGEN_TP_OK; i++) /* drains what was sent, then fails */
        r = apigen_tp_recv(s, buf, chunk, -1, err, sizeof err);
    /* the property is that it fails instead of hanging (a hang fails the
     * test at CTest's timeout); the time is printed, never asserted */
    CHECK(r == APIGEN_TP_ERROR || r == APIGEN_TP_EOF);
    fprintf(stderr, "%s: sender killed mid-transfer -> %s after %.3f s\n", url, err, secs_since(t0));
    apigen_tp_close(s);

    /* 2: the reader dies while the writer is blocked on a full ring/socket */
    pid = exec_peers ? spawn_peer("peer-quit", lurl) : fork();
    if (pid == 0) {
        apigen_conn *c;
        char e[256];
        if (!apigen_tp_connect(lurl, WAIT_MS, &c, e, sizeof e) || !apigen_tp_send_buf(c, "x", 1, WAIT_MS, e, sizeof e))
            _exit(1);
        struct timespec ts = {0, 300000000};
        nanosleep(&ts, NULL);
        _exit(0); /* without reading or closing: as if it crashed */
    }
    s = NULL;
    CHECK(apigen_tp_accept(l, &s, err, sizeof err));
    apigen_tp_set_reply_waits(s);
    CHECK(s && apigen_tp_recv(s, buf, 1, WAIT_MS, err, sizeof err) == APIGEN_TP_OK);
    CHECK(s && apigen_tp_send_buf(s, "k", 1, WAIT_MS, err, sizeof err)); /* peer-quit waits for it */
    clock_gettime(CLOCK_MONOTONIC, &t0);
    bool sent = true;
    for (int i = 0; s && i < 4096 && sent; i++)
        sent = apigen_tp_send_buf(s, buf, chunk, -1, err, sizeof err);
    CHECK(!sent); /* not a hang: no clock involved (the time below is information) */
    fprintf(stderr, "%s: reader died while the writer waited -> %s after %.3f s\n", url, err, secs_since(t0));
    waitpid(pid, NULL, 0);
    apigen_tp_close(s);
    free(buf);
    apigen_tp_listener_close(l);
}

/* The segment of the only shm connection this process holds (both of its
 * ends map it): found in /proc/self/maps, as a hostile client would have
 * it mapped. */
static uint8_t *shm_segment(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    uint8_t *seg = NULL;
    int n = 0;
    while (f && fgets(line, sizeof line, f))
        if (strstr(line, "apigen-shm")) {
            unsigned long lo;
            if (sscanf(line, "%lx-", &lo) == 1 && !seg)
                seg = (uint8_t *)lo;
            n++;
        }
    if (f)
        fclose(f);
    CHECK(n == 2); /* the client's and the server's mapping of one segment */
    return n == 2 ? seg : NULL;
}

/* A client that scribbles on the shared segment instead of sending: the
 * server's reads and writes fail with "corrupted" (no crash, no hang, no
 * access outside the segment). Offsets: the layout in transports/shm.c
 * (data of the client-to-server ring at 4096, a record's header word
 * stamped 0x80000000 | position / 64, the server-to-client ring's tail at
 * 320). */
static void test_shm_hostile(void)
{
    char url[128];
    snprintf(url, sizeof url, "shm://apigen-unit-hostile-%d", (int)getpid());
    for (int round = 0; round < 3; round++) {
        apigen_listener *l;
        apigen_conn *c, *s;
        pair(url, &l, &c, &s);
        uint8_t b[64];
        /* one byte first: the client maps the segment on its first send; the
         * next record goes to position 64 */
        bool one = c && s && apigen_tp_send_buf(c, "x", 1, WAIT_MS, err, sizeof err) &&
                   apigen_tp_recv(s, b, 1, WAIT_MS, err, sizeof err) == APIGEN_TP_OK;
        CHECK(one);
        uint8_t *seg = one ? shm_segment() : NULL;
        if (seg) {
            uint64_t w;
            if (round == 0) { /* a header whose stamp is not its position's */
                w = (uint64_t)0x80000007u << 32 | 16;
                memcpy(seg + 4096 + 64, &w, 8);
                CHECK(apigen_tp_recv(s, b, 16, WAIT_MS, err, sizeof err) == APIGEN_TP_ERROR);
            } else if (round == 1) { /* a record longer than a record may be */
                w = (uint64_t)0x80000001u << 32 | 0xfffffff0u;
                memcpy(seg + 4096 + 64, &w, 8);
                CHECK(apigen_tp_recv(s, b, 16, WAIT_MS, err, sizeof err) == APIGEN_TP_ERROR);
            } else { /* the server's ring read further than it was written */
                w = (uint64_t)1 << 40;
                memcpy(seg + 320, &w, 8);
                bool sent = true;
                for (int i = 0; i < 100000 && sent; i++) /* until the cached tail runs out */
                    sent = apigen_tp_send_buf(s, b, sizeof b, WAIT_MS, err, sizeof err);
                CHECK(!sent);
            }
            CHECK_CONTAINS(err, "shared ring corrupted by the peer");
        }
        apigen_tp_close(c);
        apigen_tp_close(s);
        apigen_tp_listener_close(l);
    }
}

static void test_shm_specific(void)
{
    char url[128];
    apigen_conn *c = (apigen_conn *)1;
    snprintf(url, sizeof url, "shm://apigen-unit-none-%d", (int)getpid());
    CHECK(!apigen_tp_connect(url, 500, &c, err, sizeof err) && c == NULL);
    CHECK_CONTAINS(err, "no server listens there");
    /* two listeners on one name: the second is refused */
    apigen_listener *l, *l2;
    snprintf(url, sizeof url, "shm://apigen-unit-twice-%d", (int)getpid());
    CHECK(apigen_tp_listen(url, &l, err, sizeof err));
    CHECK(!apigen_tp_listen(url, &l2, err, sizeof err));
    CHECK_CONTAINS(err, "another server is listening there");
    /* a client whose server never accepts: its first send times out */
    CHECK(apigen_tp_connect(url, 200, &c, err, sizeof err));
    CHECK(!apigen_tp_send_buf(c, "x", 1, 200, err, sizeof err));
    CHECK_CONTAINS(err, "did not set up shared memory in time");
    apigen_tp_close(c);
    apigen_tp_listener_close(l);
}

/* ucx://: as the others; exit 77 when UCX cannot listen here (a sandbox
 * without the interfaces it wants). */
static int test_ucx(void)
{
    apigen_url u;
    CHECK(apigen_url_parse("ucx://10.0.0.1:13337", &u, err, sizeof err) && !strcmp(u.scheme, "ucx"));
    CHECK_STR(u.host, "10.0.0.1");
    CHECK_STR(u.port, "13337");
    CHECK(apigen_url_parse("ucx://[::1]:0", &u, err, sizeof err) && !strcmp(u.scheme, "ucx"));
    CHECK(!apigen_url_parse("ucx://host", &u, err, sizeof err));
    CHECK_CONTAINS(err, "missing port (expected ucx://host:port)");
    apigen_listener *l;
    if (!apigen_tp_listen("ucx://127.0.0.1:0", &l, err, sizeof err)) {
        fprintf(stderr, "SKIP: ucx:// cannot listen here (UCX_TLS=%s): %s\n",
                getenv("UCX_TLS") ? getenv("UCX_TLS") : "(unset)", err);
        return 77;
    }
    /* and a connection can be set up (UCX may find no usable transport) */
    struct conn_arg a = {apigen_tp_listener_url(l), NULL, "", false};
    pthread_t t;
    pthread_create(&t, NULL, connect_main, &a);
    struct pollfd pf = {apigen_tp_listener_fd(l), POLLIN, 0};
    apigen_conn *s = NULL;
    int ready = 0;
    while (!atomic_load(&a.done) && (ready = poll(&pf, 1, 10)) == 0)
        ;
    if (ready != 1) /* the connect returned: did its request arrive? */
        ready = poll(&pf, 1, 0);
    if (ready == 1)
        accept_for(l, &a, t, &s);
    else
        pthread_join(t, NULL);
    bool up = s && a.c;
    /* both ends at once: a ucx:// close flushes, which needs the peer to progress */
    pthread_create(&t, NULL, close_main, a.c);
    apigen_tp_close(s);
    pthread_join(t, NULL);
    apigen_tp_listener_close(l);
    /* skipped only when UCX itself refuses (no request reached the
     * listener); an accept that fails or a connect that times out fail */
    if (!up && ready != 1 && !strstr(a.err, "timed out")) {
        fprintf(stderr, "SKIP: ucx:// cannot connect here (UCX_TLS=%s): %s\n",
                getenv("UCX_TLS") ? getenv("UCX_TLS") : "(unset)", a.err);
        return 77;
    }
    CHECK(up);
    if (!up) {
        fprintf(stderr, "ucx:// probe connection failed: %s\n", a.err);
        CHECK_DONE();
    }
    exercise("ucx://127.0.0.1:0");
    test_peer_dies("ucx://127.0.0.1:0");
    /* nobody listens: the first receive reports it instead of waiting */
    CHECK(apigen_tp_listen("ucx://127.0.0.1:0", &l, err, sizeof err));
    char url[128];
    snprintf(url, sizeof url, "%s", apigen_tp_listener_url(l));
    apigen_tp_listener_close(l);
    apigen_conn *c = NULL;
    char b;
    if (apigen_tp_connect(url, 500, &c, err, sizeof err)) {
        CHECK(!apigen_tp_send_buf(c, "x", 1, 2000, err, sizeof err) ||
              apigen_tp_recv(c, &b, 1, 2000, err, sizeof err) != APIGEN_TP_OK);
        CHECK(!strstr(err, "within 2000 ms"));
        fprintf(stderr, "ucx: connect to a closed port -> %s\n", err);
        apigen_tp_close(c);
    }
    CHECK_DONE();
}

/* tls://: the same over TLS with throwaway certificates (tls_certs.sh, the
 * script's path is argv[2]); 77 when this build or machine has no TLS. */
static int test_tls(const char *certs_script)
{
    if (!apigen_tp_tls_available()) {
        fprintf(stderr, "SKIP: this build has no TLS\n");
        return 77;
    }
    char dir[] = "/tmp/apigen-unit-tls-XXXXXX", cmd[512], a[300], b[300], ca[300];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(cmd, sizeof cmd, "'%s' '%s' >&2", certs_script, dir);
    int rc = system(cmd);
    if (WIFEXITED(rc) && WEXITSTATUS(rc) == 77)
        return 77;
    CHECK(rc == 0);
    apigen_url u;
    CHECK(apigen_url_parse("tls://example.org:443", &u, err, sizeof err) && !strcmp(u.scheme, "tls"));
    CHECK_STR(u.host, "example.org");
    CHECK(!apigen_url_parse("tls://host", &u, err, sizeof err));
    CHECK_CONTAINS(err, "missing port (expected tls://host:port)");
    /* no certificate yet: a listener refuses to start */
    apigen_listener *l;
    CHECK(!apigen_tp_listen("tls://127.0.0.1:0", &l, err, sizeof err));
    CHECK_CONTAINS(err, "no server certificate");
    /* files that are missing or do not belong together */
    snprintf(a, sizeof a, "%s/server.pem", dir);
    snprintf(b, sizeof b, "%s/nope.key", dir);
    CHECK(!apigen_tp_tls_server_setup(a, b, NULL, err, sizeof err));
    CHECK_CONTAINS(err, "nope.key: No such file or directory");
    snprintf(b, sizeof b, "%s/client.key", dir);
    CHECK(!apigen_tp_tls_server_setup(a, b, NULL, err, sizeof err));
    CHECK_CONTAINS(err, "does not belong to certificate");
    snprintf(b, sizeof b, "%s/server.key", dir);
    CHECK(apigen_tp_tls_server_setup(a, b, NULL, err, sizeof err));
    snprintf(ca, sizeof ca, "%s/ca.pem", dir);
    setenv("APIGEN_TLS_CA", ca, 1);
    exercise("tls://127.0.0.1:0");
    if (apigen_tp_listen("tcp://[::1]:0", &l, err, sizeof err)) {
        apigen_tp_listener_close(l);
        exercise("tls://[::1]:0");
    }
    test_peer_dies("tls://127.0.0.1:0");
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    (void)!system(cmd);
    CHECK_DONE();
}

int main(int argc, char **argv)
{
    char url[128];
    g_self = argv[0];
    if (argc == 3 && strncmp(argv[1], "peer-", 5) == 0)
        return run_peer(argv[1], argv[2]);
    if (argc == 2 && strcmp(argv[1], "ucx") == 0)
        return test_ucx();
    if (argc == 3 && strcmp(argv[1], "tls") == 0)
        return test_tls(argv[2]);
    snprintf(url, sizeof url, "unix:///tmp/apigen-unit-tp-%d.sock", (int)getpid());
    test_urls();
    exercise(url);
    exercise("tcp://127.0.0.1:0");
    apigen_listener *l6;
    if (apigen_tp_listen("tcp://[::1]:0", &l6, err, sizeof err)) {
        apigen_tp_listener_close(l6);
        exercise("tcp://[::1]:0");
    } else {
        fprintf(stderr, "no IPv6 loopback here (%s): skipping tcp://[::1]\n", err);
    }
    snprintf(url, sizeof url, "shm://apigen-unit-tp-%d", (int)getpid());
    exercise(url);
    test_shm_specific();
    test_shm_hostile();
    test_connect_nothing();
    test_unix_stale();
    snprintf(url, sizeof url, "unix:///tmp/apigen-unit-die-%d.sock", (int)getpid());
    test_peer_dies(url);
    test_peer_dies("tcp://127.0.0.1:0");
    snprintf(url, sizeof url, "shm://apigen-unit-die-%d", (int)getpid());
    test_peer_dies(url);
    CHECK_DONE();
}
