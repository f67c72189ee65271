/* Internal calls of specs/nccl.yaml (wire messages, not NCCL's API): the
 * stub's hand-written code (specs/nccl/guest.c) makes them, the server
 * implements them in specs/nccl/host.c. */
#ifndef APIGEN_NCCL_H
#define APIGEN_NCCL_H

#include <stddef.h>

#include <nccl.h>

/* ncclCommRegister's void *: a handle of the client on the wire */
typedef struct apigenNcclRegistration_st *apigenNcclRegistration;

/* The application's NCCL_* variables ("NAME=VALUE\n" each) for its session
 * process, before NCCL starts there; the names the server did not apply
 * come back in ignored (length bytes, "NAME " each) */
ncclResult_t apigenNcclSetEnv(const char *vars, char *ignored, unsigned int length);

/* ncclGetErrorString(result) into buf (length bytes, NUL-terminated) */
ncclResult_t apigenNcclErrorText(ncclResult_t result, char *buf, unsigned int length);
/* ncclGetLastError(comm) into buf (comm may be NULL: the process's) */
ncclResult_t apigenNcclLastError(ncclComm_t comm, char *buf, unsigned int length);

/* The calls that take an ncclConfig_t: the struct's bytes (the caller's
 * size and version; NULL: none) and its two strings beside them */
ncclResult_t apigenNcclCommInitRankConfig(ncclComm_t *newcomm, int nranks, ncclUniqueId commId,
                                          int rank, const ncclConfig_t *config,
                                          const char *netName, const char *commName);
ncclResult_t apigenNcclCommInitRankScalable(ncclComm_t *newcomm, int nranks, int myrank, int nId,
                                            const ncclUniqueId *commIds,
                                            const ncclConfig_t *config, const char *netName,
                                            const char *commName);
ncclResult_t apigenNcclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                                 const ncclConfig_t *config, const char *netName,
                                 const char *commName);
ncclResult_t apigenNcclCommShrink(ncclComm_t comm, const int *excludeRanksList,
                                  int excludeRanksCount, ncclComm_t *newcomm,
                                  const ncclConfig_t *config, const char *netName,
                                  const char *commName, int shrinkFlags);

/* ncclCommRegister / ncclCommDeregister with the registration as a handle */
ncclResult_t apigenNcclCommRegister(ncclComm_t comm, void *buff, size_t size,
                                    apigenNcclRegistration *handle);
ncclResult_t apigenNcclCommDeregister(ncclComm_t comm, apigenNcclRegistration handle);

#endif
