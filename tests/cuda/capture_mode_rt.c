/* The runtime's cudaThreadExchangeStreamCaptureMode answered in the guest
 * once a swap told the thread's mode, the swap queued (spec `thread_state:
 * exchange:`; the driver's: driver/capture_mode_ci.c). Per thread, invalid
 * modes and NULL refused as natively, and after cudaDeviceReset (every
 * thread's kept state unknown) the server's mode, asked, is the last one
 * set. tests/cuda/fake_diff.sh compares it with a native run over the
 * stand-in device and counts the swaps that made a round trip between the
 * MARK lines (none). */
#include <pthread.h>
#include <stdio.h>

#include <cuda_runtime.h>

static void swap(const char *who, int to)
{
    enum cudaStreamCaptureMode m = (enum cudaStreamCaptureMode)to;
    cudaError_t e = cudaThreadExchangeStreamCaptureMode(&m);
    printf("%s: exchange(%d): %d, now %d, last error %d\n", who, to, (int)e, (int)m,
           (int)cudaGetLastError());
}

static void *other_thread(void *arg)
{
    (void)arg;
    swap("thread", cudaStreamCaptureModeRelaxed);
    swap("thread", 5);
    swap("thread", cudaStreamCaptureModeGlobal);
    return NULL;
}

int main(void)
{
    if (cudaSetDevice(0) != cudaSuccess) {
        printf("setup failed\n");
        return 1;
    }
    swap("main", cudaStreamCaptureModeThreadLocal); /* the first: asks the server */
    swap("main", cudaStreamCaptureModeRelaxed);
    swap("main", 9);
    printf("main: exchange(NULL): %d\n", (int)cudaThreadExchangeStreamCaptureMode(NULL));
    printf("main: last error %d\n", (int)cudaGetLastError());
    swap("main", cudaStreamCaptureModeRelaxed); /* after a refusal: asks the server */
    pthread_t t;
    if (pthread_create(&t, NULL, other_thread, NULL) != 0 || pthread_join(t, NULL) != 0) {
        printf("thread failed\n");
        return 1;
    }
    unsigned long sum = 0;
    fprintf(stderr, "MARK guard begin\n");
    for (int i = 0; i < 200; i++) {
        enum cudaStreamCaptureMode m =
            i % 4 ? cudaStreamCaptureModeRelaxed : cudaStreamCaptureModeThreadLocal;
        cudaError_t e = cudaThreadExchangeStreamCaptureMode(&m);
        sum = sum * 3 + (unsigned long)m + 7 * (unsigned long)e;
        e = cudaThreadExchangeStreamCaptureMode(&m); /* back */
        sum = sum * 3 + (unsigned long)m + 7 * (unsigned long)e;
    }
    fprintf(stderr, "MARK guard end\n");
    printf("guard: %lu, last error %d\n", sum, (int)cudaGetLastError());
    swap("main", cudaStreamCaptureModeGlobal);
    printf("cudaDeviceReset: %d\n", (int)cudaDeviceReset());
    swap("main", cudaStreamCaptureModeRelaxed); /* the server's mode: GLOBAL */
    return 0;
}
