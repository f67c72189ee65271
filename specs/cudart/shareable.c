/* Shareable handles of memory pools in the runtime's guest (host_shareable.c
 * is the server's half), as the driver stub's (specs/cuda/shareable.c): a
 * POSIX file descriptor the runtime exports names the server's descriptor,
 * which the server keeps; the program gets a descriptor of its own holding
 * the server's token (runtime/shareable_guest.c) and passes it to another
 * process as it would the runtime's (NVIDIA's streamOrderedAllocationIPC
 * sample). Importing reads the token back. Fabric handles are data the
 * server's runtime reads: they travel as they are. */
#include <stdint.h>
#include <string.h>

#include "apigen_rt.h"
#include "cudart_wire.h"
#include "cudart_features.h"

#ifdef APIGEN_HAS_CONST_cudaMemHandleTypeFabric
#define IS_FABRIC(t) ((t) == cudaMemHandleTypeFabric)
#else
#define IS_FABRIC(t) 0
#endif

#define WIRE 64 /* the spec's bytes for the handle: a cudaMemFabricHandle_t, or a token */

cudaError_t cudart_fwd_cudaMemPoolExportToShareableHandle(void *shareableHandle, cudaMemPool_t memPool,
                                                         enum cudaMemAllocationHandleType handleType,
                                                         unsigned int flags);
cudaError_t cudart_fwd_cudaMemPoolImportFromShareableHandle(cudaMemPool_t *memPool, void *shareableHandle,
                                                           enum cudaMemAllocationHandleType handleType,
                                                           unsigned int flags);

APIGEN_EXPORT cudaError_t cudaMemPoolExportToShareableHandle(void *shareableHandle, cudaMemPool_t memPool,
                                                             enum cudaMemAllocationHandleType handleType,
                                                             unsigned int flags)
{
    if (!shareableHandle) return cudaErrorInvalidValue;
    unsigned char wire[WIRE] = {0};
    cudaError_t e = cudart_fwd_cudaMemPoolExportToShareableHandle(wire, memPool, handleType, flags);
    if (e != cudaSuccess) return e;
    if (handleType != cudaMemHandleTypePosixFileDescriptor) {
        memcpy(shareableHandle, wire, WIRE); /* a fabric handle: the only other kind the server passes */
        return cudaSuccess;
    }
    int fd = apigen_shareable_fd(wire);
    if (fd < 0) {
        apigen_log("cudaMemPoolExportToShareableHandle: no descriptor could be made for the "
                   "exported pool (memfd_create): cudaErrorMemoryAllocation");
        return cudaErrorMemoryAllocation;
    }
    memcpy(shareableHandle, &fd, sizeof fd);
    return cudaSuccess;
}

APIGEN_EXPORT cudaError_t cudaMemPoolImportFromShareableHandle(cudaMemPool_t *memPool, void *shareableHandle,
                                                               enum cudaMemAllocationHandleType handleType,
                                                               unsigned int flags)
{
    unsigned char wire[WIRE] = {0};
    if (!memPool) return cudaErrorInvalidValue;
    if (handleType == cudaMemHandleTypePosixFileDescriptor) {
        /* the descriptor itself is the argument, cast to a pointer; the zero
         * token for one the stub did not make: the server's runtime answers
         * for a descriptor that names no pool, as natively */
        if (!apigen_shareable_token((int)(intptr_t)shareableHandle, wire))
            apigen_log("cudaMemPoolImportFromShareableHandle: descriptor %d is not one the runtime "
                       "stub exported (another runtime's export cannot name the server's memory): "
                       "the server's runtime answers for a descriptor that names nothing",
                       (int)(intptr_t)shareableHandle);
    } else if (IS_FABRIC(handleType) && shareableHandle) {
        memcpy(wire, shareableHandle, WIRE);
    } else if (!shareableHandle) {
        return cudaErrorInvalidValue;
    }
    return cudart_fwd_cudaMemPoolImportFromShareableHandle(memPool, wire, handleType, flags);
}
