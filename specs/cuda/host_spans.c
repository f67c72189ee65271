/* Host side of the twins' spans (apigenCudaWriteSpans, apigenCudaReadSpans;
 * specs/cuda/managed.c, runtime/twin.c): several device ranges of the
 * client moved in one request, their bytes back to back. Each range is
 * checked as a copy's would be (the client's device memory) and the bytes
 * must cover the ranges exactly; then one synchronous copy per range, the
 * first error returned (the ranges before it moved). A read given the
 * guest's page digests answers only the pages that differ from them
 * (runtime/pages.c): a mapped block the device left alone costs no bytes. */
#include <stdint.h>

#include "apigen_rt.h"
#include "cuda_wire.h"

static bool spans_ok(apigen_call_ctx *cx, const char *fn, const CUdeviceptr *dev, const size_t *len,
                     unsigned int n, size_t dataSize)
{
    uint64_t total = 0;
    for (unsigned int i = 0; i < n; i++) {
        if (!apigen_dev_check(cx, (uint64_t)dev[i], (uint64_t)len[i], true, "dev"))
            return false;
        total += len[i];
        if (total > dataSize)
            break;
    }
    if (total == dataSize)
        return true;
    apigen_log("%s: %u ranges of %llu bytes or more, but %zu bytes of data: refused "
               "(CUDA_ERROR_INVALID_VALUE)",
               fn, n, (unsigned long long)total, dataSize);
    return false;
}

CUresult cuda_host_write_spans(apigen_call_ctx *cx, const CUdeviceptr *dev, const size_t *len,
                               unsigned int n, const void *data, size_t dataSize,
                               unsigned int flags)
{
    (void)flags; /* how the guest sent it */
    if (!spans_ok(cx, "apigenCudaWriteSpans", dev, len, n, dataSize))
        return CUDA_ERROR_INVALID_VALUE;
    const unsigned char *b = data;
    for (unsigned int i = 0; i < n; b += len[i], i++) {
        CUresult e = cuMemcpyHtoD_v2(dev[i], b, len[i]);
        if (e != CUDA_SUCCESS)
            return e;
    }
    return CUDA_SUCCESS;
}

CUresult cuda_host_read_spans(apigen_call_ctx *cx, const CUdeviceptr *dev, const size_t *len,
                              unsigned int n, const void *known, size_t knownSize, void *data,
                              size_t dataSize, size_t *dataUsed)
{
    *dataUsed = 0;
    size_t pages = apigen_pages_count(len, n), map = knownSize ? (pages + 7) / 8 : 0;
    if (knownSize && knownSize != pages * sizeof(apigen_page_digest)) {
        apigen_log("apigenCudaReadSpans: %zu bytes of page digests for %zu pages: refused "
                   "(CUDA_ERROR_INVALID_VALUE)",
                   knownSize, pages);
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (dataSize < map || !spans_ok(cx, "apigenCudaReadSpans", dev, len, n, dataSize - map))
        return CUDA_ERROR_INVALID_VALUE;
    unsigned char *b = (unsigned char *)data + map;
    for (unsigned int i = 0; i < n; b += len[i], i++) {
        CUresult e = cuMemcpyDtoH_v2(b, dev[i], len[i]);
        if (e != CUDA_SUCCESS)
            return e;
    }
    *dataUsed = knownSize ? apigen_pages_pack(data, len, n, known) : dataSize;
    return CUDA_SUCCESS;
}
