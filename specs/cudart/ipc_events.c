/* Interprocess events: their records go synchronously (specs/cudart.yaml's
 * cudaEventRecord, cudaEventRecordWithFlags).
 *
 * Natively a record has reached the device's queue when cudaEventRecord
 * returns, so a process that was told so (a pipe, a barrier in shared
 * memory: NVIDIA's simpleIPC) and then waits on the event through its IPC
 * handle waits for the work before the record. A queued record may still
 * sit in this guest's queue, or in the server's, when the other process's
 * wait runs in its own session: the wait would find the event as it was
 * and the other process would read memory the work has not written yet.
 * So once this process made or opened an interprocess event (or took the
 * IPC handle of one), every record goes synchronously: the server has run
 * it, and the work queued before it, when the call returns. One flag for
 * the process, not one per event: programs that share events between
 * processes are few, and a record's round trip is what they pay. */
#include <stdatomic.h>
#include <stdbool.h>

#include "apigen_rt.h"
#include "cudart_wire.h"
#include <cuda_runtime_api.h>

cudaError_t cudart_fwd_cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags);
cudaError_t cudart_fwd_cudaIpcOpenEventHandle(cudaEvent_t *event, cudaIpcEventHandle_t handle);
cudaError_t cudart_fwd_cudaIpcGetEventHandle(cudaIpcEventHandle_t *handle, cudaEvent_t event);

static atomic_bool shared_events_;

/* set before the call: a record racing with it goes synchronously, which is
 * never wrong */
static void note_shared(void)
{
    atomic_store_explicit(&shared_events_, true, memory_order_relaxed);
}

/* async_unless of the records: true, the record goes synchronously */
bool cudart_event_record_now(cudaEvent_t event, cudaStream_t stream)
{
    (void)event, (void)stream;
    return atomic_load_explicit(&shared_events_, memory_order_relaxed);
}

bool cudart_event_record_flags_now(cudaEvent_t event, cudaStream_t stream, unsigned int flags)
{
    (void)flags;
    return cudart_event_record_now(event, stream);
}

APIGEN_EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    if (flags & cudaEventInterprocess)
        note_shared();
    return cudart_fwd_cudaEventCreateWithFlags(event, flags);
}

APIGEN_EXPORT cudaError_t cudaIpcOpenEventHandle(cudaEvent_t *event, cudaIpcEventHandle_t handle)
{
    note_shared();
    return cudart_fwd_cudaIpcOpenEventHandle(event, handle);
}

APIGEN_EXPORT cudaError_t cudaIpcGetEventHandle(cudaIpcEventHandle_t *handle, cudaEvent_t event)
{
    note_shared();
    return cudart_fwd_cudaIpcGetEventHandle(handle, event);
}
