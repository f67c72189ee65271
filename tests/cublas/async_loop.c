/* Queued cuBLAS calls (specs/cublas.yaml: api.errors.async next_call):
 * LOOPS iterations of cublasSetStream_v2 + cublasSgemm_v2 on cudaMalloc
 * memory (C += A B each time), then C checked against the CPU; then one
 * GEMM the library refuses (CUBLAS_OP_T: the fake cuBLAS of
 * tests/cublas answers CUBLAS_STATUS_NOT_SUPPORTED) and the next sync
 * cuBLAS call. stdout is the same natively and forwarded: the bad GEMM's
 * error and that it is reported once. Forwarded the GEMM is queued only
 * once cuBLAS accepted its values (async_repeats), so the refused one goes
 * sync and returns its error itself, as natively (tests/cuda/async_fail.sh
 * checks a queued call that fails). stderr says which call returned it,
 * for tests/cuda/async_rt.sh. */
#include <math.h>
#include <stdio.h>

#include <cublas_api.h>
#include <cuda_runtime_api.h>

enum { M = 4, N = 3, K = 5, LOOPS = 50 };

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

#define CK(call)                                                                       \
    do {                                                                               \
        int s_ = (int)(call);                                                          \
        if (s_ != 0) {                                                                 \
            printf("line %d: %s: %d\n", __LINE__, #call, s_);                          \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

int main(void)
{
    cublasHandle_t h;
    cublasStatus_t s0 = cublasCreate_v2(&h);
    if (s0 != CUBLAS_STATUS_SUCCESS) {
        printf("cublasCreate_v2: %s: no usable GPU, stopping\n", name(s0));
        return 2;
    }
    float A[M * K], B[K * N], C[M * N] = {0}, want[M * N];
    for (int i = 0; i < M * K; i++) A[i] = (float)((i * 7) % 11) - 5.0f;
    for (int i = 0; i < K * N; i++) B[i] = (float)((i * 3) % 7) - 3.0f;
    for (int r = 0; r < M; r++)
        for (int c = 0; c < N; c++) {
            float s = 0;
            for (int k = 0; k < K; k++) s += A[k * M + r] * B[c * K + k];
            want[c * M + r] = LOOPS * s; /* small integers: exact in float */
        }
    float *dA, *dB, *dC;
    cudaStream_t stream;
    CK(cudaMalloc((void **)&dA, sizeof A));
    CK(cudaMalloc((void **)&dB, sizeof B));
    CK(cudaMalloc((void **)&dC, sizeof C));
    CK(cudaStreamCreate(&stream));
    CK(cudaMemcpy(dA, A, sizeof A, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dB, B, sizeof B, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dC, C, sizeof C, cudaMemcpyHostToDevice));
    float one = 1.0f;
    /* what a framework does per operation: the stream, then the GEMM */
    for (int i = 0; i < LOOPS; i++) {
        CK(cublasSetStream_v2(h, stream));
        CK(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, dA, M, dB, K, &one, dC, M));
    }
    CK(cudaStreamSynchronize(stream));
    CK(cudaMemcpy(C, dC, sizeof C, cudaMemcpyDeviceToHost));
    int ok = 1;
    for (int i = 0; i < M * N; i++) ok &= C[i] == want[i];
    printf("%d x (cublasSetStream_v2, cublasSgemm_v2): C matches the CPU: %s\n", LOOPS,
           ok ? "yes" : "NO");

    /* a GEMM the library refuses; its error comes back at the call or at the next one */
    cublasStatus_t bad = cublasSgemm_v2(h, CUBLAS_OP_T, CUBLAS_OP_N, M, N, K, &one, dA, K, dB, K,
                                        &one, dC, M);
    /* beside it, a queued runtime call the server refuses (a destroyed event;
     * the fake runtime accepts it natively): each API's error goes to that
     * API's next sync call, neither hides the other (stderr: forwarded only) */
    cudaEvent_t ev;
    CK(cudaEventCreate(&ev));
    CK(cudaEventDestroy(ev));
    cudaError_t rec = cudaEventRecord(ev, stream);
    cudaError_t rt_next = cudaStreamSynchronize(stream);
    fprintf(stderr, "the runtime's error beside the queued cuBLAS one: %s\n",
            cudaGetErrorName(rec != cudaSuccess ? rec : rt_next));
    cudaStream_t got = NULL;
    cublasStatus_t next = cublasGetStream_v2(h, &got);
    cublasStatus_t after = cublasGetStream_v2(h, &got);
    printf("the refused GEMM's error: %s\n", name(bad != CUBLAS_STATUS_SUCCESS ? bad : next));
    printf("reported once (the call after: %s), by the GEMM or the next call: %s\n", name(after),
           bad != CUBLAS_STATUS_SUCCESS && next == CUBLAS_STATUS_SUCCESS   ? "yes"
           : bad == CUBLAS_STATUS_SUCCESS && next != CUBLAS_STATUS_SUCCESS ? "yes"
                                                                           : "NO");
    fprintf(stderr, "reported by: %s\n", bad != CUBLAS_STATUS_SUCCESS ? "the call" : "the next call");
    CK(cublasDestroy_v2(h));
    return ok ? 0 : 1;
}
