/* Per-call scratch memory on the server: zeroed, overflow-checked, bounded
 * by the per-call budget (--max-arg / APIGEN_MAX_ARG), freed after the reply. */
#define _GNU_SOURCE
#include "rt_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* One large block per server thread is kept after a call and reused (zeroed
 * again unless it holds the same session's bytes) by the next call that needs most of it: a run of large device-to-
 * host copies then writes into warm memory instead of faulting in fresh
 * pages on every call. A call that does not use it releases it. */
#define CACHE_MIN (1u << 20)
static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;
static void cache_free(void *p) { free(p); }
static void cache_init(void) { (void)pthread_key_create(&cache_key, cache_free); }
static _Thread_local rt_warm cache_warm;
/* whose bytes the cached block holds: reused by the same session it is not
 * zeroed again (a large out buffer the real function fills anyway), for
 * another session (a thread serving connections one after another) it is */
static _Thread_local uint8_t cache_owner[RT_KEY_LEN];
static _Thread_local bool cache_owned;

static bool owned_by(const apigen_call_ctx *cx)
{
    uint8_t k[RT_KEY_LEN];
    if (!cache_owned || !cx->session)
        return false;
    rt_session_key(cx->session, k);
    return memcmp(k, cache_owner, RT_KEY_LEN) == 0;
}

typedef struct scr {
    struct scr *next;
    uint64_t size;
} scr; /* 16 bytes: what follows stays 16-byte aligned like malloc's */

_Static_assert(sizeof(scr) % 16 == 0, "scratch header keeps 16-byte alignment");

/* Small blocks (an out-parameter or two of most calls) come from a few kept
 * per server thread instead of calloc + free on every call. */
#define SMALL_BYTES 240u
#define SMALL_KEEP 8
static _Thread_local scr *small_free;
static _Thread_local unsigned small_n;
static pthread_key_t small_key;
static pthread_once_t small_once = PTHREAD_ONCE_INIT;
static void small_release(void *unused)
{
    (void)unused;
    while (small_free) {
        scr *n = small_free->next;
        free(small_free);
        small_free = n;
    }
    small_n = 0;
}
static void small_init(void) { (void)pthread_key_create(&small_key, small_release); }
static _Thread_local bool small_keyed; /* small_key set on this thread: its exit frees them */
static _Thread_local RT_TLS_HOST bool cache_held;  /* the cached large block is set on this thread */

void apigen_reject(apigen_call_ctx *cx, apigen_status st, const char *what)
{
    if (cx->status == APIGEN_OK && st != APIGEN_OK) {
        cx->status = st;
        cx->reject_what = what;
    }
}

void apigen_result_own(apigen_call_ctx *cx)
{
    rt_dispatch *d = cx->rt;
    if (d)
        d->result_own = true;
}

void apigen_set_last_error(apigen_call_ctx *cx, int64_t err)
{
    rt_dispatch *d = cx->rt;
    if (d && d->own) {
        d->own->has = true;
        d->own->err = err;
        d->own->api = cx->api;
    }
}

int64_t apigen_last_error(apigen_call_ctx *cx, int64_t real, bool clear)
{
    rt_dispatch *d = cx->rt;
    if (!d)
        return real;
    d->last_error_call = true;
    if (!d->own || !d->own->has || d->own->api != cx->api) /* another API's error */
        return real;
    int64_t e = d->own->err; /* newer than the library's (which get just cleared) */
    if (clear)
        d->own->has = false;
    return e;
}

void apigen_result(apigen_call_ctx *cx, int64_t api_error)
{
    cx->has_result = true;
    cx->result_error = api_error;
}

/* The first small blocks of a call (most calls' out-parameters) are carved
 * from a per-thread region that the end of the call gives back whole: no
 * list to keep, nothing to walk after the reply. A server thread runs one
 * call at a time, so one region per thread serves every call. */
#define BUMP_BYTES 512u
static _Thread_local RT_TLS_HOST _Alignas(16) uint8_t tl_bump[BUMP_BYTES];
static _Thread_local RT_TLS_HOST size_t tl_bump_used; /* a multiple of 16 */

/* Blocks the region cannot hold: the kept small blocks, the cached large
 * one, or calloc. Out of line so that the region's path stays a few
 * instructions (no registers to save). */
