/* apigen_opencl.h: internal calls of the OpenCL spec (specs/opencl.yaml),
 * parsed next to CL/cl.h: the wire messages of hand-written guest code,
 * forwarded by generated code, never exported. The server implements them in
 * specs/opencl/host.c.
 *
 * Staged non-blocking reads (specs/opencl/staged.c): a non-blocking read
 * is queued as a read into server memory (its host pointer argument carries
 * the guest's token instead); a worker thread of the guest then waits for it
 * (apigenOpenclStagedWait: the bytes come back into the application's
 * memory) and releases the event the application holds
 * (apigenOpenclStagedDone), so the bytes land before that event completes. */
#ifndef APIGEN_OPENCL_H
#define APIGEN_OPENCL_H

#include <CL/cl.h>

/* flags of apigenOpenclStagedWait: the host memory has gaps between rows
 * (rectangles, images) that stay the application's: its bytes go in too */
#define APIGEN_OPENCL_STAGED_ROWS 1u

/* Waits for the staged read `token` (sent through `queue`'s server); on
 * success the bytes are in ptr. Returns the read's status (CL_COMPLETE or
 * its negative error) or an error for an unknown token or wrong size. */
cl_int apigenOpenclStagedWait(cl_command_queue queue, cl_ulong token, cl_uint flags, void *ptr,
                              size_t size);
/* The bytes landed (status CL_COMPLETE) or will not (a negative status):
 * the event the application holds completes with that status. profile
 * (may be NULL) gets the staged read's own CL_PROFILING_COMMAND_QUEUED,
 * SUBMIT, START, END and COMPLETE (all 0 when its queue does not profile):
 * the application's event answers them, not the one-element read's. */
cl_int apigenOpenclStagedDone(cl_command_queue queue, cl_ulong token, cl_int status,
                              cl_ulong *profile);

#endif
