/* Async sets recorded into a stream capture at addresses that are not
 * allocations, as cuDNN records its plans (placeholder addresses such as
 * 0x80, read back from the graph's nodes and never launched): the driver
 * takes them, so the forwarded program must get the same answers (the
 * server checks a set's address only when its stream is not capturing,
 * specs/cuda/host_capture.c); a set outside the capture still lands.
 * Natively over the stand-in driver (tests/cuda/driver/fake_driver.c: a
 * capture's sets are recorded, never run) and forwarded, the outputs are
 * compared (tests/cuda/fake_diff.sh). */
#include <stdint.h>
#include <stdio.h>

#include <cuda.h>

int main(void)
{
    CUdevice d;
    CUcontext c;
    CUstream s;
    CUgraph g = NULL;
    CUdeviceptr mem = 0;
    if (cuInit(0) || cuDeviceGet(&d, 0) || cuDevicePrimaryCtxRetain(&c, d) || cuCtxSetCurrent(c) ||
        cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) || cuMemAlloc(&mem, 4096)) {
        printf("setup failed\n");
        return 1;
    }
    printf("begin capture: %d\n", (int)cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    printf("set 64 KiB at 0x80: %d\n", (int)cuMemsetD8Async((CUdeviceptr)0x80, 0, 65536, s));
    printf("set 1 KiB at 0x2848a0: %d\n", (int)cuMemsetD32Async((CUdeviceptr)0x2848a0, 0xffffffffu, 256, s));
    printf("set the allocation: %d\n", (int)cuMemsetD8Async(mem, 7, 4096, s));
    CUresult e = cuStreamEndCapture(s, &g);
    printf("end capture: %d, a graph: %s\n", (int)e, g ? "yes" : "no");
    printf("set outside the capture: %d\n", (int)cuMemsetD8Async(mem, 9, 4096, s));
    printf("synchronize: %d\n", (int)cuStreamSynchronize(s));
    unsigned char back[4096];
    e = cuMemcpyDtoH(back, mem, sizeof back);
    int same = 1;
    for (size_t i = 0; i < sizeof back; i++) same &= back[i] == 9;
    printf("read back: %d, every byte 9: %s\n", (int)e, same ? "yes" : "no");
    return e != CUDA_SUCCESS || !same;
}
