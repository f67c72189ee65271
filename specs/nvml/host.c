/* Hand-written host code for specs/nvml.yaml: the internal calls of
 * specs/nvml/apigen_nvml.h. */
#include <stdio.h>

#include "apigen_rt.h"
#include "nvml_wire.h"

nvmlReturn_t apigenNvmlErrorString(nvmlReturn_t result, char *buf, unsigned int length)
{
    const char *s = nvmlErrorString(result);
    if (!buf || length == 0) return NVML_ERROR_INVALID_ARGUMENT;
    snprintf(buf, length, "%s", s ? s : "");
    return NVML_SUCCESS;
}
