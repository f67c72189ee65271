/* Host side: async copies between the guest's host memory and the device
 * inside a stream capture. On the server the host side of such a copy is
 * the request's bytes or the reply's scratch block, gone when the call
 * returns; captured, the copy becomes a graph node that reads or writes
 * that memory at every launch of the graph (run3: apigen-server-cuda's
 * session died by SIGSEGV inside cuGraphLaunch for capture_copy). Such a
 * copy is refused with CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and the capture
 * is invalidated (a synchronize on the capturing stream, illegal during a
 * capture), so cuStreamEndCapture reports it as for any unsupported call
 * rather than handing out a graph without the copy. Copies on streams that
 * are not capturing go to the driver as they are. A source in the client's
 * shared-memory arena (an arena reference: pinned memory, or the shadow the
 * guest made for pageable memory, arena_shadow.c) lives as long as the
 * session and is taken; the guest sends captured copies that way whenever
 * it has an arena, so what is refused here is a capture over a transport
 * without one (tcp://, ucx://), or a client that bypassed the guest
 * library. (The streamed path of cuMemcpyDtoHAsync_v2 refuses a capture in
 * host_copy.c, whose streamed cuMemcpyHtoDAsync_v2 asks cuda_host_htod_refused;
 * 2D/3D copies wait for their host sides in host.c, and name
 * arena memory with APIGEN_CUDA_COPY_ARENA_*.)
 *
 * Async sets (cuMemsetD*Async) are checked here rather than by the spec's
 * `device`: the address must be the client's unless the stream is capturing,
 * when the set becomes a graph node that touches no memory until a launch
 * (cuDNN records its plans into a capture with placeholder addresses such as
 * 0x80 to read the kernel nodes back and destroys the graph unlaunched; the
 * driver takes such a set). A kernel node's pointers are never checked
 * either: a graph's launch reaches what the client's kernels could. */
#include <stdbool.h>
#include <stdint.h>

#include "apigen_rt.h"
#include "cuda_wire.h"

/* The stream's capture status as the driver says it (NONE when it cannot
 * say); ptsz: the _ptsz entry point's view of the NULL stream. */
static CUstreamCaptureStatus capture_status(CUstream s, int ptsz)
{
    CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
    if ((ptsz ? cuStreamIsCapturing_ptsz(s, &cs) : cuStreamIsCapturing(s, &cs)) != CUDA_SUCCESS)
        return CU_STREAM_CAPTURE_STATUS_NONE;
    return cs;
}

/* Whether the stream is capturing: then the copy is refused and the
 * capture invalidated. */
static int captured(CUstream s, int ptsz, const char *fn)
{
    CUstreamCaptureStatus cs = capture_status(s, ptsz);
    if (cs == CU_STREAM_CAPTURE_STATUS_NONE) return 0;
    apigen_log("%s: a copy with the client's host memory inside a stream capture: refused "
               "(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED) and the capture invalidated; the graph "
               "would keep this call's transient buffer on the server",
               fn);
    if (cs == CU_STREAM_CAPTURE_STATUS_ACTIVE)
        (void)(ptsz ? cuStreamSynchronize_ptsz(s) : cuStreamSynchronize(s));
    return 1;
}

/* A refused copy's answer. A queued copy (the guest does not know the
 * stream captures) already answered success; its refusal has invalidated
 * the capture, so cuStreamEndCapture (and every later call of the capture)
 * reports it, as natively a capture some call invalidated. Answering an
 * error here would also hand it, deferred, to the thread's next successful
 * call (a cuMemFree after the capture, on the H200), which natively
 * succeeds. */
static CUresult refused(const apigen_call_ctx *cx)
{
    return cx->is_async ? CUDA_SUCCESS : CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}

/* host_copy.c's streamed cuMemcpyHtoDAsync_v2 (its bytes are the request's,
 * never the arena): whether the copy is refused, *e then its answer. */
bool cuda_host_htod_refused(apigen_call_ctx *cx, CUstream s, int ptsz, CUresult *e)
{
    const char *fn = ptsz ? "cuMemcpyHtoDAsync_v2_ptsz" : "cuMemcpyHtoDAsync_v2";
    if (!captured(s, ptsz, fn)) return false;
    *e = refused(cx);
    return true;
}

/* Host memory of the call (bytes in the request), not the client's arena. */
static int transient(apigen_call_ctx *cx, const void *host, size_t n)
{
    return n && !apigen_arena_holds(cx, (uint64_t)(uintptr_t)host, n);
}

CUresult cuda_host_htod_async(apigen_call_ctx *cx, CUdeviceptr dstDevice, const void *srcHost,
                              size_t ByteCount, CUstream hStream)
{
    if (transient(cx, srcHost, ByteCount) && captured(hStream, 0, "cuMemcpyHtoDAsync_v2"))
        return refused(cx);
    return cuMemcpyHtoDAsync_v2(dstDevice, srcHost, ByteCount, hStream);
}

CUresult cuda_host_htod_async_ptsz(apigen_call_ctx *cx, CUdeviceptr dstDevice,
                                   const void *srcHost, size_t ByteCount, CUstream hStream)
{
    if (transient(cx, srcHost, ByteCount) && captured(hStream, 1, "cuMemcpyHtoDAsync_v2_ptsz"))
        return refused(cx);
    return cuMemcpyHtoDAsync_v2_ptsz(dstDevice, srcHost, ByteCount, hStream);
}

CUresult cuda_host_dtoh_async(apigen_call_ctx *cx, void *dstHost, CUdeviceptr srcDevice,
                              size_t ByteCount, CUstream hStream)
{
    (void)cx;
    if (captured(hStream, 0, "cuMemcpyDtoHAsync_v2")) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    return cuMemcpyDtoHAsync_v2(dstHost, srcDevice, ByteCount, hStream);
}

