/* apigen_boxes.h: a copy of a large 3D region split into boxes of bounded
 * size, for a spec's hand-written guest code that moves a region of the
 * application's pitched host memory in several calls, so that memory stays
 * bounded on both sides and no message outgrows the transport's limit.
 *
 * The region is w units (of `unit` bytes each: bytes, or an array's
 * elements) x h rows x d slices. The boxes are whole slices while a slice
 * fits in max bytes, else bands of rows of one slice, else pieces of one
 * row; a unit is never split (a box holds at least one). Positions and
 * sizes are in the region's own terms (units, rows, slices): the caller
 * adds them to its starting positions and addresses each side with its own
 * pitches. A walk, not a callback, so the caller's loop keeps its own
 * variables and error type:
 *
 *     apigen_boxes it = apigen_boxes_of(w, unit, h, d, max);
 *     for (apigen_box b; !err && apigen_box_next(&it, &b);)
 *         err = copy(b.x, b.y, b.z, b.w, b.h, b.d, b.last);
 */
#ifndef APIGEN_BOXES_H
#define APIGEN_BOXES_H

#include <stdbool.h>
#include <stddef.h>

#if defined(APIGEN_GUEST_SO) && defined(__GNUC__) /* exported by libapigen-guest.so.2 */
#pragma GCC visibility push(default)
#endif

typedef struct {
    size_t x, y, z; /* where the box starts in the region: units, rows, slices */
    size_t w, h, d; /* its size in the same terms */
    bool last;      /* the region's last box (a pipelining caller waits for this one) */
} apigen_box;

typedef struct {
    size_t w, h, d;  /* the region */
    apigen_box size; /* a box's w, h, d (those at the region's far edges may be smaller) */
    size_t x, y, z;  /* where the next box starts */
    bool done;
} apigen_boxes;

/* The walk over the boxes of a region: at most max bytes each, or one unit
 * when a unit is larger (unit 0 counts as 1). A region with no byte (w, h
 * or d 0) is one box, the region itself, so that the API still answers
 * for it. Never overflows, whatever the sizes. */
apigen_boxes apigen_boxes_of(size_t w, size_t unit, size_t h, size_t d, size_t max);

/* The next box in order (x fastest, then rows, then slices) into *b;
 * false after the last one. */
bool apigen_box_next(apigen_boxes *it, apigen_box *b);

/* true when a region of w x h x d at (x, y, z) lies within a space of
 * W x H x D (in any one unit), as an API checks a copy's whole region
 * before its first box moves; a height or depth of 0 is one row or slice
 * (a 1D or 2D space). */
bool apigen_box_inside(size_t x, size_t y, size_t z, size_t w, size_t h, size_t d, size_t W,
                       size_t H, size_t D);

#if defined(APIGEN_GUEST_SO) && defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif
