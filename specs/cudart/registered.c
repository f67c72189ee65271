/* Mapped registrations of the application's own memory through the cudart
 * stub (cudaHostRegister with cudaHostRegisterMapped; docs/multi-gpu.md).
 *
 * The server's GPU cannot reach this process's memory, so each such range
 * gets a device allocation of its size on the server (its device pointer:
 * cudaHostGetDevicePointer), kept equal to the range with CUDA's rules for
 * memory that host and device do not use at the same time, as for managed
 * memory (managed.c calls these hooks):
 * - before anything on the server may read it (a launch, a graph launch, a
 *   copy, a set), the bytes the application changed since they were last
 *   moved go to the device: a twin copy holds the range as last moved, and
 *   the runs of bytes that differ from it are copied (no page protection:
 *   the memory is the application's, stack or heap, which the stub must not
 *   take over);
 * - a launch (or a copy or set into the allocation) makes the range stale;
 *   at a synchronization the allocation comes back in 4 MiB blocks and the
 *   bytes the device changed (they differ from the twin) are written into
 *   the range, the others are left as the application wrote them since.
 *   A range stays stale until a device-wide synchronization (a stream's
 *   synchronization cannot tell that another stream's kernel is done).
 * Exact for programs that touch the range on the host only while no kernel
 * that uses it runs; a kernel polling a flag the host sets (or the host
 * polling one a kernel sets) never sees it change: documented. Cost: a
 * comparison of every range at every launch, and a copy of every stale
 * range at every synchronization. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apigen_rt.h"
#include "cudart_wire.h"
#include "registered.h"

cudaError_t cudart_fwd_cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind);

#define BLOCK ((size_t)4 << 20)

typedef struct reg {
    unsigned char *host, *twin;
    size_t size;
    void *dev;
    bool read_only; /* cudaHostRegisterReadOnly: the device never writes it */
    bool stale;
    struct reg *next;
} reg;

static reg *regs_;
static atomic_int nregs_; /* the fast "none" test of every hook */
static pthread_mutex_t lock_ = PTHREAD_MUTEX_INITIALIZER;

cudaError_t cudart_registered_add(void *ptr, size_t size, bool read_only)
{
    reg *r = calloc(1, sizeof *r);
    if (!r || !(r->twin = malloc(size))) {
        free(r);
        return cudaErrorMemoryAllocation;
    }
    cudaError_t e = cudaMalloc(&r->dev, size);
    if (e == cudaSuccess) {
        memcpy(r->twin, ptr, size);
        e = cudart_fwd_cudaMemcpy(r->dev, r->twin, size, cudaMemcpyHostToDevice);
        if (e != cudaSuccess) cudaFree(r->dev);
    }
    if (e != cudaSuccess) {
        free(r->twin);
        free(r);
        return e;
    }
    r->host = ptr;
    r->size = size;
    r->read_only = read_only;
    pthread_mutex_lock(&lock_);
    r->next = regs_;
    regs_ = r;
    atomic_fetch_add(&nregs_, 1);
    pthread_mutex_unlock(&lock_);
    return cudaSuccess;
}

/* Copies what the application changed to the device (lock_ held). While
 * the device has written nothing since the last pull (not stale) the
 * device holds the twin, so one copy per block from its first to its last
 * changed byte is exact; while it may have (stale), only the runs of
 * changed bytes go, so that nothing a kernel wrote is overwritten. */
static cudaError_t push_one(reg *r)
{
    for (size_t i = 0; i < r->size; i += BLOCK) {
        size_t n = r->size - i < BLOCK ? r->size - i : BLOCK;
        const unsigned char *h = r->host + i;
        unsigned char *t = r->twin + i;
        if (!memcmp(h, t, n)) continue;
        size_t a = 0;
        while (a < n) {
            while (a < n && h[a] == t[a]) a++;
            if (a == n) break;
            size_t b = a;
            if (!r->stale) {
                b = n;
                while (h[b - 1] == t[b - 1]) b--;
            } else {
                while (b < n && h[b] != t[b]) b++;
            }
            memcpy(t + a, h + a, b - a);
            cudaError_t e = cudart_fwd_cudaMemcpy((unsigned char *)r->dev + i + a, t + a, b - a,
                                                  cudaMemcpyHostToDevice);
            if (e != cudaSuccess) return e;
            a = b;
        }
    }
    return cudaSuccess;
}

