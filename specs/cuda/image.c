/* The size of a module image, read from its header: the driver takes a bare
 * pointer (cuModuleLoadData, cuLibraryLoadData, ...) and finds the end
 * itself; the stub must know how many bytes to send.
 * - fat binary wrapper (magic 0x466243b1, as nvcc embeds it): points to the
 *   fat binary itself;
 * - fat binary (magic 0xBA55ED50): a 16-byte header with the size of what
 *   follows;
 * - ELF (cubin): the furthest of the section headers, program headers and
 *   every section's bytes;
 * - anything else that is NUL-terminated printable text (PTX): strlen + 1. */
#include <stdint.h>
#include <string.h>

#include "apigen_rt.h"
#include "cuda_guest.h"

#define FATBIN_MAGIC 0xBA55ED50u
#define WRAPPER_MAGIC 0x466243b1u
#define IMAGE_MAX ((uint64_t)1 << 32) /* 4 GiB: past it, a header is garbage */

static uint64_t rd(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static int fatbin_size(const unsigned char *p, size_t *size)
{
    if (rd(p, 4) != FATBIN_MAGIC) return 0;
    uint64_t hdr = rd(p + 6, 2), body = rd(p + 8, 8);
    if (hdr < 16 || body > IMAGE_MAX) return 0;
    *size = (size_t)(hdr + body);
    return 1;
}

static int elf_size(const unsigned char *p, size_t *size)
{
    if (memcmp(p, "\177ELF", 4) != 0 || p[4] != 2 /* 64-bit */ || p[5] != 1 /* LE */) return 0;
    uint64_t phoff = rd(p + 32, 8), shoff = rd(p + 40, 8);
    uint64_t phentsize = rd(p + 54, 2), phnum = rd(p + 56, 2);
    uint64_t shentsize = rd(p + 58, 2), shnum = rd(p + 60, 2);
    uint64_t end = 64;
    if (phoff + phnum * phentsize > end) end = phoff + phnum * phentsize;
    if (shoff + shnum * shentsize > end) end = shoff + shnum * shentsize;
    if (end > IMAGE_MAX || (shnum && shentsize < 64) || (phnum && phentsize < 56)) return 0;
    for (uint64_t i = 0; i < shnum; i++) {
        const unsigned char *sh = p + shoff + i * shentsize;
        uint64_t type = rd(sh + 4, 4), off = rd(sh + 24, 8), sz = rd(sh + 32, 8);
        if (type == 8 /* SHT_NOBITS: no bytes in the file */) continue;
        if (off > IMAGE_MAX || sz > IMAGE_MAX) return 0;
        if (off + sz > end) end = off + sz;
    }
    for (uint64_t i = 0; i < phnum; i++) {
        const unsigned char *ph = p + phoff + i * phentsize;
        uint64_t off = rd(ph + 8, 8), sz = rd(ph + 32, 8);
        if (off > IMAGE_MAX || sz > IMAGE_MAX) return 0;
        if (off + sz > end) end = off + sz;
    }
    *size = (size_t)end;
    return 1;
}

static int text_size(const unsigned char *p, size_t *size)
{
    size_t n = 0;
    for (; p[n]; n++) {
        unsigned char c = p[n];
        if (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' && c != '\v') return 0;
        if (n >= IMAGE_MAX) return 0;
    }
    if (!n) return 0;
    *size = n + 1;
    return 1;
}

CUresult apigen_cuda_image(const void **image, size_t *size, const char *fn)
{
    const unsigned char *p = *image;
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    if (rd(p, 4) == WRAPPER_MAGIC) { /* {magic, version, const void *data, filename_or_fatbins} */
        const unsigned char *inner = (const unsigned char *)(uintptr_t)rd(p + 8, 8);
        /* the driver takes the wrapper or the fat binary it points to: ship
         * the fat binary (the server cannot follow a pointer into the guest) */
        if (inner && fatbin_size(inner, size)) {
            *image = inner;
            return CUDA_SUCCESS;
        }
    }
    if (fatbin_size(p, size) || elf_size(p, size) || text_size(p, size)) return CUDA_SUCCESS;
    apigen_log("cuda: %s: the image is neither a fat binary (magic 0x%08x), an ELF cubin nor "
               "PTX text (first bytes %02x %02x %02x %02x): cannot tell its size",
               fn, FATBIN_MAGIC, p[0], p[1], p[2], p[3]);
    return CUDA_ERROR_INVALID_IMAGE;
}
