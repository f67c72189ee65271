/* cuda_hold: a guest process that uses the GPU through NVML and the CUDA
 * runtime in one session (tests/nvml/family_procs.sh): nvmlInit, 1 MiB of
 * device memory, "ready", then waits for its stdin to end. */
#include <stdio.h>

#include <cuda_runtime_api.h>
#define NVML_NO_UNVERSIONED_FUNC_DEFS
#include <nvml.h>

int main(void)
{
    void *p = NULL;
    nvmlReturn_t r = nvmlInit_v2();
    cudaError_t e = cudaMalloc(&p, 1 << 20);
    if (r != NVML_SUCCESS || e != cudaSuccess) {
        printf("nvmlInit_v2 %d, cudaMalloc %s\n", (int)r, cudaGetErrorName(e));
        return 1;
    }
    printf("ready\n");
    fflush(stdout);
    while (getchar() != EOF) {
    }
    cudaFree(p);
    nvmlShutdown();
    return 0;
}
