/* apigen_cudart.h: declarations the cudart spec parses next to
 * cuda_runtime_api.h (see specs/cudart.yaml).
 *
 * 1. The hidden entry points that programs built by nvcc -cudart shared call
 *    (crt/host_runtime.h and crt/device_functions.h declare them for C++
 *    only). The guest implements them in specs/cudart/guest.c.
 * 2. Functions libcudart.so.13 exports that cuda_runtime_api.h does not
 *    declare: profiler control and graphics interop (GL, EGL, VDPAU), whose
 *    headers need the graphics libraries' headers. Argument types are
 *    simplified to what is ABI-identical (GLuint -> unsigned int, handles ->
 *    void *), since the stub never passes them on.
 * 3. Internal calls (prefix apigenCudart): the wire messages of the
 *    hand-written guest code. Forwarded by generated code, never exported;
 *    the server implements them in specs/cudart/host.c with the real
 *    runtime. */
#ifndef APIGEN_CUDART_H
#define APIGEN_CUDART_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "apigen_cudart_compat.h" /* cuda_runtime_api.h + what older versions lack */

#ifdef __cplusplus
extern "C" {
#endif

/* ---- 1. hidden entry points ---------------------------------------------- */
void **__cudaRegisterFatBinary(void *fatCubin);
void __cudaRegisterFatBinaryEnd(void **fatCubinHandle);
void __cudaUnregisterFatBinary(void **fatCubinHandle);
void __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress,
                       const char *deviceName, int ext, size_t size, int constant, int global);
void __cudaRegisterManagedVar(void **fatCubinHandle, void **hostVarPtrAddress, char *deviceAddress,
                              const char *deviceName, int ext, size_t size, int constant,
                              int global);
void __cudaRegisterHostVar(void **fatCubinHandle, const char *deviceName, char *hostVar,
                           size_t size);
char __cudaInitModule(void **fatCubinHandle);
void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
                            const char *deviceName, int thread_limit, uint3 *tid, uint3 *bid,
                            dim3 *bDim, dim3 *gDim, int *wSize);
void __cudaRegisterUnifiedTable(void *table);
cudaError_t __cudaGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                 unsigned long long flags, void *symbolStatus);
unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                     cudaStream_t stream);
cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem,
                                       void *stream);
cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *fun);
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
                               size_t sharedMem, cudaStream_t stream);
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
                                    size_t sharedMem, cudaStream_t stream);

/* ---- 2. exported, declared elsewhere ------------------------------------------ */
cudaError_t cudaProfilerStart(void);
cudaError_t cudaProfilerStop(void);
cudaError_t cudaGLGetDevices(unsigned int *pCudaDeviceCount, int *pCudaDevices,
                             unsigned int cudaDeviceCount, int deviceList);
cudaError_t cudaGraphicsGLRegisterImage(cudaGraphicsResource_t *resource, unsigned int image,
                                        unsigned int target, unsigned int flags);
cudaError_t cudaGraphicsGLRegisterBuffer(cudaGraphicsResource_t *resource, unsigned int buffer,
                                         unsigned int flags);
cudaError_t cudaGLSetGLDevice(int device);
cudaError_t cudaGLRegisterBufferObject(unsigned int bufObj);
cudaError_t cudaGLMapBufferObject(void **devPtr, unsigned int bufObj);
cudaError_t cudaGLUnmapBufferObject(unsigned int bufObj);
cudaError_t cudaGLUnregisterBufferObject(unsigned int bufObj);
cudaError_t cudaGLSetBufferObjectMapFlags(unsigned int bufObj, unsigned int flags);
cudaError_t cudaGLMapBufferObjectAsync(void **devPtr, unsigned int bufObj, cudaStream_t stream);
cudaError_t cudaGLUnmapBufferObjectAsync(unsigned int bufObj, cudaStream_t stream);
cudaError_t cudaGraphicsEGLRegisterImage(cudaGraphicsResource_t *pCudaResource, void *image,
                                         unsigned int flags);
