/* How long a collective costs the program that makes it, in a loop as a
 * training or inference step makes them: one rank (one GPU), N all-reduces
 * of `count` floats on one stream, then one synchronization; microseconds
 * per all-reduce, best of three rounds. bench/nccl.sh runs it natively and
 * through apigen's libnccl.so.2 in one run and prints the ratios.
 *   bench_nccl_loop [COUNT [N]]   (default 1 float, 2000 calls) */
#define _POSIX_C_SOURCE 200809L
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
    size_t count = argc > 1 ? strtoull(argv[1], NULL, 10) : 1;
    int n = argc > 2 ? atoi(argv[2]) : 2000;
    float *buf = NULL;
    cudaStream_t s;
    ncclUniqueId id;
    ncclComm_t comm;
    if (count < 1 || n < 1 || cudaMalloc((void **)&buf, count * sizeof(float)) != cudaSuccess ||
        cudaMemset(buf, 0, count * sizeof(float)) != cudaSuccess || cudaStreamCreate(&s) != cudaSuccess ||
        ncclGetUniqueId(&id) != ncclSuccess || ncclCommInitRank(&comm, 1, id, 0) != ncclSuccess) {
        printf("no GPU or no NCCL\n");
        return 2;
    }
    double best = 1e30;
    for (int round = 0; round < 3; round++) {
        double t0 = now_us();
        for (int i = 0; i < n; i++)
            if (ncclAllReduce(buf, buf, count, ncclFloat32, ncclSum, comm, s) != ncclSuccess) {
                printf("ncclAllReduce failed\n");
                return 1;
            }
        if (cudaStreamSynchronize(s) != cudaSuccess) return 1;
        double us = (now_us() - t0) / n;
        if (us < best) best = us;
    }
    printf("allreduce %zu floats: %.2f us\n", count, best);
    ncclCommDestroy(comm);
    cudaStreamDestroy(s);
    cudaFree(buf);
    return 0;
}
