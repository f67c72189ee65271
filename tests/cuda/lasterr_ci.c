/* lasterr_ci: kernel launches checked with cudaGetLastError, as PyTorch
 * checks each launch, natively and forwarded (tests/cuda/lasterr_ci.sh, the
 * device tests/cuda/fake_launch_limits.c). What it prints must be the same both
 * ways: each launch's own error at the launch (a configuration beyond the
 * device's or the function's limits, too much dynamic shared memory until
 * cudaFuncSetAttribute raises it, a function nobody registered, a stream of
 * another device) and the last error after it, once. Lines "MARK ..." go to
 * stderr, between the stub's trace lines, so that the script counts the
 * round trips of the launch loops. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "hand_fatbin.h"

/* the program's addresses that stand for its kernels */
static void k_add(int *p, int n) { (void)p, (void)n; }
static void k_heavy(int *p, int n) { (void)p, (void)n; }
static void k_nobody(int *p, int n) { (void)p, (void)n; }

static const char *nm(cudaError_t e) { return cudaGetErrorName(e); }

static int *dev_;
static int n_ = 7;

static cudaError_t go(void (*k)(int *, int), dim3 g, dim3 b, size_t shmem, cudaStream_t s)
{
    void *args[2] = {(void *)&dev_, (void *)&n_};
    return cudaLaunchKernel((const void *)k, g, b, args, shmem, s);
}

static void show(const char *what, cudaError_t e)
{
    cudaError_t p = cudaPeekAtLastError();
    cudaError_t g = cudaGetLastError();
    cudaError_t g2 = cudaGetLastError();
    printf("%s: %s; peek %s, get %s, get again %s\n", what, nm(e), nm(p), nm(g), nm(g2));
}

static dim3 d3(unsigned x, unsigned y, unsigned z)
{
    dim3 d = {x, y, z};
    return d;
}

/* n launches (or zeroings, or copies within the device), each checked as
 * PyTorch checks it (C10_CUDA_KERNEL_LAUNCH_CHECK) */
enum work { LAUNCH, MEMSET, COPY };
static int loop_of(const char *name, int n, enum work w)
{
    int bad = 0;
    fprintf(stderr, "MARK %s begin\n", name);
    for (int i = 0; i < n; i++) {
        cudaError_t e = w == LAUNCH ? go(k_add, d3(4, 1, 1), d3(128, 1, 1), 0, 0)
                        : w == MEMSET ? cudaMemsetAsync(dev_, 0, 256, 0)
                                      : cudaMemcpyAsync(dev_ + 256, dev_, 256, cudaMemcpyDeviceToDevice, 0);
        cudaError_t g = cudaGetLastError();
        bad += e != cudaSuccess || g != cudaSuccess;
    }
    fprintf(stderr, "MARK %s end\n", name);
    printf("%s: %d calls, %d failed\n", name, n, bad);
    return bad;
}
static int loop(const char *name, int n) { return loop_of(name, n, LAUNCH); }

/* n rounds of cudaStreamIsCapturing on the legacy stream, the per-thread
 * stream and s (PyTorch asks once per training step); each must say
 * cudaStreamCaptureStatusNone with success */
static int queries(const char *name, int n, cudaStream_t s)
{
    int bad = 0;
    cudaStream_t streams[3] = {0, cudaStreamPerThread, s};
    fprintf(stderr, "MARK %s begin\n", name);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) {
            enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusInvalidated;
            bad += cudaStreamIsCapturing(streams[k], &cs) != cudaSuccess || cs != cudaStreamCaptureStatusNone;
        }
    fprintf(stderr, "MARK %s end\n", name);
    printf("%s: %d rounds of 3, %d not none\n", name, n, bad);
    return bad;
}

static const char *status_name(enum cudaStreamCaptureStatus cs)
{
    return cs == cudaStreamCaptureStatusNone     ? "none"
           : cs == cudaStreamCaptureStatusActive ? "active"
                                                 : "invalidated";
}

