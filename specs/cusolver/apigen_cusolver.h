/* apigen_cusolver.h: wire messages of the cuSOLVER stub that are not part of
 * cuSOLVER's headers (internal calls: specs/cusolver/guest.c makes them, the
 * server's specs/cusolver/host.c answers them). */
#ifndef APIGEN_CUSOLVER_H
#define APIGEN_CUSOLVER_H

#include <cusolverDn.h>

/* cusolverDnLoggerForceDisable, which cusolverDn.h declares without a
 * prototype */
cusolverStatus_t apigenCusolverLoggerForceDisable(void);

#endif
