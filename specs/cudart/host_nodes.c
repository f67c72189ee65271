/* Hand-written host code of the cudart spec: graph nodes whose parameter
 * structs hold what the wire cannot carry as bytes (kernel argument arrays,
 * guest functions, handle arrays, pointers into the runtime's storage),
 * capture info, cluster occupancy, cudaLibraryLoadData, log callbacks and
 * async notifications. The internal calls are declared in apigen_cudart.h;
 * their arguments arrive decoded, translated and length-checked. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apigen_rt.h"
#include "cudart_wire.h"

cudaError_t cudaStreamGetCaptureInfo_ptsz(cudaStream_t stream,
                                          enum cudaStreamCaptureStatus *captureStatus_out,
                                          unsigned long long *id_out, cudaGraph_t *graph_out,
                                          const cudaGraphNode_t **dependencies_out,
                                          const cudaGraphEdgeData **edgeData_out,
                                          size_t *numDependencies_out);

/* host.c: runs one host function of the guest (fn with a fresh id) and
 * waits for apigenCudartHostFnDone(id) of the session */
void cudart_host_run_host_fn(const void *session, uint64_t id, apigenCudartHostFnCb fn,
                             void *bound);

/* ---- kernel nodes -------------------------------------------------------------------------- */
typedef struct packed_args {
    uint32_t n;
    uint64_t offsets[APIGEN_CUDART_MAX_PARAMS], sizes[APIGEN_CUDART_MAX_PARAMS];
    void *argv[APIGEN_CUDART_MAX_PARAMS];
} packed_args;

/* kernelParams pointing into the packed bytes, after checking their size
 * against the kernel's layout (a cudaKernelNodeParams copies the values) */
static cudaError_t node_params(const void *func, dim3 grid, dim3 block, unsigned int shmem,
                               const void *params, size_t size, packed_args *a,
                               struct cudaKernelNodeParams *p)
{
    uint64_t total = 0;
    if (!func) return cudaErrorInvalidDeviceFunction;
    cudaError_t e = apigenCudartParamLayout(func, NULL, &a->n, a->offsets, a->sizes);
    if (e != cudaSuccess) return e;
    for (uint32_t i = 0; i < a->n; i++)
        if (a->offsets[i] + a->sizes[i] > total) total = a->offsets[i] + a->sizes[i];
    if (size != total || (total && !params)) return cudaErrorInvalidValue;
    for (uint32_t i = 0; i < a->n; i++) a->argv[i] = (char *)(uintptr_t)params + a->offsets[i];
    memset(p, 0, sizeof *p);
    p->func = (void *)(uintptr_t)func;
    p->gridDim = grid;
    p->blockDim = block;
    p->sharedMemBytes = shmem;
    p->kernelParams = a->n ? a->argv : NULL;
    return cudaSuccess;
}

#define WITH_NODE_PARAMS(call)                                                                     \
    do {                                                                                           \
        struct cudaKernelNodeParams p_;                                                            \
        packed_args *a_ = malloc(sizeof *a_);                                                      \
        if (!a_) return cudaErrorMemoryAllocation;                                                 \
        cudaError_t e_ = node_params(func, grid, block, sharedMem, params, paramsSize, a_, &p_);   \
        if (e_ == cudaSuccess) e_ = call;                                                          \
        free(a_);                                                                                  \
        return e_;                                                                                 \
    } while (0)

cudaError_t apigenCudartAddKernelNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                      const cudaGraphNode_t *pDependencies,
                                      size_t numDependencies, const void *func, dim3 grid,
                                      dim3 block, unsigned int sharedMem, const void *params,
                                      size_t paramsSize)
{
    WITH_NODE_PARAMS(cudaGraphAddKernelNode(pGraphNode, graph, pDependencies, numDependencies, &p_));
}

cudaError_t apigenCudartKernelNodeSetParams(cudaGraphNode_t node, const void *func, dim3 grid,
                                            dim3 block, unsigned int sharedMem,
                                            const void *params, size_t paramsSize)
{
    WITH_NODE_PARAMS(cudaGraphKernelNodeSetParams(node, &p_));
}

