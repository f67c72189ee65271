/* Peer access and peer copies of the stand-in device (tests/cuda/
 * fake_device.c's library, FAKE_DEVICE_COUNT devices; CI has no GPU): every
 * pair of distinct devices can access each other; access is enabled per
 * (current device, peer) with CUDA's errors (an invalid or the same device,
 * already enabled, not enabled); peer copies are plain copies, since every
 * device's memory is this process's. tests/cuda/multi_gpu_ci.c runs them
 * natively, through one server and through two. */
#include <cuda_runtime_api.h>
#include <string.h>

#define FAKE __attribute__((visibility("default")))
#define MAXDEV 8

int fake_ndev(void);
int fake_current_device(void);

static unsigned char enabled_[MAXDEV][MAXDEV]; /* [device][peer] */

static int valid(int d)
{
    return d >= 0 && d < fake_ndev();
}

FAKE cudaError_t cudaDeviceCanAccessPeer(int *can, int device, int peer)
{
    if (!can) return cudaErrorInvalidValue;
    if (!valid(device) || !valid(peer)) return cudaErrorInvalidDevice;
    *can = device != peer;
    return cudaSuccess;
}
FAKE cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned int flags)
{
    int d = fake_current_device();
    if (flags) return cudaErrorInvalidValue;
    if (!valid(peer)) return cudaErrorInvalidDevice;
    if (peer == d) return cudaErrorPeerAccessUnsupported; /* the real runtime's answer (H200, 2026-11-26) */
    if (enabled_[d][peer]) return cudaErrorPeerAccessAlreadyEnabled;
    enabled_[d][peer] = 1;
    return cudaSuccess;
}
FAKE cudaError_t cudaDeviceDisablePeerAccess(int peer)
{
    int d = fake_current_device();
    if (!valid(peer) || peer == d) return cudaErrorInvalidDevice;
    if (!enabled_[d][peer]) return cudaErrorPeerAccessNotEnabled;
    enabled_[d][peer] = 0;
    return cudaSuccess;
}
FAKE cudaError_t cudaMemcpyPeer(void *dst, int dstDevice, const void *src, int srcDevice, size_t count)
{
    if (!valid(dstDevice) || !valid(srcDevice)) return cudaErrorInvalidDevice;
    if (!count) return cudaSuccess;
    if (!dst || !src) return cudaErrorInvalidValue;
    memmove(dst, src, count);
    return cudaSuccess;
}
FAKE cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice,
                                     size_t count, cudaStream_t stream)
{
    (void)stream;
    return cudaMemcpyPeer(dst, dstDevice, src, srcDevice, count);
}
