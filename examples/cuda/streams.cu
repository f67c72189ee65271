// streams: chunks copied in, scaled and copied out on several streams so
// that copies and kernels overlap; pinned host memory; events order and time
// the work (times only with EXAMPLE_TIMES=1: stdout stays deterministic).
#include "common.h"

__global__ void scale(float *x, int n, float f)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * f + 1.0f;
}

int main()
{
    const int nstreams = 4, chunk = 1 << 18, n = nstreams * chunk;
    float *h, *d;
    CHECK(cudaMallocHost(&h, n * sizeof(float)));
    CHECK(cudaMalloc(&d, n * sizeof(float)));
    for (int i = 0; i < n; i++) h[i] = (float)(i % 1000);
    cudaStream_t s[nstreams];
    cudaEvent_t start, stop, done[nstreams];
    for (int k = 0; k < nstreams; k++) {
        CHECK(cudaStreamCreateWithFlags(&s[k], cudaStreamNonBlocking));
        CHECK(cudaEventCreateWithFlags(&done[k], cudaEventDisableTiming));
    }
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    CHECK(cudaEventRecord(start, 0));
    for (int k = 0; k < nstreams; k++) {
        float *hp = h + k * chunk, *dp = d + k * chunk;
        CHECK(cudaMemcpyAsync(dp, hp, chunk * sizeof(float), cudaMemcpyHostToDevice, s[k]));
        scale<<<chunk / 256, 256, 0, s[k]>>>(dp, chunk, 2.0f);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpyAsync(hp, dp, chunk * sizeof(float), cudaMemcpyDeviceToHost, s[k]));
        CHECK(cudaEventRecord(done[k], s[k]));
    }
    // the legacy stream waits for every chunk, then the stop event
    for (int k = 0; k < nstreams; k++) CHECK(cudaStreamWaitEvent(0, done[k], 0));
    CHECK(cudaEventRecord(stop, 0));
    CHECK(cudaEventSynchronize(stop));
    cudaError_t q = cudaEventQuery(stop);
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    int bad = 0;
    for (int i = 0; i < n; i++)
        if (h[i] != (float)(i % 1000) * 2.0f + 1.0f) bad++;
    int prio_lo = 0, prio_hi = 0;
    CHECK(cudaDeviceGetStreamPriorityRange(&prio_lo, &prio_hi));
    unsigned flags = 0;
    CHECK(cudaStreamGetFlags(s[0], &flags));
    std::printf("streams: %d streams x %d floats, mismatches=%d, h[4242]=%.1f, query after sync: %s, "
                "stream flags=%u, elapsed>=0: %s\n",
                nstreams, chunk, bad, h[4242], cudaGetErrorName(q), flags, ms >= 0 ? "yes" : "no");
    if (show_times()) std::fprintf(stderr, "streams: %.3f ms\n", ms);
    for (int k = 0; k < nstreams; k++) {
        CHECK(cudaStreamDestroy(s[k]));
        CHECK(cudaEventDestroy(done[k]));
    }
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    CHECK(cudaFree(d));
    CHECK(cudaFreeHost(h));
    std::printf("%s\n", bad ? "FAILED" : "PASSED");
    return bad ? 1 : 0;
}
