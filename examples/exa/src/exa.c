/* libexa.so.1: the exa API implemented on the CPU.
 *
 * Contexts and buffers are heap objects validated through registries, so a
 * stale or foreign handle is EXA_ERROR_INVALID_HANDLE rather than a crash.
 * Device memory is heap memory whose ranges are kept in a table; device
 * addresses may point inside an allocation (address arithmetic), and every
 * access is checked against the allocation that contains its start.
 * Kernels and non-blocking writes go on a per-context queue that runs at
 * exaFinish / exaReduceSum (and before any synchronous access to a buffer
 * of that context); the first error of queued work is kept and returned by
 * the next exaFinish, and each failure is also reported to the context's
 * notify callback as EXA_EVENT_ERROR.
 *
 * Locking: a context's `lock` guards its queue, name, callback and pending
 * error; `g_lock` guards the registries, the device-memory table and the
 * contents of all buffers and device memory. Order: ctx->lock, then g_lock.
 * Callbacks are called with no lock held. */
#define _POSIX_C_SOURCE 200809L

#include "exa.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXA_API __attribute__((visibility("default")))

enum { CTX_MAGIC = 0x43545821u, BUF_MAGIC = 0x42554621u };

typedef enum work_kind { WK_SAXPY, WK_FILL, WK_WRITE } work_kind;

typedef struct work {
    struct work *next;
    work_kind kind;
    float a;            /* saxpy */
    float value;        /* fill */
    const void *x;      /* saxpy source */
    void *dst;          /* saxpy y / fill destination */
    size_t n;           /* floats */
    exaBuffer buffer;   /* write: target (validated when it runs) */
    size_t offset;      /* write */
    size_t bytes;       /* write */
    unsigned char *data;/* write: copy of the source taken at enqueue time */
} work;

struct exaContext_st {
    uint32_t magic;
    unsigned refs;              /* g_lock */
    bool live;                  /* g_lock: in the registry */
    pthread_mutex_t lock;
    char *name;
    int device;
    int64_t priority;
    uint64_t memory_limit;      /* 0 = none */
    uint64_t memory_used;       /* g_lock */
    unsigned nbuffers;          /* g_lock */
    exaNotifyFn notify;
    void *notify_user;
    work *head, *tail;
    exaStatus pending;          /* first error of queued work since the last exaFinish */
    struct exaContext_st *reg_next;
};

struct exaBuffer_st {
    uint32_t magic;
    unsigned refs;              /* g_lock */
    bool live;
    struct exaContext_st *ctx;  /* holds a reference */
    size_t size;
    unsigned char *data;        /* g_lock */
    struct exaBuffer_st *reg_next;
};

typedef struct dev_alloc {
    uintptr_t base;
    size_t size;
} dev_alloc;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

/* The calling thread's last error: every failing call sets it (as CUDA's
 * runtime does); exaGetLastError returns and clears it, exaPeekAtLastError
 * returns it. */
static _Thread_local exaStatus tl_last;

static exaStatus last_(exaStatus st)
{
    if (st != EXA_SUCCESS)
        tl_last = st;
    return st;
}
static struct exaContext_st *g_contexts;
static struct exaBuffer_st *g_buffers;
static dev_alloc *g_dev;
static size_t g_ndev, g_capdev;

static const exaDeviceInfo g_devices[2] = {
    {"exa-cpu0", 4, 1024, 1ull << 30, 1.5, 0},
    {"exa-cpu1", 8, 2048, 2ull << 30, 2.25, 1},
};
#define NDEVICES ((int)(sizeof g_devices / sizeof g_devices[0]))

/* ---- registries ------------------------------------------------------------ */

/* Takes a reference to a live context, or returns NULL. */
static struct exaContext_st *ctx_acquire(exaContext c)
{
    struct exaContext_st *r = NULL;
    pthread_mutex_lock(&g_lock);
    for (struct exaContext_st *p = g_contexts; p; p = p->reg_next)
        if (p == c && p->live && p->magic == CTX_MAGIC) {
            p->refs++;
            r = p;
            break;
        }
    pthread_mutex_unlock(&g_lock);
    return r;
}

