/* pools_ci: the host side of examples/cuda/modern.cu without a GPU, run
 * natively and through the cudart stub with the same stand-in device
 * (tests/cuda/fake_pools.c) and the outputs compared: the stream-ordered
 * allocator (the default pool's attributes, 4-byte and 8-byte values
 * alike, what frees keep under the release threshold, cudaMemPoolTrimTo, a
 * pool of the program's own, an allocation beyond the device, copies
 * through pool memory), device limits, stream priorities and flags, and an
 * L2 access-policy window set and read back through the stream attribute
 * union. Exit 1 when a check fails. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

static int bad_;

static void check(const char *what, cudaError_t e, cudaError_t want)
{
    printf("%s: %s\n", what, cudaGetErrorName(e));
    if (e != want) {
        printf("  MISMATCH: want %s\n", cudaGetErrorName(want));
        bad_ = 1;
    }
}

static void expect(const char *what, int ok)
{
    printf("%s: %s\n", what, ok ? "ok" : "WRONG");
    bad_ |= !ok;
}

static uint64_t attr64(cudaMemPool_t pool, enum cudaMemPoolAttr a)
{
    /* guard bytes around the value: a stub that wrote more than the
     * attribute's size would be seen */
    struct {
        uint64_t v, guard;
    } b = {0, 0x5a5a5a5a5a5a5a5aull};
    check("  get 8-byte attribute", cudaMemPoolGetAttribute(pool, a, &b.v), cudaSuccess);
    expect("  guard after it untouched", b.guard == 0x5a5a5a5a5a5a5a5aull);
    return b.v;
}

static void pools(cudaStream_t s)
{
    cudaMemPool_t pool, cur, mine;
    check("cudaDeviceGetDefaultMemPool", cudaDeviceGetDefaultMemPool(&pool, 0), cudaSuccess);
    check("cudaDeviceGetMemPool", cudaDeviceGetMemPool(&cur, 0), cudaSuccess);
    expect("the current pool is the default one", cur == pool);
    struct {
        int v, guard;
    } r = {7, 0x5a5a5a5a};
    check("get a 4-byte attribute (reuse: follow event dependencies)",
          cudaMemPoolGetAttribute(pool, cudaMemPoolReuseFollowEventDependencies, &r.v),
          cudaSuccess);
    printf("  value %d; the int after it untouched: %s\n", r.v,
           r.guard == 0x5a5a5a5a ? "yes" : "NO");
    bad_ |= r.guard != 0x5a5a5a5a;
    int off = 0;
    check("set it to 0",
          cudaMemPoolSetAttribute(pool, cudaMemPoolReuseFollowEventDependencies, &off),
          cudaSuccess);
    (void)cudaMemPoolGetAttribute(pool, cudaMemPoolReuseFollowEventDependencies, &r.v);
    printf("  read back %d\n", r.v);
    printf("release threshold at start: %llu\n",
           (unsigned long long)attr64(pool, cudaMemPoolAttrReleaseThreshold));
    uint64_t keep = UINT64_MAX;
    check("set the release threshold to UINT64_MAX",
          cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep), cudaSuccess);
    expect("  read back", attr64(pool, cudaMemPoolAttrReleaseThreshold) == UINT64_MAX);
    check("an attribute that is none (99)",
          cudaMemPoolGetAttribute(pool, (enum cudaMemPoolAttr)99, &r.v), cudaErrorInvalidValue);
    (void)cudaGetLastError();

    unsigned char host[3000], back[3000];
    for (int i = 0; i < 3000; i++)
        host[i] = (unsigned char)(i * 7);
    int right = 1;
    for (int round = 0; round < 4; round++) {
        void *d = NULL;
        check("cudaMallocAsync 3 MiB", cudaMallocAsync(&d, 3u << 20, s), cudaSuccess);
        check("  copy in", cudaMemcpyAsync(d, host, sizeof host, cudaMemcpyHostToDevice, s),
              cudaSuccess);
        memset(back, 0, sizeof back);
        check("  copy back", cudaMemcpyAsync(back, d, sizeof back, cudaMemcpyDeviceToHost, s),
              cudaSuccess);
        check("  cudaFreeAsync", cudaFreeAsync(d, s), cudaSuccess);
        check("  synchronize", cudaStreamSynchronize(s), cudaSuccess);
        right &= memcmp(host, back, sizeof back) == 0;
    }
    expect("4 rounds through pool memory: the bytes came back", right);
    printf("after the frees: used %llu, reserved %llu, used high %llu\n",
           (unsigned long long)attr64(pool, cudaMemPoolAttrUsedMemCurrent),
           (unsigned long long)attr64(pool, cudaMemPoolAttrReservedMemCurrent),
           (unsigned long long)attr64(pool, cudaMemPoolAttrUsedMemHigh));
    check("cudaMemPoolTrimTo(0)", cudaMemPoolTrimTo(pool, 0), cudaSuccess);
    printf("  reserved now %llu\n",
           (unsigned long long)attr64(pool, cudaMemPoolAttrReservedMemCurrent));

    void *huge = NULL;
    check("cudaMallocAsync of 1 PiB", cudaMallocAsync(&huge, (size_t)1 << 50, s),
          cudaErrorMemoryAllocation);
    check("  the last error", cudaGetLastError(), cudaErrorMemoryAllocation);
    check("  then", cudaGetLastError(), cudaSuccess);
    check("cudaFreeAsync of an address no one allocated",
          cudaFreeAsync((void *)(uintptr_t)0x1000, s), cudaErrorInvalidValue);
    (void)cudaGetLastError();

    struct cudaMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    check("cudaMemPoolCreate", cudaMemPoolCreate(&mine, &props), cudaSuccess);
    void *f = NULL;
    check("cudaMallocFromPoolAsync 1000 bytes", cudaMallocFromPoolAsync(&f, 1000, mine, s),
          cudaSuccess);
    check("  memset", cudaMemsetAsync(f, 0x3c, 1000, s), cudaSuccess);
    check("  copy back", cudaMemcpyAsync(back, f, 1000, cudaMemcpyDeviceToHost, s), cudaSuccess);
    check("  synchronize", cudaStreamSynchronize(s), cudaSuccess);
    int set = 1;
    for (int i = 0; i < 1000; i++)
        set &= back[i] == 0x3c;
    expect("  the pool's memory holds the memset", set);
    printf("  its pool's used bytes: %llu\n",
           (unsigned long long)attr64(mine, cudaMemPoolAttrUsedMemCurrent));
    check("  cudaFreeAsync", cudaFreeAsync(f, s), cudaSuccess);
    check("cudaMemPoolDestroy", cudaMemPoolDestroy(mine), cudaSuccess);
    props.location.id = 99;
    check("a pool on device 99", cudaMemPoolCreate(&mine, &props), cudaErrorInvalidValue);
    (void)cudaGetLastError();
}

