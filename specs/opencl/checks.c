/* Guest-side checks of queued enqueues (spec: `async_check:`). A queued call
 * returns CL_SUCCESS before the server sees it, so an invalid one would
 * report its error at a later call. Each opencl_may_queue_* function below
 * says whether a call may be queued: only when it is sure the implementation
 * will accept it, from facts the guest caches once per object (a queue's
 * device and context, a device's work-group limits, a kernel's context,
 * work-group info and which of its arguments were set, a buffer's size and
 * where it lies in its root buffer). Anything else goes synchronously, so the
 * implementation's own error comes back from the enqueue that caused it, as
 * natively (the guest never makes up an error code).
 *
 * Facts are keyed by the handle's id. A release marks the object's facts
 * stale: the next use asks the server again (a live object answers, a
 * destroyed one does not and its call goes synchronously). Ids are never
 * reused within a session. Queries made here keep earlier queued calls'
 * errors for the application's next call (apigen_hold_deferred). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "opencl_wire.h"

#if defined(APIGEN_OPENCL_ICD)
#define APIGEN_HOBJ_FIRST opencl_icd_dispatch
#endif
#include "apigen_hobj.h"

enum { K_QUEUE, K_KERNEL, K_MEM, K_DEVICE };

typedef struct fact {
    struct fact *next;
    uint64_t id;
    int kind;
    bool known;  /* the server answered the queries below */
    bool stale;  /* released since: ask again */
    union {
        struct { cl_device_id dev; cl_context ctx; } q;
        struct {
            cl_context ctx;
            cl_uint nargs;
            cl_device_id dev;        /* the device of wg and reqd */
            size_t wg, reqd[3];
            bool dev_ok;
        } k;
        struct {
            cl_context ctx;
            size_t size, offset;
            uint64_t root;
            cl_mem_object_type type;
            size_t lim[3]; /* images: the extent of each origin/region coordinate */
            size_t elem;   /* images: bytes per pixel */
            cl_image_format fmt;
        } m;
        struct { cl_uint dims; size_t sizes[3], wg; cl_uint align; } d;
    } u;
    size_t nset;   /* kernels: arguments set (bitmap over set[]) */
    unsigned char *set;
} fact;

#define NBUCKETS 256
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static fact *buckets[NBUCKETS];

static fact **slot(uint64_t id, int kind)
{
    fact **pp = &buckets[(id * 0x9e3779b97f4a7c15ull >> 56) % NBUCKETS];
    while (*pp && ((*pp)->id != id || (*pp)->kind != kind))
        pp = &(*pp)->next;
    return pp;
}

/* The record of (id, kind), made if absent. Caller holds mu. */
static fact *get(uint64_t id, int kind)
{
    fact **pp = slot(id, kind);
    if (!*pp) {
        fact *f = calloc(1, sizeof *f);
        if (!f)
            return NULL;
        f->id = id;
        f->kind = kind;
        *pp = f;
    }
    return *pp;
}

/* Queries of this file: their errors are not the application's to see, and
 * they leave an earlier queued call's error for its next call. */
static void hold(bool on) { apigen_hold_deferred(on); }

/* ---- the facts, asked once ---------------------------------------------------- */

static bool device_facts(cl_device_id dev, fact *out)
{
    uint64_t id = APIGEN_H2ID(dev);
    pthread_mutex_lock(&mu);
    fact *f = get(id, K_DEVICE);
    bool ok = f && f->known;
    if (ok)
        *out = *f;
    pthread_mutex_unlock(&mu);
    if (ok || !f)
        return ok;
    fact n = {0};
    hold(true);
    ok = clGetDeviceInfo(dev, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, sizeof n.u.d.dims, &n.u.d.dims,
                         NULL) == CL_SUCCESS &&
         n.u.d.dims >= 1 &&
         clGetDeviceInfo(dev, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof n.u.d.wg, &n.u.d.wg, NULL) ==
             CL_SUCCESS &&
         clGetDeviceInfo(dev, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof n.u.d.align, &n.u.d.align,
                         NULL) == CL_SUCCESS;
    size_t sizes[64] = {0};
    if (ok && n.u.d.dims <= 64)
        ok = clGetDeviceInfo(dev, CL_DEVICE_MAX_WORK_ITEM_SIZES, n.u.d.dims * sizeof(size_t),
                             sizes, NULL) == CL_SUCCESS;
    hold(false);
    if (!ok)
        return false;
    for (int i = 0; i < 3; i++)
        n.u.d.sizes[i] = i < (int)n.u.d.dims ? sizes[i] : 1;
    pthread_mutex_lock(&mu);
    f = get(id, K_DEVICE);
    if (f) {
        f->u.d = n.u.d;
        f->known = true;
    }
    pthread_mutex_unlock(&mu);
    *out = n;
    out->known = true;
    return true;
}

