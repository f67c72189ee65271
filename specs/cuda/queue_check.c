/* Synchronous copies the driver stub may queue (async_check of
 * specs/cuda.yaml's cuMemcpyHtoD_v2 and its _ptds form). Natively a copy
 * from pageable host memory returns once the driver has staged the source
 * bytes, before the DMA ran: the caller may reuse its buffer, nothing more
 * is promised. Forwarded, the bytes travel with the frame (or leave before
 * the call returns: zero-copy pieces flush the queue), so the copy may be
 * queued like a launch when the driver could not refuse it at the call:
 *   - a context is current on this thread (known in the guest: the
 *     thread's state slot, specs/cuda.yaml api.thread_state), else the
 *     driver answers CUDA_ERROR_INVALID_CONTEXT at the call;
 *   - the destination is a range the guest vouches for (the generated
 *     code checks `device: true, bytes: ByteCount` itself) and not managed
 *     memory (a copy into it is fully synchronous natively; managed.c
 *     pulls after it anyway);
 *   - the source is not pinned memory of the arena (the server would read
 *     it when the copy runs, and natively a copy from pinned memory is
 *     complete at return);
 *   - no stream capture was ever begun in this process (a copy on the
 *     legacy stream while another stream captures is refused at the call).
 * An error of the copy itself (a device fault of earlier work) then comes
 * at the thread's next synchronizing call (api.errors.async: next_call),
 * as a launch's does and as cudart's queued cudaMemcpyToSymbol's. The
 * stub's own copies (managed.c's pushes, a mapped registration's twin,
 * host_mem.c's first fill of it) stay synchronous: their errors are the
 * error of the call they serve (apigen_cuda_own_copies). */
#include <stdbool.h>
#include <stdint.h>

#include "apigen_rt.h"
#include "capture_mark.h"
#include "cuda_guest.h"
#include "cuda_wire.h"

static _Thread_local unsigned own_; /* apigen_cuda_own_copies depth */

void apigen_cuda_own_copies(bool on)
{
    if (on)
        own_++;
    else if (own_)
        own_--;
}

/* The conditions that do not depend on the copy: also the twins' spans'
 * (managed.c, apigenCudaWriteSpans' flags). */
bool cuda_may_queue_own(void)
{
    uint64_t ctx = 0;
    /* (an open capture refuses some copies at the call) */
    return !own_ && apigen_tstate_get(&cuda_api, 0, &ctx) && ctx && apigen_cuda_captures_none();
}

bool cuda_may_queue_htod(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
    if (!srcHost || !ByteCount || !cuda_may_queue_own()) return false;
    if (apigen_arena_owns(srcHost) || apigen_arena_owns((const char *)srcHost + ByteCount - 1))
        return false;
    return !apigen_mirror_find((uint64_t)dstDevice, NULL, NULL) &&
           !apigen_mirror_find((uint64_t)dstDevice + ByteCount - 1, NULL, NULL);
}
