/* A stand-in for the GPU, preloaded into apigen-server-cudart by
 * tests/cuda/honest_ci.sh (LD_PRELOAD) on a machine without one: the few
 * runtime calls tests/cuda/honest_ci.c makes answer as a device would, so
 * that CI runs the real guest library, wire and server (their checks, the
 * deferred errors, the last error) instead of stopping at the first
 * "no driver" error. Everything else is the real libcudart's.
 *
 * A device-side refusal to provoke: cudaMemset(Async) with value 0x7e fails
 * with cudaErrorInvalidValue (and sets the thread's last error, as the
 * runtime does). A stand-in for a kernel's printf: cudaMemset(Async) with
 * value 0x70 leaves a line that the next cudaDeviceSynchronize prints to
 * stdout through stdio, unflushed, as the driver prints a kernel's output at
 * a synchronization. Never used with a GPU. fake_arrays.c adds CUDA arrays,
 * fake_peer.c peer access and peer copies between FAKE_DEVICE_COUNT devices. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../specs/cuda/pinned_chunks.h" /* the real driver's PORTABLE rule */
#include "fake_devmem.h"
#include "fake_stream.h"

#define FAKE __attribute__((visibility("default")))

static _Thread_local cudaError_t last_;

static cudaError_t fail(cudaError_t e)
{
    if (e != cudaSuccess) last_ = e;
    return e;
}
/* for fake_kernels.c: a failing call is the thread's last error */
__attribute__((visibility("hidden"))) cudaError_t fake_fail(cudaError_t e);
__attribute__((visibility("hidden"))) cudaError_t fake_fail(cudaError_t e) { return fail(e); }

static void *block(size_t n)
{
    void *p = NULL;
    return posix_memalign(&p, 256, n ? n : 1) == 0 ? p : NULL;
}

/* FAKE_DEVICE_COUNT devices (default 1): tests/nvml/family.sh gives the
 * fake NVML's two GPUs a CUDA device each */
__attribute__((visibility("hidden"))) int fake_ndev(void);
static int ndev(void) { return fake_ndev(); }
__attribute__((visibility("hidden"))) int fake_ndev(void)
{
    const char *n = getenv("FAKE_DEVICE_COUNT");
    int v = n ? atoi(n) : 1;
    return v > 0 && v <= 8 ? v : 1;
}
FAKE cudaError_t cudaGetDeviceCount(int *count)
{
    if (!count) return fail(cudaErrorInvalidValue);
    *count = ndev();
    return cudaSuccess;
}
/* Device i's UUID is the fake NVML's GPU i of the same machine
 * (tests/nvml/fake_nvml.c: GPU-<i * 0x55555555>-1111-2222-3333-<machine>,
 * APIGEN_FAKE_NVML_MACHINE), so that a program can tell that NVML's index i
 * and CUDA's ordinal i are one GPU */
FAKE cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    if (!prop) return fail(cudaErrorInvalidValue);
    if (device < 0 || device >= ndev()) return fail(cudaErrorInvalidDevice);
    const char *k = getenv("APIGEN_FAKE_NVML_MACHINE");
    unsigned long long m = k ? strtoull(k, NULL, 10) : 0;
    unsigned a = (unsigned)device * 0x55555555u;
    unsigned char u[16] = {(unsigned char)(a >> 24), (unsigned char)(a >> 16), (unsigned char)(a >> 8),
                           (unsigned char)a, 0x11, 0x11, 0x22, 0x22, 0x33, 0x33};
    for (int b = 0; b < 6; b++) u[10 + b] = (unsigned char)(m >> (8 * (5 - b)));
    memset(prop, 0, sizeof *prop);
    snprintf(prop->name, sizeof prop->name, "Fake GPU 80GB HBM3");
    memcpy(prop->uuid.bytes, u, sizeof u);
    prop->totalGlobalMem = 80ull << 30;
    prop->pciBusID = device ? 0x3b : 0x19;
    return cudaSuccess;
}
/* the calling thread's current device, as the runtime keeps it (0 on a new thread) */
static _Thread_local int current_;
/* for fake_peer.c: the calling thread's current device */
__attribute__((visibility("hidden"))) int fake_current_device(void)
{
    return current_;
}
FAKE cudaError_t cudaSetDevice(int device)
{
    if (device < 0 || device >= ndev()) return fail(cudaErrorInvalidDevice);
    current_ = device;
    return cudaSuccess;
}
/* the valid-device list's checks (tests/cuda/inputs_rt.c): every entry a
 * device, no negative length, NULL only with no entries */
