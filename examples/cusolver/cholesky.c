/* A Cholesky solve with cuSOLVER (cusolverDnSpotrf_bufferSize, cusolverDnSpotrf
 * with a device workspace of Lwork floats, cusolverDnSpotrs), checked against
 * A x = b on the CPU; then a matrix that is not positive definite, whose
 * devInfo (device memory) names the failing leading minor. */
#include <math.h>
#include <string.h>

#include <cusolverDn.h>

#include "common.h"

#define CK(call)                                                                       \
    do {                                                                               \
        cusolverStatus_t s_ = (call);                                                  \
        if (s_ != CUSOLVER_STATUS_SUCCESS) {                                           \
            printf("line %d: %s: status %d\n", __LINE__, #call, (int)s_);              \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

enum { N = 4 };

/* symmetric positive definite (diagonally dominant), column-major */
static const float S[N * N] = {10, 1, 2, 0, 1, 8, 1, 1, 2, 1, 9, 3, 0, 1, 3, 7};
static const float b0[N] = {1, 2, 3, 4};
/* symmetric, its leading 2x2 minor is not positive definite */
static const float NPD[N * N] = {1, 2, 0, 0, 2, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};

int main(void)
{
    cusolverDnHandle_t h;
    cusolverStatus_t st = cusolverDnCreate(&h);
    if (st != CUSOLVER_STATUS_SUCCESS) {
        printf("cusolverDnCreate: status %d: no usable GPU, stopping\n", (int)st);
        return 2;
    }
    float *dA, *dB, *dWork;
    int *dInfo, info = -1, lwork = 0;
    CK_FIRST_RT(cudaMalloc((void **)&dA, sizeof S));
    CK_RT(cudaMalloc((void **)&dB, sizeof b0));
    CK_RT(cudaMalloc((void **)&dInfo, sizeof(int)));
    CK_RT(cudaMemcpy(dA, S, sizeof S, cudaMemcpyHostToDevice));
    CK_RT(cudaMemcpy(dB, b0, sizeof b0, cudaMemcpyHostToDevice));

    CK(cusolverDnSpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, N, dA, N, &lwork));
    printf("potrf workspace size known: %s\n", lwork >= 0 ? "yes" : "NO");
    CK_RT(cudaMalloc((void **)&dWork, (lwork > 0 ? (size_t)lwork : 1) * sizeof(float)));
    CK(cusolverDnSpotrf(h, CUBLAS_FILL_MODE_LOWER, N, dA, N, dWork, lwork, dInfo));
    CK_RT(cudaMemcpy(&info, dInfo, sizeof info, cudaMemcpyDeviceToHost));
    printf("potrf devInfo: %d\n", info);
    CK(cusolverDnSpotrs(h, CUBLAS_FILL_MODE_LOWER, N, 1, dA, N, dB, N, dInfo));
    CK_RT(cudaMemcpy(&info, dInfo, sizeof info, cudaMemcpyDeviceToHost));
    printf("potrs devInfo: %d\n", info);
    float x[N];
    CK_RT(cudaDeviceSynchronize());
    CK_RT(cudaMemcpy(x, dB, sizeof x, cudaMemcpyDeviceToHost));
    float err = 0;
    for (int r = 0; r < N; r++) {
        float s = 0;
        for (int c = 0; c < N; c++) s += S[c * N + r] * x[c];
        err = fmaxf(err, fabsf(s - b0[r]));
    }
    printf("potrf+potrs: x =");
    for (int i = 0; i < N; i++) printf(" %.4f", x[i]);
    printf("\npotrf+potrs: A x = b on the CPU: %s\n", err < 1e-4f ? "yes" : "NO");
    int ok = err < 1e-4f;

    /* not positive definite: potrf succeeds as a call, devInfo says where */
    CK_RT(cudaMemcpy(dA, NPD, sizeof NPD, cudaMemcpyHostToDevice));
    CK(cusolverDnSpotrf(h, CUBLAS_FILL_MODE_LOWER, N, dA, N, dWork, lwork, dInfo));
    CK_RT(cudaMemcpy(&info, dInfo, sizeof info, cudaMemcpyDeviceToHost));
    printf("potrf of a matrix that is not positive definite: devInfo %d (expected 2)\n", info);
    ok &= info == 2;

    CK(cusolverDnDestroy(h));
    cudaFree(dA), cudaFree(dB), cudaFree(dWork), cudaFree(dInfo);
    return ok ? 0 : 1;
}
