/* tests/gpu/attr_probe.c: what NVIDIA's driver answers where cuda.h is silent, for the driver
 * stub's emulation of pinned memory (specs/cuda/host_mem.c) to copy: a cuPointerGetAttributes list
 * with a NULL data slot or a repeated attribute, HOST_POINTER of freed pinned memory, and the
 * flags of pinned blocks before and after their device pointer is asked for. Native only
 * (tests/gpu/pinned-attrs.sh runs it): `cc attr_probe.c -lcuda`. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda.h>

static const char *val(uint64_t v, const void *p)
{
    return v == 77 ? "untouched" : v == (uint64_t)(uintptr_t)p ? "the pointer" : v ? "other" : "0";
}

static void list(const char *what, void *p)
{
    CUdeviceptr dp = (CUdeviceptr)(uintptr_t)p;
    unsigned t1 = 77, t2 = 77;
    uint64_t hp = 77;
    int ord = 77;
    CUpointer_attribute a[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_HOST_POINTER,
                                CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
    void *d[3] = {&t1, &hp, &ord};
    CUresult e = cuPointerGetAttributes(3, a, d, dp);
    printf("%s: plain list %d: type %u, host pointer %s, ordinal %d\n", what, (int)e, t1, val(hp, p), ord);
    t1 = 77, hp = 77, ord = 77;
    void *dn[3] = {&t1, NULL, &ord};
    e = cuPointerGetAttributes(3, a, dn, dp);
    printf("%s: NULL in slot 1 %d: type %u, ordinal %d\n", what, (int)e, t1, ord);
    t1 = 77, t2 = 77;
    CUpointer_attribute r[2] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_MEMORY_TYPE};
    void *dr[2] = {&t1, &t2};
    e = cuPointerGetAttributes(2, r, dr, dp);
    printf("%s: repeated attribute %d: type %u, %u\n", what, (int)e, t1, t2);
}

static void flags(const char *what, void *p)
{
    unsigned f = 77;
    CUresult e = cuMemHostGetFlags(&f, p);
    printf("%s: cuMemHostGetFlags %d, flags %u\n", what, (int)e, f);
}

/* `attr_probe order BLOCK...`: blocks allocated in that order, then the flags of each: whether
 * PORTABLE follows the block's own request, the first block's, or its size. A block is its kind
 * (p: cuMemHostAlloc(PORTABLE), 0: cuMemHostAlloc(0), h: cuMemAllocHost) and its size (4 KiB;
 * a capital kind letter: 8 MiB; or a number with K or M after the letter: "h64K", "p2M");
 * "fN" frees the Nth block there */
static int order(int argc, char **argv)
{
    enum { MAXB = 64 };
    void *b[MAXB] = {0};
    int nb = argc - 2 < MAXB ? argc - 2 : MAXB;
    for (int i = 0; i < nb; i++) {
        const char *a = argv[i + 2];
        char c = a[0];
        if (c == 'f') { /* "f3": free the third block here */
            int k = atoi(a + 1) - 1;
            if (k >= 0 && k < i && b[k]) printf("%s: cuMemFreeHost %d\n", a, (int)cuMemFreeHost(b[k]));
            if (k >= 0 && k < i) b[k] = NULL;
            continue;
        }
        size_t n = (c >= 'A' && c <= 'Z') ? (size_t)8 << 20 : 4096;
        if (a[1]) {
            char *end;
            n = strtoul(a + 1, &end, 10);
            n <<= *end == 'M' ? 20 : *end == 'K' ? 10 : 0;
        }
        c = (char)(c | 0x20);
        CUresult e = c == 'p' ? cuMemHostAlloc(&b[i], n, CU_MEMHOSTALLOC_PORTABLE)
                     : c == '0' ? cuMemHostAlloc(&b[i], n, 0)
                                : cuMemAllocHost(&b[i], n);
        if (e) printf("%s: allocation %d\n", a, (int)e);
    }
    printf("flags:");
    for (int i = 0; i < nb; i++) {
        unsigned f = 77;
        if (!b[i]) continue; /* freed, or a free */
        CUresult e = cuMemHostGetFlags(&f, b[i]);
        printf(" %s=%u", argv[i + 2], e ? 99 : f);
    }
    printf("\n");
    return 0;
}

int main(int argc, char **argv)
{
    CUcontext ctx;
    CUdevice dev;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuCtxCreate(&ctx, NULL, 0, dev)) {
        printf("no device\n");
        return 1;
    }
    if (argc > 2 && argv[1][0] == 'o') return order(argc, argv);
    void *a = NULL, *b = NULL, *c = NULL;
    CUdeviceptr m = 0, mapped = 0;
    printf("cuMemAllocHost: %d\n", (int)cuMemAllocHost(&a, 4096));
    printf("cuMemHostAlloc(0): %d\n", (int)cuMemHostAlloc(&b, 4096, 0));
    printf("cuMemHostAlloc(PORTABLE): %d\n", (int)cuMemHostAlloc(&c, 4096, CU_MEMHOSTALLOC_PORTABLE));
    printf("cuMemAlloc: %d\n", (int)cuMemAlloc(&m, 4096));
    flags("cuMemAllocHost block, before", a);
    flags("cuMemHostAlloc(0) block, before", b);
    flags("cuMemHostAlloc(PORTABLE) block, before", c);
    printf("cuMemHostGetDevicePointer_v2(cuMemAllocHost block): %d\n",
           (int)cuMemHostGetDevicePointer_v2(&mapped, a, 0));
    unsigned type = 77;
    printf("cuPointerGetAttribute(MEMORY_TYPE, cuMemHostAlloc(0) block): %d\n",
           (int)cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)b));
    flags("cuMemAllocHost block, after its device pointer", a);
    flags("cuMemHostAlloc(0) block, after a pointer query", b);
    flags("cuMemHostAlloc(PORTABLE) block, after", c);
    list("pinned", a);
    list("device", (void *)(uintptr_t)m);
    static char stack_like[4096];
    list("pageable", stack_like);
    printf("cuMemFreeHost: %d\n", (int)cuMemFreeHost(a));
    list("freed pinned", a);
    cuMemFreeHost(b);
    cuMemFreeHost(c);
    cuMemFree(m);
    return 0;
}
