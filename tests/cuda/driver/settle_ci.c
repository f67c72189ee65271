/* Synchronizations the driver stub answers in the guest (apigen_work_*,
 * specs/cuda/managed.c) and cuPointerGetAttributes on addresses the driver
 * does not know: tests/cuda/settle_ci.sh runs this natively and through the
 * driver stub against tests/cuda/driver/fake_driver.c (its kernels run on
 * the CPU) and requires the same output, and counts the synchronizations
 * answered in the guest (marked "elided" below; every other one must reach
 * the server). Each case prints the first error of its calls, so that an
 * error that the stub queued and natively came at the call reads the same. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda.h>

static const char image[] = "// a PTX text (the stand-in driver reads none of it)\n"
                            ".version 8.0\n.target sm_80\n.address_size 64\n";
static CUfunction k1;
static CUdeviceptr flag;
static CUstream other;

static CUresult launch(CUdeviceptr p, CUstream s)
{
    void *args[] = {&p};
    return cuLaunchKernel(k1, 1, 1, 1, 32, 1, 1, 0, s, args, NULL);
}

static int value(void)
{
    int v = -1;
    CUresult e = cuMemcpyDtoH(&v, flag, sizeof v);
    return e ? -(int)e : v;
}

static void *other_thread(void *arg)
{
    (void)arg;
    CUcontext c;
    cuDevicePrimaryCtxRetain(&c, 0);
    cuCtxSetCurrent(c);
    launch(flag, NULL);
    return NULL;
}

static CUresult first(CUresult a, CUresult b) { return a ? a : b; }

static void attrs(const char *what, CUdeviceptr p)
{
    CUpointer_attribute a[6] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
                                CU_POINTER_ATTRIBUTE_HOST_POINTER, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_RANGE_SIZE};
    unsigned type = 77;
    CUdeviceptr dp = 77, hp = 77;
    int managed = 77, ordinal = 77;
    size_t size = 77;
    /* a NULL slot: the real driver fails the whole list, writing nothing */
    void *data[6] = {&type, &dp, NULL, &managed, &ordinal, &size};
    CUresult e = cuPointerGetAttributes(6, a, data, p);
    printf("%s: cuPointerGetAttributes with a NULL slot %d, %s\n", what, (int)e,
           type == 77 && dp == 77 && managed == 77 && ordinal == 77 && size == 77 ? "nothing written" : "WRITTEN");
    data[2] = &hp;
    e = cuPointerGetAttributes(6, a, data, p);
    printf("%s: cuPointerGetAttributes %d: type %u, device pointer %s, host pointer %s, managed %d, ordinal %d, "
           "size %s\n",
           what, (int)e, type, dp == p ? "itself" : dp ? "other" : "0", hp == p ? "itself" : hp ? "other" : "0",
           managed, ordinal, size == 77 ? "untouched" : size ? "nonzero" : "0");
    unsigned single = 77;
    printf("%s: cuPointerGetAttribute(MEMORY_TYPE) %d\n", what,
           (int)cuPointerGetAttribute(&single, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p));
}

