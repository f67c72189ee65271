// Synchronizations the runtime stub answers in the guest (apigen_work_*,
// specs/cudart/guest.c) and the copies it queues (cudaMemcpyAsync,
// cudaMemcpyToSymbol): tests/cuda/settle_ci.sh runs this natively and
// through the runtime stub against tests/cuda/fake_kernels.c's stand-in
// device (k1 runs on the CPU) and requires the same output, and counts the
// synchronizations answered in the guest (marked "elided" below; every
// other one must reach the server). A case prints the first error of its
// calls, so that an error the stub queued and natively came at the call
// reads the same.
#include <cuda_runtime.h>

#include <pthread.h>
#include <stdio.h>

__global__ void k1(int *p)
{
    if (threadIdx.x == 0)
        p[0] += 1;
}

__constant__ float coef[4096];

static int *flag;
static cudaStream_t other;

static int value()
{
    int v = -1;
    cudaError_t e = cudaMemcpy(&v, flag, sizeof v, cudaMemcpyDeviceToHost);
    return e ? -(int)e : v;
}

static void *other_thread(void *)
{
    cudaSetDevice(0);
    k1<<<1, 32>>>(flag);
    return nullptr;
}

static cudaError_t first(cudaError_t a, cudaError_t b) { return a ? a : b; }

int main()
{
    if (cudaSetDevice(0) || cudaMalloc(&flag, 16) || cudaMemset(flag, 0, 16) ||
        cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking)) {
        printf("setup failed\n");
        return 1;
    }
    k1<<<1, 32>>>(flag); // the first launch's own queries: before the cases
    if (cudaMemset(flag, 0, 16)) {
        printf("setup failed\n");
        return 1;
    }
    printf("sync after setup: %d\n", (int)cudaDeviceSynchronize());
    printf("sync again: %d\n", (int)cudaDeviceSynchronize()); // elided 1
    // a launch on the legacy stream, a copy to the host that waited for it
    k1<<<1, 32>>>(flag);
    printf("legacy launch, copy back: %d\n", value());
    printf("sync after the copy: %d\n", (int)cudaDeviceSynchronize()); // elided 2
    // work on another stream: the copy did not wait for it
    k1<<<1, 32, 0, other>>>(flag);
    printf("other stream launch, copy back: %d\n", value());
    printf("sync after the copy: %d\n", (int)cudaDeviceSynchronize());
    // another thread queues work after the copy
    k1<<<1, 32>>>(flag);
    printf("legacy launch, copy back: %d\n", value());
    pthread_t t;
    pthread_create(&t, nullptr, other_thread, nullptr);
    pthread_join(t, nullptr);
    printf("sync after another thread's launch: %d, value %d\n", (int)cudaDeviceSynchronize(), value());
    printf("sync again: %d\n", (int)cudaDeviceSynchronize()); // elided 3
    // a launch that fails on the device (the stand-in refuses a NULL
    // pointer), queued by the stub: its error comes at the sync
    k1<<<1, 32>>>(nullptr);
    cudaError_t s = cudaDeviceSynchronize();
    printf("failing launch, then sync: first error %d\n", (int)first(s, cudaGetLastError()));
    printf("last error now: %d\n", (int)cudaGetLastError());
    printf("sync again: %d\n", (int)cudaDeviceSynchronize());
    // copies to a symbol: queued from pageable memory, not from pinned
    static float host[4096], back[4096];
    for (int i = 0; i < 4096; i++)
        host[i] = (float)i;
    cudaError_t e = cudaMemcpyToSymbol(coef, host, sizeof host);
    cudaError_t f = cudaMemcpyFromSymbol(back, coef, sizeof back);
    printf("to and from a symbol: %d %d, back[4095] %g\n", (int)e, (int)f, back[4095]);
    host[7] = 70.0f;
    e = cudaMemcpyToSymbol(coef, host + 7, sizeof(float), 7 * sizeof(float));
    f = cudaMemcpyFromSymbol(back, coef, sizeof back);
    printf("one element at an offset: %d %d, back[7] %g\n", (int)e, (int)f, back[7]);
    e = cudaMemcpyToSymbol(coef, host, 8, sizeof host - 4); // past the end
    printf("past the end: %d, last error %d\n", (int)e, (int)cudaGetLastError());
    float *pinned = nullptr;
    e = cudaMallocHost(&pinned, sizeof(float));
    *pinned = 5.0f;
    f = cudaMemcpyToSymbol(coef, pinned, sizeof(float));
    *pinned = 6.0f; // the copy has read it: synchronous from pinned memory
    cudaError_t g = cudaMemcpyFromSymbol(back, coef, sizeof(float));
    printf("from pinned memory: %d %d %d, back[0] %g\n", (int)e, (int)f, (int)g, back[0]);
    cudaFreeHost(pinned);
    // a copy to the device from pageable memory, queued
    int seven = 7;
    e = cudaMemcpyAsync(flag, &seven, sizeof seven, cudaMemcpyHostToDevice, 0);
    seven = 8; // consumed at return
    printf("async copy to the device: %d, value %d\n", (int)e, value());
    printf("sync after the copy back: %d\n", (int)cudaDeviceSynchronize()); // not elided: the async copy is not known ordered

    // Stream synchronizations after a copy to pageable memory on that
    // stream (PyTorch's read of a loss): cuda.settle_stream_ci.* counts the
    // cudaStreamSynchronize calls marked "stream elided"
    int v = -1;
    k1<<<1, 32, 0, other>>>(flag);
    e = cudaMemcpyAsync(&v, flag, sizeof v, cudaMemcpyDeviceToHost, other);
    f = cudaStreamSynchronize(other); // stream elided 1
    printf("copy back on a stream: %d, value %d, then its sync %d\n", (int)e, v, (int)f);
    printf("its sync again: %d\n", (int)cudaStreamSynchronize(other)); // stream elided 2
    printf("the legacy stream: %d\n", (int)cudaStreamSynchronize(0)); // another queue: asked
    printf("the legacy stream again: %d\n", (int)cudaStreamSynchronize(cudaStreamLegacy)); // stream elided 3
    printf("the other stream now: %d\n", (int)cudaStreamSynchronize(other)); // one queue is known: asked
    k1<<<1, 32, 0, other>>>(flag);
    printf("after a launch on it: %d\n", (int)cudaStreamSynchronize(other)); // asked
    e = cudaMemcpyAsync(&v, flag, sizeof v, cudaMemcpyDeviceToHost, 0);
    pthread_create(&t, nullptr, other_thread, nullptr); // its launch comes after the copy
    pthread_join(t, nullptr);
    f = cudaStreamSynchronize(0); // asked
    printf("copy back, another thread's launch, sync: %d %d, value %d\n", (int)e, (int)f, value());
    e = cudaMemcpyAsync(&v, flag, sizeof v, cudaMemcpyDeviceToHost, cudaStreamPerThread);
    f = cudaStreamSynchronize(cudaStreamPerThread); // stream elided 4
    printf("the per-thread stream: %d %d, value %d\n", (int)e, (int)f, v);
    return 0;
}
