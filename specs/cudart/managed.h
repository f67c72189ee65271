/* Managed memory through the cudart stub (managed.c, docs/managed.md). */
#ifndef APIGEN_CUDART_MANAGED_H
#define APIGEN_CUDART_MANAGED_H

#include <stdbool.h>
#include <stddef.h>

enum { CUDART_SYNC_DEVICE, CUDART_SYNC_STREAM, CUDART_SYNC_EVENT };

/* Before the server may read managed memory: what the host wrote goes there. */
cudaError_t cudart_managed_push(void);
/* After a launch on s (ptsz: the per-thread entry point): every mirror may
 * be written by the device until s is synchronized. */
void cudart_managed_launched(cudaStream_t s, bool ptsz);
/* After a copy or set into [dst, dst+n) on s (dst NULL: anywhere). */
void cudart_managed_wrote(const void *dst, size_t n, cudaStream_t s, bool ptsz);
/* After a successful synchronization: pages the device may have written come back. */
cudaError_t cudart_managed_sync(int what, cudaStream_t s, bool ptsz);
/* A mirror for managed memory the server handed out at p (clean: to be
 * pulled before use, else every page is pushed at the first launch);
 * refused with one log line (cudaErrorNotSupported) when the guest cannot
 * map it there. */
cudaError_t cudart_managed_map(void *p, size_t size, bool clean, const char *what);
void cudart_managed_unmap(void *p);
bool cudart_managed_holds(const void *p);

#endif
