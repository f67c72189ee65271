/* The state that tests/cuda/fake_tstate_rt.c (runtime, cuBLAS) and
 * fake_tstate_drv.c (driver) share: one process's contexts as NVIDIA's
 * runtime and driver keep them (docs/spec.md "Thread state kept in the
 * guest"). Two devices, each with a primary context (retained, flags,
 * active while retained); contexts the driver creates; per thread the
 * current context (a stack for push/pop) and the runtime's device, which
 * cudaGetDevice answers unless a context is current (then its device). */
#ifndef FAKE_TSTATE_H
#define FAKE_TSTATE_H

#define FAKE __attribute__((visibility("default")))
#define HIDDEN __attribute__((visibility("hidden")))
#define FAKE_NDEV 2

struct fake_ctx {
    int dev;
    int primary;
    int alive;
    unsigned long long id; /* cuCtxGetId: numbered when first asked, 0 until then; a
                              primary context reset or released to none is a new one */
};

HIDDEN struct fake_ctx *fake_primary(int dev);
HIDDEN struct fake_ctx *fake_current(void);
HIDDEN void fake_set_current(struct fake_ctx *c);
HIDDEN int fake_push(struct fake_ctx *c);
HIDDEN struct fake_ctx *fake_pop(void);
HIDDEN int fake_rt_device(void);       /* the runtime's device of this thread */
HIDDEN void fake_rt_set_device(int d);
HIDDEN void fake_rt_hold(int dev);     /* the runtime retains the primary context once */
HIDDEN void fake_lazy_init(void);      /* what a runtime or library call does first */
HIDDEN void fake_retain(int dev);
HIDDEN void fake_release(int dev);
HIDDEN void fake_reset(int dev);
HIDDEN int fake_active(int dev);
HIDDEN unsigned fake_flags(int dev);
HIDDEN void fake_set_flags(int dev, unsigned flags);
HIDDEN int fake_captures(void);        /* stream captures begun through the driver, not ended */

#endif
