/* family_foreign: device memory of another client is refused in cuBLAS calls
 * also when the runtime's memory is the session's (tests/cublas/family.sh).
 *   family_foreign hold         cudaMalloc 64 bytes, print the address, wait
 *                               for stdin to close, free it
 *   family_foreign use ADDRESS  cuBLAS calls on ADDRESS (the other process's
 *                               allocation) and on its own cudaMalloc memory:
 *                               prints each status */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_api.h>
#include <cuda_runtime_api.h>

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "hold") == 0) {
        void *p = NULL;
        cudaError_t e = cudaMalloc(&p, 64);
        if (e != cudaSuccess) {
            printf("cudaMalloc: %s\n", cudaGetErrorName(e));
            return 1;
        }
        printf("%llx\n", (unsigned long long)(uintptr_t)p);
        fflush(stdout);
        while (getchar() != EOF) {
        }
        return cudaFree(p) == cudaSuccess ? 0 : 1;
    }
    if (argc != 3 || strcmp(argv[1], "use") != 0) {
        fprintf(stderr, "usage: family_foreign hold | use ADDRESS\n");
        return 2;
    }
    float *foreign = (float *)(uintptr_t)strtoull(argv[2], NULL, 16), *own = NULL;
    float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, a = 2.0f, zero = 0.0f;
    cublasHandle_t h;
    cublasStatus_t s = cublasCreate_v2(&h);
    cudaError_t e = cudaMalloc((void **)&own, sizeof x);
    if (s != CUBLAS_STATUS_SUCCESS || e != cudaSuccess) {
        printf("setup: %s, %s\n", cublasGetStatusName(s), cudaGetErrorName(e));
        return 1;
    }
    /* C (2x2, own + 4) = a A (2x1, own) B (1x2, own + 2 or the foreign address) */
    printf("own memory: cublasSetVector: %s\n",
           cublasGetStatusName(cublasSetVector(8, sizeof(float), x, 1, own, 1)));
    printf("own memory: cublasSgemm_v2: %s\n",
           cublasGetStatusName(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 1, &a, own, 2,
                                              own + 2, 1, &zero, own + 4, 2)));
    printf("another client's memory: cublasSetVector: %s\n",
           cublasGetStatusName(cublasSetVector(4, sizeof(float), x, 1, foreign, 1)));
    printf("another client's memory: cublasSgemm_v2: %s\n",
           cublasGetStatusName(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 1, &a, own, 2,
                                              foreign, 1, &zero, own + 4, 2)));
    cublasDestroy_v2(h);
    cudaFree(own);
    return 0;
}
