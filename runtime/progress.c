/* Progress of long operations a person waits on (a large buffer sent over a
 * slow link, a multi-GB copy): one line a second on stderr, when
 * APIGEN_PROGRESS=1, or when it is unset and stderr is a terminal
 * (APIGEN_PROGRESS=0: never). Off, an operation costs one load and a
 * predictable branch (rt_progress_wanted). */
#define _GNU_SOURCE
#include "rt_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int rt_progress_state_; /* 0 not read yet, 1 off, 2 on (__atomic_* only) */
static size_t progress_min = (size_t)64 << 20;
static pthread_once_t progress_once = PTHREAD_ONCE_INIT;

static void progress_init(void)
{
    const char *v = getenv("APIGEN_PROGRESS");
    int on = v && *v ? strcmp(v, "0") != 0 : isatty(2);
    const char *m = getenv("APIGEN_PROGRESS_MIN");
    if (m && *m) {
        char *end;
        unsigned long long x = strtoull(m, &end, 10);
        if (*end == 0)
            progress_min = (size_t)x;
    }
    __atomic_store_n(&rt_progress_state_, on ? 2 : 1, __ATOMIC_RELEASE);
}

bool rt_progress_wanted_slow(size_t total)
{
    pthread_once(&progress_once, progress_init);
    return __atomic_load_n(&rt_progress_state_, __ATOMIC_ACQUIRE) == 2 && total >= progress_min;
}

/* 1.5 GiB, 12.0 MiB, 512 B */
static void human(char *buf, size_t size, double v)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    snprintf(buf, size, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
}

static void report(const rt_progress *p, bool last)
{
    uint64_t now = apigen_now_ns();
    double secs = (double)(now - p->t0) / 1e9;
    char done[32], total[32], rate[32];
    human(done, sizeof done, (double)p->done);
    human(total, sizeof total, (double)p->total);
    human(rate, sizeof rate, secs > 0 ? (double)p->done / secs : 0);
    if (last)
        apigen_log("%s: %s in %.1f s (%s/s)", p->what, total, secs, rate);
    else
        apigen_log("%s: %s of %s (%d%%), %s/s", p->what, done, total,
                   (int)(p->total ? p->done * 100 / p->total : 0), rate);
}

void rt_progress_begin(rt_progress *p, const char *what, uint64_t total)
{
    p->what = what;
    p->total = total;
    p->done = 0;
    p->t0 = p->last = apigen_now_ns();
}

void rt_progress_step(rt_progress *p, uint64_t n)
{
    p->done += n;
    uint64_t now = apigen_now_ns();
    if (now - p->last >= 1000000000u && p->done < p->total) { /* a line a second at most */
        p->last = now;
        report(p, false);
    }
}

void rt_progress_end(rt_progress *p)
{
    report(p, true);
}
