/* A stand-in libnccl.so.2 (NCCL 2.28's API, nccl.h) for CI without a GPU,
 * preloaded (LD_PRELOAD) with tests/fftrand/fake_cudart.c into the NCCL
 * examples natively and into the server that runs them forwarded. The
 * collectives are computed on the CPU: "device memory" is host memory of
 * the process (fake_cudart.c's cudaMalloc), streams are ignored and every
 * operation has completed when its call (or the outermost ncclGroupEnd)
 * returns.
 *
 * The ranks of a communicator are separate processes of one machine (or
 * several ranks of one process: ncclCommInitAll, groups). They meet in a
 * POSIX shared-memory segment named after the unique id
 * ("/fake-nccl-<hex>"): the first rank to arrive creates it (O_EXCL), the
 * others wait for its ready word. The name is unlinked as soon as all ranks
 * are in (nobody needs it after that, so a rank that crashes later leaks
 * nothing in /dev/shm); if an init fails, the last rank to leave unlinks it.
 *
 * A collective: each rank copies its contribution into its own slot of the
 * segment, announces it (a per-rank counter), waits for all, computes its
 * output from all slots, then announces that it is done reading; a rank
 * waits for that before its next contribution overwrites its slot. So
 * in-place operation works (inputs are copied before outputs are written)
 * and calls of one communicator match in call order, as in NCCL. Reductions
 * combine the ranks in rank order, the same result on every rank.
 * Send/receive: a byte stream per (source, destination) pair, a ring in the
 * segment; a send returns as soon as its message is in the ring (a message
 * larger than the ring streams, and then needs its receiver).
 *
 * Limits (the fake's, not NCCL's):
 *  - one rank's contribution to a collective (count * element size, times
 *    nranks for ReduceScatter's input, AlltoAll and Scatter) is at most
 *    SLOT_BYTES (16 MiB); larger: ncclInvalidArgument;
 *  - RING_BYTES (4 MiB) of send data buffered per pair: kept small since the
 *    ring's pages stay allocated in /dev/shm (a container's may be 64 MiB);
 *  - at most MAX_RANKS (64) ranks; ncclFloat8e4m3/e5m2 are moved but not
 *    reduced (ncclInvalidArgument);
 *  - a wait for other ranks gives up after TIMEOUT_S (60 s) with
 *    ncclSystemError (ncclRemoteError when a rank aborted), never hangs;
 *  - config fields, registration and windows are accepted and ignored;
 *    ncclCommShrink and ncclCommRevoke answer ncclInvalidUsage;
 *  - one thread at a time per communicator, as NCCL asks.
 * Never used with a GPU. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <errno.h>
#include <fcntl.h>
#include <nccl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define FAKE __attribute__((visibility("default")))

#define SLOT_BYTES ((size_t)16 << 20)
#define RING_BYTES ((size_t)4 << 20)
#define MAX_RANKS 64
#define TIMEOUT_S 60
#define COMM_MAGIC 0x6e63636cu /* "nccl" */
#define SEG_READY 0x52454459u
#define MAX_PREMUL 256

/* ids: ID_MAGIC, then KEY_BYTES naming the segment (16 random bytes and a
 * 4-byte split color), the rest zero */
#define ID_MAGIC "fakeNCCL"
#define ID_MAGIC_LEN 8
#define KEY_BYTES 20

/* shared atomics must be lock-free to work across processes */
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2 && ATOMIC_INT_LOCK_FREE == 2, "lock-free atomics");

/* ---- last error ------------------------------------------------------- */

static char last_error_[512];
static pthread_mutex_t last_error_lock_ = PTHREAD_MUTEX_INITIALIZER;

__attribute__((format(printf, 2, 3))) static ncclResult_t fail(ncclResult_t r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&last_error_lock_);
    vsnprintf(last_error_, sizeof last_error_, fmt, ap);
    pthread_mutex_unlock(&last_error_lock_);
    va_end(ap);
    return r;
}

/* ---- the shared segment ---------------------------------------------- */

struct seg_hdr {
    _Atomic uint32_t ready; /* SEG_READY once the creator has filled it in */
    int32_t nranks;
    uint64_t size;
    _Atomic int32_t arrived, joined; /* joined counts after the last arrival unlinked the name */
    _Atomic int32_t refs, unlinked, aborted;
};

struct seg_rank {
    _Atomic uint64_t seq; /* barrier count: 2k+1 contributed to op k, 2k+2 done reading */
    _Atomic uint32_t claimed;
    char pad[64 - sizeof(uint64_t) - sizeof(uint32_t)];
};

struct seg_ring { /* byte positions, only growing: the writer owns head, the reader tail */
    _Atomic uint64_t head;
    char pad1[56];
    _Atomic uint64_t tail;
    char pad2[56];
};

_Static_assert(sizeof(struct seg_hdr) <= 64 && sizeof(struct seg_rank) == 64, "segment layout");

/* the segment: the header (64 bytes), nranks seg_rank, nranks x nranks
 * seg_ring (source-major), then page-aligned nranks slots of SLOT_BYTES and
 * nranks x nranks rings of RING_BYTES; sparse until written */
static size_t off_ranks(void)
{
    return 64;
}
static size_t off_rings(int n)
{
    return off_ranks() + (size_t)n * sizeof(struct seg_rank);
}
static size_t off_slots(int n)
{
    size_t o = off_rings(n) + (size_t)n * n * sizeof(struct seg_ring);
    return (o + 4095) & ~(size_t)4095;
}
static size_t off_ringdata(int n)
{
    return off_slots(n) + (size_t)n * SLOT_BYTES;
}
static size_t seg_size(int n)
{
    return off_ringdata(n) + (size_t)n * n * RING_BYTES;
}

/* ---- communicators ---------------------------------------------------- */

struct premul {
    int used;
    ncclDataType_t dt;
    ncclScalarResidence_t res;
    unsigned char value[8]; /* ncclScalarHostImmediate */
    const void *ptr;        /* ncclScalarDevice: read at each collective */
};

struct ncclComm {
    uint32_t magic;
    int rank, nranks, dev;
    unsigned char key[KEY_BYTES];
    unsigned char *base; /* the mapped segment */
    size_t maplen;
    uint64_t ops; /* collectives done: the next one is op number ops */
    struct premul premul[MAX_PREMUL];
};

struct ncclWindow_vidmem {
    uint32_t magic;
    void *buff;
    size_t size;
    int flags;
};

#define REG_MAGIC 0x72656721u
#define WIN_MAGIC 0x77696e21u

struct reg_token {
    uint32_t magic;
    void *buff;
    size_t size;
};

static struct seg_hdr *hdr(const struct ncclComm *c)
{
    return (struct seg_hdr *)c->base;
}
static struct seg_rank *seg_rank(const struct ncclComm *c, int r)
{
    return (struct seg_rank *)(c->base + off_ranks()) + r;
}
static struct seg_ring *seg_ring(const struct ncclComm *c, int src, int dst)
{
    return (struct seg_ring *)(c->base + off_rings(c->nranks)) + (size_t)src * c->nranks + dst;
}
static unsigned char *slot(const struct ncclComm *c, int r)
{
    return c->base + off_slots(c->nranks) + (size_t)r * SLOT_BYTES;
}
static unsigned char *ring_data(const struct ncclComm *c, int src, int dst)
{
    return c->base + off_ringdata(c->nranks) + ((size_t)src * c->nranks + dst) * RING_BYTES;
}

/* what this process handed out and has not taken back: a forged or
 * destroyed handle is refused, never dereferenced */
enum live_kind { L_COMM, L_MEM, L_REG, L_WIN };

static pthread_mutex_t live_lock_ = PTHREAD_MUTEX_INITIALIZER;
static struct live {
    const void *p;
    enum live_kind kind;
} *live_;
static size_t nlive_, caplive_;

