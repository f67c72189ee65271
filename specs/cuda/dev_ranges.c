/* Device ranges the server makes the client's in its host wrappers
 * (host.c: a module's or library's global, a pitched allocation) are noted
 * in the guest too, as `creates: {bytes:}` calls note theirs: a copy that
 * runs past such a range is then refused before the stub reads the host
 * buffer (apigen_dev_overruns; the driver checks the device side first, and
 * the host buffer may be no larger than the range), and async calls on it
 * are vouched for.
 *
 * A global's address and size are kept in the guest after the first
 * answer: NVIDIA's static runtime asks cuLibraryGetGlobal twice for every
 * cudaMemcpyToSymbol / FromSymbol, and each first answer costs the stub a
 * cuPointerGetAttribute (IS_MANAGED, managed.c) on top: 8 round trips of
 * 12 per iteration of bench/patterns.cu's `constant` (H200, 2026-11-26).
 * The answer is fixed while the module, or the library in the context it
 * was asked in, is loaded: kept per (server, module or library, context
 * current at the call, name), dropped when that module or
 * library is unloaded, when any context ends (context_gone.c) and in a fork
 * child; APIGEN_CACHE=0 keeps nothing. Spec `cache:` cannot say it: its
 * keys are the request's bytes, which must name no handle (a handle's id
 * may name another object later), and the answer is a device address.
 * Errors are never kept. */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apigen_rt.h"
#include "cuda_guest.h"

CUresult cuda_fwd_cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod,
                                       const char *name);
CUresult cuda_fwd_cuModuleUnload(CUmodule hmod);
CUresult cuda_fwd_cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
                                     size_t Height, unsigned int ElementSizeBytes);

/* the server of the handle the call named (its current one otherwise) */
static int server_of(uint64_t id)
{
    int s = apigen_route_id(&cuda_api, id);
    return s >= 0 ? s : apigen_current_server(&cuda_api);
}

static void note(int server, CUdeviceptr p, size_t bytes)
{
    if (p) apigen_dev_note(&cuda_api, server, (uint64_t)p, bytes ? bytes : 1);
}

/* ---- globals kept (see above) ---------------------------------------------------------------- */
typedef struct kept {
    struct kept *next;
    int server;
    uint64_t owner, ctx; /* the module or library; the context (libraries only) */
    CUdeviceptr p;
    size_t n;
    char name[]; /* NUL-terminated */
} kept;

static pthread_mutex_t kept_mu_ = PTHREAD_MUTEX_INITIALIZER;
static kept *kept_;
static pthread_once_t kept_once_ = PTHREAD_ONCE_INIT;
static int kept_off_; /* APIGEN_CACHE=0 */

static void drop_matching(uint64_t owner, int all)
{
    pthread_mutex_lock(&kept_mu_);
    for (kept **pp = &kept_; *pp;) {
        kept *k = *pp;
        if (all || k->owner == owner) {
            *pp = k->next;
            free(k);
        } else {
            pp = &k->next;
        }
    }
    pthread_mutex_unlock(&kept_mu_);
}

/* a fork child has another session: none of these ids are its */
static void kept_child(void)
{
    pthread_mutex_init(&kept_mu_, NULL);
    kept *k = kept_;
    kept_ = NULL;
    while (k) {
        kept *next = k->next;
        free(k);
        k = next;
    }
}

static void kept_init(void)
{
    const char *v = getenv("APIGEN_CACHE");
    kept_off_ = v && strcmp(v, "0") == 0;
    (void)pthread_atfork(NULL, NULL, kept_child);
}

void apigen_cuda_globals_forget(int all, uint64_t owner)
{
    drop_matching(owner, all);
}

/* the kept answer for the key: 1 (in *p, *n), 0 none */
static int kept_find(int server, uint64_t owner, uint64_t ctx, const char *name, CUdeviceptr *p,
                     size_t *n)
{
    pthread_once(&kept_once_, kept_init);
    if (kept_off_ || !name) return 0;
    int hit = 0;
    pthread_mutex_lock(&kept_mu_);
    for (kept *k = kept_; k && !hit; k = k->next)
        if (k->server == server && k->owner == owner && k->ctx == ctx && !strcmp(k->name, name)) {
            *p = k->p;
            *n = k->n;
            hit = 1;
        }
    pthread_mutex_unlock(&kept_mu_);
    return hit;
}

static void kept_add(int server, uint64_t owner, uint64_t ctx, const char *name, CUdeviceptr p,
                     size_t n)
{
    pthread_once(&kept_once_, kept_init);
    size_t len = name ? strlen(name) : 0;
    if (kept_off_ || !name || len > 4096) return;
    kept *k = malloc(sizeof *k + len + 1);
    if (!k) return; /* asked again next time */
    *k = (kept){NULL, server, owner, ctx, p, n};
    memcpy(k->name, name, len + 1);
    pthread_mutex_lock(&kept_mu_);
    k->next = kept_;
    kept_ = k;
    pthread_mutex_unlock(&kept_mu_);
}

