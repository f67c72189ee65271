/* Hand-written guest code for specs/cusolver.yaml: cusolverDnLoggerForceDisable,
 * declared `()` in cusolverDn.h, over a prototyped internal call. */
#include "apigen_rt.h"
#include "cusolver_wire.h"

APIGEN_EXPORT cusolverStatus_t cusolverDnLoggerForceDisable(void)
{
    return apigenCusolverLoggerForceDisable();
}
