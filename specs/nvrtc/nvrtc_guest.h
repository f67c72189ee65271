/* nvrtc_guest.h: the stub's include resolution (includes.c), used by
 * guest.c's nvrtcCompileProgram. */
#ifndef NVRTC_GUEST_H
#define NVRTC_GUEST_H

#include <nvrtc.h>

/* What the server gets instead of the application's options: the options
 * without guest include folders (a guest CUDA toolkit folder becomes the
 * server's, "-I@cuda-toolkit<rel>"), and the guest's header files that the
 * program's #include lines reach, by the names they are included by. */
typedef struct {
    int nopt, nh;
    char **opts;
    char **h, **names;
} nvrtc_guest_headers;

/* Resolves the #include lines of src (a program named progname, with the
 * application's in-memory headers h/n) and, transitively, of the files
 * they reach, on this machine's disk, with the include folders of opts.
 * NVRTC_SUCCESS, or NVRTC_ERROR_OUT_OF_MEMORY. */
nvrtcResult nvrtc_resolve(const char *src, const char *progname, int nh, const char *const *h,
                          const char *const *n, int nopt, const char *const *opts,
                          nvrtc_guest_headers *out);
void nvrtc_resolved_free(nvrtc_guest_headers *r);

#endif
