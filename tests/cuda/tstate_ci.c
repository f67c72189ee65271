/* The thread's current device and context, and the primary contexts'
 * state, across the runtime, the driver and a library (docs/spec.md
 * "Thread state kept in the guest", "Answers kept in the guest"): each
 * answer printed, so that tests/cuda/tstate_ci.sh compares this program
 * natively, forwarded, and forwarded with APIGEN_CACHE=0 (every question
 * asked). The stand-ins fake_tstate_*.c answer as NVIDIA's runtime,
 * driver and cuBLAS do. cudaMemGetInfo marks the end of each phase for
 * the script's count of round trips; the last phase is a PyTorch-like
 * loop (cudaGetDevice, cuDevicePrimaryCtxGetState, a library call,
 * cudaGetLastError, cuCtxGetCurrent), ITERS times; then a capture the
 * driver begins, which the runtime's capture query must ask about.
 *   tstate_ci [ITERS] */
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static CUcontext p0, p1, mine;

static const char *ctx_name(CUcontext c)
{
    if (!c) return "none";
    if (c == p0) return "primary 0";
    if (c == p1) return "primary 1";
    if (c == mine) return "created";
    return p0 && p1 ? "another" : "a context";
}

static void dev(const char *when)
{
    int d = -1;
    cudaError_t e = cudaGetDevice(&d);
    printf("%s: cudaGetDevice = %d (%d)\n", when, d, (int)e);
}

static void ctx(const char *when)
{
    CUcontext c = NULL;
    CUresult r = cuCtxGetCurrent(&c);
    printf("%s: cuCtxGetCurrent = %s (%d)\n", when, ctx_name(c), (int)r);
}

static void state(const char *when, int d)
{
    unsigned f = 99;
    int a = -1;
    CUresult r = cuDevicePrimaryCtxGetState(d, &f, &a);
    printf("%s: device %d's primary context: flags %u, active %d (%d)\n", when, d, f, a, (int)r);
}

/* cuCtxGetId, whose answer the guest keeps per context until one ends */
static void ctx_id(const char *when, CUcontext c, const char *name)
{
    unsigned long long id = 0;
    CUresult r = cuCtxGetId(c, &id);
    printf("%s: cuCtxGetId(%s) = %llu (%d)\n", when, name, r == CUDA_SUCCESS ? id : 0ull, (int)r);
}

static void mark(const char *phase)
{
    size_t fr = 0, tot = 0;
    cudaError_t e = cudaMemGetInfo(&fr, &tot);
    printf("---- end of %s (%d)\n", phase, (int)e);
}

/* a thread that has no context: a library call, or a runtime call, makes
 * the primary context current (the guest must not keep "none" past it) */
static void *lazy_library(void *arg)
{
    (void)arg;
    cublasHandle_t h = NULL;
    ctx("library thread, first");
    dev("library thread, first");
    cublasStatus_t s = cublasCreate(&h);
    printf("library thread: cublasCreate = %d\n", (int)s);
    ctx("library thread, after cublasCreate");
    if (h) cublasDestroy(h);
    return NULL;
}

