/* A fake libcublasLt.so.13 for CI (no GPU): "device memory" is host memory
 * of the process that loads it (tests/cuda/fake_device.c stands in for the runtime), and the calls
 * examples/cublasLt makes compute on it in plain C: descriptors with typed,
 * sized attributes (a wrong size is CUBLAS_STATUS_INVALID_VALUE, size 0
 * asks for the size, as cuBLASLt does), a heuristic whose best algorithm
 * needs a workspace, and FP32 matmuls with bias, ReLU and GELU epilogues,
 * alpha and beta read by the descriptor's pointer mode. Loaded natively by
 * an example and by the server alike, it makes the whole forwarded path run
 * here: a scalar sent from the wrong memory space, a workspace size lost on
 * the way, an attribute value cut short gives another result or an error.
 * The rest answer CUBLAS_STATUS_NOT_SUPPORTED (fake_weak.c). With
 * FAKE_CUBLASLT_STUCK_MODE set, a matmul descriptor's pointer mode is
 * accepted and not kept (tests/cublasLt/state_check.sh). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>

#define EXPORT __attribute__((visibility("default")))
#define ALGO_ID 42
#define ALGO_WORKSPACE 4096 /* what the best algorithm needs */

struct cublasLtContext { uint32_t magic; };
#define MAGIC_H 0x17a11du
#define MAGIC_D 0x17d35cu
#define MAGIC_L 0x17ca70u
#define MAGIC_P 0x17f4e1u

typedef struct {
    uint32_t magic;
    int32_t compute, scale, mode, transa, transb;
    uint32_t epilogue;
    uint64_t bias;
    uint64_t emulation; /* a cublasLtEmulationDesc_t */
} fdesc;
typedef struct {
    uint32_t magic;
    int32_t type, order;
    uint64_t rows, cols;
    int64_t ld;
} flayout;
typedef struct {
    uint32_t magic;
    uint64_t max_workspace;
} fpref;

static int is(const void *p, uint32_t magic)
{
    return p && *(const uint32_t *)p == magic;
}

/* one attribute: its storage and size; set/get with cuBLASLt's size rules */
static cublasStatus_t attr_set(void *field, size_t size, const void *buf, size_t n)
{
    if (!field) return CUBLAS_STATUS_INVALID_VALUE; /* an attribute the fake does not keep */
    if (!buf || n != size) return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(field, buf, size);
    return CUBLAS_STATUS_SUCCESS;
}
static cublasStatus_t attr_get(const void *field, size_t size, void *buf, size_t n, size_t *written)
{
    if (!field) return CUBLAS_STATUS_INVALID_VALUE;
    if (n == 0) {
        if (!written) return CUBLAS_STATUS_INVALID_VALUE;
        *written = size;
        return CUBLAS_STATUS_SUCCESS;
    }
    if (!buf || n != size) return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(buf, field, size);
    if (written) *written = size;
    return CUBLAS_STATUS_SUCCESS;
}

static const char *const names[] = {
    [CUBLAS_STATUS_SUCCESS] = "CUBLAS_STATUS_SUCCESS",
    [CUBLAS_STATUS_NOT_INITIALIZED] = "CUBLAS_STATUS_NOT_INITIALIZED",
    [CUBLAS_STATUS_ALLOC_FAILED] = "CUBLAS_STATUS_ALLOC_FAILED",
    [CUBLAS_STATUS_INVALID_VALUE] = "CUBLAS_STATUS_INVALID_VALUE",
    [CUBLAS_STATUS_ARCH_MISMATCH] = "CUBLAS_STATUS_ARCH_MISMATCH",
    [CUBLAS_STATUS_MAPPING_ERROR] = "CUBLAS_STATUS_MAPPING_ERROR",
    [CUBLAS_STATUS_EXECUTION_FAILED] = "CUBLAS_STATUS_EXECUTION_FAILED",
    [CUBLAS_STATUS_INTERNAL_ERROR] = "CUBLAS_STATUS_INTERNAL_ERROR",
    [CUBLAS_STATUS_NOT_SUPPORTED] = "CUBLAS_STATUS_NOT_SUPPORTED",
    [CUBLAS_STATUS_LICENSE_ERROR] = "CUBLAS_STATUS_LICENSE_ERROR",
};
EXPORT const char *cublasLtGetStatusName(cublasStatus_t s)
{
    unsigned k = (unsigned)s;
    return k < sizeof names / sizeof *names && names[k] ? names[k] : "CUBLAS_STATUS_UNKNOWN";
}
EXPORT const char *cublasLtGetStatusString(cublasStatus_t s)
{
    return cublasLtGetStatusName(s);
}
EXPORT size_t cublasLtGetVersion(void) { return 130000; }

