/* Memory shared between two processes by a POSIX file descriptor, as
 * NVIDIA's memMapIPCDrv sample and NCCL's cuMem path do: the parent creates
 * an allocation (cuMemCreate), maps it, fills it, exports it
 * (cuMemExportToShareableHandle) and passes the descriptor to a child it
 * starts (SCM_RIGHTS over a socket pair); the child imports it, maps it,
 * reads the parent's values and adds 1000 to each; the parent reads the
 * child's values back. Then a descriptor that no export made is refused.
 * Natively over the stand-in driver (driver/fake_driver.c: allocations
 * are memfds) and forwarded: the child is another client of the server, in
 * another session process (unix, tcp) or thread (shm). */
#define _GNU_SOURCE
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../fd_pass.h"

#define N 4096 /* ints: 16 KiB of the 64 KiB granule */

static int bad;

static void check(const char *what, CUresult e)
{
    printf("%s: %d\n", what, (int)e);
    if (e != CUDA_SUCCESS) bad = 1;
}

static CUmemAllocationProp prop(void)
{
    CUmemAllocationProp p;
    memset(&p, 0, sizeof p);
    p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = 0;
    p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    return p;
}

/* reserve a range for h and map it read-write for device 0 */
static CUdeviceptr map(CUmemGenericAllocationHandle h, size_t size)
{
    CUdeviceptr d = 0;
    check("reserve", cuMemAddressReserve(&d, size, 0, 0, 0));
    check("map", cuMemMap(d, size, 0, h, 0));
    CUmemAccessDesc acc;
    memset(&acc, 0, sizeof acc);
    acc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    acc.location.id = 0;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    check("access", cuMemSetAccess(d, size, &acc, 1));
    return d;
}

static void unmap(CUdeviceptr d, size_t size, CUmemGenericAllocationHandle h)
{
    check("unmap", cuMemUnmap(d, size));
    check("release", cuMemRelease(h));
    check("address free", cuMemAddressFree(d, size));
}

static CUcontext setup(void)
{
    CUdevice dev;
    CUcontext ctx = NULL;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
        cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS || cuCtxSetCurrent(ctx) != CUDA_SUCCESS) {
        printf("setup failed\n");
        exit(1);
    }
    return ctx;
}

static int child(int sock)
{
    char byte;
    int fd = fd_pass_recv(sock, &byte, 1);
    printf("child: got a descriptor: %s\n", fd >= 0 ? "yes" : "no");
    setup();
    CUmemAllocationProp p = prop();
    size_t g = 0;
    check("child: granularity", cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    CUmemGenericAllocationHandle h = 0;
    check("child: import", cuMemImportFromShareableHandle(&h, (void *)(intptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
    close(fd); /* the allocation outlives the descriptor, as the driver's */
    CUdeviceptr d = map(h, g);
    int *v = malloc(N * sizeof *v);
    check("child: read", cuMemcpyDtoH(v, d, N * sizeof *v));
    long long sum = 0;
    for (int i = 0; i < N; i++) sum += v[i];
    printf("child: the parent's values sum to %lld\n", sum);
    for (int i = 0; i < N; i++) v[i] += 1000;
    check("child: write", cuMemcpyHtoD(d, v, N * sizeof *v));
    check("child: synchronize", cuCtxSynchronize());
    unmap(d, g, h);
    free(v);
    fflush(stdout);
    return bad;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "child") == 0) return child(atoi(argv[2]));
    setup();
    CUmemAllocationProp p = prop();
    size_t g = 0;
    check("granularity", cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    CUmemGenericAllocationHandle h = 0;
    check("create", cuMemCreate(&h, g, &p, 0));
    CUdeviceptr d = map(h, g);
    int *v = malloc(N * sizeof *v);
    for (int i = 0; i < N; i++) v[i] = 3 * i;
    check("write", cuMemcpyHtoD(d, v, N * sizeof *v));
    int fd = -1;
    check("export", cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    printf("exported a descriptor: %s\n", fd >= 0 ? "yes" : "no");

    int sock = -1;
    pid_t pid = fd_pass_spawn(argv[0], &sock);
    if (pid < 0) return 1;
    char byte = 0;
    if (fd_pass_send(sock, fd, &byte, 1) != 0) printf("sendmsg failed\n");
    int status = 0;
    waitpid(pid, &status, 0);
    printf("child exit: %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    if (!WIFEXITED(status) || WEXITSTATUS(status)) bad = 1;

    check("read back", cuMemcpyDtoH(v, d, N * sizeof *v));
    int right = 1;
    for (int i = 0; i < N; i++) right &= v[i] == 3 * i + 1000;
    printf("the child's values: %s\n", right ? "right" : "WRONG");
    if (!right) bad = 1;

    /* a descriptor no export made (a pipe) names no allocation */
    int pp[2];
    if (pipe(pp) == 0) {
        CUmemGenericAllocationHandle other = 0;
        CUresult e = cuMemImportFromShareableHandle(&other, (void *)(intptr_t)pp[0], CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
        /* the driver's own answer, whatever it is: forwarded, the server's driver gives it */
        printf("import of a pipe: %s (%d)\n", e == CUDA_SUCCESS ? "taken" : "refused", (int)e);
        close(pp[0]), close(pp[1]);
    }
    close(fd);
    unmap(d, g, h);
    free(v);
    printf("%s\n", bad ? "FAILED" : "ok");
    return bad;
}
