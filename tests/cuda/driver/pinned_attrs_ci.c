/* Pointer queries about pinned host memory (cuMemHostAlloc, cuMemAllocHost):
 * cuPointerGetAttribute, cuPointerGetAttributes, cuMemHostGetDevicePointer_v2
 * and cuMemHostGetFlags, on a block's start, inside it, from another
 * context, and after cuMemFreeHost. tests/cuda/fake_diff.sh runs it natively
 * over the stand-in driver tests/cuda/driver/fake_arrays.c (which answers as
 * cuda.h says NVIDIA's driver does) and through the driver stub, whose guest
 * answers from its own records (specs/cuda/host_mem.c); the outputs must be
 * the same but for the documented differences the test's sed script writes
 * into the native output (tests/cuda/CMakeLists.txt): BUFFER_ID is the
 * driver's alone (CUDA_ERROR_NOT_SUPPORTED), and over tcp:// the device
 * cannot reach pinned memory (no device pointer; a mapped registration's
 * device allocation it can). Registered memory is asked about too. Addresses print as relations
 * (the forwarded device pointer is the server's address of the bytes).
 * tests/gpu/pinned-attrs.sh runs it on a GPU. Exit 1 when setup fails. */
#define _DEFAULT_SOURCE /* mincore (resident.h) */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cuda.h>

#include "../resident.h"

static CUcontext ctx1_;

static const char *ctx_name(CUcontext c)
{
    CUcontext cur = NULL;
    cuCtxGetCurrent(&cur);
    return c == ctx1_ ? (c == cur ? "the allocating one (current)" : "the allocating one")
                      : c == cur ? "the current one" : c ? "other" : "NULL";
}

static const char *rel(CUdeviceptr v, CUdeviceptr want)
{
    return v == want ? "as expected" : v ? "other" : "0";
}

/* p inside [base, base+size): every attribute the stub answers, singly and
 * as one list */
