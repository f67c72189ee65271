/* family_order: NVML's device indexes and the CUDA runtime's device ordinals
 * name the same GPUs in the same order (issue 14: with several servers too,
 * server 0's first). For each index it prints NVML's UUID and the UUID of the
 * CUDA device of that ordinal (cudaDeviceProp.uuid, in NVML's format), and
 * whether they are one GPU. Natively against NVIDIA's libraries (on a
 * machine with several GPUs, with CUDA_DEVICE_ORDER=PCI_BUS_ID: CUDA's own
 * order is fastest first), forwarded through the NVML and runtime stubs to
 * one server or several (APIGEN_SERVER=url0,url1). Exit 0 when every index
 * names one GPU on both sides and the counts agree.
 *   family_order --mapped: after nvmlInit_v2 (NVML opens the session), mapped
 *   pinned memory from the runtime (cudaHostAllocMapped, its device pointer):
 *   the session's shared-memory arena must serve the runtime too
 *   (tests/nvml/family.sh; natively it succeeds with a GPU). */
#include <cuda_runtime_api.h>
#include <nvml.h>
#include <stdio.h>
#include <string.h>

static void uuid_text(const unsigned char *b, char *out, size_t cap)
{
    snprintf(out, cap,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
             b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
}

static int mapped(void)
{
    void *p = NULL;
    cudaError_t e = cudaHostAlloc(&p, 4096, cudaHostAllocMapped);
    printf("cudaHostAlloc(cudaHostAllocMapped): %s\n", cudaGetErrorName(e));
    if (e != cudaSuccess) return 1;
    struct cudaPointerAttributes a;
    memset(&a, 0, sizeof a);
    e = cudaPointerGetAttributes(&a, p);
    printf("cudaPointerGetAttributes: %s, device pointer %s\n", cudaGetErrorName(e),
           a.devicePointer ? "yes" : "none");
    e = cudaFreeHost(p);
    printf("cudaFreeHost: %s\n", cudaGetErrorName(e));
    return e != cudaSuccess;
}

int main(int argc, char **argv)
{
    nvmlReturn_t r = nvmlInit_v2();
    if (r != NVML_SUCCESS) {
        printf("nvmlInit_v2: %d (%s)\n", (int)r, nvmlErrorString(r));
        return 1;
    }
    if (argc > 1 && strcmp(argv[1], "--mapped") == 0) {
        int rc = mapped();
        nvmlShutdown();
        return rc;
    }
    unsigned n = 0;
    r = nvmlDeviceGetCount_v2(&n);
    printf("nvmlDeviceGetCount_v2: %d, %u GPUs\n", (int)r, n);
    int c = 0;
    cudaError_t e = cudaGetDeviceCount(&c);
    printf("cudaGetDeviceCount: %s, %d devices\n", cudaGetErrorName(e), c);
    int bad = r != NVML_SUCCESS || e != cudaSuccess || (unsigned)c != n;
    for (unsigned i = 0; i < n; i++) {
        nvmlDevice_t d;
        char nu[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = "", cu[64] = "";
        unsigned idx = ~0u;
        r = nvmlDeviceGetHandleByIndex_v2(i, &d);
        if (r == NVML_SUCCESS) r = nvmlDeviceGetUUID(d, nu, sizeof nu);
        if (r == NVML_SUCCESS) r = nvmlDeviceGetIndex(d, &idx);
        struct cudaDeviceProp p;
        memset(&p, 0, sizeof p);
        e = (int)i < c ? cudaGetDeviceProperties(&p, (int)i) : cudaErrorInvalidDevice;
        if (e == cudaSuccess) uuid_text((const unsigned char *)p.uuid.bytes, cu, sizeof cu);
        int same = r == NVML_SUCCESS && e == cudaSuccess && idx == i && strcmp(nu, cu) == 0;
        printf("index %u: nvml %s (index %u, %d), cuda %s (%s): %s\n", i, nu, idx, (int)r, cu,
               cudaGetErrorName(e), same ? "one GPU" : "NOT the same GPU");
        bad |= !same;
    }
    nvmlShutdown();
    printf("NVML and CUDA name the same GPUs in the same order: %s\n", bad ? "NO" : "yes");
    return bad;
}
