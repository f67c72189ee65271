/* A program of the CUDA runtime and the driver at once (both of apigen's
 * stubs forwarded): every call's result, which on a machine without a GPU
 * is the same error natively and forwarded. tests/cuda/onesession.sh runs
 * it and checks that its two stubs used ONE session of one server. */
#include <stdio.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

int main(void)
{
    int n = -1, v = -1;
    void *p = NULL;
    CUdeviceptr d = 0;
    cudaStream_t s = NULL;
    CUstream cs = NULL;
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("cudaGetDeviceCount %d\n", (int)cudaGetDeviceCount(&n));
    printf("cuInit %d\n", (int)cuInit(0));
    printf("cuDeviceGetCount %d\n", (int)cuDeviceGetCount(&n));
    printf("cudaMalloc %d\n", (int)cudaMalloc(&p, 1024));
    printf("cuMemAlloc %d\n", (int)cuMemAlloc(&d, 1024));
    printf("cudaStreamCreate %d\n", (int)cudaStreamCreate(&s));
    printf("cuStreamCreate %d\n", (int)cuStreamCreate(&cs, 0));
    printf("cuDriverGetVersion %d\n", (int)cuDriverGetVersion(&v));
    int rc = (int)cudaRuntimeGetVersion(&v);
    printf("cudaRuntimeGetVersion %d %d\n", rc, v);
    printf("cudaGetLastError %d\n", (int)cudaGetLastError());
    return 0;
}
