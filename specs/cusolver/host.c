/* Hand-written host code for specs/cusolver.yaml: the 64-bit API's calls
 * with a host workspace. The handler's copy of bufferOnHost lives only until
 * the reply, and the library may still use it for work it queued on the
 * handle's stream; so when there is a host workspace, the stream is waited
 * for before the reply (the bytes that travel back are then final). A
 * failure of the wait is the call's execution failure. Calls without a host
 * workspace (workspaceInBytesOnHost 0, the common case) stay asynchronous. */
#include <cuda_runtime_api.h>

#include "apigen_rt.h"
#include "cusolver_wire.h"

static cusolverStatus_t waited(cusolverStatus_t st, cusolverDnHandle_t handle, size_t host_bytes)
{
    if (st != CUSOLVER_STATUS_SUCCESS || host_bytes == 0) return st;
    cudaStream_t s = NULL;
    if (cusolverDnGetStream(handle, &s) != CUSOLVER_STATUS_SUCCESS)
        return CUSOLVER_STATUS_EXECUTION_FAILED;
    return cudaStreamSynchronize(s) == cudaSuccess ? st : CUSOLVER_STATUS_EXECUTION_FAILED;
}

cusolverStatus_t cusolver_host_xgeev(apigen_call_ctx *cx,
        cusolverDnHandle_t handle,
        cusolverDnParams_t params,
        cusolverEigMode_t jobvl,
        cusolverEigMode_t jobvr,
        int64_t n,
        cudaDataType dataTypeA,
        void *A,
        int64_t lda,
        cudaDataType dataTypeW,
        void *W,
        cudaDataType dataTypeVL,
        void *VL,
        int64_t ldvl,
        cudaDataType dataTypeVR,
        void *VR,
        int64_t ldvr,
        cudaDataType computeType,
        void *bufferOnDevice,
        size_t workspaceInBytesOnDevice,
        void *bufferOnHost,
        size_t workspaceInBytesOnHost,
        int *info)
{
    (void)cx;
    return waited(cusolverDnXgeev(handle, params, jobvl, jobvr, n, dataTypeA, A, lda, dataTypeW, W, dataTypeVL, VL, ldvl, dataTypeVR, VR, ldvr, computeType, bufferOnDevice, workspaceInBytesOnDevice, bufferOnHost, workspaceInBytesOnHost, info), handle, workspaceInBytesOnHost);
}

cusolverStatus_t cusolver_host_xgeqrf(apigen_call_ctx *cx,
        cusolverDnHandle_t handle,
        cusolverDnParams_t params,
        int64_t m,
        int64_t n,
        cudaDataType dataTypeA,
        void *A,
        int64_t lda,
        cudaDataType dataTypeTau,
        void *tau,
        cudaDataType computeType,
        void *bufferOnDevice,
        size_t workspaceInBytesOnDevice,
        void *bufferOnHost,
        size_t workspaceInBytesOnHost,
        int *info)
{
    (void)cx;
    return waited(cusolverDnXgeqrf(handle, params, m, n, dataTypeA, A, lda, dataTypeTau, tau, computeType, bufferOnDevice, workspaceInBytesOnDevice, bufferOnHost, workspaceInBytesOnHost, info), handle, workspaceInBytesOnHost);
}

cusolverStatus_t cusolver_host_xgesvd(apigen_call_ctx *cx,
        cusolverDnHandle_t handle,
        cusolverDnParams_t params,
        signed char jobu,
        signed char jobvt,
        int64_t m,
        int64_t n,
        cudaDataType dataTypeA,
        void *A,
        int64_t lda,
        cudaDataType dataTypeS,
        void *S,
        cudaDataType dataTypeU,
        void *U,
        int64_t ldu,
        cudaDataType dataTypeVT,
        void *VT,
        int64_t ldvt,
        cudaDataType computeType,
        void *bufferOnDevice,
        size_t workspaceInBytesOnDevice,
        void *bufferOnHost,
        size_t workspaceInBytesOnHost,
        int *info)
{
    (void)cx;
    return waited(cusolverDnXgesvd(handle, params, jobu, jobvt, m, n, dataTypeA, A, lda, dataTypeS, S, dataTypeU, U, ldu, dataTypeVT, VT, ldvt, computeType, bufferOnDevice, workspaceInBytesOnDevice, bufferOnHost, workspaceInBytesOnHost, info), handle, workspaceInBytesOnHost);
}

