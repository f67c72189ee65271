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
 * to the base. Past the spin, a caller's wait for a reply yields the CPU
 * (sched_yield) up to APIGEN_YIELD_US before it sleeps: a synchronize that
 * waits 445 us on ten passes of two kernels lost 20-45 us to the wake-up,
 * and a yielding waiter leaves the core to any thread that wants it. A
 * server's wait for requests (an idle client) never yields. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "spin.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SPIN_MAX_US_DEFAULT 200
/* Past the spin, a caller waiting for a reply yields this long: a sync call
 * that waits on a kernel of up to 2 ms (issue 16's multi-pass loop: 445 us)
 * sees its reply at once instead of after a wake-up. Only where this process
 * may run on YIELD_MIN_CPUS or more: as a vendor runtime spins only while it has fewer
 * contexts than CPUs, a waiter that stays runnable must not take the core a
 * local server's thread needs (on 2 CPUs with exa's CPU "device", 1 in 3
 * runs of a 0.5 ms sync loop lost 10%). */
#define YIELD_US_DEFAULT 2000
#define YIELD_MIN_CPUS 4

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

static int64_t yield_cfg_ns;
static pthread_once_t yield_once = PTHREAD_ONCE_INIT;
static void yield_init(void)
{
    cpu_set_t set;
    int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    int64_t dflt = cpus >= YIELD_MIN_CPUS ? YIELD_US_DEFAULT : 0;
    yield_cfg_ns = env_us("APIGEN_YIELD_US", dflt) * 1000; /* set: as it says, whatever the CPUs */
}

int64_t tp_yield_ns(const tp_spin *s)
{
    if (!s || !s->yields)
        return 0;
    pthread_once(&yield_once, yield_init);
    return yield_cfg_ns;
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
