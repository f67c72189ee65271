/* hold: a CUDA client that keeps its session open, for the session tests.
 * Prints "ready <error name>" after its first call, then calls
 * cudaGetDeviceCount every 50 ms for up to 30 s. When a call answers
 * cudaErrorDevicesUnavailable (the stub's "connection lost"), it prints
 * "lost" and exits 3; after 30 s it exits 0. */
#define _POSIX_C_SOURCE 200809L
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <time.h>

int main(void)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    printf("ready %s\n", cudaGetErrorName(e));
    fflush(stdout);
    for (int i = 0; i < 600; i++) {
        struct timespec ts = {0, 50000000};
        nanosleep(&ts, NULL);
        if (cudaGetDeviceCount(&n) == cudaErrorDevicesUnavailable) {
            printf("lost\n");
            return 3;
        }
    }
    return 0;
}