cudaError_t apigenCudartExecKernelNodeSetParams(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
                                                const void *func, dim3 grid, dim3 block,
                                                unsigned int sharedMem, const void *params,
                                                size_t paramsSize)
{
    WITH_NODE_PARAMS(cudaGraphExecKernelNodeSetParams(hGraphExec, node, &p_));
}

cudaError_t apigenCudartKernelNodeGetParams(cudaGraphNode_t node, uint64_t *func, dim3 *grid,
                                            dim3 *block, unsigned int *sharedMem,
                                            unsigned char *params, size_t paramsCap,
                                            size_t *paramsSize)
{
    struct cudaKernelNodeParams p;
    if (!func || !grid || !block || !sharedMem || !params || !paramsSize)
        return cudaErrorInvalidValue;
    cudaError_t e = cudaGraphKernelNodeGetParams(node, &p);
    if (e != cudaSuccess) return e;
    packed_args *a = malloc(sizeof *a);
    if (!a) return cudaErrorMemoryAllocation;
    e = apigenCudartParamLayout(p.func, NULL, &a->n, a->offsets, a->sizes);
    uint64_t total = 0;
    for (uint32_t i = 0; e == cudaSuccess && i < a->n; i++)
        if (a->offsets[i] + a->sizes[i] > total) total = a->offsets[i] + a->sizes[i];
    if (e == cudaSuccess && (total > paramsCap || (a->n && !p.kernelParams)))
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess) {
        memset(params, 0, (size_t)total);
        for (uint32_t i = 0; i < a->n; i++)
            memcpy(params + a->offsets[i], p.kernelParams[i], (size_t)a->sizes[i]);
        *func = (uint64_t)(uintptr_t)p.func;
        *grid = p.gridDim;
        *block = p.blockDim;
        *sharedMem = p.sharedMemBytes;
        *paramsSize = (size_t)total;
    }
    free(a);
    return e;
}

/* ---- host nodes -------------------------------------------------------------------------- */
/* One record per host node registration, for the session's life (graphs
 * and their executable copies keep calling it). */
typedef struct host_node {
    struct host_node *next;
    const void *session;
    apigenCudartHostFnCb fn; /* the generated trampoline */
    void *bound;
    uint64_t guest_id;
} host_node;

static pthread_mutex_t nodes_lock_ = PTHREAD_MUTEX_INITIALIZER;
static host_node *host_nodes_;
static atomic_uint_fast64_t next_run_ = 1;

static void CUDART_CB on_host_node(void *user)
{
    host_node *h = user;
    /* run ids live apart from the guest's host function ids */
    uint64_t id = atomic_fetch_add(&next_run_, 1) | (1ull << 63);
    cudart_host_run_host_fn(h->session, id, h->fn, h->bound);
}

static host_node *host_node_new(apigen_call_ctx *cx, apigenCudartHostFnCb fn, void *user,
                                uint64_t id, struct cudaHostNodeParams *p)
{
    if (!fn || !user) return NULL;
    host_node *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    h->session = cx->session;
    h->fn = fn;
    h->bound = user;
    h->guest_id = id;
    pthread_mutex_lock(&nodes_lock_);
    h->next = host_nodes_;
    host_nodes_ = h;
    pthread_mutex_unlock(&nodes_lock_);
    p->fn = on_host_node;
    p->userData = h;
    return h;
}

/* Why host_node_new failed: no function, or no memory for its record (an
 * error of the call, never a node that silently does nothing). */
static cudaError_t host_node_failed(apigen_call_ctx *cx, apigenCudartHostFnCb fn, void *user)
{
    if (!fn || !user) return cudaErrorInvalidValue;
    apigen_result_own(cx);
    return cudaErrorMemoryAllocation;
}

cudaError_t cudart_host_add_host_node(apigen_call_ctx *cx, cudaGraphNode_t *pGraphNode,
                                      cudaGraph_t graph, const cudaGraphNode_t *pDependencies,
                                      size_t numDependencies, apigenCudartHostFnCb fn, void *user,
                                      uint64_t id)
{
    struct cudaHostNodeParams p;
    if (!host_node_new(cx, fn, user, id, &p)) return host_node_failed(cx, fn, user);
    return cudaGraphAddHostNode(pGraphNode, graph, pDependencies, numDependencies, &p);
}

