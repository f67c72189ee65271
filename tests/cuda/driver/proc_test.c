/* cuGetProcAddress of the CUDA driver stub (no server needed: local):
 * versions map to the ABI form the real driver gives, per-thread flags to the
 * _ptds/_ptsz forms, unknown names and too-low versions fail as the driver
 * does. (Every PFN typedef's type is checked at compile time in
 * specs/cuda/proc.c.) Linked against build/stub/libcuda.so.1. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <cuda.h>

static int fails;

static void expect(const char *sym, int ver, cuuint64_t flags, const char *want)
{
    void *pfn = NULL;
    CUdriverProcAddressQueryResult q = CU_GET_PROC_ADDRESS_SUCCESS;
    CUresult e = cuGetProcAddress(sym, &pfn, ver, flags, &q);
    void *w = want ? dlsym(RTLD_DEFAULT, want) : NULL;
    int ok = want ? (e == CUDA_SUCCESS && q == CU_GET_PROC_ADDRESS_SUCCESS && pfn == w && w)
                  : (e == CUDA_ERROR_NOT_FOUND && pfn == NULL);
    printf("%s %s v%d flags %llu -> %s (%d, status %d)\n", ok ? "ok  " : "FAIL", sym, ver,
           (unsigned long long)flags, want ? want : "NOT_FOUND", (int)e, (int)q);
    fails += !ok;
}

static void expect_status(const char *sym, int ver, CUdriverProcAddressQueryResult want)
{
    void *pfn = (void *)1;
    CUdriverProcAddressQueryResult q = CU_GET_PROC_ADDRESS_SUCCESS;
    CUresult e = cuGetProcAddress(sym, &pfn, ver, 0, &q);
    int ok = e == CUDA_ERROR_NOT_FOUND && q == want && pfn == NULL;
    printf("%s %s v%d -> status %d (want %d)\n", ok ? "ok  " : "FAIL", sym, ver, (int)q, (int)want);
    fails += !ok;
}

int main(void)
{
    const cuuint64_t PT = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    expect("cuCtxCreate", 2000, 0, "cuCtxCreate");
    expect("cuCtxCreate", 3020, 0, "cuCtxCreate_v2");
    expect("cuCtxCreate", 11040, 0, "cuCtxCreate_v3");
    expect("cuCtxCreate", 12050, 0, "cuCtxCreate_v4");
    expect("cuCtxCreate", 13000, 0, "cuCtxCreate_v4");
    expect("cuMemAlloc", 13000, 0, "cuMemAlloc_v2");
    expect("cuMemcpyHtoD", 13000, 0, "cuMemcpyHtoD_v2");
    expect("cuMemcpyHtoD", 13000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, "cuMemcpyHtoD_v2");
    expect("cuMemcpyHtoD", 13000, PT, "cuMemcpyHtoD_v2_ptds");
    expect("cuMemcpyHtoD", 6000, PT, "cuMemcpyHtoD_v2"); /* no per-thread form before 7.0 */
    expect("cuLaunchKernel", 13000, PT, "cuLaunchKernel_ptsz");
    expect("cuLaunchKernel", 13000, 0, "cuLaunchKernel");
    expect("cuStreamSynchronize", 13000, PT, "cuStreamSynchronize_ptsz");
    expect("cuGetProcAddress", 13000, 0, "cuGetProcAddress_v2");
    expect("cuGetProcAddress", 11030, 0, "cuGetProcAddress");
    expect("cuGetExportTable", 13000, 0, "cuGetExportTable");
    expect("cuInit", 13000, 0, "cuInit");
    expect("cuNoSuchFunction", 13000, 0, NULL);
    expect_status("cuNoSuchFunction", 13000, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    expect_status("cuCtxCreate", 1000, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    expect_status("cuLibraryLoadData", 11000, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    printf("%d failure(s)\n", fails);
    return fails != 0;
}
