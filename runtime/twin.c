/* Twins (apigen_rt.h, "Twins"): ranges of the application's own memory
 * (stack, heap: memory the runtime must not take over, unlike a mirror's)
 * that a device allocation of the server stands for, as when an API maps
 * the application's memory for its device. The API's spec code keeps the
 * two equal with the rules of memory host and device do not use at the same
 * time:
 * - push (before device work): what the application changed goes to the
 *   device. A twin copy holds each range as last moved; the bytes that
 *   differ from it are sent, per block from the first to the last changed
 *   byte while the device wrote nothing since the last pull (its bytes are
 *   the twin's then, so the bytes between are equal), else only the runs of
 *   changed bytes, so nothing the device wrote is overwritten;
 * - wrote (after device work that may write an allocation): the range is
 *   stale;
 * - sync (after a successful synchronization): every stale range comes
 *   back block by block and the bytes the device changed (they differ from
 *   the twin) are written into the range; bytes the application wrote
 *   meanwhile stay. Only a device-wide synchronization clears staleness
 *   (another queue's work may still write). An API that moves only the
 *   pages that differ (apigen_twin_sync_pages) is given the digests each
 *   twin keeps of its copy's pages, so only changed pages are touched.
 * No page protection and no signal: a comparison of every range at every
 * push, a read of every stale range at every sync, the spans of all ranges
 * gathered into as few io calls as fit (64 spans, 4 MiB each). With no
 * range every call is one atomic load. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apigen_rt.h"
#include "rt_internal.h"

#define BLOCK ((size_t)4 << 20)

typedef struct twin {
    unsigned char *host, *copy;
    size_t size;
    uint64_t dev, alloc; /* alloc: what the API frees (the allocation holding dev; 0: none) */
    uint64_t region;     /* the allocation holding dev: reads of one region may be merged */
    bool read_only, stale;
    bool dig_ok;             /* dig holds the digest of each 4 KiB page of copy */
    apigen_page_digest *dig; /* made at the first paged pull (apigen_twin_sync_pages) */
    struct twin *next;
} twin;

/* A twin's page digests, made when first needed; NULL: out of memory. */
static apigen_page_digest *twin_digests(twin *t)
{
    if (t->dig_ok) return t->dig;
    if (!t->dig && !(t->dig = malloc((t->size + APIGEN_PAGE - 1) / APIGEN_PAGE * sizeof *t->dig)))
        return NULL;
    apigen_pages_digest(t->copy, &t->size, 1, t->dig);
    t->dig_ok = true;
    return t->dig;
}

/* copy's bytes [off, off + n) changed: their pages' digests follow */
static void twin_copied(twin *t, size_t off, size_t n)
{
    if (!t->dig_ok || !n) return;
    for (size_t p = off / APIGEN_PAGE; p * APIGEN_PAGE < off + n; p++) {
        size_t o = p * APIGEN_PAGE, k = t->size - o < APIGEN_PAGE ? t->size - o : APIGEN_PAGE;
        apigen_pages_digest(t->copy + o, &k, 1, &t->dig[p]);
    }
}

static twin *twins_;
static atomic_size_t live_;
static pthread_mutex_t lock_ = PTHREAD_MUTEX_INITIALIZER;

/* What twins cost the guest, counted while tracing (APIGEN_TRACE) and said
 * at exit: every push compares every twin with its copy, every sync reads
 * every stale one (lock_ held while counted). */
static struct {
    uint64_t pushes, push_bytes, push_sent, push_ns;
    uint64_t syncs, sync_bytes, sync_pages, sync_ns;
} stats_;

size_t apigen_twin_live(void)
{
    return atomic_load_explicit(&live_, memory_order_acquire);
}

int apigen_twin_add(void *host, size_t size, uint64_t dev, bool read_only)
{
    return rt_twin_add_in(host, size, dev, dev, dev, read_only);
}

int rt_twin_add_in(void *host, size_t size, uint64_t dev, uint64_t alloc, uint64_t region,
                   bool read_only)
{
    if (!host || !size || !dev || !region) return EINVAL;
    twin *t = calloc(1, sizeof *t);
    if (!t || !(t->copy = malloc(size))) {
        free(t);
        return ENOMEM;
    }
    memcpy(t->copy, host, size);
    t->host = host;
    t->size = size;
    t->dev = dev;
    t->alloc = alloc;
    t->region = region;
    t->read_only = read_only;
    pthread_mutex_lock(&lock_);
    t->next = twins_;
    twins_ = t;
    atomic_fetch_add(&live_, 1);
    pthread_mutex_unlock(&lock_);
    return 0;
}

