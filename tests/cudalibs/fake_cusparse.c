/* A stand-in cuSPARSE for CI (no GPU), preloaded with fake_runtime.c: the
 * calls examples/cusparse makes, computed on the CPU over the fake device's
 * memory, following the handle's pointer mode (alpha and beta are read where
 * it says: a scalar the stub sent from the wrong memory space is read from the
 * wrong place). NULL handles and descriptors get cuSPARSE's answers. Every
 * other function is the real library's (which fails without a GPU). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cusparse.h>

#define FAKE __attribute__((visibility("default")))
#define MAGIC 0x5ba25eu

struct cusparseContext {
    uint32_t magic;
    cusparsePointerMode_t mode;
    cudaStream_t stream;
};
struct cusparseSpMatDescr {
    uint32_t magic;
    int64_t rows, cols, nnz;
    void *rowptr, *colind, *values;
    cusparseIndexType_t rt, ct;
    cusparseIndexBase_t base;
    cudaDataType vt;
};
struct cusparseSpVecDescr {
    uint32_t magic;
    int64_t size, nnz;
    void *indices, *values;
    cusparseIndexType_t it;
    cusparseIndexBase_t base;
    cudaDataType vt;
};
struct cusparseDnVecDescr {
    uint32_t magic;
    int64_t size;
    void *values;
    cudaDataType vt;
};

static int ok_handle(cusparseHandle_t h) { return h && h->magic == MAGIC; }

FAKE cusparseStatus_t cusparseCreate(cusparseHandle_t *handle)
{
    if (!handle) return CUSPARSE_STATUS_INVALID_VALUE;
    struct cusparseContext *c = calloc(1, sizeof *c);
    if (!c) return CUSPARSE_STATUS_ALLOC_FAILED;
    c->magic = MAGIC;
    *handle = c;
    return CUSPARSE_STATUS_SUCCESS;
}
FAKE cusparseStatus_t cusparseDestroy(cusparseHandle_t h)
{
    if (!ok_handle(h)) return CUSPARSE_STATUS_NOT_INITIALIZED;
    h->magic = 0;
    free(h);
    return CUSPARSE_STATUS_SUCCESS;
}
FAKE cusparseStatus_t cusparseGetVersion(cusparseHandle_t h, int *version)
{
    if (!ok_handle(h)) return CUSPARSE_STATUS_NOT_INITIALIZED;
    if (!version) return CUSPARSE_STATUS_INVALID_VALUE;
    *version = CUSPARSE_VERSION;
    return CUSPARSE_STATUS_SUCCESS;
}
FAKE cusparseStatus_t cusparseSetStream(cusparseHandle_t h, cudaStream_t s)
{
    if (!ok_handle(h)) return CUSPARSE_STATUS_NOT_INITIALIZED;
    h->stream = s;
    return CUSPARSE_STATUS_SUCCESS;
}
FAKE cusparseStatus_t cusparseGetStream(cusparseHandle_t h, cudaStream_t *s)
{
    if (!ok_handle(h)) return CUSPARSE_STATUS_NOT_INITIALIZED;
    if (!s) return CUSPARSE_STATUS_INVALID_VALUE;
    *s = h->stream;
    return CUSPARSE_STATUS_SUCCESS;
}
FAKE cusparseStatus_t cusparseSetPointerMode(cusparseHandle_t h, cusparsePointerMode_t m)
{
    if (!ok_handle(h)) return CUSPARSE_STATUS_NOT_INITIALIZED;
    if (m != CUSPARSE_POINTER_MODE_HOST && m != CUSPARSE_POINTER_MODE_DEVICE)
        return CUSPARSE_STATUS_INVALID_VALUE;
    /* FAKE_CUSPARSE_STUCK_MODE=1: answers success but keeps the mode, so the
     * guest's tracking and the library disagree (tests/cudalibs/state_check.sh:
     * the server must refuse the next call that depends on it) */
    const char *stuck = getenv("FAKE_CUSPARSE_STUCK_MODE");
    if (stuck && *stuck == '1') return CUSPARSE_STATUS_SUCCESS;
    h->mode = m;
    return CUSPARSE_STATUS_SUCCESS;
}
FAKE cusparseStatus_t cusparseGetPointerMode(cusparseHandle_t h, cusparsePointerMode_t *m)
{
    if (!ok_handle(h)) return CUSPARSE_STATUS_NOT_INITIALIZED;
    if (!m) return CUSPARSE_STATUS_INVALID_VALUE;
    *m = h->mode;
    return CUSPARSE_STATUS_SUCCESS;
}