static void show(const char *what, char *base, size_t size, char *p)
{
    CUdeviceptr dp = (CUdeviceptr)(uintptr_t)p;
    CUdeviceptr mapped = 77, mapped_base = 77;
    CUresult em = cuMemHostGetDevicePointer_v2(&mapped, p, 0);
    (void)cuMemHostGetDevicePointer_v2(&mapped_base, base, 0);
    /* with unified addressing the device reaches a pinned allocation at its
     * host address (forwarded: the arena mapped at one address in both
     * processes); a registration of the guest's own memory cannot be */
    bool own = strncmp(what, "registered", 10) != 0;
    printf("%s: cuMemHostGetDevicePointer_v2 %d%s%s\n", what, (int)em,
           em ? "" : mapped == mapped_base + (CUdeviceptr)(p - base) ? ", the block's + offset" : ", WRONG",
           em || !own ? "" : mapped == dp ? ", its host address" : ", not its host address");
    unsigned flags = 77;
    CUresult e = cuMemHostGetFlags(&flags, p);
    printf("%s: cuMemHostGetFlags %d, flags %u\n", what, (int)e, flags);

    CUcontext c = (CUcontext)(uintptr_t)77;
    unsigned type = 77, managed = 77, ipc = 77, on = 77;
    int ordinal = 77;
    CUdeviceptr devptr = 77, start = 77;
    void *hostptr = (void *)(uintptr_t)77;
    size_t rsize = 77;
    unsigned long long id = 77;
    e = cuPointerGetAttribute(&c, CU_POINTER_ATTRIBUTE_CONTEXT, dp);
    printf("%s: CONTEXT %d, %s\n", what, (int)e, ctx_name(c));
    e = cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, dp);
    printf("%s: MEMORY_TYPE %d, %u\n", what, (int)e, type);
    e = cuPointerGetAttribute(&devptr, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, dp);
    printf("%s: DEVICE_POINTER %d, %s\n", what, (int)e,
           devptr == 77 ? "untouched" : !em && devptr == mapped ? "as cuMemHostGetDevicePointer_v2" : "WRONG");
    e = cuPointerGetAttribute(&hostptr, CU_POINTER_ATTRIBUTE_HOST_POINTER, dp);
    printf("%s: HOST_POINTER %d, %s\n", what, (int)e, hostptr == p ? "itself" : "WRONG");
    e = cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, dp);
    printf("%s: IS_MANAGED %d, %u\n", what, (int)e, managed);
    e = cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, dp);
    printf("%s: DEVICE_ORDINAL %d, %d\n", what, (int)e, ordinal);
    e = cuPointerGetAttribute(&ipc, CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, dp);
    printf("%s: IS_LEGACY_CUDA_IPC_CAPABLE %d, %u\n", what, (int)e, ipc);
    e = cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, dp);
    printf("%s: RANGE_START_ADDR %d, %s\n", what, (int)e, rel(start, (CUdeviceptr)(uintptr_t)base));
    e = cuPointerGetAttribute(&rsize, CU_POINTER_ATTRIBUTE_RANGE_SIZE, dp);
    printf("%s: RANGE_SIZE %d, %s\n", what, (int)e, rsize == size ? "the block's" : "WRONG");
    e = cuPointerGetAttribute(&on, CU_POINTER_ATTRIBUTE_MAPPED, dp);
    printf("%s: MAPPED %d, %u\n", what, (int)e, on);
    CUDA_POINTER_ATTRIBUTE_P2P_TOKENS tokens;
    printf("%s: P2P_TOKENS %d\n", what, (int)cuPointerGetAttribute(&tokens, CU_POINTER_ATTRIBUTE_P2P_TOKENS, dp));
    e = cuPointerGetAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, dp);
    printf("%s: BUFFER_ID %d, %s\n", what, (int)e, id == 77 ? "untouched" : id ? "nonzero" : "0");
    printf("%s: data NULL %d\n", what, (int)cuPointerGetAttribute(NULL, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, dp));

    /* the list: every slot written over */
    CUpointer_attribute a[10] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
                                 CU_POINTER_ATTRIBUTE_HOST_POINTER, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                 CU_POINTER_ATTRIBUTE_IS_MANAGED, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                 CU_POINTER_ATTRIBUTE_RANGE_SIZE, CU_POINTER_ATTRIBUTE_CONTEXT,
                                 CU_POINTER_ATTRIBUTE_MAPPED, CU_POINTER_ATTRIBUTE_MEMORY_TYPE};
    type = managed = on = 77;
    ordinal = 77;
    devptr = start = 77;
    hostptr = (void *)(uintptr_t)77;
    rsize = 77;
    c = (CUcontext)(uintptr_t)77;
    /* a NULL slot: the real driver fails the list, writing nothing */
    void *data[10] = {&type, &devptr, &hostptr, &ordinal, &managed, &start, &rsize, &c, &on, NULL};
    e = cuPointerGetAttributes(10, a, data, dp);
    printf("%s: list with a NULL slot %d, %s\n", what, (int)e,
           type == 77 && devptr == 77 && ordinal == 77 && on == 77 ? "nothing written" : "WRITTEN");
    unsigned type2 = 77;
    data[9] = &type2;
    e = cuPointerGetAttributes(10, a, data, dp);
    printf("%s: list %d: type %u, device pointer %s, host pointer %s, ordinal %d, managed %u, start %s, "
           "size %s, context %s, mapped %u\n",
           what, (int)e, type,
           devptr == 77 ? "untouched" : !em && devptr == mapped ? "as cuMemHostGetDevicePointer_v2" : devptr ? "WRONG" : "0",
           hostptr == p ? "itself" : hostptr ? "WRONG" : "0", ordinal, managed,
           rel(start, (CUdeviceptr)(uintptr_t)base), rsize == size ? "the block's" : rsize == 77 ? "untouched" : "WRONG",
           ctx_name(c), on);
    printf("%s: repeated MEMORY_TYPE %u\n", what, type2);
}

/* --all (tests/gpu/pinned-attrs.sh): every attribute cuda.h numbers, its
 * error and raw value (addresses relative to the block), for reading */
static void all(char *a, size_t size)
{
    for (int at = 1; at <= 21; at++) {
        unsigned char v[64];
        memset(v, 0x77, sizeof v);
        CUresult e = cuPointerGetAttribute(v, (CUpointer_attribute)at, (CUdeviceptr)(uintptr_t)(a + 16));
        unsigned long long x = 0;
        memcpy(&x, v, 8);
        printf("attribute %2d: %3d, 8 bytes %#llx", at, (int)e, x);
        if (x >= (uintptr_t)a && x < (uintptr_t)a + size) printf(" (block + %llu)", x - (uintptr_t)a);
        printf("\n");
    }
    unsigned flags = 77;
    printf("cuMemHostGetFlags: %d, %u\n", (int)cuMemHostGetFlags(&flags, a), flags);
}