cudaError_t cudaEGLStreamConsumerConnect(void *conn, void *eglStream);
cudaError_t cudaEGLStreamConsumerConnectWithFlags(void *conn, void *eglStream, unsigned int flags);
cudaError_t cudaEGLStreamConsumerDisconnect(void *conn);
cudaError_t cudaEGLStreamConsumerAcquireFrame(void *conn, cudaGraphicsResource_t *pCudaResource,
                                              cudaStream_t *pStream, unsigned int timeout);
cudaError_t cudaEGLStreamConsumerReleaseFrame(void *conn, cudaGraphicsResource_t pCudaResource,
                                              cudaStream_t *pStream);
cudaError_t cudaEGLStreamProducerConnect(void *conn, void *eglStream, int width, int height);
cudaError_t cudaEGLStreamProducerDisconnect(void *conn);
cudaError_t cudaEGLStreamProducerPresentFrame(void *conn, void *eglframe, cudaStream_t *pStream);
cudaError_t cudaEGLStreamProducerReturnFrame(void *conn, void *eglframe, cudaStream_t *pStream);
cudaError_t cudaGraphicsResourceGetMappedEglFrame(void *eglFrame, cudaGraphicsResource_t resource,
                                                  unsigned int index, unsigned int mipLevel);
cudaError_t cudaEventCreateFromEGLSync(cudaEvent_t *phEvent, void *eglSync, unsigned int flags);
cudaError_t cudaVDPAUGetDevice(int *device, uintptr_t vdpDevice, void *vdpGetProcAddress);
cudaError_t cudaVDPAUSetVDPAUDevice(int device, uintptr_t vdpDevice, void *vdpGetProcAddress);
cudaError_t cudaGraphicsVDPAURegisterVideoSurface(cudaGraphicsResource_t *resource,
                                                  uint32_t vdpSurface, unsigned int flags);
cudaError_t cudaGraphicsVDPAURegisterOutputSurface(cudaGraphicsResource_t *resource,
                                                   uint32_t vdpSurface, unsigned int flags);

/* ---- 3. internal calls ----------------------------------------------------------- */

/* Module handle on the server: one registered fat binary. */
typedef struct apigenCudartModule_st *apigenCudartModule;

/* One symbol of a module, as __cudaRegisterFunction / __cudaRegisterVar
 * gave it; names[name_off] is its device name. */
typedef struct apigenCudartSym {
    uint32_t kind; /* APIGEN_CUDART_SYM_FUNCTION or _VAR */
    uint32_t name_off;
    int32_t thread_limit; /* functions */
    int32_t ext;          /* variables: ext, constant, global, size */
    int32_t constant;
    int32_t global;
    uint64_t size;
} apigenCudartSym;

#define APIGEN_CUDART_SYM_FUNCTION 1
#define APIGEN_CUDART_SYM_VAR 2
#define APIGEN_CUDART_SYM_MANAGED 3 /* a __managed__ variable: its proxy answer is the managed address */
#define APIGEN_CUDART_MAX_PARAMS 1024

/* Ships a fat binary and its symbols once; the server registers them with
 * the real runtime under proxy host addresses and returns one proxy per
 * symbol. */
cudaError_t apigenCudartRegisterModule(const void *image, size_t imageSize, const char *names,
                                       size_t namesSize, const apigenCudartSym *syms,
                                       uint32_t nsyms, apigenCudartModule *module,
                                       uint64_t *proxies);
cudaError_t apigenCudartUnregisterModule(apigenCudartModule module);

/* A kernel's parameter layout (cudaFuncGetParamInfo), for func (a proxy) or
 * kernel; *nparams <= APIGEN_CUDART_MAX_PARAMS. */
cudaError_t apigenCudartParamLayout(const void *func, cudaKernel_t kernel, uint32_t *nparams,
                                    uint64_t *offsets, uint64_t *sizes);

