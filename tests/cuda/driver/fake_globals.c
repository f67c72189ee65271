/* A stand-in for the driver's libraries, modules and their globals,
 * preloaded into apigen-server-cuda (tests/cuda/globals_ci.sh) and into the
 * native run of tests/cuda/driver/globals_ci.c on a machine without a GPU:
 * two devices with a primary context each, libraries and modules of any
 * image holding two globals ("coef", 16 KiB; "result", 4 KiB) at addresses
 * that depend on the context and the library or module, and
 * cuPointerGetAttribute(IS_MANAGED / MEMORY_TYPE) on them. Everything else
 * is the toolkit's stubs library. Never used with a GPU. */
#define _POSIX_C_SOURCE 200809L
#include <cuda.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#define FAKE __attribute__((visibility("default")))
#define NDEV 2
#define NOBJ 16

struct CUctx_st {
    int dev;
};
struct CUlib_st {
    int live;
};
struct CUmod_st {
    int live, ctx;
};

static struct CUctx_st ctxs[NDEV] = {{0}, {1}};
static struct CUlib_st libs[NOBJ];
static struct CUmod_st mods[NOBJ];
static _Thread_local CUcontext cur;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

FAKE CUresult cuInit(unsigned int flags) { return flags ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS; }

FAKE CUresult cuDeviceGetCount(int *n)
{
    if (!n) return CUDA_ERROR_INVALID_VALUE;
    *n = NDEV;
    return CUDA_SUCCESS;
}

FAKE CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
    if (!d || ordinal < 0 || ordinal >= NDEV) return CUDA_ERROR_INVALID_DEVICE;
    *d = ordinal;
    return CUDA_SUCCESS;
}

FAKE CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
    if (!c || d < 0 || d >= NDEV) return CUDA_ERROR_INVALID_VALUE;
    *c = &ctxs[d];
    return CUDA_SUCCESS;
}

FAKE CUresult cuCtxSetCurrent(CUcontext c)
{
    cur = c;
    return CUDA_SUCCESS;
}

FAKE CUresult cuCtxGetCurrent(CUcontext *c)
{
    if (!c) return CUDA_ERROR_INVALID_VALUE;
    *c = cur;
    return CUDA_SUCCESS;
}

FAKE CUresult cuCtxGetDevice(CUdevice *d)
{
    if (!d) return CUDA_ERROR_INVALID_VALUE;
    if (!cur) return CUDA_ERROR_INVALID_CONTEXT;
    *d = cur->dev;
    return CUDA_SUCCESS;
}

/* never a slot used before: a reloaded library's globals are elsewhere,
 * so an answer kept past an unload would show */
static int take(int *live, int *used)
{
    pthread_mutex_lock(&mu);
    int ok = !*live && !*used;
    *live = *used = 1;
    pthread_mutex_unlock(&mu);
    return ok;
}
static int lib_used[NOBJ], mod_used[NOBJ];

FAKE CUresult cuLibraryLoadData(CUlibrary *lib, const void *code, CUjit_option *jo, void **jv,
                                unsigned int nj, CUlibraryOption *lo, void **lv, unsigned int nl)
{
    (void)jo, (void)jv, (void)nj, (void)lo, (void)lv, (void)nl;
    if (!lib || !code) return CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; i < NOBJ; i++)
        if (take(&libs[i].live, &lib_used[i])) {
            *lib = (CUlibrary)&libs[i];
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_OUT_OF_MEMORY;
}

FAKE CUresult cuLibraryUnload(CUlibrary lib)
{
    struct CUlib_st *l = (struct CUlib_st *)lib;
    if (!l || l < libs || l >= libs + NOBJ || !l->live) return CUDA_ERROR_INVALID_HANDLE;
    l->live = 0;
    return CUDA_SUCCESS;
}

FAKE CUresult cuModuleLoadDataEx(CUmodule *mod, const void *image, unsigned int n,
                                 CUjit_option *o, void **v)
{
    (void)n, (void)o, (void)v;
    if (!mod || !image) return CUDA_ERROR_INVALID_VALUE;
    if (!cur) return CUDA_ERROR_INVALID_CONTEXT;
    for (int i = 0; i < NOBJ; i++)
        if (take(&mods[i].live, &mod_used[i])) {
            mods[i].ctx = cur->dev;
            *mod = (CUmodule)&mods[i];
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_OUT_OF_MEMORY;
}

FAKE CUresult cuModuleLoadData(CUmodule *mod, const void *image)
{
    return cuModuleLoadDataEx(mod, image, 0, NULL, NULL);
}

FAKE CUresult cuModuleUnload(CUmodule mod)
{
    struct CUmod_st *m = (struct CUmod_st *)mod;
    if (!m || m < mods || m >= mods + NOBJ || !m->live) return CUDA_ERROR_INVALID_HANDLE;
    m->live = 0;
    return CUDA_SUCCESS;
}

/* object k's global `name` in context c: its address and size */
static CUresult global(int c, int k, const char *name, CUdeviceptr *p, size_t *n)
{
    CUdeviceptr base = 0x7e0000000000ull + (CUdeviceptr)c * 0x100000000ull + (CUdeviceptr)k * 0x1000000ull;
    size_t size;
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    if (!strcmp(name, "coef"))
        size = 16384;
    else if (!strcmp(name, "result"))
        base += 0x10000, size = 4096;
    else
        return CUDA_ERROR_NOT_FOUND;
    if (p) *p = base;
    if (n) *n = size;
    return CUDA_SUCCESS;
}

FAKE CUresult cuLibraryGetGlobal(CUdeviceptr *p, size_t *n, CUlibrary lib, const char *name)
{
    struct CUlib_st *l = (struct CUlib_st *)lib;
    if (!l || l < libs || l >= libs + NOBJ || !l->live) return CUDA_ERROR_INVALID_HANDLE;
    if (!cur) return CUDA_ERROR_INVALID_CONTEXT;
    return global(cur->dev, (int)(l - libs), name, p, n);
}

FAKE CUresult cuModuleGetGlobal_v2(CUdeviceptr *p, size_t *n, CUmodule mod, const char *name)
{
    struct CUmod_st *m = (struct CUmod_st *)mod;
    if (!m || m < mods || m >= mods + NOBJ || !m->live) return CUDA_ERROR_INVALID_HANDLE;
    return global(m->ctx, NOBJ + (int)(m - mods), name, p, n);
}

FAKE CUresult cuPointerGetAttribute(void *data, CUpointer_attribute a, CUdeviceptr p)
{
    if (!data) return CUDA_ERROR_INVALID_VALUE;
    if (p < 0x7e0000000000ull || p >= 0x7f0000000000ull) return CUDA_ERROR_INVALID_VALUE;
    if (a == CU_POINTER_ATTRIBUTE_IS_MANAGED) {
        *(unsigned *)data = 0;
        return CUDA_SUCCESS;
    }
    if (a == CU_POINTER_ATTRIBUTE_MEMORY_TYPE) {
        *(unsigned *)data = CU_MEMORYTYPE_DEVICE;
        return CUDA_SUCCESS;
    }
    return CUDA_ERROR_NOT_SUPPORTED;
}
