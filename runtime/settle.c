/* Settled work (apigen_work_*, docs/internals.md "Settled work"): which of
 * the work a session's guest queued is known complete, so that a call that
 * would only wait for it (a device-wide synchronization right after another,
 * or right after a synchronous copy that waited for everything queued) is
 * answered in the guest. The guest numbers every frame that may queue work
 * (rt_settle_note, from apigen_call_sync/_async, any thread); a successful
 * SETTLES_ALL call makes every frame numbered before it complete in its
 * scope; a successful SETTLES_ORDERED call does the same when all frames
 * since the last such point were ordered work of the calling thread itself
 * (one connection, so the server ran them before it, in order) and that
 * point was in the same scope. Frames another thread queued meanwhile carry
 * later numbers and keep the scope busy: the next synchronization goes to
 * the server, which also reports their errors. A successful SETTLES_QUEUE
 * call (one that returned once one queue's work completed: a copy to
 * pageable memory, a stream synchronization) marks that queue idle for its
 * thread while no frame at all is noted after it. */
#include "rt_internal.h"

#include <string.h>

/* the calling thread's hint: which call's next frame is what */
typedef struct {
    const apigen_api *api;
    uint32_t call_id;
    enum apigen_work kind;
    bool known;
    uint64_t scope;
    int state;     /* 0 none, 1 given, 2 its frame was noted */
    rt_settle *s;  /* where it was noted */
    uint64_t mine; /* its number (SETTLES_ALL: the last before it) */
    uint64_t tid;
    bool alone;     /* SETTLES_ALL, SETTLES_QUEUE: no other sync frame was in flight when it left */
    uint64_t queue; /* SETTLES_QUEUE: which queue of the scope it waited for */
} hint;
static _Thread_local hint tl_hint;

void rt_settle_init(rt_settle *s)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->mu, NULL);
}

void apigen_work_hint(const apigen_api *api, uint32_t call_id, enum apigen_work kind, bool known,
                      uint64_t scope)
{
    tl_hint = (hint){api, call_id, kind, known, scope, 1, NULL, 0, 0, false, 0};
}

void apigen_work_hint_queue(const apigen_api *api, uint32_t call_id, bool known, uint64_t scope,
                            uint64_t queue)
{
    tl_hint =
        (hint){api, call_id, APIGEN_WORK_SETTLES_QUEUE, known, scope, 1, NULL, 0, 0, false, queue};
}

void rt_settle_note(rt_settle *s, const apigen_call *c, uint64_t tid, bool sync)
{
    hint *h = &tl_hint;
    bool hinted = h->state == 1 && h->api == c->api && h->call_id == c->call_id;
    enum apigen_work kind = hinted ? h->kind : APIGEN_WORK_ANY;
    uint64_t mine;
    bool alone;
    pthread_mutex_lock(&s->mu);
    /* another thread's sync frame in flight may run after this one on the
     * server: what it queues is not covered by this one's answer */
    alone = s->inflight == 0;
    if (sync)
        s->inflight++;
    if (kind == APIGEN_WORK_SETTLES_ALL) {
        mine = s->seq; /* queues nothing */
    } else {
        mine = ++s->seq;
        if (kind == APIGEN_WORK_ANY ||
            kind == APIGEN_WORK_SETTLES_QUEUE) /* not the ordered queue */
            s->other = mine;
        if (tid != s->last_tid)
            s->foreign = mine;
        s->last_tid = tid;
    }
    pthread_mutex_unlock(&s->mu);
    if (hinted) {
        h->state = 2;
        h->s = s;
        h->mine = mine;
        h->tid = tid;
        h->alone = alone;
    }
}

void rt_settle_replied(rt_settle *s)
{
    pthread_mutex_lock(&s->mu);
    if (s->inflight)
        s->inflight--;
    pthread_mutex_unlock(&s->mu);
}

void apigen_work_done(bool ok)
{
    hint *h = &tl_hint;
    if (h->state == 2 && ok && h->known) {
        rt_settle *s = h->s;
        pthread_mutex_lock(&s->mu);
        if (h->kind == APIGEN_WORK_SETTLES_ALL && h->alone) {
            if (!s->clean_known || s->clean_scope != h->scope || s->clean < h->mine) {
                s->clean = h->mine;
                s->clean_scope = h->scope;
                s->clean_known = true;
            }
        } else if (h->kind == APIGEN_WORK_SETTLES_ORDERED && s->clean_known &&
                   s->clean_scope == h->scope && s->other <= s->clean && s->foreign <= s->clean &&
                   s->clean < h->mine) {
            /* everything since the last idle point: ordered work of this
             * thread, which this call waited for */
            s->clean = h->mine;
        } else if (h->kind == APIGEN_WORK_SETTLES_QUEUE && h->alone) {
            /* every frame numbered before it ran before it on the server
             * (an earlier sync frame of another thread would not have: not
             * alone), so the queue held nothing else when it returned */
            s->q_mine = h->mine;
            s->q_scope = h->scope;
            s->q_queue = h->queue;
            s->q_tid = h->tid;
            s->q_known = true;
        }
        pthread_mutex_unlock(&s->mu);
    }
    h->state = 0;
}

bool rt_settle_idle(rt_settle *s, uint64_t scope)
{
    pthread_mutex_lock(&s->mu);
    bool idle = s->clean_known && s->clean_scope == scope && s->seq == s->clean;
    pthread_mutex_unlock(&s->mu);
    return idle;
}

bool rt_settle_queue_idle(rt_settle *s, uint64_t scope, uint64_t queue, uint64_t tid)
{
    pthread_mutex_lock(&s->mu);
    bool idle = s->q_known && s->q_scope == scope && s->q_queue == queue && s->q_tid == tid &&
                s->seq == s->q_mine;
    pthread_mutex_unlock(&s->mu);
    return idle;
}
