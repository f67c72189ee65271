/* exa_sync_storm: several threads queue async launches and then all
 * synchronize at the same moment, round after round.
 *
 *   exa_sync_storm [THREADS [ROUNDS]]      (defaults 4 and 300)
 *
 * Each round every thread queues fills of its own device buffer on a shared
 * context (the last fill's value is the round's), waits at a barrier so
 * that all of them call exaFinish at once, then reads its neighbour's
 * buffer: exaFinish runs every launch queued before it, so the neighbour's
 * value must be there. Forwarded, this is the case of two guest threads
 * each sending a wait frame while the other holds its queue (regression
 * test for a deadlock where each waited for frames queued behind the
 * other's wait frame: tests/e2e exa_e2e.sh sync_storm). Prints one line per
 * thread; exit 0 when every value was right, 2 otherwise. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "exa.h"

#define MAX_THREADS 8
#define N 64 /* floats per buffer */

static int nthreads = 4, rounds = 300;
static exaContext ctx;
static void *dev[MAX_THREADS];
static pthread_barrier_t bar;
static int bad[MAX_THREADS];

static float value_of(int thread, int round) { return (float)(round * MAX_THREADS + thread + 1); }

static void *worker(void *arg)
{
    int me = (int)(size_t)arg, next = (me + 1) % nthreads;
    for (int r = 0; r < rounds; r++) {
        for (int k = 2; k >= 0; k--) /* the last one queued holds the round's value */
            if (exaLaunchFill(ctx, dev[me], value_of(me, r) - (float)k * 0.5f, N) != EXA_SUCCESS)
                bad[me]++;
        pthread_barrier_wait(&bar);
        exaStatus st = exaFinish(ctx); /* all threads at once */
        float got[N];
        if (st != EXA_SUCCESS ||
            exaMemcpy(got, dev[next], sizeof got, EXA_COPY_DEVICE_TO_HOST) != EXA_SUCCESS) {
            fprintf(stderr, "thread %d round %d: exaFinish or exaMemcpy failed (%s)\n", me, r,
                    exaStatusString(st));
            bad[me]++;
        } else if (got[0] != value_of(next, r) || got[N - 1] != value_of(next, r)) {
            fprintf(stderr, "thread %d round %d: thread %d's buffer holds %g, want %g\n", me, r,
                    next, got[0], value_of(next, r));
            bad[me]++;
        }
        pthread_barrier_wait(&bar); /* nobody refills before every read is done */
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        nthreads = atoi(argv[1]);
    if (argc > 2)
        rounds = atoi(argv[2]);
    if (nthreads < 2 || nthreads > MAX_THREADS || rounds < 1) {
        fprintf(stderr, "usage: exa_sync_storm [THREADS 2-%d [ROUNDS]]\n", MAX_THREADS);
        return 2;
    }
    if (exaCreateContext(0, "storm", &ctx) != EXA_SUCCESS)
        return 2;
    for (int i = 0; i < nthreads; i++)
        if (exaMalloc(&dev[i], N * sizeof(float)) != EXA_SUCCESS)
            return 2;
    pthread_barrier_init(&bar, NULL, (unsigned)nthreads);
    pthread_t th[MAX_THREADS];
    for (int i = 0; i < nthreads; i++)
        pthread_create(&th[i], NULL, worker, (void *)(size_t)i);
    int failed = 0;
    for (int i = 0; i < nthreads; i++) {
        pthread_join(th[i], NULL);
        printf("thread %d: %d rounds, %d wrong\n", i, rounds, bad[i]);
        failed |= bad[i] != 0;
    }
    for (int i = 0; i < nthreads; i++)
        exaFree(dev[i]);
    exaDestroyContext(ctx);
    return failed ? 2 : 0;
}
