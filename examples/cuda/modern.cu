/* What newer CUDA programs do that the older examples do not: the
 * stream-ordered allocator (the default pool, a pool of their own, its
 * attributes, allocations captured in a graph), occupancy-sized launches
 * (cudaOccupancyMaxPotentialBlockSize), a cooperative launch whose grid
 * synchronises, cudaLaunchKernelEx with a cluster dimension (compute
 * capability 9 and later), device-side malloc under cudaDeviceSetLimit,
 * streams with priorities and pitched 2D copies. Every line it prints is
 * the same natively and forwarded; tests/gpu/run-all.sh and driver.sh
 * compare them. */
#include <cooperative_groups.h>

#include <cstring>
#include <vector>

#include "common.h"

namespace cg = cooperative_groups;

__global__ void fill(int *p, int n, int v)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        p[i] = v + i;
}

__global__ void scale(float *p, int n, float a)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] *= a;
}

/* Two phases split by a grid-wide barrier: every block's partial sum, then
 * block 0 adds them. Only a cooperative launch may do this. */
__global__ void grid_sum(const int *in, int n, int *partial, int *out)
{
    cg::grid_group grid = cg::this_grid();
    __shared__ int acc;
    if (threadIdx.x == 0)
        acc = 0;
    __syncthreads();
    int s = 0;
    for (int i = grid.thread_rank(); i < n; i += grid.size())
        s += in[i];
    atomicAdd(&acc, s);
    __syncthreads();
    if (threadIdx.x == 0)
        partial[blockIdx.x] = acc;
    grid.sync();
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        int t = 0;
        for (unsigned b = 0; b < gridDim.x; b++)
            t += partial[b];
        *out = t;
    }
}

/* Each block writes its rank in its cluster and the cluster's size. */
__global__ void cluster_ranks(int *out)
{
#ifdef _CG_HAS_CLUSTER_GROUP /* compiled for compute capability 9.0 and later */
    cg::cluster_group c = cg::this_cluster();
    if (threadIdx.x == 0)
        out[blockIdx.x] = (int)c.block_rank() * 100 + (int)c.num_blocks();
#else
    if (threadIdx.x == 0)
        out[blockIdx.x] = -1;
#endif
}

__global__ void device_heap(int *ok, int per_thread)
{
    int *p = (int *)malloc(per_thread * sizeof(int));
    if (!p) {
        atomicAdd(ok + 1, 1);
        return;
    }
    for (int i = 0; i < per_thread; i++)
        p[i] = i;
    int s = 0;
    for (int i = 0; i < per_thread; i++)
        s += p[i];
    free(p);
    if (s == per_thread * (per_thread - 1) / 2)
        atomicAdd(ok, 1);
}

/* Dynamic shared memory beyond the default 48 KiB (after
 * cudaFuncSetAttribute): every element written and read back. */
__global__ void big_smem(int *out, int n)
{
    extern __shared__ int sm[];
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        sm[i] = i * 3;
    __syncthreads();
    int s = 0;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        s += sm[n - 1 - i];
    atomicAdd(out, s);
}

__global__ void spin_ms(long long cycles)
{
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
}

/* A graph captured from s: an allocation of n ints, filled with v + i,
 * copied to res, freed in the graph when free_in_graph. */
static cudaGraph_t capture_alloc_fill(cudaStream_t s, cudaStreamCaptureMode mode, int *res, int n,
                                      int v, bool free_in_graph)
{
    cudaGraph_t g;
    int *tmp = nullptr;
    CHECK(cudaStreamBeginCapture(s, mode));
    CHECK(cudaMallocAsync(&tmp, n * sizeof(int), s));
    fill<<<(n + 255) / 256, 256, 0, s>>>(tmp, n, v);
    CHECK(cudaMemcpyAsync(res, tmp, n * sizeof(int), cudaMemcpyDeviceToDevice, s));
    if (free_in_graph)
        CHECK(cudaFreeAsync(tmp, s));
    CHECK(cudaStreamEndCapture(s, &g));
    return g;
}

