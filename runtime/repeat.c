/* repeat.c: keys of calls the library accepted (spec `async_repeats: true`,
 * docs/spec.md). A queued call returns success before the library ran it;
 * the library's argument checks are a function of the values the call
 * passes (sizes, enums, handles, alignment), so once a synchronous call
 * with the same values succeeded, a repeat of them cannot be refused at
 * the call, and queuing it keeps the native answer. The keys live in one
 * process-wide table of fixed size: a key that is lost (its slot taken by
 * another) only sends the next repeat synchronously again. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "apigen_rt.h"

#define SLOTS 8192 /* a power of two */
#define PROBE 8

static _Atomic uint64_t slots[SLOTS];
static int off = -1; /* APIGEN_REPEAT=0: every call goes sync (the control) */

static uint64_t fmix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

uint64_t apigen_repeat_mix_u64(uint64_t key, uint64_t v)
{
    return fmix(key ^ fmix(v + 0x9e3779b97f4a7c15ull));
}

uint64_t apigen_repeat_mix(uint64_t key, const void *p, size_t n)
{
    const unsigned char *b = p;
    key = apigen_repeat_mix_u64(key, n);
    while (n) {
        uint64_t v = 0;
        size_t k = n < 8 ? n : 8;
        memcpy(&v, b, k);
        key = apigen_repeat_mix_u64(key, v);
        b += k;
        n -= k;
    }
    return key;
}

uint64_t apigen_repeat_key(const apigen_api *api, uint32_t call_id)
{
    return apigen_repeat_mix_u64(fmix((uint64_t)(uintptr_t)api), call_id);
}

static bool enabled(void)
{
    int o = __atomic_load_n(&off, __ATOMIC_RELAXED);
    if (o < 0) {
        const char *v = getenv("APIGEN_REPEAT");
        o = v && strcmp(v, "0") == 0;
        __atomic_store_n(&off, o, __ATOMIC_RELAXED);
    }
    return !o;
}

bool apigen_repeat_known(uint64_t key)
{
    if (!enabled())
        return false;
    key |= 1; /* 0 marks a free slot */
    for (unsigned i = 0; i < PROBE; i++) {
        uint64_t v = atomic_load_explicit(&slots[(key + i) & (SLOTS - 1)], memory_order_relaxed);
        if (v == key)
            return true;
        if (!v)
            return false;
    }
    return false;
}

void apigen_repeat_note(uint64_t key)
{
    if (!enabled())
        return;
    key |= 1;
    for (unsigned i = 0; i < PROBE; i++) {
        _Atomic uint64_t *s = &slots[(key + i) & (SLOTS - 1)];
        uint64_t v = atomic_load_explicit(s, memory_order_relaxed);
        if (v == key)
            return;
        if (!v && atomic_compare_exchange_strong(s, &v, key))
            return;
        if (v == key)
            return;
    }
    /* the neighbourhood is full: the newest key replaces the first */
    atomic_store_explicit(&slots[key & (SLOTS - 1)], key, memory_order_relaxed);
}
