/* 2D and 3D copies of the CUDA driver stub (cuMemcpy2D_v2, ...Unaligned,
 * ...Async, cuMemcpy3D_v2, cuMemcpy3DAsync_v2 and their _ptds/_ptsz forms).
 * The descriptor may name the guest's host memory on either side: its rows
 * travel packed (WidthInBytes each, back to back) in the one message
 * apigenCudaMemcpy3D sends, and a host destination's rows come back in the
 * reply and are spread to their pitch here. A unified address
 * (CU_MEMORYTYPE_UNIFIED) is the guest's host memory or the server's.
 * 2D copies travel as a 3D descriptor of depth 1, peer copies as a
 * CUDA_MEMCPY3D_PEER with their contexts; the server calls the function the
 * application called. An async copy's host side in the shared-memory arena
 * (pinned memory), or any host side of a copy a stream capture records
 * (through a shadow in the arena, capture.c), travels as the server's
 * address of it instead (APIGEN_CUDA_COPY_ARENA_*). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apigen_boxes.h"
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

/* An async copy's host side named by the server's address of it in the
 * arena (APIGEN_CUDA_COPY_ARENA_*): pinned memory always (async as
 * natively), pageable memory through a shadow (capture.c) when the stream
 * captures. 1 with *gh set, 0 to pack the rows into the message as for any
 * other copy, -1 with *e an error. */
static int arena_host(const void *base, size_t x, size_t y, size_t z, size_t pitch,
                      size_t height, const CUDA_MEMCPY3D *c, size_t depth, CUstream s, int pt,
                      apigen_graph_host_t *gh, CUresult *e)
{
    uint64_t off, slice;
    if (!base || !c->WidthInBytes || !c->Height || pitch < c->WidthInBytes ||
        !apigen_mul_size(z, height, &off) || !apigen_add_size(off, y, &off) ||
        !apigen_mul_size(off, pitch, &off) || !apigen_add_size(off, x, &off) ||
        off > UINTPTR_MAX - (uintptr_t)base || !apigen_mul_size(height, pitch, &slice) ||
        slice > SIZE_MAX)
        return 0; /* the driver says what is wrong with it */
    void *first = (unsigned char *)(uintptr_t)base + off;
    int own = apigen_arena_owns(first), cap = own ? -1 : apigen_cuda_captures(s, pt);
    if (!own && !cap) return 0;
    switch (apigen_graph_host(&cuda_api, first, pitch, c->WidthInBytes, c->Height, depth,
                              (size_t)slice, gh)) {
    case APIGEN_GRAPH_HOST_OK: break;
    case APIGEN_GRAPH_HOST_NO_MEMORY: *e = CUDA_ERROR_OUT_OF_MEMORY; return -1;
    default: return 0; /* no arena: packed (captured, the server refuses it) */
    }
    if (gh->shadow && cap < 0 && !apigen_cuda_captures(s, pt)) {
        apigen_shadow_drop(gh->shadow); /* pinned rows past the arena's end: packed */
        return 0;
    }
    return 1;
}

