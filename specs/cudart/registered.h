/* Mapped registrations of the application's memory (registered.c,
 * docs/multi-gpu.md): a device allocation per range, kept equal to it at
 * launches and synchronizations; managed.c's hooks call these. */
#ifndef APIGEN_CUDART_REGISTERED_H
#define APIGEN_CUDART_REGISTERED_H

#include <stdbool.h>
#include <stddef.h>

/* A range registered mapped: its device allocation made and filled. */
cudaError_t cudart_registered_add(void *ptr, size_t size, bool read_only);
/* cudaHostAlloc(cudaHostAllocMapped) without an arena: size bytes placed at
 * their twin's address (runtime/twin_place.c), so that the host pointer is
 * the device pointer; *host NULL with success: the address is taken here
 * (plain memory and cudart_registered_add then). Freed by
 * cudart_registered_remove, then apigen_twin_unplace. */
cudaError_t cudart_registered_place(size_t size, void **host);
/* Unregistered: what kernels wrote comes back first, then the allocation goes. */
cudaError_t cudart_registered_remove(void *ptr);
/* The device pointer of host (in a range) and the bytes left in the range. */
bool cudart_registered_device(const void *host, void **dev, size_t *left);
/* Before the server may read device memory: what the application changed goes. */
cudaError_t cudart_registered_push(void);
/* After a launch (dst NULL) or a copy or set into [dst, dst+n): the ranges
 * the device may have written are stale. */
void cudart_registered_wrote(const void *dst, size_t n);
/* After a successful synchronization: what the device changed comes back. */
cudaError_t cudart_registered_sync(bool device_wide);

#endif
