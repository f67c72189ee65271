/* Internal calls of the CUDA driver stub (specs/cuda.yaml, `internal: true`):
 * wire messages between the hand-written guest code (guest.c) and host code
 * (host.c), never exported. apigen generates their encoding and checks. */
#ifndef APIGEN_CUDA_H
#define APIGEN_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

/* kernel parameters the layout query reports at most */
#define APIGEN_CUDA_MAX_PARAMS 512

/* apigenCudaLaunch flags */
#define APIGEN_CUDA_LAUNCH_PTSZ 1u   /* the per-thread default stream entry point */

/* The error's name (which == 0) or description (which == 1), as the
 * server's driver says it; *len: bytes written including the NUL. */
CUresult apigenCudaErrorString(CUresult error, int which, char *buf, size_t cap, size_t *len);

/* cuFuncGetName (isKernel == 0) / cuKernelGetName (1) of a handle id. */
CUresult apigenCudaFuncName(uint64_t func, int isKernel, char *buf, size_t cap, size_t *len);

/* cuModuleLoadDataEx with the image's size (read from its header by the
 * guest) and the option values as 64-bit integers. */
CUresult apigenCudaModuleLoad(CUmodule *module, const void *image, size_t imageSize,
                              unsigned int numOptions, const CUjit_option *options,
                              const uint64_t *optionValues);

/* cuLibraryLoadData likewise. */
CUresult apigenCudaLibraryLoad(CUlibrary *library, const void *code, size_t codeSize,
                               unsigned int numJitOptions, const CUjit_option *jitOptions,
                               const uint64_t *jitOptionsValues, unsigned int numLibraryOptions,
                               const CUlibraryOption *libraryOptions,
                               const uint64_t *libraryOptionValues);

/* The parameter layout of a CUfunction (isKernel == 0) or CUkernel (1) id:
 * offsets and sizes of its parameters in order (cuFuncGetParamInfo). */
CUresult apigenCudaParamLayout(uint64_t func, int isKernel, size_t *offsets, size_t *sizes,
                               unsigned int *nparams);

/* One launch: the packed parameter buffer (the layout's offsets), the
 * launch attributes (CU_LAUNCH_ATTRIBUTE_COOPERATIVE for cooperative
 * launches), flags APIGEN_CUDA_LAUNCH_*. */
CUresult apigenCudaLaunch(uint64_t func, int isKernel, unsigned int gridDimX,
                          unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX,
                          unsigned int blockDimY, unsigned int blockDimZ,
                          unsigned int sharedMemBytes, CUstream hStream, const void *params,
                          size_t paramsSize, const CUlaunchAttribute *attrs, unsigned int numAttrs,
                          unsigned int flags);

#endif
