/* Kernels and __device__/__constant__ variables for the runtime's stand-in
 * device (fake_device.c, preloaded into the program natively and into
 * apigen-server-cudart forwarded): the registration calls of nvcc's code,
 * the launches, the symbol copies and the parameter layouts, for the kernels
 * of bench/patterns.cu (fake_pattern_kernels.h, run on the CPU at launch,
 * every stream in order at once). Anything else is refused as the runtime
 * refuses an unknown kernel or symbol. Never used with a GPU. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fake_pattern_kernels.h"

#define FAKE __attribute__((visibility("default")))

/* fake_device.c: the thread's last error */
__attribute__((visibility("hidden"))) cudaError_t fake_fail(cudaError_t e);

/* registered functions (host stub -> kernel) and variables (host shadow -> storage) */
#define MAXREG 256
static struct { const void *host; const struct fake_pattern_kernel *k; } funcs_[MAXREG];
static struct { const void *host; const char *name; void *mem; size_t size; } vars_[MAXREG];
static int nfuncs_, nvars_;
static pthread_mutex_t reg_lock_ = PTHREAD_MUTEX_INITIALIZER;
static void *fatbin_handle_[1];

static void *fake_pattern_global(const char *name)
{
    void *m = NULL;
    pthread_mutex_lock(&reg_lock_);
    for (int i = nvars_ - 1; i >= 0 && !m; i--)
        if (strcmp(vars_[i].name, name) == 0) m = vars_[i].mem;
    pthread_mutex_unlock(&reg_lock_);
    return m;
}

FAKE void **__cudaRegisterFatBinary(void *fatCubin)
{
    (void)fatCubin;
    return fatbin_handle_;
}
FAKE void __cudaRegisterFatBinaryEnd(void **h) { (void)h; }
FAKE void __cudaUnregisterFatBinary(void **h) { (void)h; }

FAKE void __cudaRegisterFunction(void **h, const char *hostFun, char *deviceFun, const char *deviceName,
                                 int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize)
{
    (void)h, (void)deviceFun, (void)thread_limit, (void)tid, (void)bid, (void)bDim, (void)gDim, (void)wSize;
    const struct fake_pattern_kernel *k = fake_pattern_kernel_named(deviceName);
    pthread_mutex_lock(&reg_lock_);
    if (k && nfuncs_ < MAXREG) funcs_[nfuncs_].host = hostFun, funcs_[nfuncs_++].k = k;
    pthread_mutex_unlock(&reg_lock_);
}

FAKE void __cudaRegisterVar(void **h, char *hostVar, char *deviceAddress, const char *deviceName, int ext,
                            size_t size, int constant, int global)
{
    (void)h, (void)deviceAddress, (void)ext, (void)constant, (void)global;
    void *m = calloc(1, size ? size : 1);
    pthread_mutex_lock(&reg_lock_);
    if (m && nvars_ < MAXREG) {
        vars_[nvars_].host = hostVar, vars_[nvars_].name = strdup(deviceName);
        vars_[nvars_].mem = m, vars_[nvars_++].size = size;
    } else {
        free(m);
    }
    pthread_mutex_unlock(&reg_lock_);
}

/* a library's kernel handed out at one address (cudaLibraryGetKernel below) */
static struct fake_pattern_kernel one_address_;

static const struct fake_pattern_kernel *kernel_of(const void *f)
{
    const struct fake_pattern_kernel *k = NULL;
    pthread_mutex_lock(&reg_lock_);
    for (int i = 0; i < nfuncs_ && !k; i++)
        if (funcs_[i].host == f) k = funcs_[i].k;
    pthread_mutex_unlock(&reg_lock_);
    /* a kernel handle cast to a function address, as the runtime takes it */
    const size_t nk = sizeof fake_pattern_kernels / sizeof fake_pattern_kernels[0];
    for (size_t i = 0; !k && f && i < nk; i++)
        if (f == (const void *)&fake_pattern_kernels[i]) k = &fake_pattern_kernels[i];
    if (!k && f == (const void *)&one_address_ && one_address_.name) k = &one_address_;
    return k;
}

