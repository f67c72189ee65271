// managed: managed memory. A cudaMallocManaged array written on the host, a
// kernel, read on the host after cudaDeviceSynchronize; the same with
// cudaMemAdvise (read mostly, preferred location) and cudaMemPrefetchAsync
// to the device and back to the host, synchronized on a stream; a
// __managed__ variable a kernel counts into; a loop of several kernels
// with host reads and writes between synchronizations (stream and event);
// a managed array given to cudaMemcpy and cudaMemset; pointer attributes.
// Prints checksums and counts of wrong values: the same natively and
// forwarded over every transport (docs/managed.md). Only accesses valid on
// devices without concurrent managed access: the host touches managed
// memory only while no kernel runs.
#include "common.h"

__managed__ unsigned long long hits = 5; // initialized: the host must see 5 first

__global__ void scale(float *p, size_t n, float k)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = p[i] * k + 1.0f;
}

__global__ void count(const float *p, size_t n, float above)
{
    unsigned long long c = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        c += p[i] > above;
    atomicAdd(&hits, c);
}

__global__ void step(int *a, size_t n, int round)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        a[i] = a[i] * 2 + round;
}

static size_t wrong_scale(const float *p, size_t n, int rounds)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        float v = (float)(i % 1000);
        for (int r = 0; r < rounds; r++) v = v * 0.5f + 1.0f;
        bad += p[i] != v;
    }
    return bad;
}

int main()
{
    int dev = 0;
    CHECK(cudaGetDevice(&dev));
    const size_t N = (1 << 22) + 123; // ~16 MiB of float, not a whole number of pages
    float *a = nullptr;
    CHECK(cudaMallocManaged(&a, N * sizeof *a));
    cudaPointerAttributes at{};
    CHECK(cudaPointerGetAttributes(&at, a));
    std::printf("attributes: type %s, device pointer %s, host pointer %s\n",
                at.type == cudaMemoryTypeManaged ? "managed" : "OTHER",
                at.devicePointer == a ? "same" : "OTHER", at.hostPointer == a ? "same" : "OTHER");

    // 1. written on the host, a kernel, read after a synchronization
    for (size_t i = 0; i < N; i++) a[i] = (float)(i % 1000);
    scale<<<256, 256>>>(a, N, 0.5f);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    std::printf("host -> kernel -> host: %zu wrong, %016llx\n", wrong_scale(a, N, 1),
                (unsigned long long)fnv((const unsigned char *)a, N * sizeof *a));

    // 2. advise and prefetch: to the device, a kernel, back to the host
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaMemLocation gpu{}, cpu{};
    gpu.type = cudaMemLocationTypeDevice;
    gpu.id = dev;
    cpu.type = cudaMemLocationTypeHost;
    cpu.id = 0;
    CHECK(cudaMemAdvise(a, N * sizeof *a, cudaMemAdviseSetPreferredLocation, gpu));
    CHECK(cudaMemAdvise(a, N * sizeof *a, cudaMemAdviseSetAccessedBy, gpu));
    CHECK(cudaMemPrefetchAsync(a, N * sizeof *a, gpu, 0, s));
    scale<<<256, 256, 0, s>>>(a, N, 0.5f);
    CHECK(cudaGetLastError());
    CHECK(cudaMemPrefetchAsync(a, N * sizeof *a, cpu, 0, s));
    CHECK(cudaStreamSynchronize(s));
    std::printf("prefetched kernel, stream sync: %zu wrong\n", wrong_scale(a, N, 2));
    CHECK(cudaMemAdvise(a, N * sizeof *a, cudaMemAdviseUnsetPreferredLocation, gpu));
    CHECK(cudaMemAdvise(a, N * sizeof *a, cudaMemAdviseSetReadMostly, gpu));

    // 3. a __managed__ variable: initial value on the host, a kernel adds
    std::printf("__managed__ hits before: %llu\n", hits);
    hits = 0;
    count<<<128, 256>>>(a, N, 200.0f);
    CHECK(cudaDeviceSynchronize());
    size_t want = 0;
    for (size_t i = 0; i < N; i++) want += a[i] > 200.0f;
    std::printf("__managed__ hits: %llu (%s)\n", hits, hits == want ? "right" : "WRONG");
    hits += 1000; // the host writes it; the next kernel adds to that
    count<<<128, 256>>>(a, N, 200.0f);
    CHECK(cudaDeviceSynchronize());
    std::printf("__managed__ hits after a host write: %s\n", hits == 2 * want + 1000 ? "right" : "WRONG");
    CHECK(cudaMemAdvise(a, N * sizeof *a, cudaMemAdviseUnsetReadMostly, gpu));

    // 4. a loop of kernels, host reads and writes between synchronizations
    const size_t M = 1 << 20;
    int *b = nullptr;
    CHECK(cudaMallocManaged(&b, M * sizeof *b));
    for (size_t i = 0; i < M; i++) b[i] = (int)(i & 7);
    cudaEvent_t ev;
    CHECK(cudaEventCreate(&ev));
    size_t bad = 0, bad5 = 0;
    long long want0 = 0;
    for (int r = 0; r < 8; r++) {
        step<<<128, 256, 0, s>>>(b, M, r);
        CHECK(cudaGetLastError());
        if (r % 2 == 0) {
            CHECK(cudaEventRecord(ev, s));
            CHECK(cudaEventSynchronize(ev));
        } else {
            CHECK(cudaStreamSynchronize(s));
        }
        want0 = want0 * 2 + r; // element 0, modelled on the host
        bad += b[0] != (int)want0;
        if (r > 0) bad5 += b[5] != 5 * 2 + r; // the kernel saw the host's 5
        b[5] = 5; // the host resets one element before the next kernel
    }
    std::printf("8 rounds: %zu wrong at element 0, %zu at the element the host reset, %016llx\n",
                bad, bad5, (unsigned long long)fnv((const unsigned char *)b, M * sizeof *b));

    // 5. copies and sets with managed memory (synchronous: the host sees them)
    int *d = nullptr;
    CHECK(cudaMalloc(&d, 1024 * sizeof *d));
    for (int i = 0; i < 1024; i++) b[i] = 3 * i;
    CHECK(cudaMemcpy(d, b, 1024 * sizeof *d, cudaMemcpyDefault));
    CHECK(cudaMemset(b, 0, 1024 * sizeof *b));
    CHECK(cudaDeviceSynchronize());
    size_t zero = 0;
    for (int i = 0; i < 1024; i++) zero += b[i] == 0;
    CHECK(cudaMemcpy(b + 2048, d, 1024 * sizeof *d, cudaMemcpyDefault));
    size_t back = 0;
    for (int i = 0; i < 1024; i++) back += b[2048 + i] == 3 * i;
    std::printf("memset: %zu of 1024 zero; memcpy round trip: %zu of 1024 right\n", zero, back);

    CHECK(cudaFree(d));
    CHECK(cudaEventDestroy(ev));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(b));
    CHECK(cudaFree(a));
    std::printf("done\n");
    return 0;
}
