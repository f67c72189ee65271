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
