// graph_nodes: graph nodes built from parameter structs, checked on the host.
// 0. Error paths that need no GPU (printed, not fatal): the calls answer as
//    the real runtime does before any device exists.
// 1. A kernel node (cudaGraphAddKernelNode) followed by a host node
//    (cudaGraphAddHostNode); the kernel node's parameters read back
//    (cudaGraphKernelNodeGetParams: the program's kernel address and its
//    argument values), changed (cudaGraphKernelNodeSetParams) and changed in
//    the executable graph (cudaGraphExecKernelNodeSetParams); the host node
//    runs once per launch, before the work that depends on it.
// 2. cudaGraphAddNode (kernel and empty nodes by type), a memory allocation
//    node with a memset node on its memory, a copy out and a free node.
// 3. Stream capture info (cudaStreamGetCaptureInfo: status, dependencies).
// 4. Cluster occupancy (cudaOccupancyMaxPotentialClusterSize and
//    cudaOccupancyMaxActiveClusters with a cluster dimension attribute).
// 5. cudaMemcpyBatchAsync (host to device and back in one batch).
#include <atomic>
#include <cstring>
#include "common.h"

__global__ void axpb(float *x, float a, float b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = a * x[i] + b;
}

__global__ void fill(int *x, int v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = v;
}

static std::atomic<int> host_runs{0};
static void CUDART_CB on_host(void *user)
{
    host_runs += *(int *)user;
}

static void CUDART_CB on_log(void *, cudaLogLevel, char *, size_t) {}

static int check(const float *h, int n, float want, const char *what)
{
    for (int i = 0; i < n; i++)
        if (h[i] != want) {
            std::printf("%s: x[%d] = %g, expected %g\n", what, i, h[i], want);
            return 1;
        }
    std::printf("%s: %d values = %g\n", what, n, want);
    return 0;
}

