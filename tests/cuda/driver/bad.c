/* Bad input to the CUDA driver stub, forwarded (tests/cuda/driver_badinput.sh):
 * forged handles, an unsupported call, an unrecognizable module image, an
 * unknown export table, an async call the server rejects. Each must be the
 * API's error value (and a log line where the stub explains), never a crash
 * or a hang. Prints one line per case; the script checks them. */
#include <stdio.h>
#include <string.h>

#include <cuda.h>

static void show(const char *what, CUresult e) { printf("%s: %d\n", what, (int)e); }

int main(int argc, char **argv)
{
    CUresult e;
    CUresult init = cuInit(0); /* whatever the server's driver answers */
    show("forged context", cuCtxSetCurrent((CUcontext)(uintptr_t)0x12345678));
    show("forged stream", cuStreamSynchronize((CUstream)(uintptr_t)0xdead0000));
    CUfunction f;
    show("forged module", cuModuleGetFunction(&f, (CUmodule)(uintptr_t)0xbeef00, "k"));
    show("forged function launch",
         cuLaunchKernel((CUfunction)(uintptr_t)0x7770000, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    void *fp = NULL; /* a host function pointer of the server's process: refused */
    show("unsupported", cuLibraryGetUnifiedFunction(&fp, NULL, "k"));
    show("unsupported again", cuLibraryGetUnifiedFunction(&fp, NULL, "k"));
    static const unsigned char junk[64] = {0x01, 0x02, 0x03, 0x04, 0xff};
    CUmodule m;
    show("bad image", cuModuleLoadData(&m, junk));
    CUuuid id;
    memset(&id, 0xab, sizeof id);
    const void *table = &id;
    e = cuGetExportTable(&table, &id);
    printf("unknown export table: %d %s\n", (int)e, table ? "non-NULL" : "NULL");
    e = cuGetExportTable(&table, &id);
    printf("unknown export table again: %d\n", (int)e);
    /* an async call on a forged stream: the guest cannot vouch for the
     * stream, so the call goes synchronously and the refusal is this call's
     * own error, as natively; nothing is left pending for the next call */
    show("async memset on a forged stream", cuMemsetD32Async(0, 0, 0, (CUstream)(uintptr_t)0xdead0000));
    int n = 0;
    e = cuDeviceGetCount(&n);
    printf("next sync call: %s\n", e == init ? "the driver's own answer" : "a stale error");
    /* with a driver and a PTX file: a kernel parameter buffer of the wrong size */
    if (init == CUDA_SUCCESS && argc > 1) {
        CUdevice dev;
        CUcontext ctx;
        CUmodule mod;
        CUfunction axpy;
        FILE *f = fopen(argv[1], "rb");
        static char ptx[1 << 16];
        size_t n = f ? fread(ptx, 1, sizeof ptx - 1, f) : 0;
        if (f) fclose(f);
        ptx[n] = 0;
        if (cuDeviceGet(&dev, 0) == CUDA_SUCCESS && cuDevicePrimaryCtxRetain(&ctx, dev) == CUDA_SUCCESS &&
            cuCtxSetCurrent(ctx) == CUDA_SUCCESS && cuModuleLoadData(&mod, ptx) == CUDA_SUCCESS &&
            cuModuleGetFunction(&axpy, mod, "axpy") == CUDA_SUCCESS) {
            char small[4] = {0};
            size_t sz = sizeof small;
            void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, small, CU_LAUNCH_PARAM_BUFFER_SIZE, &sz,
                             CU_LAUNCH_PARAM_END};
            show("wrong parameter buffer size", cuLaunchKernel(axpy, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra));
            show("no kernelParams", cuLaunchKernel(axpy, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
            show("synchronize after the refused launches", cuCtxSynchronize());
        } else {
            printf("wrong parameter buffer size: could not load %s\n", argv[1]);
        }
    }
    void *pfn = NULL;
    show("cuGetProcAddress unknown", cuGetProcAddress("cuNoSuchThing", &pfn, 13000, 0, NULL));
    printf("done\n");
    return 0;
}
