#define _POSIX_C_SOURCE 200809L
/* libexa compiled into the exa fuzz target, instrumented like the rest, with
 * two changes that keep the fuzzer on apigen's side of the fence:
 * allocations above 16 MiB fail (exaMalloc/exaCreateBuffer of a huge size is
 * the library's business, not a bug of the server), and fuzz_exa_live()
 * counts what is alive so the target can check S5 after every input. */
#include <stdlib.h>

#define FUZZ_EXA_CAP (16u << 20)
static void *fuzz_calloc(size_t n, size_t s)
{
    return (s && n > FUZZ_EXA_CAP / s) ? NULL : calloc(n, s);
}
static void *fuzz_malloc(size_t s) { return s > FUZZ_EXA_CAP ? NULL : malloc(s); }
#define calloc fuzz_calloc
#define malloc fuzz_malloc

#include "../../examples/exa/src/exa.c"

#undef calloc
#undef malloc

unsigned fuzz_exa_live(void)
{
    unsigned n = 0;
    pthread_mutex_lock(&g_lock);
    for (struct exaContext_st *p = g_contexts; p; p = p->reg_next)
        n++;
    for (struct exaBuffer_st *p = g_buffers; p; p = p->reg_next)
        n++;
    n += (unsigned)g_ndev;
    pthread_mutex_unlock(&g_lock);
    return n;
}
