// multithread: one host thread per device (two when there are two, else
// both threads on device 0), each with its own current device, stream and
// data; results are printed in thread order after the joins.
#include <thread>
#include <vector>
#include "common.h"

__global__ void fill(int *p, int n, int base)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = base + i;
}

struct result {
    int device = -1;
    long long sum = 0;
    cudaError_t err = cudaSuccess;
    const char *what = "";
};

static void work(int t, int device, result *r)
{
#define T(call)                                                                                   \
    do {                                                                                          \
        cudaError_t e_ = (call);                                                                  \
        if (e_ != cudaSuccess) {                                                                  \
            r->err = e_;                                                                          \
            r->what = #call;                                                                      \
            return;                                                                               \
        }                                                                                         \
    } while (0)
    T(cudaSetDevice(device));
    T(cudaGetDevice(&r->device));
    const int n = 100000;
    int *d;
    std::vector<int> h(n);
    cudaStream_t s;
    T(cudaStreamCreate(&s));
    T(cudaMalloc(&d, n * sizeof(int)));
    fill<<<(n + 255) / 256, 256, 0, s>>>(d, n, 1000 * t);
    T(cudaGetLastError());
    T(cudaMemcpyAsync(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost, s));
    T(cudaStreamSynchronize(s));
    for (int v : h) r->sum += v;
    T(cudaFree(d));
    T(cudaStreamDestroy(s));
#undef T
}

int main()
{
    int ndev = 0;
    CHECK(cudaGetDeviceCount(&ndev));
    int used = ndev >= 2 ? 2 : 1;
    result r[2];
    std::thread th[2];
    for (int t = 0; t < 2; t++) th[t] = std::thread(work, t, t % used, &r[t]);
    for (int t = 0; t < 2; t++) th[t].join();
    int dev = -1;
    CHECK(cudaGetDevice(&dev)); // the main thread's own current device is untouched
    int bad = 0;
    for (int t = 0; t < 2; t++) {
        if (r[t].err != cudaSuccess) {
            std::printf("thread %d: error: %s: %s\n", t, r[t].what, cudaGetErrorName(r[t].err));
            bad++;
            continue;
        }
        long long want = 0;
        for (int i = 0; i < 100000; i++) want += 1000LL * t + i;
        std::printf("thread %d: device %d, sum=%lld %s\n", t, r[t].device, r[t].sum,
                    r[t].sum == want ? "ok" : "WRONG");
        bad += r[t].sum != want;
    }
    std::printf("multithread: devices used=%d, main thread device=%d\n", used, dev);
    std::printf("%s\n", bad ? "FAILED" : "PASSED");
    return bad ? 1 : 0;
}
