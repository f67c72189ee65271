/* Shareable handles on the server (specs/cuda/shareable.c is the guest's
 * half): a POSIX descriptor the driver exports stays here
 * (runtime/shareable_host.c) and the guest gets its token in the 64 wire
 * bytes; an import turns the token back into a descriptor, which may come
 * from another session's process, and closes it after the driver took what
 * it names (as programs do). Fabric handles pass as they are; other kinds
 * (Win32, KMT: not on Linux) are refused. */
#include <stdint.h>
#include <unistd.h>

#include "apigen_rt.h"
#include "cuda_wire.h"
#include "cuda_features.h"

/* fabric handles (CUDA 12.3 on): data the server's driver reads */
#ifdef APIGEN_HAS_CONST_CU_MEM_HANDLE_TYPE_FABRIC
#define IS_FABRIC(t) ((t) == CU_MEM_HANDLE_TYPE_FABRIC)
#else
#define IS_FABRIC(t) 0
#endif

static CUresult kind_refused(const char *fn, CUmemAllocationHandleType type)
{
    apigen_log("cuda: %s: shareable handle kind %d is not one the server can pass (POSIX file "
               "descriptors and fabric handles are): CUDA_ERROR_NOT_SUPPORTED",
               fn, (int)type);
    return CUDA_ERROR_NOT_SUPPORTED;
}

/* The driver's descriptor, kept; its token into wire. */
static CUresult keep(apigen_call_ctx *cx, CUresult e, int fd, void *wire)
{
    if (e != CUDA_SUCCESS) return e;
    if (apigen_shareable_export(cx, fd, wire)) return CUDA_SUCCESS;
    close(fd);
    apigen_log("cuda: an exported shareable handle could not be kept: CUDA_ERROR_OUT_OF_MEMORY");
    return CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cuda_host_export_shareable(apigen_call_ctx *cx, void *wire, CUmemGenericAllocationHandle handle,
                                    CUmemAllocationHandleType type, unsigned long long flags)
{
    if (IS_FABRIC(type)) return cuMemExportToShareableHandle(wire, handle, type, flags);
    if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
        return kind_refused("cuMemExportToShareableHandle", type);
    int fd = -1;
    CUresult e = cuMemExportToShareableHandle(&fd, handle, type, flags);
    return keep(cx, e, fd, wire);
}

CUresult cuda_host_import_shareable(apigen_call_ctx *cx, CUmemGenericAllocationHandle *handle, void *wire,
                                    CUmemAllocationHandleType type)
{
    if (IS_FABRIC(type)) return cuMemImportFromShareableHandle(handle, wire, type);
    if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
        return kind_refused("cuMemImportFromShareableHandle", type);
    int fd = apigen_shareable_import_or_none(cx, wire, "cuda: cuMemImportFromShareableHandle");
    if (fd < 0) return CUDA_ERROR_INVALID_VALUE;
    CUresult e = cuMemImportFromShareableHandle(handle, (void *)(intptr_t)fd, type);
    close(fd);
    return e;
}

CUresult cuda_host_pool_export_shareable(apigen_call_ctx *cx, void *wire, CUmemoryPool pool,
                                         CUmemAllocationHandleType type, unsigned long long flags)
{
    if (IS_FABRIC(type)) return cuMemPoolExportToShareableHandle(wire, pool, type, flags);
    if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
        return kind_refused("cuMemPoolExportToShareableHandle", type);
    int fd = -1;
    CUresult e = cuMemPoolExportToShareableHandle(&fd, pool, type, flags);
    return keep(cx, e, fd, wire);
}

CUresult cuda_host_pool_import_shareable(apigen_call_ctx *cx, CUmemoryPool *pool_out, void *wire,
                                         CUmemAllocationHandleType type, unsigned long long flags)
{
    if (IS_FABRIC(type)) return cuMemPoolImportFromShareableHandle(pool_out, wire, type, flags);
    if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
        return kind_refused("cuMemPoolImportFromShareableHandle", type);
    int fd = apigen_shareable_import_or_none(cx, wire, "cuda: cuMemPoolImportFromShareableHandle");
    if (fd < 0) return CUDA_ERROR_INVALID_VALUE;
    CUresult e = cuMemPoolImportFromShareableHandle(pool_out, (void *)(intptr_t)fd, type, flags);
    close(fd);
    return e;
}
