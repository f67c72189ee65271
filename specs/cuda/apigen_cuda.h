/* Internal calls of the CUDA driver stub (specs/cuda.yaml, `internal: true`):
 * wire messages between the hand-written guest code (guest.c) and host code
 * (host.c), never exported. apigen generates their encoding and checks. */
#ifndef APIGEN_CUDA_H
#define APIGEN_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

/* What the headers declare (written by apigen next to the generated code):
 * stand-ins for the types older versions lack, which the internal calls
 * below name (an older stub never sends them). */
#include "cuda_features.h"
#ifndef APIGEN_HAS_TYPE_CUlibrary /* 12.0 */
typedef struct CUlib_st *CUlibrary;
#endif
#ifndef APIGEN_HAS_TYPE_CUkernel /* 12.0 */
typedef struct CUkern_st *CUkernel;
#endif
#ifndef APIGEN_HAS_TYPE_CUlibraryOption
typedef enum CUlibraryOption_enum { APIGEN_CUDA_NO_LIBRARY_OPTION_ = -1 } CUlibraryOption;
#endif
#ifndef APIGEN_HAS_TYPE_CUlaunchAttribute /* 11.8: never sent before (APIGEN_CUDA_LAUNCH_COOP) */
typedef struct CUlaunchAttribute_st {
    int id;
} CUlaunchAttribute;
#endif
#ifndef APIGEN_HAS_TYPE_CUgraphEdgeData /* 12.3 */
typedef struct CUgraphEdgeData_st {
    unsigned char from_port;
    unsigned char to_port;
    unsigned char type;
    unsigned char reserved[5];
} CUgraphEdgeData;
#endif

/* kernel parameters the layout query reports at most */
#define APIGEN_CUDA_MAX_PARAMS 512

/* apigenCudaLaunch flags */
#define APIGEN_CUDA_LAUNCH_PTSZ 1u   /* the per-thread default stream entry point */
#define APIGEN_CUDA_LAUNCH_SYNC 2u   /* sent synchronously: a configuration the guest cannot vouch for */
/* a cooperative launch where the headers have no launch attributes (before
 * 11.8; from 11.8 on, CU_LAUNCH_ATTRIBUTE_COOPERATIVE says it) */
#define APIGEN_CUDA_LAUNCH_COOP 4u

/* The error's name (which == 0) or description (which == 1), as the
 * server's driver says it; *len: bytes written including the NUL. */
CUresult apigenCudaErrorString(CUresult error, int which, char *buf, size_t cap, size_t *len);

/* cuFuncGetName (isKernel == 0) / cuKernelGetName (1) of a handle id. */
CUresult apigenCudaFuncName(uint64_t func, int isKernel, char *buf, size_t cap, size_t *len);

/* cuModuleLoadDataEx with the image's size (read from its header by the
 * guest) and the option values as 64-bit integers. */
CUresult apigenCudaModuleLoad(CUmodule *module, const void *image, size_t imageSize,
                              unsigned int numOptions, const CUjit_option *options,
                              const uint64_t *optionValues);

/* cuLibraryLoadData likewise. */
CUresult apigenCudaLibraryLoad(CUlibrary *library, const void *code, size_t codeSize,
                               unsigned int numJitOptions, const CUjit_option *jitOptions,
                               const uint64_t *jitOptionsValues, unsigned int numLibraryOptions,
                               const CUlibraryOption *libraryOptions,
                               const uint64_t *libraryOptionValues);

/* The parameter layout of a CUfunction (isKernel == 0) or CUkernel (1) id:
 * offsets and sizes of its parameters in order (cuFuncGetParamInfo). */
CUresult apigenCudaParamLayout(uint64_t func, int isKernel, size_t *offsets, size_t *sizes,
                               unsigned int *nparams);

/* One launch: the packed parameter buffer (the layout's offsets), the
 * launch attributes (CU_LAUNCH_ATTRIBUTE_COOPERATIVE for cooperative
 * launches), flags APIGEN_CUDA_LAUNCH_*. */