EXPORT cublasStatus_t cublasLtCreate(cublasLtHandle_t *h)
{
    if (!h) return CUBLAS_STATUS_INVALID_VALUE;
    struct cublasLtContext *c = calloc(1, sizeof *c);
    if (!c) return CUBLAS_STATUS_ALLOC_FAILED;
    c->magic = MAGIC_H;
    *h = c;
    return CUBLAS_STATUS_SUCCESS;
}
EXPORT cublasStatus_t cublasLtDestroy(cublasLtHandle_t h)
{
    if (!is(h, MAGIC_H)) return CUBLAS_STATUS_NOT_INITIALIZED;
    h->magic = 0;
    free(h);
    return CUBLAS_STATUS_SUCCESS;
}

/* ---- matmul descriptor ---- */
EXPORT cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *d, cublasComputeType_t compute,
                                               cudaDataType_t scale)
{
    if (!d) return CUBLAS_STATUS_INVALID_VALUE;
    fdesc *f = calloc(1, sizeof *f);
    if (!f) return CUBLAS_STATUS_ALLOC_FAILED;
    *f = (fdesc){MAGIC_D, compute, scale, CUBLASLT_POINTER_MODE_HOST, CUBLAS_OP_N, CUBLAS_OP_N,
                 CUBLASLT_EPILOGUE_DEFAULT, 0, 0};
    *d = (cublasLtMatmulDesc_t)f;
    return CUBLAS_STATUS_SUCCESS;
}
EXPORT cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d)
{
    if (!is(d, MAGIC_D)) return CUBLAS_STATUS_NOT_INITIALIZED;
    ((fdesc *)d)->magic = 0;
    free(d);
    return CUBLAS_STATUS_SUCCESS;
}
static void *desc_field(fdesc *f, cublasLtMatmulDescAttributes_t a, size_t *size)
{
    *size = 4;
    switch (a) {
    case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE: return &f->compute;
    case CUBLASLT_MATMUL_DESC_SCALE_TYPE: return &f->scale;
    case CUBLASLT_MATMUL_DESC_POINTER_MODE: return &f->mode;
    case CUBLASLT_MATMUL_DESC_TRANSA: return &f->transa;
    case CUBLASLT_MATMUL_DESC_TRANSB: return &f->transb;
    case CUBLASLT_MATMUL_DESC_EPILOGUE: return &f->epilogue;
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER: *size = 8; return &f->bias;
    case CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR: *size = 8; return &f->emulation;
    default: return NULL;
    }
}
EXPORT cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d,
                                                     cublasLtMatmulDescAttributes_t a,
                                                     const void *buf, size_t n)
{
    if (!is(d, MAGIC_D)) return CUBLAS_STATUS_NOT_INITIALIZED;
    size_t size;
    void *field = desc_field((fdesc *)d, a, &size);
    /* tests/cublasLt/state_check.sh: the mode is answered as set, and kept */
    static int stuck = -1;
    if (stuck < 0) stuck = getenv("FAKE_CUBLASLT_STUCK_MODE") != NULL;
    if (stuck && a == CUBLASLT_MATMUL_DESC_POINTER_MODE) {
        int32_t ignored;
        return attr_set(&ignored, sizeof ignored, buf, n);
    }
    return attr_set(field, size, buf, n);
}
EXPORT cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t d,
                                                     cublasLtMatmulDescAttributes_t a, void *buf,
                                                     size_t n, size_t *written)
{
    if (!is(d, MAGIC_D)) return CUBLAS_STATUS_NOT_INITIALIZED;
    size_t size;
    const void *field = desc_field((fdesc *)d, a, &size);
    return attr_get(field, size, buf, n, written);
}

