/* Host functions of the CUDA driver stub: cuLaunchHostFunc and
 * cuStreamAddCallback (and their _ptsz forms), and graph host nodes
 * (cuGraphAddHostNode, its Get/SetParams and ExecSetParams). The
 * application's function runs in its own process, on the stub's callback
 * thread, when the server's stream or graph reaches it; the server waits
 * until it returned (host_fn.c), so work queued after it waits as in CUDA.
 * A stream's host function is one async message. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "apigen_rt.h"
#include "cuda_guest.h"
#include "cuda_wire.h"

typedef struct host_fn {
    bool is_callback;
    CUhostFn fn;
    CUstreamCallback cb;
    void *user;
    CUstream stream;
    bool persist; /* a graph's (a host node, or captured): may run again */
    uint64_t id;
    struct host_fn *next; /* in persistent_, when persist */
} host_fn;

/* one id space for streams' host functions and host nodes: the server
 * matches apigenCudaHostFnDone(id) against both */
static atomic_uint_fast64_t next_id_ = 1;
/* persistent records by id, for cuGraphHostNodeGetParams (never freed: a
 * graph's executable copies keep running them) */
static pthread_mutex_t lock_ = PTHREAD_MUTEX_INITIALIZER;
static host_fn *persistent_;

static void reached(uint64_t id, int32_t status, void *user)
{
    host_fn *h = user;
    if (h) {
        if (h->is_callback) h->cb(h->stream, (CUresult)status, h->user);
        else h->fn(h->user);
        if (!h->persist) free(h);
    }
    (void)apigenCudaHostFnDone(id);
}

static void keep(host_fn *h)
{
    pthread_mutex_lock(&lock_);
    h->next = persistent_;
    persistent_ = h;
    pthread_mutex_unlock(&lock_);
}

/* takes a record back whose registration the server refused */
static void drop(host_fn *h)
{
    pthread_mutex_lock(&lock_);
    for (host_fn **pp = &persistent_; *pp; pp = &(*pp)->next)
        if (*pp == h) {
            *pp = h->next;
            break;
        }
    pthread_mutex_unlock(&lock_);
    free(h);
}

/* flags may say PERSIST already (the caller knows the stream captures) */
static CUresult enqueue(CUstream stream, CUhostFn fn, CUstreamCallback cb, void *user,
                        uint32_t flags)
{
    if (!fn && !cb) return CUDA_ERROR_INVALID_VALUE;
    host_fn *h = calloc(1, sizeof *h);
    if (!h) return CUDA_ERROR_OUT_OF_MEMORY;
    *h = (host_fn){cb != NULL, fn, cb, user, stream, false, atomic_fetch_add(&next_id_, 1), NULL};
    /* captured into a graph, it runs at every launch of the graph: neither
     * side may free its record after the first run */
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    CUresult e = CUDA_SUCCESS;
    if (flags & APIGEN_CUDA_HOSTFN_PERSIST)
        st = CU_STREAM_CAPTURE_STATUS_ACTIVE;
    else
        e = (flags & APIGEN_CUDA_HOSTFN_PTSZ) ? cuStreamIsCapturing_ptsz(stream, &st)
                                              : cuStreamIsCapturing(stream, &st);
    if (e == CUDA_SUCCESS && st != CU_STREAM_CAPTURE_STATUS_NONE) {
        h->persist = true;
        flags |= APIGEN_CUDA_HOSTFN_PERSIST;
        keep(h);
    }
    e = apigenCudaEnqueueHostFn(stream, reached, h, h->id, cb != NULL, flags);
    if (e != CUDA_SUCCESS) drop(h); /* never enqueued: nothing runs or frees it */
    return e;
}

CUresult apigen_cuda_host_fn_captured(CUstream stream, void (*fn)(void *), void *user, int ptsz)
{
    return enqueue(stream, fn, NULL, user,
                   APIGEN_CUDA_HOSTFN_PERSIST | (ptsz ? APIGEN_CUDA_HOSTFN_PTSZ : 0));
}

