/* Shared by the cuBLAS examples: status checks that print cuBLAS's own name
 * for a failure, and the exit codes the tests read. */
#ifndef CUBLAS_EXAMPLE_COMMON_H
#define CUBLAS_EXAMPLE_COMMON_H

#include <stdio.h>
#include <stdlib.h>

#include <cublas.h>
#include <cublas_api.h>

/* The first call that needs a GPU: on a machine without one it fails, and
 * the program says so and exits 2 (tests/cublas/diff.sh expects that path
 * there, natively and forwarded alike). */
#define CK_FIRST(call)                                                                 \
    do {                                                                               \
        cublasStatus_t s_ = (call);                                                    \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                             \
            printf("%s: %s (%d): no usable GPU, stopping\n", #call,                   \
                   cublasGetStatusName(s_), (int)s_);                                  \
            return 2;                                                                  \
        }                                                                              \
    } while (0)

#define CK(call)                                                                       \
    do {                                                                               \
        cublasStatus_t s_ = (call);                                                    \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                             \
            printf("line %d: %s: %s (%d)\n", __LINE__, #call, cublasGetStatusName(s_),  \
                   (int)s_);                                                           \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

static inline void print_matrix(const char *name, const float *m, int rows, int cols)
{
    printf("%s =\n", name);
    for (int r = 0; r < rows; r++) {
        for (int c = 0; c < cols; c++) printf(" %8.3f", m[c * rows + r]); /* column-major */
        printf("\n");
    }
}

#endif
