/* Hand-written host code for specs/cublasLt.yaml: the status texts and the
 * operations' check of what the guest said about their descriptor. */
#include <stdint.h>
#include <stdio.h>

#include "apigen_rt.h"
#include "cublasLt_wire.h"
#include "scale.h"

cublasStatus_t apigenCublasLtStatusText(cublasStatus_t status, int which, char *buf,
                                        unsigned int length)
{
    if (!buf || length == 0) return CUBLAS_STATUS_INVALID_VALUE;
    const char *s = which ? cublasLtGetStatusString(status) : cublasLtGetStatusName(status);
    snprintf(buf, length, "%s", s ? s : "");
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t apigenCublasLtLoggerForceDisable(void)
{
    return cublasLtLoggerForceDisable();
}

/* The guest's pointer mode and scalar size must be the descriptor's: with
 * another mode the library would read a host copy as a device address or
 * the reverse, with another size past the host copy. */
static cublasStatus_t same_desc(const char *fn, int32_t mode, int32_t scale, int pointerMode,
                                unsigned scaleBytes)
{
    if (mode != pointerMode) {
        apigen_log("%s: the guest sent pointer mode %d, the descriptor's is %d: refused",
                   fn, pointerMode, (int)mode);
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    if (cublaslt_scale_bytes(scale) != scaleBytes) {
        apigen_log("%s: the guest sent %u-byte scalars, the descriptor's scale type %d has %u: "
                   "refused", fn, scaleBytes, (int)scale, cublaslt_scale_bytes(scale));
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t apigenCublasLtMatmul(cublasLtHandle_t lightHandle,
                                    cublasLtMatmulDesc_t computeDesc, int pointerMode,
                                    unsigned int scaleBytes, const void *alpha, const void *A,
                                    cublasLtMatrixLayout_t Adesc, const void *B,
                                    cublasLtMatrixLayout_t Bdesc, const void *beta,
                                    const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
                                    cublasLtMatrixLayout_t Ddesc,
                                    const cublasLtMatmulAlgo_t *algo, void *workspace,
                                    size_t workspaceSizeInBytes, cudaStream_t stream)
{
    int32_t mode = 0, scale = 0;
    size_t w = 0;
    cublasStatus_t st = cublasLtMatmulDescGetAttribute(
        computeDesc, CUBLASLT_MATMUL_DESC_POINTER_MODE, &mode, sizeof mode, &w);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulDescGetAttribute(computeDesc, CUBLASLT_MATMUL_DESC_SCALE_TYPE, &scale,
                                            sizeof scale, &w);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = same_desc("cublasLtMatmul", mode, scale, pointerMode, scaleBytes);
    if (st != CUBLAS_STATUS_SUCCESS) return st;
    return cublasLtMatmul(lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D,
                          Ddesc, algo, workspace, workspaceSizeInBytes, stream);
}

cublasStatus_t apigenCublasLtMatrixTransform(cublasLtHandle_t lightHandle,
                                             cublasLtMatrixTransformDesc_t transformDesc,
                                             int pointerMode, unsigned int scaleBytes,
                                             const void *alpha, const void *A,
                                             cublasLtMatrixLayout_t Adesc, const void *beta,
                                             const void *B, cublasLtMatrixLayout_t Bdesc,
                                             void *C, cublasLtMatrixLayout_t Cdesc,
                                             cudaStream_t stream)
{
    int32_t mode = 0, scale = 0;
    size_t w = 0;
    cublasStatus_t st = cublasLtMatrixTransformDescGetAttribute(
        transformDesc, CUBLASLT_MATRIX_TRANSFORM_DESC_POINTER_MODE, &mode, sizeof mode, &w);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatrixTransformDescGetAttribute(
            transformDesc, CUBLASLT_MATRIX_TRANSFORM_DESC_SCALE_TYPE, &scale, sizeof scale, &w);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = same_desc("cublasLtMatrixTransform", mode, scale, pointerMode, scaleBytes);
    if (st != CUBLAS_STATUS_SUCCESS) return st;
    return cublasLtMatrixTransform(lightHandle, transformDesc, alpha, A, Adesc, beta, B, Bdesc, C,
                                   Cdesc, stream);
}
