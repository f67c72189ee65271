/* cuMemHostRegister(CU_MEMHOSTREGISTER_DEVICEMAP) memory used through
 * cuMemHostGetDevicePointer_v2 by "kernels" (sets and copies), natively
 * (the stand-in driver tests/cuda/driver/fake_arrays.c: the device pointer
 * is the host pointer) and through the driver stub (a device allocation
 * kept equal to the range: runtime/twin.c), outputs compared. Checked as
 * CUDA promises for memory host and device do not use at the same time:
 * the device sees what the host wrote before, the host sees what the device
 * wrote after a synchronization and keeps its own writes, unregistering
 * keeps the device's last writes. Exit 1 when a check fails. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

static int bad_;

static void check(const char *what, CUresult e, CUresult want)
{
    printf("%s: %d\n", what, (int)e);
    if (e != want) {
        printf("  MISMATCH: want %d\n", (int)want);
        bad_ = 1;
    }
}
static void expect(const char *what, int ok)
{
    printf("%s: %s\n", what, ok ? "ok" : "WRONG");
    bad_ |= !ok;
}
static int all(const unsigned char *p, size_t n, unsigned char v)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != v) return 0;
    return 1;
}

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    check("cuInit", cuInit(0), CUDA_SUCCESS);
    check("cuDeviceGet", cuDeviceGet(&dev, 0), CUDA_SUCCESS);
    check("cuCtxCreate", cuCtxCreate(&ctx, NULL, 0, dev), CUDA_SUCCESS);
    const size_t N = (5u << 20) + 99;
    unsigned char *raw = malloc(N + 8), *buf = raw + 3, *out = malloc(N);
    for (size_t i = 0; i < N; i++) buf[i] = (unsigned char)(i * 5);
    check("cuMemHostRegister(DEVICEMAP)", cuMemHostRegister(buf, N, CU_MEMHOSTREGISTER_DEVICEMAP), CUDA_SUCCESS);
    CUdeviceptr d = 0, d2 = 0, other = 0;
    check("cuMemHostGetDevicePointer", cuMemHostGetDevicePointer(&d, buf, 0), CUDA_SUCCESS);
    check("cuMemHostGetDevicePointer (inside)", cuMemHostGetDevicePointer(&d2, buf + 777, 0), CUDA_SUCCESS);
    expect("inner byte's device pointer", d2 == d + 777);
    check("cuMemAlloc", cuMemAlloc(&other, N), CUDA_SUCCESS);
    buf[100] = 0x42; /* after the device pointer was made */
    check("kernel reads", cuMemcpyDtoD(other, d, N), CUDA_SUCCESS);
    check("cuMemcpyDtoH", cuMemcpyDtoH(out, other, N), CUDA_SUCCESS);
    expect("the device saw the host's bytes", !memcmp(out, buf, N));
    check("kernel writes A", cuMemsetD8Async(d + 1000, 0x5a, 500, NULL), CUDA_SUCCESS);
    memset(buf + 3000, 0x33, 7); /* the host, elsewhere, meanwhile */
    check("kernel writes B", cuMemsetD8Async(d + (4u << 20), 0x6b, 9000, NULL), CUDA_SUCCESS);
    check("cuCtxSynchronize", cuCtxSynchronize(), CUDA_SUCCESS);
    expect("the host sees A and B", all(buf + 1000, 500, 0x5a) && all(buf + (4u << 20), 9000, 0x6b));
    expect("the host's own writes stay", all(buf + 3000, 7, 0x33) && buf[100] == 0x42);
    check("kernel writes C", cuMemsetD8Async(d + 20, 0x19, 30, NULL), CUDA_SUCCESS);
    check("cuStreamSynchronize", cuStreamSynchronize(NULL), CUDA_SUCCESS);
    check("cuMemHostUnregister", cuMemHostUnregister(buf), CUDA_SUCCESS);
    expect("C in the application's memory", all(buf + 20, 30, 0x19));
    check("cuMemFree", cuMemFree(other), CUDA_SUCCESS);
    check("cuCtxDestroy", cuCtxDestroy(ctx), CUDA_SUCCESS);
    free(raw);
    free(out);
    printf("%s\n", bad_ ? "FAILED" : "all checks passed");
    return bad_;
}
