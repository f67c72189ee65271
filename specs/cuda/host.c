/* Host side of the CUDA driver stub's internal calls (apigen_cuda.h) and of
 * the spec's `wrap: {host:}` functions: runs in apigen-server-cuda over the
 * real driver. Handles arrive as ids: hand-written code resolves them with
 * apigen_handle_lookup (a CUkernel may stand where a CUfunction is taken, as
 * the driver allows). Device ranges a call hands out become the client's
 * (apigen_dev_add), so later calls may name them. */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apigen_rt.h"
#include "cuda_wire.h"

static const apigen_handle_type *ht(const char *name)
{
    for (unsigned i = 0; i < apigen_api_cuda.nhandle_types; i++)
        if (strcmp(apigen_api_cuda.handle_types[i]->name, name) == 0)
            return apigen_api_cuda.handle_types[i];
    return NULL;
}

/* A CUfunction or CUkernel id of this client: the real handle as a
 * CUfunction (the driver takes a CUkernel there too), or NULL. */
static CUfunction func_of(apigen_call_ctx *cx, uint64_t id, int *is_kernel)
{
    void *real = NULL;
    *is_kernel = 0;
    /* CUkernel first: a CUfunction lookup accepts CUkernel ids too (spec
     * `also:`), and a kernel's parameters and name need the cuKernel* calls */
    if (apigen_handle_lookup(cx->session, ht("CUkernel"), id, &real)) {
        *is_kernel = 1;
        return real;
    }
    if (apigen_handle_lookup(cx->session, ht("CUfunction"), id, &real)) return real;
    return NULL;
}

static CUresult copy_str(const char *s, char *buf, size_t cap, size_t *len)
{
    size_t n = strlen(s) + 1;
    if (n > cap) n = cap;
    if (n) {
        memcpy(buf, s, n);
        buf[n - 1] = 0;
    }
    *len = n;
    return CUDA_SUCCESS;
}

CUresult apigenCudaErrorString(CUresult error, int which, char *buf, size_t cap, size_t *len)
{
    const char *s = NULL;
    CUresult e = which ? cuGetErrorString(error, &s) : cuGetErrorName(error, &s);
    *len = 0;
    if (e != CUDA_SUCCESS || !s) return e != CUDA_SUCCESS ? e : CUDA_ERROR_INVALID_VALUE;
    return copy_str(s, buf, cap, len);
}

/* Internal calls whose handler needs the call context take it through the
 * spec's wrap (host.c cannot see it otherwise): apigenCudaFuncName,
 * apigenCudaParamLayout and apigenCudaLaunch are wrapped below. */
CUresult cuda_host_func_name(apigen_call_ctx *cx, uint64_t func, int isKernel, char *buf,
                             size_t cap, size_t *len)
{
    int k;
    CUfunction f = func_of(cx, func, &k);
    const char *s = NULL;
    *len = 0;
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
#ifdef APIGEN_HAS_FN_cuFuncGetName /* 12.3; the guest has no cuFuncGetName to ask before */
    CUresult e = (isKernel || k) ? cuKernelGetName(&s, (CUkernel)f) : cuFuncGetName(&s, f);
#else
    (void)isKernel;
    CUresult e = CUDA_ERROR_NOT_SUPPORTED;
#endif
    if (e != CUDA_SUCCESS || !s) return e != CUDA_SUCCESS ? e : CUDA_ERROR_INVALID_VALUE;
    return copy_str(s, buf, cap, len);
}

/* Parameter i of a function or kernel: offset and size. Headers before
 * 12.4 declare no cuFuncGetParamInfo / cuKernelGetParamInfo, but the
 * driver the server runs on has them from 12.4 on (a newer driver keeps
 * every older entry point): looked up there by name. With an older driver
 * the layout, so every launch, is CUDA_ERROR_NOT_SUPPORTED with a log line. */
#ifndef APIGEN_HAS_FN_cuFuncGetParamInfo
typedef CUresult (*param_info_fn)(void *f, size_t i, size_t *off, size_t *size);
static param_info_fn func_info_, kernel_info_;
static void find_param_info(void)
{
    func_info_ = (param_info_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "cuFuncGetParamInfo");
    kernel_info_ = (param_info_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "cuKernelGetParamInfo");
    if (!func_info_)
        apigen_log("cuda: the server's driver has no cuFuncGetParamInfo (a driver of CUDA 12.4 "
                   "or newer has it): kernel parameter layouts, hence launches, are not "
                   "supported");
}
#endif

static CUresult param_info(CUfunction f, int is_kernel, size_t i, size_t *off, size_t *size)
{
#ifdef APIGEN_HAS_FN_cuFuncGetParamInfo
    return is_kernel ? cuKernelGetParamInfo((CUkernel)f, i, off, size)
                     : cuFuncGetParamInfo(f, i, off, size);
#else
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, find_param_info);
    param_info_fn fn = is_kernel ? kernel_info_ : func_info_;
    return fn ? fn(f, i, off, size) : CUDA_ERROR_NOT_SUPPORTED;
#endif
}

CUresult cuda_host_param_layout(apigen_call_ctx *cx, uint64_t func, int isKernel, size_t *offsets,
                                size_t *sizes, unsigned int *nparams)
{
    int k;
    (void)isKernel;
    CUfunction f = func_of(cx, func, &k);
    *nparams = 0;
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    for (unsigned i = 0; i < APIGEN_CUDA_MAX_PARAMS; i++) {
        CUresult e = param_info(f, k, i, &offsets[i], &sizes[i]);
        if (e == CUDA_ERROR_INVALID_VALUE) return CUDA_SUCCESS; /* past the last parameter */
        if (e != CUDA_SUCCESS) return e;
        *nparams = i + 1;
    }
    return CUDA_SUCCESS;
}

#ifndef APIGEN_HAS_FN_cuLaunchKernelEx
/* A cooperative launch before 11.8 (no launch attributes):
 * cuLaunchCooperativeKernel takes no packed buffer, so the arguments are
 * pointed at in the request's copy by the function's parameter layout. */
static CUresult launch_coop(CUfunction f, int is_kernel, unsigned gx, unsigned gy, unsigned gz,
                            unsigned bx, unsigned by, unsigned bz, unsigned shmem,
                            CUstream stream, const void *params, size_t size, unsigned flags)
{
    unsigned char *buf = malloc(size ? size : 1);
    void **args = calloc(APIGEN_CUDA_MAX_PARAMS, sizeof *args);
    CUresult e = buf && args ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
    if (e == CUDA_SUCCESS && size) memcpy(buf, params, size);
    for (unsigned i = 0; e == CUDA_SUCCESS && i < APIGEN_CUDA_MAX_PARAMS; i++) {
        size_t off, sz;
        CUresult r = param_info(f, is_kernel, i, &off, &sz);
        if (r == CUDA_ERROR_INVALID_VALUE) break; /* past the last parameter */
        if (r != CUDA_SUCCESS) e = r;
        else if (off + sz > size) e = CUDA_ERROR_INVALID_VALUE; /* the guest packed less */
        else args[i] = buf + off;
    }
    if (e == CUDA_SUCCESS)
        e = (flags & APIGEN_CUDA_LAUNCH_PTSZ)
                ? cuLaunchCooperativeKernel_ptsz(f, gx, gy, gz, bx, by, bz, shmem, stream, args)
                : cuLaunchCooperativeKernel(f, gx, gy, gz, bx, by, bz, shmem, stream, args);
    free(buf);
    free(args);
    return e;
}
#endif

