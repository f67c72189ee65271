/* Host memory at its twin's address (apigen_rt.h, "Twins"). Without a
 * shared-memory arena (tcp://, ucx://) the server's device cannot reach the
 * application's pages; a twin stands for them at another address, and a
 * launch's parameters are translated to it. A pointer the program keeps in
 * device memory is not a parameter: natively, under unified addressing, the
 * host pointer of mapped pinned memory is its device pointer, and programs
 * store it in their device structures (a collectives library keeps the
 * address of its abort flag there; a kernel that waits long for a peer
 * reads it).
 * Mapping the host block at the address of the twin's own allocation makes
 * the two one address again: the device reads the twin there, the host its
 * pages, kept equal as every twin is. Where this process already has
 * something at that address the caller falls back to a twin elsewhere.
 * Small blocks (64 KiB or less) share slabs: one 2 MiB allocation mapped
 * once, handed out by pages, so that the stale blocks of one slab come
 * back in one copy at a synchronization (twin.c merges the reads of one
 * region) instead of one round trip each (a collectives library keeps a
 * dozen small mapped blocks). */
#define _GNU_SOURCE /* MAP_FIXED_NOREPLACE */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "apigen_rt.h"
#include "rt_internal.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000 /* Linux 4.17; older kernels take it as a hint */
#endif

#define SLAB_BYTES ((size_t)2 << 20)
#define SLAB_BLOCK_MAX ((size_t)64 << 10)

/* A slab: one allocation, its first SLAB_BYTES from a page boundary mapped
 * here at the same address, handed out by pages. */
typedef struct slab {
    uint64_t alloc;       /* the allocation (released once no block is left) */
    unsigned char *host;  /* its first page boundary, mapped here */
    size_t npages, nused;
    unsigned char *used;  /* per page: in a block */
    bool dead;            /* its allocation went with a device reset */
    const apigen_twin_alloc *ops;
    void *user;
    struct slab *next;
} slab;

/* the blocks placed, for apigen_twin_unplace (s: the slab holding it) */
typedef struct placed {
    void *host;
    size_t len;
    slab *s;
} placed;
static placed *placed_;
static size_t nplaced_, cap_;
static slab *slabs_;
static pthread_mutex_t lock_ = PTHREAD_MUTEX_INITIALIZER;

/* lock_ held */
static bool remember_locked(void *host, size_t len, slab *s)
{
    if (nplaced_ == cap_) {
        size_t nc = cap_ ? cap_ * 2 : 16;
        placed *np = realloc(placed_, nc * sizeof *np);
        if (!np) return false;
        placed_ = np, cap_ = nc;
    }
    placed_[nplaced_++] = (placed){host, len, s};
    return true;
}

static bool remember(void *host, size_t len)
{
    pthread_mutex_lock(&lock_);
    bool ok = remember_locked(host, len, NULL);
    pthread_mutex_unlock(&lock_);
    return ok;
}

static size_t page_size(void)
{
    long pg = sysconf(_SC_PAGESIZE);
    return pg > 0 ? (size_t)pg : 4096;
}

/* [at, at + len) mapped here, or NULL: something of this process is there
 * (or the kernel took the flag as a hint and chose elsewhere) */
