// A Poisson distribution of cuRAND's host API used by the device API: the
// distribution curandCreatePoissonDistribution returns is device memory that
// a kernel reads (curand_discrete), so its address must be the device's, as
// the stub hands it out. 65,536 draws of Poisson(5) with a fixed seed:
// prints the first values, the mean and the variance, and checks them
// (a line with NO is a mismatch, exit 1; exit 2: no usable GPU).
#include <cmath>
#include <cstdio>

#include <cuda_runtime_api.h>
#include <curand.h>
#include <curand_kernel.h>

#define N (1 << 16)
#define LAMBDA 5.0

__global__ void draw(unsigned long long seed, curandDiscreteDistribution_t dist, unsigned *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    curandStatePhilox4_32_10_t st;
    curand_init(seed, i, 0, &st);
    out[i] = curand_discrete(&st, dist);
}

int main()
{
    unsigned *d = nullptr;
    cudaError_t e = cudaMalloc((void **)&d, N * sizeof *d);
    if (e != cudaSuccess) {
        printf("cudaMalloc: %s: no usable GPU, stopping\n", cudaGetErrorName(e));
        return 2;
    }
    curandDiscreteDistribution_t dist;
    curandStatus_t s = curandCreatePoissonDistribution(LAMBDA, &dist);
    if (s != CURAND_STATUS_SUCCESS) {
        printf("curandCreatePoissonDistribution: curandStatus %d\n", (int)s);
        return 1;
    }
    draw<<<N / 256, 256>>>(1234ULL, dist, d, N);
    e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        printf("the kernel: %s\n", cudaGetErrorName(e));
        return 1;
    }
    static unsigned h[N];
    if (cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost) != cudaSuccess) return 1;
    double sum = 0, ss = 0;
    for (int i = 0; i < N; i++) sum += h[i], ss += (double)h[i] * h[i];
    double mean = sum / N, var = ss / N - mean * mean;
    bool ok = std::fabs(mean - LAMBDA) < 6 * std::sqrt(LAMBDA / N) && std::fabs(var - LAMBDA) < 0.1 * LAMBDA;
    printf("poisson(%.1f) in a kernel: first %u %u %u %u %u %u %u %u\n", LAMBDA, h[0], h[1], h[2], h[3],
           h[4], h[5], h[6], h[7]);
    printf("mean %.4f variance %.4f (want %.1f): %s\n", mean, var, LAMBDA, ok ? "OK" : "NO");
    s = curandDestroyDistribution(dist);
    printf("distribution destroyed: %s\n", s == CURAND_STATUS_SUCCESS ? "OK" : "NO");
    cudaFree(d);
    return ok && s == CURAND_STATUS_SUCCESS ? 0 : 1;
}
