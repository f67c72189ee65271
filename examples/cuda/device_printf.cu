// device_printf: what kernels print reaches the program's stdout at the
// synchronizing call, between what the program printed before it and what
// it prints after, as natively. Kernels of one thread each (their lines
// come in a fixed order), on the default stream and on a stream, with
// integer, floating-point and string formats, and many lines at once.
#include "common.h"

__global__ void hello(int k, float x)
{
    printf("kernel %d: hello from the device, x = %.3f, %s\n", k, x, k % 2 ? "odd" : "even");
}

__global__ void count(int n)
{
    for (int i = 0; i < n; i++) printf("line %d of %d\n", i, n);
}

int main()
{
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    // everything the program printed goes out before the device's lines
    // (the runtime writes them to the same stdout)
    std::printf("before the first kernel\n");
    std::fflush(stdout);
    hello<<<1, 1>>>(1, 0.5f);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    std::printf("after cudaDeviceSynchronize\n");
    std::fflush(stdout);

    hello<<<1, 1, 0, s>>>(2, 1.25f);
    hello<<<1, 1, 0, s>>>(3, -2.0f);
    CHECK(cudaStreamSynchronize(s));
    std::printf("after cudaStreamSynchronize\n");
    std::fflush(stdout);

    count<<<1, 1, 0, s>>>(200);
    cudaEvent_t ev;
    CHECK(cudaEventCreate(&ev));
    CHECK(cudaEventRecord(ev, s));
    CHECK(cudaEventSynchronize(ev));
    std::printf("after cudaEventSynchronize\n");
    std::fflush(stdout);

    // a blocking copy synchronizes too
    int *d = nullptr, v = 0;
    CHECK(cudaMalloc(&d, sizeof *d));
    hello<<<1, 1>>>(4, 3.0f);
    CHECK(cudaMemcpy(&v, d, sizeof v, cudaMemcpyDeviceToHost));
    std::printf("after a blocking cudaMemcpy\n");
    CHECK(cudaFree(d));
    CHECK(cudaEventDestroy(ev));
    CHECK(cudaStreamDestroy(s));
    return 0;
}
