// rdc: separate compilation and dynamic parallelism, as CMake projects with
// CUDA_SEPARABLE_COMPILATION build them (nvcc -rdc=true, two translation
// units, the device linker; the program registers its code through
// __cudaRegisterLinkedBinary). A kernel calls a __device__ function of the
// other unit, the host sets a __device__ variable of the other unit by
// symbol, and a parent kernel launches the other unit's kernel from the
// device (dynamic parallelism, libcudadevrt). Prints checksums: the same
// natively and forwarded (tests/gpu/run-all.sh, driver.sh).
#include <vector>

#include "../common.h"
#include "rdc.h"

__global__ void direct(int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = helper(i);
}

__global__ void parent(int *out, int per)
{
    if (threadIdx.x == 0)
        child<<<(per + 127) / 128, 128>>>(out, blockIdx.x * per, per);
}

static size_t wrong(const std::vector<int> &v, int scale, int extra)
{
    size_t bad = 0;
    for (size_t i = 0; i < v.size(); i++) bad += v[i] != (int)i * scale + 1 + extra;
    return bad;
}

int main()
{
    const int n = 1 << 16, chunks = 64;
    int *d = nullptr;
    std::vector<int> h(n);
    CHECK(cudaMalloc(&d, n * sizeof(int)));
    direct<<<n / 256, 256>>>(d, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost));
    std::printf("another unit's device function: %zu wrong, fnv %016llx\n", wrong(h, 3, 0),
                (unsigned long long)fnv((const unsigned char *)h.data(), n * sizeof(int)));

    int five = 5, back = 0;
    CHECK(cudaMemcpyToSymbol(scale_by, &five, sizeof five));
    CHECK(cudaMemcpyFromSymbol(&back, scale_by, sizeof back));
    void *addr = nullptr;
    size_t size = 0;
    CHECK(cudaGetSymbolAddress(&addr, scale_by));
    CHECK(cudaGetSymbolSize(&size, scale_by));
    std::printf("another unit's device variable: %d, size %zu, address %s\n", back, size,
                addr ? "non-null" : "null");
    direct<<<n / 256, 256>>>(d, n);
    CHECK(cudaMemcpy(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost));
    std::printf("after setting it: %zu wrong\n", wrong(h, 5, 0));

    CHECK(cudaMemset(d, 0, n * sizeof(int)));
    parent<<<chunks, 32>>>(d, n / chunks);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost));
    std::printf("kernels launched from the device: %zu wrong, fnv %016llx\n", wrong(h, 5, 1000),
                (unsigned long long)fnv((const unsigned char *)h.data(), n * sizeof(int)));

    cudaFuncAttributes fa;
    CHECK(cudaFuncGetAttributes(&fa, child));
    std::printf("cudaFuncGetAttributes(child): maxThreadsPerBlock %d\n", fa.maxThreadsPerBlock);
    CHECK(cudaFree(d));
    std::printf("done\n");
    return 0;
}
