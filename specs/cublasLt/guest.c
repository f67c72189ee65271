/* Hand-written guest code for specs/cublasLt.yaml.
 *
 * Status texts: asked of the server's library once per value and kept (the
 * caller never frees them) with apigen_kept_text, as specs/cublas/guest.c
 * does.
 *
 * cublasLtMatmul and cublasLtMatrixTransform read alpha and beta from host
 * or device memory by their DESCRIPTOR's pointer mode, and a host scalar
 * has the size of the descriptor's scale type. The stub keeps both per
 * descriptor from the calls that set them (Create: the scale type, the mode
 * HOST; SetAttribute of POINTER_MODE or SCALE_TYPE after it succeeded;
 * Destroy forgets), sends them with the operation, and the server checks
 * them against the real descriptor. A descriptor the stub does not know
 * (a forged value, one it could not remember) is asked of the server, whose
 * refusal is the call's error. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apigen_rt.h"
#include "cublasLt_wire.h"
#include "scale.h"

cublasStatus_t cublasLt_fwd_cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *matmulDesc,
                                                     cublasComputeType_t computeType,
                                                     cudaDataType_t scaleType);
cublasStatus_t cublasLt_fwd_cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t matmulDesc);
cublasStatus_t cublasLt_fwd_cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t matmulDesc,
                                                           cublasLtMatmulDescAttributes_t attr,
                                                           const void *buf, size_t sizeInBytes);
cublasStatus_t cublasLt_fwd_cublasLtMatrixTransformDescCreate(
    cublasLtMatrixTransformDesc_t *transformDesc, cudaDataType scaleType);
cublasStatus_t cublasLt_fwd_cublasLtMatrixTransformDescDestroy(
    cublasLtMatrixTransformDesc_t transformDesc);
cublasStatus_t cublasLt_fwd_cublasLtMatrixTransformDescSetAttribute(
    cublasLtMatrixTransformDesc_t transformDesc, cublasLtMatrixTransformDescAttributes_t attr,
    const void *buf, size_t sizeInBytes);

/* ---- status texts ------------------------------------------------------------------ */

static bool name_text(long status, char *buf, size_t n)
{
    return apigenCublasLtStatusText((cublasStatus_t)status, 0, buf, (unsigned int)n) ==
           CUBLAS_STATUS_SUCCESS;
}

static bool string_text(long status, char *buf, size_t n)
{
    return apigenCublasLtStatusText((cublasStatus_t)status, 1, buf, (unsigned int)n) ==
           CUBLAS_STATUS_SUCCESS;
}

APIGEN_EXPORT const char *cublasLtGetStatusName(cublasStatus_t status)
{
    static apigen_kept_texts kept = APIGEN_KEPT_TEXTS_INIT;
    const char *s = apigen_kept_text(&kept, (long)status, name_text);
    return s ? s : "apigen: no cuBLASLt server to ask for this status's text";
}

APIGEN_EXPORT const char *cublasLtGetStatusString(cublasStatus_t status)
{
    static apigen_kept_texts kept = APIGEN_KEPT_TEXTS_INIT;
    const char *s = apigen_kept_text(&kept, (long)status, string_text);
    return s ? s : "apigen: no cuBLASLt server to ask for this status's text";
}

APIGEN_EXPORT cublasStatus_t cublasLtLoggerForceDisable()
{
    return apigenCublasLtLoggerForceDisable();
}

/* ---- what the stub knows of each descriptor ---------------------------------------- */

enum { MATMUL, TRANSFORM };

typedef struct {
    uintptr_t id;   /* the descriptor as the application holds it */
    int kind;       /* MATMUL or TRANSFORM */
    int32_t mode;   /* cublasLtPointerMode_t */
    int32_t scale;  /* cudaDataType of alpha and beta */
} desc_info;

static pthread_mutex_t desc_mu = PTHREAD_MUTEX_INITIALIZER;
static desc_info *descs; /* few at a time: PyTorch makes and drops them per call */
static size_t ndescs, cap;

static desc_info *find_locked(uintptr_t id, int kind)
{
    for (size_t i = 0; i < ndescs; i++)
        if (descs[i].id == id && descs[i].kind == kind) return &descs[i];
    return NULL;
}