CUresult apigenCudaLaunch(uint64_t func, int isKernel, unsigned int gridDimX,
                          unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX,
                          unsigned int blockDimY, unsigned int blockDimZ,
                          unsigned int sharedMemBytes, CUstream hStream, const void *params,
                          size_t paramsSize, const CUlaunchAttribute *attrs, unsigned int numAttrs,
                          unsigned int flags);

/* Host functions (cuLaunchHostFunc, cuStreamAddCallback): the server's
 * stream reaches a host function of its own that calls `fn` (a callback to
 * the guest, which runs the application's function on its callback thread)
 * and blocks the stream until the guest answers apigenCudaHostFnDone(id). */
#define APIGEN_CUDA_HOSTFN_PTSZ 1u     /* the _ptsz entry point */
#define APIGEN_CUDA_HOSTFN_PERSIST 2u  /* captured into a graph: runs at every launch */
typedef void (*apigenCudaHostFnCb)(uint64_t id, int32_t status, void *user);
CUresult apigenCudaEnqueueHostFn(CUstream hStream, apigenCudaHostFnCb fn, void *user, uint64_t id,
                                 uint32_t isCallback, uint32_t flags);
CUresult apigenCudaHostFnDone(uint64_t id);

/* Graph host nodes (hostfn.c, host_fn.c): op APIGEN_CUDA_HOST_NODE_ADD
 * (phGraphNode, hGraph, dependencies), _SET (hNode) or _EXEC_SET
 * (hGraphExec, hNode). The server's node calls fn (registered for the
 * node's life) with `id` at each run and waits for apigenCudaHostFnDone(id),
 * as a stream's host function does. apigenCudaHostNodeGetParams answers
 * the id of the node's registration (this session's only). */
#define APIGEN_CUDA_HOST_NODE_ADD 0u
#define APIGEN_CUDA_HOST_NODE_SET 1u
#define APIGEN_CUDA_HOST_NODE_EXEC_SET 2u
CUresult apigenCudaHostNode(unsigned int op, CUgraphNode *phGraphNode, CUgraph hGraph,
                            const CUgraphNode *dependencies, size_t numDependencies,
                            CUgraphExec hGraphExec, CUgraphNode hNode, apigenCudaHostFnCb fn,
                            void *user, uint64_t id);
CUresult apigenCudaHostNodeGetParams(CUgraphNode hNode, uint64_t *id);

/* cuStreamGetCaptureInfo_v2/_v3: the driver's dependency arrays copied
 * out (room for cap; *numDeps is the full count); ptsz: the _ptsz form. */
CUresult apigenCudaStreamGetCaptureInfo(CUstream hStream, unsigned int ptsz,
                                        CUstreamCaptureStatus *status, cuuint64_t *id,
                                        CUgraph *graph, CUgraphNode *deps, CUgraphEdgeData *edges,
                                        size_t cap, size_t *numDeps);

/* Kernel nodes: func (a CUfunction or CUkernel id) or kern (a CUkernel
 * id), ctx, dims = grid x, y, z, block x, y, z, shared memory bytes, and the
 * arguments packed at the offsets of the kernel's layout, as a launch's. */
CUresult apigenCudaAddKernelNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                 const CUgraphNode *dependencies, size_t numDependencies,
                                 uint64_t func, uint64_t kern, CUcontext ctx,
                                 const unsigned int *dims, const void *params, size_t paramsSize);
CUresult apigenCudaKernelNodeSetParams(CUgraphNode hNode, uint64_t func, uint64_t kern,
                                       CUcontext ctx, const unsigned int *dims,
                                       const void *params, size_t paramsSize);
CUresult apigenCudaExecKernelNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                           uint64_t func, uint64_t kern, CUcontext ctx,
                                           const unsigned int *dims, const void *params,
                                           size_t paramsSize);
/* The node's parameters with its arguments packed (room for cap bytes;
 * *paramsSize: the packed size). */
