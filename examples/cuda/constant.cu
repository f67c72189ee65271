// constant: __constant__ coefficients and a __device__ counter reached
// through cudaMemcpyToSymbol / FromSymbol / GetSymbolAddress / GetSymbolSize.
#include <cmath>
#include "common.h"

__constant__ float coef[4];
__device__ int calls;

__global__ void poly(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = ((coef[3] * v + coef[2]) * v + coef[1]) * v + coef[0];
        atomicAdd(&calls, 1);
    }
}

int main()
{
    const int n = 1000;
    float hx[n], hy[n];
    for (int i = 0; i < n; i++) hx[i] = (float)i / n;
    const float c[4] = {1.0f, -2.0f, 0.5f, 3.0f};
    CHECK(cudaMemcpyToSymbol(coef, c, sizeof c));
    int zero = 0;
    CHECK(cudaMemcpyToSymbol(calls, &zero, sizeof zero, 0, cudaMemcpyHostToDevice));
    float *dx, *dy;
    CHECK(cudaMalloc(&dx, sizeof hx));
    CHECK(cudaMalloc(&dy, sizeof hy));
    CHECK(cudaMemcpy(dx, hx, sizeof hx, cudaMemcpyHostToDevice));
    poly<<<(n + 127) / 128, 128>>>(dx, dy, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(hy, dy, sizeof hy, cudaMemcpyDeviceToHost));
    int ncalls = 0;
    CHECK(cudaMemcpyFromSymbol(&ncalls, calls, sizeof ncalls));
    float back[4];
    CHECK(cudaMemcpyFromSymbol(back, coef, sizeof back, 0, cudaMemcpyDefault));
    void *addr = nullptr;
    size_t size = 0;
    CHECK(cudaGetSymbolAddress(&addr, calls));
    CHECK(cudaGetSymbolSize(&size, coef));
    // the counter again, read through its device address
    int again = 0;
    CHECK(cudaMemcpy(&again, addr, sizeof again, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; i++) {
        // the GPU contracts each step into one FMA: compute the reference
        // the same way, and allow for a last-bit difference anyway
        float v = hx[i], want = std::fmaf(std::fmaf(std::fmaf(c[3], v, c[2]), v, c[1]), v, c[0]);
        if (std::fabs(hy[i] - want) > 1e-6f * (1.0f + std::fabs(want))) bad++;
    }
    std::printf("constant: mismatches=%d, y[500]=%.4f, calls=%d, again=%d, coef back=%.1f %.1f %.1f %.1f, "
                "sizeof(coef)=%zu\n",
                bad, hy[500], ncalls, again, back[0], back[1], back[2], back[3], size);
    CHECK(cudaFree(dx));
    CHECK(cudaFree(dy));
    bad += ncalls != n || again != n;
    std::printf("%s\n", bad ? "FAILED" : "PASSED");
    return bad ? 1 : 0;
}
