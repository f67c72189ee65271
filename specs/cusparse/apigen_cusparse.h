/* apigen_cusparse.h: wire messages of the cuSPARSE stub that are not part of
 * cuSPARSE's headers (internal calls: specs/cusparse/guest.c makes them, the
 * server's specs/cusparse/host.c answers them). */
#ifndef APIGEN_CUSPARSE_H
#define APIGEN_CUSPARSE_H

#include <cusparse.h>

/* The server library's text for a status: cusparseGetErrorName (which 0) or
 * cusparseGetErrorString (which 1), copied into buf (length bytes,
 * NUL-terminated). */
cusparseStatus_t apigenCusparseStatusText(cusparseStatus_t status, int which, char *buf,
                                          unsigned int length);

#endif
