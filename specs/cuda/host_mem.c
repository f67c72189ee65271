/* Pinned host memory and unified copies of the CUDA driver stub.
 * cuMemAllocHost / cuMemHostAlloc memory is guest memory, carved from the
 * shared arena when the transport has one (the server registered it with
 * the GPU: copies from it are zero-copy), else plain memory; registering
 * memory (cuMemHostRegister) records the range. The device reaches the
 * arena at its address (registered mapped on the server, host_arena.c;
 * mapped at one address on both sides, runtime/arena_guest.c); any other
 * range (pinned memory without an arena, registered memory) gets, at the
 * first cuMemHostGetDevicePointer_v2 or the first launch whose parameters
 * point into it (launch.c: apigen_twin_translate with
 * apigen_cuda_reach_params), a device allocation the runtime's twins keep
 * equal to the range at launches and synchronizations (runtime/twin.c,
 * managed.c's hooks; docs/multi-gpu.md). Memory allocated mapped
 * (DEVICEMAP) without an arena lies at its twin's address from the start
 * (runtime/twin_place.c): natively its host pointer is its device pointer,
 * and programs keep it in device memory, where no launch shows it (NCCL's
 * abort flag, read by a kernel that waits long for a peer). cuMemcpy /
 * cuMemcpyAsync resolve each side: the guest's own host memory, else the
 * server's answer to cuPointerGetAttribute, which never gets the address of
 * the guest's own pageable memory (see "pointer queries"). */
#define _DEFAULT_SOURCE /* mincore */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "apigen_rt.h"
#include "cuda_guest.h"
#include "pinned_chunks.h"
#include "cuda_wire.h"

typedef struct hrange {
    uintptr_t base;
    size_t size;
    unsigned flags;
    int owned;     /* allocated here (cuMemAllocHost, cuMemHostAlloc) */
    CUcontext ctx; /* current at the allocation or registration (pointer queries) */
} hrange;

static hrange *ranges_;
static size_t nranges_, cap_;
static pthread_mutex_t lock_ = PTHREAD_MUTEX_INITIALIZER;

/* index of the range holding p, or -1; under lock_ */
static long find(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    for (size_t i = 0; i < nranges_; i++)
        if (a >= ranges_[i].base && a - ranges_[i].base < ranges_[i].size) return (long)i;
    return -1;
}

static int add(void *p, size_t size, unsigned flags, int owned, CUcontext ctx)
{
    pthread_mutex_lock(&lock_);
    if (nranges_ == cap_) {
        size_t nc = cap_ ? cap_ * 2 : 64;
        hrange *nr = realloc(ranges_, nc * sizeof *nr);
        if (!nr) {
            pthread_mutex_unlock(&lock_);
            return 0;
        }
        ranges_ = nr;
        cap_ = nc;
    }
    ranges_[nranges_++] = (hrange){(uintptr_t)p, size ? size : 1, flags, owned, ctx};
    pthread_mutex_unlock(&lock_);
    return 1;
}

int apigen_cuda_is_guest_host(const void *p)
{
    pthread_mutex_lock(&lock_);
    long i = find(p);
    pthread_mutex_unlock(&lock_);
    return i >= 0;
}

/* The driver needs a current context for host allocations (*ctx: it, which
 * pointer queries answer as the memory's context). */
static CUresult need_context(CUcontext *ctx)
{
    CUcontext c = NULL;
    CUresult e = cuCtxGetCurrent(&c);
    if (e != CUDA_SUCCESS) return e;
    if (ctx) *ctx = c;
    return c ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

/* Flags as the runtime's stub takes cudaHostAlloc's (issue 13: nothing
 * accepted that is not done): unknown bits are refused as the driver refuses
 * them; write-combined memory would need a mapping of the guest's CPU the
 * stub cannot make: refused, not accepted and echoed by cuMemHostGetFlags.
 * DEVICEMAP stays accepted everywhere: NVIDIA's runtime may ask it of every
 * pinned allocation (with unified addressing all pinned memory is mapped). */
#define HOST_ALLOC_FLAGS (CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED)

CUresult cuda_fwd_cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N);

static int place_alloc(size_t len, uint64_t *dev, void *user)
{
    (void)user;
    CUdeviceptr d = 0;
    CUresult e = cuMemAlloc_v2(&d, len);
    *dev = (uint64_t)d;
    return (int)e;
}