FAKE cusparseStatus_t cusparseCreateCsr(cusparseSpMatDescr_t *d, int64_t rows, int64_t cols,
                                        int64_t nnz, void *rowptr, void *colind, void *values,
                                        cusparseIndexType_t rt, cusparseIndexType_t ct,
                                        cusparseIndexBase_t base, cudaDataType vt)
{
    if (!d || rows < 0 || cols < 0 || nnz < 0) return CUSPARSE_STATUS_INVALID_VALUE;
    struct cusparseSpMatDescr *m = calloc(1, sizeof *m);
    if (!m) return CUSPARSE_STATUS_ALLOC_FAILED;
    *m = (struct cusparseSpMatDescr){MAGIC, rows, cols, nnz, rowptr, colind, values, rt, ct, base, vt};
    *d = m;
    return CUSPARSE_STATUS_SUCCESS;
}
FAKE cusparseStatus_t cusparseCsrGet(cusparseSpMatDescr_t m, int64_t *rows, int64_t *cols,
                                     int64_t *nnz, void **rowptr, void **colind, void **values,
                                     cusparseIndexType_t *rt, cusparseIndexType_t *ct,
                                     cusparseIndexBase_t *base, cudaDataType *vt)
{
    if (!m || m->magic != MAGIC || !rows || !cols || !nnz || !rowptr || !colind || !values ||
        !rt || !ct || !base || !vt)
        return CUSPARSE_STATUS_INVALID_VALUE;
    *rows = m->rows, *cols = m->cols, *nnz = m->nnz;
    *rowptr = m->rowptr, *colind = m->colind, *values = m->values;
    *rt = m->rt, *ct = m->ct, *base = m->base, *vt = m->vt;
    return CUSPARSE_STATUS_SUCCESS;
}
FAKE cusparseStatus_t cusparseSpMatGetSize(cusparseConstSpMatDescr_t m, int64_t *rows,
                                           int64_t *cols, int64_t *nnz)
{
    if (!m || m->magic != MAGIC || !rows || !cols || !nnz) return CUSPARSE_STATUS_INVALID_VALUE;
    *rows = m->rows, *cols = m->cols, *nnz = m->nnz;
    return CUSPARSE_STATUS_SUCCESS;
}
FAKE cusparseStatus_t cusparseDestroySpMat(cusparseConstSpMatDescr_t m)
{
    if (!m) return CUSPARSE_STATUS_SUCCESS;
    if (m->magic != MAGIC) return CUSPARSE_STATUS_INVALID_VALUE;
    free((void *)m);
    return CUSPARSE_STATUS_SUCCESS;
}
FAKE cusparseStatus_t cusparseCreateDnVec(cusparseDnVecDescr_t *d, int64_t size, void *values,
                                          cudaDataType vt)
{
    if (!d || size < 0) return CUSPARSE_STATUS_INVALID_VALUE;
    struct cusparseDnVecDescr *v = calloc(1, sizeof *v);
    if (!v) return CUSPARSE_STATUS_ALLOC_FAILED;
    *v = (struct cusparseDnVecDescr){MAGIC, size, values, vt};
    *d = v;
    return CUSPARSE_STATUS_SUCCESS;
}
FAKE cusparseStatus_t cusparseDnVecGet(cusparseDnVecDescr_t v, int64_t *size, void **values,
                                       cudaDataType *vt)
{
    if (!v || v->magic != MAGIC || !size || !values || !vt) return CUSPARSE_STATUS_INVALID_VALUE;
    *size = v->size, *values = v->values, *vt = v->vt;
    return CUSPARSE_STATUS_SUCCESS;
}
FAKE cusparseStatus_t cusparseDnVecGetValues(cusparseDnVecDescr_t v, void **values)
{
    if (!v || v->magic != MAGIC || !values) return CUSPARSE_STATUS_INVALID_VALUE;
    *values = v->values;
    return CUSPARSE_STATUS_SUCCESS;
}
FAKE cusparseStatus_t cusparseDestroyDnVec(cusparseConstDnVecDescr_t v)
{
    if (!v) return CUSPARSE_STATUS_SUCCESS;
    if (v->magic != MAGIC) return CUSPARSE_STATUS_INVALID_VALUE;
    free((void *)v);
    return CUSPARSE_STATUS_SUCCESS;
}