FAKE cudaError_t cudaSetValidDevices(int *device_arr, int len)
{
    if (len < 0 || (!device_arr && len)) return fail(cudaErrorInvalidValue);
    for (int i = 0; i < len; i++)
        if (device_arr[i] < 0 || device_arr[i] >= ndev()) return fail(cudaErrorInvalidDevice);
    return cudaSuccess;
}
/* the thread's capture mode, swapped */
static _Thread_local int capture_mode_;
FAKE cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode)
{
    if (!mode || (int)*mode < 0 || (int)*mode > 2) return fail(cudaErrorInvalidValue);
    int old = capture_mode_;
    capture_mode_ = (int)*mode;
    *mode = (enum cudaStreamCaptureMode)old;
    return cudaSuccess;
}
FAKE cudaError_t cudaGetDevice(int *device)
{
    if (!device) return fail(cudaErrorInvalidValue);
    *device = current_;
    return cudaSuccess;
}
/* "Device memory" is a mapping of its own (its length 256 bytes before it)
 * at addresses that depend on the process id, so two clients' session
 * processes (forks of one server) never hand out the same addresses (a sanitizer's
 * allocator would, and another client's memory would look like one's own). */
/* live allocations, for cudaPointerGetAttributes (the session's threads may
 * ask at once: one lock) */
#define FAKE_ALLOCS 64
static struct { uintptr_t p; size_t n; int device; } allocs_[FAKE_ALLOCS];
static pthread_mutex_t allocs_lock_ = PTHREAD_MUTEX_INITIALIZER;
/* the slot holding allocation `was` (0: a free one) becomes p's */
static void alloc_set(uintptr_t was, const void *p, size_t n, int device)
{
    pthread_mutex_lock(&allocs_lock_);
    for (int i = 0; i < FAKE_ALLOCS; i++)
        if (allocs_[i].p == was) {
            allocs_[i].p = (uintptr_t)p, allocs_[i].n = n, allocs_[i].device = device;
            break;
        }
    pthread_mutex_unlock(&allocs_lock_);
}
static int alloc_device(const void *ptr) /* -1: no live allocation holds ptr */
{
    int d = -1;
    pthread_mutex_lock(&allocs_lock_);
    for (int i = 0; i < FAKE_ALLOCS && d < 0; i++)
        if (allocs_[i].p && (uintptr_t)ptr - allocs_[i].p < allocs_[i].n) d = allocs_[i].device;
    pthread_mutex_unlock(&allocs_lock_);
    return d;
}
FAKE cudaError_t cudaMalloc(void **devPtr, size_t size)
{
    if (!devPtr) return fail(cudaErrorInvalidValue);
    static uintptr_t next_;
    if (!(*devPtr = fake_devmem_map(0x300000000000ull, &next_, size)))
        return fail(cudaErrorMemoryAllocation);
    alloc_set(0, *devPtr, size ? size : 1, current_);
    return cudaSuccess;
}
static int is_managed(const void *p);
static int past_managed_end(const void *p, size_t n);
FAKE cudaError_t cudaFree(void *devPtr)
{
    if (!devPtr || is_managed(devPtr)) return cudaSuccess; /* managed: never reused */
    alloc_set((uintptr_t)devPtr, NULL, 0, 0);
    fake_devmem_unmap(devPtr);
    return cudaSuccess;
}
/* fake_capture.c's captures, where the library has them (weak: the
 * stand-ins without it capture nothing) */
__attribute__((weak)) cudaError_t fake_capture_sync(cudaStream_t stream);
__attribute__((weak)) bool fake_capture_gone(cudaStream_t stream);
static bool capture_gone(cudaStream_t stream)
{
    return fake_capture_gone && fake_capture_gone(stream);
}

static char printed_[256]; /* what the "kernels" printed, until a synchronization */
static char asserted_[256]; /* a kernel's failed assert, printed to stderr likewise */