static void remember(uintptr_t id, int kind, int32_t scale)
{
    pthread_mutex_lock(&desc_mu);
    desc_info *d = find_locked(id, kind);
    if (!d && ndescs == cap) {
        size_t ncap = cap ? cap * 2 : 16;
        desc_info *nd = realloc(descs, ncap * sizeof *nd);
        if (nd) {
            descs = nd;
            cap = ncap;
        }
    }
    if (!d && ndescs < cap) d = &descs[ndescs++];
    /* out of memory: not remembered; the operation asks the server */
    if (d) *d = (desc_info){id, kind, CUBLASLT_POINTER_MODE_HOST, scale};
    pthread_mutex_unlock(&desc_mu);
}

static void update(uintptr_t id, int kind, const int32_t *mode, const int32_t *scale)
{
    pthread_mutex_lock(&desc_mu);
    desc_info *d = find_locked(id, kind);
    if (d && mode) d->mode = *mode;
    if (d && scale) d->scale = *scale;
    pthread_mutex_unlock(&desc_mu);
}

static void forget(uintptr_t id, int kind)
{
    pthread_mutex_lock(&desc_mu);
    desc_info *d = find_locked(id, kind);
    if (d) *d = descs[--ndescs];
    pthread_mutex_unlock(&desc_mu);
}

static bool known_desc(uintptr_t id, int kind, int32_t *mode, int32_t *scale)
{
    pthread_mutex_lock(&desc_mu);
    desc_info *d = find_locked(id, kind);
    if (d) {
        *mode = d->mode;
        *scale = d->scale;
    }
    pthread_mutex_unlock(&desc_mu);
    return d != NULL;
}

/* a matmul descriptor's values from the stub's table, else from the server */
static cublasStatus_t matmul_desc(cublasLtMatmulDesc_t desc, int32_t *mode, int32_t *scale)
{
    if (known_desc((uintptr_t)desc, MATMUL, mode, scale)) return CUBLAS_STATUS_SUCCESS;
    size_t w = 0;
    apigen_hold_deferred(true); /* a queued call's error is for the application's next call */
    cublasStatus_t st = cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_POINTER_MODE,
                                                       mode, sizeof *mode, &w);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_SCALE_TYPE, scale,
                                            sizeof *scale, &w);
    apigen_hold_deferred(false);
    return st;
}

static cublasStatus_t transform_desc(cublasLtMatrixTransformDesc_t desc, int32_t *mode,
                                     int32_t *scale)
{
    if (known_desc((uintptr_t)desc, TRANSFORM, mode, scale)) return CUBLAS_STATUS_SUCCESS;
    size_t w = 0;
    apigen_hold_deferred(true); /* a queued call's error is for the application's next call */
    cublasStatus_t st = cublasLtMatrixTransformDescGetAttribute(
        desc, CUBLASLT_MATRIX_TRANSFORM_DESC_POINTER_MODE, mode, sizeof *mode, &w);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatrixTransformDescGetAttribute(
            desc, CUBLASLT_MATRIX_TRANSFORM_DESC_SCALE_TYPE, scale, sizeof *scale, &w);
    apigen_hold_deferred(false);
    return st;
}

/* an int32_t attribute value the library accepted (it refuses other sizes) */
static const int32_t *i32(const void *buf, size_t size, int32_t *v)
{
    if (!buf || size != sizeof *v) return NULL;
    memcpy(v, buf, sizeof *v);
    return v;
}

APIGEN_EXPORT cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *matmulDesc,
                                                      cublasComputeType_t computeType,
                                                      cudaDataType_t scaleType)
{
    cublasStatus_t st = cublasLt_fwd_cublasLtMatmulDescCreate(matmulDesc, computeType, scaleType);
    if (st == CUBLAS_STATUS_SUCCESS && matmulDesc)
        remember((uintptr_t)*matmulDesc, MATMUL, scaleType);
    return st;
}

APIGEN_EXPORT cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t matmulDesc)
{
    cublasStatus_t st = cublasLt_fwd_cublasLtMatmulDescDestroy(matmulDesc);
    if (st == CUBLAS_STATUS_SUCCESS) forget((uintptr_t)matmulDesc, MATMUL);
    return st;
}

