/* Queued cuBLASLt calls (specs/cublasLt.yaml: api.errors.async next_call):
 * LOOPS iterations of cublasLtMatmulDescSetAttribute (TRANSA) +
 * cublasLtMatmul on cudaMalloc memory (D = A B + D each time), then D
 * checked against the CPU; then one matmul cuBLASLt refuses (layouts whose
 * sizes do not fit: CUBLAS_STATUS_INVALID_VALUE) and the next sync
 * cuBLASLt call. stdout is the same natively and forwarded: the bad call's
 * error (returned by the call natively, by the next call when it was
 * queued) and that it is reported once. stderr says which call returned
 * it, for tests/cuda/async_rt.sh. */
#include <stdio.h>

#include <cublasLt.h>
#include <cuda_runtime_api.h>

enum { M = 4, N = 3, K = 5, LOOPS = 50 };

#define CK(call)                                                                       \
    do {                                                                               \
        int s_ = (int)(call);                                                          \
        if (s_ != 0) {                                                                 \
            printf("line %d: %s: %d\n", __LINE__, #call, s_);                          \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

static const char *name(cublasStatus_t s)
{
    switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    default: return "another status";
    }
}

int main(void)
{
    float a[M * K], b[K * N], d[M * N] = {0}, want[M * N];
    for (int i = 0; i < M * K; i++) a[i] = (float)((i * 7) % 11) - 5.0f;
    for (int i = 0; i < K * N; i++) b[i] = (float)((i * 3) % 7) - 3.0f;
    for (int r = 0; r < M; r++)
        for (int c = 0; c < N; c++) {
            float s = 0;
            for (int k = 0; k < K; k++) s += a[k * M + r] * b[c * K + k];
            want[c * M + r] = LOOPS * s; /* small integers: exact in float */
        }
    float *dA, *dB, *dD;
    if (cudaMalloc((void **)&dA, sizeof a) != cudaSuccess) {
        printf("cudaMalloc: no usable GPU, stopping\n");
        return 2;
    }
    CK(cudaMalloc((void **)&dB, sizeof b));
    CK(cudaMalloc((void **)&dD, sizeof d));
    CK(cudaMemcpy(dA, a, sizeof a, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dB, b, sizeof b, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dD, d, sizeof d, cudaMemcpyHostToDevice));
    cudaStream_t stream;
    CK(cudaStreamCreate(&stream));
    cublasLtHandle_t lt;
    CK(cublasLtCreate(&lt));
    cublasLtMatmulDesc_t desc;
    CK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasLtMatrixLayout_t la, lb, ld;
    CK(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, M, K, M));
    CK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, K, N, K));
    CK(cublasLtMatrixLayoutCreate(&ld, CUDA_R_32F, M, N, M));
    float one = 1.0f;
    cublasOperation_t op = CUBLAS_OP_N;
    /* what a framework does per operation: an attribute, then the matmul */
    for (int i = 0; i < LOOPS; i++) {
        CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &op, sizeof op));
        CK(cublasLtMatmul(lt, desc, &one, dA, la, dB, lb, &one, dD, ld, dD, ld, NULL, NULL, 0,
                          stream));
    }
    CK(cudaStreamSynchronize(stream));
    CK(cudaMemcpy(d, dD, sizeof d, cudaMemcpyDeviceToHost));
    int ok = 1;
    for (int i = 0; i < M * N; i++) ok &= d[i] == want[i];
    printf("%d x (cublasLtMatmulDescSetAttribute, cublasLtMatmul): D matches the CPU: %s\n", LOOPS,
           ok ? "yes" : "NO");

    /* B's layout where A's belongs: sizes that do not fit, refused */
    cublasStatus_t bad = cublasLtMatmul(lt, desc, &one, dA, lb, dB, lb, &one, dD, ld, dD, ld, NULL,
                                        NULL, 0, stream);
    size_t wr = 0;
    cublasStatus_t next =
        cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &op, sizeof op, &wr);
    cublasStatus_t after =
        cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &op, sizeof op, &wr);
    printf("the refused matmul's error: %s\n", name(bad != CUBLAS_STATUS_SUCCESS ? bad : next));
    printf("reported once (the call after: %s), by the matmul or the next call: %s\n", name(after),
           (bad != CUBLAS_STATUS_SUCCESS) != (next != CUBLAS_STATUS_SUCCESS) ? "yes" : "NO");
    fprintf(stderr, "reported by: %s\n", bad != CUBLAS_STATUS_SUCCESS ? "the call" : "the next call");
    CK(cublasLtMatrixLayoutDestroy(la));
    CK(cublasLtMatrixLayoutDestroy(lb));
    CK(cublasLtMatrixLayoutDestroy(ld));
    CK(cublasLtMatmulDescDestroy(desc));
    CK(cublasLtDestroy(lt));
    return ok ? 0 : 1;
}
