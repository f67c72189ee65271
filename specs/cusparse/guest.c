/* Hand-written guest code for specs/cusparse.yaml.
 *
 * cusparseGetErrorName and cusparseGetErrorString return strings the caller
 * never frees: the stub asks the server's library once per status value
 * (apigenCusparseStatusText) and keeps the answer for the life of the process
 * (apigen_kept_text), so the text is exactly cuSPARSE's. Without a server it
 * says so instead of inventing cuSPARSE's wording.
 *
 * cusparseAxpby and cusparseRot take scalars of the vectors' value type,
 * which the call does not carry: the stub asks vecY's with cusparseDnVecGet
 * (its error, for a bad descriptor, is the call's) and sends the scalars
 * sized by it (apigenCusparseAxpby, apigenCusparseRot). */
#include "apigen_rt.h"
#include "cusparse_wire.h"

static bool name_text(long status, char *buf, size_t n)
{
    return apigenCusparseStatusText((cusparseStatus_t)status, 0, buf, (unsigned int)n) ==
           CUSPARSE_STATUS_SUCCESS;
}

static bool string_text(long status, char *buf, size_t n)
{
    return apigenCusparseStatusText((cusparseStatus_t)status, 1, buf, (unsigned int)n) ==
           CUSPARSE_STATUS_SUCCESS;
}

APIGEN_EXPORT const char *cusparseGetErrorName(cusparseStatus_t status)
{
    static apigen_kept_texts kept = APIGEN_KEPT_TEXTS_INIT;
    const char *s = apigen_kept_text(&kept, (long)status, name_text);
    return s ? s : "apigen: no cuSPARSE server to ask for this status's text";
}

APIGEN_EXPORT const char *cusparseGetErrorString(cusparseStatus_t status)
{
    static apigen_kept_texts kept = APIGEN_KEPT_TEXTS_INIT;
    const char *s = apigen_kept_text(&kept, (long)status, string_text);
    return s ? s : "apigen: no cuSPARSE server to ask for this status's text";
}

static cusparseStatus_t value_type(cusparseDnVecDescr_t vecY, cudaDataType *vt)
{
    int64_t size;
    void *values;
    return cusparseDnVecGet(vecY, &size, &values, vt);
}

APIGEN_EXPORT cusparseStatus_t cusparseAxpby(cusparseHandle_t handle, const void *alpha,
                                             cusparseConstSpVecDescr_t vecX, const void *beta,
                                             cusparseDnVecDescr_t vecY)
{
    cudaDataType vt;
    cusparseStatus_t s = value_type(vecY, &vt);
    return s != CUSPARSE_STATUS_SUCCESS ? s : apigenCusparseAxpby(handle, alpha, vecX, beta, vecY, vt);
}

APIGEN_EXPORT cusparseStatus_t cusparseRot(cusparseHandle_t handle, const void *c_coeff,
                                           const void *s_coeff, cusparseSpVecDescr_t vecX,
                                           cusparseDnVecDescr_t vecY)
{
    cudaDataType vt;
    cusparseStatus_t s = value_type(vecY, &vt);
    return s != CUSPARSE_STATUS_SUCCESS ? s : apigenCusparseRot(handle, c_coeff, s_coeff, vecX, vecY, vt);
}
