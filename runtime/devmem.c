/* Device address ranges (SECURITY.md S4): which client owns which
 * [base, end) of device memory. One table for the whole server, sorted by
 * base, ranges never overlap, each tagged with its session; readers take a
 * read lock, unless the thread found the range lately (its cache below). */
#define _GNU_SOURCE
#include "rt_internal.h"
#include "rt_metrics.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct drange {
    uint64_t base, end; /* [base, end), end > base */
    struct apigen_session *owner;
    uint64_t seq;       /* creation order, for release newest first */
} drange;

static pthread_rwlock_t g_rw = PTHREAD_RWLOCK_INITIALIZER;
static drange *g_r;
static size_t g_n, g_cap;
static uint64_t g_seq;

/* Checks without the lock: each server thread keeps the ranges it found
 * lately. An entry holds while no range left the table since (g_removed,
 * bumped under the write lock by every removal, and by every session's
 * release, so a session address reused by a later session never matches
 * an entry of the old one): a range removed by another thread between the
 * check and the use is the same race as with the lock, which is released
 * before the use too. Adding a range never makes an entry wrong. */
#define CHECK_CACHE 4
typedef struct check_ent {
    const struct apigen_session *owner; /* NULL: empty */
    uint64_t base, end, removed;
} check_ent;
static _Atomic uint64_t g_removed;
static _Thread_local RT_TLS_HOST check_ent tl_check[CHECK_CACHE];
static _Thread_local RT_TLS_HOST unsigned tl_check_next; /* the entry a miss replaces */

static void ranges_removed(void) /* caller holds the write lock */
{
    atomic_fetch_add_explicit(&g_removed, 1, memory_order_release);
}

/* [addr, addr + extent) inside [base, end): the last byte in, one past the
 * end out; an empty extent may start at the end itself (a zero-byte copy
 * or set at one past an allocation's last byte, as sort and scan code do). */
static bool in_range(uint64_t base, uint64_t end, uint64_t addr, uint64_t extent, bool has_extent)
{
    if (has_extent && extent == 0)
        return addr >= base && addr <= end;
    return addr >= base && addr < end && (!has_extent || extent <= end - addr);
}