/* Spans moved in one io call (lock_ held while it fills): a push's changed
 * runs, a sync's stale blocks, of every twin, so that a program with many
 * twins pays one call per flush rather than one per twin (a remote API
 * makes each a round trip). buf holds the spans' bytes back to back, at
 * most BLOCK; at[i] is where span i's bytes are in the twin copy, host[i]
 * in the application's range (pulls), region[i] the allocation holding it
 * (pulls of one region are merged). */
typedef struct batch {
    apigen_twin_span span[APIGEN_TWIN_SPANS];
    twin *tw[APIGEN_TWIN_SPANS]; /* whose copy at[i] is in */
    unsigned char *at[APIGEN_TWIN_SPANS], *host[APIGEN_TWIN_SPANS];
    uint64_t region[APIGEN_TWIN_SPANS];
    unsigned n;
    size_t fill, cap;
    uint64_t moved; /* bytes io moved (counted while tracing) */
    unsigned char *buf; /* grown to what the spans need (a sync of a few small twins: not 4 MiB) */
    bool to_device;
    apigen_twin_io io;
    void *user;
} batch;

/* Pulled spans of one region (a device allocation) at most this far
 * apart are read as one span with the bytes between: the blocks of a slab
 * (twin_place.c) come back in one copy. */
#define MERGE_GAP ((uint64_t)64 << 10)

/* A pull: spans of one region near each other read as one, the bytes then
 * put where each span's belong in b->buf. */
static int pull_merged(batch *b)
{
    unsigned ord[APIGEN_TWIN_SPANS], n = b->n;
    for (unsigned i = 0; i < n; i++) { /* by region, then address */
        unsigned k = i;
        for (; k > 0; k--) {
            unsigned j = ord[k - 1];
            if (b->region[j] < b->region[i] ||
                (b->region[j] == b->region[i] && b->span[j].dev <= b->span[i].dev))
                break;
            ord[k] = j;
        }
        ord[k] = i;
    }
    apigen_twin_span m[APIGEN_TWIN_SPANS];
    unsigned in[APIGEN_TWIN_SPANS], nm = 0; /* in[i]: the merged span holding span i */
    uint64_t total = 0;
    for (unsigned k = 0; k < n; k++) {
        unsigned i = ord[k];
        const apigen_twin_span *sp = &b->span[i];
        if (nm && b->region[i] == b->region[ord[k - 1]]) {
            apigen_twin_span *last = &m[nm - 1];
            uint64_t end = last->dev + last->len;
            if (sp->dev >= end && sp->dev - end <= MERGE_GAP) {
                total += sp->dev + sp->len - end;
                last->len = (size_t)(sp->dev + sp->len - last->dev);
                in[i] = nm - 1;
                continue;
            }
        }
        m[nm] = *sp;
        in[i] = nm++;
        total += sp->len;
    }
    if (nm == n || total > BLOCK) /* nothing merged (or too much between): as they are */
        return b->io(b->span, n, b->buf, false, b->user);
    unsigned char *tmp = calloc(1, total); /* zeros between the spans: bytes no twin holds */
    if (!tmp) return APIGEN_TWIN_NO_MEMORY;
    size_t moff[APIGEN_TWIN_SPANS], off = 0, where[APIGEN_TWIN_SPANS];
    for (unsigned j = 0; j < nm; j++) moff[j] = off, off += m[j].len;
    off = 0;
    for (unsigned i = 0; i < n; off += b->span[i].len, i++) {
        where[i] = moff[in[i]] + (b->span[i].dev - m[in[i]].dev);
        memcpy(tmp + where[i], b->buf + off, b->span[i].len);
    }
    int r = b->io(m, nm, tmp, false, b->user);
    off = 0;
    for (unsigned i = 0; i < n && !r; off += b->span[i].len, i++)
        memcpy(b->buf + off, tmp + where[i], b->span[i].len);
    free(tmp);
    return r;
}

