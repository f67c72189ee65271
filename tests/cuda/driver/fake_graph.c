/* A stand-in for the driver's graphs, preloaded into apigen-server-cuda by
 * tests/cuda/driver_graph_ci.sh (LD_PRELOAD) on a machine without a GPU:
 * graphs of host and empty nodes, executable copies, and streams that run
 * launched graphs in order on a thread of their own, calling each host
 * node's function there as the driver does. So CI runs the stub's host
 * nodes (guest records, callback thread, the server's wait) for real.
 * Dependencies are taken as given: nodes run in the order they were added,
 * which every dependency allows. Everything else is the toolkit's stubs
 * library. Never used with a GPU. */
#define _POSIX_C_SOURCE 200809L
#include <cuda.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define FAKE __attribute__((visibility("default")))
#define MAXN 16

struct CUgraphNode_st {
    CUgraphNodeType type;
    CUDA_HOST_NODE_PARAMS host;
};
struct CUgraph_st {
    CUgraphNode nodes[MAXN];
    int n;
};
struct CUgraphExec_st {
    CUgraphNode nodes[MAXN];
    CUDA_HOST_NODE_PARAMS host[MAXN];
    int n;
};
typedef struct item {
    CUDA_HOST_NODE_PARAMS host[MAXN]; /* the executable's nodes at launch */
    int n;
    struct item *next;
} item;
struct CUstream_st {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    item *head, *tail;
    int busy, stop;
};

FAKE CUresult cuInit(unsigned int flags) { return flags ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS; }

FAKE CUresult cuGraphCreate(CUgraph *g, unsigned int flags)
{
    if (!g || flags) return CUDA_ERROR_INVALID_VALUE;
    *g = calloc(1, sizeof **g);
    return *g ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

FAKE CUresult cuGraphDestroy(CUgraph g)
{
    if (!g) return CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; i < g->n; i++) free(g->nodes[i]);
    free(g);
    return CUDA_SUCCESS;
}

static CUresult add(CUgraphNode *ph, CUgraph g, CUgraphNodeType type,
                    const CUDA_HOST_NODE_PARAMS *p)
{
    if (!ph || !g || g->n == MAXN) return CUDA_ERROR_INVALID_VALUE;
    CUgraphNode n = calloc(1, sizeof *n);
    if (!n) return CUDA_ERROR_OUT_OF_MEMORY;
    n->type = type;
    if (p) n->host = *p;
    g->nodes[g->n++] = n;
    *ph = n;
    return CUDA_SUCCESS;
}

FAKE CUresult cuGraphAddHostNode(CUgraphNode *ph, CUgraph g, const CUgraphNode *deps, size_t nd,
                                 const CUDA_HOST_NODE_PARAMS *p)
{
    if ((nd && !deps) || !p || !p->fn) return CUDA_ERROR_INVALID_VALUE;
    return add(ph, g, CU_GRAPH_NODE_TYPE_HOST, p);
}

FAKE CUresult cuGraphAddEmptyNode(CUgraphNode *ph, CUgraph g, const CUgraphNode *deps, size_t nd)
{
    if (nd && !deps) return CUDA_ERROR_INVALID_VALUE;
    return add(ph, g, CU_GRAPH_NODE_TYPE_EMPTY, NULL);
}

FAKE CUresult cuGraphNodeGetType(CUgraphNode n, CUgraphNodeType *type)
{
    if (!n || !type) return CUDA_ERROR_INVALID_VALUE;
    *type = n->type;
    return CUDA_SUCCESS;
}

FAKE CUresult cuGraphHostNodeGetParams(CUgraphNode n, CUDA_HOST_NODE_PARAMS *p)
{
    if (!n || !p || n->type != CU_GRAPH_NODE_TYPE_HOST) return CUDA_ERROR_INVALID_VALUE;
    *p = n->host;
    return CUDA_SUCCESS;
}