cudaError_t cudart_host_host_node_set(apigen_call_ctx *cx, cudaGraphNode_t node,
                                      apigenCudartHostFnCb fn, void *user, uint64_t id)
{
    struct cudaHostNodeParams p;
    if (!host_node_new(cx, fn, user, id, &p)) return host_node_failed(cx, fn, user);
    return cudaGraphHostNodeSetParams(node, &p);
}

cudaError_t cudart_host_exec_host_node_set(apigen_call_ctx *cx, cudaGraphExec_t hGraphExec,
                                           cudaGraphNode_t node, apigenCudartHostFnCb fn,
                                           void *user, uint64_t id)
{
    struct cudaHostNodeParams p;
    if (!host_node_new(cx, fn, user, id, &p)) return host_node_failed(cx, fn, user);
    return cudaGraphExecHostNodeSetParams(hGraphExec, node, &p);
}

/* Only a node of this session's registrations answers: its userData is
 * dereferenced only once it is found among the records. */
cudaError_t cudart_host_host_node_get(apigen_call_ctx *cx, cudaGraphNode_t node, uint64_t *id)
{
    struct cudaHostNodeParams p;
    if (!id) return cudaErrorInvalidValue;
    cudaError_t e = cudaGraphHostNodeGetParams(node, &p);
    if (e != cudaSuccess) return e;
    e = cudaErrorNotSupported; /* a host function captured from a stream */
    pthread_mutex_lock(&nodes_lock_);
    for (host_node *h = host_nodes_; h && p.fn == on_host_node; h = h->next)
        if (h == p.userData && h->session == cx->session) {
            *id = h->guest_id;
            e = cudaSuccess;
            break;
        }
    pthread_mutex_unlock(&nodes_lock_);
    return e;
}

/* ---- capture info, occupancy, libraries ------------------------------------------------------ */
cudaError_t apigenCudartStreamGetCaptureInfo(cudaStream_t stream,
                                             enum cudaStreamCaptureStatus *status,
                                             unsigned long long *id, cudaGraph_t *graph,
                                             cudaGraphNode_t *deps, cudaGraphEdgeData *edges,
                                             size_t cap, size_t *numDeps, uint32_t flags)
{
#ifndef APIGEN_HAS_PARAM_cudaStreamGetCaptureInfo_edgeData_out /* the guest sends it from 13.0 on (12.x: other forms) */
    (void)stream, (void)status, (void)id, (void)graph, (void)deps, (void)edges, (void)cap,
        (void)numDeps, (void)flags;
    return cudaErrorNotSupported;
#else
    const cudaGraphNode_t *d = NULL;
    const cudaGraphEdgeData *ed = NULL;
    size_t n = 0;
    unsigned long long cid = 0;
    cudaGraph_t g = NULL;
    if (!status || !id || !graph || !numDeps) return cudaErrorInvalidValue;
    cudaError_t e = flags & APIGEN_CUDART_PTSZ
                        ? cudaStreamGetCaptureInfo_ptsz(stream, status, &cid, &g, &d, &ed, &n)
                        : cudaStreamGetCaptureInfo(stream, status, &cid, &g, &d, &ed, &n);
    if (e != cudaSuccess) return e;
    if (*status != cudaStreamCaptureStatusActive) {
        g = NULL;
        n = 0;
    }
    *id = cid;
    *graph = g;
    *numDeps = n;
    for (size_t i = 0; i < n && i < cap; i++) {
        if (deps) deps[i] = d ? d[i] : NULL;
        if (edges) {
            if (ed) edges[i] = ed[i];
            else memset(&edges[i], 0, sizeof edges[i]);
        }
    }
    return cudaSuccess;
#endif
}