static int batch_flush(batch *b)
{
    if (!b->n) return 0;
    b->moved += b->fill;
    int r = b->to_device ? b->io(b->span, b->n, b->buf, true, b->user) : pull_merged(b);
    size_t off = 0;
    for (unsigned i = 0; i < b->n && !r; off += b->span[i].len, i++) {
        unsigned char *got = b->buf + off, *c = b->at[i];
        size_t n = b->span[i].len;
        if (b->to_device) { /* sent: the twin's bytes only now, so a failed push is sent again */
            memcpy(c, got, n);
            twin_copied(b->tw[i], (size_t)(c - b->tw[i]->copy), n);
        } else if (memcmp(got, c, n)) { /* the device changed these; the rest may be the application's */
            unsigned char *h = b->host[i];
            for (size_t k = 0; k < n; k++)
                if (got[k] != c[k]) h[k] = c[k] = got[k];
            twin_copied(b->tw[i], (size_t)(c - b->tw[i]->copy), n);
        }
    }
    b->n = 0;
    b->fill = 0;
    return r;
}

/* room for n more bytes (n <= BLOCK), flushing first when full; then the
 * span's bytes go to b->buf + b->fill */
static int batch_add(batch *b, twin *t, uint64_t dev, size_t n, unsigned char *at,
                     unsigned char *host)
{
    uint64_t region = t->region;
    if (b->n == APIGEN_TWIN_SPANS || b->fill + n > BLOCK) {
        int r = batch_flush(b);
        if (r) return r;
    }
    if (b->fill + n > b->cap) {
        size_t cap = b->cap * 2 > b->fill + n ? b->cap * 2 : b->fill + n;
        if (cap < ((size_t)64 << 10)) cap = (size_t)64 << 10;
        if (cap > BLOCK) cap = BLOCK;
        unsigned char *nb = realloc(b->buf, cap);
        if (!nb) return APIGEN_TWIN_NO_MEMORY;
        b->buf = nb, b->cap = cap;
    }
    b->span[b->n] = (apigen_twin_span){dev, n};
    b->tw[b->n] = t;
    b->at[b->n] = at;
    b->host[b->n] = host;
    b->region[b->n] = region;
    b->n++;
    b->fill += n;
    return 0;
}

/* lock_ held: t's changed runs into the batch, per block from the first to
 * the last changed byte while the device wrote nothing since the last pull
 * (the bytes between are equal), else each run of changed bytes */
static int push_one(twin *t, batch *b)
{
    for (size_t i = 0; i < t->size; i += BLOCK) {
        size_t n = t->size - i < BLOCK ? t->size - i : BLOCK;
        const unsigned char *h = t->host + i;
        unsigned char *c = t->copy + i;
        if (!memcmp(h, c, n)) continue;
        size_t a = 0;
        while (a < n) {
            while (a < n && h[a] == c[a]) a++;
            if (a == n) break;
            size_t e = a;
            if (!t->stale) {
                e = n;
                while (h[e - 1] == c[e - 1]) e--;
            } else {
                while (e < n && h[e] != c[e]) e++;
            }
            int r = batch_add(b, t, t->dev + i + a, e - a, c + a, NULL);
            if (r) return r;
            memcpy(b->buf + b->fill - (e - a), h + a, e - a);
            a = e;
        }
    }
    return 0;
}

/* lock_ held: t's blocks into the batch (compared when it is flushed) */
static int pull_one(twin *t, batch *b)
{
    for (size_t i = 0; i < t->size; i += BLOCK) {
        size_t n = t->size - i < BLOCK ? t->size - i : BLOCK;
        int r = batch_add(b, t, t->dev + i, n, t->copy + i, t->host + i);
        if (r) return r;
        memcpy(b->buf + b->fill - n, t->copy + i, n); /* what io may compare against */
    }
    return 0;
}

int apigen_twin_push(apigen_twin_io io, void *user)
{
    if (!apigen_twin_live()) return 0;
    batch b = {.to_device = true, .io = io, .user = user};
    int r = 0;
    uint64_t t0 = apigen_tracing() ? apigen_now_ns() : 0;
    pthread_mutex_lock(&lock_);
    for (twin *t = twins_; t && !r; t = t->next) {
        r = push_one(t, &b);
        if (t0) stats_.push_bytes += t->size;
    }
    if (!r) r = batch_flush(&b);
    if (t0) stats_.pushes++, stats_.push_sent += b.moved, stats_.push_ns += apigen_now_ns() - t0;
    pthread_mutex_unlock(&lock_);
    free(b.buf);
    return r;
}

void apigen_twin_wrote(uint64_t dev, size_t n)
{
    if (!apigen_twin_live()) return;
    pthread_mutex_lock(&lock_);
    for (twin *t = twins_; t; t = t->next)
        if (!t->read_only && (!dev || (dev < t->dev + t->size && dev + (n ? n : 1) > t->dev)))
            t->stale = true;
    pthread_mutex_unlock(&lock_);
}

