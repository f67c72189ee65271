/* "did you mean": the closest name to a misspelled one (edit distance). */
#include "suggest.h"

#include <stdlib.h>
#include <string.h>

/* Edit distance with adjacent transpositions counted as one edit ("dst" for
 * "dts", the commonest slip; optimal string alignment), stopping early above
 * `limit` once two rows in a row exceed it */
static size_t distance(const char *a, const char *b, size_t limit)
{
    size_t la = strlen(a), lb = strlen(b);
    if ((la > lb ? la - lb : lb - la) > limit) return limit + 1;
    size_t *rows = malloc(3 * (lb + 1) * sizeof *rows);
    if (!rows) return limit + 1;
    size_t *prev2 = rows, *prev = rows + lb + 1, *cur = rows + 2 * (lb + 1);
    for (size_t j = 0; j <= lb; j++) prev[j] = j;
    size_t prev_best = 0;
    for (size_t i = 1; i <= la; i++) {
        size_t best = cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t v = prev[j - 1] + (a[i - 1] != b[j - 1]);
            if (cur[j - 1] + 1 < v) v = cur[j - 1] + 1;
            if (prev[j] + 1 < v) v = prev[j] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                prev2[j - 2] + 1 < v)
                v = prev2[j - 2] + 1;
            cur[j] = v;
            if (v < best) best = v;
        }
        if (best > limit && prev_best > limit) {
            free(rows);
            return limit + 1;
        }
        prev_best = best;
        size_t *t = prev2;
        prev2 = prev;
        prev = cur;
        cur = t;
    }
    size_t d = prev[lb];
    free(rows);
    return d;
}

const char *suggest_name(const char *name, const char *(*cand)(void *ctx, size_t i), size_t n,
                         void *ctx)
{
    size_t len = strlen(name);
    size_t limit = len < 5 ? 1 : len < 20 ? 2 : 3;
    const char *best = NULL;
    size_t bd = limit + 1;
    for (size_t i = 0; i < n; i++) {
        const char *c = cand(ctx, i);
        if (!c) continue;
        size_t d = distance(name, c, limit);
        if (d < bd) {
            bd = d;
            best = c;
        }
    }
    return best;
}
