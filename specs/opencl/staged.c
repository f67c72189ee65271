/* Staged non-blocking reads, the guest's side (apigen_opencl.h; the server's
 * side is in host.c). A non-blocking read returns at once with its event:
 * the read is queued to the server as a read into server memory, and the
 * event the application gets is a one-element read of the same object that
 * also waits for a gate the guest opens once the bytes are in the
 * application's memory. A worker thread of this process waits for the
 * staged read (apigenOpenclStagedWait, whose reply carries the bytes
 * straight into the application's pointer) and then opens the gate
 * (apigenOpenclStagedDone). So the bytes land before the event completes and
 * before its callbacks run, clFinish and clWaitForEvents see them, and a
 * user event the read waits for may be set by any thread at any time: only
 * the worker waits. Workers are kept for the next read (each has its own
 * connection); one more starts when all are busy, so a read waiting on a
 * user event never holds up another read.
 *
 * The application's event of a read is the one-element read: its profiling
 * times would be that read's, after the bytes landed. The server sends the
 * staged read's own times with apigenOpenclStagedDone and they are kept
 * here, by the event's id, while the application holds the event (its
 * retains and releases are counted), for clGetEventProfilingInfo. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "opencl_wire.h"

#if defined(APIGEN_OPENCL_ICD)
#define APIGEN_HOBJ_FIRST opencl_icd_dispatch
#endif
#include "apigen_hobj.h"

/* A read event the application holds: the read's own times once known. */
typedef struct times {
    struct times *next;
    uint64_t id;
    unsigned refs;
    bool known;
    cl_ulong v[5]; /* CL_PROFILING_COMMAND_QUEUED .. _COMPLETE */
} times;

#define NTIMES 256
static times *by_id[NTIMES]; /* under mu */

static times **times_at(uint64_t id)
{
    times **pp = &by_id[(id ^ id >> 17) % NTIMES];
    while (*pp && (*pp)->id != id)
        pp = &(*pp)->next;
    return pp;
}

typedef struct job {
    struct job *next;
    struct job *live_next; /* in `live` until the bytes landed */
    cl_command_queue queue; /* routes the calls to the read's server */
    uint64_t token;
    void *ptr;
    size_t size;
    cl_uint flags;
    cl_event event; /* the application's event, or ours to release */
    bool release;
    cl_event app_event; /* a map's event (the application's; not released here) */
    uint64_t times_id; /* a read whose event the application holds: its times go there */
} job;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static pthread_cond_t landed = PTHREAD_COND_INITIALIZER;
static job *head, *tail;
static job *live; /* queued or running: clFinish and clWaitForEvents wait for them */
/* Workers waiting for a job, and jobs no worker took yet: a job starts a
 * worker unless an idle one is left for it (an idle worker counts as idle
 * until it wakes, so two jobs queued at once both counted on one worker:
 * the second waited for the first read's user event). */
static unsigned idle, npend;
static uint64_t next_token;

uint64_t opencl_staged_token(void)
{
    pthread_mutex_lock(&mu);
    uint64_t t = ++next_token;
    pthread_mutex_unlock(&mu);
    return t;
}

static void run(job *j)
{
    cl_int st = apigenOpenclStagedWait(j->queue, j->token, j->flags, j->ptr, j->size);
    if (st > 0)
        st = CL_COMPLETE;
    /* opens the gate: the application's event completes (or fails) now */
    cl_ulong v[5] = {0};
    cl_int err = apigenOpenclStagedDone(j->queue, j->token, st, j->times_id ? v : NULL);
    if (err != CL_SUCCESS)
        apigen_log("opencl: a staged read's event could not be completed (%d)", (int)err);
    if (j->times_id && err == CL_SUCCESS && v[3]) {
        pthread_mutex_lock(&mu);
        times *t = *times_at(j->times_id); /* none: the application released it */
        if (t) {
            memcpy(t->v, v, sizeof v);
            t->known = true;
        }
        pthread_mutex_unlock(&mu);
    }
    if (j->release)
        clReleaseEvent(j->event);
}

static void *worker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&mu);
    for (;;) {
        while (!head) {
            idle++;
            pthread_cond_wait(&cv, &mu);
            idle--;
        }
        job *j = head;
        head = j->next;
        if (!head)
            tail = NULL;
        npend--;
        pthread_mutex_unlock(&mu);
        run(j);
        pthread_mutex_lock(&mu);
        for (job **pp = &live; *pp; pp = &(*pp)->live_next)
            if (*pp == j) {
                *pp = j->live_next;
                break;
            }
        pthread_cond_broadcast(&landed);
        free(j);
    }
    return NULL;
}

/* After the staged read (or map) was enqueued (its event in ev, NULL for a
 * map, whose event the application already has): a worker takes it over.
 * *event gets ev when the application asked for it; else the worker releases
 * it once the bytes landed. */
