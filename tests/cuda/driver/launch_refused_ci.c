/* A launch the driver refuses for a reason no limit the caller can ask
 * tells (the stand-in driver, tests/cuda/driver/fake_driver.c: static and
 * dynamic shared memory together over 48 KiB without an opt-in; the real
 * one also weighs reserved shared memory, local memory, a kernel's compiled
 * block size): natively cuLaunchKernel / cuLaunchKernelEx return
 * CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES and the next calls succeed, which is
 * what XLA's autotuner relies on (it skips such a configuration; an error
 * at its next cuCtxSetCurrent ends the process). Forwarded, a function's
 * configuration the server has not accepted yet goes synchronously
 * (specs/cuda/launch_check.c), so the refusal is the launch's own. Run by
 * tests/cuda/fake_diff.sh: natively and through the driver stub, the same
 * output. */
#include <stdio.h>
#include <string.h>

#include <cuda.h>

static const char image[] = "// a PTX text (the stand-in driver reads none of it)\n";

int main(void)
{
    CUdevice d;
    CUcontext c;
    CUmodule mod;
    CUfunction mm;
    if (cuInit(0) || cuDeviceGet(&d, 0) || cuDevicePrimaryCtxRetain(&c, d) || cuCtxSetCurrent(c) ||
        cuModuleLoadData(&mod, image) || cuModuleGetFunction(&mm, mod, "_Z6matmulPKfS0_Pfi")) {
        printf("setup failed\n");
        return 1;
    }
    enum { N = 4 };
    float a[N * N], b[N * N], r[N * N];
    for (int i = 0; i < N * N; i++)
        a[i] = (float)i, b[i] = i % 5 == 0 ? 1.0f : 0.0f;
    CUdeviceptr da, db, dc;
    if (cuMemAlloc(&da, sizeof a) || cuMemAlloc(&db, sizeof b) || cuMemAlloc(&dc, sizeof r) ||
        cuMemcpyHtoD(da, a, sizeof a) || cuMemcpyHtoD(db, b, sizeof b)) {
        printf("allocation failed\n");
        return 1;
    }
    int n = N;
    void *args[] = {&da, &db, &dc, &n};
    int dyn = 0;
    cuFuncGetAttribute(&dyn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, mm);
    printf("the function's dynamic shared memory limit: %d\n", dyn);
    /* within every limit asked, refused by the driver: the launch's error */
    printf("launch with 48 KiB of dynamic shared memory: %d\n",
           (int)cuLaunchKernel(mm, 1, 1, 1, 16, 16, 1, 48 << 10, NULL, args, NULL));
    printf("the next call: cuCtxSetCurrent %d\n", (int)cuCtxSetCurrent(c));
    printf("cuCtxSynchronize %d\n", (int)cuCtxSynchronize());
    /* a configuration that runs, twice (the second may be queued), then the
     * refused one again: still the launch's own error */
    for (int i = 0; i < 2; i++)
        printf("launch with 8 KiB: %d\n",
               (int)cuLaunchKernel(mm, 1, 1, 1, 16, 16, 1, 8 << 10, NULL, args, NULL));
    printf("a smaller one: %d\n",
           (int)cuLaunchKernel(mm, 1, 1, 1, 8, 8, 1, 1024, NULL, args, NULL));
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = cfg.blockDimY = 16, cfg.blockDimZ = 1;
    cfg.sharedMemBytes = 47 << 10;
    printf("cuLaunchKernelEx with 47 KiB: %d\n", (int)cuLaunchKernelEx(&cfg, mm, args, NULL));
    printf("cuStreamSynchronize %d\n", (int)cuStreamSynchronize(NULL));
    printf("launch with 48 KiB again: %d\n",
           (int)cuLaunchKernel(mm, 1, 1, 1, 16, 16, 1, 48 << 10, NULL, args, NULL));
    /* a function that raised its limit runs above 48 KiB; its module
     * unloaded and loaded again, the function is a new one (natively at
     * the same address, so the server may give it the old one's id) whose
     * limit is the default again: refused at the launch */
    printf("cuFuncSetAttribute(60 KiB) %d\n",
           (int)cuFuncSetAttribute(mm, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 60 << 10));
    for (int i = 0; i < 2; i++)
        printf("launch with 56 KiB: %d\n",
               (int)cuLaunchKernel(mm, 1, 1, 1, 16, 16, 1, 56 << 10, NULL, args, NULL));
    printf("cuCtxSynchronize %d\n", (int)cuCtxSynchronize());
    printf("unload, load again: %d %d %d\n", (int)cuModuleUnload(mod),
           (int)cuModuleLoadData(&mod, image),
           (int)cuModuleGetFunction(&mm, mod, "_Z6matmulPKfS0_Pfi"));
    printf("launch with 56 KiB: %d\n",
           (int)cuLaunchKernel(mm, 1, 1, 1, 16, 16, 1, 56 << 10, NULL, args, NULL));
    printf("the next call: cuCtxSetCurrent %d\n", (int)cuCtxSetCurrent(c));
    CUresult e = cuMemcpyDtoH(r, dc, sizeof r);
    printf("results: %d", (int)e);
    for (int i = 0; i < N * N; i++)
        printf(" %g", r[i]);
    printf("\n");
    return 0;
}