static int live_add(const void *p, enum live_kind kind)
{
    int ok = 1;
    pthread_mutex_lock(&live_lock_);
    if (nlive_ == caplive_) {
        size_t cap = caplive_ ? 2 * caplive_ : 64;
        struct live *l = realloc(live_, cap * sizeof *l);
        if (l)
            live_ = l, caplive_ = cap;
        else
            ok = 0;
    }
    if (ok) live_[nlive_++] = (struct live){p, kind};
    pthread_mutex_unlock(&live_lock_);
    return ok;
}

/* remove: take it out as well */
static int live_find(const void *p, enum live_kind kind, int remove)
{
    int found = 0;
    pthread_mutex_lock(&live_lock_);
    for (size_t i = 0; i < nlive_; i++)
        if (live_[i].p == p && live_[i].kind == kind) {
            found = 1;
            if (remove) live_[i] = live_[--nlive_];
            break;
        }
    pthread_mutex_unlock(&live_lock_);
    return found;
}

static int valid_comm(const struct ncclComm *c)
{
    return c && live_find(c, L_COMM, 0);
}

/* ---- waiting ---------------------------------------------------------- */

struct waiter {
    struct timespec start;
    unsigned spins;
};

static void wait_begin(struct waiter *w)
{
    clock_gettime(CLOCK_MONOTONIC, &w->start);
    w->spins = 0;
}

/* 0 once TIMEOUT_S have passed since wait_begin; yields first, then sleeps
 * 50 us a time (ranks may share few cores) */
static int wait_nap(struct waiter *w)
{
    if (++w->spins < 200) {
        sched_yield();
        return 1;
    }
    struct timespec nap = {0, 50000}, now;
    nanosleep(&nap, NULL);
    if (w->spins % 64) return 1;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec - w->start.tv_sec < TIMEOUT_S;
}

/* until every rank's counter reached target */
static ncclResult_t wait_all(struct ncclComm *c, uint64_t target, const char *what)
{
    struct waiter w;
    wait_begin(&w);
    for (;;) {
        int r = 0;
        while (r < c->nranks && atomic_load_explicit(&seg_rank(c, r)->seq, memory_order_acquire) >= target)
            r++;
        if (r == c->nranks) return ncclSuccess;
        if (atomic_load(&hdr(c)->aborted))
            return fail(ncclRemoteError, "fake NCCL: %s: a rank aborted the communicator", what);
        if (!wait_nap(&w))
            return fail(ncclSystemError, "fake NCCL: %s: rank %d timed out (%d s) waiting for rank %d", what,
                        c->rank, TIMEOUT_S, r);
    }
}

static void announce(struct ncclComm *c, uint64_t v)
{
    atomic_store_explicit(&seg_rank(c, c->rank)->seq, v, memory_order_release);
}

/* ---- joining a segment ------------------------------------------------ */

static void seg_name(char *name, size_t len, const unsigned char key[KEY_BYTES])
{
    size_t n = (size_t)snprintf(name, len, "/fake-nccl-");
    for (int i = 0; i < KEY_BYTES && n + 2 < len; i++, n += 2) snprintf(name + n, len - n, "%02x", key[i]);
}

static void unlink_once(struct ncclComm *c)
{
    char name[64];
    if (atomic_exchange(&hdr(c)->unlinked, 1)) return;
    seg_name(name, sizeof name, c->key);
    shm_unlink(name);
}

/* leaving: the last one out unlinks the name if that has not happened yet */
static void seg_leave(struct ncclComm *c)
{
    if (atomic_fetch_sub(&hdr(c)->refs, 1) == 1) unlink_once(c);
    munmap(c->base, c->maplen);
    c->base = NULL;
}

static void comm_free(struct ncclComm *c)
{
    live_find(c, L_COMM, 1);
    seg_leave(c);
    c->magic = 0;
    free(c);
}

/* map the segment of key (creating it if first) and claim rank: the first
 * half of an init, which does not wait for the other ranks */
static ncclResult_t join(const unsigned char key[KEY_BYTES], int nranks, int rank, int dev, struct ncclComm **out)
{
    char name[64];
    size_t size = seg_size(nranks);
    struct waiter w;
    unsigned char *base = NULL;
    size_t maplen = 0;

    *out = NULL;
    seg_name(name, sizeof name, key);
    wait_begin(&w);
    while (!base) {
        int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd >= 0) {
            if (ftruncate(fd, (off_t)size) != 0) {
                int e = errno;
                close(fd);
                shm_unlink(name);
                return fail(ncclSystemError, "fake NCCL: ftruncate %s: %s", name, strerror(e));
            }
            base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            close(fd);
            if (base == MAP_FAILED) {
                shm_unlink(name);
                return fail(ncclSystemError, "fake NCCL: mmap %s: %s", name, strerror(errno));
            }
            maplen = size;
            struct seg_hdr *h = (struct seg_hdr *)base;
            h->nranks = nranks;
            h->size = size;
            atomic_store_explicit(&h->ready, SEG_READY, memory_order_release);
            break;
        }
        if (errno != EEXIST) return fail(ncclSystemError, "fake NCCL: shm_open %s: %s", name, strerror(errno));
        fd = shm_open(name, O_RDWR, 0);
        if (fd < 0) {
            /* unlinked in between (an init that failed): try again */
            if (errno != ENOENT) return fail(ncclSystemError, "fake NCCL: shm_open %s: %s", name, strerror(errno));
            if (!wait_nap(&w)) return fail(ncclSystemError, "fake NCCL: cannot open %s", name);
            continue;
        }
        /* the creator sizes it right after creating it */
        struct stat st = {0};
        while (fstat(fd, &st) == 0 && st.st_size == 0 && wait_nap(&w)) {
        }
        if (st.st_size == 0) {
            close(fd);
            return fail(ncclSystemError, "fake NCCL: %s never got its size", name);
        }
        maplen = (size_t)st.st_size;
        base = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
        if (base == MAP_FAILED) return fail(ncclSystemError, "fake NCCL: mmap %s: %s", name, strerror(errno));
        struct seg_hdr *h = (struct seg_hdr *)base;
        while (atomic_load_explicit(&h->ready, memory_order_acquire) != SEG_READY && wait_nap(&w)) {
        }
        if (atomic_load_explicit(&h->ready, memory_order_acquire) != SEG_READY) {
            munmap(base, maplen);
            return fail(ncclSystemError, "fake NCCL: %s never got ready", name);
        }
        if (h->nranks != nranks || h->size != size || maplen != size) {
            int other = h->nranks;
            munmap(base, maplen);
            return fail(ncclInvalidUsage, "fake NCCL: rank %d says nranks %d, another rank said %d", rank, nranks,
                        other);
        }
    }

    struct ncclComm *c = calloc(1, sizeof *c);
    if (!c) {
        munmap(base, maplen);
        return fail(ncclSystemError, "fake NCCL: out of memory");
    }
    c->magic = COMM_MAGIC;
    c->rank = rank;
    c->nranks = nranks;
    c->dev = dev;
    memcpy(c->key, key, KEY_BYTES);
    c->base = base;
    c->maplen = maplen;
    atomic_fetch_add(&hdr(c)->refs, 1);
    if (!live_add(c, L_COMM)) {
        seg_leave(c);
        free(c);
        return fail(ncclSystemError, "fake NCCL: out of memory");
    }
    if (atomic_exchange(&seg_rank(c, rank)->claimed, 1)) {
        comm_free(c);
        return fail(ncclInvalidUsage, "fake NCCL: rank %d joined twice", rank);
    }
    /* the name goes before anyone can see the comm complete (and, say, reuse the id) */
    if (atomic_fetch_add(&hdr(c)->arrived, 1) + 1 == nranks) unlink_once(c);
    atomic_fetch_add(&hdr(c)->joined, 1);
    *out = c;
    return ncclSuccess;
}

