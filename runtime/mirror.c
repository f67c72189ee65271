/* Host mirrors of remote memory (apigen_rt.h, "Mirrors"): memory the
 * server's library hands out at an address the guest's CPU must reach too
 * (memory both sides address, such as managed memory). The guest maps,
 * at the same virtual address, a mirror of it and tracks per page what the
 * application wrote since the mirror was last made equal to the server's
 * copy; the API's spec code moves dirty pages to the server before calls
 * that may read them (apigen_mirror_push) and pages the device may have
 * written back from it at synchronizations (apigen_mirror_pull).
 *
 * Tracking is mprotect + SIGSEGV: a clean page is read-only in the
 * application's view; its first write faults, the handler marks the page
 * dirty and makes it writable, and the write runs again. Chosen over a twin
 * copy compared at every push (no signal, but a push costs a scan of every
 * mirror at every launch) because a loop of launches then costs nothing per
 * launch once the host stopped writing. The memory is a memfd mapped twice:
 * the application's view (tracked) and an alias the runtime reads and
 * writes (pushes read it without faulting, pulls write it without making
 * the application's pages writable). The handler passes every fault that is
 * not a tracked write to the handler installed before it (or the default
 * action); a handler the application installs later must pass faults it
 * does not take to the one before it, as libraries that chain signals do
 * (checked at every push, said once in the log otherwise). Cost: one fault and one mprotect per page
 * first written after a push or pull. Limit: the kernel does not deliver a
 * fault for its own writes (read(2) into a clean page fails with EFAULT);
 * the pages of a new mirror start writable and dirty for that reason, so
 * input read before the first launch works. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "apigen_rt.h"
#include "rt_internal.h"

#define MIRROR_MAX 4096

typedef struct mirror {
    _Atomic(uintptr_t) base; /* 0: slot free or being set up */
    size_t size;             /* a multiple of the page size */
    uint8_t *alias;          /* the runtime's view of the same pages */
    _Atomic(uint8_t) *dirty; /* one per page */
    atomic_bool stale;       /* the device may have written it since the last pull */
} mirror;

static mirror mirrors_[MIRROR_MAX];
static atomic_size_t nslots_; /* slots ever used: the handler scans [0, nslots_) */
static atomic_size_t live_;   /* mirrors mapped now: the fast "none" test */
static pthread_mutex_t lock_ = PTHREAD_MUTEX_INITIALIZER;
static struct sigaction prev_;  /* the handler before ours */
static bool installed_;
static atomic_bool any_dirty_; /* a page was marked since the last push began */
static size_t page_;

static void on_segv(int sig, siginfo_t *si, void *uc);

/* The allocations a mirror's pages hold (an API's library packs small ones
 * into shared pages, and a large one seldom ends on a page boundary): only
 * their bytes move, since the server's library refuses a copy past an
 * allocation's end. Sorted by address, disjoint. elock_ is taken inside
 * lock_ (by runs), never the other way round; map_lock_ is outside both and
 * serializes apigen_mirror_map/unmap. */
typedef struct {
    uintptr_t p;
    size_t n;
} extent;
static extent *ext_;
static size_t next_, extcap_;
static pthread_mutex_t elock_ = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t map_lock_ = PTHREAD_MUTEX_INITIALIZER;

/* index of the first extent that ends after a (elock_ held) */
static size_t ext_first_after(uintptr_t a)
{
    size_t lo = 0, hi = next_;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ext_[mid].p + ext_[mid].n <= a) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static bool ext_overlaps(uintptr_t a, size_t n)
{
    pthread_mutex_lock(&elock_);
    size_t i = ext_first_after(a);
    bool hit = i < next_ && ext_[i].p < a + n;
    pthread_mutex_unlock(&elock_);
    return hit;
}

/* 0, or ENOMEM; an extent already there (the same allocation named twice) is kept */
static int ext_add(uintptr_t p, size_t n)
{
    pthread_mutex_lock(&elock_);
    size_t i = ext_first_after(p);
    int r = 0;
    if (i < next_ && ext_[i].p == p) {
        if (ext_[i].n < n) ext_[i].n = n;
        pthread_mutex_unlock(&elock_);
        return 0;
    }
    if (next_ == extcap_) {
        size_t nc = extcap_ ? 2 * extcap_ : 64;
        extent *ne = realloc(ext_, nc * sizeof *ne);
        if (ne) ext_ = ne, extcap_ = nc;
        else r = ENOMEM;
    }
    if (!r) {
        memmove(&ext_[i + 1], &ext_[i], (next_ - i) * sizeof *ext_);
        ext_[i] = (extent){p, n};
        next_++;
    }
    pthread_mutex_unlock(&elock_);
    return r;
}