FAKE cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
    if (capture_gone(stream)) return fail(cudaErrorStreamCaptureInvalidated);
    if (value == 0x7e) return fail(cudaErrorInvalidValue);
    if (value == 0x71) {
        size_t at = strlen(asserted_);
        snprintf(asserted_ + at, sizeof asserted_ - at,
                 "fake.cu:7: void k(): block: [0,0,0], thread: [0,0,0] Assertion `n < %zu` failed.\n",
                 count);
    }
    if (value == 0x70) {
        size_t at = strlen(printed_);
        snprintf(printed_ + at, sizeof printed_ - at, "device: a kernel printed this (%zu bytes)\n",
                 count);
    }
    if (past_managed_end(devPtr, count)) return fail(cudaErrorInvalidValue);
    memset(devPtr, value, count);
    return cudaSuccess;
}
FAKE cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
    return cudaMemsetAsync(devPtr, value, count, 0);
}
FAKE cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    if (!event) return fail(cudaErrorInvalidValue);
    return (*event = block(64)) ? cudaSuccess : fail(cudaErrorMemoryAllocation);
}
FAKE cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    (void)flags;
    return cudaEventCreate(event);
}
FAKE cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    free(event);
    return cudaSuccess;
}
FAKE cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    (void)stream;
    return event ? cudaSuccess : fail(cudaErrorInvalidResourceHandle);
}
FAKE cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    (void)stream;
    if (flags & ~cudaEventWaitExternal) return fail(cudaErrorInvalidValue);
    return event ? cudaSuccess : fail(cudaErrorInvalidResourceHandle);
}
FAKE cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream,
                                          unsigned int flags)
{
    (void)stream;
    if (flags & ~cudaEventRecordExternal) return fail(cudaErrorInvalidValue);
    return event ? cudaSuccess : fail(cudaErrorInvalidResourceHandle);
}
/* streams and copies for tests/cublas/family.sh (cudaMalloc memory and a
 * stream of cudaStreamCreate given to cuBLAS): "device memory" is host
 * memory of this process, a stream a distinct block */
FAKE cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags)
{
    if (!stream) return fail(cudaErrorInvalidValue);
    fake_stream *fs = block(sizeof *fs);
    if (!fs)
        return fail(cudaErrorMemoryAllocation);
    *fs = (fake_stream){.device = current_, .flags = flags}; /* fake_stream.h */
    *stream = (cudaStream_t)(void *)fs;
    return cudaSuccess;
}
FAKE cudaError_t cudaStreamCreate(cudaStream_t *stream)
{
    return cudaStreamCreateWithFlags(stream, 0);
}
FAKE cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    if (!stream) return fail(cudaErrorInvalidResourceHandle);
    free(stream);
    return cudaSuccess;
}
FAKE cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    if ((!dst || !src) && count) return fail(cudaErrorInvalidValue);
    /* as CUDA's runtime: a copy past the end of a managed allocation */
    if (past_managed_end(dst, count) || past_managed_end(src, count)) return fail(cudaErrorInvalidValue);
    if ((unsigned)kind > (unsigned)cudaMemcpyDefault) return fail(cudaErrorInvalidMemcpyDirection);
    if (count) memmove(dst, src, count);
    return cudaSuccess;
}
FAKE cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
                                 enum cudaMemcpyKind kind, cudaStream_t stream)
{
    if (capture_gone(stream)) return fail(cudaErrorStreamCaptureInvalidated);
    return cudaMemcpy(dst, src, count, kind);
}
FAKE cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    return fake_capture_sync ? fake_capture_sync(stream) : cudaSuccess;
}
FAKE cudaError_t cudaDeviceSynchronize(void)
{
    if (printed_[0]) printf("%s", printed_);
    printed_[0] = 0;
    if (asserted_[0]) fprintf(stderr, "%s", asserted_);
    asserted_[0] = 0;
    return cudaSuccess;
}
FAKE cudaError_t cudaGetLastError(void)
{
    cudaError_t e = last_;
    last_ = cudaSuccess;
    return e;
}
FAKE cudaError_t cudaPeekAtLastError(void)
{
    return last_;
}
/* page-locked host memory: the server's staging blocks of streamed copies
 * (specs/cudart/host_copy.c) are plain memory here, so that CI and
 * bench/tcp-copy.sh take the path a GPU server takes */
/* the shared-memory arena (on the server), the application's ranges
 * (natively, tests/cuda/registered_ci.c) and pinned blocks: "registered",
 * their flags and the device current then kept (pointer queries) */