static void ctx_free(struct exaContext_st *c)
{
    work *w = c->head;
    while (w) {
        work *n = w->next;
        free(w->data);
        free(w);
        w = n;
    }
    pthread_mutex_destroy(&c->lock);
    free(c->name);
    c->magic = 0;
    free(c);
}

static void ctx_unref_locked(struct exaContext_st *c)
{
    if (--c->refs == 0)
        ctx_free(c);
}

static void ctx_unref(struct exaContext_st *c)
{
    pthread_mutex_lock(&g_lock);
    ctx_unref_locked(c);
    pthread_mutex_unlock(&g_lock);
}

static struct exaBuffer_st *buf_acquire(exaBuffer b)
{
    struct exaBuffer_st *r = NULL;
    pthread_mutex_lock(&g_lock);
    for (struct exaBuffer_st *p = g_buffers; p; p = p->reg_next)
        if (p == b && p->live && p->magic == BUF_MAGIC) {
            p->refs++;
            r = p;
            break;
        }
    pthread_mutex_unlock(&g_lock);
    return r;
}

static void buf_unref_locked(struct exaBuffer_st *b)
{
    if (--b->refs == 0) {
        b->ctx->memory_used -= b->size;
        b->ctx->nbuffers--;
        ctx_unref_locked(b->ctx);
        free(b->data);
        b->magic = 0;
        free(b);
    }
}

static void buf_unref(struct exaBuffer_st *b)
{
    pthread_mutex_lock(&g_lock);
    buf_unref_locked(b);
    pthread_mutex_unlock(&g_lock);
}

/* Device memory: the allocation containing p (g_lock held). Checks that
 * [p, p + bytes) lies inside it. */
static exaStatus dev_check_locked(const void *p, size_t bytes)
{
    uintptr_t a = (uintptr_t)p;
    for (size_t i = 0; i < g_ndev; i++) {
        if (a >= g_dev[i].base && a < g_dev[i].base + g_dev[i].size) {
            size_t room = g_dev[i].base + g_dev[i].size - a;
            return bytes <= room ? EXA_SUCCESS : EXA_ERROR_OUT_OF_RANGE;
        }
    }
    return EXA_ERROR_INVALID_VALUE;
}

static bool mul_ok(size_t a, size_t b, size_t *out)
{
    if (b && a > SIZE_MAX / b)
        return false;
    *out = a * b;
    return true;
}

static bool range_ok(size_t offset, size_t bytes, size_t size)
{
    return offset <= size && bytes <= size - offset;
}

/* ---- queued work ----------------------------------------------------------- */

typedef struct event_list {
    exaEvent ev[64];
    int32_t val[64];
    unsigned n;
    unsigned dropped;
} event_list;

static void events_add(event_list *e, exaEvent ev, int32_t v)
{
    if (e->n < 64) {
        e->ev[e->n] = ev;
        e->val[e->n] = v;
        e->n++;
    } else {
        e->dropped++;
    }
}

static exaStatus work_run(const work *w)
{
    exaStatus st = EXA_SUCCESS;
    size_t bytes;
    pthread_mutex_lock(&g_lock);
    switch (w->kind) {
    case WK_SAXPY:
        if (!mul_ok(w->n, sizeof(float), &bytes)) {
            st = EXA_ERROR_OUT_OF_RANGE;
            break;
        }
        st = dev_check_locked(w->x, bytes);
        if (st == EXA_SUCCESS)
            st = dev_check_locked(w->dst, bytes);
        if (st == EXA_SUCCESS) {
            const float *x = w->x;
            float *y = w->dst;
            for (size_t i = 0; i < w->n; i++)
                y[i] = w->a * x[i] + y[i];
        }
        break;
    case WK_FILL:
        if (!mul_ok(w->n, sizeof(float), &bytes)) {
            st = EXA_ERROR_OUT_OF_RANGE;
            break;
        }
        st = dev_check_locked(w->dst, bytes);
        if (st == EXA_SUCCESS) {
            float *d = w->dst;
            for (size_t i = 0; i < w->n; i++)
                d[i] = w->value;
        }
        break;
    case WK_WRITE: {
        struct exaBuffer_st *b = NULL;
        for (struct exaBuffer_st *p = g_buffers; p; p = p->reg_next)
            if (p == w->buffer && p->live)
                b = p;
        if (!b)
            st = EXA_ERROR_INVALID_HANDLE;
        else if (!range_ok(w->offset, w->bytes, b->size))
            st = EXA_ERROR_OUT_OF_RANGE;
        else if (w->bytes)
            memcpy(b->data + w->offset, w->data, w->bytes);
        break;
    }
    }
    pthread_mutex_unlock(&g_lock);
    return st;
}

