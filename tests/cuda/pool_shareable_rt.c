/* A memory pool shared with another process by a POSIX file descriptor, as
 * NVIDIA's streamOrderedAllocationIPC sample does through the runtime API:
 * the parent creates a pool that may be exported so
 * (cudaMemPoolProps.handleTypes), exports it
 * (cudaMemPoolExportToShareableHandle) and passes the descriptor to a child
 * it starts (SCM_RIGHTS over a socket pair), which imports it
 * (cudaMemPoolImportFromShareableHandle). Then: an import of a descriptor
 * no export made (a pipe), an export of a pool made without handle types,
 * an export of another kind. Natively over the stand-in device
 * (fake_pools.c: exports are memfds) and forwarded: the child is another
 * client of the server; its answers must be the same. GPU: with
 * allocations and pointers shared too, tests/gpu/pool_ipc.cu. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fd_pass.h"

static int bad;

static void check(const char *what, cudaError_t e)
{
    printf("%s: %s\n", what, cudaGetErrorName(e));
    if (e != cudaSuccess) bad = 1;
}

static struct cudaMemPoolProps props(unsigned types)
{
    struct cudaMemPoolProps p;
    memset(&p, 0, sizeof p);
    p.allocType = cudaMemAllocationTypePinned;
    p.handleTypes = (enum cudaMemAllocationHandleType)types;
    p.location.type = cudaMemLocationTypeDevice;
    p.location.id = 0;
    return p;
}

static int child(int sock)
{
    char byte;
    int fd = fd_pass_recv(sock, &byte, 1);
    printf("child: got a descriptor: %s\n", fd >= 0 ? "yes" : "no");
    cudaMemPool_t pool = NULL;
    check("child: import", cudaMemPoolImportFromShareableHandle(&pool, (void *)(intptr_t)fd,
                                                                cudaMemHandleTypePosixFileDescriptor, 0));
    close(fd); /* the pool outlives the descriptor */
    unsigned long long reserved = 1;
    check("child: an attribute of the imported pool",
          cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
    printf("child: reserved %llu\n", reserved);
    check("child: destroy", cudaMemPoolDestroy(pool));
    fflush(stdout);
    return bad;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "child") == 0) return child(atoi(argv[2]));
    check("set device", cudaSetDevice(0));
    if (bad) return 1;
    struct cudaMemPoolProps p = props(cudaMemHandleTypePosixFileDescriptor);
    cudaMemPool_t pool = NULL;
    check("create an exportable pool", cudaMemPoolCreate(&pool, &p));
    int fd = -1;
    check("export", cudaMemPoolExportToShareableHandle(&fd, pool, cudaMemHandleTypePosixFileDescriptor, 0));
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
    close(fd);

    /* the runtime's own answers, whatever they are: forwarded, the server's
     * runtime gives them */
    int pp[2];
    if (pipe(pp) == 0) {
        cudaMemPool_t other = NULL;
        cudaError_t e = cudaMemPoolImportFromShareableHandle(&other, (void *)(intptr_t)pp[0],
                                                             cudaMemHandleTypePosixFileDescriptor, 0);
        printf("import of a pipe: %s\n", cudaGetErrorName(e));
        close(pp[0]), close(pp[1]);
    }
    struct cudaMemPoolProps plain = props(cudaMemHandleTypeNone);
    cudaMemPool_t closed = NULL;
    check("create a pool without handle types", cudaMemPoolCreate(&closed, &plain));
    int none = -1;
    printf("export of it: %s\n", cudaGetErrorName(cudaMemPoolExportToShareableHandle(
                                     &none, closed, cudaMemHandleTypePosixFileDescriptor, 0)));
    printf("an export as a Win32 handle: %s\n",
           cudaGetErrorName(cudaMemPoolExportToShareableHandle(&none, pool, cudaMemHandleTypeWin32, 0)));
    (void)cudaGetLastError();
    check("destroy", cudaMemPoolDestroy(pool));
    check("destroy the other", cudaMemPoolDestroy(closed));
    printf("%s\n", bad ? "FAILED" : "ok");
    return bad;
}
