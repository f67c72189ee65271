/* Bad input to the cuBLASLt stub: forged handles and descriptors, device
 * memory the client never allocated (as a workspace, as a matrix, as the
 * bias pointer attribute), a workspace larger than its allocation, attribute
 * buffers of the wrong size, a destroyed descriptor. Each must come back as
 * a CUBLAS_STATUS_* error, never a crash. Run it forwarded (natively a
 * forged descriptor crashes NVIDIA's library: descriptors are pointers it
 * dereferences). Prints one line per case: the call and cuBLASLt's name for
 * what it returned; exit 0 when every case failed cleanly. The cases after
 * the first need device memory (a GPU, or tests/cublasLt's fake device).
 * One of them is another client's memory: a child process (its own session)
 * allocates, sends the address and keeps the memory until the parent has
 * tried it as its workspace. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

static int failed_cleanly(const char *what, cublasStatus_t s)
{
    printf("%s: %s\n", what, cublasLtGetStatusName(s));
    return s != CUBLAS_STATUS_SUCCESS;
}

#define NOWHERE ((void *)(uintptr_t)0x7f0000001000ull) /* never allocated here */

/* Another client: a child process allocates 2 x 64 MiB and 1 MiB (far from
 * the parent's few small allocations) and sends the last address; it keeps
 * its memory until *release is written to. 0 when it could not allocate. */
static uint64_t other_clients_memory(pid_t *pid, int *release)
{
    int up[2], down[2];
    uint64_t v = 0;
    *pid = -1;
    if (pipe(up) != 0) return 0;
    if (pipe(down) != 0) {
        close(up[0]), close(up[1]);
        return 0;
    }
    fflush(stdout);
    *pid = fork();
    if (*pid == 0) {
        close(up[0]), close(down[1]);
        void *a = NULL, *b = NULL, *c = NULL;
        if (cudaMalloc(&a, 64u << 20) == cudaSuccess && cudaMalloc(&b, 64u << 20) == cudaSuccess &&
            cudaMalloc(&c, 1u << 20) == cudaSuccess)
            v = (uint64_t)(uintptr_t)c;
        if (write(up[1], &v, sizeof v) != (ssize_t)sizeof v) _exit(1);
        char x;
        if (read(down[0], &x, 1) < 0) _exit(1);
        cudaFree(a), cudaFree(b), cudaFree(c);
        _exit(0);
    }
    close(up[1]), close(down[0]);
    if (*pid < 0 || read(up[0], &v, sizeof v) != (ssize_t)sizeof v) v = 0;
    close(up[0]);
    *release = down[1];
    return v;
}

