/* Bad input to the cuBLAS stub: a forged handle, a NULL handle, device
 * memory the client never allocated, a workspace larger than its
 * allocation. Each must come back as an error value, never a crash. Run it
 * forwarded (natively a forged handle pointer crashes NVIDIA's library:
 * cuBLAS handles are pointers it dereferences). Prints one line per case:
 * the call and cuBLAS's name for what it returned; exit 0 when every case
 * failed cleanly. With a GPU it also checks a real handle's answers. */
#include <stdint.h>
#include <string.h>

#include "common.h"

static int failed_cleanly(const char *what, cublasStatus_t s)
{
    printf("%s: %s\n", what, cublasGetStatusName(s));
    return s != CUBLAS_STATUS_SUCCESS;
}

int main(void)
{
    int ok = 1;
    float alpha = 1.0f, beta = 0.0f, host[4] = {1, 2, 3, 4}, res = 0;
    int version = 0;
    cublasPointerMode_t pm;
    cublasMath_t math;
    cublasHandle_t forged = (cublasHandle_t)(uintptr_t)0x5eed1234;
    ok &= failed_cleanly("forged handle: cublasSgemm_v2",
                         cublasSgemm_v2(forged, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &alpha,
                                        (const float *)(uintptr_t)0x1000, 2,
                                        (const float *)(uintptr_t)0x1000, 2, &beta,
                                        (float *)(uintptr_t)0x1000, 2));
    ok &= failed_cleanly("forged handle: cublasGetPointerMode_v2",
                         cublasGetPointerMode_v2(forged, &pm));
    ok &= failed_cleanly("forged handle: cublasSetPointerMode_v2",
                         cublasSetPointerMode_v2(forged, CUBLAS_POINTER_MODE_DEVICE));
    ok &= failed_cleanly("forged handle: cublasSdot_v2",
                         cublasSdot_v2(forged, 4, (const float *)(uintptr_t)0x1000, 1,
                                       (const float *)(uintptr_t)0x1000, 1, &res));
    ok &= failed_cleanly("forged handle: cublasGetMathMode", cublasGetMathMode(forged, &math));
    ok &= failed_cleanly("forged handle: cublasDestroy_v2", cublasDestroy_v2(forged));
    ok &= failed_cleanly("NULL handle: cublasSgemm_v2",
                         cublasSgemm_v2(NULL, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &alpha, NULL, 2,
                                        NULL, 2, &beta, NULL, 2));
    ok &= failed_cleanly("unallocated device memory: cublasSetVector",
                         cublasSetVector(4, sizeof(float), host, 1,
                                         (void *)(uintptr_t)0x7f0000001000ull, 1));
    ok &= failed_cleanly("unallocated device memory: cublasGetVector",
                         cublasGetVector(4, sizeof(float), (const void *)(uintptr_t)0x7f0000001000ull,
                                         1, host, 1));

    /* with a GPU: a real handle, device memory of another size */
    cublasHandle_t h;
    if (cublasCreate_v2(&h) == CUBLAS_STATUS_SUCCESS && cublasInit() == CUBLAS_STATUS_SUCCESS) {
        void *d = NULL;
        if (cublasAlloc(256, 1, &d) == CUBLAS_STATUS_SUCCESS) {
            ok &= failed_cleanly("workspace larger than its allocation: cublasSetWorkspace_v2",
                                 cublasSetWorkspace_v2(h, d, 1 << 20));
            ok &= failed_cleanly("copy past the allocation: cublasSetVector",
                                 cublasSetVector(128, sizeof(float), host, 0, d, 1));
            cublasFree(d);
        }
        printf("real handle: cublasGetVersion_v2: %s\n",
               cublasGetStatusName(cublasGetVersion_v2(h, &version)));
        cublasDestroy_v2(h);
        ok &= failed_cleanly("destroyed handle: cublasGetPointerMode_v2",
                             cublasGetPointerMode_v2(h, &pm));
        cublasShutdown();
    }
    printf("every bad input failed cleanly: %s\n", ok ? "yes" : "NO");
    return ok ? 0 : 1;
}
