// managed_bench: the cost of managed memory (docs/managed.md), natively and
// forwarded. Each case prints a checksum on stdout (compared by
// tests/gpu/managed-bench.sh: natively and forwarded must agree) and its
// time on stderr:
//   no-prefetch   host writes the array once; ROUNDS x (kernel, device
//                 synchronize, host reads one element): pages move on demand
//                 natively, the whole array at every synchronization forwarded
//   prefetch      the same with cudaMemPrefetchAsync to the device before
//                 each kernel and back to the host before each synchronization
//   host-writes   ROUNDS x (host writes the whole array, kernel, synchronize,
//                 host sums it): both directions every round
//   small-state   ROUNDS x (kernel over a cudaMalloc array that counts into
//                 a 4 KiB managed array, synchronize, host reads it): the
//                 pattern that keeps forwarded managed memory cheap
//   launches      ROUNDS*10 launches on the managed array, one synchronize:
//                 what a push costs when the host wrote nothing
// Usage: managed_bench [MiB (64)] [ROUNDS (20)]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CK(call)                                                                                  \
    do {                                                                                          \
        cudaError_t e_ = (call);                                                                  \
        if (e_ != cudaSuccess) {                                                                  \
            std::printf("error: %s: %s\n", #call, cudaGetErrorName(e_));                          \
            std::exit(1);                                                                         \
        }                                                                                         \
    } while (0)

__global__ void inc(unsigned *p, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = p[i] * 3 + 1;
}

__global__ void tally(const unsigned *d, size_t n, unsigned *counts)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        atomicAdd(&counts[d[i] & 1023], 1u);
}

static double ms_since(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 64;
    int rounds = argc > 2 ? std::atoi(argv[2]) : 20;
    size_t n = mib * (1u << 20) / sizeof(unsigned);
    int dev = 0;
    CK(cudaGetDevice(&dev));
    cudaMemLocation gpu{}, cpu{};
    gpu.type = cudaMemLocationTypeDevice;
    gpu.id = dev;
    cpu.type = cudaMemLocationTypeHost;
    unsigned *a = nullptr;
    CK(cudaMallocManaged(&a, n * sizeof *a));
    std::fprintf(stderr, "managed_bench: %zu MiB, %d rounds\n", mib, rounds);

    for (int pf = 0; pf < 2; pf++) {
        for (size_t i = 0; i < n; i++) a[i] = (unsigned)i;
        auto t0 = std::chrono::steady_clock::now();
        unsigned long long sum = 0;
        for (int r = 0; r < rounds; r++) {
            if (pf) CK(cudaMemPrefetchAsync(a, n * sizeof *a, gpu, 0, 0));
            inc<<<1024, 256>>>(a, n);
            CK(cudaGetLastError());
            if (pf) CK(cudaMemPrefetchAsync(a, n * sizeof *a, cpu, 0, 0));
            CK(cudaDeviceSynchronize());
            sum += a[(size_t)r * 7919 % n];
        }
        double t = ms_since(t0);
        std::printf("%s: checksum %llu\n", pf ? "prefetch" : "no-prefetch", sum);
        std::fprintf(stderr, "%-12s %9.2f ms  %8.3f ms/round\n", pf ? "prefetch" : "no-prefetch", t,
                     t / rounds);
    }

    {
        auto t0 = std::chrono::steady_clock::now();
        unsigned long long sum = 0;
        for (int r = 0; r < rounds; r++) {
            for (size_t i = 0; i < n; i++) a[i] = (unsigned)(i + r);
            inc<<<1024, 256>>>(a, n);
            CK(cudaDeviceSynchronize());
            for (size_t i = 0; i < n; i += 1024) sum += a[i];
        }
        double t = ms_since(t0);
        std::printf("host-writes: checksum %llu\n", sum);
        std::fprintf(stderr, "%-12s %9.2f ms  %8.3f ms/round\n", "host-writes", t, t / rounds);
    }

    {
        unsigned *d = nullptr, *counts = nullptr;
        CK(cudaMalloc(&d, n * sizeof *d));
        CK(cudaMemcpy(d, a, n * sizeof *d, cudaMemcpyDefault));
        CK(cudaMallocManaged(&counts, 1024 * sizeof *counts));
        auto t0 = std::chrono::steady_clock::now();
        unsigned long long sum = 0;
        for (int r = 0; r < rounds; r++) {
            for (int i = 0; i < 1024; i++) counts[i] = 0;
            tally<<<1024, 256>>>(d, n, counts);
            CK(cudaDeviceSynchronize());
            sum += counts[r % 1024];
        }
        double t = ms_since(t0);
        std::printf("small-state: checksum %llu\n", sum);
        std::fprintf(stderr, "%-12s %9.2f ms  %8.3f ms/round\n", "small-state", t, t / rounds);
        CK(cudaFree(counts));
        CK(cudaFree(d));
    }

    {
        auto t0 = std::chrono::steady_clock::now();
        for (int r = 0; r < rounds * 10; r++) inc<<<1024, 256>>>(a, n);
        CK(cudaDeviceSynchronize());
        double t = ms_since(t0);
        std::printf("launches: a[1] %u\n", a[1]);
        std::fprintf(stderr, "%-12s %9.2f ms  %8.3f ms/launch (with the final pull)\n", "launches", t,
                     t / (rounds * 10));
    }
    CK(cudaFree(a));
    return 0;
}
