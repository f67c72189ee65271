/* Hand-written host code of the cudart spec: the server side of the
 * internal calls of apigen_cudart.h, over the real libcudart.so.13.
 *
 * Everything that arrives here was decoded and length-checked by the
 * generated handlers; what they cannot know (a kernel's parameter layout,
 * name offsets inside a buffer, a fat binary's own header) is checked here
 * before the real runtime sees it. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "apigen_rt.h"
#include "cudart_wire.h"

/* entry points of the real library that its headers declare only under
 * CUDA_API_PER_THREAD_DEFAULT_STREAM */
cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                  size_t sharedMem, cudaStream_t stream);
#ifdef APIGEN_HAS_FN_cudaLaunchKernelExC /* 11.8 */
cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config, const void *func,
                                     void **args);
#endif
cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim,
                                             void **args, size_t sharedMem, cudaStream_t stream);
cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t stream, cudaHostFn_t fn, void *userData);
cudaError_t cudaStreamAddCallback_ptsz(cudaStream_t stream, cudaStreamCallback_t callback,
                                       void *userData, unsigned int flags);

/* ---- modules ------------------------------------------------------------------------ */
typedef struct fatbin_wrapper {
    int magic;
    int version;
    const unsigned long long *data;
    void *filename_or_fatbins;
} fatbin_wrapper;

typedef struct fatbin_header {
    uint32_t magic;
    uint16_t version;
    uint16_t header_size;
    uint64_t fat_size;
} fatbin_header;

struct apigenCudartModule_st {
    void **handle;          /* the real runtime's */
    fatbin_wrapper wrapper; /* must outlive the registration */
    void *image;
    char *names;
    void **proxies;
    uint32_t nsyms;
};

static void module_free(struct apigenCudartModule_st *m)
{
    if (!m) return;
    for (uint32_t i = 0; i < m->nsyms; i++) free(m->proxies[i]);
    free(m->proxies);
    free(m->names);
    free(m->image);
    free(m);
}

cudaError_t apigenCudartRegisterModule(const void *image, size_t imageSize, const char *names,
                                       size_t namesSize, const apigenCudartSym *syms,
                                       uint32_t nsyms, apigenCudartModule *module,
                                       uint64_t *proxies)
{
    const fatbin_header *h = image;
    if (!image || !module || !proxies || imageSize < sizeof *h || h->magic != 0xBA55ED50u ||
        (uint64_t)h->header_size + h->fat_size != imageSize || !names || !namesSize ||
        names[namesSize - 1] != 0)
        return cudaErrorInvalidValue;
    for (uint32_t i = 0; i < nsyms; i++)
        if (syms[i].name_off >= namesSize ||
            (syms[i].kind != APIGEN_CUDART_SYM_FUNCTION && syms[i].kind != APIGEN_CUDART_SYM_VAR &&
             syms[i].kind != APIGEN_CUDART_SYM_MANAGED) ||
            (syms[i].kind != APIGEN_CUDART_SYM_FUNCTION && syms[i].size > (1ull << 32)))
            return cudaErrorInvalidValue;
    struct apigenCudartModule_st *m = calloc(1, sizeof *m);
    if (!m) return cudaErrorMemoryAllocation;
    m->image = aligned_alloc(16, (imageSize + 15) & ~(size_t)15);
    m->names = malloc(namesSize);
    m->proxies = calloc(nsyms ? nsyms : 1, sizeof *m->proxies);
    if (!m->image || !m->names || !m->proxies) {
        module_free(m);
        return cudaErrorMemoryAllocation;
    }
    memcpy(m->image, image, imageSize);
    memcpy(m->names, names, namesSize);
    for (m->nsyms = 0; m->nsyms < nsyms; m->nsyms++) {
        const apigenCudartSym *s = &syms[m->nsyms];
        /* a proxy host address per symbol: variables get room for their
         * size, since the runtime may use the host copy */
        size_t room = s->kind == APIGEN_CUDART_SYM_VAR && s->size ? (size_t)s->size : 1;
        if (s->kind == APIGEN_CUDART_SYM_MANAGED) room = sizeof(void *); /* where the runtime puts its address */
        m->proxies[m->nsyms] = calloc(1, room);
        if (!m->proxies[m->nsyms]) {
            module_free(m);
            return cudaErrorMemoryAllocation;
        }
    }
    m->wrapper.magic = 0x466243b1;
    m->wrapper.version = 1;
    m->wrapper.data = m->image;
    m->handle = __cudaRegisterFatBinary(&m->wrapper);
    for (uint32_t i = 0; i < nsyms; i++) {
        const apigenCudartSym *s = &syms[i];
        char *name = m->names + s->name_off;
        if (s->kind == APIGEN_CUDART_SYM_FUNCTION)
            __cudaRegisterFunction(m->handle, (const char *)m->proxies[i], name, name,
                                   s->thread_limit, NULL, NULL, NULL, NULL, NULL);
        else if (s->kind == APIGEN_CUDART_SYM_MANAGED)
            __cudaRegisterManagedVar(m->handle, (void **)m->proxies[i], name, name, s->ext,
                                     (size_t)s->size, s->constant, s->global);
        else
            __cudaRegisterVar(m->handle, (char *)m->proxies[i], name, name, s->ext,
                              (size_t)s->size, s->constant, s->global);
        proxies[i] = (uint64_t)(uintptr_t)m->proxies[i];
    }
    __cudaRegisterFatBinaryEnd(m->handle);
    /* __managed__ variables: the runtime points each proxy at the
     * variable's managed memory once the module is initialized; that
     * address is the answer (the guest mirrors it there) */
    bool managed = false;
    for (uint32_t i = 0; i < nsyms; i++) managed |= syms[i].kind == APIGEN_CUDART_SYM_MANAGED;
    if (managed) {
        (void)__cudaInitModule(m->handle);
        for (uint32_t i = 0; i < nsyms; i++)
            if (syms[i].kind == APIGEN_CUDART_SYM_MANAGED)
                proxies[i] = (uint64_t)(uintptr_t) * (void **)m->proxies[i];
    }
    *module = m;
    return cudaSuccess;
}

static void forget_layouts(void *const *keys, uint32_t n);

cudaError_t apigenCudartUnregisterModule(apigenCudartModule module)
{
    if (!module) return cudaErrorInvalidValue;
    __cudaUnregisterFatBinary(module->handle);
    /* the proxies are freed below and their addresses may come back for
     * another module's kernels: their cached layouts must go with them */
    forget_layouts(module->proxies, module->nsyms);
    module_free(module);
    return cudaSuccess;
}

/* ---- parameter layouts ----------------------------------------------------------------- */
#define FAST_DEVICES 16 /* devices whose kernel handles a layout keeps */