cudaError_t apigenCudartOccupancyCluster(int *result, const void *func, dim3 grid, dim3 block,
                                         size_t sharedMem, cudaStream_t stream,
                                         const cudaLaunchAttribute *attrs, uint32_t numAttrs,
                                         uint32_t which)
{
#ifndef APIGEN_HAS_FN_cudaOccupancyMaxActiveClusters /* before 11.8 (the guest sends none) */
    (void)result, (void)func, (void)grid, (void)block, (void)sharedMem, (void)stream;
    (void)attrs, (void)numAttrs, (void)which;
    return cudaErrorNotSupported;
#else
    cudaLaunchConfig_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = sharedMem;
    cfg.stream = stream;
    cfg.attrs = (cudaLaunchAttribute *)(uintptr_t)attrs;
    cfg.numAttrs = attrs ? numAttrs : 0;
    if (numAttrs && !attrs) return cudaErrorInvalidValue;
    return which ? cudaOccupancyMaxActiveClusters(result, func, &cfg)
                 : cudaOccupancyMaxPotentialClusterSize(result, func, &cfg);
#endif
}

/* The image must be exactly what its own header says (the runtime reads
 * it by that header, not by codeSize). */
cudaError_t apigenCudartLibraryLoadData(cudaLibrary_t *library, const void *code,
                                        size_t codeSize, enum cudaJitOption *jitOptions,
                                        void **jitOptionsValues, unsigned int numJitOptions,
                                        enum cudaLibraryOption *libraryOptions,
                                        void **libraryOptionValues,
                                        unsigned int numLibraryOptions)
{
    if (!code || apigen_cudart_image_size(code, codeSize) != codeSize)
        return cudaErrorInvalidKernelImage;
    /* a fat binary is read with 8-byte loads: keep it aligned */
    void *copy = aligned_alloc(16, (codeSize + 15) & ~(size_t)15);
    if (!copy) return cudaErrorMemoryAllocation;
    memcpy(copy, code, codeSize);
#ifdef APIGEN_HAS_FN_cudaLibraryLoadData
    cudaError_t e = cudaLibraryLoadData(library, copy, jitOptions, jitOptionsValues, numJitOptions,
                                        libraryOptions, libraryOptionValues, numLibraryOptions);
#else /* 11.x: no libraries (the guest never sends it) */
    (void)library, (void)jitOptions, (void)jitOptionsValues, (void)numJitOptions,
        (void)libraryOptions, (void)libraryOptionValues, (void)numLibraryOptions;
    cudaError_t e = cudaErrorNotSupported;
#endif
    free(copy); /* the runtime copies the image */
    return e;
}

/* ---- external semaphore nodes ------------------------------------------------------------- */
_Static_assert(sizeof(struct cudaExternalSemaphoreSignalParams) ==
                   sizeof(struct cudaExternalSemaphoreWaitParams),
               "signal and wait parameters travel as one struct");

#define EXTSEM_PARAMS(var)                                                                         \
    struct cudaExternalSemaphoreSignalNodeParams var = {(cudaExternalSemaphore_t *)sems, params,   \
                                                        numExtSems};                               \
    struct cudaExternalSemaphoreWaitNodeParams var##_w = {                                         \
        (cudaExternalSemaphore_t *)sems,                                                           \
        (const struct cudaExternalSemaphoreWaitParams *)(const void *)params, numExtSems}

cudaError_t apigenCudartAddExtSemNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                      const cudaGraphNode_t *pDependencies,
                                      size_t numDependencies, const cudaExternalSemaphore_t *sems,
                                      const struct cudaExternalSemaphoreSignalParams *params,
                                      uint32_t numExtSems, uint32_t wait)
{
    EXTSEM_PARAMS(p);
    return wait ? cudaGraphAddExternalSemaphoresWaitNode(pGraphNode, graph, pDependencies,
                                                         numDependencies, &p_w)
                : cudaGraphAddExternalSemaphoresSignalNode(pGraphNode, graph, pDependencies,
                                                           numDependencies, &p);
}

cudaError_t apigenCudartExtSemNodeSetParams(cudaGraphNode_t node,
                                            const cudaExternalSemaphore_t *sems,
                                            const struct cudaExternalSemaphoreSignalParams *params,
                                            uint32_t numExtSems, uint32_t wait)
{
    EXTSEM_PARAMS(p);
    return wait ? cudaGraphExternalSemaphoresWaitNodeSetParams(node, &p_w)
                : cudaGraphExternalSemaphoresSignalNodeSetParams(node, &p);
}