cl_int opencl_staged_start(cl_command_queue q, uint64_t token, void *ptr, size_t size,
                           cl_uint flags, cl_event ev, cl_event *event)
{
    job *j = calloc(1, sizeof *j);
    times *t = event && ev ? calloc(1, sizeof *t) : NULL;
    if (j)
        *j = (job){NULL, NULL, q, token, ptr, size, flags, ev, event == NULL && ev != NULL,
                   ev ? NULL : (event ? *event : NULL), 0};
    pthread_mutex_lock(&mu);
    if (t) { /* no memory for it: the event answers the one-element read's times */
        t->id = APIGEN_H2ID(ev);
        t->refs = 1;
        times **at = times_at(t->id);
        if (!*at) {
            *at = t;
            if (j)
                j->times_id = t->id;
        } else {
            free(t);
        }
    }
    bool start = false;
    if (j) {
        if (tail)
            tail->next = j;
        else
            head = j;
        tail = j;
        j->live_next = live;
        live = j;
        start = idle < ++npend;
        pthread_cond_signal(&cv);
    }
    pthread_mutex_unlock(&mu);
    if (start) {
        pthread_t t;
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&t, &at, worker, NULL) != 0) {
            /* no thread: this one waits (the read then blocks, as before) */
            pthread_mutex_lock(&mu);
            job **pp = &head, *prev = NULL;
            while (*pp && *pp != j)
                prev = *pp, pp = &(*pp)->next;
            bool mine = *pp == j;
            if (mine) {
                *pp = j->next;
                if (tail == j)
                    tail = prev;
                npend--;
            }
            pthread_mutex_unlock(&mu);
            if (mine) {
                run(j);
                pthread_mutex_lock(&mu);
                for (job **lp = &live; *lp; lp = &(*lp)->live_next)
                    if (*lp == j) {
                        *lp = j->live_next;
                        break;
                    }
                pthread_cond_broadcast(&landed);
                pthread_mutex_unlock(&mu);
                free(j);
            }
        }
        pthread_attr_destroy(&at);
    }
    if (!j) { /* no memory for the job: wait here */
        job k = {NULL, NULL, q, token, ptr, size, flags, ev, event == NULL && ev != NULL, NULL,
                 t ? t->id : 0};
        run(&k);
    }
    if (event && ev)
        *event = ev;
    return CL_SUCCESS;
}

/* After the server said q finished, or that the events completed: their
 * staged bytes are in place when this returns. The server's answer already
 * implies it (the application's events complete only after the bytes
 * landed); waiting here as well keeps it so where the answer comes from
 * elsewhere (a replay, which does not order one thread's replies after
 * another thread's requests). match: the job's queue, or one of the events. */
static bool pending(cl_command_queue q, cl_uint n, const cl_event *list)
{
    for (job *j = live; j; j = j->live_next) {
        if (q && j->queue == q)
            return true;
        for (cl_uint i = 0; list && i < n; i++)
            if (list[i] && (j->event == list[i] || j->app_event == list[i]))
                return true;
    }
    return false;
}

void opencl_staged_quiesce(cl_command_queue q, cl_uint n, const cl_event *list)
{
    pthread_mutex_lock(&mu);
    while (pending(q, n, list))
        pthread_cond_wait(&landed, &mu);
    pthread_mutex_unlock(&mu);
}

/* The application retained (+1) or released (-1) an event: a read's times
 * go with its last reference. */
void opencl_staged_event_ref(uint64_t id, int delta)
{
    pthread_mutex_lock(&mu);
    times **at = times_at(id), *t = *at;
    if (t && delta > 0) {
        t->refs++;
    } else if (t && --t->refs == 0) {
        *at = t->next;
        free(t);
    }
    pthread_mutex_unlock(&mu);
}

/* CL_PROFILING_COMMAND_* of a non-blocking read's event: its read's own
 * (true, *v), once the bytes landed; false: not such an event, or its
 * times are not known (the server answers, as for any event). */
bool opencl_staged_times(cl_event event, cl_profiling_info name, cl_ulong *v)
{
    if (name < CL_PROFILING_COMMAND_QUEUED || name > CL_PROFILING_COMMAND_COMPLETE)
        return false;
    uint64_t id = APIGEN_H2ID(event);
    pthread_mutex_lock(&mu);
    const times *t = *times_at(id);
    bool known = t && t->known && t->v[name - CL_PROFILING_COMMAND_QUEUED];
    if (known)
        *v = t->v[name - CL_PROFILING_COMMAND_QUEUED];
    pthread_mutex_unlock(&mu);
    return known;
}

/* Whether event is a non-blocking read's whose times the application may ask. */
bool opencl_staged_timed(cl_event event)
{
    uint64_t id = APIGEN_H2ID(event);
    pthread_mutex_lock(&mu);
    bool is = *times_at(id) != NULL;
    pthread_mutex_unlock(&mu);
    return is;
}
