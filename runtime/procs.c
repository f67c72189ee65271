/* Guest processes (apigen_rt.h "Guest processes"): which server process
 * stands for which guest process, for host code that forwards a device's
 * process list (a monitoring API) or takes a pid.
 *
 * --isolation process: each session has a process of its own. The parent
 * writes one slot per session process (its pid, the guest's pid and pid
 * space) in a table it maps shared before the first fork, so every session
 * child reads the others' slots; a slot is published by its pid (release)
 * and read twice around its fields, so a reader never takes a half-written
 * one. --isolation thread: every session shares this process, whose device
 * figures are then no one session's own (*shared). */
#define _GNU_SOURCE
#include "rt_internal.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct slot {
    _Atomic long spid; /* 0: free */
    uint64_t gpid;
    char pidns[RT_PIDNS_MAX];
} slot;

static slot *g_tab;
static unsigned g_nslots;
static bool g_own; /* a session child: this process serves one session */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER; /* writers (the parent) */

void rt_procs_init(unsigned slots)
{
    if (g_tab || !slots)
        return;
    void *p = mmap(NULL, (size_t)slots * sizeof(slot), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        apigen_log("no table of session processes (mmap failed): a guest's GPU process lists "
                   "show its own session only");
        return;
    }
    g_tab = p;
    g_nslots = slots;
}

void rt_procs_add(long spid, uint64_t gpid, const char *pidns)
{
    if (!g_tab || spid <= 0 || !gpid || !pidns || !pidns[0])
        return; /* a guest that did not say its pid space sees itself only */
    pthread_mutex_lock(&g_mu);
    for (unsigned i = 0; i < g_nslots; i++) {
        slot *s = &g_tab[i];
        if (atomic_load_explicit(&s->spid, memory_order_relaxed))
            continue;
        s->gpid = gpid;
        snprintf(s->pidns, sizeof s->pidns, "%s", pidns);
        atomic_store_explicit(&s->spid, spid, memory_order_release);
        break;
    }
    pthread_mutex_unlock(&g_mu);
}

void rt_procs_end(long spid)
{
    if (!g_tab || spid <= 0)
        return;
    pthread_mutex_lock(&g_mu);
    for (unsigned i = 0; i < g_nslots; i++)
        if (atomic_load_explicit(&g_tab[i].spid, memory_order_relaxed) == spid)
            atomic_store_explicit(&g_tab[i].spid, 0, memory_order_release);
    pthread_mutex_unlock(&g_mu);
}

void rt_procs_own(void)
{
    g_own = true;
}

/* slot i's fields when it holds a session process (by spid, or by guest pid
 * where spid is 0) of pid space pidns: the server pid, else 0 */
static long slot_match(unsigned i, long spid, uint64_t gpid, const char *pidns, uint64_t *gout)
{
    slot *s = &g_tab[i];
    long p = atomic_load_explicit(&s->spid, memory_order_acquire);
    if (!p || (spid && p != spid))
        return 0;
    uint64_t g = s->gpid;
    char ns[RT_PIDNS_MAX];
    memcpy(ns, s->pidns, sizeof ns);
    ns[sizeof ns - 1] = 0;
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&s->spid, memory_order_relaxed) != p)
        return 0; /* rewritten meanwhile */
    if (strcmp(ns, pidns) != 0 || (gpid && g != gpid))
        return 0;
    *gout = g;
    return p;
}

/* The sessions of this process that a guest of pid space pidns sees on the
 * device (--isolation thread: those holding device memory), with guest pid
 * gpid where it is not 0; plus the caller's own session where it holds
 * device memory and has no pid space. */
static unsigned here(apigen_call_ctx *cx, const char *pidns, uint64_t gpid, uint64_t *out,
                     unsigned max)
{
    const struct apigen_session *ses[256];
    uint64_t g[256];
    unsigned n = 0, k = rt_sessions_of_space(pidns, gpid, ses, g, 256);
    if (!pidns[0]) { /* not told: the caller's own session only */
        uint64_t mine = rt_session_guest(cx->session, NULL);
        if (mine && (!gpid || mine == gpid)) {
            ses[0] = cx->session;
            g[0] = mine;
            k = 1;
        }
    }
    for (unsigned i = 0; i < k && n < max; i++)
        if (rt_dev_session_holds(ses[i]))
            out[n++] = g[i];
    return n;
}

unsigned apigen_guest_pids(apigen_call_ctx *cx, uint64_t spid, uint64_t *gpid, unsigned max,
                           bool *shared)
{
    const char *pidns = "";
    uint64_t mine = rt_session_guest(cx->session, &pidns);
    *shared = false;
    if (!spid || !max)
        return 0;
    if (spid == (uint64_t)getpid()) {
        if (g_own) { /* this process is the session's own */
            if (!mine)
                return 0;
            gpid[0] = mine;
            return 1;
        }
        *shared = true;
        return here(cx, pidns, 0, gpid, max);
    }
    if (!g_tab || !pidns[0] || spid > (uint64_t)LONG_MAX)
        return 0;
    for (unsigned i = 0; i < g_nslots; i++) {
        uint64_t g;
        if (slot_match(i, (long)spid, 0, pidns, &g)) {
            gpid[0] = g;
            return 1;
        }
    }
    return 0;
}

uint64_t apigen_server_pid(apigen_call_ctx *cx, uint64_t gpid, bool *shared)
{
    const char *pidns = "";
    uint64_t mine = rt_session_guest(cx->session, &pidns), g;
    *shared = false;
    if (!gpid)
        return 0;
    if (g_own && gpid == mine)
        return (uint64_t)getpid();
    if (!g_own) {
        *shared = true;
        return here(cx, pidns, gpid, &g, 1) ? (uint64_t)getpid() : 0;
    }
    if (!g_tab || !pidns[0])
        return 0;
    for (unsigned i = 0; i < g_nslots; i++) {
        long p = slot_match(i, 0, gpid, pidns, &g);
        if (p)
            return (uint64_t)p;
    }
    return 0;
}
