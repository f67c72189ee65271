/* Events through the driver stub (specs/cuda/events.c queues a create of
 * valid flags in a current context, and the destroy of an event the process
 * knows live): every answer must be the driver's, at the call, as natively.
 * tests/cuda/driver_events_ci.sh runs this natively over the stand-in driver
 * (tests/cuda/driver/fake_arrays.c) and forwarded, compares the outputs, and
 * counts the round trips of the loop phase (between the two
 * cuCtxSynchronize markers) in the guest's trace, and those of the records
 * made after the process created an interprocess event (one each). */
#include <stdio.h>
#include <stdlib.h>

#include <cuda.h>

static int failures;

static void show(const char *what, CUresult e)
{
    printf("%s: %d\n", what, (int)e);
}

static void expect(const char *what, CUresult e, CUresult want)
{
    show(what, e);
    if (e != want) {
        printf("  (want %d)\n", (int)want);
        failures++;
    }
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 50;
    CUdevice dev;
    CUcontext ctx, other;
    CUevent ev, a, b;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS) {
        printf("no device\n");
        return 1;
    }
    expect("cuCtxCreate", cuCtxCreate(&ctx, NULL, 0, dev), CUDA_SUCCESS);

    /* the loop a training step makes: create, record, wait, destroy */
    expect("marker before the loop", cuCtxSynchronize(), CUDA_SUCCESS);
    int bad = 0;
    for (int i = 0; i < rounds; i++) {
        unsigned flags = i % 2 ? CU_EVENT_DISABLE_TIMING : CU_EVENT_DEFAULT;
        bad += cuEventCreate(&a, flags) != CUDA_SUCCESS;
        bad += cuEventCreate(&b, CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS;
        bad += cuEventRecord(a, NULL) != CUDA_SUCCESS;
        bad += cuEventRecord(b, NULL) != CUDA_SUCCESS;
        bad += cuEventDestroy(a) != CUDA_SUCCESS;
        bad += cuEventDestroy(b) != CUDA_SUCCESS;
    }
    expect("marker after the loop", cuCtxSynchronize(), CUDA_SUCCESS);
    printf("loop of %d rounds: %d failed calls\n", rounds, bad);
    failures += bad != 0;

    /* an event made queued is usable at once, by another call */
    expect("create", cuEventCreate(&ev, 0), CUDA_SUCCESS);
    expect("record it", cuEventRecord(ev, NULL), CUDA_SUCCESS);
    expect("synchronize it", cuEventSynchronize(ev), CUDA_SUCCESS);
    expect("query it", cuEventQuery(ev), CUDA_SUCCESS);
    expect("destroy it", cuEventDestroy(ev), CUDA_SUCCESS);
    /* the driver's refusals come at the call (a second destroy of one event
     * is left out: undefined natively; driver 580 says
     * CUDA_ERROR_CONTEXT_IS_DESTROYED, the stub CUDA_ERROR_INVALID_HANDLE) */
    expect("create, unknown flag 0x80", cuEventCreate(&ev, 0x80), CUDA_ERROR_INVALID_VALUE);
    expect("create, interprocess with timing", cuEventCreate(&ev, CU_EVENT_INTERPROCESS),
           CUDA_ERROR_INVALID_VALUE);
    expect("create, no out pointer", cuEventCreate(NULL, 0), CUDA_ERROR_INVALID_VALUE);
    expect("create, interprocess without timing",
           cuEventCreate(&ev, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
    expect("destroy that", cuEventDestroy(ev), CUDA_SUCCESS);

    /* this process has made an interprocess event: another process may wait
     * on what it records, so every record goes synchronously (events.c): the
     * script counts one round trip per record between these markers */
    expect("create one to record", cuEventCreate(&a, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
    expect("marker before the shared records", cuCtxSynchronize(), CUDA_SUCCESS);
    for (int i = 0; i < rounds; i++)
        bad += cuEventRecord(a, NULL) != CUDA_SUCCESS;
    expect("marker after the shared records", cuCtxSynchronize(), CUDA_SUCCESS);
    expect("destroy it", cuEventDestroy(a), CUDA_SUCCESS);
    printf("%d records after an interprocess event: %d failed\n", rounds, bad);
    failures += bad != 0;

    /* no context current: refused at the call */
    expect("cuCtxSetCurrent(NULL)", cuCtxSetCurrent(NULL), CUDA_SUCCESS);
    expect("create without a context", cuEventCreate(&ev, 0), CUDA_ERROR_INVALID_CONTEXT);
    expect("cuCtxSetCurrent(ctx)", cuCtxSetCurrent(ctx), CUDA_SUCCESS);

    /* an event whose context ended: the driver's answer, not a queued success */
    expect("second context", cuCtxCreate(&other, NULL, 0, dev), CUDA_SUCCESS);
    expect("create in it", cuEventCreate(&ev, 0), CUDA_SUCCESS);
    expect("keep one in the first", cuCtxSetCurrent(ctx), CUDA_SUCCESS);
    expect("create in the first", cuEventCreate(&a, 0), CUDA_SUCCESS);
    expect("destroy the second context", cuCtxDestroy(other), CUDA_SUCCESS);
    expect("destroy its event", cuEventDestroy(ev), CUDA_ERROR_CONTEXT_IS_DESTROYED);
    expect("the first context's event lives", cuEventRecord(a, NULL), CUDA_SUCCESS);
    expect("destroy it", cuEventDestroy(a), CUDA_SUCCESS);
    expect("a call after all that", cuCtxSynchronize(), CUDA_SUCCESS);
    expect("cuCtxDestroy", cuCtxDestroy(ctx), CUDA_SUCCESS);
    printf("%s\n", failures ? "FAILED" : "all as the driver answers");
    return failures != 0;
}
