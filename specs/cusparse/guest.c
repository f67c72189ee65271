/* Hand-written guest code for specs/cusparse.yaml.
 *
 * cusparseGetErrorName and cusparseGetErrorString return strings the caller
 * never frees: the stub asks the server's library once per status value
 * (apigenCusparseStatusText) and keeps the answer for the life of the process,
 * so the text is exactly cuSPARSE's. Without a server it says so instead of
 * inventing cuSPARSE's wording.
 *
 * cusparseAxpby and cusparseRot take scalars of the vectors' value type,
 * which the call does not carry: the stub asks vecY's with cusparseDnVecGet
 * (its error, for a bad descriptor, is the call's) and sends the scalars
 * sized by it (apigenCusparseAxpby, apigenCusparseRot). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "apigen_rt.h"
#include "cusparse_wire.h"

#define KNOWN 64 /* cuSPARSE's status values are 0..11 */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static const char *known[2][KNOWN];
static _Thread_local char odd[2][256]; /* a value past KNOWN: this thread's last */

static const char *status_text(cusparseStatus_t status, int which)
{
    unsigned k = (unsigned)status;
    pthread_mutex_lock(&mu);
    const char *s = k < KNOWN ? known[which][k] : NULL;
    pthread_mutex_unlock(&mu);
    if (s) return s;
    char buf[256] = {0};
    if (apigenCusparseStatusText(status, which, buf, sizeof buf) != CUSPARSE_STATUS_SUCCESS)
        return "apigen: no cuSPARSE server to ask for this status's text";
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

APIGEN_EXPORT const char *cusparseGetErrorName(cusparseStatus_t status)
{
    return status_text(status, 0);
}

APIGEN_EXPORT const char *cusparseGetErrorString(cusparseStatus_t status)
{
    return status_text(status, 1);
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
