/* Hand-written host code for specs/cusparse.yaml: the status texts, and
 * cusparseAxpby and cusparseRot, whose scalars the guest sized from the
 * vectors' value type. */
#include <stdio.h>

#include "apigen_rt.h"
#include "cusparse_wire.h"

cusparseStatus_t apigenCusparseStatusText(cusparseStatus_t status, int which, char *buf,
                                          unsigned int length)
{
    if (!buf || length == 0) return CUSPARSE_STATUS_INVALID_VALUE;
    const char *s = which ? cusparseGetErrorString(status) : cusparseGetErrorName(status);
    snprintf(buf, length, "%s", s ? s : "");
    return CUSPARSE_STATUS_SUCCESS;
}

cusparseStatus_t apigenCusparseAxpby(cusparseHandle_t handle, const void *alpha,
                                     cusparseConstSpVecDescr_t vecX, const void *beta,
                                     cusparseDnVecDescr_t vecY, cudaDataType valueType)
{
    (void)valueType;
    return cusparseAxpby(handle, alpha, vecX, beta, vecY);
}

cusparseStatus_t apigenCusparseRot(cusparseHandle_t handle, const void *c_coeff,
                                   const void *s_coeff, cusparseSpVecDescr_t vecX,
                                   cusparseDnVecDescr_t vecY, cudaDataType valueType)
{
    (void)valueType;
    return cusparseRot(handle, c_coeff, s_coeff, vecX, vecY);
}
