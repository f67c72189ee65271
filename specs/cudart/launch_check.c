/* launch_check.c: `async_check` of apigenCudartLaunch (specs/cudart.yaml).
 * A launch is queued only when the guest is sure the runtime accepts it at
 * the call, checking what the runtime checks synchronously at a launch:
 *   - a function the program registered (the proxy's program address is
 *     known), launched by address (a kernel handle: not checked);
 *   - no launch attributes, not cooperative (their own refusals: unchecked);
 *   - grid and block within the current device's limits (device attributes,
 *     asked once per device: they never change);
 *   - threads per block within the function's maxThreadsPerBlock (which
 *     counts its registers), dynamic shared memory within its
 *     maxDynamicSharedSizeBytes and, with its static shared memory, within
 *     the device's opt-in limit; no cluster the function requires
 *     (cudaFuncGetAttributes, asked once per function and device; a
 *     cudaFuncSetAttribute of the function forgets it: cudart_launch_forget);
 *   - a stream of the current device (the default streams, or a stream whose
 *     device cudaStreamGetDevice told once: a stream's device never changes
 *     and ids are never reused);
 *   - no stream capture this process began that may still be active (a
 *     capture refuses launches of its own: invalidated, implicit, ...).
 * Every other launch goes synchronously and returns the runtime's own answer
 * at the call. A launch the guest vouched for keeps the thread's last error
 * known in the guest (runtime/lasterr.c), so cudaGetLastError after it is
 * answered without a round trip. What the check cannot see: a sticky error
 * of an earlier kernel's fault (natively the launch may return it, or a
 * later call does: "may also return error codes from previous, asynchronous
 * launches"; forwarded it is the next sync call's, which records it as the
 * thread's last error), the device running out of memory for the launch's
 * local memory (as a host running out of memory, the next call's error).
 *
 * cudaMemsetAsync and cudaMemcpyAsync (to the device or within it) are
 * queued whenever the server takes them (the generated checks), and
 * vouched for (`async_vouch`: cudart_memset_vouched, cudart_memcpy_vouched)
 * when the runtime cannot refuse them at the call either: each device
 * address lies, with all its bytes, in one allocation the guest noted
 * (apigen_dev_within), on a default stream or a stream whose device the
 * guest already knows to be the thread's current one (known: these checks
 * cost no round trip; guest.c's cudaStreamIsCapturing asks the same), with
 * no capture possibly open; a zero-byte call is taken at any address.
 * PyTorch zeroes and copies between tensors this way several times per
 * training step, and checks each with cudaGetLastError:
 * the vouched call keeps that answer in the guest. A copy from host memory
 * is vouched only from a non-NULL host address the guest did not note as
 * device memory; cudaMemcpyDefault and copies to the host are not, but for
 * guest.c's copy from the device into the arena (cudart_arena_dst_mark). */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "apigen_cudart.h"
#include "apigen_rt.h"
#include "cuda_runtime_api.h"

extern const apigen_api cudart_api;
const void *cudart_proxy_host(const void *proxy); /* guest.c: NULL if not registered */
bool cudart_capture_maybe_active(void);           /* guest.c */

#define MAX_DEV 64
#define NFUNC 4096   /* (function, server, device) entries kept; power of two */
#define NSTREAM 4096 /* stream -> device entries kept; power of two */

typedef struct dev_limits {
    bool known;
    int grid[3], block[3], smem_optin;
} dev_limits;

typedef struct func_limits {
    uint64_t proxy; /* 0: empty */
    int srv, dev;
    int max_threads, max_dyn_smem;
    size_t static_smem;
    bool cluster; /* it requires a cluster shape: not checked */
} func_limits;

typedef struct stream_dev {
    uint64_t stream; /* 0: empty */
    int dev;
} stream_dev;

static pthread_mutex_t lock_ = PTHREAD_MUTEX_INITIALIZER;
static dev_limits devs_[MAX_DEV];
static func_limits funcs_[NFUNC];
static stream_dev streams_[NSTREAM];

