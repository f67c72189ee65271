// multi_gpu: two devices. A stream and a buffer per device, a kernel on
// each; cudaDeviceCanAccessPeer both ways; with peer access enabled a kernel
// on device 1 reads device 0's buffer directly; cudaMemcpyPeer and
// cudaMemcpyPeerAsync (on device 1's stream) both ways, 24 MiB at offsets.
// Prints sums and counts of wrong values. With one device it says so and
// prints the lines it can (the same program runs in CI and on one GPU).
// Through two servers (one GPU each, APIGEN_SERVER=url0,url1) the devices
// have no peer access (the "peer" lines say no; the peer kernel is skipped)
// and peer copies are staged through the guest (docs/multi-gpu.md);
// tests/gpu/two-gpu.sh compares the lines.
#include "common.h"

#include <vector>

__global__ void fill(int *p, size_t n, int base)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = base + (int)(i % 100003);
}

// runs on device 1 and reads device 0's memory (peer access)
__global__ void add_peer(int *mine, const int *peer, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        mine[i] += peer[i];
}

static size_t wrong(const std::vector<int> &h, size_t from, size_t n, int base, size_t shift, int add_base)
{
    size_t b = 0;
    for (size_t i = 0; i < n; i++) {
        int want = base + (int)((i + shift) % 100003);
        if (add_base >= 0) want += add_base + (int)((i + shift) % 100003);
        b += h[from + i] != want;
    }
    return b;
}

int main()
{
    int n = 0;
    CHECK(cudaGetDeviceCount(&n));
    std::printf("devices: %d\n", n);
    const size_t N = 6 << 20; // ints: 24 MiB per buffer
    int nd = n < 2 ? n : 2;
    int *d[2] = {nullptr, nullptr};
    cudaStream_t s[2];
    std::vector<int> h(N);
    for (int i = 0; i < nd; i++) {
        CHECK(cudaSetDevice(i));
        CHECK(cudaStreamCreate(&s[i]));
        CHECK(cudaMalloc(&d[i], N * sizeof(int)));
        fill<<<256, 256, 0, s[i]>>>(d[i], N, 1000 * (i + 1));
        CHECK(cudaGetLastError());
    }
    for (int i = 0; i < nd; i++) {
        CHECK(cudaSetDevice(i));
        CHECK(cudaStreamSynchronize(s[i]));
        CHECK(cudaMemcpy(h.data(), d[i], N * sizeof(int), cudaMemcpyDeviceToHost));
        std::printf("device %d: its own kernel: %zu of %zu wrong\n", i, wrong(h, 0, N, 1000 * (i + 1), 0, -1), N);
    }
    if (nd < 2) {
        std::printf("only %d device: peer access and peer copies need two (nothing else to check)\n", nd);
        return 0;
    }
    int can01 = 0, can10 = 0;
    CHECK(cudaDeviceCanAccessPeer(&can01, 0, 1));
    CHECK(cudaDeviceCanAccessPeer(&can10, 1, 0));
    std::printf("peer access 0->1: %s\n", can01 ? "yes" : "no");
    std::printf("peer access 1->0: %s\n", can10 ? "yes" : "no");
    CHECK(cudaSetDevice(1));
    if (can10) {
        CHECK(cudaDeviceEnablePeerAccess(0, 0));
        add_peer<<<256, 256, 0, s[1]>>>(d[1], d[0], N); // device 1 reads device 0's buffer
        CHECK(cudaGetLastError());
        CHECK(cudaStreamSynchronize(s[1]));
        CHECK(cudaMemcpy(h.data(), d[1], N * sizeof(int), cudaMemcpyDeviceToHost));
        std::printf("peer kernel (device 1 reads device 0): %zu of %zu wrong\n", wrong(h, 0, N, 2000, 0, 1000), N);
        CHECK(cudaDeviceDisablePeerAccess(0));
        fill<<<256, 256, 0, s[1]>>>(d[1], N, 2000); // back to device 1's own values
        CHECK(cudaGetLastError());
    } else {
        cudaError_t e = cudaDeviceEnablePeerAccess(0, 0);
        std::printf("enable peer access 1->0: %s\n", cudaGetErrorName(e));
        cudaGetLastError();
    }
    // device 0's first N-7 ints to device 1 at offset 7 (on the default stream)
    CHECK(cudaMemcpyPeer(d[1] + 7, 1, d[0], 0, (N - 7) * sizeof(int)));
    CHECK(cudaMemcpy(h.data(), d[1], N * sizeof(int), cudaMemcpyDeviceToHost));
    std::printf("cudaMemcpyPeer 0->1: %zu of %zu wrong, the 7 before untouched: %s\n",
                wrong(h, 7, N - 7, 1000, 0, -1), N - 7, wrong(h, 0, 7, 2000, 0, -1) ? "NO" : "yes");
    // device 1's ints from 3 on back to device 0 on device 1's stream
    CHECK(cudaMemcpyPeerAsync(d[0], 0, d[1] + 3, 1, (N - 7) * sizeof(int), s[1]));
    CHECK(cudaStreamSynchronize(s[1]));
    CHECK(cudaSetDevice(0));
    CHECK(cudaMemcpy(h.data(), d[0], N * sizeof(int), cudaMemcpyDeviceToHost));
    // d1[3 + i] = (i + 3 < 7) ? 2000-values : 1000 + (i + 3 - 7) % ...
    size_t b = 0;
    for (size_t i = 0; i < N - 7; i++) {
        size_t j = i + 3;
        int want = j < 7 ? 2000 + (int)(j % 100003) : 1000 + (int)((j - 7) % 100003);
        b += h[i] != want;
    }
    std::printf("cudaMemcpyPeerAsync 1->0: %zu of %zu wrong\n", b, N - 7);
    int cur = -1;
    CHECK(cudaGetDevice(&cur));
    std::printf("current device: %d\n", cur);
    for (int i = 0; i < 2; i++) {
        CHECK(cudaSetDevice(i));
        CHECK(cudaStreamDestroy(s[i]));
        CHECK(cudaFree(d[i]));
    }
    return 0;
}
