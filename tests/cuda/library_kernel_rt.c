/* Library kernels through the runtime API (CUDA 12's context-independent
 * loading): cudaLibraryLoadData, cudaLibraryGetKernel, and the handle cast
 * to a function address for cudaLaunchKernel, as NVIDIA documents it. Then
 * the library unloaded and another loaded whose kernel has the same address
 * (the stand-in device, tests/cuda/fake_kernels.c, hands a "(one address)"
 * library's kernels out at one address, as the driver reuses an unloaded
 * kernel's memory): launched with its own parameters. Natively over the
 * stand-in (preloaded over the real libcudart) and through the runtime stub
 * (tests/cuda/trips_ci.sh): the same output. */
#include <stdio.h>

#include <cuda_runtime_api.h>

static const char image[] = "// a PTX text (one address)\n";

struct holder {
    int add;
    int *p;
};

static int show(const char *what, cudaError_t e, const int *dp, int want)
{
    int v = -1;
    if (e == cudaSuccess)
        e = cudaMemcpy(&v, dp, sizeof v, cudaMemcpyDeviceToHost);
    printf("%s: %s, value %d (%s)\n", what, cudaGetErrorName(e), v,
           e == cudaSuccess && v == want ? "right" : "WRONG");
    return e == cudaSuccess && v == want ? 0 : 1;
}

int main(void)
{
    int *p = NULL, bad = 0;
    if (cudaMalloc((void **)&p, 64) != cudaSuccess || cudaMemset(p, 0, 64) != cudaSuccess) {
        printf("setup failed\n");
        return 1;
    }
    cudaLibrary_t lib = NULL;
    cudaKernel_t kh = NULL, k1 = NULL;
    cudaError_t e = cudaLibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0);
    if (e == cudaSuccess)
        e = cudaLibraryGetKernel(&kh, lib, "_Z2kh6holder");
    printf("library, kernel: %s\n", cudaGetErrorName(e));
    struct holder h = {5, p};
    void *hargs[] = {&h};
    if (e == cudaSuccess)
        e = cudaLaunchKernel((const void *)kh, (dim3){2, 1, 1}, (dim3){32, 1, 1}, hargs, 0, NULL);
    bad |= show("a library kernel launched by its handle", e, p, 10);
    printf("unload: %s\n", cudaGetErrorName(cudaLibraryUnload(lib)));
    e = cudaLibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0);
    if (e == cudaSuccess)
        e = cudaLibraryGetKernel(&k1, lib, "_Z2k1Pi");
    printf("another library's kernel at the same address: %s, %s\n", cudaGetErrorName(e),
           k1 == kh ? "yes" : "no");
    void *args[] = {&p};
    if (e == cudaSuccess)
        e = cudaLaunchKernel((const void *)k1, (dim3){3, 1, 1}, (dim3){32, 1, 1}, args, 0, NULL);
    bad |= show("launched with its own parameters", e, p, 13);
    /* an address nobody registered or handed out is no function */
    e = cudaLaunchKernel((const void *)&h, (dim3){1, 1, 1}, (dim3){1, 1, 1}, args, 0, NULL);
    printf("an unknown address: %s\n", cudaGetErrorName(e));
    (void)cudaGetLastError();
    printf("unload: %s\n", cudaGetErrorName(cudaLibraryUnload(lib)));
    cudaFree(p);
    return bad;
}
