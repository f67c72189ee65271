/* What the driver says of an address, kept in the guest (specs/cuda.yaml:
 * cuPointerGetAttribute, `cache: {group: pointers, thread_state:
 * [current_context]}`): tests/cuda/settle_ci.sh runs this natively and
 * through the driver stub against tests/cuda/driver/fake_driver.c (which
 * records each allocation's context and frees a context's allocations with
 * it) and requires the same output and exactly the answers marked "kept"
 * given in the guest: an attribute asked again of the same address in the
 * same context is kept, and so is "no such address" (CUDA_ERROR_INVALID_VALUE);
 * another address, another current context, and anything asked after a call
 * that makes or frees memory or ends a context is asked. A kept answer after cuMemFree or cuCtxDestroy would
 * print an allocation where native prints an error. */
#include <stdio.h>

#include <cuda.h>

static CUcontext primary, second;

static const char *ctx_name(CUcontext c)
{
    return !c ? "none" : c == primary ? "primary" : c == second ? "second" : "other";
}

/* eight questions: seven a live allocation answers, the host pointer (an
 * error for device memory, as lasting: kept too) */
static void show(const char *what, CUdeviceptr p, CUdeviceptr base)
{
    CUcontext ctx = NULL;
    unsigned type = 0;
    CUdeviceptr dev = 0, start = 0;
    size_t size = 0;
    int managed = -1, ordinal = -1;
    void *host = NULL;
    CUresult e[8] = {
        cuPointerGetAttribute(&ctx, CU_POINTER_ATTRIBUTE_CONTEXT, p),
        cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p),
        cuPointerGetAttribute(&dev, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, p),
        cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, p),
        cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, p),
        cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, p),
        cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p),
        cuPointerGetAttribute(&host, CU_POINTER_ATTRIBUTE_HOST_POINTER, p),
    };
    printf("%s: context %d %s, type %d %u, device pointer %d %s, start %d %s, size %d %zu, "
           "managed %d %d, ordinal %d %d, host pointer %d\n",
           what, (int)e[0], ctx_name(ctx), (int)e[1], type, (int)e[2],
           e[2] ? "-" : dev == p ? "itself" : "another", (int)e[3],
           e[3] ? "-" : start == base ? "the base" : "another", (int)e[4], size, (int)e[5], managed,
           (int)e[6], ordinal, (int)e[7]);
}

int main(void)
{
    CUdevice d;
    CUdeviceptr a = 0, b = 0, c = 0;
    if (cuInit(0) || cuDeviceGet(&d, 0) || cuDevicePrimaryCtxRetain(&primary, d) ||
        cuCtxSetCurrent(primary) || cuMemAlloc(&a, 4096)) {
        printf("setup failed\n");
        return 1;
    }
    show("A+16", a + 16, a);
    show("A+16 again", a + 16, a);                /* kept 8 */
    show("A itself", a, a);                       /* another address: asked */
    show("NULL", 0, 0);
    show("NULL again", 0, 0);                     /* errors, as lasting: kept 16 */
    printf("cuMemAlloc(B): %d\n", (int)cuMemAlloc(&b, 8192));
    show("A+16 after another allocation", a + 16, a); /* asked */
    show("A+16 again", a + 16, a);                /* kept 24 */
    {   /* the list form asks each attribute (guest.c) */
        CUpointer_attribute at[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_RANGE_SIZE,
                                     CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
        for (int round = 0; round < 2; round++) { /* the second: kept 27 */
            unsigned type = 0;
            size_t size = 0;
            int ordinal = -1;
            void *data[3] = {&type, &size, &ordinal};
            CUresult e = cuPointerGetAttributes(3, at, data, b);
            printf("cuPointerGetAttributes(B): %d, type %u, size %zu, ordinal %d\n", (int)e, type,
                   size, ordinal);
        }
    }
    printf("cuCtxCreate: %d\n", (int)cuCtxCreate(&second, NULL, 0, d));
    show("A+16 in the second context", a + 16, a); /* another current context: asked */
    printf("cuMemAlloc(C) in the second context: %d\n", (int)cuMemAlloc(&c, 1024));
    show("C", c, c);
    show("C again", c, c);                        /* kept 35 */
    printf("cuCtxSetCurrent(primary): %d\n", (int)cuCtxSetCurrent(primary));
    show("C from the primary context", c, c);     /* asked (then kept for this context) */
    printf("cuCtxDestroy(second): %d\n", (int)cuCtxDestroy(second));
    printf("cuCtxSetCurrent(primary): %d\n", (int)cuCtxSetCurrent(primary));
    show("C after its context ended", c, c);      /* asked: freed with its context */
    show("C after its context ended again", c, c); /* kept 43 */
    printf("cuMemFree(A): %d\n", (int)cuMemFree(a));
    show("A+16 after cuMemFree", a + 16, a);      /* asked: freed */
    show("B", b, b);
    show("B again", b, b);                        /* kept 51 */
    printf("cuMemFree(B): %d\n", (int)cuMemFree(b));
    return 0;
}
