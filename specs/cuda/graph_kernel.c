/* Kernel nodes of the CUDA driver stub: cuGraphAddKernelNode,
 * cuGraphKernelNodeGetParams/SetParams, cuGraphExecKernelNodeSetParams, in
 * their v1 and v2 forms. The arguments (kernelParams or `extra`) are packed
 * with the kernel's launch layout (launch.c) and travel as one buffer; the
 * server gives the driver that buffer. GetParams returns the node's
 * arguments as kernelParams pointing into a copy the stub keeps per node
 * (valid until the next GetParams of that node). */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apigen_rt.h"
#include "cuda_guest.h"
#include "cuda_wire.h"

/* CUDA 12.0 added the _v2 entry points, whose CUDA_KERNEL_NODE_PARAMS
 * (_v2) carries a kernel handle (kern) and a context (ctx). Before, that
 * typedef is the _v1 structure (func only) and the v1 entry points are the
 * only ones: the code below serves them through its _v2 functions, kept
 * static there (the driver of those versions exports no _v2). */
#ifdef APIGEN_HAS_FN_cuGraphAddKernelNode_v2
#define EXPORT_V2 APIGEN_EXPORT
#else
#define EXPORT_V2 static
#endif
#ifdef APIGEN_HAS_FIELD_CUDA_KERNEL_NODE_PARAMS_v2_st_kern
#define KERN_OF(p) ((p)->kern)
#define CTX_OF(p) ((p)->ctx)
#else
#define KERN_OF(p) ((void)(p), (CUkernel)NULL)
#define CTX_OF(p) ((void)(p), (CUcontext)NULL)
#endif

typedef struct packed {
    unsigned char *buf;
    size_t size;
    unsigned dims[7];
} packed;

/* host addresses the device cannot reach there given as their twins', as
 * launches do (launch.c) */
static CUresult reach(packed *out)
{
    CUresult e = apigen_cuda_reach_params(out->buf, out->size);
    if (e != CUDA_SUCCESS) {
        free(out->buf);
        out->buf = NULL;
    }
    return e;
}

/* the node parameters' arguments packed, and the launch dimensions */
static CUresult pack(const CUDA_KERNEL_NODE_PARAMS *p, packed *out)
{
    memset(out, 0, sizeof *out);
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    unsigned d[7] = {p->gridDimX,  p->gridDimY,  p->gridDimZ,      p->blockDimX,
                     p->blockDimY, p->blockDimZ, p->sharedMemBytes};
    memcpy(out->dims, d, sizeof d);
    CUfunction f = p->func ? p->func : (CUfunction)KERN_OF(p);
    if (!f) return CUDA_ERROR_INVALID_VALUE;
    const struct apigen_cuda_layout *l;
    CUresult e = apigen_cuda_get_layout(f, &l);
    if (e != CUDA_SUCCESS) return e;
    if (p->kernelParams && p->extra) return CUDA_ERROR_INVALID_VALUE;
    if (p->extra) {
        const void *b;
        size_t n;
        e = apigen_cuda_extra_buffer(l, p->extra, &b, &n);
        if (e != CUDA_SUCCESS) return e;
        if (n && !(out->buf = malloc(n))) return CUDA_ERROR_OUT_OF_MEMORY;
        if (n) memcpy(out->buf, b, n);
        out->size = n;
        return reach(out);
    }
    if (l->n && !p->kernelParams) return CUDA_ERROR_INVALID_VALUE;
    if (l->size && !(out->buf = calloc(1, l->size))) return CUDA_ERROR_OUT_OF_MEMORY;
    for (unsigned i = 0; i < l->n; i++) {
        if (!p->kernelParams[i]) {
            free(out->buf);
            out->buf = NULL;
            return CUDA_ERROR_INVALID_VALUE;
        }
        memcpy(out->buf + l->offsets[i], p->kernelParams[i], l->sizes[i]);
    }
    out->size = l->size;
    return reach(out);
}

static CUDA_KERNEL_NODE_PARAMS from_v1(const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
    CUDA_KERNEL_NODE_PARAMS q;
    memset(&q, 0, sizeof q);
    if (!p) return q;
    q.func = p->func;
    q.gridDimX = p->gridDimX, q.gridDimY = p->gridDimY, q.gridDimZ = p->gridDimZ;
    q.blockDimX = p->blockDimX, q.blockDimY = p->blockDimY, q.blockDimZ = p->blockDimZ;
    q.sharedMemBytes = p->sharedMemBytes;
    q.kernelParams = p->kernelParams;
    q.extra = p->extra;
    return q;
}

#define ID(h) ((uint64_t)(uintptr_t)(h))

EXPORT_V2 CUresult cuGraphAddKernelNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph,
                                           const CUgraphNode *dependencies,
                                           size_t numDependencies,
                                           const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    packed k;
    CUresult e = pack(nodeParams, &k);
    if (e != CUDA_SUCCESS) return e;
    e = apigenCudaAddKernelNode(phGraphNode, hGraph, dependencies, numDependencies,
                                ID(nodeParams->func), ID(KERN_OF(nodeParams)),
                                CTX_OF(nodeParams), k.dims, k.buf, k.size);
    free(k.buf);
    return e;
}

APIGEN_EXPORT CUresult cuGraphAddKernelNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                            const CUgraphNode *dependencies,
                                            size_t numDependencies,
                                            const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams)
{
    if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
    CUDA_KERNEL_NODE_PARAMS q = from_v1(nodeParams);
    return cuGraphAddKernelNode_v2(phGraphNode, hGraph, dependencies, numDependencies, &q);
}

