/* runtime/hstate.c: the guest's per-handle states (spec `state:`): a new
 * handle starts at the table's initial values, set/get/forget per (table,
 * id), two tables never share a handle's values, and thousands of handles
 * (the table grows, forgotten slots are reused) keep theirs. */
#include <stdint.h>

#include "apigen_rt.h"
#include "check.h"

static const int64_t table_a[2] = {7, -1};
static const int64_t table_b[1] = {0};

int main(void)
{
    int64_t v = 42;
    CHECK(!apigen_hstate_get(table_a, 100, 0, &v) && v == 42); /* untracked: v untouched */
    apigen_hstate_add(table_a, 2, 100);
    CHECK(apigen_hstate_get(table_a, 100, 0, &v) && v == 7);
    CHECK(apigen_hstate_get(table_a, 100, 1, &v) && v == -1);
    apigen_hstate_set(table_a, 2, 100, 1, 5);
    CHECK(apigen_hstate_get(table_a, 100, 1, &v) && v == 5);
    CHECK(apigen_hstate_get(table_a, 100, 0, &v) && v == 7);
    CHECK(!apigen_hstate_get(table_b, 100, 0, &v)); /* another type's table */
    apigen_hstate_set(table_b, 1, 100, 0, 1);        /* set without add: initial values first */
    CHECK(apigen_hstate_get(table_b, 100, 0, &v) && v == 1);
    CHECK(apigen_hstate_get(table_a, 100, 1, &v) && v == 5);
    apigen_hstate_add(table_a, 2, 100); /* the id made again: initial values */
    CHECK(apigen_hstate_get(table_a, 100, 1, &v) && v == -1);
    apigen_hstate_forget(table_a, 100);
    CHECK(!apigen_hstate_get(table_a, 100, 0, &v));
    CHECK(apigen_hstate_get(table_b, 100, 0, &v) && v == 1);
    CHECK(!apigen_hstate_get(table_a, 100, 8, &v)); /* past the slots */

    /* many handles, made and forgotten in rounds */
    for (int round = 0; round < 4; round++) {
        for (uint64_t id = 1; id <= 5000; id++) {
            apigen_hstate_add(table_a, 2, id * 16 + (uint64_t)round);
            apigen_hstate_set(table_a, 2, id * 16 + (uint64_t)round, 0, (int64_t)id);
        }
        int bad = 0;
        for (uint64_t id = 1; id <= 5000; id++) {
            int64_t x = -99;
            if (!apigen_hstate_get(table_a, id * 16 + (uint64_t)round, 0, &x) || x != (int64_t)id) bad++;
        }
        CHECK(bad == 0);
        for (uint64_t id = 1; id <= 5000; id++) apigen_hstate_forget(table_a, id * 16 + (uint64_t)round);
        CHECK(!apigen_hstate_get(table_a, 16 + (uint64_t)round, 0, &v));
    }
    /* a handle type the header version lacks (hand-written code looks types
     * up by name: CUkernel in a server made from CUDA 11.x headers) is no
     * handle, never a crash (a SIGSEGV on the H200, 2026-11-26) */
    void *real = (void *)1;
    CHECK(!apigen_handle_lookup(NULL, NULL, 42, &real));
    if (check_failures) fprintf(stderr, "%d check(s) failed\n", check_failures);
    else printf("hstate: ok\n");
    return check_failures != 0;
}