/* flags of the launch and copy calls */
#define APIGEN_CUDART_PTSZ 1u        /* the _ptsz / _ptds entry point */
#define APIGEN_CUDART_COOPERATIVE 2u /* cudaLaunchCooperativeKernel */
#define APIGEN_CUDART_ASYNC 4u       /* the ...Async copy on `stream` */
#define APIGEN_CUDART_SYNC 8u        /* a launch sent synchronously: the runtime will refuse it */
#define APIGEN_CUDART_PIPE 16u       /* a box of a large array copy sent without waiting */

/* One launch: the arguments packed at the offsets of the kernel's layout;
 * attrs: cudaLaunchKernelExC's attributes. */
cudaError_t apigenCudartLaunch(const void *func, cudaKernel_t kernel, dim3 grid, dim3 block,
                               size_t sharedMem, cudaStream_t stream, const void *params,
                               size_t paramsSize, const cudaLaunchAttribute *attrs,
                               uint32_t numAttrs, uint32_t flags);

/* Host functions (cudaLaunchHostFunc, cudaStreamAddCallback): the server
 * enqueues a host function on the real stream; when the stream reaches it,
 * it calls `fn` (a callback to the guest, which runs the user's function on
 * its callback thread) and blocks the stream until the guest answers with
 * apigenCudartHostFnDone(id), so work queued after it waits as in CUDA. */
typedef void (*apigenCudartHostFnCb)(uint64_t id, int32_t status, void *user);
cudaError_t apigenCudartEnqueueHostFn(cudaStream_t stream, apigenCudartHostFnCb fn, void *user,
                                      uint64_t id, uint32_t isCallback, uint32_t flags);
cudaError_t apigenCudartHostFnDone(uint64_t id);

/* cudaMemcpy3D(Async) with a CUDA array on either side (guest.c
 * memcpy3d_array): the server translates the array handles, checks device
 * sides, and points a host side (src or dst, a dense buffer of
 * p->srcPtr.pitch * ysize * depth bytes) at the bytes that travel. flags:
 * APIGEN_CUDART_ASYNC, APIGEN_CUDART_PTSZ. */
cudaError_t apigenCudartMemcpy3D(const struct cudaMemcpy3DParms *p, const void *src,
                                 size_t srcSize, void *dst, size_t dstSize, cudaStream_t stream,
                                 uint32_t flags);
/* The same from host memory only (a box of a large copy, guest.c
 * array_boxes): with APIGEN_CUDART_PIPE sent without waiting for a reply
 * (its error becomes the thread's, returned by the next synchronous call). */
cudaError_t apigenCudartMemcpy3DIn(const struct cudaMemcpy3DParms *p, const void *src,
                                   size_t srcSize, cudaStream_t stream, uint32_t flags);

/* An error the guest decided without the server (invalid flags, a pointer
 * it never handed out): queued, so that it becomes the thread's last error
 * (cudaGetLastError / cudaPeekAtLastError) in order with the calls around
 * it. The server sets it with apigen_set_last_error and returns success. */
cudaError_t apigenCudartNoteError(cudaError_t error);

/* ---- graph nodes, capture info, occupancy, libraries, notifications ------------------------
 * Guest code in specs/cudart/guest.c, host code in specs/cudart/host_nodes.c. */

/* Kernel nodes: the arguments packed at the offsets of the kernel's layout,
 * as for apigenCudartLaunch; func is a proxy (or a cudaKernel_t's value). */
cudaError_t apigenCudartAddKernelNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                      const cudaGraphNode_t *pDependencies,
                                      size_t numDependencies, const void *func, dim3 grid,
                                      dim3 block, unsigned int sharedMem, const void *params,
                                      size_t paramsSize);
cudaError_t apigenCudartKernelNodeSetParams(cudaGraphNode_t node, const void *func, dim3 grid,
                                            dim3 block, unsigned int sharedMem,
                                            const void *params, size_t paramsSize);
cudaError_t apigenCudartExecKernelNodeSetParams(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
                                                const void *func, dim3 grid, dim3 block,
                                                unsigned int sharedMem, const void *params,
                                                size_t paramsSize);
