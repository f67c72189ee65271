/* Hand-written guest code of the cudart spec (specs/cudart.yaml).
 *
 * - Fat binary registration: __cudaRegisterFatBinary/Function/Var record what
 *   the program registers; __cudaRegisterFatBinaryEnd ships the module to the
 *   server once (apigenCudartRegisterModule), which registers it with the
 *   real runtime under proxy host addresses and returns them.
 *   cudart_map_host maps the program's kernel and variable addresses to
 *   those proxies (the spec's `map:` on every `func`/`symbol` parameter).
 * - Launches: the kernel's parameter layout (offsets, sizes) is asked from
 *   the server once and cached; a launch packs the arguments and is one
 *   async message (apigenCudartLaunch).
 * - Device ranges handed out by cudaMalloc & co are remembered, so that
 *   cudaMemcpyDefault resolves to a direction without asking.
 * - Pinned host memory (cudaMallocHost, cudaHostAlloc, cudaHostRegister)
 *   is guest memory: the GPU cannot reach the guest's RAM anyway.
 * - Host functions (cudaLaunchHostFunc, cudaStreamAddCallback) run on the
 *   guest's callback thread when the server's stream reaches them; the
 *   server's stream waits until they return, as a real stream does.
 * - Per-thread default stream entry points (_ptds/_ptsz) are forwarded to
 *   the server's entry points of the same name.
 *
 * Thread safety: one mutex for the tables; the call configuration stack is
 * per thread, as in the real runtime. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apigen_rt.h"
#include "cudart_wire.h"

/* ---- forwarders generated for `wrap: {guest: true}` ---------------------------- */
#define FWD_DECL(name, ...) cudaError_t cudart_fwd_##name(__VA_ARGS__);
#define MEMCPY_ARGS void *dst, const void *src, size_t count, enum cudaMemcpyKind kind
#define MEMCPYA_ARGS MEMCPY_ARGS, cudaStream_t stream
#define M2D_ARGS                                                                                   \
    void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,        \
        enum cudaMemcpyKind kind
#define M2DA_ARGS M2D_ARGS, cudaStream_t stream
#define TOSYM_ARGS                                                                                 \
    const void *symbol, const void *src, size_t count, size_t offset, enum cudaMemcpyKind kind
#define TOSYMA_ARGS TOSYM_ARGS, cudaStream_t stream
#define FROMSYM_ARGS                                                                               \
    void *dst, const void *symbol, size_t count, size_t offset, enum cudaMemcpyKind kind
#define FROMSYMA_ARGS FROMSYM_ARGS, cudaStream_t stream
#define TOARR_ARGS                                                                                 \
    cudaArray_t dst, size_t wOffset, size_t hOffset, const void *src, size_t count,               \
        enum cudaMemcpyKind kind
#define TOARRA_ARGS TOARR_ARGS, cudaStream_t stream
#define FROMARR_ARGS                                                                               \
    void *dst, cudaArray_const_t src, size_t wOffset, size_t hOffset, size_t count,               \
        enum cudaMemcpyKind kind
#define FROMARRA_ARGS FROMARR_ARGS, cudaStream_t stream
#define TO2DARR_ARGS                                                                               \
    cudaArray_t dst, size_t wOffset, size_t hOffset, const void *src, size_t spitch, size_t width, \
        size_t height, enum cudaMemcpyKind kind
#define TO2DARRA_ARGS TO2DARR_ARGS, cudaStream_t stream
#define FROM2DARR_ARGS                                                                             \
    void *dst, size_t dpitch, cudaArray_const_t src, size_t wOffset, size_t hOffset, size_t width, \
        size_t height, enum cudaMemcpyKind kind
#define FROM2DARRA_ARGS FROM2DARR_ARGS, cudaStream_t stream

FWD_DECL(cudaMemcpy, MEMCPY_ARGS)
FWD_DECL(cudaMemcpy_ptds, MEMCPY_ARGS)
FWD_DECL(cudaMemcpyAsync, MEMCPYA_ARGS)
FWD_DECL(cudaMemcpyAsync_ptsz, MEMCPYA_ARGS)
FWD_DECL(cudaMemcpy2D, M2D_ARGS)
FWD_DECL(cudaMemcpy2D_ptds, M2D_ARGS)
FWD_DECL(cudaMemcpy2DAsync, M2DA_ARGS)
FWD_DECL(cudaMemcpy2DAsync_ptsz, M2DA_ARGS)
FWD_DECL(cudaMemcpyToSymbol, TOSYM_ARGS)
FWD_DECL(cudaMemcpyToSymbol_ptds, TOSYM_ARGS)
FWD_DECL(cudaMemcpyToSymbolAsync, TOSYMA_ARGS)
FWD_DECL(cudaMemcpyToSymbolAsync_ptsz, TOSYMA_ARGS)
FWD_DECL(cudaMemcpyFromSymbol, FROMSYM_ARGS)
FWD_DECL(cudaMemcpyFromSymbol_ptds, FROMSYM_ARGS)
FWD_DECL(cudaMemcpyFromSymbolAsync, FROMSYMA_ARGS)
FWD_DECL(cudaMemcpyFromSymbolAsync_ptsz, FROMSYMA_ARGS)
FWD_DECL(cudaMemcpyToArray, TOARR_ARGS)
FWD_DECL(cudaMemcpyToArray_ptds, TOARR_ARGS)
FWD_DECL(cudaMemcpyToArrayAsync, TOARRA_ARGS)
FWD_DECL(cudaMemcpyToArrayAsync_ptsz, TOARRA_ARGS)
FWD_DECL(cudaMemcpyFromArray, FROMARR_ARGS)
FWD_DECL(cudaMemcpyFromArray_ptds, FROMARR_ARGS)
FWD_DECL(cudaMemcpyFromArrayAsync, FROMARRA_ARGS)
FWD_DECL(cudaMemcpyFromArrayAsync_ptsz, FROMARRA_ARGS)
FWD_DECL(cudaMemcpy2DToArray, TO2DARR_ARGS)
FWD_DECL(cudaMemcpy2DToArray_ptds, TO2DARR_ARGS)
FWD_DECL(cudaMemcpy2DToArrayAsync, TO2DARRA_ARGS)
FWD_DECL(cudaMemcpy2DToArrayAsync_ptsz, TO2DARRA_ARGS)
FWD_DECL(cudaMemcpy2DFromArray, FROM2DARR_ARGS)
FWD_DECL(cudaMemcpy2DFromArray_ptds, FROM2DARR_ARGS)
FWD_DECL(cudaMemcpy2DFromArrayAsync, FROM2DARRA_ARGS)
FWD_DECL(cudaMemcpy2DFromArrayAsync_ptsz, FROM2DARRA_ARGS)
FWD_DECL(cudaMalloc, void **devPtr, size_t size)
FWD_DECL(cudaMallocPitch, void **devPtr, size_t *pitch, size_t width, size_t height)
FWD_DECL(cudaMallocAsync, void **devPtr, size_t size, cudaStream_t hStream)
FWD_DECL(cudaMallocAsync_ptsz, void **devPtr, size_t size, cudaStream_t hStream)
FWD_DECL(cudaMallocFromPoolAsync, void **ptr, size_t size, cudaMemPool_t memPool,
         cudaStream_t stream)