int apigen_twin_sync(bool all_done, apigen_twin_io io, void *user)
{
    if (!apigen_twin_live()) return 0;
    batch b = {.to_device = false, .io = io, .user = user};
    int r = 0;
    uint64_t t0 = apigen_tracing() ? apigen_now_ns() : 0;
    pthread_mutex_lock(&lock_);
    for (twin *t = twins_; t && !r; t = t->next)
        if (t->stale) {
            r = pull_one(t, &b);
            if (t0) stats_.sync_bytes += t->size;
        }
    if (!r) r = batch_flush(&b);
    if (!r && all_done) /* staleness clears only once every stale twin came back */
        for (twin *t = twins_; t; t = t->next) t->stale = false;
    if (t0) stats_.syncs++, stats_.sync_ns += apigen_now_ns() - t0;
    pthread_mutex_unlock(&lock_);
    free(b.buf);
    return r;
}

__attribute__((destructor)) static void say_stats(void)
{
    if (stats_.pushes || stats_.syncs)
        apigen_trace("twins: %llu pushes compared %llu MB, sent %llu kB, %llu us; %llu syncs read "
                     "%llu MB of stale twins (%llu changed pages), %llu us",
                     (unsigned long long)stats_.pushes, (unsigned long long)(stats_.push_bytes >> 20),
                     (unsigned long long)(stats_.push_sent >> 10),
                     (unsigned long long)(stats_.push_ns / 1000), (unsigned long long)stats_.syncs,
                     (unsigned long long)(stats_.sync_bytes >> 20),
                     (unsigned long long)stats_.sync_pages,
                     (unsigned long long)(stats_.sync_ns / 1000));
}

/* ---- pulls that move only the pages that differ (apigen_twin_sync_pages) --------------------
 * The spans of stale twins (a twin's 4 MiB blocks, so a span's pages are
 * its twin's) gathered as a push's are, the io sent each span's page
 * digests as the twin keeps them; what comes back is a bitmap and the
 * changed pages, merged into the copies and ranges as a full pull's bytes
 * are. The digests and the answer live in buffers kept for the next
 * synchronization (lock_ held): a synchronization that finds nothing
 * changed touches no twin's bytes. */
typedef struct paged {
    apigen_twin_span span[APIGEN_TWIN_SPANS];
    twin *tw[APIGEN_TWIN_SPANS];
    size_t off[APIGEN_TWIN_SPANS]; /* the span's place in its twin */
    unsigned n;
    size_t total, pages;
    apigen_twin_pages_io io;
    void *user;
} paged;

static struct {
    apigen_page_digest *known;
    size_t nknown;
    unsigned char *reply;
    size_t cap;
} pbuf_;

static int paged_flush(paged *p)
{
    if (!p->n) return 0;
    size_t map = (p->pages + 7) / 8, need = map + p->total, used = 0;
    if (p->pages > pbuf_.nknown) {
        apigen_page_digest *k = realloc(pbuf_.known, p->pages * sizeof *k);
        if (!k) return APIGEN_TWIN_NO_MEMORY;
        pbuf_.known = k, pbuf_.nknown = p->pages;
    }
    if (need > pbuf_.cap) {
        unsigned char *r = realloc(pbuf_.reply, need);
        if (!r) return APIGEN_TWIN_NO_MEMORY;
        pbuf_.reply = r, pbuf_.cap = need;
    }
    apigen_page_digest *k = pbuf_.known;
    size_t len[APIGEN_TWIN_SPANS];
    for (unsigned i = 0; i < p->n; i++) {
        size_t np = (p->span[i].len + APIGEN_PAGE - 1) / APIGEN_PAGE;
        memcpy(k, p->tw[i]->dig + p->off[i] / APIGEN_PAGE, np * sizeof *k);
        k += np;
        len[i] = p->span[i].len;
    }
    int r = p->io(p->span, p->n, pbuf_.known, pbuf_.reply, need, &used, p->user);
    if (!r && (used > need || apigen_pages_check(len, p->n, pbuf_.reply, used))) {
        apigen_log("twins: the answer to a read of %u span(s) (%zu bytes) does not match their "
                   "pages: nothing of it written",
                   p->n, used);
        r = APIGEN_TWIN_BAD_REPLY;
    }
    const unsigned char *bitmap = pbuf_.reply, *got = bitmap + map;
    size_t pg = 0;
    for (unsigned i = 0; i < p->n && !r; i++) {
        twin *t = p->tw[i];
        for (size_t o = 0; o < p->span[i].len; o += APIGEN_PAGE, pg++) {
            if (!(bitmap[pg / 8] & (1u << (pg % 8)))) continue;
            size_t at = p->off[i] + o, k = p->span[i].len - o < APIGEN_PAGE ? p->span[i].len - o
                                                                              : APIGEN_PAGE;
            unsigned char *c = t->copy + at, *h = t->host + at;
            for (size_t j = 0; j < k; j++) /* the device's changes; the rest may be the application's */
                if (got[j] != c[j]) h[j] = c[j] = got[j];
            twin_copied(t, at, k);
            got += k;
            if (apigen_tracing()) stats_.sync_pages++;
        }
    }
    p->n = 0;
    p->total = p->pages = 0;
    return r;
}

