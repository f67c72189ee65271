/* Handle states the guest tracks (spec `types.handles.H.state`): a value per
 * handle that setter calls change and that decides how later calls travel
 * (a library's pointer mode: whether a scalar is host or device memory). Keyed by
 * (the stub's table of initial values, handle id); an open-addressing hash
 * under one mutex: a lookup per call that reads a state, a write per setter. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "apigen_rt.h"

#define HSTATE_MAX 8

typedef struct hs_entry {
    const int64_t *table; /* NULL: free; (const int64_t *)1: deleted */
    uint64_t id;
    int64_t v[HSTATE_MAX];
} hs_entry;

static pthread_mutex_t hs_lock = PTHREAD_MUTEX_INITIALIZER;
static hs_entry *hs_tab;
static size_t hs_cap, hs_used; /* used counts live and deleted slots */
#define HS_DELETED ((const int64_t *)1)

static size_t hs_hash(const int64_t *table, uint64_t id)
{
    uint64_t h = id * 0x9E3779B97F4A7C15ull ^ (uint64_t)(uintptr_t)table;
    h ^= h >> 29;
    return (size_t)h;
}

/* The entry of (table, id), or NULL. Lock held. */
static hs_entry *hs_find(const int64_t *table, uint64_t id)
{
    if (!hs_cap) return NULL;
    for (size_t i = hs_hash(table, id) & (hs_cap - 1), k = 0; k < hs_cap;
         i = (i + 1) & (hs_cap - 1), k++) {
        hs_entry *e = &hs_tab[i];
        if (!e->table) return NULL;
        if (e->table == table && e->id == id) return e;
    }
    return NULL;
}

/* Rehash into a table of cap slots (a power of two). Lock held. */
static bool hs_resize(size_t cap)
{
    hs_entry *nt = calloc(cap, sizeof *nt);
    if (!nt) return false;
    size_t used = 0;
    for (size_t j = 0; j < hs_cap; j++) {
        hs_entry *e = &hs_tab[j];
        if (!e->table || e->table == HS_DELETED) continue;
        size_t i = hs_hash(e->table, e->id) & (cap - 1);
        while (nt[i].table) i = (i + 1) & (cap - 1);
        nt[i] = *e;
        used++;
    }
    free(hs_tab);
    hs_tab = nt;
    hs_cap = cap;
    hs_used = used;
    return true;
}

/* The entry of (table, id), made with the initial values when new; NULL when
 * memory runs out (the state is then not tracked: calls use the initial
 * value and the server refuses a mismatch). Lock held. */
static hs_entry *hs_make(const int64_t *table, size_t n, uint64_t id)
{
    hs_entry *e = hs_find(table, id);
    if (e) return e;
    if ((hs_used + 1) * 2 > hs_cap && !hs_resize(hs_cap ? hs_cap * 2 : 64)) return NULL;
    size_t i = hs_hash(table, id) & (hs_cap - 1);
    while (hs_tab[i].table && hs_tab[i].table != HS_DELETED) i = (i + 1) & (hs_cap - 1);
    e = &hs_tab[i];
    if (!e->table) hs_used++;
    e->table = table;
    e->id = id;
    memset(e->v, 0, sizeof e->v);
    memcpy(e->v, table, (n < HSTATE_MAX ? n : HSTATE_MAX) * sizeof *table);
    return e;
}

void apigen_hstate_add(const int64_t *table, size_t n, uint64_t id)
{
    pthread_mutex_lock(&hs_lock);
    hs_entry *e = hs_make(table, n, id);
    if (e) memcpy(e->v, table, (n < HSTATE_MAX ? n : HSTATE_MAX) * sizeof *table);
    pthread_mutex_unlock(&hs_lock);
}

void apigen_hstate_set(const int64_t *table, size_t n, uint64_t id, unsigned slot, int64_t v)
{
    if (slot >= HSTATE_MAX) return;
    pthread_mutex_lock(&hs_lock);
    hs_entry *e = hs_make(table, n, id);
    if (e) e->v[slot] = v;
    pthread_mutex_unlock(&hs_lock);
}

bool apigen_hstate_get(const int64_t *table, uint64_t id, unsigned slot, int64_t *v)
{
    if (slot >= HSTATE_MAX) return false;
    pthread_mutex_lock(&hs_lock);
    hs_entry *e = hs_find(table, id);
    if (e) *v = e->v[slot];
    pthread_mutex_unlock(&hs_lock);
    return e != NULL;
}

void apigen_hstate_forget(const int64_t *table, uint64_t id)
{
    pthread_mutex_lock(&hs_lock);
    hs_entry *e = hs_find(table, id);
    if (e) e->table = HS_DELETED;
    pthread_mutex_unlock(&hs_lock);
}
