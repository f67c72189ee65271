/* Hand-written host code of the cudart spec: async copies between host
 * memory and the device that a stream capture would turn into graph nodes
 * naming the call's own buffers. A captured copy reads or writes its host
 * memory at every launch of the graph; on the server the host side of a
 * copy is the request's bytes or the reply's scratch block, gone when the
 * call returns, unless it is the guest's arena (registered memory, which
 * lives as long as the session). The guest library never sends such a
 * copy (specs/cudart/guest.c, capture_before: it names the arena or a
 * shadow in it), so only a client that bypasses it gets here: refused with
 * cudaErrorStreamCaptureUnsupported, where the graph would otherwise write
 * into freed memory of the server at its first launch. Nothing is asked of
 * the runtime before a session of this server began a capture. (The streamed path
 * of cudaMemcpyAsync refuses a capture in host_copy.c.) */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "apigen_rt.h"
#include "cudart_wire.h"

/* entry points of the real library that its headers declare only under
 * CUDA_API_PER_THREAD_DEFAULT_STREAM */
cudaError_t cudaStreamIsCapturing_ptsz(cudaStream_t stream, enum cudaStreamCaptureStatus *status);
cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                                 cudaStream_t stream);
cudaError_t cudaMemcpy2DAsync_ptsz(void *dst, size_t dpitch, const void *src, size_t spitch,
                                   size_t width, size_t height, enum cudaMemcpyKind kind,
                                   cudaStream_t stream);
cudaError_t cudaMemcpyToSymbolAsync_ptsz(const void *symbol, const void *src, size_t count,
                                         size_t offset, enum cudaMemcpyKind kind,
                                         cudaStream_t stream);
cudaError_t cudaMemcpyFromSymbolAsync_ptsz(void *dst, const void *symbol, size_t count,
                                           size_t offset, enum cudaMemcpyKind kind,
                                           cudaStream_t stream);
cudaError_t cudaMemcpyToArrayAsync_ptsz(cudaArray_t dst, size_t wOffset, size_t hOffset,
                                        const void *src, size_t count, enum cudaMemcpyKind kind,
                                        cudaStream_t stream);
cudaError_t cudaMemcpyFromArrayAsync_ptsz(void *dst, cudaArray_const_t src, size_t wOffset,
                                          size_t hOffset, size_t count, enum cudaMemcpyKind kind,
                                          cudaStream_t stream);
cudaError_t cudaMemcpy2DToArrayAsync_ptsz(cudaArray_t dst, size_t wOffset, size_t hOffset,
                                          const void *src, size_t spitch, size_t width,
                                          size_t height, enum cudaMemcpyKind kind,
                                          cudaStream_t stream);
cudaError_t cudaMemcpy2DFromArrayAsync_ptsz(void *dst, size_t dpitch, cudaArray_const_t src,
                                            size_t wOffset, size_t hOffset, size_t width,
                                            size_t height, enum cudaMemcpyKind kind,
                                            cudaStream_t stream);

cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t stream, enum cudaStreamCaptureMode mode);
#ifdef APIGEN_HAS_FN_cudaStreamBeginCaptureToGraph /* 12.3 */
cudaError_t cudaStreamBeginCaptureToGraph_ptsz(cudaStream_t stream, cudaGraph_t graph,
                                               const cudaGraphNode_t *dependencies,
                                               const cudaGraphEdgeData *dependencyData,
                                               size_t numDependencies,
                                               enum cudaStreamCaptureMode mode);
#endif

/* Set once a session of this server began a capture (wrap.host of the
 * cudaStreamBeginCapture* calls, set before the real call): until then no
 * copy can be captured, and the guards below cost a forwarded copy one
 * relaxed load, not a query of the runtime. */
static atomic_bool captured_ever_;

