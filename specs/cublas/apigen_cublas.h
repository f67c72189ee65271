/* apigen_cublas.h: wire messages of the cuBLAS stub that are not part of
 * cuBLAS's headers (internal calls: specs/cublas/guest.c makes them, the
 * server's specs/cublas/host.c answers them). */
#ifndef APIGEN_CUBLAS_H
#define APIGEN_CUBLAS_H

#include <cublas_api.h>

#include "cublas_features.h"

/* The spec's scalar sizes (cublasGemmEx & co: 8 bytes for a 64-bit compute
 * type) name CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT, which cuBLAS 13.1
 * (CUDA 13.0) added. Where the headers lack it, no computeType a caller can
 * pass equals it: a value outside the enum stands in, so the one expression
 * holds for every version. */
#ifndef APIGEN_HAS_CONST_CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT
#define CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT (-1)
#endif

/* The server library's text for a status: cublasGetStatusName (which 0) or
 * cublasGetStatusString (which 1), copied into buf (length bytes,
 * NUL-terminated). */
cublasStatus_t apigenCublasStatusText(cublasStatus_t status, int which, char *buf,
                                      unsigned int length);

/* The half-precision functions cublas_api.h declares for C++ only (their
 * __half and __nv_bfloat16 are classes there): libcublas.so.13 exports them
 * with C linkage, and a C caller passes pointers to the same two bytes.
 * Declared here for C with the raw structs of cuda_fp16.h / cuda_bf16.h
 * (the signatures are the header's, cuBLAS 13.0). */
#ifndef __cplusplus
typedef __half_raw __half;
typedef __nv_bfloat16_raw __nv_bfloat16;

cublasStatus_t cublasHSHgemvBatched(cublasHandle_t handle,
                                                 cublasOperation_t trans,
                                                 int m,
                                                 int n,
                                                 const float* alpha,
                                                 const __half* const Aarray[],
                                                 int lda,
                                                 const __half* const xarray[],
                                                 int incx,
                                                 const float* beta,
                                                 __half* const yarray[],
                                                 int incy,
                                                 int batchCount);

cublasStatus_t cublasHSHgemvBatched_64(cublasHandle_t handle,
                                                    cublasOperation_t trans,
                                                    int64_t m,
                                                    int64_t n,
                                                    const float* alpha,
                                                    const __half* const Aarray[],
                                                    int64_t lda,
                                                    const __half* const xarray[],
                                                    int64_t incx,
                                                    const float* beta,
                                                    __half* const yarray[],
                                                    int64_t incy,
                                                    int64_t batchCount);

cublasStatus_t cublasHSSgemvBatched(cublasHandle_t handle,
                                                 cublasOperation_t trans,
                                                 int m,
                                                 int n,
                                                 const float* alpha,
                                                 const __half* const Aarray[],
                                                 int lda,
                                                 const __half* const xarray[],
                                                 int incx,
                                                 const float* beta,
                                                 float* const yarray[],
                                                 int incy,
                                                 int batchCount);

cublasStatus_t cublasHSSgemvBatched_64(cublasHandle_t handle,
                                                    cublasOperation_t trans,
                                                    int64_t m,
                                                    int64_t n,
                                                    const float* alpha,
                                                    const __half* const Aarray[],
                                                    int64_t lda,
                                                    const __half* const xarray[],
                                                    int64_t incx,
                                                    const float* beta,
                                                    float* const yarray[],
                                                    int64_t incy,
                                                    int64_t batchCount);

cublasStatus_t cublasTSTgemvBatched(cublasHandle_t handle,
                                                 cublasOperation_t trans,
                                                 int m,
                                                 int n,
                                                 const float* alpha,
                                                 const __nv_bfloat16* const Aarray[],
                                                 int lda,
                                                 const __nv_bfloat16* const xarray[],
                                                 int incx,
                                                 const float* beta,
                                                 __nv_bfloat16* const yarray[],
                                                 int incy,
                                                 int batchCount);

cublasStatus_t cublasTSTgemvBatched_64(cublasHandle_t handle,
                                                    cublasOperation_t trans,
                                                    int64_t m,
                                                    int64_t n,
                                                    const float* alpha,
                                                    const __nv_bfloat16* const Aarray[],
                                                    int64_t lda,
                                                    const __nv_bfloat16* const xarray[],
                                                    int64_t incx,
                                                    const float* beta,
                                                    __nv_bfloat16* const yarray[],
                                                    int64_t incy,
                                                    int64_t batchCount);

