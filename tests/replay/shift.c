/* Preloaded into a replayed program (tests/replay/replay.sh, REPLAY_SHIFT) to
 * imitate another machine's memory layout: another libc or libstdc++ moves
 * where a program's mappings and heap blocks land, even under `setarch -R`.
 * At load it maps REPLAY_SHIFT_KB KiB (default 8204: 8 MiB and three pages)
 * of inaccessible memory and takes a 40 KiB heap block, both kept: every
 * later mapping and small heap block of the program lands elsewhere than in
 * the recording run. A request that carries a host address then differs and
 * the replay fails at it; one that does not, passes. */
#define _DEFAULT_SOURCE
#include <stdlib.h>
#include <sys/mman.h>

static void *map_, *block_;

__attribute__((constructor)) static void shift(void)
{
    const char *s = getenv("REPLAY_SHIFT_KB");
    long kb = s ? atol(s) : 8204;
    if (kb > 0 && kb < (1L << 20))
        map_ = mmap(NULL, (size_t)kb << 10, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    block_ = malloc(40 << 10);
}

__attribute__((destructor)) static void unshift(void)
{
    free(block_);
    (void)map_; /* the mapping goes with the process */
}