static bool queue_facts(cl_command_queue q, fact *out)
{
    if (!q)
        return false;
    uint64_t id = APIGEN_H2ID(q);
    pthread_mutex_lock(&mu);
    fact *f = get(id, K_QUEUE);
    bool ok = f && f->known && !f->stale;
    if (ok)
        *out = *f;
    pthread_mutex_unlock(&mu);
    if (ok || !f)
        return ok;
    fact n = {0};
    hold(true);
    ok = clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof n.u.q.dev, &n.u.q.dev, NULL) ==
             CL_SUCCESS &&
         clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof n.u.q.ctx, &n.u.q.ctx, NULL) ==
             CL_SUCCESS;
    hold(false);
    pthread_mutex_lock(&mu);
    f = get(id, K_QUEUE);
    if (f) {
        f->known = ok;
        f->stale = false;
        if (ok)
            f->u.q = n.u.q;
    }
    pthread_mutex_unlock(&mu);
    *out = n;
    return ok;
}

/* A kernel's facts for dev (its arguments' bitmap stays the guest's own). */
static bool kernel_facts(cl_kernel k, cl_device_id dev, fact *out)
{
    if (!k)
        return false;
    uint64_t id = APIGEN_H2ID(k);
    pthread_mutex_lock(&mu);
    fact *f = get(id, K_KERNEL);
    bool ok = f && f->known && !f->stale && f->u.k.dev == dev && f->u.k.dev_ok;
    if (ok) {
        *out = *f;
        out->set = NULL;
    }
    pthread_mutex_unlock(&mu);
    if (ok || !f)
        return ok;
    fact n = {0};
    hold(true);
    ok = clGetKernelInfo(k, CL_KERNEL_CONTEXT, sizeof n.u.k.ctx, &n.u.k.ctx, NULL) ==
             CL_SUCCESS &&
         clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof n.u.k.nargs, &n.u.k.nargs, NULL) ==
             CL_SUCCESS;
    n.u.k.dev = dev;
    n.u.k.dev_ok = ok &&
                   clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof n.u.k.wg,
                                            &n.u.k.wg, NULL) == CL_SUCCESS &&
                   clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_COMPILE_WORK_GROUP_SIZE,
                                            sizeof n.u.k.reqd, n.u.k.reqd, NULL) == CL_SUCCESS;
    hold(false);
    pthread_mutex_lock(&mu);
    f = get(id, K_KERNEL);
    if (f) {
        f->known = ok;
        f->stale = false;
        if (ok)
            f->u.k = n.u.k;
        else { /* gone: so are its arguments */
            free(f->set);
            f->set = NULL;
            f->nset = 0;
        }
    }
    pthread_mutex_unlock(&mu);
    *out = n;
    return ok && n.u.k.dev_ok;
}

