/* apigen_nvjitlink.h: wire messages of the nvJitLink stub that are not part
 * of nvJitLink.h (internal calls: specs/nvjitlink/guest.c makes them, the
 * server's specs/nvjitlink/host.c answers them). */
#ifndef APIGEN_NVJITLINK_H
#define APIGEN_NVJITLINK_H

#include <stddef.h>
#include <nvJitLink.h>

/* What GetLinkedCubin (which 0), GetLinkedPtx (1), GetErrorLog (2) and
 * GetInfoLog (3) write, into buf of size bytes (the library's *Size
 * answer); buf NULL: the library is called with NULL. */
nvJitLinkResult apigenNvJitLinkGetOutput(nvJitLinkHandle handle, int which, void *buf,
                                         size_t size);

#endif
