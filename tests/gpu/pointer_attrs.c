/* cuPointerGetAttributes on every kind of address (tests/gpu/pointer-attrs.sh):
 * natively and through the driver stub the answers must be the same, for
 * addresses the driver does not know above all (cuda.h: success with
 * default values; the stub fills zeros: is the real default of each
 * attribute zero?). Addresses print as "itself", "0" or "other". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda.h>

static const char *same(CUdeviceptr v, CUdeviceptr p) { return v == p ? "itself" : v ? "other" : "0"; }

static void show(const char *what, CUdeviceptr p)
{
    CUpointer_attribute a[6] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
                                CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                CU_POINTER_ATTRIBUTE_RANGE_SIZE, CU_POINTER_ATTRIBUTE_CONTEXT};
    unsigned type = 77;
    CUdeviceptr dp = 77;
    int ordinal = 77, managed = 77;
    size_t size = 77;
    CUcontext ctx = (CUcontext)(uintptr_t)77;
    void *data[6] = {&type, &dp, &ordinal, &managed, &size, &ctx};
    CUresult e = cuPointerGetAttributes(6, a, data, p);
    CUcontext cur = NULL;
    cuCtxGetCurrent(&cur);
    char sz[32];
    if (size == 77) snprintf(sz, sizeof sz, "untouched");
    else snprintf(sz, sizeof sz, "%zu", size);
    printf("%s: %d: type %u, device pointer %s, ordinal %d, managed %d, size %s, context %s\n", what, (int)e,
           type, same(dp, p), ordinal, managed, sz,
           ctx == (CUcontext)(uintptr_t)77 ? "untouched" : ctx == cur ? "current" : ctx ? "other" : "NULL");
    CUdeviceptr start = 77;
    unsigned long long id = 77;
    CUresult e1 = cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, p);
    CUresult e2 = cuPointerGetAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, p);
    printf("%s: range start %d %s, buffer id %d %s\n", what, (int)e1, same(start, p), (int)e2,
           id == 77 ? "untouched" : id ? "nonzero" : "0");
    unsigned t1 = 77;
    printf("%s: single MEMORY_TYPE: %d\n", what, (int)cuPointerGetAttribute(&t1, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p));
}

int main(void)
{
    CUdevice d;
    CUcontext c;
    CUdeviceptr dev;
    void *pinned;
    if (cuInit(0) || cuDeviceGet(&d, 0) || cuDevicePrimaryCtxRetain(&c, d) || cuCtxSetCurrent(c) ||
        cuMemAlloc(&dev, 4096) || cuMemAllocHost(&pinned, 4096)) {
        printf("setup failed\n");
        return 1;
    }
    int on_stack = 0;
    char *heap = malloc(4096);
    show("device memory", dev);
    show("device memory + 100", dev + 100);
    show("pinned host memory", (CUdeviceptr)(uintptr_t)pinned);
    show("stack", (CUdeviceptr)(uintptr_t)&on_stack);
    show("heap", (CUdeviceptr)(uintptr_t)heap);
    show("NULL", 0);
    free(heap);
    return 0;
}
