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
 * something at that address the caller falls back to a twin elsewhere. */
#define _GNU_SOURCE /* MAP_FIXED_NOREPLACE */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "apigen_rt.h"
#include "rt_internal.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000 /* Linux 4.17; older kernels take it as a hint */
#endif

/* the blocks placed, for apigen_twin_unplace */
typedef struct placed {
    void *host;
    size_t len;
} placed;
static placed *placed_;
static size_t nplaced_, cap_;
static pthread_mutex_t lock_ = PTHREAD_MUTEX_INITIALIZER;

static bool remember(void *host, size_t len)
{
    bool ok = true;
    pthread_mutex_lock(&lock_);
    if (nplaced_ == cap_) {
        size_t nc = cap_ ? cap_ * 2 : 16;
        placed *np = realloc(placed_, nc * sizeof *np);
        if (np) placed_ = np, cap_ = nc;
        else ok = false;
    }
    if (ok) placed_[nplaced_++] = (placed){host, len};
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

void *apigen_twin_place(size_t size, const apigen_twin_alloc *ops, void *user, int *err)
{
    size_t pg = page_size();
    uint64_t dev = 0;
    *err = 0;
    if (!size || size > SIZE_MAX - 2 * pg) return NULL;
    size_t len = (size + pg - 1) / pg * pg;
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
    if (p && (*err = ops->clear(at, len, user)) == 0 && rt_twin_add_in(p, size, at, dev, false) != 0)
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
    size_t len = 0;
    pthread_mutex_lock(&lock_);
    for (size_t i = 0; i < nplaced_; i++)
        if (placed_[i].host == host) {
            len = placed_[i].len;
            placed_[i] = placed_[--nplaced_];
            break;
        }
    pthread_mutex_unlock(&lock_);
    if (len) munmap(host, len);
    return len != 0;
}
