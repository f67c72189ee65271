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
 *   is guest memory: the arena the server maps at the same address, or
 *   memory a kernel reaches through a twin ("host memory a kernel reaches").
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

#include "apigen_boxes.h"
#include "apigen_copy.h"
#include "apigen_rt.h"
#include "cudart_wire.h"
#include "../cuda/capture_mark.h"  /* the driver's captures */
#include "../cuda/pinned_chunks.h" /* the driver's PORTABLE rule */
#include "managed.h"
#include "registered.h"

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
FWD_DECL(cudaFuncSetAttribute, const void *func, enum cudaFuncAttribute attr, int value)
FWD_DECL(cudaStreamEndCapture, cudaStream_t stream, cudaGraph_t *pGraph)
FWD_DECL(cudaStreamEndCapture_ptsz, cudaStream_t stream, cudaGraph_t *pGraph)
FWD_DECL(cudaStreamBeginCapture, cudaStream_t stream, enum cudaStreamCaptureMode mode)
FWD_DECL(cudaStreamBeginCapture_ptsz, cudaStream_t stream, enum cudaStreamCaptureMode mode)
FWD_DECL(cudaStreamIsCapturing, cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus)
FWD_DECL(cudaStreamIsCapturing_ptsz, cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus)
#ifdef APIGEN_HAS_FN_cudaStreamBeginCaptureToGraph /* 12.3 */
#define CAPTURE_TO_GRAPH_ARGS                                                                      \
    cudaStream_t stream, cudaGraph_t graph, const cudaGraphNode_t *dependencies,                   \
        const cudaGraphEdgeData *dependencyData, size_t numDependencies,                           \
        enum cudaStreamCaptureMode mode
FWD_DECL(cudaStreamBeginCaptureToGraph, CAPTURE_TO_GRAPH_ARGS)
FWD_DECL(cudaStreamBeginCaptureToGraph_ptsz, CAPTURE_TO_GRAPH_ARGS)
#endif
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
FWD_DECL(cudaMemcpyPeer, void *dst, int dstDevice, const void *src, int srcDevice, size_t count)
FWD_DECL(cudaMemcpyPeerAsync, void *dst, int dstDevice, const void *src, int srcDevice,
         size_t count, cudaStream_t stream)
FWD_DECL(cudaDeviceCanAccessPeer, int *canAccessPeer, int device, int peerDevice)
FWD_DECL(cudaDeviceEnablePeerAccess, int peerDevice, unsigned int flags)
FWD_DECL(cudaDeviceDisablePeerAccess, int peerDevice)
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
FWD_DECL(cudaHostGetDevicePointer, void **pDevice, void *pHost, unsigned int flags)
FWD_DECL(cudaStreamSynchronize, cudaStream_t stream)
FWD_DECL(cudaStreamSynchronize_ptsz, cudaStream_t stream)
FWD_DECL(cudaStreamQuery, cudaStream_t stream)
FWD_DECL(cudaStreamQuery_ptsz, cudaStream_t stream)
FWD_DECL(cudaDeviceSynchronize, void)
FWD_DECL(cudaEventSynchronize, cudaEvent_t event)
FWD_DECL(cudaEventQuery, cudaEvent_t event)
FWD_DECL(cudaGraphLaunch, cudaGraphExec_t graphExec, cudaStream_t stream)
FWD_DECL(cudaGraphLaunch_ptsz, cudaGraphExec_t graphExec, cudaStream_t stream)
FWD_DECL(cudaMallocManaged, void **devPtr, size_t size, unsigned int flags)
FWD_DECL(cudaMemset, void *devPtr, int value, size_t count)
FWD_DECL(cudaMemset_ptds, void *devPtr, int value, size_t count)
FWD_DECL(cudaMemsetAsync, void *devPtr, int value, size_t count, cudaStream_t stream)
FWD_DECL(cudaMemsetAsync_ptsz, void *devPtr, int value, size_t count, cudaStream_t stream)
FWD_DECL(cudaMemset2D, void *devPtr, size_t pitch, int value, size_t width, size_t height)
FWD_DECL(cudaMemset2D_ptds, void *devPtr, size_t pitch, int value, size_t width, size_t height)
FWD_DECL(cudaMemset2DAsync, void *devPtr, size_t pitch, int value, size_t width, size_t height,
         cudaStream_t stream)
FWD_DECL(cudaMemset2DAsync_ptsz, void *devPtr, size_t pitch, int value, size_t width,
         size_t height, cudaStream_t stream)

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

/* every entry gone, the table kept (a fork child's proxies) */
static void map_clear(u64map *m)
{
    if (m->keys) memset(m->keys, 0, m->cap * sizeof *m->keys);
    m->n = 0;
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

static cudaError_t local_error(cudaError_t e);

/* ---- address ranges: device allocations and pinned host memory ----------------- */
typedef struct range {
    uintptr_t base;
    size_t size;
    unsigned flags; /* host ranges: cudaHostAlloc / cudaHostRegister flags */
    bool owned;     /* host ranges: allocated by us (cudaMallocHost, cudaHostAlloc) */
    int device;     /* host ranges: the device current at the allocation (-1: unknown) */
} range;

typedef struct range_set {
    range *r;
    size_t n, cap;
} range_set;

static range_set dev_ranges_, host_ranges_;

static void ranges_add_on(range_set *s, const void *p, size_t size, unsigned flags, bool owned,
                          int device)
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
    s->r[s->n++] = (range){(uintptr_t)p, size ? size : 1, flags, owned, device};
    pthread_mutex_unlock(&lock_);
}

