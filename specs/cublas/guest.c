/* Hand-written guest code for specs/cublas.yaml.
 *
 * cublasGetStatusName and cublasGetStatusString return strings the caller
 * never frees: the stub asks the server's library once per status value
 * (apigenCublasStatusText) and keeps the answer for the life of the process,
 * so the text is exactly cuBLAS's. Without a server it says so instead of
 * inventing cuBLAS's wording.
 *
 * cublasGetVersion_v2 is answered without its handle, which cuBLAS does
 * not look at either (a NULL handle is the common idiom). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "apigen_rt.h"
#include "cublas_wire.h"

#define KNOWN 64 /* cuBLAS's status values are 0..16 */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static const char *known[2][KNOWN];
static _Thread_local char odd[2][256]; /* a value past KNOWN: this thread's last */

static const char *status_text(cublasStatus_t status, int which)
{
    unsigned k = (unsigned)status;
    pthread_mutex_lock(&mu);
    const char *s = k < KNOWN ? known[which][k] : NULL;
    pthread_mutex_unlock(&mu);
    if (s) return s;
    char buf[256] = {0};
    apigen_hold_deferred(true); /* a queued call's error is the application's next call's */
    cublasStatus_t got = apigenCublasStatusText(status, which, buf, sizeof buf);
    apigen_hold_deferred(false);
    if (got != CUBLAS_STATUS_SUCCESS)
        return "apigen: no cuBLAS server to ask for this status's text";
    buf[sizeof buf - 1] = 0;
    size_t len = strlen(buf) + 1;
    char *d = k < KNOWN ? malloc(len) : NULL;
    if (!d) {
        memcpy(odd[which], buf, sizeof odd[which]);
        return odd[which];
    }
    memcpy(d, buf, len);
    pthread_mutex_lock(&mu);
    if (!known[which][k]) known[which][k] = d;
    else free(d);
    s = known[which][k];
    pthread_mutex_unlock(&mu);
    return s;
}

APIGEN_EXPORT const char *cublasGetStatusName(cublasStatus_t status)
{
    return status_text(status, 0);
}

APIGEN_EXPORT const char *cublasGetStatusString(cublasStatus_t status)
{
    return status_text(status, 1);
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
