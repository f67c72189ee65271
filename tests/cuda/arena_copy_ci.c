/* tests/cuda/arena_copy_ci.c: copies from the device into cudaMallocHost
 * memory with cudaMemcpyAsync, each followed by a synchronization of the
 * stream (PyTorch's read of a loss into its pinned block). Over unix:// and
 * shm:// that memory is the arena, which the server registered: natively the
 * copy returns at once, forwarded it is queued and makes no round trip
 * (tests/cuda/trips_ci.sh counts them between the MARK lines). The values
 * read back are the same natively and forwarded. */
#include <stdio.h>

#include <cuda_runtime_api.h>

int main(void)
{
    cudaStream_t s = NULL;
    int *d = NULL, *h = NULL;
    if (cudaStreamCreate(&s) != cudaSuccess || cudaMalloc((void **)&d, 256) != cudaSuccess ||
        cudaMallocHost((void **)&h, 256) != cudaSuccess) {
        printf("setup failed\n");
        return 1;
    }
    for (int i = 1; i <= 10; i++) {
        cudaError_t set = cudaMemsetAsync(d, i, 256, s);
        fprintf(stderr, "MARK copies begin\n");
        cudaError_t copy = cudaMemcpyAsync(h, d, 256, cudaMemcpyDeviceToHost, s);
        fprintf(stderr, "MARK copies end\n");
        cudaError_t sync = cudaStreamSynchronize(s);
        printf("%2d: set %d, copy %d, sync %d, read %08x %08x\n", i, (int)set, (int)copy, (int)sync,
               (unsigned)h[0], (unsigned)h[63]);
    }
    printf("last error: %d\n", (int)cudaGetLastError());
    return 0;
}
