// graph: CUDA graphs built both ways and checked on the host.
// 1. Stream capture: two kernels and a device-to-device copy captured into a
//    graph, instantiated with cudaGraphInstantiateWithParams, launched 5 times.
// 2. Explicit nodes: a memset node and a 3D memcpy node (cudaMemcpy3DParms
//    between pitched device pointers) with an edge; the graph is listed
//    (cudaGraphGetNodes / GetRootNodes / GetEdges / NodeGetDependencies, whose
//    counts are in/out parameters) and its executable updated in place
//    (cudaGraphExecUpdate) after the memset value changed.
// 3. A pending error survives a kernel's first launch (the forwarded
//    launch learns the kernel's parameter layout without touching it), and a
//    __device__ variable's address resolves cudaMemcpyDefault as device memory.
#include <cstring>
#include "common.h"

__global__ void scale(float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}

__global__ void add_one(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}

__global__ void fill(int *x, int v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = v;
}

__device__ int table[64];

int main()
{
    const int n = 4096;
    float *hx = new float[n], *hy = new float[n];
    for (int i = 0; i < n; i++) hx[i] = (float)(i % 17);
    float *dx, *dy;
    CHECK(cudaMalloc(&dx, n * sizeof(float)));
    CHECK(cudaMalloc(&dy, n * sizeof(float)));
    CHECK(cudaMemcpy(dx, hx, n * sizeof(float), cudaMemcpyHostToDevice));

    // ---- 1. capture ----------------------------------------------------------
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaGraph_t g;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    scale<<<(n + 255) / 256, 256, 0, s>>>(dx, 2.0f, n);
    add_one<<<(n + 255) / 256, 256, 0, s>>>(dx, n);
    static int host_runs = 0; // a captured host function runs at every launch of the graph
    CHECK(cudaLaunchHostFunc(s, [](void *p) { ++*static_cast<int *>(p); }, &host_runs));
    CHECK(cudaMemcpyAsync(dy, dx, n * sizeof(float), cudaMemcpyDeviceToDevice, s));
    CHECK(cudaStreamEndCapture(s, &g));
    size_t nnodes = 0;
    CHECK(cudaGraphGetNodes(g, nullptr, &nnodes));
    cudaGraphInstantiateParams ip;
    std::memset(&ip, 0, sizeof ip);
    ip.flags = cudaGraphInstantiateFlagUpload;
    ip.uploadStream = s;
    cudaGraphExec_t ge;
    CHECK(cudaGraphInstantiateWithParams(&ge, g, &ip));
    std::printf("captured graph: %zu nodes, instantiate result %d\n", nnodes, (int)ip.result_out);
    for (int r = 0; r < 5; r++) CHECK(cudaGraphLaunch(ge, s));
    CHECK(cudaStreamSynchronize(s));
    std::printf("captured host function ran %d times in 5 launches\n", host_runs);
    CHECK(cudaMemcpy(hy, dy, n * sizeof(float), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; i++) {
        float v = (float)(i % 17);
        for (int r = 0; r < 5; r++) v = v * 2.0f + 1.0f;
        if (hy[i] != v) bad++;
    }
    std::printf("5 launches: %d of %d values wrong; y[5] = %.0f\n", bad, n, hy[5]);

    // ---- 2. explicit nodes ---------------------------------------------------
    const size_t w = 256, h = 8;
    size_t pitch_a, pitch_b;
    unsigned char *a, *b;
    CHECK(cudaMallocPitch((void **)&a, &pitch_a, w, h));
    CHECK(cudaMallocPitch((void **)&b, &pitch_b, w, h));
    CHECK(cudaMemset2D(b, pitch_b, 0, w, h));
    cudaGraph_t g2;
    CHECK(cudaGraphCreate(&g2, 0));
    cudaMemsetParams mp;
    std::memset(&mp, 0, sizeof mp);
    mp.dst = a;
    mp.pitch = pitch_a;
    mp.value = 7;
    mp.elementSize = 1;
    mp.width = w;
    mp.height = h;
    cudaGraphNode_t nset, ncopy;
    CHECK(cudaGraphAddMemsetNode(&nset, g2, nullptr, 0, &mp));
    cudaMemcpy3DParms cp;
    std::memset(&cp, 0, sizeof cp);
    cp.srcPtr = make_cudaPitchedPtr(a, pitch_a, w, h);
    cp.dstPtr = make_cudaPitchedPtr(b, pitch_b, w, h);
    cp.extent = make_cudaExtent(w, h, 1);
    cp.kind = cudaMemcpyDeviceToDevice;
    CHECK(cudaGraphAddMemcpyNode(&ncopy, g2, &nset, 1, &cp));
    size_t count = 0, roots = 4, edges = 4, deps = 4;
    CHECK(cudaGraphGetNodes(g2, nullptr, &count));
    cudaGraphNode_t nodes[4] = {}, root[4] = {}, from[4] = {}, to[4] = {}, dep[4] = {};
    size_t cap = 4;
    CHECK(cudaGraphGetNodes(g2, nodes, &cap));
    CHECK(cudaGraphGetRootNodes(g2, root, &roots));
    CHECK(cudaGraphGetEdges(g2, from, to, nullptr, &edges));
    CHECK(cudaGraphNodeGetDependencies(ncopy, dep, nullptr, &deps));
    std::printf("explicit graph: %zu nodes (listed %zu), %zu root, %zu edge, copy depends on %zu\n",
                count, cap, roots, edges, deps);
    std::printf("root is the memset: %s; edge memset->copy: %s; dependency: %s\n",
                root[0] == nset ? "yes" : "no", from[0] == nset && to[0] == ncopy ? "yes" : "no",
                dep[0] == nset ? "yes" : "no");
    cudaMemcpy3DParms back;
    std::memset(&back, 0, sizeof back);
    CHECK(cudaGraphMemcpyNodeGetParams(ncopy, &back));
    std::printf("copy node: %zu x %zu bytes, same addresses: %s\n", back.extent.width,
                back.extent.height,
                back.srcPtr.ptr == a && back.dstPtr.ptr == b ? "yes" : "no");
    cudaGraphExec_t ge2;
    CHECK(cudaGraphInstantiate(&ge2, g2, 0));
    CHECK(cudaGraphLaunch(ge2, s));
    CHECK(cudaStreamSynchronize(s));
    unsigned char *hb = new unsigned char[w * h];
    CHECK(cudaMemcpy2D(hb, w, b, pitch_b, w, h, cudaMemcpyDeviceToHost));
    int sevens = 0;
    for (size_t i = 0; i < w * h; i++) sevens += hb[i] == 7;
    // the memset value changes: the executable is updated in place
    mp.value = 9;
    CHECK(cudaGraphMemsetNodeSetParams(nset, &mp));
    cudaGraphExecUpdateResultInfo info;
    std::memset(&info, 0, sizeof info);
    CHECK(cudaGraphExecUpdate(ge2, g2, &info));
    CHECK(cudaGraphLaunch(ge2, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemcpy2D(hb, w, b, pitch_b, w, h, cudaMemcpyDeviceToHost));
    int nines = 0;
    for (size_t i = 0; i < w * h; i++) nines += hb[i] == 9;
    std::printf("copied %d sevens, after the update %d nines of %zu (update result %d, error node %s)\n",
                sevens, nines, w * h, (int)info.result, info.errorNode ? "set" : "none");

    // ---- 3. last error and symbol addresses -----------------------------------
    void *huge = nullptr;
    cudaError_t e = cudaMalloc(&huge, (size_t)1 << 62);
    int *dt = nullptr;
    fill<<<1, 64>>>(dt, 0, 0);  // fill's first launch (n = 0: nothing to do)
    cudaError_t pending = cudaGetLastError();
    std::printf("huge cudaMalloc: %s; after fill's first launch the last error is %s\n",
                cudaGetErrorName(e), cudaGetErrorName(pending));
    CHECK(cudaGetSymbolAddress((void **)&dt, table));
    fill<<<1, 64>>>(dt, 42, 64);
    CHECK(cudaGetLastError());
    int ht[64];
    CHECK(cudaMemcpy(ht, dt + 0, sizeof ht, cudaMemcpyDefault));  // device -> host, from the address
    int ok = 0;
    for (int i = 0; i < 64; i++) ok += ht[i] == 42;
    std::printf("table through its address (cudaMemcpyDefault): %d of 64 are 42\n", ok);

    CHECK(cudaGraphExecDestroy(ge2));
    CHECK(cudaGraphDestroy(g2));
    CHECK(cudaGraphExecDestroy(ge));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(dx));
    CHECK(cudaFree(dy));
    delete[] hx;
    delete[] hy;
    delete[] hb;
    std::printf("graph: %s\n", bad == 0 && sevens == (int)(w * h) && nines == (int)(w * h) && ok == 64
                                   ? "ok" : "WRONG");
    return 0;
}
