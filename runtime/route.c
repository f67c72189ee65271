/* Guest side of several servers (APIGEN_SERVER=url1,url2,...): which server
 * a call goes to. A handle names its server by its session's salt (the high
 * bits of every id the session hands out, guest ids included), a device
 * address by the ranges each server's calls created, a device ordinal by
 * the servers' device counts (server 0's devices first); anything else goes
 * to the calling thread's current server. With one server every answer is
 * "any" after one relaxed load. docs/internals.md, "Several servers". */
#define _GNU_SOURCE
#include "rt_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define MAX_APIS 8
#define URL_MAX 512

typedef struct drange {
    uint64_t base, end;
    /* times this very range was noted and not forgotten: a free the guest
     * missed, or a replay (replay.c) whose threads hold at once the same
     * address that their recorded threads held one after the other */
    uint32_t refs;
} drange;

typedef struct dtable { /* one server's device ranges, sorted by base, disjoint */
    drange *r;
    size_t n, cap;
} dtable;

typedef struct rapi {
    const apigen_api *api;
    unsigned n;                               /* servers */
    char urls[RT_MAX_SERVERS][URL_MAX];
    bool url_ok[RT_MAX_SERVERS];
    _Atomic uint64_t salt[RT_MAX_SERVERS];   /* 0: no session */
    pthread_mutex_t count_mu;                 /* held while the servers are counted */
    /* devices per server, one table per counting function: a family's APIs
     * share servers, but each numbers the devices it sees (one API may
     * count only the devices visible to it, another every device), so each
     * API's ordinals use its own count */
    struct {
        _Atomic(apigen_count_fn) fn; /* set (release) once count[] is filled */
        int64_t count[RT_MAX_SERVERS];
    } counts[RT_FAMILY_MAX];
    pthread_rwlock_t dev_rw;
    dtable dev[RT_MAX_SERVERS];
    void (*hook)(unsigned server);
} rapi;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static rapi *g_r[MAX_APIS];
static _Atomic unsigned g_nr;
int apigen_route_multi_; /* some API has more than one server (__atomic_*: apigen_rt.h reads it) */

/* The calling thread's current server per API (only after a selection). */
static _Thread_local struct {
    const apigen_api *api;
    unsigned server;
} tl_cur[MAX_APIS];
static _Thread_local unsigned tl_ncur;
static _Thread_local int tl_building = -1;

/* a family's APIs share servers, salts, device ranges */
__attribute__((noinline)) static rapi *find_family(const apigen_api *api)
{
    unsigned n = atomic_load_explicit(&g_nr, memory_order_acquire);
    for (unsigned i = 0; i < n; i++)
        if (rt_same_family(g_r[i]->api, api))
            return g_r[i];
    return NULL;
}

/* the API that made the table first (every call of a one-API process) inline */
static inline rapi *find(const apigen_api *api)
{
    unsigned n = atomic_load_explicit(&g_nr, memory_order_acquire);
    return n && g_r[0]->api == api ? g_r[0] : find_family(api);
}

/* The API's servers, read from APIGEN_SERVER the first time. */
static rapi *get(const apigen_api *api)
{
    rapi *r = find(api);
    if (r)
        return r;
    pthread_mutex_lock(&g_mu);
    r = find(api);
    if (!r && atomic_load(&g_nr) < MAX_APIS && (r = calloc(1, sizeof *r))) {
        r->api = api;
        pthread_mutex_init(&r->count_mu, NULL);
        pthread_rwlock_init(&r->dev_rw, NULL);
        const char *list = getenv("APIGEN_SERVER");
        r->n = list && *list ? apigen_url_list_count(list) : 1;
        if (r->n > RT_MAX_SERVERS) {
            apigen_log("%s: APIGEN_SERVER names %u servers; using the first %u", api->name, r->n,
                       RT_MAX_SERVERS);
            r->n = RT_MAX_SERVERS;
        }
        for (unsigned k = 0; list && *list && k < r->n; k++)
            r->url_ok[k] = apigen_url_list_item(list, k, r->urls[k], URL_MAX);
        g_r[atomic_load(&g_nr)] = r;
        atomic_store_explicit(&g_nr, atomic_load(&g_nr) + 1, memory_order_release);
        if (r->n > 1)
            __atomic_store_n(&apigen_route_multi_, 1, __ATOMIC_SEQ_CST);
    }
    pthread_mutex_unlock(&g_mu);
    return r;
}

unsigned rt_servers(const apigen_api *api)
{
    rapi *r = get(api);
    return r ? r->n : 1;
}