static bool mem_facts(cl_mem m, fact *out)
{
    if (!m)
        return false;
    uint64_t id = APIGEN_H2ID(m);
    pthread_mutex_lock(&mu);
    fact *f = get(id, K_MEM);
    bool ok = f && f->known && !f->stale;
    if (ok)
        *out = *f;
    pthread_mutex_unlock(&mu);
    if (ok || !f)
        return ok;
    fact n = {0};
    cl_mem parent = NULL;
    hold(true);
    ok = clGetMemObjectInfo(m, CL_MEM_TYPE, sizeof n.u.m.type, &n.u.m.type, NULL) == CL_SUCCESS &&
         clGetMemObjectInfo(m, CL_MEM_CONTEXT, sizeof n.u.m.ctx, &n.u.m.ctx, NULL) == CL_SUCCESS &&
         clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof n.u.m.size, &n.u.m.size, NULL) == CL_SUCCESS &&
         clGetMemObjectInfo(m, CL_MEM_OFFSET, sizeof n.u.m.offset, &n.u.m.offset, NULL) ==
             CL_SUCCESS &&
         clGetMemObjectInfo(m, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof parent, &parent, NULL) ==
             CL_SUCCESS;
    if (ok && n.u.m.type != CL_MEM_OBJECT_BUFFER && n.u.m.type != CL_MEM_OBJECT_PIPE) {
        size_t w = 0, h = 0, d = 0, a = 0;
        ok = clGetImageInfo((cl_mem)m, CL_IMAGE_WIDTH, sizeof w, &w, NULL) == CL_SUCCESS &&
             clGetImageInfo((cl_mem)m, CL_IMAGE_HEIGHT, sizeof h, &h, NULL) == CL_SUCCESS &&
             clGetImageInfo((cl_mem)m, CL_IMAGE_DEPTH, sizeof d, &d, NULL) == CL_SUCCESS &&
             clGetImageInfo((cl_mem)m, CL_IMAGE_ARRAY_SIZE, sizeof a, &a, NULL) == CL_SUCCESS &&
             clGetImageInfo((cl_mem)m, CL_IMAGE_ELEMENT_SIZE, sizeof n.u.m.elem, &n.u.m.elem,
                            NULL) == CL_SUCCESS &&
             clGetImageInfo((cl_mem)m, CL_IMAGE_FORMAT, sizeof n.u.m.fmt, &n.u.m.fmt, NULL) ==
                 CL_SUCCESS;
        cl_mem_object_type t = n.u.m.type;
        n.u.m.lim[0] = w;
        n.u.m.lim[1] = t == CL_MEM_OBJECT_IMAGE1D_ARRAY ? a : h ? h : 1;
        n.u.m.lim[2] = t == CL_MEM_OBJECT_IMAGE2D_ARRAY ? a : t == CL_MEM_OBJECT_IMAGE3D ? d : 1;
    }
    hold(false);
    /* a sub-buffer's parent is a buffer (never itself a sub-buffer): the root */
    n.u.m.root = parent ? APIGEN_H2ID(parent) : id;
    if (!parent)
        n.u.m.offset = 0;
    pthread_mutex_lock(&mu);
    f = get(id, K_MEM);
    if (f) {
        f->known = ok;
        f->stale = false;
        if (ok)
            f->u.m = n.u.m;
    }
    pthread_mutex_unlock(&mu);
    *out = n;
    return ok;
}

/* ---- what the wrappers tell this file ------------------------------------------ */

/* clRelease* of an object succeeded: its facts are asked again at its next use. */
void opencl_facts_released(uint64_t id)
{
    pthread_mutex_lock(&mu);
    for (int kind = K_QUEUE; kind <= K_MEM; kind++) {
        fact **pp = slot(id, kind);
        if (*pp)
            (*pp)->stale = true;
    }
    pthread_mutex_unlock(&mu);
}

/* clSetKernelArg / clSetKernelArgSVMPointer succeeded for argument index. */
void opencl_facts_arg_set(cl_kernel k, cl_uint index)
{
    pthread_mutex_lock(&mu);
    fact *f = k ? get(APIGEN_H2ID(k), K_KERNEL) : NULL;
    if (f && index / 8 >= f->nset) {
        size_t n = index / 8 + 1;
        unsigned char *s = realloc(f->set, n);
        if (s) {
            memset(s + f->nset, 0, n - f->nset);
            f->set = s;
            f->nset = n;
        }
    }
    if (f && index / 8 < f->nset)
        f->set[index / 8] |= (unsigned char)(1u << (index % 8));
    pthread_mutex_unlock(&mu);
}

/* clCloneKernel succeeded: the clone has the arguments its source had. */
void opencl_facts_cloned(cl_kernel from, cl_kernel to)
{
    pthread_mutex_lock(&mu);
    fact *s = from ? *slot(APIGEN_H2ID(from), K_KERNEL) : NULL;
    fact *d = to ? get(APIGEN_H2ID(to), K_KERNEL) : NULL;
    if (s && d && s->nset) {
        unsigned char *c = malloc(s->nset);
        if (c) {
            memcpy(c, s->set, s->nset);
            free(d->set);
            d->set = c;
            d->nset = s->nset;
        }
    }
    pthread_mutex_unlock(&mu);
}

