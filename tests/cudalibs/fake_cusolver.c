/* A stand-in cuSOLVER (dense) for CI (no GPU), preloaded with fake_runtime.c:
 * the calls examples/cusolver makes, computed on the CPU over the fake
 * device's memory with LAPACK's semantics (getrf's partial pivoting with
 * 1-based pivots, potrf's devInfo naming the first leading minor that is not
 * positive definite). The 64-bit API's host workspace is written, so it must
 * reach the library as a real buffer. NULL handles and params get
 * cuSOLVER's answers. Every other function is the real library's. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cusolverDn.h>

#define FAKE __attribute__((visibility("default")))
#define MAGIC 0x5017e5u

struct cusolverDnContext { uint32_t magic; cudaStream_t stream; };
struct cusolverDnParams { uint32_t magic; };

static int ok_handle(cusolverDnHandle_t h) { return h && h->magic == MAGIC; }

FAKE cusolverStatus_t cusolverDnCreate(cusolverDnHandle_t *handle)
{
    if (!handle) return CUSOLVER_STATUS_INVALID_VALUE;
    struct cusolverDnContext *c = calloc(1, sizeof *c);
    if (!c) return CUSOLVER_STATUS_ALLOC_FAILED;
    c->magic = MAGIC;
    *handle = c;
    return CUSOLVER_STATUS_SUCCESS;
}
FAKE cusolverStatus_t cusolverDnDestroy(cusolverDnHandle_t h)
{
    if (!ok_handle(h)) return CUSOLVER_STATUS_NOT_INITIALIZED;
    h->magic = 0;
    free(h);
    return CUSOLVER_STATUS_SUCCESS;
}
FAKE cusolverStatus_t cusolverDnSetStream(cusolverDnHandle_t h, cudaStream_t s)
{
    if (!ok_handle(h)) return CUSOLVER_STATUS_NOT_INITIALIZED;
    h->stream = s;
    return CUSOLVER_STATUS_SUCCESS;
}
FAKE cusolverStatus_t cusolverDnGetStream(cusolverDnHandle_t h, cudaStream_t *s)
{
    if (!ok_handle(h)) return CUSOLVER_STATUS_NOT_INITIALIZED;
    if (!s) return CUSOLVER_STATUS_INVALID_VALUE;
    *s = h->stream;
    return CUSOLVER_STATUS_SUCCESS;
}
FAKE cusolverStatus_t cusolverDnCreateParams(cusolverDnParams_t *p)
{
    if (!p) return CUSOLVER_STATUS_INVALID_VALUE;
    struct cusolverDnParams *q = calloc(1, sizeof *q);
    if (!q) return CUSOLVER_STATUS_ALLOC_FAILED;
    q->magic = MAGIC;
    *p = q;
    return CUSOLVER_STATUS_SUCCESS;
}
FAKE cusolverStatus_t cusolverDnDestroyParams(cusolverDnParams_t p)
{
    if (!p || p->magic != MAGIC) return CUSOLVER_STATUS_INVALID_VALUE;
    p->magic = 0;
    free(p);
    return CUSOLVER_STATUS_SUCCESS;
}
FAKE cusolverStatus_t cusolverDnSetAdvOptions(cusolverDnParams_t p, cusolverDnFunction_t f,
                                              cusolverAlgMode_t a)
{
    (void)f, (void)a;
    /* NVIDIA's answer for a NULL params object (libcusolver.so.12 of CUDA 13.0) */
    return p && p->magic == MAGIC ? CUSOLVER_STATUS_SUCCESS : CUSOLVER_STATUS_NOT_INITIALIZED;
}

/* LU with partial pivoting in place (column-major); ipiv 1-based; returns
 * LAPACK's info (0, or the first zero pivot, 1-based) */
static int lu(int n, float *A, int lda, int64_t *ipiv)
{
    int info = 0;
    for (int j = 0; j < n; j++) {
        int p = j;
        for (int i = j + 1; i < n; i++)
            if (fabsf(A[j * lda + i]) > fabsf(A[j * lda + p])) p = i;
        ipiv[j] = p + 1;
        if (p != j)
            for (int c = 0; c < n; c++) {
                float t = A[c * lda + j];
                A[c * lda + j] = A[c * lda + p];
                A[c * lda + p] = t;
            }
        float d = A[j * lda + j];
        if (d == 0) {
            if (!info) info = j + 1;
            continue;
        }
        for (int i = j + 1; i < n; i++) {
            A[j * lda + i] /= d;
            for (int c = j + 1; c < n; c++) A[c * lda + i] -= A[j * lda + i] * A[c * lda + j];
        }
    }
    return info;
}
static void lu_solve(int n, int nrhs, const float *A, int lda, const int64_t *ipiv, float *B,
                     int ldb)
{
    for (int r = 0; r < nrhs; r++) {
        float *b = B + (size_t)r * ldb;
        for (int i = 0; i < n; i++) {
            int p = (int)ipiv[i] - 1;
            float t = b[i];
            b[i] = b[p];
            b[p] = t;
        }
        for (int i = 0; i < n; i++)
            for (int k = 0; k < i; k++) b[i] -= A[k * lda + i] * b[k];
        for (int i = n - 1; i >= 0; i--) {
            for (int k = i + 1; k < n; k++) b[i] -= A[k * lda + i] * b[k];
            b[i] /= A[i * lda + i];
        }
    }
}

