/* Shared declarations of the CUDA driver stub's hand-written guest code. */
#ifndef APIGEN_CUDA_GUEST_H
#define APIGEN_CUDA_GUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda_wire.h" /* cuda.h with every ABI form declared */

/* The byte size of a module image from its header (image.c): a fat binary
 * (bare, or a wrapper: then *image becomes the fat binary it points to), an
 * ELF cubin, or NUL-terminated PTX text. Anything else is
 * CUDA_ERROR_INVALID_IMAGE with a log line naming `fn`. */
CUresult apigen_cuda_image(const void **image, size_t *size, const char *fn);

/* The export table the private-interface helper provides (export_tables.c). */
CUresult apigen_cuda_export_table(const void **ppExportTable, const CUuuid *pExportTableId);

/* Whether p lies in host memory the guest allocated or registered through
 * the driver (cuMemAllocHost & co; host_mem.c). */
int apigen_cuda_is_guest_host(const void *p);
/* host_mem.c: a kernel's packed parameters (launches, graph kernel nodes),
 * host addresses the device cannot reach there given as their twins'
 * (apigen_twin_translate; no-op while there are no twin candidates) */
CUresult apigen_cuda_reach_params(void *buf, size_t n);
/* host_mem.c: a memset's destination that is host memory the device cannot
 * reach there (pinned memory over tcp://): *p becomes its twin's address
 * and *host 1; other addresses are left as they are (*host 0) */
CUresult apigen_cuda_reach_dst(CUdeviceptr *p, int *host);
/* A copy that names as device memory (dst_dev, src_dev) host memory the
 * device cannot reach at its address: done the unified way (cuMemcpy /
 * cuMemcpyAsync tell each side), *e its result; 0: not such a copy. how:
 * APIGEN_CUDA_COPY_ASYNC, APIGEN_CUDA_COPY_PT (apigen_cuda.h). */
int apigen_cuda_copy_unreached(CUdeviceptr dst, int dst_dev, CUdeviceptr src, int src_dev, size_t n,
                               CUstream s, int how, CUresult *e);
/* host_mem.c: the bytes a cuPointerGetAttribute answer of this attribute
 * takes (cuda.h), 0 for one this header does not know */
size_t apigen_cuda_pointer_attribute_size(CUpointer_attribute a);
/* host_mem.c: a pointer query about the guest's pinned or registered memory,
 * answered from its records: 1 with *res the result (list: an entry of
 * cuPointerGetAttributes, where "no device pointer" is NULL), 0 for other
 * memory */
int apigen_cuda_host_attr(void *data, CUpointer_attribute a, CUdeviceptr ptr, int list,
                          CUresult *res);

/* Whether an address of unified addressing is the server's (device memory,
 * or memory of the server's process the driver knows) rather than the
 * guest's own host memory (host_mem.c; asks the server unless the guest
 * allocated or registered it). */
int apigen_cuda_on_server(CUdeviceptr p);

/* settled work (managed.c, apigen_work_hint): the thread's next frame of
 * call_id is kind, in the scope of its current context */
void apigen_cuda_work_hint(uint32_t call_id, enum apigen_work kind);
/* before a call that returns once all of stream's work completed (a copy
 * to pageable memory): it settles that queue (managed.c) */
void apigen_cuda_queue_hint(uint32_t call_id, CUstream stream, bool ptsz);

/* managed memory (managed.c, docs/managed.md): push what the host wrote
 * before the server may read managed memory; after device work on s that
 * may write [dst, dst+n) (dst 0: anywhere), mark it; after a successful
 * synchronization (APIGEN_SYNC_ALL/_QUEUE/_POINT) pull what the device may
 * have written; a global that is a __managed__ variable gets a mirror */
CUresult apigen_cuda_managed_push(void);
/* A mapped registration's twin (host_mem.c) goes: what the device wrote
 * comes back; *dev: its allocation to free (0: none). */
CUresult apigen_cuda_twin_remove(void *host, CUdeviceptr *dev);
void apigen_cuda_twin_own(void); /* the driver moves twins itself (managed.c) */
void apigen_cuda_managed_wrote(CUdeviceptr dst, size_t n, CUstream s, bool ptsz);
CUresult apigen_cuda_managed_sync(int scope, CUstream s, bool ptsz);
CUresult apigen_cuda_managed_global(CUdeviceptr p, size_t n, const char *name);
/* dev_ranges.c: the globals' answers kept for owner (a module or library),
 * or all of them, are dropped */
void apigen_cuda_globals_forget(int all, uint64_t owner);
/* events.c: a context ended, so an event the process knew live may be gone
 * with it; its destroy goes synchronously again (context_gone.c) */
void apigen_cuda_events_forget(void);

/* A kernel's parameter layout, learned once per CUfunction or CUkernel id
 * from the server (launch.c). */
struct apigen_cuda_layout {
    uint64_t id;
    unsigned n;
    size_t size; /* bytes of the packed buffer: the end of the last parameter */
    size_t *offsets, *sizes;
    struct apigen_cuda_layout *next;
    unsigned gen; /* launch.c: learnt in this generation (apigen_cuda_functions_gone) */
};
CUresult apigen_cuda_get_layout(CUfunction f, const struct apigen_cuda_layout **out);
/* The packed buffer of a launch's `extra` form, checked against the layout. */
CUresult apigen_cuda_extra_buffer(const struct apigen_cuda_layout *l, void **extra,
                                  const void **buf, size_t *size);

/* launch.c: a module, library or context ended: every function's parameter
 * layout, launch limits and accepted configurations are asked and learnt
 * again (a function id may name another function from now on) */
void apigen_cuda_functions_gone(void);
/* launch_check.c: the function's limits are asked again at its next launch;
 * _all: every function's (a module, library or context ended) */
void apigen_cuda_launch_limits_forget(uint64_t id);
void apigen_cuda_launch_limits_forget_all(void);
/* Whether a launch configuration is within the limits of every device and
 * of the function (launch_check.c; asked once, then cached) and needs no
 * more than one the server accepted for the function with the same kinds
 * of launch attributes (attrs: their mask). */
int apigen_cuda_launch_vouched(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                               unsigned by, unsigned bz, unsigned shmem, uint64_t attrs);
/* the server accepted this launch configuration of f (a synchronous launch) */
void apigen_cuda_launch_accepted(CUfunction f, unsigned threads, unsigned shmem, uint64_t attrs);

/* A host function on a stream that captures (hostfn.c): it runs, here, at
 * every launch of the graph; ptsz: the stream is named as by a _ptsz form. */
CUresult apigen_cuda_host_fn_captured(CUstream stream, void (*fn)(void *), void *user, int ptsz);

/* Whether work enqueued on the stream now is captured into a graph
 * (capture.c): asked of the server only while this process has a capture
 * open. */
int apigen_cuda_captures(CUstream stream, int ptsz);
/* queue_check.c: between on and off, the thread's host-to-device copies
 * are the stub's own (pushes, twins) and never queued (nests) */
void apigen_cuda_own_copies(bool on);
/* queue_check.c: whether a copy this thread makes now may be queued, as far
 * as the thread's state says (a context current, not the stub's own copy,
 * no capture ever begun); the twins' spans ask it (managed.c) */
bool cuda_may_queue_own(void);

#endif
