/* Events created and destroyed without a round trip (specs/cuda.yaml's
 * cuEventCreate, cuEventDestroy_v2).
 *
 * NVIDIA's runtime and libraries create and destroy events per training step
 * (a CNN step over the driver stub: one of each, two of its four round
 * trips). A queued call returns success before the driver ran it, so one is
 * queued only where the driver could refuse nothing at the call:
 *   - a create: flags within CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING
 *     | CU_EVENT_INTERPROCESS, an interprocess event without timing (CUDA
 *     refuses one with it: CUDA_ERROR_INVALID_VALUE), an out pointer, and a
 *     context current on this thread (the guest's thread-state slot: else
 *     CUDA_ERROR_INVALID_CONTEXT at the call). Its id is the guest's own
 *     (`creates:` on an async call), bound once the server ran it; running
 *     out of memory comes at the thread's next synchronizing call, as a
 *     launch's error does;
 *   - a destroy: of an event this process created and did not destroy (the
 *     set below), so the handle is one the driver knows; when any context
 *     ends (context_gone.c) the set is emptied: its events may have gone
 *     with it, and the driver's answer for those is the caller's to see.
 * Anything else goes synchronously, and its error is the call's, as
 * natively.
 *
 * Records of a process that shares events with others (made or opened an
 * interprocess event, or took the IPC handle of one) go synchronously
 * (async_unless): natively a record has reached the device's queue when the
 * call returns, and another process told so (NVIDIA's simpleIPC: a barrier
 * in shared memory) waits on the event in its own session; a record still
 * queued in this guest would let that wait pass before the work. One flag
 * for the process: such programs are few, and a record's round trip is
 * what they pay. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "apigen_rt.h"
#include "cuda_guest.h"
#include "cuda_wire.h"

CUresult cuda_fwd_cuEventCreate(CUevent *phEvent, unsigned int Flags);
CUresult cuda_fwd_cuEventDestroy(CUevent hEvent);
CUresult cuda_fwd_cuEventDestroy_v2(CUevent hEvent);
CUresult cuda_fwd_cuIpcGetEventHandle(CUipcEventHandle *pHandle, CUevent event);
CUresult cuda_fwd_cuIpcOpenEventHandle(CUevent *phEvent, CUipcEventHandle handle);

/* this process shares events with others: set before the call that shares
 * (a record racing with it goes synchronously, which is never wrong) */
static atomic_bool shared_events_;

/* ---- the events this process created and has not destroyed --------------------------- */
typedef struct live_set {
    uint64_t *ids; /* open addressing; 0: free, 1: a removed entry */
    size_t cap, used;
} live_set;

static live_set live_;
static pthread_mutex_t live_mu_ = PTHREAD_MUTEX_INITIALIZER;

static size_t slot_of(const live_set *s, uint64_t id)
{
    return (size_t)((id * 0x9e3779b97f4a7c15ull) >> 20) & (s->cap - 1);
}

static bool grow(live_set *s)
{
    size_t cap = s->cap ? s->cap * 2 : 256;
    uint64_t *ids = calloc(cap, sizeof *ids);
    if (!ids)
        return false;
    live_set n = {ids, cap, 0};
    for (size_t i = 0; i < s->cap; i++)
        if (s->ids[i] > 1) {
            size_t k = slot_of(&n, s->ids[i]);
            while (n.ids[k])
                k = (k + 1) & (cap - 1);
            n.ids[k] = s->ids[i];
            n.used++;
        }
    free(s->ids);
    *s = n;
    return true;
}

/* (an event this set cannot hold is destroyed synchronously: nothing worse) */
static void live_note(uint64_t id)
{
    if (id <= 1)
        return;
    pthread_mutex_lock(&live_mu_);
    if ((live_.used + 1) * 2 <= live_.cap || grow(&live_)) {
        size_t k = slot_of(&live_, id);
        while (live_.ids[k] > 1 && live_.ids[k] != id)
            k = (k + 1) & (live_.cap - 1);
        if (live_.ids[k] != id) {
            live_.used += live_.ids[k] == 0;
            live_.ids[k] = id;
        }
    }
    pthread_mutex_unlock(&live_mu_);
}