CUresult cuda_host_launch(apigen_call_ctx *cx, uint64_t func, int isKernel, unsigned int gridDimX,
                          unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX,
                          unsigned int blockDimY, unsigned int blockDimZ,
                          unsigned int sharedMemBytes, CUstream hStream, const void *params,
                          size_t paramsSize, const CUlaunchAttribute *attrs, unsigned int numAttrs,
                          unsigned int flags)
{
    int k;
    (void)isKernel;
    CUfunction f = func_of(cx, func, &k);
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
#ifdef APIGEN_HAS_FN_cuLaunchKernelEx /* 11.8 */
    for (unsigned i = 0; i < numAttrs; i++)
        if (attrs[i].id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT
#ifdef APIGEN_HAS_CONST_CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT /* 12.3 */
            || attrs[i].id == CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT
#endif
        )
            return CUDA_ERROR_NOT_SUPPORTED; /* an event handle inside: not translated */
#else
    (void)attrs;
    if (numAttrs) return CUDA_ERROR_NOT_SUPPORTED; /* no launch attributes before 11.8 */
    if (flags & APIGEN_CUDA_LAUNCH_COOP)
        return launch_coop(f, k, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                           sharedMemBytes, hStream, params, paramsSize, flags);
#endif
    /* the request's bytes need not be aligned for the kernel's parameters */
    uint64_t small[128];
    void *buf = small;
    if (paramsSize > sizeof small && !(buf = malloc(paramsSize))) return CUDA_ERROR_OUT_OF_MEMORY;
    if (paramsSize) memcpy(buf, params, paramsSize);
    size_t size = paramsSize;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                     CU_LAUNCH_PARAM_END};
#ifdef APIGEN_HAS_FN_cuLaunchKernelEx
    CUlaunchConfig c = {gridDimX,  gridDimY,       gridDimZ, blockDimX,           blockDimY,
                        blockDimZ, sharedMemBytes, hStream,  (CUlaunchAttribute *)attrs, numAttrs};
    CUresult e = (flags & APIGEN_CUDA_LAUNCH_PTSZ) ? cuLaunchKernelEx_ptsz(&c, f, NULL, extra)
                                                   : cuLaunchKernelEx(&c, f, NULL, extra);
#else
    CUresult e = (flags & APIGEN_CUDA_LAUNCH_PTSZ)
                     ? cuLaunchKernel_ptsz(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY,
                                           blockDimZ, sharedMemBytes, hStream, NULL, extra)
                     : cuLaunchKernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY,
                                      blockDimZ, sharedMemBytes, hStream, NULL, extra);
#endif
    if (buf != small) free(buf);
    return e;
}

/* an aligned copy of an image that arrived inside a request */
static void *aligned_copy(const void *p, size_t n)
{
    void *b = NULL;
    if (posix_memalign(&b, 64, n ? n : 1) != 0) return NULL;
    memcpy(b, p, n);
    return b;
}

static void **values(const uint64_t *v, unsigned n)
{
    void **out = calloc(n ? n : 1, sizeof *out);
    for (unsigned i = 0; out && i < n; i++) out[i] = (void *)(uintptr_t)v[i];
    return out;
}

CUresult apigenCudaModuleLoad(CUmodule *module, const void *image, size_t imageSize,
                              unsigned int numOptions, const CUjit_option *options,
                              const uint64_t *optionValues)
{
    void *img = aligned_copy(image, imageSize);
    void **vals = values(optionValues, numOptions);
    CUresult e = CUDA_ERROR_OUT_OF_MEMORY;
    if (img && vals)
        e = cuModuleLoadDataEx(module, img, numOptions, (CUjit_option *)options,
                               numOptions ? vals : NULL);
    free(img); /* the driver copies the image */
    free(vals);
    return e;
}

CUresult apigenCudaLibraryLoad(CUlibrary *library, const void *code, size_t codeSize,
                               unsigned int numJitOptions, const CUjit_option *jitOptions,
                               const uint64_t *jitOptionsValues, unsigned int numLibraryOptions,
                               const CUlibraryOption *libraryOptions,
                               const uint64_t *libraryOptionValues)
{
    /* CU_LIBRARY_BINARY_IS_PRESERVED lets the driver keep pointing at the
     * image instead of copying it: the image here is this call's copy, so the
     * option is left out and the driver copies (the guest's own image is
     * preserved or not as the guest said; nothing it can see changes). */
#ifndef APIGEN_HAS_FN_cuLibraryLoadData /* 12.0: the guest has no cuLibrary* to ask before */
    (void)library, (void)code, (void)codeSize, (void)numJitOptions, (void)jitOptions;
    (void)jitOptionsValues, (void)numLibraryOptions, (void)libraryOptions;
    (void)libraryOptionValues;
    return CUDA_ERROR_NOT_SUPPORTED;
#else
    CUlibraryOption opts[8];
    uint64_t optvals[8] = {0}; /* read only up to nopts; zeroed for -Wmaybe-uninitialized */
    unsigned nopts = 0;
    for (unsigned i = 0; i < numLibraryOptions; i++) {
        if (libraryOptions[i] == CU_LIBRARY_BINARY_IS_PRESERVED) continue;
        if (nopts == sizeof opts / sizeof opts[0]) return CUDA_ERROR_INVALID_VALUE;
        opts[nopts] = libraryOptions[i];
        optvals[nopts++] = libraryOptionValues ? libraryOptionValues[i] : 0;
    }
    void *img = aligned_copy(code, codeSize);
    void **jv = values(jitOptionsValues, numJitOptions);
    void **lv = values(optvals, nopts);
    CUresult e = CUDA_ERROR_OUT_OF_MEMORY;
    if (img && jv && lv)
        e = cuLibraryLoadData(library, img, (CUjit_option *)jitOptions, numJitOptions ? jv : NULL,
                              numJitOptions, nopts ? opts : NULL, nopts ? lv : NULL, nopts);
    free(img);
    free(jv);
    free(lv);
    return e;
#endif
}

/* ---- device ranges the driver hands out ------------------------------------------------------- */
static CUresult add_range(apigen_call_ctx *cx, CUresult e, CUdeviceptr p, size_t bytes)
{
    if (e == CUDA_SUCCESS && p && !apigen_dev_add(cx, (uint64_t)p, bytes ? bytes : 1))
        return CUDA_ERROR_OUT_OF_MEMORY; /* rejected; the runtime logged why */
    return e;
}

/* the driver's own extent of the allocation holding p */
static size_t extent(CUdeviceptr p)
{
    CUdeviceptr base = 0;
    size_t size = 0;
    if (cuMemGetAddressRange_v2(&base, &size, p) != CUDA_SUCCESS) return 1;
    return (size_t)(base + size - p);
}

CUresult cuda_host_mem_alloc_pitch(apigen_call_ctx *cx, CUdeviceptr *dptr, size_t *pPitch,
                                   size_t WidthInBytes, size_t Height, unsigned int ElementSizeBytes)
{
    CUresult e = cuMemAllocPitch_v2(dptr, pPitch, WidthInBytes, Height, ElementSizeBytes);
    return dptr && pPitch ? add_range(cx, e, *dptr, *pPitch * Height) : e;
}