/* the second half: until all ranks have joined */
static ncclResult_t join_wait(struct ncclComm *c)
{
    struct waiter w;
    wait_begin(&w);
    while (atomic_load(&hdr(c)->joined) < c->nranks) {
        if (atomic_load(&hdr(c)->aborted)) return fail(ncclRemoteError, "fake NCCL: init: a rank aborted");
        if (!wait_nap(&w))
            return fail(ncclSystemError, "fake NCCL: init: rank %d of %d timed out (%d s) waiting for the others",
                        c->rank, c->nranks, TIMEOUT_S);
    }
    return ncclSuccess;
}

/* ---- data types and reductions ---------------------------------------- */

static size_t dt_size(ncclDataType_t dt)
{
    switch (dt) {
    case ncclInt8:
    case ncclUint8:
    case ncclFloat8e4m3:
    case ncclFloat8e5m2:
        return 1;
    case ncclFloat16:
    case ncclBfloat16:
        return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32:
        return 4;
    case ncclInt64:
    case ncclUint64:
    case ncclFloat64:
        return 8;
    default:
        return 0;
    }
}

static float bits_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float h2f(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0) return bits_float(sign | float_bits((float)m * 0x1p-24f)); /* zero, subnormal */
    if (e == 31) return bits_float(sign | 0x7f800000u | (m << 13));
    return bits_float(sign | ((e + 112) << 23) | (m << 13));
}

/* round to nearest even (F. Giesen's float_to_half_fast3_rtne) */
static uint16_t f2h(float fl)
{
    uint32_t u = float_bits(fl), sign = u & 0x80000000u;
    uint32_t o;
    u ^= sign;
    if (u >= (143u << 23)) { /* >= 65536, inf, nan */
        o = u > 0x7f800000u ? 0x7e00u : 0x7c00u;
    } else if (u < (113u << 23)) { /* subnormal or zero: the FPU rounds */
        const uint32_t magic = 126u << 23;
        o = float_bits(bits_float(u) + bits_float(magic)) - magic;
    } else {
        uint32_t odd = (u >> 13) & 1;
        u -= 112u << 23;
        u += 0xfffu + odd;
        o = u >> 13;
    }
    return (uint16_t)(o | (sign >> 16));
}

static float bf2f(uint16_t b)
{
    return bits_float((uint32_t)b << 16);
}

static uint16_t f2bf(float f)
{
    uint32_t u = float_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40); /* quiet nan */
    u += 0x7fffu + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}

enum { R_SUM, R_PROD, R_MAX, R_MIN };

/* a[i] = a[i] op b[i]; integer sums and products wrap (unsigned arithmetic) */
#define REDUCE_INT(T, UT)                                                          \
    do {                                                                           \
        T *a = acc;                                                                \
        const T *b = in;                                                           \
        switch (op) {                                                              \
        case R_SUM:                                                                \
            for (size_t i = 0; i < n; i++) a[i] = (T)((UT)a[i] + (UT)b[i]);        \
            break;                                                                 \
        case R_PROD:                                                               \
            for (size_t i = 0; i < n; i++) a[i] = (T)((UT)a[i] * (UT)b[i]);        \
            break;                                                                 \
        case R_MAX:                                                                \
            for (size_t i = 0; i < n; i++) a[i] = b[i] > a[i] ? b[i] : a[i];       \
            break;                                                                 \
        default:                                                                   \
            for (size_t i = 0; i < n; i++) a[i] = b[i] < a[i] ? b[i] : a[i];       \
        }                                                                          \
    } while (0)

#define REDUCE_FLT(T)                                                              \
    do {                                                                           \
        T *a = acc;                                                                \
        const T *b = in;                                                           \
        switch (op) {                                                              \
        case R_SUM:                                                                \
            for (size_t i = 0; i < n; i++) a[i] = a[i] + b[i];                     \
            break;                                                                 \
        case R_PROD:                                                               \
            for (size_t i = 0; i < n; i++) a[i] = a[i] * b[i];                     \
            break;                                                                 \
        case R_MAX:                                                                \
            for (size_t i = 0; i < n; i++) a[i] = b[i] > a[i] ? b[i] : a[i];       \
            break;                                                                 \
        default:                                                                   \
            for (size_t i = 0; i < n; i++) a[i] = b[i] < a[i] ? b[i] : a[i];       \
        }                                                                          \
    } while (0)

static float op_f(int op, float a, float b)
{
    switch (op) {
    case R_SUM:
        return a + b;
    case R_PROD:
        return a * b;
    case R_MAX:
        return b > a ? b : a;
    default:
        return b < a ? b : a;
    }
}

static void reduce_into(void *acc, const void *in, size_t n, ncclDataType_t dt, int op)
{
    switch (dt) {
    case ncclInt8:
        REDUCE_INT(int8_t, uint8_t);
        break;
    case ncclUint8:
        REDUCE_INT(uint8_t, uint8_t);
        break;
    case ncclInt32:
        REDUCE_INT(int32_t, uint32_t);
        break;
    case ncclUint32:
        REDUCE_INT(uint32_t, uint32_t);
        break;
    case ncclInt64:
        REDUCE_INT(int64_t, uint64_t);
        break;
    case ncclUint64:
        REDUCE_INT(uint64_t, uint64_t);
        break;
    case ncclFloat32:
        REDUCE_FLT(float);
        break;
    case ncclFloat64:
        REDUCE_FLT(double);
        break;
    case ncclFloat16: {
        uint16_t *a = acc;
        const uint16_t *b = in;
        for (size_t i = 0; i < n; i++) a[i] = f2h(op_f(op, h2f(a[i]), h2f(b[i])));
        break;
    }
    case ncclBfloat16: {
        uint16_t *a = acc;
        const uint16_t *b = in;
        for (size_t i = 0; i < n; i++) a[i] = f2bf(op_f(op, bf2f(a[i]), bf2f(b[i])));
        break;
    }
    default:
        break;
    }
}

/* ncclAvg's last step; integers divide (truncating) as NCCL's SumPostDiv */
static void divide(void *acc, size_t n, ncclDataType_t dt, int d)
{
#define DIV(T)                                                                     \
    do {                                                                           \
        T *a = acc;                                                                \
        for (size_t i = 0; i < n; i++) a[i] = (T)(a[i] / (T)d);                    \
    } while (0)
    switch (dt) {
    case ncclInt8:
        DIV(int8_t);
        break;
    case ncclUint8:
        DIV(uint8_t);
        break;
    case ncclInt32:
        DIV(int32_t);
        break;
    case ncclUint32:
        DIV(uint32_t);
        break;
    case ncclInt64:
        DIV(int64_t);
        break;
    case ncclUint64:
        DIV(uint64_t);
        break;
    case ncclFloat32:
        DIV(float);
        break;
    case ncclFloat64:
        DIV(double);
        break;
    case ncclFloat16: {
        uint16_t *a = acc;
        for (size_t i = 0; i < n; i++) a[i] = f2h(h2f(a[i]) / (float)d);
        break;
    }
    case ncclBfloat16: {
        uint16_t *a = acc;
        for (size_t i = 0; i < n; i++) a[i] = f2bf(bf2f(a[i]) / (float)d);
        break;
    }
    default:
        break;
    }
#undef DIV
}

