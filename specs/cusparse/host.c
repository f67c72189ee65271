/* Hand-written host code for specs/cusparse.yaml: the status texts. */
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