/* the calling thread's current context (0: none or not known). The guest
 * answers it once a call told it (spec thread_state). */
static uint64_t current_context(void)
{
    CUcontext c = NULL;
    apigen_hold_deferred(true); /* the query's own errors are not the caller's */
    CUresult e = cuCtxGetCurrent(&c);
    apigen_hold_deferred(false);
    return e == CUDA_SUCCESS ? (uint64_t)(uintptr_t)c : 0;
}

static void trace_kept(const char *fn, CUdeviceptr p, size_t n, uint64_t owner, const char *name,
                       uint64_t t0)
{
    if (t0)
        apigen_trace("%s(dptr=%#llx, bytes=%llu, owner=%#llx, name=%s) = 0 [cached, %llu us]", fn,
                     (unsigned long long)p, (unsigned long long)n, (unsigned long long)owner, name,
                     (unsigned long long)((apigen_now_ns() - t0) / 1000));
}

APIGEN_EXPORT CUresult cuModuleUnload(CUmodule hmod)
{
    CUresult e = cuda_fwd_cuModuleUnload(hmod);
    apigen_cuda_globals_forget(0, (uint64_t)(uintptr_t)hmod);
    apigen_cuda_functions_gone(); /* its functions' ids may come back as others */
    return e;
}

APIGEN_EXPORT CUresult cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod,
                                            const char *name)
{
    CUdeviceptr p = 0;
    size_t n = 0;
    uint64_t owner = (uint64_t)(uintptr_t)hmod, t0 = apigen_tracing() ? apigen_now_ns() : 0;
    int srv = server_of(owner);
    uint64_t ctx = hmod ? current_context() : 0; /* asked in another one: asked again */
    if (ctx && kept_find(srv, owner, ctx, name, &p, &n)) {
        trace_kept("cuModuleGetGlobal_v2", p, n, owner, name, t0);
        if (dptr) *dptr = p;
        if (bytes) *bytes = n;
        return CUDA_SUCCESS;
    }
    CUresult e = cuda_fwd_cuModuleGetGlobal_v2(&p, &n, hmod, name);
    if (e != CUDA_SUCCESS) return e;
    note(srv, p, n);
    if ((e = apigen_cuda_managed_global(p, n, name)) != CUDA_SUCCESS) return e;
    if (ctx) kept_add(srv, owner, ctx, name, p, n);
    if (dptr) *dptr = p;
    if (bytes) *bytes = n;
    return e;
}

#ifdef APIGEN_HAS_FN_cuLibraryGetGlobal /* 12.0: libraries */
CUresult cuda_fwd_cuLibraryGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUlibrary library,
                                     const char *name);
CUresult cuda_fwd_cuLibraryUnload(CUlibrary library);

APIGEN_EXPORT CUresult cuLibraryUnload(CUlibrary library)
{
    CUresult e = cuda_fwd_cuLibraryUnload(library);
    apigen_cuda_globals_forget(0, (uint64_t)(uintptr_t)library);
    apigen_cuda_functions_gone();
    return e;
}

APIGEN_EXPORT CUresult cuLibraryGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUlibrary library,
                                          const char *name)
{
    CUdeviceptr p = 0;
    size_t n = 0;
    uint64_t owner = (uint64_t)(uintptr_t)library, t0 = apigen_tracing() ? apigen_now_ns() : 0;
    int srv = server_of(owner);
    /* a library's globals are per context: the current one (the guest
     * knows it once a call told it; else no answer is kept) */
    uint64_t ctx = library ? current_context() : 0;
    if (ctx && kept_find(srv, owner, ctx, name, &p, &n)) {
        trace_kept("cuLibraryGetGlobal", p, n, owner, name, t0);
        if (dptr) *dptr = p;
        if (bytes) *bytes = n;
        return CUDA_SUCCESS;
    }
    CUresult e = cuda_fwd_cuLibraryGetGlobal(&p, &n, library, name);
    if (e != CUDA_SUCCESS) return e;
    note(srv, p, n);
    if ((e = apigen_cuda_managed_global(p, n, name)) != CUDA_SUCCESS) return e;
    if (ctx) kept_add(srv, owner, ctx, name, p, n);
    if (dptr) *dptr = p;
    if (bytes) *bytes = n;
    return e;
}
#endif

APIGEN_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
                                          size_t Height, unsigned int ElementSizeBytes)
{
    CUresult e = cuda_fwd_cuMemAllocPitch_v2(dptr, pPitch, WidthInBytes, Height, ElementSizeBytes);
    if (e == CUDA_SUCCESS && dptr && pPitch)
        note(apigen_current_server(&cuda_api), *dptr, *pPitch * Height);
    return e;
}