static void stream_ordered(cudaStream_t s)
{
    cudaMemPool_t pool;
    CHECK(cudaDeviceGetDefaultMemPool(&pool, 0));
    uint64_t thr = 1;
    CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &thr));
    std::printf("default pool release threshold at start: %llu\n", (unsigned long long)thr);
    thr = UINT64_MAX;
    CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &thr));
    thr = 0;
    CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &thr));
    std::printf("default pool release threshold set: %s\n",
                thr == UINT64_MAX ? "UINT64_MAX" : "other");

    const int n = 1 << 18;
    int *host = nullptr;
    CHECK(cudaMallocHost(&host, n * sizeof(int)));
    bool all = true;
    for (int round = 0; round < 8; round++) {
        int *d = nullptr;
        CHECK(cudaMallocAsync(&d, n * sizeof(int), s));
        fill<<<64, 256, 0, s>>>(d, n, round);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpyAsync(host, d, n * sizeof(int), cudaMemcpyDeviceToHost, s));
        CHECK(cudaFreeAsync(d, s));
        CHECK(cudaStreamSynchronize(s));
        for (int i = 0; i < n; i += 4099)
            all = all && host[i] == round + i;
    }
    std::printf("8 rounds of cudaMallocAsync, fill, copy back, cudaFreeAsync: %s\n",
                all ? "right" : "WRONG");
    uint64_t used = 0, reserved = 0;
    CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
    CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
    std::printf("default pool after the frees: used %llu, reserved %s\n", (unsigned long long)used,
                reserved >= n * sizeof(int) ? "kept (threshold)" : "released");
    CHECK(cudaMemPoolTrimTo(pool, 0));
    CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
    std::printf("after cudaMemPoolTrimTo(0): reserved %llu\n", (unsigned long long)reserved);

    /* a pool of the program's own */
    cudaMemPoolProps props;
    std::memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    cudaMemPool_t mine;
    CHECK(cudaMemPoolCreate(&mine, &props));
    float *f = nullptr;
    CHECK(cudaMallocFromPoolAsync((void **)&f, 1000 * sizeof(float), mine, s));
    std::vector<float> hv(1000);
    for (int i = 0; i < 1000; i++)
        hv[i] = (float)i;
    CHECK(cudaMemcpyAsync(f, hv.data(), 1000 * sizeof(float), cudaMemcpyHostToDevice, s));
    scale<<<4, 256, 0, s>>>(f, 1000, 0.5f);
    CHECK(cudaMemcpyAsync(hv.data(), f, 1000 * sizeof(float), cudaMemcpyDeviceToHost, s));
    CHECK(cudaFreeAsync(f, s));
    CHECK(cudaStreamSynchronize(s));
    std::printf("own pool: scaled values %s (hv[999] = %.1f)\n", hv[10] == 5.0f ? "right" : "WRONG",
                hv[999]);
    cudaMemPool_t cur;
    CHECK(cudaDeviceGetMemPool(&cur, 0));
    std::printf("the device's current pool is the default one: %s\n", cur == pool ? "yes" : "no");
    CHECK(cudaMemPoolDestroy(mine));

    /* an allocation the pool cannot give */
    void *huge = nullptr;
    cudaError_t e = cudaMallocAsync(&huge, (size_t)1 << 50, s);
    std::printf("cudaMallocAsync of 1 PiB: %s\n", cudaGetErrorName(e));
    (void)cudaGetLastError();
    CHECK(cudaStreamSynchronize(s));

    /* allocation and free captured in a graph, the graph launched 3 times
     * (its result copied to device memory: a captured copy to host memory
     * is capture_copy's subject) */
    cudaGraphExec_t ge;
    int *res = nullptr;
    CHECK(cudaMalloc(&res, 4096 * sizeof(int)));
    cudaGraph_t g = capture_alloc_fill(s, cudaStreamCaptureModeGlobal, res, 4096, 7, true);
    size_t nodes = 0;
    CHECK(cudaGraphGetNodes(g, nullptr, &nodes));
    std::printf("captured graph: %zu nodes\n", nodes);
    CHECK(cudaGraphInstantiate(&ge, g, 0));
    bool ok = true;
    for (int r = 0; r < 3; r++) {
        CHECK(cudaMemsetAsync(res, 0, 4096 * sizeof(int), s));
        CHECK(cudaGraphLaunch(ge, s));
        CHECK(cudaMemcpyAsync(host, res, 4096 * sizeof(int), cudaMemcpyDeviceToHost, s));
        CHECK(cudaStreamSynchronize(s));
        ok = ok && host[0] == 7 && host[4095] == 7 + 4095;
    }
    std::printf("graph with its own allocation, 3 launches: %s\n", ok ? "right" : "WRONG");
    CHECK(cudaGraphExecDestroy(ge));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaFree(res));
    CHECK(cudaFreeHost(host));
}

