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
#define SEG_DEFAULT (2ull << 20)

typedef struct ext {
    uint64_t off, len;
} ext;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int afd = -1;
static uint8_t *amap;
static uint64_t asize;
static bool tried, refused;
static ext *freel, *used; /* free space in segments, sorted by offset; allocated blocks */
static size_t nfree, nused, capfree, capused;
typedef struct seg { /* a registration unit (below) */
    uint64_t off, len;
} seg;
static seg *segs;
static size_t nseg, capseg;
static ext *rawl; /* arena space in no segment, sorted by offset */
static size_t nraw, capraw;
static uint64_t seg_min;
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

static bool grow_any(void **a, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t nc = *cap ? *cap * 2 : 16;
    void *na = realloc(*a, nc * elem);
    if (!na)
        return false;
    *a = na;
    *cap = nc;
    return true;
}

static bool grow(ext **a, size_t *cap, size_t need)
{
    void *p = *a;
    bool ok = grow_any(&p, cap, need, sizeof **a);
    *a = p;
    return ok;
}

static bool grow_segs(size_t need)
{
    void *p = segs;
    bool ok = grow_any(&p, &capseg, need, sizeof *segs);
    segs = p;
    return ok;
}

static bool wire_find(const void *p, uint64_t n, uint64_t *off)
{
    if (!atomic_load_explicit(&usable, memory_order_acquire))
        return false; /* amap is read after: the first ack may have moved it */
    uintptr_t a = (uintptr_t)p, b = (uintptr_t)amap;
    if (a < b || a - b > asize || n > asize - (a - b) || !cur_api)
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
        if (m != MAP_FAILED && grow(&rawl, &capraw, 1)) {
            afd = fd;
            amap = m;
            asize = want;
            rawl[0] = (ext){0, want};
            nraw = 1;
            seg_min = rt_env_size("APIGEN_ARENA_SEGMENT", SEG_DEFAULT);
            seg_min = (seg_min + ARENA_PAGE - 1) / ARENA_PAGE * ARENA_PAGE;
            if (!seg_min)
                seg_min = ARENA_PAGE;
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

/* The first server to take the arena mapped it at base: the guest's view
 * moves to the same address when that range is free here (under mu, before
 * any block is carved and before the arena is usable, so no pointer into
 * the old view exists). Pinned memory then has one address on both sides,
 * as natively, where the device reaches pinned host memory at its host
 * address (unified addressing): a kernel given a pointer into it (template
 * libraries' pinned vectors, zero-copy code that never asks the API for a
 * device pointer) reads the guest's bytes, where the guest's own address
 * faulted on the device. When the range is taken here, addresses are
 * translated at the calls as before and such a kernel still faults. */
static void same_address(uint64_t base)
{
    if (!amap || base == (uint64_t)(uintptr_t)amap || base % ARENA_PAGE)
        return;
    void *m = mmap((void *)(uintptr_t)base, (size_t)asize, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_FIXED_NOREPLACE, afd, 0);
    if (m == MAP_FAILED)
        return;
    if (m != (void *)(uintptr_t)base) { /* a kernel before 4.17 took it as a hint */
        munmap(m, (size_t)asize);
        return;
    }
    uint8_t *old = amap;
    __atomic_store_n(&amap, (uint8_t *)m, __ATOMIC_RELEASE);
    munmap(old, (size_t)asize);
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
        if (!peers[0].api && nused == 0) /* the first server, no block yet */
            same_address(peer_base);
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

/* ---- segments: what the server registers ------------------------------------------
 * The server registers the arena with the accelerator in segments that this
 * allocator carves as blocks first need them (RT_CALL_ARENA, a synchronous
 * request to each server that took the arena, as a native pinned allocation
 * registers its memory when it is made): a block never spans two segments,
 * so a copy or a mapped device pointer inside one block is inside one
 * registration, as natively inside one allocation. A segment is at least
 * APIGEN_ARENA_SEGMENT bytes (default 2M: registering one costs about what a
 * native small pinned allocation does), stays registered while its blocks come
 * and go, and is given back (unregistered) only when a new segment finds no
 * room: then every segment with no block left goes, and the space merges.
 * Registering the whole arena instead cost the first copy from it ~80 ms
 * (256 MiB on an H200, 2026-11-26). */

/* the segment holding off (under mu); -1: none */
static long seg_of(uint64_t off)
{
    for (size_t i = 0; i < nseg; i++)
        if (off >= segs[i].off && off - segs[i].off < segs[i].len)
            return (long)i;
    return -1;
}

/* e into the sorted list, merged with neighbours (only within one segment
 * when same_seg: free space never crosses a segment's edge). false: no
 * memory for the list (the extent stays lost). */
static bool ext_put(ext **l, size_t *nl, size_t *cap, ext e, bool same_seg)
{
    size_t k = 0;
    while (k < *nl && (*l)[k].off < e.off)
        k++;
    ext *a = *l;
    bool left = k > 0 && a[k - 1].off + a[k - 1].len == e.off &&
                (!same_seg || seg_of(a[k - 1].off) == seg_of(e.off));
    bool right = k < *nl && e.off + e.len == a[k].off &&
                 (!same_seg || seg_of(a[k].off) == seg_of(e.off));
    if (left) {
        a[k - 1].len += e.len;
        if (right) {
            a[k - 1].len += a[k].len;
            memmove(&a[k], &a[k + 1], (*nl - k - 1) * sizeof *a);
            (*nl)--;
        }
        return true;
    }
    if (right) {
        a[k].off = e.off;
        a[k].len += e.len;
        return true;
    }
    if (!grow(l, cap, *nl + 1))
        return false;
    a = *l;
    memmove(&a[k + 1], &a[k], (*nl - k) * sizeof *a);
    a[k] = e;
    (*nl)++;
    return true;
}

/* first fit of len bytes in the list: its offset (removed from the list) */
static bool ext_take(ext *l, size_t *nl, uint64_t len, uint64_t *off)
{
    for (size_t i = 0; i < *nl; i++) {
        if (l[i].len < len)
            continue;
        *off = l[i].off;
        l[i].off += len;
        l[i].len -= len;
        if (!l[i].len) {
            memmove(&l[i], &l[i + 1], (*nl - i - 1) * sizeof *l);
            (*nl)--;
        }
        return true;
    }
    return false;
}

/* Every server that took the arena registers (on) or unregisters
 * [off, off + len); false if one did not. Called without mu (a request). */
static bool seg_request(uint64_t off, uint64_t len, bool on)
{
    const apigen_api *api[ARENA_PEERS];
    uint64_t base[ARENA_PEERS];
    int n = 0;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < ARENA_PEERS; i++)
        if (peers[i].api) {
            api[n] = peers[i].api;
            base[n++] = peers[i].base;
        }
    pthread_mutex_unlock(&mu);
    bool ok = n > 0;
    for (int i = 0; i < n; i++)
        ok = rt_arena_guest_pin(api[i], base[i] + off, len, on) && ok;
    return ok;
}

/* Segments with no block left leave (unregistered) and their space merges
 * into the unsegmented space, so that a larger segment fits. Takes and
 * gives back mu around the requests; false: none was free. */
static bool release_free_segments(void)
{
    seg gone[16];
    size_t ng = 0;
    for (size_t i = 0; i < nseg && ng < 16;) {
        long k = -1;
        for (size_t j = 0; j < nfree; j++)
            if (freel[j].off == segs[i].off && freel[j].len == segs[i].len)
                k = (long)j;
        if (k < 0) {
            i++;
            continue;
        }
        memmove(&freel[k], &freel[k + 1], (nfree - (size_t)k - 1) * sizeof *freel);
        nfree--;
        gone[ng++] = segs[i];
        segs[i] = segs[--nseg];
    }
    if (!ng)
        return false;
    pthread_mutex_unlock(&mu);
    for (size_t i = 0; i < ng; i++)
        (void)seg_request(gone[i].off, gone[i].len, false);
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < ng; i++)
        (void)ext_put(&rawl, &nraw, &capraw, (ext){gone[i].off, gone[i].len}, false);
    return true;
}

/* This process's page tables for a new segment, filled now: a native pinned
 * allocation's pages are there when it returns, and an application's first
 * write into forwarded pinned memory faulted on every page of the shared
 * mapping instead (4 MiB: 2.9 ms against 0.03 for the second fill; 64 MiB:
 * 47 ms against 2.4, this VM). The allocation pays it, as natively. A kernel
 * without MADV_POPULATE_WRITE (before 5.14) leaves it to the faults. */
static void populate(void *p, uint64_t len)
{
#ifdef MADV_POPULATE_WRITE
    (void)madvise(p, (size_t)len, MADV_POPULATE_WRITE);
#else
    (void)p, (void)len;
#endif
}

/* A new segment for a block of len bytes (under mu, which it gives back
 * while the servers register it): its offset in *off, the rest of the
 * segment free. false: no room, even once free segments left. */
static bool new_segment(uint64_t len, uint64_t *off)
{
    uint64_t slen = (len + seg_min - 1) / seg_min * seg_min;
    for (int round = 0;; round++) {
        if (!grow_segs(nseg + 1))
            return false;
        if (ext_take(rawl, &nraw, slen, off) ||
            (slen > len && ext_take(rawl, &nraw, slen = len, off)))
            break;
        if (round || !release_free_segments())
            return false;
        if (ext_take(freel, &nfree, len, off))
            return true; /* a block freed meanwhile fits */
        slen = (len + seg_min - 1) / seg_min * seg_min;
    }
    if (!grow_segs(nseg + 1)) {
        (void)ext_put(&rawl, &nraw, &capraw, (ext){*off, slen}, false);
        return false;
    }
    segs[nseg++] = (seg){*off, slen};
    /* registered before any block of it is handed out; not registered, it
     * works as pageable memory would */
    pthread_mutex_unlock(&mu);
    (void)seg_request(*off, slen, true);
    populate(amap + *off, slen);
    pthread_mutex_lock(&mu);
    if (slen > len)
        (void)ext_put(&freel, &nfree, &capfree, (ext){*off + len, slen - len}, true);
    return true;
}

void *apigen_arena_alloc(size_t n)
{
    uint64_t off = 0;
    void *p = NULL;
    if (!n || !atomic_load(&usable))
        return NULL;
    uint64_t len = ((uint64_t)n + ARENA_PAGE - 1) / ARENA_PAGE * ARENA_PAGE;
    if (len < n)
        return NULL;
    pthread_mutex_lock(&mu);
    if (ext_take(freel, &nfree, len, &off) || new_segment(len, &off)) {
        if (grow(&used, &capused, nused + 1)) {
            used[nused++] = (ext){off, len};
            p = amap + off;
        } else {
            (void)ext_put(&freel, &nfree, &capfree, (ext){off, len}, true);
        }
    }
    pthread_mutex_unlock(&mu);
    return p;
}

void *apigen_pinned_alloc(size_t n, bool arena_only)
{
    size_t len = n ? n : 1;
    void *p = apigen_arena_alloc(len); /* its segment was populated when made */
    if (p || arena_only)
        return p;
    if (posix_memalign(&p, ARENA_PAGE, len) != 0)
        return NULL;
    populate(p, len);
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
        /* back into the free space of its segment; out of memory for the
         * list: the extent stays lost */
        (void)ext_put(&freel, &nfree, &capfree, e, true);
        break;
    }
    pthread_mutex_unlock(&mu);
    return found;
}

