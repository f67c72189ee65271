/* A stand-in for the driver's contexts, memory and CUDA arrays, preloaded
 * (LD_PRELOAD) into tests/cuda/driver/arrays_ci natively and into
 * apigen-server-cuda (tests/cuda/driver_fake_diff.sh; CI has no GPU): one
 * device, one context per cuCtxCreate, "device memory" from mappings of
 * this process, arrays of every kind (1D, 2D, 3D, layered, cubemap,
 * surface) as host memory, and the 2D/3D/array copies with the driver's
 * bounds (a region past an array's edge, or a row wider than a pitch:
 * CUDA_ERROR_INVALID_VALUE), host registrations whose device pointer is the
 * host pointer, pinned memory and the pointer queries about it, the
 * capture mode's exchange, texture references' border color.
 * Everything else is the toolkit's stubs library.
 * Never used with a GPU. */
#define _GNU_SOURCE
#include <cuda.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../../specs/cuda/pinned_chunks.h" /* the real driver's PORTABLE rule */

#define FAKE __attribute__((visibility("default")))

static _Thread_local CUcontext current_;
static void events_of_context_gone(CUcontext ctx);

FAKE CUresult cuInit(unsigned int flags) { return flags ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS; }
FAKE CUresult cuDriverGetVersion(int *v)
{
    if (!v) return CUDA_ERROR_INVALID_VALUE;
    *v = CUDA_VERSION;
    return CUDA_SUCCESS;
}
FAKE CUresult cuDeviceGetCount(int *n)
{
    if (!n) return CUDA_ERROR_INVALID_VALUE;
    *n = 1;
    return CUDA_SUCCESS;
}
FAKE CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
    if (!d) return CUDA_ERROR_INVALID_VALUE;
    if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
    *d = 0;
    return CUDA_SUCCESS;
}
FAKE CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    (void)flags;
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
    *pctx = current_ = (CUcontext)calloc(1, 64);
    return *pctx ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
FAKE CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *params, unsigned int flags, CUdevice dev)
{
    if (params) return CUDA_ERROR_NOT_SUPPORTED;
    return cuCtxCreate_v2(pctx, flags, dev);
}
FAKE CUresult cuCtxDestroy_v2(CUcontext ctx)
{
    if (!ctx) return CUDA_ERROR_INVALID_VALUE;
    if (ctx == current_) current_ = NULL;
    events_of_context_gone(ctx);
    free(ctx);
    return CUDA_SUCCESS;
}
FAKE CUresult cuCtxGetCurrent(CUcontext *pctx)
{
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    *pctx = current_;
    return CUDA_SUCCESS;
}
FAKE CUresult cuCtxSetCurrent(CUcontext ctx)
{
    current_ = ctx;
    return CUDA_SUCCESS;
}
FAKE CUresult cuCtxSynchronize(void) { return current_ ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT; }
FAKE CUresult cuStreamSynchronize(CUstream s)
{
    (void)s;
    return CUDA_SUCCESS;
}

/* device memory: a mapping of its own, 256 bytes of length before it, at
 * addresses of this process id (the guest's host memory never has them) */
#define DEVICE_MEMORY_BASE 0x310000000000ull
static int is_device_memory(CUdeviceptr p)
{
    return p >= DEVICE_MEMORY_BASE && p < DEVICE_MEMORY_BASE + (0x10000ull << 26) + (1ull << 40); /* pid offsets, then room */
}
FAKE CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
    static uintptr_t next_;
    if (!p || !n) return CUDA_ERROR_INVALID_VALUE;
    if (!current_) return CUDA_ERROR_INVALID_CONTEXT;
    size_t len = 256 + n;
    if (!next_) next_ = (uintptr_t)DEVICE_MEMORY_BASE + ((uintptr_t)(getpid() & 0xffff) << 26);
    unsigned char *m = mmap((void *)next_, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
    next_ = (uintptr_t)m + ((len + 0xfffff) & ~(uintptr_t)0xfffff);
    memcpy(m, &len, sizeof len);
    *p = (CUdeviceptr)(uintptr_t)(m + 256);
    return CUDA_SUCCESS;
}
FAKE CUresult cuMemFree_v2(CUdeviceptr p)
{
    if (!p) return CUDA_SUCCESS;
    size_t len;
    unsigned char *m = (unsigned char *)(uintptr_t)p - 256;
    memcpy(&len, m, sizeof len);
    munmap(m, len);
    return CUDA_SUCCESS;
}
FAKE CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *h, size_t n)
{
    if (n) memmove((void *)(uintptr_t)d, h, n);
    return CUDA_SUCCESS;
}
FAKE CUresult cuMemcpyDtoH_v2(void *h, CUdeviceptr d, size_t n)
{
    if (n) memmove(h, (const void *)(uintptr_t)d, n);
    return CUDA_SUCCESS;
}
FAKE CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n)
{
    memset((void *)(uintptr_t)d, v, n);
    return CUDA_SUCCESS;
}
FAKE CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s)
{
    (void)s;
    return cuMemsetD8_v2(d, v, n);
}
FAKE CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n)
{
    if (n) memmove((void *)(uintptr_t)d, (const void *)(uintptr_t)s, n);
    return CUDA_SUCCESS;
}
/* Pinned memory (what the server's streamed copies use too, specs/cuda/
 * host_copy.c): plain memory, each block recorded with its flags, context
 * and buffer id, which pointer queries answer as NVIDIA's driver does for
 * host memory under unified addressing (cuda.h; tests/cuda/driver/
 * pinned_attrs_ci.c): the block's context, CU_MEMORYTYPE_HOST, the
 * pointer itself as host and device pointer, the block as the range,
 * mapped, neither managed nor IPC-capable, device 0. */