static void ranges_add(range_set *s, const void *p, size_t size, unsigned flags, bool owned)
{
    ranges_add_on(s, p, size, flags, owned, -1);
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

/* ---- host memory a kernel reaches at its host address -----------------------------------
 * With unified addressing a kernel may be given the host address of pinned
 * or registered memory (Thrust's pinned vectors, zero-copy code without
 * cudaHostGetDevicePointer). The server's device reaches the arena at the
 * same address (runtime/arena_guest.c); every other host range (pinned
 * blocks without an arena, as over tcp://; registered memory) gets, when a
 * launch's parameters first point into it or its device pointer is asked, a
 * device allocation the runtime's twins keep equal to it (registered.c),
 * and launches are given that allocation's address (apigen_twin_translate).
 * Such ranges are the runtime's twin candidates (launches scan their
 * parameters only while some exist). */
static pthread_mutex_t reach_lock_ = PTHREAD_MUTEX_INITIALIZER;

/* The host range holding p outside the arena (the device cannot reach it
 * at p), copied to *r; false: none. */
static bool unreached_range(const void *p, range *r)
{
    return apigen_twin_candidate_maybe((uint64_t)(uintptr_t)p) && ranges_find(&host_ranges_, p, r) &&
           !apigen_arena_owns((const void *)r->base);
}

/* apigen_twin_make: the twin of the host range holding addr, if the device
 * cannot reach it at that address (the server's own device memory there is
 * the server's: never taken for the guest's host memory) */
static int reach_host(uint64_t addr, void *user)
{
    (void)user;
    range r;
    void *dev = NULL;
    if (!unreached_range((const void *)(uintptr_t)addr, &r) || is_device((const void *)(uintptr_t)addr))
        return 0;
    cudaError_t e = cudaSuccess;
    pthread_mutex_lock(&reach_lock_); /* one device allocation per range */
    if (!cudart_registered_device((const void *)r.base, &dev, NULL))
        e = cudart_registered_add((void *)r.base, r.size,
                                  !r.owned && (r.flags & cudaHostRegisterReadOnly));
    pthread_mutex_unlock(&reach_lock_);
    return (int)e;
}

/* The launch's packed parameters, host addresses the device cannot reach
 * given as their twins' (no-op while there is no such range). */
static cudaError_t reach_params(void *buf, size_t size)
{
    if (!apigen_twin_candidates() || !size) return cudaSuccess;
    return (cudaError_t)apigen_twin_translate(buf, size, reach_host, NULL);
}

static bool unreached_at(const void *p)
{
    range r;
    return unreached_range(p, &r);
}

/* A set's destination that is host memory the device cannot reach there:
 * *p becomes its twin's address (a block placed there keeps it), *host
 * true. */
static cudaError_t reach_dst(void **p, bool *host)
{
    uint64_t w = (uint64_t)(uintptr_t)*p; /* a one-word parameter buffer: reach_host decides */
    cudaError_t e = reach_params(&w, sizeof w);
    *host = e == cudaSuccess && (w != (uint64_t)(uintptr_t)*p || apigen_twin_device(*p, NULL, NULL));
    if (*host) *p = (void *)(uintptr_t)w;
    return e;
}

/* cudaMemcpyDefault -> the direction the tracked ranges say. Natively,
 * under unified addressing, a copy may also name pinned or registered host
 * memory as its device side (Thrust copies between a pinned host vector
 * and device memory as device to device): where the device cannot reach
 * that memory at its address, the records tell the direction too. */
static enum cudaMemcpyKind resolve_kind(const void *dst, const void *src, enum cudaMemcpyKind kind)
{
    if ((kind == cudaMemcpyDeviceToDevice || kind == cudaMemcpyDeviceToHost) && unreached_at(src))
        kind = cudaMemcpyDefault;
    if ((kind == cudaMemcpyDeviceToDevice || kind == cudaMemcpyHostToDevice) && unreached_at(dst))
        kind = cudaMemcpyDefault;
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
    uint32_t shipped_on; /* the servers it was shipped to (or is being shipped to), a bit each */
    apigenCudartModule handle;
    struct module *next;
} module;

/* Several servers (APIGEN_SERVER=url1,url2): each registers the program's
 * modules under proxies of its own, so proxies are kept per (value,
 * server); server 0's key is the value itself. */
#define MAX_SERVERS 16
#define SRV_KEY(v, s) ((uint64_t)(uintptr_t)(v) + ((uint64_t)(unsigned)(s) << 48))

static module *modules_;       /* newest first */
static u64map host_to_proxy_;  /* (program address, server) -> that server's proxy */
static u64map proxy_to_name_;  /* program address -> device name (char *) */
static u64map proxy_to_host_;  /* (server proxy, server) -> program address (graph node parameters) */
static u64map var_size_;       /* a __device__/__constant__ variable's program address -> its size + 1 */
static unsigned shipping_[MAX_SERVERS]; /* registrations in flight per server (lock_) */
static pthread_cond_t shipped_ = PTHREAD_COND_INITIALIZER;
static void ship_hook(unsigned server);
static pthread_once_t hook_once_ = PTHREAD_ONCE_INIT;

/* fork(): the child's first call opens a session of its own
 * (runtime/guest.c), where none of the program's modules is registered and
 * the parent's proxies name nothing: the modules are shipped there again by
 * the session hook, which the runtime runs for a fork child's first session
 * before its first call (a program that forks before it uses CUDA, as NVIDIA's
 * IPC samples do, launches its kernels in the child). lock_ is held across
 * fork so the child finds the lists whole; these handlers are registered
 * after the runtime's, so lock_ is taken before the runtime's locks. */
static void fork_prepare_(void)
{
    pthread_mutex_lock(&lock_);
}
static void fork_parent_(void)
{
    pthread_mutex_unlock(&lock_);
}
static void fork_child_(void)
{
    for (module *m = modules_; m; m = m->next) {
        m->shipped_on = 0;
        m->handle = NULL;
    }
    map_clear(&host_to_proxy_);
    map_clear(&proxy_to_host_);
    memset(shipping_, 0, sizeof shipping_);
    pthread_mutex_unlock(&lock_);
}

static void set_hook(void)
{
    apigen_set_session_hook(&cudart_api, ship_hook);
    (void)pthread_atfork(fork_prepare_, fork_parent_, fork_child_);
}

APIGEN_EXPORT void **__cudaRegisterFatBinary(void *fatCubin)
{
    pthread_once(&hook_once_, set_hook); /* further servers get the modules at their start */
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
    if (kind == APIGEN_CUDART_SYM_VAR) (void)map_put(&var_size_, (uint64_t)(uintptr_t)host, size + 1);
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

/* A __managed__ variable: the program reaches it through *hostVarPtrAddress,
 * which the runtime points at the variable's managed memory. The server
 * registers it with its runtime and answers that address; the guest mirrors
 * it there (set_managed_vars, when the module is shipped to server 0). */
APIGEN_EXPORT void __cudaRegisterManagedVar(void **fatCubinHandle, void **hostVarPtrAddress,
                                            char *deviceAddress, const char *deviceName, int ext,
                                            size_t size, int constant, int global)
{
    (void)deviceAddress;
    add_sym(fatCubinHandle, APIGEN_CUDART_SYM_MANAGED, hostVarPtrAddress, deviceName, 0, ext, size,
            constant, global);
}

/* A no-op, said once: the real runtime ties a host variable of the program
 * to a symbol of its module so that device code can name it; the module
 * lives in the server's process, which cannot reach the guest's memory, so
 * nothing is registered there (a symbol query on it fails there). */
APIGEN_EXPORT void __cudaRegisterHostVar(void **fatCubinHandle, const char *deviceName,
                                         char *hostVar, size_t size)
{
    static atomic_flag logged = ATOMIC_FLAG_INIT;
    (void)fatCubinHandle, (void)hostVar, (void)size;
    if (!atomic_flag_test_and_set(&logged))
        apigen_log("cudart: __cudaRegisterHostVar '%s': host variables are not registered "
                   "remotely (the server cannot reach the guest's memory)",
                   deviceName ? deviceName : "?");
}

/* A no-op, said once: the table holds host function pointers of this
 * process (what cudaLibraryGetUnifiedFunction would hand out, unsupported
 * here); the server's process cannot call them. */
APIGEN_EXPORT void __cudaRegisterUnifiedTable(void *table)
{
    static atomic_flag logged = ATOMIC_FLAG_INIT;
    if (table && !atomic_flag_test_and_set(&logged))
        apigen_log("cudart: __cudaRegisterUnifiedTable: unified function tables are not "
                   "registered remotely (host function pointers of this process)");
}

/* The module was shipped to the server at __cudaRegisterFatBinaryEnd (to a
 * further server when its session starts): nothing is left to load. 1 for a
 * fat binary that was registered, 0 for a handle that holds none. */
APIGEN_EXPORT char __cudaInitModule(void **fatCubinHandle)
{
    const module *m = (const module *)fatCubinHandle;
    return m && m->image ? 1 : 0;
}

/* Ships module m to server srv (the caller claimed it in m->shipped_on; no
 * lock held: the registration is a call to that server). */
static void ship_on(module *m, int srv)
{
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
    apigenCudartModule handle = NULL;
    int cur = apigen_current_server(&cudart_api);
    apigen_select_server(&cudart_api, srv); /* the registration goes to server srv */
    cudaError_t e = apigenCudartRegisterModule(m->image, m->image_size, names, names_size, syms,
                                               (uint32_t)m->nsyms, &handle, proxies);
    apigen_select_server(&cudart_api, cur);
    if (e != cudaSuccess) {
        apigen_log("cudart: registering the program's kernels with server %d failed (%d); "
                   "launches there will fail",
                   srv, (int)e);
        goto out;
    }
    pthread_mutex_lock(&lock_);
    if (srv == 0) m->handle = handle;
    for (size_t i = 0; i < m->nsyms; i++) {
        if (m->syms[i].s.kind == APIGEN_CUDART_SYM_MANAGED) continue; /* below */
        (void)map_put(&host_to_proxy_, SRV_KEY(m->syms[i].host, srv), proxies[i]);
        (void)map_put(&proxy_to_host_, SRV_KEY(proxies[i], srv), (uint64_t)(uintptr_t)m->syms[i].host);
    }
    pthread_mutex_unlock(&lock_);
    /* __managed__ variables: the proxy answered is the variable's managed
     * address on the server; the guest mirrors it there and fills the
     * mirror with the variable's initial value */
    for (size_t i = 0; i < m->nsyms && srv == 0; i++) {
        const module_sym *ms = &m->syms[i];
        if (ms->s.kind != APIGEN_CUDART_SYM_MANAGED) continue;
        void *addr = (void *)(uintptr_t)proxies[i];
        size_t size = ms->s.size ? (size_t)ms->s.size : 1;
        if (!addr || cudart_managed_map(addr, size, true, ms->name) != cudaSuccess) {
            if (!addr)
                apigen_log("cudart: __managed__ variable '%s': the server has no managed memory "
                           "for it; the program's accesses will fault", ms->name);
            continue;
        }
        ranges_add(&dev_ranges_, addr, size, 0, false);
        apigen_dev_note(&cudart_api, 0, (uint64_t)(uintptr_t)addr, (uint64_t)size);
        cudart_managed_wrote(addr, size, NULL, false);
        if (cudart_managed_sync(CUDART_SYNC_STREAM, NULL, false) != cudaSuccess)
            apigen_log("cudart: __managed__ variable '%s': its initial value could not be read "
                       "from the server", ms->name);
        *(void **)(uintptr_t)ms->host = addr;
    }
out:
    free(names);
    free(syms);
    free(proxies);
}

/* Ships every module not on server srv yet (lock_ held on entry and exit,
 * released around each registration). wait: then also until no other
 * thread is still shipping there (never while building a call: that
 * thread's registration may need this thread's queue). */
static void ship_all_on(int srv, bool wait)
{
    if (srv < 0 || srv >= MAX_SERVERS) return;
    uint32_t bit = 1u << srv;
    for (;;) {
        module *m = modules_;
        while (m && (m->shipped_on & bit)) m = m->next;
        if (!m) break;
        m->shipped_on |= bit;
        shipping_[srv]++;
        pthread_mutex_unlock(&lock_);
        ship_on(m, srv);
        pthread_mutex_lock(&lock_);
        shipping_[srv]--;
        pthread_cond_broadcast(&shipped_);
    }
    while (wait && shipping_[srv]) pthread_cond_wait(&shipped_, &lock_);
}

/* A further server's session started (apigen_set_session_hook): the
 * program's modules go there before any of its calls. */
static void ship_hook(unsigned server)
{
    pthread_mutex_lock(&lock_);
    ship_all_on((int)server, false);
    pthread_mutex_unlock(&lock_);
}

APIGEN_EXPORT void __cudaRegisterFatBinaryEnd(void **fatCubinHandle)
{
    module *m = (module *)fatCubinHandle;
    if (!m) return;
    pthread_mutex_lock(&lock_);
    ship_all_on(apigen_current_server(&cudart_api), false);
    pthread_mutex_unlock(&lock_);
}

APIGEN_EXPORT void __cudaUnregisterFatBinary(void **fatCubinHandle)
{
    /* The server unregisters the module when this client's session ends;
     * at exit the connection may already be gone. */
    (void)fatCubinHandle;
}

/* The proxy of program address p on server srv (NULL: never registered). */
static const void *map_host_on(const void *p, int srv)
{
    uint64_t v = 0;
    if (!p) return NULL;
    pthread_mutex_lock(&lock_);
    ship_all_on(srv, apigen_building_server() < 0);
    bool ok = map_get(&host_to_proxy_, SRV_KEY(p, srv), &v);
    pthread_mutex_unlock(&lock_);
    return ok ? (const void *)(uintptr_t)v : NULL;
}

/* The spec's `map:` of kernel and variable addresses: the server's proxy,
 * NULL for an address the program never registered (the real runtime then
 * answers cudaErrorInvalidDeviceFunction / cudaErrorInvalidSymbol). */
const void *cudart_map_host(const void *p)
{
    /* the server of the call being built, else the one this thread's calls go to */
    int srv = apigen_building_server();
    return map_host_on(p, srv >= 0 ? srv : apigen_current_server(&cudart_api));
}

/* launch_check.c: the program address of a proxy of the current server
 * (NULL: not a function the program registered) */
const void *cudart_proxy_host(const void *proxy)
{
    uint64_t v = 0;
    if (!proxy) return NULL;
    pthread_mutex_lock(&lock_);
    bool ok = map_get(&proxy_to_host_, SRV_KEY(proxy, apigen_current_server(&cudart_api)), &v);
    pthread_mutex_unlock(&lock_);
    return ok ? (const void *)(uintptr_t)v : NULL;
}

/* A function's limits change (the maximum dynamic shared memory, a cluster
 * shape): launch_check.c asks them again. */
void cudart_launch_forget(const void *proxy);

/* A set to the value a successful set gave the function on this device
 * costs no round trip (runtime/setmemo.c): programs set a kernel's dynamic
 * shared memory limit before each launch of it. Kept while no call but this
 * setter's own forgot the `functions` group (a reset, another setter, the
 * driver's, a module's end). */
static apigen_setmemo func_sets_ = APIGEN_SETMEMO_INIT;
static uint64_t current_device(bool *known);

APIGEN_EXPORT cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value)
{
    bool known;
    uint64_t dev = current_device(&known);
    const uint64_t key[3] = {(uint64_t)(uintptr_t)cudart_map_host(func), (uint64_t)attr,
                             (uint64_t)apigen_current_server(&cudart_api) << 32 | (dev & 0xffffffffu)};
    if (func && known && apigen_setmemo_repeat(&func_sets_, &cudart_api, "functions", key, value)) {
        if (apigen_tracing())
            apigen_trace("cudaFuncSetAttribute(func=%#llx, attr=%d, value=%d) = 0 [cached, the value it has, 0 us]",
                         (unsigned long long)(uintptr_t)func, (int)attr, value);
        return cudaSuccess;
    }
    cudaError_t e = cudart_fwd_cudaFuncSetAttribute(func, attr, value);
    if (e == cudaSuccess) cudart_launch_forget((const void *)(uintptr_t)key[0]); /* the program's address */
    apigen_setmemo_note(&func_sets_, &cudart_api, "functions", key, value,
                        func && known && e == cudaSuccess);
    return e;
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
    unsigned gen; /* a kernel handle's: learnt in this generation of kernels_gen_ */
} layout;

static u64map layouts_; /* proxy or kernel id -> layout * */
/* Kernel handles are the server's driver handles (cudaKernel_t passes
 * through), and the driver reuses an unloaded library's kernel address for
 * a later library's: a kernel's layout learnt before a cudaLibraryUnload or
 * cudaDeviceReset is asked again (the old one stays allocated: a launch of
 * another thread may still read it). Registered functions' proxies are the
 * program's own and never change. */
static unsigned kernels_gen_;

static void kernels_gone(void)
{
    pthread_mutex_lock(&lock_);
    kernels_gen_++;
    pthread_mutex_unlock(&lock_);
}

/* Kernels of libraries the program loaded through the stub
 * (cudaLibraryGetKernel, cudaLibraryEnumerateKernels): natively
 * cudaLaunchKernel & co take such a handle cast to a function address
 * (CUDA 12's context-independent loading). kernel -> its library; 0 once
 * that library is unloaded. Only handles the server gave are sent as
 * kernels: any other unregistered address stays the runtime's
 * cudaErrorInvalidDeviceFunction. */
static u64map lib_kernels_;

static void lib_kernels_note(const cudaKernel_t *k, unsigned n, const void *lib)
{
    pthread_mutex_lock(&lock_);
    for (unsigned i = 0; i < n; i++)
        if (k[i]) (void)map_put(&lib_kernels_, (uint64_t)(uintptr_t)k[i], (uint64_t)(uintptr_t)lib);
    pthread_mutex_unlock(&lock_);
}

static bool lib_kernel_known(const void *f)
{
    uint64_t v = 0;
    pthread_mutex_lock(&lock_);
    bool ok = map_get(&lib_kernels_, (uint64_t)(uintptr_t)f, &v) && v;
    pthread_mutex_unlock(&lock_);
    return ok;
}

static void lib_kernels_drop(const void *lib)
{
    pthread_mutex_lock(&lock_);
    for (size_t i = 0; i < lib_kernels_.cap; i++)
        if (lib_kernels_.keys[i] && lib_kernels_.vals[i] == (uint64_t)(uintptr_t)lib)
            lib_kernels_.vals[i] = 0;
    pthread_mutex_unlock(&lock_);
}

/* The parameter layout of a kernel (one round trip the first time). */
static cudaError_t get_layout(const void *func, cudaKernel_t kernel, const layout **out)
{
    /* a proxy is one server's (the current one's: ParamLayout goes there) */
    uint64_t key = func ? SRV_KEY(func, apigen_current_server(&cudart_api))
                        : (uint64_t)(uintptr_t)kernel, v;
    pthread_mutex_lock(&lock_);
    bool ok = map_get(&layouts_, key, &v);
    unsigned gen = kernels_gen_;
    if (ok && !func && ((const layout *)(uintptr_t)v)->gen != gen) ok = false;
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
    l->gen = gen;
    pthread_mutex_lock(&lock_);
    if (map_get(&layouts_, key, &v) && (func || ((const layout *)(uintptr_t)v)->gen == gen)) {
        /* another thread was first */
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

/* Settled work (apigen_work_*): the scope of a device-wide synchronization
 * is the thread's current device (thread state slot 0, `device`, of
 * specs/cudart.yaml's api.thread_state), unknown until a call told it. */
static uint64_t current_device(bool *known)
{
    uint64_t dev = 0;
    *known = apigen_tstate_get(&cudart_api, 0, &dev);
    return dev;
}

static void work_hint(uint32_t call_id, enum apigen_work kind)
{
    bool known;
    uint64_t dev = current_device(&known);
    apigen_work_hint(&cudart_api, call_id, kind, known, dev);
}

/* A launch configuration no device accepts (an empty or too large grid or
 * block): the launch runs synchronously, so the runtime's refusal is the
 * launch's own error, as natively, not the next call's. */
static bool config_refused(dim3 grid, dim3 block)
{
    return !grid.x || !grid.y || !grid.z || !block.x || !block.y || !block.z ||
           grid.y > 65535 || grid.z > 65535 || block.z > 64 ||
           (uint64_t)block.x * block.y * block.z > 1024;
}

static cudaError_t launch(const void *proxy, cudaKernel_t kernel, dim3 grid, dim3 block,
                          void **args, size_t shmem, cudaStream_t stream,
                          const cudaLaunchAttribute *attrs, unsigned nattrs, uint32_t flags)
{
    const layout *l;
    if (!proxy && !kernel) return local_error(cudaErrorInvalidDeviceFunction);
    cudaError_t e = get_layout(proxy, kernel, &l);
    if (e != cudaSuccess) return e;
    unsigned char small[512], *buf = small;
    if (l->size > sizeof small && !(buf = malloc(l->size)))
        return local_error(cudaErrorMemoryAllocation);
    if (l->n && !args) {
        if (buf != small) free(buf);
        return local_error(cudaErrorInvalidValue);
    }
    memset(buf, 0, l->size);
    for (uint32_t i = 0; i < l->n; i++) memcpy(buf + l->offsets[i], args[i], l->sizes[i]);
    if (config_refused(grid, block)) flags |= APIGEN_CUDART_SYNC;
    if ((e = reach_params(buf, l->size)) != cudaSuccess || (e = cudart_managed_push()) != cudaSuccess) {
        if (buf != small) free(buf);
        return e;
    }
    if ((!stream || stream == cudaStreamLegacy) && !(flags & APIGEN_CUDART_PTSZ))
        work_hint(CUDART_CALL_apigenCudartLaunch, APIGEN_WORK_ORDERED);
    e = apigenCudartLaunch(proxy, kernel, grid, block, shmem, stream, l->size ? buf : NULL,
                           l->size, nattrs ? attrs : NULL, nattrs, flags);
    apigen_work_done(e == cudaSuccess);
    if (buf != small) free(buf);
    if (e == cudaSuccess) cudart_managed_launched(stream, (flags & APIGEN_CUDART_PTSZ) != 0);
    return e;
}

/* A version number, not a feature: nvcc 12.0's programs launch by kernel
 * handle (__cudaGetKernel, exported by libcudart 12.0) although the 12.0
 * headers declare no cudaKernel_t (12.1 does); 11.x has no kernel handles. */
#if CUDART_VERSION >= 12000
static u64map kernel_to_host_; /* kernel id from __cudaGetKernel -> the program's address */

/* <<<>>> launches: nvcc's stub asks for the kernel handle once per launch
 * site, then launches by handle. The guest remembers which program address
 * the handle stands for and launches by address, the path every runtime
 * version takes (cudaLaunchKernel with a registered function). */
APIGEN_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *fun)
{
#ifdef APIGEN_HAS_FN_cudaGetKernel /* 12.1 */
    cudaError_t e = cudaGetKernel(kernel, fun);
#else
    /* 12.0: no cudaGetKernel to ask the server; launches by handle go by the
     * program's address (launch_by_handle), so that address is the handle */
    if (!kernel) return cudaErrorInvalidValue;
    cudaError_t e = cudart_map_host(fun) ? cudaSuccess : cudaErrorInvalidDeviceFunction;
    if (e == cudaSuccess) *kernel = (cudaKernel_t)(uintptr_t)fun;
#endif
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
#endif

/* A launch by address: a registered function's proxy, or a library kernel
 * handle cast to an address (lib_kernels_). */
static cudaError_t launch_by_address(const void *func, dim3 grid, dim3 block, void **args,
                                     size_t shmem, cudaStream_t stream,
                                     const cudaLaunchAttribute *attrs, unsigned nattrs,
                                     uint32_t flags)
{
    const void *proxy = cudart_map_host(func);
    if (!proxy && func && lib_kernel_known(func))
        return launch(NULL, (cudaKernel_t)(uintptr_t)func, grid, block, args, shmem, stream, attrs,
                      nattrs, flags);
    return launch(proxy, NULL, grid, block, args, shmem, stream, attrs, nattrs, flags);
}

#define LAUNCH_KERNEL(name, flags)                                                                 \
    APIGEN_EXPORT cudaError_t name(const void *func, dim3 gridDim, dim3 blockDim, void **args,     \
                                   size_t sharedMem, cudaStream_t stream)                          \
    {                                                                                              \
        return launch_by_address(func, gridDim, blockDim, args, sharedMem, stream, NULL, 0,       \
                                 flags);                                                           \
    }
LAUNCH_KERNEL(cudaLaunchKernel, 0)
LAUNCH_KERNEL(cudaLaunchKernel_ptsz, APIGEN_CUDART_PTSZ)
LAUNCH_KERNEL(cudaLaunchCooperativeKernel, APIGEN_CUDART_COOPERATIVE)
LAUNCH_KERNEL(cudaLaunchCooperativeKernel_ptsz, APIGEN_CUDART_COOPERATIVE | APIGEN_CUDART_PTSZ)

#ifdef APIGEN_HAS_FN_cudaLaunchKernelExC /* 11.8 */
#define LAUNCH_KERNEL_EX(name, flags)                                                              \
    APIGEN_EXPORT cudaError_t name(const cudaLaunchConfig_t *config, const void *func,             \
                                   void **args)                                                    \
    {                                                                                              \
        if (!config) return local_error(cudaErrorInvalidValue);                                    \
        return launch_by_address(func, config->gridDim, config->blockDim, args,                    \
                                 config->dynamicSmemBytes, config->stream, config->attrs,          \
                                 config->numAttrs, flags);                                         \
    }
LAUNCH_KERNEL_EX(cudaLaunchKernelExC, 0)
LAUNCH_KERNEL_EX(cudaLaunchKernelExC_ptsz, APIGEN_CUDART_PTSZ)
#endif

/* The stub's own per-thread-stream variant (generated; the header declares
 * it only under CUDA_API_PER_THREAD_DEFAULT_STREAM). */
cudaError_t cudaStreamIsCapturing_ptsz(cudaStream_t stream, enum cudaStreamCaptureStatus *status);

/* ---- stream capture ---------------------------------------------------------------------
 * What must change inside a capture (host functions that run at every launch
 * of the graph, pageable copies below) asks stream_captures. */
/* Captures this process began that may not have ended, through this stub
 * or the driver's (the family's count, capture_mark.h): launches are not
 * queued meanwhile (launch_check.c), as a capture refuses some of its own,
 * and copies ask whether their stream captures. A capture ends at a
 * successful or invalidated end; a miscount upward only asks the server. */
bool cudart_capture_maybe_active(void)
{
    return !apigen_cuda_captures_none();
}

bool cudart_stream_known_ok(cudaStream_t stream); /* launch_check.c */
void cudart_arena_dst_mark(const void *peer, size_t count); /* launch_check.c */

/* (counted before the call: a copy racing with it must ask) */
static void capture_begins(void)
{
    apigen_cuda_capture_opens();
}

static cudaError_t capture_begun(cudaError_t e)
{
    if (e != cudaSuccess) apigen_cuda_capture_closes();
    return e;
}

#define END_CAPTURE(name)                                                                          \
    APIGEN_EXPORT cudaError_t name(cudaStream_t stream, cudaGraph_t *pGraph)                       \
    {                                                                                              \
        cudaError_t e = cudart_fwd_##name(stream, pGraph);                                         \
        if (e == cudaSuccess || e == cudaErrorStreamCaptureInvalidated)                            \
            apigen_cuda_capture_closes();                                                          \
        return e;                                                                                  \
    }
END_CAPTURE(cudaStreamEndCapture)
END_CAPTURE(cudaStreamEndCapture_ptsz)

#define BEGIN_CAPTURE(name)                                                                        \
    APIGEN_EXPORT cudaError_t name(cudaStream_t stream, enum cudaStreamCaptureMode mode)          \
    {                                                                                              \
        capture_begins();                                                                          \
        return capture_begun(cudart_fwd_##name(stream, mode));                                     \
    }
BEGIN_CAPTURE(cudaStreamBeginCapture)
BEGIN_CAPTURE(cudaStreamBeginCapture_ptsz)
#ifdef APIGEN_HAS_FN_cudaStreamBeginCaptureToGraph /* 12.3 */
#define BEGIN_CAPTURE_TO_GRAPH(name)                                                               \
    APIGEN_EXPORT cudaError_t name(CAPTURE_TO_GRAPH_ARGS)                                          \
    {                                                                                              \
        capture_begins();                                                                          \
        return capture_begun(cudart_fwd_##name(stream, graph, dependencies, dependencyData,        \
                                               numDependencies, mode));                            \
    }
BEGIN_CAPTURE_TO_GRAPH(cudaStreamBeginCaptureToGraph)
BEGIN_CAPTURE_TO_GRAPH(cudaStreamBeginCaptureToGraph_ptsz)
#endif

/* Whether work enqueued on stream now is captured into a graph (flags:
 * PTSZ). Nothing is while this process has no capture open, so only then is
 * the server asked (a round trip). The legacy stream never captures (and
 * asking about it while another stream captures would invalidate that
 * capture). */
static bool stream_captures(cudaStream_t stream, uint32_t flags)
{
    if (!cudart_capture_maybe_active() || stream == cudaStreamLegacy ||
        (!(flags & APIGEN_CUDART_PTSZ) && stream == NULL))
        return false;
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    apigen_hold_deferred(true); /* an async error is the application's next call's */
    cudaError_t q = flags & APIGEN_CUDART_PTSZ ? cudaStreamIsCapturing_ptsz(stream, &cs)
                                               : cudaStreamIsCapturing(stream, &cs);
    apigen_hold_deferred(false);
    return q == cudaSuccess && cs == cudaStreamCaptureStatusActive;
}

/* cudaStreamIsCapturing answered in the guest (PyTorch asks once per
 * training step) while no capture can exist: none open in this process,
 * through this stub or the driver's (the family's count, capture_mark.h; a
 * stream joins a capture only while one is open); the thread's last error known to be success, so the call
 * would carry no queued call's error either (runtime/lasterr.c); a default
 * stream or a stream of the thread's current device the guest knows
 * (launch_check.c). Natively the answer is then cudaStreamCaptureStatusNone
 * and success; anything else asks the server. */
static bool no_capture_possible(cudaStream_t stream, const enum cudaStreamCaptureStatus *status)
{
    return status && !cudart_capture_maybe_active() && apigen_lasterr_clean(&cudart_api) &&
           cudart_stream_known_ok(stream);
}

#define IS_CAPTURING(name)                                                                         \
    APIGEN_EXPORT cudaError_t name(cudaStream_t stream, enum cudaStreamCaptureStatus *status)      \
    {                                                                                              \
        if (!no_capture_possible(stream, status)) return cudart_fwd_##name(stream, status);        \
        *status = cudaStreamCaptureStatusNone;                                                     \
        if (apigen_tracing())                                                                      \
            apigen_trace(#name "(stream=%#llx, pCaptureStatus=%#llx) = 0 [cached, 0 us]",          \
                         (unsigned long long)(uintptr_t)stream,                                    \
                         (unsigned long long)(uintptr_t)status);                                   \
        return cudaSuccess;                                                                        \
    }
IS_CAPTURING(cudaStreamIsCapturing)
IS_CAPTURING(cudaStreamIsCapturing_ptsz)

/* ---- host functions ------------------------------------------------------------------- */
typedef struct host_fn {
    bool is_callback;
    cudaHostFn_t fn;
    cudaStreamCallback_t cb;
    void *user;
    cudaStream_t stream;
    bool persist; /* captured into a graph: kept for every launch of it */
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
        if (!h->persist) free(h);
    }
    (void)apigenCudartHostFnDone(id);
}

static cudaError_t enqueue_host_fn(cudaStream_t stream, cudaHostFn_t fn, cudaStreamCallback_t cb,
                                   void *user, uint32_t flags)
{
    if (!fn && !cb) return local_error(cudaErrorInvalidValue);
    host_fn *h = malloc(sizeof *h);
    if (!h) return local_error(cudaErrorMemoryAllocation);
    *h = (host_fn){cb != NULL, fn, cb, user, stream, false};
    /* Captured into a graph, the host function runs at every launch of the
     * graph, so neither side may free its record after the first run. */
    if (stream_captures(stream, flags)) {
        h->persist = true;
        flags |= APIGEN_CUDART_PERSIST;
    }
    uint64_t id = atomic_fetch_add(&next_host_fn_, 1);
    cudaError_t e = apigenCudartEnqueueHostFn(stream, host_fn_reached, h, id, cb != NULL, flags);
    if (e != cudaSuccess) free(h); /* never enqueued: nothing will run or free it */
    return e;
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
    if (flags != 0) return local_error(cudaErrorInvalidValue);
    return enqueue_host_fn(stream, NULL, callback, userData, 0);
}

APIGEN_EXPORT cudaError_t cudaStreamAddCallback_ptsz(cudaStream_t stream,
                                                     cudaStreamCallback_t callback, void *userData,
                                                     unsigned int flags)
{
    if (flags != 0) return local_error(cudaErrorInvalidValue);
    return enqueue_host_fn(stream, NULL, callback, userData, APIGEN_CUDART_PTSZ);
}

/* Synchronizations: once they succeed, managed memory the device may have
 * written comes back to the guest's mirrors (managed.c). */
#define SYNC_WRAP(name, params, args, what, stream, ptsz)                                          \
    APIGEN_EXPORT cudaError_t name params                                                          \
    {                                                                                              \
        cudaError_t e_ = cudart_fwd_##name args;                                                   \
        if (e_ == cudaSuccess) e_ = cudart_managed_sync(what, stream, ptsz);                       \
        return e_;                                                                                 \
    }

/* The queue a stream names for the calling thread (settled work): the
 * legacy stream and the thread's per-thread stream whatever they are
 * called. */
static uint64_t queue_of(cudaStream_t stream, bool ptsz)
{
    if (!stream) stream = ptsz ? cudaStreamPerThread : cudaStreamLegacy;
    return (uint64_t)(uintptr_t)stream;
}

/* Before a call that returns once all work of stream completed (a copy to
 * pageable memory, a stream synchronization): it settles that queue. */
static void queue_hint(uint32_t call_id, cudaStream_t stream, bool ptsz)
{
    bool known;
    uint64_t dev = current_device(&known);
    apigen_work_hint_queue(&cudart_api, call_id, known, dev, queue_of(stream, ptsz));
}

/* A stream's work known complete (apigen_queue_settled: this thread's last
 * copy to pageable memory or synchronization of it succeeded, and nothing
 * reached the session since, from any thread: PyTorch's read of a loss,
 * cudaMemcpyAsync to the host then cudaStreamSynchronize): nothing to wait
 * for and no error to report, as the runtime would answer; the managed
 * mirrors are still brought up to date. */
#define STREAM_SYNC(name, ptsz)                                                                    \
    APIGEN_EXPORT cudaError_t name(cudaStream_t stream)                                            \
    {                                                                                              \
        bool known_;                                                                               \
        uint64_t dev_ = current_device(&known_);                                                   \
        cudaError_t e_;                                                                            \
        if (apigen_queue_settled(&cudart_api, known_, dev_, queue_of(stream, ptsz))) {             \
            if (apigen_tracing())                                                                  \
                apigen_trace(#name "(stream=%p) = 0 [cached, 0 us]", (void *)stream);              \
            e_ = cudaSuccess;                                                                      \
        } else {                                                                                   \
            queue_hint(CUDART_CALL_##name, stream, ptsz);                                          \
            e_ = cudart_fwd_##name(stream);                                                        \
            apigen_work_done(e_ == cudaSuccess);                                                   \
        }                                                                                          \
        if (e_ == cudaSuccess) e_ = cudart_managed_sync(CUDART_SYNC_STREAM, stream, ptsz);         \
        return e_;                                                                                 \
    }
STREAM_SYNC(cudaStreamSynchronize, false)
STREAM_SYNC(cudaStreamSynchronize_ptsz, true)
SYNC_WRAP(cudaStreamQuery, (cudaStream_t stream), (stream), CUDART_SYNC_STREAM, stream, false)
SYNC_WRAP(cudaStreamQuery_ptsz, (cudaStream_t stream), (stream), CUDART_SYNC_STREAM, stream, true)

/* The device's work known complete (apigen_work_settled: the last
 * cudaDeviceSynchronize, or a synchronous copy to the host on the legacy
 * stream that waited for all of it, succeeded and nothing reached the
 * session since, from any thread): nothing to wait for and no error to
 * report, as the runtime would answer; the managed mirrors are still
 * brought up to date. */
APIGEN_EXPORT cudaError_t cudaDeviceSynchronize(void)
{
    bool known;
    uint64_t dev = current_device(&known);
    cudaError_t e;
    if (apigen_work_settled(&cudart_api, known, dev)) {
        if (apigen_tracing()) apigen_trace("cudaDeviceSynchronize() = 0 [cached, 0 us]");
        e = cudaSuccess;
    } else {
        apigen_work_hint(&cudart_api, CUDART_CALL_cudaDeviceSynchronize, APIGEN_WORK_SETTLES_ALL, known, dev);
        e = cudart_fwd_cudaDeviceSynchronize();
        apigen_work_done(e == cudaSuccess);
    }
    if (e == cudaSuccess) e = cudart_managed_sync(CUDART_SYNC_DEVICE, NULL, false);
    return e;
}
SYNC_WRAP(cudaEventSynchronize, (cudaEvent_t event), (event), CUDART_SYNC_EVENT, NULL, false)
SYNC_WRAP(cudaEventQuery, (cudaEvent_t event), (event), CUDART_SYNC_EVENT, NULL, false)

/* A graph may read and write managed memory like a launch. */
#define GRAPH_LAUNCH(name, ptsz)                                                                   \
    APIGEN_EXPORT cudaError_t name(cudaGraphExec_t graphExec, cudaStream_t stream)                 \
    {                                                                                              \
        cudaError_t e_ = cudart_managed_push();                                                    \
        if (e_ != cudaSuccess) return e_;                                                          \
        e_ = cudart_fwd_##name(graphExec, stream);                                                 \
        if (e_ == cudaSuccess) cudart_managed_launched(stream, ptsz);                              \
        return e_;                                                                                 \
    }
GRAPH_LAUNCH(cudaGraphLaunch, false)
GRAPH_LAUNCH(cudaGraphLaunch_ptsz, true)

/* Sets read the pages around what they set (a dirty page pushed after a
 * set would undo it) and write device memory. One into host memory the
 * device cannot reach at its address (pinned memory over tcp://; natively
 * a set may name pinned memory under unified addressing) sets its twin,
 * read back at the next synchronization, or at once for the synchronous
 * forms, which natively complete before returning when they set pinned
 * memory. */
#define MEMSET(name, params, args, dst, n, stream, ptsz)                                           \
    APIGEN_EXPORT cudaError_t name params                                                          \
    {                                                                                              \
        bool host_;                                                                                \
        cudaError_t e_ = reach_dst(&devPtr, &host_);                                               \
        if (e_ != cudaSuccess) return e_;                                                          \
        if ((e_ = cudart_managed_push()) != cudaSuccess) return e_;                                \
        e_ = cudart_fwd_##name args;                                                               \
        if (e_ == cudaSuccess) cudart_managed_wrote(dst, n, stream, ptsz);                         \
        if (e_ == cudaSuccess && host_ && (stream) == NULL)                                        \
            e_ = cudart_managed_sync(CUDART_SYNC_STREAM, NULL, ptsz);                              \
        return e_;                                                                                 \
    }
MEMSET(cudaMemset, (void *devPtr, int value, size_t count), (devPtr, value, count), devPtr, count, NULL, false)
MEMSET(cudaMemset_ptds, (void *devPtr, int value, size_t count), (devPtr, value, count), devPtr, count, NULL, true)
MEMSET(cudaMemsetAsync, (void *devPtr, int value, size_t count, cudaStream_t stream),
       (devPtr, value, count, stream), devPtr, count, stream, false)
MEMSET(cudaMemsetAsync_ptsz, (void *devPtr, int value, size_t count, cudaStream_t stream),
       (devPtr, value, count, stream), devPtr, count, stream, true)
MEMSET(cudaMemset2D, (void *devPtr, size_t pitch, int value, size_t width, size_t height),
       (devPtr, pitch, value, width, height), devPtr, pitch * height, NULL, false)
MEMSET(cudaMemset2D_ptds, (void *devPtr, size_t pitch, int value, size_t width, size_t height),
       (devPtr, pitch, value, width, height), devPtr, pitch * height, NULL, true)
MEMSET(cudaMemset2DAsync,
       (void *devPtr, size_t pitch, int value, size_t width, size_t height, cudaStream_t stream),
       (devPtr, pitch, value, width, height, stream), devPtr, pitch * height, stream, false)
MEMSET(cudaMemset2DAsync_ptsz,
       (void *devPtr, size_t pitch, int value, size_t width, size_t height, cudaStream_t stream),
       (devPtr, pitch, value, width, height, stream), devPtr, pitch * height, stream, true)

/* ---- managed memory (managed.c) ---------------------------------------------------------- */
APIGEN_EXPORT cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
    cudaError_t e = cudart_fwd_cudaMallocManaged(devPtr, size, flags);
    if (e != cudaSuccess || !devPtr || !*devPtr) return e;
    e = cudart_managed_map(*devPtr, size, false, "cudaMallocManaged");
    if (e != cudaSuccess) {
        (void)cudart_fwd_cudaFree(*devPtr);
        *devPtr = NULL;
        return local_error(e);
    }
    ranges_add(&dev_ranges_, *devPtr, size, 0, false);
    apigen_dev_note(&cudart_api, apigen_current_server(&cudart_api), (uint64_t)(uintptr_t)*devPtr,
                    (uint64_t)size);
    return e;
}

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
    if (e == cudaSuccess && devPtr && pitch) {
        ranges_add(&dev_ranges_, *devPtr, *pitch * height, 0, false);
        /* async calls on it are queued without a round trip (apigen_vouch_dev) */
        apigen_dev_note(&cudart_api, apigen_current_server(&cudart_api),
                        (uint64_t)(uintptr_t)*devPtr, (uint64_t)*pitch * height);
    }
    return e;
}

APIGEN_EXPORT cudaError_t cudaMalloc3D(struct cudaPitchedPtr *pitchedDevPtr, struct cudaExtent extent)
{
    cudaError_t e = cudart_fwd_cudaMalloc3D(pitchedDevPtr, extent);
    if (e == cudaSuccess && pitchedDevPtr) {
        size_t n = pitchedDevPtr->pitch * extent.height * (extent.depth ? extent.depth : 1);
        ranges_add(&dev_ranges_, pitchedDevPtr->ptr, n, 0, false);
        apigen_dev_note(&cudart_api, apigen_current_server(&cudart_api),
                        (uint64_t)(uintptr_t)pitchedDevPtr->ptr, (uint64_t)n);
    }
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
    if (e == cudaSuccess && devPtr) {
        (void)ranges_remove(&dev_ranges_, devPtr, NULL);
        if (cudart_managed_holds(devPtr)) cudart_managed_unmap(devPtr);
    }
    /* cudaFree synchronizes the device */
    if (e == cudaSuccess) e = cudart_managed_sync(CUDART_SYNC_DEVICE, NULL, false);
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
    if (cudaGetSymbolSize(&size, symbol) == cudaSuccess) {
        ranges_add(&dev_ranges_, *devPtr, size, 0, false);
        apigen_dev_note(&cudart_api, apigen_current_server(&cudart_api),
                        (uint64_t)(uintptr_t)*devPtr, (uint64_t)size);
    }
    return e;
}

/* ---- pinned host memory: guest memory --------------------------------------------------- */
/* The real runtime fails these when it cannot initialize (no device, no
 * driver); cudaFree(NULL) on the server answers exactly that. */
static cudaError_t runtime_ready(void)
{
    return cudart_fwd_cudaFree(NULL);
}

/* An error the guest decided itself: natively the runtime would have set it
 * as the thread's last error, so the server is told (queued, in order with
 * the thread's calls: apigenCudartNoteError). A lost connection is not. */
static cudaError_t local_error(cudaError_t e)
{
    if (e != cudaSuccess && e != cudaErrorDevicesUnavailable) (void)apigenCudartNoteError(e);
    return e;
}

FWD_DECL(cudaDeviceReset, void)

/* The reset freed the twins' device allocations (registered.c): a range a
 * kernel reaches again gets a new one. */
APIGEN_EXPORT cudaError_t cudaDeviceReset(void)
{
    cudaError_t e = cudart_fwd_cudaDeviceReset();
    if (e == cudaSuccess) apigen_twin_forget_all();
    if (e == cudaSuccess) kernels_gone(); /* its libraries' kernels went */
    return e;
}

#ifdef APIGEN_HAS_FN_cudaLibraryUnload /* 12.0 */
FWD_DECL(cudaLibraryUnload, cudaLibrary_t library)

APIGEN_EXPORT cudaError_t cudaLibraryUnload(cudaLibrary_t library)
{
    cudaError_t e = cudart_fwd_cudaLibraryUnload(library);
    kernels_gone(); /* whatever the answer: its kernels' addresses may come back as others */
    if (e == cudaSuccess) lib_kernels_drop(library);
    return e;
}
#endif

#ifdef APIGEN_HAS_FN_cudaLibraryGetKernel /* 12.0 */
FWD_DECL(cudaLibraryGetKernel, cudaKernel_t *pKernel, cudaLibrary_t library, const char *name)

APIGEN_EXPORT cudaError_t cudaLibraryGetKernel(cudaKernel_t *pKernel, cudaLibrary_t library,
                                               const char *name)
{
    cudaError_t e = cudart_fwd_cudaLibraryGetKernel(pKernel, library, name);
    if (e == cudaSuccess && pKernel) lib_kernels_note(pKernel, 1, library);
    return e;
}
#endif

#ifdef APIGEN_HAS_FN_cudaLibraryEnumerateKernels /* 12.4 */
FWD_DECL(cudaLibraryEnumerateKernels, cudaKernel_t *kernels, unsigned int numKernels,
         cudaLibrary_t lib)

APIGEN_EXPORT cudaError_t cudaLibraryEnumerateKernels(cudaKernel_t *kernels,
                                                      unsigned int numKernels, cudaLibrary_t lib)
{
    cudaError_t e = cudart_fwd_cudaLibraryEnumerateKernels(kernels, numKernels, lib);
    if (e == cudaSuccess && kernels) lib_kernels_note(kernels, numKernels, lib);
    return e;
}
#endif

/* Pinned host memory is the guest's own (the arena, which the server
 * registered as portable, mapped pinned memory; plain memory without an
 * arena, which the device reaches through a twin: "host memory a kernel
 * reaches" above). Flags the stub cannot honour are refused, never accepted
 * and echoed: write-combined memory would need a mapping the guest cannot
 * make. Portable is what every pinned block here is. */
#define HOST_ALLOC_FLAGS (cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined)
#define HOST_ALLOC_UNSUPPORTED cudaHostAllocWriteCombined
#define HOST_REGISTER_FLAGS                                                                        \
    (cudaHostRegisterPortable | cudaHostRegisterMapped | cudaHostRegisterIoMemory |                \
     cudaHostRegisterReadOnly)
#define HOST_REGISTER_UNSUPPORTED cudaHostRegisterIoMemory

/* The thread's device (-1: unknown), which cudaPointerGetAttributes gives
 * as the device of host memory allocated or registered now (cuda_runtime_api.h:
 * "the device which was current when the memory was allocated or
 * registered"); its error is not the caller's. */
static int device_now(void)
{
    int dev = -1;
    apigen_hold_deferred(true);
    if (cudaGetDevice(&dev) != cudaSuccess) dev = -1;
    apigen_hold_deferred(false);
    return dev;
}

APIGEN_EXPORT cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
    if (!pHost) return local_error(cudaErrorInvalidValue);
    cudaError_t e = runtime_ready();
    if (e != cudaSuccess) return e;
    if (flags & ~(unsigned)HOST_ALLOC_FLAGS) return local_error(cudaErrorInvalidValue);
    if (flags & HOST_ALLOC_UNSUPPORTED) {
        apigen_log("cudaHostAlloc: flags 0x%x: write-combined host memory is not supported "
                   "remotely (cudaErrorNotSupported)", flags);
        return local_error(cudaErrorNotSupported);
    }
    /* from the shared-memory arena when the server took one: it is registered
     * there, so copies from and to it are DMA from the guest's own bytes */
    void *p = apigen_pinned_alloc(size, true);
    /* mapped outside the arena: at its twin's address, as natively where the
     * host pointer is the device pointer (a program may keep it in device
     * memory), else its twin at once, as cudaHostRegisterMapped (its device
     * pointer is asked of pointer queries too) */
    if (!p && (flags & cudaHostAllocMapped) && (e = cudart_registered_place(size, &p)) != cudaSuccess)
        return local_error(e);
    bool placed = p && !apigen_arena_owns(p);
    if (!p && !(p = apigen_pinned_alloc(size, false)))
        return local_error(cudaErrorMemoryAllocation);
    if ((flags & cudaHostAllocMapped) && !apigen_arena_owns(p) && !placed &&
        (e = cudart_registered_add(p, size, false)) != cudaSuccess) {
        free(p);
        return local_error(e);
    }
    ranges_add_on(&host_ranges_, p, size, flags, true, device_now());
    apigen_twin_candidate_add(p, size);
    pc_add(p, size, (flags & cudaHostAllocPortable) != 0);
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
    if (!ranges_find(&host_ranges_, ptr, &r) || !r.owned || r.base != (uintptr_t)ptr)
        return local_error(cudaErrorInvalidValue);
    (void)ranges_remove(&host_ranges_, ptr, NULL);
    apigen_twin_candidate_remove(ptr);
    pc_remove(ptr);
    cudaError_t e = cudart_registered_remove(ptr); /* its twin, if a kernel reached it */
    if (!apigen_arena_free(ptr) && !apigen_twin_unplace(ptr)) free(ptr);
    return e != cudaSuccess ? local_error(e) : cudaSuccess;
}

APIGEN_EXPORT cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
    range r;
    if (!ptr || !size) return local_error(cudaErrorInvalidValue);
    cudaError_t e = runtime_ready();
    if (e != cudaSuccess) return e;
    if (flags & ~(unsigned)HOST_REGISTER_FLAGS) return local_error(cudaErrorInvalidValue);
    if (flags & HOST_REGISTER_UNSUPPORTED) {
        apigen_log("cudaHostRegister: flags 0x%x: I/O memory is memory of the GPU's machine, "
                   "not of this process: refused (cudaErrorNotSupported)", flags);
        return local_error(cudaErrorNotSupported);
    }
    if (ranges_find(&host_ranges_, ptr, &r))
        return local_error(cudaErrorHostMemoryAlreadyRegistered);
    /* mapped: a device allocation kept equal to the range at launches and
     * synchronizations (registered.c); the server's GPU cannot reach it */
    if ((flags & cudaHostRegisterMapped) &&
        (e = cudart_registered_add(ptr, size, (flags & cudaHostRegisterReadOnly) != 0)) != cudaSuccess)
        return local_error(e);
    ranges_add_on(&host_ranges_, ptr, size, flags, false, device_now());
    apigen_twin_candidate_add(ptr, size);
    return cudaSuccess;
}

