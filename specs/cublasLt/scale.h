/* The size of one alpha or beta of a cuBLASLt scale type (a cudaDataType),
 * for the guest (how many host bytes to send) and the server (that the
 * guest sent as many as the real descriptor's type has). 0: a type with no
 * scalars of cuBLASLt's. */
#ifndef APIGEN_CUBLASLT_SCALE_H
#define APIGEN_CUBLASLT_SCALE_H

#include <library_types.h>
#include <stdint.h>

static inline unsigned cublaslt_scale_bytes(int32_t t)
{
    switch (t) {
    case CUDA_R_8I: case CUDA_R_8U: return 1;
    case CUDA_R_16F: case CUDA_R_16BF: case CUDA_C_8I: case CUDA_C_8U: return 2;
    case CUDA_R_32F: case CUDA_R_32I: case CUDA_R_32U: case CUDA_C_16F: case CUDA_C_16BF: return 4;
    case CUDA_R_64F: case CUDA_C_32F: case CUDA_C_32I: case CUDA_C_32U: return 8;
    case CUDA_C_64F: return 16;
    default: return 0;
    }
}

#endif