/* Removes the extent at p (exact) or, with within, every extent inside
 * [p, p+n); answers what the removed ones spanned in *lo, *hi. */
static bool ext_remove(uintptr_t p, size_t n, bool within, uintptr_t *lo, uintptr_t *hi)
{
    bool any = false;
    pthread_mutex_lock(&elock_);
    for (size_t i = ext_first_after(p); i < next_;) {
        extent e = ext_[i];
        bool take = within ? e.p >= p && e.p + e.n <= p + n : e.p == p;
        if (!within && e.p > p) break;
        if (within && e.p >= p + n) break;
        if (!take) {
            i++;
            continue;
        }
        if (!any) *lo = e.p, *hi = e.p + e.n;
        if (e.p < *lo) *lo = e.p;
        if (e.p + e.n > *hi) *hi = e.p + e.n;
        any = true;
        memmove(&ext_[i], &ext_[i + 1], (next_ - i - 1) * sizeof *ext_);
        next_--;
        if (!within) break;
    }
    pthread_mutex_unlock(&elock_);
    return any;
}

/* A write fault on a clean tracked page: mark it, open it, resume. */
static bool track(uintptr_t a)
{
    size_t n = atomic_load_explicit(&nslots_, memory_order_acquire);
    for (size_t i = 0; i < n; i++) {
        uintptr_t b = atomic_load_explicit(&mirrors_[i].base, memory_order_acquire);
        if (!b || a < b || a - b >= mirrors_[i].size) continue;
        size_t pg = (a - b) / page_;
        atomic_store(&mirrors_[i].dirty[pg], 1);
        atomic_store(&any_dirty_, true);
        return mprotect((void *)(b + pg * page_), page_, PROT_READ | PROT_WRITE) == 0;
    }
    return false;
}

static void chain(int sig, siginfo_t *si, void *uc)
{
    if (prev_.sa_flags & SA_SIGINFO) {
        if (prev_.sa_sigaction) prev_.sa_sigaction(sig, si, uc);
        return;
    }
    if (prev_.sa_handler == SIG_DFL || prev_.sa_handler == SIG_IGN) {
        /* the fault runs again on return and takes the default action */
        signal(sig, SIG_DFL);
        return;
    }
    prev_.sa_handler(sig);
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;
    if (si && si->si_code == SEGV_ACCERR && track((uintptr_t)si->si_addr)) {
        errno = saved;
        return;
    }
    errno = saved;
    chain(sig, si, uc);
}

/* Ours in front of whatever is installed (lock_ held; once). A handler the
 * application installs later replaces ours: it is not put back in front
 * (a handler that passes faults it does not take to the one before it,
 * ours, would then bounce them between the two forever); writes to clean
 * pages reach ours through such a handler, and a handler that does not
 * pass them on sees them as its own faults (said once in the log). */
static int install(void)
{
    struct sigaction cur;
    if (sigaction(SIGSEGV, NULL, &cur) != 0) return errno;
    if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_segv) return 0;
    if (installed_) {
        static bool said;
        if (!said)
            apigen_log("mirror: the application installed its own SIGSEGV handler after the "
                       "runtime's: the first write to a page of managed memory after a launch "
                       "or synchronization reaches the runtime only if that handler passes "
                       "faults it does not handle to the one installed before it");
        said = true;
        return 0;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, NULL) != 0) return errno;
    prev_ = cur;
    installed_ = true;
    return 0;
}

size_t apigen_mirror_live(void)
{
    return atomic_load_explicit(&live_, memory_order_relaxed);
}

