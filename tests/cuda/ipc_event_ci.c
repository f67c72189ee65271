/* tests/cuda/ipc_event_ci.c: records of an event are queued (no round trip)
 * until the process makes an interprocess event; from then on every record
 * goes synchronously, since another process may wait on it through its IPC
 * handle as soon as this one says it recorded (NVIDIA's simpleIPC;
 * specs/cudart/ipc_events.c). tests/cuda/trips_ci.sh counts the round trips
 * of cudaEventRecord between the MARK lines: 10, those after the
 * interprocess event; the answers are the same natively and forwarded. */
#include <stdio.h>

#include <cuda_runtime_api.h>

int main(void)
{
    cudaEvent_t a = NULL, shared = NULL;
    cudaStream_t s = NULL;
    if (cudaStreamCreate(&s) != cudaSuccess ||
        cudaEventCreateWithFlags(&a, cudaEventDisableTiming) != cudaSuccess) {
        printf("setup failed\n");
        return 1;
    }
    int bad = 0;
    fprintf(stderr, "MARK private begin\n");
    for (int i = 0; i < 5; i++)
        bad += cudaEventRecord(a, s) != cudaSuccess;
    fprintf(stderr, "MARK private end\n");
    printf("5 records of a private event: %d failed, sync %d\n", bad,
           (int)cudaStreamSynchronize(s));
    cudaError_t e =
        cudaEventCreateWithFlags(&shared, cudaEventInterprocess | cudaEventDisableTiming);
    printf("an interprocess event: %d\n", (int)e);
    bad = 0;
    fprintf(stderr, "MARK shared begin\n");
    for (int i = 0; i < 5; i++) {
        bad += cudaEventRecord(shared, s) != cudaSuccess;
        bad += cudaEventRecordWithFlags(a, s, 0) != cudaSuccess;
    }
    fprintf(stderr, "MARK shared end\n");
    printf("10 records after it: %d failed, sync %d\n", bad, (int)cudaStreamSynchronize(s));
    printf("last error: %d\n", (int)cudaGetLastError());
    return 0;
}
