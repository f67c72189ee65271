/* Shared by the cuSPARSE and cuSOLVER examples: status checks that print the
 * library's own name for a failure, and the exit codes the tests read. */
#ifndef CUDALIB_EXAMPLE_COMMON_H
#define CUDALIB_EXAMPLE_COMMON_H

#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

/* The first call that needs a GPU: on a machine without one it fails, and
 * the program says so and exits 2 (the tests expect that path there,
 * natively and forwarded alike). */
#define CK_FIRST_RT(call)                                                              \
    do {                                                                               \
        cudaError_t e_ = (call);                                                       \
        if (e_ != cudaSuccess) {                                                       \
            printf("%s: %s: no usable GPU, stopping\n", #call, cudaGetErrorName(e_));  \
            return 2;                                                                  \
        }                                                                              \
    } while (0)

#define CK_RT(call)                                                                    \
    do {                                                                               \
        cudaError_t e_ = (call);                                                       \
        if (e_ != cudaSuccess) {                                                       \
            printf("line %d: %s: %s\n", __LINE__, #call, cudaGetErrorName(e_));        \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

#endif
