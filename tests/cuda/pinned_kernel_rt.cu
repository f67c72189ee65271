// A kernel given the host address of pinned memory (cudaMallocHost,
// cudaHostAlloc mapped), as code written for unified addressing passes it
// (Thrust's pinned vectors, zero-copy kernels without
// cudaHostGetDevicePointer): natively the device reaches pinned memory at
// its host address. Forwarded over unix:// and shm:// the guest's arena is
// mapped at one address in both processes (runtime/arena_guest.c), so the
// stand-in device (tests/cuda/fake_kernels.c: k1 on the server's CPU)
// writes the guest's bytes; tests/cuda/trips_ci.sh compares the output
// with native. Over tcp:// the device cannot reach the memory (no test).
#include <cuda_runtime.h>

#include <stdio.h>

__global__ void k1(int *p)
{
    if (threadIdx.x == 0)
        p[0] += 1;
}

static void show(const char *what, cudaError_t e, const int *p, int want)
{
    printf("%s: %s, value %d (%s)\n", what, cudaGetErrorName(e), e == cudaSuccess ? *p : -1,
           e == cudaSuccess && *p == want ? "right" : "WRONG");
}

int main()
{
    int *h = nullptr, *m = nullptr;
    cudaError_t e = cudaMallocHost(&h, 1 << 16);
    if (e == cudaSuccess) {
        h[0] = 41;
        h[1000] = 7;
        k1<<<1, 32>>>(h);
        e = cudaDeviceSynchronize();
        show("cudaMallocHost block", e, h, 42);
        k1<<<3, 32>>>(h + 1000); // inside the block: each block adds one
        e = cudaDeviceSynchronize();
        show("inside it", e, h + 1000, 10);
    } else {
        printf("cudaMallocHost: %s\n", cudaGetErrorName(e));
    }
    e = cudaHostAlloc(&m, 4096, cudaHostAllocMapped);
    if (e == cudaSuccess) {
        m[5] = 1;
        k1<<<2, 32>>>(m + 5);
        e = cudaDeviceSynchronize();
        show("cudaHostAlloc(mapped) block, by host address", e, m + 5, 3);
        int *d = nullptr;
        e = cudaHostGetDevicePointer(&d, m, 0);
        printf("cudaHostGetDevicePointer: %s, %s\n", cudaGetErrorName(e),
               e == cudaSuccess && d == m ? "the host address" : "another address");
    } else {
        printf("cudaHostAlloc: %s\n", cudaGetErrorName(e));
    }
    printf("cudaFreeHost: %s %s\n", cudaGetErrorName(cudaFreeHost(h)), cudaGetErrorName(cudaFreeHost(m)));
    return 0;
}
