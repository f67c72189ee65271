/* Managed memory through the cudart stub (docs/managed.md).
 *
 * cudaMallocManaged and __managed__ variables live on the server; the guest
 * maps a mirror at the same virtual address (runtime/mirror.c) and keeps
 * CUDA's coherence rules for devices without concurrent managed access:
 * - before anything on the server may read managed memory (a launch, a
 *   graph launch, a copy, a set), the pages the application wrote since
 *   they were last moved go to the server (cudart_managed_push);
 * - a launch (or a copy or set into managed memory) marks the mirrors
 *   stale; at a synchronization (stream, device, event synchronize, a
 *   successful stream or event query, a synchronous copy, cudaFree) the
 *   pages the host did not write since come back (cudart_managed_sync).
 * Which streams may still write is the runtime's (apigen_mirror_queued,
 * apigen_mirror_synced), shared with the driver stub's hooks. With no
 * managed memory every hook is one atomic load. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include <stdbool.h>
#include <stdint.h>

#include "apigen_rt.h"
#include "cudart_wire.h"
#include "managed.h"
#include "registered.h"

cudaError_t cudart_fwd_cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind);

static int push_io(void *alias, uint64_t addr, size_t len, void *user)
{
    (void)user;
    return (int)cudart_fwd_cudaMemcpy((void *)(uintptr_t)addr, alias, len, cudaMemcpyHostToDevice);
}

static int pull_io(void *alias, uint64_t addr, size_t len, void *user)
{
    (void)user;
    return (int)cudart_fwd_cudaMemcpy(alias, (const void *)(uintptr_t)addr, len, cudaMemcpyDeviceToHost);
}

cudaError_t cudart_managed_push(void)
{
    cudaError_t e = cudart_registered_push(); /* mapped registrations (registered.c) */
    if (e != cudaSuccess) return e;
    if (!apigen_mirror_live()) return cudaSuccess;
    return (cudaError_t)apigen_mirror_push(push_io, NULL);
}

/* A stream as a queue of the runtime's: the per-thread default stream is
 * one per thread (owner), the legacy stream one for all. */
static void queue_of(cudaStream_t s, bool ptsz, uint64_t *q, uint64_t *owner)
{
    *owner = 0;
    if ((!s && ptsz) || s == cudaStreamPerThread) {
        *q = (uint64_t)(uintptr_t)cudaStreamPerThread;
        *owner = (uint64_t)pthread_self();
    } else {
        *q = (uint64_t)(uintptr_t)(s ? s : cudaStreamLegacy);
    }
}

void cudart_managed_wrote(const void *dst, size_t n, cudaStream_t s, bool ptsz)
{
    cudart_registered_wrote(dst, n);
    if (!apigen_mirror_live()) return;
    uint64_t q, o;
    queue_of(s, ptsz, &q, &o);
    apigen_mirror_queued(q, o, (uint64_t)(uintptr_t)dst, dst ? (n ? n : 1) : 0);
}

void cudart_managed_launched(cudaStream_t s, bool ptsz)
{
    cudart_managed_wrote(NULL, 0, s, ptsz);
}

cudaError_t cudart_managed_sync(int what, cudaStream_t s, bool ptsz)
{
    cudaError_t e = cudart_registered_sync(what == CUDART_SYNC_DEVICE);
    if (e != cudaSuccess) return e;
    if (!apigen_mirror_live()) return cudaSuccess;
    uint64_t q, o;
    queue_of(s, ptsz, &q, &o);
    int scope = what == CUDART_SYNC_DEVICE   ? APIGEN_SYNC_ALL
                : what == CUDART_SYNC_STREAM ? APIGEN_SYNC_QUEUE
                                             : APIGEN_SYNC_POINT;
    return (cudaError_t)apigen_mirror_synced(scope, q, o, pull_io, NULL);
}

cudaError_t cudart_managed_map(void *ptr, size_t size, bool clean, const char *what)
{
    apigen_mirror_own(&cudart_api, push_io); /* the family's libraries push through it */
    int r = apigen_mirror_map((uint64_t)(uintptr_t)ptr, (uint64_t)size, clean);
    if (r == 0) return cudaSuccess;
    apigen_log("cudart: %s: the server's managed memory is at %p (%zu bytes), but %s in this "
               "process, so the application could not reach it at the same address: refused "
               "(cudaErrorNotSupported)",
               what, ptr, size,
               r == EEXIST ? "that address is taken" : "it could not be mapped there");
    return cudaErrorNotSupported;
}

void cudart_managed_unmap(void *ptr)
{
    apigen_mirror_unmap((uint64_t)(uintptr_t)ptr);
}

bool cudart_managed_holds(const void *p)
{
    return apigen_mirror_live() && apigen_mirror_find((uint64_t)(uintptr_t)p, NULL, NULL);
}

#ifdef APIGEN_HAS_FN_cudaLibraryGetManaged
cudaError_t cudart_fwd_cudaLibraryGetManaged(void **dptr, size_t *bytes, cudaLibrary_t library,
                                             const char *name);

/* A library's __managed__ variable: mirrored with its current value. */
APIGEN_EXPORT cudaError_t cudaLibraryGetManaged(void **dptr, size_t *bytes, cudaLibrary_t library,
                                                const char *name)
{
    size_t n = 0;
    cudaError_t e = cudart_fwd_cudaLibraryGetManaged(dptr, &n, library, name);
    if (e != cudaSuccess || !dptr || !*dptr) return e;
    if (bytes) *bytes = n;
    if (cudart_managed_holds(*dptr)) return e; /* asked before */
    e = cudart_managed_map(*dptr, n, true, name ? name : "cudaLibraryGetManaged");
    if (e != cudaSuccess) return e;
    apigen_dev_note(&cudart_api, apigen_current_server(&cudart_api), (uint64_t)(uintptr_t)*dptr,
                    (uint64_t)(n ? n : 1));
    cudart_managed_wrote(*dptr, n, NULL, false);
    return cudart_managed_sync(CUDART_SYNC_STREAM, NULL, false);
}
#endif
