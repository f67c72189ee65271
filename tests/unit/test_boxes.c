/* apigen_boxes (runtime/copy_boxes.c): the boxes of a region tile it
 * exactly once, in order, none larger than the limit (or one unit), with
 * the last one marked; a copy between two pitched 3D buffers through a
 * bounded staging buffer, box by box as the stubs do it, lands every byte
 * and nothing else; edge cases: a region of no byte, a region of exactly
 * the limit, a row larger than the limit, a unit larger than the limit,
 * sizes near SIZE_MAX; the walk stays at its end. */
#include <stdint.h>
#include <stdlib.h>

#include "apigen_boxes.h"
#include "check.h"

#define MAXBOXES 4096
#define WALK_MAX 100000 /* more: a walk that never ends */

typedef struct {
    apigen_box b[MAXBOXES];
    size_t n;
} rec;

/* The boxes of a region into r (the first MAXBOXES of them); their count. */
static size_t walk(rec *r, size_t w, size_t unit, size_t h, size_t d, size_t max)
{
    apigen_boxes it = apigen_boxes_of(w, unit, h, d, max);
    apigen_box b;
    r->n = 0;
    while (r->n < WALK_MAX && apigen_box_next(&it, &b)) {
        if (r->n < MAXBOXES) r->b[r->n] = b;
        r->n++;
    }
    CHECK(r->n < WALK_MAX);           /* a walk that ends */
    CHECK(!apigen_box_next(&it, &b)); /* and stays at the end */
    return r->n;
}

/* Every element of a small region covered once, boxes in order (x fastest),
 * at most max bytes (one unit when a unit is larger), the right shape
 * (several slices only whole, several rows only whole), last only on the
 * last one, and the walk's size the first box's size. */
static void tiles(size_t w, size_t unit, size_t h, size_t d, size_t max)
{
    static rec r;
    static unsigned char seen[4096];
    CHECK(w * h * d <= sizeof seen);
    size_t n = walk(&r, w, unit, h, d, max);
    CHECK(n >= 1 && n <= MAXBOXES);
    memset(seen, 0, sizeof seen);
    size_t limit = max / (unit ? unit : 1) ? max : (unit ? unit : 1);
    apigen_box s = apigen_boxes_of(w, unit, h, d, max).size;
    CHECK(n && s.w == r.b[0].w && s.h == r.b[0].h && s.d == r.b[0].d);
    int bad = 0;
    for (size_t i = 0; i < n && i < MAXBOXES; i++) {
        const apigen_box *b = &r.b[i];
        bad |= !b->w || !b->h || !b->d;
        bad |= b->w * b->h * b->d * (unit ? unit : 1) > limit;
        bad |= b->d > 1 && (b->h != h || b->w != w);
        bad |= b->h > 1 && b->w != w;
        bad |= b->last != (i == n - 1);
        if (i) { /* after the one before in x, then y, then z order */
            const apigen_box *p = &r.b[i - 1];
            bad |=
                !(b->z > p->z || (b->z == p->z && (b->y > p->y || (b->y == p->y && b->x > p->x))));
        }
        for (size_t z = b->z; z < b->z + b->d; z++)
            for (size_t y = b->y; y < b->y + b->h; y++)
                for (size_t x = b->x; x < b->x + b->w; x++)
                    if (x < w && y < h && z < d)
                        seen[(z * h + y) * w + x]++;
                    else
                        bad = 1;
    }
    for (size_t i = 0; i < w * h * d; i++)
        bad |= seen[i] != 1;
    if (bad)
        fprintf(stderr, "tiles(w=%zu unit=%zu h=%zu d=%zu max=%zu): wrong boxes\n", w, unit, h, d,
                max);
    CHECK(!bad);
}

/* A region of no byte: one box, the region itself. */
static void zero_size(void)
{
    static rec r;
    size_t sizes[][3] = {{0, 5, 3}, {7, 0, 3}, {7, 5, 0}, {0, 0, 0}};
    for (size_t i = 0; i < 4; i++) {
        CHECK(walk(&r, sizes[i][0], 4, sizes[i][1], sizes[i][2], 16) == 1);
        CHECK(r.b[0].x == 0 && r.b[0].y == 0 && r.b[0].z == 0 && r.b[0].last);
        CHECK(r.b[0].w == sizes[i][0] && r.b[0].h == sizes[i][1] && r.b[0].d == sizes[i][2]);
    }
}

