/* The server's side of a guest's shared-memory arena (arena_guest.c): the
 * handshake adopts the memfd (rt_arena_adopt), every connection of the
 * session binds its thread to it (rt_arena_bind), and an (offset, length)
 * buffer argument resolves to a pointer into this process's mapping
 * (wire.c). Its pages are registered with the accelerator
 * (apigen_set_host_memory) in pieces: an allocation the guest's API hands
 * to the application (pinned memory) when it is made (the guest asks:
 * apigen_arena_pin, a runtime call), anything else the first time a buffer
 * argument uses it; registered pages stay so until the session's last
 * connection is gone, when they are unregistered and unmapped. So the first
 * copy from pinned memory costs what a later one costs, and making pinned
 * memory costs about what it costs natively (registering the whole arena
 * at its first use cost ~100 ms for 256 MiB). */
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

#define PIN_PAGE 4096u
#define PIN_GIVE_UP 8 /* the hook declined this many times in a row: no more tries */

typedef struct pinned {
    uint64_t off, len; /* page-aligned, sorted, disjoint */
} pinned;

typedef struct srv_arena {
    struct apigen_session *s;
    uint8_t *map;
    size_t size;
    unsigned refs;
    uint64_t id; /* never reused: a thread's last hit names its arena by it */
    pinned *pins;
    size_t npins, cappins;
    unsigned declined;
    struct srv_arena *next;
} srv_arena;

static uint64_t next_id = 1;
/* the registration that covered this thread's last range: most copies use
 * the same buffers again, and need no lock to see they are registered */
static _Thread_local struct {
    uint64_t id, off, len;
} tl_hit;

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

/* Registers the pages of [off, off+n) that are not yet (each gap its own
 * registration, so none overlaps another). A range across two
 * registrations is still correct: the accelerator treats it as pageable
 * memory. Caller holds mu. */
static void pin_locked(srv_arena *a, uint64_t off, uint64_t n)
{
    uint64_t lo = off / PIN_PAGE * PIN_PAGE, hi = off + n;
    hi = hi > a->size - PIN_PAGE ? a->size : (hi + PIN_PAGE - 1) / PIN_PAGE * PIN_PAGE;
    size_t i = 0;
    while (i < a->npins && a->pins[i].off + a->pins[i].len <= lo)
        i++;
    for (uint64_t at = lo; at < hi && a->declined < PIN_GIVE_UP;) {
        if (i < a->npins && a->pins[i].off <= at) {
            if (a->pins[i].off <= lo && a->pins[i].off + a->pins[i].len >= hi) {
                tl_hit.id = a->id;
                tl_hit.off = a->pins[i].off;
                tl_hit.len = a->pins[i].len;
            }
            at = a->pins[i].off + a->pins[i].len;
            i++;
            continue;
        }
        uint64_t end = i < a->npins && a->pins[i].off < hi ? a->pins[i].off : hi;
        if (a->npins == a->cappins) {
            size_t nc = a->cappins ? a->cappins * 2 : 16;
            pinned *np = realloc(a->pins, nc * sizeof *np);
            if (!np)
                return; /* unregistered memory still works, as pageable memory */
            a->pins = np;
            a->cappins = nc;
        }
        if (!rt_host_pin(a->map + at, (size_t)(end - at))) {
            /* no context yet, say: a later use tries again */
            __atomic_store_n(&a->declined, a->declined + 1, __ATOMIC_RELAXED);
            return;
        }
        __atomic_store_n(&a->declined, 0, __ATOMIC_RELAXED);
        memmove(&a->pins[i + 1], &a->pins[i], (a->npins - i) * sizeof *a->pins);
        a->pins[i] = (pinned){at, end - at};
        a->npins++;
        if (at <= lo && end >= hi) {
            tl_hit.id = a->id;
            tl_hit.off = at;
            tl_hit.len = end - at;
        }
        i++;
        at = end;
    }
}

static void pin_range(srv_arena *a, uint64_t off, uint64_t n)
{
    if (tl_hit.id == a->id && off >= tl_hit.off && off + n <= tl_hit.off + tl_hit.len)
        return;
    if (!rt_host_pinning() || __atomic_load_n(&a->declined, __ATOMIC_RELAXED) >= PIN_GIVE_UP)
        return; /* no hooks (an API whose memory needs none), or they gave up */
    pthread_mutex_lock(&mu);
    pin_locked(a, off, n);
    pthread_mutex_unlock(&mu);
}

static const void *wire_at(uint64_t off, uint64_t n, bool *bound)
{
    srv_arena *a = tl;
    *bound = a != NULL;
    if (!a || off > a->size || n > a->size - off || !n)
        return NULL;
    pin_range(a, off, n);
    return a->map + off;
}

bool rt_arena_holds(struct apigen_session *s, uint64_t addr, uint64_t n)
{
    srv_arena *a = tl;
    uint64_t b = a ? (uint64_t)(uintptr_t)a->map : 0;
    if (!a || a->s != s || addr < b || addr - b >= a->size || n > a->size - (addr - b))
        return false;
    if (n)
        pin_range(a, addr - b, n);
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
    pthread_mutex_lock(&mu);
    a->id = next_id++;
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
        for (size_t i = 0; i < dead->npins; i++)
            rt_host_unpin(dead->map + dead->pins[i].off);
        munmap(dead->map, dead->size);
        free(dead->pins);
        free(dead);
    }
}

/* The runtime call apigen_arena_pin sends (RT_CALL_ARENA_PIN, sync): u64
 * offset, u64 length -> u32 1 when every page of it is registered. */
void rt_arena_pin_call(apigen_call_ctx *cx)
{
    uint64_t off, n;
    srv_arena *a = tl;
    if (!apigen_get_u64(cx->rd, &off) || !apigen_get_u64(cx->rd, &n) || !apigen_rd_done(cx->rd) ||
        !a || a->s != cx->session || !n || off > a->size || n > a->size - off) {
        apigen_reject(cx, APIGEN_BAD_ARGS, "arena range to register");
        return;
    }
    pthread_mutex_lock(&mu);
    pin_locked(a, off, n);
    uint64_t lo = off / PIN_PAGE * PIN_PAGE, end = off + n, at = lo;
    for (size_t i = 0; i < a->npins && at < end; i++)
        if (a->pins[i].off <= at && a->pins[i].off + a->pins[i].len > at)
            at = a->pins[i].off + a->pins[i].len;
    pthread_mutex_unlock(&mu);
    apigen_result(cx, 0);
    if (!apigen_put_u32(cx->wr, at >= end))
        return; /* the reply's own failure is reported by the server */
}
