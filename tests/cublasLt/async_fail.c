/* A queued cuBLASLt matmul that fails on the server (docs/internals.md
 * "Errors of queued calls"), over the fake cuBLASLt of tests/cublasLt: B's
 * layout where A's belongs (sizes that do not fit: INVALID_VALUE). The
 * matmul is queued without a check (its descriptors are made per matmul:
 * nothing to key on), so forwarded the refusal comes with the next cuBLASLt
 * call, natively with the call:
 *  - "value": the refused matmul and the next cuBLASLt call;
 *  - "launch": the same after the program synchronized through the runtime
 *    and read D (unchanged by the refused call both ways);
 *  - "last" (argv[1]): one more and then only the runtime: the program never
 *    learns it forwarded; the server logs the function and status when the
 *    thread's connection ends (tests/cuda/async_fail.sh checks).
 * stdout is the same natively and forwarded; stderr says where each error
 * came. */
#include <stdio.h>
#include <string.h>

#include <cublasLt.h>
#include <cuda_runtime_api.h>

enum { M = 4, N = 3, K = 5 };

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
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    default: return "another status";
    }
}

static const char *where(cublasStatus_t call, cublasStatus_t next)
{
    return call != CUBLAS_STATUS_SUCCESS && next == CUBLAS_STATUS_SUCCESS   ? "the call"
           : call == CUBLAS_STATUS_SUCCESS && next != CUBLAS_STATUS_SUCCESS ? "the next call"
                                                                            : "NOBODY OR TWICE";
}

int main(int argc, char **argv)
{
    int last = argc > 1 && strcmp(argv[1], "last") == 0;
    float a[M * K], b[K * N], d[M * N], got[M * N];
    for (int i = 0; i < M * K; i++) a[i] = (float)((i * 7) % 11) - 5.0f;
    for (int i = 0; i < K * N; i++) b[i] = (float)((i * 3) % 7) - 3.0f;
    for (int i = 0; i < M * N; i++) d[i] = (float)i;
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
    cublasLtMatrixLayout_t lb, ld;
    CK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, K, N, K));
    CK(cublasLtMatrixLayoutCreate(&ld, CUDA_R_32F, M, N, M));
    float one = 1.0f;
    cublasOperation_t op;
    size_t wr = 0;

    /* B's layout where A's belongs: sizes that do not fit, refused */
    cublasStatus_t v = cublasLtMatmul(lt, desc, &one, dA, lb, dB, lb, &one, dD, ld, dD, ld, NULL,
                                      NULL, 0, stream);
    cublasStatus_t vn =
        cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &op, sizeof op, &wr);
    printf("a matmul whose layouts do not fit: %s\n", name(v != CUBLAS_STATUS_SUCCESS ? v : vn));
    fprintf(stderr, "value refused by: %s\n", where(v, vn));

    cublasStatus_t f = cublasLtMatmul(lt, desc, &one, dA, lb, dB, lb, &one, dD, ld, dD, ld, NULL,
                                      NULL, 0, stream);
    cudaError_t sync = cudaStreamSynchronize(stream);
    CK(cudaMemcpy(got, dD, sizeof got, cudaMemcpyDeviceToHost));
    cublasStatus_t next =
        cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &op, sizeof op, &wr);
    printf("the runtime's synchronization after the failed call: %s\n", cudaGetErrorName(sync));
    printf("D after the failed call: %s\n",
           memcmp(got, d, sizeof d) == 0 ? "as before it (nothing ran)" : "WRONG");
    printf("the failed call's error: %s\n", name(f != CUBLAS_STATUS_SUCCESS ? f : next));
    fprintf(stderr, "launch failure reported by: %s\n", where(f, next));
    if (last) { /* no cuBLASLt call after it: natively the call said it */
        cublasStatus_t l = cublasLtMatmul(lt, desc, &one, dA, lb, dB, lb, &one, dD, ld, dD, ld,
                                          NULL, NULL, 0, stream);
        CK(cudaDeviceSynchronize());
        fprintf(stderr, "last call: %d\n", (int)l);
        return 0;
    }
    CK(cublasLtDestroy(lt));
    return 0;
}