static int place_clear(uint64_t dev, size_t len, void *user)
{
    (void)user;
    return (int)cuda_fwd_cuMemsetD8_v2((CUdeviceptr)dev, 0, len);
}

static void place_release(uint64_t dev, void *user)
{
    (void)user;
    (void)cuMemFree_v2((CUdeviceptr)dev);
}

/* Mapped pinned memory outside the arena (none, or it is full): at its
 * twin's address, so that the host pointer is the device pointer
 * (runtime/twin_place.c); NULL with success: the address is taken here,
 * the caller takes plain memory (its twin, made at need, lies elsewhere). */
static CUresult place(size_t bytesize, void **p)
{
    static const apigen_twin_alloc ops = {place_alloc, place_clear, place_release};
    int err = 0;
    apigen_cuda_twin_own();
    *p = apigen_twin_place(bytesize, &ops, NULL, &err);
    if (*p || !err) return CUDA_SUCCESS;
    return err == APIGEN_TWIN_NO_MEMORY ? CUDA_ERROR_OUT_OF_MEMORY : (CUresult)err;
}

/* What cuMemHostAlloc made goes (its twin first, if any: what the device
 * wrote comes back, the allocation is freed): the arena's block, a placed
 * one, or plain memory. */
static CUresult release_block(void *p)
{
    CUdeviceptr dev = 0; /* its twin's allocation (none: a device reset took it) */
    CUresult e = apigen_cuda_twin_remove(p, &dev);
    if (dev) (void)cuMemFree_v2(dev);
    if (!apigen_arena_free(p) && !apigen_twin_unplace(p)) free(p);
    return e;
}

APIGEN_EXPORT CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
    if (!pp || (Flags & ~(unsigned)HOST_ALLOC_FLAGS)) return CUDA_ERROR_INVALID_VALUE;
    CUcontext ctx = NULL;
    CUresult e = need_context(&ctx);
    if (e != CUDA_SUCCESS) return e;
    if (!bytesize) return CUDA_ERROR_INVALID_VALUE;
    if (Flags & CU_MEMHOSTALLOC_WRITECOMBINED) {
        apigen_log("cuMemHostAlloc: flags 0x%x: write-combined host memory is not supported "
                   "remotely (CUDA_ERROR_NOT_SUPPORTED)", Flags);
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    void *p = apigen_pinned_alloc(bytesize, true);
    if (!p && (Flags & CU_MEMHOSTALLOC_DEVICEMAP) && (e = place(bytesize, &p)) != CUDA_SUCCESS)
        return e;
    if (!p && !(p = apigen_pinned_alloc(bytesize, false))) return CUDA_ERROR_OUT_OF_MEMORY;
    if (!add(p, bytesize, Flags, 1, ctx)) {
        (void)release_block(p);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    apigen_twin_candidate_add(p, bytesize);
    pc_add(p, bytesize, (Flags & CU_MEMHOSTALLOC_PORTABLE) != 0);
    *pp = p;
    return CUDA_SUCCESS;
}

APIGEN_EXPORT CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{
    return cuMemHostAlloc(pp, bytesize, 0);
}

APIGEN_EXPORT CUresult cuMemAllocHost(void **pp, unsigned int bytesize)
{
    return cuMemHostAlloc(pp, bytesize, 0);
}

APIGEN_EXPORT CUresult cuMemFreeHost(void *p)
{
    pthread_mutex_lock(&lock_);
    long i = find(p);
    if (i < 0 || !ranges_[i].owned || ranges_[i].base != (uintptr_t)p) {
        pthread_mutex_unlock(&lock_);
        return CUDA_ERROR_INVALID_VALUE;
    }
    ranges_[i] = ranges_[--nranges_];
    pthread_mutex_unlock(&lock_);
    apigen_twin_candidate_remove(p);
    pc_remove(p);
    return release_block(p);
}

#define HOST_REGISTER_FLAGS                                                                        \
    (CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_IOMEMORY |      \
     CU_MEMHOSTREGISTER_READ_ONLY)

APIGEN_EXPORT CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags)
{
    if (!p || !bytesize || (Flags & ~(unsigned)HOST_REGISTER_FLAGS)) return CUDA_ERROR_INVALID_VALUE;
    CUcontext ctx = NULL;
    CUresult e = need_context(&ctx);
    if (e != CUDA_SUCCESS) return e;
    if (Flags & CU_MEMHOSTREGISTER_IOMEMORY) {
        apigen_log("cuda: cuMemHostRegister: flags 0x%x (I/O memory of the GPU's machine) cannot "
                   "apply to guest memory",
                   Flags);
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    pthread_mutex_lock(&lock_);
    long i = find(p);
    pthread_mutex_unlock(&lock_);
    if (i >= 0) return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    if (!add(p, bytesize, Flags, 0, ctx)) return CUDA_ERROR_OUT_OF_MEMORY;
    apigen_twin_candidate_add(p, bytesize);
    return CUDA_SUCCESS;
}

APIGEN_EXPORT CUresult cuMemHostRegister(void *p, size_t bytesize, unsigned int Flags)
{
    return cuMemHostRegister_v2(p, bytesize, Flags);
}

APIGEN_EXPORT CUresult cuMemHostUnregister(void *p)
{
    pthread_mutex_lock(&lock_);
    long i = find(p);
    if (i < 0 || ranges_[i].owned || ranges_[i].base != (uintptr_t)p) {
        pthread_mutex_unlock(&lock_);
        return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    }
    ranges_[i] = ranges_[--nranges_];
    pthread_mutex_unlock(&lock_);
    apigen_twin_candidate_remove(p);
    CUdeviceptr dev = 0; /* a mapped range's allocation: what the device wrote comes back first */
    CUresult e = apigen_cuda_twin_remove(p, &dev);
    if (dev) (void)cuMemFree_v2(dev);
    return e;
}

APIGEN_EXPORT CUresult cuMemHostGetFlags(unsigned int *pFlags, void *p)
{
    if (!pFlags) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock_);
    long i = find(p);
    unsigned f = i >= 0 ? ranges_[i].flags : 0;
    int owned = i >= 0 && ranges_[i].owned;
    pthread_mutex_unlock(&lock_);
    if (i < 0) return CUDA_ERROR_INVALID_VALUE;
    if (owned) /* a small block has its chunk's PORTABLE bit (pinned_chunks.h) */
        f = pc_flags(p, f, CU_MEMHOSTALLOC_PORTABLE);
    /* with unified addressing all pinned and registered memory is mapped:
     * the driver reports DEVICEMAP whether it was asked or not (H200, driver
     * 580: tests/gpu/attr_probe.c); PORTABLE as pinned_chunks.h models. */
    *pFlags = f | CU_MEMHOSTALLOC_DEVICEMAP;
    return CUDA_SUCCESS;
}