FAKE cusolverStatus_t cusolverDnSgetrf_bufferSize(cusolverDnHandle_t h, int m, int n, float *A,
                                                  int lda, int *Lwork)
{
    (void)A;
    if (!ok_handle(h)) return CUSOLVER_STATUS_NOT_INITIALIZED;
    if (m < 0 || n < 0 || lda < (m > 1 ? m : 1) || !Lwork) return CUSOLVER_STATUS_INVALID_VALUE;
    *Lwork = n * 2;
    return CUSOLVER_STATUS_SUCCESS;
}
FAKE cusolverStatus_t cusolverDnSgetrf(cusolverDnHandle_t h, int m, int n, float *A, int lda,
                                       float *work, int *ipiv, int *info)
{
    if (!ok_handle(h)) return CUSOLVER_STATUS_NOT_INITIALIZED;
    if (m != n || n < 0 || lda < (n > 1 ? n : 1) || !A || !work || !info)
        return m != n ? CUSOLVER_STATUS_NOT_SUPPORTED : CUSOLVER_STATUS_INVALID_VALUE;
    int64_t p[64];
    if (n > 64) return CUSOLVER_STATUS_NOT_SUPPORTED;
    *info = lu(n, A, lda, p);
    if (ipiv)
        for (int i = 0; i < n; i++) ipiv[i] = (int)p[i];
    return CUSOLVER_STATUS_SUCCESS;
}
FAKE cusolverStatus_t cusolverDnSgetrs(cusolverDnHandle_t h, cublasOperation_t t, int n,
                                       int nrhs, const float *A, int lda, const int *ipiv,
                                       float *B, int ldb, int *info)
{
    if (!ok_handle(h)) return CUSOLVER_STATUS_NOT_INITIALIZED;
    if (t != CUBLAS_OP_N || n > 64) return CUSOLVER_STATUS_NOT_SUPPORTED;
    if (n < 0 || nrhs < 0 || !A || !ipiv || !B || !info) return CUSOLVER_STATUS_INVALID_VALUE;
    int64_t p[64];
    for (int i = 0; i < n; i++) p[i] = ipiv[i];
    lu_solve(n, nrhs, A, lda, p, B, ldb);
    *info = 0;
    return CUSOLVER_STATUS_SUCCESS;
}

FAKE cusolverStatus_t cusolverDnSpotrf_bufferSize(cusolverDnHandle_t h, cublasFillMode_t uplo,
                                                  int n, float *A, int lda, int *Lwork)
{
    (void)A;
    if (!ok_handle(h)) return CUSOLVER_STATUS_NOT_INITIALIZED;
    if (uplo != CUBLAS_FILL_MODE_LOWER) return CUSOLVER_STATUS_NOT_SUPPORTED;
    if (n < 0 || lda < (n > 1 ? n : 1) || !Lwork) return CUSOLVER_STATUS_INVALID_VALUE;
    *Lwork = n;
    return CUSOLVER_STATUS_SUCCESS;
}
FAKE cusolverStatus_t cusolverDnSpotrf(cusolverDnHandle_t h, cublasFillMode_t uplo, int n,
                                       float *A, int lda, float *work, int Lwork, int *info)
{
    if (!ok_handle(h)) return CUSOLVER_STATUS_NOT_INITIALIZED;
    if (uplo != CUBLAS_FILL_MODE_LOWER) return CUSOLVER_STATUS_NOT_SUPPORTED;
    if (n < 0 || lda < (n > 1 ? n : 1) || !A || !info || Lwork < n || !work)
        return CUSOLVER_STATUS_INVALID_VALUE;
    *info = 0;
    for (int j = 0; j < n; j++) {
        float d = A[j * lda + j];
        for (int k = 0; k < j; k++) d -= A[k * lda + j] * A[k * lda + j];
        if (d <= 0) {
            *info = j + 1;
            return CUSOLVER_STATUS_SUCCESS;
        }
        d = sqrtf(d);
        A[j * lda + j] = d;
        for (int i = j + 1; i < n; i++) {
            float s = A[j * lda + i];
            for (int k = 0; k < j; k++) s -= A[k * lda + i] * A[k * lda + j];
            A[j * lda + i] = s / d;
        }
    }
    return CUSOLVER_STATUS_SUCCESS;
}
FAKE cusolverStatus_t cusolverDnSpotrs(cusolverDnHandle_t h, cublasFillMode_t uplo, int n,
                                       int nrhs, const float *A, int lda, float *B, int ldb,
                                       int *info)
{
    if (!ok_handle(h)) return CUSOLVER_STATUS_NOT_INITIALIZED;
    if (uplo != CUBLAS_FILL_MODE_LOWER) return CUSOLVER_STATUS_NOT_SUPPORTED;
    if (n < 0 || nrhs < 0 || !A || !B || !info) return CUSOLVER_STATUS_INVALID_VALUE;
    for (int r = 0; r < nrhs; r++) {
        float *b = B + (size_t)r * ldb;
        for (int i = 0; i < n; i++) {
            for (int k = 0; k < i; k++) b[i] -= A[k * lda + i] * b[k];
            b[i] /= A[i * lda + i];
        }
        for (int i = n - 1; i >= 0; i--) {
            for (int k = i + 1; k < n; k++) b[i] -= A[i * lda + k] * b[k];
            b[i] /= A[i * lda + i];
        }
    }
    *info = 0;
    return CUSOLVER_STATUS_SUCCESS;
}

