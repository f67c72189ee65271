/* The stand-in device's stream captures, as far as tests/cuda/lasterr_ci.c
 * uses them (with fake_device.c; no GPU in CI): cudaStreamBeginCapture marks
 * a created stream as capturing (a default stream cannot capture),
 * cudaStreamIsCapturing says whether a stream captures, cudaStreamEndCapture
 * ends it with a graph handle nobody launches. Synchronizing a capturing
 * stream is refused and invalidates its capture (fake_device.c asks
 * fake_capture_sync): work queued on it then fails (fake_capture_gone), and
 * its end says so with no graph, as the driver does (capture_refused_ci.c).
 * Never used with a GPU. */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdbool.h>

#define FAKE __attribute__((visibility("default")))
#define MAX_CAPTURES 16

cudaError_t fake_fail(cudaError_t e); /* fake_device.c: and the thread's last error */

static pthread_mutex_t mu_ = PTHREAD_MUTEX_INITIALIZER;
static cudaStream_t capturing_[MAX_CAPTURES];
static bool invalid_[MAX_CAPTURES];
static int graph_token_;

static int find(cudaStream_t s)
{
    for (int i = 0; i < MAX_CAPTURES; i++)
        if (capturing_[i] == s) return i;
    return -1;
}

static bool is_default(cudaStream_t s)
{
    return !s || s == cudaStreamLegacy || s == cudaStreamPerThread;
}

FAKE cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
    (void)mode;
    if (is_default(stream)) return fake_fail(cudaErrorStreamCaptureUnsupported);
    pthread_mutex_lock(&mu_);
    int i = find(stream) >= 0 ? -2 : find(NULL);
    if (i >= 0) capturing_[i] = stream, invalid_[i] = false;
    pthread_mutex_unlock(&mu_);
    return i >= 0 ? cudaSuccess : fake_fail(cudaErrorIllegalState);
}

FAKE cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph)
{
    if (!pGraph) return fake_fail(cudaErrorInvalidValue);
    pthread_mutex_lock(&mu_);
    int i = is_default(stream) ? -1 : find(stream);
    bool invalid = i >= 0 && invalid_[i];
    if (i >= 0) capturing_[i] = NULL;
    pthread_mutex_unlock(&mu_);
    if (i < 0) return fake_fail(cudaErrorIllegalState);
    *pGraph = invalid ? NULL : (cudaGraph_t)(void *)&graph_token_;
    return invalid ? fake_fail(cudaErrorStreamCaptureInvalidated) : cudaSuccess;
}

FAKE cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *status)
{
    if (!status) return fake_fail(cudaErrorInvalidValue);
    pthread_mutex_lock(&mu_);
    int i = is_default(stream) ? -1 : find(stream);
    bool invalid = i >= 0 && invalid_[i];
    pthread_mutex_unlock(&mu_);
    *status = i < 0     ? cudaStreamCaptureStatusNone
              : invalid ? cudaStreamCaptureStatusInvalidated
                        : cudaStreamCaptureStatusActive;
    return cudaSuccess;
}

/* fake_device.c's cudaStreamSynchronize: refused on a capturing stream,
 * whose capture it invalidates */
cudaError_t fake_capture_sync(cudaStream_t stream)
{
    pthread_mutex_lock(&mu_);
    int i = is_default(stream) ? -1 : find(stream);
    if (i >= 0) invalid_[i] = true;
    pthread_mutex_unlock(&mu_);
    return i >= 0 ? fake_fail(cudaErrorStreamCaptureUnsupported) : cudaSuccess;
}

/* fake_device.c's async work: on the stream of an invalidated capture it
 * fails with cudaErrorStreamCaptureInvalidated */
bool fake_capture_gone(cudaStream_t stream)
{
    pthread_mutex_lock(&mu_);
    int i = is_default(stream) ? -1 : find(stream);
    bool gone = i >= 0 && invalid_[i];
    pthread_mutex_unlock(&mu_);
    return gone;
}