typedef struct {
    uintptr_t base;
    size_t size;
    unsigned flags;
    CUcontext ctx;
    unsigned long long id;
    int owned; /* cuMemHostAlloc's (cuMemHostRegister's: the caller's memory) */
} pinned;
static pinned pinned_[256];
static unsigned long long next_id_ = 1;
static pthread_mutex_t pinned_lock_ = PTHREAD_MUTEX_INITIALIZER;

/* a block recorded: 1, or 0 (the table full) */
static int pinned_add(void *p, size_t n, unsigned flags, int owned)
{
    size_t i = 0;
    pthread_mutex_lock(&pinned_lock_);
    while (i < sizeof pinned_ / sizeof *pinned_ && pinned_[i].base) i++;
    if (i < sizeof pinned_ / sizeof *pinned_)
        pinned_[i] = (pinned){(uintptr_t)p, n, flags, current_, next_id_++, owned};
    pthread_mutex_unlock(&pinned_lock_);
    return i < sizeof pinned_ / sizeof *pinned_;
}

/* the block starting at p taken out: 1, or 0 (none of that kind) */
static int pinned_remove(void *p, int owned)
{
    int found = 0;
    pthread_mutex_lock(&pinned_lock_);
    for (size_t i = 0; i < sizeof pinned_ / sizeof *pinned_ && !found; i++)
        if (p && pinned_[i].base == (uintptr_t)p && pinned_[i].owned == owned) {
            pinned_[i].base = 0;
            found = 1;
        }
    pthread_mutex_unlock(&pinned_lock_);
    return found;
}

/* a copy of the block holding p: 1, or 0 */
static int pinned_of(uintptr_t p, pinned *out)
{
    int found = 0;
    pthread_mutex_lock(&pinned_lock_);
    for (size_t i = 0; i < sizeof pinned_ / sizeof *pinned_ && !found; i++)
        if (pinned_[i].base && p >= pinned_[i].base && p - pinned_[i].base < pinned_[i].size) {
            if (out) *out = pinned_[i];
            found = 1;
        }
    pthread_mutex_unlock(&pinned_lock_);
    return found;
}

