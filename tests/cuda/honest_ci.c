/* honest_ci: what the cudart stub answers, forwarded to a server whose
 * device is tests/cuda/fake_device.c (CI has no GPU): pinned memory flags,
 * errors the guest decides, async calls it cannot vouch for (an error at
 * the call), async calls the server refuses after they were queued (the
 * next synchronous call's error and the thread's last error), and the last
 * error with CUDA's semantics. tests/cuda/honest_ci.sh compares the output
 * with honest_ci.expected; a stub that drops an async error, echoes a flag
 * it does not honour or loses a guest-decided error fails it. Names, never
 * pointers, are printed. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

static const char *nm(cudaError_t e)
{
    return cudaGetErrorName(e);
}

#define P(what, call) printf("%s: %s\n", what, nm(call))

static void last(const char *what)
{
    cudaError_t p = cudaPeekAtLastError();
    cudaError_t g = cudaGetLastError();
    cudaError_t g2 = cudaGetLastError();
    printf("  %s: peek %s, get %s, get again %s\n", what, nm(p), nm(g), nm(g2));
}

static void CUDART_CB cb(cudaStream_t s, cudaError_t e, void *u)
{
    (void)s, (void)e, (void)u;
}

int main(void)
{
    int n = 0, dev = -1;
    unsigned f = 99;
    void *p = NULL;
    static char buf[8192] __attribute__((aligned(4096)));
    P("cudaGetDeviceCount", cudaGetDeviceCount(&n));
    last("start");

    printf("-- pinned memory flags\n");
    P("cudaHostAlloc(flags 0x100)", cudaHostAlloc(&p, 4096, 0x100));
    last("after it");
    P("cudaHostAlloc(cudaHostAllocMapped)", cudaHostAlloc(&p, 4096, cudaHostAllocMapped));
    P("cudaHostAlloc(cudaHostAllocWriteCombined)", cudaHostAlloc(&p, 4096, cudaHostAllocWriteCombined));
    last("after them");
    P("cudaHostAlloc(cudaHostAllocPortable)", cudaHostAlloc(&p, 4096, cudaHostAllocPortable));
    cudaError_t e = cudaHostGetFlags(&f, p);
    printf("cudaHostGetFlags: %s, flags %u\n", nm(e), f);
    struct cudaPointerAttributes a;
    memset(&a, 0, sizeof a);
    e = cudaPointerGetAttributes(&a, p);
    printf("cudaPointerGetAttributes(pinned): %s, type %d, host pointer is it %d, device pointer %s\n",
           nm(e), (int)a.type, a.hostPointer == p, a.devicePointer ? "yes" : "none");
    P("cudaFreeHost", cudaFreeHost(p));
    P("cudaFreeHost(not pinned)", cudaFreeHost(&n));
    last("after it");
    P("cudaHostRegister(flags 0x100)", cudaHostRegister(buf, sizeof buf, 0x100));
    P("cudaHostRegister(cudaHostRegisterMapped)", cudaHostRegister(buf, sizeof buf, cudaHostRegisterMapped));
    P("cudaHostUnregister(mapped)", cudaHostUnregister(buf));
    P("cudaHostRegister(cudaHostRegisterIoMemory)", cudaHostRegister(buf, sizeof buf, cudaHostRegisterIoMemory));
    last("after them");
    P("cudaHostRegister(cudaHostRegisterPortable)", cudaHostRegister(buf, sizeof buf, cudaHostRegisterPortable));
    f = 99;
    e = cudaHostGetFlags(&f, buf);
    printf("cudaHostGetFlags: %s, flags %u\n", nm(e), f);
    P("cudaHostUnregister", cudaHostUnregister(buf));
    P("cudaHostUnregister(again)", cudaHostUnregister(buf));
    last("after it");
    P("cudaStreamAddCallback(flags 1)", cudaStreamAddCallback(0, cb, NULL, 1));
    last("after it");

    printf("-- async calls the guest cannot vouch for: the error at the call\n");
    P("cudaMemsetAsync(not a device pointer)", cudaMemsetAsync((void *)(uintptr_t)0x1000, 0, 4, 0));
    last("after it");
    cudaEvent_t forged = (cudaEvent_t)(uintptr_t)0x1234;
    P("cudaEventRecord(forged event)", cudaEventRecord(forged, 0));
    P("cudaStreamWaitEvent(forged event)", cudaStreamWaitEvent(0, forged, 0));
    last("after them");
    cudaEvent_t ev0 = NULL;
    P("cudaEventCreate", cudaEventCreate(&ev0));
    P("cudaStreamWaitEvent(flags 0x80)", cudaStreamWaitEvent(0, ev0, 0x80));
    P("cudaEventRecordWithFlags(flags 0x80)", cudaEventRecordWithFlags(ev0, 0, 0x80));
    last("after them");
    P("cudaEventDestroy", cudaEventDestroy(ev0));

    printf("-- async calls refused after they were queued: the next call and the last error\n");
    cudaEvent_t ev = NULL;
    P("cudaEventCreate", cudaEventCreate(&ev));
    P("cudaEventDestroy", cudaEventDestroy(ev));
    P("cudaEventRecord(destroyed event)", cudaEventRecord(ev, 0));
    /* a call that reaches the server (cudaGetDevice may be answered in the
     * guest once known, which reports no queued error: docs/spec.md) */
    P("next synchronous call", cudaDeviceSynchronize());
    P("the one after", cudaGetDevice(&dev));
    last("then");
    P("cudaStreamWaitEvent(destroyed event)", cudaStreamWaitEvent(0, ev, 0));
    P("peek", cudaPeekAtLastError());
    P("next synchronous call (peek reported it)", cudaGetDevice(&dev));
    last("then");
    void *d = NULL;
    P("cudaMalloc", cudaMalloc(&d, 256));
    P("cudaMemsetAsync(own memory)", cudaMemsetAsync(d, 1, 16, 0));
    P("cudaMemsetAsync(refused by the device)", cudaMemsetAsync(d, 0x7e, 16, 0));
    P("cudaDeviceSynchronize", cudaDeviceSynchronize());
    last("then");
    P("cudaEventRecord(destroyed event)", cudaEventRecord(ev, 0));
    P("cudaMemsetAsync(refused by the device)", cudaMemsetAsync(d, 0x7e, 16, 0));
    P("cudaDeviceSynchronize (the first of them)", cudaDeviceSynchronize());
    last("then (the newest of them)");
    printf("-- errors the server's own code decides (the runtime never sees them)\n");
    struct cudaPitchedPtr bogus = {(void *)(uintptr_t)0x1000, 64, 64, 1};
    struct cudaExtent ext = {16, 1, 1};
    P("cudaMemset3D(memory not the client's)", cudaMemset3D(bogus, 0, ext));
    last("then");
    P("cudaMemset3DAsync(memory not the client's)", cudaMemset3DAsync(bogus, 0, ext, 0));
    P("next synchronous call", cudaDeviceSynchronize());
    last("then");
    printf("-- what the device prints reaches stdout at the synchronization\n");
    fflush(stdout);
    P("cudaMemsetAsync(prints)", cudaMemsetAsync(d, 0x70, 16, 0));
    P("cudaMemsetAsync(prints again)", cudaMemsetAsync(d, 0x70, 32, 0));
    P("cudaMemsetAsync(asserts)", cudaMemsetAsync(d, 0x71, 8, 0)); /* a line on stderr */
    fflush(stdout);
    P("cudaDeviceSynchronize", cudaDeviceSynchronize());
    P("cudaFree", cudaFree(d));
    last("end");
    return 0;
}
