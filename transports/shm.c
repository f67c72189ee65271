/* shm://name: same-machine transport over shared memory.
 *
 * Setup: the listener is an abstract unix socket "@apigen-shm:NAME" (no file
 * to clean up; peers must run as the server's uid or root, checked with
 * SO_PEERCRED, as a mode-0600 socket file would). For each accepted
 * connection the server creates a sealed memfd (it cannot shrink, so the
 * peer cannot make the server fault), lays out two byte rings in it and
 * passes it over the socket with SCM_RIGHTS. The client maps it on its first
 * send or recv (so connect never waits for accept). After that the socket
 * carries no bytes: it only tells each side that the other is gone (EOF /
 * POLLHUP when a process dies, however it dies).
 *
 * Rings: single producer, single consumer, a power-of-two data area per
 * direction. A send is one record (a quarter ring at most; larger sends are
 * several, so the reader copies one out while the writer fills the next):
 * an 8-byte header word at a line-aligned position, the payload, padding to
 * the next line. The consumer waits on the header word of the record it
 * expects, which shares its line with the first 56 payload bytes: a small
 * message crosses from core to core as one cache line, not as a counter's
 * line and then the data's (plain-C rings with a head counter: 0.39-0.42 us
 * per 64-byte round trip on the H200 machine, bench/raw_ring.c). The
 * consumer publishes its tail in its own line; the producer keeps the tail
 * it last read and reads that line again only when the room it leaves is
 * too small. After a send the producer zeroes the header words of the
 * lines a few records ahead (zero_ahead), so that a small send stores to
 * no line but its own record's.
 *
 * Waiting: spin on the header word or the tail (APIGEN_SHM_SPIN_US, default 20 us; a
 * consumer as long as its recent waits, up to APIGEN_SPIN_MAX_US: spin.c), then
 * announce sleep in a futex word next to it, re-check, and FUTEX_WAIT in
 * slices of SLICE_MS; the other side exchanges the word to 0 and wakes only
 * when it was set, so a busy pair makes no system calls at all. Between
 * slices the sleeper polls the socket: a dead peer is noticed within a
 * slice, and nothing waits forever.
 *
 * Trust: a header word whose stamp is not its position's or whose length
 * is more than a record holds, or a tail that moves impossibly (more than
 * the ring holds), closes the connection. Bytes are copied out of the ring before anyone looks at them,
 * so the peer cannot change what the server already checked. */
#define _GNU_SOURCE
#include "spin.h"
#include "tp_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define SHM_MAGIC 0x4d485341u /* "ASHM" */
#define SHM_VERSION 2u /* 2: records with in-line headers */
#define SHM_DATA_OFF 4096u
#define SHM_RING_MIN (64u << 10)
#define SHM_RING_MAX (256u << 20)
#define SHM_RING_DEFAULT (2u << 20)
#define SHM_SPIN_US_DEFAULT 20
#define SLICE_MS 50
#define SETUP_MS_DEFAULT 5000

/* bytes of the frames queued behind the one just read that are pulled
 * into the reader's cache while it handles that one */
#define READ_AHEAD 1024

#if defined(__GNUC__)
#define PREFETCH_R(p) __builtin_prefetch((p), 0)
#else
#define PREFETCH_R(p) ((void)(p))
#endif

/* Header words the producer keeps zeroed ahead of its position, after each
 * send (see zero_ahead). */
#define ZERO_AHEAD 256u

typedef struct shm_ring {
    _Alignas(64) _Atomic uint64_t head; /* producer: where its next record goes (only an
                                           adopting process reads it) */
    _Atomic uint32_t cons_sleep;        /* 1: the consumer sleeps (or is about to) */
    _Alignas(64) _Atomic uint64_t tail; /* consumer: bytes read */
    _Atomic uint64_t rec_end;           /* consumer: end of the record it reads (for an adopter) */
    _Atomic uint32_t prod_sleep;        /* 1: the producer waits for space on it */
} shm_ring;

typedef struct shm_hdr {
    uint32_t magic, version;
    uint64_t ring_size;
    _Alignas(64) _Atomic uint32_t closed[2]; /* [side]: that side closed or shut down */
    shm_ring ring[2];                         /* [0] client -> server, [1] server -> client */
} shm_hdr;

_Static_assert(sizeof(shm_hdr) <= SHM_DATA_OFF, "shm header fits its page");

/* The setup message (with the memfd attached). */
typedef struct shm_setup {
    uint32_t magic, version;
    uint64_t ring_size, total;
} shm_setup;

enum { SIDE_SERVER = 0, SIDE_CLIENT = 1 };

struct tp_shm {
    int side;
    bool ready;            /* client: segment received and mapped */
    int setup_ms;          /* client: how long the first use waits for it */
    shm_hdr *h;
    size_t map_len;
    uint64_t size, mask;
    shm_ring *tx, *rx;
    uint8_t *txd, *rxd;
    pid_t owner;           /* a forked child closing its copy must not signal */
    int mfd;               /* server: the segment's memfd (a session process adopts it) */
    _Atomic bool shut;
    _Atomic bool peer_dead;
    uint64_t tx_tail;      /* the tx ring's tail as last read: re-read only when the room it
                              leaves is too small (the consumer's line stays where it is) */
    uint64_t tx_pos;       /* producer: where the next record goes (64-byte aligned) */
    uint64_t tx_zeroed;    /* producer: every line start in [tx_pos, tx_zeroed) holds a zero
                              header word (a fresh ring is all zero) */
    uint64_t rx_pos, rx_end; /* consumer: next byte to read, end of the current record */
    uint64_t rx_pub;       /* consumer: the tail as last published */
    uint64_t rx_pf;        /* consumer: read-ahead asked for up to here */
};
#define SHM(c) ((struct tp_shm *)(c)->priv)

