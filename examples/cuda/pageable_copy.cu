// pageable_copy: odd-sized copies between pageable (malloc) host memory and
// the device, both ways, with cudaMemcpy and with cudaMemcpyAsync on a
// stream, at odd offsets; a kernel changes the bytes in between so the
// device really holds them. Sizes straddle the forwarded copies' chunks
// (4 MiB on the server, 2-8 MiB when the guest stages through the arena,
// one arena slot from 16 KiB to 4 MiB, 512 KiB parts of the wide copy) and
// end in a tail. Then the errors of large copies: past the end of an
// allocation (the host bytes stay as they were), and one that works after.
// Prints one line per size (a checksum of what came back): the output is
// the same natively and forwarded.
#include "common.h"

#include <cstdint>
#include <cstring>
#include <vector>

__global__ void add_one(unsigned char *p, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = (unsigned char)(p[i] + 1);
}

static void fill(unsigned char *p, size_t n, uint64_t seed)
{
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        p[i] = (unsigned char)x;
    }
}

// src -> device (+3) -> kernel -> host dst (+5); asynchronous on `s` when async.
static int round_trip(size_t n, bool async, cudaStream_t s, uint64_t seed)
{
    const size_t pad = 64, doff = 3;
    unsigned char *src = (unsigned char *)std::malloc(n + 2 * pad);
    unsigned char *dst = (unsigned char *)std::malloc(n + 2 * pad);
    unsigned char *d = nullptr;
    if (!src || !dst) return 3;
    fill(src, n + 2 * pad, seed);
    std::memset(dst, 0xee, n + 2 * pad);
    CHECK(cudaMalloc(&d, n + doff + 1));
    if (async) {
        CHECK(cudaMemcpyAsync(d + doff, src + pad, n, cudaMemcpyHostToDevice, s));
        if (n) add_one<<<256, 256, 0, s>>>(d + doff, n);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpyAsync(dst + pad, d + doff, n, cudaMemcpyDeviceToHost, s));
        CHECK(cudaStreamSynchronize(s));
    } else {
        CHECK(cudaMemcpy(d + doff, src + pad, n, cudaMemcpyHostToDevice));
        if (n) add_one<<<256, 256>>>(d + doff, n);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpy(dst + pad, d + doff, n, cudaMemcpyDeviceToHost));
    }
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        if (dst[pad + i] != (unsigned char)(src[pad + i] + 1)) bad++;
    bool guards = dst[pad - 1] == 0xee && dst[pad + n] == 0xee;
    if (bad) { /* only when wrong: what the host got, what the device holds now
                  * (tests/gpu/ctxrace.sh reads these lines) */
        size_t un = 0, same = 0, other = 0, first = n, last = 0;
        for (size_t i = 0; i < n; i++) {
            unsigned char w = (unsigned char)(src[pad + i] + 1), g = dst[pad + i];
            if (g == w) continue;
            if (first == n) first = i;
            last = i;
            if (g == 0xee) un++; else if (g == src[pad + i]) same++; else other++;
        }
        unsigned char *chk = (unsigned char *)std::malloc(n);
        size_t dbad = 0, dsame = 0;
        if (chk && cudaMemcpy(chk, d + doff, n, cudaMemcpyDeviceToHost) == cudaSuccess)
            for (size_t i = 0; i < n; i++)
                if (chk[i] != (unsigned char)(src[pad + i] + 1)) { dbad++; if (chk[i] == src[pad + i]) dsame++; }
        std::printf("DIAG %s n=%zu stream=%p: %zu wrong [%zu..%zu] untouched %zu source %zu other %zu; device %zu wrong (source %zu)\n",
                    async ? "async" : "sync", n, (void *)s, bad, first, last, un, same, other, dbad, dsame);
        std::free(chk);
    }
    std::printf("%-10s %9zu bytes: %zu wrong, guards %s, %016llx\n",
                async ? "async" : "sync", n, bad, guards ? "intact" : "OVERWRITTEN",
                (unsigned long long)fnv(dst, n + 2 * pad));
    CHECK(cudaFree(d));
    std::free(src);
    std::free(dst);
    return bad || !guards ? 2 : 0;
}

