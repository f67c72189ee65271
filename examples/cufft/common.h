/* Shared by the cuFFT examples: checks that print the library's error value
 * and the exit codes the tests read (0 every result matched, 1 a call
 * failed, 2 no usable GPU: the first runtime call failed). */
#ifndef CUFFT_EXAMPLE_COMMON_H
#define CUFFT_EXAMPLE_COMMON_H

#include <stdio.h>

#include <cuda_runtime_api.h>
#include <cufft.h>

#define CK_FIRST(call)                                                                   \
    do {                                                                                 \
        cudaError_t e_ = (call);                                                         \
        if (e_ != cudaSuccess) {                                                         \
            printf("%s: %s: no usable GPU, stopping\n", #call, cudaGetErrorName(e_));    \
            return 2;                                                                    \
        }                                                                                \
    } while (0)

#define CKR(call)                                                                        \
    do {                                                                                 \
        cudaError_t e_ = (call);                                                         \
        if (e_ != cudaSuccess) {                                                         \
            printf("line %d: %s: %s\n", __LINE__, #call, cudaGetErrorName(e_));          \
            return 1;                                                                    \
        }                                                                                \
    } while (0)

#define CKF(call)                                                                        \
    do {                                                                                 \
        cufftResult r_ = (call);                                                         \
        if (r_ != CUFFT_SUCCESS) {                                                       \
            printf("line %d: %s: cufftResult %d\n", __LINE__, #call, (int)r_);           \
            return 1;                                                                    \
        }                                                                                \
    } while (0)

#endif
