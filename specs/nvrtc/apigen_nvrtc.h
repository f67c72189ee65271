/* apigen_nvrtc.h: wire messages of the NVRTC stub that are not part of
 * nvrtc.h (internal calls: specs/nvrtc/guest.c makes them, the server's
 * specs/nvrtc/host.c answers them). */
#ifndef APIGEN_NVRTC_H
#define APIGEN_NVRTC_H

#include <stddef.h>
#include <nvrtc.h>

/* The server library's nvrtcGetErrorString(result), copied into buf
 * (length bytes, NUL-terminated). */
nvrtcResult apigenNvrtcErrorText(nvrtcResult result, char *buf, unsigned int length);

/* nvrtcGetSupportedArchs into archs, which holds count entries (the guest
 * asked nvrtcGetNumSupportedArchs first). */
nvrtcResult apigenNvrtcSupportedArchs(int *archs, int count);

/* nvrtcCompileProgram(prog, numOptions, options) after the guest resolved
 * its own disk's headers: headers/includeNames (numHeaders of them) are the
 * files it read, added to the program's in-memory headers; the options name
 * no guest path (a guest toolkit folder is "-I@cuda-toolkit/<rel>"). cwd:
 * the guest's current folder, which NVRTC asks for (getcwd) and writes into
 * LTO-IR; NULL: the server's. */
nvrtcResult apigenNvrtcCompile(nvrtcProgram prog, int numOptions, const char *const *options,
                               int numHeaders, const char *const *headers,
                               const char *const *includeNames, const char *cwd);

/* nvrtcGetLoweredName: the lowered name copied into buf (capacity bytes);
 * needed is its length + 1 (a larger buffer is asked again). buf NULL:
 * the library is called with a NULL lowered_name (its own answer). */
nvrtcResult apigenNvrtcLoweredName(nvrtcProgram prog, const char *name_expression, char *buf,
                                   size_t capacity, size_t *needed);

/* What nvrtcGetPTX (which 0), GetCUBIN (1), GetLTOIR (2), GetOptiXIR (3)
 * and GetProgramLog (4) write, into buf of size bytes (the library's
 * *Size answer); buf NULL: the library is called with NULL. */
nvrtcResult apigenNvrtcGetOutput(nvrtcProgram prog, int which, char *buf, size_t size);

#endif
