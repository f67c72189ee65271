/* Hand-written host code for specs/nccl.yaml.
 *
 * - Buffers whose extent is count x the communicator's size, or that only
 *   the root reads or writes, are checked here with the communicator's own
 *   answers (ncclCommCount, ncclCommUserRank): the whole extent must be the
 *   client's device memory (or its pinned arena) before NCCL touches it.
 *   Where the communicator cannot say (a bad one), NCCL answers the call
 *   itself, as natively.
 * - A config's bytes arrive with the strings apart: they are put back, a
 *   struct claiming more than this header's size is cut to it (NCCL would
 *   read past the bytes that came), and a non-blocking communicator is made
 *   blocking (every call completes before it returns: a non-blocking caller
 *   never sees ncclInProgress, which NCCL allows).
 * - The application's NCCL_* variables: those that tune or diagnose NCCL are
 *   set in its session process (a process of its own: under --isolation
 *   thread, where sessions share one, none is), the others named back.
 * - The internal calls of apigen_nccl.h. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apigen_rt.h"
#include "nccl_wire.h"

static void copy_text(char *buf, unsigned int length, const char *s)
{
    if (!buf || length == 0) return;
    size_t n = s ? strlen(s) : 0;
    if (n >= length) n = length - 1;
    if (n) memcpy(buf, s, n);
    buf[n] = 0;
}

ncclResult_t apigenNcclErrorText(ncclResult_t result, char *buf, unsigned int length)
{
    copy_text(buf, length, ncclGetErrorString(result));
    return ncclSuccess;
}

ncclResult_t apigenNcclLastError(ncclComm_t comm, char *buf, unsigned int length)
{
    copy_text(buf, length, ncclGetLastError(comm));
    return ncclSuccess;
}

/* ---- the application's environment ---------------------------------------------- */

/* What a client may set for its own session process: how NCCL tunes and
 * reports itself. Never a variable that names a file or a plugin (NCCL_NET_PLUGIN
 * would load a library of the client's choice, NCCL_DEBUG_FILE write a file),
 * the machine's network or hardware (NCCL_SOCKET_IFNAME, NCCL_IB_HCA), or
 * NVLink multicast turned on (NCCL_NVLS_ENABLE other than 0): the server's
 * own environment decides those. */
static const char *const tunable[] = {
    "NCCL_DEBUG",          "NCCL_DEBUG_SUBSYS",  "NCCL_ALGO",           "NCCL_PROTO",
    "NCCL_MIN_NCHANNELS",  "NCCL_MAX_NCHANNELS", "NCCL_MIN_CTAS",       "NCCL_MAX_CTAS",
    "NCCL_NTHREADS",       "NCCL_BUFFSIZE",      "NCCL_P2P_DISABLE",    "NCCL_P2P_LEVEL",
    "NCCL_SHM_DISABLE",    "NCCL_CUMEM_ENABLE",  "NCCL_LAUNCH_MODE",    "NCCL_CHECK_POINTERS",
    "NCCL_RUNTIME_CONNECT", "NCCL_GRAPH_REGISTER", "NCCL_LOCAL_REGISTER", "NCCL_CROSS_NIC",
    "NCCL_NET_GDR_LEVEL",  "NCCL_NET_GDR_READ",  "NCCL_IB_DISABLE",     "NCCL_CTA_POLICY",
};

static bool is_tunable(const char *name, size_t n)
{
    for (size_t i = 0; i < sizeof tunable / sizeof *tunable; i++)
        if (strlen(tunable[i]) == n && memcmp(tunable[i], name, n) == 0) return true;
    return false;
}

static void note_ignored(char *ignored, unsigned int length, const char *name, size_t n)
{
    size_t at = strlen(ignored);
    if (at + n + 2 > length) return;
    memcpy(ignored + at, name, n);
    ignored[at + n] = ' ';
    ignored[at + n + 1] = 0;
}

ncclResult_t nccl_host_set_env(apigen_call_ctx *cx, const char *vars, char *ignored,
                               unsigned int length)
{
    if (length) ignored[0] = 0;
    bool shared = false;
    uint64_t gpid;
    apigen_guest_pids(cx, (uint64_t)getpid(), &gpid, 1, &shared);
    for (const char *line = vars; line && *line;) {
        const char *end = strchr(line, '\n'), *eq = strchr(line, '=');
        if (!end) end = line + strlen(line);
        if (eq && eq < end && (size_t)(end - eq - 1) < 256) {
            size_t n = (size_t)(eq - line);
            /* NVLink multicast may be turned off, never on */
            bool nvls_off = n == 16 && memcmp(line, "NCCL_NVLS_ENABLE", 16) == 0 && end - eq == 2 &&
                            eq[1] == '0';
            if (!shared && (is_tunable(line, n) || nvls_off)) {
                char name[64], value[256];
                memcpy(name, line, n < sizeof name ? n : sizeof name - 1);
                name[n < sizeof name ? n : sizeof name - 1] = 0;
                memcpy(value, eq + 1, (size_t)(end - eq - 1));
                value[end - eq - 1] = 0;
                setenv(name, value, 1);
            } else {
                note_ignored(ignored, length, line, n);
            }
        }
        line = *end ? end + 1 : end;
    }
    return ncclSuccess;
}

