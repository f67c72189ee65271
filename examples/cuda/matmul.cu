// matmul: tiled C = A x B in shared memory, checked against the CPU.
#include <cmath>
#include <vector>
#include "common.h"

#define TILE 16

__global__ void matmul(const float *A, const float *B, float *C, int n)
{
    __shared__ float as[TILE][TILE], bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < (n + TILE - 1) / TILE; t++) {
        int ac = t * TILE + threadIdx.x, br = t * TILE + threadIdx.y;
        as[threadIdx.y][threadIdx.x] = row < n && ac < n ? A[row * n + ac] : 0.0f;
        bs[threadIdx.y][threadIdx.x] = br < n && col < n ? B[br * n + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; k++) acc += as[threadIdx.y][k] * bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < n && col < n) C[row * n + col] = acc;
}

int main()
{
    const int n = 300; // not a multiple of the tile
    std::vector<float> A(n * n), B(n * n), C(n * n), R(n * n);
    for (int i = 0; i < n * n; i++) {
        A[i] = (float)((i * 7) % 13) - 6.0f;
        B[i] = (float)((i * 5) % 11) - 5.0f;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int k = 0; k < n; k++) s += (double)A[i * n + k] * B[k * n + j];
            R[i * n + j] = (float)s;
        }
    float *dA, *dB, *dC;
    size_t bytes = (size_t)n * n * sizeof(float);
    CHECK(cudaMalloc(&dA, bytes));
    CHECK(cudaMalloc(&dB, bytes));
    CHECK(cudaMalloc(&dC, bytes));
    CHECK(cudaMemcpy(dA, A.data(), bytes, cudaMemcpyHostToDevice));
    // B goes up as a 2D copy of rows (pitch == width here)
    CHECK(cudaMemcpy2D(dB, n * sizeof(float), B.data(), n * sizeof(float), n * sizeof(float), n,
                       cudaMemcpyHostToDevice));
    CHECK(cudaMemset(dC, 0, bytes));
    dim3 block(TILE, TILE), grid((n + TILE - 1) / TILE, (n + TILE - 1) / TILE);
    // the same kernel through the explicit launch API
    void *args[] = {&dA, &dB, &dC, (void *)&n};
    CHECK(cudaLaunchKernel((const void *)matmul, grid, block, args, 0, 0));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(C.data(), dC, bytes, cudaMemcpyDeviceToHost));
    int bad = 0;
    double maxerr = 0;
    for (int i = 0; i < n * n; i++) {
        double d = std::fabs((double)C[i] - R[i]);
        if (d > maxerr) maxerr = d;
        if (d > 1e-3 * (1 + std::fabs(R[i]))) bad++;
    }
    // occupancy and attributes of the kernel
    int blocks = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, matmul, TILE * TILE, 0));
    cudaFuncAttributes fa;
    CHECK(cudaFuncGetAttributes(&fa, matmul));
    std::printf("matmul: n=%d, mismatches=%d, C[0]=%.1f, C[last]=%.1f, occupancy>0: %s, static smem=%zu\n",
                n, bad, C[0], C[n * n - 1], blocks > 0 ? "yes" : "no", fa.sharedSizeBytes);
    CHECK(cudaFree(dA));
    CHECK(cudaFree(dB));
    CHECK(cudaFree(dC));
    std::printf("%s\n", bad ? "FAILED" : "PASSED");
    return bad ? 1 : 0;
}
