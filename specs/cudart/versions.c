/* cudart: what only some CUDA versions' libraries export (the spec's
 * `when:` entries name these). Compiled against every version's headers.
 * These are exports no header declares (or declares only for the runtime's
 * own build), so no feature of the headers can tell: CUDART_VERSION decides,
 * the one place besides the soname where a version number stays. */
#include <cuda_runtime_api.h>

#define APIGEN_CUDART_EXPORT __attribute__((visibility("default")))

#if CUDART_VERSION >= 13030
/* Exported by libcudart.so.13 from CUDA 13.3 on but declared in no header (no
 * prototype to forward): a program that finds them gets "not supported". */
APIGEN_CUDART_EXPORT cudaError_t cudaSubgridCreate(void) { return cudaErrorNotSupported; }
APIGEN_CUDART_EXPORT cudaError_t cudaSubgridWorkerGridCreate(void) { return cudaErrorNotSupported; }
APIGEN_CUDART_EXPORT cudaError_t cudaSubgridWorksetCreate(void) { return cudaErrorNotSupported; }
#endif

#if CUDART_VERSION < 13000
/* libcudart.so.12 keeps the CUDA 11 entry points under their old names for
 * programs built against 11.x headers; 12.x headers rename the calls to
 * their _v2 forms (a macro), which the stub forwards. The old forms take
 * the CUDA 11 layouts (cudaDeviceProp is smaller), so they are not
 * forwarded: "not supported". asm names: the headers' macros rename the C
 * names. */
#define APIGEN_CUDART_OLD(name, sym)                                                         \
    APIGEN_CUDART_EXPORT cudaError_t name(void) __asm__(sym);                                \
    cudaError_t name(void) { return cudaErrorNotSupported; }
APIGEN_CUDART_OLD(apigen_cudart11_signal_ext_sem, "cudaSignalExternalSemaphoresAsync")
APIGEN_CUDART_OLD(apigen_cudart11_signal_ext_sem_ptsz, "cudaSignalExternalSemaphoresAsync_ptsz")
APIGEN_CUDART_OLD(apigen_cudart11_wait_ext_sem, "cudaWaitExternalSemaphoresAsync")
APIGEN_CUDART_OLD(apigen_cudart11_wait_ext_sem_ptsz, "cudaWaitExternalSemaphoresAsync_ptsz")
#endif
#if CUDART_VERSION >= 12000 && CUDART_VERSION < 13000
/* 11.x declares these (forwarded there); 12.x headers rename them */
APIGEN_CUDART_OLD(apigen_cudart11_get_device_properties, "cudaGetDeviceProperties")
APIGEN_CUDART_OLD(apigen_cudart11_stream_get_capture_info, "cudaStreamGetCaptureInfo")
APIGEN_CUDART_OLD(apigen_cudart11_stream_get_capture_info_ptsz, "cudaStreamGetCaptureInfo_ptsz")
#endif

#if CUDART_VERSION < 12000
/* nvcc 11.x registers texture and surface references at start-up: nothing
 * to do, the reference calls are unsupported (texture objects work). */
APIGEN_CUDART_EXPORT void __cudaRegisterTexture(void **fatCubinHandle, const void *hostVar,
                                                const void **deviceAddress,
                                                const char *deviceName, int dim, int norm,
                                                int ext)
{
    (void)fatCubinHandle, (void)hostVar, (void)deviceAddress, (void)deviceName, (void)dim,
        (void)norm, (void)ext;
}
APIGEN_CUDART_EXPORT void __cudaRegisterSurface(void **fatCubinHandle, const void *hostVar,
                                                const void **deviceAddress,
                                                const char *deviceName, int dim, int ext)
{
    (void)fatCubinHandle, (void)hostVar, (void)deviceAddress, (void)deviceName, (void)dim,
        (void)ext;
}
/* cuda_profiler_api.h of 11.x (removed in 12.0) */
APIGEN_CUDART_EXPORT cudaError_t cudaProfilerInitialize(void) { return cudaErrorNotSupported; }
#endif

#if CUDART_VERSION < 12030
/* Headers before 12.3 declare it only for the runtime's own build, so no
 * per-thread macro leads to it; the _ptsz form is the plain one with the
 * per-thread default stream for stream 0. */
APIGEN_CUDART_EXPORT cudaError_t cudaStreamUpdateCaptureDependencies_ptsz(
    cudaStream_t stream, cudaGraphNode_t *dependencies, size_t numDependencies, unsigned int flags)
{
    return cudaStreamUpdateCaptureDependencies(stream ? stream : cudaStreamPerThread, dependencies,
                                               numDependencies, flags);
}
#endif

typedef int apigen_cudart_versions_nonempty; /* ISO C: no empty translation unit */