static bool live_find(uint64_t id, size_t *at)
{
    if (!live_.cap || id <= 1)
        return false;
    for (size_t k = slot_of(&live_, id), n = 0; live_.ids[k] && n < live_.cap;
         k = (k + 1) & (live_.cap - 1), n++)
        if (live_.ids[k] == id) {
            *at = k;
            return true;
        }
    return false;
}

void apigen_cuda_events_forget(void)
{
    pthread_mutex_lock(&live_mu_);
    for (size_t i = 0; i < live_.cap; i++)
        live_.ids[i] = 0;
    live_.used = 0;
    pthread_mutex_unlock(&live_mu_);
}

/* ---- which calls may be queued (async_check) ------------------------------------------ */
bool cuda_event_create_queued(CUevent *phEvent, unsigned int Flags)
{
    const unsigned known = CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
    uint64_t ctx = 0;
    if (!phEvent || (Flags & ~known) ||
        ((Flags & CU_EVENT_INTERPROCESS) && !(Flags & CU_EVENT_DISABLE_TIMING)))
        return false;
    return apigen_tstate_get(&cuda_api, 0, &ctx) && ctx;
}

/* The destroy's handle was taken out of the set by the export below before
 * this runs: the check asks for the mark it left instead. */
static _Thread_local uint64_t destroying_;

bool cuda_event_destroy_queued(CUevent hEvent)
{
    return hEvent && destroying_ == (uint64_t)(uintptr_t)hEvent;
}

/* async_unless of the records: true, the record goes synchronously */
bool cuda_event_record_now(CUevent hEvent, CUstream hStream)
{
    (void)hEvent, (void)hStream;
    return atomic_load_explicit(&shared_events_, memory_order_relaxed);
}

bool cuda_event_record_flags_now(CUevent hEvent, CUstream hStream, unsigned int flags)
{
    (void)flags;
    return cuda_event_record_now(hEvent, hStream);
}

/* ---- the exports ----------------------------------------------------------------------- */
APIGEN_EXPORT CUresult cuIpcGetEventHandle(CUipcEventHandle *pHandle, CUevent event)
{
    atomic_store_explicit(&shared_events_, true, memory_order_relaxed);
    return cuda_fwd_cuIpcGetEventHandle(pHandle, event);
}

APIGEN_EXPORT CUresult cuIpcOpenEventHandle(CUevent *phEvent, CUipcEventHandle handle)
{
    atomic_store_explicit(&shared_events_, true, memory_order_relaxed);
    return cuda_fwd_cuIpcOpenEventHandle(phEvent, handle);
}

APIGEN_EXPORT CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
    if (Flags & CU_EVENT_INTERPROCESS)
        atomic_store_explicit(&shared_events_, true, memory_order_relaxed);
    CUresult e = cuda_fwd_cuEventCreate(phEvent, Flags);
    if (e == CUDA_SUCCESS && phEvent)
        live_note((uint64_t)(uintptr_t)*phEvent);
    return e;
}

static CUresult destroy(CUevent hEvent, bool v2)
{
    uint64_t id = (uint64_t)(uintptr_t)hEvent;
    size_t at;
    pthread_mutex_lock(&live_mu_);
    bool was_live = live_find(id, &at);
    if (was_live)
        live_.ids[at] = 1; /* two threads destroying it: one may queue */
    pthread_mutex_unlock(&live_mu_);
    destroying_ = was_live ? id : 0;
    CUresult e = v2 ? cuda_fwd_cuEventDestroy_v2(hEvent) : cuda_fwd_cuEventDestroy(hEvent);
    destroying_ = 0;
    if (e != CUDA_SUCCESS && was_live)
        live_note(id); /* refused: still the driver's */
    return e;
}

APIGEN_EXPORT CUresult cuEventDestroy(CUevent hEvent)
{
    return destroy(hEvent, false);
}
APIGEN_EXPORT CUresult cuEventDestroy_v2(CUevent hEvent)
{
    return destroy(hEvent, true);
}
