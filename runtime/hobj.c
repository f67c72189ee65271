/* Handle objects (apigen_hobj.h): one object per server id, found by id
 * (ids coming back from the server) and by address (handles the
 * application passes in). Two chained hash tables over the same nodes,
 * under one lock; callbacks arrive on another thread. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "apigen_hobj.h"

typedef struct hobj {
    const void *first; /* what the application's side reads through the handle */
    uint64_t id;
    struct hobj *next_id, *next_ptr;
    int64_t refs;      /* references the application holds (creates/retains - releases) */
    bool owned;        /* a call created it: freed when refs reach 0 */
} hobj;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static hobj **by_id, **by_ptr;
static size_t nbuckets, count;

static size_t hash_u64(uint64_t v, size_t nb)
{
    v ^= v >> 33;
    v *= 0xff51afd7ed558ccdULL;
    v ^= v >> 33;
    return (size_t)(v & (nb - 1));
}

static size_t slot_ptr(const void *p, size_t nb) { return hash_u64((uint64_t)(uintptr_t)p, nb); }

static bool grow(void)
{
    size_t nb = nbuckets ? nbuckets * 2 : 256;
    hobj **bi = calloc(nb, sizeof *bi), **bp = calloc(nb, sizeof *bp);
    if (!bi || !bp) {
        free(bi);
        free(bp);
        return false;
    }
    for (size_t i = 0; i < nbuckets; i++)
        for (hobj *o = by_id[i], *next; o; o = next) {
            next = o->next_id;
            size_t k = hash_u64(o->id, nb);
            o->next_id = bi[k];
            bi[k] = o;
        }
    for (size_t i = 0; i < nbuckets; i++)
        for (hobj *o = by_ptr[i], *next; o; o = next) {
            next = o->next_ptr;
            size_t k = slot_ptr(o, nb);
            o->next_ptr = bp[k];
            bp[k] = o;
        }
    free(by_id);
    free(by_ptr);
    by_id = bi;
    by_ptr = bp;
    nbuckets = nb;
    return true;
}

static hobj *find_ptr(const void *h)
{
    if (!nbuckets)
        return NULL;
    for (hobj *o = by_ptr[slot_ptr(h, nbuckets)]; o; o = o->next_ptr)
        if ((const void *)o == h)
            return o;
    return NULL;
}

void *apigen_hobj_get(uint64_t id, const void *first)
{
    if (id == 0)
        return NULL;
    pthread_mutex_lock(&mu);
    hobj *o = NULL;
    if (nbuckets)
        for (o = by_id[hash_u64(id, nbuckets)]; o && o->id != id; o = o->next_id)
            continue;
    if (!o && (count < nbuckets || grow()) && (o = calloc(1, sizeof *o)) != NULL) {
        o->first = first;
        o->id = id;
        size_t k = hash_u64(id, nbuckets);
        o->next_id = by_id[k];
        by_id[k] = o;
        k = slot_ptr(o, nbuckets);
        o->next_ptr = by_ptr[k];
        by_ptr[k] = o;
        count++;
    }
    pthread_mutex_unlock(&mu);
    if (!o)
        apigen_log("handle objects: out of memory for id %#llx", (unsigned long long)id);
    return o;
}

uint64_t apigen_hobj_id(const void *h)
{
    if (!h)
        return 0;
    pthread_mutex_lock(&mu);
    hobj *o = find_ptr(h);
    uint64_t id = o ? o->id : 1; /* not ours (or freed): an id no session holds */
    pthread_mutex_unlock(&mu);
    return id;
}

bool apigen_hobj_known(const void *h)
{
    if (!h)
        return false;
    pthread_mutex_lock(&mu);
    bool r = find_ptr(h) != NULL;
    pthread_mutex_unlock(&mu);
    return r;
}

void apigen_hobj_ref(const void *h, int delta, bool owned)
{
    if (!h)
        return;
    pthread_mutex_lock(&mu);
    hobj *o = find_ptr(h);
    if (o) {
        o->refs += delta;
        o->owned |= owned;
        if (o->owned && o->refs <= 0) {
            hobj **pp = &by_id[hash_u64(o->id, nbuckets)];
            while (*pp != o)
                pp = &(*pp)->next_id;
            *pp = o->next_id;
            pp = &by_ptr[slot_ptr(o, nbuckets)];
            while (*pp != o)
                pp = &(*pp)->next_ptr;
            *pp = o->next_ptr;
            count--;
            free(o);
        }
    }
    pthread_mutex_unlock(&mu);
}

void apigen_hobj_ids_to_objs(void *p, uint64_t nbytes, const void *first)
{
    unsigned char *b = p;
    for (uint64_t i = 0; i + sizeof(uintptr_t) <= nbytes; i += sizeof(uintptr_t)) {
        uintptr_t v;
        memcpy(&v, b + i, sizeof v);
        void *o = apigen_hobj_get((uint64_t)v, first);
        memcpy(b + i, &o, sizeof o);
    }
}

bool apigen_hobj_put_keyed(apigen_wr *w, const void *p, uint64_t n, size_t elem,
                           const int64_t *keys, size_t nkeys)
{
    if (!p)
        return apigen_put_u8(w, 0);
    if (!apigen_put_u8(w, 1))
        return false;
    unsigned char *at = apigen_put_bytes_reserve(w, n);
    if (!at)
        return false;
    memcpy(at, p, (size_t)n);
    if (elem != sizeof(uint64_t))
        return true;
    for (uint64_t i = 0; i + 2 * elem <= n; i += 2 * elem) {
        int64_t key;
        uint64_t v;
        memcpy(&key, at + i, sizeof key);
        for (size_t k = 0; k < nkeys; k++)
            if (keys[k] == key) {
                memcpy(&v, at + i + elem, sizeof v);
                v = apigen_hobj_id((const void *)(uintptr_t)v);
                memcpy(at + i + elem, &v, sizeof v);
                break;
            }
    }
    return true;
}
