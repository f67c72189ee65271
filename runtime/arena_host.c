/* The server's side of a guest's shared-memory arena (arena_guest.c): the
 * handshake adopts the memfd (rt_arena_adopt), every connection of the
 * session binds its thread to it (rt_arena_bind), and an (offset, length)
 * buffer argument resolves to a pointer into this process's mapping
 * (wire.c). Registration with the accelerator (apigen_set_host_memory):
 * today's guests register the segments their allocator carves blocks from
 * (RT_CALL_ARENA, rt_arena_call: synchronous, when a block first needs a
 * new segment, as a native pinned allocation registers its memory), so no
 * copy pays for it; a guest that never sends one (an older build) gets the
 * whole mapping registered when a buffer argument first uses it (256 MiB:
 * ~80 ms on an H200, paid by the application's first pinned copy). Both are
 * unregistered and the mapping unmapped when the session's last connection
 * is gone. */
#define _GNU_SOURCE
#include "apigen_rt.h"
#include "rt_internal.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct seg {
    uint8_t *p;
    size_t n;
    bool ok; /* registered (else the hook declined: tried again at a use) */
} seg;

typedef struct srv_arena {
    struct apigen_session *s;
    uint8_t *map;
    size_t size;
    unsigned refs;
    int reg;         /* whole mapping: 0 not tried, 1 registered, -1 the hook declined */
    bool segmented;  /* the guest registers segments: never the whole mapping */
    pthread_mutex_t seg_mu; /* segs, and registrations of this arena */
    seg *segs;
    size_t nseg, capseg;
    unsigned nfailed; /* segments whose registration the hook declined */
    struct srv_arena *next;
} srv_arena;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static srv_arena *arenas;
static _Thread_local srv_arena *tl;
static const apigen_api *accepting[8];

void apigen_arena_accept(const apigen_api *api)
{
    pthread_mutex_lock(&mu);
    for (int i = 0; i < 8; i++)
        if (!accepting[i] || accepting[i] == api) {
            accepting[i] = api;
            break;
        }
    pthread_mutex_unlock(&mu);
}

bool rt_arena_taken(const apigen_api *api)
{
    bool yes = false;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < 8; i++)
        yes |= accepting[i] == api;
    pthread_mutex_unlock(&mu);
    return yes;
}

bool rt_arena_taken_family(const apigen_api *api)
{
    bool yes = false;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < 8; i++)
        yes |= accepting[i] && rt_same_family(accepting[i], api);
    pthread_mutex_unlock(&mu);
    return yes;
}

/* At a use of [p, p + n): an older guest's arena is registered whole; a
 * segment whose registration the hook declined (a runtime's while the thread
 * has a pending error, a driver's without a current context) is tried
 * again, as the whole arena was at each first use before. */
static void pin_use(srv_arena *a, const uint8_t *p, uint64_t n)
{
    if (!__atomic_load_n(&a->reg, __ATOMIC_ACQUIRE) &&
        !__atomic_load_n(&a->segmented, __ATOMIC_ACQUIRE)) {
        pthread_mutex_lock(&a->seg_mu);
        if (!a->reg && !a->segmented)
            __atomic_store_n(&a->reg, rt_host_pin(a->map, a->size) ? 1 : -1, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&a->seg_mu);
    }
    if (!__atomic_load_n(&a->nfailed, __ATOMIC_ACQUIRE))
        return;
    pthread_mutex_lock(&a->seg_mu);
    for (size_t i = 0; i < a->nseg; i++) {
        seg *g = &a->segs[i];
        if (!g->ok && p < g->p + g->n && g->p < p + n && rt_host_pin(g->p, g->n)) {
            g->ok = true;
            __atomic_store_n(&a->nfailed, a->nfailed - 1, __ATOMIC_RELEASE);
        }
    }
    pthread_mutex_unlock(&a->seg_mu);
}

/* [p, p + n) registered as one segment (a->seg_mu held): no overlap with
 * another (the accelerator refuses overlapping registrations). */
static bool seg_pin(srv_arena *a, uint8_t *p, size_t n)
{
    if (a->reg == 1)
        return true; /* the whole mapping already is (its first use came first) */
    for (size_t i = 0; i < a->nseg; i++)
        if (p < a->segs[i].p + a->segs[i].n && a->segs[i].p < p + n)
            return false;
    if (a->nseg == a->capseg) {
        size_t nc = a->capseg ? a->capseg * 2 : 16;
        seg *ns = realloc(a->segs, nc * sizeof *ns);
        if (!ns)
            return false;
        a->segs = ns;
        a->capseg = nc;
    }
    bool ok = rt_host_pin(p, n);
    a->segs[a->nseg++] = (seg){p, n, ok};
    if (!ok)
        __atomic_store_n(&a->nfailed, a->nfailed + 1, __ATOMIC_RELEASE);
    return ok;
}