FWD_DECL(cudaMallocFromPoolAsync_ptsz, void **ptr, size_t size, cudaMemPool_t memPool,
         cudaStream_t stream)
FWD_DECL(cudaMalloc3D, struct cudaPitchedPtr *pitchedDevPtr, struct cudaExtent extent)
FWD_DECL(cudaGetSymbolAddress, void **devPtr, const void *symbol)
FWD_DECL(cudaFree, void *devPtr)
FWD_DECL(cudaFreeAsync, void *devPtr, cudaStream_t hStream)
FWD_DECL(cudaFreeAsync_ptsz, void *devPtr, cudaStream_t hStream)
FWD_DECL(cudaPointerGetAttributes, struct cudaPointerAttributes *attributes, const void *ptr)
FWD_DECL(cudaStreamSynchronize, cudaStream_t stream)
FWD_DECL(cudaStreamSynchronize_ptsz, cudaStream_t stream)
FWD_DECL(cudaStreamQuery, cudaStream_t stream)
FWD_DECL(cudaStreamQuery_ptsz, cudaStream_t stream)
FWD_DECL(cudaDeviceSynchronize, void)
FWD_DECL(cudaEventSynchronize, cudaEvent_t event)

static pthread_mutex_t lock_ = PTHREAD_MUTEX_INITIALIZER;

/* ---- a small open-addressing map u64 -> u64 (0 is "empty") ---------------------- */
typedef struct u64map {
    uint64_t *keys, *vals;
    size_t cap, n;
} u64map;

static bool map_put(u64map *m, uint64_t k, uint64_t v)
{
    if (!k) return false;
    if ((m->n + 1) * 2 > m->cap) {
        size_t ncap = m->cap ? m->cap * 2 : 64;
        uint64_t *nk = calloc(ncap, sizeof *nk), *nv = calloc(ncap, sizeof *nv);
        if (!nk || !nv) {
            free(nk);
            free(nv);
            return false;
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->keys[i]) continue;
            size_t j = (m->keys[i] * 0x9E3779B97F4A7C15ull) & (ncap - 1);
            while (nk[j]) j = (j + 1) & (ncap - 1);
            nk[j] = m->keys[i];
            nv[j] = m->vals[i];
        }
        free(m->keys);
        free(m->vals);
        m->keys = nk;
        m->vals = nv;
        m->cap = ncap;
    }
    size_t j = (k * 0x9E3779B97F4A7C15ull) & (m->cap - 1);
    while (m->keys[j] && m->keys[j] != k) j = (j + 1) & (m->cap - 1);
    if (!m->keys[j]) m->n++;
    m->keys[j] = k;
    m->vals[j] = v;
    return true;
}

static bool map_get(const u64map *m, uint64_t k, uint64_t *v)
{
    if (!k || !m->cap) return false;
    size_t j = (k * 0x9E3779B97F4A7C15ull) & (m->cap - 1);
    while (m->keys[j]) {
        if (m->keys[j] == k) {
            *v = m->vals[j];
            return true;
        }
        j = (j + 1) & (m->cap - 1);
    }
    return false;
}

/* ---- address ranges: device allocations and pinned host memory ----------------- */
typedef struct range {
    uintptr_t base;
    size_t size;
    unsigned flags; /* host ranges: cudaHostAlloc / cudaHostRegister flags */
    bool owned;     /* host ranges: allocated by us (cudaMallocHost, cudaHostAlloc) */
} range;

typedef struct range_set {
    range *r;
    size_t n, cap;
} range_set;

static range_set dev_ranges_, host_ranges_;

static void ranges_add(range_set *s, const void *p, size_t size, unsigned flags, bool owned)
{
    if (!p) return;
    pthread_mutex_lock(&lock_);
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 64;
        range *nr = realloc(s->r, nc * sizeof *nr);
        if (!nr) {
            pthread_mutex_unlock(&lock_);
            return;
        }
        s->r = nr;
        s->cap = nc;
    }
    s->r[s->n++] = (range){(uintptr_t)p, size ? size : 1, flags, owned};
    pthread_mutex_unlock(&lock_);
}

/* The range that contains p (copied out), or false. */
static bool ranges_find(range_set *s, const void *p, range *out)
{
    uintptr_t a = (uintptr_t)p;
    bool found = false;
    pthread_mutex_lock(&lock_);
    for (size_t i = s->n; i-- > 0;)
        if (a >= s->r[i].base && a - s->r[i].base < s->r[i].size) {
            *out = s->r[i];
            found = true;
            break;
        }
    pthread_mutex_unlock(&lock_);
    return found;
}

/* Removes the range that starts at p; false if there is none. */
static bool ranges_remove(range_set *s, const void *p, range *out)
{
    bool found = false;
    pthread_mutex_lock(&lock_);
    for (size_t i = 0; i < s->n; i++)
        if (s->r[i].base == (uintptr_t)p) {
            if (out) *out = s->r[i];
            s->r[i] = s->r[--s->n];
            found = true;
            break;
        }
    pthread_mutex_unlock(&lock_);
    return found;
}

static bool is_device(const void *p)
{
    range r;
    return p && ranges_find(&dev_ranges_, p, &r);
}

