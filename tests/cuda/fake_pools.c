/* The stand-in device's stream-ordered allocator, device limits, stream
 * priorities and stream attributes (tests/cuda/fake_device.c), for
 * tests/cuda/pools_ci.c without a GPU: what examples/cuda/modern.cu does on
 * a GPU, answered as an H200's runtime does (a default pool per device,
 * its release threshold deciding what a free keeps reserved, an allocation
 * beyond the device refused with cudaErrorMemoryAllocation, priorities 0 to
 * -5). Preloaded into the program (native) or into the server (forwarded)
 * alike. Never used with a GPU. */
#define _GNU_SOURCE /* memfd_create */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fake_stream.h"

#define FAKE __attribute__((visibility("default")))

cudaError_t fake_fail(cudaError_t e); /* fake_device.c: and the thread's last error */
int fake_current_device(void);
int fake_ndev(void);

#define MAX_POOLS 16
#define MAX_LIVE 256
#define DEVICE_BYTES ((size_t)80 << 30)

typedef struct fake_pool {
    bool used;
    int device;
    uint64_t threshold, reserved, reserved_high, in_use, used_high;
    int reuse[3]; /* the three reuse policies, on by default */
    unsigned handle_types; /* cudaMemPoolProps.handleTypes: what it may be exported as */
} fake_pool;

static fake_pool pools_[MAX_POOLS]; /* 0..ndev-1: the devices' default pools */
static int current_pool_[MAX_POOLS];
static struct {
    void *p;
    size_t n;
    int pool;
} live_[MAX_LIVE];
static pthread_mutex_t lock_ = PTHREAD_MUTEX_INITIALIZER;

/* a pool handle is its index + 1, never NULL */
static cudaMemPool_t handle_of(int i)
{
    return (cudaMemPool_t)(uintptr_t)(0x9000 + i);
}
static int index_of(cudaMemPool_t p)
{
    uintptr_t v = (uintptr_t)p;
    if (v < 0x9000 || v >= 0x9000 + MAX_POOLS)
        return -1;
    int i = (int)(v - 0x9000);
    return i < fake_ndev() || pools_[i].used ? i : -1;
}

static void defaults(fake_pool *p, int device)
{
    memset(p, 0, sizeof *p);
    p->device = device;
    p->reuse[0] = p->reuse[1] = p->reuse[2] = 1;
}

static void init_once(void)
{
    static bool done;
    if (done)
        return;
    done = true;
    for (int d = 0; d < fake_ndev() && d < MAX_POOLS; d++) {
        defaults(&pools_[d], d);
        pools_[d].used = true;
        current_pool_[d] = d;
    }
}

/* Takes lock_ (the caller unlocks) and gives pool's index, -1 if none. */
static int lock_pool(cudaMemPool_t pool)
{
    pthread_mutex_lock(&lock_);
    init_once();
    return index_of(pool);
}

FAKE cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *pool, int device)
{
    if (!pool)
        return fake_fail(cudaErrorInvalidValue);
    if (device < 0 || device >= fake_ndev())
        return fake_fail(cudaErrorInvalidDevice);
    *pool = handle_of(device);
    return cudaSuccess;
}

FAKE cudaError_t cudaDeviceGetMemPool(cudaMemPool_t *pool, int device)
{
    if (!pool)
        return fake_fail(cudaErrorInvalidValue);
    if (device < 0 || device >= fake_ndev())
        return fake_fail(cudaErrorInvalidDevice);
    pthread_mutex_lock(&lock_);
    init_once();
    *pool = handle_of(current_pool_[device]);
    pthread_mutex_unlock(&lock_);
    return cudaSuccess;
}

/* a pool of device with the handle types it may be exported as */
static cudaError_t new_pool(cudaMemPool_t *pool, int device, unsigned handle_types)
{
    pthread_mutex_lock(&lock_);
    init_once();
    int i = fake_ndev();
    while (i < MAX_POOLS && pools_[i].used)
        i++;
    if (i < MAX_POOLS) {
        defaults(&pools_[i], device);
        pools_[i].used = true;
        pools_[i].handle_types = handle_types;
        *pool = handle_of(i);
    }
    pthread_mutex_unlock(&lock_);
    return i < MAX_POOLS ? cudaSuccess : fake_fail(cudaErrorMemoryAllocation);
}

