/* The stand-in devices' "device memory" (tests/cuda/fake_device.c,
 * tests/fftrand/fake_cudart.c): each allocation a zeroed mapping of its own,
 * 256-byte aligned as the device's, its length kept in the 256 bytes before
 * it, at addresses from base + a slot chosen by the process id: two
 * clients' session processes (forks of one server) never hand out the same
 * addresses, and none lies where another session process maps its client's
 * shared-memory arena (heap addresses did, once, in tests/fftrand/foreign.sh).
 * Never used with a GPU. */
#ifndef FAKE_DEVMEM_H
#define FAKE_DEVMEM_H

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define FAKE_DEVMEM_HEAD 256

/* NULL: no memory. *next: where the next allocation is asked for (0 at first) */
static inline void *fake_devmem_map(uintptr_t base, uintptr_t *next, size_t size)
{
    size_t len = FAKE_DEVMEM_HEAD + (size ? size : 1);
    if (!*next) *next = base + ((uintptr_t)(getpid() & 0xffff) << 26);
    unsigned char *m =
        mmap((void *)*next, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return NULL;
    *next = (uintptr_t)m + ((len + 0xfffff) & ~(uintptr_t)0xfffff);
    memcpy(m, &len, sizeof len);
    return m + FAKE_DEVMEM_HEAD;
}

static inline void fake_devmem_unmap(void *p)
{
    size_t len;
    unsigned char *m = (unsigned char *)p - FAKE_DEVMEM_HEAD;
    memcpy(&len, m, sizeof len);
    munmap(m, len);
}

#endif