APIGEN_EXPORT cudaError_t cudaHostUnregister(void *ptr)
{
    range r;
    if (!ranges_find(&host_ranges_, ptr, &r) || r.owned || r.base != (uintptr_t)ptr)
        return local_error(cudaErrorHostMemoryNotRegistered);
    (void)ranges_remove(&host_ranges_, ptr, NULL);
    apigen_twin_candidate_remove(ptr);
    cudaError_t e = cudart_registered_remove(ptr);
    return e != cudaSuccess ? local_error(e) : cudaSuccess;
}

APIGEN_EXPORT cudaError_t cudaHostGetFlags(unsigned int *pFlags, void *pHost)
{
    range r;
    if (!pFlags || !ranges_find(&host_ranges_, pHost, &r))
        return local_error(cudaErrorInvalidValue);
    /* only flags the allocation honours are ever accepted; with unified
     * addressing all pinned and registered memory is mapped, and the real
     * runtime reports cudaHostAllocMapped unasked (H200, driver 580:
     * tests/gpu/pinned-attrs.sh); cudaHostAllocPortable of an allocation as
     * the driver's chunks give it (pinned_chunks.h) */
    unsigned f = r.flags | cudaHostAllocMapped;
    if (r.owned) f = pc_flags(pHost, f, cudaHostAllocPortable);
    *pFlags = f;
    return cudaSuccess;
}

/* Mapped memory: a block in the arena, whose device pointer the server's
 * runtime gives for its address of the bytes (registered mapped there). The
 * pointer is noted as device memory here (cudaMemcpyDefault with it is a
 * copy the server makes, as natively the driver resolves it). */
APIGEN_EXPORT cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost, unsigned int flags)
{
    range r;
    if (!pDevice || !pHost) return local_error(cudaErrorInvalidValue);
    if (!ranges_find(&host_ranges_, pHost, &r)) {
        cudaError_t e = runtime_ready();
        return e != cudaSuccess ? e : local_error(cudaErrorInvalidValue);
    }
    uint64_t left = r.size - ((uintptr_t)pHost - r.base);
    uint64_t peer = apigen_arena_peer_addr(&cudart_api, pHost, left);
    if (!peer) { /* its twin's allocation, made now if no kernel reached it yet */
        if (flags) return local_error(cudaErrorInvalidValue);
        cudaError_t e = (cudaError_t)reach_host((uint64_t)(uintptr_t)pHost, NULL);
        if (e != cudaSuccess) return local_error(e);
        if (cudart_registered_device(pHost, pDevice, NULL)) return cudaSuccess;
        apigen_log("cudaHostGetDevicePointer: %p: no device allocation could stand for this "
                   "host memory: refused (cudaErrorNotSupported)", pHost);
        return local_error(cudaErrorNotSupported);
    }
    cudaError_t e = cudart_fwd_cudaHostGetDevicePointer(pDevice, (void *)(uintptr_t)peer, flags);
    range d;
    /* the arena at one address on both sides (runtime/arena_guest.c): the
     * device pointer is the host pointer, host memory in the records */
    if (e == cudaSuccess && *pDevice && *pDevice != pHost && !ranges_find(&dev_ranges_, *pDevice, &d)) {
        ranges_add(&dev_ranges_, *pDevice, (size_t)left, 0, false);
        apigen_dev_note(&cudart_api, apigen_current_server(&cudart_api),
                        (uint64_t)(uintptr_t)*pDevice, left);
    }
    return e;
}

