/* Hand-written host code for specs/cublas.yaml: the status texts and the
 * Async host copies. */
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "apigen_rt.h"
#include "cublas_wire.h"

cublasStatus_t apigenCublasStatusText(cublasStatus_t status, int which, char *buf,
                                      unsigned int length)
{
    if (!buf || length == 0) return CUBLAS_STATUS_INVALID_VALUE;
    const char *s = which ? cublasGetStatusString(status) : cublasGetStatusName(status);
    snprintf(buf, length, "%s", s ? s : "");
    return CUBLAS_STATUS_SUCCESS;
}

/* The Async copies read or write the handler's copy of the guest's bytes,
 * which lives only until the reply: the stream is waited for before the
 * reply (an out buffer must hold the device's bytes by then; an in buffer
 * may not be freed under a pending copy). A failure of the wait is the
 * copy's execution failure, as cuBLAS reports a failed launch. */
static cublasStatus_t waited(cublasStatus_t st, cudaStream_t stream)
{
    if (st != CUBLAS_STATUS_SUCCESS) return st;
    return cudaStreamSynchronize(stream) == cudaSuccess ? st : CUBLAS_STATUS_EXECUTION_FAILED;
}

cublasStatus_t cublas_host_set_vector_async(apigen_call_ctx *cx, int n, int elemSize,
                                            const void *hostPtr, int incx, void *devicePtr,
                                            int incy, cudaStream_t stream)
{
    (void)cx;
    return waited(cublasSetVectorAsync(n, elemSize, hostPtr, incx, devicePtr, incy, stream),
                  stream);
}

cublasStatus_t cublas_host_set_vector_async_64(apigen_call_ctx *cx, int64_t n, int64_t elemSize,
                                               const void *hostPtr, int64_t incx,
                                               void *devicePtr, int64_t incy,
                                               cudaStream_t stream)
{
    (void)cx;
    return waited(cublasSetVectorAsync_64(n, elemSize, hostPtr, incx, devicePtr, incy, stream),
                  stream);
}

cublasStatus_t cublas_host_get_vector_async(apigen_call_ctx *cx, int n, int elemSize,
                                            const void *devicePtr, int incx, void *hostPtr,
                                            int incy, cudaStream_t stream)
{
    (void)cx;
    return waited(cublasGetVectorAsync(n, elemSize, devicePtr, incx, hostPtr, incy, stream),
                  stream);
}

cublasStatus_t cublas_host_get_vector_async_64(apigen_call_ctx *cx, int64_t n, int64_t elemSize,
                                               const void *devicePtr, int64_t incx,
                                               void *hostPtr, int64_t incy, cudaStream_t stream)
{
    (void)cx;
    return waited(cublasGetVectorAsync_64(n, elemSize, devicePtr, incx, hostPtr, incy, stream),
                  stream);
}

cublasStatus_t cublas_host_set_matrix_async(apigen_call_ctx *cx, int rows, int cols,
                                            int elemSize, const void *A, int lda, void *B,
                                            int ldb, cudaStream_t stream)
{
    (void)cx;
    return waited(cublasSetMatrixAsync(rows, cols, elemSize, A, lda, B, ldb, stream), stream);
}

cublasStatus_t cublas_host_set_matrix_async_64(apigen_call_ctx *cx, int64_t rows, int64_t cols,
                                               int64_t elemSize, const void *A, int64_t lda,
                                               void *B, int64_t ldb, cudaStream_t stream)
{
    (void)cx;
    return waited(cublasSetMatrixAsync_64(rows, cols, elemSize, A, lda, B, ldb, stream), stream);
}

cublasStatus_t cublas_host_get_matrix_async(apigen_call_ctx *cx, int rows, int cols,
                                            int elemSize, const void *A, int lda, void *B,
                                            int ldb, cudaStream_t stream)
{
    (void)cx;
    return waited(cublasGetMatrixAsync(rows, cols, elemSize, A, lda, B, ldb, stream), stream);
}

cublasStatus_t cublas_host_get_matrix_async_64(apigen_call_ctx *cx, int64_t rows, int64_t cols,
                                               int64_t elemSize, const void *A, int64_t lda,
                                               void *B, int64_t ldb, cudaStream_t stream)
{
    (void)cx;
    return waited(cublasGetMatrixAsync_64(rows, cols, elemSize, A, lda, B, ldb, stream), stream);
}
