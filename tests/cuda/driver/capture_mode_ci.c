/* The thread's stream capture mode, swapped (cuThreadExchangeStreamCaptureMode):
 * once a swap told the guest a thread's mode, a swap to a mode of the enum
 * is answered in the guest and sent queued (spec `thread_state: exchange:`).
 * Every answer must be native's: per thread (a second thread starts at
 * GLOBAL), an invalid mode refused with the mode left as it was, a NULL
 * pointer refused, and the server's mode must follow the queued swaps: after
 * a context is destroyed (every thread's kept state unknown) the next swap
 * asks the server, whose answer is the last mode set. tests/cuda/fake_diff.sh
 * runs it natively over the stand-in driver (fake_arrays.c) and through the
 * driver stub; with FAKE_DIFF_TRIPS it also counts the swaps that made a
 * round trip between the MARK lines (none: PyTorch's guard pattern). */
#include <pthread.h>
#include <stdio.h>

#include <cuda.h>

static void swap(const char *who, CUstreamCaptureMode to)
{
    CUstreamCaptureMode m = to;
    CUresult e = cuThreadExchangeStreamCaptureMode(&m);
    printf("%s: exchange(%d): %d, now %d\n", who, (int)to, (int)e, (int)m);
}

static void *other_thread(void *arg)
{
    (void)arg;
    swap("thread", CU_STREAM_CAPTURE_MODE_THREAD_LOCAL); /* was GLOBAL: its own mode */
    swap("thread", CU_STREAM_CAPTURE_MODE_RELAXED);
    swap("thread", (CUstreamCaptureMode)3);
    swap("thread", CU_STREAM_CAPTURE_MODE_GLOBAL);
    return NULL;
}

int main(void)
{
    CUdevice d;
    CUcontext c, c2;
    if (cuInit(0) || cuDeviceGet(&d, 0) || cuCtxCreate(&c, NULL, 0, d)) {
        printf("setup failed\n");
        return 1;
    }
    swap("main", CU_STREAM_CAPTURE_MODE_RELAXED); /* the first: asks the server */
    swap("main", CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
    swap("main", (CUstreamCaptureMode)7); /* refused, the mode kept */
    swap("main", (CUstreamCaptureMode)-1);
    printf("main: exchange(NULL): %d\n", (int)cuThreadExchangeStreamCaptureMode(NULL));
    swap("main", CU_STREAM_CAPTURE_MODE_RELAXED);

    pthread_t t;
    if (pthread_create(&t, NULL, other_thread, NULL) != 0 || pthread_join(t, NULL) != 0) {
        printf("thread failed\n");
        return 1;
    }
    swap("main", CU_STREAM_CAPTURE_MODE_RELAXED); /* the other thread's swaps were its own */

    /* PyTorch's guard: relaxed around a piece of work, the old mode back */
    unsigned long sum = 0;
    fprintf(stderr, "MARK guard begin\n");
    for (int i = 0; i < 200; i++) {
        CUstreamCaptureMode m =
            i % 3 == 0 ? CU_STREAM_CAPTURE_MODE_GLOBAL : CU_STREAM_CAPTURE_MODE_RELAXED;
        CUresult e = cuThreadExchangeStreamCaptureMode(&m);
        sum = sum * 3 + (unsigned long)m + 7 * (unsigned long)e;
        e = cuThreadExchangeStreamCaptureMode(&m); /* back */
        sum = sum * 3 + (unsigned long)m + 7 * (unsigned long)e;
        if (i % 50 == 49) { /* the last swap left THREAD_LOCAL */
            m = CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
            e = cuThreadExchangeStreamCaptureMode(&m);
            sum = sum * 3 + (unsigned long)m + 7 * (unsigned long)e;
        }
    }
    fprintf(stderr, "MARK guard end\n");
    printf("guard: %lu\n", sum);

    /* a context destroyed: the kept modes unknown; the server's is asked */
    if (cuCtxCreate(&c2, NULL, 0, d) || cuCtxDestroy(c2) || cuCtxSetCurrent(c)) {
        printf("second context failed\n");
        return 1;
    }
    swap("main", CU_STREAM_CAPTURE_MODE_GLOBAL); /* the server's mode: THREAD_LOCAL */
    swap("main", CU_STREAM_CAPTURE_MODE_GLOBAL);
    printf("cuCtxDestroy: %d\n", (int)cuCtxDestroy(c));
    return 0;
}