/* Index of the first range with base > addr. Caller holds the lock. */
static size_t upper(uint64_t addr)
{
    size_t lo = 0, hi = g_n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (g_r[mid].base <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The range containing addr, or SIZE_MAX. Caller holds the lock. */
static size_t containing(uint64_t addr)
{
    size_t i = upper(addr);
    if (i == 0 || addr >= g_r[i - 1].end)
        return SIZE_MAX;
    return i - 1;
}

bool apigen_dev_owned(struct apigen_session *s, uint64_t addr, uint64_t extent, bool has_extent)
{
    if (!s)
        return false;
    uint64_t removed = atomic_load_explicit(&g_removed, memory_order_acquire);
    for (unsigned k = 0; k < CHECK_CACHE; k++) {
        const check_ent *e = &tl_check[k];
        if (e->owner == s && e->removed == removed && addr >= e->base && addr < e->end)
            return !has_extent || extent <= e->end - addr;
    }
    bool ok = false;
    pthread_rwlock_rdlock(&g_rw);
    size_t i = containing(addr);
    if (i == SIZE_MAX && has_extent && extent == 0 && addr) /* the end of the range below? */
        i = containing(addr - 1);
    if (i != SIZE_MAX && g_r[i].owner == s) {
        ok = in_range(g_r[i].base, g_r[i].end, addr, extent, has_extent);
        /* read under the lock: a removal after it bumps g_removed past this */
        removed = atomic_load_explicit(&g_removed, memory_order_relaxed);
        tl_check[tl_check_next] = (check_ent){s, g_r[i].base, g_r[i].end, removed};
        tl_check_next = (tl_check_next + 1) % CHECK_CACHE;
    }
    pthread_rwlock_unlock(&g_rw);
    return ok;
}

bool apigen_arena_holds(apigen_call_ctx *cx, uint64_t addr, uint64_t n)
{
    return rt_arena_holds(cx->session, addr, n ? n : 1);
}

bool apigen_dev_check(apigen_call_ctx *cx, uint64_t addr, uint64_t extent, bool has_extent,
                      const char *what)
{
    if (addr == 0)
        return true; /* NULL: the real library reports it as it would natively */
    if (has_extent && extent == 0)
        return true; /* touches no memory: the real library answers, as natively (the vendor takes a
                        zero-byte copy or set at any address) */
    if (apigen_dev_owned(cx->session, addr, extent, has_extent))
        return true;
    if (rt_arena_holds(cx->session, addr, has_extent ? extent : 1))
        return true; /* the client's shared-memory arena (host memory the accelerator can reach) */
    /* the address and extent in the log line: which allocation the client
     * meant is the first question (the line is logged on this thread,
     * before its next call, so a per-thread buffer outlives it enough) */
    static _Thread_local char why[192];
    if (cx->status == APIGEN_OK) {
        if (has_extent)
            snprintf(why, sizeof why, "%s 0x%llx + %llu bytes", what, (unsigned long long)addr,
                     (unsigned long long)extent);
        else
            snprintf(why, sizeof why, "%s 0x%llx", what, (unsigned long long)addr);
        what = why;
    }
    apigen_reject(cx, APIGEN_BAD_DEVPTR, what);
    return false;
}

/* --metrics: the bytes each session holds follow its ranges */
static void held(const drange *r, int sign)
{
    if (rt_mx_on)
        rt_mx_devmem(rt_session_mx(r->owner), sign * (int64_t)(r->end - r->base));
}

/* Removes ranges [i, j) (caller holds the write lock). */
static void remove_span(size_t i, size_t j)
{
    for (size_t k = i; k < j; k++)
        held(&g_r[k], -1);
    memmove(g_r + i, g_r + j, (g_n - j) * sizeof *g_r);
    g_n -= j - i;
    ranges_removed();
}

static bool insert(struct apigen_session *s, uint64_t base, uint64_t end, uint64_t seq)
{
    /* The allocator just handed out [base, end): any recorded range that
     * overlaps it is stale (freed behind our back, e.g. by a context
     * teardown) and must not stay usable by its old owner. */
    size_t i = upper(base);
    if (i > 0 && g_r[i - 1].end > base)
        i--;
    size_t j = i;
    while (j < g_n && g_r[j].base < end)
        j++;
    if (j > i)
        remove_span(i, j);
    if (g_n == g_cap) {
        size_t nc = g_cap ? g_cap * 2 : 256;
        drange *p = realloc(g_r, nc * sizeof *p);
        if (!p)
            return false;
        g_r = p;
        g_cap = nc;
    }
    memmove(g_r + i + 1, g_r + i, (g_n - i) * sizeof *g_r);
    g_r[i] = (drange){base, end, s, seq};
    g_n++;
    held(&g_r[i], 1);
    return true;
}

bool apigen_dev_add(apigen_call_ctx *cx, uint64_t addr, uint64_t bytes)
{
    if (addr == 0)
        return true;
    uint64_t end;
    if (bytes == 0)
        bytes = 1; /* a zero-size allocation still has an address the client may pass back */
    if (!apigen_add_size(addr, bytes, &end))
        end = UINT64_MAX;
    pthread_rwlock_wrlock(&g_rw);
    bool ok = insert(cx->session, addr, end, ++g_seq);
    pthread_rwlock_unlock(&g_rw);
    if (!ok) {
        /* Not recorded means not releasable later: give it back now. */
        if (cx->api->device_destroy)
            cx->api->device_destroy((void *)(uintptr_t)addr);
        apigen_reject(cx, APIGEN_NO_MEMORY, "device range");
    }
    return ok;
}

bool apigen_dev_take(apigen_call_ctx *cx, uint64_t addr, const char *what)
{
    if (addr == 0)
        return true;
    bool ok = false;
    pthread_rwlock_wrlock(&g_rw);
    size_t i = containing(addr);
    if (i != SIZE_MAX && g_r[i].owner == cx->session && !cx->dev_taken) {
        cx->dev_taken = true;
        cx->dev_taken_base = g_r[i].base;
        cx->dev_taken_end = g_r[i].end;
        cx->dev_taken_seq = g_r[i].seq;
        remove_span(i, i + 1);
        ok = true;
    }
    pthread_rwlock_unlock(&g_rw);
    if (!ok)
        apigen_reject(cx, APIGEN_BAD_DEVPTR, what);
    return ok;
}

void apigen_dev_end(apigen_call_ctx *cx, bool ok)
{
    if (!cx->dev_taken)
        return;
    cx->dev_taken = false;
    if (ok)
        return;
    pthread_rwlock_wrlock(&g_rw);
    (void)insert(cx->session, cx->dev_taken_base, cx->dev_taken_end, cx->dev_taken_seq);
    pthread_rwlock_unlock(&g_rw);
}

static int by_seq_desc(const void *a, const void *b)
{
    const drange *x = a, *y = b;
    return x->seq < y->seq ? 1 : x->seq > y->seq ? -1 : 0;
}

void rt_dev_release_session(struct apigen_session *s, const apigen_api *api)
{
    drange *mine = NULL;
    size_t n = 0, k = 0, w = 0;
    pthread_rwlock_wrlock(&g_rw);
    for (size_t i = 0; i < g_n; i++)
        n += g_r[i].owner == s;
    if (n)
        mine = malloc(n * sizeof *mine); /* NULL: the ranges are forgotten, not freed */
    for (size_t i = 0; i < g_n; i++) {
        if (g_r[i].owner != s)
            g_r[w++] = g_r[i];
        else {
            held(&g_r[i], -1);
            if (mine)
                mine[k++] = g_r[i];
        }
    }
    g_n = w;
    ranges_removed(); /* even with none: s's address may come back as another session's */
    pthread_rwlock_unlock(&g_rw);
    if (k && api && api->device_destroy) {
        qsort(mine, k, sizeof *mine, by_seq_desc);
        for (size_t i = 0; i < k; i++)
            api->device_destroy((void *)(uintptr_t)mine[i].base);
    }
    free(mine);
}

bool rt_dev_session_holds(const struct apigen_session *s)
{
    bool holds = false;
    pthread_rwlock_rdlock(&g_rw);
    for (size_t i = 0; i < g_n && !holds; i++)
        holds = g_r[i].owner == s;
    pthread_rwlock_unlock(&g_rw);
    return holds;
}

size_t rt_dev_count(void)
{
    pthread_rwlock_rdlock(&g_rw);
    size_t n = g_n;
    pthread_rwlock_unlock(&g_rw);
    return n;
}
