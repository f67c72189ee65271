/* runtime/repeat.c (spec `async_repeats`): a key is known only after it was
 * noted; keys of another call, another API or other values are not; more
 * keys than the table holds lose some (each then goes sync again) but never
 * make an unnoted key known. APIGEN_REPEAT=0 (a second run): nothing known. */
#include <stdint.h>
#include <stdlib.h>

#include "apigen_rt.h"
#include "check.h"

static const apigen_api *api_a = (const apigen_api *)(uintptr_t)0x1000;
static const apigen_api *api_b = (const apigen_api *)(uintptr_t)0x2000;

static uint64_t key(const apigen_api *api, uint32_t call, int m, int n)
{
    uint64_t k = apigen_repeat_key(api, call);
    k = apigen_repeat_mix(k, &m, sizeof m);
    return apigen_repeat_mix(k, &n, sizeof n);
}

int main(void)
{
    const char *off = getenv("APIGEN_REPEAT");
    if (off && strcmp(off, "0") == 0) { /* the control: never known */
        apigen_repeat_note(key(api_a, 1, 4, 3));
        CHECK(!apigen_repeat_known(key(api_a, 1, 4, 3)));
        return check_failures ? 1 : 0;
    }
    CHECK(key(api_a, 1, 4, 3) == key(api_a, 1, 4, 3)); /* the same values, the same key */
    CHECK(!apigen_repeat_known(key(api_a, 1, 4, 3)));
    apigen_repeat_note(key(api_a, 1, 4, 3));
    CHECK(apigen_repeat_known(key(api_a, 1, 4, 3)));
    CHECK(!apigen_repeat_known(key(api_a, 1, 3, 4))); /* other values (their order matters) */
    CHECK(!apigen_repeat_known(key(api_a, 2, 4, 3))); /* another call */
    CHECK(!apigen_repeat_known(key(api_b, 1, 4, 3))); /* another API */
    /* bytes past the 8-byte words and the length count */
    uint8_t b9[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, c9[9] = {1, 2, 3, 4, 5, 6, 7, 8, 10};
    uint64_t k0 = apigen_repeat_key(api_a, 3);
    CHECK(apigen_repeat_mix(k0, b9, 9) != apigen_repeat_mix(k0, c9, 9));
    CHECK(apigen_repeat_mix(k0, b9, 8) != apigen_repeat_mix(k0, b9, 9));
    /* four times the table: some keys lost, no unnoted one known */
    for (int i = 0; i < 4 * 8192; i++) apigen_repeat_note(key(api_a, 7, i, 0));
    int kept = 0, stray = 0;
    for (int i = 0; i < 4 * 8192; i++) kept += apigen_repeat_known(key(api_a, 7, i, 0));
    for (int i = 0; i < 4 * 8192; i++) stray += apigen_repeat_known(key(api_a, 7, i, 1));
    CHECK(kept > 0 && kept <= 8192);
    CHECK(stray == 0);
    apigen_repeat_note(key(api_a, 1, 4, 3)); /* noted again: known again */
    CHECK(apigen_repeat_known(key(api_a, 1, 4, 3)));
    return check_failures ? 1 : 0;
}