cublasStatus_t cublasTSSgemvBatched(cublasHandle_t handle,
                                                 cublasOperation_t trans,
                                                 int m,
                                                 int n,
                                                 const float* alpha,
                                                 const __nv_bfloat16* const Aarray[],
                                                 int lda,
                                                 const __nv_bfloat16* const xarray[],
                                                 int incx,
                                                 const float* beta,
                                                 float* const yarray[],
                                                 int incy,
                                                 int batchCount);

cublasStatus_t cublasTSSgemvBatched_64(cublasHandle_t handle,
                                                    cublasOperation_t trans,
                                                    int64_t m,
                                                    int64_t n,
                                                    const float* alpha,
                                                    const __nv_bfloat16* const Aarray[],
                                                    int64_t lda,
                                                    const __nv_bfloat16* const xarray[],
                                                    int64_t incx,
                                                    const float* beta,
                                                    float* const yarray[],
                                                    int64_t incy,
                                                    int64_t batchCount);


cublasStatus_t cublasHSHgemvStridedBatched(cublasHandle_t handle,
                                                        cublasOperation_t trans,
                                                        int m,
                                                        int n,
                                                        const float* alpha,
                                                        const __half* A,
                                                        int lda,
                                                        long long int strideA,
                                                        const __half* x,
                                                        int incx,
                                                        long long int stridex,
                                                        const float* beta,
                                                        __half* y,
                                                        int incy,
                                                        long long int stridey,
                                                        int batchCount);

cublasStatus_t cublasHSHgemvStridedBatched_64(cublasHandle_t handle,
                                                           cublasOperation_t trans,
                                                           int64_t m,
                                                           int64_t n,
                                                           const float* alpha,
                                                           const __half* A,
                                                           int64_t lda,
                                                           long long int strideA,
                                                           const __half* x,
                                                           int64_t incx,
                                                           long long int stridex,
                                                           const float* beta,
                                                           __half* y,
                                                           int64_t incy,
                                                           long long int stridey,
                                                           int64_t batchCount);

cublasStatus_t cublasHSSgemvStridedBatched(cublasHandle_t handle,
                                                        cublasOperation_t trans,
                                                        int m,
                                                        int n,
                                                        const float* alpha,
                                                        const __half* A,
                                                        int lda,
                                                        long long int strideA,
                                                        const __half* x,
                                                        int incx,
                                                        long long int stridex,
                                                        const float* beta,
                                                        float* y,
                                                        int incy,
                                                        long long int stridey,
                                                        int batchCount);

cublasStatus_t cublasHSSgemvStridedBatched_64(cublasHandle_t handle,
                                                           cublasOperation_t trans,
                                                           int64_t m,
                                                           int64_t n,
                                                           const float* alpha,
                                                           const __half* A,
                                                           int64_t lda,
                                                           long long int strideA,
                                                           const __half* x,
                                                           int64_t incx,
                                                           long long int stridex,
                                                           const float* beta,
                                                           float* y,
                                                           int64_t incy,
                                                           long long int stridey,
                                                           int64_t batchCount);

cublasStatus_t cublasTSTgemvStridedBatched(cublasHandle_t handle,
                                                        cublasOperation_t trans,
                                                        int m,
                                                        int n,
                                                        const float* alpha,
                                                        const __nv_bfloat16* A,
                                                        int lda,
                                                        long long int strideA,
                                                        const __nv_bfloat16* x,
                                                        int incx,
                                                        long long int stridex,
                                                        const float* beta,
                                                        __nv_bfloat16* y,
                                                        int incy,
                                                        long long int stridey,
                                                        int batchCount);

cublasStatus_t cublasTSTgemvStridedBatched_64(cublasHandle_t handle,
                                                           cublasOperation_t trans,
                                                           int64_t m,
                                                           int64_t n,
                                                           const float* alpha,
                                                           const __nv_bfloat16* A,
                                                           int64_t lda,
                                                           long long int strideA,
                                                           const __nv_bfloat16* x,
                                                           int64_t incx,
                                                           long long int stridex,
                                                           const float* beta,
                                                           __nv_bfloat16* y,
                                                           int64_t incy,
                                                           long long int stridey,
                                                           int64_t batchCount);