FAKE CUresult cuGraphHostNodeSetParams(CUgraphNode n, const CUDA_HOST_NODE_PARAMS *p)
{
    if (!n || !p || !p->fn || n->type != CU_GRAPH_NODE_TYPE_HOST) return CUDA_ERROR_INVALID_VALUE;
    n->host = *p;
    return CUDA_SUCCESS;
}

FAKE CUresult cuGraphInstantiateWithFlags(CUgraphExec *e, CUgraph g, unsigned long long flags)
{
    if (!e || !g || flags) return CUDA_ERROR_INVALID_VALUE;
    CUgraphExec x = calloc(1, sizeof *x);
    if (!x) return CUDA_ERROR_OUT_OF_MEMORY;
    for (int i = 0; i < g->n; i++) {
        x->nodes[i] = g->nodes[i];
        x->host[i] = g->nodes[i]->host;
    }
    x->n = g->n;
    *e = x;
    return CUDA_SUCCESS;
}

FAKE CUresult cuGraphExecHostNodeSetParams(CUgraphExec e, CUgraphNode n,
                                           const CUDA_HOST_NODE_PARAMS *p)
{
    if (!e || !n || !p || !p->fn || n->type != CU_GRAPH_NODE_TYPE_HOST) return CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; i < e->n; i++)
        if (e->nodes[i] == n) {
            e->host[i] = *p;
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_INVALID_VALUE;
}

FAKE CUresult cuGraphExecDestroy(CUgraphExec e)
{
    if (!e) return CUDA_ERROR_INVALID_VALUE;
    free(e);
    return CUDA_SUCCESS;
}

static void *worker(void *arg)
{
    CUstream s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (!s->head && !s->stop) pthread_cond_wait(&s->cv, &s->mu);
        if (!s->head) break;
        item *it = s->head;
        pthread_mutex_unlock(&s->mu);
        for (int i = 0; i < it->n; i++)
            if (it->host[i].fn) it->host[i].fn(it->host[i].userData);
        pthread_mutex_lock(&s->mu);
        s->head = it->next;
        if (!s->head) s->tail = NULL;
        s->busy--;
        free(it);
        pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

FAKE CUresult cuStreamCreate(CUstream *ps, unsigned int flags)
{
    (void)flags;
    if (!ps) return CUDA_ERROR_INVALID_VALUE;
    CUstream s = calloc(1, sizeof *s);
    if (!s) return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    if (pthread_create(&s->thread, NULL, worker, s) != 0) {
        free(s);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *ps = s;
    return CUDA_SUCCESS;
}

FAKE CUresult cuGraphLaunch(CUgraphExec e, CUstream s)
{
    if (!e || !s) return CUDA_ERROR_INVALID_VALUE; /* streams of cuStreamCreate only */
    item *it = calloc(1, sizeof *it);
    if (!it) return CUDA_ERROR_OUT_OF_MEMORY;
    memcpy(it->host, e->host, sizeof it->host);
    for (int i = 0; i < e->n; i++)
        if (e->nodes[i]->type != CU_GRAPH_NODE_TYPE_HOST) it->host[i].fn = NULL;
    it->n = e->n;
    pthread_mutex_lock(&s->mu);
    if (s->tail) s->tail->next = it;
    else s->head = it;
    s->tail = it;
    s->busy++;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return CUDA_SUCCESS;
}

FAKE CUresult cuStreamQuery(CUstream s)
{
    if (!s) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&s->mu);
    int busy = s->busy;
    pthread_mutex_unlock(&s->mu);
    return busy ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
}

FAKE CUresult cuStreamSynchronize(CUstream s)
{
    if (!s) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&s->mu);
    while (s->busy) pthread_cond_wait(&s->cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
    return CUDA_SUCCESS;
}

FAKE CUresult cuStreamDestroy_v2(CUstream s)
{
    if (!s) return CUDA_ERROR_INVALID_VALUE;
    (void)cuStreamSynchronize(s);
    pthread_mutex_lock(&s->mu);
    s->stop = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->thread, NULL);
    free(s);
    return CUDA_SUCCESS;
}
