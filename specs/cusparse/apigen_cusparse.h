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

/* cusparseAxpby and cusparseRot with the vectors' value type, which sizes
 * their scalars (the guest asks it of vecY with cusparseDnVecGet first) */
cusparseStatus_t apigenCusparseAxpby(cusparseHandle_t handle, const void *alpha,
                                     cusparseConstSpVecDescr_t vecX, const void *beta,
                                     cusparseDnVecDescr_t vecY, cudaDataType valueType);
cusparseStatus_t apigenCusparseRot(cusparseHandle_t handle, const void *c_coeff,
                                   const void *s_coeff, cusparseSpVecDescr_t vecX,
                                   cusparseDnVecDescr_t vecY, cudaDataType valueType);

#endif
