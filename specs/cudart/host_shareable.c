/* Shareable handles of memory pools on the runtime's server
 * (specs/cudart/shareable.c is the guest's half; the driver's are
 * specs/cuda/host_shareable.c): a POSIX descriptor the runtime exports stays
 * here (runtime/shareable_host.c) and the guest gets its token in the 64
 * wire bytes; an import turns the token back into a descriptor, which may
 * come from another session's process, and closes it after the runtime took
 * what it names. Fabric handles pass as they are; other kinds (Win32, KMT:
 * not on Linux) are refused. */
#include <stdint.h>
#include <unistd.h>

#include "apigen_rt.h"
#include "cudart_wire.h"
#include "cudart_features.h"

#ifdef APIGEN_HAS_CONST_cudaMemHandleTypeFabric
#define IS_FABRIC(t) ((t) == cudaMemHandleTypeFabric)
#else
#define IS_FABRIC(t) 0
#endif

static cudaError_t kind_refused(const char *fn, enum cudaMemAllocationHandleType type)
{
    apigen_log("cudart: %s: shareable handle kind %d is not one the server can pass (POSIX file "
               "descriptors and fabric handles are): cudaErrorNotSupported",
               fn, (int)type);
    return cudaErrorNotSupported;
}

cudaError_t cudart_host_pool_export_shareable(apigen_call_ctx *cx, void *wire, cudaMemPool_t pool,
                                              enum cudaMemAllocationHandleType type, unsigned int flags)
{
    if (IS_FABRIC(type)) return cudaMemPoolExportToShareableHandle(wire, pool, type, flags);
    if (type != cudaMemHandleTypePosixFileDescriptor)
        return kind_refused("cudaMemPoolExportToShareableHandle", type);
    int fd = -1;
    cudaError_t e = cudaMemPoolExportToShareableHandle(&fd, pool, type, flags);
    if (e != cudaSuccess) return e;
    if (apigen_shareable_export(cx, fd, wire)) return cudaSuccess;
    close(fd);
    apigen_log("cudart: an exported shareable handle could not be kept: cudaErrorMemoryAllocation");
    return cudaErrorMemoryAllocation;
}

cudaError_t cudart_host_pool_import_shareable(apigen_call_ctx *cx, cudaMemPool_t *pool, void *wire,
                                              enum cudaMemAllocationHandleType type, unsigned int flags)
{
    if (IS_FABRIC(type)) return cudaMemPoolImportFromShareableHandle(pool, wire, type, flags);
    if (type != cudaMemHandleTypePosixFileDescriptor)
        return kind_refused("cudaMemPoolImportFromShareableHandle", type);
    int fd = apigen_shareable_import_or_none(cx, wire, "cudart: cudaMemPoolImportFromShareableHandle");
    if (fd < 0) return cudaErrorInvalidValue;
    cudaError_t e = cudaMemPoolImportFromShareableHandle(pool, (void *)(intptr_t)fd, type, flags);
    close(fd);
    return e;
}