/* ---- matrix layout ---- */
/* At most FAKE_CUBLASLT_MAX_LAYOUTS layouts live at once: the next create
 * fails as a host allocation would (tests/cublasLt/step_loop.c makes one
 * fail, the one error a queued create can meet) */
#define FAKE_CUBLASLT_MAX_LAYOUTS 512
static int live_layouts;
EXPORT cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *l, cudaDataType type,
                                                 uint64_t rows, uint64_t cols, int64_t ld)
{
    if (!l) return CUBLAS_STATUS_INVALID_VALUE;
    if (live_layouts >= FAKE_CUBLASLT_MAX_LAYOUTS) return CUBLAS_STATUS_ALLOC_FAILED;
    flayout *f = calloc(1, sizeof *f);
    if (!f) return CUBLAS_STATUS_ALLOC_FAILED;
    live_layouts++;
    *f = (flayout){MAGIC_L, type, CUBLASLT_ORDER_COL, rows, cols, ld};
    *l = (cublasLtMatrixLayout_t)f;
    return CUBLAS_STATUS_SUCCESS;
}
EXPORT cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l)
{
    if (!is(l, MAGIC_L)) return CUBLAS_STATUS_NOT_INITIALIZED;
    ((flayout *)l)->magic = 0;
    free(l);
    live_layouts--;
    return CUBLAS_STATUS_SUCCESS;
}
static void *layout_field(flayout *f, cublasLtMatrixLayoutAttribute_t a, size_t *size)
{
    *size = 8;
    switch (a) {
    case CUBLASLT_MATRIX_LAYOUT_TYPE: *size = 4; return &f->type;
    case CUBLASLT_MATRIX_LAYOUT_ORDER: *size = 4; return &f->order;
    case CUBLASLT_MATRIX_LAYOUT_ROWS: return &f->rows;
    case CUBLASLT_MATRIX_LAYOUT_COLS: return &f->cols;
    case CUBLASLT_MATRIX_LAYOUT_LD: return &f->ld;
    default: return NULL;
    }
}
EXPORT cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t l,
                                                       cublasLtMatrixLayoutAttribute_t a,
                                                       const void *buf, size_t n)
{
    if (!is(l, MAGIC_L)) return CUBLAS_STATUS_NOT_INITIALIZED;
    size_t size;
    void *field = layout_field((flayout *)l, a, &size);
    return attr_set(field, size, buf, n);
}
EXPORT cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t l,
                                                       cublasLtMatrixLayoutAttribute_t a, void *buf,
                                                       size_t n, size_t *written)
{
    if (!is(l, MAGIC_L)) return CUBLAS_STATUS_NOT_INITIALIZED;
    size_t size;
    const void *field = layout_field((flayout *)l, a, &size);
    return attr_get(field, size, buf, n, written);
}

/* ---- preference ---- */
EXPORT cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *p)
{
    if (!p) return CUBLAS_STATUS_INVALID_VALUE;
    fpref *f = calloc(1, sizeof *f);
    if (!f) return CUBLAS_STATUS_ALLOC_FAILED;
    f->magic = MAGIC_P;
    *p = (cublasLtMatmulPreference_t)f;
    return CUBLAS_STATUS_SUCCESS;
}
EXPORT cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p)
{
    if (!is(p, MAGIC_P)) return CUBLAS_STATUS_NOT_INITIALIZED;
    ((fpref *)p)->magic = 0;
    free(p);
    return CUBLAS_STATUS_SUCCESS;
}
EXPORT cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t p,
                                                           cublasLtMatmulPreferenceAttributes_t a,
                                                           const void *buf, size_t n)
{
    if (!is(p, MAGIC_P)) return CUBLAS_STATUS_NOT_INITIALIZED;
    return attr_set(a == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES ? &((fpref *)p)->max_workspace
                                                                   : NULL,
                    8, buf, n);
}