CUresult cuda_host_module_get_global(apigen_call_ctx *cx, CUdeviceptr *dptr, size_t *bytes,
                                     CUmodule hmod, const char *name)
{
    CUdeviceptr p = 0;
    size_t n = 0;
    CUresult e = cuModuleGetGlobal_v2(&p, &n, hmod, name);
    e = add_range(cx, e, p, n);
    if (e == CUDA_SUCCESS) {
        if (dptr) *dptr = p;
        if (bytes) *bytes = n;
    }
    return e;
}

#ifdef APIGEN_HAS_FN_cuLibraryGetManaged /* 12.0: libraries */
/* A __managed__ variable's memory is the client's (the guest mirrors it). */
CUresult cuda_host_library_get_managed(apigen_call_ctx *cx, CUdeviceptr *dptr, size_t *bytes,
                                       CUlibrary library, const char *name)
{
    CUdeviceptr p = 0;
    size_t n = 0;
    CUresult e = cuLibraryGetManaged(&p, &n, library, name);
    e = add_range(cx, e, p, n);
    if (e == CUDA_SUCCESS) {
        if (dptr) *dptr = p;
        if (bytes) *bytes = n;
    }
    return e;
}

CUresult cuda_host_library_get_global(apigen_call_ctx *cx, CUdeviceptr *dptr, size_t *bytes,
                                      CUlibrary library, const char *name)
{
    CUdeviceptr p = 0;
    size_t n = 0;
    CUresult e = cuLibraryGetGlobal(&p, &n, library, name);
    e = add_range(cx, e, p, n);
    if (e == CUDA_SUCCESS) {
        if (dptr) *dptr = p;
        if (bytes) *bytes = n;
    }
    return e;
}
#endif

CUresult cuda_host_ipc_open(apigen_call_ctx *cx, CUdeviceptr *pdptr, CUipcMemHandle handle,
                            unsigned int Flags)
{
    CUresult e = cuIpcOpenMemHandle_v2(pdptr, handle, Flags);
    return pdptr && e == CUDA_SUCCESS ? add_range(cx, e, *pdptr, extent(*pdptr)) : e;
}

CUresult cuda_host_ipc_open_v1(apigen_call_ctx *cx, CUdeviceptr *pdptr, CUipcMemHandle handle,
                               unsigned int Flags)
{
    CUresult e = cuIpcOpenMemHandle(pdptr, handle, Flags);
    return pdptr && e == CUDA_SUCCESS ? add_range(cx, e, *pdptr, extent(*pdptr)) : e;
}

CUresult cuda_host_pool_import(apigen_call_ctx *cx, CUdeviceptr *ptr_out, CUmemoryPool pool,
                               CUmemPoolPtrExportData *shareData)
{
    CUresult e = cuMemPoolImportPointer(ptr_out, pool, shareData);
    return ptr_out && e == CUDA_SUCCESS ? add_range(cx, e, *ptr_out, extent(*ptr_out)) : e;
}

/* ---- resource descriptors: the array handle or device address inside -------------------------- */
static int to_real(apigen_call_ctx *cx, const char *type, void *field)
{
    uint64_t id;
    void *real = NULL;
    memcpy(&id, field, sizeof id);
    if (!id) return 1;
    if (!apigen_handle_lookup(cx->session, ht(type), id, &real)) return 0;
    memcpy(field, &real, sizeof real);
    return 1;
}

static int res_in(apigen_call_ctx *cx, CUDA_RESOURCE_DESC *r)
{
    switch (r->resType) {
    case CU_RESOURCE_TYPE_ARRAY: return to_real(cx, "CUarray", &r->res.array.hArray);
    case CU_RESOURCE_TYPE_MIPMAPPED_ARRAY:
        return to_real(cx, "CUmipmappedArray", &r->res.mipmap.hMipmappedArray);
    case CU_RESOURCE_TYPE_LINEAR:
        return !r->res.linear.devPtr ||
               apigen_dev_owned(cx->session, r->res.linear.devPtr, r->res.linear.sizeInBytes, true);
    case CU_RESOURCE_TYPE_PITCH2D:
        return !r->res.pitch2D.devPtr ||
               apigen_dev_owned(cx->session, r->res.pitch2D.devPtr,
                                r->res.pitch2D.height ? r->res.pitch2D.pitchInBytes *
                                                            (r->res.pitch2D.height - 1)
                                                      : 0,
                                false);
    }
    return 1; /* other types: the driver refuses them */
}

CUresult cuda_host_tex_object_create(apigen_call_ctx *cx, CUtexObject *pTexObject,
                                     const CUDA_RESOURCE_DESC *pResDesc,
                                     const CUDA_TEXTURE_DESC *pTexDesc,
                                     const CUDA_RESOURCE_VIEW_DESC *pResViewDesc)
{
    CUDA_RESOURCE_DESC r;
    if (!pResDesc) return cuTexObjectCreate(pTexObject, NULL, pTexDesc, pResViewDesc);
    r = *pResDesc;
    if (!res_in(cx, &r)) return CUDA_ERROR_INVALID_HANDLE;
    return cuTexObjectCreate(pTexObject, &r, pTexDesc, pResViewDesc);
}

CUresult cuda_host_surf_object_create(apigen_call_ctx *cx, CUsurfObject *pSurfObject,
                                      const CUDA_RESOURCE_DESC *pResDesc)
{
    CUDA_RESOURCE_DESC r;
    if (!pResDesc) return cuSurfObjectCreate(pSurfObject, NULL);
    r = *pResDesc;
    if (!res_in(cx, &r)) return CUDA_ERROR_INVALID_HANDLE;
    return cuSurfObjectCreate(pSurfObject, &r);
}

#ifdef APIGEN_HAS_FN_cuCtxCreate_v4 /* 12.5 */
/* cuCtxCreate_v4: CUctxCreateParams arrived as bytes; its pointers are the
 * guest's. Without them (the common NULL or zeroed parameters) the call is
 * the driver's; execution-affinity and CIG arrays are not carried yet. */
CUresult cuda_host_ctx_create_v4(apigen_call_ctx *cx, CUcontext *pctx,
                                 CUctxCreateParams *ctxCreateParams, unsigned int flags,
                                 CUdevice dev)
{
    (void)cx;
    if (ctxCreateParams && (ctxCreateParams->execAffinityParams || ctxCreateParams->cigParams ||
                            ctxCreateParams->numExecAffinityParams))
        return CUDA_ERROR_NOT_SUPPORTED;
    return cuCtxCreate_v4(pctx, ctxCreateParams, flags, dev);
}
#endif

#ifdef APIGEN_HAS_FN_cuGraphInstantiateWithParams /* 12.0 */
/* cuGraphInstantiateWithParams: CUDA_GRAPH_INSTANTIATE_PARAMS arrived as
 * bytes: the upload stream is an id in, the error node a real handle out. */