/* ---- settings --------------------------------------------------------------- */
static pthread_once_t cfg_once = PTHREAD_ONCE_INIT;
static int64_t cfg_spin_ns, cfg_spin_max_ns;
static uint64_t cfg_ring;

static uint64_t env_size(const char *name, uint64_t dflt)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return dflt;
    char *end;
    unsigned long long n = strtoull(v, &end, 10);
    if (*end == 'K' || *end == 'k')
        n <<= 10, end++;
    else if (*end == 'M' || *end == 'm')
        n <<= 20, end++;
    return *end ? dflt : (uint64_t)n;
}

static void cfg_init(void)
{
    tp_spin_config("APIGEN_SHM_SPIN_US", SHM_SPIN_US_DEFAULT, &cfg_spin_ns, &cfg_spin_max_ns);
    uint64_t r = env_size("APIGEN_SHM_RING", SHM_RING_DEFAULT), p = SHM_RING_MIN;
    while (p < r && p < SHM_RING_MAX)
        p <<= 1;
    cfg_ring = p;
}

/* ---- small helpers ---------------------------------------------------------- */
static void futex_wait(_Atomic uint32_t *w, uint32_t val, int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT, val, &ts, NULL, 0);
}

/* The other side sleeps on w: clear it and wake it (only then a syscall). */
static inline void wake(_Atomic uint32_t *w)
{
    if (atomic_load(w) && atomic_exchange(w, 0))
        syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* A send's or recv's deadline, read from the clock only once it has to
 * wait (a ring with room or data costs no clock read). */
#define DL_UNSET INT64_MIN
static int64_t deadline_of(int64_t *dl, int timeout_ms)
{
    if (*dl == DL_UNSET)
        *dl = tp_deadline(timeout_ms);
    return *dl;
}

/* n bytes at ring offset idx of a ring of size bytes, wrapping at its end. */
static inline void ring_copy_out(void *dst, const uint8_t *ring, uint64_t size, uint64_t idx,
                                 uint64_t n)
{
    if (__builtin_expect(n <= size - idx, 1)) { /* one piece: a constant n stays inline */
        memcpy(dst, ring + idx, n);
        return;
    }
    uint64_t first = size - idx;
    memcpy(dst, ring + idx, first);
    memcpy((uint8_t *)dst + first, ring, n - first);
}

static void shm_name(const char *name, struct sockaddr_un *sa, socklen_t *sl)
{
    memset(sa, 0, sizeof *sa);
    sa->sun_family = AF_UNIX;
    int n = snprintf(sa->sun_path + 1, sizeof sa->sun_path - 1, "apigen-shm:%s", name);
    if (n < 0 || (size_t)n >= sizeof sa->sun_path - 1)
        n = (int)sizeof sa->sun_path - 2;
    *sl = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

static bool peer_gone(apigen_conn *c)
{
    struct tp_shm *s = c->priv;
    if (atomic_load(&s->peer_dead) || atomic_load(&s->h->closed[!s->side]))
        return true;
    return false;
}

/* The socket says whether the peer process still holds its end. */
static void check_alive(apigen_conn *c)
{
    struct pollfd p = {c->fd, POLLIN | POLLRDHUP, 0};
    if (poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP | POLLRDHUP | POLLERR)))
        atomic_store(&SHM(c)->peer_dead, true);
}

enum { W_CHANGED, W_TIMEOUT, W_STOP };

/* A consumer's wait that began at start ended with data: its budget learns it. */
static void learn(tp_spin *sp, int64_t start)
{
    if (sp && start >= 0)
        tp_spin_learn(sp, cfg_spin_ns, cfg_spin_max_ns, tp_mono_ns() - start);
}

/* Waits until *pos is no longer `seen` (the peer moved), the connection stops,
 * or the deadline passes. sp: the consumer's spin budget, which the wait
 * teaches (NULL: a producer waiting for room spins the base). */
__attribute__((noinline)) /* the slow path: kept out of the callers' fast paths */
static int wait_change(apigen_conn *c, _Atomic uint64_t *pos, uint64_t seen,
                       _Atomic uint32_t *sleepw, int64_t deadline, tp_spin *sp)
{
    struct tp_shm *s = c->priv;
    int64_t start = -1, spin_end = -1; /* the clock is first read after 64 spins: a reply */
    for (unsigned i = 1;; i++) {        /* that comes sooner costs no clock read */
        if (atomic_load_explicit(pos, memory_order_acquire) != seen) {
            learn(sp, start);
            return W_CHANGED;
        }
        if ((i & 63) == 0) {
            if (atomic_load(&s->shut) || peer_gone(c))
                return W_STOP;
            int64_t now = tp_mono_ns();
            if (spin_end < 0)
                start = now, spin_end = now + (sp ? tp_spin_budget(sp, cfg_spin_ns) : cfg_spin_ns);
            if (deadline >= 0 && now >= deadline)
                return W_TIMEOUT;
            if (now >= spin_end)
                break;
        }
        tp_cpu_relax();
    }
    /* a caller waiting for a reply: yield the CPU a while (spin.h) */
    int64_t yield_end = spin_end + tp_yield_ns(sp);
    for (unsigned i = 1;; i++) {
        int64_t now = tp_mono_ns();
        if (now >= yield_end)
            break;
        if (atomic_load_explicit(pos, memory_order_acquire) != seen) {
            learn(sp, start);
            return W_CHANGED;
        }
        if ((i & 255) == 0)
            check_alive(c); /* a killed peer says nothing in the segment */
        if (atomic_load(&s->shut) || peer_gone(c))
            return W_STOP;
        if (deadline >= 0 && now >= deadline)
            return W_TIMEOUT;
        sched_yield();
    }
    for (;;) {
        atomic_store(sleepw, 1);
        if (atomic_load(pos) != seen) {
            atomic_store(sleepw, 0);
            learn(sp, start);
            return W_CHANGED;
        }
        if (atomic_load(&s->shut) || peer_gone(c)) {
            atomic_store(sleepw, 0);
            return W_STOP;
        }
        int ms = SLICE_MS;
        if (deadline >= 0) {
            int left = tp_ms_left(deadline);
            if (left == 0) {
                atomic_store(sleepw, 0);
                return W_TIMEOUT;
            }
            if (left < ms)
                ms = left;
        }
        futex_wait(sleepw, 1, ms);
        if (atomic_load(pos) != seen) {
            atomic_store(sleepw, 0);
            learn(sp, start);
            return W_CHANGED;
        }
        check_alive(c);
    }
}

