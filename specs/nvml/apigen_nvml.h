/* apigen_nvml.h: wire messages of the NVML stub that are not part of nvml.h
 * (internal calls: the stub's hand-written code makes them, the server's
 * specs/nvml/host.c answers them). */
#ifndef APIGEN_NVML_H
#define APIGEN_NVML_H

#include <nvml.h>

/* nvmlErrorString(result) of the server's library, copied into buf
 * (length bytes, NUL-terminated). */
nvmlReturn_t apigenNvmlErrorString(nvmlReturn_t result, char *buf, unsigned int length);

#endif
