/* Globals' addresses asked again and again, as NVIDIA's static runtime
 * does around every cudaMemcpyToSymbol (tests/cuda/globals_ci.sh runs it
 * natively and through the driver stub, against tests/cuda/driver/
 * fake_globals.c; CI has no GPU). Prints every answer; the script compares
 * the outputs and counts what reached the server: each (library or module,
 * name, context) once, a failing name each time, nothing kept past an
 * unload or into another context. */
#include <stdio.h>

#include <cuda.h>

static const char image[] = "// a PTX text (the stand-in driver reads none of it)\n"
                            ".version 8.0\n.target sm_80\n.address_size 64\n";

static void ask_lib(const char *what, CUlibrary lib, const char *name, int times)
{
    for (int i = 0; i < times; i++) {
        CUdeviceptr p = 0;
        size_t n = 0;
        CUresult e = cuLibraryGetGlobal(&p, &n, lib, name);
        printf("%s %s #%d: %d %#llx %zu\n", what, name, i, (int)e, (unsigned long long)p, n);
    }
}

static void ask_mod(const char *what, CUmodule mod, const char *name, int times)
{
    for (int i = 0; i < times; i++) {
        CUdeviceptr p = 0;
        size_t n = 0;
        CUresult e = cuModuleGetGlobal(&p, &n, mod, name);
        printf("%s %s #%d: %d %#llx %zu\n", what, name, i, (int)e, (unsigned long long)p, n);
    }
}

int main(void)
{
    CUdevice d0, d1;
    CUcontext c0, c1;
    CUlibrary lib;
    CUmodule mod;
    if (cuInit(0) || cuDeviceGet(&d0, 0) || cuDeviceGet(&d1, 1) || cuDevicePrimaryCtxRetain(&c0, d0) ||
        cuDevicePrimaryCtxRetain(&c1, d1) || cuCtxSetCurrent(c0)) {
        printf("setup failed\n");
        return 1;
    }
    printf("library load: %d\n", (int)cuLibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0));
    ask_lib("ctx0", lib, "coef", 10);   /* one question */
    ask_lib("ctx0", lib, "result", 10); /* one */
    ask_lib("ctx0", lib, "nosuch", 3);  /* three: errors are not kept */
    CUdeviceptr p = 0;
    printf("NULL outs: %d\n", (int)cuLibraryGetGlobal(NULL, NULL, lib, "coef"));
    size_t n = 0;
    printf("size only: %d %zu\n", (int)cuLibraryGetGlobal(NULL, &n, lib, "coef"), n);
    printf("address only: %d %#llx\n", (int)cuLibraryGetGlobal(&p, NULL, lib, "coef"),
           (unsigned long long)p);
    cuCtxSetCurrent(c1);
    ask_lib("ctx1", lib, "coef", 5); /* one: another context, another address */
    printf("module load: %d\n", (int)cuModuleLoadData(&mod, image));
    ask_mod("mod", mod, "result", 10); /* one */
    printf("module unload: %d\n", (int)cuModuleUnload(mod));
    printf("module load again: %d\n", (int)cuModuleLoadData(&mod, image));
    ask_mod("mod again", mod, "result", 3); /* one (a new module, perhaps the same handle) */
    cuCtxSetCurrent(c0);
    ask_lib("ctx0 again", lib, "coef", 3); /* none: still kept */
    printf("library unload: %d\n", (int)cuLibraryUnload(lib));
    printf("library load again: %d\n", (int)cuLibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0));
    ask_lib("reloaded", lib, "coef", 3); /* one */
    return 0;
}
