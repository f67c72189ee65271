/* cudaPointerGetAttributes, cudaHostGetDevicePointer and cudaHostGetFlags on
 * pinned memory (cudaHostAlloc, cudaMallocHost) allocated while another
 * device was current: at a block's start and inside it. tests/cuda/
 * fake_diff.sh runs it natively over the stand-in device (fake_device.c,
 * two devices: FAKE_DEVICE_COUNT=2) and through the runtime stub, whose
 * guest answers from its records or asks the server about its address of
 * arena bytes (specs/cudart/guest.c); the outputs must be the same but for
 * what the test's sed script writes into the native output over tcp://
 * (no arena: the device cannot reach the memory, no device pointer). The
 * device is the one current at the allocation (cuda_runtime_api.h), not the
 * server's when it registered the arena. tests/gpu/pinned-attrs.sh runs it
 * on a GPU (one device: both blocks on device 0). */
#define _DEFAULT_SOURCE /* mincore (resident.h) */
#include <stdio.h>
#include <string.h>

#include <cuda_runtime.h>

#include "resident.h"

static void show(const char *what, char *base, char *p)
{
    void *dev = NULL, *dev_base = NULL;
    cudaError_t ed = cudaHostGetDevicePointer(&dev, p, 0);
    (void)cudaHostGetDevicePointer(&dev_base, base, 0);
    /* with unified addressing the device reaches pinned memory at its host
     * address (forwarded: the arena mapped at one address in both processes) */
    printf("%s: cudaHostGetDevicePointer %d%s%s\n", what, (int)ed,
           ed ? "" : (char *)dev == (char *)dev_base + (p - base) ? ", the block's + offset" : ", WRONG",
           ed ? "" : (char *)dev == p ? ", its host address" : ", not its host address");
    unsigned flags = 77;
    cudaError_t e = cudaHostGetFlags(&flags, p);
    printf("%s: cudaHostGetFlags %d, flags %u\n", what, (int)e, flags);
    struct cudaPointerAttributes a;
    memset(&a, 0x5a, sizeof a);
    e = cudaPointerGetAttributes(&a, p);
    printf("%s: cudaPointerGetAttributes %d: type %d, device %d, host pointer %s, device pointer %s\n", what,
           (int)e, (int)a.type, a.device, a.hostPointer == p ? "itself" : "WRONG",
           !ed && a.devicePointer == dev ? "as cudaHostGetDevicePointer" : a.devicePointer ? "WRONG" : "NULL");
}

int main(void)
{
    int n = 0;
    char *a = NULL, *b = NULL;
    if (cudaGetDeviceCount(&n) || n < 1) {
        printf("no device\n");
        return 1;
    }
    /* the last device (1 in CI; a one-GPU machine: 0, as the others) */
    printf("cudaSetDevice(last): %d\n", (int)cudaSetDevice(n - 1));
    printf("cudaHostAlloc(10000, portable): %d\n", (int)cudaHostAlloc((void **)&a, 10000, cudaHostAllocPortable));
    printf("cudaSetDevice(0): %d\n", (int)cudaSetDevice(0));
    printf("cudaMallocHost(4096): %d\n", (int)cudaMallocHost((void **)&b, 4096));
    if (!a || !b) return 1;
    resident("cudaHostAlloc block", a, 10000);
    resident("cudaMallocHost block", b, 4096);
    char *c = NULL; /* larger than an arena segment (2 MiB): a segment of its own */
    printf("cudaMallocHost(3 MiB): %d\n", (int)cudaMallocHost((void **)&c, 3u << 20));
    if (!c) return 1;
    resident("cudaMallocHost block of 3 MiB", c, 3u << 20);
    printf("cudaFreeHost: %d\n", (int)cudaFreeHost(c));
    show("cudaHostAlloc block (last device)", a, a);
    show("inside it (+1234)", a, a + 1234);
    show("cudaMallocHost block (device 0)", b, b + 100);
    printf("cudaSetDevice(last): %d\n", (int)cudaSetDevice(n - 1));
    show("cudaMallocHost block, last device current", b, b);
    printf("cudaFreeHost: %d %d\n", (int)cudaFreeHost(a), (int)cudaFreeHost(b));
    return 0;
}