static void occupancy_and_cooperative(cudaStream_t s, const cudaDeviceProp &prop)
{
    int min_grid = 0, block = 0;
    CHECK(cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, scale, 0, 0));
    std::printf("occupancy: scale's potential block size %d, minimum grid %s\n", block,
                min_grid >= prop.multiProcessorCount ? ">= one block per SM" : "small");
    int per_sm = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, grid_sum, 256, 0));
    std::printf("grid_sum: %d blocks of 256 per SM\n", per_sm);
    cudaFuncAttributes fa;
    CHECK(cudaFuncGetAttributes(&fa, grid_sum));
    std::printf("grid_sum attributes: max threads per block %d, static shared %zu bytes\n",
                fa.maxThreadsPerBlock, fa.sharedSizeBytes);

    int coop = 0;
    CHECK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, 0));
    if (!coop) {
        std::printf("cooperative launch: not supported\n");
        return;
    }
    const int n = 1 << 16; /* the sum of 0..n-1 fits an int */
    int *in = nullptr, *partial = nullptr, *out = nullptr;
    int blocks = per_sm * prop.multiProcessorCount;
    CHECK(cudaMalloc(&in, n * sizeof(int)));
    CHECK(cudaMalloc(&partial, blocks * sizeof(int)));
    CHECK(cudaMalloc(&out, sizeof(int)));
    fill<<<256, 256, 0, s>>>(in, n, 0); /* in[i] = i */
    int nn = n;
    void *args[] = {&in, &nn, &partial, &out};
    CHECK(cudaLaunchCooperativeKernel((void *)grid_sum, dim3(blocks), dim3(256), args, 0, s));
    int sum = 0;
    CHECK(cudaMemcpyAsync(&sum, out, sizeof sum, cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    long long want = 0;
    for (int i = 0; i < n; i++)
        want += i;
    std::printf("cooperative grid sum over every SM: %s\n", (int)want == sum ? "right" : "WRONG");
    /* more blocks than can be resident at once: refused */
    cudaError_t e =
        cudaLaunchCooperativeKernel((void *)grid_sum, dim3(blocks * 4 + 1), dim3(256), args, 0, s);
    std::printf("cooperative launch too large: %s\n", cudaGetErrorName(e));
    (void)cudaGetLastError();
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaFree(in));
    CHECK(cudaFree(partial));
    CHECK(cudaFree(out));
}

