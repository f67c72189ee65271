// registered: the application's own memory registered mapped
// (cudaHostRegister with cudaHostRegisterMapped) and used by kernels
// through cudaHostGetDevicePointer: a kernel writes it and the host reads
// it after a synchronization; the host changes it and the next kernel sees
// the change; kernels on two streams write two halves while the host writes
// a part neither kernel touches; a read-only registration read by a kernel;
// unregistration after the last synchronization. Only what CUDA promises
// when host and device do not use the same bytes at the same time (the
// stub keeps a device copy equal at launches and synchronizations:
// docs/multi-gpu.md). Prints counts of wrong values: the same natively and
// forwarded over every transport.
#include "common.h"

#include <cstring>
#include <vector>

__global__ void scale(int *p, size_t n, int k)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = p[i] * k + 1;
}

__global__ void sum(const int *p, size_t n, unsigned long long *out)
{
    unsigned long long s = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        s += (unsigned long long)p[i];
    atomicAdd(out, s);
}

int main()
{
    const size_t N = (3 << 20) + 77; // ints: 12 MiB and a bit, from malloc (not page-aligned)
    std::vector<int> v(N + 3);
    int *h = v.data() + 3;
    for (size_t i = 0; i < N; i++) h[i] = (int)(i % 1000);
    CHECK(cudaHostRegister(h, N * sizeof(int), cudaHostRegisterMapped));
    unsigned int flags = 0;
    CHECK(cudaHostGetFlags(&flags, h));
    std::printf("registered: mapped %d\n", (flags & cudaHostRegisterMapped) != 0);
    int *d = nullptr;
    CHECK(cudaHostGetDevicePointer((void **)&d, h, 0));

    scale<<<256, 256>>>(d, N, 3);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    size_t bad = 0;
    for (size_t i = 0; i < N; i++) bad += h[i] != (int)(i % 1000) * 3 + 1;
    std::printf("a kernel wrote it, the host reads it: %zu of %zu wrong\n", bad, N);

    for (size_t i = 0; i < N; i += 4096) h[i] = 7; // the host changes some ints
    unsigned long long *s = nullptr, got = 0, want = 0;
    CHECK(cudaMalloc(&s, sizeof *s));
    CHECK(cudaMemset(s, 0, sizeof *s));
    sum<<<256, 256>>>(d, N, s);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(&got, s, sizeof got, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < N; i++) want += (unsigned long long)h[i];
    std::printf("the next kernel sees the host's changes: sum %llu, want %llu\n", got, want);

    // two streams, two halves; the host writes the last 1000 ints meanwhile
    cudaStream_t a, b;
    CHECK(cudaStreamCreate(&a));
    CHECK(cudaStreamCreate(&b));
    size_t half = (N - 1000) / 2;
    std::vector<int> before(h, h + N);
    scale<<<128, 256, 0, a>>>(d, half, 2);
    scale<<<128, 256, 0, b>>>(d + half, N - 1000 - half, 5);
    CHECK(cudaGetLastError());
    for (size_t i = N - 1000; i < N; i++) h[i] = -1;
    CHECK(cudaStreamSynchronize(a));
    CHECK(cudaStreamSynchronize(b));
    bad = 0;
    for (size_t i = 0; i < N; i++) {
        int w = i < half ? before[i] * 2 + 1 : i < N - 1000 ? before[i] * 5 + 1 : -1;
        bad += h[i] != w;
    }
    std::printf("two streams' kernels and the host's own writes: %zu of %zu wrong\n", bad, N);

    // a read-only registration, read by a kernel
    std::vector<int> ro(100000, 3);
    int dev = 0, ro_ok = 0;
    CHECK(cudaGetDevice(&dev));
    CHECK(cudaDeviceGetAttribute(&ro_ok, cudaDevAttrHostRegisterReadOnlySupported, dev));
    CHECK(cudaHostRegister(ro.data(), ro.size() * sizeof(int),
                           cudaHostRegisterMapped | (ro_ok ? cudaHostRegisterReadOnly : 0)));
    int *dro = nullptr;
    CHECK(cudaHostGetDevicePointer((void **)&dro, ro.data(), 0));
    CHECK(cudaMemset(s, 0, sizeof *s));
    sum<<<64, 256>>>(dro, ro.size(), s);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(&got, s, sizeof got, cudaMemcpyDeviceToHost));
    std::printf("read-only registration: sum %llu, want %zu\n", got, ro.size() * 3);
    CHECK(cudaHostUnregister(ro.data()));

    scale<<<256, 256>>>(d, N, 1);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaHostUnregister(h));
    bad = 0;
    for (size_t i = 0; i < N; i++) {
        int w = i < half ? before[i] * 2 + 1 : i < N - 1000 ? before[i] * 5 + 1 : -1;
        bad += h[i] != w + 1;
    }
    std::printf("after unregistering: %zu of %zu wrong\n", bad, N);
    CHECK(cudaStreamDestroy(a));
    CHECK(cudaStreamDestroy(b));
    CHECK(cudaFree(s));
    return 0;
}