/* ---- segment ------------------------------------------------------------------ */
static void attach(struct tp_shm *s, void *map, size_t len, uint64_t ring, bool fresh)
{
    s->h = map;
    s->map_len = len;
    s->size = ring;
    s->mask = ring - 1;
    uint8_t *d0 = (uint8_t *)map + SHM_DATA_OFF, *d1 = d0 + ring;
    if (s->side == SIDE_CLIENT) {
        s->tx = &s->h->ring[0], s->txd = d0;
        s->rx = &s->h->ring[1], s->rxd = d1;
    } else {
        s->tx = &s->h->ring[1], s->txd = d1;
        s->rx = &s->h->ring[0], s->rxd = d0;
    }
    /* An adopted segment may have been used: go on where the parent left.
     * Values the client could have written are only bounded here; one that
     * lies makes a later send or recv see a corrupted ring. */
    s->tx_tail = atomic_load(&s->tx->tail);
    s->tx_pos = atomic_load(&s->tx->head) & ~(uint64_t)63;
    s->tx_zeroed = fresh ? s->tx_pos + ring : s->tx_pos; /* an adopted ring: nothing known */
    s->rx_pos = s->rx_pub = atomic_load(&s->rx->tail);
    s->rx_end = atomic_load(&s->rx->rec_end);
    if (s->rx_end < s->rx_pos || s->rx_end - s->rx_pos > ring / 4)
        s->rx_end = s->rx_pos;
    s->ready = true;
}

/* Client: receive the memfd the server sent at accept and map it. */
static bool client_setup(apigen_conn *c, int64_t deadline, char *err, size_t errlen)
{
    struct tp_shm *s = c->priv;
    if (s->ready)
        return true;
    if (atomic_load(&s->shut)) {
        tp_err(err, errlen, "%s: connection shut down", c->peer);
        return false;
    }
    int64_t dl = tp_deadline(s->setup_ms);
    if (deadline >= 0 && (dl < 0 || deadline < dl))
        dl = deadline;
    shm_setup m;
    union {
        struct cmsghdr h;
        char b[CMSG_SPACE(sizeof(int))];
    } cb;
    for (;;) {
        struct pollfd p = {c->fd, POLLIN, 0};
        int n = poll(&p, 1, tp_ms_left(dl));
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0) {
            tp_err(err, errlen, "%s: the server did not set up shared memory in time", c->peer);
            return false;
        }
        if (n < 0) {
            tp_err(err, errlen, "%s: poll: %s", c->peer, strerror(errno));
            return false;
        }
        break;
    }
    struct iovec v = {&m, sizeof m};
    struct msghdr mh;
    memset(&mh, 0, sizeof mh);
    mh.msg_iov = &v;
    mh.msg_iovlen = 1;
    mh.msg_control = cb.b;
    mh.msg_controllen = sizeof cb.b;
    ssize_t k;
    do
        k = recvmsg(c->fd, &mh, MSG_CMSG_CLOEXEC | MSG_WAITALL);
    while (k < 0 && errno == EINTR);
    int fd = -1;
    for (struct cmsghdr *ch = CMSG_FIRSTHDR(&mh); ch; ch = CMSG_NXTHDR(&mh, ch))
        if (ch->cmsg_level == SOL_SOCKET && ch->cmsg_type == SCM_RIGHTS &&
            ch->cmsg_len == CMSG_LEN(sizeof(int)))
            memcpy(&fd, CMSG_DATA(ch), sizeof fd);
    if (k == 0) {
        if (fd >= 0)
            close(fd);
        tp_err(err, errlen, "%s closed the connection", c->peer);
        return false;
    }
    struct stat st;
    if (k != (ssize_t)sizeof m || fd < 0 || m.magic != SHM_MAGIC || m.version != SHM_VERSION ||
        m.ring_size < SHM_RING_MIN || m.ring_size > SHM_RING_MAX || (m.ring_size & (m.ring_size - 1)) ||
        m.total != SHM_DATA_OFF + 2 * m.ring_size || fstat(fd, &st) < 0 ||
        (uint64_t)st.st_size < m.total) {
        if (fd >= 0)
            close(fd);
        tp_err(err, errlen, "%s: bad shared-memory setup from the server%s", c->peer,
               k < 0 ? " (recvmsg failed)" : "");
        return false;
    }
    void *map = mmap(NULL, m.total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
        tp_err(err, errlen, "%s: mmap of %llu bytes: %s", c->peer, (unsigned long long)m.total,
               strerror(errno));
        return false;
    }
    const shm_hdr *h = map;
    if (h->magic != SHM_MAGIC || h->version != SHM_VERSION || h->ring_size != m.ring_size) {
        munmap(map, m.total);
        tp_err(err, errlen, "%s: bad shared-memory header", c->peer);
        return false;
    }
    attach(s, map, m.total, m.ring_size, true); /* only this client writes its tx ring */
    return true;
}

