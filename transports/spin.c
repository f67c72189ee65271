/* transports/spin.c: the spin budget of a receiver (spin.h).
 *
 * Why: a waiter that sleeps (futex, poll) is woken 5-15 us after the data
 * came on the GPU machine's VMs, where its peer answered a sync call in
 * 30 us: a program loop of two synchronous copies around a short kernel
 * (issue 16's patterns) lost a third of its speed over shm, whose waiters
 * spun only 20 us. Vendor runtimes spin through such waits themselves (by
 * default while there are fewer contexts than cores). Spinning as long as
 * the waits a connection saw, up to a cap, catches those replies; a wait
 * longer than the cap (a long kernel, an idle client) puts the budget back
 * to the base, where a few us of wake-up are noise. */
#define _POSIX_C_SOURCE 200809L
#include "spin.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SPIN_MAX_US_DEFAULT 200

int64_t tp_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t env_us(const char *name, int64_t dflt)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return dflt;
    char *end;
    long long n = strtoll(v, &end, 10);
    if (*end || n < 0)
        return dflt;
    return n > 10000000 ? 10000000 : n; /* 10 s: a bound, not a setting */
}

void tp_spin_config(const char *env_base, int64_t dflt_us, int64_t *base_ns, int64_t *cap_ns)
{
    *base_ns = env_us(env_base, dflt_us) * 1000;
    *cap_ns = env_us("APIGEN_SPIN_MAX_US", SPIN_MAX_US_DEFAULT) * 1000;
    if (*cap_ns < *base_ns)
        *cap_ns = *base_ns;
}

int64_t tp_spin_budget(const tp_spin *s, int64_t base_ns)
{
    return s->ns > base_ns ? s->ns : base_ns;
}

void tp_spin_learn(tp_spin *s, int64_t base_ns, int64_t cap_ns, int64_t waited_ns)
{
    if (base_ns <= 0)
        return;
    int64_t want = waited_ns + waited_ns / 2 + 2000; /* the wait, and room for its jitter */
    s->ns = waited_ns > cap_ns ? base_ns : want > cap_ns ? cap_ns : want;
}
