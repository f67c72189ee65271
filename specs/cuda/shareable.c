/* Shareable handles of allocations and pools in the guest: a POSIX file
 * descriptor the driver exports names the server's descriptor, which the
 * server keeps; the program gets a descriptor of its own holding the
 * server's token (runtime/shareable_guest.c) and passes it to another
 * process as it would the driver's (cudaIpc-free IPC: memMapIPCDrv,
 * stream-ordered allocation IPC, NCCL's and PyTorch's cuMem sharing).
 * Importing reads the token back. Fabric handles are data the server's
 * driver reads: they travel as they are. Other kinds (Win32, KMT) are the
 * server's driver's to refuse. */
#include <stdint.h>
#include <string.h>

#include "apigen_rt.h"
#include "cuda_wire.h"
#include "cuda_features.h"

/* fabric handles (CUDA 12.3 on): data the server's driver reads */
#ifdef APIGEN_HAS_CONST_CU_MEM_HANDLE_TYPE_FABRIC
#define IS_FABRIC(t) ((t) == CU_MEM_HANDLE_TYPE_FABRIC)
#define FABRIC_BYTES sizeof(CUmemFabricHandle)
#else
#define IS_FABRIC(t) 0
#define FABRIC_BYTES 64
#endif

#define WIRE 64 /* the spec's bytes for the handle: a CUmemFabricHandle, or a token */

CUresult cuda_fwd_cuMemExportToShareableHandle(void *shareableHandle, CUmemGenericAllocationHandle handle,
                                               CUmemAllocationHandleType handleType, unsigned long long flags);
CUresult cuda_fwd_cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *handle, void *osHandle,
                                                 CUmemAllocationHandleType shHandleType);
CUresult cuda_fwd_cuMemPoolExportToShareableHandle(void *handle_out, CUmemoryPool pool,
                                                   CUmemAllocationHandleType handleType, unsigned long long flags);
CUresult cuda_fwd_cuMemPoolImportFromShareableHandle(CUmemoryPool *pool_out, void *handle,
                                                     CUmemAllocationHandleType handleType,
                                                     unsigned long long flags);

/* What the program gets for the wire bytes of an export. */
static CUresult give(void *out, const unsigned char *wire, CUmemAllocationHandleType type)
{
    if (type == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
        int fd = apigen_shareable_fd(wire);
        if (fd < 0) {
            apigen_log("cuda: a shareable handle: no descriptor could be made for it (memfd_create): "
                       "CUDA_ERROR_OUT_OF_MEMORY");
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        memcpy(out, &fd, sizeof fd);
    } else {
        memcpy(out, wire, FABRIC_BYTES); /* the only other kind the server passes */
    }
    return CUDA_SUCCESS;
}

/* The wire bytes for what the program hands in; false: nothing to read. */
static bool take(unsigned char *wire, void *in, CUmemAllocationHandleType type)
{
    memset(wire, 0, WIRE);
    if (type == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
        /* the descriptor itself is the argument, cast to a pointer */
        if (apigen_shareable_token((int)(intptr_t)in, wire)) return true;
        /* the zero token: the server's driver answers for a descriptor that
           names no allocation (host_shareable.c), as natively */
        apigen_log("cuda: import of a shareable handle: descriptor %d is not one the driver stub "
                   "exported (an export of another driver cannot name the server's memory): the "
                   "server's driver answers for a descriptor that names nothing",
                   (int)(intptr_t)in);
        return true;
    }
    if (!in) return false;
    if (IS_FABRIC(type)) memcpy(wire, in, FABRIC_BYTES);
    return true;
}

APIGEN_EXPORT CUresult cuMemExportToShareableHandle(void *shareableHandle, CUmemGenericAllocationHandle handle,
                                      CUmemAllocationHandleType handleType, unsigned long long flags)
{
    if (!shareableHandle) return CUDA_ERROR_INVALID_VALUE;
    unsigned char wire[WIRE] = {0};
    CUresult e = cuda_fwd_cuMemExportToShareableHandle(wire, handle, handleType, flags);
    return e == CUDA_SUCCESS ? give(shareableHandle, wire, handleType) : e;
}

APIGEN_EXPORT CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *handle, void *osHandle,
                                        CUmemAllocationHandleType shHandleType)
{
    unsigned char wire[WIRE];
    if (!handle || !take(wire, osHandle, shHandleType)) return CUDA_ERROR_INVALID_VALUE;
    return cuda_fwd_cuMemImportFromShareableHandle(handle, wire, shHandleType);
}

APIGEN_EXPORT CUresult cuMemPoolExportToShareableHandle(void *handle_out, CUmemoryPool pool,
                                          CUmemAllocationHandleType handleType, unsigned long long flags)
{
    if (!handle_out) return CUDA_ERROR_INVALID_VALUE;
    unsigned char wire[WIRE] = {0};
    CUresult e = cuda_fwd_cuMemPoolExportToShareableHandle(wire, pool, handleType, flags);
    return e == CUDA_SUCCESS ? give(handle_out, wire, handleType) : e;
}

APIGEN_EXPORT CUresult cuMemPoolImportFromShareableHandle(CUmemoryPool *pool_out, void *handle,
                                            CUmemAllocationHandleType handleType, unsigned long long flags)
{
    unsigned char wire[WIRE];
    if (!pool_out || !take(wire, handle, handleType)) return CUDA_ERROR_INVALID_VALUE;
    return cuda_fwd_cuMemPoolImportFromShareableHandle(pool_out, wire, handleType, flags);
}
