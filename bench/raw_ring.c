/* The shared-memory floor in plain C: two processes ping-pong a 64-byte
 * message through two single-producer single-consumer rings in an anonymous
 * shared mapping, spinning on the head counter, no library, no system call,
 * no sleeping. It is what DESIGN.md's "shared-memory spin ping-pong" floor
 * measures; apigen-bench prints it beside the shm transport's own
 * ping-pong, so a table shows what the transport adds and what the
 * runtime adds, each on the machine it ran on. */
#define _GNU_SOURCE
#include "raw_ring.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RING_BYTES 65536u
#define MSG 64u

typedef struct raw_ring {
    _Alignas(64) _Atomic uint64_t head; /* bytes written */
    _Alignas(64) _Atomic uint64_t tail; /* bytes read (never waited on: 64 B never fills it) */
    _Alignas(64) uint8_t data[RING_BYTES];
} raw_ring;

typedef struct raw_pair {
    raw_ring ring[2]; /* [0] parent -> child, [1] child -> parent */
    _Atomic int stop;
} raw_pair;

static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static void put(raw_ring *r, const uint8_t *msg)
{
    uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    memcpy(r->data + (h % RING_BYTES), msg, MSG);
    atomic_store_explicit(&r->head, h + MSG, memory_order_release);
}

/* false: told to stop while waiting */
static bool get(raw_ring *r, uint8_t *msg, _Atomic int *stop)
{
    uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    while (atomic_load_explicit(&r->head, memory_order_acquire) == t) {
        if (atomic_load_explicit(stop, memory_order_relaxed))
            return false;
        relax();
    }
    memcpy(msg, r->data + (t % RING_BYTES), MSG);
    atomic_store_explicit(&r->tail, t + MSG, memory_order_release);
    return true;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double raw_ring_pingpong_us(int rounds, int n, void (*echo_setup)(void))
{
    raw_pair *p = mmap(NULL, sizeof *p, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    memset(p, 0, sizeof *p);
    pid_t pid = fork();
    if (pid < 0) {
        munmap(p, sizeof *p);
        return -1;
    }
    if (pid == 0) { /* echo */
        if (echo_setup)
            echo_setup();
        uint8_t m[MSG];
        while (get(&p->ring[0], m, &p->stop))
            put(&p->ring[1], m);
        _exit(0);
    }
    uint8_t m[MSG] = {1};
    double best = -1;
    for (int round = 0; round < rounds; round++) {
        double t0 = now_s();
        for (int i = 0; i < n; i++) {
            put(&p->ring[0], m);
            if (!get(&p->ring[1], m, &p->stop))
                break;
        }
        double us = (now_s() - t0) * 1e6 / n;
        if (best < 0 || us < best)
            best = us;
    }
    atomic_store(&p->stop, 1);
    if (waitpid(pid, NULL, 0) < 0)
        kill(pid, SIGKILL);
    munmap(p, sizeof *p);
    return best;
}
