/* Whether the default stream captures, answered in the guest by the driver
 * stub (specs/cuda/capture.c) while the process has no capture open:
 * tests/cuda/settle_ci.sh runs this natively and forwarded over the stand-in
 * driver (tests/cuda/driver/fake_driver.c: one capture at a time, the legacy
 * stream refused while it is open), requires the same output, and counts the
 * cuStreamIsCapturing calls answered in the guest (marked "kept"): a default
 * stream of a context the guest knows current; a created stream, no known
 * context, and everything while a capture is open (from its begin to its
 * successful or invalidated end; a refused begin or end changes nothing)
 * go to the driver. */
#include <stdint.h>
#include <stdio.h>

#include <cuda.h>

static void ask(const char *what, CUstream s)
{
    CUstreamCaptureStatus st = (CUstreamCaptureStatus)-1;
    CUresult e = cuStreamIsCapturing(s, &st);
    printf("%s: %d, status %d\n", what, (int)e, e == CUDA_SUCCESS ? (int)st : -1);
}

int main(void)
{
    CUdevice d;
    CUcontext c;
    CUstream s, s2;
    CUgraph g;
    CUdeviceptr mem = 0;
    if (cuInit(0) || cuDeviceGet(&d, 0) || cuDevicePrimaryCtxRetain(&c, d) || cuCtxSetCurrent(c) ||
        cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) || cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING) ||
        cuMemAlloc(&mem, 64)) {
        printf("setup failed\n");
        return 1;
    }
    for (int i = 0; i < 5; i++)
        ask("the legacy stream, NULL", NULL);          /* kept 1-5 */
    ask("CU_STREAM_LEGACY", CU_STREAM_LEGACY);         /* kept 6 */
    ask("CU_STREAM_PER_THREAD", CU_STREAM_PER_THREAD); /* kept 7 */
    ask("a created stream", s);
    printf("cuCtxSetCurrent(NULL): %d\n", (int)cuCtxSetCurrent(NULL));
    ask("no context the guest knows", NULL);
    printf("cuCtxSetCurrent(primary): %d\n", (int)cuCtxSetCurrent(c));
    ask("the legacy stream again", NULL); /* kept 8 */
    printf("cuStreamBeginCapture: %d\n",
           (int)cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    ask("the capturing stream", s);
    ask("the legacy stream while it captures", NULL);
    ask("CU_STREAM_PER_THREAD while it captures", CU_STREAM_PER_THREAD);
    printf("cuStreamEndCapture: %d\n", (int)cuStreamEndCapture(s, &g));
    ask("the legacy stream after the capture", NULL); /* kept 9: none open */
    ask("the created stream after it", s);
    /* a capture invalidated (its stream synchronized): the driver ends it
     * with a NULL graph, which NVIDIA's runtime hands on to the program */
    printf("cuStreamBeginCapture again: %d\n",
           (int)cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    printf("cuStreamSynchronize of the capturing stream: %d\n", (int)cuStreamSynchronize(s));
    /* work queued into the invalidated capture fails there; unlooked at, as
     * programs leave their launches: the capture's end reports it, and no
     * later call may fail for it (the driver stub queues the memset, and
     * its error came back with the end's own) */
    (void)cuMemsetD8Async(mem, 1, 64, s);
    g = (CUgraph)(uintptr_t)0x1234; /* what the caller's variable held */
    CUresult e = cuStreamEndCapture(s, &g);
    printf("cuStreamEndCapture of the invalidated capture: %d, graph %s\n", (int)e,
           g == NULL                         ? "NULL"
           : g == (CUgraph)(uintptr_t)0x1234 ? "left as it was"
                                             : "another");
    printf("cuMemFree after it: %d\n", (int)cuMemFree(mem));
    ask("the legacy stream after the invalidated capture's end", NULL); /* kept 10 */
    printf("cuStreamBeginCapture of the legacy stream: %d\n",
           (int)cuStreamBeginCapture(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL));
    ask("the legacy stream after a refused begin", NULL); /* kept 11 */
    printf("cuStreamBeginCapture a third time: %d\n",
           (int)cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    printf("cuStreamEndCapture of a stream that does not capture: %d\n",
           (int)cuStreamEndCapture(s2, &g));
    ask("the legacy stream while the third capture is open", NULL);
    printf("cuStreamEndCapture of the third: %d\n", (int)cuStreamEndCapture(s, &g));
    ask("the legacy stream after the third", NULL); /* kept 12 */
    return 0;
}