static struct {
    char *p;
    size_t n;
    unsigned flags;
    int device;
    size_t mapped; /* cudaHostAlloc's own mapping (0: registered memory) */
} regs_[256];
static pthread_mutex_t regs_lock_ = PTHREAD_MUTEX_INITIALIZER; /* the server's sessions as threads */
static void reg_add(void *ptr, size_t size, unsigned flags, size_t mapped)
{
    pthread_mutex_lock(&regs_lock_);
    for (int i = 0; i < 256; i++)
        if (!regs_[i].p) {
            regs_[i].p = ptr, regs_[i].n = size, regs_[i].flags = flags, regs_[i].device = current_;
            regs_[i].mapped = mapped;
            break;
        }
    pthread_mutex_unlock(&regs_lock_);
}
static void reg_remove(const void *ptr)
{
    pthread_mutex_lock(&regs_lock_);
    for (int i = 0; i < 256; i++)
        if (ptr && regs_[i].p == ptr) regs_[i].p = NULL;
    pthread_mutex_unlock(&regs_lock_);
}
/* the flags and device of the range holding ptr: 1, or 0 (none) */
static int reg_of(const void *ptr, unsigned *flags, int *device)
{
    int found = 0;
    pthread_mutex_lock(&regs_lock_);
    for (int i = 0; i < 256 && !found; i++)
        if (regs_[i].p && (const char *)ptr >= regs_[i].p && (const char *)ptr < regs_[i].p + regs_[i].n) {
            if (flags) *flags = regs_[i].flags;
            if (device) *device = regs_[i].device;
            found = 1;
        }
    pthread_mutex_unlock(&regs_lock_);
    return found;
}
/* pinned host memory: a mapping of its own, which cudaDeviceReset unmaps as
 * the driver frees a device's pinned memory at a reset (a server that keeps
 * a staging block past it gets EFAULT, as on a GPU: tests/cuda/reset_copy.c);
 * its pages are there when it returns, as pinned pages are */
FAKE cudaError_t cudaHostAlloc(void **p, size_t size, unsigned int flags)
{
    if (!p) return fail(cudaErrorInvalidValue);
    size_t len = ((size ? size : 1) + 4095) & ~(size_t)4095;
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (m == MAP_FAILED) return fail(cudaErrorMemoryAllocation);
    reg_add(m, size ? size : 1, flags, len);
    pc_add(m, size, (flags & cudaHostAllocPortable) != 0);
    *p = m;
    return cudaSuccess;
}
FAKE cudaError_t cudaMallocHost(void **p, size_t size) { return cudaHostAlloc(p, size, 0); }
FAKE cudaError_t cudaFreeHost(void *p)
{
    size_t mapped = 0;
    pthread_mutex_lock(&regs_lock_);
    for (int i = 0; i < 256; i++)
        if (p && regs_[i].p == p && regs_[i].mapped) mapped = regs_[i].mapped, regs_[i].mapped = 0;
    pthread_mutex_unlock(&regs_lock_);
    reg_remove(p);
    if (mapped) {
        pc_remove(p);
        munmap(p, mapped);
    } else {
        free(p);
    }
    return cudaSuccess;
}
FAKE cudaError_t cudaDeviceReset(void)
{
    pthread_mutex_lock(&regs_lock_);
    for (int i = 0; i < 256; i++)
        if (regs_[i].p && regs_[i].mapped) {
            pc_remove(regs_[i].p);
            munmap(regs_[i].p, regs_[i].mapped);
            regs_[i].p = NULL, regs_[i].mapped = 0;
        }
    pthread_mutex_unlock(&regs_lock_);
    return cudaSuccess;
}
FAKE cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
    reg_add(ptr, size, flags, 0);
    return cudaSuccess;
}
FAKE cudaError_t cudaHostUnregister(void *ptr)
{
    reg_remove(ptr);
    return cudaSuccess;
}
FAKE cudaError_t cudaHostGetFlags(unsigned int *flags, void *ptr)
{
    unsigned f = 0;
    if (!reg_of(ptr, &f, NULL)) return fail(cudaErrorInvalidValue);
    *flags = f | cudaHostAllocMapped; /* the real runtime: all pinned memory is mapped */
    size_t mapped = 0;
    pthread_mutex_lock(&regs_lock_);
    for (int i = 0; i < 256; i++)
        if (regs_[i].p && regs_[i].mapped && (char *)ptr >= regs_[i].p && (char *)ptr < regs_[i].p + regs_[i].n)
            mapped = regs_[i].mapped;
    pthread_mutex_unlock(&regs_lock_);
    if (mapped) /* cudaHostAlloc's: PORTABLE as the driver's chunks give it */
        *flags = pc_flags(ptr, *flags, cudaHostAllocPortable);
    return cudaSuccess;
}
/* mapped host memory with unified addressing: the device pointer is the
 * host pointer (tests/cuda/registered_ci.c natively) */