typedef struct layout {
    const void *key;
    bool kernel; /* key is a kernel handle (the driver's: reused after its library's unload) */
    uint32_t n;
    uint64_t size;
    uint64_t *offsets, *sizes;
    /* the kernel's driver handle per device for launch_fast: NULL not
     * looked up yet, NO_FAST_FN none to be had */
    _Atomic(cudaFunction_t) fn[FAST_DEVICES];
    struct layout *next;
} layout;

static pthread_mutex_t layouts_lock_ = PTHREAD_MUTEX_INITIALIZER;
static layout *layouts_;
/* The layouts a server thread launched with, by kernel: a program that
 * cycles through many kernels (a training step launches dozens) finds each
 * without the lock and the walk of every kernel's layout. forget_layouts
 * bumps the generation before it frees any, so no thread uses one it freed. */
#define LAYOUT_SLOTS 256 /* a power of two */
static atomic_uint layouts_gen_;
static _Thread_local struct {
    const void *key;
    const layout *l;
    unsigned gen;
} layout_slot_[LAYOUT_SLOTS];

static unsigned layout_slot_of(const void *f)
{
    uint64_t x = (uint64_t)(uintptr_t)f * 0x9E3779B97F4A7C15ull; /* Fibonacci hashing */
    return (unsigned)(x >> 56) & (LAYOUT_SLOTS - 1);
}

/* A driver function by name, of the ABI of driver version `version` where
 * the runtime can ask for one (NULL: the driver has none). */