static bool tp_shm_connect(const apigen_url *u, const char *url, int timeout_ms, apigen_conn **out,
                    char *err, size_t errlen)
{
    pthread_once(&cfg_once, cfg_init);
    struct sockaddr_un sa;
    socklen_t sl;
    shm_name(u->path, &sa, &sl);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        tp_err(err, errlen, "cannot connect to %s: socket: %s", url, strerror(errno));
        return false;
    }
    int rc = tp_connect_fd(fd, (struct sockaddr *)&sa, sl, timeout_ms);
    if (rc) {
        tp_err(err, errlen, "cannot connect to %s: %s", url,
               rc == ECONNREFUSED ? "no server listens there" : strerror(rc));
        close(fd);
        return false;
    }
    struct tp_shm *s = calloc(1, sizeof *s);
    apigen_conn *c = s ? tp_conn_new(&tp_shm_ops, fd, url, err, errlen) : NULL;
    if (!c) {
        if (!s) {
            close(fd);
            tp_err(err, errlen, "out of memory");
        }
        free(s);
        return false;
    }
    s->side = SIDE_CLIENT;
    s->owner = getpid();
    s->mfd = -1;
    s->setup_ms = timeout_ms < 0 ? SETUP_MS_DEFAULT : timeout_ms;
    c->priv = s;
    *out = c;
    return true;
}

static bool tp_shm_listen(const apigen_url *u, const char *url, apigen_listener **out, char *err,
                   size_t errlen)
{
    pthread_once(&cfg_once, cfg_init);
    struct sockaddr_un sa;
    socklen_t sl;
    shm_name(u->path, &sa, &sl);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        tp_err(err, errlen, "cannot listen on %s: socket: %s", url, strerror(errno));
        return false;
    }
    if (bind(fd, (struct sockaddr *)&sa, sl) < 0 || listen(fd, 128) < 0) {
        tp_err(err, errlen, "cannot listen on %s: %s", url,
               errno == EADDRINUSE ? "another server is listening there" : strerror(errno));
        close(fd);
        return false;
    }
    apigen_listener *l = tp_listener_new(&tp_shm_ops, fd, err, errlen);
    if (!l) {
        close(fd);
        return false;
    }
    snprintf(l->url, sizeof l->url, "shm://%s", u->path);
    *out = l;
    return true;
}

/* The server's end of a connection over the mapped segment (accepted here
 * or adopted by a session process); on failure everything given is closed. */
static bool server_conn(int fd, const char *peer, void *map, uint64_t total, int mfd,
                        uint64_t ring, bool fresh, apigen_conn **out, char *err, size_t errlen)
{
    struct tp_shm *s = calloc(1, sizeof *s);
    apigen_conn *c = s ? tp_conn_new(&tp_shm_ops, fd, peer, err, errlen) : NULL;
    if (!c) {
        if (!s) {
            close(fd);
            tp_err(err, errlen, "out of memory");
        }
        free(s);
        munmap(map, total);
        close(mfd);
        return false;
    }
    s->side = SIDE_SERVER;
    s->owner = getpid();
    s->mfd = mfd; /* kept: --isolation process hands it to the session's process */
    attach(s, map, total, ring, fresh);
    c->priv = s;
    *out = c;
    return true;
}

/* Server: a fresh segment for an accepted socket, sent to the client. */
static bool tp_shm_accepted(apigen_listener *l, int fd, apigen_conn **out, char *err, size_t errlen)
{
    struct ucred cr;
    socklen_t crl = sizeof cr;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crl) < 0 ||
        (cr.uid != geteuid() && cr.uid != 0)) {
        tp_err(err, errlen, "refused a client of %s: it runs as another user (uid %d)", l->url,
               crl == sizeof cr ? (int)cr.uid : -1);
        close(fd);
        return false;
    }
    uint64_t ring = cfg_ring, total = SHM_DATA_OFF + 2 * ring;
    int mfd = memfd_create("apigen-shm", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    void *map = MAP_FAILED;
    if (mfd < 0 || ftruncate(mfd, (off_t)total) < 0 ||
        fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0 ||
        (map = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0)) == MAP_FAILED) {
        tp_err(err, errlen, "accept on %s: shared memory of %llu bytes: %s", l->url,
               (unsigned long long)total, strerror(errno));
        if (mfd >= 0)
            close(mfd);
        close(fd);
        return false;
    }
    shm_hdr *h = map;
    h->magic = SHM_MAGIC;
    h->version = SHM_VERSION;
    h->ring_size = ring;
    shm_setup m = {SHM_MAGIC, SHM_VERSION, ring, total};
    union {
        struct cmsghdr h;
        char b[CMSG_SPACE(sizeof(int))];
    } cb;
    memset(&cb, 0, sizeof cb);
    struct iovec v = {&m, sizeof m};
    struct msghdr mh;
    memset(&mh, 0, sizeof mh);
    mh.msg_iov = &v;
    mh.msg_iovlen = 1;
    mh.msg_control = cb.b;
    mh.msg_controllen = sizeof cb.b;
    struct cmsghdr *ch = CMSG_FIRSTHDR(&mh);
    ch->cmsg_level = SOL_SOCKET;
    ch->cmsg_type = SCM_RIGHTS;
    ch->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(ch), &mfd, sizeof mfd);
    ssize_t k;
    do /* a fresh socket has room: never blocks on the client */
        k = sendmsg(fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
    while (k < 0 && errno == EINTR);
    if (k != (ssize_t)sizeof m) {
        tp_err(err, errlen, "accept on %s: sending the shared memory: %s", l->url,
               k < 0 ? strerror(errno) : "short write");
        munmap(map, total);
        close(mfd);
        close(fd);
        return false;
    }
    char peer[sizeof((apigen_conn *)0)->peer];
    snprintf(peer, sizeof peer, "client of %s (pid %d)", l->url, (int)cr.pid);
    return server_conn(fd, peer, map, total, mfd, ring, true, out, err, errlen);
}

