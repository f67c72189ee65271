/* Hand-written host code for specs/cusolver.yaml: the internal calls. */
#include "apigen_rt.h"
#include "cusolver_wire.h"

cusolverStatus_t apigenCusolverLoggerForceDisable(void)
{
    return cusolverDnLoggerForceDisable();
}
