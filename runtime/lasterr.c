/* lasterr.c: the thread's last error kept in the guest (spec
 * `api.errors.last_error`), so that the API's get/peek functions are
 * answered without a round trip when, and only when, the guest knows the
 * server's answer exactly.
 *
 * The guest knows one answer only: "success". The server's answer is the
 * newer of the runtime's own error for the thread and the library's last
 * error (server.c, scratch.c apigen_last_error); it is success right after
 * a get or peek round trip answered success, and stays so while every call
 * of the API the thread makes is
 *   - a sync call that returned success with no deferred error in its reply
 *     (a successful call leaves the library's last error as it is, and the
 *     server keeps no error of its own for it), or
 *   - a queued call the guest vouched cannot fail synchronously (its
 *     `async_check` passed: apigen_lasterr_queued(api, true)).
 * Anything else makes it unknown until the next get/peek round trip: a call
 * that returned an error (its own, a deferred one, a rejection, a lost
 * connection), a queued call without a passed check (hand-written guest
 * code's errors travel that way: they are queued), a reply that carried an
 * async call's deferred error. An error is never answered locally: a get
 * clears it on the server too, and sticky errors stay there.
 * Calls of other APIs of the family do not change this API's last error:
 * their libraries keep their own (the server keeps its own error per API).
 * APIGEN_CACHE=0 or APIGEN_LAST_ERROR=0: never answered locally (the control). */
#include <stdlib.h>
#include <string.h>

#include "apigen_rt.h"

#define LE_SLOTS 8 /* APIs with a last error one thread uses */

typedef struct le_slot {
    const apigen_api *api;
    bool clean; /* the server's answer for this thread is success */
} le_slot;

static _Thread_local le_slot tl_le[LE_SLOTS];

static bool env_off(const char *name)
{
    const char *v = getenv(name);
    return v && strcmp(v, "0") == 0;
}

/* APIGEN_CACHE=0 (no answer kept in the guest) or APIGEN_LAST_ERROR=0 (this
 * one only: the control of the last-error tests) */
static bool local_answers(void)
{
    static int on = -1; /* racy but idempotent: every thread computes the same */
    if (on < 0)
        on = !env_off("APIGEN_CACHE") && !env_off("APIGEN_LAST_ERROR");
    return on == 1;
}

static le_slot *slot_of(const apigen_api *api, bool add)
{
    le_slot *free_slot = NULL;
    for (unsigned i = 0; i < LE_SLOTS; i++) {
        if (tl_le[i].api == api)
            return &tl_le[i];
        if (!tl_le[i].api && !free_slot)
            free_slot = &tl_le[i];
    }
    if (add && free_slot)
        free_slot->api = api;
    return add ? free_slot : NULL;
}

bool apigen_lasterr_clean(const apigen_api *api)
{
    le_slot *s = slot_of(api, false);
    return s && s->clean && local_answers();
}

void apigen_lasterr_answered(const apigen_api *api, bool success)
{
    le_slot *s = slot_of(api, success);
    if (s)
        s->clean = success;
}

void apigen_lasterr_forget(const apigen_api *api)
{
    le_slot *s = slot_of(api, false);
    if (s)
        s->clean = false;
}

void apigen_lasterr_queued(const apigen_api *api, bool checked)
{
    if (!checked)
        apigen_lasterr_forget(api);
}