static void exact_limits(void)
{
    static rec r;
    /* the region is exactly the limit: one box */
    CHECK(walk(&r, 8, 4, 4, 2, 256) == 1);
    CHECK(r.b[0].w == 8 && r.b[0].h == 4 && r.b[0].d == 2 && r.b[0].last);
    /* a slice is exactly the limit: one slice a box */
    CHECK(walk(&r, 8, 4, 4, 3, 128) == 3);
    CHECK(r.b[2].z == 2 && r.b[2].d == 1 && r.b[2].h == 4 && r.b[2].w == 8 && r.b[2].last);
    /* a row is exactly the limit: one row a box */
    CHECK(walk(&r, 32, 4, 3, 1, 128) == 3);
    CHECK(r.b[1].y == 1 && r.b[1].h == 1 && r.b[1].w == 32);
    /* one byte over: bands / pieces */
    CHECK(walk(&r, 8, 4, 4, 2, 255) == 2);  /* whole slices, one each */
    CHECK(walk(&r, 32, 4, 3, 1, 127) == 6); /* a row in pieces of 31 and 1 units */
    CHECK(r.b[0].w == 31 && r.b[1].x == 31 && r.b[1].w == 1 && r.b[5].y == 2 && r.b[5].last);
}

/* One row larger than the limit: pieces of a row (a unit never split). */
static void long_rows(void)
{
    static rec r;
    CHECK(walk(&r, 10, 3, 2, 2, 9) == 16); /* 3 units a piece: 3+3+3+1 per row */
    CHECK(r.b[3].x == 9 && r.b[3].w == 1 && r.b[4].y == 1 && r.b[4].x == 0);
    CHECK(walk(&r, 3, 32, 2, 1, 16) == 6); /* a unit larger than the limit: one a box */
    CHECK(r.b[0].w == 1 && r.b[5].x == 2 && r.b[5].y == 1 && r.b[5].last);
    CHECK(walk(&r, 3, 1, 2, 1, 0) == 6); /* a limit of 0: one unit a box */
}

/* Sizes whose products overflow: no overflow, and a walk that ends. */
static void huge(void)
{
    static rec r;
    apigen_box s = apigen_boxes_of(SIZE_MAX, 16, SIZE_MAX, SIZE_MAX, (size_t)4 << 20).size;
    CHECK(s.w == ((size_t)4 << 20) / 16 && s.h == 1 && s.d == 1);
    s = apigen_boxes_of(2, 1, SIZE_MAX, SIZE_MAX, 64).size;
    CHECK(s.w == 2 && s.h == 32 && s.d == 1);
    s = apigen_boxes_of(2, 1, 2, SIZE_MAX, SIZE_MAX).size;
    CHECK(s.w == 2 && s.h == 2 && s.d == SIZE_MAX / 4);
    /* the last piece ends at SIZE_MAX: two boxes, no wrap-around */
    size_t half = SIZE_MAX / 2 + 1;
    CHECK(walk(&r, SIZE_MAX, 1, 1, 1, half) == 2);
    CHECK(r.b[0].w == half && r.b[1].x == half && r.b[1].w == SIZE_MAX - half && r.b[1].last);
}

/* A copy of a w x h x d region (units of `unit` bytes) from (sx, sy, sz) of a
 * pitched source to (dx, dy, dz) of a pitched destination, each box packed
 * into a staging buffer of its size and spread again, as the stubs move
 * boxes through messages. */
typedef struct {
    const unsigned char *src;
    unsigned char *dst, *stage;
    size_t unit, max;
    size_t spitch, srows, sx, sy, sz; /* srows: rows of a slice */
    size_t dpitch, drows, dx, dy, dz;
    size_t boxes;
    int bad;
} pitched;

static void copy_box(pitched *p, const apigen_box *b)
{
    size_t row = b->w * p->unit;
    if (row * b->h * b->d > (p->max >= p->unit ? p->max : p->unit))
        p->bad = 1;
    for (size_t z = 0; z < b->d; z++)
        for (size_t y = 0; y < b->h; y++)
            memcpy(p->stage + (z * b->h + y) * row,
                   p->src + ((p->sz + b->z + z) * p->srows + p->sy + b->y + y) * p->spitch +
                       (p->sx + b->x) * p->unit,
                   row);
    for (size_t z = 0; z < b->d; z++)
        for (size_t y = 0; y < b->h; y++)
            memcpy(p->dst + ((p->dz + b->z + z) * p->drows + p->dy + b->y + y) * p->dpitch +
                       (p->dx + b->x) * p->unit,
                   p->stage + (z * b->h + y) * row, row);
    p->boxes++;
}

