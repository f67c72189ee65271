/* tests/cuda/capture_refused_ci.c: copies of host memory captured into a
 * graph where the server cannot reach that memory at the graph's launches
 * (tcp://: no shared-memory arena). The runtime stub refuses such a copy
 * with cudaErrorStreamCaptureUnsupported and invalidates the capture, as
 * the driver does with what a capture does not allow: work queued into it
 * fails there, its end reports cudaErrorStreamCaptureInvalidated with no
 * graph (no graph runs without the copy), and later calls succeed.
 * cuda.capture_refused.tcp runs it natively and forwarded against the
 * stand-in device (fake_capture.c), the native output mapped by that
 * documented difference (tests/cuda/CMakeLists.txt). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

static const char *nm(cudaError_t e)
{
    return cudaGetErrorName(e);
}

int main(void)
{
    cudaStream_t s = NULL;
    void *d = NULL;
    unsigned char h[64];
    if (cudaStreamCreate(&s) != cudaSuccess || cudaMalloc(&d, sizeof h) != cudaSuccess) {
        printf("setup failed\n");
        return 1;
    }
    memset(h, 7, sizeof h);
    printf("cudaStreamBeginCapture: %s\n",
           nm(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed)));
    cudaError_t h2d = cudaMemcpyAsync(d, h, sizeof h, cudaMemcpyHostToDevice, s);
    (void)cudaMemsetAsync(d, 1, sizeof h, s); /* queued, unlooked at, as launches are */
    cudaError_t d2h = cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, s);
    cudaGraph_t g = (cudaGraph_t)(uintptr_t)0x1234; /* what the caller's variable held */
    cudaError_t end = cudaStreamEndCapture(s, &g);
    cudaError_t last = cudaGetLastError();
    printf("H2D %s, D2H %s, end %s, graph %s, last %s\n", nm(h2d), nm(d2h), nm(end),
           g == NULL                             ? "NULL"
           : g == (cudaGraph_t)(uintptr_t)0x1234 ? "left as it was"
                                                 : "made",
           nm(last));
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusInvalidated;
    cudaError_t q = cudaStreamIsCapturing(s, &cs);
    printf("cudaStreamIsCapturing after it: %s, %s\n", nm(q),
           cs == cudaStreamCaptureStatusNone ? "none" : "capturing");
    printf("cudaFree: %s, then the last error %s\n", nm(cudaFree(d)), nm(cudaGetLastError()));
    printf("cudaStreamDestroy: %s\n", nm(cudaStreamDestroy(s)));
    return 0;
}
