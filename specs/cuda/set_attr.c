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
 * that succeeded, and no call but that setter's own forgot the `functions`
 * group since (runtime/setmemo.c): a set through the other kind of handle
 * (a CUfunction may be a CUkernel's), a module's, library's or context's
 * end, the runtime's cudaFuncSetAttribute or cudaDeviceReset all forget it.
 * APIGEN_CACHE=0 keeps nothing. */
#include <stdint.h>

#include "apigen_rt.h"
#include "cuda_guest.h"

CUresult cuda_fwd_cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value);
#ifdef APIGEN_HAS_FN_cuKernelSetAttribute /* 12.0: kernel handles */
CUresult cuda_fwd_cuKernelSetAttribute(CUfunction_attribute attrib, int val, CUkernel kernel,
                                       CUdevice dev);
#endif

static apigen_setmemo func_sets_ = APIGEN_SETMEMO_INIT, kernel_sets_ = APIGEN_SETMEMO_INIT;

static void trace_repeat(const char *fn, int attrib, int value, uint64_t handle, int dev,
                         uint64_t t0)
{
    if (t0)
        apigen_trace("%s(attrib=%d, value=%d, handle=%#llx, dev=%d) = 0 [cached, the value it has, "
                     "%llu us]",
                     fn, attrib, value, (unsigned long long)handle, dev,
                     (unsigned long long)((apigen_now_ns() - t0) / 1000));
}

APIGEN_EXPORT CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value)
{
    const uint64_t key[3] = {(uint64_t)(uintptr_t)hfunc, (uint64_t)attrib, 0};
    uint64_t t0 = apigen_tracing() ? apigen_now_ns() : 0;
    if (hfunc && apigen_setmemo_repeat(&func_sets_, &cuda_api, "functions", key, value)) {
        trace_repeat("cuFuncSetAttribute", (int)attrib, value, key[0], -1, t0);
        return CUDA_SUCCESS;
    }
    CUresult e = cuda_fwd_cuFuncSetAttribute(hfunc, attrib, value);
    apigen_cuda_launch_limits_forget(key[0]); /* whatever the answer */
    apigen_setmemo_note(&func_sets_, &cuda_api, "functions", key, value,
                        hfunc && e == CUDA_SUCCESS);
    return e;
}

#ifdef APIGEN_HAS_FN_cuKernelSetAttribute
APIGEN_EXPORT CUresult cuKernelSetAttribute(CUfunction_attribute attrib, int val, CUkernel kernel,
                                            CUdevice dev)
{
    const uint64_t key[3] = {(uint64_t)(uintptr_t)kernel, (uint64_t)attrib, (uint64_t)(int64_t)dev};
    uint64_t t0 = apigen_tracing() ? apigen_now_ns() : 0;
    if (kernel && apigen_setmemo_repeat(&kernel_sets_, &cuda_api, "functions", key, val)) {
        trace_repeat("cuKernelSetAttribute", (int)attrib, val, key[0], (int)dev, t0);
        return CUDA_SUCCESS;
    }
    CUresult e = cuda_fwd_cuKernelSetAttribute(attrib, val, kernel, dev);
    apigen_cuda_launch_limits_forget(key[0]);
    apigen_setmemo_note(&kernel_sets_, &cuda_api, "functions", key, val,
                        kernel && e == CUDA_SUCCESS);
    return e;
}
#endif
