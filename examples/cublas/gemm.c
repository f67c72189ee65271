/* SGEMM with alpha and beta in host memory, then in device memory (the
 * handle's pointer mode), with a workspace and a stream set on the handle.
 * Device memory comes from cuBLAS itself (the legacy cublasAlloc), copies
 * go through cublasSetMatrix/GetMatrix: no CUDA runtime call. Prints C and
 * whether it matches a CPU reference. */
#include <math.h>
#include <string.h>

#include "common.h"

enum { M = 3, N = 2, K = 4 };

static void reference(const float *A, const float *B, const float *C0, float alpha, float beta,
                      float *out)
{
    for (int r = 0; r < M; r++)
        for (int c = 0; c < N; c++) {
            float s = 0;
            for (int k = 0; k < K; k++) s += A[k * M + r] * B[c * K + k];
            out[c * M + r] = alpha * s + beta * C0[c * M + r];
        }
}

static int check(const char *what, const float *got, const float *want)
{
    float err = 0;
    for (int i = 0; i < M * N; i++) err = fmaxf(err, fabsf(got[i] - want[i]));
    printf("%s: matches the CPU reference: %s\n", what, err < 1e-4f ? "yes" : "NO");
    return err < 1e-4f;
}

int main(void)
{
    cublasHandle_t h;
    CK_FIRST(cublasCreate_v2(&h));
    CK(cublasInit()); /* the legacy API: cublasAlloc's context */
    int version = 0;
    CK(cublasGetVersion_v2(h, &version));
    printf("cuBLAS version: %s\n", version > 0 ? "known" : "unknown");
    /* the version needs no handle: cublasGetVersion(nullptr, &v) is a common
       idiom (cublas_v2.h maps it to cublasGetVersion_v2) */
    int v0 = -1;
    CK(cublasGetVersion_v2(NULL, &v0));
    printf("without a handle: %s\n", v0 == version ? "the same version" : "ANOTHER VERSION");

    float A[M * K], B[K * N], C0[M * N], C[M * N], want[M * N];
    for (int i = 0; i < M * K; i++) A[i] = (float)(i % 5) - 1.5f;
    for (int i = 0; i < K * N; i++) B[i] = 0.25f * (float)i;
    for (int i = 0; i < M * N; i++) C0[i] = (float)(i + 1);
    float *dA, *dB, *dC, *dScal;
    void *dWork;
    CK(cublasAlloc(M * K, sizeof(float), (void **)&dA));
    CK(cublasAlloc(K * N, sizeof(float), (void **)&dB));
    CK(cublasAlloc(M * N, sizeof(float), (void **)&dC));
    CK(cublasAlloc(2, sizeof(float), (void **)&dScal));
    CK(cublasAlloc(1 << 20, 1, &dWork));
    CK(cublasSetMatrix(M, K, sizeof(float), A, M, dA, M));
    CK(cublasSetMatrix(K, N, sizeof(float), B, K, dB, K));

    /* the per-thread default stream and a workspace on the handle (in this
     * order: cublasSetStream_v2 resets the workspace to cuBLAS's own pool) */
    CK(cublasSetStream_v2(h, cudaStreamPerThread));
    CK(cublasSetWorkspace_v2(h, dWork, 1 << 20));
    cudaStream_t st = NULL;
    CK(cublasGetStream_v2(h, &st));
    printf("stream is cudaStreamPerThread: %s\n", st == cudaStreamPerThread ? "yes" : "no");

    /* 1. host pointer mode (the default): alpha and beta are host floats */
    cublasPointerMode_t pm;
    CK(cublasGetPointerMode_v2(h, &pm));
    printf("pointer mode at start: %s\n", pm == CUBLAS_POINTER_MODE_HOST ? "host" : "device");
    float alpha = 2.0f, beta = 0.5f;
    CK(cublasSetMatrix(M, N, sizeof(float), C0, M, dC, M));
    CK(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, dA, M, dB, K, &beta, dC, M));
    CK(cublasGetMatrix(M, N, sizeof(float), dC, M, C, M));
    print_matrix("C (host pointer mode, alpha 2, beta 0.5)", C, M, N);
    reference(A, B, C0, alpha, beta, want);
    int ok = check("host pointer mode", C, want);

    /* 2. device pointer mode: alpha and beta are read from device memory */
    float scal[2] = {-1.0f, 3.0f};
    CK(cublasSetVector(2, sizeof(float), scal, 1, dScal, 1));
    CK(cublasSetPointerMode_v2(h, CUBLAS_POINTER_MODE_DEVICE));
    CK(cublasGetPointerMode_v2(h, &pm));
    printf("pointer mode now: %s\n", pm == CUBLAS_POINTER_MODE_HOST ? "host" : "device");
    CK(cublasSetMatrix(M, N, sizeof(float), C0, M, dC, M));
    CK(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, dScal, dA, M, dB, K, dScal + 1, dC,
                      M));
    CK(cublasGetMatrix(M, N, sizeof(float), dC, M, C, M));
    print_matrix("C (device pointer mode, alpha -1, beta 3)", C, M, N);
    reference(A, B, C0, scal[0], scal[1], want);
    ok &= check("device pointer mode", C, want);

    /* 3. back to host mode: the next call's alpha is a host float again */
    CK(cublasSetPointerMode_v2(h, CUBLAS_POINTER_MODE_HOST));
    float one = 1.0f, zero = 0.0f;
    CK(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, dA, M, dB, K, &zero, dC, M));
    CK(cublasGetMatrix(M, N, sizeof(float), dC, M, C, M));
    reference(A, B, C0, one, zero, want);
    ok &= check("host pointer mode again", C, want);

    CK(cublasFree(dA));
    CK(cublasFree(dB));
    CK(cublasFree(dC));
    CK(cublasFree(dScal));
    CK(cublasFree(dWork));
    CK(cublasDestroy_v2(h));
    CK(cublasShutdown());
    return ok ? 0 : 1;
}