static __attribute__((noinline)) void *scratch_block(apigen_call_ctx *cx, uint64_t count,
                                                     uint64_t elem)
{
    uint64_t bytes, total;
    if (!apigen_mul_size(count, elem, &bytes) || bytes > cx->budget ||
        !apigen_add_size(bytes, sizeof(scr), &total) || total > SIZE_MAX) {
        apigen_reject(cx, APIGEN_TOO_LARGE, "scratch");
        return NULL;
    }
    scr *s = NULL;
    if (bytes <= SMALL_BYTES) {
        if (small_free) {
            s = small_free;
            small_free = s->next;
            small_n--;
            memset(s + 1, 0, (size_t)bytes); /* only what this call gets */
        } else {
            s = calloc(1, sizeof(scr) + SMALL_BYTES);
        }
        if (s)
            s->size = SMALL_BYTES; /* kept again after the call */
    } else if (bytes >= CACHE_MIN) {
        pthread_once(&cache_once, cache_init);
        scr *c = pthread_getspecific(cache_key);
        if (c && c->size >= bytes && bytes >= c->size / 4) {
            (void)pthread_setspecific(cache_key, NULL);
            if (!owned_by(cx))
                memset(c + 1, 0, (size_t)bytes);
            s = c; /* keeps its size: the whole block goes back to the cache */
        }
    }
    if (!s)
        s = calloc(1, (size_t)total);
    if (!s) {
        apigen_reject(cx, APIGEN_NO_MEMORY, "scratch");
        return NULL;
    }
    cx->budget -= bytes;
    if (!s->size || s->size < bytes)
        s->size = bytes;
    s->next = cx->scratch;
    cx->scratch = s;
    return s + 1;
}

void *apigen_scratch(apigen_call_ctx *cx, uint64_t count, uint64_t elem)
{
    uint64_t bytes;
    if (apigen_mul_size(count, elem, &bytes) && bytes <= BUMP_BYTES - tl_bump_used &&
        bytes <= cx->budget) {
        uint8_t *p = tl_bump + tl_bump_used;
        size_t span = (size_t)(bytes + 15) & ~(size_t)15; /* stays <= BUMP_BYTES */
        static const uint8_t zeros[16];
        for (size_t i = 0; i < span; i += 16) /* whole 16-byte pieces: no memset call */
            memcpy(p + i, zeros, 16);
        tl_bump_used += span;
        cx->budget -= bytes;
        return p;
    }
    return scratch_block(cx, count, elem);
}

/* The blocks of scratch_block: kept, cached or freed. */
static __attribute__((noinline)) void free_blocks(apigen_call_ctx *cx)
{
    scr *s = cx->scratch, *keep = NULL;
    while (s) {
        scr *n = s->next;
        if (s->size >= CACHE_MIN && (!keep || s->size > keep->size)) {
            free(keep);
            keep = s;
        } else if (s->size == SMALL_BYTES && small_n < SMALL_KEEP) {
            if (!small_keyed) {
                pthread_once(&small_once, small_init);
                small_keyed = pthread_setspecific(small_key, (void *)1) == 0;
            }
            if (small_keyed) {
                s->next = small_free;
                small_free = s;
                small_n++;
            } else {
                free(s);
            }
        } else {
            free(s);
        }
        s = n;
    }
    cx->scratch = NULL;
    if (!keep && !cache_held)
        return; /* no large block used, none kept: nothing more to do */
    /* this call's largest block replaces the cached one; the cached one stays
     * while calls use it (rt_keep_warm: small calls between large copies) */
    pthread_once(&cache_once, cache_init);
    scr *c = pthread_getspecific(cache_key);
    if (keep) {
        if (c != keep)
            cache_free(c);
        (void)pthread_setspecific(cache_key, keep);
        cache_held = true;
        cache_owned = cx->session != NULL;
        if (cache_owned)
            rt_session_key(cx->session, cache_owner);
        cache_warm.used_ns = 0;
        (void)rt_keep_warm(&cache_warm, keep->size, keep->size, CACHE_MIN);
    } else if (c && !rt_keep_warm(&cache_warm, c->size, 0, CACHE_MIN)) {
        cache_free(c);
        (void)pthread_setspecific(cache_key, NULL);
        cache_held = false;
    } else if (!c) {
        cache_held = false;
    }
}

void rt_scratch_free_all(apigen_call_ctx *cx)
{
    tl_bump_used = 0;
    if (cx->scratch || cache_held)
        free_blocks(cx); /* else only the region was used (or nothing) */
}

/* ---- registered host memory ------------------------------------------------------ */
/* Only the shared arena (the guest's pinned memory, arena_host.c) is
 * registered. Receive buffers and scratch blocks never are: they hold bytes
 * of the guest's pageable memory, which the API treats as pageable (an
 * asynchronous copy from or to pageable memory is done with the buffer when
 * it returns); registered, such a copy becomes a transfer that outlives the
 * call while the buffer is reused (the first bytes of a 9 MiB asynchronous
 * host-to-device copy were the next frame's, 2026-11-26). */
static bool (*hm_reg)(void *p, size_t n);
static void (*hm_unreg)(void *p);

void apigen_set_host_memory(bool (*reg)(void *p, size_t n), void (*unreg)(void *p))
{
    hm_reg = reg && unreg ? reg : NULL;
    hm_unreg = reg && unreg ? unreg : NULL;
}

bool rt_host_pin(void *p, size_t n)
{
    return hm_reg && p && n && hm_reg(p, n);
}

void rt_host_unpin(void *p)
{
    if (hm_unreg && p)
        hm_unreg(p);
}
