/* Memory objects created with host memory (CL_MEM_USE_HOST_PTR,
 * CL_MEM_COPY_HOST_PTR), the guest's side. The server cannot use the
 * application's memory as a buffer's store (another process): it gets a
 * copy (host.c turns USE_HOST_PTR into COPY_HOST_PTR; guest.c fills images
 * itself). So that the application still sees what it set, this file keeps,
 * per such object, the flags and host_ptr it was created with:
 *  - clGetMemObjectInfo answers CL_MEM_FLAGS and CL_MEM_HOST_PTR from them
 *    (sub-buffers: their parent's host_ptr + origin), as natively;
 *  - USE_HOST_PTR's synchronization points: a map of such a buffer returns
 *    host_ptr + offset holding the bytes, a blocking read leaves the bytes
 *    it read in host_ptr too, and clFinish brings every such buffer of the
 *    queue's context into its host_ptr (one read each).
 * Records go when the object is gone (checked after a release). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "opencl_wire.h"

#if defined(APIGEN_OPENCL_ICD)
#define APIGEN_HOBJ_FIRST opencl_icd_dispatch
#endif
#include "apigen_hobj.h"

#define HOST_BITS (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR)

typedef struct rec {
    struct rec *next;
    uint64_t id, parent;   /* parent: a sub-buffer's (0: a root) */
    cl_mem mem;
    cl_context ctx;
    cl_mem_flags bits;     /* the host bits the application gave (roots) */
    char *host_ptr;        /* USE_HOST_PTR's */
    size_t size, origin;   /* a buffer's size; a sub-buffer's origin */
    bool buffer;
} rec;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static rec *recs;

static rec *find(uint64_t id)
{
    rec *r = recs;
    while (r && r->id != id)
        r = r->next;
    return r;
}

static void add(rec *n)
{
    rec *r = malloc(sizeof *r);
    if (!r)
        return; /* no memory: the server's answers stand */
    *r = *n;
    pthread_mutex_lock(&mu);
    r->next = recs;
    recs = r;
    pthread_mutex_unlock(&mu);
}

/* A root object created with host memory. */
void opencl_hostptr_created(cl_mem m, cl_context ctx, cl_mem_flags flags, void *host_ptr,
                            size_t size, bool buffer)
{
    if (!m || !(flags & HOST_BITS) || !host_ptr)
        return;
    rec n = {NULL, APIGEN_H2ID(m), 0, m, ctx, flags & HOST_BITS,
             (flags & CL_MEM_USE_HOST_PTR) ? host_ptr : NULL, size, 0, buffer};
    add(&n);
}

/* A sub-buffer of a recorded buffer. */
void opencl_hostptr_sub(cl_mem sub, cl_mem parent, size_t origin, size_t size)
{
    pthread_mutex_lock(&mu);
    rec *p = sub && parent ? find(APIGEN_H2ID(parent)) : NULL;
    rec n = {0};
    if (p)
        n = (rec){NULL, APIGEN_H2ID(sub), p->id, sub, p->ctx, 0, NULL, size, origin, true};
    pthread_mutex_unlock(&mu);
    if (p)
        add(&n);
}

/* After a release: the record goes with the object. */
void opencl_hostptr_released(uint64_t id, cl_mem m)
{
    pthread_mutex_lock(&mu);
    bool known = find(id) != NULL;
    pthread_mutex_unlock(&mu);
    if (!known)
        return;
    cl_uint refs = 0;
    apigen_hold_deferred(true);
    bool alive = clGetMemObjectInfo(m, CL_MEM_REFERENCE_COUNT, sizeof refs, &refs, NULL) ==
                 CL_SUCCESS;
    apigen_hold_deferred(false);
    if (alive)
        return;
    pthread_mutex_lock(&mu);
    for (rec **pp = &recs; *pp; pp = &(*pp)->next)
        if ((*pp)->id == id) {
            rec *r = *pp;
            *pp = r->next;
            free(r);
            break;
        }
    pthread_mutex_unlock(&mu);
}

/* Where a buffer's byte `offset` lies in its USE_HOST_PTR memory, or NULL. */
void *opencl_hostptr_at(cl_mem m, size_t offset)
{
    char *p = NULL;
    pthread_mutex_lock(&mu);
    rec *r = m ? find(APIGEN_H2ID(m)) : NULL;
    size_t origin = 0;
    if (r && r->parent) {
        origin = r->origin;
        r = find(r->parent);
    }
    if (r && r->buffer && r->host_ptr)
        p = r->host_ptr + origin + offset;
    pthread_mutex_unlock(&mu);
    return p;
}

/* CL_MEM_FLAGS and CL_MEM_HOST_PTR as created; other names untouched. */
void opencl_hostptr_info(cl_mem m, cl_mem_info name, size_t size, void *value)
{
    if (!value || (name != CL_MEM_FLAGS && name != CL_MEM_HOST_PTR))
        return;
    pthread_mutex_lock(&mu);
    rec *r = find(APIGEN_H2ID(m)), *root = r && r->parent ? find(r->parent) : r;
    if (name == CL_MEM_FLAGS && size >= sizeof(cl_mem_flags) && root) {
        cl_mem_flags f;
        memcpy(&f, value, sizeof f);
        f = (f & ~(cl_mem_flags)HOST_BITS) | root->bits; /* a sub-buffer inherits them */
        memcpy(value, &f, sizeof f);
    } else if (name == CL_MEM_HOST_PTR && size >= sizeof(void *)) {
        /* the server's own pointer means nothing here: NULL unless USE_HOST_PTR */
        char *p = root && root->host_ptr ? root->host_ptr + (r != root ? r->origin : 0) : NULL;
        memcpy(value, &p, sizeof p);
    }
    pthread_mutex_unlock(&mu);
}

/* clFinish(q) returned: every USE_HOST_PTR buffer of q's context is read
 * into its host_ptr (the reads' own errors are not clFinish's). */
void opencl_hostptr_finish(cl_command_queue q)
{
    cl_context ctx = NULL;
    pthread_mutex_lock(&mu);
    bool any = false;
    for (rec *r = recs; r && !any; r = r->next)
        any = r->host_ptr && r->buffer;
    pthread_mutex_unlock(&mu);
    if (!any)
        return;
    apigen_hold_deferred(true);
    if (clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof ctx, &ctx, NULL) == CL_SUCCESS) {
        enum { MAXN = 64 };
        for (size_t skip = 0;;) { /* a snapshot at a time: the reads run unlocked */
            cl_mem mems[MAXN];
            char *ptrs[MAXN];
            size_t sizes[MAXN], n = 0, seen = 0;
            pthread_mutex_lock(&mu);
            for (rec *r = recs; r && n < MAXN; r = r->next)
                if (r->host_ptr && r->buffer && !r->parent && r->ctx == ctx && seen++ >= skip) {
                    mems[n] = r->mem;
                    ptrs[n] = r->host_ptr;
                    sizes[n++] = r->size;
                }
            pthread_mutex_unlock(&mu);
            for (size_t i = 0; i < n; i++)
                clEnqueueReadBuffer(q, mems[i], CL_TRUE, 0, sizes[i], ptrs[i], 0, NULL, NULL);
            if (n < MAXN)
                break;
            skip += n;
        }
    }
    apigen_hold_deferred(false);
}