CUresult apigenCudaKernelNodeGetParams(CUgraphNode hNode, uint64_t *func, uint64_t *kern,
                                       CUcontext *ctx, unsigned int *dims, void *params,
                                       size_t cap, size_t *paramsSize);

/* JIT linking (cuLinkCreate, cuLinkAddData and their _v2 forms; v2
 * selects the form): option values as 64-bit integers, as for module loads.
 * apigenCudaLinkComplete copies the linked image out (room for cap bytes;
 * *size: its size; asking again answers from the first completion). */
CUresult apigenCudaLinkCreate(unsigned int numOptions, const CUjit_option *options,
                              const uint64_t *optionValues, CUlinkState *stateOut,
                              unsigned int v2);
CUresult apigenCudaLinkAddData(CUlinkState state, CUjitInputType type, const void *data,
                               size_t size, const char *name, unsigned int numOptions,
                               const CUjit_option *options, const uint64_t *optionValues,
                               unsigned int v2);
CUresult apigenCudaLinkComplete(CUlinkState state, void *cubin, size_t cap, size_t *size);

/* Occupancy: cuOccupancyMaxPotentialBlockSize(WithFlags) without a
 * dynamic shared memory callback; the cluster queries with the launch
 * configuration's fields (dims: grid x, y, z, block x, y, z, shared memory
 * bytes) and attributes (which: 0 potential cluster size, 1 active clusters). */
CUresult apigenCudaOccupancyBlockSize(int *minGridSize, int *blockSize, uint64_t func,
                                      size_t dynamicSMemSize, int blockSizeLimit,
                                      unsigned int flags, int withFlags);
CUresult apigenCudaOccupancyCluster(int which, int *out, uint64_t func, const unsigned int *dims,
                                    CUstream hStream, const CUlaunchAttribute *attrs,
                                    unsigned int numAttrs);

/* Memory allocation nodes: the node's allocation becomes the client's. */
CUresult apigenCudaAddMemAllocNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                   const CUgraphNode *dependencies, size_t numDependencies,
                                   const CUmemPoolProps *poolProps,
                                   const CUmemAccessDesc *accessDescs, size_t accessDescCount,
                                   size_t bytesize, CUdeviceptr *dptr);
CUresult apigenCudaMemAllocNodeGetParams(CUgraphNode hNode, CUmemPoolProps *poolProps,
                                         CUmemAccessDesc *accessDescs, size_t cap,
                                         size_t *accessDescCount, size_t *bytesize,
                                         CUdeviceptr *dptr);

/* Batch memory operation nodes: op 0 add (phGraphNode, hGraph, deps), 1
 * set (hNode), 2 exec set (hGraphExec, hNode). */
CUresult apigenCudaBatchMemOpNode(unsigned int op, CUgraphNode *phGraphNode, CUgraph hGraph,
                                  const CUgraphNode *dependencies, size_t numDependencies,
                                  CUgraphExec hGraphExec, CUgraphNode hNode, CUcontext ctx,
                                  const CUstreamBatchMemOpParams *paramArray, unsigned int count,
                                  unsigned int flags);
CUresult apigenCudaBatchMemOpNodeGetParams(CUgraphNode hNode, CUcontext *ctx,
                                           CUstreamBatchMemOpParams *paramArray, unsigned int cap,
                                           unsigned int *count, unsigned int *flags);

/* apigenCudaMemcpy3D kinds and flags */
#define APIGEN_CUDA_COPY_2D 0u           /* cuMemcpy2D_v2 (Depth 1) */
#define APIGEN_CUDA_COPY_2D_UNALIGNED 1u /* cuMemcpy2DUnaligned_v2 */
#define APIGEN_CUDA_COPY_3D 2u           /* cuMemcpy3D_v2 */
#define APIGEN_CUDA_COPY_KIND 3u
#define APIGEN_CUDA_COPY_ASYNC 4u        /* the *Async form, on hStream */
#define APIGEN_CUDA_COPY_PT 8u           /* the _ptds / _ptsz entry point */
#define APIGEN_CUDA_COPY_ARENA_SRC 16u   /* srcHost is the server's address of the first byte
                                            in the client's arena (pitch srcPitch, height
                                            srcHeight, offsets 0); no hostIn */
