/* Bad input to the cuSOLVER stub: a forged handle and params object, device
 * memory of no allocation of this client (another client's, or none), a
 * workspace whose stated size runs past its allocation. Each must come back
 * as an error value, never a crash (a forged params object reaches the
 * library as NULL). Run it forwarded (natively a forged
 * handle pointer crashes NVIDIA's library). Prints one line per case: the
 * call and the status it returned; exit 0 when every case failed cleanly. */
#include <stdint.h>

#include <cusolverDn.h>

#include "common.h"

static int failed_cleanly(const char *what, cusolverStatus_t s)
{
    printf("%s: status %d\n", what, (int)s);
    return s != CUSOLVER_STATUS_SUCCESS;
}

int main(void)
{
    int done;
    pid_t child;
    void *foreign = foreign_device_pointer(&done, &child);
    int ok = 1, lwork = 0;
    cusolverDnHandle_t forged = (cusolverDnHandle_t)(uintptr_t)0x5eed1234;
    cusolverDnParams_t fparams = (cusolverDnParams_t)(uintptr_t)0x5eed5678;
    float *nowhere = (float *)(uintptr_t)0x7f0000001000ull;
    ok &= failed_cleanly("forged handle: cusolverDnSpotrf_bufferSize",
                         cusolverDnSpotrf_bufferSize(forged, CUBLAS_FILL_MODE_LOWER, 4, NULL, 4,
                                                     &lwork));
    ok &= failed_cleanly("forged handle: cusolverDnSetStream", cusolverDnSetStream(forged, 0));
    ok &= failed_cleanly("forged handle: cusolverDnDestroy", cusolverDnDestroy(forged));
    ok &= failed_cleanly("forged params: cusolverDnSetAdvOptions",
                         cusolverDnSetAdvOptions(fparams, CUSOLVERDN_GETRF, CUSOLVER_ALG_0));
    ok &= failed_cleanly("NULL handle: cusolverDnSgetrf",
                         cusolverDnSgetrf(NULL, 4, 4, NULL, 4, NULL, NULL, NULL));

    cusolverDnHandle_t h;
    if (cusolverDnCreate(&h) == CUSOLVER_STATUS_SUCCESS) {
        float *dA = NULL, *dWork = NULL;
        int *dInfo = NULL;
        if (cudaMalloc((void **)&dA, 16 * sizeof(float)) == cudaSuccess &&
            cudaMalloc((void **)&dWork, 64 * sizeof(float)) == cudaSuccess &&
            cudaMalloc((void **)&dInfo, sizeof(int)) == cudaSuccess) {
            ok &= failed_cleanly("unallocated device memory: cusolverDnSpotrf",
                                 cusolverDnSpotrf(h, CUBLAS_FILL_MODE_LOWER, 4, nowhere, 4, dWork,
                                                  64, dInfo));
            if (foreign)
                ok &= failed_cleanly("another client's device memory: cusolverDnSpotrf",
                                     cusolverDnSpotrf(h, CUBLAS_FILL_MODE_LOWER, 4, (float *)foreign,
                                                      4, dWork, 64, dInfo));
            ok &= failed_cleanly("unallocated devInfo: cusolverDnSpotrf",
                                 cusolverDnSpotrf(h, CUBLAS_FILL_MODE_LOWER, 4, dA, 4, dWork, 64,
                                                  (int *)nowhere));
            ok &= failed_cleanly("workspace larger than its allocation: cusolverDnSpotrf",
                                 cusolverDnSpotrf(h, CUBLAS_FILL_MODE_LOWER, 4, dA, 4, dWork,
                                                  1 << 20, dInfo));
            cusolverDnParams_t params;
            if (cusolverDnCreateParams(&params) == CUSOLVER_STATUS_SUCCESS) {
                int64_t *dIpiv = NULL;
                if (cudaMalloc((void **)&dIpiv, 4 * sizeof(int64_t)) == cudaSuccess)
                    ok &= failed_cleanly(
                        "device workspace larger than its allocation: cusolverDnXgetrf",
                        cusolverDnXgetrf(h, params, 4, 4, CUDA_R_32F, dA, 4, dIpiv, CUDA_R_32F,
                                         dWork, 1 << 20, NULL, 0, dInfo));
                cudaFree(dIpiv);
                cusolverDnDestroyParams(params);
            }
        }
        cudaFree(dA), cudaFree(dWork), cudaFree(dInfo);
        cusolverDnDestroy(h);
        ok &= failed_cleanly("destroyed handle: cusolverDnSetStream", cusolverDnSetStream(h, 0));
    }
    foreign_done(done, child);
    printf("every bad input failed cleanly: %s\n", ok ? "yes" : "NO");
    return ok ? 0 : 1;
}
