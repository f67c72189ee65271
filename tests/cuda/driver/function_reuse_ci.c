/* A function of a module loaded after another module was unloaded may have
 * the unloaded function's address (the driver reuses the memory; XLA's
 * autotuner loads and unloads a module per configuration of one kernel
 * name), and the server then gives it the same id. Its parameters are its
 * own: the stand-in driver (fake_driver.c, an image saying "(one address)")
 * hands out every such module's function at one address; a kernel of three
 * parameters, then one of four, each with its results. Natively and through
 * the driver stub (tests/cuda/fake_diff.sh): the same output. Before the
 * stub forgot its layouts at an unload, the second kernel got the first
 * one's layout: wrong parameters, wrong results. */
#include <stdio.h>

#include <cuda.h>

static const char image[] = "// a PTX text (one address)\n";

int main(void)
{
    CUdevice d;
    CUcontext c;
    CUmodule mod;
    CUfunction f;
    if (cuInit(0) || cuDeviceGet(&d, 0) || cuDevicePrimaryCtxRetain(&c, d) || cuCtxSetCurrent(c) ||
        cuModuleLoadData(&mod, image) || cuModuleGetFunction(&f, mod, "_Z5scalePfif")) {
        printf("setup failed\n");
        return 1;
    }
    enum { N = 4 };
    float x[N * N], a[N * N], b[N * N], r[N * N];
    for (int i = 0; i < N * N; i++)
        x[i] = (float)i, a[i] = (float)(i + 1), b[i] = i % 5 == 0 ? 2.0f : 0.0f;
    CUdeviceptr dx, da, db, dc;
    if (cuMemAlloc(&dx, sizeof x) || cuMemAlloc(&da, sizeof a) || cuMemAlloc(&db, sizeof b) ||
        cuMemAlloc(&dc, sizeof r) || cuMemcpyHtoD(dx, x, sizeof x) ||
        cuMemcpyHtoD(da, a, sizeof a) || cuMemcpyHtoD(db, b, sizeof b)) {
        printf("allocation failed\n");
        return 1;
    }
    int n = N * N;
    float by = 3.0f;
    void *sargs[] = {&dx, &n, &by};
    printf("scale: %d", (int)cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, sargs, NULL));
    printf(" %d", (int)cuMemcpyDtoH(x, dx, sizeof x));
    for (int i = 0; i < N * N; i++)
        printf(" %g", x[i]);
    printf("\nunload: %d\n", (int)cuModuleUnload(mod));
    CUfunction g;
    if (cuModuleLoadData(&mod, image) || cuModuleGetFunction(&g, mod, "_Z6matmulPKfS0_Pfi")) {
        printf("second module failed\n");
        return 1;
    }
    printf("the next module's function has the same address: %s\n", g == f ? "yes" : "no");
    int m = N;
    void *margs[] = {&da, &db, &dc, &m};
    printf("matmul: %d", (int)cuLaunchKernel(g, 1, 1, 1, 16, 16, 1, 0, NULL, margs, NULL));
    printf(" %d", (int)cuMemcpyDtoH(r, dc, sizeof r));
    for (int i = 0; i < N * N; i++)
        printf(" %g", r[i]);
    printf("\n");
    return 0;
}