#define APIGEN_CUDA_COPY_ARENA_DST 32u   /* dstHost likewise; no hostOut */

/* A 2D or 3D copy: the guest's host memory on either side travels packed
 * (rows of WidthInBytes back to back: hostIn for a host source, hostOut
 * for a host destination); the descriptor's host pointers are set by the
 * server, its array handles are ids. */
CUresult apigenCudaMemcpy3D(const CUDA_MEMCPY3D *copy, CUstream hStream, unsigned int kind,
                            void *hostOut, size_t outSize, const void *hostIn, size_t inSize);
/* cuMemcpy3DPeer(Async): the same, the contexts as handles beside the
 * descriptor (whose own context fields the server replaces). */
CUresult apigenCudaMemcpy3DPeer(const CUDA_MEMCPY3D_PEER *copy, CUcontext srcContext,
                                CUcontext dstContext, CUstream hStream, unsigned int kind,
                                void *hostOut, size_t outSize, const void *hostIn, size_t inSize);

/* An async copy between the device and the client's shared-memory arena,
 * whose host side is the server's address of it (host_arena.c): pinned
 * memory and the shadows of copies captured into graphs. */
#define APIGEN_CUDA_ARENA_TO_DEVICE 1u /* host -> device (else device -> host) */
#define APIGEN_CUDA_ARENA_PTSZ 2u      /* the _ptsz entry point */
CUresult apigenCudaMemcpyArena(CUdeviceptr dev, uint64_t host, size_t ByteCount, CUstream hStream,
                               unsigned int flags);

/* The twins' spans (runtime/twin.c, managed.c, host_spans.c): n device
 * ranges of the client moved in one request, their bytes back to back in
 * data (dataSize: the ranges' sum). A write is queued like a launch (its
 * error comes at the thread's next synchronizing call) unless
 * APIGEN_CUDA_SPANS_SYNC: no context known current, or a capture was begun.
 * A read given the guest's page digests of the ranges (known, knownSize:
 * 16 bytes a page, runtime/pages.c) answers only the pages that differ:
 * data is then a bitmap of the pages followed by those pages (dataSize:
 * the bitmap's and the ranges' sum; *dataUsed: what came back); without
 * digests (knownSize 0), the ranges' bytes. */
#define APIGEN_CUDA_SPANS_SYNC 1u
CUresult apigenCudaWriteSpans(const CUdeviceptr *dev, const size_t *len, unsigned int n,
                              const void *data, size_t dataSize, unsigned int flags);
CUresult apigenCudaReadSpans(const CUdeviceptr *dev, const size_t *len, unsigned int n,
                             const void *known, size_t knownSize, void *data, size_t dataSize,
                             size_t *dataUsed);

/* The driver's private CONTEXT_IDENTITY table (export_tables.c, host_private.c):
 * entries cuBLAS and cuDNN call with handles and values only, which the
 * server calls on its own driver's table. [51] gives a stream's object (the
 * NULL stream's for a context; the same object on every call for one
 * stream; its first headSize bytes come along, which the guest keeps beside
 * the id); [39] asks a number of it (7 for the NULL stream's on the H200, 14
 * for a stream JAX made). The object is a handle: the server only takes back
 * objects it handed out. */
typedef struct apigenCudaContextObject_st *apigenCudaContextObject;
#define APIGEN_CUDA_CONTEXT_OBJECT_HEAD 512
CUresult apigenCudaContextObjectGet(CUcontext ctx, CUstream stream, apigenCudaContextObject *object,
                                    unsigned char *head, size_t headSize);
CUresult apigenCudaContextObjectQuery(CUcontext ctx, apigenCudaContextObject object,
                                      unsigned long long *value);

#endif
