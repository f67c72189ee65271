/* A program calling functions the stub does not support: each must return
 * cudaErrorNotSupported (with one log line on stderr), never crash or hang;
 * forwarded calls keep working afterwards. */
#include <stdio.h>

#include <cuda_runtime_api.h>

int main(void)
{
    void *p = NULL;
    const void *table = NULL;
    /* a host function pointer of the server's process: refused */
    cudaError_t a = cudaLibraryGetUnifiedFunction(&p, NULL, "k");
    cudaError_t b = cudaLibraryGetUnifiedFunction(&p, NULL, "k");
    cudaError_t c = cudaGetExportTable(&table, NULL);
    int v = 0;
    cudaError_t d = cudaRuntimeGetVersion(&v);
    printf("cudaLibraryGetUnifiedFunction: %s, again: %s, cudaGetExportTable: %s, then cudaRuntimeGetVersion: %s %d\n",
           cudaGetErrorName(a), cudaGetErrorName(b), cudaGetErrorName(c), cudaGetErrorName(d), v);
    return a == cudaErrorNotSupported && b == cudaErrorNotSupported && c == cudaErrorNotSupported &&
                   d == cudaSuccess
               ? 0
               : 1;
}
