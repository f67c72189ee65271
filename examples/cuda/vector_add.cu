// vector_add: c = a + b on the GPU, checked element by element on the CPU.
#include <vector>
#include "common.h"

__global__ void add(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

int main()
{
    int ndev = 0;
    CHECK(cudaGetDeviceCount(&ndev));
    const int n = 1 << 20;
    std::vector<float> a(n), b(n), c(n);
    for (int i = 0; i < n; i++) {
        a[i] = 0.5f * i;
        b[i] = 2.0f * (n - i);
    }
    float *da, *db, *dc;
    CHECK(cudaMalloc(&da, n * sizeof(float)));
    CHECK(cudaMalloc(&db, n * sizeof(float)));
    CHECK(cudaMalloc(&dc, n * sizeof(float)));
    CHECK(cudaMemcpy(da, a.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(db, b.data(), n * sizeof(float), cudaMemcpyDefault)); // direction from the pointers
    add<<<(n + 255) / 256, 256>>>(da, db, dc, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(c.data(), dc, n * sizeof(float), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; i++)
        if (c[i] != a[i] + b[i]) bad++;
    // a launch with an impossible configuration fails at once, through cudaGetLastError
    add<<<1, 4096>>>(da, db, dc, n);
    cudaError_t e = cudaGetLastError();
    std::printf("bad launch: %s; then: %s\n", cudaGetErrorName(e), cudaGetErrorName(cudaGetLastError()));
    CHECK(cudaFree(da));
    CHECK(cudaFree(db));
    CHECK(cudaFree(dc));
    std::printf("vector_add: n=%d, mismatches=%d, c[12345]=%.1f\n", n, bad, c[12345]);
    std::printf("%s\n", bad ? "FAILED" : "PASSED");
    return bad ? 1 : 0;
}
