/* Kernel launches of the CUDA driver stub: cuLaunchKernel, cuLaunchKernelEx
 * and cuLaunchCooperativeKernel (and their _ptsz forms). The driver takes
 * the arguments as `void **kernelParams` with no sizes, or as one packed
 * buffer in `extra`. The guest learns each function's parameter layout once
 * from the server (apigenCudaParamLayout: cuFuncGetParamInfo there), packs
 * the arguments into one buffer at the layout's offsets, and sends one async
 * apigenCudaLaunch; its error, if any, comes back at the thread's next
 * synchronous call (api.errors.async: next_call). A configuration the guest
 * cannot vouch for (launch_check.c) is sent synchronously instead. Host
 * addresses in the parameters that the device cannot reach there (pinned
 * memory without an arena, registered memory) are given as their twins'
 * (host_mem.c, runtime/twin.c). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apigen_rt.h"
#include "cuda_guest.h"
#include "cuda_wire.h"

typedef struct apigen_cuda_layout layout;

#define NBUCKETS 256
static layout *layouts_[NBUCKETS];
static pthread_mutex_t lock_ = PTHREAD_MUTEX_INITIALIZER;
/* Layouts learnt before a module, library or context ended are asked
 * again: the server keeps one id per driver handle, and the driver reuses a
 * freed function's address for the next module's (XLA's autotuner loads and
 * unloads a module per configuration; a kernel taking 128-byte tensor maps
 * got the 8-byte pointers' layout of the one before it). An old entry stays
 * in its list (a launch of another thread may still read it), behind the
 * newer one of its id. */
static unsigned gen_;

/* the newest layout of id (lock_ held) */
static layout *find(uint64_t id)
{
    for (layout *l = layouts_[(id * 0x9E3779B97F4A7C15ull) >> 56]; l; l = l->next)
        if (l->id == id) return l;
    return NULL;
}

void apigen_cuda_functions_gone(void)
{
    pthread_mutex_lock(&lock_);
    gen_++;
    pthread_mutex_unlock(&lock_);
    apigen_cuda_launch_limits_forget_all();
}

/* The layout of f (one round trip the first time, and after a module,
 * library or context ended). */
CUresult apigen_cuda_get_layout(CUfunction f, const layout **out)
{
    uint64_t id = (uint64_t)(uintptr_t)f;
    pthread_mutex_lock(&lock_);
    layout *l = find(id);
    unsigned gen = gen_;
    pthread_mutex_unlock(&lock_);
    if (l && l->gen == gen) {
        *out = l;
        return CUDA_SUCCESS;
    }
    l = calloc(1, sizeof *l);
    size_t *offs = calloc(APIGEN_CUDA_MAX_PARAMS, sizeof *offs);
    size_t *sizes = calloc(APIGEN_CUDA_MAX_PARAMS, sizeof *sizes);
    if (!l || !offs || !sizes) {
        free(l), free(offs), free(sizes);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    unsigned n = 0;
    CUresult e = apigenCudaParamLayout(id, 0, offs, sizes, &n);
    if (e != CUDA_SUCCESS || n > APIGEN_CUDA_MAX_PARAMS) {
        free(l), free(offs), free(sizes);
        return e != CUDA_SUCCESS ? e : CUDA_ERROR_INVALID_VALUE;
    }
    /* kept as long as the process: no more room than its parameters take */
    size_t keep = n ? n : 1;
    size_t *o2 = realloc(offs, keep * sizeof *offs), *s2 = realloc(sizes, keep * sizeof *sizes);
    if (o2) offs = o2;
    if (s2) sizes = s2;
    *l = (layout){id, n, 0, offs, sizes, NULL, gen};
    for (unsigned i = 0; i < n; i++)
        if (offs[i] + sizes[i] > l->size) l->size = offs[i] + sizes[i];
    pthread_mutex_lock(&lock_);
    layout *had = find(id);
    if (had && had->gen == gen) { /* another thread was first */
        pthread_mutex_unlock(&lock_);
        free(l), free(offs), free(sizes);
        *out = had;
        return CUDA_SUCCESS;
    }
    unsigned b = (unsigned)((id * 0x9E3779B97F4A7C15ull) >> 56);
    l->next = layouts_[b];
    layouts_[b] = l;
    pthread_mutex_unlock(&lock_);
    *out = l;
    return CUDA_SUCCESS;
}

/* The packed buffer of the `extra` form, checked against the layout. */
CUresult apigen_cuda_extra_buffer(const layout *l, void **extra, const void **buf, size_t *size)
{
    const void *p = NULL;
    size_t n = 0;
    int have_n = 0;
    for (size_t i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
        if (i > 64) break; /* no terminator: refuse below */
        if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) {
            p = extra[i + 1];
        } else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) {
            if (!extra[i + 1]) return CUDA_ERROR_INVALID_VALUE;
            n = *(const size_t *)extra[i + 1];
            have_n = 1;
        } else {
            apigen_log("cuda: cuLaunchKernel: unknown `extra` key %p", extra[i]);
            return CUDA_ERROR_INVALID_VALUE;
        }
    }
    if (!have_n || (n && !p)) {
        apigen_log("cuda: cuLaunchKernel: `extra` needs CU_LAUNCH_PARAM_BUFFER_POINTER and "
                   "CU_LAUNCH_PARAM_BUFFER_SIZE before CU_LAUNCH_PARAM_END");
        return CUDA_ERROR_INVALID_VALUE;
    }
    *buf = p;
    /* a buffer shorter than the kernel's parameters is the driver's to take:
       it copies what it is given (NCCL passes the bytes its 4 KiB argument
       struct uses); padding past the last parameter is not the kernel's */
    *size = n < l->size ? n : l->size;
    return CUDA_SUCCESS;
}

