/* NCCL's collectives and point to point, one process per rank, as a
 * distributed program runs them: rank 0 makes the unique id and hands it to
 * the others through a file, every rank joins the communicator, runs every
 * collective (in place and not, several types and operations, a group of
 * sends and receives around a ring, a split communicator, scaling operators
 * with a host and a device scalar, NCCL's own allocation and buffer
 * registration) and prints what it got. The parent prints each rank's
 * output in rank order, so stdout is the same run after run: natively and
 * forwarded it must be identical.
 *
 *   collectives [NRANKS]   (default 2; rank r uses device r % the device count)
 *   collectives --all N    one process drives N ranks (ncclCommInitAll, a group
 *                          of all-reduces over every communicator)
 *
 * Values are small integers, exact in every type used, so any reduction
 * order gives the same bits. Exit status: 0, 2 with "no usable GPU", or 1. */
#define _POSIX_C_SOURCE 200809L
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define N 1024 /* elements per rank */

static int rank, nranks, failed;
static cudaStream_t stream;

static const char *res(ncclResult_t r)
{
    static const char *names[] = {"ncclSuccess", "ncclUnhandledCudaError", "ncclSystemError",
                                  "ncclInternalError", "ncclInvalidArgument", "ncclInvalidUsage",
                                  "ncclRemoteError", "ncclInProgress"};
    return (unsigned)r < sizeof names / sizeof *names ? names[r] : "another result";
}

/* prints the call's result; a failure makes the run fail */
static int check(const char *what, ncclResult_t r)
{
    if (r != ncclSuccess) {
        printf("%s: %s\n", what, res(r));
        failed = 1;
    }
    return r == ncclSuccess;
}

static int cuda_ok(const char *what, cudaError_t e)
{
    if (e != cudaSuccess) {
        printf("%s: cuda error %d\n", what, (int)e);
        failed = 1;
    }
    return e == cudaSuccess;
}

static void *dev(size_t bytes)
{
    void *p = NULL;
    return cuda_ok("cudaMalloc", cudaMalloc(&p, bytes)) ? p : NULL;
}

static void put_floats(float *d, size_t n, float scale, float offset)
{
    float *h = malloc(n * sizeof *h);
    for (size_t i = 0; i < n; i++) h[i] = scale * (float)(i % 97) + offset;
    cuda_ok("upload", cudaMemcpy(d, h, n * sizeof *h, cudaMemcpyHostToDevice));
    free(h);
}

/* N floats on the current device, (i % 97) + r + 1 */
static float *dev_floats(int r)
{
    float *d = dev(N * sizeof(float));
    if (d) put_floats(d, N, 1.0f, (float)(r + 1));
    return d;
}

/* what a float buffer holds: a sum and three samples, exact */
static void show_floats(const char *what, const float *d, size_t n)
{
    float *h = malloc(n * sizeof *h);
    cuda_ok("sync", cudaStreamSynchronize(stream));
    if (cuda_ok("download", cudaMemcpy(h, d, n * sizeof *h, cudaMemcpyDeviceToHost))) {
        double s = 0;
        for (size_t i = 0; i < n; i++) s += h[i];
        printf("%s: sum %.1f [0] %g [%zu] %g [%zu] %g\n", what, s, h[0], n / 2, h[n / 2], n - 1, h[n - 1]);
    }
    free(h);
}

static void show_ints(const char *what, const int32_t *d, size_t n)
{
    int32_t *h = malloc(n * sizeof *h);
    cuda_ok("sync", cudaStreamSynchronize(stream));
    if (cuda_ok("download", cudaMemcpy(h, d, n * sizeof *h, cudaMemcpyDeviceToHost))) {
        long long s = 0;
        for (size_t i = 0; i < n; i++) s += h[i];
        printf("%s: sum %lld [0] %d [%zu] %d\n", what, s, h[0], n - 1, h[n - 1]);
    }
    free(h);
}

/* half precision of small integers: exact both ways */
static uint16_t to_half(int v)
{
    if (v == 0) return 0;
    uint16_t sign = v < 0 ? 0x8000 : 0;
    unsigned a = (unsigned)(v < 0 ? -v : v), e = 0;
    while ((a >> e) > 1) e++;
    unsigned mant = (a << (10 - e)) & 0x3ff; /* a < 2048: exact */
    return (uint16_t)(sign | ((e + 15) << 10) | mant);
}