FAKE CUresult cuMemHostAlloc(void **pp, size_t n, unsigned int flags)
{
    const unsigned known = CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED;
    if (!pp || !n || (flags & ~known)) return CUDA_ERROR_INVALID_VALUE;
    if (!current_) return CUDA_ERROR_INVALID_CONTEXT;
    void *p = NULL; /* page-aligned and present, as pinned pages are */
    if (posix_memalign(&p, 4096, n) != 0) return CUDA_ERROR_OUT_OF_MEMORY;
    memset(p, 0, n);
    if (!pinned_add(p, n, flags, 1)) {
        free(p);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    pc_add(p, n, (flags & CU_MEMHOSTALLOC_PORTABLE) != 0);
    *pp = p;
    return CUDA_SUCCESS;
}
FAKE CUresult cuMemAllocHost_v2(void **pp, size_t n) { return cuMemHostAlloc(pp, n, 0); }
FAKE CUresult cuMemFreeHost(void *p)
{
    if (!pinned_remove(p, 1)) return CUDA_ERROR_INVALID_VALUE;
    pc_remove(p);
    free(p);
    return CUDA_SUCCESS;
}
FAKE CUresult cuMemHostGetFlags(unsigned int *flags, void *p)
{
    pinned b;
    if (!flags || !pinned_of((uintptr_t)p, &b)) return CUDA_ERROR_INVALID_VALUE;
    *flags = b.flags | CU_MEMHOSTALLOC_DEVICEMAP; /* the real driver: all pinned memory is mapped */
    if (b.owned) *flags = pc_flags(p, *flags, CU_MEMHOSTALLOC_PORTABLE);
    return CUDA_SUCCESS;
}
FAKE CUresult cuCtxGetDevice(CUdevice *d)
{
    if (!d) return CUDA_ERROR_INVALID_VALUE;
    if (!current_) return CUDA_ERROR_INVALID_CONTEXT;
    *d = 0;
    return CUDA_SUCCESS;
}
FAKE CUresult cuCtxGetDevice_v2(CUdevice *d, CUcontext ctx)
{
    if (!d) return CUDA_ERROR_INVALID_VALUE;
    if (!ctx && !current_) return CUDA_ERROR_INVALID_CONTEXT;
    *d = 0;
    return CUDA_SUCCESS;
}

FAKE CUresult cuPointerGetAttribute(void *data, CUpointer_attribute a, CUdeviceptr p)
{
    pinned b;
    const unsigned zero = 0, one = 1, host = CU_MEMORYTYPE_HOST;
    const int dev0 = 0;
    if (data && is_device_memory(p)) { /* the few answers of device memory the tests read */
        const unsigned device = CU_MEMORYTYPE_DEVICE;
        switch (a) {
        case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: memcpy(data, &device, 4); return CUDA_SUCCESS;
        case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: memcpy(data, &p, sizeof p); return CUDA_SUCCESS;
        case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: memcpy(data, &dev0, 4); return CUDA_SUCCESS;
        case CU_POINTER_ATTRIBUTE_IS_MANAGED: memcpy(data, &zero, 4); return CUDA_SUCCESS;
        case CU_POINTER_ATTRIBUTE_HOST_POINTER: return CUDA_ERROR_INVALID_VALUE; /* cuda.h: none */
        default: return CUDA_ERROR_NOT_SUPPORTED;
        }
    }
    if (!data || !pinned_of((uintptr_t)p, &b)) return CUDA_ERROR_INVALID_VALUE;
    switch (a) {
    case CU_POINTER_ATTRIBUTE_CONTEXT: memcpy(data, &b.ctx, sizeof b.ctx); break;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: memcpy(data, &host, 4); break;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        memcpy(data, &p, sizeof p);
        break;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID: memcpy(data, &b.id, sizeof b.id); break;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED: case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
        memcpy(data, &zero, 4);
        break;
    case CU_POINTER_ATTRIBUTE_MAPPED: memcpy(data, &one, 4); break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: memcpy(data, &dev0, 4); break;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: memcpy(data, &b.base, 8); break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE: memcpy(data, &b.size, 8); break;
    default: return CUDA_ERROR_INVALID_VALUE; /* P2P tokens: cuMemAlloc memory only */
    }
    return CUDA_SUCCESS;
}

/* an address it does not know: success, the real driver's defaults (H200,
 * driver 580: ordinal -2, the range size left as it was, the host pointer
 * the address itself, the rest zero) */
FAKE CUresult cuPointerGetAttributes(unsigned int n, CUpointer_attribute *attributes, void **data,
                                     CUdeviceptr p)
{
    if (n && (!attributes || !data)) return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < n; i++) /* the real driver: NULL fails the list, nothing written */
        if (!data[i]) return CUDA_ERROR_INVALID_VALUE;
    int known = pinned_of((uintptr_t)p, NULL), device = is_device_memory(p);
    for (unsigned i = 0; i < n; i++) {
        if (!known && attributes[i] == CU_POINTER_ATTRIBUTE_HOST_POINTER) {
            CUdeviceptr h = device ? 0 : p; /* the real driver: the address itself if unknown */
            memcpy(data[i], &h, sizeof h);
            continue;
        }
        if (device) {
            CUresult e = cuPointerGetAttribute(data[i], attributes[i], p);
            if (e != CUDA_SUCCESS) return e;
            continue;
        }
        if (known) {
            CUresult e = cuPointerGetAttribute(data[i], attributes[i], p);
            if (e != CUDA_SUCCESS) return e;
            continue;
        }
        switch (attributes[i]) {
        case CU_POINTER_ATTRIBUTE_RANGE_SIZE: break;
        case CU_POINTER_ATTRIBUTE_CONTEXT: case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
        case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
            memset(data[i], 0, 8);
            break;
        case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *)data[i] = -2; break;
        case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: case CU_POINTER_ATTRIBUTE_IS_MANAGED:
        case CU_POINTER_ATTRIBUTE_MAPPED:
            memset(data[i], 0, 4);
            break;
        default: return CUDA_ERROR_NOT_SUPPORTED;
        }
    }
    return CUDA_SUCCESS;
}
FAKE CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *h, size_t n, CUstream s)
{
    (void)s;
    return cuMemcpyHtoD_v2(d, h, n);
}
FAKE CUresult cuMemcpyDtoHAsync_v2(void *h, CUdeviceptr d, size_t n, CUstream s)
{
    (void)s;
    return cuMemcpyDtoH_v2(h, d, n);
}
/* Events as the driver keeps them: made in the current context, refused
 * with unknown flags or an interprocess event that keeps timing, gone with
 * their context (destroying one then: CUDA_ERROR_CONTEXT_IS_DESTROYED, as
 * the H200's driver 580 answered, docs/gpu-runs/2026-11-27.md, session 20); a handle
 * that never was an event is CUDA_ERROR_INVALID_HANDLE
 * (tests/cuda/driver/events_ci.c). */
