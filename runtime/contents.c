/* Contents of handles whose every change goes through the guest (spec
 * `types.handles.H.contents`, docs/spec.md "Memoized queries"): per handle
 * id, what its create and each setter call gave, as records (call, key
 * bytes) -> value bytes kept sorted, so equal contents serialize to equal
 * bytes whatever order the setters ran in. A memoized query (spec
 * `cache: {contents: [...]}`) puts them in its key in place of the id, so
 * two descriptors made alike ask one question, and a changed attribute or a
 * destroyed handle never meets an answer of other contents.
 *
 * An entry vouches for the real object only while nothing says otherwise:
 * it is not used by another thread than the one that changed it last (that
 * thread's queued calls may not have reached the server: the server would
 * answer for the contents before them), nor once an error of a queued call
 * came back after its last change (the call that failed may be one of its
 * setters, which the entry holds and the real object does not). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

/* Bounds: a descriptor holds a few dozen attributes of a few bytes. Past
 * them the handle's contents are unknown and its queries go to the server. */
#define CT_BUCKETS 256u
#define CT_MAX_RECS 64u
#define CT_MAX_BYTES 2048u

typedef struct rec {
    uint32_t call, klen, vlen;
    uint8_t *b; /* key, then value */
} rec;

typedef struct cent {
    struct cent *next;
    uint64_t id;
    uint64_t owner; /* the thread that changed it last (thread_token) */
    uint64_t taint; /* g_taint at its last change */
    uint32_t create_call; /* the record of the create, which a whole set keeps */
    unsigned n;
    size_t bytes;
    rec r[CT_MAX_RECS];
} cent;

static pthread_mutex_t ct_mu = PTHREAD_MUTEX_INITIALIZER;
static cent *ct_b[CT_BUCKETS];
static atomic_uint_fast64_t g_taint, g_tokens;
static _Thread_local uint64_t tl_token;

static uint64_t thread_token(void)
{
    if (!tl_token)
        tl_token = atomic_fetch_add(&g_tokens, 1) + 1;
    return tl_token;
}

void rt_contents_taint(void)
{
    atomic_fetch_add(&g_taint, 1);
}

uint64_t rt_contents_taint_now(void)
{
    return atomic_load(&g_taint);
}

static cent **slot_of(uint64_t id)
{
    cent **pp = &ct_b[(id * 0x9E3779B97F4A7C15ull >> 56) % CT_BUCKETS];
    while (*pp && (*pp)->id != id)
        pp = &(*pp)->next;
    return pp;
}

static void drop_locked(cent **pp)
{
    cent *e = *pp;
    if (!e)
        return;
    *pp = e->next;
    for (unsigned i = 0; i < e->n; i++)
        free(e->r[i].b);
    free(e);
}

/* The bytes a writer holds (NULL: it failed or ran out of memory). */
static const uint8_t *bytes_of(const apigen_wr *w, size_t *n)
{
    if (!w || w->failed || w->next) /* zero-copy pieces: not in buf */
        return NULL;
    *n = w->len;
    return w->buf ? w->buf : (const uint8_t *)"";
}

static int rec_cmp(uint32_t call, const uint8_t *k, size_t kn, const rec *r)
{
    if (call != r->call)
        return call < r->call ? -1 : 1;
    if (kn != r->klen)
        return kn < r->klen ? -1 : 1;
    return kn ? memcmp(k, r->b, kn) : 0;
}

/* Sets record (call, key) of e to val; false: past the bounds or no memory. */
static bool put_rec(cent *e, uint32_t call, const uint8_t *k, size_t kn, const uint8_t *v, size_t vn)
{
    unsigned i = 0;
    int c = 1;
    while (i < e->n && (c = rec_cmp(call, k, kn, &e->r[i])) > 0)
        i++;
    size_t was = i < e->n && c == 0 ? e->r[i].klen + e->r[i].vlen : 0;
    if (e->bytes - was + kn + vn > CT_MAX_BYTES || (c != 0 && e->n == CT_MAX_RECS))
        return false;
    uint8_t *b = malloc(kn + vn ? kn + vn : 1);
    if (!b)
        return false;
    if (kn)
        memcpy(b, k, kn);
    if (vn)
        memcpy(b + kn, v, vn);
    if (c == 0) {
        free(e->r[i].b);
    } else {
        memmove(&e->r[i + 1], &e->r[i], (e->n - i) * sizeof *e->r);
        e->n++;
    }
    e->r[i] = (rec){call, (uint32_t)kn, (uint32_t)vn, b};
    e->bytes = e->bytes - was + kn + vn;
    return true;
}

void apigen_contents_create(uint32_t call, uint64_t id, const apigen_wr *vals)
{
    size_t vn = 0;
    const uint8_t *v = bytes_of(vals, &vn);
    pthread_mutex_lock(&ct_mu);
    cent **pp = slot_of(id);
    drop_locked(pp); /* ids are not reused: a stale entry only if a create failed */
    cent *e = v && id ? calloc(1, sizeof *e) : NULL;
    if (e && put_rec(e, call, NULL, 0, v, vn)) {
        e->id = id;
        e->create_call = call;
        e->owner = thread_token();
        e->taint = atomic_load(&g_taint);
        e->next = *pp;
        *pp = e;
    } else {
        free(e); /* unknown: its queries go to the server */
    }
    pthread_mutex_unlock(&ct_mu);
}

void apigen_contents_set(uint32_t call, uint64_t id, const apigen_wr *key, const apigen_wr *vals)
{
    size_t kn = 0, vn = 0;
    const uint8_t *k = bytes_of(key, &kn), *v = bytes_of(vals, &vn);
    pthread_mutex_lock(&ct_mu);
    cent **pp = slot_of(id), *e = *pp;
    /* a change by another thread, or after an async error came back, does
     * not vouch for what the entry held before it: unknown from now on */
    if (e && k && kn == 0) { /* no key: the call sets all of it (but what the create gave) */
        unsigned n = 0;
        for (unsigned i = 0; i < e->n; i++) {
            if (e->r[i].call == e->create_call && e->r[i].klen == 0) {
                e->r[n++] = e->r[i];
            } else {
                e->bytes -= e->r[i].klen + e->r[i].vlen;
                free(e->r[i].b);
            }
        }
        e->n = n;
    }
    if (e && (!k || !v || e->owner != thread_token() || e->taint != atomic_load(&g_taint) ||
              !put_rec(e, call, k, kn, v, vn)))
        drop_locked(pp);
    pthread_mutex_unlock(&ct_mu);
}

void apigen_contents_forget(uint64_t id)
{
    pthread_mutex_lock(&ct_mu);
    drop_locked(slot_of(id));
    pthread_mutex_unlock(&ct_mu);
}

bool apigen_contents_put(apigen_wr *w, uint64_t id)
{
    if (!id) /* none given (an optional descriptor): a value of the question too */
        return apigen_put_u32(w, UINT32_MAX);
    bool ok = false;
    pthread_mutex_lock(&ct_mu);
    cent *e = *slot_of(id);
    if (e && e->owner == thread_token() && e->taint == atomic_load(&g_taint)) {
        ok = apigen_put_u32(w, e->n);
        for (unsigned i = 0; ok && i < e->n; i++)
            ok = apigen_put_u32(w, e->r[i].call) && apigen_put_bytes(w, e->r[i].b, e->r[i].klen) &&
                 apigen_put_bytes(w, e->r[i].b + e->r[i].klen, e->r[i].vlen);
    }
    pthread_mutex_unlock(&ct_mu);
    return ok;
}
