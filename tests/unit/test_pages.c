/* runtime/pages.c: page digests and the replies that carry only the pages
 * whose bytes differ. Checked: page counts per span (the last page of a
 * span shorter), a reply for unchanged spans is the bitmap alone, one
 * changed byte brings back its page only (in the first, a middle and a
 * span's short last page), every page changed brings back every byte, the
 * unpacked bytes equal the current ones in each case, packed in place or
 * from the current bytes elsewhere alike; a reply shorter or
 * longer than its bitmap says, or shorter than its bitmap, is refused. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apigen_rt.h"
#include "check.h"

enum { NS = 3 };
static const size_t len[NS] = {4096 * 3, 100, 4096 + 10}; /* 3 + 1 + 2 pages */
#define TOTAL (4096 * 3 + 100 + 4096 + 10)

/* what the holder of `now` answers to digests of `had`, unpacked over a copy
 * of `had`: that copy must equal `now`; returns the reply's page bytes */
static size_t round_trip(const unsigned char *had, const unsigned char *now)
{
    size_t pages = apigen_pages_count(len, NS), map = (pages + 7) / 8;
    apigen_page_digest known[6];
    apigen_pages_digest(had, len, NS, known);
    unsigned char reply[1 + TOTAL], apart[1 + TOTAL], mine[TOTAL];
    memcpy(reply + map, now, TOTAL);
    size_t used = apigen_pages_pack(reply, NULL, len, NS, known);
    /* the current bytes elsewhere (a server's staging block): the same reply */
    CHECK(apigen_pages_pack(apart, now, len, NS, known) == used && !memcmp(apart, reply, used));
    memcpy(mine, had, TOTAL);
    CHECK(apigen_pages_unpack(mine, len, NS, reply, used) == 0);
    CHECK(!memcmp(mine, now, TOTAL));
    return used - map;
}

int main(void)
{
    CHECK(apigen_pages_count(len, NS) == 6);
    CHECK(apigen_pages_count(len, 0) == 0);
    static unsigned char had[TOTAL], now[TOTAL];
    for (size_t i = 0; i < TOTAL; i++)
        had[i] = (unsigned char)(i * 7 + 3);
    memcpy(now, had, TOTAL);
    CHECK(round_trip(had, now) == 0);
    now[5] ^= 1; /* the first page */
    CHECK(round_trip(had, now) == 4096);
    now[4096 + 17] ^= 1; /* and the middle of the first span */
    CHECK(round_trip(had, now) == 2 * 4096);
    memcpy(now, had, TOTAL);
    now[TOTAL - 1] ^= 0x80; /* the third span's 10-byte last page */
    CHECK(round_trip(had, now) == 10);
    now[4096 * 3 + 50] ^= 1; /* the 100-byte second span */
    CHECK(round_trip(had, now) == 110);
    for (size_t i = 0; i < TOTAL; i++)
        now[i] = (unsigned char)~had[i];
    CHECK(round_trip(had, now) == TOTAL);

    /* replies that do not match the spans */
    apigen_page_digest known[6];
    apigen_pages_digest(had, len, NS, known);
    static unsigned char reply[1 + TOTAL], mine[TOTAL];
    memcpy(reply + 1, now, TOTAL);
    size_t used = apigen_pages_pack(reply, NULL, len, NS, known);
    CHECK(used == 1 + TOTAL && reply[0] == 0x3f);
    CHECK(apigen_pages_unpack(mine, len, NS, reply, used - 1) == -1); /* a page cut short */
    reply[0] = 0x1f;                                                  /* one page fewer than sent */
    CHECK(apigen_pages_unpack(mine, len, NS, reply, used) == -1);
    CHECK(apigen_pages_unpack(mine, len, NS, reply, 0) == -1); /* not even the bitmap */
    return check_failures ? 1 : 0;
}
