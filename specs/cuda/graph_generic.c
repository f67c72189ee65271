/* Graph nodes from CUgraphNodeParams (cuGraphAddNode, cuGraphAddNode_v2,
 * cuGraphNodeSetParams, cuGraphExecNodeSetParams): the union holds every
 * node kind's parameters, pointers to guest memory and guest functions
 * among them, which no one wire form can carry. Each kind goes through the
 * stub's own call for it (hostfn.c for host nodes, graph_kernel.c for
 * kernels, ...), which answers as the driver does; kinds the stub cannot
 * forward (external semaphores, conditional nodes, a moved child graph) are
 * CUDA_ERROR_NOT_SUPPORTED with one log line each. */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apigen_rt.h"
#include "cuda_guest.h"
#include "cuda_wire.h"

_Static_assert(sizeof(CUDA_KERNEL_NODE_PARAMS_v3) == sizeof(CUDA_KERNEL_NODE_PARAMS_v2),
               "kernel node parameters v3 and v2 share one layout");
_Static_assert(sizeof(CUDA_MEM_ALLOC_NODE_PARAMS_v2) == sizeof(CUDA_MEM_ALLOC_NODE_PARAMS_v1),
               "memory allocation node parameters v2 and v1 share one layout");
_Static_assert(sizeof(CUDA_BATCH_MEM_OP_NODE_PARAMS_v2) == sizeof(CUDA_BATCH_MEM_OP_NODE_PARAMS_v1),
               "batch memory operation node parameters v2 and v1 share one layout");

static CUresult unsupported(const char *fn, CUgraphNodeType type, const char *why)
{
    static atomic_uint logged; /* one line per node kind (bit `type`) */
    unsigned bit = 1u << ((unsigned)type & 31u);
    if (!(atomic_fetch_or(&logged, bit) & bit))
        apigen_log("cuda: %s: node type %d is not supported by the driver stub: %s", fn, (int)type,
                   why);
    return CUDA_ERROR_NOT_SUPPORTED;
}

#define SEMAS "external semaphore nodes' parameters point to handle arrays"
#define COND "a conditional node's parameters hand out body graphs"

static CUDA_MEMSET_NODE_PARAMS_v1 memset_v1(const CUDA_MEMSET_NODE_PARAMS_v2 *m)
{
    CUDA_MEMSET_NODE_PARAMS_v1 v = {m->dst, m->pitch, m->value, m->elementSize, m->width,
                                    m->height};
    return v;
}

static bool edges_plain(const CUgraphEdgeData *d, size_t n)
{
    static const CUgraphEdgeData zero;
    for (size_t i = 0; d && i < n; i++)
        if (memcmp(&d[i], &zero, sizeof zero) != 0) return false;
    return true;
}

static CUresult add_node(const char *fn, CUgraphNode *ph, CUgraph g, const CUgraphNode *deps,
                         size_t nd, CUgraphNodeParams *p)
{
    switch (p->type) {
    case CU_GRAPH_NODE_TYPE_KERNEL: {
        CUDA_KERNEL_NODE_PARAMS_v2 k;
        memcpy(&k, &p->kernel, sizeof k);
        return cuGraphAddKernelNode_v2(ph, g, deps, nd, &k);
    }
    case CU_GRAPH_NODE_TYPE_MEMCPY:
        if (p->memcpy.flags || p->memcpy.reserved) return CUDA_ERROR_INVALID_VALUE;
        return cuGraphAddMemcpyNode(ph, g, deps, nd, &p->memcpy.copyParams, p->memcpy.copyCtx);
    case CU_GRAPH_NODE_TYPE_MEMSET: {
        CUDA_MEMSET_NODE_PARAMS_v1 m = memset_v1(&p->memset);
        return cuGraphAddMemsetNode(ph, g, deps, nd, &m, p->memset.ctx);
    }
    case CU_GRAPH_NODE_TYPE_HOST: {
        CUDA_HOST_NODE_PARAMS h = {p->host.fn, p->host.userData};
        return cuGraphAddHostNode(ph, g, deps, nd, &h);
    }
    case CU_GRAPH_NODE_TYPE_GRAPH:
        if (p->graph.ownership != CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE)
            return unsupported(fn, p->type, "a child graph moved into its parent (only clones)");
        return cuGraphAddChildGraphNode(ph, g, deps, nd, p->graph.graph);
    case CU_GRAPH_NODE_TYPE_EMPTY: return cuGraphAddEmptyNode(ph, g, deps, nd);
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT: return cuGraphAddEventWaitNode(ph, g, deps, nd, p->eventWait.event);
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
        return cuGraphAddEventRecordNode(ph, g, deps, nd, p->eventRecord.event);
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC: {
        CUDA_MEM_ALLOC_NODE_PARAMS_v1 a;
        memcpy(&a, &p->alloc, sizeof a);
        CUresult e = cuGraphAddMemAllocNode(ph, g, deps, nd, &a);
        p->alloc.dptr = a.dptr; /* out: the node's address */
        return e;
    }
    case CU_GRAPH_NODE_TYPE_MEM_FREE: return cuGraphAddMemFreeNode(ph, g, deps, nd, p->free.dptr);
    case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP: {
        CUDA_BATCH_MEM_OP_NODE_PARAMS_v1 b;
        memcpy(&b, &p->memOp, sizeof b);
        return cuGraphAddBatchMemOpNode(ph, g, deps, nd, &b);
    }
    case CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL:
    case CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT: return unsupported(fn, p->type, SEMAS);
    case CU_GRAPH_NODE_TYPE_CONDITIONAL: return unsupported(fn, p->type, COND);
    default: return CUDA_ERROR_INVALID_VALUE;
    }
}

