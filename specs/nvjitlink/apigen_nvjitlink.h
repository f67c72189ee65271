/* apigen_nvjitlink.h: wire messages of the nvJitLink stub that are not part
 * of nvJitLink.h (internal calls: specs/nvjitlink/guest.c makes them, the
 * server's specs/nvjitlink/host.c answers them). */
#ifndef APIGEN_NVJITLINK_H
#define APIGEN_NVJITLINK_H

#include <stddef.h>
#include <nvJitLink.h>

#include "nvjitlink_features.h"

/* nvJitLink.h declares its entry points under the version's ABI names
 * (__nvJitLinkCreate_13_0 in CUDA 13.0, __nvJitLinkCreate_12_0 ... _12_9 in
 * 12.x); the hand-written C names them through APIGEN_NVJL(Create), chosen
 * by what the headers declare (specs/nvjitlink.yaml annotates each
 * version's names). APIGEN_NVJL_VERSION is the version those names carry
 * (12040 for _12_4): the spec's `when:` tests it where a library exports
 * what no declaration tells (the earlier ABI names, the plain names from
 * 12.3, __nvJitLinkAPI from 12.4). A header of another version: add its
 * suffix here and there. */
#if defined(APIGEN_HAS_FN___nvJitLinkCreate_13_0)
#define APIGEN_NVJL(f) __nvJitLink##f##_13_0
#define APIGEN_NVJL_VERSION 13000
#elif defined(APIGEN_HAS_FN___nvJitLinkCreate_12_9)
#define APIGEN_NVJL(f) __nvJitLink##f##_12_9
#define APIGEN_NVJL_VERSION 12090
#elif defined(APIGEN_HAS_FN___nvJitLinkCreate_12_8)
#define APIGEN_NVJL(f) __nvJitLink##f##_12_8
#define APIGEN_NVJL_VERSION 12080
#elif defined(APIGEN_HAS_FN___nvJitLinkCreate_12_7)
#define APIGEN_NVJL(f) __nvJitLink##f##_12_7
#define APIGEN_NVJL_VERSION 12070
#elif defined(APIGEN_HAS_FN___nvJitLinkCreate_12_6)
#define APIGEN_NVJL(f) __nvJitLink##f##_12_6
#define APIGEN_NVJL_VERSION 12060
#elif defined(APIGEN_HAS_FN___nvJitLinkCreate_12_5)
#define APIGEN_NVJL(f) __nvJitLink##f##_12_5
#define APIGEN_NVJL_VERSION 12050
#elif defined(APIGEN_HAS_FN___nvJitLinkCreate_12_4)
#define APIGEN_NVJL(f) __nvJitLink##f##_12_4
#define APIGEN_NVJL_VERSION 12040
#elif defined(APIGEN_HAS_FN___nvJitLinkCreate_12_3)
#define APIGEN_NVJL(f) __nvJitLink##f##_12_3
#define APIGEN_NVJL_VERSION 12030
#elif defined(APIGEN_HAS_FN___nvJitLinkCreate_12_2)
#define APIGEN_NVJL(f) __nvJitLink##f##_12_2
#define APIGEN_NVJL_VERSION 12020
#elif defined(APIGEN_HAS_FN___nvJitLinkCreate_12_1)
#define APIGEN_NVJL(f) __nvJitLink##f##_12_1
#define APIGEN_NVJL_VERSION 12010
#elif defined(APIGEN_HAS_FN___nvJitLinkCreate_12_0)
#define APIGEN_NVJL(f) __nvJitLink##f##_12_0
#define APIGEN_NVJL_VERSION 12000
#elif defined(NVJITLINK_FEATURES_H)
#error "nvJitLink.h of a version specs/nvjitlink.yaml does not know (no __nvJitLinkCreate_13_0 or _12_0 ... _12_9): add its ABI names there and in apigen_nvjitlink.h"
#endif

/* What GetLinkedCubin (which 0), GetLinkedPtx (1), GetErrorLog (2) and
 * GetInfoLog (3) write, into buf of size bytes (the library's *Size
 * answer); buf NULL: the library is called with NULL. */
nvJitLinkResult apigenNvJitLinkGetOutput(nvJitLinkHandle handle, int which, void *buf,
                                         size_t size);

#endif
