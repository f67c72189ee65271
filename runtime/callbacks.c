/* Server side of callbacks: the real library calls a generated trampoline
 * with a binding as user data; the trampoline encodes the arguments and
 * the frame goes to the guest's control connection. */
#define _GNU_SOURCE
#include "rt_internal.h"

#include <stdlib.h>

/* A dead or stuck guest must not hold a library thread for long. */
#define CB_SEND_TIMEOUT_MS 5000

typedef struct binding {
    struct apigen_session *session;
    unsigned cb_type;
    uint64_t cb_id;
    bool once, fired;
} binding;

void *apigen_cb_bind(apigen_call_ctx *cx, unsigned cb_type, uint64_t cb_id, bool once)
{
    if (cb_id == 0)
        return NULL;
    binding *b = calloc(1, sizeof *b);
    if (!b) {
        apigen_reject(cx, APIGEN_NO_MEMORY, "callback");
        return NULL;
    }
    *b = (binding){cx->session, cb_type, cb_id, once, false};
    /* Freed with the session (not after a `once` call: a library that calls
     * twice must not make us touch freed memory). */
    rt_session_add_binding(cx->session, b);
    return b;
}

void rt_cb_free_binding(void *b) { free(b); }

struct apigen_session *apigen_cb_session(void *bound)
{
    return bound ? ((binding *)bound)->session : NULL;
}

void apigen_cb_begin(void *bound, apigen_wr *w)
{
    size_t off;
    apigen_wr_init(w);
    if (!rt_wr_begin_frame(w, &off) || !apigen_put_u64(w, bound ? ((binding *)bound)->cb_id : 0))
        w->failed = true;
}

void apigen_cb_send(void *bound, apigen_wr *w)
{
    binding *b = bound;
    if (!b || w->failed || !rt_wr_end_frame(w, 0, APIGEN_F_CALLBACK, b->cb_type, 0, 0)) {
        apigen_wr_free(w);
        return;
    }
    apigen_conn *ctrl;
    char err[256];
    rt_session_cb_lock(b->session, &ctrl); /* also guards b->fired: library threads may race */
    bool dead = false, skip = b->once && b->fired;
    b->fired = true;
    if (ctrl && !skip && !apigen_tp_send_buf(ctrl, w->buf, w->len, CB_SEND_TIMEOUT_MS, err, sizeof err)) {
        apigen_log("callback to %s dropped: %s; no further callbacks go to this client",
                   apigen_tp_peer(ctrl), err);
        apigen_tp_shutdown(ctrl); /* a half-sent frame leaves the stream unusable */
        dead = true;
    }
    rt_session_cb_unlock(b->session, dead);
    apigen_wr_free(w);
}