static CUresult instantiate_params(apigen_call_ctx *cx, CUgraphExec *phGraphExec, CUgraph hGraph,
                                   CUDA_GRAPH_INSTANTIATE_PARAMS *p, int ptsz)
{
    uint64_t sid = p ? (uint64_t)(uintptr_t)p->hUploadStream : 0;
    if (p) {
        void *real = NULL;
        /* 0, CU_STREAM_LEGACY and CU_STREAM_PER_THREAD pass as they are */
        if (sid > 2) {
            if (!apigen_handle_lookup(cx->session, ht("CUstream"), sid, &real))
                return CUDA_ERROR_INVALID_HANDLE;
            p->hUploadStream = real;
        }
        p->hErrNode_out = NULL;
    }
    CUresult e = ptsz ? cuGraphInstantiateWithParams_ptsz(phGraphExec, hGraph, p)
                      : cuGraphInstantiateWithParams(phGraphExec, hGraph, p);
    if (p) {
        p->hUploadStream = (CUstream)(uintptr_t)sid; /* the guest's id, as it sent it */
        p->hErrNode_out = p->hErrNode_out
                              ? (CUgraphNode)(uintptr_t)apigen_handle_put(cx, ht("CUgraphNode"),
                                                                         p->hErrNode_out)
                              : NULL;
    }
    return e;
}

CUresult cuda_host_graph_instantiate_params(apigen_call_ctx *cx, CUgraphExec *phGraphExec,
                                            CUgraph hGraph,
                                            CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
    return instantiate_params(cx, phGraphExec, hGraph, instantiateParams, 0);
}

CUresult cuda_host_graph_instantiate_params_ptsz(apigen_call_ctx *cx, CUgraphExec *phGraphExec,
                                                 CUgraph hGraph,
                                                 CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
    return instantiate_params(cx, phGraphExec, hGraph, instantiateParams, 1);
}
#endif

/* ---- 2D and 3D copies (copy3d.c packs the guest's host sides) ------------------------------- */
static int copy_side(apigen_call_ctx *cx, CUmemorytype t, CUdeviceptr dev, CUarray *arr)
{
    switch (t) {
    case CU_MEMORYTYPE_DEVICE: return !dev || apigen_dev_owned(cx->session, dev, 0, false);
    case CU_MEMORYTYPE_ARRAY: return to_real(cx, "CUarray", arr);
    default: return 1; /* host sides are set by the handler; others: the driver's error */
    }
}

static CUresult memcpy3d(apigen_call_ctx *cx, const CUDA_MEMCPY3D *copy, CUstream hStream,
                         unsigned int kind, void *hostOut, size_t outSize, const void *hostIn,
                         size_t inSize, const CUDA_MEMCPY3D_PEER *peer, CUcontext sctx,
                         CUcontext dctx);

/* A host side the guest named by the server's address of it in its arena
 * (APIGEN_CUDA_COPY_ARENA_*): offsets 0, every row of the copy inside the
 * client's arena. */
static int arena_side(apigen_call_ctx *cx, const void *host, size_t x, size_t y, size_t z,
                      size_t pitch, size_t height, const CUDA_MEMCPY3D *c)
{
    size_t depth = c->Depth ? c->Depth : 1;
    uint64_t a, b, span;
    if (x || y || z || pitch < c->WidthInBytes || (depth > 1 && height < c->Height)) return 0;
    if (!c->WidthInBytes || !c->Height) return 1; /* nothing is read or written */
    return apigen_mul_size(height, pitch, &a) && apigen_mul_size(a, depth - 1, &a) &&
           apigen_mul_size(pitch, c->Height - 1, &b) && apigen_add_size(a, b, &span) &&
           apigen_add_size(span, c->WidthInBytes, &span) &&
           apigen_arena_holds(cx, (uint64_t)(uintptr_t)host, span);
}

CUresult cuda_host_memcpy3d(apigen_call_ctx *cx, const CUDA_MEMCPY3D *copy, CUstream hStream,
                            unsigned int kind, void *hostOut, size_t outSize, const void *hostIn,
                            size_t inSize)
{
    return memcpy3d(cx, copy, hStream, kind, hostOut, outSize, hostIn, inSize, NULL, NULL, NULL);
}

/* the peer form: its fields as a CUDA_MEMCPY3D, the contexts apart */
CUresult cuda_host_memcpy3d_peer(apigen_call_ctx *cx, const CUDA_MEMCPY3D_PEER *copy,
                                 CUcontext srcContext, CUcontext dstContext, CUstream hStream,
                                 unsigned int kind, void *hostOut, size_t outSize,
                                 const void *hostIn, size_t inSize)
{
    if (!copy) return CUDA_ERROR_INVALID_VALUE;
    CUDA_MEMCPY3D c;
    memset(&c, 0, sizeof c);
    c.srcXInBytes = copy->srcXInBytes, c.srcY = copy->srcY, c.srcZ = copy->srcZ;
    c.srcLOD = copy->srcLOD, c.srcMemoryType = copy->srcMemoryType;
    c.srcDevice = copy->srcDevice, c.srcArray = copy->srcArray, c.srcHost = copy->srcHost;
    c.srcPitch = copy->srcPitch, c.srcHeight = copy->srcHeight;
    c.dstXInBytes = copy->dstXInBytes, c.dstY = copy->dstY, c.dstZ = copy->dstZ;
    c.dstLOD = copy->dstLOD, c.dstMemoryType = copy->dstMemoryType;
    c.dstDevice = copy->dstDevice, c.dstArray = copy->dstArray, c.dstHost = copy->dstHost;
    c.dstPitch = copy->dstPitch, c.dstHeight = copy->dstHeight;
    c.WidthInBytes = copy->WidthInBytes, c.Height = copy->Height, c.Depth = copy->Depth;
    return memcpy3d(cx, &c, hStream, kind, hostOut, outSize, hostIn, inSize, copy, srcContext,
                    dstContext);
}