/* dst[i] = src[i] * s (PreMulSum's local step), s of type dt */
static void premul_copy(void *dst, const void *src, size_t n, ncclDataType_t dt, const unsigned char *s)
{
#define PMI(T, UT)                                                                 \
    do {                                                                           \
        T *d = dst, v;                                                             \
        const T *x = src;                                                          \
        memcpy(&v, s, sizeof v);                                                   \
        for (size_t i = 0; i < n; i++) d[i] = (T)((UT)x[i] * (UT)v);               \
    } while (0)
#define PMF(T)                                                                     \
    do {                                                                           \
        T *d = dst, v;                                                             \
        const T *x = src;                                                          \
        memcpy(&v, s, sizeof v);                                                   \
        for (size_t i = 0; i < n; i++) d[i] = x[i] * v;                            \
    } while (0)
    switch (dt) {
    case ncclInt8:
        PMI(int8_t, uint8_t);
        break;
    case ncclUint8:
        PMI(uint8_t, uint8_t);
        break;
    case ncclInt32:
        PMI(int32_t, uint32_t);
        break;
    case ncclUint32:
        PMI(uint32_t, uint32_t);
        break;
    case ncclInt64:
        PMI(int64_t, uint64_t);
        break;
    case ncclUint64:
        PMI(uint64_t, uint64_t);
        break;
    case ncclFloat32:
        PMF(float);
        break;
    case ncclFloat64:
        PMF(double);
        break;
    case ncclFloat16:
    case ncclBfloat16: {
        uint16_t *d = dst, v;
        const uint16_t *x = src;
        memcpy(&v, s, sizeof v);
        int h = dt == ncclFloat16;
        float fv = h ? h2f(v) : bf2f(v);
        for (size_t i = 0; i < n; i++) d[i] = h ? f2h(h2f(x[i]) * fv) : f2bf(bf2f(x[i]) * fv);
        break;
    }
    default:
        break;
    }
#undef PMI
#undef PMF
}

static int reducible(ncclDataType_t dt)
{
    return dt_size(dt) && dt != ncclFloat8e4m3 && dt != ncclFloat8e5m2;
}

/* checks op for dt on comm c */
static ncclResult_t check_op(struct ncclComm *c, ncclRedOp_t op, ncclDataType_t dt)
{
    if (!reducible(dt)) return fail(ncclInvalidArgument, "fake NCCL: datatype %d cannot be reduced here", (int)dt);
    if ((int)op >= 0 && op < ncclNumOps) return ncclSuccess;
    int i = (int)op - ncclNumOps;
    if ((int)op < 0 || i >= MAX_PREMUL || !c->premul[i].used)
        return fail(ncclInvalidArgument, "fake NCCL: invalid reduction op %d", (int)op);
    if (c->premul[i].dt != dt)
        return fail(ncclInvalidArgument, "fake NCCL: op %d was created for datatype %d, used with %d", (int)op,
                    (int)c->premul[i].dt, (int)dt);
    return ncclSuccess;
}

/* ---- operations ------------------------------------------------------- */

enum kind { K_INIT, K_SEND, K_RECV, K_COLL };
enum coll { C_ALLREDUCE, C_REDUCE, C_BROADCAST, C_ALLGATHER, C_REDUCESCATTER, C_ALLTOALL, C_GATHER, C_SCATTER, C_SPLIT };

struct split_rec {
    int32_t color, key;
    unsigned char rnd[16];
};

struct op {
    enum kind kind;
    enum coll coll;
    struct ncclComm *comm;
    const void *sbuf;
    void *rbuf;
    size_t count; /* elements */
    ncclDataType_t dt;
    ncclRedOp_t op;
    int root, peer;
    struct premul pm; /* op's PreMulSum as it was at the call (it may be destroyed before ncclGroupEnd) */
    /* K_INIT, C_SPLIT */
    ncclComm_t *out;
    int nranks, rank, dev, color, key;
    unsigned char id[KEY_BYTES];
    struct ncclComm *joined;
    /* progress */
    int done, hdr_done;
    size_t moved;
};

/* ops of the calling thread's open group */
static _Thread_local struct group {
    int depth;
    ncclResult_t err; /* the first error of a call inside the group */
    struct op *ops;
    size_t n, cap;
} group_;

static ncclResult_t run_ops(struct op *ops, size_t n);

static ncclResult_t submit(const struct op *o)
{
    if (!group_.depth) {
        struct op copy = *o;
        return run_ops(&copy, 1);
    }
    if (group_.n == group_.cap) {
        size_t cap = group_.cap ? 2 * group_.cap : 16;
        struct op *p = realloc(group_.ops, cap * sizeof *p);
        if (!p) return group_.err = fail(ncclSystemError, "fake NCCL: out of memory");
        group_.ops = p;
        group_.cap = cap;
    }
    group_.ops[group_.n++] = *o;
    return ncclSuccess;
}

/* a call's argument error: inside a group it fails the group too, as NCCL */
static ncclResult_t arg_error(ncclResult_t r)
{
    if (group_.depth && group_.err == ncclSuccess) group_.err = r;
    return r;
}

/* -- send / receive: ring positions wrap at RING_BYTES */

static void ring_put(unsigned char *ring, uint64_t pos, const void *src, size_t n)
{
    size_t at = (size_t)(pos % RING_BYTES), first = n < RING_BYTES - at ? n : RING_BYTES - at;
    memcpy(ring + at, src, first);
    memcpy(ring, (const unsigned char *)src + first, n - first);
}

static void ring_get(const unsigned char *ring, uint64_t pos, void *dst, size_t n)
{
    size_t at = (size_t)(pos % RING_BYTES), first = n < RING_BYTES - at ? n : RING_BYTES - at;
    memcpy(dst, ring + at, first);
    memcpy((unsigned char *)dst + first, ring, n - first);
}

/* moves what fits; 1 if anything moved. A message: its length (8 bytes),
 * then its bytes */
static int p2p_progress(struct op *o, ncclResult_t *err)
{
    struct ncclComm *c = o->comm;
    size_t total = o->count * dt_size(o->dt);
    int moved = 0;
    if (o->kind == K_SEND) {
        struct seg_ring *r = seg_ring(c, c->rank, o->peer);
        unsigned char *data = ring_data(c, c->rank, o->peer);
        uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
        uint64_t room = RING_BYTES - (head - atomic_load_explicit(&r->tail, memory_order_acquire));
        if (!o->hdr_done) {
            if (room < 8) return 0;
            uint64_t len = total;
            ring_put(data, head, &len, 8);
            head += 8;
            room -= 8;
            o->hdr_done = moved = 1;
        }
        size_t n = total - o->moved < room ? total - o->moved : (size_t)room;
        if (n) {
            ring_put(data, head, (const unsigned char *)o->sbuf + o->moved, n);
            head += n;
            o->moved += n;
            moved = 1;
        }
        if (moved) atomic_store_explicit(&r->head, head, memory_order_release);
    } else {
        struct seg_ring *r = seg_ring(c, o->peer, c->rank);
        const unsigned char *data = ring_data(c, o->peer, c->rank);
        uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
        uint64_t avail = atomic_load_explicit(&r->head, memory_order_acquire) - tail;
        if (!o->hdr_done) {
            if (avail < 8) return 0;
            uint64_t len;
            ring_get(data, tail, &len, 8);
            if (len != total) {
                *err = fail(ncclInvalidUsage, "fake NCCL: rank %d receives %zu bytes from rank %d, which sent %llu",
                            c->rank, total, o->peer, (unsigned long long)len);
                return 0;
            }
            tail += 8;
            avail -= 8;
            o->hdr_done = moved = 1;
        }
        size_t n = total - o->moved < avail ? total - o->moved : (size_t)avail;
        if (n) {
            ring_get(data, tail, (unsigned char *)o->rbuf + o->moved, n);
            tail += n;
            o->moved += n;
            moved = 1;
        }
        if (moved) atomic_store_explicit(&r->tail, tail, memory_order_release);
    }
    if (o->hdr_done && o->moved == total) o->done = 1;
    return moved;
}

/* all sends and receives of a group together, so none waits on another;
 * those of one pair and direction in order */