static void launch_ex(cudaStream_t s, const cudaDeviceProp &prop)
{
    int *d = nullptr;
    const int blocks = 8;
    CHECK(cudaMalloc(&d, blocks * sizeof(int)));
    CHECK(cudaMemsetAsync(d, 0xff, blocks * sizeof(int), s));
    cudaLaunchConfig_t cfg;
    std::memset(&cfg, 0, sizeof cfg);
    cfg.gridDim = dim3(blocks);
    cfg.blockDim = dim3(32);
    cfg.stream = s;
    cudaLaunchAttribute attr[1];
    if (prop.major >= 9) {
        attr[0].id = cudaLaunchAttributeClusterDimension;
        attr[0].val.clusterDim.x = 2;
        attr[0].val.clusterDim.y = 1;
        attr[0].val.clusterDim.z = 1;
        cfg.attrs = attr;
        cfg.numAttrs = 1;
    }
    CHECK(cudaLaunchKernelEx(&cfg, cluster_ranks, d));
    int h[blocks];
    CHECK(cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    std::printf("cudaLaunchKernelEx%s: ranks*100+size:", prop.major >= 9 ? " (clusters of 2)" : "");
    for (int i = 0; i < blocks; i++)
        std::printf(" %d", h[i]);
    std::printf("\n");
    /* a cluster dimension that does not divide the grid */
    if (prop.major >= 9) {
        cfg.gridDim = dim3(3);
        cudaError_t e = cudaLaunchKernelEx(&cfg, cluster_ranks, d);
        cudaError_t e2 = cudaStreamSynchronize(s);
        std::printf("a grid of 3 in clusters of 2: %s, then %s\n", cudaGetErrorName(e),
                    cudaGetErrorName(e2));
        (void)cudaGetLastError();
    }
    CHECK(cudaFree(d));
}

static void limits_and_priorities()
{
    size_t heap = 0;
    CHECK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 32u << 20));
    CHECK(cudaDeviceGetLimit(&heap, cudaLimitMallocHeapSize));
    std::printf("malloc heap limit: %zu MiB\n", heap >> 20);
    int *ok = nullptr;
    CHECK(cudaMalloc(&ok, 2 * sizeof(int)));
    CHECK(cudaMemset(ok, 0, 2 * sizeof(int)));
    device_heap<<<32, 128>>>(ok, 64);
    CHECK(cudaGetLastError());
    int h[2];
    CHECK(cudaMemcpy(h, ok, sizeof h, cudaMemcpyDeviceToHost));
    std::printf("device malloc/free in 4096 threads: %d right, %d failed\n", h[0], h[1]);
    CHECK(cudaFree(ok));
    size_t stack = 0;
    CHECK(cudaDeviceGetLimit(&stack, cudaLimitStackSize));
    std::printf("stack size limit known: %s\n", stack > 0 ? "yes" : "no");

    int lo = 0, hi = 0;
    CHECK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    std::printf("stream priorities: least %d, greatest %d\n", lo, hi);
    cudaStream_t ps;
    CHECK(cudaStreamCreateWithPriority(&ps, cudaStreamNonBlocking, hi));
    int got = 0;
    unsigned flags = 0;
    CHECK(cudaStreamGetPriority(ps, &got));
    CHECK(cudaStreamGetFlags(ps, &flags));
    std::printf("high-priority stream: priority %d, flags %u\n", got, flags);

    /* pitched 2D: a 100 x 37 float matrix, a 2D memset then a copy of a
     * sub-rectangle */
    float *dm = nullptr;
    size_t pitch = 0;
    CHECK(cudaMallocPitch((void **)&dm, &pitch, 100 * sizeof(float), 37));
    std::printf("pitch is a multiple of 4 and at least a row: %s\n",
                pitch % 4 == 0 && pitch >= 100 * sizeof(float) ? "yes" : "no");
    CHECK(cudaMemset2DAsync(dm, pitch, 0, 100 * sizeof(float), 37, ps));
    std::vector<float> src(100 * 37), back(100 * 37, -1.0f);
    for (int i = 0; i < 100 * 37; i++)
        src[i] = (float)i;
    CHECK(cudaMemcpy2DAsync(dm, pitch, src.data(), 100 * sizeof(float), 60 * sizeof(float), 30,
                            cudaMemcpyHostToDevice, ps));
    CHECK(cudaMemcpy2DAsync(back.data(), 100 * sizeof(float), dm, pitch, 100 * sizeof(float), 37,
                            cudaMemcpyDeviceToHost, ps));
    CHECK(cudaStreamSynchronize(ps));
    bool right = true;
    for (int r = 0; r < 37; r++)
        for (int c = 0; c < 100; c++)
            right = right && back[r * 100 + c] == (r < 30 && c < 60 ? src[r * 100 + c] : 0.0f);
    std::printf(
        "2D memset and sub-rectangle copy: %s (fnv %016llx)\n", right ? "right" : "WRONG",
        (unsigned long long)fnv((const unsigned char *)back.data(), back.size() * sizeof(float)));
    CHECK(cudaFree(dm));
    CHECK(cudaStreamDestroy(ps));
}