FAKE cusparseStatus_t cusparseCreateSpVec(cusparseSpVecDescr_t *d, int64_t size, int64_t nnz,
                                          void *indices, void *values, cusparseIndexType_t it,
                                          cusparseIndexBase_t base, cudaDataType vt)
{
    if (!d || size < 0 || nnz < 0 || nnz > size) return CUSPARSE_STATUS_INVALID_VALUE;
    struct cusparseSpVecDescr *v = calloc(1, sizeof *v);
    if (!v) return CUSPARSE_STATUS_ALLOC_FAILED;
    *v = (struct cusparseSpVecDescr){MAGIC, size, nnz, indices, values, it, base, vt};
    *d = v;
    return CUSPARSE_STATUS_SUCCESS;
}
FAKE cusparseStatus_t cusparseDestroySpVec(cusparseConstSpVecDescr_t v)
{
    if (!v) return CUSPARSE_STATUS_SUCCESS;
    if (v->magic != MAGIC) return CUSPARSE_STATUS_INVALID_VALUE;
    free((void *)v);
    return CUSPARSE_STATUS_SUCCESS;
}
/* alpha and beta are of the vectors' value type (float here), read where the
 * pointer mode says */
FAKE cusparseStatus_t cusparseAxpby(cusparseHandle_t h, const void *alpha,
                                    cusparseConstSpVecDescr_t x, const void *beta,
                                    cusparseDnVecDescr_t y)
{
    if (!ok_handle(h)) return CUSPARSE_STATUS_NOT_INITIALIZED;
    if (!alpha || !beta || !x || !y || x->magic != MAGIC || y->magic != MAGIC || x->size != y->size)
        return CUSPARSE_STATUS_INVALID_VALUE;
    if (x->vt != CUDA_R_32F || y->vt != CUDA_R_32F || x->it != CUSPARSE_INDEX_32I)
        return CUSPARSE_STATUS_NOT_SUPPORTED;
    float a = *(const float *)alpha, b = *(const float *)beta, *yv = y->values;
    const float *xv = x->values;
    const int *xi = x->indices;
    int base = x->base == CUSPARSE_INDEX_BASE_ONE;
    for (int64_t i = 0; i < y->size; i++) yv[i] *= b;
    for (int64_t k = 0; k < x->nnz; k++) yv[xi[k] - base] += a * xv[k];
    return CUSPARSE_STATUS_SUCCESS;
}

enum { WORKSPACE = 128 };