static void limits_streams(void)
{
    size_t v = 0;
    check("cudaDeviceSetLimit(malloc heap, 32 MiB)",
          cudaDeviceSetLimit(cudaLimitMallocHeapSize, 32u << 20), cudaSuccess);
    check("cudaDeviceGetLimit(malloc heap)", cudaDeviceGetLimit(&v, cudaLimitMallocHeapSize),
          cudaSuccess);
    printf("  %zu MiB\n", v >> 20);
    check("cudaDeviceGetLimit(stack)", cudaDeviceGetLimit(&v, cudaLimitStackSize), cudaSuccess);
    printf("  %zu bytes\n", v);
    check("a limit that is none (42)", cudaDeviceSetLimit((enum cudaLimit)42, 1),
          cudaErrorUnsupportedLimit);
    (void)cudaGetLastError();

    int lo = 1, hi = 1;
    check("cudaDeviceGetStreamPriorityRange", cudaDeviceGetStreamPriorityRange(&lo, &hi),
          cudaSuccess);
    printf("  least %d, greatest %d\n", lo, hi);
    cudaStream_t ps;
    check("cudaStreamCreateWithPriority(non-blocking, greatest - 3)",
          cudaStreamCreateWithPriority(&ps, cudaStreamNonBlocking, hi - 3), cudaSuccess);
    int got = 1;
    unsigned flags = 7;
    check("cudaStreamGetPriority", cudaStreamGetPriority(ps, &got), cudaSuccess);
    check("cudaStreamGetFlags", cudaStreamGetFlags(ps, &flags), cudaSuccess);
    printf("  priority %d (clamped), flags %u\n", got, flags);

    void *win = NULL;
    check("cudaMalloc 1 MiB", cudaMalloc(&win, 1u << 20), cudaSuccess);
    cudaStreamAttrValue a, b;
    memset(&a, 0, sizeof a);
    a.accessPolicyWindow.base_ptr = win;
    a.accessPolicyWindow.num_bytes = 1u << 20;
    a.accessPolicyWindow.hitRatio = 0.625f;
    a.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    a.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    check("cudaStreamSetAttribute(access policy window)",
          cudaStreamSetAttribute(ps, cudaStreamAttributeAccessPolicyWindow, &a), cudaSuccess);
    memset(&b, 0xee, sizeof b);
    check("cudaStreamGetAttribute(access policy window)",
          cudaStreamGetAttribute(ps, cudaStreamAttributeAccessPolicyWindow, &b), cudaSuccess);
    expect("  the same window (pointer, size, ratio, properties)",
           b.accessPolicyWindow.base_ptr == win && b.accessPolicyWindow.num_bytes == (1u << 20) &&
               b.accessPolicyWindow.hitRatio == 0.625f &&
               b.accessPolicyWindow.hitProp == cudaAccessPropertyPersisting &&
               b.accessPolicyWindow.missProp == cudaAccessPropertyStreaming);
    a.accessPolicyWindow.hitRatio = 2.0f;
    check("a hit ratio of 2", cudaStreamSetAttribute(ps, cudaStreamAttributeAccessPolicyWindow, &a),
          cudaErrorInvalidValue);
    (void)cudaGetLastError();
    check("cudaFree", cudaFree(win), cudaSuccess);
    check("cudaStreamDestroy", cudaStreamDestroy(ps), cudaSuccess);
}

int main(void)
{
    cudaStream_t s;
    check("cudaSetDevice(0)", cudaSetDevice(0), cudaSuccess);
    check("cudaStreamCreateWithFlags", cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking),
          cudaSuccess);
    pools(s);
    limits_streams();
    check("cudaStreamDestroy", cudaStreamDestroy(s), cudaSuccess);
    printf("done\n");
    return bad_;
}
