// A kernel given the host address of pinned or registered memory, as code
// written for unified addressing passes it (Thrust's pinned vectors,
// zero-copy kernels without cudaHostGetDevicePointer): natively the device
// reaches that memory at its host address. Forwarded over unix:// and
// shm:// the guest's arena is mapped at one address in both processes
// (runtime/arena_guest.c); memory outside it (every pinned block over
// tcp://, registered memory everywhere) is reached through a twin device
// allocation whose address the launch is given instead (runtime/twin.c,
// apigen_twin_translate), a pointer inside a struct parameter too. The
// stand-in device (tests/cuda/fake_pattern_kernels.h: k1, kh on the
// server's CPU) writes the bytes; tests/cuda/trips_ci.sh compares the
// output with native. A block allocated mapped lies at its twin's address
// over tcp:// (runtime/twin_place.c): its device pointer is its host
// address there too, and a kernel reaches it through a pointer the program
// kept in device memory (kd), where no launch's parameters show it.
#include <cuda_runtime.h>

#include <stdio.h>

__global__ void k1(int *p)
{
    if (threadIdx.x == 0)
        p[0] += 1;
}

struct holder {
    int add;
    int *p;
};

__global__ void kh(holder h)
{
    if (threadIdx.x == 0)
        h.p[0] += h.add;
}

__global__ void kd(int **slot)
{
    if (threadIdx.x == 0)
        (*slot)[0] += 1;
}

static void show(const char *what, cudaError_t e, const int *p, int want)
{
    printf("%s: %s, value %d (%s)\n", what, cudaGetErrorName(e), e == cudaSuccess ? *p : -1,
           e == cudaSuccess && *p == want ? "right" : "WRONG");
}

// copies and sets that name the block h (int elements 2000-4007)
static void copies_and_sets(int *h)
{
    cudaError_t e;
    // device copies that name the pinned block as a device side, as
    // Thrust copies between a pinned host vector and device memory
    int *dev = nullptr;
    e = cudaMalloc(&dev, 64);
    if (e == cudaSuccess) {
        for (int i = 0; i < 16; i++) h[2000 + i] = 100 + i;
        e = cudaMemcpy(dev, h + 2000, 64, cudaMemcpyDeviceToDevice);
        if (e == cudaSuccess) e = cudaMemcpyAsync(h + 3000, dev, 64, cudaMemcpyDeviceToDevice, 0);
        if (e == cudaSuccess) e = cudaStreamSynchronize(0);
        show("device-to-device copies through the block", e, h + 3015, 115);
        if (e == cudaSuccess) e = cudaMemcpy(h + 3100, dev, 64, cudaMemcpyDeviceToHost);
        if (e == cudaSuccess) e = cudaMemcpy(dev, h + 3100, 64, cudaMemcpyHostToDevice);
        show("and the explicit kinds", e, h + 3115, 115);
        cudaFree(dev);
    }
    // sets that name the pinned block (XLA's autotuner clears pinned
    // words with an async set): an async one seen after the stream's
    // synchronization, a synchronous one at its return
    e = cudaMemsetAsync(h + 4000, 0x11, 16, 0);
    show("an async set of the block", e == cudaSuccess ? cudaStreamSynchronize(0) : e, h + 4003,
         0x11111111);
    show("a synchronous set of the block", cudaMemset(h + 4004, 0x22, 16), h + 4007, 0x22222222);
}

static int registered[4096] __attribute__((aligned(4096)));

int main()
{
    int *h = nullptr, *m = nullptr;
    cudaError_t e = cudaMallocHost(&h, 1 << 16);
    if (e == cudaSuccess) {
        h[0] = 41;
        h[1000] = 7;
        k1<<<1, 32>>>(h);
        e = cudaDeviceSynchronize();
        show("cudaMallocHost block", e, h, 42);
        k1<<<3, 32>>>(h + 1000); // inside the block: each block adds one
        e = cudaDeviceSynchronize();
        show("inside it", e, h + 1000, 10);
        h[1000] = 20; // the host writes again between launches
        kh<<<2, 32>>>(holder{5, h + 1000});
        e = cudaDeviceSynchronize();
        show("in a struct parameter, after a host write", e, h + 1000, 30);
        copies_and_sets(h);
    } else {
        printf("cudaMallocHost: %s\n", cudaGetErrorName(e));
    }
    e = cudaHostAlloc(&m, 1 << 16, cudaHostAllocMapped);
    if (e == cudaSuccess) {
        copies_and_sets(m); // its host bytes, whatever its address
        m[5] = 1;
        k1<<<2, 32>>>(m + 5);
        e = cudaDeviceSynchronize();
        show("cudaHostAlloc(mapped) block, by host address", e, m + 5, 3);
        int *d = nullptr;
        e = cudaHostGetDevicePointer(&d, m, 0);
        printf("cudaHostGetDevicePointer: %s, %s\n", cudaGetErrorName(e),
               e == cudaSuccess && d == m ? "the host address" : "another address");
        if (e == cudaSuccess) {
            k1<<<4, 32>>>(d + 5);
            e = cudaDeviceSynchronize();
            show("through the device pointer", e, m + 5, 7);
        }
        int **slot = nullptr, *at = m + 6000;
        *at = 40;
        e = cudaMalloc(&slot, sizeof at);
        if (e == cudaSuccess) e = cudaMemcpy(slot, &at, sizeof at, cudaMemcpyHostToDevice);
        if (e == cudaSuccess) {
            kd<<<2, 32>>>(slot);
            e = cudaDeviceSynchronize();
        }
        show("through a pointer kept in device memory", e, at, 42);
        cudaFree(slot);
    } else {
        printf("cudaHostAlloc: %s\n", cudaGetErrorName(e));
    }
    e = cudaHostRegister(registered, sizeof registered, cudaHostRegisterDefault);
    if (e == cudaSuccess) {
        registered[9] = 5;
        k1<<<2, 32>>>(registered + 9);
        e = cudaDeviceSynchronize();
        show("cudaHostRegister range, by host address", e, registered + 9, 7);
        registered[9] = 100;
        k1<<<1, 32>>>(registered + 9);
        e = cudaStreamSynchronize(0);
        show("again, after a host write", e, registered + 9, 101);
        printf("cudaHostUnregister: %s\n", cudaGetErrorName(cudaHostUnregister(registered)));
    } else {
        printf("cudaHostRegister: %s\n", cudaGetErrorName(e));
    }
    printf("cudaFreeHost: %s %s\n", cudaGetErrorName(cudaFreeHost(h)), cudaGetErrorName(cudaFreeHost(m)));
    return 0;
}