/* ---- configs ------------------------------------------------------------------- */

static const ncclConfig_t *server_config(const ncclConfig_t *in, ncclConfig_t *c, const char *net,
                                         const char *name)
{
    if (!in) return NULL;
    *c = *in;
    if (c->size > sizeof *c) {
        apigen_log("nccl: a communicator config of %zu bytes (a newer nccl.h than the stub's): its "
                   "first %zu bytes are used, as version %d",
                   c->size, sizeof *c, NCCL_VERSION_CODE);
        c->size = sizeof *c;
        c->version = NCCL_VERSION_CODE;
    }
    if (c->size >= offsetof(ncclConfig_t, netName) + sizeof c->netName) c->netName = net;
    if (c->size >= offsetof(ncclConfig_t, commName) + sizeof c->commName) c->commName = name;
    if (c->size >= offsetof(ncclConfig_t, blocking) + sizeof c->blocking && c->blocking == 0) {
        static int said;
        if (!said++)
            apigen_log("nccl: a non-blocking communicator is made blocking on the server (its calls "
                       "complete before they return)");
        c->blocking = 1;
    }
    return c;
}

ncclResult_t nccl_host_init_rank_config(apigen_call_ctx *cx, ncclComm_t *newcomm, int nranks, ncclUniqueId commId,
                                          int rank, const ncclConfig_t *config,
                                          const char *netName, const char *commName)
{
    (void)cx;
    ncclConfig_t c;
    return ncclCommInitRankConfig(newcomm, nranks, commId, rank,
                                  (ncclConfig_t *)server_config(config, &c, netName, commName));
}

ncclResult_t nccl_host_init_rank_scalable(apigen_call_ctx *cx, ncclComm_t *newcomm, int nranks, int myrank, int nId,
                                            const ncclUniqueId *commIds,
                                            const ncclConfig_t *config, const char *netName,
                                            const char *commName)
{
    (void)cx;
    ncclConfig_t c;
    return ncclCommInitRankScalable(newcomm, nranks, myrank, nId, (ncclUniqueId *)commIds,
                                    (ncclConfig_t *)server_config(config, &c, netName, commName));
}

ncclResult_t nccl_host_split(apigen_call_ctx *cx, ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                                 const ncclConfig_t *config, const char *netName,
                                 const char *commName)
{
    (void)cx;
    ncclConfig_t c;
    return ncclCommSplit(comm, color, key, newcomm,
                         (ncclConfig_t *)server_config(config, &c, netName, commName));
}

ncclResult_t nccl_host_shrink(apigen_call_ctx *cx, ncclComm_t comm, const int *excludeRanksList,
                                  int excludeRanksCount, ncclComm_t *newcomm,
                                  const ncclConfig_t *config, const char *netName,
                                  const char *commName, int shrinkFlags)
{
    (void)cx;
    ncclConfig_t c;
    return ncclCommShrink(comm, (int *)excludeRanksList, excludeRanksCount, newcomm,
                          (ncclConfig_t *)server_config(config, &c, netName, commName),
                          shrinkFlags);
}

ncclResult_t apigenNcclCommRegister(ncclComm_t comm, void *buff, size_t size,
                                    apigenNcclRegistration *handle)
{
    return ncclCommRegister(comm, buff, size, (void **)handle);
}

ncclResult_t apigenNcclCommDeregister(ncclComm_t comm, apigenNcclRegistration handle)
{
    return ncclCommDeregister(comm, (void *)handle);
}

/* ---- buffers the spec cannot size ----------------------------------------------- */

static int comm_size(ncclComm_t comm)
{
    int n = 0;
    return comm && ncclCommCount(comm, &n) == ncclSuccess ? n : 0;
}

static int comm_rank(ncclComm_t comm)
{
    int r = -1;
    return comm && ncclCommUserRank(comm, &r) == ncclSuccess ? r : -1;
}

/* Whether [p, p + count x times elements) is the client's memory; NULL, no
 * elements or a type NCCL refuses: NCCL answers, as natively. */
