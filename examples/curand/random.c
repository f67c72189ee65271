/* cuRAND with a fixed seed: (1) a host generator (curandCreateGeneratorHost,
 * output in host memory), (2) a device generator writing cudaMalloc memory
 * on the program's stream, copied back. Prints the first values and checks
 * statistics of each distribution (mean, deviation, range); a line with NO
 * is a mismatch (exit 1). Exit 2: no usable GPU for the device part (the
 * host part ran and printed first). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>
#include <curand.h>

#define NUM 4096

#define CKR(call)                                                                        \
    do {                                                                                 \
        curandStatus_t s_ = (call);                                                      \
        if (s_ != CURAND_STATUS_SUCCESS) {                                               \
            printf("line %d: %s: curandStatus %d\n", __LINE__, #call, (int)s_);          \
            return 1;                                                                    \
        }                                                                                \
    } while (0)
#define CKC(call)                                                                        \
    do {                                                                                 \
        cudaError_t e_ = (call);                                                         \
        if (e_ != cudaSuccess) {                                                         \
            printf("line %d: %s: %s\n", __LINE__, #call, cudaGetErrorName(e_));          \
            return 1;                                                                    \
        }                                                                                \
    } while (0)

static int ok = 1;

static void stat(const char *what, const float *v, size_t n, double want_mean, double want_sd,
                 double lo, double hi)
{
    double s = 0, ss = 0;
    int in = 1;
    for (size_t i = 0; i < n; i++) {
        s += v[i];
        ss += (double)v[i] * v[i];
        in &= v[i] >= lo && v[i] <= hi;
    }
    double mean = s / n, sd = sqrt(ss / n - mean * mean);
    /* 6 standard errors: a fixed seed makes the values fixed, the bound says the
     * distribution is the one asked for */
    int good = in && fabs(mean - want_mean) < 6 * want_sd / sqrt((double)n) &&
               fabs(sd - want_sd) < 0.1 * want_sd;
    printf("%s: first %.6f %.6f %.6f, mean %.4f sd %.4f (want %.4f, %.4f), in range: %s\n", what,
           v[0], v[1], v[2], mean, sd, want_mean, want_sd, good ? "OK" : "NO");
    ok &= good;
}

static int host_part(void)
{
    curandGenerator_t g;
    static float f[NUM];
    static unsigned int u[NUM], p[NUM];
    CKR(curandCreateGeneratorHost(&g, CURAND_RNG_PSEUDO_DEFAULT));
    CKR(curandSetPseudoRandomGeneratorSeed(g, 1234ULL));
    CKR(curandGenerateUniform(g, f, NUM));
    stat("host uniform", f, NUM, 0.5, sqrt(1.0 / 12), 0, 1);
    CKR(curandGenerateNormal(g, f, NUM, 2.0f, 0.5f));
    stat("host normal(2, 0.5)", f, NUM, 2.0, 0.5, -10, 10);
    CKR(curandGenerate(g, u, 4));
    printf("host 32-bit: %u %u %u %u\n", u[0], u[1], u[2], u[3]);
    CKR(curandGeneratePoisson(g, p, NUM, 4.0));
    for (int i = 0; i < NUM; i++) f[i] = (float)p[i];
    stat("host poisson(4)", f, NUM, 4.0, 2.0, 0, 100);
    /* a new offset restarts the sequence where asked */
    CKR(curandSetPseudoRandomGeneratorSeed(g, 1234ULL));
    CKR(curandSetGeneratorOffset(g, 0));
    CKR(curandGenerateUniform(g, f, 2));
    printf("host uniform again from seed 1234, offset 0: %.6f %.6f\n", f[0], f[1]);
    CKR(curandDestroyGenerator(g));
    /* quasirandom, host: Sobol32 in 2 dimensions */
    CKR(curandCreateGeneratorHost(&g, CURAND_RNG_QUASI_SOBOL32));
    CKR(curandSetQuasiRandomGeneratorDimensions(g, 2));
    CKR(curandGenerateUniform(g, f, 8));
    printf("host sobol32 (2 dimensions): %.4f %.4f %.4f %.4f\n", f[0], f[1], f[2], f[3]);
    CKR(curandDestroyGenerator(g));
    curandDirectionVectors32_t *dv;
    unsigned int *sc;
    CKR(curandGetDirectionVectors32(&dv, CURAND_DIRECTION_VECTORS_32_JOEKUO6));
    CKR(curandGetScrambleConstants32(&sc));
    printf("direction vectors: dim 0 [0] %u, dim 19999 [31] %u; scramble constant 19999 %u\n",
           dv[0][0], dv[19999][31], sc[19999]);
    return 0;
}

int main(void)
{
    int version = 0, major = 0;
    CKR(curandGetVersion(&version));
    CKR(curandGetProperty(MAJOR_VERSION, &major));
    printf("cuRAND version %d (major %d)\n", version, major);
    if (host_part()) return 1;

    float *d = NULL;
    cudaError_t e = cudaMalloc((void **)&d, NUM * sizeof(float));
    if (e != cudaSuccess) {
        printf("cudaMalloc: %s: no usable GPU, stopping\n", cudaGetErrorName(e));
        return 2;
    }
    cudaStream_t stream;
    CKC(cudaStreamCreate(&stream));
    curandGenerator_t g;
    CKR(curandCreateGenerator(&g, CURAND_RNG_PSEUDO_PHILOX4_32_10));
    CKR(curandSetStream(g, stream));
    CKR(curandSetPseudoRandomGeneratorSeed(g, 42ULL));
    CKR(curandSetGeneratorOrdering(g, CURAND_ORDERING_PSEUDO_DEFAULT));
    static float f[NUM];
    CKR(curandGenerateUniform(g, d, NUM));
    CKC(cudaStreamSynchronize(stream));
    CKC(cudaMemcpy(f, d, sizeof f, cudaMemcpyDeviceToHost));
    stat("device uniform", f, NUM, 0.5, sqrt(1.0 / 12), 0, 1);
    CKR(curandGenerateNormal(g, d, NUM, -1.0f, 3.0f));
    CKC(cudaStreamSynchronize(stream));
    CKC(cudaMemcpy(f, d, sizeof f, cudaMemcpyDeviceToHost));
    stat("device normal(-1, 3)", f, NUM, -1.0, 3.0, -40, 40);
    CKR(curandGenerateLogNormal(g, d, NUM, 0.0f, 0.25f));
    CKC(cudaStreamSynchronize(stream));
    CKC(cudaMemcpy(f, d, sizeof f, cudaMemcpyDeviceToHost));
    double m = exp(0.25 * 0.25 / 2), sd = sqrt((exp(0.0625) - 1) * exp(0.0625));
    stat("device lognormal(0, 0.25)", f, NUM, m, sd, 0, 100);
    CKR(curandDestroyGenerator(g));
    curandDiscreteDistribution_t dist;
    CKR(curandCreatePoissonDistribution(3.0, &dist));
    printf("poisson distribution created: %s\n", dist ? "yes" : "NO");
    ok &= dist != NULL;
    CKR(curandDestroyDistribution(dist));
    CKC(cudaFree(d));
    CKC(cudaStreamDestroy(stream));
    printf("every result matched: %s\n", ok ? "yes" : "NO");
    return ok ? 0 : 1;
}