static bool seg_unpin(srv_arena *a, uint8_t *p, size_t n)
{
    if (a->reg == 1)
        return true;
    for (size_t i = 0; i < a->nseg; i++)
        if (a->segs[i].p == p && a->segs[i].n == n) {
            if (a->segs[i].ok)
                rt_host_unpin(p);
            else
                __atomic_store_n(&a->nfailed, a->nfailed - 1, __ATOMIC_RELEASE);
            a->segs[i] = a->segs[--a->nseg];
            return true;
        }
    return false;
}

void rt_arena_call(apigen_call_ctx *cx)
{
    uint8_t op;
    uint64_t addr, n;
    if (!apigen_get_u8(cx->rd, &op) || !apigen_get_u64(cx->rd, &addr) ||
        !apigen_get_u64(cx->rd, &n) || !apigen_rd_done(cx->rd) || op > 1) {
        apigen_reject(cx, APIGEN_BAD_ARGS, "arena segment");
        return;
    }
    srv_arena *a = tl;
    uint64_t b = a ? (uint64_t)(uintptr_t)a->map : 0;
    bool ok = false;
    if (a && a->s == cx->session && n && addr >= b && addr - b < a->size &&
        n <= a->size - (addr - b) && (addr - b) % 4096 == 0 && n % 4096 == 0) {
        pthread_mutex_lock(&a->seg_mu);
        __atomic_store_n(&a->segmented, true, __ATOMIC_RELEASE);
        uint8_t *p = a->map + (addr - b);
        ok = op ? seg_pin(a, p, (size_t)n) : seg_unpin(a, p, (size_t)n);
        pthread_mutex_unlock(&a->seg_mu);
    } else {
        apigen_log("%s: arena segment [%#llx, +%llu) is not page-aligned inside this client's "
                   "shared-memory arena: not %sregistered", cx->api->name,
                   (unsigned long long)addr, (unsigned long long)n, op ? "" : "un");
    }
    if (!apigen_put_u32(cx->wr, ok ? 1u : 0u))
        return; /* the reply's failure is the dispatcher's to report */
}

static const void *wire_at(uint64_t off, uint64_t n, bool *bound)
{
    srv_arena *a = tl;
    *bound = a != NULL;
    if (!a || off > a->size || n > a->size - off || !n)
        return NULL;
    pin_use(a, a->map + off, n);
    return a->map + off;
}

bool rt_arena_holds(struct apigen_session *s, uint64_t addr, uint64_t n)
{
    srv_arena *a = tl;
    uint64_t b = a ? (uint64_t)(uintptr_t)a->map : 0;
    if (!a || a->s != s || addr < b || addr - b >= a->size || n > a->size - (addr - b))
        return false;
    pin_use(a, a->map + (addr - b), n);
    return true;
}

bool rt_arena_adopt(struct apigen_session *s, int fd, uint64_t *base, char *why, size_t whylen)
{
    struct stat st;
    int seals = fd >= 0 ? fcntl(fd, F_GET_SEALS) : -1;
    *base = 0;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 || seals < 0 ||
        !(seals & F_SEAL_SHRINK) || (uint64_t)st.st_size > SIZE_MAX) {
        snprintf(why, whylen, "not a sealed memfd");
        if (fd >= 0)
            close(fd);
        return false;
    }
    size_t size = (size_t)st.st_size;
    void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    srv_arena *a = m == MAP_FAILED ? NULL : calloc(1, sizeof *a);
    if (!a) {
        if (m != MAP_FAILED)
            munmap(m, size);
        snprintf(why, whylen, "cannot map %zu bytes", size);
        return false;
    }
    a->s = s;
    a->map = m;
    a->size = size;
    pthread_mutex_init(&a->seg_mu, NULL);
    pthread_mutex_lock(&mu);
    a->next = arenas;
    arenas = a;
    rt_wire_arena_at = wire_at;
    pthread_mutex_unlock(&mu);
    *base = (uint64_t)(uintptr_t)m;
    return true;
}

void rt_arena_bind(struct apigen_session *s)
{
    pthread_mutex_lock(&mu);
    tl = NULL;
    for (srv_arena *a = arenas; a; a = a->next)
        if (a->s == s) {
            a->refs++;
            tl = a;
            break;
        }
    pthread_mutex_unlock(&mu);
}

void rt_arena_unbind(void)
{
    srv_arena *a = tl, *dead = NULL;
    tl = NULL;
    if (!a)
        return;
    pthread_mutex_lock(&mu);
    if (--a->refs == 0) {
        for (srv_arena **pp = &arenas; *pp; pp = &(*pp)->next)
            if (*pp == a) {
                *pp = a->next;
                dead = a;
                break;
            }
    }
    pthread_mutex_unlock(&mu);
    if (dead) {
        if (dead->reg == 1)
            rt_host_unpin(dead->map);
        for (size_t i = 0; i < dead->nseg; i++)
            if (dead->segs[i].ok)
                rt_host_unpin(dead->segs[i].p);
        free(dead->segs);
        pthread_mutex_destroy(&dead->seg_mu);
        munmap(dead->map, dead->size);
        free(dead);
    }
}