/* cudaMemcpyDefault -> the direction the tracked ranges say. */
static enum cudaMemcpyKind resolve_kind(const void *dst, const void *src, enum cudaMemcpyKind kind)
{
    if (kind != cudaMemcpyDefault) return kind;
    bool d = is_device(dst), s = is_device(src);
    return d ? (s ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
             : (s ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
}

/* ---- module registration ---------------------------------------------------------------- */
typedef struct fatbin_wrapper { /* __fatBinC_Wrapper_t */
    int magic;
    int version;
    const unsigned long long *data;
    void *filename_or_fatbins;
} fatbin_wrapper;

typedef struct fatbin_header {
    uint32_t magic; /* 0xBA55ED50 */
    uint16_t version;
    uint16_t header_size;
    uint64_t fat_size;
} fatbin_header;

#define FATBIN_WRAPPER_MAGIC 0x466243b1
#define FATBIN_MAGIC 0xBA55ED50u

typedef struct module_sym {
    apigenCudartSym s;
    const void *host; /* the program's address */
    const char *name; /* the program's string */
} module_sym;

typedef struct module {
    const void *image;
    size_t image_size;
    module_sym *syms;
    size_t nsyms, cap;
    bool shipped;
    apigenCudartModule handle;
    struct module *next;
} module;

static module *modules_;       /* newest first */
static u64map host_to_proxy_;  /* program address -> server proxy */
static u64map proxy_to_name_;  /* program address -> device name (char *) */

APIGEN_EXPORT void **__cudaRegisterFatBinary(void *fatCubin)
{
    module *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    const fatbin_wrapper *w = fatCubin;
    if (w && w->magic == FATBIN_WRAPPER_MAGIC && w->data) {
        const fatbin_header *h = (const fatbin_header *)w->data;
        if (h->magic == FATBIN_MAGIC) {
            m->image = h;
            m->image_size = (size_t)h->header_size + (size_t)h->fat_size;
        }
    }
    if (!m->image) apigen_log("cudart: __cudaRegisterFatBinary: not a fat binary; its kernels will not be found");
    pthread_mutex_lock(&lock_);
    m->next = modules_;
    modules_ = m;
    pthread_mutex_unlock(&lock_);
    return (void **)m;
}

static void add_sym(void **h, uint32_t kind, const void *host, const char *name, int32_t limit,
                    int32_t ext, uint64_t size, int32_t constant, int32_t global)
{
    module *m = (module *)h;
    if (!m || !host || !name) return;
    pthread_mutex_lock(&lock_);
    if (m->nsyms == m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 16;
        module_sym *ns = realloc(m->syms, nc * sizeof *ns);
        if (!ns) {
            pthread_mutex_unlock(&lock_);
            return;
        }
        m->syms = ns;
        m->cap = nc;
    }
    module_sym *s = &m->syms[m->nsyms++];
    memset(s, 0, sizeof *s);
    s->s.kind = kind;
    s->s.thread_limit = limit;
    s->s.ext = ext;
    s->s.size = size;
    s->s.constant = constant;
    s->s.global = global;
    s->host = host;
    s->name = name;
    (void)map_put(&proxy_to_name_, (uint64_t)(uintptr_t)host, (uint64_t)(uintptr_t)name);
    pthread_mutex_unlock(&lock_);
}

APIGEN_EXPORT void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun,
                                          char *deviceFun, const char *deviceName,
                                          int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim,
                                          dim3 *gDim, int *wSize)
{
    (void)deviceFun, (void)tid, (void)bid, (void)bDim, (void)gDim, (void)wSize;
    add_sym(fatCubinHandle, APIGEN_CUDART_SYM_FUNCTION, hostFun, deviceName, thread_limit, 0, 0, 0,
            0);
}

APIGEN_EXPORT void __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress,
                                     const char *deviceName, int ext, size_t size, int constant,
                                     int global)
{
    (void)deviceAddress;
    add_sym(fatCubinHandle, APIGEN_CUDART_SYM_VAR, hostVar, deviceName, 0, ext, size, constant,
            global);
}

APIGEN_EXPORT void __cudaRegisterManagedVar(void **fatCubinHandle, void **hostVarPtrAddress,
                                            char *deviceAddress, const char *deviceName, int ext,
                                            size_t size, int constant, int global)
{
    static atomic_flag logged = ATOMIC_FLAG_INIT;
    (void)fatCubinHandle, (void)hostVarPtrAddress, (void)deviceAddress, (void)ext, (void)size,
        (void)constant, (void)global;
    if (!atomic_flag_test_and_set(&logged))
        apigen_log("cudart: __managed__ variable '%s': managed memory is not supported remotely; "
                   "it stays unregistered",
                   deviceName ? deviceName : "?");
}

APIGEN_EXPORT void __cudaRegisterHostVar(void **fatCubinHandle, const char *deviceName,
                                         char *hostVar, size_t size)
{
    (void)fatCubinHandle, (void)deviceName, (void)hostVar, (void)size;
}

APIGEN_EXPORT void __cudaRegisterUnifiedTable(void *table)
{
    (void)table;
}

APIGEN_EXPORT char __cudaInitModule(void **fatCubinHandle)
{
    (void)fatCubinHandle;
    return 1;
}

/* Ships one module (the lock is held). */
static void ship(module *m)
{
    m->shipped = true;
    if (!m->image || !m->nsyms) return;
    size_t names_size = 0;
    for (size_t i = 0; i < m->nsyms; i++) names_size += strlen(m->syms[i].name) + 1;
    char *names = malloc(names_size ? names_size : 1);
    apigenCudartSym *syms = calloc(m->nsyms, sizeof *syms);
    uint64_t *proxies = calloc(m->nsyms, sizeof *proxies);
    if (!names || !syms || !proxies) goto out;
    size_t off = 0;
    for (size_t i = 0; i < m->nsyms; i++) {
        size_t l = strlen(m->syms[i].name) + 1;
        memcpy(names + off, m->syms[i].name, l);
        syms[i] = m->syms[i].s;
        syms[i].name_off = (uint32_t)off;
        off += l;
    }
    cudaError_t e = apigenCudartRegisterModule(m->image, m->image_size, names, names_size, syms,
                                               (uint32_t)m->nsyms, &m->handle, proxies);
    if (e != cudaSuccess) {
        apigen_log("cudart: registering the program's kernels with the server failed (%d); "
                   "launches will fail",
                   (int)e);
        goto out;
    }
    for (size_t i = 0; i < m->nsyms; i++)
        (void)map_put(&host_to_proxy_, (uint64_t)(uintptr_t)m->syms[i].host, proxies[i]);
out:
    free(names);
    free(syms);
    free(proxies);
}

static void ship_pending(void)
{
    pthread_mutex_lock(&lock_);
    for (module *m = modules_; m; m = m->next)
        if (!m->shipped) ship(m);
    pthread_mutex_unlock(&lock_);
}

APIGEN_EXPORT void __cudaRegisterFatBinaryEnd(void **fatCubinHandle)
{
    module *m = (module *)fatCubinHandle;
    if (!m) return;
    pthread_mutex_lock(&lock_);
    if (!m->shipped) ship(m);
    pthread_mutex_unlock(&lock_);
}

APIGEN_EXPORT void __cudaUnregisterFatBinary(void **fatCubinHandle)
{
    /* The server unregisters the module when this client's session ends;
     * at exit the connection may already be gone. */
    (void)fatCubinHandle;
}

/* The spec's `map:` of kernel and variable addresses: the server's proxy,
 * NULL for an address the program never registered (the real runtime then
 * answers cudaErrorInvalidDeviceFunction / cudaErrorInvalidSymbol). */
const void *cudart_map_host(const void *p)
{
    uint64_t v = 0;
    if (!p) return NULL;
    ship_pending();
    pthread_mutex_lock(&lock_);
    bool ok = map_get(&host_to_proxy_, (uint64_t)(uintptr_t)p, &v);
    pthread_mutex_unlock(&lock_);
    return ok ? (const void *)(uintptr_t)v : NULL;
}

