/* Hand-written guest code for specs/cufft.yaml: cuFFT 11.x (CUDA 12.x)
 * declares cufftXtSetJITCallback as a static inline function over the ABI
 * entry point __cufftXtSetJITCallback_12_7, and libcufft.so.11 exports
 * both; the spec is parsed with CUFFT_NO_INLINE, so the stub forwards the ABI
 * name and exports the plain one here. cuFFT 12 (CUDA 13.x) declares and
 * exports cufftXtSetJITCallback itself: nothing to add. */
#include "apigen_rt.h"
#include "cufft_wire.h"
#include "cufft_features.h"

#ifdef APIGEN_HAS_FN___cufftXtSetJITCallback_12_7
APIGEN_EXPORT cufftResult cufftXtSetJITCallback(cufftHandle plan, const char *lto_callback_symbol_name,
                                                const void *lto_callback_fatbin,
                                                size_t lto_callback_fatbin_size,
                                                cufftXtCallbackType type, void **caller_info)
{
    return __cufftXtSetJITCallback_12_7(plan, lto_callback_symbol_name, lto_callback_fatbin,
                                        lto_callback_fatbin_size, type, caller_info);
}
#endif