FAKE cudaError_t cudaMemPoolCreate(cudaMemPool_t *pool, const struct cudaMemPoolProps *props)
{
    if (!pool || !props || props->allocType != cudaMemAllocationTypePinned ||
        props->location.type != cudaMemLocationTypeDevice || props->location.id < 0 ||
        props->location.id >= fake_ndev())
        return fake_fail(cudaErrorInvalidValue);
    return new_pool(pool, props->location.id, (unsigned)props->handleTypes);
}

/* Shareable handles: a pool made exportable as POSIX descriptors exports a
 * memfd holding a magic and its device; an import of such a descriptor (in
 * any process) is a new pool of that device; anything else names no pool. */
#define SHARE_MAGIC 0x706f6f6cu
FAKE cudaError_t cudaMemPoolExportToShareableHandle(void *handle, cudaMemPool_t pool,
                                                    enum cudaMemAllocationHandleType type,
                                                    unsigned int flags)
{
    int i = lock_pool(pool);
    int device = i >= 0 ? pools_[i].device : -1;
    unsigned types = i >= 0 ? pools_[i].handle_types : 0;
    pthread_mutex_unlock(&lock_);
    if (!handle || i < 0 || flags) return fake_fail(cudaErrorInvalidValue);
    if (type != cudaMemHandleTypePosixFileDescriptor) return fake_fail(cudaErrorNotSupported);
    if (!(types & cudaMemHandleTypePosixFileDescriptor)) return fake_fail(cudaErrorInvalidValue);
    int fd = memfd_create("fake-pool", 0);
    unsigned rec[2] = {SHARE_MAGIC, (unsigned)device};
    if (fd < 0 || write(fd, rec, sizeof rec) != (ssize_t)sizeof rec) {
        if (fd >= 0) close(fd);
        return fake_fail(cudaErrorMemoryAllocation);
    }
    memcpy(handle, &fd, sizeof fd);
    return cudaSuccess;
}

FAKE cudaError_t cudaMemPoolImportFromShareableHandle(cudaMemPool_t *pool, void *handle,
                                                      enum cudaMemAllocationHandleType type,
                                                      unsigned int flags)
{
    if (!pool || flags) return fake_fail(cudaErrorInvalidValue);
    if (type != cudaMemHandleTypePosixFileDescriptor) return fake_fail(cudaErrorNotSupported);
    unsigned rec[2] = {0, 0};
    if (pread((int)(intptr_t)handle, rec, sizeof rec, 0) != (ssize_t)sizeof rec || rec[0] != SHARE_MAGIC ||
        (int)rec[1] >= fake_ndev())
        return fake_fail(cudaErrorInvalidValue);
    return new_pool(pool, (int)rec[1], 0);
}

FAKE cudaError_t cudaMemPoolDestroy(cudaMemPool_t pool)
{
    int i = lock_pool(pool);
    bool ok = i >= fake_ndev();
    if (ok)
        pools_[i].used = false;
    pthread_mutex_unlock(&lock_);
    return ok ? cudaSuccess : fake_fail(cudaErrorInvalidValue);
}

FAKE cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr attr, void *value)
{
    int i = lock_pool(pool);
    cudaError_t e = i < 0 || !value ? cudaErrorInvalidValue : cudaSuccess;
    if (e == cudaSuccess) {
        fake_pool *p = &pools_[i];
        switch (attr) {
        case cudaMemPoolReuseFollowEventDependencies:
        case cudaMemPoolReuseAllowOpportunistic:
        case cudaMemPoolReuseAllowInternalDependencies:
            p->reuse[attr - 1] = *(int *)value;
            break;
        case cudaMemPoolAttrReleaseThreshold:
            memcpy(&p->threshold, value, 8);
            break;
        case cudaMemPoolAttrReservedMemHigh:
            p->reserved_high = p->reserved;
            break; /* a reset */
        case cudaMemPoolAttrUsedMemHigh:
            p->used_high = p->in_use;
            break;
        default:
            e = cudaErrorInvalidValue;
        }
    }
    pthread_mutex_unlock(&lock_);
    return e == cudaSuccess ? e : fake_fail(e);
}