static void *driver_entry(const char *sym, unsigned version)
{
    void *f = NULL;
#ifdef APIGEN_HAS_FN_cudaGetDriverEntryPointByVersion /* 12.5 */
    enum cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion(sym, &f, version, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
        f = NULL;
#elif defined(APIGEN_HAS_PARAM_cudaGetDriverEntryPoint_driverStatus) /* 12.0 */
    (void)version;
    enum cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPoint(sym, &f, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
        f = NULL;
#else
    (void)version;
    if (cudaGetDriverEntryPoint(sym, &f, cudaEnableDefault) != cudaSuccess) f = NULL;
#endif
    return f;
}

#ifdef APIGEN_HAS_FN_cudaFuncGetParamInfo /* 12.4 */
#define param_info cudaFuncGetParamInfo
#else
/* Runtimes before 12.4 have no cudaFuncGetParamInfo: the driver's
 * cuFuncGetParamInfo (driver 12.4+, which any CUDA 13 host has; a CUDA 11.x
 * runtime runs on it) on the kernel's CUfunction (cudaGetFuncBySymbol), found
 * through cudaGetDriverEntryPoint. An older driver: launches are refused
 * with cudaErrorNotSupported and the server says why once. */
typedef int (*param_info_fn)(cudaFunction_t f, size_t index, size_t *offset, size_t *size);
static param_info_fn param_info_fn_;
static pthread_once_t param_info_once_ = PTHREAD_ONCE_INIT;

static void param_info_init(void)
{
    void *f = driver_entry("cuFuncGetParamInfo", 12040);
    (void)cudaGetLastError();
    param_info_fn_ = (param_info_fn)f;
    if (!f)
        fprintf(stderr, "apigen-server-cudart: the driver has no cuFuncGetParamInfo (driver 12.4+): "
                        "kernel launches of this CUDA %d runtime are not supported\n",
                CUDART_VERSION);
}

static cudaError_t param_info(const void *f, size_t i, size_t *off, size_t *sz)
{
    cudaFunction_t cf = NULL;
    pthread_once(&param_info_once_, param_info_init);
    if (!param_info_fn_) return cudaErrorNotSupported;
    cudaError_t e = cudaGetFuncBySymbol(&cf, f);
    if (e != cudaSuccess) return e;
    int r = param_info_fn_(cf, i, off, sz);
    return r == 0 ? cudaSuccess : r == 1 /* CUDA_ERROR_INVALID_VALUE */ ? cudaErrorInvalidValue
                                                                       : cudaErrorUnknown;
}
#endif

static cudaError_t query_layout(const void *f, uint32_t *n, uint64_t *offsets, uint64_t *sizes)
{
    uint32_t i;
    for (i = 0; i < APIGEN_CUDART_MAX_PARAMS; i++) {
        size_t off = 0, sz = 0;
        cudaError_t e = param_info(f, i, &off, &sz);
        if (e == cudaErrorInvalidValue && i > 0) {
            (void)cudaGetLastError(); /* the probe past the last parameter is not an error */
            break;
        }
        if (e == cudaErrorInvalidValue && i == 0) {
            /* no parameters, or not a kernel: tell them apart */
            struct cudaFuncAttributes fa;
            cudaError_t e2 = cudaFuncGetAttributes(&fa, f);
            if (e2 != cudaSuccess) return e2;
            (void)cudaGetLastError();
            break;
        }
        if (e != cudaSuccess) return e;
        offsets[i] = off;
        sizes[i] = sz;
    }
    *n = i;
    return cudaSuccess;
}

/* keys NULL: every kernel handle's layout (a library unloaded, the device
 * reset: the driver gives later kernels those addresses) */
static void forget_layouts(void *const *keys, uint32_t n)
{
    pthread_mutex_lock(&layouts_lock_);
    atomic_fetch_add(&layouts_gen_, 1);
    for (layout **pp = &layouts_; *pp;) {
        layout *l = *pp;
        bool hit = !keys && l->kernel;
        for (uint32_t i = 0; keys && i < n && !hit; i++)
            hit = l->key == keys[i];
        if (hit) {
            *pp = l->next;
            free(l->offsets);
            free(l->sizes);
            free(l);
        } else {
            pp = &l->next;
        }
    }
    pthread_mutex_unlock(&layouts_lock_);
}

/* The probe runs on a thread of its own: the runtime's last error is per
 * host thread, and probing past the last parameter sets one, which would
 * clear (with cudaGetLastError) an error the client has not read yet. */
typedef struct probe {
    const void *f;
    int dev;
    uint32_t n;
    uint64_t *offsets, *sizes;
    cudaError_t e;
} probe;

static void *probe_main(void *arg)
{
    probe *p = arg;
    p->e = cudaSetDevice(p->dev);
    if (p->e == cudaSuccess) p->e = query_layout(p->f, &p->n, p->offsets, p->sizes);
    return NULL;
}

static cudaError_t query_layout_apart(const void *f, uint32_t *n, uint64_t *offsets,
                                      uint64_t *sizes)
{
    probe p = {f, 0, 0, offsets, sizes, cudaSuccess};
    pthread_t t;
    if (cudaGetDevice(&p.dev) != cudaSuccess || pthread_create(&t, NULL, probe_main, &p) != 0)
        return query_layout(f, n, offsets, sizes); /* in this thread, as before */
    (void)pthread_join(t, NULL);
    if (p.e != cudaSuccess) {
        /* not a kernel: this thread's last error is what a launch sets */
        struct cudaFuncAttributes fa;
        (void)cudaFuncGetAttributes(&fa, f);
        return p.e;
    }
    *n = p.n;
    return cudaSuccess;
}

/* The server's own copy, for checking launches (a module's proxies are
 * forgotten when it is unregistered, since their addresses can be reused). */
static cudaError_t server_layout(const void *f, bool kernel, const layout **out)
{
    unsigned gen = atomic_load(&layouts_gen_), slot = layout_slot_of(f);
    if (layout_slot_[slot].key == f && layout_slot_[slot].gen == gen && layout_slot_[slot].l) {
        *out = layout_slot_[slot].l;
        return cudaSuccess;
    }
    pthread_mutex_lock(&layouts_lock_);
    for (layout *l = layouts_; l; l = l->next)
        if (l->key == f) {
            pthread_mutex_unlock(&layouts_lock_);
            layout_slot_[slot].key = f;
            layout_slot_[slot].l = l;
            layout_slot_[slot].gen = gen;
            *out = l;
            return cudaSuccess;
        }
    pthread_mutex_unlock(&layouts_lock_);
    layout *l = calloc(1, sizeof *l);
    uint64_t *o = calloc(APIGEN_CUDART_MAX_PARAMS, sizeof *o);
    uint64_t *s = calloc(APIGEN_CUDART_MAX_PARAMS, sizeof *s);
    if (!l || !o || !s) {
        free(l), free(o), free(s);
        return cudaErrorMemoryAllocation;
    }
    cudaError_t e = query_layout_apart(f, &l->n, o, s);
    if (e != cudaSuccess) {
        free(l), free(o), free(s);
        return e;
    }
    for (uint32_t i = 0; i < l->n; i++)
        if (o[i] + s[i] > l->size) l->size = o[i] + s[i];
    l->key = f;
    l->kernel = kernel;
    l->offsets = o;
    l->sizes = s;
    pthread_mutex_lock(&layouts_lock_);
    l->next = layouts_;
    layouts_ = l;
    pthread_mutex_unlock(&layouts_lock_);
    *out = l;
    return cudaSuccess;
}

cudaError_t apigenCudartParamLayout(const void *func, cudaKernel_t kernel, uint32_t *nparams,
                                    uint64_t *offsets, uint64_t *sizes)
{
    const void *f = func ? func : (const void *)kernel;
    const layout *l;
    if (!f || !nparams || !offsets || !sizes) return cudaErrorInvalidDeviceFunction;
    cudaError_t e = server_layout(f, !func, &l);
    if (e != cudaSuccess) return e;
    *nparams = l->n;
    memcpy(offsets, l->offsets, l->n * sizeof *offsets);
    memcpy(sizes, l->sizes, l->n * sizeof *sizes);
    return cudaSuccess;
}

#ifdef APIGEN_HAS_FN_cudaLibraryUnload /* 12.0 */
cudaError_t cudart_host_library_unload(apigen_call_ctx *cx, cudaLibrary_t library)
{
    (void)cx;
    cudaError_t e = cudaLibraryUnload(library);
    forget_layouts(NULL, 0); /* whatever the answer */
    return e;
}
#endif

void cudart_host_kernels_gone(void)
{
    forget_layouts(NULL, 0);
}

/* ---- the plain launch, straight to the driver ---------------------------------------
 * Forwarding adds the server's per-launch work to a launch that costs ~3 us
 * natively on the GPU machine, and cudaLaunchKernel itself spends ~0.3 us
 * above the driver's cuLaunchKernel under it (H100, 2026-11-21 20:20: an
 * empty kernel 325-330 k/s through the runtime, 357-365 k/s through the
 * driver). A launch of a registered kernel with no attributes and not
 * cooperative goes to cuLaunchKernel with the kernel's handle on the current
 * device (cudaGetFuncBySymbol, kept in its layout): the same launch on the
 * same stream (the runtime's stream handles are the driver's; 0 is the
 * legacy stream, the per-thread one under _ptsz). Whatever fails there, or
 * cannot be had, goes through cudaLaunchKernel after all, which gives the
 * runtime's own error and last-error state: a launch the driver refused did
 * not run. APIGEN_CUDART_DRIVER_LAUNCH=0 turns it off. */
typedef int (*cu_launch_fn)(cudaFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                            unsigned by, unsigned bz, unsigned shmem, cudaStream_t stream,
                            void **params, void **extra);
#define NO_FAST_FN ((cudaFunction_t)(uintptr_t)1)
static cu_launch_fn cu_launch_;
static bool one_device_; /* the only device is 0: no cudaGetDevice per launch */
static pthread_once_t cu_launch_once_ = PTHREAD_ONCE_INIT;

static void cu_launch_init(void)
{
    /* no failure is left behind: the lookup fails only on a driver
     * without cuLaunchKernel */
    void *f = driver_entry("cuLaunchKernel", 12000);
    const char *off = getenv("APIGEN_CUDART_DRIVER_LAUNCH");
    cu_launch_ = off && strcmp(off, "0") == 0 ? NULL : (cu_launch_fn)f;
    int n = 0;
    one_device_ = cudaGetDeviceCount(&n) == cudaSuccess && n == 1;
}

/* true: launched (or failed for good: *e); false: take the runtime's path */
static bool launch_fast(layout *l, const void *f, dim3 grid, dim3 block, size_t shmem,
                        cudaStream_t stream, void **argv, bool ptsz, cudaError_t *e)
{
    int dev = 0;
    pthread_once(&cu_launch_once_, cu_launch_init);
    if (!cu_launch_ || shmem > UINT32_MAX ||
        (!one_device_ && (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= FAST_DEVICES)))
        return false;
    cudaFunction_t fn = atomic_load(&l->fn[dev]);
    if (!fn) {
        if (cudaGetFuncBySymbol(&fn, f) != cudaSuccess || !fn) fn = NO_FAST_FN;
        atomic_store(&l->fn[dev], fn);
    }
    if (fn == NO_FAST_FN) return false;
    if (ptsz && !stream) stream = cudaStreamPerThread;
    int r = cu_launch_(fn, grid.x, grid.y, grid.z, block.x, block.y, block.z, (unsigned)shmem,
                       stream, argv, NULL);
    if (r != 0) return false; /* e.g. a capture already invalidated: the runtime's error */
    *e = cudaSuccess;
    return true;
}

/* A launch this code refuses before the runtime sees it: the thread's last
 * error must still say so (the runtime's own state does not). */
static cudaError_t refused(apigen_call_ctx *cx, cudaError_t e)
{
    apigen_result_own(cx);
    return e;
}

cudaError_t cudart_host_launch(apigen_call_ctx *cx, const void *func, cudaKernel_t kernel,
                               dim3 grid, dim3 block, size_t sharedMem, cudaStream_t stream,
                               const void *params, size_t paramsSize,
                               const cudaLaunchAttribute *attrs, uint32_t numAttrs,
                               uint32_t flags)
{
    const void *f = func ? func : (const void *)kernel;
    const layout *l;
    void *argv_small[64], **argv = argv_small;
    if (!f) return refused(cx, cudaErrorInvalidDeviceFunction);
    cudaError_t e = server_layout(f, !func, &l); /* asked on a thread apart: not this one's error */
    if (e != cudaSuccess) return refused(cx, e);
    if (paramsSize != l->size || (l->size && !params)) return refused(cx, cudaErrorInvalidValue);
    if (l->n > 64 && !(argv = calloc(l->n, sizeof *argv)))
        return refused(cx, cudaErrorMemoryAllocation);
    for (uint32_t i = 0; i < l->n; i++) argv[i] = (char *)(uintptr_t)params + l->offsets[i];
    bool ptsz = flags & APIGEN_CUDART_PTSZ;
    if (numAttrs) {
#ifndef APIGEN_HAS_FN_cudaLaunchKernelExC /* before 11.8 (the guest sends none) */
        e = cudaErrorNotSupported;
#else
        cudaLaunchConfig_t cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.gridDim = grid;
        cfg.blockDim = block;
        cfg.dynamicSmemBytes = sharedMem;
        cfg.stream = stream;
        cfg.attrs = (cudaLaunchAttribute *)(uintptr_t)attrs;
        cfg.numAttrs = numAttrs;
        e = ptsz ? cudaLaunchKernelExC_ptsz(&cfg, f, argv) : cudaLaunchKernelExC(&cfg, f, argv);
#endif
    } else if (flags & APIGEN_CUDART_COOPERATIVE) {
        e = ptsz ? cudaLaunchCooperativeKernel_ptsz(f, grid, block, argv, sharedMem, stream)
                 : cudaLaunchCooperativeKernel(f, grid, block, argv, sharedMem, stream);
#if CUDART_VERSION >= 12000 /* kernel handles from 12.0's nvcc, though its headers lack cudaKernel_t (guest.c); 11.x: none */
    } else if (!func) {
        e = ptsz ? __cudaLaunchKernel_ptsz(kernel, grid, block, argv, sharedMem, stream)
                 : __cudaLaunchKernel(kernel, grid, block, argv, sharedMem, stream);
#endif
    } else if (!launch_fast((layout *)l, f, grid, block, sharedMem, stream, argv, ptsz, &e)) {
        e = ptsz ? cudaLaunchKernel_ptsz(f, grid, block, argv, sharedMem, stream)
                 : cudaLaunchKernel(f, grid, block, argv, sharedMem, stream);
    }
    if (argv != argv_small) free(argv);
    return e;
}

/* ---- host functions ------------------------------------------------------------------- */
/* One record per enqueued host function, until the guest has run it. The
 * real stream's host function sends the callback frame and then blocks the
 * stream until apigenCudartHostFnDone(id) arrives from the same session (or
 * the session's callback channel is gone). */
typedef struct hostfn_rec {
    struct hostfn_rec *next;
    const void *session;
    uint64_t id;
    apigenCudartHostFnCb fn; /* the generated trampoline */
    void *bound;
    uint64_t runs, dones;     /* started / acknowledged by the guest */
    bool persistent;          /* captured into a graph: runs at every launch, never freed */
} hostfn_rec;

static pthread_mutex_t recs_lock_ = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t recs_cv_ = PTHREAD_COND_INITIALIZER;
static hostfn_rec *recs_;

static void run_rec(hostfn_rec *r, cudaError_t status)
{
    pthread_mutex_lock(&recs_lock_);
    uint64_t run = ++r->runs;
    pthread_mutex_unlock(&recs_lock_);
    if (apigen_cb_alive(r->bound)) {
        r->fn(r->id, (int32_t)status, r->bound);
        pthread_mutex_lock(&recs_lock_);
        (void)apigen_cb_wait_done(&recs_lock_, &recs_cv_, &r->dones, run, r->bound);
    } else {
        pthread_mutex_lock(&recs_lock_);
    }
    if (r->persistent) { /* the graph may be launched again */
        pthread_mutex_unlock(&recs_lock_);
        return;
    }
    for (hostfn_rec **pp = &recs_; *pp; pp = &(*pp)->next)
        if (*pp == r) {
            *pp = r->next;
            break;
        }
    pthread_mutex_unlock(&recs_lock_);
    free(r);
}

static void CUDART_CB on_host_fn(void *user)
{
    run_rec(user, cudaSuccess);
}

static void CUDART_CB on_callback(cudaStream_t stream, cudaError_t status, void *user)
{
    (void)stream;
    run_rec(user, status);
}

/* The arena (the guest's pinned memory) is registered with the runtime when
 * a call first uses it: a query about it must find it registered. */
cudaError_t cudart_host_pointer_attributes(apigen_call_ctx *cx,
                                           struct cudaPointerAttributes *attributes,
                                           const void *ptr)
{
    (void)apigen_arena_holds(cx, (uint64_t)(uintptr_t)ptr, 1);
    return cudaPointerGetAttributes(attributes, ptr);
}

/* Mapped host memory: only the client's arena (registered mapped when a
 * call first uses it, which apigen_arena_holds makes happen), never another
 * address of this process. */
cudaError_t cudart_host_get_device_pointer(apigen_call_ctx *cx, void **pDevice, void *pHost,
                                           unsigned int flags)
{
    if (!apigen_arena_holds(cx, (uint64_t)(uintptr_t)pHost, 1)) {
        apigen_log("cudaHostGetDevicePointer: %p is not in the client's shared-memory arena: "
                   "refused (cudaErrorInvalidValue)", pHost);
        apigen_result_own(cx);
        return cudaErrorInvalidValue;
    }
    return cudaHostGetDevicePointer(pDevice, pHost, flags);
}

cudaError_t cudart_host_note_error(apigen_call_ctx *cx, cudaError_t error)
{
    apigen_set_last_error(cx, (int64_t)error);
    return cudaSuccess;
}

cudaError_t cudart_host_enqueue_host_fn(apigen_call_ctx *cx, cudaStream_t stream,
                                        apigenCudartHostFnCb fn, void *user, uint64_t id,
                                        uint32_t isCallback, uint32_t flags)
{
    if (!fn || !user) return cudaErrorInvalidValue;
    hostfn_rec *r = calloc(1, sizeof *r);
    if (!r) {
        /* never skipped in silence: the error of the stream's host function,
         * reported at the thread's next call and as its last error */
        apigen_log("cudart: no memory for a host function's record; the call fails");
        apigen_result_own(cx);
        return cudaErrorMemoryAllocation;
    }
    r->session = cx->session;
    r->id = id;
    r->fn = fn;
    r->bound = user;
    r->persistent = flags & APIGEN_CUDART_PERSIST;
    pthread_mutex_lock(&recs_lock_);
    r->next = recs_;
    recs_ = r;
    pthread_mutex_unlock(&recs_lock_);
    bool ptsz = flags & APIGEN_CUDART_PTSZ;
    cudaError_t e;
    if (isCallback)
        e = ptsz ? cudaStreamAddCallback_ptsz(stream, on_callback, r, 0)
                 : cudaStreamAddCallback(stream, on_callback, r, 0);
    else
        e = ptsz ? cudaLaunchHostFunc_ptsz(stream, on_host_fn, r)
                 : cudaLaunchHostFunc(stream, on_host_fn, r);
    if (e != cudaSuccess) {
        pthread_mutex_lock(&recs_lock_);
        for (hostfn_rec **pp = &recs_; *pp; pp = &(*pp)->next)
            if (*pp == r) {
                *pp = r->next;
                break;
            }
        pthread_mutex_unlock(&recs_lock_);
        free(r);
    }
    return e;
}

cudaError_t cudart_host_host_fn_done(apigen_call_ctx *cx, uint64_t id)
{
    cudaError_t e = cudaErrorInvalidValue;
    pthread_mutex_lock(&recs_lock_);
    for (hostfn_rec *r = recs_; r; r = r->next)
        if (r->session == cx->session && r->id == id && r->dones < r->runs) {
            r->dones++;
            e = cudaSuccess;
            break;
        }
    pthread_cond_broadcast(&recs_cv_);
    pthread_mutex_unlock(&recs_lock_);
    return e;
}

/* A host function of the guest outside a stream (a graph's host node,
 * host_nodes.c): the same callback frame and wait for apigenCudartHostFnDone. */
void cudart_host_run_host_fn(const void *session, uint64_t id, apigenCudartHostFnCb fn,
                             void *bound)
{
    hostfn_rec *r = calloc(1, sizeof *r);
    if (!r) return;
    r->session = session;
    r->id = id;
    r->fn = fn;
    r->bound = bound;
    pthread_mutex_lock(&recs_lock_);
    r->next = recs_;
    recs_ = r;
    pthread_mutex_unlock(&recs_lock_);
    run_rec(r, cudaSuccess);
}

/* ---- device ranges (types.device) that the spec's `creates:` cannot size ---------------- */
static const apigen_handle_type *ht(const char *name)
{
    for (unsigned i = 0; i < apigen_api_cudart.nhandle_types; i++)
        if (strcmp(apigen_api_cudart.handle_types[i]->name, name) == 0)
            return apigen_api_cudart.handle_types[i];
    return NULL;
}

/* The driver's own extent of the allocation holding p (IPC and pool imports,
 * mapped external or graphics memory), through its entry point table. */
typedef int (*get_range_fn)(unsigned long long *base, size_t *size, unsigned long long dptr);

static get_range_fn range_fn_;
static pthread_once_t range_once_ = PTHREAD_ONCE_INIT;

static void range_fn_init(void)
{
    void *f = NULL;
#ifdef APIGEN_HAS_PARAM_cudaGetDriverEntryPoint_driverStatus
    enum cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPoint("cuMemGetAddressRange", &f, cudaEnableDefault, &q) == cudaSuccess &&
        q == cudaDriverEntryPointSuccess)
#else /* 11.x: no query result */
    if (cudaGetDriverEntryPoint("cuMemGetAddressRange", &f, cudaEnableDefault) == cudaSuccess && f)
#endif
        range_fn_ = (get_range_fn)f;
    else
        (void)cudaGetLastError();
}

static size_t driver_extent(const void *p)
{
    unsigned long long base = 0;
    size_t size = 0;
    pthread_once(&range_once_, range_fn_init);
    if (!range_fn_ || range_fn_(&base, &size, (unsigned long long)(uintptr_t)p) != 0) return 1;
    return (size_t)(base + size - (unsigned long long)(uintptr_t)p);
}

/* After a call that handed out p: [p, p + bytes) is this client's. */
static cudaError_t add_range(apigen_call_ctx *cx, cudaError_t e, const void *p, size_t bytes)
{
    if (e == cudaSuccess && p && !apigen_dev_add(cx, (uint64_t)(uintptr_t)p, bytes))
        return cudaErrorMemoryAllocation; /* rejected; the allocation was given back */
    return e;
}

cudaError_t cudart_host_malloc_pitch(apigen_call_ctx *cx, void **devPtr, size_t *pitch,
                                     size_t width, size_t height)
{
    cudaError_t e = cudaMallocPitch(devPtr, pitch, width, height);
    return devPtr && pitch ? add_range(cx, e, *devPtr, *pitch * height) : e;
}

cudaError_t cudart_host_malloc3d(apigen_call_ctx *cx, struct cudaPitchedPtr *p,
                                 struct cudaExtent extent)
{
    cudaError_t e = cudaMalloc3D(p, extent);
    return p ? add_range(cx, e, p->ptr, p->pitch * extent.height * (extent.depth ? extent.depth : 1))
             : e;
}

/* A module's __managed__ variables answer their managed addresses
 * (apigenCudartRegisterModule): that memory is the client's. */
cudaError_t cudart_host_register_module(apigen_call_ctx *cx, const void *image, size_t imageSize,
                                        const char *names, size_t namesSize,
                                        const apigenCudartSym *syms, uint32_t nsyms,
                                        apigenCudartModule *module, uint64_t *proxies)
{
    cudaError_t e = apigenCudartRegisterModule(image, imageSize, names, namesSize, syms, nsyms,
                                               module, proxies);
    for (uint32_t i = 0; e == cudaSuccess && i < nsyms; i++)
        if (syms[i].kind == APIGEN_CUDART_SYM_MANAGED && proxies[i])
            e = add_range(cx, e, (const void *)(uintptr_t)proxies[i],
                          syms[i].size ? (size_t)syms[i].size : 1);
    return e;
}

cudaError_t cudart_host_get_symbol_address(apigen_call_ctx *cx, void **devPtr, const void *symbol)
{
    size_t size = 0;
    cudaError_t e = cudaGetSymbolAddress(devPtr, symbol);
    if (e != cudaSuccess || !devPtr) return e;
    if (cudaGetSymbolSize(&size, symbol) != cudaSuccess) (void)cudaGetLastError();
    return add_range(cx, e, *devPtr, size);
}

#ifdef APIGEN_HAS_FN_cudaLibraryGetGlobal /* libraries */
cudaError_t cudart_host_library_get_global(apigen_call_ctx *cx, void **dptr, size_t *bytes,
                                           cudaLibrary_t library, const char *name)
{
    cudaError_t e = cudaLibraryGetGlobal(dptr, bytes, library, name);
    return dptr ? add_range(cx, e, *dptr, bytes ? *bytes : driver_extent(*dptr)) : e;
}
#endif

#ifdef APIGEN_HAS_FN_cudaLibraryGetManaged
/* A library's __managed__ variable: its memory is the client's (the guest mirrors it). */
cudaError_t cudart_host_library_get_managed(apigen_call_ctx *cx, void **dptr, size_t *bytes,
                                            cudaLibrary_t library, const char *name)
{
    cudaError_t e = cudaLibraryGetManaged(dptr, bytes, library, name);
    return dptr ? add_range(cx, e, *dptr, bytes ? *bytes : driver_extent(*dptr)) : e;
}
#endif

cudaError_t cudart_host_ipc_open(apigen_call_ctx *cx, void **devPtr, cudaIpcMemHandle_t handle,
                                 unsigned int flags)
{
    cudaError_t e = cudaIpcOpenMemHandle(devPtr, handle, flags);
    return devPtr && e == cudaSuccess ? add_range(cx, e, *devPtr, driver_extent(*devPtr)) : e;
}

cudaError_t cudart_host_pool_import(apigen_call_ctx *cx, void **ptr, cudaMemPool_t memPool,
                                    struct cudaMemPoolPtrExportData *exportData)
{
    cudaError_t e = cudaMemPoolImportPointer(ptr, memPool, exportData);
    return ptr && e == cudaSuccess ? add_range(cx, e, *ptr, driver_extent(*ptr)) : e;
}

cudaError_t cudart_host_ext_mapped_buffer(apigen_call_ctx *cx, void **devPtr,
                                          cudaExternalMemory_t extMem,
                                          const struct cudaExternalMemoryBufferDesc *bufferDesc)
{
    cudaError_t e = cudaExternalMemoryGetMappedBuffer(devPtr, extMem, bufferDesc);
    return devPtr && bufferDesc ? add_range(cx, e, *devPtr, bufferDesc->size) : e;
}

cudaError_t cudart_host_graphics_mapped_pointer(apigen_call_ctx *cx, void **devPtr, size_t *size,
                                                cudaGraphicsResource_t resource)
{
    cudaError_t e = cudaGraphicsResourceGetMappedPointer(devPtr, size, resource);
    return devPtr && size ? add_range(cx, e, *devPtr, *size) : e;
}

/* A device address inside a struct: NULL, or this client's memory. */
static bool dev_ok(apigen_call_ctx *cx, const void *p, size_t extent, bool has_extent)
{
    return !p || apigen_dev_owned(cx->session, (uint64_t)(uintptr_t)p, extent, has_extent);
}

static bool pitched_ok(apigen_call_ctx *cx, struct cudaPitchedPtr p, struct cudaExtent x)
{
    size_t rows = x.height * (x.depth ? x.depth : 1);
    return dev_ok(cx, p.ptr, rows ? p.pitch * (rows - 1) + x.width : 0, true);
}

cudaError_t cudart_host_memset3d(apigen_call_ctx *cx, struct cudaPitchedPtr p, int value,
                                 struct cudaExtent extent)
{
    if (!pitched_ok(cx, p, extent)) return cudaErrorInvalidValue;
    return cudaMemset3D(p, value, extent);
}

cudaError_t cudaMemset3D_ptds(struct cudaPitchedPtr p, int value, struct cudaExtent extent);
cudaError_t cudaMemset3DAsync_ptsz(struct cudaPitchedPtr p, int value, struct cudaExtent extent,
                                   cudaStream_t stream);

cudaError_t cudart_host_memset3d_ptds(apigen_call_ctx *cx, struct cudaPitchedPtr p, int value,
                                      struct cudaExtent extent)
{
    if (!pitched_ok(cx, p, extent)) return cudaErrorInvalidValue;
    return cudaMemset3D_ptds(p, value, extent);
}

cudaError_t cudart_host_memset3d_async(apigen_call_ctx *cx, struct cudaPitchedPtr p, int value,
                                       struct cudaExtent extent, cudaStream_t stream)
{
    if (!pitched_ok(cx, p, extent)) return cudaErrorInvalidValue;
    return cudaMemset3DAsync(p, value, extent, stream);
}

cudaError_t cudart_host_memset3d_async_ptsz(apigen_call_ctx *cx, struct cudaPitchedPtr p,
                                            int value, struct cudaExtent extent,
                                            cudaStream_t stream)
{
    if (!pitched_ok(cx, p, extent)) return cudaErrorInvalidValue;
    return cudaMemset3DAsync_ptsz(p, value, extent, stream);
}

/* ---- structs that hold handles (sent as bytes; fixed here both ways) ------------------- */
/* id -> real in place; false (and the call fails) for an id this client
 * does not own */
static bool to_real(apigen_call_ctx *cx, const char *type, void *field)
{
    uint64_t id;
    void *real = NULL;
    memcpy(&id, field, sizeof id);
    if (!id) return true;
    if (!apigen_handle_lookup(cx->session, ht(type), id, &real)) return false;
    memcpy(field, &real, sizeof real);
    return true;
}

/* real -> id in place (0 stays 0) */
static void to_id(apigen_call_ctx *cx, const char *type, void *field)
{
    void *real;
    memcpy(&real, field, sizeof real);
    uint64_t id = real ? apigen_handle_put(cx, ht(type), real) : 0;
    memcpy(field, &id, sizeof id);
}

/* a resource descriptor from the guest: its array handle or device address */
static bool res_in(apigen_call_ctx *cx, struct cudaResourceDesc *r)
{
    switch (r->resType) {
    case cudaResourceTypeArray: return r->res.array.array && to_real(cx, "cudaArray_t", &r->res.array.array);
    case cudaResourceTypeMipmappedArray:
        return r->res.mipmap.mipmap && to_real(cx, "cudaMipmappedArray_t", &r->res.mipmap.mipmap);
    case cudaResourceTypeLinear:
        return dev_ok(cx, r->res.linear.devPtr, r->res.linear.sizeInBytes, true);
    case cudaResourceTypePitch2D:
        return dev_ok(cx, r->res.pitch2D.devPtr,
                      r->res.pitch2D.height ? r->res.pitch2D.pitchInBytes * (r->res.pitch2D.height - 1) +
                                                  r->res.pitch2D.width
                                            : 0,
                      false);
    }
    return true; /* other types: the real runtime refuses them */
}

static void res_out(apigen_call_ctx *cx, struct cudaResourceDesc *r)
{
    if (r->resType == cudaResourceTypeArray) to_id(cx, "cudaArray_t", &r->res.array.array);
    else if (r->resType == cudaResourceTypeMipmappedArray)
        to_id(cx, "cudaMipmappedArray_t", &r->res.mipmap.mipmap);
}

cudaError_t cudart_host_create_texture(apigen_call_ctx *cx, cudaTextureObject_t *pTexObject,
                                       const struct cudaResourceDesc *pResDesc,
                                       const struct cudaTextureDesc *pTexDesc,
                                       const struct cudaResourceViewDesc *pResViewDesc)
{
    struct cudaResourceDesc r;
    if (!pResDesc) return cudaCreateTextureObject(pTexObject, NULL, pTexDesc, pResViewDesc);
    r = *pResDesc;
    if (!res_in(cx, &r)) return cudaErrorInvalidResourceHandle;
    return cudaCreateTextureObject(pTexObject, &r, pTexDesc, pResViewDesc);
}

cudaError_t cudart_host_create_surface(apigen_call_ctx *cx, cudaSurfaceObject_t *pSurfObject,
                                       const struct cudaResourceDesc *pResDesc)
{
    struct cudaResourceDesc r;
    if (!pResDesc) return cudaCreateSurfaceObject(pSurfObject, NULL);
    r = *pResDesc;
    if (!res_in(cx, &r)) return cudaErrorInvalidResourceHandle;
    return cudaCreateSurfaceObject(pSurfObject, &r);
}

cudaError_t cudart_host_texture_resource_desc(apigen_call_ctx *cx, struct cudaResourceDesc *pResDesc,
                                              cudaTextureObject_t texObject)
{
    cudaError_t e = cudaGetTextureObjectResourceDesc(pResDesc, texObject);
    if (e == cudaSuccess && pResDesc) res_out(cx, pResDesc);
    return e;
}

cudaError_t cudart_host_surface_resource_desc(apigen_call_ctx *cx, struct cudaResourceDesc *pResDesc,
                                              cudaSurfaceObject_t surfObject)
{
    cudaError_t e = cudaGetSurfaceObjectResourceDesc(pResDesc, surfObject);
    if (e == cudaSuccess && pResDesc) res_out(cx, pResDesc);
    return e;
}

#ifdef APIGEN_HAS_FN_cudaGraphInstantiateWithParams /* 12.0 */
cudaError_t cudaGraphInstantiateWithParams_ptsz(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                                cudaGraphInstantiateParams *instantiateParams);

static cudaError_t instantiate_with_params(apigen_call_ctx *cx, cudaGraphExec_t *pGraphExec,
                                           cudaGraph_t graph, cudaGraphInstantiateParams *p,
                                           bool ptsz)
{
    if (!p)
        return ptsz ? cudaGraphInstantiateWithParams_ptsz(pGraphExec, graph, NULL)
                    : cudaGraphInstantiateWithParams(pGraphExec, graph, NULL);
    uint64_t stream_id;
    memcpy(&stream_id, &p->uploadStream, sizeof stream_id);
    if (!to_real(cx, "cudaStream_t", &p->uploadStream)) return cudaErrorInvalidResourceHandle;
    p->errNode_out = NULL;
    cudaError_t e = ptsz ? cudaGraphInstantiateWithParams_ptsz(pGraphExec, graph, p)
                         : cudaGraphInstantiateWithParams(pGraphExec, graph, p);
    memcpy(&p->uploadStream, &stream_id, sizeof stream_id); /* the guest's own value back */
    to_id(cx, "cudaGraphNode_t", &p->errNode_out);
    return e;
}

cudaError_t cudart_host_instantiate_with_params(apigen_call_ctx *cx, cudaGraphExec_t *pGraphExec,
                                                cudaGraph_t graph, cudaGraphInstantiateParams *p)
{
    return instantiate_with_params(cx, pGraphExec, graph, p, false);
}

cudaError_t cudart_host_instantiate_with_params_ptsz(apigen_call_ctx *cx,
                                                     cudaGraphExec_t *pGraphExec,
                                                     cudaGraph_t graph,
                                                     cudaGraphInstantiateParams *p)
{
    return instantiate_with_params(cx, pGraphExec, graph, p, true);
}

cudaError_t cudart_host_exec_update(apigen_call_ctx *cx, cudaGraphExec_t hGraphExec,
                                    cudaGraph_t hGraph, cudaGraphExecUpdateResultInfo *r)
{
    cudaError_t e = cudaGraphExecUpdate(hGraphExec, hGraph, r);
    if (r) {
        to_id(cx, "cudaGraphNode_t", &r->errorNode);
        to_id(cx, "cudaGraphNode_t", &r->errorFromNode);
    }
    return e;
}
#endif

/* A graph's copy runs on the server: each side is an array of this client
 * or its device memory. */
static bool copy_in(apigen_call_ctx *cx, struct cudaMemcpy3DParms *p)
{
    struct cudaExtent x = p->extent;
    if (p->srcArray) {
        if (!to_real(cx, "cudaArray_t", &p->srcArray)) return false;
    } else if (!p->srcPtr.ptr || !pitched_ok(cx, p->srcPtr, x)) {
        return false;
    }
    if (p->dstArray) {
        if (!to_real(cx, "cudaArray_t", &p->dstArray)) return false;
    } else if (!p->dstPtr.ptr || !pitched_ok(cx, p->dstPtr, x)) {
        return false;
    }
    return true;
}

cudaError_t cudaMemcpy3D_ptds(const struct cudaMemcpy3DParms *p);
cudaError_t cudaMemcpy3DAsync_ptsz(const struct cudaMemcpy3DParms *p, cudaStream_t stream);
cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream);

