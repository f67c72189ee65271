/* A fake libcublas.so.13 for CI (no GPU): "device memory" is host memory of
 * the process that loads it, and the few functions the examples call compute
 * on it in plain C, following cuBLAS's pointer mode. Loaded natively by an
 * example and by the server alike (tests/cublas/fake_diff.sh), it makes the
 * whole forwarded path run here: a scalar the stub sent from the wrong
 * memory space is read from the wrong place and the outputs differ (or the
 * server refuses it). Only the calls the examples make are implemented; the
 * rest answer CUBLAS_STATUS_NOT_SUPPORTED (fake_weak.c). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_api.h>

#define EXPORT __attribute__((visibility("default")))

struct cublasContext {
    /* NVIDIA's cuBLAS handle holds a cuBLASLt context, and cuBLASLt accepts
     * it as a light handle (PyTorch relies on it): the fake's starts with the
     * fake cuBLASLt's handle word (tests/cublasLt/fake_cublasLt.c MAGIC_H) */
    uint32_t lt_magic;
    uint32_t magic;
    cublasPointerMode_t mode;
    cudaStream_t stream;
    void *workspace;
    size_t workspace_size;
};
#define MAGIC 0xcb1a5u

static int valid(cublasHandle_t h)
{
    return h && h->magic == MAGIC;
}

