/* Per-call scratch memory on the server: zeroed, overflow-checked, bounded
 * by the per-call budget (--max-arg / APIGEN_MAX_ARG), freed after the reply. */
#define _GNU_SOURCE
#include "rt_internal.h"

#include <stdlib.h>

typedef struct scr {
    struct scr *next;
    uint64_t size;
} scr; /* 16 bytes: what follows stays 16-byte aligned like malloc's */

_Static_assert(sizeof(scr) % 16 == 0, "scratch header keeps 16-byte alignment");

void apigen_reject(apigen_call_ctx *cx, apigen_status st, const char *what)
{
    if (cx->status == APIGEN_OK && st != APIGEN_OK) {
        cx->status = st;
        cx->reject_what = what;
    }
}

void apigen_result(apigen_call_ctx *cx, int64_t api_error)
{
    cx->has_result = true;
    cx->result_error = api_error;
}

void *apigen_scratch(apigen_call_ctx *cx, uint64_t count, uint64_t elem)
{
    uint64_t bytes, total;
    if (!apigen_mul_size(count, elem, &bytes) || bytes > cx->budget ||
        !apigen_add_size(bytes, sizeof(scr), &total) || total > SIZE_MAX) {
        apigen_reject(cx, APIGEN_TOO_LARGE, "scratch");
        return NULL;
    }
    scr *s = calloc(1, (size_t)total);
    if (!s) {
        apigen_reject(cx, APIGEN_NO_MEMORY, "scratch");
        return NULL;
    }
    s->size = bytes;
    s->next = cx->scratch;
    cx->scratch = s;
    cx->budget -= bytes;
    return s + 1;
}

void rt_scratch_free_all(apigen_call_ctx *cx)
{
    scr *s = cx->scratch;
    while (s) {
        scr *n = s->next;
        free(s);
        s = n;
    }
    cx->scratch = NULL;
}