/* One side of a 3D copy with an array: the bytes that came (host, dense), an
 * array of this client, or its device memory. */
static bool copy3d_side(apigen_call_ctx *cx, cudaArray_t *arr, struct cudaPitchedPtr *pp,
                        struct cudaPos *pos, void *host, size_t size, struct cudaExtent x)
{
    size_t depth = x.depth ? x.depth : 1;
    if (host) {
        if (*arr || pp->pitch != x.width || size / pp->pitch != pp->ysize * depth ||
            size % pp->pitch || pp->ysize != x.height)
            return false;
        pp->ptr = host;
        *pos = (struct cudaPos){0, 0, 0};
        return true;
    }
    if (*arr) return to_real(cx, "cudaArray_t", arr);
    return pp->ptr && pitched_ok(cx, *pp, x);
}

cudaError_t cudart_host_memcpy3d(apigen_call_ctx *cx, const struct cudaMemcpy3DParms *pp,
                                 const void *src, size_t srcSize, void *dst, size_t dstSize,
                                 cudaStream_t stream, uint32_t flags)
{
    if (!pp) return cudaErrorInvalidValue;
    struct cudaMemcpy3DParms p = *pp;
    /* extent.width counts the array's elements: the pitched side's bytes */
    struct cudaExtent xb = p.extent;
    if (p.srcArray || p.dstArray) {
        struct cudaChannelFormatDesc d;
        struct cudaExtent ax;
        unsigned int af;
        cudaArray_t a = p.srcArray ? p.srcArray : p.dstArray;
        if (!to_real(cx, "cudaArray_t", &a)) return cudaErrorInvalidResourceHandle;
        cudaError_t e = cudaArrayGetInfo(&d, &ax, &af, a);
        if (e != cudaSuccess) return e;
        xb.width *= (size_t)(d.x + d.y + d.z + d.w) / 8;
    }
    if (!copy3d_side(cx, &p.srcArray, &p.srcPtr, &p.srcPos, (void *)src, srcSize, xb) ||
        !copy3d_side(cx, &p.dstArray, &p.dstPtr, &p.dstPos, dst, dstSize, xb))
        return cudaErrorInvalidValue;
    if (src || dst) p.kind = cudaMemcpyDefault; /* the host side is this process's memory now */
    bool ptsz = flags & APIGEN_CUDART_PTSZ;
    if (!(flags & APIGEN_CUDART_ASYNC)) return ptsz ? cudaMemcpy3D_ptds(&p) : cudaMemcpy3D(&p);
    cudaError_t e = ptsz ? cudaMemcpy3DAsync_ptsz(&p, stream) : cudaMemcpy3DAsync(&p, stream);
    /* the call's buffers are freed after the reply: a copy to or from them
     * is done before it (natively a pageable copy is synchronous too) */
    if (e == cudaSuccess && (src || dst))
        e = ptsz ? cudaStreamSynchronize_ptsz(stream) : cudaStreamSynchronize(stream);
    return e;
}