enum { DEV_BYTES = 256, HOST_BYTES = 64 };

FAKE cusolverStatus_t cusolverDnXgetrf_bufferSize(cusolverDnHandle_t h, cusolverDnParams_t p,
                                                  int64_t m, int64_t n, cudaDataType ta,
                                                  const void *A, int64_t lda, cudaDataType tc,
                                                  size_t *dbytes, size_t *hbytes)
{
    (void)A, (void)lda;
    if (!ok_handle(h)) return CUSOLVER_STATUS_NOT_INITIALIZED;
    if (!p || p->magic != MAGIC || m < 0 || n < 0 || !dbytes || !hbytes)
        return CUSOLVER_STATUS_INVALID_VALUE;
    if (ta != CUDA_R_32F || tc != CUDA_R_32F) return CUSOLVER_STATUS_NOT_SUPPORTED;
    *dbytes = DEV_BYTES;
    *hbytes = HOST_BYTES; /* NVIDIA's needs none here: this one exercises the host workspace */
    return CUSOLVER_STATUS_SUCCESS;
}
FAKE cusolverStatus_t cusolverDnXgetrf(cusolverDnHandle_t h, cusolverDnParams_t p, int64_t m,
                                       int64_t n, cudaDataType ta, void *A, int64_t lda,
                                       int64_t *ipiv, cudaDataType tc, void *dwork, size_t dbytes,
                                       void *hwork, size_t hbytes, int *info)
{
    if (!ok_handle(h)) return CUSOLVER_STATUS_NOT_INITIALIZED;
    if (!p || p->magic != MAGIC || m != n || n < 0 || n > 64 || !A || !info || !ipiv ||
        dbytes < DEV_BYTES || !dwork || hbytes < HOST_BYTES || !hwork)
        return CUSOLVER_STATUS_INVALID_VALUE;
    if (ta != CUDA_R_32F || tc != CUDA_R_32F) return CUSOLVER_STATUS_NOT_SUPPORTED;
    memset(dwork, 0x5a, DEV_BYTES);
    memset(hwork, 0xa5, HOST_BYTES);
    *info = lu((int)n, A, (int)lda, ipiv);
    return CUSOLVER_STATUS_SUCCESS;
}
FAKE cusolverStatus_t cusolverDnXgetrs(cusolverDnHandle_t h, cusolverDnParams_t p,
                                       cublasOperation_t t, int64_t n, int64_t nrhs,
                                       cudaDataType ta, const void *A, int64_t lda,
                                       const int64_t *ipiv, cudaDataType tb, void *B, int64_t ldb,
                                       int *info)
{
    if (!ok_handle(h)) return CUSOLVER_STATUS_NOT_INITIALIZED;
    if (!p || p->magic != MAGIC || n < 0 || nrhs < 0 || !A || !ipiv || !B || !info)
        return CUSOLVER_STATUS_INVALID_VALUE;
    if (t != CUBLAS_OP_N || ta != CUDA_R_32F || tb != CUDA_R_32F) return CUSOLVER_STATUS_NOT_SUPPORTED;
    lu_solve((int)n, (int)nrhs, A, (int)lda, ipiv, B, (int)ldb);
    *info = 0;
    return CUSOLVER_STATUS_SUCCESS;
}
