/* cuda.isolation: device addresses are per client (types.device in
 * specs/cudart.yaml). A forged address is refused by the server before the
 * real runtime sees it (cudaErrorInvalidValue, what CUDA itself answers for
 * an address it does not know); NULL goes through to the real runtime.
 * Prints one line per call: "<what>: <error name>". */
#include <stdint.h>
#include <stdio.h>

#include <cuda_runtime_api.h>

int main(void)
{
    void *forged = (void *)(uintptr_t)0x7f0000001000ull;
    char host[16] = {0};
    printf("memset forged: %s\n", cudaGetErrorName(cudaMemset(forged, 0, 16)));
    printf("memcpy to forged: %s\n",
           cudaGetErrorName(cudaMemcpy(forged, host, sizeof host, cudaMemcpyHostToDevice)));
    printf("memcpy from forged: %s\n",
           cudaGetErrorName(cudaMemcpy(host, forged, sizeof host, cudaMemcpyDeviceToHost)));
    printf("free forged: %s\n", cudaGetErrorName(cudaFree(forged)));
    printf("memset null: %s\n", cudaGetErrorName(cudaMemset(NULL, 0, 16)));
    printf("free null: %s\n", cudaGetErrorName(cudaFree(NULL)));
    return 0;
}