int main(void)
{
    CUdevice d;
    CUcontext c;
    CUmodule mod;
    if (cuInit(0) || cuDeviceGet(&d, 0) || cuDevicePrimaryCtxRetain(&c, d) || cuCtxSetCurrent(c) ||
        cuModuleLoadData(&mod, image) || cuModuleGetFunction(&k1, mod, "_Z2k1Pi") ||
        cuMemAlloc(&flag, 16) || cuMemsetD8(flag, 0, 16) || cuStreamCreate(&other, CU_STREAM_NON_BLOCKING) ||
        launch(flag, NULL) || cuMemsetD8(flag, 0, 16)) { /* the first launch's own queries: before the cases */
        printf("setup failed\n");
        return 1;
    }
    printf("sync after setup: %d\n", (int)cuCtxSynchronize());
    printf("sync again: %d\n", (int)cuCtxSynchronize()); /* elided 1 */
    /* a launch on the legacy stream, a copy to the host that waited for it */
    CUresult e = launch(flag, NULL);
    printf("legacy launch, copy back: %d %d\n", (int)e, value());
    printf("sync after the copy: %d\n", (int)cuCtxSynchronize()); /* elided 2 */
    /* work on another stream: the copy did not wait for it */
    e = launch(flag, other);
    printf("other stream launch, copy back: %d %d\n", (int)e, value());
    printf("sync after the copy: %d\n", (int)cuCtxSynchronize());
    /* another thread queues work after the copy */
    e = launch(flag, NULL);
    printf("legacy launch, copy back: %d %d\n", (int)e, value());
    pthread_t t;
    pthread_create(&t, NULL, other_thread, NULL);
    pthread_join(t, NULL);
    printf("sync after another thread's launch: %d, value %d\n", (int)cuCtxSynchronize(), value());
    printf("sync again: %d\n", (int)cuCtxSynchronize()); /* elided 3 */
    /* a launch that fails on the device (the stand-in refuses a NULL
     * pointer), queued by the stub: its error comes at the sync */
    e = launch(0, NULL);
    printf("failing launch, then sync: first error %d\n", (int)first(e, cuCtxSynchronize()));
    printf("sync again: %d\n", (int)cuCtxSynchronize());
    /* a copy from pageable memory, which the stub queues (its bytes travel
     * with the call, specs/cuda/queue_check.c): the buffer is the caller's
     * again at return, and the synchronization after it waits for it */
    int h = 41;
    e = cuMemcpyHtoD(flag, &h, sizeof h);
    h = 7;
    CUresult es = cuCtxSynchronize(); /* queued work since the last idle point: sent */
    printf("copy to the device, buffer reused, sync: %d %d, value %d\n", (int)e, (int)es, value());
    h = 42;
    e = cuMemcpyHtoD(flag, &h, sizeof h);
    h = 8;
    printf("copy to the device, buffer reused, copy back: %d, value %d\n", (int)e, value());
    /* a large queued copy (9 MiB: streamed in chunks, over tcp on lanes),
     * its buffer overwritten at return, then copied back */
    size_t big = (size_t)9 << 20;
    unsigned char *hb = malloc(big), *back_b = malloc(big);
    CUdeviceptr db = 0;
    if (hb && back_b && cuMemAlloc(&db, big) == CUDA_SUCCESS) {
        for (size_t i = 0; i < big; i++) hb[i] = (unsigned char)(i * 2654435761u >> 13);
        e = cuMemcpyHtoD(db, hb, big);
        for (size_t i = 0; i < big; i++) hb[i] ^= 0x5a; /* the caller's again */
        CUresult eb = cuMemcpyDtoH(back_b, db, big);
        size_t bad = 0;
        for (size_t i = 0; i < big; i++) bad += (back_b[i] ^ 0x5a) != hb[i];
        printf("9 MiB copy to the device, buffer reused, copy back: %d %d, %zu bytes wrong\n", (int)e,
               (int)eb, bad);
        cuMemFree(db);
    } else {
        printf("9 MiB: no memory\n");
    }
    free(hb);
    free(back_b);
    /* a failing launch, then a queued copy: the launch's error is not lost
     * (natively the launch's own; forwarded the copy back's) */
    e = launch(0, NULL);
    CUresult e2 = cuMemcpyHtoD(flag, &h, sizeof h);
    int back = 0;
    CUresult e3 = cuMemcpyDtoH(&back, flag, sizeof back);
    printf("failing launch, copy to the device, copy back: first error %d\n",
           (int)first(e, first(e2, e3)));
    es = cuCtxSynchronize(); /* the copy back failed: sent */
    printf("sync, value: %d %d\n", (int)es, value());
    /* pointers */
    attrs("device memory", flag);
    int on_stack = 0;
    attrs("stack", (CUdeviceptr)(uintptr_t)&on_stack);
    char *heap = malloc(64);
    attrs("heap", (CUdeviceptr)(uintptr_t)heap);
    free(heap);
    unsigned v = 0;
    void *slot = &v;
    printf("no attribute list: %d\n", (int)cuPointerGetAttributes(1, NULL, &slot, flag));
    /* stream synchronizations after a copy to pageable memory on that
     * stream (NVIDIA's runtime reading a value through its staging block):
     * cuda.driver.settle_stream_ci.* counts the cuStreamSynchronize calls
     * marked "stream elided" */
    int got = -1;
    e = launch(flag, other);
    e2 = cuMemcpyDtoHAsync(&got, flag, sizeof got, other);
    e3 = cuStreamSynchronize(other); /* stream elided 1 */
    printf("copy back on a stream: %d %d %d, value %d\n", (int)e, (int)e2, (int)e3, got);
    printf("its sync again: %d\n", (int)cuStreamSynchronize(other)); /* stream elided 2 */
    printf("the legacy stream: %d\n", (int)cuStreamSynchronize(NULL)); /* another queue: asked */
    printf("the legacy stream again: %d\n", (int)cuStreamSynchronize(CU_STREAM_LEGACY)); /* stream elided 3 */
    e = launch(flag, other);
    printf("a launch, then its sync: %d %d\n", (int)e, (int)cuStreamSynchronize(other)); /* asked */
    e2 = cuMemcpyDtoHAsync(&got, flag, sizeof got, NULL);
    pthread_create(&t, NULL, other_thread, NULL); /* its launch comes after the copy */
    pthread_join(t, NULL);
    e3 = cuStreamSynchronize(NULL); /* asked */
    printf("copy back, another thread's launch, sync: %d %d, value %d\n", (int)e2, (int)e3, value());
    return 0;
}