FAKE cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr attr, void *value)
{
    int i = lock_pool(pool);
    cudaError_t e = i < 0 || !value ? cudaErrorInvalidValue : cudaSuccess;
    if (e == cudaSuccess) {
        fake_pool *p = &pools_[i];
        switch (attr) {
        case cudaMemPoolReuseFollowEventDependencies:
        case cudaMemPoolReuseAllowOpportunistic:
        case cudaMemPoolReuseAllowInternalDependencies:
            *(int *)value = p->reuse[attr - 1];
            break;
        case cudaMemPoolAttrReleaseThreshold:
            memcpy(value, &p->threshold, 8);
            break;
        case cudaMemPoolAttrReservedMemCurrent:
            memcpy(value, &p->reserved, 8);
            break;
        case cudaMemPoolAttrReservedMemHigh:
            memcpy(value, &p->reserved_high, 8);
            break;
        case cudaMemPoolAttrUsedMemCurrent:
            memcpy(value, &p->in_use, 8);
            break;
        case cudaMemPoolAttrUsedMemHigh:
            memcpy(value, &p->used_high, 8);
            break;
        default:
            e = cudaErrorInvalidValue;
        }
    }
    pthread_mutex_unlock(&lock_);
    return e == cudaSuccess ? e : fake_fail(e);
}

/* allocations come in 2 MiB granules, as the driver's pools reserve them */
static uint64_t granules(size_t n)
{
    return ((uint64_t)n + (2u << 20) - 1) & ~(uint64_t)((2u << 20) - 1);
}

static cudaError_t pool_alloc(void **p, size_t size, int pool)
{
    if (!p)
        return fake_fail(cudaErrorInvalidValue);
    if (size > DEVICE_BYTES)
        return fake_fail(cudaErrorMemoryAllocation);
    cudaError_t e = cudaMalloc(p, size ? size : 1); /* fake_device.c's device memory */
    if (e != cudaSuccess)
        return e;
    pthread_mutex_lock(&lock_);
    int k = 0;
    while (k < MAX_LIVE && live_[k].p)
        k++;
    if (k < MAX_LIVE) {
        live_[k].p = *p, live_[k].n = size, live_[k].pool = pool;
        fake_pool *fp = &pools_[pool];
        fp->in_use += granules(size);
        if (fp->in_use > fp->reserved)
            fp->reserved = fp->in_use;
        if (fp->reserved > fp->reserved_high)
            fp->reserved_high = fp->reserved;
        if (fp->in_use > fp->used_high)
            fp->used_high = fp->in_use;
    }
    pthread_mutex_unlock(&lock_);
    if (k == MAX_LIVE) {
        (void)cudaFree(*p);
        return fake_fail(cudaErrorMemoryAllocation);
    }
    return cudaSuccess;
}

FAKE cudaError_t cudaMallocAsync(void **p, size_t size, cudaStream_t stream)
{
    (void)stream;
    int dev = fake_current_device();
    pthread_mutex_lock(&lock_);
    init_once();
    int pool = current_pool_[dev];
    pthread_mutex_unlock(&lock_);
    return pool_alloc(p, size, pool);
}

FAKE cudaError_t cudaMallocFromPoolAsync(void **p, size_t size, cudaMemPool_t pool,
                                         cudaStream_t stream)
{
    (void)stream;
    int i = lock_pool(pool);
    pthread_mutex_unlock(&lock_);
    return i < 0 ? fake_fail(cudaErrorInvalidValue) : pool_alloc(p, size, i);
}

/* the stream synchronizes at once here: a free releases down to the threshold */
FAKE cudaError_t cudaFreeAsync(void *p, cudaStream_t stream)
{
    (void)stream;
    pthread_mutex_lock(&lock_);
    int k = 0;
    while (k < MAX_LIVE && (!p || live_[k].p != p))
        k++;
    if (k < MAX_LIVE) {
        fake_pool *fp = &pools_[live_[k].pool];
        fp->in_use -= granules(live_[k].n);
        if (fp->reserved > fp->threshold && fp->reserved > fp->in_use)
            fp->reserved = fp->threshold > fp->in_use ? fp->threshold : fp->in_use;
        live_[k].p = NULL;
    }
    pthread_mutex_unlock(&lock_);
    return k < MAX_LIVE ? cudaFree(p) : fake_fail(cudaErrorInvalidValue);
}

FAKE cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t keep)
{
    int i = lock_pool(pool);
    if (i >= 0) {
        fake_pool *fp = &pools_[i];
        uint64_t floor = fp->in_use > keep ? fp->in_use : keep;
        if (fp->reserved > floor)
            fp->reserved = floor;
    }
    pthread_mutex_unlock(&lock_);
    return i >= 0 ? cudaSuccess : fake_fail(cudaErrorInvalidValue);
}