static ncclResult_t run_p2p(struct op *ops, size_t n)
{
    struct waiter w;
    wait_begin(&w);
    for (;;) {
        int pending = 0, moved = 0;
        ncclResult_t err = ncclSuccess;
        for (size_t i = 0; i < n; i++) {
            struct op *o = &ops[i];
            if ((o->kind != K_SEND && o->kind != K_RECV) || o->done) continue;
            pending = 1;
            size_t j = 0;
            for (; j < i; j++) {
                struct op *p = &ops[j];
                if (p->kind == o->kind && !p->done && p->comm->base == o->comm->base &&
                    p->comm->rank == o->comm->rank && p->peer == o->peer)
                    break;
            }
            if (j < i) continue; /* an earlier message of the same pair first */
            moved |= p2p_progress(o, &err);
            if (err != ncclSuccess) return err;
        }
        if (!pending) return ncclSuccess;
        if (moved) {
            wait_begin(&w); /* the timeout counts from the last progress */
            continue;
        }
        for (size_t i = 0; i < n; i++)
            if ((ops[i].kind == K_SEND || ops[i].kind == K_RECV) && !ops[i].done &&
                atomic_load(&hdr(ops[i].comm)->aborted))
                return fail(ncclRemoteError, "fake NCCL: send/recv: a rank aborted the communicator");
        if (!wait_nap(&w)) {
            for (size_t i = 0; i < n; i++)
                if ((ops[i].kind == K_SEND || ops[i].kind == K_RECV) && !ops[i].done)
                    return fail(ncclSystemError, "fake NCCL: rank %d timed out (%d s) in a %s with peer %d",
                                ops[i].comm->rank, TIMEOUT_S, ops[i].kind == K_SEND ? "send" : "recv",
                                ops[i].peer);
        }
    }
}

/* -- collectives: contribute (phase 1), then compute the output (phase 2) */

static const char *coll_name(enum coll c)
{
    static const char *const names[] = {"AllReduce", "Reduce", "Broadcast", "AllGather", "ReduceScatter",
                                        "AlltoAll", "Gather", "Scatter", "CommSplit"};
    return names[c];
}

static ncclResult_t contribute(struct op *o)
{
    struct ncclComm *c = o->comm;
    uint64_t k = c->ops;
    ncclResult_t r = wait_all(c, 2 * k, coll_name(o->coll)); /* all done reading the last op's slots */
    if (r != ncclSuccess) return r;
    unsigned char *mine = slot(c, c->rank);
    size_t bytes = o->count * dt_size(o->dt);
    switch (o->coll) {
    case C_ALLREDUCE:
    case C_REDUCE:
    case C_REDUCESCATTER: {
        size_t n = o->coll == C_REDUCESCATTER ? o->count * (size_t)c->nranks : o->count;
        if ((int)o->op >= ncclNumOps) {
            const struct premul *p = &o->pm;
            unsigned char s[8];
            memcpy(s, p->res == ncclScalarDevice ? p->ptr : p->value, dt_size(o->dt));
            premul_copy(mine, o->sbuf, n, o->dt, s);
        } else {
            memcpy(mine, o->sbuf, n * dt_size(o->dt));
        }
        break;
    }
    case C_BROADCAST:
        if (c->rank == o->root) memcpy(mine, o->sbuf, bytes);
        break;
    case C_ALLGATHER:
    case C_GATHER:
        memcpy(mine, o->sbuf, bytes);
        break;
    case C_ALLTOALL:
        memcpy(mine, o->sbuf, bytes * (size_t)c->nranks);
        break;
    case C_SCATTER:
        if (c->rank == o->root) memcpy(mine, o->sbuf, bytes * (size_t)c->nranks);
        break;
    case C_SPLIT: {
        struct split_rec rec = {o->color, o->key, {0}};
        if (c->rank == 0 && getrandom(rec.rnd, sizeof rec.rnd, 0) != (ssize_t)sizeof rec.rnd)
            return fail(ncclSystemError, "fake NCCL: getrandom: %s", strerror(errno));
        memcpy(mine, &rec, sizeof rec);
        break;
    }
    }
    announce(c, 2 * k + 1);
    return ncclSuccess;
}

static void reduce_all(struct op *o, void *dst, size_t off, size_t n)
{
    struct ncclComm *c = o->comm;
    size_t es = dt_size(o->dt);
    int op = (int)o->op >= ncclNumOps || o->op == ncclAvg ? R_SUM : (int)o->op;
    memcpy(dst, slot(c, 0) + off * es, n * es);
    for (int i = 1; i < c->nranks; i++) reduce_into(dst, slot(c, i) + off * es, n, o->dt, op);
    if (o->op == ncclAvg) divide(dst, n, o->dt, c->nranks);
}

static void split_result(struct op *o)
{
    struct ncclComm *c = o->comm;
    struct split_rec me, rec, r0;
    int below = 0, count = 0;
    memcpy(&me, slot(c, c->rank), sizeof me);
    memcpy(&r0, slot(c, 0), sizeof r0);
    for (int i = 0; i < c->nranks; i++) {
        memcpy(&rec, slot(c, i), sizeof rec);
        if (rec.color != me.color) continue;
        count++;
        if (rec.key < me.key || (rec.key == me.key && i < c->rank)) below++;
    }
    o->nranks = count;
    o->rank = below;
    o->dev = c->dev;
    /* the child's segment: rank 0's fresh random bytes and the color */
    memcpy(o->id, r0.rnd, sizeof r0.rnd);
    memcpy(o->id + sizeof r0.rnd, &me.color, sizeof me.color);
}

static ncclResult_t finish(struct op *o)
{
    struct ncclComm *c = o->comm;
    uint64_t k = c->ops;
    ncclResult_t r = wait_all(c, 2 * k + 1, coll_name(o->coll)); /* all contributed */
    if (r != ncclSuccess) return r;
    size_t bytes = o->count * dt_size(o->dt);
    unsigned char *out = o->rbuf;
    switch (o->coll) {
    case C_ALLREDUCE:
        reduce_all(o, out, 0, o->count);
        break;
    case C_REDUCE:
        if (c->rank == o->root) reduce_all(o, out, 0, o->count);
        break;
    case C_REDUCESCATTER:
        reduce_all(o, out, (size_t)c->rank * o->count, o->count);
        break;
    case C_BROADCAST:
        memcpy(out, slot(c, o->root), bytes);
        break;
    case C_ALLGATHER:
        for (int i = 0; i < c->nranks; i++) memcpy(out + (size_t)i * bytes, slot(c, i), bytes);
        break;
    case C_GATHER:
        if (c->rank == o->root)
            for (int i = 0; i < c->nranks; i++) memcpy(out + (size_t)i * bytes, slot(c, i), bytes);
        break;
    case C_ALLTOALL:
        for (int i = 0; i < c->nranks; i++) memcpy(out + (size_t)i * bytes, slot(c, i) + (size_t)c->rank * bytes, bytes);
        break;
    case C_SCATTER:
        memcpy(out, slot(c, o->root) + (size_t)c->rank * bytes, bytes);
        break;
    case C_SPLIT:
        split_result(o);
        break;
    }
    announce(c, 2 * k + 2);
    c->ops = k + 1;
    o->done = 1;
    return ncclSuccess;
}

/* rounds of at most one collective per communicator object (a comm's in
 * call order): all contributions of a round before any wait, so one process
 * driving several ranks (ncclCommInitAll) does not wait on itself */
static ncclResult_t run_colls(struct op *ops, size_t n)
{
    struct op **round = malloc((n ? n : 1) * sizeof *round);
    ncclResult_t r = ncclSuccess;
    if (!round) return fail(ncclSystemError, "fake NCCL: out of memory");
    for (;;) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            struct op *o = &ops[i];
            if (o->kind != K_COLL || o->done) continue;
            size_t j = 0;
            while (j < m && round[j]->comm != o->comm) j++;
            if (j == m) round[m++] = o;
        }
        if (!m) break;
        for (size_t j = 0; j < m && r == ncclSuccess; j++) r = contribute(round[j]);
        for (size_t j = 0; j < m && r == ncclSuccess; j++) r = finish(round[j]);
        if (r != ncclSuccess) break;
    }
    free(round);
    return r;
}