/* ---- heuristic and matmul ---- */
static int fp32_layout(cublasLtMatrixLayout_t l)
{
    return is(l, MAGIC_L) && ((flayout *)l)->type == CUDA_R_32F &&
           ((flayout *)l)->order == CUBLASLT_ORDER_COL;
}

/* What the heuristic's answer says of the question (algo.data[2]): every
 * attribute the fake keeps but addresses, so a changed attribute changes
 * the answer and an answer kept for other descriptors shows
 * (tests/cublasLt/memo_loop.c) */
static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    return h;
}
static uint64_t question_print(const fdesc *d, const flayout *const l[4], const fpref *p)
{
    uint64_t h = mix(mix(mix(mix(mix(mix(0, (uint64_t)d->compute), (uint64_t)d->scale), (uint64_t)d->mode),
                             (uint64_t)d->transa), (uint64_t)d->transb), d->epilogue);
    for (int i = 0; i < 4; i++)
        h = mix(mix(mix(mix(mix(h, (uint64_t)l[i]->type), (uint64_t)l[i]->order), l[i]->rows), l[i]->cols),
                (uint64_t)l[i]->ld);
    return mix(h, p->max_workspace) & 0xffffffffffffull;
}

/* the best algorithm needs ALGO_WORKSPACE bytes, the second none */
EXPORT cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t h, cublasLtMatmulDesc_t d, cublasLtMatrixLayout_t la,
    cublasLtMatrixLayout_t lb, cublasLtMatrixLayout_t lc, cublasLtMatrixLayout_t ld,
    cublasLtMatmulPreference_t p, int requested, cublasLtMatmulHeuristicResult_t res[],
    int *returned)
{
    if (!is(h, MAGIC_H) || !is(d, MAGIC_D) || !is(p, MAGIC_P)) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (requested < 1 || !res || !returned) return CUBLAS_STATUS_INVALID_VALUE;
    if (!fp32_layout(la) || !fp32_layout(lb) || !fp32_layout(lc) || !fp32_layout(ld))
        return CUBLAS_STATUS_NOT_SUPPORTED;
    int n = 0;
    size_t need[2] = {ALGO_WORKSPACE, 0};
    const flayout *ls[4] = {(const flayout *)la, (const flayout *)lb, (const flayout *)lc,
                            (const flayout *)ld};
    uint64_t print = question_print((const fdesc *)d, ls, (const fpref *)p);
    for (int i = 0; i < 2 && n < requested; i++) {
        if (need[i] > ((fpref *)p)->max_workspace) continue;
        memset(&res[n], 0, sizeof res[n]);
        res[n].algo.data[0] = ALGO_ID + i;
        res[n].algo.data[1] = need[i];
        res[n].algo.data[2] = print;
        res[n].workspaceSize = need[i];
        res[n].state = CUBLAS_STATUS_SUCCESS;
        res[n].wavesCount = 1.0f;
        n++;
    }
    *returned = n;
    return n ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
}

static float gelu(float x)
{
    return 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
}

