/* multi_gpu_ci: two devices without a GPU (tests/cuda/fake_device.c +
 * fake_peer.c, FAKE_DEVICE_COUNT=2): per-device memory and streams,
 * cudaDeviceCanAccessPeer, cudaDeviceEnablePeerAccess / Disable with their
 * errors, cudaMemcpyPeer and cudaMemcpyPeerAsync both ways (at offsets,
 * larger than the stub's 16 MiB staging block), and the current device
 * unchanged by them. Run natively, through one server (both devices there)
 * and through two servers (one device each: peer copies staged through the
 * guest, no peer access: tests/cuda/CMakeLists.txt maps the native output's
 * peer-access lines to what two servers answer). With one device it says so
 * and prints what it can. Exit 1 when a check fails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

static int bad_;

static void check(const char *what, cudaError_t e, cudaError_t want)
{
    printf("%s: %s\n", what, cudaGetErrorName(e));
    if (e != want) {
        printf("  MISMATCH: want %s\n", cudaGetErrorName(want));
        bad_ = 1;
    }
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)((i * 2654435761u + seed) >> 9);
}

static void same(const char *what, const unsigned char *a, const unsigned char *b, size_t n)
{
    size_t i = 0;
    while (i < n && a[i] == b[i]) i++;
    printf("%s: %s\n", what, i == n ? "ok" : "MISMATCH");
    bad_ |= i != n;
}

int main(void)
{
    int n = 0;
    check("cudaGetDeviceCount", cudaGetDeviceCount(&n), cudaSuccess);
    printf("devices: %d\n", n);
    const size_t N = (20u << 20) + 4099; /* more than one staging block, not a multiple of it */
    unsigned char *h[2] = {malloc(N), malloc(N)}, *back = malloc(N);
    void *d[2] = {NULL, NULL};
    cudaStream_t s[2] = {NULL, NULL};
    int ndev = n < 2 ? n : 2;
    for (int i = 0; i < ndev; i++) {
        char what[64];
        snprintf(what, sizeof what, "device %d: cudaSetDevice", i);
        check(what, cudaSetDevice(i), cudaSuccess);
        check("  cudaStreamCreate", cudaStreamCreate(&s[i]), cudaSuccess);
        check("  cudaMalloc", cudaMalloc(&d[i], N), cudaSuccess);
        fill(h[i], N, 100u + (unsigned)i);
        check("  cudaMemcpyAsync", cudaMemcpyAsync(d[i], h[i], N, cudaMemcpyHostToDevice, s[i]), cudaSuccess);
        check("  cudaStreamSynchronize", cudaStreamSynchronize(s[i]), cudaSuccess);
    }
    if (ndev < 2) {
        printf("only %d device: no peer access or peer copies to check\n", ndev);
        if (ndev == 1) {
            check("cudaMemcpyPeer to the same device",
                  cudaMemcpyPeer(d[0], 0, (unsigned char *)d[0] + 1, 0, 1000), cudaSuccess);
            check("cudaStreamDestroy", cudaStreamDestroy(s[0]), cudaSuccess);
            check("cudaFree", cudaFree(d[0]), cudaSuccess);
        }
        printf("%s\n", bad_ ? "FAILED" : "all checks passed");
        free(h[0]);
        free(h[1]);
        free(back);
        return bad_;
    }
    int can01 = -1, can10 = -1;
    check("cudaDeviceCanAccessPeer 0->1", cudaDeviceCanAccessPeer(&can01, 0, 1), cudaSuccess);
    check("cudaDeviceCanAccessPeer 1->0", cudaDeviceCanAccessPeer(&can10, 1, 0), cudaSuccess);
    printf("peer access 0->1: %s\n", can01 ? "yes" : "no");
    printf("peer access 1->0: %s\n", can10 ? "yes" : "no");
    check("cudaSetDevice 1", cudaSetDevice(1), cudaSuccess);
    if (can10) {
        check("enable peer access 1->0", cudaDeviceEnablePeerAccess(0, 0), cudaSuccess);
        check("  enable again", cudaDeviceEnablePeerAccess(0, 0), cudaErrorPeerAccessAlreadyEnabled);
        cudaGetLastError();
        check("  disable", cudaDeviceDisablePeerAccess(0), cudaSuccess);
        check("  disable again", cudaDeviceDisablePeerAccess(0), cudaErrorPeerAccessNotEnabled);
        cudaGetLastError();
    } else {
        check("enable peer access 1->0", cudaDeviceEnablePeerAccess(0, 0), cudaErrorPeerAccessUnsupported);
        cudaGetLastError();
    }
    check("peer access to the current device itself", cudaDeviceEnablePeerAccess(1, 0), cudaErrorPeerAccessUnsupported);
    cudaGetLastError();
    /* peer copies both ways: device 1 gets device 0's bytes at an offset */
    check("cudaMemcpyPeer 0->1", cudaMemcpyPeer((unsigned char *)d[1] + 7, 1, d[0], 0, N - 7), cudaSuccess);
    memcpy(h[1] + 7, h[0], N - 7);
    check("cudaMemcpyPeerAsync 1->0",
          cudaMemcpyPeerAsync(d[0], 0, (unsigned char *)d[1] + 3, 1, N - 3, s[1]), cudaSuccess);
    memcpy(h[0], h[1] + 3, N - 3);
    check("cudaStreamSynchronize", cudaStreamSynchronize(s[1]), cudaSuccess);
    check("zero-byte cudaMemcpyPeer", cudaMemcpyPeer(d[1], 1, d[0], 0, 0), cudaSuccess);
    int cur = -1;
    check("cudaGetDevice", cudaGetDevice(&cur), cudaSuccess);
    printf("current device after the peer copies: %d\n", cur);
    bad_ |= cur != 1;
    for (int i = 0; i < 2; i++) {
        char what[64];
        check("cudaSetDevice", cudaSetDevice(i), cudaSuccess);
        memset(back, 0, N);
        check("cudaMemcpy", cudaMemcpy(back, d[i], N, cudaMemcpyDeviceToHost), cudaSuccess);
        snprintf(what, sizeof what, "device %d holds what the copies put there", i);
        same(what, back, h[i], N);
    }
    check("cudaMemcpyPeer from a device past the last", cudaMemcpyPeer(d[0], 0, d[1], n, 16),
          cudaErrorInvalidDevice);
    cudaGetLastError();
    for (int i = 0; i < 2; i++) {
        cudaSetDevice(i);
        check("cudaStreamDestroy", cudaStreamDestroy(s[i]), cudaSuccess);
        check("cudaFree", cudaFree(d[i]), cudaSuccess);
    }
    printf("%s\n", bad_ ? "FAILED" : "all checks passed");
    free(h[0]);
    free(h[1]);
    free(back);
    return bad_;
}