/* inits: all joins first, then the waits, so several ranks of one process
 * (ncclCommInitAll, a group) can meet */
static int init_of(const struct op *o, int split)
{
    return split ? o->kind == K_COLL && o->coll == C_SPLIT : o->kind == K_INIT;
}

static ncclResult_t run_inits(struct op *ops, size_t n, int split)
{
    ncclResult_t r = ncclSuccess;
    for (size_t i = 0; i < n; i++) {
        struct op *o = &ops[i];
        o->joined = NULL;
        /* a split joins where it finished and has a color */
        if (!init_of(o, split) || (split && (!o->done || o->color == NCCL_SPLIT_NOCOLOR))) continue;
        if (r == ncclSuccess) r = join(o->id, o->nranks, o->rank, o->dev, &o->joined);
    }
    for (size_t i = 0; i < n; i++)
        if (init_of(&ops[i], split) && ops[i].joined && r == ncclSuccess) r = join_wait(ops[i].joined);
    for (size_t i = 0; i < n; i++) {
        struct op *o = &ops[i];
        if (!init_of(o, split)) continue;
        if (o->joined && r != ncclSuccess) {
            comm_free(o->joined);
            o->joined = NULL;
        }
        *o->out = o->joined;
    }
    return r;
}

static ncclResult_t run_ops(struct op *ops, size_t n)
{
    ncclResult_t r = run_inits(ops, n, 0);
    if (r == ncclSuccess) r = run_p2p(ops, n);
    if (r == ncclSuccess) r = run_colls(ops, n);
    ncclResult_t r2 = run_inits(ops, n, 1); /* always: sets the split's *newcomm */
    return r != ncclSuccess ? r : r2;
}

/* ---- API: versions, ids, errors --------------------------------------- */

FAKE ncclResult_t ncclGetVersion(int *version)
{
    if (!version) return fail(ncclInvalidArgument, "fake NCCL: ncclGetVersion: version is NULL");
    *version = NCCL_VERSION_CODE;
    return ncclSuccess;
}

FAKE ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
    if (!id) return fail(ncclInvalidArgument, "fake NCCL: ncclGetUniqueId: uniqueId is NULL");
    memset(id, 0, sizeof *id);
    memcpy(id->internal, ID_MAGIC, ID_MAGIC_LEN);
    if (getrandom(id->internal + ID_MAGIC_LEN, 16, 0) != 16)
        return fail(ncclSystemError, "fake NCCL: getrandom: %s", strerror(errno));
    return ncclSuccess;
}

FAKE const char *ncclGetErrorString(ncclResult_t r)
{
    switch (r) {
    case ncclSuccess:
        return "no error";
    case ncclUnhandledCudaError:
        return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError:
        return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError:
        return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument:
        return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage:
        return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError:
        return "remote process exited or there was a network error";
    case ncclInProgress:
        return "NCCL operation in progress";
    default:
        return "unknown result code";
    }
}

FAKE const char *ncclGetLastError(ncclComm_t comm)
{
    (void)comm;
    return last_error_;
}

/* deprecated, declared by nccl.h: nothing to reload */
FAKE void ncclResetDebugInit(void)
{
}

/* ---- API: communicators ----------------------------------------------- */

static ncclResult_t check_config(const ncclConfig_t *config)
{
    if (config && config->magic != 0xcafebeef)
        return fail(ncclInvalidArgument, "fake NCCL: config not initialized with NCCL_CONFIG_INITIALIZER");
    return ncclSuccess;
}

static ncclResult_t init_rank(ncclComm_t *comm, int nranks, const ncclUniqueId *id, int rank, ncclConfig_t *config)
{
    if (!comm) return arg_error(fail(ncclInvalidArgument, "fake NCCL: comm is NULL"));
    if (nranks < 1 || nranks > MAX_RANKS)
        return arg_error(fail(ncclInvalidArgument, "fake NCCL: nranks %d (the fake takes 1 to %d)", nranks, MAX_RANKS));
    if (rank < 0 || rank >= nranks)
        return arg_error(fail(ncclInvalidArgument, "fake NCCL: rank %d not in [0, %d)", rank, nranks));
    if (check_config(config) != ncclSuccess) return arg_error(ncclInvalidArgument);
    if (memcmp(id->internal, ID_MAGIC, ID_MAGIC_LEN))
        return arg_error(fail(ncclInvalidArgument, "fake NCCL: not a unique id of ncclGetUniqueId"));
    struct op o = {.kind = K_INIT, .out = comm, .nranks = nranks, .rank = rank};
    memcpy(o.id, id->internal + ID_MAGIC_LEN, KEY_BYTES);
    if (cudaGetDevice(&o.dev) != cudaSuccess) o.dev = 0;
    /* as NCCL_DEBUG=INFO makes NCCL print to stdout: what of the tuning
       environment this process sees (tests/nccl: the application's, applied
       to its session process when forwarded) */
    const char *dbg = getenv("NCCL_DEBUG");
    if (dbg && strcasecmp(dbg, "INFO") == 0) {
        const char *algo = getenv("NCCL_ALGO"), *net = getenv("NCCL_NET_PLUGIN");
        printf("fake NCCL INFO rank %d: NCCL_ALGO %s, NCCL_NET_PLUGIN %s\n", rank, algo ? algo : "unset",
               net ? net : "unset");
        fflush(stdout);
    }
    *comm = NULL;
    return submit(&o);
}

FAKE ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank)
{
    return init_rank(comm, nranks, &commId, rank, NULL);
}

FAKE ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank,
                                         ncclConfig_t *config)
{
    return init_rank(comm, nranks, &commId, rank, config);
}

FAKE ncclResult_t ncclCommInitRankScalable(ncclComm_t *newcomm, int nranks, int myrank, int nId,
                                           ncclUniqueId *commIds, ncclConfig_t *config)
{
    if (nId < 1 || !commIds)
        return arg_error(fail(ncclInvalidArgument, "fake NCCL: ncclCommInitRankScalable: nId %d, commIds %p", nId,
                              (void *)commIds));
    return init_rank(newcomm, nranks, &commIds[0], myrank, config);
}

FAKE ncclResult_t ncclCommInitAll(ncclComm_t *comm, int ndev, const int *devlist)
{
    if (!comm) return fail(ncclInvalidArgument, "fake NCCL: comm is NULL");
    if (ndev < 1 || ndev > MAX_RANKS)
        return fail(ncclInvalidArgument, "fake NCCL: ndev %d (the fake takes 1 to %d)", ndev, MAX_RANKS);
    ncclUniqueId id;
    ncclResult_t r = ncclGetUniqueId(&id);
    if (r != ncclSuccess) return r;
    struct op *ops = calloc((size_t)ndev, sizeof *ops);
    if (!ops) return fail(ncclSystemError, "fake NCCL: out of memory");
    for (int i = 0; i < ndev; i++) {
        ops[i].kind = K_INIT;
        ops[i].out = &comm[i];
        ops[i].nranks = ndev;
        ops[i].rank = i;
        ops[i].dev = devlist ? devlist[i] : i;
        memcpy(ops[i].id, id.internal + ID_MAGIC_LEN, KEY_BYTES);
    }
    r = run_inits(ops, (size_t)ndev, 0);
    free(ops);
    return r;
}

#define CHECK_COMM(c)                                                                   \
    do {                                                                                \
        if (!valid_comm(c)) return fail(ncclInvalidArgument, "fake NCCL: invalid communicator"); \
    } while (0)

FAKE ncclResult_t ncclCommFinalize(ncclComm_t comm)
{
    CHECK_COMM(comm);
    return ncclSuccess; /* every operation has completed already */
}

