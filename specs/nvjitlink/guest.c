/* Hand-written guest code for specs/nvjitlink.yaml: the names programs call
 * (nvJitLink.h's static inline functions, exported by libnvJitLink.so.13
 * too) over the ABI entry points; nvJitLinkAddFile, which reads a file of
 * the guest and sends its bytes; and the outputs, sized by the library's
 * own *Size answer and fetched in one call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apigen_rt.h"
#include "nvjitlink_wire.h"

#define MAX_FILE (1u << 30) /* one input file */

APIGEN_EXPORT nvJitLinkResult APIGEN_NVJL(AddFile)(nvJitLinkHandle handle,
                                                      nvJitLinkInputType inputType,
                                                      const char *fileName)
{
    /* the library's answer to a NULL file name (13.0; AddData with no data
     * answers INVALID_INPUT instead, so it cannot be asked for); 12.4-12.9
     * define NVJITLINK_ERROR_NULL_INPUT as INVALID_INPUT, and headers
     * without it (12.0-12.3) go with libraries that answer INVALID_INPUT
     * (asked of 12.0's and 12.3's) */
#if defined(NVJITLINK_ERROR_NULL_INPUT) || defined(APIGEN_HAS_CONST_NVJITLINK_ERROR_NULL_INPUT)
    if (!fileName) return NVJITLINK_ERROR_NULL_INPUT;
#else
    if (!fileName) return NVJITLINK_ERROR_INVALID_INPUT;
#endif
    FILE *f = fopen(fileName, "rb");
    if (!f) {
        /* nvJitLink's own answer to a file it cannot open */
        apigen_log("nvJitLinkAddFile: cannot open %s on this machine", fileName);
        return NVJITLINK_ERROR_INVALID_INPUT;
    }
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (cap - n < 65536) {
            cap = cap ? 2 * cap : 1 << 20;
            char *b = cap <= MAX_FILE ? realloc(buf, cap) : NULL;
            if (!b) {
                free(buf);
                fclose(f);
                apigen_log("nvJitLinkAddFile: %s is too large to send (over %u MiB) or memory "
                           "ran out", fileName, MAX_FILE >> 20);
                return NVJITLINK_ERROR_INTERNAL;
            }
            buf = b;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    fclose(f);
    nvJitLinkResult r = APIGEN_NVJL(AddData)(handle, inputType, buf, n, fileName);
    free(buf);
    return r;
}

static nvJitLinkResult output(nvJitLinkHandle handle, int which, void *buf)
{
    static nvJitLinkResult (*const size[])(nvJitLinkHandle, size_t *) = {
        APIGEN_NVJL(GetLinkedCubinSize), APIGEN_NVJL(GetLinkedPtxSize),
        APIGEN_NVJL(GetErrorLogSize), APIGEN_NVJL(GetInfoLogSize)};
    if (!buf) return apigenNvJitLinkGetOutput(handle, which, NULL, 0);
    size_t n = 0;
    nvJitLinkResult r = size[which](handle, &n);
    if (r != NVJITLINK_SUCCESS) return r;
    return apigenNvJitLinkGetOutput(handle, which, buf, n);
}

APIGEN_EXPORT nvJitLinkResult APIGEN_NVJL(GetLinkedCubin)(nvJitLinkHandle handle, void *cubin)
{
    return output(handle, 0, cubin);
}

APIGEN_EXPORT nvJitLinkResult APIGEN_NVJL(GetLinkedPtx)(nvJitLinkHandle handle, char *ptx)
{
    return output(handle, 1, ptx);
}

APIGEN_EXPORT nvJitLinkResult APIGEN_NVJL(GetErrorLog)(nvJitLinkHandle handle, char *log)
{
    return output(handle, 2, log);
}

APIGEN_EXPORT nvJitLinkResult APIGEN_NVJL(GetInfoLog)(nvJitLinkHandle handle, char *log)
{
    return output(handle, 3, log);
}

/* ---- the plain names: the header's inline bodies ---------------------------- */
/* exported by the libraries of CUDA 12.3 on (specs/nvjitlink.yaml's
 * extra_symbols); 12.0-12.2's headers define them static inline with no
 * NVJITLINK_NO_INLINE to turn that off, and no declaration tells which
 * (APIGEN_NVJL_VERSION: the ABI suffix the header declares) */
#if APIGEN_NVJL_VERSION >= 12030
APIGEN_EXPORT nvJitLinkResult nvJitLinkCreate(nvJitLinkHandle *handle, uint32_t numOptions,
                                              const char **options)
{
    return APIGEN_NVJL(Create)(handle, numOptions, options);
}

APIGEN_EXPORT nvJitLinkResult nvJitLinkDestroy(nvJitLinkHandle *handle)
{
    return APIGEN_NVJL(Destroy)(handle);
}

APIGEN_EXPORT nvJitLinkResult nvJitLinkAddData(nvJitLinkHandle handle,
                                               nvJitLinkInputType inputType, const void *data,
                                               size_t size, const char *name)
{
    return APIGEN_NVJL(AddData)(handle, inputType, data, size, name);
}

APIGEN_EXPORT nvJitLinkResult nvJitLinkAddFile(nvJitLinkHandle handle,
                                               nvJitLinkInputType inputType,
                                               const char *fileName)
{
    return APIGEN_NVJL(AddFile)(handle, inputType, fileName);
}

APIGEN_EXPORT nvJitLinkResult nvJitLinkComplete(nvJitLinkHandle handle)
{
    return APIGEN_NVJL(Complete)(handle);
}

APIGEN_EXPORT nvJitLinkResult nvJitLinkGetLinkedCubinSize(nvJitLinkHandle handle, size_t *size)
{
    return APIGEN_NVJL(GetLinkedCubinSize)(handle, size);
}

APIGEN_EXPORT nvJitLinkResult nvJitLinkGetLinkedCubin(nvJitLinkHandle handle, void *cubin)
{
    return APIGEN_NVJL(GetLinkedCubin)(handle, cubin);
}

APIGEN_EXPORT nvJitLinkResult nvJitLinkGetLinkedPtxSize(nvJitLinkHandle handle, size_t *size)
{
    return APIGEN_NVJL(GetLinkedPtxSize)(handle, size);
}

APIGEN_EXPORT nvJitLinkResult nvJitLinkGetLinkedPtx(nvJitLinkHandle handle, char *ptx)
{
    return APIGEN_NVJL(GetLinkedPtx)(handle, ptx);
}

APIGEN_EXPORT nvJitLinkResult nvJitLinkGetErrorLogSize(nvJitLinkHandle handle, size_t *size)
{
    return APIGEN_NVJL(GetErrorLogSize)(handle, size);
}

APIGEN_EXPORT nvJitLinkResult nvJitLinkGetErrorLog(nvJitLinkHandle handle, char *log)
{
    return APIGEN_NVJL(GetErrorLog)(handle, log);
}

APIGEN_EXPORT nvJitLinkResult nvJitLinkGetInfoLogSize(nvJitLinkHandle handle, size_t *size)
{
    return APIGEN_NVJL(GetInfoLogSize)(handle, size);
}

APIGEN_EXPORT nvJitLinkResult nvJitLinkGetInfoLog(nvJitLinkHandle handle, char *log)
{
    return APIGEN_NVJL(GetInfoLog)(handle, log);
}
#endif
