/* Hand-written guest code for specs/cublas.yaml.
 *
 * cublasGetStatusName and cublasGetStatusString return strings the caller
 * never frees: the stub asks the server's library once per status value
 * (apigenCublasStatusText) and keeps the answer for the life of the process
 * (apigen_kept_text), so the text is exactly cuBLAS's. Without a server it
 * says so instead of inventing cuBLAS's wording.
 *
 * cublasGetVersion_v2 is answered without its handle, which cuBLAS does
 * not look at either (a NULL handle is the common idiom). */
#include "apigen_rt.h"
#include "cublas_wire.h"

static bool name_text(long status, char *buf, size_t n)
{
    return apigenCublasStatusText((cublasStatus_t)status, 0, buf, (unsigned int)n) ==
           CUBLAS_STATUS_SUCCESS;
}

static bool string_text(long status, char *buf, size_t n)
{
    return apigenCublasStatusText((cublasStatus_t)status, 1, buf, (unsigned int)n) ==
           CUBLAS_STATUS_SUCCESS;
}

APIGEN_EXPORT const char *cublasGetStatusName(cublasStatus_t status)
{
    static apigen_kept_texts kept = APIGEN_KEPT_TEXTS_INIT;
    const char *s = apigen_kept_text(&kept, (long)status, name_text);
    return s ? s : "apigen: no cuBLAS server to ask for this status's text";
}

APIGEN_EXPORT const char *cublasGetStatusString(cublasStatus_t status)
{
    static apigen_kept_texts kept = APIGEN_KEPT_TEXTS_INIT;
    const char *s = apigen_kept_text(&kept, (long)status, string_text);
    return s ? s : "apigen: no cuBLAS server to ask for this status's text";
}

/* The library's version does not depend on a handle: cuBLAS answers
 * cublasGetVersion_v2(NULL, &v), which programs use to print or key on the
 * version before they make one. The handle-less cublasGetVersion gives the
 * same number (CUBLAS_VERSION of the server's library). */
APIGEN_EXPORT cublasStatus_t cublasGetVersion_v2(cublasHandle_t handle, int *version)
{
    (void)handle;
    if (!version) return CUBLAS_STATUS_INVALID_VALUE;
    return cublasGetVersion(version);
}