static int add_pages(uint64_t addr, uint64_t size, bool dirty_first)
{
    if (!page_) page_ = (size_t)sysconf(_SC_PAGESIZE);
    if (!addr || !size || addr % page_ || size > SIZE_MAX - page_ || addr + size < addr)
        return EINVAL;
    size_t len = ((size_t)size + page_ - 1) / page_ * page_;
    int fd = memfd_create("apigen-mirror", MFD_CLOEXEC);
    if (fd < 0) return errno;
    if (ftruncate(fd, (off_t)len) != 0) {
        int e = errno;
        close(fd);
        return e;
    }
    void *p = mmap((void *)(uintptr_t)addr, len, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
    if (p == MAP_FAILED) {
        int e = errno;
        close(fd);
        return e == EEXIST ? EEXIST : e;
    }
    if ((uintptr_t)p != addr) { /* a kernel before 4.17 took the flag as a hint */
        munmap(p, len);
        close(fd);
        return EEXIST;
    }
    void *alias = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    _Atomic(uint8_t) *dirty = calloc(len / page_, 1);
    if (alias == MAP_FAILED || !dirty) {
        if (alias != MAP_FAILED) munmap(alias, len);
        munmap(p, len);
        free(dirty);
        return ENOMEM;
    }
    for (size_t i = 0; i < len / page_; i++) atomic_init(&dirty[i], dirty_first ? 1 : 0);
    if (!dirty_first && mprotect(p, len, PROT_READ) != 0) {
        int e = errno;
        munmap(alias, len);
        munmap(p, len);
        free(dirty);
        return e;
    }
    pthread_mutex_lock(&lock_);
    if (dirty_first) atomic_store(&any_dirty_, true);
    int e = install();
    size_t n = atomic_load(&nslots_), slot = n;
    for (size_t i = 0; i < n; i++)
        if (!atomic_load(&mirrors_[i].base) && !mirrors_[i].dirty) {
            slot = i;
            break;
        }
    if (!e && slot == MIRROR_MAX) e = ENOSPC;
    if (e) {
        pthread_mutex_unlock(&lock_);
        munmap(alias, len);
        munmap(p, len);
        free(dirty);
        return e;
    }
    mirror *m = &mirrors_[slot];
    m->size = len;
    m->alias = alias;
    m->dirty = dirty;
    atomic_store(&m->stale, false);
    atomic_store_explicit(&m->base, (uintptr_t)addr, memory_order_release);
    if (slot == n) atomic_store_explicit(&nslots_, n + 1, memory_order_release);
    atomic_fetch_add(&live_, 1);
    pthread_mutex_unlock(&lock_);
    return 0;
}

int apigen_mirror_add(uint64_t addr, uint64_t size, bool dirty_first)
{
    pthread_mutex_lock(&map_lock_);
    int r = add_pages(addr, size, dirty_first);
    if (!r && (r = ext_add((uintptr_t)addr, (size_t)size)) != 0) (void)apigen_mirror_remove(addr);
    pthread_mutex_unlock(&map_lock_);
    return r;
}

static bool remove_pages(uint64_t addr);
static void drop_unused(uintptr_t lo, uintptr_t hi);

bool apigen_mirror_remove(uint64_t addr)
{
    uint64_t size = 0;
    if (!apigen_mirror_find(addr, NULL, &size)) return false;
    uintptr_t lo, hi;
    (void)ext_remove((uintptr_t)addr, (size_t)size, true, &lo, &hi);
    return remove_pages(addr);
}

/* The pages over [a, a+n) dirty and writable: a new allocation in pages a
 * mirror held already goes to the server at the next push, as its own
 * pages would. */
static int mark_dirty(uintptr_t a, size_t n)
{
    pthread_mutex_lock(&lock_);
    int r = 0;
    size_t ns = atomic_load(&nslots_);
    for (size_t i = 0; i < ns && !r; i++) {
        mirror *m = &mirrors_[i];
        uintptr_t b = atomic_load(&m->base);
        if (!b || a >= b + m->size || a + n <= b) continue;
        size_t p0 = (a > b ? a - b : 0) / page_;
        size_t p1 = ((a + n < b + m->size ? a + n - b : m->size) + page_ - 1) / page_;
        if (mprotect((void *)(b + p0 * page_), (p1 - p0) * page_, PROT_READ | PROT_WRITE) != 0) {
            r = errno ? errno : EFAULT;
            break;
        }
        for (size_t k = p0; k < p1; k++) atomic_store(&m->dirty[k], 1);
        atomic_store(&any_dirty_, true);
    }
    pthread_mutex_unlock(&lock_);
    return r;
}

int apigen_mirror_map(uint64_t addr, uint64_t size, bool clean)
{
    if (!page_) page_ = (size_t)sysconf(_SC_PAGESIZE);
    if (!addr || addr + (size ? size : 1) < addr) return EINVAL;
    if (!size) size = 1;
    uintptr_t pg = page_, end = ((uintptr_t)(addr + size) + pg - 1) & ~(pg - 1);
    int r = 0;
    pthread_mutex_lock(&map_lock_);
    for (uintptr_t a = (uintptr_t)addr & ~(pg - 1); a < end && !r;) {
        uint64_t b, sz;
        if (apigen_mirror_find(a, &b, &sz)) {
            a = (uintptr_t)(b + sz);
            continue;
        }
        uintptr_t e = a + pg;
        while (e < end && !apigen_mirror_find(e, NULL, NULL)) e += pg;
        r = add_pages(a, e - a, !clean);
        a = e;
    }
    if (!r) r = ext_add((uintptr_t)addr, (size_t)size);
    if (!r && !clean) r = mark_dirty((uintptr_t)addr, (size_t)size);
    if (r) { /* the allocation is not mirrored: the pages made for it go again */
        uintptr_t lo, hi;
        (void)ext_remove((uintptr_t)addr, 0, false, &lo, &hi);
        drop_unused((uintptr_t)addr, end);
    }
    pthread_mutex_unlock(&map_lock_);
    return r;
}

/* Mirrors over [lo, hi) that no allocation overlaps any more go (map_lock_ held). */
static void drop_unused(uintptr_t lo, uintptr_t hi)
{
    for (uintptr_t a = lo & ~(page_ - 1); a < hi;) {
        uint64_t b, sz;
        if (!apigen_mirror_find(a, &b, &sz)) {
            a += page_;
            continue;
        }
        if (!ext_overlaps((uintptr_t)b, (size_t)sz)) (void)remove_pages(b);
        a = (uintptr_t)(b + sz);
    }
}

void apigen_mirror_unmap(uint64_t addr)
{
    if (!page_) page_ = (size_t)sysconf(_SC_PAGESIZE);
    pthread_mutex_lock(&map_lock_);
    uintptr_t lo = (uintptr_t)addr, hi = lo + 1;
    (void)ext_remove((uintptr_t)addr, 0, false, &lo, &hi);
    drop_unused(lo, hi);
    pthread_mutex_unlock(&map_lock_);
}

static bool remove_pages(uint64_t addr)
{
    pthread_mutex_lock(&lock_);
    size_t n = atomic_load(&nslots_);
    for (size_t i = 0; i < n; i++) {
        mirror *m = &mirrors_[i];
        if (atomic_load(&m->base) != addr) continue;
        atomic_store_explicit(&m->base, 0, memory_order_release);
        munmap((void *)(uintptr_t)addr, m->size);
        munmap(m->alias, m->size);
        /* a handler can reach the array only for a fault inside the range
         * just unmapped: an access to freed memory, the application's bug */
        free(m->dirty);
        m->dirty = NULL;
        m->alias = NULL;
        atomic_fetch_sub(&live_, 1);
        pthread_mutex_unlock(&lock_);
        return true;
    }
    pthread_mutex_unlock(&lock_);
    return false;
}

bool apigen_mirror_find(uint64_t addr, uint64_t *base, uint64_t *size)
{
    if (!apigen_mirror_live()) return false;
    size_t n = atomic_load_explicit(&nslots_, memory_order_acquire);
    for (size_t i = 0; i < n; i++) {
        uintptr_t b = atomic_load_explicit(&mirrors_[i].base, memory_order_acquire);
        if (!b || addr < b || addr - b >= mirrors_[i].size) continue;
        if (base) *base = b;
        if (size) *size = mirrors_[i].size;
        return true;
    }
    return false;
}

void apigen_mirror_mark_stale(uint64_t addr, uint64_t len)
{
    if (!apigen_mirror_live()) return;
    size_t n = atomic_load_explicit(&nslots_, memory_order_acquire);
    for (size_t i = 0; i < n; i++) {
        uintptr_t b = atomic_load_explicit(&mirrors_[i].base, memory_order_acquire);
        if (!b) continue;
        if (len && (addr >= b + mirrors_[i].size || addr + len <= b)) continue;
        atomic_store(&mirrors_[i].stale, true);
    }
}

/* Runs [first, end) of pages of m whose dirty mark equals want, one call of
 * fn per allocation's part of a run (bytes of no allocation never move); dirty runs are made clean and read-only BEFORE fn reads
 * them, so a write during the copy faults and marks the page again. */
static int runs(mirror *m, uintptr_t b, bool want_dirty, apigen_mirror_io fn, void *user)
{
    size_t np = m->size / page_;
    for (size_t i = 0; i < np;) {
        if ((atomic_load(&m->dirty[i]) != 0) != want_dirty) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < np && (atomic_load(&m->dirty[j]) != 0) == want_dirty) j++;
        size_t off = i * page_, len = (j - i) * page_;
        if (want_dirty) {
            for (size_t k = i; k < j; k++) atomic_store(&m->dirty[k], 0);
            if (mprotect((void *)(b + off), len, PROT_READ) != 0) {
                for (size_t k = i; k < j; k++) atomic_store(&m->dirty[k], 1);
                return errno ? errno : EFAULT;
            }
        }
        int r = 0;
        uintptr_t lo = b + off, hi = lo + len;
        pthread_mutex_lock(&elock_);
        for (size_t k = ext_first_after(lo); k < next_ && ext_[k].p < hi && !r; k++) {
            uintptr_t s0 = ext_[k].p > lo ? ext_[k].p : lo;
            uintptr_t s1 = ext_[k].p + ext_[k].n < hi ? ext_[k].p + ext_[k].n : hi;
            r = fn(m->alias + (s0 - b), (uint64_t)s0, s1 - s0, user);
        }
        pthread_mutex_unlock(&elock_);
        if (r) {
            if (want_dirty) /* not on the server: dirty again (pages stay read-only: a write re-marks) */
                for (size_t k = i; k < j; k++) atomic_store(&m->dirty[k], 1);
            return r;
        }
        i = j;
    }
    return 0;
}

