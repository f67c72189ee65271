/* The guest's shared-memory arena (docs/internals.md, "Arena").
 *
 * One memfd per process, created when the first session is set up over a
 * local transport (unix://, shm://) and passed to the server at the
 * handshake (guest.c); the server maps it and registers it with the
 * accelerator (apigen_set_host_memory hooks), so memory the API's
 * hand-written guest code carves from it (apigen_arena_alloc: the
 * pinned-memory allocations of the API) is DMA-able on the server. A buffer
 * argument that lies inside it travels as (offset, length) instead of bytes
 * (apigen_put_bytes_ref, wire.c). */
#define _GNU_SOURCE
#include "apigen_rt.h"
#include "rt_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define ARENA_PAGE 4096u
#define ARENA_DEFAULT (256ull << 20)
#define ARENA_PEERS 8

typedef struct ext {
    uint64_t off, len;
} ext;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int afd = -1;
static uint8_t *amap;
static uint64_t asize;
static bool tried, refused;
static ext *freel, *used; /* free extents sorted by offset; allocated blocks */
static size_t nfree, nused, capfree, capused;
static struct {
    const apigen_api *api;
    uint64_t base;
    bool family; /* taken for api's family (ack 3): every member's calls use it */
} peers[ARENA_PEERS];
static _Atomic bool usable; /* a server took it and none refused it */
static _Thread_local const apigen_api *cur_api; /* the call being written (apigen_call_begin) */

/* the peer entry that took the arena for api's calls (-1: none) */
static int peer_of(const apigen_api *api)
{
    for (int i = 0; i < ARENA_PEERS; i++)
        if (peers[i].api == api ||
            (peers[i].api && peers[i].family && rt_same_family(peers[i].api, api)))
            return i;
    return -1;
}

static bool taken_by(const apigen_api *api)
{
    return peer_of(api) >= 0;
}

void rt_arena_guest_current(const apigen_api *api)
{
    cur_api = api;
}

uint64_t rt_env_size(const char *name, uint64_t dflt)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return dflt;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno || end == v)
        return dflt;
    switch (*end) {
    case 'k': case 'K': n <<= 10; break;
    case 'm': case 'M': n <<= 20; break;
    case 'g': case 'G': n <<= 30; break;
    default: break;
    }
    return n;
}

static bool grow(ext **a, size_t *cap, size_t need)
{
    if (need <= *cap)
        return true;
    size_t nc = *cap ? *cap * 2 : 16;
    ext *na = realloc(*a, nc * sizeof *na);
    if (!na)
        return false;
    *a = na;
    *cap = nc;
    return true;
}

static bool wire_find(const void *p, uint64_t n, uint64_t *off)
{
    uintptr_t a = (uintptr_t)p, b = (uintptr_t)amap;
    if (!atomic_load_explicit(&usable, memory_order_acquire) || a < b || a - b > asize ||
        n > asize - (a - b) || !cur_api)
        return false;
    pthread_mutex_lock(&mu);
    bool taken = taken_by(cur_api);
    pthread_mutex_unlock(&mu);
    if (!taken)
        return false; /* that API's server declined it: bytes */
    *off = a - b;
    return true;
}

int rt_arena_guest_fd(uint64_t *size)
{
    pthread_mutex_lock(&mu);
    if (!tried) {
        tried = true;
        uint64_t want = rt_env_size("APIGEN_ARENA", ARENA_DEFAULT);
        want = (want + ARENA_PAGE - 1) / ARENA_PAGE * ARENA_PAGE;
        int fd = want ? memfd_create("apigen-arena", MFD_CLOEXEC | MFD_ALLOW_SEALING) : -1;
        void *m = MAP_FAILED;
        if (fd >= 0 && ftruncate(fd, (off_t)want) == 0 &&
            fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0)
            m = mmap(NULL, (size_t)want, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m != MAP_FAILED && grow(&freel, &capfree, 1)) {
            afd = fd;
            amap = m;
            asize = want;
            freel[0] = (ext){0, want};
            nfree = 1;
        } else {
            if (m != MAP_FAILED)
                munmap(m, (size_t)want);
            if (fd >= 0) {
                close(fd);
                apigen_log("no shared-memory arena (%s): pinned host memory is plain memory",
                           strerror(errno));
            }
        }
    }
    int fd = refused ? -1 : afd;
    *size = asize;
    pthread_mutex_unlock(&mu);
    return fd;
}