APIGEN_EXPORT CUresult cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData)
{
    return enqueue(hStream, fn, NULL, userData, 0);
}

APIGEN_EXPORT CUresult cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData)
{
    return enqueue(hStream, fn, NULL, userData, APIGEN_CUDA_HOSTFN_PTSZ);
}

APIGEN_EXPORT CUresult cuStreamAddCallback(CUstream hStream, CUstreamCallback callback,
                                           void *userData, unsigned int flags)
{
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
    return enqueue(hStream, NULL, callback, userData, 0);
}

APIGEN_EXPORT CUresult cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback callback,
                                                void *userData, unsigned int flags)
{
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
    return enqueue(hStream, NULL, callback, userData, APIGEN_CUDA_HOSTFN_PTSZ);
}

/* ---- graph host nodes ---------------------------------------------------------------------- */
/* Each registration of (fn, userData) is a persistent record: the server's
 * node runs it at every launch of the graph and of its executable copies. */
static CUresult host_node(unsigned op, CUgraphNode *phGraphNode, CUgraph hGraph,
                          const CUgraphNode *dependencies, size_t numDependencies,
                          CUgraphExec hGraphExec, CUgraphNode hNode,
                          const CUDA_HOST_NODE_PARAMS *p)
{
    if (!p || !p->fn) return CUDA_ERROR_INVALID_VALUE;
    host_fn *h = calloc(1, sizeof *h);
    if (!h) return CUDA_ERROR_OUT_OF_MEMORY;
    *h = (host_fn){false, p->fn, NULL, p->userData, NULL, true, atomic_fetch_add(&next_id_, 1),
                   NULL};
    keep(h);
    CUresult e = apigenCudaHostNode(op, phGraphNode, hGraph, dependencies, numDependencies,
                                    hGraphExec, hNode, reached, h, h->id);
    if (e != CUDA_SUCCESS) drop(h); /* no node holds it */
    return e;
}

APIGEN_EXPORT CUresult cuGraphAddHostNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                          const CUgraphNode *dependencies,
                                          size_t numDependencies,
                                          const CUDA_HOST_NODE_PARAMS *nodeParams)
{
    return host_node(APIGEN_CUDA_HOST_NODE_ADD, phGraphNode, hGraph, dependencies,
                     numDependencies, NULL, NULL, nodeParams);
}

APIGEN_EXPORT CUresult cuGraphHostNodeSetParams(CUgraphNode hNode,
                                                const CUDA_HOST_NODE_PARAMS *nodeParams)
{
    return host_node(APIGEN_CUDA_HOST_NODE_SET, NULL, NULL, NULL, 0, NULL, hNode, nodeParams);
}

APIGEN_EXPORT CUresult cuGraphExecHostNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                    const CUDA_HOST_NODE_PARAMS *nodeParams)
{
    return host_node(APIGEN_CUDA_HOST_NODE_EXEC_SET, NULL, NULL, NULL, 0, hGraphExec, hNode,
                     nodeParams);
}

APIGEN_EXPORT CUresult cuGraphHostNodeGetParams(CUgraphNode hNode,
                                                CUDA_HOST_NODE_PARAMS *nodeParams)
{
    uint64_t id = 0;
    if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
    CUresult e = apigenCudaHostNodeGetParams(hNode, &id);
    if (e != CUDA_SUCCESS) return e;
    e = CUDA_ERROR_NOT_SUPPORTED; /* a node no record of this guest runs */
    pthread_mutex_lock(&lock_);
    for (const host_fn *h = persistent_; h; h = h->next)
        if (h->id == id && !h->is_callback) {
            nodeParams->fn = h->fn;
            nodeParams->userData = h->user;
            e = CUDA_SUCCESS;
            break;
        }
    pthread_mutex_unlock(&lock_);
    return e;
}
