/* Wide copies (apigen_copy.h): a large memcpy split into parts that the
 * caller and a small pool of helper threads take one at a time from a
 * shared counter, so a helper that wakes late simply takes fewer parts.
 *
 * A job's fields are read by a helper only while it is counted in
 * `active`; the caller waits until every part is done and no helper is
 * inside the job before it returns, so the next job never meets a helper
 * still holding the last one's pointers. */
#define _GNU_SOURCE
#include "apigen_copy.h"
#include "rt_internal.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 16
#define PART ((size_t)512 << 10) /* bytes a thread takes at a time */
#define SPIN_NS 200000           /* a helper's or the caller's busy wait before it sleeps */

static struct {
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    pid_t pid;               /* the process whose helpers these are (fork) */
    unsigned helpers;        /* started */
    bool busy;               /* a job runs */
    _Atomic uint64_t gen;    /* job number, changed under mu: helpers wait for it */
    char *dst;               /* the job, written under mu */
    const char *src;
    size_t n, nparts;
    atomic_size_t next;      /* next part to take */
    atomic_size_t done_parts;
    atomic_uint active;      /* helpers inside the job: incremented under mu */
} pool = {.mu = PTHREAD_MUTEX_INITIALIZER,
          .go = PTHREAD_COND_INITIALIZER,
          .done = PTHREAD_COND_INITIALIZER};