CUresult cuda_host_dtoh_async_ptsz(apigen_call_ctx *cx, void *dstHost, CUdeviceptr srcDevice,
                                   size_t ByteCount, CUstream hStream)
{
    (void)cx;
    if (captured(hStream, 1, "cuMemcpyDtoHAsync_v2_ptsz"))
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    return cuMemcpyDtoHAsync_v2_ptsz(dstHost, srcDevice, ByteCount, hStream);
}

CUresult cuda_host_htoa_async(apigen_call_ctx *cx, CUarray dstArray, size_t dstOffset,
                              const void *srcHost, size_t ByteCount, CUstream hStream)
{
    if (transient(cx, srcHost, ByteCount) && captured(hStream, 0, "cuMemcpyHtoAAsync_v2"))
        return refused(cx);
    return cuMemcpyHtoAAsync_v2(dstArray, dstOffset, srcHost, ByteCount, hStream);
}

CUresult cuda_host_htoa_async_ptsz(apigen_call_ctx *cx, CUarray dstArray, size_t dstOffset,
                                   const void *srcHost, size_t ByteCount, CUstream hStream)
{
    if (transient(cx, srcHost, ByteCount) && captured(hStream, 1, "cuMemcpyHtoAAsync_v2_ptsz"))
        return refused(cx);
    return cuMemcpyHtoAAsync_v2_ptsz(dstArray, dstOffset, srcHost, ByteCount, hStream);
}

CUresult cuda_host_atoh_async(apigen_call_ctx *cx, void *dstHost, CUarray srcArray,
                              size_t srcOffset, size_t ByteCount, CUstream hStream)
{
    (void)cx;
    if (captured(hStream, 0, "cuMemcpyAtoHAsync_v2")) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    return cuMemcpyAtoHAsync_v2(dstHost, srcArray, srcOffset, ByteCount, hStream);
}

CUresult cuda_host_atoh_async_ptsz(apigen_call_ctx *cx, void *dstHost, CUarray srcArray,
                                   size_t srcOffset, size_t ByteCount, CUstream hStream)
{
    (void)cx;
    if (captured(hStream, 1, "cuMemcpyAtoHAsync_v2_ptsz"))
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    return cuMemcpyAtoHAsync_v2_ptsz(dstHost, srcArray, srcOffset, ByteCount, hStream);
}

/* ---- async sets ------------------------------------------------------------- */

/* The spec's `device` check (bytes: extent when has_extent), skipped for a
 * set the stream records; false: rejected (the log line names the address). */
static bool set_target_ok(apigen_call_ctx *cx, CUdeviceptr dst, uint64_t extent, bool has_extent,
                          CUstream s, int ptsz)
{
    if (apigen_dev_owned(cx->session, (uint64_t)dst, extent, has_extent)) return true;
    if (capture_status(s, ptsz) == CU_STREAM_CAPTURE_STATUS_ACTIVE) return true; /* recorded */
    return apigen_dev_check(cx, (uint64_t)dst, extent, has_extent, "dstDevice");
}

#define SET_1D(NAME, FN, T, UNIT)                                                                  \
    CUresult NAME(apigen_call_ctx *cx, CUdeviceptr dstDevice, T value, size_t N, CUstream hStream) \
    {                                                                                              \
        if (!set_target_ok(cx, dstDevice, (uint64_t)N * (UNIT), true, hStream, 0))                 \
            return CUDA_ERROR_INVALID_VALUE;                                                       \
        return FN(dstDevice, value, N, hStream);                                                   \
    }                                                                                              \
    CUresult NAME##_ptsz(apigen_call_ctx *cx, CUdeviceptr dstDevice, T value, size_t N,            \
                         CUstream hStream)                                                         \
    {                                                                                              \
        if (!set_target_ok(cx, dstDevice, (uint64_t)N * (UNIT), true, hStream, 1))                 \
            return CUDA_ERROR_INVALID_VALUE;                                                       \
        return FN##_ptsz(dstDevice, value, N, hStream);                                            \
    }

#define SET_2D(NAME, FN, T)                                                                        \
    CUresult NAME(apigen_call_ctx *cx, CUdeviceptr dstDevice, size_t dstPitch, T value,            \
                  size_t Width, size_t Height, CUstream hStream)                                   \
    {                                                                                              \
        if (!set_target_ok(cx, dstDevice, 0, false, hStream, 0)) return CUDA_ERROR_INVALID_VALUE;  \
        return FN(dstDevice, dstPitch, value, Width, Height, hStream);                             \
    }                                                                                              \
    CUresult NAME##_ptsz(apigen_call_ctx *cx, CUdeviceptr dstDevice, size_t dstPitch, T value,     \
                         size_t Width, size_t Height, CUstream hStream)                            \
    {                                                                                              \
        if (!set_target_ok(cx, dstDevice, 0, false, hStream, 1)) return CUDA_ERROR_INVALID_VALUE;  \
        return FN##_ptsz(dstDevice, dstPitch, value, Width, Height, hStream);                      \
    }

SET_1D(cuda_host_memset_d8_async, cuMemsetD8Async, unsigned char, 1)
SET_1D(cuda_host_memset_d16_async, cuMemsetD16Async, unsigned short, 2)
SET_1D(cuda_host_memset_d32_async, cuMemsetD32Async, unsigned int, 4)
SET_2D(cuda_host_memset_d2d8_async, cuMemsetD2D8Async, unsigned char)
SET_2D(cuda_host_memset_d2d16_async, cuMemsetD2D16Async, unsigned short)
SET_2D(cuda_host_memset_d2d32_async, cuMemsetD2D32Async, unsigned int)