static void pitched_3d(size_t w, size_t unit, size_t h, size_t d, size_t max, size_t want_boxes)
{
    /* source: pitch 3 units wider, 2 more rows a slice, offset (2, 1, 1);
     * destination: pitch 5 units wider, 3 more rows, offset (1, 2, 0) */
    size_t spitch = (w + 3) * unit, srows = h + 2, sslices = d + 1;
    size_t dpitch = (w + 5) * unit, drows = h + 3, dslices = d;
    size_t ssize = spitch * srows * sslices, dsize = dpitch * drows * dslices;
    unsigned char *src = malloc(ssize), *dst = malloc(dsize), *want = malloc(dsize);
    apigen_boxes it = apigen_boxes_of(w, unit, h, d, max);
    unsigned char *stage = malloc(it.size.w * it.size.h * it.size.d * unit);
    CHECK(src && dst && want && stage);
    if (!src || !dst || !want || !stage)
        goto out;
    for (size_t i = 0; i < ssize; i++)
        src[i] = (unsigned char)(i * 131 + 7);
    memset(dst, 0xA5, dsize);
    memset(want, 0xA5, dsize);
    for (size_t z = 0; z < d; z++)
        for (size_t y = 0; y < h; y++)
            memcpy(want + (z * drows + 2 + y) * dpitch + 1 * unit,
                   src + ((1 + z) * srows + 1 + y) * spitch + 2 * unit, w * unit);
    pitched p = {src, dst, stage, unit, max, spitch, srows, 2, 1, 1, dpitch, drows, 1, 2, 0, 0, 0};
    for (apigen_box b; p.boxes < WALK_MAX && apigen_box_next(&it, &b);) copy_box(&p, &b);
    CHECK(!p.bad);
    CHECK(p.boxes == want_boxes);
    CHECK(!memcmp(dst, want, dsize));
    if (p.boxes != want_boxes || memcmp(dst, want, dsize))
        fprintf(stderr, "pitched_3d(w=%zu unit=%zu h=%zu d=%zu max=%zu): %zu boxes\n", w, unit, h,
                d, max, p.boxes);
out:
    free(src);
    free(dst);
    free(want);
    free(stage);
}

static void inside(void)
{
    CHECK(apigen_box_inside(0, 0, 0, 10, 4, 2, 10, 4, 2));
    CHECK(apigen_box_inside(3, 1, 1, 7, 3, 1, 10, 4, 2));
    CHECK(!apigen_box_inside(4, 0, 0, 7, 1, 1, 10, 4, 2));  /* one unit past the row */
    CHECK(!apigen_box_inside(0, 2, 0, 1, 3, 1, 10, 4, 2));  /* one row past */
    CHECK(!apigen_box_inside(0, 0, 2, 1, 1, 1, 10, 4, 2));  /* one slice past */
    CHECK(!apigen_box_inside(11, 0, 0, 0, 1, 1, 10, 4, 2)); /* starts past the end */
    CHECK(apigen_box_inside(10, 4, 2, 0, 0, 0, 10, 4, 2));  /* nothing, at the end */
    CHECK(apigen_box_inside(0, 0, 0, 10, 1, 1, 10, 0, 0));  /* 1D: height, depth 0 are 1 */
    CHECK(!apigen_box_inside(0, 0, 0, 10, 2, 1, 10, 0, 0));
    CHECK(!apigen_box_inside(SIZE_MAX, 0, 0, 2, 1, 1, SIZE_MAX, 1, 1)); /* no wrap-around */
    CHECK(!apigen_box_inside(1, 0, 0, SIZE_MAX, 1, 1, SIZE_MAX, 1, 1));
}

int main(void)
{
    zero_size();
    exact_limits();
    long_rows();
    huge();
    inside();
    /* small regions against many limits and units */
    size_t dims[] = {1, 2, 3, 5, 7};
    for (size_t a = 0; a < 5; a++)
        for (size_t b = 0; b < 5; b++)
            for (size_t c = 0; c < 5; c++)
                for (size_t unit = 1; unit <= 4; unit++)
                    for (size_t max = 0; max <= 120; max += 7)
                        tiles(dims[a], unit, dims[b], dims[c], max);
    /* pitched 3D copies: whole slices with a tail, bands of rows, pieces
     * of a row, a region of exactly the limit, 4 MiB boxes */
    pitched_3d(16, 4, 8, 9, 1024, 5);                 /* 2 slices a box: 2+2+2+2+1 */
    pitched_3d(16, 4, 8, 3, 200, 9);                  /* 3 rows a box: 3+3+2 per slice */
    pitched_3d(37, 2, 3, 2, 30, 18);                  /* pieces of 15+15+7 units */
    pitched_3d(16, 4, 8, 2, 1024, 1);                 /* exactly the limit */
    pitched_3d(1000, 16, 300, 3, (size_t)4 << 20, 6); /* a 4.6 MiB slice: bands of 262 + 38 rows */
    CHECK_DONE();
}
