#ifndef APIGEN_BENCH_RAW_STREAM_H
#define APIGEN_BENCH_RAW_STREAM_H

#include <stddef.h>

typedef struct raw_stream_opts {
    int tcp;      /* 1: loopback TCP with TCP_NODELAY; 0: AF_UNIX */
    int conns;    /* the bytes split over this many connections (1..8) */
    int buf;      /* > 0: SO_SNDBUF and SO_RCVBUF of this many bytes; 0: the kernel's autotuning */
    int zerocopy; /* 1: sends of 64 KiB or more with MSG_ZEROCOPY, completions awaited */
} raw_stream_opts;

/* Best GB/s of `rounds` copies of n bytes over a plain loopback stream
 * socket to a child process: up (1) the measuring side sends them, else (0)
 * it receives them. < 0 when it could not run. peer_setup (may be NULL)
 * runs first in the child. */
double raw_stream_gbps(const raw_stream_opts *o, int up, size_t n, int rounds,
                       void (*peer_setup)(void));

#endif
