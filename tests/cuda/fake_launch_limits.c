/* Kernels for the stand-in device (tests/cuda/fake_device.c and
 * fake_device_limits.c), for tests/cuda/lasterr_ci.c without a GPU: module registration, parameter
 * layouts, function attributes and launches that refuse what the runtime
 * refuses at the call (a configuration beyond the device's or the
 * function's limits, too much dynamic shared memory, a function nobody
 * registered, a stream of another device), setting the thread's last error
 * as the runtime does. Preloaded into the program (native) or into the
 * server (forwarded) alike. Kernels by name: "k_add(int *, int)" takes 1024
 * threads per block, "k_heavy(int *, int)" 256 (its registers). */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define FAKE __attribute__((visibility("default")))

cudaError_t fake_fail(cudaError_t e); /* fake_device.c: and the thread's last error */
int fake_current_device(void);

#define MAX_FUNCS 64
typedef struct fake_fn {
    const void *host;
    int max_threads, max_dyn_smem;
} fake_fn;
static fake_fn fns_[MAX_FUNCS];
static int nfns_;
static pthread_mutex_t lock_ = PTHREAD_MUTEX_INITIALIZER;
static void *handle_token_;

static fake_fn *find(const void *f)
{
    for (int i = 0; i < nfns_; i++)
        if (fns_[i].host == f) return &fns_[i];
    return NULL;
}

FAKE void **__cudaRegisterFatBinary(void *fatCubin)
{
    (void)fatCubin;
    return &handle_token_;
}
FAKE void __cudaRegisterFatBinaryEnd(void **h) { (void)h; }
FAKE void __cudaUnregisterFatBinary(void **h) { (void)h; }
FAKE void __cudaRegisterFunction(void **h, const char *hostFun, char *deviceFun,
                                 const char *deviceName, int thread_limit, uint3 *tid, uint3 *bid,
                                 dim3 *bDim, dim3 *gDim, int *wSize)
{
    (void)h, (void)deviceFun, (void)thread_limit, (void)tid, (void)bid, (void)bDim, (void)gDim,
        (void)wSize;
    pthread_mutex_lock(&lock_);
    if (nfns_ < MAX_FUNCS && deviceName)
        fns_[nfns_++] = (fake_fn){hostFun, strcmp(deviceName, "k_heavy") == 0 ? 256 : 1024,
                                  48 * 1024};
    pthread_mutex_unlock(&lock_);
}

FAKE cudaError_t cudaFuncGetParamInfo(const void *func, size_t index, size_t *off, size_t *size)
{
    if (!find(func)) return fake_fail(cudaErrorInvalidDeviceFunction);
    if (index > 1 || !off || !size) return fake_fail(cudaErrorInvalidValue);
    *off = index ? 8 : 0;
    *size = index ? sizeof(int) : sizeof(int *);
    return cudaSuccess;
}

FAKE cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *a, const void *func)
{
    pthread_mutex_lock(&lock_);
    fake_fn *f = find(func);
    fake_fn v = f ? *f : (fake_fn){0};
    pthread_mutex_unlock(&lock_);
    if (!a) return fake_fail(cudaErrorInvalidValue);
    if (!f) return fake_fail(cudaErrorInvalidDeviceFunction);
    memset(a, 0, sizeof *a);
    a->maxThreadsPerBlock = v.max_threads;
    a->maxDynamicSharedSizeBytes = v.max_dyn_smem;
    a->numRegs = v.max_threads == 256 ? 255 : 32;
    return cudaSuccess;
}

FAKE cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value)
{
    pthread_mutex_lock(&lock_);
    fake_fn *f = find(func);
    bool ok = f && attr == cudaFuncAttributeMaxDynamicSharedMemorySize && value >= 0 &&
              value <= 227 * 1024;
    if (ok) f->max_dyn_smem = value;
    pthread_mutex_unlock(&lock_);
    if (!f) return fake_fail(cudaErrorInvalidDeviceFunction);
    return ok ? cudaSuccess : fake_fail(cudaErrorInvalidValue);
}

/* fake_device_limits.c: the device's launch limits */
extern const int fake_grid_max[3], fake_block_max[3];
#define grid_max_ fake_grid_max
#define block_max_ fake_block_max

static cudaError_t launch(const void *func, dim3 g, dim3 b, void **args, size_t shmem,
                          cudaStream_t stream)
{
    pthread_mutex_lock(&lock_);
    fake_fn *f = find(func);
    fake_fn v = f ? *f : (fake_fn){0};
    pthread_mutex_unlock(&lock_);
    if (!f) return fake_fail(cudaErrorInvalidDeviceFunction);
    if (!g.x || !g.y || !g.z || !b.x || !b.y || !b.z || g.x > (unsigned)grid_max_[0] ||
        g.y > (unsigned)grid_max_[1] || g.z > (unsigned)grid_max_[2] ||
        b.x > (unsigned)block_max_[0] || b.y > (unsigned)block_max_[1] ||
        b.z > (unsigned)block_max_[2] || (uint64_t)b.x * b.y * b.z > 1024)
        return fake_fail(cudaErrorInvalidConfiguration);
    if ((uint64_t)b.x * b.y * b.z > (uint64_t)v.max_threads)
        return fake_fail(cudaErrorLaunchOutOfResources);
    if (shmem > (size_t)v.max_dyn_smem) return fake_fail(cudaErrorInvalidValue);
    if (stream && stream != cudaStreamLegacy && stream != cudaStreamPerThread &&
        *(const int *)(const void *)stream != fake_current_device())
        return fake_fail(cudaErrorInvalidResourceHandle);
    if (!args || !args[0] || !args[1]) return fake_fail(cudaErrorInvalidValue);
    return cudaSuccess; /* the kernel "runs": nothing to do */
}

FAKE cudaError_t cudaLaunchKernel(const void *func, dim3 g, dim3 b, void **args, size_t shmem,
                                  cudaStream_t stream)
{
    return launch(func, g, b, args, shmem, stream);
}
FAKE cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 g, dim3 b, void **args,
                                       size_t shmem, cudaStream_t stream)
{
    return launch(func, g, b, args, shmem, stream);
}