APIGEN_EXPORT cudaError_t cudaFuncGetName(const char **name, const void *func)
{
    uint64_t v = 0;
    if (!name || !func) return cudaErrorInvalidValue;
    pthread_mutex_lock(&lock_);
    bool ok = map_get(&proxy_to_name_, (uint64_t)(uintptr_t)func, &v);
    pthread_mutex_unlock(&lock_);
    if (!ok) return cudaErrorInvalidDeviceFunction;
    *name = (const char *)(uintptr_t)v;
    return cudaSuccess;
}

/* ---- launches ---------------------------------------------------------------------------- */
typedef struct call_config {
    dim3 grid, block;
    size_t shmem;
    cudaStream_t stream;
} call_config;

#define CONFIG_DEPTH 16
static _Thread_local call_config config_[CONFIG_DEPTH];
static _Thread_local unsigned nconfig_;

APIGEN_EXPORT unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                                   cudaStream_t stream)
{
    if (nconfig_ >= CONFIG_DEPTH) return 1;
    config_[nconfig_++] = (call_config){gridDim, blockDim, sharedMem, stream};
    return 0;
}

APIGEN_EXPORT cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim,
                                                     size_t *sharedMem, void *stream)
{
    if (!nconfig_) return cudaErrorMissingConfiguration;
    call_config c = config_[--nconfig_];
    *gridDim = c.grid;
    *blockDim = c.block;
    *sharedMem = c.shmem;
    *(cudaStream_t *)stream = c.stream;
    return cudaSuccess;
}

typedef struct layout {
    uint32_t n;
    uint64_t size; /* bytes of the packed parameter block */
    uint64_t *offsets, *sizes;
} layout;

static u64map layouts_; /* proxy or kernel id -> layout * */

/* The parameter layout of a kernel (one round trip the first time). */
static cudaError_t get_layout(const void *func, cudaKernel_t kernel, const layout **out)
{
    uint64_t key = func ? (uint64_t)(uintptr_t)func : (uint64_t)(uintptr_t)kernel, v;
    pthread_mutex_lock(&lock_);
    bool ok = map_get(&layouts_, key, &v);
    pthread_mutex_unlock(&lock_);
    if (ok) {
        *out = (const layout *)(uintptr_t)v;
        return cudaSuccess;
    }
    uint64_t *offs = calloc(APIGEN_CUDART_MAX_PARAMS, sizeof *offs);
    uint64_t *sizes = calloc(APIGEN_CUDART_MAX_PARAMS, sizeof *sizes);
    layout *l = calloc(1, sizeof *l);
    if (!offs || !sizes || !l) {
        free(offs), free(sizes), free(l);
        return cudaErrorMemoryAllocation;
    }
    cudaError_t e = apigenCudartParamLayout(func, kernel, &l->n, offs, sizes);
    if (e != cudaSuccess || l->n > APIGEN_CUDART_MAX_PARAMS) {
        free(offs), free(sizes), free(l);
        return e != cudaSuccess ? e : cudaErrorInvalidValue;
    }
    for (uint32_t i = 0; i < l->n; i++)
        if (offs[i] + sizes[i] > l->size) l->size = offs[i] + sizes[i];
    l->offsets = offs;
    l->sizes = sizes;
    pthread_mutex_lock(&lock_);
    if (map_get(&layouts_, key, &v)) { /* another thread was first */
        pthread_mutex_unlock(&lock_);
        free(offs), free(sizes), free(l);
        *out = (const layout *)(uintptr_t)v;
        return cudaSuccess;
    }
    (void)map_put(&layouts_, key, (uint64_t)(uintptr_t)l);
    pthread_mutex_unlock(&lock_);
    *out = l;
    return cudaSuccess;
}

static cudaError_t launch(const void *proxy, cudaKernel_t kernel, dim3 grid, dim3 block,
                          void **args, size_t shmem, cudaStream_t stream,
                          const cudaLaunchAttribute *attrs, unsigned nattrs, uint32_t flags)
{
    const layout *l;
    if (!proxy && !kernel) return cudaErrorInvalidDeviceFunction;
    cudaError_t e = get_layout(proxy, kernel, &l);
    if (e != cudaSuccess) return e;
    unsigned char small[512], *buf = small;
    if (l->size > sizeof small && !(buf = malloc(l->size))) return cudaErrorMemoryAllocation;
    if (l->n && !args) {
        if (buf != small) free(buf);
        return cudaErrorInvalidValue;
    }
    memset(buf, 0, l->size);
    for (uint32_t i = 0; i < l->n; i++) memcpy(buf + l->offsets[i], args[i], l->sizes[i]);
    e = apigenCudartLaunch(proxy, kernel, grid, block, shmem, stream, l->size ? buf : NULL,
                           l->size, nattrs ? attrs : NULL, nattrs, flags);
    if (buf != small) free(buf);
    return e;
}

static u64map kernel_to_host_; /* kernel id from __cudaGetKernel -> the program's address */

/* <<<>>> launches: nvcc's stub asks for the kernel handle once per launch
 * site, then launches by handle. The guest remembers which program address
 * the handle stands for and launches by address, the path every runtime
 * version takes (cudaLaunchKernel with a registered function). */
APIGEN_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *fun)
{
    cudaError_t e = cudaGetKernel(kernel, fun);
    if (e == cudaSuccess && kernel && *kernel) {
        pthread_mutex_lock(&lock_);
        (void)map_put(&kernel_to_host_, (uint64_t)(uintptr_t)*kernel, (uint64_t)(uintptr_t)fun);
        pthread_mutex_unlock(&lock_);
    }
    return e;
}

static cudaError_t launch_by_handle(cudaKernel_t kernel, dim3 grid, dim3 block, void **args,
                                   size_t shmem, cudaStream_t stream, uint32_t flags)
{
    uint64_t fun = 0;
    pthread_mutex_lock(&lock_);
    bool ok = map_get(&kernel_to_host_, (uint64_t)(uintptr_t)kernel, &fun);
    pthread_mutex_unlock(&lock_);
    if (ok)
        return launch(cudart_map_host((const void *)(uintptr_t)fun), NULL, grid, block, args,
                      shmem, stream, NULL, 0, flags);
    return launch(NULL, kernel, grid, block, args, shmem, stream, NULL, 0, flags);
}

APIGEN_EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
                                             void **args, size_t sharedMem, cudaStream_t stream)
{
    return launch_by_handle(kernel, gridDim, blockDim, args, sharedMem, stream, 0);
}