/* a variable by its host shadow: 0 with its storage and size, -1 none */
static int var_of(const void *symbol, void **mem, size_t *size)
{
    int r = -1;
    pthread_mutex_lock(&reg_lock_);
    for (int i = 0; i < nvars_ && r; i++)
        if (vars_[i].host == symbol) *mem = vars_[i].mem, *size = vars_[i].size, r = 0;
    pthread_mutex_unlock(&reg_lock_);
    return r;
}

static cudaError_t run(const struct fake_pattern_kernel *k, dim3 g, dim3 b, void **args)
{
    if (!k) return fake_fail(cudaErrorInvalidDeviceFunction);
    if ((unsigned long)b.x * b.y * b.z > 1024 || !b.x || !g.x) return fake_fail(cudaErrorInvalidConfiguration);
    /* the first parameter is a pointer the kernel reaches (spin: its time, never 0): NULL
     * is the device's illegal address */
    if (!args || !*(void *const *)args[0]) return fake_fail(cudaErrorIllegalAddress);
    k->run(args, (unsigned long)g.x * g.y * g.z, (unsigned long)b.x * b.y * b.z);
    return cudaSuccess;
}

/* Libraries (cudaLibraryLoadData): the image names no kernels, every table
 * kernel is in it; an image saying "(one address)" hands out its kernels at
 * one address, as the driver does when a library's kernel takes the memory
 * of an unloaded library's (tests/cuda/library_kernel_rt.c). */
struct fake_library { int one_address; };
FAKE cudaError_t cudaLibraryLoadData(cudaLibrary_t *lib, const void *code, enum cudaJitOption *jo,
                                     void **jv, unsigned int nj, enum cudaLibraryOption *lo,
                                     void **lv, unsigned int nl)
{
    (void)jo, (void)jv, (void)nj, (void)lo, (void)lv, (void)nl;
    if (!lib || !code) return fake_fail(cudaErrorInvalidValue);
    struct fake_library *l = calloc(1, sizeof *l);
    if (!l) return fake_fail(cudaErrorMemoryAllocation);
    l->one_address = strstr((const char *)code, "(one address)") != NULL;
    *lib = (cudaLibrary_t)(void *)l;
    return cudaSuccess;
}
FAKE cudaError_t cudaLibraryGetKernel(cudaKernel_t *kernel, cudaLibrary_t lib, const char *name)
{
    const struct fake_pattern_kernel *k = name ? fake_pattern_kernel_named(name) : NULL;
    if (!kernel || !lib) return fake_fail(cudaErrorInvalidValue);
    if (!k) return fake_fail(cudaErrorSymbolNotFound);
    if (((struct fake_library *)(void *)lib)->one_address) {
        one_address_ = *k;
        k = &one_address_;
    }
    *kernel = (cudaKernel_t)(uintptr_t)k;
    return cudaSuccess;
}
FAKE cudaError_t cudaLibraryUnload(cudaLibrary_t lib)
{
    if (!lib) return fake_fail(cudaErrorInvalidValue);
    free((void *)lib);
    return cudaSuccess;
}

