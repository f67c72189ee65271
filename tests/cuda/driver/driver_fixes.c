/* The driver stub's fixes after the first GPU run, as a driver-API program
 * whose output must be the same natively and forwarded (tests/gpu/driver.sh,
 * cuda.driver.diff.fixes.* in CI, where both stop at cuInit):
 *   - a CUkernel cast to CUfunction (CUDA 12+) in cuFuncGetAttribute,
 *     cuFuncSetAttribute, the occupancy queries and cuLaunchKernel;
 *   - launch configurations the driver refuses return its error at the call
 *     (a block of 4096 threads, a grid of 0, too much dynamic shared memory),
 *     and the next call is not affected;
 *   - a host-to-device copy larger than its allocation fails without the
 *     stub reading past the host buffer, and the session goes on;
 *   - a library loaded with CU_LIBRARY_BINARY_IS_PRESERVED and no option
 *     values array, as cuBLASLt loads its kernels (from the fat binary).
 *   driver_fixes KERNELS.ptx KERNELS.fatbin */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#define CHECK(call) if (check(#call, (call))) return 1
static int check(const char *what, CUresult e)
{
    char w[40];
    snprintf(w, sizeof w, "%.*s", (int)(strchr(what, '(') ? strchr(what, '(') - what : 39), what);
    printf("%-28s %d%s\n", w, (int)e, e == CUDA_SUCCESS ? " ok" : "");
    return e != CUDA_SUCCESS;
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    if (b) b[n] = 0;
    fclose(f);
    return b;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s KERNELS.ptx KERNELS.fatbin\n", argv[0]);
        return 2;
    }
    CUdevice dev;
    CUcontext ctx;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    char *ptx = read_all(argv[1]);
    if (!ptx) { printf("cannot read %s\n", argv[1]); return 1; }

    /* a library's kernel, used where a CUfunction is taken */
    CUlibrary lib;
    CUkernel k;
    CHECK(cuLibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0));
    CHECK(cuLibraryGetKernel(&k, lib, "axpy"));
    CUfunction kf = (CUfunction)k;
    char *fatbin = read_all(argv[2]);
    if (!fatbin) { printf("cannot read %s\n", argv[2]); return 1; }
    {
        CUlibrary kept;
        CUkernel k2;
        CUlibraryOption keep = CU_LIBRARY_BINARY_IS_PRESERVED;
        CHECK(cuLibraryLoadData(&kept, fatbin, NULL, NULL, 0, &keep, NULL, 1));
        CHECK(cuLibraryGetKernel(&k2, kept, "axpy"));
        CHECK(cuLibraryUnload(kept));
    }
    int threads = 0, blocks = 0, regs = -1;
    /* what the driver answers for each (driver 580: CUDA_ERROR_INVALID_HANDLE
     * for the attribute calls on a cast kernel); the stub must answer the same */
    CUresult r = cuFuncGetAttribute(&threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, kf);
    printf("kernel as function: get max threads: %d, > 0: %d\n", (int)r, r == CUDA_SUCCESS && threads > 0);
    r = cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, kf);
    printf("kernel as function: get registers: %d, >= 0: %d\n", (int)r, r == CUDA_SUCCESS && regs >= 0);
    r = cuFuncSetAttribute(kf, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1024);
    printf("kernel as function: set dynamic shared memory: %d\n", (int)r);
    r = cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kf, 128, 0);
    printf("kernel as function: occupancy: %d, > 0: %d\n", (int)r, r == CUDA_SUCCESS && blocks > 0);
    r = cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks, kf, 128, 0, 0);
    printf("kernel as function: occupancy with flags: %d\n", (int)r);

    enum { N = 1000 };
    float hx[N], hy[N], out[N];
    for (int i = 0; i < N; i++) hx[i] = (float)i, hy[i] = 1.0f;
    CUdeviceptr dx, dy;
    CHECK(cuMemAlloc(&dx, sizeof hx));
    CHECK(cuMemAlloc(&dy, sizeof hy));
    CHECK(cuMemcpyHtoD(dx, hx, sizeof hx));
    CHECK(cuMemcpyHtoD(dy, hy, sizeof hy));
    float a = 2.0f;
    int n = N;
    void *args[] = {&a, &dx, &dy, &n};
    CHECK(cuLaunchKernel(kf, (N + 127) / 128, 1, 1, 128, 1, 1, 0, NULL, args, NULL));
    CHECK(cuCtxSynchronize());
    CHECK(cuMemcpyDtoH(out, dy, sizeof out));
    int bad = 0;
    for (int i = 0; i < N; i++) bad += out[i] != 2.0f * i + 1.0f;
    printf("kernel launched as a function: %d wrong\n", bad);

    /* configurations the driver refuses: its error at the call */
    printf("block of 4096 threads: %d\n", (int)cuLaunchKernel(kf, 1, 1, 1, 4096, 1, 1, 0, NULL, args, NULL));
    printf("block 1 x 1 x 65: %d\n", (int)cuLaunchKernel(kf, 1, 1, 1, 1, 1, 65, 0, NULL, args, NULL));
    printf("grid of 0: %d\n", (int)cuLaunchKernel(kf, 0, 1, 1, 32, 1, 1, 0, NULL, args, NULL));
    printf("1 MiB of dynamic shared memory: %d\n",
           (int)cuLaunchKernel(kf, 1, 1, 1, 32, 1, 1, 1u << 20, NULL, args, NULL));
    CHECK(cuCtxSynchronize()); /* nothing left over from the refused launches */

    /* a copy past its allocation: the driver's error, nothing read past hx */
    CUresult e = cuMemcpyHtoD(dx, hx, (size_t)1 << 30);
    printf("oversized copy is an error: %d\n", e != CUDA_SUCCESS);
    e = cuMemcpyDtoH(out, dx, (size_t)1 << 30);
    printf("oversized copy back is an error: %d\n", e != CUDA_SUCCESS);
    CHECK(cuMemcpyDtoH(out, dx, sizeof out));
    printf("session goes on: %d\n", out[N - 1] == (float)(N - 1));

    CHECK(cuMemFree(dx));
    CHECK(cuMemFree(dy));
    CHECK(cuLibraryUnload(lib));
    CHECK(cuDevicePrimaryCtxRelease(dev));
    free(ptx);
    free(fatbin);
    printf("done\n");
    return 0;
}
