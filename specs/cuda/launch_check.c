/* Launch configurations the guest vouches for (launch_limits.h): a launch is
 * queued async only when its grid, block and dynamic shared memory are
 * within the limits of every device and of the function; otherwise it is
 * sent synchronously and the driver's refusal is the launch's own error (as
 * natively: the runtime returns it from cudaLaunchKernel and
 * cudaGetLastError), not the next call's. The limits are asked once: the
 * devices' per process, the function's per CUfunction or CUkernel id (asked
 * again after cuFuncSetAttribute / cuKernelSetAttribute, which may raise
 * the dynamic shared memory limit).
 *
 * The limits do not tell every refusal (the driver also weighs what the
 * guest cannot see: static and reserved shared memory, local memory, the
 * kernel's compiled block size; XLA's autotuner meets
 * CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES for configurations within them and
 * goes on only when the launch itself says so). So a function's first
 * launch of a configuration also goes synchronously; the server's
 * acceptance is kept as a point (threads per block, dynamic shared memory,
 * attribute kinds), and a later launch is queued only when an accepted
 * point of the same attribute kinds needs as much of both (a block of
 * fewer threads and less shared memory takes fewer resources). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "apigen_rt.h"
#include "cuda_guest.h"
#include "cuda_wire.h"
#include "launch_limits.h"

#define ACCEPTED_MAX 8 /* points kept per function; a forgotten one costs a round trip */

typedef struct flimits {
    uint64_t id;
    uint32_t threads, dyn_shmem;
    struct {
        uint32_t threads, shmem;
        uint64_t attrs;
    } ok[ACCEPTED_MAX]; /* configurations the server accepted */
    unsigned nok;
    struct flimits *next;
} flimits;

static pthread_mutex_t lock_ = PTHREAD_MUTEX_INITIALIZER;
static int dev_state_; /* 0: not asked, 1: known, -1: the server did not say */
static uint32_t block_[3], grid_[3];
static flimits *funcs_;

/* The smallest block and grid limits of every device (once). */
static int device_limits(void)
{
    static const CUdevice_attribute a[6] = {
        CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y,
        CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,
        CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z};
    pthread_mutex_lock(&lock_);
    int st = dev_state_;
    pthread_mutex_unlock(&lock_);
    if (st) return st > 0;
    uint32_t lim[6] = {UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX};
    int n = 0, ok = cuDeviceGetCount(&n) == CUDA_SUCCESS && n > 0;
    for (int d = 0; ok && d < n; d++) {
        CUdevice dev;
        ok = cuDeviceGet(&dev, d) == CUDA_SUCCESS;
        for (int k = 0; ok && k < 6; k++) {
            int v = 0;
            ok = cuDeviceGetAttribute(&v, a[k], dev) == CUDA_SUCCESS && v > 0;
            if (ok && (uint32_t)v < lim[k]) lim[k] = (uint32_t)v;
        }
    }
    pthread_mutex_lock(&lock_);
    if (!dev_state_) {
        dev_state_ = ok ? 1 : -1;
        for (int k = 0; ok && k < 3; k++) block_[k] = lim[k], grid_[k] = lim[3 + k];
    }
    st = dev_state_;
    pthread_mutex_unlock(&lock_);
    return st > 0;
}

static flimits *find(uint64_t id)
{
    for (flimits *f = funcs_; f; f = f->next)
        if (f->id == id) return f;
    return NULL;
}