static bool all_args_set(cl_kernel k, cl_uint nargs)
{
    bool ok = true;
    pthread_mutex_lock(&mu);
    fact *f = *slot(APIGEN_H2ID(k), K_KERNEL);
    for (cl_uint i = 0; ok && i < nargs; i++)
        ok = f && i / 8 < f->nset && (f->set[i / 8] >> (i % 8) & 1);
    pthread_mutex_unlock(&mu);
    return ok;
}

/* ---- the checks -------------------------------------------------------------------- */

/* A wait list of events that the queue's session handed out (an event of
 * another client or server is refused by the server: not vouched for). */
static bool wait_list_ok(cl_command_queue q, cl_uint n, const cl_event *list)
{
    if ((n == 0) != (list == NULL))
        return false;
    /* ids carry their session's salt in bits 32..62 (runtime: apigen_vouch_id) */
    uint64_t salt = APIGEN_H2ID(q) >> 32 & 0x7fffffffu;
    for (cl_uint i = 0; i < n; i++)
        if (!list[i] || (APIGEN_H2ID(list[i]) >> 32 & 0x7fffffffu) != salt)
            return false;
    return true;
}

/* The queue is live and the wait list well formed; *qf gets the queue's facts. */
static bool queue_ok(cl_command_queue q, cl_uint n, const cl_event *list, fact *qf)
{
    return queue_facts(q, qf) && wait_list_ok(q, n, list);
}

static bool ndrange_ok(cl_command_queue q, cl_kernel k, cl_uint dim, const size_t *offset,
                       const size_t *gws, const size_t *lws, cl_uint n, const cl_event *list)
{
    fact qf, kf, df;
    if (!queue_ok(q, n, list, &qf) || !kernel_facts(k, qf.u.q.dev, &kf) ||
        kf.u.k.ctx != qf.u.q.ctx || !device_facts(qf.u.q.dev, &df) ||
        !all_args_set(k, kf.u.k.nargs))
        return false;
    if (dim < 1 || dim > df.u.d.dims || dim > 3 || !gws)
        return false;
    bool reqd = kf.u.k.reqd[0] || kf.u.k.reqd[1] || kf.u.k.reqd[2];
    size_t items = 1, end;
    for (cl_uint i = 0; i < dim; i++) {
        if (!gws[i] || (offset && __builtin_add_overflow(offset[i], gws[i], &end)))
            return false;
        if (!lws)
            continue;
        /* a work-group that does not divide the range: only the implementation knows
         * whether it takes non-uniform work-groups for this program */
        if (!lws[i] || lws[i] > df.u.d.sizes[i] || gws[i] % lws[i] ||
            (reqd && lws[i] != kf.u.k.reqd[i]) || __builtin_mul_overflow(items, lws[i], &items))
            return false;
    }
    for (cl_uint i = dim; reqd && lws && i < 3; i++)
        if (kf.u.k.reqd[i] != 1)
            return false;
    if (!lws && reqd)
        return false;
    return !lws || (items <= df.u.d.wg && items <= kf.u.k.wg);
}

bool opencl_may_queue_ndrange(cl_command_queue q, cl_kernel k, cl_uint dim, const size_t *offset,
                              const size_t *gws, const size_t *lws, cl_uint n,
                              const cl_event *list, cl_event *event)
{
    (void)event;
    return ndrange_ok(q, k, dim, offset, gws, lws, n, list);
}

bool opencl_may_queue_task(cl_command_queue q, cl_kernel k, cl_uint n, const cl_event *list,
                           cl_event *event)
{
    (void)event;
    static const size_t one = 1;
    return ndrange_ok(q, k, 1, NULL, &one, &one, n, list);
}

bool opencl_may_queue_waitlist(cl_command_queue q, cl_uint n, const cl_event *list,
                               cl_event *event)
{
    (void)event;
    fact qf;
    return queue_ok(q, n, list, &qf);
}

bool opencl_may_queue_plain(cl_command_queue q)
{
    fact qf;
    return queue_facts(q, &qf);
}

