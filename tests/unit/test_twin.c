/* runtime/twin.c: the application's own memory that a device allocation
 * stands for. A plain buffer is the "device"; io copies to and from it.
 * Checked: a push sends what the application changed (one span per block
 * while the device wrote nothing, only the changed runs while it may have,
 * so device writes are never undone); a sync brings back what the device
 * changed and keeps the application's own writes; staleness stays until a
 * sync of everything; the spans of many twins share io calls (64 each, 4
 * MiB at most); read-only ranges never come back; remove brings back
 * a stale range and hands back the allocation; io errors stop and return;
 * a pull's io finds in buf what the twins hold (io and pl_io move only the
 * pages that differ from it, runtime/pages.c: a wrong buf would write
 * wrong bytes into the ranges); apigen_twin_sync_pages gives io the
 * digests twin.c keeps (an unchanged twin: no page back; changed pages
 * merged as a pull's bytes are; the digests follow a push, so a page the
 * device sets back to what it held comes back; an answer that does not
 * match its spans writes nothing);
 * no range: nothing is called. apigen_twin_translate gives a kernel's
 * parameters the twin's address for 8-byte words inside a twin (or a range
 * make adds), leaves every other word; apigen_twin_forget_all drops every
 * twin without a call. apigen_twin_place puts blocks of 64 KiB or less in
 * slabs (one allocation mapped once, handed out by pages, cleared; a sync
 * reads a slab's stale blocks in one span; a freed page is taken again; the
 * last block's free releases the slab; after a device reset nothing is
 * released and new blocks take a new slab) and maps a larger block alone at
 * the first page boundary of the allocation its ops make (a page longer
 * when the first starts inside a page), cleared, as a twin whose remove
 * gives the allocation; an address this process holds gives NULL without an
 * error and releases the allocation (a small block is then placed alone);
 * an API error is returned; unplace unmaps. */
#define _GNU_SOURCE /* MAP_ANONYMOUS, MAP_FIXED_NOREPLACE */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "apigen_rt.h"
#include "check.h"

#define N ((size_t)(9u << 20) + 77) /* more than two of twin.c's 4 MiB blocks */

static unsigned char *dev_;   /* the "device" allocation */
static const uint64_t DEV = 0x7000000000ull;
static size_t to_dev_, from_dev_, calls_, spans_;
static int fail_with_;

/* A pull as an API that moves only the pages that differ makes it
 * (specs/cuda/managed.c, runtime/pages.c): buf holds on entry what the
 * twins hold, the "device" side (mem, at base) answers the pages whose
 * bytes differ from their digests. paged_bytes_: the pages' bytes moved. */
static size_t paged_bytes_;
static int pull_paged(const apigen_twin_span *span, unsigned n, unsigned char *buf,
                      const unsigned char *mem, uint64_t base)
{
    size_t len[APIGEN_TWIN_SPANS] = {0}, total = 0;
    for (unsigned i = 0; i < n; i++) {
        len[i] = span[i].len;
        total += len[i];
    }
    size_t pages = apigen_pages_count(len, n), map = (pages + 7) / 8;
    apigen_page_digest *known = malloc(pages * sizeof *known);
    unsigned char *reply = malloc(map + total), *b = reply + map;
    apigen_pages_digest(buf, len, n, known);
    for (unsigned i = 0; i < n; b += len[i], i++) memcpy(b, mem + (span[i].dev - base), len[i]);
    size_t used = apigen_pages_pack(reply, NULL, len, n, known);
    paged_bytes_ += used - map;
    int r = apigen_pages_unpack(buf, len, n, reply, used);
    free(known);
    free(reply);
    return r ? 96 : 0;
}

/* the spans' bytes back to back in buf, as twin.c promises; pulls move
 * only the pages that differ from what buf holds on entry */