/* ---- device limits ---------------------------------------------------------- */
static size_t limits_[8] = {[cudaLimitStackSize] = 1024,
                            [cudaLimitPrintfFifoSize] = 1 << 20,
                            [cudaLimitMallocHeapSize] = 8 << 20,
                            [cudaLimitDevRuntimeSyncDepth] = 2,
                            [cudaLimitDevRuntimePendingLaunchCount] = 2048,
                            [cudaLimitMaxL2FetchGranularity] = 32,
                            [cudaLimitPersistingL2CacheSize] = 0};

FAKE cudaError_t cudaDeviceSetLimit(enum cudaLimit limit, size_t value)
{
    if ((unsigned)limit > cudaLimitPersistingL2CacheSize)
        return fake_fail(cudaErrorUnsupportedLimit);
    if (limit == cudaLimitMaxL2FetchGranularity && value > 128)
        return fake_fail(cudaErrorInvalidValue);
    pthread_mutex_lock(&lock_);
    limits_[limit] = value;
    pthread_mutex_unlock(&lock_);
    return cudaSuccess;
}

FAKE cudaError_t cudaDeviceGetLimit(size_t *value, enum cudaLimit limit)
{
    if (!value)
        return fake_fail(cudaErrorInvalidValue);
    if ((unsigned)limit > cudaLimitPersistingL2CacheSize)
        return fake_fail(cudaErrorUnsupportedLimit);
    pthread_mutex_lock(&lock_);
    *value = limits_[limit];
    pthread_mutex_unlock(&lock_);
    return cudaSuccess;
}

/* ---- stream priorities and attributes --------------------------------------- */
/* what fake_device.c's stream block holds; the default streams share one */
static fake_stream default_stream_;

static fake_stream *stream_of(cudaStream_t s)
{
    return s && s != cudaStreamLegacy && s != cudaStreamPerThread ? (fake_stream *)(void *)s
                                                                  : &default_stream_;
}

FAKE cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest)
{
    if (least)
        *least = 0;
    if (greatest)
        *greatest = -5;
    return cudaSuccess;
}

FAKE cudaError_t cudaStreamCreateWithPriority(cudaStream_t *s, unsigned int flags, int priority)
{
    if (flags & ~cudaStreamNonBlocking)
        return fake_fail(cudaErrorInvalidValue);
    cudaError_t e = cudaStreamCreateWithFlags(s, flags); /* fake_device.c */
    if (e == cudaSuccess)
        stream_of(*s)->priority = priority > 0 ? 0 : priority < -5 ? -5 : priority; /* clamped */
    return e;
}

FAKE cudaError_t cudaStreamGetPriority(cudaStream_t s, int *priority)
{
    if (!priority)
        return fake_fail(cudaErrorInvalidValue);
    *priority = stream_of(s)->priority;
    return cudaSuccess;
}

FAKE cudaError_t cudaStreamGetFlags(cudaStream_t s, unsigned int *flags)
{
    if (!flags)
        return fake_fail(cudaErrorInvalidValue);
    *flags = stream_of(s)->flags;
    return cudaSuccess;
}

FAKE cudaError_t cudaStreamSetAttribute(cudaStream_t s, cudaStreamAttrID attr,
                                        const cudaStreamAttrValue *value)
{
    if (!value || attr != cudaStreamAttributeAccessPolicyWindow)
        return fake_fail(cudaErrorInvalidValue);
    if (value->accessPolicyWindow.hitRatio < 0 || value->accessPolicyWindow.hitRatio > 1)
        return fake_fail(cudaErrorInvalidValue);
    pthread_mutex_lock(&lock_);
    stream_of(s)->window = value->accessPolicyWindow;
    pthread_mutex_unlock(&lock_);
    return cudaSuccess;
}

FAKE cudaError_t cudaStreamGetAttribute(cudaStream_t s, cudaStreamAttrID attr,
                                        cudaStreamAttrValue *value)
{
    if (!value || attr != cudaStreamAttributeAccessPolicyWindow)
        return fake_fail(cudaErrorInvalidValue);
    memset(value, 0, sizeof *value);
    pthread_mutex_lock(&lock_);
    value->accessPolicyWindow = stream_of(s)->window;
    pthread_mutex_unlock(&lock_);
    return cudaSuccess;
}