bool opencl_may_queue_marker(cl_command_queue q, cl_event *event)
{
    return event && opencl_may_queue_plain(q);
}

bool opencl_may_queue_wait(cl_command_queue q, cl_uint n, const cl_event *list)
{
    fact qf;
    return n && list && queue_ok(q, n, list, &qf);
}

/* A buffer of the queue's context, and where [off, off + size) lies in its
 * root buffer: *lo. A sub-buffer at an offset the device does not align
 * fails at the enqueue (CL_MISALIGNED_SUB_BUFFER_OFFSET): not vouched for. */
static bool buffer_ok(cl_mem m, const fact *qf, size_t off, size_t size, uint64_t *root,
                      size_t *lo)
{
    fact mf, df;
    size_t end;
    if (!mem_facts(m, &mf) || mf.u.m.type != CL_MEM_OBJECT_BUFFER || mf.u.m.ctx != qf->u.q.ctx ||
        __builtin_add_overflow(off, size, &end) || end > mf.u.m.size)
        return false;
    if (mf.u.m.root != APIGEN_H2ID(m) &&
        (!device_facts(qf->u.q.dev, &df) || !df.u.d.align ||
         mf.u.m.offset % (df.u.d.align / 8 ? df.u.d.align / 8 : 1)))
        return false;
    *root = mf.u.m.root;
    *lo = mf.u.m.offset + off;
    return true;
}

static bool disjoint(uint64_t ra, size_t a, size_t na, uint64_t rb, size_t b, size_t nb)
{
    return ra != rb || a + na <= b || b + nb <= a;
}

bool opencl_may_queue_copy(cl_command_queue q, cl_mem src, cl_mem dst, size_t so, size_t dof,
                           size_t size, cl_uint n, const cl_event *list, cl_event *event)
{
    (void)event;
    fact qf;
    uint64_t rs, rd;
    size_t ls, ld;
    return size && queue_ok(q, n, list, &qf) && buffer_ok(src, &qf, so, size, &rs, &ls) &&
           buffer_ok(dst, &qf, dof, size, &rd, &ld) && disjoint(rs, ls, size, rd, ld, size);
}

bool opencl_may_queue_fill(cl_command_queue q, cl_mem m, const void *pattern, size_t psize,
                           size_t off, size_t size, cl_uint n, const cl_event *list,
                           cl_event *event)
{
    (void)event;
    fact qf;
    uint64_t r;
    size_t l;
    bool pow2 = psize && !(psize & (psize - 1)) && psize <= 128;
    return pattern && pow2 && size && !(off % psize) && !(size % psize) &&
           queue_ok(q, n, list, &qf) && buffer_ok(m, &qf, off, size, &r, &l);
}

bool opencl_may_queue_write(cl_command_queue q, cl_mem m, cl_bool blocking, size_t off,
                            size_t size, const void *ptr, cl_uint n, const cl_event *list,
                            cl_event *event)
{
    (void)blocking;
    (void)event;
    fact qf;
    uint64_t r;
    size_t l;
    return ptr && size && queue_ok(q, n, list, &qf) && buffer_ok(m, &qf, off, size, &r, &l);
}

/* A rectangle's pitches as OpenCL defaults them, checked; *first / *extent:
 * the bytes it touches from its origin, as an interval of the buffer. */
static bool rect_span(const size_t *origin, const size_t *region, size_t *row, size_t *slice,
                      size_t *first, size_t *extent)
{
    if (!origin || !region || !region[0] || !region[1] || !region[2])
        return false;
    if (!*row)
        *row = region[0];
    size_t least;
    if (*row < region[0] || __builtin_mul_overflow(region[1], *row, &least))
        return false;
    if (!*slice)
        *slice = least;
    if (*slice < least || *slice % *row)
        return false;
    size_t a, b, c;
    if (__builtin_mul_overflow(origin[2], *slice, &a) || __builtin_mul_overflow(origin[1], *row, &b) ||
        __builtin_add_overflow(a, b, &c) || __builtin_add_overflow(c, origin[0], first))
        return false;
    if (__builtin_mul_overflow(region[2] - 1, *slice, &a) ||
        __builtin_mul_overflow(region[1] - 1, *row, &b) || __builtin_add_overflow(a, b, &c) ||
        __builtin_add_overflow(c, region[0], extent))
        return false;
    return true;
}