/* ---- data --------------------------------------------------------------------- */
/* Every send is one or more records: an 8-byte header word at a 64-byte
 * aligned position p, (stamp(p) << 32 | payload length), then the payload,
 * then padding to the next line. The consumer waits on the header word of
 * the record it expects, in the line that also holds the record's first 56
 * bytes: a small message crosses as one cache line, where a separate head
 * counter would make it two (the counter's line, then the data's), each a
 * cross-core transfer. Before a record is published the header word of the
 * next one is zero (zeroed ahead after an earlier send, or by this one), so
 * the word the consumer waits on is either 0 or a header written for that
 * very position, never an old lap's bytes; the stamp is a check on top (a
 * desynchronised or scribbling peer). */
#define REC_HDR 8u
#define REC_ALIGN 64u

static inline uint64_t line_up(uint64_t x)
{
    return (x + REC_ALIGN - 1) & ~(uint64_t)(REC_ALIGN - 1);
}

static inline uint32_t rec_stamp(uint64_t pos)
{
    return (uint32_t)(pos / REC_ALIGN) | 0x80000000u; /* never 0: 0 is "not yet" */
}

static inline _Atomic uint64_t *rec_word(uint8_t *ring, uint64_t mask, uint64_t pos)
{
    return (_Atomic uint64_t *)(void *)(ring + (pos & mask));
}

/* The largest record payload: a quarter ring, so that the reader copies one
 * out while the writer fills the next. */
static inline uint64_t rec_max(const struct tp_shm *s)
{
    return s->size / 4;
}

/* Payload bytes a record may carry when `used` bytes of the ring are taken:
 * its header, its padding and the next record's zeroed header must fit. */
static inline uint64_t rec_room(const struct tp_shm *s, uint64_t used)
{
    uint64_t room = used <= s->size ? s->size - used : 0; /* more: a tail the peer scribbled */
    if (room < REC_HDR + REC_ALIGN + REC_HDR)
        return 0;
    return ((room - REC_HDR) & ~(uint64_t)(REC_ALIGN - 1)) - REC_HDR;
}

/* n bytes into the ring at offset idx, wrapping at its end. */
static inline void ring_copy_in(uint8_t *ring, uint64_t size, uint64_t idx, const void *src,
                                uint64_t n)
{
    if (__builtin_expect(n <= size - idx, 1)) {
        memcpy(ring + idx, src, n);
        return;
    }
    uint64_t first = size - idx;
    memcpy(ring + idx, src, first);
    memcpy(ring, (const uint8_t *)src + first, n - first);
}

/* Where a send stands in its iovecs. */
typedef struct iov_cursor {
    const struct iovec *iov;
    int n, i;
    size_t off;
} iov_cursor;

/* k bytes from the cursor into the ring at stream position at. */
static void copy_from_iovs(struct tp_shm *s, iov_cursor *cur, uint64_t at, uint64_t k)
{
    while (k) {
        const struct iovec *v = &cur->iov[cur->i];
        size_t left = v->iov_len - cur->off;
        if (!left) {
            cur->i++;
            cur->off = 0;
            continue;
        }
        size_t m = left < k ? left : (size_t)k;
        ring_copy_in(s->txd, s->size, at & s->mask, (const uint8_t *)v->iov_base + cur->off, m);
        cur->off += m;
        at += m;
        k -= m;
    }
}

/* A record of k payload bytes at the producer's position: the next
 * record's header word must be zero before this one is published. It
 * normally is already (zero_ahead); a record that reaches past the zeroed
 * lines (a large one, the first after an adoption) zeroes it here. */
static inline uint64_t begin_record(struct tp_shm *s, uint64_t k)
{
    uint64_t next = s->tx_pos + line_up(REC_HDR + k);
    if (next >= s->tx_zeroed) {
        atomic_store_explicit(rec_word(s->txd, s->mask, next), 0, memory_order_relaxed);
        s->tx_zeroed = next + REC_ALIGN;
    }
    return next;
}

/* After a send, the header words of the lines ahead (up to ZERO_AHEAD past
 * the position, and only in free space: before the tail as last read
 * comes round) are zeroed, so that the next small send writes no line but
 * its own record's. A store to a line that the peer touched last costs a
 * cross-core round trip before the header that follows it can show (H200
 * machine, rdtsc around the stores: ~110 ns the zeroed line, ~110 ns the
 * record's own; the 2026-11-22 section of docs/performance.md); here it
 * drains while the peer works on the message. */
static inline void zero_ahead(struct tp_shm *s)
{
    if (s->tx_tail > s->tx_pos) /* a tail that lies (an adopted segment): no guess */
        return;
    uint64_t end = s->tx_pos + ZERO_AHEAD, free_end = s->tx_tail + s->size;
    if (end > free_end)
        end = free_end;
    while (s->tx_zeroed + REC_HDR <= end) {
        atomic_store_explicit(rec_word(s->txd, s->mask, s->tx_zeroed), 0, memory_order_relaxed);
        s->tx_zeroed += REC_ALIGN;
    }
}

