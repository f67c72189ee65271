/* apigen_nvml.h: wire messages of the NVML stub that are not part of nvml.h
 * (internal calls: the stub's hand-written code makes them, the server's
 * specs/nvml/host.c answers them). */
#ifndef APIGEN_NVML_H
#define APIGEN_NVML_H

#include <nvml.h>

/* nvmlErrorString(result) of the server's library, copied into buf
 * (length bytes, NUL-terminated). */
nvmlReturn_t apigenNvmlErrorString(nvmlReturn_t result, char *buf, unsigned int length);

/* The process lists whose struct points to the caller's array
 * (nvmlProcessDetailList_t, nvmlProcessesUtilizationInfo_t), with the
 * struct's fields as arguments: *count is the room in the array in and the
 * number of entries out (also with NVML_ERROR_INSUFFICIENT_SIZE); the host
 * rebuilds the struct around its own array. */
nvmlReturn_t apigenNvmlProcessDetailList(nvmlDevice_t device, unsigned int version,
                                         unsigned int mode, unsigned int *count,
                                         nvmlProcessDetail_v1_t *procs);
nvmlReturn_t apigenNvmlProcessesUtilization(nvmlDevice_t device, unsigned int version,
                                            unsigned long long *lastSeenTimeStamp,
                                            unsigned int *count,
                                            nvmlProcessUtilizationInfo_v1_t *procs);

#endif