/* lock_ held: t's blocks into the paged pull */
static int paged_add(paged *p, twin *t)
{
    if (!twin_digests(t)) return APIGEN_TWIN_NO_MEMORY;
    for (size_t i = 0; i < t->size; i += BLOCK) {
        size_t n = t->size - i < BLOCK ? t->size - i : BLOCK;
        if (p->n == APIGEN_TWIN_SPANS || p->total + n > BLOCK) {
            int r = paged_flush(p);
            if (r) return r;
        }
        p->span[p->n] = (apigen_twin_span){t->dev + i, n};
        p->tw[p->n] = t;
        p->off[p->n++] = i;
        p->total += n;
        p->pages += (n + APIGEN_PAGE - 1) / APIGEN_PAGE;
    }
    return 0;
}

int apigen_twin_sync_pages(bool all_done, apigen_twin_pages_io io, void *user)
{
    if (!apigen_twin_live()) return 0;
    paged p = {.io = io, .user = user};
    int r = 0;
    uint64_t t0 = apigen_tracing() ? apigen_now_ns() : 0;
    pthread_mutex_lock(&lock_);
    for (twin *t = twins_; t && !r; t = t->next)
        if (t->stale) {
            r = paged_add(&p, t);
            if (t0) stats_.sync_bytes += t->size;
        }
    if (!r) r = paged_flush(&p);
    if (!r && all_done) /* staleness clears only once every stale twin came back */
        for (twin *t = twins_; t; t = t->next) t->stale = false;
    if (t0) stats_.syncs++, stats_.sync_ns += apigen_now_ns() - t0;
    pthread_mutex_unlock(&lock_);
    return r;
}

/* ---- host pointers in a kernel's parameters -----------------------------------------------
 * Host ranges the APIs may turn into twins (their pinned or registered
 * memory outside the arena): launches scan their parameters only while some
 * exist; [lo, hi) bounds them, a cheap first test of each word. */
static atomic_size_t candidates_;
static _Atomic(uintptr_t) cand_lo_ = UINTPTR_MAX, cand_hi_;

void apigen_twin_candidate_add(const void *p, size_t size)
{
    uintptr_t a = (uintptr_t)p, lo = atomic_load(&cand_lo_), hi = atomic_load(&cand_hi_);
    if (!p || apigen_arena_owns(p)) return;
    while (a < lo && !atomic_compare_exchange_weak(&cand_lo_, &lo, a)) {}
    while (a + size > hi && !atomic_compare_exchange_weak(&cand_hi_, &hi, a + size)) {}
    atomic_fetch_add(&candidates_, 1);
}

void apigen_twin_candidate_remove(const void *p)
{
    if (p && !apigen_arena_owns(p)) atomic_fetch_sub(&candidates_, 1);
}

bool apigen_twin_candidates(void)
{
    return atomic_load_explicit(&candidates_, memory_order_relaxed) != 0;
}

bool apigen_twin_candidate_maybe(uint64_t addr)
{
    return apigen_twin_candidates() && addr >= atomic_load(&cand_lo_) && addr < atomic_load(&cand_hi_);
}

/* With unified addressing a kernel reaches host memory the API pinned or
 * registered at its host address; a remote device reaches the twin instead,
 * so each 8-byte word of the packed parameters that points into a twin (or
 * into a range `make` turns into one) is given the twin's address. Pointers
 * sit 8-byte aligned in a parameter buffer (the ABI aligns pointer
 * parameters and struct members); pointers the kernel reads from memory are
 * not seen. */
