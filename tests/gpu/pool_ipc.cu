// Stream-ordered allocations shared between two processes, as NVIDIA's
// streamOrderedAllocationIPC sample does: the parent allocates from a pool
// exportable as POSIX descriptors, fills the allocation with a kernel,
// exports the pool (cudaMemPoolExportToShareableHandle) and the pointer
// (cudaMemPoolExportPointer) and hands both to a child it starts (the
// descriptor over SCM_RIGHTS); the child imports them, checks the values,
// adds 1000 with a kernel and frees its mapping; the parent reads the
// child's values back. tests/gpu/pool-ipc.sh runs it natively and forwarded
// (runtime stub with -cudart shared, driver stub with the static runtime).
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../cuda/fd_pass.h"

#define N 4096

static int bad;

static void check(const char *what, cudaError_t e)
{
    printf("%s: %s\n", what, cudaGetErrorName(e));
    if (e != cudaSuccess) bad = 1;
}

__global__ void fill(int *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = 3 * i;
}

__global__ void add(int *p, int n, int v)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] += v;
}

struct msg {
    struct cudaMemPoolPtrExportData data;
};

static int child(int sock)
{
    struct msg m;
    int fd = fd_pass_recv(sock, &m, sizeof m);
    printf("child: got a descriptor: %s\n", fd >= 0 ? "yes" : "no");
    check("child: set device", cudaSetDevice(0));
    cudaMemPool_t pool = nullptr;
    check("child: import the pool",
          cudaMemPoolImportFromShareableHandle(&pool, (void *)(intptr_t)fd, cudaMemHandleTypePosixFileDescriptor, 0));
    close(fd);
    int *p = nullptr;
    check("child: import the pointer", cudaMemPoolImportPointer((void **)&p, pool, &m.data));
    static int v[N];
    check("child: read", cudaMemcpy(v, p, sizeof v, cudaMemcpyDeviceToHost));
    long long sum = 0;
    for (int i = 0; i < N; i++) sum += v[i];
    printf("child: the parent's values sum to %lld\n", sum);
    add<<<N / 256, 256>>>(p, N, 1000);
    check("child: add", cudaDeviceSynchronize());
    check("child: free its mapping", cudaFree(p));
    check("child: destroy the pool", cudaMemPoolDestroy(pool));
    fflush(stdout);
    return bad;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "child") == 0) return child(atoi(argv[2]));
    check("set device", cudaSetDevice(0));
    struct cudaMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypePosixFileDescriptor;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    cudaMemPool_t pool = nullptr;
    check("create the pool", cudaMemPoolCreate(&pool, &props));
    cudaStream_t s;
    check("stream", cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    int *p = nullptr;
    check("allocate", cudaMallocFromPoolAsync((void **)&p, N * sizeof(int), pool, s));
    fill<<<N / 256, 256, 0, s>>>(p, N);
    check("fill", cudaStreamSynchronize(s));
    int fd = -1;
    check("export the pool", cudaMemPoolExportToShareableHandle(&fd, pool, cudaMemHandleTypePosixFileDescriptor, 0));
    struct msg m;
    check("export the pointer", cudaMemPoolExportPointer(&m.data, p));
    int sock = -1;
    pid_t pid = bad ? -1 : fd_pass_spawn(argv[0], &sock);
    if (pid < 0) return 1;
    if (fd_pass_send(sock, fd, &m, sizeof m) != 0) printf("sendmsg failed\n");
    int status = 0;
    waitpid(pid, &status, 0);
    printf("child exit: %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    if (!WIFEXITED(status) || WEXITSTATUS(status)) bad = 1;
    static int v[N];
    check("read back", cudaMemcpy(v, p, sizeof v, cudaMemcpyDeviceToHost));
    int right = 1;
    for (int i = 0; i < N; i++) right &= v[i] == 3 * i + 1000;
    printf("the child's values: %s\n", right ? "right" : "WRONG");
    bad |= !right;
    close(fd);
    check("free", cudaFreeAsync(p, s));
    check("synchronize", cudaStreamSynchronize(s));
    check("destroy the pool", cudaMemPoolDestroy(pool));
    printf("%s\n", bad ? "FAILED" : "ok");
    return bad;
}
