/* exa: a tiny accelerator API, implemented on the CPU by libexa.so.1.
 *
 * It has the shape of CUDA and OpenCL in miniature: contexts and buffers
 * are opaque handles, device memory has addresses, kernels are launched
 * asynchronously, errors are status codes, and a context can notify the
 * application through a callback. apigen forwards it with specs/exa.yaml. */
#ifndef EXA_H
#define EXA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define EXA_VERSION_MAJOR 1
#define EXA_VERSION_MINOR 2

typedef enum exaStatus {
    EXA_SUCCESS = 0,
    EXA_ERROR_INVALID_VALUE = 1,
    EXA_ERROR_INVALID_HANDLE = 2,
    EXA_ERROR_OUT_OF_MEMORY = 3,
    EXA_ERROR_OUT_OF_RANGE = 4,
    EXA_ERROR_NOT_SUPPORTED = 5,
    EXA_ERROR_CONNECTION_LOST = 6,
    EXA_ERROR_BUSY = 7,
} exaStatus;

typedef enum exaCopyKind {
    EXA_COPY_HOST_TO_DEVICE = 1,
    EXA_COPY_DEVICE_TO_HOST = 2,
    EXA_COPY_DEVICE_TO_DEVICE = 3,
} exaCopyKind;

typedef enum exaEvent {
    EXA_EVENT_FINISHED = 1,
    EXA_EVENT_ERROR = 2,
} exaEvent;

/* Context properties: a zero-terminated list of (key, value) pairs. */
typedef enum exaProperty {
    EXA_PROP_END = 0,
    EXA_PROP_DEVICE = 1,     /* value: device index */
    EXA_PROP_PRIORITY = 2,   /* value: 0..7 */
    EXA_PROP_MEMORY_LIMIT = 3 /* value: bytes (0 = none) */
} exaProperty;

typedef struct exaContext_st *exaContext;
typedef struct exaBuffer_st *exaBuffer;

/* Plain data returned by value. */
typedef struct exaDeviceInfo {
    char name[32];
    uint32_t compute_units;
    uint32_t max_threads;
    uint64_t memory_bytes;
    double clock_ghz;
    int32_t device_index;
} exaDeviceInfo;

typedef struct exaDim3 {
    uint32_t x, y, z;
} exaDim3;

/* Called when the context finishes queued work (event EXA_EVENT_FINISHED)
 * or when queued work failed (EXA_EVENT_ERROR, value = the status). */
typedef void (*exaNotifyFn)(exaContext ctx, exaEvent event, int32_t value, void *user_data);

/* -- library and devices -------------------------------------------------- */
exaStatus exaGetVersion(int *major, int *minor);
exaStatus exaGetDeviceCount(int *count);
exaStatus exaGetDeviceInfo(int device, exaDeviceInfo *info);
const char *exaStatusString(exaStatus status);
/* The calling thread's last error (set by every failing call): Get returns
 * and clears it, Peek returns it. */
exaStatus exaGetLastError(void);
exaStatus exaPeekAtLastError(void);
/* The calling thread's current device (as CUDA's current context is the
 * thread's): -1 until set; exaSetCurrentDevice(-1) unsets it, a device past
 * the last one is EXA_ERROR_INVALID_VALUE (nothing changes). */
exaStatus exaSetCurrentDevice(int device);
exaStatus exaGetCurrentDevice(int *device);

/* -- contexts ------------------------------------------------------------- */
exaStatus exaCreateContext(int device, const char *name, exaContext *ctx);
exaStatus exaCreateContextWithProperties(const int64_t *properties, exaContext *ctx);
exaStatus exaDestroyContext(exaContext ctx);
/* Copies at most `capacity` bytes of the name (NUL included) into `name`;
 * `length` receives the full length including the NUL. Either may be NULL. */
exaStatus exaGetContextName(exaContext ctx, char *name, size_t capacity, size_t *length);
exaStatus exaSetNotify(exaContext ctx, exaNotifyFn fn, void *user_data);
/* Waits for all queued work; delivers EXA_EVENT_FINISHED to the notify callback. */
exaStatus exaFinish(exaContext ctx);

/* -- buffers (handles) ----------------------------------------------------- */
exaStatus exaCreateBuffer(exaContext ctx, size_t bytes, exaBuffer *buffer);
exaStatus exaReleaseBuffer(exaBuffer buffer);
exaStatus exaGetBufferSize(exaBuffer buffer, size_t *bytes);
exaStatus exaWriteBuffer(exaBuffer buffer, size_t offset, size_t bytes, const void *src);
exaStatus exaReadBuffer(exaBuffer buffer, size_t offset, size_t bytes, void *dst);
/* blocking == 0: queued, errors reported by a later call. */
exaStatus exaEnqueueWrite(exaBuffer buffer, int blocking, size_t offset, size_t bytes,
                          const void *src);
/* dst[i] = sum of srcs[k][i] over k, for i < n floats. */
exaStatus exaSumBuffers(exaBuffer dst, const exaBuffer *srcs, uint32_t num_srcs, size_t n);

/* -- device memory (addresses) -------------------------------------------- */
exaStatus exaMalloc(void **dev_ptr, size_t bytes);
exaStatus exaFree(void *dev_ptr);
exaStatus exaMemcpy(void *dst, const void *src, size_t bytes, exaCopyKind kind);

/* -- kernels (asynchronous) ------------------------------------------------ */
/* y[i] = a * x[i] + y[i] for i < n, on device addresses; queued on ctx. */
exaStatus exaLaunchSaxpy(exaContext ctx, exaDim3 grid, float a, const void *x, void *y,
                         size_t n);
/* Fills n floats at a device address; queued on ctx. */
exaStatus exaLaunchFill(exaContext ctx, void *dst, float value, size_t n);
/* Sums n floats of a buffer (synchronous, waits for queued work). */
exaStatus exaReduceSum(exaContext ctx, const void *src, size_t n, double *result);

/* -- not available remotely ----------------------------------------------- */
/* Prints the library's internal state to the process's stdout. */
exaStatus exaDebugDump(exaContext ctx);

#ifdef __cplusplus
}
#endif
#endif
