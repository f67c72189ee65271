/* Shared by the cuSPARSE and cuSOLVER examples: status checks that print the
 * library's own name for a failure, and the exit codes the tests read. */
#ifndef CUDALIB_EXAMPLE_COMMON_H
#define CUDALIB_EXAMPLE_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

/* The first call that needs a GPU: on a machine without one it fails, and
 * the program says so and exits 2 (the tests expect that path there,
 * natively and forwarded alike). */
#define CK_FIRST_RT(call)                                                              \
    do {                                                                               \
        cudaError_t e_ = (call);                                                       \
        if (e_ != cudaSuccess) {                                                       \
            printf("%s: %s: no usable GPU, stopping\n", #call, cudaGetErrorName(e_));  \
            return 2;                                                                  \
        }                                                                              \
    } while (0)

#define CK_RT(call)                                                                    \
    do {                                                                               \
        cudaError_t e_ = (call);                                                       \
        if (e_ != cudaSuccess) {                                                       \
            printf("line %d: %s: %s\n", __LINE__, #call, cudaGetErrorName(e_));        \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

/* A device address of ANOTHER client: a child process (forked before this
 * process makes any CUDA call, so it opens a session of its own) allocates 1
 * MiB with cudaMalloc, hands the address over a pipe and keeps it allocated
 * until *done is closed. NULL when the child could not allocate. */
static inline void *foreign_device_pointer(int *done, pid_t *child)
{
    int up[2], down[2];
    void *p = NULL;
    *done = -1, *child = -1;
    if (pipe(up) != 0) return NULL;
    if (pipe(down) != 0) return close(up[0]), close(up[1]), NULL;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(up[0]), close(down[1]);
        void *d = NULL;
        if (cudaMalloc(&d, 1 << 20) != cudaSuccess) d = NULL;
        if (write(up[1], &d, sizeof d) != (ssize_t)sizeof d) _exit(1);
        char c;
        while (read(down[0], &c, 1) > 0) {
        }
        if (d) cudaFree(d);
        _exit(0);
    }
    close(up[1]), close(down[0]);
    if (pid < 0 || read(up[0], &p, sizeof p) != (ssize_t)sizeof p) p = NULL;
    close(up[0]);
    *done = down[1], *child = pid;
    return p;
}

static inline void foreign_done(int done, pid_t child)
{
    if (done >= 0) close(done);
    if (child > 0) waitpid(child, NULL, 0);
}

#endif