static int io(const apigen_twin_span *span, unsigned n, void *buf, bool to_device, void *user)
{
    (void)user;
    calls_++;
    spans_ += n;
    if (fail_with_) return fail_with_;
    if (!n || n > APIGEN_TWIN_SPANS) return 98;
    unsigned char *b = buf;
    size_t total = 0;
    for (unsigned i = 0; i < n; i++) {
        uint64_t dev = span[i].dev;
        size_t len = span[i].len;
        if (dev < DEV || dev + len > DEV + N) return 99;
        if (to_device) memcpy(dev_ + (dev - DEV), b, len), to_dev_ += len;
        else from_dev_ += len;
        b += len;
        total += len;
    }
    if (total > ((size_t)4 << 20)) return 97;
    return to_device ? 0 : pull_paged(span, n, buf, dev_, DEV);
}

/* apigen_twin_make: adds the twin of [mk_base, mk_base + 4096) when asked
 * about an address in it */
static unsigned char *mk_base;
static int made_, make_calls_;
static int make(uint64_t addr, void *user)
{
    (void)user;
    make_calls_++;
    if (addr < (uintptr_t)mk_base || addr >= (uintptr_t)mk_base + 4096) return 0;
    made_++;
    return apigen_twin_add(mk_base, 4096, DEV + (2u << 20), false);
}

static int make_fails(uint64_t addr, void *user)
{
    (void)addr, (void)user;
    return 7;
}

static int all(const unsigned char *p, size_t n, unsigned char v)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != v) return 0;
    return 1;
}

/* place's ops: "device" addresses handed out from pl_next (a region this
 * process reserved and gave back, so nothing is mapped there); pl_mem is
 * that region's "device" memory for pl_io */
#define PL_REGION ((size_t)32 << 20)
static uint64_t pl_next, pl_base, pl_released, pl_cleared;
static size_t pl_allocs, pl_clear_len, pl_calls, pl_spans;
static int pl_fail;
static unsigned char *pl_mem;
static int pl_alloc(size_t len, uint64_t *dev, void *user)
{
    (void)user;
    if (pl_fail) return pl_fail;
    *dev = pl_next;
    pl_next += len + 4096;
    pl_allocs++;
    return 0;
}
static int pl_clear(uint64_t dev, size_t len, void *user)
{
    (void)user;
    pl_cleared = dev, pl_clear_len = len;
    if (dev >= pl_base && dev + len <= pl_base + PL_REGION) memset(pl_mem + (dev - pl_base), 0, len);
    return 0;
}
static void pl_release(uint64_t dev, void *user)
{
    (void)user;
    pl_released = dev;
}
static int pl_io(const apigen_twin_span *span, unsigned n, void *buf, bool to_device, void *user)
{
    (void)user;
    pl_calls++;
    pl_spans += n;
    unsigned char *b = buf;
    for (unsigned i = 0; i < n; b += span[i].len, i++) {
        if (span[i].dev < pl_base || span[i].dev + span[i].len > pl_base + PL_REGION) return 99;
        if (to_device) memcpy(pl_mem + (span[i].dev - pl_base), b, span[i].len);
    }
    return to_device ? 0 : pull_paged(span, n, buf, pl_mem, pl_base);
}