static CUresult memcpy3d(apigen_call_ctx *cx, const CUDA_MEMCPY3D *copy, CUstream hStream,
                         unsigned int kind, void *hostOut, size_t outSize, const void *hostIn,
                         size_t inSize, const CUDA_MEMCPY3D_PEER *peer, CUcontext sctx,
                         CUcontext dctx)
{
    if (!copy) return CUDA_ERROR_INVALID_VALUE;
    CUDA_MEMCPY3D c = *copy;
    /* a host side is exactly the packed rows the guest sent or will take:
     * no offset, the width as pitch, and room for every row (the driver
     * must not reach past the request's or the reply's buffer) */
    uint64_t rows, need;
    if (!apigen_mul_size(c.Height, c.Depth ? c.Depth : 1, &rows) ||
        !apigen_mul_size(rows, c.WidthInBytes, &need))
        return CUDA_ERROR_INVALID_VALUE;
    static unsigned char none[1]; /* an empty copy's host side (the guest sent no bytes) */
    if (!need && !hostIn) hostIn = none;
    if (!need && !hostOut) hostOut = none;
    int asrc = (kind & APIGEN_CUDA_COPY_ARENA_SRC) && c.srcMemoryType == CU_MEMORYTYPE_HOST;
    int adst = (kind & APIGEN_CUDA_COPY_ARENA_DST) && c.dstMemoryType == CU_MEMORYTYPE_HOST;
    if (asrc) {
        if (!arena_side(cx, c.srcHost, c.srcXInBytes, c.srcY, c.srcZ, c.srcPitch, c.srcHeight, &c))
            return CUDA_ERROR_INVALID_VALUE;
    } else if (c.srcMemoryType == CU_MEMORYTYPE_HOST) {
        if (!hostIn || inSize < need || c.srcXInBytes || c.srcY || c.srcZ ||
            c.srcPitch != c.WidthInBytes || (c.srcHeight && c.srcHeight != c.Height))
            return CUDA_ERROR_INVALID_VALUE;
        c.srcHost = hostIn;
    }
    if (adst) {
        if (!arena_side(cx, c.dstHost, c.dstXInBytes, c.dstY, c.dstZ, c.dstPitch, c.dstHeight, &c))
            return CUDA_ERROR_INVALID_VALUE;
    } else if (c.dstMemoryType == CU_MEMORYTYPE_HOST) {
        if (!hostOut || outSize < need || c.dstXInBytes || c.dstY || c.dstZ ||
            c.dstPitch != c.WidthInBytes || (c.dstHeight && c.dstHeight != c.Height))
            return CUDA_ERROR_INVALID_VALUE;
        c.dstHost = hostOut;
    }
    /* unified addresses the guest resolved to its host memory came as HOST;
     * any other host pointer is the guest's, never the server's */
    if (c.srcMemoryType != CU_MEMORYTYPE_HOST) c.srcHost = NULL;
    if (c.dstMemoryType != CU_MEMORYTYPE_HOST) c.dstHost = NULL;
    if (!copy_side(cx, c.srcMemoryType, c.srcDevice, &c.srcArray) ||
        !copy_side(cx, c.dstMemoryType, c.dstDevice, &c.dstArray))
        return CUDA_ERROR_INVALID_VALUE;
    int pt = (kind & APIGEN_CUDA_COPY_PT) != 0, async = (kind & APIGEN_CUDA_COPY_ASYNC) != 0;
    CUresult e;
    if (peer) {
        CUDA_MEMCPY3D_PEER p = *peer;
        p.srcHost = c.srcHost, p.dstHost = c.dstHost;
        p.srcArray = c.srcArray, p.dstArray = c.dstArray;
        p.srcContext = sctx, p.dstContext = dctx;
        e = async ? (pt ? cuMemcpy3DPeerAsync_ptsz(&p, hStream) : cuMemcpy3DPeerAsync(&p, hStream))
                  : (pt ? cuMemcpy3DPeer_ptds(&p) : cuMemcpy3DPeer(&p));
    } else if ((kind & APIGEN_CUDA_COPY_KIND) == APIGEN_CUDA_COPY_3D) {
        e = async ? (pt ? cuMemcpy3DAsync_v2_ptsz(&c, hStream) : cuMemcpy3DAsync_v2(&c, hStream))
                  : (pt ? cuMemcpy3D_v2_ptds(&c) : cuMemcpy3D_v2(&c));
    } else {
        CUDA_MEMCPY2D d = {c.srcXInBytes, c.srcY, c.srcMemoryType, c.srcHost, c.srcDevice,
                           c.srcArray,    c.srcPitch, c.dstXInBytes, c.dstY, c.dstMemoryType,
                           c.dstHost,     c.dstDevice, c.dstArray, c.dstPitch, c.WidthInBytes,
                           c.Height};
        if ((kind & APIGEN_CUDA_COPY_KIND) == APIGEN_CUDA_COPY_2D_UNALIGNED)
            e = pt ? cuMemcpy2DUnaligned_v2_ptds(&d) : cuMemcpy2DUnaligned_v2(&d);
        else if (async)
            e = pt ? cuMemcpy2DAsync_v2_ptsz(&d, hStream) : cuMemcpy2DAsync_v2(&d, hStream);
        else
            e = pt ? cuMemcpy2D_v2_ptds(&d) : cuMemcpy2D_v2(&d);
    }
    /* the host sides live in this request and its reply: done before they go
     * (arena memory lives as long as the session: async as natively) */
    if (e == CUDA_SUCCESS && async &&
        ((c.srcMemoryType == CU_MEMORYTYPE_HOST && !asrc) ||
         (c.dstMemoryType == CU_MEMORYTYPE_HOST && !adst)))
        e = pt ? cuStreamSynchronize_ptsz(hStream) : cuStreamSynchronize(hStream);
    return e;
}

/* cuStreamGetCaptureInfo_v2/_v3: the driver's arrays copied into the reply
 * (the generated handler turns the node handles into the client's ids). */
CUresult cuda_host_capture_info(apigen_call_ctx *cx, CUstream hStream, unsigned int ptsz,
                                CUstreamCaptureStatus *status, cuuint64_t *id, CUgraph *graph,
                                CUgraphNode *deps, CUgraphEdgeData *edges, size_t cap,
                                size_t *numDeps)
{
    (void)cx;
    const CUgraphNode *d = NULL;
    const CUgraphEdgeData *ed = NULL;
    size_t n = 0;
#ifdef APIGEN_HAS_FN_cuStreamGetCaptureInfo_v3 /* 12.3: edge data */
    CUresult e = ptsz ? cuStreamGetCaptureInfo_v3_ptsz(hStream, status, id, graph, &d, &ed, &n)
                      : cuStreamGetCaptureInfo_v3(hStream, status, id, graph, &d, &ed, &n);
#else
    CUresult e = ptsz ? cuStreamGetCaptureInfo_v2_ptsz(hStream, status, id, graph, &d, &n)
                      : cuStreamGetCaptureInfo_v2(hStream, status, id, graph, &d, &n);
#endif
    *numDeps = e == CUDA_SUCCESS ? n : 0;
    for (size_t i = 0; e == CUDA_SUCCESS && i < n && i < cap; i++) {
        if (deps) deps[i] = d ? d[i] : NULL;
        if (edges) {
            if (ed) edges[i] = ed[i];
            else memset(&edges[i], 0, sizeof edges[i]); /* no edge data: default edges */
        }
    }
    return e;
}

/* ---- kernel nodes (graph_kernel.c packs the arguments) -------------------------------------- */
/* 12.0's _v2 node calls take CUDA_KERNEL_NODE_PARAMS_v2 (a kernel handle and
 * a context besides the function); before, the v1 calls are the only ones */
#ifdef APIGEN_HAS_FN_cuGraphAddKernelNode_v2
#define ADD_KNODE cuGraphAddKernelNode_v2
#define SET_KNODE cuGraphKernelNodeSetParams_v2
#define EXEC_SET_KNODE cuGraphExecKernelNodeSetParams_v2
#define GET_KNODE cuGraphKernelNodeGetParams_v2
#else
#define ADD_KNODE cuGraphAddKernelNode
#define SET_KNODE cuGraphKernelNodeSetParams
#define EXEC_SET_KNODE cuGraphExecKernelNodeSetParams
#define GET_KNODE cuGraphKernelNodeGetParams
#endif
#ifdef APIGEN_HAS_FIELD_CUDA_KERNEL_NODE_PARAMS_v2_st_kern
#define NODE_KERN(p) ((p).kern)
#define NODE_CTX(p) ((p).ctx)
#else
#define NODE_KERN(p) ((void)(p), (CUkernel)NULL)
#define NODE_CTX(p) ((void)(p), (CUcontext)NULL)
#endif
typedef struct knode {
    CUDA_KERNEL_NODE_PARAMS p;
    void *extra[5];
    size_t size;
    void *buf;
} knode;

