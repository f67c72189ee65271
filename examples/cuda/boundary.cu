// boundary: zero-byte copies and sets at the edges of allocations, and
// copies that end exactly at an allocation's last byte. A zero-byte copy or
// set touches no memory and CUDA accepts it at one past the end of an
// allocation (sort and scan code issue them with pointers such as d + n);
// a copy of the last byte, or of the whole allocation, is inside it. Prints
// each call's error name and checksums of what the copies moved: the same
// natively and forwarded.
#include "common.h"

#include <cstring>

__global__ void add_one(unsigned char *p, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) p[i]++;
}

static void say(const char *what, cudaError_t e)
{
    std::printf("%-44s %s\n", what, cudaGetErrorName(e));
}

int main()
{
    const size_t N = 4096;
    unsigned char *a = nullptr, *b = nullptr, host[N], back[N];
    CHECK(cudaMalloc(&a, N));
    CHECK(cudaMalloc(&b, N));
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (size_t i = 0; i < N; i++) host[i] = (unsigned char)(i * 13 + 5);

    // zero bytes at one past the end (and at the start, and between ends)
    say("D2D 0 bytes, dst one past the end", cudaMemcpy(a + N, b, 0, cudaMemcpyDeviceToDevice));
    say("D2D 0 bytes, src one past the end", cudaMemcpy(a, b + N, 0, cudaMemcpyDeviceToDevice));
    say("D2D 0 bytes, both one past the end", cudaMemcpy(a + N, b + N, 0, cudaMemcpyDeviceToDevice));
    say("H2D 0 bytes, one past the end", cudaMemcpy(a + N, host, 0, cudaMemcpyHostToDevice));
    say("D2H 0 bytes, one past the end", cudaMemcpy(back, a + N, 0, cudaMemcpyDeviceToHost));
    say("Default 0 bytes, one past the end", cudaMemcpy(a + N, b, 0, cudaMemcpyDefault));
    say("memset 0 bytes, one past the end", cudaMemset(a + N, 7, 0));
    say("async D2D 0 bytes, one past the end",
        cudaMemcpyAsync(a + N, b + N, 0, cudaMemcpyDeviceToDevice, s));
    say("async H2D 0 bytes, one past the end", cudaMemcpyAsync(a + N, host, 0, cudaMemcpyHostToDevice, s));
    say("async memset 0 bytes, one past the end", cudaMemsetAsync(b + N, 7, 0, s));
    say("D2D 0 bytes at the start", cudaMemcpy(a, b, 0, cudaMemcpyDeviceToDevice));
    say("stream synchronize", cudaStreamSynchronize(s));

    // exactly up to the last byte: inside
    say("H2D whole allocation", cudaMemcpy(a, host, N, cudaMemcpyHostToDevice));
    say("D2D whole allocation", cudaMemcpy(b, a, N, cudaMemcpyDeviceToDevice));
    say("H2D last byte", cudaMemcpy(a + N - 1, host + 1, 1, cudaMemcpyHostToDevice));
    say("memset last 16 bytes", cudaMemset(b + N - 16, 0xab, 16));
    say("device synchronize", cudaDeviceSynchronize()); // s does not wait for the legacy stream
    say("async D2D last 100 bytes",
        cudaMemcpyAsync(b + N - 100, a + N - 100, 100, cudaMemcpyDeviceToDevice, s));
    add_one<<<(N + 255) / 256, 256, 0, s>>>(b, N);
    say("kernel", cudaGetLastError());
    say("stream synchronize", cudaStreamSynchronize(s));
    std::memset(back, 0, N);
    say("D2H last byte", cudaMemcpy(back + N - 1, a + N - 1, 1, cudaMemcpyDeviceToHost));
    std::printf("last byte: %d (expected %d)\n", back[N - 1], host[1]);
    say("D2H whole allocation", cudaMemcpy(back, b, N, cudaMemcpyDeviceToHost));
    size_t bad = 0;
    for (size_t i = 0; i < N; i++) {
        unsigned char want = (unsigned char)((i == N - 1 ? host[1] : host[i]) + 1);
        bad += back[i] != want;
    }
    std::printf("whole: %016llx, %zu wrong\n", (unsigned long long)fnv(back, N), bad);
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    return 0;
}