int main(void)
{
    int ok = 1;
    float alpha = 1.0f, beta = 0.0f;
    size_t w = 0;
    int32_t v = 0;
    cublasLtHandle_t forged_h = (cublasLtHandle_t)(uintptr_t)0x5eed1234;
    cublasLtMatmulDesc_t forged_d = (cublasLtMatmulDesc_t)(uintptr_t)0x5eed5678;
    cublasLtMatrixLayout_t forged_l = (cublasLtMatrixLayout_t)(uintptr_t)0x5eed9abc;
    cublasLtMatmulPreference_t forged_p = (cublasLtMatmulPreference_t)(uintptr_t)0x5eeddef0;
    cublasLtMatmulHeuristicResult_t res[2];
    int n = 0;
    ok &= failed_cleanly("forged descriptor: cublasLtMatmulDescSetAttribute",
                         cublasLtMatmulDescSetAttribute(forged_d, CUBLASLT_MATMUL_DESC_TRANSA, &v,
                                                        sizeof v));
    ok &= failed_cleanly("forged descriptor: cublasLtMatmulDescGetAttribute",
                         cublasLtMatmulDescGetAttribute(forged_d, CUBLASLT_MATMUL_DESC_TRANSA, &v,
                                                        sizeof v, &w));
    ok &= failed_cleanly("forged descriptor: cublasLtMatmul",
                         cublasLtMatmul(forged_h, forged_d, &alpha, NOWHERE, forged_l, NOWHERE,
                                        forged_l, &beta, NOWHERE, forged_l, NOWHERE, forged_l,
                                        NULL, NULL, 0, 0));
    ok &= failed_cleanly("forged layout: cublasLtMatrixLayoutDestroy",
                         cublasLtMatrixLayoutDestroy(forged_l));
    ok &= failed_cleanly("forged handle: cublasLtMatmulAlgoGetHeuristic",
                         cublasLtMatmulAlgoGetHeuristic(forged_h, forged_d, forged_l, forged_l,
                                                        forged_l, forged_l, forged_p, 2, res, &n));

    /* with device memory: real handle and descriptors, bad addresses and sizes */
    float *dA = NULL;
    void *small = NULL;
    if (cudaMalloc((void **)&dA, 64 * sizeof(float)) == cudaSuccess &&
        cudaMalloc(&small, 256) == cudaSuccess) {
        cublasLtHandle_t lt;
        cublasLtMatmulDesc_t desc;
        cublasLtMatrixLayout_t l;
        LT_CHECK(cublasLtCreate(&lt));
        LT_CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
        LT_CHECK(cublasLtMatrixLayoutCreate(&l, CUDA_R_32F, 4, 4, 4));
        void *p = NOWHERE;
        ok &= failed_cleanly("bias pointer never allocated: cublasLtMatmulDescSetAttribute",
                             cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                            &p, sizeof p));
        cublasLtEmulationDesc_t forged_e = (cublasLtEmulationDesc_t)(uintptr_t)0x5eed4321;
        ok &= failed_cleanly("forged emulation descriptor: cublasLtMatmulDescSetAttribute",
                             cublasLtMatmulDescSetAttribute(
                                 desc, CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR, &forged_e,
                                 sizeof forged_e));
        char two[2] = {0};
        ok &= failed_cleanly("too-small attribute buffer: cublasLtMatmulDescGetAttribute",
                             cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                                            two, sizeof two, &w));
        ok &= failed_cleanly("too-small attribute value: cublasLtMatmulDescSetAttribute",
                             cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, two,
                                                            sizeof two));
        ok &= failed_cleanly("no buffer for the value: cublasLtMatrixLayoutGetAttribute",
                             cublasLtMatrixLayoutGetAttribute(l, CUBLASLT_MATRIX_LAYOUT_ROWS, NULL,
                                                              8, &w));
        ok &= failed_cleanly("workspace never allocated: cublasLtMatmul",
                             cublasLtMatmul(lt, desc, &alpha, dA, l, dA, l, &beta, dA, l, dA, l,
                                            NULL, NOWHERE, 1024, 0));
        ok &= failed_cleanly("workspace larger than its allocation: cublasLtMatmul",
                             cublasLtMatmul(lt, desc, &alpha, dA, l, dA, l, &beta, dA, l, dA, l,
                                            NULL, small, 1 << 20, 0));
        pid_t other;
        int release = -1;
        uint64_t theirs = other_clients_memory(&other, &release);
        if (theirs)
            ok &= failed_cleanly("workspace of another client: cublasLtMatmul",
                                 cublasLtMatmul(lt, desc, &alpha, dA, l, dA, l, &beta, dA, l, dA,
                                                l, NULL, (void *)(uintptr_t)theirs, 1024, 0));
        else
            printf("workspace of another client: the other client could not allocate\n");
        if (release >= 0) close(release);
        if (other > 0) waitpid(other, NULL, 0);
        ok &= failed_cleanly("matrix never allocated: cublasLtMatmul",
                             cublasLtMatmul(lt, desc, &alpha, NOWHERE, l, dA, l, &beta, dA, l, dA,
                                            l, NULL, NULL, 0, 0));
        LT_CHECK(cublasLtMatrixLayoutDestroy(l));
        LT_CHECK(cublasLtMatmulDescDestroy(desc));
        ok &= failed_cleanly("destroyed descriptor: cublasLtMatmulDescGetAttribute",
                             cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &v,
                                                            sizeof v, &w));
        ok &= failed_cleanly("destroyed descriptor: cublasLtMatmul",
                             cublasLtMatmul(lt, desc, &alpha, dA, l, dA, l, &beta, dA, l, dA, l,
                                            NULL, NULL, 0, 0));
        LT_CHECK(cublasLtDestroy(lt));
        cudaFree(dA);
        cudaFree(small);
    } else {
        printf("no device memory: the cases that need it were not run\n");
    }
    printf("every bad input failed cleanly: %s\n", ok ? "yes" : "NO");
    return ok ? 0 : 1;
}