APIGEN_EXPORT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim,
                                                  dim3 blockDim, void **args, size_t sharedMem,
                                                  cudaStream_t stream)
{
    return launch_by_handle(kernel, gridDim, blockDim, args, sharedMem, stream,
                            APIGEN_CUDART_PTSZ);
}

#define LAUNCH_KERNEL(name, flags)                                                                 \
    APIGEN_EXPORT cudaError_t name(const void *func, dim3 gridDim, dim3 blockDim, void **args,     \
                                   size_t sharedMem, cudaStream_t stream)                          \
    {                                                                                              \
        return launch(cudart_map_host(func), NULL, gridDim, blockDim, args, sharedMem, stream,     \
                      NULL, 0, flags);                                                             \
    }
LAUNCH_KERNEL(cudaLaunchKernel, 0)
LAUNCH_KERNEL(cudaLaunchKernel_ptsz, APIGEN_CUDART_PTSZ)
LAUNCH_KERNEL(cudaLaunchCooperativeKernel, APIGEN_CUDART_COOPERATIVE)
LAUNCH_KERNEL(cudaLaunchCooperativeKernel_ptsz, APIGEN_CUDART_COOPERATIVE | APIGEN_CUDART_PTSZ)

#define LAUNCH_KERNEL_EX(name, flags)                                                              \
    APIGEN_EXPORT cudaError_t name(const cudaLaunchConfig_t *config, const void *func,             \
                                   void **args)                                                    \
    {                                                                                              \
        if (!config) return cudaErrorInvalidValue;                                                 \
        return launch(cudart_map_host(func), NULL, config->gridDim, config->blockDim, args,        \
                      config->dynamicSmemBytes, config->stream, config->attrs, config->numAttrs,   \
                      flags);                                                                      \
    }
LAUNCH_KERNEL_EX(cudaLaunchKernelExC, 0)
LAUNCH_KERNEL_EX(cudaLaunchKernelExC_ptsz, APIGEN_CUDART_PTSZ)

/* ---- host functions ------------------------------------------------------------------- */
typedef struct host_fn {
    bool is_callback;
    cudaHostFn_t fn;
    cudaStreamCallback_t cb;
    void *user;
    cudaStream_t stream;
} host_fn;

static atomic_uint_fast64_t next_host_fn_ = 1;

/* Runs on the runtime's callback thread when the server's stream reached the
 * host function; the server's stream waits until apigenCudartHostFnDone. */
static void host_fn_reached(uint64_t id, int32_t status, void *user)
{
    host_fn *h = user;
    if (h) {
        if (h->is_callback) h->cb(h->stream, (cudaError_t)status, h->user);
        else h->fn(h->user);
        free(h);
    }
    (void)apigenCudartHostFnDone(id);
}

static cudaError_t enqueue_host_fn(cudaStream_t stream, cudaHostFn_t fn, cudaStreamCallback_t cb,
                                   void *user, uint32_t flags)
{
    if (!fn && !cb) return cudaErrorInvalidValue;
    host_fn *h = malloc(sizeof *h);
    if (!h) return cudaErrorMemoryAllocation;
    *h = (host_fn){cb != NULL, fn, cb, user, stream};
    uint64_t id = atomic_fetch_add(&next_host_fn_, 1);
    return apigenCudartEnqueueHostFn(stream, host_fn_reached, h, id, cb != NULL, flags);
}

APIGEN_EXPORT cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
    return enqueue_host_fn(stream, fn, NULL, userData, 0);
}

APIGEN_EXPORT cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t stream, cudaHostFn_t fn,
                                                  void *userData)
{
    return enqueue_host_fn(stream, fn, NULL, userData, APIGEN_CUDART_PTSZ);
}

APIGEN_EXPORT cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback,
                                                void *userData, unsigned int flags)
{
    if (flags != 0) return cudaErrorInvalidValue;
    return enqueue_host_fn(stream, NULL, callback, userData, 0);
}

APIGEN_EXPORT cudaError_t cudaStreamAddCallback_ptsz(cudaStream_t stream,
                                                     cudaStreamCallback_t callback, void *userData,
                                                     unsigned int flags)
{
    if (flags != 0) return cudaErrorInvalidValue;
    return enqueue_host_fn(stream, NULL, callback, userData, APIGEN_CUDART_PTSZ);
}

/* Host functions need nothing here any more (the server's stream waits for
 * them); the wrappers stay so that the spec's `wrap:` keeps its exports. */
#define SYNC_WRAP(name, params, args)                                                              \
    APIGEN_EXPORT cudaError_t name params                                                          \
    {                                                                                              \
        return cudart_fwd_##name args;                                                             \
    }
SYNC_WRAP(cudaStreamSynchronize, (cudaStream_t stream), (stream))
SYNC_WRAP(cudaStreamSynchronize_ptsz, (cudaStream_t stream), (stream))
SYNC_WRAP(cudaStreamQuery, (cudaStream_t stream), (stream))
SYNC_WRAP(cudaStreamQuery_ptsz, (cudaStream_t stream), (stream))
SYNC_WRAP(cudaDeviceSynchronize, (void), ())
SYNC_WRAP(cudaEventSynchronize, (cudaEvent_t event), (event))

/* ---- device memory ---------------------------------------------------------------------- */
APIGEN_EXPORT cudaError_t cudaMalloc(void **devPtr, size_t size)
{
    cudaError_t e = cudart_fwd_cudaMalloc(devPtr, size);
    if (e == cudaSuccess && devPtr) ranges_add(&dev_ranges_, *devPtr, size, 0, false);
    return e;
}

APIGEN_EXPORT cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height)
{
    cudaError_t e = cudart_fwd_cudaMallocPitch(devPtr, pitch, width, height);
    if (e == cudaSuccess && devPtr && pitch)
        ranges_add(&dev_ranges_, *devPtr, *pitch * height, 0, false);
    return e;
}

APIGEN_EXPORT cudaError_t cudaMalloc3D(struct cudaPitchedPtr *pitchedDevPtr, struct cudaExtent extent)
{
    cudaError_t e = cudart_fwd_cudaMalloc3D(pitchedDevPtr, extent);
    if (e == cudaSuccess && pitchedDevPtr)
        ranges_add(&dev_ranges_, pitchedDevPtr->ptr,
                   pitchedDevPtr->pitch * extent.height * (extent.depth ? extent.depth : 1), 0,
                   false);
    return e;
}

#define MALLOC_ASYNC(name)                                                                         \
    APIGEN_EXPORT cudaError_t name(void **devPtr, size_t size, cudaStream_t hStream)               \
    {                                                                                              \
        cudaError_t e = cudart_fwd_##name(devPtr, size, hStream);                                  \
        if (e == cudaSuccess && devPtr) ranges_add(&dev_ranges_, *devPtr, size, 0, false);         \
        return e;                                                                                  \
    }