bool rt_server_url(const apigen_api *api, unsigned k, char *out, size_t cap)
{
    rapi *r = get(api);
    if (!r || k >= r->n || !r->url_ok[k] || strlen(r->urls[k]) >= cap)
        return false;
    strcpy(out, r->urls[k]);
    return true;
}

unsigned apigen_server_count(const apigen_api *api)
{
    return rt_servers(api);
}

void rt_route_salt(const apigen_api *api, unsigned k, uint64_t salt)
{
    rapi *r = get(api);
    if (r && k < r->n)
        atomic_store(&r->salt[k], salt);
}

bool rt_route_salt_taken(const apigen_api *api, unsigned k, uint64_t salt)
{
    rapi *r = get(api);
    for (unsigned i = 0; r && i < r->n; i++)
        if (i != k && atomic_load(&r->salt[i]) == salt)
            return true;
    return false;
}

void rt_route_forget_sessions(void)
{
    unsigned n = atomic_load(&g_nr);
    for (unsigned i = 0; i < n; i++)
        for (unsigned k = 0; k < g_r[i]->n; k++)
            atomic_store(&g_r[i]->salt[k], 0);
}

__attribute__((noinline)) static unsigned route_current_multi(const apigen_api *api)
{
    for (unsigned i = 0; i < tl_ncur; i++)
        if (rt_same_family(tl_cur[i].api, api))
            return tl_cur[i].server;
    return 0;
}

unsigned rt_route_current(const apigen_api *api)
{
    /* one server: it is every thread's (a selection needs a call first, and
     * the first call read APIGEN_SERVER); small enough to inline into every call */
    if (!__atomic_load_n(&apigen_route_multi_, __ATOMIC_RELAXED))
        return 0;
    return route_current_multi(api);
}

int apigen_current_server(const apigen_api *api)
{
    return (int)rt_route_current(api);
}

void apigen_select_server(const apigen_api *api, int server)
{
    if (server < 0)
        return;
    for (unsigned i = 0; i < tl_ncur; i++)
        if (rt_same_family(tl_cur[i].api, api)) {
            tl_cur[i].server = (unsigned)server;
            return;
        }
    if (server == 0 || tl_ncur == MAX_APIS)
        return; /* 0 is what an API without an entry gets */
    tl_cur[tl_ncur].api = api;
    tl_cur[tl_ncur].server = (unsigned)server;
    tl_ncur++;
}

/* ---- handles ------------------------------------------------------------------ */
extern inline int apigen_route_id(const apigen_api *api, uint64_t id);

int apigen_route_id_multi(const apigen_api *api, uint64_t id)
{
    uint64_t salt = (id >> 32) & 0x7fffffffu; /* RT_GID_BIT aside: guest ids too */
    rapi *r = salt ? find(api) : NULL;
    for (unsigned k = 0; r && k < r->n; k++)
        if (atomic_load_explicit(&r->salt[k], memory_order_relaxed) == salt)
            return (int)k;
    return APIGEN_ROUTE_ANY;
}

/* ---- device ranges ------------------------------------------------------------ */
/* Index of the first range with base > addr. */
static size_t upper(const dtable *t, uint64_t addr)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->r[mid].base <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static bool holds(const dtable *t, uint64_t addr)
{
    size_t i = upper(t, addr);
    return i > 0 && addr < t->r[i - 1].end;
}

void apigen_dev_note(const apigen_api *api, int server, uint64_t addr, uint64_t bytes)
{
    if (!addr || server < 0) /* kept with one server too: apigen_vouch_dev */
        return;
    rt_lanes_ahead(api, server, bytes); /* large copies to it are likely to come */
    rapi *r = get(api);
    if (!r || (unsigned)server >= r->n)
        return;
    uint64_t end = addr + (bytes ? bytes : 1);
    if (end < addr)
        end = UINT64_MAX;
    pthread_rwlock_wrlock(&r->dev_rw);
    dtable *t = &r->dev[server];
    size_t i = upper(t, addr);
    if (i > 0 && t->r[i - 1].base == addr && t->r[i - 1].end == end) {
        if (t->r[i - 1].refs < UINT32_MAX)
            t->r[i - 1].refs++;
    } else if (i > 0 && t->r[i - 1].end > addr) {
        t->r[i - 1] = (drange){addr, end, 1}; /* the server reused freed memory we missed */
    } else {
        if (t->n == t->cap) {
            size_t nc = t->cap ? t->cap * 2 : 64;
            drange *nr = realloc(t->r, nc * sizeof *nr);
            if (!nr) {
                pthread_rwlock_unlock(&r->dev_rw);
                return; /* unknown: its calls go to the current server */
            }
            t->r = nr;
            t->cap = nc;
        }
        memmove(&t->r[i + 1], &t->r[i], (t->n - i) * sizeof *t->r);
        t->r[i] = (drange){addr, end, 1};
        t->n++;
    }
    pthread_rwlock_unlock(&r->dev_rw);
}

