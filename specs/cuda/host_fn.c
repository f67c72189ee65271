/* Host side of the CUDA driver stub's host functions (hostfn.c): one record
 * per enqueued function until the guest has run it, and one per graph host
 * node registration for the session's life. The real stream's (or graph's)
 * host function sends the callback frame and blocks the stream until
 * apigenCudaHostFnDone(id) arrives from the same session, or the session's
 * callback channel is gone (then the stream goes on). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "apigen_rt.h"
#include "cuda_wire.h"

typedef struct rec {
    struct rec *next;
    const void *session;
    uint64_t id;
    apigenCudaHostFnCb fn; /* the generated trampoline */
    void *bound;
    uint64_t runs, dones; /* started / acknowledged by the guest */
    bool persistent;      /* captured into a graph: runs at every launch, never freed */
} rec;

static pthread_mutex_t lock_ = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv_ = PTHREAD_COND_INITIALIZER;
static rec *recs_;

static rec *add_rec(apigen_call_ctx *cx, apigenCudaHostFnCb fn, void *user, uint64_t id,
                    bool persistent)
{
    rec *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    *r = (rec){NULL, cx->session, id, fn, user, 0, 0, persistent};
    pthread_mutex_lock(&lock_);
    r->next = recs_;
    recs_ = r;
    pthread_mutex_unlock(&lock_);
    return r;
}

static void unlink_rec(rec *r) /* under lock_ */
{
    for (rec **pp = &recs_; *pp; pp = &(*pp)->next)
        if (*pp == r) {
            *pp = r->next;
            break;
        }
}

static void run_rec(rec *r, CUresult status)
{
    pthread_mutex_lock(&lock_);
    uint64_t run = ++r->runs;
    pthread_mutex_unlock(&lock_);
    if (apigen_cb_alive(r->bound)) {
        r->fn(r->id, (int32_t)status, r->bound);
        pthread_mutex_lock(&lock_);
        (void)apigen_cb_wait_done(&lock_, &cv_, &r->dones, run, r->bound);
    } else {
        pthread_mutex_lock(&lock_);
    }
    if (r->persistent) { /* the graph may be launched again */
        pthread_mutex_unlock(&lock_);
        return;
    }
    unlink_rec(r);
    pthread_mutex_unlock(&lock_);
    free(r);
}

static void CUDA_CB on_host_fn(void *user) { run_rec(user, CUDA_SUCCESS); }

static void CUDA_CB on_callback(CUstream stream, CUresult status, void *user)
{
    (void)stream;
    run_rec(user, status);
}

CUresult cuda_host_enqueue_host_fn(apigen_call_ctx *cx, CUstream hStream, apigenCudaHostFnCb fn,
                                   void *user, uint64_t id, uint32_t isCallback, uint32_t flags)
{
    if (!fn || !user) return CUDA_ERROR_INVALID_VALUE;
    rec *r = add_rec(cx, fn, user, id, (flags & APIGEN_CUDA_HOSTFN_PERSIST) != 0);
    if (!r) return CUDA_ERROR_OUT_OF_MEMORY;
    int ptsz = (flags & APIGEN_CUDA_HOSTFN_PTSZ) != 0;
    CUresult e;
    if (isCallback)
        e = ptsz ? cuStreamAddCallback_ptsz(hStream, on_callback, r, 0)
                 : cuStreamAddCallback(hStream, on_callback, r, 0);
    else
        e = ptsz ? cuLaunchHostFunc_ptsz(hStream, on_host_fn, r)
                 : cuLaunchHostFunc(hStream, on_host_fn, r);
    if (e != CUDA_SUCCESS) {
        pthread_mutex_lock(&lock_);
        unlink_rec(r);
        pthread_mutex_unlock(&lock_);
        free(r);
    }
    return e;
}

/* A graph host node: the node's function is on_host_fn with a persistent
 * record, as a host function captured from a stream. A record no node took
 * (the driver refused the call) is freed. */
CUresult cuda_host_host_node(apigen_call_ctx *cx, unsigned int op, CUgraphNode *phGraphNode,
                             CUgraph hGraph, const CUgraphNode *dependencies,
                             size_t numDependencies, CUgraphExec hGraphExec, CUgraphNode hNode,
                             apigenCudaHostFnCb fn, void *user, uint64_t id)
{
    if (!fn || !user || op > APIGEN_CUDA_HOST_NODE_EXEC_SET) return CUDA_ERROR_INVALID_VALUE;
    rec *r = add_rec(cx, fn, user, id, true);
    if (!r) return CUDA_ERROR_OUT_OF_MEMORY;
    CUDA_HOST_NODE_PARAMS p = {on_host_fn, r};
    CUresult e = op == APIGEN_CUDA_HOST_NODE_ADD
                     ? cuGraphAddHostNode(phGraphNode, hGraph, dependencies, numDependencies, &p)
                 : op == APIGEN_CUDA_HOST_NODE_SET ? cuGraphHostNodeSetParams(hNode, &p)
                                                   : cuGraphExecHostNodeSetParams(hGraphExec, hNode, &p);
    if (e != CUDA_SUCCESS) {
        pthread_mutex_lock(&lock_);
        unlink_rec(r);
        pthread_mutex_unlock(&lock_);
        free(r);
    }
    return e;
}

/* The id of the guest's registration behind a host node: the node's
 * userData is compared with this session's records, never dereferenced
 * before it is found among them. */
CUresult cuda_host_host_node_get(apigen_call_ctx *cx, CUgraphNode hNode, uint64_t *id)
{
    CUDA_HOST_NODE_PARAMS p;
    if (!id) return CUDA_ERROR_INVALID_VALUE;
    CUresult e = cuGraphHostNodeGetParams(hNode, &p);
    if (e != CUDA_SUCCESS) return e;
    e = CUDA_ERROR_NOT_SUPPORTED; /* a host function of another API's stub */
    pthread_mutex_lock(&lock_);
    for (rec *r = recs_; r && p.fn == on_host_fn; r = r->next)
        if (r == p.userData && r->session == cx->session) {
            *id = r->id;
            e = CUDA_SUCCESS;
            break;
        }
    pthread_mutex_unlock(&lock_);
    return e;
}

CUresult cuda_host_host_fn_done(apigen_call_ctx *cx, uint64_t id)
{
    CUresult e = CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock_);
    for (rec *r = recs_; r; r = r->next)
        if (r->session == cx->session && r->id == id && r->dones < r->runs) {
            r->dones++;
            e = CUDA_SUCCESS;
            break;
        }
    pthread_cond_broadcast(&cv_);
    pthread_mutex_unlock(&lock_);
    return e;
}