/* A box of a large copy from host memory (guest.c array_boxes); sent
 * without a reply when APIGEN_CUDART_PIPE is set. */
cudaError_t cudart_host_memcpy3d_in(apigen_call_ctx *cx, const struct cudaMemcpy3DParms *p,
                                    const void *src, size_t srcSize, cudaStream_t stream,
                                    uint32_t flags)
{
    if (!src) return cudaErrorInvalidValue;
    return cudart_host_memcpy3d(cx, p, src, srcSize, NULL, 0, stream, flags & ~APIGEN_CUDART_PIPE);
}

cudaError_t cudart_host_add_memcpy_node(apigen_call_ctx *cx, cudaGraphNode_t *pGraphNode,
                                        cudaGraph_t graph, const cudaGraphNode_t *pDependencies,
                                        size_t numDependencies,
                                        const struct cudaMemcpy3DParms *pCopyParams)
{
    struct cudaMemcpy3DParms p;
    if (!pCopyParams) return cudaGraphAddMemcpyNode(pGraphNode, graph, pDependencies, numDependencies, NULL);
    p = *pCopyParams;
    if (!copy_in(cx, &p)) return cudaErrorInvalidValue;
    return cudaGraphAddMemcpyNode(pGraphNode, graph, pDependencies, numDependencies, &p);
}

