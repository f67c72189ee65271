/* specs/cuda/pinned_chunks.h: the PORTABLE bit the driver reports for a pinned block
 * (cuMemHostGetFlags, cudaHostGetFlags), which is not always the block's own. Measured on an
 * H200, driver 580 (tests/gpu/attr_probe.c `order`, docs/gpu-runs/2026-11-27.md): a request
 * under 2 MiB is carved from the first 2 MiB chunk, in the order the chunks were made, with room
 * for it (bytes counted), else from a new chunk, whose PORTABLE bit is that request's; a chunk
 * whose blocks are all freed is released; a request of 2 MiB or more is an allocation of its
 * own with its own bit. Header-only: each library that includes it (the driver and runtime
 * stubs, the CI stand-ins) models its own blocks, as each process has its own driver. */
#ifndef APIGEN_PINNED_CHUNKS_H
#define APIGEN_PINNED_CHUNKS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#define PC_CHUNK ((size_t)2 << 20)

typedef struct pc_chunk {
    size_t used;
    unsigned nblocks;
    bool portable;
    struct pc_chunk *next; /* in the order they were made */
} pc_chunk;

typedef struct pc_block {
    uintptr_t base;
    size_t size;
    pc_chunk *chunk; /* NULL: an allocation of its own */
    bool portable;
    struct pc_block *next;
} pc_block;

static pthread_mutex_t pc_mu_ = PTHREAD_MUTEX_INITIALIZER;
static pc_chunk *pc_chunks_;
static pc_block *pc_blocks_;

/* A block the application allocated (portable: it asked for PORTABLE). */
static inline void pc_add(const void *p, size_t size, bool portable)
{
    pc_block *b = calloc(1, sizeof *b);
    if (!b) return; /* then its own bit is reported */
    b->base = (uintptr_t)p, b->size = size ? size : 1, b->portable = portable;
    pthread_mutex_lock(&pc_mu_);
    if (b->size < PC_CHUNK) {
        pc_chunk **at = &pc_chunks_;
        while (*at && (*at)->used + b->size > PC_CHUNK) at = &(*at)->next;
        if (!*at && (*at = calloc(1, sizeof **at))) (*at)->portable = portable;
        if (*at) {
            b->chunk = *at;
            b->chunk->used += b->size;
            b->chunk->nblocks++;
        }
    }
    b->next = pc_blocks_, pc_blocks_ = b;
    pthread_mutex_unlock(&pc_mu_);
}

/* A block freed (p: its base). */
static inline void pc_remove(const void *p)
{
    pthread_mutex_lock(&pc_mu_);
    for (pc_block **at = &pc_blocks_; *at; at = &(*at)->next) {
        pc_block *b = *at;
        if (b->base != (uintptr_t)p) continue;
        *at = b->next;
        pc_chunk *c = b->chunk;
        if (c && (c->used -= b->size, --c->nblocks == 0))
            for (pc_chunk **ca = &pc_chunks_; *ca; ca = &(*ca)->next)
                if (*ca == c) {
                    *ca = c->next;
                    free(c);
                    break;
                }
        free(b);
        break;
    }
    pthread_mutex_unlock(&pc_mu_);
}

/* The PORTABLE bit reported for the block holding p (asked: its own, when
 * the block is not known here). */
static inline bool pc_portable(const void *p, bool asked)
{
    bool r = asked;
    pthread_mutex_lock(&pc_mu_);
    for (pc_block *b = pc_blocks_; b; b = b->next)
        if ((uintptr_t)p >= b->base && (uintptr_t)p - b->base < b->size) {
            r = b->chunk ? b->chunk->portable : b->portable;
            break;
        }
    pthread_mutex_unlock(&pc_mu_);
    return r;
}

/* flags with the PORTABLE bit (portable_bit: the API's value of it) the
 * driver reports for the allocation holding p */
static inline unsigned pc_flags(const void *p, unsigned flags, unsigned portable_bit)
{
    bool asked = (flags & portable_bit) != 0;
    return (flags & ~portable_bit) | (pc_portable(p, asked) ? portable_bit : 0);
}

#endif