/* An environment setting (K/M/G suffixes), clamped to [lo, hi]. */
static unsigned setting(const char *name, unsigned dflt, unsigned lo, unsigned hi)
{
    uint64_t v = rt_env_size(name, dflt);
    return v < lo ? lo : v > hi ? hi : (unsigned)v;
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Busy-waits up to SPIN_NS for done() to hold: waking a sleeping thread
 * costs tens of microseconds on a virtual machine, a part's copy about as
 * much, and consecutive chunks of a staged copy come that close. */
static bool spin_until(bool (*done)(const void *), const void *arg)
{
    uint64_t end = 0;
    for (unsigned i = 0;; i++) {
        if (done(arg)) return true;
        cpu_relax();
        if ((i & 63) == 63) {
            uint64_t t = now_ns();
            if (!end) end = t + SPIN_NS;
            else if (t > end) return false;
        }
    }
}

static bool gen_moved(const void *seen) { return atomic_load(&pool.gen) != *(const uint64_t *)seen; }

static bool job_finished(const void *arg)
{
    (void)arg;
    return atomic_load(&pool.active) == 0 && atomic_load(&pool.done_parts) == pool.nparts;
}

/* Takes parts of the current job until none is left; the parts it did. */
static size_t copy_parts(char *dst, const char *src, size_t n, size_t nparts)
{
    size_t did = 0, i;
    while ((i = atomic_fetch_add(&pool.next, 1)) < nparts) {
        size_t off = i * PART, len = n - off < PART ? n - off : PART;
        memcpy(dst + off, src + off, len);
        did++;
    }
    return did;
}

static void *helper_main(void *arg)
{
    (void)arg;
    uint64_t seen = 0;
    for (;;) {
        spin_until(gen_moved, &seen);
        pthread_mutex_lock(&pool.mu);
        while (atomic_load(&pool.gen) == seen) pthread_cond_wait(&pool.go, &pool.mu);
        seen = atomic_load(&pool.gen);
        if (!pool.busy) { /* the job ended before this helper came */
            pthread_mutex_unlock(&pool.mu);
            continue;
        }
        char *dst = pool.dst;
        const char *src = pool.src;
        size_t n = pool.n, nparts = pool.nparts;
        atomic_fetch_add(&pool.active, 1);
        pthread_mutex_unlock(&pool.mu);
        atomic_fetch_add(&pool.done_parts, copy_parts(dst, src, n, nparts));
        pthread_mutex_lock(&pool.mu); /* the caller may sleep on done: tell it under mu */
        atomic_fetch_sub(&pool.active, 1);
        if (job_finished(NULL)) pthread_cond_signal(&pool.done);
        pthread_mutex_unlock(&pool.mu);
    }
    return NULL;
}

/* Under mu: helpers for this process (a fork()ed child has none). */
static void start_helpers(unsigned want)
{
    if (pool.pid != getpid()) {
        pool.pid = getpid();
        pool.helpers = 0;
    }
    if (pool.helpers >= want) return;
    /* helpers never take the application's signals */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&at, 64 << 10);
    while (pool.helpers < want) {
        pthread_t t;
        if (pthread_create(&t, &at, helper_main, NULL) != 0) break;
        pthread_setname_np(t, "apigen-copy");
        pool.helpers++;
    }
    pthread_attr_destroy(&at);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void child_after_fork(void)
{
    /* the parent's helpers do not exist here; a job another thread ran
     * at the fork is not this process's */
    pthread_mutex_init(&pool.mu, NULL);
    pthread_cond_init(&pool.go, NULL);
    pthread_cond_init(&pool.done, NULL);
    pool.helpers = 0;
    pool.busy = false;
    atomic_store(&pool.active, 0);
    pool.pid = getpid();
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static unsigned threads, min_bytes;

/* Default: half the processors, at most 6 (six copy 45-67 GB/s on the GPU
 * machine, past what the device's DMA to pinned memory takes), from 1 MiB:
 * what the device just wrote is not in any cache, and one core copies it
 * at ~12 GB/s (1 MiB in ~85 us, where a sleeping helper wakes in ~50). */
static void init(void)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned dflt = ncpu >= 12 ? 6 : ncpu >= 2 ? (unsigned)ncpu / 2 : 1;
    min_bytes = setting("APIGEN_COPY_MIN", 1u << 20, 2 * PART, 1u << 30);
    threads = setting("APIGEN_COPY_THREADS", dflt, 1, MAX_THREADS);
    pthread_atfork(NULL, NULL, child_after_fork);
}

static void copy_wide(void *dst, const void *src, size_t n);

/* A multi-GB copy in slices of 256 MiB with a progress line a second
 * (progress.c); off, one branch. */
void apigen_copy_wide(void *dst, const void *src, size_t n)
{
    if (__builtin_expect(!rt_progress_wanted(n), 1)) {
        copy_wide(dst, src, n);
        return;
    }
    enum { SLICE = 256 << 20 };
    rt_progress p;
    rt_progress_begin(&p, "copying", n);
    for (size_t at = 0; at < n; at += SLICE) {
        size_t k = n - at < SLICE ? n - at : SLICE;
        copy_wide((char *)dst + at, (const char *)src + at, k);
        rt_progress_step(&p, k);
    }
    rt_progress_end(&p);
}

static void copy_wide(void *dst, const void *src, size_t n)
{
    pthread_once(&init_once, init);
    if (threads < 2 || n < min_bytes) {
        memcpy(dst, src, n);
        return;
    }
    pthread_mutex_lock(&pool.mu);
    if (pool.busy) { /* one wide copy at a time: this one goes alone */
        pthread_mutex_unlock(&pool.mu);
        memcpy(dst, src, n);
        return;
    }
    start_helpers(threads - 1);
    pool.busy = true;
    pool.dst = dst;
    pool.src = src;
    pool.n = n;
    pool.nparts = (n + PART - 1) / PART;
    atomic_store(&pool.next, 0);
    atomic_store(&pool.done_parts, 0);
    atomic_fetch_add(&pool.gen, 1);
    pthread_cond_broadcast(&pool.go);
    pthread_mutex_unlock(&pool.mu);

    atomic_fetch_add(&pool.done_parts, copy_parts(dst, src, n, (n + PART - 1) / PART));

    spin_until(job_finished, NULL);
    pthread_mutex_lock(&pool.mu);
    while (!job_finished(NULL)) pthread_cond_wait(&pool.done, &pool.mu);
    pool.busy = false;
    pthread_mutex_unlock(&pool.mu);
}