/* Runs everything queued on c (c->lock held). Failures are kept in
 * c->pending and listed in ev for the callback. Returns how many items ran. */
static unsigned queue_run_locked(struct exaContext_st *c, event_list *ev)
{
    unsigned ran = 0;
    while (c->head) {
        work *w = c->head;
        c->head = w->next;
        if (!c->head)
            c->tail = NULL;
        exaStatus st = work_run(w);
        if (st != EXA_SUCCESS) {
            if (c->pending == EXA_SUCCESS)
                c->pending = st;
            events_add(ev, EXA_EVENT_ERROR, (int32_t)st);
        }
        ran++;
        free(w->data);
        free(w);
    }
    return ran;
}

static void deliver(struct exaContext_st *c, exaNotifyFn fn, void *user, const event_list *ev)
{
    if (!fn)
        return;
    for (unsigned i = 0; i < ev->n; i++)
        fn(c, ev->ev[i], ev->val[i], user);
}

/* Runs the queue of c and delivers error events (no lock held on entry). */
static void queue_drain(struct exaContext_st *c)
{
    event_list ev = {0};
    pthread_mutex_lock(&c->lock);
    queue_run_locked(c, &ev);
    exaNotifyFn fn = c->notify;
    void *user = c->notify_user;
    pthread_mutex_unlock(&c->lock);
    deliver(c, fn, user, &ev);
}

static exaStatus enqueue(struct exaContext_st *c, work *w)
{
    pthread_mutex_lock(&c->lock);
    w->next = NULL;
    if (c->tail)
        c->tail->next = w;
    else
        c->head = w;
    c->tail = w;
    pthread_mutex_unlock(&c->lock);
    return EXA_SUCCESS;
}

/* ---- library and devices --------------------------------------------------- */

EXA_API exaStatus exaGetVersion(int *major, int *minor)
{
    if (!major || !minor)
        return last_(EXA_ERROR_INVALID_VALUE);
    *major = EXA_VERSION_MAJOR;
    *minor = EXA_VERSION_MINOR;
    return EXA_SUCCESS;
}

EXA_API exaStatus exaGetDeviceCount(int *count)
{
    if (!count)
        return last_(EXA_ERROR_INVALID_VALUE);
    *count = NDEVICES;
    return EXA_SUCCESS;
}

EXA_API exaStatus exaGetDeviceInfo(int device, exaDeviceInfo *info)
{
    if (!info || device < 0 || device >= NDEVICES)
        return last_(EXA_ERROR_INVALID_VALUE);
    *info = g_devices[device];
    return EXA_SUCCESS;
}

static _Thread_local int tl_current = -1;

EXA_API exaStatus exaSetCurrentDevice(int device)
{
    if (device < -1 || device >= NDEVICES)
        return last_(EXA_ERROR_INVALID_VALUE);
    tl_current = device;
    return EXA_SUCCESS;
}

EXA_API exaStatus exaGetCurrentDevice(int *device)
{
    if (!device)
        return last_(EXA_ERROR_INVALID_VALUE);
    *device = tl_current;
    return EXA_SUCCESS;
}

EXA_API exaStatus exaGetLastError(void)
{
    exaStatus st = tl_last;
    tl_last = EXA_SUCCESS;
    return st;
}

EXA_API exaStatus exaPeekAtLastError(void)
{
    return tl_last;
}