void apigen_dev_forget(const apigen_api *api, int server, uint64_t addr)
{
    if (!addr || server < 0)
        return;
    rapi *r = get(api);
    if (!r || (unsigned)server >= r->n)
        return;
    pthread_rwlock_wrlock(&r->dev_rw);
    dtable *t = &r->dev[server];
    size_t i = upper(t, addr);
    if (i > 0 && addr < t->r[i - 1].end && t->r[i - 1].refs > 1) {
        t->r[i - 1].refs--;
    } else if (i > 0 && addr < t->r[i - 1].end) {
        memmove(&t->r[i - 1], &t->r[i], (t->n - i) * sizeof *t->r);
        t->n--;
    }
    pthread_rwlock_unlock(&r->dev_rw);
}

bool apigen_vouch_dev(const apigen_call *c, uint64_t addr)
{
    if (!addr)
        return true;
    rapi *r = find(c->api);
    if (!r || c->server < 0 || (unsigned)c->server >= r->n)
        return false;
    pthread_rwlock_rdlock(&r->dev_rw);
    bool in = holds(&r->dev[c->server], addr);
    pthread_rwlock_unlock(&r->dev_rw);
    return in;
}

bool apigen_dev_noted(const apigen_api *api, uint64_t addr)
{
    rapi *r = addr ? find(api) : NULL;
    bool in = false;
    if (!r)
        return false;
    pthread_rwlock_rdlock(&r->dev_rw);
    for (unsigned k = 0; k < r->n && !in; k++)
        in = holds(&r->dev[k], addr);
    pthread_rwlock_unlock(&r->dev_rw);
    return in;
}

bool apigen_dev_within(const apigen_api *api, int server, uint64_t addr, uint64_t bytes)
{
    rapi *r = addr ? find(api) : NULL;
    if (!r || server < 0 || (unsigned)server >= r->n)
        return false;
    pthread_rwlock_rdlock(&r->dev_rw);
    const dtable *t = &r->dev[server];
    size_t i = upper(t, addr);
    bool in = i > 0 && addr < t->r[i - 1].end && bytes <= t->r[i - 1].end - addr;
    pthread_rwlock_unlock(&r->dev_rw);
    return in;
}

/* The server's device checks also take the client's arena (devmem.c:
 * host memory the accelerator reaches, a copy into the API's pinned memory
 * over a local transport): so does the guest's vouch. */
bool apigen_vouch_dev_bytes(const apigen_call *c, uint64_t addr, uint64_t bytes)
{
    return !addr || apigen_dev_within(c->api, c->server, addr, bytes) ||
           rt_arena_peer_holds(c->api, addr, bytes);
}

bool apigen_vouch_dev_elems(const apigen_call *c, const void *buf, uint64_t bytes)
{
    const unsigned char *p = buf;
    for (uint64_t o = 0; p && o + sizeof(uint64_t) <= bytes; o += sizeof(uint64_t)) {
        uint64_t v;
        memcpy(&v, p + o, sizeof v); /* the caller's buffer need not be aligned */
        if (!apigen_vouch_dev(c, v))
            return false;
    }
    return true;
}

bool apigen_vouch_id_elems(const apigen_call *c, const void *buf, uint64_t bytes, size_t elem)
{
    const unsigned char *p = buf;
    if (elem != sizeof(uint64_t))
        return false; /* a narrow id carries no salt to vouch by */
    for (uint64_t o = 0; p && o + elem <= bytes; o += elem) {
        uint64_t v;
        memcpy(&v, p + o, sizeof v);
        if (!apigen_vouch_id(c, v))
            return false;
    }
    return true;
}

