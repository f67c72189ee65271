/* cudart: what only some CUDA versions need (the spec's `when:` entries
 * name these). Compiled against every version's headers: CUDART_VERSION
 * decides. */
#include <cuda_runtime_api.h>

#define APIGEN_CUDART_EXPORT __attribute__((visibility("default")))

#if CUDART_VERSION >= 13050
/* Exported by libcudart.so.13 of CUDA 13.5 but declared in no header (no
 * prototype to forward): a program that finds them gets "not supported". */
APIGEN_CUDART_EXPORT cudaError_t cudaSubgridCreate(void) { return cudaErrorNotSupported; }
APIGEN_CUDART_EXPORT cudaError_t cudaSubgridWorkerGridCreate(void) { return cudaErrorNotSupported; }
APIGEN_CUDART_EXPORT cudaError_t cudaSubgridWorksetCreate(void) { return cudaErrorNotSupported; }
#endif

#if CUDART_VERSION >= 12000 && CUDART_VERSION < 13000
/* libcudart.so.12 keeps the CUDA 11 entry points under their old names for
 * programs built against 11.x headers; 12.x headers rename the calls to
 * their _v2 forms (a macro), which the stub forwards. The old forms take
 * the CUDA 11 layouts (cudaDeviceProp is smaller), so they are not
 * forwarded: "not supported". asm names: the headers' macros rename the C
 * names. */
#define APIGEN_CUDART_OLD(name, sym)                                                         \
    APIGEN_CUDART_EXPORT cudaError_t name(void) __asm__(sym);                                \
    cudaError_t name(void) { return cudaErrorNotSupported; }
APIGEN_CUDART_OLD(apigen_cudart11_get_device_properties, "cudaGetDeviceProperties")
APIGEN_CUDART_OLD(apigen_cudart11_signal_ext_sem, "cudaSignalExternalSemaphoresAsync")
APIGEN_CUDART_OLD(apigen_cudart11_signal_ext_sem_ptsz, "cudaSignalExternalSemaphoresAsync_ptsz")
APIGEN_CUDART_OLD(apigen_cudart11_wait_ext_sem, "cudaWaitExternalSemaphoresAsync")
APIGEN_CUDART_OLD(apigen_cudart11_wait_ext_sem_ptsz, "cudaWaitExternalSemaphoresAsync_ptsz")
APIGEN_CUDART_OLD(apigen_cudart11_stream_get_capture_info, "cudaStreamGetCaptureInfo")
APIGEN_CUDART_OLD(apigen_cudart11_stream_get_capture_info_ptsz, "cudaStreamGetCaptureInfo_ptsz")
#endif

typedef int apigen_cudart_versions_nonempty; /* ISO C: no empty translation unit */
