/* SGEMM the way most programs call cuBLAS: device memory from cudaMalloc,
 * copies with cudaMemcpy, the GEMM on a stream of cudaStreamCreate, alpha
 * and beta in host memory and then in device memory. Forwarded, the
 * runtime's and cuBLAS's stubs share one session of apigen-server-cuda-family
 * (api.family: cuda): the cudaMalloc pointers and the stream are cuBLAS's
 * too. It prints C, whether cuBLAS gives back the program's stream, and
 * whether C matches the CPU; natively and forwarded alike. */
#include <math.h>

#include <cuda_runtime_api.h>

#include "common.h"

enum { M = 4, N = 3, K = 5 };

#define CKRT(call)                                                                     \
    do {                                                                               \
        cudaError_t e_ = (call);                                                       \
        if (e_ != cudaSuccess) {                                                       \
            printf("line %d: %s: %s\n", __LINE__, #call, cudaGetErrorName(e_));        \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

int main(void)
{
    cublasHandle_t h;
    CK_FIRST(cublasCreate_v2(&h));
    float A[M * K], B[K * N], C[M * N], want[M * N], scal[2] = {0.5f, 0.0f};
    for (int i = 0; i < M * K; i++) A[i] = (float)((i * 7) % 11) - 5.0f;
    for (int i = 0; i < K * N; i++) B[i] = (float)((i * 3) % 7) * 0.5f;
    for (int r = 0; r < M; r++)
        for (int c = 0; c < N; c++) {
            float s = 0;
            for (int k = 0; k < K; k++) s += A[k * M + r] * B[c * K + k];
            want[c * M + r] = s;
        }
    float *dA, *dB, *dC, *dScal;
    cudaStream_t stream;
    CKRT(cudaMalloc((void **)&dA, sizeof A));
    CKRT(cudaMalloc((void **)&dB, sizeof B));
    CKRT(cudaMalloc((void **)&dC, sizeof C));
    CKRT(cudaMalloc((void **)&dScal, sizeof scal));
    CKRT(cudaStreamCreate(&stream));
    CKRT(cudaMemcpy(dA, A, sizeof A, cudaMemcpyHostToDevice));
    CKRT(cudaMemcpy(dB, B, sizeof B, cudaMemcpyHostToDevice));
    CKRT(cudaMemcpy(dScal, scal, sizeof scal, cudaMemcpyHostToDevice));
    CK(cublasSetStream_v2(h, stream));
    cudaStream_t got = NULL;
    CK(cublasGetStream_v2(h, &got));
    printf("cublasGetStream_v2 gives back the program's stream: %s\n", got == stream ? "yes" : "NO");

    float one = 1.0f, zero = 0.0f;
    CK(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, dA, M, dB, K, &zero, dC, M));
    CKRT(cudaStreamSynchronize(stream));
    CKRT(cudaMemcpy(C, dC, sizeof C, cudaMemcpyDeviceToHost));
    print_matrix("C = A B (host pointer mode)", C, M, N);
    int ok = 1;
    for (int i = 0; i < M * N; i++) ok &= fabsf(C[i] - want[i]) < 1e-3f;

    CK(cublasSetPointerMode_v2(h, CUBLAS_POINTER_MODE_DEVICE));
    CK(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, dScal, dA, M, dB, K, dScal + 1, dC,
                      M));
    CKRT(cudaStreamSynchronize(stream));
    CKRT(cudaMemcpy(C, dC, sizeof C, cudaMemcpyDeviceToHost));
    print_matrix("C = 0.5 A B (device pointer mode)", C, M, N);
    for (int i = 0; i < M * N; i++) ok &= fabsf(C[i] - 0.5f * want[i]) < 1e-3f;
    printf("matches the CPU reference: %s\n", ok ? "yes" : "NO");

    CK(cublasDestroy_v2(h));
    CKRT(cudaStreamDestroy(stream));
    CKRT(cudaFree(dA));
    CKRT(cudaFree(dB));
    CKRT(cudaFree(dC));
    CKRT(cudaFree(dScal));
    return ok && got == stream ? 0 : 1;
}