int apigen_mirror_push(apigen_mirror_io fn, void *user)
{
    if (!apigen_mirror_live()) return 0;
    pthread_mutex_lock(&lock_);
    (void)install();
    int r = 0;
    if (atomic_exchange(&any_dirty_, false)) {
        size_t n = atomic_load(&nslots_);
        for (size_t i = 0; i < n && !r; i++) {
            uintptr_t b = atomic_load(&mirrors_[i].base);
            if (b) r = runs(&mirrors_[i], b, true, fn, user);
        }
        if (r) atomic_store(&any_dirty_, true); /* what failed is still dirty */
    }
    pthread_mutex_unlock(&lock_);
    return r;
}

int apigen_mirror_pull(apigen_mirror_io fn, void *user, bool keep_stale)
{
    if (!apigen_mirror_live()) return 0;
    pthread_mutex_lock(&lock_);
    size_t n = atomic_load(&nslots_);
    int r = 0;
    for (size_t i = 0; i < n && !r; i++) {
        mirror *m = &mirrors_[i];
        uintptr_t b = atomic_load(&m->base);
        if (!b || !atomic_load(&m->stale)) continue;
        /* dirty pages keep what the host wrote: the device may not have
         * written a page the host could legally write meanwhile */
        r = runs(m, b, false, fn, user);
        if (!r && !keep_stale) atomic_store(&m->stale, false);
    }
    pthread_mutex_unlock(&lock_);
    return r;
}

