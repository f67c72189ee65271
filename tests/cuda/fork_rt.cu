// A program that forks before it uses CUDA, as NVIDIA's IPC samples do:
// child and parent each launch a kernel the binary registered (k1, which
// the stand-in device of tests/cuda/fake_kernels.c runs on the CPU) and read
// its result back. Through the runtime stub the child's session is its own,
// so the program's modules must reach it (specs/cudart/guest.c's fork
// handlers, runtime/guest.c's session hook). tests/cuda/trips_ci.sh compares
// the output natively and forwarded.
#include <cuda_runtime.h>

#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

__global__ void k1(int *p)
{
    if (threadIdx.x == 0)
        p[0] += 1;
}

static int run(const char *who, unsigned blocks)
{
    int *d = nullptr, v = -1;
    cudaError_t e = cudaMalloc(&d, sizeof(int));
    if (e == cudaSuccess)
        e = cudaMemset(d, 0, sizeof(int));
    if (e == cudaSuccess) {
        k1<<<blocks, 32>>>(d);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess)
        e = cudaMemcpy(&v, d, sizeof v, cudaMemcpyDeviceToHost);
    if (d)
        (void)cudaFree(d);
    printf("%s: %u blocks: %s, value %d\n", who, blocks, cudaGetErrorName(e), v);
    fflush(stdout);
    return e != cudaSuccess;
}

int main()
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        printf("fork failed\n");
        return 1;
    }
    if (pid == 0)
        _exit(run("child", 4));
    int st = 0;
    waitpid(pid, &st, 0);
    printf("child exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    int rc = run("parent", 3);
    // a second child, after the parent used CUDA: natively the CUDA state of a
    // forked process is unusable (NVIDIA does not support it), so not run
    return rc;
}
