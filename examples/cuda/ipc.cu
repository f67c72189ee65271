// ipc: two processes share device memory and an event through CUDA IPC
// handles, as NVIDIA's simpleIPC sample does. The parent forks before
// either process touches CUDA (the child launches kernels the parent's
// binary registered); the parent allocates and fills 4 MiB, hands the child
// a memory handle and an interprocess event's handle through a pipe; the
// child opens both, doubles every value in a kernel, records the event and
// says so; the parent waits on the event, reads the values back and checks
// them. Also: the handle of
// a pointer that is no allocation, and a handle of zeros opened; their errors
// are printed (compared natively and forwarded). Over apigen each process
// is its own session (a process per session on the server, as natively).
#include "common.h"

#include <cstring>
#include <sys/wait.h>
#include <unistd.h>

static const int N = 1 << 20; // ints

__global__ void twice(int *v, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        v[i] *= 2;
}

__global__ void fill(int *v, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        v[i] = i % 1000;
}

static bool full_read(int fd, void *p, size_t n)
{
    for (size_t got = 0; got < n;) {
        ssize_t k = read(fd, (char *)p + got, n - got);
        if (k <= 0)
            return false;
        got += (size_t)k;
    }
    return true;
}

static int child(int in, int out)
{
    cudaIpcMemHandle_t mh;
    cudaIpcEventHandle_t eh;
    if (!full_read(in, &mh, sizeof mh) || !full_read(in, &eh, sizeof eh)) {
        std::printf("child: no handles from the parent\n");
        return 1;
    }
    int *d = nullptr;
    CHECK(cudaIpcOpenMemHandle((void **)&d, mh, cudaIpcMemLazyEnablePeerAccess));
    cudaEvent_t ev;
    CHECK(cudaIpcOpenEventHandle(&ev, eh));
    twice<<<256, 256>>>(d, N);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(ev, 0));
    char ok = 1;
    if (write(out, &ok, 1) != 1)
        return 1;
    CHECK(cudaEventSynchronize(ev));
    int probe = 0;
    CHECK(cudaMemcpy(&probe, d + 10, sizeof probe, cudaMemcpyDeviceToHost));
    std::printf("child: opened, doubled, value 10 from the pointer: %d\n", probe);
    CHECK(cudaIpcCloseMemHandle(d));
    CHECK(cudaEventDestroy(ev));
    // a handle of zeros: the driver's own error
    cudaIpcMemHandle_t zero;
    std::memset(&zero, 0, sizeof zero);
    int *z = nullptr;
    cudaError_t e = cudaIpcOpenMemHandle((void **)&z, zero, cudaIpcMemLazyEnablePeerAccess);
    std::printf("child: a handle of zeros: %s\n", cudaGetErrorName(e));
    (void)cudaGetLastError();
    return 0;
}

int main()
{
    int to_child[2], to_parent[2];
    if (pipe(to_child) || pipe(to_parent)) {
        std::printf("pipe failed\n");
        return 1;
    }
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        std::printf("fork failed\n");
        return 1;
    }
    if (pid == 0) {
        close(to_child[1]);
        close(to_parent[0]);
        int rc = child(to_child[0], to_parent[1]);
        std::fflush(stdout);
        _exit(rc);
    }
    close(to_child[0]);
    close(to_parent[1]);

    int *d = nullptr;
    CHECK(cudaMalloc(&d, N * sizeof(int)));
    fill<<<256, 256>>>(d, N);
    CHECK(cudaDeviceSynchronize());
    cudaIpcMemHandle_t mh;
    CHECK(cudaIpcGetMemHandle(&mh, d));
    cudaEvent_t ev;
    CHECK(cudaEventCreateWithFlags(&ev, cudaEventInterprocess | cudaEventDisableTiming));
    cudaIpcEventHandle_t eh;
    CHECK(cudaIpcGetEventHandle(&eh, ev));
    if (write(to_child[1], &mh, sizeof mh) != (ssize_t)sizeof mh ||
        write(to_child[1], &eh, sizeof eh) != (ssize_t)sizeof eh) {
        std::printf("parent: cannot hand the child its handles\n");
        return 1;
    }
    char ok = 0;
    if (!full_read(to_parent[0], &ok, 1)) {
        std::printf("parent: the child ended before recording its event\n");
        int st = 0;
        waitpid(pid, &st, 0);
        return 1;
    }
    // the child's kernel is ordered before the event it recorded
    CHECK(cudaStreamWaitEvent(0, ev, 0));
    int *h = new int[N];
    CHECK(cudaMemcpy(h, d, N * sizeof(int), cudaMemcpyDeviceToHost));
    int st = 0;
    waitpid(pid, &st, 0);
    std::fflush(stdout);
    long wrong = 0;
    for (int i = 0; i < N; i++) {
        wrong += h[i] != 2 * (i % 1000);
    }
    std::printf("parent: child exit %d, %ld wrong of %d (each value doubled)\n",
                WIFEXITED(st) ? WEXITSTATUS(st) : -1, wrong, N);
    // a host pointer has no IPC handle
    cudaIpcMemHandle_t bad;
    cudaError_t e = cudaIpcGetMemHandle(&bad, h);
    std::printf("parent: the handle of a host pointer: %s\n", cudaGetErrorName(e));
    (void)cudaGetLastError();
    delete[] h;
    CHECK(cudaEventDestroy(ev));
    CHECK(cudaFree(d));
    std::printf("done\n");
    return 0;
}