static void *lazy_runtime(void *arg)
{
    (void)arg;
    ctx("runtime thread, first");
    cudaError_t e = cudaFree(NULL);
    printf("runtime thread: cudaFree(NULL) = %d\n", (int)e);
    ctx("runtime thread, after cudaFree");
    dev("runtime thread, after cudaFree");
    return NULL;
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 100;
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("cuInit = %d\n", (int)cuInit(0));

    /* 1. nothing current yet; the runtime's implicit initialization */
    ctx("start");
    dev("start");
    state("start", 0);
    state("start", 1);
    void *p = NULL;
    printf("cudaMalloc = %d\n", (int)cudaMalloc(&p, 16));
    ctx("after cudaMalloc");
    state("after cudaMalloc", 0);
    printf("retain 0 = %d, retain 1 = %d\n", (int)cuDevicePrimaryCtxRetain(&p0, 0),
           (int)cuDevicePrimaryCtxRetain(&p1, 1));
    ctx("after the retains");
    state("after the retains", 1);
    mark("implicit initialization");

    /* 2. the runtime selects, the driver switches, a library in between */
    printf("cudaSetDevice(1) = %d\n", (int)cudaSetDevice(1));
    dev("after cudaSetDevice(1)");
    ctx("after cudaSetDevice(1)");
    dev("asked again");
    printf("cuCtxSetCurrent(primary 0) = %d\n", (int)cuCtxSetCurrent(p0));
    dev("after cuCtxSetCurrent(primary 0)");
    ctx("after cuCtxSetCurrent(primary 0)");
    printf("cuCtxCreate(device 1) = %d\n", (int)cuCtxCreate(&mine, NULL, 0, 1));
    dev("after cuCtxCreate");
    ctx("after cuCtxCreate");
    ctx_id("after cuCtxCreate", mine, "mine");
    ctx_id("after cuCtxCreate", p0, "primary 0");
    ctx_id("asked again", mine, "mine");
    ctx_id("the current one", NULL, "NULL");
    CUcontext popped = NULL;
    printf("cuCtxPopCurrent = %d\n", (int)cuCtxPopCurrent(&popped));
    printf("popped: %s\n", ctx_name(popped));
    dev("after cuCtxPopCurrent");
    printf("cuCtxPushCurrent(primary 1) = %d\n", (int)cuCtxPushCurrent(p1));
    dev("after cuCtxPushCurrent(primary 1)");
    printf("cuCtxPopCurrent = %d\n", (int)cuCtxPopCurrent(NULL));
    dev("after cuCtxPopCurrent");
    CUcontext gone = mine;
    printf("cuCtxDestroy = %d\n", (int)cuCtxDestroy(mine));
    ctx_id("after cuCtxDestroy", gone, "the destroyed one");
    mine = NULL;
    dev("after cuCtxDestroy");
    ctx("after cuCtxDestroy");
    cublasHandle_t h = NULL;
    printf("cublasCreate = %d\n", (int)cublasCreate(&h));
    dev("after cublasCreate");
    ctx("after cublasCreate");
    printf("cudaSetDevice(1) = %d\n", (int)cudaSetDevice(1));
    cublasMath_t m = CUBLAS_DEFAULT_MATH;
    printf("cublasGetMathMode = %d\n", (int)cublasGetMathMode(h, &m));
    dev("after cudaSetDevice(1) and cuBLAS");
    ctx("after cudaSetDevice(1) and cuBLAS");
    printf("cudaSetDevice(0) = %d\n", (int)cudaSetDevice(0));
    ctx("after cudaSetDevice(0)");
    printf("cudaSetDevice(7) = %d\n", (int)cudaSetDevice(7));
    dev("after a failed cudaSetDevice");
    printf("cudaGetLastError = %d\n", (int)cudaGetLastError());
    mark("switches");

    /* 3. threads with no context */
    pthread_t t;
    pthread_create(&t, NULL, lazy_library, NULL);
    pthread_join(t, NULL);
    pthread_create(&t, NULL, lazy_runtime, NULL);
    pthread_join(t, NULL);
    mark("threads");

    /* 4. the primary contexts' state: what changes it */
    state("before", 0);
    state("again", 0);
    printf("cuDevicePrimaryCtxSetFlags(0, blocking sync) = %d\n",
           (int)cuDevicePrimaryCtxSetFlags(0, CU_CTX_SCHED_BLOCKING_SYNC));
    state("after cuDevicePrimaryCtxSetFlags", 0);
    printf("cudaSetDeviceFlags(spin) = %d\n", (int)cudaSetDeviceFlags(cudaDeviceScheduleSpin));
    state("after cudaSetDeviceFlags", 0);
    printf("cuCtxSetFlags(yield) = %d\n", (int)cuCtxSetFlags(CU_CTX_SCHED_YIELD));
    state("after cuCtxSetFlags", 0);
    state("before the release", 1);
    ctx_id("before the release", p1, "primary 1");
    printf("cuDevicePrimaryCtxRelease(1) = %d\n", (int)cuDevicePrimaryCtxRelease(1));
    state("after one release", 1);
    printf("cuDevicePrimaryCtxReset(1) = %d\n", (int)cuDevicePrimaryCtxReset(1));
    state("after cuDevicePrimaryCtxReset", 1);
    state("asked again", 1);
    ctx_id("after cuDevicePrimaryCtxReset (a new context)", p1, "primary 1");
    ctx_id("before cudaDeviceReset", p0, "primary 0");
    printf("cudaDeviceReset = %d\n", (int)cudaDeviceReset());
    state("after cudaDeviceReset", 0);
    ctx("after cudaDeviceReset");
    dev("after cudaDeviceReset");
    printf("cudaMalloc = %d\n", (int)cudaMalloc(&p, 16));
    state("after cudaMalloc", 0);
    mark("primary context state");

    /* 5. a training step's questions */
    int same = 1, d0 = -1;
    unsigned f0 = 0;
    int a0 = -1;
    CUcontext c0 = NULL;
    unsigned long long id0 = 0;
    for (int i = 0; i < iters; i++) {
        int d = -1, a = -1;
        unsigned f = 0;
        CUcontext c = NULL;
        unsigned long long id = 0;
        cublasMath_t mm = CUBLAS_DEFAULT_MATH;
        if (cudaGetDevice(&d) != cudaSuccess || cuDevicePrimaryCtxGetState(d, &f, &a) != CUDA_SUCCESS ||
            cublasGetMathMode(h, &mm) != CUBLAS_STATUS_SUCCESS || cudaGetLastError() != cudaSuccess ||
            cuCtxGetCurrent(&c) != CUDA_SUCCESS || cuCtxGetId(c, &id) != CUDA_SUCCESS)
            same = 0;
        if (i == 0) d0 = d, f0 = f, a0 = a, c0 = c, id0 = id;
        same &= d == d0 && f == f0 && a == a0 && c == c0 && id == id0;
    }
    printf("loop x%d: device %d, flags %u, active %d, context %s (id %llu), every answer the same: %s\n",
           iters, d0, f0, a0, ctx_name(c0), id0, same ? "yes" : "NO");
    mark("loop");

    /* 6. a capture the driver began: the runtime's capture query, answered
     * in the guest before, must ask (the stand-ins refuse a query of the
     * legacy stream while a stream captures, as CUDA does globally) */
    CUstream ds = NULL;
    CUgraph g = NULL;
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusInvalidated;
    printf("cudaGetLastError = %d\n", (int)cudaGetLastError());
    cudaError_t qe = cudaStreamIsCapturing(0, &cs);
    printf("cudaStreamIsCapturing(legacy) = %d, status %d\n", (int)qe, (int)cs);
    printf("cuStreamCreate = %d\n", (int)cuStreamCreate(&ds, CU_STREAM_NON_BLOCKING));
    printf("cuStreamBeginCapture = %d\n",
           (int)cuStreamBeginCapture(ds, CU_STREAM_CAPTURE_MODE_GLOBAL));
    cs = cudaStreamCaptureStatusInvalidated;
    printf("cudaStreamIsCapturing(legacy) while the driver captures = %d\n",
           (int)cudaStreamIsCapturing(0, &cs));
    CUresult ce = cuStreamEndCapture(ds, &g);
    printf("cuStreamEndCapture = %d, graph %s\n", (int)ce, g ? "made" : "none");
    printf("cudaGetLastError = %d\n", (int)cudaGetLastError());
    cublasDestroy(h);
    cudaFree(p);
    return same ? 0 : 1;
}