enum { MAX_EVENTS = 4096 };
static struct fake_event {
    CUcontext ctx;
    int live, orphaned; /* orphaned: its context ended */
} events_[MAX_EVENTS];
static pthread_mutex_t events_mu_ = PTHREAD_MUTEX_INITIALIZER;

static int event_live(CUevent e)
{
    struct fake_event *f = (struct fake_event *)e;
    pthread_mutex_lock(&events_mu_);
    int live = f >= events_ && f < events_ + MAX_EVENTS && f->live;
    pthread_mutex_unlock(&events_mu_);
    return live;
}

static void events_of_context_gone(CUcontext ctx)
{
    pthread_mutex_lock(&events_mu_);
    for (int i = 0; i < MAX_EVENTS; i++)
        if (events_[i].ctx == ctx && events_[i].live) events_[i].live = 0, events_[i].orphaned = 1;
    pthread_mutex_unlock(&events_mu_);
}

FAKE CUresult cuEventCreate(CUevent *e, unsigned int flags)
{
    const unsigned known = CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
    if (!e || (flags & ~known)) return CUDA_ERROR_INVALID_VALUE;
    if ((flags & CU_EVENT_INTERPROCESS) && !(flags & CU_EVENT_DISABLE_TIMING)) return CUDA_ERROR_INVALID_VALUE;
    if (!current_) return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&events_mu_);
    int i = 0;
    while (i < MAX_EVENTS && events_[i].live) i++;
    if (i < MAX_EVENTS) events_[i] = (struct fake_event){current_, 1, 0};
    pthread_mutex_unlock(&events_mu_);
    if (i == MAX_EVENTS) return CUDA_ERROR_OUT_OF_MEMORY;
    *e = (CUevent)&events_[i];
    return CUDA_SUCCESS;
}
FAKE CUresult cuEventDestroy_v2(CUevent e)
{
    struct fake_event *f = (struct fake_event *)e;
    pthread_mutex_lock(&events_mu_);
    int ours = f >= events_ && f < events_ + MAX_EVENTS;
    int live = ours && f->live, orphaned = ours && f->orphaned;
    if (ours) f->live = 0, f->orphaned = 0;
    pthread_mutex_unlock(&events_mu_);
    return live ? CUDA_SUCCESS : orphaned ? CUDA_ERROR_CONTEXT_IS_DESTROYED : CUDA_ERROR_INVALID_HANDLE;
}
FAKE CUresult cuEventRecord(CUevent e, CUstream s)
{
    (void)s;
    return event_live(e) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
FAKE CUresult cuEventSynchronize(CUevent e)
{
    return event_live(e) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
FAKE CUresult cuEventQuery(CUevent e)
{
    return event_live(e) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
FAKE CUresult cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *st)
{
    (void)s;
    if (!st) return CUDA_ERROR_INVALID_VALUE;
    *st = CU_STREAM_CAPTURE_STATUS_NONE;
    return CUDA_SUCCESS;
}

/* host registration (tests/cuda/driver/registered_ci.c natively): mapped
 * memory's device pointer is the host pointer (unified addressing); the
 * range is recorded as pinned memory's (pointer queries) */
FAKE CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned int flags)
{
    const unsigned known = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |
                           CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY;
    if (!p || !n || (flags & ~known)) return CUDA_ERROR_INVALID_VALUE;
    if (pinned_of((uintptr_t)p, NULL)) return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    return pinned_add(p, n, flags, 0) ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
FAKE CUresult cuMemHostUnregister(void *p)
{
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    return pinned_remove(p, 0) ? CUDA_SUCCESS : CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
}
FAKE CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *d, void *p, unsigned int flags)
{
    if (!d || !p || flags) return CUDA_ERROR_INVALID_VALUE;
    *d = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}

/* the thread's capture mode, swapped (tests/cuda/driver/inputs_ci.c) */
static _Thread_local int capture_mode_;
FAKE CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
    if (!mode || (int)*mode < 0 || (int)*mode > 2) return CUDA_ERROR_INVALID_VALUE;
    int old = capture_mode_;
    capture_mode_ = (int)*mode;
    *mode = (CUstreamCaptureMode)old;
    return CUDA_SUCCESS;
}