EXA_API const char *exaStatusString(exaStatus status)
{
    switch (status) {
    case EXA_SUCCESS: return "EXA_SUCCESS";
    case EXA_ERROR_INVALID_VALUE: return "EXA_ERROR_INVALID_VALUE";
    case EXA_ERROR_INVALID_HANDLE: return "EXA_ERROR_INVALID_HANDLE";
    case EXA_ERROR_OUT_OF_MEMORY: return "EXA_ERROR_OUT_OF_MEMORY";
    case EXA_ERROR_OUT_OF_RANGE: return "EXA_ERROR_OUT_OF_RANGE";
    case EXA_ERROR_NOT_SUPPORTED: return "EXA_ERROR_NOT_SUPPORTED";
    case EXA_ERROR_CONNECTION_LOST: return "EXA_ERROR_CONNECTION_LOST";
    case EXA_ERROR_BUSY: return "EXA_ERROR_BUSY";
    }
    return "EXA_ERROR_UNKNOWN";
}

/* ---- contexts -------------------------------------------------------------- */

static exaStatus ctx_create(int device, int64_t priority, uint64_t limit, const char *name,
                            exaContext *out)
{
    struct exaContext_st *c = calloc(1, sizeof *c);
    if (!c)
        return EXA_ERROR_OUT_OF_MEMORY;
    c->name = strdup(name);
    if (!c->name) {
        free(c);
        return EXA_ERROR_OUT_OF_MEMORY;
    }
    c->magic = CTX_MAGIC;
    c->refs = 1;
    c->live = true;
    c->device = device;
    c->priority = priority;
    c->memory_limit = limit;
    pthread_mutex_init(&c->lock, NULL);
    pthread_mutex_lock(&g_lock);
    c->reg_next = g_contexts;
    g_contexts = c;
    pthread_mutex_unlock(&g_lock);
    *out = c;
    return EXA_SUCCESS;
}

EXA_API exaStatus exaCreateContext(int device, const char *name, exaContext *ctx)
{
    if (!ctx || device < 0 || device >= NDEVICES)
        return last_(EXA_ERROR_INVALID_VALUE);
    return ctx_create(device, 0, 0, name ? name : "exa-context", ctx);
}

EXA_API exaStatus exaCreateContextWithProperties(const int64_t *properties, exaContext *ctx)
{
    int64_t device = 0, priority = 0, limit = 0;
    if (!ctx)
        return last_(EXA_ERROR_INVALID_VALUE);
    for (const int64_t *p = properties; p && p[0] != EXA_PROP_END; p += 2) {
        switch (p[0]) {
        case EXA_PROP_DEVICE:
            if (p[1] < 0 || p[1] >= NDEVICES)
                return last_(EXA_ERROR_INVALID_VALUE);
            device = p[1];
            break;
        case EXA_PROP_PRIORITY:
            if (p[1] < 0 || p[1] > 7)
                return last_(EXA_ERROR_INVALID_VALUE);
            priority = p[1];
            break;
        case EXA_PROP_MEMORY_LIMIT:
            if (p[1] < 0)
                return last_(EXA_ERROR_INVALID_VALUE);
            limit = p[1];
            break;
        default:
            return last_(EXA_ERROR_INVALID_VALUE);
        }
    }
    char name[64];
    snprintf(name, sizeof name, "device%d-priority%d", (int)device, (int)priority);
    return ctx_create((int)device, priority, (uint64_t)limit, name, ctx);
}

EXA_API exaStatus exaDestroyContext(exaContext ctx)
{
    struct exaContext_st *c = ctx_acquire(ctx);
    if (!c)
        return last_(EXA_ERROR_INVALID_HANDLE);
    queue_drain(c);
    exaStatus st = EXA_SUCCESS;
    pthread_mutex_lock(&g_lock);
    if (!c->live) {
        st = EXA_ERROR_INVALID_HANDLE;  /* destroyed concurrently */
    } else if (c->nbuffers) {
        st = EXA_ERROR_BUSY;            /* release its buffers first */
    } else {
        c->live = false;
        for (struct exaContext_st **pp = &g_contexts; *pp; pp = &(*pp)->reg_next)
            if (*pp == c) {
                *pp = c->reg_next;
                break;
            }
        c->refs--; /* the registry's reference; ours keeps it alive until below */
    }
    ctx_unref_locked(c);
    pthread_mutex_unlock(&g_lock);
    return last_(st);
}

