/* Driver calls whose non-const pointer parameters are inputs (specs/cuda.yaml:
 * the defaults had made them outputs of one element): the mode
 * cuThreadExchangeStreamCaptureMode swaps in, the RGBA border color
 * cuTexRefSetBorderColor sets (and the 4 floats cuTexRefGetBorderColor
 * gives back). tests/cuda/fake_diff.sh runs it natively over the stand-in
 * driver (fake_arrays.c) and through the driver stub; the outputs must be
 * the same. */
#include <stdio.h>

#include <cuda.h>

int main(void)
{
    CUdevice d;
    CUcontext c;
    CUtexref t;
    if (cuInit(0) || cuDeviceGet(&d, 0) || cuCtxCreate(&c, NULL, 0, d)) {
        printf("setup failed\n");
        return 1;
    }
    CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
    CUresult e = cuThreadExchangeStreamCaptureMode(&m);
    printf("exchange(relaxed): %d, was %d\n", (int)e, (int)m);
    m = CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
    e = cuThreadExchangeStreamCaptureMode(&m);
    printf("exchange(thread local): %d, was %d\n", (int)e, (int)m);
    m = (CUstreamCaptureMode)7;
    e = cuThreadExchangeStreamCaptureMode(&m);
    printf("exchange(7): %d, mode %d\n", (int)e, (int)m);
    m = CU_STREAM_CAPTURE_MODE_GLOBAL;
    e = cuThreadExchangeStreamCaptureMode(&m);
    printf("exchange(global): %d, was %d\n", (int)e, (int)m);
    if (cuTexRefCreate(&t)) {
        printf("cuTexRefCreate failed\n");
        return 1;
    }
    float set[4] = {0.25f, 0.5f, 0.75f, 1.0f}, got[4] = {-1, -1, -1, -1};
    printf("cuTexRefSetBorderColor: %d\n", (int)cuTexRefSetBorderColor(t, set));
    e = cuTexRefGetBorderColor(got, t);
    printf("cuTexRefGetBorderColor: %d: %g %g %g %g\n", (int)e, got[0], got[1], got[2], got[3]);
    printf("cuTexRefDestroy: %d\n", (int)cuTexRefDestroy(t));
    return 0;
}
