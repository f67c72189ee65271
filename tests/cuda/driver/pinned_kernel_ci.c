/* Kernels given the host address of pinned or registered memory, as code
 * written for unified addressing passes it (NVIDIA's runtime over this
 * stub: Thrust's pinned vectors), through kernelParams, a struct parameter
 * and a packed `extra` buffer: natively the stand-in driver
 * (tests/cuda/driver/fake_driver.c) runs k1 / kh on the CPU at that
 * address; forwarded, the arena is mapped at one address on both sides
 * (unix://, shm://) and other memory (every pinned block over tcp://,
 * registered memory) reaches the device through a twin allocation the
 * launch is given instead (specs/cuda/launch.c, runtime/twin.c). Memory
 * allocated mapped (DEVICEMAP) is also reached through a pointer the
 * program stored in device memory, where no launch sees it (NCCL's abort
 * flag): over tcp:// it lies at its twin's address (runtime/twin_place.c);
 * what the host wrote into several such blocks goes queued (many_mapped).
 * The outputs are compared (tests/cuda/fake_diff.sh); exit 1 when a value
 * is wrong. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cuda.h>

static const char image[] = "// a PTX text (the stand-in driver reads none of it)\n";
static CUfunction k1, kh, kd;
static int bad_;

struct holder {
    int add;
    int *p;
};

static void show(const char *what, CUresult e, const int *p, int want)
{
    int ok = e == CUDA_SUCCESS && *p == want;
    printf("%s: %d, value %d (%s)\n", what, (int)e, e == CUDA_SUCCESS ? *p : -1, ok ? "right" : "WRONG");
    bad_ |= !ok;
}

static CUresult run_k1(int *p, unsigned blocks)
{
    void *args[] = {&p};
    CUresult e = cuLaunchKernel(k1, blocks, 1, 1, 32, 1, 1, 0, NULL, args, NULL);
    return e ? e : cuCtxSynchronize();
}

/* copies and sets that name the block h (int elements 2000-4007) */
static void copies_and_sets(int *h)
{
    CUresult e;
    /* device copies that name the pinned block as a device side (what
     * NVIDIA's runtime makes of Thrust's copies from a pinned vector) */
    CUdeviceptr dev = 0;
    if (cuMemAlloc(&dev, 64) == CUDA_SUCCESS) {
        CUdeviceptr hp = (CUdeviceptr)(uintptr_t)h;
        for (int i = 0; i < 16; i++) h[2000 + i] = 100 + i;
        e = cuMemcpyDtoD(dev, hp + 8000, 64);
        if (!e) e = cuMemcpyDtoDAsync(hp + 12000, dev, 64, NULL);
        if (!e) e = cuStreamSynchronize(NULL);
        show("device-to-device copies through the block", e, h + 3015, 115);
        if (!e) e = cuMemcpyHtoD(hp + 12400, h + 3000, 64);
        if (!e) e = cuMemcpyDtoH(h + 3200, hp + 12400, 64);
        if (!e) e = cuMemcpyHtoDAsync(hp + 13200, h + 3200, 64, NULL);
        if (!e) e = cuMemcpyDtoHAsync(h + 3400, hp + 13200, 64, NULL);
        if (!e) e = cuStreamSynchronize(NULL);
        show("and host-device copies that name it as device memory", e, h + 3415, 115);
        cuMemFree(dev);
    }
    /* sets that name the pinned block (XLA's autotuner clears pinned
     * words with cuMemsetD32Async): an async one seen after the
     * stream's synchronization, a synchronous one at its return */
    CUdeviceptr hp = (CUdeviceptr)(uintptr_t)h;
    e = cuMemsetD32Async(hp + 4 * 4000, 0x1234567, 4, NULL);
    show("an async set of the block", e ? e : cuStreamSynchronize(NULL), h + 4003, 0x1234567);
    show("a synchronous set of the block", cuMemsetD8(hp + 4 * 4004, 0x22, 16), h + 4007,
         0x22222222);
}

/* several mapped blocks, each reached only through a pointer kept in device
 * memory (NCCL keeps a dozen): the host writes all of them, one kernel per
 * block follows its pointer, one synchronization brings every change back.
 * Every other block is larger than a slab's blocks (64 KiB), so it lies
 * alone. Over tcp:// what the host wrote goes to their twins in one queued
 * request, before the first launch, and the synchronization brings them
 * all back in one round trip (fake_diff.sh's FAKE_DIFF_TRIPS counts them
 * between the MARK lines), the pages the device left alone not at all: what
 * the host wrote there stays. */