static void *map_at(uint64_t at, size_t len)
{
    void *p = mmap((void *)(uintptr_t)at, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (p == MAP_FAILED) return NULL;
    if (p != (void *)(uintptr_t)at) {
        munmap(p, len);
        return NULL;
    }
    return p;
}

/* lock_ held: the first of k free pages in a live slab of these ops, taken */
static slab *take_pages(size_t k, const apigen_twin_alloc *ops, void *user, size_t *first)
{
    for (slab *s = slabs_; s; s = s->next) {
        if (s->dead || s->ops != ops || s->user != user || s->npages - s->nused < k) continue;
        for (size_t i = 0, run = 0; i < s->npages; i++) {
            run = s->used[i] ? 0 : run + 1;
            if (run == k) {
                *first = i + 1 - k;
                memset(s->used + *first, 1, k);
                s->nused += k;
                return s;
            }
        }
    }
    return NULL;
}

/* A new slab, listed; NULL with *err 0 where it cannot be mapped here or
 * made (the block is then placed alone) */
static slab *new_slab(const apigen_twin_alloc *ops, void *user, size_t pg, int *err)
{
    uint64_t dev = 0;
    slab *s = calloc(1, sizeof *s);
    if (s) s->used = calloc(SLAB_BYTES / pg, 1);
    if (!s || !s->used) {
        free(s);
        *err = APIGEN_TWIN_NO_MEMORY;
        return NULL;
    }
    if (ops->alloc(SLAB_BYTES + pg, &dev, user) == 0) {
        uint64_t at = (dev + pg - 1) / pg * pg;
        if ((s->host = map_at(at, SLAB_BYTES)) != NULL) {
            s->alloc = dev;
            s->npages = SLAB_BYTES / pg;
            s->ops = ops;
            s->user = user;
            return s;
        }
        ops->release(dev, user);
    }
    free(s->used);
    free(s);
    return NULL;
}

/* a block of len bytes (whole pages) of a slab; NULL with *err 0: none
 * could be made (the caller places the block alone) */
static void *place_in_slab(size_t size, size_t len, const apigen_twin_alloc *ops, void *user,
                           size_t pg, int *err)
{
    size_t first = 0;
    pthread_mutex_lock(&lock_);
    slab *s = take_pages(len / pg, ops, user, &first);
    pthread_mutex_unlock(&lock_);
    if (!s) {
        slab *fresh = new_slab(ops, user, pg, err);
        if (!fresh) return NULL;
        pthread_mutex_lock(&lock_);
        fresh->next = slabs_;
        slabs_ = fresh;
        s = take_pages(len / pg, ops, user, &first);
        pthread_mutex_unlock(&lock_);
        if (!s) return NULL;
    }
    unsigned char *p = s->host + first * pg;
    /* a reused page holds its last block's bytes, the device too: both zero,
     * as a fresh block's, so the twin starts equal */
    memset(p, 0, len);
    *err = ops->clear((uint64_t)(uintptr_t)p, len, user);
    pthread_mutex_lock(&lock_);
    if (!*err && !remember_locked(p, len, s)) *err = APIGEN_TWIN_NO_MEMORY;
    if (*err) { /* the pages go back (an emptied slab stays for the next block) */
        memset(s->used + first, 0, len / pg);
        s->nused -= len / pg;
    }
    pthread_mutex_unlock(&lock_);
    if (*err) return NULL;
    if (rt_twin_add_in(p, size, (uint64_t)(uintptr_t)p, 0, s->alloc, false) != 0) {
        (void)apigen_twin_unplace(p);
        *err = APIGEN_TWIN_NO_MEMORY;
        return NULL;
    }
    return p;
}

void *apigen_twin_place(size_t size, const apigen_twin_alloc *ops, void *user, int *err)
{
    size_t pg = page_size();
    uint64_t dev = 0;
    *err = 0;
    if (!size || size > SIZE_MAX - 2 * pg) return NULL;
    size_t len = (size + pg - 1) / pg * pg;
    if (len <= SLAB_BLOCK_MAX && SLAB_BYTES % pg == 0) {
        void *p = place_in_slab(size, len, ops, user, pg, err);
        if (p || *err) return p;
    }
    /* an allocation that starts on a page boundary, else one a page longer
     * that holds one */
    if ((*err = ops->alloc(len, &dev, user)) != 0) return NULL;
    if (dev % pg) {
        ops->release(dev, user);
        if ((*err = ops->alloc(len + pg, &dev, user)) != 0) return NULL;
    }
    uint64_t at = (dev + pg - 1) / pg * pg;
    void *p = map_at(at, len);
    if (p && !remember(p, len)) {
        munmap(p, len);
        *err = APIGEN_TWIN_NO_MEMORY;
        p = NULL;
    }
    /* fresh pages read zero: so does the twin, and its copy is equal */
    if (p && (*err = ops->clear(at, len, user)) == 0 && rt_twin_add_in(p, size, at, dev, dev, false) != 0)
        *err = APIGEN_TWIN_NO_MEMORY;
    if (!p || *err) {
        if (p) (void)apigen_twin_unplace(p);
        ops->release(dev, user);
        return NULL;
    }
    return p;
}

bool apigen_twin_unplace(void *host)
{
    size_t len = 0, pg = page_size();
    slab *s = NULL, *empty = NULL;
    pthread_mutex_lock(&lock_);
    for (size_t i = 0; i < nplaced_; i++)
        if (placed_[i].host == host) {
            len = placed_[i].len;
            s = placed_[i].s;
            placed_[i] = placed_[--nplaced_];
            break;
        }
    if (len && s) { /* its pages go back to the slab; an empty slab goes */
        memset(s->used + ((unsigned char *)host - s->host) / pg, 0, len / pg);
        s->nused -= len / pg;
        if (!s->nused) {
            for (slab **pp = &slabs_; *pp; pp = &(*pp)->next)
                if (*pp == s) {
                    *pp = s->next;
                    break;
                }
            empty = s;
        }
    }
    pthread_mutex_unlock(&lock_);
    if (len && !s) munmap(host, len);
    if (empty) {
        munmap(empty->host, empty->npages * pg);
        if (!empty->dead) empty->ops->release(empty->alloc, empty->user);
        free(empty->used);
        free(empty);
    }
    return len != 0;
}

void rt_twin_place_forget(void)
{
    pthread_mutex_lock(&lock_);
    for (slab *s = slabs_; s; s = s->next) s->dead = true;
    pthread_mutex_unlock(&lock_);
}