/* The header written (sequentially consistent: the store before the read
 * of cons_sleep), the producer moved on to next. */
static inline void publish_record(struct tp_shm *s, uint64_t k, uint64_t next)
{
    uint64_t p = s->tx_pos;
    atomic_store(rec_word(s->txd, s->mask, p), (uint64_t)rec_stamp(p) << 32 | k);
    s->tx_pos = next;
    atomic_store_explicit(&s->tx->head, next, memory_order_relaxed); /* for an adopter */
    wake(&s->tx->cons_sleep);
}

/* One record of k payload bytes from the cursor (room checked), published. */
static void put_record(struct tp_shm *s, iov_cursor *cur, uint64_t k)
{
    uint64_t next = begin_record(s, k);
    copy_from_iovs(s, cur, s->tx_pos + REC_HDR, k);
    publish_record(s, k, next);
    zero_ahead(s);
}

/* Whether a send of total bytes goes out as one record right now: set up,
 * small enough, room left by the tail as last read, nobody gone. */
static inline bool one_pass(apigen_conn *c, struct tp_shm *s, uint64_t total)
{
    return s->ready && total && total <= rec_max(s) &&
           total <= rec_room(s, s->tx_pos - s->tx_tail) &&
           !atomic_load_explicit(&s->shut, memory_order_relaxed) && !peer_gone(c);
}

static bool tp_shm_send(apigen_conn *c, const struct iovec *iov, int iovcnt, int timeout_ms, char *err,
                 size_t errlen)
{
    struct tp_shm *s = c->priv;
    uint64_t total = 0; /* each piece at most the ring's size: no overflow */
    for (int i = 0; i < iovcnt && total <= s->size; i++)
        total += iov[i].iov_len <= s->size ? iov[i].iov_len : s->size + 1;
    iov_cursor cur = {iov, iovcnt, 0, 0};
    /* a call's frames: one record, published in one pass, no clock read */
    if (one_pass(c, s, total)) {
        put_record(s, &cur, total);
        return true;
    }
    int64_t deadline = DL_UNSET;
    if (!s->ready && !client_setup(c, deadline_of(&deadline, timeout_ms), err, errlen))
        return false; /* checked here: every call */
    shm_ring *r = s->tx;
    uint64_t left = 0;
    for (int i = 0; i < iovcnt; i++)
        left += iov[i].iov_len;
    while (left) {
        if (atomic_load(&s->shut) || peer_gone(c)) {
            tp_err(err, errlen, "send to %s: %s", c->peer,
                   atomic_load(&s->shut) ? "connection shut down" : "the peer closed the connection");
            return false;
        }
        uint64_t want = left < rec_max(s) ? left : rec_max(s);
        uint64_t tail = s->tx_tail; /* at most the real tail: the room it leaves is there */
        uint64_t room = rec_room(s, s->tx_pos - tail);
        if (room < want) {
            tail = atomic_load_explicit(&r->tail, memory_order_acquire);
            if (s->tx_pos - tail > s->size) {
                tp_err(err, errlen, "send to %s: shared ring corrupted by the peer", c->peer);
                return false;
            }
            s->tx_tail = tail;
            room = rec_room(s, s->tx_pos - tail);
        }
        if (!room) {
            int w = wait_change(c, &r->tail, tail, &r->prod_sleep, deadline_of(&deadline, timeout_ms), NULL);
            if (w == W_TIMEOUT) {
                tp_err(err, errlen, "send to %s timed out after %d ms", c->peer, timeout_ms);
                return false;
            }
            continue;
        }
        uint64_t k = want < room ? want : room;
        put_record(s, &cur, k);
        left -= k;
    }
    return true;
}

/* One buffer (a call's frame, a reply): the one-pass path without the
 * iovec walk; anything else (a setup still to wait for, no room, a large
 * buffer) is tp_shm_send's. */
static bool tp_shm_send_buf(apigen_conn *c, const void *p, size_t n, int timeout_ms, char *err,
                     size_t errlen)
{
    struct tp_shm *s = c->priv;
    if (one_pass(c, s, n)) {
        uint64_t next = begin_record(s, n);
        ring_copy_in(s->txd, s->size, (s->tx_pos + REC_HDR) & s->mask, p, n);
        publish_record(s, n, next);
        zero_ahead(s);
        return true;
    }
    struct iovec v = {(void *)p, n};
    return tp_shm_send(c, &v, 1, timeout_ms, err, errlen);
}

/* The consumer's side: rx_pos is the next byte to read, rx_end the end of
 * the current record's payload; when they meet, the next record's header
 * is at rx_end's next line. */
enum { REC_TAKEN, REC_NONE, REC_BAD };

static inline _Atomic uint64_t *next_header(struct tp_shm *s)
{
    return rec_word(s->rxd, s->mask, line_up(s->rx_end));
}

/* Takes the next record's header if it is published. */
static inline int take_header(struct tp_shm *s)
{
    uint64_t at = line_up(s->rx_end);
    uint64_t w = atomic_load_explicit(rec_word(s->rxd, s->mask, at), memory_order_acquire);
    if (!w)
        return REC_NONE;
    uint64_t len = (uint32_t)w;
    if ((uint32_t)(w >> 32) != rec_stamp(at) || !len || len > rec_max(s))
        return REC_BAD;
    s->rx_pos = at + REC_HDR;
    s->rx_end = s->rx_pos + len;
    return REC_TAKEN;
}

/* What was read goes back to the producer (sequentially consistent: the
 * store before the read of prod_sleep). */