APIGEN_EXPORT cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t matmulDesc,
                                                            cublasLtMatmulDescAttributes_t attr,
                                                            const void *buf, size_t sizeInBytes)
{
    cublasStatus_t st =
        cublasLt_fwd_cublasLtMatmulDescSetAttribute(matmulDesc, attr, buf, sizeInBytes);
    int32_t v;
    if (st == CUBLAS_STATUS_SUCCESS && attr == CUBLASLT_MATMUL_DESC_POINTER_MODE)
        update((uintptr_t)matmulDesc, MATMUL, i32(buf, sizeInBytes, &v), NULL);
    if (st == CUBLAS_STATUS_SUCCESS && attr == CUBLASLT_MATMUL_DESC_SCALE_TYPE)
        update((uintptr_t)matmulDesc, MATMUL, NULL, i32(buf, sizeInBytes, &v));
    return st;
}

APIGEN_EXPORT cublasStatus_t cublasLtMatrixTransformDescCreate(
    cublasLtMatrixTransformDesc_t *transformDesc, cudaDataType scaleType)
{
    cublasStatus_t st = cublasLt_fwd_cublasLtMatrixTransformDescCreate(transformDesc, scaleType);
    if (st == CUBLAS_STATUS_SUCCESS && transformDesc)
        remember((uintptr_t)*transformDesc, TRANSFORM, scaleType);
    return st;
}

APIGEN_EXPORT cublasStatus_t cublasLtMatrixTransformDescDestroy(
    cublasLtMatrixTransformDesc_t transformDesc)
{
    cublasStatus_t st = cublasLt_fwd_cublasLtMatrixTransformDescDestroy(transformDesc);
    if (st == CUBLAS_STATUS_SUCCESS) forget((uintptr_t)transformDesc, TRANSFORM);
    return st;
}

APIGEN_EXPORT cublasStatus_t cublasLtMatrixTransformDescSetAttribute(
    cublasLtMatrixTransformDesc_t transformDesc, cublasLtMatrixTransformDescAttributes_t attr,
    const void *buf, size_t sizeInBytes)
{
    cublasStatus_t st = cublasLt_fwd_cublasLtMatrixTransformDescSetAttribute(transformDesc, attr,
                                                                             buf, sizeInBytes);
    int32_t v;
    if (st == CUBLAS_STATUS_SUCCESS && attr == CUBLASLT_MATRIX_TRANSFORM_DESC_POINTER_MODE)
        update((uintptr_t)transformDesc, TRANSFORM, i32(buf, sizeInBytes, &v), NULL);
    if (st == CUBLAS_STATUS_SUCCESS && attr == CUBLASLT_MATRIX_TRANSFORM_DESC_SCALE_TYPE)
        update((uintptr_t)transformDesc, TRANSFORM, NULL, i32(buf, sizeInBytes, &v));
    return st;
}

/* ---- the operations ------------------------------------------------------------------ */

APIGEN_EXPORT cublasStatus_t cublasLtMatmul(
    cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc, const void *alpha,
    const void *A, cublasLtMatrixLayout_t Adesc, const void *B, cublasLtMatrixLayout_t Bdesc,
    const void *beta, const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
    cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t *algo, void *workspace,
    size_t workspaceSizeInBytes, cudaStream_t stream)
{
    int32_t mode = 0, scale = 0;
    cublasStatus_t st = matmul_desc(computeDesc, &mode, &scale);
    if (st != CUBLAS_STATUS_SUCCESS) return st;
    /* beta is zero in this mode: the library reads none, the server gets none */
    if (mode == CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO) beta = NULL;
    return apigenCublasLtMatmul(lightHandle, computeDesc, mode, cublaslt_scale_bytes(scale), alpha, A,
                                Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc, algo, workspace,
                                workspaceSizeInBytes, stream);
}

APIGEN_EXPORT cublasStatus_t cublasLtMatrixTransform(
    cublasLtHandle_t lightHandle, cublasLtMatrixTransformDesc_t transformDesc,
    const void *alpha, const void *A, cublasLtMatrixLayout_t Adesc, const void *beta,
    const void *B, cublasLtMatrixLayout_t Bdesc, void *C, cublasLtMatrixLayout_t Cdesc,
    cudaStream_t stream)
{
    int32_t mode = 0, scale = 0;
    cublasStatus_t st = transform_desc(transformDesc, &mode, &scale);
    if (st != CUBLAS_STATUS_SUCCESS) return st;
    return apigenCublasLtMatrixTransform(lightHandle, transformDesc, mode, cublaslt_scale_bytes(scale),
                                         alpha, A, Adesc, beta, B, Bdesc, C, Cdesc, stream);
}
