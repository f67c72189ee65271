/* Occupancy answers the driver stub keeps (specs/cuda.yaml: cache group
 * `functions`): tests/cuda/settle_ci.sh runs this natively and through the
 * driver stub against tests/cuda/driver/fake_driver.c and requires the same
 * output, and counts the cuOccupancyMaxActiveBlocksPerMultiprocessor calls
 * answered in the guest (marked "kept" below; every other one must reach the
 * server): a question asked again is kept, until a call changes what the
 * function may take (cuFuncSetAttribute) or ends it (cuModuleUnload). */
#include <stdio.h>

#include <cuda.h>

static const char image[] = "// a PTX text (the stand-in driver reads none of it)\n"
                            ".version 8.0\n.target sm_80\n.address_size 64\n";

static void occupancy(const char *what, CUfunction f, int block, size_t smem)
{
    int n = -1;
    CUresult e = cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, f, block, smem);
    printf("%s: %d blocks of %d threads with %zu bytes of dynamic shared memory (%d)\n", what, n, block,
           smem, (int)e);
}

int main(void)
{
    CUdevice d;
    CUcontext c;
    CUmodule mod;
    CUfunction f;
    if (cuInit(0) || cuDeviceGet(&d, 0) || cuDevicePrimaryCtxRetain(&c, d) || cuCtxSetCurrent(c) ||
        cuModuleLoadData(&mod, image) || cuModuleGetFunction(&f, mod, "_Z2k1Pi")) {
        printf("setup failed\n");
        return 1;
    }
    occupancy("first", f, 128, 0);
    occupancy("again", f, 128, 0);  /* kept 1 */
    occupancy("again", f, 128, 0);  /* kept 2 */
    occupancy("another block size", f, 256, 0);
    occupancy("64 KiB", f, 128, 65536);
    occupancy("64 KiB again", f, 128, 65536); /* kept 3 */
    printf("cuFuncSetAttribute(max dynamic shared memory 96 KiB): %d\n",
           (int)cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 98304));
    occupancy("64 KiB after the attribute", f, 128, 65536);
    occupancy("64 KiB again", f, 128, 65536); /* kept 4 */
    occupancy("a NULL function", NULL, 128, 0);
    occupancy("a NULL function again", NULL, 128, 0); /* an error: asked again */
    printf("cuModuleUnload: %d\n", (int)cuModuleUnload(mod));
    if (cuModuleLoadData(&mod, image) || cuModuleGetFunction(&f, mod, "_Z2k1Pi")) {
        printf("reload failed\n");
        return 1;
    }
    occupancy("64 KiB after a reload", f, 128, 65536);
    printf("cuCtxSetCacheConfig(prefer shared): %d\n", (int)cuCtxSetCacheConfig(CU_FUNC_CACHE_PREFER_SHARED));
    occupancy("after the cache setting", f, 128, 0);
    return 0;
}
