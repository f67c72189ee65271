/* Hand-written host code for specs/cublasLt.yaml: the status texts, the
 * operations' check of what the guest said about their descriptor, and the
 * matmul descriptor's attributes whose values are device addresses or
 * handles. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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

/* ---- matmul descriptor attributes that are addresses or handles --------------------- */

static const apigen_handle_type *ht(const char *name)
{
    for (unsigned i = 0; i < apigen_api_cublasLt.nhandle_types; i++)
        if (strcmp(apigen_api_cublasLt.handle_types[i]->name, name) == 0)
            return apigen_api_cublasLt.handle_types[i];
    return NULL;
}

static int is_device_address(cublasLtMatmulDescAttributes_t attr)
{
    switch (attr) {
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER:
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER:
    case CUBLASLT_MATMUL_DESC_A_SCALE_POINTER:
    case CUBLASLT_MATMUL_DESC_B_SCALE_POINTER:
    case CUBLASLT_MATMUL_DESC_C_SCALE_POINTER:
    case CUBLASLT_MATMUL_DESC_D_SCALE_POINTER:
    case CUBLASLT_MATMUL_DESC_AMAX_D_POINTER:
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_POINTER:
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_AMAX_POINTER:
    case CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER: return 1;
    default: return 0;
    }
}

/* A device address must be NULL or the session's memory (cudaMalloc,
 * cuMemAlloc, ...); an emulation descriptor is this client's id, set as the
 * real descriptor. A value of another size goes to the library, which
 * refuses it (CUBLAS_STATUS_INVALID_VALUE). */
cublasStatus_t cublasLt_host_matmul_desc_set(apigen_call_ctx *cx, cublasLtMatmulDesc_t matmulDesc,
                                             cublasLtMatmulDescAttributes_t attr,
                                             const void *buf, size_t sizeInBytes)
{
    uint64_t v = 0;
    if (buf && sizeInBytes == sizeof(void *) && is_device_address(attr)) {
        memcpy(&v, buf, sizeof v);
        if (v && !apigen_dev_owned(cx->session, v, 0, false)) {
            apigen_log("cublasLtMatmulDescSetAttribute: attribute %d: 0x%llx is not device "
                       "memory of this client: refused",
                       (int)attr, (unsigned long long)v);
            return CUBLAS_STATUS_INVALID_VALUE;
        }
    }
    if (buf && sizeInBytes == sizeof(void *) && attr == CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR) {
        void *real = NULL;
        memcpy(&v, buf, sizeof v);
        if (v && !apigen_handle_lookup(cx->session, ht("cublasLtEmulationDesc_t"), v, &real)) {
            apigen_log("cublasLtMatmulDescSetAttribute: emulation descriptor 0x%llx is not one "
                       "of this client: refused", (unsigned long long)v);
            return CUBLAS_STATUS_INVALID_VALUE;
        }
        return cublasLtMatmulDescSetAttribute(matmulDesc, attr, &real, sizeof real);
    }
    return cublasLtMatmulDescSetAttribute(matmulDesc, attr, buf, sizeInBytes);
}

/* An emulation descriptor goes back as the client's id (0 for none). */
cublasStatus_t cublasLt_host_matmul_desc_get(apigen_call_ctx *cx, cublasLtMatmulDesc_t matmulDesc,
                                             cublasLtMatmulDescAttributes_t attr, void *buf,
                                             size_t sizeInBytes, size_t *sizeWritten)
{
    cublasStatus_t st =
        cublasLtMatmulDescGetAttribute(matmulDesc, attr, buf, sizeInBytes, sizeWritten);
    if (st == CUBLAS_STATUS_SUCCESS && buf && sizeInBytes >= sizeof(void *) &&
        attr == CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR) {
        void *real = NULL;
        memcpy(&real, buf, sizeof real);
        uint64_t id =
            real ? apigen_session_handle_id(cx->session, ht("cublasLtEmulationDesc_t"), real) : 0;
        memcpy(buf, &id, sizeof id);
    }
    return st;
}
