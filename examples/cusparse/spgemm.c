/* Sparse times sparse with cuSPARSE's generic API (SpGEMM): C = alpha A B
 * for two CSR matrices, following NVIDIA's workflow: workEstimation and
 * compute, each asked for its workspace size first (bufferSize1/2 are the
 * size in and the size needed out) and then run with a workspace of that
 * size, cusparseSpMatGetSize for C's nonzeros, cusparseCsrSetPointers with
 * C's arrays, cusparseSpGEMM_copy. Device memory from cudaMalloc. Checks C
 * against a dense product on the CPU. */
#include <math.h>
#include <string.h>

#include <cusparse.h>

#include "common.h"

#define CK(call)                                                                       \
    do {                                                                               \
        cusparseStatus_t s_ = (call);                                                  \
        if (s_ != CUSPARSE_STATUS_SUCCESS) {                                           \
            printf("line %d: %s: %s (%d)\n", __LINE__, #call, cusparseGetErrorName(s_), \
                   (int)s_);                                                           \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

enum { M = 5, K = 4, N = 3, NNZA = 9, NNZB = 6 };

static const int arow[M + 1] = {0, 2, 3, 6, 6, 9};
static const int acol[NNZA] = {0, 2, 1, 0, 2, 3, 1, 2, 3};
static const float aval[NNZA] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
static const int brow[K + 1] = {0, 2, 3, 5, 6};
static const int bcol[NNZB] = {0, 2, 1, 0, 2, 1};
static const float bval[NNZB] = {1, -1, 2, 0.5f, 3, -2};

static void dense(int rows, int cols, const int *rp, const int *ci, const float *v, float *out)
{
    memset(out, 0, sizeof(float) * (size_t)rows * cols);
    for (int r = 0; r < rows; r++)
        for (int k = rp[r]; k < rp[r + 1]; k++) out[r * cols + ci[k]] = v[k];
}

int main(void)
{
    cusparseHandle_t h;
    cusparseStatus_t st = cusparseCreate(&h);
    if (st != CUSPARSE_STATUS_SUCCESS) {
        printf("cusparseCreate: %s: no usable GPU, stopping\n", cusparseGetErrorName(st));
        return 2;
    }
    int *dArow, *dAcol, *dBrow, *dBcol, *dCrow, *dCcol = NULL;
    float *dAval, *dBval, *dCval = NULL;
    CK_FIRST_RT(cudaMalloc((void **)&dArow, sizeof arow));
    CK_RT(cudaMalloc((void **)&dAcol, sizeof acol));
    CK_RT(cudaMalloc((void **)&dAval, sizeof aval));
    CK_RT(cudaMalloc((void **)&dBrow, sizeof brow));
    CK_RT(cudaMalloc((void **)&dBcol, sizeof bcol));
    CK_RT(cudaMalloc((void **)&dBval, sizeof bval));
    CK_RT(cudaMalloc((void **)&dCrow, (M + 1) * sizeof(int)));
    CK_RT(cudaMemcpy(dArow, arow, sizeof arow, cudaMemcpyHostToDevice));
    CK_RT(cudaMemcpy(dAcol, acol, sizeof acol, cudaMemcpyHostToDevice));
    CK_RT(cudaMemcpy(dAval, aval, sizeof aval, cudaMemcpyHostToDevice));
    CK_RT(cudaMemcpy(dBrow, brow, sizeof brow, cudaMemcpyHostToDevice));
    CK_RT(cudaMemcpy(dBcol, bcol, sizeof bcol, cudaMemcpyHostToDevice));
    CK_RT(cudaMemcpy(dBval, bval, sizeof bval, cudaMemcpyHostToDevice));

    cusparseSpMatDescr_t A, B, C;
    CK(cusparseCreateCsr(&A, M, K, NNZA, dArow, dAcol, dAval, CUSPARSE_INDEX_32I,
                         CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    CK(cusparseCreateCsr(&B, K, N, NNZB, dBrow, dBcol, dBval, CUSPARSE_INDEX_32I,
                         CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    CK(cusparseCreateCsr(&C, M, N, 0, dCrow, NULL, NULL, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                         CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    cusparseSpGEMMDescr_t g;
    CK(cusparseSpGEMM_createDescr(&g));
    float alpha = 2.0f, beta = 0.0f;
    const cusparseOperation_t op = CUSPARSE_OPERATION_NON_TRANSPOSE;
    size_t size1 = 0, size2 = 0;
    void *buf1 = NULL, *buf2 = NULL;
    CK(cusparseSpGEMM_workEstimation(h, op, op, &alpha, A, B, &beta, C, CUDA_R_32F,
                                     CUSPARSE_SPGEMM_DEFAULT, g, &size1, NULL));
    CK_RT(cudaMalloc(&buf1, size1 ? size1 : 1));
    CK(cusparseSpGEMM_workEstimation(h, op, op, &alpha, A, B, &beta, C, CUDA_R_32F,
                                     CUSPARSE_SPGEMM_DEFAULT, g, &size1, buf1));
    CK(cusparseSpGEMM_compute(h, op, op, &alpha, A, B, &beta, C, CUDA_R_32F,
                              CUSPARSE_SPGEMM_DEFAULT, g, &size2, NULL));
    CK_RT(cudaMalloc(&buf2, size2 ? size2 : 1));
    CK(cusparseSpGEMM_compute(h, op, op, &alpha, A, B, &beta, C, CUDA_R_32F,
                              CUSPARSE_SPGEMM_DEFAULT, g, &size2, buf2));
    printf("workspace sizes known: yes\n");
    int64_t rows, cols, nnz;
    CK(cusparseSpMatGetSize(C, &rows, &cols, &nnz));
    printf("C: %lld x %lld, %lld nonzeros\n", (long long)rows, (long long)cols, (long long)nnz);
    CK_RT(cudaMalloc((void **)&dCcol, (nnz ? (size_t)nnz : 1) * sizeof(int)));
    CK_RT(cudaMalloc((void **)&dCval, (nnz ? (size_t)nnz : 1) * sizeof(float)));
    CK(cusparseCsrSetPointers(C, dCrow, dCcol, dCval));
    CK(cusparseSpGEMM_copy(h, op, op, &alpha, A, B, &beta, C, CUDA_R_32F,
                           CUSPARSE_SPGEMM_DEFAULT, g));
    CK_RT(cudaDeviceSynchronize());

    int crow[M + 1], ccol[M * N];
    float cval[M * N];
    if (nnz > M * N) {
        printf("C has more nonzeros than fit: NO\n");
        return 1;
    }
    CK_RT(cudaMemcpy(crow, dCrow, sizeof crow, cudaMemcpyDeviceToHost));
    CK_RT(cudaMemcpy(ccol, dCcol, (size_t)nnz * sizeof(int), cudaMemcpyDeviceToHost));
    CK_RT(cudaMemcpy(cval, dCval, (size_t)nnz * sizeof(float), cudaMemcpyDeviceToHost));
    float Ad[M * K], Bd[K * N], Cd[M * N], want[M * N];
    dense(M, K, arow, acol, aval, Ad);
    dense(K, N, brow, bcol, bval, Bd);
    dense(M, N, crow, ccol, cval, Cd);
    float err = 0;
    printf("C =\n");
    for (int r = 0; r < M; r++) {
        for (int c = 0; c < N; c++) {
            float s = 0;
            for (int k = 0; k < K; k++) s += Ad[r * K + k] * Bd[k * N + c];
            want[r * N + c] = alpha * s;
            err = fmaxf(err, fabsf(Cd[r * N + c] - want[r * N + c]));
            printf(" %8.3f", Cd[r * N + c]);
        }
        printf("\n");
    }
    printf("C = alpha A B on the CPU: %s\n", err < 1e-4f ? "yes" : "NO");

    CK(cusparseSpGEMM_destroyDescr(g));
    CK(cusparseDestroySpMat(A));
    CK(cusparseDestroySpMat(B));
    CK(cusparseDestroySpMat(C));
    CK(cusparseDestroy(h));
    cudaFree(buf1), cudaFree(buf2);
    cudaFree(dArow), cudaFree(dAcol), cudaFree(dAval), cudaFree(dBrow), cudaFree(dBcol);
    cudaFree(dBval), cudaFree(dCrow), cudaFree(dCcol), cudaFree(dCval);
    return err < 1e-4f ? 0 : 1;
}