cudaError_t cudart_host_memcpy_node_get(apigen_call_ctx *cx, cudaGraphNode_t node,
                                        struct cudaMemcpy3DParms *p)
{
    cudaError_t e = cudaGraphMemcpyNodeGetParams(node, p);
    if (e == cudaSuccess && p) {
        to_id(cx, "cudaArray_t", &p->srcArray);
        to_id(cx, "cudaArray_t", &p->dstArray);
    }
    return e;
}

cudaError_t cudart_host_memcpy_node_set(apigen_call_ctx *cx, cudaGraphNode_t node,
                                        const struct cudaMemcpy3DParms *pNodeParams)
{
    struct cudaMemcpy3DParms p;
    if (!pNodeParams) return cudaGraphMemcpyNodeSetParams(node, NULL);
    p = *pNodeParams;
    if (!copy_in(cx, &p)) return cudaErrorInvalidValue;
    return cudaGraphMemcpyNodeSetParams(node, &p);
}

cudaError_t cudart_host_exec_memcpy_node_set(apigen_call_ctx *cx, cudaGraphExec_t hGraphExec,
                                             cudaGraphNode_t node,
                                             const struct cudaMemcpy3DParms *pNodeParams)
{
    struct cudaMemcpy3DParms p;
    if (!pNodeParams) return cudaGraphExecMemcpyNodeSetParams(hGraphExec, node, NULL);
    p = *pNodeParams;
    if (!copy_in(cx, &p)) return cudaErrorInvalidValue;
    return cudaGraphExecMemcpyNodeSetParams(hGraphExec, node, &p);
}

