/* Answers kept in the guest (spec `cache:`): one table per server session,
 * request bytes -> reply bytes. The generator allows it only for calls
 * whose request holds every input by value and whose reply is plain data
 * that stays true for the session (gen/check_cache.c), so an equal request
 * gets an equal answer. guest.c decides when a call may be answered here;
 * this file only stores. An entry is replaced only when a newer answer of
 * its group (spec `cache.group`) comes: a reader copies one out under the
 * lock. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

/* Bounds: a program asks a few hundred distinct questions (every device
 * attribute of every device); past these the calls simply go to the server. */
#define CACHE_BUCKETS 1024u
#define CACHE_MAX_ENTRIES 16384u
#define CACHE_MAX_KEY 4096u
#define CACHE_MAX_REPLY 65536u

typedef struct entry {
    struct entry *next;
    uint64_t hash;
    uint32_t call_id;
    uint32_t group;          /* spec `cache.group` (0: none) and the group's ... */
    uint64_t epoch;          /* ... epoch when the question was sent */
    size_t klen, rlen, roff; /* reply: rlen bytes, results from roff on */
    uint8_t *rep;            /* points into the same allocation, after the key */
    uint8_t key[];
} entry;

struct rt_cache {
    pthread_mutex_t mu;
    unsigned n;
    entry *b[CACHE_BUCKETS];
};

static uint64_t hash_of(uint32_t call_id, const uint8_t *k, size_t n)
{
    uint64_t h = 1469598103934665603ull ^ call_id; /* FNV-1a */
    for (size_t i = 0; i < n; i++) {
        h ^= k[i];
        h *= 1099511628211ull;
    }
    return h;
}

rt_cache *rt_cache_new(void)
{
    rt_cache *c = calloc(1, sizeof *c);
    if (c)
        pthread_mutex_init(&c->mu, NULL);
    return c;
}

/* The link that points to the entry of this request (*result NULL: none). */
static entry **find(rt_cache *c, uint64_t h, uint32_t call_id, const uint8_t *k, size_t n)
{
    entry **pp = &c->b[h % CACHE_BUCKETS];
    for (; *pp; pp = &(*pp)->next) {
        entry *e = *pp;
        if (e->hash == h && e->call_id == call_id && e->klen == n && !memcmp(e->key, k, n))
            break;
    }
    return pp;
}

bool rt_cache_find(rt_cache *c, uint32_t call_id, const uint8_t *key, size_t n, uint8_t **buf,
                   size_t *cap, size_t *len, size_t *off, uint32_t group, uint64_t epoch)
{
    if (!c || n > CACHE_MAX_KEY)
        return false;
    uint64_t h = hash_of(call_id, key, n);
    bool hit = false;
    pthread_mutex_lock(&c->mu);
    entry *e = *find(c, h, call_id, key, n);
    if (e && (e->group != group || e->epoch != epoch))
        e = NULL; /* kept before its group was forgotten */
    if (e && *cap < e->rlen) {
        uint8_t *nb = realloc(*buf, e->rlen);
        if (nb) {
            *buf = nb;
            *cap = e->rlen;
        }
    }
    if (e && *cap >= e->rlen) {
        memcpy(*buf, e->rep, e->rlen);
        *len = e->rlen;
        *off = e->roff;
        hit = true;
    }
    pthread_mutex_unlock(&c->mu);
    return hit;
}

void rt_cache_add(rt_cache *c, uint32_t call_id, const uint8_t *key, size_t n, const uint8_t *rep,
                  size_t rlen, size_t roff, uint32_t group, uint64_t epoch)
{
    if (!c || n > CACHE_MAX_KEY || rlen > CACHE_MAX_REPLY || roff > rlen)
        return;
    uint64_t h = hash_of(call_id, key, n);
    pthread_mutex_lock(&c->mu);
    entry **pp = find(c, h, call_id, key, n), *old = *pp;
    if (old && group && (old->group != group || epoch > old->epoch)) {
        *pp = old->next; /* an answer of an older epoch of its group: replaced */
        free(old);
        c->n--;
        old = NULL;
    }
    if (c->n < CACHE_MAX_ENTRIES && !old) {
        entry *e = malloc(sizeof *e + n + rlen);
        if (e) {
            e->hash = h;
            e->call_id = call_id;
            e->group = group;
            e->epoch = epoch;
            e->klen = n;
            e->rlen = rlen;
            e->roff = roff;
            e->rep = e->key + n;
            memcpy(e->key, key, n);
            memcpy(e->rep, rep, rlen);
            e->next = c->b[h % CACHE_BUCKETS];
            c->b[h % CACHE_BUCKETS] = e;
            c->n++;
        }
    }
    pthread_mutex_unlock(&c->mu);
}