FAKE ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
    CHECK_COMM(comm);
    comm_free(comm);
    return ncclSuccess;
}

FAKE ncclResult_t ncclCommAbort(ncclComm_t comm)
{
    if (!comm) return ncclSuccess;
    CHECK_COMM(comm);
    atomic_store(&hdr(comm)->aborted, 1); /* ranks still waiting stop with ncclRemoteError */
    comm_free(comm);
    return ncclSuccess;
}

FAKE ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags)
{
    (void)revokeFlags;
    CHECK_COMM(comm);
    return fail(ncclInvalidUsage, "fake NCCL: ncclCommRevoke is not implemented by the fake");
}

FAKE ncclResult_t ncclCommShrink(ncclComm_t comm, int *excludeRanksList, int excludeRanksCount, ncclComm_t *newcomm,
                                 ncclConfig_t *config, int shrinkFlags)
{
    (void)excludeRanksList, (void)excludeRanksCount, (void)newcomm, (void)config, (void)shrinkFlags;
    CHECK_COMM(comm);
    return fail(ncclInvalidUsage, "fake NCCL: ncclCommShrink is not implemented by the fake");
}

FAKE ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm, ncclConfig_t *config)
{
    if (!valid_comm(comm)) return arg_error(fail(ncclInvalidArgument, "fake NCCL: ncclCommSplit: invalid communicator"));
    if (!newcomm) return arg_error(fail(ncclInvalidArgument, "fake NCCL: ncclCommSplit: newcomm is NULL"));
    if (color < 0 && color != NCCL_SPLIT_NOCOLOR)
        return arg_error(fail(ncclInvalidArgument, "fake NCCL: ncclCommSplit: color %d", color));
    if (check_config(config) != ncclSuccess) return arg_error(ncclInvalidArgument);
    *newcomm = NULL;
    struct op o = {.kind = K_COLL, .coll = C_SPLIT, .comm = comm, .out = newcomm, .color = color, .key = key};
    return submit(&o);
}

FAKE ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError)
{
    CHECK_COMM(comm);
    if (!asyncError) return fail(ncclInvalidArgument, "fake NCCL: asyncError is NULL");
    *asyncError = ncclSuccess;
    return ncclSuccess;
}

FAKE ncclResult_t ncclCommCount(const ncclComm_t comm, int *count)
{
    CHECK_COMM(comm);
    if (!count) return fail(ncclInvalidArgument, "fake NCCL: count is NULL");
    *count = comm->nranks;
    return ncclSuccess;
}

FAKE ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int *device)
{
    CHECK_COMM(comm);
    if (!device) return fail(ncclInvalidArgument, "fake NCCL: device is NULL");
    *device = comm->dev;
    return ncclSuccess;
}

FAKE ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank)
{
    CHECK_COMM(comm);
    if (!rank) return fail(ncclInvalidArgument, "fake NCCL: rank is NULL");
    *rank = comm->rank;
    return ncclSuccess;
}

/* ---- API: memory, registration ---------------------------------------- */

FAKE ncclResult_t ncclMemAlloc(void **ptr, size_t size)
{
    if (!ptr) return fail(ncclInvalidArgument, "fake NCCL: ncclMemAlloc: ptr is NULL");
    if (cudaMalloc(ptr, size) != cudaSuccess) return fail(ncclUnhandledCudaError, "fake NCCL: cudaMalloc failed");
    if (!live_add(*ptr, L_MEM)) {
        cudaFree(*ptr);
        *ptr = NULL;
        return fail(ncclSystemError, "fake NCCL: out of memory");
    }
    return ncclSuccess;
}

FAKE ncclResult_t ncclMemFree(void *ptr)
{
    if (!ptr || !live_find(ptr, L_MEM, 1))
        return fail(ncclInvalidArgument, "fake NCCL: ncclMemFree: %p is not from ncclMemAlloc", ptr);
    if (cudaFree(ptr) != cudaSuccess) return fail(ncclUnhandledCudaError, "fake NCCL: cudaFree failed");
    return ncclSuccess;
}

FAKE ncclResult_t ncclCommRegister(const ncclComm_t comm, void *buff, size_t size, void **handle)
{
    CHECK_COMM(comm);
    if (!handle) return fail(ncclInvalidArgument, "fake NCCL: ncclCommRegister: handle is NULL");
    struct reg_token *t = malloc(sizeof *t);
    if (!t) return fail(ncclSystemError, "fake NCCL: out of memory");
    *t = (struct reg_token){REG_MAGIC, buff, size};
    if (!live_add(t, L_REG)) {
        free(t);
        return fail(ncclSystemError, "fake NCCL: out of memory");
    }
    *handle = t;
    return ncclSuccess;
}

FAKE ncclResult_t ncclCommDeregister(const ncclComm_t comm, void *handle)
{
    struct reg_token *t = handle;
    CHECK_COMM(comm);
    if (!t || !live_find(t, L_REG, 1)) return fail(ncclInvalidArgument, "fake NCCL: ncclCommDeregister: invalid handle");
    t->magic = 0;
    free(t);
    return ncclSuccess;
}

FAKE ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void *buff, size_t size, ncclWindow_t *win, int winFlags)
{
    CHECK_COMM(comm);
    if (!win) return fail(ncclInvalidArgument, "fake NCCL: ncclCommWindowRegister: win is NULL");
    struct ncclWindow_vidmem *w = malloc(sizeof *w);
    if (!w) return fail(ncclSystemError, "fake NCCL: out of memory");
    *w = (struct ncclWindow_vidmem){WIN_MAGIC, buff, size, winFlags};
    if (!live_add(w, L_WIN)) {
        free(w);
        return fail(ncclSystemError, "fake NCCL: out of memory");
    }
    *win = w;
    return ncclSuccess;
}

FAKE ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win)
{
    CHECK_COMM(comm);
    if (!win || !live_find(win, L_WIN, 1))
        return fail(ncclInvalidArgument, "fake NCCL: ncclCommWindowDeregister: invalid window");
    win->magic = 0;
    free(win);
    return ncclSuccess;
}

/* ---- API: reduction ops ----------------------------------------------- */

FAKE ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t *op, void *scalar, ncclDataType_t datatype,
                                           ncclScalarResidence_t residence, ncclComm_t comm)
{
    CHECK_COMM(comm);
    if (!op || !scalar) return fail(ncclInvalidArgument, "fake NCCL: ncclRedOpCreatePreMulSum: op or scalar NULL");
    if (!reducible(datatype)) return fail(ncclInvalidArgument, "fake NCCL: datatype %d", (int)datatype);
    if (residence != ncclScalarDevice && residence != ncclScalarHostImmediate)
        return fail(ncclInvalidArgument, "fake NCCL: residence %d", (int)residence);
    int i = 0;
    while (i < MAX_PREMUL && comm->premul[i].used) i++;
    if (i == MAX_PREMUL) return fail(ncclInvalidUsage, "fake NCCL: more than %d PreMulSum ops", MAX_PREMUL);
    struct premul *p = &comm->premul[i];
    memset(p, 0, sizeof *p);
    p->used = 1;
    p->dt = datatype;
    p->res = residence;
    if (residence == ncclScalarHostImmediate)
        memcpy(p->value, scalar, dt_size(datatype));
    else
        p->ptr = scalar; /* "device" memory is the process's: read at each collective */
    *op = (ncclRedOp_t)(ncclNumOps + i);
    return ncclSuccess;
}

FAKE ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm)
{
    CHECK_COMM(comm);
    int i = (int)op - ncclNumOps;
    if ((int)op < ncclNumOps || i >= MAX_PREMUL || !comm->premul[i].used)
        return fail(ncclInvalidArgument, "fake NCCL: ncclRedOpDestroy: op %d was not created on this comm", (int)op);
    comm->premul[i].used = 0;
    return ncclSuccess;
}

