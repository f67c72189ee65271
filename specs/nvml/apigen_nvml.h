/* apigen_nvml.h: wire messages of the NVML stub that are not part of nvml.h
 * (internal calls: the stub's hand-written code makes them, the server's
 * specs/nvml/host.c answers them). */
#ifndef APIGEN_NVML_H
#define APIGEN_NVML_H

#include <nvml.h>

#include "nvml_features.h"

/* nvmlErrorString(result) of the server's library, copied into buf
 * (length bytes, NUL-terminated). */
nvmlReturn_t apigenNvmlErrorString(nvmlReturn_t result, char *buf, unsigned int length);

/* The process lists whose struct points to the caller's array
 * (nvmlProcessDetailList_t, nvmlProcessesUtilizationInfo_t), with the
 * struct's fields as arguments: *count is the room in the array in and the
 * number of entries out (also with NVML_ERROR_INSUFFICIENT_SIZE); the host
 * rebuilds the struct around its own array. */
#ifdef APIGEN_HAS_FN_nvmlDeviceGetRunningProcessDetailList /* nvml.h of CUDA 12.2 on */
nvmlReturn_t apigenNvmlProcessDetailList(nvmlDevice_t device, unsigned int version,
                                         unsigned int mode, unsigned int *count,
                                         nvmlProcessDetail_v1_t *procs);
#endif
#ifdef APIGEN_HAS_FN_nvmlDeviceGetProcessesUtilizationInfo /* 12.4 on */
nvmlReturn_t apigenNvmlProcessesUtilization(nvmlDevice_t device, unsigned int version,
                                            unsigned long long *lastSeenTimeStamp,
                                            unsigned int *count,
                                            nvmlProcessUtilizationInfo_v1_t *procs);
#endif

/* Exported by libnvidia-ml.so.1 (driver 580.159.04:
 * tests/nvml/libnvidia-ml.exports), declared in no nvml.h of 13.0 (the header
 * generated/nvml is made from). Forwarded under their own names:
 * - nvmlDeviceGetRemappedRows_v2, nvmlDeviceGetUnrepairableMemoryFlag_v1:
 *   signatures and structs as nvml.h of 13.4 (nvidia-nvml-dev 13.4.92)
 *   declares them; both structs are outputs without a version member.
 *   Declared here only where nvml.h lacks them (NVML_RUSD_POLL_NONE comes
 *   with them in 13.4).
 * - nvmlGetBlacklistDeviceCount, nvmlGetBlacklistDeviceInfoByIndex: the old
 *   names nvml.h #defines to nvmlGetExcludedDeviceCount and
 *   nvmlGetExcludedDeviceInfoByIndex (same arguments); binaries built with
 *   older headers call them. */
#ifndef NVML_RUSD_POLL_NONE
typedef struct {
    unsigned int corrActiveRemaps;   /* active remappings, correctable errors */
    unsigned int corrInactiveRemaps; /* inactive remappings, correctable errors */
    unsigned int uncActiveRemaps;    /* active remappings, uncorrectable errors */
    unsigned int uncInactiveRemaps;  /* inactive remappings, uncorrectable errors */
    unsigned int bPending;           /* 1: a remapping is pending */
    unsigned int bFailureOccurred;   /* 1: a remapping failed in the past */
} nvmlRemappedRowsInfo_v2_t;

typedef struct {
    unsigned int bUnrepairableMemory; /* 1: the GPU has unrepairable memory */
} nvmlUnrepairableMemoryStatus_v1_t;

nvmlReturn_t nvmlDeviceGetRemappedRows_v2(nvmlDevice_t device, nvmlRemappedRowsInfo_v2_t *info);
nvmlReturn_t nvmlDeviceGetUnrepairableMemoryFlag_v1(nvmlDevice_t device,
                                                    nvmlUnrepairableMemoryStatus_v1_t *unrepairableMemoryStatus);

#endif
#ifndef APIGEN_HAS_FN_nvmlDeviceReadPRMCounters_v1 /* nvml.h of 13.4 declares them */
/* PRM counters (Blackwell or newer): as nvml.h 13.4 declares them. The list
 * points to the caller's array; each counter's id and input (a local port)
 * go in, its status, type and value come out. */
typedef struct {
    unsigned int localPort;                 /* local port number */
} nvmlPRMCounterInput_v1_t;

typedef struct {
    nvmlReturn_t status;                    /* status of this counter's read */
    nvmlValueType_t outputType;             /* the value's type */
    nvmlValue_t outputValue;                /* the value */
} nvmlPRMCounterValue_v1_t;

typedef struct {
    unsigned int counterId;                 /* one of nvml.h 13.4's nvmlPRMCounterId_t */
    nvmlPRMCounterInput_v1_t inData;
    nvmlPRMCounterValue_v1_t counterValue;
} nvmlPRMCounter_v1_t;

typedef struct {
    unsigned int numCounters;               /* entries of counters */
    nvmlPRMCounter_v1_t *counters;          /* the caller's array */
} nvmlPRMCounterList_v1_t;

nvmlReturn_t nvmlDeviceReadPRMCounters_v1(nvmlDevice_t device, nvmlPRMCounterList_v1_t *counterList);
#endif
/* nvmlDeviceReadPRMCounters_v1's list as arguments (the stub's guest code
 * sends the array, the host rebuilds the struct around its copy) */
nvmlReturn_t apigenNvmlReadPRMCounters(nvmlDevice_t device, unsigned int numCounters,
                                       nvmlPRMCounter_v1_t *counters);
nvmlReturn_t nvmlGetBlacklistDeviceCount(unsigned int *deviceCount);
nvmlReturn_t nvmlGetBlacklistDeviceInfoByIndex(unsigned int index, nvmlExcludedDeviceInfo_t *info);

#endif