int main()
{
    const size_t M = (size_t)1 << 20;
    const size_t K = (size_t)1 << 10;
    const size_t sizes[] = {0,         1,         16 * K - 1, 16 * K,     100003,
                            M + 3,     2 * M + 5, 4 * M - 1,  4 * M,      4 * M + 1,
                            8 * M + 3, 37 * M + 12345, 64 * M + 77};
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    int rc = 0;
    uint64_t seed = 1;
    for (size_t n : sizes) {
        if (round_trip(n, false, s, seed++)) rc = 2;
        if (round_trip(n, true, s, seed++)) rc = 2;
    }
    // the default streams named explicitly
    if (round_trip(9 * M + 1, true, cudaStreamPerThread, seed++)) rc = 2;
    if (round_trip(9 * M + 1, true, cudaStreamLegacy, seed++)) rc = 2;

    // past the end of an allocation: the runtime's own error, host bytes unchanged
    size_t n = 12 * M + 5;
    std::vector<unsigned char> host(n), keep(n);
    fill(host.data(), n, 99);
    keep = host;
    unsigned char *d = nullptr;
    CHECK(cudaMalloc(&d, 8 * M));
    cudaError_t e1 = cudaMemcpy(d, host.data(), n, cudaMemcpyHostToDevice);
    cudaError_t e2 = cudaMemcpy(host.data(), d, n, cudaMemcpyDeviceToHost);
    cudaError_t e3 = cudaMemcpyAsync(host.data(), d + 1, 8 * M, cudaMemcpyDeviceToHost, s);
    cudaError_t e4 = cudaGetLastError();
    std::printf("12 MiB + 5 into 8 MiB: %s; out of 8 MiB: %s; 8 MiB from 1 byte in: %s; last "
                "error: %s; host bytes %s\n",
                cudaGetErrorName(e1), cudaGetErrorName(e2), cudaGetErrorName(e3),
                cudaGetErrorName(e4), host == keep ? "unchanged" : "CHANGED");
    // the same for a mid-size copy (one staging slot when forwarded)
    unsigned char *dm = nullptr;
    CHECK(cudaMalloc(&dm, M));
    e1 = cudaMemcpy(dm, host.data(), M + 1, cudaMemcpyHostToDevice);
    e2 = cudaMemcpy(host.data(), dm, M + 1, cudaMemcpyDeviceToHost);
    e3 = cudaMemcpyAsync(host.data(), dm + 1, M, cudaMemcpyDeviceToHost, s);
    e4 = cudaGetLastError();
    std::printf("1 MiB + 1 into 1 MiB: %s; out of 1 MiB: %s; 1 MiB from 1 byte in: %s; last "
                "error: %s; host bytes %s\n",
                cudaGetErrorName(e1), cudaGetErrorName(e2), cudaGetErrorName(e3),
                cudaGetErrorName(e4), host == keep ? "unchanged" : "CHANGED");
    CHECK(cudaFree(dm));
    // a large copy right after: works
    CHECK(cudaMemcpy(d, host.data(), 8 * M, cudaMemcpyHostToDevice));
    std::vector<unsigned char> back(8 * M);
    CHECK(cudaMemcpy(back.data(), d, 8 * M, cudaMemcpyDeviceToHost));
    std::printf("8 MiB after the errors: %s\n",
                std::memcmp(back.data(), host.data(), 8 * M) ? "DIFFERENT" : "equal");
    CHECK(cudaFree(d));
    CHECK(cudaStreamDestroy(s));
    std::printf("pageable_copy: %s\n", rc ? "WRONG BYTES" : "all copies correct");
    return rc;
}