cusolverStatus_t cusolver_host_xgesvdp(apigen_call_ctx *cx,
        cusolverDnHandle_t handle,
        cusolverDnParams_t params,
        cusolverEigMode_t jobz,
        int econ,
        int64_t m,
        int64_t n,
        cudaDataType dataTypeA,
        void *A,
        int64_t lda,
        cudaDataType dataTypeS,
        void *S,
        cudaDataType dataTypeU,
        void *U,
        int64_t ldu,
        cudaDataType dataTypeV,
        void *V,
        int64_t ldv,
        cudaDataType computeType,
        void *bufferOnDevice,
        size_t workspaceInBytesOnDevice,
        void *bufferOnHost,
        size_t workspaceInBytesOnHost,
        int *d_info,
        double *h_err_sigma)
{
    (void)cx;
    return waited(cusolverDnXgesvdp(handle, params, jobz, econ, m, n, dataTypeA, A, lda, dataTypeS, S, dataTypeU, U, ldu, dataTypeV, V, ldv, computeType, bufferOnDevice, workspaceInBytesOnDevice, bufferOnHost, workspaceInBytesOnHost, d_info, h_err_sigma), handle, workspaceInBytesOnHost);
}

cusolverStatus_t cusolver_host_xgesvdr(apigen_call_ctx *cx,
        cusolverDnHandle_t handle,
        cusolverDnParams_t params,
        signed char jobu,
        signed char jobv,
        int64_t m,
        int64_t n,
        int64_t k,
        int64_t p,
        int64_t niters,
        cudaDataType dataTypeA,
        void *A,
        int64_t lda,
        cudaDataType dataTypeSrand,
        void *Srand,
        cudaDataType dataTypeUrand,
        void *Urand,
        int64_t ldUrand,
        cudaDataType dataTypeVrand,
        void *Vrand,
        int64_t ldVrand,
        cudaDataType computeType,
        void *bufferOnDevice,
        size_t workspaceInBytesOnDevice,
        void *bufferOnHost,
        size_t workspaceInBytesOnHost,
        int *d_info)
{
    (void)cx;
    return waited(cusolverDnXgesvdr(handle, params, jobu, jobv, m, n, k, p, niters, dataTypeA, A, lda, dataTypeSrand, Srand, dataTypeUrand, Urand, ldUrand, dataTypeVrand, Vrand, ldVrand, computeType, bufferOnDevice, workspaceInBytesOnDevice, bufferOnHost, workspaceInBytesOnHost, d_info), handle, workspaceInBytesOnHost);
}

cusolverStatus_t cusolver_host_xgetrf(apigen_call_ctx *cx,
        cusolverDnHandle_t handle,
        cusolverDnParams_t params,
        int64_t m,
        int64_t n,
        cudaDataType dataTypeA,
        void *A,
        int64_t lda,
        int64_t *ipiv,
        cudaDataType computeType,
        void *bufferOnDevice,
        size_t workspaceInBytesOnDevice,
        void *bufferOnHost,
        size_t workspaceInBytesOnHost,
        int *info)
{
    (void)cx;
    return waited(cusolverDnXgetrf(handle, params, m, n, dataTypeA, A, lda, ipiv, computeType, bufferOnDevice, workspaceInBytesOnDevice, bufferOnHost, workspaceInBytesOnHost, info), handle, workspaceInBytesOnHost);
}

cusolverStatus_t cusolver_host_xlarft(apigen_call_ctx *cx,
        cusolverDnHandle_t handle,
        cusolverDnParams_t params,
        cusolverDirectMode_t direct,
        cusolverStorevMode_t storev,
        int64_t n,
        int64_t k,
        cudaDataType dataTypeV,
        const void *V,
        int64_t ldv,
        cudaDataType dataTypeTau,
        const void *tau,
        cudaDataType dataTypeT,
        void *T,
        int64_t ldt,
        cudaDataType computeType,
        void *bufferOnDevice,
        size_t workspaceInBytesOnDevice,
        void *bufferOnHost,
        size_t workspaceInBytesOnHost)
{
    (void)cx;
    return waited(cusolverDnXlarft(handle, params, direct, storev, n, k, dataTypeV, V, ldv, dataTypeTau, tau, dataTypeT, T, ldt, computeType, bufferOnDevice, workspaceInBytesOnDevice, bufferOnHost, workspaceInBytesOnHost), handle, workspaceInBytesOnHost);
}

cusolverStatus_t cusolver_host_xpotrf(apigen_call_ctx *cx,
        cusolverDnHandle_t handle,
        cusolverDnParams_t params,
        cublasFillMode_t uplo,
        int64_t n,
        cudaDataType dataTypeA,
        void *A,
        int64_t lda,
        cudaDataType computeType,
        void *bufferOnDevice,
        size_t workspaceInBytesOnDevice,
        void *bufferOnHost,
        size_t workspaceInBytesOnHost,
        int *info)
{
    (void)cx;
    return waited(cusolverDnXpotrf(handle, params, uplo, n, dataTypeA, A, lda, computeType, bufferOnDevice, workspaceInBytesOnDevice, bufferOnHost, workspaceInBytesOnHost, info), handle, workspaceInBytesOnHost);
}

