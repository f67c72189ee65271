/* The boxes of a large 3D copy (apigen_boxes.h). Sizes are compared by
 * division (units per box, rows per box, slices per box), so no product
 * of the region's sizes is ever formed: no overflow, whatever the caller
 * passes. */
#include "apigen_boxes.h"

apigen_box apigen_box_size(size_t w, size_t unit, size_t h, size_t d, size_t max)
{
    apigen_box b = {0, 0, 0, w, h, d, true};
    if (!w || !h || !d) return b; /* no byte: the region as it is */
    size_t units = max / (unit ? unit : 1); /* units per box */
    if (!units) units = 1;
    if (w > units) { /* a row is larger than a box: pieces of a row */
        b.w = units, b.h = 1, b.d = 1;
    } else if (h > units / w) { /* a slice is larger: bands of rows */
        b.h = units / w, b.d = 1;
    } else { /* whole slices */
        size_t slices = units / w / h;
        if (slices < d) b.d = slices;
    }
    return b;
}

int apigen_boxes(size_t w, size_t unit, size_t h, size_t d, size_t max, apigen_box_fn fn,
                 void *user)
{
    apigen_box s = apigen_box_size(w, unit, h, d, max);
    if (!w || !h || !d) return fn(&s, user);
    apigen_box b;
    for (b.z = 0; b.z < d; b.z += b.d) { /* steps of the clipped size: never past SIZE_MAX */
        b.d = d - b.z < s.d ? d - b.z : s.d;
        for (b.y = 0; b.y < h; b.y += b.h) {
            b.h = h - b.y < s.h ? h - b.y : s.h;
            for (b.x = 0; b.x < w; b.x += b.w) {
                b.w = w - b.x < s.w ? w - b.x : s.w;
                b.last = b.x + b.w == w && b.y + b.h == h && b.z + b.d == d;
                int r = fn(&b, user);
                if (r) return r;
            }
        }
    }
    return 0;
}

bool apigen_box_inside(size_t x, size_t y, size_t z, size_t w, size_t h, size_t d, size_t W,
                       size_t H, size_t D)
{
    if (!H) H = 1;
    if (!D) D = 1;
    return x <= W && w <= W - x && y <= H && h <= H - y && z <= D && d <= D - z;
}
