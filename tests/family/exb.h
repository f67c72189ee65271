/* exb: a second small API of exa's family (tests/family). Its functions take
 * and return exa's objects, as the CUDA runtime's take the driver's: the
 * test forwards both over one session (api.family in specs/exb.yaml). */
#ifndef EXB_H
#define EXB_H

#include <stddef.h>

#include "exa.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum exbStatus {
    EXB_SUCCESS = 0,
    EXB_ERROR_INVALID_VALUE = 1,
    EXB_ERROR_INVALID_HANDLE = 2,
    EXB_ERROR_OUT_OF_MEMORY = 3,
    EXB_ERROR_NOT_SUPPORTED = 4,
    EXB_ERROR_CONNECTION_LOST = 5,
    EXB_ERROR_EXA = 6, /* exa failed otherwise */
} exbStatus;

exbStatus exbGetVersion(int *version);
/* "bytes=N sum=S" (S: the sum of its bytes) of a buffer of ctx, after ctx's
 * queued work ran (exaFinish): text gets at most capacity bytes, NUL included. */
exbStatus exbDescribe(exaContext ctx, exaBuffer buffer, char *text, size_t capacity);
/* A new buffer of ctx, of like's size, holding like's bytes. */
exbStatus exbCreateBufferLike(exaContext ctx, exaBuffer like, exaBuffer *out);
/* Releases a buffer (as exaReleaseBuffer). */
exbStatus exbReleaseBuffer(exaBuffer buffer);
/* The sum of n floats at device address src, after ctx's queued work ran. */
exbStatus exbSumDevice(exaContext ctx, const void *src, size_t n, double *sum);

#ifdef __cplusplus
}
#endif
#endif