EXPORT cublasStatus_t cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t desc,
                                     const void *alpha, const void *A, cublasLtMatrixLayout_t Al,
                                     const void *B, cublasLtMatrixLayout_t Bl, const void *beta,
                                     const void *C, cublasLtMatrixLayout_t Cl, void *D,
                                     cublasLtMatrixLayout_t Dl, const cublasLtMatmulAlgo_t *algo,
                                     void *workspace, size_t workspaceSize, cudaStream_t stream)
{
    (void)stream;
    if (!is(h, MAGIC_H) || !is(desc, MAGIC_D)) return CUBLAS_STATUS_NOT_INITIALIZED;
    const fdesc *f = (const fdesc *)desc;
    if (!fp32_layout(Al) || !fp32_layout(Bl) || !fp32_layout(Cl) || !fp32_layout(Dl) ||
        f->scale != CUDA_R_32F || f->compute != CUBLAS_COMPUTE_32F)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    if (f->mode != CUBLASLT_POINTER_MODE_HOST && f->mode != CUBLASLT_POINTER_MODE_DEVICE)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    size_t need = algo ? (size_t)algo->data[1] : 0;
    if (algo && (algo->data[0] < ALGO_ID || algo->data[0] > ALGO_ID + 1))
        return CUBLAS_STATUS_INVALID_VALUE;
    if (need > workspaceSize || (need && !workspace)) return CUBLAS_STATUS_INVALID_VALUE;
    const flayout *la = (const flayout *)Al, *lb = (const flayout *)Bl, *lc = (const flayout *)Cl,
                  *ld = (const flayout *)Dl;
    uint64_t m = ld->rows, n = ld->cols;
    uint64_t k = f->transa == CUBLAS_OP_N ? la->cols : la->rows;
    if ((f->transa == CUBLAS_OP_N ? la->rows : la->cols) != m ||
        (f->transb == CUBLAS_OP_N ? lb->rows : lb->cols) != k ||
        (f->transb == CUBLAS_OP_N ? lb->cols : lb->rows) != n || lc->rows != m || lc->cols != n)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (!alpha || !beta || !A || !B || !D) return CUBLAS_STATUS_INVALID_VALUE;
    /* the pointer mode decides, as in cuBLASLt; the fake's "device" is host memory */
    float al = *(const float *)alpha, be = *(const float *)beta;
    const float *a = A, *b = B, *c = C, *bias = (const float *)(uintptr_t)f->bias;
    int with_bias = f->epilogue == CUBLASLT_EPILOGUE_BIAS || f->epilogue == CUBLASLT_EPILOGUE_RELU_BIAS ||
                    f->epilogue == CUBLASLT_EPILOGUE_GELU_BIAS;
    if (with_bias && !bias) return CUBLAS_STATUS_INVALID_VALUE;
    if (workspace && workspaceSize) memset(workspace, 0xa5, workspaceSize < 64 ? workspaceSize : 64);
    float *out = malloc(m * n * sizeof *out);
    if (!out) return CUBLAS_STATUS_ALLOC_FAILED;
    for (uint64_t j = 0; j < n; j++)
        for (uint64_t i = 0; i < m; i++) {
            float s = 0;
            for (uint64_t l = 0; l < k; l++) {
                float x = f->transa == CUBLAS_OP_N ? a[l * la->ld + i] : a[i * la->ld + l];
                float y = f->transb == CUBLAS_OP_N ? b[j * lb->ld + l] : b[l * lb->ld + j];
                s += x * y;
            }
            float v = al * s + (be != 0 && c ? be * c[j * lc->ld + i] : 0);
            if (with_bias) v += bias[i];
            if (f->epilogue == CUBLASLT_EPILOGUE_RELU || f->epilogue == CUBLASLT_EPILOGUE_RELU_BIAS)
                v = v > 0 ? v : 0;
            if (f->epilogue == CUBLASLT_EPILOGUE_GELU || f->epilogue == CUBLASLT_EPILOGUE_GELU_BIAS)
                v = gelu(v);
            out[j * m + i] = v;
        }
    float *d = D;
    for (uint64_t j = 0; j < n; j++)
        for (uint64_t i = 0; i < m; i++) d[j * ld->ld + i] = out[j * m + i];
    free(out);
    return CUBLAS_STATUS_SUCCESS;
}

