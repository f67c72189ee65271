/* The calling thread's current device, answered in the guest where the
 * stub knows it (specs/cudart.yaml, thread_state): after a successful
 * cudaSetDevice and after one cudaGetDevice, until the next cudaSetDevice;
 * a failed cudaSetDevice leaves the device as it was; a new thread starts
 * on device 0. tests/cuda/device_state.sh runs it natively and forwarded
 * over two servers and counts what reached each. */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdio.h>

static void P(const char *what, cudaError_t e) { printf("%s: %s\n", what, cudaGetErrorName(e)); }

/* n cudaGetDevice calls: the device if every one said the same, else -2 */
static int ask(int n)
{
    int first = -1;
    for (int i = 0; i < n; i++) {
        int d = -1;
        if (cudaGetDevice(&d) != cudaSuccess) return -3;
        if (i == 0) first = d;
        else if (d != first) return -2;
    }
    return first;
}

static void *fresh_thread(void *arg)
{
    (void)arg;
    printf("a new thread: cudaGetDevice x10 = %d\n", ask(10));
    return NULL;
}

int main(void)
{
    int n = 0;
    P("cudaGetDeviceCount", cudaGetDeviceCount(&n));
    printf("devices: %d\n", n);
    printf("before any cudaSetDevice: cudaGetDevice x10 = %d\n", ask(10));
    P("cudaSetDevice(n - 1)", cudaSetDevice(n - 1));
    printf("then cudaGetDevice x100 = %d\n", ask(100));
    P("cudaSetDevice(n) (no such device)", cudaSetDevice(n));
    printf("then cudaGetDevice x100 = %d\n", ask(100));
    P("cudaSetDevice(1)", cudaSetDevice(1));
    printf("then cudaGetDevice x100 = %d\n", ask(100));
    pthread_t t;
    if (pthread_create(&t, NULL, fresh_thread, NULL) == 0) pthread_join(t, NULL);
    printf("this thread again: cudaGetDevice x10 = %d\n", ask(10));
    P("cudaSetDevice(0)", cudaSetDevice(0));
    printf("then cudaGetDevice x10 = %d\n", ask(10));
    return 0;
}
