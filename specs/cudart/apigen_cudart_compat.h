/* apigen_cudart_compat.h: cuda_runtime_api.h, plus what the internal calls of
 * apigen_cudart.h name but older CUDA versions lack. apigen_cudart.h, guest.c,
 * host.c and versions.c compile against every version scripts/cuda-versions.sh
 * lists: they test what the headers declare (cudart_features.h, written by
 * apigen: APIGEN_HAS_TYPE_x, APIGEN_HAS_FN_x, APIGEN_HAS_FIELD_struct_field),
 * not version numbers. The layouts are the newer headers' (the older stubs
 * and servers only pass them through). */
#ifndef APIGEN_CUDART_COMPAT_H
#define APIGEN_CUDART_COMPAT_H

#include "cuda_runtime_api.h"
#include "cudart_features.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef APIGEN_HAS_TYPE_cudaKernel_t
typedef struct CUkern_st *cudaKernel_t; /* driver_types.h of 12.0 */
#endif
#ifndef APIGEN_HAS_TYPE_cudaLibrary_t
typedef struct CUlib_st *cudaLibrary_t;
#endif
#ifndef APIGEN_HAS_TYPE_cudaJitOption
enum cudaJitOption { apigenCudartNoJitOption_ = -1 };         /* 12.0's enums (an int each): */
#endif
#ifndef APIGEN_HAS_TYPE_cudaLibraryOption
enum cudaLibraryOption { apigenCudartNoLibraryOption_ = -1 }; /* never sent by an 11.x stub */
#endif

#ifndef APIGEN_HAS_TYPE_cudaLaunchAttribute
/* driver_types.h of 11.8: launches with attributes (an 11.7 stub sends none) */
typedef struct apigenCudartNoLaunchAttribute_ {
    int id;
    char pad_[4];
    char val[64];
} cudaLaunchAttribute;
#endif

#ifndef APIGEN_HAS_TYPE_cudaGraphEdgeData
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
