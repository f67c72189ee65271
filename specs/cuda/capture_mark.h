/* capture_mark.h: the mark (apigen_mark_set, runtime/marks.c) that the CUDA
 * driver's and the runtime's guest code set when the process begins a
 * stream capture through them: one stub answers a capture query in the
 * guest only while neither may have a capture open (specs/cudart/guest.c,
 * cudaStreamIsCapturing). */
#ifndef APIGEN_CUDA_CAPTURE_MARK_H
#define APIGEN_CUDA_CAPTURE_MARK_H

#define APIGEN_CUDA_CAPTURE_MARK "CUDA stream capture begun"

#endif