MALLOC_ASYNC(cudaMallocAsync)
MALLOC_ASYNC(cudaMallocAsync_ptsz)

#define MALLOC_POOL(name)                                                                          \
    APIGEN_EXPORT cudaError_t name(void **ptr, size_t size, cudaMemPool_t memPool,                 \
                                   cudaStream_t stream)                                            \
    {                                                                                              \
        cudaError_t e = cudart_fwd_##name(ptr, size, memPool, stream);                             \
        if (e == cudaSuccess && ptr) ranges_add(&dev_ranges_, *ptr, size, 0, false);               \
        return e;                                                                                  \
    }
MALLOC_POOL(cudaMallocFromPoolAsync)
MALLOC_POOL(cudaMallocFromPoolAsync_ptsz)

APIGEN_EXPORT cudaError_t cudaFree(void *devPtr)
{
    cudaError_t e = cudart_fwd_cudaFree(devPtr);
    if (e == cudaSuccess && devPtr) (void)ranges_remove(&dev_ranges_, devPtr, NULL);
    return e;
}

#define FREE_ASYNC(name)                                                                           \
    APIGEN_EXPORT cudaError_t name(void *devPtr, cudaStream_t hStream)                             \
    {                                                                                              \
        cudaError_t e = cudart_fwd_##name(devPtr, hStream);                                        \
        if (e == cudaSuccess && devPtr) (void)ranges_remove(&dev_ranges_, devPtr, NULL);           \
        return e;                                                                                  \
    }
FREE_ASYNC(cudaFreeAsync)
FREE_ASYNC(cudaFreeAsync_ptsz)

/* A __device__ variable's address is device memory too (cudaMemcpyDefault
 * with it resolves like one from cudaMalloc). */
APIGEN_EXPORT cudaError_t cudaGetSymbolAddress(void **devPtr, const void *symbol)
{
    range r;
    size_t size = 0;
    cudaError_t e = cudart_fwd_cudaGetSymbolAddress(devPtr, symbol);
    if (e != cudaSuccess || !devPtr || !*devPtr || ranges_find(&dev_ranges_, *devPtr, &r)) return e;
    if (cudaGetSymbolSize(&size, symbol) == cudaSuccess) ranges_add(&dev_ranges_, *devPtr, size, 0, false);
    return e;
}

/* ---- pinned host memory: guest memory --------------------------------------------------- */
/* The real runtime fails these when it cannot initialize (no device, no
 * driver); cudaFree(NULL) on the server answers exactly that. */
static cudaError_t runtime_ready(void)
{
    return cudart_fwd_cudaFree(NULL);
}

APIGEN_EXPORT cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
    if (!pHost) return cudaErrorInvalidValue;
    cudaError_t e = runtime_ready();
    if (e != cudaSuccess) return e;
    void *p = NULL;
    if (posix_memalign(&p, 4096, size ? size : 1) != 0) return cudaErrorMemoryAllocation;
    ranges_add(&host_ranges_, p, size, flags, true);
    *pHost = p;
    return cudaSuccess;
}

APIGEN_EXPORT cudaError_t cudaMallocHost(void **ptr, size_t size)
{
    return cudaHostAlloc(ptr, size, cudaHostAllocDefault);
}

APIGEN_EXPORT cudaError_t cudaFreeHost(void *ptr)
{
    range r;
    if (!ptr) return cudaSuccess;
    if (!ranges_remove(&host_ranges_, ptr, &r) || !r.owned) return cudaErrorInvalidValue;
    free(ptr);
    return cudaSuccess;
}

APIGEN_EXPORT cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
    range r;
    if (!ptr || !size) return cudaErrorInvalidValue;
    cudaError_t e = runtime_ready();
    if (e != cudaSuccess) return e;
    if (ranges_find(&host_ranges_, ptr, &r)) return cudaErrorHostMemoryAlreadyRegistered;
    ranges_add(&host_ranges_, ptr, size, flags, false);
    return cudaSuccess;
}

APIGEN_EXPORT cudaError_t cudaHostUnregister(void *ptr)
{
    range r;
    if (!ranges_find(&host_ranges_, ptr, &r) || r.owned || r.base != (uintptr_t)ptr)
        return cudaErrorHostMemoryNotRegistered;
    (void)ranges_remove(&host_ranges_, ptr, NULL);
    return cudaSuccess;
}

APIGEN_EXPORT cudaError_t cudaHostGetFlags(unsigned int *pFlags, void *pHost)
{
    range r;
    if (!pFlags || !ranges_find(&host_ranges_, pHost, &r)) return cudaErrorInvalidValue;
    *pFlags = r.flags;
    return cudaSuccess;
}

APIGEN_EXPORT cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attributes,
                                                   const void *ptr)
{
    range r;
    if (attributes && ptr && ranges_find(&host_ranges_, ptr, &r)) {
        int dev = 0;
        (void)cudaGetDevice(&dev);
        memset(attributes, 0, sizeof *attributes);
        attributes->type = cudaMemoryTypeHost;
        attributes->device = dev;
        attributes->hostPointer = (void *)ptr;
        return cudaSuccess;
    }
    return cudart_fwd_cudaPointerGetAttributes(attributes, ptr);
}

/* ---- copies ---------------------------------------------------------------------------- */
/* Host-to-host copies never leave the guest. */
static cudaError_t copy_h2h(void *dst, const void *src, size_t count)
{
    cudaError_t e = runtime_ready();
    if (e != cudaSuccess) return e;
    if (count) memmove(dst, src, count);
    return cudaSuccess;
}

#define MEMCPY(name)                                                                               \
    APIGEN_EXPORT cudaError_t name(MEMCPY_ARGS)                                                    \
    {                                                                                              \
        kind = resolve_kind(dst, src, kind);                                                       \
        if (kind == cudaMemcpyHostToHost) return copy_h2h(dst, src, count);                        \
        return cudart_fwd_##name(dst, src, count, kind);                                           \
    }
MEMCPY(cudaMemcpy)
MEMCPY(cudaMemcpy_ptds)

#define MEMCPY_ASYNC(name)                                                                         \
    APIGEN_EXPORT cudaError_t name(MEMCPYA_ARGS)                                                   \
    {                                                                                              \
        kind = resolve_kind(dst, src, kind);                                                       \
        if (kind == cudaMemcpyHostToHost) {                                                        \
            cudaError_t e_ = cudart_fwd_cudaStreamSynchronize(stream);                             \
            return e_ != cudaSuccess ? e_ : copy_h2h(dst, src, count);                             \
        }                                                                                          \
        return cudart_fwd_##name(dst, src, count, kind, stream);                                   \
    }
MEMCPY_ASYNC(cudaMemcpyAsync)
MEMCPY_ASYNC(cudaMemcpyAsync_ptsz)

