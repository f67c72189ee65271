// The runtime and the driver on the same objects, in one program: a
// cudaMalloc pointer set by cuMemsetD32, a cudaStream_t synchronized with
// cuStreamSynchronize, a runtime kernel launch read back with cuMemcpyDtoH
// (issue 12 item 3). Forwarded, both of apigen's stubs share one session
// (api.family: cuda); tests/gpu/onesession.sh compares with a native run.
#include <cstdio>
#include <cuda.h>
#include <cuda_runtime.h>

__global__ void add_index(unsigned *p, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] += i;
}

#define RT(x) do { cudaError_t e_ = (x); printf("%-40s %d\n", #x, (int)e_); if (e_) return 1; } while (0)
#define DRV(x) do { CUresult e_ = (x); printf("%-40s %d\n", #x, (int)e_); if (e_) return 1; } while (0)

int main()
{
    const unsigned n = 1 << 20;
    unsigned *p = nullptr;
    cudaStream_t s = nullptr;
    setvbuf(stdout, nullptr, _IOLBF, 0);
    RT(cudaSetDevice(0));
    RT(cudaMalloc((void **)&p, n * sizeof *p));
    // the runtime's pointer, the driver's memset (no cuInit: the runtime did it)
    DRV(cuMemsetD32((CUdeviceptr)p, 7u, n));
    RT(cudaStreamCreate(&s));
    add_index<<<(n + 255) / 256, 256, 0, s>>>(p, n);
    RT(cudaGetLastError());
    // the runtime's stream, the driver's synchronize: the launch ran before
    DRV(cuStreamSynchronize((CUstream)s));
    static unsigned h[1 << 20];
    DRV(cuMemcpyDtoH(h, (CUdeviceptr)p, n * sizeof *h));
    unsigned long long sum = 0;
    unsigned bad = 0;
    for (unsigned i = 0; i < n; i++) {
        sum += h[i];
        bad += h[i] != 7u + i;
    }
    printf("sum %llu, %u wrong\n", sum, bad);
    // an async runtime launch, then a driver copy on the default stream (the
    // legacy stream orders it after the launch)
    add_index<<<(n + 255) / 256, 256>>>(p, n);
    DRV(cuMemcpyDtoH(h, (CUdeviceptr)p, sizeof *h * 4));
    printf("after a second launch: %u %u %u %u\n", h[0], h[1], h[2], h[3]);
    CUcontext ctx = nullptr;
    DRV(cuCtxGetCurrent(&ctx));
    printf("current context: %s\n", ctx ? "set (the runtime's primary context)" : "none");
    RT(cudaStreamDestroy(s));
    RT(cudaFree(p));
    return bad ? 2 : 0;
}
