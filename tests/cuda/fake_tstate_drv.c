/* A stand-in driver for tests/cuda/tstate_ci.c (contexts only), preloaded
 * with fake_tstate_rt.c into the program natively and into
 * apigen-server-cuda-family forwarded; the process-wide state is here
 * (fake_tstate.h). Never used with a GPU. */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1 /* both names of a versioned function */
#include <cuda.h>
#include <pthread.h>
#include <stdlib.h>

#include "fake_tstate.h"

static pthread_mutex_t mu_ = PTHREAD_MUTEX_INITIALIZER;
static struct fake_ctx primary_[FAKE_NDEV] = {{0, 1, 1, 0}, {1, 1, 1, 0}};
static int refs_[FAKE_NDEV], rt_held_[FAKE_NDEV];
static unsigned flags_[FAKE_NDEV];
static _Thread_local struct fake_ctx *stack_[16];
static _Thread_local int depth_;
static _Thread_local int rt_dev_;

struct fake_ctx *fake_primary(int dev) { return &primary_[dev]; }
struct fake_ctx *fake_current(void) { return depth_ ? stack_[depth_ - 1] : NULL; }
void fake_set_current(struct fake_ctx *c)
{
    if (!c) {
        if (depth_) depth_--;
    } else if (depth_) {
        stack_[depth_ - 1] = c;
    } else {
        stack_[depth_++] = c;
    }
}
int fake_push(struct fake_ctx *c)
{
    if (depth_ == 16) return 0;
    stack_[depth_++] = c;
    return 1;
}
struct fake_ctx *fake_pop(void) { return depth_ ? stack_[--depth_] : NULL; }
int fake_rt_device(void) { return rt_dev_; }
void fake_rt_set_device(int d) { rt_dev_ = d; }
void fake_retain(int d)
{
    pthread_mutex_lock(&mu_);
    refs_[d]++;
    pthread_mutex_unlock(&mu_);
}
void fake_release(int d)
{
    pthread_mutex_lock(&mu_);
    if (refs_[d] > 0 && --refs_[d] == 0) primary_[d].id = 0;
    pthread_mutex_unlock(&mu_);
}
void fake_reset(int d)
{
    pthread_mutex_lock(&mu_);
    refs_[d] = 0;
    primary_[d].id = 0;
    rt_held_[d] = 0;
    pthread_mutex_unlock(&mu_);
}
int fake_active(int d)
{
    pthread_mutex_lock(&mu_);
    int a = refs_[d] > 0;
    pthread_mutex_unlock(&mu_);
    return a;
}
unsigned fake_flags(int d) { return flags_[d]; }
void fake_set_flags(int d, unsigned f) { flags_[d] = f; }
/* the runtime's implicit initialization: no context current on the
 * thread: the runtime device's primary context, retained once by the
 * runtime, becomes current */
void fake_rt_hold(int d)
{
    pthread_mutex_lock(&mu_);
    if (!rt_held_[d]) {
        rt_held_[d] = 1;
        refs_[d]++;
    }
    pthread_mutex_unlock(&mu_);
}
void fake_lazy_init(void)
{
    struct fake_ctx *c = fake_current();
    if (c) {
        if (c->primary) fake_rt_hold(c->dev); /* after a reset: initialized again */
        return;
    }
    fake_rt_hold(rt_dev_);
    fake_set_current(&primary_[rt_dev_]);
}

#define DEV_OK(d) ((d) >= 0 && (d) < FAKE_NDEV)

