/* Hand-written host code for specs/cufft.yaml: a work area is checked
 * against the plan's work size before cuFFT keeps it. The generated handler
 * has already checked that the address starts inside the client's memory;
 * here the whole [workArea, workArea + size) must be the client's, since the
 * library writes that much there on every execution. */
#include <stdint.h>

#include <cufft.h>
#include <cufftXt.h>

#include "apigen_rt.h"
#include "cufft_wire.h"

/* CUFFT_SUCCESS when [area, area + the plan's work size) is the client's
 * memory, or when the library cannot say the size yet (no plan made: it
 * answers that itself on the set call) */
static cufftResult area_fits(apigen_call_ctx *cx, cufftHandle plan, const void *area,
                             const char *fn)
{
    size_t need = 0;
    if (!area || cufftGetSize(plan, &need) != CUFFT_SUCCESS || need == 0)
        return CUFFT_SUCCESS;
    if (apigen_dev_owned(cx->session, (uint64_t)(uintptr_t)area, need, true))
        return CUFFT_SUCCESS;
    apigen_log("%s: the work area at %p does not hold the plan's %zu bytes in the client's "
               "device memory: refused (CUFFT_INVALID_VALUE)",
               fn, area, need);
    return CUFFT_INVALID_VALUE;
}

cufftResult cufft_host_set_work_area(apigen_call_ctx *cx, cufftHandle plan, void *workArea)
{
    cufftResult r = area_fits(cx, plan, workArea, "cufftSetWorkArea");
    return r != CUFFT_SUCCESS ? r : cufftSetWorkArea(plan, workArea);
}

cufftResult cufft_host_xt_set_work_area(apigen_call_ctx *cx, cufftHandle plan, void **workArea)
{
    cufftResult r = area_fits(cx, plan, workArea ? workArea[0] : NULL, "cufftXtSetWorkArea");
    return r != CUFFT_SUCCESS ? r : cufftXtSetWorkArea(plan, workArea);
}