APIGEN_EXPORT cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attributes,
                                                   const void *ptr)
{
    range r;
    if (attributes && ptr && ranges_find(&host_ranges_, ptr, &r)) {
        /* In the arena the server's runtime answers for its own address of
         * the bytes (registered there: the device pointer is the one a kernel
         * can use); the host pointer is the guest's. */
        uint64_t peer = apigen_arena_peer_addr(&cudart_api, ptr, 1);
        if (peer) {
            cudaError_t e = cudart_fwd_cudaPointerGetAttributes(attributes, (const void *)(uintptr_t)peer);
            if (e == cudaSuccess) {
                attributes->hostPointer = (void *)ptr;
                /* the arena was registered under whichever device was
                 * current then: the block's is the one of its allocation */
                if (r.device >= 0) attributes->device = r.device;
            }
            return e;
        }
        /* Outside the arena (cudaHostRegister, or no arena): the memory is
         * the guest's only; the device pointer is its twin's allocation once
         * a kernel reached it or it was asked for (registered.c), none before
         * (a query makes no device allocation; natively there is one). */
        void *mapped = NULL;
        (void)cudart_registered_device(ptr, &mapped, NULL);
        int dev = r.device;
        if (dev < 0) {
            apigen_hold_deferred(true);
            cudaError_t e = cudaGetDevice(&dev);
            apigen_hold_deferred(false);
            if (e != cudaSuccess) return e;
        }
        memset(attributes, 0, sizeof *attributes);
        attributes->type = cudaMemoryTypeHost;
        attributes->device = dev;
        attributes->hostPointer = (void *)ptr;
        attributes->devicePointer = mapped;
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

/* A device-to-host copy into the arena (cudaMallocHost memory): the server
 * copies straight into its mapping of it, addressed by value with
 * cudaMemcpyDefault (its registered memory), and no bytes come back.
 * Host-to-device copies from the arena travel as an arena reference
 * (apigen_put_bytes_ref). Returns dst's server address, or NULL. */
static void *arena_dst(void *dst, size_t count, enum cudaMemcpyKind kind)
{
    if (kind != cudaMemcpyDeviceToHost || !count) return NULL;
    return (void *)(uintptr_t)apigen_arena_peer_addr(&cudart_api, dst, count);
}

/* ---- pageable copies, staged through the arena ------------------------------------------
 * Over a local transport whose server took the arena (unix://, shm://), a
 * pageable copy goes the way the real runtime copies pageable memory,
 * through pinned staging memory, here carved from the arena, which the
 * server registered: the device DMAs straight to or from the server's
 * mapping of it, and the guest copies between it and the application's
 * memory with apigen_copy_wide (helper threads: one core copies pageable
 * memory at ~7-11 GB/s on the GPU machine, four at 20-26 GB/s). No byte
 * crosses the transport.
 * - STAGE_MIN bytes or more: STAGE_SLOTS slots, pipelined. Host to device,
 *   the guest fills slot k while the device copy of chunk k - 1 DMAs from
 *   the slot before it (cudaMemcpyAsync with an arena reference, an event
 *   per slot); device to host, the device copies of the next chunks run
 *   while the guest copies chunk k out of its slot.
 * - SLOT_MIN_* to STAGE_MIN bytes: one slot and one forwarded call (a
 *   synchronous cudaMemcpy from or to the slot, or cudaMemcpyAsync to the
 *   slot and a stream synchronize: a pageable device-to-host copy is
 *   synchronous natively too). cudaMemcpyAsync from pageable memory to the
 *   device stays a queued call carrying the bytes, which returns at once.
 * Elsewhere (tcp://, ucx://, no arena) a large copy streams through the
 * server's staging blocks instead (spec `stream:`, host_copy.c). */
#define STAGE_MIN ((size_t)4 << 20)
/* below these, the bytes in the call's frame were as fast (H100 sweep of
 * 2026-11-21 20:05: a synchronous 16 KiB host-to-device copy costs the
 * server's cudaMemcpy ~8 us whichever way the bytes came) */
#define SLOT_MIN_D2H ((size_t)4 << 10)
#define SLOT_MIN_H2D ((size_t)32 << 10)
#define STAGE_SLOTS 3

/* 2 to 8 MiB per chunk: STAGE_SLOTS + 1 chunks where that leaves at least
 * 2 MiB each (apigen_copy_wide spreads a chunk over threads), so
 * the device copy of one overlaps the host copy of the next */
static size_t stage_chunk(size_t count)
{
    const size_t mib = (size_t)1 << 20, lo = 2 * mib, hi = 8 * mib;
    size_t c = (count / (STAGE_SLOTS + 1) + mib - 1) & ~(mib - 1);
    return c < lo ? lo : c > hi ? hi : c;
}

typedef struct staging {
    void *slot[STAGE_SLOTS];
    cudaEvent_t ev[STAGE_SLOTS];
    bool busy[STAGE_SLOTS];
    size_t chunk;
} staging;

static void staging_end(staging *s)
{
    for (int i = 0; i < STAGE_SLOTS; i++) {
        if (s->busy[i]) (void)cudaEventSynchronize(s->ev[i]); /* no DMA into a freed slot */
        if (s->ev[i]) (void)cudaEventDestroy(s->ev[i]);
        if (s->slot[i]) (void)apigen_arena_free(s->slot[i]);
    }
}

/* Slots and events for a copy of count bytes; false: use the plain path
 * (no arena here, or it is full). */
static bool stream_on_current_device(cudaStream_t stream);

static bool staging_begin(staging *s, size_t count, const void *host, cudaStream_t stream)
{
    memset(s, 0, sizeof *s);
    if (count < STAGE_MIN || apigen_arena_owns(host)) return false;
    s->chunk = stage_chunk(count);
    for (int i = 0; i < STAGE_SLOTS; i++)
        if (!(s->slot[i] = apigen_arena_alloc(s->chunk))) {
            staging_end(s);
            return false;
        }
    if (!stream_on_current_device(stream)) {
        staging_end(s);
        return false;
    }
    for (int i = 0; i < STAGE_SLOTS; i++)
        if (cudaEventCreateWithFlags(&s->ev[i], cudaEventDisableTiming) != cudaSuccess) {
            staging_end(s);
            return false;
        }
    return true;
}

/* The copy that used slot i is done (its error, if it failed). */
static cudaError_t staging_wait(staging *s, int i)
{
    if (!s->busy[i]) return cudaSuccess;
    s->busy[i] = false;
    return cudaEventSynchronize(s->ev[i]);
}

static cudaError_t staging_issue(staging *s, int i, void *dst, const void *src, size_t n,
                                 enum cudaMemcpyKind kind, cudaStream_t stream)
{
    cudaError_t e = cudart_fwd_cudaMemcpyAsync(dst, src, n, kind, stream);
    if (e == cudaSuccess) e = cudaEventRecord(s->ev[i], stream);
    if (e == cudaSuccess) s->busy[i] = true;
    return e;
}

static cudaError_t staged_h2d(staging *s, void *dst, const void *src, size_t count,
                              cudaStream_t stream)
{
    cudaError_t e = cudaSuccess;
    size_t off = 0;
    int i = 0, last = -1;
    while (e == cudaSuccess && off < count) {
        size_t n = count - off < s->chunk ? count - off : s->chunk;
        if ((e = staging_wait(s, i)) != cudaSuccess) break;
        apigen_copy_wide(s->slot[i], (const char *)src + off, n);
        e = staging_issue(s, i, (char *)dst + off, s->slot[i], n, cudaMemcpyHostToDevice, stream);
        last = i;
        off += n;
        i = (i + 1) % STAGE_SLOTS;
    }
    if (e == cudaSuccess && last >= 0) e = staging_wait(s, last); /* the last chunk landed */
    return e;
}

static cudaError_t staged_d2h(staging *s, void *dst, const void *src, size_t count,
                              cudaStream_t stream)
{
    cudaError_t e = cudaSuccess;
    size_t issued = 0, done = 0;
    void *peer[STAGE_SLOTS];
    for (int i = 0; i < STAGE_SLOTS; i++) /* the server writes its mapping of the slot */
        if (!(peer[i] = (void *)(uintptr_t)apigen_arena_peer_addr(&cudart_api, s->slot[i], s->chunk)))
            return cudaErrorUnknown;
    for (int i = 0; i < STAGE_SLOTS && issued < count && e == cudaSuccess; i++) {
        size_t n = count - issued < s->chunk ? count - issued : s->chunk;
        e = staging_issue(s, i, peer[i], (const char *)src + issued, n, cudaMemcpyDefault, stream);
        issued += e == cudaSuccess ? n : 0;
    }
    for (int i = 0; e == cudaSuccess && done < count; i = (i + 1) % STAGE_SLOTS) {
        size_t n = count - done < s->chunk ? count - done : s->chunk;
        if ((e = staging_wait(s, i)) != cudaSuccess) break;
        apigen_copy_wide((char *)dst + done, s->slot[i], n);
        done += n;
        if (issued < count) {
            size_t m = count - issued < s->chunk ? count - issued : s->chunk;
            e = staging_issue(s, i, peer[i], (const char *)src + issued, m, cudaMemcpyDefault,
                              stream);
            issued += e == cudaSuccess ? m : 0;
        }
    }
    return e;
}

/* The slots' events are made on the current device, and an event must be
 * recorded on a stream of its own device (else the record fails, with the
 * error only in the server's last-error state, and a slot could be reused
 * under a running copy): the default streams, or a stream of this device. */
static bool stream_on_current_device(cudaStream_t stream)
{
    if (stream == 0 || stream == cudaStreamLegacy || stream == cudaStreamPerThread) return true;
#ifdef APIGEN_HAS_FN_cudaStreamGetDevice /* 12.8 */
    int sd = -1, cd = -2;
    apigen_hold_deferred(true); /* a query of the stub's own: it reports no async error */
    bool same = cudaStreamGetDevice(stream, &sd) == cudaSuccess &&
                cudaGetDevice(&cd) == cudaSuccess && sd == cd;
    apigen_hold_deferred(false);
    return same;
#else
    return false;
#endif
}

/* A host <-> device copy whose device side lies inside one allocation this
 * process made, as the real runtime checks before it copies a byte: only
 * those take the arena (any other gets the server's own error). */
static bool stageable(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    range r;
    const void *dev = kind == cudaMemcpyHostToDevice ? dst : src;
    return (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToHost) && dst && src &&
           ranges_find(&dev_ranges_, dev, &r) && count <= r.size - ((uintptr_t)dev - r.base);
}

/* A pageable copy through the arena when it can take one: *used says
 * whether it did (else the caller forwards the copy as it is). */
static cudaError_t copy_staged(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                               cudaStream_t stream, bool *used)
{
    staging s;
    *used = false;
    if (count < STAGE_MIN || !stageable(dst, src, count, kind) ||
        !staging_begin(&s, count, kind == cudaMemcpyHostToDevice ? src : dst, stream))
        return cudaSuccess;
    *used = true;
    cudaError_t e = kind == cudaMemcpyHostToDevice ? staged_h2d(&s, dst, src, count, stream)
                                                   : staged_d2h(&s, dst, src, count, stream);
    staging_end(&s);
    return e;
}

/* One arena slot for a copy of SLOT_MIN_* to STAGE_MIN bytes (see above):
 * the slot, and *peer its server address; NULL: forward it as it is. */
static void *slot_begin(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                        uint64_t *peer)
{
    void *slot;
    size_t min = kind == cudaMemcpyHostToDevice ? SLOT_MIN_H2D : SLOT_MIN_D2H;
    if (count < min || count >= STAGE_MIN || !stageable(dst, src, count, kind) ||
        apigen_arena_owns(kind == cudaMemcpyHostToDevice ? src : dst) ||
        !(slot = apigen_arena_alloc(count)))
        return NULL;
    if (!(*peer = apigen_arena_peer_addr(&cudart_api, slot, count))) { /* not this server's */
        (void)apigen_arena_free(slot);
        return NULL;
    }
    return slot;
}

/* ---- host memory in copies captured into a graph ---------------------------------------
 * Natively a copy between host memory and the device captured into a graph
 * reads or writes the application's buffer at every launch of the graph.
 * Forwarded, the server cannot reach pageable memory, and what the call
 * carried (bytes in its frame, a staging slot, the server's scratch block)
 * is gone by the first launch. So once this process has begun a capture,
 * an async copy on a stream that can capture asks whether it does
 * (stream_captures); a captured one names host memory the server can reach
 * at every launch: cudaMallocHost memory (the arena) as it is, pageable
 * memory through a shadow buffer in the arena with host functions (run here
 * at every launch, as captured host functions are) copying between it and
 * the application's buffer, row by row for a pitched copy. A shadow lives as
 * long as the graph may run: like a captured host function's record, it is
 * never freed. Without an arena (tcp://, ucx://) such a copy is refused
 * with cudaErrorStreamCaptureUnsupported and the capture invalidated, as
 * the driver stub's server does (specs/cuda/host_capture.c). The layouts
 * and shadows are the runtime's (apigen_graph_host, shared with the CUDA
 * driver stub). */

/* The host side of a captured copy, as the forwarded call must name it. */
typedef struct captured_host {
    const void *src; /* to the device: the source (in the arena: sent as a reference) */
    void *dst;       /* from the device: the server's address of the destination, to be
                        sent with cudaMemcpyDefault (the server takes it as it is) */
    apigen_shadow *shadow; /* pageable memory: its shadow; NULL for arena memory */
} captured_host;

/* Before the copy: where its host side is (*cap) and, to the device, the
 * fill of a shadow enqueued ahead of it. width * height bytes at user with
 * rows pitch apart (1D: pitch = width, height = 1; both non-zero). */
static cudaError_t capture_before(captured_host *cap, bool to_device, void *user, size_t pitch,
                                  size_t width, size_t height, cudaStream_t stream, uint32_t flags)
{
    apigen_graph_host_t gh;
    memset(cap, 0, sizeof *cap);
    int r = apigen_graph_host(&cudart_api, user, pitch, width, height, 1, pitch * height, &gh);
    if (r == APIGEN_GRAPH_HOST_BAD) return cudaErrorInvalidValue; /* no host memory is that large */
    if (r == APIGEN_GRAPH_HOST_NO_MEMORY) return cudaErrorMemoryAllocation;
    if (r == APIGEN_GRAPH_HOST_NO_ARENA) {
        static atomic_bool said;
        if (!atomic_exchange(&said, true))
            apigen_log("a copy of host memory captured into a graph needs the shared memory "
                       "arena (a server on this machine: unix:// or shm://, APIGEN_ARENA not 0): "
                       "refused with cudaErrorStreamCaptureUnsupported, the capture invalidated");
        /* as natively for what a capture does not allow: the capture is
         * invalidated (a synchronize of its stream, which the runtime refuses
         * so), its end reports it and hands out no graph without the copy */
        (void)(flags & APIGEN_CUDART_PTSZ ? cudart_fwd_cudaStreamSynchronize_ptsz(stream)
                                          : cudart_fwd_cudaStreamSynchronize(stream));
        return cudaErrorStreamCaptureUnsupported;
    }
    cap->src = gh.local;
    cap->dst = (void *)(uintptr_t)gh.peer;
    cap->shadow = gh.shadow;
    return to_device && gh.shadow ? enqueue_host_fn(stream, apigen_shadow_fill, NULL, gh.shadow, flags)
                                  : cudaSuccess;
}

/* After the copy was issued (e): from the device, the drain of a shadow
 * enqueued behind it. The shadow and its record stay: the graph's nodes
 * refer to them (but for a copy from the device that was not captured). */
static cudaError_t capture_after(captured_host *cap, bool to_device, cudaError_t e,
                                 cudaStream_t stream, uint32_t flags)
{
    if (!cap->shadow || to_device) return e;
    if (e == cudaSuccess)
        return enqueue_host_fn(stream, apigen_shadow_drain, NULL, cap->shadow, flags);
    apigen_shadow_drop(cap->shadow);
    return e;
}

/* Whether a copy of that kind and size on that stream is captured: its
 * host side then goes through capture_before / capture_after. */
static bool host_copy_captured(enum cudaMemcpyKind kind, size_t bytes, cudaStream_t stream,
                               uint32_t flags)
{
    return bytes && (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToHost) &&
           stream_captures(stream, flags);
}

typedef cudaError_t (*memcpy_async_fn)(MEMCPYA_ARGS);

static cudaError_t copy_into_capture(void *dst, const void *src, size_t count,
                                     enum cudaMemcpyKind kind, cudaStream_t stream, uint32_t flags,
                                     memcpy_async_fn fwd)
{
    bool to_dev = kind == cudaMemcpyHostToDevice;
    captured_host cap;
    cudaError_t e = capture_before(&cap, to_dev, to_dev ? (void *)(uintptr_t)src : dst, count,
                                   count, 1, stream, flags);
    if (e != cudaSuccess) return e;
    e = to_dev ? fwd(dst, cap.src, count, kind, stream)
               : fwd(cap.dst, src, count, cudaMemcpyDefault, stream);
    return capture_after(&cap, to_dev, e, stream, flags);
}

#define MEMCPY(name, stream)                                                                       \
    static cudaError_t name##_body(MEMCPY_ARGS);                                                   \
    APIGEN_EXPORT cudaError_t name(MEMCPY_ARGS)                                                    \
    {                                                                                              \
        bool ptsz_ = (stream) == cudaStreamPerThread;                                              \
        cudaError_t e_ = cudart_managed_push();                                                    \
        if (e_ != cudaSuccess) return e_;                                                          \
        e_ = name##_body(dst, src, count, kind);                                                   \
        apigen_work_done(e_ == cudaSuccess);                                                       \
        if (e_ != cudaSuccess || !apigen_mirror_live()) return e_;                                 \
        cudart_managed_wrote(dst, count, NULL, ptsz_);                                             \
        return cudart_managed_sync(CUDART_SYNC_STREAM, NULL, ptsz_); /* synchronous copy */      \
    }                                                                                              \
    static cudaError_t name##_body(MEMCPY_ARGS)                                                    \
    {                                                                                              \
        bool staged_;                                                                              \
        kind = resolve_kind(dst, src, kind);                                                       \
        if (kind == cudaMemcpyHostToHost) return copy_h2h(dst, src, count);                        \
        /* to the host on the legacy stream: returns once it and all before it completed */       \
        if (kind == cudaMemcpyDeviceToHost && (stream) == cudaStreamLegacy)                        \
            work_hint(CUDART_CALL_cudaMemcpy, APIGEN_WORK_SETTLES_ORDERED);                        \
        void *ad_ = arena_dst(dst, count, kind);                                                   \
        if (ad_) return cudart_fwd_##name(ad_, src, count, cudaMemcpyDefault);                     \
        cudaError_t e_ = copy_staged(dst, src, count, kind, stream, &staged_);                     \
        if (staged_) return e_;                                                                    \
        uint64_t peer_;                                                                            \
        void *slot_ = slot_begin(dst, src, count, kind, &peer_);                                   \
        if (!slot_) return cudart_fwd_##name(dst, src, count, kind);                               \
        if (kind == cudaMemcpyHostToDevice) { /* synchronous from pinned memory */                 \
            apigen_copy_wide(slot_, src, count);                                                   \
            e_ = cudart_fwd_##name(dst, slot_, count, kind);                                       \
        } else if ((e_ = cudart_fwd_##name((void *)(uintptr_t)peer_, src, count,                   \
                                           cudaMemcpyDefault)) == cudaSuccess) {                   \
            apigen_copy_wide(dst, slot_, count);                                                   \
        }                                                                                          \
        (void)apigen_arena_free(slot_);                                                            \
        return e_;                                                                                 \
    }
MEMCPY(cudaMemcpy, cudaStreamLegacy)
MEMCPY(cudaMemcpy_ptds, cudaStreamPerThread)

#define MEMCPY_ASYNC(name, dflt)                                                                   \
    static cudaError_t name##_body(MEMCPYA_ARGS);                                                  \
    APIGEN_EXPORT cudaError_t name(MEMCPYA_ARGS)                                                   \
    {                                                                                              \
        cudaError_t e_ = cudart_managed_push();                                                    \
        if (e_ != cudaSuccess) return e_;                                                          \
        e_ = name##_body(dst, src, count, kind, stream);                                           \
        if (e_ == cudaSuccess)                                                                     \
            cudart_managed_wrote(dst, count, stream, (dflt) == cudaStreamPerThread);               \
        return e_;                                                                                 \
    }                                                                                              \
    static cudaError_t name##_body(MEMCPYA_ARGS)                                                   \
    {                                                                                              \
        kind = resolve_kind(dst, src, kind);                                                       \
        if (kind == cudaMemcpyHostToHost) {                                                        \
            cudaError_t e_ = cudart_fwd_cudaStreamSynchronize(stream);                             \
            return e_ != cudaSuccess ? e_ : copy_h2h(dst, src, count);                             \
        }                                                                                          \
        void *ad_ = arena_dst(dst, count, kind);                                                   \
        if (ad_) { /* async, as natively into pinned memory: queued when vouched for */          \
            cudart_arena_dst_mark(ad_, count);                                                     \
            cudaError_t e_ = cudart_fwd_##name(ad_, src, count, cudaMemcpyDefault, stream);        \
            cudart_arena_dst_mark(NULL, 0);                                                        \
            return e_;                                                                             \
        }                                                                                          \
        uint32_t fl_ = (dflt) == cudaStreamPerThread ? APIGEN_CUDART_PTSZ : 0;                     \
        if (!apigen_arena_owns(kind == cudaMemcpyHostToDevice ? src : dst) &&                      \
            host_copy_captured(kind, count, stream, fl_))                                          \
            return copy_into_capture(dst, src, count, kind, stream, fl_, cudart_fwd_##name);       \
        bool staged_;                                                                              \
        cudaError_t e_ = copy_staged(dst, src, count, kind, stream ? stream : (dflt), &staged_);   \
        if (staged_) return e_;                                                                    \
        uint64_t peer_;                                                                            \
        void *slot_ = kind == cudaMemcpyDeviceToHost ? slot_begin(dst, src, count, kind, &peer_)   \
                                                     : NULL;                                       \
        bool d2h_ = kind == cudaMemcpyDeviceToHost && count; /* returns once done: settles */     \
        if (!slot_) {                                                                              \
            if (d2h_) queue_hint(CUDART_CALL_##name, stream, fl_ != 0);                            \
            e_ = cudart_fwd_##name(dst, src, count, kind, stream);                                 \
            if (d2h_) apigen_work_done(e_ == cudaSuccess);                                         \
            return e_;                                                                             \
        }                                                                                          \
        /* to pageable memory: synchronous for the host, as natively */                           \
        cudart_arena_dst_mark((void *)(uintptr_t)peer_, count);                                    \
        e_ = cudart_fwd_##name((void *)(uintptr_t)peer_, src, count, cudaMemcpyDefault, stream);   \
        cudart_arena_dst_mark(NULL, 0);                                                            \
        if (e_ == cudaSuccess) {                                                                   \
            queue_hint(CUDART_CALL_cudaStreamSynchronize, stream ? stream : (dflt), fl_ != 0);     \
            e_ = cudart_fwd_cudaStreamSynchronize(stream ? stream : (dflt));                       \
            apigen_work_done(e_ == cudaSuccess);                                                   \
        }                                                                                          \
        if (e_ == cudaSuccess) apigen_copy_wide(dst, slot_, count);                                \
        (void)apigen_arena_free(slot_);                                                            \
        return e_;                                                                                 \
    }
MEMCPY_ASYNC(cudaMemcpyAsync, (cudaStream_t)0)
MEMCPY_ASYNC(cudaMemcpyAsync_ptsz, cudaStreamPerThread)

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
        cudaError_t e_ = cudart_managed_push();                                                    \
        if (e_ != cudaSuccess) return e_;                                                          \
        e_ = cudart_fwd_##name(dst, dpitch, src, spitch, width, height, kind);                     \
        if (e_ != cudaSuccess || !apigen_mirror_live()) return e_;                                 \
        cudart_managed_wrote(dst, dpitch * height, NULL, false);                                   \
        return cudart_managed_sync(CUDART_SYNC_STREAM, NULL, false);                               \
    }
MEMCPY2D(cudaMemcpy2D)
MEMCPY2D(cudaMemcpy2D_ptds)

/* A captured pitched copy (also every slice of a 3D one) names host memory
 * the server reaches at every launch (capture_before): the same pitch,
 * rows of width bytes. */
#define MEMCPY2D_ASYNC(name, fl)                                                                   \
    static cudaError_t name##_body(M2DA_ARGS);                                                     \
    APIGEN_EXPORT cudaError_t name(M2DA_ARGS)                                                      \
    {                                                                                              \
        cudaError_t e_ = cudart_managed_push(); /* managed memory the host wrote goes first */    \
        if (e_ != cudaSuccess) return e_;                                                          \
        e_ = name##_body(dst, dpitch, src, spitch, width, height, kind, stream);                   \
        if (e_ == cudaSuccess) cudart_managed_wrote(dst, dpitch * height, stream, (fl) != 0);      \
        return e_;                                                                                 \
    }                                                                                              \
    static cudaError_t name##_body(M2DA_ARGS)                                                      \
    {                                                                                              \
        kind = resolve_kind(dst, src, kind);                                                       \
        if (kind == cudaMemcpyHostToHost) {                                                        \
            cudaError_t e_ = cudart_fwd_cudaStreamSynchronize(stream);                             \
            return e_ != cudaSuccess ? e_ : copy2d_h2h(dst, dpitch, src, spitch, width, height);   \
        }                                                                                          \
        bool to_dev_ = kind == cudaMemcpyHostToDevice;                                             \
        size_t pitch_ = to_dev_ ? spitch : dpitch;                                                 \
        if (height && width <= pitch_ && host_copy_captured(kind, width, stream, fl)) {            \
            captured_host cap_;                                                                    \
            cudaError_t e_ = capture_before(&cap_, to_dev_, to_dev_ ? (void *)(uintptr_t)src : dst, \
                                            pitch_, width, height, stream, fl);                    \
            if (e_ != cudaSuccess) return e_;                                                      \
            e_ = to_dev_ ? cudart_fwd_##name(dst, dpitch, cap_.src, spitch, width, height, kind,   \
                                             stream)                                               \
                         : cudart_fwd_##name(cap_.dst, dpitch, src, spitch, width, height,         \
                                             cudaMemcpyDefault, stream);                           \
            return capture_after(&cap_, to_dev_, e_, stream, fl);                                  \
        }                                                                                          \
        return cudart_fwd_##name(dst, dpitch, src, spitch, width, height, kind, stream);           \
    }
