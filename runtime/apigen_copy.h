/* apigen_copy.h: a large host memcpy spread over a few helper threads, for
 * a spec's hand-written guest code that stages bulk data itself (the copy
 * between the application's pageable memory and shared staging memory).
 *
 * On the GPU machine one core copies memory beyond its cache at about
 * 12 GB/s, while the device moves 50 GB/s to or from pinned memory; four
 * threads copy 33-50 GB/s, eight 55-88 (docs/performance.md, 2026-11-21
 * 20:10). */
#ifndef APIGEN_COPY_H
#define APIGEN_COPY_H

#include <stddef.h>

/* memcpy(dst, src, n) for non-overlapping buffers. From APIGEN_COPY_MIN
 * bytes (default 1 MiB) the caller and up to APIGEN_COPY_THREADS - 1
 * helper threads (default: half the processors, at most 6 in all; 1 turns
 * it off) each copy parts of it; it returns when every byte is copied. Helpers start on first use; one
 * wide copy runs at a time (another thread's copy meanwhile is a plain
 * memcpy). Safe across fork(): a child starts its own helpers. */
#if defined(APIGEN_GUEST_SO) && defined(__GNUC__) /* exported by libapigen-guest.so.2 */
#pragma GCC visibility push(default)
#endif
void apigen_copy_wide(void *dst, const void *src, size_t n);
#if defined(APIGEN_GUEST_SO) && defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif
