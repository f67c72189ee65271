/* Hand-written host code for specs/cudnn.yaml: the status texts. */
#include <stdio.h>

#include "apigen_rt.h"
#include "cudnn_wire.h"

cudnnStatus_t apigenCudnnStatusText(cudnnStatus_t status, char *buf, unsigned int length)
{
    if (!buf || length == 0) return CUDNN_STATUS_BAD_PARAM;
    const char *s = cudnnGetErrorString(status);
    snprintf(buf, length, "%s", s ? s : "");
    return CUDNN_STATUS_SUCCESS;
}
