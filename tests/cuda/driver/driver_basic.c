/* A CUDA driver API program: the same output natively (NVIDIA's
 * libcuda.so.1) and over apigen's driver stub. Without a driver (the
 * toolkit's stubs library as libcuda.so.1) both stop at cuInit with the
 * same error; on a GPU every step's result is printed and checked.
 *   driver_basic KERNELS.ptx KERNELS.fatbin */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda.h>

/* the number only: without a driver the toolkit's stubs library names no
 * error (natively), while the driver (and apigen's stub) does */
#define CHECK(call) if (check(#call, (call))) return 1
static int check(const char *what, CUresult e)
{
    char w[40];
    snprintf(w, sizeof w, "%.*s", (int)(strchr(what, '(') ? strchr(what, '(') - what : 39), what);
    printf("%-28s %d%s\n", w, (int)e, e == CUDA_SUCCESS ? " ok" : "");
    return e != CUDA_SUCCESS;
}

static int host_fn_ran;
static void host_fn(void *user) { host_fn_ran += *(int *)user; }
static void stream_cb(CUstream s, CUresult status, void *user)
{
    (void)s;
    if (status == CUDA_SUCCESS) host_fn_ran += *(int *)user;
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

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s KERNELS.ptx KERNELS.fatbin\n", argv[0]);
        return 2;
    }
    int ver = 0, count = 0;
    CHECK(cuInit(0));
    CHECK(cuDriverGetVersion(&ver));
    printf("driver version >= 13000: %d\n", ver >= 13000);
    CHECK(cuDeviceGetCount(&count));
    printf("devices: %d\n", count > 0);
    CUdevice dev;
    CHECK(cuDeviceGet(&dev, 0));
    char name[256];
    CHECK(cuDeviceGetName(name, sizeof name, dev));
    printf("name is non-empty: %d\n", name[0] != 0);
    int major = 0;
    CHECK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    printf("compute capability major >= 5: %d\n", major >= 5);

    /* contexts: the primary one, then one of our own pushed and popped */
    CUcontext primary, ctx, cur;
    CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
    CHECK(cuCtxSetCurrent(primary));
    CHECK(cuCtxGetCurrent(&cur));
    printf("current is primary: %d\n", cur == primary);
    CHECK(cuCtxCreate(&ctx, NULL, 0, dev));
    CHECK(cuCtxGetCurrent(&cur));
    printf("current is the new context: %d\n", cur == ctx);
    CHECK(cuCtxPopCurrent(&cur));
    printf("popped the new context: %d\n", cur == ctx);
    CHECK(cuCtxGetCurrent(&cur));
    printf("current is primary again: %d\n", cur == primary);
    CHECK(cuCtxDestroy(ctx));

    /* memory */
    enum { N = 1000 };
    float hx[N], hy[N], out[N];
    for (int i = 0; i < N; i++) hx[i] = (float)i, hy[i] = 1.0f;
    CUdeviceptr dx, dy;
    CHECK(cuMemAlloc(&dx, N * sizeof(float)));
    CHECK(cuMemAlloc(&dy, N * sizeof(float)));
    CHECK(cuMemcpyHtoD(dx, hx, sizeof hx));
    CHECK(cuMemcpyHtoD(dy, hy, sizeof hy));
    size_t freeb = 0, total = 0;
    CHECK(cuMemGetInfo(&freeb, &total));
    printf("free <= total: %d\n", freeb <= total && total > 0);

    /* a module from PTX text, a launch with kernelParams */
    char *ptx = read_all(argv[1]);
    if (!ptx) { printf("cannot read %s\n", argv[1]); return 1; }
    CUmodule mod;
    CUfunction axpy, fill, bump;
    CHECK(cuModuleLoadData(&mod, ptx));
    CHECK(cuModuleGetFunction(&axpy, mod, "axpy"));
    float a = 2.0f;
    int n = N;
    void *args[] = {&a, &dx, &dy, &n};
    CHECK(cuLaunchKernel(axpy, (N + 127) / 128, 1, 1, 128, 1, 1, 0, NULL, args, NULL));
    CHECK(cuCtxSynchronize());
    CHECK(cuMemcpyDtoH(out, dy, sizeof out));
    int bad = 0;
    for (int i = 0; i < N; i++) bad += out[i] != 2.0f * i + 1.0f;
    printf("axpy: %d wrong\n", bad);

    /* JIT linking: PTX from a file, the linked cubin (an ELF image) loaded */
    CUlinkState ls;
    void *cubin = NULL;
    size_t cubin_size = 0;
    CUmodule mod3;
    CUfunction axpy3;
    CHECK(cuLinkCreate(0, NULL, NULL, &ls));
    CHECK(cuLinkAddFile(ls, CU_JIT_INPUT_PTX, argv[1], 0, NULL, NULL));
    CHECK(cuLinkComplete(ls, &cubin, &cubin_size));
    printf("linked image is ELF: %d\n", cubin_size > 4 && memcmp(cubin, "\177ELF", 4) == 0);
    CHECK(cuModuleLoadData(&mod3, cubin));
    CHECK(cuModuleGetFunction(&axpy3, mod3, "axpy"));
    CHECK(cuLinkDestroy(ls));
    CHECK(cuModuleUnload(mod3));

    /* a module from a fat binary file; the `extra` form with a struct argument */
    CUmodule mod2;
    CHECK(cuModuleLoad(&mod2, argv[2]));
    CHECK(cuModuleGetFunction(&fill, mod2, "fill"));
    size_t off = 0, sz = 0, total_sz = 0;
    for (unsigned i = 0; cuFuncGetParamInfo(fill, i, &off, &sz) == CUDA_SUCCESS; i++)
        total_sz = off + sz;
    unsigned char buf[64];
    memset(buf, 0, sizeof buf);
    struct { int k; double scale; } p = {3, 0.5};
    char c = 7;
    CUdeviceptr di;
    CHECK(cuMemAlloc(&di, N * sizeof(int)));
    CHECK(cuFuncGetParamInfo(fill, 0, &off, &sz));
    memcpy(buf + off, &di, sz);
    CHECK(cuFuncGetParamInfo(fill, 1, &off, &sz));
    memcpy(buf + off, &c, sz);
    CHECK(cuFuncGetParamInfo(fill, 2, &off, &sz));
    memcpy(buf + off, &p, sz);
    CHECK(cuFuncGetParamInfo(fill, 3, &off, &sz));
    memcpy(buf + off, &n, sz);
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &total_sz,
                     CU_LAUNCH_PARAM_END};
    CHECK(cuLaunchKernel(fill, (N + 127) / 128, 1, 1, 128, 1, 1, 0, NULL, NULL, extra));
    int iout[N];
    CHECK(cuMemcpyDtoH(iout, di, sizeof iout));
    bad = 0;
    for (int i = 0; i < N; i++) bad += iout[i] != (int)(7 + 3 * i * 0.5);
    printf("fill: %d wrong\n", bad);

    /* a __device__ variable: cuModuleGetGlobal, then copies to and from it */
    CHECK(cuModuleGetFunction(&bump, mod2, "bump"));
    CUdeviceptr counter;
    size_t csize = 0;
    int zero = 0, got = 0;
    CHECK(cuModuleGetGlobal(&counter, &csize, mod2, "counter"));
    printf("counter size: %zu\n", csize);
    CHECK(cuMemcpyHtoD(counter, &zero, sizeof zero));
    CUstream s;
    CUevent ev;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK(cuEventCreate(&ev, 0));
    CHECK(cuLaunchKernel(bump, 4, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
    CHECK(cuEventRecord(ev, s));
    CHECK(cuEventSynchronize(ev));
    CHECK(cuMemcpyDtoH(&got, counter, sizeof got));
    printf("bump: %d\n", got);

    /* stream capture into a graph, the capture's info, a graph launch */
    CUgraph g;
    CUgraphExec ge;
    CUstreamCaptureStatus cs;
    const CUgraphNode *deps = NULL;
    size_t ndeps = 0;
    cuuint64_t cid = 0;
    CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CHECK(cuLaunchKernel(bump, 2, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
    CHECK(cuStreamGetCaptureInfo(s, &cs, &cid, NULL, &deps, NULL, &ndeps));
    printf("capturing: %d, dependencies: %zu (array %s)\n", cs == CU_STREAM_CAPTURE_STATUS_ACTIVE,
           ndeps, deps ? "set" : "NULL");
    CHECK(cuStreamEndCapture(s, &g));
    size_t nnodes = 0;
    CHECK(cuGraphGetNodes(g, NULL, &nnodes));
    printf("graph nodes: %zu\n", nnodes);
    CHECK(cuGraphInstantiate(&ge, g, 0));
    CHECK(cuGraphLaunch(ge, s));
    CHECK(cuGraphLaunch(ge, s));
    CHECK(cuStreamSynchronize(s));
    CHECK(cuMemcpyDtoH(&got, counter, sizeof got));
    printf("bump after two graph launches: %d\n", got);
    CHECK(cuGraphExecDestroy(ge));
    CHECK(cuGraphDestroy(g));

    /* a graph built by hand: a kernel node with arguments, read back and changed */
    CUgraph g2;
    CUgraphNode kn;
    CUgraphExec ge2;
    CHECK(cuGraphCreate(&g2, 0));
    float a2 = 3.0f;
    void *args2[] = {&a2, &dx, &dy, &n};
    CUDA_KERNEL_NODE_PARAMS kp;
    memset(&kp, 0, sizeof kp);
    kp.func = axpy;
    kp.gridDimX = (N + 127) / 128, kp.gridDimY = 1, kp.gridDimZ = 1;
    kp.blockDimX = 128, kp.blockDimY = 1, kp.blockDimZ = 1;
    kp.kernelParams = args2;
    CHECK(cuGraphAddKernelNode(&kn, g2, NULL, 0, &kp));
    CUDA_KERNEL_NODE_PARAMS kq;
    CHECK(cuGraphKernelNodeGetParams(kn, &kq));
    printf("kernel node: same function %d, grid %u, block %u, a = %g, n = %d\n", kq.func == axpy,
           kq.gridDimX, kq.blockDimX, *(float *)kq.kernelParams[0], *(int *)kq.kernelParams[3]);
    a2 = -1.0f; /* the node now computes y = -x + y (SetParams copies the arguments) */
    CHECK(cuGraphKernelNodeSetParams(kn, &kp));
    CHECK(cuMemcpyHtoD(dy, hy, sizeof hy));
    CHECK(cuGraphInstantiate(&ge2, g2, 0));
    CHECK(cuGraphLaunch(ge2, s));
    CHECK(cuStreamSynchronize(s));
    CHECK(cuMemcpyDtoH(out, dy, sizeof out));
    bad = 0;
    for (int i = 0; i < N; i++) bad += out[i] != -1.0f * i + 1.0f;
    printf("kernel node launch: %d wrong\n", bad);
    CHECK(cuGraphExecDestroy(ge2));
    CHECK(cuGraphDestroy(g2));

    /* host functions run in this process, in stream order */
    int one = 1, ten = 10;
    CHECK(cuLaunchHostFunc(s, host_fn, &one));
    CHECK(cuStreamAddCallback(s, stream_cb, &ten, 0));
    CHECK(cuStreamSynchronize(s));
    printf("host functions: %d\n", host_fn_ran);

    /* pinned host memory and an async copy, memset */
    int *pinned;
    CHECK(cuMemAllocHost((void **)&pinned, N * sizeof(int)));
    CHECK(cuMemsetD32Async(di, 42, N, s));
    CHECK(cuMemcpyDtoHAsync(pinned, di, N * sizeof(int), s));
    CHECK(cuStreamSynchronize(s));
    bad = 0;
    for (int i = 0; i < N; i++) bad += pinned[i] != 42;
    printf("memset: %d wrong\n", bad);
    CHECK(cuMemFreeHost(pinned));

    /* a pitched allocation and 2D copies from and to host rows of another pitch */
    enum { W = 37, H = 11, HP = 48 };
    unsigned char rows[H][HP], back[H][HP];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < HP; x++) rows[y][x] = (unsigned char)(y * 7 + x), back[y][x] = 0xee;
    CUdeviceptr dp;
    size_t dpitch = 0;
    CHECK(cuMemAllocPitch(&dp, &dpitch, W, H, 4));
    printf("pitch >= width: %d\n", dpitch >= W);
    CUDA_MEMCPY2D c2;
    memset(&c2, 0, sizeof c2);
    c2.srcMemoryType = CU_MEMORYTYPE_HOST;
    c2.srcHost = &rows[0][3];
    c2.srcPitch = HP;
    c2.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c2.dstDevice = dp;
    c2.dstPitch = dpitch;
    c2.WidthInBytes = W;
    c2.Height = H;
    CHECK(cuMemcpy2D(&c2));
    memset(&c2, 0, sizeof c2);
    c2.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    c2.srcDevice = dp;
    c2.srcPitch = dpitch;
    c2.dstMemoryType = CU_MEMORYTYPE_UNIFIED; /* a host address, unified addressing */
    c2.dstDevice = (CUdeviceptr)(uintptr_t)&back[1][0];
    c2.dstPitch = HP;
    c2.WidthInBytes = W;
    c2.Height = H - 1;
    CHECK(cuMemcpy2DAsync(&c2, s));
    CHECK(cuStreamSynchronize(s));
    bad = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < HP; x++) {
            int want = (y >= 1 && x < W) ? rows[y - 1][x + 3] : 0xee;
            bad += back[y][x] != want;
        }
    printf("2D copies: %d wrong\n", bad);
    CHECK(cuMemFree(dp));

    /* large pageable copies (the pipelined path over apigen), both ways */
    size_t big = (size_t)24 << 20;
    unsigned char *hb = malloc(big), *hb2 = malloc(big);
    if (!hb || !hb2) { printf("no memory\n"); return 1; }
    for (size_t i = 0; i < big; i++) hb[i] = (unsigned char)(i * 2654435761u >> 13);
    memset(hb2, 0, big);
    CUdeviceptr db;
    CHECK(cuMemAlloc(&db, big));
    /* 6 MiB three times, then 24 MiB: the server thread's staging blocks are
     * made as copies first need them (specs/cuda/host_copy.c) */
    int same = 1;
    for (int r = 0; r < 3; r++) {
        size_t mid = (size_t)6 << 20;
        CHECK(cuMemcpyHtoD(db, hb + r, mid));
        memset(hb2, 0, mid);
        CHECK(cuMemcpyDtoH(hb2, db, mid));
        same &= memcmp(hb + r, hb2, mid) == 0;
    }
    printf("6 MiB round trips identical: %d\n", same);
    CHECK(cuMemcpyHtoD(db, hb, big));
    CHECK(cuMemcpyDtoH(hb2, db, big));
    printf("24 MiB round trip identical: %d\n", memcmp(hb, hb2, big) == 0);
    memset(hb2, 0, big);
    CHECK(cuMemcpyDtoHAsync(hb2, db, big, s));
    CHECK(cuStreamSynchronize(s));
    printf("24 MiB async copy back identical: %d\n", memcmp(hb, hb2, big) == 0);
    CHECK(cuMemFree(db));
    free(hb);
    free(hb2);

    /* an error the driver reports: an out-of-range memcpy */
    CUresult e = cuMemcpyHtoD(dx, hx, 1 << 30);
    printf("oversized copy is an error: %d\n", e != CUDA_SUCCESS);

    CHECK(cuEventDestroy(ev));
    CHECK(cuStreamDestroy(s));
    CHECK(cuMemFree(dx));
    CHECK(cuMemFree(dy));
    CHECK(cuMemFree(di));
    CHECK(cuModuleUnload(mod));
    CHECK(cuModuleUnload(mod2));
    CHECK(cuDevicePrimaryCtxRelease(dev));
    free(ptx);
    printf("done\n");
    fflush(stdout);
    /* tests/gpu/driver.sh looks at a running guest's maps and descriptors */
    const char *hold = getenv("APIGEN_TEST_HOLD_MS");
    if (hold) {
        struct timespec ts = {atoi(hold) / 1000, (atoi(hold) % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    return 0;
}