static cudaError_t copy2d_h2h(void *dst, size_t dpitch, const void *src, size_t spitch,
                              size_t width, size_t height)
{
    cudaError_t e = runtime_ready();
    if (e != cudaSuccess) return e;
    if (width > dpitch || width > spitch) return cudaErrorInvalidPitchValue;
    for (size_t y = 0; y < height; y++)
        memmove((char *)dst + y * dpitch, (const char *)src + y * spitch, width);
    return cudaSuccess;
}

#define MEMCPY2D(name)                                                                             \
    APIGEN_EXPORT cudaError_t name(M2D_ARGS)                                                       \
    {                                                                                              \
        kind = resolve_kind(dst, src, kind);                                                       \
        if (kind == cudaMemcpyHostToHost)                                                          \
            return copy2d_h2h(dst, dpitch, src, spitch, width, height);                            \
        return cudart_fwd_##name(dst, dpitch, src, spitch, width, height, kind);                   \
    }
MEMCPY2D(cudaMemcpy2D)
MEMCPY2D(cudaMemcpy2D_ptds)

#define MEMCPY2D_ASYNC(name)                                                                       \
    APIGEN_EXPORT cudaError_t name(M2DA_ARGS)                                                      \
    {                                                                                              \
        kind = resolve_kind(dst, src, kind);                                                       \
        if (kind == cudaMemcpyHostToHost) {                                                        \
            cudaError_t e_ = cudart_fwd_cudaStreamSynchronize(stream);                             \
            return e_ != cudaSuccess ? e_ : copy2d_h2h(dst, dpitch, src, spitch, width, height);   \
        }                                                                                          \
        return cudart_fwd_##name(dst, dpitch, src, spitch, width, height, kind, stream);           \
    }
MEMCPY2D_ASYNC(cudaMemcpy2DAsync)
MEMCPY2D_ASYNC(cudaMemcpy2DAsync_ptsz)

/* Symbols: the other side is a device address or host memory. */
static enum cudaMemcpyKind sym_kind(const void *other, enum cudaMemcpyKind kind, bool to_symbol)
{
    if (kind != cudaMemcpyDefault) return kind;
    return is_device(other) ? cudaMemcpyDeviceToDevice
                            : (to_symbol ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost);
}

APIGEN_EXPORT cudaError_t cudaMemcpyToSymbol(TOSYM_ARGS)
{
    return cudart_fwd_cudaMemcpyToSymbol(symbol, src, count, offset, sym_kind(src, kind, true));
}
APIGEN_EXPORT cudaError_t cudaMemcpyToSymbol_ptds(TOSYM_ARGS)
{
    return cudart_fwd_cudaMemcpyToSymbol_ptds(symbol, src, count, offset, sym_kind(src, kind, true));
}
APIGEN_EXPORT cudaError_t cudaMemcpyToSymbolAsync(TOSYMA_ARGS)
{
    return cudart_fwd_cudaMemcpyToSymbolAsync(symbol, src, count, offset,
                                              sym_kind(src, kind, true), stream);
}
APIGEN_EXPORT cudaError_t cudaMemcpyToSymbolAsync_ptsz(TOSYMA_ARGS)
{
    return cudart_fwd_cudaMemcpyToSymbolAsync_ptsz(symbol, src, count, offset,
                                                   sym_kind(src, kind, true), stream);
}
APIGEN_EXPORT cudaError_t cudaMemcpyFromSymbol(FROMSYM_ARGS)
{
    return cudart_fwd_cudaMemcpyFromSymbol(dst, symbol, count, offset, sym_kind(dst, kind, false));
}
APIGEN_EXPORT cudaError_t cudaMemcpyFromSymbol_ptds(FROMSYM_ARGS)
{
    return cudart_fwd_cudaMemcpyFromSymbol_ptds(dst, symbol, count, offset,
                                                sym_kind(dst, kind, false));
}
APIGEN_EXPORT cudaError_t cudaMemcpyFromSymbolAsync(FROMSYMA_ARGS)
{
    return cudart_fwd_cudaMemcpyFromSymbolAsync(dst, symbol, count, offset,
                                                sym_kind(dst, kind, false), stream);
}
APIGEN_EXPORT cudaError_t cudaMemcpyFromSymbolAsync_ptsz(FROMSYMA_ARGS)
{
    return cudart_fwd_cudaMemcpyFromSymbolAsync_ptsz(dst, symbol, count, offset,
                                                     sym_kind(dst, kind, false), stream);
}

/* Arrays: the other side is a device address or host memory. */
static enum cudaMemcpyKind arr_kind(const void *other, enum cudaMemcpyKind kind, bool to_array)
{
    if (kind != cudaMemcpyDefault) return kind;
    return is_device(other) ? cudaMemcpyDeviceToDevice
                            : (to_array ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost);
}

#define TOARR(name)                                                                                \
    APIGEN_EXPORT cudaError_t name(TOARR_ARGS)                                                     \
    {                                                                                              \
        return cudart_fwd_##name(dst, wOffset, hOffset, src, count, arr_kind(src, kind, true));    \
    }
#define TOARRA(name)                                                                               \
    APIGEN_EXPORT cudaError_t name(TOARRA_ARGS)                                                    \
    {                                                                                              \
        return cudart_fwd_##name(dst, wOffset, hOffset, src, count, arr_kind(src, kind, true),     \
                                 stream);                                                          \
    }
#define FROMARR(name)                                                                              \
    APIGEN_EXPORT cudaError_t name(FROMARR_ARGS)                                                   \
    {                                                                                              \
        return cudart_fwd_##name(dst, src, wOffset, hOffset, count, arr_kind(dst, kind, false));   \
    }
#define FROMARRA(name)                                                                             \
    APIGEN_EXPORT cudaError_t name(FROMARRA_ARGS)                                                  \
    {                                                                                              \
        return cudart_fwd_##name(dst, src, wOffset, hOffset, count, arr_kind(dst, kind, false),    \
                                 stream);                                                          \
    }
#define TO2DARR(name)                                                                              \
    APIGEN_EXPORT cudaError_t name(TO2DARR_ARGS)                                                   \
    {                                                                                              \
        return cudart_fwd_##name(dst, wOffset, hOffset, src, spitch, width, height,                \
                                 arr_kind(src, kind, true));                                       \
    }
#define TO2DARRA(name)                                                                             \
    APIGEN_EXPORT cudaError_t name(TO2DARRA_ARGS)                                                  \
    {                                                                                              \
        return cudart_fwd_##name(dst, wOffset, hOffset, src, spitch, width, height,                \
                                 arr_kind(src, kind, true), stream);                               \
    }
#define FROM2DARR(name)                                                                            \
    APIGEN_EXPORT cudaError_t name(FROM2DARR_ARGS)                                                 \
    {                                                                                              \
        return cudart_fwd_##name(dst, dpitch, src, wOffset, hOffset, width, height,                \
                                 arr_kind(dst, kind, false));                                      \
    }