static bool fits(apigen_call_ctx *cx, const void *p, size_t count, size_t times, ncclDataType_t t,
                 const char *fn, const char *what)
{
    size_t sz = (size_t)nccl_size_of_ncclDataType_t(t);
    if (!p || !count || !times || !sz) return true;
    uint64_t addr = (uint64_t)(uintptr_t)p, bytes = 0;
    if (count <= UINT64_MAX / times / sz) {
        bytes = (uint64_t)count * times * sz;
        if (apigen_dev_owned(cx->session, addr, bytes, true) || apigen_arena_holds(cx, addr, bytes))
            return true;
    }
    apigen_log("%s: %s at %p: %zu x %zu elements of %zu bytes are not all the client's device memory: "
               "refused (ncclInvalidArgument)",
               fn, what, p, count, times, sz);
    return false;
}

ncclResult_t nccl_host_broadcast(apigen_call_ctx *cx, const void *sendbuff, void *recvbuff,
                                 size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                                 cudaStream_t stream)
{
    if (comm_rank(comm) == root && !fits(cx, sendbuff, count, 1, datatype, "ncclBroadcast", "sendbuff"))
        return ncclInvalidArgument;
    return ncclBroadcast(sendbuff, recvbuff, count, datatype, root, comm, stream);
}

ncclResult_t nccl_host_reduce(apigen_call_ctx *cx, const void *sendbuff, void *recvbuff, size_t count,
                              ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm,
                              cudaStream_t stream)
{
    if (comm_rank(comm) == root && !fits(cx, recvbuff, count, 1, datatype, "ncclReduce", "recvbuff"))
        return ncclInvalidArgument;
    return ncclReduce(sendbuff, recvbuff, count, datatype, op, root, comm, stream);
}

ncclResult_t nccl_host_all_gather(apigen_call_ctx *cx, const void *sendbuff, void *recvbuff,
                                  size_t sendcount, ncclDataType_t datatype, ncclComm_t comm,
                                  cudaStream_t stream)
{
    int n = comm_size(comm);
    if (n && !fits(cx, recvbuff, sendcount, (size_t)n, datatype, "ncclAllGather", "recvbuff"))
        return ncclInvalidArgument;
    return ncclAllGather(sendbuff, recvbuff, sendcount, datatype, comm, stream);
}

ncclResult_t nccl_host_reduce_scatter(apigen_call_ctx *cx, const void *sendbuff, void *recvbuff,
                                      size_t recvcount, ncclDataType_t datatype, ncclRedOp_t op,
                                      ncclComm_t comm, cudaStream_t stream)
{
    int n = comm_size(comm);
    if (n && !fits(cx, sendbuff, recvcount, (size_t)n, datatype, "ncclReduceScatter", "sendbuff"))
        return ncclInvalidArgument;
    return ncclReduceScatter(sendbuff, recvbuff, recvcount, datatype, op, comm, stream);
}

ncclResult_t nccl_host_all_to_all(apigen_call_ctx *cx, const void *sendbuff, void *recvbuff,
                                  size_t count, ncclDataType_t datatype, ncclComm_t comm,
                                  cudaStream_t stream)
{
    int n = comm_size(comm);
    if (n && (!fits(cx, sendbuff, count, (size_t)n, datatype, "ncclAlltoAll", "sendbuff") ||
              !fits(cx, recvbuff, count, (size_t)n, datatype, "ncclAlltoAll", "recvbuff")))
        return ncclInvalidArgument;
    return ncclAlltoAll(sendbuff, recvbuff, count, datatype, comm, stream);
}

ncclResult_t nccl_host_gather(apigen_call_ctx *cx, const void *sendbuff, void *recvbuff, size_t count,
                              ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream)
{
    int n = comm_size(comm);
    if (n && comm_rank(comm) == root &&
        !fits(cx, recvbuff, count, (size_t)n, datatype, "ncclGather", "recvbuff"))
        return ncclInvalidArgument;
    return ncclGather(sendbuff, recvbuff, count, datatype, root, comm, stream);
}

ncclResult_t nccl_host_scatter(apigen_call_ctx *cx, const void *sendbuff, void *recvbuff, size_t count,
                               ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream)
{
    int n = comm_size(comm);
    if (n && comm_rank(comm) == root &&
        !fits(cx, sendbuff, count, (size_t)n, datatype, "ncclScatter", "sendbuff"))
        return ncclInvalidArgument;
    return ncclScatter(sendbuff, recvbuff, count, datatype, root, comm, stream);
}

/* The struct's bytes came at this header's size: NCCL must not read more. */
ncclResult_t nccl_host_group_simulate_end(apigen_call_ctx *cx, ncclSimInfo_t *simInfo)
{
    (void)cx;
    size_t size = simInfo->size;
    unsigned int version = simInfo->version;
    if (size > sizeof *simInfo) {
        simInfo->size = sizeof *simInfo;
        simInfo->version = NCCL_VERSION_CODE;
    }
    ncclResult_t r = ncclGroupSimulateEnd(simInfo);
    simInfo->size = size, simInfo->version = version; /* the caller's, as it wrote them */
    return r;
}
