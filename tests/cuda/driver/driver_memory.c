/* The driver's other ways to get device memory, as PyTorch's expandable
 * segments (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True) and
 * stream-ordered allocators use them: virtual memory (cuMemAddressReserve,
 * cuMemCreate, cuMemMap, cuMemSetAccess, growing a mapping piece by piece,
 * cuMemUnmap, cuMemRelease, cuMemAddressFree), and memory pools
 * (cuMemAllocAsync, cuMemPoolCreate, cuMemAllocFromPoolAsync,
 * cuMemFreeAsync, pool attributes, cuMemPoolTrimTo). A kernel reads and
 * writes each kind of memory; every value comes back to the host and is
 * printed. The same output natively and over apigen's driver stub; without
 * a driver both stop at cuInit with the same error.
 *   driver_memory KERNELS.ptx */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#define CHECK(call) if (check(#call, (call))) return 1
static int check(const char *what, CUresult e)
{
    char w[40];
    snprintf(w, sizeof w, "%.*s", (int)(strchr(what, '(') ? strchr(what, '(') - what : 39), what);
    printf("%-28s %d%s\n", w, (int)e, e == CUDA_SUCCESS ? " ok" : "");
    return e != CUDA_SUCCESS;
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    if (b) b[n] = 0;
    fclose(f);
    return b;
}

/* y = a*x + y over n floats with the PTX's axpy kernel, on stream s */
static CUresult axpy(CUfunction f, CUstream s, float a, CUdeviceptr x, CUdeviceptr y, int n)
{
    void *args[] = {&a, &x, &y, &n};
    return cuLaunchKernel(f, (unsigned)(n + 255) / 256, 1, 1, 256, 1, 1, 0, s, args, NULL);
}

/* sum of y after y = 2*x + y, x[i] = i, y[i] = 1: checked on the host */
static int check_axpy(const char *what, CUfunction f, CUstream s, CUdeviceptr x, CUdeviceptr y,
                      int n)
{
    float *h = malloc(sizeof(float) * (size_t)n);
    if (!h) return 1;
    for (int i = 0; i < n; i++) h[i] = (float)i;
    CHECK(cuMemcpyHtoDAsync(x, h, sizeof(float) * (size_t)n, s));
    CHECK(cuMemsetD32Async(y, 0x3f800000u, (size_t)n, s)); /* 1.0f */
    CHECK(axpy(f, s, 2.0f, x, y, n));
    CHECK(cuMemcpyDtoHAsync(h, y, sizeof(float) * (size_t)n, s));
    CHECK(cuStreamSynchronize(s));
    int bad = 0;
    for (int i = 0; i < n; i++)
        if (h[i] != 2.0f * (float)i + 1.0f) bad++;
    printf("%s: %d floats, %d wrong, y[n-1] %.1f\n", what, n, bad, (double)h[n - 1]);
    free(h);
    return bad != 0;
}

