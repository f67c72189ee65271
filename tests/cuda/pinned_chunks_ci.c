/* tests/cuda/pinned_chunks_ci.c: specs/cuda/pinned_chunks.h replays the orders measured on an
 * H200 with driver 580 (tests/gpu/attr_probe.c `order`, docs/gpu-runs/2026-11-27.md) and must
 * answer the PORTABLE bit the driver reported for every block. Each order is a string of
 * blocks: p (PORTABLE) or h (not), a size in KiB after it (4 when none), fN frees the Nth; the
 * expected bits (1 PORTABLE, 0 not) of the blocks still allocated at the end, in order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../specs/cuda/pinned_chunks.h"

static int check(const char *order, const char *want)
{
    char buf[512], got[64] = "";
    void *blk[64] = {0};
    int n = 0;
    static uintptr_t next = 1 << 20; /* addresses only: the model never touches them */
    strncpy(buf, order, sizeof buf - 1);
    buf[sizeof buf - 1] = 0;
    for (char *t = strtok(buf, " "); t && n < 64; t = strtok(NULL, " ")) {
        if (t[0] == 'f') {
            int k = atoi(t + 1) - 1;
            if (k >= 0 && k < n && blk[k]) pc_remove(blk[k]);
            if (k >= 0 && k < n) blk[k] = NULL;
            continue;
        }
        size_t kib = t[1] ? strtoul(t + 1, NULL, 10) : 4;
        blk[n] = (void *)next;
        next += (kib << 10) + 4096;
        pc_add(blk[n], kib << 10, t[0] == 'p');
        n++;
    }
    for (int i = 0; i < n; i++)
        if (blk[i]) strncat(got, pc_portable(blk[i], 0) ? "1" : "0", sizeof got - strlen(got) - 1);
    for (int i = 0; i < n; i++)
        if (blk[i]) pc_remove(blk[i]);
    int ok = strcmp(got, want) == 0;
    printf("%s: %s (driver %s)%s\n", order, got, want, ok ? "" : "  WRONG");
    return !ok;
}

int main(void)
{
    int bad = 0;
    bad |= check("p h64 h256 h512 h1024 h2048 h4096", "1111100");
    bad |= check("h p64 p256 p512 p1024 p2048 p4096", "0000011");
    bad |= check("p h1024 h1024 h1024 h1024 h1024 h1024 h1024 h1024", "110000000");
    bad |= check("p h256 h256 h256 h256 h256 h256 h256 h256 h256 h256", "11111111000");
    bad |= check("p h1536 h", "111");
    bad |= check("p h1100 h", "111");
    bad |= check("p h2000 h", "111");
    bad |= check("p8192 h h", "100");
    bad |= check("p h1024 h1024 h", "1101");
    bad |= check("p h1024 h1024 h512 h", "11011");
    bad |= check("p h1024 f2 h1024", "11");
    bad |= check("p h1024 h1024 f1 f2 h", "00");
    bad |= check("h h1024 p1024 f1 f2 p", "11");
    bad |= check("p h512 h512 h512 f3 h512 h512", "11110");
    printf("%s\n", bad ? "FAIL" : "PASS");
    return bad;
}