MEMCPY2D_ASYNC(cudaMemcpy2DAsync, 0)
MEMCPY2D_ASYNC(cudaMemcpy2DAsync_ptsz, APIGEN_CUDART_PTSZ)

/* Symbols: the other side is a device address or host memory. */
static enum cudaMemcpyKind sym_kind(const void *other, enum cudaMemcpyKind kind, bool to_symbol)
{
    if (kind != cudaMemcpyDefault) return kind;
    return is_device(other) ? cudaMemcpyDeviceToDevice
                            : (to_symbol ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost);
}

/* async_check of cudaMemcpyToSymbol(_ptds) (specs/cudart.yaml): queued only
 * when the runtime cannot refuse it: the thread's device is known (a
 * cudaSetDevice or cudaGetDevice of this thread succeeded: there is a
 * driver and a device; without one the call's own error must come at the
 * call), host bytes that travel with the call (CUDA promises only that a
 * pageable source is consumed when the call returns; an arena block, pinned
 * memory, is read when the copy runs, so it goes synchronously, as
 * natively) into a variable the program registered, within its size. Its
 * device-side errors come at the next synchronizing call, as a launch's. */
bool cudart_may_queue_to_symbol(const void *symbol, const void *src, size_t count, size_t offset,
                                enum cudaMemcpyKind kind)
{
    uint64_t size1 = 0;
    bool dev_known;
    (void)current_device(&dev_known);
    if (!dev_known || kind != cudaMemcpyHostToDevice || !src || !count || apigen_arena_owns(src) ||
        apigen_arena_owns((const char *)src + count - 1))
        return false;
    pthread_mutex_lock(&lock_);
    bool known = map_get(&var_size_, (uint64_t)(uintptr_t)symbol, &size1);
    pthread_mutex_unlock(&lock_);
    return known && offset < size1 - 1 && count <= size1 - 1 - offset && cudart_map_host(symbol);
}

APIGEN_EXPORT cudaError_t cudaMemcpyToSymbol(TOSYM_ARGS)
{
    /* work on the legacy stream, ordered before a later copy to the host */
    work_hint(CUDART_CALL_cudaMemcpyToSymbol, APIGEN_WORK_ORDERED);
    cudaError_t e = cudart_fwd_cudaMemcpyToSymbol(symbol, src, count, offset, sym_kind(src, kind, true));
    apigen_work_done(e == cudaSuccess);
    return e;
}
APIGEN_EXPORT cudaError_t cudaMemcpyToSymbol_ptds(TOSYM_ARGS)
{
    return cudart_fwd_cudaMemcpyToSymbol_ptds(symbol, src, count, offset, sym_kind(src, kind, true));
}
/* A captured copy to or from a symbol from or to host memory: the same
 * copy to or from the symbol's device address (its host side as above). */
static cudaError_t symbol_copy_captured(bool to_symbol, const void *symbol, void *host,
                                        size_t count, size_t offset, cudaStream_t stream,
                                        uint32_t fl)
{
    void *dev = NULL;
    cudaError_t e = cudaGetSymbolAddress(&dev, symbol);
    if (e != cudaSuccess) return e;
    char *at = (char *)dev + offset;
    return fl ? cudaMemcpyAsync_ptsz(to_symbol ? at : host, to_symbol ? host : at, count,
                                     to_symbol ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost,
                                     stream)
              : cudaMemcpyAsync(to_symbol ? at : host, to_symbol ? host : at, count,
                                to_symbol ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, stream);
}

#define TOSYM_ASYNC(name, fl)                                                                      \
    APIGEN_EXPORT cudaError_t name(TOSYMA_ARGS)                                                    \
    {                                                                                              \
        kind = sym_kind(src, kind, true);                                                          \
        if (host_copy_captured(kind, count, stream, fl))                                           \
            return symbol_copy_captured(true, symbol, (void *)(uintptr_t)src, count, offset,       \
                                        stream, fl);                                               \
        return cudart_fwd_##name(symbol, src, count, offset, kind, stream);                        \
    }
TOSYM_ASYNC(cudaMemcpyToSymbolAsync, 0)
TOSYM_ASYNC(cudaMemcpyToSymbolAsync_ptsz, APIGEN_CUDART_PTSZ)
APIGEN_EXPORT cudaError_t cudaMemcpyFromSymbol(FROMSYM_ARGS)
{
    kind = sym_kind(dst, kind, false);
    if (kind == cudaMemcpyDeviceToHost) work_hint(CUDART_CALL_cudaMemcpyFromSymbol, APIGEN_WORK_SETTLES_ORDERED);
    cudaError_t e = cudart_fwd_cudaMemcpyFromSymbol(dst, symbol, count, offset, kind);
    apigen_work_done(e == cudaSuccess);
    return e;
}
APIGEN_EXPORT cudaError_t cudaMemcpyFromSymbol_ptds(FROMSYM_ARGS)
{
    return cudart_fwd_cudaMemcpyFromSymbol_ptds(dst, symbol, count, offset,
                                                sym_kind(dst, kind, false));
}
#define FROMSYM_ASYNC(name, fl)                                                                    \
    APIGEN_EXPORT cudaError_t name(FROMSYMA_ARGS)                                                  \
    {                                                                                              \
        kind = sym_kind(dst, kind, false);                                                         \
        if (host_copy_captured(kind, count, stream, fl))                                           \
            return symbol_copy_captured(false, symbol, dst, count, offset, stream, fl);            \
        return cudart_fwd_##name(dst, symbol, count, offset, kind, stream);                        \
    }
FROMSYM_ASYNC(cudaMemcpyFromSymbolAsync, 0)
FROMSYM_ASYNC(cudaMemcpyFromSymbolAsync_ptsz, APIGEN_CUDART_PTSZ)

static int arr2d_large(cudaArray_t a, size_t wOffset, size_t hOffset, const void *host,
                       size_t pitch, size_t width, size_t height, bool to_array,
                       enum cudaMemcpyKind kind, cudaStream_t stream, bool async, bool ptds,
                       cudaError_t *e);
/* Arrays: the other side is a device address or host memory. */
static enum cudaMemcpyKind arr_kind(const void *other, enum cudaMemcpyKind kind, bool to_array)
{
    if (kind != cudaMemcpyDefault) return kind;
    return is_device(other) ? cudaMemcpyDeviceToDevice
                            : (to_array ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost);
}

/* A 2D copy between host memory and an array larger than a box goes as a
 * 3D copy in boxes (arr2d_large); ptds_ is the _ptds / _ptsz form. */
#define LARGE2D(a, w, h, host, pitch, width, height, to, kind, stream, async, ptds_)              \
    do {                                                                                           \
        cudaError_t big_;                                                                          \
        if (arr2d_large(a, w, h, host, pitch, width, height, to, kind, stream, async, ptds_,      \
                        &big_))                                                                    \
            return big_;                                                                           \
    } while (0)

#define TOARR(name)                                                                                \
    APIGEN_EXPORT cudaError_t name(TOARR_ARGS)                                                     \
    {                                                                                              \
        return cudart_fwd_##name(dst, wOffset, hOffset, src, count, arr_kind(src, kind, true));    \
    }
/* Captured (host_copy_captured), the host side as capture_before says. */
#define TOARRA(name, fl)                                                                           \
    APIGEN_EXPORT cudaError_t name(TOARRA_ARGS)                                                    \
    {                                                                                              \
        kind = arr_kind(src, kind, true);                                                          \
        captured_host cap_ = {src, NULL, NULL};                                                    \
        bool captured_ = host_copy_captured(kind, count, stream, fl);                              \
        cudaError_t e_ = captured_ ? capture_before(&cap_, true, (void *)(uintptr_t)src, count,    \
                                                    count, 1, stream, fl)                          \
                                   : cudaSuccess;                                                  \
        if (e_ != cudaSuccess) return e_;                                                          \
        e_ = cudart_fwd_##name(dst, wOffset, hOffset, cap_.src, count, kind, stream);              \
        return captured_ ? capture_after(&cap_, true, e_, stream, fl) : e_;                        \
    }
#define FROMARR(name)                                                                              \
    APIGEN_EXPORT cudaError_t name(FROMARR_ARGS)                                                   \
    {                                                                                              \
        return cudart_fwd_##name(dst, src, wOffset, hOffset, count, arr_kind(dst, kind, false));   \
    }
#define FROMARRA(name, fl)                                                                         \
    APIGEN_EXPORT cudaError_t name(FROMARRA_ARGS)                                                  \
    {                                                                                              \
        kind = arr_kind(dst, kind, false);                                                         \
        if (!host_copy_captured(kind, count, stream, fl))                                          \
            return cudart_fwd_##name(dst, src, wOffset, hOffset, count, kind, stream);             \
        captured_host cap_;                                                                        \
        cudaError_t e_ = capture_before(&cap_, false, dst, count, count, 1, stream, fl);           \
        if (e_ != cudaSuccess) return e_;                                                          \
        e_ = cudart_fwd_##name(cap_.dst, src, wOffset, hOffset, count, cudaMemcpyDefault, stream); \
        return capture_after(&cap_, false, e_, stream, fl);                                        \
    }
#define TO2DARR(name)                                                                              \
    APIGEN_EXPORT cudaError_t name(TO2DARR_ARGS)                                                   \
    {                                                                                              \
        LARGE2D(dst, wOffset, hOffset, src, spitch, width, height, true, kind, 0, false,          \
                sizeof #name > sizeof "cudaMemcpy2DToArray");                                     \
        return cudart_fwd_##name(dst, wOffset, hOffset, src, spitch, width, height,                \
                                 arr_kind(src, kind, true));                                       \
    }
#define TO2DARRA(name, fl)                                                                         \
    APIGEN_EXPORT cudaError_t name(TO2DARRA_ARGS)                                                  \
    {                                                                                              \
        kind = arr_kind(src, kind, true);                                                          \
        captured_host cap_ = {src, NULL, NULL};                                                    \
        bool captured_ = height && width <= spitch && host_copy_captured(kind, width, stream, fl); \
        if (!captured_)                                                                            \
            LARGE2D(dst, wOffset, hOffset, src, spitch, width, height, true, kind, stream, true,  \
                    (fl) != 0);                                                                    \
        cudaError_t e_ = captured_ ? capture_before(&cap_, true, (void *)(uintptr_t)src, spitch,   \
                                                    width, height, stream, fl)                     \
                                   : cudaSuccess;                                                  \
        if (e_ != cudaSuccess) return e_;                                                          \
        e_ = cudart_fwd_##name(dst, wOffset, hOffset, cap_.src, spitch, width, height, kind,       \
                               stream);                                                            \
        return captured_ ? capture_after(&cap_, true, e_, stream, fl) : e_;                        \
    }
#define FROM2DARR(name)                                                                            \
    APIGEN_EXPORT cudaError_t name(FROM2DARR_ARGS)                                                 \
    {                                                                                              \
        LARGE2D((cudaArray_t)(uintptr_t)src, wOffset, hOffset, dst, dpitch, width, height, false, \
                kind, 0, false, sizeof #name > sizeof "cudaMemcpy2DFromArray");                   \
        return cudart_fwd_##name(dst, dpitch, src, wOffset, hOffset, width, height,                \
                                 arr_kind(dst, kind, false));                                      \
    }
#define FROM2DARRA(name, fl)                                                                       \
    APIGEN_EXPORT cudaError_t name(FROM2DARRA_ARGS)                                                \
    {                                                                                              \
        kind = arr_kind(dst, kind, false);                                                         \
        if (!(height && width <= dpitch && host_copy_captured(kind, width, stream, fl))) {         \
            LARGE2D((cudaArray_t)(uintptr_t)src, wOffset, hOffset, dst, dpitch, width, height,    \
                    false, kind, stream, true, (fl) != 0);                                         \
            return cudart_fwd_##name(dst, dpitch, src, wOffset, hOffset, width, height, kind,      \
                                     stream);                                                      \
        }                                                                                          \
        captured_host cap_;                                                                        \
        cudaError_t e_ = capture_before(&cap_, false, dst, dpitch, width, height, stream, fl);     \
        if (e_ != cudaSuccess) return e_;                                                          \
        e_ = cudart_fwd_##name(cap_.dst, dpitch, src, wOffset, hOffset, width, height,             \
                               cudaMemcpyDefault, stream);                                         \
        return capture_after(&cap_, false, e_, stream, fl);                                        \
    }
TOARR(cudaMemcpyToArray)
TOARR(cudaMemcpyToArray_ptds)
TOARRA(cudaMemcpyToArrayAsync, 0)
TOARRA(cudaMemcpyToArrayAsync_ptsz, APIGEN_CUDART_PTSZ)
FROMARR(cudaMemcpyFromArray)
FROMARR(cudaMemcpyFromArray_ptds)
FROMARRA(cudaMemcpyFromArrayAsync, 0)
FROMARRA(cudaMemcpyFromArrayAsync_ptsz, APIGEN_CUDART_PTSZ)
TO2DARR(cudaMemcpy2DToArray)
TO2DARR(cudaMemcpy2DToArray_ptds)
TO2DARRA(cudaMemcpy2DToArrayAsync, 0)
TO2DARRA(cudaMemcpy2DToArrayAsync_ptsz, APIGEN_CUDART_PTSZ)
FROM2DARR(cudaMemcpy2DFromArray)
FROM2DARR(cudaMemcpy2DFromArray_ptds)
FROM2DARRA(cudaMemcpy2DFromArrayAsync, 0)
FROM2DARRA(cudaMemcpy2DFromArrayAsync_ptsz, APIGEN_CUDART_PTSZ)

