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

#include "cuda_runtime_api.h"

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

#ifdef __cplusplus
}
#endif
#endif
