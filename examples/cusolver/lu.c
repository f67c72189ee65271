/* A dense LU solve with cuSOLVER: getrf + getrs with the legacy 32-bit API
 * (cusolverDnSgetrf_bufferSize, a device workspace of Lwork floats, pivots and
 * devInfo in device memory), then the 64-bit API (cusolverDnParams_t,
 * cusolverDnXgetrf_bufferSize's device and host workspace sizes,
 * cusolverDnXgetrf with both workspaces, cusolverDnXgetrs), on a stream of
 * the CUDA runtime. Checks each solution x against A x = b on the CPU. */
#include <math.h>
#include <stdint.h>
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

enum { N = 4, NRHS = 1 };

/* column-major; the first column's largest entry is not on the diagonal, so
 * partial pivoting swaps rows */
static const float A0[N * N] = {1, 4, 2, 0, 3, 1, 0, 2, 0, 2, 5, 1, 2, 0, 1, 3};
static const float b0[N] = {5, -1, 2, 4};

static int check(const char *what, const float *x)
{
    float err = 0;
    for (int r = 0; r < N; r++) {
        float s = 0;
        for (int c = 0; c < N; c++) s += A0[c * N + r] * x[c];
        err = fmaxf(err, fabsf(s - b0[r]));
    }
    printf("%s: x =", what);
    for (int i = 0; i < N; i++) printf(" %.4f", x[i]);
    printf("\n%s: A x = b on the CPU: %s\n", what, err < 1e-4f ? "yes" : "NO");
    return err < 1e-4f;
}

int main(void)
{
    cusolverDnHandle_t h;
    cusolverStatus_t st = cusolverDnCreate(&h);
    if (st != CUSOLVER_STATUS_SUCCESS) {
        printf("cusolverDnCreate: status %d: no usable GPU, stopping\n", (int)st);
        return 2;
    }
    cudaStream_t stream, got = NULL;
    CK_FIRST_RT(cudaStreamCreate(&stream));
    CK(cusolverDnSetStream(h, stream));
    CK(cusolverDnGetStream(h, &got));
    printf("cusolverDnGetStream is the runtime's stream: %s\n", got == stream ? "yes" : "NO");

    float *dA, *dB, *dWork;
    int *dIpiv, *dInfo, info = -1, lwork = 0;
    CK_RT(cudaMalloc((void **)&dA, sizeof A0));
    CK_RT(cudaMalloc((void **)&dB, sizeof b0));
    CK_RT(cudaMalloc((void **)&dIpiv, N * sizeof(int)));
    CK_RT(cudaMalloc((void **)&dInfo, sizeof(int)));

    /* 1. the 32-bit API: workspace query, device workspace, devInfo on the device */
    CK_RT(cudaMemcpy(dA, A0, sizeof A0, cudaMemcpyHostToDevice));
    CK_RT(cudaMemcpy(dB, b0, sizeof b0, cudaMemcpyHostToDevice));
    CK(cusolverDnSgetrf_bufferSize(h, N, N, dA, N, &lwork));
    printf("getrf workspace size known: %s\n", lwork >= 0 ? "yes" : "NO");
    CK_RT(cudaMalloc((void **)&dWork, (lwork > 0 ? (size_t)lwork : 1) * sizeof(float)));
    CK(cusolverDnSgetrf(h, N, N, dA, N, dWork, dIpiv, dInfo));
    CK_RT(cudaMemcpy(&info, dInfo, sizeof info, cudaMemcpyDeviceToHost));
    printf("getrf devInfo: %d\n", info);
    int ipiv[N];
    CK_RT(cudaMemcpy(ipiv, dIpiv, sizeof ipiv, cudaMemcpyDeviceToHost));
    printf("getrf pivots: %d %d %d %d\n", ipiv[0], ipiv[1], ipiv[2], ipiv[3]);
    CK(cusolverDnSgetrs(h, CUBLAS_OP_N, N, NRHS, dA, N, dIpiv, dB, N, dInfo));
    CK_RT(cudaMemcpy(&info, dInfo, sizeof info, cudaMemcpyDeviceToHost));
    printf("getrs devInfo: %d\n", info);
    float x[N];
    CK_RT(cudaStreamSynchronize(stream));
    CK_RT(cudaMemcpy(x, dB, sizeof x, cudaMemcpyDeviceToHost));
    int ok = check("getrf+getrs (32-bit API)", x);

    /* 2. the 64-bit API: a params object, device and host workspaces */
    cusolverDnParams_t params;
    CK(cusolverDnCreateParams(&params));
    int64_t *dIpiv64;
    CK_RT(cudaMalloc((void **)&dIpiv64, N * sizeof(int64_t)));
    CK_RT(cudaMemcpy(dA, A0, sizeof A0, cudaMemcpyHostToDevice));
    CK_RT(cudaMemcpy(dB, b0, sizeof b0, cudaMemcpyHostToDevice));
    size_t dbytes = 0, hbytes = 0;
    CK(cusolverDnXgetrf_bufferSize(h, params, N, N, CUDA_R_32F, dA, N, CUDA_R_32F, &dbytes,
                                   &hbytes));
    printf("Xgetrf workspace sizes known: yes\n");
    void *dWork64 = NULL, *hWork = hbytes ? malloc(hbytes) : NULL;
    CK_RT(cudaMalloc(&dWork64, dbytes ? dbytes : 1));
    CK(cusolverDnXgetrf(h, params, N, N, CUDA_R_32F, dA, N, dIpiv64, CUDA_R_32F, dWork64, dbytes,
                        hWork, hbytes, dInfo));
    CK_RT(cudaMemcpy(&info, dInfo, sizeof info, cudaMemcpyDeviceToHost));
    printf("Xgetrf info: %d\n", info);
    CK(cusolverDnXgetrs(h, params, CUBLAS_OP_N, N, NRHS, CUDA_R_32F, dA, N, dIpiv64, CUDA_R_32F,
                        dB, N, dInfo));
    CK_RT(cudaMemcpy(&info, dInfo, sizeof info, cudaMemcpyDeviceToHost));
    printf("Xgetrs info: %d\n", info);
    CK_RT(cudaStreamSynchronize(stream));
    CK_RT(cudaMemcpy(x, dB, sizeof x, cudaMemcpyDeviceToHost));
    ok &= check("Xgetrf+Xgetrs (64-bit API)", x);

    free(hWork);
    CK(cusolverDnDestroyParams(params));
    CK(cusolverDnDestroy(h));
    CK_RT(cudaStreamDestroy(stream));
    cudaFree(dA), cudaFree(dB), cudaFree(dWork), cudaFree(dIpiv), cudaFree(dInfo);
    cudaFree(dIpiv64), cudaFree(dWork64);
    return ok ? 0 : 1;
}
