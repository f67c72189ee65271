/* apigen_nvjitlink.h: wire messages of the nvJitLink stub that are not part
 * of nvJitLink.h (internal calls: specs/nvjitlink/guest.c makes them, the
 * server's specs/nvjitlink/host.c answers them). */
#ifndef APIGEN_NVJITLINK_H
#define APIGEN_NVJITLINK_H

#include <stddef.h>
#include <nvJitLink.h>

#include "nvjitlink_features.h"

/* nvJitLink.h declares its entry points under the version's ABI names
 * (__nvJitLinkCreate_13_0 in CUDA 13.0, __nvJitLinkCreate_12_9 in 12.9);
 * the hand-written C names them through APIGEN_NVJL(Create), chosen by
 * what the headers declare (specs/nvjitlink.yaml annotates each version's
 * names). A header of another version: add its suffix here and there. */
#if defined(APIGEN_HAS_FN___nvJitLinkCreate_13_0)
#define APIGEN_NVJL(f) __nvJitLink##f##_13_0
#elif defined(APIGEN_HAS_FN___nvJitLinkCreate_12_9)
#define APIGEN_NVJL(f) __nvJitLink##f##_12_9
#elif defined(NVJITLINK_FEATURES_H)
#error "nvJitLink.h of a version specs/nvjitlink.yaml does not know (no __nvJitLinkCreate_13_0 or _12_9): add its ABI names there and in apigen_nvjitlink.h"
#endif

/* What GetLinkedCubin (which 0), GetLinkedPtx (1), GetErrorLog (2) and
 * GetInfoLog (3) write, into buf of size bytes (the library's *Size
 * answer); buf NULL: the library is called with NULL. */
nvJitLinkResult apigenNvJitLinkGetOutput(nvJitLinkHandle handle, int which, void *buf,
                                         size_t size);

#endif
