/* Device ranges the server makes the client's in its host wrappers
 * (host.c: a module's or library's global, a pitched allocation) are noted
 * in the guest too, as `creates: {bytes:}` calls note theirs: a copy that
 * runs past such a range is then refused before the stub reads the host
 * buffer (apigen_dev_overruns; the driver checks the device side first, and
 * the host buffer may be no larger than the range), and async calls on it
 * are vouched for. */
#include <stddef.h>

#include "apigen_rt.h"
#include "cuda_guest.h"

CUresult cuda_fwd_cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod,
                                       const char *name);
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

APIGEN_EXPORT CUresult cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod,
                                            const char *name)
{
    CUdeviceptr p = 0;
    size_t n = 0;
    CUresult e = cuda_fwd_cuModuleGetGlobal_v2(&p, &n, hmod, name);
    if (e != CUDA_SUCCESS) return e;
    note(server_of((uint64_t)(uintptr_t)hmod), p, n);
    if ((e = apigen_cuda_managed_global(p, n, name)) != CUDA_SUCCESS) return e;
    if (dptr) *dptr = p;
    if (bytes) *bytes = n;
    return e;
}

#ifdef APIGEN_HAS_FN_cuLibraryGetGlobal /* 12.0: libraries */
CUresult cuda_fwd_cuLibraryGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUlibrary library,
                                     const char *name);
APIGEN_EXPORT CUresult cuLibraryGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUlibrary library,
                                          const char *name)
{
    CUdeviceptr p = 0;
    size_t n = 0;
    CUresult e = cuda_fwd_cuLibraryGetGlobal(&p, &n, library, name);
    if (e != CUDA_SUCCESS) return e;
    note(server_of((uint64_t)(uintptr_t)library), p, n);
    if ((e = apigen_cuda_managed_global(p, n, name)) != CUDA_SUCCESS) return e;
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
