/* A CSR sparse matrix times a dense vector with cuSPARSE's generic API
 * (cusparseCreateCsr, cusparseCreateDnVec, cusparseSpMV_bufferSize, then
 * cusparseSpMV with a workspace of that size), alpha and beta first in host
 * memory, then in device memory (the handle's pointer mode), on a stream of
 * the CUDA runtime. Device memory comes from cudaMalloc. Checks y against a
 * CPU reference, and that the descriptors hand back the very device
 * addresses they were created with. Last, cusparseAxpby (a sparse vector
 * into y, alpha and beta of the vectors' value type) in both pointer
 * modes. */
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

enum { M = 5, N = 4, NNZ = 9 };

/* A (5x4):
 *  [ 1  0  2  0 ]
 *  [ 0  3  0  0 ]
 *  [ 4  0  5  6 ]
 *  [ 0  0  0  0 ]
 *  [ 0  7  8  9 ] */
static const int rowptr[M + 1] = {0, 2, 3, 6, 6, 9};
static const int colind[NNZ] = {0, 2, 1, 0, 2, 3, 1, 2, 3};
static const float vals[NNZ] = {1, 2, 3, 4, 5, 6, 7, 8, 9};

static void reference(const float *x, const float *y0, float alpha, float beta, float *out)
{
    for (int r = 0; r < M; r++) {
        float s = 0;
        for (int k = rowptr[r]; k < rowptr[r + 1]; k++) s += vals[k] * x[colind[k]];
        out[r] = alpha * s + beta * y0[r];
    }
}

static int check(const char *what, const float *got, const float *want)
{
    float err = 0;
    for (int i = 0; i < M; i++) err = fmaxf(err, fabsf(got[i] - want[i]));
    printf("%s: y =", what);
    for (int i = 0; i < M; i++) printf(" %.3f", got[i]);
    printf("\n%s: matches the CPU reference: %s\n", what, err < 1e-4f ? "yes" : "NO");
    return err < 1e-4f;
}

