/* runtime/cache.c: kept answers by request bytes, and answers of a group
 * (spec `cache.group`): one kept under a group's epoch answers only while
 * the caller names that epoch, a newer epoch's answer replaces it, an
 * older one (asked before a forget, back after a newer one) does not. */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "rt_internal.h"

static int found(rt_cache *c, uint32_t call, const char *key, uint32_t group, uint64_t epoch,
                 char *got)
{
    uint8_t *buf = NULL;
    size_t cap = 0, len = 0, off = 0;
    bool hit = rt_cache_find(c, call, (const uint8_t *)key, strlen(key), &buf, &cap, &len, &off,
                             group, epoch);
    if (hit && got) {
        memcpy(got, buf + off, len - off);
        got[len - off] = 0;
    }
    free(buf);
    return hit;
}

static void add(rt_cache *c, uint32_t call, const char *key, const char *rep, uint32_t group,
                uint64_t epoch)
{
    rt_cache_add(c, call, (const uint8_t *)key, strlen(key), (const uint8_t *)rep, strlen(rep), 0,
                 group, epoch);
}

/* a session's cache lives as long as the process (the runtime has no free):
 * kept here so that the leak checker sees it reachable */
static rt_cache *c;

int main(void)
{
    c = rt_cache_new();
    char got[64];
    CHECK(c != NULL);
    /* plain answers: kept for good, the first one stays */
    CHECK(!found(c, 1, "dev0", 0, 0, got));
    add(c, 1, "dev0", "answer A", 0, 0);
    CHECK(found(c, 1, "dev0", 0, 0, got) && strcmp(got, "answer A") == 0);
    add(c, 1, "dev0", "answer B", 0, 0);
    CHECK(found(c, 1, "dev0", 0, 0, got) && strcmp(got, "answer A") == 0);
    CHECK(!found(c, 2, "dev0", 0, 0, got)); /* another call */
    CHECK(!found(c, 1, "dev1", 0, 0, got)); /* another request */

    /* a group's answers: valid under the epoch they were asked in */
    add(c, 3, "dev0", "active, flags 0", 1, 5);
    CHECK(found(c, 3, "dev0", 1, 5, got) && strcmp(got, "active, flags 0") == 0);
    CHECK(!found(c, 3, "dev0", 1, 6, NULL)); /* forgotten since */
    add(c, 3, "dev0", "active, flags 4", 1, 6);
    CHECK(found(c, 3, "dev0", 1, 6, got) && strcmp(got, "active, flags 4") == 0);
    CHECK(!found(c, 3, "dev0", 1, 5, NULL));
    add(c, 3, "dev0", "stale", 1, 5); /* asked before the forget, back late */
    CHECK(found(c, 3, "dev0", 1, 6, got) && strcmp(got, "active, flags 4") == 0);
    CHECK(!found(c, 3, "dev0", 2, 6, NULL)); /* another group's epoch */
    return check_failures ? 1 : 0;
}
