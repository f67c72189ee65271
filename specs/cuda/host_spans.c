/* Host side of the twins' spans (apigenCudaWriteSpans, apigenCudaReadSpans;
 * specs/cuda/managed.c, runtime/twin.c): several device ranges of the
 * client moved in one request, their bytes back to back. Each range is
 * checked as a copy's would be (the client's device memory) and the bytes
 * must cover the ranges exactly; then one synchronous copy per range, the
 * first error returned (the ranges before it moved); a read goes through
 * the thread's pinned block on a stream of its own where it can
 * (host_copy.c's cuda_host_read_staged). A read given the
 * guest's page digests answers only the pages that differ from them
 * (runtime/pages.c): a mapped block the device left alone costs no bytes. */
#include <stdint.h>
#include <string.h>

#include "apigen_rt.h"
#include "cuda_wire.h"

CUresult cuda_host_read_staged(const CUdeviceptr *dev, const size_t *len, unsigned n, size_t total,
                               const void **out);

/* Each range the client's device memory (checked as a copy's would be),
 * their sum in *total: false (logged) otherwise. Any pointer may come as
 * NULL off the wire. */
static bool ranges_ok(apigen_call_ctx *cx, const CUdeviceptr *dev, const size_t *len,
                      unsigned int n, uint64_t *total)
{
    *total = 0;
    if (n && (!dev || !len)) {
        apigen_log("twins' spans: %u ranges without their addresses or lengths: refused "
                   "(CUDA_ERROR_INVALID_VALUE)",
                   n);
        return false;
    }
    for (unsigned int i = 0; i < n; i++) {
        if (!apigen_dev_check(cx, (uint64_t)dev[i], (uint64_t)len[i], true, "dev"))
            return false;
        if (*total + len[i] < *total) {
            apigen_log("twins' spans: %u ranges of more than 2^64 bytes: refused "
                       "(CUDA_ERROR_INVALID_VALUE)",
                       n);
            return false;
        }
        *total += len[i];
    }
    return true;
}

/* what, of got bytes at p, is what the ranges need (want) */
static bool sized(const char *fn, const char *what, uint64_t want, const void *p, size_t got)
{
    if (want == got && (p || !got))
        return true;
    apigen_log("%s: %s of %zu bytes where the ranges need %llu: refused (CUDA_ERROR_INVALID_VALUE)",
               fn, what, got, (unsigned long long)want);
    return false;
}

CUresult cuda_host_write_spans(apigen_call_ctx *cx, const CUdeviceptr *dev, const size_t *len,
                               unsigned int n, const void *data, size_t dataSize,
                               unsigned int flags)
{
    (void)flags; /* how the guest sent it */
    uint64_t total;
    if (!ranges_ok(cx, dev, len, n, &total) ||
        !sized("apigenCudaWriteSpans", "data", total, data, dataSize))
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
    uint64_t total;
    if (!dataUsed || !ranges_ok(cx, dev, len, n, &total))
        return CUDA_ERROR_INVALID_VALUE;
    *dataUsed = 0;
    size_t pages = apigen_pages_count(len, n), map = knownSize ? (pages + 7) / 8 : 0;
    if ((knownSize && !sized("apigenCudaReadSpans", "page digests",
                             (uint64_t)pages * sizeof(apigen_page_digest), known, knownSize)) ||
        !sized("apigenCudaReadSpans", "data", map + total, data, dataSize))
        return CUDA_ERROR_INVALID_VALUE;
    const void *now = NULL; /* the ranges' bytes in a pinned block (host_copy.c), or in data */
    CUresult e = cuda_host_read_staged(dev, len, n, total, &now);
    if (e == CUDA_ERROR_NOT_SUPPORTED) {
        now = NULL;
        unsigned char *b = (unsigned char *)data + map;
        for (unsigned int i = 0; i < n; b += len[i], i++)
            if ((e = cuMemcpyDtoH_v2(b, dev[i], len[i])) != CUDA_SUCCESS)
                return e;
    } else if (e != CUDA_SUCCESS) {
        return e;
    }
    if (knownSize)
        *dataUsed = apigen_pages_pack(data, now, len, n, known);
    else if (now)
        memcpy(data, now, total), *dataUsed = dataSize;
    else
        *dataUsed = dataSize;
    return CUDA_SUCCESS;
}
