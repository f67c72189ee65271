/* nvrtc_files.h: the server's file guard for NVRTC compiles (host_files.c)
 * and the option mark the stub uses for a guest toolkit folder. */
#ifndef NVRTC_FILES_H
#define NVRTC_FILES_H

#include <stdbool.h>

/* "-I" NVRTC_TOOLKIT_MARK "<rel>": the folder <rel> below the server's
 * toolkit include folder (the stub sends it for a guest -I folder that is
 * its own CUDA toolkit's). */
#define NVRTC_TOOLKIT_MARK "@cuda-toolkit"

/* On (for the calling thread): every file NVRTC opens, stats or lists must
 * lie in the server's CUDA toolkit; anything else fails with ENOENT and is
 * logged once per compile; getcwd answers cwd (the guest's current folder,
 * which NVRTC writes into LTO-IR) unless it is NULL. Off: logs the
 * refusals of the compile. */
void nvrtc_files_guard(bool on, const char *cwd);

/* The server's toolkit include folder (no trailing '/'), NULL if unknown. */
const char *nvrtc_toolkit_include(void);

#endif