#define FROM2DARRA(name)                                                                           \
    APIGEN_EXPORT cudaError_t name(FROM2DARRA_ARGS)                                                \
    {                                                                                              \
        return cudart_fwd_##name(dst, dpitch, src, wOffset, hOffset, width, height,                \
                                 arr_kind(dst, kind, false), stream);                              \
    }
TOARR(cudaMemcpyToArray)
TOARR(cudaMemcpyToArray_ptds)
TOARRA(cudaMemcpyToArrayAsync)
TOARRA(cudaMemcpyToArrayAsync_ptsz)
FROMARR(cudaMemcpyFromArray)
FROMARR(cudaMemcpyFromArray_ptds)
FROMARRA(cudaMemcpyFromArrayAsync)
FROMARRA(cudaMemcpyFromArrayAsync_ptsz)
TO2DARR(cudaMemcpy2DToArray)
TO2DARR(cudaMemcpy2DToArray_ptds)
TO2DARRA(cudaMemcpy2DToArrayAsync)
TO2DARRA(cudaMemcpy2DToArrayAsync_ptsz)
FROM2DARR(cudaMemcpy2DFromArray)
FROM2DARR(cudaMemcpy2DFromArray_ptds)
FROM2DARRA(cudaMemcpy2DFromArrayAsync)
FROM2DARRA(cudaMemcpy2DFromArrayAsync_ptsz)

/* 3D copies between pitched pointers: one 2D copy per slice. Arrays in a
 * 3D copy are not supported yet (cudaErrorNotSupported, logged once). */
static cudaError_t memcpy3d(const struct cudaMemcpy3DParms *p, cudaStream_t stream, bool async,
                            bool ptds)
{
    static atomic_flag logged = ATOMIC_FLAG_INIT;
    if (!p) return cudaErrorInvalidValue;
    if (p->srcArray || p->dstArray) {
        if (!atomic_flag_test_and_set(&logged))
            apigen_log("cudaMemcpy3D: copies to or from CUDA arrays are not supported remotely; "
                       "use cudaMemcpy2DToArray / cudaMemcpy2DFromArray");
        return cudaErrorNotSupported;
    }
    const struct cudaPitchedPtr *s = &p->srcPtr, *d = &p->dstPtr;
    enum cudaMemcpyKind kind = resolve_kind(d->ptr, s->ptr, p->kind);
    size_t depth = p->extent.depth ? p->extent.depth : 1;
    for (size_t z = 0; z < depth; z++) {
        const char *sp = (const char *)s->ptr +
                         ((p->srcPos.z + z) * s->ysize + p->srcPos.y) * s->pitch + p->srcPos.x;
        char *dp = (char *)d->ptr + ((p->dstPos.z + z) * d->ysize + p->dstPos.y) * d->pitch +
                   p->dstPos.x;
        cudaError_t e;
        if (async)
            e = ptds ? cudaMemcpy2DAsync_ptsz(dp, d->pitch, sp, s->pitch, p->extent.width,
                                              p->extent.height, kind, stream)
                     : cudaMemcpy2DAsync(dp, d->pitch, sp, s->pitch, p->extent.width,
                                         p->extent.height, kind, stream);
        else
            e = ptds ? cudaMemcpy2D_ptds(dp, d->pitch, sp, s->pitch, p->extent.width,
                                         p->extent.height, kind)
                     : cudaMemcpy2D(dp, d->pitch, sp, s->pitch, p->extent.width,
                                    p->extent.height, kind);
        if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
}

APIGEN_EXPORT cudaError_t cudaMemcpy3D(const struct cudaMemcpy3DParms *p)
{
    return memcpy3d(p, 0, false, false);
}
APIGEN_EXPORT cudaError_t cudaMemcpy3D_ptds(const struct cudaMemcpy3DParms *p)
{
    return memcpy3d(p, 0, false, true);
}
APIGEN_EXPORT cudaError_t cudaMemcpy3DAsync(const struct cudaMemcpy3DParms *p, cudaStream_t stream)
{
    return memcpy3d(p, stream, true, false);
}
APIGEN_EXPORT cudaError_t cudaMemcpy3DAsync_ptsz(const struct cudaMemcpy3DParms *p,
                                                 cudaStream_t stream)
{
    return memcpy3d(p, stream, true, true);
}

/* 3D peer copies: every address is a device address (of srcDevice /
 * dstDevice); one device-to-device 2D copy per slice, which unified
 * addressing routes between the devices. */
static cudaError_t memcpy3dpeer(const struct cudaMemcpy3DPeerParms *p, cudaStream_t stream,
                                bool async, bool ptds)
{
    struct cudaMemcpy3DParms q;
    if (!p) return cudaErrorInvalidValue;
    memset(&q, 0, sizeof q);
    q.srcArray = p->srcArray;
    q.srcPos = p->srcPos;
    q.srcPtr = p->srcPtr;
    q.dstArray = p->dstArray;
    q.dstPos = p->dstPos;
    q.dstPtr = p->dstPtr;
    q.extent = p->extent;
    q.kind = cudaMemcpyDeviceToDevice;
    return memcpy3d(&q, stream, async, ptds);
}

APIGEN_EXPORT cudaError_t cudaMemcpy3DPeer(const struct cudaMemcpy3DPeerParms *p)
{
    return memcpy3dpeer(p, 0, false, false);
}
APIGEN_EXPORT cudaError_t cudaMemcpy3DPeer_ptds(const struct cudaMemcpy3DPeerParms *p)
{
    return memcpy3dpeer(p, 0, false, true);
}
APIGEN_EXPORT cudaError_t cudaMemcpy3DPeerAsync(const struct cudaMemcpy3DPeerParms *p,
                                                cudaStream_t stream)
{
    return memcpy3dpeer(p, stream, true, false);
}
APIGEN_EXPORT cudaError_t cudaMemcpy3DPeerAsync_ptsz(const struct cudaMemcpy3DPeerParms *p,
                                                     cudaStream_t stream)
{
    return memcpy3dpeer(p, stream, true, true);
}

/* One forwarded cudaMemRangeGetAttribute per attribute. */
APIGEN_EXPORT cudaError_t cudaMemRangeGetAttributes(void **data, size_t *dataSizes,
                                                    enum cudaMemRangeAttribute *attributes,
                                                    size_t numAttributes, const void *devPtr,
                                                    size_t count)
{
    if (!data || !dataSizes || !attributes || !numAttributes) return cudaErrorInvalidValue;
    for (size_t i = 0; i < numAttributes; i++) {
        cudaError_t e =
            cudaMemRangeGetAttribute(data[i], dataSizes[i], attributes[i], devPtr, count);
        if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
}
