/* Large pageable copies through the driver stub's streamed paths
 * (specs/cuda/host_copy.c): cuMemcpyHtoDAsync on a stream (9 MiB: two whole
 * 4 MiB chunks and a part; 20 MiB: more chunks than staging blocks), the
 * source overwritten as soon as the call returns (natively the driver has
 * staged it by then), then read back with cuMemcpyDtoH; and the synchronous
 * cuMemcpyHtoD. The staging blocks are pinned ahead by the allocation (a
 * chunk or more) or made by the copy. Natively and forwarded the output is
 * the same (cuda.driver.async_copy_ci.*, against the stand-in driver). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (unsigned char)(seed >> 16);
    }
}

/* one copy of n bytes up (async on s, or synchronous) and back */
static int round_trip(CUstream s, size_t n, int async, unsigned seed)
{
    unsigned char *h = malloc(n), *want = malloc(n), *back = malloc(n);
    CUdeviceptr d = 0;
    if (!h || !want || !back || cuMemAlloc(&d, n) != CUDA_SUCCESS) {
        printf("%zu MiB: no memory\n", n >> 20);
        return 1;
    }
    fill(want, n, seed);
    memcpy(h, want, n);
    memset(back, 0, n);
    CUresult up = async ? cuMemcpyHtoDAsync(d, h, n, s) : cuMemcpyHtoD(d, h, n);
    memset(h, 0xee, n); /* the call returned: the source is the program's again */
    CUresult sync = cuStreamSynchronize(s);
    CUresult down = cuMemcpyDtoH(back, d, n);
    printf("%s %2zu MiB: up %d, sync %d, down %d, %s\n",
           async ? "cuMemcpyHtoDAsync" : "cuMemcpyHtoD     ", n >> 20, (int)up, (int)sync,
           (int)down, memcmp(back, want, n) ? "DIFFERS" : "identical");
    cuMemFree(d);
    free(h);
    free(want);
    free(back);
    return up != CUDA_SUCCESS || down != CUDA_SUCCESS;
}

int main(void)
{
    CUdevice dev;
    CUcontext c;
    CUstream s;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&c, dev) ||
        cuCtxSetCurrent(c) || cuStreamCreate(&s, CU_STREAM_NON_BLOCKING)) {
        printf("setup failed\n");
        return 1;
    }
    int bad = 0;
    bad += round_trip(s, (size_t)9 << 20, 1, 1);
    bad += round_trip(s, (size_t)20 << 20, 1, 2);
    bad += round_trip(s, (size_t)9 << 20, 0, 3);
    bad += round_trip(s, (size_t)1 << 20, 1, 4); /* below a chunk: in the frame */
    return bad ? 1 : 0;
}
