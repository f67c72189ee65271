// callback: host functions in stream order (cudaLaunchHostFunc) and a
// stream callback that reports the stream's status (cudaStreamAddCallback),
// run in this process; their output order is the stream order.
#include <atomic>
#include "common.h"

__global__ void inc(int *p)
{
    atomicAdd(p, 1);
}

static int *g_host;
static std::atomic<int> g_calls;

static void CUDART_CB host_fn(void *user)
{
    int step = *(int *)user;
    g_calls++;
    std::printf("host function after step %d\n", step);
}

static void CUDART_CB stream_cb(cudaStream_t, cudaError_t status, void *user)
{
    g_calls++;
    std::printf("stream callback: %s, tag=%s, value=%d\n", cudaGetErrorName(status), (const char *)user,
                *g_host);
}

int main()
{
    int *d;
    CHECK(cudaMalloc(&d, sizeof(int)));
    CHECK(cudaMallocHost(&g_host, sizeof(int)));
    CHECK(cudaMemset(d, 0, sizeof(int)));
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    static int steps[3] = {1, 2, 3};
    for (int k = 0; k < 3; k++) {
        inc<<<1, 32, 0, s>>>(d);
        CHECK(cudaGetLastError());
        CHECK(cudaLaunchHostFunc(s, host_fn, &steps[k]));
    }
    CHECK(cudaMemcpyAsync(g_host, d, sizeof(int), cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamAddCallback(s, stream_cb, (void *)"last", 0));
    CHECK(cudaStreamSynchronize(s));
    std::printf("callback: calls=%d, value=%d\n", g_calls.load(), *g_host);
    int bad = g_calls.load() != 4 || *g_host != 96;
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(d));
    CHECK(cudaFreeHost(g_host));
    std::printf("%s\n", bad ? "FAILED" : "PASSED");
    return bad ? 1 : 0;
}