cusolverStatus_t cusolver_host_xsyevbatched(apigen_call_ctx *cx,
        cusolverDnHandle_t handle,
        cusolverDnParams_t params,
        cusolverEigMode_t jobz,
        cublasFillMode_t uplo,
        int64_t n,
        cudaDataType dataTypeA,
        void *A,
        int64_t lda,
        cudaDataType dataTypeW,
        void *W,
        cudaDataType computeType,
        void *bufferOnDevice,
        size_t workspaceInBytesOnDevice,
        void *bufferOnHost,
        size_t workspaceInBytesOnHost,
        int *info,
        int64_t batchSize)
{
    (void)cx;
    return waited(cusolverDnXsyevBatched(handle, params, jobz, uplo, n, dataTypeA, A, lda, dataTypeW, W, computeType, bufferOnDevice, workspaceInBytesOnDevice, bufferOnHost, workspaceInBytesOnHost, info, batchSize), handle, workspaceInBytesOnHost);
}

cusolverStatus_t cusolver_host_xsyevd(apigen_call_ctx *cx,
        cusolverDnHandle_t handle,
        cusolverDnParams_t params,
        cusolverEigMode_t jobz,
        cublasFillMode_t uplo,
        int64_t n,
        cudaDataType dataTypeA,
        void *A,
        int64_t lda,
        cudaDataType dataTypeW,
        void *W,
        cudaDataType computeType,
        void *bufferOnDevice,
        size_t workspaceInBytesOnDevice,
        void *bufferOnHost,
        size_t workspaceInBytesOnHost,
        int *info)
{
    (void)cx;
    return waited(cusolverDnXsyevd(handle, params, jobz, uplo, n, dataTypeA, A, lda, dataTypeW, W, computeType, bufferOnDevice, workspaceInBytesOnDevice, bufferOnHost, workspaceInBytesOnHost, info), handle, workspaceInBytesOnHost);
}

cusolverStatus_t cusolver_host_xsyevdx(apigen_call_ctx *cx,
        cusolverDnHandle_t handle,
        cusolverDnParams_t params,
        cusolverEigMode_t jobz,
        cusolverEigRange_t range,
        cublasFillMode_t uplo,
        int64_t n,
        cudaDataType dataTypeA,
        void *A,
        int64_t lda,
        void *vl,
        void *vu,
        int64_t il,
        int64_t iu,
        int64_t *meig64,
        cudaDataType dataTypeW,
        void *W,
        cudaDataType computeType,
        void *bufferOnDevice,
        size_t workspaceInBytesOnDevice,
        void *bufferOnHost,
        size_t workspaceInBytesOnHost,
        int *info)
{
    (void)cx;
    return waited(cusolverDnXsyevdx(handle, params, jobz, range, uplo, n, dataTypeA, A, lda, vl, vu, il, iu, meig64, dataTypeW, W, computeType, bufferOnDevice, workspaceInBytesOnDevice, bufferOnHost, workspaceInBytesOnHost, info), handle, workspaceInBytesOnHost);
}

cusolverStatus_t cusolver_host_xsytrs(apigen_call_ctx *cx,
        cusolverDnHandle_t handle,
        cublasFillMode_t uplo,
        int64_t n,
        int64_t nrhs,
        cudaDataType dataTypeA,
        const void *A,
        int64_t lda,
        const int64_t *ipiv,
        cudaDataType dataTypeB,
        void *B,
        int64_t ldb,
        void *bufferOnDevice,
        size_t workspaceInBytesOnDevice,
        void *bufferOnHost,
        size_t workspaceInBytesOnHost,
        int *info)
{
    (void)cx;
    return waited(cusolverDnXsytrs(handle, uplo, n, nrhs, dataTypeA, A, lda, ipiv, dataTypeB, B, ldb, bufferOnDevice, workspaceInBytesOnDevice, bufferOnHost, workspaceInBytesOnHost, info), handle, workspaceInBytesOnHost);
}

cusolverStatus_t cusolver_host_xtrtri(apigen_call_ctx *cx,
        cusolverDnHandle_t handle,
        cublasFillMode_t uplo,
        cublasDiagType_t diag,
        int64_t n,
        cudaDataType dataTypeA,
        void *A,
        int64_t lda,
        void *bufferOnDevice,
        size_t workspaceInBytesOnDevice,
        void *bufferOnHost,
        size_t workspaceInBytesOnHost,
        int *devInfo)
{
    (void)cx;
    return waited(cusolverDnXtrtri(handle, uplo, diag, n, dataTypeA, A, lda, bufferOnDevice, workspaceInBytesOnDevice, bufferOnHost, workspaceInBytesOnHost, devInfo), handle, workspaceInBytesOnHost);
}