/* ---- API: collectives, send/receive ----------------------------------- */

/* common checks; per = elements one rank contributes (limit SLOT_BYTES) */
static ncclResult_t check_coll(const char *name, struct ncclComm *c, ncclDataType_t dt, size_t per, int root)
{
    if (!valid_comm(c)) return arg_error(fail(ncclInvalidArgument, "fake NCCL: %s: invalid communicator", name));
    size_t es = dt_size(dt);
    if (!es) return arg_error(fail(ncclInvalidArgument, "fake NCCL: %s: invalid datatype %d", name, (int)dt));
    if (per > SLOT_BYTES / es)
        return arg_error(fail(ncclInvalidArgument, "fake NCCL: %s: %zu elements of %zu bytes exceed the fake's %zu-byte limit",
                              name, per, es, SLOT_BYTES));
    if (root < 0 || root >= c->nranks)
        return arg_error(fail(ncclInvalidArgument, "fake NCCL: %s: root %d not in [0, %d)", name, root, c->nranks));
    return ncclSuccess;
}

static ncclResult_t null_buf(const char *name, const char *which)
{
    return arg_error(fail(ncclInvalidArgument, "fake NCCL: %s: %s is NULL", name, which));
}

/* count per rank for ReduceScatter, AlltoAll, Scatter: nranks * count must fit too */
static size_t times_nranks(struct ncclComm *c, size_t count)
{
    if (!valid_comm(c)) return count;
    return count > SIZE_MAX / (size_t)c->nranks ? SIZE_MAX : count * (size_t)c->nranks;
}

static ncclResult_t coll(enum coll which, const void *sbuf, void *rbuf, size_t count, ncclDataType_t dt,
                         ncclRedOp_t op, int root, struct ncclComm *c, size_t per, int reduces, int sneed, int rneed)
{
    const char *name = coll_name(which);
    ncclResult_t r = check_coll(name, c, dt, per, root);
    if (r != ncclSuccess) return r;
    if (reduces && (r = check_op(c, op, dt)) != ncclSuccess) return arg_error(r);
    if (!count) return ncclSuccess; /* every rank passes the same count: nothing to meet for */
    if (sneed && !sbuf) return null_buf(name, "sendbuff");
    if (rneed && !rbuf) return null_buf(name, "recvbuff");
    struct op o = {.kind = K_COLL, .coll = which, .comm = c, .sbuf = sbuf, .rbuf = rbuf, .count = count,
                   .dt = dt, .op = op, .root = root};
    if (reduces && (int)op >= ncclNumOps) o.pm = c->premul[op - ncclNumOps];
    return submit(&o);
}

FAKE ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                                ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)
{
    (void)stream;
    return coll(C_ALLREDUCE, sendbuff, recvbuff, count, datatype, op, 0, comm, count, 1, 1, 1);
}

FAKE ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                             ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream)
{
    (void)stream;
    int at_root = valid_comm(comm) && comm->rank == root;
    return coll(C_REDUCE, sendbuff, recvbuff, count, datatype, op, root, comm, count, 1, 1, at_root);
}

FAKE ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,
                                ncclComm_t comm, cudaStream_t stream)
{
    (void)stream;
    int at_root = valid_comm(comm) && comm->rank == root;
    return coll(C_BROADCAST, sendbuff, recvbuff, count, datatype, ncclSum, root, comm, count, 0, at_root, 1);
}

FAKE ncclResult_t ncclBcast(void *buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                            cudaStream_t stream)
{
    return ncclBroadcast(buff, buff, count, datatype, root, comm, stream);
}

FAKE ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount, ncclDataType_t datatype,
                                ncclComm_t comm, cudaStream_t stream)
{
    (void)stream;
    return coll(C_ALLGATHER, sendbuff, recvbuff, sendcount, datatype, ncclSum, 0, comm, sendcount, 0, 1, 1);
}

FAKE ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount, ncclDataType_t datatype,
                                    ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)
{
    (void)stream;
    return coll(C_REDUCESCATTER, sendbuff, recvbuff, recvcount, datatype, op, 0, comm, times_nranks(comm, recvcount),
                1, 1, 1);
}

FAKE ncclResult_t ncclAlltoAll(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                               ncclComm_t comm, cudaStream_t stream)
{
    (void)stream;
    return coll(C_ALLTOALL, sendbuff, recvbuff, count, datatype, ncclSum, 0, comm, times_nranks(comm, count), 0, 1, 1);
}

FAKE ncclResult_t ncclGather(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,
                             ncclComm_t comm, cudaStream_t stream)
{
    (void)stream;
    int at_root = valid_comm(comm) && comm->rank == root;
    return coll(C_GATHER, sendbuff, recvbuff, count, datatype, ncclSum, root, comm, count, 0, 1, at_root);
}

FAKE ncclResult_t ncclScatter(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,
                              ncclComm_t comm, cudaStream_t stream)
{
    (void)stream;
    int at_root = valid_comm(comm) && comm->rank == root;
    return coll(C_SCATTER, sendbuff, recvbuff, count, datatype, ncclSum, root, comm, times_nranks(comm, count), 0,
                at_root, 1);
}

static ncclResult_t p2p(enum kind kind, const void *sbuf, void *rbuf, size_t count, ncclDataType_t dt, int peer,
                        struct ncclComm *c)
{
    const char *name = kind == K_SEND ? "Send" : "Recv";
    if (!valid_comm(c)) return arg_error(fail(ncclInvalidArgument, "fake NCCL: %s: invalid communicator", name));
    size_t es = dt_size(dt);
    if (!es) return arg_error(fail(ncclInvalidArgument, "fake NCCL: %s: invalid datatype %d", name, (int)dt));
    if (count > SIZE_MAX / es) return arg_error(fail(ncclInvalidArgument, "fake NCCL: %s: count %zu", name, count));
    if (peer < 0 || peer >= c->nranks)
        return arg_error(fail(ncclInvalidArgument, "fake NCCL: %s: peer %d not in [0, %d)", name, peer, c->nranks));
    if (count && !(kind == K_SEND ? sbuf : rbuf)) return null_buf(name, "buffer");
    struct op o = {.kind = kind, .comm = c, .sbuf = sbuf, .rbuf = rbuf, .count = count, .dt = dt, .peer = peer};
    return submit(&o);
}

FAKE ncclResult_t ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                           cudaStream_t stream)
{
    (void)stream;
    return p2p(K_SEND, sendbuff, NULL, count, datatype, peer, comm);
}

FAKE ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                           cudaStream_t stream)
{
    (void)stream;
    return p2p(K_RECV, NULL, recvbuff, count, datatype, peer, comm);
}

/* ---- API: groups ------------------------------------------------------ */

FAKE ncclResult_t ncclGroupStart(void)
{
    group_.depth++;
    return ncclSuccess;
}

FAKE ncclResult_t ncclGroupEnd(void)
{
    if (group_.depth < 1) return fail(ncclInvalidUsage, "fake NCCL: ncclGroupEnd without ncclGroupStart");
    if (--group_.depth) return ncclSuccess;
    struct op *ops = group_.ops;
    size_t n = group_.n;
    ncclResult_t r = group_.err;
    group_.ops = NULL;
    group_.n = group_.cap = 0;
    group_.err = ncclSuccess;
    if (r == ncclSuccess)
        r = run_ops(ops, n);
    else /* a call in the group failed: NCCL drops the whole group */
        for (size_t i = 0; i < n; i++)
            if (ops[i].out) *ops[i].out = NULL;
    free(ops);
    return r;
}

FAKE ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t *simInfo)
{
    if (!simInfo || simInfo->magic != 0x74685283)
        return fail(ncclInvalidArgument, "fake NCCL: simInfo not initialized with NCCL_SIM_INFO_INITIALIZER");
    simInfo->estimatedTime = 0.0f;
    return ncclGroupEnd();
}