static void smem_errors_queries(cudaStream_t s, const cudaDeviceProp &prop)
{
    const int bytes = 100 * 1024, n = bytes / 4;
    int *out = nullptr;
    CHECK(cudaMalloc(&out, sizeof(int)));
    CHECK(cudaMemsetAsync(out, 0, sizeof(int), s));
    big_smem<<<1, 256, bytes, s>>>(out, n);
    cudaError_t e = cudaGetLastError();
    std::printf("100 KiB of dynamic shared memory before the attribute: %s\n", cudaGetErrorName(e));
    if (prop.sharedMemPerBlockOptin >= (size_t)bytes) {
        CHECK(cudaFuncSetAttribute(big_smem, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
        cudaFuncAttributes fa;
        CHECK(cudaFuncGetAttributes(&fa, big_smem));
        std::printf("after cudaFuncSetAttribute: max dynamic shared %d bytes\n",
                    fa.maxDynamicSharedSizeBytes);
        big_smem<<<1, 256, bytes, s>>>(out, n);
        CHECK(cudaGetLastError());
        int h = 0;
        CHECK(cudaMemcpyAsync(&h, out, sizeof h, cudaMemcpyDeviceToHost, s));
        CHECK(cudaStreamSynchronize(s));
        std::printf("100 KiB kernel's sum: %s\n", h == 3 * (n * (n - 1) / 2) ? "right" : "WRONG");
    }
    CHECK(cudaFree(out));

    /* a launch the device cannot run: the error once, then gone */
    spin_ms<<<1, 2048, 0, s>>>(1);
    e = cudaGetLastError();
    cudaError_t again = cudaGetLastError();
    std::printf("2048 threads per block: %s, then %s\n", cudaGetErrorName(e),
                cudaGetErrorName(again));

    /* cudaStreamQuery while a ~20 ms kernel runs, then after it */
    CHECK(cudaStreamSynchronize(s));
    std::printf("idle stream query: %s\n", cudaGetErrorName(cudaStreamQuery(s)));
    int khz = 0;
    CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
    long long cycles = (long long)khz * 20; /* kHz: 20 ms */
    if (cycles <= 0)
        cycles = 40000000;
    spin_ms<<<1, 1, 0, s>>>(cycles);
    std::printf("busy stream query: %s\n", cudaGetErrorName(cudaStreamQuery(s)));
    CHECK(cudaStreamSynchronize(s));
    std::printf("after the sync: %s\n", cudaGetErrorName(cudaStreamQuery(s)));

    /* an L2 access policy window on the stream, read back */
    if (prop.persistingL2CacheMaxSize > 0) {
        int *win = nullptr;
        CHECK(cudaMalloc(&win, 1 << 20));
        cudaStreamAttrValue v;
        std::memset(&v, 0, sizeof v);
        v.accessPolicyWindow.base_ptr = win;
        v.accessPolicyWindow.num_bytes = 1 << 20;
        v.accessPolicyWindow.hitRatio = 0.5f;
        v.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
        v.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
        CHECK(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v));
        cudaStreamAttrValue back;
        std::memset(&back, 0, sizeof back);
        CHECK(cudaStreamGetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &back));
        std::printf("access policy window read back: %s, hit ratio %.2f\n",
                    back.accessPolicyWindow.base_ptr == (void *)win &&
                            back.accessPolicyWindow.num_bytes == (1u << 20)
                        ? "same window"
                        : "OTHER",
                    back.accessPolicyWindow.hitRatio);
        fill<<<64, 256, 0, s>>>(win, 1 << 18, 1);
        CHECK(cudaStreamSynchronize(s));
        v.accessPolicyWindow.num_bytes = 0; /* off again */
        CHECK(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v));
        CHECK(cudaCtxResetPersistingL2Cache());
        CHECK(cudaFree(win));
    }

    /* a graph instantiated to free its allocations on launch, uploaded first */
    cudaGraphExec_t ge;
    int *res = nullptr;
    CHECK(cudaMalloc(&res, 1024 * sizeof(int)));
    /* the allocation not freed in the graph: AutoFreeOnLaunch frees it */
    cudaGraph_t g = capture_alloc_fill(s, cudaStreamCaptureModeThreadLocal, res, 1024, 40, false);
    CHECK(cudaGraphInstantiateWithFlags(&ge, g, cudaGraphInstantiateFlagAutoFreeOnLaunch));
    CHECK(cudaGraphUpload(ge, s));
    int h[1024];
    bool ok = true;
    for (int r = 0; r < 2; r++) {
        CHECK(cudaGraphLaunch(ge, s));
        CHECK(cudaMemcpyAsync(h, res, sizeof h, cudaMemcpyDeviceToHost, s));
        CHECK(cudaStreamSynchronize(s));
        ok = ok && h[0] == 40 && h[1023] == 40 + 1023;
    }
    std::printf("auto-free graph, uploaded, launched twice: %s\n", ok ? "right" : "WRONG");
    CHECK(cudaGraphExecDestroy(ge));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaFree(res));

    /* the driver's own entry point through the runtime */
    void *fn = nullptr;
    cudaDriverEntryPointQueryResult q;
    CHECK(
        cudaGetDriverEntryPointByVersion("cuDriverGetVersion", &fn, 12000, cudaEnableDefault, &q));
    int v = 0;
    int rc = fn ? ((int (*)(int *))fn)(&v) : -1;
    int rv = 0;
    CHECK(cudaDriverGetVersion(&rv));
    std::printf("cuDriverGetVersion through cudaGetDriverEntryPointByVersion: %s (rc %d)\n",
                q == cudaDriverEntryPointSuccess && v == rv ? "the runtime's answer" : "OTHER", rc);
}

int main()
{
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device 0: compute capability %d.%d, %s SMs\n", prop.major, prop.minor,
                prop.multiProcessorCount > 0 ? "some" : "no");
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    stream_ordered(s);
    occupancy_and_cooperative(s, prop);
    launch_ex(s, prop);
    limits_and_priorities();
    smem_errors_queries(s, prop);
    CHECK(cudaStreamDestroy(s));
    size_t freeb = 0, total = 0;
    CHECK(cudaMemGetInfo(&freeb, &total));
    std::printf("memory: free <= total: %s\n", freeb <= total && total > 0 ? "yes" : "no");
    std::printf("done\n");
    return 0;
}
