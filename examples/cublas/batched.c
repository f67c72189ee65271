/* cublasSgemmBatched: three 2x2 products in one call. The arrays of matrix
 * pointers live in device memory (cuBLAS reads them there): the program
 * builds them in host memory and copies them with cublasSetVector. */
#include <math.h>

#include "common.h"

enum { B = 3, D = 2 };

int main(void)
{
    cublasHandle_t h;
    CK_FIRST(cublasCreate_v2(&h));
    CK(cublasInit());
    float *dA[B], *dB[B], *dC[B];
    float A[B][D * D], Bm[B][D * D], C[B][D * D];
    for (int b = 0; b < B; b++) {
        for (int i = 0; i < D * D; i++) {
            A[b][i] = (float)(b + 1) * (float)(i + 1);
            Bm[b][i] = (float)(i == 0 || i == 3) + 0.5f * (float)b;
        }
        CK(cublasAlloc(D * D, sizeof(float), (void **)&dA[b]));
        CK(cublasAlloc(D * D, sizeof(float), (void **)&dB[b]));
        CK(cublasAlloc(D * D, sizeof(float), (void **)&dC[b]));
        CK(cublasSetMatrix(D, D, sizeof(float), A[b], D, dA[b], D));
        CK(cublasSetMatrix(D, D, sizeof(float), Bm[b], D, dB[b], D));
    }
    /* the pointer arrays, in device memory */
    float **dAarr, **dBarr, **dCarr;
    CK(cublasAlloc(B, sizeof(float *), (void **)&dAarr));
    CK(cublasAlloc(B, sizeof(float *), (void **)&dBarr));
    CK(cublasAlloc(B, sizeof(float *), (void **)&dCarr));
    CK(cublasSetVector(B, sizeof(float *), dA, 1, dAarr, 1));
    CK(cublasSetVector(B, sizeof(float *), dB, 1, dBarr, 1));
    CK(cublasSetVector(B, sizeof(float *), dC, 1, dCarr, 1));

    float alpha = 1.0f, beta = 0.0f;
    CK(cublasSgemmBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, D, D, D, &alpha,
                          (const float *const *)dAarr, D, (const float *const *)dBarr, D, &beta,
                          dCarr, D, B));
    int ok = 1;
    for (int b = 0; b < B; b++) {
        CK(cublasGetMatrix(D, D, sizeof(float), dC[b], D, C[b], D));
        char name[32];
        snprintf(name, sizeof name, "C[%d]", b);
        print_matrix(name, C[b], D, D);
        for (int r = 0; r < D; r++)
            for (int c = 0; c < D; c++) {
                float s = 0;
                for (int k = 0; k < D; k++) s += A[b][k * D + r] * Bm[b][c * D + k];
                ok &= fabsf(s - C[b][c * D + r]) < 1e-4f;
            }
    }
    printf("batched GEMM matches the CPU reference: %s\n", ok ? "yes" : "NO");
    for (int b = 0; b < B; b++) {
        CK(cublasFree(dA[b]));
        CK(cublasFree(dB[b]));
        CK(cublasFree(dC[b]));
    }
    CK(cublasFree(dAarr));
    CK(cublasFree(dBarr));
    CK(cublasFree(dCarr));
    CK(cublasDestroy_v2(h));
    CK(cublasShutdown());
    return ok ? 0 : 1;
}