/* the kinds of launch attributes given (a bit per id; the values' unused
 * bytes are no part of it) */
static uint64_t attr_kinds(const CUlaunchAttribute *attrs, unsigned nattrs)
{
    uint64_t m = 0;
    for (unsigned i = 0; attrs && i < nattrs; i++)
        m |= (uint64_t)1 << ((unsigned)attrs[i].id & 63);
    return m;
}

/* Queued async only for a configuration within the device's and the
 * function's limits and no larger than one the server accepted
 * (launch_check.c), with no attribute whose constraints the guest cannot
 * check (co-residency of a cooperative grid, clusters). */

static int launch_vouched(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                          unsigned by, unsigned bz, unsigned shmem,
                          const CUlaunchAttribute *attrs, unsigned nattrs)
{
#ifdef APIGEN_HAS_CONST_CU_LAUNCH_ATTRIBUTE_COOPERATIVE /* 11.8: launch attributes */
    for (unsigned i = 0; i < nattrs; i++)
        if (attrs[i].id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE ||
            attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
#ifdef APIGEN_HAS_CONST_CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION /* 12.8 */
            || attrs[i].id == CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION
#endif
        )
            return 0;
#else
    if (nattrs) return 0; /* (none before 11.8) */
    (void)attrs;
#endif
    return apigen_cuda_launch_vouched(f, gx, gy, gz, bx, by, bz, shmem, attr_kinds(attrs, nattrs));
}

/* after a launch was sent: the device may write any memory; a synchronous
 * one's success is the server's acceptance of its configuration */
static void launched(CUresult e, CUfunction f, unsigned threads, unsigned shmem,
                     const CUlaunchAttribute *attrs, unsigned nattrs, CUstream stream,
                     unsigned flags)
{
    if (e != CUDA_SUCCESS) return;
    apigen_cuda_managed_wrote(0, 0, stream, (flags & APIGEN_CUDA_LAUNCH_PTSZ) != 0);
    if (flags & APIGEN_CUDA_LAUNCH_SYNC)
        apigen_cuda_launch_accepted(f, threads, shmem, attr_kinds(attrs, nattrs));
}

static CUresult launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                       unsigned by, unsigned bz, unsigned shmem, CUstream stream, void **params,
                       void **extra, const CUlaunchAttribute *attrs, unsigned nattrs,
                       unsigned flags)
{
    const layout *l;
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    if (params && extra) return CUDA_ERROR_INVALID_VALUE; /* the driver takes one form */
    CUresult e = apigen_cuda_get_layout(f, &l);
    if (e != CUDA_SUCCESS) return e;
    if ((flags & APIGEN_CUDA_LAUNCH_COOP) ||
        !launch_vouched(f, gx, gy, gz, bx, by, bz, shmem, attrs, nattrs))
        flags |= APIGEN_CUDA_LAUNCH_SYNC; /* the driver's refusal comes back at this call */
    if (extra) {
        const void *buf;
        size_t n;
        void *own = NULL; /* the caller's buffer, copied when host addresses may change */
        e = apigen_cuda_extra_buffer(l, extra, &buf, &n);
        if (e != CUDA_SUCCESS) return e;
        if (n && apigen_twin_candidates()) {
            if (!(own = malloc(n))) return CUDA_ERROR_OUT_OF_MEMORY;
            buf = memcpy(own, buf, n);
            e = apigen_cuda_reach_params(own, n);
        }
        if (e == CUDA_SUCCESS) e = apigen_cuda_managed_push();
        if (e == CUDA_SUCCESS)
            e = apigenCudaLaunch((uint64_t)(uintptr_t)f, 0, gx, gy, gz, bx, by, bz, shmem, stream,
                                 n ? buf : NULL, n, nattrs ? attrs : NULL, nattrs, flags);
        free(own);
        launched(e, f, bx * by * bz, shmem, attrs, nattrs, stream, flags);
        return e;
    }
    if (l->n && !params) {
        apigen_log("cuda: cuLaunchKernel: the kernel takes %u parameters and kernelParams is "
                   "NULL",
                   l->n);
        return CUDA_ERROR_INVALID_VALUE;
    }
    unsigned char small[1024], *buf = small;
    if (l->size > sizeof small && !(buf = malloc(l->size))) return CUDA_ERROR_OUT_OF_MEMORY;
    memset(buf, 0, l->size);
    for (unsigned i = 0; i < l->n; i++) {
        if (!params[i]) {
            if (buf != small) free(buf);
            return CUDA_ERROR_INVALID_VALUE;
        }
        memcpy(buf + l->offsets[i], params[i], l->sizes[i]);
    }
    e = apigen_cuda_reach_params(buf, l->size);
    if (e == CUDA_SUCCESS) e = apigen_cuda_managed_push();
    if (e != CUDA_SUCCESS) {
        if (buf != small) free(buf);
        return e;
    }
    /* the legacy stream's work: a later synchronous copy to the host waits for it */
    if ((!stream || stream == CU_STREAM_LEGACY) && !(flags & APIGEN_CUDA_LAUNCH_PTSZ))
        apigen_cuda_work_hint(CUDA_CALL_apigenCudaLaunch, APIGEN_WORK_ORDERED);
    e = apigenCudaLaunch((uint64_t)(uintptr_t)f, 0, gx, gy, gz, bx, by, bz, shmem, stream,
                         l->size ? buf : NULL, l->size, nattrs ? attrs : NULL, nattrs, flags);
    apigen_work_done(e == CUDA_SUCCESS);
    if (buf != small) free(buf);
    launched(e, f, bx * by * bz, shmem, attrs, nattrs, stream, flags);
    return e;
}

