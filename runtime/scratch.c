/* Per-call scratch memory on the server: zeroed, overflow-checked, bounded
 * by the per-call budget (--max-arg / APIGEN_MAX_ARG), freed after the reply. */
#define _GNU_SOURCE
#include "rt_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* One large block per server thread is kept after a call and reused (zeroed
 * again) by the next call that needs most of it: a run of large device-to-
 * host copies then writes into warm memory instead of faulting in fresh
 * pages on every call. A call that does not use it releases it. */
#define CACHE_MIN (1u << 20)
static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;
static void cache_init(void) { (void)pthread_key_create(&cache_key, free); }

typedef struct scr {
    struct scr *next;
    uint64_t size;
} scr; /* 16 bytes: what follows stays 16-byte aligned like malloc's */

_Static_assert(sizeof(scr) % 16 == 0, "scratch header keeps 16-byte alignment");

void apigen_reject(apigen_call_ctx *cx, apigen_status st, const char *what)
{
    if (cx->status == APIGEN_OK && st != APIGEN_OK) {
        cx->status = st;
        cx->reject_what = what;
    }
}

void apigen_result(apigen_call_ctx *cx, int64_t api_error)
{
    cx->has_result = true;
    cx->result_error = api_error;
}

void *apigen_scratch(apigen_call_ctx *cx, uint64_t count, uint64_t elem)
{
    uint64_t bytes, total;
    if (!apigen_mul_size(count, elem, &bytes) || bytes > cx->budget ||
        !apigen_add_size(bytes, sizeof(scr), &total) || total > SIZE_MAX) {
        apigen_reject(cx, APIGEN_TOO_LARGE, "scratch");
        return NULL;
    }
    scr *s = NULL;
    if (bytes >= CACHE_MIN) {
        pthread_once(&cache_once, cache_init);
        scr *c = pthread_getspecific(cache_key);
        if (c && c->size >= bytes && bytes >= c->size / 4) {
            (void)pthread_setspecific(cache_key, NULL);
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

void rt_scratch_free_all(apigen_call_ctx *cx)
{
    scr *s = cx->scratch, *keep = NULL;
    while (s) {
        scr *n = s->next;
        if (s->size >= CACHE_MIN && (!keep || s->size > keep->size)) {
            free(keep);
            keep = s;
        } else {
            free(s);
        }
        s = n;
    }
    cx->scratch = NULL;
    /* this call's largest block replaces the cached one; a call without one drops it */
    pthread_once(&cache_once, cache_init);
    free(pthread_getspecific(cache_key));
    (void)pthread_setspecific(cache_key, keep);
}
