/* Shared by the CUDA examples: stop at the first failing call with the
 * runtime's own error name and text, so that a run without a GPU (or with a
 * server that is unreachable) prints one deterministic line. */
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                                               \
    do {                                                                                          \
        cudaError_t e_ = (call);                                                                  \
        if (e_ != cudaSuccess) {                                                                  \
            std::printf("error: %s: %s (%s)\n", #call, cudaGetErrorName(e_),                      \
                        cudaGetErrorString(e_));                                                  \
            std::exit(1);                                                                         \
        }                                                                                         \
    } while (0)

/* Timings only when asked: the differential tests compare stdout. */
static inline bool show_times()
{
    const char *v = std::getenv("EXAMPLE_TIMES");
    return v && *v && *v != '0';
}

/* FNV-1a of n bytes: a checksum the differential tests compare. */
static inline uint64_t fnv(const unsigned char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}