bool apigen_dev_overruns(const apigen_call *c, uint64_t addr, uint64_t bytes, const char *what)
{
    rapi *r = addr && bytes ? find(c->api) : NULL;
    if (!r || c->server < 0 || (unsigned)c->server >= r->n)
        return false;
    pthread_rwlock_rdlock(&r->dev_rw);
    const dtable *t = &r->dev[c->server];
    size_t i = upper(t, addr);
    bool in = i > 0 && t->r[i - 1].end > addr;
    uint64_t base = in ? t->r[i - 1].base : 0, end = in ? t->r[i - 1].end : 0;
    pthread_rwlock_unlock(&r->dev_rw);
    if (!in || bytes <= end - addr)
        return false;
    const char *fn = c->call_id < c->api->ncalls ? c->api->call_names[c->call_id] : "?";
    apigen_log("%s: %s: [%#llx, +%llu) runs past the end of the device allocation "
               "[%#llx, %#llx) that holds it: refused before any host memory is read (the "
               "API's invalid-value error, as the server would answer)",
               fn, what, (unsigned long long)addr, (unsigned long long)bytes,
               (unsigned long long)base, (unsigned long long)end);
    return true;
}

extern inline int apigen_route_dev(const apigen_api *api, uint64_t addr);

int apigen_route_dev_multi(const apigen_api *api, uint64_t addr)
{
    rapi *r = find(api);
    if (!r)
        return APIGEN_ROUTE_ANY;
    /* servers on one accelerator may hand out the same addresses: the
     * current server's ranges decide first */
    unsigned cur = rt_route_current(api);
    int found = APIGEN_ROUTE_ANY;
    pthread_rwlock_rdlock(&r->dev_rw);
    if (cur < r->n && holds(&r->dev[cur], addr))
        found = (int)cur;
    for (unsigned k = 0; found < 0 && k < r->n; k++)
        if (holds(&r->dev[k], addr))
            found = (int)k;
    pthread_rwlock_unlock(&r->dev_rw);
    return found;
}

/* ---- device ordinals ------------------------------------------------------------ */
/* Every server's device count by COUNT, asked once per counting function
 * (a server that fails counts 0); NULL when no table is left. */
static const int64_t *count_all(rapi *r, apigen_count_fn count)
{
    for (unsigned t = 0; t < RT_FAMILY_MAX; t++) {
        apigen_count_fn f = atomic_load_explicit(&r->counts[t].fn, memory_order_acquire);
        if (f == count)
            return r->counts[t].count;
        if (!f)
            break;
    }
    const int64_t *out = NULL;
    pthread_mutex_lock(&r->count_mu);
    for (unsigned t = 0; t < RT_FAMILY_MAX && !out; t++) {
        apigen_count_fn f = atomic_load(&r->counts[t].fn);
        if (f == count)
            out = r->counts[t].count;
        else if (!f) {
            for (unsigned k = 0; k < r->n; k++) {
                int64_t c = 0;
                if (!count(k, &c) || c < 0)
                    c = 0;
                r->counts[t].count[k] = c;
            }
            atomic_store_explicit(&r->counts[t].fn, count, memory_order_release);
            out = r->counts[t].count;
        }
    }
    pthread_mutex_unlock(&r->count_mu);
    return out;
}

int apigen_route_ordinal(const apigen_api *api, apigen_count_fn count, int64_t g, int64_t *local)
{
    *local = g;
    rapi *r = get(api);
    if (!r || r->n <= 1 || !count)
        return APIGEN_ROUTE_ANY;
    if (g < 0)
        return APIGEN_ROUTE_ANY;
    const int64_t *n = count_all(r, count);
    if (!n)
        return APIGEN_ROUTE_ANY;
    int64_t base = 0;
    for (unsigned k = 0; k < r->n; k++) {
        if (g < base + n[k]) {
            *local = g - base;
            return (int)k;
        }
        if (k + 1 < r->n)
            base += n[k];
    }
    *local = g - base; /* past every device: still past the last server's */
    return (int)r->n - 1;
}

int64_t apigen_ordinal_global(const apigen_api *api, apigen_count_fn count, int server,
                              int64_t local)
{
    rapi *r = get(api);
    if (!r || r->n <= 1 || !count || server <= 0 || local < 0)
        return local;
    const int64_t *n = count_all(r, count);
    if (!n)
        return local;
    int64_t base = 0;
    for (int k = 0; k < server && k < (int)r->n; k++)
        base += n[k];
    return base + local;
}

/* ---- the session hook and the call being built ------------------------------- */
void apigen_set_session_hook(const apigen_api *api, void (*hook)(unsigned server))
{
    rapi *r = get(api);
    if (r)
        r->hook = hook;
}

void (*rt_route_hook(const apigen_api *api))(unsigned)
{
    rapi *r = find(api);
    return r ? r->hook : NULL;
}

void rt_route_building(int server)
{
    tl_building = server;
}

int apigen_building_server(void)
{
    return tl_building;
}