/* ---- registered host memory ------------------------------------------------------------ */
/* The runtime's large warm buffers (a session thread's receive buffer, which
 * in-bytes of cudaMemcpy point into, and its scratch block, which out-bytes
 * are written to) are registered once, so the server's copies from and to
 * them are DMA instead of the driver's staging through its own pinned
 * buffers. The thread's pending error (cudaGetLastError belongs to the
 * guest) is never touched: with one pending, nothing is registered; a
 * failed registration clears only its own error. */
/* Portable, and mapped when the device can map host memory (a kernel then
 * reaches the arena: cudaHostGetDevicePointer). */
static bool cudart_host_register(void *p, size_t n)
{
    if (cudaPeekAtLastError() != cudaSuccess) return false;
    if (cudaHostRegister(p, n, cudaHostRegisterPortable | cudaHostRegisterMapped) == cudaSuccess)
        return true;
    (void)cudaGetLastError();
    if (cudaHostRegister(p, n, cudaHostRegisterPortable) == cudaSuccess) return true;
    (void)cudaGetLastError();
    return false;
}

static void cudart_host_unregister(void *p)
{
    cudaError_t pending = cudaPeekAtLastError();
    if (cudaHostUnregister(p) != cudaSuccess && pending == cudaSuccess) (void)cudaGetLastError();
}