static int vmm(CUdevice dev, CUfunction f, CUstream s)
{
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    size_t gran = 0, rec = 0;
    CHECK(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    CHECK(cuMemGetAllocationGranularity(&rec, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    printf("granularity: minimum %zu, recommended >= minimum %d\n", gran, rec >= gran);
    /* reserve room for 4 pieces, map 2, use them, then grow to 4 (the expandable segment) */
    size_t piece = gran, total = 4 * piece;
    CUdeviceptr va = 0;
    CHECK(cuMemAddressReserve(&va, total, 0, 0, 0));
    CUmemGenericAllocationHandle h[4];
    CUmemAccessDesc acc;
    memset(&acc, 0, sizeof acc);
    acc.location = prop.location;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    for (int i = 0; i < 2; i++) {
        CHECK(cuMemCreate(&h[i], piece, &prop, 0));
        CHECK(cuMemMap(va + (size_t)i * piece, piece, 0, h[i], 0));
    }
    CHECK(cuMemSetAccess(va, 2 * piece, &acc, 1));
    unsigned long long flags = 0;
    CHECK(cuMemGetAccess(&flags, &prop.location, va));
    printf("access of the first piece: %llu\n", flags);
    int n2 = (int)(piece / sizeof(float)); /* x in piece 0, y in piece 1 */
    if (check_axpy("vmm 2 pieces", f, s, va, va + piece, n2)) return 1;
    for (int i = 2; i < 4; i++) {
        CHECK(cuMemCreate(&h[i], piece, &prop, 0));
        CHECK(cuMemMap(va + (size_t)i * piece, piece, 0, h[i], 0));
    }
    CHECK(cuMemSetAccess(va + 2 * piece, 2 * piece, &acc, 1));
    /* x over pieces 0-1, y over 2-3: one kernel across four physical allocations */
    if (check_axpy("vmm grown to 4", f, s, va, va + 2 * piece, 2 * n2)) return 1;
    CUdeviceptr base = 0;
    size_t size = 0;
    CHECK(cuMemGetAddressRange(&base, &size, va + piece + 8));
    printf("address range of piece 1: base is piece 1 %d, size %zu pieces\n",
           base == va + piece, size / piece);
    CUmemGenericAllocationHandle back = 0;
    CHECK(cuMemRetainAllocationHandle(&back, (void *)(uintptr_t)(va + 3 * piece)));
    CUmemAllocationProp got;
    memset(&got, 0, sizeof got);
    CHECK(cuMemGetAllocationPropertiesFromHandle(&got, back));
    printf("retained handle: device memory %d on device %d\n",
           got.location.type == CU_MEM_LOCATION_TYPE_DEVICE, got.location.id == dev);
    CHECK(cuMemRelease(back));
    CHECK(cuMemUnmap(va, total));
    for (int i = 0; i < 4; i++) CHECK(cuMemRelease(h[i]));
    CHECK(cuMemAddressFree(va, total));
    /* a use after unmapping is the driver's error, not the stub's */
    printf("memset after unmap fails: %d\n", cuMemsetD8(va, 0, 16) != CUDA_SUCCESS);
    return 0;
}

static int pools(CUdevice dev, CUfunction f, CUstream s)
{
    int n = 1 << 16;
    size_t bytes = sizeof(float) * (size_t)n;
    CUdeviceptr x = 0, y = 0;
    /* the device's default pool */
    CHECK(cuMemAllocAsync(&x, bytes, s));
    CHECK(cuMemAllocAsync(&y, bytes, s));
    if (check_axpy("default pool", f, s, x, y, n)) return 1;
    CHECK(cuMemFreeAsync(x, s));
    CHECK(cuMemFreeAsync(y, s));
    /* a pool of our own, with a release threshold */
    CUmemPoolProps pp;
    memset(&pp, 0, sizeof pp);
    pp.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    pp.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    pp.location.id = dev;
    CUmemoryPool pool;
    CHECK(cuMemPoolCreate(&pool, &pp));
    cuuint64_t thr = 64ull << 20, got = 0;
    CHECK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &thr));
    CHECK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &got));
    printf("pool release threshold: %llu MiB\n", (unsigned long long)(got >> 20));
    CHECK(cuMemAllocFromPoolAsync(&x, bytes, pool, s));
    CHECK(cuMemAllocFromPoolAsync(&y, bytes, pool, s));
    if (check_axpy("own pool", f, s, x, y, n)) return 1;
    cuuint64_t used = 0;
    CHECK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used));
    printf("pool used >= two buffers: %d\n", used >= 2 * bytes);
    CHECK(cuMemFreeAsync(x, s));
    CHECK(cuMemFreeAsync(y, s));
    CHECK(cuStreamSynchronize(s));
    CHECK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used));
    printf("pool used after the frees: %llu\n", (unsigned long long)used);
    CHECK(cuMemPoolTrimTo(pool, 0));
    CUmemoryPool cur = NULL;
    CHECK(cuDeviceGetMemPool(&cur, dev));
    CHECK(cuDeviceSetMemPool(dev, pool));
    CUmemoryPool now = NULL;
    CHECK(cuDeviceGetMemPool(&now, dev));
    printf("device pool is ours after set: %d\n", now == pool);
    CHECK(cuDeviceSetMemPool(dev, cur));
    CHECK(cuMemPoolDestroy(pool));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s KERNELS.ptx\n", argv[0]);
        return 2;
    }
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f;
    CUstream s;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    char *ptx = read_all(argv[1]);
    if (!ptx) {
        fprintf(stderr, "cannot read %s\n", argv[1]);
        return 2;
    }
    CHECK(cuModuleLoadData(&mod, ptx));
    free(ptx);
    CHECK(cuModuleGetFunction(&f, mod, "axpy"));
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    int rc = vmm(dev, f, s) || pools(dev, f, s);
    CHECK(cuStreamDestroy(s));
    CHECK(cuModuleUnload(mod));
    CHECK(cuDevicePrimaryCtxRelease(dev));
    printf("done: %s\n", rc ? "FAILED" : "ok");
    return rc;
}