static int from_half(uint16_t h)
{
    if ((h & 0x7fff) == 0) return 0;
    int e = ((h >> 10) & 0x1f) - 15;
    int v = (int)((0x400 | (h & 0x3ff)) >> (10 - e));
    return h & 0x8000 ? -v : v;
}

static ncclUniqueId shared_id(const char *dir)
{
    ncclUniqueId id;
    char path[512], tmp[520];
    snprintf(path, sizeof path, "%s/id", dir);
    if (rank == 0) {
        check("ncclGetUniqueId", ncclGetUniqueId(&id));
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        FILE *f = fopen(tmp, "wb");
        if (!f || fwrite(&id, sizeof id, 1, f) != 1 || fclose(f) != 0 || rename(tmp, path) != 0) {
            printf("cannot write the id\n");
            exit(1);
        }
        return id;
    }
    for (int i = 0; i < 6000; i++) { /* 60 s */
        FILE *f = fopen(path, "rb");
        if (f) {
            size_t got = fread(&id, sizeof id, 1, f);
            fclose(f);
            if (got == 1) return id;
        }
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    printf("no id from rank 0\n");
    exit(1);
}

static void collectives(ncclComm_t comm)
{
    float *a = dev(N * sizeof(float) * (size_t)nranks), *b = dev(N * sizeof(float) * (size_t)nranks);
    int32_t *ia = dev(N * sizeof(int32_t)), *ib = dev(N * sizeof(int32_t));
    if (!a || !b || !ia || !ib) return;

    put_floats(a, N, (float)(rank + 1), 0);
    if (check("allreduce sum", ncclAllReduce(a, b, N, ncclFloat32, ncclSum, comm, stream)))
        show_floats("allreduce sum", b, N);
    if (check("allreduce in place", ncclAllReduce(a, a, N, ncclFloat32, ncclMax, comm, stream)))
        show_floats("allreduce max in place", a, N);
    put_floats(a, N, 2.0f, (float)(2 * rank));
    if (check("allreduce avg", ncclAllReduce(a, b, N, ncclFloat32, ncclAvg, comm, stream)))
        show_floats("allreduce avg", b, N);

    int32_t hi[N];
    for (int i = 0; i < N; i++) hi[i] = (i % 5) + rank + 1;
    cuda_ok("upload", cudaMemcpy(ia, hi, sizeof hi, cudaMemcpyHostToDevice));
    if (check("allreduce prod", ncclAllReduce(ia, ib, N, ncclInt32, ncclProd, comm, stream)))
        show_ints("allreduce int32 prod", ib, N);
    if (check("allreduce min", ncclAllReduce(ia, ib, N, ncclInt32, ncclMin, comm, stream)))
        show_ints("allreduce int32 min", ib, N);

    uint16_t hh[N];
    for (int i = 0; i < N; i++) hh[i] = to_half((i % 13) - 6 + rank);
    uint16_t *ha = dev(sizeof hh);
    if (ha) {
        cuda_ok("upload", cudaMemcpy(ha, hh, sizeof hh, cudaMemcpyHostToDevice));
        if (check("allreduce half", ncclAllReduce(ha, ha, N, ncclFloat16, ncclSum, comm, stream))) {
            cuda_ok("sync", cudaStreamSynchronize(stream));
            cuda_ok("download", cudaMemcpy(hh, ha, sizeof hh, cudaMemcpyDeviceToHost));
            long s = 0;
            for (int i = 0; i < N; i++) s += from_half(hh[i]);
            printf("allreduce half sum: %ld [1] %d\n", s, from_half(hh[1]));
        }
        cudaFree(ha);
    }

    int root = 1 % nranks;
    put_floats(a, N, 1.0f, (float)(100 * rank));
    if (check("broadcast", ncclBroadcast(a, b, N, ncclFloat32, root, comm, stream)))
        show_floats("broadcast from the last root", b, N);
    put_floats(a, N, 1.0f, (float)(10 * rank));
    if (check("bcast", ncclBcast(a, N, ncclFloat32, 0, comm, stream)))
        show_floats("bcast in place from 0", a, N);
    put_floats(a, N, (float)(rank + 1), 1);
    cuda_ok("clear", cudaMemset(b, 0, N * sizeof(float)));
    if (check("reduce", ncclReduce(a, b, N, ncclFloat32, ncclSum, root, comm, stream)))
        show_floats(rank == root ? "reduce at the root" : "reduce elsewhere", b, N);

    put_floats(a, N, 1.0f, (float)(1000 * rank));
    if (check("allgather", ncclAllGather(a, b, N, ncclFloat32, comm, stream)))
        show_floats("allgather", b, N * (size_t)nranks);
    put_floats(a, N * (size_t)nranks, (float)(rank + 1), 0);
    if (check("reducescatter", ncclReduceScatter(a, b, N, ncclFloat32, ncclSum, comm, stream)))
        show_floats("reducescatter", b, N);
    put_floats(a, N * (size_t)nranks, 1.0f, (float)(7 * rank));
    if (check("alltoall", ncclAlltoAll(a, b, N, ncclFloat32, comm, stream)))
        show_floats("alltoall", b, N * (size_t)nranks);
    put_floats(a, N, 1.0f, (float)(3 * rank));
    cuda_ok("clear", cudaMemset(b, 0, N * sizeof(float) * (size_t)nranks));
    if (check("gather", ncclGather(a, b, N, ncclFloat32, 0, comm, stream)))
        show_floats(rank == 0 ? "gather at the root" : "gather elsewhere", b, N * (size_t)nranks);
    put_floats(a, N * (size_t)nranks, 2.0f, (float)(5 * rank));
    if (check("scatter", ncclScatter(a, b, N, ncclFloat32, 0, comm, stream)))
        show_floats("scatter from 0", b, N);

    /* a ring of sends and receives in one group */
    put_floats(a, N, 1.0f, (float)(11 * rank));
    ncclResult_t r = ncclGroupStart();
    if (r == ncclSuccess) r = ncclSend(a, N, ncclFloat32, (rank + 1) % nranks, comm, stream);
    if (r == ncclSuccess) r = ncclRecv(b, N, ncclFloat32, (rank + nranks - 1) % nranks, comm, stream);
    ncclResult_t e = ncclGroupEnd();
    if (check("send/recv", r != ncclSuccess ? r : e)) show_floats("recv from the previous rank", b, N);

    /* scaling operators: a host scalar read at once, a device one at each use */
    ncclRedOp_t op;
    float two = 2.0f;
    put_floats(a, N, 1.0f, (float)rank);
    if (check("premulsum host", ncclRedOpCreatePreMulSum(&op, &two, ncclFloat32, ncclScalarHostImmediate, comm))) {
        two = 5.0f; /* read before the call returned: no effect */
        if (check("allreduce premulsum", ncclAllReduce(a, b, N, ncclFloat32, op, comm, stream)))
            show_floats("allreduce premulsum x2", b, N);
        check("redop destroy", ncclRedOpDestroy(op, comm));
    }
    float *scalar = dev(sizeof(float));
    float three = 3.0f;
    if (scalar && cuda_ok("upload", cudaMemcpy(scalar, &three, sizeof three, cudaMemcpyHostToDevice)) &&
        check("premulsum device", ncclRedOpCreatePreMulSum(&op, scalar, ncclFloat32, ncclScalarDevice, comm))) {
        if (check("allreduce premulsum device", ncclAllReduce(a, b, N, ncclFloat32, op, comm, stream)))
            show_floats("allreduce premulsum x3 (device scalar)", b, N);
        check("redop destroy", ncclRedOpDestroy(op, comm));
    }
    cudaFree(scalar);

    /* NCCL's own memory, registered */
    void *m = NULL, *reg = NULL;
    if (check("ncclMemAlloc", ncclMemAlloc(&m, N * sizeof(float)))) {
        if (check("ncclCommRegister", ncclCommRegister(comm, m, N * sizeof(float), &reg))) {
            put_floats(a, N, 1.0f, (float)(rank * 2));
            if (check("allreduce into ncclMemAlloc memory", ncclAllReduce(a, m, N, ncclFloat32, ncclSum, comm, stream)))
                show_floats("allreduce into ncclMemAlloc memory", m, N);
            check("ncclCommDeregister", ncclCommDeregister(comm, reg));
        }
        check("ncclMemFree", ncclMemFree(m));
    }

    /* the same collectives again and again, as a training or inference loop
       makes them (forwarded, repeats are queued: specs/nccl.yaml) */
    put_floats(a, N, 1.0f, (float)rank);
    r = ncclSuccess;
    for (int i = 0; i < 10 && r == ncclSuccess; i++) {
        r = ncclAllReduce(a, b, N, ncclFloat32, ncclSum, comm, stream);
        if (r == ncclSuccess) r = ncclAllReduce(b, a, N, ncclFloat32, ncclMax, comm, stream);
    }
    if (check("a loop of allreduces", r)) show_floats("after 10 rounds of sum and max", a, N);

    /* an argument NCCL refuses: its answer, and a last error to read */
    r = ncclAllReduce(a, b, N, ncclNumTypes, ncclSum, comm, stream);
    printf("allreduce of no type: %s; last error %s\n", res(r), *ncclGetLastError(comm) ? "set" : "empty");
    cudaFree(a), cudaFree(b), cudaFree(ia), cudaFree(ib);
}

static int run_rank(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/rank%d.out", dir, rank);
    if (!freopen(path, "w", stdout)) return 1;
    setvbuf(stdout, NULL, _IOLBF, 0);
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
        printf("no usable GPU\n");
        return 2;
    }
    if (!cuda_ok("cudaSetDevice", cudaSetDevice(rank % ndev))) return 1;
    if (!cuda_ok("cudaStreamCreate", cudaStreamCreate(&stream))) return 1;
    int version = 0;
    check("ncclGetVersion", ncclGetVersion(&version));
    printf("rank %d of %d: NCCL %d; %s; %s\n", rank, nranks, version, ncclGetErrorString(ncclSuccess),
           ncclGetErrorString(ncclInvalidArgument));

    ncclUniqueId id = shared_id(dir);
    ncclComm_t comm = NULL;
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.commName = "apigen-collectives";
    config.blocking = 1;
    if (!check("ncclCommInitRankConfig", ncclCommInitRankConfig(&comm, nranks, id, rank, &config))) return 1;
    int count = -1, me = -1, cudev = -1;
    check("ncclCommCount", ncclCommCount(comm, &count));
    check("ncclCommUserRank", ncclCommUserRank(comm, &me));
    check("ncclCommCuDevice", ncclCommCuDevice(comm, &cudev));
    printf("communicator: %d ranks, this is %d, device %d\n", count, me, cudev);
    ncclResult_t async = ncclInProgress;
    check("ncclCommGetAsyncError", ncclCommGetAsyncError(comm, &async));
    printf("async error: %s\n", res(async));

    collectives(comm);

    /* a split: even and odd ranks, ordered backwards */
    ncclComm_t half = NULL;
    if (check("ncclCommSplit", ncclCommSplit(comm, rank % 2, -rank, &half, NULL))) {
        int hc = -1, hr = -1;
        ncclCommCount(half, &hc);
        ncclCommUserRank(half, &hr);
        printf("split: %d ranks, this is %d\n", hc, hr);
        float *x = dev(N * sizeof(float));
        if (x) {
            put_floats(x, N, 1.0f, (float)(rank + 1));
            if (check("allreduce on the split", ncclAllReduce(x, x, N, ncclFloat32, ncclSum, half, stream)))
                show_floats("allreduce on the split", x, N);
            cudaFree(x);
        }
        check("ncclCommAbort", ncclCommAbort(half));
    }
    /* a rank that takes no part */
    ncclComm_t none = comm;
    if (check("ncclCommSplit nocolor", ncclCommSplit(comm, rank == 0 ? NCCL_SPLIT_NOCOLOR : 1, 0, &none, NULL))) {
        printf("split without a color: %s\n", none ? "a communicator" : "none");
        if (none) ncclCommDestroy(none);
    }
    check("ncclCommFinalize", ncclCommFinalize(comm));
    check("ncclCommDestroy", ncclCommDestroy(comm));
    cudaStreamDestroy(stream);
    printf("%s\n", failed ? "FAILED" : "done");
    return failed;
}

