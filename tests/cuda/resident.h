/* resident.h: whether pinned memory's pages are in memory before the
 * program writes them (mincore). The driver pins them when the allocation
 * returns; forwarded, the guest's own mapping must be populated too, so the
 * program's first write faults on none. Used by pinned_attrs_rt.c and
 * driver/pinned_attrs_ci.c (define _DEFAULT_SOURCE before any include). */
#ifndef APIGEN_TESTS_CUDA_RESIDENT_H
#define APIGEN_TESTS_CUDA_RESIDENT_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

static void resident(const char *what, void *p, size_t n)
{
    size_t pages = (n + 4095) / 4096, in = 0;
    unsigned char *v = malloc(pages);
    if (v && mincore(p, n, v) == 0)
        for (size_t i = 0; i < pages; i++) in += v[i] & 1;
    printf("%s: %s of its %zu pages in memory before any write\n", what,
           in == pages ? "all" : "NOT all", pages);
    free(v);
}

#endif