bool opencl_may_queue_copy_rect(cl_command_queue q, cl_mem src, cl_mem dst,
                                const size_t *so, const size_t *dor, const size_t *region,
                                size_t srow, size_t sslice, size_t drow, size_t dslice,
                                cl_uint n, const cl_event *list, cl_event *event)
{
    (void)event;
    fact qf;
    uint64_t rs, rd;
    size_t fs, es, fd, ed, ls, ld;
    if (!rect_span(so, region, &srow, &sslice, &fs, &es) ||
        !rect_span(dor, region, &drow, &dslice, &fd, &ed) || !queue_ok(q, n, list, &qf) ||
        !buffer_ok(src, &qf, fs, es, &rs, &ls) || !buffer_ok(dst, &qf, fd, ed, &rd, &ld))
        return false;
    /* within one buffer: same pitches, and (conservatively) byte ranges apart */
    if (src == dst && (srow != drow || sslice != dslice))
        return false;
    return disjoint(rs, ls, es, rd, ld, ed);
}

/* Staged reads (staged.c): queued when the buffer side is sure to be taken;
 * else synchronous, and a read the implementation refuses returns its error. */
bool opencl_may_queue_read(cl_command_queue q, cl_mem m, cl_bool blocking, size_t off,
                           size_t size, void *ptr, cl_uint n, const cl_event *list,
                           cl_event *event)
{
    (void)blocking;
    (void)ptr;
    fact qf;
    uint64_t r;
    size_t l;
    return event && size && queue_ok(q, n, list, &qf) && buffer_ok(m, &qf, off, size, &r, &l);
}

bool opencl_may_queue_read_rect(cl_command_queue q, cl_mem m, cl_bool blocking,
                                const size_t *bo, const size_t *ho, const size_t *region,
                                size_t brow, size_t bslice, size_t hrow, size_t hslice, void *ptr,
                                cl_uint n, const cl_event *list, cl_event *event)
{
    (void)blocking;
    (void)ptr;
    fact qf;
    uint64_t r;
    size_t f, e, l, hf, he;
    return event && rect_span(bo, region, &brow, &bslice, &f, &e) &&
           rect_span(ho, region, &hrow, &hslice, &hf, &he) && queue_ok(q, n, list, &qf) &&
           buffer_ok(m, &qf, f, e, &r, &l);
}

/* An image of the queue's context with origin + region inside it (the
 * format and access checks stay the implementation's: such an error is the
 * thread's next call's). */
static bool image_box_ok_f(cl_command_queue q, cl_mem image, const size_t *origin,
                           const size_t *region, cl_uint n, const cl_event *list, fact *qf_out,
                           fact *mf_out)
{
    fact qf, mf;
    size_t end;
    if (!image || !origin || !region || !queue_ok(q, n, list, &qf) || !mem_facts(image, &mf) ||
        mf.u.m.type == CL_MEM_OBJECT_BUFFER || mf.u.m.type == CL_MEM_OBJECT_PIPE ||
        mf.u.m.ctx != qf.u.q.ctx)
        return false;
    for (int i = 0; i < 3; i++)
        if (!region[i] || __builtin_add_overflow(origin[i], region[i], &end) ||
            end > mf.u.m.lim[i])
            return false;
    if (qf_out)
        *qf_out = qf;
    if (mf_out)
        *mf_out = mf;
    return true;
}

static bool image_box_ok(cl_command_queue q, cl_mem image, const size_t *origin,
                         const size_t *region, cl_uint n, const cl_event *list)
{
    return image_box_ok_f(q, image, origin, region, n, list, NULL, NULL);
}

/* The bytes a region of an image holds, packed. */
static bool region_bytes(const fact *mf, const size_t *region, size_t *bytes)
{
    return !__builtin_mul_overflow(mf->u.m.elem, region[0], bytes) &&
           !__builtin_mul_overflow(*bytes, region[1], bytes) &&
           !__builtin_mul_overflow(*bytes, region[2], bytes);
}