/* The function's limits (asked once per id); 0 when the server did not say. */
static int func_limits(CUfunction f, uint32_t *threads, uint32_t *dyn)
{
    uint64_t id = (uint64_t)(uintptr_t)f;
    pthread_mutex_lock(&lock_);
    flimits *c = find(id);
    if (c) *threads = c->threads, *dyn = c->dyn_shmem;
    pthread_mutex_unlock(&lock_);
    if (c) return 1;
    int t = 0, s = 0;
    int ok = cuFuncGetAttribute(&t, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f) == CUDA_SUCCESS &&
             cuFuncGetAttribute(&s, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f) ==
                 CUDA_SUCCESS;
#ifdef APIGEN_HAS_FN_cuKernelGetAttribute /* 12.0: before, every handle is a CUfunction */
    if (!ok) {
        /* a CUkernel (NVIDIA's runtime launches those): its attributes on the
         * calling thread's device */
        CUdevice dev;
        ok = cuCtxGetDevice(&dev) == CUDA_SUCCESS &&
             cuKernelGetAttribute(&t, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, (CUkernel)f,
                                  dev) == CUDA_SUCCESS &&
             cuKernelGetAttribute(&s, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                  (CUkernel)f, dev) == CUDA_SUCCESS;
    }
#endif
    if (!ok || t <= 0 || s < 0)
        return 0; /* not cached: an invalid handle's launch goes synchronously */
    c = calloc(1, sizeof *c);
    if (!c) return 0;
    c->id = id, c->threads = (uint32_t)t, c->dyn_shmem = (uint32_t)s;
    pthread_mutex_lock(&lock_);
    if (find(id)) {
        free(c);
    } else {
        c->next = funcs_;
        funcs_ = c;
    }
    pthread_mutex_unlock(&lock_);
    *threads = (uint32_t)t, *dyn = (uint32_t)s;
    return 1;
}

static void forget(uint64_t id)
{
    pthread_mutex_lock(&lock_);
    for (flimits **pp = &funcs_; *pp; pp = &(*pp)->next)
        if ((*pp)->id == id) {
            flimits *c = *pp;
            *pp = c->next;
            free(c);
            break;
        }
    pthread_mutex_unlock(&lock_);
}

/* an accepted point of f's needing at least as much (lock_ held) */
static int accepted(const flimits *c, uint32_t threads, uint32_t shmem, uint64_t attrs)
{
    for (unsigned i = 0; c && i < c->nok && i < ACCEPTED_MAX; i++)
        if (c->ok[i].attrs == attrs && c->ok[i].threads >= threads && c->ok[i].shmem >= shmem)
            return 1;
    return 0;
}

int apigen_cuda_launch_vouched(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                               unsigned by, unsigned bz, unsigned shmem, uint64_t attrs)
{
    struct apigen_cuda_limits l;
    apigen_hold_deferred(true); /* the queries' errors are not the launch's */
    int ok = device_limits() && func_limits(f, &l.func_threads, &l.func_dyn_shmem);
    apigen_hold_deferred(false);
    if (!ok) return 0;
    pthread_mutex_lock(&lock_);
    for (int k = 0; k < 3; k++) l.block[k] = block_[k], l.grid[k] = grid_[k];
    ok = accepted(find((uint64_t)(uintptr_t)f), bx * by * bz, shmem, attrs);
    pthread_mutex_unlock(&lock_);
    return ok && apigen_cuda_config_vouched(&l, gx, gy, gz, bx, by, bz, shmem);
}

void apigen_cuda_launch_accepted(CUfunction f, unsigned threads, unsigned shmem, uint64_t attrs)
{
    pthread_mutex_lock(&lock_);
    flimits *c = find((uint64_t)(uintptr_t)f);
    if (c && !accepted(c, threads, shmem, attrs)) {
        unsigned i = c->nok++ % ACCEPTED_MAX; /* the oldest point makes room */
        c->ok[i].threads = threads, c->ok[i].shmem = shmem, c->ok[i].attrs = attrs;
    }
    pthread_mutex_unlock(&lock_);
}

/* set_attr.c: a function's attributes were set (whatever the answer): its
 * limits are asked again at its next launch */
void apigen_cuda_launch_limits_forget(uint64_t id)
{
    forget(id);
}

/* A module, library or context ended: its functions' ids may name other
 * functions later (the server keeps one id per driver handle, and the
 * driver reuses a freed function's address: XLA's autotuner loads and
 * unloads a module per configuration), so every function's limits and
 * accepted configurations are asked and learned again. */
void apigen_cuda_launch_limits_forget_all(void)
{
    pthread_mutex_lock(&lock_);
    flimits *f = funcs_;
    funcs_ = NULL;
    pthread_mutex_unlock(&lock_);
    while (f) {
        flimits *next = f->next;
        free(f);
        f = next;
    }
}
