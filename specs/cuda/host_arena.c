/* Host side of the CUDA driver stub's shared-memory arena (runtime
 * arena_host.c): this server takes guests' arenas, so cuMemAllocHost /
 * cuMemHostAlloc memory of a guest on this machine (unix://, shm://) is
 * memory of this process too. Its mapping is registered with the driver
 * (portable, and mapped when the device can: a kernel may reach it through
 * cuMemHostGetDevicePointer) under the calling thread's current context when
 * a call first uses it: copies from and to it are DMA from pinned memory,
 * and a copy a stream capture records can name it at every launch of the
 * graph. apigenCudaMemcpyArena is an async copy whose host side is named by
 * its address in this mapping (a captured copy's host side or shadow, a
 * copy into pinned memory that stays async as natively). The handlers of
 * this API read the few buffers they interpret (descriptors, image
 * headers) into their own memory first or pass them to the driver as they
 * are; a guest racing its own arena bytes reaches only its session
 * process (api.isolation: process). */
#include <stdbool.h>
#include <stdint.h>

#include "apigen_rt.h"
#include "cuda_wire.h"

extern const apigen_api apigen_api_cuda;

/* Registration needs a context: the calling thread's (a call that uses the
 * arena needs one natively too). Without one nothing is registered (the
 * memory then works as pageable memory would). */
static bool cuda_host_register(void *p, size_t n)
{
    CUcontext cur = NULL;
    if (cuCtxGetCurrent(&cur) != CUDA_SUCCESS || !cur) return false;
    if (cuMemHostRegister_v2(p, n, CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP) ==
        CUDA_SUCCESS)
        return true;
    return cuMemHostRegister_v2(p, n, CU_MEMHOSTREGISTER_PORTABLE) == CUDA_SUCCESS;
}

static void cuda_host_unregister(void *p)
{
    (void)cuMemHostUnregister(p);
}

__attribute__((constructor)) static void cuda_host_arena_init(void)
{
    apigen_set_host_memory(cuda_host_register, cuda_host_unregister);
    apigen_arena_accept(&apigen_api_cuda);
}

CUresult cuda_host_memcpy_arena(apigen_call_ctx *cx, CUdeviceptr dev, uint64_t host,
                                size_t ByteCount, CUstream hStream, unsigned int flags)
{
    if (!ByteCount) return CUDA_SUCCESS;
    if (!apigen_arena_holds(cx, host, ByteCount)) {
        apigen_log("apigenCudaMemcpyArena: [%#llx, +%zu) is not inside the client's "
                   "shared-memory arena: refused (CUDA_ERROR_INVALID_VALUE)",
                   (unsigned long long)host, ByteCount);
        return CUDA_ERROR_INVALID_VALUE;
    }
    void *h = (void *)(uintptr_t)host;
    int pt = (flags & APIGEN_CUDA_ARENA_PTSZ) != 0;
    if (flags & APIGEN_CUDA_ARENA_TO_DEVICE)
        return pt ? cuMemcpyHtoDAsync_v2_ptsz(dev, h, ByteCount, hStream)
                  : cuMemcpyHtoDAsync_v2(dev, h, ByteCount, hStream);
    return pt ? cuMemcpyDtoHAsync_v2_ptsz(h, dev, ByteCount, hStream)
              : cuMemcpyDtoHAsync_v2(h, dev, ByteCount, hStream);
}

/* Mapped host memory: only the client's arena, never another address of
 * this process. */
CUresult cuda_host_get_device_pointer(apigen_call_ctx *cx, CUdeviceptr *pdptr, void *p,
                                      unsigned int Flags)
{
    if (!apigen_arena_holds(cx, (uint64_t)(uintptr_t)p, 1)) {
        apigen_log("cuMemHostGetDevicePointer_v2: %p is not in the client's shared-memory arena: "
                   "refused (CUDA_ERROR_INVALID_VALUE)", p);
        return CUDA_ERROR_INVALID_VALUE;
    }
    return cuMemHostGetDevicePointer_v2(pdptr, p, Flags);
}