cudaError_t cudart_host_begin_capture(apigen_call_ctx *cx, cudaStream_t stream,
                                      enum cudaStreamCaptureMode mode)
{
    (void)cx;
    atomic_store(&captured_ever_, true);
    return cudaStreamBeginCapture(stream, mode);
}
cudaError_t cudart_host_begin_capture_ptsz(apigen_call_ctx *cx, cudaStream_t stream,
                                           enum cudaStreamCaptureMode mode)
{
    (void)cx;
    atomic_store(&captured_ever_, true);
    return cudaStreamBeginCapture_ptsz(stream, mode);
}
#ifdef APIGEN_HAS_FN_cudaStreamBeginCaptureToGraph
cudaError_t cudart_host_begin_capture_to_graph(apigen_call_ctx *cx, cudaStream_t stream,
                                               cudaGraph_t graph,
                                               const cudaGraphNode_t *dependencies,
                                               const cudaGraphEdgeData *dependencyData,
                                               size_t numDependencies,
                                               enum cudaStreamCaptureMode mode)
{
    (void)cx;
    atomic_store(&captured_ever_, true);
    return cudaStreamBeginCaptureToGraph(stream, graph, dependencies, dependencyData,
                                         numDependencies, mode);
}
cudaError_t cudart_host_begin_capture_to_graph_ptsz(apigen_call_ctx *cx, cudaStream_t stream,
                                                    cudaGraph_t graph,
                                                    const cudaGraphNode_t *dependencies,
                                                    const cudaGraphEdgeData *dependencyData,
                                                    size_t numDependencies,
                                                    enum cudaStreamCaptureMode mode)
{
    (void)cx;
    atomic_store(&captured_ever_, true);
    return cudaStreamBeginCaptureToGraph_ptsz(stream, graph, dependencies, dependencyData,
                                              numDependencies, mode);
}
#endif

/* Whether work on stream (of a _ptsz entry point: ptsz) is being captured;
 * an error of the query is the real call's to say. Also host_copy.c's. */
bool cudart_host_capturing(cudaStream_t stream, bool ptsz)
{
    if (!atomic_load_explicit(&captured_ever_, memory_order_relaxed) || stream == cudaStreamLegacy ||
        (!ptsz && !stream))
        return false; /* no capture yet; the legacy stream is never captured */
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    cudaError_t q = ptsz ? cudaStreamIsCapturing_ptsz(stream, &cs)
                         : cudaStreamIsCapturing(stream, &cs);
    return q == cudaSuccess && cs != cudaStreamCaptureStatusNone;
}

/* Whether a copy on stream with host side `host` would be captured with a
 * pointer into the call's own buffers. */
static bool transient_in_capture(cudaStream_t stream, bool ptsz, const void *host)
{
    if (!host || !cudart_host_capturing(stream, ptsz))
        return false;
    struct cudaPointerAttributes a; /* host memory the runtime does not know: success and
                                       cudaMemoryTypeUnregistered (the last error untouched) */
    return cudaPointerGetAttributes(&a, host) != cudaSuccess || a.type == cudaMemoryTypeUnregistered;
}

static const void *host_side(enum cudaMemcpyKind kind, const void *dst, const void *src)
{
    return kind == cudaMemcpyHostToDevice ? src : kind == cudaMemcpyDeviceToHost ? dst : NULL;
}

/* Each wrapper and its per-thread-stream variant (wrap.host F, F_ptsz). */
#define GUARDED(F, ARGS, DST, SRC, KIND, STREAM, CALL)                                             \
    cudaError_t F(apigen_call_ctx *cx, ARGS)                                                       \
    {                                                                                              \
        (void)cx;                                                                                  \
        if (transient_in_capture(STREAM, false, host_side(KIND, DST, SRC)))                        \
            return cudaErrorStreamCaptureUnsupported;                                              \
        return CALL;                                                                               \
    }                                                                                              \
    cudaError_t F##_ptsz(apigen_call_ctx *cx, ARGS)                                                \
    {                                                                                              \
        (void)cx;                                                                                  \
        if (transient_in_capture(STREAM, true, host_side(KIND, DST, SRC)))                         \
            return cudaErrorStreamCaptureUnsupported;                                              \
        return CALL##_ptsz_;                                                                       \
    }

#define A_MEMCPY void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, cudaStream_t stream
#define C_MEMCPY cudaMemcpyAsync(dst, src, count, kind, stream)
#define C_MEMCPY_ptsz_ cudaMemcpyAsync_ptsz(dst, src, count, kind, stream)
GUARDED(cudart_host_memcpy_async, A_MEMCPY, dst, src, kind, stream, C_MEMCPY)

#define A_2D                                                                                       \
    void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,        \
        enum cudaMemcpyKind kind, cudaStream_t stream