/* what SpMV checks before it computes: float CSR with 32-bit indices only */
static cusparseStatus_t spmv_check(cusparseHandle_t h, cusparseOperation_t op, const void *alpha,
                                   cusparseConstSpMatDescr_t A, cusparseConstDnVecDescr_t x,
                                   const void *beta, cusparseConstDnVecDescr_t y, cudaDataType ct)
{
    if (!ok_handle(h)) return CUSPARSE_STATUS_NOT_INITIALIZED;
    if (!alpha || !beta || !A || !x || !y || A->magic != MAGIC || x->magic != MAGIC ||
        y->magic != MAGIC || x->size != A->cols || y->size != A->rows)
        return CUSPARSE_STATUS_INVALID_VALUE;
    if (op != CUSPARSE_OPERATION_NON_TRANSPOSE || ct != CUDA_R_32F || A->vt != CUDA_R_32F ||
        A->rt != CUSPARSE_INDEX_32I || A->ct != CUSPARSE_INDEX_32I)
        return CUSPARSE_STATUS_NOT_SUPPORTED;
    return CUSPARSE_STATUS_SUCCESS;
}
FAKE cusparseStatus_t cusparseSpMV_bufferSize(cusparseHandle_t h, cusparseOperation_t op,
                                              const void *alpha, cusparseConstSpMatDescr_t A,
                                              cusparseConstDnVecDescr_t x, const void *beta,
                                              cusparseDnVecDescr_t y, cudaDataType ct,
                                              cusparseSpMVAlg_t alg, size_t *size)
{
    (void)alg;
    cusparseStatus_t s = spmv_check(h, op, alpha, A, x, beta, y, ct);
    if (s != CUSPARSE_STATUS_SUCCESS) return s;
    if (!size) return CUSPARSE_STATUS_INVALID_VALUE;
    *size = WORKSPACE;
    return CUSPARSE_STATUS_SUCCESS;
}
FAKE cusparseStatus_t cusparseSpMV(cusparseHandle_t h, cusparseOperation_t op, const void *alpha,
                                   cusparseConstSpMatDescr_t A, cusparseConstDnVecDescr_t x,
                                   const void *beta, cusparseDnVecDescr_t y, cudaDataType ct,
                                   cusparseSpMVAlg_t alg, void *work)
{
    (void)alg;
    cusparseStatus_t s = spmv_check(h, op, alpha, A, x, beta, y, ct);
    if (s != CUSPARSE_STATUS_SUCCESS) return s;
    if (!work) return CUSPARSE_STATUS_INVALID_VALUE;
    memset(work, 0x5a, WORKSPACE); /* the workspace is the library's to write */
    const int *rp = A->rowptr, *ci = A->colind;
    const float *v = A->values, *xv = x->values;
    float *yv = y->values, a = *(const float *)alpha, b = *(const float *)beta;
    int base = A->base == CUSPARSE_INDEX_BASE_ONE;
    for (int64_t r = 0; r < A->rows; r++) {
        float acc = 0;
        for (int k = rp[r] - base; k < rp[r + 1] - base; k++) acc += v[k] * xv[ci[k] - base];
        yv[r] = a * acc + (b != 0 ? b * yv[r] : 0);
    }
    return CUSPARSE_STATUS_SUCCESS;
}

/* SpGEMM: C = alpha op(A) op(B) (float CSR, 32-bit indices, no transpose),
 * computed densely at compute time, kept in the descriptor and written into
 * C's arrays by copy. Each step's workspace: the size is asked with a NULL
 * buffer (bufferSizeN out), then given with one of at least that size. */