int apigen_twin_translate(void *params, size_t len, apigen_twin_make make, void *user)
{
    unsigned char *b = params;
    for (size_t off = 0; off + sizeof(uint64_t) <= len; off += sizeof(uint64_t)) {
        uint64_t w, dev;
        memcpy(&w, b + off, sizeof w);
        if (w < 4096) continue; /* no memory of anyone's */
        const void *p = (const void *)(uintptr_t)w;
        if (!apigen_twin_device(p, &dev, NULL)) {
            int r = make(w, user);
            if (r) return r;
            if (!apigen_twin_device(p, &dev, NULL)) continue;
        }
        memcpy(b + off, &dev, sizeof dev);
    }
    return 0;
}

bool apigen_twin_device(const void *host, uint64_t *dev, size_t *left)
{
    if (!apigen_twin_live()) return false;
    uintptr_t h = (uintptr_t)host;
    bool found = false;
    pthread_mutex_lock(&lock_);
    for (twin *t = twins_; t && !found; t = t->next)
        if (h >= (uintptr_t)t->host && h < (uintptr_t)t->host + t->size) {
            if (dev) *dev = t->dev + (h - (uintptr_t)t->host);
            if (left) *left = t->size - (h - (uintptr_t)t->host);
            found = true;
        }
    pthread_mutex_unlock(&lock_);
    return found;
}

int apigen_twin_remove(void *host, uint64_t *dev, apigen_twin_io io, void *user)
{
    twin *t = NULL;
    *dev = 0;
    if (!apigen_twin_live()) return 0;
    pthread_mutex_lock(&lock_);
    for (twin **p = &twins_; *p; p = &(*p)->next)
        if ((*p)->host == host) {
            t = *p;
            *p = t->next;
            atomic_fetch_sub(&live_, 1);
            break;
        }
    pthread_mutex_unlock(&lock_);
    if (!t) return 0;
    int r = 0;
    if (t->stale) { /* what the device wrote stays in the application's memory */
        batch b = {.to_device = false, .io = io, .user = user};
        r = pull_one(t, &b);
        if (!r) r = batch_flush(&b);
        free(b.buf);
    }
    *dev = t->alloc;
    free(t->copy);
    free(t->dig);
    free(t);
    return r;
}

void apigen_twin_forget_all(void)
{
    rt_twin_place_forget(); /* slabs' allocations went too: no new block in them */
    if (!apigen_twin_live()) return;
    pthread_mutex_lock(&lock_);
    twin *t = twins_;
    twins_ = NULL;
    atomic_store(&live_, 0);
    pthread_mutex_unlock(&lock_);
    while (t) {
        twin *next = t->next;
        free(t->copy);
        free(t->dig);
        free(t);
        t = next;
    }
}

/* ---- the other APIs of the owners' family -----------------------------------------------
 * As for mirrors (mirror.c): a library of the family (its calls launch
 * kernels on the family's device memory) may read and write a twin's
 * allocation, so each of its calls first pushes what the application
 * changed and makes every twin stale. */
#define OWNERS_MAX 4
static const apigen_api *owners_[OWNERS_MAX];
static apigen_twin_io owner_io_[OWNERS_MAX];
static atomic_uint nowners_;
static _Thread_local bool in_foreign_;

void apigen_twin_own(const apigen_api *api, apigen_twin_io io)
{
    pthread_mutex_lock(&lock_);
    unsigned n = atomic_load(&nowners_);
    bool known = false;
    for (unsigned i = 0; i < n; i++) known |= owners_[i] == api;
    if (!known && n < OWNERS_MAX) {
        owners_[n] = api;
        owner_io_[n] = io;
        atomic_store(&nowners_, n + 1);
    }
    pthread_mutex_unlock(&lock_);
}

int rt_twin_foreign_call(const apigen_api *api)
{
    unsigned n = atomic_load(&nowners_);
    if (in_foreign_ || !n) return 0;
    int fam = -1;
    for (unsigned i = 0; i < n; i++) {
        if (owners_[i] == api) return 0; /* it moves twins itself */
        if (fam < 0 && rt_same_family(owners_[i], api)) fam = (int)i;
    }
    if (fam < 0) return 0;
    in_foreign_ = true; /* the push's own copies are an owner's calls */
    int r = apigen_twin_push(owner_io_[fam], NULL);
    in_foreign_ = false;
    apigen_twin_wrote(0, 0);
    return r;
}