__attribute__((constructor)) static void cudart_host_memory_init(void)
{
    apigen_set_host_memory(cudart_host_register, cudart_host_unregister);
    /* guests' arenas (their cudaMallocHost memory): handlers pass buffer
     * arguments to the runtime as they are */
    apigen_arena_accept(&apigen_api_cudart);
}

/* ---- device properties forwarded ------------------------------------------------------- */
/* A forwarded device reaches neither the guest's pageable memory nor its
 * managed memory while the guest's CPU uses it (the guest's mirror is moved
 * at launches and synchronizations, docs/managed.md): a program that asks
 * must not rely on either. */
static bool not_forwarded_attr(enum cudaDeviceAttr attr)
{
    return attr == cudaDevAttrPageableMemoryAccess || attr == cudaDevAttrConcurrentManagedAccess ||
           attr == cudaDevAttrPageableMemoryAccessUsesHostPageTables ||
           attr == cudaDevAttrDirectManagedMemAccessFromHost;
}

cudaError_t cudart_host_device_attribute(apigen_call_ctx *cx, int *value, enum cudaDeviceAttr attr,
                                         int device)
{
    (void)cx;
    cudaError_t e = cudaDeviceGetAttribute(value, attr, device);
    if (e == cudaSuccess && value && not_forwarded_attr(attr)) *value = 0;
    return e;
}

#ifdef APIGEN_HAS_FN_cudaGetDeviceProperties
cudaError_t cudart_host_device_properties(apigen_call_ctx *cx, struct cudaDeviceProp *prop,
                                          int device)
{
    (void)cx;
    cudaError_t e = cudaGetDeviceProperties(prop, device);
    if (e == cudaSuccess && prop) {
        prop->pageableMemoryAccess = 0;
        prop->concurrentManagedAccess = 0;
        prop->pageableMemoryAccessUsesHostPageTables = 0;
        prop->directManagedMemAccessFromHost = 0;
    }
    return e;
}
#endif