cublasStatus_t cublasTSSgemvStridedBatched(cublasHandle_t handle,
                                                        cublasOperation_t trans,
                                                        int m,
                                                        int n,
                                                        const float* alpha,
                                                        const __nv_bfloat16* A,
                                                        int lda,
                                                        long long int strideA,
                                                        const __nv_bfloat16* x,
                                                        int incx,
                                                        long long int stridex,
                                                        const float* beta,
                                                        float* y,
                                                        int incy,
                                                        long long int stridey,
                                                        int batchCount);

cublasStatus_t cublasTSSgemvStridedBatched_64(cublasHandle_t handle,
                                                           cublasOperation_t trans,
                                                           int64_t m,
                                                           int64_t n,
                                                           const float* alpha,
                                                           const __nv_bfloat16* A,
                                                           int64_t lda,
                                                           long long int strideA,
                                                           const __nv_bfloat16* x,
                                                           int64_t incx,
                                                           long long int stridex,
                                                           const float* beta,
                                                           float* y,
                                                           int64_t incy,
                                                           long long int stridey,
                                                           int64_t batchCount);


cublasStatus_t cublasHgemm(cublasHandle_t handle,
                                        cublasOperation_t transa,
                                        cublasOperation_t transb,
                                        int m,
                                        int n,
                                        int k,
                                        const __half* alpha,
                                        const __half* A,
                                        int lda,
                                        const __half* B,
                                        int ldb,
                                        const __half* beta,
                                        __half* C,
                                        int ldc);

cublasStatus_t cublasHgemm_64(cublasHandle_t handle,
                                           cublasOperation_t transa,
                                           cublasOperation_t transb,
                                           int64_t m,
                                           int64_t n,
                                           int64_t k,
                                           const __half* alpha,
                                           const __half* A,
                                           int64_t lda,
                                           const __half* B,
                                           int64_t ldb,
                                           const __half* beta,
                                           __half* C,
                                           int64_t ldc);


cublasStatus_t cublasHgemmBatched(cublasHandle_t handle,
                                               cublasOperation_t transa,
                                               cublasOperation_t transb,
                                               int m,
                                               int n,
                                               int k,
                                               const __half* alpha,
                                               const __half* const Aarray[],
                                               int lda,
                                               const __half* const Barray[],
                                               int ldb,
                                               const __half* beta,
                                               __half* const Carray[],
                                               int ldc,
                                               int batchCount);

cublasStatus_t cublasHgemmBatched_64(cublasHandle_t handle,
                                                  cublasOperation_t transa,
                                                  cublasOperation_t transb,
                                                  int64_t m,
                                                  int64_t n,
                                                  int64_t k,
                                                  const __half* alpha,
                                                  const __half* const Aarray[],
                                                  int64_t lda,
                                                  const __half* const Barray[],
                                                  int64_t ldb,
                                                  const __half* beta,
                                                  __half* const Carray[],
                                                  int64_t ldc,
                                                  int64_t batchCount);


cublasStatus_t cublasHgemmStridedBatched(cublasHandle_t handle,
                                                      cublasOperation_t transa,
                                                      cublasOperation_t transb,
                                                      int m,
                                                      int n,
                                                      int k,
                                                      const __half* alpha,
                                                      const __half* A,
                                                      int lda,
                                                      long long int strideA,
                                                      const __half* B,
                                                      int ldb,
                                                      long long int strideB,
                                                      const __half* beta,
                                                      __half* C,
                                                      int ldc,
                                                      long long int strideC,
                                                      int batchCount);

cublasStatus_t cublasHgemmStridedBatched_64(cublasHandle_t handle,
                                                         cublasOperation_t transa,
                                                         cublasOperation_t transb,
                                                         int64_t m,
                                                         int64_t n,
                                                         int64_t k,
                                                         const __half* alpha,
                                                         const __half* A,
                                                         int64_t lda,
                                                         long long int strideA,
                                                         const __half* B,
                                                         int64_t ldb,
                                                         long long int strideB,
                                                         const __half* beta,
                                                         __half* C,
                                                         int64_t ldc,
                                                         long long int strideC,
                                                         int64_t batchCount);

#endif /* !__cplusplus */

#endif