FAKE CUresult cuInit(unsigned f) { (void)f; return CUDA_SUCCESS; }
FAKE CUresult cuDriverGetVersion(int *v)
{
    if (!v) return CUDA_ERROR_INVALID_VALUE;
    *v = CUDA_VERSION;
    return CUDA_SUCCESS;
}
FAKE CUresult cuDeviceGetCount(int *n)
{
    if (!n) return CUDA_ERROR_INVALID_VALUE;
    *n = FAKE_NDEV;
    return CUDA_SUCCESS;
}
FAKE CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
    if (!d) return CUDA_ERROR_INVALID_VALUE;
    if (!DEV_OK(ordinal)) return CUDA_ERROR_INVALID_DEVICE;
    *d = ordinal;
    return CUDA_SUCCESS;
}
FAKE CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
    if (!c) return CUDA_ERROR_INVALID_VALUE;
    if (!DEV_OK(d)) return CUDA_ERROR_INVALID_DEVICE;
    fake_retain(d);
    *c = (CUcontext)&primary_[d];
    return CUDA_SUCCESS;
}
FAKE CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d)
{
    if (!DEV_OK(d)) return CUDA_ERROR_INVALID_DEVICE;
    fake_release(d);
    return CUDA_SUCCESS;
}
FAKE CUresult cuDevicePrimaryCtxRelease(CUdevice d) { return cuDevicePrimaryCtxRelease_v2(d); }
FAKE CUresult cuDevicePrimaryCtxReset_v2(CUdevice d)
{
    if (!DEV_OK(d)) return CUDA_ERROR_INVALID_DEVICE;
    fake_reset(d);
    return CUDA_SUCCESS;
}
FAKE CUresult cuDevicePrimaryCtxReset(CUdevice d) { return cuDevicePrimaryCtxReset_v2(d); }
FAKE CUresult cuDevicePrimaryCtxGetState(CUdevice d, unsigned int *flags, int *active)
{
    if (!flags || !active) return CUDA_ERROR_INVALID_VALUE;
    if (!DEV_OK(d)) return CUDA_ERROR_INVALID_DEVICE;
    *flags = flags_[d];
    *active = fake_active(d);
    return CUDA_SUCCESS;
}
FAKE CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice d, unsigned int flags)
{
    if (!DEV_OK(d)) return CUDA_ERROR_INVALID_DEVICE;
    flags_[d] = flags;
    return CUDA_SUCCESS;
}
FAKE CUresult cuDevicePrimaryCtxSetFlags(CUdevice d, unsigned int f) { return cuDevicePrimaryCtxSetFlags_v2(d, f); }
FAKE CUresult cuCtxSetCurrent(CUcontext c)
{
    fake_set_current((struct fake_ctx *)c);
    return CUDA_SUCCESS;
}
FAKE CUresult cuCtxGetCurrent(CUcontext *c)
{
    if (!c) return CUDA_ERROR_INVALID_VALUE;
    *c = (CUcontext)fake_current();
    return CUDA_SUCCESS;
}
FAKE CUresult cuCtxGetDevice(CUdevice *d)
{
    if (!d) return CUDA_ERROR_INVALID_VALUE;
    if (!fake_current()) return CUDA_ERROR_INVALID_CONTEXT;
    *d = fake_current()->dev;
    return CUDA_SUCCESS;
}
FAKE CUresult cuCtxGetDevice_v2(CUdevice *d, CUcontext c)
{
    if (!c) return cuCtxGetDevice(d);
    if (!d) return CUDA_ERROR_INVALID_VALUE;
    *d = ((struct fake_ctx *)c)->dev;
    return CUDA_SUCCESS;
}
FAKE CUresult cuCtxPushCurrent_v2(CUcontext c)
{
    if (!c) return CUDA_ERROR_INVALID_VALUE;
    return fake_push((struct fake_ctx *)c) ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
FAKE CUresult cuCtxPushCurrent(CUcontext c) { return cuCtxPushCurrent_v2(c); }
FAKE CUresult cuCtxPopCurrent_v2(CUcontext *c)
{
    struct fake_ctx *p = fake_pop();
    if (!p) return CUDA_ERROR_INVALID_CONTEXT;
    if (c) *c = (CUcontext)p;
    return CUDA_SUCCESS;
}
FAKE CUresult cuCtxPopCurrent(CUcontext *c) { return cuCtxPopCurrent_v2(c); }
FAKE CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *p, unsigned int flags, CUdevice d)
{
    (void)p, (void)flags;
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    if (!DEV_OK(d)) return CUDA_ERROR_INVALID_DEVICE;
    struct fake_ctx *c = calloc(1, sizeof *c);
    if (!c) return CUDA_ERROR_OUT_OF_MEMORY;
    c->dev = d;
    c->alive = 1;
    if (!fake_push(c)) {
        free(c);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *pctx = (CUcontext)c;
    return CUDA_SUCCESS;
}
FAKE CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice d) { return cuCtxCreate_v4(pctx, NULL, flags, d); }
FAKE CUresult cuCtxDestroy_v2(CUcontext c)
{
    struct fake_ctx *x = (struct fake_ctx *)c;
    if (!x || x->primary) return CUDA_ERROR_INVALID_CONTEXT;
    if (fake_current() == x) fake_pop();
    x->alive = 0; /* kept: a stale handle must not alias a new context */
    return CUDA_SUCCESS;
}
FAKE CUresult cuCtxDestroy(CUcontext c) { return cuCtxDestroy_v2(c); }
FAKE CUresult cuCtxSetFlags(unsigned int flags)
{
    struct fake_ctx *c = fake_current();
    if (!c) return CUDA_ERROR_INVALID_CONTEXT;
    if (c->primary) flags_[c->dev] = flags;
    return CUDA_SUCCESS;
}
/* ids as the driver gives them: 1, 2, ... in the order contexts come to be
 * (here: first asked); a destroyed context has none */
static unsigned long long next_id_;
FAKE CUresult cuCtxGetId(CUcontext c, unsigned long long *id)
{
    if (!id) return CUDA_ERROR_INVALID_VALUE;
    if (!c && !(c = (CUcontext)fake_current())) return CUDA_ERROR_INVALID_CONTEXT;
    struct fake_ctx *x = (struct fake_ctx *)c;
    if (!x->alive) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    pthread_mutex_lock(&mu_);
    if (!x->id) x->id = ++next_id_;
    *id = x->id;
    pthread_mutex_unlock(&mu_);
    return CUDA_SUCCESS;
}

/* streams and captures, as far as the capture phase of tstate_ci.c goes:
 * a created stream may capture, the legacy one may not */
static int streams_[8], nstreams_;
static int captures_, graph_;
int fake_captures(void)
{
    pthread_mutex_lock(&mu_);
    int n = captures_;
    pthread_mutex_unlock(&mu_);
    return n;
}
FAKE CUresult cuStreamCreate(CUstream *s, unsigned int flags)
{
    (void)flags;
    if (!s) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&mu_);
    *s = (CUstream)(void *)&streams_[nstreams_++ % 8];
    pthread_mutex_unlock(&mu_);
    return CUDA_SUCCESS;
}
FAKE CUresult cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode mode)
{
    (void)mode;
    if (!s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    pthread_mutex_lock(&mu_);
    captures_++;
    pthread_mutex_unlock(&mu_);
    return CUDA_SUCCESS;
}
FAKE CUresult cuStreamEndCapture(CUstream s, CUgraph *g)
{
    if (!s || !g) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&mu_);
    int had = captures_;
    if (had) captures_--;
    pthread_mutex_unlock(&mu_);
    if (!had) return CUDA_ERROR_ILLEGAL_STATE;
    *g = (CUgraph)(void *)&graph_;
    return CUDA_SUCCESS;
}