CUresult cuda_fwd_cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int Flags);

CUresult cuda_fwd_cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n);

/* A range the device cannot reach at its address: its device allocation,
 * made at the first question and filled with the range (then kept equal to
 * it: runtime/twin.c). */
static pthread_mutex_t twin_lock_ = PTHREAD_MUTEX_INITIALIZER;
static CUresult mapped_range(CUdeviceptr *pdptr, void *p, uintptr_t base, size_t size,
                             unsigned flags)
{
    uint64_t dev = 0;
    CUresult e = CUDA_SUCCESS;
    apigen_cuda_twin_own();
    pthread_mutex_lock(&twin_lock_); /* one allocation per range */
    if (!apigen_twin_device((void *)base, &dev, NULL)) {
        CUdeviceptr d = 0;
        if ((e = cuMemAlloc_v2(&d, size)) == CUDA_SUCCESS) {
            apigen_cuda_own_copies(true); /* the range's bytes are there at return */
            e = cuda_fwd_cuMemcpyHtoD_v2(d, (void *)base, size);
            apigen_cuda_own_copies(false);
        }
        if (e == CUDA_SUCCESS &&
            apigen_twin_add((void *)base, size, (uint64_t)d,
                            (flags & CU_MEMHOSTREGISTER_READ_ONLY) != 0) != 0)
            e = CUDA_ERROR_OUT_OF_MEMORY;
        if (e == CUDA_SUCCESS) dev = (uint64_t)d;
        else if (d) (void)cuMemFree_v2(d);
    }
    pthread_mutex_unlock(&twin_lock_);
    if (e == CUDA_SUCCESS) *pdptr = (CUdeviceptr)(dev + ((uintptr_t)p - base));
    return e;
}

/* The device pointer is noted as the client's device memory (unified
 * copies with it go to the server, async calls with it are vouched for).
 * Memory the device cannot reach at its address answers its twin's
 * allocation, made now unless quiet (a pointer query's, which answers
 * CUDA_ERROR_NOT_SUPPORTED while there is none). */