bool apigen_mirror_any_stale(void)
{
    if (!apigen_mirror_live()) return false;
    size_t n = atomic_load_explicit(&nslots_, memory_order_acquire);
    for (size_t i = 0; i < n; i++)
        if (atomic_load(&mirrors_[i].base) && atomic_load(&mirrors_[i].stale)) return true;
    return false;
}

void apigen_mirror_clear_stale(void)
{
    if (!apigen_mirror_live()) return;
    size_t n = atomic_load_explicit(&nslots_, memory_order_acquire);
    for (size_t i = 0; i < n; i++) atomic_store(&mirrors_[i].stale, false);
}

/* ---- queues: which device work may still write mirrors ----------------------------- */
/* Queues (an API's streams) with work since their last synchronization
 * that may write mirrors. The stale marks are cleared only when none is
 * left, so a later synchronization of another queue still pulls what its
 * work wrote; a generation count keeps a clear from racing a new launch. */
#define QUEUE_MAX 64
static pthread_mutex_t qlock_ = PTHREAD_MUTEX_INITIALIZER;
static uint64_t queues_[QUEUE_MAX][2];
static unsigned nqueues_;
static bool qoverflow_; /* more than QUEUE_MAX: only a synchronization of all clears */
static uint64_t qgen_;

void apigen_mirror_queued(uint64_t queue, uint64_t owner, uint64_t addr, uint64_t len)
{
    if (!apigen_mirror_live()) return;
    if (len && !apigen_mirror_find(addr, NULL, NULL)) {
        /* a write that starts outside every mirror may still end inside one */
        bool hit = false;
        size_t n = atomic_load_explicit(&nslots_, memory_order_acquire);
        for (size_t i = 0; i < n && !hit; i++) {
            uintptr_t b = atomic_load(&mirrors_[i].base);
            hit = b && addr < b + mirrors_[i].size && b < addr + len;
        }
        if (!hit) return;
    }
    pthread_mutex_lock(&qlock_);
    apigen_mirror_mark_stale(addr, len);
    qgen_++;
    unsigned i = 0;
    while (i < nqueues_ && !(queues_[i][0] == queue && queues_[i][1] == owner)) i++;
    if (i == nqueues_) {
        if (nqueues_ < QUEUE_MAX) {
            queues_[nqueues_][0] = queue;
            queues_[nqueues_][1] = owner;
            nqueues_++;
        } else {
            qoverflow_ = true;
        }
    }
    pthread_mutex_unlock(&qlock_);
}