/* peer: a CUDA_MEMCPY3D_PEER copy (the contexts travel with it) */
static CUresult copy3d_one(CUDA_MEMCPY3D c, CUstream stream, unsigned kind, int peer,
                           CUcontext sctx, CUcontext dctx)
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
    int pt = (kind & APIGEN_CUDA_COPY_PT) != 0;
    apigen_graph_host_t gs = {0}, gd = {0};
    CUresult e = CUDA_SUCCESS;
    if ((kind & APIGEN_CUDA_COPY_ASYNC) && c.srcMemoryType == CU_MEMORYTYPE_HOST) {
        int r = arena_host(sh, c.srcXInBytes, c.srcY, c.srcZ, spitch, sheight, &c, depth, stream,
                           pt, &gs, &e);
        if (r < 0) return e;
        if (r > 0) {
            kind |= APIGEN_CUDA_COPY_ARENA_SRC;
            c.srcHost = (const void *)(uintptr_t)gs.peer;
            c.srcXInBytes = c.srcY = c.srcZ = 0;
            c.srcPitch = spitch;
            c.srcHeight = sheight;
        }
    }
    if ((kind & APIGEN_CUDA_COPY_ASYNC) && c.dstMemoryType == CU_MEMORYTYPE_HOST) {
        int r = arena_host(dh, c.dstXInBytes, c.dstY, c.dstZ, dpitch, dheight, &c, depth, stream,
                           pt, &gd, &e);
        if (r < 0) {
            apigen_shadow_drop(gs.shadow);
            return e;
        }
        if (r > 0) {
            kind |= APIGEN_CUDA_COPY_ARENA_DST;
            c.dstHost = (void *)(uintptr_t)gd.peer;
            c.dstXInBytes = c.dstY = c.dstZ = 0;
            c.dstPitch = dpitch;
            c.dstHeight = dheight;
        }
    }
    if (gs.shadow && (e = apigen_cuda_host_fn_captured(stream, apigen_shadow_fill, gs.shadow,
                                                       pt)) != CUDA_SUCCESS) {
        apigen_shadow_drop(gs.shadow);
        apigen_shadow_drop(gd.shadow);
        return e;
    }
    if (c.srcMemoryType == CU_MEMORYTYPE_HOST && !(kind & APIGEN_CUDA_COPY_ARENA_SRC)) {
        /* (a destination's shadow here was never used: gs has none) */
        if (!sh || spitch < c.WidthInBytes || (bytes && !(in = malloc(bytes)))) {
            apigen_shadow_drop(gd.shadow);
            return !sh || spitch < c.WidthInBytes ? CUDA_ERROR_INVALID_VALUE
                                                  : CUDA_ERROR_OUT_OF_MEMORY;
        }
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
    if (c.dstMemoryType == CU_MEMORYTYPE_HOST && !(kind & APIGEN_CUDA_COPY_ARENA_DST)) {
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
    if (peer) {
        CUDA_MEMCPY3D_PEER pp;
        memset(&pp, 0, sizeof pp);
        pp.srcXInBytes = sent.srcXInBytes, pp.srcY = sent.srcY, pp.srcZ = sent.srcZ;
        pp.srcLOD = sent.srcLOD, pp.srcMemoryType = sent.srcMemoryType;
        pp.srcDevice = sent.srcDevice, pp.srcArray = sent.srcArray, pp.srcContext = sctx;
        pp.srcHost = sent.srcHost, pp.dstHost = sent.dstHost; /* arena addresses, or NULL */
        pp.srcPitch = sent.srcPitch, pp.srcHeight = sent.srcHeight;
        pp.dstXInBytes = sent.dstXInBytes, pp.dstY = sent.dstY, pp.dstZ = sent.dstZ;
        pp.dstLOD = sent.dstLOD, pp.dstMemoryType = sent.dstMemoryType;
        pp.dstDevice = sent.dstDevice, pp.dstArray = sent.dstArray, pp.dstContext = dctx;
        pp.dstPitch = sent.dstPitch, pp.dstHeight = sent.dstHeight;
        pp.WidthInBytes = sent.WidthInBytes, pp.Height = sent.Height, pp.Depth = sent.Depth;
        e = apigenCudaMemcpy3DPeer(&pp, sctx, dctx, stream, kind, out, out ? bytes : 0, in,
                                   in ? bytes : 0);
    } else {
        e = apigenCudaMemcpy3D(&sent, stream, kind, out, out ? bytes : 0, in, in ? bytes : 0);
    }
    if (e == CUDA_SUCCESS && out)
        for (size_t z = 0; z < depth; z++)
            for (size_t y = 0; y < c.Height; y++)
                memcpy((unsigned char *)dh + ((c.dstZ + z) * dheight + c.dstY + y) * dpitch +
                           c.dstXInBytes,
                       out + (z * c.Height + y) * c.WidthInBytes, c.WidthInBytes);
    free(in);
    free(out);
    if (gd.shadow) {
        if (e == CUDA_SUCCESS) return apigen_cuda_host_fn_captured(stream, apigen_shadow_drain,
                                                                   gd.shadow, pt);
        apigen_shadow_drop(gd.shadow);
    }
    return e;
}

/* A copy with more than BOX bytes of the guest's host memory (not an
 * async copy of pinned memory, not captured: those name the arena) goes in
 * boxes of at most BOX bytes (apigen_boxes), each one call: whole slices
 * while a slice fits, else bands of rows, else pieces of a row. Memory
 * stays bounded on both sides and no message outgrows the transport's
 * limit. A region past an array's edge is refused before any box is
 * copied, as the driver refuses the whole copy. */
#define BOX ((size_t)4 << 20)

static int host_side(CUmemorytype t, CUdeviceptr dev, const void *host)
{
    return side(t, dev, &host) == CU_MEMORYTYPE_HOST;
}

static CUresult array_fits(CUarray a, size_t x, size_t y, size_t z, size_t wb, size_t h, size_t d)
{
    CUDA_ARRAY3D_DESCRIPTOR ad;
    CUresult e = cuArray3DGetDescriptor_v2(&ad, a);
    if (e != CUDA_SUCCESS) return e;
    size_t bytes = 0;
    switch (ad.Format) {
    case CU_AD_FORMAT_UNSIGNED_INT8: case CU_AD_FORMAT_SIGNED_INT8: bytes = 1; break;
    case CU_AD_FORMAT_UNSIGNED_INT16: case CU_AD_FORMAT_SIGNED_INT16: case CU_AD_FORMAT_HALF: bytes = 2; break;
    case CU_AD_FORMAT_UNSIGNED_INT32: case CU_AD_FORMAT_SIGNED_INT32: case CU_AD_FORMAT_FLOAT: bytes = 4; break;
    default: return CUDA_SUCCESS; /* other formats: the driver checks each box */
    }
    if (!apigen_box_inside(x, y, z, wb, h, d, ad.Width * bytes * ad.NumChannels, ad.Height,
                           ad.Depth))
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

static CUresult copy3d_ctx(CUDA_MEMCPY3D c, CUstream stream, unsigned kind, int peer,
                           CUcontext sctx, CUcontext dctx)
{
    size_t w = c.WidthInBytes, h = c.Height, d = c.Depth ? c.Depth : 1;
    int pt = (kind & APIGEN_CUDA_COPY_PT) != 0;
    int hs = host_side(c.srcMemoryType, c.srcDevice, c.srcHost),
        hd = host_side(c.dstMemoryType, c.dstDevice, c.dstHost);
    uint64_t total;
    if ((!hs && !hd) || !w || !h || !apigen_mul_size(w, (uint64_t)h * d, &total) || total <= BOX ||
        ((kind & APIGEN_CUDA_COPY_ASYNC) &&
         ((hs && apigen_arena_owns(c.srcHost)) || (hd && apigen_arena_owns(c.dstHost)) ||
          apigen_cuda_captures(stream, pt))))
        return copy3d_one(c, stream, kind, peer, sctx, dctx);
    CUresult e;
    if (c.srcMemoryType == CU_MEMORYTYPE_ARRAY &&
        (e = array_fits(c.srcArray, c.srcXInBytes, c.srcY, c.srcZ, w, h, d)) != CUDA_SUCCESS)
        return e;
    if (c.dstMemoryType == CU_MEMORYTYPE_ARRAY &&
        (e = array_fits(c.dstArray, c.dstXInBytes, c.dstY, c.dstZ, w, h, d)) != CUDA_SUCCESS)
        return e;
    apigen_boxes it = apigen_boxes_of(w, 1, h, d, BOX);
    e = CUDA_SUCCESS;
    for (apigen_box box; e == CUDA_SUCCESS && apigen_box_next(&it, &box);) {
        CUDA_MEMCPY3D b = c;
        b.WidthInBytes = box.w, b.Height = box.h, b.Depth = box.d;
        b.srcXInBytes += box.x, b.srcY += box.y, b.srcZ += box.z;
        b.dstXInBytes += box.x, b.dstY += box.y, b.dstZ += box.z;
        /* a 2D copy's host rows are addressed with a height of its own */
        if (!b.srcHeight) b.srcHeight = c.Height;
        if (!b.dstHeight) b.dstHeight = c.Height;
        e = copy3d_one(b, stream, kind, peer, sctx, dctx);
    }
    return e;
}

static CUresult copy3d(CUDA_MEMCPY3D c, CUstream stream, unsigned kind)
{
    return copy3d_ctx(c, stream, kind, 0, NULL, NULL);
}

static CUresult copy_peer(const CUDA_MEMCPY3D_PEER *p, CUstream stream, unsigned kind)
{
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    CUDA_MEMCPY3D c;
    memset(&c, 0, sizeof c);
    c.srcXInBytes = p->srcXInBytes, c.srcY = p->srcY, c.srcZ = p->srcZ, c.srcLOD = p->srcLOD;
    c.srcMemoryType = p->srcMemoryType, c.srcHost = p->srcHost, c.srcDevice = p->srcDevice;
    c.srcArray = p->srcArray, c.srcPitch = p->srcPitch, c.srcHeight = p->srcHeight;
    c.dstXInBytes = p->dstXInBytes, c.dstY = p->dstY, c.dstZ = p->dstZ, c.dstLOD = p->dstLOD;
    c.dstMemoryType = p->dstMemoryType, c.dstHost = p->dstHost, c.dstDevice = p->dstDevice;
    c.dstArray = p->dstArray, c.dstPitch = p->dstPitch, c.dstHeight = p->dstHeight;
    c.WidthInBytes = p->WidthInBytes, c.Height = p->Height, c.Depth = p->Depth;
    return copy3d_ctx(c, stream, kind, 1, p->srcContext, p->dstContext);
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

APIGEN_EXPORT CUresult cuMemcpy3DPeer(const CUDA_MEMCPY3D_PEER *p) { return copy_peer(p, NULL, K3D); }
APIGEN_EXPORT CUresult cuMemcpy3DPeer_ptds(const CUDA_MEMCPY3D_PEER *p)
{
    return copy_peer(p, NULL, K3D | PT);
}
APIGEN_EXPORT CUresult cuMemcpy3DPeerAsync(const CUDA_MEMCPY3D_PEER *p, CUstream s)
{
    return copy_peer(p, s, K3D | ASYNC);
}
APIGEN_EXPORT CUresult cuMemcpy3DPeerAsync_ptsz(const CUDA_MEMCPY3D_PEER *p, CUstream s)
{
    return copy_peer(p, s, K3D | ASYNC | PT);
}
