/* A function's attribute set again to the value it already has costs no
 * round trip (spec: cuFuncSetAttribute, cuKernelSetAttribute).
 *
 * cuDNN sets a kernel's dynamic shared memory limit before every launch of
 * it (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, the same value each
 * training step). Each set made a round trip and, since a set may change
 * what a function's occupancy and launch limits are, made the guest ask
 * those again (the spec's `cache_forget: [functions]`): six round trips per
 * CNN training step over the driver stub on the H200 (2026-11-27).
 *
 * Natively, setting an attribute to the value a successful set gave it
 * changes nothing and succeeds again while the function lives. So a set is
 * answered here, with success and no forgetting, when the same attribute
 * of the same handle (and device) was last set to the same value by a call
 * that succeeded. What could make that answer wrong drops what is kept:
 *   - a set through the other kind of handle (a CUfunction may be a
 *     CUkernel's, and the guest does not track which): every setting of
 *     that kind is dropped; a failed set drops its own key;
 *   - the end of a module, library or context (dev_ranges.c,
 *     context_gone.c): the handle may be gone, where the driver refuses;
 *   - a fork child (its session is not the parent's); APIGEN_CACHE=0
 *     keeps nothing. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apigen_rt.h"
#include "cuda_guest.h"

CUresult cuda_fwd_cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value);
#ifdef APIGEN_HAS_FN_cuKernelSetAttribute /* 12.0: kernel handles */
CUresult cuda_fwd_cuKernelSetAttribute(CUfunction_attribute attrib, int val, CUkernel kernel,
                                       CUdevice dev);
#endif

enum handle_kind { FUNCTION, KERNEL };

typedef struct setting {
    enum handle_kind kind;
    uint64_t handle;
    int attrib, dev, value; /* dev: -1 for a CUfunction */
    struct setting *next;
} setting;

static pthread_mutex_t mu_ = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once_ = PTHREAD_ONCE_INIT;
static setting *kept_;
static size_t nkept_;
static bool off_;

enum { MAX_KEPT = 4096 }; /* past it, sets simply go to the server */

static void drop_where(bool (*match)(const setting *, const setting *), const setting *key)
{
    for (setting **pp = &kept_; *pp;) {
        if (match(*pp, key)) {
            setting *s = *pp;
            *pp = s->next;
            free(s);
            nkept_--;
        } else {
            pp = &(*pp)->next;
        }
    }
}

static bool any(const setting *s, const setting *key)
{
    (void)s, (void)key;
    return true;
}

static bool same_key(const setting *s, const setting *key)
{
    return s->kind == key->kind && s->handle == key->handle && s->attrib == key->attrib &&
           s->dev == key->dev;
}

static bool other_kind(const setting *s, const setting *key)
{
    return s->kind != key->kind;
}

static void child_after_fork(void)
{
    pthread_mutex_init(&mu_, NULL);
    drop_where(any, NULL);
}

static void init(void)
{
    const char *v = getenv("APIGEN_CACHE");
    off_ = v && strcmp(v, "0") == 0;
    (void)pthread_atfork(NULL, NULL, child_after_fork);
}

void apigen_cuda_set_attr_forget(void)
{
    pthread_once(&once_, init);
    pthread_mutex_lock(&mu_);
    drop_where(any, NULL);
    pthread_mutex_unlock(&mu_);
}

static bool repeated(const setting *key)
{
    pthread_once(&once_, init);
    if (off_) return false;
    bool hit = false;
    pthread_mutex_lock(&mu_);
    for (const setting *s = kept_; s && !hit; s = s->next)
        hit = same_key(s, key) && s->value == key->value;
    pthread_mutex_unlock(&mu_);
    return hit;
}

/* after a set went to the server: what it may have changed is dropped, and
 * a success is kept */
static void note(const setting *key, CUresult e)
{
    pthread_mutex_lock(&mu_);
    drop_where(other_kind, key);
    drop_where(same_key, key);
    setting *s = e == CUDA_SUCCESS && !off_ && nkept_ < MAX_KEPT ? malloc(sizeof *s) : NULL;
    if (s) {
        *s = *key;
        s->next = kept_;
        kept_ = s;
        nkept_++;
    }
    pthread_mutex_unlock(&mu_);
}

static void trace_repeat(const char *fn, const setting *k, uint64_t t0)
{
    if (t0)
        apigen_trace("%s(attrib=%d, value=%d, handle=%#llx, dev=%d) = 0 [cached, the value it has, "
                     "%llu us]",
                     fn, k->attrib, k->value, (unsigned long long)k->handle, k->dev,
                     (unsigned long long)((apigen_now_ns() - t0) / 1000));
}

APIGEN_EXPORT CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib,
                                          int value)
{
    setting key = {FUNCTION, (uint64_t)(uintptr_t)hfunc, (int)attrib, -1, value, NULL};
    uint64_t t0 = apigen_tracing() ? apigen_now_ns() : 0;
    if (hfunc && repeated(&key)) {
        trace_repeat("cuFuncSetAttribute", &key, t0);
        return CUDA_SUCCESS;
    }
    CUresult e = cuda_fwd_cuFuncSetAttribute(hfunc, attrib, value);
    apigen_cuda_launch_limits_forget(key.handle); /* whatever the answer */
    if (hfunc) note(&key, e);
    return e;
}

#ifdef APIGEN_HAS_FN_cuKernelSetAttribute
APIGEN_EXPORT CUresult cuKernelSetAttribute(CUfunction_attribute attrib, int val,
                                            CUkernel kernel, CUdevice dev)
{
    setting key = {KERNEL, (uint64_t)(uintptr_t)kernel, (int)attrib, (int)dev, val, NULL};
    uint64_t t0 = apigen_tracing() ? apigen_now_ns() : 0;
    if (kernel && repeated(&key)) {
        trace_repeat("cuKernelSetAttribute", &key, t0);
        return CUDA_SUCCESS;
    }
    CUresult e = cuda_fwd_cuKernelSetAttribute(attrib, val, kernel, dev);
    apigen_cuda_launch_limits_forget(key.handle);
    if (kernel) note(&key, e);
    return e;
}
#endif
