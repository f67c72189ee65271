// examples/cuda/rdc: what its two translation units share.
#pragma once

extern __device__ int scale_by;
__device__ int helper(int x);
__global__ void child(int *out, int base, int n);
