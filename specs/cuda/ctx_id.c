/* Context ids as the application would see them natively. The driver numbers
 * contexts 1, 2, ... in the order it creates them, and cuBLASLt keys its
 * kernel registry on that number (cuCtxGetId, or CONTEXT_IDENTITY [4] of the
 * export tables): with a number other than the native one it looked up a
 * library it had never loaded (PyTorch's MLP backward, 2026-11-26).
 * The stub makes one context the native driver does not: CUDART_INTERFACE
 * [2] hands out the primary context by retaining and releasing it at once
 * (export_tables.c), which creates and destroys a context when none was
 * active, and the driver gives the next one a new number. Those burned
 * numbers are noted here and taken out of every id the server answers. */
#include <pthread.h>

#include "apigen_rt.h"
#include "cuda_guest.h"
#include "export_tables.h"

#define MAX_BURNED 64
static pthread_mutex_t lock_ = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long burned_[MAX_BURNED];
static unsigned nburned_;

void apigen_cuda_ctx_id_burned(unsigned long long server_id)
{
    pthread_mutex_lock(&lock_);
    if (nburned_ < MAX_BURNED) burned_[nburned_++] = server_id;
    pthread_mutex_unlock(&lock_);
}

#ifdef APIGEN_HAS_FN_cuCtxGetId /* 12.0 */
APIGEN_EXPORT CUresult cuCtxGetId(CUcontext ctx, unsigned long long *ctxId)
{
    CUresult e = cuda_fwd_cuCtxGetId(ctx, ctxId);
    if (e != CUDA_SUCCESS || !ctxId) return e;
    unsigned long long id = *ctxId, below = 0;
    pthread_mutex_lock(&lock_);
    for (unsigned i = 0; i < nburned_; i++)
        if (burned_[i] < id) below++;
    pthread_mutex_unlock(&lock_);
    *ctxId = id - below;
    return e;
}
#endif