static CUresult device_pointer(CUdeviceptr *pdptr, void *p, unsigned int Flags, int quiet)
{
    if (!pdptr || !p) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock_);
    long i = find(p);
    size_t left = i >= 0 ? ranges_[i].size - ((uintptr_t)p - ranges_[i].base) : 0;
    int owned = i >= 0 && ranges_[i].owned;
    uintptr_t base = i >= 0 ? ranges_[i].base : 0;
    size_t size = i >= 0 ? ranges_[i].size : 0;
    unsigned flags = i >= 0 ? ranges_[i].flags : 0;
    pthread_mutex_unlock(&lock_);
    if (i < 0) {
        CUresult e = need_context(NULL);
        return e != CUDA_SUCCESS ? e : CUDA_ERROR_INVALID_VALUE;
    }
    uint64_t peer = apigen_arena_peer_addr(&cuda_api, p, left);
    uint64_t twin = 0;
    if (!peer && apigen_twin_device(p, &twin, NULL)) { /* a kernel reached it, or asked before */
        if (Flags) return CUDA_ERROR_INVALID_VALUE;
        *pdptr = (CUdeviceptr)twin;
        return CUDA_SUCCESS;
    }
    /* a pointer query makes no device allocation, but for a registration
     * that asked for one (DEVICEMAP) */
    if (!peer && (!quiet || (!owned && (flags & CU_MEMHOSTREGISTER_DEVICEMAP)))) {
        if (Flags) return CUDA_ERROR_INVALID_VALUE;
        return mapped_range(pdptr, p, base, size, owned ? 0 : flags);
    }
    if (!peer) return CUDA_ERROR_NOT_SUPPORTED; /* the query's answer: none yet */
    CUresult e = cuda_fwd_cuMemHostGetDevicePointer_v2(pdptr, (void *)(uintptr_t)peer, Flags);
    /* the arena at one address on both sides (runtime/arena_guest.c): the
     * device pointer is the host pointer, host memory in the records */
    if (e == CUDA_SUCCESS && *pdptr && *pdptr != (CUdeviceptr)(uintptr_t)p &&
        !apigen_dev_noted(&cuda_api, (uint64_t)*pdptr))
        apigen_dev_note(&cuda_api, apigen_current_server(&cuda_api), (uint64_t)*pdptr, left);
    return e;
}

/* The guest's host range holding p outside the arena (the device cannot
 * reach it at p), copied to *r; 0: none. */
static int unreached_range(uint64_t p, hrange *r)
{
    if (!apigen_twin_candidate_maybe(p)) return 0;
    pthread_mutex_lock(&lock_);
    long i = find((const void *)(uintptr_t)p);
    if (i >= 0) *r = ranges_[i];
    pthread_mutex_unlock(&lock_);
    return i >= 0 && !apigen_arena_owns((const void *)r->base);
}

/* apigen_twin_make for launches: the twin of the range holding addr when
 * the device cannot reach it there (never for an address of the server's
 * device memory the guest noted: that is what the word means). */
static int reach_host(uint64_t addr, void *user)
{
    (void)user;
    hrange r;
    if (!unreached_range(addr, &r) || apigen_dev_noted(&cuda_api, addr)) return 0;
    CUdeviceptr d;
    return (int)mapped_range(&d, (void *)r.base, r.base, r.size, r.owned ? 0 : r.flags);
}

CUresult apigen_cuda_reach_params(void *buf, size_t n)
{
    if (!n || !apigen_twin_candidates()) return CUDA_SUCCESS;
    return (CUresult)apigen_twin_translate(buf, n, reach_host, NULL);
}

/* the address as a one-word parameter buffer: reach_host decides (a block
 * placed at its twin's address keeps it, and is host memory too) */
CUresult apigen_cuda_reach_dst(CUdeviceptr *p, int *host)
{
    uint64_t w = (uint64_t)*p;
    CUresult e = apigen_cuda_reach_params(&w, sizeof w);
    *host = e == CUDA_SUCCESS &&
            (w != (uint64_t)*p || apigen_twin_device((const void *)(uintptr_t)*p, NULL, NULL));
    if (*host) *p = (CUdeviceptr)w;
    return e;
}

static int unreached_at(CUdeviceptr p)
{
    hrange r;
    return unreached_range((uint64_t)p, &r);
}

/* Natively, under unified addressing, a device copy may name pinned or
 * registered host memory as either side (Thrust copies between a pinned
 * host vector and device memory as a device-to-device copy). */