/* A CUDA array's element size in bytes. */
static cudaError_t array_elem(cudaArray_t a, size_t *elem)
{
    struct cudaChannelFormatDesc d;
    struct cudaExtent x;
    unsigned int flags;
    cudaError_t e = cudaArrayGetInfo(&d, &x, &flags, a);
    if (e != cudaSuccess) return e;
    *elem = (size_t)(d.x + d.y + d.z + d.w) / 8;
    return *elem ? cudaSuccess : cudaErrorInvalidValue;
}
static cudaError_t bad_args(void);

/* Packs (to_buf) or unpacks the host side of a 3D copy with an array: the
 * region of a pitched host pointer, row by row, to or from a dense buffer
 * of `row` bytes per row. */
static void host_region(const struct cudaPitchedPtr *hp, struct cudaPos pos, size_t row,
                        size_t height, size_t depth, unsigned char *buf, bool to_buf)
{
    for (size_t z = 0; z < depth; z++)
        for (size_t y = 0; y < height; y++) {
            unsigned char *h = (unsigned char *)hp->ptr +
                               ((pos.z + z) * hp->ysize + pos.y + y) * hp->pitch + pos.x;
            unsigned char *b = buf + (z * height + y) * row;
            if (to_buf) memcpy(b, h, row);
            else memcpy(h, b, row);
        }
}

/* A 3D copy with a CUDA array on either side: the server's
 * cudaMemcpy3D(Async) with the array handles translated. A host side
 * travels as a dense buffer (extent.width is in the array's elements), in
 * boxes of at most ARRAY_CHUNK bytes (array_boxes): a copy of any size
 * crosses the transport with bounded memory on both sides, and boxes from
 * host memory are pipelined (every box but the last one sent without
 * waiting: the server copies one while the next one travels; an error of
 * an earlier box is returned by the last one, the thread's next
 * synchronous call). */
#define ARRAY_CHUNK ((size_t)4 << 20)

static cudaError_t array_box(const struct cudaMemcpy3DParms *p, size_t elem, cudaStream_t stream,
                             bool async, bool ptds, bool pipe, unsigned char *buf)
{
    struct cudaMemcpy3DParms q = *p;
    size_t depth = p->extent.depth ? p->extent.depth : 1;
    bool host_src = !p->srcArray && p->srcPtr.ptr && !is_device(p->srcPtr.ptr);
    bool host_dst = !p->dstArray && p->dstPtr.ptr && !is_device(p->dstPtr.ptr);
    size_t row = p->extent.width * elem, n = row * p->extent.height * depth;
    if (host_src) {
        host_region(&p->srcPtr, p->srcPos, row, p->extent.height, depth, buf, true);
        q.srcPtr = (struct cudaPitchedPtr){NULL, row, p->extent.width, p->extent.height};
        q.srcPos = (struct cudaPos){0, 0, 0};
    }
    if (host_dst) {
        q.dstPtr = (struct cudaPitchedPtr){NULL, row, p->extent.width, p->extent.height};
        q.dstPos = (struct cudaPos){0, 0, 0};
    }
    uint32_t fl = (async ? APIGEN_CUDART_ASYNC : 0) | (ptds ? APIGEN_CUDART_PTSZ : 0);
    if (host_src && !host_dst)
        return apigenCudartMemcpy3DIn(&q, buf, n, stream, fl | (pipe ? APIGEN_CUDART_PIPE : 0));
    cudaError_t e = apigenCudartMemcpy3D(&q, host_src ? buf : NULL, host_src ? n : 0,
                                         host_dst ? buf : NULL, host_dst ? n : 0, stream, fl);
    if (e == cudaSuccess && host_dst)
        host_region(&p->dstPtr, p->dstPos, row, p->extent.height, depth, buf, false);
    return e;
}

/* The boxes of a copy of w x h x d elements (apigen_boxes). Positions
 * move in elements on an array side, in bytes on a pointer side. */
static cudaError_t array_boxes(const struct cudaMemcpy3DParms *p, size_t elem, cudaStream_t stream,
                               bool async, bool ptds)
{
    apigen_boxes it = apigen_boxes_of(p->extent.width, elem, p->extent.height,
                                      p->extent.depth ? p->extent.depth : 1, ARRAY_CHUNK);
    size_t cap = it.size.w * it.size.h * it.size.d * elem;
    unsigned char *buf = malloc(cap ? cap : 1);
    if (!buf) return local_error(cudaErrorMemoryAllocation);
    cudaError_t e = cudaSuccess;
    for (apigen_box b; e == cudaSuccess && apigen_box_next(&it, &b);) {
        struct cudaMemcpy3DParms q = *p;
        q.extent = (struct cudaExtent){b.w, b.h, b.d};
        size_t sx = p->srcArray ? b.x : b.x * elem, dx = p->dstArray ? b.x : b.x * elem;
        q.srcPos = (struct cudaPos){p->srcPos.x + sx, p->srcPos.y + b.y, p->srcPos.z + b.z};
        q.dstPos = (struct cudaPos){p->dstPos.x + dx, p->dstPos.y + b.y, p->dstPos.z + b.z};
        e = array_box(&q, elem, stream, async, ptds, !b.last, buf);
    }
    free(buf);
    return e;
}

static cudaError_t memcpy3d_array(const struct cudaMemcpy3DParms *p, cudaStream_t stream,
                                  bool async, bool ptds)
{
    size_t elem = 1, depth = p->extent.depth ? p->extent.depth : 1;
    cudaError_t e = array_elem(p->srcArray ? p->srcArray : p->dstArray, &elem);
    if (e != cudaSuccess) return e;
    bool host_src = !p->srcArray && p->srcPtr.ptr && !is_device(p->srcPtr.ptr);
    bool host_dst = !p->dstArray && p->dstPtr.ptr && !is_device(p->dstPtr.ptr);
    size_t row = p->extent.width * elem, n = row * p->extent.height * depth;
    if (row && (row / elem != p->extent.width || n / row != p->extent.height * depth))
        return local_error(cudaErrorInvalidValue);
    if ((host_src || host_dst) && async &&
        stream_captures(stream, ptds ? APIGEN_CUDART_PTSZ : 0)) /* the buffer dies with the call */
        return local_error(cudaErrorStreamCaptureUnsupported);
    if (!host_src && !host_dst) return array_box(p, elem, stream, async, ptds, false, NULL);
    if (n <= ARRAY_CHUNK) {
        unsigned char *buf = malloc(n ? n : 1);
        if (!buf) return local_error(cudaErrorMemoryAllocation);
        e = array_box(p, elem, stream, async, ptds, false, buf);
        free(buf);
        return e;
    }
    /* a region past the array's edge is refused before any box is copied,
     * as the runtime refuses the whole copy */
    struct cudaChannelFormatDesc fd;
    struct cudaExtent ax;
    unsigned int af;
    cudaArray_t a = p->srcArray ? p->srcArray : p->dstArray;
    const struct cudaPos *at = p->srcArray ? &p->srcPos : &p->dstPos;
    if ((e = cudaArrayGetInfo(&fd, &ax, &af, a)) != cudaSuccess) return e;
    if (!apigen_box_inside(at->x, at->y, at->z, p->extent.width, p->extent.height, depth, ax.width,
                           ax.height, ax.depth))
        return local_error(cudaErrorInvalidValue);
    return array_boxes(p, elem, stream, async, ptds);
}

/* 1 with *e set when a 2D copy between host memory and an array is larger
 * than a box and went as a 3D copy (memcpy3d_array, in boxes); 0 to send it
 * as it is (small, device memory, or arguments the runtime refuses). */
static int arr2d_large(cudaArray_t a, size_t wOffset, size_t hOffset, const void *host,
                       size_t pitch, size_t width, size_t height, bool to_array,
                       enum cudaMemcpyKind kind, cudaStream_t stream, bool async, bool ptds,
                       cudaError_t *e)
{
    size_t elem = 0;
    if (!a || !host || !height || width > pitch || is_device(host) ||
        (kind != cudaMemcpyDefault && kind != (to_array ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost)) ||
        pitch > SIZE_MAX / height || pitch * height <= ARRAY_CHUNK ||
        array_elem(a, &elem) != cudaSuccess || width % elem || wOffset % elem)
        return 0;
    struct cudaMemcpy3DParms p;
    memset(&p, 0, sizeof p);
    struct cudaPitchedPtr hp = {(void *)(uintptr_t)host, pitch, width / elem, height};
    struct cudaPos ap = {wOffset / elem, hOffset, 0};
    if (to_array) p.srcPtr = hp, p.dstArray = a, p.dstPos = ap;
    else p.dstPtr = hp, p.srcArray = a, p.srcPos = ap;
    p.extent = (struct cudaExtent){width / elem, height, 1};
    p.kind = cudaMemcpyDefault;
    *e = memcpy3d_array(&p, stream, async, ptds);
    return 1;
}

/* 3D copies between pitched pointers: one 2D copy per slice; with an array
 * on either side: memcpy3d_array. */
static cudaError_t memcpy3d(const struct cudaMemcpy3DParms *p, cudaStream_t stream, bool async,
                            bool ptds)
{
    if (!p) return bad_args();
    if (p->srcArray || p->dstArray) return memcpy3d_array(p, stream, async, ptds);
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

/* ---- peers across servers ---------------------------------------------------------- */
/* With APIGEN_SERVER=url0,url1 the devices of different servers are in
 * different processes (often different machines): no peer access between
 * them; a peer copy between them is staged through this process's memory,
 * STAGE bytes at a time: a device-to-host copy on the source's server, a
 * host-to-device copy on the destination's (each thread's current device
 * set for the copy, so that an address both servers hand out goes to the
 * right one, and restored after). Within one server everything is
 * forwarded as it is. */
bool cudart_ordinals_(unsigned server, int64_t *count); /* generated (api.ordinals) */
#define STAGE ((size_t)16 << 20)

static int dev_server(int dev)
{
    int64_t local;
    return apigen_route_ordinal(&cudart_api, cudart_ordinals_, dev, &local);
}
static bool cross_server(int a, int b)
{
    if (apigen_server_count(&cudart_api) <= 1 || a < 0 || b < 0) return false;
    return dev_server(a) != dev_server(b);
}

static cudaError_t peer_staged(void *dst, int dstDevice, const void *src, int srcDevice,
                               size_t count, cudaStream_t stream, bool async)
{
    static atomic_flag logged = ATOMIC_FLAG_INIT;
    if (!atomic_flag_test_and_set(&logged))
        apigen_log("cudaMemcpyPeer%s: devices %d and %d are on two servers: the copy is staged "
                   "through this process's memory%s",
                   async ? "Async" : "", srcDevice, dstDevice, async ? " and synchronous" : "");
    if (!count) return cudaSuccess;
    if (!dst || !src) return local_error(cudaErrorInvalidValue);
    int cur = 0;
    cudaError_t e = cudaGetDevice(&cur);
    if (e != cudaSuccess) return e;
    if (async && (e = cudaStreamSynchronize(stream)) != cudaSuccess) return e;
    size_t cap = count < STAGE ? count : STAGE;
    unsigned char *buf = malloc(cap);
    if (!buf) return local_error(cudaErrorMemoryAllocation);
    for (size_t off = 0; off < count && e == cudaSuccess; off += cap) {
        size_t k = count - off < cap ? count - off : cap;
        if ((e = cudaSetDevice(srcDevice)) != cudaSuccess ||
            (e = cudaMemcpy(buf, (const unsigned char *)src + off, k, cudaMemcpyDeviceToHost)) !=
                cudaSuccess ||
            (e = cudaSetDevice(dstDevice)) != cudaSuccess)
            break;
        e = cudaMemcpy((unsigned char *)dst + off, buf, k, cudaMemcpyHostToDevice);
    }
    free(buf);
    cudaError_t r = cudaSetDevice(cur);
    return e != cudaSuccess ? e : r;
}

APIGEN_EXPORT cudaError_t cudaMemcpyPeer(void *dst, int dstDevice, const void *src, int srcDevice,
                                         size_t count)
{
    if (cross_server(dstDevice, srcDevice))
        return peer_staged(dst, dstDevice, src, srcDevice, count, 0, false);
    return cudart_fwd_cudaMemcpyPeer(dst, dstDevice, src, srcDevice, count);
}
APIGEN_EXPORT cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src,
                                              int srcDevice, size_t count, cudaStream_t stream)
{
    if (cross_server(dstDevice, srcDevice))
        return peer_staged(dst, dstDevice, src, srcDevice, count, stream, true);
    return cudart_fwd_cudaMemcpyPeerAsync(dst, dstDevice, src, srcDevice, count, stream);
}
APIGEN_EXPORT cudaError_t cudaDeviceCanAccessPeer(int *canAccessPeer, int device, int peerDevice)
{
    if (canAccessPeer && cross_server(device, peerDevice)) {
        *canAccessPeer = 0;
        return cudaSuccess;
    }
    return cudart_fwd_cudaDeviceCanAccessPeer(canAccessPeer, device, peerDevice);
}
/* The current device's server against the peer's: the call goes to the
 * peer's server (its ordinal argument), which must be the current one's. */
static bool peer_elsewhere(int peerDevice)
{
    if (apigen_server_count(&cudart_api) <= 1 || peerDevice < 0) return false;
    int cur = 0;
    return cudaGetDevice(&cur) == cudaSuccess && cross_server(cur, peerDevice);
}
APIGEN_EXPORT cudaError_t cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags)
{
    if (peer_elsewhere(peerDevice)) return local_error(cudaErrorPeerAccessUnsupported);
    return cudart_fwd_cudaDeviceEnablePeerAccess(peerDevice, flags);
}
APIGEN_EXPORT cudaError_t cudaDeviceDisablePeerAccess(int peerDevice)
{
    if (peer_elsewhere(peerDevice)) return local_error(cudaErrorPeerAccessNotEnabled);
    return cudart_fwd_cudaDeviceDisablePeerAccess(peerDevice);
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

/* An argument the guest refuses before any round trip: the real runtime
 * initializes first, so without a usable device its error comes first. */
static cudaError_t bad_args(void)
{
    cudaError_t e = runtime_ready();
    return e != cudaSuccess ? e : local_error(cudaErrorInvalidValue);
}

/* ---- per-object storage the runtime hands out by pointer ------------------------------- */
/* cudaGraphKernelNodeGetParams & co return pointers into storage the runtime
 * owns (the node's argument array, semaphore arrays, access descriptors,
 * the capture's dependency list): the guest keeps one block per node (or
 * stream), replaced by the next query of the same object. */
static u64map stores_;

static void *store_replace(uint64_t key, void *block)
{
    uint64_t old = 0;
    if (!key) key = ~0ull;
    pthread_mutex_lock(&lock_);
    (void)map_get(&stores_, key, &old);
    bool ok = map_put(&stores_, key, (uint64_t)(uintptr_t)block);
    pthread_mutex_unlock(&lock_);
    if (!ok) {
        free(block);
        return NULL;
    }
    free((void *)(uintptr_t)old);
    return block;
}

/* ---- kernel nodes ------------------------------------------------------------------- */
/* The proxy of a kernel node's function: a registered kernel's address, or a
 * kernel handle from __cudaGetKernel (the address it stands for). */
static const void *kernel_proxy(const void *func)
{
    uint64_t fun = 0;
    const void *proxy = cudart_map_host(func);
    if (proxy || !func) return proxy;
#if CUDART_VERSION >= 12000 /* kernel handles: see kernel_to_host_ */
    pthread_mutex_lock(&lock_);
    bool ok = map_get(&kernel_to_host_, (uint64_t)(uintptr_t)func, &fun);
    pthread_mutex_unlock(&lock_);
    return ok ? cudart_map_host((const void *)(uintptr_t)fun) : NULL;
#else /* 11.x: no kernel handles */
    (void)fun;
    return NULL;
#endif
}

/* The arguments of a kernel node packed at the kernel's layout: from
 * kernelParams, or from extra's CU_LAUNCH_PARAM_BUFFER_POINTER/SIZE. */
static cudaError_t pack_node_args(const void *proxy, void **args, void **extra, unsigned char **out,
                                  size_t *size)
{
    const layout *l;
    *out = NULL;
    *size = 0;
    if (!proxy) return cudaErrorInvalidDeviceFunction;
    cudaError_t e = get_layout(proxy, NULL, &l);
    if (e != cudaSuccess) return e;
    unsigned char *buf = calloc(1, l->size ? l->size : 1);
    if (!buf) return cudaErrorMemoryAllocation;
    if (args) {
        for (uint32_t i = 0; i < l->n; i++) memcpy(buf + l->offsets[i], args[i], l->sizes[i]);
    } else if (extra) {
        const void *p = NULL;
        size_t n = SIZE_MAX;
        for (size_t i = 0; extra[i] != (void *)0x00; i += 2) {
            if (extra[i] == (void *)0x01) p = extra[i + 1];
            else if (extra[i] == (void *)0x02 && extra[i + 1]) n = *(const size_t *)extra[i + 1];
            else break;
        }
        if (!p || n != l->size) {
            free(buf);
            return bad_args();
        }
        memcpy(buf, p, n);
    } else if (l->n) {
        free(buf);
        return bad_args();
    }
    if ((e = reach_params(buf, l->size)) != cudaSuccess) { /* host addresses, as launches */
        free(buf);
        return e;
    }
    *out = buf;
    *size = l->size;
    return cudaSuccess;
}

#define KERNEL_NODE_SEND(call, ...)                                                                \
    do {                                                                                           \
        if (!p) return bad_args();                                                      \
        const void *proxy_ = kernel_proxy(p->func);                                                \
        unsigned char *buf_;                                                                       \
        size_t n_;                                                                                 \
        cudaError_t e_ = pack_node_args(proxy_, p->kernelParams, p->extra, &buf_, &n_);            \
        if (e_ != cudaSuccess) return e_;                                                          \
        e_ = call(__VA_ARGS__, proxy_, p->gridDim, p->blockDim, p->sharedMemBytes,                 \
                  n_ ? buf_ : NULL, n_);                                                           \
        free(buf_);                                                                                \
        return e_;                                                                                 \
    } while (0)

APIGEN_EXPORT cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                                 const cudaGraphNode_t *pDependencies,
                                                 size_t numDependencies,
                                                 const struct cudaKernelNodeParams *p)
{
    KERNEL_NODE_SEND(apigenCudartAddKernelNode, pGraphNode, graph, pDependencies, numDependencies);
}

APIGEN_EXPORT cudaError_t cudaGraphKernelNodeSetParams(cudaGraphNode_t node,
                                                       const struct cudaKernelNodeParams *p)
{
    KERNEL_NODE_SEND(apigenCudartKernelNodeSetParams, node);
}

APIGEN_EXPORT cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t hGraphExec,
                                                           cudaGraphNode_t node,
                                                           const struct cudaKernelNodeParams *p)
{
    KERNEL_NODE_SEND(apigenCudartExecKernelNodeSetParams, hGraphExec, node);
}

/* The node's arguments come back packed; the guest's block holds them and
 * the kernelParams array pointing into them (the program's kernel address
 * in func), valid until the next query of the node. */
typedef struct kernel_store {
    void *argv[APIGEN_CUDART_MAX_PARAMS];
    unsigned char bytes[APIGEN_CUDART_MAX_PARAM_BYTES];
} kernel_store;