cudaError_t apigenCudartExecExtSemNodeSetParams(
    cudaGraphExec_t hGraphExec, cudaGraphNode_t node, const cudaExternalSemaphore_t *sems,
    const struct cudaExternalSemaphoreSignalParams *params, uint32_t numExtSems, uint32_t wait)
{
    EXTSEM_PARAMS(p);
    return wait ? cudaGraphExecExternalSemaphoresWaitNodeSetParams(hGraphExec, node, &p_w)
                : cudaGraphExecExternalSemaphoresSignalNodeSetParams(hGraphExec, node, &p);
}

cudaError_t apigenCudartExtSemNodeGetParams(cudaGraphNode_t node, cudaExternalSemaphore_t *sems,
                                            struct cudaExternalSemaphoreSignalParams *params,
                                            uint32_t cap, uint32_t *numExtSems, uint32_t wait)
{
    cudaExternalSemaphore_t *s = NULL;
    const void *pa = NULL;
    unsigned int n = 0;
    cudaError_t e;
    if (!sems || !params || !numExtSems) return cudaErrorInvalidValue;
    if (wait) {
        struct cudaExternalSemaphoreWaitNodeParams w;
        e = cudaGraphExternalSemaphoresWaitNodeGetParams(node, &w);
        s = w.extSemArray, pa = w.paramsArray, n = w.numExtSems;
    } else {
        struct cudaExternalSemaphoreSignalNodeParams g;
        e = cudaGraphExternalSemaphoresSignalNodeGetParams(node, &g);
        s = g.extSemArray, pa = g.paramsArray, n = g.numExtSems;
    }
    if (e != cudaSuccess) return e;
    *numExtSems = n;
    for (uint32_t i = 0; i < n && i < cap; i++) {
        sems[i] = s ? s[i] : NULL;
        if (pa) memcpy(&params[i], (const char *)pa + i * sizeof *params, sizeof *params);
    }
    return cudaSuccess;
}

/* ---- memory allocation nodes -------------------------------------------------------------- */
cudaError_t cudart_host_add_mem_alloc_node(apigen_call_ctx *cx, cudaGraphNode_t *pGraphNode,
                                           cudaGraph_t graph, const cudaGraphNode_t *pDependencies,
                                           size_t numDependencies,
                                           const struct cudaMemPoolProps *poolProps,
                                           const struct cudaMemAccessDesc *accessDescs,
                                           size_t accessDescCount, size_t bytesize, void **dptr)
{
    struct cudaMemAllocNodeParams p;
    if (!poolProps || !dptr) return cudaErrorInvalidValue;
    memset(&p, 0, sizeof p);
    p.poolProps = *poolProps;
    p.poolProps.win32SecurityAttributes = NULL;
    p.accessDescs = accessDescs;
    p.accessDescCount = accessDescCount;
    p.bytesize = bytesize;
    cudaError_t e = cudaGraphAddMemAllocNode(pGraphNode, graph, pDependencies, numDependencies, &p);
    if (e != cudaSuccess) return e;
    *dptr = p.dptr;
    /* the graph's allocation is this client's (free nodes, kernels, copies) */
    if (p.dptr && !apigen_dev_add(cx, (uint64_t)(uintptr_t)p.dptr, bytesize))
        return cudaErrorMemoryAllocation;
    return cudaSuccess;
}

cudaError_t apigenCudartMemAllocNodeGetParams(cudaGraphNode_t node,
                                              struct cudaMemPoolProps *poolProps,
                                              struct cudaMemAccessDesc *accessDescs, size_t cap,
                                              size_t *accessDescCount, size_t *bytesize,
                                              void **dptr)
{
    struct cudaMemAllocNodeParams p;
    if (!poolProps || !accessDescs || !accessDescCount || !bytesize || !dptr)
        return cudaErrorInvalidValue;
    cudaError_t e = cudaGraphMemAllocNodeGetParams(node, &p);
    if (e != cudaSuccess) return e;
    *poolProps = p.poolProps;
    poolProps->win32SecurityAttributes = NULL;
    *accessDescCount = p.accessDescCount;
    for (size_t i = 0; i < p.accessDescCount && i < cap && p.accessDescs; i++)
        accessDescs[i] = p.accessDescs[i];
    *bytesize = p.bytesize;
    *dptr = p.dptr;
    return cudaSuccess;
}