int apigen_cuda_copy_unreached(CUdeviceptr dst, int dst_dev, CUdeviceptr src, int src_dev, size_t n,
                               CUstream s, int how, CUresult *e)
{
    if (!apigen_twin_candidates() || !((dst_dev && unreached_at(dst)) || (src_dev && unreached_at(src))))
        return 0;
    int pt = (how & APIGEN_CUDA_COPY_PT) != 0;
    if (how & APIGEN_CUDA_COPY_ASYNC)
        *e = pt ? cuMemcpyAsync_ptsz(dst, src, n, s) : cuMemcpyAsync(dst, src, n, s);
    else
        *e = pt ? cuMemcpy_ptds(dst, src, n) : cuMemcpy(dst, src, n);
    return 1;
}

APIGEN_EXPORT CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int Flags)
{
    return device_pointer(pdptr, p, Flags, 0);
}

/* ---- pointer queries ----------------------------------------------------------------------------
 * An address the guest can tell is its own pageable memory (mapped in this
 * process, neither a device range it noted, nor managed memory it mirrors,
 * nor pinned or registered memory) is no pointer the driver knows. Its own
 * address never goes to the server, which would look it up in its own
 * address space (where it may be a block of the server's), and whose
 * request would carry an address that depends on this process's memory
 * layout (NVIDIA's runtime asks about the host side of every
 * cudaMemcpyDefault: a replay on another machine differed there). The
 * driver is asked about NULL instead, which it knows no better: its error
 * is the answer (CUDA_ERROR_INVALID_VALUE, or why it cannot answer at all:
 * not initialized, no driver); a success there is still no answer for the
 * guest's address: CUDA_ERROR_INVALID_VALUE. Anything else is asked. */
CUresult cuda_fwd_cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr);

static int own_pageable(CUdeviceptr p)
{
    if (!p || apigen_cuda_is_guest_host((const void *)(uintptr_t)p) ||
        apigen_dev_noted(&cuda_api, (uint64_t)p) || apigen_mirror_find((uint64_t)p, NULL, NULL))
        return 0;
    long pg = sysconf(_SC_PAGESIZE);
    unsigned char v;
    if (pg <= 0) return 0;
    /* mincore fails with ENOMEM for an address no mapping holds */
    return mincore((void *)(uintptr_t)(p & ~(CUdeviceptr)(pg - 1)), 1, &v) == 0;
}

/* The guest's pinned and registered memory (cuMemAllocHost, cuMemHostAlloc,
 * cuMemHostRegister) is answered from its records: the server never saw
 * these addresses (the arena's bytes have another address there, other
 * memory none), so asking it gave CUDA_ERROR_INVALID_VALUE where the driver
 * answers (a GPU run, 2026-11-26). The answers are cuda.h's for host memory
 * of a context under unified addressing, interior pointers included: the
 * context and device current at the allocation, CU_MEMORYTYPE_HOST, the
 * pointer as host pointer, the recorded range as RANGE_START_ADDR/SIZE,
 * MAPPED 1, IS_MANAGED 0, IS_LEGACY_CUDA_IPC_CAPABLE 0 (cudaIpcGetMemHandle
 * takes device memory), P2P_TOKENS CUDA_ERROR_INVALID_VALUE (cuda.h: only
 * cuMemAlloc memory has them). DEVICE_POINTER is what
 * cuMemHostGetDevicePointer_v2 answers (the server's device pointer of the
 * arena's bytes, a mapped registration's device allocation); where the
 * device cannot reach the memory (tcp://, no arena) there is none: cuda.h's
 * CUDA_ERROR_INVALID_VALUE, NULL in a cuPointerGetAttributes list (as
 * cudaPointerAttributes::devicePointer documents). What only the driver
 * gives for its own allocations (BUFFER_ID, SYNC_MEMOPS, handle types,
 * pools, mappings, ...) the guest has no value for: CUDA_ERROR_NOT_SUPPORTED
 * with a log line, never a made-up one. */