int main(void)
{
    cusparseHandle_t h;
    cusparseStatus_t st = cusparseCreate(&h);
    if (st != CUSPARSE_STATUS_SUCCESS) {
        printf("cusparseCreate: %s: no usable GPU, stopping\n", cusparseGetErrorName(st));
        return 2;
    }
    int version = 0;
    CK(cusparseGetVersion(h, &version));
    printf("cuSPARSE version: %s\n", version > 0 ? "known" : "unknown");

    int *dRow, *dCol;
    float *dVal, *dX, *dY, *dScal;
    CK_FIRST_RT(cudaMalloc((void **)&dRow, sizeof rowptr));
    CK_RT(cudaMalloc((void **)&dCol, sizeof colind));
    CK_RT(cudaMalloc((void **)&dVal, sizeof vals));
    CK_RT(cudaMalloc((void **)&dX, N * sizeof(float)));
    CK_RT(cudaMalloc((void **)&dY, M * sizeof(float)));
    CK_RT(cudaMalloc((void **)&dScal, 2 * sizeof(float)));
    float x[N] = {1, -2, 0.5f, 3}, y0[M] = {1, 2, 3, 4, 5}, y[M], want[M];
    CK_RT(cudaMemcpy(dRow, rowptr, sizeof rowptr, cudaMemcpyHostToDevice));
    CK_RT(cudaMemcpy(dCol, colind, sizeof colind, cudaMemcpyHostToDevice));
    CK_RT(cudaMemcpy(dVal, vals, sizeof vals, cudaMemcpyHostToDevice));
    CK_RT(cudaMemcpy(dX, x, sizeof x, cudaMemcpyHostToDevice));

    /* the handle works on a stream of the runtime: the same object */
    cudaStream_t stream, got_stream = NULL;
    CK_RT(cudaStreamCreate(&stream));
    CK(cusparseSetStream(h, stream));
    CK(cusparseGetStream(h, &got_stream));
    printf("cusparseGetStream is the runtime's stream: %s\n", got_stream == stream ? "yes" : "NO");

    cusparseSpMatDescr_t A;
    cusparseDnVecDescr_t X, Y;
    CK(cusparseCreateCsr(&A, M, N, NNZ, dRow, dCol, dVal, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                         CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    CK(cusparseCreateDnVec(&X, N, dX, CUDA_R_32F));
    CK(cusparseCreateDnVec(&Y, M, dY, CUDA_R_32F));

    /* the descriptors keep the device addresses they were given */
    int64_t rows, cols, nnz;
    void *pRow, *pCol, *pVal, *pY;
    cusparseIndexType_t it1, it2;
    cusparseIndexBase_t base;
    cudaDataType vt;
    CK(cusparseCsrGet(A, &rows, &cols, &nnz, &pRow, &pCol, &pVal, &it1, &it2, &base, &vt));
    printf("cusparseCsrGet: %lld x %lld, %lld nonzeros, same device addresses: %s, types kept: %s\n",
           (long long)rows, (long long)cols, (long long)nnz,
           pRow == dRow && pCol == dCol && pVal == dVal ? "yes" : "NO",
           it1 == CUSPARSE_INDEX_32I && it2 == CUSPARSE_INDEX_32I &&
                   base == CUSPARSE_INDEX_BASE_ZERO && vt == CUDA_R_32F ? "yes" : "NO");
    CK(cusparseDnVecGetValues(Y, &pY));
    printf("cusparseDnVecGetValues: same device address: %s\n", pY == dY ? "yes" : "NO");

    /* 1. host pointer mode: bufferSize, a workspace of that size, SpMV */
    cusparsePointerMode_t pm;
    CK(cusparseGetPointerMode(h, &pm));
    printf("pointer mode at start: %s\n", pm == CUSPARSE_POINTER_MODE_HOST ? "host" : "device");
    float alpha = 2.0f, beta = 0.5f;
    CK_RT(cudaMemcpy(dY, y0, sizeof y0, cudaMemcpyHostToDevice));
    size_t wsize = 0;
    CK(cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, X, &beta, Y,
                               CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, &wsize));
    printf("workspace size known: yes\n");
    void *dWork = NULL;
    CK_RT(cudaMalloc(&dWork, wsize ? wsize : 1));
    CK(cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, X, &beta, Y, CUDA_R_32F,
                    CUSPARSE_SPMV_ALG_DEFAULT, dWork));
    CK_RT(cudaStreamSynchronize(stream));
    CK_RT(cudaMemcpy(y, dY, sizeof y, cudaMemcpyDeviceToHost));
    reference(x, y0, alpha, beta, want);
    int ok = check("host pointer mode (alpha 2, beta 0.5)", y, want);

    /* 2. device pointer mode: alpha and beta are read from device memory */
    float scal[2] = {-1.0f, 3.0f};
    CK_RT(cudaMemcpy(dScal, scal, sizeof scal, cudaMemcpyHostToDevice));
    CK(cusparseSetPointerMode(h, CUSPARSE_POINTER_MODE_DEVICE));
    CK(cusparseGetPointerMode(h, &pm));
    printf("pointer mode now: %s\n", pm == CUSPARSE_POINTER_MODE_HOST ? "host" : "device");
    CK_RT(cudaMemcpy(dY, y0, sizeof y0, cudaMemcpyHostToDevice));
    CK(cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, dScal, A, X, dScal + 1, Y, CUDA_R_32F,
                    CUSPARSE_SPMV_ALG_DEFAULT, dWork));
    CK_RT(cudaStreamSynchronize(stream));
    CK_RT(cudaMemcpy(y, dY, sizeof y, cudaMemcpyDeviceToHost));
    reference(x, y0, scal[0], scal[1], want);
    ok &= check("device pointer mode (alpha -1, beta 3)", y, want);

    /* 3. back to host mode, y = A x */
    CK(cusparseSetPointerMode(h, CUSPARSE_POINTER_MODE_HOST));
    float one = 1.0f, zero = 0.0f;
    CK(cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, X, &zero, Y, CUDA_R_32F,
                    CUSPARSE_SPMV_ALG_DEFAULT, dWork));
    CK_RT(cudaStreamSynchronize(stream));
    CK_RT(cudaMemcpy(y, dY, sizeof y, cudaMemcpyDeviceToHost));
    reference(x, y0, one, zero, want);
    ok &= check("host pointer mode again (alpha 1, beta 0)", y, want);

    /* 4. cusparseAxpby: y = alpha * xs + beta * y, xs sparse (2 entries of 5) */
    const int xi[2] = {1, 4};
    const float xv[2] = {10, -4};
    int *dXi;
    float *dXv;
    CK_RT(cudaMalloc((void **)&dXi, sizeof xi));
    CK_RT(cudaMalloc((void **)&dXv, sizeof xv));
    CK_RT(cudaMemcpy(dXi, xi, sizeof xi, cudaMemcpyHostToDevice));
    CK_RT(cudaMemcpy(dXv, xv, sizeof xv, cudaMemcpyHostToDevice));
    cusparseSpVecDescr_t XS;
    CK(cusparseCreateSpVec(&XS, M, 2, dXi, dXv, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                           CUDA_R_32F));
    for (int mode = 0; mode < 2; mode++) {
        float a = mode ? scal[0] : 0.5f, b = mode ? scal[1] : 2.0f;
        CK(cusparseSetPointerMode(h, mode ? CUSPARSE_POINTER_MODE_DEVICE : CUSPARSE_POINTER_MODE_HOST));
        CK_RT(cudaMemcpy(dY, y0, sizeof y0, cudaMemcpyHostToDevice));
        if (mode)
            CK(cusparseAxpby(h, dScal, XS, dScal + 1, Y));
        else
            CK(cusparseAxpby(h, &a, XS, &b, Y));
        CK_RT(cudaStreamSynchronize(stream));
        CK_RT(cudaMemcpy(y, dY, sizeof y, cudaMemcpyDeviceToHost));
        for (int i = 0; i < M; i++) want[i] = b * y0[i];
        for (int k = 0; k < 2; k++) want[xi[k]] += a * xv[k];
        ok &= check(mode ? "axpby, device pointer mode (alpha -1, beta 3)"
                         : "axpby, host pointer mode (alpha 0.5, beta 2)", y, want);
    }
    CK(cusparseSetPointerMode(h, CUSPARSE_POINTER_MODE_HOST));
    CK(cusparseDestroySpVec(XS));
    cudaFree(dXi), cudaFree(dXv);

    CK(cusparseDestroySpMat(A));
    CK(cusparseDestroyDnVec(X));
    CK(cusparseDestroyDnVec(Y));
    CK(cusparseDestroy(h));
    CK_RT(cudaStreamDestroy(stream));
    cudaFree(dRow), cudaFree(dCol), cudaFree(dVal), cudaFree(dX), cudaFree(dY);
    cudaFree(dScal), cudaFree(dWork);
    return ok ? 0 : 1;
}
