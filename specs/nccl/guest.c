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
 *   wire: what the program holds is the handle's id.
 * - The calls that start NCCL in the session process (unique id,
 *   communicator inits) first send the application's NCCL_* variables,
 *   once per process: the server applies those that tune or diagnose NCCL
 *   and names the others, which the stub logs once. */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
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

extern char **environ;

ncclResult_t nccl_fwd_ncclGetUniqueId(ncclUniqueId *uniqueId);
ncclResult_t nccl_fwd_ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank);
ncclResult_t nccl_fwd_ncclCommInitAll(ncclComm_t *comm, int ndev, const int *devlist);

/* an NCCL_* variable of the application's for NCCL; not NCCL_VERSION, a
   label NVIDIA's containers set that NCCL never reads */
static bool for_nccl(const char *e)
{
    return strncmp(e, "NCCL_", 5) == 0 && strncmp(e, "NCCL_VERSION=", 13) != 0 && !strchr(e, '\n');
}

static void send_env(void)
{
    size_t n = 0;
    for (char **e = environ; e && *e; e++)
        if (for_nccl(*e)) n += strlen(*e) + 1;
    if (!n) return;
    char *vars = malloc(n + 1), ignored[1024] = "";
    if (!vars) return;
    size_t at = 0;
    for (char **e = environ; e && *e; e++) {
        if (!for_nccl(*e)) continue;
        size_t k = strlen(*e);
        memcpy(vars + at, *e, k);
        vars[at + k] = '\n';
        at += k + 1;
    }
    vars[at] = 0;
    apigen_hold_deferred(true);
    ncclResult_t r = apigenNcclSetEnv(vars, ignored, sizeof ignored);
    apigen_hold_deferred(false);
    free(vars);
    ignored[sizeof ignored - 1] = 0;
    size_t k = strlen(ignored);
    if (k && ignored[k - 1] == ' ') ignored[k - 1] = 0;
    if (r == ncclSuccess && ignored[0])
        apigen_log("nccl: not applied to NCCL on the server (its own environment decides them): %s",
                   ignored);
}

/* before a call that may start NCCL in the session process */
static void env_once(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, send_env);
}

APIGEN_EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId *uniqueId)
{
    env_once();
    return nccl_fwd_ncclGetUniqueId(uniqueId);
}

APIGEN_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank)
{
    env_once();
    return nccl_fwd_ncclCommInitRank(comm, nranks, commId, rank);
}

APIGEN_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t *comm, int ndev, const int *devlist)
{
    env_once();
    return nccl_fwd_ncclCommInitAll(comm, ndev, devlist);
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
    env_once();
    return apigenNcclCommInitRankConfig(comm, nranks, commId, rank, cp, net, name);
}

APIGEN_EXPORT ncclResult_t ncclCommInitRankScalable(ncclComm_t *newcomm, int nranks, int myrank,
                                                    int nId, ncclUniqueId *commIds,
                                                    ncclConfig_t *config)
{
    ncclConfig_t c;
    const char *net, *name;
    const ncclConfig_t *cp = config_bytes(config, &c, &net, &name);
    env_once();
    return apigenNcclCommInitRankScalable(newcomm, nranks, myrank, nId, commIds, cp, net, name);
}

APIGEN_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                                         ncclConfig_t *config)
{
    ncclConfig_t c;
    const char *net, *name;
    const ncclConfig_t *cp = config_bytes(config, &c, &net, &name);
    env_once();
    return apigenNcclCommSplit(comm, color, key, newcomm, cp, net, name);
}

APIGEN_EXPORT ncclResult_t ncclCommShrink(ncclComm_t comm, int *excludeRanksList,
                                          int excludeRanksCount, ncclComm_t *newcomm,
                                          ncclConfig_t *config, int shrinkFlags)
{
    ncclConfig_t c;
    const char *net, *name;
    const ncclConfig_t *cp = config_bytes(config, &c, &net, &name);
    env_once();
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
