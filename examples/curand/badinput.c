/* Bad input to cuRAND: a forged generator, a destroyed one, a device
 * generator given memory the client never allocated or a buffer shorter
 * than num, a forged distribution. Each gives cuRAND's own error value
 * (the stub's refusals: CURAND_STATUS_NOT_INITIALIZED for an unknown
 * generator, CURAND_STATUS_OUT_OF_RANGE for memory), never a crash.
 *   badinput hold      allocates, prints the address, holds it until stdin ends
 *   badinput ADDRESS   generates into another client's address (and has no
 *                      memory of its own) (tests/fftrand/foreign.sh) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <curand.h>

static void show(const char *what, const char *fn, curandStatus_t s)
{
    printf("%s: %s: %d\n", what, fn, (int)s);
}

static int hold(void)
{
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, 4096);
    if (e != cudaSuccess) {
        printf("cudaMalloc: %s: no usable GPU, stopping\n", cudaGetErrorName(e));
        return 2;
    }
    printf("%p\n", p);
    fflush(stdout);
    while (getchar() != EOF) {
    }
    cudaFree(p);
    return 0;
}

static int foreign(const char *address)
{
    float *p = (float *)(uintptr_t)strtoull(address, NULL, 16);
    curandGenerator_t g;
    curandStatus_t s = curandCreateGenerator(&g, CURAND_RNG_PSEUDO_DEFAULT);
    if (s != CURAND_STATUS_SUCCESS) {
        printf("curandCreateGenerator: %d\n", (int)s);
        return 1;
    }
    show("another client's memory", "curandGenerateUniform", curandGenerateUniform(g, p, 16));
    curandDestroyGenerator(g);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1) return strcmp(argv[1], "hold") ? foreign(argv[1]) : hold();
    float *d = NULL;
    cudaError_t e = cudaMalloc((void **)&d, 16 * sizeof(float));
    if (e != cudaSuccess) {
        printf("cudaMalloc: %s: no usable GPU, stopping\n", cudaGetErrorName(e));
        return 2;
    }
    curandGenerator_t forged = (curandGenerator_t)(uintptr_t)0x5151;
    show("forged generator", "curandGenerateUniform", curandGenerateUniform(forged, d, 16));
    show("forged generator", "curandSetPseudoRandomGeneratorSeed",
         curandSetPseudoRandomGeneratorSeed(forged, 1));
    show("forged generator", "curandDestroyGenerator", curandDestroyGenerator(forged));
    curandGenerator_t g;
    if (curandCreateGenerator(&g, CURAND_RNG_PSEUDO_DEFAULT) != CURAND_STATUS_SUCCESS) {
        printf("curandCreateGenerator failed: no usable GPU, stopping\n");
        return 2;
    }
    static float host[16];
    show("unallocated memory", "curandGenerateUniform", curandGenerateUniform(g, host, 16));
    show("buffer shorter than num", "curandGenerateUniform", curandGenerateUniform(g, d, 1 << 20));
    show("real generator", "curandGenerateUniform", curandGenerateUniform(g, d, 16));
    show("real generator", "curandDestroyGenerator", curandDestroyGenerator(g));
    show("destroyed generator", "curandGenerateUniform", curandGenerateUniform(g, d, 16));
    show("forged distribution", "curandDestroyDistribution",
         curandDestroyDistribution((curandDiscreteDistribution_t)(uintptr_t)0x7000));
    cudaFree(d);
    printf("every bad input failed cleanly: yes\n");
    return 0;
}