/* ---- matrix transform: C = alpha op(A) + beta op(B) ---- */
#define MAGIC_T 0x17f7a5u
typedef struct {
    uint32_t magic;
    int32_t scale, mode, transa, transb;
} ftransform;
EXPORT cublasStatus_t cublasLtMatrixTransformDescCreate(cublasLtMatrixTransformDesc_t *t,
                                                        cudaDataType scale)
{
    if (!t) return CUBLAS_STATUS_INVALID_VALUE;
    ftransform *f = calloc(1, sizeof *f);
    if (!f) return CUBLAS_STATUS_ALLOC_FAILED;
    *f = (ftransform){MAGIC_T, scale, CUBLASLT_POINTER_MODE_HOST, CUBLAS_OP_N, CUBLAS_OP_N};
    *t = (cublasLtMatrixTransformDesc_t)f;
    return CUBLAS_STATUS_SUCCESS;
}
EXPORT cublasStatus_t cublasLtMatrixTransformDescDestroy(cublasLtMatrixTransformDesc_t t)
{
    if (!is(t, MAGIC_T)) return CUBLAS_STATUS_NOT_INITIALIZED;
    ((ftransform *)t)->magic = 0;
    free(t);
    return CUBLAS_STATUS_SUCCESS;
}
static void *transform_field(ftransform *f, cublasLtMatrixTransformDescAttributes_t a)
{
    switch (a) {
    case CUBLASLT_MATRIX_TRANSFORM_DESC_SCALE_TYPE: return &f->scale;
    case CUBLASLT_MATRIX_TRANSFORM_DESC_POINTER_MODE: return &f->mode;
    case CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA: return &f->transa;
    case CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSB: return &f->transb;
    default: return NULL;
    }
}
EXPORT cublasStatus_t cublasLtMatrixTransformDescSetAttribute(
    cublasLtMatrixTransformDesc_t t, cublasLtMatrixTransformDescAttributes_t a, const void *buf,
    size_t n)
{
    if (!is(t, MAGIC_T)) return CUBLAS_STATUS_NOT_INITIALIZED;
    return attr_set(transform_field((ftransform *)t, a), 4, buf, n);
}
EXPORT cublasStatus_t cublasLtMatrixTransformDescGetAttribute(
    cublasLtMatrixTransformDesc_t t, cublasLtMatrixTransformDescAttributes_t a, void *buf,
    size_t n, size_t *written)
{
    if (!is(t, MAGIC_T)) return CUBLAS_STATUS_NOT_INITIALIZED;
    return attr_get(transform_field((ftransform *)t, a), 4, buf, n, written);
}
EXPORT cublasStatus_t cublasLtMatrixTransform(cublasLtHandle_t h, cublasLtMatrixTransformDesc_t t,
                                              const void *alpha, const void *A,
                                              cublasLtMatrixLayout_t Al, const void *beta,
                                              const void *B, cublasLtMatrixLayout_t Bl, void *C,
                                              cublasLtMatrixLayout_t Cl, cudaStream_t stream)
{
    (void)stream;
    if (!is(h, MAGIC_H) || !is(t, MAGIC_T)) return CUBLAS_STATUS_NOT_INITIALIZED;
    const ftransform *f = (const ftransform *)t;
    if (f->scale != CUDA_R_32F || !fp32_layout(Cl) || (A && !fp32_layout(Al)) ||
        (B && !fp32_layout(Bl)))
        return CUBLAS_STATUS_NOT_SUPPORTED;
    if (!alpha || !beta || !C) return CUBLAS_STATUS_INVALID_VALUE;
    const flayout *la = (const flayout *)Al, *lb = (const flayout *)Bl, *lc = (const flayout *)Cl;
    float al = *(const float *)alpha, be = *(const float *)beta;
    const float *a = A, *b = B;
    float *c = C;
    for (uint64_t j = 0; j < lc->cols; j++)
        for (uint64_t i = 0; i < lc->rows; i++) {
            float v = 0;
            if (a) v += al * (f->transa == CUBLAS_OP_N ? a[j * la->ld + i] : a[i * la->ld + j]);
            if (b) v += be * (f->transb == CUBLAS_OP_N ? b[j * lb->ld + i] : b[i * lb->ld + j]);
            c[j * lc->ld + i] = v;
        }
    return CUBLAS_STATUS_SUCCESS;
}