#ifdef APIGEN_HAS_FN_cuLaunchKernelEx /* 11.8 */
static CUresult launch_ex(const CUlaunchConfig *c, CUfunction f, void **params, void **extra,
                          unsigned flags)
{
    if (!c) return CUDA_ERROR_INVALID_VALUE;
    if (c->numAttrs && !c->attrs) return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < c->numAttrs; i++) {
        CUlaunchAttributeID id = c->attrs[i].id;
        if (id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT
#ifdef APIGEN_HAS_CONST_CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT /* 12.3 */
            || id == CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT
#endif
        ) {
            apigen_log("cuda: cuLaunchKernelEx: launch attribute %d (an event to record) is not "
                       "supported over apigen yet",
                       (int)id);
            return CUDA_ERROR_NOT_SUPPORTED;
        }
    }
    return launch(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY,
                  c->blockDimZ, c->sharedMemBytes, c->hStream, params, extra, c->attrs,
                  c->numAttrs, flags);
}
#endif

static CUresult launch_coop(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                            unsigned by, unsigned bz, unsigned shmem, CUstream stream,
                            void **params, unsigned flags)
{
#ifdef APIGEN_HAS_CONST_CU_LAUNCH_ATTRIBUTE_COOPERATIVE
    CUlaunchAttribute a;
    memset(&a, 0, sizeof a);
    a.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    a.value.cooperative = 1;
    return launch(f, gx, gy, gz, bx, by, bz, shmem, stream, params, NULL, &a, 1, flags);
#else
    return launch(f, gx, gy, gz, bx, by, bz, shmem, stream, params, NULL, NULL, 0,
                  flags | APIGEN_CUDA_LAUNCH_COOP);
#endif
}

APIGEN_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                      unsigned int gridDimZ, unsigned int blockDimX,
                                      unsigned int blockDimY, unsigned int blockDimZ,
                                      unsigned int sharedMemBytes, CUstream hStream,
                                      void **kernelParams, void **extra)
{
    return launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                  sharedMemBytes, hStream, kernelParams, extra, NULL, 0, 0);
}

APIGEN_EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX,
                                           unsigned int gridDimY, unsigned int gridDimZ,
                                           unsigned int blockDimX, unsigned int blockDimY,
                                           unsigned int blockDimZ, unsigned int sharedMemBytes,
                                           CUstream hStream, void **kernelParams, void **extra)
{
    return launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                  sharedMemBytes, hStream, kernelParams, extra, NULL, 0, APIGEN_CUDA_LAUNCH_PTSZ);
}

#ifdef APIGEN_HAS_FN_cuLaunchKernelEx
APIGEN_EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f,
                                        void **kernelParams, void **extra)
{
    return launch_ex(config, f, kernelParams, extra, 0);
}

APIGEN_EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
                                             void **kernelParams, void **extra)
{
    return launch_ex(config, f, kernelParams, extra, APIGEN_CUDA_LAUNCH_PTSZ);
}
#endif

APIGEN_EXPORT CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX,
                                                 unsigned int gridDimY, unsigned int gridDimZ,
                                                 unsigned int blockDimX, unsigned int blockDimY,
                                                 unsigned int blockDimZ,
                                                 unsigned int sharedMemBytes, CUstream hStream,
                                                 void **kernelParams)
{
    return launch_coop(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                       sharedMemBytes, hStream, kernelParams, 0);
}

APIGEN_EXPORT CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX,
                                                      unsigned int gridDimY,
                                                      unsigned int gridDimZ,
                                                      unsigned int blockDimX,
                                                      unsigned int blockDimY,
                                                      unsigned int blockDimZ,
                                                      unsigned int sharedMemBytes,
                                                      CUstream hStream, void **kernelParams)
{
    return launch_coop(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                       sharedMemBytes, hStream, kernelParams, APIGEN_CUDA_LAUNCH_PTSZ);
}
