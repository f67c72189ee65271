/* Graph nodes of the CUDA driver stub whose parameters point to arrays:
 * memory allocation nodes (access descriptors) and batch memory operation
 * nodes (operations). The arrays travel in the internal calls; GetParams
 * returns them in copies the stub keeps per node (valid until the next
 * GetParams of that node). An allocation node's memory becomes the
 * client's (types.device). */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apigen_rt.h"
#include "cuda_guest.h"
#include "cuda_wire.h"

typedef struct kept {
    uint64_t node;
    void *arr;
    struct kept *next;
} kept;
static kept *kept_;
static pthread_mutex_t lock_ = PTHREAD_MUTEX_INITIALIZER;

/* keeps arr as node's array (the previous one is freed) */
static int keep(CUgraphNode node, void *arr)
{
    pthread_mutex_lock(&lock_);
    kept *k = kept_;
    while (k && k->node != (uint64_t)(uintptr_t)node) k = k->next;
    if (!k && (k = calloc(1, sizeof *k))) {
        k->node = (uint64_t)(uintptr_t)node;
        k->next = kept_;
        kept_ = k;
    }
    if (k) {
        free(k->arr);
        k->arr = arr;
    }
    pthread_mutex_unlock(&lock_);
    return k != NULL;
}

APIGEN_EXPORT CUresult cuGraphAddMemAllocNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                              const CUgraphNode *dependencies,
                                              size_t numDependencies,
                                              CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams)
{
    if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
    return apigenCudaAddMemAllocNode(phGraphNode, hGraph, dependencies, numDependencies,
                                     &nodeParams->poolProps, nodeParams->accessDescs,
                                     nodeParams->accessDescCount, nodeParams->bytesize,
                                     &nodeParams->dptr);
}

APIGEN_EXPORT CUresult cuGraphMemAllocNodeGetParams(CUgraphNode hNode,
                                                    CUDA_MEM_ALLOC_NODE_PARAMS *params_out)
{
    if (!params_out) return CUDA_ERROR_INVALID_VALUE;
    size_t cap = 64, n = 0;
    CUmemAccessDesc *d = NULL;
    CUresult e;
    for (;;) {
        CUmemAccessDesc *nd = realloc(d, cap * sizeof *nd);
        if (!nd) {
            free(d);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        d = nd;
        e = apigenCudaMemAllocNodeGetParams(hNode, &params_out->poolProps, d, cap, &n,
                                            &params_out->bytesize, &params_out->dptr);
        if (e != CUDA_SUCCESS || n <= cap) break;
        cap = n;
    }
    if (e != CUDA_SUCCESS || !keep(hNode, d)) {
        free(d);
        return e != CUDA_SUCCESS ? e : CUDA_ERROR_OUT_OF_MEMORY;
    }
    params_out->accessDescs = n ? d : NULL;
    params_out->accessDescCount = n;
    return CUDA_SUCCESS;
}

APIGEN_EXPORT CUresult cuGraphAddBatchMemOpNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                                const CUgraphNode *dependencies,
                                                size_t numDependencies,
                                                const CUDA_BATCH_MEM_OP_NODE_PARAMS *nodeParams)
{
    if (!nodeParams || !phGraphNode) return CUDA_ERROR_INVALID_VALUE;
    return apigenCudaBatchMemOpNode(0, phGraphNode, hGraph, dependencies, numDependencies, NULL,
                                    NULL, nodeParams->ctx, nodeParams->paramArray,
                                    nodeParams->count, nodeParams->flags);
}

APIGEN_EXPORT CUresult cuGraphBatchMemOpNodeSetParams(CUgraphNode hNode,
                                                      const CUDA_BATCH_MEM_OP_NODE_PARAMS *nodeParams)
{
    if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
    return apigenCudaBatchMemOpNode(1, NULL, NULL, NULL, 0, NULL, hNode, nodeParams->ctx,
                                    nodeParams->paramArray, nodeParams->count, nodeParams->flags);
}

APIGEN_EXPORT CUresult cuGraphExecBatchMemOpNodeSetParams(
    CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_BATCH_MEM_OP_NODE_PARAMS *nodeParams)
{
    if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
    return apigenCudaBatchMemOpNode(2, NULL, NULL, NULL, 0, hGraphExec, hNode, nodeParams->ctx,
                                    nodeParams->paramArray, nodeParams->count, nodeParams->flags);
}

APIGEN_EXPORT CUresult cuGraphBatchMemOpNodeGetParams(CUgraphNode hNode,
                                                      CUDA_BATCH_MEM_OP_NODE_PARAMS *nodeParams_out)
{
    if (!nodeParams_out) return CUDA_ERROR_INVALID_VALUE;
    unsigned cap = 16, n = 0, flags = 0;
    CUstreamBatchMemOpParams *a = NULL;
    CUcontext ctx = NULL;
    CUresult e;
    for (;;) {
        CUstreamBatchMemOpParams *na = realloc(a, cap * sizeof *na);
        if (!na) {
            free(a);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        a = na;
        e = apigenCudaBatchMemOpNodeGetParams(hNode, &ctx, a, cap, &n, &flags);
        if (e != CUDA_SUCCESS || n <= cap) break;
        cap = n;
    }
    if (e != CUDA_SUCCESS || !keep(hNode, a)) {
        free(a);
        return e != CUDA_SUCCESS ? e : CUDA_ERROR_OUT_OF_MEMORY;
    }
    nodeParams_out->ctx = ctx;
    nodeParams_out->count = n;
    nodeParams_out->paramArray = n ? a : NULL;
    nodeParams_out->flags = flags;
    return CUDA_SUCCESS;
}