int main(void)
{
    void **h = hand_fatbin_begin();
    __cudaRegisterFunction(h, (const char *)k_add, (char *)"k_add", "k_add", -1, NULL, NULL, NULL,
                           NULL, NULL);
    __cudaRegisterFunction(h, (const char *)k_heavy, (char *)"k_heavy", "k_heavy", -1, NULL, NULL,
                           NULL, NULL, NULL);
    __cudaRegisterFatBinaryEnd(h);
    printf("cudaMalloc: %s\n", nm(cudaMalloc((void **)&dev_, 4096)));
    show("start", cudaSuccess);
    int bad = loop("warm-up", 2) + loop("loop", 100);
    bad += loop_of("memset loop", 100, MEMSET) + loop_of("copy loop", 100, COPY);

    printf("-- launches the runtime refuses at the call\n");
    show("block 2048 threads", go(k_add, d3(1, 1, 1), d3(2048, 1, 1), 0, 0));
    show("block z 65", go(k_add, d3(1, 1, 1), d3(1, 1, 65), 0, 0));
    show("grid y 70000", go(k_add, d3(1, 70000, 1), d3(32, 1, 1), 0, 0));
    show("grid x 0", go(k_add, d3(0, 1, 1), d3(32, 1, 1), 0, 0));
    show("k_heavy block 512 (its limit 256)", go(k_heavy, d3(1, 1, 1), d3(512, 1, 1), 0, 0));
    show("k_heavy block 256", go(k_heavy, d3(1, 1, 1), d3(256, 1, 1), 0, 0));
    show("shared memory 64 KiB", go(k_add, d3(1, 1, 1), d3(32, 1, 1), 64 * 1024, 0));
    show("cudaFuncSetAttribute(64 KiB)",
         cudaFuncSetAttribute((const void *)k_add, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              64 * 1024));
    show("shared memory 64 KiB again", go(k_add, d3(1, 1, 1), d3(32, 1, 1), 64 * 1024, 0));
    show("shared memory 65 KiB", go(k_add, d3(1, 1, 1), d3(32, 1, 1), 65 * 1024, 0));
    show("a function nobody registered", go(k_nobody, d3(1, 1, 1), d3(32, 1, 1), 0, 0));
    cudaStream_t s1 = NULL;
    printf("cudaSetDevice(1): %s\n", nm(cudaSetDevice(1)));
    printf("cudaStreamCreate on device 1: %s\n", nm(cudaStreamCreate(&s1)));
    show("a stream of device 1 on device 1", go(k_add, d3(1, 1, 1), d3(32, 1, 1), 0, s1));
    printf("cudaSetDevice(0): %s\n", nm(cudaSetDevice(0)));
    show("a stream of device 1 on device 0", go(k_add, d3(1, 1, 1), d3(32, 1, 1), 0, s1));
    show("cudaMemsetAsync past the allocation's end", cudaMemsetAsync(dev_ + 1000, 0, 64, 0));
    show("cudaMemsetAsync on a stream of device 1", cudaMemsetAsync(dev_, 0, 64, s1));
    show("cudaMemcpyAsync from host memory", cudaMemcpyAsync(dev_, &n_, sizeof n_, cudaMemcpyHostToDevice, 0));

    printf("-- a sync call's error, then the last error once\n");
    show("cudaMemset refused", cudaMemset(dev_, 0x7e, 16));
    show("cudaSetDevice(99)", cudaSetDevice(99));
    show("cudaMemset", cudaMemset(dev_, 1, 16));
    /* the failed cudaSetDevice left the current device unknown in the guest:
     * the first launch asks it */
    bad += loop("warm-up again", 1) + loop("after the errors", 100);

    printf("-- capture queries: none can be active while no capture is open\n");
    cudaStream_t s0 = NULL, s2 = NULL;
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusInvalidated;
    cudaGraph_t graph = NULL;
    printf("cudaStreamCreate: %s\n", nm(cudaStreamCreate(&s0)));
    printf("cudaStreamCreate (another): %s\n", nm(cudaStreamCreate(&s2)));
    show("a launch on it", go(k_add, d3(1, 1, 1), d3(32, 1, 1), 0, s0));
    printf("cudaStreamIsCapturing(NULL status): %s\n", nm(cudaStreamIsCapturing(0, NULL)));
    show("after it", cudaSuccess);
    bad += queries("capture queries", 100, s0);
    printf("cudaStreamBeginCapture: %s\n", nm(cudaStreamBeginCapture(s0, cudaStreamCaptureModeRelaxed)));
    cudaError_t e = cudaStreamIsCapturing(s0, &cs); /* before cs is read */
    printf("cudaStreamIsCapturing(capturing stream): %s, %s\n", nm(e), status_name(cs));
    bad += queries("capture queries while one is open", 10, s2); /* relaxed: the default streams may be asked */
    e = cudaStreamEndCapture(s0, &graph);
    printf("cudaStreamEndCapture: %s, graph %s\n", nm(e), graph ? "made" : "none");
    bad += queries("capture queries after a capture", 10, s0);
    printf("cudaFree: %s\n", nm(cudaFree(dev_)));
    return bad ? 1 : 0;
}
