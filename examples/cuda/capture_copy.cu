// capture_copy: copies inside a stream capture. Between pinned
// (cudaMallocHost) memory and the device they become graph nodes that run
// at every launch of the graph; from or to pageable (malloc) memory the
// runtime says what it allows. Sizes cover the forwarded copy paths (a few
// bytes in the call, one staging slot, pipelined staging). Prints the
// errors and what the graph's launches left in host memory: the output is
// the same natively and forwarded.
#include "common.h"

#include <cstdint>
#include <cstring>

__global__ void add_one(unsigned char *p, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i]++;
}

// Captures host -> device, +1, device -> host on s; launches the graph twice.
static void capture(const char *what, unsigned char *in, unsigned char *out, size_t n,
                    cudaStream_t s)
{
    unsigned char *d = nullptr;
    CHECK(cudaMalloc(&d, n));
    for (size_t i = 0; i < n; i++) in[i] = (unsigned char)(i * 7 + 1);
    std::memset(out, 0, n);
    cudaGraph_t g = nullptr;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    cudaError_t e1 = cudaMemcpyAsync(d, in, n, cudaMemcpyHostToDevice, s);
    add_one<<<64, 256, 0, s>>>(d, n);
    cudaError_t e2 = cudaMemcpyAsync(out, d, n, cudaMemcpyDeviceToHost, s);
    cudaError_t e3 = cudaStreamEndCapture(s, &g);
    cudaError_t last = cudaGetLastError();
    std::printf("%-8s %8zu bytes: H2D %s, D2H %s, end %s, last %s", what, n, cudaGetErrorName(e1),
                cudaGetErrorName(e2), cudaGetErrorName(e3), cudaGetErrorName(last));
    if (e3 == cudaSuccess && g) {
        cudaGraphExec_t x = nullptr;
        CHECK(cudaGraphInstantiate(&x, g, 0));
        CHECK(cudaGraphLaunch(x, s));
        CHECK(cudaStreamSynchronize(s));
        uint64_t h1 = fnv(out, n);
        for (size_t i = 0; i < n; i++) in[i] = (unsigned char)(in[i] + 3); // the next launch reads these
        CHECK(cudaGraphLaunch(x, s));
        CHECK(cudaStreamSynchronize(s));
        size_t bad = 0;
        for (size_t i = 0; i < n; i++)
            if (out[i] != (unsigned char)(in[i] + 1)) bad++;
        std::printf("; launches: %016llx, then %zu wrong", (unsigned long long)h1, bad);
        CHECK(cudaGraphExecDestroy(x));
    }
    std::printf("\n");
    if (g) CHECK(cudaGraphDestroy(g));
    CHECK(cudaFree(d));
}

int main()
{
    const size_t sizes[] = {16, 64 << 10, (size_t)9 << 20};
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (size_t n : sizes) {
        unsigned char *pin_in, *pin_out;
        CHECK(cudaMallocHost(&pin_in, n));
        CHECK(cudaMallocHost(&pin_out, n));
        capture("pinned", pin_in, pin_out, n, s);
        CHECK(cudaFreeHost(pin_in));
        CHECK(cudaFreeHost(pin_out));
        unsigned char *pg_in = (unsigned char *)std::malloc(n), *pg_out = (unsigned char *)std::malloc(n);
        if (!pg_in || !pg_out) return 3;
        capture("pageable", pg_in, pg_out, n, s);
        std::free(pg_in);
        std::free(pg_out);
    }
    // the stream still works after whatever the runtime said above
    unsigned char *d = nullptr, v = 41;
    CHECK(cudaMalloc(&d, 1));
    CHECK(cudaMemcpyAsync(d, &v, 1, cudaMemcpyHostToDevice, s));
    add_one<<<1, 1, 0, s>>>(d, 1);
    CHECK(cudaMemcpyAsync(&v, d, 1, cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    std::printf("after: %d\n", v);
    CHECK(cudaFree(d));
    CHECK(cudaStreamDestroy(s));
    return 0;
}
