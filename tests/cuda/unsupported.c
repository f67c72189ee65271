/* A program calling functions the stub does not support: each must return
 * cudaErrorNotSupported (with one log line on stderr), never crash or hang;
 * forwarded calls keep working afterwards. */
#include <stdio.h>

#include <cuda_runtime_api.h>

int main(void)
{
    void *p = NULL;
    const void *table = NULL;
    cudaError_t a = cudaMallocManaged(&p, 64, cudaMemAttachGlobal);
    cudaError_t b = cudaMallocManaged(&p, 64, cudaMemAttachGlobal);
    cudaError_t c = cudaGetExportTable(&table, NULL);
    int v = 0;
    cudaError_t d = cudaRuntimeGetVersion(&v);
    printf("cudaMallocManaged: %s, again: %s, cudaGetExportTable: %s, then cudaRuntimeGetVersion: %s %d\n",
           cudaGetErrorName(a), cudaGetErrorName(b), cudaGetErrorName(c), cudaGetErrorName(d), v);
    return a == cudaErrorNotSupported && b == cudaErrorNotSupported && c == cudaErrorNotSupported &&
                   d == cudaSuccess
               ? 0
               : 1;
}