APIGEN_EXPORT cudaError_t cudaGraphKernelNodeGetParams(cudaGraphNode_t node,
                                                       struct cudaKernelNodeParams *p)
{
    uint64_t proxy = 0, host = 0;
    size_t n = 0;
    const layout *l;
    if (!p) return bad_args();
    kernel_store *st = malloc(sizeof *st);
    if (!st) return cudaErrorMemoryAllocation;
    dim3 grid, block;
    unsigned int shmem = 0;
    cudaError_t e = apigenCudartKernelNodeGetParams(node, &proxy, &grid, &block, &shmem, st->bytes,
                                                    sizeof st->bytes, &n);
    if (e == cudaSuccess) e = get_layout((const void *)(uintptr_t)proxy, NULL, &l);
    if (e == cudaSuccess && (n != l->size || n > sizeof st->bytes)) e = cudaErrorInvalidValue;
    if (e != cudaSuccess) {
        free(st);
        return e;
    }
    for (uint32_t i = 0; i < l->n; i++) st->argv[i] = st->bytes + l->offsets[i];
    pthread_mutex_lock(&lock_);
    int srv = apigen_route_id(&cudart_api, (uint64_t)(uintptr_t)node); /* the node's server */
    bool known = map_get(&proxy_to_host_, SRV_KEY(proxy, srv >= 0 ? srv : apigen_current_server(&cudart_api)), &host);
    pthread_mutex_unlock(&lock_);
    if (!store_replace((uint64_t)(uintptr_t)node, st)) return cudaErrorMemoryAllocation;
    p->func = known ? (void *)(uintptr_t)host : (void *)(uintptr_t)proxy;
    p->gridDim = grid;
    p->blockDim = block;
    p->sharedMemBytes = shmem;
    p->kernelParams = st->argv;
    p->extra = NULL;
    return cudaSuccess;
}

/* ---- host nodes --------------------------------------------------------------------------- */
/* A host node's (fn, userData) stays registered for the node's life (the
 * guest keeps it; a node's later SetParams registers a new one). Each run
 * of the node calls host_node_reached on the callback thread; the server's
 * graph waits for apigenCudartHostFnDone, as a stream's host function. */
typedef struct host_node {
    cudaHostFn_t fn;
    void *user;
} host_node;

static u64map host_nodes_; /* id -> host_node * */
static atomic_uint_fast64_t next_host_node_ = 1;

static void host_node_reached(uint64_t id, int32_t status, void *user)
{
    host_node *h = user;
    (void)status;
    if (h && h->fn) h->fn(h->user);
    (void)apigenCudartHostFnDone(id);
}

static host_node *host_node_new(const struct cudaHostNodeParams *p, uint64_t *id)
{
    host_node *h = malloc(sizeof *h);
    if (!h) return NULL;
    h->fn = p->fn;
    h->user = p->userData;
    *id = atomic_fetch_add(&next_host_node_, 1);
    pthread_mutex_lock(&lock_);
    bool ok = map_put(&host_nodes_, *id, (uint64_t)(uintptr_t)h);
    pthread_mutex_unlock(&lock_);
    if (!ok) {
        free(h);
        return NULL;
    }
    return h;
}

#define HOST_NODE_SEND(call, ...)                                                                  \
    do {                                                                                           \
        uint64_t id_;                                                                              \
        if (!p || !p->fn) return bad_args();                                            \
        host_node *h_ = host_node_new(p, &id_);                                                    \
        if (!h_) return cudaErrorMemoryAllocation;                                                 \
        return call(__VA_ARGS__, host_node_reached, h_, id_);                                      \
    } while (0)

APIGEN_EXPORT cudaError_t cudaGraphAddHostNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                               const cudaGraphNode_t *pDependencies,
                                               size_t numDependencies,
                                               const struct cudaHostNodeParams *p)
{
    HOST_NODE_SEND(apigenCudartAddHostNode, pGraphNode, graph, pDependencies, numDependencies);
}

APIGEN_EXPORT cudaError_t cudaGraphHostNodeSetParams(cudaGraphNode_t node,
                                                     const struct cudaHostNodeParams *p)
{
    HOST_NODE_SEND(apigenCudartHostNodeSetParams, node);
}

APIGEN_EXPORT cudaError_t cudaGraphExecHostNodeSetParams(cudaGraphExec_t hGraphExec,
                                                         cudaGraphNode_t node,
                                                         const struct cudaHostNodeParams *p)
{
    HOST_NODE_SEND(apigenCudartExecHostNodeSetParams, hGraphExec, node);
}

APIGEN_EXPORT cudaError_t cudaGraphHostNodeGetParams(cudaGraphNode_t node,
                                                     struct cudaHostNodeParams *p)
{
    uint64_t id = 0, v = 0;
    if (!p) return bad_args();
    cudaError_t e = apigenCudartHostNodeGetParams(node, &id);
    if (e != cudaSuccess) return e;
    pthread_mutex_lock(&lock_);
    bool ok = map_get(&host_nodes_, id, &v);
    pthread_mutex_unlock(&lock_);
    if (!ok) return bad_args();
    const host_node *h = (const host_node *)(uintptr_t)v;
    p->fn = h->fn;
    p->userData = h->user;
    return cudaSuccess;
}

/* ---- stream capture info -------------------------------------------------------------------- */
#ifdef APIGEN_HAS_PARAM_cudaStreamGetCaptureInfo_edgeData_out /* 13.0; 12.x: other forms (specs/cudart.yaml) */
typedef struct capture_store {
    size_t cap;
    cudaGraphNode_t *deps;
    cudaGraphEdgeData *edges;
} capture_store;

static cudaError_t capture_info(cudaStream_t stream, enum cudaStreamCaptureStatus *status_out,
                                unsigned long long *id_out, cudaGraph_t *graph_out,
                                const cudaGraphNode_t **deps_out,
                                const cudaGraphEdgeData **edges_out, size_t *num_out,
                                uint32_t flags)
{
    enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    unsigned long long id = 0;
    cudaGraph_t g = NULL;
    size_t n = 0, cap = 32;
    capture_store *cs = NULL;
    cudaError_t e;
    if (!status_out) return bad_args();
    /* until the list fits (it can grow between two queries while another
     * thread captures into the stream); never a list cut short */
    for (int round = 0;; round++) {
        if (round == 64) {
            apigen_log("cudaStreamGetCaptureInfo: the dependency list kept growing over 64 "
                       "queries; failing with cudaErrorUnknown rather than returning part of it");
            return local_error(cudaErrorUnknown);
        }
        capture_store *c = calloc(1, sizeof *c + cap * (sizeof *c->deps + sizeof *c->edges));
        if (!c) return local_error(cudaErrorMemoryAllocation);
        c->cap = cap;
        c->deps = (cudaGraphNode_t *)(c + 1);
        c->edges = (cudaGraphEdgeData *)(c->deps + cap);
        e = apigenCudartStreamGetCaptureInfo(stream, &st, &id, &g, c->deps, c->edges, cap, &n,
                                             flags);
        if (e != cudaSuccess || n <= cap) {
            cs = c;
            break;
        }
        free(c);
        cap = n;
    }
    if (e != cudaSuccess) {
        free(cs);
        return e;
    }
    /* the arrays stay valid until the stream's next query */
    uint64_t key = (uint64_t)(uintptr_t)stream ^ 0x5a5a000000000000ull;
    if (!store_replace(key, cs)) return cudaErrorMemoryAllocation;
    *status_out = st;
    if (id_out) *id_out = id;
    if (graph_out) *graph_out = g;
    if (deps_out) *deps_out = n ? cs->deps : NULL;
    if (edges_out) *edges_out = n ? cs->edges : NULL;
    if (num_out) *num_out = n;
    return cudaSuccess;
}

APIGEN_EXPORT cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream,
                                                   enum cudaStreamCaptureStatus *captureStatus_out,
                                                   unsigned long long *id_out,
                                                   cudaGraph_t *graph_out,
                                                   const cudaGraphNode_t **dependencies_out,
                                                   const cudaGraphEdgeData **edgeData_out,
                                                   size_t *numDependencies_out)
{
    return capture_info(stream, captureStatus_out, id_out, graph_out, dependencies_out,
                        edgeData_out, numDependencies_out, 0);
}

APIGEN_EXPORT cudaError_t cudaStreamGetCaptureInfo_ptsz(
    cudaStream_t stream, enum cudaStreamCaptureStatus *captureStatus_out,
    unsigned long long *id_out, cudaGraph_t *graph_out, const cudaGraphNode_t **dependencies_out,
    const cudaGraphEdgeData **edgeData_out, size_t *numDependencies_out)
{
    return capture_info(stream, captureStatus_out, id_out, graph_out, dependencies_out,
                        edgeData_out, numDependencies_out, APIGEN_CUDART_PTSZ);
}

#endif

/* ---- cluster occupancy, library images ------------------------------------------------------- */
#ifdef APIGEN_HAS_FN_cudaOccupancyMaxActiveClusters /* 11.8 */
static cudaError_t occupancy_cluster(int *out, const void *func, const cudaLaunchConfig_t *c,
                                     uint32_t which)
{
    if (!c || !out) return bad_args();
    return apigenCudartOccupancyCluster(out, cudart_map_host(func), c->gridDim, c->blockDim,
                                        c->dynamicSmemBytes, c->stream,
                                        c->numAttrs ? c->attrs : NULL, c->numAttrs, which);
}

APIGEN_EXPORT cudaError_t cudaOccupancyMaxPotentialClusterSize(int *clusterSize, const void *func,
                                                               const cudaLaunchConfig_t *config)
{
    return occupancy_cluster(clusterSize, func, config, 0);
}

APIGEN_EXPORT cudaError_t cudaOccupancyMaxActiveClusters(int *numClusters, const void *func,
                                                         const cudaLaunchConfig_t *config)
{
    return occupancy_cluster(numClusters, func, config, 1);
}
#endif

APIGEN_EXPORT cudaError_t cudaLibraryLoadData(cudaLibrary_t *library, const void *code,
                                              enum cudaJitOption *jitOptions,
                                              void **jitOptionsValues, unsigned int numJitOptions,
                                              enum cudaLibraryOption *libraryOptions,
                                              void **libraryOptionValues,
                                              unsigned int numLibraryOptions)
{
    const fatbin_wrapper *w = code;
    if (code && w->magic == FATBIN_WRAPPER_MAGIC) code = w->data; /* nvcc's wrapper */
    size_t n = apigen_cudart_image_size(code, SIZE_MAX);
    if (!n) return code ? cudaErrorInvalidKernelImage : bad_args();
    return apigenCudartLibraryLoadData(library, code, n, jitOptions, jitOptionsValues,
                                       numJitOptions, libraryOptions, libraryOptionValues,
                                       numLibraryOptions);
}

/* ---- batch copies -------------------------------------------------------------------------- */
#if defined(APIGEN_HAS_FN_cudaMemcpyBatchAsync) && !defined(APIGEN_HAS_PARAM_cudaMemcpyBatchAsync_failIdx) /* 13.0; 12.8: another form */
/* One cudaMemcpyAsync per copy on the stream, in order: the strictest of the
 * srcAccessOrder choices, and what the attributes' location hints allow. */
