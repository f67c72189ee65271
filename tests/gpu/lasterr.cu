// tests/gpu/lasterr.cu: launches checked with cudaGetLastError, as PyTorch
// checks each launch (tests/gpu/lasterr.sh runs it natively and forwarded
// and compares stdout). Each bad launch's error must be the launch's own, at
// the launch, and the last error after it once; a sync call's error, then
// the last error once; a kernel's fault (sticky) reported by a later call.
// Lines "MARK ..." on stderr delimit the loops whose round trips the script
// counts (APIGEN_TRACE).
#include <cstdio>
#include <cuda_runtime.h>

__global__ void k_add(int *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] += 1;
}
__global__ void __launch_bounds__(256) k_bounded(int *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] += 2;
}
extern __shared__ int dyn_[];
__global__ void k_shared(int *p, int n)
{
    dyn_[threadIdx.x] = n;
    __syncthreads();
    if (threadIdx.x == 0) p[0] = dyn_[0];
}
__global__ void k_fault(int *p) { *(volatile int *)(p + (1ull << 40)) = 1; }

static const char *nm(cudaError_t e) { return cudaGetErrorName(e); }

static void show(const char *what, cudaError_t e)
{
    cudaError_t p = cudaPeekAtLastError();
    cudaError_t g = cudaGetLastError();
    cudaError_t g2 = cudaGetLastError();
    printf("%s: %s; peek %s, get %s, get again %s\n", what, nm(e), nm(p), nm(g), nm(g2));
}

static int *dev_;

static int loop(const char *name, int n)
{
    int bad = 0;
    fprintf(stderr, "MARK %s begin\n", name);
    for (int i = 0; i < n; i++) {
        k_add<<<4, 128>>>(dev_, 512);
        bad += cudaGetLastError() != cudaSuccess;
        k_bounded<<<2, 256>>>(dev_, 512);
        bad += cudaGetLastError() != cudaSuccess;
    }
    fprintf(stderr, "MARK %s end\n", name);
    printf("%s: %d iterations, %d failed\n", name, n, bad);
    return bad;
}

int main(int argc, char **argv)
{
    bool fault = argc > 1;
    printf("cudaMalloc: %s\n", nm(cudaMalloc(&dev_, 1 << 20)));
    show("start", cudaSuccess);
    int bad = loop("warm-up", 2) + loop("loop", 200);
    printf("-- launches the runtime refuses at the call\n");
    k_add<<<1, 2048>>>(dev_, 1);
    show("block 2048", cudaSuccess);
    k_add<<<dim3(1, 1, 1), dim3(1, 1, 128)>>>(dev_, 1);
    show("block z 128", cudaSuccess);
    k_add<<<dim3(1, 70000, 1), 32>>>(dev_, 1);
    show("grid y 70000", cudaSuccess);
    k_bounded<<<1, 512>>>(dev_, 1);
    show("k_bounded block 512 (launch bounds 256)", cudaSuccess);
    k_shared<<<1, 32, 100 * 1024>>>(dev_, 1);
    show("k_shared 100 KiB dynamic shared memory", cudaSuccess);
    show("cudaFuncSetAttribute(100 KiB)",
         cudaFuncSetAttribute(k_shared, cudaFuncAttributeMaxDynamicSharedMemorySize, 100 * 1024));
    k_shared<<<1, 32, 100 * 1024>>>(dev_, 1);
    show("k_shared 100 KiB again", cudaSuccess);
    show("cudaDeviceSynchronize", cudaDeviceSynchronize());
    printf("-- a sync call's error, then the last error once\n");
    show("cudaSetDevice(999)", cudaSetDevice(999));
    show("cudaMemcpy too many bytes", cudaMemcpy(dev_, dev_ + 1, 2 << 20, cudaMemcpyDeviceToDevice));
    bad += loop("warm-up again", 1) + loop("after the errors", 200);
    show("cudaDeviceSynchronize", cudaDeviceSynchronize());
    if (fault) { /* sticky: its error reaches a later call, then every call */
        printf("-- a kernel's fault\n");
        k_fault<<<1, 1>>>(dev_);
        cudaError_t e = cudaDeviceSynchronize();
        printf("cudaDeviceSynchronize after the fault: %s\n", nm(e));
        show("after it", cudaSuccess);
    }
    printf("cudaFree: %s\n", nm(cudaFree(dev_)));
    return bad ? 1 : 0;
}
