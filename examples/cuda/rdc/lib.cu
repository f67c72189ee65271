// The device library half of examples/cuda/rdc (separate compilation): a
// __device__ function, a __device__ variable and a kernel that main.cu
// reaches only through the device linker (nvcc -rdc=true, nvlink).
#include "rdc.h"

__device__ int scale_by = 3;

__device__ int helper(int x)
{
    return x * scale_by + 1;
}

__global__ void child(int *out, int base, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[base + i] = helper(base + i) + 1000;
}
