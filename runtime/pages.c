/* Page digests (apigen_rt.h, "Page digests"): one side tells the other
 * what it holds of some spans in 16 bytes a page (XXH3-128 of each 4 KiB
 * page, the last page of a span shorter), and the other sends back only the
 * pages whose bytes differ. A twin read back at every synchronization (a
 * mapped block the device only reads, such as a 1 MiB work queue)
 * then costs its digests instead of its bytes. A wrong page taken as equal
 * needs two different pages with the same 128-bit digest. */
#define XXH_INLINE_ALL /* header-only: nothing to link on either side */
#include <stdint.h>
#include <string.h>
#include <xxhash.h>

#include "apigen_rt.h"

size_t apigen_pages_count(const size_t *len, unsigned n)
{
    size_t pages = 0;
    for (unsigned i = 0; i < n; i++)
        pages += (len[i] + APIGEN_PAGE - 1) / APIGEN_PAGE;
    return pages;
}

void apigen_pages_digest(const void *bytes, const size_t *len, unsigned n, apigen_page_digest *out)
{
    const unsigned char *b = bytes;
    for (unsigned i = 0; i < n; i++)
        for (size_t off = 0; off < len[i]; off += APIGEN_PAGE) {
            size_t k = len[i] - off < APIGEN_PAGE ? len[i] - off : APIGEN_PAGE;
            XXH128_canonicalFromHash((XXH128_canonical_t *)out++, XXH3_128bits(b, k));
            b += k;
        }
}

size_t apigen_pages_pack(void *reply, const void *now, const size_t *len, unsigned n,
                         const apigen_page_digest *known)
{
    size_t pages = apigen_pages_count(len, n), map = (pages + 7) / 8;
    unsigned char *bitmap = reply, *to = bitmap + map;
    const unsigned char *from = now ? now : to;
    memset(bitmap, 0, map);
    size_t p = 0;
    for (unsigned i = 0; i < n; i++)
        for (size_t off = 0; off < len[i]; off += APIGEN_PAGE, p++) {
            size_t k = len[i] - off < APIGEN_PAGE ? len[i] - off : APIGEN_PAGE;
            apigen_page_digest d;
            XXH128_canonicalFromHash((XXH128_canonical_t *)&d, XXH3_128bits(from, k));
            if (memcmp(&d, &known[p], sizeof d)) {
                bitmap[p / 8] |= (unsigned char)(1u << (p % 8));
                if (to != from)
                    memmove(to, from, k); /* in place: to <= from */
                to += k;
            }
            from += k;
        }
    return (size_t)(to - bitmap);
}

int apigen_pages_check(const size_t *len, unsigned n, const void *reply, size_t used)
{
    size_t pages = apigen_pages_count(len, n), map = (pages + 7) / 8, want = map, p = 0;
    if (used < map)
        return -1;
    const unsigned char *bitmap = reply;
    for (unsigned i = 0; i < n; i++)
        for (size_t off = 0; off < len[i]; off += APIGEN_PAGE, p++)
            if (bitmap[p / 8] & (1u << (p % 8)))
                want += len[i] - off < APIGEN_PAGE ? len[i] - off : APIGEN_PAGE;
    return want == used ? 0 : -1;
}

int apigen_pages_unpack(void *bytes, const size_t *len, unsigned n, const void *reply, size_t used)
{
    if (apigen_pages_check(len, n, reply, used))
        return -1;
    size_t map = (apigen_pages_count(len, n) + 7) / 8, p = 0;
    const unsigned char *bitmap = reply, *from = bitmap + map;
    unsigned char *b = bytes;
    for (unsigned i = 0; i < n; i++)
        for (size_t off = 0; off < len[i]; off += APIGEN_PAGE, p++) {
            size_t k = len[i] - off < APIGEN_PAGE ? len[i] - off : APIGEN_PAGE;
            if (bitmap[p / 8] & (1u << (p % 8))) {
                memcpy(b, from, k);
                from += k;
            }
            b += k;
        }
    return 0;
}
