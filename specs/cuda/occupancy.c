/* Occupancy queries and batch copies of the CUDA driver stub.
 * - cuOccupancyMaxPotentialBlockSize(WithFlags): the driver would call
 *   blockSizeToDynamicSMemSize, a function of the guest: refused with a log
 *   line when given; without it, the server's answer.
 * - cuOccupancyMaxPotentialClusterSize / MaxActiveClusters: the launch
 *   configuration's fields and attributes travel as values and an array.
 * - cuMemcpyBatchAsync (and _v2, _ptsz): one cuMemcpyAsync per entry, in
 *   stream order; the attributes only order and hint, which stream order
 *   satisfies. */
#include <stdint.h>
#include <string.h>

#include "apigen_rt.h"
#include "cuda_guest.h"
#include "cuda_wire.h"

static CUresult block_size(int *minGridSize, int *blockSize, CUfunction func,
                           CUoccupancyB2DSize cb, size_t dyn, int limit, unsigned flags,
                           int with_flags)
{
    if (cb) {
        apigen_log("cuda: cuOccupancyMaxPotentialBlockSize: blockSizeToDynamicSMemSize is a "
                   "function of this process the server's driver cannot call: not supported "
                   "(pass NULL and dynamicSMemSize)");
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    return apigenCudaOccupancyBlockSize(minGridSize, blockSize, (uint64_t)(uintptr_t)func, dyn,
                                        limit, flags, with_flags);
}

APIGEN_EXPORT CUresult cuOccupancyMaxPotentialBlockSize(int *minGridSize, int *blockSize,
                                                        CUfunction func,
                                                        CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                                        size_t dynamicSMemSize, int blockSizeLimit)
{
    return block_size(minGridSize, blockSize, func, blockSizeToDynamicSMemSize, dynamicSMemSize,
                      blockSizeLimit, 0, 0);
}

APIGEN_EXPORT CUresult cuOccupancyMaxPotentialBlockSizeWithFlags(
    int *minGridSize, int *blockSize, CUfunction func, CUoccupancyB2DSize blockSizeToDynamicSMemSize,
    size_t dynamicSMemSize, int blockSizeLimit, unsigned int flags)
{
    return block_size(minGridSize, blockSize, func, blockSizeToDynamicSMemSize, dynamicSMemSize,
                      blockSizeLimit, flags, 1);
}

#ifdef APIGEN_HAS_FN_cuOccupancyMaxActiveClusters /* 11.8: clusters */
static CUresult cluster(int which, int *out, CUfunction func, const CUlaunchConfig *c)
{
    if (!c) return CUDA_ERROR_INVALID_VALUE;
    if (c->numAttrs && !c->attrs) return CUDA_ERROR_INVALID_VALUE;
    unsigned dims[7] = {c->gridDimX,  c->gridDimY,  c->gridDimZ,     c->blockDimX,
                        c->blockDimY, c->blockDimZ, c->sharedMemBytes};
    return apigenCudaOccupancyCluster(which, out, (uint64_t)(uintptr_t)func, dims, c->hStream,
                                      c->numAttrs ? c->attrs : NULL, c->numAttrs);
}

APIGEN_EXPORT CUresult cuOccupancyMaxPotentialClusterSize(int *clusterSize, CUfunction func,
                                                          const CUlaunchConfig *config)
{
    return cluster(0, clusterSize, func, config);
}

APIGEN_EXPORT CUresult cuOccupancyMaxActiveClusters(int *numClusters, CUfunction func,
                                                    const CUlaunchConfig *config)
{
    return cluster(1, numClusters, func, config);
}
#endif

typedef CUresult (*copy_async_fn)(CUdeviceptr, CUdeviceptr, size_t, CUstream);

#ifdef APIGEN_HAS_TYPE_CUmemcpyAttributes /* 12.8 */
static CUresult batch(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                      size_t numAttrs, size_t *failIdx, CUstream s, copy_async_fn copy)
{
    if (failIdx) *failIdx = SIZE_MAX;
    if (!count || !dsts || !srcs || !sizes || !numAttrs) return CUDA_ERROR_INVALID_VALUE;
    if (s == NULL || s == CU_STREAM_LEGACY) return CUDA_ERROR_INVALID_VALUE; /* as the driver */
    for (size_t i = 0; i < count; i++) {
        CUresult e = copy(dsts[i], srcs[i], sizes[i], s);
        if (e != CUDA_SUCCESS) {
            if (failIdx) *failIdx = i;
            return e;
        }
    }
    return CUDA_SUCCESS;
}

APIGEN_EXPORT CUresult cuMemcpyBatchAsync(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes,
                                          size_t count, CUmemcpyAttributes *attrs,
                                          size_t *attrsIdxs, size_t numAttrs, size_t *failIdx,
                                          CUstream hStream)
{
    (void)attrs, (void)attrsIdxs;
    return batch(dsts, srcs, sizes, count, numAttrs, failIdx, hStream, cuMemcpyAsync);
}

APIGEN_EXPORT CUresult cuMemcpyBatchAsync_ptsz(CUdeviceptr *dsts, CUdeviceptr *srcs,
                                               size_t *sizes, size_t count,
                                               CUmemcpyAttributes *attrs, size_t *attrsIdxs,
                                               size_t numAttrs, size_t *failIdx, CUstream hStream)
{
    (void)attrs, (void)attrsIdxs;
    return batch(dsts, srcs, sizes, count, numAttrs, failIdx, hStream, cuMemcpyAsync_ptsz);
}

APIGEN_EXPORT CUresult cuMemcpyBatchAsync_v2(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes,
                                             size_t count, CUmemcpyAttributes *attrs,
                                             size_t *attrsIdxs, size_t numAttrs, CUstream hStream)
{
    (void)attrs, (void)attrsIdxs;
    return batch(dsts, srcs, sizes, count, numAttrs, NULL, hStream, cuMemcpyAsync);
}

APIGEN_EXPORT CUresult cuMemcpyBatchAsync_v2_ptsz(CUdeviceptr *dsts, CUdeviceptr *srcs,
                                                  size_t *sizes, size_t count,
                                                  CUmemcpyAttributes *attrs, size_t *attrsIdxs,
                                                  size_t numAttrs, CUstream hStream)
{
    (void)attrs, (void)attrsIdxs;
    return batch(dsts, srcs, sizes, count, numAttrs, NULL, hStream, cuMemcpyAsync_ptsz);
}
#endif