/* texture references: their border color (RGBA) kept */
struct CUtexref_st {
    float border[4];
};
FAKE CUresult cuTexRefCreate(CUtexref *t)
{
    if (!t) return CUDA_ERROR_INVALID_VALUE;
    return (*t = calloc(1, sizeof **t)) ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
FAKE CUresult cuTexRefDestroy(CUtexref t)
{
    if (!t) return CUDA_ERROR_INVALID_VALUE;
    free(t);
    return CUDA_SUCCESS;
}
FAKE CUresult cuTexRefSetBorderColor(CUtexref t, float *c)
{
    if (!t || !c) return CUDA_ERROR_INVALID_VALUE;
    memcpy(t->border, c, sizeof t->border);
    return CUDA_SUCCESS;
}
FAKE CUresult cuTexRefGetBorderColor(float *c, CUtexref t)
{
    if (!t || !c) return CUDA_ERROR_INVALID_VALUE;
    memcpy(c, t->border, sizeof t->border);
    return CUDA_SUCCESS;
}

typedef struct {
    uint32_t magic;
    CUDA_ARRAY3D_DESCRIPTOR desc;
    size_t rowb, h, d;
    unsigned char *data;
} farray;
#define MAGIC 0xa3a3a3a3u

static farray *arr(CUarray a)
{
    farray *f = (farray *)a;
    return f && f->magic == MAGIC ? f : NULL;
}
static size_t fmt_bytes(CUarray_format f)
{
    switch (f) {
    case CU_AD_FORMAT_UNSIGNED_INT8: case CU_AD_FORMAT_SIGNED_INT8: return 1;
    case CU_AD_FORMAT_UNSIGNED_INT16: case CU_AD_FORMAT_SIGNED_INT16: case CU_AD_FORMAT_HALF: return 2;
    case CU_AD_FORMAT_UNSIGNED_INT32: case CU_AD_FORMAT_SIGNED_INT32: case CU_AD_FORMAT_FLOAT: return 4;
    default: return 0;
    }
}
FAKE CUresult cuArray3DCreate_v2(CUarray *pa, const CUDA_ARRAY3D_DESCRIPTOR *d)
{
    if (!pa || !d || !d->Width || !fmt_bytes(d->Format) ||
        (d->NumChannels != 1 && d->NumChannels != 2 && d->NumChannels != 4))
        return CUDA_ERROR_INVALID_VALUE;
    if ((d->Flags & CUDA_ARRAY3D_CUBEMAP) &&
        (d->Width != d->Height || !d->Depth || d->Depth % 6 ||
         (!(d->Flags & CUDA_ARRAY3D_LAYERED) && d->Depth != 6)))
        return CUDA_ERROR_INVALID_VALUE;
    if (!current_) return CUDA_ERROR_INVALID_CONTEXT;
    farray *f = calloc(1, sizeof *f);
    if (!f) return CUDA_ERROR_OUT_OF_MEMORY;
    f->magic = MAGIC;
    f->desc = *d;
    f->rowb = d->Width * fmt_bytes(d->Format) * d->NumChannels;
    f->h = d->Height ? d->Height : 1;
    f->d = d->Depth ? d->Depth : 1;
    if (!(f->data = calloc(f->h * f->d, f->rowb))) {
        free(f);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *pa = (CUarray)f;
    return CUDA_SUCCESS;
}
FAKE CUresult cuArray3DGetDescriptor_v2(CUDA_ARRAY3D_DESCRIPTOR *d, CUarray a)
{
    farray *f = arr(a);
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    if (!d) return CUDA_ERROR_INVALID_VALUE;
    *d = f->desc;
    return CUDA_SUCCESS;
}
FAKE CUresult cuArrayDestroy(CUarray a)
{
    farray *f = arr(a);
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    f->magic = 0;
    free(f->data);
    free(f);
    return CUDA_SUCCESS;
}

typedef struct {
    unsigned char *p;
    size_t pitch, slice;
} side;

static CUresult one_side(CUmemorytype t, size_t x, size_t y, size_t z, const void *host, CUdeviceptr dev,
                         CUarray a, size_t pitch, size_t height, size_t wb, size_t h, size_t d, side *s)
{
    switch (t) {
    case CU_MEMORYTYPE_HOST:
    case CU_MEMORYTYPE_DEVICE:
    case CU_MEMORYTYPE_UNIFIED: {
        unsigned char *b = t == CU_MEMORYTYPE_HOST ? (unsigned char *)(uintptr_t)host
                                                   : (unsigned char *)(uintptr_t)dev;
        if (!b || pitch < x + wb) return CUDA_ERROR_INVALID_VALUE;
        s->pitch = pitch;
        s->slice = pitch * (height ? height : h);
        s->p = b + z * s->slice + y * pitch + x;
        return CUDA_SUCCESS;
    }
    case CU_MEMORYTYPE_ARRAY: {
        farray *f = arr(a);
        if (!f) return CUDA_ERROR_INVALID_HANDLE;
        size_t e = fmt_bytes(f->desc.Format) * f->desc.NumChannels;
        if (x % e || wb % e || x > f->rowb || wb > f->rowb - x || y > f->h || h > f->h - y ||
            z > f->d || d > f->d - z)
            return CUDA_ERROR_INVALID_VALUE;
        s->pitch = f->rowb;
        s->slice = f->rowb * f->h;
        s->p = f->data + z * s->slice + y * s->pitch + x;
        return CUDA_SUCCESS;
    }
    }
    return CUDA_ERROR_INVALID_VALUE;
}

FAKE CUresult cuMemcpy3D_v2(const CUDA_MEMCPY3D *c)
{
    if (!c) return CUDA_ERROR_INVALID_VALUE;
    size_t wb = c->WidthInBytes, h = c->Height, d = c->Depth ? c->Depth : 1;
    side s, t;
    CUresult e = one_side(c->srcMemoryType, c->srcXInBytes, c->srcY, c->srcZ, c->srcHost, c->srcDevice,
                          c->srcArray, c->srcPitch, c->srcHeight, wb, h, d, &s);
    if (e == CUDA_SUCCESS)
        e = one_side(c->dstMemoryType, c->dstXInBytes, c->dstY, c->dstZ, c->dstHost, c->dstDevice,
                     c->dstArray, c->dstPitch, c->dstHeight, wb, h, d, &t);
    if (e != CUDA_SUCCESS) return e;
    for (size_t z = 0; z < d; z++)
        for (size_t y = 0; y < h; y++)
            memmove(t.p + z * t.slice + y * t.pitch, s.p + z * s.slice + y * s.pitch, wb);
    return CUDA_SUCCESS;
}
FAKE CUresult cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *c, CUstream s)
{
    (void)s;
    return cuMemcpy3D_v2(c);
}
static CUresult copy2d(const CUDA_MEMCPY2D *p)
{
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    CUDA_MEMCPY3D c;
    memset(&c, 0, sizeof c);
    c.srcXInBytes = p->srcXInBytes, c.srcY = p->srcY, c.srcMemoryType = p->srcMemoryType;
    c.srcHost = p->srcHost, c.srcDevice = p->srcDevice, c.srcArray = p->srcArray, c.srcPitch = p->srcPitch;
    c.dstXInBytes = p->dstXInBytes, c.dstY = p->dstY, c.dstMemoryType = p->dstMemoryType;
    c.dstHost = p->dstHost, c.dstDevice = p->dstDevice, c.dstArray = p->dstArray, c.dstPitch = p->dstPitch;
    c.WidthInBytes = p->WidthInBytes, c.Height = p->Height, c.Depth = 1;
    return cuMemcpy3D_v2(&c);
}
FAKE CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D *p) { return copy2d(p); }
FAKE CUresult cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D *p) { return copy2d(p); }
FAKE CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *p, CUstream s)
{
    (void)s;
    return copy2d(p);
}
