/* Host memory a graph reaches at every launch (guest side), shared by the
 * APIs whose copies can be captured into graphs (two stubs of one family
 * use it). Natively a copy between host memory and the device that
 * a stream capture records reads or writes the application's buffer at
 * every launch of the graph. Forwarded, the server reaches only the
 * shared-memory arena: arena memory is named by the server's address of
 * it; any other (pageable) memory gets a shadow block in the arena with the
 * same layout, which host functions of the API, enqueued around the copy
 * and so run at every launch, fill from and drain into the application's
 * rows (apigen_shadow_fill / apigen_shadow_drain). A shadow lives as long
 * as a graph may run it: it is never freed once the copy was captured. */
#include "apigen_rt.h"

#include <stdlib.h>
#include <string.h>

struct apigen_shadow {
    unsigned char *user, *shadow;
    size_t pitch, width, height, depth, slice; /* rows of width bytes, pitch apart; slices */
};

/* Bytes from the first row's first byte to the last row's end. */
static bool span_of(size_t pitch, size_t width, size_t height, size_t depth, size_t slice,
                    uint64_t *span)
{
    uint64_t a, b, rows;
    if (!height || !depth || width > pitch || !apigen_mul_size(pitch, height, &rows) ||
        (depth > 1 && slice < rows))
        return false; /* slices overlapping their rows: no layout a copy has */
    return apigen_mul_size(pitch, height - 1, &a) && apigen_mul_size(slice, depth - 1, &b) &&
           apigen_add_size(a, b, span) && apigen_add_size(*span, width, span) &&
           *span <= SIZE_MAX;
}

int apigen_graph_host(const apigen_api *api, void *user, size_t pitch, size_t width,
                      size_t height, size_t depth, size_t slice, apigen_graph_host_t *out)
{
    uint64_t span;
    memset(out, 0, sizeof *out);
    if (!span_of(pitch, width, height, depth, slice, &span)) return APIGEN_GRAPH_HOST_BAD;
    if (apigen_arena_owns(user) && (out->peer = apigen_arena_peer_addr(api, user, span))) {
        out->local = user;
        return APIGEN_GRAPH_HOST_OK;
    }
    apigen_shadow *c = malloc(sizeof *c);
    unsigned char *sh = c ? apigen_arena_alloc((size_t)span) : NULL;
    uint64_t peer = sh ? apigen_arena_peer_addr(api, sh, span) : 0;
    if (!peer) {
        if (sh) (void)apigen_arena_free(sh);
        free(c);
        return c ? APIGEN_GRAPH_HOST_NO_ARENA : APIGEN_GRAPH_HOST_NO_MEMORY;
    }
    *c = (apigen_shadow){user, sh, pitch, width, height, depth, slice};
    out->local = sh;
    out->peer = peer;
    out->shadow = c;
    return APIGEN_GRAPH_HOST_OK;
}

void apigen_shadow_fill(void *p)
{
    apigen_shadow *c = p;
    for (size_t z = 0; z < c->depth; z++)
        for (size_t y = 0; y < c->height; y++) {
            size_t at = z * c->slice + y * c->pitch;
            memcpy(c->shadow + at, c->user + at, c->width);
        }
}

void apigen_shadow_drain(void *p)
{
    apigen_shadow *c = p;
    for (size_t z = 0; z < c->depth; z++)
        for (size_t y = 0; y < c->height; y++) {
            size_t at = z * c->slice + y * c->pitch;
            memcpy(c->user + at, c->shadow + at, c->width);
        }
}

void apigen_shadow_drop(apigen_shadow *c)
{
    if (!c) return;
    (void)apigen_arena_free(c->shadow);
    free(c);
}
