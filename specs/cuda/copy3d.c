/* 2D and 3D copies of the CUDA driver stub (cuMemcpy2D_v2, ...Unaligned,
 * ...Async, cuMemcpy3D_v2, cuMemcpy3DAsync_v2 and their _ptds/_ptsz forms).
 * The descriptor may name the guest's host memory on either side: its rows
 * travel packed (WidthInBytes each, back to back) in the one message
 * apigenCudaMemcpy3D sends, and a host destination's rows come back in the
 * reply and are spread to their pitch here. A unified address
 * (CU_MEMORYTYPE_UNIFIED) is the guest's host memory or the server's.
 * 2D copies travel as a 3D descriptor of depth 1; the server calls the
 * function the application called. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apigen_rt.h"
#include "cuda_guest.h"
#include "cuda_wire.h"

static CUmemorytype side(CUmemorytype t, CUdeviceptr dev, const void **host)
{
    if (t != CU_MEMORYTYPE_UNIFIED) return t;
    if (apigen_cuda_on_server(dev)) return CU_MEMORYTYPE_DEVICE;
    *host = (const void *)(uintptr_t)dev;
    return CU_MEMORYTYPE_HOST;
}

static CUresult copy3d(CUDA_MEMCPY3D c, CUstream stream, unsigned kind)
{
    const void *sh = c.srcHost, *dh = c.dstHost;
    c.srcMemoryType = side(c.srcMemoryType, c.srcDevice, &sh);
    c.dstMemoryType = side(c.dstMemoryType, c.dstDevice, &dh);
    size_t depth = c.Depth ? c.Depth : 1, rows = c.Height * depth;
    uint64_t bytes;
    if (!apigen_mul_size(c.WidthInBytes, rows, &bytes) || bytes > SIZE_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    unsigned char *in = NULL, *out = NULL;
    size_t spitch = c.srcPitch ? c.srcPitch : c.WidthInBytes;
    size_t sheight = c.srcHeight ? c.srcHeight : c.Height;
    size_t dpitch = c.dstPitch ? c.dstPitch : c.WidthInBytes;
    size_t dheight = c.dstHeight ? c.dstHeight : c.Height;
    if (c.srcMemoryType == CU_MEMORYTYPE_HOST) {
        if (!sh || spitch < c.WidthInBytes) return CUDA_ERROR_INVALID_VALUE;
        if (bytes && !(in = malloc(bytes))) return CUDA_ERROR_OUT_OF_MEMORY;
        for (size_t z = 0; z < depth; z++)
            for (size_t y = 0; y < c.Height; y++)
                memcpy(in + (z * c.Height + y) * c.WidthInBytes,
                       (const unsigned char *)sh + ((c.srcZ + z) * sheight + c.srcY + y) * spitch +
                           c.srcXInBytes,
                       c.WidthInBytes);
        c.srcHost = NULL;
        c.srcXInBytes = c.srcY = c.srcZ = 0;
        c.srcPitch = c.WidthInBytes;
        c.srcHeight = c.Height;
    }
    if (c.dstMemoryType == CU_MEMORYTYPE_HOST) {
        if (!dh || dpitch < c.WidthInBytes) {
            free(in);
            return CUDA_ERROR_INVALID_VALUE;
        }
        if (bytes && !(out = malloc(bytes))) {
            free(in);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        c.dstHost = NULL;
    }
    CUDA_MEMCPY3D sent = c;
    if (out) { /* packed on the server; spread below */
        sent.dstXInBytes = sent.dstY = sent.dstZ = 0;
        sent.dstPitch = c.WidthInBytes;
        sent.dstHeight = c.Height;
    }
    CUresult e = apigenCudaMemcpy3D(&sent, stream, kind, out, out ? bytes : 0, in, in ? bytes : 0);
    if (e == CUDA_SUCCESS && out)
        for (size_t z = 0; z < depth; z++)
            for (size_t y = 0; y < c.Height; y++)
                memcpy((unsigned char *)dh + ((c.dstZ + z) * dheight + c.dstY + y) * dpitch +
                           c.dstXInBytes,
                       out + (z * c.Height + y) * c.WidthInBytes, c.WidthInBytes);
    free(in);
    free(out);
    return e;
}

static CUresult copy2d(const CUDA_MEMCPY2D *p, CUstream stream, unsigned kind)
{
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    CUDA_MEMCPY3D c;
    memset(&c, 0, sizeof c);
    c.srcXInBytes = p->srcXInBytes;
    c.srcY = p->srcY;
    c.srcMemoryType = p->srcMemoryType;
    c.srcHost = p->srcHost;
    c.srcDevice = p->srcDevice;
    c.srcArray = p->srcArray;
    c.srcPitch = p->srcPitch;
    c.dstXInBytes = p->dstXInBytes;
    c.dstY = p->dstY;
    c.dstMemoryType = p->dstMemoryType;
    c.dstHost = p->dstHost;
    c.dstDevice = p->dstDevice;
    c.dstArray = p->dstArray;
    c.dstPitch = p->dstPitch;
    c.WidthInBytes = p->WidthInBytes;
    c.Height = p->Height;
    c.Depth = 1;
    return copy3d(c, stream, kind);
}

#define K2D APIGEN_CUDA_COPY_2D
#define K2DU APIGEN_CUDA_COPY_2D_UNALIGNED
#define K3D APIGEN_CUDA_COPY_3D
#define ASYNC APIGEN_CUDA_COPY_ASYNC
#define PT APIGEN_CUDA_COPY_PT

APIGEN_EXPORT CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D *p) { return copy2d(p, NULL, K2D); }
APIGEN_EXPORT CUresult cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D *p) { return copy2d(p, NULL, K2D | PT); }
APIGEN_EXPORT CUresult cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D *p) { return copy2d(p, NULL, K2DU); }
APIGEN_EXPORT CUresult cuMemcpy2DUnaligned_v2_ptds(const CUDA_MEMCPY2D *p)
{
    return copy2d(p, NULL, K2DU | PT);
}
APIGEN_EXPORT CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *p, CUstream s)
{
    return copy2d(p, s, K2D | ASYNC);
}
APIGEN_EXPORT CUresult cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D *p, CUstream s)
{
    return copy2d(p, s, K2D | ASYNC | PT);
}
APIGEN_EXPORT CUresult cuMemcpy3D_v2(const CUDA_MEMCPY3D *p)
{
    return p ? copy3d(*p, NULL, K3D) : CUDA_ERROR_INVALID_VALUE;
}
APIGEN_EXPORT CUresult cuMemcpy3D_v2_ptds(const CUDA_MEMCPY3D *p)
{
    return p ? copy3d(*p, NULL, K3D | PT) : CUDA_ERROR_INVALID_VALUE;
}
APIGEN_EXPORT CUresult cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *p, CUstream s)
{
    return p ? copy3d(*p, s, K3D | ASYNC) : CUDA_ERROR_INVALID_VALUE;
}
APIGEN_EXPORT CUresult cuMemcpy3DAsync_v2_ptsz(const CUDA_MEMCPY3D *p, CUstream s)
{
    return p ? copy3d(*p, s, K3D | ASYNC | PT) : CUDA_ERROR_INVALID_VALUE;
}
