/* managed_ci: managed memory through the cudart stub, forwarded to a server
 * whose device is tests/cuda/fake_device.c (CI has no GPU; its managed
 * memory starts filled with 0xCD, its "kernels" are cudaMemset and
 * cudaMemcpy into managed memory). Checks CUDA's coherence for devices
 * without concurrent managed access: what the host wrote reaches the device
 * before a device operation; what the device wrote reaches the host after a
 * synchronization (device, stream, event, a synchronous copy), and only
 * then; pages the host wrote since are not overwritten; a managed address
 * already taken in this process is refused (cudaErrorNotSupported), never
 * mapped elsewhere. tests/cuda/managed_ci.sh compares the output with
 * managed_ci.expected. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include <cuda_runtime_api.h>

#define P(what, call) printf("%s: %s\n", what, cudaGetErrorName(call))

static int all(const unsigned char *p, size_t n, unsigned char v)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != v) return 0;
    return 1;
}

int main(void)
{
    const size_t pg = 4096, n = 3 * pg + 100;
    /* the fake device hands out 0x5a0000000000 first: taken here */
    void *taken = mmap((void *)(uintptr_t)0x5a0000000000ull, pg, PROT_READ,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    printf("address occupied: %s\n", taken == MAP_FAILED ? "no" : "yes");
    unsigned char *m = NULL;
    P("cudaMallocManaged(taken address)", cudaMallocManaged((void **)&m, n, cudaMemAttachGlobal));
    printf("  pointer: %s\n", m ? "set" : "NULL");
    (void)cudaGetLastError();

    P("cudaMallocManaged", cudaMallocManaged((void **)&m, n, cudaMemAttachGlobal));
    if (!m) return 1;
    struct cudaPointerAttributes a;
    memset(&a, 0, sizeof a);
    P("cudaPointerGetAttributes", cudaPointerGetAttributes(&a, m));
    /* host writes, then a device write of part of page 1 */
    for (size_t i = 0; i < n; i++) m[i] = (unsigned char)(i % 251);
    P("cudaMemset(page 1, 10 bytes)", cudaMemset(m + pg + 8, 7, 10));
    P("cudaDeviceSynchronize", cudaDeviceSynchronize());
    int ok = all(m + pg + 8, 10, 7);
    for (size_t i = 0; i < n; i++)
        if ((i < pg + 8 || i >= pg + 18) && m[i] != (unsigned char)(i % 251)) ok = 0;
    printf("host sees the device's bytes and keeps its own: %s\n", ok ? "yes" : "NO");

    /* the device reads what the host wrote since (a copy to device memory) */
    unsigned char *d = NULL, back[64];
    P("cudaMalloc", cudaMalloc((void **)&d, 64));
    m[2 * pg] = 0x42;
    P("cudaMemcpy(device <- managed)", cudaMemcpy(d, m + 2 * pg, 64, cudaMemcpyDefault));
    P("cudaMemcpy(host <- device)", cudaMemcpy(back, d, 64, cudaMemcpyDeviceToHost));
    printf("the device read the host's write: %s\n",
           back[0] == 0x42 && back[1] == (unsigned char)((2 * pg + 1) % 251) ? "yes" : "NO");

    /* an async device write is seen at the stream's synchronization */
    cudaStream_t s = 0;
    P("cudaMemsetAsync(all)", cudaMemsetAsync(m, 0x11, n, s));
    P("cudaStreamSynchronize", cudaStreamSynchronize(s));
    printf("after the stream synchronized: %s\n", all(m, n, 0x11) ? "all 0x11" : "NOT all 0x11");

    /* a loop: host writes, a device write, a synchronization, host reads */
    int loop_ok = 1;
    cudaEvent_t ev;
    P("cudaEventCreate", cudaEventCreate(&ev));
    for (int it = 0; it < 5; it++) {
        m[it] = (unsigned char)(100 + it);            /* host: page 0 */
        (void)cudaMemsetAsync(m + pg, it, pg, 0);     /* device: page 1 */
        (void)cudaEventRecord(ev, 0);
        if (cudaEventSynchronize(ev) != cudaSuccess) loop_ok = 0;
        if (m[it] != 100 + it || !all(m + pg, pg, (unsigned char)it)) loop_ok = 0;
    }
    printf("5 rounds of host write, device write, event sync: %s\n", loop_ok ? "ok" : "WRONG");

    /* the device copies into managed memory; the synchronous copy is a sync */
    unsigned char src[32];
    memset(src, 0x5c, sizeof src);
    P("cudaMemcpy(device <- host) into managed", cudaMemcpy(d, src, 32, cudaMemcpyHostToDevice));
    P("cudaMemcpy(managed <- device)", cudaMemcpy(m + 3 * pg, d, 32, cudaMemcpyDeviceToDevice));
    printf("host sees the copy: %s\n", all(m + 3 * pg, 32, 0x5c) ? "yes" : "NO");

    /* host writes are pushed only once: a second device read sees them */
    m[0] = 0x99;
    P("cudaMemcpy(device <- managed) again", cudaMemcpy(d, m, 1, cudaMemcpyDefault));
    P("cudaMemcpy(host <- device) again", cudaMemcpy(back, d, 1, cudaMemcpyDeviceToHost));
    printf("second read: %s\n", back[0] == 0x99 ? "yes" : "NO");

    /* small allocations share a page (the runtime packs them): host writes
     * to both reach the device, a device write to one leaves the host's
     * bytes of the other; nothing moves past either's end (CUDA refuses
     * such a copy: the mirror's page-sized copies would fail) */
    unsigned char *s1 = NULL, *s2 = NULL;
    P("cudaMallocManaged(24 bytes)", cudaMallocManaged((void **)&s1, 24, cudaMemAttachGlobal));
    P("cudaMallocManaged(100 bytes)", cudaMallocManaged((void **)&s2, 100, cudaMemAttachGlobal));
    if (!s1 || !s2) return 1;
    printf("in one page: %s\n", (uintptr_t)s1 / pg == (uintptr_t)s2 / pg ? "yes" : "no");
    memset(s1, 0x21, 24);
    memset(s2, 0x22, 100);
    P("cudaMemcpy(device <- small managed)", cudaMemcpy(d, s1, 24, cudaMemcpyDefault));
    P("cudaMemsetAsync(second small)", cudaMemsetAsync(s2, 0x33, 100, 0));
    P("cudaDeviceSynchronize", cudaDeviceSynchronize());
    P("cudaMemcpy(host <- device) small", cudaMemcpy(back, d, 24, cudaMemcpyDeviceToHost));
    printf("small allocations: device read %s, host sees %s, first kept %s\n",
           all(back, 24, 0x21) ? "the host's bytes" : "OTHER bytes",
           all(s2, 100, 0x33) ? "the device's bytes" : "OTHER bytes", all(s1, 24, 0x21) ? "yes" : "NO");
    P("cudaFree(small 1)", cudaFree(s1));
    s2[0] = 0x44; /* the page stays mirrored for the other one */
    P("cudaMemcpy(device <- small managed) after a free", cudaMemcpy(d, s2, 1, cudaMemcpyDefault));
    P("cudaMemcpy(host <- device) after a free", cudaMemcpy(back, d, 1, cudaMemcpyDeviceToHost));
    printf("after freeing the first: %s\n", back[0] == 0x44 ? "yes" : "NO");
    P("cudaFree(small 2)", cudaFree(s2));

    P("cudaEventDestroy", cudaEventDestroy(ev));
    P("cudaFree(managed)", cudaFree(m));
    P("cudaFree(device)", cudaFree(d));
    return 0;
}
