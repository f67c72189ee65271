/* Server side of callbacks: the real library calls a generated trampoline
 * with a binding as user data; the trampoline encodes the arguments and
 * the frame goes to the guest's control connection. */
#define _GNU_SOURCE
#include "rt_internal.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* A dead or stuck guest must not hold a library thread for long. */
#define CB_SEND_TIMEOUT_MS 5000

/* Bindings live in a table of slots, and what the real library gets as
 * user data is a token (slot + 1 | generation << 32), never a pointer: a
 * library may call a callback after the session that registered it is gone
 * (one library runs a context's destructor callback when its last event
 * goes, on its own thread, after the session released the context; found
 * by fuzzing as a use after free). A stale token resolves to nothing and
 * nothing is sent. A trampoline holds its slot from apigen_cb_begin to
 * apigen_cb_send (inflight); freeing a binding waits for that (at most 2 s:
 * a trampoline whose encoding failed does not call apigen_cb_send). */
typedef struct binding {
    struct apigen_session *session;
    unsigned cb_type;
    uint64_t cb_id;
    bool once, fired, used;
    uint32_t gen, inflight, next_free;
} binding;

static pthread_mutex_t cb_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cb_cv = PTHREAD_COND_INITIALIZER;
static binding *slots;
static uint32_t nslots, capslots, free_head = UINT32_MAX;

static void *token_of(uint32_t i) { return (void *)(uintptr_t)((uint64_t)slots[i].gen << 32 | (i + 1u)); }

/* The slot of a live token, or UINT32_MAX; cb_mu held. */
static uint32_t slot_of(void *bound)
{
    uint64_t t = (uint64_t)(uintptr_t)bound;
    uint32_t i = (uint32_t)t - 1u;
    if (!bound || (uint32_t)t == 0 || i >= nslots || !slots[i].used || slots[i].gen != (uint32_t)(t >> 32))
        return UINT32_MAX;
    return i;
}

void *apigen_cb_bind(apigen_call_ctx *cx, unsigned cb_type, uint64_t cb_id, bool once)
{
    if (cb_id == 0)
        return NULL;
    pthread_mutex_lock(&cb_mu);
    uint32_t i = free_head;
    if (i != UINT32_MAX) {
        free_head = slots[i].next_free;
    } else {
        if (nslots == capslots) {
            uint32_t nc = capslots ? capslots * 2 : 64;
            binding *p = nc > capslots ? realloc(slots, (size_t)nc * sizeof *p) : NULL;
            if (!p) {
                pthread_mutex_unlock(&cb_mu);
                apigen_reject(cx, APIGEN_NO_MEMORY, "callback");
                return NULL;
            }
            slots = p;
            capslots = nc;
        }
        i = nslots++;
        slots[i].gen = 0;
    }
    uint32_t gen = slots[i].gen + 1u;
    slots[i] = (binding){cx->session, cb_type, cb_id, once, false, true, gen ? gen : 1u, 0, UINT32_MAX};
    void *tok = token_of(i);
    pthread_mutex_unlock(&cb_mu);
    /* Freed with the session (not after a `once` call: a library that calls
     * twice must find the binding, and only sends once). */
    rt_session_add_binding(cx->session, tok);
    if (rt_rec_active)
        rt_rec_guest_id(cx->session, cb_id); /* guest-assigned: replay may rename it */
    return tok;
}

void rt_cb_free_binding(void *b)
{
    pthread_mutex_lock(&cb_mu);
    uint32_t i = slot_of(b);
    if (i != UINT32_MAX) {
        struct timespec dl;
        clock_gettime(CLOCK_REALTIME, &dl);
        dl.tv_sec += 2;
        while (slots[i].inflight && pthread_cond_timedwait(&cb_cv, &cb_mu, &dl) == 0)
            ;
        slots[i].used = false;
        slots[i].session = NULL;
        slots[i].next_free = free_head;
        free_head = i;
    }
    pthread_mutex_unlock(&cb_mu);
}

struct apigen_session *apigen_cb_session(void *bound)
{
    pthread_mutex_lock(&cb_mu);
    uint32_t i = slot_of(bound);
    struct apigen_session *s = i == UINT32_MAX ? NULL : slots[i].session;
    pthread_mutex_unlock(&cb_mu);
    return s;
}

void apigen_cb_begin(void *bound, apigen_wr *w)
{
    size_t off;
    apigen_wr_init(w);
    pthread_mutex_lock(&cb_mu);
    uint32_t i = slot_of(bound);
    uint64_t id = 0;
    if (i != UINT32_MAX) {
        slots[i].inflight++;
        id = slots[i].cb_id;
    }
    pthread_mutex_unlock(&cb_mu);
    if (i == UINT32_MAX || !rt_wr_begin_frame(w, &off) || !apigen_put_u64(w, id))
        w->failed = true;
}

void apigen_cb_send(void *bound, apigen_wr *w)
{
    pthread_mutex_lock(&cb_mu);
    uint32_t i = slot_of(bound);
    binding b = i == UINT32_MAX ? (binding){0} : slots[i];
    bool skip = i == UINT32_MAX || (b.once && b.fired);
    if (i != UINT32_MAX)
        slots[i].fired = true;
    pthread_mutex_unlock(&cb_mu);
    if (!skip && !w->failed && rt_wr_end_frame(w, 0, APIGEN_F_CALLBACK, b.cb_type, 0, 0)) {
        apigen_conn *ctrl;
        char err[256];
        bool dead = false;
        rt_session_cb_lock(b.session, &ctrl);
        if (ctrl && rt_rec_active)
            rt_rec_callback(b.session, w);
        if (ctrl && !apigen_tp_send_buf(ctrl, w->buf, w->len, CB_SEND_TIMEOUT_MS, err, sizeof err)) {
            apigen_log("callback to %s dropped: %s; no further callbacks go to this client",
                       apigen_tp_peer(ctrl), err);
            apigen_tp_shutdown(ctrl); /* a half-sent frame leaves the stream unusable */
            dead = true;
        }
        rt_session_cb_unlock(b.session, dead);
    }
    apigen_wr_free(w);
    if (i != UINT32_MAX) {
        pthread_mutex_lock(&cb_mu);
        if (slot_of(bound) == i && slots[i].inflight) /* not freed after a 2 s wait meanwhile */
            slots[i].inflight--;
        pthread_cond_broadcast(&cb_cv);
        pthread_mutex_unlock(&cb_mu);
    }
}

bool apigen_cb_wait_done(pthread_mutex_t *mu, pthread_cond_t *cv, const uint64_t *done,
                         uint64_t target, void *bound)
{
    while (*done < target) {
        struct timespec dl;
        clock_gettime(CLOCK_REALTIME, &dl);
        dl.tv_nsec += 200000000;
        if (dl.tv_nsec >= 1000000000) {
            dl.tv_sec++;
            dl.tv_nsec -= 1000000000;
        }
        if (pthread_cond_timedwait(cv, mu, &dl) != 0 && *done < target) {
            pthread_mutex_unlock(mu);
            bool alive = apigen_cb_alive(bound);
            pthread_mutex_lock(mu);
            if (!alive) return false;
        }
    }
    return true;
}