/* One process driving every rank (ncclCommInitAll, as a single-process
 * multi-GPU program does): rank r on device r % the device count; one group
 * of all-reduces over all communicators. */
static int run_all(int n)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
        printf("no usable GPU\n");
        return 2;
    }
    ncclComm_t comms[8];
    int devs[8];
    float *bufs[8] = {0};
    for (int r = 0; r < n; r++) devs[r] = r % ndev;
    ncclResult_t e = ncclCommInitAll(comms, n, devs);
    printf("ncclCommInitAll of %d: %s\n", n, res(e));
    if (e != ncclSuccess) return 0; /* the library's answer (one GPU: duplicates) is the output */
    for (int r = 0; r < n; r++) {
        int count = -1, me = -1, dev = -1;
        ncclCommCount(comms[r], &count), ncclCommUserRank(comms[r], &me), ncclCommCuDevice(comms[r], &dev);
        printf("communicator %d: %d ranks, rank %d, device %d\n", r, count, me, dev);
        if (!cuda_ok("cudaSetDevice", cudaSetDevice(devs[r])) || !(bufs[r] = dev_floats(r))) return 1;
    }
    for (int round = 0; round < 3; round++) {
        e = ncclGroupStart();
        for (int r = 0; r < n && e == ncclSuccess; r++)
            e = ncclAllReduce(bufs[r], bufs[r], N, ncclFloat32, ncclSum, comms[r], 0);
        ncclResult_t end = ncclGroupEnd();
        check("a group of all-reduces", e != ncclSuccess ? e : end);
    }
    for (int r = 0; r < n; r++) {
        cuda_ok("cudaSetDevice", cudaSetDevice(devs[r]));
        char what[64];
        snprintf(what, sizeof what, "rank %d after 3 rounds", r);
        show_floats(what, bufs[r], N);
        cudaFree(bufs[r]);
        check("ncclCommDestroy", ncclCommDestroy(comms[r]));
    }
    printf("%s\n", failed ? "FAILED" : "done");
    return failed;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--all") == 0) {
        nranks = atoi(argv[2]);
        return nranks >= 1 && nranks <= 8 ? run_all(nranks) : 1;
    }
    if (argc == 5 && strcmp(argv[1], "--rank") == 0) {
        rank = atoi(argv[2]), nranks = atoi(argv[3]);
        return run_rank(argv[4]);
    }
    nranks = argc > 1 ? atoi(argv[1]) : 2;
    if (nranks < 1 || nranks > 8) {
        fprintf(stderr, "usage: %s [NRANKS 1..8]\n", argv[0]);
        return 1;
    }
    char dir[] = "/tmp/nccl-collectives.XXXXXX";
    if (!mkdtemp(dir)) return 1;
    pid_t pids[8];
    for (int r = 0; r < nranks; r++) {
        char rs[16], ns[16];
        snprintf(rs, sizeof rs, "%d", r), snprintf(ns, sizeof ns, "%d", nranks);
        pids[r] = fork();
        if (pids[r] == 0) {
            execl("/proc/self/exe", argv[0], "--rank", rs, ns, dir, (char *)NULL);
            _exit(127);
        }
    }
    int worst = 0;
    for (int r = 0; r < nranks; r++) {
        int st = 0;
        waitpid(pids[r], &st, 0);
        int code = WIFEXITED(st) ? WEXITSTATUS(st) : 1;
        if (code > worst) worst = code;
    }
    int no_gpu = 0;
    for (int r = 0; r < nranks; r++) {
        char path[512], line[512];
        snprintf(path, sizeof path, "%s/rank%d.out", dir, r);
        FILE *f = fopen(path, "r");
        printf("== rank %d\n", r);
        while (f && fgets(line, sizeof line, f)) {
            if (strcmp(line, "no usable GPU\n") == 0) no_gpu = 1;
            fputs(line, stdout);
        }
        if (f) fclose(f);
        unlink(path);
    }
    char idpath[512];
    snprintf(idpath, sizeof idpath, "%s/id", dir);
    unlink(idpath);
    rmdir(dir);
    if (no_gpu) printf("no usable GPU\n");
    return no_gpu ? 2 : worst;
}