#ifdef APIGEN_HAS_FN_cudaLogsRegisterCallback /* 13.0: logs; async notifications served with them */
/* ---- log callbacks, async notifications ------------------------------------------------------ */
/* One record per registration; log messages wait in a small queue until the
 * guest's callback fetches them (apigenCudartLogsTake). */
#define LOG_QUEUE 64

typedef struct notify {
    struct notify *next;
    const void *session;
    uint64_t reg;
    void *bound;
    apigenCudartLogCb log_fn;
    apigenCudartAsyncCb async_fn;
    cudaLogsCallbackHandle log_h;
    cudaAsyncCallbackHandle_t async_h;
    struct {
        uint64_t id;
        char *text;
        size_t len;
    } q[LOG_QUEUE];
    bool gone;
} notify;

static pthread_mutex_t notify_lock_ = PTHREAD_MUTEX_INITIALIZER;
static notify *notifies_;
static uint64_t next_reg_ = 1, next_msg_ = 1;

static notify *notify_new(apigen_call_ctx *cx, void *bound)
{
    notify *n = calloc(1, sizeof *n);
    if (!n) return NULL;
    n->session = cx->session;
    n->bound = bound;
    pthread_mutex_lock(&notify_lock_);
    n->reg = next_reg_++;
    n->next = notifies_;
    notifies_ = n;
    pthread_mutex_unlock(&notify_lock_);
    return n;
}

/* under notify_lock_ */
static notify *notify_find(apigen_call_ctx *cx, uint64_t reg)
{
    for (notify *n = notifies_; n; n = n->next)
        if (n->reg == reg && n->session == cx->session && !n->gone) return n;
    return NULL;
}

static void CUDART_CB on_log(void *data, cudaLogLevel level, char *message, size_t length)
{
    notify *n = data;
    uint64_t id = 0;
    if (!message) return;
    size_t len = strnlen(message, length ? length : APIGEN_CUDART_MAX_LOG);
    char *text = malloc(len + 1);
    if (!text) return;
    memcpy(text, message, len);
    text[len] = 0;
    pthread_mutex_lock(&notify_lock_);
    if (!n->gone) {
        id = next_msg_++;
        unsigned slot = (unsigned)(id % LOG_QUEUE);
        free(n->q[slot].text); /* the oldest, never fetched */
        n->q[slot].id = id;
        n->q[slot].text = text;
        n->q[slot].len = len;
        text = NULL;
    }
    pthread_mutex_unlock(&notify_lock_);
    free(text);
    if (id && apigen_cb_alive(n->bound)) n->log_fn(id, (uint32_t)level, n->bound);
}

cudaError_t cudart_host_logs_register(apigen_call_ctx *cx, apigenCudartLogCb fn, void *user,
                                      uint64_t *reg)
{
    if (!fn || !user || !reg) return cudaErrorInvalidValue;
    notify *n = notify_new(cx, user);
    if (!n) return cudaErrorMemoryAllocation;
    n->log_fn = fn;
    cudaError_t e = cudaLogsRegisterCallback(on_log, n, &n->log_h);
    if (e != cudaSuccess) {
        n->gone = true; /* stays listed, named by no registration */
        return e;
    }
    *reg = n->reg;
    return cudaSuccess;
}

