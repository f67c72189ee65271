/* Private to runtime/: the server's Prometheus metrics (--metrics URL,
 * metrics.c serves them; docs/internals.md "Metrics").
 *
 * The call path pays one predictable branch when metrics are off, and with
 * them two time-stamp reads and a few plain stores: every server connection
 * counts into a block of its own (one writer, so an add is a relaxed load
 * and store, no locked instruction), blocks are summed at scrape time and
 * never emptied (a block a connection gave back keeps its counts for the
 * next one). Under --isolation process the blocks of a session live in a
 * shared mapping its parent made before the fork, so the parent's endpoint
 * reads them without asking the child (which may be busy in the driver, or
 * dead: a crashed child's counts stay readable until the parent folds them). */
#ifndef APIGEN_RT_METRICS_H
#define APIGEN_RT_METRICS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "apigen_rt.h"

#define RT_MX_NB 8 /* latency buckets below +Inf (metrics.c: mx_le) */

/* One function's counters. hist[k]: calls whose latency was at most
 * bucket k's bound and above bucket k-1's (not cumulative). */
typedef struct rt_mx_call {
    _Atomic uint64_t calls, errors, bytes_in, bytes_out, ticks;
    _Atomic uint64_t hist[RT_MX_NB];
} rt_mx_call;

/* A connection's place to count: a block of every served API's counters,
 * each API's at its offset (rt_mx_off); shared: other connections count
 * there too (atomic adds). */
typedef struct rt_mx_slot {
    rt_mx_call *c;
    bool shared;
    void *owner; /* metrics.c's record of the block */
} rt_mx_slot;

extern bool rt_mx_on;                     /* --metrics given (set before any thread starts) */
extern bool rt_mx_tsc;                    /* rt_mx_ticks reads the TSC */
extern uint64_t rt_mx_bound[RT_MX_NB];    /* bucket bounds in ticks */

/* Time stamps for the latency histogram: the TSC where it is invariant
 * (a few ns, against ~20 for clock_gettime), else nanoseconds. */
static inline uint64_t rt_mx_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
    if (rt_mx_tsc)
        return __builtin_ia32_rdtsc();
#endif
    return apigen_now_ns();
}

static inline void rt_mx_add(_Atomic uint64_t *p, uint64_t v, bool shared)
{
    if (shared)
        atomic_fetch_add_explicit(p, v, memory_order_relaxed);
    else /* the only writer: no locked instruction */
        atomic_store_explicit(p, atomic_load_explicit(p, memory_order_relaxed) + v, memory_order_relaxed);
}

/* One dispatched call: call < its API's ncalls, off its API's rt_mx_off. */
static inline void rt_mx_count(const rt_mx_slot *s, uint32_t off, uint32_t call, bool error,
                               uint64_t in, uint64_t out, uint64_t dt)
{
    rt_mx_call *c = &s->c[off + call];
    rt_mx_add(&c->calls, 1, s->shared);
    if (error)
        rt_mx_add(&c->errors, 1, s->shared);
    rt_mx_add(&c->bytes_in, in, s->shared);
    if (out)
        rt_mx_add(&c->bytes_out, out, s->shared);
    rt_mx_add(&c->ticks, dt, s->shared);
    for (unsigned k = 0; k < RT_MX_NB; k++)
        if (dt <= rt_mx_bound[k]) {
            rt_mx_add(&c->hist[k], 1, s->shared);
            break;
        }
}

/* A connection starts counting / stops (its counts stay). */
void rt_mx_claim(rt_mx_slot *s);
/* where api's counters are in a block; UINT32_MAX: api is not served */
uint32_t rt_mx_off(const apigen_api *api);
void rt_mx_unclaim(rt_mx_slot *s);

/* A session: what the handshake told (guest pid, process name; 0/"" when
 * the guest did not send them) and the peer of its first connection. NULL
 * when metrics are off. In a session process: the record its parent made. */
struct rt_mx_sess;
struct rt_mx_sess *rt_mx_session_open(const apigen_api *api, const char *peer, uint64_t pid,
                                      const char *comm);
void rt_mx_session_close(struct rt_mx_sess *m);
/* devmem.c: device bytes a session holds (its live ranges) */
void rt_mx_devmem(struct rt_mx_sess *m, int64_t delta);

/* lanes.c, server side: lane connections taken into use, bulk bytes
 * received and sent over lanes (in a session process: its shared record) */
void rt_mx_lanes(uint64_t opened, uint64_t in, uint64_t out);

/* --isolation process, parent: a new session's shared record and counter
 * blocks, made before the fork (NULL: metrics off or no memory); the child
 * adopts it; the parent lists it under the child's pid, and folds its
 * counts into the API's totals when the child is reaped (or drops it when
 * the fork failed: pid 0). */
struct rt_mx_seg;
struct rt_mx_seg *rt_mx_seg_new(const apigen_api *api, const char *peer, uint64_t pid,
                                const char *comm);
void rt_mx_seg_child(struct rt_mx_seg *g);
void rt_mx_seg_add(struct rt_mx_seg *g, pid_t pid);
void rt_mx_seg_end(pid_t pid);
void rt_mx_seg_free(struct rt_mx_seg *g);

/* --metrics URL (tcp://host:port): listens and starts the endpoint's thread.
 * isolate: sessions run in processes, so an API's metrics hook (which may
 * touch the vendor library) runs in a collector process, never here. Call
 * before any other thread starts. false: logged. */
bool rt_mx_start(const char *url, const apigen_api *const *apis, unsigned napis, bool isolate);
void rt_mx_stop(void);
/* The collector or a session child: pid of the collector (0: none). */
pid_t rt_mx_collector_pid(void);

#endif