EXPORT_V2 CUresult cuGraphKernelNodeSetParams_v2(CUgraphNode hNode,
                                                 const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    packed k;
    CUresult e = pack(nodeParams, &k);
    if (e != CUDA_SUCCESS) return e;
    e = apigenCudaKernelNodeSetParams(hNode, ID(nodeParams->func), ID(KERN_OF(nodeParams)),
                                      CTX_OF(nodeParams), k.dims, k.buf, k.size);
    free(k.buf);
    return e;
}

APIGEN_EXPORT CUresult cuGraphKernelNodeSetParams(CUgraphNode hNode,
                                                  const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams)
{
    if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
    CUDA_KERNEL_NODE_PARAMS q = from_v1(nodeParams);
    return cuGraphKernelNodeSetParams_v2(hNode, &q);
}

EXPORT_V2 CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                     const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    packed k;
    CUresult e = pack(nodeParams, &k);
    if (e != CUDA_SUCCESS) return e;
    e = apigenCudaExecKernelNodeSetParams(hGraphExec, hNode, ID(nodeParams->func),
                                          ID(KERN_OF(nodeParams)), CTX_OF(nodeParams), k.dims,
                                          k.buf, k.size);
    free(k.buf);
    return e;
}

APIGEN_EXPORT CUresult cuGraphExecKernelNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                      const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams)
{
    if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
    CUDA_KERNEL_NODE_PARAMS q = from_v1(nodeParams);
    return cuGraphExecKernelNodeSetParams_v2(hGraphExec, hNode, &q);
}

/* ---- GetParams: the arguments kept per node ----------------------------------------------------- */
typedef struct kept {
    uint64_t node;
    unsigned char *buf;
    void **ptrs;
    struct kept *next;
} kept;
static kept *kept_;
static pthread_mutex_t lock_ = PTHREAD_MUTEX_INITIALIZER;

EXPORT_V2 CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode hNode,
                                                 CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
    uint64_t func = 0, kern = 0;
    CUcontext ctx = NULL;
    unsigned dims[7] = {0};
    size_t cap = 4096, n = 0;
    unsigned char *buf = NULL;
    CUresult e;
    for (;;) {
        unsigned char *nb = realloc(buf, cap);
        if (!nb) {
            free(buf);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        buf = nb;
        e = apigenCudaKernelNodeGetParams(hNode, &func, &kern, &ctx, dims, buf, cap, &n);
        if (e != CUDA_SUCCESS || n <= cap || cap >= ((size_t)1 << 24)) break;
        cap = n;
    }
    const struct apigen_cuda_layout *l = NULL;
    CUfunction f = (CUfunction)(uintptr_t)(func ? func : kern);
    if (e == CUDA_SUCCESS && f) e = apigen_cuda_get_layout(f, &l);
    void **ptrs = NULL;
    if (e == CUDA_SUCCESS && l && l->n && !(ptrs = calloc(l->n, sizeof *ptrs)))
        e = CUDA_ERROR_OUT_OF_MEMORY;
    if (e != CUDA_SUCCESS) {
        free(buf);
        return e;
    }
    for (unsigned i = 0; l && i < l->n; i++)
        ptrs[i] = l->offsets[i] + l->sizes[i] <= n ? buf + l->offsets[i] : NULL;
    pthread_mutex_lock(&lock_);
    kept *k = kept_;
    while (k && k->node != ID(hNode)) k = k->next;
    if (!k && (k = calloc(1, sizeof *k))) {
        k->node = ID(hNode);
        k->next = kept_;
        kept_ = k;
    }
    if (k) {
        free(k->buf);
        free(k->ptrs);
        k->buf = buf;
        k->ptrs = ptrs;
    }
    pthread_mutex_unlock(&lock_);
    if (!k) {
        free(buf);
        free(ptrs);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    memset(nodeParams, 0, sizeof *nodeParams);
    nodeParams->func = (CUfunction)(uintptr_t)func;
#ifdef APIGEN_HAS_FIELD_CUDA_KERNEL_NODE_PARAMS_v2_st_kern
    nodeParams->kern = (CUkernel)(uintptr_t)kern;
    nodeParams->ctx = ctx;
#else
    /* no place for a kernel handle: one the server answers is a function */
    if (!func) nodeParams->func = (CUfunction)(uintptr_t)kern;
    (void)ctx;
#endif
    nodeParams->gridDimX = dims[0], nodeParams->gridDimY = dims[1], nodeParams->gridDimZ = dims[2];
    nodeParams->blockDimX = dims[3], nodeParams->blockDimY = dims[4];
    nodeParams->blockDimZ = dims[5];
    nodeParams->sharedMemBytes = dims[6];
    nodeParams->kernelParams = ptrs;
    nodeParams->extra = NULL;
    return CUDA_SUCCESS;
}

APIGEN_EXPORT CUresult cuGraphKernelNodeGetParams(CUgraphNode hNode,
                                                  CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams)
{
    if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
    CUDA_KERNEL_NODE_PARAMS q;
    CUresult e = cuGraphKernelNodeGetParams_v2(hNode, &q);
    if (e != CUDA_SUCCESS) return e;
    nodeParams->func = q.func ? q.func : (CUfunction)KERN_OF(&q);
    nodeParams->gridDimX = q.gridDimX, nodeParams->gridDimY = q.gridDimY;
    nodeParams->gridDimZ = q.gridDimZ;
    nodeParams->blockDimX = q.blockDimX, nodeParams->blockDimY = q.blockDimY;
    nodeParams->blockDimZ = q.blockDimZ;
    nodeParams->sharedMemBytes = q.sharedMemBytes;
    nodeParams->kernelParams = q.kernelParams;
    nodeParams->extra = NULL;
    return CUDA_SUCCESS;
}
