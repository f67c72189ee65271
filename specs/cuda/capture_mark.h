/* capture_mark.h: the count (apigen_mark_add, runtime/marks.c) of the
 * stream captures the process began through the CUDA driver's or the
 * runtime's stub and did not end yet: a stub answers a capture query in the
 * guest, queues what a capture would refuse and lets async copies skip the
 * capture question only while no capture is open (specs/cuda/capture.c,
 * specs/cudart/guest.c). Counted up before a begin is sent (a call racing
 * with it asks), down after a successful or invalidated end; a count left
 * too high only asks the server. */
#ifndef APIGEN_CUDA_CAPTURE_MARK_H
#define APIGEN_CUDA_CAPTURE_MARK_H

#include <stdbool.h>

#include "apigen_rt.h"

#define APIGEN_CUDA_CAPTURES_OPEN "CUDA stream captures open"

static inline void apigen_cuda_capture_opens(void)
{
    apigen_mark_add(APIGEN_CUDA_CAPTURES_OPEN, 1);
}
static inline void apigen_cuda_capture_closes(void)
{
    apigen_mark_add(APIGEN_CUDA_CAPTURES_OPEN, -1);
}
/* no capture open in the process (none may be) */
static inline bool apigen_cuda_captures_none(void)
{
    return apigen_mark_zero(APIGEN_CUDA_CAPTURES_OPEN);
}

#endif
