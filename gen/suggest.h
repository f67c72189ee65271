/* "did you mean" (suggest.c). */
#ifndef APIGEN_SUGGEST_H
#define APIGEN_SUGGEST_H

#include <stddef.h>

/* The candidate closest to `name` within a small edit distance (1 for
 * names under 5 characters, 2 under 20, else 3), or NULL. cand(ctx, i) gives candidate i
 * (NULL: skip it). */
const char *suggest_name(const char *name, const char *(*cand)(void *ctx, size_t i), size_t n,
                         void *ctx);

#endif