/* *func: the server's proxy; params: up to paramsCap packed bytes */
cudaError_t apigenCudartKernelNodeGetParams(cudaGraphNode_t node, uint64_t *func, dim3 *grid,
                                            dim3 *block, unsigned int *sharedMem,
                                            unsigned char *params, size_t paramsCap,
                                            size_t *paramsSize);
#define APIGEN_CUDART_MAX_PARAM_BYTES 32768

/* Host nodes: fn (a callback to the guest, registered for the node's life)
 * is called with a fresh id each time the node runs; the graph waits for
 * apigenCudartHostFnDone(id) as a host function's stream does. `id` names
 * the guest's (fn, userData) for apigenCudartHostNodeGetParams. */
cudaError_t apigenCudartAddHostNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                    const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                    apigenCudartHostFnCb fn, void *user, uint64_t id);
cudaError_t apigenCudartHostNodeSetParams(cudaGraphNode_t node, apigenCudartHostFnCb fn,
                                          void *user, uint64_t id);
cudaError_t apigenCudartExecHostNodeSetParams(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
                                              apigenCudartHostFnCb fn, void *user, uint64_t id);
cudaError_t apigenCudartHostNodeGetParams(cudaGraphNode_t node, uint64_t *id);

/* cudaStreamGetCaptureInfo: the dependencies copied out (up to cap; *numDeps
 * is the full count); flags: APIGEN_CUDART_PTSZ */
cudaError_t apigenCudartStreamGetCaptureInfo(cudaStream_t stream,
                                             enum cudaStreamCaptureStatus *status,
                                             unsigned long long *id, cudaGraph_t *graph,
                                             cudaGraphNode_t *deps, cudaGraphEdgeData *edges,
                                             size_t cap, size_t *numDeps, uint32_t flags);

/* cudaOccupancyMaxPotentialClusterSize (which 0) / MaxActiveClusters (1)
 * with the cudaLaunchConfig_t's fields */
cudaError_t apigenCudartOccupancyCluster(int *result, const void *func, dim3 grid, dim3 block,
                                         size_t sharedMem, cudaStream_t stream,
                                         const cudaLaunchAttribute *attrs, uint32_t numAttrs,
                                         uint32_t which);

/* cudaLibraryLoadData with the image's size (apigen_cudart_image_size) */
cudaError_t apigenCudartLibraryLoadData(cudaLibrary_t *library, const void *code,
                                        size_t codeSize, enum cudaJitOption *jitOptions,
                                        void **jitOptionsValues, unsigned int numJitOptions,
                                        enum cudaLibraryOption *libraryOptions,
                                        void **libraryOptionValues,
                                        unsigned int numLibraryOptions);

/* External semaphore nodes: wait != 0 for the wait kind (its parameter
 * struct has the signal one's size and layout of handles: none) */
cudaError_t apigenCudartAddExtSemNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                      const cudaGraphNode_t *pDependencies,
                                      size_t numDependencies, const cudaExternalSemaphore_t *sems,
                                      const struct cudaExternalSemaphoreSignalParams *params,
                                      uint32_t numExtSems, uint32_t wait);
cudaError_t apigenCudartExtSemNodeSetParams(cudaGraphNode_t node,
                                            const cudaExternalSemaphore_t *sems,
                                            const struct cudaExternalSemaphoreSignalParams *params,
                                            uint32_t numExtSems, uint32_t wait);
cudaError_t apigenCudartExecExtSemNodeSetParams(
    cudaGraphExec_t hGraphExec, cudaGraphNode_t node, const cudaExternalSemaphore_t *sems,
    const struct cudaExternalSemaphoreSignalParams *params, uint32_t numExtSems, uint32_t wait);
cudaError_t apigenCudartExtSemNodeGetParams(cudaGraphNode_t node, cudaExternalSemaphore_t *sems,
                                            struct cudaExternalSemaphoreSignalParams *params,
                                            uint32_t cap, uint32_t *numExtSems, uint32_t wait);

/* Memory allocation nodes: the struct's fields, its access descriptors as
 * an array; *dptr becomes a device range of the client */
cudaError_t apigenCudartAddMemAllocNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                        const cudaGraphNode_t *pDependencies,
                                        size_t numDependencies,
                                        const struct cudaMemPoolProps *poolProps,
                                        const struct cudaMemAccessDesc *accessDescs,
                                        size_t accessDescCount, size_t bytesize, void **dptr);
cudaError_t apigenCudartMemAllocNodeGetParams(cudaGraphNode_t node,
                                              struct cudaMemPoolProps *poolProps,
                                              struct cudaMemAccessDesc *accessDescs, size_t cap,
                                              size_t *accessDescCount, size_t *bytesize,
                                              void **dptr);

/* Log callbacks and async notifications: the server registers its own
 * callback, which calls fn (a callback to the guest) with what the driver
 * said; a log message is fetched with apigenCudartLogsTake(msg). *reg names
 * the registration for the Unregister calls. */
typedef void (*apigenCudartLogCb)(uint64_t msg, uint32_t level, void *user);
cudaError_t apigenCudartLogsRegister(apigenCudartLogCb fn, void *user, uint64_t *reg);
cudaError_t apigenCudartLogsTake(uint64_t msg, char *buf, size_t cap, size_t *len);
cudaError_t apigenCudartLogsUnregister(uint64_t reg);
#define APIGEN_CUDART_MAX_LOG 4096
typedef void (*apigenCudartAsyncCb)(uint32_t type, uint64_t bytesOverBudget, void *user);
cudaError_t apigenCudartRegisterAsyncNotification(int device, apigenCudartAsyncCb fn, void *user,
                                                  uint64_t *reg);
cudaError_t apigenCudartUnregisterAsyncNotification(int device, uint64_t reg);

/* The size of a cudaLibraryLoadData image: a fat binary's header, an ELF's
 * section/program header tables, or PTX text with its NUL; 0 when it is
 * none of them or does not fit in max bytes (guest: SIZE_MAX). */
static inline size_t apigen_cudart_image_size(const void *code, size_t max)
{
    const unsigned char *p = (const unsigned char *)code;
    if (!p || max < 4) return 0;
    if (p[0] == 0x50 && p[1] == 0xED && p[2] == 0x55 && p[3] == 0xBA) { /* fat binary */
        uint16_t hs;
        uint64_t fs;
        if (max < 16) return 0;
        memcpy(&hs, p + 6, 2);
        memcpy(&fs, p + 8, 8);
        if (fs > max || hs > max - fs) return 0;
        return (size_t)hs + (size_t)fs;
    }
    if (p[0] == 0x7f && p[1] == 'E' && p[2] == 'L' && p[3] == 'F') { /* 64-bit ELF (cubin) */
        uint64_t shoff, phoff;
        uint16_t shentsize, shnum, phentsize, phnum;
        if (max < 64 || p[4] != 2) return 0;
        memcpy(&phoff, p + 32, 8);
        memcpy(&shoff, p + 40, 8);
        memcpy(&phentsize, p + 54, 2);
        memcpy(&phnum, p + 56, 2);
        memcpy(&shentsize, p + 58, 2);
        memcpy(&shnum, p + 60, 2);
        if (shoff > max || phoff > max) return 0;
        uint64_t end = 64, a = shoff + (uint64_t)shentsize * shnum,
                 b = phoff + (uint64_t)phentsize * phnum;
        if (a > end) end = a;
        if (b > end) end = b;
        return end <= max ? (size_t)end : 0;
    }
    const void *nul = memchr(p, 0, max < ((size_t)1 << 30) ? max : ((size_t)1 << 30)); /* PTX */
    return nul ? (size_t)((const unsigned char *)nul - p) + 1 : 0;
}

#ifdef __cplusplus
}
#endif
/* EnqueueHostFn flag beside APIGEN_CUDART_PTSZ: a host function captured into a graph runs at
 * every launch of it, so neither side frees its record after the first run. */
#define APIGEN_CUDART_PERSIST 2u

#endif
