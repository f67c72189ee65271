/* Hand-written guest code for specs/nccl.yaml.
 *
 * - ncclGetErrorString returns a string the caller never frees: the stub
 *   asks the server's library once per result value and keeps the text for
 *   the life of the process (apigen_kept_text), so it is exactly NCCL's.
 *   ncclGetLastError changes with every failing call: asked each time, kept
 *   per thread until the thread's next ask.
 * - An ncclConfig_t holds two strings (netName, commName): the struct's
 *   bytes travel as the caller sized them (its size and version fields say
 *   which fields it has; a struct larger than this header's is cut to this
 *   header's, which host.c states to NCCL) and the strings beside them.
 * - ncclCommRegister's void * is an apigenNcclRegistration handle on the
 *   wire: what the program holds is the handle's id. */
#include <stddef.h>
#include <string.h>

#include "apigen_rt.h"
#include "nccl_wire.h"

static bool error_text(long result, char *buf, size_t n)
{
    return apigenNcclErrorText((ncclResult_t)result, buf, (unsigned int)n) == ncclSuccess;
}

APIGEN_EXPORT const char *ncclGetErrorString(ncclResult_t result)
{
    static apigen_kept_texts kept = APIGEN_KEPT_TEXTS_INIT;
    const char *s = apigen_kept_text(&kept, (long)result, error_text);
    return s ? s : "apigen: no NCCL server to ask for this result's text";
}

APIGEN_EXPORT const char *ncclGetLastError(ncclComm_t comm)
{
    static _Thread_local char last[1024];
    apigen_hold_deferred(true); /* a queued call's error is the application's next call's */
    ncclResult_t r = apigenNcclLastError(comm, last, sizeof last);
    apigen_hold_deferred(false);
    if (r != ncclSuccess) return "apigen: no NCCL server to ask for the last error";
    last[sizeof last - 1] = 0;
    return last;
}

/* What of the caller's config travels: its bytes (at most this header's
 * struct) with the string pointers cleared, and the strings apart. NULL:
 * no config. */
static const ncclConfig_t *config_bytes(const ncclConfig_t *in, ncclConfig_t *out,
                                        const char **net, const char **name)
{
    *net = *name = NULL;
    if (!in) return NULL;
    memset(out, 0, sizeof *out);
    size_t n = in->size < sizeof *out ? in->size : sizeof *out;
    memcpy(out, in, n);
    if (n >= offsetof(ncclConfig_t, netName) + sizeof in->netName) *net = in->netName;
    if (n >= offsetof(ncclConfig_t, commName) + sizeof in->commName) *name = in->commName;
    out->netName = out->commName = NULL;
    return out;
}

APIGEN_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId commId,
                                                  int rank, ncclConfig_t *config)
{
    ncclConfig_t c;
    const char *net, *name;
    const ncclConfig_t *cp = config_bytes(config, &c, &net, &name);
    return apigenNcclCommInitRankConfig(comm, nranks, commId, rank, cp, net, name);
}

APIGEN_EXPORT ncclResult_t ncclCommInitRankScalable(ncclComm_t *newcomm, int nranks, int myrank,
                                                    int nId, ncclUniqueId *commIds,
                                                    ncclConfig_t *config)
{
    ncclConfig_t c;
    const char *net, *name;
    const ncclConfig_t *cp = config_bytes(config, &c, &net, &name);
    return apigenNcclCommInitRankScalable(newcomm, nranks, myrank, nId, commIds, cp, net, name);
}

APIGEN_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                                         ncclConfig_t *config)
{
    ncclConfig_t c;
    const char *net, *name;
    const ncclConfig_t *cp = config_bytes(config, &c, &net, &name);
    return apigenNcclCommSplit(comm, color, key, newcomm, cp, net, name);
}

APIGEN_EXPORT ncclResult_t ncclCommShrink(ncclComm_t comm, int *excludeRanksList,
                                          int excludeRanksCount, ncclComm_t *newcomm,
                                          ncclConfig_t *config, int shrinkFlags)
{
    ncclConfig_t c;
    const char *net, *name;
    const ncclConfig_t *cp = config_bytes(config, &c, &net, &name);
    return apigenNcclCommShrink(comm, excludeRanksList, excludeRanksCount, newcomm, cp, net, name,
                                shrinkFlags);
}

APIGEN_EXPORT ncclResult_t ncclCommRegister(const ncclComm_t comm, void *buff, size_t size,
                                            void **handle)
{
    apigenNcclRegistration h = NULL;
    ncclResult_t r = apigenNcclCommRegister(comm, buff, size, handle ? &h : NULL);
    if (r == ncclSuccess && handle) *handle = (void *)h;
    return r;
}

APIGEN_EXPORT ncclResult_t ncclCommDeregister(const ncclComm_t comm, void *handle)
{
    return apigenNcclCommDeregister(comm, (apigenNcclRegistration)handle);
}
