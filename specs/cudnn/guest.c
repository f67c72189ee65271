/* Hand-written guest code for specs/cudnn.yaml.
 *
 * cudnnGetErrorString returns a string the caller never frees: the stub
 * asks the server's library once per status value (apigenCudnnStatusText)
 * and keeps the answer for the life of the process, so the text is exactly
 * cuDNN's. Without a server it says so instead of inventing cuDNN's
 * wording. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "apigen_rt.h"
#include "cudnn_wire.h"

#define KNOWN 64 /* distinct status values kept (cuDNN 9 has about 40) */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    cudnnStatus_t status;
    const char *text;
} known[KNOWN];
static unsigned nknown;
static _Thread_local char odd[256]; /* past KNOWN: this thread's last */

APIGEN_EXPORT const char *cudnnGetErrorString(cudnnStatus_t status)
{
    const char *s = NULL;
    pthread_mutex_lock(&mu);
    for (unsigned i = 0; i < nknown && !s; i++)
        if (known[i].status == status) s = known[i].text;
    pthread_mutex_unlock(&mu);
    if (s) return s;
    char buf[256] = {0};
    if (apigenCudnnStatusText(status, buf, sizeof buf) != CUDNN_STATUS_SUCCESS)
        return "apigen: no cuDNN server to ask for this status's text";
    buf[sizeof buf - 1] = 0;
    size_t len = strlen(buf) + 1;
    char *d = malloc(len);
    if (!d) {
        memcpy(odd, buf, sizeof odd);
        return odd;
    }
    memcpy(d, buf, len);
    pthread_mutex_lock(&mu);
    for (unsigned i = 0; i < nknown && !s; i++)
        if (known[i].status == status) s = known[i].text;
    if (!s && nknown < KNOWN) {
        known[nknown].status = status;
        known[nknown++].text = s = d;
        d = NULL;
    }
    pthread_mutex_unlock(&mu);
    if (!s) { /* the table is full: this thread's copy */
        memcpy(odd, d, len < sizeof odd ? len : sizeof odd);
        odd[sizeof odd - 1] = 0;
        s = odd;
    }
    free(d);
    return s;
}

/* `reads:` (specs/cudnn.yaml defaults.params): how many bytes of a host
 * scalar the caller's object holds. cuDNN's alpha and beta are a double for
 * double tensors and a float for every other type; cudnnSetTensor's value is
 * one element of the tensor's type. The descriptor's type is the server's
 * answer (one round trip; a descriptor the server does not know answers 4,
 * and the call itself then fails on it), so the stub never reads past the
 * caller's float. kind: 0 a tensor descriptor, 1 a filter descriptor. */
static cudnnDataType_t desc_type(const void *desc, unsigned kind, int *ok)
{
    cudnnDataType_t dt = CUDNN_DATA_FLOAT;
    int nb = 0, dims[CUDNN_DIM_MAX], strides[CUDNN_DIM_MAX];
    cudnnStatus_t s;
    if (kind == 0) {
        s = cudnnGetTensorNdDescriptor((cudnnTensorDescriptor_t)desc, CUDNN_DIM_MAX, &dt, &nb, dims, strides);
    } else {
        cudnnTensorFormat_t fmt;
        s = cudnnGetFilterNdDescriptor((cudnnFilterDescriptor_t)desc, CUDNN_DIM_MAX, &dt, &fmt, &nb, dims);
    }
    *ok = s == CUDNN_STATUS_SUCCESS;
    return dt;
}

size_t cudnn_scalar_bytes(const void *desc, unsigned kind)
{
    int ok;
    cudnnDataType_t dt = desc_type(desc, kind, &ok);
    return ok && dt == CUDNN_DATA_DOUBLE ? sizeof(double) : sizeof(float);
}

size_t cudnn_elem_bytes(const void *desc, unsigned kind)
{
    int ok;
    switch (desc_type(desc, kind, &ok)) {
    case CUDNN_DATA_DOUBLE:
    case CUDNN_DATA_INT64: return ok ? 8 : 4;
    case CUDNN_DATA_HALF:
    case CUDNN_DATA_BFLOAT16: return 2;
    case CUDNN_DATA_INT8:
    case CUDNN_DATA_UINT8:
    case CUDNN_DATA_BOOLEAN:
    case CUDNN_DATA_FP8_E4M3:
    case CUDNN_DATA_FP8_E5M2: return 1;
    default: return 4;
    }
}