FAKE cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost, unsigned int flags)
{
    if (!pDevice || !pHost || flags) return fail(cudaErrorInvalidValue);
    *pDevice = pHost;
    return cudaSuccess;
}
/* registered host memory with unified addressing: the device pointer is the
 * host pointer (of this process: the server's address of the arena); a
 * pinned or registered block's device is the one current at its allocation */
FAKE cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *a, const void *ptr)
{
    if (!a) return fail(cudaErrorInvalidValue);
    memset(a, 0, sizeof *a);
    int dev = alloc_device(ptr);
    if (dev >= 0) { /* cudaMalloc memory */
        a->type = cudaMemoryTypeDevice;
        a->device = dev;
        a->devicePointer = (void *)ptr;
        return cudaSuccess;
    }
    (void)reg_of(ptr, NULL, &a->device);
    a->type = cudaMemoryTypeHost;
    a->devicePointer = (void *)ptr;
    a->hostPointer = (void *)ptr;
    return cudaSuccess;
}

/* Managed memory for tests/cuda/managed_ci.c: handed out from a fixed
 * region, in order (the test occupies the first address in its own process
 * to see the stub refuse it); "device" writes are cudaMemset and cudaMemcpy
 * into it. */
#define MANAGED_BASE 0x5a0000000000ull
#define MANAGED_SPAN (1ull << 30)
static uint64_t managed_next_ = MANAGED_BASE;
static int is_managed(const void *p)
{
    uint64_t a = (uint64_t)(uintptr_t)p;
    return a >= MANAGED_BASE && a < MANAGED_BASE + MANAGED_SPAN;
}
/* Every managed allocation's extent: CUDA refuses copies and sets past one's
 * end, whatever lies behind it (small ones share pages, as below). */
static struct {
    uintptr_t p;
    size_t n;
} managed_[1024];
static int nmanaged_;
static int past_managed_end(const void *p, size_t n)
{
    uintptr_t a = (uintptr_t)p;
    for (int i = 0; i < nmanaged_; i++)
        if (a >= managed_[i].p && a < managed_[i].p + managed_[i].n)
            return n > managed_[i].p + managed_[i].n - a;
    return 0;
}
/* Allocations of up to 256 bytes are packed, 256 bytes apart, into pages of
 * their own (as CUDA's runtime packs small ones): a mirror's page then holds
 * several allocations and bytes of none. */
#define MANAGED_SMALL (MANAGED_BASE + MANAGED_SPAN / 2)
static uint64_t managed_small_next_ = MANAGED_SMALL;
FAKE cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
    (void)flags;
    if (!devPtr || !size) return fail(cudaErrorInvalidValue);
    if (nmanaged_ == (int)(sizeof managed_ / sizeof managed_[0])) return fail(cudaErrorMemoryAllocation);
    if (size <= 256) {
        uint64_t a = managed_small_next_;
        if (a % 4096 == 0 &&
            mmap((void *)(uintptr_t)a, 4096, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) == MAP_FAILED)
            return fail(cudaErrorMemoryAllocation);
        managed_small_next_ += 256;
        memset((void *)(uintptr_t)a, 0xCD, 256);
        managed_[nmanaged_].p = (uintptr_t)a;
        managed_[nmanaged_++].n = size;
        *devPtr = (void *)(uintptr_t)a;
        return cudaSuccess;
    }
    size_t len = (size + 4095) & ~(size_t)4095;
    void *p = mmap((void *)(uintptr_t)managed_next_, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (p == MAP_FAILED) return fail(cudaErrorMemoryAllocation);
    managed_next_ += len + 4096;
    memset(p, 0xCD, size); /* not zero: what the guest sees must come from here */
    managed_[nmanaged_].p = (uintptr_t)p;
    managed_[nmanaged_++].n = size;
    *devPtr = p;
    return cudaSuccess;
}
FAKE cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    return event ? cudaSuccess : fail(cudaErrorInvalidResourceHandle);
}
FAKE cudaError_t cudaEventQuery(cudaEvent_t event)
{
    return event ? cudaSuccess : fail(cudaErrorInvalidResourceHandle);
}
