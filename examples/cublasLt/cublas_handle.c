/* A cuBLAS handle used as cuBLASLt's light handle, as PyTorch does (its
 * getCurrentCUDABlasLtHandle is the cuBLAS handle): cuBLASLt accepts one.
 * D = A * B (4x3 by 3x2, float) with the heuristic's first algorithm, on the
 * handle's stream; prints D and whether it matches the CPU's product. */
#include <cublas_v2.h>
#include <math.h>

#include "common.h"

#define M 4
#define K 3
#define N 2

int main(void)
{
    float a[M * K], b[K * N], d[M * N];
    for (int i = 0; i < M * K; i++) a[i] = (float)(i % 5) - 1.0f;
    for (int i = 0; i < K * N; i++) b[i] = 0.5f * (float)i - 1.0f;
    float *dA, *dB, *dD;
    CUDA_OR_NOGPU(cudaMalloc((void **)&dA, sizeof a));
    CUDA_CHECK(cudaMalloc((void **)&dB, sizeof b));
    CUDA_CHECK(cudaMalloc((void **)&dD, sizeof d));
    CUDA_CHECK(cudaMemcpy(dA, a, sizeof a, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dB, b, sizeof b, cudaMemcpyHostToDevice));

    cublasHandle_t blas;
    if (cublasCreate(&blas) != CUBLAS_STATUS_SUCCESS) return printf("cublasCreate failed\n"), 1;
    cublasLtHandle_t lt = (cublasLtHandle_t)blas;
    cublasLtMatmulDesc_t desc;
    LT_CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasLtMatrixLayout_t la, lb, ld;
    LT_CHECK(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, M, K, M));
    LT_CHECK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, K, N, K));
    LT_CHECK(cublasLtMatrixLayoutCreate(&ld, CUDA_R_32F, M, N, M));
    cublasLtMatmulPreference_t pref;
    LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    cublasLtMatmulHeuristicResult_t h;
    int found = 0;
    LT_CHECK(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, ld, ld, pref, 1, &h, &found));
    printf("heuristic through the cuBLAS handle: %d algorithm(s)\n", found);
    if (found < 1) return 1;
    float alpha = 1.0f, beta = 0.0f;
    LT_CHECK(cublasLtMatmul(lt, desc, &alpha, dA, la, dB, lb, &beta, dD, ld, dD, ld, &h.algo, NULL, 0, 0));
    CUDA_CHECK(cudaMemcpy(d, dD, sizeof d, cudaMemcpyDeviceToHost));
    int ok = 1;
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++) {
            float want = 0;
            for (int l = 0; l < K; l++) want += a[l * M + i] * b[j * K + l];
            printf(" %6.2f", d[j * M + i]);
            ok &= fabsf(want - d[j * M + i]) < 1e-4f;
        }
        printf("\n");
    }
    printf("D = A * B through the cuBLAS handle: %s\n", ok ? "OK" : "WRONG");
    LT_CHECK(cublasLtMatmulPreferenceDestroy(pref));
    LT_CHECK(cublasLtMatrixLayoutDestroy(la));
    LT_CHECK(cublasLtMatrixLayoutDestroy(lb));
    LT_CHECK(cublasLtMatrixLayoutDestroy(ld));
    LT_CHECK(cublasLtMatmulDescDestroy(desc));
    cublasDestroy(blas);
    return ok ? 0 : 1;
}