/* ---- the algorithm calls: two algorithms, ALGO_ID and ALGO_ID + 1 ---- */
EXPORT cublasStatus_t cublasLtMatmulAlgoGetIds(cublasLtHandle_t h, cublasComputeType_t compute,
                                               cudaDataType_t scale, cudaDataType_t at,
                                               cudaDataType_t bt, cudaDataType_t ct,
                                               cudaDataType_t dt, int requested, int ids[],
                                               int *returned)
{
    if (!is(h, MAGIC_H)) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (requested < 1 || !ids || !returned) return CUBLAS_STATUS_INVALID_VALUE;
    if (compute != CUBLAS_COMPUTE_32F || scale != CUDA_R_32F || at != CUDA_R_32F ||
        bt != CUDA_R_32F || ct != CUDA_R_32F || dt != CUDA_R_32F) {
        *returned = 0;
        return CUBLAS_STATUS_SUCCESS;
    }
    int n = requested < 2 ? requested : 2;
    for (int i = 0; i < n; i++) ids[i] = ALGO_ID + i;
    *returned = n;
    return CUBLAS_STATUS_SUCCESS;
}
EXPORT cublasStatus_t cublasLtMatmulAlgoInit(cublasLtHandle_t h, cublasComputeType_t compute,
                                             cudaDataType_t scale, cudaDataType_t at,
                                             cudaDataType_t bt, cudaDataType_t ct,
                                             cudaDataType_t dt, int id, cublasLtMatmulAlgo_t *algo)
{
    (void)compute, (void)scale, (void)at, (void)bt, (void)ct, (void)dt;
    if (!is(h, MAGIC_H)) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!algo || id < ALGO_ID || id > ALGO_ID + 1) return CUBLAS_STATUS_INVALID_VALUE;
    memset(algo, 0, sizeof *algo);
    algo->data[0] = (uint64_t)id;
    algo->data[1] = id == ALGO_ID ? ALGO_WORKSPACE : 0;
    return CUBLAS_STATUS_SUCCESS;
}
EXPORT cublasStatus_t cublasLtMatmulAlgoConfigGetAttribute(const cublasLtMatmulAlgo_t *algo,
                                                           cublasLtMatmulAlgoConfigAttributes_t a,
                                                           void *buf, size_t n, size_t *written)
{
    if (!algo) return CUBLAS_STATUS_INVALID_VALUE;
    int32_t id = (int32_t)algo->data[0];
    return attr_get(a == CUBLASLT_ALGO_CONFIG_ID ? &id : NULL, sizeof id, buf, n, written);
}
EXPORT cublasStatus_t cublasLtMatmulAlgoCheck(cublasLtHandle_t h, cublasLtMatmulDesc_t d,
                                              cublasLtMatrixLayout_t la, cublasLtMatrixLayout_t lb,
                                              cublasLtMatrixLayout_t lc, cublasLtMatrixLayout_t ld,
                                              const cublasLtMatmulAlgo_t *algo,
                                              cublasLtMatmulHeuristicResult_t *res)
{
    if (!is(h, MAGIC_H) || !is(d, MAGIC_D)) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!algo || !res) return CUBLAS_STATUS_INVALID_VALUE;
    if (!fp32_layout(la) || !fp32_layout(lb) || !fp32_layout(lc) || !fp32_layout(ld))
        return CUBLAS_STATUS_NOT_SUPPORTED;
    if (algo->data[0] < ALGO_ID || algo->data[0] > ALGO_ID + 1) return CUBLAS_STATUS_INVALID_VALUE;
    memset(res, 0, sizeof *res);
    res->algo = *algo;
    res->workspaceSize = (size_t)algo->data[1];
    res->state = CUBLAS_STATUS_SUCCESS;
    res->wavesCount = 1.0f;
    return CUBLAS_STATUS_SUCCESS;
}

/* ---- emulation descriptor: made and destroyed (its attributes: not kept) ---- */
#define MAGIC_E 0x17e3a1u
EXPORT cublasStatus_t cublasLtEmulationDescCreate(cublasLtEmulationDesc_t *e)
{
    if (!e) return CUBLAS_STATUS_INVALID_VALUE;
    uint32_t *f = calloc(1, 64);
    if (!f) return CUBLAS_STATUS_ALLOC_FAILED;
    *f = MAGIC_E;
    *e = (cublasLtEmulationDesc_t)f;
    return CUBLAS_STATUS_SUCCESS;
}
EXPORT cublasStatus_t cublasLtEmulationDescDestroy(cublasLtEmulationDesc_t e)
{
    if (!is(e, MAGIC_E)) return CUBLAS_STATUS_NOT_INITIALIZED;
    *(uint32_t *)e = 0;
    free(e);
    return CUBLAS_STATUS_SUCCESS;
}
