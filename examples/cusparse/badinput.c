/* Bad input to the cuSPARSE stub: a forged handle, forged descriptors, device
 * memory of no allocation of this client (another client's, or none). Each
 * must come back as an error value, never a crash. Run it forwarded
 * (natively a forged handle pointer crashes NVIDIA's library: handles and
 * descriptors are pointers it dereferences; another client's device memory
 * would be read). Prints one line per case: the
 * call and cuSPARSE's name for what it returned; exit 0 when every case
 * failed cleanly. */
#include <stdint.h>

#include <cusparse.h>

#include "common.h"

static int failed_cleanly(const char *what, cusparseStatus_t s)
{
    printf("%s: %s\n", what, cusparseGetErrorName(s));
    return s != CUSPARSE_STATUS_SUCCESS;
}

int main(void)
{
    int done;
    pid_t child;
    void *foreign = foreign_device_pointer(&done, &child);
    int ok = 1;
    float alpha = 1.0f, beta = 0.0f;
    size_t size = 0;
    cusparsePointerMode_t pm;
    cusparseHandle_t forged = (cusparseHandle_t)(uintptr_t)0x5eed1234;
    cusparseSpMatDescr_t fmat = (cusparseSpMatDescr_t)(uintptr_t)0x5eed5678;
    cusparseDnVecDescr_t fvec = (cusparseDnVecDescr_t)(uintptr_t)0x5eed9abc;
    ok &= failed_cleanly("forged handle: cusparseSpMV",
                         cusparseSpMV(forged, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, fmat, fvec,
                                      &beta, fvec, CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, NULL));
    ok &= failed_cleanly("forged handle: cusparseGetPointerMode", cusparseGetPointerMode(forged, &pm));
    ok &= failed_cleanly("forged handle: cusparseSetPointerMode",
                         cusparseSetPointerMode(forged, CUSPARSE_POINTER_MODE_DEVICE));
    ok &= failed_cleanly("forged handle: cusparseSetStream", cusparseSetStream(forged, 0));
    ok &= failed_cleanly("forged handle: cusparseDestroy", cusparseDestroy(forged));
    ok &= failed_cleanly("NULL handle: cusparseSpMV_bufferSize",
                         cusparseSpMV_bufferSize(NULL, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha,
                                                 fmat, fvec, &beta, fvec, CUDA_R_32F,
                                                 CUSPARSE_SPMV_ALG_DEFAULT, &size));
    /* the descriptors' own calls: a forged one reaches the library as NULL */
    int64_t n = 0;
    void *values = NULL;
    cudaDataType vt;
    ok &= failed_cleanly("forged descriptor: cusparseDnVecGet", cusparseDnVecGet(fvec, &n, &values, &vt));
    int64_t rows = 0, cols = 0, nnz = 0;
    ok &= failed_cleanly("forged descriptor: cusparseSpMatGetSize",
                         cusparseSpMatGetSize(fmat, &rows, &cols, &nnz));
    /* device memory the client never allocated */
    cusparseDnVecDescr_t v;
    ok &= failed_cleanly("unallocated device memory: cusparseCreateDnVec",
                         cusparseCreateDnVec(&v, 4, (void *)(uintptr_t)0x7f0000001000ull, CUDA_R_32F));

    /* device memory of another client (a process of its own, alive) */
    if (foreign)
        ok &= failed_cleanly("another client's device memory: cusparseCreateDnVec",
                             cusparseCreateDnVec(&v, 4, foreign, CUDA_R_32F));
    foreign_done(done, child);

    /* with a device: a real handle and forged descriptors in one call */
    cusparseHandle_t h;
    if (cusparseCreate(&h) == CUSPARSE_STATUS_SUCCESS) {
        ok &= failed_cleanly("real handle, forged descriptors: cusparseSpMV",
                             cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, fmat, fvec,
                                          &beta, fvec, CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT,
                                          NULL));
        float *d = NULL;
        if (cudaMalloc((void **)&d, 4 * sizeof(float)) == cudaSuccess) {
            /* an address inside the allocation is fine, one past its end is not */
            printf("own device memory: cusparseCreateDnVec: %s\n",
                   cusparseGetErrorName(cusparseCreateDnVec(&v, 4, d, CUDA_R_32F)));
            cusparseDestroyDnVec(v);
            ok &= failed_cleanly("past the allocation: cusparseCreateDnVec",
                                 cusparseCreateDnVec(&v, 4, (char *)d + (1 << 20), CUDA_R_32F));
            cudaFree(d);
        }
        cusparseDestroy(h);
        ok &= failed_cleanly("destroyed handle: cusparseGetPointerMode", cusparseGetPointerMode(h, &pm));
    }
    printf("every bad input failed cleanly: %s\n", ok ? "yes" : "NO");
    return ok ? 0 : 1;
}