bool opencl_may_queue_copy_image(cl_command_queue q, cl_mem src, cl_mem dst, const size_t *so,
                                 const size_t *dor, const size_t *region, cl_uint n,
                                 const cl_event *list, cl_event *event)
{
    (void)event;
    fact sf, df;
    /* one image: overlap is the implementation's to judge */
    return src != dst && image_box_ok_f(q, src, so, region, n, list, NULL, &sf) &&
           image_box_ok_f(q, dst, dor, region, n, list, NULL, &df) &&
           sf.u.m.type == df.u.m.type &&
           sf.u.m.fmt.image_channel_order == df.u.m.fmt.image_channel_order &&
           sf.u.m.fmt.image_channel_data_type == df.u.m.fmt.image_channel_data_type;
}

bool opencl_may_queue_image_to_buffer(cl_command_queue q, cl_mem src, cl_mem dst,
                                      const size_t *so, const size_t *region, size_t doff,
                                      cl_uint n, const cl_event *list, cl_event *event)
{
    (void)event;
    fact qf, mf;
    uint64_t r;
    size_t bytes, l;
    return image_box_ok_f(q, src, so, region, n, list, &qf, &mf) &&
           region_bytes(&mf, region, &bytes) && buffer_ok(dst, &qf, doff, bytes, &r, &l);
}

bool opencl_may_queue_buffer_to_image(cl_command_queue q, cl_mem src, cl_mem dst, size_t soff,
                                      const size_t *dor, const size_t *region, cl_uint n,
                                      const cl_event *list, cl_event *event)
{
    (void)event;
    fact qf, mf;
    uint64_t r;
    size_t bytes, l;
    return image_box_ok_f(q, dst, dor, region, n, list, &qf, &mf) &&
           region_bytes(&mf, region, &bytes) && buffer_ok(src, &qf, soff, bytes, &r, &l);
}

bool opencl_may_queue_write_rect(cl_command_queue q, cl_mem m, cl_bool blocking,
                                 const size_t *bo, const size_t *ho, const size_t *region,
                                 size_t brow, size_t bslice, size_t hrow, size_t hslice,
                                 const void *ptr, cl_uint n, const cl_event *list,
                                 cl_event *event)
{
    (void)blocking;
    (void)event;
    fact qf;
    uint64_t r;
    size_t f, e, l, hf, he;
    return ptr && rect_span(bo, region, &brow, &bslice, &f, &e) &&
           rect_span(ho, region, &hrow, &hslice, &hf, &he) && queue_ok(q, n, list, &qf) &&
           buffer_ok(m, &qf, f, e, &r, &l);
}

bool opencl_may_queue_migrate(cl_command_queue q, cl_uint nmem, const cl_mem *mems,
                              cl_mem_migration_flags flags, cl_uint n, const cl_event *list,
                              cl_event *event)
{
    (void)event;
    fact qf, mf;
    if (!nmem || !mems ||
        (flags & ~(cl_mem_migration_flags)(CL_MIGRATE_MEM_OBJECT_HOST |
                                           CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED)) ||
        !queue_ok(q, n, list, &qf))
        return false;
    for (cl_uint i = 0; i < nmem; i++)
        if (!mem_facts(mems[i], &mf) || mf.u.m.ctx != qf.u.q.ctx)
            return false;
    return true;
}

bool opencl_may_queue_read_image(cl_command_queue q, cl_mem image, cl_bool blocking,
                                 const size_t *origin, const size_t *region, size_t row,
                                 size_t slice, void *ptr, cl_uint n, const cl_event *list,
                                 cl_event *event)
{
    (void)blocking;
    (void)row;
    (void)slice;
    (void)ptr;
    return event && image_box_ok(q, image, origin, region, n, list);
}

bool opencl_may_queue_write_image(cl_command_queue q, cl_mem image, cl_bool blocking,
                                  const size_t *origin, const size_t *region, size_t row,
                                  size_t slice, const void *ptr, cl_uint n, const cl_event *list,
                                  cl_event *event)
{
    (void)blocking;
    (void)row;
    (void)slice;
    (void)event;
    return ptr && image_box_ok(q, image, origin, region, n, list);
}

bool opencl_may_queue_fill_image(cl_command_queue q, cl_mem image, const void *color,
                                 const size_t *origin, const size_t *region, cl_uint n,
                                 const cl_event *list, cl_event *event)
{
    (void)event;
    return color && image_box_ok(q, image, origin, region, n, list);
}
