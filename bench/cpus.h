#ifndef APIGEN_BENCH_CPUS_H
#define APIGEN_BENCH_CPUS_H

#include <stdbool.h>
#include <stddef.h>

/* --cpus GUEST:SERVER: the guest side of every measurement (the worker, the
 * measuring end of the floors) runs on the CPUs of GUEST, the server side
 * (the server, the echo end of the floors) on those of SERVER, each a Linux
 * CPU list ("2", "2,3", "2-5"). On a many-core VM a run's latency depends on
 * which two cores the scheduler picked (the GPU machine's floor moved
 * 0.42-0.61 us between runs); pinned, every run and every line of the table
 * uses the same pair. Without --cpus nothing is pinned. */

/* Parses "GUEST:SERVER"; false (with why) when malformed or a CPU is not ours. */
bool cpus_parse(const char *spec, char *why, size_t whylen);
/* The calling process (and the threads it starts from now on) onto the guest
 * or server CPUs, or back to what it had before; each a no-op without --cpus. */
void cpus_pin_guest(void);
void cpus_pin_server(void);
void cpus_unpin(void);

#endif