static CUresult ctx_device(CUcontext ctx, int *ordinal)
{
    CUcontext cur = NULL;
    CUdevice d = 0;
    CUresult e = cuCtxGetCurrent(&cur);
    if (e == CUDA_SUCCESS && cur == ctx) e = cuCtxGetDevice(&d);
    else if (e == CUDA_SUCCESS) {
#ifdef APIGEN_HAS_FN_cuCtxGetDevice_v2 /* 13.0 */
        e = cuCtxGetDevice_v2(&d, ctx);
#else
        CUcontext popped = NULL;
        if ((e = cuCtxPushCurrent_v2(ctx)) == CUDA_SUCCESS) {
            e = cuCtxGetDevice(&d);
            CUresult p = cuCtxPopCurrent_v2(&popped);
            if (e == CUDA_SUCCESS) e = p;
        }
#endif
    }
    if (e == CUDA_SUCCESS) *ordinal = (int)d;
    return e;
}

static CUresult put(void *data, const void *v, size_t n)
{
    memcpy(data, v, n);
    return CUDA_SUCCESS;
}

static CUresult host_attr(void *data, CUpointer_attribute a, CUdeviceptr ptr, const hrange *r,
                          int list)
{
    static int said_device_, said_other_;
    const unsigned zero = 0, one = 1, host = CU_MEMORYTYPE_HOST;
    if (!data) return CUDA_ERROR_INVALID_VALUE;
    switch (a) {
    case CU_POINTER_ATTRIBUTE_CONTEXT: return put(data, &r->ctx, sizeof r->ctx);
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: return put(data, &host, sizeof host);
    case CU_POINTER_ATTRIBUTE_HOST_POINTER: {
        void *h = (void *)(uintptr_t)ptr;
        return put(data, &h, sizeof h);
    }
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE: return put(data, &zero, sizeof zero);
    case CU_POINTER_ATTRIBUTE_MAPPED: return put(data, &one, sizeof one);
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: {
        CUdeviceptr b = (CUdeviceptr)r->base;
        return put(data, &b, sizeof b);
    }
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE: return put(data, &r->size, sizeof r->size);
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: {
        int ordinal = 0;
        CUresult e = ctx_device(r->ctx, &ordinal);
        return e != CUDA_SUCCESS ? e : put(data, &ordinal, sizeof ordinal);
    }
    case CU_POINTER_ATTRIBUTE_P2P_TOKENS: return CUDA_ERROR_INVALID_VALUE;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: {
        CUdeviceptr d = 0;
        CUresult e = need_context(NULL); /* cuda.h: none current is CUDA_ERROR_INVALID_CONTEXT */
        if (e == CUDA_SUCCESS) e = device_pointer(&d, (void *)(uintptr_t)ptr, 0, 1);
        if (e == CUDA_ERROR_NOT_SUPPORTED && list) e = CUDA_SUCCESS, d = 0;
        if (e == CUDA_ERROR_NOT_SUPPORTED) {
            if (!__atomic_exchange_n(&said_device_, 1, __ATOMIC_RELAXED))
                apigen_log("cuPointerGetAttribute(CU_POINTER_ATTRIBUTE_DEVICE_POINTER): %p is "
                           "host memory of this process that the server's device cannot reach "
                           "(only pinned memory of the shared-memory arena, unix:// or shm://, "
                           "and mapped registrations are): no device pointer "
                           "(CUDA_ERROR_INVALID_VALUE; logged once)",
                           (void *)(uintptr_t)ptr);
            return CUDA_ERROR_INVALID_VALUE;
        }
        return e != CUDA_SUCCESS ? e : put(data, &d, sizeof d);
    }
    default:
        if (!__atomic_exchange_n(&said_other_, 1, __ATOMIC_RELAXED))
            apigen_log("cuPointerGetAttribute: attribute %d of %p, %s memory of this process: "
                       "only the driver has a value for its own allocations, and this memory is "
                       "not one of the server's: CUDA_ERROR_NOT_SUPPORTED (logged once)",
                       (int)a, (void *)(uintptr_t)ptr, r->owned ? "pinned" : "registered");
        return CUDA_ERROR_NOT_SUPPORTED;
    }
}

int apigen_cuda_host_attr(void *data, CUpointer_attribute a, CUdeviceptr ptr, int list,
                          CUresult *res)
{
    hrange r;
    pthread_mutex_lock(&lock_);
    long i = find((const void *)(uintptr_t)ptr);
    if (i >= 0) r = ranges_[i];
    pthread_mutex_unlock(&lock_);
    if (i < 0) return 0;
    *res = host_attr(data, a, ptr, &r, list);
    return 1;
}