static cudaError_t memcpy_batch(void *const *dsts, const void *const *srcs, const size_t *sizes,
                                size_t count, const struct cudaMemcpyAttributes *attrs,
                                const size_t *attrsIdxs, size_t numAttrs, cudaStream_t stream,
                                bool ptsz)
{
    if (!count || !dsts || !srcs || !sizes || !numAttrs || !attrs || !attrsIdxs ||
        numAttrs > count || attrsIdxs[0] != 0)
        return bad_args();
    for (size_t i = 1; i < numAttrs; i++)
        if (attrsIdxs[i] <= attrsIdxs[i - 1] || attrsIdxs[i] >= count) return bad_args();
    for (size_t i = 0; i < count; i++) {
        cudaError_t e = ptsz ? cudaMemcpyAsync_ptsz(dsts[i], srcs[i], sizes[i], cudaMemcpyDefault, stream)
                             : cudaMemcpyAsync(dsts[i], srcs[i], sizes[i], cudaMemcpyDefault, stream);
        if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
}

APIGEN_EXPORT cudaError_t cudaMemcpyBatchAsync(void *const *dsts, const void *const *srcs,
                                               const size_t *sizes, size_t count,
                                               struct cudaMemcpyAttributes *attrs,
                                               size_t *attrsIdxs, size_t numAttrs,
                                               cudaStream_t stream)
{
    return memcpy_batch(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, stream, false);
}

APIGEN_EXPORT cudaError_t cudaMemcpyBatchAsync_ptsz(void *const *dsts, const void *const *srcs,
                                                    const size_t *sizes, size_t count,
                                                    struct cudaMemcpyAttributes *attrs,
                                                    size_t *attrsIdxs, size_t numAttrs,
                                                    cudaStream_t stream)
{
    return memcpy_batch(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, stream, true);
}

/* The bytes per element of an array (its channel bits). */

/* One 3D batch operation: pointer to pointer (bytes) as a cudaMemcpy3DAsync;
 * a pointer and an array (one layer) as a 2D array copy in the array's
 * elements; array to array and several layers as one 3D copy with arrays
 * (memcpy3d_array). */
static cudaError_t batch_op3d(const struct cudaMemcpy3DBatchOp *op, cudaStream_t s, bool ptsz)
{
    const struct cudaMemcpy3DOperand *src = &op->src, *dst = &op->dst;
    struct cudaExtent x = op->extent;
    if (!x.width || !x.height || !x.depth) return bad_args();
    bool sp = src->type == cudaMemcpyOperandTypePointer, dp = dst->type == cudaMemcpyOperandTypePointer;
    if ((!sp && src->type != cudaMemcpyOperandTypeArray) ||
        (!dp && dst->type != cudaMemcpyOperandTypeArray))
        return bad_args();
    if (sp && dp) {
        struct cudaMemcpy3DParms q;
        memset(&q, 0, sizeof q);
        size_t srow = src->op.ptr.rowLength ? src->op.ptr.rowLength : x.width;
        size_t drow = dst->op.ptr.rowLength ? dst->op.ptr.rowLength : x.width;
        q.srcPtr = (struct cudaPitchedPtr){src->op.ptr.ptr, srow, x.width,
                                           src->op.ptr.layerHeight ? src->op.ptr.layerHeight : x.height};
        q.dstPtr = (struct cudaPitchedPtr){dst->op.ptr.ptr, drow, x.width,
                                           dst->op.ptr.layerHeight ? dst->op.ptr.layerHeight : x.height};
        q.extent = x;
        q.kind = cudaMemcpyDefault;
        return ptsz ? cudaMemcpy3DAsync_ptsz(&q, s) : cudaMemcpy3DAsync(&q, s);
    }
    if (sp != dp && x.depth == 1) {
        const struct cudaMemcpy3DOperand *arr = sp ? dst : src, *ptr = sp ? src : dst;
        size_t elem = 0;
        cudaError_t e = array_elem(arr->op.array.array, &elem);
        if (e != cudaSuccess) return e;
        if (arr->op.array.offset.z) return bad_args();
        size_t pitch = (ptr->op.ptr.rowLength ? ptr->op.ptr.rowLength : x.width) * elem;
        size_t wo = arr->op.array.offset.x * elem, ho = arr->op.array.offset.y;
        if (sp)
            return ptsz ? cudaMemcpy2DToArrayAsync_ptsz(arr->op.array.array, wo, ho, ptr->op.ptr.ptr,
                                                        pitch, x.width * elem, x.height,
                                                        cudaMemcpyDefault, s)
                        : cudaMemcpy2DToArrayAsync(arr->op.array.array, wo, ho, ptr->op.ptr.ptr,
                                                   pitch, x.width * elem, x.height,
                                                   cudaMemcpyDefault, s);
        return ptsz ? cudaMemcpy2DFromArrayAsync_ptsz(ptr->op.ptr.ptr, pitch, arr->op.array.array, wo,
                                                      ho, x.width * elem, x.height,
                                                      cudaMemcpyDefault, s)
                    : cudaMemcpy2DFromArrayAsync(ptr->op.ptr.ptr, pitch, arr->op.array.array, wo, ho,
                                                 x.width * elem, x.height, cudaMemcpyDefault, s);
    }
    /* array to array, or several layers of an array: one 3D copy */
    size_t elem = 0;
    cudaError_t e = array_elem(sp ? dst->op.array.array : src->op.array.array, &elem);
    if (e != cudaSuccess) return e;
    struct cudaMemcpy3DParms q;
    memset(&q, 0, sizeof q);
    const struct cudaMemcpy3DOperand *o[2] = {src, dst};
    for (int k = 0; k < 2; k++) {
        cudaArray_t *a = k ? &q.dstArray : &q.srcArray;
        struct cudaPitchedPtr *pp = k ? &q.dstPtr : &q.srcPtr;
        struct cudaPos *pos = k ? &q.dstPos : &q.srcPos;
        if (o[k]->type == cudaMemcpyOperandTypeArray) {
            *a = o[k]->op.array.array;
            *pos = (struct cudaPos){o[k]->op.array.offset.x, o[k]->op.array.offset.y,
                                    o[k]->op.array.offset.z};
        } else {
            size_t rl = o[k]->op.ptr.rowLength ? o[k]->op.ptr.rowLength : x.width;
            *pp = (struct cudaPitchedPtr){o[k]->op.ptr.ptr, rl * elem, rl,
                                          o[k]->op.ptr.layerHeight ? o[k]->op.ptr.layerHeight
                                                                   : x.height};
        }
    }
    q.extent = x;
    q.kind = cudaMemcpyDefault;
    return memcpy3d_array(&q, s, true, ptsz);
}

static cudaError_t memcpy3d_batch(size_t numOps, const struct cudaMemcpy3DBatchOp *ops,
                                  unsigned long long flags, cudaStream_t stream, bool ptsz)
{
    if (!numOps || !ops || flags) return bad_args();
    for (size_t i = 0; i < numOps; i++) {
        cudaError_t e = batch_op3d(&ops[i], stream, ptsz);
        if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
}

APIGEN_EXPORT cudaError_t cudaMemcpy3DBatchAsync(size_t numOps, struct cudaMemcpy3DBatchOp *opList,
                                                 unsigned long long flags, cudaStream_t stream)
{
    return memcpy3d_batch(numOps, opList, flags, stream, false);
}

APIGEN_EXPORT cudaError_t cudaMemcpy3DBatchAsync_ptsz(size_t numOps,
                                                      struct cudaMemcpy3DBatchOp *opList,
                                                      unsigned long long flags, cudaStream_t stream)
{
    return memcpy3d_batch(numOps, opList, flags, stream, true);
}

#endif

/* ---- external semaphore nodes --------------------------------------------------------------- */
_Static_assert(sizeof(struct cudaExternalSemaphoreSignalParams) ==
                   sizeof(struct cudaExternalSemaphoreWaitParams),
               "signal and wait parameters travel as one struct");

#define EXTSEM_API(name, ptype, call, wait, ...)                                                   \
    {                                                                                              \
        if (!p) return bad_args();                                                      \
        return call(__VA_ARGS__, p->extSemArray,                                                   \
                    (const struct cudaExternalSemaphoreSignalParams *)(const void *)p->paramsArray,  \
                    p->numExtSems, wait);                                                          \
    }

APIGEN_EXPORT cudaError_t cudaGraphAddExternalSemaphoresSignalNode(
    cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *pDependencies,
    size_t numDependencies, const struct cudaExternalSemaphoreSignalNodeParams *p)
EXTSEM_API(x, x, apigenCudartAddExtSemNode, 0, pGraphNode, graph, pDependencies, numDependencies)

APIGEN_EXPORT cudaError_t cudaGraphAddExternalSemaphoresWaitNode(
    cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *pDependencies,
    size_t numDependencies, const struct cudaExternalSemaphoreWaitNodeParams *p)
EXTSEM_API(x, x, apigenCudartAddExtSemNode, 1, pGraphNode, graph, pDependencies, numDependencies)

APIGEN_EXPORT cudaError_t cudaGraphExternalSemaphoresSignalNodeSetParams(
    cudaGraphNode_t hNode, const struct cudaExternalSemaphoreSignalNodeParams *p)
EXTSEM_API(x, x, apigenCudartExtSemNodeSetParams, 0, hNode)

APIGEN_EXPORT cudaError_t cudaGraphExternalSemaphoresWaitNodeSetParams(
    cudaGraphNode_t hNode, const struct cudaExternalSemaphoreWaitNodeParams *p)
EXTSEM_API(x, x, apigenCudartExtSemNodeSetParams, 1, hNode)

APIGEN_EXPORT cudaError_t cudaGraphExecExternalSemaphoresSignalNodeSetParams(
    cudaGraphExec_t hGraphExec, cudaGraphNode_t hNode,
    const struct cudaExternalSemaphoreSignalNodeParams *p)
EXTSEM_API(x, x, apigenCudartExecExtSemNodeSetParams, 0, hGraphExec, hNode)

APIGEN_EXPORT cudaError_t cudaGraphExecExternalSemaphoresWaitNodeSetParams(
    cudaGraphExec_t hGraphExec, cudaGraphNode_t hNode,
    const struct cudaExternalSemaphoreWaitNodeParams *p)
EXTSEM_API(x, x, apigenCudartExecExtSemNodeSetParams, 1, hGraphExec, hNode)

typedef struct extsem_store {
    uint32_t n;
    cudaExternalSemaphore_t *sems;
    struct cudaExternalSemaphoreSignalParams *params;
} extsem_store;

static cudaError_t extsem_get(cudaGraphNode_t node, cudaExternalSemaphore_t **sems,
                              const void **params, unsigned int *num, uint32_t wait)
{
    uint32_t cap = 16, n = 0;
    extsem_store *st = NULL;
    cudaError_t e;
    for (int round = 0;; round++) {
        st = calloc(1, sizeof *st + cap * (sizeof *st->sems + sizeof *st->params));
        if (!st) return cudaErrorMemoryAllocation;
        st->params = (struct cudaExternalSemaphoreSignalParams *)(st + 1);
        st->sems = (cudaExternalSemaphore_t *)(st->params + cap);
        e = apigenCudartExtSemNodeGetParams(node, st->sems, st->params, cap, &n, wait);
        if (e != cudaSuccess || n <= cap || round == 2) break;
        free(st);
        cap = n;
    }
    if (e != cudaSuccess || n > cap) {
        free(st);
        return e != cudaSuccess ? e : bad_args();
    }
    st->n = n;
    if (!store_replace((uint64_t)(uintptr_t)node, st)) return cudaErrorMemoryAllocation;
    *sems = st->sems;
    *params = st->params;
    *num = n;
    return cudaSuccess;
}

APIGEN_EXPORT cudaError_t cudaGraphExternalSemaphoresSignalNodeGetParams(
    cudaGraphNode_t hNode, struct cudaExternalSemaphoreSignalNodeParams *params_out)
{
    const void *pa = NULL;
    if (!params_out) return bad_args();
    cudaError_t e = extsem_get(hNode, &params_out->extSemArray, &pa, &params_out->numExtSems, 0);
    if (e == cudaSuccess) params_out->paramsArray = pa;
    return e;
}

APIGEN_EXPORT cudaError_t cudaGraphExternalSemaphoresWaitNodeGetParams(
    cudaGraphNode_t hNode, struct cudaExternalSemaphoreWaitNodeParams *params_out)
{
    const void *pa = NULL;
    if (!params_out) return bad_args();
    cudaError_t e = extsem_get(hNode, &params_out->extSemArray, &pa, &params_out->numExtSems, 1);
    if (e == cudaSuccess) params_out->paramsArray = pa;
    return e;
}

/* ---- memory allocation nodes -------------------------------------------------------------- */
APIGEN_EXPORT cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                                   const cudaGraphNode_t *pDependencies,
                                                   size_t numDependencies,
                                                   struct cudaMemAllocNodeParams *p)
{
    if (!p) return bad_args();
    void *dptr = NULL;
    cudaError_t e = apigenCudartAddMemAllocNode(pGraphNode, graph, pDependencies, numDependencies,
                                                &p->poolProps, p->accessDescs, p->accessDescCount,
                                                p->bytesize, &dptr);
    if (e == cudaSuccess) {
        p->dptr = dptr;
        if (dptr) ranges_add(&dev_ranges_, dptr, p->bytesize, 0, false);
    }
    return e;
}

APIGEN_EXPORT cudaError_t cudaGraphMemAllocNodeGetParams(cudaGraphNode_t node,
                                                         struct cudaMemAllocNodeParams *params_out)
{
    size_t cap = 16, n = 0, bytes = 0;
    void *dptr = NULL;
    struct cudaMemAccessDesc *st = NULL;
    cudaError_t e;
    if (!params_out) return bad_args();
    for (int round = 0;; round++) {
        st = calloc(cap, sizeof *st);
        if (!st) return cudaErrorMemoryAllocation;
        e = apigenCudartMemAllocNodeGetParams(node, &params_out->poolProps, st, cap, &n, &bytes,
                                              &dptr);
        if (e != cudaSuccess || n <= cap || round == 2) break;
        free(st);
        cap = n;
    }
    if (e != cudaSuccess || n > cap) {
        free(st);
        return e != cudaSuccess ? e : bad_args();
    }
    if (!store_replace((uint64_t)(uintptr_t)node, st)) return cudaErrorMemoryAllocation;
    params_out->accessDescs = n ? st : NULL;
    params_out->accessDescCount = n;
    params_out->bytesize = bytes;
    params_out->dptr = dptr;
    return cudaSuccess;
}

#ifdef APIGEN_HAS_TYPE_cudaGraphNodeParams /* 12.2 */
/* ---- generic node parameters: by type onto the calls of each kind --------------------------- */
static cudaError_t node_unsupported(const char *what)
{
    static atomic_flag logged = ATOMIC_FLAG_INIT;
    if (!atomic_flag_test_and_set(&logged))
        apigen_log("%s: conditional nodes (and child graphs moved into their parent) are not "
                   "supported remotely",
                   what);
    return cudaErrorNotSupported;
}

static struct cudaKernelNodeParams kernel_v1(const struct cudaKernelNodeParamsV2 *k)
{
    struct cudaKernelNodeParams v;
    v.func = k->func;
    v.gridDim = k->gridDim;
    v.blockDim = k->blockDim;
    v.sharedMemBytes = k->sharedMemBytes;
    v.kernelParams = k->kernelParams;
    v.extra = k->extra;
    return v;
}

static struct cudaMemsetParams memset_v1(const struct cudaMemsetParamsV2 *m)
{
    struct cudaMemsetParams v;
    v.dst = m->dst;
    v.pitch = m->pitch;
    v.value = m->value;
    v.elementSize = m->elementSize;
    v.width = m->width;
    v.height = m->height;
    return v;
}

#ifdef APIGEN_HAS_PARAM_cudaGraphAddNode_dependencyData /* 13.0; 12.x: cudaGraphAddNode_v2 */
static bool edges_plain(const cudaGraphEdgeData *d, size_t n)
{
    static const cudaGraphEdgeData zero;
    for (size_t i = 0; d && i < n; i++)
        if (memcmp(&d[i], &zero, sizeof zero) != 0) return false;
    return true;
}

APIGEN_EXPORT cudaError_t cudaGraphAddNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                           const cudaGraphNode_t *pDependencies,
                                           const cudaGraphEdgeData *dependencyData,
                                           size_t numDependencies,
                                           struct cudaGraphNodeParams *p)
{
    if (!p || !pGraphNode) return bad_args();
    /* edges with data: the node first, then its edges */
    bool later = !edges_plain(dependencyData, numDependencies);
    const cudaGraphNode_t *deps = later ? NULL : pDependencies;
    size_t nd = later ? 0 : numDependencies;
    cudaError_t e;
    switch (p->type) {
    case cudaGraphNodeTypeKernel: {
        struct cudaKernelNodeParams k = kernel_v1(&p->kernel);
        e = cudaGraphAddKernelNode(pGraphNode, graph, deps, nd, &k);
        break;
    }
    case cudaGraphNodeTypeMemcpy:
        if (p->memcpy.flags) return bad_args();
        e = cudaGraphAddMemcpyNode(pGraphNode, graph, deps, nd, &p->memcpy.copyParams);
        break;
    case cudaGraphNodeTypeMemset: {
        struct cudaMemsetParams m = memset_v1(&p->memset);
        e = cudaGraphAddMemsetNode(pGraphNode, graph, deps, nd, &m);
        break;
    }
    case cudaGraphNodeTypeHost: {
        struct cudaHostNodeParams h = {p->host.fn, p->host.userData};
        e = cudaGraphAddHostNode(pGraphNode, graph, deps, nd, &h);
        break;
    }
    case cudaGraphNodeTypeGraph:
        if (p->graph.ownership != cudaGraphChildGraphOwnershipClone)
            return node_unsupported("cudaGraphAddNode");
        e = cudaGraphAddChildGraphNode(pGraphNode, graph, deps, nd, p->graph.graph);
        break;
    case cudaGraphNodeTypeEmpty: e = cudaGraphAddEmptyNode(pGraphNode, graph, deps, nd); break;
    case cudaGraphNodeTypeWaitEvent:
        e = cudaGraphAddEventWaitNode(pGraphNode, graph, deps, nd, p->eventWait.event);
        break;
    case cudaGraphNodeTypeEventRecord:
        e = cudaGraphAddEventRecordNode(pGraphNode, graph, deps, nd, p->eventRecord.event);
        break;
    case cudaGraphNodeTypeExtSemaphoreSignal: {
        struct cudaExternalSemaphoreSignalNodeParams s = {
            p->extSemSignal.extSemArray, p->extSemSignal.paramsArray, p->extSemSignal.numExtSems};
        e = cudaGraphAddExternalSemaphoresSignalNode(pGraphNode, graph, deps, nd, &s);
        break;
    }
    case cudaGraphNodeTypeExtSemaphoreWait: {
        struct cudaExternalSemaphoreWaitNodeParams w = {
            p->extSemWait.extSemArray, p->extSemWait.paramsArray, p->extSemWait.numExtSems};
        e = cudaGraphAddExternalSemaphoresWaitNode(pGraphNode, graph, deps, nd, &w);
        break;
    }
    case cudaGraphNodeTypeMemAlloc: {
        struct cudaMemAllocNodeParams a;
        a.poolProps = p->alloc.poolProps;
        a.accessDescs = p->alloc.accessDescs;
        a.accessDescCount = p->alloc.accessDescCount;
        a.bytesize = p->alloc.bytesize;
        a.dptr = NULL;
        e = cudaGraphAddMemAllocNode(pGraphNode, graph, deps, nd, &a);
        if (e == cudaSuccess) p->alloc.dptr = a.dptr;
        break;
    }
    case cudaGraphNodeTypeMemFree:
        e = cudaGraphAddMemFreeNode(pGraphNode, graph, deps, nd, p->free.dptr);
        break;
    case cudaGraphNodeTypeConditional: return node_unsupported("cudaGraphAddNode");
    default: return bad_args();
    }
    if (e == cudaSuccess && later && numDependencies) {
        cudaGraphNode_t *to = malloc(numDependencies * sizeof *to);
        if (!to) return cudaErrorMemoryAllocation;
        for (size_t i = 0; i < numDependencies; i++) to[i] = *pGraphNode;
        e = cudaGraphAddDependencies(graph, pDependencies, to, dependencyData, numDependencies);
        free(to);
        if (e != cudaSuccess) (void)cudaGraphDestroyNode(*pGraphNode);
    }
    return e;
}

#endif

/* exec == NULL: cudaGraphNodeSetParams; else cudaGraphExecNodeSetParams */
static cudaError_t node_set(cudaGraphExec_t exec, cudaGraphNode_t node,
                            struct cudaGraphNodeParams *p, const char *what)
{
    if (!p) return bad_args();
    switch (p->type) {
    case cudaGraphNodeTypeKernel: {
        struct cudaKernelNodeParams k = kernel_v1(&p->kernel);
        return exec ? cudaGraphExecKernelNodeSetParams(exec, node, &k)
                    : cudaGraphKernelNodeSetParams(node, &k);
    }
    case cudaGraphNodeTypeMemcpy:
        if (p->memcpy.flags) return bad_args();
        return exec ? cudaGraphExecMemcpyNodeSetParams(exec, node, &p->memcpy.copyParams)
                    : cudaGraphMemcpyNodeSetParams(node, &p->memcpy.copyParams);
    case cudaGraphNodeTypeMemset: {
        struct cudaMemsetParams m = memset_v1(&p->memset);
        return exec ? cudaGraphExecMemsetNodeSetParams(exec, node, &m)
                    : cudaGraphMemsetNodeSetParams(node, &m);
    }
    case cudaGraphNodeTypeHost: {
        struct cudaHostNodeParams h = {p->host.fn, p->host.userData};
        return exec ? cudaGraphExecHostNodeSetParams(exec, node, &h)
                    : cudaGraphHostNodeSetParams(node, &h);
    }
    case cudaGraphNodeTypeGraph:
        if (!exec) return node_unsupported(what);
#ifdef APIGEN_HAS_FIELD_cudaChildGraphNodeParams_ownership /* 12.9 */
        if (p->graph.ownership != cudaGraphChildGraphOwnershipClone) return node_unsupported(what);
#endif
        return cudaGraphExecChildGraphNodeSetParams(exec, node, p->graph.graph);
    case cudaGraphNodeTypeWaitEvent:
        return exec ? cudaGraphExecEventWaitNodeSetEvent(exec, node, p->eventWait.event)
                    : cudaGraphEventWaitNodeSetEvent(node, p->eventWait.event);
    case cudaGraphNodeTypeEventRecord:
        return exec ? cudaGraphExecEventRecordNodeSetEvent(exec, node, p->eventRecord.event)
                    : cudaGraphEventRecordNodeSetEvent(node, p->eventRecord.event);
    case cudaGraphNodeTypeExtSemaphoreSignal: {
        struct cudaExternalSemaphoreSignalNodeParams s = {
            p->extSemSignal.extSemArray, p->extSemSignal.paramsArray, p->extSemSignal.numExtSems};
        return exec ? cudaGraphExecExternalSemaphoresSignalNodeSetParams(exec, node, &s)
                    : cudaGraphExternalSemaphoresSignalNodeSetParams(node, &s);
    }
    case cudaGraphNodeTypeExtSemaphoreWait: {
        struct cudaExternalSemaphoreWaitNodeParams w = {
            p->extSemWait.extSemArray, p->extSemWait.paramsArray, p->extSemWait.numExtSems};
        return exec ? cudaGraphExecExternalSemaphoresWaitNodeSetParams(exec, node, &w)
                    : cudaGraphExternalSemaphoresWaitNodeSetParams(node, &w);
    }
#ifdef APIGEN_HAS_CONST_cudaGraphNodeTypeConditional /* 12.3 */
    case cudaGraphNodeTypeConditional: return node_unsupported(what);
#endif
    default: return bad_args(); /* empty, alloc, free: nothing to update */
    }
}

APIGEN_EXPORT cudaError_t cudaGraphNodeSetParams(cudaGraphNode_t node,
                                                 struct cudaGraphNodeParams *nodeParams)
{
    return node_set(NULL, node, nodeParams, "cudaGraphNodeSetParams");
}

APIGEN_EXPORT cudaError_t cudaGraphExecNodeSetParams(cudaGraphExec_t graphExec,
                                                     cudaGraphNode_t node,
                                                     struct cudaGraphNodeParams *nodeParams)
{
    if (!graphExec) return bad_args();
    return node_set(graphExec, node, nodeParams, "cudaGraphExecNodeSetParams");
}

#endif /* APIGEN_HAS_TYPE_cudaGraphNodeParams */

/* ---- log callbacks, async notifications -------------------------------------------------------- */
#if defined(APIGEN_HAS_FN_cudaDeviceRegisterAsyncNotification) /* 12.4; logs 13.0 */
/* The server registers its own callback with the driver; each event comes to
 * the callback thread here, which calls the program's function. The handle
 * the program gets is the guest's record. */
typedef struct notify_reg {
    void (*log_fn)(void); /* a cudaLogsCallback_t (CUDA 13) */
    cudaAsyncCallback async_fn;
    void *user;
    uint64_t reg;
    bool gone;
} notify_reg;

static u64map notify_regs_; /* record -> 1 while registered */

#ifdef APIGEN_HAS_FN_cudaLogsRegisterCallback
static void log_reached(uint64_t msg, uint32_t level, void *user)
{
    notify_reg *r = user;
    char buf[APIGEN_CUDART_MAX_LOG];
    size_t len = 0;
    if (apigenCudartLogsTake(msg, buf, sizeof buf - 1, &len) != cudaSuccess) return;
    if (len > sizeof buf - 1) len = sizeof buf - 1;
    buf[len] = 0;
    if (r && !r->gone && r->log_fn) ((cudaLogsCallback_t)r->log_fn)(r->user, (cudaLogLevel)level, buf, len);
}

#endif

static void async_reached(uint32_t type, uint64_t bytes, void *user)
{
    notify_reg *r = user;
    cudaAsyncNotificationInfo_t info;
    memset(&info, 0, sizeof info);
    info.type = (cudaAsyncNotificationType)type;
    info.info.overBudget.bytesOverBudget = bytes;
    if (r && !r->gone && r->async_fn) r->async_fn(&info, r->user, (cudaAsyncCallbackHandle_t)r);
}

static notify_reg *notify_new(void)
{
    notify_reg *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    pthread_mutex_lock(&lock_);
    bool ok = map_put(&notify_regs_, (uint64_t)(uintptr_t)r, 1);
    pthread_mutex_unlock(&lock_);
    if (!ok) {
        free(r);
        return NULL;
    }
    return r;
}

/* a registered record of the program's handle, or NULL */
static notify_reg *notify_find(const void *h)
{
    uint64_t v = 0;
    pthread_mutex_lock(&lock_);
    bool ok = map_get(&notify_regs_, (uint64_t)(uintptr_t)h, &v) && v == 1;
    pthread_mutex_unlock(&lock_);
    return ok ? (notify_reg *)(uintptr_t)h : NULL;
}

static void notify_gone(notify_reg *r)
{
    /* the record stays (a callback may be on its way); it no longer calls */
    r->gone = true;
    pthread_mutex_lock(&lock_);
    (void)map_put(&notify_regs_, (uint64_t)(uintptr_t)r, 2);
    pthread_mutex_unlock(&lock_);
}

#ifdef APIGEN_HAS_FN_cudaLogsRegisterCallback
APIGEN_EXPORT cudaError_t cudaLogsRegisterCallback(cudaLogsCallback_t callbackFunc, void *userData,
                                                   cudaLogsCallbackHandle *callback_out)
{
    if (!callbackFunc) return bad_args();
    notify_reg *r = notify_new();
    if (!r) return cudaErrorMemoryAllocation;
    r->log_fn = (void (*)(void))callbackFunc;
    r->user = userData;
    cudaError_t e = apigenCudartLogsRegister(log_reached, r, &r->reg);
    if (e != cudaSuccess) {
        notify_gone(r);
        return e;
    }
    if (callback_out) *callback_out = (cudaLogsCallbackHandle)r;
    return cudaSuccess;
}

APIGEN_EXPORT cudaError_t cudaLogsUnregisterCallback(cudaLogsCallbackHandle callback)
{
    notify_reg *r = notify_find(callback);
    if (!r || !r->log_fn) return bad_args();
    cudaError_t e = apigenCudartLogsUnregister(r->reg);
    if (e == cudaSuccess) notify_gone(r);
    return e;
}

#endif

APIGEN_EXPORT cudaError_t cudaDeviceRegisterAsyncNotification(int device,
                                                              cudaAsyncCallback callbackFunc,
                                                              void *userData,
                                                              cudaAsyncCallbackHandle_t *callback)
{
    if (!callbackFunc || !callback) return bad_args();
    notify_reg *r = notify_new();
    if (!r) return cudaErrorMemoryAllocation;
    r->async_fn = callbackFunc;
    r->user = userData;
    cudaError_t e = apigenCudartRegisterAsyncNotification(device, async_reached, r, &r->reg);
    if (e != cudaSuccess) {
        notify_gone(r);
        return e;
    }
    *callback = (cudaAsyncCallbackHandle_t)r;
    return cudaSuccess;
}

APIGEN_EXPORT cudaError_t cudaDeviceUnregisterAsyncNotification(int device,
                                                                cudaAsyncCallbackHandle_t callback)
{
    notify_reg *r = notify_find(callback);
    if (!r || !r->async_fn) return bad_args();
    cudaError_t e = apigenCudartUnregisterAsyncNotification(device, r->reg);
    if (e == cudaSuccess) notify_gone(r);
    return e;
}
#endif /* APIGEN_HAS_FN_cudaDeviceRegisterAsyncNotification */
