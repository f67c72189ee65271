/* The boxes of a large 3D copy (apigen_boxes.h). Sizes are compared by
 * division (units per box, rows per box, slices per box), so no product
 * of the region's sizes is ever formed, and a walk steps by the clipped
 * size, so no position passes the region's end: no overflow, whatever the
 * caller passes. */
#include "apigen_boxes.h"

apigen_boxes apigen_boxes_of(size_t w, size_t unit, size_t h, size_t d, size_t max)
{
    apigen_boxes it = {w, h, d, {0, 0, 0, w, h, d, false}, 0, 0, 0, false};
    if (!w || !h || !d) return it; /* no byte: the region as it is */
    size_t units = max / (unit ? unit : 1); /* units per box */
    if (!units) units = 1;
    if (w > units) { /* a row is larger than a box: pieces of a row */
        it.size.w = units, it.size.h = 1, it.size.d = 1;
    } else if (h > units / w) { /* a slice is larger: bands of rows */
        it.size.h = units / w, it.size.d = 1;
    } else { /* whole slices */
        size_t slices = units / w / h;
        if (slices < d) it.size.d = slices;
    }
    return it;
}

bool apigen_box_next(apigen_boxes *it, apigen_box *b)
{
    if (it->done) return false;
    b->x = it->x, b->y = it->y, b->z = it->z;
    b->w = it->w - b->x < it->size.w ? it->w - b->x : it->size.w;
    b->h = it->h - b->y < it->size.h ? it->h - b->y : it->size.h;
    b->d = it->d - b->z < it->size.d ? it->d - b->z : it->size.d;
    b->last = b->x + b->w == it->w && b->y + b->h == it->h && b->z + b->d == it->d;
    it->done = b->last;
    if ((it->x += b->w) == it->w) {
        it->x = 0;
        if ((it->y += b->h) == it->h) {
            it->y = 0;
            it->z += b->d;
        }
    }
    return true;
}

bool apigen_box_inside(size_t x, size_t y, size_t z, size_t w, size_t h, size_t d, size_t W,
                       size_t H, size_t D)
{
    if (!H) H = 1;
    if (!D) D = 1;
    return x <= W && w <= W - x && y <= H && h <= H - y && z <= D && d <= D - z;
}
