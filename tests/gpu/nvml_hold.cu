// nvml_hold: a CUDA program that holds device memory until its stdin ends
// (tests/gpu/nvml-procs.sh runs it natively and through the runtime stub, and
// lists the GPU's processes meanwhile). Prints "ready PID" once the memory is
// allocated and written.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? (size_t)atoi(argv[1]) : 256;
    void *p = nullptr;
    cudaError_t e = cudaMalloc(&p, mib << 20);
    if (e == cudaSuccess) e = cudaMemset(p, 1, mib << 20);
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        std::printf("cuda: %s\n", cudaGetErrorName(e));
        return 1;
    }
    std::printf("ready %ld\n", (long)getpid());
    std::fflush(stdout);
    while (std::getchar() != EOF) {
    }
    cudaFree(p);
    std::printf("done\n");
    return 0;
}