enum { SPGEMM_WS = 64 };
struct cusparseSpGEMMDescr {
    uint32_t magic;
    int estimated;
    int64_t rows, cols;
    float *dense; /* rows x cols, row-major, once computed */
};
FAKE cusparseStatus_t cusparseSpGEMM_createDescr(cusparseSpGEMMDescr_t *d)
{
    if (!d) return CUSPARSE_STATUS_INVALID_VALUE;
    struct cusparseSpGEMMDescr *g = calloc(1, sizeof *g);
    if (!g) return CUSPARSE_STATUS_ALLOC_FAILED;
    g->magic = MAGIC;
    *d = g;
    return CUSPARSE_STATUS_SUCCESS;
}
FAKE cusparseStatus_t cusparseSpGEMM_destroyDescr(cusparseSpGEMMDescr_t g)
{
    if (!g) return CUSPARSE_STATUS_SUCCESS;
    if (g->magic != MAGIC) return CUSPARSE_STATUS_INVALID_VALUE;
    free(g->dense);
    free(g);
    return CUSPARSE_STATUS_SUCCESS;
}
static cusparseStatus_t spgemm_check(cusparseHandle_t h, cusparseOperation_t oa,
                                     cusparseOperation_t ob, const void *alpha,
                                     cusparseConstSpMatDescr_t A, cusparseConstSpMatDescr_t B,
                                     const void *beta, cusparseSpMatDescr_t C, cudaDataType ct,
                                     cusparseSpGEMMDescr_t g)
{
    if (!ok_handle(h)) return CUSPARSE_STATUS_NOT_INITIALIZED;
    if (!alpha || !beta || !A || !B || !C || !g || A->magic != MAGIC || B->magic != MAGIC ||
        C->magic != MAGIC || g->magic != MAGIC || A->cols != B->rows || C->rows != A->rows ||
        C->cols != B->cols)
        return CUSPARSE_STATUS_INVALID_VALUE;
    if (oa != CUSPARSE_OPERATION_NON_TRANSPOSE || ob != CUSPARSE_OPERATION_NON_TRANSPOSE ||
        ct != CUDA_R_32F || A->vt != CUDA_R_32F || B->vt != CUDA_R_32F)
        return CUSPARSE_STATUS_NOT_SUPPORTED;
    return CUSPARSE_STATUS_SUCCESS;
}
/* a step's workspace: the size asked (NULL buffer) or checked and written */
static cusparseStatus_t spgemm_ws(size_t *size, void *buf)
{
    if (!size) return CUSPARSE_STATUS_INVALID_VALUE;
    if (!buf) {
        *size = SPGEMM_WS;
        return CUSPARSE_STATUS_SUCCESS;
    }
    if (*size < SPGEMM_WS) return CUSPARSE_STATUS_INVALID_VALUE;
    memset(buf, 0x5a, SPGEMM_WS);
    return CUSPARSE_STATUS_SUCCESS;
}
FAKE cusparseStatus_t cusparseSpGEMM_workEstimation(
    cusparseHandle_t h, cusparseOperation_t oa, cusparseOperation_t ob, const void *alpha,
    cusparseConstSpMatDescr_t A, cusparseConstSpMatDescr_t B, const void *beta,
    cusparseSpMatDescr_t C, cudaDataType ct, cusparseSpGEMMAlg_t alg, cusparseSpGEMMDescr_t g,
    size_t *size1, void *buf1)
{
    (void)alg;
    cusparseStatus_t s = spgemm_check(h, oa, ob, alpha, A, B, beta, C, ct, g);
    if (s == CUSPARSE_STATUS_SUCCESS) s = spgemm_ws(size1, buf1);
    if (s == CUSPARSE_STATUS_SUCCESS && buf1) g->estimated = 1;
    return s;
}
FAKE cusparseStatus_t cusparseSpGEMM_compute(
    cusparseHandle_t h, cusparseOperation_t oa, cusparseOperation_t ob, const void *alpha,
    cusparseConstSpMatDescr_t A, cusparseConstSpMatDescr_t B, const void *beta,
    cusparseSpMatDescr_t C, cudaDataType ct, cusparseSpGEMMAlg_t alg, cusparseSpGEMMDescr_t g,
    size_t *size2, void *buf2)
{
    (void)alg;
    cusparseStatus_t s = spgemm_check(h, oa, ob, alpha, A, B, beta, C, ct, g);
    if (s == CUSPARSE_STATUS_SUCCESS && !g->estimated) s = CUSPARSE_STATUS_INVALID_VALUE;
    if (s == CUSPARSE_STATUS_SUCCESS) s = spgemm_ws(size2, buf2);
    if (s != CUSPARSE_STATUS_SUCCESS || !buf2) return s;
    float *d = calloc((size_t)(A->rows * B->cols) + 1, sizeof *d);
    if (!d) return CUSPARSE_STATUS_ALLOC_FAILED;
    const int *ar = A->rowptr, *ac = A->colind, *br = B->rowptr, *bc = B->colind;
    const float *av = A->values, *bv = B->values;
    float a = *(const float *)alpha;
    for (int64_t r = 0; r < A->rows; r++)
        for (int i = ar[r]; i < ar[r + 1]; i++)
            for (int j = br[ac[i]]; j < br[ac[i] + 1]; j++)
                d[r * B->cols + bc[j]] += a * av[i] * bv[j];
    int64_t nnz = 0;
    for (int64_t r = 0; r < A->rows; r++) /* the structural nonzeros: any product */
        for (int64_t c = 0; c < B->cols; c++) {
            int hit = 0;
            for (int i = ar[r]; i < ar[r + 1] && !hit; i++)
                for (int j = br[ac[i]]; j < br[ac[i] + 1]; j++) hit |= bc[j] == c;
            nnz += hit;
            if (!hit) d[r * B->cols + c] = NAN; /* no entry */
        }
    free(g->dense);
    g->dense = d, g->rows = A->rows, g->cols = B->cols;
    C->nnz = nnz;
    return CUSPARSE_STATUS_SUCCESS;
}
FAKE cusparseStatus_t cusparseCsrSetPointers(cusparseSpMatDescr_t m, void *rowptr, void *colind,
                                             void *values)
{
    if (!m || m->magic != MAGIC || !rowptr) return CUSPARSE_STATUS_INVALID_VALUE;
    m->rowptr = rowptr, m->colind = colind, m->values = values;
    return CUSPARSE_STATUS_SUCCESS;
}
FAKE cusparseStatus_t cusparseSpGEMM_copy(cusparseHandle_t h, cusparseOperation_t oa,
                                          cusparseOperation_t ob, const void *alpha,
                                          cusparseConstSpMatDescr_t A, cusparseConstSpMatDescr_t B,
                                          const void *beta, cusparseSpMatDescr_t C,
                                          cudaDataType ct, cusparseSpGEMMAlg_t alg,
                                          cusparseSpGEMMDescr_t g)
{
    (void)alg;
    cusparseStatus_t s = spgemm_check(h, oa, ob, alpha, A, B, beta, C, ct, g);
    if (s != CUSPARSE_STATUS_SUCCESS) return s;
    if (!g->dense || (C->nnz && (!C->colind || !C->values))) return CUSPARSE_STATUS_INVALID_VALUE;
    int *rp = C->rowptr, *ci = C->colind;
    float *v = C->values;
    int k = 0;
    for (int64_t r = 0; r < g->rows; r++) {
        rp[r] = k;
        for (int64_t c = 0; c < g->cols; c++)
            if (!isnan(g->dense[r * g->cols + c])) ci[k] = (int)c, v[k++] = g->dense[r * g->cols + c];
    }
    rp[g->rows] = k;
    return CUSPARSE_STATUS_SUCCESS;
}

static const char *const names[] = {
    [CUSPARSE_STATUS_SUCCESS] = "CUSPARSE_STATUS_SUCCESS",
    [CUSPARSE_STATUS_NOT_INITIALIZED] = "CUSPARSE_STATUS_NOT_INITIALIZED",
    [CUSPARSE_STATUS_ALLOC_FAILED] = "CUSPARSE_STATUS_ALLOC_FAILED",
    [CUSPARSE_STATUS_INVALID_VALUE] = "CUSPARSE_STATUS_INVALID_VALUE",
    [CUSPARSE_STATUS_NOT_SUPPORTED] = "CUSPARSE_STATUS_NOT_SUPPORTED",
};
FAKE const char *cusparseGetErrorName(cusparseStatus_t s)
{
    unsigned k = (unsigned)s;
    return k < sizeof names / sizeof *names && names[k] ? names[k] : "fake: another status";
}
FAKE const char *cusparseGetErrorString(cusparseStatus_t s)
{
    return cusparseGetErrorName(s);
}