/* the driver's node parameters from the guest's ids, dims and packed buffer */
static CUresult knode_in(apigen_call_ctx *cx, knode *k, uint64_t func, uint64_t kern,
                         CUcontext ctx, const unsigned int *dims, const void *params, size_t n)
{
    int is_k;
    memset(k, 0, sizeof *k);
    if (func && !(k->p.func = func_of(cx, func, &is_k))) return CUDA_ERROR_INVALID_HANDLE;
#ifdef APIGEN_HAS_FIELD_CUDA_KERNEL_NODE_PARAMS_v2_st_kern
    if (kern) {
        void *real = NULL;
        if (!apigen_handle_lookup(cx->session, ht("CUkernel"), kern, &real))
            return CUDA_ERROR_INVALID_HANDLE;
        k->p.kern = real;
    }
    k->p.ctx = ctx;
#else
    if (kern) return CUDA_ERROR_INVALID_HANDLE; /* no kernel handles before 12.0 */
    (void)ctx;
#endif
    k->p.gridDimX = dims[0], k->p.gridDimY = dims[1], k->p.gridDimZ = dims[2];
    k->p.blockDimX = dims[3], k->p.blockDimY = dims[4], k->p.blockDimZ = dims[5];
    k->p.sharedMemBytes = dims[6];
    k->size = n;
    if (n && !(k->buf = aligned_copy(params, n))) return CUDA_ERROR_OUT_OF_MEMORY;
    k->extra[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
    k->extra[1] = k->buf;
    k->extra[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
    k->extra[3] = &k->size;
    k->extra[4] = CU_LAUNCH_PARAM_END;
    k->p.extra = k->extra; /* the driver copies the arguments into the node */
    return CUDA_SUCCESS;
}

CUresult cuda_host_add_kernel_node(apigen_call_ctx *cx, CUgraphNode *phGraphNode, CUgraph hGraph,
                                   const CUgraphNode *dependencies, size_t numDependencies,
                                   uint64_t func, uint64_t kern, CUcontext ctx,
                                   const unsigned int *dims, const void *params, size_t paramsSize)
{
    knode k;
    CUresult e = knode_in(cx, &k, func, kern, ctx, dims, params, paramsSize);
    if (e == CUDA_SUCCESS)
        e = ADD_KNODE(phGraphNode, hGraph, dependencies, numDependencies, &k.p);
    free(k.buf);
    return e;
}

CUresult cuda_host_kernel_node_set(apigen_call_ctx *cx, CUgraphNode hNode, uint64_t func,
                                   uint64_t kern, CUcontext ctx, const unsigned int *dims,
                                   const void *params, size_t paramsSize)
{
    knode k;
    CUresult e = knode_in(cx, &k, func, kern, ctx, dims, params, paramsSize);
    if (e == CUDA_SUCCESS) e = SET_KNODE(hNode, &k.p);
    free(k.buf);
    return e;
}

CUresult cuda_host_exec_kernel_node_set(apigen_call_ctx *cx, CUgraphExec hGraphExec,
                                        CUgraphNode hNode, uint64_t func, uint64_t kern,
                                        CUcontext ctx, const unsigned int *dims,
                                        const void *params, size_t paramsSize)
{
    knode k;
    CUresult e = knode_in(cx, &k, func, kern, ctx, dims, params, paramsSize);
    if (e == CUDA_SUCCESS) e = EXEC_SET_KNODE(hGraphExec, hNode, &k.p);
    free(k.buf);
    return e;
}

CUresult cuda_host_kernel_node_get(apigen_call_ctx *cx, CUgraphNode hNode, uint64_t *func,
                                   uint64_t *kern, CUcontext *ctx, unsigned int *dims,
                                   void *params, size_t cap, size_t *paramsSize)
{
    CUDA_KERNEL_NODE_PARAMS p;
    memset(&p, 0, sizeof p);
    *paramsSize = 0;
    CUresult e = GET_KNODE(hNode, &p);
    if (e != CUDA_SUCCESS) return e;
    *func = p.func ? apigen_handle_put(cx, ht("CUfunction"), p.func) : 0;
    *kern = NODE_KERN(p) ? apigen_handle_put(cx, ht("CUkernel"), NODE_KERN(p)) : 0;
    *ctx = NODE_CTX(p); /* the generated handler turns it into the client's id */
    unsigned d[7] = {p.gridDimX,  p.gridDimY,  p.gridDimZ,      p.blockDimX,
                     p.blockDimY, p.blockDimZ, p.sharedMemBytes};
    memcpy(dims, d, sizeof d);
    /* the arguments, packed at the offsets of the kernel's layout */
    CUfunction f = p.func ? p.func : (CUfunction)NODE_KERN(p);
    int k = !p.func;
    size_t size = 0;
    for (unsigned i = 0; f && p.kernelParams && i < APIGEN_CUDA_MAX_PARAMS; i++) {
        size_t off, sz;
        CUresult r = param_info(f, k, i, &off, &sz);
        if (r != CUDA_SUCCESS) break;
        if (off + sz > size) size = off + sz;
        if (off + sz <= cap && p.kernelParams[i]) memcpy((char *)params + off, p.kernelParams[i], sz);
    }
    if (!p.kernelParams && p.extra) /* the node kept the packed buffer itself */
        for (size_t i = 0; p.extra[i] != CU_LAUNCH_PARAM_END && i < 16; i += 2)
            if (p.extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && p.extra[i + 1]) {
                size = *(size_t *)p.extra[i + 1];
                for (size_t j = 0; p.extra[j] != CU_LAUNCH_PARAM_END && j < 16; j += 2)
                    if (p.extra[j] == CU_LAUNCH_PARAM_BUFFER_POINTER && p.extra[j + 1])
                        memcpy(params, p.extra[j + 1], size < cap ? size : cap);
            }
    *paramsSize = size;
    return CUDA_SUCCESS;
}

/* ---- JIT linking ------------------------------------------------------------------------------ */
CUresult apigenCudaLinkCreate(unsigned int numOptions, const CUjit_option *options,
                              const uint64_t *optionValues, CUlinkState *stateOut,
                              unsigned int v2)
{
    void **vals = values(optionValues, numOptions);
    if (!vals) return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult e = v2 ? cuLinkCreate_v2(numOptions, (CUjit_option *)options, numOptions ? vals : NULL,
                                      stateOut)
                    : cuLinkCreate(numOptions, (CUjit_option *)options, numOptions ? vals : NULL,
                                   stateOut);
    free(vals); /* the driver copies the options */
    return e;
}

CUresult apigenCudaLinkAddData(CUlinkState state, CUjitInputType type, const void *data,
                               size_t size, const char *name, unsigned int numOptions,
                               const CUjit_option *options, const uint64_t *optionValues,
                               unsigned int v2)
{
    void *img = aligned_copy(data, size);
    void **vals = values(optionValues, numOptions);
    CUresult e = CUDA_ERROR_OUT_OF_MEMORY;
    if (img && vals)
        e = v2 ? cuLinkAddData_v2(state, type, img, size, name, numOptions,
                                  (CUjit_option *)options, numOptions ? vals : NULL)
               : cuLinkAddData(state, type, img, size, name, numOptions, (CUjit_option *)options,
                               numOptions ? vals : NULL);
    free(img);
    free(vals);
    return e;
}

/* The driver's linked image, kept per state until cuLinkDestroy: the guest
 * may ask again with more room (completing twice is an error). */
typedef struct done_link {
    CUlinkState state;
    void *image;
    size_t size;
    struct done_link *next;
} done_link;
static done_link *done_;
static pthread_mutex_t link_lock_ = PTHREAD_MUTEX_INITIALIZER;

CUresult apigenCudaLinkComplete(CUlinkState state, void *cubin, size_t cap, size_t *size)
{
    void *img = NULL;
    size_t n = 0;
    pthread_mutex_lock(&link_lock_);
    done_link *d = done_;
    while (d && d->state != state) d = d->next;
    if (d) img = d->image, n = d->size;
    pthread_mutex_unlock(&link_lock_);
    if (!d) {
        CUresult e = cuLinkComplete(state, &img, &n);
        if (e != CUDA_SUCCESS) return e;
        if ((d = calloc(1, sizeof *d))) {
            *d = (done_link){state, img, n, NULL};
            pthread_mutex_lock(&link_lock_);
            d->next = done_;
            done_ = d;
            pthread_mutex_unlock(&link_lock_);
        }
    }
    if (cubin && img) memcpy(cubin, img, n < cap ? n : cap);
    *size = n;
    return CUDA_SUCCESS;
}

CUresult cuda_host_link_destroy(apigen_call_ctx *cx, CUlinkState state)
{
    (void)cx;
    CUresult e = cuLinkDestroy(state);
    if (e != CUDA_SUCCESS) return e;
    pthread_mutex_lock(&link_lock_);
    for (done_link **pp = &done_; *pp;)
        if ((*pp)->state == state) {
            done_link *d = *pp;
            *pp = d->next;
            free(d);
        } else {
            pp = &(*pp)->next;
        }
    pthread_mutex_unlock(&link_lock_);
    return e;
}

/* ---- resource descriptors out: array handles become ids ----------------------------------------- */
static void res_out(apigen_call_ctx *cx, CUDA_RESOURCE_DESC *r)
{
    if (r->resType == CU_RESOURCE_TYPE_ARRAY && r->res.array.hArray)
        r->res.array.hArray =
            (CUarray)(uintptr_t)apigen_handle_put(cx, ht("CUarray"), r->res.array.hArray);
    else if (r->resType == CU_RESOURCE_TYPE_MIPMAPPED_ARRAY && r->res.mipmap.hMipmappedArray)
        r->res.mipmap.hMipmappedArray = (CUmipmappedArray)(uintptr_t)apigen_handle_put(
            cx, ht("CUmipmappedArray"), r->res.mipmap.hMipmappedArray);
}

CUresult cuda_host_tex_resource_desc(apigen_call_ctx *cx, CUDA_RESOURCE_DESC *pResDesc,
                                     CUtexObject texObject)
{
    CUresult e = cuTexObjectGetResourceDesc(pResDesc, texObject);
    if (e == CUDA_SUCCESS && pResDesc) res_out(cx, pResDesc);
    return e;
}

CUresult cuda_host_surf_resource_desc(apigen_call_ctx *cx, CUDA_RESOURCE_DESC *pResDesc,
                                      CUsurfObject surfObject)
{
    CUresult e = cuSurfObjectGetResourceDesc(pResDesc, surfObject);
    if (e == CUDA_SUCCESS && pResDesc) res_out(cx, pResDesc);
    return e;
}

/* ---- occupancy (occupancy.c) ------------------------------------------------------------------- */
CUresult cuda_host_occupancy_block_size(apigen_call_ctx *cx, int *minGridSize, int *blockSize,
                                        uint64_t func, size_t dynamicSMemSize, int blockSizeLimit,
                                        unsigned int flags, int withFlags)
{
    int k;
    CUfunction f = func_of(cx, func, &k);
    if (!f && func) return CUDA_ERROR_INVALID_HANDLE;
    return withFlags ? cuOccupancyMaxPotentialBlockSizeWithFlags(minGridSize, blockSize, f, NULL,
                                                                 dynamicSMemSize, blockSizeLimit,
                                                                 flags)
                     : cuOccupancyMaxPotentialBlockSize(minGridSize, blockSize, f, NULL,
                                                        dynamicSMemSize, blockSizeLimit);
}

CUresult cuda_host_occupancy_cluster(apigen_call_ctx *cx, int which, int *out, uint64_t func,
                                     const unsigned int *dims, CUstream hStream,
                                     const CUlaunchAttribute *attrs, unsigned int numAttrs)
{
    int k;
    CUfunction f = func_of(cx, func, &k);
    if (!f && func) return CUDA_ERROR_INVALID_HANDLE;
#ifndef APIGEN_HAS_FN_cuOccupancyMaxActiveClusters /* 11.8: the guest has no cluster calls before */
    (void)which, (void)out, (void)dims, (void)hStream, (void)attrs, (void)numAttrs;
    return CUDA_ERROR_NOT_SUPPORTED;
#else
    for (unsigned i = 0; i < numAttrs; i++)
        if (attrs[i].id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT
#ifdef APIGEN_HAS_CONST_CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT
            || attrs[i].id == CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT
#endif
        )
            return CUDA_ERROR_NOT_SUPPORTED;
    CUlaunchConfig c = {dims[0], dims[1], dims[2], dims[3], dims[4], dims[5], dims[6],
                        hStream, (CUlaunchAttribute *)attrs, numAttrs};
    return which ? cuOccupancyMaxActiveClusters(out, f, &c)
                 : cuOccupancyMaxPotentialClusterSize(out, f, &c);
#endif
}

/* ---- memcpy nodes: both sides on the server ------------------------------------------------------ */
static CUresult node_side(apigen_call_ctx *cx, CUmemorytype *t, CUdeviceptr dev, CUarray *arr,
                          const void **host)
{
    switch (*t) {
    case CU_MEMORYTYPE_ARRAY: return to_real(cx, "CUarray", arr) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
    case CU_MEMORYTYPE_DEVICE:
    case CU_MEMORYTYPE_UNIFIED:
        if (dev && apigen_dev_owned(cx->session, dev, 0, false)) return CUDA_SUCCESS;
        if (*t == CU_MEMORYTYPE_DEVICE) return CUDA_ERROR_INVALID_VALUE;
        break; /* a unified address that is no device memory: the guest's host memory */
    case CU_MEMORYTYPE_HOST: break;
    default: return CUDA_SUCCESS; /* the driver's own error */
    }
    (void)host;
    apigen_log("cuda: a graph memcpy node names host memory of the guest, which a graph run by "
               "the server cannot reach: not supported (copy from or to device memory)");
    return CUDA_ERROR_NOT_SUPPORTED;
}

static CUresult node_copy_in(apigen_call_ctx *cx, const CUDA_MEMCPY3D *in, CUDA_MEMCPY3D *c)
{
    if (!in) return CUDA_ERROR_INVALID_VALUE;
    *c = *in;
    CUresult e = node_side(cx, &c->srcMemoryType, c->srcDevice, &c->srcArray, &c->srcHost);
    if (e == CUDA_SUCCESS)
        e = node_side(cx, &c->dstMemoryType, c->dstDevice, &c->dstArray, (const void **)&c->dstHost);
    c->srcHost = NULL; /* guest pointers: never the server's */
    c->dstHost = NULL;
    return e;
}

CUresult cuda_host_add_memcpy_node(apigen_call_ctx *cx, CUgraphNode *phGraphNode, CUgraph hGraph,
                                   const CUgraphNode *dependencies, size_t numDependencies,
                                   const CUDA_MEMCPY3D *copyParams, CUcontext ctx)
{
    CUDA_MEMCPY3D c;
    CUresult e = node_copy_in(cx, copyParams, &c);
    return e != CUDA_SUCCESS ? e
                             : cuGraphAddMemcpyNode(phGraphNode, hGraph, dependencies,
                                                    numDependencies, &c, ctx);
}

CUresult cuda_host_memcpy_node_set(apigen_call_ctx *cx, CUgraphNode hNode,
                                   const CUDA_MEMCPY3D *nodeParams)
{
    CUDA_MEMCPY3D c;
    CUresult e = node_copy_in(cx, nodeParams, &c);
    return e != CUDA_SUCCESS ? e : cuGraphMemcpyNodeSetParams(hNode, &c);
}

CUresult cuda_host_exec_memcpy_node_set(apigen_call_ctx *cx, CUgraphExec hGraphExec,
                                        CUgraphNode hNode, const CUDA_MEMCPY3D *copyParams,
                                        CUcontext ctx)
{
    CUDA_MEMCPY3D c;
    CUresult e = node_copy_in(cx, copyParams, &c);
    return e != CUDA_SUCCESS ? e : cuGraphExecMemcpyNodeSetParams(hGraphExec, hNode, &c, ctx);
}

CUresult cuda_host_memcpy_node_get(apigen_call_ctx *cx, CUgraphNode hNode,
                                   CUDA_MEMCPY3D *nodeParams)
{
    CUresult e = cuGraphMemcpyNodeGetParams(hNode, nodeParams);
    if (e != CUDA_SUCCESS || !nodeParams) return e;
    if (nodeParams->srcArray)
        nodeParams->srcArray =
            (CUarray)(uintptr_t)apigen_handle_put(cx, ht("CUarray"), nodeParams->srcArray);
    if (nodeParams->dstArray)
        nodeParams->dstArray =
            (CUarray)(uintptr_t)apigen_handle_put(cx, ht("CUarray"), nodeParams->dstArray);
    nodeParams->srcHost = NULL; /* none: host sides are refused */
    nodeParams->dstHost = NULL;
    return e;
}

/* ---- memory allocation and batch memory operation nodes (graph_nodes.c) -------------------------- */
CUresult apigenCudaAddMemAllocNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                   const CUgraphNode *dependencies, size_t numDependencies,
                                   const CUmemPoolProps *poolProps,
                                   const CUmemAccessDesc *accessDescs, size_t accessDescCount,
                                   size_t bytesize, CUdeviceptr *dptr)
{
    CUDA_MEM_ALLOC_NODE_PARAMS p;
    memset(&p, 0, sizeof p);
    if (poolProps) p.poolProps = *poolProps;
    p.accessDescs = accessDescs;
    p.accessDescCount = accessDescCount;
    p.bytesize = bytesize;
    CUresult e = cuGraphAddMemAllocNode(phGraphNode, hGraph, dependencies, numDependencies, &p);
    if (dptr) *dptr = e == CUDA_SUCCESS ? p.dptr : 0;
    return e;
}

CUresult apigenCudaMemAllocNodeGetParams(CUgraphNode hNode, CUmemPoolProps *poolProps,
                                         CUmemAccessDesc *accessDescs, size_t cap,
                                         size_t *accessDescCount, size_t *bytesize,
                                         CUdeviceptr *dptr)
{
    CUDA_MEM_ALLOC_NODE_PARAMS p;
    memset(&p, 0, sizeof p);
    CUresult e = cuGraphMemAllocNodeGetParams(hNode, &p);
    if (e != CUDA_SUCCESS) return e;
    *poolProps = p.poolProps;
    *accessDescCount = p.accessDescCount;
    for (size_t i = 0; accessDescs && p.accessDescs && i < p.accessDescCount && i < cap; i++)
        accessDescs[i] = p.accessDescs[i];
    *bytesize = p.bytesize;
    *dptr = p.dptr;
    return e;
}

CUresult apigenCudaBatchMemOpNode(unsigned int op, CUgraphNode *phGraphNode, CUgraph hGraph,
                                  const CUgraphNode *dependencies, size_t numDependencies,
                                  CUgraphExec hGraphExec, CUgraphNode hNode, CUcontext ctx,
                                  const CUstreamBatchMemOpParams *paramArray, unsigned int count,
                                  unsigned int flags)
{
    CUDA_BATCH_MEM_OP_NODE_PARAMS p = {ctx, count, (CUstreamBatchMemOpParams *)paramArray, flags};
    switch (op) {
    case 0: return cuGraphAddBatchMemOpNode(phGraphNode, hGraph, dependencies, numDependencies, &p);
    case 1: return cuGraphBatchMemOpNodeSetParams(hNode, &p);
    case 2: return cuGraphExecBatchMemOpNodeSetParams(hGraphExec, hNode, &p);
    }
    return CUDA_ERROR_INVALID_VALUE;
}

CUresult apigenCudaBatchMemOpNodeGetParams(CUgraphNode hNode, CUcontext *ctx,
                                           CUstreamBatchMemOpParams *paramArray, unsigned int cap,
                                           unsigned int *count, unsigned int *flags)
{
    CUDA_BATCH_MEM_OP_NODE_PARAMS p;
    memset(&p, 0, sizeof p);
    CUresult e = cuGraphBatchMemOpNodeGetParams(hNode, &p);
    if (e != CUDA_SUCCESS) return e;
    *ctx = p.ctx;
    *count = p.count;
    *flags = p.flags;
    for (unsigned i = 0; paramArray && p.paramArray && i < p.count && i < cap; i++)
        paramArray[i] = p.paramArray[i];
    return e;
}

#ifdef APIGEN_HAS_FN_cuGraphExecUpdate_v2 /* 12.0 */
/* cuGraphExecUpdate_v2: the nodes named in resultInfo, as the client's ids */
CUresult cuda_host_exec_update(apigen_call_ctx *cx, CUgraphExec hGraphExec, CUgraph hGraph,
                               CUgraphExecUpdateResultInfo *resultInfo)
{
    CUresult e = cuGraphExecUpdate_v2(hGraphExec, hGraph, resultInfo);
    if (resultInfo) {
        CUgraphNode *n[2] = {&resultInfo->errorNode, &resultInfo->errorFromNode};
        for (int i = 0; i < 2; i++)
            *n[i] = *n[i] ? (CUgraphNode)(uintptr_t)apigen_handle_put(cx, ht("CUgraphNode"), *n[i])
                          : NULL;
    }
    return e;
}
#endif

/* A forwarded device reaches neither the guest's pageable memory nor its
 * managed memory while the guest's CPU uses it (docs/managed.md). */
CUresult cuda_host_device_attribute(apigen_call_ctx *cx, int *pi, CUdevice_attribute attrib,
                                    CUdevice dev)
{
    (void)cx;
    CUresult e = cuDeviceGetAttribute(pi, attrib, dev);
    if (e == CUDA_SUCCESS && pi &&
        (attrib == CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS ||
         attrib == CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS ||
         attrib == CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES ||
         attrib == CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST))
        *pi = 0;
    return e;
}
