/* cudaGetDriverEntryPoint and cudaGetDriverEntryPointByVersion in the guest.
 *
 * The real runtime answers them with its driver's cuGetProcAddress. In a
 * forwarded process the only driver is apigen's driver stub (libcuda.so.1 of
 * the same family: preloaded, or first on the library path), whose
 * cuGetProcAddress hands out its own forwarding functions; they share the
 * runtime stub's session, so a pointer the runtime gives a program (PyTorch
 * asks for cuDeviceGet, cuMemCreate, ... this way) reaches the same GPU,
 * streams and memory, when the server serves the driver too
 * (apigen-server-cuda-family; a runtime-only apigen-server-cudart refuses the
 * driver's API: its functions then fail with CUDA_ERROR_DEVICE_UNAVAILABLE,
 * 46, and one log line; tests/gpu/run-all.sh, `modern`). A libcuda.so.1 that
 * is not apigen's (NVIDIA's driver on the guest machine) is never used: a
 * guest does not touch a local GPU; the call then fails with
 * cudaErrorNotSupported and one log line. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>

#include "apigen_cudart.h"
#include "apigen_rt.h"

/* cuGetProcAddress_v2 (12.x on) and the 11.x form without the status; the
 * enums are ints with the runtime's values (cudaEnable* = CU_GET_PROC_ADDRESS_*,
 * cudaDriverEntryPoint* = CU_GET_PROC_ADDRESS_*). */
typedef int (*gpa_v2_fn)(const char *, void **, int, uint64_t, int *);
typedef int (*gpa_v1_fn)(const char *, void **, int, uint64_t);
enum { CU_OK = 0, CU_INVALID_VALUE = 1, CU_NOT_FOUND = 500 };

static gpa_v2_fn gpa_v2;
static gpa_v1_fn gpa_v1;
static pthread_once_t gpa_once = PTHREAD_ONCE_INIT;

static void find_driver_stub(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!lib) lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        apigen_log("cudart: cudaGetDriverEntryPoint: no libcuda.so.1 in this process or on the library "
                   "path (%s); put apigen's driver stub (build/stub/libcuda.so.1) there", dlerror());
        return;
    }
    /* apigen's stubs depend on the guest runtime: a lookup through the
     * library's handle finds its symbols; NVIDIA's driver has none */
    if (!dlsym(lib, "apigen_call_sync")) {
        apigen_log("cudart: cudaGetDriverEntryPoint: the libcuda.so.1 found is not apigen's driver stub "
                   "(a forwarded program must not use a local driver); put build/stub first on the "
                   "library path or preload it");
        dlclose(lib);
        return;
    }
    gpa_v2 = (gpa_v2_fn)(uintptr_t)dlsym(lib, "cuGetProcAddress_v2");
    if (!gpa_v2) gpa_v1 = (gpa_v1_fn)(uintptr_t)dlsym(lib, "cuGetProcAddress");
}

static cudaError_t entry_point(const char *symbol, void **funcPtr, int version, unsigned long long flags,
                               int *status)
{
    if (!symbol || !funcPtr) return cudaErrorInvalidValue;
    *funcPtr = NULL;
    pthread_once(&gpa_once, find_driver_stub);
    int st = 1; /* cudaDriverEntryPointSymbolNotFound */
    int r;
    if (gpa_v2)
        r = gpa_v2(symbol, funcPtr, version, (uint64_t)flags, &st);
    else if (gpa_v1) {
        r = gpa_v1(symbol, funcPtr, version, (uint64_t)flags);
        st = r == CU_OK ? 0 : 1;
    } else
        return cudaErrorNotSupported;
    if (status) *status = st;
    switch (r) {
    case CU_OK: return cudaSuccess;
    case CU_NOT_FOUND: return cudaErrorSymbolNotFound;
    case CU_INVALID_VALUE: return cudaErrorInvalidValue;
    default: return cudaErrorNotSupported;
    }
}

/* the _ptsz entry points (a program built with --default-stream per-thread):
 * cudaEnableDefault means the per-thread default stream's variants there */
static unsigned long long ptsz_flags(unsigned long long flags)
{
    return flags == cudaEnableDefault ? cudaEnablePerThreadDefaultStream : flags;
}

#ifdef APIGEN_HAS_PARAM_cudaGetDriverEntryPoint_driverStatus /* 12.0 */
static cudaError_t with_status(const char *symbol, void **funcPtr, int version, unsigned long long flags,
                               enum cudaDriverEntryPointQueryResult *driverStatus)
{
    int st = 1;
    cudaError_t e = entry_point(symbol, funcPtr, version, flags, &st);
    if (driverStatus) *driverStatus = (enum cudaDriverEntryPointQueryResult)st;
    return e;
}

APIGEN_EXPORT cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **funcPtr, unsigned long long flags,
                                                  enum cudaDriverEntryPointQueryResult *driverStatus)
{
    return with_status(symbol, funcPtr, CUDART_VERSION, flags, driverStatus);
}

cudaError_t cudaGetDriverEntryPoint_ptsz(const char *, void **, unsigned long long,
                                         enum cudaDriverEntryPointQueryResult *);
APIGEN_EXPORT cudaError_t cudaGetDriverEntryPoint_ptsz(const char *symbol, void **funcPtr, unsigned long long flags,
                                                       enum cudaDriverEntryPointQueryResult *driverStatus)
{
    return with_status(symbol, funcPtr, CUDART_VERSION, ptsz_flags(flags), driverStatus);
}
#else
APIGEN_EXPORT cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **funcPtr, unsigned long long flags)
{
    return entry_point(symbol, funcPtr, CUDART_VERSION, flags, NULL);
}

cudaError_t cudaGetDriverEntryPoint_ptsz(const char *, void **, unsigned long long);
APIGEN_EXPORT cudaError_t cudaGetDriverEntryPoint_ptsz(const char *symbol, void **funcPtr, unsigned long long flags)
{
    return entry_point(symbol, funcPtr, CUDART_VERSION, ptsz_flags(flags), NULL);
}
#endif

#ifdef APIGEN_HAS_FN_cudaGetDriverEntryPointByVersion /* 12.5 */
APIGEN_EXPORT cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr,
                                                           unsigned int cudaVersion, unsigned long long flags,
                                                           enum cudaDriverEntryPointQueryResult *driverStatus)
{
    return with_status(symbol, funcPtr, (int)cudaVersion, flags, driverStatus);
}

cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char *, void **, unsigned int, unsigned long long,
                                                  enum cudaDriverEntryPointQueryResult *);
APIGEN_EXPORT cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char *symbol, void **funcPtr,
                                                                unsigned int cudaVersion, unsigned long long flags,
                                                                enum cudaDriverEntryPointQueryResult *driverStatus)
{
    return with_status(symbol, funcPtr, (int)cudaVersion, ptsz_flags(flags), driverStatus);
}
#endif