int apigen_mirror_synced(int scope, uint64_t queue, uint64_t owner, apigen_mirror_io fn, void *user)
{
    if (!apigen_mirror_live() || !apigen_mirror_any_stale()) return 0;
    pthread_mutex_lock(&qlock_);
    if (scope == APIGEN_SYNC_ALL) {
        nqueues_ = 0;
        qoverflow_ = false;
    } else if (scope == APIGEN_SYNC_QUEUE) {
        for (unsigned i = 0; i < nqueues_; i++)
            if (queues_[i][0] == queue && queues_[i][1] == owner) {
                nqueues_--;
                queues_[i][0] = queues_[nqueues_][0];
                queues_[i][1] = queues_[nqueues_][1];
                break;
            }
    }
    bool clear = scope != APIGEN_SYNC_POINT && !nqueues_ && !qoverflow_;
    uint64_t g = qgen_;
    pthread_mutex_unlock(&qlock_);
    int r = apigen_mirror_pull(fn, user, true);
    pthread_mutex_lock(&qlock_);
    if (!r && clear && g == qgen_) apigen_mirror_clear_stale();
    pthread_mutex_unlock(&qlock_);
    return r;
}

/* ---- the other APIs of the owners' family ----------------------------------------- */
/* APIs whose spec code moves mirrors at the right calls (apigen_mirror_own);
 * any other API of their family (a library whose calls launch kernels on
 * device memory: they may read and write mirrored memory) gets the
 * conservative treatment at every call (apigen_mirror_foreign_call). */
#define OWNERS_MAX 4
static const apigen_api *owners_[OWNERS_MAX];
static apigen_mirror_io owner_push_[OWNERS_MAX];
static atomic_uint nowners_;
static _Thread_local bool in_foreign_;

void apigen_mirror_own(const apigen_api *api, apigen_mirror_io push)
{
    pthread_mutex_lock(&lock_);
    unsigned n = atomic_load(&nowners_);
    bool known = false;
    for (unsigned i = 0; i < n; i++) known |= owners_[i] == api;
    if (!known && n < OWNERS_MAX) {
        owners_[n] = api;
        owner_push_[n] = push;
        atomic_store(&nowners_, n + 1);
    }
    pthread_mutex_unlock(&lock_);
}

int rt_mirror_foreign_call(const apigen_api *api)
{
    unsigned n = atomic_load(&nowners_);
    if (in_foreign_ || !n) return 0;
    int fam = -1;
    for (unsigned i = 0; i < n; i++) {
        if (owners_[i] == api) return 0; /* it moves mirrors itself */
        if (fam < 0 && rt_same_family(owners_[i], api)) fam = (int)i;
    }
    if (fam < 0) return 0;
    in_foreign_ = true; /* the push's own copy is an owner's call; nothing nests anyway */
    int r = apigen_mirror_push(owner_push_[fam], NULL);
    in_foreign_ = false;
    /* device work on a stream this runtime cannot name: only a
     * synchronization of everything clears what it may have written */
    apigen_mirror_queued(~(uint64_t)0, 0, 0, 0);
    return r;
}
