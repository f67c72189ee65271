/* A kernel whose one parameter is a 4 KiB struct, launched with a packed
 * `extra` buffer of only the bytes the launch uses, as NCCL launches its
 * kernels (512 of 4096 bytes): the driver takes a buffer shorter than the
 * kernel's parameters (the H200 did), so the stub must hand it on instead of
 * refusing it. Through cuLaunchKernel and cuLaunchKernelEx; natively the
 * stand-in driver (tests/cuda/driver/fake_driver.c) runs the kernel on the
 * CPU. The outputs are compared (tests/cuda/fake_diff.sh); exit 1 when a
 * value is wrong. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cuda.h>

static const char image[] = "// a PTX text (the stand-in driver reads none of it)\n";

struct args4k { /* the kernel's parameter: tests/cuda/fake_pattern_kernels.h */
    int *out;
    int n;
    int vals[1021];
};

static int bad_;

static void show(const char *what, CUresult e, int got, int want)
{
    int ok = e == CUDA_SUCCESS && got == want;
    printf("%s: %d, sum %d (%s)\n", what, (int)e, e == CUDA_SUCCESS ? got : -1, ok ? "right" : "WRONG");
    bad_ |= !ok;
}

int main(void)
{
    CUdevice d;
    CUcontext c;
    CUmodule mod;
    CUfunction f;
    CUdeviceptr out;
    if (cuInit(0) || cuDeviceGet(&d, 0) || cuDevicePrimaryCtxRetain(&c, d) || cuCtxSetCurrent(c) ||
        cuModuleLoadData(&mod, image) || cuModuleGetFunction(&f, mod, "_Z8args_sum6args4k") ||
        cuMemAlloc(&out, sizeof(int))) {
        printf("setup failed\n");
        return 1;
    }
    size_t off = 0, size = 0;
    CUresult e = cuFuncGetParamInfo(f, 0, &off, &size);
    printf("parameter 0: offset %zu, %zu bytes\n", off, size);

    struct args4k a;
    memset(&a, 0, sizeof a);
    a.out = (int *)(uintptr_t)out;
    a.n = 5;
    for (int i = 0; i < a.n; i++) a.vals[i] = 10 * (i + 1);
    size_t used = offsetof(struct args4k, vals) + (size_t)a.n * sizeof(int);
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &a, CU_LAUNCH_PARAM_BUFFER_SIZE, &used,
                     CU_LAUNCH_PARAM_END};
    int got = 0;
    e = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra);
    if (e == CUDA_SUCCESS) e = cuCtxSynchronize();
    if (e == CUDA_SUCCESS) e = cuMemcpyDtoH(&got, out, sizeof got);
    show("cuLaunchKernel, 32 of 4096 bytes", e, got, 150);

    a.n = 3;
    a.vals[0] = 7, a.vals[1] = 8, a.vals[2] = 9;
    used = offsetof(struct args4k, vals) + (size_t)a.n * sizeof(int);
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = cfg.blockDimY = cfg.blockDimZ = 1;
    got = 0;
    e = cuLaunchKernelEx(&cfg, f, NULL, extra);
    if (e == CUDA_SUCCESS) e = cuCtxSynchronize();
    if (e == CUDA_SUCCESS) e = cuMemcpyDtoH(&got, out, sizeof got);
    show("cuLaunchKernelEx, 24 of 4096 bytes", e, got, 24);

    used = sizeof a; /* the whole struct, as before */
    a.n = 2;
    got = 0;
    e = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra);
    if (e == CUDA_SUCCESS) e = cuCtxSynchronize();
    if (e == CUDA_SUCCESS) e = cuMemcpyDtoH(&got, out, sizeof got);
    show("cuLaunchKernel, all 4096 bytes", e, got, 15);
    cuMemFree(out);
    printf("%s\n", bad_ ? "FAILED" : "ok");
    return bad_;
}