bool apigen_arena_owns(const void *p)
{
    uint8_t *m = __atomic_load_n(&amap, __ATOMIC_ACQUIRE); /* same_address may move it */
    uintptr_t a = (uintptr_t)p, b = (uintptr_t)m;
    return m && a >= b && a - b < asize;
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

bool rt_arena_peer_holds(const apigen_api *api, uint64_t addr, uint64_t n)
{
    if (!atomic_load_explicit(&usable, memory_order_acquire) || !addr)
        return false;
    pthread_mutex_lock(&mu);
    int k = peer_of(api);
    uint64_t base = k >= 0 ? peers[k].base : 0;
    pthread_mutex_unlock(&mu);
    n = n ? n : 1;
    return base && addr >= base && addr - base < asize && n <= asize - (addr - base);
}

bool rt_arena_guest_pin(const apigen_api *api, uint64_t addr, uint64_t n, bool on)
{
    apigen_call c;
    uint32_t done = 0;
    uint64_t t0 = apigen_tracing() ? apigen_now_ns() : 0;
    apigen_hold_deferred(true); /* an async error is the application's next call's */
    apigen_status st = APIGEN_LOST;
    if (apigen_call_begin_on(api, &c, RT_CALL_ARENA, APIGEN_ROUTE_ANY)) {
        if (apigen_put_u8(c.wr, on ? 1 : 0) && apigen_put_u64(c.wr, addr) &&
            apigen_put_u64(c.wr, n)) {
            st = apigen_call_sync(&c);
            if (st == APIGEN_OK && (!apigen_get_u32(&c.rd, &done) || !apigen_rd_done(&c.rd)))
                done = 0;
        } else {
            st = APIGEN_NO_MEMORY;
        }
        apigen_call_end(&c);
    }
    apigen_hold_deferred(false);
    if (t0)
        apigen_trace("apigenArenaSegment(%s, addr=%#llx, n=%llu) = %u [%s, %llu us]",
                     on ? "register" : "unregister", (unsigned long long)addr,
                     (unsigned long long)n, done, apigen_status_str(st),
                     (unsigned long long)((apigen_now_ns() - t0) / 1000));
    return st == APIGEN_OK && done == 1;
}