/* the kernel handle of a host stub (nvcc 13's launches) is its table entry */
FAKE cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *hostFun)
{
    const struct fake_pattern_kernel *k = kernel_of(hostFun);
    if (!kernel || !k) return cudaErrorInvalidDeviceFunction;
    *kernel = (cudaKernel_t)(uintptr_t)k;
    return cudaSuccess;
}
FAKE cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 g, dim3 b, void **args, size_t shmem,
                                    cudaStream_t s)
{
    (void)shmem, (void)s;
    return run((const struct fake_pattern_kernel *)(uintptr_t)kernel, g, b, args);
}
FAKE cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 g, dim3 b, void **args, size_t shmem,
                                         cudaStream_t s)
{
    return __cudaLaunchKernel(kernel, g, b, args, shmem, s);
}
FAKE cudaError_t cudaLaunchKernel(const void *f, dim3 g, dim3 b, void **args, size_t shmem, cudaStream_t s)
{
    (void)shmem, (void)s;
    return run(kernel_of(f), g, b, args);
}
FAKE cudaError_t cudaLaunchKernel_ptsz(const void *f, dim3 g, dim3 b, void **args, size_t shmem,
                                       cudaStream_t s)
{
    return cudaLaunchKernel(f, g, b, args, shmem, s);
}
FAKE cudaError_t cudaFuncGetParamInfo(const void *f, size_t i, size_t *off, size_t *size)
{
    const struct fake_pattern_kernel *k = kernel_of(f);
    if (!k) return cudaErrorInvalidDeviceFunction;
    if (i >= k->nparams || !off || !size) return cudaErrorInvalidValue;
    *off = k->off[i], *size = k->size[i];
    return cudaSuccess;
}
FAKE cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *a, const void *f)
{
    if (!a) return cudaErrorInvalidValue;
    if (!kernel_of(f)) return cudaErrorInvalidDeviceFunction;
    memset(a, 0, sizeof *a);
    a->maxThreadsPerBlock = 1024;
    a->maxDynamicSharedSizeBytes = 48 * 1024; /* a GPU's default */
    return cudaSuccess;
}
/* no driver under this device: the server launches through the runtime */
FAKE cudaError_t cudaGetDriverEntryPointByVersion(const char *sym, void **f, unsigned int v,
                                                  unsigned long long flags,
                                                  enum cudaDriverEntryPointQueryResult *q)
{
    (void)sym, (void)v, (void)flags;
    if (f) *f = NULL;
    if (q) *q = cudaDriverEntryPointSymbolNotFound;
    return cudaSuccess;
}
FAKE cudaError_t cudaGetDriverEntryPoint(const char *sym, void **f, unsigned long long flags,
                                         enum cudaDriverEntryPointQueryResult *q)
{
    return cudaGetDriverEntryPointByVersion(sym, f, 12000, flags, q);
}

static cudaError_t symbol_copy(void *host, const void *symbol, size_t count, size_t offset, int to)
{
    void *m;
    size_t size;
    if (var_of(symbol, &m, &size)) return fake_fail(cudaErrorInvalidSymbol);
    if (offset > size || count > size - offset) return fake_fail(cudaErrorInvalidValue);
    if (count) {
        if (to) memcpy((char *)m + offset, host, count);
        else memcpy(host, (char *)m + offset, count);
    }
    return cudaSuccess;
}
FAKE cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset,
                                    enum cudaMemcpyKind kind)
{
    (void)kind;
    return symbol_copy((void *)(uintptr_t)src, symbol, count, offset, 1);
}
FAKE cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset,
                                      enum cudaMemcpyKind kind)
{
    (void)kind;
    return symbol_copy(dst, symbol, count, offset, 0);
}
FAKE cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count, size_t offset,
                                         enum cudaMemcpyKind kind, cudaStream_t s)
{
    (void)s;
    return cudaMemcpyToSymbol(symbol, src, count, offset, kind);
}
FAKE cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t count, size_t offset,
                                           enum cudaMemcpyKind kind, cudaStream_t s)
{
    (void)s;
    return cudaMemcpyFromSymbol(dst, symbol, count, offset, kind);
}
FAKE cudaError_t cudaGetSymbolAddress(void **p, const void *symbol)
{
    size_t size;
    if (!p) return cudaErrorInvalidValue;
    return var_of(symbol, p, &size) ? cudaErrorInvalidSymbol : cudaSuccess;
}
FAKE cudaError_t cudaGetSymbolSize(size_t *size, const void *symbol)
{
    void *m;
    if (!size) return cudaErrorInvalidValue;
    return var_of(symbol, &m, size) ? cudaErrorInvalidSymbol : cudaSuccess;
}
/* every stream runs in order at once: no time passes on the device */
FAKE cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
    if (!ms) return cudaErrorInvalidValue;
    if (!a || !b) return cudaErrorInvalidResourceHandle;
    *ms = 0.001f;
    return cudaSuccess;
}
FAKE cudaError_t cudaGetKernel(cudaKernel_t *kernel, const void *entryFuncAddr)
{
    return __cudaGetKernel(kernel, entryFuncAddr);
}
