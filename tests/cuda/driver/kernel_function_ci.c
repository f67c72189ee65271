/* A kernel's function kept in the guest per current context (specs/cuda.yaml:
 * cuKernelGetFunction, `cache: {group: functions, thread_state:
 * [current_context]}`): tests/cuda/settle_ci.sh runs this natively and
 * through the driver stub against tests/cuda/driver/fake_driver.c (whose
 * second context has other function objects than the primary one) and
 * requires the same output and the calls marked "kept" answered in the
 * guest: a question asked again in the same context is kept, in another
 * context it is asked, and a context's end or the library's unload forgets. */
#include <stdio.h>

#include <cuda.h>

static const char image[] = "// a PTX text (the stand-in driver reads none of it)\n"
                            ".version 8.0\n.target sm_80\n.address_size 64\n";
static CUfunction first; /* the primary context's, to compare with */

static CUfunction kernel_function(const char *what, CUkernel k)
{
    CUfunction f = NULL;
    CUresult e = cuKernelGetFunction(&f, k);
    if (!first && e == CUDA_SUCCESS) first = f;
    int blocks = -1;
    CUresult o = e == CUDA_SUCCESS ? cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, 128, 0)
                                   : CUDA_ERROR_INVALID_HANDLE;
    printf("%s: cuKernelGetFunction %d, %s, usable %d (%d blocks)\n", what, (int)e,
           e != CUDA_SUCCESS ? "none" : f == first ? "the primary context's" : "another function",
           (int)o, blocks);
    return f;
}

int main(void)
{
    CUdevice d;
    CUcontext primary, second;
    CUlibrary lib;
    CUkernel k;
    if (cuInit(0) || cuDeviceGet(&d, 0) || cuDevicePrimaryCtxRetain(&primary, d) ||
        cuCtxSetCurrent(primary) || cuLibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0) ||
        cuLibraryGetKernel(&k, lib, "_Z2k1Pi")) {
        printf("setup failed\n");
        return 1;
    }
    kernel_function("primary context", k);
    kernel_function("again", k); /* kept 1 */
    printf("cuCtxCreate: %d\n", (int)cuCtxCreate(&second, NULL, 0, d));
    kernel_function("second context", k);
    kernel_function("again", k); /* kept 2 */
    printf("cuCtxSetCurrent(primary): %d\n", (int)cuCtxSetCurrent(primary));
    kernel_function("primary context again", k); /* kept 3 */
    printf("cuCtxDestroy(second): %d\n", (int)cuCtxDestroy(second));
    /* an ended context makes every thread's current one unknown to the
     * guest (thread_state forget_all) until a call tells it again */
    CUcontext cur = NULL;
    CUresult e = cuCtxGetCurrent(&cur);
    printf("cuCtxGetCurrent: %d, %s\n", (int)e, cur == primary ? "primary" : cur ? "other" : "none");
    kernel_function("after a context ended", k);
    kernel_function("again", k); /* kept 4 */
    printf("cuCtxSetCurrent(NULL): %d\n", (int)cuCtxSetCurrent(NULL));
    kernel_function("no current context", k);
    printf("cuCtxSetCurrent(primary): %d\n", (int)cuCtxSetCurrent(primary));
    printf("cuLibraryUnload: %d\n", (int)cuLibraryUnload(lib));
    if (cuLibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0) ||
        cuLibraryGetKernel(&k, lib, "_Z2k1Pi")) {
        printf("reload failed\n");
        return 1;
    }
    kernel_function("after a reload", k);
    return 0;
}
