/* A driver-API program of CUDA 11.x, built against 11.x headers, for the
 * driver stub generated from those headers (tests/gpu/driver11.sh): the
 * paths an 11.x stub and server take instead of 12.x's (docs/upgrading.md,
 * "The driver API on CUDA 11.x"): kernel parameter layouts the server asks
 * its driver for by name, launches without cuLaunchKernelEx, cooperative
 * launches without launch attributes (11.7), the v1 kernel-node calls,
 * capture information without edge data, cuGetProcAddress of 11.x. Every
 * value is printed, natively and forwarded the same.
 *   driver11 KERNELS.ptx        (tests/cuda/driver/kernels.cu as PTX) */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#define CHECK(call)                                                                              \
    do {                                                                                         \
        CUresult e_ = (call);                                                                    \
        if (e_ != CUDA_SUCCESS) {                                                                \
            printf("%s: error %d\n", #call, (int)e_);                                            \
            return 1;                                                                            \
        }                                                                                        \
    } while (0)

#define N 1000

struct pair {
    int k;
    double scale;
};

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

/* x[i] = i, y[i] = 1 */
static int reset(CUdeviceptr x, CUdeviceptr y)
{
    static float h[N];
    for (int i = 0; i < N; i++) h[i] = (float)i;
    CHECK(cuMemcpyHtoD(x, h, sizeof h));
    CHECK(cuMemsetD32(y, 0x3f800000u, N)); /* 1.0f */
    return 0;
}

static double sum_y(CUdeviceptr y)
{
    static float h[N];
    if (cuMemcpyDtoH(h, y, sizeof h) != CUDA_SUCCESS) return -1;
    double s = 0;
    for (int i = 0; i < N; i++) s += h[i];
    return s;
}

static long sum_out(CUdeviceptr out)
{
    static int h[N];
    if (cuMemcpyDtoH(h, out, sizeof h) != CUDA_SUCCESS) return -1;
    long s = 0;
    for (int i = 0; i < N; i++) s += h[i];
    return s;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: driver11 KERNELS.ptx\n");
        return 2;
    }
    char *ptx = read_all(argv[1]);
    if (!ptx) {
        fprintf(stderr, "driver11: cannot read %s\n", argv[1]);
        return 2;
    }
    int ver = 0;
    CHECK(cuInit(0));
    CHECK(cuDriverGetVersion(&ver));
    printf("driver version >= %d: %s\n", CUDA_VERSION, ver >= CUDA_VERSION ? "yes" : "no");
    CUdevice dev;
    CUcontext ctx;
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuCtxCreate(&ctx, 0, dev));
    CUmodule mod;
    CUfunction fill, axpy, bump;
    CHECK(cuModuleLoadData(&mod, ptx));
    CHECK(cuModuleGetFunction(&fill, mod, "fill"));
    CHECK(cuModuleGetFunction(&axpy, mod, "axpy"));
    CHECK(cuModuleGetFunction(&bump, mod, "bump"));
    int maxt = 0;
    CHECK(cuFuncGetAttribute(&maxt, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, axpy));
    printf("axpy max threads per block > 0: %s\n", maxt > 0 ? "yes" : "no");
    CUdeviceptr x, y, out, counter;
    size_t csize = 0;
    CHECK(cuMemAlloc(&x, N * sizeof(float)));
    CHECK(cuMemAlloc(&y, N * sizeof(float)));
    CHECK(cuMemAlloc(&out, N * sizeof(int)));
    CHECK(cuModuleGetGlobal(&counter, &csize, mod, "counter"));
    printf("counter: %zu bytes\n", csize);
    CUstream s;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    unsigned grid = (N + 255) / 256;

    /* kernelParams with a char and an aligned struct: the layout decides */
    char c = 7;
    struct pair p = {3, 0.5};
    int n = N;
    void *fargs[] = {&out, &c, &p, &n};
    CHECK(cuLaunchKernel(fill, grid, 1, 1, 256, 1, 1, 0, s, fargs, NULL));
    CHECK(cuStreamSynchronize(s));
    printf("fill (kernelParams): sum %ld\n", sum_out(out));

    /* the same arguments packed by the caller (`extra`) */
    struct {
        CUdeviceptr out;
        char c;
        struct pair p;
        int n;
    } packed;
    memset(&packed, 0, sizeof packed);
    packed.out = out, packed.c = 9, packed.p = p, packed.n = N;
    /* the parameters' bytes, not the struct's tail padding: natively a
     * larger buffer size is CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (H200, 580) */
    size_t psize = offsetof(__typeof__(packed), n) + sizeof packed.n;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &psize,
                     CU_LAUNCH_PARAM_END};
    CHECK(cuLaunchKernel(fill, grid, 1, 1, 256, 1, 1, 0, s, NULL, extra));
    CHECK(cuStreamSynchronize(s));
    printf("fill (extra): sum %ld\n", sum_out(out));

    /* cooperative (no launch attribute before 11.8) */
    float a = 2;
    void *aargs[] = {&a, &x, &y, &n};
    if (reset(x, y)) return 1;
    CHECK(cuLaunchCooperativeKernel(axpy, grid, 1, 1, 256, 1, 1, 0, s, aargs));
    CHECK(cuStreamSynchronize(s));
    printf("axpy cooperative (a=2): sum %.1f\n", sum_y(y));

    /* a kernel without parameters and a module global */
    CHECK(cuMemsetD32(counter, 0, 1));
    for (int i = 0; i < 3; i++) CHECK(cuLaunchKernel(bump, 2, 1, 1, 64, 1, 1, 0, s, NULL, NULL));
    CHECK(cuStreamSynchronize(s));
    int cnt = 0;
    CHECK(cuMemcpyDtoH(&cnt, counter, sizeof cnt));
    printf("bump x3: counter %d\n", cnt);

    /* kernel nodes: the v1 calls (func only) */
    CUgraph g;
    CUgraphNode node;
    CHECK(cuGraphCreate(&g, 0));
    CUDA_KERNEL_NODE_PARAMS kp;
    memset(&kp, 0, sizeof kp);
    kp.func = axpy;
    kp.gridDimX = grid, kp.gridDimY = 1, kp.gridDimZ = 1;
    kp.blockDimX = 256, kp.blockDimY = 1, kp.blockDimZ = 1;
    kp.kernelParams = aargs;
    CHECK(cuGraphAddKernelNode(&node, g, NULL, 0, &kp));
    CUDA_KERNEL_NODE_PARAMS got;
    memset(&got, 0, sizeof got);
    CHECK(cuGraphKernelNodeGetParams(node, &got));
    printf("node params: func is axpy %s, grid %u, block %u, a %.1f, n %d\n",
           got.func == axpy ? "yes" : "no", got.gridDimX, got.blockDimX,
           got.kernelParams ? *(float *)got.kernelParams[0] : -1.0f,
           got.kernelParams ? *(int *)got.kernelParams[3] : -1);
    a = 3;
    CHECK(cuGraphKernelNodeSetParams(node, &kp));
    CUgraphExec exec;
    CHECK(cuGraphInstantiateWithFlags(&exec, g, 0));
    if (reset(x, y)) return 1;
    CHECK(cuGraphLaunch(exec, s));
    CHECK(cuStreamSynchronize(s));
    printf("graph (a=3): sum %.1f\n", sum_y(y));
    a = 4;
    CHECK(cuGraphExecKernelNodeSetParams(exec, node, &kp));
    if (reset(x, y)) return 1;
    CHECK(cuGraphLaunch(exec, s));
    CHECK(cuStreamSynchronize(s));
    printf("graph exec set (a=4): sum %.1f\n", sum_y(y));
    CHECK(cuGraphExecDestroy(exec));
    CHECK(cuGraphDestroy(g));

    /* stream capture and its information (no edge data before 12.3) */
    if (reset(x, y)) return 1;
    a = 5;
    CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CHECK(cuLaunchKernel(axpy, grid, 1, 1, 256, 1, 1, 0, s, aargs, NULL));
    CUstreamCaptureStatus st;
    cuuint64_t id = 0;
    CUgraph cg = NULL;
    const CUgraphNode *deps = NULL;
    size_t ndeps = 0;
    CHECK(cuStreamGetCaptureInfo_v2(s, &st, &id, &cg, &deps, &ndeps));
    printf("capture: active %s, graph %s, %zu dependencies\n",
           st == CU_STREAM_CAPTURE_STATUS_ACTIVE ? "yes" : "no", cg ? "yes" : "no", ndeps);
    CHECK(cuStreamEndCapture(s, &g));
    CHECK(cuGraphInstantiateWithFlags(&exec, g, 0));
    CHECK(cuGraphLaunch(exec, s));
    CHECK(cuStreamSynchronize(s));
    printf("captured graph (a=5): sum %.1f\n", sum_y(y));
    CHECK(cuGraphExecDestroy(exec));
    CHECK(cuGraphDestroy(g));

    /* an entry point of this version by name */
    void *fn = NULL;
    CHECK(cuGetProcAddress("cuMemAlloc", &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT));
    CUdeviceptr z = 0;
    CHECK(((CUresult(*)(CUdeviceptr *, size_t))fn)(&z, 4096));
    printf("cuGetProcAddress(cuMemAlloc): allocated %s\n", z ? "yes" : "no");
    CHECK(cuMemFree(z));

    CHECK(cuStreamDestroy(s));
    CHECK(cuMemFree(x));
    CHECK(cuMemFree(y));
    CHECK(cuMemFree(out));
    CHECK(cuModuleUnload(mod));
    CHECK(cuCtxDestroy(ctx));
    free(ptx);
    printf("done\n");
    return 0;
}
