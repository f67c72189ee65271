/* Shared by the cuBLASLt examples: call checks that name the line. */
#ifndef CUBLASLT_EXAMPLE_COMMON_H
#define CUBLASLT_EXAMPLE_COMMON_H

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

/* a runtime call that fails before any cuBLASLt work: no usable GPU (exit 2) */
#define CUDA_OR_NOGPU(call)                                                                   \
    do {                                                                                      \
        cudaError_t e_ = (call);                                                              \
        if (e_ != cudaSuccess) {                                                              \
            printf("no usable GPU: %s: %s\n", #call, cudaGetErrorName(e_));                   \
            exit(2);                                                                          \
        }                                                                                     \
    } while (0)

#define CUDA_CHECK(call)                                                                      \
    do {                                                                                      \
        cudaError_t e_ = (call);                                                              \
        if (e_ != cudaSuccess) {                                                              \
            printf("line %d: %s failed: %s\n", __LINE__, #call, cudaGetErrorName(e_));        \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

#define LT_CHECK(call)                                                                        \
    do {                                                                                      \
        cublasStatus_t s_ = (call);                                                           \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                    \
            printf("line %d: %s failed: %s\n", __LINE__, #call, cublasLtGetStatusName(s_));  \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

#endif
