/* Bad input to NCCL through the stub, in a communicator of one rank: a
 * forged communicator, host memory or a buffer too short for a collective
 * (checked by the spec: count elements of the type), a gather's receive
 * buffer too short for count x ranks and a broadcast root's send buffer that
 * is not the client's (checked on the server with the communicator's size
 * and rank), a device scalar that is host memory, a forged registration, a
 * free of memory ncclMemAlloc never gave, a config that claims to be larger
 * than the stub's header, a queued repeat on a destroyed communicator (its
 * error comes with the next call). Each gives NCCL's ncclInvalidArgument
 * (or the library's own answer), never a crash; the real calls around them
 * work.
 * Run forwarded (tests/nccl: the expected output is the stub's). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

#define N 256

static int bad;

static void show(const char *what, ncclResult_t got, ncclResult_t want)
{
    printf("%s: %d\n", what, (int)got);
    if (got != want) bad = 1;
}

int main(void)
{
    float *d = NULL, *shorter = NULL;
    if (cudaMalloc((void **)&d, N * sizeof(float)) != cudaSuccess ||
        cudaMalloc((void **)&shorter, (N - 1) * sizeof(float)) != cudaSuccess) {
        printf("cudaMalloc: no usable GPU, stopping\n");
        return 2;
    }
    ncclUniqueId id;
    ncclComm_t comm = NULL;
    if (ncclGetUniqueId(&id) != ncclSuccess || ncclCommInitRank(&comm, 1, id, 0) != ncclSuccess) {
        printf("no communicator of one rank\n");
        return 1;
    }
    float *host = calloc(N, sizeof(float));
    ncclComm_t forged = (ncclComm_t)(uintptr_t)0x5eed;

    show("forged communicator: ncclAllReduce", ncclAllReduce(d, d, N, ncclFloat32, ncclSum, forged, 0),
         ncclInvalidArgument);
    int n = 0;
    show("forged communicator: ncclCommCount", ncclCommCount(forged, &n), ncclInvalidArgument);
    show("host memory: ncclAllReduce", ncclAllReduce(host, d, N, ncclFloat32, ncclSum, comm, 0),
         ncclInvalidArgument);
    show("buffer shorter than count: ncclAllReduce",
         ncclAllReduce(d, shorter, N, ncclFloat32, ncclSum, comm, 0), ncclInvalidArgument);
    show("buffer shorter than count x ranks: ncclAllGather",
         ncclAllGather(d, shorter, N, ncclFloat32, comm, 0), ncclInvalidArgument);
    show("root's send buffer not the client's: ncclBroadcast",
         ncclBroadcast(host, d, N, ncclFloat32, 0, comm, 0), ncclInvalidArgument);
    show("send buffer shorter than count x ranks: ncclReduceScatter",
         ncclReduceScatter(shorter, d, N, ncclFloat32, ncclSum, comm, 0), ncclInvalidArgument);
    ncclRedOp_t op;
    show("device scalar in host memory: ncclRedOpCreatePreMulSum",
         ncclRedOpCreatePreMulSum(&op, host, ncclFloat32, ncclScalarDevice, comm), ncclInvalidArgument);
    show("forged registration: ncclCommDeregister", ncclCommDeregister(comm, (void *)(uintptr_t)0x77),
         ncclInvalidArgument);
    show("memory ncclMemAlloc never gave: ncclMemFree", ncclMemFree(host), ncclInvalidArgument);

    /* a config larger than the stub's header: cut to it, the call works */
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.size = 1 << 20;
    ncclComm_t other = NULL;
    ncclUniqueId id2;
    ncclGetUniqueId(&id2);
    ncclResult_t r = ncclCommInitRankConfig(&other, 1, id2, 0, &config);
    show("config claiming 1 MiB: ncclCommInitRankConfig", r, ncclSuccess);
    if (r == ncclSuccess) ncclCommDestroy(other);

    show("real communicator: ncclAllReduce", ncclAllReduce(d, d, N, ncclFloat32, ncclSum, comm, 0),
         ncclSuccess);
    show("real communicator: ncclCommDestroy", ncclCommDestroy(comm), ncclSuccess);
    show("destroyed communicator: ncclAllReduce", ncclAllReduce(d, d, N / 2, ncclFloat32, ncclSum, comm, 0),
         ncclInvalidArgument);
    /* the shape of a call that succeeded before is queued (specs/nccl.yaml):
       the server's refusal comes with the thread's next NCCL call */
    show("destroyed communicator, a repeat (queued): ncclAllReduce",
         ncclAllReduce(d, d, N, ncclFloat32, ncclSum, comm, 0), ncclSuccess);
    int version = 0;
    show("the next call returns the queued call's error: ncclGetVersion", ncclGetVersion(&version),
         ncclInvalidArgument);
    show("and the one after it its own: ncclGetVersion", ncclGetVersion(&version), ncclSuccess);
    printf("every bad input failed cleanly: %s\n", bad ? "NO" : "yes");
    free(host);
    cudaFree(d), cudaFree(shorter);
    return 0;
}