void rt_arena_guest_ack(const apigen_api *api, const uint8_t ack[RT_ARENA_ACK_LEN], int stray_fd)
{
    uint64_t peer_base = 0;
    for (int i = 0; i < 8; i++)
        peer_base |= (uint64_t)ack[1 + i] << (8 * i);
    bool ok = (ack[0] == 1 || ack[0] == 3) && peer_base;
    if (stray_fd >= 0)
        close(stray_fd);
    pthread_mutex_lock(&mu);
    if (ack[0] == 2) {
        /* the server's API does not take arenas: calls to it send bytes */
    } else if (!ok) {
        refused = true; /* one server could not map it: refs would not resolve there */
        atomic_store(&usable, false);
    } else if (!refused) {
        for (int i = 0; i < ARENA_PEERS; i++)
            if (!peers[i].api || peers[i].api == api) {
                peers[i].api = api;
                peers[i].base = peer_base;
                peers[i].family = ack[0] == 3;
                break;
            }
        rt_wire_arena_find = wire_find;
        atomic_store_explicit(&usable, true, memory_order_release);
    }
    pthread_mutex_unlock(&mu);
}

void *apigen_arena_alloc(size_t n)
{
    void *p = NULL;
    if (!n || !atomic_load(&usable))
        return NULL;
    uint64_t len = ((uint64_t)n + ARENA_PAGE - 1) / ARENA_PAGE * ARENA_PAGE;
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < nfree && len >= n; i++) {
        if (freel[i].len < len || !grow(&used, &capused, nused + 1))
            continue;
        used[nused++] = (ext){freel[i].off, len};
        p = amap + freel[i].off;
        freel[i].off += len;
        freel[i].len -= len;
        if (!freel[i].len) {
            memmove(&freel[i], &freel[i + 1], (nfree - i - 1) * sizeof *freel);
            nfree--;
        }
        break;
    }
    pthread_mutex_unlock(&mu);
    return p;
}

bool apigen_arena_free(void *p)
{
    bool found = false;
    pthread_mutex_lock(&mu);
    for (size_t i = 0; amap && i < nused; i++) {
        if (amap + used[i].off != (uint8_t *)p)
            continue;
        ext e = used[i];
        used[i] = used[--nused];
        found = true;
        /* back into the sorted free list, merged with its neighbours */
        size_t k = 0;
        while (k < nfree && freel[k].off < e.off)
            k++;
        if (k > 0 && freel[k - 1].off + freel[k - 1].len == e.off) {
            freel[k - 1].len += e.len;
            if (k < nfree && freel[k - 1].off + freel[k - 1].len == freel[k].off) {
                freel[k - 1].len += freel[k].len;
                memmove(&freel[k], &freel[k + 1], (nfree - k - 1) * sizeof *freel);
                nfree--;
            }
        } else if (k < nfree && e.off + e.len == freel[k].off) {
            freel[k].off = e.off;
            freel[k].len += e.len;
        } else if (grow(&freel, &capfree, nfree + 1)) {
            memmove(&freel[k + 1], &freel[k], (nfree - k) * sizeof *freel);
            freel[k] = e;
            nfree++;
        } /* else: out of memory for the list: the extent stays lost */
        break;
    }
    pthread_mutex_unlock(&mu);
    return found;
}

bool apigen_arena_owns(const void *p)
{
    uintptr_t a = (uintptr_t)p, b = (uintptr_t)amap;
    return amap && a >= b && a - b < asize;
}

uint64_t apigen_arena_peer_addr(const apigen_api *api, const void *p, uint64_t n)
{
    uint64_t off, base = 0;
    const apigen_api *saved = cur_api;
    cur_api = api;
    bool in = wire_find(p, n, &off);
    cur_api = saved;
    if (!in)
        return 0;
    pthread_mutex_lock(&mu);
    int k = peer_of(api);
    if (k >= 0)
        base = peers[k].base;
    pthread_mutex_unlock(&mu);
    return base ? base + off : 0;
}
