/* transports/spin.h: how long a receiver spins before it sleeps, learned per
 * connection (spin.c). */
#ifndef APIGEN_TP_SPIN_H
#define APIGEN_TP_SPIN_H

#include <stdbool.h>
#include <stdint.h>

/* A connection's spin budget for waits on data: starts at the transport's
 * base (APIGEN_SHM_SPIN_US, APIGEN_SOCK_SPIN_US) and follows the waits that
 * end within APIGEN_SPIN_MAX_US. */
typedef struct tp_spin {
    int64_t ns;
    bool yields; /* a caller's waits for replies: yield after the spin (tp_yield_ns) */
} tp_spin;

/* The base and cap in ns of a transport whose base is read from env_base
 * (default dflt_us). Read once per name; the cap is never below the base. */
void tp_spin_config(const char *env_base, int64_t dflt_us, int64_t *base_ns, int64_t *cap_ns);
/* The budget for the next wait (base until a wait was learned). */
int64_t tp_spin_budget(const tp_spin *s, int64_t base_ns);
/* A wait on data that lasted waited_ns ended: the next one spins about twice
 * as long when this one was short enough to catch by spinning (at most the
 * cap), the base when it was not (a peer that thinks or sleeps: the CPU is
 * not burnt for nothing). A base of 0 (sleep at once) learns nothing. */
void tp_spin_learn(tp_spin *s, int64_t base_ns, int64_t cap_ns, int64_t waited_ns);
/* How long (ns) a wait of s yields the CPU after its spin before it sleeps:
 * APIGEN_YIELD_US where s waits for replies (default 2000 on 4 or more
 * CPUs, else 0), else 0. */
int64_t tp_yield_ns(const tp_spin *s);
/* CLOCK_MONOTONIC in ns: every transport's clock. */
int64_t tp_mono_ns(void);

/* One pause of a spinning wait (the CPU's spin-loop hint). */
static inline void tp_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

#endif