EXA_API exaStatus exaGetContextName(exaContext ctx, char *name, size_t capacity, size_t *length)
{
    struct exaContext_st *c = ctx_acquire(ctx);
    if (!c)
        return last_(EXA_ERROR_INVALID_HANDLE);
    pthread_mutex_lock(&c->lock);
    size_t full = strlen(c->name) + 1;
    if (name && capacity) {
        size_t n = full <= capacity ? full : capacity;
        memcpy(name, c->name, n - 1);
        name[n - 1] = '\0';
    }
    if (length)
        *length = full;
    pthread_mutex_unlock(&c->lock);
    ctx_unref(c);
    return EXA_SUCCESS;
}

EXA_API exaStatus exaSetNotify(exaContext ctx, exaNotifyFn fn, void *user_data)
{
    struct exaContext_st *c = ctx_acquire(ctx);
    if (!c)
        return last_(EXA_ERROR_INVALID_HANDLE);
    pthread_mutex_lock(&c->lock);
    c->notify = fn;
    c->notify_user = fn ? user_data : NULL;
    pthread_mutex_unlock(&c->lock);
    ctx_unref(c);
    return EXA_SUCCESS;
}

EXA_API exaStatus exaFinish(exaContext ctx)
{
    struct exaContext_st *c = ctx_acquire(ctx);
    if (!c)
        return last_(EXA_ERROR_INVALID_HANDLE);
    event_list ev = {0};
    pthread_mutex_lock(&c->lock);
    unsigned ran = queue_run_locked(c, &ev);
    exaStatus st = c->pending;
    c->pending = EXA_SUCCESS;
    events_add(&ev, EXA_EVENT_FINISHED, (int32_t)ran);
    exaNotifyFn fn = c->notify;
    void *user = c->notify_user;
    pthread_mutex_unlock(&c->lock);
    deliver(c, fn, user, &ev);
    ctx_unref(c);
    return last_(st);
}

/* ---- buffers --------------------------------------------------------------- */

EXA_API exaStatus exaCreateBuffer(exaContext ctx, size_t bytes, exaBuffer *buffer)
{
    if (!buffer || bytes == 0)
        return last_(EXA_ERROR_INVALID_VALUE);
    struct exaContext_st *c = ctx_acquire(ctx);
    if (!c)
        return last_(EXA_ERROR_INVALID_HANDLE);
    exaStatus st = EXA_SUCCESS;
    struct exaBuffer_st *b = calloc(1, sizeof *b);
    unsigned char *data = b ? calloc(1, bytes) : NULL;
    pthread_mutex_lock(&g_lock);
    if (!b || !data) {
        st = EXA_ERROR_OUT_OF_MEMORY;
    } else if (c->memory_limit && (bytes > c->memory_limit ||
                                   c->memory_used > c->memory_limit - bytes)) {
        st = EXA_ERROR_OUT_OF_MEMORY;
    } else {
        b->magic = BUF_MAGIC;
        b->refs = 1;
        b->live = true;
        b->ctx = c;
        c->refs++;
        c->nbuffers++;
        c->memory_used += bytes;
        b->size = bytes;
        b->data = data;
        b->reg_next = g_buffers;
        g_buffers = b;
        *buffer = b;
    }
    ctx_unref_locked(c);
    pthread_mutex_unlock(&g_lock);
    if (st != EXA_SUCCESS) {
        free(data);
        free(b);
    }
    return last_(st);
}

EXA_API exaStatus exaReleaseBuffer(exaBuffer buffer)
{
    struct exaBuffer_st *b = buf_acquire(buffer);
    if (!b)
        return last_(EXA_ERROR_INVALID_HANDLE);
    queue_drain(b->ctx); /* queued writes to it run first */
    exaStatus st = EXA_SUCCESS;
    pthread_mutex_lock(&g_lock);
    if (!b->live) {
        st = EXA_ERROR_INVALID_HANDLE;
    } else {
        b->live = false;
        for (struct exaBuffer_st **pp = &g_buffers; *pp; pp = &(*pp)->reg_next)
            if (*pp == b) {
                *pp = b->reg_next;
                break;
            }
        b->refs--; /* the registry's reference; ours keeps it alive until below */
    }
    buf_unref_locked(b);
    pthread_mutex_unlock(&g_lock);
    return last_(st);
}