static inline void publish_tail(struct tp_shm *s)
{
    atomic_store_explicit(&s->rx->rec_end, s->rx_end, memory_order_relaxed);
    atomic_store(&s->rx->tail, s->rx_pos);
    s->rx_pub = s->rx_pos;
    wake(&s->rx->prod_sleep);
}

/* The tail is published before the consumer waits for data (so a producer
 * waiting for room never waits on a consumer that waits too) and otherwise
 * once an eighth of the ring was read since the last time: a producer that
 * runs ahead (a stream of launches) and waits for room takes it in large
 * pieces, and the tail's line crosses to its core once per eighth of a
 * ring, not after every frame, which the consumer would pay for with a
 * stalled store each time. */
static inline void publish_tail_lazily(struct tp_shm *s)
{
    if (s->rx_pos - s->rx_pub >= s->size / 8)
        publish_tail(s);
}

/* Receives exactly n bytes. */
static apigen_tp_result shm_recv(apigen_conn *c, void *buf, size_t n, int timeout_ms, char *err,
                                 size_t errlen)
{
    struct tp_shm *s = c->priv;
    int64_t deadline = DL_UNSET;
    if (!s->ready && !client_setup(c, deadline_of(&deadline, timeout_ms), err, errlen))
        return APIGEN_TP_ERROR;
    size_t got = 0;
    while (got < n) {
        if (s->rx_pos == s->rx_end) {
            int h = take_header(s);
            if (h == REC_BAD) {
                tp_err(err, errlen, "recv from %s: shared ring corrupted by the peer", c->peer);
                return APIGEN_TP_ERROR;
            }
            if (h == REC_NONE) {
                if (s->rx_pos != s->rx_pub)
                    publish_tail(s);
                bool stop = atomic_load(&s->shut) || peer_gone(c);
                if (stop && !atomic_load(next_header(s))) { /* drained what it sent before it left */
                    if (got == 0) {
                        tp_err(err, errlen, "%s closed the connection", c->peer);
                        return APIGEN_TP_EOF;
                    }
                    tp_err(err, errlen,
                           "%s closed the connection in the middle of a message (%zu of %zu bytes)",
                           c->peer, got, n);
                    return APIGEN_TP_ERROR;
                }
                if (stop)
                    continue;
                if (wait_change(c, next_header(s), 0, &s->rx->cons_sleep,
                                deadline_of(&deadline, timeout_ms), &c->spin) == W_TIMEOUT) {
                    tp_err(err, errlen, "no data from %s within %d ms", c->peer, timeout_ms);
                    return APIGEN_TP_TIMEOUT;
                }
                continue;
            }
        }
        uint64_t k = n - got < s->rx_end - s->rx_pos ? n - got : s->rx_end - s->rx_pos;
        ring_copy_out((uint8_t *)buf + got, s->rxd, s->size, s->rx_pos & s->mask, k);
        s->rx_pos += k;
        got += k;
        publish_tail_lazily(s);
    }
    return APIGEN_TP_OK;
}

static apigen_tp_result tp_shm_recv(apigen_conn *c, void *buf, size_t n, int timeout_ms, char *err,
                             size_t errlen)
{
    return shm_recv(c, buf, n, timeout_ms, err, errlen);
}

/* The head, and the body in the same pass when all of it is in the record. */
static apigen_tp_result tp_shm_recv_head(apigen_conn *c, void *head, size_t head_n, size_t len_off,
                                  void *body, size_t body_cap, size_t *body_got, int timeout_ms,
                                  char *err, size_t errlen)
{
    struct tp_shm *s = c->priv;
    *body_got = 0;
    bool have = false;
    if (s->ready) { /* the frame's record is the next one, or comes: no general loop */
        if (s->rx_pos == s->rx_end && take_header(s) == REC_NONE) {
            /* a call waiting for its reply, a server for the next call */
            if (s->rx_pos != s->rx_pub)
                publish_tail(s);
            int64_t deadline = DL_UNSET;
            int w = atomic_load(&s->shut) || peer_gone(c)
                        ? W_STOP
                        : wait_change(c, next_header(s), 0, &s->rx->cons_sleep,
                                      deadline_of(&deadline, timeout_ms), &c->spin);
            if (w == W_TIMEOUT) {
                tp_err(err, errlen, "no data from %s within %d ms", c->peer, timeout_ms);
                return APIGEN_TP_TIMEOUT;
            }
            if (w == W_CHANGED)
                (void)take_header(s); /* a bad one, a stop: said by shm_recv below */
        }
        if (s->rx_end - s->rx_pos >= head_n) {
            ring_copy_out(head, s->rxd, s->size, s->rx_pos & s->mask, head_n);
            s->rx_pos += head_n;
            have = true;
        }
    }
    if (!have) {
        apigen_tp_result res = shm_recv(c, head, head_n, timeout_ms, err, errlen);
        if (res != APIGEN_TP_OK)
            return res;
    }
    const uint8_t *lp = (const uint8_t *)head + len_off;
    uint32_t len = (uint32_t)lp[0] | (uint32_t)lp[1] << 8 | (uint32_t)lp[2] << 16 |
                   (uint32_t)lp[3] << 24;
    uint64_t in_rec = s->rx_end - s->rx_pos;
    if (len && len <= body_cap && len <= in_rec) {
        ring_copy_out(body, s->rxd, s->size, s->rx_pos & s->mask, len);
        s->rx_pos += len;
        *body_got = len;
        /* Queued frames behind this one in the record (a flushed batch of
         * launches) are still in the writer's cache: ask for their lines
         * now, so that they cross while this call runs (a launch takes
         * microseconds) instead of stalling the next one. H200, bench_cuda
         * over shm, three interleaved rounds: async launches 0.88/0.88/0.92x
         * native without, 0.92/0.97/0.95x with 1 KiB ahead (0.93/0.97/0.93x
         * with 256 B). */
        uint64_t ahead = in_rec - len < READ_AHEAD ? in_rec - len : READ_AHEAD;
        uint64_t from = s->rx_pf > s->rx_pos ? s->rx_pf : s->rx_pos; /* the lines not asked yet */
        for (uint64_t at = from; at < s->rx_pos + ahead; at += 64)
            PREFETCH_R(s->rxd + (at & s->mask));
        if (from < s->rx_pos + ahead)
            s->rx_pf = s->rx_pos + ahead;
    }
    publish_tail_lazily(s);
    return APIGEN_TP_OK;
}