cudaError_t cudart_host_logs_take(apigen_call_ctx *cx, uint64_t msg, char *buf, size_t cap,
                                  size_t *len)
{
    cudaError_t e = cudaErrorInvalidValue;
    if (!buf || !len) return e;
    pthread_mutex_lock(&notify_lock_);
    for (notify *n = notifies_; n && e != cudaSuccess; n = n->next) {
        unsigned slot = (unsigned)(msg % LOG_QUEUE);
        if (n->session != cx->session || n->q[slot].id != msg || !n->q[slot].text) continue;
        size_t k = n->q[slot].len < cap ? n->q[slot].len : cap;
        memcpy(buf, n->q[slot].text, k);
        *len = k;
        free(n->q[slot].text);
        n->q[slot].text = NULL;
        n->q[slot].id = 0;
        e = cudaSuccess;
    }
    pthread_mutex_unlock(&notify_lock_);
    return e;
}

cudaError_t cudart_host_logs_unregister(apigen_call_ctx *cx, uint64_t reg)
{
    pthread_mutex_lock(&notify_lock_);
    notify *n = notify_find(cx, reg);
    pthread_mutex_unlock(&notify_lock_);
    if (!n || !n->log_fn) return cudaErrorInvalidValue;
    cudaError_t e = cudaLogsUnregisterCallback(n->log_h);
    if (e == cudaSuccess) {
        pthread_mutex_lock(&notify_lock_);
        n->gone = true; /* the record stays: the driver may still be in on_log */
        for (unsigned i = 0; i < LOG_QUEUE; i++) {
            free(n->q[i].text);
            n->q[i].text = NULL;
        }
        pthread_mutex_unlock(&notify_lock_);
    }
    return e;
}

static void on_async(cudaAsyncNotificationInfo_t *info, void *data, cudaAsyncCallbackHandle_t h)
{
    notify *n = data;
    (void)h;
    if (!info || n->gone || !apigen_cb_alive(n->bound)) return;
    uint64_t bytes = info->type == cudaAsyncNotificationTypeOverBudget
                         ? info->info.overBudget.bytesOverBudget
                         : 0;
    n->async_fn((uint32_t)info->type, bytes, n->bound);
}

cudaError_t cudart_host_register_async(apigen_call_ctx *cx, int device, apigenCudartAsyncCb fn,
                                       void *user, uint64_t *reg)
{
    if (!fn || !user || !reg) return cudaErrorInvalidValue;
    notify *n = notify_new(cx, user);
    if (!n) return cudaErrorMemoryAllocation;
    n->async_fn = fn;
    cudaError_t e = cudaDeviceRegisterAsyncNotification(device, on_async, n, &n->async_h);
    if (e != cudaSuccess) {
        n->gone = true;
        return e;
    }
    *reg = n->reg;
    return cudaSuccess;
}

cudaError_t cudart_host_unregister_async(apigen_call_ctx *cx, int device, uint64_t reg)
{
    pthread_mutex_lock(&notify_lock_);
    notify *n = notify_find(cx, reg);
    pthread_mutex_unlock(&notify_lock_);
    if (!n || !n->async_fn) return cudaErrorInvalidValue;
    cudaError_t e = cudaDeviceUnregisterAsyncNotification(device, n->async_h);
    if (e == cudaSuccess) n->gone = true;
    return e;
}
#else
cudaError_t cudart_host_logs_register(apigen_call_ctx *cx, apigenCudartLogCb fn, void *user,
                                      uint64_t *reg)
{
    (void)cx, (void)fn, (void)user, (void)reg;
    return cudaErrorNotSupported;
}
cudaError_t cudart_host_logs_take(apigen_call_ctx *cx, uint64_t msg, char *buf, size_t cap,
                                  size_t *len)
{
    (void)cx, (void)msg, (void)buf, (void)cap, (void)len;
    return cudaErrorNotSupported;
}
cudaError_t cudart_host_logs_unregister(apigen_call_ctx *cx, uint64_t reg)
{
    (void)cx, (void)reg;
    return cudaErrorNotSupported;
}
cudaError_t cudart_host_register_async(apigen_call_ctx *cx, int device, apigenCudartAsyncCb fn,
                                       void *user, uint64_t *reg)
{
    (void)cx, (void)device, (void)fn, (void)user, (void)reg;
    return cudaErrorNotSupported;
}
cudaError_t cudart_host_unregister_async(apigen_call_ctx *cx, int device, uint64_t reg)
{
    (void)cx, (void)device, (void)reg;
    return cudaErrorNotSupported;
}
#endif
