// mapped: zero-copy host memory. A block from cudaHostAlloc(...,
// cudaHostAllocMapped) and one from cudaMallocHost are given to kernels
// through cudaHostGetDevicePointer; the kernels read what the host wrote and
// write back, and the host reads the results after cudaDeviceSynchronize
// (and after a stream synchronize, for a kernel on a stream). Then a copy
// between mapped memory and device memory through the device pointer.
// Then kernels given the host address itself (unified addressing): a
// launch and a graph's kernel node. Prints checksums and counts of wrong
// values: the same natively and forwarded (over unix:// and shm:// the host
// memory is the shared-memory arena the server maps at the same address;
// over tcp:// a device allocation kept equal to it, whose address the
// launches are given).
#include "common.h"

__global__ void bump(unsigned *p, size_t n, unsigned k)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = p[i] * 3 + k;
}

static size_t wrong(const unsigned *p, size_t n, unsigned seed, unsigned k, int rounds)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned v = (unsigned)i * seed;
        for (int r = 0; r < rounds; r++) v = v * 3 + k;
        bad += p[i] != v;
    }
    return bad;
}

int main()
{
    const size_t N = 1 << 20; // 4 MiB of unsigned
    unsigned *h = nullptr, *d = nullptr, *h2 = nullptr, *d2 = nullptr;
    CHECK(cudaHostAlloc(&h, N * sizeof *h, cudaHostAllocMapped));
    CHECK(cudaHostGetDevicePointer((void **)&d, h, 0));
    unsigned flags = 0;
    CHECK(cudaHostGetFlags(&flags, h));
    std::printf("mapped flag: %s\n", (flags & cudaHostAllocMapped) ? "set" : "clear");
    for (size_t i = 0; i < N; i++) h[i] = (unsigned)i * 7;
    bump<<<256, 256>>>(d, N, 1);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    std::printf("hostalloc mapped, one kernel: %zu wrong, %016llx\n", wrong(h, N, 7, 1, 1),
                (unsigned long long)fnv((const unsigned char *)h, N * sizeof *h));
    // the host changes some values; the kernel sees them
    for (size_t i = 0; i < N; i += 2) h[i] = (unsigned)i * 7 * 3 + 1;
    bump<<<256, 256>>>(d, N, 1);
    CHECK(cudaDeviceSynchronize());
    std::printf("hostalloc mapped, second kernel: %zu wrong\n", wrong(h, N, 7, 1, 2));

    // cudaMallocHost memory is mapped too (unified addressing)
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK(cudaMallocHost(&h2, 4096 * sizeof *h2));
    CHECK(cudaHostGetDevicePointer((void **)&d2, h2, 0));
    for (size_t i = 0; i < 4096; i++) h2[i] = (unsigned)i * 5;
    bump<<<4, 128, 0, s>>>(d2, 4096, 9);
    CHECK(cudaStreamSynchronize(s));
    std::printf("mallochost, kernel on a stream: %zu wrong\n", wrong(h2, 4096, 5, 9, 1));
    // a device pointer inside the block (an offset), and copies through it
    unsigned *dev = nullptr;
    CHECK(cudaMalloc(&dev, 1024 * sizeof *dev));
    CHECK(cudaMemcpy(dev, d2 + 1024, 1024 * sizeof *dev, cudaMemcpyDefault));
    bump<<<4, 256>>>(dev, 1024, 2);
    CHECK(cudaMemcpy(d2, dev, 1024 * sizeof *dev, cudaMemcpyDefault));
    CHECK(cudaDeviceSynchronize());
    size_t bad = 0;
    for (size_t i = 0; i < 1024; i++) bad += h2[i] != ((unsigned)(i + 1024) * 5 * 3 + 9) * 3 + 2;
    std::printf("copies through the device pointer: %zu wrong\n", bad);
    CHECK(cudaFree(dev));

    // unified addressing: kernels given the host address itself, launched
    // with <<<>>>, captured into a graph and as an explicit kernel node
    for (size_t i = 0; i < 4096; i++) h2[i] = (unsigned)i * 5;
    bump<<<4, 128, 0, s>>>(h2, 4096, 4);
    CHECK(cudaStreamSynchronize(s));
    std::printf("a kernel given the host address: %zu wrong\n", wrong(h2, 4096, 5, 4, 1));
    cudaGraph_t g = nullptr;
    cudaGraphExec_t ge = nullptr;
    CHECK(cudaGraphCreate(&g, 0));
    unsigned *hp = h2;
    size_t n2 = 4096;
    unsigned k2 = 4;
    void *kargs[] = {&hp, &n2, &k2};
    cudaKernelNodeParams kp = {};
    kp.func = (void *)bump;
    kp.gridDim = dim3(4);
    kp.blockDim = dim3(128);
    kp.kernelParams = kargs;
    cudaGraphNode_t node;
    CHECK(cudaGraphAddKernelNode(&node, g, nullptr, 0, &kp));
    CHECK(cudaGraphInstantiate(&ge, g, 0));
    for (size_t i = 0; i < 4096; i++) h2[i] = (unsigned)i * 5;
    CHECK(cudaGraphLaunch(ge, s));
    CHECK(cudaGraphLaunch(ge, s));
    CHECK(cudaStreamSynchronize(s));
    std::printf("a graph's kernel node on the host address, launched twice: %zu wrong\n",
                wrong(h2, 4096, 5, 4, 2));
    CHECK(cudaGraphExecDestroy(ge));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFreeHost(h2));
    CHECK(cudaFreeHost(h));
    return 0;
}
