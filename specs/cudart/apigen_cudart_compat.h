/* apigen_cudart_compat.h: cuda_runtime_api.h, plus what the internal calls of
 * apigen_cudart.h name but older CUDA versions lack (CUDA 11.8: CUDART_VERSION
 * 11080). apigen_cudart.h, guest.c, host.c and versions.c compile against
 * every version scripts/cuda-versions.sh lists: name these types, or put
 * #if CUDART_VERSION >= N around what a version cannot have. The layouts are
 * the newer headers' (the older stubs and servers only pass them through). */
#ifndef APIGEN_CUDART_COMPAT_H
#define APIGEN_CUDART_COMPAT_H

#include "cuda_runtime_api.h"

#ifdef __cplusplus
extern "C" {
#endif

#if CUDART_VERSION < 12000
typedef struct CUkern_st *cudaKernel_t; /* driver_types.h of 12.0 */
typedef struct CUlib_st *cudaLibrary_t;
enum cudaJitOption { apigenCudartNoJitOption_ = -1 };         /* 12.0's enums (an int each): */
enum cudaLibraryOption { apigenCudartNoLibraryOption_ = -1 }; /* never sent by an 11.x stub */
#endif

#if CUDART_VERSION < 12030
typedef struct cudaGraphEdgeData_st { /* driver_types.h of 12.3 */
    unsigned char from_port;
    unsigned char to_port;
    unsigned char type;
    unsigned char reserved[5];
} cudaGraphEdgeData;
#endif

#ifdef __cplusplus
}
#endif
#endif