static void wake_all(struct tp_shm *s)
{
    for (int i = 0; i < 2; i++) {
        atomic_store(&s->h->ring[i].cons_sleep, 1);
        wake(&s->h->ring[i].cons_sleep);
        atomic_store(&s->h->ring[i].prod_sleep, 1);
        wake(&s->h->ring[i].prod_sleep);
    }
}

static void tp_shm_shutdown(apigen_conn *c)
{
    struct tp_shm *s = c->priv;
    atomic_store(&s->shut, true);
    if (s->ready && s->owner == getpid()) {
        atomic_store(&s->h->closed[s->side], 1);
        wake_all(s);
    }
    shutdown(c->fd, SHUT_RDWR); /* also wakes a client still waiting for its setup */
}

static void tp_shm_close(apigen_conn *c)
{
    struct tp_shm *s = c->priv;
    if (!s)
        return;
    if (s->ready) {
        if (s->owner == getpid()) { /* a fork child's copy says nothing to the peer */
            atomic_store(&s->h->closed[s->side], 1);
            wake_all(s);
        }
        munmap(s->h, s->map_len);
    }
    if (s->mfd >= 0)
        close(s->mfd);
    free(s);
    c->priv = NULL;
}

static int tp_shm_segment_fd(const apigen_conn *c)
{
    const struct tp_shm *s = c->priv;
    return s && s->side == SIDE_SERVER ? s->mfd : -1;
}

static void tp_shm_publish(apigen_conn *c)
{
    struct tp_shm *s = c->priv;
    if (s->ready && s->rx_pos != s->rx_pub)
        publish_tail(s);
}

static void tp_shm_disown(apigen_conn *c)
{
    SHM(c)->owner = 0;
}

/* A session process of the server: the connection its parent accepted. The
 * ring size comes from the sealed segment's size, never from the header the
 * client can write. */
static bool tp_shm_adopt(int sock, int mfd, const char *peer, apigen_conn **out, char *err, size_t errlen)
{
    pthread_once(&cfg_once, cfg_init);
    struct stat st;
    int seals = fcntl(mfd, F_GET_SEALS);
    uint64_t total = 0, ring = 0;
    if (fstat(mfd, &st) == 0 && st.st_size > (off_t)SHM_DATA_OFF) {
        total = (uint64_t)st.st_size;
        ring = (total - SHM_DATA_OFF) / 2;
    }
    void *map = MAP_FAILED;
    if (seals < 0 || !(seals & F_SEAL_SHRINK) || ring < SHM_RING_MIN || ring > SHM_RING_MAX ||
        (ring & (ring - 1)) || total != SHM_DATA_OFF + 2 * ring ||
        (map = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0)) == MAP_FAILED) {
        tp_err(err, errlen, "%s: not a shared-memory connection segment", peer);
        close(mfd);
        close(sock);
        return false;
    }
    return server_conn(sock, peer, map, total, mfd, ring, false, out, err, errlen);
}

static bool shm_accept(apigen_listener *l, apigen_conn **out, char *err, size_t errlen)
{
    int fd;
    do
        fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        tp_err(err, errlen, "accept on %s: %s", l->url, strerror(errno));
        return false;
    }
    return tp_shm_accepted(l, fd, out, err, errlen);
}

/* A server's connection passes as its socket and its segment. */
static int shm_handoff_fds(apigen_conn *c, int fds[2], bool publish)
{
    int mfd = tp_shm_segment_fd(c);
    if (c->fd < 0 || mfd < 0)
        return 0;
    if (publish)
        tp_shm_publish(c); /* the adopting process goes on from what this one read */
    fds[0] = c->fd;
    fds[1] = mfd;
    return 2;
}

static bool shm_adopt(const int *fds, int nfds, const char *peer, apigen_conn **out, char *err,
                      size_t errlen)
{
    if (nfds != 2) {
        for (int i = 0; i < nfds; i++)
            close(fds[i]);
        tp_err(err, errlen, "%s: a shm connection is a socket and a segment, not %d descriptors",
               peer, nfds);
        return false;
    }
    return tp_shm_adopt(fds[0], fds[1], peer, out, err, errlen);
}

const tp_ops tp_shm_ops = {
    .scheme = "shm",
    .form = TP_URL_NAME,
    .example = "shm://name",
    .connect = tp_shm_connect,
    .listen = tp_shm_listen,
    .accept = shm_accept,
    .adopt = shm_adopt,
    .send = tp_shm_send,
    .send_buf = tp_shm_send_buf,
    .recv = tp_shm_recv,
    .recv_head = tp_shm_recv_head,
    .shutdown = tp_shm_shutdown,
    .close = tp_shm_close,
    .handoff_fds = shm_handoff_fds,
    .release = tp_shm_disown,
    /* H200, 2026-11-27 (docs/performance.md): PyTorch steps 0.82-0.96x ->
     * 0.91-1.01x native over shm (tcp.c: sockets send at most every 200 us) */
    .eager_us = 20,
};
