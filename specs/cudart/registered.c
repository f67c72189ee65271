/* Mapped registrations of the application's own memory through the cudart
 * stub (cudaHostRegister with cudaHostRegisterMapped; docs/multi-gpu.md).
 * The server's GPU cannot reach this process's memory, so each such range
 * gets a device allocation of its size on the server (its device pointer:
 * cudaHostGetDevicePointer), kept equal to the range by the runtime's twins
 * (runtime/twin.c) at the calls managed memory moves at (managed.c calls
 * these hooks): what the application changed goes before device work, what
 * the device changed comes back at synchronizations. Exact for programs
 * that do not touch the same bytes on the host while a kernel runs; no
 * zero-copy coherence during a kernel (a kernel polling a flag the host
 * sets never sees it): documented. */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdint.h>

#include "apigen_rt.h"
#include "cudart_wire.h"
#include "registered.h"

cudaError_t cudart_fwd_cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind);
cudaError_t cudart_fwd_cudaMemset(void *devPtr, int value, size_t count);
cudaError_t cudart_fwd_cudaMalloc(void **devPtr, size_t size);
cudaError_t cudart_fwd_cudaFree(void *devPtr);

/* one copy per span (the spans' bytes lie back to back in buf) */
static int io(const apigen_twin_span *span, unsigned n, void *buf, bool to_device, void *user)
{
    (void)user;
    unsigned char *b = buf;
    for (unsigned i = 0; i < n; b += span[i].len, i++) {
        void *dev = (void *)(uintptr_t)span[i].dev;
        cudaError_t e = to_device ? cudart_fwd_cudaMemcpy(dev, b, span[i].len, cudaMemcpyHostToDevice)
                                  : cudart_fwd_cudaMemcpy(b, dev, span[i].len, cudaMemcpyDeviceToHost);
        if (e != cudaSuccess) return (int)e;
    }
    return 0;
}

static cudaError_t err(int r)
{
    return r == APIGEN_TWIN_NO_MEMORY ? cudaErrorMemoryAllocation : (cudaError_t)r;
}

cudaError_t cudart_registered_add(void *ptr, size_t size, bool read_only)
{
    void *dev = NULL;
    apigen_twin_own(&cudart_api, io); /* the family's libraries push through it */
    cudaError_t e = cudaMalloc(&dev, size);
    if (e != cudaSuccess) return e;
    if ((e = cudart_fwd_cudaMemcpy(dev, ptr, size, cudaMemcpyHostToDevice)) != cudaSuccess ||
        (e = apigen_twin_add(ptr, size, (uint64_t)(uintptr_t)dev, read_only) ? cudaErrorMemoryAllocation
                                                                              : cudaSuccess) != cudaSuccess)
        cudaFree(dev);
    return e;
}

cudaError_t cudart_registered_remove(void *ptr)
{
    uint64_t dev = 0;
    cudaError_t e = err(apigen_twin_remove(ptr, &dev, io, NULL));
    if (dev) cudaFree((void *)(uintptr_t)dev);
    return e;
}

bool cudart_registered_device(const void *host, void **dev, size_t *left)
{
    uint64_t d = 0;
    if (!apigen_twin_device(host, &d, left)) return false;
    *dev = (void *)(uintptr_t)d;
    return true;
}

cudaError_t cudart_registered_push(void)
{
    return err(apigen_twin_push(io, NULL));
}

void cudart_registered_wrote(const void *dst, size_t n)
{
    apigen_twin_wrote((uint64_t)(uintptr_t)dst, n);
}

cudaError_t cudart_registered_sync(bool device_wide)
{
    return err(apigen_twin_sync(device_wide, io, NULL));
}

/* the placed block's allocation is not recorded as device memory here: its
 * address is the guest's host range (cudaMemcpyDefault copies to and from
 * the host bytes) */
static int place_alloc(size_t len, uint64_t *dev, void *user)
{
    (void)user;
    void *d = NULL;
    cudaError_t e = cudart_fwd_cudaMalloc(&d, len);
    *dev = (uint64_t)(uintptr_t)d;
    return (int)e;
}

static int place_clear(uint64_t dev, size_t len, void *user)
{
    (void)user;
    return (int)cudart_fwd_cudaMemset((void *)(uintptr_t)dev, 0, len);
}

static void place_release(uint64_t dev, void *user)
{
    (void)user;
    (void)cudart_fwd_cudaFree((void *)(uintptr_t)dev);
}

cudaError_t cudart_registered_place(size_t size, void **host)
{
    static const apigen_twin_alloc ops = {place_alloc, place_clear, place_release};
    int r = 0;
    apigen_twin_own(&cudart_api, io);
    *host = apigen_twin_place(size, &ops, NULL, &r);
    return *host || !r ? cudaSuccess : err(r);
}