static size_t slot(uint64_t k, size_t cap)
{
    return (size_t)((k * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
}

static bool device_limits(int dev, dev_limits *out)
{
    if (dev < 0 || dev >= MAX_DEV) return false;
    pthread_mutex_lock(&lock_);
    *out = devs_[dev];
    pthread_mutex_unlock(&lock_);
    if (out->known) return true;
    static const enum cudaDeviceAttr attrs[7] = {
        cudaDevAttrMaxGridDimX,  cudaDevAttrMaxGridDimY,  cudaDevAttrMaxGridDimZ,
        cudaDevAttrMaxBlockDimX, cudaDevAttrMaxBlockDimY, cudaDevAttrMaxBlockDimZ,
        cudaDevAttrMaxSharedMemoryPerBlockOptin};
    int v[7];
    for (int i = 0; i < 7; i++)
        if (cudaDeviceGetAttribute(&v[i], attrs[i], dev) != cudaSuccess) return false;
    dev_limits d = {true, {v[0], v[1], v[2]}, {v[3], v[4], v[5]}, v[6]};
    pthread_mutex_lock(&lock_);
    devs_[dev] = d;
    pthread_mutex_unlock(&lock_);
    *out = d;
    return true;
}

static func_limits *func_slot(uint64_t proxy, int srv, int dev)
{
    uint64_t k = proxy ^ ((uint64_t)(unsigned)srv << 48) ^ ((uint64_t)(unsigned)dev << 56);
    for (size_t i = slot(k, NFUNC), n = 0; n < NFUNC; i = (i + 1) & (NFUNC - 1), n++)
        if (!funcs_[i].proxy || (funcs_[i].proxy == proxy && funcs_[i].srv == srv &&
                                 funcs_[i].dev == dev))
            return &funcs_[i];
    return NULL; /* full: asked each time, never queued */
}

static bool function_limits(const void *proxy, int srv, int dev, func_limits *out)
{
    pthread_mutex_lock(&lock_);
    func_limits *f = func_slot((uint64_t)(uintptr_t)proxy, srv, dev);
    bool have = f && f->proxy && f->max_threads > 0; /* 0: forgotten */
    if (have) *out = *f;
    pthread_mutex_unlock(&lock_);
    if (have) return true;
    const void *host = cudart_proxy_host(proxy);
    struct cudaFuncAttributes fa;
    memset(&fa, 0, sizeof fa);
    if (!host || cudaFuncGetAttributes(&fa, host) != cudaSuccess) return false;
    func_limits v = {(uint64_t)(uintptr_t)proxy, srv, dev, fa.maxThreadsPerBlock,
                     fa.maxDynamicSharedSizeBytes, fa.sharedSizeBytes, false};
#ifdef APIGEN_HAS_FIELD_cudaFuncAttributes_requiredClusterWidth
    v.cluster = fa.clusterDimMustBeSet || fa.requiredClusterWidth || fa.requiredClusterHeight ||
                fa.requiredClusterDepth;
#endif
    pthread_mutex_lock(&lock_);
    if ((f = func_slot(v.proxy, srv, dev)) != NULL) *f = v;
    pthread_mutex_unlock(&lock_);
    *out = v;
    return true;
}

/* cudaFuncSetAttribute changed the function's limits (any device, server) */
void cudart_launch_forget(const void *proxy)
{
    pthread_mutex_lock(&lock_);
    for (size_t i = 0; i < NFUNC; i++)
        if (funcs_[i].proxy == (uint64_t)(uintptr_t)proxy) funcs_[i].max_threads = 0;
    pthread_mutex_unlock(&lock_);
}

/* The stream's device as the table knows it (true), else false with *at
 * the slot to keep it in (NSTREAM: the table is full). */
static bool stream_known(uint64_t k, int *dev, size_t *at)
{
    pthread_mutex_lock(&lock_);
    size_t i = slot(k, NSTREAM), n = 0;
    for (; n < NSTREAM && streams_[i].stream && streams_[i].stream != k; n++)
        i = (i + 1) & (NSTREAM - 1);
    bool have = n < NSTREAM && streams_[i].stream == k;
    if (have) *dev = streams_[i].dev;
    pthread_mutex_unlock(&lock_);
    *at = n < NSTREAM ? i : NSTREAM;
    return have;
}

static bool stream_device(cudaStream_t stream, int *dev)
{
    uint64_t k = (uint64_t)(uintptr_t)stream;
    size_t i;
    if (stream_known(k, dev, &i)) return true;
#ifdef APIGEN_HAS_FN_cudaStreamGetDevice /* 12.8 */
    if (cudaStreamGetDevice(stream, dev) != cudaSuccess) return false;
    pthread_mutex_lock(&lock_);
    if (i < NSTREAM) streams_[i] = (stream_dev){k, *dev};
    pthread_mutex_unlock(&lock_);
    return true;
#else
    return false;
#endif
}

/* the current device's default streams, or a stream of it */
static bool stream_ok(cudaStream_t stream, int dev)
{
    if (!stream || stream == cudaStreamLegacy || stream == cudaStreamPerThread) return true;
    int sd = -1;
    return stream_device(stream, &sd) && sd == dev;
}

static bool accepted(const void *func, dim3 grid, dim3 block, size_t shmem, cudaStream_t stream,
                     uint32_t numAttrs, uint32_t flags)
{
    if (!func || numAttrs || (flags & (APIGEN_CUDART_COOPERATIVE | APIGEN_CUDART_SYNC)))
        return false;
    if (!grid.x || !grid.y || !grid.z || !block.x || !block.y || !block.z) return false;
    if (cudart_capture_maybe_active()) return false;
    int dev = -1;
    dev_limits d;
    func_limits f;
    if (cudaGetDevice(&dev) != cudaSuccess || !device_limits(dev, &d)) return false;
    if ((int64_t)grid.x > d.grid[0] || (int64_t)grid.y > d.grid[1] ||
        (int64_t)grid.z > d.grid[2] || (int64_t)block.x > d.block[0] ||
        (int64_t)block.y > d.block[1] || (int64_t)block.z > d.block[2])
        return false;
    if (!function_limits(func, apigen_current_server(&cudart_api), dev, &f) || f.cluster ||
        f.max_threads <= 0)
        return false;
    if ((uint64_t)block.x * block.y * block.z > (uint64_t)f.max_threads) return false;
    if (shmem > (size_t)(f.max_dyn_smem > 0 ? f.max_dyn_smem : 0) ||
        shmem + f.static_smem > (size_t)(d.smem_optin > 0 ? d.smem_optin : 0))
        return false;
    return stream_ok(stream, dev);
}

/* all of [p, p + n) in one device allocation the guest noted for the
 * current server (its device is not asked: on a unified address space the
 * runtime takes another device's memory at the call) */
static bool device_bytes(const void *p, size_t n)
{
    return apigen_dev_within(&cudart_api, apigen_current_server(&cudart_api), (uint64_t)(uintptr_t)p,
                             n);
}

/* a stream of the thread's current device, from what the guest knows
 * already: the thread's device slot (in the program's numbering, as
 * cudaGetDevice answers it from there) and streams the launch checks asked */
bool cudart_stream_known_ok(cudaStream_t stream)
{
    uint64_t dev = 0;
    int sd = -1;
    size_t at;
    if (cudart_capture_maybe_active() || !apigen_tstate_get(&cudart_api, 0, &dev)) return false;
    if (!stream || stream == cudaStreamLegacy || stream == cudaStreamPerThread) return true;
    return stream_known((uint64_t)(uintptr_t)stream, &sd, &at) && (uint64_t)(int64_t)sd == dev;
}

bool cudart_memset_vouched(void *devPtr, int value, size_t count, cudaStream_t stream)
{
    (void)value;
    return cudart_stream_known_ok(stream) && (!count || device_bytes(devPtr, count));
}

/* guest.c's copy from the device into the guest's arena (cudaMallocHost
 * memory over unix:// and shm://): the server's address of the destination,
 * sent with cudaMemcpyDefault, marked by the thread just before it */
static _Thread_local uint64_t arena_dst_;
static _Thread_local size_t arena_count_;

void cudart_arena_dst_mark(const void *peer, size_t count)
{
    arena_dst_ = (uint64_t)(uintptr_t)peer;
    arena_count_ = count;
}

bool cudart_memcpy_vouched(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                           cudaStream_t stream)
{
    if (kind == cudaMemcpyDefault) {
        /* into the arena: pinned memory of this guest the server registered,
         * so only the device side can be refused (PyTorch reads each loss
         * so; natively the copy returns at once) */
        bool arena = count && arena_dst_ == (uint64_t)(uintptr_t)dst && arena_count_ == count;
        return arena && cudart_stream_known_ok(stream) && device_bytes(src, count);
    }
    if (!cudart_stream_known_ok(stream) || (kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyHostToDevice))
        return false;
    if (!count) return true;
    if (!device_bytes(dst, count)) return false;
    if (kind == cudaMemcpyDeviceToDevice) return device_bytes(src, count);
    return src && !apigen_dev_noted(&cudart_api, (uint64_t)(uintptr_t)src);
}

bool cudart_launch_queued(const void *func, cudaKernel_t kernel, dim3 grid, dim3 block,
                          size_t sharedMem, cudaStream_t stream, const void *params,
                          size_t paramsSize, const cudaLaunchAttribute *attrs, uint32_t numAttrs,
                          uint32_t flags)
{
    (void)kernel, (void)params, (void)paramsSize, (void)attrs;
    apigen_hold_deferred(true); /* the stub's own queries report no async error */
    bool ok = accepted(func, grid, block, sharedMem, stream, numAttrs, flags);
    apigen_hold_deferred(false);
    return ok;
}