#define C_2D cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind, stream)
#define C_2D_ptsz_ cudaMemcpy2DAsync_ptsz(dst, dpitch, src, spitch, width, height, kind, stream)
GUARDED(cudart_host_memcpy2d_async, A_2D, dst, src, kind, stream, C_2D)

#define A_TOSYM                                                                                    \
    const void *symbol, const void *src, size_t count, size_t offset, enum cudaMemcpyKind kind,   \
        cudaStream_t stream
#define C_TOSYM cudaMemcpyToSymbolAsync(symbol, src, count, offset, kind, stream)
#define C_TOSYM_ptsz_ cudaMemcpyToSymbolAsync_ptsz(symbol, src, count, offset, kind, stream)
GUARDED(cudart_host_memcpy_to_symbol_async, A_TOSYM, NULL, src, kind, stream, C_TOSYM)

#define A_FROMSYM                                                                                  \
    void *dst, const void *symbol, size_t count, size_t offset, enum cudaMemcpyKind kind,         \
        cudaStream_t stream
#define C_FROMSYM cudaMemcpyFromSymbolAsync(dst, symbol, count, offset, kind, stream)
#define C_FROMSYM_ptsz_ cudaMemcpyFromSymbolAsync_ptsz(dst, symbol, count, offset, kind, stream)
GUARDED(cudart_host_memcpy_from_symbol_async, A_FROMSYM, dst, NULL, kind, stream, C_FROMSYM)

#define A_TOARR                                                                                    \
    cudaArray_t dst, size_t wOffset, size_t hOffset, const void *src, size_t count,               \
        enum cudaMemcpyKind kind, cudaStream_t stream
#define C_TOARR cudaMemcpyToArrayAsync(dst, wOffset, hOffset, src, count, kind, stream)
#define C_TOARR_ptsz_ cudaMemcpyToArrayAsync_ptsz(dst, wOffset, hOffset, src, count, kind, stream)
GUARDED(cudart_host_memcpy_to_array_async, A_TOARR, NULL, src, kind, stream, C_TOARR)

#define A_FROMARR                                                                                  \
    void *dst, cudaArray_const_t src, size_t wOffset, size_t hOffset, size_t count,               \
        enum cudaMemcpyKind kind, cudaStream_t stream
#define C_FROMARR cudaMemcpyFromArrayAsync(dst, src, wOffset, hOffset, count, kind, stream)
#define C_FROMARR_ptsz_                                                                            \
    cudaMemcpyFromArrayAsync_ptsz(dst, src, wOffset, hOffset, count, kind, stream)
GUARDED(cudart_host_memcpy_from_array_async, A_FROMARR, dst, NULL, kind, stream, C_FROMARR)

#define A_TO2DARR                                                                                  \
    cudaArray_t dst, size_t wOffset, size_t hOffset, const void *src, size_t spitch, size_t width, \
        size_t height, enum cudaMemcpyKind kind, cudaStream_t stream
#define C_TO2DARR                                                                                  \
    cudaMemcpy2DToArrayAsync(dst, wOffset, hOffset, src, spitch, width, height, kind, stream)
#define C_TO2DARR_ptsz_                                                                            \
    cudaMemcpy2DToArrayAsync_ptsz(dst, wOffset, hOffset, src, spitch, width, height, kind, stream)
GUARDED(cudart_host_memcpy2d_to_array_async, A_TO2DARR, NULL, src, kind, stream, C_TO2DARR)

#define A_FROM2DARR                                                                                \
    void *dst, size_t dpitch, cudaArray_const_t src, size_t wOffset, size_t hOffset, size_t width, \
        size_t height, enum cudaMemcpyKind kind, cudaStream_t stream
#define C_FROM2DARR                                                                                \
    cudaMemcpy2DFromArrayAsync(dst, dpitch, src, wOffset, hOffset, width, height, kind, stream)
#define C_FROM2DARR_ptsz_                                                                          \
    cudaMemcpy2DFromArrayAsync_ptsz(dst, dpitch, src, wOffset, hOffset, width, height, kind, stream)
GUARDED(cudart_host_memcpy2d_from_array_async, A_FROM2DARR, dst, NULL, kind, stream, C_FROM2DARR)
