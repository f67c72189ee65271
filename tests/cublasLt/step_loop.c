/* What a PyTorch training step asks of cuBLASLt per linear layer, LOOPS
 * times (tests/cuda/async_rt.sh counts its round trips): PyTorch's
 * gemm_and_bias (aten/src/ATen/cuda/CUDABlas.cpp) makes a matmul
 * descriptor (transposes, a bias epilogue and its bias pointer), three
 * matrix layouts and a preference (its workspace limit) per call, asks the
 * heuristic for one algorithm, runs the matmul with it and destroys the five
 * descriptors (the heuristic's answer to the same question is kept in the
 * guest after the first: specs/cublasLt.yaml `cache: {contents:}`). D = A B + bias is checked against the CPU (small integers:
 * exact), so stdout is the same natively and forwarded only if every queued
 * call ran with the same arguments in the same order.
 * Then layouts are created until the fake refuses one (it keeps at most
 * FAKE_CUBLASLT_MAX_LAYOUTS: a host allocation failure, the one error a
 * queued create can meet) and the next sync cuBLASLt call is made: natively
 * the create returns CUBLAS_STATUS_ALLOC_FAILED, forwarded (queued) the next
 * call does; stderr says which (tests/cuda/async_rt.sh). Over NVIDIA's
 * cuBLASLt (tests/gpu/cublaslt.sh) no create fails, and it says so. */
#include <stdint.h>
#include <stdio.h>

#include <cublasLt.h>
#include <cuda_runtime_api.h>

enum { M = 4, N = 3, K = 5, LOOPS = 40, MANY = 600 };

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
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    default: return "another status";
    }
}

int main(void)
{
    float a[M * K], b[K * N], bias[M], d[M * N], want[M * N];
    for (int i = 0; i < M * K; i++) a[i] = (float)((i * 7) % 11) - 5.0f;
    for (int i = 0; i < K * N; i++) b[i] = (float)((i * 3) % 7) - 3.0f;
    for (int i = 0; i < M; i++) bias[i] = (float)i - 1.0f;
    for (int r = 0; r < M; r++)
        for (int c = 0; c < N; c++) {
            float s = 0;
            for (int k = 0; k < K; k++) s += a[k * M + r] * b[c * K + k];
            want[c * M + r] = s + bias[r];
        }
    float *dA, *dB, *dD, *dBias;
    void *ws;
    if (cudaMalloc((void **)&dA, sizeof a) != cudaSuccess) {
        printf("cudaMalloc: no usable GPU, stopping\n");
        return 2;
    }
    size_t wsize = 1 << 20; /* PyTorch's cuBLASLt workspace: one allocation, reused */
    CK(cudaMalloc((void **)&dB, sizeof b));
    CK(cudaMalloc((void **)&dD, sizeof d));
    CK(cudaMalloc((void **)&dBias, sizeof bias));
    CK(cudaMalloc(&ws, wsize));
    CK(cudaMemcpy(dA, a, sizeof a, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dB, b, sizeof b, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dBias, bias, sizeof bias, cudaMemcpyHostToDevice));
    cudaStream_t stream;
    CK(cudaStreamCreate(&stream));
    cublasLtHandle_t lt;
    CK(cublasLtCreate(&lt));
    float one = 1.0f, zero = 0.0f;
    for (int i = 0; i < LOOPS; i++) {
        cublasLtMatmulDesc_t desc;
        cublasLtMatrixLayout_t la, lb, ld;
        cublasLtMatmulPreference_t pref;
        cublasOperation_t op = CUBLAS_OP_N;
        cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
        const void *bp = dBias;
        uint64_t maxws = wsize;
        CK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
        CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &op, sizeof op));
        CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &op, sizeof op));
        CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
        CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bp, sizeof bp));
        CK(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, M, K, M));
        CK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, K, N, K));
        CK(cublasLtMatrixLayoutCreate(&ld, CUDA_R_32F, M, N, M));
        CK(cublasLtMatmulPreferenceCreate(&pref));
        CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &maxws,
                                                sizeof maxws));
        cublasLtMatmulHeuristicResult_t heur = {0};
        int nheur = 0;
        CK(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, ld, ld, pref, 1, &heur, &nheur));
        if (nheur != 1) {
            printf("the heuristic found %d algorithms\n", nheur);
            return 1;
        }
        CK(cublasLtMatmul(lt, desc, &one, dA, la, dB, lb, &zero, dD, ld, dD, ld, &heur.algo, ws,
                          heur.workspaceSize, stream));
        CK(cublasLtMatmulPreferenceDestroy(pref));
        CK(cublasLtMatrixLayoutDestroy(ld));
        CK(cublasLtMatrixLayoutDestroy(lb));
        CK(cublasLtMatrixLayoutDestroy(la));
        CK(cublasLtMatmulDescDestroy(desc));
    }
    CK(cudaStreamSynchronize(stream));
    CK(cudaMemcpy(d, dD, sizeof d, cudaMemcpyDeviceToHost));
    int ok = 1;
    for (int i = 0; i < M * N; i++) ok &= d[i] == want[i];
    printf("%d x (matmul descriptor created, 4 attributes, 3 layouts and a preference created, heuristic, "
           "matmul, 5 destroyed): D = A B + bias matches the CPU: %s\n", LOOPS, ok ? "yes" : "NO");

    /* layouts until the library runs out of memory for one; then a sync call */
    cublasLtMatrixLayout_t probe;
    uint64_t rows = 0;
    size_t wr = 0;
    CK(cublasLtMatrixLayoutCreate(&probe, CUDA_R_32F, M, N, M));
    static cublasLtMatrixLayout_t many[MANY];
    cublasStatus_t bad = CUBLAS_STATUS_SUCCESS;
    for (int i = 0; i < MANY && bad == CUBLAS_STATUS_SUCCESS; i++)
        bad = cublasLtMatrixLayoutCreate(&many[i], CUDA_R_32F, M, N, M);
    cublasStatus_t next = cublasLtMatrixLayoutGetAttribute(probe, CUBLASLT_MATRIX_LAYOUT_ROWS, &rows, sizeof rows, &wr);
    cublasStatus_t after = cublasLtMatrixLayoutGetAttribute(probe, CUBLASLT_MATRIX_LAYOUT_ROWS, &rows, sizeof rows, &wr);
    if (bad == CUBLAS_STATUS_SUCCESS && next == CUBLAS_STATUS_SUCCESS) { /* a real library: memory did not run out */
        printf("every create succeeded (the library did not run out of memory)\n");
        fprintf(stderr, "reported by: none\n");
        return ok ? 0 : 1;
    }
    printf("the refused create's error: %s\n", name(bad != CUBLAS_STATUS_SUCCESS ? bad : next));
    printf("reported once (the call after: %s), by the create or the next call: %s\n", name(after),
           (bad != CUBLAS_STATUS_SUCCESS) != (next != CUBLAS_STATUS_SUCCESS) ? "yes" : "NO");
    fprintf(stderr, "reported by: %s\n", bad != CUBLAS_STATUS_SUCCESS ? "the call" : "the next call");
    return ok ? 0 : 1;
}
