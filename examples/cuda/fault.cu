// fault: a kernel writes through a bad device address. CUDA reports
// cudaErrorIllegalAddress, and the error is sticky: every later call of this
// process fails with it. Forwarded, the same must hold for this client, and
// for this client only (the server runs each session in a process of its
// own; tests/gpu/run-all.sh runs other examples after this one).
#include "common.h"

__global__ void poke(int *p)
{
    p[threadIdx.x] = 1;
}

int main()
{
    int *d;
    CHECK(cudaMalloc(&d, sizeof(int)));
    poke<<<1, 1>>>(reinterpret_cast<int *>(static_cast<size_t>(16)));
    CHECK(cudaGetLastError());
    cudaError_t e = cudaDeviceSynchronize();
    std::printf("fault: cudaDeviceSynchronize: %s\n", cudaGetErrorName(e));
    e = cudaMalloc(&d, sizeof(int));
    std::printf("fault: a later cudaMalloc: %s\n", cudaGetErrorName(e));
    int ok = e != cudaSuccess;
    std::printf("%s\n", ok ? "PASSED (the fault is sticky)" : "FAILED");
    return ok ? 0 : 1;
}
