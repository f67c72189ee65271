#ifndef APIGEN_BENCH_RAW_RING_H
#define APIGEN_BENCH_RAW_RING_H

/* Best microseconds per 64-byte round trip over `rounds` rounds of n, two
 * processes spinning on plain shared-memory rings; < 0 when it could not run.
 * echo_setup (may be NULL) runs first in the echoing child. */
double raw_ring_pingpong_us(int rounds, int n, void (*echo_setup)(void));

#endif