EXPORT cublasStatus_t cublasCreate_v2(cublasHandle_t *handle)
{
    if (!handle) return CUBLAS_STATUS_INVALID_VALUE;
    struct cublasContext *c = calloc(1, sizeof *c);
    if (!c) return CUBLAS_STATUS_ALLOC_FAILED;
    c->lt_magic = 0x17a11du;
    c->magic = MAGIC;
    c->mode = CUBLAS_POINTER_MODE_HOST;
    *handle = c;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasDestroy_v2(cublasHandle_t h)
{
    if (!valid(h)) return CUBLAS_STATUS_NOT_INITIALIZED;
    h->magic = 0;
    free(h);
    return CUBLAS_STATUS_SUCCESS;
}

/* As cuBLAS: the version needs no handle (cublasGetVersion_v2(NULL, &v)
 * succeeds, H200 2026-11-29), and the legacy form gives the same number. */
EXPORT cublasStatus_t cublasGetVersion(int *version)
{
    if (!version) return CUBLAS_STATUS_INVALID_VALUE;
    *version = 130000;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasGetVersion_v2(cublasHandle_t h, int *version)
{
    (void)h;
    return cublasGetVersion(version);
}

EXPORT cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t h, cublasPointerMode_t mode)
{
    if (!valid(h)) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (mode != CUBLAS_POINTER_MODE_HOST && mode != CUBLAS_POINTER_MODE_DEVICE)
        return CUBLAS_STATUS_INVALID_VALUE;
    /* FAKE_CUBLAS_STUCK_MODE=1: answers success but keeps the mode, so the
     * guest's tracking and the library disagree (tests/cublas/state_check.sh:
     * the server must refuse the next call that depends on it) */
    const char *stuck = getenv("FAKE_CUBLAS_STUCK_MODE");
    if (stuck && *stuck == '1') return CUBLAS_STATUS_SUCCESS;
    h->mode = mode;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t h, cublasPointerMode_t *mode)
{
    if (!valid(h)) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!mode) return CUBLAS_STATUS_INVALID_VALUE;
    *mode = h->mode;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasSetStream_v2(cublasHandle_t h, cudaStream_t s)
{
    if (!valid(h)) return CUBLAS_STATUS_NOT_INITIALIZED;
    h->stream = s;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasGetStream_v2(cublasHandle_t h, cudaStream_t *s)
{
    if (!valid(h)) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!s) return CUBLAS_STATUS_INVALID_VALUE;
    *s = h->stream;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t h, void *w, size_t size)
{
    if (!valid(h)) return CUBLAS_STATUS_NOT_INITIALIZED;
    h->workspace = w;
    h->workspace_size = size;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasInit(void) { return CUBLAS_STATUS_SUCCESS; }
EXPORT cublasStatus_t cublasShutdown(void) { return CUBLAS_STATUS_SUCCESS; }

EXPORT cublasStatus_t cublasAlloc(int n, int elemSize, void **p)
{
    if (n <= 0 || elemSize <= 0 || !p) return CUBLAS_STATUS_INVALID_VALUE;
    *p = calloc((size_t)n, (size_t)elemSize);
    return *p ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}

EXPORT cublasStatus_t cublasFree(void *p)
{
    free(p);
    return CUBLAS_STATUS_SUCCESS;
}

static cublasStatus_t strided(int n, int es, const void *x, int incx, void *y, int incy)
{
    if (n < 0 || es <= 0 || incx <= 0 || incy <= 0) return CUBLAS_STATUS_INVALID_VALUE;
    for (int i = 0; i < n; i++)
        memcpy((char *)y + (size_t)i * incy * es, (const char *)x + (size_t)i * incx * es,
               (size_t)es);
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasSetVector(int n, int es, const void *x, int incx, void *y, int incy)
{
    return strided(n, es, x, incx, y, incy);
}

EXPORT cublasStatus_t cublasGetVector(int n, int es, const void *x, int incx, void *y, int incy)
{
    return strided(n, es, x, incx, y, incy);
}

static cublasStatus_t matrix(int rows, int cols, int es, const void *A, int lda, void *B, int ldb)
{
    if (rows < 0 || cols < 0 || es <= 0 || lda < rows || ldb < rows || lda <= 0 || ldb <= 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    for (int c = 0; c < cols; c++)
        memcpy((char *)B + (size_t)c * ldb * es, (const char *)A + (size_t)c * lda * es,
               (size_t)rows * es);
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasSetMatrix(int rows, int cols, int es, const void *A, int lda,
                                      void *B, int ldb)
{
    return matrix(rows, cols, es, A, lda, B, ldb);
}

EXPORT cublasStatus_t cublasGetMatrix(int rows, int cols, int es, const void *A, int lda,
                                      void *B, int ldb)
{
    return matrix(rows, cols, es, A, lda, B, ldb);
}

static void gemm(int m, int n, int k, float alpha, const float *A, int lda, const float *B,
                 int ldb, float beta, float *C, int ldc)
{
    for (int r = 0; r < m; r++)
        for (int c = 0; c < n; c++) {
            float s = 0;
            for (int i = 0; i < k; i++) s += A[i * lda + r] * B[c * ldb + i];
            C[c * ldc + r] = alpha * s + beta * C[c * ldc + r];
        }
}

/* alpha and beta are read where the handle's pointer mode says: in this
 * fake, host and "device" memory are both this process's, so a scalar the
 * stub sent wrongly is a wrong or foreign pointer here */
EXPORT cublasStatus_t cublasSgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                                     int m, int n, int k, const float *alpha, const float *A,
                                     int lda, const float *B, int ldb, const float *beta,
                                     float *C, int ldc)
{
    if (!valid(h)) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (ta != CUBLAS_OP_N || tb != CUBLAS_OP_N || !alpha || !beta) return CUBLAS_STATUS_NOT_SUPPORTED;
    gemm(m, n, k, *alpha, A, lda, B, ldb, *beta, C, ldc);
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasSgemmBatched(cublasHandle_t h, cublasOperation_t ta,
                                         cublasOperation_t tb, int m, int n, int k,
                                         const float *alpha, const float *const Aarray[], int lda,
                                         const float *const Barray[], int ldb, const float *beta,
                                         float *const Carray[], int ldc, int batchCount)
{
    if (!valid(h)) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (ta != CUBLAS_OP_N || tb != CUBLAS_OP_N || !alpha || !beta) return CUBLAS_STATUS_NOT_SUPPORTED;
    for (int b = 0; b < batchCount; b++)
        gemm(m, n, k, *alpha, Aarray[b], lda, Barray[b], ldb, *beta, Carray[b], ldc);
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasSdot_v2(cublasHandle_t h, int n, const float *x, int incx,
                                    const float *y, int incy, float *result)
{
    if (!valid(h)) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!result) return CUBLAS_STATUS_INVALID_VALUE;
    float s = 0;
    for (int i = 0; i < n; i++) s += x[i * incx] * y[i * incy];
    *result = s;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasSnrm2_v2(cublasHandle_t h, int n, const float *x, int incx,
                                     float *result)
{
    if (!valid(h)) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!result) return CUBLAS_STATUS_INVALID_VALUE;
    double s = 0;
    for (int i = 0; i < n; i++) s += (double)x[i * incx] * x[i * incx];
    *result = (float)sqrt(s);
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasIsamax_v2(cublasHandle_t h, int n, const float *x, int incx,
                                      int *result)
{
    if (!valid(h)) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!result) return CUBLAS_STATUS_INVALID_VALUE;
    int best = n > 0 ? 1 : 0;
    for (int i = 1; i < n; i++)
        if (fabsf(x[i * incx]) > fabsf(x[(best - 1) * incx])) best = i + 1;
    *result = best;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasSrotg_v2(cublasHandle_t h, float *a, float *b, float *c, float *s)
{
    if (!valid(h)) return CUBLAS_STATUS_NOT_INITIALIZED;
    float r = hypotf(*a, *b);
    *c = r != 0 ? *a / r : 1;
    *s = r != 0 ? *b / r : 0;
    *b = fabsf(*a) > fabsf(*b) ? *s : (*c != 0 ? 1 / *c : 1);
    *a = r;
    return CUBLAS_STATUS_SUCCESS;
}

/* y += alpha x. Two arguments are refused on purpose (tests/cuda/async_fail.sh):
 * an increment of 0 (a value: INVALID_VALUE, which the guest's async_repeats
 * never saw accepted, so the call goes sync) and alpha == -7777 in host
 * pointer mode (EXECUTION_FAILED: a kernel launch that fails, which no value
 * the guest keys on shows, so a repeat is queued and fails on the server) */
EXPORT cublasStatus_t cublasSaxpy_v2(cublasHandle_t h, int n, const float *alpha, const float *x,
                                     int incx, float *y, int incy)
{
    if (!valid(h)) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!alpha || incx == 0 || incy == 0) return CUBLAS_STATUS_INVALID_VALUE;
    if (h->mode == CUBLAS_POINTER_MODE_HOST && *alpha == -7777.0f) return CUBLAS_STATUS_EXECUTION_FAILED;
    for (int i = 0; i < n; i++) y[i * incy] += *alpha * x[i * incx];
    return CUBLAS_STATUS_SUCCESS;
}

static const char *const names[] = {
    [CUBLAS_STATUS_SUCCESS] = "CUBLAS_STATUS_SUCCESS",
    [CUBLAS_STATUS_NOT_INITIALIZED] = "CUBLAS_STATUS_NOT_INITIALIZED",
    [CUBLAS_STATUS_ALLOC_FAILED] = "CUBLAS_STATUS_ALLOC_FAILED",
    [CUBLAS_STATUS_INVALID_VALUE] = "CUBLAS_STATUS_INVALID_VALUE",
    [CUBLAS_STATUS_NOT_SUPPORTED] = "CUBLAS_STATUS_NOT_SUPPORTED",
    [CUBLAS_STATUS_EXECUTION_FAILED] = "CUBLAS_STATUS_EXECUTION_FAILED",
};

EXPORT const char *cublasGetStatusName(cublasStatus_t s)
{
    unsigned k = (unsigned)s;
    return k < sizeof names / sizeof *names && names[k] ? names[k] : "fake: another status";
}

EXPORT const char *cublasGetStatusString(cublasStatus_t s)
{
    return cublasGetStatusName(s);
}