EXA_API exaStatus exaGetBufferSize(exaBuffer buffer, size_t *bytes)
{
    struct exaBuffer_st *b = buf_acquire(buffer);
    if (!b)
        return last_(EXA_ERROR_INVALID_HANDLE);
    exaStatus st = EXA_ERROR_INVALID_VALUE;
    if (bytes) {
        *bytes = b->size;
        st = EXA_SUCCESS;
    }
    buf_unref(b);
    return last_(st);
}

static exaStatus buffer_write(struct exaBuffer_st *b, size_t offset, size_t bytes, const void *src)
{
    if (!range_ok(offset, bytes, b->size))
        return EXA_ERROR_OUT_OF_RANGE;
    if (bytes && !src)
        return EXA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    if (bytes)
        memcpy(b->data + offset, src, bytes);
    pthread_mutex_unlock(&g_lock);
    return EXA_SUCCESS;
}

EXA_API exaStatus exaWriteBuffer(exaBuffer buffer, size_t offset, size_t bytes, const void *src)
{
    struct exaBuffer_st *b = buf_acquire(buffer);
    if (!b)
        return last_(EXA_ERROR_INVALID_HANDLE);
    queue_drain(b->ctx);
    exaStatus st = buffer_write(b, offset, bytes, src);
    buf_unref(b);
    return last_(st);
}

EXA_API exaStatus exaReadBuffer(exaBuffer buffer, size_t offset, size_t bytes, void *dst)
{
    struct exaBuffer_st *b = buf_acquire(buffer);
    if (!b)
        return last_(EXA_ERROR_INVALID_HANDLE);
    queue_drain(b->ctx);
    exaStatus st = EXA_SUCCESS;
    if (!range_ok(offset, bytes, b->size)) {
        st = EXA_ERROR_OUT_OF_RANGE;
    } else if (bytes && !dst) {
        st = EXA_ERROR_INVALID_VALUE;
    } else if (bytes) {
        pthread_mutex_lock(&g_lock);
        memcpy(dst, b->data + offset, bytes);
        pthread_mutex_unlock(&g_lock);
    }
    buf_unref(b);
    return last_(st);
}

EXA_API exaStatus exaEnqueueWrite(exaBuffer buffer, int blocking, size_t offset, size_t bytes,
                                  const void *src)
{
    struct exaBuffer_st *b = buf_acquire(buffer);
    if (!b)
        return last_(EXA_ERROR_INVALID_HANDLE);
    exaStatus st = EXA_SUCCESS;
    if (bytes && !src) {
        st = EXA_ERROR_INVALID_VALUE;
    } else if (blocking) {
        queue_drain(b->ctx);
        st = buffer_write(b, offset, bytes, src);
    } else {
        /* The bounds are checked when it runs: errors surface at exaFinish. */
        work *w = calloc(1, sizeof *w);
        unsigned char *data = bytes ? malloc(bytes) : NULL;
        if (!w || (bytes && !data)) {
            free(w);
            free(data);
            st = EXA_ERROR_OUT_OF_MEMORY;
        } else {
            if (bytes)
                memcpy(data, src, bytes);
            w->kind = WK_WRITE;
            w->buffer = b;
            w->offset = offset;
            w->bytes = bytes;
            w->data = data;
            st = enqueue(b->ctx, w);
        }
    }
    buf_unref(b);
    return last_(st);
}