APIGEN_EXPORT CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute,
                                             CUdeviceptr ptr)
{
    CUresult e;
    if (apigen_cuda_host_attr(data, attribute, ptr, 0, &e)) return e;
    if (!own_pageable(ptr)) return cuda_fwd_cuPointerGetAttribute(data, attribute, ptr);
    uint64_t scratch[8]; /* the largest attribute (P2P tokens): never the caller's data */
    e = cuda_fwd_cuPointerGetAttribute(data ? scratch : NULL, attribute, 0);
    return e == CUDA_SUCCESS ? CUDA_ERROR_INVALID_VALUE : e;
}

size_t apigen_cuda_pointer_attribute_size(CUpointer_attribute a)
{
    /* as the spec's `bytes:` of cuPointerGetAttribute's data (specs/cuda.yaml) */
    switch (a) {
    case CU_POINTER_ATTRIBUTE_CONTEXT: case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
    case CU_POINTER_ATTRIBUTE_HOST_POINTER: case CU_POINTER_ATTRIBUTE_BUFFER_ID:
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE: case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR: case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
        return 8;
    case CU_POINTER_ATTRIBUTE_P2P_TOKENS: return sizeof(CUDA_POINTER_ATTRIBUTE_P2P_TOKENS);
    default: return a >= CU_POINTER_ATTRIBUTE_MEMORY_TYPE && (int)a <= 21 ? 4 : 0;
    }
}

/* ---- unified copies ---------------------------------------------------------------------------- */
/* 1: device memory (or memory of the server's process), 0: guest host memory.
 * A device range the guest noted needs no question; otherwise only the
 * driver's "not a pointer it knows" (CUDA_ERROR_INVALID_VALUE) makes it the
 * guest's own memory: any other failure (no context, a lost connection)
 * keeps it on the server, whose copy then reports the error, so the guest
 * never reads or writes a device address (or NULL) as its own memory. */
int apigen_cuda_on_server(CUdeviceptr p)
{
    if (!p) return 1; /* NULL: the driver's own answer */
    if (apigen_cuda_is_guest_host((const void *)(uintptr_t)p)) return 0;
    if (apigen_dev_noted(&cuda_api, (uint64_t)p)) return 1;
    unsigned int type = 0;
    apigen_hold_deferred(true); /* the query's own errors are not the copy's */
    CUresult e = cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p);
    apigen_hold_deferred(false);
    return e != CUDA_ERROR_INVALID_VALUE;
}

#define UNIFIED(name, sfx)                                                             \
    APIGEN_EXPORT CUresult name(CUdeviceptr dst, CUdeviceptr src, size_t n)                       \
    {                                                                                             \
        int d = apigen_cuda_on_server(dst), s = apigen_cuda_on_server(src);                                               \
        void *hd = (void *)(uintptr_t)dst;                                                        \
        const void *hs = (const void *)(uintptr_t)src;                                            \
        if (!d && !s) {                                                                           \
            if (n) memmove(hd, hs, n);                                                            \
            return CUDA_SUCCESS;                                                                  \
        }                                                                                         \
        if (d && s) return cuMemcpyDtoD_v2##sfx(dst, src, n);                                     \
        return d ? cuMemcpyHtoD_v2##sfx(dst, hs, n) : cuMemcpyDtoH_v2##sfx(hd, src, n);           \
    }
UNIFIED(cuMemcpy, )
UNIFIED(cuMemcpy_ptds, _ptds)

#define UNIFIED_ASYNC(name, sfx)                                                                  \
    APIGEN_EXPORT CUresult name(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream hStream)     \
    {                                                                                             \
        int d = apigen_cuda_on_server(dst), s = apigen_cuda_on_server(src);                                               \
        void *hd = (void *)(uintptr_t)dst;                                                        \
        const void *hs = (const void *)(uintptr_t)src;                                            \
        if (!d && !s) {                                                                           \
            CUresult e = cuStreamSynchronize##sfx(hStream);                                       \
            if (e == CUDA_SUCCESS && n) memmove(hd, hs, n);                                       \
            return e;                                                                             \
        }                                                                                         \
        if (d && s) return cuMemcpyDtoDAsync_v2##sfx(dst, src, n, hStream);                       \
        return d ? cuMemcpyHtoDAsync_v2##sfx(dst, hs, n, hStream)                                 \
                 : cuMemcpyDtoHAsync_v2##sfx(hd, src, n, hStream);                                \
    }
UNIFIED_ASYNC(cuMemcpyAsync, )
UNIFIED_ASYNC(cuMemcpyAsync_ptsz, _ptsz)