static void test_place(void)
{
    static const apigen_twin_alloc ops = {pl_alloc, pl_clear, pl_release};
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    const size_t big = (size_t)100 << 10; /* above the slabs' 64 KiB: placed alone */
    pl_mem = calloc(1, PL_REGION); /* first: its pages must not take the region's place */
    unsigned char *region = mmap(NULL, PL_REGION, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(region != MAP_FAILED && pl_mem);
    if (region == MAP_FAILED || !pl_mem) return;
    munmap(region, PL_REGION);
    pl_base = (uintptr_t)region;
    int err = -5;
    uint64_t d = 0;

    /* small blocks share a slab: one allocation, blocks by pages, each
     * cleared and a twin at its own address */
    pl_next = (uintptr_t)region;
    unsigned char *p = apigen_twin_place(100, &ops, NULL, &err);
    CHECK(p == region && err == 0 && pl_allocs == 1 && pl_cleared == (uintptr_t)region && pl_clear_len == pg);
    unsigned char *q = apigen_twin_place(pg + 1, &ops, NULL, &err);
    CHECK(q == region + pg && err == 0 && pl_allocs == 1 && pl_clear_len == 2 * pg);
    CHECK(apigen_twin_device(q + 10, &d, NULL) && d == (uintptr_t)q + 10);
    /* both stale: one read brings both back (the slab's reads merged) */
    apigen_twin_wrote(0, 0);
    pl_mem[5] = 7, pl_mem[pg + 9] = 8;
    pl_calls = pl_spans = 0;
    CHECK(apigen_twin_sync(true, pl_io, NULL) == 0 && pl_calls == 1 && pl_spans == 1);
    CHECK(p[5] == 7 && q[9] == 8);
    /* and the host's writes go out */
    p[1] = 3, q[pg] = 4;
    CHECK(apigen_twin_push(pl_io, NULL) == 0 && pl_mem[1] == 3 && pl_mem[2 * pg] == 4);
    /* freed: no allocation to free per block; a freed page is taken again,
     * zero on both sides */
    CHECK(apigen_twin_remove(p, &d, pl_io, NULL) == 0 && d == 0);
    CHECK(apigen_twin_unplace(p) && !apigen_twin_unplace(p));
    CHECK(pl_released == 0);
    unsigned char *r = apigen_twin_place(50, &ops, NULL, &err);
    CHECK(r == region && err == 0 && pl_allocs == 1 && r[1] == 0 && pl_mem[1] == 0);
    /* the slab's last block freed: the slab goes */
    CHECK(apigen_twin_remove(r, &d, pl_io, NULL) == 0 && apigen_twin_unplace(r));
    CHECK(apigen_twin_remove(q, &d, pl_io, NULL) == 0 && apigen_twin_unplace(q));
    CHECK(pl_released == (uintptr_t)region && apigen_twin_live() == 0);

    /* a large block on a page boundary: alone, its allocation given by remove */
    pl_next = (uintptr_t)region, pl_allocs = 0;
    p = apigen_twin_place(big, &ops, NULL, &err);
    CHECK(p == region && err == 0 && pl_allocs == 1 && pl_cleared == (uintptr_t)region && pl_clear_len == big);
    CHECK(apigen_twin_device(p + 10, &d, NULL) && d == (uintptr_t)p + 10);
    p[99] = 3; /* its pages are the program's */
    CHECK(apigen_twin_remove(p, &d, pl_io, NULL) == 0 && d == (uintptr_t)region);
    CHECK(apigen_twin_unplace(p) && !apigen_twin_unplace(p));
    /* inside a page: released, and one a page longer holds the block */
    pl_next = (uintptr_t)region + 8 * pg + 256, pl_allocs = 0;
    p = apigen_twin_place(big + 1, &ops, NULL, &err);
    CHECK(pl_allocs == 2 && pl_released == (uintptr_t)region + 8 * pg + 256);
    uint64_t len = (big + 1 + pg - 1) / pg * pg;
    uint64_t second = (uintptr_t)region + 8 * pg + 256 + len + 4096;
    CHECK(p && err == 0 && (uintptr_t)p == (second + pg - 1) / pg * pg);
    CHECK(apigen_twin_remove(p, &d, pl_io, NULL) == 0 && d == second);
    CHECK(apigen_twin_unplace(p));
    /* an address this process holds (a page inside the region): no block,
     * no error, released */
    unsigned char *taken = mmap(region + (16u << 20), pg, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    CHECK(taken == region + (16u << 20));
    pl_next = (uintptr_t)taken, pl_released = 0;
    CHECK(apigen_twin_place(big, &ops, NULL, &err) == NULL && err == 0 && pl_released == (uintptr_t)taken);
    /* a small block whose slab cannot be mapped there: placed alone, at the
     * next allocation (past the slab's 2 MiB and a page) */
    pl_next = (uintptr_t)taken, pl_released = 0, pl_allocs = 0;
    p = apigen_twin_place(10, &ops, NULL, &err);
    CHECK(pl_allocs == 2 && pl_released == (uintptr_t)taken && err == 0);
    CHECK(p == taken + (2u << 20) + pg + 4096);
    CHECK(apigen_twin_remove(p, &d, pl_io, NULL) == 0 && d == (uintptr_t)p && apigen_twin_unplace(p));
    munmap(taken, pg);
    /* the API's error */
    pl_fail = 12;
    CHECK(apigen_twin_place(10, &ops, NULL, &err) == NULL && err == 12);
    CHECK(apigen_twin_place(big, &ops, NULL, &err) == NULL && err == 12);
    pl_fail = 0;
    CHECK(apigen_twin_live() == 0);
    /* a device reset: the slab's allocation is gone; its block's free
     * releases nothing and the next block takes a new slab */
    pl_next = (uintptr_t)region + (8u << 20), pl_allocs = 0, pl_released = 0;
    p = apigen_twin_place(10, &ops, NULL, &err);
    CHECK(p == region + (8u << 20) && pl_allocs == 1);
    apigen_twin_forget_all();
    q = apigen_twin_place(10, &ops, NULL, &err);
    CHECK(q && q != p + pg && pl_allocs == 2);
    CHECK(apigen_twin_unplace(p) && pl_released == 0);
    CHECK(apigen_twin_remove(q, &d, pl_io, NULL) == 0 && apigen_twin_unplace(q) && pl_released != 0);
    CHECK(apigen_twin_live() == 0);
    free(pl_mem);
}

static unsigned char *pg_dev_; /* test_sync_pages' "device" allocation */
static const uint64_t PG_DEV = 0x6000000000ull;

/* pushes (and a remove's pull) of test_sync_pages' twin: plain copies */
static int pages_push_io(const apigen_twin_span *span, unsigned n, void *buf, bool to_device,
                         void *user)
{
    (void)user;
    unsigned char *b = buf;
    for (unsigned i = 0; i < n; b += span[i].len, i++) {
        unsigned char *d = pg_dev_ + (span[i].dev - PG_DEV);
        if (to_device) memcpy(d, b, span[i].len);
        else memcpy(b, d, span[i].len);
    }
    return 0;
}

/* apigen_twin_sync_pages: io answers from the digests twin.c keeps, as
 * specs/cuda/managed.c's (the server packs the device's pages,
 * apigen_pages_pack); pg_bad_ flips the answer's first bit. */
static size_t pg_size_, pg_back_, pg_calls_;
static int pg_bad_;
static int pages_io(const apigen_twin_span *span, unsigned n, const apigen_page_digest *known,
                    void *reply, size_t cap, size_t *used, void *user)
{
    (void)user;
    pg_calls_++;
    if (fail_with_) return fail_with_;
    size_t len[APIGEN_TWIN_SPANS] = {0}, total = 0;
    for (unsigned i = 0; i < n; i++) {
        if (span[i].dev < PG_DEV || span[i].dev + span[i].len > PG_DEV + pg_size_) return 99;
        len[i] = span[i].len;
        total += len[i];
    }
    size_t map = (apigen_pages_count(len, n) + 7) / 8;
    if (cap < map + total || total > ((size_t)4 << 20)) return 98;
    unsigned char *now = malloc(total), *b = now;
    for (unsigned i = 0; i < n; b += len[i], i++) memcpy(b, pg_dev_ + (span[i].dev - PG_DEV), len[i]);
    *used = apigen_pages_pack(reply, now, len, n, known);
    pg_back_ += (*used - map) / APIGEN_PAGE;
    if (pg_bad_) ((unsigned char *)reply)[0] ^= 1;
    free(now);
    return 0;
}

static void test_sync_pages(void)
{
    pg_size_ = (9u << 20) + 4096 * 3; /* three blocks, the last one short */
    unsigned char *host = malloc(pg_size_);
    pg_dev_ = malloc(pg_size_);
    for (size_t i = 0; i < pg_size_; i++) host[i] = (unsigned char)(i * 7 + 1);
    memcpy(pg_dev_, host, pg_size_);
    CHECK(apigen_twin_add(host, pg_size_, PG_DEV, false) == 0);
    /* stale, nothing changed: no page comes back (one io call per block) */
    apigen_twin_wrote(0, 0);
    CHECK(apigen_twin_sync_pages(true, pages_io, NULL) == 0 && pg_back_ == 0 && pg_calls_ == 3);
    /* the device writes two pages of two blocks; the host writes a third
     * page meanwhile, and a byte of one of the device's pages: both stay */
    apigen_twin_wrote(0, 0);
    memset(pg_dev_ + 100, 0xa1, 20);
    memset(pg_dev_ + (8u << 20) + 4096 * 2 + 7, 0xa2, 9);
    host[50000] = 0x11;
    host[4000] = 0x12;
    pg_back_ = pg_calls_ = 0;
    CHECK(apigen_twin_sync_pages(false, pages_io, NULL) == 0 && pg_back_ == 2 && pg_calls_ == 3);
    CHECK(all(host + 100, 20, 0xa1) && all(host + (8u << 20) + 4096 * 2 + 7, 9, 0xa2));
    CHECK(host[50000] == 0x11 && host[4000] == 0x12);
    /* still stale (a queue's sync): the same pages are not sent again */
    pg_back_ = 0;
    CHECK(apigen_twin_sync_pages(true, pages_io, NULL) == 0 && pg_back_ == 0);
    /* the digests follow a push: the host's page goes out (Y over X), the
     * device writes X back; the page must come back as X (a digest left at
     * X's would take it as unchanged) */
    unsigned char x[64];
    memcpy(x, host + (4u << 20) + 64, sizeof x);
    memset(host + (4u << 20) + 64, 0x5e, sizeof x);
    CHECK(apigen_twin_push(pages_push_io, NULL) == 0 && all(pg_dev_ + (4u << 20) + 64, 64, 0x5e));
    memcpy(pg_dev_ + (4u << 20) + 64, x, sizeof x);
    apigen_twin_wrote(0, 0);
    pg_back_ = 0;
    CHECK(apigen_twin_sync_pages(true, pages_io, NULL) == 0 && pg_back_ == 1);
    CHECK(!memcmp(host + (4u << 20) + 64, x, sizeof x) && !memcmp(host, pg_dev_, pg_size_));
    /* an answer that does not match its spans: refused, nothing written */
    apigen_twin_wrote(0, 0);
    memset(pg_dev_ + 8192, 0x77, 16);
    pg_bad_ = 1;
    CHECK(apigen_twin_sync_pages(true, pages_io, NULL) == APIGEN_TWIN_BAD_REPLY);
    CHECK(host[8192] != 0x77);
    pg_bad_ = 0;
    /* an io error is returned; the next sync brings the page */
    fail_with_ = 41;
    CHECK(apigen_twin_sync_pages(true, pages_io, NULL) == 41);
    fail_with_ = 0;
    CHECK(apigen_twin_sync_pages(true, pages_io, NULL) == 0 && all(host + 8192, 16, 0x77));
    CHECK(!memcmp(host, pg_dev_, pg_size_));
    uint64_t gone = 0;
    CHECK(apigen_twin_remove(host, &gone, pages_push_io, NULL) == 0 && gone == PG_DEV);
    free(host);
    free(pg_dev_);
}

int main(void)
{
    test_place();
    test_sync_pages();
    unsigned char *host = malloc(N), *ro = malloc(4096);
    dev_ = malloc(N);
    for (size_t i = 0; i < N; i++) host[i] = (unsigned char)(i * 13);
    memcpy(dev_, host, N);

    /* nothing registered: no call */
    CHECK(apigen_twin_live() == 0);
    CHECK(apigen_twin_push(io, NULL) == 0 && apigen_twin_sync(true, io, NULL) == 0 && calls_ == 0);
    CHECK(apigen_twin_add(NULL, 1, DEV, false) == EINVAL);
    CHECK(apigen_twin_add(host, N, DEV, false) == 0);
    CHECK(apigen_twin_live() == 1);
    uint64_t d = 0;
    size_t left = 0;
    CHECK(apigen_twin_device(host + 1000, &d, &left) && d == DEV + 1000 && left == N - 1000);
    CHECK(!apigen_twin_device(host + N, &d, NULL));

    /* unchanged: nothing moves */
    CHECK(apigen_twin_push(io, NULL) == 0 && calls_ == 0);
    /* host changes two bytes of one block: one span (not stale) */
    host[10] = 1, host[5000] = 2;
    CHECK(apigen_twin_push(io, NULL) == 0);
    CHECK(calls_ == 1 && to_dev_ == 4991 && dev_[10] == 1 && dev_[5000] == 2);

    /* the device writes A; the host writes B meanwhile; the next push must
     * send only B (runs), never the twin's old A */
    apigen_twin_wrote(DEV + 100, 50);
    memset(dev_ + 100, 0xaa, 50);
    memset(host + 300, 0xbb, 10);
    host[7000] = 0xcc;
    calls_ = spans_ = to_dev_ = 0;
    CHECK(apigen_twin_push(io, NULL) == 0);
    CHECK(calls_ == 1 && spans_ == 2 && to_dev_ == 11);
    CHECK(all(dev_ + 100, 50, 0xaa) && all(dev_ + 300, 10, 0xbb) && dev_[7000] == 0xcc);
    /* a sync of one queue brings A back, keeps the host's later write C */
    host[9000] = 0xdd;
    CHECK(apigen_twin_sync(false, io, NULL) == 0);
    CHECK(all(host + 100, 50, 0xaa) && host[9000] == 0xdd && all(host + 300, 10, 0xbb));
    /* still stale: the device writes E in the third block, a later sync sees
     * it (three blocks: two full 4 MiB calls, then the last) */
    memset(dev_ + (8u << 20) + 5, 0xee, 3);
    from_dev_ = calls_ = paged_bytes_ = 0;
    CHECK(apigen_twin_sync(true, io, NULL) == 0 && from_dev_ == N && calls_ == 3);
    CHECK(all(host + (8u << 20) + 5, 3, 0xee));
    CHECK(paged_bytes_ == APIGEN_PAGE); /* E's page alone came back */
    /* synchronized everything: no longer stale, nothing comes back */
    from_dev_ = 0;
    CHECK(apigen_twin_sync(true, io, NULL) == 0 && from_dev_ == 0);
    /* the host's C goes at the next push (not stale: one span) */
    calls_ = 0;
    CHECK(apigen_twin_push(io, NULL) == 0 && calls_ == 1 && dev_[9000] == 0xdd);
    CHECK(!memcmp(host, dev_, N));

    /* a write outside every allocation marks nothing */
    apigen_twin_wrote(DEV + N + 10, 4);
    from_dev_ = 0;
    CHECK(apigen_twin_sync(true, io, NULL) == 0 && from_dev_ == 0);

    /* an io error stops and comes back */
    apigen_twin_wrote(0, 0);
    fail_with_ = 42;
    CHECK(apigen_twin_sync(true, io, NULL) == 42);
    host[1] ^= 1;
    CHECK(apigen_twin_push(io, NULL) == 42);
    fail_with_ = 0;
    CHECK(apigen_twin_push(io, NULL) == 0 && dev_[1] == host[1]);

    /* a read-only range is never read back */
    memset(ro, 7, 4096);
    CHECK(apigen_twin_add(ro, 4096, DEV + (1u << 20), true) == 0);
    apigen_twin_wrote(0, 0);
    memset(dev_ + (1u << 20), 9, 4096);
    CHECK(apigen_twin_sync(true, io, NULL) == 0);
    CHECK(all(ro, 4096, 7));
    uint64_t freed = 0;
    CHECK(apigen_twin_remove(ro, &freed, io, NULL) == 0 && freed == DEV + (1u << 20));

    /* remove: a stale range comes back first */
    apigen_twin_wrote(DEV + 20, 1);
    dev_[20] = 0x55;
    CHECK(apigen_twin_remove(host, &freed, io, NULL) == 0 && freed == DEV && host[20] == 0x55);
    CHECK(apigen_twin_live() == 0);
    CHECK(apigen_twin_remove(host, &freed, io, NULL) == 0 && freed == 0);

    /* many small twins, all stale: their spans share io calls (64 each),
     * each comes back, each host change goes out in the same few calls */
    enum { MANY = 70 };
    unsigned char *small[MANY];
    for (int i = 0; i < MANY; i++) {
        small[i] = malloc(64);
        memset(small[i], 0, 64);
        memset(dev_ + (4u << 20) + 4096 * i, 0, 64);
        CHECK(apigen_twin_add(small[i], 64, DEV + (4u << 20) + 4096 * i, false) == 0);
    }
    apigen_twin_wrote(0, 0);
    for (int i = 0; i < MANY; i++) dev_[(4u << 20) + 4096 * i + (i % 64)] = (unsigned char)(i + 1);
    calls_ = spans_ = 0;
    CHECK(apigen_twin_sync(true, io, NULL) == 0 && calls_ == 2 && spans_ == MANY);
    int back = 0;
    for (int i = 0; i < MANY; i++) back += small[i][i % 64] == (unsigned char)(i + 1);
    CHECK(back == MANY);
    for (int i = 0; i < MANY; i++) small[i][63 - i % 64] ^= 0x5a;
    calls_ = spans_ = 0;
    CHECK(apigen_twin_push(io, NULL) == 0 && calls_ == 2 && spans_ == MANY);
    int out = 0;
    for (int i = 0; i < MANY; i++) out += !memcmp(small[i], dev_ + (4u << 20) + 4096 * i, 64);
    CHECK(out == MANY);
    for (int i = 0; i < MANY; i++) {
        uint64_t gone = 0;
        CHECK(apigen_twin_remove(small[i], &gone, io, NULL) == 0 && gone == DEV + (4u << 20) + 4096 * i);
        free(small[i]);
    }

    /* a kernel's packed parameters: a pointer into a twin, one into a range
     * make turns into a twin (made once), one inside a struct at an 8-byte
     * offset, and words that are no such pointer (small values, a device
     * address, 4-byte parameters) */
    unsigned char *pinned = malloc(8192);
    mk_base = ro;
    CHECK(apigen_twin_add(pinned, 8192, DEV, false) == 0);
    struct {
        uint64_t a;       /* into the twin */
        int32_t n, m;     /* two ints: one word, no pointer */
        uint64_t small;   /* below any memory */
        uint64_t dev;     /* a device address the API knows */
        uint64_t b, c;    /* into make's range, twice */
    } prm = {(uintptr_t)pinned + 100, 7, 9, 42, 0x300000001000ull, (uintptr_t)ro + 8, (uintptr_t)ro + 4000};
    CHECK(apigen_twin_translate(&prm, sizeof prm, make, NULL) == 0);
    CHECK(prm.a == DEV + 100 && prm.n == 7 && prm.m == 9 && prm.small == 42 &&
          prm.dev == 0x300000001000ull);
    CHECK(prm.b == DEV + (2u << 20) + 8 && prm.c == DEV + (2u << 20) + 4000 && made_ == 1);
    CHECK(apigen_twin_live() == 2);
    /* make's error stops the translation and is returned, the word kept */
    uint64_t w[2] = {0x123456789ull, (uintptr_t)pinned};
    CHECK(apigen_twin_translate(w, sizeof w, make_fails, NULL) == 7 && w[0] == 0x123456789ull);
    /* a device reset: every twin dropped, nothing moved */
    calls_ = 0;
    apigen_twin_wrote(0, 0);
    apigen_twin_forget_all();
    CHECK(apigen_twin_live() == 0 && calls_ == 0);
    CHECK(apigen_twin_sync(true, io, NULL) == 0 && calls_ == 0);
    uint64_t again = (uintptr_t)pinned;
    mk_base = NULL;
    CHECK(apigen_twin_translate(&again, sizeof again, make, NULL) == 0 && again == (uintptr_t)pinned);
    free(pinned);
    free(host);
    free(ro);
    free(dev_);
    return check_failures ? 1 : 0;
}
