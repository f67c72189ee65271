/* "did you mean": the closest name to a misspelled one (edit distance). */
#include "suggest.h"

#include <stdlib.h>
#include <string.h>

/* Levenshtein distance, stopping early above `limit` */
static size_t distance(const char *a, const char *b, size_t limit)
{
    size_t la = strlen(a), lb = strlen(b);
    if ((la > lb ? la - lb : lb - la) > limit) return limit + 1;
    size_t *row = malloc((lb + 1) * sizeof *row);
    if (!row) return limit + 1;
    for (size_t j = 0; j <= lb; j++) row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0], best = row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t v = diag + (a[i - 1] != b[j - 1]);
            if (row[j - 1] + 1 < v) v = row[j - 1] + 1;
            if (up + 1 < v) v = up + 1;
            row[j] = v;
            diag = up;
            if (v < best) best = v;
        }
        if (best > limit) {
            free(row);
            return limit + 1;
        }
    }
    size_t d = row[lb];
    free(row);
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