int main()
{
    // ---- 0. error paths --------------------------------------------------------------
    std::printf("no graph: %s\n", cudaGetErrorName(cudaGraphAddKernelNode(nullptr, nullptr, nullptr, 0, nullptr)));
    std::printf("no params: %s\n", cudaGetErrorName(cudaGraphHostNodeGetParams(nullptr, nullptr)));
    std::printf("empty batch: %s\n",
                cudaGetErrorName(cudaMemcpyBatchAsync(nullptr, nullptr, nullptr, 0, nullptr, nullptr, 0, 0)));
    // a library from PTX text (its size comes from the text itself)
    static const char ptx[] = ".version 8.0\n.target sm_50\n.address_size 64\n"
                              ".visible .entry nothing()\n{\n\tret;\n}\n";
    cudaLibrary_t lib = nullptr;
    cudaError_t le = cudaLibraryLoadData(&lib, ptx, nullptr, nullptr, 0, nullptr, nullptr, 0);
    unsigned int nk = 0;
    if (le == cudaSuccess) CHECK(cudaLibraryGetKernelCount(&nk, lib));
    std::printf("library from PTX: %s, %u kernel(s)\n", cudaGetErrorName(le), nk);
    if (le == cudaSuccess) CHECK(cudaLibraryUnload(lib));
    cudaLogsCallbackHandle lh = nullptr;
    cudaError_t lr = cudaLogsRegisterCallback(on_log, nullptr, &lh);
    std::printf("log callback: %s, unregistered: %s\n", cudaGetErrorName(lr),
                lr == cudaSuccess ? cudaGetErrorName(cudaLogsUnregisterCallback(lh)) : "-");

    const int n = 1024;
    float *h = new float[n];
    float *dx;
    CHECK(cudaMalloc(&dx, n * sizeof(float)));
    for (int i = 0; i < n; i++) h[i] = 1.0f;
    CHECK(cudaMemcpy(dx, h, n * sizeof(float), cudaMemcpyHostToDevice));
    int failures = 0;

    // ---- 1. kernel node + host node -----------------------------------------------------
    cudaGraph_t g;
    CHECK(cudaGraphCreate(&g, 0));
    float a = 2.0f, b = 1.0f;
    int nn = n;
    void *args[] = {&dx, &a, &b, &nn};
    cudaKernelNodeParams kp;
    std::memset(&kp, 0, sizeof kp);
    kp.func = (void *)axpb;
    kp.gridDim = dim3((n + 255) / 256);
    kp.blockDim = dim3(256);
    kp.kernelParams = args;
    cudaGraphNode_t kn, hn;
    CHECK(cudaGraphAddKernelNode(&kn, g, nullptr, 0, &kp));
    int one = 1;
    cudaHostNodeParams hp = {on_host, &one};
    CHECK(cudaGraphAddHostNode(&hn, g, &kn, 1, &hp));
    cudaKernelNodeParams back;
    CHECK(cudaGraphKernelNodeGetParams(kn, &back));
    std::printf("kernel node: func is axpb: %s, grid %u, block %u, a %g, b %g, n %d\n",
                back.func == (void *)axpb ? "yes" : "no", back.gridDim.x, back.blockDim.x,
                *(float *)back.kernelParams[1], *(float *)back.kernelParams[2],
                *(int *)back.kernelParams[3]);
    cudaHostNodeParams hback;
    CHECK(cudaGraphHostNodeGetParams(hn, &hback));
    std::printf("host node: fn is on_host: %s, user is &one: %s\n",
                hback.fn == on_host ? "yes" : "no", hback.userData == &one ? "yes" : "no");
    a = 3.0f; // x = 3x + 1
    CHECK(cudaGraphKernelNodeSetParams(kn, &kp));
    cudaGraphExec_t ge;
    CHECK(cudaGraphInstantiate(&ge, g, 0));
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaGraphLaunch(ge, s)); // 1 -> 4
    CHECK(cudaStreamSynchronize(s));
    a = 0.5f; b = 2.0f;            // x = x/2 + 2
    CHECK(cudaGraphExecKernelNodeSetParams(ge, kn, &kp));
    CHECK(cudaGraphLaunch(ge, s)); // 4 -> 4
    CHECK(cudaGraphLaunch(ge, s)); // 4 -> 4
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemcpy(h, dx, n * sizeof(float), cudaMemcpyDeviceToHost));
    failures += check(h, n, 4.0f, "kernel node after 3 launches");
    std::printf("host node ran %d times\n", host_runs.load());
    failures += host_runs.load() != 3;

    // ---- 2. generic nodes, memory allocation node ------------------------------------------
    cudaGraph_t g2;
    CHECK(cudaGraphCreate(&g2, 0));
    static unsigned char np_bytes[sizeof(cudaGraphNodeParams)]; // no default constructor in C++
    cudaGraphNodeParams &np = *reinterpret_cast<cudaGraphNodeParams *>(np_bytes);
    np.type = cudaGraphNodeTypeEmpty;
    cudaGraphNode_t en, an, mn, kn2, cn, fn;
    CHECK(cudaGraphAddNode(&en, g2, nullptr, nullptr, 0, &np));
    cudaMemAllocNodeParams ap;
    std::memset(&ap, 0, sizeof ap);
    ap.poolProps.allocType = cudaMemAllocationTypePinned;
    ap.poolProps.location.type = cudaMemLocationTypeDevice;
    ap.poolProps.location.id = 0;
    ap.bytesize = n * sizeof(int);
    CHECK(cudaGraphAddMemAllocNode(&an, g2, &en, 1, &ap));
    int *dtmp = (int *)ap.dptr;
    cudaMemsetParams mp;
    std::memset(&mp, 0, sizeof mp);
    mp.dst = dtmp;
    mp.value = 0;
    mp.elementSize = 4;
    mp.width = n;
    mp.height = 1;
    CHECK(cudaGraphAddMemsetNode(&mn, g2, &an, 1, &mp));
    int v = 7;
    void *fargs[] = {&dtmp, &v, &nn};
    std::memset(&np, 0, sizeof np);
    np.type = cudaGraphNodeTypeKernel;
    np.kernel.func = (void *)fill;
    np.kernel.gridDim = dim3((n + 255) / 256);
    np.kernel.blockDim = dim3(256);
    np.kernel.kernelParams = fargs;
    CHECK(cudaGraphAddNode(&kn2, g2, &mn, nullptr, 1, &np));
    int *dout;
    CHECK(cudaMalloc(&dout, n * sizeof(int)));
    CHECK(cudaGraphAddMemcpyNode1D(&cn, g2, &kn2, 1, dout, dtmp, n * sizeof(int), cudaMemcpyDeviceToDevice));
    CHECK(cudaGraphAddMemFreeNode(&fn, g2, &cn, 1, dtmp));
    cudaMemAllocNodeParams aback;
    CHECK(cudaGraphMemAllocNodeGetParams(an, &aback));
    std::printf("alloc node: %zu bytes, same address: %s\n", aback.bytesize,
                aback.dptr == ap.dptr ? "yes" : "no");
    cudaGraphExec_t ge2;
    CHECK(cudaGraphInstantiate(&ge2, g2, 0));
    CHECK(cudaGraphLaunch(ge2, s));
    CHECK(cudaStreamSynchronize(s));
    int *hi = new int[n];
    CHECK(cudaMemcpy(hi, dout, n * sizeof(int), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; i++) bad += hi[i] != 7;
    std::printf("alloc/memset/kernel/copy/free graph: %d of %d values wrong\n", bad, n);
    failures += bad != 0;

    // ---- 3. capture info ----------------------------------------------------------------
    cudaStream_t cs;
    CHECK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
    CHECK(cudaStreamBeginCapture(cs, cudaStreamCaptureModeGlobal));
    axpb<<<(n + 255) / 256, 256, 0, cs>>>(dx, 1.0f, 1.0f, n);
    cudaStreamCaptureStatus st;
    unsigned long long cid = 0;
    cudaGraph_t capg = nullptr;
    const cudaGraphNode_t *deps = nullptr;
    size_t ndeps = 0;
    CHECK(cudaStreamGetCaptureInfo(cs, &st, &cid, &capg, &deps, nullptr, &ndeps));
    cudaGraphNodeType dt = cudaGraphNodeTypeCount;
    if (ndeps == 1) CHECK(cudaGraphNodeGetType(deps[0], &dt));
    cudaGraph_t cg;
    CHECK(cudaStreamEndCapture(cs, &cg));
    std::printf("capture info: active %s, id nonzero %s, graph %s, %zu dependency, a kernel: %s\n",
                st == cudaStreamCaptureStatusActive ? "yes" : "no", cid ? "yes" : "no",
                capg == cg ? "same as captured" : "other", ndeps,
                dt == cudaGraphNodeTypeKernel ? "yes" : "no");
    failures += st != cudaStreamCaptureStatusActive || ndeps != 1 || dt != cudaGraphNodeTypeKernel;

    // ---- 4. cluster occupancy -------------------------------------------------------------
    cudaLaunchConfig_t cfg;
    std::memset(&cfg, 0, sizeof cfg);
    cfg.gridDim = dim3(64);
    cfg.blockDim = dim3(256);
    int csize = 0, nclusters = 0;
    cudaError_t oe = cudaOccupancyMaxPotentialClusterSize(&csize, (void *)axpb, &cfg);
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = 2;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    cudaError_t oe2 = cudaOccupancyMaxActiveClusters(&nclusters, (void *)axpb, &cfg);
    std::printf("cluster occupancy: max cluster size %d (%s), active 2-block clusters %d (%s)\n",
                csize, cudaGetErrorName(oe), nclusters, cudaGetErrorName(oe2));

    // ---- 5. batch copies --------------------------------------------------------------------
    for (int i = 0; i < n; i++) h[i] = (float)i;
    float *h2 = new float[n];
    std::memset(h2, 0, n * sizeof(float));
    float *dy;
    CHECK(cudaMalloc(&dy, n * sizeof(float)));
    void *dsts[] = {dy};
    const void *srcs[] = {h};
    size_t sizes[] = {n * sizeof(float)};
    cudaMemcpyAttributes ma;
    std::memset(&ma, 0, sizeof ma);
    ma.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    ma.srcLocHint.type = cudaMemLocationTypeHost;
    ma.dstLocHint.type = cudaMemLocationTypeDevice;
    size_t idx = 0;
    CHECK(cudaMemcpyBatchAsync(dsts, srcs, sizes, 1, &ma, &idx, 1, s));
    CHECK(cudaMemcpyAsync(h2, dy, n * sizeof(float), cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    bad = 0;
    for (int i = 0; i < n; i++) bad += h2[i] != (float)i;
    std::printf("batch copy: %d of %d values wrong\n", bad, n);
    failures += bad != 0;

    CHECK(cudaGraphExecDestroy(ge));
    CHECK(cudaGraphExecDestroy(ge2));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaGraphDestroy(g2));
    CHECK(cudaGraphDestroy(cg));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaStreamDestroy(cs));
    CHECK(cudaFree(dx));
    CHECK(cudaFree(dy));
    CHECK(cudaFree(dout));
    delete[] h;
    delete[] h2;
    delete[] hi;
    std::printf("%s\n", failures ? "FAILED" : "graph_nodes: all checks passed");
    return failures ? 1 : 0;
}