int main(int argc, char **argv)
{
    CUdevice d;
    CUcontext ctx2;
    char *a = NULL, *b = NULL;
    if (cuInit(0) || cuDeviceGet(&d, 0) || cuCtxCreate(&ctx1_, NULL, 0, d)) {
        printf("setup failed\n");
        return 1;
    }
    CUresult e = cuMemHostAlloc((void **)&a, 10000, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
    printf("cuMemHostAlloc(10000, PORTABLE | DEVICEMAP): %d\n", (int)e);
    e = e ? e : cuMemAllocHost((void **)&b, 4096);
    printf("cuMemAllocHost(4096): %d\n", (int)e);
    if (e) return 1;
    resident("cuMemHostAlloc block", a, 10000);
    resident("cuMemAllocHost block", b, 4096);
    /* flags: an unknown bit is refused; write-combined is refused forwarded
     * (CMakeLists.txt's sed script says so of the native transcript) */
    void *w = NULL;
    printf("cuMemHostAlloc(4096, 0x40): %d\n", (int)cuMemHostAlloc(&w, 4096, 0x40));
    CUresult we = cuMemHostAlloc(&w, 4096, CU_MEMHOSTALLOC_WRITECOMBINED);
    printf("cuMemHostAlloc(4096, WRITECOMBINED): %d\n", (int)we);
    if (we == CUDA_SUCCESS) cuMemFreeHost(w);
    memset(a, 1, 10000);
    if (argc > 1 && strcmp(argv[1], "--all") == 0) {
        printf("-- cuMemHostAlloc(10000, PORTABLE | DEVICEMAP)\n");
        all(a, 10000);
        printf("-- cuMemAllocHost(4096)\n");
        all(b, 4096);
        return 0;
    }
    show("cuMemHostAlloc block", a, 10000, a);
    show("inside it (+1234)", a, 10000, a + 1234);
    show("its last byte", a, 10000, a + 9999);
    show("cuMemAllocHost block", b, 4096, b + 100);
    /* another context current: the block's context and device stay its own */
    if (cuCtxCreate(&ctx2, NULL, 0, d)) {
        printf("second context failed\n");
        return 1;
    }
    show("from another context", a, 10000, a + 8);
    cuCtxDestroy(ctx2);
    cuCtxSetCurrent(ctx1_);
    /* registered memory (mapped): the same answers, its device pointer the
     * registration's (forwarded: its device allocation, tcp:// too) */
    static char reg[8192] __attribute__((aligned(4096)));
    printf("cuMemHostRegister(0x40): %d\n", (int)cuMemHostRegister(reg, sizeof reg, 0x40));
    printf("cuMemHostRegister(DEVICEMAP): %d\n", (int)cuMemHostRegister(reg, sizeof reg, CU_MEMHOSTREGISTER_DEVICEMAP));
    show("registered range", reg, sizeof reg, reg + 100);
    printf("cuMemHostUnregister: %d\n", (int)cuMemHostUnregister(reg));
    unsigned rtype = 77;
    printf("unregistered: MEMORY_TYPE %d\n", (int)cuPointerGetAttribute(&rtype, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                                                        (CUdeviceptr)(uintptr_t)reg));
    /* freed: no pointer the driver knows (the list: success, defaults) */
    printf("cuMemFreeHost: %d\n", (int)cuMemFreeHost(b));
    unsigned type = 77, flags = 77;
    printf("freed: MEMORY_TYPE %d\n", (int)cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                                                  (CUdeviceptr)(uintptr_t)b));
    printf("freed: cuMemHostGetFlags %d\n", (int)cuMemHostGetFlags(&flags, b));
    CUpointer_attribute la[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                 CU_POINTER_ATTRIBUTE_HOST_POINTER};
    int ordinal = 77;
    void *hp = (void *)(uintptr_t)77;
    void *ld[3] = {&type, &ordinal, &hp};
    e = cuPointerGetAttributes(3, la, ld, (CUdeviceptr)(uintptr_t)b);
    printf("freed: list %d: type %u, ordinal %d, host pointer %s\n", (int)e, type, ordinal,
           hp == b ? "itself" : hp ? "other" : "0");
    /* device memory: the driver knows it, the host cannot reach it */
    CUdeviceptr dm = 0;
    printf("cuMemAlloc: %d\n", (int)cuMemAlloc(&dm, 4096));
    hp = (void *)(uintptr_t)77, type = 77, ordinal = 77;
    e = cuPointerGetAttributes(3, la, ld, dm);
    printf("device memory: list %d: type %u, ordinal %d, host pointer %s\n", (int)e, type, ordinal,
           hp == (void *)(uintptr_t)dm ? "itself" : hp ? "other" : "0");
    cuMemFree(dm);
    static char pageable[64];
    hp = (void *)(uintptr_t)77, type = 77, ordinal = 77;
    e = cuPointerGetAttributes(3, la, ld, (CUdeviceptr)(uintptr_t)pageable);
    printf("pageable: list %d: type %u, ordinal %d, host pointer %s\n", (int)e, type, ordinal,
           hp == pageable ? "itself" : hp ? "other" : "0");
    printf("cuMemFreeHost again: %d\n", (int)cuMemFreeHost(b));
    printf("cuMemFreeHost: %d\n", (int)cuMemFreeHost(a));
    return 0;
}
