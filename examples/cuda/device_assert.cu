// device_assert: a kernel's failed assert. Natively the driver writes the
// message ("file:line: kernel: block: [..], thread: [..] Assertion `...`
// failed.") to the program's stderr at the synchronization, which returns
// cudaErrorAssert (sticky: the context is unusable after it). Forwarded, the
// session process's stderr reaches the program's (runtime/output.c). stdout
// says what the calls returned; tests/gpu/run-all.sh and driver.sh also
// check that stderr holds the assertion line.
#include <cassert>
#include "common.h"

__global__ void check_positive(const int *v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) assert(v[i] > 0);
}

int main()
{
    const int n = 64;
    int h[n], *d = nullptr;
    for (int i = 0; i < n; i++) h[i] = i == 37 ? -1 : i + 1; // one bad value
    CHECK(cudaMalloc(&d, sizeof h));
    CHECK(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
    std::printf("before the kernel\n");
    std::fflush(stdout);
    check_positive<<<1, n>>>(d, n);
    cudaError_t launch = cudaGetLastError();
    cudaError_t sync = cudaDeviceSynchronize();
    std::printf("launch: %s\nsynchronize: %s\n", cudaGetErrorName(launch), cudaGetErrorName(sync));
    std::printf("after: %s\n", cudaGetErrorName(cudaGetLastError()));
    return sync == cudaErrorAssert ? 0 : 1;
}