/* Brings back what the device changed (lock_ held). */
static cudaError_t pull_one(reg *r, unsigned char *buf)
{
    for (size_t i = 0; i < r->size; i += BLOCK) {
        size_t n = r->size - i < BLOCK ? r->size - i : BLOCK;
        cudaError_t e = cudart_fwd_cudaMemcpy(buf, (unsigned char *)r->dev + i, n,
                                              cudaMemcpyDeviceToHost);
        if (e != cudaSuccess) return e;
        if (!memcmp(buf, r->twin + i, n)) continue;
        for (size_t k = 0; k < n; k++)
            if (buf[k] != r->twin[i + k]) r->host[i + k] = r->twin[i + k] = buf[k];
    }
    return cudaSuccess;
}

cudaError_t cudart_registered_push(void)
{
    if (!atomic_load_explicit(&nregs_, memory_order_acquire)) return cudaSuccess;
    cudaError_t e = cudaSuccess;
    pthread_mutex_lock(&lock_);
    for (reg *r = regs_; r && e == cudaSuccess; r = r->next) e = push_one(r);
    pthread_mutex_unlock(&lock_);
    return e;
}

void cudart_registered_wrote(const void *dst, size_t n)
{
    if (!atomic_load_explicit(&nregs_, memory_order_acquire)) return;
    uintptr_t d = (uintptr_t)dst;
    pthread_mutex_lock(&lock_);
    for (reg *r = regs_; r; r = r->next) {
        uintptr_t a = (uintptr_t)r->dev;
        if (!r->read_only && (!dst || (d < a + r->size && d + (n ? n : 1) > a))) r->stale = true;
    }
    pthread_mutex_unlock(&lock_);
}

cudaError_t cudart_registered_sync(bool device_wide)
{
    if (!atomic_load_explicit(&nregs_, memory_order_acquire)) return cudaSuccess;
    cudaError_t e = cudaSuccess;
    unsigned char *buf = NULL;
    pthread_mutex_lock(&lock_);
    for (reg *r = regs_; r && e == cudaSuccess; r = r->next) {
        if (!r->stale) continue;
        if (!buf && !(buf = malloc(BLOCK))) {
            e = cudaErrorMemoryAllocation;
            break;
        }
        e = pull_one(r, buf);
        if (e == cudaSuccess && device_wide) r->stale = false;
    }
    pthread_mutex_unlock(&lock_);
    free(buf);
    return e;
}

bool cudart_registered_device(const void *host, void **dev, size_t *left)
{
    if (!atomic_load_explicit(&nregs_, memory_order_acquire)) return false;
    uintptr_t h = (uintptr_t)host;
    bool found = false;
    pthread_mutex_lock(&lock_);
    for (reg *r = regs_; r && !found; r = r->next)
        if (h >= (uintptr_t)r->host && h < (uintptr_t)r->host + r->size) {
            *dev = (unsigned char *)r->dev + (h - (uintptr_t)r->host);
            if (left) *left = r->size - (h - (uintptr_t)r->host);
            found = true;
        }
    pthread_mutex_unlock(&lock_);
    return found;
}

cudaError_t cudart_registered_remove(void *ptr)
{
    if (!atomic_load_explicit(&nregs_, memory_order_acquire)) return cudaSuccess;
    reg *r = NULL;
    pthread_mutex_lock(&lock_);
    for (reg **p = &regs_; *p; p = &(*p)->next)
        if ((*p)->host == ptr) {
            r = *p;
            *p = r->next;
            atomic_fetch_sub(&nregs_, 1);
            break;
        }
    pthread_mutex_unlock(&lock_);
    if (!r) return cudaSuccess;
    cudaError_t e = cudaSuccess;
    if (r->stale) { /* what kernels wrote stays in the application's memory */
        unsigned char *buf = malloc(BLOCK);
        e = buf ? pull_one(r, buf) : cudaErrorMemoryAllocation;
        free(buf);
    }
    cudaFree(r->dev);
    free(r->twin);
    free(r);
    return e;
}
