/* tests/cuda/entry_point.c: cudaGetDriverEntryPoint(ByVersion) in a process
 * whose driver is apigen's driver stub (tests/cuda/entry_point.sh). The
 * pointer the runtime hands out must be the one the driver's own
 * cuGetProcAddress gives for the same symbol, version and flags, and calling
 * it must answer as the driver does; an unknown symbol is
 * cudaErrorSymbolNotFound with its status. Prints one line per check. */
#define _GNU_SOURCE
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

typedef CUresult (*gpa_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
typedef CUresult (*version_fn)(int *);

int main(void)
{
    enum cudaDriverEntryPointQueryResult st = cudaDriverEntryPointVersionNotSufficent;
    void *f = NULL;
    cudaError_t e = cudaGetDriverEntryPoint("cuDriverGetVersion", &f, cudaEnableDefault, &st);
    printf("cudaGetDriverEntryPoint(cuDriverGetVersion) = %d, status %d, pointer %s\n", (int)e, (int)st,
           f ? "set" : "NULL");
    if (e != cudaSuccess) return 1;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    gpa_fn gpa = lib ? (gpa_fn)(uintptr_t)dlsym(lib, "cuGetProcAddress_v2") : NULL;
    void *g = NULL;
    CUdriverProcAddressQueryResult gst;
    if (!gpa || gpa("cuDriverGetVersion", &g, CUDART_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &gst) != CUDA_SUCCESS)
        return printf("the driver's cuGetProcAddress_v2 failed\n"), 1;
    printf("same pointer as the driver's cuGetProcAddress: %s\n", f == g ? "yes" : "no");
    int v1 = -1, v2 = -1;
    CUresult r1 = ((version_fn)(uintptr_t)f)(&v1), r2 = cuDriverGetVersion(&v2);
    printf("called through it: %d %s\n", (int)r1, r1 == r2 && v1 == v2 ? "same answer as cuDriverGetVersion" : "DIFFERS");

    f = (void *)1;
    e = cudaGetDriverEntryPointByVersion("cuMemAlloc", &f, 12000, cudaEnableDefault, &st);
    void *h = NULL;
    gpa("cuMemAlloc", &h, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &gst);
    printf("cudaGetDriverEntryPointByVersion(cuMemAlloc, 12000) = %d, status %d, same pointer: %s\n", (int)e,
           (int)st, f == h && f ? "yes" : "no");
    f = (void *)1;
    e = cudaGetDriverEntryPoint("cuNoSuchFunction", &f, cudaEnableDefault, &st);
    printf("cudaGetDriverEntryPoint(cuNoSuchFunction) = %d, status %d, pointer %s\n", (int)e, (int)st,
           f ? "set" : "NULL");
    e = cudaGetDriverEntryPoint(NULL, &f, cudaEnableDefault, &st);
    printf("cudaGetDriverEntryPoint(NULL) = %d\n", (int)e);
    return 0;
}