static void many_mapped(void)
{
    enum { K = 6 };
    int *blk[K] = {0};
    CUdeviceptr slots = 0;
    CUresult e = cuMemAlloc(&slots, sizeof blk);
    for (int i = 0; i < K && !e; i++)
        e = cuMemHostAlloc((void **)&blk[i], i % 2 ? 128 << 10 : 4096, CU_MEMHOSTALLOC_DEVICEMAP);
    if (!e) e = cuMemcpyHtoD(slots, blk, sizeof blk);
    if (!e) e = cuCtxSynchronize();
    fprintf(stderr, "MARK many begin\n");
    enum { LAST = (128 << 10) / sizeof(int) - 1 }; /* a lone block's last int */
    for (int i = 0; i < K && !e; i++) {
        blk[i][0] = 10 * i;
        if (i % 2) blk[i][LAST] = 1000 + i; /* the host's, on a page the device leaves */
    }
    for (int i = 0; i < K && !e; i++) {
        CUdeviceptr s = slots + i * sizeof(int *);
        void *args[] = {&s};
        e = cuLaunchKernel(kd, (unsigned)i + 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL);
    }
    if (!e) e = cuCtxSynchronize();
    fprintf(stderr, "MARK many end\n");
    int right = 0;
    for (int i = 0; i < K && !e; i++)
        right += blk[i][0] == 10 * i + i + 1 && (i % 2 == 0 || blk[i][LAST] == 1000 + i);
    printf("%d mapped blocks behind pointers in device memory: %d, %d right\n", K, (int)e, right);
    bad_ |= e || right != K;
    for (int i = 0; i < K; i++)
        if (blk[i]) cuMemFreeHost(blk[i]);
    if (slots) cuMemFree(slots);
}

static int registered[4096] __attribute__((aligned(4096)));

int main(void)
{
    CUdevice d;
    CUcontext c;
    CUmodule mod;
    if (cuInit(0) || cuDeviceGet(&d, 0) || cuDevicePrimaryCtxRetain(&c, d) || cuCtxSetCurrent(c) ||
        cuModuleLoadData(&mod, image) || cuModuleGetFunction(&k1, mod, "_Z2k1Pi") ||
        cuModuleGetFunction(&kh, mod, "_Z2kh6holder") || cuModuleGetFunction(&kd, mod, "_Z2kdPPi")) {
        printf("setup failed\n");
        return 1;
    }
    int *h = NULL;
    CUresult e = cuMemHostAlloc((void **)&h, 1 << 16, 0);
    printf("cuMemHostAlloc: %d\n", (int)e);
    if (e == CUDA_SUCCESS) {
        h[0] = 41;
        show("pinned block, kernelParams", run_k1(h, 1), h, 42);
        h[100] = 7;
        show("inside it", run_k1(h + 100, 3), h + 100, 10);
        h[100] = 20; /* the host writes between launches */
        struct holder hd = {5, h + 100};
        void *args[] = {&hd};
        e = cuLaunchKernel(kh, 2, 1, 1, 32, 1, 1, 0, NULL, args, NULL);
        show("in a struct parameter", e ? e : cuCtxSynchronize(), h + 100, 30);
        int *ptr = h + 200;
        size_t size = sizeof ptr;
        void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &ptr, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                         CU_LAUNCH_PARAM_END};
        h[200] = 1;
        e = cuLaunchKernel(k1, 4, 1, 1, 32, 1, 1, 0, NULL, NULL, extra);
        show("a packed extra buffer", e ? e : cuCtxSynchronize(), h + 200, 5);
        printf("the caller's buffer kept its pointer: %s\n", ptr == h + 200 ? "yes" : "NO");
        bad_ |= ptr != h + 200;
        copies_and_sets(h);
    }
    /* mapped memory whose address the program keeps in device memory: the
     * kernel follows the stored pointer (twice: the host writes between) */
    int *m = NULL;
    e = cuMemHostAlloc((void **)&m, 1 << 16, CU_MEMHOSTALLOC_DEVICEMAP);
    printf("cuMemHostAlloc(DEVICEMAP): %d\n", (int)e);
    CUdeviceptr slot = 0;
    if (e == CUDA_SUCCESS) copies_and_sets(m); /* its host bytes, whatever its address */
    if (e == CUDA_SUCCESS && cuMemAlloc(&slot, sizeof m) == CUDA_SUCCESS) {
        int *at = m + 6000;
        at[0] = 7;
        void *args[] = {&slot};
        e = cuMemcpyHtoD(slot, &at, sizeof at);
        if (!e) e = cuLaunchKernel(kd, 3, 1, 1, 32, 1, 1, 0, NULL, args, NULL);
        show("a pointer kept in device memory", e ? e : cuCtxSynchronize(), at, 10);
        at[0] = 100;
        e = cuLaunchKernel(kd, 2, 1, 1, 32, 1, 1, 0, NULL, args, NULL);
        show("again, after a host write", e ? e : cuCtxSynchronize(), at, 102);
        cuMemFree(slot);
    }
    if (m) printf("cuMemFreeHost(DEVICEMAP): %d\n", (int)cuMemFreeHost(m));
    e = cuMemHostRegister(registered, sizeof registered, 0);
    printf("cuMemHostRegister: %d\n", (int)e);
    if (e == CUDA_SUCCESS) {
        registered[9] = 5;
        show("registered range", run_k1(registered + 9, 2), registered + 9, 7);
        registered[9] = 100;
        show("again, after a host write", run_k1(registered + 9, 1), registered + 9, 101);
        printf("cuMemHostUnregister: %d\n", (int)cuMemHostUnregister(registered));
    }
    printf("cuMemFreeHost: %d\n", (int)cuMemFreeHost(h));
    many_mapped();
    return bad_;
}