EXA_API exaStatus exaSumBuffers(exaBuffer dst, const exaBuffer *srcs, uint32_t num_srcs, size_t n)
{
    size_t bytes;
    if (num_srcs && !srcs)
        return last_(EXA_ERROR_INVALID_VALUE);
    if (!mul_ok(n, sizeof(float), &bytes))
        return last_(EXA_ERROR_OUT_OF_RANGE);
    struct exaBuffer_st *d = buf_acquire(dst);
    if (!d)
        return last_(EXA_ERROR_INVALID_HANDLE);
    struct exaBuffer_st **s = calloc(num_srcs ? num_srcs : 1, sizeof *s);
    exaStatus st = s ? EXA_SUCCESS : EXA_ERROR_OUT_OF_MEMORY;
    uint32_t got = 0;
    for (; st == EXA_SUCCESS && got < num_srcs; got++) {
        s[got] = buf_acquire(srcs[got]);
        if (!s[got])
            st = EXA_ERROR_INVALID_HANDLE;
    }
    if (st == EXA_SUCCESS) {
        queue_drain(d->ctx);
        for (uint32_t k = 0; k < num_srcs; k++)
            if (s[k]->ctx != d->ctx)
                queue_drain(s[k]->ctx);
        if (bytes > d->size)
            st = EXA_ERROR_OUT_OF_RANGE;
        for (uint32_t k = 0; k < num_srcs; k++)
            if (bytes > s[k]->size)
                st = EXA_ERROR_OUT_OF_RANGE;
    }
    if (st == EXA_SUCCESS) {
        pthread_mutex_lock(&g_lock);
        float *out = malloc(bytes ? bytes : 1);
        if (!out) {
            st = EXA_ERROR_OUT_OF_MEMORY;
        } else {
            for (size_t i = 0; i < n; i++) {
                float acc = 0.0f;
                for (uint32_t k = 0; k < num_srcs; k++) {
                    float v;
                    memcpy(&v, s[k]->data + i * sizeof(float), sizeof v);
                    acc += v;
                }
                out[i] = acc;
            }
            memcpy(d->data, out, bytes); /* srcs may include dst */
            free(out);
        }
        pthread_mutex_unlock(&g_lock);
    }
    for (uint32_t k = 0; s && k < got; k++)
        if (s[k])
            buf_unref(s[k]);
    free(s);
    buf_unref(d);
    return last_(st);
}

/* ---- device memory --------------------------------------------------------- */

EXA_API exaStatus exaMalloc(void **dev_ptr, size_t bytes)
{
    if (!dev_ptr || bytes == 0)
        return last_(EXA_ERROR_INVALID_VALUE);
    void *p = calloc(1, bytes);
    if (!p)
        return last_(EXA_ERROR_OUT_OF_MEMORY);
    pthread_mutex_lock(&g_lock);
    if (g_ndev == g_capdev) {
        size_t cap = g_capdev ? 2 * g_capdev : 16;
        dev_alloc *t = realloc(g_dev, cap * sizeof *t);
        if (!t) {
            pthread_mutex_unlock(&g_lock);
            free(p);
            return last_(EXA_ERROR_OUT_OF_MEMORY);
        }
        g_dev = t;
        g_capdev = cap;
    }
    g_dev[g_ndev].base = (uintptr_t)p;
    g_dev[g_ndev].size = bytes;
    g_ndev++;
    pthread_mutex_unlock(&g_lock);
    *dev_ptr = p;
    return EXA_SUCCESS;
}

EXA_API exaStatus exaFree(void *dev_ptr)
{
    if (!dev_ptr)
        return EXA_SUCCESS;
    exaStatus st = EXA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    for (size_t i = 0; i < g_ndev; i++)
        if (g_dev[i].base == (uintptr_t)dev_ptr) {
            g_dev[i] = g_dev[--g_ndev];
            st = EXA_SUCCESS;
            break;
        }
    pthread_mutex_unlock(&g_lock);
    if (st == EXA_SUCCESS)
        free(dev_ptr);
    return last_(st);
}

EXA_API exaStatus exaMemcpy(void *dst, const void *src, size_t bytes, exaCopyKind kind)
{
    exaStatus st = EXA_SUCCESS;
    if (kind != EXA_COPY_HOST_TO_DEVICE && kind != EXA_COPY_DEVICE_TO_HOST &&
        kind != EXA_COPY_DEVICE_TO_DEVICE)
        return last_(EXA_ERROR_INVALID_VALUE);
    if (bytes == 0)
        return EXA_SUCCESS;
    if (!dst || !src)
        return last_(EXA_ERROR_INVALID_VALUE);
    pthread_mutex_lock(&g_lock);
    if (kind != EXA_COPY_HOST_TO_DEVICE)
        st = dev_check_locked(src, bytes);
    if (st == EXA_SUCCESS && kind != EXA_COPY_DEVICE_TO_HOST)
        st = dev_check_locked(dst, bytes);
    if (st == EXA_SUCCESS)
        memmove(dst, src, bytes);
    pthread_mutex_unlock(&g_lock);
    return last_(st);
}

/* ---- kernels ---------------------------------------------------------------- */