/* Edges with data: the node first, then its edges (the per-kind calls take
 * plain dependencies). */
static CUresult add_node_edges(const char *fn, CUgraphNode *ph, CUgraph g,
                               const CUgraphNode *deps, const CUgraphEdgeData *edges, size_t nd,
                               CUgraphNodeParams *p)
{
    if (!p || !ph) return CUDA_ERROR_INVALID_VALUE;
    if (edges_plain(edges, nd)) return add_node(fn, ph, g, deps, nd, p);
    CUresult e = add_node(fn, ph, g, NULL, 0, p);
    if (e != CUDA_SUCCESS) return e;
    CUgraphNode *to = malloc(nd * sizeof *to);
    if (!to) e = CUDA_ERROR_OUT_OF_MEMORY;
    for (size_t i = 0; to && i < nd; i++) to[i] = *ph;
    if (to) e = cuGraphAddDependencies_v2(g, deps, to, edges, nd);
    free(to);
    if (e != CUDA_SUCCESS) (void)cuGraphDestroyNode(*ph);
    return e;
}

APIGEN_EXPORT CUresult cuGraphAddNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                      const CUgraphNode *dependencies, size_t numDependencies,
                                      CUgraphNodeParams *nodeParams)
{
    return add_node_edges("cuGraphAddNode", phGraphNode, hGraph, dependencies, NULL,
                          numDependencies, nodeParams);
}

APIGEN_EXPORT CUresult cuGraphAddNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph,
                                         const CUgraphNode *dependencies,
                                         const CUgraphEdgeData *dependencyData,
                                         size_t numDependencies, CUgraphNodeParams *nodeParams)
{
    return add_node_edges("cuGraphAddNode_v2", phGraphNode, hGraph, dependencies, dependencyData,
                          numDependencies, nodeParams);
}

/* exec == NULL: cuGraphNodeSetParams, else cuGraphExecNodeSetParams. A
 * node of another kind than p->type: the per-kind call's own error, as the
 * driver answers. */
static CUresult set_node(const char *fn, CUgraphExec exec, CUgraphNode node, CUgraphNodeParams *p)
{
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    switch (p->type) {
    case CU_GRAPH_NODE_TYPE_KERNEL: {
        CUDA_KERNEL_NODE_PARAMS_v2 k;
        memcpy(&k, &p->kernel, sizeof k);
        return exec ? cuGraphExecKernelNodeSetParams_v2(exec, node, &k)
                    : cuGraphKernelNodeSetParams_v2(node, &k);
    }
    case CU_GRAPH_NODE_TYPE_MEMCPY:
        if (p->memcpy.flags || p->memcpy.reserved) return CUDA_ERROR_INVALID_VALUE;
        return exec ? cuGraphExecMemcpyNodeSetParams(exec, node, &p->memcpy.copyParams,
                                                     p->memcpy.copyCtx)
                    : cuGraphMemcpyNodeSetParams(node, &p->memcpy.copyParams);
    case CU_GRAPH_NODE_TYPE_MEMSET: {
        CUDA_MEMSET_NODE_PARAMS_v1 m = memset_v1(&p->memset);
        return exec ? cuGraphExecMemsetNodeSetParams(exec, node, &m, p->memset.ctx)
                    : cuGraphMemsetNodeSetParams(node, &m);
    }
    case CU_GRAPH_NODE_TYPE_HOST: {
        CUDA_HOST_NODE_PARAMS h = {p->host.fn, p->host.userData};
        return exec ? cuGraphExecHostNodeSetParams(exec, node, &h)
                    : cuGraphHostNodeSetParams(node, &h);
    }
    case CU_GRAPH_NODE_TYPE_GRAPH:
        if (!exec)
            return unsupported(fn, p->type, "a child graph node's graph is set in executable graphs only");
        return cuGraphExecChildGraphNodeSetParams(exec, node, p->graph.graph);
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
        return exec ? cuGraphExecEventWaitNodeSetEvent(exec, node, p->eventWait.event)
                    : cuGraphEventWaitNodeSetEvent(node, p->eventWait.event);
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
        return exec ? cuGraphExecEventRecordNodeSetEvent(exec, node, p->eventRecord.event)
                    : cuGraphEventRecordNodeSetEvent(node, p->eventRecord.event);
    case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP: {
        CUDA_BATCH_MEM_OP_NODE_PARAMS_v1 b;
        memcpy(&b, &p->memOp, sizeof b);
        return exec ? cuGraphExecBatchMemOpNodeSetParams(exec, node, &b)
                    : cuGraphBatchMemOpNodeSetParams(node, &b);
    }
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
    case CU_GRAPH_NODE_TYPE_MEM_FREE: return CUDA_ERROR_NOT_SUPPORTED; /* as cuda.h documents */
    case CU_GRAPH_NODE_TYPE_EMPTY: return unsupported(fn, p->type, "an empty node has no parameters");
    case CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL:
    case CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT: return unsupported(fn, p->type, SEMAS);
    case CU_GRAPH_NODE_TYPE_CONDITIONAL: return unsupported(fn, p->type, COND);
    default: return CUDA_ERROR_INVALID_VALUE;
    }
}

APIGEN_EXPORT CUresult cuGraphNodeSetParams(CUgraphNode hNode, CUgraphNodeParams *nodeParams)
{
    return set_node("cuGraphNodeSetParams", NULL, hNode, nodeParams);
}

APIGEN_EXPORT CUresult cuGraphExecNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                CUgraphNodeParams *nodeParams)
{
    return set_node("cuGraphExecNodeSetParams", hGraphExec, hNode, nodeParams);
}
