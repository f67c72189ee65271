/* The wire messages of specs/cublasLt.yaml that are not cuBLASLt functions
 * (internal: the stub defines them hidden, the server's handlers call the
 * functions of these names in specs/cublasLt/host.c). */
#ifndef APIGEN_CUBLASLT_H
#define APIGEN_CUBLASLT_H

#include <cublasLt.h>

/* cuBLAS's handle, as cublas_api.h declares it: cuBLASLt accepts one where it
 * takes a cublasLtHandle_t (PyTorch passes its cuBLAS handle to every
 * cublasLt call), so the spec accepts the family's cuBLAS ids there (`also:`) */
typedef struct cublasContext *cublasHandle_t;

/* cuBLASLt's text for a status (which 0: its name, 1: its description) */
cublasStatus_t apigenCublasLtStatusText(cublasStatus_t status, int which, char *buf,
                                        unsigned int length);

/* cublasLtMatmul with what the guest knows of computeDesc: its pointer mode
 * (where alpha and beta live) and the size of its scale type (how many
 * bytes a host alpha and beta have). The server checks both against the
 * real descriptor before the call. */
cublasStatus_t apigenCublasLtMatmul(cublasLtHandle_t lightHandle,
                                    cublasLtMatmulDesc_t computeDesc, int pointerMode,
                                    unsigned int scaleBytes, const void *alpha, const void *A,
                                    cublasLtMatrixLayout_t Adesc, const void *B,
                                    cublasLtMatrixLayout_t Bdesc, const void *beta,
                                    const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
                                    cublasLtMatrixLayout_t Ddesc,
                                    const cublasLtMatmulAlgo_t *algo, void *workspace,
                                    size_t workspaceSizeInBytes, cudaStream_t stream);

/* cublasLtMatrixTransform the same way (transformDesc's pointer mode and
 * scale type) */
cublasStatus_t apigenCublasLtMatrixTransform(cublasLtHandle_t lightHandle,
                                             cublasLtMatrixTransformDesc_t transformDesc,
                                             int pointerMode, unsigned int scaleBytes,
                                             const void *alpha, const void *A,
                                             cublasLtMatrixLayout_t Adesc, const void *beta,
                                             const void *B, cublasLtMatrixLayout_t Bdesc,
                                             void *C, cublasLtMatrixLayout_t Cdesc,
                                             cudaStream_t stream);

/* cublasLtLoggerForceDisable, whose declaration has no prototype */
cublasStatus_t apigenCublasLtLoggerForceDisable(void);

#endif