EXA_API exaStatus exaLaunchSaxpy(exaContext ctx, exaDim3 grid, float a, const void *x, void *y,
                                 size_t n)
{
    if (grid.x == 0 || grid.y == 0 || grid.z == 0)
        return last_(EXA_ERROR_INVALID_VALUE);
    struct exaContext_st *c = ctx_acquire(ctx);
    if (!c)
        return last_(EXA_ERROR_INVALID_HANDLE);
    exaStatus st = EXA_ERROR_OUT_OF_MEMORY;
    work *w = calloc(1, sizeof *w);
    if (w) {
        w->kind = WK_SAXPY;
        w->a = a;
        w->x = x;
        w->dst = y;
        w->n = n;
        st = enqueue(c, w); /* addresses are checked when it runs */
    }
    ctx_unref(c);
    return last_(st);
}

EXA_API exaStatus exaLaunchFill(exaContext ctx, void *dst, float value, size_t n)
{
    struct exaContext_st *c = ctx_acquire(ctx);
    if (!c)
        return last_(EXA_ERROR_INVALID_HANDLE);
    exaStatus st = EXA_ERROR_OUT_OF_MEMORY;
    work *w = calloc(1, sizeof *w);
    if (w) {
        w->kind = WK_FILL;
        w->value = value;
        w->dst = dst;
        w->n = n;
        st = enqueue(c, w);
    }
    ctx_unref(c);
    return last_(st);
}

EXA_API exaStatus exaReduceSum(exaContext ctx, const void *src, size_t n, double *result)
{
    size_t bytes;
    if (!result)
        return last_(EXA_ERROR_INVALID_VALUE);
    struct exaContext_st *c = ctx_acquire(ctx);
    if (!c)
        return last_(EXA_ERROR_INVALID_HANDLE);
    queue_drain(c);
    exaStatus st = EXA_SUCCESS;
    if (!mul_ok(n, sizeof(float), &bytes)) {
        st = EXA_ERROR_OUT_OF_RANGE;
    } else {
        pthread_mutex_lock(&g_lock);
        st = n ? dev_check_locked(src, bytes) : EXA_SUCCESS;
        if (st == EXA_SUCCESS) {
            double acc = 0.0;
            const float *f = src;
            for (size_t i = 0; i < n; i++)
                acc += f[i];
            *result = acc;
        }
        pthread_mutex_unlock(&g_lock);
    }
    ctx_unref(c);
    return last_(st);
}

/* ---- leak report (tests) -----------------------------------------------------
 * EXA_LEAK_REPORT=FILE: at exit, append what is still alive to FILE. The
 * end-to-end tests use it to check that the server releases what a vanished
 * client left behind. */
__attribute__((destructor)) static void exa_leak_report(void)
{
    const char *path = getenv("EXA_LEAK_REPORT");
    if (!path || !*path)
        return;
    FILE *f = fopen(path, "a");
    if (!f)
        return;
    unsigned nctx = 0, nbuf = 0;
    pthread_mutex_lock(&g_lock);
    for (struct exaContext_st *p = g_contexts; p; p = p->reg_next)
        nctx++;
    for (struct exaBuffer_st *p = g_buffers; p; p = p->reg_next)
        nbuf++;
    fprintf(f, "live at exit: %u contexts, %u buffers, %zu device allocations\n", nctx, nbuf,
            g_ndev);
    pthread_mutex_unlock(&g_lock);
    fclose(f);
}

/* ---- debugging --------------------------------------------------------------- */

EXA_API exaStatus exaDebugDump(exaContext ctx)
{
    struct exaContext_st *c = ctx_acquire(ctx);
    if (!c)
        return last_(EXA_ERROR_INVALID_HANDLE);
    pthread_mutex_lock(&c->lock);
    unsigned queued = 0;
    for (work *w = c->head; w; w = w->next)
        queued++;
    pthread_mutex_lock(&g_lock);
    printf("exa context \"%s\": device %d, priority %" PRId64 ", %u buffers (%" PRIu64
           " bytes), %u queued, %zu device allocations\n",
           c->name, c->device, c->priority, c->nbuffers, c->memory_used, queued, g_ndev);
    pthread_mutex_unlock(&g_lock);
    pthread_mutex_unlock(&c->lock);
    fflush(stdout);
    ctx_unref(c);
    return EXA_SUCCESS;
}
