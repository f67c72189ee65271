/* Runtime calls whose non-const pointer parameters are inputs (specs/cudart.yaml:
 * the defaults had made them outputs of one element, so the server never saw
 * what the caller passed): cudaSetValidDevices' list of ordinals and the mode
 * cudaThreadExchangeStreamCaptureMode swaps in. tests/cuda/fake_diff.sh runs it
 * natively over the stand-in device (fake_device.c, two devices) and through
 * the runtime stub; the outputs must be the same. */
#include <stdio.h>

#include <cuda_runtime.h>

int main(void)
{
    int ok[2] = {1, 0}, bad[2] = {0, 5}, bad_first[1] = {3};
    printf("cudaSetValidDevices({1, 0}, 2): %d\n", (int)cudaSetValidDevices(ok, 2));
    printf("cudaSetValidDevices({0, 5}, 2): %d\n", (int)cudaSetValidDevices(bad, 2));
    printf("cudaGetLastError: %d\n", (int)cudaGetLastError());
    printf("cudaSetValidDevices({3}, 1): %d\n", (int)cudaSetValidDevices(bad_first, 1));
    printf("cudaGetLastError: %d\n", (int)cudaGetLastError());
    printf("cudaSetValidDevices(NULL, 0): %d\n", (int)cudaSetValidDevices(NULL, 0));
    enum cudaStreamCaptureMode m = cudaStreamCaptureModeRelaxed;
    cudaError_t e = cudaThreadExchangeStreamCaptureMode(&m);
    printf("exchange(relaxed): %d, was %d\n", (int)e, (int)m);
    m = cudaStreamCaptureModeThreadLocal;
    e = cudaThreadExchangeStreamCaptureMode(&m);
    printf("exchange(thread local): %d, was %d\n", (int)e, (int)m);
    m = (enum cudaStreamCaptureMode)7;
    e = cudaThreadExchangeStreamCaptureMode(&m);
    printf("exchange(7): %d, mode %d\n", (int)e, (int)m);
    printf("cudaGetLastError: %d\n", (int)cudaGetLastError());
    m = cudaStreamCaptureModeGlobal;
    e = cudaThreadExchangeStreamCaptureMode(&m);
    printf("exchange(global): %d, was %d\n", (int)e, (int)m);
    return 0;
}
